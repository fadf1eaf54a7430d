/*
 * protosel's selection as stock UCX settings (see ucx_settings.h). UCP has
 * one threshold per protocol class (zero-copy, rendezvous), one rendezvous
 * scheme, rail counts, transport and device lists and, in UCX 1.13's
 * protocols v2, an allow-list of protocols; what those cannot say is noted.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "ucx_settings.h"

#include <lane_select/reachability.h>
#include <lane_select/ucs_compat.h>
#include <ucp_proto_sel/dump.h>
#include <ucs/sys/string.h>
#include <ucs/sys/math.h>
#include <ucs/debug/log_def.h>

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* protosel's tag-send protocols, and UCX 1.13's protocols v2 that do the
 * same; the last entry names the v2 protocols protosel has no model of.
 * UCX_PROTOS takes glob patterns: a '*' may also match egr/offload/...,
 * which is left out anyway. The patterns keep the longest list UCP prints
 * whole (ucx_info -c cuts values at 128 characters) */
static const struct {
    const char *psel;
    const char *ucx;
    const char *scheme;   /* UCX_RNDV_SCHEME that selects it */
} psel_ucx_protos[] = {
    {"egr/short", "egr/short",                        NULL},
    {"egr/bcopy", "egr/*/bcopy",                      NULL},
    {"egr/zcopy", "egr/*/zcopy",                      NULL},
    {"rndv/am",   "rndv/am/bcopy",                    "am"},
    {"rndv/get",  "rndv/get/zcopy",                   "get_zcopy"},
    {"rndv/put",  "rndv/put/zcopy",                   "put_zcopy"},
    {NULL,        "rndv/rkey_ptr,egr/offload/*",      NULL}
};


void psel_ucx_settings_init(psel_ucx_settings_t *s)
{
    s->count = 0;
    ucs_string_buffer_init(&s->notes);
}

void psel_ucx_settings_cleanup(psel_ucx_settings_t *s)
{
    ucs_string_buffer_cleanup(&s->notes);
}

void psel_ucx_settings_note(psel_ucx_settings_t *s, const char *fmt, ...)
{
    char line[768];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    ucs_string_buffer_appendf(&s->notes, "%s\n", line);
}

static char *setting_add(psel_ucx_settings_t *s, const char *name,
                         unsigned flags)
{
    psel_ucx_setting_t *setting = &s->settings[s->count++];

    assert(s->count <= PSEL_UCX_SETTINGS_MAX);
    setting->name     = name;
    setting->value[0] = '\0';
    setting->flags    = flags;
    return setting->value;
}

const psel_ucx_setting_t *
psel_ucx_settings_find(const psel_ucx_settings_t *s, const char *name)
{
    unsigned i;

    for (i = 0; i < s->count; ++i) {
        if (!strcmp(s->settings[i].name, name)) {
            return &s->settings[i];
        }
    }
    return NULL;
}

static void size_value(size_t size, char *value)
{
    if (size == SIZE_MAX) {
        strcpy(value, "inf");
    } else {
        /* the form `ucx_info -c` prints back */
        ucs_memunits_to_str(size, value, PSEL_UCX_VALUE_MAX);
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
    if ((strlen(list) + len + 2) <= PSEL_UCX_VALUE_MAX) {
        strcat(list, (list[0] == '\0') ? "" : ",");
        strcat(list, word);
    }
}

/* UCX_RNDV_THRESH of a peer of @a locality: from UCX 1.17 it has a value
 * per kind of peer ("intra:<peers on this host>,inter:<over the
 * network>"), and the other kind keeps UCP's own ("auto") */
static void rndv_thresh_value(size_t rndv_from, int locality, char *value)
{
    char size[PSEL_UCX_VALUE_MAX];

    size_value(rndv_from, size);
#if PSEL_UCX_AT_LEAST(1, 17)
    snprintf(value, PSEL_UCX_VALUE_MAX, "intra:%.64s,inter:%.64s",
             (locality == PSEL_PEER_REMOTE_HOST) ? "auto" : size,
             (locality == PSEL_PEER_REMOTE_HOST) ? size : "auto");
#else
    ucs_strncpy_zero(value, size, PSEL_UCX_VALUE_MAX);
#endif
}

/* The key-value UCX_RNDV_THRESH of @a intra's peers on this host and
 * @a inter's over the network (UCX 1.17 on); 0 if not of that form */
static int rndv_thresh_combine(const char *intra, const char *inter,
                               char *value)
{
    char a[64], b[64];

    if ((sscanf(intra, "intra:%63[^,],inter:", a) != 1) ||
        (sscanf(inter, "intra:%*[^,],inter:%63s", b) != 1)) {
        return 0;
    }
    snprintf(value, PSEL_UCX_VALUE_MAX, "intra:%s,inter:%s", a, b);
    return 1;
}

/* UCX_RNDV_THRESH, UCX_ZCOPY_THRESH, UCX_RNDV_SCHEME and the rails, from the
 * contiguous table: what a plain ucp_tag_send of a buffer gets */
static void map_thresholds(psel_ucx_settings_t *s,
                           const psel_select_table_t *table, int locality)
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
                psel_ucx_settings_note(s, "protosel switches from %s to %s at "
                                       "%zu; UCP runs one rendezvous scheme: "
                                       "the one of the largest sizes",
                                       rndv_proto->name, proto->name,
                                       row_start(table, row));
            }
            rndv_proto = proto;
            rndv       = caps;
        } else if (rndv_from != SIZE_MAX) {
            psel_ucx_settings_note(s, "protosel goes back to %s at %zu, after "
                                   "rendezvous; UCP's threshold cannot say "
                                   "that: rendezvous stays", proto->name,
                                   row_start(table, row));
        } else if (!strcmp(proto->name, "egr/zcopy")) {
            zcopy_from  = ucs_min(zcopy_from, row_start(table, row));
            eager_rails = ucs_max(eager_rails, lanes_count(caps->lanes));
        } else if (!strcmp(proto->name, "egr/bcopy")) {
            if (zcopy_from != SIZE_MAX) {
                psel_ucx_settings_note(s, "protosel goes back to egr/bcopy at "
                                       "%zu, after egr/zcopy; "
                                       "UCX_ZCOPY_THRESH cannot say that: "
                                       "zero-copy stays",
                                       row_start(table, row));
            }
            eager_rails = ucs_max(eager_rails, lanes_count(caps->lanes));
        }
    }

    rndv_thresh_value(rndv_from, locality,
                      setting_add(s, "RNDV_THRESH", PSEL_UCX_SETTING_SELECTION));
    size_value(zcopy_from, setting_add(s, "ZCOPY_THRESH",
                                       PSEL_UCX_SETTING_SELECTION));
    if (rndv_proto != NULL) {
        for (i = 0; i < ucs_static_array_size(psel_ucx_protos); ++i) {
            if ((psel_ucx_protos[i].psel != NULL) &&
                !strcmp(psel_ucx_protos[i].psel, rndv_proto->name)) {
                scheme = psel_ucx_protos[i].scheme;
            }
        }
        psel_ucx_settings_note(s, "UCX_RNDV_THRESH: %s from %zu; "
                               "UCX_RNDV_SCHEME: %s, on %s", rndv_proto->name,
                               rndv_from, scheme, rndv->lanes);
    } else {
        psel_ucx_settings_note(s, "UCX_RNDV_THRESH: protosel never selects "
                               "rendezvous");
    }
    strcpy(setting_add(s, "RNDV_SCHEME", PSEL_UCX_SETTING_SELECTION), scheme);
    psel_ucx_settings_note(s, "UCX_ZCOPY_THRESH: %s",
                           (zcopy_from == SIZE_MAX) ?
                           "protosel never selects egr/zcopy before "
                           "rendezvous" : "egr/zcopy from there on");

    snprintf(setting_add(s, "MAX_EAGER_RAILS", PSEL_UCX_SETTING_SELECTION),
             PSEL_UCX_VALUE_MAX, "%u", eager_rails);
    snprintf(setting_add(s, "MAX_RNDV_RAILS", PSEL_UCX_SETTING_SELECTION),
             PSEL_UCX_VALUE_MAX, "%u",
             (rndv != NULL) ? lanes_count(rndv->lanes) : 1);
    psel_ucx_settings_note(s, "UCX_MAX_EAGER_RAILS, UCX_MAX_RNDV_RAILS: the "
                           "lanes eager copies and rendezvous run on");
}

/* UCX_TLS and UCX_NET_DEVICES: the transports and network devices of the
 * endpoint's lanes; self too, which UCP uses for sends to its own worker */
static void map_transports(psel_ucx_settings_t *s,
                           const psel_resource_table_t *local,
                           const psel_ep_lanes_t *lanes)
{
    char *tls = setting_add(s, "TLS", PSEL_UCX_SETTING_RESOURCES);
    char devices[PSEL_UCX_VALUE_MAX] = "";
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
    psel_ucx_settings_note(s, "UCX_TLS: the transports of the endpoint's "
                           "lanes, and self for sends to the own process");
    if (devices[0] != '\0') {
        strcpy(setting_add(s, "NET_DEVICES", PSEL_UCX_SETTING_RESOURCES),
               devices);
        psel_ucx_settings_note(s, "UCX_NET_DEVICES: the network devices of "
                               "the lanes");
    }
}

static void setting_remove(psel_ucx_settings_t *s, unsigned i)
{
    memmove(&s->settings[i], &s->settings[i + 1],
            sizeof(s->settings[0]) * (s->count - i - 1));
    --s->count;
}

/* Is @a name in the comma-separated @a list? */
static int list_has(const char *list, const char *name)
{
    size_t len = strlen(name);
    const char *p;

    for (p = list; p != NULL; p = strchr(p, ',')) {
        p += (*p == ',');
        if (!strncmp(p, name, len) && ((p[len] == ',') || (p[len] == '\0'))) {
            return 1;
        }
    }
    return 0;
}

/* The protocols both "^a,b,..." lists leave out, as such a list; "all" if
 * none */
static void protos_both_exclude(const char *a, const char *b, char *out,
                                size_t max)
{
    char list[PSEL_UCX_VALUE_MAX], *tok, *save;

    out[0] = '\0';
    if ((a[0] == '^') && (b[0] == '^')) {
        ucs_strncpy_zero(list, a + 1, sizeof(list));
        for (tok = strtok_r(list, ",", &save); tok != NULL;
             tok = strtok_r(NULL, ",", &save)) {
            if (list_has(b + 1, tok) && (strlen(out) + strlen(tok) + 2 < max)) {
                strcat(out, (out[0] == '\0') ? "^" : ",");
                strcat(out, tok);
            }
        }
    }
    if (out[0] == '\0') {
        ucs_strncpy_zero(out, "all", max);
    }
}

void psel_ucx_settings_merge(psel_ucx_settings_t *s, const char *s_peers,
                             const psel_ucx_settings_t *other,
                             const char *other_peers)
{
    char value[PSEL_UCX_VALUE_MAX];
    const psel_ucx_setting_t *o;
    psel_ucx_setting_t *setting;
    unsigned i = 0;

    while (i < s->count) {
        setting = &s->settings[i];
        o       = psel_ucx_settings_find(other, setting->name);
        if (!(setting->flags & PSEL_UCX_SETTING_SELECTION) ||
            ((o != NULL) && !strcmp(o->value, setting->value))) {
            ++i;
            continue;
        }
        if (!strcmp(setting->name, "RNDV_THRESH") && (o != NULL) &&
            rndv_thresh_combine(setting->value, o->value, value)) {
            ucs_strncpy_zero(setting->value, value, sizeof(setting->value));
            psel_ucx_settings_note(s, "UCX_RNDV_THRESH: intra-node for %s, "
                                   "inter-node for %s", s_peers, other_peers);
            ++i;
            continue;
        } else if (!strcmp(setting->name, "PROTOS") && (o != NULL)) {
            protos_both_exclude(setting->value, o->value, value,
                                sizeof(value));
            psel_ucx_settings_note(s, "UCX_PROTOS: only the protocols "
                                   "protosel selects for none of %s and %s "
                                   "are left out", s_peers, other_peers);
            if (strcmp(value, "all")) {
                ucs_strncpy_zero(setting->value, value,
                                 sizeof(setting->value));
                ++i;
                continue;
            }
        } else {
            psel_ucx_settings_note(s, "UCX_%s: %s for %s, %s for %s; UCX "
                                   "has one value for all peers, so UCP's "
                                   "own choice per endpoint stays",
                                   setting->name, setting->value, s_peers,
                                   (o != NULL) ? o->value : "UCP's default",
                                   other_peers);
        }
        setting_remove(s, i);
    }
}

/* UCX_PROTOS: leave out the v2 eager protocols that no table selects. The
 * rendezvous ones stay: UCP's receiver falls back on another scheme where
 * the one it was told cannot run (UCX 1.13 runs no rndv/get between two
 * processes over cma, and aborts the receive if rndv/am/bcopy is out) */
static void map_protocols(psel_ucx_settings_t *s,
                          const psel_select_table_t *const *tables,
                          unsigned count)
{
    char *protos;
    unsigned i, t, row;
    int used;

    strcpy(setting_add(s, "PROTO_ENABLE", 0), "y");
    protos = setting_add(s, "PROTOS", PSEL_UCX_SETTING_SELECTION);
    for (i = 0; i < ucs_static_array_size(psel_ucx_protos); ++i) {
        used = (psel_ucx_protos[i].scheme != NULL);
        for (t = 0; (t < count) && (psel_ucx_protos[i].psel != NULL); ++t) {
            for (row = 0; row < tables[t]->count; ++row) {
                used |= !strcmp(tables[t]->elems[row].proto->name,
                                psel_ucx_protos[i].psel);
            }
        }
        if (!used) {
            strcat(protos, (protos[0] == '\0') ? "^" : ",");
            strcat(protos, psel_ucx_protos[i].ucx);
        }
    }
    if (protos[0] == '\0') {
        strcpy(protos, "all");
    }
    psel_ucx_settings_note(s, "UCX_PROTOS: without the eager protocols "
                           "protosel selects for no buffer type, nor those "
                           "it does not model (every rendezvous scheme "
                           "stays, for UCP's receiver to fall back on); it "
                           "acts only with "
                           "UCX_PROTO_ENABLE=y (UCX 1.13's protocols v2, off "
                           "by default), which also honours the settings "
                           "above");
}

void psel_ucx_settings_derive(psel_ucx_settings_t *s,
                              const psel_resource_table_t *local,
                              const psel_ep_lanes_t *lanes,
                              const psel_select_table_t *const *tables,
                              unsigned count, int locality, int calibrated)
{
    UCS_STRING_BUFFER_ONSTACK(rows, 512);

    psel_select_rows_str(tables[0], &rows);
    psel_ucx_settings_note(s, "protosel selects, on %s cost lines: %s",
                           calibrated ? "measured" : "attribute",
                           ucs_string_buffer_cstr(&rows));
    map_thresholds(s, tables[0], locality);
    map_transports(s, local, lanes);
    map_protocols(s, tables, count);
}

ucs_status_t psel_ucx_settings_write_conf(const psel_ucx_settings_t *s,
                                          const char *dir, const char *origin)
{
    char path[4096], tmp[4096 + 8];
    const char *notes, *end;
    unsigned i;
    FILE *f;
    int fd;

    if ((snprintf(path, sizeof(path), "%s/ucx.conf", dir) >=
         (int)sizeof(path)) ||
        (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))) {
        ucs_error("%s: directory name too long", dir);
        return UCS_ERR_INVALID_PARAM;
    }
    fd = mkstemp(tmp);
    if ((fd < 0) || ((f = fdopen(fd, "w")) == NULL)) {
        ucs_error("cannot create %s: %m", tmp);
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        return UCS_ERR_IO_ERROR;
    }

    fprintf(f, "# UCX settings closest to protosel's selection, for "
            "UCX_CONFIG_DIR=%s\n# written by psel_info --ucx-conf from %s\n#\n",
            dir, origin);
    for (notes = ucs_string_buffer_cstr(&s->notes); *notes != '\0';
         notes = end + 1) {
        end = strchr(notes, '\n');
        if (end == NULL) {
            break;
        }
        fprintf(f, "# %.*s\n", (int)(end - notes), notes);
    }
    for (i = 0; i < s->count; ++i) {
        fprintf(f, "UCX_%s=%s\n", s->settings[i].name, s->settings[i].value);
    }
    if ((fflush(f) != 0) || ferror(f) || (fsync(fileno(f)) != 0)) {
        ucs_error("cannot write %s: %m", tmp);
        fclose(f);
        unlink(tmp);
        return UCS_ERR_IO_ERROR;
    }
    fclose(f);
    if (rename(tmp, path) != 0) {
        ucs_error("cannot rename %s to %s: %m", tmp, path);
        unlink(tmp);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}


/* ------------------------------------------------------------------------
 * UCP's configuration, through the table libucp registers
 */

static int psel_ucx_table_has(const ucs_config_field_t *fields,
                              const char *name)
{
    const ucs_config_field_t *field;

    for (field = fields; field->name != NULL; ++field) {
        if ((field->parser.read == ucs_config_sscanf_table) &&
            psel_ucx_table_has(field->parser.arg, name)) {
            return 1;
        } else if (!strcmp(field->name, name)) {
            return 1;
        }
    }
    return 0;
}

ucs_config_field_t *psel_ucx_config_table(size_t *size_p)
{
    ucs_config_global_list_entry_t *entry;

    ucs_list_for_each(entry, &ucs_config_global_list, list) {
        if ((entry->table != NULL) &&
            ((entry->prefix == NULL) || (entry->prefix[0] == '\0')) &&
            psel_ucx_table_has(entry->table, "RNDV_THRESH") &&
            psel_ucx_table_has(entry->table, "PROTO_ENABLE")) {
            if (size_p != NULL) {
                *size_p = entry->size;
            }
            return entry->table;
        }
    }
    return NULL;
}

ucs_status_t psel_ucx_config_get(const void *opts, const char *name,
                                 char *value, size_t max)
{
    ucs_config_field_t *table = psel_ucx_config_table(NULL);

    if ((table == NULL) || !psel_ucx_table_has(table, name)) {
        return UCS_ERR_NO_ELEM;
    }
    return ucs_config_parser_get_value((void*)opts, table, name, value, max);
}

/*
 * The value a UCX configuration file (ucx.conf: UCX's system directory, its
 * library's ../etc, $HOME, UCX_CONFIG_DIR, the working directory) gives
 * variable @a prefix<name>: asked of UCX's own parser, which keeps the
 * files' variables to itself, by reading a one-field table whose default
 * no file can hold. The caller knows the environment has no such
 * variable (it would win over the file).
 */
static int psel_ucx_config_file_value(const char *name, const char *prefix,
                                      char *value, size_t max)
{
    static const char unset[] = "\001protosel: not in a ucx.conf";
    ucs_config_field_t fields[2];
    char *opts  = NULL;
    int in_file = 0;

    memset(fields, 0, sizeof(fields));
    fields[0].name      = name;
    fields[0].dfl_value = unset;
    fields[0].doc       = "";
    fields[0].offset    = 0;
    fields[0].parser    = (ucs_config_parser_t)UCS_CONFIG_TYPE_STRING;
    if (psel_ucs_config_fill_opts(&opts, fields, prefix, NULL, 1) != UCS_OK) {
        return 0;
    }
    if ((opts != NULL) && strcmp(opts, unset)) {
        ucs_strncpy_zero(value, opts, max);
        in_file = 1;
    }
    ucs_config_parser_release_opts(&opts, fields);
    return in_file;
}

int psel_ucx_setting_user_set(const char *name, const char *env_prefix,
                              char *source, size_t max)
{
    char var[256], prefix[128];
    char value_buf[PSEL_UCX_VALUE_MAX], prefixed[PSEL_UCX_VALUE_MAX];
    const char *value;
    int found;

    snprintf(var, sizeof(var), "UCX_%s", name);
    value = getenv(var);
    if ((value == NULL) && (env_prefix != NULL) && (env_prefix[0] != '\0')) {
        snprintf(var, sizeof(var), "%s_UCX_%s", env_prefix, name);
        value = getenv(var);
    }
    if (value != NULL) {
        if (source != NULL) {
            snprintf(source, max, "%s=%s", var, value);
        }
        return 1;
    }

    /* not in the environment: a config file, as UCP reads it (a file's
     * <env_prefix>_UCX_<name> wins over its UCX_<name>) */
    found = psel_ucx_config_file_value(name, "UCX_", value_buf,
                                       sizeof(value_buf));
    snprintf(var, sizeof(var), "UCX_%s", name);
    if ((env_prefix != NULL) && (env_prefix[0] != '\0')) {
        snprintf(prefix, sizeof(prefix), "%s_UCX_", env_prefix);
        if (psel_ucx_config_file_value(name, prefix, prefixed,
                                       sizeof(prefixed)) &&
            (!found || strcmp(prefixed, value_buf))) {
            snprintf(var, sizeof(var), "%s%s", prefix, name);
            ucs_strncpy_zero(value_buf, prefixed, sizeof(value_buf));
            found = 1;
        }
    }
    if (found && (source != NULL)) {
        snprintf(source, max, "%s=%s in a ucx.conf", var, value_buf);
    }
    return found;
}
