/*
 * psel_info --compare-ucx FILE: UCX's own table of an operation for a
 * machine beside protosel's for the same lanes, range by range, with the
 * reasons for every range where they differ.
 *
 * FILE holds what UCX printed: for tag send a protocols v2 table
 * (UCX_PROTO_INFO=y or `ucx_info -e` of UCX 1.13 to 1.20, with or without
 * UCX's log prefix or ucx_info's '#'), or the protocols v1 threshold lines
 * of `ucx_info -e` ("tag_send: 0..<egr/short>..93..<egr/bcopy>..8256..
 * <rndv>..(inf)"); for put, get and active messages the v2 table of single
 * operations, else the streamed one, compared with protosel's streamed
 * table.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "psel_info.h"
#include "psel_ucx_table.h"

#include <lane_select/reachability.h>
#include <lane_select/resource_table.h>
#include <lane_select/text_json.h>
#include <lane_select/text_scan.h>
#include <ucp_proto_sel/ep_config.h>
#include <ucp_proto_sel/ucx_thresh.h>

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <ucs/sys/string.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** One merged range of both tables */
typedef struct {
    size_t               start, end;
    const psel_cmp_row_t *ucx;
    const psel_select_elem_t *psel;
    const char           *psel_lanes;
    char                 mark;        /* '*' class differs, '+' protocol of
                                         the same class, '~' lanes, ' ' */
    unsigned             num_reasons;
    char                 reasons[PSEL_CMP_MAX_REASONS][PSEL_CMP_TEXT_MAX];
} psel_cmp_range_t;


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
        /* copy engines (cuda_copy, gdr_copy) are never lanes of UCX's
         * table, but cuda/rocm tables need them */
        if ((j < ucx->num_lanes) ||
            (table->resources[i].dev_type == UCT_DEVICE_TYPE_ACC)) {
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

/* The file's UCX is 1.@a minor or newer */
static int psel_cmp_version_at_least(const psel_cmp_ucx_t *ucx, unsigned minor)
{
    unsigned code;

    return psel_ucx_version_parse(ucx->ucx_version, &code) &&
           (code >= 100 + minor);
}

/* The file's UCX is 1.@a minor */
static int psel_cmp_version_is(const psel_cmp_ucx_t *ucx, unsigned minor)
{
    unsigned code;

    return psel_ucx_version_parse(ucx->ucx_version, &code) &&
           (code == 100 + minor);
}

/* The reasons of one differing range: protosel's costs at its first size
 * (the explain mode's numbers), then the UCX rules that apply */
static void psel_cmp_explain(const psel_ep_config_t *ep,
                             const psel_select_t *select,
                             const psel_select_table_t *table,
                             const psel_cmp_ucx_t *ucx,
                             psel_cmp_range_t *range)
{
    const char *mine = range->psel->proto->name;
    const char *theirs = range->ucx->proto;
    double t_mine, t_theirs;
    unsigned i, best, n_lanes;

    /* 1. what protosel's model says at this size */
    t_mine = psel_select_cost(select,
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
                 (psel_select_cost(select, &table->caps[i], range->start,
                                   1) <
                  psel_select_cost(select, &table->caps[best],
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
        t_theirs = psel_select_cost(select, &table->caps[i],
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
            psel_cmp_reason(range, "copy bandwidth %.0f MB/s (%s) against "
                            "UCX's estimate, %.0f MB/s",
                            ep->select.config->copy_bw / UCS_MBYTE,
                            psel_config_copy_source_str(ep->select.config),
                            ucx->bcopy_bw / UCS_MBYTE);
        } else {
            psel_cmp_reason(range, "copy bandwidth %.0f MB/s (%s); UCX "
                            "estimates its own (UCX_BCOPY_BW=auto, logged as "
                            "'estimated bcopy bandwidth' at "
                            "UCX_LOG_LEVEL=debug)",
                            ep->select.config->copy_bw / UCS_MBYTE,
                            psel_config_copy_source_str(ep->select.config));
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
    psel_ucx_table_add_lanes(&a, ucx_cell);
    psel_ucx_table_add_lanes(&b, psel_desc);
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

/* The same class of protocol: the name without its last part, so eager
 * ("egr/...") or rendezvous ("rndv/..."), "am/egr/..." or "am/rndv/...",
 * by the transport ("put/offload/...", "get/...") or by active messages
 * ("put/am/...", "get/am/...") */
static int psel_cmp_same_class(const char *a, const char *b)
{
    const char *ea = strrchr(a, '/'), *eb = strrchr(b, '/');
    size_t len     = (ea != NULL) ? (size_t)(ea - a) : strlen(a);

    return (len == ((eb != NULL) ? (size_t)(eb - b) : strlen(b))) &&
           !strncmp(a, b, len);
}

static unsigned psel_cmp_merge(const psel_ep_config_t *ep,
                               const psel_select_t *select,
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
            !psel_cmp_same_class(r->ucx->proto, r->psel->proto->name)) {
            r->mark = '*';
        } else if (strcmp(r->ucx->proto, r->psel->proto->name) &&
                   strcmp(r->ucx->proto, "rndv/*")) {
            r->mark = '+'; /* v1 names no rendezvous scheme */
        } else if (!psel_cmp_lanes_equal(r->ucx->lanes, r->psel_lanes)) {
            r->mark = '~';
        } else {
            r->mark = ' ';
        }
        if ((r->mark != ' ') && (r->ucx != NULL)) {
            psel_cmp_explain(ep, select, table, ucx, r);
        }
    }
    return count;
}

static void psel_cmp_print_text(const char *path, const psel_cmp_ucx_t *ucx,
                                const psel_resource_table_t *local,
                                const psel_resource_table_t *peer,
                                int locality, const psel_ucx_thresh_t *v1,
                                const psel_cmp_range_t *ranges, unsigned count)
{
    char a[32], b[32], size[80];
    unsigned i, j, same = 0;
    int width = 12; /* the protocol names' column: the longest name */

    for (i = 0; i < count; ++i) {
        width = ucs_max(width, (int)strlen(ranges[i].psel->proto->name));
        if (ranges[i].ucx != NULL) {
            width = ucs_max(width, (int)strlen(ranges[i].ucx->proto));
        }
    }

    printf("#\n# UCX (%s%s) %s\n#   from %s%s\n", ucx->ucx_version[0] ?
           ucx->ucx_version : "version unknown",
           (ucx->version == 2) ? ", protocols v2" : ", protocols v1",
           ucx->title, path, ucx->streamed ?
           "\n#   streamed operations: protosel's table on the multi cost" :
           "");
    printf("# protosel: the same lanes (");
    for (i = 0; i < ucx->num_lanes; ++i) {
        printf("%s%s", i ? " " : "", ucx->lanes[i]);
    }
    printf("), resources of %s, peer %s%s in %s\n#\n", local->origin,
           (peer == local) ? "the same" : "resources of ",
           (peer == local) ? "" : peer->origin,
           (locality == PSEL_PEER_SAME_PROCESS) ? "this process" :
           (locality == PSEL_PEER_SAME_HOST) ? "this host" : "another host");
    printf("#   %-22s | %-*s %-34s | %-*s %s\n", "size", width, "UCX", "",
           width, "protosel", "");
    for (i = 0; i < count; ++i) {
        snprintf(size, sizeof(size), "%s..%s",
                 psel_size_or_inf_str(ranges[i].start, a, sizeof(a)),
                 psel_size_or_inf_str(ranges[i].end, b, sizeof(b)));
        printf("# %c %-22s | %-*s %-34.34s | %-*s %s\n", ranges[i].mark,
               size, width, ranges[i].ucx ? ranges[i].ucx->proto : "-",
               ranges[i].ucx ? (ranges[i].ucx->lanes[0] ?
                                ranges[i].ucx->lanes : ranges[i].ucx->desc) :
                               "",
               width, ranges[i].psel->proto->name, ranges[i].psel_lanes);
        for (j = 0; j < ranges[i].num_reasons; ++j) {
            printf("#       why: %s\n", ranges[i].reasons[j]);
        }
        same += (ranges[i].mark == ' ');
    }
    printf("#\n# '*': another protocol class (eager or rendezvous; by the "
           "transport or by active messages), '+': another protocol of the "
           "same class, '~': the same protocol over other lanes; %u of %u "
           "ranges agree\n", same, count);
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
                                const psel_resource_table_t *peer,
                                int locality, const psel_ucx_thresh_t *v1,
                                const psel_cmp_range_t *ranges, unsigned count)
{
    char a[32];
    unsigned i, j;

    psel_tool_diag_json_started();
    printf("{\"ucx_file\": ");
    psel_json_string(stdout, path);
    printf(", \"ucx_version\": ");
    psel_json_string(stdout, ucx->ucx_version);
    printf(", \"ucx_protocols\": %d, \"streamed\": %s, \"title\": ",
           ucx->version, ucx->streamed ? "true" : "false");
    psel_json_string(stdout, ucx->title);
    printf(", \"resources\": ");
    psel_json_string(stdout, local->origin);
    printf(", \"peer_resources\": ");
    psel_json_string(stdout, peer->origin);
    printf(", \"peer_on\": \"%s\", \"lanes\": [",
           (locality == PSEL_PEER_SAME_PROCESS) ? "this process" :
           (locality == PSEL_PEER_SAME_HOST) ? "this host" : "another host");
    for (i = 0; i < ucx->num_lanes; ++i) {
        printf("%s", i ? ", " : "");
        psel_json_string(stdout, ucx->lanes[i]);
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
        psel_json_string(stdout, psel_size_or_inf_str(ranges[i].end, a,
                                                        sizeof(a)));
        printf(", \"differs\": \"%s\", \"ucx\": {\"protocol\": ",
               (ranges[i].mark == '*') ? "class" :
               (ranges[i].mark == '+') ? "protocol" :
               (ranges[i].mark == '~') ? "lanes" : "no");
        psel_json_string(stdout, ranges[i].ucx ? ranges[i].ucx->proto : "");
        printf(", \"description\": ");
        psel_json_string(stdout, ranges[i].ucx ? ranges[i].ucx->desc : "");
        printf(", \"lanes\": ");
        psel_json_string(stdout, ranges[i].ucx ? ranges[i].ucx->lanes : "");
        printf("}, \"protosel\": {\"protocol\": ");
        psel_json_string(stdout, ranges[i].psel->proto->name);
        printf(", \"lanes\": ");
        psel_json_string(stdout, ranges[i].psel_lanes);
        printf("}, \"reasons\": [");
        for (j = 0; j < ranges[i].num_reasons; ++j) {
            printf("%s", j ? ", " : "");
            psel_json_string(stdout, ranges[i].reasons[j]);
        }
        printf("]}");
    }
    printf("\n]}\n");
}

int psel_info_compare_ucx(const char *path, psel_op_t op,
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
    psel_select_t *select;
    unsigned count;
    int ret = 1, read_status;
    FILE *stream;

    ucx = calloc(1, sizeof(*ucx));
    ep  = calloc(1, sizeof(*ep));
    if ((ucx == NULL) || (ep == NULL)) {
        ucs_error("out of memory");
        goto out_free;
    }
    stream = psel_text_file_open(path, "UCX's table");
    if (stream == NULL) {
        goto out_free;
    }
    read_status = psel_ucx_table_read_op(stream, path, op, ucx);
    fclose(stream);
    if (read_status != 0) {
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
    if (peer.count == 0) {
        ucs_error("%s: none of the lanes UCX names (%s%s) is among the "
                  "peer's resources (%s); pass the ucx_info -d of the peer "
                  "UCX's table was printed for with --peer FILE", path,
                  ucx->lanes[0], (ucx->num_lanes > 1) ? ", ..." : "",
                  peer_in->origin);
        goto out_free_tables;
    }

    memset(&params, 0, sizeof(params));
    params.features = psel_ep_feature_of_op(op);
    params.local    = &local;
    params.remote   = &peer;
    params.locality = locality;
    params.config   = config;
    if (psel_ep_config_init(ep, &params) != UCS_OK) {
        ucs_error("%s: protosel has no endpoint over UCX's lanes (see above)",
                  path);
        goto out_free_tables;
    }
    select = ucx->streamed ? &ep->stream : &ep->select;
    if (psel_select_build(select, psel_buffer_type(op, PSEL_DT_CONTIG,
                                                   ucx->mem_type, 1),
                          &table) != UCS_OK) {
        ucs_error("%s: protosel has no table over UCX's lanes (see above)",
                  path);
        goto out_ep;
    }

    ranges = calloc(PSEL_CMP_MAX_ROWS * 2, sizeof(*ranges));
    if (ranges == NULL) {
        ucs_error("out of memory");
        goto out_ep;
    }
    count = psel_cmp_merge(ep, select, table, ucx, ranges,
                           PSEL_CMP_MAX_ROWS * 2);
    memset(&v1, 0, sizeof(v1));
    if (op == PSEL_OP_TAG_SEND) {
        psel_ucx_thresh_compute(&ep->select, &v1);
    }
    if (json) {
        psel_cmp_print_json(path, ucx, local_in, peer_in, locality, &v1,
                            ranges, count);
    } else {
        psel_cmp_print_text(path, ucx, local_in, peer_in, locality, &v1,
                            ranges, count);
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
