/**
 * @file lane_engine.h
 * Lane selection: selectors score every (local resource, remote resource)
 * pair; the engine picks lanes per role until no selector finds one or the
 * role's lane limit is reached.
 *
 * Selectors and their scores (higher is better), as UCX documents them, with
 * lat = max(local, remote latency), bw = min(local, remote bandwidth),
 * bandwidth = dedicated + shared (one process per node), o_l/o_r = local and
 * remote overhead, reg(x) = the local MD's registration cost:
 *  - am:     short active messages.    1e-3 / (lat + o_l + o_r)
 *  - am_bw:  bcopy/zcopy AM bandwidth.  1 / (256K/bw + lat + o_l)
 *  - rma_bw: get/put zcopy bandwidth.   1 / (256K/bw + lat + o_l + reg(256K))
 *  - amo:    64-bit atomics.            1e-3 / (lat + o_l + o_r)
 *  - rma:    put/get short and bcopy.   1e-3 / (lat + o_l + 4K/bw)
 * Ties go to the higher device priority, then to a peer device of the same
 * name, then to the earlier resource. A device is one dev_name of one device
 * type, whatever the transport; all shared-memory and self transports count
 * as one device (host memory), so they are never multi-lane rails.
 *
 * As in UCX, the am lane is also the first am_bw lane when it can serve
 * that role, so eager messages stay on one lane; extra am_bw lanes (for
 * multi-lane eager or rndv/am) are chosen by score.
 *
 * Multi-lane: a role takes up to its max lanes; a device, local or remote, is
 * reused only up to its dev_num_paths; an extra lane whose bandwidth is below the first lane's
 * divided by max_ratio is dropped (UCX_MULTI_LANE_MAX_RATIO: the ratio of the
 * fastest to the slowest lane).
 * Shares within a role are proportional to bandwidth.
 * Measured lanes (params->measured, from a calibration's rails): a pair
 * whose local "transport/device" was measured against this peer (a rail
 * names the peer device it was measured against; it applies to the lanes
 * of endpoints whose peer has that device: a rail to host B says nothing
 * of the same local device towards host C) takes the measured latency
 * and bandwidth instead of both sides' attributes, in its scores, the
 * ratio check, its shares and the lane's facts. So an extra rail slower
 * than the fastest by more than max_ratio is dropped, shares follow what
 * the rails deliver, and the am lane is the measured fastest: its score
 * also counts the wire time of a PSEL_LANE_AM_MEASURED_SIZE message,
 * since a shaped or congested rail (a token bucket) lets one small message
 * through at full speed and its latency alone cannot tell it apart. A rail
 * is measured with one endpoint: at N endpoints its latency grows as the
 * attributes' does from 1 to N (m·(N-1), rc's 1 ns per QP).
 *
 * Number of peers, as UCP does with its estimated number of endpoints
 * (UCX_NUM_EPS, ucp_params.estimated_num_eps; 1 when not given):
 *  - every latency above is taken at N endpoints: c + m·N
 *    (ucp_wireup_tl_iface_latency(); rc adds 1 ns per connected QP), on
 *    each side, and the lanes' latencies are too;
 *  - local transports whose max eps is below N do not scale to the job
 *    (ucp_is_scalable_transport()). Selection first runs without them; if
 *    that gives no am lane (or no lane at all), it runs again over every
 *    transport, on score alone (ucp_wireup_select_lanes()).
 */
#ifndef PSEL_LANE_SELECT_LANE_ENGINE_H_
#define PSEL_LANE_SELECT_LANE_ENGINE_H_

#include "lane.h"
#include "resource.h"

#include <ucs/type/status.h>
#include <stdio.h>

/** Message size that bandwidth scores are taken at (UCX uses 256K too). */
#define PSEL_LANE_BW_SCORE_SIZE  (256 * 1024)

/** Eager message whose wire time the am score of a measured lane counts. */
#define PSEL_LANE_AM_MEASURED_SIZE  (8 * 1024)

/** One-sided operation that the rma score is taken at (as UCX). */
#define PSEL_LANE_RMA_SCORE_SIZE  4096.0


/**
 * Live reachability: nonzero if local resource @a local reaches the peer's
 * resource @a remote (a worker wraps uct_iface_is_reachable()).
 */
typedef int (*psel_lane_reachable_cb_t)(void *arg, unsigned local,
                                        unsigned remote);


/**
 * Measured latency [s] and bandwidth [B/s] of a lane, by the local
 * "transport/device" name, the peer (@a peer: its resources, whose
 * dev_addr name its devices; "" where not known) and the peer's device the
 * lane reaches (@a remote, one of them): nonzero (both set) if it was
 * measured against that peer.
 */
typedef int (*psel_lane_measured_cb_t)(void *arg, const char *lane_name,
                                       const psel_resource_table_t *peer,
                                       const psel_resource_t *remote,
                                       double *latency, double *bandwidth);


/** Limits of lane selection. */
typedef struct psel_lane_select_params {
    unsigned max_lanes[PSEL_LANE_ROLE_LAST]; /**< Per role, 0 = not needed */
    double   max_ratio;   /**< Drop extra lanes slower than first / ratio */
    int      locality;    /**< PSEL_PEER_* of reachability.h */
    psel_lane_reachable_cb_t is_reachable; /**< Live peers: asks UCT; NULL
                                                for snapshots and imports:
                                                the rules of reachability.h */
    void    *reachable_arg; /**< Argument of @a is_reachable */
    psel_lane_measured_cb_t measured; /**< Measured lanes, or NULL: the
                                           attributes only */
    void    *measured_arg;  /**< Argument of @a measured */
    size_t   num_eps;     /**< Endpoints per process (peers), UCP's
                               est_num_eps; 0 means 1 */
} psel_lane_select_params_t;


/** Where a lane comes from and how it scored. */
typedef struct psel_lane_info {
    unsigned local;                       /**< Index in the local table */
    unsigned remote;                      /**< Index in the remote table */
    unsigned path;                        /**< Path index on the device */
    uint32_t roles;                       /**< Bits of psel_lane_role_t */
    double   score[PSEL_LANE_ROLE_LAST];  /**< Score per role it has */
} psel_lane_info_t;


/** The lanes of one endpoint. */
typedef struct psel_ep_lanes {
    unsigned         num_lanes;              /**< Lanes in use */
    psel_lane_t      lanes[PSEL_MAX_LANES];  /**< Lane attributes */
    psel_lane_info_t info[PSEL_MAX_LANES];   /**< Origin and scores */
    psel_lane_sets_t sets;                   /**< Lanes by role */
    size_t           num_eps;                /**< Endpoints selected for */
    unsigned         unscalable_left_out;    /**< Local resources left out:
                                                  max eps below num_eps */
    int              unscalable_fallback;    /**< Nonzero: those could not
                                                  be left out (nothing that
                                                  scales made an am lane) */
} psel_ep_lanes_t;


/**
 * Select the lanes of an endpoint from @a local to @a remote; reachability
 * is asked of @a params->is_reachable, or follows the rules of
 * reachability.h with @a params->locality when that is NULL.
 *
 * @param [in]  local   Local resources.
 * @param [in]  remote  The peer's resources.
 * @param [in]  params  Limits.
 * @param [out] ep      The lanes.
 *
 * @return UCS_OK; UCS_ERR_UNREACHABLE if no pair is reachable at all;
 *         UCS_ERR_INVALID_PARAM if every role's limit is 0.
 */
ucs_status_t psel_lanes_select(const psel_resource_table_t *local,
                               const psel_resource_table_t *remote,
                               const psel_lane_select_params_t *params,
                               psel_ep_lanes_t *ep);

/** Lanes chosen elsewhere (by stock UCP): pairs and their order per role. */
typedef struct psel_lane_layout {
    size_t   num_eps;                        /**< Endpoints they were chosen
                                                  for (latency growth); 0: 1 */
    unsigned num_lanes;                      /**< Lanes */
    unsigned local[PSEL_MAX_LANES];          /**< Local resource of lane i */
    unsigned remote[PSEL_MAX_LANES];         /**< Remote resource of lane i */
    unsigned path[PSEL_MAX_LANES];           /**< Path on the device of lane i */
    unsigned role_count[PSEL_LANE_ROLE_LAST];/**< Lanes per role */
    unsigned role_lanes[PSEL_LANE_ROLE_LAST][PSEL_MAX_LANES]; /**< Lane
                                                  indices per role, best first */
} psel_lane_layout_t;


/**
 * Copy an endpoint's lanes: the lane sets of @a dst point into @a dst, so
 * @a src may be freed. (A plain struct copy keeps pointers into @a src.)
 *
 * @param [out] dst  The copy.
 * @param [in]  src  Lanes whose sets point into themselves.
 */
void psel_ep_lanes_copy(psel_ep_lanes_t *dst, const psel_ep_lanes_t *src);

/**
 * Build the lanes of an endpoint whose lanes someone else chose: the lane
 * facts of each (local, remote) pair and the role sets in the given order,
 * with bandwidth shares as psel_lanes_select() gives them, and the rma_bw
 * lanes per memory type (those whose memory domain registers it). No
 * scores.
 *
 * @param [in]  local   Local resources.
 * @param [in]  remote  The peer's resources.
 * @param [in]  layout  Pairs and roles; indices must be in range.
 * @param [in]  params  For measured lanes (params->measured), or NULL.
 * @param [out] ep      The lanes; its sets point into it: copy it with
 *                      psel_ep_lanes_copy().
 *
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM for an index out of range.
 */
ucs_status_t psel_lanes_from_layout(const psel_resource_table_t *local,
                                    const psel_resource_table_t *remote,
                                    const psel_lane_layout_t *layout,
                                    const psel_lane_select_params_t *params,
                                    psel_ep_lanes_t *ep);

/**
 * @return Bitmap of the memory types an endpoint's lanes can send from:
 *         host, and each memory type with an rma_bw lane whose MD registers
 *         it or a copy engine (lane.h) that reaches host memory.
 */
uint64_t psel_lane_sets_mem_types(const psel_lane_sets_t *sets);

/** @return The number of endpoints of @a params: num_eps, or 1 if 0. */
size_t psel_lane_num_eps(const psel_lane_select_params_t *params);

/**
 * As UCP's ucp_is_scalable_transport(): does the transport of @a resource
 * support @a num_eps endpoints (max eps >= num_eps)?
 */
int psel_resource_is_scalable(const psel_resource_t *resource, size_t num_eps);

/**
 * Explain a selection: per role, the best local candidates by score (best
 * pair with the peer, at the endpoints the lanes were selected for), the
 * selected ones marked '*', with their latency at that number of endpoints
 * and why a transport was left out (max eps) or lost (latency growth).
 *
 * @param [in] stream  Where to print.
 * @param [in] local   Local resources.
 * @param [in] remote  The peer's resources.
 * @param [in] params  The limits the lanes were selected with.
 * @param [in] ep      The selected lanes.
 */
void psel_lanes_print_candidates(FILE *stream,
                                 const psel_resource_table_t *local,
                                 const psel_resource_table_t *remote,
                                 const psel_lane_select_params_t *params,
                                 const psel_ep_lanes_t *ep);

/** @return Name of a lane role: "am", "am_bw", "rma_bw" or "amo". */
const char *psel_lane_role_name(psel_lane_role_t role);

/** Print the lanes as `ucx_info -e` does: index, transport/device, roles
 *  with scores, and the facts protocol costs are built from. */
void psel_ep_lanes_print(FILE *stream, const psel_ep_lanes_t *ep);

#endif
