/**
 * @file resource_table.h
 * Operations on the resource table of resource.h: building and freeing it,
 * lookup by "tl/dev", UCX-style allow-list filtering, `ucx_info -d`-like
 * printing, flag names shared by the printers and file formats, live
 * discovery through UCT, and the libibverbs port facts.
 */
#ifndef PSEL_LANE_SELECT_RESOURCE_TABLE_H_
#define PSEL_LANE_SELECT_RESOURCE_TABLE_H_

#include "resource.h"

#include <ucs/config/types.h>
#include <stdio.h>

struct ibv_port_attr;


/** A set of named bits, used to print flags and to read them back by name. */
typedef enum psel_flag_set {
    PSEL_FLAG_SET_IFACE,     /**< UCT_IFACE_FLAG_* (psel_resource_t::cap_flags) */
    PSEL_FLAG_SET_MD,        /**< UCT_MD_FLAG_* (psel_resource_t::md_flags) */
    PSEL_FLAG_SET_ATOMIC,    /**< Bits (1 << UCT_ATOMIC_OP_*) */
    PSEL_FLAG_SET_MEM_TYPE,  /**< Bits (1 << UCS_MEMORY_TYPE_*) */
    PSEL_FLAG_SET_LAST
} psel_flag_set_t;


/**
 * Initialize an empty resource table.
 *
 * @param [out] table   Table to initialize.
 */
void psel_resource_table_init(psel_resource_table_t *table);


/**
 * Release the resources array and leave the table empty (as after init).
 *
 * @param [inout] table   Table to clean up.
 */
void psel_resource_table_cleanup(psel_resource_table_t *table);


/**
 * Append a copy of a resource to the table.
 *
 * @param [inout] table     Table to append to.
 * @param [in]    resource  Resource to copy.
 *
 * @return UCS_OK; UCS_ERR_ALREADY_EXISTS if the table already has a resource
 *         with the same tl_name/dev_name; UCS_ERR_NO_MEMORY.
 */
ucs_status_t psel_resource_table_append(psel_resource_table_t *table,
                                        const psel_resource_t *resource);


/**
 * Find a resource by its "tl/dev" name, e.g. "tcp/lo" or "rc_mlx5/mlx5_0:1".
 *
 * @param [in] table    Table to search.
 * @param [in] tl_dev   "tl_name/dev_name".
 *
 * @return The resource, or NULL if there is none.
 */
const psel_resource_t *
psel_resource_table_find(const psel_resource_table_t *table,
                         const char *tl_dev);


/**
 * Latency of a resource's transport with @a num_eps connected endpoints:
 * latency.c + latency.m * num_eps. Some transports' latency grows with the
 * number of endpoints (`ucx_info -d` prints "600 + 1.000 * N nsec", UCX 1.6
 * "600 nsec + 1 * N"; rc_mlx5/rc_verbs add 1 ns per QP). UCX evaluates the
 * line at its estimated number of endpoints, `UCX_NUM_EPS` or
 * `ucp_params.estimated_num_eps`, 1 when unset (`ucp_tl_iface_latency()` in
 * ucp/core/ucp_context.h, used by ucp/wireup/select.c).
 *
 * @param [in] resource  Resource.
 * @param [in] num_eps   Number of endpoints (1 for one peer).
 *
 * @return Latency in seconds.
 */
double psel_resource_latency(const psel_resource_t *resource, size_t num_eps);


/**
 * Derive the per-operation costs of a resource from its attributes with the
 * rules of UCX's own estimates (uct_iface_estimate_perf) of the UCX version
 * that printed them; the rules, each with the UCX function that applies it,
 * are in docs/lane-selection.md ("Per-operation costs"). Sets
 * op_cost[] and op_cost_source = PSEL_OP_COST_DERIVED.
 *
 * @param [inout] resource     Resource with its attributes filled.
 * @param [in]    ucx_version  "1.16.0", "1.6"...; NULL or "" for the UCX
 *                             protosel is built against.
 */
void psel_resource_op_cost_derive(psel_resource_t *resource,
                                  const char *ucx_version);


/** @return Name of an operation class: "short", "bcopy" or "zcopy". */
const char *psel_op_class_name(psel_op_class_t op_class);


/**
 * Check whether a transport name passes a UCX_TLS-style allow-list, with the
 * UCX aliases expanded: "shm"/"sm" (posix, sysv, cma, knem, xpmem), "mm"
 * (posix, sysv, xpmem), "ib" (rc/ud verbs/mlx5, dc_mlx5), "rc" (rc_verbs,
 * rc_mlx5), "ud" (ud_verbs, ud_mlx5), "dc" (dc_mlx5), "rc_v", "rc_x", "ud_v",
 * "ud_x", "dc_x" and "all".
 *
 * @param [in] tl_name  Transport name.
 * @param [in] tls      Allow-list; NULL allows everything.
 *
 * @return Nonzero if the transport is allowed.
 */
int psel_resource_tl_allowed(const char *tl_name,
                             const ucs_config_allow_list_t *tls);


/**
 * Remove from the table every resource that the allow-lists forbid, keeping
 * the order of the others. Device names are matched exactly ("mlx5_0:1");
 * only network devices are subject to @a net_devices, as in UCX: self,
 * shared memory and accelerator devices are never filtered by it.
 *
 * @param [inout] table        Table to filter in place.
 * @param [in]    tls          Transport allow-list (UCX_TLS syntax), or NULL.
 * @param [in]    net_devices  Network device allow-list, or NULL.
 *
 * @return UCS_OK.
 */
ucs_status_t psel_resource_filter(psel_resource_table_t *table,
                                  const ucs_config_allow_list_t *tls,
                                  const ucs_config_allow_list_t *net_devices);


/**
 * Parse a UCX version ("1.16.0", "1.13") as major * 100 + minor (116).
 *
 * @param [in]  version  The version text, may be NULL.
 * @param [out] code     Set on success only.
 *
 * @return 1 if it parses, else 0.
 */
int psel_ucx_version_parse(const char *version, unsigned *code);


/**
 * psel_resource_filter() for allow-lists a user set in the variables
 * @a tls_var and @a dev_var ("UCX_PSEL_TLS", "UCX_PSEL_NET_DEVICES"): an
 * entry of an allow-list (not a deny-list) that matches no transport or
 * network device of the table is warned about, naming those there are;
 * when the lists leave nothing of a table that had resources, an error
 * names both lists and what there is.
 *
 * @return UCS_OK, or UCS_ERR_NO_DEVICE when nothing is left.
 */
ucs_status_t psel_resource_filter_report(psel_resource_table_t *table,
                                         const ucs_config_allow_list_t *tls,
                                         const char *tls_var,
                                         const ucs_config_allow_list_t
                                         *net_devices,
                                         const char *dev_var);


/**
 * Print the table like `ucx_info -d`: grouped by memory domain, with the
 * same labels, plus the ibverbs port facts for InfiniBand/RoCE ports.
 *
 * @param [in] stream   Where to print.
 * @param [in] table    Table to print.
 */
void psel_resource_table_print(FILE *stream, const psel_resource_table_t *table);


/**
 * @return The name of bit @a bit in @a set ("am_short", "reg", "add",
 *         "host"...), or NULL if the installed UCX defines no such bit.
 */
const char *psel_flag_name(psel_flag_set_t set, unsigned bit);


/**
 * @return The bit number named @a name in @a set, or -1 if unknown.
 */
int psel_flag_bit(psel_flag_set_t set, const char *name);


/**
 * Set a resource's device address (psel_resource_t::dev_addr) from UCT's
 * bytes: lowercase hex, or "" when @a length is 0 or above
 * PSEL_DEV_ADDR_MAX.
 */
void psel_resource_dev_addr_set(psel_resource_t *resource, const void *addr,
                                size_t length);

/**
 * @return Nonzero if @a str is a device address as psel_resource_t::dev_addr
 *         holds it: 2 to 2 x PSEL_DEV_ADDR_MAX lowercase hex digits, even.
 */
int psel_dev_addr_valid(const char *str);

/**
 * A size limit as the printers and dumps show it: "inf" for
 * PSEL_SIZE_UNLIMITED (SIZE_MAX), else the decimal number.
 *
 * @param [in]  value  The size.
 * @param [out] buf    Where the number is written (not used for "inf").
 * @param [in]  max    Size of @a buf.
 *
 * @return "inf" or @a buf.
 */
const char *psel_size_or_inf_str(size_t value, char *buf, size_t max);

/**
 * @return The name of a device type: "net", "shm", "acc" or "self"; NULL if
 *         out of range.
 */
const char *psel_device_type_name(uct_device_type_t dev_type);


/**
 * Fill an ibverbs port description from what ibv_query_port returned. Pure
 * function, so it is testable without RDMA hardware.
 *
 * active_speed is the nominal per-lane rate x10 as ibstat prints it (SDR 25,
 * DDR 50, QDR 100, FDR10 100, FDR 140, EDR 250, HDR 500, NDR 1000). link_rate
 * is the data rate after line encoding, in bytes/s: SDR/DDR/QDR signal at
 * 2.5/5/10 Gbaud with 8b/10b; FDR10/FDR/EDR at 10.3125/14.0625/25.78125 Gbaud
 * with 64b/66b; HDR/NDR use their nominal 50/100 Gb/s per lane, which is
 * already the data rate. So FDR 4x is "56 Gb/s" nominal but
 * 4 x 14.0625 x 64/66 = 54.55 Gb/s of data; HDR 4x is 200 Gb/s.
 * Unknown speed or width codes give active_speed/active_width 0 and
 * link_rate 0; unknown MTU codes give active_mtu 0.
 *
 * @param [in]  attr   Port attributes.
 * @param [out] info   Filled, with valid = 1.
 *
 * @return UCS_OK.
 */
ucs_status_t psel_ib_port_info_from_attr(const struct ibv_port_attr *attr,
                                         psel_ib_port_info_t *info);


/**
 * @return Name of an enum ibv_port_state value ("down", "active"...), or NULL.
 */
const char *psel_ib_port_state_name(int port_state);


/**
 * @return Name of an IBV_LINK_LAYER_* value ("infiniband", "ethernet",
 *         "unspecified"), or NULL.
 */
const char *psel_ib_link_layer_name(int link_layer);


/**
 * Discover the resources of this machine through the UCT API: every
 * component, memory domain, transport and device. Each iface is opened and
 * queried; resources that fail to open are skipped with a debug message.
 * IB ports get their libibverbs facts.
 *
 * @param [out] table   Filled on success (need not be initialized).
 *
 * @return UCS_OK, or an error if UCT itself cannot be queried.
 */
ucs_status_t psel_resource_discover(psel_resource_table_t *table);

/**
 * Fill a resource from attributes queried elsewhere (stock UCP's context
 * and worker, for libprotosel_ucx.so), as discovery fills it, without the
 * libibverbs port facts; per-operation costs from the iface's own estimate
 * when it has one (UCT v2), else the installed UCT's rules.
 *
 * @param [out] resource        Resource to fill (zeroed first).
 * @param [in]  component_name  UCT component, e.g. "ib".
 * @param [in]  md_name         Memory domain name.
 * @param [in]  tl              Transport and device.
 * @param [in]  md_attr         The memory domain's attributes.
 * @param [in]  iface_attr      The iface's attributes.
 * @param [in]  iface           The open iface, or NULL.
 */
void psel_resource_from_uct(psel_resource_t *resource,
                            const char *component_name, const char *md_name,
                            const uct_tl_resource_desc_t *tl,
                            const uct_md_attr_t *md_attr,
                            const uct_iface_attr_t *iface_attr,
                            uct_iface_h iface);

/**
 * Open a UCT iface for a transport on a device, with default configuration
 * (discovery and the data path open their ifaces the same way).
 *
 * @param [in]  md        Memory domain of the transport.
 * @param [in]  worker    UCT worker.
 * @param [in]  tl_name   Transport name.
 * @param [in]  dev_name  Device name.
 * @param [in]  err_handler  Called (from progress) when an endpoint of the
 *                           iface fails, e.g. its peer died; or NULL.
 * @param [in]  err_arg   Argument of @a err_handler.
 * @param [out] iface_p   The iface.
 */
ucs_status_t psel_uct_iface_open(uct_md_h md, uct_worker_h worker,
                                 const char *tl_name, const char *dev_name,
                                 uct_error_handler_t err_handler,
                                 void *err_arg, uct_iface_h *iface_p);

#endif
