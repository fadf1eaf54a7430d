/*
 * Calibration fits: a robust relative-error line fit, one line per range
 * between breaks, an extra break where the cost bends (a knee), and the
 * fit's error against the points.
 */
#include "calib_int.h"

#include <ucs/sys/math.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Fit: outliers are beyond this many robust sigmas of the median residual,
 * and never within PSEL_CALIB_FIT_FLOOR (relative) */
#define PSEL_CALIB_FIT_SIGMAS   3.5
#define PSEL_CALIB_FIT_FLOOR    1e-3
#define PSEL_CALIB_FIT_ITERS    20
/* A knee (an extra break) is kept if it cuts the mean relative error by
 * this factor at least */
#define PSEL_CALIB_KNEE_GAIN    0.8
/* A second knee is tried only above this mean relative error (the noise
 * of a quiet machine's points) */
#define PSEL_CALIB_KNEE_MORE_ERROR 0.02
/* Points on each side of a two-line multi envelope, at least */
#define PSEL_CALIB_ENVELOPE_MIN_POINTS 3


static int psel_calib_y_usable(double y)
{
    return isfinite(y) && (y > 0);
}

static int psel_calib_double_cmp(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

/* Median of @a n values; reorders them */
static double psel_calib_median(double *v, unsigned n)
{
    qsort(v, n, sizeof(*v), psel_calib_double_cmp);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Sum of w·(y - c - m·x)² over the points in @a idx */
static double psel_calib_wls_cost(const size_t *x, const double *y,
                                  const unsigned *idx, unsigned n, double c,
                                  double m)
{
    double sum = 0, r;
    unsigned k;

    for (k = 0; k < n; ++k) {
        r    = (y[idx[k]] - c - m * x[idx[k]]) / y[idx[k]];
        sum += r * r;
    }
    return sum;
}

/*
 * Weighted least squares with w = 1/y² over the points in @a idx, with c and m
 * clamped to >= 0: if the free optimum is outside, the better of the two
 * boundary optima (m = 0, or c = 0) is taken.
 */
static ucs_linear_func_t psel_calib_wls(const size_t *x, const double *y,
                                        const unsigned *idx, unsigned n)
{
    double sw = 0, swx = 0, swy = 0, sxx = 0, sxy = 0, swxy = 0, swx2 = 0;
    double w, xm, ym, dx, c, m, m0, cost_c0, cost_m0;
    unsigned k;

    for (k = 0; k < n; ++k) {
        w    = 1.0 / (y[idx[k]] * y[idx[k]]);
        sw  += w;
        swx += w * x[idx[k]];
        swy += w * y[idx[k]];
    }
    /* Centered sums: no cancellation between huge x² and tiny weights */
    xm = swx / sw;
    ym = swy / sw;
    for (k = 0; k < n; ++k) {
        w     = 1.0 / (y[idx[k]] * y[idx[k]]);
        dx    = x[idx[k]] - xm;
        sxx  += w * dx * dx;
        sxy  += w * dx * (y[idx[k]] - ym);
        swxy += w * (double)x[idx[k]] * y[idx[k]];
        swx2 += w * (double)x[idx[k]] * x[idx[k]];
    }

    if (sxx > 0) {
        m = sxy / sxx;
        c = ym - m * xm;
    } else {
        m = 0;
        c = ym;
    }
    if ((c >= 0) && (m >= 0)) {
        return ucs_linear_func_make(c + 0.0, m + 0.0);
    }

    /* Boundaries: m = 0 gives c = weighted mean; c = 0 gives a line through
     * the origin (none if every x is 0) */
    cost_m0 = psel_calib_wls_cost(x, y, idx, n, ym, 0);
    if (swx2 > 0) {
        m0      = swxy / swx2;
        cost_c0 = psel_calib_wls_cost(x, y, idx, n, 0, m0);
        if (cost_c0 < cost_m0) {
            return ucs_linear_func_make(0, m0);
        }
    }
    return ucs_linear_func_make(ym, 0);
}

ucs_status_t psel_calib_fit_linear(const size_t *x, const double *y,
                                   unsigned n, ucs_linear_func_t *func)
{
    unsigned *usable, *inlier, num_usable = 0, num_inliers, k, i, changed;
    unsigned iter, next_count;
    double *resid, *scratch, med, mad, limit;
    ucs_linear_func_t fit;
    ucs_status_t status;

    for (i = 0; i < n; ++i) {
        num_usable += psel_calib_y_usable(y[i]);
    }
    if (num_usable == 0) {
        return UCS_ERR_INVALID_PARAM;
    }

    usable  = malloc(2 * num_usable * sizeof(*usable));
    resid   = malloc(2 * num_usable * sizeof(*resid));
    if ((usable == NULL) || (resid == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto out_free;
    }
    inlier  = usable + num_usable;
    scratch = resid + num_usable;

    for (i = 0, k = 0; i < n; ++i) {
        if (psel_calib_y_usable(y[i])) {
            usable[k] = i;
            inlier[k] = i;
            ++k;
        }
    }
    num_inliers = num_usable;

    for (iter = 0; iter < PSEL_CALIB_FIT_ITERS; ++iter) {
        fit = psel_calib_wls(x, y, inlier, num_inliers);
        if (num_usable < 3) {
            break; /* 1 or 2 points: nothing can be an outlier */
        }

        /* Relative residuals of every usable point, then their median and
         * median absolute deviation around it */
        for (k = 0; k < num_usable; ++k) {
            i          = usable[k];
            resid[k]   = (y[i] - ucs_linear_func_apply(fit, x[i])) / y[i];
            scratch[k] = resid[k];
        }
        med = psel_calib_median(scratch, num_usable);
        for (k = 0; k < num_usable; ++k) {
            scratch[k] = fabs(resid[k] - med);
        }
        mad   = psel_calib_median(scratch, num_usable);
        limit = ucs_max(PSEL_CALIB_FIT_SIGMAS * 1.4826 * mad,
                        PSEL_CALIB_FIT_FLOOR);

        next_count = 0;
        for (k = 0; k < num_usable; ++k) {
            next_count += (fabs(resid[k] - med) <= limit);
        }
        if (next_count < 2) {
            break;
        }

        /* New inlier set; stop when it is the same as before */
        changed = (next_count != num_inliers);
        for (k = 0, i = 0; k < num_usable; ++k) {
            if (fabs(resid[k] - med) <= limit) {
                changed      |= (inlier[i] != usable[k]);
                inlier[i++]   = usable[k];
            }
        }
        num_inliers = next_count;
        if (!changed) {
            break;
        }
    }

    *func  = fit;
    status = UCS_OK;

out_free:
    free(resid);
    free(usable);
    return status;
}

static int psel_calib_point_usable(const psel_calib_point_t *point)
{
    return psel_calib_y_usable(point->time[PSEL_PERF_SINGLE]) ||
           psel_calib_y_usable(point->time[PSEL_PERF_MULTI]);
}

/* Usable points with lo < size <= hi (no lower bound unless @a has_lo) */
static unsigned psel_calib_count_usable(const psel_calib_line_t *line,
                                        size_t lo, int has_lo, size_t hi)
{
    unsigned i, count = 0;

    for (i = 0; i < line->num_points; ++i) {
        count += psel_calib_point_usable(&line->points[i]) &&
                 (!has_lo || (line->points[i].size > lo)) &&
                 (line->points[i].size <= hi);
    }
    return count;
}

/* Mean relative error of the upper envelope of @a lines at the points */
static double psel_calib_envelope_error(const size_t *x, const double *y,
                                        unsigned n,
                                        const ucs_linear_func_t *lines,
                                        unsigned num_lines)
{
    double sum = 0, model, v;
    unsigned i, l;

    for (i = 0; i < n; ++i) {
        model = ucs_linear_func_apply(lines[0], x[i]);
        for (l = 1; l < num_lines; ++l) {
            v     = ucs_linear_func_apply(lines[l], x[i]);
            model = ucs_max(model, v);
        }
        sum += fabs(model - y[i]) / y[i];
    }
    return (n > 0) ? (sum / n) : INFINITY;
}

/*
 * The multi (streaming) cost of one range: as the model builds it, the
 * upper envelope of stage lines. One line, or the envelope of two (one
 * stage paces small messages, another large ones) fitted on the points
 * below and above each measured size, whichever has the smaller mean
 * relative error; two lines must win by PSEL_CALIB_KNEE_GAIN.
 */
static ucs_status_t psel_calib_fit_multi(const size_t *x, const double *y,
                                         unsigned n, ucs_linear_func_t *lines,
                                         unsigned *num_lines)
{
    size_t *ux;
    double *uy, err, best_err, one_err;
    ucs_linear_func_t two[2];
    unsigned i, k, nu = 0;
    ucs_status_t status;

    status = psel_calib_fit_linear(x, y, n, &lines[0]);
    if (status != UCS_OK) {
        return status;
    }
    *num_lines = 1;

    ux = malloc(n * sizeof(*ux));
    uy = malloc(n * sizeof(*uy));
    if ((ux == NULL) || (uy == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto out;
    }
    for (i = 0; i < n; ++i) {
        if (psel_calib_y_usable(y[i])) {
            ux[nu]   = x[i];
            uy[nu++] = y[i];
        }
    }

    one_err  = psel_calib_envelope_error(ux, uy, nu, lines, 1);
    best_err = INFINITY;
    for (k = PSEL_CALIB_ENVELOPE_MIN_POINTS;
         k + PSEL_CALIB_ENVELOPE_MIN_POINTS <= nu; ++k) {
        if ((psel_calib_fit_linear(ux, uy, k, &two[0]) != UCS_OK) ||
            (psel_calib_fit_linear(ux + k, uy + k, nu - k, &two[1]) !=
             UCS_OK)) {
            continue;
        }
        err = psel_calib_envelope_error(ux, uy, nu, two, 2);
        if (err < best_err) {
            best_err = err;
            lines[1] = two[0];
            lines[2] = two[1];
        }
    }
    if (best_err < PSEL_CALIB_KNEE_GAIN * one_err) {
        lines[0]   = lines[1];
        lines[1]   = lines[2];
        *num_lines = 2;
    }

out:
    free(uy);
    free(ux);
    return status;
}

/*
 * Fit line->ranges (see psel_calib_line_fit); @a num_fit gets the number of
 * ranges between breaks, before the multi envelopes split them.
 */
static ucs_status_t psel_calib_line_fit_ranges(psel_calib_line_t *line,
                                               const size_t *breaks,
                                               unsigned num_breaks,
                                               unsigned *num_fit)
{
    psel_perf_range_t ranges[PSEL_PROTO_MAX_RANGES];
    psel_perf_segment_t segments[2];
    size_t ends[PSEL_CALIB_MAX_FIT_RANGES], first = 0, last = 0, lo, *x;
    unsigned i, b, r, k, n, num_ends = 0, num_usable = 0, count = 0;
    unsigned num_multi, num_segments;
    ucs_linear_func_t single, multi[3];
    ucs_status_t st_single, st_multi, ret;
    double *y;

    for (i = 0; i < line->num_points; ++i) {
        if (psel_calib_point_usable(&line->points[i])) {
            if (num_usable++ == 0) {
                first = line->points[i].size;
            }
            last = line->points[i].size;
        }
    }
    if (num_usable == 0) {
        return UCS_ERR_INVALID_PARAM;
    }
    for (b = 1; b < num_breaks; ++b) {
        if (breaks[b] <= breaks[b - 1]) {
            return UCS_ERR_INVALID_PARAM;
        }
    }

    /* Choose the breaks: inside the measured sizes, >= 2 points each side */
    for (b = 0; (b < num_breaks) && (num_ends < PSEL_CALIB_MAX_FIT_RANGES - 1);
         ++b) {
        if ((breaks[b] < first) || (breaks[b] >= last)) {
            continue;
        }
        lo = (num_ends > 0) ? ends[num_ends - 1] : 0;
        if (psel_calib_count_usable(line, lo, num_ends > 0, breaks[b]) < 2) {
            continue; /* merge this range into the next */
        }
        if (psel_calib_count_usable(line, breaks[b], 1, SIZE_MAX) < 2) {
            break;    /* later breaks leave even fewer points */
        }
        ends[num_ends++] = breaks[b];
    }
    ends[num_ends++] = SIZE_MAX;

    x = malloc(line->num_points * sizeof(*x));
    y = malloc(line->num_points * sizeof(*y));
    if ((x == NULL) || (y == NULL)) {
        ret = UCS_ERR_NO_MEMORY;
        goto out_free;
    }

    for (r = 0; r < num_ends; ++r) {
        lo = (r == 0) ? 0 : (ends[r - 1] + 1);
        for (i = 0, n = 0; i < line->num_points; ++i) {
            if ((line->points[i].size >= lo) &&
                (line->points[i].size <= ends[r])) {
                x[n]   = line->points[i].size;
                y[n++] = line->points[i].time[PSEL_PERF_SINGLE];
            }
        }
        st_single = psel_calib_fit_linear(x, y, n, &single);
        for (k = 0; k < n; ++k) {
            y[k] = line->points[psel_calib_point_index(line, x[k])]
                           .time[PSEL_PERF_MULTI];
        }
        num_multi = 1;
        st_multi  = psel_calib_fit_multi(x, y, n, multi, &num_multi);
        if ((st_single == UCS_ERR_NO_MEMORY) ||
            (st_multi == UCS_ERR_NO_MEMORY)) {
            ret = UCS_ERR_NO_MEMORY;
            goto out_free;
        }

        /* A flavour not measured here takes the other one's line */
        if (st_single != UCS_OK) {
            single = multi[0];
            if (num_multi > 1) {
                /* a line of its own: the envelope is for streaming only */
                st_single = psel_calib_fit_linear(x, y, n, &single);
            }
        } else if (st_multi != UCS_OK) {
            multi[0]  = single;
            num_multi = 1;
        }

        /* one range per piece of the multi envelope */
        num_segments = psel_perf_envelope(multi, num_multi, lo, ends[r],
                                          segments);
        for (k = 0; k < num_segments; ++k) {
            ranges[count].max_length             = segments[k].max_length;
            ranges[count].perf[PSEL_PERF_SINGLE] = single;
            ranges[count].perf[PSEL_PERF_MULTI]  = multi[segments[k].index];
            ++count;
        }
    }

    memcpy(line->ranges, ranges, count * sizeof(*ranges));
    line->num_ranges = count;
    *num_fit         = num_ends;
    ret              = UCS_OK;

out_free:
    free(y);
    free(x);
    return ret;
}

ucs_status_t psel_calib_line_fit(psel_calib_line_t *line, const size_t *breaks,
                                 unsigned num_breaks)
{
    unsigned num_fit;

    return psel_calib_line_fit_ranges(line, breaks, num_breaks, &num_fit);
}

static const psel_perf_range_t *
psel_calib_range_of(const psel_calib_line_t *line, size_t size)
{
    unsigned r;

    for (r = 0; r < line->num_ranges; ++r) {
        if (size <= line->ranges[r].max_length) {
            return &line->ranges[r];
        }
    }
    return NULL;
}

/* Mean relative error of the fitted ranges over both flavours' points */
static double psel_calib_line_mean_error(const psel_calib_line_t *line)
{
    const psel_perf_range_t *range;
    double sum = 0, y;
    unsigned i, t, n = 0;

    for (i = 0; i < line->num_points; ++i) {
        range = psel_calib_range_of(line, line->points[i].size);
        for (t = 0; (range != NULL) && (t < PSEL_PERF_LAST); ++t) {
            y = line->points[i].time[t];
            if (psel_calib_y_usable(y)) {
                sum += fabs(ucs_linear_func_apply(range->perf[t],
                                                  line->points[i].size) - y) / y;
                ++n;
            }
        }
    }
    return (n > 0) ? (sum / n) : INFINITY;
}

/* @a breaks (@a num, ascending) with @a knee inserted in order, into
 * @a out: how many, or 0 if @a knee is one of them */
static unsigned psel_calib_insert_break(const size_t *breaks, unsigned num,
                                        size_t knee, size_t *out)
{
    unsigned k, n = 0;

    for (k = 0; (k < num) && (breaks[k] < knee); ++k) {
        out[n++] = breaks[k];
    }
    if ((k < num) && (breaks[k] == knee)) {
        return 0;
    }
    out[n++] = knee;
    for (; k < num; ++k) {
        out[n++] = breaks[k];
    }
    return n;
}

ucs_status_t psel_calib_line_fit_knee(psel_calib_line_t *line,
                                      const size_t *breaks,
                                      unsigned num_breaks)
{
    psel_perf_range_t best_ranges[PSEL_PROTO_MAX_RANGES];
    size_t cur[PSEL_CALIB_MAX_FIT_RANGES], trial[PSEL_CALIB_MAX_FIT_RANGES];
    size_t best_trial[PSEL_CALIB_MAX_FIT_RANGES];
    unsigned base_fit, num_fit, best_num, num_cur, i, n;
    double best_err, err;
    ucs_status_t status;
    int found;

    status = psel_calib_line_fit_ranges(line, breaks, num_breaks, &base_fit);
    if ((status != UCS_OK) || (num_breaks + 2 > PSEL_CALIB_MAX_FIT_RANGES)) {
        return status;
    }

    for (num_cur = 0; num_cur < num_breaks; ++num_cur) {
        cur[num_cur] = breaks[num_cur]; /* breaks may be NULL when none */
    }
    best_num = line->num_ranges;
    best_err = psel_calib_line_mean_error(line);
    memcpy(best_ranges, line->ranges, sizeof(best_ranges));
    /* one knee at a time, while there is room and each cuts the error;
     * another one only while the fit is still off by more than noise */
    for (found = 1; found && (num_cur + 2 <= PSEL_CALIB_MAX_FIT_RANGES) &&
                    ((num_cur == num_breaks) ||
                     (best_err > PSEL_CALIB_KNEE_MORE_ERROR));) {
        found = 0;
        for (i = 0; i < line->num_points; ++i) {
            /* a knee that is a break already, or with too few points on a
             * side (merged away), is skipped */
            n = psel_calib_insert_break(cur, num_cur, line->points[i].size,
                                        trial);
            if ((n == 0) ||
                (psel_calib_line_fit_ranges(line, trial, n, &num_fit) !=
                 UCS_OK) || (num_fit != base_fit + 1)) {
                continue;
            }
            err = psel_calib_line_mean_error(line);
            if (err < PSEL_CALIB_KNEE_GAIN * best_err) {
                best_err = err;
                best_num = line->num_ranges;
                memcpy(best_ranges, line->ranges, sizeof(best_ranges));
                memcpy(best_trial, trial, n * sizeof(*trial));
                found = 1;
            }
        }
        if (found) {
            ++num_cur;
            ++base_fit;
            memcpy(cur, best_trial, num_cur * sizeof(*cur));
        }
    }

    line->num_ranges = best_num;
    memcpy(line->ranges, best_ranges, sizeof(best_ranges));
    return UCS_OK;
}

double psel_calib_line_fit_error(const psel_calib_line_t *line,
                                 psel_perf_type_t type)
{
    const psel_perf_range_t *range;
    double *err, y, result = NAN;
    unsigned i, n = 0;

    if ((line->num_ranges == 0) || (line->num_points == 0) ||
        (type >= PSEL_PERF_LAST)) {
        return NAN;
    }
    err = malloc(line->num_points * sizeof(*err));
    if (err == NULL) {
        return NAN;
    }
    for (i = 0; i < line->num_points; ++i) {
        y     = line->points[i].time[type];
        range = psel_calib_range_of(line, line->points[i].size);
        if (psel_calib_y_usable(y) && (range != NULL)) {
            err[n++] = fabs(ucs_linear_func_apply(range->perf[type],
                                                  line->points[i].size) - y) / y;
        }
    }
    if (n > 0) {
        result = psel_calib_median(err, n);
    }
    free(err);
    return result;
}
