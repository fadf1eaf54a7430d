/*
 * Endpoints: from a peer's address to connected lanes and selection tables.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "core_int.h"

#include <lane_select/reachability.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/string.h>
#include <stdlib.h>
#include <string.h>

/* Live reachability: same transport, and UCT says the iface reaches the
 * peer's device and iface addresses. */
static int psel_ep_is_reachable(void *arg, unsigned local, unsigned remote)
{
    psel_ep_h ep                      = arg;
    const psel_worker_iface_t *wif    = &ep->worker->ifaces[local];
    const psel_address_entry_t *entry = &ep->address.entries[remote];

    return !strcmp(ep->worker->local.resources[local].tl_name,
                   entry->tl_name) &&
           uct_iface_is_reachable(wif->iface,
                                  (const uct_device_addr_t*)entry->dev_addr,
                                  (const uct_iface_addr_t*)entry->iface_addr);
}

static ucs_status_t psel_ep_connect_lanes(psel_ep_h ep)
{
    const psel_ep_lanes_t *lanes = &ep->config.lanes;
    const psel_address_entry_t *entry;
    uct_ep_params_t params;
    ucs_status_t status;
    unsigned i;

    for (i = 0; i < lanes->num_lanes; ++i) {
        entry             = &ep->address.entries[lanes->info[i].remote];
        params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                            UCT_EP_PARAM_FIELD_DEV_ADDR |
                            UCT_EP_PARAM_FIELD_IFACE_ADDR;
        params.iface      = ep->worker->ifaces[lanes->info[i].local].iface;
        ep->lane_mds[i]   = ep->worker->mds[
                ep->worker->ifaces[lanes->info[i].local].md_index];
        params.dev_addr   = (const uct_device_addr_t*)entry->dev_addr;
        params.iface_addr = (const uct_iface_addr_t*)entry->iface_addr;
        psel_worker_iface_activate(ep->worker,
                                   &ep->worker->ifaces[lanes->info[i].local]);
        status            = uct_ep_create(&params, &ep->uct_eps[i]);
        if (status != UCS_OK) {
            ucs_error("endpoint: lane %u (%s) failed to connect: %s", i,
                      lanes->lanes[i].name, ucs_status_string(status));
            while (i-- > 0) {
                uct_ep_destroy(ep->uct_eps[i]);
            }
            return status;
        }
    }
    return UCS_OK;
}

ucs_status_t psel_ep_create(psel_worker_h worker, const void *address,
                            size_t length, psel_ep_h *ep_p)
{
    psel_ep_params_t params;
    psel_resource_t rsc;
    ucs_status_t status;
    psel_ep_h ep;
    unsigned i;

    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ep->worker = worker;
    ep->id     = worker->uuid + (++worker->next_ep_id);
    psel_resource_table_init(&ep->remote);

    status = psel_address_unpack(address, length, &ep->address);
    if (status != UCS_OK) {
        goto err_free;
    }
    for (i = 0; i < ep->address.count; ++i) {
        psel_address_entry_to_resource(&ep->address.entries[i], &rsc);
        status = psel_resource_table_append(&ep->remote, &rsc);
        if (status != UCS_OK) {
            goto err_release_address;
        }
    }
    ucs_strncpy_zero(ep->remote.origin, "peer address",
                     sizeof(ep->remote.origin));

    /* only protocols the data path can run are weighed */
    memset(&params, 0, sizeof(params));
    params.features      = PSEL_FEATURE_TAG;
    params.local         = &worker->local;
    params.remote        = &ep->remote;
    params.locality      = PSEL_PEER_SAME_HOST;
    params.is_reachable  = psel_ep_is_reachable;
    params.reachable_arg = ep;
    params.runnable_only = 1;
    params.config        = &worker->context->config;
    status = psel_ep_config_init(&ep->config, &params);
    if (status != UCS_OK) {
        goto err_release_address;
    }

    status = psel_ep_connect_lanes(ep);
    if (status != UCS_OK) {
        goto err_cleanup_config;
    }

    *ep_p = ep;
    return UCS_OK;

err_cleanup_config:
    psel_ep_config_cleanup(&ep->config);
err_release_address:
    psel_address_release(&ep->address);
err_free:
    psel_resource_table_cleanup(&ep->remote);
    free(ep);
    return status;
}

void psel_ep_destroy(psel_ep_h ep)
{
    psel_request_t *req, *tmp;
    unsigned i;

    ucs_list_for_each_safe(req, tmp, &ep->worker->pending, list) {
        if (req->ep == ep) {
            ucs_list_del(&req->list);
            psel_request_complete(req, UCS_ERR_CANCELED);
        }
    }
    for (i = 0; i < ep->config.lanes.num_lanes; ++i) {
        uct_ep_destroy(ep->uct_eps[i]);
    }
    psel_ep_config_cleanup(&ep->config);
    psel_address_release(&ep->address);
    psel_resource_table_cleanup(&ep->remote);
    free(ep);
}
