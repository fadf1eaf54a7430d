/*
 * Fuzz harness for the calibration file parser: any input must be either
 * rejected (UCS_ERR_INVALID_PARAM, or UCS_ERR_UNSUPPORTED for another format
 * version) or parsed into a calibration that writes and parses back to an
 * equal one (names, sizes and header exact, numbers within 1e-9 relative),
 * whose text is then stable: writing it again gives the same bytes. Built
 * with replay_main.c for `make check`, or with libFuzzer (see README.md).
 */
#include <ucp_proto_sel/calib.h>

#include <ucs/debug/log_def.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ucs_log_func_rc_t
fuzz_quiet_log(const char *file, unsigned line, const char *function,
               ucs_log_level_t level,
               const ucs_log_component_config_t *comp_conf,
               const char *message, va_list ap)
{
    /* rejections are expected: keep the output readable */
    return UCS_LOG_FUNC_RC_STOP;
}

static void fuzz_check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_calib: %s\n", what);
        abort();
    }
}

static int fuzz_close(double a, double b)
{
    return (isnan(a) && isnan(b)) || (fabs(a - b) <= 1e-9 * fabs(b));
}

static char *fuzz_write(const psel_calib_t *calib, size_t *len)
{
    char *text  = NULL;
    FILE *stream = open_memstream(&text, len);

    fuzz_check(stream != NULL, "open_memstream");
    fuzz_check(psel_calib_write(calib, stream) == UCS_OK,
               "a parsed calibration does not write");
    fclose(stream);
    return text;
}

static void fuzz_compare(const psel_calib_t *a, const psel_calib_t *b)
{
    const psel_calib_line_t *la, *lb;
    unsigned i, j, t;

    fuzz_check(!strcmp(a->hostname, b->hostname) &&
               !strcmp(a->machine_id, b->machine_id) &&
               !strcmp(a->ucx_version, b->ucx_version) &&
               !strcmp(a->created, b->created) && !strcmp(a->mode, b->mode) &&
               fuzz_close(a->duration, b->duration), "header changed");
    fuzz_check((a->has_noise == b->has_noise) &&
               (!a->has_noise ||
                (fuzz_close(a->noise.spread, b->noise.spread) &&
                 fuzz_close(a->noise.max_spread, b->noise.max_spread) &&
                 fuzz_close(a->noise.steal, b->noise.steal) &&
                 fuzz_close(a->noise.load, b->noise.load) &&
                 (a->noise.refused == b->noise.refused))), "noise changed");
    fuzz_check(a->num_rails == b->num_rails, "number of rails changed");
    for (i = 0; i < a->num_rails; ++i) {
        fuzz_check(!strcmp(a->rails[i].lane, b->rails[i].lane) &&
                   !strcmp(a->rails[i].peer, b->rails[i].peer) &&
                   fuzz_close(a->rails[i].latency, b->rails[i].latency) &&
                   fuzz_close(a->rails[i].bandwidth, b->rails[i].bandwidth),
                   "rail changed");
    }
    fuzz_check(a->num_lines == b->num_lines, "number of lines changed");
    for (i = 0; i < a->num_lines; ++i) {
        la = &a->lines[i];
        lb = &b->lines[i];
        fuzz_check(!strcmp(la->proto, lb->proto) &&
                   !strcmp(la->lanes, lb->lanes) &&
                   (la->mem_type == lb->mem_type) &&
                   (la->num_ranges == lb->num_ranges) &&
                   (la->num_points == lb->num_points), "line changed");
        for (j = 0; j < la->num_ranges; ++j) {
            fuzz_check(la->ranges[j].max_length == lb->ranges[j].max_length,
                       "range end changed");
            for (t = 0; t < PSEL_PERF_LAST; ++t) {
                fuzz_check(fuzz_close(la->ranges[j].perf[t].c,
                                      lb->ranges[j].perf[t].c) &&
                           fuzz_close(la->ranges[j].perf[t].m,
                                      lb->ranges[j].perf[t].m),
                           "range cost changed");
            }
        }
        for (j = 0; j < la->num_points; ++j) {
            fuzz_check(la->points[j].size == lb->points[j].size,
                       "point size changed");
            for (t = 0; t < PSEL_PERF_LAST; ++t) {
                fuzz_check(fuzz_close(la->points[j].time[t],
                                      lb->points[j].time[t]),
                           "point time changed");
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int initialized;
    psel_calib_t calib, again;
    char *text, *text2;
    size_t len, len2;
    ucs_status_t status;

    if (!initialized) {
        ucs_log_push_handler(fuzz_quiet_log);
        initialized = 1;
    }

    status = psel_calib_parse((const char*)data, size, "fuzz", &calib);
    if (status != UCS_OK) {
        fuzz_check((status == UCS_ERR_INVALID_PARAM) ||
                   (status == UCS_ERR_UNSUPPORTED), "unexpected status");
        return 0;
    }

    text = fuzz_write(&calib, &len);
    fuzz_check(psel_calib_parse(text, len, "fuzz-written", &again) == UCS_OK,
               "written text does not parse");
    fuzz_compare(&calib, &again);

    text2 = fuzz_write(&again, &len2);
    fuzz_check((len == len2) && !memcmp(text, text2, len),
               "written text not stable");

    free(text2);
    free(text);
    psel_calib_cleanup(&again);
    psel_calib_cleanup(&calib);
    return 0;
}
