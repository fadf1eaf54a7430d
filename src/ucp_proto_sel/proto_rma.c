/*
 * One-sided operations (ucp_put_nbx, ucp_get_nbx), with UCP's protocol
 * names; cost model only, protosel's data path sends tags:
 *  put/offload/zcopy  put_zcopy from the registered buffer, over the rma_bw
 *                     lanes, each taking its bandwidth share of the bytes;
 *  get/zcopy  get_zcopy into the registered buffer, the same lanes;
 *  put/am/bcopy       an active message carries the data, the peer's CPU
 *                     copies it into place (any transport with AM);
 *  get/am/bcopy       an active message asks, the peer's CPU replies with
 *                     the data in active messages.
 * A put is done when its data is in the peer's memory, a get when the data
 * is in ours; neither side posts a receive. The peer's memory is taken as
 * registered and its key as known, as UCP's rkey cache makes it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_common.h"

#include <string.h>

/* put/am and get/am active messages carry the remote address and the
 * endpoint's id before the data */
#define PSEL_RMA_AM_HDR 16

/*
 * put_zcopy or get_zcopy over the rma_bw lanes that have it: the initiator
 * registers its buffer and posts the operations, the wire moves the bytes
 * at the lanes' summed bandwidth, the peer's CPU does nothing. A get waits
 * for the data to come back: two latencies (UCP's response flag), a put
 * one.
 */
static ucs_status_t psel_rma_zcopy_init(const psel_proto_init_params_t *params,
                                        uint32_t lane_cap, unsigned latencies,
                                        psel_proto_caps_t *caps)
{
    const psel_op_cost_t *cost;
    psel_lane_set_perf_t perf;
    psel_proto_stages_t stages;
    psel_lane_set_t set;
    size_t frag_size, min_length;
    ucs_status_t status;

    status = psel_proto_lane_set(params, PSEL_LANE_ROLE_RMA_BW, lane_cap,
                                 params->config->max_rndv_lanes, &set, &perf,
                                 caps);
    if (status != UCS_OK) {
        return status;
    }
    status = psel_proto_check_zcopy(params, &set, lane_cap, caps);
    if (status != UCS_OK) {
        return status;
    }
    status = psel_proto_frag_sizes(&set, lane_cap, 0, &min_length, &frag_size,
                                   caps);
    if (status != UCS_OK) {
        return status;
    }

    cost = &perf.op[PSEL_OP_CLASS_ZCOPY];
    memset(&stages, 0, sizeof(stages));
    stages.latency    = latencies * cost->latency;
    stages.send       = perf.reg_cost;
    stages.send.c    += cost->send_pre;
    stages.send_post  = cost->send_post;
    stages.wire       = ucs_linear_func_make(0, 1.0 / perf.bandwidth);
    stages.frag_send  = cost->send_pre + cost->send_post;
    caps->min_length  = min_length;
    psel_proto_add_frag_ranges(caps, &stages, frag_size);
    psel_proto_set_lanes(&set, NULL, frag_size, 1, caps);
    return UCS_OK;
}

static ucs_status_t psel_put_zcopy_init(const psel_proto_init_params_t *params,
                                        psel_proto_caps_t *caps)
{
    return psel_rma_zcopy_init(params, PSEL_LANE_CAP_PUT_ZCOPY, 1, caps);
}

static ucs_status_t psel_get_zcopy_init(const psel_proto_init_params_t *params,
                                        psel_proto_caps_t *caps)
{
    return psel_rma_zcopy_init(params, PSEL_LANE_CAP_GET_ZCOPY, 2, caps);
}

/*
 * put or get by active messages on the am_bw lane: the side that has the
 * data packs it into bcopy fragments, the other copies each out. A put's
 * data goes with its request (one latency); a get's request is one more
 * message the other way (two latencies; its send and receive overheads on
 * the two CPUs). The stages are the data's: send is the CPU that packs it,
 * recv the one that unpacks it.
 */
static ucs_status_t psel_rma_am_init(const psel_proto_init_params_t *params,
                                     int is_get, psel_proto_caps_t *caps)
{
    const psel_op_cost_t *cost;
    psel_lane_set_perf_t perf;
    psel_proto_stages_t stages;
    ucs_linear_func_t copy;
    psel_lane_set_t set;
    ucs_status_t status;
    size_t frag_size;

    status = psel_proto_am_bcopy_setup(params, PSEL_RMA_AM_HDR, &copy, &set,
                                       &perf, &frag_size, caps);
    if (status != UCS_OK) {
        return status;
    }

    psel_proto_am_stages(&perf, PSEL_OP_CLASS_BCOPY, copy, copy, &stages);
    if (is_get) {
        /* the request: sent by the unpacking side, received by the
         * packing one */
        cost            = &perf.op[PSEL_OP_CLASS_BCOPY];
        stages.latency += cost->latency;
        stages.recv.c  += cost->send_pre;
        stages.send.c  += cost->recv;
    }
    caps->min_length = 0;
    psel_proto_add_frag_ranges(caps, &stages, frag_size);
    psel_proto_set_lanes(&set, NULL, frag_size, 0, caps);
    return UCS_OK;
}

static ucs_status_t psel_put_am_init(const psel_proto_init_params_t *params,
                                     psel_proto_caps_t *caps)
{
    return psel_rma_am_init(params, 0, caps);
}

static ucs_status_t psel_get_am_init(const psel_proto_init_params_t *params,
                                     psel_proto_caps_t *caps)
{
    return psel_rma_am_init(params, 1, caps);
}

const psel_proto_t psel_proto_put_zcopy = {
    .name       = "put/offload/zcopy",
    .desc       = "put zero-copy",
    .op_mask    = UCS_BIT(PSEL_OP_PUT),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
    .init       = psel_put_zcopy_init
};

const psel_proto_t psel_proto_put_am = {
    .name       = "put/am/bcopy",
    .desc       = "put by active messages",
    .op_mask    = UCS_BIT(PSEL_OP_PUT),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM_BW),
    .init       = psel_put_am_init
};

const psel_proto_t psel_proto_get_zcopy = {
    .name       = "get/zcopy",
    .desc       = "get zero-copy",
    .op_mask    = UCS_BIT(PSEL_OP_GET),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
    .init       = psel_get_zcopy_init
};

const psel_proto_t psel_proto_get_am = {
    .name       = "get/am/bcopy",
    .desc       = "get by active messages",
    .op_mask    = UCS_BIT(PSEL_OP_GET),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM_BW),
    .init       = psel_get_am_init
};
