/*
 * Calibration data: the store (lines and their points) and the identity of
 * this host. Fits: calib_fit.c; the text file: calib_file.c; host check and
 * application to protocol caps: calib_apply.c. Format: docs/calibration.md,
 * "The calibration file".
 */
#include "calib_int.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/string.h>
#include <uct/api/version.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PSEL_CALIB_MACHINE_ID   "/etc/machine-id"


/* Names and identity */

int psel_calib_token_ok(const char *str, size_t max)
{
    size_t i, len = strnlen(str, max);

    if ((len == 0) || (len == max)) {
        return 0;
    }
    for (i = 0; i < len; ++i) {
        if (!isgraph((unsigned char)str[i]) || (str[i] == '#')) {
            return 0;
        }
    }
    return 1;
}

int psel_calib_names_ok(const char *proto, const char *lanes,
                        ucs_memory_type_t mem_type)
{
    return psel_calib_token_ok(proto, PSEL_CALIB_PROTO_MAX) &&
           psel_calib_token_ok(lanes, PSEL_PROTO_DESC_MAX) &&
           (mem_type < UCS_MEMORY_TYPE_LAST);
}

/* Copy @a src as a token: characters that cannot be in one become '_' */
static void psel_calib_copy_token(char *dst, size_t max, const char *src)
{
    size_t i;

    ucs_strncpy_zero(dst, src, max);
    for (i = 0; dst[i] != '\0'; ++i) {
        if (!isgraph((unsigned char)dst[i]) || (dst[i] == '#')) {
            dst[i] = '_';
        }
    }
    if (dst[0] == '\0') {
        ucs_strncpy_zero(dst, "-", max);
    }
}

void psel_calib_this_hostname(char *name, size_t max)
{
    char buf[256];

    if (gethostname(buf, sizeof(buf)) != 0) {
        buf[0] = '\0';
    }
    buf[sizeof(buf) - 1] = '\0';
    psel_calib_copy_token(name, max, buf);
}

void psel_calib_read_machine_id(const char *path, char *id, size_t max)
{
    char buf[128] = "";
    FILE *f       = fopen(path, "r");

    if (f != NULL) {
        if (fgets(buf, sizeof(buf), f) == NULL) {
            buf[0] = '\0';
        }
        fclose(f);
    }
    buf[strcspn(buf, " \t\r\n")] = '\0';
    psel_calib_copy_token(id, max, buf);
}

void psel_calib_this_machine_id(char *id, size_t max)
{
    psel_calib_read_machine_id(PSEL_CALIB_MACHINE_ID, id, max);
}

void psel_calib_init(psel_calib_t *calib)
{
    time_t now = time(NULL);
    struct tm tm;

    memset(calib, 0, sizeof(*calib));
    psel_calib_this_hostname(calib->hostname, sizeof(calib->hostname));
    psel_calib_this_machine_id(calib->machine_id, sizeof(calib->machine_id));
    /* Compile-time version: libucs/libuct 1.13 have no run-time version call */
    ucs_strncpy_zero(calib->ucx_version, UCT_VERNO_STRING,
                     sizeof(calib->ucx_version));
    gmtime_r(&now, &tm);
    strftime(calib->created, sizeof(calib->created), "%Y-%m-%dT%H:%M:%SZ",
             &tm);
    calib->duration = 0;
    ucs_strncpy_zero(calib->mode, "full", sizeof(calib->mode));
}

void psel_calib_cleanup(psel_calib_t *calib)
{
    unsigned i;

    for (i = 0; i < calib->num_lines; ++i) {
        free(calib->lines[i].points);
    }
    free(calib->lines);
    calib->lines     = NULL;
    calib->num_lines = 0;
    calib->num_rails = 0;
    calib->has_noise = 0;
}


/* Lines and points */

static psel_calib_line_t *
psel_calib_lookup(const psel_calib_t *calib, psel_calib_via_t via,
                  const char *proto, const char *lanes,
                  ucs_memory_type_t mem_type)
{
    psel_calib_line_t *line;
    unsigned i;

    for (i = 0; i < calib->num_lines; ++i) {
        line = &calib->lines[i];
        if ((line->via == via) && (line->mem_type == mem_type) &&
            !strcmp(line->proto, proto) && !strcmp(line->lanes, lanes)) {
            return line;
        }
    }
    return NULL;
}

const psel_calib_line_t *psel_calib_find_via(const psel_calib_t *calib,
                                             psel_calib_via_t via,
                                             const char *proto,
                                             const char *lanes,
                                             ucs_memory_type_t mem_type)
{
    return psel_calib_lookup(calib, via, proto, lanes, mem_type);
}

/* The operations a protocol of that name serves; 0 where it is unknown
 * (then it shares them with every protocol) */
static uint64_t psel_calib_proto_ops(const char *proto)
{
    const psel_proto_t *known = psel_proto_by_name(proto);

    return (known != NULL) ? known->op_mask : 0;
}

int psel_calib_covers(const psel_calib_t *calib, psel_calib_via_t via,
                      const char *proto, const char *lanes,
                      ucs_memory_type_t mem_type)
{
    uint64_t ops = psel_calib_proto_ops(proto), line_ops;
    const psel_calib_line_t *line;
    unsigned i;

    for (i = 0; i < calib->num_lines; ++i) {
        line = &calib->lines[i];
        if ((line->via != via) || (line->mem_type != mem_type) ||
            strcmp(line->lanes, lanes)) {
            continue;
        }
        line_ops = psel_calib_proto_ops(line->proto);
        if ((ops == 0) || (line_ops == 0) || (line_ops & ops)) {
            return 1;
        }
    }
    return 0;
}

const psel_calib_line_t *psel_calib_find(const psel_calib_t *calib,
                                         const char *proto, const char *lanes,
                                         ucs_memory_type_t mem_type)
{
    return psel_calib_lookup(calib, PSEL_CALIB_VIA_PROTOSEL, proto, lanes,
                             mem_type);
}

ucs_status_t psel_calib_copy_via(psel_calib_t *dst, const psel_calib_t *src,
                                 psel_calib_via_t via)
{
    const psel_calib_line_t *from;
    psel_calib_line_t *to;
    ucs_status_t status;
    unsigned i, j;

    for (i = 0; i < src->num_lines; ++i) {
        from = &src->lines[i];
        if (from->via != via) {
            continue;
        }
        to = psel_calib_line_add(dst, via, from->proto, from->lanes,
                                 from->mem_type);
        if (to == NULL) {
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        free(to->points);
        to->points      = NULL;
        to->num_points  = 0;
        to->unsupported = from->unsupported;
        to->num_ranges  = from->num_ranges;
        memcpy(to->ranges, from->ranges, sizeof(to->ranges));
        for (j = 0; j < from->num_points; ++j) {
            status = psel_calib_line_add_point(to, from->points[j].size,
                                               from->points[j].time[PSEL_PERF_SINGLE],
                                               from->points[j].time[PSEL_PERF_MULTI]);
            if (status != UCS_OK) {
                return status;
            }
        }
    }
    return UCS_OK;
}

const char *psel_calib_via_name(psel_calib_via_t via)
{
    return (via == PSEL_CALIB_VIA_UCP) ? "UCP" : "protosel";
}

int psel_calib_has_via(const psel_calib_t *calib, psel_calib_via_t via)
{
    unsigned i;

    for (i = 0; i < calib->num_lines; ++i) {
        if (calib->lines[i].via == via) {
            return 1;
        }
    }
    return 0;
}

psel_calib_line_t *
psel_calib_line_add(psel_calib_t *calib, psel_calib_via_t via,
                    const char *proto, const char *lanes,
                    ucs_memory_type_t mem_type)
{
    psel_calib_line_t *line = psel_calib_lookup(calib, via, proto, lanes,
                                                mem_type);

    if (line != NULL) {
        return line;
    }
    if (calib->num_lines >= PSEL_CALIB_MAX_LINES) {
        return NULL;
    }
    if (calib->lines == NULL) {
        /* All at once: a line pointer stays valid while lines are added */
        calib->lines = calloc(PSEL_CALIB_MAX_LINES, sizeof(*calib->lines));
        if (calib->lines == NULL) {
            return NULL;
        }
    }

    line = &calib->lines[calib->num_lines++];
    memset(line, 0, sizeof(*line));
    line->via = via;
    ucs_strncpy_zero(line->proto, proto, sizeof(line->proto));
    ucs_strncpy_zero(line->lanes, lanes, sizeof(line->lanes));
    line->mem_type = mem_type;
    return line;
}

psel_calib_line_t *psel_calib_line_get(psel_calib_t *calib, const char *proto,
                                       const char *lanes,
                                       ucs_memory_type_t mem_type)
{
    return psel_calib_line_get_via(calib, PSEL_CALIB_VIA_PROTOSEL, proto,
                                   lanes, mem_type);
}

psel_calib_line_t *psel_calib_line_get_via(psel_calib_t *calib,
                                           psel_calib_via_t via,
                                           const char *proto,
                                           const char *lanes,
                                           ucs_memory_type_t mem_type)
{
    psel_calib_line_t *line;

    if ((via >= PSEL_CALIB_VIA_LAST) ||
        !psel_calib_names_ok(proto, lanes, mem_type)) {
        ucs_error("calibration line '%s' '%s' memory type %d: names must be "
                  "non-empty printable tokens without '#' and fit",
                  proto, lanes, mem_type);
        return NULL;
    }
    line = psel_calib_line_add(calib, via, proto, lanes, mem_type);
    if (line == NULL) {
        ucs_error("calibration line %s %s %s: no room (%u lines at most)",
                  proto, lanes, ucs_memory_type_names[mem_type],
                  PSEL_CALIB_MAX_LINES);
    }
    return line;
}

/* The rail of exactly (@a lane, @a peer) */
psel_calib_rail_t *psel_calib_rail_get(const psel_calib_t *calib,
                                       const char *lane, const char *peer)
{
    unsigned i;

    for (i = 0; i < calib->num_rails; ++i) {
        if (!strcmp(calib->rails[i].lane, lane) &&
            !strcmp(calib->rails[i].peer, peer)) {
            return (psel_calib_rail_t*)&calib->rails[i];
        }
    }
    return NULL;
}

ucs_status_t psel_calib_rail_set(psel_calib_t *calib, const char *lane,
                                 const char *peer, double latency,
                                 double bandwidth)
{
    psel_calib_rail_t *rail;

    if (!psel_calib_token_ok(lane, PSEL_LANE_NAME_MAX) ||
        ((peer[0] != '\0') && !psel_dev_addr_valid(peer)) ||
        !isfinite(latency) || !(latency > 0) || !isfinite(bandwidth) ||
        !(bandwidth > 0)) {
        return UCS_ERR_INVALID_PARAM;
    }
    rail = psel_calib_rail_get(calib, lane, peer);
    if (rail == NULL) {
        if (calib->num_rails >= PSEL_CALIB_MAX_RAILS) {
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        rail = &calib->rails[calib->num_rails++];
        ucs_strncpy_zero(rail->lane, lane, sizeof(rail->lane));
        ucs_strncpy_zero(rail->peer, peer, sizeof(rail->peer));
    }
    rail->latency   = latency;
    rail->bandwidth = bandwidth;
    return UCS_OK;
}

const psel_calib_rail_t *psel_calib_rail_find(const psel_calib_t *calib,
                                              const char *lane,
                                              const psel_resource_table_t *peer,
                                              const psel_resource_t *remote)
{
    const psel_calib_rail_t *rail = NULL;
    unsigned i;

    if (remote->dev_addr[0] != '\0') {
        rail = psel_calib_rail_get(calib, lane, remote->dev_addr);
    }
    for (i = 0; (rail == NULL) && (i < peer->count); ++i) {
        if (peer->resources[i].dev_addr[0] != '\0') {
            rail = psel_calib_rail_get(calib, lane,
                                       peer->resources[i].dev_addr);
        }
    }
    return (rail != NULL) ? rail : psel_calib_rail_get(calib, lane, "");
}

int psel_calib_rail_measured(void *calib, const char *lane,
                             const psel_resource_table_t *peer,
                             const psel_resource_t *remote, double *latency,
                             double *bandwidth)
{
    const psel_calib_rail_t *rail = psel_calib_rail_find(calib, lane, peer,
                                                         remote);

    if (rail == NULL) {
        return 0;
    }
    *latency   = rail->latency;
    *bandwidth = rail->bandwidth;
    return 1;
}

unsigned psel_calib_point_index(const psel_calib_line_t *line, size_t size)
{
    unsigned lo = 0, hi = line->num_points, mid;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (line->points[mid].size < size) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static int psel_calib_time_ok(double t)
{
    return isnan(t) || (isfinite(t) && (t >= 0));
}

ucs_status_t psel_calib_line_add_point(psel_calib_line_t *line, size_t size,
                                       double single, double multi)
{
    unsigned idx = psel_calib_point_index(line, size);
    psel_calib_point_t *points;

    if (!psel_calib_time_ok(single) || !psel_calib_time_ok(multi)) {
        return UCS_ERR_INVALID_PARAM;
    }

    if ((idx == line->num_points) || (line->points[idx].size != size)) {
        if (line->num_points >= PSEL_CALIB_MAX_POINTS) {
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        points = realloc(line->points,
                         (line->num_points + 1) * sizeof(*points));
        if (points == NULL) {
            return UCS_ERR_NO_MEMORY;
        }
        memmove(&points[idx + 1], &points[idx],
                (line->num_points - idx) * sizeof(*points));
        line->points = points;
        ++line->num_points;
    }

    line->points[idx].size                   = size;
    line->points[idx].time[PSEL_PERF_SINGLE]   = single;
    line->points[idx].time[PSEL_PERF_MULTI]    = multi;
    line->points[idx].spread[PSEL_PERF_SINGLE] = NAN;
    line->points[idx].spread[PSEL_PERF_MULTI]  = NAN;
    return UCS_OK;
}

ucs_status_t psel_calib_line_set_spread(psel_calib_line_t *line, size_t size,
                                        double single, double multi)
{
    unsigned idx = psel_calib_point_index(line, size);

    if ((idx == line->num_points) || (line->points[idx].size != size)) {
        return UCS_ERR_NO_ELEM;
    }
    line->points[idx].spread[PSEL_PERF_SINGLE] = single;
    line->points[idx].spread[PSEL_PERF_MULTI]  = multi;
    return UCS_OK;
}
