/*
 * LogGP parameters from cost lines and the alltoall estimate; see loggp.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "loggp.h"

#include <ucs/sys/math.h>
#include <math.h>
#include <string.h>

psel_loggp_t psel_loggp_from_lines(ucs_linear_func_t single,
                                   ucs_linear_func_t multi, double o)
{
    psel_loggp_t p;

    /* L + 2o is the single line's constant: a protocol may count less
     * overhead than its lanes advertise (rndv/get pays cma's 2 us once) */
    p.o = ucs_max(ucs_min(o, single.c / 2), 0.0);
    p.L = single.c - (2 * p.o);
    p.g  = multi.c;
    p.G  = multi.m;
    p.G1 = single.m;
    return p;
}

/* The slowest overhead of the lanes named in "a/b+c/d" */
static double psel_loggp_lanes_overhead(const psel_lane_sets_t *sets,
                                        const char *names)
{
    const psel_lane_t *lane;
    double o = 0;
    unsigned role, i;
    size_t len;

    while (*names != '\0') {
        len = strcspn(names, "+");
        for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
            for (i = 0; i < sets->role[role].count; ++i) {
                lane = sets->role[role].lanes[i];
                if ((strlen(lane->name) == len) &&
                    !strncmp(lane->name, names, len)) {
                    o = ucs_max(o, (lane->overhead_send +
                                    lane->overhead_recv) / 2);
                }
            }
        }
        names += len + (names[len] == '+');
    }
    return o;
}

psel_loggp_t psel_loggp_at(const psel_select_table_t *table,
                           const psel_lane_sets_t *sets, size_t n,
                           unsigned *row_p)
{
    const psel_select_elem_t *elem = psel_select_table_find(table, n);
    const psel_proto_caps_t *caps  = &table->caps[elem->proto_index];
    const psel_perf_range_t *range = psel_proto_caps_range(caps, n);

    if (row_p != NULL) {
        *row_p = (unsigned)(elem - table->elems);
    }
    /* the range covering n: its multi line is the stage that paces a
     * stream of n-byte messages (the envelope's piece at n), its single
     * line one message alone */
    return psel_loggp_from_lines(range->perf[PSEL_PERF_SINGLE],
                                 range->perf[PSEL_PERF_MULTI],
                                 psel_loggp_lanes_overhead(sets, caps->lanes));
}

double psel_alltoall_direct(const psel_loggp_t *p, unsigned procs, size_t n)
{
    double k = (procs > 1) ? (double)(procs - 1) : 0;

    if (k == 0) {
        return 0;
    }
    return p->L + (2 * p->o) + ((double)n * p->G1) +
           ((k - 1) * (p->g + ((double)n * p->G)));
}

double psel_alltoall_proxy(const psel_loggp_t *p, unsigned procs, size_t n,
                           double proxy_overhead)
{
    double k = (procs > 1) ? (double)(procs - 1) : 0;

    return psel_alltoall_direct(p, procs, n) + (k * proxy_overhead);
}

size_t psel_alltoall_converge(const psel_loggp_t *p, unsigned procs,
                              double proxy_overhead, double tol)
{
    double k = (procs > 1) ? (double)(procs - 1) : 0;
    double excess, slope, n;

    if ((k == 0) || (proxy_overhead <= 0)) {
        return 0;
    }
    /* k·o_proxy <= tol·(fixed + n·slope) */
    excess = (k * proxy_overhead / tol) -
             (p->L + (2 * p->o) + ((k - 1) * p->g));
    slope  = p->G1 + ((k - 1) * p->G);
    if (excess <= 0) {
        return 0;
    }
    if (!(slope > 0)) {
        return SIZE_MAX;
    }
    n = excess / slope;
    if (!isfinite(n) || (n >= (double)SIZE_MAX)) {
        return SIZE_MAX;
    }
    return (size_t)ceil(n);
}

size_t psel_alltoall_converge_table(const psel_select_table_t *table,
                                    const psel_lane_sets_t *sets,
                                    unsigned procs, double proxy_overhead,
                                    double tol, unsigned *row_p)
{
    size_t start, end, n, piece;
    const psel_proto_caps_t *caps;
    psel_loggp_t p;
    unsigned row;

    for (row = 0; row < table->count; ++row) {
        start = (row == 0) ? 1 : (table->elems[row - 1].max_length + 1);
        end   = table->elems[row].max_length;
        caps  = &table->caps[table->elems[row].proto_index];
        /* a row may span several ranges of its protocol */
        for (; start <= end; start = piece + 1) {
            piece = ucs_min(psel_proto_caps_range(caps, start)->max_length,
                            end);
            p     = psel_loggp_at(table, sets, start, NULL);
            n     = psel_alltoall_converge(&p, procs, proxy_overhead, tol);
            if (n <= piece) {
                if (row_p != NULL) {
                    *row_p = row;
                }
                return ucs_max(n, start);
            }
            if (piece == SIZE_MAX) {
                break;
            }
        }
    }
    return SIZE_MAX;
}
