/*
 * Unit tests of the perf model's streaming cost: the upper envelope of a
 * protocol's stage lines (psel_perf_envelope), and the perf ranges a
 * protocol gets from its stages (psel_proto_add_range): single is the sum of
 * the stages, multi the envelope, one range per stage that paces the stream.
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
 * A protocol's ranges from crossing stages, a fragment overhead of 2 us per
 * 8 KiB (0.244140625 ns/B), up to 64 KiB:
 *   stages 10.0015 us + 1 ns/B, 3 ns/B; fragments 2 us / 8192 B
 *   single = 10.0015 us + (4 + 0.244140625) ns/B
 *   multi  = max(10.0015 us + 1 ns/B, 3 ns/B, 0.244 ns/B):
 *            the first up to 5000 B (they meet at 5000.75 B), 3 ns/B after.
 * At 5000 B the streaming cost is 15.0015 us; the former bound
 * max(c) + max(m)·x gave 10.0015 us + 3 ns/B · 5000 = 25.0015 us (1.67x).
 */
static void test_add_range_multi_is_the_envelope(void **state)
{
    ucs_linear_func_t stages[] = {line(10.0015 * US, 1 * NS),
                                  line(0, 3 * NS)};
    psel_proto_caps_t caps;
    double frag_m = 2 * US / 8192;

    memset(&caps, 0, sizeof(caps));
    psel_proto_add_range(&caps, 65536, stages, 2, 8192, 2 * US);
    assert_int_equal(caps.num_ranges, 2);
    assert_int_equal(caps.ranges[0].max_length, 5000);
    assert_int_equal(caps.ranges[1].max_length, 65536);

    /* single: the sum, the same in both ranges */
    assert_rel_close(caps.ranges[0].perf[PSEL_PERF_SINGLE].c, 10.0015 * US,
                     1e-12);
    assert_rel_close(caps.ranges[0].perf[PSEL_PERF_SINGLE].m,
                     4 * NS + frag_m, 1e-12);
    assert_memory_equal(&caps.ranges[0].perf[PSEL_PERF_SINGLE],
                        &caps.ranges[1].perf[PSEL_PERF_SINGLE],
                        sizeof(ucs_linear_func_t));

    /* multi: each range the stage that paces it */
    assert_rel_close(ucs_linear_func_apply(caps.ranges[0].perf[PSEL_PERF_MULTI],
                                           5000), 15.0015 * US, 1e-12);
    assert_rel_close(caps.ranges[0].perf[PSEL_PERF_MULTI].m, 1 * NS, 1e-12);
    assert_true(caps.ranges[1].perf[PSEL_PERF_MULTI].c == 0);
    assert_rel_close(caps.ranges[1].perf[PSEL_PERF_MULTI].m, 3 * NS, 1e-12);
    assert_rel_close(ucs_linear_func_apply(caps.ranges[1].perf[PSEL_PERF_MULTI],
                                           5001), 15.003 * US, 1e-12);

    /* a second range continues after the first: unlimited fragments, the
     * same stages: 3 ns/B paces it from its first size */
    psel_proto_add_range(&caps, SIZE_MAX, stages, 2, SIZE_MAX, 0);
    assert_int_equal(caps.num_ranges, 3);
    assert_int_equal(caps.ranges[2].max_length, SIZE_MAX);
    assert_rel_close(caps.ranges[2].perf[PSEL_PERF_MULTI].m, 3 * NS, 1e-12);
    assert_rel_close(caps.ranges[2].perf[PSEL_PERF_SINGLE].m, 4 * NS, 1e-12);
}

/* A range starts at the protocol's smallest size: a piece that would end
 * below min_length is not made */
static void test_add_range_starts_at_min_length(void **state)
{
    ucs_linear_func_t stages[] = {line(10 * US, 0), line(0, 3 * NS)};
    psel_proto_caps_t caps;

    memset(&caps, 0, sizeof(caps));
    caps.min_length = 4000; /* above the crossing at 3333.3 B */
    psel_proto_add_range(&caps, SIZE_MAX, stages, 2, SIZE_MAX, 0);
    assert_int_equal(caps.num_ranges, 1);
    assert_rel_close(caps.ranges[0].perf[PSEL_PERF_MULTI].m, 3 * NS, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_envelope_three_pieces),
        cmocka_unit_test(test_envelope_fractional_crossing),
        cmocka_unit_test(test_envelope_ties_and_parallel),
        cmocka_unit_test(test_add_range_multi_is_the_envelope),
        cmocka_unit_test(test_add_range_starts_at_min_length),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
