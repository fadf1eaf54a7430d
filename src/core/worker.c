/*
 * Worker: a UCT worker, the ifaces peers connect to, the active message
 * handlers, the worker address, progress and pending sends.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "core_int.h"

#include <lane_select/text_scan.h>

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <ucs/sys/string.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <sys/random.h>
#include <unistd.h>

/* ---- active message handlers: wire input, validated before use ---- */

/* A whole message or a first fragment, parsed: to tag matching. */
static void psel_am_eager_deliver(psel_worker_h worker,
                                  const psel_eager_first_t *hdr)
{
    if (hdr->length == hdr->total_length) {
        ++worker->rx_slip.arrivals; /* a whole message (psel_rx_slip_t) */
    }
    psel_tm_eager_first(&worker->tm, hdr->sender_id, hdr->msg_id, hdr->tag,
                        hdr->total_length, hdr->payload, hdr->length);
}

static ucs_status_t psel_am_eager_short(void *arg, void *data, size_t length,
                                        unsigned flags)
{
    psel_eager_first_t hdr;

    if (psel_eager_short_parse(data, length, &hdr) == UCS_OK) {
        psel_am_eager_deliver(arg, &hdr);
    }
    return UCS_OK;
}

static ucs_status_t psel_am_eager_first(void *arg, void *data, size_t length,
                                        unsigned flags)
{
    psel_eager_first_t hdr;

    if (psel_eager_first_parse(data, length, &hdr) == UCS_OK) {
        psel_am_eager_deliver(arg, &hdr);
    }
    return UCS_OK;
}

static ucs_status_t psel_am_eager_middle(void *arg, void *data, size_t length,
                                         unsigned flags)
{
    psel_worker_h worker = arg;
    psel_eager_middle_t hdr;

    if (psel_eager_middle_parse(data, length, &hdr) == UCS_OK) {
        psel_tm_eager_middle(&worker->tm, hdr.sender_id, hdr.msg_id,
                             hdr.offset, hdr.payload, hdr.length);
    }
    return UCS_OK;
}

/* wireup creates endpoints: not from inside a UCT callback, so the message
 * is kept for the next progress call */
static ucs_status_t psel_am_wireup(void *arg, void *data, size_t length,
                                   unsigned flags)
{
    psel_worker_h worker = arg;
    psel_wireup_msg_t *msg;

    msg = malloc(sizeof(*msg) + length);
    if (msg == NULL) {
        ucs_error("wireup: no memory for a %zu-byte message; dropped",
                  length);
        return UCS_OK;
    }
    msg->length = length;
    memcpy(msg->data, data, length);
    ucs_list_add_tail(&worker->wireup_in, &msg->list);
    return UCS_OK;
}

/* Core's handlers (arg = the worker); the rendezvous ids' handlers are the
 * protocols' (psel_rndv_am_handlers, arg = the worker's protocol view). */
static const psel_rndv_am_handler_t psel_am_handlers[] = {
    {PSEL_AM_ID_WIREUP,       psel_am_wireup},
    {PSEL_AM_ID_EAGER_SHORT,  psel_am_eager_short},
    {PSEL_AM_ID_EAGER_FIRST,  psel_am_eager_first},
    {PSEL_AM_ID_EAGER_MIDDLE, psel_am_eager_middle}
};

static ucs_status_t psel_worker_set_am_handlers(psel_worker_h worker,
                                                uct_iface_h iface)
{
    ucs_status_t status = UCS_OK;
    unsigned i;

    for (i = 0; (status == UCS_OK) &&
                (i < ucs_static_array_size(psel_am_handlers)); ++i) {
        status = uct_iface_set_am_handler(iface, psel_am_handlers[i].id,
                                          psel_am_handlers[i].cb, worker, 0);
    }
    for (i = 0; (status == UCS_OK) && (i < psel_rndv_num_am_handlers); ++i) {
        status = uct_iface_set_am_handler(iface, psel_rndv_am_handlers[i].id,
                                          psel_rndv_am_handlers[i].cb,
                                          &worker->proto, 0);
    }
    return status;
}

/* ---- opening memory domains and ifaces ---- */

static ucs_status_t psel_worker_open_md(psel_worker_h worker,
                                        const psel_resource_t *rsc,
                                        unsigned *md_index_p)
{
    uct_component_attr_t attr;
    uct_md_config_t *md_config;
    ucs_status_t status;
    unsigned i;

    for (i = 0; i < worker->num_mds; ++i) {
        if (!strcmp(worker->md_names[i], rsc->md_name)) {
            *md_index_p = i;
            return UCS_OK;
        }
    }
    if (worker->num_mds == PSEL_WORKER_MAX_MDS) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    for (i = 0; i < worker->num_components; ++i) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if ((uct_component_query(worker->components[i], &attr) != UCS_OK) ||
            strcmp(attr.name, rsc->component)) {
            continue;
        }
        status = uct_md_config_read(worker->components[i], NULL, NULL,
                                    &md_config);
        if (status != UCS_OK) {
            return status;
        }
        status = uct_md_open(worker->components[i], rsc->md_name, md_config,
                             &worker->mds[worker->num_mds]);
        uct_config_release(md_config);
        if (status != UCS_OK) {
            return status;
        }
        ucs_strncpy_zero(worker->md_names[worker->num_mds], rsc->md_name,
                         PSEL_NAME_MAX);
        worker->md_components[worker->num_mds] = worker->components[i];
        *md_index_p = worker->num_mds++;
        return UCS_OK;
    }
    return UCS_ERR_NO_DEVICE;
}

/* ---- which ifaces are polled ----
 * An iface carries traffic once a lane of ours uses it or a peer's message
 * arrives on it; only those are polled on every progress call, as UCX polls
 * the ifaces of its lanes. Until then an iface is idle: if it has an event
 * fd, the async thread watches it (so an idle tcp iface costs no epoll_wait
 * on the hot path); otherwise it is polled every PSEL_IDLE_POLL_PERIOD
 * calls. The first arrival makes it active for good. */

static void psel_worker_iface_event(int fd, ucs_event_set_types_t events,
                                    void *arg)
{
    psel_worker_iface_t *wif = arg;
    psel_worker_h worker     = wif->worker;

    /* async thread: only raise flags, the progress thread does the rest */
    wif->woken         = 1;
    worker->idle_woken = 1;
}

static int psel_worker_iface_watch(psel_worker_h worker,
                                   psel_worker_iface_t *wif)
{
    const uint64_t need = UCT_IFACE_FLAG_EVENT_FD | UCT_IFACE_FLAG_EVENT_RECV;
    int fd;

    if (((wif->attr.cap.event_flags & need) != need) ||
        (uct_iface_event_fd_get(wif->iface, &fd) != UCS_OK)) {
        return 0;
    }
    if (ucs_async_set_event_handler(UCS_ASYNC_MODE_THREAD_SPINLOCK, fd,
                                    UCS_EVENT_SET_EVREAD,
                                    psel_worker_iface_event, wif,
                                    worker->async) != UCS_OK) {
        return 0;
    }
    wif->event_fd = fd;
    if (uct_iface_event_arm(wif->iface, UCT_EVENT_RECV) != UCS_OK) {
        /* something arrived already (UCS_ERR_BUSY) */
        psel_worker_iface_event(fd, UCS_EVENT_SET_EVREAD, wif);
    }
    return 1;
}

static void psel_worker_iface_unwatch(psel_worker_iface_t *wif)
{
    if (wif->event_fd >= 0) {
        ucs_async_remove_handler(wif->event_fd, 1);
        wif->event_fd = -1;
    }
}

static void psel_worker_iface_idle(psel_worker_h worker,
                                   psel_worker_iface_t *wif)
{
    wif->worker   = worker;
    wif->active   = 0;
    wif->woken    = 0;
    wif->event_fd = -1;
    if (!psel_worker_iface_watch(worker, wif)) {
        ++worker->num_polled_idle;
    }
}

void psel_worker_iface_get(psel_worker_h worker, unsigned iface_index)
{
    psel_worker_iface_t *wif = &worker->ifaces[iface_index];

    ++wif->num_eps;
    psel_worker_iface_activate(worker, wif);
}

void psel_worker_iface_put(psel_worker_h worker, unsigned iface_index)
{
    psel_worker_iface_t *wif = &worker->ifaces[iface_index];

    if ((--wif->num_eps > 0) || !wif->active) {
        return;
    }
    /* no endpoint of ours uses it: idle again, as UCX deactivates the
     * ifaces of no lane; a peer's message wakes it */
    ucs_debug("worker %p: %s/%s idle again", worker,
              worker->local.resources[iface_index].tl_name,
              worker->local.resources[iface_index].dev_name);
    uct_iface_progress_disable(wif->iface,
                               UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    psel_worker_iface_idle(worker, wif);
}

void psel_worker_iface_activate(psel_worker_h worker, psel_worker_iface_t *wif)
{
    if (wif->active) {
        return;
    }
    ucs_debug("worker %p: polling %s/%s from now on", worker,
              worker->local.resources[wif - worker->ifaces].tl_name,
              worker->local.resources[wif - worker->ifaces].dev_name);
    if (wif->event_fd >= 0) {
        psel_worker_iface_unwatch(wif);
    } else {
        --worker->num_polled_idle;
    }
    uct_iface_progress_enable(wif->iface,
                              UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    wif->active = 1;
}

/* Activate the idle ifaces the async thread saw a message on, and poll
 * those without an event fd every PSEL_IDLE_POLL_PERIOD calls. */
static unsigned psel_worker_progress_idle(psel_worker_h worker)
{
    int poll_all = (worker->num_polled_idle > 0) &&
                   ((++worker->progress_calls % PSEL_IDLE_POLL_PERIOD) == 0);
    int woken    = worker->idle_woken;
    psel_worker_iface_t *wif;
    unsigned count = 0;
    unsigned n;

    if (!woken && !poll_all) {
        return 0;
    }
    worker->idle_woken = 0;
    for (wif = worker->ifaces; wif < worker->ifaces + worker->num_ifaces;
         ++wif) {
        if (wif->active) {
            continue;
        }
        if (wif->woken) {
            wif->woken = 0;
            psel_worker_iface_activate(worker, wif);
            count += uct_iface_progress(wif->iface);
        } else if (poll_all && (wif->event_fd < 0)) {
            n = uct_iface_progress(wif->iface);
            if (n > 0) {
                psel_worker_iface_activate(worker, wif);
                count += n;
            }
        }
    }
    return count;
}

/* UCT reports a failed endpoint (its peer died or is unreachable), from
 * progress: mark our endpoint; psel_worker_progress() fails its requests,
 * outside the UCT callback. */
static ucs_status_t psel_worker_ep_error(void *arg, uct_ep_h uct_ep,
                                         ucs_status_t status)
{
    psel_worker_h worker = arg;
    psel_ep_h ep;

    ucs_list_for_each(ep, &worker->eps, list) {
        if (psel_ep_owns_uct_ep(ep, uct_ep)) {
            psel_ep_set_failed(ep, status, "the peer failed");
            return UCS_OK;
        }
    }
    ucs_debug("worker %p: error on a UCT endpoint it no longer has: %s",
              worker, ucs_status_string(status));
    return UCS_OK;
}

static ucs_status_t psel_worker_open_iface(psel_worker_h worker,
                                           unsigned rsc_index)
{
    const psel_resource_t *rsc = &worker->context->resources.resources[rsc_index];
    psel_worker_iface_t *wif   = &worker->ifaces[worker->num_ifaces];
    psel_proto_iface_info_t *info;
    ucs_status_t status;

    status = psel_worker_open_md(worker, rsc, &wif->md_index);
    if (status != UCS_OK) {
        return status;
    }

    status = psel_uct_iface_open(worker->mds[wif->md_index],
                                 worker->uct_worker, rsc->tl_name,
                                 rsc->dev_name, psel_worker_ep_error, worker,
                                 &wif->iface);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_iface_query(wif->iface, &wif->attr);
    if ((status == UCS_OK) &&
        ((wif->attr.device_addr_len > sizeof(wif->dev_addr)) ||
         (wif->attr.iface_addr_len > sizeof(wif->iface_addr)))) {
        status = UCS_ERR_EXCEEDS_LIMIT;
    }
    if (status == UCS_OK) {
        status = uct_iface_get_device_address(wif->iface,
                                              (uct_device_addr_t*)wif->dev_addr);
    }
    if (status == UCS_OK) {
        status = uct_iface_get_address(wif->iface,
                                       (uct_iface_addr_t*)wif->iface_addr);
    }
    if ((status == UCS_OK) &&
        (wif->attr.cap.flags &
         (UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY))) {
        status = psel_worker_set_am_handlers(worker, wif->iface);
    }
    if (status != UCS_OK) {
        uct_iface_close(wif->iface);
        return status;
    }

    info            = &worker->proto.ifaces[worker->num_ifaces];
    info->attr      = &wif->attr;
    info->md        = worker->mds[wif->md_index];
    info->md_index  = wif->md_index;
    info->component = worker->md_components[wif->md_index];
    info->rkey_size = rsc->rkey_size;
    info->mem_reg   = !!(rsc->md_flags & UCT_MD_FLAG_REG);
    worker->proto.num_ifaces = worker->num_ifaces + 1;
    wif->rsc_index = rsc_index;
    ++worker->num_ifaces;
    psel_worker_iface_idle(worker, wif);
    return psel_resource_table_append(&worker->local, rsc);
}

static void psel_worker_close_ifaces(psel_worker_h worker)
{
    unsigned i;

    for (i = 0; i < worker->num_ifaces; ++i) {
        psel_worker_iface_unwatch(&worker->ifaces[i]);
        uct_iface_close(worker->ifaces[i].iface);
    }
    for (i = 0; i < worker->num_mds; ++i) {
        uct_md_close(worker->mds[i]);
    }
    worker->num_ifaces = 0;
    worker->num_mds    = 0;
}

/* A random worker id (never 0: that means "unknown" on the wire): peers
 * tell workers apart by it, endpoint ids derive from it. */
static ucs_status_t psel_worker_new_uuid(uint64_t *uuid_p)
{
    ssize_t ret;

    do {
        ret = getrandom(uuid_p, sizeof(*uuid_p), 0);
    } while (((ret < 0) && (errno == EINTR)) || ((ret >= 0) && (*uuid_p == 0)));
    if (ret != sizeof(*uuid_p)) {
        ucs_error("worker: getrandom() for its id failed: %m");
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

ucs_status_t psel_worker_create(psel_context_h context, psel_worker_h *worker_p)
{
    const psel_resource_table_t *resources = &context->resources;
    psel_worker_h worker;
    ucs_status_t status;
    unsigned i;

    worker = calloc(1, sizeof(*worker));
    if (worker == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    worker->context    = context;
    worker->count_used = (context->config.proto_info == PSEL_PROTO_INFO_USED);
    worker->rx_slip.duration = context->config.rx_slip;
    ucs_list_head_init(&worker->pending_eps);

    ucs_list_head_init(&worker->eps);
    worker->keepalive_next = psel_time_sec();
    ucs_list_head_init(&worker->wireup_in);
    ucs_list_head_init(&worker->farewells);
    psel_resource_table_init(&worker->local);
    ucs_strncpy_zero(worker->local.origin, "this worker",
                     sizeof(worker->local.origin));

    status = psel_worker_new_uuid(&worker->uuid);
    if (status != UCS_OK) {
        goto err_free;
    }
    status = psel_request_pool_init(worker);
    if (status != UCS_OK) {
        goto err_free;
    }
    status = psel_tm_init(&worker->tm);
    if (status != UCS_OK) {
        goto err_pool;
    }
    psel_rndv_init(worker);

    status = ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                      &worker->async);
    if (status != UCS_OK) {
        goto err_tm;
    }

    status = uct_worker_create(worker->async, UCS_THREAD_MODE_SINGLE,
                               &worker->uct_worker);
    if (status != UCS_OK) {
        goto err_async;
    }

    status = uct_query_components(&worker->components,
                                  &worker->num_components);
    if (status != UCS_OK) {
        goto err_uct_worker;
    }

    /* peers connect to ifaces directly; transports that connect only to
     * endpoints need the wireup lane, not there yet */
    for (i = 0; (i < resources->count) &&
                (worker->num_ifaces < PSEL_WORKER_MAX_IFACES); ++i) {
        if (!(resources->resources[i].cap_flags &
              UCT_IFACE_FLAG_CONNECT_TO_IFACE)) {
            continue;
        }
        status = psel_worker_open_iface(worker, i);
        if (status != UCS_OK) {
            ucs_debug("worker: %s/%s not opened: %s",
                      resources->resources[i].tl_name,
                      resources->resources[i].dev_name,
                      ucs_status_string(status));
        }
    }
    if (worker->num_ifaces == 0) {
        ucs_error("worker: no transport could be opened (of %u resources; "
                  "check UCX_PSEL_TLS)", resources->count);
        status = UCS_ERR_NO_DEVICE;
        goto err_close;
    }

    *worker_p = worker;
    return UCS_OK;

err_close:
    psel_worker_close_ifaces(worker);
    uct_release_component_list(worker->components);
err_uct_worker:
    uct_worker_destroy(worker->uct_worker);
err_async:
    ucs_async_context_destroy(worker->async);
err_tm:
    psel_tm_cleanup(&worker->tm);
err_pool:
    psel_request_pool_cleanup(worker);
err_free:
    psel_resource_table_cleanup(&worker->local);
    free(worker);
    return status;
}

static void psel_worker_log_used(psel_worker_h worker);

void psel_worker_destroy(psel_worker_h worker)
{
    psel_wireup_msg_t *msg, *tmp_msg;
    psel_ep_h ep;

    if (worker->context->config.proto_info == PSEL_PROTO_INFO_USED) {
        psel_worker_log_used(worker);
    }

    /* a destroy runs callbacks that may destroy other endpoints: take the
     * first one left each time */
    while (!ucs_list_is_empty(&worker->eps)) {
        ep = ucs_list_head(&worker->eps, struct psel_ep, list);
        if (!ep->internal) {
            ucs_warn("worker destroyed with endpoint %lx still open", ep->id);
        }
        psel_ep_destroy(ep); /* fails its rendezvous; leaves the list */
    }
    psel_wireup_farewells_cleanup(worker, 0);
    psel_rndv_cleanup(worker);
    ucs_list_for_each_safe(msg, tmp_msg, &worker->wireup_in, list) {
        free(msg);
    }
    psel_tm_cleanup(&worker->tm);
    psel_request_pool_cleanup(worker);
    psel_worker_close_ifaces(worker);
    uct_release_component_list(worker->components);
    uct_worker_destroy(worker->uct_worker);
    ucs_async_context_destroy(worker->async);
    psel_resource_table_cleanup(&worker->local);
    free(worker);
}

static unsigned psel_worker_progress_wireup(psel_worker_h worker)
{
    psel_wireup_msg_t *msg;
    unsigned count = 0;

    psel_wireup_progress(worker);
    /* bounded: messages that arrive meanwhile wait for the next call */
    while (!ucs_list_is_empty(&worker->wireup_in) &&
           (count < PSEL_PENDING_PER_PROGRESS)) {
        msg = ucs_list_extract_head(&worker->wireup_in, psel_wireup_msg_t,
                                    list);
        psel_wireup_process(worker, msg->data, msg->length);
        free(msg);
        ++count;
    }
    return count;
}

/* Every UCX_PSEL_KEEPALIVE_INTERVAL: ask UCT to check the peers of every
 * endpoint; on transports with UCT_IFACE_FLAG_EP_CHECK a dead peer comes
 * back through psel_worker_ep_error(). */
static void psel_worker_keepalive(psel_worker_h worker)
{
    double now = psel_time_sec();
    psel_ep_h ep;

    if (now < worker->keepalive_next) {
        return;
    }
    worker->keepalive_next = now + worker->context->config.keepalive_interval;
    ucs_list_for_each(ep, &worker->eps, list) {
        psel_ep_keepalive(ep);
    }
}

unsigned psel_worker_eps_apply(psel_worker_h worker, int (*want)(psel_ep_h ep),
                               unsigned (*func)(psel_ep_h ep))
{
    unsigned count = 0;
    psel_ep_h ep;
    int gone;

restart:
    /* the link of an endpoint still in the list leads to one that is too,
     * whatever else the callbacks destroyed */
    ucs_list_for_each(ep, &worker->eps, list) {
        if (!want(ep)) {
            continue;
        }
        psel_ep_hold(ep);
        count += func(ep);
        gone = ep->destroying;
        psel_ep_release(ep);
        if (gone) {
            goto restart;
        }
    }
    return count;
}

static int psel_worker_ep_failed(psel_ep_h ep)
{
    return (ep->status != UCS_OK) && !ep->failure_handled;
}

/* An endpoint wireup made for a peer that went away (it failed, or closed
 * its endpoint) serves nobody: it goes once its requests failed, or at its
 * linger_until. */
static unsigned psel_worker_ep_handle_failure(psel_ep_h ep)
{
    --ep->worker->num_failed_eps;
    psel_ep_handle_failure(ep);
    if (ep->internal && !ep->destroying) {
        if (ep->linger_until > 0) {
            ++ep->worker->num_lingering_eps;
        } else {
            psel_ep_destroy(ep);
        }
    }
    return 1;
}

static int psel_worker_ep_linger_over(psel_ep_h ep)
{
    return ep->internal && (ep->linger_until > 0) &&
           (psel_time_sec() >= ep->linger_until);
}

static unsigned psel_worker_ep_end_linger(psel_ep_h ep)
{
    --ep->worker->num_lingering_eps;
    psel_ep_destroy(ep);
    return 1;
}

static int psel_worker_ep_flushing(psel_ep_h ep)
{
    return !ucs_list_is_empty(&ep->flushes);
}

/* Called with what a progress call did (@a count): arm the slip when
 * messages arrived with no send of ours since the previous arrivals, and
 * wait once at the first call after them that did nothing. */
static void psel_worker_rx_slip(psel_rx_slip_t *slip, unsigned count)
{
    double end;

    if (slip->arrivals != slip->seen_arrivals) {
        slip->armed         = (slip->sends == slip->seen_sends);
        slip->seen_arrivals = slip->arrivals;
        slip->seen_sends    = slip->sends;
        return;
    }
    if (!slip->armed || (count > 0) || (slip->sends != slip->seen_sends)) {
        return;
    }
    slip->armed = 0;
    ++slip->count;
    end = psel_time_sec() + slip->duration;
    do {
        psel_cpu_relax();
    } while (psel_time_sec() < end);
}

unsigned psel_worker_progress(psel_worker_h worker)
{
    unsigned count = uct_worker_progress(worker->uct_worker);

    count += psel_worker_progress_idle(worker);
    if (ucs_unlikely(!ucs_list_is_empty(&worker->wireup_in) ||
                     (worker->wireup_out > 0))) {
        count += psel_worker_progress_wireup(worker);
    }

    if (!ucs_list_is_empty(&worker->proto.rndv_work)) {
        count += psel_rndv_progress(&worker->proto);
    }

    /* these run user callbacks, which may destroy endpoints */
    if (ucs_unlikely(worker->num_failed_eps > 0)) {
        count += psel_worker_eps_apply(worker, psel_worker_ep_failed,
                                       psel_worker_ep_handle_failure);
    }
    if (ucs_unlikely((++worker->keepalive_calls % PSEL_KEEPALIVE_PERIOD) ==
                     0)) {
        psel_worker_keepalive(worker);
        if (worker->num_lingering_eps > 0) {
            count += psel_worker_eps_apply(worker, psel_worker_ep_linger_over,
                                           psel_worker_ep_end_linger);
        }
    }
    if (ucs_unlikely(worker->num_flushing > 0)) {
        count += psel_worker_eps_apply(worker, psel_worker_ep_flushing,
                                       psel_ep_progress_flushes);
    }

    if (!ucs_list_is_empty(&worker->pending_eps)) {
        count += psel_worker_progress_pending(worker);
    }
    if (worker->rx_slip.duration > 0) {
        psel_worker_rx_slip(&worker->rx_slip, count);
    }
    return count;
}

ucs_status_t psel_worker_get_address(psel_worker_h worker, void **address_p,
                                     size_t *length_p)
{
    psel_address_entry_t *entries;
    const psel_worker_iface_t *wif;
    ucs_status_t status;
    unsigned i;

    entries = calloc(worker->num_ifaces, sizeof(*entries));
    if (entries == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    for (i = 0; i < worker->num_ifaces; ++i) {
        wif    = &worker->ifaces[i];
        status = psel_address_entry_from_resource(
                &worker->local.resources[i], wif->dev_addr,
                wif->attr.device_addr_len, wif->iface_addr,
                wif->attr.iface_addr_len, &entries[i]);
        if (status != UCS_OK) {
            goto out;
        }
    }
    status = psel_address_pack(entries, worker->num_ifaces, address_p,
                               length_p);
out:
    free(entries);
    return status;
}

void psel_worker_count_used(psel_worker_h worker,
                            const psel_select_table_t *table,
                            const psel_select_elem_t *elem, size_t length)
{
    size_t start;
    psel_used_row_t *row;
    unsigned i;

    if (elem == worker->used_last_elem) {
        row = worker->used_last_row; /* the same row as the last send */
        goto found;
    }
    start = (elem == table->elems) ? 0 : (elem - 1)->max_length + 1;
    for (i = 0; i < worker->num_used; ++i) {
        row = &worker->used[i];
        if ((row->proto == elem->proto) && (row->row_start == start) &&
            (row->row_end == elem->max_length)) {
            goto found;
        }
    }
    if (worker->num_used == PSEL_WORKER_MAX_USED) {
        return; /* the table keeps the first rows seen */
    }
    row            = &worker->used[worker->num_used++];
    row->proto     = elem->proto;
    row->row_start = start;
    row->row_end   = elem->max_length;
    row->min_size  = length;
    row->max_size  = length;
    row->count     = 0;
found:
    worker->used_last_elem = elem;
    worker->used_last_row  = row;
    row->min_size = ucs_min(row->min_size, length);
    row->max_size = ucs_max(row->max_size, length);
    ++row->count;
}

static void psel_worker_used_strb(psel_worker_h worker,
                                  ucs_string_buffer_t *strb)
{
    UCS_STRING_BUFFER_ONSTACK(range, 64);
    const psel_used_row_t *row;
    unsigned i;

    ucs_string_buffer_appendf(strb, "+-------------------------------------"
                              "----------------------------------+\n"
                              "| protocols used (UCX_PSEL_PROTO_INFO=used)"
                              "                              |\n"
                              "+------------+----------------------+------"
                              "----------------+---------------+\n"
                              "| %-10s | %-20s | %-20s | %13s |\n",
                              "protocol", "table row", "sizes sent",
                              "messages");
    for (i = 0; i < worker->num_used; ++i) {
        row = &worker->used[i];
        ucs_string_buffer_reset(&range);
        ucs_string_buffer_appendf(&range, "%zu..", row->row_start);
        psel_size_str(row->row_end, &range);
        ucs_string_buffer_appendf(strb, "| %-10s | %20s | %9zu..%-9zu | "
                                  "%13lu |\n", row->proto->name,
                                  ucs_string_buffer_cstr(&range),
                                  row->min_size, row->max_size,
                                  (unsigned long)row->count);
    }
    ucs_string_buffer_appendf(strb, "+------------+----------------------+--"
                              "--------------------+---------------+\n");
}

static void psel_worker_print_used_in_c_locale(psel_worker_h worker,
                                               FILE *stream)
{
    ucs_string_buffer_t strb;

    ucs_string_buffer_init(&strb);
    psel_worker_used_strb(worker, &strb);
    fputs(ucs_string_buffer_cstr(&strb), stream);
    ucs_string_buffer_cleanup(&strb);
}

/* numbers with '.' whatever LC_NUMERIC the application set */
void psel_worker_print_used(psel_worker_h worker, FILE *stream)
{
    psel_text_locale_t saved = psel_text_c_locale_enter();

    psel_worker_print_used_in_c_locale(worker, stream);
    psel_text_c_locale_leave(saved);
}

static void psel_worker_log_used(psel_worker_h worker)
{
    ucs_string_buffer_t strb;
    char *line, *saveptr = NULL;

    ucs_string_buffer_init(&strb);
    psel_worker_used_strb(worker, &strb);
    for (line = strtok_r((char*)ucs_string_buffer_cstr(&strb), "\n", &saveptr);
         line != NULL; line = strtok_r(NULL, "\n", &saveptr)) {
        ucs_log_print_compact(line);
    }
    ucs_string_buffer_cleanup(&strb);
}
