/*
 * Live discovery: walk UCT components -> memory domains -> transports/devices,
 * open each iface to query its attributes, and add the libibverbs port facts
 * for IB/RoCE ports.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "resource_table.h"

#include <uct/api/version.h>
#ifdef PSEL_UCT_V2_HEADER
#include PSEL_UCT_V2_HEADER /* installed, or the UCX source tree's (configure) */
#endif
#include <ucs/async/async_fwd.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/string.h>
#include <ucs/sys/topo/base/topo.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static void psel_discover_copy_limits(psel_op_limits_t *dst, size_t max_short,
                                      size_t max_bcopy, size_t min_zcopy,
                                      size_t max_zcopy, size_t opt_zcopy_align,
                                      size_t align_mtu, size_t max_iov)
{
    dst->max_short       = max_short;
    dst->max_bcopy       = max_bcopy;
    dst->min_zcopy       = min_zcopy;
    dst->max_zcopy       = max_zcopy;
    dst->opt_zcopy_align = opt_zcopy_align;
    dst->align_mtu       = align_mtu;
    dst->max_iov         = max_iov;
}

#define PSEL_COPY_LIMITS(_dst, _src) \
    psel_discover_copy_limits(_dst, (_src).max_short, (_src).max_bcopy, \
                              (_src).min_zcopy, (_src).max_zcopy, \
                              (_src).opt_zcopy_align, (_src).align_mtu, \
                              (_src).max_iov)

static void psel_discover_fill_iface(psel_resource_t *resource,
                                     const uct_iface_attr_t *attr)
{
    resource->latency       = attr->latency;
    resource->bw_dedicated  = attr->bandwidth.dedicated;
    resource->bw_shared     = attr->bandwidth.shared;
    resource->overhead      = attr->overhead;
    resource->priority      = attr->priority;
    resource->dev_num_paths = attr->dev_num_paths;
    resource->max_num_eps   = attr->max_num_eps;

    PSEL_COPY_LIMITS(&resource->put, attr->cap.put);
    PSEL_COPY_LIMITS(&resource->get, attr->cap.get);
    PSEL_COPY_LIMITS(&resource->am, attr->cap.am);
    resource->am_max_hdr    = attr->cap.am.max_hdr;

    resource->cap_flags     = attr->cap.flags;
    resource->atomic32_ops  = attr->cap.atomic32.op_flags;
    resource->atomic32_fops = attr->cap.atomic32.fop_flags;
    resource->atomic64_ops  = attr->cap.atomic64.op_flags;
    resource->atomic64_fops = attr->cap.atomic64.fop_flags;

    resource->device_addr_len = attr->device_addr_len;
    resource->iface_addr_len  = attr->iface_addr_len;
    resource->ep_addr_len     = attr->ep_addr_len;
}

#ifdef PSEL_UCT_V2_HEADER
/*
 * UCX's own per-operation estimate of host-memory operations: am_short,
 * am_bcopy and am_zcopy, or put/get for an iface without active messages.
 * Returns 0 (derive with UCX's rules instead) if the iface has none of the
 * operations or the estimate fails.
 */
static int psel_discover_estimate(uct_iface_h iface, const uct_iface_attr_t *attr,
                                  psel_resource_t *resource)
{
    static const struct {
        uint64_t           flag;
        uct_ep_operation_t op;
    } ops[PSEL_OP_CLASS_LAST][3] = {
        [PSEL_OP_CLASS_SHORT] = {{UCT_IFACE_FLAG_AM_SHORT, UCT_EP_OP_AM_SHORT},
                                 {UCT_IFACE_FLAG_PUT_SHORT, UCT_EP_OP_PUT_SHORT},
                                 {UCT_IFACE_FLAG_GET_SHORT, UCT_EP_OP_GET_SHORT}},
        [PSEL_OP_CLASS_BCOPY] = {{UCT_IFACE_FLAG_AM_BCOPY, UCT_EP_OP_AM_BCOPY},
                                 {UCT_IFACE_FLAG_PUT_BCOPY, UCT_EP_OP_PUT_BCOPY},
                                 {UCT_IFACE_FLAG_GET_BCOPY, UCT_EP_OP_GET_BCOPY}},
        [PSEL_OP_CLASS_ZCOPY] = {{UCT_IFACE_FLAG_AM_ZCOPY, UCT_EP_OP_AM_ZCOPY},
                                 {UCT_IFACE_FLAG_GET_ZCOPY, UCT_EP_OP_GET_ZCOPY},
                                 {UCT_IFACE_FLAG_PUT_ZCOPY, UCT_EP_OP_PUT_ZCOPY}}
    };
    psel_op_cost_t costs[PSEL_OP_CLASS_LAST];
    uct_perf_attr_t perf;
    unsigned cls, i, found = 0;

    psel_resource_op_cost_derive(resource, NULL);
    memcpy(costs, resource->op_cost, sizeof(costs));
    for (cls = 0; cls < PSEL_OP_CLASS_LAST; ++cls) {
        for (i = 0; i < 3; ++i) {
            if (attr->cap.flags & ops[cls][i].flag) {
                break;
            }
        }
        if (i == 3) {
            continue; /* no such operation: keep the rule's numbers */
        }
        memset(&perf, 0, sizeof(perf));
        perf.field_mask         = UCT_PERF_ATTR_FIELD_OPERATION |
                                  UCT_PERF_ATTR_FIELD_LOCAL_MEMORY_TYPE |
                                  UCT_PERF_ATTR_FIELD_REMOTE_MEMORY_TYPE |
                                  UCT_PERF_ATTR_FIELD_SEND_PRE_OVERHEAD |
                                  UCT_PERF_ATTR_FIELD_SEND_POST_OVERHEAD |
                                  UCT_PERF_ATTR_FIELD_RECV_OVERHEAD |
                                  UCT_PERF_ATTR_FIELD_LATENCY;
        perf.operation          = ops[cls][i].op;
        perf.local_memory_type  = UCS_MEMORY_TYPE_HOST;
        perf.remote_memory_type = UCS_MEMORY_TYPE_HOST;
        if (uct_iface_estimate_perf(iface, &perf) != UCS_OK) {
            return 0;
        }
        costs[cls].latency   = perf.latency.c;
        costs[cls].send_pre  = perf.send_pre_overhead;
        costs[cls].send_post = perf.send_post_overhead;
        costs[cls].recv      = perf.recv_overhead;
        ++found;
    }
    if (found == 0) {
        return 0;
    }
    memcpy(resource->op_cost, costs, sizeof(costs));
    resource->op_cost_source = PSEL_OP_COST_LIVE;
    return 1;
}
#endif

static void psel_discover_fill_md(psel_resource_t *resource,
                                  const uct_md_attr_t *attr)
{
    resource->reg_cost         = attr->reg_cost;
    resource->rkey_size        = attr->rkey_packed_size;
    resource->md_flags         = attr->cap.flags;
    resource->reg_mem_types    = attr->cap.reg_mem_types;
    resource->access_mem_types = attr->cap.access_mem_types;
    resource->alloc_mem_types  = attr->cap.alloc_mem_types;
    resource->detect_mem_types = attr->cap.detect_mem_types;
    resource->max_reg          = attr->cap.max_reg;
    resource->max_alloc        = attr->cap.max_alloc;
}

/* dev_name is "<ibv device>:<port>", as the UCT ib component names it */
static ucs_status_t psel_discover_ib_port(const char *dev_name,
                                          psel_ib_port_info_t *info)
{
    struct ibv_device **devices;
    struct ibv_context *context;
    struct ibv_port_attr attr;
    char ibv_name[PSEL_NAME_MAX];
    const char *colon;
    ucs_status_t status;
    int i, num_devices, ret;
    long port;
    char *end;

    colon = strrchr(dev_name, ':');
    if ((colon == NULL) || ((size_t)(colon - dev_name) >= sizeof(ibv_name))) {
        return UCS_ERR_INVALID_PARAM;
    }

    port = strtol(colon + 1, &end, 10);
    if ((*end != '\0') || (port < 1) || (port > 255)) {
        return UCS_ERR_INVALID_PARAM;
    }
    memcpy(ibv_name, dev_name, colon - dev_name);
    ibv_name[colon - dev_name] = '\0';

    devices = ibv_get_device_list(&num_devices);
    if (devices == NULL) {
        ucs_debug("ibv_get_device_list() failed: %m");
        return UCS_ERR_NO_DEVICE;
    }

    status = UCS_ERR_NO_DEVICE;
    for (i = 0; i < num_devices; ++i) {
        if (strcmp(ibv_get_device_name(devices[i]), ibv_name)) {
            continue;
        }

        context = ibv_open_device(devices[i]);
        if (context == NULL) {
            ucs_debug("ibv_open_device(%s) failed: %m", ibv_name);
            break;
        }

        ret = ibv_query_port(context, port, &attr);
        if (ret == 0) {
            status = psel_ib_port_info_from_attr(&attr, info);
        } else {
            ucs_debug("ibv_query_port(%s, %ld) failed: %s", ibv_name, port,
                      strerror(ret));
            status = UCS_ERR_IO_ERROR;
        }
        ibv_close_device(context);
        break;
    }

    ibv_free_device_list(devices);
    return status;
}

ucs_status_t psel_uct_iface_open(uct_md_h md, uct_worker_h worker,
                                 const char *tl_name, const char *dev_name,
                                 uct_error_handler_t err_handler,
                                 void *err_arg, uct_iface_h *iface_p)
{
    uct_iface_config_t *iface_config;
    uct_iface_params_t params;
    ucs_status_t status;

    status = uct_md_iface_config_read(md, tl_name, NULL, NULL, &iface_config);
    if (status != UCS_OK) {
        return status;
    }

    memset(&params, 0, sizeof(params));
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE |
                                  UCT_IFACE_PARAM_FIELD_STATS_ROOT |
                                  UCT_IFACE_PARAM_FIELD_RX_HEADROOM |
                                  UCT_IFACE_PARAM_FIELD_CPU_MASK;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = tl_name;
    params.mode.device.dev_name = dev_name;
    params.stats_root           = NULL;
    params.rx_headroom          = 0;
    UCS_CPU_ZERO(&params.cpu_mask);
    if (err_handler != NULL) {
        params.field_mask       |= UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
                                   UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                                   UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
        params.err_handler       = err_handler;
        params.err_handler_arg   = err_arg;
        params.err_handler_flags = 0; /* from progress only */
    }

    status = uct_iface_open(md, worker, &params, iface_config, iface_p);
    uct_config_release(iface_config);
    return status;
}

/* The device address (what a peer's worker address carries of it), which
 * names this device to calibration rails measured against this host */
static void psel_discover_dev_addr(psel_resource_t *resource,
                                   const uct_iface_attr_t *iface_attr,
                                   uct_iface_h iface)
{
    uint8_t addr[PSEL_DEV_ADDR_MAX];

    if ((iface == NULL) || (iface_attr->device_addr_len == 0) ||
        (iface_attr->device_addr_len > sizeof(addr)) ||
        (uct_iface_get_device_address(iface, (uct_device_addr_t*)addr) !=
         UCS_OK)) {
        return;
    }
    psel_resource_dev_addr_set(resource, addr, iface_attr->device_addr_len);
}

void psel_resource_from_uct(psel_resource_t *resource,
                            const char *component_name, const char *md_name,
                            const uct_tl_resource_desc_t *tl,
                            const uct_md_attr_t *md_attr,
                            const uct_iface_attr_t *iface_attr,
                            uct_iface_h iface)
{
    const char *sys_dev_name;
    char bdf[PSEL_NAME_MAX];

    memset(resource, 0, sizeof(*resource));
    ucs_strncpy_zero(resource->component, component_name,
                     sizeof(resource->component));
    ucs_strncpy_zero(resource->md_name, md_name, sizeof(resource->md_name));
    ucs_strncpy_zero(resource->tl_name, tl->tl_name,
                     sizeof(resource->tl_name));
    ucs_strncpy_zero(resource->dev_name, tl->dev_name,
                     sizeof(resource->dev_name));
    resource->dev_type = tl->dev_type;
    if (tl->sys_device != UCS_SYS_DEVICE_ID_UNKNOWN) {
        sys_dev_name = ucs_topo_sys_device_bdf_name(tl->sys_device, bdf,
                                                    sizeof(bdf));
        ucs_strncpy_zero(resource->sys_dev, sys_dev_name ? sys_dev_name : "",
                         sizeof(resource->sys_dev));
    }

    psel_discover_fill_iface(resource, iface_attr);
    psel_discover_fill_md(resource, md_attr);
    psel_discover_dev_addr(resource, iface_attr, iface);
#ifdef PSEL_UCT_V2_HEADER
    if ((iface == NULL) || !psel_discover_estimate(iface, iface_attr, resource))
#endif
    {
        /* the installed UCT's own rules (docs/lane-selection.md, "Per-operation costs") */
        psel_resource_op_cost_derive(resource, NULL);
    }
}

static void psel_discover_tl(uct_md_h md, const uct_md_attr_t *md_attr,
                             const char *component_name, const char *md_name,
                             const uct_tl_resource_desc_t *tl,
                             uct_worker_h worker, psel_resource_table_t *table)
{
    uct_iface_attr_t attr;
    psel_resource_t resource;
    uct_iface_h iface;
    ucs_status_t status;

    status = psel_uct_iface_open(md, worker, tl->tl_name, tl->dev_name,
                                 NULL, NULL,
                                 &iface);
    if (status != UCS_OK) {
        ucs_debug("%s/%s: failed to open iface: %s", tl->tl_name, tl->dev_name,
                  ucs_status_string(status));
        return;
    }

    status = uct_iface_query(iface, &attr);
    if (status != UCS_OK) {
        uct_iface_close(iface);
        ucs_debug("%s/%s: failed to query iface: %s", tl->tl_name,
                  tl->dev_name, ucs_status_string(status));
        return;
    }

    psel_resource_from_uct(&resource, component_name, md_name, tl, md_attr,
                           &attr, iface);
    uct_iface_close(iface);

    if (!strcmp(component_name, "ib") &&
        (tl->dev_type == UCT_DEVICE_TYPE_NET)) {
        status = psel_discover_ib_port(tl->dev_name, &resource.ib);
        if (status != UCS_OK) {
            ucs_debug("%s/%s: no ibverbs port facts: %s", tl->tl_name,
                      tl->dev_name, ucs_status_string(status));
            memset(&resource.ib, 0, sizeof(resource.ib));
        }
    }

    status = psel_resource_table_append(table, &resource);
    if (status != UCS_OK) {
        ucs_debug("%s/%s: not added: %s", tl->tl_name, tl->dev_name,
                  ucs_status_string(status));
    }
}

static void psel_discover_md(uct_component_h component,
                             const char *component_name, const char *md_name,
                             uct_worker_h worker, psel_resource_table_t *table)
{
    uct_tl_resource_desc_t *tls;
    uct_md_config_t *md_config;
    uct_md_attr_t md_attr;
    unsigned i, num_tls;
    ucs_status_t status;
    uct_md_h md;

    status = uct_md_config_read(component, NULL, NULL, &md_config);
    if (status != UCS_OK) {
        ucs_debug("md %s: failed to read config: %s", md_name,
                  ucs_status_string(status));
        return;
    }

    status = uct_md_open(component, md_name, md_config, &md);
    uct_config_release(md_config);
    if (status != UCS_OK) {
        ucs_debug("md %s: failed to open: %s", md_name,
                  ucs_status_string(status));
        return;
    }

    status = uct_md_query(md, &md_attr);
    if (status != UCS_OK) {
        ucs_debug("md %s: failed to query: %s", md_name,
                  ucs_status_string(status));
        goto out_close_md;
    }

    status = uct_md_query_tl_resources(md, &tls, &num_tls);
    if (status != UCS_OK) {
        ucs_debug("md %s: failed to query transports: %s", md_name,
                  ucs_status_string(status));
        goto out_close_md;
    }

    for (i = 0; i < num_tls; ++i) {
        psel_discover_tl(md, &md_attr, component_name, md_name, &tls[i],
                         worker, table);
    }

    uct_release_tl_resource_list(tls);
out_close_md:
    uct_md_close(md);
}

static void psel_discover_component(uct_component_h component,
                                    uct_worker_h worker,
                                    psel_resource_table_t *table)
{
    uct_component_attr_t attr;
    ucs_status_t status;
    unsigned i;

    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                      UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    status = uct_component_query(component, &attr);
    if (status != UCS_OK) {
        ucs_debug("failed to query component: %s", ucs_status_string(status));
        return;
    }

    if (attr.md_resource_count == 0) {
        return;
    }

    attr.md_resources = calloc(attr.md_resource_count,
                               sizeof(*attr.md_resources));
    if (attr.md_resources == NULL) {
        ucs_debug("component %s: out of memory", attr.name);
        return;
    }

    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    status = uct_component_query(component, &attr);
    if (status != UCS_OK) {
        ucs_debug("component %s: failed to query memory domains: %s",
                  attr.name, ucs_status_string(status));
        goto out_free_md_resources;
    }

    for (i = 0; i < attr.md_resource_count; ++i) {
        psel_discover_md(component, attr.name, attr.md_resources[i].md_name,
                         worker, table);
    }

out_free_md_resources:
    free(attr.md_resources);
}

ucs_status_t psel_resource_discover(psel_resource_table_t *table)
{
    psel_resource_table_t result;
    uct_component_h *components;
    ucs_async_context_t *async;
    unsigned i, num_components;
    uct_worker_h worker;
    ucs_status_t status;

    psel_resource_table_init(&result);
    ucs_strncpy_zero(result.origin, "live", sizeof(result.origin));
    ucs_strncpy_zero(result.ucx_version, UCT_VERNO_STRING,
                     sizeof(result.ucx_version));
    if (gethostname(result.host, sizeof(result.host) - 1) != 0) {
        result.host[0] = '\0';
    }

    status = uct_query_components(&components, &num_components);
    if (status != UCS_OK) {
        ucs_error("failed to query UCT components: %s",
                  ucs_status_string(status));
        goto err;
    }

    status = ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &async);
    if (status != UCS_OK) {
        ucs_error("failed to create async context: %s",
                  ucs_status_string(status));
        goto err_release_components;
    }

    status = uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker);
    if (status != UCS_OK) {
        ucs_error("failed to create UCT worker: %s",
                  ucs_status_string(status));
        goto err_destroy_async;
    }

    for (i = 0; i < num_components; ++i) {
        psel_discover_component(components[i], worker, &result);
    }

    uct_worker_destroy(worker);
    ucs_async_context_destroy(async);
    uct_release_component_list(components);
    *table = result;
    return UCS_OK;

err_destroy_async:
    ucs_async_context_destroy(async);
err_release_components:
    uct_release_component_list(components);
err:
    psel_resource_table_cleanup(&result);
    return status;
}
