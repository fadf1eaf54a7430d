/*
 * Endpoint init: features -> operations -> protocols -> selectors -> lanes
 * -> thresholds arrays. See ep_config.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "ep_config.h"
#include "calib.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <string.h>

unsigned psel_ep_feature_of_op(psel_op_t op)
{
    switch (op) {
    case PSEL_OP_PUT:
    case PSEL_OP_GET:
        return PSEL_FEATURE_RMA;
    case PSEL_OP_AM_SEND:
        return PSEL_FEATURE_AM;
    default:
        return PSEL_FEATURE_TAG;
    }
}

static uint64_t psel_ep_ops_of_features(unsigned features)
{
    uint64_t ops = 0;
    psel_op_t op;

    for (op = 0; op < PSEL_OP_LAST; ++op) {
        if (features & psel_ep_feature_of_op(op)) {
            ops |= UCS_BIT(op);
        }
    }
    return ops;
}

static void psel_ep_lane_limits(const psel_config_t *config, uint32_t roles,
                                uint64_t op_mask,
                                psel_lane_select_params_t *params)
{
    unsigned limits[PSEL_LANE_ROLE_LAST];
    unsigned role;

    memset(params, 0, sizeof(*params));
    limits[PSEL_LANE_ROLE_AM]     = 1;
    /* as in UCX, UCX_PSEL_MAX_EAGER_LANES counts the am_bw lanes, which
     * rndv/am streams over too */
    limits[PSEL_LANE_ROLE_AM_BW]  = config->max_eager_lanes;
    /* rendezvous and, with put or get, their zero-copy protocols take
     * their lanes from the rma_bw ones */
    limits[PSEL_LANE_ROLE_RMA_BW] = config->max_rndv_lanes;
    if (op_mask & (UCS_BIT(PSEL_OP_PUT) | UCS_BIT(PSEL_OP_GET))) {
        limits[PSEL_LANE_ROLE_RMA_BW] = ucs_max(config->max_rndv_lanes,
                                                config->max_rma_lanes);
    }
    limits[PSEL_LANE_ROLE_AMO]    = 1;
    limits[PSEL_LANE_ROLE_RMA]    = 1;
    for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
        params->max_lanes[role] = (roles & UCS_BIT(role)) ? limits[role] : 0;
    }
    params->max_ratio = config->multi_lane_max_ratio;
}

ucs_status_t psel_ep_config_init(psel_ep_config_t *ep,
                                 const psel_ep_params_t *params)
{
    const psel_config_t *config = params->config;
    const psel_select_table_t *table;
    const psel_proto_t *proto;
    ucs_status_t status;
    unsigned i, op;

    memset(ep, 0, sizeof(*ep));

    /* 1. operations */
    ep->op_mask = psel_ep_ops_of_features(params->features);
    if (ep->op_mask == 0) {
        ucs_error("endpoint init: no operation requested (features 0x%x)",
                  params->features);
        return UCS_ERR_INVALID_PARAM;
    }

    /* 2. protocols, and 3. the selectors the enabled ones need */
    for (i = 0; i < psel_num_builtin_protos; ++i) {
        proto = psel_builtin_protos[i];
        if (!(proto->op_mask & ep->op_mask) ||
            (params->runnable_only && (proto->progress == NULL))) {
            continue;
        }
        ep->protos[ep->num_protos++] = proto;
        if (psel_config_allow_list_match(&config->protos, proto->name)) {
            ep->lane_roles |= proto->lane_roles;
        }
    }

    /* 4. lanes */
    psel_ep_lane_limits(config, ep->lane_roles, ep->op_mask, &ep->lane_params);
    ep->lane_params.locality      = params->locality;
    ep->lane_params.is_reachable  = params->is_reachable;
    ep->lane_params.reachable_arg = params->reachable_arg;
    ep->lane_params.num_eps       = params->num_eps;
    ep->lane_params.measured      = (params->calib != NULL) ?
                                    psel_calib_rail_measured : NULL;
    ep->lane_params.measured_arg  = (void*)params->calib;
    status = psel_lanes_select(params->local, params->remote,
                               &ep->lane_params, &ep->lanes);
    if (status != UCS_OK) {
        return status;
    }

    /* 5. thresholds arrays, and 6. coverage */
    status = psel_select_init(&ep->select, ep->protos, ep->num_protos,
                              &ep->lanes.sets, config);
    if (status != UCS_OK) {
        return status;
    }
    ep->select.calib         = params->calib;
    ep->select.calib_for_ucp = params->calib_for_ucp;
    ep->select.ucp_filter    = params->ucp_filter;

    /* the streaming selection: the same protocols, lanes and calibration,
     * on the multi cost; its tables copy the caps of the first */
    ep->stream_config             = *config;
    ep->stream_config.select_perf = PSEL_PERF_MULTI;
    status = psel_select_init(&ep->stream, ep->protos, ep->num_protos,
                              &ep->lanes.sets, &ep->stream_config);
    if (status != UCS_OK) {
        psel_select_cleanup(&ep->select);
        return status;
    }
    ep->stream.calib         = params->calib;
    ep->stream.calib_for_ucp = params->calib_for_ucp;
    ep->stream.ucp_filter    = params->ucp_filter;
    ep->stream.caps_from     = &ep->select;

    /* the operations with a data path (tag send) must be covered now; the
     * others' tables are built when asked for, and say there what they
     * miss */
    for (op = 0; op < PSEL_OP_LAST; ++op) {
        if (!(ep->op_mask & UCS_BIT(op)) || (op != PSEL_OP_TAG_SEND)) {
            continue;
        }
        status = psel_select_build(&ep->select,
                                   psel_buffer_type(op, PSEL_DT_CONTIG,
                                                    UCS_MEMORY_TYPE_HOST, 1),
                                   &table);
        if (status != UCS_OK) {
            ucs_error("endpoint init: %s is not covered by the lanes from %s "
                      "to %s (see above for each protocol's reason)",
                      psel_op_name(op), params->local->origin,
                      params->remote->origin);
            psel_ep_config_cleanup(ep);
            return status;
        }
    }
    return UCS_OK;
}

void psel_ep_config_cleanup(psel_ep_config_t *ep)
{
    psel_select_cleanup(&ep->stream);
    psel_select_cleanup(&ep->select);
}
