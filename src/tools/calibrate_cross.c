/*
 * psel_calibrate: the crossovers of a setup's fitted lines, measured again
 * in alternation. The sweeps measure one protocol after the other, and a
 * VM's speed can drift in between, so that two lines fitted minutes apart
 * cross where the protocols do not (docs/calibration.md). At each
 * crossover the two protocols that meet are measured
 * at half, at and at twice its size, lower-upper-upper-lower, and
 * psel_calib_cross_judge() scales the upper line where their ratio is not
 * the lines'.
 */
#include "calibrate.h"

#include <ucs/sys/math.h>

#include <math.h>
#include <stdio.h>
#include <unistd.h>

#define CAL_CROSS_SIZES  3    /* half, at and twice a crossover's size */
#define CAL_CROSS_MAX_CHECKS 12 /* crossovers checked per setup, at most */
#define CAL_CROSS_TIME   2.0  /* [s] at most, the measurements of one check */

/* Sizes around @a size that both protocols run where they are forced,
 * within the run's largest size: half, it, twice; where the lower one ends
 * (egr/short at its largest size), its last size instead of it */
static unsigned cal_cross_sizes(const cal_ctx_t *ctx, const cal_proto_t *a,
                                const cal_proto_t *b, size_t size,
                                size_t *sizes)
{
    size_t around[CAL_CROSS_SIZES] = {size / 2, size, 2 * size};
    unsigned i, n = 0;

    if (!cal_runs(a, size)) {
        around[1] = size - 1;
    }

    for (i = 0; i < CAL_CROSS_SIZES; ++i) {
        if ((around[i] > 0) && (around[i] <= ctx->opts.max_size) &&
            cal_runs(a, around[i]) && cal_runs(b, around[i]) &&
            ((n == 0) || (around[i] != sizes[n - 1]))) {
            sizes[n++] = around[i];
        }
    }
    return n;
}

/* Measure @a p at @a sizes with the test of flavour @a t, after forcing it:
 * into points[i].below[round] or .above[round]; NAN where it did not fit */
static ucs_status_t cal_cross_measure(cal_ctx_t *ctx, const cal_setup_t *setup,
                                      const cal_proto_t *p, int configure,
                                      psel_perf_type_t t, const size_t *sizes,
                                      unsigned n, int upper, unsigned round,
                                      psel_calib_cross_point_t *points,
                                      double end)
{
    pt_test_id_t test = cal_test(p, t != PSEL_PERF_SINGLE);
    cal_point_status_t result;
    ucs_status_t status;
    cal_point_t point;
    double *time;
    unsigned i;

    if (configure) {
        status = cal_configure(ctx, setup, p->settings, NULL);
        if (status != UCS_OK) {
            return status;
        }
    }
    for (i = 0; i < n; ++i) {
        time   = upper ? &points[i].above[round] : &points[i].below[round];
        status = cal_measure(ctx, test, sizes[i], 0, end, &point, &result);
        if (status != UCS_OK) {
            return status;
        }
        *time = (result == CAL_POINT_LATE) ? NAN : point.time;
        if (result != CAL_POINT_LATE) {
            points[i].spread = ucs_max(points[i].spread, point.spread);
        }
        if (ctx->opts.verbose) {
            printf("#   %-5s %-10s %10zu B  %s %10.3f us (%+4.0f%%)  "
                   "in alternation\n", setup->name, p->name, sizes[i],
                   (t == PSEL_PERF_SINGLE) ? "latency" : "streamed",
                   *time * 1e6, 100 * point.spread);
        }
    }
    return UCS_OK;
}

/* Measure crossover @a c in alternation and judge it */
static ucs_status_t cal_cross_check(cal_ctx_t *ctx, const cal_setup_t *setup,
                                    const cal_proto_t *protos,
                                    psel_calib_order_entry_t *entries,
                                    unsigned count,
                                    const psel_calib_crossover_t *c,
                                    size_t max_size)
{
    static const struct {
        int upper;     /* the upper protocol, else the lower one */
        int configure; /* reconnect to force it */
    } order[] = {{0, 1}, {1, 1}, {1, 0}, {0, 1}};
    const cal_proto_t *below = &protos[c->below], *above = &protos[c->above];
    psel_calib_cross_point_t points[CAL_CROSS_SIZES] = {};
    double end = psel_oob_time() + CAL_CROSS_TIME;
    size_t sizes[CAL_CROSS_SIZES];
    unsigned n, i, k, round[2] = {0, 0};
    ucs_status_t status;
    int upper;

    n = cal_cross_sizes(ctx, below, above, c->size, sizes);
    for (i = 0; i < n; ++i) {
        points[i].size = sizes[i];
    }
    if (isatty(STDERR_FILENO)) {
        fprintf(stderr, "\r# %-4s %s -> %s at %zu B in alternation ...\033[K",
                setup->name, below->name, above->name, c->size);
    }
    /* lower, upper, upper, lower: the means of each share one instant */
    for (k = 0, status = UCS_OK;
         (k < ucs_static_array_size(order)) && (n > 0) && (status == UCS_OK);
         ++k) {
        upper  = order[k].upper;
        status = cal_cross_measure(ctx, setup, upper ? above : below,
                                   order[k].configure, c->t, sizes, n, upper,
                                   round[upper]++, points, end);
    }
    if (isatty(STDERR_FILENO)) {
        fprintf(stderr, "\r\033[K");
    }
    if (status != UCS_OK) {
        return status;
    }
    psel_calib_cross_judge(entries, count, c, points, n, max_size,
                           &ctx->crossovers);
    return UCS_OK;
}

/* The largest size any line of the setup was measured at */
static size_t cal_cross_max_size(const psel_calib_order_entry_t *entries,
                                 unsigned count)
{
    size_t max_size = 1;
    unsigned i;

    for (i = 0; i < count; ++i) {
        if (entries[i].line->num_points > 0) {
            max_size = ucs_max(max_size, entries[i].line->points[
                                   entries[i].line->num_points - 1].size);
        }
    }
    return max_size;
}

/* The first of @a found not in @a done, or NULL */
static const psel_calib_crossover_t *
cal_cross_next(const psel_calib_crossover_t *found, unsigned n,
               const psel_calib_crossover_t *done, unsigned num_done)
{
    unsigned i, j;

    for (i = 0; i < n; ++i) {
        for (j = 0; (j < num_done) && ((done[j].t != found[i].t) ||
                                       (done[j].below != found[i].below) ||
                                       (done[j].above != found[i].above));
             ++j) {
        }
        if (j == num_done) {
            return &found[i];
        }
    }
    return NULL;
}

ucs_status_t cal_check_crossovers(cal_ctx_t *ctx, const cal_setup_t *setup,
                                  const cal_proto_t *protos,
                                  psel_calib_order_entry_t *entries,
                                  unsigned count)
{
    psel_calib_crossover_t found[PSEL_CALIB_MAX_CROSSOVERS];
    psel_calib_crossover_t done[CAL_CROSS_MAX_CHECKS];
    size_t max_size = cal_cross_max_size(entries, count);
    const psel_calib_crossover_t *next;
    unsigned t, n, num_done = 0;
    ucs_status_t status;

    /* the table again after each check, ascending: a scaled line moves its
     * crossover, and can make a new one; each pair once per flavour, so a
     * line is not scaled twice against one other (that would follow the
     * noise) */
    for (t = 0; t < PSEL_PERF_LAST; ++t) {
        while (num_done < CAL_CROSS_MAX_CHECKS) {
            n    = psel_calib_crossovers(entries, count, t, max_size, found,
                                         PSEL_CALIB_MAX_CROSSOVERS);
            next = cal_cross_next(found, n, done, num_done);
            if (next == NULL) {
                break;
            }
            done[num_done++] = *next;
            status = cal_cross_check(ctx, setup, protos, entries, count, next,
                                     max_size);
            if (status != UCS_OK) {
                return status;
            }
        }
    }
    return UCS_OK;
}
