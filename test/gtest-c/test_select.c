/*
 * Unit tests of the selection engine: the seed formula, golden tables of mock
 * protocols under every override, brute-force agreement of lookups, stability
 * of the rendezvous bias, and rejection of bad configuration.
 */
#include "mock_lanes.h"
#include "test_util.h"

#include <ucp_proto_sel/calib.h>
#include <ucp_proto_sel/dump.h>
#include <ucp_proto_sel/proto_common.h>
#include <ucp_proto_sel/select.h>
#include <ucs/sys/math.h>
#include <ucs/sys/string.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define US 1e-6
#define NS 1e-9

static const char *psel_env_vars[] = {
    "UCX_PSEL_PROTOS", "UCX_PSEL_RNDV_THRESH", "UCX_PSEL_ZCOPY_THRESH",
    "UCX_PSEL_RNDV_PERF_DIFF", "UCX_PSEL_PROTO_INFO", "UCX_PSEL_SELECT_PERF",
    "UCX_PSEL_MAX_RNDV_LANES", "UCX_PSEL_MAX_EAGER_LANES",
    "UCX_PSEL_MULTI_LANE_MAX_RATIO", "UCX_PSEL_BCOPY_BW", "UCX_PSEL_TLS",
    "UCX_PSEL_RCACHE_OVERHEAD", "UCX_PSEL_RX_SLIP", "UCX_PSEL_SWITCH_MARGIN",
    NULL
};

/* Read the config with the given "NAME=value" settings (NULL-terminated).
 * The switch margin is 0 unless a setting names it: these tests check the
 * exact crossings of the lines (the margin's tests set it) */
static ucs_status_t read_config(psel_config_t *config, ...)
{
    const char *setting;
    char name[128];
    const char **var;
    ucs_status_t status;
    va_list ap;

    for (var = psel_env_vars; *var != NULL; ++var) {
        unsetenv(*var);
    }
    setenv("UCX_PSEL_SWITCH_MARGIN", "0", 1);
    va_start(ap, config);
    while ((setting = va_arg(ap, const char*)) != NULL) {
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(setting, "="),
                 setting);
        setenv(name, strchr(setting, '=') + 1, 1);
    }
    va_end(ap);
    status = psel_config_read(config);
    for (var = psel_env_vars; *var != NULL; ++var) {
        unsetenv(*var);
    }
    return status;
}

/* ------------------------------------------------------------------------
 * Mock protocols: cost lines given directly, in us and ns/B.
 */
typedef struct {
    size_t   max;
    double   c_us, m_ns;
} mock_range_t;

typedef enum { MOCK_AUTO, MOCK_ZCOPY, MOCK_RNDV } mock_kind_t;

typedef struct {
    size_t       min_length;
    unsigned     num_ranges;
    mock_range_t ranges[PSEL_PROTO_MAX_RANGES];
    mock_kind_t  kind;
    const char  *unsupported; /* reason, or NULL */
} mock_def_t;

#define MOCK_MAX 8
static mock_def_t mock_defs[MOCK_MAX];
static unsigned mock_init_calls; /* protocol inits run, all mocks */

static ucs_status_t mock_init(unsigned i, const psel_proto_init_params_t *params,
                              psel_proto_caps_t *caps)
{
    const mock_def_t *def = &mock_defs[i];
    ucs_status_t status;
    unsigned r;

    ++mock_init_calls;
    if (def->unsupported != NULL) {
        return psel_proto_unsupported(caps, "%s", def->unsupported);
    }
    if (def->kind == MOCK_ZCOPY) {
        status = psel_proto_apply_thresh(params->config->zcopy_thresh,
                                         "UCX_PSEL_ZCOPY_THRESH", 1, caps);
    } else if (def->kind == MOCK_RNDV) {
        status = psel_proto_apply_thresh(params->config->rndv_thresh,
                                         "UCX_PSEL_RNDV_THRESH", 2, caps);
        caps->flags |= PSEL_PROTO_CAP_RNDV_BIAS;
    } else {
        status = UCS_OK;
    }
    if (status != UCS_OK) {
        return status;
    }

    caps->min_length = def->min_length;
    caps->num_ranges = def->num_ranges;
    for (r = 0; r < def->num_ranges; ++r) {
        caps->ranges[r].max_length = def->ranges[r].max;
        caps->ranges[r].perf[PSEL_PERF_SINGLE] =
                ucs_linear_func_make(def->ranges[r].c_us * US,
                                     def->ranges[r].m_ns * NS);
        caps->ranges[r].perf[PSEL_PERF_MULTI] =
                caps->ranges[r].perf[PSEL_PERF_SINGLE];
    }
    snprintf(caps->desc, sizeof(caps->desc), "mock/lane%u", i);
    return UCS_OK;
}

#define MOCK_INIT(_i) \
    static ucs_status_t mock_init_##_i(const psel_proto_init_params_t *params, \
                                       psel_proto_caps_t *caps) \
    { \
        return mock_init(_i, params, caps); \
    }
MOCK_INIT(0) MOCK_INIT(1) MOCK_INIT(2) MOCK_INIT(3)
MOCK_INIT(4) MOCK_INIT(5) MOCK_INIT(6) MOCK_INIT(7)

static const psel_proto_t mock_protos_storage[MOCK_MAX] = {
    {"mock/a", "mock a", UCS_BIT(PSEL_OP_TAG_SEND), 0, mock_init_0, NULL},
    {"mock/b", "mock b", UCS_BIT(PSEL_OP_TAG_SEND), 0, mock_init_1, NULL},
    {"mock/c", "mock c", UCS_BIT(PSEL_OP_TAG_SEND), 0, mock_init_2, NULL},
    {"mock/d", "mock d", UCS_BIT(PSEL_OP_TAG_SEND), 0, mock_init_3, NULL},
    {"mock/e", "mock e", UCS_BIT(PSEL_OP_TAG_SEND), 0, mock_init_4, NULL},
    {"mock/f", "mock f", UCS_BIT(PSEL_OP_TAG_SEND), 0, mock_init_5, NULL},
    {"mock/g", "mock g", UCS_BIT(PSEL_OP_TAG_SEND), 0, mock_init_6, NULL},
    {"mock/h", "mock h", UCS_BIT(PSEL_OP_TAG_SEND), 0, mock_init_7, NULL},
};

static const psel_proto_t *const mock_protos[MOCK_MAX] = {
    &mock_protos_storage[0], &mock_protos_storage[1], &mock_protos_storage[2],
    &mock_protos_storage[3], &mock_protos_storage[4], &mock_protos_storage[5],
    &mock_protos_storage[6], &mock_protos_storage[7]
};

static const psel_lane_sets_t no_lanes;

static psel_buffer_type_t contig_host(void)
{
    return psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_CONTIG,
                            UCS_MEMORY_TYPE_HOST, 1);
}

/* Expected row: last size and protocol name. */
typedef struct {
    size_t      end;
    const char *proto;
} golden_row_t;

#define GOLDEN_END {0, NULL}

static void assert_table(const psel_select_table_t *table,
                         const golden_row_t *expected)
{
    unsigned i, n;

    for (n = 0; expected[n].proto != NULL; ++n) {
    }
    if (table->count != n) {
        print_error("expected %u rows, got %u\n", n, table->count);
    }
    for (i = 0; (i < n) && (i < table->count); ++i) {
        if ((table->elems[i].max_length != expected[i].end) ||
            strcmp(table->elems[i].proto->name, expected[i].proto)) {
            print_error("row %u: expected ..%zu %s, got ..%zu %s\n", i,
                        expected[i].end, expected[i].proto,
                        table->elems[i].max_length,
                        table->elems[i].proto->name);
            fail();
        }
    }
    assert_int_equal(table->count, n);
    assert_true(table->elems[table->count - 1].max_length == SIZE_MAX);
}

/*
 * The golden mock set (costs in us + ns/B):
 *   a: 0..100           1 + 1.0x
 *   b: 0..1000          2 + 0.5x,  1001..inf 2 + 0.7x
 *   d: 64..inf          3 + 0.33x  (eager zcopy class: UCX_PSEL_ZCOPY_THRESH)
 *   c: 0..inf          10 + 0.1x   (rendezvous class, bias applies)
 * Hand-derived crossings: a beats everything up to its max 100; b beats d
 * on 0..1000 (they would cross at 5882) and loses to it at 1/0.00037 =
 * 2702.7; d and c cross at 7/0.00023 = 30434.8, or with d=0.99 at
 * 6.9/0.000231 = 29870.1; b and c cross at 8/0.0006 = 13333.3, or biased
 * at 7.9/0.000601 = 13144.8.
 */
static void golden_setup(void)
{
    memset(mock_defs, 0, sizeof(mock_defs));
    mock_defs[0] = (mock_def_t){0, 1, {{100, 1, 1.0}}, MOCK_AUTO, NULL};
    mock_defs[1] = (mock_def_t){0, 2, {{1000, 2, 0.5}, {SIZE_MAX, 2, 0.7}},
                                MOCK_AUTO, NULL};
    mock_defs[2] = (mock_def_t){0, 1, {{SIZE_MAX, 10, 0.1}}, MOCK_RNDV, NULL};
    mock_defs[3] = (mock_def_t){64, 1, {{SIZE_MAX, 3, 0.33}}, MOCK_ZCOPY,
                                NULL};
}

/* Build the table of the mocks 0..n-1 with up to three settings (a NULL
 * ends them); checks it */
static void check_table(unsigned n, const char *const *settings,
                        const golden_row_t *expected)
{
    const psel_select_table_t *table;
    psel_config_t config;
    psel_select_t select;

    assert_int_equal(read_config(&config, settings[0],
                                 settings[0] ? settings[1] : NULL,
                                 (settings[0] && settings[1]) ? settings[2] :
                                                                NULL,
                                 NULL), UCS_OK);
    assert_int_equal(psel_select_init(&select, mock_protos, n, &no_lanes,
                                      &config), UCS_OK);
    assert_int_equal(psel_select_build(&select, contig_host(), &table),
                     UCS_OK);
    assert_table(table, expected);
    psel_select_cleanup(&select);
    psel_config_release(&config);
}

/* The four golden mocks with the settings given (NULL-terminated) */
static void check_golden(const golden_row_t *expected, ...)
{
    const char *settings[4] = {NULL};
    const char *setting;
    unsigned n = 0;
    va_list ap;

    va_start(ap, expected);
    while (((setting = va_arg(ap, const char*)) != NULL) && (n < 3)) {
        settings[n++] = setting;
    }
    va_end(ap);
    golden_setup();
    check_table(4, settings, expected);
}

static void test_golden_auto(void **state)
{
    const golden_row_t expected[] = {
        {100, "mock/a"}, {2702, "mock/b"}, {29870, "mock/d"},
        {SIZE_MAX, "mock/c"}, GOLDEN_END
    };
    check_golden(expected, NULL);
}

static void test_golden_no_bias(void **state)
{
    const golden_row_t expected[] = {
        {100, "mock/a"}, {2702, "mock/b"}, {30434, "mock/d"},
        {SIZE_MAX, "mock/c"}, GOLDEN_END
    };
    check_golden(expected, "UCX_PSEL_RNDV_PERF_DIFF=0", NULL);
}

static void test_golden_rndv_thresh(void **state)
{
    /* rendezvous forced from 8K: the eager classes drop out there */
    const golden_row_t expected[] = {
        {100, "mock/a"}, {2702, "mock/b"}, {8191, "mock/d"},
        {SIZE_MAX, "mock/c"}, GOLDEN_END
    };
    check_golden(expected, "UCX_PSEL_RNDV_THRESH=8k", NULL);
}

static void test_golden_rndv_thresh_high(void **state)
{
    /* disabled below 64K, so d keeps the range where c would have won */
    const golden_row_t expected[] = {
        {100, "mock/a"}, {2702, "mock/b"}, {65535, "mock/d"},
        {SIZE_MAX, "mock/c"}, GOLDEN_END
    };
    check_golden(expected, "UCX_PSEL_RNDV_THRESH=64k", NULL);
}

static void test_golden_rndv_inf(void **state)
{
    const golden_row_t expected[] = {
        {100, "mock/a"}, {2702, "mock/b"}, {SIZE_MAX, "mock/d"}, GOLDEN_END
    };
    check_golden(expected, "UCX_PSEL_RNDV_THRESH=inf", NULL);
}

static void test_golden_zcopy_thresh(void **state)
{
    /* d disabled below 16K: b meets c at 13144 (biased); from 16K the
     * copy class drops out and d, c compete by cost again */
    const golden_row_t expected[] = {
        {100, "mock/a"}, {13144, "mock/b"}, {16383, "mock/c"},
        {29870, "mock/d"}, {SIZE_MAX, "mock/c"}, GOLDEN_END
    };
    check_golden(expected, "UCX_PSEL_ZCOPY_THRESH=16k", NULL);
}

static void test_golden_zcopy_thresh_low(void **state)
{
    /* forced from 128: a keeps only 0..127 of its range... but a ends at
     * 100, b is dropped from 128 on, d takes over */
    const golden_row_t expected[] = {
        {100, "mock/a"}, {127, "mock/b"}, {29870, "mock/d"},
        {SIZE_MAX, "mock/c"}, GOLDEN_END
    };
    check_golden(expected, "UCX_PSEL_ZCOPY_THRESH=128", NULL);
}

static void test_golden_deny_list(void **state)
{
    const golden_row_t expected[] = {
        {100, "mock/a"}, {13144, "mock/b"}, {SIZE_MAX, "mock/c"}, GOLDEN_END
    };
    check_golden(expected, "UCX_PSEL_PROTOS=^mock/d", NULL);
}

static void test_golden_glob(void **state)
{
    const golden_row_t expected[] = {
        {13144, "mock/b"}, {SIZE_MAX, "mock/c"}, GOLDEN_END
    };
    check_golden(expected, "UCX_PSEL_PROTOS=mock/[bc]", NULL);
}

static void test_golden_uncovered(void **state)
{
    const psel_select_table_t *table;
    psel_config_t config;
    psel_select_t select;

    golden_setup();
    mock_defs[2].unsupported = "no rma_bw lane";
    assert_int_equal(read_config(&config, "UCX_PSEL_PROTOS=mock/a,mock/c", NULL),
                     UCS_OK);
    assert_int_equal(psel_select_init(&select, mock_protos, 4, &no_lanes,
                                      &config), UCS_OK);
    psel_test_log_capture_start();
    assert_int_equal(psel_select_build(&select, contig_host(), &table),
                     UCS_ERR_UNSUPPORTED);
    psel_test_log_capture_stop();
    psel_assert_log_contains("no protocol for tag send, contig host memory "
                             "at sizes 101..inf");
    psel_assert_log_contains("mock/a (sizes 0..100)");
    psel_assert_log_contains("mock/b (disabled by UCX_PSEL_PROTOS)");
    psel_assert_log_contains("mock/c (not applicable: no rma_bw lane)");
    /* the lookup reports the failure instead of crashing */
    psel_test_log_capture_start();
    assert_null(psel_select_lookup_fast(&select, PSEL_OP_TAG_SEND, 5000));
    psel_test_log_capture_stop();
    psel_select_cleanup(&select);
    psel_config_release(&config);
}

static void test_golden_uncovered_gap(void **state)
{
    const psel_select_table_t *table;
    psel_config_t config;
    psel_select_t select;

    /* a gap in the middle: a ends at 100, d starts at 64k */
    golden_setup();
    mock_defs[3].min_length = 65536;
    assert_int_equal(read_config(&config, "UCX_PSEL_PROTOS=mock/a,mock/d",
                                 NULL), UCS_OK);
    assert_int_equal(psel_select_init(&select, mock_protos, 4, &no_lanes,
                                      &config), UCS_OK);
    psel_test_log_capture_start();
    assert_int_equal(psel_select_build(&select, contig_host(), &table),
                     UCS_ERR_UNSUPPORTED);
    psel_test_log_capture_stop();
    psel_assert_log_contains("at sizes 101..65535:");
    psel_select_cleanup(&select);
    psel_config_release(&config);
}

/* ------------------------------------------------------------------------
 * Brute force: for random protocol sets, every lookup equals the minimum
 * over all protocols, evaluated with the engine's own cost and tie rules.
 */
static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double rnd_uniform(double lo, double hi)
{
    return lo + (hi - lo) * ((double)(rnd() >> 11) / (double)(1ull << 53));
}

static size_t rnd_size(void)
{
    /* log-uniform up to 2^40, with a bias to small sizes */
    return (size_t)exp2(rnd_uniform(0, 40)) - 1;
}

static void random_mock_set(unsigned n)
{
    unsigned i, r;
    size_t max;

    memset(mock_defs, 0, sizeof(mock_defs));
    for (i = 0; i < n; ++i) {
        mock_defs[i].min_length = (i == 0) ? 0 :
                                  ((rnd() % 3 == 0) ? rnd_size() : 0);
        mock_defs[i].num_ranges = 1 + rnd() % PSEL_PROTO_MAX_RANGES;
        max                     = mock_defs[i].min_length;
        for (r = 0; r < mock_defs[i].num_ranges; ++r) {
            max += 1 + rnd_size();
            mock_defs[i].ranges[r].max  = max;
            mock_defs[i].ranges[r].c_us = rnd_uniform(0, 50);
            mock_defs[i].ranges[r].m_ns = rnd_uniform(0, 2);
        }
        if ((i == 0) || (rnd() % 2)) {
            mock_defs[i].ranges[mock_defs[i].num_ranges - 1].max = SIZE_MAX;
        }
        mock_defs[i].kind = (rnd() % 4 == 0) ? MOCK_RNDV : MOCK_AUTO;
    }
}

static unsigned brute_force(const psel_select_t *select,
                            const psel_select_table_t *table, size_t x)
{
    unsigned i, best = UINT_MAX;
    double cost, best_cost = 0, slope, best_slope = 0;

    for (i = 0; i < table->num_protos; ++i) {
        if ((table->status[i] != UCS_OK) ||
            (psel_proto_caps_range(&table->caps[i], x) == NULL)) {
            continue;
        }
        cost  = psel_select_cost(select, &table->caps[i], x, 0);
        slope = psel_proto_caps_range(&table->caps[i], x)->perf[0].m;
        if ((best == UINT_MAX) || (cost < best_cost) ||
            ((cost == best_cost) && (slope < best_slope))) {
            best       = i;
            best_cost  = cost;
            best_slope = slope;
        }
    }
    return best;
}

static void test_brute_force(void **state)
{
    const psel_select_table_t *table;
    const psel_select_elem_t *elem;
    psel_config_t config;
    psel_select_t select;
    unsigned set, k, n, expected, checked = 0;
    size_t x, row_start;

    assert_int_equal(read_config(&config, "UCX_PSEL_RNDV_PERF_DIFF=0", NULL),
                     UCS_OK);
    for (set = 0; set < 300; ++set) {
        n = 1 + rnd() % MOCK_MAX;
        random_mock_set(n);
        assert_int_equal(psel_select_init(&select, mock_protos, n, &no_lanes,
                                          &config), UCS_OK);
        assert_int_equal(psel_select_build(&select, contig_host(), &table),
                         UCS_OK);
        for (k = 0; k < 2000; ++k) {
            /* random sizes, and sizes on both sides of every boundary */
            if (k < 2 * table->count) {
                row_start = (k / 2 == 0) ? 0 :
                            table->elems[k / 2 - 1].max_length + 1;
                x = (k % 2) ? table->elems[k / 2].max_length : row_start;
                if (x == SIZE_MAX) {
                    x = row_start;
                }
            } else {
                x = rnd_size();
            }
            elem     = psel_select_lookup(&select, contig_host(), x);
            expected = brute_force(&select, table, x);
            if (elem->proto_index != expected) {
                print_error("set %u size %zu: lookup %s, brute force %s\n",
                            set, x, elem->proto->name,
                            mock_protos[expected]->name);
                psel_select_dump(stderr, &select, table, "failed", 
                                 PSEL_DUMP_EXPLAIN);
                fail();
            }
            ++checked;
        }
        /* a protocol that never wins does not appear, rows alternate */
        for (k = 1; k < table->count; ++k) {
            assert_int_not_equal(table->elems[k].proto_index,
                                 table->elems[k - 1].proto_index);
        }
        psel_select_cleanup(&select);
    }
    assert_true(checked == 300 * 2000);
    psel_config_release(&config);
}

/* The mocks 0..n-1 with exact crossings (no rendezvous bias) and one
 * setting */
static void check_mocks(unsigned n, const char *setting,
                        const golden_row_t *expected)
{
    const char *settings[] = {"UCX_PSEL_RNDV_PERF_DIFF=0", setting, NULL};

    check_table(n, settings, expected);
}

/*
 * Lines that tie within the margin do not make the table alternate. a, as
 * measured eager short (us + ns/B): 0..64 10 + 2x, 65..128 10.2 + 2x,
 * 129..909 9.9 + 2x, 910..8160 10.2 + 2x; b, eager bcopy: 10.05 + 2x on
 * 0..inf. Without a margin b takes 65..128 and 910..8160, where it is
 * cheaper by 1.5% (three boundaries); with the 2% margin a keeps its
 * sizes, and b serves from 8161, where a ends (one boundary).
 */
static void test_margin_tie_keeps(void **state)
{
    const golden_row_t exact[]  = {
        {64, "mock/a"}, {128, "mock/b"}, {909, "mock/a"}, {SIZE_MAX, "mock/b"},
        GOLDEN_END
    };
    const golden_row_t margin[] = {
        {8160, "mock/a"}, {SIZE_MAX, "mock/b"}, GOLDEN_END
    };

    memset(mock_defs, 0, sizeof(mock_defs));
    mock_defs[0] = (mock_def_t){0, 4, {{64, 10, 0.002}, {128, 10.2, 0.002},
                                       {909, 9.9, 0.002}, {8160, 10.2, 0.002}},
                                MOCK_AUTO, NULL};
    mock_defs[1] = (mock_def_t){0, 1, {{SIZE_MAX, 10.05, 0.002}}, MOCK_AUTO,
                                NULL};
    check_mocks(2, "UCX_PSEL_SWITCH_MARGIN=0", exact);
    check_mocks(2, "UCX_PSEL_SWITCH_MARGIN=2", margin);
}

/*
 * Lines that differ by more than the margin still switch, where the later
 * one costs less than (1 - margin) times the first. a = 1 + 1.0x, b = 5 +
 * 0.4x (us + ns/B): they cross at 4 / 0.0006 = 6666.7 B; with 2%, b wins
 * where 5 + 0.0004x < 0.98 (1 + 0.001x), x > 4.02 / 0.00058 = 6931.03 B;
 * with 12%, x > 4.12 / 0.00048 = 8583.3 B.
 */
static void test_margin_switches_beyond(void **state)
{
    const golden_row_t exact[] = {
        {6666, "mock/a"}, {SIZE_MAX, "mock/b"}, GOLDEN_END
    };
    const golden_row_t two[]   = {
        {6931, "mock/a"}, {SIZE_MAX, "mock/b"}, GOLDEN_END
    };
    const golden_row_t twelve[] = {
        {8583, "mock/a"}, {SIZE_MAX, "mock/b"}, GOLDEN_END
    };

    memset(mock_defs, 0, sizeof(mock_defs));
    mock_defs[0] = (mock_def_t){0, 1, {{SIZE_MAX, 1, 1.0}}, MOCK_AUTO, NULL};
    mock_defs[1] = (mock_def_t){0, 1, {{SIZE_MAX, 5, 0.4}}, MOCK_AUTO, NULL};
    check_mocks(2, "UCX_PSEL_SWITCH_MARGIN=0", exact);
    check_mocks(2, "UCX_PSEL_SWITCH_MARGIN=2", two);
    check_mocks(2, "UCX_PSEL_SWITCH_MARGIN=12%", twelve);
}

/* Both dumps name a boundary the margin moved, the JSON by its reason */
static void test_margin_dump_reason(void **state)
{
    const psel_select_table_t *table;
    psel_config_t config;
    psel_select_t select;
    char *buf = NULL;
    size_t len = 0;
    FILE *stream;

    memset(mock_defs, 0, sizeof(mock_defs));
    mock_defs[0] = (mock_def_t){0, 1, {{SIZE_MAX, 1, 1.0}}, MOCK_AUTO, NULL};
    mock_defs[1] = (mock_def_t){0, 1, {{SIZE_MAX, 5, 0.4}}, MOCK_AUTO, NULL};
    assert_int_equal(read_config(&config, "UCX_PSEL_RNDV_PERF_DIFF=0",
                                 "UCX_PSEL_SWITCH_MARGIN=2", NULL), UCS_OK);
    assert_int_equal(psel_select_init(&select, mock_protos, 2, &no_lanes,
                                      &config), UCS_OK);
    assert_int_equal(psel_select_build(&select, contig_host(), &table),
                     UCS_OK);

    stream = open_memstream(&buf, &len);
    psel_select_dump(stream, &select, table, "ep_cfg[0]", PSEL_DUMP_EXPLAIN);
    fclose(stream);
    assert_non_null(strstr(buf, "at 6932: mock/a -> mock/b: cost lines cross "
                                "at 6666.7 bytes; mock/b is cheaper than "
                                "mock/a by the 2.0% switch margin"));
    free(buf);

    stream = open_memstream(&buf, &len);
    psel_select_dump_json(stream, &select, table, "ep_cfg[0]");
    fclose(stream);
    assert_non_null(strstr(buf, "{\"at\": 6932, \"reason\": \"switch margin\""));
    free(buf);

    psel_select_cleanup(&select);
    psel_config_release(&config);
}

/*
 * Where the candidates change (the start, a protocol's end), the natural
 * order decides within the margin: a = 1 + 1.00x and b = 1 + 0.99x from 0
 * (b 1% cheaper per byte, the same at 0) is all a's with 2%; and it stays
 * a's until b is 2% cheaper: 1 + 0.00099x < 0.98 + 0.00098x never, as the
 * slopes are within 2% too: a to the end.
 */
static void test_margin_natural_order(void **state)
{
    const golden_row_t exact[]  = {{SIZE_MAX, "mock/b"}, GOLDEN_END};
    const golden_row_t margin[] = {{SIZE_MAX, "mock/a"}, GOLDEN_END};

    memset(mock_defs, 0, sizeof(mock_defs));
    mock_defs[0] = (mock_def_t){0, 1, {{SIZE_MAX, 1, 1.0}}, MOCK_AUTO, NULL};
    mock_defs[1] = (mock_def_t){0, 1, {{SIZE_MAX, 1, 0.99}}, MOCK_AUTO, NULL};
    check_mocks(2, "UCX_PSEL_SWITCH_MARGIN=0", exact);
    check_mocks(2, "UCX_PSEL_SWITCH_MARGIN=2", margin);
}

/* "auto": twice the run spread a calibration recorded, within 1%..25%; 2%
 * on attribute lines; a set value as it is */
static void test_margin_auto(void **state)
{
    psel_calib_t *calib = calloc(1, sizeof(*calib));
    psel_config_t config;
    psel_select_t select;

    assert_non_null(calib);
    assert_int_equal(read_config(&config, "UCX_PSEL_SWITCH_MARGIN=auto",
                                 NULL), UCS_OK);
    memset(&select, 0, sizeof(select));
    select.config = &config;
    assert_true(fabs(psel_select_switch_margin(&select) - 0.02) < 1e-12);
    select.calib = calib;   /* a file of format 1: no noise line */
    assert_true(fabs(psel_select_switch_margin(&select) - 0.02) < 1e-12);
    calib->has_noise    = 1;
    calib->noise.spread = 0.03;
    assert_true(fabs(psel_select_switch_margin(&select) - 0.06) < 1e-12);
    calib->noise.spread = 0.001;
    assert_true(fabs(psel_select_switch_margin(&select) - 0.01) < 1e-12);
    calib->noise.spread = 0.4;
    assert_true(fabs(psel_select_switch_margin(&select) - 0.25) < 1e-12);
    psel_config_release(&config);

    assert_int_equal(read_config(&config, "UCX_PSEL_SWITCH_MARGIN=3.5",
                                 NULL), UCS_OK);
    select.config = &config;
    assert_true(fabs(psel_select_switch_margin(&select) - 0.035) < 1e-12);
    psel_config_release(&config);
    free(calib);
}

/*
 * Two protocols whose cost lines are the same but for rounding (a peer's
 * attributes come as f32 in its address): the first of the list takes
 * every size, as it does when the lines are equal, where the exact
 * comparison let the second win below their crossing near 48 KiB.
 */
static void test_same_line_rounded_ties(void **state)
{
    const double c_us = 2.48, m_ns = 0.0856;
    const psel_select_table_t *table;
    psel_config_t config;
    psel_select_t select;
    unsigned i;

    assert_int_equal(read_config(&config, "UCX_PSEL_RNDV_PERF_DIFF=0", NULL),
                     UCS_OK);
    memset(mock_defs, 0, sizeof(mock_defs));
    for (i = 0; i < 2; ++i) {
        mock_defs[i].num_ranges    = 1;
        mock_defs[i].ranges[0].max = SIZE_MAX;
        mock_defs[i].kind          = MOCK_AUTO;
    }
    mock_defs[0].ranges[0].c_us = c_us;
    mock_defs[0].ranges[0].m_ns = m_ns;
    /* the second: 3e-8 cheaper to start with, 3e-8 steeper */
    mock_defs[1].ranges[0].c_us = c_us * (1 - 3e-8);
    mock_defs[1].ranges[0].m_ns = m_ns * (1 + 3e-8);

    assert_int_equal(psel_select_init(&select, mock_protos, 2, &no_lanes,
                                      &config), UCS_OK);
    assert_int_equal(psel_select_build(&select, contig_host(), &table),
                     UCS_OK);
    assert_int_equal(table->count, 1);
    assert_int_equal(table->elems[0].proto_index, 0);
    assert_true(table->elems[0].max_length == SIZE_MAX);
    psel_select_cleanup(&select);

    /* 1e-4 apart, they are two lines: the second wins up to the crossing */
    mock_defs[1].ranges[0].c_us = c_us * (1 - 1e-4);
    mock_defs[1].ranges[0].m_ns = m_ns * (1 + 1e-4);
    assert_int_equal(psel_select_init(&select, mock_protos, 2, &no_lanes,
                                      &config), UCS_OK);
    assert_int_equal(psel_select_build(&select, contig_host(), &table),
                     UCS_OK);
    assert_int_equal(table->count, 2);
    assert_int_equal(table->elems[0].proto_index, 1);
    assert_int_equal(table->elems[1].proto_index, 0);
    psel_select_cleanup(&select);
    psel_config_release(&config);
}

/* The same rows, protocols, caps and statuses */
static void assert_tables_equal(const psel_select_table_t *a,
                                const psel_select_table_t *b)
{
    unsigned i;

    assert_int_equal(a->count, b->count);
    for (i = 0; i < a->count; ++i) {
        assert_true(a->elems[i].max_length == b->elems[i].max_length);
        assert_int_equal(a->elems[i].proto_index, b->elems[i].proto_index);
    }
    assert_int_equal(a->num_protos, b->num_protos);
    for (i = 0; i < a->num_protos; ++i) {
        assert_int_equal(a->status[i], b->status[i]);
        assert_string_equal(a->caps[i].desc, b->caps[i].desc);
        if (a->status[i] == UCS_OK) {
            assert_int_equal(a->caps[i].num_ranges, b->caps[i].num_ranges);
            assert_memory_equal(a->caps[i].ranges, b->caps[i].ranges,
                                a->caps[i].num_ranges *
                                sizeof(a->caps[i].ranges[0]));
        }
    }
}

/* @a shared (caps_from set) builds the table @a alone builds, or fails as
 * it does (a gap only a protocol left out covered); with @a copies_all, no
 * protocol init runs for it. Both are cleaned up. */
static void assert_shared_as_alone(psel_select_t *shared,
                                   psel_select_t *alone, int copies_all)
{
    const psel_select_table_t *shared_table, *alone_table;
    unsigned calls = mock_init_calls;

    if (psel_select_build(shared, contig_host(), &shared_table) == UCS_OK) {
        if (copies_all) {
            assert_int_equal(mock_init_calls, calls);
        }
        calls = mock_init_calls;
        assert_int_equal(psel_select_build(alone, contig_host(),
                                           &alone_table), UCS_OK);
        if (copies_all) { /* the inits it saved */
            assert_int_equal(mock_init_calls, calls + alone->num_protos);
        }
        assert_tables_equal(shared_table, alone_table);
    } else {
        assert_int_not_equal(psel_select_build(alone, contig_host(),
                                               &alone_table), UCS_OK);
    }
    psel_select_cleanup(shared);
    psel_select_cleanup(alone);
}

/*
 * select->caps_from: a selection over a subset of the protocols (and one on
 * the other select_perf) copies the caps of the full one, running no init,
 * and builds the tables it builds alone; a source whose allow-list verdict
 * differs, or over other lanes, is not copied from.
 */
static void test_caps_shared(void **state)
{
    const psel_select_table_t *full, *shared;
    psel_config_t config, multi, deny;
    psel_select_t all, sub, sub_alone, other;
    psel_lane_sets_t other_lanes;
    unsigned set, n, calls;

    assert_int_equal(read_config(&config, "UCX_PSEL_RNDV_PERF_DIFF=0", NULL),
                     UCS_OK);
    assert_int_equal(read_config(&multi, "UCX_PSEL_RNDV_PERF_DIFF=0",
                                 "UCX_PSEL_SELECT_PERF=multi", NULL), UCS_OK);
    assert_int_equal(read_config(&deny, "UCX_PSEL_RNDV_PERF_DIFF=0",
                                 "UCX_PSEL_PROTOS=^mock/c", NULL), UCS_OK);
    memset(&other_lanes, 0, sizeof(other_lanes));
    for (set = 0; set < 100; ++set) {
        n = 2 + rnd() % (MOCK_MAX - 1);
        random_mock_set(n);
        assert_int_equal(psel_select_init(&all, mock_protos, n, &no_lanes,
                                          &config), UCS_OK);
        assert_int_equal(psel_select_build(&all, contig_host(), &full),
                         UCS_OK);

        /* the last n - 1 protocols, on both select_perf: no init at all */
        assert_int_equal(psel_select_init(&sub, mock_protos + 1, n - 1,
                                          &no_lanes, (set % 2) ? &multi :
                                          &config), UCS_OK);
        assert_int_equal(psel_select_init(&sub_alone, mock_protos + 1, n - 1,
                                          &no_lanes, (set % 2) ? &multi :
                                          &config), UCS_OK);
        sub.caps_from = &all;
        assert_shared_as_alone(&sub, &sub_alone, 1);

        /* mock/c denied here, allowed in the source: its own init runs */
        assert_int_equal(psel_select_init(&sub, mock_protos, n, &no_lanes,
                                          &deny), UCS_OK);
        assert_int_equal(psel_select_init(&sub_alone, mock_protos, n,
                                          &no_lanes, &deny), UCS_OK);
        sub.caps_from = &all;
        assert_shared_as_alone(&sub, &sub_alone, 0);

        /* other lanes: every init runs again */
        assert_int_equal(psel_select_init(&other, mock_protos, n,
                                          &other_lanes, &config), UCS_OK);
        other.caps_from = &all;
        calls           = mock_init_calls;
        assert_int_equal(psel_select_build(&other, contig_host(), &shared),
                         UCS_OK);
        assert_int_equal(mock_init_calls, calls + n);
        assert_tables_equal(shared, full);
        psel_select_cleanup(&other);
        psel_select_cleanup(&all);
    }
    psel_config_release(&deny);
    psel_config_release(&multi);
    psel_config_release(&config);
}

/* ------------------------------------------------------------------------
 * Seed formula: eager zcopy against rendezvous, through the real built-in
 * protocols, against the closed form
 *   etime = ecost + x·egro + x/ebw + eover
 *   rtime = d·((1+rrc)(rcost + x·rgro) + 4·rlat + 3·rover + x/rbw)
 * and the bounded bias of select.h: the biased crossing, but no lower than
 * half the unbiased one.
 */
typedef struct {
    double c_e, m_e, c_r, m_r;
} seed_lines_t;

/*
 * A random endpoint: an am lane for control, and data lanes. For rndv/get
 * (rrc=1) eager uses up to 2 am_bw lanes and rendezvous up to 3 separate
 * rma_bw lanes. For rndv/am (rrc=0) both use the same am_bw lanes, eager one
 * and rendezvous up to 3, as UCX's default lane counts do.
 */
static void seed_random_ep(psel_mock_ep_t *ep, psel_config_t *config,
                           seed_lines_t *lines, unsigned rrc)
{
    const uint32_t caps = PSEL_LANE_CAP_AM_SHORT | PSEL_LANE_CAP_AM_BCOPY |
                          PSEL_LANE_CAP_AM_ZCOPY | PSEL_LANE_CAP_GET_ZCOPY |
                          PSEL_LANE_CAP_MEM_REG;
    unsigned i, num_lanes, num_eager, first_rndv, role_mask;
    double ecost = 0, egro = 0, ebw = 0, rcost = 0, rgro = 0, rbw = 0;
    double elat = 0, eovh = 0, rovh_send = 0, rlat = 0;
    double lat, ovh;
    psel_lane_t *lane;

    memset(ep, 0, sizeof(*ep));
    lat = rnd_uniform(0.05, 10) * US;
    ovh = rnd_uniform(0.005, 3) * US;
    psel_mock_ep_add_lane(ep, "am/0", caps, UCS_BIT(PSEL_LANE_ROLE_AM), lat,
                          1e9, ovh);
    if (rrc) {
        num_eager  = 1 + rnd() % 2;
        num_lanes  = num_eager + 1 + rnd() % 3;
        first_rndv = num_eager;
    } else {
        num_eager  = 1;
        num_lanes  = 1 + rnd() % 3;
        first_rndv = 0;
    }
    config->max_eager_lanes = num_eager;
    config->max_rndv_lanes  = 3;

    for (i = 0; i < num_lanes; ++i) {
        role_mask = rrc ? ((i < num_eager) ? UCS_BIT(PSEL_LANE_ROLE_AM_BW) :
                                             UCS_BIT(PSEL_LANE_ROLE_RMA_BW)) :
                          UCS_BIT(PSEL_LANE_ROLE_AM_BW);
        lane = psel_mock_ep_add_lane(ep, "data", caps, role_mask,
                                     rnd_uniform(0.05, 10) * US,
                                     rnd_uniform(100, 50000) * UCS_MBYTE,
                                     rnd_uniform(0.005, 3) * US);
        lane->am.max_zcopy  = SIZE_MAX;
        lane->get.max_zcopy = SIZE_MAX;
        lane->put.max_zcopy = SIZE_MAX;
        lane->reg_cost      = ucs_linear_func_make(rnd_uniform(0, 50) * US,
                                                   rnd_uniform(0, 0.2) * NS);
        lane->md_index      = lane->index;
        if (i < num_eager) {
            elat    = ucs_max(elat, lane->latency);
            eovh    = ucs_max(eovh, lane->overhead_send + lane->overhead_recv);
            ecost  += lane->reg_cost.c;
            egro   += lane->reg_cost.m;
            ebw    += lane->bandwidth;
        }
        if (i >= first_rndv) {
            rovh_send = ucs_max(rovh_send, lane->overhead_send);
            rlat      = ucs_max(rlat, lane->latency);
            rcost    += lane->reg_cost.c;
            rgro  += lane->reg_cost.m;
            rbw   += lane->bandwidth;
        }
    }

    /* eover: latency and overheads of the slowest eager lane (the lanes work
     * in parallel); rlat: 3 of the control lane and 1 of the slowest data
     * lane; rover: of the control lane, plus the first data operation's
     * send overhead on the slowest rendezvous lane */
    lines->c_e = ecost + elat + eovh;
    lines->m_e = egro + 1.0 / config->copy_bw + 1.0 / ebw;
    lines->c_r = (1 + rrc) * rcost + 3 * lat + rlat + 3 * 2 * ovh + rovh_send;
    /* rndv/am data lands in transport buffers: the receiver copies it out */
    lines->m_r = (1 + rrc) * rgro + (rrc ? 0 : 1.0 / config->copy_bw) +
                 1.0 / rbw;
}

/* First size where rendezvous is used, per the closed form and the bound;
 * SIZE_MAX if never. Only for m_r < m_e (rendezvous cheaper per byte). */
static double seed_expected_start(const seed_lines_t *l, double d)
{
    double x0 = (l->c_r - l->c_e) / (l->m_e - l->m_r);
    double xd = (d * l->c_r - l->c_e) / (l->m_e - d * l->m_r);

    x0 = ucs_max(x0, 0);
    xd = ucs_max(xd, 0);
    return ucs_max(xd, floor(ceil(x0) / 2));
}

static size_t table_first_of(const psel_select_table_t *table,
                             const char *name)
{
    unsigned i;

    for (i = 0; i < table->count; ++i) {
        if (!strcmp(table->elems[i].proto->name, name)) {
            return (i == 0) ? 0 : table->elems[i - 1].max_length + 1;
        }
    }
    return SIZE_MAX;
}

static void check_seed_formula(const char *rndv_name, unsigned rrc)
{
    const psel_proto_t *protos[2];
    const psel_select_table_t *table;
    psel_config_t config;
    psel_select_t select;
    psel_mock_ep_t ep;
    seed_lines_t lines;
    unsigned i, tested = 0, attempts = 0;
    double diff, expected, got;

    for (i = 0; i < psel_num_builtin_protos; ++i) {
        if (!strcmp(psel_builtin_protos[i]->name, "egr/zcopy")) {
            protos[0] = psel_builtin_protos[i];
        } else if (!strcmp(psel_builtin_protos[i]->name, rndv_name)) {
            protos[1] = psel_builtin_protos[i];
        }
    }

    /* the seed formula charges the memory domains' full registration cost */
    assert_int_equal(read_config(&config, "UCX_PSEL_RCACHE_OVERHEAD=inf", NULL),
                     UCS_OK);
    while ((tested < 1000) && (++attempts < 100000)) {
        seed_random_ep(&ep, &config, &lines, rrc);
        if (!(lines.m_r < lines.m_e)) {
            continue; /* rendezvous never better per byte: tested below */
        }
        diff                  = rnd_uniform(0, 5);
        config.rndv_perf_diff = (rnd() % 4 == 0) ? 0 : diff;
        assert_int_equal(psel_select_init(&select, protos, 2, &ep.sets,
                                          &config), UCS_OK);
        assert_int_equal(psel_select_build(&select, contig_host(), &table),
                         UCS_OK);
        expected = seed_expected_start(&lines,
                                       psel_config_rndv_bias(&config));
        got      = (double)table_first_of(table, rndv_name);
        if (fabs(got - ceil(expected)) > 1.0) {
            print_error("%s: expected rendezvous from %.1f, table has %.0f "
                        "(closed form: eager %.3f us + %.4f ns/B, rendezvous "
                        "%.3f us + %.4f ns/B)\n", rndv_name, expected, got,
                        lines.c_e / US, lines.m_e / NS, lines.c_r / US,
                        lines.m_r / NS);
            psel_select_dump(stderr, &select, table, "seed", PSEL_DUMP_EXPLAIN);
            fail();
        }
        psel_select_cleanup(&select);
        ++tested;
    }
    assert_int_equal(tested, 1000);
    psel_config_release(&config);
}

static void test_seed_formula_rndv_get(void **state)
{
    check_seed_formula("rndv/get", 1);
}

static void test_seed_formula_rndv_am(void **state)
{
    check_seed_formula("rndv/am", 0);
}

/*
 * One case computed by hand from the design brief's formula, with literal
 * numbers (not the model code above). One lane does everything (am, am_bw,
 * rma_bw): latency L = 1 us, o_send = o_recv = 0.25 us, 1e9 B/s, its memory
 * domain registers at 4 us + 0.1 ns/B; UCX_PSEL_BCOPY_BW = 4096MBs = 2^32
 * B/s; full registration cost (UCX_PSEL_RCACHE_OVERHEAD=inf); d = 0.99.
 *
 *   eager zcopy:  etime = ecost + x*egro + x/ebw + eover
 *     ecost = 4 us, eover = L + o_send + o_recv = 1.5 us
 *     egro  = 0.1 ns/B + 1/2^32 s/B (the receiver's copy-out, docs/
 *             decisions.md) = 0.33283064365 ns/B, 1/ebw = 1 ns/B
 *     etime = 5.5 us + x * 1.33283064365 ns/B
 *   rndv/get:     rtime = d*((1+rrc)(rcost + x*rgro) + 4*rlat + 3*rover
 *                         + x/rbw), rrc = 1
 *     (1+rrc)(rcost + x*rgro) = 8 us + x * 0.2 ns/B
 *     4*rlat = 4 us; 3*rover = 3 * 0.5 us = 1.5 us, plus the first data
 *     operation's send overhead, 0.25 us (docs/decisions.md)
 *     rtime = 0.99 * (13.75 us + x * 1.2 ns/B)
 *           = 13.6125 us + x * 1.188 ns/B
 *   etime = rtime at x = (13.6125 - 5.5) us / (1.33283064365 - 1.188) ns/B
 *                      = 8.1125 us / 0.14483064365 ns/B = 56013.698 B
 *   (unbiased: 8.25 us / 0.13283064365 ns/B = 62109.2 B; half of it is
 *   below 56013.7, so the bias bound does not move it)
 * so eager up to 56013 bytes, rndv/get from 56014 on.
 */
static void test_seed_formula_literal(void **state)
{
    const uint32_t caps = PSEL_LANE_CAP_AM_SHORT | PSEL_LANE_CAP_AM_BCOPY |
                          PSEL_LANE_CAP_AM_ZCOPY | PSEL_LANE_CAP_GET_ZCOPY |
                          PSEL_LANE_CAP_MEM_REG;
    const psel_proto_t *protos[2] = {NULL, NULL};
    const psel_select_table_t *table;
    psel_config_t config;
    psel_select_t select;
    psel_mock_ep_t ep;
    psel_lane_t *lane;
    unsigned i;

    for (i = 0; i < psel_num_builtin_protos; ++i) {
        if (!strcmp(psel_builtin_protos[i]->name, "egr/zcopy")) {
            protos[0] = psel_builtin_protos[i];
        } else if (!strcmp(psel_builtin_protos[i]->name, "rndv/get")) {
            protos[1] = psel_builtin_protos[i];
        }
    }
    assert_non_null(protos[0]);
    assert_non_null(protos[1]);
    assert_int_equal(read_config(&config, "UCX_PSEL_RCACHE_OVERHEAD=inf",
                                 "UCX_PSEL_BCOPY_BW=4096MBs",
                                 "UCX_PSEL_RNDV_PERF_DIFF=1", NULL), UCS_OK);
    memset(&ep, 0, sizeof(ep));
    lane = psel_mock_ep_add_lane(&ep, "one/0", caps,
                                 UCS_BIT(PSEL_LANE_ROLE_AM) |
                                 UCS_BIT(PSEL_LANE_ROLE_AM_BW) |
                                 UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
                                 1e-6, 1e9, 0.25e-6);
    lane->reg_cost     = ucs_linear_func_make(4e-6, 0.1e-9);
    lane->am.max_zcopy = SIZE_MAX; /* one fragment: the formula has none */
    assert_int_equal(psel_select_init(&select, protos, 2, &ep.sets, &config),
                     UCS_OK);
    assert_int_equal(psel_select_build(&select, contig_host(), &table),
                     UCS_OK);
    assert_int_equal(table->count, 2);
    assert_string_equal(table->elems[0].proto->name, "egr/zcopy");
    assert_int_equal(table->elems[0].max_length, 56013);
    assert_string_equal(table->elems[1].proto->name, "rndv/get");
    psel_select_cleanup(&select);
    psel_config_release(&config);
}

/* Degenerate pairs of lines: e = eager class, r = rendezvous class. */
static void check_two_lines(double c_e, double m_e, double c_r, double m_r,
                            const char *diff, const golden_row_t *expected)
{
    const psel_select_table_t *table;
    psel_config_t config;
    psel_select_t select;

    memset(mock_defs, 0, sizeof(mock_defs));
    mock_defs[0] = (mock_def_t){0, 1, {{SIZE_MAX, c_e, m_e}}, MOCK_AUTO, NULL};
    mock_defs[1] = (mock_def_t){0, 1, {{SIZE_MAX, c_r, m_r}}, MOCK_RNDV, NULL};
    assert_int_equal(read_config(&config, diff, NULL), UCS_OK);
    assert_int_equal(psel_select_init(&select, mock_protos, 2, &no_lanes,
                                      &config), UCS_OK);
    assert_int_equal(psel_select_build(&select, contig_host(), &table),
                     UCS_OK);
    assert_table(table, expected);
    psel_select_cleanup(&select);
    psel_config_release(&config);
}

static void test_seed_degenerate(void **state)
{
    const golden_row_t eager_only[] = {{SIZE_MAX, "mock/a"}, GOLDEN_END};
    const golden_row_t rndv_only[]  = {{SIZE_MAX, "mock/b"}, GOLDEN_END};

    /* parallel, rendezvous dearer: never, even though d·c_r < c_e */
    check_two_lines(9.95, 1, 10, 1, "UCX_PSEL_RNDV_PERF_DIFF=1", eager_only);
    /* parallel, rendezvous cheaper: everywhere */
    check_two_lines(10, 1, 9, 1, "UCX_PSEL_RNDV_PERF_DIFF=1", rndv_only);
    /* rendezvous never better: dearer and steeper */
    check_two_lines(1, 0.5, 10, 0.6, "UCX_PSEL_RNDV_PERF_DIFF=1", eager_only);
    /* eager never better: dearer and steeper */
    check_two_lines(10, 0.6, 1, 0.5, "UCX_PSEL_RNDV_PERF_DIFF=1", rndv_only);
    /* exact tie everywhere: the lower slope rule cannot decide, the list
     * order does */
    check_two_lines(5, 0.5, 5, 0.5, "UCX_PSEL_RNDV_PERF_DIFF=0", eager_only);
}

/* ------------------------------------------------------------------------
 * Stability: two nearly parallel lines; d from 1.00 to 0.99 must not move
 * the threshold by more than x2 (a multiplicative bias alone moves it >10x).
 */
static void test_bias_stability(void **state)
{
    const psel_select_table_t *table;
    psel_config_t config;
    psel_select_t select;
    size_t base = 0, thresh, prev = SIZE_MAX;
    double unbounded;
    char diff[64];
    int step;

    memset(mock_defs, 0, sizeof(mock_defs));
    mock_defs[0] = (mock_def_t){0, 1, {{SIZE_MAX, 10, 1.0}}, MOCK_AUTO, NULL};
    mock_defs[1] = (mock_def_t){0, 1, {{SIZE_MAX, 20, 0.999}}, MOCK_RNDV,
                                NULL};

    for (step = 0; step <= 10; ++step) {
        snprintf(diff, sizeof(diff), "UCX_PSEL_RNDV_PERF_DIFF=%.1f",
                 step * 0.1);
        assert_int_equal(read_config(&config, diff, NULL), UCS_OK);
        assert_int_equal(psel_select_init(&select, mock_protos, 2, &no_lanes,
                                          &config), UCS_OK);
        assert_int_equal(psel_select_build(&select, contig_host(), &table),
                         UCS_OK);
        thresh = table_first_of(table, "mock/b");
        if (step == 0) {
            base = thresh;
            /* 10 us / 0.001 ns/B */
            assert_true(labs((long)base - 10000000l) <= 1);
        }
        assert_true(thresh <= prev);          /* monotone in the bias */
        assert_true(thresh * 2 >= base);      /* never more than x2 */
        prev = thresh;
        psel_select_cleanup(&select);
        psel_config_release(&config);
    }

    /* the plain seed formula would have moved it ~11x: the bound matters */
    unbounded = (0.99 * 20 - 10) / (1.0 - 0.99 * 0.999) * 1e3;
    assert_true(unbounded * 10 < (double)base);
    assert_true(prev == base / 2);
}

/* ------------------------------------------------------------------------
 * Configuration: valid and invalid values, each with its message.
 */
typedef struct {
    const char *setting;
    int         valid;
    const char *message;  /* expected in the log when invalid */
} config_case_t;

static void test_config_values(void **state)
{
    static const config_case_t cases[] = {
        {"UCX_PSEL_RNDV_THRESH=8k",         1, NULL},
        {"UCX_PSEL_RNDV_THRESH=inf",        1, NULL},
        {"UCX_PSEL_RNDV_THRESH=auto",       1, NULL},
        {"UCX_PSEL_RNDV_THRESH=abc",        0, "UCX_PSEL_RNDV_THRESH"},
        {"UCX_PSEL_RNDV_THRESH=-5",         0, "UCX_PSEL_RNDV_THRESH"},
        {"UCX_PSEL_ZCOPY_THRESH=12q",       0, "memory units"},
        {"UCX_PSEL_TLS=",                   1, NULL},
        {"UCX_PSEL_RNDV_PERF_DIFF=2.5",     1, NULL},
        {"UCX_PSEL_RNDV_PERF_DIFF=100",     0, "0 <= value < 100"},
        {"UCX_PSEL_RNDV_PERF_DIFF=-1",      0, "UCX_PSEL_RNDV_PERF_DIFF"},
        {"UCX_PSEL_RNDV_PERF_DIFF=nan",     0, "UCX_PSEL_RNDV_PERF_DIFF"},
        {"UCX_PSEL_RNDV_PERF_DIFF=x",       0, "floating point"},
        {"UCX_PSEL_PROTO_INFO=yes",         1, NULL},
        {"UCX_PSEL_PROTO_INFO=used",        1, NULL},
        {"UCX_PSEL_PROTO_INFO=maybe",       0, "<y|n|used>"},
        {"UCX_PSEL_SELECT_PERF=multi",      1, NULL},
        {"UCX_PSEL_SELECT_PERF=fast",       0, "UCX_PSEL_SELECT_PERF"},
        {"UCX_PSEL_MAX_RNDV_LANES=0",       0, "1..16"},
        {"UCX_PSEL_MAX_EAGER_LANES=17",     0, "1..16"},
        {"UCX_PSEL_MULTI_LANE_MAX_RATIO=0.5", 0, ">= 1"},
        {"UCX_PSEL_BCOPY_BW=0",             0, "UCX_PSEL_BCOPY_BW"},
        {"UCX_PSEL_RCACHE_OVERHEAD=inf",    1, NULL},
        {"UCX_PSEL_RCACHE_OVERHEAD=100ns",  1, NULL},
        {"UCX_PSEL_RCACHE_OVERHEAD=soon",   0, "time value"},
        {"UCX_PSEL_RX_SLIP=0",              1, NULL},
        {"UCX_PSEL_RX_SLIP=100us",          1, NULL},
        {"UCX_PSEL_RX_SLIP=101us",          0, "UCX_PSEL_RX_SLIP: 101us"},
        {"UCX_PSEL_RX_SLIP=inf",            0, "UCX_PSEL_RX_SLIP: inf"},
        {"UCX_PSEL_RX_SLIP=-1ns",           0, "from 0 (off) to 100us"},
        {"UCX_PSEL_SWITCH_MARGIN=auto",     1, NULL},
        {"UCX_PSEL_SWITCH_MARGIN=3",        1, NULL},
        {"UCX_PSEL_SWITCH_MARGIN=2.5%",     1, NULL},
        {"UCX_PSEL_SWITCH_MARGIN=50",       0, "0 <= value < 50"},
        {"UCX_PSEL_SWITCH_MARGIN=-1",       0, "UCX_PSEL_SWITCH_MARGIN"},
        {"UCX_PSEL_SWITCH_MARGIN=2x",       0, "UCX_PSEL_SWITCH_MARGIN"},
        {"UCX_PSEL_PROTOS=^egr/*,rndv/am",  1, NULL},
        {"UCX_PSEL_PROTOS=",                1, NULL},
        {NULL}
    };
    const config_case_t *c;
    psel_config_t config;
    ucs_status_t status;

    for (c = cases; c->setting != NULL; ++c) {
        psel_test_log_capture_start();
        status = read_config(&config, c->setting, NULL);
        psel_test_log_capture_stop();
        if (c->valid) {
            if (status != UCS_OK) {
                print_error("'%s' rejected: %s\n", c->setting,
                            psel_test_log_captured());
            }
            assert_int_equal(status, UCS_OK);
            psel_config_release(&config);
        } else {
            if (status == UCS_OK) {
                print_error("'%s' accepted\n", c->setting);
            }
            assert_int_not_equal(status, UCS_OK);
            psel_assert_log_contains(c->message);
        }
    }
}

static void test_config_parsed_values(void **state)
{
    psel_config_t config;

    assert_int_equal(read_config(&config, "UCX_PSEL_RNDV_THRESH=8k",
                                 "UCX_PSEL_PROTO_INFO=used",
                                 "UCX_PSEL_RNDV_PERF_DIFF=2", NULL), UCS_OK);
    assert_int_equal(config.rndv_thresh, 8192);
    assert_int_equal(config.proto_info, PSEL_PROTO_INFO_USED);
    assert_true(fabs(psel_config_rndv_bias(&config) - 0.98) < 1e-12);
    assert_true(config.zcopy_thresh == UCS_MEMUNITS_AUTO);
    psel_config_release(&config);

    assert_int_equal(read_config(&config, "UCX_PSEL_PROTOS=^egr/*,rndv/am",
                                 NULL), UCS_OK);
    assert_false(psel_config_allow_list_match(&config.protos, "egr/short"));
    assert_false(psel_config_allow_list_match(&config.protos, "rndv/am"));
    assert_true(psel_config_allow_list_match(&config.protos, "rndv/get"));
    psel_config_release(&config);
}

static void test_config_unknown_variable(void **state)
{
    psel_config_t config;

    setenv("UCX_PSEL_RNDV_TRESH", "8k", 1);
    psel_test_log_capture_start();
    assert_int_equal(read_config(&config, NULL), UCS_OK);
    psel_test_log_capture_stop();
    unsetenv("UCX_PSEL_RNDV_TRESH");
    psel_assert_log_contains("unknown variable UCX_PSEL_RNDV_TRESH");
    psel_config_release(&config);
}

/* ------------------------------------------------------------------------
 * Built-in protocols over mock endpoints: every table covers 0..inf, and
 * the protocols that lack a capability say which.
 */

/* An opaque (generic) datatype is packed by callbacks: only the copying
 * protocols apply - egr/bcopy and rndv/am by bcopy - and each other one
 * says why not; the table holds nothing else. */
static void check_generic_table(const psel_select_table_t *table)
{
    const char *name;
    unsigned i;

    for (i = 0; i < table->count; ++i) {
        name = table->elems[i].proto->name;
        if (strcmp(name, "egr/bcopy") && strcmp(name, "rndv/am")) {
            fail_msg("generic datatype: row %u runs %s", i, name);
        }
    }
    for (i = 0; i < table->num_protos; ++i) {
        name = psel_builtin_protos[i]->name;
        if (!strcmp(name, "egr/short") || !strcmp(name, "egr/zcopy") ||
            !strcmp(name, "rndv/get") || !strcmp(name, "rndv/put")) {
            assert_int_equal(table->status[i], UCS_ERR_UNSUPPORTED);
            assert_true(table->caps[i].desc[0] != '\0'); /* says why */
        } else if (!strcmp(name, "rndv/am") && (table->status[i] == UCS_OK)) {
            assert_int_equal(((const psel_proto_lanes_priv_t*)
                              table->caps[i].priv)->zcopy, 0);
        }
    }
}
static void test_builtin_buffer_types(void **state)
{
    const psel_buffer_type_t types[] = {
        psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_CONTIG,
                         UCS_MEMORY_TYPE_HOST, 1),
        psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_IOV, UCS_MEMORY_TYPE_HOST, 4),
        psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_IOV, UCS_MEMORY_TYPE_HOST,
                         32),
        psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_GENERIC,
                         UCS_MEMORY_TYPE_HOST, 1),
    };
    const psel_select_table_t *table;
    psel_config_t config;
    psel_select_t select;
    psel_mock_ep_t ep;
    unsigned i, kind;

    assert_int_equal(read_config(&config, NULL), UCS_OK);
    for (kind = 0; kind < 2; ++kind) {
        if (kind == 0) {
            psel_mock_ep_shm(&ep);
        } else {
            psel_mock_ep_ib(&ep);
        }
        assert_int_equal(psel_select_init(&select, psel_builtin_protos,
                                          psel_num_builtin_protos, &ep.sets,
                                          &config), UCS_OK);
        for (i = 0; i < 4; ++i) {
            assert_int_equal(psel_select_build(&select, types[i], &table),
                             UCS_OK);
            assert_true(table->elems[table->count - 1].max_length == SIZE_MAX);
            if (types[i].dt_class == PSEL_DT_GENERIC) {
                check_generic_table(table);
            }
        }
        /* contig host: short first on both */
        assert_string_equal(psel_select_lookup_fast(&select, PSEL_OP_TAG_SEND,
                                                    8)->proto->name,
                            "egr/short");
        psel_select_cleanup(&select);
    }

    /* shm: no am_zcopy lane, so egr/zcopy says why */
    psel_mock_ep_shm(&ep);
    assert_int_equal(psel_select_init(&select, psel_builtin_protos,
                                      psel_num_builtin_protos, &ep.sets,
                                      &config), UCS_OK);
    assert_int_equal(psel_select_build(&select, types[0], &table), UCS_OK);
    for (i = 0; i < table->num_protos; ++i) {
        if (!strcmp(psel_builtin_protos[i]->name, "egr/zcopy")) {
            assert_int_equal(table->status[i], UCS_ERR_UNSUPPORTED);
            assert_string_equal(table->caps[i].desc,
                                "am_bw lane posix/memory has no am_zcopy");
        }
    }
    /* the largest messages go by rendezvous get over cma */
    assert_string_equal(psel_select_lookup_fast(&select, PSEL_OP_TAG_SEND,
                                                1ul << 30)->proto->name,
                        "rndv/get");
    psel_select_cleanup(&select);
    psel_config_release(&config);
}

static void test_dump_text_and_json(void **state)
{
    const psel_select_table_t *table;
    psel_config_t config;
    psel_select_t select;
    psel_mock_ep_t ep;
    char *buf = NULL;
    size_t len = 0;
    FILE *stream;

    assert_int_equal(read_config(&config, NULL), UCS_OK);
    psel_mock_ep_ib(&ep);
    config.max_rndv_lanes = 2;
    assert_int_equal(psel_select_init(&select, psel_builtin_protos,
                                      psel_num_builtin_protos, &ep.sets,
                                      &config), UCS_OK);
    assert_int_equal(psel_select_build(&select, contig_host(), &table), UCS_OK);

    stream = open_memstream(&buf, &len);
    psel_select_dump(stream, &select, table, "ep_cfg[0]", PSEL_DUMP_EXPLAIN);
    fclose(stream);
    assert_non_null(strstr(buf, "| ep_cfg[0]"));
    assert_non_null(strstr(buf, "tag send, contig host memory"));
    assert_non_null(strstr(buf, "eager short [egr/short]"));
    assert_non_null(strstr(buf, "cost lines cross at"));
    free(buf);

    stream = open_memstream(&buf, &len);
    psel_select_dump_json(stream, &select, table, "ep_cfg[0]");
    fclose(stream);
    assert_non_null(strstr(buf, "\"rows\": ["));
    assert_non_null(strstr(buf, "\"protocol\": \"egr/short\""));
    assert_non_null(strstr(buf, "\"end\": \"inf\""));
    assert_non_null(strstr(buf, "\"lanes\": \"rc_mlx5/mlx5_0:1 50% + "
                                "rc_mlx5/mlx5_0:2 50%\""));
    free(buf);

    psel_select_cleanup(&select);
    psel_config_release(&config);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_auto),
        cmocka_unit_test(test_golden_no_bias),
        cmocka_unit_test(test_golden_rndv_thresh),
        cmocka_unit_test(test_golden_rndv_thresh_high),
        cmocka_unit_test(test_golden_rndv_inf),
        cmocka_unit_test(test_golden_zcopy_thresh),
        cmocka_unit_test(test_golden_zcopy_thresh_low),
        cmocka_unit_test(test_golden_deny_list),
        cmocka_unit_test(test_golden_glob),
        cmocka_unit_test(test_golden_uncovered),
        cmocka_unit_test(test_golden_uncovered_gap),
        cmocka_unit_test(test_brute_force),
        cmocka_unit_test(test_same_line_rounded_ties),
        cmocka_unit_test(test_margin_tie_keeps),
        cmocka_unit_test(test_margin_switches_beyond),
        cmocka_unit_test(test_margin_dump_reason),
        cmocka_unit_test(test_margin_natural_order),
        cmocka_unit_test(test_margin_auto),
        cmocka_unit_test(test_caps_shared),
        cmocka_unit_test(test_seed_formula_rndv_get),
        cmocka_unit_test(test_seed_formula_rndv_am),
        cmocka_unit_test(test_seed_formula_literal),
        cmocka_unit_test(test_seed_degenerate),
        cmocka_unit_test(test_bias_stability),
        cmocka_unit_test(test_config_values),
        cmocka_unit_test(test_config_parsed_values),
        cmocka_unit_test(test_config_unknown_variable),
        cmocka_unit_test(test_builtin_buffer_types),
        cmocka_unit_test(test_dump_text_and_json),
    };

    return cmocka_run_group_tests_name("select", tests, NULL, NULL);
}
