/*
 * Crossovers of a transport setup's fitted lines, checked by measuring the
 * two protocols that meet there in alternation. See calib.h,
 * psel_calib_crossovers() and psel_calib_cross_judge(), and docs/calibration.md,
 * "Crossovers measured in alternation".
 */
#include "calib_int.h"

#include <ucs/sys/math.h>

#include <math.h>

/* Sizes the crossover scan looks at per doubling, before it bisects */
#define PSEL_CALIB_CROSS_SCAN_STEPS 16

/* The first size in (lo, hi] where the winner is no longer the one at lo */
static size_t psel_calib_cross_bisect(const psel_calib_order_entry_t *entries,
                                      unsigned num, psel_perf_type_t t,
                                      size_t lo, size_t hi)
{
    int w_lo = psel_calib_winner(entries, num, lo, t);
    size_t mid;

    while (hi - lo > 1) {
        mid = lo + (hi - lo) / 2;
        if (psel_calib_winner(entries, num, mid, t) == w_lo) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return hi;
}

unsigned psel_calib_crossovers(const psel_calib_order_entry_t *entries,
                               unsigned num, psel_perf_type_t t,
                               size_t max_size,
                               psel_calib_crossover_t *crossovers,
                               unsigned max)
{
    double step = pow(2.0, 1.0 / PSEL_CALIB_CROSS_SCAN_STEPS);
    size_t prev = 1, size, at;
    unsigned count = 0;
    int w_prev, w;

    w_prev = psel_calib_winner(entries, num, prev, t);
    while ((prev < max_size) && (count < max)) {
        size = ucs_min(ucs_max((size_t)(prev * step), prev + 1), max_size);
        w    = psel_calib_winner(entries, num, size, t);
        if (w != w_prev) {
            at = psel_calib_cross_bisect(entries, num, t, prev, size);
            w  = psel_calib_winner(entries, num, at, t);
            if ((w_prev >= 0) && (w >= 0)) {
                crossovers[count].t     = t;
                crossovers[count].below = w_prev;
                crossovers[count].above = w;
                crossovers[count].size  = at;
                ++count;
            }
            size = at;
        }
        prev   = size;
        w_prev = w;
    }
    return count;
}

void psel_calib_line_scale(psel_calib_line_t *line, psel_perf_type_t t,
                           double factor)
{
    ucs_linear_func_t *perf;
    unsigned r;

    for (r = 0; r < line->num_ranges; ++r) {
        perf     = &line->ranges[r].perf[t];
        perf->m *= factor;
        /* a range taken out of the table stays out by the same hour */
        perf->c  = (perf->c >= PSEL_CALIB_OUT_OF_TABLE) ?
                   PSEL_CALIB_OUT_OF_TABLE +
                   (perf->c - PSEL_CALIB_OUT_OF_TABLE) * factor :
                   perf->c * factor;
    }
}

/* Where the pair of @a c meets after a change, near its old size: 0 when
 * the upper one no longer takes over from the lower one below max_size */
static size_t psel_calib_cross_moved(const psel_calib_order_entry_t *entries,
                                     unsigned num,
                                     const psel_calib_crossover_t *c,
                                     size_t max_size)
{
    psel_calib_crossover_t found[PSEL_CALIB_MAX_CROSSOVERS];
    unsigned n, i;

    n = psel_calib_crossovers(entries, num, c->t, max_size, found,
                              PSEL_CALIB_MAX_CROSSOVERS);
    for (i = 0; i < n; ++i) {
        if ((found[i].below == c->below) && (found[i].above == c->above)) {
            return found[i].size;
        }
    }
    return 0;
}

static int psel_calib_cross_usable(double t)
{
    return isfinite(t) && (t > 0);
}

psel_calib_cross_verdict_t
psel_calib_cross_judge(psel_calib_order_entry_t *entries, unsigned num,
                       const psel_calib_crossover_t *c,
                       const psel_calib_cross_point_t *points,
                       unsigned num_points, size_t max_size,
                       ucs_string_buffer_t *report)
{
    psel_calib_line_t *below = entries[c->below].line;
    psel_calib_line_t *above = entries[c->above].line;
    const char *flavour      = psel_calib_flavour_name(c->t);
    double log_sum = 0, spread = 0, round, fit_ratio, factor;
    const psel_calib_cross_point_t *p;
    unsigned i, used = 0;
    size_t moved;

    for (i = 0; i < num_points; ++i) {
        p         = &points[i];
        fit_ratio = psel_calib_model(above, p->size, c->t) /
                    psel_calib_model(below, p->size, c->t);
        if (!psel_calib_cross_usable(p->below[0]) ||
            !psel_calib_cross_usable(p->below[1]) ||
            !psel_calib_cross_usable(p->above[0]) ||
            !psel_calib_cross_usable(p->above[1]) ||
            !psel_calib_cross_usable(fit_ratio)) {
            continue;
        }
        /* each protocol's first and last measurement: apart by more than
         * the level tolerance, the machine changed speed meanwhile */
        round = ucs_max(ucs_max(p->below[0], p->below[1]) /
                        ucs_min(p->below[0], p->below[1]),
                        ucs_max(p->above[0], p->above[1]) /
                        ucs_min(p->above[0], p->above[1])) - 1;
        if (round > PSEL_CALIB_CROSS_SETTLED + p->spread) {
            ucs_string_buffer_appendf(report, "%s -> %s over %s at %zu B "
                                      "(%s): the lines are kept: the "
                                      "machine's speed changed while they "
                                      "were measured in alternation (%zu "
                                      "B: %.0f%% between two measurements "
                                      "of one protocol)\n", below->proto,
                                      above->proto, above->lanes, c->size,
                                      flavour, p->size, 100 * round);
            return PSEL_CALIB_CROSS_UNSETTLED;
        }
        log_sum += log(((p->above[0] + p->above[1]) /
                        (p->below[0] + p->below[1])) / fit_ratio);
        spread   = ucs_max(spread, p->spread);
        ++used;
    }
    if (used == 0) {
        ucs_string_buffer_appendf(report, "%s -> %s over %s at %zu B (%s): "
                                  "the lines are kept: no size around it "
                                  "could be measured with both\n",
                                  below->proto, above->proto, above->lanes,
                                  c->size, flavour);
        return PSEL_CALIB_CROSS_UNSETTLED;
    }

    /* how much slower the upper protocol ran, relative to the lower one,
     * than their lines say: the geometric mean over the sizes */
    factor = exp(log_sum / used);
    if (fabs(log(factor)) <= log1p(PSEL_CALIB_CROSS_MARGIN + spread)) {
        ucs_string_buffer_appendf(report, "%s -> %s over %s at %zu B (%s): "
                                  "the lines hold (measured in alternation "
                                  "at %u sizes: %+.1f%%, within %.1f%%)\n",
                                  below->proto, above->proto, above->lanes,
                                  c->size, flavour, used,
                                  100 * (factor - 1),
                                  100 * (PSEL_CALIB_CROSS_MARGIN + spread));
        return PSEL_CALIB_CROSS_HOLDS;
    } else if ((factor > PSEL_CALIB_CROSS_MAX_FACTOR) ||
               (factor < 1.0 / PSEL_CALIB_CROSS_MAX_FACTOR)) {
        ucs_string_buffer_appendf(report, "%s -> %s over %s at %zu B (%s): "
                                  "the lines are kept: measured in "
                                  "alternation %s is %.2fx its line "
                                  "relative to %s's, beyond the %.0fx a "
                                  "drift between two sweeps explains\n",
                                  below->proto, above->proto, above->lanes,
                                  c->size, flavour, above->proto, factor,
                                  below->proto, PSEL_CALIB_CROSS_MAX_FACTOR);
        return PSEL_CALIB_CROSS_UNSETTLED;
    }

    psel_calib_line_scale(above, c->t, factor);
    moved = psel_calib_cross_moved(entries, num, c, max_size);
    ucs_string_buffer_appendf(report, "%s -> %s over %s at %zu B (%s): "
                              "measured in alternation at %u sizes, %s ran "
                              "%.2fx what the lines say relative to %s "
                              "(margin %.1f%%): its %s line is scaled by "
                              "%.3f, ", below->proto, above->proto,
                              above->lanes, c->size, flavour, used,
                              above->proto, factor, below->proto,
                              100 * (PSEL_CALIB_CROSS_MARGIN + spread),
                              flavour, factor);
    if (moved != 0) {
        ucs_string_buffer_appendf(report, "the crossover moves to %zu B\n",
                                  moved);
    } else {
        ucs_string_buffer_appendf(report, "and %s no longer takes over "
                                  "from %s there\n", above->proto,
                                  below->proto);
    }
    return PSEL_CALIB_CROSS_SCALED;
}
