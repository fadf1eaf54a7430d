/*
 * Every text format protosel reads and writes, under a comma-decimal
 * LC_NUMERIC (de_DE.UTF-8), as a host application may set it: the imported
 * `ucx_info -d` dumps, resource snapshots and calibration files must give
 * exactly what they give in the C locale, and files must be written with '.';
 * every dump (text and JSON tables, resources, lanes, configuration) and
 * the calibration file are written byte for byte as in the C locale.
 *
 * The locale: de_DE.UTF-8 if the machine has it; otherwise it is built into
 * a private directory with localedef (Debian package "locales") and found
 * through LOCPATH. If neither works the program exits 77 (skip) saying why.
 */
#include "test_util.h"

#include <lane_select/resource_table.h>
#include <lane_select/snapshot.h>
#include <lane_select/ucx_info_import.h>
#include <lane_select/lane_engine.h>
#include <lane_select/reachability.h>
#include <ucp_proto_sel/calib.h>
#include <ucp_proto_sel/dump.h>
#include <ucp_proto_sel/ep_config.h>
#include <ucp_proto_sel/psel_config.h>
#include <ucp_proto_sel/ucx_thresh.h>

#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define COMMA_LOCALE "de_DE.UTF-8"

static const char *fixtures[] = {
    "000-debian12-vm-ucx1.13.1.txt", "001-azure-hbv3-cx6vf-ucx1.17.txt",
    "002-gpu-cx6-hdr-cuda-ucx1.16.txt", "003-centos7-cx-edr-ucx1.6.txt",
    "004-rhel7-4xcx5-edr-nohash-ucx1.13.txt",
    "048-centos8-cx5-fdr56-ucx1.9.txt"
};

static char locale_dir[] = "/tmp/psel_locale_XXXXXX";
static int  locale_dir_made;

static int comma_locale_set(void)
{
    return (setlocale(LC_NUMERIC, COMMA_LOCALE) != NULL) &&
           !strcmp(localeconv()->decimal_point, ",");
}

/* de_DE.UTF-8 as LC_NUMERIC, built privately if the machine lacks it;
 * on failure the reason is in @a why */
static int use_comma_locale(char *why, size_t max)
{
    char cmd[512];
    int rc;

    if (comma_locale_set()) {
        return 1;
    }
    if (access("/usr/share/i18n/locales/de_DE", R_OK) != 0) {
        snprintf(why, max, "%s is not installed and its source "
                 "/usr/share/i18n/locales/de_DE is missing (install the "
                 "Debian package 'locales'; ./dev.sh does)", COMMA_LOCALE);
        return 0;
    }
    if (mkdtemp(locale_dir) == NULL) {
        snprintf(why, max, "mkdtemp(%s) failed: %m", locale_dir);
        return 0;
    }
    locale_dir_made = 1;
    snprintf(cmd, sizeof(cmd), "timeout 120 localedef -i de_DE -f UTF-8 "
             "%s/%s 2>&1", locale_dir, COMMA_LOCALE);
    rc = system(cmd);
    if (rc != 0) {
        snprintf(why, max, "localedef -i de_DE -f UTF-8 into %s failed "
                 "(status %d)", locale_dir, rc);
        return 0;
    }
    setenv("LOCPATH", locale_dir, 1);
    if (!comma_locale_set()) {
        snprintf(why, max, "setlocale(LC_NUMERIC, \"%s\") fails even with "
                 "LOCPATH=%s", COMMA_LOCALE, locale_dir);
        return 0;
    }
    return 1;
}

static void remove_locale_dir(void)
{
    char cmd[256];

    if (locale_dir_made) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", locale_dir);
        if (system(cmd) != 0) {
            fprintf(stderr, "could not remove %s\n", locale_dir);
        }
    }
}

static void import_in(const char *locale, const char *name,
                      psel_resource_table_t *table)
{
    assert_non_null(setlocale(LC_NUMERIC, locale));
    memset(table, 0, sizeof(*table));
    assert_int_equal(psel_ucx_info_import_file(psel_test_fixture_path(name),
                                               table), UCS_OK);
}

/* The premise: in this locale the C library itself reads "0.5" as 0 */
static void test_locale_breaks_plain_strtod(void **state)
{
    (void)state;
    assert_non_null(setlocale(LC_NUMERIC, COMMA_LOCALE));
    assert_true(strtod("0.5", NULL) == 0.0);
    assert_true(strtod("0,5", NULL) == 0.5);
}

static void test_every_dump_imports_as_in_c_locale(void **state)
{
    (void)state;
    psel_resource_table_t c_table, comma_table;
    unsigned i, r;

    for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); ++i) {
        print_message("%s\n", fixtures[i]);
        import_in("C", fixtures[i], &c_table);
        import_in(COMMA_LOCALE, fixtures[i], &comma_table);
        assert_int_equal(c_table.count, comma_table.count);
        for (r = 0; r < c_table.count; ++r) {
            assert_memory_equal(&c_table.resources[r],
                                &comma_table.resources[r],
                                sizeof(psel_resource_t));
        }
        free(c_table.resources);
        free(comma_table.resources);
    }

    /* one value by hand: fixture 000's tcp/lo prints 11.91 MB/sec */
    import_in(COMMA_LOCALE, fixtures[0], &comma_table);
    assert_true(fabs(psel_resource_table_find(&comma_table, "tcp/lo")->bw_shared -
                     11.91 * 1048576.0) < 1e-3);
    free(comma_table.resources);
}

static char *save_snapshot(const psel_resource_table_t *table, size_t *size)
{
    char *text = NULL;
    FILE *f    = open_memstream(&text, size);

    assert_non_null(f);
    assert_int_equal(psel_snapshot_save(table, f), UCS_OK);
    fclose(f);
    return text;
}

static void test_snapshot_round_trip(void **state)
{
    (void)state;
    psel_resource_table_t table, loaded;
    char *c_text, *comma_text;
    size_t c_size, comma_size;
    unsigned r;
    FILE *f;

    import_in("C", fixtures[1], &table);
    c_text = save_snapshot(&table, &c_size);
    assert_non_null(setlocale(LC_NUMERIC, COMMA_LOCALE));
    comma_text = save_snapshot(&table, &comma_size);
    /* the same bytes: numbers written with '.' */
    assert_int_equal(c_size, comma_size);
    assert_memory_equal(c_text, comma_text, c_size);
    assert_non_null(strstr(comma_text, "latency.c = 5.2120000000000002e-06"));

    f = fmemopen(c_text, c_size, "r");
    memset(&loaded, 0, sizeof(loaded));
    assert_int_equal(psel_snapshot_load(f, "snap", &loaded), UCS_OK);
    fclose(f);
    assert_int_equal(loaded.count, table.count);
    for (r = 0; r < table.count; ++r) {
        assert_memory_equal(&loaded.resources[r], &table.resources[r],
                            sizeof(psel_resource_t));
    }
    psel_resource_table_cleanup(&loaded);
    free(table.resources);
    free(c_text);
    free(comma_text);
}

/* A calibration line over tcp/lo fitted on three points */
static psel_calib_line_t *add_line(psel_calib_t *calib)
{
    const size_t sizes[] = {8, 1024, 65536};
    psel_calib_line_t *line;
    unsigned i;

    line = psel_calib_line_get(calib, "egr/bcopy", "tcp/lo",
                               UCS_MEMORY_TYPE_HOST);
    assert_non_null(line);
    for (i = 0; i < 3; ++i) {
        assert_int_equal(psel_calib_line_add_point(line, sizes[i],
                                                   1.25e-6 + sizes[i] * 2.5e-10,
                                                   0.75e-6 + sizes[i] * 2.5e-10),
                         UCS_OK);
    }
    assert_int_equal(psel_calib_line_fit(line, NULL, 0), UCS_OK);
    return line;
}

static void test_calibration_round_trip(void **state)
{
    (void)state;
    psel_calib_t calib, loaded;
    psel_calib_line_t *line;
    char *text        = NULL;
    size_t size;
    unsigned i;
    FILE *f;

    assert_non_null(setlocale(LC_NUMERIC, COMMA_LOCALE));
    psel_calib_init(&calib);
    calib.duration = 12.75;
    line = add_line(&calib);

    f = open_memstream(&text, &size);
    assert_int_equal(psel_calib_write(&calib, f), UCS_OK);
    fclose(f);
    assert_non_null(strstr(text, "duration 12.75"));
    assert_null(strstr(text, "12,75"));

    memset(&loaded, 0, sizeof(loaded));
    assert_int_equal(psel_calib_parse(text, size, "calib", &loaded), UCS_OK);
    assert_true(loaded.duration == 12.75);
    assert_int_equal(loaded.num_lines, 1);
    assert_int_equal(loaded.lines[0].num_points, 3);
    for (i = 0; i < 3; ++i) {
        assert_true(fabs(loaded.lines[0].points[i].time[PSEL_PERF_SINGLE] -
                         line->points[i].time[PSEL_PERF_SINGLE]) <
                    1e-9 * line->points[i].time[PSEL_PERF_SINGLE]);
    }
    psel_calib_cleanup(&loaded);
    psel_calib_cleanup(&calib);
    free(text);
}

/* Every writer of an endpoint's text and JSON dumps, of the resources and
 * of the configuration, to one memory stream */
static char *write_dumps(const psel_resource_table_t *table,
                         const psel_config_t *config, size_t *size)
{
    const psel_select_table_t *sel;
    psel_ep_params_t params;
    psel_ep_config_t *ep = calloc(1, sizeof(*ep));
    char *text           = NULL;
    FILE *f              = open_memstream(&text, size);

    assert_non_null(ep);
    assert_non_null(f);
    memset(&params, 0, sizeof(params));
    params.features = PSEL_FEATURE_TAG;
    params.local    = table;
    params.remote   = table;
    params.locality = PSEL_PEER_SAME_HOST;
    params.config   = config;
    assert_int_equal(psel_ep_config_init(ep, &params), UCS_OK);
    sel = ep->select.fast[PSEL_OP_TAG_SEND];
    assert_non_null(sel);

    psel_resource_table_print(f, table);
    psel_snapshot_print_json(table, f);
    psel_ep_lanes_print(f, &ep->lanes);
    psel_lanes_print_candidates(f, table, table, &ep->lane_params,
                                &ep->lanes);
    psel_select_dump_protos(f, &ep->select, sel);
    psel_select_dump(f, &ep->select, sel, "ep", PSEL_DUMP_EXPLAIN);
    psel_select_dump_json(f, &ep->select, sel, "ep");
    psel_ucx_thresh_dump(f, &ep->select, sel);
    psel_config_print(f, config);
    psel_config_print_json(f, config);
    fclose(f);
    psel_ep_config_cleanup(ep);
    free(ep);
    return text;
}

/* "0.99" and "0,99": a decimal number written with '.', with ',' */
static int has_decimal(const char *text, char point)
{
    const char *p;

    for (p = text + 1; (p = strchr(p, point)) != NULL; ++p) {
        if ((p[-1] >= '0') && (p[-1] <= '9') && (p[1] >= '0') && (p[1] <= '9')) {
            return 1;
        }
    }
    return 0;
}

static void test_dumps_as_in_c_locale(void **state)
{
    (void)state;
    psel_resource_table_t table;
    psel_config_t config;
    char *c_text, *comma_text;
    size_t c_size, comma_size;

    /* a bcopy bandwidth with decimals, as the config dump writes it back
     * (read in the C locale: libucs's own parser reads with sscanf) */
    assert_non_null(setlocale(LC_NUMERIC, "C"));
    setenv("UCX_PSEL_BCOPY_BW", "5800.5MBs", 1);
    assert_int_equal(psel_config_read(&config), UCS_OK);
    unsetenv("UCX_PSEL_BCOPY_BW");
    import_in("C", fixtures[0], &table);

    c_text = write_dumps(&table, &config, &c_size);
    assert_true(has_decimal(c_text, '.'));
    assert_non_null(setlocale(LC_NUMERIC, COMMA_LOCALE));
    comma_text = write_dumps(&table, &config, &comma_size);
    assert_non_null(setlocale(LC_NUMERIC, "C"));

    /* the same bytes, so the JSON is as valid as in the C locale */
    if ((c_size != comma_size) || memcmp(c_text, comma_text, c_size)) {
        fail_msg("the dumps differ under %s; comma decimals: %s",
                 COMMA_LOCALE, has_decimal(comma_text, ',') ? "yes" : "no");
    }
    assert_non_null(strstr(comma_text, "\"rndv_bias\": 0.9"));
    free(c_text);
    free(comma_text);
    psel_config_release(&config);
    free(table.resources);
}

/* Every line of a calibration file (header, noise, rails, cost lines) is
 * written the same in both locales */
static void test_calibration_writer_as_in_c_locale(void **state)
{
    (void)state;
    psel_calib_t calib;
    char *text[2] = {NULL, NULL};
    size_t size[2];
    unsigned pass;
    FILE *f;

    psel_calib_init(&calib);
    calib.duration          = 12.75;
    calib.has_noise         = 1;
    calib.noise.spread      = 0.0125;
    calib.noise.max_spread  = 0.4375;
    calib.noise.steal       = 0.015625;
    calib.noise.load        = 0.5;
    calib.noise.refused     = 2;
    assert_int_equal(psel_calib_rail_set(&calib, "tcp/lo", "0002c0a80001",
                                         10.5e-6, 1.25e9), UCS_OK);
    add_line(&calib);

    for (pass = 0; pass < 2; ++pass) {
        assert_non_null(setlocale(LC_NUMERIC, pass ? COMMA_LOCALE : "C"));
        f = open_memstream(&text[pass], &size[pass]);
        assert_int_equal(psel_calib_write(&calib, f), UCS_OK);
        fclose(f);
    }
    assert_non_null(setlocale(LC_NUMERIC, "C"));
    /* created, hostname: the same within the second */
    assert_int_equal(size[0], size[1]);
    assert_memory_equal(text[0], text[1], size[0]);
    assert_false(has_decimal(text[1], ','));
    assert_non_null(strstr(text[1], "12.75"));
    psel_calib_cleanup(&calib);
    free(text[0]);
    free(text[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_locale_breaks_plain_strtod),
        cmocka_unit_test(test_every_dump_imports_as_in_c_locale),
        cmocka_unit_test(test_snapshot_round_trip),
        cmocka_unit_test(test_calibration_round_trip),
        cmocka_unit_test(test_dumps_as_in_c_locale),
        cmocka_unit_test(test_calibration_writer_as_in_c_locale),
    };
    char why[512];
    int ret;

    if (!use_comma_locale(why, sizeof(why))) {
        printf("SKIP test_locale: %s\n", why);
        remove_locale_dir();
        return 77;
    }
    ret = cmocka_run_group_tests(tests, NULL, NULL);
    setlocale(LC_NUMERIC, "C");
    remove_locale_dir();
    return ret;
}
