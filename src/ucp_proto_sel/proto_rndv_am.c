/*
 * rndv/am: after the RTR the sender sends the data by active messages
 * (zero-copy where the lanes have it, else bcopy), each fragment with a
 * DATA header naming the receive and the offset; the receive ends when
 * every byte landed.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_common.h"
#include "proto_rndv_int.h"

#include <string.h>

static const psel_rndv_mode_ops_t psel_rndv_am_ops;

static ucs_status_t psel_rndv_am_init(const psel_proto_init_params_t *params,
                                      psel_proto_caps_t *caps)
{
    ucs_status_t status;

    /* zero-copy where the lanes have it, else bcopy */
    status = psel_proto_rndv_init(params, PSEL_LANE_ROLE_AM_BW,
                                  PSEL_LANE_CAP_AM_ZCOPY, 0, 1, 1,
                                  &psel_rndv_am_ops, caps);
    if (status != UCS_ERR_UNSUPPORTED) {
        return status;
    }
    memset(caps, 0, sizeof(*caps));
    caps->cfg_thresh = PSEL_THRESH_AUTO;
    return psel_proto_rndv_init(params, PSEL_LANE_ROLE_AM_BW,
                                PSEL_LANE_CAP_AM_BCOPY, 0, 0, 2,
                                &psel_rndv_am_ops, caps);
}

static unsigned psel_rndv_am_send_access(const psel_proto_req_t *req)
{
    return psel_rndv_priv(req)->zcopy ? UCT_MD_MEM_ACCESS_LOCAL_READ : 0;
}

/* An RTR without records: "go". */
static ucs_status_t psel_rndv_am_send_rtr(psel_proto_req_t *req,
                                          const psel_rndv_rtr_t *rtr)
{
    return UCS_OK;
}

static psel_proto_xfer_op_t psel_rndv_am_xfer_op(const psel_proto_req_t *req)
{
    return psel_rndv_priv(req)->zcopy ? PSEL_PROTO_XFER_AM_ZCOPY :
                                        PSEL_PROTO_XFER_AM_BCOPY;
}

/* A data fragment by bcopy AM: the header, then the bytes. */
typedef struct {
    psel_proto_req_t *req;
    size_t            offset;
    size_t            length;
} psel_rndv_am_frag_t;

static size_t psel_rndv_am_pack(void *dest, void *arg)
{
    psel_rndv_am_frag_t *frag = arg;

    psel_rndv_data_hdr_pack(dest, frag->req->rndv->remote_req_id,
                            frag->offset);
    memcpy(UCS_PTR_BYTE_OFFSET(dest, sizeof(psel_rndv_data_hdr_t)),
           UCS_PTR_BYTE_OFFSET(frag->req->buffer, frag->offset),
           frag->length);
    return sizeof(psel_rndv_data_hdr_t) + frag->length;
}

static ucs_status_t psel_rndv_am_send_post(psel_proto_req_t *req, uint8_t lane,
                                           size_t offset, size_t length)
{
    uint8_t hdr[sizeof(psel_rndv_data_hdr_t)];
    psel_rndv_am_frag_t frag;
    uct_iov_t iov;
    ssize_t packed;

    if (psel_rndv_priv(req)->zcopy) {
        psel_rndv_data_hdr_pack(hdr, req->rndv->remote_req_id, offset);
        iov.buffer = (void*)UCS_PTR_BYTE_OFFSET(req->buffer, offset);
        iov.length = length;
        iov.memh   = req->rndv->memh[lane];
        iov.stride = 0;
        iov.count  = 1;
        return uct_ep_am_zcopy(req->ep->uct_eps[lane], PSEL_AM_ID_RNDV_DATA,
                               hdr, sizeof(hdr), &iov, 1, 0, &req->comp);
    }
    frag.req    = req;
    frag.offset = offset;
    frag.length = length;
    packed      = uct_ep_am_bcopy(req->ep->uct_eps[lane], PSEL_AM_ID_RNDV_DATA,
                                  psel_rndv_am_pack, &frag, 0);
    return (packed < 0) ? (ucs_status_t)packed : UCS_OK;
}

/* An RTR without records; the data lands through DATA. */
static ucs_status_t psel_rndv_am_recv_start(psel_rndv_recv_t *op,
                                            psel_rndv_recv_stage_t *next_p)
{
    *next_p = PSEL_RNDV_RECV_RTR;
    return UCS_OK;
}

static const psel_rndv_mode_ops_t psel_rndv_am_ops = {
    .mode         = PSEL_RNDV_MODE_AM,
    .name         = "am",
    .rts_lanes    = PSEL_RNDV_RTS_NO_LANES,
    .rtr          = 1,
    .rtr_rkeys    = 0,
    .fin          = 0,
    .recv_waits   = UCS_BIT(PSEL_AM_ID_RNDV_DATA),
    .send_access  = psel_rndv_am_send_access,
    .send_rtr     = psel_rndv_am_send_rtr,
    .send_xfer_op = psel_rndv_am_xfer_op,
    .send_post    = psel_rndv_am_send_post,
    .recv_start   = psel_rndv_am_recv_start
};

const psel_proto_t psel_proto_rndv_am = {
    .name       = "rndv/am",
    .desc       = "rendezvous data by active messages",
    .op_mask    = UCS_BIT(PSEL_OP_TAG_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM) | UCS_BIT(PSEL_LANE_ROLE_AM_BW),
    .init       = psel_rndv_am_init,
    .rndv       = &psel_rndv_am_ops,
    PSEL_PROTO_RNDV_CALLBACKS
};

/* ucp_am_send_nbx's rendezvous over the same mode: cost model only */
const psel_proto_t psel_proto_am_rndv_am = {
    .name       = "am/rndv/am",
    .twin       = "rndv/am",
    .desc       = "active message rendezvous, data by active messages",
    .op_mask    = UCS_BIT(PSEL_OP_AM_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM) | UCS_BIT(PSEL_LANE_ROLE_AM_BW),
    .init       = psel_rndv_am_init
};
