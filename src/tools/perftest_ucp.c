/*
 * The UCP path of a run (PT_PATH_UCP, perftest_run.h): stock UCP's
 * context, worker and endpoint, and the tag_lat / tag_bw loops of
 * perftest_kernels.inc over ucp_tag_send_nbx / ucp_tag_recv_nbx, as
 * ucx_perftest runs them: tag_bw sends with UCP_OP_ATTR_FLAG_MULTI_SEND (so
 * UCP selects on its streaming cost lines), tag_lat without (single).
 * Then the put and get loops, which psel_calibrate --ucp measures UCP's
 * put and get protocols with, on buffers each side maps with ucp_mem_map
 * (user memory, as NIXL and MPI windows register theirs), and the
 * active-message loops, as ucx_perftest's ucp_am_lat and ucp_am_bw: an
 * eager message's data is used where UCP hands it over, a rendezvous one
 * is received into the receive buffer.
 * UCP reads its UCX_* settings from the environment at each connect, so a
 * calibration session's settings (perftest_settings.h) choose what it runs.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest_run.h"
#include "tool_diag.h"

#include <ucs/sys/math.h>

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

static ucs_status_t pt_ucp_am_handler_set(pt_run_t *run);

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
    /* RMA and AM as well: psel_calibrate --ucp measures put, get and
     * active messages; UCP's tag-send tables stay the same with them (UCX
     * 1.16.0 and 1.22.0 over shared memory and tcp/lo) */
    params.features          = UCP_FEATURE_TAG | UCP_FEATURE_RMA |
                               UCP_FEATURE_AM;
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

    status = pt_ucp_am_handler_set(run);
    if (status != UCS_OK) {
        pt_setup_reason(run, reason, "set the active-message handler", status,
                        mark);
        return status;
    }

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

    pt_ucp_rma_unmap(run);
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

/* The parameters of an operation this side starts, counted in run->sends
 * (its callback counts it done): streamed in a streaming test */
static inline void pt_ucp_send_param(pt_run_t *run, ucp_request_param_t *param,
                                     int streamed)
{
    param->op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                          UCP_OP_ATTR_FIELD_USER_DATA;
    if (streamed) {
        param->op_attr_mask |= UCP_OP_ATTR_FLAG_MULTI_SEND;
    }
    param->cb.send   = pt_ucp_send_cb;
    param->user_data = run;
    ++run->sends;
}

static inline ucs_status_t pt_ucp_send(pt_run_t *run, void *buf, size_t len,
                                       uint64_t tag)
{
    ucp_request_param_t param;

    pt_ucp_send_param(run, &param, pt_tests[run->params.test].streamed);
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

static ucs_status_t pt_ucp_rma_phase(pt_run_t *run, int is_client,
                                     uint64_t iters, int measured);
static ucs_status_t pt_ucp_am_phase(pt_run_t *run, int is_client,
                                    uint64_t iters, int measured);

ucs_status_t pt_ucp_run_phase(pt_run_t *run, int is_client, uint64_t iters,
                              int measured)
{
    if (run->ucp_ep == NULL) {
        PT_ERR("no UCP endpoint to measure\n");
        return UCS_ERR_NO_ELEM;
    }
    if (pt_tests[run->params.test].rma) {
        return pt_ucp_rma_phase(run, is_client, iters, measured);
    }
    if ((run->params.test == PT_TEST_AM_LAT) ||
        (run->params.test == PT_TEST_AM_BW)) {
        return pt_ucp_am_phase(run, is_client, iters, measured);
    }
    return pt_ucp_k_run_phase(run, is_client, iters, measured);
}


/* ---------------------------------------------------------------------- */
/* Put and get                                                            */
/* ---------------------------------------------------------------------- */

#define PT_RMA_ARRIVED  1  /* put_lat: the last byte of a message that came */

void pt_ucp_rma_unmap(pt_run_t *run)
{
    unsigned i;

    for (i = 0; i < 2; ++i) {
        if (run->peer_rkey[i] != NULL) {
            ucp_rkey_destroy(run->peer_rkey[i]);
            run->peer_rkey[i] = NULL;
        }
        if (run->memh[i] != NULL) {
            ucp_mem_unmap(run->ucp_context, run->memh[i]);
            run->memh[i] = NULL;
        }
    }
}

/* This side's wire form: sbuf's and rbuf's addresses, the slot count, then
 * the two packed keys, each after its length */
static ucs_status_t pt_ucp_rma_pack(pt_run_t *run, uint8_t **blob,
                                    size_t *len)
{
    void *rkey[2]      = {NULL, NULL};
    size_t rkey_len[2] = {0, 0};
    void *bufs[2]      = {run->sbuf, run->rbuf};
    ucp_mem_map_params_t params;
    ucs_status_t status = UCS_OK;
    uint8_t *p;
    unsigned i;

    for (i = 0; (i < 2) && (status == UCS_OK); ++i) {
        if (run->memh[i] == NULL) {
            params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                UCP_MEM_MAP_PARAM_FIELD_LENGTH;
            params.address    = bufs[i];
            params.length     = run->buf_size;
            status = ucp_mem_map(run->ucp_context, &params, &run->memh[i]);
            if (status != UCS_OK) {
                run->memh[i] = NULL;
                PT_ERR("cannot map %zu bytes for put and get: %s\n",
                       run->buf_size, ucs_status_string(status));
                break;
            }
        }
        status = ucp_rkey_pack(run->ucp_context, run->memh[i], &rkey[i],
                               &rkey_len[i]);
        if (status != UCS_OK) {
            rkey[i] = NULL;
            PT_ERR("cannot pack a remote key: %s\n",
                   ucs_status_string(status));
        }
    }

    *len  = 8 + 8 + 4 + 4 + rkey_len[0] + 4 + rkey_len[1];
    *blob = (status == UCS_OK) ? malloc(*len) : NULL;
    if (*blob != NULL) {
        p = *blob;
        psel_oob_put_le(p, (uintptr_t)run->sbuf, 8);
        psel_oob_put_le(p + 8, (uintptr_t)run->rbuf, 8);
        psel_oob_put_le(p + 16, run->num_slots, 4);
        p += 20;
        for (i = 0; i < 2; ++i) {
            psel_oob_put_le(p, rkey_len[i], 4);
            memcpy(p + 4, rkey[i], rkey_len[i]);
            p += 4 + rkey_len[i];
        }
    } else if (status == UCS_OK) {
        PT_ERR("out of memory for the remote keys\n");
        status = UCS_ERR_NO_MEMORY;
    }
    for (i = 0; i < 2; ++i) {
        if (rkey[i] != NULL) {
            ucp_rkey_buffer_release(rkey[i]);
        }
    }
    return status;
}

/* The peer's wire form (outside input: every length is checked) */
static ucs_status_t pt_ucp_rma_unpack(pt_run_t *run, const uint8_t *blob,
                                      size_t len)
{
    const uint8_t *p = blob + 20, *end = blob + len;
    ucs_status_t status;
    size_t rkey_len;
    unsigned i;

    if (len < 20) {
        PT_ERR("the peer's remote keys: %zu bytes, too short\n", len);
        return UCS_ERR_INVALID_PARAM;
    }
    run->peer_addr[0] = psel_oob_get_le(blob, 8);
    run->peer_addr[1] = psel_oob_get_le(blob + 8, 8);
    run->peer_slots   = psel_oob_get_le(blob + 16, 4);
    if ((run->peer_slots == 0) || (run->peer_slots > run->num_slots)) {
        /* both sides size their slots alike; a cache of another size
         * gives fewer or more: this side uses at most its own */
        run->peer_slots = ucs_max(ucs_min(run->peer_slots, run->num_slots),
                                  1);
    }
    for (i = 0; i < 2; ++i) {
        if (end - p < 4) {
            PT_ERR("the peer's remote keys end after %zu bytes\n",
                   (size_t)(p - blob));
            return UCS_ERR_INVALID_PARAM;
        }
        rkey_len = psel_oob_get_le(p, 4);
        if (rkey_len > (size_t)(end - p - 4)) {
            PT_ERR("the peer's remote key %u: %zu bytes, %zu are left\n", i,
                   rkey_len, (size_t)(end - p - 4));
            return UCS_ERR_INVALID_PARAM;
        }
        status = ucp_ep_rkey_unpack(run->ucp_ep, p + 4, &run->peer_rkey[i]);
        if (status != UCS_OK) {
            run->peer_rkey[i] = NULL;
            PT_ERR("cannot unpack the peer's remote key: %s\n",
                   ucs_status_string(status));
            return status;
        }
        p += 4 + rkey_len;
    }
    return UCS_OK;
}

ucs_status_t pt_ucp_rma_exchange(pt_run_t *run, int is_client)
{
    uint8_t *local = NULL;
    void *remote   = NULL;
    size_t local_len, remote_len;
    ucs_status_t status;
    unsigned i;

    if ((run->path != PT_PATH_UCP) || (run->ucp_ep == NULL)) {
        PT_ERR("%s measures stock UCP's put and get only\n",
               pt_tests[run->params.test].name);
        return UCS_ERR_UNSUPPORTED;
    }
    for (i = 0; i < 2; ++i) {
        if (run->peer_rkey[i] != NULL) {
            ucp_rkey_destroy(run->peer_rkey[i]);
            run->peer_rkey[i] = NULL;
        }
    }
    /* put_lat: no last byte says "arrived" from an earlier test's data
     * (put_bw copies the marker along); cleared before this side sends its
     * keys, so before the peer can put */
    if (run->params.test == PT_TEST_PUT_LAT) {
        for (i = 0; i < run->num_slots; ++i) {
            ((uint8_t*)pt_buf(run, run->rbuf, i))[run->params.size - 1] = 0;
        }
    }
    status = pt_ucp_rma_pack(run, &local, &local_len);
    if (status != UCS_OK) {
        return status;
    }
    if (is_client) {
        status = psel_oob_send_blob(&run->oob, local, local_len);
    }
    if (status == UCS_OK) {
        status = psel_oob_recv_blob(&run->oob, "remote keys",
                                    PT_MAX_ADDRESS_LEN, &remote, &remote_len);
    }
    if ((status == UCS_OK) && !is_client) {
        status = psel_oob_send_blob(&run->oob, local, local_len);
    }
    if (status == UCS_OK) {
        status = pt_ucp_rma_unpack(run, remote, remote_len);
    }
    free(local);
    free(remote);
    return status;
}

/* Where message @a i goes in the peer's buffer @a which (0 sbuf, 1 rbuf) */
static inline uint64_t pt_ucp_peer_buf(const pt_run_t *run, unsigned which,
                                       uint64_t i)
{
    return run->peer_addr[which] + (i % run->peer_slots) * run->slot_size;
}

/* Start a put of message @a i into the peer's rbuf, or a get of it from the
 * peer's sbuf */
static inline ucs_status_t pt_ucp_rma(pt_run_t *run, int is_get, uint64_t i)
{
    size_t size = run->params.size;
    ucp_request_param_t param;
    ucs_status_ptr_t req;

    pt_ucp_send_param(run, &param, pt_tests[run->params.test].streamed);
    if (is_get) {
        req = ucp_get_nbx(run->ucp_ep, pt_buf(run, run->rbuf, i), size,
                          pt_ucp_peer_buf(run, 0, i), run->peer_rkey[0],
                          &param);
    } else {
        req = ucp_put_nbx(run->ucp_ep, pt_buf(run, run->sbuf, i), size,
                          pt_ucp_peer_buf(run, 1, i), run->peer_rkey[1],
                          &param);
    }
    return pt_started(run, &run->sends, req);
}

/* Progress until @a done says so for @a arg; a stall, a closed control
 * connection or a failed completion ends the wait (pt_check_stalled) */
static UCS_F_ALWAYS_INLINE ucs_status_t
pt_ucp_progress_until(pt_run_t *run, int (*done)(const pt_run_t*, const void*),
                      const void *arg, const char *what)
{
    double deadline = 0;
    unsigned spins  = 0;
    ucs_status_t status;

    while (!done(run, arg)) {
        ucp_worker_progress(run->ucp_worker);
        if (ucs_unlikely(++spins == PT_SPINS_PER_CHECK)) {
            spins  = 0;
            status = pt_check_stalled(run, &deadline, what);
            if (status != UCS_OK) {
                return status;
            }
        }
    }
    return pt_check_failed(run, what);
}

static inline int pt_ucp_byte_arrived(const pt_run_t *run, const void *last)
{
    return *(const volatile uint8_t*)last == PT_RMA_ARRIVED;
}

/* put_lat: progress until the last byte of message @a i in this side's
 * rbuf says it arrived, then clear it for the next one to that slot */
static ucs_status_t pt_ucp_wait_arrived(pt_run_t *run, uint64_t i)
{
    uint8_t *last = (uint8_t*)pt_buf(run, run->rbuf, i) + run->params.size - 1;
    ucs_status_t status;

    status = pt_ucp_progress_until(run, pt_ucp_byte_arrived, last,
                                   "the peer's put");
    *last  = 0;
    return status;
}

/* put_lat, one side: put message @a i (its last byte saying so) and wait
 * for its local completion */
static ucs_status_t pt_ucp_put_one(pt_run_t *run, uint64_t i)
{
    ((uint8_t*)pt_buf(run, run->sbuf, i))[run->params.size - 1] =
        PT_RMA_ARRIVED;
    if (UCS_STATUS_IS_ERR(pt_ucp_rma(run, 0, i))) {
        return pt_check_failed(run, "put");
    }
    return pt_ucp_k_wait(run, &run->sends, 0, "put");
}

/* put_lat, as ucx_perftest's ucp_put_lat: the client puts, the server sees
 * the last byte arrive and puts back; one round trip an iteration */
static ucs_status_t pt_ucp_put_lat(pt_run_t *run, int is_client,
                                   uint64_t iters, int measured)
{
    ucs_status_t status = UCS_OK;
    uint64_t i;

    for (i = 0; (status == UCS_OK) && (i < iters); ++i) {
        if (is_client) {
            status = pt_ucp_put_one(run, i);
            if (status == UCS_OK) {
                status = pt_ucp_wait_arrived(run, i);
            }
        } else {
            status = pt_ucp_wait_arrived(run, i);
            if (status == UCS_OK) {
                status = pt_ucp_put_one(run, i);
            }
        }
        if ((status == UCS_OK) && measured && (run->timing != NULL)) {
            pt_timing_update(run->timing, run->params.size);
        }
    }
    return status;
}

/* put_bw, get_lat, get_bw, client: up to -O operations in flight (one for
 * get_lat), all complete (a put flushed: in the peer's memory), then the
 * end of the phase told to the server, which progresses until then */
static ucs_status_t pt_ucp_rma_client(pt_run_t *run, uint64_t iters,
                                      int measured)
{
    int is_get = (run->params.test != PT_TEST_PUT_BW);
    const char *what = is_get ? "get" : "put";
    ucp_request_param_t param;
    ucs_status_t status;
    uint64_t i;

    for (i = 0; i < iters; ++i) {
        status = pt_ucp_k_wait(run, &run->sends, (int)run->window - 1, what);
        if (status != UCS_OK) {
            return status;
        }
        if (UCS_STATUS_IS_ERR(pt_ucp_rma(run, is_get, i))) {
            return pt_check_failed(run, what);
        }
        if (measured && (run->timing != NULL)) {
            pt_timing_update(run->timing, run->params.size);
        }
    }
    status = pt_ucp_k_wait(run, &run->sends, 0, what);
    if ((status == UCS_OK) && !is_get) {
        pt_ucp_send_param(run, &param, 0);
        if (UCS_STATUS_IS_ERR(pt_started(run, &run->sends,
                                         ucp_ep_flush_nbx(run->ucp_ep,
                                                          &param)))) {
            return pt_check_failed(run, "flush of the puts");
        }
        status = pt_ucp_k_wait(run, &run->sends, 0, "flush of the puts");
    }
    if (status != UCS_OK) {
        return status;
    }
    psel_oob_put_le((uint8_t*)&run->ack, iters, 8);
    if (UCS_STATUS_IS_ERR(pt_ucp_send(run, &run->ack, sizeof(run->ack),
                                      PT_TAG_ACK))) {
        return pt_check_failed(run, "send of the end of the phase");
    }
    return pt_ucp_k_wait(run, &run->sends, 0, "send of the end of the phase");
}

/* put_bw, get_lat, get_bw, server: progress (UCP may need this side for a
 * put or get by active messages) until the client says the phase ended */
static ucs_status_t pt_ucp_rma_server(pt_run_t *run, uint64_t iters)
{
    uint64_t told;
    ucs_status_t status;

    run->recv_size = sizeof(run->ack);
    if (UCS_STATUS_IS_ERR(pt_ucp_recv(run, &run->ack, sizeof(run->ack),
                                      PT_TAG_ACK, PT_TAG_MASK_FULL))) {
        return pt_check_failed(run, "receive of the end of the phase");
    }
    status = pt_ucp_k_wait(run, &run->recvs, 0,
                           "receive of the end of the phase");
    if (status != UCS_OK) {
        return status;
    }
    told = psel_oob_get_le((const uint8_t*)&run->ack, 8);
    if (told != iters) {
        PT_ERR("the client ended a phase of %llu iterations, %llu were "
               "expected\n", (unsigned long long)told,
               (unsigned long long)iters);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

static ucs_status_t pt_ucp_rma_phase(pt_run_t *run, int is_client,
                                     uint64_t iters, int measured)
{
    if ((run->peer_rkey[0] == NULL) || (run->peer_rkey[1] == NULL)) {
        PT_ERR("%s without the peer's remote keys\n",
               pt_tests[run->params.test].name);
        return UCS_ERR_NO_ELEM;
    }
    if (run->params.test == PT_TEST_PUT_LAT) {
        return pt_ucp_put_lat(run, is_client, iters, measured);
    }
    return is_client ? pt_ucp_rma_client(run, iters, measured) :
                       pt_ucp_rma_server(run, iters);
}


/* ---------------------------------------------------------------------- */
/* Active messages                                                        */
/* ---------------------------------------------------------------------- */

#define PT_AM_ID  0x73  /* the handler's id on both sides */

static void pt_ucp_am_data_cb(void *req, ucs_status_t status, size_t length,
                              void *arg)
{
    pt_run_t *run = arg;

    ucp_request_free(req);
    if (status != UCS_OK) {
        pt_fail(run, "receive", status, length);
    }
    ++run->am_arrived;
}

/* An active message arrived: an eager one's data is here (used in place,
 * as ucx_perftest does); a rendezvous one is received into the receive
 * buffer, and counted when that completes */
static ucs_status_t pt_ucp_am_cb(void *arg, const void *header,
                                 size_t header_length, void *data,
                                 size_t length, const ucp_am_recv_param_t *rx)
{
    pt_run_t *run = arg;
    ucp_request_param_t param;
    ucs_status_ptr_t req;

    if (!(rx->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        ++run->am_arrived;
        return UCS_OK;
    }
    if (length > run->buf_size) {
        pt_fail(run, "receive", UCS_ERR_MESSAGE_TRUNCATED, length);
        return UCS_OK;
    }
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                         UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.recv_am   = pt_ucp_am_data_cb;
    param.user_data    = run;
    req = ucp_am_recv_data_nbx(run->ucp_worker, data,
                               pt_buf(run, run->rbuf, run->am_arrived),
                               length, &param);
    if (UCS_PTR_IS_ERR(req)) {
        pt_fail(run, "receive", UCS_PTR_STATUS(req), length);
    } else if (req == NULL) {
        ++run->am_arrived;
    }
    return UCS_INPROGRESS; /* UCP's descriptor: the receive has it */
}

static ucs_status_t pt_ucp_am_handler_set(pt_run_t *run)
{
    ucp_am_handler_param_t param;

    param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                       UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                       UCP_AM_HANDLER_PARAM_FIELD_CB |
                       UCP_AM_HANDLER_PARAM_FIELD_ARG;
    param.id         = PT_AM_ID;
    param.flags      = UCP_AM_FLAG_WHOLE_MSG;
    param.cb         = pt_ucp_am_cb;
    param.arg        = run;
    return ucp_worker_set_am_recv_handler(run->ucp_worker, &param);
}

static inline ucs_status_t pt_ucp_am_send(pt_run_t *run, uint64_t i)
{
    ucp_request_param_t param;

    pt_ucp_send_param(run, &param, pt_tests[run->params.test].streamed);
    return pt_started(run, &run->sends,
                      ucp_am_send_nbx(run->ucp_ep, PT_AM_ID, NULL, 0,
                                      pt_buf(run, run->sbuf, i),
                                      run->params.size, &param));
}

static inline int pt_ucp_am_count_reached(const pt_run_t *run,
                                          const void *count)
{
    return run->am_arrived >= *(const uint64_t*)count;
}

/* Progress until @a count active messages arrived since pt_prepare() */
static ucs_status_t pt_ucp_am_wait(pt_run_t *run, uint64_t count,
                                   const char *what)
{
    return pt_ucp_progress_until(run, pt_ucp_am_count_reached, &count, what);
}

/* am_lat: the client sends, the server answers each message with one of
 * its own; one round trip an iteration. am_bw: the client keeps up to -O
 * messages in flight, the server acknowledges them all by a tag message,
 * as tag_bw's. */
static ucs_status_t pt_ucp_am_phase(pt_run_t *run, int is_client,
                                    uint64_t iters, int measured)
{
    uint64_t base = run->am_arrived, i, acked;
    ucs_status_t status = UCS_OK;

    if (run->params.test == PT_TEST_AM_LAT) {
        for (i = 0; (status == UCS_OK) && (i < iters); ++i) {
            if (!is_client) {
                status = pt_ucp_am_wait(run, base + i + 1, "active message");
            }
            if ((status == UCS_OK) &&
                UCS_STATUS_IS_ERR(pt_ucp_am_send(run, i))) {
                return pt_check_failed(run, "active message");
            }
            if ((status == UCS_OK) && is_client) {
                status = pt_ucp_am_wait(run, base + i + 1,
                                        "active-message reply");
            }
            if (status == UCS_OK) {
                status = pt_ucp_k_wait(run, &run->sends, 0,
                                       "active message");
            }
            if ((status == UCS_OK) && measured && (run->timing != NULL)) {
                pt_timing_update(run->timing, run->params.size);
            }
        }
        return status;
    }

    if (!is_client) {
        status = pt_ucp_am_wait(run, base + iters, "active message");
        if (status != UCS_OK) {
            return status;
        }
        psel_oob_put_le((uint8_t*)&run->ack, iters, 8);
        if (UCS_STATUS_IS_ERR(pt_ucp_send(run, &run->ack, sizeof(run->ack),
                                          PT_TAG_ACK))) {
            return pt_check_failed(run, "send of the acknowledgement");
        }
        return pt_ucp_k_wait(run, &run->sends, 0,
                             "send of the acknowledgement");
    }

    run->recv_size = sizeof(run->ack);
    if (UCS_STATUS_IS_ERR(pt_ucp_recv(run, &run->ack, sizeof(run->ack),
                                      PT_TAG_ACK, PT_TAG_MASK_FULL))) {
        return pt_check_failed(run, "receive of the server's "
                               "acknowledgement");
    }
    for (i = 0; i < iters; ++i) {
        status = pt_ucp_k_wait(run, &run->sends, (int)run->window - 1,
                               "active message");
        if (status != UCS_OK) {
            return status;
        }
        if (UCS_STATUS_IS_ERR(pt_ucp_am_send(run, i))) {
            return pt_check_failed(run, "active message");
        }
        if (measured && (run->timing != NULL)) {
            pt_timing_update(run->timing, run->params.size);
        }
    }
    status = pt_ucp_k_wait(run, &run->sends, 0, "active message");
    if (status == UCS_OK) {
        status = pt_ucp_k_wait(run, &run->recvs, 0,
                               "receive of the server's acknowledgement");
    }
    if (status != UCS_OK) {
        return status;
    }
    acked = psel_oob_get_le((const uint8_t*)&run->ack, 8);
    if (acked != iters) {
        PT_ERR("the server received %llu active messages, %llu were sent\n",
               (unsigned long long)acked, (unsigned long long)iters);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}
