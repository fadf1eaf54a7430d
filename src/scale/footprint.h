/**
 * @file footprint.h
 * Per-process memory footprint of an endpoint's lanes when the process has
 * N peers, at UCX 1.13.1's default queue lengths and segment sizes.
 *
 * Every term is either paid once per transport interface (shared: a shared
 * receive queue, send buffers, completion queues, a shared-memory FIFO) or
 * once per peer and lane (a reliable-connection queue pair, a socket). The
 * total is shared + per_peer x N. Each term names the UCX setting it comes
 * from and the UCX source file that holds the default, so a user can check
 * it and change it. See docs/scale.md for the model of every transport.
 */
#ifndef PSEL_SCALE_FOOTPRINT_H_
#define PSEL_SCALE_FOOTPRINT_H_

#include <lane_select/lane_engine.h>
#include <lane_select/resource.h>

#include <ucs/type/status.h>
#include <stddef.h>

#define PSEL_FOOTPRINT_MAX_TERMS  64   /**< Terms of one footprint */
#define PSEL_FOOTPRINT_TEXT_MAX   160  /**< Setting and source strings */


/** One term: count x item_size bytes, once or per peer. */
typedef struct psel_footprint_term {
    char     lane[PSEL_LANE_NAME_MAX];  /**< "rc_mlx5/mlx5_0:1" */
    const char *what;                   /**< "receive buffers (shared receive
                                             queue)" */
    int      per_peer;                  /**< Nonzero: paid for every peer */
    int      kernel;                    /**< Nonzero: kernel memory (socket
                                             buffers), not the process's */
    double   count;                     /**< Items: buffers, entries, QPs */
    double   item_size;                 /**< Bytes of one item */
    char     setting[PSEL_FOOTPRINT_TEXT_MAX]; /**< UCX variables and their
                                                    defaults */
    const char *source;                 /**< Where UCX 1.13.1 sets them */
    double   bytes;                     /**< count x item_size x (per_peer ?
                                             peers : 1) */
} psel_footprint_term_t;


/** The footprint of a set of lanes at a number of peers. */
typedef struct psel_footprint {
    size_t   num_peers;                 /**< N */
    unsigned num_terms;
    psel_footprint_term_t terms[PSEL_FOOTPRINT_MAX_TERMS];
    double   shared;                    /**< Sum of the terms paid once */
    double   per_peer;                  /**< Sum of the per-peer process
                                             terms, for one peer */
    double   total;                     /**< shared + per_peer x N: the
                                             process's own memory */
    double   kernel;                    /**< Kernel memory the peers cost
                                             (socket buffers), not in
                                             @a total */
    unsigned num_unmodelled;            /**< Lanes whose transport has no
                                             model (not counted) */
    char     unmodelled[PSEL_MAX_LANES][PSEL_LANE_NAME_MAX];
} psel_footprint_t;


/**
 * Compute the footprint of the lanes of @a lanes at @a num_peers peers.
 * Terms that are paid once are counted once per local resource (interface)
 * even if several lanes use it; per-peer terms once per lane.
 *
 * @param [in]  local      Local resources the lanes index.
 * @param [in]  lanes      The lanes.
 * @param [in]  num_peers  Peers of the process (>= 1).
 * @param [out] fp         The terms and sums.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM if @a num_peers is 0.
 */
ucs_status_t psel_footprint_compute(const psel_resource_table_t *local,
                                    const psel_ep_lanes_t *lanes,
                                    size_t num_peers, psel_footprint_t *fp);

#endif
