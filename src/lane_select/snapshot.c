/*
 * Snapshot files: the resource table as text, one "key = value" per line.
 * Both directions walk the same key table, so every field that is saved is
 * also loaded and checked. Format: SNAPSHOT.md.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "snapshot.h"
#include "resource_table.h"
#include "text_json.h"
#include "text_scan.h"

#include <ucs/arch/bitops.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/string.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/datastruct/string_buffer.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PSEL_SNAPSHOT_MAGIC        "protosel-snapshot"
#define PSEL_SNAPSHOT_SECTION      "[resource]"
#define PSEL_SNAPSHOT_MAX_LINE     4096
#define PSEL_SNAPSHOT_MAX_RESOURCES 65536

typedef enum {
    PSEL_SNAPSHOT_TYPE_STRING,    /* char[PSEL_NAME_MAX], may be empty */
    PSEL_SNAPSHOT_TYPE_NAME,      /* char[PSEL_NAME_MAX], not empty */
    PSEL_SNAPSHOT_TYPE_DEV_TYPE,  /* uct_device_type_t by name */
    PSEL_SNAPSHOT_TYPE_DOUBLE,    /* finite, >= 0, %.17g */
    PSEL_SNAPSHOT_TYPE_SIZE,      /* size_t, or "unlimited" */
    PSEL_SNAPSHOT_TYPE_UINT,      /* unsigned */
    PSEL_SNAPSHOT_TYPE_INT_NAMED, /* int, by name (ib port state/link layer) */
    PSEL_SNAPSHOT_TYPE_FLAGS,     /* uint64_t, bit names separated by spaces */
    PSEL_SNAPSHOT_TYPE_DEV_ADDR   /* char[PSEL_DEV_ADDR_HEX_MAX]: hex digits,
                                     or empty */
} psel_snapshot_type_t;

/* Groups of keys that come all or none */
enum {
    PSEL_SNAPSHOT_GROUP_NONE,
    PSEL_SNAPSHOT_GROUP_IB,     /* ib.*: present iff ib.valid */
    PSEL_SNAPSHOT_GROUP_OP,     /* op.*: per-operation costs; absent in
                                   files of older writers: derived on load */
    PSEL_SNAPSHOT_GROUP_LAST
};

static const char *psel_snapshot_group_names[PSEL_SNAPSHOT_GROUP_LAST] = {
    [PSEL_SNAPSHOT_GROUP_IB] = "ib.*",
    [PSEL_SNAPSHOT_GROUP_OP] = "op.*"
};

typedef struct psel_snapshot_key {
    const char           *name;
    psel_snapshot_type_t type;
    size_t               offset;      /* in psel_resource_t */
    psel_flag_set_t      flag_set;    /* for TYPE_FLAGS */
    const char           *(*int_name)(int); /* for TYPE_INT_NAMED */
    int                  group;       /* PSEL_SNAPSHOT_GROUP_*: keys that
                                         come all or none */
    int                  optional;    /* may be absent (added after version 1
                                         was released): then zero */
} psel_snapshot_key_t;

/* op.source: where the per-operation costs came from */
static const char *psel_snapshot_op_source_name(int source)
{
    switch (source) {
    case PSEL_OP_COST_DERIVED: return "derived";
    case PSEL_OP_COST_LIVE:    return "live";
    default:                   return (source == PSEL_OP_COST_NONE) ? "none" :
                                                                      NULL;
    }
}

#define PSEL_KEY(_name, _type, _field) \
    {_name, PSEL_SNAPSHOT_TYPE_##_type, offsetof(psel_resource_t, _field), \
     PSEL_FLAG_SET_LAST, NULL, 0, 0}
#define PSEL_KEY_FLAGS(_name, _field, _set) \
    {_name, PSEL_SNAPSHOT_TYPE_FLAGS, offsetof(psel_resource_t, _field), \
     PSEL_FLAG_SET_##_set, NULL, 0, 0}
#define PSEL_KEY_OPTIONAL(_name, _type, _field) \
    {_name, PSEL_SNAPSHOT_TYPE_##_type, offsetof(psel_resource_t, _field), \
     PSEL_FLAG_SET_LAST, NULL, 0, 1}
#define PSEL_KEY_FLAGS_OPTIONAL(_name, _field, _set) \
    {_name, PSEL_SNAPSHOT_TYPE_FLAGS, offsetof(psel_resource_t, _field), \
     PSEL_FLAG_SET_##_set, NULL, 0, 1}
#define PSEL_KEY_IB(_name, _type, _field, _int_name) \
    {_name, PSEL_SNAPSHOT_TYPE_##_type, offsetof(psel_resource_t, ib._field), \
     PSEL_FLAG_SET_LAST, _int_name, PSEL_SNAPSHOT_GROUP_IB, 0}
#define PSEL_KEY_OP(_class, _CLASS) \
    {"op." #_class ".latency", PSEL_SNAPSHOT_TYPE_DOUBLE, \
     offsetof(psel_resource_t, op_cost[PSEL_OP_CLASS_##_CLASS].latency), \
     PSEL_FLAG_SET_LAST, NULL, PSEL_SNAPSHOT_GROUP_OP, 0}, \
    {"op." #_class ".send_pre", PSEL_SNAPSHOT_TYPE_DOUBLE, \
     offsetof(psel_resource_t, op_cost[PSEL_OP_CLASS_##_CLASS].send_pre), \
     PSEL_FLAG_SET_LAST, NULL, PSEL_SNAPSHOT_GROUP_OP, 0}, \
    {"op." #_class ".send_post", PSEL_SNAPSHOT_TYPE_DOUBLE, \
     offsetof(psel_resource_t, op_cost[PSEL_OP_CLASS_##_CLASS].send_post), \
     PSEL_FLAG_SET_LAST, NULL, PSEL_SNAPSHOT_GROUP_OP, 0}, \
    {"op." #_class ".recv", PSEL_SNAPSHOT_TYPE_DOUBLE, \
     offsetof(psel_resource_t, op_cost[PSEL_OP_CLASS_##_CLASS].recv), \
     PSEL_FLAG_SET_LAST, NULL, PSEL_SNAPSHOT_GROUP_OP, 0}
#define PSEL_KEY_LIMITS(_op) \
    PSEL_KEY(#_op ".max_short",       SIZE, _op.max_short), \
    PSEL_KEY(#_op ".max_bcopy",       SIZE, _op.max_bcopy), \
    PSEL_KEY(#_op ".min_zcopy",       SIZE, _op.min_zcopy), \
    PSEL_KEY(#_op ".max_zcopy",       SIZE, _op.max_zcopy), \
    PSEL_KEY(#_op ".opt_zcopy_align", SIZE, _op.opt_zcopy_align), \
    PSEL_KEY(#_op ".align_mtu",       SIZE, _op.align_mtu), \
    PSEL_KEY(#_op ".max_iov",         SIZE, _op.max_iov)

/* Every field of psel_resource_t, in the order they are saved */
static const psel_snapshot_key_t psel_snapshot_keys[] = {
    PSEL_KEY("component",        NAME,     component),
    PSEL_KEY("md_name",          NAME,     md_name),
    PSEL_KEY("tl_name",          NAME,     tl_name),
    PSEL_KEY("dev_name",         NAME,     dev_name),
    PSEL_KEY("dev_type",         DEV_TYPE, dev_type),
    PSEL_KEY("sys_dev",          STRING,   sys_dev),
    PSEL_KEY("latency.c",        DOUBLE,   latency.c),
    PSEL_KEY("latency.m",        DOUBLE,   latency.m),
    PSEL_KEY("bw_dedicated",     DOUBLE,   bw_dedicated),
    PSEL_KEY("bw_shared",        DOUBLE,   bw_shared),
    PSEL_KEY_OPTIONAL("bw_advertised", DOUBLE, bw_advertised),
    PSEL_KEY("overhead",         DOUBLE,   overhead),
    PSEL_KEY("priority",         UINT,     priority),
    PSEL_KEY("dev_num_paths",    UINT,     dev_num_paths),
    PSEL_KEY("max_num_eps",      SIZE,     max_num_eps),
    PSEL_KEY_LIMITS(put),
    PSEL_KEY_LIMITS(get),
    PSEL_KEY_LIMITS(am),
    PSEL_KEY("am_max_hdr",       SIZE,     am_max_hdr),
    PSEL_KEY_FLAGS("cap_flags",     cap_flags,     IFACE),
    PSEL_KEY_FLAGS("atomic32_ops",  atomic32_ops,  ATOMIC),
    PSEL_KEY_FLAGS("atomic32_fops", atomic32_fops, ATOMIC),
    PSEL_KEY_FLAGS("atomic64_ops",  atomic64_ops,  ATOMIC),
    PSEL_KEY_FLAGS("atomic64_fops", atomic64_fops, ATOMIC),
    PSEL_KEY("device_addr_len",  SIZE,     device_addr_len),
    {"dev_addr", PSEL_SNAPSHOT_TYPE_DEV_ADDR, offsetof(psel_resource_t,
                                                       dev_addr),
     PSEL_FLAG_SET_LAST, NULL, 0, 1},
    PSEL_KEY("iface_addr_len",   SIZE,     iface_addr_len),
    PSEL_KEY("ep_addr_len",      SIZE,     ep_addr_len),
    PSEL_KEY("reg_cost.c",       DOUBLE,   reg_cost.c),
    PSEL_KEY("reg_cost.m",       DOUBLE,   reg_cost.m),
    PSEL_KEY("rkey_size",        SIZE,     rkey_size),
    PSEL_KEY_FLAGS("md_flags",         md_flags,         MD),
    PSEL_KEY_FLAGS("reg_mem_types",    reg_mem_types,    MEM_TYPE),
    PSEL_KEY_FLAGS("access_mem_types", access_mem_types, MEM_TYPE),
    PSEL_KEY_FLAGS("alloc_mem_types",  alloc_mem_types,  MEM_TYPE),
    PSEL_KEY_FLAGS_OPTIONAL("detect_mem_types", detect_mem_types, MEM_TYPE),
    PSEL_KEY("max_reg",          SIZE,     max_reg),
    PSEL_KEY("max_alloc",        SIZE,     max_alloc),
    PSEL_KEY_IB("ib.port_state",   INT_NAMED, port_state,
                psel_ib_port_state_name),
    PSEL_KEY_IB("ib.link_layer",   INT_NAMED, link_layer,
                psel_ib_link_layer_name),
    PSEL_KEY_IB("ib.active_mtu",   UINT,      active_mtu,   NULL),
    PSEL_KEY_IB("ib.active_speed", UINT,      active_speed, NULL),
    PSEL_KEY_IB("ib.active_width", UINT,      active_width, NULL),
    PSEL_KEY_IB("ib.link_rate",    DOUBLE,    link_rate,    NULL),
    {"op.source", PSEL_SNAPSHOT_TYPE_INT_NAMED,
     offsetof(psel_resource_t, op_cost_source), PSEL_FLAG_SET_LAST,
     psel_snapshot_op_source_name, PSEL_SNAPSHOT_GROUP_OP, 0},
    PSEL_KEY_OP(short, SHORT),
    PSEL_KEY_OP(bcopy, BCOPY),
    PSEL_KEY_OP(zcopy, ZCOPY)
};

#define PSEL_SNAPSHOT_NUM_KEYS ucs_static_array_size(psel_snapshot_keys)


/* Saving */

static int psel_snapshot_string_ok(const char *str, size_t max)
{
    size_t i, len = strnlen(str, max);

    if (len == max) {
        return 0;
    }
    if ((len > 0) && (isspace((unsigned char)str[0]) ||
                      isspace((unsigned char)str[len - 1]))) {
        return 0;
    }
    for (i = 0; i < len; ++i) {
        if (iscntrl((unsigned char)str[i])) {
            return 0;
        }
    }
    return 1;
}

/* The name of a set bit; "bitN" for a bit the installed UCX does not name,
 * kept so that the round trip is lossless even for new UCX bits */
static const char *psel_snapshot_flag_name(psel_flag_set_t set, unsigned bit,
                                           char *buf, size_t max)
{
    const char *name = psel_flag_name(set, bit);

    if (name == NULL) {
        snprintf(buf, max, "bit%u", bit);
        name = buf;
    }
    return name;
}

static void psel_snapshot_save_flags(FILE *stream, psel_flag_set_t set,
                                     uint64_t flags)
{
    char buf[16];
    unsigned bit;
    int first = 1;

    if (flags == 0) {
        fprintf(stream, "none");
        return;
    }
    ucs_for_each_bit(bit, flags) {
        fprintf(stream, "%s%s", first ? "" : " ",
                psel_snapshot_flag_name(set, bit, buf, sizeof(buf)));
        first = 0;
    }
}

static ucs_status_t psel_snapshot_save_resource(const psel_resource_t *resource,
                                                FILE *stream)
{
    const psel_snapshot_key_t *key;
    const void *field;
    const char *name;
    size_t value;
    unsigned i;

    if (!((resource->bw_dedicated + resource->bw_shared) > 0)) {
        /* loading refuses it: what is saved must load */
        ucs_error("resource %.*s/%.*s: bandwidth %g + %g B/s cannot be saved "
                  "(expected above 0)", PSEL_NAME_MAX, resource->tl_name,
                  PSEL_NAME_MAX, resource->dev_name, resource->bw_dedicated,
                  resource->bw_shared);
        return UCS_ERR_INVALID_PARAM;
    }
    fprintf(stream, "\n" PSEL_SNAPSHOT_SECTION "\n");
    for (i = 0; i < PSEL_SNAPSHOT_NUM_KEYS; ++i) {
        key   = &psel_snapshot_keys[i];
        field = UCS_PTR_BYTE_OFFSET(resource, key->offset);
        if ((key->group == PSEL_SNAPSHOT_GROUP_IB) && !resource->ib.valid) {
            continue;
        }
        if (key->optional && (key->type == PSEL_SNAPSHOT_TYPE_DOUBLE) &&
            (*(const double*)field == 0)) {
            continue; /* bw_advertised of a figure not timed: as before it */
        }

        fprintf(stream, "%s = ", key->name);
        switch (key->type) {
        case PSEL_SNAPSHOT_TYPE_STRING:
        case PSEL_SNAPSHOT_TYPE_NAME:
            if (!psel_snapshot_string_ok(field, PSEL_NAME_MAX)) {
                ucs_error("resource %.*s/%.*s: %s cannot be saved (control "
                          "characters, surrounding spaces or too long)",
                          PSEL_NAME_MAX, resource->tl_name, PSEL_NAME_MAX,
                          resource->dev_name, key->name);
                return UCS_ERR_INVALID_PARAM;
            }
            fprintf(stream, "%s", (const char*)field);
            break;
        case PSEL_SNAPSHOT_TYPE_DEV_ADDR:
            if ((*(const char*)field != '\0') &&
                !psel_dev_addr_valid(field)) {
                ucs_error("resource %.*s/%.*s: dev_addr cannot be saved (not "
                          "hex digits)", PSEL_NAME_MAX, resource->tl_name,
                          PSEL_NAME_MAX, resource->dev_name);
                return UCS_ERR_INVALID_PARAM;
            }
            fprintf(stream, "%s", (const char*)field);
            break;
        case PSEL_SNAPSHOT_TYPE_DEV_TYPE:
            name = psel_device_type_name(*(const uct_device_type_t*)field);
            if (name == NULL) {
                ucs_error("resource %s/%s: invalid device type %d",
                          resource->tl_name, resource->dev_name,
                          *(const uct_device_type_t*)field);
                return UCS_ERR_INVALID_PARAM;
            }
            fprintf(stream, "%s", name);
            break;
        case PSEL_SNAPSHOT_TYPE_DOUBLE:
            /* 17 significant digits make the decimal text round-trip
             * exactly; '.' whatever LC_NUMERIC the application set */
            psel_text_fprintf(stream, "%.17g", *(const double*)field);
            break;
        case PSEL_SNAPSHOT_TYPE_SIZE:
            value = *(const size_t*)field;
            if (value == PSEL_SIZE_UNLIMITED) {
                fprintf(stream, "unlimited");
            } else {
                fprintf(stream, "%zu", value);
            }
            break;
        case PSEL_SNAPSHOT_TYPE_UINT:
            fprintf(stream, "%u", *(const unsigned*)field);
            break;
        case PSEL_SNAPSHOT_TYPE_INT_NAMED:
            name = key->int_name(*(const int*)field);
            if (name == NULL) {
                ucs_error("resource %s/%s: invalid %s %d", resource->tl_name,
                          resource->dev_name, key->name, *(const int*)field);
                return UCS_ERR_INVALID_PARAM;
            }
            fprintf(stream, "%s", name);
            break;
        case PSEL_SNAPSHOT_TYPE_FLAGS:
            psel_snapshot_save_flags(stream, key->flag_set,
                                     *(const uint64_t*)field);
            break;
        }
        fprintf(stream, "\n");
    }
    return UCS_OK;
}

ucs_status_t psel_snapshot_save(const psel_resource_table_t *table,
                                FILE *stream)
{
    ucs_status_t status;
    unsigned i;

    if (!psel_snapshot_string_ok(table->ucx_version,
                                 sizeof(table->ucx_version)) ||
        !psel_snapshot_string_ok(table->host, sizeof(table->host))) {
        ucs_error("table ucx_version or host cannot be saved (control "
                  "characters, surrounding spaces or too long)");
        return UCS_ERR_INVALID_PARAM;
    }

    fprintf(stream, PSEL_SNAPSHOT_MAGIC " %d\n", PSEL_SNAPSHOT_VERSION);
    fprintf(stream, "# protosel resource snapshot, format: "
            "src/lane_select/SNAPSHOT.md\n");
    fprintf(stream, "ucx_version = %s\n", table->ucx_version);
    fprintf(stream, "host = %s\n", table->host);
    if (table->copy_bw > 0) {
        psel_text_fprintf(stream, "copy_bw = %.17g\n", table->copy_bw);
    }
    fprintf(stream, "resources = %u\n", table->count);

    for (i = 0; i < table->count; ++i) {
        status = psel_snapshot_save_resource(&table->resources[i], stream);
        if (status != UCS_OK) {
            return status;
        }
    }

    if (fflush(stream) || ferror(stream)) {
        ucs_error("failed to write snapshot: %m");
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

static void psel_snapshot_json_flags(FILE *stream, psel_flag_set_t set,
                                     uint64_t flags)
{
    char buf[16];
    unsigned bit;
    int first = 1;

    fputc('[', stream);
    ucs_for_each_bit(bit, flags) {
        fputs(first ? "" : ", ", stream);
        psel_json_string(stream, psel_snapshot_flag_name(set, bit, buf,
                                                         sizeof(buf)));
        first = 0;
    }
    fputc(']', stream);
}

static void psel_snapshot_json_resource(const psel_resource_t *resource,
                                        FILE *stream)
{
    const psel_snapshot_key_t *key;
    const void *field;
    const char *name;
    unsigned i;

    fputs("{", stream);
    for (i = 0; i < PSEL_SNAPSHOT_NUM_KEYS; ++i) {
        key   = &psel_snapshot_keys[i];
        field = UCS_PTR_BYTE_OFFSET(resource, key->offset);
        if ((key->group == PSEL_SNAPSHOT_GROUP_IB) && !resource->ib.valid) {
            continue;
        }
        fputs((i > 0) ? ", " : "", stream);
        psel_json_string(stream, key->name);
        fputs(": ", stream);
        switch (key->type) {
        case PSEL_SNAPSHOT_TYPE_STRING:
        case PSEL_SNAPSHOT_TYPE_NAME:
        case PSEL_SNAPSHOT_TYPE_DEV_ADDR:
            psel_json_string(stream, field);
            break;
        case PSEL_SNAPSHOT_TYPE_DEV_TYPE:
            name = psel_device_type_name(*(const uct_device_type_t*)field);
            psel_json_string(stream, (name != NULL) ? name : "unknown");
            break;
        case PSEL_SNAPSHOT_TYPE_DOUBLE:
            psel_json_number(stream, *(const double*)field);
            break;
        case PSEL_SNAPSHOT_TYPE_SIZE:
            psel_json_size(stream, *(const size_t*)field);
            break;
        case PSEL_SNAPSHOT_TYPE_UINT:
            fprintf(stream, "%u", *(const unsigned*)field);
            break;
        case PSEL_SNAPSHOT_TYPE_INT_NAMED:
            name = key->int_name(*(const int*)field);
            psel_json_string(stream, (name != NULL) ? name : "unknown");
            break;
        case PSEL_SNAPSHOT_TYPE_FLAGS:
            psel_snapshot_json_flags(stream, key->flag_set,
                                     *(const uint64_t*)field);
            break;
        }
    }
    fputs("}", stream);
}

void psel_snapshot_print_json(const psel_resource_table_t *table, FILE *stream)
{
    psel_text_locale_t saved = psel_text_c_locale_enter();
    unsigned i;

    fputs("{\"origin\": ", stream);
    psel_json_string(stream, table->origin);
    fputs(", \"ucx_version\": ", stream);
    psel_json_string(stream, table->ucx_version);
    fputs(", \"host\": ", stream);
    psel_json_string(stream, table->host);
    fputs(", \"copy_bw\": ", stream);
    psel_json_number(stream, table->copy_bw);
    fputs(", \"resources\": [", stream);
    for (i = 0; i < table->count; ++i) {
        fputs((i > 0) ? ",\n  " : "\n  ", stream);
        psel_snapshot_json_resource(&table->resources[i], stream);
    }
    fputs("\n]}", stream);
    psel_text_c_locale_leave(saved);
}

ucs_status_t psel_snapshot_save_path(const psel_resource_table_t *table,
                                     const char *path)
{
    ucs_status_t status;
    FILE *stream;

    stream = fopen(path, "w");
    if (stream == NULL) {
        ucs_error("failed to create snapshot '%s': %m", path);
        return UCS_ERR_IO_ERROR;
    }

    status = psel_snapshot_save(table, stream);
    if ((fclose(stream) != 0) && (status == UCS_OK)) {
        ucs_error("failed to write snapshot '%s': %m", path);
        status = UCS_ERR_IO_ERROR;
    }
    return status;
}


/* Loading */

typedef struct psel_snapshot_parser {
    const char            *name;        /* for messages */
    unsigned              line;         /* current line number */
    const char            *line_text;   /* current line, for columns */
    psel_resource_table_t table;        /* result, built in place */
    unsigned              *section_lines; /* line of each [resource] */

    int                   header_done;  /* first section seen */
    unsigned              header_line[4]; /* ucx_version, host, resources,
                                             copy_bw (optional) */
    unsigned              expected;     /* "resources = N" */

    int                   in_section;
    unsigned              section_line;
    psel_resource_t       resource;     /* section being read */
    unsigned              key_line[PSEL_SNAPSHOT_NUM_KEYS];
} psel_snapshot_parser_t;

#define psel_snapshot_error(_parser, _fmt, ...) \
    ucs_error("%s:%u: " _fmt, (_parser)->name, (_parser)->line, ## __VA_ARGS__)

/* An error about an earlier line of the section */
#define psel_snapshot_error_at(_parser, _line, _fmt, ...) \
    ucs_error("%s:%u: " _fmt, (_parser)->name, (_line), ## __VA_ARGS__)

/* "file:line:column: expected WHAT for KEY, found 'VALUE'" */
static ucs_status_t
psel_snapshot_value_error(const psel_snapshot_parser_t *parser,
                          const char *key, const char *value,
                          const char *what)
{
    psel_text_pos_t pos = {parser->name, parser->line, parser->line_text};

    psel_text_error(&pos, value, "%s for %s", what, key);
    return UCS_ERR_INVALID_PARAM;
}

static ucs_status_t
psel_snapshot_parse_string(psel_snapshot_parser_t *parser, const char *key,
                           const char *value, int nonempty, char *dst,
                           size_t max)
{
    if (strlen(value) >= max) {
        psel_snapshot_error(parser, "%s: expected at most %zu characters, "
                            "got %zu", key, max - 1, strlen(value));
        return UCS_ERR_INVALID_PARAM;
    }
    if (nonempty && (value[0] == '\0')) {
        psel_snapshot_error(parser, "%s: expected a name, got nothing", key);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!psel_snapshot_string_ok(value, max)) {
        psel_snapshot_error(parser, "%s: control characters are not allowed",
                            key);
        return UCS_ERR_INVALID_PARAM;
    }
    ucs_strncpy_zero(dst, value, max);
    return UCS_OK;
}

static ucs_status_t
psel_snapshot_parse_ulong(psel_snapshot_parser_t *parser, const char *key,
                          const char *value, unsigned long long max,
                          int unlimited, unsigned long long *result)
{
    char what[80];
    uint64_t number;

    if (unlimited && !strcmp(value, "unlimited")) {
        *result = PSEL_SIZE_UNLIMITED;
        return UCS_OK;
    }

    if (!psel_scan_u64_all(value, &number) || (number > max)) {
        snprintf(what, sizeof(what), "a decimal integer <= %llu%s", max,
                 unlimited ? " or 'unlimited'" : "");
        return psel_snapshot_value_error(parser, key, value, what);
    }
    *result = number;
    return UCS_OK;
}

static ucs_status_t
psel_snapshot_parse_double(psel_snapshot_parser_t *parser, const char *key,
                           const char *value, double *result)
{
    double number;

    if (!psel_scan_double_all(value, &number)) {
        return psel_snapshot_value_error(parser, key, value,
                                         "a finite non-negative number");
    }
    *result = number;
    return UCS_OK;
}

static ucs_status_t
psel_snapshot_parse_flags(psel_snapshot_parser_t *parser, const char *key,
                          psel_flag_set_t set, const char *value,
                          uint64_t *result)
{
    char buf[PSEL_SNAPSHOT_MAX_LINE];
    char *token, *saveptr, *end;
    uint64_t flags = 0;
    unsigned long bit;
    int named;

    if (!strcmp(value, "none")) {
        *result = 0;
        return UCS_OK;
    }

    ucs_strncpy_zero(buf, value, sizeof(buf));
    for (token = strtok_r(buf, " \t", &saveptr); token != NULL;
         token = strtok_r(NULL, " \t", &saveptr)) {
        named = psel_flag_bit(set, token);
        if (named >= 0) {
            flags |= UCS_BIT(named);
            continue;
        }

        if (!strncmp(token, "bit", 3) && isdigit((unsigned char)token[3])) {
            bit = strtoul(token + 3, &end, 10);
            if ((*end == '\0') && (bit < 64)) {
                flags |= UCS_BIT(bit);
                continue;
            }
        }

        psel_snapshot_error(parser, "%s: unknown flag '%s', expected flag "
                            "names, 'bit<0..63>' or 'none'", key, token);
        return UCS_ERR_INVALID_PARAM;
    }

    if (flags == 0) {
        psel_snapshot_error(parser, "%s: expected flag names or 'none', got "
                            "nothing", key);
        return UCS_ERR_INVALID_PARAM;
    }

    *result = flags;
    return UCS_OK;
}

static ucs_status_t
psel_snapshot_parse_int_named(psel_snapshot_parser_t *parser,
                              const psel_snapshot_key_t *key,
                              const char *value, int *result)
{
    UCS_STRING_BUFFER_ONSTACK(strb, 256);
    const char *name;
    int i;

    for (i = 0; (name = key->int_name(i)) != NULL; ++i) {
        if (!strcmp(name, value)) {
            *result = i;
            return UCS_OK;
        }
        ucs_string_buffer_appendf(&strb, "%s%s", i ? ", " : "one of ", name);
    }

    return psel_snapshot_value_error(parser, key->name, value,
                                     ucs_string_buffer_cstr(&strb));
}

static ucs_status_t
psel_snapshot_parse_value(psel_snapshot_parser_t *parser,
                          const psel_snapshot_key_t *key, const char *value)
{
    void *field = UCS_PTR_BYTE_OFFSET(&parser->resource, key->offset);
    unsigned long long number;
    uct_device_type_t dev_type;
    ucs_status_t status;
    const char *name;

    switch (key->type) {
    case PSEL_SNAPSHOT_TYPE_STRING:
    case PSEL_SNAPSHOT_TYPE_NAME:
        status = psel_snapshot_parse_string(parser, key->name, value,
                                            key->type ==
                                            PSEL_SNAPSHOT_TYPE_NAME,
                                            field, PSEL_NAME_MAX);
        if ((status == UCS_OK) && !strcmp(key->name, "tl_name") &&
            (strchr(value, '/') != NULL)) {
            psel_snapshot_error(parser, "tl_name: '/' is not allowed in a "
                                "transport name");
            status = UCS_ERR_INVALID_PARAM;
        }
        return status;
    case PSEL_SNAPSHOT_TYPE_DEV_ADDR:
        if ((value[0] != '\0') && !psel_dev_addr_valid(value)) {
            return psel_snapshot_value_error(parser, key->name, value,
                                             "an even number of lowercase hex "
                                             "digits (at most 128), or "
                                             "nothing");
        }
        ucs_strncpy_zero(field, value, PSEL_DEV_ADDR_HEX_MAX);
        return UCS_OK;
    case PSEL_SNAPSHOT_TYPE_DEV_TYPE:
        for (dev_type = 0; dev_type < UCT_DEVICE_TYPE_LAST; ++dev_type) {
            name = psel_device_type_name(dev_type);
            if ((name != NULL) && !strcmp(name, value)) {
                *(uct_device_type_t*)field = dev_type;
                return UCS_OK;
            }
        }
        return psel_snapshot_value_error(parser, "dev_type", value,
                                         "net, shm, acc or self");
    case PSEL_SNAPSHOT_TYPE_DOUBLE:
        return psel_snapshot_parse_double(parser, key->name, value, field);
    case PSEL_SNAPSHOT_TYPE_SIZE:
        status = psel_snapshot_parse_ulong(parser, key->name, value, SIZE_MAX,
                                           1, &number);
        if (status == UCS_OK) {
            *(size_t*)field = number;
        }
        return status;
    case PSEL_SNAPSHOT_TYPE_UINT:
        status = psel_snapshot_parse_ulong(parser, key->name, value, UINT_MAX,
                                           0, &number);
        if (status == UCS_OK) {
            *(unsigned*)field = number;
        }
        return status;
    case PSEL_SNAPSHOT_TYPE_INT_NAMED:
        return psel_snapshot_parse_int_named(parser, key, value, field);
    case PSEL_SNAPSHOT_TYPE_FLAGS:
        return psel_snapshot_parse_flags(parser, key->name, key->flag_set,
                                         value, field);
    }

    psel_snapshot_error(parser, "%s: internal error, bad key type", key->name);
    return UCS_ERR_INVALID_PARAM;
}

/* The line of key @a name in the section being read (0 if absent) */
static unsigned psel_snapshot_key_line(const psel_snapshot_parser_t *parser,
                                       const char *name)
{
    unsigned i;

    for (i = 0; i < PSEL_SNAPSHOT_NUM_KEYS; ++i) {
        if (!strcmp(psel_snapshot_keys[i].name, name)) {
            return parser->key_line[i];
        }
    }
    return 0;
}

/* Validate the section being read and append it to the table */
static ucs_status_t psel_snapshot_end_section(psel_snapshot_parser_t *parser)
{
    psel_resource_t *resource = &parser->resource;
    unsigned num_group[PSEL_SNAPSHOT_GROUP_LAST] = {0};
    const psel_snapshot_key_t *key;
    unsigned i, *lines;
    ucs_status_t status;

    if (!parser->in_section) {
        return UCS_OK;
    }

    for (i = 0; i < PSEL_SNAPSHOT_NUM_KEYS; ++i) {
        key = &psel_snapshot_keys[i];
        if (key->group != PSEL_SNAPSHOT_GROUP_NONE) {
            num_group[key->group] += (parser->key_line[i] != 0);
        } else if ((parser->key_line[i] == 0) && !key->optional) {
            psel_snapshot_error(parser, "resource section at line %u: "
                                "missing key '%s'", parser->section_line,
                                key->name);
            return UCS_ERR_INVALID_PARAM;
        }
    }

    for (i = 0; i < PSEL_SNAPSHOT_NUM_KEYS; ++i) {
        key = &psel_snapshot_keys[i];
        if ((key->group != PSEL_SNAPSHOT_GROUP_NONE) &&
            (num_group[key->group] != 0) && (parser->key_line[i] == 0)) {
            psel_snapshot_error(parser, "resource section at line %u: "
                                "missing key '%s' (%s keys come all or none)",
                                parser->section_line, key->name,
                                psel_snapshot_group_names[key->group]);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    if (!((resource->bw_dedicated + resource->bw_shared) > 0)) {
        /* a lane that moves nothing: lane scores and costs divide by it */
        psel_snapshot_error_at(parser,
                               ucs_max(psel_snapshot_key_line(parser,
                                                              "bw_dedicated"),
                                       psel_snapshot_key_line(parser,
                                                              "bw_shared")),
                               "resource section at line %u: bw_dedicated + "
                               "bw_shared is 0, expected above 0",
                               parser->section_line);
        return UCS_ERR_INVALID_PARAM;
    }
    resource->ib.valid = (num_group[PSEL_SNAPSHOT_GROUP_IB] != 0);
    if (num_group[PSEL_SNAPSHOT_GROUP_OP] == 0) {
        /* written before per-operation costs were kept: UCX's rules for
         * the version the snapshot names */
        psel_resource_op_cost_derive(resource, parser->table.ucx_version);
    }

    for (i = 0; i < parser->table.count; ++i) {
        if (!strcmp(parser->table.resources[i].tl_name, resource->tl_name) &&
            !strcmp(parser->table.resources[i].dev_name, resource->dev_name)) {
            psel_snapshot_error(parser, "resource section at line %u: "
                                "duplicate resource %s/%s, first defined at "
                                "line %u", parser->section_line,
                                resource->tl_name, resource->dev_name,
                                parser->section_lines[i]);
            return UCS_ERR_INVALID_PARAM;
        }
    }

    lines = realloc(parser->section_lines,
                    (parser->table.count + 1) * sizeof(*lines));
    if (lines == NULL) {
        psel_snapshot_error(parser, "out of memory");
        return UCS_ERR_NO_MEMORY;
    }
    parser->section_lines                      = lines;
    parser->section_lines[parser->table.count] = parser->section_line;

    status = psel_resource_table_append(&parser->table, resource);
    if (status != UCS_OK) {
        psel_snapshot_error(parser, "failed to add resource %s/%s: %s",
                            resource->tl_name, resource->dev_name,
                            ucs_status_string(status));
        return status;
    }

    parser->in_section = 0;
    return UCS_OK;
}

static ucs_status_t psel_snapshot_end_header(psel_snapshot_parser_t *parser)
{
    static const char *keys[] = {"ucx_version", "host", "resources"};
    unsigned i;

    if (parser->header_done) {
        return UCS_OK;
    }
    /* copy_bw may be absent: a host whose copies were not timed */

    for (i = 0; i < ucs_static_array_size(keys); ++i) {
        if (parser->header_line[i] == 0) {
            psel_snapshot_error(parser, "missing header key '%s' (expected "
                                "before the first " PSEL_SNAPSHOT_SECTION ")",
                                keys[i]);
            return UCS_ERR_INVALID_PARAM;
        }
    }

    parser->header_done = 1;
    return UCS_OK;
}

static ucs_status_t psel_snapshot_header_key(psel_snapshot_parser_t *parser,
                                             const char *key, const char *value)
{
    psel_resource_table_t *table = &parser->table;
    unsigned long long count;
    ucs_status_t status;
    unsigned index;

    if (!strcmp(key, "ucx_version")) {
        index = 0;
    } else if (!strcmp(key, "host")) {
        index = 1;
    } else if (!strcmp(key, "resources")) {
        index = 2;
    } else if (!strcmp(key, "copy_bw")) {
        index = 3;
    } else {
        psel_snapshot_error(parser, "unknown header key '%s', expected "
                            "ucx_version, host, copy_bw, resources or "
                            PSEL_SNAPSHOT_SECTION, key);
        return UCS_ERR_INVALID_PARAM;
    }

    if (parser->header_line[index] != 0) {
        psel_snapshot_error(parser, "duplicate key '%s', first at line %u",
                            key, parser->header_line[index]);
        return UCS_ERR_INVALID_PARAM;
    }

    switch (index) {
    case 0:
        status = psel_snapshot_parse_string(parser, key, value, 0,
                                            table->ucx_version,
                                            sizeof(table->ucx_version));
        break;
    case 1:
        status = psel_snapshot_parse_string(parser, key, value, 0, table->host,
                                            sizeof(table->host));
        break;
    case 2:
        status = psel_snapshot_parse_ulong(parser, key, value,
                                           PSEL_SNAPSHOT_MAX_RESOURCES, 0,
                                           &count);
        parser->expected = count;
        break;
    default:
        status = psel_snapshot_parse_double(parser, key, value,
                                            &table->copy_bw);
        break;
    }

    if (status == UCS_OK) {
        parser->header_line[index] = parser->line;
    }
    return status;
}

static ucs_status_t psel_snapshot_section_key(psel_snapshot_parser_t *parser,
                                              const char *key,
                                              const char *value)
{
    unsigned i;

    for (i = 0; i < PSEL_SNAPSHOT_NUM_KEYS; ++i) {
        if (strcmp(psel_snapshot_keys[i].name, key)) {
            continue;
        }

        if (parser->key_line[i] != 0) {
            psel_snapshot_error(parser, "duplicate key '%s', first at line %u",
                                key, parser->key_line[i]);
            return UCS_ERR_INVALID_PARAM;
        }

        parser->key_line[i] = parser->line;
        return psel_snapshot_parse_value(parser, &psel_snapshot_keys[i],
                                         value);
    }

    psel_snapshot_error(parser, "unknown key '%s' in " PSEL_SNAPSHOT_SECTION
                        " section", key);
    return UCS_ERR_INVALID_PARAM;
}

static char *psel_snapshot_trim(char *str)
{
    size_t len;

    while (isspace((unsigned char)*str)) {
        ++str;
    }
    len = strlen(str);
    while ((len > 0) && isspace((unsigned char)str[len - 1])) {
        str[--len] = '\0';
    }
    return str;
}

static ucs_status_t psel_snapshot_parse_line(psel_snapshot_parser_t *parser,
                                             char *line)
{
    char *key, *value, *eq;
    ucs_status_t status;
    char magic[32];
    int version, n;

    if (parser->line == 1) {
        n = 0;
        if ((sscanf(line, "%31s %d%n", magic, &version, &n) != 2) ||
            strcmp(magic, PSEL_SNAPSHOT_MAGIC) ||
            (psel_snapshot_trim(line + n)[0] != '\0')) {
            psel_snapshot_error(parser, "expected '" PSEL_SNAPSHOT_MAGIC
                                " %d' on the first line",
                                PSEL_SNAPSHOT_VERSION);
            return UCS_ERR_INVALID_PARAM;
        }
        if (version != PSEL_SNAPSHOT_VERSION) {
            psel_snapshot_error(parser, "unsupported snapshot version %d, "
                                "expected %d", version, PSEL_SNAPSHOT_VERSION);
            return UCS_ERR_INVALID_PARAM;
        }
        return UCS_OK;
    }

    line = psel_snapshot_trim(line);
    if ((line[0] == '\0') || (line[0] == '#')) {
        return UCS_OK;
    }

    if (line[0] == '[') {
        if (strcmp(line, PSEL_SNAPSHOT_SECTION)) {
            psel_snapshot_error(parser, "unknown section '%s', expected "
                                PSEL_SNAPSHOT_SECTION, line);
            return UCS_ERR_INVALID_PARAM;
        }

        status = psel_snapshot_end_header(parser);
        if (status != UCS_OK) {
            return status;
        }

        status = psel_snapshot_end_section(parser);
        if (status != UCS_OK) {
            return status;
        }

        if (parser->table.count >= parser->expected) {
            psel_snapshot_error(parser, "more resource sections than the "
                                "%u declared by 'resources' at line %u",
                                parser->expected, parser->header_line[2]);
            return UCS_ERR_INVALID_PARAM;
        }

        memset(&parser->resource, 0, sizeof(parser->resource));
        memset(parser->key_line, 0, sizeof(parser->key_line));
        parser->in_section   = 1;
        parser->section_line = parser->line;
        return UCS_OK;
    }

    eq = strchr(line, '=');
    if (eq == NULL) {
        psel_snapshot_error(parser, "expected 'key = value', a section or a "
                            "comment, got '%s'", line);
        return UCS_ERR_INVALID_PARAM;
    }

    *eq   = '\0';
    key   = psel_snapshot_trim(line);
    value = psel_snapshot_trim(eq + 1);
    if (key[0] == '\0') {
        psel_snapshot_error(parser, "expected a key before '='");
        return UCS_ERR_INVALID_PARAM;
    }

    if (parser->in_section) {
        return psel_snapshot_section_key(parser, key, value);
    } else {
        return psel_snapshot_header_key(parser, key, value);
    }
}

ucs_status_t psel_snapshot_load(FILE *stream, const char *name,
                                psel_resource_table_t *table)
{
    psel_snapshot_parser_t *parser;
    ucs_status_t status;
    size_t capacity = 0;
    char *line      = NULL;
    ssize_t length;

    /* The parser is large (a resource and its key lines): keep it off stack */
    parser = calloc(1, sizeof(*parser));
    if (parser == NULL) {
        ucs_error("%s: out of memory", name);
        return UCS_ERR_NO_MEMORY;
    }
    parser->name = name;
    psel_resource_table_init(&parser->table);

    while ((length = getline(&line, &capacity, stream)) >= 0) {
        ++parser->line;
        if (length > PSEL_SNAPSHOT_MAX_LINE) {
            psel_snapshot_error(parser, "line longer than %d characters",
                                PSEL_SNAPSHOT_MAX_LINE);
            status = UCS_ERR_INVALID_PARAM;
            goto err_free_line;
        }
        if (strlen(line) != (size_t)length) {
            psel_snapshot_error(parser, "unexpected NUL character");
            status = UCS_ERR_INVALID_PARAM;
            goto err_free_line;
        }

        parser->line_text = line;
        status            = psel_snapshot_parse_line(parser, line);
        if (status != UCS_OK) {
            goto err_free_line;
        }
    }

    if (ferror(stream)) {
        psel_snapshot_error(parser, "read error: %m");
        status = UCS_ERR_IO_ERROR;
        goto err_free_line;
    }

    if (parser->line == 0) {
        parser->line = 1;
        psel_snapshot_error(parser, "empty file, expected '"
                            PSEL_SNAPSHOT_MAGIC " %d'", PSEL_SNAPSHOT_VERSION);
        status = UCS_ERR_INVALID_PARAM;
        goto err_free_line;
    }

    status = psel_snapshot_end_header(parser);
    if (status != UCS_OK) {
        goto err_free_line;
    }

    status = psel_snapshot_end_section(parser);
    if (status != UCS_OK) {
        goto err_free_line;
    }

    if (parser->table.count != parser->expected) {
        psel_snapshot_error(parser, "end of file after %u resource sections, "
                            "expected %u as declared at line %u (truncated?)",
                            parser->table.count, parser->expected,
                            parser->header_line[2]);
        status = UCS_ERR_INVALID_PARAM;
        goto err_free_line;
    }

    ucs_strncpy_zero(parser->table.origin, name, sizeof(parser->table.origin));
    *table = parser->table;
    free(line);
    free(parser->section_lines);
    free(parser);
    return UCS_OK;

err_free_line:
    free(line);
    free(parser->section_lines);
    psel_resource_table_cleanup(&parser->table);
    free(parser);
    return status;
}

ucs_status_t psel_snapshot_load_path(const char *path,
                                     psel_resource_table_t *table)
{
    ucs_status_t status;
    FILE *stream;

    stream = psel_text_file_open(path, "a snapshot");
    if (stream == NULL) {
        return UCS_ERR_IO_ERROR;
    }

    status = psel_snapshot_load(stream, path, table);
    fclose(stream);
    return status;
}
