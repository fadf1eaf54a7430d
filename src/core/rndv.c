/*
 * Rendezvous in core (see rndv.h): request ids, the callbacks the
 * protocols reach requests, endpoints and tag matching through
 * (ucp_proto_sel/proto_req.h), and the failure fan-out.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "core_int.h"

#include <ucp_proto_sel/proto_rndv.h>
#include <ucs/debug/log_def.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- ids ---- */

static ucs_status_t psel_rndv_map_add(khash_t(psel_rndv_reqs) *map,
                                      uint64_t id, void *value)
{
    khiter_t iter;
    int ret;

    iter = kh_put(psel_rndv_reqs, map, id, &ret);
    if (ret < 0) {
        return UCS_ERR_NO_MEMORY;
    }
    kh_val(map, iter) = value;
    return UCS_OK;
}

static void *psel_rndv_map_find(khash_t(psel_rndv_reqs) *map, uint64_t id)
{
    khiter_t iter = kh_get(psel_rndv_reqs, map, id);

    return (iter == kh_end(map)) ? NULL : kh_val(map, iter);
}

static void psel_rndv_map_del(khash_t(psel_rndv_reqs) *map, uint64_t id)
{
    khiter_t iter = kh_get(psel_rndv_reqs, map, id);

    if (iter != kh_end(map)) {
        kh_del(psel_rndv_reqs, map, iter);
    }
}

static psel_worker_h psel_rndv_worker(psel_proto_worker_t *proto)
{
    return ucs_container_of(proto, struct psel_worker, proto);
}

static psel_request_t *psel_rndv_request(psel_proto_req_t *proto)
{
    return ucs_container_of(proto, psel_request_t, proto);
}

/* ---- sends ---- */

static ucs_status_t psel_rndv_send_track(psel_proto_req_t *proto)
{
    psel_request_t *req  = psel_rndv_request(proto);
    psel_ep_h ep         = req->ep;
    psel_worker_h worker = ep->worker;
    uint64_t id          = ++worker->rndv.next_id;
    ucs_status_t status;

    /* the receiver answers on its endpoint to this one: make sure it knows
     * our id (an endpoint with only iface lanes sent no wireup REQUEST;
     * one that heard from the peer, or has ep-to-ep lanes, did) */
    if (!ep->rndv_announced && (ep->remote_id == 0) &&
        (ep->p2p_lanes == 0)) {
        status = psel_wireup_announce(ep);
        if (status != UCS_OK) {
            return status;
        }
        ep->rndv_announced = 1;
    }

    status = psel_rndv_map_add(&worker->rndv.sends, id, req);
    if (status == UCS_OK) {
        proto->req_id = id;
    }
    return status;
}

void psel_rndv_untrack_send(psel_worker_h worker, uint64_t id)
{
    psel_rndv_map_del(&worker->rndv.sends, id);
}

static psel_proto_req_t *psel_rndv_send_find(psel_proto_worker_t *proto,
                                             uint64_t id)
{
    psel_request_t *req = psel_rndv_map_find(&psel_rndv_worker(proto)->rndv.sends,
                                             id);

    return (req == NULL) ? NULL : &req->proto;
}

static void psel_rndv_send_complete(psel_proto_req_t *proto,
                                    ucs_status_t status)
{
    psel_request_complete(psel_rndv_request(proto), status);
}

/* ---- receives ---- */

static ucs_status_t psel_rndv_rreq_track(psel_proto_worker_t *proto,
                                         psel_proto_rreq_t *rreq)
{
    psel_worker_h worker = psel_rndv_worker(proto);
    uint64_t id          = ++worker->rndv.next_id;
    ucs_status_t status;

    status = psel_rndv_map_add(&worker->rndv.recvs, id, rreq);
    if (status == UCS_OK) {
        rreq->id = id;
    }
    return status;
}

static void psel_rndv_rreq_untrack(psel_proto_worker_t *proto,
                                   psel_proto_rreq_t *rreq)
{
    psel_rndv_map_del(&psel_rndv_worker(proto)->rndv.recvs, rreq->id);
}

static psel_proto_rreq_t *psel_rndv_rreq_find(psel_proto_worker_t *proto,
                                              uint64_t id)
{
    return psel_rndv_map_find(&psel_rndv_worker(proto)->rndv.recvs, id);
}

static psel_proto_rreq_t *psel_rndv_rreq_find_msg(psel_proto_worker_t *proto,
                                                  uint64_t sender_id,
                                                  uint64_t msg_id)
{
    psel_proto_rreq_t *rreq;
    void *value;

    kh_foreach_value(&psel_rndv_worker(proto)->rndv.recvs, value, {
        rreq = value;
        if (rreq->matched && (rreq->sender_id == sender_id) &&
            (rreq->msg_id == msg_id)) {
            return rreq;
        }
    });
    return NULL;
}

/* ---- endpoints back to senders ---- */

void psel_rndv_set_remote_id(psel_ep_h ep, uint64_t remote_id)
{
    psel_rndv_ep_remove(ep);
    ep->remote_id = remote_id;
    if ((remote_id != 0) &&
        (psel_rndv_map_add(&ep->worker->rndv.eps, remote_id, ep) != UCS_OK)) {
        ucs_error("endpoint %lx: no memory to index peer endpoint %lx; "
                  "rendezvous from it cannot be answered", ep->id, remote_id);
    }
}

void psel_rndv_ep_remove(psel_ep_h ep)
{
    if ((ep->remote_id != 0) &&
        (psel_rndv_map_find(&ep->worker->rndv.eps, ep->remote_id) == ep)) {
        psel_rndv_map_del(&ep->worker->rndv.eps, ep->remote_id);
    }
}

static ucs_status_t psel_rndv_reply_ep(psel_proto_worker_t *proto,
                                       uint64_t sender_id,
                                       psel_proto_ep_t **ep_p)
{
    psel_worker_h worker = psel_rndv_worker(proto);
    psel_ep_h ep         = psel_rndv_map_find(&worker->rndv.eps, sender_id);

    if (ep != NULL) {
        if (ep->status != UCS_OK) {
            return ep->status; /* failed: nothing will be answered */
        }
        if (!psel_ep_is_ready(ep)) {
            return UCS_ERR_NO_RESOURCE; /* its lanes wait for wireup */
        }
        *ep_p = &ep->proto;
        return UCS_OK;
    }
    if (!ucs_list_is_empty(&worker->wireup_in) || (worker->wireup_out > 0)) {
        return UCS_ERR_NO_RESOURCE; /* wireup under way */
    }
    return UCS_ERR_NO_ELEM;
}

/* A message of the protocol's could not go to @a proto_ep's peer: its lane
 * is broken, as if UCT had said so. */
static void psel_rndv_ep_failed(const psel_proto_ep_t *proto_ep,
                                ucs_status_t status, const char *what)
{
    psel_ep_h ep = ucs_container_of(proto_ep, struct psel_ep, proto);
    char why[64];

    snprintf(why, sizeof(why), "sending a rendezvous %s failed", what);
    psel_ep_set_failed(ep, status, why);
}

/* ---- tag matching ---- */

static ucs_status_t psel_rndv_rts_arrived(psel_proto_worker_t *proto,
                                          uint64_t sender_id, uint64_t msg_id,
                                          uint64_t tag, size_t length,
                                          const void *desc, size_t desc_len)
{
    return psel_tm_rndv_first(&psel_rndv_worker(proto)->tm, sender_id, msg_id,
                              tag, length, desc, desc_len);
}

static ucs_status_t psel_rndv_rts_withdraw(psel_proto_worker_t *proto,
                                           uint64_t sender_id, uint64_t msg_id)
{
    return psel_tm_rndv_withdraw(&psel_rndv_worker(proto)->tm, sender_id,
                                 msg_id);
}

static void psel_rndv_recv_complete(void *recv, ucs_status_t status)
{
    psel_tm_rndv_complete(recv, status);
}

/* The tag matcher matched an RTS to a receive: hand both to the protocol. */
static void psel_rndv_tm_matched(void *arg, psel_tm_recv_t *recv,
                                 const void *desc, size_t desc_len)
{
    psel_worker_h worker = arg;

    psel_rndv_matched(&worker->proto, recv, recv->buffer, recv->info.length,
                      recv->status != UCS_OK, desc, desc_len);
}

/* ---- life cycle and failure ---- */

void psel_rndv_init(psel_worker_h worker)
{
    psel_proto_worker_t *proto = &worker->proto;

    kh_init_inplace(psel_rndv_reqs, &worker->rndv.sends);
    kh_init_inplace(psel_rndv_reqs, &worker->rndv.recvs);
    kh_init_inplace(psel_rndv_reqs, &worker->rndv.eps);
    worker->rndv.next_id    = 0;
    worker->tm.rndv_matched = psel_rndv_tm_matched;
    worker->tm.rndv_arg     = worker;

    psel_rndv_worker_init(proto);
    proto->send_complete = psel_rndv_send_complete;
    proto->send_resume   = psel_send_resume;
    proto->send_track    = psel_rndv_send_track;
    proto->send_find     = psel_rndv_send_find;
    proto->rreq_track    = psel_rndv_rreq_track;
    proto->rreq_untrack  = psel_rndv_rreq_untrack;
    proto->rreq_find     = psel_rndv_rreq_find;
    proto->rreq_find_msg = psel_rndv_rreq_find_msg;
    proto->reply_ep      = psel_rndv_reply_ep;
    proto->ep_failed     = psel_rndv_ep_failed;
    proto->rts_arrived   = psel_rndv_rts_arrived;
    proto->rts_withdraw  = psel_rndv_rts_withdraw;
    proto->recv_complete = psel_rndv_recv_complete;
}

/* Does the receive answer @a ep's peer? */
static int psel_rndv_rreq_of_ep(const psel_proto_rreq_t *rreq, psel_ep_h ep)
{
    return (rreq->ep == &ep->proto) ||
           ((rreq->ep == NULL) && (ep->remote_id != 0) &&
            (rreq->sender_id == ep->remote_id));
}

/* Abort every entry of @a map that belongs to @a ep (NULL: all). The ids
 * are collected first: an abort that completes at once deletes its entry;
 * one with operations in flight stays until they complete. */
static void psel_rndv_abort_all(khash_t(psel_rndv_reqs) *map, int sends,
                                psel_ep_h ep, ucs_status_t status,
                                unsigned flags)
{
    size_t n = 0, i;
    psel_proto_rreq_t *rreq;
    psel_request_t *req;
    uint64_t *ids, id;
    void *value;

    if (kh_size(map) == 0) {
        return;
    }
    ids = malloc(kh_size(map) * sizeof(*ids));
    if (ids == NULL) {
        ucs_error("rendezvous: no memory to fail %u requests",
                  (unsigned)kh_size(map));
        return;
    }
    kh_foreach(map, id, value, {
        if ((ep == NULL) ||
            (sends ? (((psel_request_t*)value)->ep == ep) :
                     psel_rndv_rreq_of_ep(value, ep))) {
            ids[n++] = id;
        }
    });
    for (i = 0; i < n; ++i) {
        value = psel_rndv_map_find(map, ids[i]);
        if (value == NULL) {
            continue; /* ended with another */
        }
        if (sends) {
            req = value;
            psel_send_abort(req, status, flags);
        } else {
            rreq = value;
            rreq->abort(rreq, status, flags);
        }
    }
    free(ids);
}

void psel_rndv_ep_fail(psel_ep_h ep, ucs_status_t status, unsigned flags)
{
    psel_rndv_abort_all(&ep->worker->rndv.sends, 1, ep, status, flags);
    psel_rndv_abort_all(&ep->worker->rndv.recvs, 0, ep, status, flags);
}

void psel_rndv_cleanup(psel_worker_h worker)
{
    /* after the endpoints: no completion can come any more */
    psel_rndv_abort_all(&worker->rndv.sends, 1, NULL, UCS_ERR_CANCELED,
                        PSEL_PROTO_ABORT_FORCE);
    psel_rndv_abort_all(&worker->rndv.recvs, 0, NULL, UCS_ERR_CANCELED,
                        PSEL_PROTO_ABORT_FORCE);
    kh_destroy_inplace(psel_rndv_reqs, &worker->rndv.sends);
    kh_destroy_inplace(psel_rndv_reqs, &worker->rndv.recvs);
    kh_destroy_inplace(psel_rndv_reqs, &worker->rndv.eps);
}
