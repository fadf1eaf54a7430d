/*
 * Using a calibration on this host: does it belong here, where the default
 * file is, and replacing a protocol's attribute ranges by measured ones.
 */
#include "calib_int.h"

#include <ucs/sys/string.h>
#include <uct/api/version.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

psel_calib_match_t psel_calib_check_host(const psel_calib_t *calib,
                                         const char *hostname,
                                         const char *machine_id, char *why,
                                         size_t max)
{
    char dummy[1];

    if ((why == NULL) || (max == 0)) {
        why = dummy;
        max = sizeof(dummy);
    }
    if (strcmp(calib->hostname, hostname)) {
        ucs_snprintf_safe(why, max, "calibrated on host %s, this is %s",
                          calib->hostname, hostname);
        return PSEL_CALIB_MISMATCHED;
    }
    if (strcmp(calib->machine_id, "-") && strcmp(machine_id, "-") &&
        strcmp(calib->machine_id, machine_id)) {
        ucs_snprintf_safe(why, max, "calibrated on host %s with machine id "
                          "%s, this one has %s", calib->hostname,
                          calib->machine_id, machine_id);
        return PSEL_CALIB_MISMATCHED;
    }
    if (strcmp(calib->ucx_version, UCT_VERNO_STRING)) {
        ucs_snprintf_safe(why, max, "calibrated with UCX %s, this is UCX %s: "
                          "measure again", calib->ucx_version,
                          UCT_VERNO_STRING);
        return PSEL_CALIB_STALE;
    }
    ucs_snprintf_safe(why, max, "calibrated on this host (%s) with UCX %s at "
                      "%s", calib->hostname, calib->ucx_version,
                      calib->created);
    return PSEL_CALIB_MATCH;
}

psel_calib_match_t psel_calib_check(const psel_calib_t *calib, char *why,
                                    size_t max)
{
    char hostname[sizeof(calib->hostname)];
    char machine_id[sizeof(calib->machine_id)];

    psel_calib_this_hostname(hostname, sizeof(hostname));
    psel_calib_this_machine_id(machine_id, sizeof(machine_id));
    return psel_calib_check_host(calib, hostname, machine_id, why, max);
}

/* Replace @a caps' ranges by @a line's fitted ones (psel_calib_apply) */
static int psel_calib_apply_line(const psel_calib_line_t *line,
                                 psel_proto_caps_t *caps)
{
    psel_perf_range_t ranges[PSEL_PROTO_MAX_RANGES];
    unsigned r, n = 0;
    size_t largest;

    if ((line == NULL) || (line->num_ranges == 0) || (caps->num_ranges == 0) ||
        (caps->num_ranges > PSEL_PROTO_MAX_RANGES)) {
        return 0;
    }

    largest = caps->ranges[caps->num_ranges - 1].max_length;
    for (r = 0; r < line->num_ranges; ++r) {
        if (line->ranges[r].max_length < caps->min_length) {
            continue;
        }
        ranges[n] = line->ranges[r];
        if (ranges[n++].max_length >= largest) {
            ranges[n - 1].max_length = largest;
            break;
        }
    }

    memcpy(caps->ranges, ranges, n * sizeof(*ranges));
    caps->num_ranges = n;
    return 1;
}

int psel_calib_apply(const psel_calib_t *calib, const char *proto,
                     const char *lanes, ucs_memory_type_t mem_type,
                     psel_proto_caps_t *caps)
{
    return psel_calib_apply_line(psel_calib_find(calib, proto, lanes,
                                                 mem_type), caps);
}

psel_calib_applied_t psel_calib_apply_for_ucp(const psel_calib_t *calib,
                                              const char *proto,
                                              const char *lanes,
                                              ucs_memory_type_t mem_type,
                                              psel_proto_caps_t *caps)
{
    const psel_calib_line_t *line = psel_calib_find_via(calib,
                                                        PSEL_CALIB_VIA_UCP,
                                                        proto, lanes,
                                                        mem_type);

    if ((line != NULL) && line->unsupported) {
        return PSEL_CALIB_APPLIED_UNSUPPORTED;
    }
    if (psel_calib_apply_line(line, caps)) {
        return PSEL_CALIB_APPLIED_UCP;
    }
    if (psel_calib_covers(calib, PSEL_CALIB_VIA_UCP, proto, lanes,
                          mem_type)) {
        /* psel_calibrate --ucp measured this operation over these lanes and
         * refused this protocol's line: as it says, the attributes stay.
         * protosel's own
         * line, of another data path, would tie with UCP's within noise and
         * make the table flip between them */
        return PSEL_CALIB_APPLIED_NONE;
    }
    return psel_calib_apply(calib, proto, lanes, mem_type, caps) ?
           PSEL_CALIB_APPLIED_PROTOSEL : PSEL_CALIB_APPLIED_NONE;
}

ucs_status_t psel_calib_default_path(char *path, size_t max)
{
    const char *cache = getenv("XDG_CACHE_HOME");
    const char *home  = getenv("HOME");
    char hostname[128];
    int len;

    psel_calib_this_hostname(hostname, sizeof(hostname));
    if ((cache != NULL) && (cache[0] != '\0')) {
        len = snprintf(path, max, "%s/protosel/calibration-%s.txt", cache,
                       hostname);
    } else if ((home != NULL) && (home[0] != '\0')) {
        len = snprintf(path, max, "%s/.cache/protosel/calibration-%s.txt",
                       home, hostname);
    } else {
        return UCS_ERR_NO_ELEM;
    }
    return ((len < 0) || ((size_t)len >= max)) ? UCS_ERR_BUFFER_TOO_SMALL :
                                                 UCS_OK;
}
