/**
 * @file ucx_thresh.h
 * UCX 1.x's own rendezvous threshold (protocols v1,
 * ucp_ep_config_calc_rndv_thresh() in ucp/core/ucp_ep.c, the "multilane"
 * formula of the design brief), computed over protosel's lanes, so that the
 * explain mode can show it beside protosel's envelope result with the terms
 * that make them differ. Nothing here changes protosel's own selection.
 *
 * With d = 1 - UCX_RNDV_PERF_DIFF/100, rrc = 1 (the receiver registers for
 * get/put), e the eager zcopy lanes (am_bw) and r the rendezvous lanes
 * (rma_bw), each summed once per memory domain that registers:
 *   num = d·(r.reg_c·(1+rrc) + 2·rts_lat + 2·r.lat + 2·e.ovh + r.ovh)
 *         - e.reg_c - e.ovh
 *   den = e.reg_m + 1/min(e.bw, bcopy_bw) - d·(r.reg_m·(1+rrc) + 1/r.bw)
 *   thresh = max(num/den, max_bcopy of the first eager lane)
 * where r.lat and r.ovh (and e's) are the SUMS of the lanes' latencies and
 * overheads (one per MD), e.bw sums 1/(1/bw + (zcopy send pre+post) /
 * max_bcopy) per lane, r.bw the lanes' bandwidths, rts_lat the first eager
 * lane's latency. num <= 0 or den <= 0 falls back to UCX_RNDV_THRESH_FALLBACK
 * (inf).
 */
#ifndef PSEL_UCP_PROTO_SEL_UCX_THRESH_H_
#define PSEL_UCP_PROTO_SEL_UCX_THRESH_H_

#include "select.h"

#include <stdio.h>


/** The terms of UCX 1.x's threshold, for the explanation. */
typedef struct psel_ucx_thresh {
    int    valid;         /**< Nonzero if both lane sets exist */
    int    fallback;      /**< num or den <= 0: UCX falls back to inf */
    double d;             /**< 1 - rndv_perf_diff/100 */
    double bcopy_bw;      /**< Copy bandwidth [B/s] UCX's formula caps at */
    double rts_latency;   /**< First eager lane's latency [s] */
    double e_reg_c, e_reg_m, e_overhead, e_bw;  /**< Eager lanes' sums */
    double r_reg_c, r_reg_m, r_overhead, r_latency, r_bw; /**< Rendezvous */
    size_t max_bcopy;     /**< Floor: the first eager lane's max bcopy */
    double numerator;     /**< [s] */
    double denominator;   /**< [s/B] */
    double thresh;        /**< The threshold [B] (SIZE_MAX on fallback) */
} psel_ucx_thresh_t;


/**
 * Compute UCX 1.x's rendezvous threshold over the lanes of a selection: its
 * am_bw lanes as the eager lanes and the rma_bw lanes of host memory as the
 * rendezvous lanes, with protosel's copy bandwidth (UCX_PSEL_BCOPY_BW) and
 * rendezvous bias (UCX_PSEL_RNDV_PERF_DIFF) standing for UCX's.
 *
 * @param [in]  select  Selection (lanes and config).
 * @param [out] out     The terms and the threshold.
 */
void psel_ucx_thresh_compute(const psel_select_t *select,
                             psel_ucx_thresh_t *out);


/**
 * Print, after an explained table, UCX 1.x's threshold with its terms, next
 * to where protosel's table starts rendezvous, and the terms by which the
 * two models differ.
 *
 * @param [in] stream  Where to print.
 * @param [in] select  Selection.
 * @param [in] table   A contig host table of @a select.
 */
void psel_ucx_thresh_dump(FILE *stream, const psel_select_t *select,
                          const psel_select_table_t *table);

#endif
