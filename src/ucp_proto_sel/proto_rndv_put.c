/*
 * rndv/put: the RTS names the receiver's entries the sender will write to;
 * the receiver registers its buffer on them and answers with an RTR that
 * carries their rkeys; the sender puts with put_zcopy, flushes its lanes
 * and sends FIN.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_common.h"
#include "proto_rndv_int.h"

#include <ucs/debug/log_def.h>
#include <inttypes.h>
#include <string.h>

static const psel_rndv_mode_ops_t psel_rndv_put_ops;

static ucs_status_t psel_rndv_put_init(const psel_proto_init_params_t *params,
                                       psel_proto_caps_t *caps)
{
    return psel_proto_rndv_init(params, PSEL_LANE_ROLE_RMA_BW,
                                PSEL_LANE_CAP_PUT_ZCOPY, 1, 1, 0,
                                &psel_rndv_put_ops, caps);
}

static unsigned psel_rndv_put_send_access(const psel_proto_req_t *req)
{
    return UCT_MD_MEM_ACCESS_LOCAL_READ;
}

/* Our put lane that takes the rkey of RTR record @a in, or -1; @a taken:
 * lanes that have theirs already. */
static int psel_rndv_put_rtr_lane(const psel_proto_ep_t *ep,
                                  const psel_rndv_lane_in_t *in,
                                  uint32_t taken)
{
    unsigned lane;

    for (lane = 0; lane < ep->num_lanes; ++lane) {
        if ((ep->lane_info[lane].remote_entry == in->rec.entry) &&
            (ep->lane_info[lane].caps & PSEL_LANE_CAP_PUT_ZCOPY) &&
            !(taken & UCS_BIT(lane))) {
            return lane;
        }
    }
    return -1;
}

/* The rkey of each entry, for our lanes that write to it. Every record is
 * checked before any rkey is unpacked: a bad one leaves no rkey behind
 * (the send fails). */
static ucs_status_t psel_rndv_put_send_rtr(psel_proto_req_t *req,
                                           const psel_rndv_rtr_t *rtr)
{
    const psel_proto_ep_t *ep          = req->ep;
    const psel_proto_lane_info_t *info = ep->lane_info;
    psel_proto_rndv_t *rndv            = req->rndv;
    const psel_rndv_lane_in_t *in;
    uint32_t taken = rndv->rkey_map;
    ucs_status_t status;
    unsigned i;
    int lane;

    for (i = 0; i < rtr->hdr.num_lanes; ++i) {
        in   = &rtr->lanes[i];
        lane = psel_rndv_put_rtr_lane(ep, in, taken);
        if (lane < 0) {
            continue;
        }
        if (in->rec.rkey_size != info[lane].remote_rkey_size) {
            ucs_error("rendezvous RTR: a %u-byte rkey for entry %u, whose "
                      "rkeys have %u bytes (request %" PRIx64 "); the "
                      "send fails", in->rec.rkey_size, in->rec.entry,
                      info[lane].remote_rkey_size, rtr->hdr.sreq_id);
            return UCS_ERR_INVALID_PARAM;
        }
        taken |= UCS_BIT(lane);
    }
    for (i = 0; i < rtr->hdr.num_lanes; ++i) {
        in   = &rtr->lanes[i];
        lane = psel_rndv_put_rtr_lane(ep, in, rndv->rkey_map);
        if (lane < 0) {
            continue;
        }
        status = psel_rndv_rkey_unpack(info[lane].iface->component,
                                       in->rkey, in->rec.rkey_size,
                                       &rndv->rkeys[lane]);
        if (status != UCS_OK) {
            ucs_error("rendezvous RTR: unpacking the rkey of lane %d "
                      "failed: %s", lane, ucs_status_string(status));
            return status; /* the send fails (release drops the others) */
        }
        rndv->rkey_map |= UCS_BIT(lane);
    }
    return UCS_OK;
}

static psel_proto_xfer_op_t psel_rndv_put_xfer_op(const psel_proto_req_t *req)
{
    return PSEL_PROTO_XFER_PUT;
}

static ucs_status_t psel_rndv_put_send_post(psel_proto_req_t *req,
                                            uint8_t lane, size_t offset,
                                            size_t length)
{
    psel_proto_rndv_t *rndv = req->rndv;
    uct_iov_t iov;

    iov.buffer = (void*)UCS_PTR_BYTE_OFFSET(req->buffer, offset);
    iov.length = length;
    iov.memh   = rndv->memh[lane];
    iov.stride = 0;
    iov.count  = 1;
    return uct_ep_put_zcopy(req->ep->uct_eps[lane], &iov, 1,
                            rndv->remote_address + offset,
                            rndv->rkeys[lane].rkey, &req->comp);
}

/* The engine registers on the entries and packs their rkeys in the RTR. */
static ucs_status_t psel_rndv_put_recv_start(psel_rndv_recv_t *op,
                                             psel_rndv_recv_stage_t *next_p)
{
    *next_p = PSEL_RNDV_RECV_RTR;
    return UCS_OK;
}

static const psel_rndv_mode_ops_t psel_rndv_put_ops = {
    .mode         = PSEL_RNDV_MODE_PUT,
    .name         = "put",
    .rts_lanes    = PSEL_RNDV_RTS_PEER_ENTRIES,
    .rtr          = 1,
    .rtr_rkeys    = 1,
    .fin          = 1,
    .recv_waits   = UCS_BIT(PSEL_AM_ID_RNDV_FIN),
    .send_access  = psel_rndv_put_send_access,
    .send_rtr     = psel_rndv_put_send_rtr,
    .send_xfer_op = psel_rndv_put_xfer_op,
    .send_post    = psel_rndv_put_send_post,
    .recv_start   = psel_rndv_put_recv_start
};

const psel_proto_t psel_proto_rndv_put = {
    .name       = "rndv/put",
    .desc       = "rendezvous zero-copy write to remote",
    .op_mask    = UCS_BIT(PSEL_OP_TAG_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM) | UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
    .init       = psel_rndv_put_init,
    .rndv       = &psel_rndv_put_ops,
    PSEL_PROTO_RNDV_CALLBACKS
};

/* ucp_am_send_nbx's rendezvous over the same mode: cost model only */
const psel_proto_t psel_proto_am_rndv_put = {
    .name       = "am/rndv/put",
    .twin       = "rndv/put",
    .desc       = "active message rendezvous, zero-copy write to remote",
    .op_mask    = UCS_BIT(PSEL_OP_AM_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM) | UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
    .init       = psel_rndv_put_init
};
