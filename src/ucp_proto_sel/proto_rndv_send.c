/*
 * Rendezvous, the sender (proto_rndv.h): a state machine over
 * psel_proto_rndv_t shared by every mode, the replies that move it (RTR,
 * ATS, CANCEL-ACK), and its abort, reset and cancel. What differs between
 * modes is the mode's psel_rndv_mode_ops_t (proto_rndv_<mode>.c).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_common.h"
#include "proto_rndv_int.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void (*psel_rndv_event_hook)(psel_rndv_event_t event) = NULL;

/* Release what the send holds: the peer's rkeys and our registrations. */
static void psel_rndv_release(psel_proto_req_t *req)
{
    psel_proto_rndv_t *rndv = req->rndv;
    unsigned lane;

    for (lane = 0; lane < PSEL_MAX_LANES; ++lane) {
        if (rndv->rkey_map & UCS_BIT(lane)) {
            psel_rndv_rkey_release(req->ep->lane_info[lane].iface->component,
                                   &rndv->rkeys[lane]);
        }
        if (rndv->memh_owner & UCS_BIT(lane)) {
            uct_md_mem_dereg(req->ep->lane_info[lane].iface->md,
                             rndv->memh[lane]);
        }
    }
    free(rndv);
    req->rndv = NULL;
}

/* Register the buffer on the memory domains of the data lanes that need it,
 * once per memory domain. */
static ucs_status_t psel_rndv_register(psel_proto_req_t *req,
                                       psel_proto_rndv_t *rndv,
                                       unsigned access)
{
    const psel_proto_lanes_priv_t *priv = psel_rndv_priv(req);
    const psel_proto_lane_info_t *info  = req->ep->lane_info;
    ucs_status_t status;
    unsigned i, j;
    uint8_t lane;

    for (i = 0; i < priv->num_lanes; ++i) {
        lane = priv->lanes[i];
        if (!info[lane].iface->mem_reg || (req->length == 0)) {
            continue;
        }
        for (j = 0; j < i; ++j) {
            if ((info[priv->lanes[j]].iface->md == info[lane].iface->md) &&
                (rndv->memh[priv->lanes[j]] != NULL)) {
                rndv->memh[lane] = rndv->memh[priv->lanes[j]];
                break;
            }
        }
        if (rndv->memh[lane] != NULL) {
            continue;
        }
        status = uct_md_mem_reg(info[lane].iface->md, (void*)req->buffer,
                                req->length, access, &rndv->memh[lane]);
        if (status != UCS_OK) {
            ucs_error("rendezvous: registering %zu bytes for lane %u failed: "
                      "%s", req->length, lane, ucs_status_string(status));
            return status;
        }
        rndv->memh_owner |= UCS_BIT(lane);
    }
    return UCS_OK;
}

static size_t psel_rndv_rts_size(const psel_proto_req_t *req,
                                 const psel_rndv_mode_ops_t *ops)
{
    const psel_proto_lanes_priv_t *priv = psel_rndv_priv(req);
    size_t size = sizeof(psel_rndv_rts_hdr_t);
    unsigned i;

    if (ops->rts_lanes == PSEL_RNDV_RTS_NO_LANES) {
        return size;
    }
    for (i = 0; i < priv->num_lanes; ++i) {
        size += sizeof(psel_rndv_lane_rec_t);
        if (ops->rts_lanes == PSEL_RNDV_RTS_OUR_ENTRIES) {
            size += req->ep->lane_info[priv->lanes[i]].iface->rkey_size;
        }
    }
    return size;
}

/* The RTS: records of our entries with their rkeys (the receiver reads),
 * or of the peer's entries we will write to. */
static ucs_status_t psel_rndv_rts_pack(psel_proto_req_t *req,
                                       psel_proto_rndv_t *rndv)
{
    const psel_proto_lanes_priv_t *priv = psel_rndv_priv(req);
    const psel_rndv_mode_ops_t *ops     = rndv->ops;
    int ours     = (ops->rts_lanes == PSEL_RNDV_RTS_OUR_ENTRIES);
    uint8_t *p   = rndv->rts;
    const psel_proto_lane_info_t *info;
    psel_rndv_lane_rec_t rec;
    psel_rndv_rts_hdr_t hdr;
    ucs_status_t status;
    unsigned i;

    memset(&hdr, 0, sizeof(hdr));
    hdr.mode      = ops->mode;
    hdr.num_lanes = (ops->rts_lanes == PSEL_RNDV_RTS_NO_LANES) ? 0 :
                    priv->num_lanes;
    hdr.tag       = req->tag;
    hdr.length    = req->length;
    hdr.sender_id = req->ep->id;
    hdr.msg_id    = req->msg_id;
    hdr.sreq_id   = req->req_id;
    hdr.address   = ours ? (uintptr_t)req->buffer : 0;
    psel_rndv_rts_hdr_pack(p, &hdr);
    p += sizeof(hdr);

    for (i = 0; i < hdr.num_lanes; ++i) {
        info = &req->ep->lane_info[priv->lanes[i]];
        memset(&rec, 0, sizeof(rec));
        rec.weight    = ucs_max(1, (unsigned)(priv->shares[i] * UINT16_MAX));
        rec.entry     = ours ? info->local_entry : info->remote_entry;
        rec.rkey_size = (ours && (rndv->memh[priv->lanes[i]] != NULL)) ?
                        info->iface->rkey_size : 0;
        psel_rndv_lane_rec_pack(p, &rec);
        p += sizeof(rec);
        if (rec.rkey_size > 0) {
            status = uct_md_mkey_pack(info->iface->md,
                                      rndv->memh[priv->lanes[i]], p);
            if (status != UCS_OK) {
                ucs_error("rendezvous: packing the rkey of lane %u failed: "
                          "%s", priv->lanes[i], ucs_status_string(status));
                return status;
            }
            p += rec.rkey_size;
        }
    }
    rndv->rts_length = p - rndv->rts;
    return UCS_OK;
}

static void psel_rndv_op_completed(uct_completion_t *comp)
{
    psel_proto_req_t *req = ucs_container_of(comp, psel_proto_req_t, comp);

    req->ep->worker->send_resume(req);
}

/* First call: state, registration, an id for replies, the RTS. */
static ucs_status_t psel_rndv_start(psel_proto_req_t *req,
                                    const psel_rndv_mode_ops_t *ops)
{
    const psel_proto_lanes_priv_t *priv = psel_rndv_priv(req);
    const uct_iface_attr_t *ctrl_attr   =
            req->ep->lane_info[priv->ctrl_lane].iface->attr;
    size_t max_rts   = ctrl_attr->cap.am.max_bcopy;
    size_t rts_size  = psel_rndv_rts_size(req, ops);
    psel_proto_rndv_t *rndv;
    unsigned access;
    ucs_status_t status;

    if (rts_size > max_rts) {
        ucs_error("rendezvous: a %zu-byte RTS does not fit the %zu bytes of "
                  "a bcopy AM on lane %u", rts_size, max_rts, priv->ctrl_lane);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    rndv = calloc(1, sizeof(*rndv) + rts_size);
    if (rndv == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    rndv->ops    = ops;
    rndv->stage  = PSEL_RNDV_STAGE_RTS;
    rndv->status = UCS_OK;
    rndv->rts    = (uint8_t*)(rndv + 1);
    req->rndv    = rndv;

    access = ops->send_access(req);
    status = (access != 0) ? psel_rndv_register(req, rndv, access) : UCS_OK;
    if (status == UCS_OK) {
        status = req->ep->worker->send_track(req);
    }
    if (status == UCS_OK) {
        status = psel_rndv_rts_pack(req, rndv);
    }
    if (status != UCS_OK) {
        psel_rndv_release(req);
        return status;
    }

    req->comp.func   = psel_rndv_op_completed;
    req->comp.count  = 0;
    req->comp.status = UCS_OK;
    /* nothing more to post until the receiver answers */
    req->offset      = req->length;
    return UCS_OK;
}

static size_t psel_rndv_rts_copy(void *dest, void *arg)
{
    psel_proto_req_t *req   = arg;
    psel_proto_rndv_t *rndv = req->rndv;

    memcpy(dest, rndv->rts, rndv->rts_length);
    return rndv->rts_length;
}

static uct_ep_h psel_rndv_ctrl_ep(const psel_proto_req_t *req)
{
    return req->ep->uct_eps[psel_rndv_priv(req)->ctrl_lane];
}

/* RTR arrived: split the data over the protocol's lanes. */
static ucs_status_t psel_rndv_data_init(psel_proto_req_t *req)
{
    const psel_proto_lanes_priv_t *priv = psel_rndv_priv(req);
    psel_proto_rndv_t *rndv             = req->rndv;
    psel_proto_xfer_op_t op             = rndv->ops->send_xfer_op(req);
    psel_proto_split_lane_t lanes[PSEL_MAX_LANES];
    unsigned i;

    for (i = 0; i < priv->num_lanes; ++i) {
        if (rndv->ops->rtr_rkeys &&
            !(rndv->rkey_map & UCS_BIT(priv->lanes[i]))) {
            ucs_error("rendezvous %s: the receiver sent no rkey for lane %u "
                      "(its address entry %u)", rndv->ops->name,
                      priv->lanes[i],
                      req->ep->lane_info[priv->lanes[i]].remote_entry);
            return UCS_ERR_UNREACHABLE;
        }
        psel_proto_xfer_lane(req->ep->lane_info[priv->lanes[i]].iface->attr,
                             op, priv->lanes[i], priv->shares[i], &lanes[i]);
    }
    psel_proto_xfer_init(&rndv->xfer, lanes, priv->num_lanes, req->length,
                         PSEL_RNDV_MIN_CHUNK);
    return UCS_OK;
}

/* Post fragments round robin over the lanes until all are posted or a lane
 * is busy. */
static ucs_status_t psel_rndv_post_data(psel_proto_req_t *req)
{
    psel_proto_rndv_t *rndv = req->rndv;
    size_t offset, length;
    ucs_status_t status;
    unsigned index;

    while (psel_proto_xfer_next(&rndv->xfer, &index, &offset, &length)) {
        ++req->comp.count;
        status = rndv->ops->send_post(req, rndv->xfer.lanes[index], offset,
                                      length);
        if (status != UCS_INPROGRESS) {
            --req->comp.count;
            if (UCS_STATUS_IS_ERR(status)) {
                return status;
            }
        }
        psel_proto_xfer_posted(&rndv->xfer, index, length);
        PSEL_RNDV_EVENT(PSEL_RNDV_EVENT_DATA_POSTED);
    }
    return UCS_OK;
}

/* Flush every data lane, so the data landed before the FIN. */
static ucs_status_t psel_rndv_flush(psel_proto_req_t *req)
{
    psel_proto_rndv_t *rndv = req->rndv;
    ucs_status_t status;

    for (; rndv->flush_next < rndv->xfer.num_lanes; ++rndv->flush_next) {
        ++req->comp.count;
        status = uct_ep_flush(req->ep->uct_eps[rndv->xfer.lanes[rndv->flush_next]],
                              UCT_FLUSH_FLAG_LOCAL, &req->comp);
        if (status != UCS_INPROGRESS) {
            --req->comp.count;
            if (UCS_STATUS_IS_ERR(status)) {
                return status;
            }
        }
    }
    return UCS_OK;
}

static size_t psel_rndv_cancel_copy(void *dest, void *arg)
{
    const psel_proto_req_t *req = arg;

    psel_rndv_cancel_pack(dest, req->ep->id, req->msg_id, req->req_id);
    return sizeof(psel_rndv_cancel_hdr_t);
}

/* On the lane of the RTS, so it arrives after it. */
static ucs_status_t psel_rndv_send_cancel_msg(psel_proto_req_t *req)
{
    ssize_t packed;

    packed = uct_ep_am_bcopy(psel_rndv_ctrl_ep(req), PSEL_AM_ID_RNDV_CANCEL,
                             psel_rndv_cancel_copy, req, 0);
    return (packed < 0) ? (ucs_status_t)packed : UCS_OK;
}

/* Record a failure; the send ends after its operations in flight, telling
 * the receiver (FIN) if it already answered. */
static void psel_rndv_fail(psel_proto_rndv_t *rndv, ucs_status_t status)
{
    if (rndv->status == UCS_OK) {
        rndv->status = status;
    }
    rndv->stage = PSEL_RNDV_STAGE_DRAIN;
}

/* Keep the first error of the send: its own, else the completions'. */
static void psel_rndv_take_comp_status(psel_proto_req_t *req)
{
    if ((req->rndv->status == UCS_OK) && (req->comp.status != UCS_OK)) {
        req->rndv->status = req->comp.status;
    }
}

ucs_status_t psel_rndv_send_progress(psel_proto_req_t *req)
{
    psel_proto_rndv_t *rndv;
    ucs_status_t status;
    ssize_t packed;
    unsigned steps;

    if (req->rndv == NULL) {
        status = psel_rndv_start(req, psel_rndv_priv(req)->rndv);
        if (status != UCS_OK) {
            return status;
        }
    }
    rndv = req->rndv;

    /* every stage either moves forward or returns: at most one pass */
    for (steps = 0; steps <= PSEL_RNDV_STAGE_DONE; ++steps) {
        switch (rndv->stage) {
        case PSEL_RNDV_STAGE_START:
        case PSEL_RNDV_STAGE_RTS:
            packed = uct_ep_am_bcopy(psel_rndv_ctrl_ep(req),
                                     PSEL_AM_ID_RNDV_RTS, psel_rndv_rts_copy,
                                     req, 0);
            if (packed == UCS_ERR_NO_RESOURCE) {
                return UCS_ERR_NO_RESOURCE;
            } else if (packed < 0) {
                rndv->status = (ucs_status_t)packed;
                rndv->stage  = PSEL_RNDV_STAGE_DONE;
                req->ep->worker->ep_failed(req->ep, rndv->status, "RTS");
                break;
            }
            rndv->stage = PSEL_RNDV_STAGE_WAIT;
            PSEL_RNDV_EVENT(PSEL_RNDV_EVENT_RTS_SENT);
            return UCS_INPROGRESS;
        case PSEL_RNDV_STAGE_WAIT:
            if (rndv->cancel == PSEL_RNDV_CANCEL_WANTED) {
                status = psel_rndv_send_cancel_msg(req);
                if (status == UCS_ERR_NO_RESOURCE) {
                    return status;
                } else if (status != UCS_OK) {
                    /* the lane failed: the endpoint's failure ends the
                     * send */
                    ucs_error("rendezvous: sending the CANCEL failed: %s",
                              ucs_status_string(status));
                    rndv->cancel = PSEL_RNDV_CANCEL_NONE;
                    req->ep->worker->ep_failed(req->ep, status, "CANCEL");
                } else {
                    rndv->cancel = PSEL_RNDV_CANCEL_SENT;
                }
            }
            return UCS_INPROGRESS; /* for RTR, ATS or CANCEL-ACK */
        case PSEL_RNDV_STAGE_DATA:
            if (rndv->xfer.num_lanes == 0) {
                status = psel_rndv_data_init(req);
                if (status != UCS_OK) {
                    psel_rndv_fail(rndv, status);
                    break;
                }
            }
            status = psel_rndv_post_data(req);
            if (status == UCS_ERR_NO_RESOURCE) {
                return status;
            } else if (status != UCS_OK) {
                psel_rndv_fail(rndv, status);
                break;
            }
            rndv->stage = PSEL_RNDV_STAGE_DRAIN;
            break;
        case PSEL_RNDV_STAGE_DRAIN:
            if (req->comp.count > 0) {
                return UCS_INPROGRESS; /* the last completion resumes */
            }
            psel_rndv_take_comp_status(req);
            if (rndv->status != UCS_OK) {
                /* the receiver waits for data: tell it */
                rndv->stage = PSEL_RNDV_STAGE_FIN;
            } else {
                rndv->stage = rndv->ops->fin ? PSEL_RNDV_STAGE_FLUSH :
                                               PSEL_RNDV_STAGE_DONE;
            }
            break;
        case PSEL_RNDV_STAGE_FLUSH:
            status = psel_rndv_flush(req);
            if (status == UCS_ERR_NO_RESOURCE) {
                return status;
            } else if (status != UCS_OK) {
                rndv->status = status;
            }
            rndv->stage = PSEL_RNDV_STAGE_FIN;
            break;
        case PSEL_RNDV_STAGE_FIN:
            if (req->comp.count > 0) {
                return UCS_INPROGRESS; /* flushes in flight */
            }
            psel_rndv_take_comp_status(req);
            PSEL_RNDV_EVENT(PSEL_RNDV_EVENT_FIN);
            status = psel_rndv_send_ack(psel_rndv_ctrl_ep(req),
                                        PSEL_AM_ID_RNDV_FIN, rndv->status,
                                        rndv->remote_req_id);
            if (status == UCS_ERR_NO_RESOURCE) {
                return status;
            } else if (status != UCS_OK) {
                /* the receiver will not hear: the endpoint fails */
                if (rndv->status == UCS_OK) {
                    rndv->status = status;
                }
                req->ep->worker->ep_failed(req->ep, status, "FIN");
            }
            rndv->stage = PSEL_RNDV_STAGE_DONE;
            break;
        case PSEL_RNDV_STAGE_DONE:
            if ((req->comp.count > 0) ||
                (rndv->cancel == PSEL_RNDV_CANCEL_SENT)) {
                /* aborted with operations in flight, or the CANCEL-ACK
                 * (which names this request) is still to come */
                return UCS_INPROGRESS;
            }
            status = rndv->status;
            psel_rndv_release(req);
            return status;
        }
    }
    /* not reached: DONE always returns */
    assert(0);
    return UCS_ERR_IO_ERROR;
}

void psel_rndv_send_abort(psel_proto_req_t *req, ucs_status_t status,
                          unsigned flags)
{
    psel_proto_rndv_t *rndv = req->rndv;

    if (rndv != NULL) {
        if (flags & PSEL_PROTO_ABORT_FORCE) {
            req->comp.count = 0; /* the UCT endpoints are gone */
        }
        rndv->status = status;
        rndv->stage  = PSEL_RNDV_STAGE_DONE;
        rndv->cancel = PSEL_RNDV_CANCEL_NONE; /* no CANCEL-ACK awaited */
        if (req->comp.count > 0) {
            return; /* the last completion resumes it: DONE completes */
        }
        psel_rndv_release(req);
    }
    req->ep->worker->send_complete(req, status);
}

ucs_status_t psel_rndv_send_reset(psel_proto_req_t *req)
{
    if (req->rndv == NULL) {
        return UCS_OK;
    }
    if (req->rndv->stage > PSEL_RNDV_STAGE_RTS) {
        return UCS_ERR_BUSY; /* the receiver knows of it */
    }
    psel_rndv_release(req);
    req->offset    = 0;
    req->comp.func = NULL;
    return UCS_OK;
}

ucs_status_t psel_rndv_send_cancel(psel_proto_req_t *req)
{
    psel_proto_rndv_t *rndv = req->rndv;

    if ((rndv == NULL) || (rndv->stage <= PSEL_RNDV_STAGE_RTS)) {
        /* the RTS waits for the transport: nothing reached the receiver */
        psel_rndv_send_abort(req, UCS_ERR_CANCELED, 0);
        return UCS_OK;
    }
    if (rndv->stage != PSEL_RNDV_STAGE_WAIT) {
        return UCS_ERR_BUSY; /* answered: the data moves */
    }
    if (rndv->cancel == PSEL_RNDV_CANCEL_REFUSED) {
        return UCS_ERR_BUSY;
    }
    if (rndv->cancel == PSEL_RNDV_CANCEL_NONE) {
        rndv->cancel = PSEL_RNDV_CANCEL_WANTED; /* sent from progress */
        req->ep->worker->send_resume(req);
    }
    return UCS_INPROGRESS;
}

/* ---- replies (psel_rndv_am_input found the request, waiting) ---- */

ucs_status_t psel_rndv_send_on_rtr(psel_proto_worker_t *worker,
                                   void *target, const psel_rndv_msg_t *msg,
                                   const void *data, size_t length)
{
    psel_proto_req_t *req   = target;
    psel_proto_rndv_t *rndv = req->rndv;
    const psel_rndv_rtr_hdr_t *hdr = &msg->rtr.hdr;
    ucs_status_t status;

    if ((hdr->mode != rndv->ops->mode) || (hdr->length != req->length)) {
        ucs_error("rendezvous RTR: rndv/%s of %" PRIu64 " bytes for request "
                  "%" PRIx64 ", a %zu-byte rndv/%s; dropped",
                  psel_rndv_mode_name(hdr->mode), hdr->length, hdr->sreq_id,
                  req->length, rndv->ops->name);
        return UCS_ERR_INVALID_PARAM;
    }
    /* the mode checks every record before it keeps anything of one */
    status = rndv->ops->send_rtr(req, &msg->rtr);
    rndv->remote_req_id  = hdr->rreq_id;
    rndv->remote_address = hdr->address;
    if (status == UCS_OK) {
        rndv->stage = PSEL_RNDV_STAGE_DATA;
    } else {
        /* a bad record (or an rkey that does not unpack): the send fails,
         * and the FIN tells the receiver, which waits for it */
        psel_rndv_fail(rndv, status);
    }
    worker->send_resume(req);
    return status;
}

ucs_status_t psel_rndv_send_on_ats(psel_proto_worker_t *worker,
                                   void *target, const psel_rndv_msg_t *msg,
                                   const void *data, size_t length)
{
    psel_proto_req_t *req = target;

    req->rndv->status = (ucs_status_t)msg->ack.status;
    req->rndv->stage  = PSEL_RNDV_STAGE_DONE;
    worker->send_resume(req);
    return UCS_OK;
}

/* OK (or NO_ELEM while nothing else answered the RTS: nothing will) ends
 * the send with UCS_ERR_CANCELED; otherwise the transfer goes on, and a
 * send that ended meanwhile waited for this answer and completes now. */
ucs_status_t psel_rndv_send_on_cancel_ack(psel_proto_worker_t *worker,
                                          void *target,
                                          const psel_rndv_msg_t *msg,
                                          const void *data, size_t length)
{
    psel_proto_req_t *req   = target;
    psel_proto_rndv_t *rndv = req->rndv;

    if ((msg->ack.status == UCS_OK) && (rndv->stage != PSEL_RNDV_STAGE_WAIT)) {
        /* the receiver answered the RTS, then withdrew it: a broken peer */
        ucs_error("rendezvous CANCEL-ACK: request %" PRIx64 " withdrawn "
                  "after an answer (stage %d); the transfer goes on",
                  msg->ack.req_id, (int)rndv->stage);
    }
    if ((rndv->stage == PSEL_RNDV_STAGE_WAIT) &&
        (msg->ack.status != UCS_ERR_BUSY)) {
        rndv->cancel = PSEL_RNDV_CANCEL_NONE;
        rndv->status = UCS_ERR_CANCELED;
        rndv->stage  = PSEL_RNDV_STAGE_DONE;
    } else {
        rndv->cancel = PSEL_RNDV_CANCEL_REFUSED;
    }
    worker->send_resume(req);
    return UCS_OK;
}
