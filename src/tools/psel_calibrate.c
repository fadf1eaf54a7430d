/*
 * psel_calibrate: measure the cost lines of every protocol over the lanes
 * selection uses, through protosel's own data path, and save them for
 * UCX_PSEL_CALIBRATION.
 *
 * Without a host it forks a peer and measures shared memory and tcp over
 * loopback on this machine; with a host it measures tcp to a psel_perftest
 * server running there, each of several network rails alone first. For
 * each transport setup it reads the endpoint's selection table to learn the
 * protocols, their size limits and their lanes; then it forces each
 * protocol in turn (UCX_PSEL_PROTOS, on both sides) and times tag_lat (half
 * round trip: the "single" line) and tag_bw (time per message when
 * streaming: "multi") at log-spaced sizes, ascending, within a time budget;
 * repeats each point, keeps the median and its spread, and fits the lines
 * in natural order, leaving out what stayed too noisy (calib.h). The
 * measuring is in calibrate_measure.c, a setup in calibrate_setup.c.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "calibrate.h"
#include "tool_diag.h"

#include <ucs/config/global_opts.h>
#include <ucs/sys/math.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define CAL_DEFAULT_MAX_SIZE (16ul << 20)

/* quick <= 30 s and full <= 2 min in all, with the connections */
const cal_mode_t cal_modes[] = {
    {"full",  2, 5, 4e-3, 100.0, 0.5, 4ul << 20},
    {"quick", 1, 3, 1e-3, 24.0,  0.5, 1ul << 20},
};

static const cal_setup_t cal_local_setups[] = {
    {"shm", "UCX_PSEL_TLS=posix,sysv,cma"},
    {"tcp", "UCX_PSEL_TLS=tcp\nUCX_PSEL_NET_DEVICES=lo"},
};

static const cal_setup_t cal_remote_setup = {"tcp", "UCX_PSEL_TLS=tcp"};

/* --ucp: the same transports for stock UCP, with its protocols v2 */
static const cal_setup_t cal_ucp_setups[] = {
    {"shm", "UCX_TLS=posix,sysv,cma\nUCX_PROTO_ENABLE=y"},
    {"tcp", "UCX_TLS=tcp\nUCX_NET_DEVICES=lo\nUCX_PROTO_ENABLE=y"},
};


static void cal_usage(FILE *stream)
{
    fprintf(stream,
        "Usage: psel_calibrate [options] [server-hostname]\n"
        "  Measures protosel's protocols on this machine (shared memory and\n"
        "  tcp over loopback, with a peer process it starts), or over tcp to\n"
        "  a host running `psel_perftest` as a server, and writes the cost\n"
        "  lines that UCX_PSEL_CALIBRATION=FILE|auto makes selection use.\n"
        "  Against a server reached over several network rails, each rail is\n"
        "  measured alone too. It keeps to a time budget (larger sizes then\n"
        "  come from the fit), and leaves out what noise made unreliable,\n"
        "  saying why; with nothing left it writes nothing and exits 1.\n"
        "\n"
        "  (full mode: <= 2 min)\n"
        "  -q, --quick        quick mode (fewer sizes and repeats; <= 30 s)\n"
        "  -o, --output FILE  where to write (default: UCX_PSEL_CALIBRATION if\n"
        "                     it names a file, else the 'auto' location)\n"
        "  -t, --transport T  only 'shm' or only 'tcp'\n"
        "  -u, --ucp          measure stock UCP's protocols on this host (each\n"
        "                     forced in turn, what ran read from its tables),\n"
        "                     for libprotosel_ucx.so; adds them to FILE\n"
        "  -m, --max-size N   largest message size (default 16M)\n"
        "  -p, --port PORT    the server's port (default %u)\n"
        "  -a, --any-peer     write the rails for every peer ('*'), the ones\n"
        "                     libprotosel_ucx.so applies (it serves every peer\n"
        "                     with the same lanes): for hosts with alike rails\n"
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
        {"ucp", no_argument, NULL, 'u'},
        {"any-peer", no_argument, NULL, 'a'},
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
    while ((c = getopt_long(argc, argv, "qo:t:m:p:vuah", long_opts, NULL)) !=
           -1) {
        switch (c) {
        case 'q': opts->mode = &cal_modes[1]; break;
        case 'u': opts->path = PT_PATH_UCP; break;
        case 'a': opts->any_peer = 1; break;
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
        if (opts->path == PT_PATH_UCP) {
            fprintf(stderr, "psel_calibrate: --ucp measures stock UCP on this "
                    "host (with a peer it starts); a psel_perftest server "
                    "runs protosel's data path\n");
            return -1;
        }
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
/* The peer                                                               */
/* ---------------------------------------------------------------------- */

/* A local peer: a child process serving the session on a socket pair. */
static ucs_status_t cal_fork_peer(pt_run_t *run, pid_t *pid_p)
{
    pt_run_t server = {.oob  = {.fd = -1, .timeout = PT_TIMEOUT_SEC},
                       .path = run->path};
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


static int cal_double_cmp(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

/* The file's noise line: the spreads kept, CPU steal and other processes'
 * load over the whole run, the measurements left out */
static void cal_noise(cal_ctx_t *ctx)
{
    psel_calib_noise_t *noise = &ctx->calib.noise;
    cal_cpu_sample_t end;
    unsigned n = ctx->num_spreads;

    cal_cpu_sample(ctx, &end);
    ctx->calib.has_noise = 1;
    memset(noise, 0, sizeof(*noise));
    if (n > 0) {
        qsort(ctx->spreads, n, sizeof(double), cal_double_cmp);
        noise->spread     = (n % 2) ? ctx->spreads[n / 2] :
                            0.5 * (ctx->spreads[n / 2 - 1] +
                                   ctx->spreads[n / 2]);
        noise->max_spread = ctx->spreads[n - 1];
    }
    cal_cpu_delta(&ctx->cpu_start, &end, &noise->steal, &noise->load);
    noise->refused = ctx->refused;
}

/* Anything measured worth writing? */
/* The lines the file gets: fitted ones, and UCP's 'unsupported' marks
 * (refused lines are kept empty and not written) */
static unsigned cal_num_lines(const psel_calib_t *calib)
{
    unsigned i, n = 0;

    for (i = 0; i < calib->num_lines; ++i) {
        n += (calib->lines[i].num_ranges > 0) || calib->lines[i].unsupported;
    }
    return n;
}

/*
 * One file holds both data paths' lines: keep those of the other path (and
 * the rails, when this run measured none) of the file being rewritten, if
 * it is this host's. The header (date, mode, noise) is this run's.
 */
static void cal_keep_other_path(cal_ctx_t *ctx, const char *path)
{
    psel_calib_via_t other = (ctx->opts.path == PT_PATH_UCP) ?
                             PSEL_CALIB_VIA_PROTOSEL : PSEL_CALIB_VIA_UCP;
    psel_calib_t old;
    char why[256];

    if (psel_calib_load(path, &old) != UCS_OK) {
        return; /* none, or unreadable (said): replaced */
    }
    if (psel_calib_check(&old, why, sizeof(why)) != PSEL_CALIB_MATCH) {
        printf("# %s is not this host's (%s): replaced\n", path, why);
    } else if (psel_calib_copy_via(&ctx->calib, &old, other) == UCS_OK) {
        if (ctx->calib.num_rails == 0) {
            memcpy(ctx->calib.rails, old.rails, sizeof(old.rails));
            ctx->calib.num_rails = old.num_rails;
        }
        if (psel_calib_has_via(&old, other)) {
            printf("# kept the lines measured through %s of %s\n",
                   psel_calib_via_name(other), path);
        }
    }
    psel_calib_cleanup(&old);
}

static void cal_print_report(const cal_ctx_t *ctx)
{
    const psel_calib_noise_t *noise = &ctx->calib.noise;
    const char *report              = ucs_string_buffer_cstr(&ctx->report);
    const char *crossovers          = ucs_string_buffer_cstr(&ctx->crossovers);

    if (report[0] != '\0') {
        printf("# left out as noisy, or out of natural order:\n");
        fputs(report, stdout);
    }
    if (crossovers[0] != '\0') {
        printf("# crossovers measured in alternation:\n");
        fputs(crossovers, stdout);
    }
    printf("# noise: run spread %.1f%% (worst kept %.1f%%), CPU steal "
           "%.1f%%, other processes %.2f CPUs, %u measurement%s left out\n",
           100 * noise->spread, 100 * noise->max_spread, 100 * noise->steal,
           noise->load, noise->refused, (noise->refused == 1) ? "" : "s");
}

int main(int argc, char **argv)
{
    cal_ctx_t ctx;
    char path[4096];
    ucs_status_t status;
    double start;
    unsigned i, num_setups = 0;
    const cal_setup_t *setups[2], *local;
    double end;
    int wstatus;

    memset(&ctx, 0, sizeof(ctx));
    ctx.run.oob.fd = -1;
    ctx.peer       = -1;
    psel_oob_prog  = "psel_calibrate";
    psel_tool_diag_init(psel_oob_prog);
    if (cal_parse_args(argc, argv, &ctx.opts) != 0) {
        return 2;
    }
    /* both sides measure with UCX_PSEL_CALIBRATION=none: the rest must be
     * good before the peer is forked or the server asked */
    if (psel_tool_config_check(0) != 0) {
        return 1;
    }
    if (cal_output_path(&ctx.opts, path, sizeof(path)) != 0) {
        return 2;
    }

    start        = psel_oob_time();
    ctx.deadline = start + ctx.opts.mode->budget;
    ctx.run.path = ctx.opts.path;
    if (ctx.opts.path == PT_PATH_UCP) {
        /* UCP would list the UCX_PSEL_* variables as unused at exit. libucs
         * read UCX_WARN_UNUSED_ENV_VARS when it was loaded: setting it now
         * would only add itself to the list. The forked peer inherits this */
        ucs_global_opts.warn_unused_env_vars = 0;
    }
    status = (ctx.opts.server != NULL) ? cal_connect_server(&ctx.run, &ctx.opts) :
                                         cal_fork_peer(&ctx.run, &ctx.peer);
    if (status != UCS_OK) {
        return 1;
    }

    ucs_string_buffer_init(&ctx.report);
    ucs_string_buffer_init(&ctx.crossovers);
    psel_calib_init(&ctx.calib);
    snprintf(ctx.calib.mode, sizeof(ctx.calib.mode), "%s",
             ctx.opts.mode->name);
    cal_cpu_sample(&ctx, &ctx.cpu_start);
    printf("# psel_calibrate: %s mode, %s, peer %s, sizes up to %zu bytes, "
           "%.0f s budget\n", ctx.opts.mode->name,
           (ctx.opts.path == PT_PATH_UCP) ? "stock UCP's protocols" :
           "protosel's data path",
           (ctx.opts.server != NULL) ? ctx.opts.server :
           "a process on this host", ctx.opts.max_size,
           ctx.opts.mode->budget);
    printf("# set lanes    protocol   lanes                    points  time "
           " fitted (first range)\n");

    local = (ctx.opts.path == PT_PATH_UCP) ? cal_ucp_setups : cal_local_setups;
    if (ctx.opts.server != NULL) {
        setups[num_setups++] = &cal_remote_setup;
    } else {
        for (i = 0; i < 2; ++i) {
            if ((ctx.opts.only == NULL) || !strcmp(ctx.opts.only,
                                                   local[i].name)) {
                setups[num_setups++] = &local[i];
            }
        }
    }
    /* each setup gets an even share of the time left */
    for (i = 0; (status == UCS_OK) && (i < num_setups); ++i) {
        end    = psel_oob_time() +
                 (ctx.deadline - psel_oob_time()) / (num_setups - i);
        status = (ctx.opts.path == PT_PATH_UCP) ?
                 cal_ucp_setup(&ctx, setups[i], end) :
                 cal_setup(&ctx, setups[i], end);
    }
    if (status == UCS_OK) {
        status = pt_session_end(&ctx.run);
    }
    pt_cleanup(&ctx.run);
    if (ctx.peer > 0) {
        waitpid(ctx.peer, &wstatus, 0);
    }
    if (ctx.rails_file[0] != '\0') {
        unlink(ctx.rails_file);
    }

    if (status == UCS_OK) {
        cal_noise(&ctx);
        cal_print_report(&ctx);
        fflush(stdout);
        ctx.calib.duration = psel_oob_time() - start;
        if ((cal_num_lines(&ctx.calib) == 0) && (ctx.calib.num_rails == 0)) {
            fprintf(stderr, "psel_calibrate: refused: no measured line "
                    "was left to write, each refusal says why above (other "
                    "processes used %.2f CPUs, CPU steal %.1f%%); nothing "
                    "was written. Run it again when these CPUs are free.\n",
                    ctx.calib.noise.load, 100 * ctx.calib.noise.steal);
            status = UCS_ERR_CANCELED;
        }
    }
    if (status == UCS_OK) {
        cal_keep_other_path(&ctx, path);
        status = psel_calib_save(&ctx.calib, path);
        if (status == UCS_OK) {
            printf("# wrote %u cost lines and %u rails to %s in %.1f s; use "
                   "them with UCX_PSEL_CALIBRATION=%s (or =auto for the "
                   "default file)\n", cal_num_lines(&ctx.calib),
                   ctx.calib.num_rails, path, ctx.calib.duration, path);
        }
    }
    if ((status != UCS_OK) && (status != UCS_ERR_CANCELED)) {
        fprintf(stderr, "psel_calibrate: calibration failed (%s); nothing "
                "was written\n", ucs_status_string(status));
    }
    ucs_string_buffer_cleanup(&ctx.report);
    ucs_string_buffer_cleanup(&ctx.crossovers);
    free(ctx.spreads);
    psel_calib_cleanup(&ctx.calib);
    return (status == UCS_OK) ? 0 : 1;
}
