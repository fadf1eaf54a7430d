/*
 * psel_info --ucx-env: the UCX_* settings that bring a stock UCP application
 * closest to protosel's selection. UCP has one threshold per protocol class
 * (zero-copy, rendezvous), one rendezvous scheme, rail counts, transport and
 * device lists and, in UCX 1.13's protocols v2, an allow-list of protocols;
 * what those cannot say is noted on stderr.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "psel_info.h"

#include <ucp_proto_sel/dump.h>
#include <ucp/api/ucp.h>
#include <assert.h>
#include <ucs/sys/string.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PSEL_UCX_ENV_MAX      16   /* settings printed */
#define PSEL_UCX_ENV_VALUE    512  /* bytes of one value */

/* protosel's tag-send protocols, and UCX 1.13's protocols v2 that do the
 * same; the last entry names the v2 protocols protosel has no model of */
static const struct {
    const char *psel;
    const char *ucx;
    const char *scheme;   /* UCX_RNDV_SCHEME that selects it */
} psel_ucx_protos[] = {
    {"egr/short", "egr/short",                        NULL},
    {"egr/bcopy", "egr/single/bcopy,egr/multi/bcopy", NULL},
    {"egr/zcopy", "egr/single/zcopy,egr/multi/zcopy", NULL},
    {"rndv/am",   "rndv/am/bcopy",                    "am"},
    {"rndv/get",  "rndv/get/zcopy",                   "get_zcopy"},
    {"rndv/put",  "rndv/put/zcopy",                   "put_zcopy"},
    {NULL,        "rndv/rkey_ptr,egr/offload/short,egr/offload/bcopy,"
                  "egr/offload/zcopy",                NULL}
};

typedef struct {
    const char *name;                       /* without "UCX_" */
    char        value[PSEL_UCX_ENV_VALUE];
} psel_ucx_setting_t;

typedef struct {
    psel_ucx_setting_t settings[PSEL_UCX_ENV_MAX];
    unsigned           count;
    int                quiet;
} psel_ucx_env_t;


static void note(const psel_ucx_env_t *env, const char *fmt, ...)
    UCS_F_PRINTF(2, 3);

static void note(const psel_ucx_env_t *env, const char *fmt, ...)
{
    va_list ap;

    if (env->quiet) {
        return;
    }
    va_start(ap, fmt);
    fputs("# ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n", stderr);
    va_end(ap);
}

static char *setting_add(psel_ucx_env_t *env, const char *name)
{
    psel_ucx_setting_t *s = &env->settings[env->count++];

    assert(env->count <= PSEL_UCX_ENV_MAX);
    s->name     = name;
    s->value[0] = '\0';
    return s->value;
}

static void size_value(size_t size, char *value)
{
    if (size == SIZE_MAX) {
        strcpy(value, "inf");
    } else {
        /* the form `ucx_info -c` prints back */
        ucs_memunits_to_str(size, value, PSEL_UCX_ENV_VALUE);
    }
}

static size_t row_start(const psel_select_table_t *table, unsigned row)
{
    return (row == 0) ? 0 : (table->elems[row - 1].max_length + 1);
}

static int is_rndv(const psel_proto_t *proto)
{
    return !strncmp(proto->name, "rndv/", 5);
}

/* Number of lanes in a caps lanes key, "tcp/lo+tcp/eth0" */
static unsigned lanes_count(const char *key)
{
    unsigned count = 1;

    for (; *key != '\0'; ++key) {
        count += (*key == '+');
    }
    return count;
}

/* Append @a word to a comma-separated @a list unless it is there already */
static void list_add(char *list, const char *word)
{
    const char *p;
    size_t len = strlen(word);

    for (p = list; (p = strstr(p, word)) != NULL; p += len) {
        if (((p == list) || (p[-1] == ',')) &&
            ((p[len] == ',') || (p[len] == '\0'))) {
            return;
        }
    }
    if ((strlen(list) + len + 2) <= PSEL_UCX_ENV_VALUE) {
        strcat(list, (list[0] == '\0') ? "" : ",");
        strcat(list, word);
    }
}

/* UCX_RNDV_THRESH, UCX_ZCOPY_THRESH, UCX_RNDV_SCHEME and the rails, from the
 * contiguous table: what a plain ucp_tag_send of a buffer gets */
static void map_thresholds(psel_ucx_env_t *env,
                           const psel_select_table_t *table)
{
    size_t rndv_from = SIZE_MAX, zcopy_from = SIZE_MAX;
    const psel_proto_caps_t *rndv = NULL, *caps;
    const psel_proto_t *proto, *rndv_proto = NULL;
    unsigned row, i, eager_rails = 1;
    const char *scheme = "auto";

    for (row = 0; row < table->count; ++row) {
        proto = table->elems[row].proto;
        caps  = &table->caps[table->elems[row].proto_index];
        if (is_rndv(proto)) {
            if (rndv_from == SIZE_MAX) {
                rndv_from = row_start(table, row);
            } else if (proto != rndv_proto) {
                note(env, "protosel switches from %s to %s at %zu; UCP runs "
                     "one rendezvous scheme: the one of the largest sizes",
                     rndv_proto->name, proto->name, row_start(table, row));
            }
            rndv_proto = proto;
            rndv       = caps;
        } else if (rndv_from != SIZE_MAX) {
            note(env, "protosel goes back to %s at %zu, after rendezvous; "
                 "UCP's threshold cannot say that: rendezvous stays",
                 proto->name, row_start(table, row));
        } else if (!strcmp(proto->name, "egr/zcopy")) {
            zcopy_from  = ucs_min(zcopy_from, row_start(table, row));
            eager_rails = ucs_max(eager_rails, lanes_count(caps->lanes));
        } else if (!strcmp(proto->name, "egr/bcopy")) {
            if (zcopy_from != SIZE_MAX) {
                note(env, "protosel goes back to egr/bcopy at %zu, after "
                     "egr/zcopy; UCX_ZCOPY_THRESH cannot say that: zero-copy "
                     "stays", row_start(table, row));
            }
            eager_rails = ucs_max(eager_rails, lanes_count(caps->lanes));
        }
    }

    size_value(rndv_from, setting_add(env, "RNDV_THRESH"));
    size_value(zcopy_from, setting_add(env, "ZCOPY_THRESH"));
    if (rndv_proto != NULL) {
        for (i = 0; i < ucs_static_array_size(psel_ucx_protos); ++i) {
            if ((psel_ucx_protos[i].psel != NULL) &&
                !strcmp(psel_ucx_protos[i].psel, rndv_proto->name)) {
                scheme = psel_ucx_protos[i].scheme;
            }
        }
        note(env, "UCX_RNDV_THRESH: %s from %zu; UCX_RNDV_SCHEME: %s, on %s",
             rndv_proto->name, rndv_from, scheme, rndv->lanes);
    } else {
        note(env, "UCX_RNDV_THRESH: protosel never selects rendezvous");
    }
    strcpy(setting_add(env, "RNDV_SCHEME"), scheme);
    note(env, "UCX_ZCOPY_THRESH: %s", (zcopy_from == SIZE_MAX) ?
         "protosel never selects egr/zcopy before rendezvous" :
         "egr/zcopy from there on");

    snprintf(setting_add(env, "MAX_EAGER_RAILS"), PSEL_UCX_ENV_VALUE, "%u",
             eager_rails);
    snprintf(setting_add(env, "MAX_RNDV_RAILS"), PSEL_UCX_ENV_VALUE, "%u",
             (rndv != NULL) ? lanes_count(rndv->lanes) : 1);
    note(env, "UCX_MAX_EAGER_RAILS, UCX_MAX_RNDV_RAILS: the lanes eager "
         "copies and rendezvous run on");
}

/* UCX_TLS and UCX_NET_DEVICES: the transports and network devices of the
 * endpoint's lanes; self too, which UCP uses for sends to its own worker */
static void map_transports(psel_ucx_env_t *env,
                           const psel_resource_table_t *local,
                           const psel_ep_lanes_t *lanes)
{
    char *tls = setting_add(env, "TLS");
    char devices[PSEL_UCX_ENV_VALUE] = "";
    const psel_resource_t *rsc;
    unsigned i;

    for (i = 0; i < lanes->num_lanes; ++i) {
        rsc = &local->resources[lanes->info[i].local];
        list_add(tls, rsc->tl_name);
        if (rsc->dev_type == UCT_DEVICE_TYPE_NET) {
            list_add(devices, rsc->dev_name);
        }
    }
    list_add(tls, "self");
    note(env, "UCX_TLS: the transports of the endpoint's lanes, and self for "
         "sends to the own process");
    if (devices[0] != '\0') {
        strcpy(setting_add(env, "NET_DEVICES"), devices);
        note(env, "UCX_NET_DEVICES: the network devices of the lanes");
    }
}

/* UCX_PROTOS: leave out the v2 tag-send protocols that no table selects */
static void map_protocols(psel_ucx_env_t *env, const psel_info_table_t *tables,
                          unsigned count)
{
    char *protos;
    unsigned i, t, row;
    int used;

    strcpy(setting_add(env, "PROTO_ENABLE"), "y");
    protos = setting_add(env, "PROTOS");
    for (i = 0; i < ucs_static_array_size(psel_ucx_protos); ++i) {
        used = 0;
        for (t = 0; (t < count) && (psel_ucx_protos[i].psel != NULL); ++t) {
            for (row = 0; row < tables[t].table->count; ++row) {
                used |= !strcmp(tables[t].table->elems[row].proto->name,
                                psel_ucx_protos[i].psel);
            }
        }
        if (!used) {
            strcat(protos, (protos[0] == '\0') ? "^" : ",");
            strcat(protos, psel_ucx_protos[i].ucx);
        }
    }
    note(env, "UCX_PROTOS: without the tag-send protocols protosel selects "
         "for no buffer type, nor those it does not model; it acts only "
         "with UCX_PROTO_ENABLE=y (UCX 1.13's protocols v2, off by "
         "default), which also honours the settings above");
}

/* Print the settings the installed UCP accepts */
static int print_settings(const psel_ucx_env_t *env)
{
    const psel_ucx_setting_t *s;
    ucp_config_t *config;
    ucs_status_t status;
    unsigned i;

    status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        fprintf(stderr, "psel_info: cannot read the UCP configuration: %s; "
                "check the UCX_* variables above\n", ucs_status_string(status));
        return 1;
    }
    for (i = 0; i < env->count; ++i) {
        s      = &env->settings[i];
        status = ucp_config_modify(config, s->name, s->value);
        if (status == UCS_ERR_NO_ELEM) {
            note(env, "UCX %s has no UCX_%s: left out",
                 ucp_get_version_string(), s->name);
        } else if (status != UCS_OK) {
            fprintf(stderr, "psel_info: UCX rejects UCX_%s=%s (%s): left "
                    "out\n", s->name, s->value, ucs_status_string(status));
        } else {
            printf("UCX_%s=%s\n", s->name, s->value);
        }
    }
    ucp_config_release(config);
    return 0;
}

int psel_info_ucx_env(const psel_resource_table_t *local,
                      const psel_ep_lanes_t *lanes,
                      const psel_info_table_t *tables, unsigned count,
                      int quiet)
{
    UCS_STRING_BUFFER_ONSTACK(rows, 512);
    psel_ucx_env_t env = {.count = 0, .quiet = quiet};

    psel_select_rows_str(tables[0].table, &rows);
    note(&env, "protosel selects, on %s cost lines: %s",
         (tables[0].select->calib != NULL) ? "measured" : "attribute",
         ucs_string_buffer_cstr(&rows));
    map_thresholds(&env, tables[0].table);
    map_transports(&env, local, lanes);
    map_protocols(&env, tables, count);
    return print_settings(&env);
}
