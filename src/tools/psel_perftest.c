/*
 * psel_perftest: ucx_perftest's tag_lat and tag_bw over protosel's data path,
 * with the same command line and the same output table, so one command line
 * runs either tool. Without a host argument it is the server: it serves one
 * client, which sends it the test parameters over the TCP control connection.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity() */
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest_session.h"
#include "tool_diag.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define PT_REPORT_INTERVAL_SEC 1.0

/* Output flags, as ucx_perftest's -f, -v, -N */
#define PT_OUT_FINAL           (1u << 0)
#define PT_OUT_CSV             (1u << 1)
#define PT_OUT_NUMERIC         (1u << 2)

/* ucx_perftest tests that psel_perftest does not run */
static const char *const pt_other_tests[] = {
    "am_lat", "put_lat", "add_lat", "get", "fadd", "swap", "cswap", "am_bw",
    "put_bw", "add_mr", "tag_sync_lat", "tag_sync_bw", "ucp_put_lat",
    "ucp_put_bw", "ucp_get", "ucp_add", "ucp_fadd", "ucp_swap", "ucp_cswap",
    "stream_bw", "stream_lat", "ucp_am_lat", "ucp_am_bw", NULL
};

/* ucx_perftest options that psel_perftest rejects, and why */
static const struct {
    char        opt;
    const char *why;
} pt_unsupported[] = {
    {'d', "UCT-only"}, {'x', "UCT-only"}, {'W', "UCT-only"},
    {'A', "UCT-only"}, {'o', "UCT-only"}, {'H', "not implemented"},
    {'i', "not implemented"}, {'l', "not implemented"},
    {'b', "not implemented"}, {'B', "not implemented"},
    {'I', "not implemented"}, {'U', "not implemented"},
    {'e', "not implemented"}, {'r', "not implemented"},
    {'z', "not implemented"}, {'S', "not implemented"},
    {'q', "not implemented"}, {'P', "not implemented"},
    {0, NULL}
};

/* long options without a ucx_perftest letter */
#define PT_OPT_BIND  256 /* --bind */
#define PT_OPT_UCP   257 /* --ucp */
#define PT_OPT_COLD  258 /* --cold */

/* ucx_perftest 1.13's options; the leading ':' reports missing values */
#define PT_OPTSTRING ":p:b:6NfvIc:P:h" \
                     "t:n:s:W:O:w:D:i:H:oSCIqM:r:E:T:d:x:A:BUem:R:lz"


/** Command line. */
typedef struct {
    pt_params_t params;
    const char *server;        /* NULL: run as server */
    uint16_t    port;
    int         family;
    unsigned    out_flags;     /* PT_OUT_* */
    double      rank;          /* percentile of the latency column */
    const char *cpus;          /* -c, or NULL */
    const char *bind_addr;     /* --bind: the server's listening address */
} pt_opts_t;

/** One report line, in seconds, bytes/s and messages/s. */
typedef struct {
    double iters;
    double lat_pct, lat_avg, lat_total;
    double bw_avg, bw_total;
    double mr_avg, mr_total;
} pt_result_t;

/** Measurements as ucx_perftest takes them. */
typedef struct {
    pt_timing_t   timing;      /* updated by the loops, each iteration */
    double        factor;      /* 2 for ping-pong: results per direction */
    double        rank;
    unsigned      out_flags;
    double        start;       /* clock at the start of the run */
    pt_counters_t prev;        /* at the previous report */
    double        scratch[PT_TIMING_QUEUE_SIZE];
} pt_stats_t;


/* ---------------------------------------------------------------------- */
/* Command line                                                           */
/* ---------------------------------------------------------------------- */

static void pt_usage(FILE *stream)
{
    fprintf(stream,
        "  Usage: psel_perftest [ server-hostname ] [ options ]\n"
        "\n"
        "  Runs ucx_perftest's UCP tag tests over protosel. Without a host it\n"
        "  is the server and serves one client; the client sends the test.\n"
        "\n"
        "  Common options:\n"
        "     -t <test>      test to run:\n"
        "          tag_lat - tag match latency (ping-pong)\n"
        "           tag_bw - tag match bandwidth\n"
        "     -s <size>      message size (8); a list \"16,48\" sends one\n"
        "                    contiguous message of the total size\n"
        "     -n <iters>     number of iterations to run (1000000)\n"
        "     -w <iters>     number of warm-up iterations (10000), stopped\n"
        "                    after %.0f ms as in ucx_perftest\n"
        "     -c <cpulist>   set affinity to this CPU list (separated by comma) (off)\n"
        "     -O <count>     maximal number of uncompleted outstanding sends\n"
        "                    (0: tag_lat 1, tag_bw 32)\n"
        "     -R <rank>      percentile rank of the percentile data in latency tests (50.0)\n"
        "     -p <port>      TCP port to use for data exchange (%d)\n"
        "     -6             Use IPv6 address for in data exchange\n"
        "     --bind <addr>  server: listen on this address only (default:\n"
        "                    every address of the host)\n"
        "     -C             use wild-card tag for tag tests\n"
        "     --ucp          client: run the same loops over stock UCP\n"
        "                    (ucp_tag_send_nbx / ucp_tag_recv_nbx, transports\n"
        "                    by UCX_TLS) on both sides, to compare the data\n"
        "                    paths in one harness\n"
        "     --cold         client: consecutive messages use other buffers,\n"
        "                    over twice the last level cache, so that each\n"
        "                    starts out of cache (as psel_calibrate measures\n"
        "                    from 64 KiB); ucx_perftest has no such mode\n"
        "     -m host[,host] -D contig[,contig] -T 1 -M single -E poll\n"
        "                    accepted for compatibility (the only supported values)\n"
        "     -h, --help     show this help message\n"
        "\n"
        "  Output format:\n"
        "     -N             use numeric formatting (thousands separator)\n"
        "     -f             print only final numbers\n"
        "     -v             print CSV-formatted output\n"
        "\n"
        "  Transports are chosen by UCX_PSEL_TLS and UCX_PSEL_NET_DEVICES\n"
        "  (with --ucp: UCX_TLS and UCX_NET_DEVICES).\n"
        "  Every control-connection wait gives up after %.0f seconds.\n",
        PT_WARMUP_TIME_SEC * 1000, PT_DEFAULT_PORT, PT_TIMEOUT_SEC);
}

/* Parse a decimal unsigned integer within [min, max]; 0 on success. */
static int pt_parse_uint(const char *arg, uint64_t min, uint64_t max,
                         uint64_t *value_p)
{
    unsigned long long value;
    char *end;

    if ((arg[0] < '0') || (arg[0] > '9')) {
        return -1;
    }

    errno = 0;
    value = strtoull(arg, &end, 10);
    if ((errno != 0) || (*end != '\0') || (value < min) || (value > max)) {
        return -1;
    }

    *value_p = value;
    return 0;
}

static int pt_bad_value(char opt, const char *what, const char *arg,
                        const char *forms)
{
    fprintf(stderr, "psel_perftest: invalid value '%s' for -%c (%s): "
            "expected %s\n", arg, opt, what, forms);
    return 1;
}

/* -s: one size or a comma-separated list, summed (contiguous datatype). */
static int pt_parse_size(const char *arg, uint64_t *size_p)
{
    const char *forms = "a size in bytes, or a comma-separated list of sizes "
                        "(e.g. 8 or 16,48), in total at most 1073741824";
    char token[32];
    uint64_t total = 0, value;
    const char *p  = arg, *comma;
    size_t len;

    do {
        comma = strchr(p, ',');
        len   = (comma == NULL) ? strlen(p) : (size_t)(comma - p);
        if ((len == 0) || (len >= sizeof(token))) {
            return pt_bad_value('s', "message size", arg, forms);
        }

        memcpy(token, p, len);
        token[len] = '\0';
        if (pt_parse_uint(token, 0, PT_MAX_SIZE, &value) != 0) {
            return pt_bad_value('s', "message size", arg, forms);
        }

        total += value;
        if (total > PT_MAX_SIZE) {
            return pt_bad_value('s', "message size", arg, forms);
        }
        p = comma + 1;
    } while (comma != NULL);

    *size_p = total;
    return 0;
}

static int pt_parse_test(const char *arg, pt_test_id_t *test_p)
{
    unsigned i;

    for (i = 0; i < PT_TEST_CALIBRATE; ++i) { /* the tests a user runs */
        if (!strcmp(arg, pt_tests[i].name)) {
            *test_p = i;
            return 0;
        }
    }

    for (i = 0; pt_other_tests[i] != NULL; ++i) {
        if (!strcmp(arg, pt_other_tests[i])) {
            fprintf(stderr, "psel_perftest: test '%s' of ucx_perftest is not "
                    "supported (-t accepts: tag_lat, tag_bw)\n", arg);
            return 1;
        }
    }

    fprintf(stderr, "psel_perftest: unknown test '%s' for -t (accepted: "
            "tag_lat, tag_bw)\n", arg);
    return 1;
}

/* Options kept for compatibility: only ucx_perftest's default is accepted. */
static int pt_check_default_only(char opt, const char *arg,
                                 const char *const *accepted)
{
    unsigned i;

    for (i = 0; accepted[i] != NULL; ++i) {
        if (!strcmp(arg, accepted[i])) {
            return 0;
        }
    }

    fprintf(stderr, "psel_perftest: value '%s' of -%c is not supported "
            "(accepted: %s", arg, opt, accepted[0]);
    for (i = 1; accepted[i] != NULL; ++i) {
        fprintf(stderr, ", %s", accepted[i]);
    }
    fprintf(stderr, ")\n");
    return 1;
}

static int pt_parse_cpus(const char *arg)
{
    uint64_t cpu;
    char token[16];
    const char *p = arg, *comma;
    size_t len;

    do {
        comma = strchr(p, ',');
        len   = (comma == NULL) ? strlen(p) : (size_t)(comma - p);
        if ((len == 0) || (len >= sizeof(token))) {
            goto err;
        }
        memcpy(token, p, len);
        token[len] = '\0';
        if (pt_parse_uint(token, 0, CPU_SETSIZE - 1, &cpu) != 0) {
            goto err;
        }
        p = comma + 1;
    } while (comma != NULL);
    return 0;

err:
    return pt_bad_value('c', "cpu list", arg,
                        "CPU numbers separated by commas (e.g. 0 or 0,2)");
}

static void pt_opts_init(pt_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->params.test        = PT_TEST_LAST;
    opts->params.size        = 8;
    opts->params.iters       = 1000000;
    opts->params.warmup      = 10000;
    opts->params.outstanding = 0;
    opts->port               = PT_DEFAULT_PORT;
    opts->family             = AF_INET;
    opts->rank               = 50.0;
}

/*
 * Parse the command line as ucx_perftest does.
 * @return 0 to run, 1 on an error (printed), 2 when -h was given.
 */
static int pt_parse_args(int argc, char **argv, pt_opts_t *opts)
{
    static const char *const mem_types[] = {"host", "host,host", NULL};
    static const char *const layouts[]   = {"contig", "contig,contig", NULL};
    static const char *const threads[]   = {"1", NULL};
    static const char *const tmodes[]    = {"single", NULL};
    static const char *const wmodes[]    = {"poll", NULL};
    static const struct option long_opts[] = {
        {"bind", required_argument, NULL, PT_OPT_BIND},
        {"ucp", no_argument, NULL, PT_OPT_UCP},
        {"cold", no_argument, NULL, PT_OPT_COLD},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}
    };
    uint64_t value;
    char *end;
    unsigned i;
    int c;

    pt_opts_init(opts);
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, PT_OPTSTRING, long_opts, NULL)) != -1) {
        switch (c) {
        case PT_OPT_UCP:
            opts->params.flags |= PT_FLAG_UCP;
            break;
        case PT_OPT_COLD:
            opts->params.flags |= PT_FLAG_COLD;
            break;
        case PT_OPT_BIND:
            if (optarg[0] == '\0') {
                fprintf(stderr, "psel_perftest: empty value for --bind: "
                        "expected an address or host name of this host\n");
                return 1;
            }
            opts->bind_addr = optarg;
            break;
        case 'p':
            if (pt_parse_uint(optarg, 1, 65535, &value) != 0) {
                return pt_bad_value('p', "port", optarg,
                                    "a TCP port number from 1 to 65535");
            }
            opts->port = value;
            break;
        case '6':
            opts->family = AF_INET6;
            break;
        case 'N':
            opts->out_flags |= PT_OUT_NUMERIC;
            break;
        case 'f':
            opts->out_flags |= PT_OUT_FINAL;
            break;
        case 'v':
            opts->out_flags |= PT_OUT_CSV;
            break;
        case 'c':
            if (pt_parse_cpus(optarg) != 0) {
                return 1;
            }
            opts->cpus = optarg;
            break;
        case 'h':
            return 2;
        case 't':
            if (pt_parse_test(optarg, &opts->params.test) != 0) {
                return 1;
            }
            break;
        case 'n':
            if (pt_parse_uint(optarg, 1, PT_MAX_ITERS, &value) != 0) {
                return pt_bad_value('n', "iterations", optarg,
                                    "an integer of at least 1");
            }
            opts->params.iters = value;
            break;
        case 'w':
            if (pt_parse_uint(optarg, 0, PT_MAX_ITERS, &value) != 0) {
                return pt_bad_value('w', "warm-up iterations", optarg,
                                    "an integer of at least 0");
            }
            opts->params.warmup = value;
            break;
        case 's':
            if (pt_parse_size(optarg, &opts->params.size) != 0) {
                return 1;
            }
            break;
        case 'O':
            if (pt_parse_uint(optarg, 0, PT_MAX_OUTSTANDING, &value) != 0) {
                return pt_bad_value('O', "outstanding sends", optarg,
                                    "an integer from 0 (the test's default) "
                                    "to 65536");
            }
            opts->params.outstanding = value;
            break;
        case 'R':
            errno      = 0;
            opts->rank = strtod(optarg, &end);
            if ((errno != 0) || (end == optarg) || (*end != '\0') ||
                !(opts->rank >= 0.0) || !(opts->rank <= 100.0)) {
                return pt_bad_value('R', "percentile rank", optarg,
                                    "a number from 0 to 100 (e.g. 99.9)");
            }
            break;
        case 'C':
            opts->params.flags |= PT_FLAG_WILDCARD;
            break;
        case 'm':
            if (pt_check_default_only('m', optarg, mem_types) != 0) {
                return 1;
            }
            break;
        case 'D':
            if (pt_check_default_only('D', optarg, layouts) != 0) {
                return 1;
            }
            break;
        case 'T':
            if (pt_check_default_only('T', optarg, threads) != 0) {
                return 1;
            }
            break;
        case 'M':
            if (pt_check_default_only('M', optarg, tmodes) != 0) {
                return 1;
            }
            break;
        case 'E':
            if (pt_check_default_only('E', optarg, wmodes) != 0) {
                return 1;
            }
            break;
        case ':':
            if (optopt == PT_OPT_BIND) {
                fprintf(stderr, "psel_perftest: option --bind needs a value "
                        "(see psel_perftest -h)\n");
            } else {
                fprintf(stderr, "psel_perftest: option -%c needs a value (see "
                        "psel_perftest -h)\n", optopt);
            }
            return 1;
        case '?':
            if (optopt == 0) { /* an unknown long option */
                fprintf(stderr, "psel_perftest: unknown option '%s' (see "
                        "psel_perftest -h)\n", argv[optind - 1]);
            } else {
                fprintf(stderr, "psel_perftest: unknown option -%c (see "
                        "psel_perftest -h)\n",
                        isprint(optopt) ? optopt : '?');
            }
            return 1;
        default:
            for (i = 0; pt_unsupported[i].opt != 0; ++i) {
                if (pt_unsupported[i].opt == c) {
                    fprintf(stderr, "psel_perftest: option -%c is not "
                            "supported (%s)\n", c, pt_unsupported[i].why);
                    return 1;
                }
            }
            fprintf(stderr, "psel_perftest: option -%c is not supported\n", c);
            return 1;
        }
    }

    if (optind < argc) {
        opts->server = argv[optind++];
    }
    if (optind < argc) {
        fprintf(stderr, "psel_perftest: unexpected argument '%s' (only one "
                "server host is accepted)\n", argv[optind]);
        return 1;
    }

    if ((opts->server != NULL) && (opts->bind_addr != NULL)) {
        fprintf(stderr, "psel_perftest: --bind is a server option (the "
                "address the server listens on); a client connects to the "
                "host it is given\n");
        return 1;
    }

    if ((opts->server == NULL) && (opts->params.flags & PT_FLAG_UCP)) {
        fprintf(stderr, "psel_perftest: --ucp is a client option: the "
                "server runs the data path the client asks for\n");
        return 1;
    }

    if ((opts->server == NULL) && (opts->params.flags & PT_FLAG_COLD)) {
        fprintf(stderr, "psel_perftest: --cold is a client option: the "
                "server uses the buffers the client asks for\n");
        return 1;
    }

    if ((opts->server != NULL) && (opts->params.test == PT_TEST_LAST)) {
        fprintf(stderr, "psel_perftest: missing test name: give -t tag_lat "
                "or -t tag_bw\n");
        return 1;
    }

    return 0;
}

/*
 * Check parameters, from the command line or, on the server, from the
 * client. @return 0 if they are valid, else fills @a err.
 */
/* ---------------------------------------------------------------------- */

static void pt_print_box(const pt_params_t *params)
{
    const char *api = (params->flags & PT_FLAG_UCP) ?
                      "UCP (stock, --ucp)" : "protocol layer";

    static const char *line = "+-------------------------------------------"
                              "-----------------------------------------------"
                              "----------------+";

    printf("%s\n", line);
    printf("| API:          %-60s                               |\n", api);
    printf("| Test:         %-60s                               |\n",
           pt_tests[params->test].desc);
    printf("| Data layout:  %-60s                               |\n",
           "(automatic)");
    printf("| Send memory:  %-60s                               |\n",
           (params->flags & PT_FLAG_COLD) ? "host, out of cache (--cold)" :
           "host");
    printf("| Recv memory:  %-60s                               |\n",
           (params->flags & PT_FLAG_COLD) ? "host, out of cache (--cold)" :
           "host");
    printf("| Message size: %-60llu                               |\n",
           (unsigned long long)params->size);
    printf("%s\n", line);
    fflush(stdout);
}

static void pt_print_header(unsigned out_flags, double rank,
                            const char *lat_label)
{
    if (out_flags & PT_OUT_CSV) {
        printf("iterations,%.1f_percentile_lat,avg_lat,overall_lat,avg_bw,"
               "overall_bw,avg_mr,overall_mr\n", rank);
    } else {
        printf("+--------------+--------------+------------------------------+"
               "---------------------+-----------------------+\n");
        printf("|              |              |       %8s (usec)        |"
               "   bandwidth (MB/s)  |  message rate (msg/s) |\n", lat_label);
        printf("+--------------+--------------+----------+---------+---------+"
               "----------+----------+-----------+-----------+\n");
        printf("|    %5s     | # iterations | %4.1f%%ile | average | overall |"
               "  average |  overall |  average  |  overall  |\n",
               (out_flags & PT_OUT_FINAL) ? "Test" : "Stage", rank);
        printf("+--------------+--------------+----------+---------+---------+"
               "----------+----------+-----------+-----------+\n");
    }
    fflush(stdout);
}

static void pt_print_result(unsigned out_flags, const pt_result_t *r,
                            int final)
{
    const double usec = 1e6, mb = 1024.0 * 1024.0;

    if (!final && (out_flags & PT_OUT_FINAL)) {
        return;
    }

    /* ucx_perftest's progress lines carry its (OpenMP) thread number */
    if (!final) {
        printf("[thread 0]");
    } else if (!(out_flags & PT_OUT_CSV)) {
        printf((out_flags & PT_OUT_FINAL) ? "%10s" : "Final:    ", "");
    }

    if (out_flags & PT_OUT_CSV) {
        printf("%4.0f,%.3f,%.3f,%.3f,%.2f,%.2f,%.0f,%.0f", r->iters,
               r->lat_pct * usec, r->lat_avg * usec, r->lat_total * usec,
               r->bw_avg / mb, r->bw_total / mb, r->mr_avg, r->mr_total);
    } else if (out_flags & PT_OUT_NUMERIC) {
        printf("%'18.0f %10.3f %9.3f %9.3f %11.2f %10.2f %'11.0f %'11.0f",
               r->iters, r->lat_pct * usec, r->lat_avg * usec,
               r->lat_total * usec, r->bw_avg / mb, r->bw_total / mb,
               r->mr_avg, r->mr_total);
    } else {
        printf("%18.0f %10.3f %9.3f %9.3f %11.2f %10.2f %11.0f %11.0f",
               r->iters, r->lat_pct * usec, r->lat_avg * usec,
               r->lat_total * usec, r->bw_avg / mb, r->bw_total / mb,
               r->mr_avg, r->mr_total);
    }
    printf("\n");
    fflush(stdout);
}

/* The element of rank @a k (0-based) of @a a[0..n-1]; reorders @a a. */
static double pt_select(double *a, unsigned n, unsigned k)
{
    unsigned lo = 0, hi = n - 1, i, store;
    double pivot, tmp;

#define PT_SWAP(_x, _y) do { tmp = (_x); (_x) = (_y); (_y) = tmp; } while (0)
    while (lo < hi) {
        PT_SWAP(a[lo + (hi - lo) / 2], a[hi]);
        pivot = a[hi];
        store = lo;
        for (i = lo; i < hi; ++i) {
            if (a[i] < pivot) {
                PT_SWAP(a[i], a[store]);
                ++store;
            }
        }
        PT_SWAP(a[store], a[hi]);
        if (k == store) {
            break;
        } else if (k < store) {
            hi = store - 1;
        } else {
            lo = store + 1;
        }
    }
#undef PT_SWAP
    return a[k];
}

static void pt_stats_init(pt_stats_t *st, const pt_params_t *params,
                          double rank, unsigned out_flags)
{
    memset(st, 0, sizeof(*st));
    st->factor          = pt_tests[params->test].pingpong ? 2.0 : 1.0;
    st->rank            = rank;
    st->out_flags       = out_flags;
}

static void pt_stats_start(pt_stats_t *st, double now)
{
    st->start            = now;
    st->timing.last      = now;
    st->timing.cur.time  = now;
    st->timing.report_at = now + PT_REPORT_INTERVAL_SEC;
    st->prev             = st->timing.cur;
}

/* ucx_perftest's result: moment values since the previous report. */
static void pt_stats_calc(pt_stats_t *st, pt_result_t *r)
{
    unsigned n = (st->timing.cur.iters < PT_TIMING_QUEUE_SIZE) ?
                 (unsigned)st->timing.cur.iters : PT_TIMING_QUEUE_SIZE;
    double total = st->timing.cur.time - st->start;
    double moment = st->timing.cur.time - st->prev.time;
    uint64_t m_iters = st->timing.cur.iters - st->prev.iters;

    if ((m_iters == 0) || (moment <= 0)) {
        /* nothing new since the last report: show the totals */
        moment   = total;
        m_iters  = st->timing.cur.iters;
        st->prev = (pt_counters_t){0, 0, 0, st->start};
    }
    if (total <= 0) {
        total = moment = 1e-9;
    }

    r->iters = st->timing.cur.iters;
    if (n > 0) {
        memcpy(st->scratch, st->timing.queue, n * sizeof(double));
        r->lat_pct = pt_select(st->scratch, n,
                               (unsigned)((n - 1) * (st->rank / 100.0))) /
                     st->factor;
    } else {
        r->lat_pct = 0;
    }
    r->lat_avg   = (m_iters ? moment / m_iters : 0) / st->factor;
    r->lat_total = (st->timing.cur.iters ? total / st->timing.cur.iters : 0) / st->factor;
    r->bw_avg    = (st->timing.cur.bytes - st->prev.bytes) / moment * st->factor;
    r->bw_total  = st->timing.cur.bytes / total * st->factor;
    r->mr_avg    = (st->timing.cur.msgs - st->prev.msgs) / moment * st->factor;
    r->mr_total  = st->timing.cur.msgs / total * st->factor;
}

/* The server's timing: no report line */
static void pt_stats_skip(void *arg)
{
    pt_stats_t *st = arg;

    st->timing.report_at = st->timing.cur.time + PT_REPORT_INTERVAL_SEC;
}

/* A report line each PT_REPORT_INTERVAL_SEC, as ucx_perftest prints */
static void pt_stats_report(void *arg)
{
    pt_stats_t *st = arg;
    pt_result_t r;

    pt_stats_calc(st, &r);
    pt_print_result(st->out_flags, &r, 0);
    st->prev             = st->timing.cur;
    st->timing.report_at = st->timing.cur.time + PT_REPORT_INTERVAL_SEC;
}

/* ---------------------------------------------------------------------- */
/* Data path                                                              */
/* ---------------------------------------------------------------------- */

static ucs_status_t pt_run_test(pt_run_t *run, int is_client,
                                const pt_opts_t *opts)
{
    pt_stats_t *st = NULL;
    ucs_status_t status;
    pt_result_t result;

    status = psel_oob_barrier(&run->oob);
    if (status != UCS_OK) {
        return status;
    }

    status = pt_warmup(run, is_client);
    if (status != UCS_OK) {
        return status;
    }

    /* both sides time each iteration, as libperf's do; the server's
     * figures are not printed */
    st = malloc(sizeof(*st));
    if (st == NULL) {
        fprintf(stderr, "psel_perftest: out of memory\n");
        return UCS_ERR_NO_MEMORY;
    }
    pt_stats_init(st, &run->params, opts->rank, opts->out_flags);
    st->timing.report     = is_client ? pt_stats_report : pt_stats_skip;
    st->timing.report_arg = st;
    if (is_client) {
        pt_print_header(opts->out_flags, opts->rank,
                        pt_tests[run->params.test].lat_label);
    }

    status = psel_oob_barrier(&run->oob);
    if (status != UCS_OK) {
        goto out;
    }

    pt_stats_start(st, psel_oob_time());
    run->timing = &st->timing;
    status      = pt_run_phase(run, is_client, run->params.iters, 1);
    run->timing = NULL;
    if (status != UCS_OK) {
        goto out;
    }

    st->timing.cur.time = psel_oob_time();
    status = psel_oob_barrier(&run->oob);
    if ((status == UCS_OK) && is_client) {
        pt_stats_calc(st, &result);
        pt_print_result(opts->out_flags, &result, 1);
    }

out:
    free(st);
    return status;
}

static int pt_client(const pt_opts_t *opts)
{
    pt_run_t run = {.params = opts->params, .oob = {.fd = -1}};
    ucs_status_t status;

    run.path = (run.params.flags & PT_FLAG_UCP) ? PT_PATH_UCP :
                                                  PT_PATH_PROTOSEL;

    status = psel_oob_connect(opts->server, opts->family, opts->port,
                              PT_TIMEOUT_SEC, &run.oob);
    if (status != UCS_OK) {
        return 1;
    }

    status = pt_handshake_client(&run, opts->server, opts->port, "test");
    if (status == UCS_OK) {
        status = pt_connect(&run, 1);
    }
    if (status == UCS_OK) {
        status = pt_run_test(&run, 1, opts);
    }

    pt_cleanup(&run);
    return (status == UCS_OK) ? 0 : 1;
}

static int pt_server(const pt_opts_t *opts)
{
    pt_run_t run = {.oob = {.fd = -1}};
    char peer[128];
    ucs_status_t status;
    int listen_fd;

    status = psel_oob_listen(opts->family, opts->bind_addr, opts->port,
                             &listen_fd);
    if (status != UCS_OK) {
        return 1;
    }

    printf("Waiting for connection...\n");
    fflush(stdout);
    status = psel_oob_accept(listen_fd, PT_TIMEOUT_SEC, &run.oob, peer,
                             sizeof(peer));
    if (status != UCS_OK) {
        return 1;
    }

    printf("Accepted connection from %s\n", peer);
    fflush(stdout);

    status = pt_handshake_server(&run);
    if (status != UCS_OK) {
        goto out;
    }
    run.path = (run.params.flags & PT_FLAG_UCP) ? PT_PATH_UCP :
                                                  PT_PATH_PROTOSEL;

    if (run.params.test == PT_TEST_CALIBRATE) {
        printf("Calibration session (psel_calibrate)\n");
        fflush(stdout);
        status = pt_session_serve(&run);
        goto out;
    }

    pt_print_box(&run.params);

    status = pt_connect(&run, 0);
    if (status == UCS_OK) {
        status = pt_run_test(&run, 0, opts);
    }

out:
    pt_cleanup(&run);
    return (status == UCS_OK) ? 0 : 1;
}

static int pt_set_affinity(const char *cpus)
{
    cpu_set_t set;
    const char *p = cpus;

    CPU_ZERO(&set);
    do {
        CPU_SET(atoi(p), &set);
        p = strchr(p, ',');
    } while ((p != NULL) && (*++p != '\0'));

    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        fprintf(stderr, "psel_perftest: cannot set the affinity to cpus %s: "
                "%m\n", cpus);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    pt_opts_t opts;
    char err[256];
    int ret;

    psel_tool_diag_init(psel_oob_prog);
    ret = pt_parse_args(argc, argv, &opts);
    if (ret == 2) {
        pt_usage(stdout);
        return 0;
    } else if (ret != 0) {
        return 1;
    }
    /* the settings and the calibration file, before any connection */
    if (psel_tool_config_check(1) != 0) {
        return 1;
    }

    if ((opts.server != NULL) &&
        (pt_params_check(&opts.params, err, sizeof(err)) != 0)) {
        fprintf(stderr, "psel_perftest: %s\n", err);
        return 1;
    }

    if ((opts.cpus != NULL) && (pt_set_affinity(opts.cpus) != 0)) {
        return 1;
    }

    if (opts.out_flags & PT_OUT_NUMERIC) {
        setlocale(LC_NUMERIC, "");
    }

    return (opts.server != NULL) ? pt_client(&opts) : pt_server(&opts);
}
