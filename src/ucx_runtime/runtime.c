/*
 * libprotosel_ucx_impl.so: what the preloaded libprotosel_ucx.so loads in a
 * process that uses UCP (runtime.h). It reads the UCX_PSEL_* settings and
 * the calibration once, then:
 *  - config tier: on every ucp_config_read(), sets the UCX_* values closest
 *    to protosel's selection for this host (ucx_settings.h), never one the
 *    user set;
 *  - protocol tier: before the first ucp_init(), wraps UCP's protocols so
 *    that their cost lines are protosel's (proto_tier.h).
 * Any failure warns once and leaves UCP as it is.
 */
#define _GNU_SOURCE  /* RTLD_DEFAULT */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "runtime.h"
#include "proto_tier.h"
#include "ucp_map.h"
#include "ucx_settings.h"

#include <lane_select/resource_table.h>
#include <lane_select/reachability.h>
#include <lane_select/ucs_compat.h>
#include <ucp_proto_sel/calib.h>
#include <ucp_proto_sel/ep_config.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/string.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef ucs_status_t (*psel_rt_modify_func_t)(ucp_config_t*, const char*,
                                              const char*);
typedef const char *(*psel_rt_version_func_t)(void);

static struct {
    pthread_once_t          once;
    pthread_mutex_t         lock;
    void                   *libucp;
    char                    entry[64];   /* the library that loaded us */
    psel_rt_modify_func_t   config_modify;
    psel_rt_version_func_t  version_string;
    int                     active;      /* protosel acts in this process */
    int                     proto_tier;  /* and its protocol tier is in */
    psel_config_t           config;
    psel_calib_t           *calib;
    char                    calib_desc[512];
    /* config tier: resources once, settings per transport filter */
    int                     discovered;
    psel_resource_table_t   resources;
    char                    settings_key[2 * PSEL_UCX_VALUE_MAX];
    int                     settings_valid;
    psel_ucx_settings_t     settings;
} psel_rt = {
    .once = PTHREAD_ONCE_INIT,
    .lock = PTHREAD_MUTEX_INITIALIZER
};


/* One line of UCX_PSEL_PROTO_INFO output, as UCP prints UCX_PROTO_INFO */
static void psel_rt_info(const char *fmt, ...) UCS_F_PRINTF(1, 2);
static void psel_rt_info(const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    if (psel_rt.config.proto_info != PSEL_PROTO_INFO_YES) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    ucs_log_print_compact(line);
}

static void psel_rt_attach(void *libucp)
{
    const char *entry = "libprotosel_ucx.so";
    Dl_info info;

    /* the caller is the entry library (loader.h): libprotosel_ucx.so,
     * preloaded, or libucs_protosel.so.0, a UCS plugin */
    if (dladdr(__builtin_return_address(0), &info) &&
        (info.dli_fname != NULL)) {
        entry = ucs_basename(info.dli_fname);
    }
    ucs_strncpy_zero(psel_rt.entry, entry, sizeof(psel_rt.entry));
    psel_rt.libucp        = libucp;
    psel_rt.config_modify  = (psel_rt_modify_func_t)dlsym(libucp,
                                                          "ucp_config_modify");
    /* the version UCP reports to the application, interposers included
     * (as the protocol tier's check reads it) */
    psel_rt.version_string = (psel_rt_version_func_t)dlsym(RTLD_DEFAULT,
                                                   "ucp_get_version_string");
    if (psel_rt.version_string == NULL) {
        psel_rt.version_string = (psel_rt_version_func_t)dlsym(libucp,
                                                   "ucp_get_version_string");
    }
}

static void psel_rt_setup(void)
{
    unsigned num_via[PSEL_CALIB_VIA_LAST] = {0}, unsupported = 0, i;
    char why[512];
    int quiet;

    if ((psel_rt.config_modify == NULL) || (psel_rt.version_string == NULL)) {
        ucs_warn("protosel: the loaded libucp has no ucp_config_modify or "
                 "ucp_get_version_string; UCX runs without protosel");
        return;
    }
    if (psel_config_read(&psel_rt.config) != UCS_OK) {
        ucs_warn("protosel: fix the UCX_PSEL_* variable above (psel_info -c "
                 "lists them); UCX runs without protosel");
        return;
    }
    if (!psel_rt.config.enable) {
        return;
    }
    psel_config_measure_copies(&psel_rt.config);
    if (psel_config_calibration_load(&psel_rt.config, &psel_rt.calib) !=
        UCS_OK) {
        ucs_warn("protosel: the calibration UCX_PSEL_CALIBRATION=%s cannot "
                 "be used (see above); UCX runs without protosel",
                 psel_rt.config.calibration);
        return;
    }
    if (psel_rt.calib != NULL) {
        for (i = 0; i < psel_rt.calib->num_lines; ++i) {
            if (psel_rt.calib->lines[i].unsupported) {
                ++unsupported;
            } else {
                ++num_via[psel_rt.calib->lines[i].via];
            }
        }
        snprintf(psel_rt.calib_desc, sizeof(psel_rt.calib_desc),
                 "measured cost lines of %s: %u lines measured through UCP "
                 "(psel_calibrate --ucp), used first, %u protocols UCP does "
                 "not run; %u through protosel's data path; attributes "
                 "elsewhere", psel_rt.config.calibration,
                 num_via[PSEL_CALIB_VIA_UCP], unsupported,
                 num_via[PSEL_CALIB_VIA_PROTOSEL]);
    } else {
        snprintf(psel_rt.calib_desc, sizeof(psel_rt.calib_desc),
                 "cost lines from the transports' attributes, memory copies "
                 "at %.0f MB/s (%s)", psel_rt.config.copy_bw / UCS_MBYTE,
                 psel_config_copy_source_str(&psel_rt.config));
    }

    if (psel_rt.config.tier != PSEL_TIER_CONFIG) {
        if (psel_proto_tier_available(psel_rt.libucp, why, sizeof(why),
                                      &quiet)) {
            psel_proto_tier_install(psel_rt.libucp, &psel_rt.config,
                                    psel_rt.calib);
            psel_rt.proto_tier = 1;
        } else if (!quiet || (psel_rt.config.tier == PSEL_TIER_PROTOCOL)) {
            ucs_warn("protosel: the protocol tier cannot act: %s; applying "
                     "the config tier (UCX_* settings) only", why);
        }
    }
    psel_rt.active = 1;
}

static void psel_rt_context_init(void)
{
    pthread_once(&psel_rt.once, psel_rt_setup);
}

/* The host's resources as UCP of @a config sees them: UCX_PSEL_TLS and
 * UCX_PSEL_NET_DEVICES if set, else UCP's own UCX_TLS and UCX_NET_DEVICES */
static ucs_status_t psel_rt_filter(const ucp_config_t *config,
                                   psel_config_t *filter, char *key,
                                   size_t max)
{
    static const char *names[] = {"TLS", "NET_DEVICES"};
    char value[PSEL_UCX_VALUE_MAX], var[64];
    ucs_status_t status;
    unsigned i;

    status = ucs_config_parser_clone_opts(&psel_rt.config, filter,
                                          psel_config_table);
    if (status != UCS_OK) {
        return status;
    }
    filter->proto_info = PSEL_PROTO_INFO_NO; /* psel_rt_info() says it all */
    /* not fields of the config table, so not cloned */
    filter->copy_bw         = psel_rt.config.copy_bw;
    filter->copy_bw_source  = psel_rt.config.copy_bw_source;
    filter->copies          = psel_rt.config.copies;
    key[0]             = '\0';
    for (i = 0; i < ucs_static_array_size(names); ++i) {
        snprintf(var, sizeof(var), "UCX_PSEL_%s", names[i]);
        if ((getenv(var) == NULL) &&
            (psel_ucx_config_get(config, names[i], value,
                                 sizeof(value)) == UCS_OK) &&
            (psel_ucs_config_set_value(filter, psel_config_table, names[i],
                                       value) != UCS_OK)) {
            ucs_config_parser_release_opts(filter, psel_config_table);
            return UCS_ERR_INVALID_PARAM;
        }
        ucs_config_parser_get_value(filter, psel_config_table, names[i], value,
                                    sizeof(value));
        snprintf(key + strlen(key), max - strlen(key), "%s|", value);
    }
    return UCS_OK;
}

/* The settings closest to protosel's selection for a tag endpoint to a
 * peer of @a locality over @a local, every buffer type */
static ucs_status_t psel_rt_derive_for(psel_config_t *filter,
                                       psel_resource_table_t *local,
                                       int locality,
                                       psel_ucx_settings_t *settings)
{
    const psel_select_table_t *tables[3];
    const psel_buffer_type_t types[] = {
        psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_CONTIG,
                         UCS_MEMORY_TYPE_HOST, 1),
        psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_IOV, UCS_MEMORY_TYPE_HOST,
                         4),
        psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_GENERIC,
                         UCS_MEMORY_TYPE_HOST, 1)
    };
    psel_ep_params_t params;
    psel_ep_config_t *ep;
    ucs_status_t status;
    unsigned i, count;

    ep = malloc(sizeof(*ep));
    if (ep == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    memset(&params, 0, sizeof(params));
    params.features = PSEL_FEATURE_TAG;
    params.local    = local;
    params.remote   = local;
    params.locality = locality;
    params.config   = filter;
    params.calib    = psel_rt.calib;
    params.calib_for_ucp = 1; /* the lines measured through UCP first */
    params.ucp_filter    = psel_ucp_map_stand_in;
    status = psel_ep_config_init(ep, &params);
    if (status != UCS_OK) {
        free(ep);
        return status;
    }
    for (i = 0, count = 0; i < ucs_static_array_size(types); ++i) {
        if (psel_select_build(&ep->select, types[i], &tables[count]) ==
            UCS_OK) {
            ++count;
        }
    }
    if (count == 0) {
        status = UCS_ERR_UNSUPPORTED;
    } else {
        psel_ucx_settings_init(settings);
        psel_ucx_settings_derive(settings, local, &ep->lanes, tables, count,
                                 locality, psel_rt.calib != NULL);
    }
    psel_ep_config_cleanup(ep);
    free(ep);
    return status;
}

/* Does any of @a local reach a peer on another host (the network)? */
static int psel_rt_reaches_network(const psel_resource_table_t *local)
{
    unsigned i;

    for (i = 0; i < local->count; ++i) {
        if (psel_resource_rule_reachable(&local->resources[i],
                                         &local->resources[i],
                                         PSEL_PEER_REMOTE_HOST)) {
            return 1;
        }
    }
    return 0;
}

/*
 * Derive the config tier's settings for the transports of @a config. They
 * are global in UCX: one value serves every endpoint of the process. So
 * they are derived for another process on this host and, where the
 * transports reach other hosts, for a peer over the network, and only what
 * serves both is kept (psel_ucx_settings_merge); where the two differ UCP's
 * own per-endpoint choice stays. A process whose transports reach no other
 * host (UCX_TLS=shm) gets the same-host settings whole.
 */
static ucs_status_t psel_rt_derive(const ucp_config_t *config)
{
    char key[sizeof(psel_rt.settings_key)];
    psel_ucx_settings_t same_host, network;
    psel_resource_table_t local;
    psel_config_t filter;
    ucs_status_t status;

    status = psel_rt_filter(config, &filter, key, sizeof(key));
    if (status != UCS_OK) {
        return status;
    }
    if (psel_rt.settings_valid && !strcmp(key, psel_rt.settings_key)) {
        status = UCS_OK;
        goto out_filter;
    }

    if (!psel_rt.discovered) {
        status = psel_resource_discover(&psel_rt.resources);
        if (status != UCS_OK) {
            goto out_filter;
        }
        psel_rt.discovered = 1;
    }

    local           = psel_rt.resources;
    local.resources = malloc(sizeof(*local.resources) * local.count);
    if (local.resources == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto out_filter;
    }
    memcpy(local.resources, psel_rt.resources.resources,
           sizeof(*local.resources) * local.count);
    status = psel_resource_filter(&local, &filter.tls, &filter.net_devices);
    if (status != UCS_OK) {
        goto out_free;
    }
    /* after the filter: tcp over loopback is timed only without shared
     * memory among the transports in use (copy_probe.h) */
    psel_config_apply_copies(&psel_rt.config, &local);

    status = psel_rt_derive_for(&filter, &local, PSEL_PEER_SAME_HOST,
                                &same_host);
    if (status != UCS_OK) {
        goto out_free;
    }
    if (!psel_rt_reaches_network(&local)) {
        psel_ucx_settings_note(&same_host, "for peers on this host only: "
                               "these transports reach no other host");
    } else if (psel_rt_derive_for(&filter, &local, PSEL_PEER_REMOTE_HOST,
                                  &network) == UCS_OK) {
        psel_ucx_settings_merge(&same_host, "peers on this host", &network,
                                "peers over the network");
        psel_ucx_settings_cleanup(&network);
    } else {
        psel_ucx_settings_cleanup(&same_host);
        status = UCS_ERR_UNSUPPORTED; /* said why above */
        goto out_free;
    }
    if (psel_rt.settings_valid) {
        psel_ucx_settings_cleanup(&psel_rt.settings);
    }
    psel_rt.settings       = same_host;
    ucs_strncpy_zero(psel_rt.settings_key, key, sizeof(psel_rt.settings_key));
    psel_rt.settings_valid = 1;

out_free:
    free(local.resources);
out_filter:
    ucs_config_parser_release_opts(&filter, psel_config_table);
    return status;
}

/* Set one setting unless the user set it; say what happened */
static void psel_rt_apply(ucp_config_t *config, const char *env_prefix,
                          const char *name, const char *value,
                          const char *why)
{
    char source[PSEL_UCX_VALUE_MAX + 64], current[PSEL_UCX_VALUE_MAX];
    ucs_status_t status;

    if (psel_ucx_setting_user_set(name, env_prefix, source,
                                  sizeof(source))) {
        psel_rt_info("protosel:   UCX_%s: kept the user's %s", name, source);
        return;
    }
    if (psel_ucx_config_get(config, name, current, sizeof(current)) !=
        UCS_OK) {
        psel_rt_info("protosel:   UCX_%s: this UCX has no such setting", name);
        return;
    }
    status = psel_rt.config_modify(config, name, value);
    if (status != UCS_OK) {
        ucs_warn("protosel: UCX rejects UCX_%s=%s (%s); it stays %s", name,
                 value, ucs_status_string(status), current);
        return;
    }
    psel_rt_info("protosel:   UCX_%s=%s%s%s", name, value, why ? "  # " : "",
                 why ? why : "");
}

/* Raise UCP's rail count @a name to @a count where it is lower (and the
 * user did not set it) */
static void psel_rt_raise_rails(ucp_config_t *config, const char *env_prefix,
                                const char *name, unsigned count,
                                const char *why)
{
    char current[PSEL_UCX_VALUE_MAX], value[16];

    if ((psel_ucx_config_get(config, name, current, sizeof(current)) ==
         UCS_OK) && (strtoul(current, NULL, 10) >= count)) {
        return;
    }
    snprintf(value, sizeof(value), "%u", count);
    psel_rt_apply(config, env_prefix, name, value, why);
}

/*
 * The rails the calibration measured for every peer (rails that name no
 * peer: the only ones the protocol tier applies, proto_tier_rails.c). Where
 * all but the fastest are slower than 1/UCX_MULTI_LANE_MAX_RATIO of it, UCP
 * drops them by their measured bandwidth: the rail counts are raised so that
 * UCP sees them all and keeps the fastest, whichever it lists first. Where
 * two or more would be kept, UCP's counts stay: put then runs on UCP's one
 * rail, rendezvous on its two, split by the measured bandwidths. Rails
 * measured alone do not show what they cost each other (shared CPUs, a
 * shared PCIe switch), so a split of put is left to the user.
 */
static void psel_rt_measured_rails(ucp_config_t *config,
                                   const char *env_prefix)
{
    const psel_calib_t *calib = psel_rt.calib;
    const char *fastest       = NULL;
    double max_bw = 0, ratio = 4;
    unsigned i, count = 0, kept = 0;
    char value[PSEL_UCX_VALUE_MAX], why[256];

    for (i = 0; (calib != NULL) && (i < calib->num_rails); ++i) {
        if (calib->rails[i].peer[0] == '\0') {
            ++count;
            if (calib->rails[i].bandwidth > max_bw) {
                max_bw  = calib->rails[i].bandwidth;
                fastest = calib->rails[i].lane;
            }
        }
    }
    if (count < 2) {
        return;
    }
    if ((psel_ucx_config_get(config, "MULTI_LANE_MAX_RATIO", value,
                             sizeof(value)) == UCS_OK) &&
        (strtod(value, NULL) >= 1)) {
        ratio = strtod(value, NULL);
    }
    for (i = 0; i < calib->num_rails; ++i) {
        kept += (calib->rails[i].peer[0] == '\0') &&
                (calib->rails[i].bandwidth * ratio >= max_bw);
    }
    if (kept > 1) {
        psel_rt_info("protosel:   UCX_MAX_RMA_RAILS, UCX_MAX_RNDV_RAILS: "
                     "UCP's; %u of the %u measured rails are within 1/%g of "
                     "the fastest, and UCP splits over its lanes by their "
                     "measured bandwidths (set UCX_MAX_RMA_RAILS=%u to split "
                     "puts and gets too)", kept, count, ratio, kept);
        return;
    }
    snprintf(why, sizeof(why), "the %u measured rails, of which UCP keeps "
             "%s alone (the others are below 1/%g of its measured bandwidth)",
             count, fastest, ratio);
    psel_rt_raise_rails(config, env_prefix, "MAX_RMA_RAILS", count, why);
    psel_rt_raise_rails(config, env_prefix, "MAX_RNDV_RAILS", count, why);
}

static void psel_rt_config_read(const char *env_prefix, ucp_config_t *config)
{
    const psel_ucx_setting_t *s;
    char value[16];
    const char *notes, *end;
    unsigned i;
    int v2;

    pthread_once(&psel_rt.once, psel_rt_setup);
    if (!psel_rt.active) {
        return;
    }

    pthread_mutex_lock(&psel_rt.lock);
    psel_rt_info("protosel: %s (protosel " PACKAGE_VERSION ") in UCX %s; %s",
                 psel_rt.entry, psel_rt.version_string(), psel_rt.calib_desc);
    /* both tiers want protocols v2: UCX_PROTOS and the protocol tier act
     * there only */
    psel_rt_apply(config, env_prefix, "PROTO_ENABLE", "y",
                  "protocols v2, where protosel's choices act");
    v2 = (psel_ucx_config_get(config, "PROTO_ENABLE", value,
                              sizeof(value)) == UCS_OK) && (value[0] == 'y');

    if (psel_rt.proto_tier && v2) {
        psel_rt_info("protosel: protocol tier: UCP's tag-send, "
                     "active-message, rendezvous"
#if PSEL_UCX_AT_LEAST(1, 14)
                     ", put and get"
#endif
                     " protocols take protosel's cost lines for each "
                     "endpoint configuration (UCX_PROTO_INFO=y prints UCP's "
                     "tables)");
        psel_rt_measured_rails(config, env_prefix);
        goto out;
    }

    if (psel_rt_derive(config) != UCS_OK) {
        ucs_warn("protosel: no selection for this host's resources (see "
                 "above); UCX runs with its own settings");
        goto out;
    }
    psel_rt_info("protosel: config tier%s: the UCX settings closest to "
                 "protosel's selection for every peer (UCX has one value "
                 "for all)",
                 psel_rt.proto_tier ? " (UCX_PROTO_ENABLE=n: no protocols v2 "
                 "for the protocol tier)" : "");
    for (i = 0; i < psel_rt.settings.count; ++i) {
        s = &psel_rt.settings.settings[i];
        if (s->flags & PSEL_UCX_SETTING_SELECTION) {
            psel_rt_apply(config, env_prefix, s->name, s->value, NULL);
        } else if (s->flags & PSEL_UCX_SETTING_RESOURCES) {
            psel_rt_info("protosel:   UCX_%s: not set (%s would keep peers "
                         "that need other transports away)", s->name,
                         s->value);
        }
    }
    notes = ucs_string_buffer_cstr(&psel_rt.settings.notes);
    for (; (end = strchr(notes, '\n')) != NULL; notes = end + 1) {
        psel_rt_info("protosel:   # %.*s", (int)(end - notes), notes);
    }

out:
    pthread_mutex_unlock(&psel_rt.lock);
}

/* The one symbol libprotosel_ucx.so looks for */
__attribute__((visibility("default")))
const psel_ucx_runtime_v1_t psel_ucx_runtime_v1 = {
    .version      = PSEL_UCX_RUNTIME_VERSION,
    .attach       = psel_rt_attach,
    .config_read  = psel_rt_config_read,
    .context_init = psel_rt_context_init
};
