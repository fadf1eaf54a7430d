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
#include <lane_select/ucx_info_import.h>
#include <ucp_proto_sel/calib.h>
#include <ucp_proto_sel/dump.h>
#include <ucp_proto_sel/ep_config.h>
#include <ucp_proto_sel/select.h>

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
    OPT_REMOTE_HOST
};

typedef struct {
    int         devices, endpoint, explain, json, config, all_types;
    const char *local_path, *peer_path, *save_path;
    int         locality; /* -1: default */
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
            "  -j            with -e: print JSON for scripts\n"
            "  -c            print every UCX_PSEL_* variable with its value and doc\n"
            "  --local FILE  local resources from a snapshot or `ucx_info -d` text\n"
            "  --peer FILE   peer resources from a snapshot or `ucx_info -d` text\n"
            "                (default: the local resources)\n"
            "  --same-host / --remote-host / --same-process\n"
            "                peer on this host (default for live resources), on\n"
            "                another host of the same kind (default with --local/--peer),\n"
            "                or in this very process, as `ucx_info -e` (self applies)\n"
            "  --save FILE   save the local resources as a snapshot\n"
            "  -h            this help\n"
            "With no option: -d -e on this machine.\n");
}

static int is_snapshot(const char *path)
{
    char line[64] = "";
    FILE *f       = fopen(path, "r");

    if (f == NULL) {
        return 0;
    }
    if (fgets(line, sizeof(line), f) == NULL) {
        line[0] = '\0';
    }
    fclose(f);
    return !strncmp(line, "protosel-snapshot", 17);
}

/* A snapshot if it says so on its first line, else `ucx_info -d` text. */
static ucs_status_t load_resources(const char *path,
                                   psel_resource_table_t *table)
{
    FILE *f = fopen(path, "r");

    if (f == NULL) {
        fprintf(stderr, "psel_info: cannot open '%s': %m\n", path);
        return UCS_ERR_NO_ELEM;
    }
    fclose(f);
    return is_snapshot(path) ? psel_snapshot_load_path(path, table) :
                               psel_ucx_info_import_file(path, table);
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
    return psel_resource_filter(table, &config->tls, &config->net_devices);
}

static void print_buffer_type_tables(psel_select_t *select,
                                     const psel_info_opts_t *opts, int *first)
{
    const psel_buffer_type_t types[] = {
        psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_CONTIG,
                         UCS_MEMORY_TYPE_HOST, 1),
        psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_IOV, UCS_MEMORY_TYPE_HOST, 4),
        psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_GENERIC,
                         UCS_MEMORY_TYPE_HOST, 1),
    };
    unsigned i, count = opts->all_types ? 3 : 1;
    const psel_select_table_t *table;

    for (i = 0; i < count; ++i) {
        if (psel_select_build(select, types[i], &table) != UCS_OK) {
            fprintf(stderr, "psel_info: no selection table (see the error "
                    "above); check UCX_PSEL_PROTOS, UCX_PSEL_TLS and the "
                    "thresholds\n");
            continue;
        }
        if (opts->json) {
            fputs(*first ? "" : ",\n", stdout);
            psel_select_dump_json(stdout, select, table, "ep");
        } else {
            psel_select_dump_protos(stdout, select, table);
            psel_select_dump(stdout, select, table, "ep",
                             opts->explain ? PSEL_DUMP_EXPLAIN : 0);
            fputs("\n", stdout);
        }
        *first = 0;
    }
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

static int show_endpoint(const psel_resource_table_t *local,
                         const psel_resource_table_t *peer,
                         const psel_config_t *config,
                         const psel_calib_t *calib,
                         const psel_info_opts_t *opts)
{
    psel_ep_params_t params = {
        .features = PSEL_FEATURE_TAG,
        .local    = local,
        .remote   = peer,
        .locality = opts->locality,
        .config   = config,
        .calib    = calib
    };
    psel_ep_config_t *ep;
    int first = 1;

    ep = malloc(sizeof(*ep));
    if (ep == NULL) {
        fprintf(stderr, "psel_info: out of memory\n");
        return 1;
    }
    if (psel_ep_config_init(ep, &params) != UCS_OK) {
        fprintf(stderr, "psel_info: no endpoint from %s to %s (see above); "
                "check UCX_PSEL_TLS, UCX_PSEL_NET_DEVICES and "
                "UCX_PSEL_PROTOS\n", table_name(local), table_name(peer));
        free(ep);
        return 1;
    }

    if (opts->json) {
        printf("{\"local\": \"%s\", \"peer\": \"%s\", \"peer_on\": "
               "\"%s\", \"tables\": [\n", local->origin, peer->origin,
               locality_name(opts->locality));
    } else {
        printf("#\n# endpoint from %s to %s (peer on %s)\n",
               table_name(local), table_name(peer),
               locality_name(opts->locality));
        psel_ep_lanes_print(stdout, &ep->lanes);
    }

    print_buffer_type_tables(&ep->select, opts, &first);
    if (opts->json) {
        printf("]}\n");
    }
    psel_ep_config_cleanup(ep);
    free(ep);
    return first; /* nonzero if no table could be built */
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
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}
    };
    int c;

    memset(opts, 0, sizeof(*opts));
    opts->locality = -1;
    while ((c = getopt_long(argc, argv, "dexajch", long_opts, NULL)) != -1) {
        switch (c) {
        case 'd': opts->devices   = 1; break;
        case 'e': opts->endpoint  = 1; break;
        case 'x': opts->explain   = 1; opts->endpoint = 1; break;
        case 'a': opts->all_types = 1; opts->endpoint = 1; break;
        case 'j': opts->json      = 1; opts->endpoint = 1; break;
        case 'c': opts->config    = 1; break;
        case OPT_LOCAL: opts->local_path = optarg; break;
        case OPT_PEER:  opts->peer_path  = optarg; break;
        case OPT_SAVE:  opts->save_path  = optarg; break;
        case OPT_SAME_HOST:   opts->locality = PSEL_PEER_SAME_HOST; break;
        case OPT_SAME_PROCESS: opts->locality = PSEL_PEER_SAME_PROCESS; break;
        case OPT_REMOTE_HOST: opts->locality = PSEL_PEER_REMOTE_HOST; break;
        case 'h': usage(stdout); exit(0);
        default:  usage(stderr); return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "psel_info: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return -1;
    }
    if (!opts->devices && !opts->endpoint && !opts->config &&
        (opts->save_path == NULL)) {
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
    int ret = 1;

    if (parse_args(argc, argv, &opts) != 0) {
        return 2;
    }
    if (psel_config_read(&config) != UCS_OK) {
        fprintf(stderr, "psel_info: fix the variable above; psel_info -c "
                "lists every UCX_PSEL_* variable with its accepted values\n");
        return 1;
    }

    if (opts.config) {
        psel_config_print(stdout, &config);
        if (!opts.devices && !opts.endpoint && (opts.save_path == NULL)) {
            ret = 0;
            goto out_config;
        }
    }

    if (opts.endpoint &&
        (psel_config_calibration_load(&config, &calib) != UCS_OK)) {
        goto out_config;
    }
    if (get_resources(opts.local_path, &config, &local) != UCS_OK) {
        goto out_config;
    }
    if (opts.save_path != NULL) {
        if (psel_snapshot_save_path(&local, opts.save_path) != UCS_OK) {
            goto out_local;
        }
        fprintf(stderr, "psel_info: saved %u resources to %s\n", local.count,
                opts.save_path);
    }
    if (opts.devices && !opts.json) {
        psel_resource_table_print(stdout, &local);
    }

    ret = 0;
    if (opts.endpoint) {
        if (opts.peer_path != NULL) {
            if (get_resources(opts.peer_path, &config, &peer) != UCS_OK) {
                ret = 1;
                goto out_local;
            }
            ret = show_endpoint(&local, &peer, &config, calib, &opts);
            psel_resource_table_cleanup(&peer);
        } else {
            ret = show_endpoint(&local, &local, &config, calib, &opts);
        }
    }

out_local:
    psel_resource_table_cleanup(&local);
out_config:
    psel_config_calibration_release(calib);
    psel_config_release(&config);
    return ret;
}
