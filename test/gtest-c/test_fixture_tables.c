/*
 * Golden lanes and tag-send tables of real `ucx_info -d` dumps, through the
 * real endpoint-init path: import the fixture, psel_ep_config_init() with
 * PSEL_FEATURE_TAG, local = remote = the fixture (a cluster of identical
 * machines, PSEL_PEER_REMOTE_HOST), default config unless a test overrides
 * one variable. One endpoint per process (UCX_PSEL_NUM_EPS unset), so a
 * latency that grows with endpoints is taken at N = 1, as UCP does.
 *
 * Units in the reasoning: us and ns/B; "MB/s" is ucx_info's 2^20 B/s, so
 * 1/bw [ns/B] = 1e3 / (MB/s · 1.048576). With the defaults:
 *   UCX_PSEL_BCOPY_BW 5800 MB/s -> one copy costs 0.16444 ns/B;
 *   UCX_PSEL_RCACHE_OVERHEAD 50 ns -> registration on an MD that registers
 *     (all network MDs here) costs c = 50 ns, m = 0;
 *   UCX_PSEL_RNDV_PERF_DIFF 1 -> d = 0.99;
 *   MAX_EAGER_LANES 1, MAX_RNDV_LANES 2, MULTI_LANE_MAX_RATIO 4.
 * Cost lines (proto_common.h, proto_egr.c), L = lane latency, o = o_send +
 * o_recv of the lane (the largest of a multi-lane set), copy = 0.16444:
 *   egr/short  c = L + o                m = 1/bw + 2·copy
 *   egr/bcopy  c = L + o                m = 1/bw + 2·copy
 *   egr/zcopy  c = L + o + reg.c        m = 1/bw + copy
 *     bcopy/zcopy above their fragment (am_max - 32 B header) add
 *     o_send / frag per byte.
 *   rndv/get,put  c = 2·reg.c (summed per MD) + 3·L(am lane) + the
 *                 largest L of the data lanes + 3o + their largest o_send
 *                 m = 1/sum(bw of the rma_bw lanes) (+ o_send/frag, frag =
 *                 rma max_zcopy, negligible or none)
 *   rndv/am    c = reg.c + 4L + 3o + o_send   m = 1/sum(bw) + copy + o_s/frag
 * Rendezvous lines compete multiplied by d. Crossing of eager (c_e, m_e) and
 * rendezvous (c_r, m_r): x = (d·c_r - c_e) / (m_e - d·m_r).
 */
#include "test_util.h"

#include <lane_select/ucx_info_import.h>
#include <lane_select/resource_table.h>
#include <lane_select/reachability.h>
#include <ucp_proto_sel/ep_config.h>
#include <ucs/sys/math.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

extern char **environ;

#define F000 "000-debian12-vm-ucx1.13.1.txt"
#define F001 "001-azure-hbv3-cx6vf-ucx1.17.txt"
#define F048 "048-centos8-cx5-fdr56-ucx1.9.txt"
#define F002 "002-gpu-cx6-hdr-cuda-ucx1.16.txt"
#define F003 "003-centos7-cx-edr-ucx1.6.txt"
#define F004 "004-rhel7-4xcx5-edr-nohash-ucx1.13.txt"

#define AM     UCS_BIT(PSEL_LANE_ROLE_AM)
#define AM_BW  UCS_BIT(PSEL_LANE_ROLE_AM_BW)
#define RMA_BW UCS_BIT(PSEL_LANE_ROLE_RMA_BW)
#define AMO    UCS_BIT(PSEL_LANE_ROLE_AMO)

typedef struct {
    const char *name;
    uint32_t    roles;
} golden_lane_t;

typedef struct {
    size_t      end;
    const char *proto;
    const char *lanes;   /* the protocol's lane description */
} golden_row_t;

#define LANES_END {NULL, 0}
#define ROWS_END  {0, NULL, NULL}

/* Unset every UCX_PSEL_* variable, then set the one override, if any. The
 * switch margin is 0 unless the override names it: the tables here are the
 * exact crossings of the formulas above (test_margin_* checks the margin) */
static void psel_env_reset(const char *setting)
{
    char names[64][128];
    unsigned n = 0, i;
    char **env;

    for (env = environ; (*env != NULL) && (n < 64); ++env) {
        if (!strncmp(*env, "UCX_PSEL_", 9)) {
            snprintf(names[n++], sizeof(names[0]), "%.*s",
                     (int)strcspn(*env, "="), *env);
        }
    }
    for (i = 0; i < n; ++i) {
        unsetenv(names[i]);
    }
    setenv("UCX_PSEL_SWITCH_MARGIN", "0", 1);
    if (setting != NULL) {
        snprintf(names[0], sizeof(names[0]), "%.*s",
                 (int)strcspn(setting, "="), setting);
        setenv(names[0], strchr(setting, '=') + 1, 1);
    }
}

static void assert_lanes(const psel_ep_config_t *ep,
                         const golden_lane_t *expected)
{
    unsigned n;

    for (n = 0; expected[n].name != NULL; ++n) {
        if ((n >= ep->lanes.num_lanes) ||
            strcmp(ep->lanes.lanes[n].name, expected[n].name) ||
            (ep->lanes.info[n].roles != expected[n].roles)) {
            print_error("lane %u: expected %s roles 0x%x, got %s roles 0x%x\n",
                        n, expected[n].name, expected[n].roles,
                        (n < ep->lanes.num_lanes) ?
                        ep->lanes.lanes[n].name : "(none)",
                        (n < ep->lanes.num_lanes) ?
                        ep->lanes.info[n].roles : 0);
            fail();
        }
    }
    assert_int_equal(ep->lanes.num_lanes, n);
}

/* Compare the first rows of the table with @a expected; if @a whole, the
 * table must have exactly those rows. */
static void assert_rows(const psel_select_table_t *table,
                        const golden_row_t *expected, int whole)
{
    const psel_select_elem_t *elem;
    const char *desc;
    unsigned i, n;

    for (n = 0; expected[n].proto != NULL; ++n) {
    }
    for (i = 0; i < n; ++i) {
        if (i >= table->count) {
            print_error("row %u: expected ..%zu %s, table has %u rows\n", i,
                        expected[i].end, expected[i].proto, table->count);
            fail();
        }
        elem = &table->elems[i];
        desc = table->caps[elem->proto_index].desc;
        if ((elem->max_length != expected[i].end) ||
            strcmp(elem->proto->name, expected[i].proto) ||
            strcmp(desc, expected[i].lanes)) {
            print_error("row %u: expected ..%zu %s [%s], got ..%zu %s [%s]\n",
                        i, expected[i].end, expected[i].proto,
                        expected[i].lanes, elem->max_length, elem->proto->name,
                        desc);
            fail();
        }
    }
    if (whole) {
        assert_int_equal(table->count, n);
    }
    assert_true(table->elems[table->count - 1].max_length == SIZE_MAX);
}

static void check_fixture_rows(const char *fixture, const char *setting,
                               const golden_lane_t *lanes,
                               const golden_row_t *rows, int whole)
{
    psel_resource_table_t table;
    psel_config_t config;
    psel_ep_params_t params;
    psel_ep_config_t ep;
    const psel_select_table_t *sel;

    assert_int_equal(psel_ucx_info_import_file(psel_test_fixture_path(fixture),
                                               &table), UCS_OK);
    psel_env_reset(setting);
    assert_int_equal(psel_config_read(&config), UCS_OK);
    psel_env_reset(NULL);

    memset(&params, 0, sizeof(params));
    params.features = PSEL_FEATURE_TAG;
    params.local    = &table;
    params.remote   = &table;
    params.locality = PSEL_PEER_REMOTE_HOST;
    params.config   = &config;
    assert_int_equal(psel_ep_config_init(&ep, &params), UCS_OK);

    assert_lanes(&ep, lanes);
    sel = ep.select.fast[PSEL_OP_TAG_SEND];
    assert_non_null(sel);
    assert_rows(sel, rows, whole);

    psel_ep_config_cleanup(&ep);
    psel_config_release(&config);
    free(table.resources);
}

static void check_fixture(const char *fixture, const char *setting,
                          const golden_lane_t *lanes, const golden_row_t *rows)
{
    check_fixture_rows(fixture, setting, lanes, rows, 1);
}

/* The contiguous host table of @a op between two machines like @a fixture
 * (another host), the endpoint created for tag, RMA and active messages */
static void check_fixture_op(const char *fixture, psel_op_t op,
                             const golden_row_t *rows)
{
    const psel_select_table_t *sel;
    psel_resource_table_t table;
    psel_ep_params_t params;
    psel_config_t config;
    psel_ep_config_t ep;

    assert_int_equal(psel_ucx_info_import_file(psel_test_fixture_path(fixture),
                                               &table), UCS_OK);
    psel_env_reset(NULL);
    assert_int_equal(psel_config_read(&config), UCS_OK);
    memset(&params, 0, sizeof(params));
    params.features = PSEL_FEATURE_TAG | PSEL_FEATURE_RMA | PSEL_FEATURE_AM;
    params.local    = &table;
    params.remote   = &table;
    params.locality = PSEL_PEER_REMOTE_HOST;
    params.config   = &config;
    assert_int_equal(psel_ep_config_init(&ep, &params), UCS_OK);
    assert_int_equal(psel_select_build(&ep.select,
                                       psel_buffer_type(op, PSEL_DT_CONTIG,
                                                        UCS_MEMORY_TYPE_HOST,
                                                        1),
                                       &sel), UCS_OK);
    assert_rows(sel, rows, 1);
    psel_ep_config_cleanup(&ep);
    psel_config_release(&config);
    free(table.resources);
}

/* The whole contig tag-send table of @a mem_type memory between two
 * machines like @a table, at @a locality, with the default config */
static void check_table(const psel_resource_table_t *table, int locality,
                        ucs_memory_type_t mem_type, const golden_lane_t *lanes,
                        const golden_row_t *rows)
{
    const psel_select_table_t *sel;
    psel_ep_params_t params;
    psel_config_t config;
    psel_ep_config_t ep;

    psel_env_reset(NULL);
    assert_int_equal(psel_config_read(&config), UCS_OK);
    memset(&params, 0, sizeof(params));
    params.features = PSEL_FEATURE_TAG;
    params.local    = table;
    params.remote   = table;
    params.locality = locality;
    params.config   = &config;
    assert_int_equal(psel_ep_config_init(&ep, &params), UCS_OK);

    assert_lanes(&ep, lanes);
    assert_int_equal(psel_select_build(&ep.select,
                                       psel_buffer_type(PSEL_OP_TAG_SEND,
                                                        PSEL_DT_CONTIG,
                                                        mem_type, 1),
                                       &sel), UCS_OK);
    assert_rows(sel, rows, 1);
    psel_ep_config_cleanup(&ep);
    psel_config_release(&config);
}

static void import_fixture_table(const char *fixture,
                                 psel_resource_table_t *table)
{
    assert_int_equal(psel_ucx_info_import_file(psel_test_fixture_path(fixture),
                                               table), UCS_OK);
}

static void import_text_table(const char *text, psel_resource_table_t *table)
{
    FILE *in = fmemopen((void*)text, strlen(text), "r");

    assert_non_null(in);
    assert_int_equal(psel_ucx_info_import(in, "snippet", table), UCS_OK);
    fclose(in);
}

/* ------------------------------------------------------------------------
 * 000: Debian 12 VM, UCX 1.13.1. Across hosts only tcp/eth0 is reachable
 * (self: same process only; sysv/posix/cma: same host only; tcp/lo: never
 * leaves the host). tcp/eth0: 11.27 MB/s (1/bw = 84.6206 ns/B), L 10960 ns,
 * o 50000 ns each side, am_short/am_bcopy 8K, am_zcopy 64K, put_zcopy
 * unlimited (no get_zcopy), MD reg cost 0. So one lane has every role the
 * tag protocols need (no protocol needs amo):
 *   am     1e-3 / (10.96 + 100 us)                  = 9.01
 *   am_bw  1 / (262144 B / 11.27 MB/s + 10.96 + 50 us) = 1 / 22244 us = 45.0
 *   rma_bw the same, plus reg(256K) = 0             = 45.0
 */
static const golden_lane_t lanes_000[] = {
    {"tcp/eth0", AM | AM_BW | RMA_BW}, LANES_END
};

/*
 * Rows:
 *  ..304      egr/short: short and bcopy share c = L + o = 110.96 us and
 *             m = 84.6206 + 2·0.1644 = 84.9495 ns/B (short wins the tie by
 *             list order); zcopy pays 50 ns more (the registration-cache
 *             lookup) but one copy less, 84.7850 ns/B: they cross at
 *             0.05 us / 0.1645 ns/B = 304.1 B.
 *  ..157271   egr/zcopy. Above its fragment 65536 - 32 = 65504 it adds
 *             50000 ns / 65504 = 0.7633 ns/B: c_e = 111.01 us, m_e =
 *             84.6206 + 0.1644 + 0.7633 = 85.5484 ns/B.
 *             rndv/put: c_r = 2·0.05 + 4·10.96 + 3·100 + 50 = 393.94 us,
 *             m_r = 84.6206 ns/B (put max_zcopy unlimited: no fragments);
 *             rndv/get does not apply (no get_zcopy).
 *             Unbiased crossing (393.94 - 111.01) / (85.5484 - 84.6206)
 *             = 305.0 KB; with d = 0.99: (390.0006 - 111.01) /
 *             (85.5484 - 83.7744) = 157271.3, within the bias bound
 *             (2 x 157271 >= 304967), so the last eager size is 157271
 *             (psel_info -x: "cross at 304967.3 bytes, at 157271.3 with the
 *             rendezvous bias").
 *  ..inf      rndv/put. rndv/am (c 393.89 us, m 85.5482 ns/B: copy-out
 *             and 50 us per 65519 B fragment, its data header is 17 B)
 *             never beats put.
 */
static const golden_row_t rows_000[] = {
    {304, "egr/short", "tcp/eth0"},
    {157271, "egr/zcopy", "tcp/eth0"},
    {SIZE_MAX, "rndv/put", "tcp/eth0"},
    ROWS_END
};

static void test_000_default(void **state)
{
    check_fixture(F000, NULL, lanes_000, rows_000);
}

/*
 * UCX_PSEL_PROTOS=^rndv/put: the lanes stay (rndv/am and rndv/get still ask
 * for am_bw/rma_bw), rndv/get does not apply, and rndv/am's line 393.89 us +
 * 85.5482 ns/B is nearly parallel to egr/zcopy's 111.01 us + 85.5484 ns/B
 * above 65504 (both pay copy-out and 50 us per fragment; rndv/am's fragment
 * is 15 B longer: 65536 less its 17-byte data header, version byte
 * included). Unbiased they cross only at 1618736133.6 B; with
 * d·85.5482 = 84.6927 the biased lines would cross at 325997 B, far below
 * half of that, so the bias bound (select.h) holds the boundary at
 * 1618736134 / 2 = 809368067: eager zcopy up to 809368066, then rndv/am
 * (psel_info -x: "the bias may move a boundary by at most x2, so it stays
 * at 809368067"). The stability the design asks for, on real numbers.
 * (Before the data header carried a version byte it was 16 B, and the
 * boundary 758794144: nearly parallel lines move far for one byte; the
 * bound keeps it within x2 of the unbiased crossing.)
 */
static void test_000_no_rndv_put(void **state)
{
    static const golden_row_t rows[] = {
        {304, "egr/short", "tcp/eth0"},
        {809368066, "egr/zcopy", "tcp/eth0"},
        {SIZE_MAX, "rndv/am", "tcp/eth0"},
        ROWS_END
    };
    check_fixture(F000, "UCX_PSEL_PROTOS=^rndv/put", lanes_000, rows);
}

/* ------------------------------------------------------------------------
 * 001: Azure HBv3, ConnectX-6 VF, HDR, UCX 1.17. Network resources:
 * tcp/eth0 (2200 MB/s, L 5212 ns, o 50 us), tcp/lo (host only), and on
 * mlx5_0:1 (23588.47 MB/s, 1 path, priority 50, MD reg 16000 ns +
 * 0.060 ns/B): dc_mlx5 (L 660, o 40), rc_verbs (L 600, o 75), rc_mlx5
 * (L 600, o 40, am_short 234, am_bcopy/zcopy 8254, get/put_zcopy 65..1G),
 * ud_verbs (L 630, o 105), ud_mlx5 (L 630, o 80).
 *   am:     rc_mlx5 (latency 600 + 1·N ns, at N = 1 endpoint 601)
 *           1e-3 / (0.601 + 0.04 + 0.04 us) = 1468.4, beating
 *           dc_mlx5 (0.74 us: 1351) and ud_mlx5 (0.79 us).
 *   am_bw:  256K / 23588.47 MB/s = 10.598 us; rc_mlx5 1 / (10.598 + 0.64)
 *           = 88983 (rc_verbs/ud/dc add more latency or overhead).
 *           Second lane: mlx5_0:1 has 1 path, so only tcp/eth0 is left,
 *           2200 < 23588 / 4 = 5897 MB/s: dropped.
 *   rma_bw: rc_mlx5 1 / (10.598 + 0.64 + 16 + 0.06·262144/1000 = 31.729)
 *           = 1 / 42.967 us = 23274; second lane dropped as for am_bw.
 */
static const golden_lane_t lanes_001[] = {
    {"rc_mlx5/mlx5_0:1", AM | AM_BW | RMA_BW}, LANES_END
};

/*
 * UCX 1.17 estimates each IB operation class apart (uct_ib_iface_estimate_
 * perf, UCX_IB_SEND_OVERHEAD "bcopy:5ns,cqe:20ns,db:40ns,wqe_fetch:350ns,
 * wqe_post:<overhead>"), and the import applies it (docs/lane-selection.md,
 * "Per-operation costs"). For rc_mlx5 (latency 600 + 1·N ns: 601 at N = 1 endpoint,
 * overhead 40 ns), per class: latency, send before the post, after it,
 * receive:
 *   short  601        40       40       40   (inline WQE: no fetch)
 *   bcopy  951 (+350) 45 (+5)  40       40
 *   zcopy  951 (+350) 40       60 (+20) 40
 * (the growth 1·N adds to every class, as UCX's estimate keeps the iface
 * latency's m). A message costs latency + send + receive; one more
 * fragment the sender's before + after.
 * Rows (1/bw = 0.0404 ns/B, copy = 0.1644 ns/B, reg.c = 50 ns):
 *  ..226     egr/short 0.681 us + 0.3693 ns/B up to am_short 234 - 8 B tag.
 *  ..273     egr/bcopy 0.951 + 0.045 + 0.040 = 1.036 us + 0.3693 ns/B vs
 *            egr/zcopy 0.951 + 0.040 + 0.040 + 0.05 = 1.081 us + 0.2049
 *            ns/B (one copy less): cross at 0.045 / 0.1644 = 273.7 B
 *            (psel_info -x: "cross at 273.7 bytes"). Without the per-class
 *            terms they crossed at 304.1.
 *  ..17379   egr/zcopy; above its fragment 8254 - 32 = 8222 B one more costs
 *            40 + 60 ns: 100 / 8222 = 0.0122 ns/B, m_e = 0.2170.
 *            rndv/get: 2·0.05 (rrc 1) + 3 control AMs (bcopy: 3·0.951 +
 *            3·(0.045 + 0.040)) + the data's zcopy latency 0.951 + its send
 *            0.04 = 4.199 us, m_r = 0.0404. Unbiased (4.199 - 1.081) /
 *            (0.2170 - 0.0404) = 17656 B; biased (4.1570 - 1.081) /
 *            (0.2170 - 0.0400) = 17379 (psel_info -x: "cross at 17656.8
 *            bytes, at 17379.2 with the rendezvous bias"). At latency 600
 *            (no growth term) it was 17362.
 *  ..inf     rndv/get; rndv/put has the very same line and loses the tie
 *            to the earlier protocol in the list.
 */
static const golden_row_t rows_001[] = {
    {226, "egr/short", "rc_mlx5/mlx5_0:1"},
    {273, "egr/bcopy", "rc_mlx5/mlx5_0:1"},
    {17379, "egr/zcopy", "rc_mlx5/mlx5_0:1"},
    {SIZE_MAX, "rndv/get", "rc_mlx5/mlx5_0:1"},
    ROWS_END
};

static void test_001_default(void **state)
{
    check_fixture(F001, NULL, lanes_001, rows_001);
}

/* UCX_PSEL_RNDV_THRESH=16k: rendezvous is disabled below 16384 and forced
 * from there, so egr/zcopy gives up 16384..17379 it would have kept. */
static void test_001_rndv_thresh(void **state)
{
    static const golden_row_t rows[] = {
        {226, "egr/short", "rc_mlx5/mlx5_0:1"},
        {273, "egr/bcopy", "rc_mlx5/mlx5_0:1"},
        {16383, "egr/zcopy", "rc_mlx5/mlx5_0:1"},
        {SIZE_MAX, "rndv/get", "rc_mlx5/mlx5_0:1"},
        ROWS_END
    };
    check_fixture(F001, "UCX_PSEL_RNDV_THRESH=16k", lanes_001, rows);
}

/* UCX_PSEL_PROTOS=^rndv/get: rndv/put has the same line, so it takes the
 * same boundary 17379. */
static void test_001_no_rndv_get(void **state)
{
    static const golden_row_t rows[] = {
        {226, "egr/short", "rc_mlx5/mlx5_0:1"},
        {273, "egr/bcopy", "rc_mlx5/mlx5_0:1"},
        {17379, "egr/zcopy", "rc_mlx5/mlx5_0:1"},
        {SIZE_MAX, "rndv/put", "rc_mlx5/mlx5_0:1"},
        ROWS_END
    };
    check_fixture(F001, "UCX_PSEL_PROTOS=^rndv/get", lanes_001, rows);
}

/* ------------------------------------------------------------------------
 * 048: CentOS 8, ConnectX-5 at FDR, UCX 1.9. mlx5_0:1 (6433.22 MB/s, 1
 * path, MD reg 180 ns): rc_mlx5 (L 700, o 40, am_short 2046, am_bcopy/zcopy
 * 8254, get/put_zcopy ..1G), rc_verbs (o 75), dc_mlx5 (L 760), ud_verbs,
 * ud_mlx5; tcp/ib0 (IPoIB, 6239.81 MB/s, L 5210, o 50 us, put_zcopy but no
 * get_zcopy, MD reg 0), tcp/eno1 (113.16 MB/s).
 *   am:     rc_mlx5 1e-3 / (0.70 + 0.08 us) = 1282.
 *   am_bw:  the am lane leads (as in UCX): rc_mlx5, 1 / (38.861 + 0.74 us)
 *           = 25252 (256K / 6433.22 MB/s = 38.861 us); no second lane, since
 *           UCX_PSEL_MAX_EAGER_LANES (1) counts the am_bw lanes.
 *   rma_bw: rc_mlx5 1 / (38.861 + 0.74 + 0.18) = 25137; second lane:
 *           mlx5_0:1 has 1 path, so the next best is tcp/ib0,
 *           1 / (40.064 + 5.21 + 50 us) = 10496 (reg 0); 6239.81 >=
 *           6433.22 / 4: kept. tcp/eno1 would be below the ratio anyway.
 */
static const golden_lane_t lanes_048[] = {
    {"rc_mlx5/mlx5_0:1", AM | AM_BW | RMA_BW},
    {"tcp/ib0", RMA_BW},
    LANES_END
};

/*
 * Rows (rc_mlx5's latency 700 + 1·N ns at N = 1: L = 0.701 us; L + o =
 * 0.781 us, 1/bw = 0.1482 ns/B, reg.c = 50 ns):
 *  ..304     egr/short, below its limit 2046 - 8: short (0.781 us + 0.1482 +
 *            2·0.1644 = 0.4771 ns/B) and zcopy (0.831 us + 0.3127 ns/B)
 *            cross at 0.05 / 0.1645 = 304.1 B; bcopy ties with short and
 *            loses on list order.
 *  ..13591   egr/zcopy (0.3175 ns/B above its 8222 B fragment: + 40 / 8222).
 *            rndv/get takes, of the two rma_bw lanes, the one with
 *            get_zcopy: rc_mlx5 alone. c_r = 2·0.05 + 3·0.701 + 0.701 +
 *            3·0.08 + 0.04 = 3.184 us, m_r = 0.1482: crossing 13899.1,
 *            biased 13592.0 (13574 at L = 0.700).
 *  ..748101  rndv/get. rndv/put runs on both lanes (tcp/ib0 has put_zcopy):
 *            m = 1 / (6433.22 + 6239.81 MB/s) = 0.0753 ns/B, but its
 *            constant pays the registration on both MDs, the slowest data
 *            lane's latency (tcp/ib0, 5.21 us) and its 50 us send overhead:
 *            2·(0.05 + 0.05) + 3·0.701 + 5.21 + 3·0.08 + 50 = 57.753 us. Both
 *            are biased alike, so they cross where the unbiased lines do:
 *            (57.753 - 3.184) / (0.1482 - 0.0753) = 748101 (the growth
 *            term adds 3 ns to put's constant, 3 L of the am lane, and 4
 *            ns to get's, whose data lane is rc_mlx5 too: 1 ns less
 *            between them, 13.7 B earlier than the 748114 of L = 0.700).
 *  ..inf     rndv/put over "rc_mlx5/mlx5_0:1 51% + tcp/ib0 49%".
 *  (ib0 is IPoIB on the same FDR port, so in reality the summed bandwidth
 *  exceeds the link; a UCX 1.9 dump has no sys_dev to tell: a data limit.)
 */
static void test_048_default(void **state)
{
    static const golden_row_t rows[] = {
        {304, "egr/short", "rc_mlx5/mlx5_0:1"},
        {13591, "egr/zcopy", "rc_mlx5/mlx5_0:1"},
        {748101, "rndv/get", "rc_mlx5/mlx5_0:1"},
        {SIZE_MAX, "rndv/put", "rc_mlx5/mlx5_0:1 51% + tcp/ib0 49%"},
        ROWS_END
    };

    check_fixture(F048, NULL, lanes_048, rows);
}

/*
 * UCX_PSEL_MAX_RNDV_LANES=1: rma_bw takes one lane (am_bw has one anyway:
 * UCX_PSEL_MAX_EAGER_LANES=1), so tcp/ib0 is gone.
 *  ..304     egr/short (crosses zcopy at 304.1 B, as in the default table).
 *  ..13591   egr/zcopy 0.831 us + 0.3127 ns/B (L = 0.701 at N = 1);
 *            above 8222 B fragments add 40 / 8222 = 0.0049: m_e = 0.3175.
 *            rndv/get c_r = 2·0.05 + 4·0.701 + 3·0.08 + 0.04 = 3.184 us,
 *            m_r = 0.1482. Unbiased (3.184 - 0.831) / (0.3175 - 0.1482) =
 *            13899 B; biased (3.1522 - 0.831) / (0.3175 - 0.1467) = 13592.0
 *            (psel_info -x: "cross at 13899.1 bytes, at 13592.0").
 *  ..inf     rndv/get (rndv/put ties and comes later in the list).
 */
static void test_048_one_rndv_lane(void **state)
{
    static const golden_lane_t lanes[] = {
        {"rc_mlx5/mlx5_0:1", AM | AM_BW | RMA_BW}, LANES_END
    };
    static const golden_row_t rows[] = {
        {304, "egr/short", "rc_mlx5/mlx5_0:1"},
        {13591, "egr/zcopy", "rc_mlx5/mlx5_0:1"},
        {SIZE_MAX, "rndv/get", "rc_mlx5/mlx5_0:1"},
        ROWS_END
    };
    check_fixture(F048, "UCX_PSEL_MAX_RNDV_LANES=1", lanes, rows);
}

/* ------------------------------------------------------------------------
 * 002: GPU node, ConnectX-6 HDR, UCX 1.16, cuda_copy/cuda_ipc/gdr_copy.
 * Per-operation costs (docs/lane-selection.md "Per-operation costs", UCX 1.16 rules):
 *   rc_mlx5 (L 600 + 1·N, o 40): at N = 1 endpoint short 601/40/40/40,
 *     bcopy 951/45/40/40, zcopy 951/40/60/40 (latency/send before/after/
 *     receive, ns)
 *   cma (L 80, o 2000 in the attributes): 80/500/0/500 for every class
 *     (uct_scopy_iface_estimate_perf: 500 ns, UCX >= 1.16)
 *   sysv (L 80, o 10): 80/10/0/10; cuda_ipc (L 1000, o 7000): 1000/7000/0/7000
 * 1/bw: sysv 15360 MB/s 0.062088 ns/B, cma 11145 MB/s, rc_mlx5 23588.47
 * MB/s 0.040430 ns/B, the pair cma + rc_mlx5 34733.47 MB/s 0.027457 ns/B,
 * cuda_ipc 300000 MB/s 0.003179 ns/B; copy (memcpy) 0.164429 ns/B.
 *
 * Same host (--same-host), lanes:
 *   am/am_bw  sysv/memory: 1e-3 / (80 + 10 + 10 ns) = 1e4, ties posix and
 *             comes first; am_bw 1 / (256K/15360 MB/s + 90 ns) = 6.11e4.
 *   rma_bw for host memory (the local MD registers host; cuda_ipc does not):
 *             cma 1 / (256K/11145 MB/s 22.43 us + 0.08 + 2.0 + 0.009) =
 *             4.08e4, then rc_mlx5 1 / (10.598 + 0.64 + 16 + 15.73 us) =
 *             2.33e4 (23588 >= 11145 / 4: kept; two lanes at most).
 *   rma_bw for cuda: cuda_ipc (registers cuda) 1 / (0.83 + 1.0 + 7.0 us) =
 *             1.13e5; cuda_copy and gdr_copy copy within one process only.
 */
static const golden_lane_t lanes_002_same_host[] = {
    {"sysv/memory", AM | AM_BW},
    {"cma/memory", RMA_BW},
    {"rc_mlx5/mlx5_0:1", RMA_BW},
    {"cuda_ipc/cuda", RMA_BW},
    LANES_END
};

/*
 * Host memory, same host. The host table uses no GPU-only lane.
 *  ..92      egr/short (sysv am_short 100 - 8): 0.100 us + 0.062088 +
 *            2·0.164429 = 0.390946 ns/B, ties egr/bcopy and wins on order.
 *  ..5034    egr/bcopy 0.100 us + 0.390946 ns/B (fragment 8224 is not
 *            reached). rndv/get over cma + rc_mlx5: 2 MDs x 50 ns x 2
 *            (rrc 1) = 0.2 + three bcopy control AMs on sysv 3·(0.08 +
 *            0.02) = 0.3 + the data's zcopy latency max(80, 951) = 0.951 +
 *            its send max(500, 40) = 0.5 -> 1.951 us, m_r = 0.027457.
 *            Unbiased (1951 - 100) / (0.390946 - 0.027457) = 5092.3; biased
 *            (1931.49 - 100) / (0.390946 - 0.027182) = 5034.8
 *            (psel_info -x: "cross at 5092.4 bytes, at 5034.9").
 *  ..inf     rndv/get; rndv/put has the same line and comes later.
 */
static const golden_row_t rows_002_host[] = {
    {92, "egr/short", "sysv/memory"},
    {5034, "egr/bcopy", "sysv/memory"},
    {SIZE_MAX, "rndv/get", "cma/memory 32% + rc_mlx5/mlx5_0:1 68%"},
    ROWS_END
};

/*
 * cuda memory, same host.
 *  egr/short: needs CPU-accessible memory. egr/bcopy packs and unpacks with
 *  the lowest-latency copy engine, gdr_copy (1.4 us + 1/6911 MB/s =
 *  0.137994 ns/B; cuda_copy has 8 us): 0.100 + 2·1.4 = 2.9 us, m = 0.062088
 *  + 2·0.137994 = 0.338076, + 10 ns / 8224 = 0.001216 above the fragment.
 *  rndv/get over cuda_ipc: 2·0.05 + 0.3 (control) + 1.0 + 7.0 = 8.4 us,
 *  m_r = 0.003179. Biased (8316 - 2900) / (0.339292 - 0.003147) = 16112.1;
 *  unbiased (8400 - 2900) / (0.339292 - 0.003179) = 16363.6.
 */
static const golden_row_t rows_002_cuda_same_host[] = {
    {16112, "egr/bcopy", "sysv/memory"},
    {SIZE_MAX, "rndv/get", "cuda_ipc/cuda"},
    ROWS_END
};

static void test_002_gpu_node_same_host(void **state)
{
    psel_resource_table_t table;

    (void)state;
    import_fixture_table(F002, &table);
    check_table(&table, PSEL_PEER_SAME_HOST, UCS_MEMORY_TYPE_HOST,
                lanes_002_same_host, rows_002_host);
    check_table(&table, PSEL_PEER_SAME_HOST, UCS_MEMORY_TYPE_CUDA,
                lanes_002_same_host, rows_002_cuda_same_host);
    free(table.resources);
}

/*
 * Another host: only rc_mlx5 (every role; mlx5_0:1 has one path and tcp/ib0
 * 2200 MB/s < 23588 / 4), and no lane registers cuda memory (no GPUDirect
 * RDMA in this dump: mlx5_0's memory types are host only).
 * cuda memory:
 *  egr/bcopy on rc_mlx5 with gdr_copy: 0.951 + 0.045 + 0.04 + 2·1.4 = 3.836
 *  us, m = 0.040430 + 2·0.137994 = 0.316418, + 85 ns / 8222 = 0.010338
 *  above the fragment = 0.326756.
 *  rndv/mtype stages through host: control 3·0.951 + 3·0.085 + data 0.951 +
 *  0.04 = 4.099 us plus two cuda_copy copies (the best bandwidth: 8 us +
 *  1/10000 MB/s = 0.095367 ns/B) = 20.099 us, m = 2·0.095367 + 0.040430 +
 *  100 ns / 512 KiB = 0.231356. Biased (19898.01 - 3836) / (0.326756 -
 *  0.229042) = 164378.5 (psel_info -x: "at 164378.7"; the digits above are
 *  rounded).
 */
static const golden_lane_t lanes_002_remote[] = {
    {"rc_mlx5/mlx5_0:1", AM | AM_BW | RMA_BW}, LANES_END
};

static const golden_row_t rows_002_cuda_remote[] = {
    {164378, "egr/bcopy", "rc_mlx5/mlx5_0:1"},
    {SIZE_MAX, "rndv/mtype", "cuda_copy/cuda + rc_mlx5/mlx5_0:1"},
    ROWS_END
};

static void test_002_gpu_node_remote_host(void **state)
{
    psel_resource_table_t table;

    (void)state;
    import_fixture_table(F002, &table);
    check_table(&table, PSEL_PEER_REMOTE_HOST, UCS_MEMORY_TYPE_CUDA,
                lanes_002_remote, rows_002_cuda_remote);
    free(table.resources);
}

/* ------------------------------------------------------------------------
 * 003: the UCX 1.6 layout (CentOS 7, EDR). UCX 1.6 predates the
 * per-operation estimate: every class costs the attributes. Across hosts
 * rc_mlx5 (L 600 + 1·N, o 40, 11794.23 MB/s: 1/bw 0.080860) has every role
 * (rc verbs o 75, dc 660, ud 610; one path; tcp/ib0 has no put/get zcopy in
 * 1.6).
 * At N = 1 endpoint L = 0.601 us.
 *  ..304     egr/short 0.681 us + 0.409718 ns/B vs egr/zcopy 0.731 +
 *            0.245289: 0.05 / 0.164429 = 304.1.
 *  ..11903   egr/zcopy, + 40 / (8190 - 32) = 0.004903 above the fragment:
 *            m_e = 0.080859 + 0.164427 + 0.004903 = 0.250189. rndv/get
 *            2·0.05 + 3·0.601 + 0.601 + 3·0.08 + 0.04 = 2.784 us: biased
 *            (2756.16 - 731) / (0.250189 - 0.080051) = 11903.0, unbiased
 *            12124.3 (psel_info -x: "cross at 12124.3 bytes, at 11903.0").
 */
static void test_003_ucx16_layout(void **state)
{
    static const golden_lane_t lanes[] = {
        {"rc_mlx5/mlx5_0:1", AM | AM_BW | RMA_BW}, LANES_END
    };
    static const golden_row_t rows[] = {
        {304, "egr/short", "rc_mlx5/mlx5_0:1"},
        {11903, "egr/zcopy", "rc_mlx5/mlx5_0:1"},
        {SIZE_MAX, "rndv/get", "rc_mlx5/mlx5_0:1"},
        ROWS_END
    };
    check_fixture(F003, NULL, lanes, rows);
}

/* ------------------------------------------------------------------------
 * 004: pasted without '#', UCX 1.13.0, two active ConnectX-5 EDR HCAs
 * (mlx5_0, mlx5_1; mlx5_2/3 have no device). 1.13 adds no per-operation
 * terms. am/am_bw on rc_mlx5/mlx5_0:1; rma_bw takes both HCAs (two rails of
 * 11794.23 MB/s: 1/bw 0.040430 together).
 *  ..304     egr/short vs egr/zcopy as in 003.
 *  ..10109   egr/zcopy m_e = 0.080859 + 0.164427 + 40 / 8222 = 0.250151.
 *            rndv/get (L = 0.601 at N = 1): two MDs register, 2·(0.05 +
 *            0.05) + 3·0.601 + 0.601 + 0.24 + 0.04 = 2.884 us, m_r =
 *            0.040430. Biased (2855.16 - 731) / (0.250151 - 0.040025) =
 *            10109.0, unbiased 10266.0 (psel_info -x: "at 10109.0"; the
 *            boundary is that close to the integer, so the digits matter).
 */
static void test_004_two_rails_without_hash(void **state)
{
    static const golden_lane_t lanes[] = {
        {"rc_mlx5/mlx5_0:1", AM | AM_BW | RMA_BW},
        {"rc_mlx5/mlx5_1:1", RMA_BW},
        LANES_END
    };
    static const golden_row_t rows[] = {
        {304, "egr/short", "rc_mlx5/mlx5_0:1"},
        {10109, "egr/zcopy", "rc_mlx5/mlx5_0:1"},
        {SIZE_MAX, "rndv/get", "rc_mlx5/mlx5_0:1 50% + rc_mlx5/mlx5_1:1 50%"},
        ROWS_END
    };
    check_fixture(F004, NULL, lanes, rows);
}

/*
 * 004, put and get (-u r). Every class costs the attributes (UCX 1.13.0):
 * L = 0.601 us, send 0.04, receive 0.04; memcpy 0.164427 ns/B (UCX's 5800
 * MB/s).
 *   put/offload/short on the rma lane, rc_mlx5/mlx5_0:1 (the better
 *     score, the earlier of two equal ones): L + 0.04 = 0.641 us + a copy
 *     and one lane's wire, 0.164427 + 0.080860 = 0.245287 ns/B, to its
 *     put_short limit of 2 KiB. put/offload/bcopy has the same line (one
 *     lane, to 8256 B); the list's order keeps short.
 *   put/offload/zcopy on one HCA (UCX_PSEL_MAX_RMA_LANES is 1, as UCX's
 *     UCX_MAX_RMA_RAILS): L + one MD's lookup 0.05 + 0.04 = 0.691 us +
 *     one lane's wire, 0.080860 ns/B. They cross at 0.050 / (0.245287 -
 *     0.080860) = 304.1 B: ..304 by put/offload/short.
 *   put/am/bcopy (L + 0.04 + 0.04 = 0.681 us + two copies and the wire,
 *     0.409714 ns/B) is dearer than put/offload/short at every size.
 *   get/bcopy on rc_mlx5/mlx5_0:1: 2L + 0.04 = 1.242 us + 0.245287 ns/B;
 *     get/zcopy on the same HCA: 2L + 0.05 + 0.04 = 1.292 us + 0.080860
 *     ns/B from the get_zcopy minimum, 65 B: the same crossing, ..304 by
 *     get/bcopy. (With two lanes allowed both go over both HCAs,
 *     test_psel_info.sh.)
 *     get/am/bcopy (2L + 2·0.08 = 1.362 us + 0.409714 ns/B) never wins.
 * Active messages: the tag table's lines with UCP's active-message names,
 * eager to one fragment only (am_zcopy's 8222 B, below egr/zcopy's 10109
 * crossing), then the rendezvous the tag table takes, rndv/get.
 */
static void test_004_put_get_am(void **state)
{
    static const golden_row_t put[] = {
        {304, "put/offload/short", "rc_mlx5/mlx5_0:1"},
        {SIZE_MAX, "put/offload/zcopy", "rc_mlx5/mlx5_0:1"},
        ROWS_END
    };
    static const golden_row_t get[] = {
        {304, "get/bcopy", "rc_mlx5/mlx5_0:1"},
        {SIZE_MAX, "get/zcopy", "rc_mlx5/mlx5_0:1"},
        ROWS_END
    };
    static const golden_row_t am[] = {
        {304, "am/egr/short", "rc_mlx5/mlx5_0:1"},
        {8222, "am/egr/zcopy", "rc_mlx5/mlx5_0:1"},
        {SIZE_MAX, "am/rndv/get", "rc_mlx5/mlx5_0:1 50% + rc_mlx5/mlx5_1:1 50%"},
        ROWS_END
    };

    check_fixture_op(F004, PSEL_OP_PUT, put);
    check_fixture_op(F004, PSEL_OP_GET, get);
    check_fixture_op(F004, PSEL_OP_AM_SEND, am);
}

/* ------------------------------------------------------------------------
 * RoCE and a RoCE LAG bond. No complete public dump of either was found
 * (test/fixtures/README.md), so these are the rc_mlx5 block of fixture 002
 * as UCX prints it for a RoCE port: latency + 200 ns (uct_ib_iface_query:
 * RoCE's GRH), an 18-byte device address (GID), 22874.95 MB/s (100 GbE
 * 4x25.78125 Gb/s with RoCE headers: uct_ib_iface_query's wire speed), and
 * for the bond "device num paths: 2" (the RoCE LAG level,
 * uct_ib_device_get_roce_lag_level). UCX 1.16, so the per-operation terms
 * apply, at N = 1 endpoint (latency 801): short 801/40/40/40, bcopy
 * 1151/45/40/40, zcopy 1151/40/60/40.
 */
#define ROCE_MD(_dev, _paths) \
    "# Library version: 1.16.0\n" \
    "# Memory domain: " _dev "\n" \
    "#     Component: ib\n" \
    "#             register: unlimited, cost: 16000 + 0.060 * N nsec\n" \
    "#           remote key: 8 bytes\n" \
    "#           local memory handle is required for zcopy\n" \
    "#         memory types: host (access,reg,cache)\n" \
    "#      Transport: rc_mlx5\n" \
    "#         Device: " _dev ":1\n" \
    "#           Type: network\n" \
    "#            bandwidth: 22874.95/ppn + 0.00 MB/sec\n" \
    "#              latency: 800 + 1.000 * N nsec\n" \
    "#             overhead: 40 nsec\n" \
    "#            put_zcopy: <= 1G, up to 14 iov\n" \
    "#            get_zcopy: 65..1G, up to 14 iov\n" \
    "#             am_short: <= 2046\n" \
    "#             am_bcopy: <= 8254\n" \
    "#             am_zcopy: <= 8254, up to 3 iov\n" \
    "#           connection: to ep\n" \
    "#      device priority: 50\n" \
    "#     device num paths: " #_paths "\n" \
    "#              max eps: 256\n" \
    "#       device address: 18 bytes\n" \
    "#           ep address: 10 bytes\n" \
    "#       error handling: buffer (zcopy), remote access, peer failure\n"

/*
 * One RoCE port: 1/bw = 0.041691 ns/B.
 *  ..2038    egr/short 0.881 us + 0.370549 ns/B up to am_short 2046 - 8;
 *            it would cross egr/zcopy (1.281 us + 0.206120) only at 0.40 /
 *            0.164429 = 2432.7, beyond its size (the UCX 1.16 table
 *            of a ConnectX-6 ends eager short at 2038 too).
 *  ..20722   egr/zcopy (beats egr/bcopy, 1.236 us + 0.370549, from 274 B),
 *            m_e = 0.206120 + 100 / 8222 = 0.218282 above the fragment.
 *            rndv/get: 0.1 + 3·(1.151 + 0.085) + 1.151 + 0.04 = 4.999 us,
 *            m_r = 0.041691. Biased (4949.01 - 1281) / (0.218282 -
 *            0.041274) = 20722.3, unbiased 21054.3.
 */
static void test_roce_port(void **state)
{
    static const golden_lane_t lanes[] = {
        {"rc_mlx5/mlx5_2:1", AM | AM_BW | RMA_BW}, LANES_END
    };
    static const golden_row_t rows[] = {
        {2038, "egr/short", "rc_mlx5/mlx5_2:1"},
        {20722, "egr/zcopy", "rc_mlx5/mlx5_2:1"},
        {SIZE_MAX, "rndv/get", "rc_mlx5/mlx5_2:1"},
        ROWS_END
    };
    psel_resource_table_t table;

    (void)state;
    import_text_table(ROCE_MD("mlx5_2", 1), &table);
    check_table(&table, PSEL_PEER_REMOTE_HOST, UCS_MEMORY_TYPE_HOST, lanes,
                rows);
    free(table.resources);
}

/*
 * The bond: two paths, so two lanes of one resource, named by path; am and
 * am_bw on path0 (one eager lane), rma_bw on both.
 *  ..2038    egr/short as above.
 *  ..18558   egr/zcopy; rndv/get now moves 0.020846 ns/B over both paths:
 *            biased (4949.01 - 1281) / (0.218282 - 0.020638) = 18558.6,
 *            unbiased 18831.4.
 */
static void test_roce_bond_two_paths(void **state)
{
    static const golden_lane_t lanes[] = {
        {"rc_mlx5/mlx5_bond_0:1/path0", AM | AM_BW | RMA_BW},
        {"rc_mlx5/mlx5_bond_0:1/path1", RMA_BW},
        LANES_END
    };
    static const golden_row_t rows[] = {
        {2038, "egr/short", "rc_mlx5/mlx5_bond_0:1/path0"},
        {18558, "egr/zcopy", "rc_mlx5/mlx5_bond_0:1/path0"},
        {SIZE_MAX, "rndv/get", "rc_mlx5/mlx5_bond_0:1/path0 50% + "
                               "rc_mlx5/mlx5_bond_0:1/path1 50%"},
        ROWS_END
    };
    psel_resource_table_t table;

    (void)state;
    import_text_table(ROCE_MD("mlx5_bond_0", 2), &table);
    check_table(&table, PSEL_PEER_REMOTE_HOST, UCS_MEMORY_TYPE_HOST, lanes,
                rows);
    free(table.resources);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_000_default),
        cmocka_unit_test(test_000_no_rndv_put),
        cmocka_unit_test(test_001_default),
        cmocka_unit_test(test_001_rndv_thresh),
        cmocka_unit_test(test_001_no_rndv_get),
        cmocka_unit_test(test_048_default),
        cmocka_unit_test(test_048_one_rndv_lane),
        cmocka_unit_test(test_002_gpu_node_same_host),
        cmocka_unit_test(test_002_gpu_node_remote_host),
        cmocka_unit_test(test_003_ucx16_layout),
        cmocka_unit_test(test_004_two_rails_without_hash),
        cmocka_unit_test(test_004_put_get_am),
        cmocka_unit_test(test_roce_port),
        cmocka_unit_test(test_roce_bond_two_paths),
    };

    return cmocka_run_group_tests_name("fixture_tables", tests, NULL, NULL);
}
