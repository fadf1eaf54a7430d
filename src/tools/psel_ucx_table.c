/*
 * Reading UCX's tables; see psel_ucx_table.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "psel_ucx_table.h"

#include <lane_select/reachability.h>
#include <lane_select/text_kind.h>
#include <lane_select/text_scan.h>

#include <ucs/debug/log_def.h>
#include <ucs/sys/string.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* A description without UCX's marks ("(?)", "(!)") and without
 * "multi-frag": "(?) rendezvous zero-copy read from remote" */
static const char *psel_cmp_desc_core(const char *desc)
{
    const char *d = desc;

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
    return d;
}

/* protosel's name for a UCX protocol description of tag send */
static void psel_cmp_class(const char *desc, char *proto, size_t max)
{
    const char *d = psel_cmp_desc_core(desc);
    const char *name;

    if (!strcasecmp(d, "rendezvous zero-copy") || !strcasecmp(d, "zero-copy")) {
        name = "rndv/am"; /* rndv/am/zcopy, UCX 1.16 on */
    } else if (!strncasecmp(d, "rendezvous", 10)) {
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
    /* the rows of the rendezvous tables: how the data moves */
    } else if (strstr(d, "read from remote")) {
        name = "rndv/get";
    } else if (strstr(d, "write to remote")) {
        name = "rndv/put";
    } else if (strstr(d, "fragmented copy-in copy-out")) {
        name = "rndv/am";
    } else if (!strcasecmp(d, "no data fetch")) {
        name = "none";
    } else {
        name = "?";
    }
    snprintf(proto, max, "%s", name);
}

/* protosel's name for a UCX protocol description of a put, a get or an
 * active message (ucp_proto_single_query and ucp_proto_multi_query's
 * words: "short", "copy-in", "copy-out", "zero-copy", "software
 * emulation" for put and get by active messages) */
static void psel_cmp_class_op(const char *desc, psel_op_t op, char *proto,
                              size_t max)
{
    const char *d    = psel_cmp_desc_core(desc);
    const char *name = "?";

    if (!strcasecmp(d, "software emulation")) {
        name = (op == PSEL_OP_PUT) ? "put/am/bcopy" :
               (op == PSEL_OP_GET) ? "get/am/bcopy" : "?";
    } else if (op == PSEL_OP_AM_SEND) {
        if (!strncasecmp(d, "rendezvous", 10) && (max > 3)) {
            memcpy(proto, "am/", 3); /* am/rndv/get: tag's name after am/ */
            psel_cmp_class(desc, proto + 3, max - 3);
            return;
        }
        name = !strcasecmp(d, "short")     ? "am/egr/short" :
               !strcasecmp(d, "copy-in")   ? "am/egr/bcopy" :
               !strcasecmp(d, "zero-copy") ? "am/egr/zcopy" : "?";
    } else if (op == PSEL_OP_PUT) {
        name = !strcasecmp(d, "short")     ? "put/offload/short" :
               !strcasecmp(d, "copy-in")   ? "put/offload/bcopy" :
               !strcasecmp(d, "zero-copy") ? "put/offload/zcopy" : "?";
    } else if (op == PSEL_OP_GET) {
        name = !strcasecmp(d, "copy-out")  ? "get/bcopy" :
               !strcasecmp(d, "zero-copy") ? "get/zcopy" : "?";
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
void psel_ucx_table_add_lanes(psel_cmp_ucx_t *ucx, const char *cell)
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

/* UCX 1.22 heads a table's rows with "| Range | Description | Config |" */
static int psel_cmp_header_row(const char *text)
{
    const char *p = text;

    if (*p++ != '|') {
        return 0;
    }
    while (isspace((unsigned char)*p)) {
        ++p;
    }
    return !strncmp(p, "Range", 5) && (isspace((unsigned char)p[5]) ||
                                       (p[5] == '|'));
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
    if (!psel_cmp_size(&p, &row->start)) {
        return 0;
    }
    if (strncmp(p, "..", 2)) {
        /* one size, "| 0 | no data fetch |" */
        while (isspace((unsigned char)*p)) {
            ++p;
        }
        if (*p != '\0') {
            return 0;
        }
        row->end = row->start;
    } else {
        p += 2;
        if (!psel_cmp_size(&p, &row->end)) {
            return 0;
        }
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

int psel_ucx_table_read(FILE *f, const char *path, psel_cmp_ucx_t *ucx)
{
    psel_text_kind_detector_t kind;
    char *line = NULL, *text, *s;
    int in_table = 0, have_v1 = 0;
    psel_cmp_ucx_t v1;
    size_t cap = 0;
    ucs_memory_type_t mt;
    unsigned i;
    double mbs;

    memset(ucx, 0, sizeof(*ucx));
    memset(&v1, 0, sizeof(v1));
    memset(&kind, 0, sizeof(kind));
    ucx->locality = -1;
    ucx->mem_type = UCS_MEMORY_TYPE_HOST;
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
                psel_ucx_table_add_lanes(&v1, lane);
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
            } else if (psel_cmp_header_row(text)) {
                continue;
            }
            if ((ucx->num_rows < PSEL_CMP_MAX_ROWS) &&
                psel_cmp_v2_row(text, &ucx->rows[ucx->num_rows])) {
                psel_ucx_table_add_lanes(ucx, ucx->rows[ucx->num_rows].lanes);
                ++ucx->num_rows;
            } else {
                in_table = 0;
            }
        }
    }
    free(line);

    if ((ucx->num_rows == 0) && have_v1) {
        v1.locality = ucx->locality;
        memcpy(v1.ucx_version, ucx->ucx_version, sizeof(v1.ucx_version));
        v1.bcopy_bw = ucx->bcopy_bw;
        *ucx        = v1;
        ucx->version = 1;
        snprintf(ucx->title, sizeof(ucx->title), "tag_send (protocols v1)");
    }
    for (i = 0; i < ucx->num_rows; ++i) {
        if ((ucx->rows[i].start != ((i == 0) ? 0 : ucx->rows[i - 1].end + 1)) ||
            (ucx->rows[i].end < ucx->rows[i].start) ||
            ((ucx->rows[i].end == SIZE_MAX) && (i + 1 < ucx->num_rows))) {
            ucs_error("%s: UCX's table does not cover 0..inf row by row: "
                      "row %u is %zu..%zu after %zu", path, i + 1,
                      ucx->rows[i].start, ucx->rows[i].end,
                      (i == 0) ? 0 : ucx->rows[i - 1].end);
            return -1;
        }
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




/* The title marker of each kind of table: UCX 1.13 writes an operation
 * without flags "op() ", later releases "op " (psel_ucx_table_title_is) */
static const char *psel_ucx_table_titles[PSEL_UCX_TABLE_LAST] = {
    [PSEL_UCX_TABLE_TAG_SEND]       = "by ucp_tag_send*",
    [PSEL_UCX_TABLE_TAG_SEND_MULTI] = "by ucp_tag_send*(multi)",
    [PSEL_UCX_TABLE_RNDV_FETCH]     = "rendezvous data fetch",
    [PSEL_UCX_TABLE_RNDV_SEND]      = "rendezvous data send",
    [PSEL_UCX_TABLE_PUT]            = "by ucp_put*",
    [PSEL_UCX_TABLE_PUT_MULTI]      = "by ucp_put*(multi)",
    [PSEL_UCX_TABLE_GET]            = "by ucp_get*",
    [PSEL_UCX_TABLE_GET_MULTI]      = "by ucp_get*(multi)",
    [PSEL_UCX_TABLE_AM_SEND]        = "by ucp_am_send*",
    [PSEL_UCX_TABLE_AM_SEND_MULTI]  = "by ucp_am_send*(multi)"
};

/* Does @a text name the table @a marker stands for: the marker, "()" or
 * nothing, then a space (not "(multi)" after the plain marker) */
static int psel_ucx_table_title_is(const char *text, const char *marker)
{
    const char *s;

    for (s = strstr(text, marker); s != NULL; s = strstr(s + 1, marker)) {
        s += strlen(marker);
        if (!strncmp(s, "()", 2)) {
            s += 2;
        }
        if (*s == ' ') {
            return 1;
        }
    }
    return 0;
}

/* The operation of each table: its rows are named as its protocols */
static const psel_op_t psel_ucx_table_ops[PSEL_UCX_TABLE_LAST] = {
    [PSEL_UCX_TABLE_TAG_SEND]       = PSEL_OP_TAG_SEND,
    [PSEL_UCX_TABLE_TAG_SEND_MULTI] = PSEL_OP_TAG_SEND,
    [PSEL_UCX_TABLE_RNDV_FETCH]     = PSEL_OP_TAG_SEND,
    [PSEL_UCX_TABLE_RNDV_SEND]      = PSEL_OP_TAG_SEND,
    [PSEL_UCX_TABLE_PUT]            = PSEL_OP_PUT,
    [PSEL_UCX_TABLE_PUT_MULTI]      = PSEL_OP_PUT,
    [PSEL_UCX_TABLE_GET]            = PSEL_OP_GET,
    [PSEL_UCX_TABLE_GET_MULTI]      = PSEL_OP_GET,
    [PSEL_UCX_TABLE_AM_SEND]        = PSEL_OP_AM_SEND,
    [PSEL_UCX_TABLE_AM_SEND_MULTI]  = PSEL_OP_AM_SEND
};

int psel_ucx_table_read_kind(FILE *f, const char *path,
                             psel_ucx_table_kind_t kind, psel_cmp_ucx_t *ucx)
{
    psel_cmp_ucx_t *cur;
    char *line = NULL, *text, *title, cell[sizeof(cur->title)];
    char version[sizeof(cur->ucx_version)] = "";
    int in_table = 0, found = 0;
    size_t cap = 0;
    unsigned i;

    cur = calloc(1, sizeof(*cur));
    if (cur == NULL) {
        return -1;
    }
    while (getline(&line, &cap, f) >= 0) {
        line[strcspn(line, "\r\n")] = '\0';
        text = psel_cmp_strip(line);
        /* the version: a fixture's header, or ucx_info -v */
        if (!strncmp(text, "ucx_version:", 12) ||
            !strncmp(text, "Library version:", 16)) {
            sscanf(strchr(text, ':') + 1, " %31s", version);
        }
        /* a title row: "| <ep and config> | <title> |"; one without its
         * second cell is no title */
        title = (*text == '|') ? strchr(text + 1, '|') : NULL;
        if ((title != NULL) && (strstr(text, " host memory") != NULL) &&
            psel_ucx_table_title_is(text, psel_ucx_table_titles[kind])) {
            memset(cur, 0, sizeof(*cur));
            cur->version  = 2;
            cur->locality = -1;
            cur->mem_type = UCS_MEMORY_TYPE_HOST;
            /* UCX 1.13: "| <ep> | <title> |"; 1.22: "| <title> |", the
             * endpoint on the line before */
            ucs_strncpy_zero(cur->title, ucs_strtrim(title + 1),
                             sizeof(cur->title));
            cur->title[strcspn(cur->title, "|")] = '\0';
            if (*ucs_strtrim(cur->title) == '\0') {
                ucs_strncpy_zero(cell, text + 1, sizeof(cell));
                cell[strcspn(cell, "|")] = '\0';
                ucs_strncpy_zero(cur->title, ucs_strtrim(cell),
                                 sizeof(cur->title));
            }
            in_table = 1;
            continue;
        }
        if (!in_table) {
            continue;
        }
        if (*text == '+') {
            if (cur->num_rows > 0) {
                in_table = 0; /* the border after the rows: complete */
            }
        } else if (psel_cmp_header_row(text)) {
            continue;
        } else if ((cur->num_rows < PSEL_CMP_MAX_ROWS) &&
                   psel_cmp_v2_row(text, &cur->rows[cur->num_rows])) {
            psel_ucx_table_add_lanes(cur, cur->rows[cur->num_rows].lanes);
            ++cur->num_rows;
            continue;
        } else {
            in_table = 0;
        }
        if (in_table || (cur->num_rows == 0)) {
            continue;
        }
        /* a table ends: keep it if its rows cover 0..inf, one after the
         * other (the last such table: the endpoint's final configuration) */
        for (i = 0; i < cur->num_rows; ++i) {
            if ((cur->rows[i].start !=
                 ((i == 0) ? 0 : cur->rows[i - 1].end + 1)) ||
                (cur->rows[i].end < cur->rows[i].start) ||
                ((cur->rows[i].end == SIZE_MAX) && (i + 1 < cur->num_rows))) {
                break;
            }
        }
        if ((i == cur->num_rows) &&
            (cur->rows[cur->num_rows - 1].end == SIZE_MAX)) {
            *ucx  = *cur;
            found = 1;
        }
        cur->num_rows = 0;
    }
    free(line);
    free(cur);
    if (!found) {
        ucs_debug("%s: no complete '%s' table", path,
                  psel_ucx_table_titles[kind]);
        return -1;
    }
    if (psel_ucx_table_ops[kind] != PSEL_OP_TAG_SEND) {
        for (i = 0; i < ucx->num_rows; ++i) {
            psel_cmp_class_op(ucx->rows[i].desc, psel_ucx_table_ops[kind],
                              ucx->rows[i].proto, sizeof(ucx->rows[i].proto));
        }
    }
    memcpy(ucx->ucx_version, version, sizeof(ucx->ucx_version));
    return 0;
}

int psel_ucx_table_read_op(FILE *f, const char *path, psel_op_t op,
                           psel_cmp_ucx_t *ucx)
{
    static const struct {
        psel_ucx_table_kind_t single, multi;
        const char            *what, *how;
    } kinds[PSEL_OP_LAST] = {
        [PSEL_OP_PUT]     = {PSEL_UCX_TABLE_PUT, PSEL_UCX_TABLE_PUT_MULTI,
                             "put", "ucx_perftest -t ucp_put_bw (ucx_info -e "
                             "prints no put table)"},
        [PSEL_OP_GET]     = {PSEL_UCX_TABLE_GET, PSEL_UCX_TABLE_GET_MULTI,
                             "get", "ucx_perftest -t ucp_get (ucx_info -e "
                             "prints no get table)"},
        [PSEL_OP_AM_SEND] = {PSEL_UCX_TABLE_AM_SEND,
                             PSEL_UCX_TABLE_AM_SEND_MULTI, "active-message",
                             "ucx_info -e -u m"}
    };

    if (op == PSEL_OP_TAG_SEND) {
        return psel_ucx_table_read(f, path, ucx);
    }
    if ((op >= PSEL_OP_LAST) || (kinds[op].what == NULL)) {
        ucs_error("%s: no table of UCX to read for operation %d", path, op);
        return -1;
    }
    ucx->streamed = 0;
    if (psel_ucx_table_read_kind(f, path, kinds[op].single, ucx) != 0) {
        rewind(f);
        if (psel_ucx_table_read_kind(f, path, kinds[op].multi, ucx) != 0) {
            ucs_error("%s: no UCX %s table from host memory: expected what "
                      "UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y %s prints",
                      path, kinds[op].what, kinds[op].how);
            return -1;
        }
        ucx->streamed = 1;
    }
    return 0;
}
