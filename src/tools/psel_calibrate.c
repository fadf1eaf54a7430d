/*
 * psel_calibrate: measure the cost lines of every protocol over the lanes
 * selection uses, through protosel's own data path, and save them for
 * UCX_PSEL_CALIBRATION.
 *
 * Without a host it forks a peer and measures shared memory and tcp over
 * loopback on this machine; with a host it measures tcp to a psel_perftest
 * server running there. For each transport setup it reads the endpoint's
 * selection table to learn the protocols, their size limits and their
 * lanes; then it forces each protocol in turn (UCX_PSEL_PROTOS, on both
 * sides) and times tag_lat (half round trip: the "single" line) and tag_bw
 * (time per message when streaming: "multi") at log-spaced sizes and on both
 * sides of each size limit, repeats each point, keeps the median and fits
 * c + m·size per range (calib.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest_session.h"

#include <ucp_proto_sel/calib.h>
#include <ucp_proto_sel/select.h>

#include <ucs/sys/math.h>
#include <ucs/datastruct/string_buffer.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define CAL_MAX_SIZES        128
#define CAL_MAX_REPEATS      9
#define CAL_DEFAULT_MAX_SIZE (16ul << 20)
#define CAL_SETTINGS_MAX     1024
#define CAL_MAX_SPREAD       1.5   /* median / fastest repeat of a point */
#define CAL_MAX_RETRIES      3

/** How thoroughly to measure. */
typedef struct {
    const char *name;
    unsigned    steps_per_octave; /* log-spaced sizes */
    unsigned    repeats;          /* timed phases per point; median */
    double      phase_time;       /* aimed seconds of one timed phase */
} cal_mode_t;

static const cal_mode_t cal_modes[] = {
    {"full",  2, 5, 4e-3},
    {"quick", 1, 3, 1e-3},
};

/** A transport setup: a name and the settings both sides run with. */
typedef struct {
    const char *name;
    const char *settings;
} cal_setup_t;

static const cal_setup_t cal_local_setups[] = {
    {"shm", "UCX_PSEL_TLS=posix,sysv,cma"},
    {"tcp", "UCX_PSEL_TLS=tcp\nUCX_PSEL_NET_DEVICES=lo"},
};

static const cal_setup_t cal_remote_setup = {"tcp", "UCX_PSEL_TLS=tcp"};

typedef struct {
    const cal_mode_t *mode;
    const char       *output;
    const char       *server;      /* NULL: fork a local peer */
    uint16_t          port;
    size_t            max_size;
    const char       *only;        /* "shm" or "tcp", or NULL: both */
    int               verbose;
} cal_opts_t;

/** What the automatic table says of one protocol. */
typedef struct {
    char              name[PSEL_CALIB_PROTO_MAX];
    psel_proto_caps_t caps;
} cal_proto_t;


static void cal_usage(FILE *stream)
{
    fprintf(stream,
        "Usage: psel_calibrate [options] [server-hostname]\n"
        "  Measures protosel's protocols on this machine (shared memory and\n"
        "  tcp over loopback, with a peer process it starts), or over tcp to\n"
        "  a host running `psel_perftest` as a server, and writes the cost\n"
        "  lines that UCX_PSEL_CALIBRATION=FILE|auto makes selection use.\n"
        "\n"
        "  -q, --quick        quick mode (fewer sizes and repeats; < 20 s)\n"
        "  -o, --output FILE  where to write (default: UCX_PSEL_CALIBRATION if\n"
        "                     it names a file, else the 'auto' location)\n"
        "  -t, --transport T  only 'shm' or only 'tcp'\n"
        "  -m, --max-size N   largest message size (default 16M)\n"
        "  -p, --port PORT    the server's port (default %u)\n"
        "  -v, --verbose      print every measured point\n"
        "  -h, --help         this help\n", PT_DEFAULT_PORT);
}

static int cal_parse_size(const char *arg, size_t *size_p)
{
    char *end;
    unsigned long long v = strtoull(arg, &end, 10);
    unsigned shift       = 0;

    switch (*end) {
    case 'k': case 'K': shift = 10; ++end; break;
    case 'm': case 'M': shift = 20; ++end; break;
    case 'g': case 'G': shift = 30; ++end; break;
    }
    if ((end == arg) || (*end != '\0') || (v == 0) ||
        (v > (PT_MAX_SIZE >> shift))) {
        fprintf(stderr, "psel_calibrate: bad size '%s' for -m (a number of "
                "bytes with an optional K/M/G suffix, 1..1G)\n", arg);
        return -1;
    }
    *size_p = (size_t)v << shift;
    return 0;
}

static int cal_parse_args(int argc, char **argv, cal_opts_t *opts)
{
    static const struct option long_opts[] = {
        {"quick", no_argument, NULL, 'q'},
        {"output", required_argument, NULL, 'o'},
        {"transport", required_argument, NULL, 't'},
        {"max-size", required_argument, NULL, 'm'},
        {"port", required_argument, NULL, 'p'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}
    };
    unsigned long port;
    char *end;
    int c;

    memset(opts, 0, sizeof(*opts));
    opts->mode     = &cal_modes[0];
    opts->port     = PT_DEFAULT_PORT;
    opts->max_size = CAL_DEFAULT_MAX_SIZE;
    while ((c = getopt_long(argc, argv, "qo:t:m:p:vh", long_opts, NULL)) != -1) {
        switch (c) {
        case 'q': opts->mode = &cal_modes[1]; break;
        case 'o': opts->output = optarg; break;
        case 'v': opts->verbose = 1; break;
        case 't':
            if (strcmp(optarg, "shm") && strcmp(optarg, "tcp")) {
                fprintf(stderr, "psel_calibrate: bad transport '%s' for -t "
                        "(accepted: shm, tcp)\n", optarg);
                return -1;
            }
            opts->only = optarg;
            break;
        case 'm':
            if (cal_parse_size(optarg, &opts->max_size) != 0) {
                return -1;
            }
            break;
        case 'p':
            port = strtoul(optarg, &end, 10);
            if ((*optarg == '\0') || (*end != '\0') || (port == 0) ||
                (port > 65535)) {
                fprintf(stderr, "psel_calibrate: bad port '%s' for -p "
                        "(1..65535)\n", optarg);
                return -1;
            }
            opts->port = port;
            break;
        case 'h': cal_usage(stdout); exit(0);
        default:  cal_usage(stderr); return -1;
        }
    }
    if (optind + 1 < argc) {
        fprintf(stderr, "psel_calibrate: unexpected argument '%s'\n",
                argv[optind + 1]);
        return -1;
    }
    if (optind < argc) {
        opts->server = argv[optind];
        if ((opts->only != NULL) && strcmp(opts->only, "tcp")) {
            fprintf(stderr, "psel_calibrate: with a server host only tcp is "
                    "measured\n");
            return -1;
        }
    }
    return 0;
}

/* Where to write: -o, else UCX_PSEL_CALIBRATION if it names a file, else
 * the 'auto' location. */
static int cal_output_path(const cal_opts_t *opts, char *path, size_t max)
{
    const char *env = getenv("UCX_PSEL_CALIBRATION");

    if (opts->output != NULL) {
        snprintf(path, max, "%s", opts->output);
    } else if ((env != NULL) && (env[0] != '\0') && strcasecmp(env, "auto") &&
               strcasecmp(env, "none")) {
        snprintf(path, max, "%s", env);
    } else if (psel_calib_default_path(path, max) != UCS_OK) {
        fprintf(stderr, "psel_calibrate: neither XDG_CACHE_HOME nor HOME is "
                "set; say where to write with -o FILE\n");
        return -1;
    }
    return 0;
}


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
 * size or @a max_size, plus both sides of every range limit; sorted, unique.
 */
static unsigned cal_plan_sizes(const psel_proto_caps_t *caps,
                               const cal_mode_t *mode, size_t max_size,
                               size_t *sizes)
{
    size_t lo = ucs_max(caps->min_length, 1);
    size_t hi = ucs_min(cal_caps_max(caps), max_size);
    size_t breaks[PSEL_PROTO_MAX_RANGES];
    unsigned count = 0, i, j, step, num_breaks;
    double x;

    for (i = 0; (1ul << i) <= hi; ++i) {
        for (step = 0; step < mode->steps_per_octave; ++step) {
            x = (double)(1ul << i) *
                pow(2.0, (double)step / mode->steps_per_octave);
            cal_add_size(sizes, &count, (size_t)(x + 0.5), lo, hi);
        }
    }
    num_breaks = cal_caps_breaks(caps, breaks);
    for (i = 0; i < num_breaks; ++i) {
        cal_add_size(sizes, &count, breaks[i], lo, hi);
        cal_add_size(sizes, &count, breaks[i] + 1, lo, hi);
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

/* Does the live endpoint's table run @a name at @a size? */
static int cal_runs(psel_ep_h ep, const char *name, size_t size)
{
    const psel_select_table_t *table = psel_ep_tag_table(ep);

    return (table != NULL) &&
           !strcmp(psel_select_table_find(table, size)->proto->name, name);
}

/*
 * UCX_PSEL_PROTOS that forces @a p: itself, plus one protocol that covers
 * the sizes it does not (an endpoint must cover every size).
 */
static void cal_force_settings(const cal_setup_t *setup, const cal_proto_t *p,
                               const cal_proto_t *protos, unsigned count,
                               char *settings, size_t max)
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
    snprintf(settings, max, "%s\nUCX_PSEL_PROTOS=%.*s%s%.*s",
             setup->settings, PSEL_CALIB_PROTO_MAX, p->name,
             (cover != NULL) ? "," : "", PSEL_CALIB_PROTO_MAX,
             (cover != NULL) ? cover : "");
}


/* ---------------------------------------------------------------------- */
/* Measuring                                                              */
/* ---------------------------------------------------------------------- */

static int cal_double_cmp(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

/*
 * Median seconds per message of @a test at @a size. A short probe (the
 * fastest of 3) sizes the phases; a point whose repeats spread by more than
 * CAL_MAX_SPREAD (a phase caught a stall: a descheduled peer, a connection
 * still being set up) is measured again, up to CAL_MAX_RETRIES times.
 */
static ucs_status_t cal_measure(pt_run_t *run, const cal_mode_t *mode,
                                pt_test_id_t test, size_t size, double *time)
{
    double times[CAL_MAX_REPEATS], probe;
    uint64_t min_iters = (test == PT_TEST_TAG_BW) ? 16 : 8;
    unsigned retry;
    uint64_t iters;
    ucs_status_t status;

    status = pt_session_measure(run, test, size, min_iters, 3, times);
    if (status != UCS_OK) {
        return status;
    }
    qsort(times, 3, sizeof(double), cal_double_cmp);
    probe = times[0];
    iters = (uint64_t)(mode->phase_time /
                       (probe * (pt_tests[test].pingpong ? 2 : 1)));
    iters = ucs_min(ucs_max(iters, min_iters), 100000);

    for (retry = 0; retry <= CAL_MAX_RETRIES; ++retry) {
        status = pt_session_measure(run, test, size, iters, mode->repeats,
                                    times);
        if (status != UCS_OK) {
            return status;
        }
        qsort(times, mode->repeats, sizeof(double), cal_double_cmp);
        *time = times[mode->repeats / 2];
        if (*time <= CAL_MAX_SPREAD * times[0]) {
            break;
        }
    }
    return UCS_OK;
}

static void cal_func_str(const char *label, ucs_linear_func_t func,
                         ucs_string_buffer_t *strb)
{
    ucs_string_buffer_appendf(strb, "%s ", label);
    psel_perf_func_str(func, strb);
}

/* Measure one protocol over its lanes and fit its line. */
static ucs_status_t cal_protocol(pt_run_t *run, const cal_opts_t *opts,
                                 const cal_setup_t *setup,
                                 const cal_proto_t *p, const cal_proto_t *all,
                                 unsigned count, psel_calib_t *calib)
{
    char settings[CAL_SETTINGS_MAX];
    size_t sizes[CAL_MAX_SIZES], breaks[PSEL_PROTO_MAX_RANGES];
    unsigned num_sizes, num_breaks, measured = 0, i;
    double start = psel_oob_time(), lat, bw;
    psel_calib_line_t *line;
    ucs_string_buffer_t strb;
    ucs_status_t status;

    cal_force_settings(setup, p, all, count, settings, sizeof(settings));
    status = pt_session_configure(run, settings);
    if (status != UCS_OK) {
        return status;
    }

    line = psel_calib_line_get(calib, p->name, p->caps.lanes,
                               UCS_MEMORY_TYPE_HOST);
    if (line == NULL) {
        fprintf(stderr, "psel_calibrate: cannot record %s over %s\n", p->name,
                p->caps.lanes);
        return UCS_ERR_NO_MEMORY;
    }

    num_sizes = cal_plan_sizes(&p->caps, opts->mode, opts->max_size, sizes);
    for (i = 0; i < num_sizes; ++i) {
        if (!cal_runs(run->ep, p->name, sizes[i])) {
            continue; /* the fallback protocol runs there */
        }
        if (isatty(STDERR_FILENO)) {
            fprintf(stderr, "\r# %-4s %-10s size %u/%u (%zu B) ...\033[K",
                    setup->name, p->name, i + 1, num_sizes, sizes[i]);
        }
        status = cal_measure(run, opts->mode, PT_TEST_TAG_LAT, sizes[i], &lat);
        if (status == UCS_OK) {
            status = cal_measure(run, opts->mode, PT_TEST_TAG_BW, sizes[i],
                                 &bw);
        }
        if (status == UCS_OK) {
            status = psel_calib_line_add_point(line, sizes[i], lat, bw);
        }
        if (status != UCS_OK) {
            fprintf(stderr, "psel_calibrate: %s over %s at %zu bytes: %s\n",
                    p->name, p->caps.lanes, sizes[i],
                    ucs_status_string(status));
            return status;
        }
        ++measured;
        if (opts->verbose) {
            printf("#   %-5s %-10s %10zu B  latency %10.3f us  per message "
                   "streamed %10.3f us\n", setup->name, p->name, sizes[i],
                   lat * 1e6, bw * 1e6);
        }
    }

    num_breaks = cal_caps_breaks(&p->caps, breaks);
    status = (measured > 0) ? psel_calib_line_fit_knee(line, breaks, num_breaks) :
                              UCS_ERR_NO_ELEM;
    if (status != UCS_OK) {
        fprintf(stderr, "psel_calibrate: %s over %s: no line fitted (%u "
                "sizes measured)\n", p->name, p->caps.lanes, measured);
        return UCS_OK; /* the attributes stay in use for it */
    }

    if (isatty(STDERR_FILENO)) {
        fprintf(stderr, "\r\033[K");
    }
    ucs_string_buffer_init(&strb);
    cal_func_str("latency", line->ranges[0].perf[PSEL_PERF_SINGLE], &strb);
    cal_func_str(", streamed", line->ranges[0].perf[PSEL_PERF_MULTI], &strb);
    printf("# %-4s %-10s %-24s %3u sizes %5.1f s  %s%s\n", setup->name, p->name,
           p->caps.lanes, measured, psel_oob_time() - start,
           ucs_string_buffer_cstr(&strb),
           (line->num_ranges > 1) ? " (first range)" : "");
    fflush(stdout);
    ucs_string_buffer_cleanup(&strb);
    return UCS_OK;
}

static ucs_status_t cal_setup(pt_run_t *run, const cal_opts_t *opts,
                              const cal_setup_t *setup, psel_calib_t *calib)
{
    const psel_select_table_t *table;
    cal_proto_t protos[PSEL_SELECT_MAX_PROTOS];
    unsigned count, i;
    ucs_status_t status;

    status = pt_session_configure(run, setup->settings);
    if (status != UCS_OK) {
        fprintf(stderr, "psel_calibrate: cannot connect over %s (settings: "
                "%s)\n", setup->name, setup->settings);
        return status;
    }

    table = psel_ep_tag_table(run->ep);
    count = 0;
    for (i = 0; (table != NULL) && (i < table->num_protos); ++i) {
        if (table->status[i] != UCS_OK) {
            continue;
        }
        protos[count].caps = table->caps[i];
        snprintf(protos[count].name, sizeof(protos[count].name), "%s",
                 table->protos[i]->name);
        ++count;
    }

    for (i = 0; i < count; ++i) {
        status = cal_protocol(run, opts, setup, &protos[i], protos, count,
                              calib);
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}


/* ---------------------------------------------------------------------- */
/* The peer                                                               */
/* ---------------------------------------------------------------------- */

/* A local peer: a child process serving the session on a socket pair. */
static ucs_status_t cal_fork_peer(pt_run_t *run, pid_t *pid_p)
{
    pt_run_t server = {.oob = {.fd = -1, .timeout = PT_TIMEOUT_SEC}};
    int sv[2];
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        fprintf(stderr, "psel_calibrate: socketpair: %m\n");
        return UCS_ERR_IO_ERROR;
    }

    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "psel_calibrate: fork: %m\n");
        close(sv[0]);
        close(sv[1]);
        return UCS_ERR_IO_ERROR;
    }
    if (pid == 0) {
        close(sv[0]);
        server.oob.fd = sv[1];
        _exit((pt_session_serve(&server) == UCS_OK) ? 0 : 1);
    }

    close(sv[1]);
    run->oob.fd      = sv[0];
    run->oob.timeout = PT_TIMEOUT_SEC;
    *pid_p           = pid;
    return UCS_OK;
}

/* A remote peer: the handshake of a psel_perftest client, for a session. */
static ucs_status_t cal_connect_server(pt_run_t *run, const cal_opts_t *opts)
{
    ucs_status_t status;

    status = psel_oob_connect(opts->server, AF_UNSPEC, opts->port,
                              PT_TIMEOUT_SEC, &run->oob);
    if (status != UCS_OK) {
        fprintf(stderr, "psel_calibrate: start `psel_perftest -p %u` on %s "
                "first\n", opts->port, opts->server);
        return status;
    }

    run->params = (pt_params_t){.test = PT_TEST_CALIBRATE, .iters = 1};
    return pt_handshake_client(run, opts->server, opts->port,
                               "calibration session");
}


int main(int argc, char **argv)
{
    pt_run_t run = {.oob = {.fd = -1}};
    char path[4096];
    psel_calib_t calib;
    cal_opts_t opts;
    ucs_status_t status;
    double start;
    pid_t pid = -1;
    unsigned i;
    int wstatus;

    psel_oob_prog = "psel_calibrate";
    if (cal_parse_args(argc, argv, &opts) != 0) {
        return 2;
    }
    if (cal_output_path(&opts, path, sizeof(path)) != 0) {
        return 2;
    }

    start  = psel_oob_time();
    status = (opts.server != NULL) ? cal_connect_server(&run, &opts) :
                                     cal_fork_peer(&run, &pid);
    if (status != UCS_OK) {
        return 1;
    }

    psel_calib_init(&calib);
    snprintf(calib.mode, sizeof(calib.mode), "%s", opts.mode->name);
    printf("# psel_calibrate: %s mode, peer %s, sizes up to %zu bytes\n",
           opts.mode->name, (opts.server != NULL) ? opts.server :
           "a process on this host", opts.max_size);
    printf("# set lanes    protocol   lanes                    points  time "
           " fitted (first range)\n");

    if (opts.server != NULL) {
        status = cal_setup(&run, &opts, &cal_remote_setup, &calib);
    } else {
        for (i = 0; (status == UCS_OK) &&
                    (i < sizeof(cal_local_setups) / sizeof(cal_local_setups[0]));
             ++i) {
            if ((opts.only == NULL) ||
                !strcmp(opts.only, cal_local_setups[i].name)) {
                status = cal_setup(&run, &opts, &cal_local_setups[i], &calib);
            }
        }
    }
    if (status == UCS_OK) {
        status = pt_session_end(&run);
    }
    pt_cleanup(&run);
    if (pid > 0) {
        waitpid(pid, &wstatus, 0);
    }

    if (status == UCS_OK) {
        calib.duration = psel_oob_time() - start;
        status         = psel_calib_save(&calib, path);
    }
    if (status == UCS_OK) {
        printf("# wrote %u cost lines to %s in %.1f s; use them with "
               "UCX_PSEL_CALIBRATION=%s (or =auto for the default file)\n",
               calib.num_lines, path, calib.duration, path);
    } else {
        fprintf(stderr, "psel_calibrate: calibration failed (%s); nothing "
                "was written\n", ucs_status_string(status));
    }
    psel_calib_cleanup(&calib);
    return (status == UCS_OK) ? 0 : 1;
}
