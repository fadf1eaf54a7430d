/*
 * Unit tests of the perf model's streaming cost: the upper envelope of a
 * protocol's stage lines (psel_perf_envelope), and the perf ranges a
 * protocol gets from its stages (psel_proto_add_range): single is the
 * latency plus the stages, multi the envelope of UCX's send, wire and
 * receive stages, one range per stage that paces the stream.
 * Every expected size below is computed by hand from the lines in the
 * comment next to it.
 */
#include <ucp_proto_sel/perf.h>
#include <ucp_proto_sel/proto_common.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#define US 1e-6
#define NS 1e-9

static ucs_linear_func_t line(double c, double m)
{
    return ucs_linear_func_make(c, m);
}

static void assert_rel_close(double a, double b, double tol)
{
    if (!(fabs(a - b) <= tol * fabs(b))) {
        fail_msg("%.12g is not within %g of %.12g", a, tol, b);
    }
}

/* Three stages whose lines cross, each the slowest somewhere (crossings
 * between integers: an exact tie is up to rounding):
 *   A = 10 us            B = 5.9995 us + 1 ns/B        C = 2 ns/B
 * A = B at 4000.5 B, A = C at 5000 B, B = C at 5999.5 B: A paces up to
 * 4000, B from 4001 to 5999, C from 6000 on. */
static void test_envelope_three_pieces(void **state)
{
    ucs_linear_func_t lines[] = {line(10 * US, 0), line(5.9995 * US, 1 * NS),
                                 line(0, 2 * NS)};
    psel_perf_segment_t seg[3];
    unsigned n;

    n = psel_perf_envelope(lines, 3, 0, SIZE_MAX, seg);
    assert_int_equal(n, 3);
    assert_int_equal(seg[0].index, 0);
    assert_int_equal(seg[0].max_length, 4000);
    assert_int_equal(seg[1].index, 1);
    assert_int_equal(seg[1].max_length, 5999);
    assert_int_equal(seg[2].index, 2);
    assert_int_equal(seg[2].max_length, SIZE_MAX);

    /* within lo..hi only: at 4500 B is the largest (10.4995 us), C
     * overtakes it only after hi */
    n = psel_perf_envelope(lines, 3, 4500, 5500, seg);
    assert_int_equal(n, 1);
    assert_int_equal(seg[0].index, 1);
    assert_int_equal(seg[0].max_length, 5500);
}

/* A crossing between two integers: A = 10 us, C = 3 ns/B meet at
 * 3333.3 B: A up to 3333 (C = 9.999 us there), C from 3334 (10.002 us).
 * A line below the others everywhere (D = 1 us + 1 ns/B) never paces. */
static void test_envelope_fractional_crossing(void **state)
{
    ucs_linear_func_t lines[] = {line(1 * US, 1 * NS), line(10 * US, 0),
                                 line(0, 3 * NS)};
    psel_perf_segment_t seg[3];
    unsigned n;

    n = psel_perf_envelope(lines, 3, 0, SIZE_MAX, seg);
    assert_int_equal(n, 2);
    assert_int_equal(seg[0].index, 1);
    assert_int_equal(seg[0].max_length, 3333);
    assert_int_equal(seg[1].index, 2);
    assert_int_equal(seg[1].max_length, SIZE_MAX);
}

/* Equal at the start: the steeper line, which stays the largest, is taken;
 * parallel lines: the higher one, one piece; one line: one piece. */
static void test_envelope_ties_and_parallel(void **state)
{
    ucs_linear_func_t tie[]      = {line(1 * US, 0), line(1 * US, 1 * NS)};
    ucs_linear_func_t parallel[] = {line(1 * US, 2 * NS), line(3 * US, 2 * NS)};
    psel_perf_segment_t seg[2];

    assert_int_equal(psel_perf_envelope(tie, 2, 0, 100, seg), 1);
    assert_int_equal(seg[0].index, 1);
    assert_int_equal(seg[0].max_length, 100);

    assert_int_equal(psel_perf_envelope(parallel, 2, 0, SIZE_MAX, seg), 1);
    assert_int_equal(seg[0].index, 1);

    assert_int_equal(psel_perf_envelope(parallel, 1, 7, 7, seg), 1);
    assert_int_equal(seg[0].index, 0);
    assert_int_equal(seg[0].max_length, 7);
}

/*
 * A protocol's ranges from its stages (psel_proto_stages_t), as UCX 1.13
 * builds them: latency in single only, the sender's CPU after its post in
 * multi only, per-fragment CPU in the stage of the host that posts.
 *   latency 10 us; send 2.0003 us + 1 ns/B, send_post 1 us;
 *   wire 1.5 ns/B; recv 1 us + 0.5 ns/B
 * Sizes 0..8192, one fragment:
 *   single = 10 + 2.0003 + 1 us + (1 + 1.5 + 0.5) ns/B = 13.0003 us + 3 ns/B
 *   multi  = max(send 3.0003 us + 1 ns/B, wire 1.5 ns/B, recv 1 us + 0.5
 *            ns/B): recv never paces (below send at 0, flatter than the
 *            wire); send = wire at 3000.3 / 0.5 = 6000.6 B: send up to
 *            6000, the wire from 6001. (The former stages put the latency
 *            and both ends' overheads in one stage: 13.0003 us at 0; the
 *            stream's cost at 0 is the sender's 3.0003 us.)
 * Then 8193..inf in fragments of 8192 B, each after the first costing the
 * sender 2 us: 2 us / 8192 B = 0.244140625 ns/B more in send, in both:
 *   single = 13.0003 us + 3.244140625 ns/B
 *   multi  = send 3.0003 us + 1.244140625 ns/B until the wire overtakes it
 *            at 3000.3 / (1.5 - 1.244140625) = 3000.3 x 512 / 131 =
 *            11726.36 B: send to 11726, the wire from 11727.
 */
static psel_proto_stages_t example_stages(void)
{
    psel_proto_stages_t stages;

    memset(&stages, 0, sizeof(stages));
    stages.latency   = 10 * US;
    stages.send      = line(2.0003 * US, 1 * NS);
    stages.send_post = 1 * US;
    stages.wire      = line(0, 1.5 * NS);
    stages.recv      = line(1 * US, 0.5 * NS);
    stages.frag_send = 2 * US;
    return stages;
}

static void test_add_range_stages_as_ucx(void **state)
{
    psel_proto_stages_t stages = example_stages();
    double frag_m              = 2 * US / 8192;
    psel_proto_caps_t caps;

    memset(&caps, 0, sizeof(caps));
    psel_proto_add_range(&caps, 8192, &stages, SIZE_MAX);
    assert_int_equal(caps.num_ranges, 2);
    assert_int_equal(caps.ranges[0].max_length, 6000);
    assert_int_equal(caps.ranges[1].max_length, 8192);

    /* single: the latency and every stage, the same in both pieces */
    assert_rel_close(caps.ranges[0].perf[PSEL_PERF_SINGLE].c, 13.0003 * US,
                     1e-12);
    assert_rel_close(caps.ranges[0].perf[PSEL_PERF_SINGLE].m, 3 * NS, 1e-12);
    assert_memory_equal(&caps.ranges[0].perf[PSEL_PERF_SINGLE],
                        &caps.ranges[1].perf[PSEL_PERF_SINGLE],
                        sizeof(ucs_linear_func_t));
    /* multi: the sender with its post, then the wire; no latency */
    assert_rel_close(caps.ranges[0].perf[PSEL_PERF_MULTI].c, 3.0003 * US,
                     1e-12);
    assert_rel_close(caps.ranges[0].perf[PSEL_PERF_MULTI].m, 1 * NS, 1e-12);
    assert_true(caps.ranges[1].perf[PSEL_PERF_MULTI].c == 0);
    assert_rel_close(caps.ranges[1].perf[PSEL_PERF_MULTI].m, 1.5 * NS, 1e-12);

    /* the fragmented range: 2 us per 8 KiB in the sender's stage */
    psel_proto_add_range(&caps, SIZE_MAX, &stages, 8192);
    assert_int_equal(caps.num_ranges, 4);
    assert_int_equal(caps.ranges[2].max_length, 11726);
    assert_int_equal(caps.ranges[3].max_length, SIZE_MAX);
    assert_rel_close(caps.ranges[2].perf[PSEL_PERF_SINGLE].c, 13.0003 * US,
                     1e-12);
    assert_rel_close(caps.ranges[2].perf[PSEL_PERF_SINGLE].m,
                     3 * NS + frag_m, 1e-12);
    assert_rel_close(caps.ranges[2].perf[PSEL_PERF_MULTI].c, 3.0003 * US,
                     1e-12);
    assert_rel_close(caps.ranges[2].perf[PSEL_PERF_MULTI].m, 1 * NS + frag_m,
                     1e-12);
    assert_rel_close(caps.ranges[3].perf[PSEL_PERF_MULTI].m, 1.5 * NS, 1e-12);
}

/*
 * The receiver's stage paces when it posts the fragments (rndv/get's
 * reads) and its CPU is the largest. Stages: latency 5 us, send 4 us,
 * recv 5 us + 0.1 ns/B with 0.5 us after its posts and 1 us per further
 * 4096-byte fragment (0.244140625 ns/B), wire 0.5 ns/B; one range 0..inf:
 *   single = 5 + 4 + 5 us + (0.1 + 0.5 + 0.244140625) ns/B
 *   multi  = recv 5.5 us + 0.344140625 ns/B, then the wire from
 *            5500 / 0.155859375 = 35288.2 B: recv to 35288, wire from 35289
 */
static void test_add_range_receiver_posts(void **state)
{
    psel_proto_stages_t stages;
    psel_proto_caps_t caps;

    memset(&stages, 0, sizeof(stages));
    memset(&caps, 0, sizeof(caps));
    stages.latency   = 5 * US;
    stages.send      = line(4 * US, 0);
    stages.wire      = line(0, 0.5 * NS);
    stages.recv      = line(5 * US, 0.1 * NS);
    stages.recv_post = 0.5 * US;
    stages.frag_recv = 1 * US;
    psel_proto_add_range(&caps, SIZE_MAX, &stages, 4096);
    assert_int_equal(caps.num_ranges, 2);
    assert_int_equal(caps.ranges[0].max_length, 35288);
    assert_rel_close(caps.ranges[0].perf[PSEL_PERF_SINGLE].c, 14 * US, 1e-12);
    assert_rel_close(caps.ranges[0].perf[PSEL_PERF_SINGLE].m,
                     0.844140625 * NS, 1e-12);
    assert_rel_close(caps.ranges[0].perf[PSEL_PERF_MULTI].c, 5.5 * US, 1e-12);
    assert_rel_close(caps.ranges[0].perf[PSEL_PERF_MULTI].m,
                     0.344140625 * NS, 1e-12);
    assert_rel_close(caps.ranges[1].perf[PSEL_PERF_MULTI].m, 0.5 * NS, 1e-12);
}

/* A range starts at the protocol's smallest size: a piece that would end
 * below min_length is not made (send 3.0003 us + 1 ns/B meets the wire at
 * 6000.6 B, below 7000) */
static void test_add_range_starts_at_min_length(void **state)
{
    psel_proto_stages_t stages = example_stages();
    psel_proto_caps_t caps;

    memset(&caps, 0, sizeof(caps));
    caps.min_length = 7000;
    psel_proto_add_range(&caps, SIZE_MAX, &stages, SIZE_MAX);
    assert_int_equal(caps.num_ranges, 1);
    assert_rel_close(caps.ranges[0].perf[PSEL_PERF_MULTI].m, 1.5 * NS, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_envelope_three_pieces),
        cmocka_unit_test(test_envelope_fractional_crossing),
        cmocka_unit_test(test_envelope_ties_and_parallel),
        cmocka_unit_test(test_add_range_stages_as_ucx),
        cmocka_unit_test(test_add_range_receiver_posts),
        cmocka_unit_test(test_add_range_starts_at_min_length),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
