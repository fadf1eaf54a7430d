/**
 * @file lane.h
 * A lane as protocols see it: one connection from a local resource to a remote
 * address entry, with the performance facts that protocol costs are built from.
 *
 * Lane selection (select.c in this directory) produces lane sets, one per
 * selector role; protocol definitions consume them. Protocols never look at
 * resources or addresses directly.
 */
#ifndef PSEL_LANE_SELECT_LANE_H_
#define PSEL_LANE_SELECT_LANE_H_

#include "resource.h"

#include <ucs/datastruct/linear_func.h>
#include <ucs/memory/memory_type.h>
#include <stddef.h>
#include <stdint.h>

#define PSEL_MAX_LANES      16  /**< Max lanes of one endpoint */
#define PSEL_LANE_NAME_MAX  64  /**< "tl/dev" */


/** Lane capabilities that protocols check before they apply. */
enum {
    PSEL_LANE_CAP_AM_SHORT  = 1u << 0,
    PSEL_LANE_CAP_AM_BCOPY  = 1u << 1,
    PSEL_LANE_CAP_AM_ZCOPY  = 1u << 2,
    PSEL_LANE_CAP_PUT_ZCOPY = 1u << 3,
    PSEL_LANE_CAP_GET_ZCOPY = 1u << 4,
    PSEL_LANE_CAP_AMO       = 1u << 5,
    PSEL_LANE_CAP_MEM_REG   = 1u << 6,  /**< Its MD registers memory */
    PSEL_LANE_CAP_PUT_SHORT = 1u << 7,
    PSEL_LANE_CAP_PUT_BCOPY = 1u << 8,
    PSEL_LANE_CAP_GET_BCOPY = 1u << 9
};


/** Roles a lane can be selected for; each role has its own selector. */
typedef enum {
    PSEL_LANE_ROLE_AM,      /**< Short active messages: lowest latency */
    PSEL_LANE_ROLE_AM_BW,   /**< bcopy/zcopy active messages: bandwidth */
    PSEL_LANE_ROLE_RMA_BW,  /**< get/put zcopy: bandwidth */
    PSEL_LANE_ROLE_AMO,     /**< Atomic operations */
    PSEL_LANE_ROLE_RMA,     /**< put/get short and bcopy: latency */
    PSEL_LANE_ROLE_LAST
} psel_lane_role_t;


/** Performance facts of one lane, in seconds, bytes and bytes/second. */
typedef struct psel_lane {
    char              name[PSEL_LANE_NAME_MAX]; /**< "tl/dev", for dumps */
    unsigned          index;          /**< Lane index in the endpoint */
    unsigned          md_index;       /**< Memory domain; lanes with the same
                                           one share a registration */
    uint32_t          caps;           /**< PSEL_LANE_CAP_* */
    double            latency;        /**< One-way network latency [s] */
    double            bandwidth;      /**< Bandwidth of this lane [B/s] */
    double            overhead_send;  /**< Sender CPU overhead per op [s] */
    double            overhead_recv;  /**< Receiver CPU overhead per op [s] */
    ucs_linear_func_t reg_cost;       /**< Memory registration: c [s] + m [s/B] */
    psel_op_limits_t  am;             /**< Active messages: short, bcopy
                                           and zcopy sizes, zcopy alignment
                                           and iov entries (the local
                                           iface's uct_iface_attr.cap.am) */
    psel_op_limits_t  get;            /**< get's limits (cap.get) */
    psel_op_limits_t  put;            /**< put's limits (cap.put) */
    uint64_t          reg_mem_types;  /**< Memory types its zero-copy operations
                                           reach: registered, or accessed by an
                                           MD that needs no memory handle */
    uint64_t          access_mem_types; /**< Memory types the lane's MD
                                             accesses without registration */
    int               op_valid;       /**< Nonzero if @a op holds the
                                           per-operation costs; else the
                                           protocols use latency and the
                                           overheads above for every class */
    psel_op_cost_t    op[PSEL_OP_CLASS_LAST]; /**< Per operation class (UCX's
                                           uct_iface_estimate_perf): latency
                                           the larger of both ends', send
                                           CPU the local end's, receive CPU
                                           the remote end's */
} psel_lane_t;


/**
 * The limits of the operation a lane capability names: get's for
 * PSEL_LANE_CAP_GET_*, put's for PSEL_LANE_CAP_PUT_*, else am's. Each
 * operation keeps its own: a protocol that reads checks get's sizes and
 * iov entries, one that writes put's.
 */
static inline const psel_op_limits_t *
psel_lane_op_limits(const psel_lane_t *lane, uint32_t cap)
{
    switch (cap) {
    case PSEL_LANE_CAP_GET_ZCOPY:
    case PSEL_LANE_CAP_GET_BCOPY:
        return &lane->get;
    case PSEL_LANE_CAP_PUT_SHORT:
    case PSEL_LANE_CAP_PUT_BCOPY:
    case PSEL_LANE_CAP_PUT_ZCOPY:
        return &lane->put;
    default:
        return &lane->am;
    }
}


/** The lanes chosen for one role, best first, with bandwidth shares. */
typedef struct psel_lane_set {
    unsigned          count;                 /**< Number of lanes */
    const psel_lane_t *lanes[PSEL_MAX_LANES];/**< The lanes, best first */
    double            shares[PSEL_MAX_LANES];/**< Share of bytes; sums to 1 */
} psel_lane_set_t;


/**
 * Does lane @a i of @a set use a memory domain that no earlier lane of the
 * set uses? Registration is paid once per memory domain; md_index values
 * are compared as they are (any number of domains).
 */
static inline int psel_lane_set_md_is_new(const psel_lane_set_t *set,
                                          unsigned i)
{
    unsigned j;

    for (j = 0; j < i; ++j) {
        if (set->lanes[j]->md_index == set->lanes[i]->md_index) {
            return 0;
        }
    }
    return 1;
}


/**
 * A copy engine between host memory and one other memory type: the local
 * transport UCX's memory-type endpoint would copy with (cuda_copy, gdr_copy,
 * rocm_copy: an accelerator transport whose MD accesses that memory type).
 */
typedef struct psel_memtype_copy {
    char              name[PSEL_LANE_NAME_MAX]; /**< "gdr_copy/cuda"; "" if
                                                     there is none */
    ucs_linear_func_t time;  /**< One copy of x bytes: c = latency +
                                  overhead [s], m = 1/bandwidth [s/B] */
} psel_memtype_copy_t;


/** All lane sets of an endpoint, by role and by memory type. */
typedef struct psel_lane_sets {
    psel_lane_set_t     role[PSEL_LANE_ROLE_LAST];
    /** rma_bw lanes whose local memory domain registers each memory type,
     *  selected per memory type as UCX does; [HOST] holds the same lanes as
     *  role[PSEL_LANE_ROLE_RMA_BW] */
    psel_lane_set_t     rma_bw_mem[UCS_MEMORY_TYPE_LAST];
    /** Per memory type: the copy engine with the lowest latency (pack and
     *  unpack of eager and bcopy data: UCX's get/put_short memtype copy) */
    psel_memtype_copy_t copy_short[UCS_MEMORY_TYPE_LAST];
    /** Per memory type: the copy engine with the highest bandwidth (staging
     *  of rendezvous fragments: UCX's get/put_zcopy memtype copy) */
    psel_memtype_copy_t copy_zcopy[UCS_MEMORY_TYPE_LAST];
} psel_lane_sets_t;

#endif
