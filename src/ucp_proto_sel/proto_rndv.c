/*
 * Rendezvous protocols: the sender announces the message (RTS) and the data
 * moves once the receiver has matched it.
 *  rndv/am   data by active messages after RTR (zcopy where the lanes have
 *            it, else bcopy);
 *  rndv/get  the receiver reads with get_zcopy, then sends ATS;
 *  rndv/put  the sender writes with put_zcopy after RTR, then sends FIN.
 *
 * The sender's side runs here as a state machine over psel_proto_rndv_t
 * (proto_rndv.h): the data path calls progress again whenever a reply or a
 * completion arrives. The receiver's side is in src/core/rndv.c.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_common.h"
#include "proto_rndv.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <assert.h>
#include <stdlib.h>
#include <string.h>

static ucs_status_t psel_rndv_am_init(const psel_proto_init_params_t *params,
                                      psel_proto_caps_t *caps)
{
    ucs_status_t status;

    /* zero-copy where the lanes have it, else bcopy */
    status = psel_proto_rndv_init(params, PSEL_LANE_ROLE_AM_BW,
                                  PSEL_LANE_CAP_AM_ZCOPY, 0, 1, 1, caps);
    if (status != UCS_ERR_UNSUPPORTED) {
        return status;
    }
    memset(caps, 0, sizeof(*caps));
    caps->cfg_thresh = PSEL_THRESH_AUTO;
    return psel_proto_rndv_init(params, PSEL_LANE_ROLE_AM_BW,
                                PSEL_LANE_CAP_AM_BCOPY, 0, 0, 2, caps);
}

static ucs_status_t psel_rndv_get_init(const psel_proto_init_params_t *params,
                                       psel_proto_caps_t *caps)
{
    return psel_proto_rndv_init(params, PSEL_LANE_ROLE_RMA_BW,
                                PSEL_LANE_CAP_GET_ZCOPY, 1, 1, 0, caps);
}

static ucs_status_t psel_rndv_put_init(const psel_proto_init_params_t *params,
                                       psel_proto_caps_t *caps)
{
    return psel_proto_rndv_init(params, PSEL_LANE_ROLE_RMA_BW,
                                PSEL_LANE_CAP_PUT_ZCOPY, 1, 1, 0, caps);
}


/* ---- the sender's data path ---- */

static const psel_proto_lanes_priv_t *psel_rndv_priv(const psel_proto_req_t *req)
{
    return (const psel_proto_lanes_priv_t*)req->priv;
}

static int psel_rndv_is_zcopy(const psel_proto_req_t *req,
                              psel_rndv_mode_t mode)
{
    return (mode != PSEL_RNDV_MODE_AM) || psel_rndv_priv(req)->zcopy;
}

/* Release what the send holds: the peer's rkeys and our registrations. */
static void psel_rndv_release(psel_proto_req_t *req)
{
    psel_proto_rndv_t *rndv = req->rndv;
    unsigned lane;

    for (lane = 0; lane < PSEL_MAX_LANES; ++lane) {
        if (rndv->rkey_map & UCS_BIT(lane)) {
            uct_rkey_release(req->lane_info[lane].component,
                             &rndv->rkeys[lane]);
        }
        if (rndv->memh_owner & UCS_BIT(lane)) {
            uct_md_mem_dereg(req->mds[lane], rndv->memh[lane]);
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
    ucs_status_t status;
    unsigned i, j;
    uint8_t lane;

    for (i = 0; i < priv->num_lanes; ++i) {
        lane = priv->lanes[i];
        if (!req->lane_info[lane].mem_reg || (req->length == 0)) {
            continue;
        }
        for (j = 0; j < i; ++j) {
            if ((req->mds[priv->lanes[j]] == req->mds[lane]) &&
                (rndv->memh[priv->lanes[j]] != NULL)) {
                rndv->memh[lane] = rndv->memh[priv->lanes[j]];
                break;
            }
        }
        if (rndv->memh[lane] != NULL) {
            continue;
        }
        status = uct_md_mem_reg(req->mds[lane], (void*)req->buffer,
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
                                 psel_rndv_mode_t mode)
{
    const psel_proto_lanes_priv_t *priv = psel_rndv_priv(req);
    size_t size = sizeof(psel_rndv_rts_hdr_t);
    unsigned i;

    if (mode == PSEL_RNDV_MODE_AM) {
        return size;
    }
    for (i = 0; i < priv->num_lanes; ++i) {
        size += sizeof(psel_rndv_lane_rec_t);
        if (mode == PSEL_RNDV_MODE_GET) {
            size += req->lane_info[priv->lanes[i]].rkey_size;
        }
    }
    return size;
}

/* The RTS: rndv/get names our address entries of its lanes with their
 * rkeys, rndv/put the peer's entries it will write to. */
static ucs_status_t psel_rndv_rts_pack(psel_proto_req_t *req,
                                       psel_proto_rndv_t *rndv)
{
    const psel_proto_lanes_priv_t *priv = psel_rndv_priv(req);
    uint8_t *p                          = rndv->rts;
    const psel_proto_lane_info_t *info;
    psel_rndv_lane_rec_t rec;
    psel_rndv_rts_hdr_t hdr;
    ucs_status_t status;
    unsigned i;

    memset(&hdr, 0, sizeof(hdr));
    hdr.version   = PSEL_RNDV_WIRE_VERSION;
    hdr.mode      = rndv->mode;
    hdr.num_lanes = (rndv->mode == PSEL_RNDV_MODE_AM) ? 0 : priv->num_lanes;
    hdr.tag       = req->tag;
    hdr.length    = req->length;
    hdr.sender_id = req->sender_id;
    hdr.msg_id    = req->msg_id;
    hdr.sreq_id   = req->req_id;
    hdr.address   = (rndv->mode == PSEL_RNDV_MODE_GET) ?
                    (uintptr_t)req->buffer : 0;
    memcpy(p, &hdr, sizeof(hdr));
    p += sizeof(hdr);

    for (i = 0; i < hdr.num_lanes; ++i) {
        info = &req->lane_info[priv->lanes[i]];
        memset(&rec, 0, sizeof(rec));
        rec.weight = ucs_max(1, (unsigned)(priv->shares[i] * UINT16_MAX));
        if (rndv->mode == PSEL_RNDV_MODE_GET) {
            rec.entry     = info->local_entry;
            rec.rkey_size = (rndv->memh[priv->lanes[i]] != NULL) ?
                            info->rkey_size : 0;
        } else {
            rec.entry     = info->remote_entry;
        }
        memcpy(p, &rec, sizeof(rec));
        p += sizeof(rec);
        if (rec.rkey_size > 0) {
            status = uct_md_mkey_pack(req->mds[priv->lanes[i]],
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

    req->resume(req);
}

/* First call: state, registration, an id for replies, the RTS. */
static ucs_status_t psel_rndv_start(psel_proto_req_t *req,
                                    psel_rndv_mode_t mode)
{
    const psel_proto_lanes_priv_t *priv = psel_rndv_priv(req);
    size_t max_rts   = req->lane_info[priv->ctrl_lane].iface_attr->cap.am.max_bcopy;
    size_t rts_size  = psel_rndv_rts_size(req, mode);
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
    rndv->mode   = mode;
    rndv->stage  = PSEL_RNDV_STAGE_RTS;
    rndv->status = UCS_OK;
    rndv->rts    = (uint8_t*)(rndv + 1);
    req->rndv    = rndv;

    access = (mode == PSEL_RNDV_MODE_GET) ? UCT_MD_MEM_ACCESS_REMOTE_GET :
                                            UCT_MD_MEM_ACCESS_LOCAL_READ;
    status = psel_rndv_is_zcopy(req, mode) ?
             psel_rndv_register(req, rndv, access) : UCS_OK;
    if (status == UCS_OK) {
        status = req->track(req);
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

static size_t psel_rndv_copy_pack(void *dest, void *arg)
{
    psel_proto_req_t *req = arg;
    psel_proto_rndv_t *rndv = req->rndv;

    memcpy(dest, rndv->rts, rndv->rts_length);
    return rndv->rts_length;
}

/* A data fragment by bcopy AM: the header, then the bytes. */
typedef struct {
    psel_proto_req_t *req;
    size_t            offset;
    size_t            length;
} psel_rndv_bcopy_arg_t;

static size_t psel_rndv_data_pack(void *dest, void *arg)
{
    psel_rndv_bcopy_arg_t *frag = arg;
    psel_rndv_data_hdr_t hdr;

    hdr.version = PSEL_RNDV_WIRE_VERSION;
    hdr.rreq_id = frag->req->rndv->remote_req_id;
    hdr.offset  = frag->offset;
    memcpy(dest, &hdr, sizeof(hdr));
    memcpy(UCS_PTR_BYTE_OFFSET(dest, sizeof(hdr)),
           UCS_PTR_BYTE_OFFSET(frag->req->buffer, frag->offset),
           frag->length);
    return sizeof(hdr) + frag->length;
}

/* Post one fragment of the data; UCS_OK or UCS_INPROGRESS when posted. */
static ucs_status_t psel_rndv_post(psel_proto_req_t *req, uint8_t lane,
                                   size_t offset, size_t length)
{
    psel_proto_rndv_t *rndv = req->rndv;
    psel_rndv_bcopy_arg_t frag;
    psel_rndv_data_hdr_t hdr;
    uct_iov_t iov;
    ssize_t packed;

    iov.buffer = (void*)UCS_PTR_BYTE_OFFSET(req->buffer, offset);
    iov.length = length;
    iov.memh   = rndv->memh[lane];
    iov.stride = 0;
    iov.count  = 1;

    if (rndv->mode == PSEL_RNDV_MODE_PUT) {
        return uct_ep_put_zcopy(req->lanes[lane], &iov, 1,
                                rndv->remote_address + offset,
                                rndv->rkeys[lane].rkey, &req->comp);
    }
    if (psel_rndv_priv(req)->zcopy) {
        hdr.version = PSEL_RNDV_WIRE_VERSION;
        hdr.rreq_id = rndv->remote_req_id;
        hdr.offset  = offset;
        return uct_ep_am_zcopy(req->lanes[lane], PSEL_AM_ID_RNDV_DATA, &hdr,
                               sizeof(hdr), &iov, 1, 0, &req->comp);
    }
    frag.req    = req;
    frag.offset = offset;
    frag.length = length;
    packed      = uct_ep_am_bcopy(req->lanes[lane], PSEL_AM_ID_RNDV_DATA,
                                  psel_rndv_data_pack, &frag, 0);
    return (packed < 0) ? (ucs_status_t)packed : UCS_OK;
}

/* RTR arrived: split the data over the protocol's lanes. */
static ucs_status_t psel_rndv_data_init(psel_proto_req_t *req)
{
    const psel_proto_lanes_priv_t *priv = psel_rndv_priv(req);
    psel_proto_rndv_t *rndv             = req->rndv;
    psel_proto_split_lane_t lanes[PSEL_MAX_LANES];
    psel_proto_xfer_op_t op;
    unsigned i;

    op = (rndv->mode == PSEL_RNDV_MODE_PUT) ? PSEL_PROTO_XFER_PUT :
         priv->zcopy ? PSEL_PROTO_XFER_AM_ZCOPY : PSEL_PROTO_XFER_AM_BCOPY;
    for (i = 0; i < priv->num_lanes; ++i) {
        if ((rndv->mode == PSEL_RNDV_MODE_PUT) &&
            !(rndv->rkey_map & UCS_BIT(priv->lanes[i]))) {
            ucs_error("rendezvous put: the receiver sent no rkey for lane %u "
                      "(its address entry %u)", priv->lanes[i],
                      req->lane_info[priv->lanes[i]].remote_entry);
            return UCS_ERR_UNREACHABLE;
        }
        psel_proto_xfer_lane(req->lane_info[priv->lanes[i]].iface_attr, op,
                             priv->lanes[i], priv->shares[i], &lanes[i]);
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
    uint8_t lane;

    while (psel_proto_xfer_next(&rndv->xfer, &index, &offset, &length)) {
        lane = rndv->xfer.lanes[index];
        ++req->comp.count;
        status = psel_rndv_post(req, lane, offset, length);
        if (status != UCS_INPROGRESS) {
            --req->comp.count;
            if (UCS_STATUS_IS_ERR(status)) {
                return status;
            }
        }
        psel_proto_xfer_posted(&rndv->xfer, index, length);
    }
    return UCS_OK;
}

/* rndv/put: flush every data lane, so the puts landed before the FIN. */
static ucs_status_t psel_rndv_flush(psel_proto_req_t *req)
{
    psel_proto_rndv_t *rndv = req->rndv;
    ucs_status_t status;

    for (; rndv->flush_next < rndv->xfer.num_lanes; ++rndv->flush_next) {
        ++req->comp.count;
        status = uct_ep_flush(req->lanes[rndv->xfer.lanes[rndv->flush_next]],
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

static size_t psel_rndv_ack_pack(void *dest, void *arg)
{
    memcpy(dest, arg, sizeof(psel_rndv_ack_hdr_t));
    return sizeof(psel_rndv_ack_hdr_t);
}

ucs_status_t psel_rndv_send_ack(uct_ep_h ep, uint8_t am_id,
                                ucs_status_t status, uint64_t req_id)
{
    psel_rndv_ack_hdr_t ack;
    ssize_t packed;

    ack.version = PSEL_RNDV_WIRE_VERSION;
    ack.status  = (int8_t)status;
    ack.req_id  = req_id;
    packed      = uct_ep_am_bcopy(ep, am_id, psel_rndv_ack_pack, &ack, 0);
    return (packed < 0) ? (ucs_status_t)packed : UCS_OK;
}

static ucs_status_t psel_rndv_send_fin(psel_proto_req_t *req)
{
    return psel_rndv_send_ack(req->lanes[psel_rndv_priv(req)->ctrl_lane],
                              PSEL_AM_ID_RNDV_FIN, req->rndv->status,
                              req->rndv->remote_req_id);
}

static size_t psel_rndv_cancel_pack(void *dest, void *arg)
{
    const psel_proto_req_t *req = arg;
    psel_rndv_cancel_hdr_t hdr;

    memset(&hdr, 0, sizeof(hdr));
    hdr.version   = PSEL_RNDV_WIRE_VERSION;
    hdr.sender_id = req->sender_id;
    hdr.msg_id    = req->msg_id;
    hdr.sreq_id   = req->req_id;
    memcpy(dest, &hdr, sizeof(hdr));
    return sizeof(hdr);
}

/* On the lane of the RTS, so it arrives after it. */
static ucs_status_t psel_rndv_send_cancel(psel_proto_req_t *req)
{
    ssize_t packed;

    packed = uct_ep_am_bcopy(req->lanes[psel_rndv_priv(req)->ctrl_lane],
                             PSEL_AM_ID_RNDV_CANCEL, psel_rndv_cancel_pack,
                             req, 0);
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

static ucs_status_t rndv_send_progress(psel_proto_req_t *req,
                                       psel_rndv_mode_t mode)
{
    psel_proto_rndv_t *rndv;
    ucs_status_t status;
    ssize_t packed;
    unsigned steps;

    if (req->rndv == NULL) {
        status = psel_rndv_start(req, mode);
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
            packed = uct_ep_am_bcopy(req->lanes[psel_rndv_priv(req)->ctrl_lane],
                                     PSEL_AM_ID_RNDV_RTS, psel_rndv_copy_pack,
                                     req, 0);
            if (packed == UCS_ERR_NO_RESOURCE) {
                return UCS_ERR_NO_RESOURCE;
            } else if (packed < 0) {
                rndv->status = (ucs_status_t)packed;
                rndv->stage  = PSEL_RNDV_STAGE_DONE;
                break;
            }
            rndv->stage = PSEL_RNDV_STAGE_WAIT;
            return UCS_INPROGRESS;
        case PSEL_RNDV_STAGE_WAIT:
            if (rndv->cancel == PSEL_RNDV_CANCEL_WANTED) {
                status = psel_rndv_send_cancel(req);
                if (status == UCS_ERR_NO_RESOURCE) {
                    return status;
                } else if (status != UCS_OK) {
                    /* the lane failed: peer failure ends the send */
                    ucs_error("rendezvous: sending the CANCEL failed: %s",
                              ucs_status_string(status));
                    rndv->cancel = PSEL_RNDV_CANCEL_NONE;
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
            if ((rndv->status == UCS_OK) && (req->comp.status != UCS_OK)) {
                rndv->status = req->comp.status;
            }
            if (rndv->status != UCS_OK) {
                /* the receiver waits for data: tell it */
                rndv->stage = PSEL_RNDV_STAGE_FIN;
            } else {
                rndv->stage = (rndv->mode == PSEL_RNDV_MODE_PUT) ?
                              PSEL_RNDV_STAGE_FLUSH : PSEL_RNDV_STAGE_DONE;
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
            if ((rndv->status == UCS_OK) && (req->comp.status != UCS_OK)) {
                rndv->status = req->comp.status;
            }
            status = psel_rndv_send_fin(req);
            if (status == UCS_ERR_NO_RESOURCE) {
                return status;
            } else if ((status != UCS_OK) && (rndv->status == UCS_OK)) {
                rndv->status = status;
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

static ucs_status_t psel_rndv_am_progress(psel_proto_req_t *req)
{
    return rndv_send_progress(req, PSEL_RNDV_MODE_AM);
}

static ucs_status_t psel_rndv_get_progress(psel_proto_req_t *req)
{
    return rndv_send_progress(req, PSEL_RNDV_MODE_GET);
}

static ucs_status_t psel_rndv_put_progress(psel_proto_req_t *req)
{
    return rndv_send_progress(req, PSEL_RNDV_MODE_PUT);
}

const psel_proto_t psel_proto_rndv_am = {
    .name     = "rndv/am",
    .desc     = "rendezvous data by active messages",
    .op_mask  = UCS_BIT(PSEL_OP_TAG_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM) | UCS_BIT(PSEL_LANE_ROLE_AM_BW),
    .init     = psel_rndv_am_init,
    .progress = psel_rndv_am_progress
};

const psel_proto_t psel_proto_rndv_get = {
    .name     = "rndv/get",
    .desc     = "rendezvous zero-copy read from remote",
    .op_mask  = UCS_BIT(PSEL_OP_TAG_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM) | UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
    .init     = psel_rndv_get_init,
    .progress = psel_rndv_get_progress
};

const psel_proto_t psel_proto_rndv_put = {
    .name     = "rndv/put",
    .desc     = "rendezvous zero-copy write to remote",
    .op_mask  = UCS_BIT(PSEL_OP_TAG_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM) | UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
    .init     = psel_rndv_put_init,
    .progress = psel_rndv_put_progress
};
