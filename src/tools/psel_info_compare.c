/*
 * psel_info --compare-ucx FILE: UCX's own tag-send table for a machine
 * beside protosel's for the same lanes, range by range, with the reasons
 * for every range where they differ.
 *
 * FILE holds what UCX printed: a protocols v2 table (UCX_PROTO_INFO=y or
 * `ucx_info -e` of UCX 1.13 to 1.20, with or without UCX's log prefix or
 * ucx_info's '#'), or the protocols v1 threshold lines of `ucx_info -e`
 * ("tag_send: 0..<egr/short>..93..<egr/bcopy>..8256..<rndv>..(inf)").
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "psel_info.h"

#include <lane_select/reachability.h>
#include <lane_select/text_kind.h>
#include <lane_select/text_scan.h>
#include <ucp_proto_sel/ep_config.h>
#include <ucp_proto_sel/ucx_thresh.h>

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <ucs/sys/string.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PSEL_CMP_MAX_ROWS   64
#define PSEL_CMP_MAX_LANES  16
#define PSEL_CMP_TEXT_MAX   256
#define PSEL_CMP_MAX_REASONS 8

/** One row of UCX's table */
typedef struct {
    size_t start, end;                 /* end SIZE_MAX: inf */
    char   desc[PSEL_CMP_TEXT_MAX];    /* as UCX printed it */
    char   proto[32];                  /* protosel's name of it, or "?" */
    char   lanes[PSEL_CMP_TEXT_MAX];   /* as UCX printed them, "" in v1 */
} psel_cmp_row_t;

/** What UCX printed */
typedef struct {
    int            version;           /* 2: v2 table; 1: v1 lines */
    char           title[PSEL_CMP_TEXT_MAX];
    ucs_memory_type_t mem_type;
    unsigned       num_rows;
    psel_cmp_row_t rows[PSEL_CMP_MAX_ROWS];
    unsigned       num_lanes;          /* transport/device pairs seen */
    char           lanes[PSEL_CMP_MAX_LANES][PSEL_NAME_MAX * 2];
    char           ucx_version[32];    /* "" if the file does not say */
    double         bcopy_bw;           /* UCX's estimate [B/s], 0 if unknown */
    int            locality;           /* what the file suggests, or -1 */
} psel_cmp_ucx_t;

/** One merged range of both tables */
typedef struct {
    size_t               start, end;
    const psel_cmp_row_t *ucx;
    const psel_select_elem_t *psel;
    const char           *psel_lanes;
    char                 mark;        /* '*' class differs, '~' lanes, ' ' */
    unsigned             num_reasons;
    char                 reasons[PSEL_CMP_MAX_REASONS][PSEL_CMP_TEXT_MAX];
} psel_cmp_range_t;


/* ---- reading UCX's output ---- */

/* The text after UCX's log prefix ("[1645019897.519927] [host:1:0]
 * proto_debug.c:406  UCX  INFO  "), CI timestamps and ucx_info's '#' */
static char *psel_cmp_strip(char *line)
{
    char *p = line, *q;

    while (*p == '[') {
        q = strchr(p, ']');
        if (q == NULL) {
            break;
        }
        p = q + 1;
        while (isspace((unsigned char)*p)) {
            ++p;
        }
    }
    /* "proto_debug.c:406  UCX  INFO  " */
    q = strstr(p, " UCX ");
    if ((q != NULL) && (strchr(p, '|') == NULL || q < strchr(p, '|')) &&
        (strstr(p, ".c:") != NULL) && (strstr(p, ".c:") < q)) {
        p = q + 5;
        while (isspace((unsigned char)*p)) {
            ++p;
        }
        while (isalpha((unsigned char)*p)) { /* INFO, DIAG, DEBUG */
            ++p;
        }
    }
    while ((*p == '#') || isspace((unsigned char)*p)) {
        ++p;
    }
    return p;
}

/* "8247", "inf", "64K" */
static int psel_cmp_size(const char **p, size_t *size)
{
    uint64_t value;

    while (isspace((unsigned char)**p)) {
        ++*p;
    }
    if (!strncmp(*p, "inf", 3)) {
        *p   += 3;
        *size = SIZE_MAX;
        return 1;
    }
    if (!psel_scan_u64(p, &value)) {
        return 0;
    }
    switch (**p) {
    case 'K': value <<= 10; ++*p; break;
    case 'M': value <<= 20; ++*p; break;
    case 'G': value <<= 30; ++*p; break;
    default: break;
    }
    *size = value;
    return 1;
}

/* protosel's name for a UCX protocol description */
static void psel_cmp_class(const char *desc, char *proto, size_t max)
{
    const char *d = desc;
    const char *name;

    while ((*d == '(') && (strchr(d, ')') != NULL)) { /* "(?)" "(!)" */
        d = strchr(d, ')') + 1;
        while (isspace((unsigned char)*d)) {
            ++d;
        }
    }
    if (!strncasecmp(d, "multi-frag", 10)) {
        d += strcspn(d, " ");
        while (isspace((unsigned char)*d)) {
            ++d;
        }
    }
    if (!strncasecmp(d, "rendezvous", 10)) {
        if (strstr(d, "read from remote")) {
            name = "rndv/get";
        } else if (strstr(d, "write to remote")) {
            name = "rndv/put";
        } else if (strstr(d, "pipeline") || strstr(d, "copy") ||
                   strstr(d, "staged")) {
            name = strstr(d, "zero-copy") ? "rndv/get" :
                   (strstr(d, "copy-in") ? "rndv/am" : "rndv/mtype");
        } else {
            name = "rndv/am";
        }
    } else if (!strncasecmp(d, "eager", 5)) {
        if (!strcasecmp(d, "eager short")) {
            name = "egr/short";
        } else if (strstr(d, "zero-copy")) {
            name = "egr/zcopy";
        } else {
            name = "egr/bcopy";
        }
    } else {
        name = "?";
    }
    snprintf(proto, max, "%s", name);
}

/* ucx_info -e names a lane "cma/memory.0": drop the ".N" path index */
static void psel_cmp_strip_lane_index(char *name)
{
    char *dot = strrchr(name, '.');

    if ((dot != NULL) && (dot[1] != '\0') &&
        (strspn(dot + 1, "0123456789") == strlen(dot + 1))) {
        *dot = '\0';
    }
}

/* Remember the transport/device names of a lanes cell ("cma/memory 32% +
 * rc_mlx5/mlx5_0:1 68%", "rc_mlx5/mlx5_bond_1:1 7% on path0, ...") */
static void psel_cmp_add_lanes(psel_cmp_ucx_t *ucx, const char *cell)
{
    char copy[PSEL_CMP_TEXT_MAX], *tok, *save;
    unsigned i;

    ucs_strncpy_zero(copy, cell, sizeof(copy));
    for (tok = strtok_r(copy, " ,+", &save); tok != NULL;
         tok = strtok_r(NULL, " ,+", &save)) {
        if (strchr(tok, '/') == NULL) {
            continue;
        }
        psel_cmp_strip_lane_index(tok);
        for (i = 0; i < ucx->num_lanes; ++i) {
            if (!strcmp(ucx->lanes[i], tok)) {
                break;
            }
        }
        if ((i == ucx->num_lanes) && (ucx->num_lanes < PSEL_CMP_MAX_LANES)) {
            ucs_strncpy_zero(ucx->lanes[ucx->num_lanes++], tok,
                             sizeof(ucx->lanes[0]));
        }
    }
}

/* "| 0..2007 | eager short | rc_mlx5/mlx5_0:1 |" */
static int psel_cmp_v2_row(const char *text, psel_cmp_row_t *row)
{
    char copy[1024], *field[4], *save;
    const char *p;
    unsigned n = 0;

    ucs_strncpy_zero(copy, text, sizeof(copy));
    for (field[n] = strtok_r(copy, "|", &save); (field[n] != NULL) && (n < 3);
         field[++n] = strtok_r(NULL, "|", &save)) {
    }
    if (n < 3) {
        return 0;
    }
    p = field[0];
    if (!psel_cmp_size(&p, &row->start) || strncmp(p, "..", 2)) {
        return 0;
    }
    p += 2;
    if (!psel_cmp_size(&p, &row->end)) {
        return 0;
    }
    ucs_strncpy_zero(row->desc, ucs_strtrim(field[1]), sizeof(row->desc));
    ucs_strncpy_zero(row->lanes, ucs_strtrim(field[2]), sizeof(row->lanes));
    psel_cmp_class(row->desc, row->proto, sizeof(row->proto));
    return 1;
}

/* "tag_send: 0..<egr/short>..93..<egr/bcopy>..8256..<rndv>..(inf)" */
static int psel_cmp_v1_line(const char *text, psel_cmp_ucx_t *ucx)
{
    const char *p = strstr(text, "tag_send:");
    psel_cmp_row_t *row;
    size_t start, end;
    const char *close;

    if ((p == NULL) || (strstr(text, "tag_send_") != NULL)) {
        return 0;
    }
    p += 9;
    if (!psel_cmp_size(&p, &start)) {
        return 0;
    }
    while ((strncmp(p, "..<", 3) == 0) && (ucx->num_rows < PSEL_CMP_MAX_ROWS)) {
        close = strchr(p + 3, '>');
        if (close == NULL) {
            return 0;
        }
        row = &ucx->rows[ucx->num_rows];
        snprintf(row->desc, sizeof(row->desc), "%.*s", (int)(close - p - 3),
                 p + 3);
        snprintf(row->proto, sizeof(row->proto), "%s",
                 !strcmp(row->desc, "rndv") ? "rndv/*" : row->desc);
        row->lanes[0] = '\0';
        p = close + 1;
        if (!strncmp(p, "..(inf)", 7)) {
            end = SIZE_MAX;
            p  += 7;
        } else if ((strncmp(p, "..", 2) != 0) ||
                   !(p += 2, psel_cmp_size(&p, &end)) || (end == 0)) {
            return 0;
        } else {
            --end;
        }
        row->start = start;
        row->end   = end;
        ++ucx->num_rows;
        if (end == SIZE_MAX) {
            break;
        }
        start = end + 1;
    }
    return (ucx->num_rows > 0) && (ucx->rows[ucx->num_rows - 1].end == SIZE_MAX);
}

static int psel_cmp_read(const char *path, psel_cmp_ucx_t *ucx)
{
    psel_text_kind_detector_t kind;
    char *line = NULL, *text, *s;
    int in_table = 0, have_v1 = 0;
    psel_cmp_ucx_t v1;
    size_t cap = 0;
    double mbs;
    ucs_memory_type_t mt;
    FILE *f;

    memset(ucx, 0, sizeof(*ucx));
    memset(&v1, 0, sizeof(v1));
    memset(&kind, 0, sizeof(kind));
    ucx->locality = -1;
    ucx->mem_type = UCS_MEMORY_TYPE_HOST;
    f = fopen(path, "r");
    if (f == NULL) {
        ucs_error("%s: cannot open: %m", path);
        return -1;
    }
    while (getline(&line, &cap, f) >= 0) {
        line[strcspn(line, "\r\n")] = '\0';
        psel_text_kind_feed(&kind, line);
        text = psel_cmp_strip(line);

        /* version: a fixture header, UCX's log, ucx_info -v */
        if (!strncmp(text, "ucx_version:", 12) ||
            !strncmp(text, "Library version:", 16)) {
            s = strchr(text, ':') + 1;
            sscanf(s, " %31s", ucx->ucx_version);
        } else if ((s = strstr(text, "Version ")) != NULL &&
                   isdigit((unsigned char)s[8]) && (ucx->ucx_version[0] == '\0')) {
            sscanf(s + 8, "%31s", ucx->ucx_version);
        }
        if ((s = strstr(text, "estimated bcopy bandwidth is ")) != NULL) {
            s += 29;
            if (psel_scan_double((const char**)&s, &mbs)) {
                ucx->bcopy_bw = mbs;
            }
        }
        if (!strncmp(text, "UCP endpoint", 12)) {
            ucx->locality = PSEL_PEER_SAME_PROCESS; /* ucx_info -e */
        }
        if ((s = strstr(text, "lane[")) != NULL && strstr(text, "->")) {
            /* "lane[1]:  1:cma/memory.0 md[1] -> ..." */
            s = strchr(s, ':');
            if ((s != NULL) && (s = strchr(s + 1, ':')) != NULL) {
                char lane[PSEL_CMP_TEXT_MAX];

                /* the "tl/dev.N" right after "N:", not the peer's md */
                snprintf(lane, sizeof(lane), "%.*s", (int)strcspn(s + 1, " "),
                         s + 1);
                psel_cmp_add_lanes(&v1, lane);
            }
        }
        if (!have_v1 && psel_cmp_v1_line(text, &v1)) {
            have_v1 = 1;
        }

        if ((ucx->version == 2) && (ucx->num_rows > 0) && !in_table) {
            continue; /* the first tag-send table only */
        }
        if (*text == '|' && strstr(text, "tagged message by ucp_tag_send") &&
            !strstr(text, "sync")) {
            ucx->version = 2;
            in_table     = 1;
            /* the cell with the title: "tagged message by ... memory" */
            s = strstr(text, "tagged message");
            ucs_strncpy_zero(ucx->title, s, sizeof(ucx->title));
            ucx->title[strcspn(ucx->title, "|")] = '\0';
            ucs_strtrim(ucx->title);
            for (mt = 0; mt < UCS_MEMORY_TYPE_LAST; ++mt) {
                char from[64];
                snprintf(from, sizeof(from), "from %s memory",
                         ucs_memory_type_names[mt]);
                if (strstr(text, from)) {
                    ucx->mem_type = mt;
                }
            }
            if (strstr(text, "intra-node")) {
                ucx->locality = PSEL_PEER_SAME_HOST;
            } else if (strstr(text, "inter-node")) {
                ucx->locality = PSEL_PEER_REMOTE_HOST;
            }
            continue;
        }
        if (in_table) {
            if (*text == '+') {
                in_table = (ucx->num_rows == 0);
                continue;
            }
            if ((ucx->num_rows < PSEL_CMP_MAX_ROWS) &&
                psel_cmp_v2_row(text, &ucx->rows[ucx->num_rows])) {
                psel_cmp_add_lanes(ucx, ucx->rows[ucx->num_rows].lanes);
                ++ucx->num_rows;
            } else {
                in_table = 0;
            }
        }
    }
    free(line);
    fclose(f);

    if ((ucx->num_rows == 0) && have_v1) {
        v1.locality = ucx->locality;
        memcpy(v1.ucx_version, ucx->ucx_version, sizeof(v1.ucx_version));
        v1.bcopy_bw = ucx->bcopy_bw;
        *ucx        = v1;
        ucx->version = 1;
        snprintf(ucx->title, sizeof(ucx->title), "tag_send (protocols v1)");
    }
    if ((ucx->num_rows == 0) ||
        (ucx->rows[ucx->num_rows - 1].end != SIZE_MAX)) {
        ucs_error("%s: no UCX tag-send table: expected a protocols v2 table "
                  "(UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y ucx_info -e -u t) or "
                  "the v1 line 'tag_send: 0..<egr/short>..N..' of ucx_info "
                  "-e, ending at inf; this is %s", path,
                  psel_text_kind_name(psel_text_kind_result(&kind)));
        return -1;
    }
    return 0;
}


/* ---- protosel's side ---- */

/* Keep only the resources whose "tl/dev" UCX's table used */
static void psel_cmp_filter(psel_resource_table_t *table,
                            const psel_cmp_ucx_t *ucx)
{
    char name[PSEL_NAME_MAX * 2];
    unsigned i, j, kept = 0;

    for (i = 0; i < table->count; ++i) {
        snprintf(name, sizeof(name), "%s/%s", table->resources[i].tl_name,
                 table->resources[i].dev_name);
        for (j = 0; j < ucx->num_lanes; ++j) {
            if (!strcmp(name, ucx->lanes[j])) {
                break;
            }
        }
        if (j < ucx->num_lanes) {
            table->resources[kept++] = table->resources[i];
        }
    }
    table->count = kept;
}

static void psel_cmp_reason(psel_cmp_range_t *range, const char *fmt, ...)
    UCS_F_PRINTF(2, 3);

static void psel_cmp_reason(psel_cmp_range_t *range, const char *fmt, ...)
{
    va_list ap;

    if (range->num_reasons == PSEL_CMP_MAX_REASONS) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(range->reasons[range->num_reasons++], PSEL_CMP_TEXT_MAX, fmt,
              ap);
    va_end(ap);
}

static int psel_cmp_version_at_least(const psel_cmp_ucx_t *ucx, unsigned minor)
{
    unsigned major, min;

    return (sscanf(ucx->ucx_version, "%u.%u", &major, &min) == 2) &&
           ((major > 1) || (min >= minor));
}

static int psel_cmp_version_is(const psel_cmp_ucx_t *ucx, unsigned minor)
{
    unsigned major, min;

    return (sscanf(ucx->ucx_version, "%u.%u", &major, &min) == 2) &&
           (major == 1) && (min == minor);
}

/* The reasons of one differing range: protosel's costs at its first size
 * (the explain mode's numbers), then the UCX rules that apply */
static void psel_cmp_explain(const psel_ep_config_t *ep,
                             const psel_select_table_t *table,
                             const psel_cmp_ucx_t *ucx,
                             psel_cmp_range_t *range)
{
    const char *mine = range->psel->proto->name;
    const char *theirs = range->ucx->proto;
    double t_mine, t_theirs;
    unsigned i, best, n_lanes;

    /* 1. what protosel's model says at this size */
    t_mine = psel_select_cost(&ep->select,
                              &table->caps[range->psel->proto_index],
                              range->start, 1);
    for (i = 0; i < table->num_protos; ++i) {
        if (!strcmp(table->protos[i]->name, theirs)) {
            break;
        }
    }
    if (!strcmp(theirs, "rndv/*")) {
        /* v1 names no scheme: protosel's cheapest rendezvous here */
        best = table->num_protos;
        for (i = 0; i < table->num_protos; ++i) {
            if (!strncmp(table->protos[i]->name, "rndv/", 5) &&
                (table->status[i] == UCS_OK) &&
                (range->start >= table->caps[i].min_length) &&
                (range->start <= psel_proto_caps_max_length(&table->caps[i])) &&
                ((best == table->num_protos) ||
                 (psel_select_cost(&ep->select, &table->caps[i], range->start,
                                   1) <
                  psel_select_cost(&ep->select, &table->caps[best],
                                   range->start, 1)))) {
                best = i;
            }
        }
        i = best;
    }
    if (i == table->num_protos) {
        psel_cmp_reason(range, "protosel has no model of UCX's '%s'",
                        range->ucx->desc);
    } else if (table->status[i] != UCS_OK) {
        psel_cmp_reason(range, "protosel's %s does not apply here: %s",
                        table->protos[i]->name, table->caps[i].desc);
    } else if (range->start > psel_proto_caps_max_length(&table->caps[i])) {
        psel_cmp_reason(range, "protosel's %s ends at %zu bytes",
                        table->protos[i]->name,
                        psel_proto_caps_max_length(&table->caps[i]));
    } else if (range->start < table->caps[i].min_length) {
        psel_cmp_reason(range, "protosel's %s starts at %zu bytes",
                        table->protos[i]->name, table->caps[i].min_length);
    } else if (i != range->psel->proto_index) {
        t_theirs = psel_select_cost(&ep->select, &table->caps[i],
                                    range->start, 1);
        psel_cmp_reason(range, "at %zu bytes protosel costs %s %.3f us and "
                        "%s %.3f us (%+.1f%%)", range->start, mine,
                        t_mine * 1e6, table->protos[i]->name, t_theirs * 1e6,
                        100.0 * (t_theirs - t_mine) / t_mine);
    }

    /* 2. documented UCX terms protosel does not have */
    if (!strcmp(theirs, "egr/short") || !strcmp(mine, "egr/short")) {
        if ((ucx->version == 2) && psel_cmp_version_is(ucx, 13)) {
            psel_cmp_reason(range, "UCX 1.13's -150 ns eager-short bonus "
                            "(ucp/tag/eager_single.c: no memory access to "
                            "fetch the data)");
        }
    }
    if (!strcmp(theirs, "egr/bcopy") || !strcmp(mine, "egr/bcopy") ||
        !strcmp(theirs, "egr/short") || !strcmp(mine, "egr/short")) {
        if (ucx->bcopy_bw > 0) {
            psel_cmp_reason(range, "copy bandwidth %.0f vs %.0f MB/s "
                            "(UCX_PSEL_BCOPY_BW vs UCX's estimate)",
                            ep->select.config->bcopy_bw / UCS_MBYTE,
                            ucx->bcopy_bw / UCS_MBYTE);
        } else {
            psel_cmp_reason(range, "copy bandwidth %.0f MB/s "
                            "(UCX_PSEL_BCOPY_BW); UCX estimates its own "
                            "(UCX_BCOPY_BW=auto, logged as 'estimated bcopy "
                            "bandwidth' at UCX_LOG_LEVEL=debug)",
                            ep->select.config->bcopy_bw / UCS_MBYTE);
        }
    }
    if (!strncmp(theirs, "rndv/", 5) || !strncmp(mine, "rndv/", 5)) {
        n_lanes = ep->lanes.sets.role[PSEL_LANE_ROLE_RMA_BW].count;
        if (ucx->version == 1) {
            psel_cmp_reason(range, "UCX printed protocols v1, whose "
                            "rendezvous threshold is the multilane formula "
                            "(psel_info -x shows it over these lanes)");
        } else if (psel_cmp_version_at_least(ucx, 13)) {
            psel_cmp_reason(range, "UCX adds 275 ns to the RTS "
                            "(ucp_proto_rndv_rts_init) and 150 ns for the "
                            "ATS (ucp_proto_rndv_ack_init)");
        }
        if (n_lanes > 1) {
            psel_cmp_reason(range, "UCX sums both lanes' overheads; protosel "
                            "takes the slowest lane's");
        }
    }
    if (strchr(range->ucx->desc, '(') == range->ucx->desc) {
        psel_cmp_reason(range, "UCX marks its row '%.3s'", range->ucx->desc);
    }
}

/* Lane names of a protosel row, comparable to UCX's ("a 32% + b 68%") */
static int psel_cmp_lanes_equal(const char *ucx_cell, const char *psel_desc)
{
    psel_cmp_ucx_t a, b;
    unsigned i, j;

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    psel_cmp_add_lanes(&a, ucx_cell);
    psel_cmp_add_lanes(&b, psel_desc);
    for (i = 0; i < b.num_lanes; ++i) {
        /* protosel names paths "dev/pathN": compare the device */
        char *path = strstr(b.lanes[i], "/path");
        if (path != NULL) {
            *path = '\0';
        }
    }
    if (a.num_lanes == 0) {
        return 1; /* v1: UCX names no lanes per row */
    }
    for (i = 0; i < a.num_lanes; ++i) {
        for (j = 0; j < b.num_lanes; ++j) {
            if (!strcmp(a.lanes[i], b.lanes[j])) {
                break;
            }
        }
        if (j == b.num_lanes) {
            return 0;
        }
    }
    return 1;
}

static const char *psel_cmp_size_str(size_t size, char *buf, size_t max)
{
    if (size == SIZE_MAX) {
        return "inf";
    }
    snprintf(buf, max, "%zu", size);
    return buf;
}

static unsigned psel_cmp_merge(const psel_ep_config_t *ep,
                               const psel_select_table_t *table,
                               const psel_cmp_ucx_t *ucx,
                               psel_cmp_range_t *ranges, unsigned max)
{
    size_t starts[2 * PSEL_CMP_MAX_ROWS + PSEL_SELECT_MAX_PROTOS * 4];
    unsigned n = 0, i, j, count = 0;
    psel_cmp_range_t *r;
    size_t s, tmp;

    for (i = 0; i < ucx->num_rows; ++i) {
        starts[n++] = ucx->rows[i].start;
    }
    for (i = 0; (i < table->count) && (n < ucs_static_array_size(starts)); ++i) {
        starts[n++] = (i == 0) ? 0 : table->elems[i - 1].max_length + 1;
    }
    for (i = 0; i < n; ++i) {          /* sort, small n */
        for (j = i + 1; j < n; ++j) {
            if (starts[j] < starts[i]) {
                tmp = starts[i]; starts[i] = starts[j]; starts[j] = tmp;
            }
        }
    }
    for (i = 0; (i < n) && (count < max); ++i) {
        s = starts[i];
        if ((i > 0) && (s == starts[i - 1])) {
            continue;
        }
        r = &ranges[count++];
        memset(r, 0, sizeof(*r));
        r->start = s;
        for (j = i + 1; (j < n) && (starts[j] == s); ++j) {
        }
        r->end = (j < n) ? starts[j] - 1 : SIZE_MAX;
        for (j = 0; j < ucx->num_rows; ++j) {
            if ((ucx->rows[j].start <= s) && (s <= ucx->rows[j].end)) {
                r->ucx = &ucx->rows[j];
            }
        }
        r->psel       = psel_select_table_find(table, s);
        r->psel_lanes = table->caps[r->psel->proto_index].desc;
        if ((r->ucx == NULL) ||
            (strcmp(r->ucx->proto, r->psel->proto->name) &&
             !(!strcmp(r->ucx->proto, "rndv/*") &&
               !strncmp(r->psel->proto->name, "rndv/", 5)))) {
            r->mark = '*';
        } else if (!psel_cmp_lanes_equal(r->ucx->lanes, r->psel_lanes)) {
            r->mark = '~';
        } else {
            r->mark = ' ';
        }
        if ((r->mark != ' ') && (r->ucx != NULL)) {
            psel_cmp_explain(ep, table, ucx, r);
        }
    }
    return count;
}

static void psel_cmp_print_text(const char *path, const psel_cmp_ucx_t *ucx,
                                const psel_resource_table_t *local,
                                int locality, const psel_ucx_thresh_t *v1,
                                const psel_cmp_range_t *ranges, unsigned count)
{
    char a[32], b[32], size[80];
    unsigned i, j, same = 0;

    printf("#\n# UCX (%s%s) %s\n#   from %s\n", ucx->ucx_version[0] ?
           ucx->ucx_version : "version unknown",
           (ucx->version == 2) ? ", protocols v2" : ", protocols v1",
           ucx->title, path);
    printf("# protosel: the same lanes (");
    for (i = 0; i < ucx->num_lanes; ++i) {
        printf("%s%s", i ? " " : "", ucx->lanes[i]);
    }
    printf("), resources of %s, peer in %s\n#\n", local->origin,
           (locality == PSEL_PEER_SAME_PROCESS) ? "this process" :
           (locality == PSEL_PEER_SAME_HOST) ? "this host" : "another host");
    printf("#   %-22s | %-12s %-34s | %-12s %s\n", "size", "UCX", "",
           "protosel", "");
    for (i = 0; i < count; ++i) {
        snprintf(size, sizeof(size), "%s..%s",
                 psel_cmp_size_str(ranges[i].start, a, sizeof(a)),
                 psel_cmp_size_str(ranges[i].end, b, sizeof(b)));
        printf("# %c %-22s | %-12s %-34.34s | %-12s %s\n", ranges[i].mark,
               size, ranges[i].ucx ? ranges[i].ucx->proto : "-",
               ranges[i].ucx ? (ranges[i].ucx->lanes[0] ?
                                ranges[i].ucx->lanes : ranges[i].ucx->desc) :
                               "",
               ranges[i].psel->proto->name, ranges[i].psel_lanes);
        for (j = 0; j < ranges[i].num_reasons; ++j) {
            printf("#       why: %s\n", ranges[i].reasons[j]);
        }
        same += (ranges[i].mark == ' ');
    }
    printf("#\n# '*': another protocol class, '~': the same class over other "
           "lanes; %u of %u ranges agree\n", same, count);
    if (v1->valid) {
        if (v1->fallback) {
            printf("# UCX 1.x's rendezvous threshold over these lanes: none "
                   "(the lines never cross)\n");
        } else {
            printf("# UCX 1.x's rendezvous threshold over these lanes: %.0f "
                   "bytes (psel_info -x shows its terms)\n", ceil(v1->thresh));
        }
    }
}

static void psel_cmp_print_json(const char *path, const psel_cmp_ucx_t *ucx,
                                const psel_resource_table_t *local,
                                int locality, const psel_ucx_thresh_t *v1,
                                const psel_cmp_range_t *ranges, unsigned count)
{
    char a[32];
    unsigned i, j;

    psel_info_diag_json_started();
    printf("{\"ucx_file\": ");
    psel_info_json_string(stdout, path);
    printf(", \"ucx_version\": ");
    psel_info_json_string(stdout, ucx->ucx_version);
    printf(", \"ucx_protocols\": %d, \"title\": ", ucx->version);
    psel_info_json_string(stdout, ucx->title);
    printf(", \"resources\": ");
    psel_info_json_string(stdout, local->origin);
    printf(", \"peer_on\": \"%s\", \"lanes\": [",
           (locality == PSEL_PEER_SAME_PROCESS) ? "this process" :
           (locality == PSEL_PEER_SAME_HOST) ? "this host" : "another host");
    for (i = 0; i < ucx->num_lanes; ++i) {
        printf("%s", i ? ", " : "");
        psel_info_json_string(stdout, ucx->lanes[i]);
    }
    printf("], \"ucx_v1_rndv_thresh\": ");
    if (v1->valid && !v1->fallback) {
        printf("%.0f", ceil(v1->thresh));
    } else {
        printf("null");
    }
    printf(", \"ranges\": [");
    for (i = 0; i < count; ++i) {
        printf("%s\n  {\"start\": %zu, \"end\": ", i ? "," : "",
               ranges[i].start);
        psel_info_json_string(stdout, psel_cmp_size_str(ranges[i].end, a,
                                                        sizeof(a)));
        printf(", \"differs\": \"%s\", \"ucx\": {\"protocol\": ",
               (ranges[i].mark == '*') ? "protocol" :
               (ranges[i].mark == '~') ? "lanes" : "no");
        psel_info_json_string(stdout, ranges[i].ucx ? ranges[i].ucx->proto : "");
        printf(", \"description\": ");
        psel_info_json_string(stdout, ranges[i].ucx ? ranges[i].ucx->desc : "");
        printf(", \"lanes\": ");
        psel_info_json_string(stdout, ranges[i].ucx ? ranges[i].ucx->lanes : "");
        printf("}, \"protosel\": {\"protocol\": ");
        psel_info_json_string(stdout, ranges[i].psel->proto->name);
        printf(", \"lanes\": ");
        psel_info_json_string(stdout, ranges[i].psel_lanes);
        printf("}, \"reasons\": [");
        for (j = 0; j < ranges[i].num_reasons; ++j) {
            printf("%s", j ? ", " : "");
            psel_info_json_string(stdout, ranges[i].reasons[j]);
        }
        printf("]}");
    }
    printf("\n]}\n");
}

int psel_info_compare_ucx(const char *path,
                          const psel_resource_table_t *local_in,
                          const psel_resource_table_t *peer_in,
                          const psel_config_t *config, int locality, int json)
{
    psel_cmp_range_t *ranges = NULL;
    psel_resource_table_t local, peer;
    const psel_select_table_t *table;
    psel_ep_params_t params;
    psel_ucx_thresh_t v1;
    psel_cmp_ucx_t *ucx;
    psel_ep_config_t *ep;
    unsigned count;
    int ret = 1;

    ucx = calloc(1, sizeof(*ucx));
    ep  = calloc(1, sizeof(*ep));
    if ((ucx == NULL) || (ep == NULL)) {
        ucs_error("out of memory");
        goto out_free;
    }
    if (psel_cmp_read(path, ucx) != 0) {
        goto out_free;
    }
    if ((ucx->ucx_version[0] == '\0') && !strcmp(local_in->origin, "live")) {
        /* printed on this machine, as the live resources are: the
         * installed UCX, as far as protosel can tell */
        snprintf(ucx->ucx_version, sizeof(ucx->ucx_version), "%s",
                 UCT_VERNO_STRING);
    }
    if (locality < 0) {
        /* `ucx_info -e` connects a worker to itself; UCX_PROTO_INFO tables
         * say intra-node or inter-node; else psel_info's default */
        locality = (ucx->locality >= 0) ? ucx->locality :
                   ((local_in->origin[0] != '\0') &&
                    strcmp(local_in->origin, "live")) ?
                   PSEL_PEER_REMOTE_HOST : PSEL_PEER_SAME_HOST;
    }

    /* the same lanes as UCX: only the transports/devices its table names */
    local       = *local_in;
    peer        = *peer_in;
    local.resources = malloc(sizeof(*local.resources) * (local.count + 1));
    peer.resources  = malloc(sizeof(*peer.resources) * (peer.count + 1));
    if ((local.resources == NULL) || (peer.resources == NULL)) {
        ucs_error("out of memory");
        goto out_free_tables;
    }
    memcpy(local.resources, local_in->resources,
           sizeof(*local.resources) * local.count);
    memcpy(peer.resources, peer_in->resources,
           sizeof(*peer.resources) * peer.count);
    psel_cmp_filter(&local, ucx);
    psel_cmp_filter(&peer, ucx);
    if (local.count == 0) {
        ucs_error("%s: none of the lanes UCX names (%s%s) is among the "
                  "resources of %s; pass the same machine's ucx_info -d with "
                  "--local FILE", path, ucx->lanes[0],
                  (ucx->num_lanes > 1) ? ", ..." : "", local_in->origin);
        goto out_free_tables;
    }

    memset(&params, 0, sizeof(params));
    params.features = PSEL_FEATURE_TAG;
    params.local    = &local;
    params.remote   = &peer;
    params.locality = locality;
    params.config   = config;
    if ((psel_ep_config_init(ep, &params) != UCS_OK) ||
        (psel_select_build(&ep->select,
                           psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_CONTIG,
                                            ucx->mem_type, 1),
                           &table) != UCS_OK)) {
        ucs_error("%s: protosel has no table over UCX's lanes (see above)",
                  path);
        goto out_free_tables;
    }

    ranges = calloc(PSEL_CMP_MAX_ROWS * 2, sizeof(*ranges));
    if (ranges == NULL) {
        ucs_error("out of memory");
        goto out_ep;
    }
    count = psel_cmp_merge(ep, table, ucx, ranges, PSEL_CMP_MAX_ROWS * 2);
    psel_ucx_thresh_compute(&ep->select, &v1);
    if (json) {
        psel_cmp_print_json(path, ucx, local_in, locality, &v1, ranges, count);
    } else {
        psel_cmp_print_text(path, ucx, local_in, locality, &v1, ranges, count);
    }
    ret = 0;

    free(ranges);
out_ep:
    psel_ep_config_cleanup(ep);
out_free_tables:
    free(local.resources);
    free(peer.resources);
out_free:
    free(ep);
    free(ucx);
    return ret;
}
