/**
 * @file resource.h
 * The resource table: one entry per (memory domain, transport, device), with
 * the UCT iface and MD attributes that lane selection and protocol costs need.
 *
 * The same table comes from three sources: the live UCT query (discover.c),
 * a snapshot file (snapshot.c), and imported `ucx_info -d` text
 * (ucx_info_import.c). Everything downstream works on this table only.
 *
 * Units: times in seconds, bandwidths in bytes/second, sizes in bytes, as in
 * UCT. Flags use the installed UCT's UCT_IFACE_FLAG_* / UCT_MD_FLAG_* values in
 * memory; files always carry them by name.
 */
#ifndef PSEL_LANE_SELECT_RESOURCE_H_
#define PSEL_LANE_SELECT_RESOURCE_H_

#include <uct/api/uct.h>
#include <ucs/datastruct/linear_func.h>
#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

#define PSEL_NAME_MAX        64   /**< Max length of any name, with the NUL */
#define PSEL_SIZE_UNLIMITED  SIZE_MAX /**< "unlimited" / "inf" size limit */
#define PSEL_DEV_ADDR_MAX    64   /**< Device address bytes kept (as hex) */
#define PSEL_DEV_ADDR_HEX_MAX (2 * PSEL_DEV_ADDR_MAX + 1) /**< Hex, with the NUL */


/** Limits of one operation class (put, get or am), as in uct_iface_attr.cap. */
typedef struct psel_op_limits {
    size_t max_short;        /**< Max short size; 0 if short is not supported */
    size_t max_bcopy;        /**< Max bcopy size; 0 if not supported */
    size_t min_zcopy;        /**< Min zcopy size */
    size_t max_zcopy;        /**< Max zcopy size; 0 if not supported */
    size_t opt_zcopy_align;  /**< Optimal zcopy buffer alignment */
    size_t align_mtu;        /**< MTU used for alignment */
    size_t max_iov;          /**< Max iov entries for zcopy */
} psel_op_limits_t;


/** Facts that libibverbs reports about an InfiniBand/RoCE port. */
typedef struct psel_ib_port_info {
    int      valid;          /**< Nonzero if the fields below are known */
    int      port_state;     /**< enum ibv_port_state (4 = ACTIVE) */
    int      link_layer;     /**< IBV_LINK_LAYER_INFINIBAND / _ETHERNET */
    unsigned active_mtu;     /**< Active MTU, in bytes */
    unsigned active_speed;   /**< Per-lane signalling rate, Gbit/s x 10 */
    unsigned active_width;   /**< Number of lanes (1, 2, 4, 8, 12) */
    double   link_rate;      /**< Data rate: speed x width, bytes/second */
} psel_ib_port_info_t;


/** Operation classes that UCX's per-operation estimate tells apart. */
typedef enum psel_op_class {
    PSEL_OP_CLASS_SHORT,   /**< put/get/am short: inline, no buffer */
    PSEL_OP_CLASS_BCOPY,   /**< put/get/am bcopy: from a transport buffer */
    PSEL_OP_CLASS_ZCOPY,   /**< put/get/am zcopy: from registered memory */
    PSEL_OP_CLASS_LAST
} psel_op_class_t;


/** What one operation of a class costs, as uct_iface_estimate_perf() (UCT
 *  API v2) reports it. */
typedef struct psel_op_cost {
    double latency;     /**< One-way latency c [s] (the growth stays in
                             psel_resource_t::latency.m) */
    double send_pre;    /**< Sender CPU before the post [s] */
    double send_post;   /**< Sender CPU after the post: doorbell,
                             completion [s] */
    double recv;        /**< Receiver CPU [s] */
} psel_op_cost_t;


/** Where psel_resource_t::op_cost came from. */
typedef enum psel_op_cost_source {
    PSEL_OP_COST_NONE,     /**< Not filled: lane selection derives them with
                                the rules of the UCX protosel is built on */
    PSEL_OP_COST_DERIVED,  /**< UCX's rules applied to the attributes
                                (psel_resource_op_cost_derive()) */
    PSEL_OP_COST_LIVE      /**< uct_iface_estimate_perf() of the live iface */
} psel_op_cost_source_t;


/** One resource: a transport on a device, with its MD's attributes. */
typedef struct psel_resource {
    char                component[PSEL_NAME_MAX]; /**< UCT component, e.g. "ib" */
    char                md_name[PSEL_NAME_MAX];   /**< Memory domain, e.g. "mlx5_0" */
    char                tl_name[PSEL_NAME_MAX];   /**< Transport, e.g. "rc_mlx5" */
    char                dev_name[PSEL_NAME_MAX];  /**< Device, e.g. "mlx5_0:1" */
    uct_device_type_t   dev_type;                 /**< net / shm / acc / self */
    char                sys_dev[PSEL_NAME_MAX];   /**< System device (BDF), "" if unknown */

    /* iface performance */
    ucs_linear_func_t   latency;      /**< c [s] + m [s] per connected ep */
    double              bw_dedicated; /**< Dedicated bandwidth [B/s] */
    double              bw_shared;    /**< Shared bandwidth [B/s], split by ppn */
    double              overhead;     /**< Send overhead [s] */
    unsigned            priority;     /**< Device priority */
    unsigned            dev_num_paths;/**< Paths to the same peer over the device */
    size_t              max_num_eps;  /**< Max endpoints, PSEL_SIZE_UNLIMITED = inf */

    /* per-operation limits */
    psel_op_limits_t    put;
    psel_op_limits_t    get;
    psel_op_limits_t    am;
    size_t              am_max_hdr;   /**< Max AM zcopy header size */

    uint64_t            cap_flags;    /**< UCT_IFACE_FLAG_* (incl. connection
                                           modes and error handling) */
    uint64_t            atomic32_ops; /**< Bitmap of UCT_ATOMIC_OP_* (non-fetch) */
    uint64_t            atomic32_fops;/**< Bitmap of UCT_ATOMIC_OP_* (fetch) */
    uint64_t            atomic64_ops;
    uint64_t            atomic64_fops;

    size_t              device_addr_len; /**< Bytes of device address */
    char                dev_addr[PSEL_DEV_ADDR_HEX_MAX]; /**< The UCT device
                                         address itself, lowercase hex (tcp:
                                         flags, family, IP), when known: live
                                         discovery, a peer's worker address
                                         and snapshots of those; "" from
                                         `ucx_info -d` or when longer than
                                         PSEL_DEV_ADDR_MAX. Identifies the
                                         peer device a measured rail was
                                         measured against (calib.h) */
    size_t              iface_addr_len;  /**< Bytes of iface address */
    size_t              ep_addr_len;     /**< Bytes of ep address (0 if none) */

    /* memory domain */
    ucs_linear_func_t   reg_cost;      /**< Registration cost: c [s] + m [s/B] */
    size_t              rkey_size;     /**< Packed rkey size */
    uint64_t            md_flags;      /**< UCT_MD_FLAG_* */
    uint64_t            reg_mem_types; /**< Bitmap of ucs_memory_type_t */
    uint64_t            access_mem_types; /**< Memory types it can access */
    uint64_t            alloc_mem_types;
    uint64_t            detect_mem_types; /**< Memory types the MD detects
                                               from a pointer */
    size_t              max_reg;       /**< Max registration size */
    size_t              max_alloc;     /**< Max allocation size */

    psel_ib_port_info_t ib;            /**< libibverbs facts, when valid */

    /* per-operation costs (UCT API v2) */
    psel_op_cost_t      op_cost[PSEL_OP_CLASS_LAST]; /**< By operation class */
    psel_op_cost_source_t op_cost_source; /**< Live estimate or derived */

    double              bw_advertised; /**< UCT's bandwidth (dedicated +
                                            shared) when bw_dedicated holds
                                            this host's timed copies
                                            (copy_probe.h), else 0 */
} psel_resource_t;


/** A resource table and where it came from. */
typedef struct psel_resource_table {
    unsigned         count;                   /**< Number of resources */
    psel_resource_t *resources;               /**< Array of @a count entries */
    char             origin[256];             /**< "live", snapshot or import path */
    char             ucx_version[PSEL_NAME_MAX]; /**< UCX version of the source */
    char             host[PSEL_NAME_MAX];     /**< Host name of the source, if known */
    double           copy_bw;                 /**< The host's memcpy bandwidth
                                                   as timed (copy_probe.h)
                                                   [B/s], 0 if not timed */
} psel_resource_table_t;

#endif
