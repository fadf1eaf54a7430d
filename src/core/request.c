/*
 * Requests and the tag API: send through the selected protocol, receive
 * through tag matching.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "core_int.h"

#include <lane_select/ucs_compat.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/compiler_def.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static ucs_mpool_ops_t psel_request_mpool_ops = {
    .chunk_alloc   = ucs_mpool_chunk_malloc,
    .chunk_release = ucs_mpool_chunk_free
};

ucs_status_t psel_request_pool_init(psel_worker_h worker)
{
    /* requests are taken and returned at the message rate: a libucs memory
     * pool, grown by chunks, kept until the worker goes */
    return psel_ucs_mpool_init(&worker->request_mp, sizeof(psel_request_t),
                               64, 128, UINT_MAX, &psel_request_mpool_ops,
                               "psel_requests");
}

void psel_request_pool_cleanup(psel_worker_h worker)
{
    ucs_mpool_cleanup(&worker->request_mp, 1);
}

psel_request_t *psel_request_alloc(psel_worker_h worker,
                                   psel_request_type_t type,
                                   psel_request_cb_t cb, void *arg)
{
    psel_request_t *req = ucs_mpool_get(&worker->request_mp);

    if (ucs_unlikely(req == NULL)) {
        return NULL;
    }
    /* the caller fills what its type uses (proto, recv or flush) */
    req->worker   = worker;
    req->type     = type;
    req->status   = UCS_INPROGRESS;
    req->released = 0;
    req->cb       = cb;
    req->arg      = arg;
    req->queued   = 0;
    req->elem     = NULL;
    req->ep       = NULL;
    return req;
}

static void psel_request_release(psel_request_t *req)
{
    ucs_mpool_put(req);
}

void psel_request_complete(psel_request_t *req, ucs_status_t status)
{
    int released;

    if (req->type == PSEL_REQUEST_SEND) {
        --req->ep->num_sends;
        if (req->queued) {
            /* aborted or canceled while waiting to run */
            ucs_list_del(&req->list);
            req->queued = 0;
        }
        if (req->proto.req_id != 0) {
            /* a rendezvous send: replies no longer find it */
            psel_rndv_untrack_send(req->worker, req->proto.req_id);
            req->proto.req_id = 0;
        }
    }
    /* freed before it completed: release it after the callback; else the
     * callback may free it itself (as UCP allows), and it is gone after */
    released    = req->released;
    req->status = status;
    if (req->type == PSEL_REQUEST_RECV) {
        /* the matched message's tag and length, as UCP gives them: the
         * callback needs no psel_request_test() */
        if (req->recv_cb != NULL) {
            req->recv_cb(req, status, &req->recv.info, req->arg);
        }
    } else if (req->cb != NULL) {
        req->cb(req, status, req->arg);
    }
    if (released) {
        psel_request_release(req);
    }
}

ucs_status_t psel_request_test(psel_request_t *req, psel_recv_info_t *info)
{
    if (!UCS_PTR_IS_PTR(req)) {
        return UCS_PTR_STATUS(req); /* completed at once (NULL), or failed */
    }
    if ((req->status != UCS_INPROGRESS) && (info != NULL) &&
        (req->type == PSEL_REQUEST_RECV)) {
        *info = req->recv.info;
    }
    return req->status;
}

void psel_request_free(psel_request_t *req)
{
    if (!UCS_PTR_IS_PTR(req)) {
        return; /* no request */
    }
    if (req->status == UCS_INPROGRESS) {
        req->released = 1; /* released when it completes */
    } else {
        psel_request_release(req);
    }
}

static void psel_send_count(psel_ep_h ep, unsigned flags,
                            const psel_select_elem_t *elem, size_t length);

/* Return a send to its state before the first progress call, if nothing of
 * it reached the peer: the protocol releases what it holds. */
static ucs_status_t psel_send_reset(psel_request_t *req)
{
    const psel_proto_t *proto;
    ucs_status_t status;

    if (req->elem == NULL) {
        return UCS_OK; /* never ran */
    }
    proto  = req->elem->proto;
    status = (proto->reset != NULL) ? proto->reset(&req->proto) :
             (req->proto.offset == 0) ? UCS_OK : UCS_ERR_BUSY;
    if (status != UCS_OK) {
        return status;
    }
    if (req->proto.req_id != 0) {
        psel_rndv_untrack_send(req->worker, req->proto.req_id);
        req->proto.req_id = 0;
    }
    req->proto.offset = 0;
    req->elem         = NULL;
    return UCS_OK;
}

/* Look the protocol up again if the endpoint's configuration changed since
 * the request chose it (a send that started is reset first). */
static ucs_status_t psel_send_select(psel_request_t *req)
{
    psel_ep_h ep = req->ep;

    if ((req->elem != NULL) && (req->cfg_index == ep->cfg_index)) {
        return UCS_OK;
    }
    if (psel_send_reset(req) != UCS_OK) {
        ucs_error("endpoint reconfigured in the middle of a %zu-byte send",
                  req->proto.length);
        return UCS_ERR_CANCELED;
    }
    req->elem = psel_select_lookup_fast(psel_ep_send_selection(ep,
                                                            req->send_flags),
                                        PSEL_OP_TAG_SEND, req->proto.length);
    if (req->elem == NULL) {
        return UCS_ERR_UNSUPPORTED;
    }
    req->cfg_index  = ep->cfg_index;
    req->proto.priv = req->elem->priv;
    psel_send_count(ep, req->send_flags, req->elem, req->proto.length);
    return UCS_OK;
}

void psel_send_progress(psel_request_t *req)
{
    ucs_status_t status;

    req->queued = 0;
    status      = psel_send_select(req);
    while (status == UCS_OK) {
        status = req->elem->proto->progress(&req->proto);
        if (status == UCS_OK) {
            psel_request_complete(req, UCS_OK);
            return;
        }
        if (status == UCS_INPROGRESS) {
            if (req->proto.offset == req->proto.length) {
                return; /* all posted: the protocol calls back */
            }
            status = UCS_OK; /* next fragment */
        }
    }

    if (status == UCS_ERR_NO_RESOURCE) {
        /* the transport is busy: resume from psel_worker_progress() */
        psel_send_queue(req, 1);
        return;
    }
    psel_request_complete(req, status);
}

void psel_send_abort(psel_request_t *req, ucs_status_t status,
                     unsigned flags)
{
    if (req->queued) {
        ucs_list_del(&req->list); /* it moves no more data */
        req->queued = 0;
    }
    if ((req->elem != NULL) && (req->elem->proto->abort != NULL)) {
        /* completes it, now or when its operations in flight end */
        req->elem->proto->abort(&req->proto, status, flags);
    } else {
        psel_request_complete(req, status);
    }
}

/* A rendezvous reply or completion arrived: run the protocol again from the
 * worker's progress, once however many events arrive. */
void psel_send_resume(psel_proto_req_t *proto)
{
    psel_request_t *req = ucs_container_of(proto, psel_request_t, proto);

    if (!req->queued) {
        psel_send_queue(req, 0);
    }
}

/* Put @a ep on the worker's list of endpoints with sends to retry. */
static void psel_ep_schedule(psel_ep_h ep)
{
    if (!ep->pending_scheduled) {
        ep->pending_scheduled = 1;
        ucs_list_add_tail(&ep->worker->pending_eps, &ep->pending_link);
    }
}

void psel_send_queue(psel_request_t *req, int at_head)
{
    psel_ep_h ep = req->ep;

    if (ep->destroying) {
        /* the endpoint's teardown fails every send it has (completions of
         * operations its UCT endpoints purge land here): nothing runs on
         * it again, and it must not join the worker's list */
        return;
    }
    req->queued = 1;
    if (at_head) {
        ucs_list_add_head(&ep->pending, &req->list);
    } else {
        ucs_list_add_tail(&ep->pending, &req->list);
    }
    psel_ep_schedule(ep);
}

/* Retry @a ep's waiting sends in order until one is still blocked, or
 * @a budget runs out; another endpoint's busy transport or unfinished
 * wireup never holds these up. A completion callback may destroy @a ep
 * (the caller holds it): its queue is then empty. */
static unsigned psel_ep_progress_pending(psel_ep_h ep, unsigned *budget)
{
    unsigned count = 0;
    psel_request_t *req;

    while ((*budget > 0) && !ucs_list_is_empty(&ep->pending) &&
           psel_ep_is_ready(ep)) {
        req = ucs_list_extract_head(&ep->pending, psel_request_t, list);
        psel_send_progress(req); /* clears queued; re-queues if blocked */
        --*budget;
        if (!ucs_list_is_empty(&ep->pending) &&
            (ucs_list_head(&ep->pending, psel_request_t, list) == req)) {
            break; /* still blocked: re-queued at the head */
        }
        ++count;
    }
    return count;
}

unsigned psel_worker_progress_pending(psel_worker_h worker)
{
    unsigned budget = PSEL_PENDING_PER_PROGRESS;
    unsigned count  = 0;
    unsigned n      = 0;
    psel_ep_h ep;

    /* one pass over the endpoints there are now, round robin: each that
     * still has sends waiting moves to the back (a send that stays blocked
     * puts it there itself) */
    ucs_list_for_each(ep, &worker->pending_eps, pending_link) {
        ++n;
    }
    while ((n-- > 0) && (budget > 0) &&
           !ucs_list_is_empty(&worker->pending_eps)) {
        ep = ucs_list_extract_head(&worker->pending_eps, struct psel_ep,
                                   pending_link);
        ep->pending_scheduled = 0;
        psel_ep_hold(ep); /* a callback may destroy it */
        count += psel_ep_progress_pending(ep, &budget);
        if (!ucs_list_is_empty(&ep->pending)) {
            psel_ep_schedule(ep); /* out of budget, or waits for wireup */
        }
        psel_ep_release(ep);
    }
    return count;
}

/* The slow path: a request that runs (or waits for) the protocol. @a elem,
 * the view's offset and @a status say how far an inline attempt went
 * (UCS_ERR_NO_RESOURCE: nothing sent; UCS_INPROGRESS: fragments remain, or
 * no attempt; an error: it failed). */
static psel_request_t *psel_send_request(psel_ep_h ep,
                                         const psel_proto_req_t *view,
                                         unsigned flags,
                                         const psel_select_elem_t *elem,
                                         ucs_status_t status,
                                         psel_request_cb_t cb, void *arg)
{
    psel_request_t *req;

    req = psel_request_alloc(ep->worker, PSEL_REQUEST_SEND, cb, arg);
    if (ucs_unlikely(req == NULL)) {
        return UCS_STATUS_PTR(UCS_ERR_NO_MEMORY);
    }
    req->ep              = ep;
    req->proto           = *view;
    req->proto.memh      = NULL;
    req->proto.rndv      = NULL;
    req->proto.req_id    = 0;
    req->proto.comp.func = NULL;
    req->elem            = elem;
    req->send_flags      = flags;
    req->cfg_index       = ep->cfg_index;
    ++ep->num_sends;

    if (ucs_unlikely(ep->status != UCS_OK)) {
        psel_request_complete(req, ep->status); /* the peer failed */
        return req;
    }
    if (UCS_STATUS_IS_ERR(status) && (status != UCS_ERR_NO_RESOURCE)) {
        psel_request_complete(req, status); /* the inline attempt failed */
        return req;
    }
    if (!ucs_list_is_empty(&ep->pending) || !psel_ep_is_ready(ep)) {
        /* keep the send order behind this endpoint's sends already
         * waiting, or wait for the wireup reply */
        psel_send_queue(req, 0);
        return req;
    }
    psel_send_progress(req);
    return req;
}

/* Count a message sent with @a elem of the selection of @a flags
 * (UCX_PSEL_PROTO_INFO=used only). */
static void psel_send_count(psel_ep_h ep, unsigned flags,
                            const psel_select_elem_t *elem, size_t length)
{
    if (ucs_unlikely(ep->worker->count_used)) {
        psel_worker_count_used(ep->worker,
                               psel_ep_send_selection(ep, flags)
                                       ->fast[PSEL_OP_TAG_SEND],
                               elem, length);
    }
}

/* The first send of a flavour: does its table start with egr/short? */
static void psel_ep_learn_short_path(psel_ep_h ep, unsigned flags,
                                     psel_ep_short_path_t *path)
{
    const psel_select_elem_t *first;
    int lane;

    first = psel_select_lookup_fast(psel_ep_send_selection(ep, flags),
                                    PSEL_OP_TAG_SEND, 0);
    if (first == NULL) {
        return; /* no table: the request fails, and the next send looks */
    }
    path->known = 1;
    lane        = psel_proto_egr_short_lane(first->proto, first->priv);
    if (lane >= 0) {
        /* egr/short is bounded by the transport's am_short; a row to
         * SIZE_MAX would wrap to 0, no fast path */
        path->limit = first->max_length + 1;
        path->elem  = first;
        path->lane  = lane;
    }
}

psel_request_t *psel_tag_send_nb(psel_ep_h ep, const void *buffer,
                                 size_t length, uint64_t tag,
                                 psel_request_cb_t cb, void *arg)
{
    return psel_tag_send_nbf(ep, buffer, length, tag, 0, cb, arg);
}

psel_request_t *psel_tag_send_nbf(psel_ep_h ep, const void *buffer,
                                  size_t length, uint64_t tag, unsigned flags,
                                  psel_request_cb_t cb, void *arg)
{
    const psel_select_elem_t *elem = NULL;
    ucs_status_t status            = UCS_INPROGRESS;
    psel_ep_short_path_t *path;
    psel_proto_req_t view;

    ++ep->worker->rx_slip.sends;
    /* what an inline protocol reads; psel_send_request() fills the rest */
    view.buffer = buffer;
    view.length = length;
    view.tag    = tag;
    view.msg_id = ++ep->next_msg_id;
    view.offset = 0;
    view.ep     = &ep->proto;

    /* as ucp_tag_send_nbx: a protocol whose first call keeps no pointer to
     * the request runs on this view, and a send it completes at once needs
     * no request at all */
    if (ucs_likely(ucs_list_is_empty(&ep->pending) && psel_ep_is_ready(ep) &&
                   (ep->status == UCS_OK))) {
        path = &ep->short_path[flags & PSEL_SEND_FLAG_STREAM];
        if (ucs_unlikely(!path->known)) {
            psel_ep_learn_short_path(ep, flags, path);
        }
        if (ucs_likely(length < path->limit)) {
            /* egr/short, the table's first row: no lookup, one UCT call */
            elem   = path->elem;
            psel_send_count(ep, flags, elem, length);
            status = psel_egr_short_send(ep->proto.uct_eps[path->lane], tag,
                                         buffer, length);
        } else {
            elem = psel_select_lookup_fast(psel_ep_send_selection(ep, flags),
                                           PSEL_OP_TAG_SEND, length);
            if ((elem == NULL) ||
                !(elem->proto->flags & PSEL_PROTO_FLAG_INLINE)) {
                /* the request looks it up and counts */
                return psel_send_request(ep, &view, flags, NULL, status, cb,
                                         arg);
            }
            view.priv = elem->priv;
            psel_send_count(ep, flags, elem, length);
            status    = elem->proto->progress(&view);
        }
        if (ucs_likely(status == UCS_OK)) {
            return NULL;
        }
        /* busy, more fragments, or failed: a request takes over */
        view.priv = elem->priv;
    }
    return psel_send_request(ep, &view, flags, elem, status, cb, arg);
}

static void psel_recv_completed(psel_tm_recv_t *recv)
{
    psel_request_t *req = ucs_container_of(recv, psel_request_t, recv);

    psel_request_complete(req, recv->status);
}

psel_request_t *psel_tag_recv_nb(psel_worker_h worker, void *buffer,
                                 size_t length, uint64_t tag, uint64_t mask,
                                 psel_tag_recv_cb_t cb, void *arg)
{
    psel_request_t *req;

    req = psel_request_alloc(worker, PSEL_REQUEST_RECV, NULL, arg);
    if (ucs_unlikely(req == NULL)) {
        return UCS_STATUS_PTR(UCS_ERR_NO_MEMORY);
    }
    req->recv_cb = cb;
    memset(&req->recv, 0, sizeof(req->recv));
    req->recv.tag      = tag;
    req->recv.tag_mask = mask;
    req->recv.buffer   = buffer;
    req->recv.length   = length;
    req->recv.complete = psel_recv_completed;
    psel_tm_post(&worker->tm, &req->recv);
    return req;
}

ucs_status_t psel_request_cancel(psel_request_t *req)
{
    if (!UCS_PTR_IS_PTR(req)) {
        return UCS_ERR_NO_ELEM; /* completed at once, or never started */
    }
    if (req->status != UCS_INPROGRESS) {
        return UCS_ERR_NO_ELEM;
    }
    if (req->type == PSEL_REQUEST_RECV) {
        return psel_tm_cancel(&req->worker->tm, &req->recv);
    }
    if (req->type != PSEL_REQUEST_SEND) {
        return UCS_ERR_BUSY;
    }
    if ((req->elem != NULL) && (req->elem->proto->cancel != NULL)) {
        return req->elem->proto->cancel(&req->proto);
    }
    if (req->queued && (psel_send_reset(req) == UCS_OK)) {
        /* nothing of it reached the peer */
        psel_request_complete(req, UCS_ERR_CANCELED);
        return UCS_OK;
    }
    return UCS_ERR_BUSY;
}
