/*
 * What kind of text a file holds; see text_kind.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "text_kind.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

/* A first-line magic word decides at once */
#define PSEL_TEXT_KIND_DECISIVE  1000000u


static const struct {
    const char *name;
    const char *advice;
} psel_text_kinds[PSEL_TEXT_KIND_LAST] = {
    [PSEL_TEXT_KIND_UNKNOWN] = {
        "text of an unknown kind",
        "run `ucx_info -d > FILE` on the machine whose resources you want "
        "and pass that file"},
    [PSEL_TEXT_KIND_UCX_INFO_D] = {
        "`ucx_info -d` output", "it is the right kind of file"},
    [PSEL_TEXT_KIND_PROTO_TABLE] = {
        "a UCX_PROTO_INFO table (UCX's protocol selection)",
        "it shows UCX's selection, not the resources: pass it to "
        "`psel_info --compare-ucx FILE`; for the resources run "
        "`ucx_info -d > FILE` on that machine"},
    [PSEL_TEXT_KIND_UCX_INFO_E_V1] = {
        "`ucx_info -e` threshold lines (tag_send: 0..<egr/short>..)",
        "it shows UCX's thresholds, not the resources: pass it to "
        "`psel_info --compare-ucx FILE`; for the resources run "
        "`ucx_info -d > FILE` on that machine"},
    [PSEL_TEXT_KIND_PERFTEST] = {
        "`ucx_perftest` output",
        "it holds measurements, not resources: run `ucx_info -d > FILE` on "
        "that machine (psel_calibrate measures protosel's own cost lines)"},
    [PSEL_TEXT_KIND_UCX_VERSION] = {
        "`ucx_info -v` output",
        "it holds the version only: run `ucx_info -d > FILE` (add -v to keep "
        "the version line)"},
    [PSEL_TEXT_KIND_UCX_CONFIG] = {
        "`ucx_info -c` settings (UCX_*=value)",
        "it lists settings, not resources: run `ucx_info -d > FILE`"},
    [PSEL_TEXT_KIND_IBV_DEVINFO] = {
        "`ibv_devinfo` output",
        "it describes the HCA ports, not UCX's transports: run "
        "`ucx_info -d > FILE` on the same machine"},
    [PSEL_TEXT_KIND_IBSTAT] = {
        "`ibstat` output",
        "it describes the HCA ports, not UCX's transports: run "
        "`ucx_info -d > FILE` on the same machine"},
    [PSEL_TEXT_KIND_SNAPSHOT] = {
        "a protosel resource snapshot",
        "load it with `psel_info --local FILE` (or psel_snapshot_load())"},
    [PSEL_TEXT_KIND_CALIBRATION] = {
        "a protosel calibration file",
        "it holds measured cost lines: use it with UCX_PSEL_CALIBRATION=FILE; "
        "for the resources run `ucx_info -d > FILE`"},
    [PSEL_TEXT_KIND_EMPTY] = {
        "an empty file (nothing but blanks and '#')",
        "the output did not reach it: run `ucx_info -d > FILE` on the machine "
        "whose resources you want and pass that file"},
};


/* The line without blanks and leading '#' marks */
static const char *psel_text_kind_body(const char *line)
{
    while ((*line == ' ') || (*line == '\t') || (*line == '#')) {
        ++line;
    }
    return line;
}

/* "KEY:" at the start of @a body, case-insensitive */
static int psel_text_kind_key(const char *body, const char *key)
{
    size_t len = strlen(key);

    return !strncasecmp(body, key, len) && (body[len] == ':');
}

/* "| 0..2007 |", "|  8247..inf |": a row of a UCX_PROTO_INFO table */
static int psel_text_kind_table_row(const char *line)
{
    const char *p = strchr(line, '|');

    if (p == NULL) {
        return 0;
    }
    ++p;
    while (*p == ' ') {
        ++p;
    }
    if (!isdigit((unsigned char)*p)) {
        return 0;
    }
    while (isdigit((unsigned char)*p)) {
        ++p;
    }
    if (strncmp(p, "..", 2) != 0) {
        return 0;
    }
    p += 2;
    if (!isdigit((unsigned char)*p) && strncmp(p, "inf", 3)) {
        return 0;
    }
    return strchr(p, '|') != NULL;
}

void psel_text_kind_feed(psel_text_kind_detector_t *det, const char *line)
{
    static const char *const d_keys[] = {
        "memory domain", "transport", "device", "component", "bandwidth",
        "latency", "overhead", "error handling", "connection",
        "device priority", "device address"
    };
    static const char *const v_keys[] = {
        "library version", "library path", "api headers version",
        "configured with"
    };
    const char *body = psel_text_kind_body(line);
    unsigned i;

    ++det->lines;
    if (body[strspn(body, " \t\r")] != '\0') {
        ++det->text_lines;
    }
    if (!strncmp(body, "protosel-snapshot ", 18)) {
        det->score[PSEL_TEXT_KIND_SNAPSHOT] += PSEL_TEXT_KIND_DECISIVE;
        return;
    }
    if (!strncmp(body, "protosel-calibration ", 21)) {
        det->score[PSEL_TEXT_KIND_CALIBRATION] += PSEL_TEXT_KIND_DECISIVE;
        return;
    }

    for (i = 0; i < sizeof(d_keys) / sizeof(d_keys[0]); ++i) {
        if (psel_text_kind_key(body, d_keys[i])) {
            ++det->score[PSEL_TEXT_KIND_UCX_INFO_D];
            return;
        }
    }
    for (i = 0; i < sizeof(v_keys) / sizeof(v_keys[0]); ++i) {
        if (psel_text_kind_key(body, v_keys[i])) {
            ++det->score[PSEL_TEXT_KIND_UCX_VERSION];
            return;
        }
    }
    if (strstr(line, "..<egr/") != NULL || strstr(line, "..<rndv>") != NULL) {
        ++det->score[PSEL_TEXT_KIND_UCX_INFO_E_V1];
    } else if (psel_text_kind_table_row(line) ||
               (strstr(line, "| ") && (strstr(line, "ep_cfg[") ||
                                       strstr(line, "from host memory")))) {
        ++det->score[PSEL_TEXT_KIND_PROTO_TABLE];
    } else if (strstr(line, "overhead (usec)") ||
               strstr(line, "latency (usec)") ||
               strstr(line, "bandwidth (MB/s)") ||
               strstr(line, "# iterations") || !strncmp(body, "Final:", 6)) {
        ++det->score[PSEL_TEXT_KIND_PERFTEST];
    } else if (!strncmp(body, "UCX_", 4) && (strchr(body, '=') != NULL)) {
        ++det->score[PSEL_TEXT_KIND_UCX_CONFIG];
    } else if (!strncmp(body, "hca_id:", 7) || !strncmp(body, "phys_port_cnt", 13)
               || !strncmp(body, "vendor_part_id", 14)) {
        ++det->score[PSEL_TEXT_KIND_IBV_DEVINFO];
    } else if (!strncmp(body, "CA '", 4) || !strncmp(body, "CA type:", 8) ||
               !strncmp(body, "Link layer:", 11)) {
        ++det->score[PSEL_TEXT_KIND_IBSTAT];
    }
}

psel_text_kind_t psel_text_kind_result(const psel_text_kind_detector_t *det)
{
    psel_text_kind_t kind, best = PSEL_TEXT_KIND_UNKNOWN;

    if (det->text_lines == 0) {
        return PSEL_TEXT_KIND_EMPTY;
    }
    for (kind = PSEL_TEXT_KIND_UNKNOWN + 1; kind < PSEL_TEXT_KIND_LAST;
         ++kind) {
        if (det->score[kind] > det->score[best]) {
            best = kind;
        }
    }
    return best;
}

const char *psel_text_kind_name(psel_text_kind_t kind)
{
    return (kind < PSEL_TEXT_KIND_LAST) ? psel_text_kinds[kind].name :
                                          psel_text_kinds[0].name;
}

const char *psel_text_kind_advice(psel_text_kind_t kind)
{
    return (kind < PSEL_TEXT_KIND_LAST) ? psel_text_kinds[kind].advice :
                                          psel_text_kinds[0].advice;
}
