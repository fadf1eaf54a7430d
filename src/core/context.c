/*
 * Context: the configuration, the measured cost lines
 * (UCX_PSEL_CALIBRATION) and this machine's resources.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "core_int.h"

#include <stdlib.h>

ucs_status_t psel_context_create(psel_context_h *context_p)
{
    psel_context_h context;
    ucs_status_t status;

    context = calloc(1, sizeof(*context));
    if (context == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    status = psel_config_read(&context->config);
    if (status != UCS_OK) {
        goto err_free;
    }

    status = psel_config_calibration_load(&context->config, &context->calib);
    if (status != UCS_OK) {
        goto err_release_config;
    }

    status = psel_resource_discover(&context->resources);
    if (status != UCS_OK) {
        goto err_release_calib;
    }
    status = psel_resource_filter_report(&context->resources,
                                         &context->config.tls, "UCX_PSEL_TLS",
                                         &context->config.net_devices,
                                         "UCX_PSEL_NET_DEVICES");
    if (status != UCS_OK) {
        goto err_cleanup_resources;
    }
    /* after the filter: tcp over loopback is timed only without shared
     * memory among the transports in use (copy_probe.h) */
    psel_config_measure_copies(&context->config);
    psel_config_apply_copies(&context->config, &context->resources);

    *context_p = context;
    return UCS_OK;

err_cleanup_resources:
    psel_resource_table_cleanup(&context->resources);
err_release_calib:
    psel_config_calibration_release(context->calib);
err_release_config:
    psel_config_release(&context->config);
err_free:
    free(context);
    return status;
}

void psel_context_set_num_eps(psel_context_h context, size_t num_eps)
{
    context->est_num_eps = num_eps;
}

void psel_context_destroy(psel_context_h context)
{
    psel_resource_table_cleanup(&context->resources);
    psel_config_calibration_release(context->calib);
    psel_config_release(&context->config);
    free(context);
}
