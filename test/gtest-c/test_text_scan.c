/*
 * Tests of the one number scanner (lane_select/text_scan.h): the grammar as a
 * table of accepted and rejected texts with their values, the error format
 * FILE:LINE:COLUMN, and the recogniser of text kinds (text_kind.h).
 */
#include "test_util.h"

#include <lane_select/text_kind.h>
#include <lane_select/text_scan.h>

#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

static void test_scan_double_grammar(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int        ok;
        double     value;  /* hand-written: what the text means */
        size_t     used;   /* characters consumed, blanks included */
    } cases[] = {
        {"0", 1, 0.0, 1},
        {"12179.00", 1, 12179.0, 8},
        {"  600 nsec", 1, 600.0, 5},
        {"1.5e-06", 1, 1.5e-6, 7},
        {"1.5E+3x", 1, 1500.0, 6},
        {"2.", 1, 2.0, 2},
        {"1e", 1, 1.0, 1},           /* "e" without digits is not a exponent */
        {"7/ppn", 1, 7.0, 1},
        {"1,5", 1, 1.0, 1},          /* the comma is not a decimal point */
        {"4.9406564584124654e-324", 1, 4.9406564584124654e-324, 23},
        {"1.7976931348623157e308", 1, DBL_MAX, 22},
        {"", 0, 0, 0},
        {"-1", 0, 0, 0},
        {"+1", 0, 0, 0},
        {".5", 0, 0, 0},
        {"inf", 0, 0, 0},
        {"nan", 0, 0, 0},
        {"1e999", 0, 0, 0},          /* overflow */
        {"x1", 0, 0, 0},
    };
    const char *p;
    double value;
    unsigned i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        print_message("'%s'\n", cases[i].text);
        p     = cases[i].text;
        value = -42;
        assert_int_equal(psel_scan_double(&p, &value), cases[i].ok);
        if (cases[i].ok) {
            assert_true(value == cases[i].value);
            assert_int_equal(p - cases[i].text, cases[i].used);
        } else {
            /* untouched on failure */
            assert_true(p == cases[i].text);
            assert_true(value == -42);
        }
    }

    /* hex floats: the grammar stops at 'x', a whole-string scan refuses */
    assert_false(psel_scan_double_all("0x1p3", &value));
    assert_true(psel_scan_double_all(" 0.25 ", &value) && (value == 0.25));
    assert_false(psel_scan_double_all("0.25 s", &value));
}

static void test_scan_u64(void **state)
{
    (void)state;
    uint64_t value;
    const char *p;

    p = "18446744073709551615 left";
    assert_true(psel_scan_u64(&p, &value));
    assert_true(value == UINT64_MAX);
    assert_string_equal(p, " left");

    p = "18446744073709551616";
    assert_false(psel_scan_u64(&p, &value));
    p = "-5";
    assert_false(psel_scan_u64(&p, &value));
    assert_true(psel_scan_u64_all(" 42\t", &value) && (value == 42));
    assert_false(psel_scan_u64_all("42k", &value));
    assert_false(psel_scan_u64_all("0x10", &value));
}

static void test_text_error_format(void **state)
{
    (void)state;
    static const char line[] = "#   latency: 600 nsec + 1 * M   ";
    psel_text_pos_t pos      = {"dump.txt", 7, line};

    psel_test_log_capture_start();
    psel_text_error(&pos, strchr(line, 'M'), "'N', the number of endpoints");
    /* column 29 counted by hand: '#' is 1, 'M' the 29th character */
    psel_assert_log_contains("dump.txt:7:29: expected 'N', the number of "
                             "endpoints, found 'M'");
    psel_test_log_clear();
    psel_text_error(&pos, line + strlen(line) - 2, "more");
    psel_assert_log_contains("dump.txt:7:31: expected more, found end of line");
    psel_test_log_clear();
    psel_text_error(&pos, NULL, "a block");
    psel_assert_log_contains("dump.txt:7: expected a block, found end of input");
    psel_test_log_capture_stop();
}

static psel_text_kind_t kind_of(const char *text)
{
    psel_text_kind_detector_t det;
    char line[512];
    const char *nl;

    memset(&det, 0, sizeof(det));
    for (; *text != '\0'; text = (*nl != '\0') ? nl + 1 : nl) {
        nl = strchr(text, '\n');
        if (nl == NULL) {
            nl = text + strlen(text);
        }
        snprintf(line, sizeof(line), "%.*s", (int)(nl - text), text);
        psel_text_kind_feed(&det, line);
    }
    return psel_text_kind_result(&det);
}

static void test_text_kinds(void **state)
{
    (void)state;

    assert_int_equal(kind_of("# Memory domain: x\n#   Transport: t\n"
                             "#  bandwidth: 1 MB/sec\n"),
                     PSEL_TEXT_KIND_UCX_INFO_D);
    assert_int_equal(kind_of("Memory domain: x\n   Transport: t\n"),
                     PSEL_TEXT_KIND_UCX_INFO_D);
    /* ucx_info -v -d: the version lines do not outweigh the dump */
    assert_int_equal(kind_of("# Library version: 1.16.0\n# Memory domain: x\n"
                             "# Transport: t\n# Device: d\n"),
                     PSEL_TEXT_KIND_UCX_INFO_D);
    assert_int_equal(kind_of("|     0..92 | eager short | sysv/memory |\n"
                             "| 93..inf | rendezvous | cma/memory |\n"),
                     PSEL_TEXT_KIND_PROTO_TABLE);
    assert_int_equal(kind_of("# tag_send: 0..<egr/short>..227..<rndv>..(inf)\n"),
                     PSEL_TEXT_KIND_UCX_INFO_E_V1);
    assert_int_equal(kind_of("protosel-snapshot 1\nresources = 0\n"),
                     PSEL_TEXT_KIND_SNAPSHOT);
    assert_int_equal(kind_of("hello\n"), PSEL_TEXT_KIND_UNKNOWN);
    assert_non_null(strstr(psel_text_kind_advice(PSEL_TEXT_KIND_PERFTEST),
                           "ucx_info -d"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_double_grammar),
        cmocka_unit_test(test_scan_u64),
        cmocka_unit_test(test_text_error_format),
        cmocka_unit_test(test_text_kinds),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
