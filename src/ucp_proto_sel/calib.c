/*
 * Calibration data: points, robust piecewise fit, text file, host check and
 * application to protocol caps. Format: README.md, "Calibration file".
 */
#include "calib.h"

#include <ucs/debug/log_def.h>
#include <ucs/datastruct/string_buffer.h>
#include <ucs/sys/string.h>
#include <uct/api/version.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PSEL_CALIB_MAGIC        "protosel-calibration"
#define PSEL_CALIB_MACHINE_ID   "/etc/machine-id"
#define PSEL_CALIB_NS           1e9      /* ns per second */
#define PSEL_CALIB_KB           1024.0   /* bytes per KB in slopes */
#define PSEL_CALIB_VALUE_MIN    1e-30    /* smallest nonzero number in a file */
#define PSEL_CALIB_VALUE_MAX    1e18     /* largest number in a file [ns] */
#define PSEL_CALIB_MAX_FILE     (256ul << 20)
#define PSEL_CALIB_MAX_TOKENS   12

/* Fit: outliers are beyond this many robust sigmas of the median residual,
 * and never within PSEL_CALIB_FIT_FLOOR (relative) */
#define PSEL_CALIB_FIT_SIGMAS   3.5
#define PSEL_CALIB_FIT_FLOOR    1e-3
#define PSEL_CALIB_FIT_ITERS    20
/* A knee (an extra break) is kept if it cuts the mean relative error by
 * this factor at least */
#define PSEL_CALIB_KNEE_GAIN    0.8


/* Numbers are written and read in the C locale, whatever LC_NUMERIC the
 * application chose (a decimal comma would make files unreadable) */
typedef struct {
    locale_t c;
    locale_t saved;
} psel_calib_locale_t;

static void psel_calib_locale_enter(psel_calib_locale_t *loc)
{
    loc->c     = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    loc->saved = (loc->c != (locale_t)0) ? uselocale(loc->c) : (locale_t)0;
}

static void psel_calib_locale_leave(psel_calib_locale_t *loc)
{
    if (loc->c != (locale_t)0) {
        uselocale(loc->saved);
        freelocale(loc->c);
    }
}


/* Names and identity */

/* A name is one printable token without '#' (which starts a comment) */
static int psel_calib_token_ok(const char *str, size_t max)
{
    size_t i, len = strnlen(str, max);

    if ((len == 0) || (len == max)) {
        return 0;
    }
    for (i = 0; i < len; ++i) {
        if (!isgraph((unsigned char)str[i]) || (str[i] == '#')) {
            return 0;
        }
    }
    return 1;
}

static int psel_calib_names_ok(const char *proto, const char *lanes,
                               ucs_memory_type_t mem_type)
{
    return psel_calib_token_ok(proto, PSEL_CALIB_PROTO_MAX) &&
           psel_calib_token_ok(lanes, PSEL_PROTO_DESC_MAX) &&
           (mem_type < UCS_MEMORY_TYPE_LAST);
}

/* Copy @a src as a token: characters that cannot be in one become '_' */
static void psel_calib_copy_token(char *dst, size_t max, const char *src)
{
    size_t i;

    ucs_strncpy_zero(dst, src, max);
    for (i = 0; dst[i] != '\0'; ++i) {
        if (!isgraph((unsigned char)dst[i]) || (dst[i] == '#')) {
            dst[i] = '_';
        }
    }
    if (dst[0] == '\0') {
        ucs_strncpy_zero(dst, "-", max);
    }
}

static void psel_calib_this_hostname(char *name, size_t max)
{
    char buf[256];

    if (gethostname(buf, sizeof(buf)) != 0) {
        buf[0] = '\0';
    }
    buf[sizeof(buf) - 1] = '\0';
    psel_calib_copy_token(name, max, buf);
}

static void psel_calib_this_machine_id(char *id, size_t max)
{
    char buf[128] = "";
    FILE *f       = fopen(PSEL_CALIB_MACHINE_ID, "r");

    if (f != NULL) {
        if (fgets(buf, sizeof(buf), f) == NULL) {
            buf[0] = '\0';
        }
        fclose(f);
    }
    buf[strcspn(buf, " \t\r\n")] = '\0';
    psel_calib_copy_token(id, max, buf);
}

/* "YYYY-MM-DDTHH:MM:SSZ" with fields in range */
static int psel_calib_date_ok(const char *date)
{
    static const char pattern[] = "dddd-dd-ddTdd:dd:ddZ";
    unsigned year, mon, day, hour, min, sec;
    size_t i;

    if (strlen(date) != sizeof(pattern) - 1) {
        return 0;
    }
    for (i = 0; i < sizeof(pattern) - 1; ++i) {
        if ((pattern[i] == 'd') ? !isdigit((unsigned char)date[i]) :
                                  (date[i] != pattern[i])) {
            return 0;
        }
    }
    sscanf(date, "%4u-%2u-%2uT%2u:%2u:%2uZ", &year, &mon, &day, &hour, &min,
           &sec);
    return (mon >= 1) && (mon <= 12) && (day >= 1) && (day <= 31) &&
           (hour <= 23) && (min <= 59) && (sec <= 60);
}

void psel_calib_init(psel_calib_t *calib)
{
    time_t now = time(NULL);
    struct tm tm;

    memset(calib, 0, sizeof(*calib));
    psel_calib_this_hostname(calib->hostname, sizeof(calib->hostname));
    psel_calib_this_machine_id(calib->machine_id, sizeof(calib->machine_id));
    /* Compile-time version: libucs/libuct 1.13 have no run-time version call */
    ucs_strncpy_zero(calib->ucx_version, UCT_VERNO_STRING,
                     sizeof(calib->ucx_version));
    gmtime_r(&now, &tm);
    strftime(calib->created, sizeof(calib->created), "%Y-%m-%dT%H:%M:%SZ",
             &tm);
    calib->duration = 0;
    ucs_strncpy_zero(calib->mode, "full", sizeof(calib->mode));
}

void psel_calib_cleanup(psel_calib_t *calib)
{
    unsigned i;

    for (i = 0; i < calib->num_lines; ++i) {
        free(calib->lines[i].points);
    }
    free(calib->lines);
    calib->lines     = NULL;
    calib->num_lines = 0;
}


/* Lines and points */

static psel_calib_line_t *
psel_calib_lookup(const psel_calib_t *calib, const char *proto,
                  const char *lanes, ucs_memory_type_t mem_type)
{
    psel_calib_line_t *line;
    unsigned i;

    for (i = 0; i < calib->num_lines; ++i) {
        line = &calib->lines[i];
        if ((line->mem_type == mem_type) && !strcmp(line->proto, proto) &&
            !strcmp(line->lanes, lanes)) {
            return line;
        }
    }
    return NULL;
}

const psel_calib_line_t *psel_calib_find(const psel_calib_t *calib,
                                         const char *proto, const char *lanes,
                                         ucs_memory_type_t mem_type)
{
    return psel_calib_lookup(calib, proto, lanes, mem_type);
}

/* Find or add, without messages; the caller has checked the names */
static psel_calib_line_t *
psel_calib_line_add(psel_calib_t *calib, const char *proto, const char *lanes,
                    ucs_memory_type_t mem_type)
{
    psel_calib_line_t *line = psel_calib_lookup(calib, proto, lanes, mem_type);

    if (line != NULL) {
        return line;
    }
    if (calib->num_lines >= PSEL_CALIB_MAX_LINES) {
        return NULL;
    }
    if (calib->lines == NULL) {
        /* All at once: a line pointer stays valid while lines are added */
        calib->lines = calloc(PSEL_CALIB_MAX_LINES, sizeof(*calib->lines));
        if (calib->lines == NULL) {
            return NULL;
        }
    }

    line = &calib->lines[calib->num_lines++];
    memset(line, 0, sizeof(*line));
    ucs_strncpy_zero(line->proto, proto, sizeof(line->proto));
    ucs_strncpy_zero(line->lanes, lanes, sizeof(line->lanes));
    line->mem_type = mem_type;
    return line;
}

psel_calib_line_t *psel_calib_line_get(psel_calib_t *calib, const char *proto,
                                       const char *lanes,
                                       ucs_memory_type_t mem_type)
{
    psel_calib_line_t *line;

    if (!psel_calib_names_ok(proto, lanes, mem_type)) {
        ucs_error("calibration line '%s' '%s' memory type %d: names must be "
                  "non-empty printable tokens without '#' and fit",
                  proto, lanes, mem_type);
        return NULL;
    }
    line = psel_calib_line_add(calib, proto, lanes, mem_type);
    if (line == NULL) {
        ucs_error("calibration line %s %s %s: no room (%u lines at most)",
                  proto, lanes, ucs_memory_type_names[mem_type],
                  PSEL_CALIB_MAX_LINES);
    }
    return line;
}

/* Index of the first point with size >= @a size */
static unsigned psel_calib_point_index(const psel_calib_line_t *line,
                                       size_t size)
{
    unsigned lo = 0, hi = line->num_points, mid;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (line->points[mid].size < size) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static int psel_calib_time_ok(double t)
{
    return isnan(t) || (isfinite(t) && (t >= 0));
}

ucs_status_t psel_calib_line_add_point(psel_calib_line_t *line, size_t size,
                                       double single, double multi)
{
    unsigned idx = psel_calib_point_index(line, size);
    psel_calib_point_t *points;

    if (!psel_calib_time_ok(single) || !psel_calib_time_ok(multi)) {
        return UCS_ERR_INVALID_PARAM;
    }

    if ((idx == line->num_points) || (line->points[idx].size != size)) {
        if (line->num_points >= PSEL_CALIB_MAX_POINTS) {
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        points = realloc(line->points,
                         (line->num_points + 1) * sizeof(*points));
        if (points == NULL) {
            return UCS_ERR_NO_MEMORY;
        }
        memmove(&points[idx + 1], &points[idx],
                (line->num_points - idx) * sizeof(*points));
        line->points = points;
        ++line->num_points;
    }

    line->points[idx].size                   = size;
    line->points[idx].time[PSEL_PERF_SINGLE] = single;
    line->points[idx].time[PSEL_PERF_MULTI]  = multi;
    return UCS_OK;
}


/* Fit */

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

ucs_status_t psel_calib_line_fit(psel_calib_line_t *line, const size_t *breaks,
                                 unsigned num_breaks)
{
    psel_perf_range_t ranges[PSEL_PROTO_MAX_RANGES];
    size_t ends[PSEL_PROTO_MAX_RANGES], first = 0, last = 0, lo, *x;
    unsigned i, b, r, t, n, num_ranges = 0, num_usable = 0;
    ucs_status_t status[PSEL_PERF_LAST], ret;
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
    for (b = 0; (b < num_breaks) && (num_ranges < PSEL_PROTO_MAX_RANGES - 1);
         ++b) {
        if ((breaks[b] < first) || (breaks[b] >= last)) {
            continue;
        }
        lo = (num_ranges > 0) ? ends[num_ranges - 1] : 0;
        if (psel_calib_count_usable(line, lo, num_ranges > 0, breaks[b]) < 2) {
            continue; /* merge this range into the next */
        }
        if (psel_calib_count_usable(line, breaks[b], 1, SIZE_MAX) < 2) {
            break;    /* later breaks leave even fewer points */
        }
        ends[num_ranges++] = breaks[b];
    }
    ends[num_ranges++] = SIZE_MAX;

    x = malloc(line->num_points * sizeof(*x));
    y = malloc(line->num_points * sizeof(*y));
    if ((x == NULL) || (y == NULL)) {
        ret = UCS_ERR_NO_MEMORY;
        goto out_free;
    }

    for (r = 0; r < num_ranges; ++r) {
        ranges[r].max_length = ends[r];
        for (t = 0; t < PSEL_PERF_LAST; ++t) {
            for (i = 0, n = 0; i < line->num_points; ++i) {
                if (((r == 0) || (line->points[i].size > ends[r - 1])) &&
                    (line->points[i].size <= ends[r])) {
                    x[n]   = line->points[i].size;
                    y[n++] = line->points[i].time[t];
                }
            }
            status[t] = psel_calib_fit_linear(x, y, n, &ranges[r].perf[t]);
            if (status[t] == UCS_ERR_NO_MEMORY) {
                ret = status[t];
                goto out_free;
            }
        }
        /* A flavour not measured here takes the other one's line */
        if (status[PSEL_PERF_SINGLE] != UCS_OK) {
            ranges[r].perf[PSEL_PERF_SINGLE] = ranges[r].perf[PSEL_PERF_MULTI];
        } else if (status[PSEL_PERF_MULTI] != UCS_OK) {
            ranges[r].perf[PSEL_PERF_MULTI] = ranges[r].perf[PSEL_PERF_SINGLE];
        }
    }

    memcpy(line->ranges, ranges, num_ranges * sizeof(*ranges));
    line->num_ranges = num_ranges;
    ret              = UCS_OK;

out_free:
    free(y);
    free(x);
    return ret;
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

ucs_status_t psel_calib_line_fit_knee(psel_calib_line_t *line,
                                      const size_t *breaks,
                                      unsigned num_breaks)
{
    psel_perf_range_t best_ranges[PSEL_PROTO_MAX_RANGES];
    size_t trial[PSEL_PROTO_MAX_RANGES], knee;
    unsigned base_num, best_num, i, k, n;
    double best_err, err;
    ucs_status_t status;

    status = psel_calib_line_fit(line, breaks, num_breaks);
    if ((status != UCS_OK) || (num_breaks + 2 > PSEL_PROTO_MAX_RANGES)) {
        return status;
    }

    base_num = best_num = line->num_ranges;
    best_err = psel_calib_line_mean_error(line);
    memcpy(best_ranges, line->ranges, sizeof(best_ranges));
    for (i = 0; i < line->num_points; ++i) {
        /* the breaks, with this size inserted in order */
        knee = line->points[i].size;
        for (k = 0, n = 0; (k < num_breaks) && (breaks[k] < knee); ++k) {
            trial[n++] = breaks[k];
        }
        if ((k < num_breaks) && (breaks[k] == knee)) {
            continue;
        }
        trial[n++] = knee;
        for (; k < num_breaks; ++k) {
            trial[n++] = breaks[k];
        }
        /* a knee with too few points on a side is merged away: skip it */
        if ((psel_calib_line_fit(line, trial, n) != UCS_OK) ||
            (line->num_ranges != base_num + 1)) {
            continue;
        }
        err = psel_calib_line_mean_error(line);
        if (err < PSEL_CALIB_KNEE_GAIN * best_err) {
            best_err = err;
            best_num = line->num_ranges;
            memcpy(best_ranges, line->ranges, sizeof(best_ranges));
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


/* Writing */

/* What the parser takes: 0, or PSEL_CALIB_VALUE_MIN..PSEL_CALIB_VALUE_MAX.
 * The lower bound keeps seconds clear of denormals, so text round trips. */
static int psel_calib_value_ok(double value)
{
    return (value == 0) || ((value >= PSEL_CALIB_VALUE_MIN) &&
                            (value <= PSEL_CALIB_VALUE_MAX));
}

/*
 * Append " <value>" with 10 significant digits (1e-10 relative, and a value
 * read back prints the same). What would read back below the smallest number
 * is written as 0; what would read back above the largest (or negative,
 * non-finite) is an error.
 */
static int psel_calib_append_value(ucs_string_buffer_t *strb, double value)
{
    char buf[32];
    double printed;

    if (!isfinite(value) || (value < 0)) {
        return 0;
    }
    snprintf(buf, sizeof(buf), "%.10g", value + 0.0); /* + 0.0: no "-0" */
    printed = strtod(buf, NULL);
    if (printed < PSEL_CALIB_VALUE_MIN) {
        ucs_strncpy_zero(buf, "0", sizeof(buf));
    } else if (printed > PSEL_CALIB_VALUE_MAX) {
        return 0;
    }
    ucs_string_buffer_appendf(strb, " %s", buf);
    return 1;
}

static void psel_calib_append_size(ucs_string_buffer_t *strb, size_t size)
{
    if (size == SIZE_MAX) {
        ucs_string_buffer_appendf(strb, " inf");
    } else {
        ucs_string_buffer_appendf(strb, " %zu", size);
    }
}

static ucs_status_t psel_calib_write_line(const psel_calib_line_t *line,
                                          ucs_string_buffer_t *strb)
{
    const char *mem_name;
    const psel_perf_range_t *range;
    double value;
    unsigned r, t, i;

    if (!psel_calib_names_ok(line->proto, line->lanes, line->mem_type) ||
        (line->num_ranges > PSEL_PROTO_MAX_RANGES)) {
        ucs_error("calibration line '%.*s' '%.*s': bad names, memory type or "
                  "%u ranges", PSEL_CALIB_PROTO_MAX, line->proto,
                  PSEL_PROTO_DESC_MAX, line->lanes, line->num_ranges);
        return UCS_ERR_INVALID_PARAM;
    }
    mem_name = ucs_memory_type_names[line->mem_type];

    if ((line->num_ranges == 0) && (line->num_points == 0)) {
        return UCS_OK;
    }
    ucs_string_buffer_appendf(strb, "\n");

    for (r = 0; r < line->num_ranges; ++r) {
        range = &line->ranges[r];
        if (((r > 0) && (range->max_length <= line->ranges[r - 1].max_length)) ||
            ((r == line->num_ranges - 1) && (range->max_length != SIZE_MAX))) {
            ucs_error("calibration line %s %s %s: range %u ends at %zu: "
                      "ranges must ascend and the last end at SIZE_MAX",
                      line->proto, line->lanes, mem_name, r, range->max_length);
            return UCS_ERR_INVALID_PARAM;
        }
        ucs_string_buffer_appendf(strb, "range %s %s %s", line->proto,
                                  line->lanes, mem_name);
        psel_calib_append_size(strb, range->max_length);
        for (t = 0; t < PSEL_PERF_LAST; ++t) {
            if (!psel_calib_append_value(strb, range->perf[t].c *
                                               PSEL_CALIB_NS) ||
                !psel_calib_append_value(strb, range->perf[t].m *
                                               PSEL_CALIB_NS * PSEL_CALIB_KB)) {
                ucs_error("calibration line %s %s %s: range %u has cost "
                          "%g + %g*x", line->proto, line->lanes, mem_name, r,
                          range->perf[t].c, range->perf[t].m);
                return UCS_ERR_INVALID_PARAM;
            }
        }
        ucs_string_buffer_appendf(strb, "\n");
    }

    for (i = 0; i < line->num_points; ++i) {
        if ((i > 0) && (line->points[i].size <= line->points[i - 1].size)) {
            ucs_error("calibration line %s %s %s: point sizes do not ascend "
                      "at %zu", line->proto, line->lanes, mem_name,
                      line->points[i].size);
            return UCS_ERR_INVALID_PARAM;
        }
        ucs_string_buffer_appendf(strb, "point %s %s %s %zu", line->proto,
                                  line->lanes, mem_name, line->points[i].size);
        for (t = 0; t < PSEL_PERF_LAST; ++t) {
            value = line->points[i].time[t];
            if (isnan(value)) {
                ucs_string_buffer_appendf(strb, " -");
            } else if (!psel_calib_append_value(strb, value * PSEL_CALIB_NS)) {
                ucs_error("calibration line %s %s %s: point %zu has time %g",
                          line->proto, line->lanes, mem_name,
                          line->points[i].size, line->points[i].time[t]);
                return UCS_ERR_INVALID_PARAM;
            }
        }
        ucs_string_buffer_appendf(strb, "\n");
    }
    return UCS_OK;
}

static ucs_status_t psel_calib_check_header(const psel_calib_t *calib)
{
    const char *what = NULL;

    if (!psel_calib_token_ok(calib->hostname, sizeof(calib->hostname))) {
        what = "hostname";
    } else if (!psel_calib_token_ok(calib->machine_id,
                                    sizeof(calib->machine_id))) {
        what = "machine id";
    } else if (!psel_calib_token_ok(calib->ucx_version,
                                    sizeof(calib->ucx_version))) {
        what = "ucx version";
    } else if (!psel_calib_date_ok(calib->created)) {
        what = "created (YYYY-MM-DDTHH:MM:SSZ)";
    } else if (!isfinite(calib->duration) || (calib->duration < 0) ||
               (calib->duration > PSEL_CALIB_VALUE_MAX)) {
        what = "duration";
    } else if (strcmp(calib->mode, "quick") && strcmp(calib->mode, "full")) {
        what = "mode (quick or full)";
    }
    if (what != NULL) {
        ucs_error("calibration header: bad %s", what);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

ucs_status_t psel_calib_write(const psel_calib_t *calib, FILE *stream)
{
    psel_calib_locale_t loc;
    ucs_string_buffer_t strb;
    ucs_status_t status;
    size_t length;
    unsigned i;

    status = psel_calib_check_header(calib);
    if (status != UCS_OK) {
        return status;
    }

    psel_calib_locale_enter(&loc);
    ucs_string_buffer_init(&strb);
    ucs_string_buffer_appendf(&strb,
            "# protosel calibration: measured cost lines (comments and blank "
            "lines ignored)\n"
            PSEL_CALIB_MAGIC " %d\n"
            "host %s %s\n"
            "ucx %s\n"
            "created %s\n"
            "duration",
            PSEL_CALIB_FORMAT_VERSION, calib->hostname, calib->machine_id,
            calib->ucx_version, calib->created);
    psel_calib_append_value(&strb, calib->duration);
    ucs_string_buffer_appendf(&strb,
            "\nmode %s\n"
            "# range <proto> <lanes> <memtype> <max_length|inf> "
            "<single c [ns]> <single m [ns/KB]> <multi c [ns]> "
            "<multi m [ns/KB]>\n"
            "# point <proto> <lanes> <memtype> <size> <single [ns]|-> "
            "<multi [ns]|->\n", calib->mode);

    for (i = 0; i < calib->num_lines; ++i) {
        status = psel_calib_write_line(&calib->lines[i], &strb);
        if (status != UCS_OK) {
            goto out;
        }
    }

    length = ucs_string_buffer_length(&strb);
    if ((fwrite(ucs_string_buffer_cstr(&strb), 1, length, stream) != length) ||
        (fflush(stream) != 0) || ferror(stream)) {
        ucs_error("failed to write calibration: %m");
        status = UCS_ERR_IO_ERROR;
    }

out:
    ucs_string_buffer_cleanup(&strb);
    psel_calib_locale_leave(&loc);
    return status;
}

/* mkdir -p of the directory part of @a path */
static ucs_status_t psel_calib_make_parent(const char *path)
{
    char dir[PATH_MAX];
    char *p;

    if (strlen(path) >= sizeof(dir)) {
        ucs_error("%s: path too long", path);
        return UCS_ERR_IO_ERROR;
    }
    strcpy(dir, path);
    p = strrchr(dir, '/');
    if ((p == NULL) || (p == dir)) {
        return UCS_OK;
    }
    *p = '\0';

    for (p = dir + 1; ; ++p) {
        if ((*p == '/') || (*p == '\0')) {
            char saved = *p;

            *p = '\0';
            if ((mkdir(dir, 0755) != 0) && (errno != EEXIST)) {
                ucs_error("%s: cannot create directory %s: %m", path, dir);
                return UCS_ERR_IO_ERROR;
            }
            *p = saved;
            if (saved == '\0') {
                break;
            }
        }
    }
    return UCS_OK;
}

ucs_status_t psel_calib_save(const psel_calib_t *calib, const char *path)
{
    char tmp[PATH_MAX];
    ucs_status_t status;
    FILE *stream;
    int fd;

    status = psel_calib_make_parent(path);
    if (status != UCS_OK) {
        return status;
    }
    if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp)) {
        ucs_error("%s: path too long", path);
        return UCS_ERR_IO_ERROR;
    }

    fd = mkstemp(tmp);
    if (fd < 0) {
        ucs_error("%s: cannot create %s: %m", path, tmp);
        return UCS_ERR_IO_ERROR;
    }
    (void)fchmod(fd, 0644); /* mkstemp makes it 0600 */
    stream = fdopen(fd, "w");
    if (stream == NULL) {
        ucs_error("%s: fdopen: %m", path);
        close(fd);
        status = UCS_ERR_IO_ERROR;
        goto out_unlink;
    }

    status = psel_calib_write(calib, stream);
    if ((status == UCS_OK) && (fsync(fileno(stream)) != 0)) {
        ucs_error("%s: fsync: %m", path);
        status = UCS_ERR_IO_ERROR;
    }
    if ((fclose(stream) != 0) && (status == UCS_OK)) {
        ucs_error("%s: close: %m", path);
        status = UCS_ERR_IO_ERROR;
    }
    if (status != UCS_OK) {
        if (status == UCS_ERR_IO_ERROR) {
            ucs_error("%s: calibration not saved", path);
        }
        goto out_unlink;
    }

    if (rename(tmp, path) != 0) {
        ucs_error("%s: cannot rename %s to it: %m", path, tmp);
        status = UCS_ERR_IO_ERROR;
        goto out_unlink;
    }
    return UCS_OK;

out_unlink:
    unlink(tmp);
    return status;
}


/* Parsing */

enum {
    PSEL_CALIB_HDR_HOST,
    PSEL_CALIB_HDR_UCX,
    PSEL_CALIB_HDR_CREATED,
    PSEL_CALIB_HDR_DURATION,
    PSEL_CALIB_HDR_MODE,
    PSEL_CALIB_HDR_LAST
};

static const char *psel_calib_hdr_names[] = {
    [PSEL_CALIB_HDR_HOST]     = "host",
    [PSEL_CALIB_HDR_UCX]      = "ucx",
    [PSEL_CALIB_HDR_CREATED]  = "created",
    [PSEL_CALIB_HDR_DURATION] = "duration",
    [PSEL_CALIB_HDR_MODE]     = "mode"
};

/* Fields after the keyword, for each header line */
static const unsigned psel_calib_hdr_fields[] = {
    [PSEL_CALIB_HDR_HOST]     = 2,
    [PSEL_CALIB_HDR_UCX]      = 1,
    [PSEL_CALIB_HDR_CREATED]  = 1,
    [PSEL_CALIB_HDR_DURATION] = 1,
    [PSEL_CALIB_HDR_MODE]     = 1
};

typedef struct psel_calib_parser {
    const char   *name;                          /* for messages */
    unsigned     line_no;                        /* current text line */
    int          have_magic;                     /* first line seen */
    unsigned     hdr_line[PSEL_CALIB_HDR_LAST];  /* where each was, or 0 */
    int          in_data;                        /* a range/point was seen */
    unsigned     range_line[PSEL_CALIB_MAX_LINES]; /* last range of each line */
    psel_calib_t calib;                          /* result being built */
} psel_calib_parser_t;

#define psel_calib_parse_error(_p, _fmt, ...) \
    ucs_error("%s:%u: " _fmt, (_p)->name, (_p)->line_no, ## __VA_ARGS__)


/* A size: decimal digits only, no sign, no overflow; "inf" if @a inf_ok */
static ucs_status_t psel_calib_parse_size(psel_calib_parser_t *p,
                                          const char *field, const char *token,
                                          int inf_ok, size_t *size)
{
    unsigned long long value;
    const char *c;
    char *end;

    if (inf_ok && !strcmp(token, "inf")) {
        *size = SIZE_MAX;
        return UCS_OK;
    }
    for (c = token; *c != '\0'; ++c) {
        if (!isdigit((unsigned char)*c)) {
            psel_calib_parse_error(p, "%s '%s': expected a size in bytes%s",
                                   field, token, inf_ok ? " or 'inf'" : "");
            return UCS_ERR_INVALID_PARAM;
        }
    }
    errno = 0;
    value = strtoull(token, &end, 10);
    if ((errno == ERANGE) || (value > SIZE_MAX)) {
        psel_calib_parse_error(p, "%s '%s': out of range", field, token);
        return UCS_ERR_INVALID_PARAM;
    }
    *size = value;
    return UCS_OK;
}

/* A non-negative decimal number up to PSEL_CALIB_VALUE_MAX; "-" gives NAN
 * if @a dash_ok */
static ucs_status_t psel_calib_parse_value(psel_calib_parser_t *p,
                                           const char *field, const char *token,
                                           int dash_ok, double *value)
{
    const char *c;
    char *end;
    double v;

    if (dash_ok && !strcmp(token, "-")) {
        *value = NAN;
        return UCS_OK;
    }
    if (token[0] == '-') {
        psel_calib_parse_error(p, "%s '%s': negative", field, token);
        return UCS_ERR_INVALID_PARAM;
    }
    /* Plain decimal only: strtod would also take "nan", "inf" and hex */
    for (c = token; *c != '\0'; ++c) {
        if (!isdigit((unsigned char)*c) && !strchr(".eE+-", *c)) {
            break;
        }
    }
    errno = 0;
    v     = strtod(token, &end);
    if ((*c != '\0') || (end == token) || (*end != '\0') ||
        !isdigit((unsigned char)token[strspn(token, "+.")])) {
        psel_calib_parse_error(p, "%s '%s': expected a number%s", field, token,
                               dash_ok ? " or '-'" : "");
        return UCS_ERR_INVALID_PARAM;
    }
    if ((errno == ERANGE) || !psel_calib_value_ok(v)) {
        psel_calib_parse_error(p, "%s '%s': out of range (0, or %g..%g)",
                               field, token, PSEL_CALIB_VALUE_MIN,
                               PSEL_CALIB_VALUE_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    *value = v;
    return UCS_OK;
}

static ucs_status_t psel_calib_parse_token(psel_calib_parser_t *p,
                                           const char *field, const char *token,
                                           char *dst, size_t max)
{
    if (!psel_calib_token_ok(token, max)) {
        psel_calib_parse_error(p, "%s '%s': expected a printable name without "
                               "'#', shorter than %zu characters", field,
                               token, max);
        return UCS_ERR_INVALID_PARAM;
    }
    ucs_strncpy_zero(dst, token, max);
    return UCS_OK;
}

static ucs_status_t psel_calib_parse_magic(psel_calib_parser_t *p,
                                           char **tokens, unsigned count)
{
    size_t version;

    if (strcmp(tokens[0], PSEL_CALIB_MAGIC) || (count != 2)) {
        psel_calib_parse_error(p, "expected '" PSEL_CALIB_MAGIC " %d' as the "
                               "first line, got '%s'",
                               PSEL_CALIB_FORMAT_VERSION, tokens[0]);
        return UCS_ERR_INVALID_PARAM;
    }
    if (psel_calib_parse_size(p, "format version", tokens[1], 0, &version) !=
        UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (version != PSEL_CALIB_FORMAT_VERSION) {
        psel_calib_parse_error(p, "format version %zu, this build reads %d: "
                               "measure again", version,
                               PSEL_CALIB_FORMAT_VERSION);
        return UCS_ERR_UNSUPPORTED;
    }
    p->have_magic = 1;
    return UCS_OK;
}

static ucs_status_t psel_calib_parse_header(psel_calib_parser_t *p, int hdr,
                                            char **tokens, unsigned count)
{
    psel_calib_t *calib = &p->calib;
    ucs_status_t status;

    if (p->in_data) {
        psel_calib_parse_error(p, "%s: header line after range/point lines",
                               tokens[0]);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->hdr_line[hdr] != 0) {
        psel_calib_parse_error(p, "%s: duplicate (first on line %u)",
                               tokens[0], p->hdr_line[hdr]);
        return UCS_ERR_INVALID_PARAM;
    }
    if (count != psel_calib_hdr_fields[hdr] + 1) {
        psel_calib_parse_error(p, "%s: expected %u field(s), got %u", tokens[0],
                               psel_calib_hdr_fields[hdr], count - 1);
        return UCS_ERR_INVALID_PARAM;
    }

    switch (hdr) {
    case PSEL_CALIB_HDR_HOST:
        status = psel_calib_parse_token(p, "hostname", tokens[1],
                                        calib->hostname,
                                        sizeof(calib->hostname));
        if (status == UCS_OK) {
            status = psel_calib_parse_token(p, "machine id", tokens[2],
                                            calib->machine_id,
                                            sizeof(calib->machine_id));
        }
        break;
    case PSEL_CALIB_HDR_UCX:
        status = psel_calib_parse_token(p, "ucx version", tokens[1],
                                        calib->ucx_version,
                                        sizeof(calib->ucx_version));
        break;
    case PSEL_CALIB_HDR_CREATED:
        if (!psel_calib_date_ok(tokens[1])) {
            psel_calib_parse_error(p, "created '%s': expected "
                                   "YYYY-MM-DDTHH:MM:SSZ", tokens[1]);
            return UCS_ERR_INVALID_PARAM;
        }
        ucs_strncpy_zero(calib->created, tokens[1], sizeof(calib->created));
        status = UCS_OK;
        break;
    case PSEL_CALIB_HDR_DURATION:
        status = psel_calib_parse_value(p, "duration", tokens[1], 0,
                                        &calib->duration);
        break;
    default:
        if (strcmp(tokens[1], "quick") && strcmp(tokens[1], "full")) {
            psel_calib_parse_error(p, "mode '%s': expected quick or full",
                                   tokens[1]);
            return UCS_ERR_INVALID_PARAM;
        }
        ucs_strncpy_zero(calib->mode, tokens[1], sizeof(calib->mode));
        status = UCS_OK;
        break;
    }

    if (status == UCS_OK) {
        p->hdr_line[hdr] = p->line_no;
    }
    return status;
}

/* Every header line seen? */
static ucs_status_t psel_calib_parse_header_done(psel_calib_parser_t *p,
                                                 const char *where)
{
    int hdr;

    if (!p->have_magic) {
        psel_calib_parse_error(p, "missing '" PSEL_CALIB_MAGIC " %d' line%s",
                               PSEL_CALIB_FORMAT_VERSION, where);
        return UCS_ERR_INVALID_PARAM;
    }
    for (hdr = 0; hdr < PSEL_CALIB_HDR_LAST; ++hdr) {
        if (p->hdr_line[hdr] == 0) {
            psel_calib_parse_error(p, "missing '%s' line%s",
                                   psel_calib_hdr_names[hdr], where);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    return UCS_OK;
}

/* The line a range or point belongs to: tokens[1..3] */
static psel_calib_line_t *psel_calib_parse_line_of(psel_calib_parser_t *p,
                                                   char **tokens)
{
    char proto[PSEL_CALIB_PROTO_MAX], lanes[PSEL_PROTO_DESC_MAX];
    psel_calib_line_t *line;
    ucs_memory_type_t mem_type;

    if ((psel_calib_parse_token(p, "proto", tokens[1], proto,
                                sizeof(proto)) != UCS_OK) ||
        (psel_calib_parse_token(p, "lanes", tokens[2], lanes,
                                sizeof(lanes)) != UCS_OK)) {
        return NULL;
    }
    for (mem_type = 0; mem_type < UCS_MEMORY_TYPE_LAST; ++mem_type) {
        if (!strcmp(tokens[3], ucs_memory_type_names[mem_type])) {
            break;
        }
    }
    if (mem_type == UCS_MEMORY_TYPE_LAST) {
        psel_calib_parse_error(p, "memtype '%s': unknown memory type",
                               tokens[3]);
        return NULL;
    }

    line = psel_calib_line_add(&p->calib, proto, lanes, mem_type);
    if (line == NULL) {
        psel_calib_parse_error(p, "%s %s %s: more than %u lines, or no memory",
                               proto, lanes, tokens[3], PSEL_CALIB_MAX_LINES);
    }
    return line;
}

static ucs_status_t psel_calib_parse_range(psel_calib_parser_t *p,
                                           char **tokens, unsigned count)
{
    static const char *fields[] = {"single c", "single m", "multi c",
                                   "multi m"};
    double values[4];
    psel_perf_range_t *range;
    psel_calib_line_t *line;
    size_t max_length;
    unsigned i;

    if (count != 9) {
        psel_calib_parse_error(p, "range: expected 8 fields (proto lanes "
                               "memtype max_length single_c single_m multi_c "
                               "multi_m), got %u", count - 1);
        return UCS_ERR_INVALID_PARAM;
    }
    line = psel_calib_parse_line_of(p, tokens);
    if (line == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (psel_calib_parse_size(p, "max_length", tokens[4], 1, &max_length) !=
        UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }
    for (i = 0; i < 4; ++i) {
        if (psel_calib_parse_value(p, fields[i], tokens[5 + i], 0,
                                   &values[i]) != UCS_OK) {
            return UCS_ERR_INVALID_PARAM;
        }
    }

    if (line->num_ranges >= PSEL_PROTO_MAX_RANGES) {
        psel_calib_parse_error(p, "range: more than %d ranges for %s %s %s",
                               PSEL_PROTO_MAX_RANGES, tokens[1], tokens[2],
                               tokens[3]);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((line->num_ranges > 0) &&
        (max_length <= line->ranges[line->num_ranges - 1].max_length)) {
        psel_calib_parse_error(p, "max_length %s: not above the previous "
                               "range's (line %u)", tokens[4],
                               p->range_line[line - p->calib.lines]);
        return UCS_ERR_INVALID_PARAM;
    }

    range                         = &line->ranges[line->num_ranges++];
    range->max_length             = max_length;
    range->perf[PSEL_PERF_SINGLE] = ucs_linear_func_make(
            values[0] / PSEL_CALIB_NS,
            values[1] / (PSEL_CALIB_NS * PSEL_CALIB_KB));
    range->perf[PSEL_PERF_MULTI]  = ucs_linear_func_make(
            values[2] / PSEL_CALIB_NS,
            values[3] / (PSEL_CALIB_NS * PSEL_CALIB_KB));
    p->range_line[line - p->calib.lines] = p->line_no;
    return UCS_OK;
}

static ucs_status_t psel_calib_parse_point(psel_calib_parser_t *p,
                                           char **tokens, unsigned count)
{
    psel_calib_line_t *line;
    double single, multi;
    ucs_status_t status;
    size_t size;
    unsigned idx;

    if (count != 7) {
        psel_calib_parse_error(p, "point: expected 6 fields (proto lanes "
                               "memtype size single multi), got %u",
                               count - 1);
        return UCS_ERR_INVALID_PARAM;
    }
    line = psel_calib_parse_line_of(p, tokens);
    if ((line == NULL) ||
        (psel_calib_parse_size(p, "size", tokens[4], 0, &size) != UCS_OK) ||
        (psel_calib_parse_value(p, "single", tokens[5], 1, &single) != UCS_OK) ||
        (psel_calib_parse_value(p, "multi", tokens[6], 1, &multi) != UCS_OK)) {
        return UCS_ERR_INVALID_PARAM;
    }

    idx = psel_calib_point_index(line, size);
    if ((idx < line->num_points) && (line->points[idx].size == size)) {
        psel_calib_parse_error(p, "size %zu: duplicate point", size);
        return UCS_ERR_INVALID_PARAM;
    }
    status = psel_calib_line_add_point(line, size, single / PSEL_CALIB_NS,
                                       multi / PSEL_CALIB_NS);
    if (status != UCS_OK) {
        psel_calib_parse_error(p, "point: cannot add (%s, at most %u points)",
                               ucs_status_string(status),
                               PSEL_CALIB_MAX_POINTS);
        return (status == UCS_ERR_NO_MEMORY) ? status : UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

/* One line of text, NUL-terminated, without its '\n' */
static ucs_status_t psel_calib_parse_text_line(psel_calib_parser_t *p,
                                               char *text)
{
    char *tokens[PSEL_CALIB_MAX_TOKENS], *save, *token;
    unsigned count = 0;
    int hdr;

    for (token = strtok_r(text, " \t\r\v\f", &save); token != NULL;
         token = strtok_r(NULL, " \t\r\v\f", &save)) {
        if (token[0] == '#') {
            if (count == 0) {
                return UCS_OK; /* comment line */
            }
            psel_calib_parse_error(p, "'#' inside a line: comments take a "
                                   "whole line");
            return UCS_ERR_INVALID_PARAM;
        }
        if (count == PSEL_CALIB_MAX_TOKENS) {
            psel_calib_parse_error(p, "%s: too many fields", tokens[0]);
            return UCS_ERR_INVALID_PARAM;
        }
        tokens[count++] = token;
    }
    if (count == 0) {
        return UCS_OK; /* blank line */
    }

    if (!p->have_magic) {
        return psel_calib_parse_magic(p, tokens, count);
    }
    if (!strcmp(tokens[0], PSEL_CALIB_MAGIC)) {
        psel_calib_parse_error(p, PSEL_CALIB_MAGIC ": duplicate");
        return UCS_ERR_INVALID_PARAM;
    }
    for (hdr = 0; hdr < PSEL_CALIB_HDR_LAST; ++hdr) {
        if (!strcmp(tokens[0], psel_calib_hdr_names[hdr])) {
            return psel_calib_parse_header(p, hdr, tokens, count);
        }
    }

    if (strcmp(tokens[0], "range") && strcmp(tokens[0], "point")) {
        psel_calib_parse_error(p, "unknown keyword '%s'", tokens[0]);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!p->in_data) {
        if (psel_calib_parse_header_done(p, " before the first range/point") !=
            UCS_OK) {
            return UCS_ERR_INVALID_PARAM;
        }
        p->in_data = 1;
    }
    return (tokens[0][0] == 'r') ? psel_calib_parse_range(p, tokens, count) :
                                   psel_calib_parse_point(p, tokens, count);
}

/* At the end: every line's ranges end at inf */
static ucs_status_t psel_calib_parse_finish(psel_calib_parser_t *p)
{
    const psel_calib_line_t *line;
    unsigned i;

    if (psel_calib_parse_header_done(p, "") != UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }
    for (i = 0; i < p->calib.num_lines; ++i) {
        line = &p->calib.lines[i];
        if ((line->num_ranges > 0) &&
            (line->ranges[line->num_ranges - 1].max_length != SIZE_MAX)) {
            p->line_no = p->range_line[i];
            psel_calib_parse_error(p, "max_length %zu: the last range of %s "
                                   "%s %s must end at inf",
                                   line->ranges[line->num_ranges - 1].max_length,
                                   line->proto, line->lanes,
                                   ucs_memory_type_names[line->mem_type]);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    return UCS_OK;
}

ucs_status_t psel_calib_parse(const char *text, size_t length,
                              const char *name, psel_calib_t *calib)
{
    char buf[PSEL_CALIB_MAX_TEXT_LINE + 1];
    psel_calib_locale_t loc;
    psel_calib_parser_t *p;
    const char *pos, *end = text + length, *nl;
    ucs_status_t status = UCS_OK;
    size_t len;

    p = calloc(1, sizeof(*p));
    if (p == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    p->name = name;

    psel_calib_locale_enter(&loc);
    for (pos = text; (pos < end) && (status == UCS_OK); pos = nl + 1) {
        ++p->line_no;
        nl = memchr(pos, '\n', end - pos);
        if (nl == NULL) {
            nl = end; /* last line without '\n' */
        }
        len = nl - pos;
        if (len > PSEL_CALIB_MAX_TEXT_LINE) {
            psel_calib_parse_error(p, "line too long (%zu bytes, at most %d)",
                                   len, PSEL_CALIB_MAX_TEXT_LINE);
            status = UCS_ERR_INVALID_PARAM;
        } else if (memchr(pos, '\0', len) != NULL) {
            psel_calib_parse_error(p, "unexpected NUL character");
            status = UCS_ERR_INVALID_PARAM;
        } else {
            memcpy(buf, pos, len);
            buf[len] = '\0';
            status   = psel_calib_parse_text_line(p, buf);
        }
    }

    if (status == UCS_OK) {
        if (p->line_no == 0) {
            p->line_no = 1; /* empty file: report line 1 */
        }
        status = psel_calib_parse_finish(p);
    }
    psel_calib_locale_leave(&loc);

    if (status == UCS_OK) {
        *calib = p->calib;
    } else {
        psel_calib_cleanup(&p->calib);
    }
    free(p);
    return status;
}

ucs_status_t psel_calib_load(const char *path, psel_calib_t *calib)
{
    char *text = NULL, *grown;
    size_t length = 0, capacity = 0, n;
    ucs_status_t status;
    FILE *stream;

    stream = fopen(path, "r");
    if (stream == NULL) {
        if (errno == ENOENT) {
            return UCS_ERR_NO_ELEM;
        }
        ucs_error("%s: cannot open: %m", path);
        return UCS_ERR_IO_ERROR;
    }

    for (;;) {
        if (length == capacity) {
            if (capacity >= PSEL_CALIB_MAX_FILE) {
                ucs_error("%s: larger than %lu bytes", path,
                          PSEL_CALIB_MAX_FILE);
                status = UCS_ERR_INVALID_PARAM;
                goto out;
            }
            capacity = capacity ? 2 * capacity : 65536;
            grown    = realloc(text, capacity);
            if (grown == NULL) {
                status = UCS_ERR_NO_MEMORY;
                goto out;
            }
            text = grown;
        }
        n       = fread(text + length, 1, capacity - length, stream);
        length += n;
        if (n == 0) {
            break;
        }
    }
    if (ferror(stream)) {
        ucs_error("%s: read error: %m", path);
        status = UCS_ERR_IO_ERROR;
        goto out;
    }

    status = psel_calib_parse(text, length, path, calib);

out:
    free(text);
    fclose(stream);
    return status;
}


/* Host check, application, default path */

psel_calib_match_t psel_calib_check(const psel_calib_t *calib, char *why,
                                    size_t max)
{
    char hostname[sizeof(calib->hostname)];
    char machine_id[sizeof(calib->machine_id)];
    char dummy[1];

    if ((why == NULL) || (max == 0)) {
        why = dummy;
        max = sizeof(dummy);
    }
    psel_calib_this_hostname(hostname, sizeof(hostname));
    psel_calib_this_machine_id(machine_id, sizeof(machine_id));

    if (strcmp(calib->hostname, hostname)) {
        ucs_snprintf_safe(why, max, "calibrated on host %s, this is %s",
                          calib->hostname, hostname);
        return PSEL_CALIB_MISMATCHED;
    }
    if (strcmp(calib->machine_id, "-") && strcmp(machine_id, "-") &&
        strcmp(calib->machine_id, machine_id)) {
        ucs_snprintf_safe(why, max, "calibrated on host %s with machine id "
                          "%s, this one has %s", calib->hostname,
                          calib->machine_id, machine_id);
        return PSEL_CALIB_MISMATCHED;
    }
    if (strcmp(calib->ucx_version, UCT_VERNO_STRING)) {
        ucs_snprintf_safe(why, max, "calibrated with UCX %s, this is UCX %s: "
                          "measure again", calib->ucx_version,
                          UCT_VERNO_STRING);
        return PSEL_CALIB_STALE;
    }
    ucs_snprintf_safe(why, max, "calibrated on this host (%s) with UCX %s at "
                      "%s", calib->hostname, calib->ucx_version,
                      calib->created);
    return PSEL_CALIB_MATCH;
}

int psel_calib_apply(const psel_calib_t *calib, const char *proto,
                     const char *lanes, ucs_memory_type_t mem_type,
                     psel_proto_caps_t *caps)
{
    const psel_calib_line_t *line = psel_calib_find(calib, proto, lanes,
                                                    mem_type);
    psel_perf_range_t ranges[PSEL_PROTO_MAX_RANGES];
    unsigned r, n = 0;
    size_t largest;

    if ((line == NULL) || (line->num_ranges == 0) || (caps->num_ranges == 0) ||
        (caps->num_ranges > PSEL_PROTO_MAX_RANGES)) {
        return 0;
    }

    largest = caps->ranges[caps->num_ranges - 1].max_length;
    for (r = 0; r < line->num_ranges; ++r) {
        if (line->ranges[r].max_length < caps->min_length) {
            continue;
        }
        ranges[n] = line->ranges[r];
        if (ranges[n++].max_length >= largest) {
            ranges[n - 1].max_length = largest;
            break;
        }
    }

    memcpy(caps->ranges, ranges, n * sizeof(*ranges));
    caps->num_ranges = n;
    return 1;
}

ucs_status_t psel_calib_default_path(char *path, size_t max)
{
    const char *cache = getenv("XDG_CACHE_HOME");
    const char *home  = getenv("HOME");
    char hostname[128];
    int len;

    psel_calib_this_hostname(hostname, sizeof(hostname));
    if ((cache != NULL) && (cache[0] != '\0')) {
        len = snprintf(path, max, "%s/protosel/calibration-%s.txt", cache,
                       hostname);
    } else if ((home != NULL) && (home[0] != '\0')) {
        len = snprintf(path, max, "%s/.cache/protosel/calibration-%s.txt",
                       home, hostname);
    } else {
        return UCS_ERR_NO_ELEM;
    }
    return ((len < 0) || ((size_t)len >= max)) ? UCS_ERR_BUFFER_TOO_SMALL :
                                                 UCS_OK;
}
