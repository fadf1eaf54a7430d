/*
 * Endpoints: from a peer's address to connected lanes and selection tables.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "core_int.h"

#include <lane_select/text_scan.h>
#include "route.h"

#include <lane_select/reachability.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/sock.h>
#include <ucs/sys/string.h>
#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* The IP address of @a addr as text, for logs */
static const char *psel_ep_ip_str(const struct sockaddr_storage *addr,
                                  char *buf, size_t max)
{
    if ((addr->ss_family == AF_UNSPEC) ||
        (ucs_sockaddr_get_ipstr((const struct sockaddr*)addr, buf, max) !=
         UCS_OK)) {
        ucs_strncpy_zero(buf, "?", max);
    }
    return buf;
}

/* A tcp pair passes only if the kernel's route to the peer's address
 * leaves from the local device: UCT tcp 1.13 says every address is
 * reachable, and a connection goes out wherever the route for its
 * destination points, so a lane between devices of different subnets would
 * run over another lane's wire (UCT asks the route too from 1.20).
 * Only prunes: where the route cannot be looked up, UCT's answer stands. */
static int psel_ep_tcp_route_ok(psel_ep_h ep, unsigned local, unsigned remote)
{
    const char *dev_name = ep->worker->local.resources[local].dev_name;
    const psel_address_entry_t *entry = &ep->address.entries[remote];
    struct sockaddr_storage dest, source;
    char dest_str[UCS_SOCKADDR_STRING_LEN], src_str[UCS_SOCKADDR_STRING_LEN];
    ucs_status_t status;
    int via_dev;

    status = psel_route_tcp_dev_addr(entry->dev_addr, entry->dev_addr_len,
                                     &dest);
    if (status != UCS_OK) {
        /* loopback (UCT compared network namespaces), or a layout not
         * known here */
        return 1;
    }
    status = psel_route_is_via_device(dev_name, (struct sockaddr*)&dest,
                                      &via_dev, &source);
    if (status != UCS_OK) {
        ucs_debug("endpoint %lx: tcp/%s -> peer tcp/%s: cannot look up the "
                  "route to %s (%s), keeping the pair", ep->id, dev_name,
                  entry->dev_name,
                  psel_ep_ip_str(&dest, dest_str, sizeof(dest_str)),
                  ucs_status_string(status));
        return 1;
    }
    if (!via_dev && (source.ss_family == AF_UNSPEC)) {
        ucs_debug("endpoint %lx: tcp/%s -> peer tcp/%s pruned: no route to "
                  "%s", ep->id, dev_name, entry->dev_name,
                  psel_ep_ip_str(&dest, dest_str, sizeof(dest_str)));
    } else if (!via_dev) {
        ucs_debug("endpoint %lx: tcp/%s -> peer tcp/%s pruned: the kernel "
                  "sends to %s from %s, not from an address of %s", ep->id,
                  dev_name, entry->dev_name,
                  psel_ep_ip_str(&dest, dest_str, sizeof(dest_str)),
                  psel_ep_ip_str(&source, src_str, sizeof(src_str)),
                  dev_name);
    }
    return via_dev;
}

int psel_ep_is_reachable(void *arg, unsigned local, unsigned remote)
{
    psel_ep_h ep                      = arg;
    const psel_worker_iface_t *wif    = &ep->worker->ifaces[local];
    const psel_address_entry_t *entry = &ep->address.entries[remote];
    const char *tl_name = ep->worker->local.resources[local].tl_name;

    /* the route first: newer UCT tcp asks the route too, and then protosel
     * would never say (debug log) which pairs it drops */
    if (strcmp(tl_name, entry->tl_name) ||
        (!strcmp(tl_name, "tcp") && !psel_ep_tcp_route_ok(ep, local, remote))) {
        return 0;
    }
    return uct_iface_is_reachable(wif->iface,
                                  (const uct_device_addr_t*)entry->dev_addr,
                                  (const uct_iface_addr_t*)entry->iface_addr);
}

ucs_status_t psel_ep_connect_to_iface(psel_ep_h ep, unsigned local,
                                      unsigned remote, uct_ep_h *uct_ep_p)
{
    const psel_address_entry_t *entry = &ep->address.entries[remote];
    uct_ep_params_t params;

    ucs_status_t status;

    params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                        UCT_EP_PARAM_FIELD_DEV_ADDR |
                        UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface      = ep->worker->ifaces[local].iface;
    params.dev_addr   = (const uct_device_addr_t*)entry->dev_addr;
    params.iface_addr = (const uct_iface_addr_t*)entry->iface_addr;
    status            = uct_ep_create(&params, uct_ep_p);
    if (status == UCS_OK) {
        psel_worker_iface_get(ep->worker, local);
    }
    return status;
}

/* A lane that connects endpoint to endpoint starts unconnected; wireup
 * connects it. */
ucs_status_t psel_ep_create_unconnected(psel_ep_h ep, unsigned local,
                                               uct_ep_h *uct_ep_p)
{
    uct_ep_params_t params;

    ucs_status_t status;

    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = ep->worker->ifaces[local].iface;
    status            = uct_ep_create(&params, uct_ep_p);
    if (status == UCS_OK) {
        psel_worker_iface_get(ep->worker, local);
    }
    return status;
}

static int psel_ep_can_bootstrap(psel_ep_h ep, unsigned local,
                                 unsigned remote)
{
    const psel_worker_iface_t *wif = &ep->worker->ifaces[local];

    /* UCX_PSEL_WIREUP_P2P_TLS does not matter here: a transport it names
     * can still bootstrap */
    return (wif->attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) &&
           (wif->attr.cap.flags & UCT_IFACE_FLAG_AM_BCOPY) &&
           (ep->address.entries[remote].caps &
            PSEL_ADDRESS_CAP_CONNECT_TO_IFACE) &&
           psel_ep_is_reachable(ep, local, remote);
}

/* The bootstrap lane carries the wireup messages: the first lane that
 * connects to an iface and has bcopy AM; else an endpoint of its own on the
 * fastest such pair of ifaces. */
static ucs_status_t psel_ep_connect_bootstrap(psel_ep_h ep)
{
    const psel_ep_lanes_t *lanes = &ep->config.lanes;
    double best_latency          = 0;
    int best_local               = -1;
    unsigned best_remote         = 0;
    unsigned i, j;

    for (i = 0; i < lanes->num_lanes; ++i) {
        if (!(ep->p2p_lanes & UCS_BIT(i)) &&
            (lanes->lanes[i].caps & PSEL_LANE_CAP_AM_BCOPY)) {
            ep->bootstrap        = ep->proto.uct_eps[i];
            ep->bootstrap_local  = lanes->info[i].local;
            ep->bootstrap_remote = lanes->info[i].remote;
            return UCS_OK;
        }
    }

    for (i = 0; i < ep->worker->num_ifaces; ++i) {
        for (j = 0; j < ep->address.count; ++j) {
            if (psel_ep_can_bootstrap(ep, i, j) &&
                ((best_local < 0) ||
                 (ep->address.entries[j].latency < best_latency))) {
                best_local   = i;
                best_remote  = j;
                best_latency = ep->address.entries[j].latency;
            }
        }
    }
    if (best_local < 0) {
        ucs_error("endpoint: its lanes connect endpoint to endpoint, and no "
                  "transport that connects to an iface with active messages "
                  "reaches the peer to exchange their addresses; enable one "
                  "(e.g. tcp, ud or shared memory) in UCX_PSEL_TLS");
        return UCS_ERR_UNREACHABLE;
    }
    ucs_debug("endpoint %lx: bootstrap over %s/%s", ep->id,
              ep->worker->local.resources[best_local].tl_name,
              ep->worker->local.resources[best_local].dev_name);
    ep->bootstrap = NULL;
    if (psel_ep_connect_to_iface(ep, best_local, best_remote,
                                 &ep->aux_ep) != UCS_OK) {
        return UCS_ERR_UNREACHABLE;
    }
    ep->aux_iface        = best_local;
    ep->bootstrap        = ep->aux_ep;
    ep->bootstrap_local  = best_local;
    ep->bootstrap_remote = best_remote;
    return UCS_OK;
}

static void psel_ep_destroy_uct_eps(psel_ep_h ep, unsigned num_lanes)
{
    unsigned i;

    for (i = 0; i < num_lanes; ++i) {
        uct_ep_destroy(ep->proto.uct_eps[i]);
        psel_worker_iface_put(ep->worker, ep->config.lanes.info[i].local);
    }
    for (i = 0; i < ep->num_extra; ++i) {
        uct_ep_destroy(ep->extra_eps[i]);
        psel_worker_iface_put(ep->worker, ep->extra_key[i][1]);
    }
    if (ep->aux_ep != NULL) {
        uct_ep_destroy(ep->aux_ep);
        psel_worker_iface_put(ep->worker, ep->aux_iface);
    }
    ep->num_extra = 0;
    ep->aux_ep    = NULL;
}

/* The lane of control messages: the am lane with bcopy, else any lane
 * with bcopy. */
static uint8_t psel_ep_am_lane(const psel_ep_lanes_t *lanes)
{
    unsigned i;

    for (i = 0; i < lanes->num_lanes; ++i) {
        if ((lanes->info[i].roles & UCS_BIT(PSEL_LANE_ROLE_AM)) &&
            (lanes->lanes[i].caps & PSEL_LANE_CAP_AM_BCOPY)) {
            return i;
        }
    }
    for (i = 0; i < lanes->num_lanes; ++i) {
        if (lanes->lanes[i].caps & PSEL_LANE_CAP_AM_BCOPY) {
            return i;
        }
    }
    return 0;
}

/* What the protocols see of the endpoint (its UCT endpoints are filled as
 * the lanes connect). */
static void psel_ep_proto_init(psel_ep_h ep)
{
    const psel_ep_lanes_t *lanes = &ep->config.lanes;
    psel_proto_ep_t *proto       = &ep->proto;
    psel_proto_lane_info_t *info;
    unsigned i;

    proto->worker             = &ep->worker->proto;
    proto->id                 = ep->id;
    proto->num_lanes          = lanes->num_lanes;
    proto->am_lane            = psel_ep_am_lane(lanes);
    proto->num_remote_entries = ep->address.count;
    for (i = 0; i < lanes->num_lanes; ++i) {
        info                   = &proto->lane_info[i];
        info->iface            = &ep->worker->proto.ifaces[lanes->info[i].local];
        info->caps             = lanes->lanes[i].caps;
        info->local_entry      = lanes->info[i].local;
        info->remote_entry     = lanes->info[i].remote;
        info->remote_rkey_size =
                ep->address.entries[lanes->info[i].remote].rkey_size;
    }
}

static ucs_status_t psel_ep_connect_lanes(psel_ep_h ep)
{
    const psel_ep_lanes_t *lanes = &ep->config.lanes;
    ucs_status_t status          = UCS_OK;
    unsigned local;
    unsigned i;

    psel_ep_proto_init(ep);
    for (i = 0; i < lanes->num_lanes; ++i) {
        local = lanes->info[i].local;
        if (psel_worker_iface_is_p2p(ep->worker, local)) {
            ep->p2p_lanes |= UCS_BIT(i);
            status = psel_ep_create_unconnected(ep, local,
                                                &ep->proto.uct_eps[i]);
        } else {
            status = psel_ep_connect_to_iface(ep, local,
                                              lanes->info[i].remote,
                                              &ep->proto.uct_eps[i]);
        }
        if (status != UCS_OK) {
            ucs_error("endpoint: lane %u (%s) failed to connect: %s", i,
                      lanes->lanes[i].name, ucs_status_string(status));
            break;
        }
    }
    if (status == UCS_OK) {
        status = psel_ep_connect_bootstrap(ep);
        if (status == UCS_OK) {
            return UCS_OK;
        }
    }
    psel_ep_destroy_uct_eps(ep, i);
    return status;
}

/* An endpoint wireup created for a peer that connected to us, with the same
 * address: the user's psel_ep_create() takes it over. */
static psel_ep_h psel_ep_find_internal(psel_worker_h worker,
                                       const void *address, size_t length)
{
    psel_ep_h ep;

    ucs_list_for_each(ep, &worker->eps, list) {
        if (ep->internal && (ep->status == UCS_OK) &&
            (ep->peer_address_length == length) &&
            !memcmp(ep->peer_address, address, length)) {
            return ep;
        }
    }
    return NULL;
}

ucs_status_t psel_ep_create_common(psel_worker_h worker, const void *address,
                                   size_t length, int internal,
                                   psel_ep_h *ep_p)
{
    psel_ep_params_t params;
    psel_resource_t rsc;
    ucs_status_t status;
    psel_ep_h ep;
    unsigned i;

    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ep->worker   = worker;
    ep->id       = worker->uuid + (++worker->next_ep_id);
    ep->internal = internal;
    ep->status   = UCS_OK;
    ucs_list_head_init(&ep->flushes);
    ucs_list_head_init(&ep->pending);
    psel_resource_table_init(&ep->remote);

    status = psel_address_unpack(address, length, &ep->address);
    if (status != UCS_OK) {
        goto err_free;
    }
    ep->peer_address = malloc(length);
    if (ep->peer_address == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_release_address;
    }
    memcpy(ep->peer_address, address, length);
    ep->peer_address_length = length;
    for (i = 0; i < ep->address.count; ++i) {
        psel_address_entry_to_resource(&ep->address.entries[i], &rsc);
        status = psel_resource_table_append(&ep->remote, &rsc);
        if (status != UCS_OK) {
            goto err_release_address;
        }
    }
    ucs_strncpy_zero(ep->remote.origin, "peer address",
                     sizeof(ep->remote.origin));

    /* only protocols the data path can run are weighed */
    memset(&params, 0, sizeof(params));
    params.features      = PSEL_FEATURE_TAG;
    params.local         = &worker->local;
    params.remote        = &ep->remote;
    params.locality      = PSEL_PEER_SAME_HOST;
    params.is_reachable  = psel_ep_is_reachable;
    params.reachable_arg = ep;
    params.runnable_only = 1;
    params.config        = &worker->context->config;
    params.calib         = worker->context->calib;
    params.num_eps       = psel_config_num_eps(&worker->context->config,
                                               worker->context->est_num_eps);
    status = psel_ep_config_init(&ep->config, &params);
    if (status != UCS_OK) {
        goto err_release_address;
    }

    status = psel_ep_connect_lanes(ep);
    if (status != UCS_OK) {
        goto err_cleanup_config;
    }

    ucs_list_add_tail(&worker->eps, &ep->list);
    *ep_p = ep;
    return UCS_OK;

err_cleanup_config:
    psel_ep_config_cleanup(&ep->config);
err_release_address:
    free(ep->peer_address);
    psel_address_release(&ep->address);
err_free:
    psel_resource_table_cleanup(&ep->remote);
    free(ep);
    return status;
}

ucs_status_t psel_ep_create(psel_worker_h worker, const void *address,
                            size_t length, psel_ep_h *ep_p)
{
    ucs_status_t status;
    psel_ep_h ep;

    ep = psel_ep_find_internal(worker, address, length);
    if (ep != NULL) {
        ep->internal = 0;
        *ep_p        = ep;
        return UCS_OK;
    }

    status = psel_ep_create_common(worker, address, length, 0, &ep);
    if (status != UCS_OK) {
        return status;
    }
    status = psel_wireup_start(ep);
    if (status != UCS_OK) {
        psel_ep_destroy(ep);
        return status;
    }
    *ep_p = ep;
    return UCS_OK;
}

static void psel_ep_flush_done(psel_request_t *req, ucs_status_t status)
{
    psel_ep_h ep = req->ep;

    ucs_list_del(&req->list);
    --ep->worker->num_flushing;
    if (req->flush.close) {
        psel_ep_destroy(ep);
    }
    psel_request_complete(req, status);
}

/* Fail every request of @a ep still running with @a status: its
 * rendezvous (registrations released), pending sends and flushes; with
 * operations in flight they end when those do, unless @a flags has
 * PSEL_PROTO_ABORT_FORCE (the UCT endpoints are gone). A callback may end
 * other requests of the list, so each pass takes the head again. */
static void psel_ep_fail_requests(psel_ep_h ep, ucs_status_t status,
                                  unsigned flags)
{
    psel_request_t *req;

    psel_rndv_ep_fail(ep, status, flags);
    while (!ucs_list_is_empty(&ep->pending)) {
        req = ucs_list_head(&ep->pending, psel_request_t, list);
        psel_send_abort(req, status, flags); /* leaves the list */
    }
    while (!ucs_list_is_empty(&ep->flushes)) {
        req = ucs_list_head(&ep->flushes, psel_request_t, list);
        req->flush.close = 0;
        psel_ep_flush_done(req, status); /* leaves the list */
    }
}

static void psel_ep_free(psel_ep_h ep)
{
    /* nothing may point at it any more */
    assert(ep->destroying && (ep->holds == 0));
    assert(!ep->pending_scheduled && ucs_list_is_empty(&ep->pending) &&
           ucs_list_is_empty(&ep->flushes));
    psel_ep_config_cleanup(&ep->config);
    free(ep->peer_address);
    psel_address_release(&ep->address);
    psel_resource_table_cleanup(&ep->remote);
    free(ep);
}

void psel_ep_hold(psel_ep_h ep)
{
    ++ep->holds;
}

void psel_ep_release(psel_ep_h ep)
{
    assert(ep->holds > 0);
    if ((--ep->holds == 0) && ep->destroying) {
        psel_ep_free(ep);
    }
}

void psel_ep_destroy(psel_ep_h ep)
{
    psel_worker_h worker = ep->worker;
    int peer_alive       = (ep->status == UCS_OK);

    if (ep->destroying) {
        return; /* a callback of its own teardown closed it again */
    }
    /* from now on nothing queues on it, new sends fail at once, and no
     * walk of the worker finds it */
    ep->destroying = 1;
    psel_ep_hold(ep);
    ucs_list_del(&ep->list);
    if ((ep->status != UCS_OK) && !ep->failure_handled) {
        --worker->num_failed_eps; /* failed before progress handled it */
    }
    ep->failure_handled = 1;
    if (ep->status == UCS_OK) {
        ep->status = UCS_ERR_CANCELED;
    }

    /* fail what runs; destroying the UCT endpoints completes what they
     * still had in flight (tcp purges it; those completions no longer
     * queue anything), and what is left then never hears from UCT again */
    psel_ep_fail_requests(ep, UCS_ERR_CANCELED, 0);
    if (peer_alive) {
        psel_wireup_close(ep); /* the peer drops what it keeps for us */
    }
    if (ep->wireup_msg != NULL) {
        --worker->wireup_out;
        free(ep->wireup_msg);
        ep->wireup_msg = NULL;
    }
    worker->used_last_elem = NULL; /* its table goes */
    psel_rndv_ep_remove(ep);
    psel_ep_destroy_uct_eps(ep, ep->config.lanes.num_lanes);
    psel_ep_fail_requests(ep, UCS_ERR_CANCELED, PSEL_PROTO_ABORT_FORCE);
    if (ep->pending_scheduled) {
        ucs_list_del(&ep->pending_link);
        ep->pending_scheduled = 0;
    }
    psel_ep_release(ep); /* freed now, or by the loop that holds it */
}

const psel_select_table_t *psel_ep_tag_table(psel_ep_h ep, unsigned flags)
{
    psel_buffer_type_t bt = psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_CONTIG,
                                             UCS_MEMORY_TYPE_HOST, 1);
    const psel_select_table_t *table;

    return (psel_select_build(psel_ep_send_selection(ep, flags), bt,
                              &table) == UCS_OK) ? table : NULL;
}

static void psel_ep_print_info_in_c_locale(psel_ep_h ep, FILE *stream)
{
    const psel_ep_lanes_t *lanes = &ep->config.lanes;
    unsigned i, role;

    fprintf(stream, "# endpoint %lx -> peer endpoint %lx: %s\n", ep->id,
            ep->remote_id,
            !psel_ep_is_ready(ep) ? "waiting for the wireup reply" :
            (ep->remote_id == 0) ? "ready, peer id not known yet" : "ready");
    for (i = 0; i < lanes->num_lanes; ++i) {
        fprintf(stream, "#   lane %u  %-20s", i, lanes->lanes[i].name);
        for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
            if (lanes->info[i].roles & UCS_BIT(role)) {
                fprintf(stream, " %s", psel_lane_role_name(role));
            }
        }
        fprintf(stream, "  %s\n",
                !(ep->p2p_lanes & UCS_BIT(i)) ? "connected to iface" :
                (ep->p2p_connected & UCS_BIT(i)) ? "connected ep to ep" :
                "ep to ep, not connected yet");
    }
    if (ep->aux_ep != NULL) {
        fprintf(stream, "#   wireup over an endpoint of its own\n");
    }
    if (ep->num_extra > 0) {
        fprintf(stream, "#   %u extra ep-to-ep connection(s) for the "
                "peer's lanes\n", ep->num_extra);
    }
}

/* numbers with '.' whatever LC_NUMERIC the application set */
void psel_ep_print_info(psel_ep_h ep, FILE *stream)
{
    psel_text_locale_t saved = psel_text_c_locale_enter();

    psel_ep_print_info_in_c_locale(ep, stream);
    psel_text_c_locale_leave(saved);
}

ucs_status_t psel_ep_lane_peer(psel_ep_h ep, const char *lane_name,
                               char *peer, size_t max)
{
    const psel_ep_lanes_t *lanes = &ep->config.lanes;
    const char *addr;
    unsigned i;

    for (i = 0; i < lanes->num_lanes; ++i) {
        if (strcmp(lanes->lanes[i].name, lane_name)) {
            continue;
        }
        addr = ep->remote.resources[lanes->info[i].remote].dev_addr;
        if ((addr[0] == '\0') || (strlen(addr) >= max)) {
            return UCS_ERR_NO_ELEM;
        }
        strcpy(peer, addr);
        return UCS_OK;
    }
    return UCS_ERR_NO_ELEM;
}

static void psel_ep_flush_lane_done(uct_completion_t *comp)
{
    /* nothing to do: psel_ep_progress_flushes() sees the count reach 0 */
}

/* The oldest flush of @a ep runs once every send before it completed: it
 * flushes the lanes in turn, resuming where the transport was busy. */
unsigned psel_ep_progress_flushes(psel_ep_h ep)
{
    psel_request_t *req;
    psel_flush_t *flush;
    ucs_status_t status;

    if (ucs_list_is_empty(&ep->flushes) || (ep->num_sends > 0) ||
        !psel_ep_is_ready(ep) || (ep->status != UCS_OK)) {
        return 0; /* a failed endpoint's flushes end in its failure */
    }
    req   = ucs_list_head(&ep->flushes, psel_request_t, list);
    flush = &req->flush;
    while (flush->next_lane < ep->config.lanes.num_lanes) {
        status = uct_ep_flush(ep->proto.uct_eps[flush->next_lane], 0,
                              &flush->comp);
        if (status == UCS_ERR_NO_RESOURCE) {
            return 0;
        }
        if (status == UCS_INPROGRESS) {
            ++flush->comp.count;
        } else if (status != UCS_OK) {
            flush->comp.status = status;
        }
        ++flush->next_lane;
    }
    if (flush->comp.count > 1) {
        return 0; /* lane flushes still running */
    }
    psel_ep_flush_done(req, flush->comp.status);
    return 1;
}

static psel_request_t *psel_ep_flush_start(psel_ep_h ep, int close,
                                           psel_request_cb_t cb, void *arg)
{
    psel_request_t *req;

    req = psel_request_alloc(ep->worker, PSEL_REQUEST_FLUSH, cb, arg);
    if (req == NULL) {
        return NULL;
    }
    memset(&req->flush, 0, sizeof(req->flush));
    req->ep                = ep;
    req->flush.close       = close;
    req->flush.comp.func   = psel_ep_flush_lane_done;
    req->flush.comp.count  = 1; /* held until every lane is flushed */
    req->flush.comp.status = UCS_OK;
    ucs_list_add_tail(&ep->flushes, &req->list);
    ++ep->worker->num_flushing;
    if (ep->failure_handled) {
        psel_ep_flush_done(req, ep->status);
    } else {
        psel_ep_progress_flushes(ep);
    }
    return req;
}

psel_request_t *psel_ep_flush_nb(psel_ep_h ep, psel_request_cb_t cb,
                                 void *arg)
{
    return psel_ep_flush_start(ep, 0, cb, arg);
}

psel_request_t *psel_ep_close_nb(psel_ep_h ep, psel_ep_close_mode_t mode,
                                 psel_request_cb_t cb, void *arg)
{
    if (mode == PSEL_EP_CLOSE_FORCE) {
        ep->close_forced = 1;
        psel_ep_destroy(ep);
        return NULL;
    }
    return psel_ep_flush_start(ep, 1, cb, arg);
}

int psel_ep_owns_uct_ep(psel_ep_h ep, uct_ep_h uct_ep)
{
    unsigned i;

    for (i = 0; i < ep->config.lanes.num_lanes; ++i) {
        if (ep->proto.uct_eps[i] == uct_ep) {
            return 1;
        }
    }
    for (i = 0; i < ep->num_extra; ++i) {
        if (ep->extra_eps[i] == uct_ep) {
            return 1;
        }
    }
    return (ep->aux_ep != NULL) && (ep->aux_ep == uct_ep);
}

void psel_ep_set_failed(psel_ep_h ep, ucs_status_t status, const char *why)
{
    if ((ep->status != UCS_OK) || ep->destroying) {
        return;
    }
    /* an endpoint wireup made for a peer that went away: the normal end
     * of that peer, no error for the user */
    ucs_log(ep->internal ? UCS_LOG_LEVEL_DIAG : UCS_LOG_LEVEL_ERROR,
            "endpoint %lx: %s (%s); its requests complete with this error, "
            "destroy the endpoint", ep->id, why, ucs_status_string(status));
    ep->status = status;
    ++ep->worker->num_failed_eps;
}

void psel_ep_handle_failure(psel_ep_h ep)
{
    ep->failure_handled = 1;
    if (ep->remote_id != 0) {
        /* the peer's half-arrived eager messages will never complete */
        psel_tm_purge_sender(&ep->worker->tm, ep->remote_id, ep->status);
    }
    psel_ep_fail_requests(ep, ep->status, 0);
}

void psel_ep_keepalive(psel_ep_h ep)
{
    const psel_ep_lanes_t *lanes = &ep->config.lanes;
    const psel_worker_iface_t *wif;
    unsigned i;

    if ((ep->status != UCS_OK) || !psel_ep_is_ready(ep)) {
        return;
    }
    for (i = 0; i < lanes->num_lanes; ++i) {
        wif = &ep->worker->ifaces[lanes->info[i].local];
        if (wif->attr.cap.flags & UCT_IFACE_FLAG_EP_CHECK) {
            uct_ep_check(ep->proto.uct_eps[i], 0, NULL);
        }
    }
}
