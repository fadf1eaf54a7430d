/**
 * @file select.h
 * The selection engine: for each (operation, buffer type) it computes the
 * lower envelope of the applicable protocols' cost lines over 0..SIZE_MAX and
 * stores it as an array of <max_length, protocol> whose last entry ends at
 * SIZE_MAX. A lookup walks that array.
 *
 * Rules, in order, at every message size x:
 *  1. A protocol applies if it serves the operation, passes UCX_PSEL_PROTOS,
 *     its init accepted the buffer type, and min_length <= x <= its max.
 *     One flagged PSEL_PROTO_CAP_LAST_RESORT (put and get by active
 *     messages, UCX_PSEL_PREFER_OFFLOAD=y) applies only where no other
 *     does.
 *  2. Forced thresholds (UCX_PSEL_RNDV_THRESH, UCX_PSEL_ZCOPY_THRESH): a
 *     protocol with cfg_thresh above x is disabled. If some applicable
 *     protocol has cfg_thresh <= x, it is forced: protocols of lower
 *     cfg_priority than the highest forced one drop out (eager zcopy has
 *     priority 1, rendezvous 2, the rest 0), so UCX_PSEL_ZCOPY_THRESH ends
 *     bcopy and UCX_PSEL_RNDV_THRESH ends eager, as in UCX.
 *  3. The cheapest cost (perf flavour from UCX_PSEL_SELECT_PERF) wins. Exact
 *     ties go to the lower slope (it stays cheaper for larger sizes). Where
 *     two lines are the same line, the other flavour's lines decide the
 *     same way, then the earlier protocol in the list.
 *  4. Rendezvous bias: protocols flagged PSEL_PROTO_CAP_RNDV_BIAS compete with
 *     cost·d, d = 1 - UCX_PSEL_RNDV_PERF_DIFF/100, as in the seed formula. To
 *     keep thresholds stable when cost lines are nearly parallel, the bias can
 *     move a boundary by at most a factor of 2: a protocol that wins at x only
 *     thanks to the bias keeps x only if it wins without the bias somewhere
 *     in [x/2, 2x]. Without that bound a 1% bias can move the crossover of two
 *     almost parallel lines by orders of magnitude.
 */
#ifndef PSEL_UCP_PROTO_SEL_SELECT_H_
#define PSEL_UCP_PROTO_SEL_SELECT_H_

#include "proto.h"

#include <ucs/datastruct/khash.h>
#include <ucs/sys/compiler_def.h>

#define PSEL_SELECT_MAX_PROTOS  32  /**< Protocols one selection can weigh */


/** One row of a thresholds array. */
typedef struct psel_select_elem {
    size_t              max_length;  /**< Last size this row covers */
    const psel_proto_t *proto;       /**< The protocol to run */
    const void         *priv;        /**< Its private config */
    unsigned            proto_index; /**< Index in the selection's list */
} psel_select_elem_t;


/** Thresholds array of one buffer type, and what it was computed from. */
typedef struct psel_select_table {
    psel_buffer_type_t  buf_type;    /**< Key */
    unsigned            count;       /**< Rows */
    psel_select_elem_t *elems;       /**< Rows; the last ends at SIZE_MAX */
    unsigned            num_protos;  /**< Entries in @a protos, @a caps,
                                          @a status */
    const psel_proto_t *const *protos; /**< The candidates */
    psel_proto_caps_t  *caps;        /**< Each protocol's caps (for dumps) */
    ucs_status_t       *status;      /**< Each protocol's init result;
                                          UCS_ERR_NO_ELEM if filtered out */
} psel_select_table_t;


/** A caps flag selection sets beside PSEL_PROTO_CAP_CALIBRATED: the
 *  measured lines are stock UCP's (select->calib_for_ucp). Above the bits
 *  of proto.h's PSEL_PROTO_CAP_*, which protocols set. */
#define PSEL_SELECT_CAP_MEASURED_UCP (1u << 16)


/**
 * For a table for stock UCP (psel_select_t::calib_for_ucp): whether a
 * protocol's own line, not measured through UCP, describes what UCP's
 * protocol of that name does (its caps say how it moves the data). The
 * runtime library's era mapping gives it (ucx_runtime/ucp_map.h).
 *
 * @param [in]  proto  The protocol.
 * @param [in]  caps   Its caps from its init (and calibration).
 * @param [out] why    Why not, when not.
 * @param [in]  max    Size of @a why.
 *
 * @return Nonzero if the line stands in for UCP's.
 */
typedef int (*psel_select_ucp_filter_t)(const psel_proto_t *proto,
                                        const psel_proto_caps_t *caps,
                                        char *why, size_t max);


/* The key's low byte is the operation, the same for most keys: mix the bits
 * (Wang's hash) rather than hash the key to itself. */
KHASH_INIT(psel_select_tables, khint32_t, psel_select_table_t*, 1,
           kh_int_hash_func2, kh_int_hash_equal)


/** The selection of one endpoint configuration. */
typedef struct psel_select {
    const psel_proto_t *const *protos;     /**< Candidate protocols */
    unsigned                   num_protos; /**< Entries in @a protos */
    uint64_t                   enabled;    /**< Bit i: protos[i] passes the
                                                allow-list */
    const psel_lane_sets_t    *lanes;      /**< Lanes, by role */
    const psel_config_t       *config;     /**< Settings */
    const struct psel_calib   *calib;      /**< Measured cost lines that
                                                replace the protocols' own
                                                (calib.h), or NULL */
    int                        calib_for_ucp; /**< The table is for stock
                                                UCP (libprotosel_ucx.so,
                                                --ucx-env): lines measured
                                                through UCP first, then
                                                protosel's; protocols UCP
                                                did not run are out */
    psel_select_ucp_filter_t   ucp_filter; /**< With calib_for_ucp: a
                                                protocol whose line (not
                                                measured through UCP) it
                                                refuses is out; NULL: none
                                                is refused */
    struct psel_select        *caps_from;  /**< A selection whose protocols'
                                                caps this one copies rather
                                                than running their inits
                                                again, or NULL (see
                                                psel_select_init()) */
    psel_select_table_t       *fast[PSEL_OP_LAST]; /**< Contig host tables */
    khash_t(psel_select_tables) tables;    /**< All tables, by key */
} psel_select_t;


/**
 * The switch margin of @a select's tables (UCX_PSEL_SWITCH_MARGIN): a
 * protocol takes sizes from the one serving the sizes below only where it
 * costs less than (1 - margin) times that one's; where the candidates
 * change, the first of the list (the natural order) stays unless a later
 * one beats it by the margin. "auto": twice the run spread the
 * calibration recorded (psel_config.h), or PSEL_SWITCH_MARGIN_ATTR on
 * attribute lines.
 *
 * @return The margin, a fraction (0 <= margin < 0.5).
 */
double psel_select_switch_margin(const psel_select_t *select);

/** @return Where psel_select_switch_margin() came from, for the dumps. */
const char *psel_select_switch_margin_source(const psel_select_t *select);

/**
 * Prepare a selection. Tables are built by psel_select_build() or on first
 * lookup of a buffer type. @a protos, @a lanes and @a config must outlive it.
 * To select on measured cost lines, set select->calib before the first
 * build: a protocol whose (name, lanes, memory type) the calibration has
 * gets the measured ranges in place of its own (psel_calib_apply()), for
 * contiguous buffers only (what psel_calibrate measures); iov and generic
 * datatypes keep the attribute lines. With select->calib_for_ucp, the
 * lines measured through stock UCP come first (psel_calib_apply_for_ucp(),
 * caps flag PSEL_SELECT_CAP_MEASURED_UCP), and a protocol the calibration
 * found UCP does not run over its lanes is unsupported.
 *
 * A protocol's caps depend only on the protocol, the buffer type, the lanes,
 * the settings but select_perf, and the calibration. Several selections over
 * the same of those (other subsets of the protocols, or the other
 * select_perf) may set select->caps_from to one of them before the first
 * build: a table then copies each protocol's caps and status from the
 * source's table of the same buffer type (built if needed) instead of
 * running the protocol's init and calibration again. A protocol the source
 * does not have, or whose allow-list verdict differs, and a source over
 * other lanes or another calibration, run their own init: the tables are
 * the same either way.
 *
 * @param [out] select      Selection to initialize.
 * @param [in]  protos      Candidate protocols, in tie-break order.
 * @param [in]  num_protos  Number of candidates (<= PSEL_SELECT_MAX_PROTOS).
 * @param [in]  lanes       Lanes by role, handed to protocol init.
 * @param [in]  config      Settings.
 */
ucs_status_t psel_select_init(psel_select_t *select,
                              const psel_proto_t *const *protos,
                              unsigned num_protos,
                              const psel_lane_sets_t *lanes,
                              const psel_config_t *config);

/** Release all tables. */
void psel_select_cleanup(psel_select_t *select);

/**
 * Build (or find) the table of a buffer type. A size range that no protocol
 * covers is an error naming the operation, the buffer type, the sizes and
 * why each protocol is out.
 *
 * @param [in]  select    Selection.
 * @param [in]  buf_type  Buffer type.
 * @param [out] table_p   The table, owned by @a select.
 */
ucs_status_t psel_select_build(psel_select_t *select,
                               psel_buffer_type_t buf_type,
                               const psel_select_table_t **table_p);

/** Slow path of psel_select_lookup(): build the table, then look up. */
const psel_select_elem_t *
psel_select_lookup_slow(psel_select_t *select, psel_buffer_type_t buf_type,
                        size_t length);


/** Row of @a table that covers @a length. */
static UCS_F_ALWAYS_INLINE const psel_select_elem_t *
psel_select_table_find(const psel_select_table_t *table, size_t length)
{
    const psel_select_elem_t *elem = table->elems;

    /* the last row ends at SIZE_MAX, so the walk always stops */
    while (length > elem->max_length) {
        ++elem;
    }
    return elem;
}


/**
 * Fast path: contiguous host memory, no hashing.
 *
 * @return The row for @a length, or NULL if that table could not be built.
 */
static UCS_F_ALWAYS_INLINE const psel_select_elem_t *
psel_select_lookup_fast(psel_select_t *select, psel_op_t op, size_t length)
{
    const psel_select_table_t *table = select->fast[op];

    if (ucs_likely(table != NULL)) {
        return psel_select_table_find(table, length);
    }
    return psel_select_lookup_slow(select,
                                   psel_buffer_type(op, PSEL_DT_CONTIG,
                                                    UCS_MEMORY_TYPE_HOST, 1),
                                   length);
}


/**
 * Look up the protocol for a message: hash the buffer type, then walk its
 * array. Builds the table on first use.
 *
 * @return The row for @a length, or NULL if the table could not be built.
 */
static UCS_F_ALWAYS_INLINE const psel_select_elem_t *
psel_select_lookup(psel_select_t *select, psel_buffer_type_t buf_type,
                   size_t length)
{
    khiter_t iter;

    iter = kh_get(psel_select_tables, &select->tables, buf_type.key);
    if (ucs_likely(iter != kh_end(&select->tables))) {
        return psel_select_table_find(kh_val(&select->tables, iter), length);
    }
    return psel_select_lookup_slow(select, buf_type, length);
}


/**
 * Cost of a protocol at a size, as the engine compares it (bias included).
 *
 * @param [in] select  Selection (for the perf flavour and the bias).
 * @param [in] caps    The protocol's caps.
 * @param [in] length  Message size; must be within the protocol's ranges.
 * @param [in] biased  Apply the rendezvous bias if the protocol has it.
 *
 * @return Time [s].
 */
double psel_select_cost(const psel_select_t *select,
                        const psel_proto_caps_t *caps, size_t length,
                        int biased);

/** The perf range of @a caps that covers @a length, or NULL. */
const psel_perf_range_t *psel_proto_caps_range(const psel_proto_caps_t *caps,
                                               size_t length);

/** @return Largest size the protocol handles. */
static inline size_t psel_proto_caps_max_length(const psel_proto_caps_t *caps)
{
    return caps->ranges[caps->num_ranges - 1].max_length;
}

/** Whether protos[@a i] of @a select serves the operation of @a table: the
 *  others are never weighed there, and listings leave them out */
static inline int psel_select_serves(const psel_select_t *select,
                                     const psel_select_table_t *table,
                                     unsigned i)
{
    return !!(select->protos[i]->op_mask & UCS_BIT(table->buf_type.op));
}

#endif
