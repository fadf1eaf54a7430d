/*
 * psel_info's options of scale: --peers N (lane selection at N endpoints
 * per process), the memory footprint of the lanes at N peers, and its plot
 * against N with the lanes' changes marked. The models are in src/scale.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "psel_info.h"

#include <lane_select/text_json.h>

#include <scale/footprint.h>
#include <ucs/config/parser.h>
#include <ucs/sys/string.h>
#include <ucs/sys/math.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PSEL_INFO_PROXY_DEFAULT   1e-6  /* --proxy-overhead, docs/scale.md */
#define PSEL_INFO_SWEEP_MIN_MAX   65536 /* the plot goes at least this far */
#define PSEL_INFO_SWEEP_MAX_SETS  8     /* distinct lane sets drawn */


void psel_info_scale_defaults(psel_info_scale_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->proxy_overhead = PSEL_INFO_PROXY_DEFAULT;
}

/* A count from the command line: decimal digits only, @a min..@a max */
static int parse_count(const char *opt, const char *arg, unsigned long min,
                       unsigned long max, const char *meaning,
                       unsigned long *value)
{
    const char *p = arg + strspn(arg, " \t");
    unsigned long long v = 0;

    if (*p == '-') {
        fprintf(stderr, "psel_info: %s %s: negative; give %s, %lu..%lu\n",
                opt, arg, meaning, min, max);
        return -1;
    }
    if ((*p < '0') || (*p > '9')) {
        fprintf(stderr, "psel_info: %s '%s': not a number; give %s, "
                "%lu..%lu\n", opt, arg, meaning, min, max);
        return -1;
    }
    for (; (*p >= '0') && (*p <= '9'); ++p) {
        v = (v * 10) + (unsigned long long)(*p - '0');
        if (v > max) {
            fprintf(stderr, "psel_info: %s %s: too large; give %s, "
                    "%lu..%lu\n", opt, arg, meaning, min, max);
            return -1;
        }
    }
    if (*p != '\0') {
        fprintf(stderr, "psel_info: %s '%s': unexpected '%s' after the "
                "number; give %s, %lu..%lu\n", opt, arg, p, meaning, min, max);
        return -1;
    }
    if (v < min) {
        fprintf(stderr, "psel_info: %s %s: %s; give %s, %lu..%lu\n", opt, arg,
                (min == 1) ? "a process needs at least one peer" :
                "an alltoall needs at least two processes", meaning, min, max);
        return -1;
    }
    *value = (unsigned long)v;
    return 0;
}

int psel_info_scale_opt(int opt, const char *arg,
                        psel_info_scale_opts_t *opts)
{
    unsigned long value;
    size_t size;
    double time;

    switch (opt) {
    case PSEL_INFO_OPT_PEERS:
        if (parse_count("--peers", arg, 1, PSEL_NUM_EPS_MAX,
                        "the number of peers (endpoints) of each process",
                        &value) != 0) {
            return -1;
        }
        opts->peers = value;
        return 0;
    case PSEL_INFO_OPT_ALLTOALL:
        if (parse_count("--alltoall", arg, 2, PSEL_NUM_EPS_MAX + 1ul,
                        "the number of processes", &value) != 0) {
            return -1;
        }
        opts->alltoall = (unsigned)value;
        return 0;
    case PSEL_INFO_OPT_SIZE:
        if ((arg[strspn(arg, " \t")] == '-') ||
            (ucs_str_to_memunits(arg, &size) != UCS_OK) ||
            (size == UCS_MEMUNITS_INF) || (size == UCS_MEMUNITS_AUTO) ||
            (size > (1ul << 40))) {
            fprintf(stderr, "psel_info: --size '%s': give the bytes each "
                    "process sends to each peer, 0..1T, such as 8, 64K or "
                    "1M\n", arg);
            return -1;
        }
        opts->size       = size;
        opts->size_given = 1;
        return 0;
    case PSEL_INFO_OPT_PROXY:
        if ((arg[strspn(arg, " \t")] == '-') ||
            !ucs_config_sscanf_time(arg, &time, NULL) || !isfinite(time) ||
            (time > 1)) {
            fprintf(stderr, "psel_info: --proxy-overhead '%s': give a time "
                    "per request, 0..1s, such as 1us or 500ns\n", arg);
            return -1;
        }
        opts->proxy_overhead = time;
        return 0;
    case PSEL_INFO_OPT_RQ:
        opts->rq_spec = arg;
        return 0;
    case PSEL_INFO_OPT_RQ_SUGGEST:
        opts->rq_suggest = 1;
        return 0;
    default:
        return -1;
    }
}

int psel_info_scale_check(const psel_info_scale_opts_t *opts, int endpoint,
                          int json)
{
    if ((opts->size_given || (opts->proxy_overhead !=
                              PSEL_INFO_PROXY_DEFAULT)) &&
        (opts->alltoall == 0)) {
        fprintf(stderr, "psel_info: --size and --proxy-overhead go with "
                "--alltoall P\n");
        return -1;
    }
    if (json && (opts->alltoall || opts->rq_spec || opts->rq_suggest)) {
        fprintf(stderr, "psel_info: -j covers -e only; run --alltoall, "
                "--ompi-receive-queues and --suggest-receive-queues "
                "without -j\n");
        return -1;
    }
    (void)endpoint;
    return 0;
}

void psel_info_scale_usage(FILE *stream)
{
    fprintf(stream,
            "  --peers N     select for N peers (endpoints) per process, as "
            "UCX_NUM_EPS:\n"
            "                latency growth at N, transports whose max eps < N "
            "left out;\n"
            "                -e adds the memory footprint at N; --plot draws it "
            "against N\n"
            "  --ompi-receive-queues SPEC\n"
            "                Open MPI btl_openib_receive_queues: defaults, "
            "checks, memory\n"
            "                per process with --peers N peers\n"
            "  --suggest-receive-queues\n"
            "                a receive queue spec from this selection\n"
            "  --alltoall P  LogGP estimate of an alltoall among P processes, "
            "direct issue\n"
            "                and a CPU proxy; --size n (bytes per peer), "
            "--proxy-overhead T\n"
            "                (default 1us per request); --plot draws it\n");
}

int psel_info_scale_needs_ep(const psel_info_scale_opts_t *opts)
{
    return opts->rq_suggest || (opts->alltoall > 0);
}

size_t psel_info_scale_num_eps(const psel_info_scale_opts_t *opts,
                               const psel_config_t *config)
{
    if (opts->peers > 0) {
        return opts->peers;
    }
    return psel_config_num_eps(config, (opts->alltoall > 1) ?
                                       (opts->alltoall - 1) : 1);
}

const char *psel_info_bytes_str(double bytes, char *buf, size_t max)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    unsigned u = 0;

    while ((bytes >= 1024) && (u < 4)) {
        bytes /= 1024;
        ++u;
    }
    snprintf(buf, max, (u == 0) ? "%.0f %s" : "%.2f %s", bytes, units[u]);
    return buf;
}

static void footprint_print_terms(FILE *stream, const psel_footprint_t *fp)
{
    const psel_footprint_term_t *t;
    char total[32], size[32];
    unsigned i;

    fprintf(stream, "# %-22s %-40s %-5s %17s %12s\n", "lane", "term", "per",
            "count x size", "total");
    for (i = 0; i < fp->num_terms; ++i) {
        t = &fp->terms[i];
        snprintf(size, sizeof(size), "%.0f x %.0f B", t->count, t->item_size);
        fprintf(stream, "# %-22s %-40s %-5s %17s %12s\n", t->lane, t->what,
                t->per_peer ? "peer" : "iface", size,
                psel_info_bytes_str(t->bytes, total, sizeof(total)));
        fprintf(stream, "# %-22s   %s [%s]\n", "", t->setting, t->source);
    }
}

static void footprint_print_sum(FILE *stream, const psel_footprint_t *fp)
{
    char total[32], shared[32], per_peer[32], kernel[32];

    fprintf(stream, "# total %s = %s once + %s x %zu peer%s",
            psel_info_bytes_str(fp->total, total, sizeof(total)),
            psel_info_bytes_str(fp->shared, shared, sizeof(shared)),
            psel_info_bytes_str(fp->per_peer, per_peer, sizeof(per_peer)),
            fp->num_peers, (fp->num_peers == 1) ? "" : "s");
    if (fp->kernel > 0) {
        fprintf(stream, "; and %s of kernel socket buffers",
                psel_info_bytes_str(fp->kernel, kernel, sizeof(kernel)));
    }
    fputs("\n", stream);
}

/* ------------------------------------------------------------------------
 * Lanes against the number of peers
 */

/* The lanes of the endpoint at @a num_eps, as -e would select them */
static int sweep_lanes(const psel_info_ep_ctx_t *ctx, size_t num_eps,
                       psel_ep_lanes_t *lanes)
{
    psel_ep_params_t params = {
        .features = PSEL_FEATURE_TAG,
        .local    = ctx->local,
        .remote   = ctx->peer,
        .locality = ctx->locality,
        .config   = ctx->config,
        .calib    = ctx->calib,
        .num_eps  = num_eps
    };
    psel_ep_config_t *ep = malloc(sizeof(*ep));
    ucs_status_t status;

    if (ep == NULL) {
        return -1;
    }
    status = psel_ep_config_init(ep, &params);
    if (status == UCS_OK) {
        psel_ep_lanes_copy(lanes, &ep->lanes); /* ep is freed below */
        psel_ep_config_cleanup(ep);
    }
    free(ep);
    return (status == UCS_OK) ? 0 : -1;
}

/* The transports of a lane set, "dc_mlx5/mlx5_0:1+self/memory", in lane
 * order: two N with the same string have the same footprint model */
static void lanes_signature(const psel_ep_lanes_t *lanes, char *buf,
                            size_t max)
{
    size_t len = 0;
    unsigned i;

    buf[0] = '\0';
    for (i = 0; (i < lanes->num_lanes) && (len < max); ++i) {
        len += (size_t)snprintf(buf + len, max - len, "%s%s", i ? "+" : "",
                                lanes->lanes[i].name);
    }
}

typedef struct {
    size_t          at;                  /* first N of the new lanes */
    char            from[256], to[256];  /* signatures */
    unsigned        set;                 /* index of the new lanes' set */
} psel_info_switch_t;

typedef struct {
    unsigned           num_switches;
    psel_info_switch_t switches[PSEL_INFO_SWEEP_MAX_SETS];
    unsigned           num_sets;
    psel_ep_lanes_t    sets[PSEL_INFO_SWEEP_MAX_SETS];  /* distinct lanes */
    size_t             first[PSEL_INFO_SWEEP_MAX_SETS]; /* where each starts */
} psel_info_sweep_t;

/* @return The index of the set of @a lanes, added if new (the last one if
 * the array is full) */
static unsigned sweep_add_set(psel_info_sweep_t *sweep,
                              const psel_ep_lanes_t *lanes, size_t at)
{
    char a[256], b[256];
    unsigned i;

    lanes_signature(lanes, a, sizeof(a));
    for (i = 0; i < sweep->num_sets; ++i) {
        lanes_signature(&sweep->sets[i], b, sizeof(b));
        if (!strcmp(a, b)) {
            return i;
        }
    }
    if (sweep->num_sets == PSEL_INFO_SWEEP_MAX_SETS) {
        return sweep->num_sets - 1;
    }
    psel_ep_lanes_copy(&sweep->sets[sweep->num_sets], lanes);
    sweep->first[sweep->num_sets] = at;
    return sweep->num_sets++;
}

/* The set in use at @a n peers */
static unsigned sweep_set_at(const psel_info_sweep_t *sweep, size_t n)
{
    unsigned i, set = 0;

    for (i = 0; i < sweep->num_switches; ++i) {
        if (n >= sweep->switches[i].at) {
            set = sweep->switches[i].set;
        }
    }
    return set;
}

/* Find every N in [1, nmax] where the lanes change: selection at powers of
 * two and at each max eps boundary, then bisection between two points whose
 * lanes differ */
static int sweep_run(const psel_info_ep_ctx_t *ctx, size_t nmax,
                     psel_info_sweep_t *sweep)
{
    size_t grid[96], lo, hi, mid, n;
    psel_ep_lanes_t *a, *b, *m;
    char sa[256], sb[256], sm[256];
    unsigned count = 0, i, j;
    int ret = -1;

    a = malloc(3 * sizeof(*a));
    if (a == NULL) {
        return -1;
    }
    b = a + 1;
    m = a + 2;
    memset(sweep, 0, sizeof(*sweep));
    for (n = 1; (n <= nmax) && (count < 64); n *= 2) {
        grid[count++] = n;
    }
    for (i = 0; (i < ctx->local->count) && (count < 94); ++i) {
        n = ctx->local->resources[i].max_num_eps;
        if ((n < nmax) && (n > 0)) {
            grid[count++] = n;
            grid[count++] = n + 1;
        }
    }
    grid[count++] = nmax;
    /* sort and drop duplicates */
    for (i = 1; i < count; ++i) {
        for (j = i; (j > 0) && (grid[j - 1] > grid[j]); --j) {
            n = grid[j]; grid[j] = grid[j - 1]; grid[j - 1] = n;
        }
    }
    for (i = 1, j = 1; i < count; ++i) {
        if (grid[i] != grid[j - 1]) {
            grid[j++] = grid[i];
        }
    }
    count = j;

    if (sweep_lanes(ctx, grid[0], a) != 0) {
        goto out;
    }
    sweep_add_set(sweep, a, grid[0]);
    for (i = 1; i < count; ++i) {
        if (sweep_lanes(ctx, grid[i], b) != 0) {
            goto out;
        }
        lanes_signature(a, sa, sizeof(sa));
        lanes_signature(b, sb, sizeof(sb));
        if (strcmp(sa, sb) != 0) {
            lo = grid[i - 1];
            hi = grid[i];
            while (hi - lo > 1) {   /* a at lo, the new lanes at hi */
                mid = lo + ((hi - lo) / 2);
                if (sweep_lanes(ctx, mid, m) != 0) {
                    goto out;
                }
                lanes_signature(m, sm, sizeof(sm));
                if (!strcmp(sm, sa)) {
                    lo = mid;
                } else {
                    hi = mid;
                    psel_ep_lanes_copy(b, m);
                    memcpy(sb, sm, sizeof(sb));
                }
            }
            if (sweep->num_switches < PSEL_INFO_SWEEP_MAX_SETS) {
                psel_info_switch_t *sw = &sweep->switches[sweep->num_switches++];
                sw->at  = hi;
                sw->set = sweep_add_set(sweep, b, hi);
                memcpy(sw->from, sa, sizeof(sw->from));
                memcpy(sw->to, sb, sizeof(sw->to));
            }
            /* carry on from what grid[i] selects */
            if (sweep_lanes(ctx, grid[i], b) != 0) {
                goto out;
            }
        }
        psel_ep_lanes_copy(a, b);
    }
    ret = 0;
out:
    free(a);
    return ret;
}

static size_t sweep_max(size_t peers)
{
    return ucs_min(ucs_max(4 * peers, (size_t)PSEL_INFO_SWEEP_MIN_MAX),
                   (size_t)PSEL_NUM_EPS_MAX);
}

void psel_info_footprint_print(FILE *stream, const psel_info_ep_ctx_t *ctx,
                               size_t peers)
{
    psel_info_sweep_t *sweep = malloc(sizeof(*sweep));
    psel_footprint_t fp;
    unsigned i;

    if (psel_footprint_compute(ctx->local, &ctx->ep->lanes, peers, &fp) !=
        UCS_OK) {
        free(sweep);
        return;
    }
    fprintf(stream, "# memory per process with %zu peer%s over these "
            "lanes, at UCX 1.13.1's defaults (docs/scale.md):\n",
            peers, (peers == 1) ? "" : "s");
    footprint_print_terms(stream, &fp);
    for (i = 0; i < fp.num_unmodelled; ++i) {
        fprintf(stream, "# %-22s not counted: protosel has no memory model "
                "of this transport\n", fp.unmodelled[i]);
    }
    footprint_print_sum(stream, &fp);

    if ((sweep != NULL) && (sweep_run(ctx, sweep_max(peers), sweep) == 0)) {
        if (sweep->num_switches == 0) {
            fprintf(stream, "# the lanes stay the same from 1 to %zu peers\n",
                    sweep_max(peers));
        }
        for (i = 0; i < sweep->num_switches; ++i) {
            fprintf(stream, "# lanes change at %zu peers: %s -> %s\n",
                    sweep->switches[i].at, sweep->switches[i].from,
                    sweep->switches[i].to);
        }
    }
    fprintf(stream, "#\n");
    free(sweep);
}

void psel_info_footprint_json(FILE *stream, const psel_info_ep_ctx_t *ctx,
                              size_t peers)
{
    psel_info_sweep_t *sweep = malloc(sizeof(*sweep));
    const psel_footprint_term_t *t;
    psel_footprint_t fp;
    unsigned i;

    if (psel_footprint_compute(ctx->local, &ctx->ep->lanes, peers, &fp) !=
        UCS_OK) {
        fputs("null", stream);
        free(sweep);
        return;
    }
    fprintf(stream, "{\"peers\": %zu, \"terms\": [", peers);
    for (i = 0; i < fp.num_terms; ++i) {
        t = &fp.terms[i];
        fputs((i > 0) ? ",\n   {\"lane\": " : "\n   {\"lane\": ", stream);
        psel_json_string(stream, t->lane);
        fputs(", \"term\": ", stream);
        psel_json_string(stream, t->what);
        fprintf(stream, ", \"per\": \"%s\", \"count\": ",
                t->per_peer ? "peer" : "iface");
        psel_json_number(stream, t->count);
        fputs(", \"item_size\": ", stream);
        psel_json_number(stream, t->item_size);
        fputs(", \"bytes\": ", stream);
        psel_json_number(stream, t->bytes);
        fputs(", \"setting\": ", stream);
        psel_json_string(stream, t->setting);
        fputs(", \"source\": ", stream);
        psel_json_string(stream, t->source);
        fputs("}", stream);
    }
    fputs("],\n  \"not_counted\": [", stream);
    for (i = 0; i < fp.num_unmodelled; ++i) {
        fputs((i > 0) ? ", " : "", stream);
        psel_json_string(stream, fp.unmodelled[i]);
    }
    fputs("], \"total\": ", stream);
    psel_json_number(stream, fp.total);
    fputs(", \"once\": ", stream);
    psel_json_number(stream, fp.shared);
    fputs(", \"per_peer\": ", stream);
    psel_json_number(stream, fp.per_peer);
    fputs(", \"kernel\": ", stream);
    psel_json_number(stream, fp.kernel);
    /* where the lanes change, up to the same N as the text */
    fprintf(stream, ",\n  \"lanes_checked_up_to\": %zu, \"lane_changes\": ",
            sweep_max(peers));
    if ((sweep == NULL) || (sweep_run(ctx, sweep_max(peers), sweep) != 0)) {
        fputs("null}", stream);
        free(sweep);
        return;
    }
    fputs("[", stream);
    for (i = 0; i < sweep->num_switches; ++i) {
        fprintf(stream, "%s{\"at\": %zu, \"from\": ", (i > 0) ? ", " : "",
                sweep->switches[i].at);
        psel_json_string(stream, sweep->switches[i].from);
        fputs(", \"to\": ", stream);
        psel_json_string(stream, sweep->switches[i].to);
        fputs("}", stream);
    }
    fputs("]}", stream);
    free(sweep);
}

int psel_info_footprint_plot(const char *path, const char *keep_dir,
                             const psel_info_ep_ctx_t *ctx, size_t peers)
{
    static const char *colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                   "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};
    size_t nmax              = sweep_max(peers);
    psel_info_sweep_t *sweep = malloc(sizeof(*sweep));
    char data[PATH_MAX], name[300];
    psel_info_gnuplot_t plot;
    psel_footprint_t fp;
    const char *sep = "plot ";
    size_t prev, at, limit, x;
    unsigned i, s;
    double n;
    FILE *f;
    int ok = 0;

    if ((sweep == NULL) || (sweep_run(ctx, nmax, sweep) != 0)) {
        fprintf(stderr, "psel_info: --plot: could not select lanes across "
                "the numbers of peers (see above)\n");
        free(sweep);
        return 1;
    }
    if (psel_info_gnuplot_open(&plot, path, keep_dir) != 0) {
        free(sweep);
        return 1;
    }

    /* each lane set's footprint over the whole range, and the selected
     * one: the set in use at each N */
    for (s = 0; s < sweep->num_sets; ++s) {
        snprintf(data, sizeof(data), "%s/set%u.dat", plot.dir, s);
        if ((f = psel_info_gnuplot_data_open(data)) == NULL) {
            goto out;
        }
        /* up to the smallest max eps of its transports: no further */
        limit = nmax;
        for (i = 0; i < sweep->sets[s].num_lanes; ++i) {
            limit = ucs_min(limit, ctx->local->resources[
                                sweep->sets[s].info[i].local].max_num_eps);
        }
        for (n = 1;; n *= 1.25) {   /* the last point at the limit */
            x = ucs_min((size_t)n, limit);
            psel_footprint_compute(ctx->local, &sweep->sets[s], x, &fp);
            fprintf(f, "%zu %.6g\n", x, fp.total / (1 << 20));
            if (x == limit) {
                break;
            }
        }
        if (psel_info_gnuplot_data_close(f, data) != 0) {
            goto out;
        }
    }
    snprintf(data, sizeof(data), "%s/selected.dat", plot.dir);
    if ((f = psel_info_gnuplot_data_open(data)) == NULL) {
        goto out;
    }
    for (n = 1, prev = 0; n <= (double)nmax;
         prev = (size_t)n, n = ucs_max(n * 1.05, n + 1)) {
        /* both sides of every switch, so the step is drawn vertical */
        for (i = 0; i < sweep->num_switches; ++i) {
            at = sweep->switches[i].at;
            if ((prev < at) && (at <= (size_t)n)) {
                psel_footprint_compute(ctx->local,
                                       &sweep->sets[sweep_set_at(sweep,
                                                                 at - 1)],
                                       at - 1, &fp);
                fprintf(f, "%zu %.6g\n", at - 1, fp.total / (1 << 20));
                psel_footprint_compute(ctx->local,
                                       &sweep->sets[sweep->switches[i].set],
                                       at, &fp);
                fprintf(f, "%zu %.6g\n", at, fp.total / (1 << 20));
            }
        }
        psel_footprint_compute(ctx->local,
                               &sweep->sets[sweep_set_at(sweep, (size_t)n)],
                               (size_t)n, &fp);
        fprintf(f, "%zu %.6g\n", (size_t)n, fp.total / (1 << 20));
    }
    if (psel_info_gnuplot_data_close(f, data) != 0) {
        goto out;
    }

    fprintf(plot.script, "# psel_info --peers --plot: memory per process "
            "against the number of peers\n");
    psel_info_gnuplot_terminal(plot.script, path, plot.png, 650);
    fprintf(plot.script, "set logscale x\nset yrange [0:*]\nset grid\n"
            "set xlabel 'peers per process (endpoints)'\n"
            "set ylabel 'memory per process [MiB], UCX 1.13.1 defaults "
            "(dashed: each lane set, up to its max eps)'\n"
            "set key outside right top\nset xrange [1:%zu]\nset title ",
            nmax);
    snprintf(name, sizeof(name), "memory of the selected lanes (%.120s to "
             "%.120s)", ctx->local->origin, ctx->peer->origin);
    psel_info_gnuplot_string(plot.script, name);
    fputs("\n", plot.script);
    for (i = 0; i < sweep->num_switches; ++i) {
        fprintf(plot.script, "set arrow from %zu, graph 0 to %zu, graph 1 "
                "nohead dt 3 lc rgb '#404040'\nset label ",
                sweep->switches[i].at, sweep->switches[i].at);
        snprintf(name, sizeof(name), "%zu: -> %s", sweep->switches[i].at,
                 sweep->switches[i].to);
        psel_info_gnuplot_string(plot.script, name);
        fprintf(plot.script, " at %zu, graph 0.02 rotate by 90 left offset "
                "-0.8,0 font ',8' tc rgb '#404040'\n", sweep->switches[i].at);
    }
    fprintf(plot.script, "set arrow from %zu, graph 0 to %zu, graph 1 nohead "
            "dt 2 lc rgb '#000000'\nset label '%zu peers' at %zu, graph 0.98 "
            "right offset -0.5,0 font ',9'\n", peers, peers, peers, peers);
    snprintf(data, sizeof(data), "%s/selected.dat", plot.dir);
    fputs(sep, plot.script);
    psel_info_gnuplot_string(plot.script, data);
    fputs(" with lines lw 8 lc rgb '#c8c8c8' title 'selected'", plot.script);
    sep = ", \\\n     ";
    for (s = 0; s < sweep->num_sets; ++s) {
        snprintf(data, sizeof(data), "%s/set%u.dat", plot.dir, s);
        lanes_signature(&sweep->sets[s], name, sizeof(name));
        fputs(sep, plot.script);
        psel_info_gnuplot_string(plot.script, data);
        fprintf(plot.script, " with lines dt 2 lw 1.5 lc rgb '%s' title ",
                colors[s % ucs_static_array_size(colors)]);
        psel_info_gnuplot_string(plot.script, name);
    }
    fputs("\n", plot.script);
    ok = 1;

out:
    free(sweep);
    return psel_info_gnuplot_finish(&plot, ok);
}
