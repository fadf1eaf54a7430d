/*
 * Unit tests of the cost lines of put, get and active-message sends over
 * mock lanes (proto_rma.c, and the active-message definitions beside the
 * tag ones),
 * and of their tables. Every literal is worked out by hand in the comment
 * next to it, from the mock lanes' made-up attributes (mock_lanes.c) and
 * these settings: memcpy at 5e9 B/s (0.2 ns/B), a registration-cache lookup
 * of 50 ns, at most 2 rma_bw lanes for rendezvous and 2 for put and get
 * zero-copy (UCX_PSEL_MAX_RMA_LANES; its default is 1), no switch margin.
 *
 * A mock lane has no per-class costs: every class costs its latency, its
 * send overhead before the post (after it: 0) and its receive overhead.
 *   posix/memory  L 80 ns, o 10 ns, 12179 MB/s: 1/bw = 1e9 / (12179 x
 *                 1048576) = 0.0783048 ns/B; am short 100, bcopy 8256;
 *                 put short 256, put and get bcopy 8192, but no rma lane:
 *                 its memory domain registers nothing (the peer's user
 *                 buffers are out of its reach, as in UCP)
 *   cma/memory    L 80 ns, o 2000 ns, 11145 MB/s: 0.0855697 ns/B; put and
 *                 get zcopy without a size limit, no bcopy; registers
 *                 (50 ns); the rma_bw lane
 *   rc_mlx5/mlx5_0:1, :2  L 600 ns, o 40 ns, 11600 MB/s each (0.0822133
 *                 ns/B), one memory domain; put and get zcopy up to 1 GiB,
 *                 put short 220, put and get bcopy 8192; port 1 the rma
 *                 lane, both rma_bw lanes
 */
#include "mock_lanes.h"

#include <ucp_proto_sel/proto_common.h>
#include <ucp_proto_sel/select.h>
#include <ucs/sys/math.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#define US 1e-6
#define NS 1e-9

static psel_config_t config;

static int setup(void **state)
{
    if (psel_config_read(&config) != UCS_OK) {
        return -1;
    }
    config.switch_margin   = 0;
    config.copy_bw         = 5e9;
    config.rcache_overhead = 50e-9;
    config.max_rndv_lanes  = 2;
    config.max_rma_lanes   = 2;
    config.rndv_perf_diff  = 0;
    return 0;
}

static int teardown(void **state)
{
    psel_config_release(&config);
    return 0;
}

static const psel_proto_t *builtin(const char *name)
{
    const psel_proto_t *proto = psel_proto_by_name(name);

    if (proto == NULL) {
        fail_msg("no built-in protocol %s", name);
    }
    return proto;
}

static psel_buffer_type_t contig(psel_op_t op)
{
    return psel_buffer_type(op, PSEL_DT_CONTIG, UCS_MEMORY_TYPE_HOST, 1);
}

static ucs_status_t proto_init(const char *name, const psel_mock_ep_t *ep,
                               psel_op_t op, psel_proto_caps_t *caps)
{
    psel_proto_init_params_t params = {contig(op), &ep->sets, &config};

    memset(caps, 0, sizeof(*caps));
    caps->cfg_thresh = PSEL_THRESH_AUTO;
    return builtin(name)->init(&params, caps);
}

static void assert_close(double a, double b)
{
    if (!(fabs(a - b) <= 1e-6 * fabs(b))) {
        fail_msg("%.9g is not within 1e-6 of %.9g", a, b);
    }
}

/* the single line at @a size: c [us] + m [ns/B] */
static void assert_single(const psel_proto_caps_t *caps, size_t size,
                          double c_us, double m_ns)
{
    const psel_perf_range_t *range = psel_proto_caps_range(caps, size);

    assert_non_null(range);
    assert_close(range->perf[PSEL_PERF_SINGLE].c, c_us * US);
    assert_close(range->perf[PSEL_PERF_SINGLE].m, m_ns * NS);
}

/*
 * Shared memory, put:
 *   put/offload/short: no rma lane.
 *   put/offload/bcopy: the rma_bw lane (cma) has no put_bcopy.
 *   put/offload/zcopy over cma: the initiator registers (50 ns) and posts
 *     (2000 ns), one latency (80): 2.130 us + 0.0855697 ns/B, one range
 *     (no size limit). Streaming: the poster's 2.050 us per message until
 *     the wire is slower, from 2050 / 0.0855697 = 23957.1 B.
 *   put/am/bcopy over posix: a copy in (0.2 ns/B) and its send overhead
 *     (10), the wire (0.0783048), a copy out (0.2) and the receive
 *     overhead (10), one latency (80): 0.100 us + 0.4783048 ns/B up to one
 *     fragment, 8256 - 16 B of header = 8240 B; above it each further
 *     fragment costs the sender 10 ns: + 10 / 8240 = 0.0012136 ns/B.
 */
static void test_put_lines_shm(void **state)
{
    psel_proto_caps_t caps;
    psel_mock_ep_t ep;

    psel_mock_ep_shm(&ep);
    assert_int_equal(proto_init("put/offload/short", &ep, PSEL_OP_PUT, &caps),
                     UCS_ERR_UNSUPPORTED);
    assert_string_equal(caps.desc, "no rma lane");

    assert_int_equal(proto_init("put/offload/bcopy", &ep, PSEL_OP_PUT, &caps),
                     UCS_ERR_UNSUPPORTED);
    assert_string_equal(caps.desc, "rma_bw lane cma/memory has no put_bcopy");

    assert_int_equal(proto_init("put/offload/zcopy", &ep, PSEL_OP_PUT, &caps),
                     UCS_OK);
    assert_string_equal(caps.desc, "cma/memory");
    assert_int_equal(caps.num_ranges, 2);
    assert_int_equal(caps.ranges[0].max_length, 23957);
    assert_single(&caps, 0, 2.130, 0.0855697);
    assert_close(caps.ranges[0].perf[PSEL_PERF_MULTI].c, 2.050 * US);
    assert_single(&caps, SIZE_MAX, 2.130, 0.0855697);
    assert_close(caps.ranges[1].perf[PSEL_PERF_MULTI].m, 0.0855697 * NS);

    assert_int_equal(proto_init("put/am/bcopy", &ep, PSEL_OP_PUT, &caps),
                     UCS_OK);
    assert_string_equal(caps.desc, "posix/memory");
    assert_single(&caps, 8240, 0.100, 0.4783048);
    assert_single(&caps, 8241, 0.100, 0.4783048 + 0.0012136);
    assert_single(&caps, SIZE_MAX, 0.100, 0.4783048 + 0.0012136);
}

/*
 * Shared memory, get: the data comes back, so both take two latencies.
 *   get/zcopy: 2 x 80 + 50 + 2000 = 2.210 us + 0.0855697 ns/B.
 *   get/am/bcopy: the request costs its sender 10 and its receiver 10 more
 *     than put/am/bcopy: 2 x 80 + 2 x 20 = 0.200 us + 0.4783048 ns/B.
 *   get/bcopy: the rma_bw lane (cma) has no get_bcopy.
 */
static void test_get_lines_shm(void **state)
{
    psel_proto_caps_t caps;
    psel_mock_ep_t ep;

    psel_mock_ep_shm(&ep);
    assert_int_equal(proto_init("get/zcopy", &ep, PSEL_OP_GET, &caps),
                     UCS_OK);
    assert_single(&caps, SIZE_MAX, 2.210, 0.0855697);
    assert_int_equal(proto_init("get/am/bcopy", &ep, PSEL_OP_GET, &caps),
                     UCS_OK);
    assert_single(&caps, 8240, 0.200, 0.4783048);
    assert_int_equal(proto_init("get/bcopy", &ep, PSEL_OP_GET, &caps),
                     UCS_ERR_UNSUPPORTED);
    assert_string_equal(caps.desc, "rma_bw lane cma/memory has no get_bcopy");
}

/*
 * The tables over shared memory cover every size. As UCP with its default
 * UCX_PREFER_OFFLOAD=y, put and get by active messages are a last resort:
 * cma's zero-copy takes every size. With UCX_PREFER_OFFLOAD=n, one
 * protocol gives way to the next where the single lines cross:
 *   put: 0.100 + 0.4783048x = 2.130 + 0.0855697x at x = 2030 / 0.3927351 =
 *        5168.88 B (below the 8240 B fragment): put/am/bcopy to 5168.
 *   get: 0.200 + 0.4783048x = 2.210 + 0.0855697x at 2010 / 0.3927351 =
 *        5117.95 B: get/am/bcopy to 5117.
 * Over the mock HCA, whose rma lane has put short and both rma_bw lanes
 * put and get bcopy, the offload protocols take the small sizes:
 *   put: put/offload/short and put/offload/bcopy have the same line to
 *        220 B, 0.640 + 0.2822133x; the order of the list keeps short.
 *        put/offload/zcopy (0.690 + 0.04110665x) is cheaper from 50 /
 *        0.24110665 = 207.38 B: put/offload/short to 207.
 *   get: get/bcopy 1.240 + 0.2822133x against get/zcopy 1.290 +
 *        0.04110665x: the same crossing, get/bcopy to 207.
 */
static void assert_table(const psel_mock_ep_t *ep, psel_op_t op,
                         const char *const *names, const size_t *last,
                         unsigned count)
{
    const psel_proto_t *protos[PSEL_SELECT_MAX_PROTOS];
    const psel_select_table_t *table;
    psel_select_t select;
    unsigned i;

    for (i = 0; i < psel_num_builtin_protos; ++i) {
        protos[i] = psel_builtin_protos[i];
    }
    assert_int_equal(psel_select_init(&select, protos, psel_num_builtin_protos,
                                      &ep->sets, &config), UCS_OK);
    assert_int_equal(psel_select_build(&select, contig(op), &table), UCS_OK);
    assert_int_equal(table->count, count);
    for (i = 0; i < count; ++i) {
        assert_string_equal(table->elems[i].proto->name, names[i]);
        assert_int_equal(table->elems[i].max_length, last[i]);
    }
    psel_select_cleanup(&select);
}

static void test_tables(void **state)
{
    static const char *const put_shm[] = {"put/am/bcopy", "put/offload/zcopy"};
    static const size_t put_shm_last[] = {5168, SIZE_MAX};
    static const char *const get_shm[] = {"get/am/bcopy", "get/zcopy"};
    static const size_t get_shm_last[] = {5117, SIZE_MAX};
    static const char *const put_ib[]  = {"put/offload/short",
                                          "put/offload/zcopy"};
    static const char *const get_ib[]  = {"get/bcopy", "get/zcopy"};
    static const size_t ib_last[]      = {207, SIZE_MAX};
    static const char *const put_shm_offload[] = {"put/offload/zcopy"};
    static const char *const get_shm_offload[] = {"get/zcopy"};
    static const size_t all[]          = {SIZE_MAX};
    psel_mock_ep_t ep;

    psel_mock_ep_shm(&ep);
    assert_true(config.prefer_offload); /* UCX_PSEL_PREFER_OFFLOAD=y */
    assert_table(&ep, PSEL_OP_PUT, put_shm_offload, all, 1);
    assert_table(&ep, PSEL_OP_GET, get_shm_offload, all, 1);
    config.prefer_offload = 0;
    assert_table(&ep, PSEL_OP_PUT, put_shm, put_shm_last, 2);
    assert_table(&ep, PSEL_OP_GET, get_shm, get_shm_last, 2);
    config.prefer_offload = 1;
    psel_mock_ep_ib(&ep);
    assert_table(&ep, PSEL_OP_PUT, put_ib, ib_last, 2);
    assert_table(&ep, PSEL_OP_GET, get_ib, ib_last, 2);
}

/*
 * The offload protocols over the mock HCA, on port 1 (the rma lane; the
 * bcopy protocols take the first rma_bw lane, as UCP runs them on one):
 * one latency (600), the send overhead (40), a copy in (0.2 ns/B) and the
 * wire of one port (0.0822133 ns/B):
 *   put/offload/short: 0.640 us + 0.2822133 ns/B up to 220 B;
 *   put/offload/bcopy: the same to one fragment (8192 B); each further
 *     fragment costs the initiator 40 ns more: + 40 / 8192 = 0.0048828
 *     ns/B;
 *   get/bcopy: two latencies, the initiator copies out: 1.240 us +
 *     0.2822133 ns/B to 8192 B, then + 0.0048828 ns/B.
 */
static void test_offload_ib(void **state)
{
    psel_proto_caps_t caps;
    psel_mock_ep_t ep;

    psel_mock_ep_ib(&ep);
    assert_int_equal(proto_init("put/offload/short", &ep, PSEL_OP_PUT, &caps),
                     UCS_OK);
    assert_string_equal(caps.desc, "rc_mlx5/mlx5_0:1");
    assert_int_equal(caps.ranges[caps.num_ranges - 1].max_length, 220);
    assert_single(&caps, 220, 0.640, 0.2822133);

    assert_int_equal(proto_init("put/offload/bcopy", &ep, PSEL_OP_PUT, &caps),
                     UCS_OK);
    assert_string_equal(caps.desc, "rc_mlx5/mlx5_0:1");
    assert_single(&caps, 8192, 0.640, 0.2822133);
    assert_single(&caps, SIZE_MAX, 0.640, 0.2822133 + 0.0048828);

    assert_int_equal(proto_init("get/bcopy", &ep, PSEL_OP_GET, &caps),
                     UCS_OK);
    assert_single(&caps, 8192, 1.240, 0.2822133);
    assert_single(&caps, SIZE_MAX, 1.240, 0.2822133 + 0.0048828);

}

/*
 * Two rails of one HCA, put and get zero-copy on both ports: the bytes
 * split in halves, the wire at the summed bandwidth, 1e9 / (23200 x
 * 1048576) = 0.04110665 ns/B; one memory domain registers once (50 ns);
 * one latency of 600 and the send overhead 40:
 *   put: 0.690 us + 0.04110665 ns/B up to 1 GiB (the put_zcopy limit), then
 *        + 40 / 2^30 per byte for the further fragments;
 *   get: 2 x 600 + 50 + 40 = 1.290 us + 0.04110665 ns/B.
 */
static void test_two_rails_ib(void **state)
{
    psel_proto_caps_t caps;
    psel_mock_ep_t ep;

    psel_mock_ep_ib(&ep);
    assert_int_equal(proto_init("put/offload/zcopy", &ep, PSEL_OP_PUT, &caps),
                     UCS_OK);
    assert_string_equal(caps.desc,
                        "rc_mlx5/mlx5_0:1 50% + rc_mlx5/mlx5_0:2 50%");
    assert_single(&caps, 1ul << 30, 0.690, 0.04110665);
    assert_single(&caps, SIZE_MAX, 0.690, 0.04110665 + 40.0 / (1ul << 30));
    assert_int_equal(proto_init("get/zcopy", &ep, PSEL_OP_GET, &caps),
                     UCS_OK);
    assert_single(&caps, 1ul << 30, 1.290, 0.04110665);
}

/*
 * Unequal rails: port 2 at 5800 MB/s, its share a third as the lane
 * selection gives it by bandwidth (11600 : 5800 = 2 : 1). The wire moves
 * the bytes at the sum, 1e9 / (17400 x 1048576) = 0.0548089 ns/B, each
 * lane its share.
 */
static void test_unequal_rails_ib(void **state)
{
    psel_proto_caps_t caps;
    psel_lane_set_t *set;
    psel_mock_ep_t ep;

    psel_mock_ep_ib(&ep);
    ep.lanes[1].bandwidth = 5800.0 * UCS_MBYTE;
    set                   = &ep.sets.role[PSEL_LANE_ROLE_RMA_BW];
    set->shares[0]        = 2.0 / 3;
    set->shares[1]        = 1.0 / 3;
    assert_int_equal(proto_init("put/offload/zcopy", &ep, PSEL_OP_PUT, &caps),
                     UCS_OK);
    assert_string_equal(caps.desc,
                        "rc_mlx5/mlx5_0:1 67% + rc_mlx5/mlx5_0:2 33%");
    assert_single(&caps, 1ul << 30, 0.690, 0.0548089);

    /* with one lane for put and get allowed (UCX_PSEL_MAX_RMA_LANES=1, its
     * default), the faster alone: 11600 MB/s, 1e9 / (11600 x 1048576) =
     * 0.0822133 ns/B */
    config.max_rma_lanes = 1;
    assert_int_equal(proto_init("get/zcopy", &ep, PSEL_OP_GET, &caps),
                     UCS_OK);
    config.max_rma_lanes = 2;
    assert_string_equal(caps.desc, "rc_mlx5/mlx5_0:1");
    assert_single(&caps, 1ul << 30, 1.290, 0.0822133);
}

/* Without put or get zero-copy on the rma_bw lane, the operation still has
 * its protocol by active messages, and says why the other is out */
static void test_no_rma_lane(void **state)
{
    psel_proto_caps_t caps;
    psel_mock_ep_t ep;

    psel_mock_ep_shm(&ep);
    ep.lanes[1].caps &= ~PSEL_LANE_CAP_GET_ZCOPY;
    assert_int_equal(proto_init("get/zcopy", &ep, PSEL_OP_GET, &caps),
                     UCS_ERR_UNSUPPORTED);
    assert_string_equal(caps.desc, "rma_bw lane cma/memory has no get_zcopy");
    assert_int_equal(proto_init("get/am/bcopy", &ep, PSEL_OP_GET, &caps),
                     UCS_OK);
}

/*
 * protosel's active-message protocols take their tag twins' lanes and
 * lines (docs/decisions.md says where UCP's receive of an active message
 * differs), and have no data path. Eager copies stop at one fragment:
 * beyond it UCP assembles the message in an allocated buffer. Over the
 * mock HCA: am_bcopy's 8256 B less the 32-byte header of a first eager
 * fragment, 8224 B; the same for am_zcopy. Eager short: 2046 B less the
 * 8-byte tag.
 */
static void test_am_lines_are_tag_lines(void **state)
{
    static const struct {
        const char *am, *tag;
        size_t      largest;
    } pairs[] = {
        {"am/egr/short", "egr/short", 2046 - 8},
        {"am/egr/bcopy", "egr/bcopy", 8224},
        {"am/egr/zcopy", "egr/zcopy", 8224},
        {"am/rndv/am", "rndv/am", SIZE_MAX},
        {"am/rndv/get", "rndv/get", SIZE_MAX},
        {"am/rndv/put", "rndv/put", SIZE_MAX}
    };
    psel_proto_caps_t am, tag;
    psel_mock_ep_t ep;
    unsigned i, r;

    psel_mock_ep_ib(&ep);
    for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); ++i) {
        assert_int_equal(proto_init(pairs[i].am, &ep, PSEL_OP_AM_SEND, &am),
                         UCS_OK);
        assert_int_equal(proto_init(pairs[i].tag, &ep, PSEL_OP_TAG_SEND, &tag),
                         UCS_OK);
        assert_string_equal(psel_proto_lines_name(builtin(pairs[i].am)),
                            pairs[i].tag);
        assert_int_equal(am.ranges[am.num_ranges - 1].max_length,
                         pairs[i].largest);
        assert_true(am.num_ranges <= tag.num_ranges);
        for (r = 0; r < am.num_ranges; ++r) {
            assert_memory_equal(am.ranges[r].perf, tag.ranges[r].perf,
                                sizeof(am.ranges[r].perf));
        }
        assert_string_equal(am.desc, tag.desc);
        assert_true(builtin(pairs[i].am)->progress == NULL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_lines_shm),
        cmocka_unit_test(test_get_lines_shm),
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_offload_ib),
        cmocka_unit_test(test_two_rails_ib),
        cmocka_unit_test(test_unequal_rails_ib),
        cmocka_unit_test(test_no_rma_lane),
        cmocka_unit_test(test_am_lines_are_tag_lines)
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
