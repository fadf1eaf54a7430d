/*
 * The UCP path of a run (PT_PATH_UCP, perftest_run.h): stock UCP's
 * context, worker and endpoint, and the tag_lat / tag_bw loops of
 * perftest_kernels.inc over ucp_tag_send_nbx / ucp_tag_recv_nbx, as
 * ucx_perftest runs them: tag_bw sends with UCP_OP_ATTR_FLAG_MULTI_SEND (so
 * UCP selects on its streaming cost lines), tag_lat without (single).
 * UCP reads its UCX_* settings from the environment at each connect, so a
 * calibration session's settings (perftest_settings.h) choose what it runs.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest_run.h"
#include "tool_diag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PT_UCP_CLOSE_TIMEOUT  5.0   /* [s] a flushed close, at most */


/* ---------------------------------------------------------------------- */
/* Context, worker, endpoint                                              */
/* ---------------------------------------------------------------------- */

static void pt_ucp_progress_cb(void *arg)
{
    ucp_worker_progress((ucp_worker_h)arg);
}

ucs_status_t pt_ucp_setup_local(pt_run_t *run, void **address, size_t *len,
                                char *reason)
{
    ucp_worker_params_t worker_params;
    ucp_params_t params;
    unsigned mark = psel_tool_diag_mark();
    ucp_config_t *config;
    ucp_address_t *ucp_address;
    size_t address_len;
    ucs_status_t status;

    status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        pt_setup_reason(run, reason, "read UCP's configuration", status,
                        mark);
        return status;
    }
    params.field_mask        = UCP_PARAM_FIELD_FEATURES |
                               UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
    params.features          = UCP_FEATURE_TAG;
    params.estimated_num_eps = 1;
    status = ucp_init(&params, config, &run->ucp_context);
    ucp_config_release(config);
    if (status != UCS_OK) {
        run->ucp_context = NULL;
        pt_setup_reason(run, reason, "create the UCP context", status,
                        mark);
        return status;
    }

    worker_params.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
    status = ucp_worker_create(run->ucp_context, &worker_params,
                               &run->ucp_worker);
    if (status != UCS_OK) {
        run->ucp_worker = NULL;
        pt_setup_reason(run, reason, "create the UCP worker", status,
                        mark);
        return status;
    }
    run->oob.progress     = pt_ucp_progress_cb;
    run->oob.progress_arg = run->ucp_worker;

    status = ucp_worker_get_address(run->ucp_worker, &ucp_address,
                                    &address_len);
    if (status != UCS_OK) {
        pt_setup_reason(run, reason, "get the UCP worker address", status,
                        mark);
        return status;
    }
    /* the caller frees it with free() */
    *address = malloc(address_len);
    if (*address == NULL) {
        ucp_worker_release_address(run->ucp_worker, ucp_address);
        pt_setup_reason(run, reason, "copy the UCP worker address",
                        UCS_ERR_NO_MEMORY, mark);
        return UCS_ERR_NO_MEMORY;
    }
    memcpy(*address, ucp_address, address_len);
    *len = address_len;
    ucp_worker_release_address(run->ucp_worker, ucp_address);
    return UCS_OK;
}

ucs_status_t pt_ucp_ep_create(pt_run_t *run, const void *address, size_t len,
                              char *reason)
{
    unsigned mark = psel_tool_diag_mark();
    ucp_ep_params_t params;
    ucs_status_t status;

    /* no error handling, as ucx_perftest and MPI: the endpoint
     * configuration (and its protocols) an application gets */
    params.field_mask      = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    params.address         = (const ucp_address_t*)address;
    status = ucp_ep_create(run->ucp_worker, &params, &run->ucp_ep);
    if (status != UCS_OK) {
        run->ucp_ep = NULL;
        pt_setup_reason(run, reason, "connect to the peer's UCP worker "
                        "address", status, mark);
    }
    (void)len;
    return status;
}

void pt_ucp_disconnect(pt_run_t *run, int orderly)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    double deadline;
    void *req;

    if (run->ucp_ep != NULL) {
        /* flushed: the peer's last messages are not cut short (a forced
         * close needs error handling, which would change the endpoint) */
        req      = ucp_ep_close_nbx(run->ucp_ep, &param);
        deadline = psel_oob_time() + PT_UCP_CLOSE_TIMEOUT;
        if (UCS_PTR_IS_PTR(req)) {
            while ((ucp_request_check_status(req) == UCS_INPROGRESS) &&
                   (psel_oob_time() < deadline)) {
                ucp_worker_progress(run->ucp_worker);
            }
            ucp_request_free(req);
        }
        run->ucp_ep = NULL;
        /* both sides closed before either destroys its worker, which
         * would reset the other's connections */
        if (orderly && (run->oob.fd >= 0)) {
            (void)psel_oob_barrier(&run->oob);
        }
    }
    if (run->ucp_worker != NULL) {
        ucp_worker_destroy(run->ucp_worker);
        run->ucp_worker = NULL;
    }
    if (run->ucp_context != NULL) {
        ucp_cleanup(run->ucp_context);
        run->ucp_context = NULL;
    }
}


/* ---------------------------------------------------------------------- */
/* The loops (perftest_kernels.inc)                                       */
/* ---------------------------------------------------------------------- */

static void pt_ucp_send_cb(void *req, ucs_status_t status, void *arg)
{
    ucp_request_free(req);
    pt_send_done(arg, status);
}

static void pt_ucp_recv_cb(void *req, ucs_status_t status,
                           const ucp_tag_recv_info_t *info, void *arg)
{
    ucp_request_free(req);
    pt_recv_done(arg, status, info->length);
}

static inline ucs_status_t pt_ucp_send(pt_run_t *run, void *buf, size_t len,
                                       uint64_t tag)
{
    ucp_request_param_t param;

    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                         UCP_OP_ATTR_FIELD_USER_DATA;
    if (run->params.test == PT_TEST_TAG_BW) {
        param.op_attr_mask |= UCP_OP_ATTR_FLAG_MULTI_SEND;
    }
    param.cb.send   = pt_ucp_send_cb;
    param.user_data = run;
    ++run->sends;
    return pt_started(run, &run->sends,
                      ucp_tag_send_nbx(run->ucp_ep, buf, len, tag, &param));
}

static inline ucs_status_t pt_ucp_recv(pt_run_t *run, void *buf, size_t len,
                                       uint64_t tag, uint64_t mask)
{
    ucp_request_param_t param;

    /* UCX 1.13 reports no size for a receive that completes at once (a
     * longer message would fail it with UCS_ERR_MESSAGE_TRUNCATED) */
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                         UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.recv      = pt_ucp_recv_cb;
    param.user_data    = run;
    ++run->recvs;
    return pt_started(run, &run->recvs,
                      ucp_tag_recv_nbx(run->ucp_worker, buf, len, tag, mask,
                                       &param));
}

#define PT_K(_name)                  pt_ucp_k_##_name
#define PT_SEND(_run, _buf, _len, _tag) pt_ucp_send(_run, _buf, _len, _tag)
#define PT_RECV(_run, _buf, _len, _tag, _mask) \
    pt_ucp_recv(_run, _buf, _len, _tag, _mask)
#define PT_PROGRESS(_run)            ucp_worker_progress((_run)->ucp_worker)
#include "perftest_kernels.inc"

ucs_status_t pt_ucp_run_phase(pt_run_t *run, int is_client, uint64_t iters,
                              int measured)
{
    if (run->ucp_ep == NULL) {
        PT_ERR("no UCP endpoint to measure\n");
        return UCS_ERR_NO_ELEM;
    }
    return pt_ucp_k_run_phase(run, is_client, iters, measured);
}
