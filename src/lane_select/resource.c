/*
 * Resource table: storage, lookup, allow-list filtering, flag names and a
 * `ucx_info -d`-like printer.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "resource_table.h"
#include "text_scan.h"

#include <ucs/debug/log_def.h>
#include <ucs/memory/memory_type.h>
#include <ucs/sys/string.h>
#include <ucs/datastruct/string_buffer.h>
#include <infiniband/verbs.h>
#include <ucs/arch/bitops.h>
#include <ucs/sys/math.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


typedef struct psel_flag_desc {
    unsigned   bit;
    const char *name;
} psel_flag_desc_t;

#define PSEL_IFACE_FLAG(_name, _str) {ucs_ilog2(UCT_IFACE_FLAG_##_name), _str}

/* Names are stable identifiers used in snapshot files: never rename them */
static const psel_flag_desc_t psel_iface_flags[] = {
    PSEL_IFACE_FLAG(AM_SHORT,               "am_short"),
    PSEL_IFACE_FLAG(AM_BCOPY,               "am_bcopy"),
    PSEL_IFACE_FLAG(AM_ZCOPY,               "am_zcopy"),
    PSEL_IFACE_FLAG(PENDING,                "pending"),
    PSEL_IFACE_FLAG(PUT_SHORT,              "put_short"),
    PSEL_IFACE_FLAG(PUT_BCOPY,              "put_bcopy"),
    PSEL_IFACE_FLAG(PUT_ZCOPY,              "put_zcopy"),
    PSEL_IFACE_FLAG(GET_SHORT,              "get_short"),
    PSEL_IFACE_FLAG(GET_BCOPY,              "get_bcopy"),
    PSEL_IFACE_FLAG(GET_ZCOPY,              "get_zcopy"),
    PSEL_IFACE_FLAG(ATOMIC_CPU,             "atomic_cpu"),
    PSEL_IFACE_FLAG(ATOMIC_DEVICE,          "atomic_device"),
    PSEL_IFACE_FLAG(ERRHANDLE_SHORT_BUF,    "errhandle_short_buf"),
    PSEL_IFACE_FLAG(ERRHANDLE_BCOPY_BUF,    "errhandle_bcopy_buf"),
    PSEL_IFACE_FLAG(ERRHANDLE_ZCOPY_BUF,    "errhandle_zcopy_buf"),
    PSEL_IFACE_FLAG(ERRHANDLE_AM_ID,        "errhandle_am_id"),
    PSEL_IFACE_FLAG(ERRHANDLE_REMOTE_MEM,   "errhandle_remote_mem"),
    PSEL_IFACE_FLAG(ERRHANDLE_BCOPY_LEN,    "errhandle_bcopy_len"),
    PSEL_IFACE_FLAG(ERRHANDLE_PEER_FAILURE, "errhandle_peer_failure"),
    PSEL_IFACE_FLAG(EP_CHECK,               "ep_check"),
    PSEL_IFACE_FLAG(CONNECT_TO_IFACE,       "connect_to_iface"),
    PSEL_IFACE_FLAG(CONNECT_TO_EP,          "connect_to_ep"),
    PSEL_IFACE_FLAG(CONNECT_TO_SOCKADDR,    "connect_to_sockaddr"),
    PSEL_IFACE_FLAG(AM_DUP,                 "am_dup"),
    PSEL_IFACE_FLAG(CB_SYNC,                "cb_sync"),
    PSEL_IFACE_FLAG(CB_ASYNC,               "cb_async"),
    PSEL_IFACE_FLAG(EP_KEEPALIVE,           "ep_keepalive"),
#ifdef UCT_IFACE_FLAG_INTER_NODE
    PSEL_IFACE_FLAG(INTER_NODE,             "inter_node"),
#endif
    PSEL_IFACE_FLAG(TAG_EAGER_SHORT,        "tag_eager_short"),
    PSEL_IFACE_FLAG(TAG_EAGER_BCOPY,        "tag_eager_bcopy"),
    PSEL_IFACE_FLAG(TAG_EAGER_ZCOPY,        "tag_eager_zcopy"),
    PSEL_IFACE_FLAG(TAG_RNDV_ZCOPY,         "tag_rndv_zcopy"),
    {0, NULL}
};

#define PSEL_MD_FLAG(_name, _str) {ucs_ilog2(UCT_MD_FLAG_##_name), _str}

static const psel_flag_desc_t psel_md_flags[] = {
    PSEL_MD_FLAG(ALLOC,      "alloc"),
    PSEL_MD_FLAG(REG,        "reg"),
    PSEL_MD_FLAG(NEED_MEMH,  "need_memh"),
    PSEL_MD_FLAG(NEED_RKEY,  "need_rkey"),
    PSEL_MD_FLAG(ADVISE,     "advise"),
    PSEL_MD_FLAG(FIXED,      "fixed"),
    PSEL_MD_FLAG(RKEY_PTR,   "rkey_ptr"),
    PSEL_MD_FLAG(SOCKADDR,   "sockaddr"),
    PSEL_MD_FLAG(INVALIDATE, "invalidate"),
    {0, NULL}
};

static const psel_flag_desc_t psel_atomic_ops[] = {
    {UCT_ATOMIC_OP_ADD,   "add"},
    {UCT_ATOMIC_OP_AND,   "and"},
    {UCT_ATOMIC_OP_OR,    "or"},
    {UCT_ATOMIC_OP_XOR,   "xor"},
    {UCT_ATOMIC_OP_SWAP,  "swap"},
    {UCT_ATOMIC_OP_CSWAP, "cswap"},
    {0, NULL}
};

static const char *psel_device_type_names[] = {
    [UCT_DEVICE_TYPE_NET]  = "net",
    [UCT_DEVICE_TYPE_SHM]  = "shm",
    [UCT_DEVICE_TYPE_ACC]  = "acc",
    [UCT_DEVICE_TYPE_SELF] = "self"
};

/* Labels that `ucx_info -d` prints for each device type */
static const char *psel_device_type_labels[] = {
    [UCT_DEVICE_TYPE_NET]  = "network",
    [UCT_DEVICE_TYPE_SHM]  = "intra-node",
    [UCT_DEVICE_TYPE_ACC]  = "accelerator",
    [UCT_DEVICE_TYPE_SELF] = "loopback"
};


void psel_resource_table_init(psel_resource_table_t *table)
{
    memset(table, 0, sizeof(*table));
}

void psel_resource_table_cleanup(psel_resource_table_t *table)
{
    free(table->resources);
    psel_resource_table_init(table);
}

static int psel_resource_match(const psel_resource_t *resource,
                               const char *tl_name, size_t tl_len,
                               const char *dev_name)
{
    return (strlen(resource->tl_name) == tl_len) &&
           !strncmp(resource->tl_name, tl_name, tl_len) &&
           !strcmp(resource->dev_name, dev_name);
}

ucs_status_t psel_resource_table_append(psel_resource_table_t *table,
                                        const psel_resource_t *resource)
{
    psel_resource_t *resources;
    unsigned i;

    for (i = 0; i < table->count; ++i) {
        if (psel_resource_match(&table->resources[i], resource->tl_name,
                                strlen(resource->tl_name),
                                resource->dev_name)) {
            return UCS_ERR_ALREADY_EXISTS;
        }
    }

    resources = realloc(table->resources,
                        (table->count + 1) * sizeof(*resources));
    if (resources == NULL) {
        ucs_error("failed to grow resource table to %u entries",
                  table->count + 1);
        return UCS_ERR_NO_MEMORY;
    }

    resources[table->count] = *resource;
    table->resources        = resources;
    ++table->count;
    return UCS_OK;
}

const psel_resource_t *
psel_resource_table_find(const psel_resource_table_t *table,
                         const char *tl_dev)
{
    const char *slash = strchr(tl_dev, '/');
    unsigned i;

    if (slash == NULL) {
        return NULL;
    }

    for (i = 0; i < table->count; ++i) {
        if (psel_resource_match(&table->resources[i], tl_dev, slash - tl_dev,
                                slash + 1)) {
            return &table->resources[i];
        }
    }
    return NULL;
}


/* UCX_TLS aliases, as UCX expands them (ucp_context.c); NULL-terminated */
typedef struct psel_tl_alias {
    const char *alias;
    const char *tls[8];
} psel_tl_alias_t;

static const psel_tl_alias_t psel_tl_aliases[] = {
    {"shm",  {"posix", "sysv", "cma", "knem", "xpmem", NULL}},
    {"sm",   {"posix", "sysv", "cma", "knem", "xpmem", NULL}},
    {"mm",   {"posix", "sysv", "xpmem", NULL}},
    {"ib",   {"rc_verbs", "rc_mlx5", "ud_verbs", "ud_mlx5", "dc_mlx5", NULL}},
    {"rc",   {"rc_verbs", "rc_mlx5", NULL}},
    {"ud",   {"ud_verbs", "ud_mlx5", NULL}},
    {"dc",   {"dc_mlx5", NULL}},
    {"rc_v", {"rc_verbs", NULL}},
    {"rc_x", {"rc_mlx5", NULL}},
    {"ud_v", {"ud_verbs", NULL}},
    {"ud_x", {"ud_mlx5", NULL}},
    {"dc_x", {"dc_mlx5", NULL}},
    {NULL,   {NULL}}
};

static int psel_tl_name_matches(const char *tl_name, const char *entry)
{
    const psel_tl_alias_t *alias;
    const char *const *tl;

    if (!strcmp(entry, "all") || !strcmp(entry, tl_name)) {
        return 1;
    }

    for (alias = psel_tl_aliases; alias->alias != NULL; ++alias) {
        if (strcmp(alias->alias, entry)) {
            continue;
        }
        for (tl = alias->tls; *tl != NULL; ++tl) {
            if (!strcmp(*tl, tl_name)) {
                return 1;
            }
        }
    }
    return 0;
}

static int psel_allow_list_check(const ucs_config_allow_list_t *list,
                                 const char *name,
                                 int (*match)(const char*, const char*))
{
    unsigned i;
    int found = 0;

    if ((list == NULL) || (list->mode == UCS_CONFIG_ALLOW_LIST_ALLOW_ALL)) {
        return 1;
    }

    for (i = 0; (i < list->array.count) && !found; ++i) {
        found = match(name, list->array.names[i]);
    }

    return (list->mode == UCS_CONFIG_ALLOW_LIST_NEGATE) ? !found : found;
}

static int psel_dev_name_matches(const char *dev_name, const char *entry)
{
    return !strcmp(entry, "all") || !strcmp(entry, dev_name);
}

int psel_ucx_version_parse(const char *version, unsigned *code)
{
    unsigned major, minor;

    if ((version == NULL) || (sscanf(version, "%u.%u", &major, &minor) != 2) ||
        (minor >= 100) || (major > 100)) {
        return 0;
    }
    *code = major * 100 + minor;
    return 1;
}

/* As psel_ucx_version_parse(); the compiled UCX for NULL, "" or a version
 * that does not parse */
static unsigned psel_ucx_version_code(const char *version)
{
    unsigned code;

    return psel_ucx_version_parse(version, &code) ? code :
           (UCT_VERNO_MAJOR * 100 + UCT_VERNO_MINOR);
}

static int psel_tl_in(const char *tl_name, const char *const *names,
                      unsigned count)
{
    unsigned i;

    for (i = 0; i < count; ++i) {
        if (!strcmp(tl_name, names[i])) {
            return 1;
        }
    }
    return 0;
}

const char *psel_op_class_name(psel_op_class_t op_class)
{
    static const char *names[PSEL_OP_CLASS_LAST] = {"short", "bcopy", "zcopy"};

    return (op_class < PSEL_OP_CLASS_LAST) ? names[op_class] : "?";
}

void psel_resource_op_cost_derive(psel_resource_t *resource,
                                  const char *ucx_version)
{
    static const char *const ib_tls[]    = {"rc", "rc_verbs", "rc_mlx5", "dc",
                                            "dc_mlx5", "ud", "ud_verbs",
                                            "ud_mlx5", "srd", "gga"};
    static const char *const scopy_tls[] = {"cma", "knem"};
    unsigned version = psel_ucx_version_code(ucx_version);
    psel_op_cost_t *cost;
    unsigned op;

    for (op = 0; op < PSEL_OP_CLASS_LAST; ++op) {
        cost = &resource->op_cost[op];
        /* uct_base_iface_estimate_perf (uct_iface.c): the attributes,
         * the same for every operation, nothing after the post */
        cost->latency   = resource->latency.c;
        cost->send_pre  = resource->overhead;
        cost->send_post = 0;
        cost->recv      = resource->overhead;

        if (psel_tl_in(resource->tl_name, ib_tls,
                       sizeof(ib_tls) / sizeof(ib_tls[0])) &&
            (version >= 114)) {
            /* uct_ib_iface_estimate_perf (ib_iface.c, UCX >= 1.14, x86
             * defaults of UCX_IB_SEND_OVERHEAD "bcopy:5ns,cqe:20ns,db:40ns,
             * wqe_fetch:350ns,wqe_post:<iface overhead>"): the doorbell
             * after every post, a completion for zcopy, a send buffer for
             * bcopy, and the HCA's fetch of a WQE that is not inline (bcopy
             * and zcopy; short ones go inline). UCX 1.13 adds none of them. */
            if (op == PSEL_OP_CLASS_BCOPY) {
                cost->send_pre += 5e-9;
            }
            cost->send_post = 40e-9;
            if (op == PSEL_OP_CLASS_ZCOPY) {
                cost->send_post += 20e-9;
            }
            if (op != PSEL_OP_CLASS_SHORT) {
                cost->latency += 350e-9;
            }
        } else if (psel_tl_in(resource->tl_name, scopy_tls,
                              sizeof(scopy_tls) / sizeof(scopy_tls[0])) &&
                   (version >= 116)) {
            /* uct_scopy_iface_estimate_perf (scopy_iface.c, UCX >= 1.16):
             * UCT_SCOPY_IFACE_OVERHEAD 500 ns per operation at each end,
             * not the 2 us the attributes keep for wire compatibility */
            cost->send_pre = 500e-9;
            cost->recv     = 500e-9;
        }
        /* mm (posix, sysv, xpmem; uct_mm_estimate_perf): 10 ns each end,
         * 80 ns latency: its attributes already say so */
    }
    resource->op_cost_source = PSEL_OP_COST_DERIVED;
}

double psel_resource_latency(const psel_resource_t *resource, size_t num_eps)
{
    return ucs_linear_func_apply(resource->latency, (double)num_eps);
}

int psel_resource_tl_allowed(const char *tl_name,
                             const ucs_config_allow_list_t *tls)
{
    return psel_allow_list_check(tls, tl_name, psel_tl_name_matches);
}

/* "tcp,bogus", "^cma": an allow-list as it was given */
static void psel_allow_list_str(const ucs_config_allow_list_t *list,
                                ucs_string_buffer_t *strb)
{
    unsigned i;

    if ((list == NULL) || (list->mode == UCS_CONFIG_ALLOW_LIST_ALLOW_ALL)) {
        ucs_string_buffer_appendf(strb, "all");
        return;
    }
    ucs_string_buffer_appendf(strb, "%s",
                              (list->mode == UCS_CONFIG_ALLOW_LIST_NEGATE) ?
                              "^" : "");
    for (i = 0; i < list->array.count; ++i) {
        ucs_string_buffer_appendf(strb, "%s%s", i ? "," : "",
                                  list->array.names[i]);
    }
}

/* The distinct transport names (@a net 0) or network device names (1) of
 * @a table, ", "-joined */
static void psel_resource_names_str(const psel_resource_table_t *table,
                                    int net, ucs_string_buffer_t *strb)
{
    const char *name, *other;
    unsigned i, j;
    int count = 0;

    for (i = 0; i < table->count; ++i) {
        if (net && (table->resources[i].dev_type != UCT_DEVICE_TYPE_NET)) {
            continue;
        }
        name = net ? table->resources[i].dev_name : table->resources[i].tl_name;
        for (j = 0; j < i; ++j) {
            other = net ? table->resources[j].dev_name :
                          table->resources[j].tl_name;
            if ((!net || (table->resources[j].dev_type ==
                          UCT_DEVICE_TYPE_NET)) && !strcmp(name, other)) {
                break;
            }
        }
        if (j == i) {
            ucs_string_buffer_appendf(strb, "%s%s", count++ ? ", " : "", name);
        }
    }
    if (count == 0) {
        ucs_string_buffer_appendf(strb, "none");
    }
}

/* "this machine" for live resources, else the file they came from */
static const char *psel_resource_table_where(const psel_resource_table_t *table)
{
    return ((table->origin[0] == '\0') || !strcmp(table->origin, "live")) ?
           "this machine" : table->origin;
}

/* Each entry of an allow-list (not a deny-list) that matches nothing in
 * @a table: warn, naming what there is */
static void psel_allow_list_warn_unmatched(const psel_resource_table_t *table,
                                           const ucs_config_allow_list_t *list,
                                           const char *var, int net,
                                           int (*match)(const char*,
                                                        const char*))
{
    UCS_STRING_BUFFER_ONSTACK(names, 512);
    const psel_resource_t *resource;
    unsigned i, r;

    if ((var == NULL) || (list == NULL) ||
        (list->mode != UCS_CONFIG_ALLOW_LIST_ALLOW)) {
        return;
    }
    for (i = 0; i < list->array.count; ++i) {
        for (r = 0; r < table->count; ++r) {
            resource = &table->resources[r];
            if ((!net || (resource->dev_type == UCT_DEVICE_TYPE_NET)) &&
                match(net ? resource->dev_name : resource->tl_name,
                      list->array.names[i])) {
                break;
            }
        }
        if (r == table->count) {
            ucs_string_buffer_reset(&names);
            psel_resource_names_str(table, net, &names);
            ucs_warn("%s: '%s' matches no %s of %s (there are: %s)", var,
                     list->array.names[i], net ? "network device" :
                     "transport", psel_resource_table_where(table),
                     ucs_string_buffer_cstr(&names));
        }
    }
}

ucs_status_t psel_resource_filter_report(psel_resource_table_t *table,
                                         const ucs_config_allow_list_t *tls,
                                         const char *tls_var,
                                         const ucs_config_allow_list_t
                                         *net_devices,
                                         const char *dev_var)
{
    UCS_STRING_BUFFER_ONSTACK(tls_str, 256);
    UCS_STRING_BUFFER_ONSTACK(devs_str, 256);
    UCS_STRING_BUFFER_ONSTACK(tl_names, 512);
    UCS_STRING_BUFFER_ONSTACK(dev_names, 512);
    unsigned before = table->count;

    psel_allow_list_warn_unmatched(table, tls, tls_var, 0,
                                   psel_tl_name_matches);
    psel_allow_list_warn_unmatched(table, net_devices, dev_var, 1,
                                   psel_dev_name_matches);
    if ((before == 0) || (tls_var == NULL) || (dev_var == NULL)) {
        return psel_resource_filter(table, tls, net_devices);
    }
    psel_resource_names_str(table, 0, &tl_names);
    psel_resource_names_str(table, 1, &dev_names);
    psel_resource_filter(table, tls, net_devices);
    if (table->count > 0) {
        return UCS_OK;
    }
    psel_allow_list_str(tls, &tls_str);
    psel_allow_list_str(net_devices, &devs_str);
    ucs_error("%s=%s and %s=%s leave none of the %u resources of %s: its "
              "transports are %s, its network devices %s; name some of them, "
              "or unset the variables", tls_var, ucs_string_buffer_cstr(&tls_str),
              dev_var, ucs_string_buffer_cstr(&devs_str), before,
              psel_resource_table_where(table),
              ucs_string_buffer_cstr(&tl_names),
              ucs_string_buffer_cstr(&dev_names));
    return UCS_ERR_NO_DEVICE;
}

ucs_status_t psel_resource_filter(psel_resource_table_t *table,
                                  const ucs_config_allow_list_t *tls,
                                  const ucs_config_allow_list_t *net_devices)
{
    unsigned i, kept = 0;
    psel_resource_t *resource;

    for (i = 0; i < table->count; ++i) {
        resource = &table->resources[i];
        if (!psel_resource_tl_allowed(resource->tl_name, tls)) {
            ucs_debug("resource %s/%s: transport not allowed",
                      resource->tl_name, resource->dev_name);
            continue;
        }

        if ((resource->dev_type == UCT_DEVICE_TYPE_NET) &&
            !psel_allow_list_check(net_devices, resource->dev_name,
                                   psel_dev_name_matches)) {
            ucs_debug("resource %s/%s: network device not allowed",
                      resource->tl_name, resource->dev_name);
            continue;
        }

        if (kept != i) {
            table->resources[kept] = *resource;
        }
        ++kept;
    }

    table->count = kept;
    return UCS_OK;
}


static const psel_flag_desc_t *psel_flag_descs(psel_flag_set_t set)
{
    switch (set) {
    case PSEL_FLAG_SET_IFACE:
        return psel_iface_flags;
    case PSEL_FLAG_SET_MD:
        return psel_md_flags;
    case PSEL_FLAG_SET_ATOMIC:
        return psel_atomic_ops;
    default:
        return NULL;
    }
}

const char *psel_flag_name(psel_flag_set_t set, unsigned bit)
{
    const psel_flag_desc_t *desc;

    if (set == PSEL_FLAG_SET_MEM_TYPE) {
        return (bit < UCS_MEMORY_TYPE_LAST) ? ucs_memory_type_names[bit] : NULL;
    }

    desc = psel_flag_descs(set);
    for (; (desc != NULL) && (desc->name != NULL); ++desc) {
        if (desc->bit == bit) {
            return desc->name;
        }
    }
    return NULL;
}

int psel_flag_bit(psel_flag_set_t set, const char *name)
{
    unsigned bit;

    for (bit = 0; bit < 64; ++bit) {
        if ((psel_flag_name(set, bit) != NULL) &&
            !strcmp(psel_flag_name(set, bit), name)) {
            return bit;
        }
    }
    return -1;
}

void psel_resource_dev_addr_set(psel_resource_t *resource, const void *addr,
                                size_t length)
{
    const uint8_t *bytes = addr;
    size_t i;

    resource->dev_addr[0] = '\0';
    if ((length == 0) || (length > PSEL_DEV_ADDR_MAX)) {
        return;
    }
    for (i = 0; i < length; ++i) {
        snprintf(&resource->dev_addr[2 * i], 3, "%02x", bytes[i]);
    }
}

int psel_dev_addr_valid(const char *str)
{
    size_t len = strlen(str);

    return (len >= 2) && (len <= 2 * PSEL_DEV_ADDR_MAX) && (len % 2 == 0) &&
           (strspn(str, "0123456789abcdef") == len);
}

const char *psel_size_or_inf_str(size_t value, char *buf, size_t max)
{
    if (value == PSEL_SIZE_UNLIMITED) {
        return "inf";
    }
    snprintf(buf, max, "%zu", value);
    return buf;
}

const char *psel_device_type_name(uct_device_type_t dev_type)
{
    return ((unsigned)dev_type < UCT_DEVICE_TYPE_LAST) ?
           psel_device_type_names[dev_type] : NULL;
}


/* ibv speed code -> nominal per-lane Gb/s x10, signalling Gbaud, encoding */
typedef struct psel_ib_speed {
    unsigned   code;
    const char *name;
    unsigned   nominal_x10;
    double     lane_data_gbps;
} psel_ib_speed_t;

static const psel_ib_speed_t psel_ib_speeds[] = {
    {1,   "SDR",   25,   2.5      * 8.0 / 10.0},
    {2,   "DDR",   50,   5.0      * 8.0 / 10.0},
    {4,   "QDR",   100,  10.0     * 8.0 / 10.0},
    {8,   "FDR10", 100,  10.3125  * 64.0 / 66.0},
    {16,  "FDR",   140,  14.0625  * 64.0 / 66.0},
    {32,  "EDR",   250,  25.78125 * 64.0 / 66.0},
    {64,  "HDR",   500,  50.0},
    {128, "NDR",   1000, 100.0},
    {0,   NULL,    0,    0}
};

static const psel_ib_speed_t *psel_ib_speed_by_x10(unsigned nominal_x10,
                                                   double lane_data_gbps)
{
    const psel_ib_speed_t *speed;

    for (speed = psel_ib_speeds; speed->name != NULL; ++speed) {
        /* FDR10 and QDR share the nominal rate; the data rate tells them apart */
        if ((speed->nominal_x10 == nominal_x10) &&
            ((lane_data_gbps == 0) ||
             (fabs(speed->lane_data_gbps - lane_data_gbps) < 0.01))) {
            return speed;
        }
    }
    return NULL;
}

ucs_status_t psel_ib_port_info_from_attr(const struct ibv_port_attr *attr,
                                         psel_ib_port_info_t *info)
{
    static const unsigned widths[][2] = {{1, 1}, {2, 4}, {4, 8}, {8, 12},
                                         {16, 2}};
    const psel_ib_speed_t *speed;
    unsigned i, width = 0;

    for (i = 0; i < ucs_static_array_size(widths); ++i) {
        if (widths[i][0] == attr->active_width) {
            width = widths[i][1];
        }
    }

    for (speed = psel_ib_speeds; speed->name != NULL; ++speed) {
        if (speed->code == attr->active_speed) {
            break;
        }
    }

    memset(info, 0, sizeof(*info));
    info->valid      = 1;
    info->port_state = attr->state;
    info->link_layer = attr->link_layer;
    info->active_mtu = ((attr->active_mtu >= IBV_MTU_256) &&
                        (attr->active_mtu <= IBV_MTU_4096)) ?
                       (128u << attr->active_mtu) : 0;
    if ((speed->name != NULL) && (width != 0)) {
        info->active_speed = speed->nominal_x10;
        info->active_width = width;
        info->link_rate    = width * speed->lane_data_gbps * 1e9 / 8.0;
    }
    return UCS_OK;
}

const char *psel_ib_port_state_name(int port_state)
{
    static const char *names[] = {"nop", "down", "init", "armed", "active",
                                  "active_defer"};

    return ((port_state >= 0) &&
            (port_state < (int)ucs_static_array_size(names))) ?
           names[port_state] : NULL;
}

const char *psel_ib_link_layer_name(int link_layer)
{
    static const char *names[] = {"unspecified", "infiniband", "ethernet"};

    return ((link_layer >= 0) &&
            (link_layer < (int)ucs_static_array_size(names))) ?
           names[link_layer] : NULL;
}


/* Printing, modelled on ucx_info -d (tools/info/tl_info.c) */

#define PSEL_PRINT_LINE(_stream, _label, _fmt, ...) \
    fprintf(_stream, "#  %19s: " _fmt "\n", _label, ## __VA_ARGS__)

static const char *psel_size_str(size_t value, char *buf, size_t max)
{
    if (value == PSEL_SIZE_UNLIMITED) {
        return "unlimited";
    }
    return ucs_memunits_to_str(value, buf, max);
}

static void psel_print_size_cap(FILE *stream, const char *label, size_t value)
{
    char buf[32];

    if (value == PSEL_SIZE_UNLIMITED) {
        PSEL_PRINT_LINE(stream, label, "unlimited");
    } else {
        PSEL_PRINT_LINE(stream, label, "<= %s",
                        psel_size_str(value, buf, sizeof(buf)));
    }
}

static void psel_print_op(FILE *stream, const char *op,
                          const psel_op_limits_t *limits, uint64_t flags,
                          uint64_t short_flag, uint64_t bcopy_flag,
                          uint64_t zcopy_flag)
{
    char label[32], buf[32];

    if (flags & short_flag) {
        snprintf(label, sizeof(label), "%s_short", op);
        psel_print_size_cap(stream, label, limits->max_short);
    }
    if (flags & bcopy_flag) {
        snprintf(label, sizeof(label), "%s_bcopy", op);
        psel_print_size_cap(stream, label, limits->max_bcopy);
    }
    if (flags & zcopy_flag) {
        snprintf(label, sizeof(label), "%s_zcopy", op);
        PSEL_PRINT_LINE(stream, label, "%s%s, up to %zu iov",
                        (limits->max_zcopy == PSEL_SIZE_UNLIMITED) ? "" : "<= ",
                        psel_size_str(limits->max_zcopy, buf, sizeof(buf)),
                        limits->max_iov);
        snprintf(label, sizeof(label), "%s_opt_zcopy_align", op);
        psel_print_size_cap(stream, label, limits->opt_zcopy_align);
        snprintf(label, sizeof(label), "%s_align_mtu", op);
        psel_print_size_cap(stream, label, limits->align_mtu);
    }
}

static void psel_print_atomics(FILE *stream, const psel_resource_t *resource)
{
    static const struct {
        unsigned   op;
        int        fetch;
        const char *label;
    } atomics[] = {
        {UCT_ATOMIC_OP_ADD,   0, "atomic_add"},
        {UCT_ATOMIC_OP_AND,   0, "atomic_and"},
        {UCT_ATOMIC_OP_OR,    0, "atomic_or"},
        {UCT_ATOMIC_OP_XOR,   0, "atomic_xor"},
        {UCT_ATOMIC_OP_ADD,   1, "atomic_fadd"},
        {UCT_ATOMIC_OP_AND,   1, "atomic_fand"},
        {UCT_ATOMIC_OP_OR,    1, "atomic_for"},
        {UCT_ATOMIC_OP_XOR,   1, "atomic_fxor"},
        {UCT_ATOMIC_OP_SWAP,  1, "atomic_swap"},
        {UCT_ATOMIC_OP_CSWAP, 1, "atomic_cswap"}
    };
    uint64_t bits32, bits64;
    unsigned i;
    int has32, has64;

    if (resource->cap_flags & (UCT_IFACE_FLAG_ATOMIC_CPU |
                               UCT_IFACE_FLAG_ATOMIC_DEVICE)) {
        PSEL_PRINT_LINE(stream, "domain", "%s",
                        (resource->cap_flags & UCT_IFACE_FLAG_ATOMIC_DEVICE) ?
                        "device" : "cpu");
    }

    for (i = 0; i < ucs_static_array_size(atomics); ++i) {
        bits32 = atomics[i].fetch ? resource->atomic32_fops :
                                    resource->atomic32_ops;
        bits64 = atomics[i].fetch ? resource->atomic64_fops :
                                    resource->atomic64_ops;
        has32  = !!(bits32 & UCS_BIT(atomics[i].op));
        has64  = !!(bits64 & UCS_BIT(atomics[i].op));
        if (has32 || has64) {
            PSEL_PRINT_LINE(stream, atomics[i].label, "%s%s%s bit",
                            has32 ? "32" : "", (has32 && has64) ? ", " : "",
                            has64 ? "64" : "");
        }
    }
}

static void psel_print_list(FILE *stream, const char *label, uint64_t flags,
                            const uint64_t *bits, const char **names,
                            unsigned count)
{
    UCS_STRING_BUFFER_ONSTACK(strb, 256);
    unsigned i;

    for (i = 0; i < count; ++i) {
        if (flags & bits[i]) {
            ucs_string_buffer_appendf(&strb, "%s, ", names[i]);
        }
    }
    ucs_string_buffer_rtrim(&strb, ", ");
    PSEL_PRINT_LINE(stream, label, "%s",
                    (ucs_string_buffer_length(&strb) > 0) ?
                    ucs_string_buffer_cstr(&strb) : "none");
}

static void psel_print_ib(FILE *stream, const psel_ib_port_info_t *ib)
{
    const psel_ib_speed_t *speed;
    const char *state = psel_ib_port_state_name(ib->port_state);
    const char *layer = psel_ib_link_layer_name(ib->link_layer);

    PSEL_PRINT_LINE(stream, "ibv port state", "%s", state ? state : "unknown");
    PSEL_PRINT_LINE(stream, "ibv link layer", "%s",
                    (ib->link_layer == IBV_LINK_LAYER_ETHERNET) ? "Ethernet (RoCE)" :
                    (ib->link_layer == IBV_LINK_LAYER_INFINIBAND) ? "InfiniBand" :
                    (layer ? layer : "unknown"));
    PSEL_PRINT_LINE(stream, "ibv active mtu", "%u", ib->active_mtu);
    if (ib->active_width == 0) {
        PSEL_PRINT_LINE(stream, "ibv link rate", "unknown");
        return;
    }

    speed = psel_ib_speed_by_x10(ib->active_speed,
                                 ib->link_rate * 8.0 / 1e9 / ib->active_width);
    PSEL_PRINT_LINE(stream, "ibv link rate",
                    "%ux %s %.1f Gb/s = %.1f Gb/s nominal, %.2f MB/sec data",
                    ib->active_width, speed ? speed->name : "",
                    ib->active_speed / 10.0,
                    ib->active_width * ib->active_speed / 10.0,
                    ib->link_rate / UCS_MBYTE);
}

static void psel_print_resource(FILE *stream, const psel_resource_t *resource)
{
    static const uint64_t conn_bits[] = {UCT_IFACE_FLAG_CONNECT_TO_EP,
                                         UCT_IFACE_FLAG_CONNECT_TO_IFACE,
                                         UCT_IFACE_FLAG_CONNECT_TO_SOCKADDR};
    static const char *conn_names[]   = {"to ep", "to iface", "to sockaddr"};
    static const uint64_t err_bits[]  = {UCT_IFACE_FLAG_ERRHANDLE_SHORT_BUF,
                                         UCT_IFACE_FLAG_ERRHANDLE_BCOPY_BUF,
                                         UCT_IFACE_FLAG_ERRHANDLE_ZCOPY_BUF,
                                         UCT_IFACE_FLAG_ERRHANDLE_AM_ID,
                                         UCT_IFACE_FLAG_ERRHANDLE_REMOTE_MEM,
                                         UCT_IFACE_FLAG_ERRHANDLE_BCOPY_LEN,
                                         UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE,
                                         UCT_IFACE_FLAG_EP_CHECK,
                                         UCT_IFACE_FLAG_EP_KEEPALIVE};
    static const char *err_names[]    = {"short buf", "bcopy buf", "zcopy buf",
                                         "remote am id", "remote access",
                                         "invalid bcopy length", "peer failure",
                                         "ep_check", "keepalive"};
    uint64_t flags = resource->cap_flags;
    const char *type;
    char buf[32];

    type = ((unsigned)resource->dev_type < UCT_DEVICE_TYPE_LAST) ?
           psel_device_type_labels[resource->dev_type] : "unknown";

    fprintf(stream, "#\n");
    fprintf(stream, "#      Transport: %s\n", resource->tl_name);
    fprintf(stream, "#         Device: %s\n", resource->dev_name);
    fprintf(stream, "#           Type: %s\n", type);
    fprintf(stream, "#  System device: %s\n",
            resource->sys_dev[0] ? resource->sys_dev : "<unknown>");
    fprintf(stream, "#\n");
    fprintf(stream, "#      capabilities:\n");
    if (resource->bw_advertised > 0) {
        PSEL_PRINT_LINE(stream, "bandwidth", "%.2f/ppn + %.2f MB/sec "
                        "(timed by protosel; UCT: %.2f MB/sec)",
                        resource->bw_shared / UCS_MBYTE,
                        resource->bw_dedicated / UCS_MBYTE,
                        resource->bw_advertised / UCS_MBYTE);
    } else {
        PSEL_PRINT_LINE(stream, "bandwidth", "%.2f/ppn + %.2f MB/sec",
                        resource->bw_shared / UCS_MBYTE,
                        resource->bw_dedicated / UCS_MBYTE);
    }
    if (resource->latency.m > 0) {
        PSEL_PRINT_LINE(stream, "latency", "%.0f + %.3f * N nsec",
                        resource->latency.c * 1e9, resource->latency.m * 1e9);
    } else {
        PSEL_PRINT_LINE(stream, "latency", "%.0f nsec",
                        resource->latency.c * 1e9);
    }
    PSEL_PRINT_LINE(stream, "overhead", "%.0f nsec", resource->overhead * 1e9);

    psel_print_op(stream, "put", &resource->put, flags,
                  UCT_IFACE_FLAG_PUT_SHORT, UCT_IFACE_FLAG_PUT_BCOPY,
                  UCT_IFACE_FLAG_PUT_ZCOPY);
    psel_print_op(stream, "get", &resource->get, flags,
                  UCT_IFACE_FLAG_GET_SHORT, UCT_IFACE_FLAG_GET_BCOPY,
                  UCT_IFACE_FLAG_GET_ZCOPY);
    psel_print_op(stream, "am", &resource->am, flags,
                  UCT_IFACE_FLAG_AM_SHORT, UCT_IFACE_FLAG_AM_BCOPY,
                  UCT_IFACE_FLAG_AM_ZCOPY);
    if (flags & UCT_IFACE_FLAG_AM_ZCOPY) {
        psel_print_size_cap(stream, "am header", resource->am_max_hdr);
    }
    psel_print_atomics(stream, resource);

    psel_print_list(stream, "connection", flags, conn_bits, conn_names,
                    ucs_static_array_size(conn_bits));
    PSEL_PRINT_LINE(stream, "device priority", "%u", resource->priority);
    PSEL_PRINT_LINE(stream, "device num paths", "%u", resource->dev_num_paths);
    PSEL_PRINT_LINE(stream, "max eps", "%s",
                    psel_size_or_inf_str(resource->max_num_eps, buf,
                                         sizeof(buf)));
    PSEL_PRINT_LINE(stream, "device address", "%zu bytes",
                    resource->device_addr_len);
    PSEL_PRINT_LINE(stream, "iface address", "%zu bytes",
                    resource->iface_addr_len);
    if (resource->ep_addr_len > 0) {
        PSEL_PRINT_LINE(stream, "ep address", "%zu bytes",
                        resource->ep_addr_len);
    }
    psel_print_list(stream, "error handling", flags, err_bits, err_names,
                    ucs_static_array_size(err_bits));
    if (resource->ib.valid) {
        psel_print_ib(stream, &resource->ib);
    }
}

static void psel_print_md(FILE *stream, const psel_resource_t *resource)
{
    UCS_STRING_BUFFER_ONSTACK(strb, 256);
    char buf[32];
    unsigned type;

    fprintf(stream, "#\n");
    fprintf(stream, "# Memory domain: %s\n", resource->md_name);
    fprintf(stream, "#     Component: %s\n", resource->component);
    if (resource->md_flags & UCT_MD_FLAG_ALLOC) {
        PSEL_PRINT_LINE(stream, "allocate", "%s%s",
                        (resource->max_alloc == PSEL_SIZE_UNLIMITED) ? "" : "<= ",
                        psel_size_str(resource->max_alloc, buf, sizeof(buf)));
    }
    if (resource->md_flags & UCT_MD_FLAG_REG) {
        ucs_string_buffer_appendf(&strb, "%s%s, cost: %.0f",
                                  (resource->max_reg == PSEL_SIZE_UNLIMITED) ?
                                  "" : "<= ",
                                  psel_size_str(resource->max_reg, buf,
                                                sizeof(buf)),
                                  resource->reg_cost.c * 1e9);
        if (resource->reg_cost.m > 0) {
            ucs_string_buffer_appendf(&strb, " + %.3f * N",
                                      resource->reg_cost.m * 1e9);
        }
        PSEL_PRINT_LINE(stream, "register", "%s nsec",
                        ucs_string_buffer_cstr(&strb));
    }
    PSEL_PRINT_LINE(stream, "remote key", "%zu bytes", resource->rkey_size);
    if (resource->md_flags & UCT_MD_FLAG_RKEY_PTR) {
        fprintf(stream, "#           rkey_ptr is supported\n");
    }

    for (type = 0; type < UCS_MEMORY_TYPE_LAST; ++type) {
        if (!((resource->reg_mem_types | resource->access_mem_types |
               resource->alloc_mem_types) & UCS_BIT(type))) {
            continue;
        }
        ucs_string_buffer_reset(&strb);
        if (resource->access_mem_types & UCS_BIT(type)) {
            ucs_string_buffer_appendf(&strb, "access,");
        }
        if (resource->reg_mem_types & UCS_BIT(type)) {
            ucs_string_buffer_appendf(&strb, "reg,");
        }
        if (resource->alloc_mem_types & UCS_BIT(type)) {
            ucs_string_buffer_appendf(&strb, "alloc,");
        }
        ucs_string_buffer_rtrim(&strb, ",");
        PSEL_PRINT_LINE(stream, "memory types", "%s (%s)",
                        ucs_memory_type_names[type],
                        ucs_string_buffer_cstr(&strb));
    }
}

static void
psel_resource_table_print_in_c_locale(FILE *stream,
                                      const psel_resource_table_t *table)
{
    unsigned i, j;
    int seen;

    fprintf(stream, "#\n# Resources: %u, origin: %s, UCX %s%s%s\n",
            table->count, table->origin[0] ? table->origin : "<unknown>",
            table->ucx_version[0] ? table->ucx_version : "<unknown>",
            table->host[0] ? ", host: " : "", table->host);

    /* Group by memory domain in order of first appearance */
    for (i = 0; i < table->count; ++i) {
        seen = 0;
        for (j = 0; (j < i) && !seen; ++j) {
            seen = !strcmp(table->resources[j].md_name,
                           table->resources[i].md_name);
        }
        if (seen) {
            continue;
        }

        psel_print_md(stream, &table->resources[i]);
        for (j = i; j < table->count; ++j) {
            if (!strcmp(table->resources[j].md_name,
                        table->resources[i].md_name)) {
                psel_print_resource(stream, &table->resources[j]);
            }
        }
        fprintf(stream, "#\n");
    }
}

/* numbers with '.' whatever LC_NUMERIC the application set */
void psel_resource_table_print(FILE *stream, const psel_resource_table_t *table)
{
    psel_text_locale_t saved = psel_text_c_locale_enter();

    psel_resource_table_print_in_c_locale(stream, table);
    psel_text_c_locale_leave(saved);
}
