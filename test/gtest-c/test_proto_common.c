/*
 * Unit tests of the protocols' building blocks over mock lanes
 * (proto_common.c): the limits each protocol takes from its lanes (the
 * operation it uses, every lane of the set), registrations counted once per
 * memory domain. Expected values are worked out in the comments from the
 * lanes' made-up limits and costs.
 */
#include "mock_lanes.h"
#include "test_util.h"

#include <ucp_proto_sel/proto_common.h>
#include <ucp_proto_sel/select.h>
#include <ucp_proto_sel/ucx_thresh.h>
#include <ucs/sys/math.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#define US 1e-6
#define NS 1e-9

static const psel_proto_t *builtin(const char *name)
{
    const psel_proto_t *proto = psel_proto_by_name(name);

    if (proto == NULL) {
        fail_msg("no built-in protocol %s", name);
    }
    return proto;
}

static psel_config_t config;

static int setup(void **state)
{
    if (psel_config_read(&config) != UCS_OK) {
        return -1;
    }
    config.switch_margin = 0; /* the crossings computed here are exact */
    return 0;
}

static int teardown(void **state)
{
    psel_config_release(&config);
    return 0;
}

/* Run a protocol's init on @a ep for @a bt; the caps as the engine zeroes
 * them */
static ucs_status_t proto_init(const char *name, const psel_mock_ep_t *ep,
                               psel_buffer_type_t bt, psel_proto_caps_t *caps)
{
    psel_proto_init_params_t params = {bt, &ep->sets, &config};

    memset(caps, 0, sizeof(*caps));
    caps->cfg_thresh = PSEL_THRESH_AUTO;
    return builtin(name)->init(&params, caps);
}

static psel_buffer_type_t contig(void)
{
    return psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_CONTIG,
                            UCS_MEMORY_TYPE_HOST, 1);
}

static const psel_proto_lanes_priv_t *priv_of(const psel_proto_caps_t *caps)
{
    return (const psel_proto_lanes_priv_t*)caps->priv;
}

/* An am lane like posix, and an rma_bw lane whose operations have limits
 * of their own (set by each test) */
static psel_lane_t *shm_like(psel_mock_ep_t *ep)
{
    psel_lane_t *rma;

    memset(ep, 0, sizeof(*ep));
    psel_mock_ep_add_lane(ep, "posix/memory",
                          PSEL_LANE_CAP_AM_SHORT | PSEL_LANE_CAP_AM_BCOPY,
                          UCS_BIT(PSEL_LANE_ROLE_AM) |
                          UCS_BIT(PSEL_LANE_ROLE_AM_BW),
                          80e-9, 12000.0 * UCS_MBYTE, 10e-9);
    rma = psel_mock_ep_add_lane(ep, "cma/memory", PSEL_LANE_CAP_GET_ZCOPY |
                                PSEL_LANE_CAP_PUT_ZCOPY |
                                PSEL_LANE_CAP_MEM_REG,
                                UCS_BIT(PSEL_LANE_ROLE_RMA_BW), 80e-9,
                                11000.0 * UCS_MBYTE, 2000e-9);
    return rma;
}

/*
 * A lane that has no active messages (cma: am max_iov 0) reads with 16 iov
 * entries and writes with 2: an iov of 4 buffers goes by rndv/get, not by
 * rndv/put, each judged by its own operation's limit (before, both took
 * the am's 0 and neither applied).
 */
static void test_iov_limit_of_the_operation(void **state)
{
    psel_buffer_type_t iov4 = psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_IOV,
                                               UCS_MEMORY_TYPE_HOST, 4);
    psel_proto_caps_t caps;
    psel_mock_ep_t ep;
    psel_lane_t *cma;

    cma              = shm_like(&ep);
    cma->am.max_iov  = 0;
    cma->get.max_iov = 16;
    cma->put.max_iov = 2;

    assert_int_equal(proto_init("rndv/get", &ep, iov4, &caps), UCS_OK);
    assert_int_equal(proto_init("rndv/put", &ep, iov4, &caps),
                     UCS_ERR_UNSUPPORTED);
    assert_string_equal(caps.desc, "lane cma/memory: put_zcopy takes at most "
                        "2 iov entries, not 4");
    /* 2 entries: both */
    iov4.sg_count = 2;
    assert_int_equal(proto_init("rndv/put", &ep, iov4, &caps), UCS_OK);
}

/*
 * rndv/get is modelled with get's sizes, rndv/put with put's: get 65..1 GiB
 * (rc's get_zcopy), put 1..512 KiB. rndv/get: from 65 B, fragments of 1 GiB;
 * rndv/put: from 1 B, fragments of 512 KiB (before: both 0.., 1 GiB).
 */
static void test_rma_sizes_of_the_operation(void **state)
{
    psel_proto_caps_t caps;
    psel_mock_ep_t ep;
    psel_lane_t *rma;

    rma                = shm_like(&ep);
    rma->get.min_zcopy = 65;
    rma->get.max_zcopy = 1ul << 30;
    rma->put.min_zcopy = 1;
    rma->put.max_zcopy = 512 * 1024;

    assert_int_equal(proto_init("rndv/get", &ep, contig(), &caps), UCS_OK);
    assert_int_equal(caps.min_length, 65);
    assert_int_equal(priv_of(&caps)->frag_size, 1ul << 30);

    assert_int_equal(proto_init("rndv/put", &ep, contig(), &caps), UCS_OK);
    assert_int_equal(caps.min_length, 1);
    assert_int_equal(priv_of(&caps)->frag_size, 512 * 1024);
}

/*
 * Over several lanes: the largest minimum, the smallest maximum. Two rma_bw
 * lanes, A get 65..1 GiB, B get 0..4 MiB: rndv/get from 65 B (a 64-byte
 * message cannot go on A), fragments of 4 MiB (B takes no more) - before,
 * lane 0's: 0 and 1 GiB. egr/zcopy over two am_bw lanes, am zcopy 33..64 KiB
 * and 0..16 KiB: from 33 B, fragments of 16 KiB less the eager header.
 */
static void test_sizes_over_every_lane(void **state)
{
    const uint32_t caps_all = PSEL_LANE_CAP_AM_SHORT | PSEL_LANE_CAP_AM_BCOPY |
                              PSEL_LANE_CAP_AM_ZCOPY | PSEL_LANE_CAP_GET_ZCOPY |
                              PSEL_LANE_CAP_PUT_ZCOPY | PSEL_LANE_CAP_MEM_REG;
    psel_proto_caps_t caps;
    psel_lane_t *a, *b;
    psel_mock_ep_t ep;

    memset(&ep, 0, sizeof(ep));
    a = psel_mock_ep_add_lane(&ep, "rc_mlx5/mlx5_0:1", caps_all,
                              UCS_BIT(PSEL_LANE_ROLE_AM) |
                              UCS_BIT(PSEL_LANE_ROLE_AM_BW) |
                              UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
                              600e-9, 12000.0 * UCS_MBYTE, 40e-9);
    b = psel_mock_ep_add_lane(&ep, "rc_mlx5/mlx5_1:1", caps_all,
                              UCS_BIT(PSEL_LANE_ROLE_AM_BW) |
                              UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
                              600e-9, 12000.0 * UCS_MBYTE, 40e-9);
    a->get.min_zcopy = 65;
    a->get.max_zcopy = 1ul << 30;
    b->get.min_zcopy = 0;
    b->get.max_zcopy = 4ul << 20;
    a->am.min_zcopy  = 33;
    a->am.max_zcopy  = 64 * 1024;
    b->am.max_zcopy  = 16 * 1024;
    config.max_rndv_lanes  = 2;
    config.max_eager_lanes = 2;

    assert_int_equal(proto_init("rndv/get", &ep, contig(), &caps), UCS_OK);
    assert_int_equal(priv_of(&caps)->num_lanes, 2);
    assert_int_equal(caps.min_length, 65);
    assert_int_equal(priv_of(&caps)->frag_size, 4ul << 20);

    assert_int_equal(proto_init("egr/zcopy", &ep, contig(), &caps), UCS_OK);
    assert_int_equal(priv_of(&caps)->num_lanes, 2);
    assert_int_equal(caps.min_length, 33);
    assert_int_equal(priv_of(&caps)->frag_size, 16 * 1024 - PSEL_EAGER_HDR);
}

/*
 * Registration is paid once per memory domain. Memory domains 0 and 64
 * (a host with more than 64 of them, or md_index the 65th resource's) are
 * two: two lanes that register at 16 us + 0.06 ns/B each cost 32 us +
 * 0.12 ns/B (before, md_index % 64 made them one: 16 us + 0.06 ns/B).
 * Two lanes on one memory domain (both 0) pay once. UCX 1.x's threshold
 * sums the same way: 2 x 16 us over md 0 and 64.
 */
static void test_registration_once_per_memory_domain(void **state)
{
    const uint32_t caps_rma = PSEL_LANE_CAP_GET_ZCOPY | PSEL_LANE_CAP_MEM_REG;
    psel_proto_init_params_t params = {contig(), NULL, &config};
    psel_lane_set_perf_t perf;
    psel_proto_caps_t caps;
    psel_lane_set_t subset;
    psel_ucx_thresh_t thresh;
    psel_select_t select;
    psel_lane_t *lane[2];
    psel_mock_ep_t ep;
    unsigned i;

    memset(&ep, 0, sizeof(ep));
    psel_mock_ep_add_lane(&ep, "posix/memory",
                          PSEL_LANE_CAP_AM_SHORT | PSEL_LANE_CAP_AM_BCOPY,
                          UCS_BIT(PSEL_LANE_ROLE_AM) |
                          UCS_BIT(PSEL_LANE_ROLE_AM_BW),
                          80e-9, 12000.0 * UCS_MBYTE, 10e-9);
    for (i = 0; i < 2; ++i) {
        lane[i] = psel_mock_ep_add_lane(&ep, i ? "rc/b" : "rc/a", caps_rma,
                                        UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
                                        600e-9, 12000.0 * UCS_MBYTE, 40e-9);
        lane[i]->reg_cost = ucs_linear_func_make(16 * US, 0.06 * NS);
    }
    lane[0]->md_index      = 0;
    lane[1]->md_index      = 64;
    params.lanes           = &ep.sets;
    config.rcache_overhead = INFINITY; /* the memory domains' own cost */

    assert_int_equal(psel_proto_lane_set(&params, PSEL_LANE_ROLE_RMA_BW,
                                         caps_rma, 2, &subset, &perf, &caps),
                     UCS_OK);
    assert_int_equal(subset.count, 2);
    assert_true(fabs(perf.reg_cost.c - 32 * US) < 1e-15);
    assert_true(fabs(perf.reg_cost.m - 0.12 * NS) < 1e-21);

    assert_int_equal(psel_select_init(&select, NULL, 0, &ep.sets, &config),
                     UCS_OK);
    psel_ucx_thresh_compute(&select, &thresh);
    assert_true(thresh.valid);
    assert_true(fabs(thresh.r_reg_c - 32 * US) < 1e-15);
    psel_select_cleanup(&select);

    lane[1]->md_index = 0;
    assert_int_equal(psel_proto_lane_set(&params, PSEL_LANE_ROLE_RMA_BW,
                                         caps_rma, 2, &subset, &perf, &caps),
                     UCS_OK);
    assert_true(fabs(perf.reg_cost.c - 16 * US) < 1e-15);
    assert_true(fabs(perf.reg_cost.m - 0.06 * NS) < 1e-21);
}

/*
 * A lane with per-operation costs (us): bcopy (the control messages)
 * latency 1, send_pre 0.2, send_post 0.1, recv 0.3; zcopy (the data)
 * latency 2, send_pre 0.5, send_post 0.25, recv 0.3; 10^9 B/s; its memory
 * domain registers at 4 us + 0.1 ns/B (UCX_PSEL_RCACHE_OVERHEAD=inf); no
 * fragments.
 */
static void stage_lane(psel_mock_ep_t *ep)
{
    const uint32_t caps = PSEL_LANE_CAP_AM_SHORT | PSEL_LANE_CAP_AM_BCOPY |
                          PSEL_LANE_CAP_AM_ZCOPY | PSEL_LANE_CAP_GET_ZCOPY |
                          PSEL_LANE_CAP_PUT_ZCOPY | PSEL_LANE_CAP_MEM_REG;
    const psel_op_cost_t bcopy = {1 * US, 0.2 * US, 0.1 * US, 0.3 * US};
    const psel_op_cost_t zcopy = {2 * US, 0.5 * US, 0.25 * US, 0.3 * US};
    psel_lane_t *lane;

    memset(ep, 0, sizeof(*ep));
    lane = psel_mock_ep_add_lane(ep, "one/0", caps,
                                 UCS_BIT(PSEL_LANE_ROLE_AM) |
                                 UCS_BIT(PSEL_LANE_ROLE_AM_BW) |
                                 UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
                                 1 * US, 1e9, 0.2 * US);
    lane->reg_cost                 = ucs_linear_func_make(4 * US, 0.1 * NS);
    lane->am.max_zcopy             = SIZE_MAX;
    lane->op_valid                 = 1;
    lane->op[PSEL_OP_CLASS_SHORT]  = bcopy;
    lane->op[PSEL_OP_CLASS_BCOPY]  = bcopy;
    lane->op[PSEL_OP_CLASS_ZCOPY]  = zcopy;
    config.rcache_overhead         = INFINITY;
}

static void assert_close(double got, double expected)
{
    if (fabs(got - expected) > 1e-9 * fabs(expected) + 1e-21) {
        fail_msg("expected %.12g, got %.12g", expected, got);
    }
}

/*
 * A rendezvous message in UCX's stages, each term on the host that spends
 * it (the lane of stage_lane()):
 *   latency 3 x 1 + 2 = 5 us (RTS, RTR/ATS, FIN/ATS; the data)
 *   control CPU: messages S->R, R->S, S->R: sender 2 x 0.2 + 0.3 = 0.7 us
 *     (+ 2 x 0.1 after its posts), receiver 0.2 + 2 x 0.3 = 0.8 us (+ 0.1)
 *   both register (4 us + 0.1 ns/B each); the data's first post 0.5 us
 *   (+ 0.25 after) on the host that posts: the sender for rndv/put, the
 *   receiver (its reads) for rndv/get; wire 1 ns/B.
 * rndv/put: send 5.2 us + 0.1 ns/B (+0.45), recv 4.8 us + 0.1 ns/B (+0.1)
 * rndv/get: send 4.7 us + 0.1 ns/B (+0.2), recv 5.3 us + 0.1 ns/B (+0.35)
 * single, both: 5 + 10 us + 1.2 ns/B = 15 us + 1.2 ns/B, the seed's
 *   2 (4 + 0.1x) + 4 x L + 3 x 0.5 + 0.5 + x (before: the same)
 * multi: rndv/put's sender, 5.65 us + 0.1 ns/B, paces until the wire
 *   takes over at 5650 / 0.9 = 6277.8 B; rndv/get's receiver, 5.65 us +
 *   0.1 ns/B, likewise; from 6278 on the wire, 1 ns/B. (Before: one
 *   stage held the 5 us of latency and every overhead: 11 us + 0 x at 0.)
 */
static void test_rndv_stages_by_host(void **state)
{
    static const char *const names[] = {"rndv/put", "rndv/get"};
    psel_proto_caps_t caps;
    psel_mock_ep_t ep;
    unsigned i;

    stage_lane(&ep);
    for (i = 0; i < 2; ++i) {
        assert_int_equal(proto_init(names[i], &ep, contig(), &caps), UCS_OK);
        assert_int_equal(caps.num_ranges, 2);
        assert_int_equal(caps.ranges[0].max_length, 6277);
        assert_true(caps.ranges[1].max_length == SIZE_MAX);
        assert_close(caps.ranges[0].perf[PSEL_PERF_SINGLE].c, 15 * US);
        assert_close(caps.ranges[0].perf[PSEL_PERF_SINGLE].m, 1.2 * NS);
        assert_close(caps.ranges[0].perf[PSEL_PERF_MULTI].c, 5.65 * US);
        assert_close(caps.ranges[0].perf[PSEL_PERF_MULTI].m, 0.1 * NS);
        assert_close(caps.ranges[1].perf[PSEL_PERF_MULTI].c, 0);
        assert_close(caps.ranges[1].perf[PSEL_PERF_MULTI].m, 1 * NS);
    }
}

/*
 * Eager zero-copy over the same lane (BCOPY_BW 2^32 B/s: a copy is
 * 0.23283064365 ns/B): latency 2 us; the sender registers and posts,
 * 4 + 0.5 us + 0.1 ns/B (+0.25 after); the receiver copies the message out,
 * 0.3 us + 0.23283 ns/B; wire 1 ns/B.
 *   single  = 6.8 us + 1.33283064365 ns/B
 *   multi   = sender 4.75 us + 0.1 ns/B to 4750 / 0.9 = 5277.8 B, then the
 *             wire
 * rndv/put (above, no bias: UCX_PSEL_RNDV_PERF_DIFF=0):
 *   single = 15 us + 1.2 ns/B: crosses eager at 8200 / 0.13283064365 =
 *            61732.5 B, so by single the table is egr/zcopy to 61732,
 *            rndv/put from 61733;
 *   multi: eager max(4.75 us + 0.1x, x) is below rndv/put's max(5.65 us +
 *          0.1x, x) up to 6277 B and the same line (the wire) from 6278
 *          on, where the single lines break the tie: selecting by multi
 *          (UCX_PSEL_SELECT_PERF=multi) gives the single table again,
 *          egr/zcopy to 61732 and rndv/put from 61733. (Before the tie
 *          break, the earlier protocol of the list kept every size.)
 */
static void test_select_by_single_and_multi(void **state)
{
    const psel_proto_t *protos[2] = {builtin("egr/zcopy"),
                                     builtin("rndv/put")};
    const psel_select_table_t *table;
    psel_select_t select;
    psel_mock_ep_t ep;

    stage_lane(&ep);
    config.copy_bw        = 4294967296.0;
    config.rndv_perf_diff = 0;
    assert_int_equal(psel_select_init(&select, protos, 2, &ep.sets, &config),
                     UCS_OK);
    assert_int_equal(psel_select_build(&select, contig(), &table), UCS_OK);
    assert_int_equal(table->count, 2);
    assert_string_equal(table->elems[0].proto->name, "egr/zcopy");
    assert_int_equal(table->elems[0].max_length, 61732);
    assert_string_equal(table->elems[1].proto->name, "rndv/put");
    psel_select_cleanup(&select);

    config.select_perf = PSEL_PERF_MULTI;
    assert_int_equal(psel_select_init(&select, protos, 2, &ep.sets, &config),
                     UCS_OK);
    assert_int_equal(psel_select_build(&select, contig(), &table), UCS_OK);
    assert_int_equal(table->count, 2);
    assert_string_equal(table->elems[0].proto->name, "egr/zcopy");
    assert_int_equal(table->elems[0].max_length, 61732);
    assert_string_equal(table->elems[1].proto->name, "rndv/put");
    psel_select_cleanup(&select);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_iov_limit_of_the_operation,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_rma_sizes_of_the_operation,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_sizes_over_every_lane, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
                test_registration_once_per_memory_domain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rndv_stages_by_host, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_select_by_single_and_multi, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
