/**
 * @file loggp.h
 * LogGP parameters of a selection's protocols, and an alltoall estimate for
 * direct issue and for a CPU proxy.
 *
 * From a protocol's cost lines at a message size (the row of the selection
 * table that covers it):
 *  - single line c_s + m_s·n: one message alone, so L + 2o = c_s, and its
 *    bytes cost G1 = m_s each;
 *  - multi line c_m + m_m·n: per message when streamed, so g = c_m (the gap
 *    between messages) and G = m_m (time per byte, LogGP's G), of the
 *    range that covers n: the multi cost is the envelope of the protocol's
 *    send, wire and receive stages (proto_common.h), one range per stage
 *    that paces it, so g and G are the pacing stage's at n (the sender's
 *    CPU for small messages, the wire for large ones), never a bound mixed
 *    from several stages;
 *  - o, the CPU overhead at each end, from the lanes' attributes:
 *    (o_send + o_recv) / 2 of the slowest lane of the protocol, at most
 *    c_s / 2 (a protocol's line may count less overhead than its lanes
 *    advertise: rndv/get pays cma's 2 us once); then L = c_s - 2o, so
 *    L + 2o is always the selected line's constant.
 * With a calibration the lines are the measured ones, o stays the
 * attributes' (a measurement does not separate o from L).
 *
 * Alltoall among P processes, each sending n bytes to each of the k = P-1
 * others (M = k·n bytes out of every process):
 *  - direct issue: T_d = L + 2o + n·G1 + (k-1)·(g + n·G)
 *    (the first message costs what one message alone does, the single
 *    line; each of the others follows one gap later and streams its bytes
 *    at G, the multi line; overheads overlap as many issuers post in
 *    parallel). With G1 = G it is LogGP's L + 2o + (k-1)·g + M·G; for
 *    P = 2 it is the single line itself.
 *  - CPU proxy:    T_p = T_d + k·o_proxy
 *    (one proxy thread hands over the k requests one after the other,
 *    o_proxy each, before they can go out).
 * T_p / T_d <= 1 + tol from
 * n* = (k·o_proxy/tol - L - 2o - (k-1)·g) / (G1 + (k-1)·G) on; never if
 * both slopes are 0.
 */
#ifndef PSEL_SCALE_LOGGP_H_
#define PSEL_SCALE_LOGGP_H_

#include <ucp_proto_sel/select.h>

#include <stddef.h>

/** LogGP parameters, in seconds and seconds per byte. */
typedef struct psel_loggp {
    double L;    /**< Latency */
    double o;    /**< CPU overhead per message, at each end */
    double g;    /**< Gap between consecutive messages */
    double G;    /**< Time per byte when streaming (LogGP's G) */
    double G1;   /**< Time per byte of a message alone */
} psel_loggp_t;

/**
 * LogGP parameters from one protocol's cost lines (see the file comment).
 *
 * @param [in] single  One message: c + m·n [s].
 * @param [in] multi   Per message when streamed [s].
 * @param [in] o       CPU overhead per message at each end [s].
 */
psel_loggp_t psel_loggp_from_lines(ucs_linear_func_t single,
                                   ucs_linear_func_t multi, double o);

/**
 * LogGP parameters of the protocol a selection table runs at size @a n,
 * with o from the lanes of @a sets named in the protocol's lane list.
 *
 * @param [in]  table  Selection table.
 * @param [in]  sets   The endpoint's lanes by role.
 * @param [in]  n      Message size.
 * @param [out] row_p  The table row used (may be NULL).
 */
psel_loggp_t psel_loggp_at(const psel_select_table_t *table,
                           const psel_lane_sets_t *sets, size_t n,
                           unsigned *row_p);

/** @return T_d for @a procs processes and @a n bytes per peer [s]. */
double psel_alltoall_direct(const psel_loggp_t *p, unsigned procs, size_t n);

/** @return T_p with @a proxy_overhead per request [s]. */
double psel_alltoall_proxy(const psel_loggp_t *p, unsigned procs, size_t n,
                           double proxy_overhead);

/**
 * Smallest n with T_p <= (1 + tol)·T_d under fixed parameters @a p.
 *
 * @return That size (0 if already so at n = 0); SIZE_MAX if never.
 */
size_t psel_alltoall_converge(const psel_loggp_t *p, unsigned procs,
                              double proxy_overhead, double tol);

/**
 * The same over a selection table, whose parameters change from row to
 * row: the smallest n >= 1 where T_p <= (1 + tol)·T_d.
 *
 * @param [out] row_p  The row it falls in (may be NULL).
 *
 * @return That size, or SIZE_MAX if no row gets there.
 */
size_t psel_alltoall_converge_table(const psel_select_table_t *table,
                                    const psel_lane_sets_t *sets,
                                    unsigned procs, double proxy_overhead,
                                    double tol, unsigned *row_p);

#endif
