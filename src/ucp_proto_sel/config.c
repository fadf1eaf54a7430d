/*
 * UCX_PSEL_* settings, parsed by the libucs config parser.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "psel_config.h"

#include "calib.h"

#include <lane_select/lane.h>
#include <lane_select/text_json.h>
#include <lane_select/text_scan.h>
#include <lane_select/ucs_compat.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/preprocessor.h>
#include <ucs/sys/string.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <strings.h>

static const char *psel_perf_type_names[] = {
    [PSEL_PERF_SINGLE] = "single",
    [PSEL_PERF_MULTI]  = "multi",
    [PSEL_PERF_LAST]   = NULL
};

static const char *psel_tier_names[] = {
    [PSEL_TIER_AUTO]     = "auto",
    [PSEL_TIER_CONFIG]   = "config",
    [PSEL_TIER_PROTOCOL] = "protocol",
    [PSEL_TIER_LAST]     = NULL
};

static const char *psel_proto_info_names[] = {
    [PSEL_PROTO_INFO_NO]   = "n",
    [PSEL_PROTO_INFO_YES]  = "y",
    [PSEL_PROTO_INFO_USED] = "used",
    [PSEL_PROTO_INFO_LAST] = NULL
};

/* UCX_PSEL_PROTO_INFO: the usual boolean spellings, plus "used". */
static int psel_config_sscanf_proto_info(const char *buf, void *dest,
                                         const void *arg)
{
    static const char *yes[] = {"y", "yes", "on", "1"};
    static const char *no[]  = {"n", "no", "off", "0"};
    unsigned i;

    for (i = 0; i < 4; ++i) {
        if (!strcasecmp(buf, yes[i])) {
            *(int*)dest = PSEL_PROTO_INFO_YES;
            return 1;
        }
        if (!strcasecmp(buf, no[i])) {
            *(int*)dest = PSEL_PROTO_INFO_NO;
            return 1;
        }
    }
    if (!strcasecmp(buf, "used")) {
        *(int*)dest = PSEL_PROTO_INFO_USED;
        return 1;
    }
    return 0;
}

static int psel_config_sprintf_proto_info(char *buf, size_t max,
                                          const void *src, const void *arg)
{
    ucs_strncpy_safe(buf, psel_proto_info_names[*(const int*)src], max);
    return 1;
}

/* "auto", or a percentage with an optional '%' */
static int psel_config_sscanf_margin(const char *buf, void *dest,
                                     const void *arg)
{
    const char *p = buf;
    double value;

    if (!strcasecmp(buf, "auto")) {
        *(double*)dest = PSEL_SWITCH_MARGIN_AUTO;
        return 1;
    }
    if (!psel_scan_double(&p, &value) || ((*p != '\0') && strcmp(p, "%")) ||
        !(value >= 0) || !(value < 50)) {
        return 0;
    }
    *(double*)dest = value / 100.0;
    return 1;
}

static int psel_config_sprintf_margin(char *buf, size_t max, const void *src,
                                      const void *arg)
{
    double value = *(const double*)src;

    if (value == PSEL_SWITCH_MARGIN_AUTO) {
        ucs_strncpy_safe(buf, "auto", max);
    } else {
        psel_text_snprintf(buf, max, "%g%%", value * 100.0);
    }
    return 1;
}

#define PSEL_CONFIG_TYPE_MARGIN \
    PSEL_UCS_CONFIG_PARSER(psel_config_sscanf_margin, \
                           psel_config_sprintf_margin, \
                           ucs_config_clone_double, ucs_config_release_nop, \
                           ucs_config_help_generic, \
                           "percentage, 0 <= value < 50, or \"auto\"")

#define PSEL_CONFIG_TYPE_PROTO_INFO \
    PSEL_UCS_CONFIG_PARSER(psel_config_sscanf_proto_info, \
                           psel_config_sprintf_proto_info, \
                           ucs_config_clone_int, ucs_config_release_nop, \
                           ucs_config_help_generic, "<y|n|used>")

ucs_config_field_t psel_config_table[] = {
    {"PROTOS", "all",
     "Protocols that selection may use, by name (see psel_info -e), as an\n"
     "allow-list: a comma-separated list of names or fnmatch(3) globs, such as\n"
     "\"egr/*,rndv/get\"; a leading '^' turns it into a deny-list, as in\n"
     "\"^rndv/am\"; \"all\" allows every protocol.",
     ucs_offsetof(psel_config_t, protos), UCS_CONFIG_TYPE_ALLOW_LIST},

    {"RNDV_THRESH", "auto",
     "Forced rendezvous threshold: messages of this size or larger use a\n"
     "rendezvous protocol and smaller ones never do. \"auto\" selects by the\n"
     "cost model; \"inf\" disables rendezvous.",
     ucs_offsetof(psel_config_t, rndv_thresh), UCS_CONFIG_TYPE_MEMUNITS},

    {"ZCOPY_THRESH", "auto",
     "Forced eager zero-copy threshold: eager messages of this size or larger\n"
     "use zero-copy and smaller ones never do. \"auto\" selects by the cost\n"
     "model; \"inf\" disables eager zero-copy.",
     ucs_offsetof(psel_config_t, zcopy_thresh), UCS_CONFIG_TYPE_MEMUNITS},

    {"RNDV_PERF_DIFF", "1",
     "Rendezvous bias, in percent (0 <= value < 100): rendezvous costs are\n"
     "multiplied by d = 1 - value/100 before comparison. The bias moves an\n"
     "eager/rendezvous boundary by at most a factor of 2.",
     ucs_offsetof(psel_config_t, rndv_perf_diff), UCS_CONFIG_TYPE_DOUBLE},

    {"SWITCH_MARGIN", "auto",
     "How much cheaper a protocol must be to take sizes from the one that\n"
     "serves the sizes below (or, at a size where the candidates change, from\n"
     "the one earlier in the natural order short, bcopy, zcopy, rendezvous):\n"
     "lines that tie within it do not make the table alternate. A\n"
     "percentage, or \"auto\": twice the run spread the calibration recorded\n"
     "(its noise line), from 1% to 25%; 2% on lines from the transports'\n"
     "attributes.",
     ucs_offsetof(psel_config_t, switch_margin), PSEL_CONFIG_TYPE_MARGIN},

    {"PROTO_INFO", "n",
     "Print protocol selection tables: \"y\" at endpoint init, \"used\" at\n"
     "worker destroy for the protocols that ran, \"n\" never.",
     ucs_offsetof(psel_config_t, proto_info), PSEL_CONFIG_TYPE_PROTO_INFO},

    {"SELECT_PERF", "single",
     "Cost flavour plain sends select on: \"single\" is the latency of one\n"
     "message, \"multi\" the cost per message when many are streamed. Sends\n"
     "flagged as streamed (PSEL_SEND_FLAG_STREAM) always select on \"multi\".",
     ucs_offsetof(psel_config_t, select_perf),
     UCS_CONFIG_TYPE_ENUM(psel_perf_type_names)},

    {"BCOPY_BW", "auto",
     "Memory copy bandwidth, used for the cost of protocols that copy data.\n"
     "\"auto\": timed on this host when protosel reads its own resources\n"
     "(1-2 ms of memcpy and process_vm_readv), and then also the bandwidth\n"
     "of the shared-memory transports, whose UCT figures are configured\n"
     "constants; for resources read from a file, the file's timed figure,\n"
     "else UCX's estimate (5800MBs). A value: that figure, and every\n"
     "transport keeps UCT's.",
     ucs_offsetof(psel_config_t, bcopy_bw), UCS_CONFIG_TYPE_BW},

    {"RCACHE_OVERHEAD", "50ns",
     "Registration cost assumed for zero-copy protocols on memory domains\n"
     "that register: buffers are taken to be reused, so registration is a\n"
     "cache lookup of this cost (as UCX's registration cache). \"inf\"\n"
     "models no cache: every message pays the memory domain's full\n"
     "registration cost (c + m*size, as `psel_info -d` shows it).",
     ucs_offsetof(psel_config_t, rcache_overhead), UCS_CONFIG_TYPE_TIME},

    {"TLS", "all",
     "Transports to use, as an allow-list in UCX_TLS syntax: names such as\n"
     "\"tcp,posix\", aliases (shm, ib, rc, ud, dc, mm), '^' to negate.",
     ucs_offsetof(psel_config_t, tls), UCS_CONFIG_TYPE_ALLOW_LIST},

    {"NET_DEVICES", "all",
     "Network devices to use, as an allow-list in UCX_NET_DEVICES syntax,\n"
     "such as \"mlx5_0:1,eth0\" or \"^eth0\". Shared memory is not filtered.",
     ucs_offsetof(psel_config_t, net_devices), UCS_CONFIG_TYPE_ALLOW_LIST},

    {"KEEPALIVE_INTERVAL", "100ms",
     "How often a worker checks that the peers of its endpoints are alive\n"
     "(uct_ep_check) on transports that do not report a dead peer by\n"
     "themselves (shared memory). A dead peer fails every request of its\n"
     "endpoints within about twice this time. \"inf\" turns checks off.",
     ucs_offsetof(psel_config_t, keepalive_interval), UCS_CONFIG_TYPE_TIME},

    {"RX_SLIP", "400ns",
     "Temporal slip of a streaming receiver: once a worker has received\n"
     "messages with no send of its own between them, the first progress\n"
     "call that then finds nothing to do waits this long before it returns.\n"
     "The sender meanwhile fills the next FIFO slots or socket buffer\n"
     "without the receiver reading the cache lines it is writing, and the\n"
     "receiver then takes them in one burst: small-message streams over\n"
     "shared memory run faster. A worker that sends between its receives\n"
     "(ping-pong, request-reply) never waits. \"0\" turns it off.",
     ucs_offsetof(psel_config_t, rx_slip), UCS_CONFIG_TYPE_TIME},

    {"WIREUP_P2P_TLS", "",
     "Transports whose lanes connect endpoint to endpoint through the wireup\n"
     "exchange even when they can connect to an iface, e.g. \"tcp\". For\n"
     "testing the path that connect-to-ep transports (rc) always take; set\n"
     "it the same on both peers.",
     ucs_offsetof(psel_config_t, wireup_p2p_tls), UCS_CONFIG_TYPE_STRING_ARRAY},

    {"CALIBRATION", "auto",
     "Measured cost lines to select on, from psel_calibrate: a file name,\n"
     "\"auto\" for the default file (${XDG_CACHE_HOME:-$HOME/.cache}/protosel/\n"
     "calibration-<host>.txt, used if it exists), or \"none\". Protocols and\n"
     "lanes the file does not cover keep the lines derived from the\n"
     "transports' advertised attributes. A file of another host or UCX\n"
     "version is ignored with a warning; a malformed file is an error.",
     ucs_offsetof(psel_config_t, calibration), UCS_CONFIG_TYPE_STRING},

    {"NUM_EPS", "auto",
     "How many endpoints (peers) each process of the job will have, as\n"
     "UCX_NUM_EPS: latencies that grow with endpoints are taken at this\n"
     "number, and transports whose max eps is below it are left out of lane\n"
     "selection while the others can make an endpoint. \"auto\" takes the\n"
     "application's estimate (psel_context_set_num_eps; 1 when not given); a\n"
     "number (1.." UCS_PP_MAKE_STRING(PSEL_NUM_EPS_MAX) ") overrides it.",
     ucs_offsetof(psel_config_t, num_eps), UCS_CONFIG_TYPE_ULUNITS},

    {"MAX_EAGER_LANES", "1",
     "Maximal number of am_bw lanes (1..16): eager bandwidth protocols and\n"
     "rendezvous over active messages use them, as UCX_MAX_EAGER_LANES.",
     ucs_offsetof(psel_config_t, max_eager_lanes), UCS_CONFIG_TYPE_UINT},

    {"MAX_RNDV_LANES", "2",
     "Maximal number of rma_bw lanes for rendezvous get and put (1..16).",
     ucs_offsetof(psel_config_t, max_rndv_lanes), UCS_CONFIG_TYPE_UINT},

    {"MAX_RMA_LANES", "1",
     "Maximal number of rma_bw lanes for put and get zero-copy (1..16), as\n"
     "UCX_MAX_RMA_RAILS.",
     ucs_offsetof(psel_config_t, max_rma_lanes), UCS_CONFIG_TYPE_UINT},

    {"PREFER_OFFLOAD", "y",
     "As UCX_PREFER_OFFLOAD: put and get by active messages (put/am/bcopy,\n"
     "get/am/bcopy: software emulation, which needs the target to progress)\n"
     "only where no offload protocol of the operation applies. The protocol\n"
     "tier takes UCP's own setting.",
     ucs_offsetof(psel_config_t, prefer_offload), UCS_CONFIG_TYPE_BOOL},

    {"ENABLE", "y",
     "With libprotosel_ucx.so preloaded into a stock UCX application\n"
     "(LD_PRELOAD, or UCX_PLUGIN_PATH from UCX 1.22), select UCP's protocols\n"
     "with protosel; \"n\" leaves UCP as it is. See docs/runtime-library.md.",
     ucs_offsetof(psel_config_t, enable), UCS_CONFIG_TYPE_BOOL},

    {"TIER", "auto",
     "How libprotosel_ucx.so acts in stock UCP: \"config\" applies the UCX_*\n"
     "settings closest to protosel's selection (any UCX >= 1.13); \"protocol\"\n"
     "replaces the cost lines of UCP's protocols per endpoint (protocols v2 of\n"
     "the UCX version the library was built for); \"auto\" takes the protocol\n"
     "tier where it can act, else the config tier.",
     ucs_offsetof(psel_config_t, tier), UCS_CONFIG_TYPE_ENUM(psel_tier_names)},

    {"MULTI_LANE_MAX_RATIO", "4",
     "Drop an extra lane whose bandwidth is more than this many times lower\n"
     "than the first lane's (a number >= 1).",
     ucs_offsetof(psel_config_t, multi_lane_max_ratio),
     UCS_CONFIG_TYPE_DOUBLE},

    {NULL}
};

static int psel_config_lanes_valid(const char *name, unsigned value)
{
    if ((value >= 1) && (value <= PSEL_MAX_LANES)) {
        return 1;
    }
    ucs_error("invalid value for UCX_PSEL_%s: %u. Expected: 1..%d", name, value,
              PSEL_MAX_LANES);
    return 0;
}

/* Range checks the parser cannot express; each names the variable. */
static ucs_status_t psel_config_check(const psel_config_t *config)
{
    if (!(config->rndv_perf_diff >= 0) || !(config->rndv_perf_diff < 100)) {
        ucs_error("invalid value for " PSEL_CONFIG_ENV_PREFIX
                  PSEL_CONFIG_TABLE_PREFIX "RNDV_PERF_DIFF: %g. Expected: a "
                  "percentage, 0 <= value < 100", config->rndv_perf_diff);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!psel_config_lanes_valid("MAX_EAGER_LANES", config->max_eager_lanes) ||
        !psel_config_lanes_valid("MAX_RNDV_LANES", config->max_rndv_lanes) ||
        !psel_config_lanes_valid("MAX_RMA_LANES", config->max_rma_lanes)) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (!(config->multi_lane_max_ratio >= 1)) {
        ucs_error("invalid value for UCX_PSEL_MULTI_LANE_MAX_RATIO: %g. "
                  "Expected: a number >= 1", config->multi_lane_max_ratio);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!(config->rcache_overhead >= 0)) {
        ucs_error("invalid value for UCX_PSEL_RCACHE_OVERHEAD: it must be a "
                  "time >= 0 such as 50ns, or inf");
        return UCS_ERR_INVALID_PARAM;
    }
    if (!(config->rx_slip >= 0) || !(config->rx_slip <= PSEL_RX_SLIP_MAX)) {
        ucs_error("invalid value for UCX_PSEL_RX_SLIP: %.6g%s. Expected: a "
                  "time from 0 (off) to %.0fus, such as 400ns",
                  config->rx_slip * 1e6, isinf(config->rx_slip) ? "" : "us",
                  PSEL_RX_SLIP_MAX * 1e6);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((config->num_eps != UCS_ULUNITS_AUTO) &&
        ((config->num_eps == 0) || (config->num_eps > PSEL_NUM_EPS_MAX))) {
        ucs_error("invalid value for UCX_PSEL_NUM_EPS: %s. Expected: auto, or "
                  "a number of endpoints 1..%d",
                  (config->num_eps == UCS_ULUNITS_INF) ? "inf" : "out of range",
                  PSEL_NUM_EPS_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!PSEL_UCS_CONFIG_BW_IS_AUTO(config->bcopy_bw) && !(config->bcopy_bw > 0)) {
        ucs_error("invalid value for UCX_PSEL_BCOPY_BW: it must be auto or a "
                  "positive bandwidth such as 5800MBs");
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

void psel_config_measure_copies(psel_config_t *config)
{
    if ((config->copy_bw_source != PSEL_BCOPY_BW_SOURCE_ESTIMATE) ||
        (psel_copy_probe_run(&config->copies) != UCS_OK)) {
        return;
    }
    config->copy_bw         = psel_copy_probe_bw(config->copies.memcpy_cost);
    config->copy_bw_source  = PSEL_BCOPY_BW_SOURCE_MEASURED;
}

unsigned psel_config_apply_copies(const psel_config_t *config,
                                  struct psel_resource_table *table)
{
    if (config->copy_bw_source != PSEL_BCOPY_BW_SOURCE_MEASURED) {
        return 0;
    }
    table->copy_bw = config->copy_bw;
    return psel_copy_probe_apply(&config->copies, table);
}

const char *psel_config_copy_source_str(const psel_config_t *config)
{
    switch (config->copy_bw_source) {
    case PSEL_BCOPY_BW_SOURCE_MEASURED:
        return "timed on this host at start, as were the bandwidths of "
               "the transports that copy on this host; UCX_PSEL_BCOPY_BW=auto";
    case PSEL_BCOPY_BW_SOURCE_FILE:
        return "timed on the snapshot's host, as were the bandwidths of "
               "its transports that copy there; UCX_PSEL_BCOPY_BW=auto";
    case PSEL_BCOPY_BW_SOURCE_SET:
        return "UCX_PSEL_BCOPY_BW";
    default:
        return "UCX's estimate: no copies were timed for these resources; "
               "UCX_PSEL_BCOPY_BW=auto";
    }
}

void psel_config_copies_of_file(psel_config_t *config,
                                const struct psel_resource_table *table)
{
    if ((config->copy_bw_source == PSEL_BCOPY_BW_SOURCE_ESTIMATE) &&
        (table->copy_bw > 0)) {
        config->copy_bw         = table->copy_bw;
        config->copy_bw_source  = PSEL_BCOPY_BW_SOURCE_FILE;
    }
}

extern char **environ;

/* A misspelled variable would otherwise be ignored without a word. */
static void psel_config_warn_unknown(void)
{
    static const char prefix[] = PSEL_CONFIG_ENV_PREFIX PSEL_CONFIG_TABLE_PREFIX;
    const ucs_config_field_t *field;
    char **env;
    size_t len;

    for (env = environ; *env != NULL; ++env) {
        if (strncmp(*env, prefix, sizeof(prefix) - 1) != 0) {
            continue;
        }
        len = strcspn(*env + sizeof(prefix) - 1, "=");
        for (field = psel_config_table; field->name != NULL; ++field) {
            if ((strlen(field->name) == len) &&
                !strncmp(field->name, *env + sizeof(prefix) - 1, len)) {
                break;
            }
        }
        if (field->name == NULL) {
            ucs_warn("unknown variable %.*s is ignored; psel_info -c lists "
                     "the known ones", (int)(len + sizeof(prefix) - 1), *env);
        }
    }
}

/*
 * libucs names a bad field without its prefix ("RNDV_THRESH"), so check each
 * set variable with the field's own parser first and name it in full.
 */
static ucs_status_t psel_config_check_env(void)
{
    char name[128], help[512];
    const ucs_config_field_t *field;
    uint64_t scratch[32];
    const char *value;

    for (field = psel_config_table; field->name != NULL; ++field) {
        snprintf(name, sizeof(name), "%s%s%s", PSEL_CONFIG_ENV_PREFIX,
                 PSEL_CONFIG_TABLE_PREFIX, field->name);
        value = getenv(name);
        if (value == NULL) {
            continue;
        }
        memset(scratch, 0, sizeof(scratch));
        /* strtoul() would quietly wrap "-5" around to a huge size */
        if (((field->parser.read == ucs_config_sscanf_memunits) ||
             (field->parser.read == ucs_config_sscanf_ulunits) ||
             (field->parser.read == ucs_config_sscanf_uint)) &&
            (value[strspn(value, " \t")] == '-')) {
            field->parser.help(help, sizeof(help), field->parser.arg);
            ucs_error("invalid value for %s: '%s' is negative. Expected: %s",
                      name, value, help);
            return UCS_ERR_INVALID_PARAM;
        }
        if (!field->parser.read(value, scratch, field->parser.arg)) {
            field->parser.help(help, sizeof(help), field->parser.arg);
            ucs_error("invalid value for %s: '%s'. Expected: %s", name, value,
                      help);
            return UCS_ERR_INVALID_PARAM;
        }
        field->parser.release(scratch, field->parser.arg);
    }
    return UCS_OK;
}

ucs_status_t psel_config_read(psel_config_t *config)
{
    psel_config_t tmp;
    ucs_status_t status;

    psel_config_warn_unknown();
    status = psel_config_check_env();
    if (status != UCS_OK) {
        return status;
    }

    memset(&tmp, 0, sizeof(tmp));
    /* the parser logs "Invalid value for UCX_PSEL_X: 'v'. Expected: ..." */
    status = psel_ucs_config_fill_opts(&tmp, psel_config_table,
                                       PSEL_CONFIG_ENV_PREFIX,
                                       PSEL_CONFIG_TABLE_PREFIX, 0);
    if (status != UCS_OK) {
        return status;
    }

    status = psel_config_check(&tmp);
    if (status != UCS_OK) {
        ucs_config_parser_release_opts(&tmp, psel_config_table);
        return status;
    }

    if (PSEL_UCS_CONFIG_BW_IS_AUTO(tmp.bcopy_bw)) {
        tmp.copy_bw         = PSEL_BCOPY_BW_ESTIMATE; /* until timed */
        tmp.copy_bw_source  = PSEL_BCOPY_BW_SOURCE_ESTIMATE;
    } else {
        tmp.copy_bw         = tmp.bcopy_bw;
        tmp.copy_bw_source  = PSEL_BCOPY_BW_SOURCE_SET;
    }
    *config = tmp;
    return UCS_OK;
}

void psel_config_release(psel_config_t *config)
{
    ucs_config_parser_release_opts(config, psel_config_table);
}

static void psel_config_print_in_c_locale(FILE *stream,
                                          const psel_config_t *config)
{
    psel_ucs_config_print_opts(stream, "protosel configuration", config,
                               psel_config_table, PSEL_CONFIG_TABLE_PREFIX,
                               PSEL_CONFIG_ENV_PREFIX,
                               UCS_CONFIG_PRINT_CONFIG |
                               UCS_CONFIG_PRINT_HEADER |
                               UCS_CONFIG_PRINT_DOC);
}

/* numbers with '.' whatever LC_NUMERIC the application set */
void psel_config_print(FILE *stream, const psel_config_t *config)
{
    psel_text_locale_t saved = psel_text_c_locale_enter();

    psel_config_print_in_c_locale(stream, config);
    psel_text_c_locale_leave(saved);
}

void psel_config_print_json(FILE *stream, const psel_config_t *config)
{
    const ucs_config_field_t *field;
    char name[128], value[512], help[512];
    psel_text_locale_t saved = psel_text_c_locale_enter();

    fputs("[", stream);
    for (field = psel_config_table; field->name != NULL; ++field) {
        snprintf(name, sizeof(name), "%s%s%s", PSEL_CONFIG_ENV_PREFIX,
                 PSEL_CONFIG_TABLE_PREFIX, field->name);
        value[0] = '\0';
        field->parser.write(value, sizeof(value),
                            UCS_PTR_BYTE_OFFSET(config, field->offset),
                            field->parser.arg);
        help[0] = '\0';
        field->parser.help(help, sizeof(help), field->parser.arg);
        fputs((field == psel_config_table) ? "\n  {\"name\": " :
                                             ",\n  {\"name\": ", stream);
        psel_json_string(stream, name);
        fputs(", \"value\": ", stream);
        psel_json_string(stream, value);
        fputs(", \"default\": ", stream);
        psel_json_string(stream, field->dfl_value);
        fputs(", \"syntax\": ", stream);
        psel_json_string(stream, help);
        fputs(", \"doc\": ", stream);
        psel_json_string(stream, field->doc);
        fputs("}", stream);
    }
    fputs("\n]", stream);
    psel_text_c_locale_leave(saved);
}

size_t psel_config_num_eps(const psel_config_t *config, size_t estimate)
{
    if (config->num_eps != UCS_ULUNITS_AUTO) {
        return config->num_eps;
    }
    return (estimate == 0) ? 1 : estimate;
}

double psel_config_rndv_bias(const psel_config_t *config)
{
    return 1.0 - (config->rndv_perf_diff / 100.0);
}

int psel_config_allow_list_match(const ucs_config_allow_list_t *list,
                                 const char *name)
{
    int found;

    if (list->mode == UCS_CONFIG_ALLOW_LIST_ALLOW_ALL) {
        return 1;
    }
    /* fnmatch(3) globs, as UCX matches its own allow-lists */
    found = (ucs_config_names_search(&list->array, name) >= 0);
    return (list->mode == UCS_CONFIG_ALLOW_LIST_ALLOW) ? found : !found;
}

ucs_status_t psel_config_calibration_load(const psel_config_t *config,
                                          psel_calib_t **calib_p)
{
    const char *setting = config->calibration;
    int is_auto         = !strcasecmp(setting, "auto");
    char path[4096], why[256];
    psel_calib_t *calib;
    ucs_status_t status;

    *calib_p = NULL;
    if (!strcasecmp(setting, "none") || (setting[0] == '\0')) {
        return UCS_OK;
    }
    if (!is_auto) {
        ucs_strncpy_zero(path, setting, sizeof(path));
    } else if (psel_calib_default_path(path, sizeof(path)) != UCS_OK) {
        ucs_debug("UCX_PSEL_CALIBRATION=auto: no HOME or XDG_CACHE_HOME, so "
                  "no default file");
        return UCS_OK;
    }

    calib = malloc(sizeof(*calib));
    if (calib == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    status = psel_calib_load(path, calib);
    if (status == UCS_ERR_NO_ELEM) {
        if (is_auto) {
            ucs_debug("UCX_PSEL_CALIBRATION=auto: no file %s", path);
        } else {
            ucs_warn("UCX_PSEL_CALIBRATION=%s: no such file; selecting on the "
                     "transports' advertised attributes (run psel_calibrate "
                     "-o %s to measure)", path, path);
        }
        free(calib);
        return UCS_OK;
    } else if (status == UCS_ERR_UNSUPPORTED) {
        ucs_warn("UCX_PSEL_CALIBRATION: ignoring %s: another version of the "
                 "file format; selecting on the transports' advertised "
                 "attributes (run psel_calibrate again)", path);
        free(calib);
        return UCS_OK;
    } else if (status != UCS_OK) {
        ucs_error("UCX_PSEL_CALIBRATION: %s is not a valid calibration file "
                  "(see above); fix it, run psel_calibrate again, or set "
                  "UCX_PSEL_CALIBRATION=none", path);
        free(calib);
        return status;
    }

    if (psel_calib_check(calib, why, sizeof(why)) != PSEL_CALIB_MATCH) {
        ucs_warn("UCX_PSEL_CALIBRATION: ignoring %s: %s; selecting on the "
                 "transports' advertised attributes (run psel_calibrate to "
                 "measure again)", path, why);
        psel_calib_cleanup(calib);
        free(calib);
        return UCS_OK;
    }

    ucs_debug("UCX_PSEL_CALIBRATION: %u cost lines from %s", calib->num_lines,
              path);
    *calib_p = calib;
    return UCS_OK;
}

void psel_config_calibration_release(psel_calib_t *calib)
{
    if (calib != NULL) {
        psel_calib_cleanup(calib);
        free(calib);
    }
}
