/*
 * Micro-benchmark of the selection engine (ucp_proto_sel/select.h):
 *  - ns per lookup on the fast path (contig host, no hashing) and on the
 *    hashed path (iov / generic buffer types whose tables are already built),
 *    over a pre-generated log-uniform mix of message sizes;
 *  - us to build every table of one endpoint: init a fresh selection, build
 *    the tables of 4 buffer types for the built-in protocols, clean up.
 * Both run over the mock endpoints of test/gtest-c/mock_lanes.h (shm-like and
 * ib-like). Targets are printed beside the figures; the exit status is 0
 * whether they are met or not: this is a benchmark, not a test.
 *
 * Usage: bench_select [-n lookups] [-r repetitions] [-b builds]
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mock_lanes.h"

#include <ucp_proto_sel/select.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BENCH_DEFAULT_SIZES (1u << 18)      /* cycled; a power of 2 */
#define BENCH_MAX_SIZE      (16ul << 20)    /* 16 MiB */
#define BENCH_SEED          0x5eedf00dcafe1234ull

#define BENCH_TARGET_FAST_NS    10.0
#define BENCH_TARGET_HASHED_NS  30.0
#define BENCH_TARGET_BUILD_US   50.0

#define BENCH_DEFAULT_LOOKUPS   10000000ul
#define BENCH_DEFAULT_REPS      9u
#define BENCH_DEFAULT_BUILDS    2000u

/* Buffer types of a full build: the fast one first, then the hashed ones. */
#define BENCH_NUM_TYPES         4
#define BENCH_NUM_HASHED_TYPES  (BENCH_NUM_TYPES - 1)

typedef struct {
    unsigned      num_sizes; /* pre-generated sizes, cycled; a power of 2 */
    unsigned long lookups;  /* lookups per repetition */
    unsigned      reps;     /* repetitions of the lookup loops */
    unsigned      builds;   /* repetitions of the full build */
} bench_params_t;

typedef struct {
    double median;
    double min;
} bench_stats_t;

typedef struct {
    const char *name;
    void      (*init)(psel_mock_ep_t *ep);
} bench_ep_kind_t;

static const bench_ep_kind_t bench_ep_kinds[] = {
    {"shm", psel_mock_ep_shm},
    {"ib",  psel_mock_ep_ib}
};
#define BENCH_NUM_EP_KINDS \
    ((unsigned)(sizeof(bench_ep_kinds) / sizeof(bench_ep_kinds[0])))

static psel_buffer_type_t bench_types[BENCH_NUM_TYPES];
static const char *const bench_type_names[BENCH_NUM_TYPES] = {
    "contig host sg1", "iov host sg4", "iov host sg8", "generic host"
};

/* Inputs of the lookup loops, cycled: entry i & bench_mask */
static size_t   *bench_sizes;
static uint8_t  *bench_type_idx; /* 1..BENCH_NUM_HASHED_TYPES */
static unsigned  bench_mask;

/* Sink for results, so that the compiler cannot drop a measured loop. */
static volatile unsigned bench_sink;


static double bench_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* splitmix64: a fixed, portable sequence for every run */
static uint64_t bench_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) */
static double bench_rand_unit(uint64_t *state)
{
    return (double)(bench_rand(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* Sizes log-uniform over 0..16 MiB: size + 1 = 2^u, u uniform in
 * [0, log2(16 MiB + 1)]; and a random hashed buffer type per entry. */
static int bench_gen_inputs(unsigned num_sizes)
{
    const double max_exp = log2((double)BENCH_MAX_SIZE + 1.0);
    uint64_t state       = BENCH_SEED;
    size_t size;
    unsigned i;

    bench_sizes    = malloc(num_sizes * sizeof(*bench_sizes));
    bench_type_idx = malloc(num_sizes * sizeof(*bench_type_idx));
    if ((bench_sizes == NULL) || (bench_type_idx == NULL)) {
        return -1;
    }
    bench_mask = num_sizes - 1;
    for (i = 0; i < num_sizes; ++i) {
        size = (size_t)exp2(bench_rand_unit(&state) * max_exp) - 1;
        bench_sizes[i]    = (size > BENCH_MAX_SIZE) ? BENCH_MAX_SIZE : size;
        bench_type_idx[i] = 1 + (uint8_t)(bench_rand(&state) %
                                          BENCH_NUM_HASHED_TYPES);
    }

    bench_types[0] = psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_CONTIG,
                                      UCS_MEMORY_TYPE_HOST, 1);
    bench_types[1] = psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_IOV,
                                      UCS_MEMORY_TYPE_HOST, 4);
    bench_types[2] = psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_IOV,
                                      UCS_MEMORY_TYPE_HOST, 8);
    bench_types[3] = psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_GENERIC,
                                      UCS_MEMORY_TYPE_HOST, 1);
    return 0;
}

static int bench_double_cmp(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

/* Sorts @a samples in place. */
static bench_stats_t bench_stats(double *samples, unsigned count)
{
    bench_stats_t stats;

    qsort(samples, count, sizeof(*samples), bench_double_cmp);
    stats.min    = samples[0];
    stats.median = (count % 2) ? samples[count / 2] :
                   0.5 * (samples[count / 2 - 1] + samples[count / 2]);
    return stats;
}


/* ------------------------------------------------------------------------
 * Lookup loops. noinline keeps each loop a unit of its own, as it would be
 * in a send path, and stops the compiler from merging them.
 */

/* The loop without a lookup: load a size, fold it into the result. */
static __attribute__((noinline)) unsigned
bench_loop_baseline(unsigned long count)
{
    const size_t *sizes = bench_sizes;
    const unsigned mask = bench_mask;
    unsigned acc        = 0;
    unsigned long i;

    for (i = 0; i < count; ++i) {
        acc ^= (unsigned)sizes[i & mask];
    }
    return acc;
}

static __attribute__((noinline)) unsigned
bench_loop_fast(psel_select_t *select, unsigned long count)
{
    const size_t *sizes = bench_sizes;
    const unsigned mask = bench_mask;
    unsigned acc        = 0;
    unsigned long i;

    for (i = 0; i < count; ++i) {
        acc ^= psel_select_lookup_fast(select, PSEL_OP_TAG_SEND,
                                       sizes[i & mask])->proto_index;
    }
    return acc;
}

static __attribute__((noinline)) unsigned
bench_loop_hashed(psel_select_t *select, unsigned long count)
{
    const size_t *sizes      = bench_sizes;
    const uint8_t *type_idx  = bench_type_idx;
    const unsigned mask      = bench_mask;
    unsigned acc             = 0;
    unsigned long i;
    unsigned j;

    for (i = 0; i < count; ++i) {
        j    = i & mask;
        acc ^= psel_select_lookup(select, bench_types[type_idx[j]],
                                  sizes[j])->proto_index;
    }
    return acc;
}

typedef enum {
    BENCH_LOOP_BASELINE,
    BENCH_LOOP_FAST,
    BENCH_LOOP_HASHED
} bench_loop_t;

/* Runs one loop @a reps times; stats of ns per iteration, and the XOR of the
 * accumulated results in @a check_p. */
static bench_stats_t bench_run_loop(bench_loop_t loop, psel_select_t *select,
                                    const bench_params_t *params,
                                    unsigned *check_p)
{
    double samples[params->reps];
    unsigned acc = 0, rep;
    double start;

    /* warm up caches and branch predictors */
    switch (loop) {
    case BENCH_LOOP_BASELINE:
        acc ^= bench_loop_baseline(params->lookups / 10);
        break;
    case BENCH_LOOP_FAST:
        acc ^= bench_loop_fast(select, params->lookups / 10);
        break;
    case BENCH_LOOP_HASHED:
        acc ^= bench_loop_hashed(select, params->lookups / 10);
        break;
    }

    for (rep = 0; rep < params->reps; ++rep) {
        start = bench_now();
        switch (loop) {
        case BENCH_LOOP_BASELINE:
            acc ^= bench_loop_baseline(params->lookups);
            break;
        case BENCH_LOOP_FAST:
            acc ^= bench_loop_fast(select, params->lookups);
            break;
        case BENCH_LOOP_HASHED:
            acc ^= bench_loop_hashed(select, params->lookups);
            break;
        }
        samples[rep] = (bench_now() - start) * 1e9 / (double)params->lookups;
    }

    bench_sink ^= acc;
    *check_p    = acc;
    return bench_stats(samples, params->reps);
}


/* ------------------------------------------------------------------------
 * Output, in the spirit of ucx_perftest: one boxed table.
 */
#define BENCH_RULE "+--------------------------+----------+------------" \
                   "+------------+-------------+-------+------------+"

static void bench_print_header(const char *title)
{
    printf("%s\n", BENCH_RULE);
    printf("| %-96s |\n", title);
    printf("%s\n", BENCH_RULE);
    printf("| %-24s | %-8s | %10s | %10s | %11s | %-5s | %-10s |\n",
           "test", "endpoint", "median", "min", "target", "met", "check");
    printf("%s\n", BENCH_RULE);
}

static void bench_print_row(const char *test, const char *ep,
                            bench_stats_t stats, const char *unit,
                            double target, unsigned check)
{
    char median[32], min[32], tgt[32], chk[16];

    snprintf(median, sizeof(median), "%.2f %s", stats.median, unit);
    snprintf(min, sizeof(min), "%.2f %s", stats.min, unit);
    if (target > 0) {
        snprintf(tgt, sizeof(tgt), "<= %.0f %s", target, unit);
    } else {
        snprintf(tgt, sizeof(tgt), "-");
    }
    snprintf(chk, sizeof(chk), "0x%08x", check);
    printf("| %-24s | %-8s | %10s | %10s | %11s | %-5s | %-10s |\n",
           test, ep, median, min, tgt,
           (target <= 0) ? "-" : (stats.median <= target) ? "yes" : "NO",
           chk);
}


/* ------------------------------------------------------------------------
 * The benchmarks.
 */
static int bench_build_all(psel_select_t *select, const psel_mock_ep_t *ep,
                           const psel_config_t *config)
{
    const psel_select_table_t *table;
    unsigned t;

    if (psel_select_init(select, psel_builtin_protos, psel_num_builtin_protos,
                         &ep->sets, config) != UCS_OK) {
        return -1;
    }
    for (t = 0; t < BENCH_NUM_TYPES; ++t) {
        if (psel_select_build(select, bench_types[t], &table) != UCS_OK) {
            psel_select_cleanup(select);
            return -1;
        }
    }
    return 0;
}

/* Rows of each table: a lookup walks up to that many entries. */
static void bench_print_tables(const psel_config_t *config)
{
    const psel_select_table_t *table;
    psel_select_t select;
    psel_mock_ep_t ep;
    unsigned k, t, r;

    printf("Tables (%u built-in protocols; rows walked by a lookup):\n",
           psel_num_builtin_protos);
    for (k = 0; k < BENCH_NUM_EP_KINDS; ++k) {
        bench_ep_kinds[k].init(&ep);
        if (bench_build_all(&select, &ep, config) != 0) {
            printf("  %-4s  (build failed)\n", bench_ep_kinds[k].name);
            continue;
        }
        for (t = 0; t < BENCH_NUM_TYPES; ++t) {
            psel_select_build(&select, bench_types[t], &table);
            printf("  %-4s %-16s %u row%s:", bench_ep_kinds[k].name,
                   bench_type_names[t], table->count,
                   (table->count == 1) ? " " : "s");
            for (r = 0; r < table->count; ++r) {
                printf(" %s", table->elems[r].proto->name);
            }
            printf("\n");
        }
        psel_select_cleanup(&select);
    }
    printf("\n");
}

static void bench_lookups(const psel_config_t *config,
                          const bench_params_t *params)
{
    char title[128];
    psel_select_t select;
    psel_mock_ep_t ep;
    bench_stats_t stats;
    unsigned check, k;

    snprintf(title, sizeof(title),
             "lookup: ns per lookup, %u x %lu lookups, %u log-uniform sizes "
             "0..16 MiB cycled", params->reps, params->lookups,
             params->num_sizes);
    bench_print_header(title);

    stats = bench_run_loop(BENCH_LOOP_BASELINE, NULL, params, &check);
    bench_print_row("loop only (no lookup)", "-", stats, "ns", 0, check);

    for (k = 0; k < BENCH_NUM_EP_KINDS; ++k) {
        bench_ep_kinds[k].init(&ep);
        if (bench_build_all(&select, &ep, config) != 0) {
            printf("| %-24s | %-8s | %-63s |\n", "lookup",
                   bench_ep_kinds[k].name, "table build failed");
            continue;
        }
        stats = bench_run_loop(BENCH_LOOP_FAST, &select, params, &check);
        bench_print_row("fast (contig host)", bench_ep_kinds[k].name, stats,
                        "ns", BENCH_TARGET_FAST_NS, check);
        stats = bench_run_loop(BENCH_LOOP_HASHED, &select, params, &check);
        bench_print_row("hashed (iov4/iov8/gen)", bench_ep_kinds[k].name,
                        stats, "ns", BENCH_TARGET_HASHED_NS, check);
        psel_select_cleanup(&select);
    }
    printf("%s\n\n", BENCH_RULE);
}

static void bench_builds(const psel_config_t *config,
                         const bench_params_t *params)
{
    double *samples = malloc(params->builds * sizeof(*samples));
    psel_select_t select;
    psel_mock_ep_t ep;
    bench_stats_t stats;
    char title[128];
    unsigned k, i, check;
    double start;

    if (samples == NULL) {
        fprintf(stderr, "bench_select: out of memory\n");
        return;
    }

    snprintf(title, sizeof(title),
             "build: us per init + %u table builds + cleanup, %u times",
             BENCH_NUM_TYPES, params->builds);
    bench_print_header(title);

    for (k = 0; k < BENCH_NUM_EP_KINDS; ++k) {
        bench_ep_kinds[k].init(&ep);
        check = 0;
        /* warm-up build */
        if (bench_build_all(&select, &ep, config) != 0) {
            printf("| %-24s | %-8s | %-63s |\n", "build",
                   bench_ep_kinds[k].name, "table build failed");
            continue;
        }
        psel_select_cleanup(&select);

        for (i = 0; i < params->builds; ++i) {
            start = bench_now();
            bench_build_all(&select, &ep, config);
            check ^= psel_select_lookup_fast(&select, PSEL_OP_TAG_SEND,
                                             bench_sizes[i & bench_mask])
                             ->proto_index;
            psel_select_cleanup(&select);
            samples[i] = (bench_now() - start) * 1e6;
        }
        stats = bench_stats(samples, params->builds);
        bench_print_row("build 6 protos x 4 types", bench_ep_kinds[k].name,
                        stats, "us", BENCH_TARGET_BUILD_US, check);
    }
    printf("%s\n\n", BENCH_RULE);
    free(samples);
}

static void bench_usage(const char *prog)
{
    fprintf(stderr,
            "Usage: %s [-n lookups] [-r repetitions] [-b builds] [-s sizes]\n"
            "  -n  lookups per repetition (default %lu)\n"
            "  -r  repetitions of each lookup loop (default %u)\n"
            "  -b  full builds to time per endpoint (default %u)\n"
            "  -s  pre-generated sizes, cycled; a power of 2 (default %u).\n"
            "      A short cycle (such as 4096) is learnt by the branch\n"
            "      predictor and makes lookups look faster than they are.\n",
            prog, BENCH_DEFAULT_LOOKUPS, BENCH_DEFAULT_REPS,
            BENCH_DEFAULT_BUILDS, BENCH_DEFAULT_SIZES);
}

int main(int argc, char **argv)
{
    bench_params_t params = {BENCH_DEFAULT_SIZES, BENCH_DEFAULT_LOOKUPS,
                             BENCH_DEFAULT_REPS, BENCH_DEFAULT_BUILDS};
    psel_config_t config;
    int c;

    while ((c = getopt(argc, argv, "n:r:b:s:h")) != -1) {
        switch (c) {
        case 'n':
            params.lookups = strtoul(optarg, NULL, 0);
            break;
        case 'r':
            params.reps = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'b':
            params.builds = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 's':
            params.num_sizes = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'h':
            bench_usage(argv[0]);
            return 0;
        default:
            bench_usage(argv[0]);
            return 1;
        }
    }
    if ((params.lookups == 0) || (params.reps == 0) || (params.builds == 0) ||
        (params.num_sizes == 0) ||
        (params.num_sizes & (params.num_sizes - 1))) {
        bench_usage(argv[0]);
        return 1;
    }

    if (psel_config_read(&config) != UCS_OK) {
        fprintf(stderr, "bench_select: bad UCX_PSEL_* setting\n");
        return 1;
    }

    if (bench_gen_inputs(params.num_sizes) != 0) {
        fprintf(stderr, "bench_select: out of memory\n");
        psel_config_release(&config);
        return 1;
    }
    printf("protosel selection engine micro-benchmark\n"
           "targets: fast lookup <= %.0f ns, hashed lookup <= %.0f ns, "
           "full build <= %.0f us (reported, never enforced)\n"
           "UCX_PSEL_* settings from the environment apply.\n\n",
           BENCH_TARGET_FAST_NS, BENCH_TARGET_HASHED_NS,
           BENCH_TARGET_BUILD_US);

    bench_print_tables(&config);
    bench_lookups(&config, &params);
    bench_builds(&config, &params);

    psel_config_release(&config);
    free(bench_type_idx);
    free(bench_sizes);
    return 0;
}
