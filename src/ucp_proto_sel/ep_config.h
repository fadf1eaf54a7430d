/**
 * @file ep_config.h
 * Endpoint init, in the six steps of the design:
 *  1. the operations come from the requested features;
 *  2. they give the protocols to init (those that serve an operation and pass
 *     UCX_PSEL_PROTOS);
 *  3. those give the lane selectors (each protocol names the roles it needs);
 *  4. lanes are selected over all local/remote pairs, for those roles only;
 *  5. the thresholds array is built for each operation on contiguous host
 *     memory (other buffer types are built on first lookup);
 *  6. an operation left uncovered is an error naming, for each protocol, the
 *     missing capability.
 */
#ifndef PSEL_UCP_PROTO_SEL_EP_CONFIG_H_
#define PSEL_UCP_PROTO_SEL_EP_CONFIG_H_

#include "select.h"

#include <lane_select/lane_engine.h>

/** Features an endpoint is created for. */
enum {
    PSEL_FEATURE_TAG = 1u << 0,  /**< Tagged send/receive */
    PSEL_FEATURE_RMA = 1u << 1,  /**< put and get (cost model only) */
    PSEL_FEATURE_AM  = 1u << 2   /**< Active messages (cost model only) */
};


/** What an endpoint is created from. */
typedef struct psel_ep_params {
    unsigned                     features; /**< PSEL_FEATURE_* */
    const psel_resource_table_t *local;    /**< Local resources */
    const psel_resource_table_t *remote;   /**< The peer's resources */
    int                          locality; /**< PSEL_PEER_* (reachability.h) */
    psel_lane_reachable_cb_t     is_reachable; /**< Live peers; NULL: rules */
    void                        *reachable_arg; /**< Its argument */
    int                          runnable_only; /**< Weigh only protocols
                                                     with a progress function
                                                     (the data path) */
    const psel_config_t         *config;   /**< Settings */
    const struct psel_calib     *calib;    /**< Measured cost lines, or
                                                NULL (calib.h) */
    int                          calib_for_ucp; /**< The selection is for
                                                stock UCP: lines measured
                                                through UCP first
                                                (psel_select_t) */
    psel_select_ucp_filter_t     ucp_filter; /**< With calib_for_ucp: the
                                                lines of protosel's that
                                                stand in for UCP's
                                                (psel_select_t) */
    size_t                       num_eps;  /**< Endpoints per process the
                                                lanes are selected for
                                                (psel_config_num_eps());
                                                0 means 1 */
} psel_ep_params_t;


/** An endpoint configuration: its lanes and its selection. */
typedef struct psel_ep_config {
    uint64_t           op_mask;     /**< Step 1: UCS_BIT(psel_op_t) */
    unsigned           num_protos;  /**< Step 2: protocols to init */
    const psel_proto_t *protos[PSEL_SELECT_MAX_PROTOS];
    uint32_t           lane_roles;  /**< Step 3: UCS_BIT(psel_lane_role_t) */
    psel_lane_select_params_t lane_params; /**< Step 4: the limits */
    psel_ep_lanes_t    lanes;       /**< Step 4 */
    psel_select_t      select;      /**< Step 5: tables, by buffer type,
                                         on config->select_perf */
    psel_config_t      stream_config; /**< The settings, selecting on the
                                         streaming cost (multi) */
    psel_select_t      stream;      /**< Step 5 for sends streamed one
                                         after another (as UCP's
                                         UCP_OP_ATTR_FLAG_MULTI_SEND):
                                         tables on the multi cost, built on
                                         first use, caps from @a select */
} psel_ep_config_t;


/**
 * Initialize an endpoint configuration (steps 1-6).
 *
 * @param [out] ep      Filled on success; release with psel_ep_config_cleanup().
 *                      It must not move: its selections point into it.
 * @param [in]  params  Resources, peer locality and settings; must outlive @a ep.
 *
 * @return UCS_OK; UCS_ERR_UNREACHABLE if no lane reaches the peer;
 *         UCS_ERR_UNSUPPORTED if an operation stays uncovered (logged).
 */
ucs_status_t psel_ep_config_init(psel_ep_config_t *ep,
                                 const psel_ep_params_t *params);

/** The feature (PSEL_FEATURE_*) that enables operation @a op. */
unsigned psel_ep_feature_of_op(psel_op_t op);

/** Release the tables of @a ep. */
void psel_ep_config_cleanup(psel_ep_config_t *ep);

#endif
