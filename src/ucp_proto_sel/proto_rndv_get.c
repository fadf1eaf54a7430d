/*
 * rndv/get: the RTS carries the sender's entries with rkeys of its buffer;
 * the receiver reads with get_zcopy over its lanes to those entries, split
 * by the sender's weights, then answers with ATS.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_common.h"
#include "proto_rndv_int.h"

#include <ucs/debug/log_def.h>
#include <string.h>

static const psel_rndv_mode_ops_t psel_rndv_get_ops;

static ucs_status_t psel_rndv_get_init(const psel_proto_init_params_t *params,
                                       psel_proto_caps_t *caps)
{
    return psel_proto_rndv_init(params, PSEL_LANE_ROLE_RMA_BW,
                                PSEL_LANE_CAP_GET_ZCOPY, 1, 1, 0,
                                &psel_rndv_get_ops, caps);
}

static unsigned psel_rndv_get_send_access(const psel_proto_req_t *req)
{
    return UCT_MD_MEM_ACCESS_REMOTE_GET;
}

/* Our lanes to the sender's entries in the RTS, with the rkeys unpacked,
 * split by the weights the sender gave. */
static ucs_status_t psel_rndv_get_recv_start(psel_rndv_recv_t *op,
                                             psel_rndv_recv_stage_t *next_p)
{
    const psel_proto_ep_t *ep          = op->super.ep;
    const psel_proto_lane_info_t *info = ep->lane_info;
    psel_proto_split_lane_t split[PSEL_MAX_LANES];
    const psel_rndv_lane_in_t *in;
    unsigned i, lane, n = 0;
    ucs_status_t status;

    for (i = 0; i < op->rts.hdr.num_lanes; ++i) {
        in = &op->rts.lanes[i];
        if (in->rec.entry >= ep->num_remote_entries) {
            ucs_error("rendezvous get: lane record %u names the sender's "
                      "entry %u; its address has %u entries", i,
                      in->rec.entry, ep->num_remote_entries);
            return UCS_ERR_INVALID_PARAM;
        }
        for (lane = 0; lane < ep->num_lanes; ++lane) {
            if ((info[lane].remote_entry != in->rec.entry) ||
                !(info[lane].caps & PSEL_LANE_CAP_GET_ZCOPY) ||
                (op->rkey_map & UCS_BIT(lane))) {
                continue;
            }
            if (in->rec.rkey_size != info[lane].remote_rkey_size) {
                ucs_error("rendezvous get: lane record %u carries a %u-byte "
                          "rkey for the sender's entry %u, whose rkeys have "
                          "%u bytes", i, in->rec.rkey_size, in->rec.entry,
                          info[lane].remote_rkey_size);
                return UCS_ERR_INVALID_PARAM;
            }
            status = psel_rndv_rkey_unpack(info[lane].iface->component,
                                           in->rkey, in->rec.rkey_size,
                                           &op->rkeys[lane]);
            if (status != UCS_OK) {
                ucs_error("rendezvous get: unpacking the rkey of lane %u "
                          "failed: %s", lane, ucs_status_string(status));
                return status;
            }
            op->rkey_map |= UCS_BIT(lane);
            status = psel_rndv_recv_register(op, info[lane].local_entry,
                                             UCT_MD_MEM_ACCESS_LOCAL_WRITE);
            if (status != UCS_OK) {
                return status;
            }
            psel_proto_xfer_lane(info[lane].iface->attr, PSEL_PROTO_XFER_GET,
                                 lane, in->rec.weight, &split[n++]);
            break;
        }
    }
    if (n == 0) {
        ucs_error("rendezvous get: no lane of ours reads from the sender's "
                  "%u lane(s) (first entry %u)", op->rts.hdr.num_lanes,
                  op->rts.lanes[0].rec.entry);
        return UCS_ERR_UNREACHABLE;
    }
    psel_proto_xfer_init(&op->xfer, split, n, op->rts.hdr.length,
                         PSEL_RNDV_MIN_CHUNK);
    *next_p = PSEL_RNDV_RECV_GET;
    return UCS_OK;
}

/* Post reads round robin over the lanes. */
static ucs_status_t psel_rndv_get_recv_post(psel_rndv_recv_t *op)
{
    const psel_proto_ep_t *ep = op->super.ep;
    size_t offset, length;
    ucs_status_t status;
    unsigned index;
    uct_iov_t iov;
    uint8_t lane;

    while (psel_proto_xfer_next(&op->xfer, &index, &offset, &length)) {
        lane       = op->xfer.lanes[index];
        iov.buffer = UCS_PTR_BYTE_OFFSET(op->buffer, offset);
        iov.length = length;
        iov.memh   = op->memh[ep->lane_info[lane].iface->md_index];
        iov.stride = 0;
        iov.count  = 1;
        ++op->comp.count;
        status = uct_ep_get_zcopy(ep->uct_eps[lane], &iov, 1,
                                  op->rts.hdr.address + offset,
                                  op->rkeys[lane].rkey, &op->comp);
        if (status != UCS_INPROGRESS) {
            --op->comp.count;
            if (UCS_STATUS_IS_ERR(status)) {
                return status;
            }
        }
        psel_proto_xfer_posted(&op->xfer, index, length);
        PSEL_RNDV_EVENT(PSEL_RNDV_EVENT_GET_POSTED);
    }
    return UCS_OK;
}

static const psel_rndv_mode_ops_t psel_rndv_get_ops = {
    .mode         = PSEL_RNDV_MODE_GET,
    .name         = "get",
    .rts_lanes    = PSEL_RNDV_RTS_OUR_ENTRIES,
    .rtr          = 0,
    .rtr_rkeys    = 0,
    .fin          = 0,
    .recv_waits   = 0,
    .send_access  = psel_rndv_get_send_access,
    .recv_start   = psel_rndv_get_recv_start,
    .recv_post    = psel_rndv_get_recv_post
};

const psel_proto_t psel_proto_rndv_get = {
    .name       = "rndv/get",
    .desc       = "rendezvous zero-copy read from remote",
    .op_mask    = UCS_BIT(PSEL_OP_TAG_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM) | UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
    .init       = psel_rndv_get_init,
    .rndv       = &psel_rndv_get_ops,
    PSEL_PROTO_RNDV_CALLBACKS
};

/* ucp_am_send_nbx's rendezvous over the same mode: cost model only */
const psel_proto_t psel_proto_am_rndv_get = {
    .name       = "am/rndv/get",
    .twin       = "rndv/get",
    .desc       = "active message rendezvous, zero-copy read from remote",
    .op_mask    = UCS_BIT(PSEL_OP_AM_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM) | UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
    .init       = psel_rndv_get_init
};
