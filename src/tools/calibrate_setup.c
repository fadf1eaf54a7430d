/*
 * psel_calibrate: one transport setup. Its rails first (against a server
 * reached over several network lanes: each lane alone), then every
 * protocol of its table in turn, forced on both sides, at log-spaced sizes
 * within the time budget, and at last the lines fitted in natural order
 * (psel_calib_fit_in_order). See calibrate.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "calibrate.h"

#include <ucp_proto_sel/select.h>
#include <ucs/sys/math.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------------- */
/* What to measure                                                        */
/* ---------------------------------------------------------------------- */

static size_t cal_caps_max(const psel_proto_caps_t *caps)
{
    return caps->ranges[caps->num_ranges - 1].max_length;
}

/*
 * The sizes where a protocol's cost really changes form (e.g. where eager
 * bcopy starts paying per fragment): range limits where the single line
 * changes. Limits inside one stage sum, where only the stage that paces
 * streaming changes (the multi envelope), are not breaks of the
 * measurement.
 */
static unsigned cal_caps_breaks(const psel_proto_caps_t *caps, size_t *breaks)
{
    const ucs_linear_func_t *a, *b;
    unsigned i, count = 0;

    for (i = 0; i + 1 < caps->num_ranges; ++i) {
        a = &caps->ranges[i].perf[PSEL_PERF_SINGLE];
        b = &caps->ranges[i + 1].perf[PSEL_PERF_SINGLE];
        if ((a->c != b->c) || (a->m != b->m)) {
            breaks[count++] = caps->ranges[i].max_length;
        }
    }
    return count;
}

static int cal_size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t*)a, y = *(const size_t*)b;

    return (x > y) - (x < y);
}

static void cal_add_size(size_t *sizes, unsigned *count, size_t size,
                         size_t lo, size_t hi)
{
    if ((size >= lo) && (size <= hi) && (*count < CAL_MAX_SIZES)) {
        sizes[(*count)++] = size;
    }
}

/*
 * Log-spaced sizes from max(1, min_length) up to the protocol's largest
 * size or @a max_size, plus both sides of every break; sorted, unique. They
 * are measured in this order until the time budget runs out.
 */
unsigned cal_plan_sizes(const cal_proto_t *p, const cal_mode_t *mode,
                        size_t max_size, size_t *sizes)
{
    size_t lo = ucs_max(p->caps.min_length, 1);
    size_t hi = ucs_min(cal_caps_max(&p->caps), max_size);
    unsigned count = 0, i, j, step;
    double x;

    for (i = 0; (1ul << i) <= hi; ++i) {
        for (step = 0; step < mode->steps_per_octave; ++step) {
            x = (double)(1ul << i) *
                pow(2.0, (double)step / mode->steps_per_octave);
            cal_add_size(sizes, &count, (size_t)(x + 0.5), lo, hi);
        }
    }
    for (i = 0; i < p->num_breaks; ++i) {
        cal_add_size(sizes, &count, p->breaks[i], lo, hi);
        cal_add_size(sizes, &count, p->breaks[i] + 1, lo, hi);
    }
    cal_add_size(sizes, &count, lo, lo, hi);
    cal_add_size(sizes, &count, hi, lo, hi);

    qsort(sizes, count, sizeof(*sizes), cal_size_cmp);
    for (i = j = 0; i < count; ++i) {
        if ((j == 0) || (sizes[j - 1] != sizes[i])) {
            sizes[j++] = sizes[i];
        }
    }
    return j;
}

int cal_runs(const cal_proto_t *p, size_t size)
{
    unsigned i;

    for (i = 0; i < p->num_runs; ++i) {
        if ((size >= p->runs[i].start) && (size <= p->runs[i].end)) {
            return 1;
        }
    }
    return 0;
}

/* Where @a table runs the protocol named @a name: into @a runs, at most
 * CAL_MAX_RUNS */
static unsigned cal_table_runs(const psel_select_table_t *table,
                               const char *name, cal_run_t *runs)
{
    size_t start = 0;
    unsigned row, count = 0;

    for (row = 0; (table != NULL) && (row < table->count); ++row) {
        if (!strcmp(table->elems[row].proto->name, name) &&
            (count < CAL_MAX_RUNS)) {
            runs[count].start = start;
            runs[count].end   = table->elems[row].max_length;
            ++count;
        }
        start = table->elems[row].max_length + 1;
    }
    return count;
}

/* Where the live endpoint runs @a p (after the configuration that forces
 * it): the sizes where both its tables do, single sends' (tag_lat) and
 * streamed sends' (tag_bw) */
static void cal_read_runs(cal_ctx_t *ctx, cal_proto_t *p)
{
    cal_run_t single[CAL_MAX_RUNS], stream[CAL_MAX_RUNS];
    unsigned num_single, num_stream, i, j;
    size_t start, end;

    num_single  = cal_table_runs(psel_ep_tag_table(ctx->run.ep, 0), p->name,
                                 single);
    num_stream  = cal_table_runs(psel_ep_tag_table(ctx->run.ep,
                                                   PSEL_SEND_FLAG_STREAM),
                                 p->name, stream);
    p->num_runs = 0;
    for (i = 0; i < num_single; ++i) {
        for (j = 0; j < num_stream; ++j) {
            start = ucs_max(single[i].start, stream[j].start);
            end   = ucs_min(single[i].end, stream[j].end);
            if ((start <= end) && (p->num_runs < CAL_MAX_RUNS)) {
                p->runs[p->num_runs].start = start;
                p->runs[p->num_runs].end   = end;
                ++p->num_runs;
            }
        }
    }
}


/* ---------------------------------------------------------------------- */
/* Configurations                                                         */
/* ---------------------------------------------------------------------- */

/*
 * Reconnect both sides with the setup's settings and @a extra ones; both
 * select without any calibration file, except this side's rails file once
 * the rails are measured (never sent: the server's own lanes are its own).
 */
ucs_status_t cal_configure(cal_ctx_t *ctx, const cal_setup_t *setup,
                           const char *extra, const char *local)
{
    char settings[CAL_SETTINGS_MAX], locals[PATH_MAX + 128];
    ucs_status_t status;
    double settle;

    snprintf(settings, sizeof(settings), "%s\nUCX_PSEL_CALIBRATION=none%s%s",
             setup->settings, (extra != NULL) ? "\n" : "",
             (extra != NULL) ? extra : "");
    snprintf(locals, sizeof(locals), "%s%s%s%s",
             (ctx->rails_file[0] != '\0') ? "UCX_PSEL_CALIBRATION=" : "",
             ctx->rails_file, (local != NULL) ? "\n" : "",
             (local != NULL) ? local : "");
    status = pt_session_configure(&ctx->run, settings, locals);
    if (status != UCS_OK) {
        return status;
    }
    /* settle: the first messages of new endpoints set up connections and
     * warm caches, and would make the smallest sizes look slow */
    return pt_session_measure(&ctx->run, PT_TEST_TAG_LAT, 8, 0,
                              CAL_SETTLE_ITERS, 1, &settle);
}

/* The protocols the endpoint's table weighs, with their caps */
static unsigned cal_read_protos(cal_ctx_t *ctx, cal_proto_t *protos)
{
    const psel_select_table_t *table = psel_ep_tag_table(ctx->run.ep, 0);
    unsigned count = 0, i;

    for (i = 0; (table != NULL) && (i < table->num_protos); ++i) {
        if (table->status[i] != UCS_OK) {
            continue;
        }
        memset(&protos[count], 0, sizeof(protos[count]));
        protos[count].caps = table->caps[i];
        snprintf(protos[count].name, sizeof(protos[count].name), "%s",
                 table->protos[i]->name);
        protos[count].num_breaks = cal_caps_breaks(&protos[count].caps,
                                                   protos[count].breaks);
        ++count;
    }
    return count;
}

/*
 * UCX_PSEL_PROTOS that forces @a p: itself, plus one protocol that covers
 * the sizes it does not (an endpoint must cover every size).
 */
static void cal_force_protos(const cal_proto_t *p, const cal_proto_t *protos,
                             unsigned count, char *settings, size_t max)
{
    const char *cover = NULL;
    unsigned i;

    if ((p->caps.min_length > 0) || (cal_caps_max(&p->caps) != SIZE_MAX)) {
        for (i = 0; i < count; ++i) {
            if ((protos[i].caps.min_length == 0) &&
                (cal_caps_max(&protos[i].caps) == SIZE_MAX)) {
                cover = protos[i].name;
                break;
            }
        }
    }
    snprintf(settings, max, "UCX_PSEL_PROTOS=%.*s%s%.*s",
             PSEL_CALIB_PROTO_MAX, p->name, (cover != NULL) ? "," : "",
             PSEL_CALIB_PROTO_MAX, (cover != NULL) ? cover : "");
}


/* ---------------------------------------------------------------------- */
/* Rails                                                                  */
/* ---------------------------------------------------------------------- */

/* The distinct lanes the protocols use, if there are several */
static unsigned cal_rail_names(const cal_proto_t *protos, unsigned count,
                               char names[][PSEL_LANE_NAME_MAX])
{
    char lanes[PSEL_PROTO_DESC_MAX], *lane, *save;
    unsigned i, j, num = 0;

    for (i = 0; i < count; ++i) {
        snprintf(lanes, sizeof(lanes), "%s", protos[i].caps.lanes);
        for (lane = strtok_r(lanes, "+", &save); lane != NULL;
             lane = strtok_r(NULL, "+", &save)) {
            for (j = 0; (j < num) && strcmp(names[j], lane); ++j) {
            }
            if ((j == num) && (num < PSEL_CALIB_MAX_RAILS) &&
                (strchr(lane, '/') != NULL)) {
                snprintf(names[num++], PSEL_LANE_NAME_MAX, "%s", lane);
            }
        }
    }
    return num;
}

/* A calibration file of this run's rails alone, for this side's selection
 * while the protocols are measured */
static ucs_status_t cal_write_rails_file(cal_ctx_t *ctx)
{
    const char *dir = getenv("TMPDIR");
    psel_calib_t rails;
    ucs_status_t status;
    int fd;

    snprintf(ctx->rails_file, sizeof(ctx->rails_file),
             "%s/psel_calibrate_rails.XXXXXX",
             ((dir != NULL) && (dir[0] != '\0')) ? dir : "/tmp");
    fd = mkstemp(ctx->rails_file);
    if (fd < 0) {
        fprintf(stderr, "psel_calibrate: cannot create %s: %m\n",
                ctx->rails_file);
        ctx->rails_file[0] = '\0';
        return UCS_ERR_IO_ERROR;
    }
    close(fd);

    rails           = ctx->calib;
    rails.has_noise = 0;
    rails.num_lines = 0;
    rails.lines     = NULL;
    status          = psel_calib_save(&rails, ctx->rails_file);
    if (status != UCS_OK) {
        unlink(ctx->rails_file);
        ctx->rails_file[0] = '\0';
    }
    return status;
}

/*
 * One rail's latency and bandwidth: the fastest of CAL_RAIL_TRIES
 * measurements of each (what the rail can do: a stall of the machine only
 * ever makes a rail look slower), within @a end.
 */
static ucs_status_t cal_rail(cal_ctx_t *ctx, double end, double *latency,
                             double *bandwidth)
{
    double now, t_end, best_lat = INFINITY, best_bw = 0;
    cal_point_status_t result;
    cal_point_t point;
    ucs_status_t status;
    unsigned i;
    size_t size;

    for (i = 0; i < CAL_RAIL_TRIES; ++i) {
        now    = psel_oob_time();
        status = cal_measure(ctx, PT_TEST_TAG_LAT, 8, 0,
                             now + (end - now) / (2 * (CAL_RAIL_TRIES - i)),
                             &point, &result);
        if (status != UCS_OK) {
            return status;
        }
        if (result != CAL_POINT_LATE) {
            best_lat = ucs_min(best_lat, point.time);
        }

        /* the largest size whose phases fit this try's share of the time */
        now   = psel_oob_time();
        t_end = now + (end - now) / (CAL_RAIL_TRIES - i);
        for (size = ctx->opts.mode->rail_size; ; size /= 4) {
            status = cal_measure(ctx, PT_TEST_TAG_BW, size, 0, t_end, &point,
                                 &result);
            if ((status != UCS_OK) || (result != CAL_POINT_LATE) ||
                (size < 4 * CAL_COLD_MIN)) {
                break;
            }
        }
        if (status != UCS_OK) {
            return status;
        }
        if (result != CAL_POINT_LATE) {
            best_bw = ucs_max(best_bw, size / point.time);
        }
    }
    if (!isfinite(best_lat) || !(best_bw > 0)) {
        return UCS_ERR_TIMED_OUT;
    }
    *latency   = best_lat;
    *bandwidth = best_bw;
    return UCS_OK;
}

/*
 * Each lane alone (this side's UCX_PSEL_NET_DEVICES): half the round trip
 * of an 8-byte message, and the bandwidth of streaming mode->rail_size
 * messages. Recorded as rails, which lane selection takes instead of the
 * advertised attributes; not when other processes took the CPUs meanwhile.
 */
static ucs_status_t cal_rails(cal_ctx_t *ctx, const cal_setup_t *setup,
                              const cal_proto_t *protos, unsigned count,
                              double end)
{
    char names[PSEL_CALIB_MAX_RAILS][PSEL_LANE_NAME_MAX], local[128];
    char peers[PSEL_CALIB_MAX_RAILS][PSEL_DEV_ADDR_HEX_MAX];
    double lat[PSEL_CALIB_MAX_RAILS], bw[PSEL_CALIB_MAX_RAILS], fastest = 0;
    double steal, load;
    cal_cpu_sample_t before, after;
    ucs_status_t status;
    unsigned num, i;

    num = cal_rail_names(protos, count, names);
    if (num < 2) {
        return UCS_OK;
    }

    cal_cpu_sample(ctx, &before);
    for (i = 0; i < num; ++i) {
        snprintf(local, sizeof(local), "UCX_PSEL_NET_DEVICES=%s",
                 strchr(names[i], '/') + 1);
        status = cal_configure(ctx, setup, NULL, local);
        if (status != UCS_OK) {
            fprintf(stderr, "psel_calibrate: cannot connect over %s alone\n",
                    names[i]);
            return status;
        }
        /* a rail is what this lane does to this peer's device */
        if (psel_ep_lane_peer(ctx->run.ep, names[i], peers[i],
                              sizeof(peers[i])) != UCS_OK) {
            printf("# %-4s rails: not measured (the peer's device address "
                   "of %s is not known)\n", setup->name, names[i]);
            return UCS_OK;
        }
        status = cal_rail(ctx, psel_oob_time() +
                               (end - psel_oob_time()) / (num - i),
                          &lat[i], &bw[i]);
        if (status == UCS_ERR_TIMED_OUT) {
            printf("# %-4s rails: not measured (no time left in the "
                   "budget)\n", setup->name);
            return UCS_OK;
        } else if (status != UCS_OK) {
            return status;
        }
        fastest = ucs_max(fastest, bw[i]);
    }
    cal_cpu_sample(ctx, &after);
    cal_cpu_delta(&before, &after, &steal, &load);
    if (load > cal_cpu_spare(ctx)) {
        ucs_string_buffer_appendf(&ctx->report, "rails: refused: other "
                                  "processes used %.2f CPUs while they were "
                                  "measured, more than the %.2f this "
                                  "calibration leaves them (CPU steal "
                                  "%.1f%%); lane selection keeps the "
                                  "advertised attributes\n", load,
                                  cal_cpu_spare(ctx), 100 * steal);
        ctx->refused += 2 * num;
        return UCS_OK;
    }

    for (i = 0; i < num; ++i) {
        status = psel_calib_rail_set(&ctx->calib, names[i],
                                     ctx->opts.any_peer ? "" : peers[i],
                                     lat[i], bw[i]);
        if (status != UCS_OK) {
            fprintf(stderr, "psel_calibrate: rail %s: %s\n", names[i],
                    ucs_status_string(status));
            return status;
        }
        printf("# %-4s rail %-20s latency %8.3f us  bandwidth %8.1f MB/s "
               "(%.0f%% of the fastest), to %s%s\n", setup->name, names[i],
               lat[i] * 1e6, bw[i] / UCS_MBYTE, 100 * bw[i] / fastest,
               peers[i], ctx->opts.any_peer ? ", written for every peer" : "");
    }
    fflush(stdout);
    return cal_write_rails_file(ctx);
}


/* ---------------------------------------------------------------------- */
/* Protocols                                                              */
/* ---------------------------------------------------------------------- */

static void cal_progress(const cal_setup_t *setup, const cal_proto_t *p,
                         unsigned i, unsigned n, size_t size)
{
    if (isatty(STDERR_FILENO)) {
        fprintf(stderr, "\r# %-4s %-10s size %u/%u (%zu B) ...\033[K",
                setup->name, p->name, i + 1, n, size);
    }
}

/* Drop @a line's points (counted as refused) and ranges: it keeps its
 * attribute line */
static void cal_refuse_line(cal_ctx_t *ctx, psel_calib_line_t *line)
{
    unsigned i, t;

    for (i = 0; i < line->num_points; ++i) {
        for (t = 0; t < PSEL_PERF_LAST; ++t) {
            ctx->refused += (line->points[i].time[t] > 0);
        }
    }
    free(line->points);
    line->points     = NULL;
    line->num_points = 0;
    line->num_ranges = 0;
}

static void cal_level_ref_set(cal_level_ref_t *ref, size_t size,
                              const cal_point_t *lat)
{
    ref->size   = size;
    ref->before = lat->time;
    ref->spread = lat->spread;
}

/* The reference whose change p->level_changed says (the first size when
 * that one has gone with a new sweep) */
static const cal_level_ref_t *cal_level_changed_ref(const cal_proto_t *p)
{
    return (p->level[p->level_ref].size != 0) ? &p->level[p->level_ref] :
           &p->level[0];
}

/*
 * The VM this runs on moves between speed levels without notice (8-byte
 * latency over shared memory 0.1 or 0.5 us), and a sweep across a change
 * mixes two machines in one line: egr/bcopy's points fell from 140 to 113
 * ns halfway through its sweep, and it read 12% faster than egr/short at
 * 8-92 B. So a protocol's first size is measured again during its sweep
 * (cal_sweep), after it, and at the end of the setup: times that differ
 * by more than CAL_LEVEL_TOLERANCE plus both spreads (the slower over the
 * faster) are a change of level; so are those of its first size out of
 * cache (cal_level_ref_t). The configuration must be @a p's. Sets each
 * reference's after (0 when it did not fit in CAL_LEVEL_CHECK_TIME, or was
 * not measured once another had changed), p->level_changed and p->level_ref.
 */
static ucs_status_t cal_check_level(cal_ctx_t *ctx, cal_proto_t *p,
                                    const char *when)
{
    cal_point_status_t result;
    cal_level_ref_t *ref;
    cal_point_t again;
    ucs_status_t status;
    unsigned r;

    p->level_ref     = 0;
    p->level_changed = 0;
    for (r = 0; r < CAL_LEVEL_REFS; ++r) {
        p->level[r].after = 0;
    }
    for (r = 0; (r < CAL_LEVEL_REFS) && !p->level_changed; ++r) {
        ref = &p->level[r];
        if (ref->size == 0) {
            continue;
        }
        status = cal_measure(ctx, cal_test(p, 0), ref->size, ref->before,
                             psel_oob_time() + CAL_LEVEL_CHECK_TIME, &again,
                             &result);
        if ((status != UCS_OK) || (result == CAL_POINT_LATE)) {
            return status;
        }
        ref->after       = again.time;
        p->level_ref     = r;
        p->level_changed = (ucs_max(again.time, ref->before) /
                            ucs_min(again.time, ref->before) - 1) >
                           CAL_LEVEL_TOLERANCE + ref->spread + again.spread;
        if (ctx->opts.verbose) {
            printf("#   %-10s %zu B again %s: latency %.3f us (%+.1f%%)%s\n",
                   p->name, ref->size, when, again.time * 1e6,
                   100 * (again.time / ref->before - 1),
                   p->level_changed ? "  the machine's speed changed" : "");
        }
    }
    if (!p->level_changed) {
        p->level_ref = 0;
    }
    return UCS_OK;
}

/*
 * One sweep of @a p: its planned sizes where the configuration runs it,
 * ascending, until @a end; p->measured counts them (from 0). The first size
 * measured and its latency go to p->level[0] (a sweep that measures
 * nothing leaves it), its first from CAL_COLD_MIN to p->level[1]. They are
 * measured again every CAL_LEVEL_CHECK_EVERY: the VM can slow down and come
 * back within one sweep, which the check after it does not see (egr/bcopy
 * read 0.12 us at 1-16 B and 0.59 at 23 B-1 MiB, both ends on the fast
 * level, and rndv/am took 410 B-45 KiB). On a change the sweep stops, with
 * p->level_changed and p->level_stop set.
 */
static ucs_status_t cal_sweep(cal_ctx_t *ctx, const cal_setup_t *setup,
                              cal_proto_t *p, psel_calib_line_t *line,
                              double end)
{
    size_t sizes[CAL_MAX_SIZES], prev_size = 0;
    double prev_lat = 0, prev_bw = 0, next_check;
    cal_point_status_t res_lat, res_bw;
    cal_point_t lat, bw;
    unsigned num_sizes, i;
    ucs_status_t status;

    p->level_stop     = 0;
    num_sizes         = cal_plan_sizes(p, ctx->opts.mode, ctx->opts.max_size,
                                   sizes);
    next_check    = psel_oob_time() + CAL_LEVEL_CHECK_EVERY;
    for (i = 0; i < num_sizes; ++i) {
        if (!cal_runs(p, sizes[i])) {
            continue; /* the fallback protocol runs there */
        }
        if (sizes[i] < pt_tests[cal_test(p, 0)].min_size) {
            continue; /* put_lat: a put of 0 bytes says nothing arrived */
        }
        cal_progress(setup, p, i, num_sizes, sizes[i]);
        /* what the previous size took, scaled up: to skip a probe that
         * could not fit anyway */
        status = cal_measure(ctx, cal_test(p, 0), sizes[i],
                             prev_lat * sizes[i] / ucs_max(prev_size, 1), end,
                             &lat, &res_lat);
        if ((status == UCS_OK) && (res_lat != CAL_POINT_LATE)) {
            status = cal_measure(ctx, cal_test(p, 1), sizes[i],
                                 prev_bw * sizes[i] / ucs_max(prev_size, 1),
                                 end, &bw, &res_bw);
        }
        if (status != UCS_OK) {
            fprintf(stderr, "psel_calibrate: %s over %s at %zu bytes: %s\n",
                    p->name, p->caps.lanes, sizes[i],
                    ucs_status_string(status));
            return status;
        }
        if ((res_lat == CAL_POINT_LATE) || (res_bw == CAL_POINT_LATE)) {
            p->late = sizes[i]; /* the larger sizes come from the fit */
            break;
        }

        status = psel_calib_line_add_point(line, sizes[i], lat.time, bw.time);
        if (status == UCS_OK) {
            status = psel_calib_line_set_spread(line, sizes[i], lat.spread,
                                                bw.spread);
        }
        if (status != UCS_OK) {
            return status;
        }
        if (p->measured == 0) {
            cal_level_ref_set(&p->level[0], sizes[i], &lat);
            p->level[1].size = 0;
        } else if ((sizes[i] >= CAL_COLD_MIN) && (p->level[1].size == 0)) {
            cal_level_ref_set(&p->level[1], sizes[i], &lat);
        }
        ++p->measured;
        prev_size = sizes[i];
        prev_lat  = lat.time;
        prev_bw   = bw.time;
        if (ctx->opts.verbose) {
            printf("#   %-5s %-10s %10zu B  latency %10.3f us (%+4.0f%%)  "
                   "per message streamed %10.3f us (%+4.0f%%)%s%s\n",
                   setup->name, p->name, sizes[i], lat.time * 1e6,
                   100 * lat.spread, bw.time * 1e6, 100 * bw.spread,
                   (res_lat == CAL_POINT_NOISY) ? "  noisy latency" : "",
                   (res_bw == CAL_POINT_NOISY) ? "  noisy streaming" : "");
        }
        if ((p->measured >= 2) && (i + 1 < num_sizes) &&
            (psel_oob_time() >= next_check)) {
            status = cal_check_level(ctx, p, "during the sweep");
            if (status != UCS_OK) {
                return status;
            } else if (p->level_changed) {
                p->level_stop = sizes[i];
                break;
            }
            next_check = psel_oob_time() + CAL_LEVEL_CHECK_EVERY;
        }
    }
    if (isatty(STDERR_FILENO)) {
        fprintf(stderr, "\r\033[K");
    }
    return UCS_OK;
}

/* "1 B: 0.116 us before the sweep, 0.585 after" (or "... when measured
 * again after 23 B"): the change cal_check_level saw in @a sweep */
static void cal_level_change_str(const cal_proto_t *p, const char *sweep,
                                 char *buf, size_t max)
{
    const cal_level_ref_t *ref = cal_level_changed_ref(p);
    int len = snprintf(buf, max, "%zu B: %.3f us before %s, %.3f ",
                       ref->size, ref->before * 1e6, sweep, ref->after * 1e6);

    if ((len < 0) || ((size_t)len >= max)) {
        return;
    } else if (p->level_stop == 0) {
        snprintf(buf + len, max - len, "after");
    } else {
        snprintf(buf + len, max - len, "when measured again after %zu B",
                 p->level_stop);
    }
}

/* A sweep the machine's speed changed under: its points are left out
 * (counted as refused), to be swept again */
static void cal_forget_sweep(cal_ctx_t *ctx, cal_proto_t *p,
                             psel_calib_line_t *line)
{
    cal_refuse_line(ctx, line);
    p->measured = 0;
    p->late     = 0;
}

/* Until when a protocol may be swept again after a change of speed: the
 * budget and CAL_LEVEL_OVERRUN of it */
static double cal_level_deadline(const cal_ctx_t *ctx)
{
    return ctx->deadline + CAL_LEVEL_OVERRUN * ctx->opts.mode->budget;
}

ucs_status_t cal_protocol(cal_ctx_t *ctx, const cal_setup_t *setup,
                          cal_proto_t *p, psel_calib_line_t *line, double end,
                          double start)
{
    cal_cpu_sample_t cpu_before, cpu_after;
    char change[128];
    ucs_status_t status;
    unsigned attempt;

    cal_cpu_sample(ctx, &cpu_before);
    for (attempt = 0; ; ++attempt) {
        status = cal_sweep(ctx, setup, p, line, end);
        if ((status != UCS_OK) || (p->measured < 2)) {
            /* nothing to compare; swept again after a change (here or
             * at the end of the setup), nothing to keep */
            p->level_late = p->level_changed;
            break;
        }
        if (p->level_stop == 0) {
            status = cal_check_level(ctx, p, "after the sweep");
        }
        if ((status != UCS_OK) || !p->level_changed ||
            (attempt == CAL_LEVEL_RETRIES)) {
            break;
        }
        /* the points mix two speed levels: all of them again, in a share
         * as long as the first (taken from the protocols after it) */
        cal_level_change_str(p, "the sweep", change, sizeof(change));
        ucs_string_buffer_appendf(&ctx->report, "%s over %s: the machine's "
                                  "speed changed while it was measured "
                                  "(%s); measured again\n", line->proto,
                                  line->lanes, change);
        cal_forget_sweep(ctx, p, line);
        end = ucs_min(psel_oob_time() + (end - start),
                      cal_level_deadline(ctx));
    }
    cal_cpu_sample(ctx, &cpu_after);
    cal_cpu_delta(&cpu_before, &cpu_after, &p->steal, &p->load);
    p->seconds = psel_oob_time() - start;
    return status;
}

/*
 * A change of speed between two protocols' sweeps leaves each line sound
 * in itself and the lines on two machines. So at the end of the setup each
 * protocol's first size is measured once more, on its own configuration
 * (the last one's was just now, unless others were swept again since): a
 * protocol whose time moved since its sweep is swept again, in a share as
 * long as the setup's average. One pass: a machine whose speed keeps
 * changing gets lines from whichever level each last sweep saw.
 */
static ucs_status_t cal_check_setup_level(cal_ctx_t *ctx,
                                          const cal_setup_t *setup,
                                          cal_proto_t *protos,
                                          psel_calib_line_t **lines,
                                          unsigned count)
{
    unsigned i, swept = 0;
    double share = 0, start;
    ucs_status_t status;
    cal_proto_t *p;

    for (i = 0; i < count; ++i) {
        share += protos[i].seconds / count;
    }
    for (i = 0; i < count; ++i) {
        p = &protos[i];
        if ((i + 1 == count) && (swept == 0)) {
            break; /* measured again right after its sweep, just now */
        }
        if ((p->level[0].after == 0) || p->level_changed) {
            continue; /* not comparable, or refused anyway */
        }
        status = cal_configure(ctx, setup, p->settings, NULL);
        if (status == UCS_OK) {
            status = cal_check_level(ctx, p, "at the end of the setup");
        }
        if (status != UCS_OK) {
            return status;
        } else if (!p->level_changed) {
            continue;
        }
        ucs_string_buffer_appendf(&ctx->report, "%s over %s: the machine's "
                                  "speed changed after it was measured "
                                  "(%zu B: %.3f us in its sweep, %.3f at "
                                  "the end of the %s setup); measured "
                                  "again\n", lines[i]->proto,
                                  lines[i]->lanes,
                                  cal_level_changed_ref(p)->size,
                                  cal_level_changed_ref(p)->before * 1e6,
                                  cal_level_changed_ref(p)->after * 1e6,
                                  setup->name);
        cal_forget_sweep(ctx, p, lines[i]);
        ++swept;
        start  = psel_oob_time();
        status = cal_protocol(ctx, setup, p, lines[i],
                              ucs_min(start + share,
                                      cal_level_deadline(ctx)),
                              start);
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

/*
 * Whether a protocol's line is unsound as a whole: the machine's speed
 * changed and no time was left to sweep it again (it has too few points,
 * or none, and must not stay on its attribute line beside the others'
 * measured ones); other processes took more than the spare CPUs while it
 * was measured (its times are the scheduler's: its points agree with each
 * other, not with the protocol); or the machine's speed changed during its
 * sweep again after it was swept again (cal_check_level). If so, @a why
 * says which.
 */
static int cal_unsound(const cal_ctx_t *ctx, const cal_proto_t *p,
                       const psel_calib_line_t *line, char *why, size_t max)
{
    const cal_level_ref_t *ref = cal_level_changed_ref(p);
    char change[128];

    if (p->level_late) {
        snprintf(why, max, "the machine's speed changed (%zu B: %.3f us, "
                 "then %.3f), and the time budget left too little to "
                 "measure it again", ref->size, ref->before * 1e6,
                 ref->after * 1e6);
        return 1;
    } else if (line->num_points == 0) {
        return 0;
    } else if (p->load > cal_cpu_spare(ctx)) {
        snprintf(why, max, "other processes used %.2f CPUs while it was "
                 "measured, more than the %.2f this calibration leaves them "
                 "(CPU steal %.1f%%): the times are the scheduler's",
                 p->load, cal_cpu_spare(ctx), 100 * p->steal);
        return 1;
    } else if (p->level_changed) {
        cal_level_change_str(p, "the last", change, sizeof(change));
        snprintf(why, max, "the machine's speed changed while it was "
                 "measured, in each of %u sweeps (%s): its points mix two "
                 "machines", CAL_LEVEL_RETRIES + 1, change);
        return 1;
    }
    return 0;
}

/*
 * If a line of the setup is unsound, refuse every line of it: a protocol
 * left on its attribute line would meet the others' measured lines on
 * another scale (tcp: 111 us against 4 us), and the table would follow the
 * scales, not the costs (egr/short refused alone lost every size to
 * rndv/put). Lines are kept per lanes together or not at all.
 */
static void cal_refuse_unsound(cal_ctx_t *ctx, const cal_proto_t *protos,
                               psel_calib_line_t **lines, unsigned count)
{
    unsigned i, unsound = UINT_MAX;
    char why[256];

    for (i = 0; (i < count) && (unsound == UINT_MAX); ++i) {
        if (cal_unsound(ctx, &protos[i], lines[i], why, sizeof(why))) {
            unsound = i;
        }
    }
    if (unsound == UINT_MAX) {
        return;
    }
    for (i = 0; i < count; ++i) {
        if (cal_unsound(ctx, &protos[i], lines[i], why, sizeof(why))) {
            ucs_string_buffer_appendf(&ctx->report, "%s over %s: refused: "
                                      "%s; it keeps its attribute line\n",
                                      lines[i]->proto, lines[i]->lanes, why);
        } else if (lines[i]->num_points > 0) {
            ucs_string_buffer_appendf(&ctx->report, "%s over %s: refused "
                                      "with %s's line: the lines of these "
                                      "lanes are kept together or not at "
                                      "all, so that no measured line meets "
                                      "an attribute line; it keeps its "
                                      "attribute line\n", lines[i]->proto,
                                      lines[i]->lanes,
                                      lines[unsound]->proto);
        }
        cal_refuse_line(ctx, lines[i]);
    }
}

static void cal_print_line(const cal_setup_t *setup, const cal_proto_t *p,
                    const psel_calib_line_t *line)
{
    ucs_string_buffer_t strb;

    ucs_string_buffer_init(&strb);
    if (line->num_ranges > 0) {
        ucs_string_buffer_appendf(&strb, "latency ");
        psel_perf_func_str(line->ranges[0].perf[PSEL_PERF_SINGLE], &strb);
        ucs_string_buffer_appendf(&strb, ", streamed ");
        psel_perf_func_str(line->ranges[0].perf[PSEL_PERF_MULTI], &strb);
        if (line->num_ranges > 1) {
            ucs_string_buffer_appendf(&strb, " (first range)");
        }
    } else {
        ucs_string_buffer_appendf(&strb, "no line: attributes stay in use");
    }
    if (p->late != 0) {
        ucs_string_buffer_appendf(&strb, "; from %zu B on: the fit (time "
                                  "budget)", p->late);
    }
    printf("# %-4s %-10s %-24s %3u sizes %5.1f s  %s\n", setup->name, p->name,
           p->caps.lanes, p->measured, p->seconds,
           ucs_string_buffer_cstr(&strb));
    ucs_string_buffer_cleanup(&strb);
}

/* Count the measurements the fit will leave out as noisy, and keep the
 * spreads of the others, for the file's noise line */
static ucs_status_t cal_tally_spreads(cal_ctx_t *ctx, const psel_calib_line_t *line)
{
    const psel_calib_point_t *point;
    double *spreads;
    unsigned i, t;

    for (i = 0; i < line->num_points; ++i) {
        point = &line->points[i];
        for (t = 0; t < PSEL_PERF_LAST; ++t) {
            if (!(point->time[t] > 0) || isnan(point->spread[t])) {
                continue;
            }
            if (point->spread[t] > ctx->opts.mode->max_spread) {
                ++ctx->refused;
                continue;
            }
            if (ctx->num_spreads == ctx->max_spreads) {
                spreads = realloc(ctx->spreads, (2 * ctx->max_spreads + 64) *
                                                sizeof(*spreads));
                if (spreads == NULL) {
                    return UCS_ERR_NO_MEMORY;
                }
                ctx->spreads     = spreads;
                ctx->max_spreads = 2 * ctx->max_spreads + 64;
            }
            ctx->spreads[ctx->num_spreads++] = point->spread[t];
        }
    }
    return UCS_OK;
}

ucs_status_t cal_fit_setup(cal_ctx_t *ctx, const cal_setup_t *setup,
                           cal_proto_t *protos, psel_calib_line_t **lines,
                           unsigned count)
{
    psel_calib_order_entry_t entries[PSEL_SELECT_MAX_PROTOS];
    ucs_status_t status;
    unsigned i;

    status = cal_check_setup_level(ctx, setup, protos, lines, count);
    if (status != UCS_OK) {
        return status;
    }

    for (i = 0; i < count; ++i) {
        entries[i].line       = lines[i];
        entries[i].rank       = psel_calib_natural_rank(
                                        protos[i].caps.cfg_priority,
                                        cal_caps_max(&protos[i].caps));
        entries[i].min_length = protos[i].caps.min_length;
        entries[i].max_length = cal_caps_max(&protos[i].caps);
        entries[i].breaks     = protos[i].breaks;
        entries[i].num_breaks = protos[i].num_breaks;
    }
    cal_refuse_unsound(ctx, protos, lines, count);
    for (i = 0; i < count; ++i) {
        status = cal_tally_spreads(ctx, lines[i]);
        if (status != UCS_OK) {
            return status;
        }
    }

    status = psel_calib_fit_in_order(entries, count,
                                     ctx->opts.mode->max_spread,
                                     &ctx->report);
    if (status == UCS_OK) {
        status = cal_check_crossovers(ctx, setup, protos, entries, count);
    }
    if (status != UCS_OK) {
        return status;
    }
    for (i = 0; i < count; ++i) {
        cal_print_line(setup, &protos[i], lines[i]);
    }
    fflush(stdout);
    return UCS_OK;
}

ucs_status_t cal_setup(cal_ctx_t *ctx, const cal_setup_t *setup, double end)
{
    cal_proto_t protos[PSEL_SELECT_MAX_PROTOS];
    psel_calib_line_t *lines[PSEL_SELECT_MAX_PROTOS];
    unsigned count, i;
    ucs_status_t status;
    double start;

    status = cal_configure(ctx, setup, NULL, NULL);
    if (status != UCS_OK) {
        fprintf(stderr, "psel_calibrate: cannot connect over %s (settings: "
                "%s)\n", setup->name, setup->settings);
        return status;
    }
    count = cal_read_protos(ctx, protos);

    /* with a server reached over several network lanes: measure each one
     * alone, then select on what they delivered (the slow ones may drop
     * out, the shares follow), so the protocols are measured over the
     * lanes the calibration will give */
    if (ctx->opts.server != NULL) {
        status = cal_rails(ctx, setup, protos, count,
                           psel_oob_time() + CAL_RAILS_SHARE *
                                             (end - psel_oob_time()));
        if (status != UCS_OK) {
            return status;
        }
        if (ctx->rails_file[0] != '\0') {
            status = cal_configure(ctx, setup, NULL, NULL);
            if (status != UCS_OK) {
                return status;
            }
            count = cal_read_protos(ctx, protos);
        }
    }

    for (i = 0; i < count; ++i) {
        lines[i] = psel_calib_line_get(&ctx->calib, protos[i].name,
                                       protos[i].caps.lanes,
                                       UCS_MEMORY_TYPE_HOST);
        if (lines[i] == NULL) {
            return UCS_ERR_NO_MEMORY;
        }
        /* each protocol gets an even share of the time left */
        start = psel_oob_time();
        cal_force_protos(&protos[i], protos, count, protos[i].settings,
                         sizeof(protos[i].settings));
        status = cal_configure(ctx, setup, protos[i].settings, NULL);
        if (status != UCS_OK) {
            return status;
        }
        cal_read_runs(ctx, &protos[i]);
        status = cal_protocol(ctx, setup, &protos[i], lines[i], start +
                              (end - start) / (count - i), start);
        if (status != UCS_OK) {
            return status;
        }
    }
    return cal_fit_setup(ctx, setup, protos, lines, count);
}
