/*
 * One-sided operations (ucp_put_nbx, ucp_get_nbx), with UCP's protocol
 * names; cost model only, protosel's data path sends tags:
 *  put/offload/short  put_short on the rma lane: the CPU writes the data
 *                     into the transport, up to its put.max_short;
 *  put/offload/bcopy  put_bcopy on the first rma_bw lane that has it, in
 *                     fragments of its put.max_bcopy;
 *  put/offload/zcopy  put_zcopy from the registered buffer, over the rma_bw
 *                     lanes, each taking its bandwidth share of the bytes;
 *  get/bcopy          get_bcopy on the first rma_bw lane that has it: the
 *                     initiator's CPU copies each fragment out;
 *  get/zcopy          get_zcopy into the registered buffer, the same lanes
 *                     as put/offload/zcopy;
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
 * The stages of a one-sided operation on @a perf's lanes: the initiator's
 * CPU runs @a initiator (its copy or registration) and the operation
 * class's overheads, the wire moves the bytes, the peer's CPU does
 * nothing. A get waits for its data to come back: two latencies (UCP's
 * response flag); a put one.
 */
static void psel_rma_stages(const psel_lane_set_perf_t *perf,
                            psel_op_class_t op, ucs_linear_func_t initiator,
                            unsigned latencies, psel_proto_stages_t *stages)
{
    const psel_op_cost_t *cost = &perf->op[op];

    memset(stages, 0, sizeof(*stages));
    stages->latency   = latencies * cost->latency;
    stages->send      = initiator;
    stages->send.c   += cost->send_pre;
    stages->send_post = cost->send_post;
    stages->wire      = ucs_linear_func_make(0, 1.0 / perf->bandwidth);
    stages->frag_send = cost->send_pre + cost->send_post;
}

/*
 * put or get offloaded to the rma_bw lanes that have the operation:
 *  - zero-copy: over up to UCX_PSEL_MAX_RMA_LANES of them (1, as UCP's
 *    UCX_MAX_RMA_RAILS), each taking its bandwidth share of the bytes; the
 *    initiator registers its buffer and posts, the peer's CPU does nothing;
 *  - bcopy: on the first rma_bw lane that has it (UCP runs them on one
 *    lane, UCP_PROTO_RMA_MAX_BCOPY_LANES), in fragments of its max_bcopy;
 *    the initiator's CPU packs a put's data into each fragment and unpacks
 *    each fragment of a get's.
 */
static ucs_status_t psel_rma_offload_init(const psel_proto_init_params_t *params,
                                          uint32_t lane_cap, unsigned latencies,
                                          psel_proto_caps_t *caps)
{
    int zcopy = !!(lane_cap & (PSEL_LANE_CAP_PUT_ZCOPY |
                               PSEL_LANE_CAP_GET_ZCOPY));
    ucs_linear_func_t initiator;
    psel_lane_set_perf_t perf;
    psel_proto_stages_t stages;
    psel_lane_set_t set;
    size_t frag_size, min_length;
    ucs_status_t status;

    if (!zcopy) {
        status = psel_proto_copy_time(params, 0, &initiator, NULL, caps);
        if (status != UCS_OK) {
            return status;
        }
    }
    status = psel_proto_lane_set(params, PSEL_LANE_ROLE_RMA_BW, lane_cap,
                                 zcopy ? params->config->max_rma_lanes : 1,
                                 &set, &perf, caps);
    if (status != UCS_OK) {
        return status;
    }
    if (zcopy) {
        status = psel_proto_check_zcopy(params, &set, lane_cap, caps);
        if (status != UCS_OK) {
            return status;
        }
        initiator = perf.reg_cost;
    }
    status = psel_proto_frag_sizes(&set, lane_cap, 0, &min_length, &frag_size,
                                   caps);
    if (status != UCS_OK) {
        return status;
    }

    psel_rma_stages(&perf, zcopy ? PSEL_OP_CLASS_ZCOPY : PSEL_OP_CLASS_BCOPY,
                    initiator, latencies, &stages);
    caps->min_length = min_length;
    psel_proto_add_frag_ranges(caps, &stages, frag_size);
    psel_proto_set_lanes(&set, NULL, frag_size, zcopy, caps);
    return UCS_OK;
}

static ucs_status_t psel_put_zcopy_init(const psel_proto_init_params_t *params,
                                        psel_proto_caps_t *caps)
{
    return psel_rma_offload_init(params, PSEL_LANE_CAP_PUT_ZCOPY, 1, caps);
}

static ucs_status_t psel_get_zcopy_init(const psel_proto_init_params_t *params,
                                        psel_proto_caps_t *caps)
{
    return psel_rma_offload_init(params, PSEL_LANE_CAP_GET_ZCOPY, 2, caps);
}

/*
 * put_short on the rma lane (UCP's RMA lane type: the best latency among
 * the transports with put_short, put_bcopy and get_bcopy): the CPU copies
 * the payload into the transport as it posts it.
 */
static ucs_status_t psel_put_short_init(const psel_proto_init_params_t *params,
                                        psel_proto_caps_t *caps)
{
    ucs_linear_func_t copy = ucs_linear_func_make(
            0, 1.0 / params->config->copy_bw);
    psel_lane_set_perf_t perf;
    psel_proto_stages_t stages;
    psel_lane_set_t set;
    ucs_status_t status;
    size_t max_short;

    status = psel_proto_short_lane(params, PSEL_LANE_ROLE_RMA,
                                   PSEL_LANE_CAP_PUT_SHORT, &set, &perf, caps);
    if (status != UCS_OK) {
        return status;
    }
    max_short = set.lanes[0]->put.max_short;
    if (max_short == 0) {
        return psel_proto_unsupported(caps, "lane %s: put_short holds no "
                                      "payload", set.lanes[0]->name);
    }

    psel_rma_stages(&perf, PSEL_OP_CLASS_SHORT, copy, 1, &stages);
    caps->min_length = 0;
    psel_proto_add_range(caps, max_short, &stages, SIZE_MAX);
    psel_proto_set_lanes(&set, NULL, max_short, 0, caps);
    return UCS_OK;
}

static ucs_status_t psel_put_bcopy_init(const psel_proto_init_params_t *params,
                                        psel_proto_caps_t *caps)
{
    return psel_rma_offload_init(params, PSEL_LANE_CAP_PUT_BCOPY, 1, caps);
}

static ucs_status_t psel_get_bcopy_init(const psel_proto_init_params_t *params,
                                        psel_proto_caps_t *caps)
{
    return psel_rma_offload_init(params, PSEL_LANE_CAP_GET_BCOPY, 2, caps);
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
    if (params->config->prefer_offload) {
        caps->flags |= PSEL_PROTO_CAP_LAST_RESORT;
    }
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

const psel_proto_t psel_proto_put_short = {
    .name       = "put/offload/short",
    .desc       = "put short",
    .op_mask    = UCS_BIT(PSEL_OP_PUT),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_RMA),
    .init       = psel_put_short_init
};

const psel_proto_t psel_proto_put_bcopy = {
    .name       = "put/offload/bcopy",
    .desc       = "put copy-in",
    .op_mask    = UCS_BIT(PSEL_OP_PUT),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
    .init       = psel_put_bcopy_init
};

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

const psel_proto_t psel_proto_get_bcopy = {
    .name       = "get/bcopy",
    .desc       = "get copy-out",
    .op_mask    = UCS_BIT(PSEL_OP_GET),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
    .init       = psel_get_bcopy_init
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
