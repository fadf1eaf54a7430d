/*
 * The calibration file: writing (atomically, by rename) and parsing with
 * line numbers. Format: docs/calibration.md, "The calibration file".
 */
#include "calib_int.h"

#include <lane_select/text_scan.h>

#include <ucs/debug/log_def.h>
#include <ucs/datastruct/string_buffer.h>
#include <ucs/sys/string.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PSEL_CALIB_MAGIC        "protosel-calibration"
#define PSEL_CALIB_NS           1e9      /* ns per second */
#define PSEL_CALIB_KB           1024.0   /* bytes per KB in slopes */
#define PSEL_CALIB_MB_V2        1e6      /* bytes/s per MB/s in format 2
                                            rails (format 3 has B/s) */
#define PSEL_CALIB_ANY_PEER     "*"      /* a rail's peer: every peer */
#define PSEL_CALIB_VALUE_MIN    1e-30    /* smallest nonzero number in a file */
#define PSEL_CALIB_VALUE_MAX    1e18     /* largest number in a file [ns] */
#define PSEL_CALIB_MAX_FILE     (256ul << 20)
#define PSEL_CALIB_MAX_TOKENS   12


/* Writing */

/* "YYYY-MM-DDTHH:MM:SSZ" with fields in range */
static int psel_calib_date_ok(const char *date)
{
    static const char pattern[] = "dddd-dd-ddTdd:dd:ddZ";
    unsigned year, mon, day, hour, min, sec;
    size_t i;

    if (strlen(date) != sizeof(pattern) - 1) {
        return 0;
    }
    for (i = 0; i < sizeof(pattern) - 1; ++i) {
        if ((pattern[i] == 'd') ? !isdigit((unsigned char)date[i]) :
                                  (date[i] != pattern[i])) {
            return 0;
        }
    }
    sscanf(date, "%4u-%2u-%2uT%2u:%2u:%2uZ", &year, &mon, &day, &hour, &min,
           &sec);
    return (mon >= 1) && (mon <= 12) && (day >= 1) && (day <= 31) &&
           (hour <= 23) && (min <= 59) && (sec <= 60);
}

/* What the parser takes: 0, or PSEL_CALIB_VALUE_MIN..PSEL_CALIB_VALUE_MAX.
 * The lower bound keeps seconds clear of denormals, so text round trips. */
static int psel_calib_value_ok(double value)
{
    return (value == 0) || ((value >= PSEL_CALIB_VALUE_MIN) &&
                            (value <= PSEL_CALIB_VALUE_MAX));
}

/*
 * Append " <value>" with 10 significant digits (1e-10 relative, and a value
 * read back prints the same). What would read back below the smallest number
 * is written as 0; what would read back above the largest (or negative,
 * non-finite) is an error.
 */
static int psel_calib_append_value(ucs_string_buffer_t *strb, double value)
{
    char buf[32];
    double printed;

    if (!isfinite(value) || (value < 0)) {
        return 0;
    }
    /* C locale: '.' whatever LC_NUMERIC the application set */
    psel_text_snprintf(buf, sizeof(buf), "%.10g", value + 0.0); /* no "-0" */
    if (!psel_scan_double_all(buf, &printed)) {
        return 0;
    }
    if (printed < PSEL_CALIB_VALUE_MIN) {
        ucs_strncpy_zero(buf, "0", sizeof(buf));
    } else if (printed > PSEL_CALIB_VALUE_MAX) {
        return 0;
    }
    ucs_string_buffer_appendf(strb, " %s", buf);
    return 1;
}

static void psel_calib_append_size(ucs_string_buffer_t *strb, size_t size)
{
    if (size == SIZE_MAX) {
        ucs_string_buffer_appendf(strb, " inf");
    } else {
        ucs_string_buffer_appendf(strb, " %zu", size);
    }
}

/* The record keywords of a line's data path (docs/calibration.md) */
static const char *psel_calib_keyword(psel_calib_via_t via, const char *what)
{
    static const char *names[PSEL_CALIB_VIA_LAST][3] = {
        [PSEL_CALIB_VIA_PROTOSEL] = {"range", "point", NULL},
        [PSEL_CALIB_VIA_UCP]      = {"ucp-range", "ucp-point",
                                     "ucp-unsupported"}
    };

    return names[via][(what[0] == 'r') ? 0 : (what[0] == 'p') ? 1 : 2];
}

static ucs_status_t psel_calib_write_line(const psel_calib_line_t *line,
                                          ucs_string_buffer_t *strb)
{
    const char *mem_name, *range_kw, *point_kw;
    const psel_perf_range_t *range;
    double value;
    unsigned r, t, i;

    if (!psel_calib_names_ok(line->proto, line->lanes, line->mem_type) ||
        (line->via >= PSEL_CALIB_VIA_LAST) ||
        (line->num_ranges > PSEL_PROTO_MAX_RANGES) ||
        (line->unsupported && ((line->via != PSEL_CALIB_VIA_UCP) ||
                               (line->num_ranges > 0) ||
                               (line->num_points > 0)))) {
        ucs_error("calibration line '%.*s' '%.*s': bad names, memory type, "
                  "data path or %u ranges", PSEL_CALIB_PROTO_MAX, line->proto,
                  PSEL_PROTO_DESC_MAX, line->lanes, line->num_ranges);
        return UCS_ERR_INVALID_PARAM;
    }
    mem_name = ucs_memory_type_names[line->mem_type];
    range_kw = psel_calib_keyword(line->via, "range");
    point_kw = psel_calib_keyword(line->via, "point");

    if (line->unsupported) {
        ucs_string_buffer_appendf(strb, "\n%s %s %s %s\n",
                                  psel_calib_keyword(line->via, "unsupported"),
                                  line->proto, line->lanes, mem_name);
        return UCS_OK;
    }
    if ((line->num_ranges == 0) && (line->num_points == 0)) {
        return UCS_OK;
    }
    ucs_string_buffer_appendf(strb, "\n");

    for (r = 0; r < line->num_ranges; ++r) {
        range = &line->ranges[r];
        if (((r > 0) && (range->max_length <= line->ranges[r - 1].max_length)) ||
            ((r == line->num_ranges - 1) && (range->max_length != SIZE_MAX))) {
            ucs_error("calibration line %s %s %s: range %u ends at %zu: "
                      "ranges must ascend and the last end at SIZE_MAX",
                      line->proto, line->lanes, mem_name, r, range->max_length);
            return UCS_ERR_INVALID_PARAM;
        }
        ucs_string_buffer_appendf(strb, "%s %s %s %s", range_kw, line->proto,
                                  line->lanes, mem_name);
        psel_calib_append_size(strb, range->max_length);
        for (t = 0; t < PSEL_PERF_LAST; ++t) {
            if (!psel_calib_append_value(strb, range->perf[t].c *
                                               PSEL_CALIB_NS) ||
                !psel_calib_append_value(strb, range->perf[t].m *
                                               PSEL_CALIB_NS * PSEL_CALIB_KB)) {
                ucs_error("calibration line %s %s %s: range %u has cost "
                          "%g + %g*x", line->proto, line->lanes, mem_name, r,
                          range->perf[t].c, range->perf[t].m);
                return UCS_ERR_INVALID_PARAM;
            }
        }
        ucs_string_buffer_appendf(strb, "\n");
    }

    for (i = 0; i < line->num_points; ++i) {
        if ((i > 0) && (line->points[i].size <= line->points[i - 1].size)) {
            ucs_error("calibration line %s %s %s: point sizes do not ascend "
                      "at %zu", line->proto, line->lanes, mem_name,
                      line->points[i].size);
            return UCS_ERR_INVALID_PARAM;
        }
        ucs_string_buffer_appendf(strb, "%s %s %s %s %zu", point_kw,
                                  line->proto, line->lanes, mem_name,
                                  line->points[i].size);
        for (t = 0; t < PSEL_PERF_LAST; ++t) {
            value = line->points[i].time[t];
            if (isnan(value)) {
                ucs_string_buffer_appendf(strb, " -");
            } else if (!psel_calib_append_value(strb, value * PSEL_CALIB_NS)) {
                ucs_error("calibration line %s %s %s: point %zu has time %g",
                          line->proto, line->lanes, mem_name,
                          line->points[i].size, line->points[i].time[t]);
                return UCS_ERR_INVALID_PARAM;
            }
        }
        ucs_string_buffer_appendf(strb, "\n");
    }
    return UCS_OK;
}

static ucs_status_t psel_calib_write_rail(const psel_calib_rail_t *rail,
                                          ucs_string_buffer_t *strb)
{
    /* what reads back as 0 would not parse as a rail */
    if (!psel_calib_token_ok(rail->lane, sizeof(rail->lane)) ||
        ((rail->peer[0] != '\0') && !psel_dev_addr_valid(rail->peer)) ||
        !(rail->latency * PSEL_CALIB_NS >= PSEL_CALIB_VALUE_MIN) ||
        !(rail->bandwidth >= PSEL_CALIB_VALUE_MIN)) {
        ucs_error("calibration rail '%.*s': bad name, peer, latency %g or "
                  "bandwidth %g", (int)sizeof(rail->lane), rail->lane,
                  rail->latency, rail->bandwidth);
        return UCS_ERR_INVALID_PARAM;
    }
    ucs_string_buffer_appendf(strb, "rail %s %s", rail->lane,
                              (rail->peer[0] != '\0') ? rail->peer :
                                                         PSEL_CALIB_ANY_PEER);
    if (!psel_calib_append_value(strb, rail->latency * PSEL_CALIB_NS) ||
        !psel_calib_append_value(strb, rail->bandwidth)) {
        ucs_error("calibration rail %s: latency %g or bandwidth %g out of "
                  "range", rail->lane, rail->latency, rail->bandwidth);
        return UCS_ERR_INVALID_PARAM;
    }
    ucs_string_buffer_appendf(strb, "\n");
    return UCS_OK;
}

static ucs_status_t psel_calib_check_header(const psel_calib_t *calib)
{
    const char *what = NULL;

    if (!psel_calib_token_ok(calib->hostname, sizeof(calib->hostname))) {
        what = "hostname";
    } else if (!psel_calib_token_ok(calib->machine_id,
                                    sizeof(calib->machine_id))) {
        what = "machine id";
    } else if (!psel_calib_token_ok(calib->ucx_version,
                                    sizeof(calib->ucx_version))) {
        what = "ucx version";
    } else if (!psel_calib_date_ok(calib->created)) {
        what = "created (YYYY-MM-DDTHH:MM:SSZ)";
    } else if (!isfinite(calib->duration) || (calib->duration < 0) ||
               (calib->duration > PSEL_CALIB_VALUE_MAX)) {
        what = "duration";
    } else if (strcmp(calib->mode, "quick") && strcmp(calib->mode, "full")) {
        what = "mode (quick or full)";
    } else if (calib->has_noise &&
               (!psel_calib_value_ok(100 * calib->noise.spread) ||
                !psel_calib_value_ok(100 * calib->noise.max_spread) ||
                !psel_calib_value_ok(calib->noise.load) ||
                !(calib->noise.steal >= 0) || !(calib->noise.steal <= 1))) {
        what = "noise (spreads, steal 0..1, load)";
    } else if (calib->num_rails > PSEL_CALIB_MAX_RAILS) {
        what = "number of rails";
    }
    if (what != NULL) {
        ucs_error("calibration header: bad %s", what);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

ucs_status_t psel_calib_write(const psel_calib_t *calib, FILE *stream)
{
    ucs_string_buffer_t strb;
    ucs_status_t status;
    size_t length;
    unsigned i;

    status = psel_calib_check_header(calib);
    if (status != UCS_OK) {
        return status;
    }

    ucs_string_buffer_init(&strb);
    ucs_string_buffer_appendf(&strb,
            "# protosel calibration: measured cost lines (comments and blank "
            "lines ignored)\n"
            PSEL_CALIB_MAGIC " %d\n"
            "host %s %s\n"
            "ucx %s\n"
            "created %s\n"
            "duration",
            PSEL_CALIB_FORMAT_VERSION, calib->hostname, calib->machine_id,
            calib->ucx_version, calib->created);
    psel_calib_append_value(&strb, calib->duration);
    ucs_string_buffer_appendf(&strb, "\nmode %s\n", calib->mode);
    if (calib->has_noise) {
        ucs_string_buffer_appendf(&strb, "# noise <run spread, median [%%]> "
                                  "<run spread, worst kept [%%]> "
                                  "<CPU steal [%%]> <others' load [CPUs]> "
                                  "<points refused>\nnoise");
        psel_calib_append_value(&strb, 100 * calib->noise.spread);
        psel_calib_append_value(&strb, 100 * calib->noise.max_spread);
        psel_calib_append_value(&strb, 100 * calib->noise.steal);
        psel_calib_append_value(&strb, calib->noise.load);
        ucs_string_buffer_appendf(&strb, " %u\n", calib->noise.refused);
    }
    ucs_string_buffer_appendf(&strb,
            "# rail <lane> <peer device address|*> <latency [ns]> "
            "<bandwidth [B/s]>\n"
            "# range <proto> <lanes> <memtype> <max_length|inf> "
            "<single c [ns]> <single m [ns/KB]> <multi c [ns]> "
            "<multi m [ns/KB]>\n"
            "# point <proto> <lanes> <memtype> <size> <single [ns]|-> "
            "<multi [ns]|->\n");
    if (psel_calib_has_via(calib, PSEL_CALIB_VIA_UCP)) {
        ucs_string_buffer_appendf(&strb,
            "# ucp-range, ucp-point: the same, measured through stock UCP's "
            "protocols (psel_calibrate --ucp)\n"
            "# ucp-unsupported <proto> <lanes> <memtype>: UCP ran another "
            "protocol when this one was forced\n");
    }

    for (i = 0; i < calib->num_rails; ++i) {
        status = psel_calib_write_rail(&calib->rails[i], &strb);
        if (status != UCS_OK) {
            goto out;
        }
    }

    for (i = 0; i < calib->num_lines; ++i) {
        status = psel_calib_write_line(&calib->lines[i], &strb);
        if (status != UCS_OK) {
            goto out;
        }
    }

    length = ucs_string_buffer_length(&strb);
    if ((fwrite(ucs_string_buffer_cstr(&strb), 1, length, stream) != length) ||
        (fflush(stream) != 0) || ferror(stream)) {
        ucs_error("failed to write calibration: %m");
        status = UCS_ERR_IO_ERROR;
    }

out:
    ucs_string_buffer_cleanup(&strb);
    return status;
}

/* mkdir -p of the directory part of @a path */
static ucs_status_t psel_calib_make_parent(const char *path)
{
    char dir[PATH_MAX];
    char *p;

    if (strlen(path) >= sizeof(dir)) {
        ucs_error("%s: path too long", path);
        return UCS_ERR_IO_ERROR;
    }
    strcpy(dir, path);
    p = strrchr(dir, '/');
    if ((p == NULL) || (p == dir)) {
        return UCS_OK;
    }
    *p = '\0';

    for (p = dir + 1; ; ++p) {
        if ((*p == '/') || (*p == '\0')) {
            char saved = *p;

            *p = '\0';
            if ((mkdir(dir, 0755) != 0) && (errno != EEXIST)) {
                ucs_error("%s: cannot create directory %s: %m", path, dir);
                return UCS_ERR_IO_ERROR;
            }
            *p = saved;
            if (saved == '\0') {
                break;
            }
        }
    }
    return UCS_OK;
}

ucs_status_t psel_calib_save(const psel_calib_t *calib, const char *path)
{
    char tmp[PATH_MAX];
    ucs_status_t status;
    FILE *stream;
    int fd;

    status = psel_calib_make_parent(path);
    if (status != UCS_OK) {
        return status;
    }
    if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp)) {
        ucs_error("%s: path too long", path);
        return UCS_ERR_IO_ERROR;
    }

    fd = mkstemp(tmp);
    if (fd < 0) {
        ucs_error("%s: cannot create %s: %m", path, tmp);
        return UCS_ERR_IO_ERROR;
    }
    (void)fchmod(fd, 0644); /* mkstemp makes it 0600 */
    stream = fdopen(fd, "w");
    if (stream == NULL) {
        ucs_error("%s: fdopen: %m", path);
        close(fd);
        status = UCS_ERR_IO_ERROR;
        goto out_unlink;
    }

    status = psel_calib_write(calib, stream);
    if ((status == UCS_OK) && (fsync(fileno(stream)) != 0)) {
        ucs_error("%s: fsync: %m", path);
        status = UCS_ERR_IO_ERROR;
    }
    if ((fclose(stream) != 0) && (status == UCS_OK)) {
        ucs_error("%s: close: %m", path);
        status = UCS_ERR_IO_ERROR;
    }
    if (status != UCS_OK) {
        if (status == UCS_ERR_IO_ERROR) {
            ucs_error("%s: calibration not saved", path);
        }
        goto out_unlink;
    }

    if (rename(tmp, path) != 0) {
        ucs_error("%s: cannot rename %s to it: %m", path, tmp);
        status = UCS_ERR_IO_ERROR;
        goto out_unlink;
    }
    return UCS_OK;

out_unlink:
    unlink(tmp);
    return status;
}


/* Parsing */

enum {
    PSEL_CALIB_HDR_HOST,
    PSEL_CALIB_HDR_UCX,
    PSEL_CALIB_HDR_CREATED,
    PSEL_CALIB_HDR_DURATION,
    PSEL_CALIB_HDR_MODE,
    PSEL_CALIB_HDR_NOISE,   /* optional */
    PSEL_CALIB_HDR_LAST
};

static const char *psel_calib_hdr_names[] = {
    [PSEL_CALIB_HDR_HOST]     = "host",
    [PSEL_CALIB_HDR_UCX]      = "ucx",
    [PSEL_CALIB_HDR_CREATED]  = "created",
    [PSEL_CALIB_HDR_DURATION] = "duration",
    [PSEL_CALIB_HDR_MODE]     = "mode",
    [PSEL_CALIB_HDR_NOISE]    = "noise"
};

/* Fields after the keyword, for each header line */
static const unsigned psel_calib_hdr_fields[] = {
    [PSEL_CALIB_HDR_HOST]     = 2,
    [PSEL_CALIB_HDR_UCX]      = 1,
    [PSEL_CALIB_HDR_CREATED]  = 1,
    [PSEL_CALIB_HDR_DURATION] = 1,
    [PSEL_CALIB_HDR_MODE]     = 1,
    [PSEL_CALIB_HDR_NOISE]    = 5
};

typedef struct psel_calib_parser {
    const char   *name;                          /* for messages */
    unsigned     line_no;                        /* current text line */
    int          have_magic;                     /* first line seen */
    unsigned     version;                        /* its format version */
    unsigned     any_peer_line;                  /* first rail naming no
                                                    peer, or 0 */
    unsigned     hdr_line[PSEL_CALIB_HDR_LAST];  /* where each was, or 0 */
    int          in_data;                        /* a range/point was seen */
    unsigned     range_line[PSEL_CALIB_MAX_LINES]; /* last range of each line */
    const char   *line_text;                     /* current line, for columns */
    psel_calib_t calib;                          /* result being built */
} psel_calib_parser_t;

#define psel_calib_parse_error(_p, _fmt, ...) \
    ucs_error("%s:%u: " _fmt, (_p)->name, (_p)->line_no, ## __VA_ARGS__)

/* "<file>:<line>:<column>: <field> '<token>': <what>", the column being
 * the token's in the line */
#define psel_calib_token_error(_p, _token, _fmt, ...) \
    ucs_error("%s:%u:%u: " _fmt, (_p)->name, (_p)->line_no, \
              (unsigned)((_token) - (_p)->line_text) + 1, ## __VA_ARGS__)


/* A size: decimal digits only, no sign, no overflow; "inf" if @a inf_ok */
static ucs_status_t psel_calib_parse_size(psel_calib_parser_t *p,
                                          const char *field, const char *token,
                                          int inf_ok, size_t *size)
{
    uint64_t value;

    if (inf_ok && !strcmp(token, "inf")) {
        *size = SIZE_MAX;
        return UCS_OK;
    }
    if (strspn(token, "0123456789") != strlen(token)) {
        psel_calib_token_error(p, token, "%s '%s': expected a size in bytes%s",
                               field, token, inf_ok ? " or 'inf'" : "");
        return UCS_ERR_INVALID_PARAM;
    }
    /* the one number scanner (lane_select/text_scan.h) */
    if (!psel_scan_u64_all(token, &value) || (value > SIZE_MAX)) {
        psel_calib_token_error(p, token, "%s '%s': out of range", field,
                               token);
        return UCS_ERR_INVALID_PARAM;
    }
    *size = value;
    return UCS_OK;
}

/* A non-negative decimal number up to PSEL_CALIB_VALUE_MAX; "-" gives NAN
 * if @a dash_ok */
static ucs_status_t psel_calib_parse_value(psel_calib_parser_t *p,
                                           const char *field, const char *token,
                                           int dash_ok, double *value)
{
    const char *digits;
    double v;

    if (dash_ok && !strcmp(token, "-")) {
        *value = NAN;
        return UCS_OK;
    }
    if (token[0] == '-') {
        psel_calib_token_error(p, token, "%s '%s': negative", field, token);
        return UCS_ERR_INVALID_PARAM;
    }
    /* the one number scanner (lane_select/text_scan.h): plain decimal in
     * the C locale; an exponent that overflows a double is out of range */
    if (!psel_scan_double_all(token, &v)) {
        digits = token + strspn(token, "0123456789.");
        if ((digits > token) && ((*digits == 'e') || (*digits == 'E')) &&
            (strspn(digits + 1 + ((digits[1] == '+') || (digits[1] == '-')),
                    "0123456789") ==
             strlen(digits + 1 + ((digits[1] == '+') || (digits[1] == '-')))) &&
            (digits[1 + ((digits[1] == '+') || (digits[1] == '-'))] != '\0')) {
            psel_calib_token_error(p, token, "%s '%s': out of range (0, or "
                                   "%g..%g)", field, token,
                                   PSEL_CALIB_VALUE_MIN, PSEL_CALIB_VALUE_MAX);
        } else {
            psel_calib_token_error(p, token, "%s '%s': expected a number%s",
                                   field, token, dash_ok ? " or '-'" : "");
        }
        return UCS_ERR_INVALID_PARAM;
    }
    if (!psel_calib_value_ok(v)) {
        psel_calib_token_error(p, token, "%s '%s': out of range (0, or "
                               "%g..%g)", field, token, PSEL_CALIB_VALUE_MIN,
                               PSEL_CALIB_VALUE_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    *value = v;
    return UCS_OK;
}

static ucs_status_t psel_calib_parse_token(psel_calib_parser_t *p,
                                           const char *field, const char *token,
                                           char *dst, size_t max)
{
    if (!psel_calib_token_ok(token, max)) {
        psel_calib_parse_error(p, "%s '%s': expected a printable name without "
                               "'#', shorter than %zu characters", field,
                               token, max);
        return UCS_ERR_INVALID_PARAM;
    }
    ucs_strncpy_zero(dst, token, max);
    return UCS_OK;
}

static ucs_status_t psel_calib_parse_magic(psel_calib_parser_t *p,
                                           char **tokens, unsigned count)
{
    size_t version;

    if (strcmp(tokens[0], PSEL_CALIB_MAGIC) || (count != 2)) {
        psel_calib_parse_error(p, "expected '" PSEL_CALIB_MAGIC " %d' as the "
                               "first line, got '%s'",
                               PSEL_CALIB_FORMAT_VERSION, tokens[0]);
        return UCS_ERR_INVALID_PARAM;
    }
    if (psel_calib_parse_size(p, "format version", tokens[1], 0, &version) !=
        UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }
    if ((version < 1) || (version > PSEL_CALIB_FORMAT_VERSION)) {
        psel_calib_parse_error(p, "format version %zu, this build reads 1 to "
                               "%d: measure again", version,
                               PSEL_CALIB_FORMAT_VERSION);
        return UCS_ERR_UNSUPPORTED;
    }
    p->have_magic = 1;
    p->version    = version;
    return UCS_OK;
}

/* noise <spread %> <max spread %> <steal %> <load [CPUs]> <refused> */
static ucs_status_t psel_calib_parse_noise(psel_calib_parser_t *p,
                                           char **tokens,
                                           psel_calib_noise_t *noise)
{
    double spread, max_spread, steal;
    size_t refused;

    if ((psel_calib_parse_value(p, "noise spread", tokens[1], 0, &spread) !=
         UCS_OK) ||
        (psel_calib_parse_value(p, "noise max spread", tokens[2], 0,
                                &max_spread) != UCS_OK) ||
        (psel_calib_parse_value(p, "noise steal", tokens[3], 0, &steal) !=
         UCS_OK) ||
        (psel_calib_parse_value(p, "noise load", tokens[4], 0,
                                &noise->load) != UCS_OK) ||
        (psel_calib_parse_size(p, "noise refused", tokens[5], 0, &refused) !=
         UCS_OK)) {
        return UCS_ERR_INVALID_PARAM;
    }
    if ((steal > 100) || (refused > UINT_MAX)) {
        psel_calib_parse_error(p, "noise: steal %s%% or refused %s out of "
                               "range", tokens[3], tokens[5]);
        return UCS_ERR_INVALID_PARAM;
    }
    noise->spread     = spread / 100;
    noise->max_spread = max_spread / 100;
    noise->steal      = steal / 100;
    noise->refused    = refused;
    return UCS_OK;
}

/*
 * Format 3: rail <lane> <peer device address|*> <latency [ns]> <bandwidth
 * [B/s]>; formats 1 and 2: rail <lane> <latency [ns]> <bandwidth [MB/s],
 * MB = 10^6 B>, which names no peer: it applies to every peer, as it did
 * (warned: measure again to record the peer)
 */
static ucs_status_t psel_calib_parse_rail(psel_calib_parser_t *p,
                                          char **tokens, unsigned count)
{
    unsigned fields = (p->version >= 3) ? 4 : 3;
    char lane[PSEL_LANE_NAME_MAX], peer[PSEL_DEV_ADDR_HEX_MAX];
    double latency, bandwidth;
    ucs_status_t status;
    char **values;

    if (count != fields + 1) {
        psel_calib_parse_error(p, "rail: expected %u fields (%s), got %u",
                               fields, (fields == 4) ?
                               "lane peer latency bandwidth" :
                               "lane latency bandwidth", count - 1);
        return UCS_ERR_INVALID_PARAM;
    }
    if (psel_calib_parse_token(p, "lane", tokens[1], lane, sizeof(lane)) !=
        UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }
    peer[0] = '\0';
    if (fields == 4) {
        if (!strcmp(tokens[2], PSEL_CALIB_ANY_PEER)) {
            /* written from a format 2 rail */
        } else if (psel_dev_addr_valid(tokens[2])) {
            ucs_strncpy_zero(peer, tokens[2], sizeof(peer));
        } else {
            psel_calib_token_error(p, tokens[2], "peer '%s': expected a "
                                   "device address (an even number of "
                                   "lowercase hex digits, at most %u) or "
                                   "'" PSEL_CALIB_ANY_PEER "'", tokens[2],
                                   2 * PSEL_DEV_ADDR_MAX);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    values = &tokens[fields - 1];
    if ((psel_calib_parse_value(p, "latency", values[0], 0, &latency) !=
         UCS_OK) ||
        (psel_calib_parse_value(p, "bandwidth", values[1], 0, &bandwidth) !=
         UCS_OK)) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (fields == 3) {
        /* MB/s: what this file holds in B/s must be written back too */
        bandwidth *= PSEL_CALIB_MB_V2;
        if (!psel_calib_value_ok(bandwidth)) {
            psel_calib_token_error(p, values[1], "rail %s: bandwidth %s MB/s "
                                   "is above %g B/s, the largest value a "
                                   "calibration file holds", lane, values[1],
                                   PSEL_CALIB_VALUE_MAX);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    if (psel_calib_rail_get(&p->calib, lane, peer) != NULL) {
        psel_calib_parse_error(p, "rail %s to %s: duplicate", lane,
                               (peer[0] != '\0') ? peer : "every peer");
        return UCS_ERR_INVALID_PARAM;
    }
    status = psel_calib_rail_set(&p->calib, lane, peer,
                                 latency / PSEL_CALIB_NS, bandwidth);
    if (status != UCS_OK) {
        psel_calib_parse_error(p, "rail %s: %s (latency and bandwidth above "
                               "0, at most %u rails)", lane,
                               (status == UCS_ERR_EXCEEDS_LIMIT) ?
                               "too many rails" : "bad value",
                               PSEL_CALIB_MAX_RAILS);
        return UCS_ERR_INVALID_PARAM;
    }
    /* format 2 could not name the peer; from format 3 '*' says on purpose
     * that the rail applies to every peer (the rails libprotosel_ucx.so
     * applies) */
    if ((peer[0] == '\0') && (p->version < 3) && (p->any_peer_line == 0)) {
        p->any_peer_line = p->line_no; /* warned once the file is read */
    }
    return UCS_OK;
}

static ucs_status_t psel_calib_parse_header(psel_calib_parser_t *p, int hdr,
                                            char **tokens, unsigned count)
{
    psel_calib_t *calib = &p->calib;
    ucs_status_t status;

    if (p->in_data) {
        psel_calib_parse_error(p, "%s: header line after range/point lines",
                               tokens[0]);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->hdr_line[hdr] != 0) {
        psel_calib_parse_error(p, "%s: duplicate (first on line %u)",
                               tokens[0], p->hdr_line[hdr]);
        return UCS_ERR_INVALID_PARAM;
    }
    if (count != psel_calib_hdr_fields[hdr] + 1) {
        psel_calib_parse_error(p, "%s: expected %u field(s), got %u", tokens[0],
                               psel_calib_hdr_fields[hdr], count - 1);
        return UCS_ERR_INVALID_PARAM;
    }

    switch (hdr) {
    case PSEL_CALIB_HDR_HOST:
        status = psel_calib_parse_token(p, "hostname", tokens[1],
                                        calib->hostname,
                                        sizeof(calib->hostname));
        if (status == UCS_OK) {
            status = psel_calib_parse_token(p, "machine id", tokens[2],
                                            calib->machine_id,
                                            sizeof(calib->machine_id));
        }
        break;
    case PSEL_CALIB_HDR_UCX:
        status = psel_calib_parse_token(p, "ucx version", tokens[1],
                                        calib->ucx_version,
                                        sizeof(calib->ucx_version));
        break;
    case PSEL_CALIB_HDR_CREATED:
        if (!psel_calib_date_ok(tokens[1])) {
            psel_calib_parse_error(p, "created '%s': expected "
                                   "YYYY-MM-DDTHH:MM:SSZ", tokens[1]);
            return UCS_ERR_INVALID_PARAM;
        }
        ucs_strncpy_zero(calib->created, tokens[1], sizeof(calib->created));
        status = UCS_OK;
        break;
    case PSEL_CALIB_HDR_DURATION:
        status = psel_calib_parse_value(p, "duration", tokens[1], 0,
                                        &calib->duration);
        break;
    case PSEL_CALIB_HDR_NOISE:
        status = psel_calib_parse_noise(p, tokens, &calib->noise);
        calib->has_noise = (status == UCS_OK);
        break;
    default:
        if (strcmp(tokens[1], "quick") && strcmp(tokens[1], "full")) {
            psel_calib_parse_error(p, "mode '%s': expected quick or full",
                                   tokens[1]);
            return UCS_ERR_INVALID_PARAM;
        }
        ucs_strncpy_zero(calib->mode, tokens[1], sizeof(calib->mode));
        status = UCS_OK;
        break;
    }

    if (status == UCS_OK) {
        p->hdr_line[hdr] = p->line_no;
    }
    return status;
}

/* Every header line seen? */
static ucs_status_t psel_calib_parse_header_done(psel_calib_parser_t *p,
                                                 const char *where)
{
    int hdr;

    if (!p->have_magic) {
        psel_calib_parse_error(p, "missing '" PSEL_CALIB_MAGIC " %d' line%s",
                               PSEL_CALIB_FORMAT_VERSION, where);
        return UCS_ERR_INVALID_PARAM;
    }
    for (hdr = 0; hdr < PSEL_CALIB_HDR_LAST; ++hdr) {
        if ((p->hdr_line[hdr] == 0) && (hdr != PSEL_CALIB_HDR_NOISE)) {
            psel_calib_parse_error(p, "missing '%s' line%s",
                                   psel_calib_hdr_names[hdr], where);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    return UCS_OK;
}

/* The line a record of @a via belongs to: tokens[1..3] */
static psel_calib_line_t *psel_calib_parse_line_of(psel_calib_parser_t *p,
                                                   psel_calib_via_t via,
                                                   char **tokens)
{
    char proto[PSEL_CALIB_PROTO_MAX], lanes[PSEL_PROTO_DESC_MAX];
    const psel_proto_t *known;
    psel_calib_line_t *line;
    ucs_memory_type_t mem_type;

    if ((psel_calib_parse_token(p, "proto", tokens[1], proto,
                                sizeof(proto)) != UCS_OK) ||
        (psel_calib_parse_token(p, "lanes", tokens[2], lanes,
                                sizeof(lanes)) != UCS_OK)) {
        return NULL;
    }
    for (mem_type = 0; mem_type < UCS_MEMORY_TYPE_LAST; ++mem_type) {
        if (!strcmp(tokens[3], ucs_memory_type_names[mem_type])) {
            break;
        }
    }
    if (mem_type == UCS_MEMORY_TYPE_LAST) {
        psel_calib_parse_error(p, "memtype '%s': unknown memory type",
                               tokens[3]);
        return NULL;
    }

    known = psel_proto_by_name(proto);
    if ((via == PSEL_CALIB_VIA_UCP) && (p->version < 5) && (known != NULL) &&
        !(known->op_mask & UCS_BIT(PSEL_OP_TAG_SEND))) {
        psel_calib_parse_error(p, "%s %s: a line of UCP's put, get or active "
                               "messages, a record of format version 5, in "
                               "a file of version %u", tokens[0], proto,
                               p->version);
        return NULL;
    }

    line = psel_calib_line_add(&p->calib, via, proto, lanes, mem_type);
    if (line == NULL) {
        psel_calib_parse_error(p, "%s %s %s: more than %u lines, or no memory",
                               proto, lanes, tokens[3], PSEL_CALIB_MAX_LINES);
    } else if (line->unsupported) {
        psel_calib_parse_error(p, "%s %s %s %s: the line is marked "
                               "ucp-unsupported (line %u)", tokens[0], proto,
                               lanes, tokens[3],
                               p->range_line[line - p->calib.lines]);
        line = NULL;
    }
    return line;
}

static ucs_status_t psel_calib_parse_range(psel_calib_parser_t *p,
                                           psel_calib_via_t via,
                                           char **tokens, unsigned count)
{
    static const char *fields[] = {"single c", "single m", "multi c",
                                   "multi m"};
    double values[4];
    psel_perf_range_t *range;
    psel_calib_line_t *line;
    size_t max_length;
    unsigned i;

    if (count != 9) {
        psel_calib_parse_error(p, "%s: expected 8 fields (proto lanes "
                               "memtype max_length single_c single_m multi_c "
                               "multi_m), got %u", tokens[0], count - 1);
        return UCS_ERR_INVALID_PARAM;
    }
    line = psel_calib_parse_line_of(p, via, tokens);
    if (line == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (psel_calib_parse_size(p, "max_length", tokens[4], 1, &max_length) !=
        UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }
    for (i = 0; i < 4; ++i) {
        if (psel_calib_parse_value(p, fields[i], tokens[5 + i], 0,
                                   &values[i]) != UCS_OK) {
            return UCS_ERR_INVALID_PARAM;
        }
    }

    if (line->num_ranges >= PSEL_PROTO_MAX_RANGES) {
        psel_calib_parse_error(p, "%s: more than %d ranges for %s %s %s",
                               tokens[0], PSEL_PROTO_MAX_RANGES, tokens[1],
                               tokens[2], tokens[3]);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((line->num_ranges > 0) &&
        (max_length <= line->ranges[line->num_ranges - 1].max_length)) {
        psel_calib_parse_error(p, "max_length %s: not above the previous "
                               "range's (line %u)", tokens[4],
                               p->range_line[line - p->calib.lines]);
        return UCS_ERR_INVALID_PARAM;
    }

    range                         = &line->ranges[line->num_ranges++];
    range->max_length             = max_length;
    range->perf[PSEL_PERF_SINGLE] = ucs_linear_func_make(
            values[0] / PSEL_CALIB_NS,
            values[1] / (PSEL_CALIB_NS * PSEL_CALIB_KB));
    range->perf[PSEL_PERF_MULTI]  = ucs_linear_func_make(
            values[2] / PSEL_CALIB_NS,
            values[3] / (PSEL_CALIB_NS * PSEL_CALIB_KB));
    p->range_line[line - p->calib.lines] = p->line_no;
    return UCS_OK;
}

static ucs_status_t psel_calib_parse_point(psel_calib_parser_t *p,
                                           psel_calib_via_t via,
                                           char **tokens, unsigned count)
{
    psel_calib_line_t *line;
    double single, multi;
    ucs_status_t status;
    size_t size;
    unsigned idx;

    if (count != 7) {
        psel_calib_parse_error(p, "%s: expected 6 fields (proto lanes "
                               "memtype size single multi), got %u",
                               tokens[0], count - 1);
        return UCS_ERR_INVALID_PARAM;
    }
    line = psel_calib_parse_line_of(p, via, tokens);
    if ((line == NULL) ||
        (psel_calib_parse_size(p, "size", tokens[4], 0, &size) != UCS_OK) ||
        (psel_calib_parse_value(p, "single", tokens[5], 1, &single) != UCS_OK) ||
        (psel_calib_parse_value(p, "multi", tokens[6], 1, &multi) != UCS_OK)) {
        return UCS_ERR_INVALID_PARAM;
    }

    idx = psel_calib_point_index(line, size);
    if ((idx < line->num_points) && (line->points[idx].size == size)) {
        psel_calib_parse_error(p, "size %zu: duplicate point", size);
        return UCS_ERR_INVALID_PARAM;
    }
    status = psel_calib_line_add_point(line, size, single / PSEL_CALIB_NS,
                                       multi / PSEL_CALIB_NS);
    if (status != UCS_OK) {
        psel_calib_parse_error(p, "%s: cannot add (%s, at most %u points)",
                               tokens[0],
                               ucs_status_string(status),
                               PSEL_CALIB_MAX_POINTS);
        return (status == UCS_ERR_NO_MEMORY) ? status : UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

/* ucp-unsupported <proto> <lanes> <memtype> */
static ucs_status_t psel_calib_parse_unsupported(psel_calib_parser_t *p,
                                                 psel_calib_via_t via,
                                                 char **tokens, unsigned count)
{
    psel_calib_line_t *line;

    if (count != 4) {
        psel_calib_parse_error(p, "%s: expected 3 fields (proto lanes "
                               "memtype), got %u", tokens[0], count - 1);
        return UCS_ERR_INVALID_PARAM;
    }
    line = psel_calib_parse_line_of(p, via, tokens);
    if (line == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }
    if ((line->num_ranges > 0) || (line->num_points > 0)) {
        psel_calib_parse_error(p, "%s %s %s %s: the line has measured ranges "
                               "or points already", tokens[0], tokens[1],
                               tokens[2], tokens[3]);
        return UCS_ERR_INVALID_PARAM;
    }
    line->unsupported                    = 1;
    p->range_line[line - p->calib.lines] = p->line_no;
    return UCS_OK;
}

/* One line of text, NUL-terminated, without its '\n' */
static ucs_status_t psel_calib_parse_text_line(psel_calib_parser_t *p,
                                               char *text)
{
    static const char *kinds[] = {"range", "point", "unsupported"};
    char *tokens[PSEL_CALIB_MAX_TOKENS], *save, *token;
    const char *keyword;
    psel_calib_via_t via;
    unsigned count = 0, kind = 0;
    int hdr;

    p->line_text = text;
    for (token = strtok_r(text, " \t\r\v\f", &save); token != NULL;
         token = strtok_r(NULL, " \t\r\v\f", &save)) {
        if (token[0] == '#') {
            if (count == 0) {
                return UCS_OK; /* comment line */
            }
            psel_calib_parse_error(p, "'#' inside a line: comments take a "
                                   "whole line");
            return UCS_ERR_INVALID_PARAM;
        }
        if (count == PSEL_CALIB_MAX_TOKENS) {
            psel_calib_parse_error(p, "%s: too many fields", tokens[0]);
            return UCS_ERR_INVALID_PARAM;
        }
        tokens[count++] = token;
    }
    if (count == 0) {
        return UCS_OK; /* blank line */
    }

    if (!p->have_magic) {
        return psel_calib_parse_magic(p, tokens, count);
    }
    if (!strcmp(tokens[0], PSEL_CALIB_MAGIC)) {
        psel_calib_parse_error(p, PSEL_CALIB_MAGIC ": duplicate");
        return UCS_ERR_INVALID_PARAM;
    }
    for (hdr = 0; hdr < PSEL_CALIB_HDR_LAST; ++hdr) {
        if (!strcmp(tokens[0], psel_calib_hdr_names[hdr])) {
            return psel_calib_parse_header(p, hdr, tokens, count);
        }
    }

    for (via = 0; via < PSEL_CALIB_VIA_LAST; ++via) {
        for (kind = 0; kind < 3; ++kind) {
            keyword = psel_calib_keyword(via, kinds[kind]);
            if ((keyword != NULL) && !strcmp(tokens[0], keyword)) {
                goto found;
            }
        }
    }
    if (strcmp(tokens[0], "rail")) {
        psel_calib_parse_error(p, "unknown keyword '%s'", tokens[0]);
        return UCS_ERR_INVALID_PARAM;
    }

found:
    if ((via == PSEL_CALIB_VIA_UCP) && (p->version < 4)) {
        psel_calib_parse_error(p, "%s: a record of format version 4, in a "
                               "file of version %u", tokens[0], p->version);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!p->in_data) {
        if (psel_calib_parse_header_done(p, " before the first range/point/"
                                         "rail") !=
            UCS_OK) {
            return UCS_ERR_INVALID_PARAM;
        }
        p->in_data = 1;
    }
    if (via == PSEL_CALIB_VIA_LAST) {
        return psel_calib_parse_rail(p, tokens, count);
    }
    switch (kind) {
    case 0:  return psel_calib_parse_range(p, via, tokens, count);
    case 1:  return psel_calib_parse_point(p, via, tokens, count);
    default: return psel_calib_parse_unsupported(p, via, tokens, count);
    }
}

/* At the end: every line's ranges end at inf */
static ucs_status_t psel_calib_parse_finish(psel_calib_parser_t *p)
{
    const psel_calib_line_t *line;
    unsigned i;

    if (psel_calib_parse_header_done(p, "") != UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }
    for (i = 0; i < p->calib.num_lines; ++i) {
        line = &p->calib.lines[i];
        if ((line->num_ranges > 0) &&
            (line->ranges[line->num_ranges - 1].max_length != SIZE_MAX)) {
            p->line_no = p->range_line[i];
            psel_calib_parse_error(p, "max_length %zu: the last range of %s "
                                   "%s %s must end at inf",
                                   line->ranges[line->num_ranges - 1].max_length,
                                   line->proto, line->lanes,
                                   ucs_memory_type_names[line->mem_type]);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    return UCS_OK;
}

ucs_status_t psel_calib_parse(const char *text, size_t length,
                              const char *name, psel_calib_t *calib)
{
    char buf[PSEL_CALIB_MAX_TEXT_LINE + 1];
    psel_calib_parser_t *p;
    const char *pos, *end = text + length, *nl;
    ucs_status_t status = UCS_OK;
    size_t len;

    p = calloc(1, sizeof(*p));
    if (p == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    p->name = name;

    for (pos = text; (pos < end) && (status == UCS_OK); pos = nl + 1) {
        ++p->line_no;
        nl = memchr(pos, '\n', end - pos);
        if (nl == NULL) {
            nl = end; /* last line without '\n' */
        }
        len = nl - pos;
        if (len > PSEL_CALIB_MAX_TEXT_LINE) {
            psel_calib_parse_error(p, "line too long (%zu bytes, at most %d)",
                                   len, PSEL_CALIB_MAX_TEXT_LINE);
            status = UCS_ERR_INVALID_PARAM;
        } else if (memchr(pos, '\0', len) != NULL) {
            psel_calib_parse_error(p, "unexpected NUL character");
            status = UCS_ERR_INVALID_PARAM;
        } else {
            memcpy(buf, pos, len);
            buf[len] = '\0';
            status   = psel_calib_parse_text_line(p, buf);
        }
    }

    if (status == UCS_OK) {
        if (p->line_no == 0) {
            p->line_no = 1; /* empty file: report line 1 */
        }
        status = psel_calib_parse_finish(p);
    }

    if (status == UCS_OK) {
        if (p->any_peer_line != 0) {
            ucs_warn("%s:%u: rails that name no peer (format 2): lane "
                     "selection takes them for endpoints to every host; run "
                     "psel_calibrate again to record the peer each was "
                     "measured against", p->name, p->any_peer_line);
        }
        *calib = p->calib;
    } else {
        psel_calib_cleanup(&p->calib);
    }
    free(p);
    return status;
}

ucs_status_t psel_calib_load(const char *path, psel_calib_t *calib)
{
    char *text = NULL, *grown;
    size_t length = 0, capacity = 0, n;
    ucs_status_t status;
    FILE *stream;

    stream = fopen(path, "r");
    if (stream == NULL) {
        if (errno == ENOENT) {
            return UCS_ERR_NO_ELEM;
        }
        ucs_error("%s: cannot open: %m", path);
        return UCS_ERR_IO_ERROR;
    }

    for (;;) {
        if (length == capacity) {
            if (capacity >= PSEL_CALIB_MAX_FILE) {
                ucs_error("%s: larger than %lu bytes", path,
                          PSEL_CALIB_MAX_FILE);
                status = UCS_ERR_INVALID_PARAM;
                goto out;
            }
            capacity = capacity ? 2 * capacity : 65536;
            grown    = realloc(text, capacity);
            if (grown == NULL) {
                status = UCS_ERR_NO_MEMORY;
                goto out;
            }
            text = grown;
        }
        n       = fread(text + length, 1, capacity - length, stream);
        length += n;
        if (n == 0) {
            break;
        }
    }
    if (ferror(stream)) {
        ucs_error("%s: read error: %m", path);
        status = UCS_ERR_IO_ERROR;
        goto out;
    }

    status = psel_calib_parse(text, length, path, calib);

out:
    free(text);
    fclose(stream);
    return status;
}
