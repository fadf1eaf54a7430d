/*
 * The wireup exchange (see wireup.h): endpoint ids, and endpoint addresses
 * for the lanes that connect endpoint to endpoint.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "core_int.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#define PSEL_WIREUP_EP_ADDR_MAX 255  /**< Bytes of one endpoint address */

/** A lane record to send: where, and our endpoint on it. */
typedef struct {
    uint8_t  our_iface;
    uint8_t  peer_iface;
    uint8_t  path;
    uct_ep_h uct_ep;
} psel_wireup_out_lane_t;

/** A lane record received, validated. */
typedef struct {
    unsigned       peer_iface;
    unsigned       our_iface;
    unsigned       path;
    const uint8_t *ep_addr;
    size_t         ep_addr_length;
} psel_wireup_in_lane_t;

/** A wireup message received, validated. */
typedef struct {
    psel_wireup_hdr_t     hdr;
    const void           *address;  /**< REQUEST: the sender's */
    unsigned              num_lanes;
    psel_wireup_in_lane_t lanes[PSEL_MAX_LANES];
} psel_wireup_in_t;


/* Between host order and the wire's little-endian: the same operation in
 * both directions. */
static void psel_wireup_hdr_le(psel_wireup_hdr_t *hdr)
{
    hdr->address_length = htole32(hdr->address_length);
    hdr->sender_uuid    = htole64(hdr->sender_uuid);
    hdr->sender_ep_id   = htole64(hdr->sender_ep_id);
    hdr->dest_ep_id     = htole64(hdr->dest_ep_id);
}

int psel_worker_iface_is_p2p(psel_worker_h worker, unsigned iface_index)
{
    const psel_worker_iface_t *wif = &worker->ifaces[iface_index];

    return !(wif->attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) ||
           ucs_config_names_search(
                   &worker->context->config.wireup_p2p_tls,
                   worker->local.resources[iface_index].tl_name) >= 0;
}

/* ---- sending ---- */

static size_t psel_wireup_pack(void *dest, void *arg)
{
    psel_ep_h ep = arg;

    memcpy(dest, ep->wireup_msg, ep->wireup_msg_length);
    return ep->wireup_msg_length;
}

/* Send the message waiting in ep->wireup_msg; keep it for a retry from
 * psel_wireup_progress() while the bootstrap lane is busy. */
static ucs_status_t psel_wireup_flush_msg(psel_ep_h ep)
{
    ssize_t packed;

    packed = uct_ep_am_bcopy(ep->bootstrap, PSEL_AM_ID_WIREUP,
                             psel_wireup_pack, ep, 0);
    if (packed == UCS_ERR_NO_RESOURCE) {
        return UCS_ERR_NO_RESOURCE;
    }
    free(ep->wireup_msg);
    ep->wireup_msg = NULL;
    --ep->worker->wireup_out;
    if (packed < 0) {
        ucs_error("wireup: endpoint %lx could not send to its peer: %s",
                  ep->id, ucs_status_string((ucs_status_t)packed));
        return (ucs_status_t)packed;
    }
    return UCS_OK;
}

static ucs_status_t psel_wireup_send(psel_ep_h ep, psel_wireup_type_t type,
                                     const psel_wireup_out_lane_t *lanes,
                                     unsigned num_lanes)
{
    uint8_t ep_addrs[PSEL_MAX_LANES][PSEL_WIREUP_EP_ADDR_MAX];
    size_t addr_lengths[PSEL_MAX_LANES];
    void *address             = NULL;
    size_t address_length     = 0;
    const psel_worker_iface_t *wif;
    psel_wireup_lane_t record;
    psel_wireup_hdr_t hdr;
    ucs_status_t status;
    size_t length;
    uint8_t *p;
    unsigned i;

    if (ep->wireup_msg != NULL) {
        /* one message at a time: the older one goes first */
        status = psel_wireup_flush_msg(ep);
        if (status != UCS_OK) {
            return status;
        }
    }

    length = sizeof(hdr);
    for (i = 0; i < num_lanes; ++i) {
        wif             = &ep->worker->ifaces[lanes[i].our_iface];
        addr_lengths[i] = wif->attr.ep_addr_len;
        if (addr_lengths[i] > PSEL_WIREUP_EP_ADDR_MAX) {
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        status = uct_ep_get_address(lanes[i].uct_ep,
                                    (uct_ep_addr_t*)ep_addrs[i]);
        if (status != UCS_OK) {
            return status;
        }
        length += sizeof(record) + addr_lengths[i];
    }
    if (type == PSEL_WIREUP_REQUEST) {
        status = psel_worker_get_address(ep->worker, &address,
                                         &address_length);
        if (status != UCS_OK) {
            return status;
        }
        length += address_length;
    }

    ep->wireup_msg = malloc(length);
    if (ep->wireup_msg == NULL) {
        free(address);
        return UCS_ERR_NO_MEMORY;
    }
    memset(&hdr, 0, sizeof(hdr));
    hdr.version        = PSEL_WIREUP_VERSION;
    hdr.type           = type;
    hdr.num_lanes      = num_lanes;
    hdr.flags          = ((type == PSEL_WIREUP_CLOSE) && ep->close_forced) ?
                         PSEL_WIREUP_FLAG_FORCED : 0;
    hdr.address_length = address_length;
    hdr.sender_uuid    = ep->worker->uuid;
    hdr.sender_ep_id   = ep->id;
    hdr.dest_ep_id     = (type != PSEL_WIREUP_REQUEST) ? ep->remote_id : 0;
    p = ep->wireup_msg;
    psel_wireup_hdr_le(&hdr);
    memcpy(p, &hdr, sizeof(hdr));
    p += sizeof(hdr);
    if (address_length > 0) {
        memcpy(p, address, address_length);
        p += address_length;
    }
    free(address);
    for (i = 0; i < num_lanes; ++i) {
        record.sender_iface   = lanes[i].our_iface;
        record.dest_iface     = lanes[i].peer_iface;
        record.path           = lanes[i].path;
        record.ep_addr_length = addr_lengths[i];
        memcpy(p, &record, sizeof(record));
        p += sizeof(record);
        memcpy(p, ep_addrs[i], addr_lengths[i]);
        p += addr_lengths[i];
    }
    ep->wireup_msg_length = length;
    ++ep->worker->wireup_out;

    status = psel_wireup_flush_msg(ep);
    return (status == UCS_ERR_NO_RESOURCE) ? UCS_OK : status;
}

/* Our lanes that connect endpoint to endpoint, as records. */
static unsigned psel_wireup_our_lanes(psel_ep_h ep,
                                      psel_wireup_out_lane_t *out)
{
    const psel_ep_lanes_t *lanes = &ep->config.lanes;
    unsigned n                   = 0;
    unsigned i;

    for (i = 0; i < lanes->num_lanes; ++i) {
        if (ep->p2p_lanes & UCS_BIT(i)) {
            out[n].our_iface  = lanes->info[i].local;
            out[n].peer_iface = lanes->info[i].remote;
            out[n].path       = lanes->info[i].path;
            out[n].uct_ep     = ep->proto.uct_eps[i];
            ++n;
        }
    }
    return n;
}

ucs_status_t psel_wireup_start(psel_ep_h ep)
{
    psel_wireup_out_lane_t lanes[PSEL_MAX_LANES];
    unsigned n = psel_wireup_our_lanes(ep, lanes);

    if (n == 0) {
        return UCS_OK;
    }
    return psel_wireup_send(ep, PSEL_WIREUP_REQUEST, lanes, n);
}

ucs_status_t psel_wireup_announce(psel_ep_h ep)
{
    return psel_wireup_send(ep, PSEL_WIREUP_REQUEST, NULL, 0);
}

/* How long a farewell tries to get its CLOSE out */
#define PSEL_WIREUP_FAREWELL_SEC 5.0

/* The CLOSE waiting in ep->wireup_msg found the bootstrap lane busy (data
 * of the endpoint fills it): it goes over a UCT endpoint of its own to the
 * same peer iface, which outlives the endpoint until the message is out.
 * It carries nothing else, so no completion of it refers to a request. */
static void psel_wireup_farewell(psel_ep_h ep)
{
    psel_worker_h worker = ep->worker;
    psel_wireup_farewell_t *fw;

    fw = malloc(sizeof(*fw) + ep->wireup_msg_length);
    if ((fw == NULL) ||
        (psel_ep_connect_to_iface(ep, ep->bootstrap_local,
                                  ep->bootstrap_remote, &fw->uct_ep) !=
         UCS_OK)) {
        ucs_debug("wireup: endpoint %lx could not tell its peer it closes",
                  ep->id);
        free(fw);
        --worker->wireup_out;
    } else {
        fw->iface    = ep->bootstrap_local;
        fw->sent     = 0;
        fw->deadline = psel_time_sec() + PSEL_WIREUP_FAREWELL_SEC;
        fw->length   = ep->wireup_msg_length;
        memcpy(fw->msg, ep->wireup_msg, fw->length);
        ucs_list_add_tail(&worker->farewells, &fw->list);
    }
    free(ep->wireup_msg);
    ep->wireup_msg = NULL;
}

void psel_wireup_close(psel_ep_h ep)
{
    if ((ep->bootstrap == NULL) ||
        ((ep->remote_id == 0) && !ep->rndv_announced && (ep->p2p_lanes == 0))) {
        return; /* the peer holds nothing of ours */
    }
    if (ep->wireup_msg != NULL) {
        --ep->worker->wireup_out; /* older news, superseded */
        free(ep->wireup_msg);
        ep->wireup_msg = NULL;
    }
    if (psel_wireup_send(ep, PSEL_WIREUP_CLOSE, NULL, 0) != UCS_OK) {
        ucs_debug("wireup: endpoint %lx could not tell its peer it closes",
                  ep->id);
    }
    if (ep->wireup_msg != NULL) {
        psel_wireup_farewell(ep); /* the lane is busy */
    }
}

static size_t psel_wireup_farewell_pack(void *dest, void *arg)
{
    psel_wireup_farewell_t *fw = arg;

    memcpy(dest, fw->msg, fw->length);
    return fw->length;
}

/* Send a farewell's CLOSE, then wait for the transport to have it out
 * (flush); @return 1 when it is done with (out, failed, or too late). */
static int psel_wireup_farewell_progress(psel_wireup_farewell_t *fw)
{
    ssize_t packed;

    if (!fw->sent) {
        packed = uct_ep_am_bcopy(fw->uct_ep, PSEL_AM_ID_WIREUP,
                                 psel_wireup_farewell_pack, fw, 0);
        if ((packed < 0) && (packed != UCS_ERR_NO_RESOURCE)) {
            return 1; /* the peer is gone too */
        }
        fw->sent = (packed >= 0);
    }
    if (fw->sent && (uct_ep_flush(fw->uct_ep, 0, NULL) == UCS_OK)) {
        return 1;
    }
    if (psel_time_sec() > fw->deadline) {
        ucs_debug("wireup: a close found no room for %.0f s; given up",
                  PSEL_WIREUP_FAREWELL_SEC);
        return 1;
    }
    return 0;
}

void psel_wireup_farewells_cleanup(psel_worker_h worker, int wait)
{
    psel_wireup_farewell_t *fw, *tmp;

    ucs_list_for_each_safe(fw, tmp, &worker->farewells, list) {
        if (wait && !psel_wireup_farewell_progress(fw)) {
            continue;
        }
        uct_ep_destroy(fw->uct_ep);
        psel_worker_iface_put(worker, fw->iface);
        ucs_list_del(&fw->list);
        --worker->wireup_out;
        free(fw);
    }
}

void psel_wireup_progress(psel_worker_h worker)
{
    psel_ep_h ep;

    /* each endpoint's message waits only for its own bootstrap lane: a
     * stalled peer does not hold up another's wireup */
    ucs_list_for_each(ep, &worker->eps, list) {
        if (ep->wireup_msg != NULL) {
            psel_wireup_flush_msg(ep);
        }
    }
    psel_wireup_farewells_cleanup(worker, 1);
}

/* ---- receiving ---- */

static const char *psel_wireup_type_name(unsigned type)
{
    switch (type) {
    case PSEL_WIREUP_REQUEST: return "request";
    case PSEL_WIREUP_REPLY:   return "reply";
    case PSEL_WIREUP_CLOSE:   return "close";
    default:                  return "?";
    }
}

static ucs_status_t psel_wireup_parse(psel_worker_h worker, const void *data,
                                      size_t length, psel_wireup_in_t *in)
{
    const uint8_t *p   = data;
    const uint8_t *end = p + length;
    psel_wireup_lane_t record;
    psel_wireup_in_lane_t *lane;
    unsigned i;

    /* the version byte first: another version may have another layout */
    if ((length > 0) && (p[0] != PSEL_WIREUP_VERSION)) {
        ucs_error("wireup: wire version %u, this build speaks %u; "
                  "dropped (run the same protosel on both peers)", p[0],
                  PSEL_WIREUP_VERSION);
        return UCS_ERR_UNSUPPORTED;
    }
    if (length < sizeof(in->hdr)) {
        ucs_error("wireup: %zu-byte message, shorter than its %zu-byte "
                  "header; dropped", length, sizeof(in->hdr));
        return UCS_ERR_INVALID_PARAM;
    }
    memcpy(&in->hdr, p, sizeof(in->hdr));
    psel_wireup_hdr_le(&in->hdr);
    p += sizeof(in->hdr);
    if ((in->hdr.type != PSEL_WIREUP_REQUEST) &&
        (in->hdr.type != PSEL_WIREUP_REPLY) &&
        (in->hdr.type != PSEL_WIREUP_CLOSE)) {
        ucs_error("wireup: unknown message type %u; dropped", in->hdr.type);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((in->hdr.type == PSEL_WIREUP_CLOSE) && (in->hdr.num_lanes != 0)) {
        ucs_error("wireup: a close with %u lane records; dropped",
                  in->hdr.num_lanes);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((in->hdr.type == PSEL_WIREUP_REQUEST) ==
        (in->hdr.address_length == 0)) {
        ucs_error("wireup: a %s with a %u-byte address; dropped",
                  psel_wireup_type_name(in->hdr.type),
                  in->hdr.address_length);
        return UCS_ERR_INVALID_PARAM;
    }
    if (in->hdr.address_length > (size_t)(end - p)) {
        ucs_error("wireup: address of %u bytes at offset %zu overruns the "
                  "%zu-byte message; dropped", in->hdr.address_length,
                  sizeof(in->hdr), length);
        return UCS_ERR_INVALID_PARAM;
    }
    in->address = p;
    p          += in->hdr.address_length;
    if (in->hdr.num_lanes > PSEL_MAX_LANES) {
        ucs_error("wireup: %u lane records, at most %u; dropped",
                  in->hdr.num_lanes, PSEL_MAX_LANES);
        return UCS_ERR_INVALID_PARAM;
    }
    in->num_lanes = in->hdr.num_lanes;
    for (i = 0; i < in->num_lanes; ++i) {
        lane = &in->lanes[i];
        if ((size_t)(end - p) < sizeof(record)) {
            ucs_error("wireup: lane record %u at offset %zu is cut short; "
                      "dropped", i, (size_t)(p - (const uint8_t*)data));
            return UCS_ERR_INVALID_PARAM;
        }
        memcpy(&record, p, sizeof(record));
        p += sizeof(record);
        if (record.ep_addr_length > (size_t)(end - p)) {
            ucs_error("wireup: lane record %u: %u-byte endpoint address "
                      "overruns the message; dropped", i,
                      record.ep_addr_length);
            return UCS_ERR_INVALID_PARAM;
        }
        if ((record.dest_iface >= worker->num_ifaces) ||
            (record.ep_addr_length !=
             worker->ifaces[record.dest_iface].attr.ep_addr_len)) {
            ucs_error("wireup: lane record %u names iface %u with a %u-byte "
                      "endpoint address; this worker has %u ifaces; dropped",
                      i, record.dest_iface, record.ep_addr_length,
                      worker->num_ifaces);
            return UCS_ERR_INVALID_PARAM;
        }
        if (!(worker->ifaces[record.dest_iface].attr.cap.flags &
              UCT_IFACE_FLAG_CONNECT_TO_EP)) {
            ucs_error("wireup: lane record %u names iface %u (%s/%s), which "
                      "does not connect endpoint to endpoint; dropped", i,
                      record.dest_iface,
                      worker->local.resources[record.dest_iface].tl_name,
                      worker->local.resources[record.dest_iface].dev_name);
            return UCS_ERR_INVALID_PARAM;
        }
        lane->peer_iface     = record.sender_iface;
        lane->our_iface      = record.dest_iface;
        lane->path           = record.path;
        lane->ep_addr        = p;
        lane->ep_addr_length = record.ep_addr_length;
        p                   += record.ep_addr_length;
    }
    if (p != end) {
        ucs_error("wireup: %zu stray bytes after the last lane record; "
                  "dropped", (size_t)(end - p));
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

/* Connect @a uct_ep to the peer's endpoint of record @a lane. */
static ucs_status_t psel_wireup_connect(psel_ep_h ep, uct_ep_h uct_ep,
                                        const psel_wireup_in_lane_t *lane)
{
    const psel_address_entry_t *entry;
    ucs_status_t status;

    if ((lane->peer_iface >= ep->address.count) ||
        strcmp(ep->address.entries[lane->peer_iface].tl_name,
               ep->worker->local.resources[lane->our_iface].tl_name)) {
        ucs_error("wireup: endpoint %lx: the peer's iface %u is not a %s "
                  "iface of its address; lane dropped", ep->id,
                  lane->peer_iface,
                  ep->worker->local.resources[lane->our_iface].tl_name);
        return UCS_ERR_INVALID_PARAM;
    }
    entry  = &ep->address.entries[lane->peer_iface];
    status = uct_ep_connect_to_ep(uct_ep,
                                  (const uct_device_addr_t*)entry->dev_addr,
                                  (const uct_ep_addr_t*)lane->ep_addr);
    if (status != UCS_OK) {
        ucs_error("wireup: endpoint %lx: connecting %s/%s to the peer's "
                  "endpoint failed: %s", ep->id,
                  ep->worker->local.resources[lane->our_iface].tl_name,
                  ep->worker->local.resources[lane->our_iface].dev_name,
                  ucs_status_string(status));
    }
    return status;
}

/* Our lane paired with the peer's record, or -1. */
static int psel_wireup_find_lane(psel_ep_h ep,
                                 const psel_wireup_in_lane_t *lane)
{
    const psel_ep_lanes_t *lanes = &ep->config.lanes;
    unsigned i;

    for (i = 0; i < lanes->num_lanes; ++i) {
        if ((ep->p2p_lanes & UCS_BIT(i)) &&
            (lanes->info[i].local == lane->our_iface) &&
            (lanes->info[i].remote == lane->peer_iface) &&
            (lanes->info[i].path == lane->path)) {
            return i;
        }
    }
    return -1;
}

/* Pair a record with our lane, connecting it once; a record no lane of ours
 * pairs with gets an extra endpoint (it carries the peer's traffic only).
 * @return our endpoint for the record, or NULL. */
static uct_ep_h psel_wireup_pair(psel_ep_h ep,
                                 const psel_wireup_in_lane_t *lane)
{
    int index = psel_wireup_find_lane(ep, lane);
    uct_ep_h uct_ep;
    unsigned i;

    if (index >= 0) {
        if (!(ep->p2p_connected & UCS_BIT(index))) {
            if (psel_wireup_connect(ep, ep->proto.uct_eps[index], lane) !=
                UCS_OK) {
                return NULL;
            }
            ep->p2p_connected |= UCS_BIT(index);
        }
        return ep->proto.uct_eps[index];
    }

    for (i = 0; i < ep->num_extra; ++i) {
        if ((ep->extra_key[i][0] == lane->peer_iface) &&
            (ep->extra_key[i][1] == lane->our_iface) &&
            (ep->extra_key[i][2] == lane->path)) {
            return ep->extra_eps[i];
        }
    }
    if (ep->num_extra == PSEL_MAX_LANES) {
        ucs_error("wireup: endpoint %lx: more than %u extra lanes; dropped",
                  ep->id, PSEL_MAX_LANES);
        return NULL;
    }
    if (psel_ep_create_unconnected(ep, lane->our_iface, &uct_ep) != UCS_OK) {
        return NULL;
    }
    if (psel_wireup_connect(ep, uct_ep, lane) != UCS_OK) {
        uct_ep_destroy(uct_ep);
        psel_worker_iface_put(ep->worker, lane->our_iface);
        return NULL;
    }
    ep->extra_key[ep->num_extra][0] = lane->peer_iface;
    ep->extra_key[ep->num_extra][1] = lane->our_iface;
    ep->extra_key[ep->num_extra][2] = lane->path;
    ep->extra_eps[ep->num_extra++]  = uct_ep;
    return uct_ep;
}

/* The endpoint to the sender of a REQUEST: found by its worker uuid or its
 * address, else created (internal until the user creates it too). */
static ucs_status_t psel_wireup_peer_ep(psel_worker_h worker,
                                        const psel_wireup_in_t *in,
                                        psel_ep_h *ep_p)
{
    psel_ep_h ep;

    ucs_list_for_each(ep, &worker->eps, list) {
        if ((ep->peer_uuid == in->hdr.sender_uuid) ||
            ((ep->peer_uuid == 0) &&
             (ep->peer_address_length == in->hdr.address_length) &&
             !memcmp(ep->peer_address, in->address,
                     in->hdr.address_length))) {
            *ep_p = ep;
            return UCS_OK;
        }
    }
    return psel_ep_create_common(worker, in->address, in->hdr.address_length,
                                 1, ep_p);
}

static ucs_status_t psel_wireup_on_request(psel_worker_h worker,
                                           const psel_wireup_in_t *in)
{
    psel_wireup_out_lane_t out[PSEL_MAX_LANES] = {{0}};
    const psel_wireup_in_lane_t *lane;
    int created = 0;
    ucs_status_t status;
    unsigned i;
    psel_ep_h ep;

    status = psel_wireup_peer_ep(worker, in, &ep);
    if (status != UCS_OK) {
        ucs_error("wireup: no endpoint back to the peer (%s); request "
                  "dropped", ucs_status_string(status));
        return status;
    }
    created        = ep->internal && (ep->peer_uuid == 0);
    ep->peer_uuid  = in->hdr.sender_uuid;
    psel_rndv_set_remote_id(ep, in->hdr.sender_ep_id);

    for (i = 0; i < in->num_lanes; ++i) {
        lane                = &in->lanes[i];
        out[i].our_iface    = lane->our_iface;
        out[i].peer_iface   = lane->peer_iface;
        out[i].path         = lane->path;
        out[i].uct_ep       = psel_wireup_pair(ep, lane);
        if (out[i].uct_ep == NULL) {
            return UCS_ERR_UNREACHABLE;
        }
    }
    status = psel_wireup_send(ep, PSEL_WIREUP_REPLY, out, in->num_lanes);
    if ((status == UCS_OK) && created && !psel_ep_is_ready(ep)) {
        /* lanes of ours the peer did not pair: our own request */
        status = psel_wireup_start(ep);
    }
    return status;
}

static ucs_status_t psel_wireup_on_reply(psel_worker_h worker,
                                         const psel_wireup_in_t *in)
{
    unsigned i;
    psel_ep_h ep;

    ucs_list_for_each(ep, &worker->eps, list) {
        if (ep->id == in->hdr.dest_ep_id) {
            ep->peer_uuid = in->hdr.sender_uuid;
            psel_rndv_set_remote_id(ep, in->hdr.sender_ep_id);
            for (i = 0; i < in->num_lanes; ++i) {
                if (psel_wireup_pair(ep, &in->lanes[i]) == NULL) {
                    return UCS_ERR_UNREACHABLE;
                }
            }
            ucs_debug("wireup: endpoint %lx connected to the peer's "
                      "endpoint %lx", ep->id, ep->remote_id);
            return UCS_OK;
        }
    }
    ucs_debug("wireup: reply for endpoint %lx, which is gone; dropped",
              in->hdr.dest_ep_id);
    return UCS_ERR_NO_ELEM;
}

/* How long an endpoint wireup made for a peer outlives the peer's forced
 * close. tcp keeps the closed side's connection for receiving, its socket
 * still full of what the close cut off; libuct 1.13.1 reads that endpoint
 * after freeing it when our side's end of the connection (CONN_FIN)
 * arrives in the same poll as its socket turning writable
 * (uct_tcp_iface_handle_events). Once we have read the rest, no write is
 * pending there and our CONN_FIN is harmless. */
#define PSEL_WIREUP_LINGER_SEC 1.0

/* The peer's endpoint in->hdr.sender_ep_id went away: nothing it ran with
 * ours will be answered. An endpoint wireup made for it, or one whose lanes
 * were connected to its endpoints, fails (and progress destroys the former);
 * an endpoint of the user's with iface lanes only stays usable: its
 * rendezvous with the peer fail and it forgets the peer's endpoint id (its
 * next rendezvous announces itself again). */
/* The endpoint a CLOSE is for: the one that knows the sender's endpoint,
 * else the one the sender names (a requester whose REPLY never came, or
 * was superseded by this CLOSE, does not know the sender's id yet). */
static psel_ep_h psel_wireup_close_target(psel_worker_h worker,
                                          const psel_wireup_in_t *in)
{
    psel_ep_h ep;

    ucs_list_for_each(ep, &worker->eps, list) {
        if ((ep->remote_id == in->hdr.sender_ep_id) &&
            ((ep->peer_uuid == 0) || (ep->peer_uuid == in->hdr.sender_uuid))) {
            return ep;
        }
    }
    if (in->hdr.dest_ep_id == 0) {
        return NULL;
    }
    ucs_list_for_each(ep, &worker->eps, list) {
        if ((ep->id == in->hdr.dest_ep_id) && (ep->remote_id == 0) &&
            ((ep->peer_uuid == 0) || (ep->peer_uuid == in->hdr.sender_uuid))) {
            return ep;
        }
    }
    return NULL;
}

static ucs_status_t psel_wireup_on_close(psel_worker_h worker,
                                         const psel_wireup_in_t *in)
{
    psel_ep_h ep = psel_wireup_close_target(worker, in);

    if (ep != NULL) {
        ucs_debug("wireup: endpoint %lx: the peer closed its endpoint %lx",
                  ep->id, ep->remote_id);
        if (ep->internal || (ep->p2p_lanes != 0)) {
            if (ep->internal && (in->hdr.flags & PSEL_WIREUP_FLAG_FORCED)) {
                ep->linger_until = psel_time_sec() + PSEL_WIREUP_LINGER_SEC;
            }
            if (ep->status == UCS_OK) {
                ep->status = UCS_ERR_CONNECTION_RESET;
                ++worker->num_failed_eps; /* handled by progress */
            }
        } else {
            /* the completions may destroy the endpoint: it stays readable
             * until released */
            psel_ep_hold(ep);
            if (ep->remote_id != 0) {
                psel_tm_purge_sender(&worker->tm, ep->remote_id,
                                     UCS_ERR_CONNECTION_RESET);
            }
            if (!ep->destroying) {
                psel_rndv_ep_fail(ep, UCS_ERR_CONNECTION_RESET, 0);
            }
            if (!ep->destroying) {
                psel_rndv_set_remote_id(ep, 0);
                ep->rndv_announced = 0;
            }
            psel_ep_release(ep);
        }
        return UCS_OK;
    }
    ucs_debug("wireup: close of peer endpoint %lx, which we do not know",
              in->hdr.sender_ep_id);
    return UCS_ERR_NO_ELEM;
}

ucs_status_t psel_wireup_process(psel_worker_h worker, const void *data,
                                 size_t length)
{
    psel_wireup_in_t in;
    ucs_status_t status;

    status = psel_wireup_parse(worker, data, length, &in);
    if (status != UCS_OK) {
        return status;
    }
    switch (in.hdr.type) {
    case PSEL_WIREUP_REQUEST:
        return psel_wireup_on_request(worker, &in);
    case PSEL_WIREUP_REPLY:
        return psel_wireup_on_reply(worker, &in);
    default:
        return psel_wireup_on_close(worker, &in);
    }
}
