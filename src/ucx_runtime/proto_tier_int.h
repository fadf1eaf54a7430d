/**
 * @file proto_tier_int.h
 * Between the protocol tier's core (proto_tier.c: protosel's view of UCP's
 * endpoint configurations, the lines each UCP protocol gets) and its
 * adapter of one era of UCP's protocol API, chosen by configure:
 * proto_tier_init.c (UCX 1.13-1.16: each protocol's init() fills one caps)
 * or proto_tier_probe.c (UCX 1.18 on: probe() adds instances with a perf).
 * Compiled against the internal headers of that UCX (--with-ucx-src).
 */
#ifndef PSEL_UCX_RUNTIME_PROTO_TIER_INT_H_
#define PSEL_UCX_RUNTIME_PROTO_TIER_INT_H_

#include "lines.h"
#include "ucp_map.h"

#include <ucp_proto_sel/calib.h>

#include <lane_select/ucs_compat.h>
#include <ucp/core/ucp_ep.h>
#include <ucp/core/ucp_worker.h>
#include <ucp/proto/proto.h>
#include <ucp/proto/proto_select.inl>


/* The operation and attributes of a selection parameter: 1.15 packed the
 * operation with flags, and the attributes apart */
#if PSEL_UCX_AT_LEAST(1, 15)
#  define psel_pt_param_op_id(_param)   ucp_proto_select_op_id(_param)
#  define psel_pt_param_op_attr(_param) \
    ucp_proto_select_op_attr_unpack((_param)->op_attr)
#else
#  define psel_pt_param_op_id(_param)   ((_param)->op_id)
#  define psel_pt_param_op_attr(_param) \
    ucp_proto_select_op_attr_from_flags((_param)->op_flags)
#endif


/** Ranges UCP keeps per protocol instance, and so the most the tier
 *  writes back */
#define PSEL_PT_MAX_RANGES UCP_PROTO_MAX_PERF_RANGES


/** One of UCP's protocols, as the tier watches it (all of them are). */
typedef struct psel_pt_proto {
    ucp_proto_t                *proto;  /**< UCP's protocol object */
    const psel_ucp_map_entry_t *map;    /**< Its mapping, or NULL */
    int                         op_id;  /**< The id of map->op_name, or -1 */
    void                       *orig;   /**< UCP's own init or probe */
    int                         reported; /**< Said unmapped once */
} psel_pt_proto_t;


/** One selection UCP is making. */
typedef struct psel_pt_select_ctx {
    ucp_worker_h                    worker;
    ucp_worker_cfg_index_t          ep_cfg_index;
    const ucp_ep_config_key_t      *ep_config_key;
    const ucp_proto_select_param_t *select_param;
} psel_pt_select_ctx_t;


/** The UCP protocol UCP calls @a name (by its name's pointer first), or
 *  NULL. */
psel_pt_proto_t *psel_pt_proto_by_name(const char *name);

/** The UCP protocol of id @a proto_id (its index in ucp_protocols). */
psel_pt_proto_t *psel_pt_proto_by_id(unsigned proto_id);

/** Whether a selection parameter is of an operation protosel models. */
int psel_pt_op_modelled(const ucp_proto_select_param_t *param);

/**
 * UCX_PSEL_PROTO_INFO=y: say once that @a pt served @a param's operation
 * and is not in protosel's mapping (it keeps UCP's lines).
 */
void psel_pt_report_unmapped(psel_pt_proto_t *pt,
                             const ucp_proto_select_param_t *param);

/**
 * New lines of one instance of @a pt in a selection. Takes the tier's lock.
 *
 * @param [in]  pt          The protocol.
 * @param [in]  data        What its lines are made of: pt->map, or for a
 *                          PSEL_UCP_MAP_REMOTE protocol the entry of the
 *                          data protocol its peer runs.
 * @param [in]  sel         The selection.
 * @param [in]  orig        UCP's own lines of the instance (ascending).
 * @param [in]  num_orig    Their number (>= 1).
 * @param [in]  min_length  Its first size.
 * @param [out] out         The new lines, PSEL_PT_MAX_RANGES entries.
 * @param [out] orig_index  For each new line, the entry of @a orig it
 *                          starts in.
 * @param [inout] cfg_thresh_p  UCP's configured threshold of the
 *                          instance; set to the one it keeps: UCP's where
 *                          the user configured it, else protosel's forced
 *                          one (UCX_PSEL_RNDV_THRESH) or UCS_MEMUNITS_AUTO.
 *
 * @return The number of new lines, or 0: UCP's stay.
 */
unsigned psel_pt_new_lines(const psel_pt_proto_t *pt,
                           const psel_ucp_map_entry_t *data,
                           const psel_pt_select_ctx_t *sel,
                           const psel_rt_line_t *orig, unsigned num_orig,
                           size_t min_length, psel_rt_line_t *out,
                           unsigned *orig_index, size_t *cfg_thresh_p);


/**
 * Measured rails (proto_tier_rails.c): from now on, the ifaces of devices
 * whose rail @a calib measured (a rail that names no peer) estimate that
 * bandwidth for UCP, which weighs and drops multi-lane protocols' lanes by
 * it. @a say: print each such lane once. Called once, at install.
 */
void psel_pt_rails_init(const psel_calib_t *calib, int say);

/**
 * Give the ifaces of @a key's lanes their measured bandwidth, before UCP's
 * own code of a protocol runs for that endpoint configuration. Cheap when
 * done already.
 */
void psel_pt_rails_apply(ucp_worker_h worker, const ucp_ep_config_key_t *key);


/* The adapter of this build's era */

/** The era's name, for messages ("1.18 and later"). */
extern const char psel_pt_era_name[];

/**
 * Find what the adapter calls in the loaded libucp (by dlsym: the impl
 * has no undefined UCP symbol).
 *
 * @return Nonzero if all is there; else @a why says what is missing.
 */
int psel_pt_era_resolve(void *libucp, char *why, size_t max);

/**
 * Make UCP call the adapter for @a pt: its init or probe replaced by the
 * adapter's wrapper, the original kept in pt->orig.
 *
 * @return Nonzero if done (the protocol object is writable).
 */
int psel_pt_era_wrap(psel_pt_proto_t *pt);

/** Whether @a pt is already wrapped (a second install). */
int psel_pt_era_wrapped(const psel_pt_proto_t *pt);

#endif
