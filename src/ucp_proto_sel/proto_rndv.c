/*
 * Rendezvous protocols: the sender announces the message (RTS) and the data
 * moves once the receiver has matched it.
 *  rndv/am   data by active messages after RTR (zcopy where the lanes have
 *            it, else bcopy);
 *  rndv/get  the receiver reads with get_zcopy, then sends ATS;
 *  rndv/put  the sender writes with put_zcopy after RTR, then sends FIN.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_common.h"

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

const psel_proto_t psel_proto_rndv_am = {
    .name     = "rndv/am",
    .desc     = "rendezvous data by active messages",
    .op_mask  = UCS_BIT(PSEL_OP_TAG_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM) | UCS_BIT(PSEL_LANE_ROLE_AM_BW),
    .init     = psel_rndv_am_init,
    .progress = NULL
};

const psel_proto_t psel_proto_rndv_get = {
    .name     = "rndv/get",
    .desc     = "rendezvous zero-copy read from remote",
    .op_mask  = UCS_BIT(PSEL_OP_TAG_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM) | UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
    .init     = psel_rndv_get_init,
    .progress = NULL
};

const psel_proto_t psel_proto_rndv_put = {
    .name     = "rndv/put",
    .desc     = "rendezvous zero-copy write to remote",
    .op_mask  = UCS_BIT(PSEL_OP_TAG_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM) | UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
    .init     = psel_rndv_put_init,
    .progress = NULL
};
