/*
 * The measuring loops of psel_perftest and psel_calibrate (see
 * perftest_run.h) over protosel's data path (perftest_kernels.inc), the
 * choice of data path, and the warm-up.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest_run.h"

#include <stdio.h>

/* ---------------------------------------------------------------------- */
/* The tag_lat and tag_bw loops over protosel's data path                 */
/* ---------------------------------------------------------------------- */

static void pt_psel_send_cb(psel_request_t *req, ucs_status_t status,
                            void *arg)
{
    psel_request_free(req);
    pt_send_done(arg, status);
}

static void pt_psel_recv_cb(psel_request_t *req, ucs_status_t status,
                            const psel_recv_info_t *info, void *arg)
{
    size_t length = info->length; /* in the request */

    psel_request_free(req);
    pt_recv_done(arg, status, length);
}

static inline ucs_status_t pt_psel_send(pt_run_t *run, void *buf,
                                        size_t len, uint64_t tag)
{
    /* as ucx_perftest: tag_bw streams (UCP_OP_ATTR_FLAG_MULTI_SEND there) */
    unsigned flags = (run->params.test == PT_TEST_TAG_BW) ?
                     PSEL_SEND_FLAG_STREAM : 0;

    ++run->sends;
    return pt_started(run, &run->sends,
                      psel_tag_send_nbf(run->ep, buf, len, tag, flags,
                                        pt_psel_send_cb, run));
}

static inline ucs_status_t pt_psel_recv(pt_run_t *run, void *buf,
                                        size_t len, uint64_t tag,
                                        uint64_t mask)
{
    ++run->recvs;
    return pt_started(run, &run->recvs,
                      psel_tag_recv_nb(run->worker, buf, len, tag, mask,
                                       pt_psel_recv_cb, run));
}

#define PT_K(_name)          pt_psel_##_name
#define PT_SEND(_run, _buf, _len, _tag) pt_psel_send(_run, _buf, _len, _tag)
#define PT_RECV(_run, _buf, _len, _tag, _mask) \
    pt_psel_recv(_run, _buf, _len, _tag, _mask)
#define PT_PROGRESS(_run)    psel_worker_progress((_run)->worker)
#include "perftest_kernels.inc"

ucs_status_t pt_run_phase(pt_run_t *run, int is_client, uint64_t iters,
                          int measured)
{
    if (run->path == PT_PATH_UCP) {
        return pt_ucp_run_phase(run, is_client, iters, measured);
    }
    return pt_psel_run_phase(run, is_client, iters, measured);
}

/*
 * Warm up as ucx_perftest does: runs of 1, 2, 4... iterations until -w are
 * done or PT_WARMUP_TIME_SEC passed. The client decides whether another run
 * follows and tells the server on the control connection.
 */
ucs_status_t pt_warmup(pt_run_t *run, int is_client)
{
    double deadline = psel_oob_time() + PT_WARMUP_TIME_SEC;
    uint64_t total  = 0, chunk = 1, n;
    ucs_status_t status;
    uint8_t more;

    while (total < run->params.warmup) {
        n      = (chunk < run->params.warmup - total) ? chunk :
                 (run->params.warmup - total);
        status = pt_run_phase(run, is_client, n, 0);
        if (status != UCS_OK) {
            return status;
        }

        total += n;
        chunk *= 2;
        if (is_client) {
            more   = (total < run->params.warmup) &&
                     (psel_oob_time() < deadline);
            status = psel_oob_send(&run->oob, &more, sizeof(more));
        } else {
            status = psel_oob_recv(&run->oob, &more, sizeof(more));
            if ((status == UCS_OK) && (more > 1)) {
                PT_ERR("the client sent %u as the "
                        "warm-up decision (expected 0 or 1)\n", more);
                status = UCS_ERR_INVALID_PARAM;
            }
        }
        if ((status != UCS_OK) || !more) {
            return status;
        }
    }
    return UCS_OK;
}
