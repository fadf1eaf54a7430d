/*
 * psel_calibrate --ucp: one transport setup of stock UCP (calibrate.h).
 *
 * Each UCP protocol protosel models is forced in turn with UCP's own
 * settings (as bench/lib_perftest.sh forces them: thresholds and the
 * rendezvous scheme; a UCX_PROTOS list naming a protocol UCP cannot run
 * makes UCP abort the process with "could not find a protocol", these
 * never do). What UCP really runs at each size is read from its
 * UCX_PROTO_INFO tables: the sender's tag-send, active-message, put or
 * get tables (single and multi), and for a rendezvous the receiver's "data
 * fetch" (get, or an RTR) and the sender's "data send" after an RTR (put
 * or am); from UCX 1.18, which prints no fetch table, the sender's row
 * itself. Put and get are measured from UCX 1.14 (where the protocol tier
 * maps them), forced by UCX_PROTOS, each operation's lines fitted among
 * themselves. The sizes where it
 * runs the protocol forced are measured through the UCP path of the
 * session (perftest_ucp.c), and the lines are fitted in natural order, as
 * protosel's own (calibrate_setup.c), into PSEL_CALIB_VIA_UCP lines keyed
 * by protosel's protocol name and UCP's lanes. A protocol UCP runs nowhere
 * when forced (it ran another) is written as ucp-unsupported over the lanes
 * its tables name for it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "calibrate.h"
#include "psel_ucx_table.h"

#include <ucs/sys/math.h>
#include <ucs/sys/string.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAL_UCP_MAX_SEGMENTS (4 * PSEL_CMP_MAX_ROWS)
#define CAL_UCP_MAX_CAPTURE  (4ul << 20)
#define CAL_UCP_PROBE_SIZE   65536 /* what UCP ran instead, said at this size */
#define CAL_UCP_SETTLE_SIZE  65536 /* no eager short reaches it */

/* The UCP protocols protosel models, as protosel names them, each with its
 * operation, its class (copy 0, eager zero-copy 1, rendezvous 2) and the
 * settings that force it. Tag send: the others' thresholds off, its own at
 * 0. Put and get (UCX 1.14 on, where the protocol tier maps them): the
 * operation's other offload protocols left out by UCX_PROTOS, so that only
 * it and the one by active messages remain (UCP runs that one over any
 * endpoint: a list that leaves UCP no protocol for some size aborts the
 * process), and its own threshold at 0 */
static const struct {
    const char *name;
    cal_op_t    op;
    unsigned    priority;
    const char *settings;
} cal_ucp_targets[] = {
    {"egr/short", CAL_OP_TAG, 0,
     "UCX_RNDV_THRESH=inf\nUCX_ZCOPY_THRESH=inf\nUCX_BCOPY_THRESH=inf"},
    {"egr/bcopy", CAL_OP_TAG, 0,
     "UCX_RNDV_THRESH=inf\nUCX_ZCOPY_THRESH=inf\nUCX_BCOPY_THRESH=0"},
    {"egr/zcopy", CAL_OP_TAG, 1, "UCX_RNDV_THRESH=inf\nUCX_ZCOPY_THRESH=0"},
    {"rndv/am",   CAL_OP_TAG, 2, "UCX_RNDV_THRESH=0\nUCX_RNDV_SCHEME=am"},
    {"rndv/put",  CAL_OP_TAG, 2, "UCX_RNDV_THRESH=0\nUCX_RNDV_SCHEME=put_zcopy"},
    {"rndv/get",  CAL_OP_TAG, 2, "UCX_RNDV_THRESH=0\nUCX_RNDV_SCHEME=get_zcopy"},
    {"put/offload/short", CAL_OP_PUT, 0,
     "UCX_PROTOS=^put/offload/bcopy,put/offload/zcopy,put/sgl/*"},
    {"put/offload/bcopy", CAL_OP_PUT, 0,
     "UCX_PROTOS=^put/offload/short,put/offload/zcopy,put/sgl/*\n"
     "UCX_BCOPY_THRESH=0"},
    {"put/offload/zcopy", CAL_OP_PUT, 1,
     "UCX_PROTOS=^put/offload/short,put/offload/bcopy,put/sgl/*\n"
     "UCX_ZCOPY_THRESH=0"},
    {"put/am/bcopy", CAL_OP_PUT, 0, "UCX_PROTOS=^put/offload/*,put/sgl/*"},
    {"get/bcopy", CAL_OP_GET, 0,
     "UCX_PROTOS=^get/zcopy\nUCX_BCOPY_THRESH=0"},
    {"get/zcopy", CAL_OP_GET, 1,
     "UCX_PROTOS=^get/bcopy\nUCX_ZCOPY_THRESH=0"},
    {"get/am/bcopy", CAL_OP_GET, 0, "UCX_PROTOS=^get/bcopy,get/zcopy"},
    {"am/egr/short", CAL_OP_AM, 0,
     "UCX_RNDV_THRESH=inf\nUCX_ZCOPY_THRESH=inf\nUCX_BCOPY_THRESH=inf"},
    {"am/egr/bcopy", CAL_OP_AM, 0,
     "UCX_RNDV_THRESH=inf\nUCX_ZCOPY_THRESH=inf\nUCX_BCOPY_THRESH=0"},
    {"am/egr/zcopy", CAL_OP_AM, 1, "UCX_RNDV_THRESH=inf\nUCX_ZCOPY_THRESH=0"},
    {"am/rndv/am", CAL_OP_AM, 2, "UCX_RNDV_THRESH=0\nUCX_RNDV_SCHEME=am"},
    {"am/rndv/put", CAL_OP_AM, 2,
     "UCX_RNDV_THRESH=0\nUCX_RNDV_SCHEME=put_zcopy"},
    {"am/rndv/get", CAL_OP_AM, 2,
     "UCX_RNDV_THRESH=0\nUCX_RNDV_SCHEME=get_zcopy"}
};

#define CAL_UCP_NUM_TARGETS \
    (sizeof(cal_ucp_targets) / sizeof(cal_ucp_targets[0]))

/* What UCP printed for one configuration */
typedef struct {
    psel_cmp_ucx_t table[PSEL_UCX_TABLE_LAST];
    int            have[PSEL_UCX_TABLE_LAST];
} cal_ucp_tables_t;


/* ---------------------------------------------------------------------- */
/* UCP's tables                                                           */
/* ---------------------------------------------------------------------- */

/*
 * Reconnect both sides with @a forced, this side with UCX_PROTO_INFO=y,
 * settle with a single and a streaming operation of each of @a ops
 * (UCS_BIT(cal_op_t)), so that UCP selects for both (and for the
 * rendezvous on each side), and read what UCP printed: it prints to the
 * process's stdout, which is a temporary file meanwhile.
 */
static ucs_status_t cal_ucp_configure(cal_ctx_t *ctx, const cal_setup_t *setup,
                                      const char *forced, unsigned ops,
                                      cal_ucp_tables_t *tables)
{
    char *text     = NULL;
    size_t len     = 0;
    ucs_status_t status;
    FILE *capture, *stream;
    cal_proto_t op_proto;
    double time;
    unsigned kind, i;
    int saved;

    capture = tmpfile();
    if (capture == NULL) {
        fprintf(stderr, "psel_calibrate: cannot create a temporary file for "
                "UCP's tables: %m\n");
        return UCS_ERR_IO_ERROR;
    }
    fflush(stdout);
    saved = dup(STDOUT_FILENO);
    if ((saved < 0) || (dup2(fileno(capture), STDOUT_FILENO) < 0)) {
        fprintf(stderr, "psel_calibrate: cannot redirect UCP's tables: %m\n");
        fclose(capture);
        if (saved >= 0) {
            close(saved);
        }
        return UCS_ERR_IO_ERROR;
    }

    /* UCP selects for a streaming send, and for a rendezvous, on the first
     * message that needs it (an eager short one does not: UCP sends it on
     * a threshold cached at connect): one of each test at a size no eager
     * short reaches */
    status = cal_configure(ctx, setup, forced, "UCX_PROTO_INFO=y");
    for (i = 0; (status == UCS_OK) && (i < 2 * (CAL_OP_AM + 1)); ++i) {
        op_proto.op = (cal_op_t)(i / 2);
        if (ops & UCS_BIT(op_proto.op)) {
            status = pt_session_measure(&ctx->run, cal_test(&op_proto,
                                                            !(i % 2)),
                                        CAL_UCP_SETTLE_SIZE, 0,
                                        CAL_STREAM_MIN, 1, &time);
        }
    }

    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    if (status != UCS_OK) {
        fclose(capture);
        return status;
    }

    /* at most CAL_UCP_MAX_CAPTURE bytes: the tables are a few KB */
    len  = (size_t)ucs_max(ftell(capture), 0);
    len  = ucs_min(len, CAL_UCP_MAX_CAPTURE);
    text = malloc(len + 1);
    if ((text == NULL) || (fseek(capture, 0, SEEK_SET) != 0) ||
        (fread(text, 1, len, capture) != len)) {
        fprintf(stderr, "psel_calibrate: cannot read back UCP's tables\n");
        free(text);
        fclose(capture);
        return UCS_ERR_IO_ERROR;
    }
    fclose(capture);
    text[len] = '\0';

    memset(tables, 0, sizeof(*tables));
    for (kind = 0; kind < PSEL_UCX_TABLE_LAST; ++kind) {
        stream = fmemopen(text, len + 1, "r");
        if (stream == NULL) {
            status = UCS_ERR_NO_MEMORY;
            break;
        }
        tables->have[kind] = (psel_ucx_table_read_kind(stream, "UCX_PROTO_INFO",
                                                       kind,
                                                       &tables->table[kind]) ==
                              0);
        fclose(stream);
    }
    free(text);
    if ((status == UCS_OK) && (ops & UCS_BIT(CAL_OP_TAG)) &&
        !tables->have[PSEL_UCX_TABLE_TAG_SEND]) {
        fprintf(stderr, "psel_calibrate: UCP printed no tag-send table over "
                "%s (UCX_PROTO_INFO=y; is this UCX's protocols v2 there?)\n",
                setup->name);
        status = UCS_ERR_UNSUPPORTED;
    }
    return status;
}

static const psel_cmp_row_t *cal_ucp_row(const psel_cmp_ucx_t *table,
                                         size_t size)
{
    unsigned i;

    for (i = 0; i < table->num_rows; ++i) {
        if ((size >= table->rows[i].start) && (size <= table->rows[i].end)) {
            return &table->rows[i];
        }
    }
    return NULL;
}

/* An active message's protocol by its tag twin's name ("am/rndv/get":
 * "rndv/get"), as the rendezvous tables name what follows either */
static const char *cal_ucp_base(const char *name)
{
    return strncmp(name, "am/", 3) ? name : name + 3;
}

/*
 * The row of the protocol UCP runs for operation @a op, single or
 * @a streamed, at @a size: the sender's put, get or tag-send row; for a
 * rendezvous, the receiver's fetch row if it reads (get), else the sender's
 * row after the RTR (put or am). NULL if a table that decides is missing.
 */
static const psel_cmp_row_t *cal_ucp_ran(const cal_ucp_tables_t *tables,
                                         cal_op_t op, int streamed,
                                         size_t size)
{
    static const unsigned kinds[][2] = {
        [CAL_OP_TAG] = {PSEL_UCX_TABLE_TAG_SEND, PSEL_UCX_TABLE_TAG_SEND_MULTI},
        [CAL_OP_PUT] = {PSEL_UCX_TABLE_PUT, PSEL_UCX_TABLE_PUT_MULTI},
        [CAL_OP_GET] = {PSEL_UCX_TABLE_GET, PSEL_UCX_TABLE_GET_MULTI},
        [CAL_OP_AM]  = {PSEL_UCX_TABLE_AM_SEND, PSEL_UCX_TABLE_AM_SEND_MULTI}
    };
    unsigned kind = (streamed && tables->have[kinds[op][1]]) ? kinds[op][1] :
                    kinds[op][0];
    const psel_cmp_row_t *row;

    if (!tables->have[kind]) {
        return NULL;
    }
    row = cal_ucp_row(&tables->table[kind], size);
    if ((row == NULL) || ((op != CAL_OP_TAG) && (op != CAL_OP_AM)) ||
        strncmp(cal_ucp_base(row->proto), "rndv/", 5)) {
        return row;
    }
    if (!tables->have[PSEL_UCX_TABLE_RNDV_FETCH]) {
        /* UCX 1.18 on prints no fetch table: the tag-send row names how
         * the data moves, but for "no data fetch" (size 0; every row of
         * 1.16, which does not say) */
        return strstr(row->desc, "no data fetch") ? NULL : row;
    }
    row = cal_ucp_row(&tables->table[PSEL_UCX_TABLE_RNDV_FETCH], size);
    if ((row == NULL) || !strcmp(row->proto, "rndv/get") ||
        !strcmp(row->proto, "none")) {
        return row;
    }
    return tables->have[PSEL_UCX_TABLE_RNDV_SEND] ?
           cal_ucp_row(&tables->table[PSEL_UCX_TABLE_RNDV_SEND], size) : NULL;
}

/* A lanes cell of UCP's ("cma/memory 32% + tcp/eth0 68%") in protosel's
 * form, the key of a line ("cma/memory+tcp/eth0") */
static void cal_ucp_lanes(const char *cell, char *lanes, size_t max)
{
    psel_cmp_ucx_t *names = calloc(1, sizeof(*names));
    unsigned i;

    lanes[0] = '\0';
    if (names == NULL) {
        return;
    }
    psel_ucx_table_add_lanes(names, cell);
    for (i = 0; i < names->num_lanes; ++i) {
        snprintf(lanes + strlen(lanes), max - strlen(lanes), "%s%s",
                 (i == 0) ? "" : "+", names->lanes[i]);
    }
    free(names);
}

static int cal_size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t*)a, y = *(const size_t*)b;

    return (x > y) - (x < y);
}

/* Where any table's rows start: UCP's protocol may change there */
static unsigned cal_ucp_segments(const cal_ucp_tables_t *tables, size_t *starts)
{
    unsigned kind, i, count = 0, j;

    starts[count++] = 0;
    for (kind = 0; kind < PSEL_UCX_TABLE_LAST; ++kind) {
        for (i = 0; tables->have[kind] && (i < tables->table[kind].num_rows) &&
                    (count < CAL_UCP_MAX_SEGMENTS); ++i) {
            starts[count++] = tables->table[kind].rows[i].start;
        }
    }
    qsort(starts, count, sizeof(*starts), cal_size_cmp);
    for (i = j = 0; i < count; ++i) {
        if ((j == 0) || (starts[j - 1] != starts[i])) {
            starts[j++] = starts[i];
        }
    }
    return j;
}

/*
 * Where UCP runs @a p->name, both for a single and a streaming send, over
 * the same lanes: p->runs, the lanes, min_length, the largest size, and the
 * segment limits inside the runs as breaks. @return the number of runs; 0
 * with @a ran naming what UCP ran instead (at CAL_UCP_PROBE_SIZE).
 */
static unsigned cal_ucp_runs(const cal_ucp_tables_t *tables, cal_proto_t *p,
                             char *ran, size_t max)
{
    size_t starts[CAL_UCP_MAX_SEGMENTS], end;
    const psel_cmp_row_t *lat, *bw;
    char lanes[PSEL_PROTO_DESC_MAX];
    unsigned num, i;
    int joined;

    /* what UCP ran instead, at a size every protocol serves */
    lat = cal_ucp_ran(tables, p->op, 0, CAL_UCP_PROBE_SIZE);
    if (lat != NULL) {
        cal_ucp_lanes(lat->lanes, lanes, sizeof(lanes));
        snprintf(ran, max, "%s over %s", lat->proto,
                 (lanes[0] != '\0') ? lanes : "no lane");
    } else {
        snprintf(ran, max, "what its tables do not say");
    }

    num = cal_ucp_segments(tables, starts);
    p->num_runs   = 0;
    p->num_breaks = 0;
    for (i = 0; i < num; ++i) {
        end = (i + 1 < num) ? starts[i + 1] - 1 : SIZE_MAX;
        lat = cal_ucp_ran(tables, p->op, 0, starts[i]);
        bw  = cal_ucp_ran(tables, p->op, 1, starts[i]);
        if ((lat == NULL) || (bw == NULL) ||
            strcmp(cal_ucp_base(lat->proto), cal_ucp_base(p->name)) ||
            strcmp(cal_ucp_base(bw->proto), cal_ucp_base(p->name)) ||
            strcmp(lat->lanes, bw->lanes)) {
            continue;
        }
        cal_ucp_lanes(lat->lanes, lanes, sizeof(lanes));
        if (p->num_runs == 0) {
            ucs_strncpy_zero(p->caps.lanes, lanes, sizeof(p->caps.lanes));
        } else if (strcmp(p->caps.lanes, lanes)) {
            continue; /* other lanes: another line, not measured here */
        }
        joined = (p->num_runs > 0) &&
                 (p->runs[p->num_runs - 1].end + 1 == starts[i]);
        if (joined) {
            if (p->num_breaks < PSEL_PROTO_MAX_RANGES) {
                p->breaks[p->num_breaks++] = starts[i] - 1;
            }
            p->runs[p->num_runs - 1].end = end;
        } else if (p->num_runs < CAL_MAX_RUNS) {
            p->runs[p->num_runs].start = starts[i];
            p->runs[p->num_runs].end   = end;
            ++p->num_runs;
        }
    }
    if (p->num_runs > 0) {
        p->caps.min_length           = p->runs[0].start;
        p->caps.num_ranges           = 1;
        p->caps.ranges[0].max_length = p->runs[p->num_runs - 1].end;
    }
    return p->num_runs;
}

/* The lanes any of UCP's tables name for protocol @a name ("" if none) */
static void cal_ucp_lanes_of(const cal_ucp_tables_t *tables, unsigned count,
                             const char *name, char *lanes, size_t max)
{
    const psel_cmp_row_t *row;
    unsigned t, kind, i;

    lanes[0] = '\0';
    for (t = 0; t < count; ++t) {
        for (kind = 0; kind < PSEL_UCX_TABLE_LAST; ++kind) {
            for (i = 0; tables[t].have[kind] &&
                        (i < tables[t].table[kind].num_rows); ++i) {
                row = &tables[t].table[kind].rows[i];
                if (!strcmp(row->proto, name) && (row->lanes[0] != '\0')) {
                    cal_ucp_lanes(row->lanes, lanes, max);
                    return;
                }
            }
        }
    }
}


/* ---------------------------------------------------------------------- */
/* A setup                                                                */
/* ---------------------------------------------------------------------- */

/* UCP ran another protocol wherever @a p was forced: not UCP's to run over
 * the lanes its tables name for it (if they name any) */
static ucs_status_t cal_ucp_unsupported(cal_ctx_t *ctx,
                                        const cal_setup_t *setup,
                                        const cal_proto_t *p,
                                        const cal_ucp_tables_t *seen,
                                        unsigned num_seen, const char *ran)
{
    char lanes[PSEL_PROTO_DESC_MAX];
    psel_calib_line_t *line;

    cal_ucp_lanes_of(seen, num_seen, p->name, lanes, sizeof(lanes));
    if (lanes[0] == '\0') {
        printf("# %-4s %-10s %-24s UCP cannot run it here: it ran %s when "
               "it was forced\n", setup->name, p->name, "-", ran);
        return UCS_OK;
    }
    line = psel_calib_line_get_via(&ctx->calib, PSEL_CALIB_VIA_UCP, p->name,
                                   lanes, UCS_MEMORY_TYPE_HOST);
    if (line == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    line->unsupported = 1;
    printf("# %-4s %-10s %-24s UCP does not run it: it ran %s when it was "
           "forced (ucp-unsupported)\n", setup->name, p->name, lanes, ran);
    return UCS_OK;
}

/* UCP's put and get run as protosel models them from UCX 1.14 on, where
 * the protocol tier gives them lines (docs/runtime-library.md); UCX 1.13
 * keeps its own, so they are not measured there */
static int cal_ucp_measures_rma(void)
{
    unsigned major, minor, release;

    ucp_get_version(&major, &minor, &release);
    return (major > 1) || ((major == 1) && (minor >= 14));
}

ucs_status_t cal_ucp_setup(cal_ctx_t *ctx, const cal_setup_t *setup,
                           double end)
{
    cal_proto_t protos[CAL_UCP_NUM_TARGETS];
    psel_calib_line_t *lines[CAL_UCP_NUM_TARGETS];
    cal_ucp_tables_t *seen; /* [0]: UCP's own choice; then each forced */
    char ran[PSEL_PROTO_DESC_MAX + 64];
    unsigned i, count = 0, left, ops, first;
    ucs_status_t status;
    cal_proto_t *p;
    double start;

    ops = UCS_BIT(CAL_OP_TAG) | UCS_BIT(CAL_OP_AM);
    if (cal_ucp_measures_rma()) {
        ops |= UCS_BIT(CAL_OP_PUT) | UCS_BIT(CAL_OP_GET);
    } else {
        printf("# %-4s put and get: not measured, UCX %s keeps UCP's own "
               "lines for them\n", setup->name, ucp_get_version_string());
    }
    for (i = left = 0; i < CAL_UCP_NUM_TARGETS; ++i) {
        left += !!(ops & UCS_BIT(cal_ucp_targets[i].op));
    }

    seen = calloc(1 + CAL_UCP_NUM_TARGETS, sizeof(*seen));
    if (seen == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    /* UCP's own choice, for the lanes it estimates each protocol over */
    status = cal_ucp_configure(ctx, setup, NULL, ops, &seen[0]);
    if (status != UCS_OK) {
        fprintf(stderr, "psel_calibrate: cannot run stock UCP over %s "
                "(settings: %s)\n", setup->name, setup->settings);
        goto out;
    }

    /* the targets are grouped by operation: each group is fitted on its
     * own, its lines ordered among themselves */
    for (i = 0, first = 0; i < CAL_UCP_NUM_TARGETS; ++i) {
        if (!(ops & UCS_BIT(cal_ucp_targets[i].op))) {
            continue;
        }
        /* each protocol gets an even share of the time left */
        start = psel_oob_time();
        p     = &protos[count];
        memset(p, 0, sizeof(*p));
        ucs_strncpy_zero(p->name, cal_ucp_targets[i].name, sizeof(p->name));
        ucs_strncpy_zero(p->settings, cal_ucp_targets[i].settings,
                         sizeof(p->settings));
        p->op                = cal_ucp_targets[i].op;
        p->caps.cfg_priority = cal_ucp_targets[i].priority;
        status = cal_ucp_configure(ctx, setup, cal_ucp_targets[i].settings,
                                   UCS_BIT(p->op), &seen[1 + i]);
        if (status != UCS_OK) {
            goto out;
        }
        if (cal_ucp_runs(&seen[1 + i], p, ran, sizeof(ran)) == 0) {
            status = cal_ucp_unsupported(ctx, setup, p, seen, 2 + i, ran);
        } else {
            /* measured without UCX_PROTO_INFO (the tables are read) */
            status = cal_configure(ctx, setup, p->settings, NULL);
            if (status == UCS_OK) {
                lines[count] = psel_calib_line_get_via(&ctx->calib,
                                                       PSEL_CALIB_VIA_UCP,
                                                       p->name, p->caps.lanes,
                                                       UCS_MEMORY_TYPE_HOST);
                status       = (lines[count] == NULL) ? UCS_ERR_NO_MEMORY :
                               cal_protocol(ctx, setup, p, lines[count],
                                            start + (end - start) / left,
                                            start);
            }
            count += (status == UCS_OK);
        }
        if (status != UCS_OK) {
            goto out;
        }
        --left;
        if (((i + 1 == CAL_UCP_NUM_TARGETS) ||
             (cal_ucp_targets[i + 1].op != p->op)) && (count > first)) {
            status = cal_fit_setup(ctx, setup, &protos[first], &lines[first],
                                   count - first);
            if (status != UCS_OK) {
                goto out;
            }
            first = count;
        }
    }

out:
    free(seen);
    return status;
}
