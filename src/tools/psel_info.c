/*
 * psel_info: protosel's ucx_info. Shows resources, the lanes of an endpoint
 * and its protocol selection tables, for this machine or, from snapshots and
 * `ucx_info -d` dumps, for machines that are not here.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <lane_select/lane_engine.h>
#include <lane_select/reachability.h>
#include <lane_select/resource_table.h>
#include <lane_select/snapshot.h>
#include <lane_select/text_json.h>
#include <lane_select/text_scan.h>
#include <lane_select/ucx_info_import.h>
#include <ucp_proto_sel/calib.h>
#include <ucp_proto_sel/dump.h>
#include <ucp_proto_sel/ep_config.h>
#include <ucp_proto_sel/proto.h>
#include <ucp_proto_sel/select.h>
#include <ucp_proto_sel/ucx_thresh.h>

#include "psel_info.h"

#include <ucx_runtime/ucp_map.h>

#include <ucs/sys/math.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_LOCAL = 256,
    OPT_PEER,
    OPT_SAVE,
    OPT_SAME_HOST,
    OPT_SAME_PROCESS,
    OPT_REMOTE_HOST,
    OPT_PLOT,
    OPT_PLOT_KEEP,
    OPT_UCX_ENV,
    OPT_UCX_CONF,
    OPT_COMPARE_UCX,
    OPT_UCP
};

typedef struct {
    int         devices, endpoint, explain, json, config, all_types;
    int         ucx_env, quiet, for_ucp;
    unsigned    features;   /* PSEL_FEATURE_*: the operations of -e */
    int         features_given; /* -u: the operations of -e, or of
                                   --compare-ucx */
    int         atomics;    /* -u a: say that UCP's lines apply */
    const char *local_path, *peer_path, *save_path;
    const char *plot_path, *plot_keep, *ucx_conf;
    const char *compare_path;
    int         locality; /* -1: default */
    int         locality_given;
    psel_info_scale_opts_t scale;
} psel_info_opts_t;

static void usage(FILE *stream)
{
    fprintf(stream,
            "Usage: psel_info [options]\n"
            "  -d            show resources (like ucx_info -d), with ibverbs facts\n"
            "  -e            show an endpoint to a peer: its lanes and the tag-send\n"
            "                selection table (default peer: this machine, another process)\n"
            "  -x            with -e: explain every candidate's cost, crossovers, margins\n"
            "  -a            with -e: all buffer types (contig, iov, generic), not just contig\n"
            "  -u FEATURES   with -e: the operations, as ucx_info's letters: t tag send,\n"
            "                r put and get, m active messages, a atomics (not modelled:\n"
            "                UCP's lines apply); default t\n"
            "  -j            print JSON for scripts: one object with -c's \"config\",\n"
            "                -d's \"resources\" and -e's members (alone: -e)\n"
            "  -c            print every UCX_PSEL_* variable with its value and doc\n"
            "  --local FILE  local resources from a snapshot or `ucx_info -d` text\n"
            "  --peer FILE   peer resources from a snapshot or `ucx_info -d` text\n"
            "                (default: the local resources)\n"
            "  --same-host / --remote-host / --same-process\n"
            "                peer on this host (default for live resources), on\n"
            "                another host of the same kind (default with --local/--peer),\n"
            "                or in this very process, as `ucx_info -e` (self applies)\n"
            "  --save FILE   save the local resources as a snapshot\n"
            "  --plot FILE   draw every protocol's cost lines, the measured points and\n"
            "                the selected envelope with gnuplot (FILE.svg or FILE.png);\n"
            "                -a draws all buffer types\n"
            "  --plot-keep DIR  keep the plot's data files and gnuplot script in DIR\n"
            "  --ucx-env     print the UCX_* settings that bring stock UCP closest to\n"
            "                this selection: env $(psel_info --ucx-env) ucx_perftest ...\n"
            "  --ucx-conf DIR  write the same settings as DIR/ucx.conf, for\n"
            "                UCX_CONFIG_DIR=DIR (sites that cannot preload libprotosel_ucx.so)\n"
            "  -q            with --ucx-env, --ucx-conf: no comments on stderr\n"
            "  --ucp         select as libprotosel_ucx.so does in stock UCP: cost lines\n"
            "                measured through UCP (psel_calibrate --ucp) first, protocols\n"
            "                UCP does not run left out (--ucx-env, --ucx-conf imply it)\n"
            "  --compare-ucx FILE  UCX's table of each operation of -u (tag send by\n"
            "                default) for this machine (UCX_PROTO_INFO or ucx_info -e\n"
            "                output) beside protosel's for the same lanes, with the\n"
            "                reasons where they differ (-j: JSON)\n");
    psel_info_scale_usage(stream);
    fprintf(stream,
            "  -h            this help\n"
            "With no option: -d -e on this machine.\n");
}

/* A snapshot if it says so on its first line, else `ucx_info -d` text. */
static ucs_status_t load_resources(const char *path,
                                   psel_resource_table_t *table)
{
    char line[64] = "";
    ucs_status_t status;
    FILE *f;

    f = psel_text_file_open(path, "resources (a snapshot or `ucx_info -d` "
                            "text)");
    if (f == NULL) {
        return UCS_ERR_IO_ERROR;
    }
    if (fgets(line, sizeof(line), f) == NULL) {
        line[0] = '\0';
    }
    rewind(f);
    status = !strncmp(line, "protosel-snapshot", 17) ?
             psel_snapshot_load(f, path, table) :
             psel_ucx_info_import(f, path, table);
    fclose(f);
    return status;
}

static ucs_status_t get_resources(const char *path,
                                  const psel_config_t *config,
                                  psel_resource_table_t *table)
{
    ucs_status_t status;

    psel_resource_table_init(table);
    status = (path != NULL) ? load_resources(path, table) :
                              psel_resource_discover(table);
    if (status != UCS_OK) {
        fprintf(stderr, "psel_info: could not read resources from %s: %s\n",
                (path != NULL) ? path : "UCT", ucs_status_string(status));
        return status;
    }
    status = psel_resource_filter_report(table, &config->tls, "UCX_PSEL_TLS",
                                         &config->net_devices,
                                         "UCX_PSEL_NET_DEVICES");
    if (status != UCS_OK) {
        psel_resource_table_cleanup(table);
    }
    return status;
}

static const char *locality_name(int locality)
{
    switch (locality) {
    case PSEL_PEER_REMOTE_HOST:  return "another host";
    case PSEL_PEER_SAME_PROCESS: return "this process";
    default:                     return "this host";
    }
}

/* "live resources of <host>", or the file the table came from */
static const char *table_name(const psel_resource_table_t *table)
{
    static char names[2][sizeof(table->host) + 32];
    static unsigned next;
    char *name;

    if (strcmp(table->origin, "live") != 0) {
        return table->origin;
    }
    name = names[next++ % 2];
    snprintf(name, sizeof(names[0]), "live resources of %s",
             table->host[0] ? table->host : "this host");
    return name;
}

/* Build the tables of the buffer types asked for (contig first, then iov,
 * generic, and contig of each other memory type the lanes can send from).
 * With a calibration, also the tables the transports' attributes alone give. */
static unsigned build_op_tables(psel_select_t *select, psel_select_t *attrs,
                                psel_op_t op, unsigned count,
                                uint64_t mem_types, psel_info_table_t *tables)
{
    psel_buffer_type_t types[3 + UCS_MEMORY_TYPE_LAST] = {
        psel_buffer_type(op, PSEL_DT_CONTIG, UCS_MEMORY_TYPE_HOST, 1),
        psel_buffer_type(op, PSEL_DT_IOV, UCS_MEMORY_TYPE_HOST, 4),
        psel_buffer_type(op, PSEL_DT_GENERIC, UCS_MEMORY_TYPE_HOST, 1),
    };
    unsigned i, built = 0, num_types = 3;
    psel_info_table_t *t;
    ucs_memory_type_t mt;

    for (mt = UCS_MEMORY_TYPE_HOST + 1; mt < UCS_MEMORY_TYPE_LAST; ++mt) {
        if (mem_types & UCS_BIT(mt)) {
            types[num_types++] = psel_buffer_type(op, PSEL_DT_CONTIG, mt, 1);
        }
    }
    for (i = 0; i < ucs_min(count, num_types); ++i) {
        t         = &tables[built];
        t->select = select;
        if ((psel_select_build(select, types[i], &t->table) != UCS_OK) ||
            ((attrs != NULL) &&
             (psel_select_build(attrs, types[i], &t->attrs) != UCS_OK))) {
            fprintf(stderr, "psel_info: no %s table (each protocol's reason "
                    "is above); check UCX_PSEL_PROTOS, UCX_PSEL_TLS and the "
                    "thresholds\n", psel_op_name(op));
            continue;
        }
        if (attrs == NULL) {
            t->attrs = t->table;
        }
        ++built;
    }
    return built;
}

/* Build the tables of the endpoint's operations (tag send, put, get, am
 * send), for each the buffer types asked for: contig first, then iov,
 * generic, and contig of each other memory type the lanes can send from.
 * With a calibration, also the tables the transports' attributes alone
 * give. */
static unsigned build_tables(const psel_ep_config_t *ep, psel_select_t *select,
                             psel_select_t *attrs, unsigned count,
                             uint64_t mem_types, psel_info_table_t *tables)
{
    unsigned built = 0;
    psel_op_t op;

    for (op = 0; op < PSEL_OP_LAST; ++op) {
        if (ep->op_mask & UCS_BIT(op)) {
            built += build_op_tables(select, attrs, op, count, mem_types,
                                     tables + built);
        }
    }
    return built;
}

static void print_tables(const psel_info_table_t *tables, unsigned count,
                         const psel_info_opts_t *opts)
{
    const psel_info_table_t *t;
    unsigned i;

    for (i = 0; i < count; ++i) {
        t = &tables[i];
        if (opts->json) {
            fputs((i == 0) ? "" : ",\n", stdout);
            psel_select_dump_json(stdout, t->select, t->table, "ep");
            continue;
        }
        psel_select_dump_cost_source(stdout, t->select, t->table);
        psel_select_dump_protos(stdout, t->select, t->table);
        psel_select_dump(stdout, t->select, t->table, "ep",
                         opts->explain ? PSEL_DUMP_EXPLAIN : 0);
        if (opts->explain && (t->select->calib != NULL)) {
            psel_select_dump_compare(stdout, t->select, t->table, t->attrs);
        }
        if (opts->explain && (t->table->buf_type.op == PSEL_OP_TAG_SEND) &&
            (t->table->buf_type.dt_class == PSEL_DT_CONTIG) &&
            (t->table->buf_type.mem_type == UCS_MEMORY_TYPE_HOST)) {
            psel_ucx_thresh_dump(stdout, t->select, t->table);
        }
        fputs("\n", stdout);
    }
}

/*
 * Stock UCP's ucp_tag_send_nbx first tries its inline egr/short, bounded by
 * the table of single sends (ucp_proto_select_short_init looks at no
 * other): a streamed send that fits goes out by egr/short whatever the
 * streamed table says, and that table takes over only for a send the
 * transport refuses. Say so under a streamed table of --ucp whose first
 * row is not that egr/short range.
 */
static void print_ucp_inline_note(const psel_select_table_t *single,
                                  const psel_select_table_t *stream)
{
    const psel_select_elem_t *inline_row, *first;

    if ((single->count == 0) || (stream->count == 0)) {
        return;
    }
    inline_row = &single->elems[0];
    first      = &stream->elems[0];
    if ((psel_proto_egr_short_lane(inline_row->proto, inline_row->priv) < 0) ||
        ((first->proto == inline_row->proto) &&
         (first->max_length >= inline_row->max_length))) {
        return;
    }
    printf("# in stock UCP, streamed sends of 0..%zu bytes still go by "
           "egr/short: ucp_tag_send_nbx tries its inline egr/short first, "
           "bounded by the table of single sends; this table takes over "
           "for a send the transport refuses\n", inline_row->max_length);
}

/* The ucx_perftest test that streams operation @a op */
static const char *stream_test_name(psel_op_t op)
{
    switch (op) {
    case PSEL_OP_PUT:     return "ucp_put_bw";
    case PSEL_OP_GET:     return "ucp_get";
    case PSEL_OP_AM_SEND: return "ucp_am_bw";
    default:              return "tag_bw";
    }
}

/* The contiguous host table of streamed sends (PSEL_SEND_FLAG_STREAM, as
 * tag_bw sends), selected on the multi cost: with -j always (member
 * "streamed"), as text when its rows are not those of @a single (the table
 * of single sends) */
static void print_stream_table(psel_ep_config_t *ep,
                               const psel_info_table_t *single,
                               const psel_info_opts_t *opts)
{
    ucs_string_buffer_t rows_single, rows_stream;
    const psel_select_table_t *table;
    int same;

    if ((ep->select.config->select_perf == PSEL_PERF_MULTI) ||
        (psel_select_build(&ep->stream, single->table->buf_type, &table) !=
         UCS_OK)) {
        return; /* the same, or its error is printed above */
    }
    if (opts->json) {
        psel_tool_json_member(stdout, "streamed");
        psel_select_dump_json(stdout, &ep->stream, table, "streamed");
        return;
    }
    ucs_string_buffer_init(&rows_single);
    ucs_string_buffer_init(&rows_stream);
    psel_select_rows_str(single->table, &rows_single);
    psel_select_rows_str(table, &rows_stream);
    same = !strcmp(ucs_string_buffer_cstr(&rows_single),
                   ucs_string_buffer_cstr(&rows_stream));
    ucs_string_buffer_cleanup(&rows_single);
    ucs_string_buffer_cleanup(&rows_stream);
    if (same) {
        printf("# streamed sends (multi cost, as %s): the same table\n\n",
               stream_test_name(single->table->buf_type.op));
        return;
    }
    printf("# streamed sends (multi cost, as %s):\n",
           stream_test_name(single->table->buf_type.op));
    psel_select_dump(stdout, &ep->stream, table, "streamed",
                     opts->explain ? PSEL_DUMP_EXPLAIN : 0);
    if (opts->for_ucp) {
        print_ucp_inline_note(single->table, table);
    }
    fputs("\n", stdout);
}

static int show_endpoint(const psel_resource_table_t *local,
                         const psel_resource_table_t *peer,
                         const psel_config_t *config,
                         const psel_calib_t *calib,
                         const psel_info_opts_t *opts)
{
    psel_ep_params_t params = {
        .features = opts->features,
        .local    = local,
        .remote   = peer,
        .locality = opts->locality,
        .config   = config,
        .calib    = calib,
        .calib_for_ucp = opts->for_ucp || opts->ucx_env,
        .ucp_filter    = (opts->for_ucp || opts->ucx_env) ?
                         psel_ucp_map_stand_in : NULL,
        .num_eps  = psel_info_scale_num_eps(&opts->scale, config)
    };
    unsigned num_print = opts->all_types ? 3 + UCS_MEMORY_TYPE_LAST : 1;
    psel_info_ep_ctx_t ctx;
    unsigned i;
    psel_info_table_t tables[PSEL_OP_LAST * (3 + UCS_MEMORY_TYPE_LAST)];
    psel_select_t *attrs = NULL;
    psel_ep_config_t *ep;
    unsigned count;
    int ret = 1;

    ep = malloc(sizeof(*ep));
    if (ep == NULL) {
        fprintf(stderr, "psel_info: out of memory\n");
        return 1;
    }
    if (psel_ep_config_init(ep, &params) != UCS_OK) {
        fprintf(stderr, "psel_info: no endpoint from %s to %s (see above); "
                "check UCX_PSEL_TLS, UCX_PSEL_NET_DEVICES and "
                "UCX_PSEL_PROTOS\n", table_name(local), table_name(peer));
        goto out_free;
    }

    /* the same protocols over the same lanes, costed on attributes only */
    if (calib != NULL) {
        attrs = malloc(sizeof(*attrs));
        if ((attrs == NULL) ||
            (psel_select_init(attrs, ep->protos, ep->num_protos,
                              &ep->lanes.sets, config) != UCS_OK)) {
            fprintf(stderr, "psel_info: out of memory\n");
            free(attrs);
            goto out_ep;
        }
    }

    /* --ucx-env weighs the host buffer types only */
    count = build_tables(ep, &ep->select, attrs, opts->ucx_env ? 3 : num_print,
                         psel_lane_sets_mem_types(&ep->lanes.sets), tables);
    if (count == 0) {
        goto out_attrs;
    }
    ctx = (psel_info_ep_ctx_t){local, peer, config, calib, opts->locality, ep,
                               tables, count};

    if (opts->endpoint && opts->json) {
        psel_tool_json_member(stdout, "local");
        psel_json_string(stdout, local->origin);
        psel_tool_json_member(stdout, "peer");
        psel_json_string(stdout, peer->origin);
        psel_tool_json_member(stdout, "peer_on");
        psel_json_string(stdout, locality_name(opts->locality));
        psel_tool_json_member(stdout, "num_eps");
        printf("%zu", ep->lanes.num_eps);
        psel_tool_json_member(stdout, "calibration");
        psel_select_dump_json_calib(stdout, &ep->select);
        psel_tool_json_member(stdout, "tables");
        printf("[\n");
        print_tables(tables, count, opts);
        printf("]");
        print_stream_table(ep, &tables[0], opts);
        if (opts->scale.peers > 0) {
            psel_tool_json_member(stdout, "footprint");
            psel_info_footprint_json(stdout, &ctx, opts->scale.peers);
        }
    } else if (opts->endpoint) {
        printf("#\n# endpoint from %s to %s (peer on %s)\n",
               table_name(local), table_name(peer),
               locality_name(opts->locality));
        psel_ep_lanes_print(stdout, &ep->lanes);
        if (opts->explain) {
            psel_lanes_print_candidates(stdout, local, peer, &ep->lane_params,
                                        &ep->lanes);
        }
        if (opts->scale.peers > 0) {
            psel_info_footprint_print(stdout, &ctx, opts->scale.peers);
        }
        print_tables(tables, count, opts);
        for (i = 0; i < count; ++i) {
            if ((tables[i].table->buf_type.dt_class == PSEL_DT_CONTIG) &&
                (tables[i].table->buf_type.mem_type == UCS_MEMORY_TYPE_HOST)) {
                print_stream_table(ep, &tables[i], opts);
            }
        }
        if (opts->atomics) {
            printf("# atomics: protosel models none; UCP's own lines "
                   "select them\n\n");
        }
    }

    ret = 0;
    if (opts->scale.alltoall > 0) {
        /* --plot draws the alltoall estimate */
        ret |= psel_info_alltoall(stdout, &ctx, &opts->scale, opts->plot_path,
                                  opts->plot_keep);
    } else if ((opts->plot_path != NULL) && (opts->scale.peers > 0)) {
        ret |= psel_info_footprint_plot(opts->plot_path, opts->plot_keep, &ctx,
                                        opts->scale.peers);
    } else if ((opts->plot_path != NULL) &&
               (psel_info_plot(opts->plot_path, opts->plot_keep, tables,
                               count, calib) != 0)) {
        ret = 1;
    }
    if (opts->scale.rq_suggest) {
        ret |= psel_info_rq_suggest(stdout, &ctx,
                                    ucs_max(ep->lanes.num_eps, (size_t)1));
    }
    if (opts->ucx_env && (psel_info_ucx_env(local, &ep->lanes, tables, count,
                                            opts->locality, opts->ucx_conf,
                                            opts->quiet) != 0)) {
        ret = 1;
    }

out_attrs:
    if (attrs != NULL) {
        psel_select_cleanup(attrs);
        free(attrs);
    }
out_ep:
    psel_ep_config_cleanup(ep);
out_free:
    free(ep);
    return ret;
}

/* -u FEATURES: ucx_info's letters */
/*
 * --compare-ucx for each operation of -u: tag send, put, get, active
 * messages. One operation prints one comparison (with -j one JSON
 * object); several print one after the other (with -j, one member each,
 * named as the operation: "tag_send", "put", "get", "am_send").
 */
static int compare_ucx(const psel_info_opts_t *opts,
                       const psel_resource_table_t *local,
                       const psel_resource_table_t *peer,
                       const psel_config_t *config)
{
    static const struct {
        psel_op_t   op;
        const char *member;
    } ops[] = {
        {PSEL_OP_TAG_SEND, "tag_send"},
        {PSEL_OP_PUT,      "put"},
        {PSEL_OP_GET,      "get"},
        {PSEL_OP_AM_SEND,  "am_send"}
    };
    unsigned i, count = 0;
    int ret = 0;

    for (i = 0; i < ucs_static_array_size(ops); ++i) {
        count += !!(opts->features & psel_ep_feature_of_op(ops[i].op));
    }
    for (i = 0; i < ucs_static_array_size(ops); ++i) {
        if (!(opts->features & psel_ep_feature_of_op(ops[i].op))) {
            continue;
        }
        if (opts->json && (count > 1)) {
            psel_tool_json_member(stdout, ops[i].member);
        }
        ret |= psel_info_compare_ucx(opts->compare_path, ops[i].op, local,
                                     peer, config, opts->locality_given ?
                                     opts->locality : -1, opts->json);
    }
    return ret;
}

static int parse_features(const char *letters, psel_info_opts_t *opts)
{
    const char *p;

    opts->features = 0;
    opts->atomics  = 0;
    for (p = letters; *p != '\0'; ++p) {
        switch (*p) {
        case 't': opts->features |= PSEL_FEATURE_TAG; break;
        case 'r': opts->features |= PSEL_FEATURE_RMA; break;
        case 'm': opts->features |= PSEL_FEATURE_AM; break;
        case 'a': opts->atomics   = 1; break;
        default:
            fprintf(stderr, "psel_info: -u %s: unknown feature '%c' at "
                    "position %ld; the letters are t (tag send), r (put and "
                    "get), m (active messages) and a (atomics)\n", letters,
                    *p, (long)(p - letters) + 1);
            return -1;
        }
    }
    if (opts->features == 0) {
        fprintf(stderr, "psel_info: -u '%s' names no operation protosel "
                "selects for: add t, r or m (atomics keep UCP's lines)\n",
                letters);
        return -1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, psel_info_opts_t *opts)
{
    static const struct option long_opts[] = {
        {"local", required_argument, NULL, OPT_LOCAL},
        {"peer", required_argument, NULL, OPT_PEER},
        {"save", required_argument, NULL, OPT_SAVE},
        {"same-host", no_argument, NULL, OPT_SAME_HOST},
        {"same-process", no_argument, NULL, OPT_SAME_PROCESS},
        {"remote-host", no_argument, NULL, OPT_REMOTE_HOST},
        {"plot", required_argument, NULL, OPT_PLOT},
        {"plot-keep", required_argument, NULL, OPT_PLOT_KEEP},
        {"ucx-env", no_argument, NULL, OPT_UCX_ENV},
        {"ucx-conf", required_argument, NULL, OPT_UCX_CONF},
        {"compare-ucx", required_argument, NULL, OPT_COMPARE_UCX},
        {"ucp", no_argument, NULL, OPT_UCP},
        PSEL_INFO_SCALE_LONG_OPTIONS,
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}
    };
    int c;

    memset(opts, 0, sizeof(*opts));
    opts->locality = -1;
    psel_info_scale_defaults(&opts->scale);
    opts->features = PSEL_FEATURE_TAG;
    while ((c = getopt_long(argc, argv, "dexajcqu:h", long_opts, NULL)) != -1) {
        switch (c) {
        case 'd': opts->devices   = 1; break;
        case 'e': opts->endpoint  = 1; break;
        case 'x': opts->explain   = 1; opts->endpoint = 1; break;
        case 'a': opts->all_types = 1; opts->endpoint = 1; break;
        case 'j': opts->json      = 1; break;
        case 'c': opts->config    = 1; break;
        case 'q': opts->quiet     = 1; break;
        case 'u':
            if (parse_features(optarg, opts) != 0) {
                return -1;
            }
            opts->features_given = 1;
            break;
        case OPT_LOCAL: opts->local_path = optarg; break;
        case OPT_PEER:  opts->peer_path  = optarg; break;
        case OPT_SAVE:  opts->save_path  = optarg; break;
        case OPT_SAME_HOST:   opts->locality = PSEL_PEER_SAME_HOST; break;
        case OPT_SAME_PROCESS: opts->locality = PSEL_PEER_SAME_PROCESS; break;
        case OPT_REMOTE_HOST: opts->locality = PSEL_PEER_REMOTE_HOST; break;
        case OPT_PLOT:      opts->plot_path = optarg; break;
        case OPT_PLOT_KEEP: opts->plot_keep = optarg; break;
        case OPT_UCX_ENV:   opts->ucx_env   = 1; break;
        case OPT_UCX_CONF:  opts->ucx_conf  = optarg; opts->ucx_env = 1; break;
        case OPT_COMPARE_UCX: opts->compare_path = optarg; break;
        case OPT_UCP:       opts->for_ucp   = 1; break;
        case PSEL_INFO_OPT_PEERS:
        case PSEL_INFO_OPT_RQ:
        case PSEL_INFO_OPT_RQ_SUGGEST:
        case PSEL_INFO_OPT_ALLTOALL:
        case PSEL_INFO_OPT_SIZE:
        case PSEL_INFO_OPT_PROXY:
            if (psel_info_scale_opt(c, optarg, &opts->scale) != 0) {
                return -1;
            }
            break;
        case 'h': usage(stdout); exit(0);
        default:  usage(stderr); return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "psel_info: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return -1;
    }
    if ((opts->plot_keep != NULL) && (opts->plot_path == NULL)) {
        fprintf(stderr, "psel_info: --plot-keep needs --plot FILE\n");
        return -1;
    }
    if (opts->features_given && (opts->compare_path == NULL)) {
        opts->endpoint = 1; /* -u: -e for those operations */
    }
    if (opts->json && !opts->devices && !opts->config &&
        (opts->compare_path == NULL)) {
        opts->endpoint = 1; /* -j alone: -e's JSON */
    }
    if (opts->json && (opts->compare_path != NULL) &&
        (opts->devices || opts->endpoint || opts->config)) {
        fprintf(stderr, "psel_info: with -j, --compare-ucx prints a JSON "
                "document of its own; run -c, -d and -e -j apart\n");
        return -1;
    }
    if ((opts->features != PSEL_FEATURE_TAG) && opts->ucx_env) {
        fprintf(stderr, "psel_info: --ucx-env and --ucx-conf cover tag send "
                "only; run them without -u\n");
        return -1;
    }
    if (opts->ucx_env && (opts->devices || opts->endpoint || opts->config ||
                          opts->json)) {
        fprintf(stderr, "psel_info: --ucx-env and --ucx-conf give only "
                "settings; run them without -d, -e, -x, -a, -j and -c\n");
        return -1;
    }
    opts->locality_given = (opts->locality >= 0);
    if (psel_info_scale_check(&opts->scale, opts->endpoint, opts->json) != 0) {
        return -1;
    }
    if (!opts->devices && !opts->endpoint && !opts->config &&
        (opts->save_path == NULL) && (opts->plot_path == NULL) &&
        !opts->ucx_env && (opts->compare_path == NULL) &&
        (opts->scale.rq_spec == NULL) &&
        !psel_info_scale_needs_ep(&opts->scale)) {
        opts->devices = opts->endpoint = 1;
    }
    if (opts->locality < 0) {
        opts->locality = ((opts->local_path != NULL) ||
                          (opts->peer_path != NULL)) ?
                         PSEL_PEER_REMOTE_HOST : PSEL_PEER_SAME_HOST;
    }
    return 0;
}

int main(int argc, char **argv)
{
    psel_resource_table_t local, peer;
    psel_calib_t *calib = NULL;
    psel_info_opts_t opts;
    psel_config_t config;
    int ret = 1, need_ep;

    psel_tool_diag_init("psel_info");
    if (parse_args(argc, argv, &opts) != 0) {
        if (opts.json) {
            psel_tool_diag_json_error(stdout, "bad command line");
        }
        return 2;
    }
    if (psel_config_read(&config) != UCS_OK) {
        fprintf(stderr, "psel_info: fix the variable above; psel_info -c "
                "lists every UCX_PSEL_* variable with its accepted values\n");
        if (opts.json) {
            psel_tool_diag_json_error(stdout, "bad UCX_PSEL_* setting");
        }
        return 1;
    }

    if (opts.scale.rq_spec != NULL) {
        ret = psel_info_rq_spec(stdout, opts.scale.rq_spec, opts.scale.peers);
        if ((ret != 0) || (!opts.devices && !opts.endpoint && !opts.config &&
                           (opts.save_path == NULL) &&
                           (opts.plot_path == NULL) && !opts.ucx_env &&
                           !psel_info_scale_needs_ep(&opts.scale))) {
            goto out_config;
        }
    }

    if (opts.config && opts.json) {
        psel_tool_json_member(stdout, "config");
        psel_config_print_json(stdout, &config);
    } else if (opts.config) {
        psel_config_print(stdout, &config);
    }
    if (opts.config) {
        if (!opts.devices && !opts.endpoint && (opts.save_path == NULL) &&
            (opts.plot_path == NULL)) {
            ret = 0;
            goto out_config;
        }
    }

    need_ep = opts.endpoint || (opts.plot_path != NULL) || opts.ucx_env ||
              psel_info_scale_needs_ep(&opts.scale);
    if (need_ep && (psel_config_calibration_load(&config, &calib) != UCS_OK)) {
        goto out_config;
    }
    if (get_resources(opts.local_path, &config, &local) != UCS_OK) {
        goto out_config;
    }
    if (opts.local_path == NULL) {
        psel_config_measure_copies(&config);
        psel_config_apply_copies(&config, &local);
    } else {
        psel_config_copies_of_file(&config, &local);
    }
    if (opts.save_path != NULL) {
        if (psel_snapshot_save_path(&local, opts.save_path) != UCS_OK) {
            goto out_local;
        }
        fprintf(stderr, "psel_info: saved %u resources to %s\n", local.count,
                opts.save_path);
    }
    if (opts.devices && opts.json) {
        psel_tool_json_member(stdout, "resources");
        psel_snapshot_print_json(&local, stdout);
    } else if (opts.devices) {
        psel_resource_table_print(stdout, &local);
    }

    ret = 0;
    if ((opts.compare_path != NULL) || need_ep) {
        if ((opts.peer_path != NULL) &&
            (get_resources(opts.peer_path, &config, &peer) != UCS_OK)) {
            ret = 1;
            goto out_local;
        }
        if (opts.compare_path != NULL) {
            ret = compare_ucx(&opts, &local,
                              (opts.peer_path != NULL) ? &peer : &local,
                              &config);
        } else {
            ret = show_endpoint(&local, (opts.peer_path != NULL) ? &peer :
                                                                   &local,
                                &config, calib, &opts);
        }
        if (opts.peer_path != NULL) {
            psel_resource_table_cleanup(&peer);
        }
    }

out_local:
    psel_resource_table_cleanup(&local);
out_config:
    psel_config_calibration_release(calib);
    psel_config_release(&config);
    if (opts.json && (ret != 0)) {
        psel_tool_diag_json_error(stdout, "no selection table; the messages "
                                  "say why");
    } else if (opts.json) {
        psel_tool_json_end(stdout);
    }
    return ret;
}
