/*
 * What psel_perftest and psel_calibrate share, see perftest_run.h: the test
 * parameters and their wire form, and setting up one side of a run. The
 * loops are in perftest_kernels.c, the calibration session in
 * perftest_session.c.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest_run.h"
#include "tool_diag.h"

#include <lane_select/ucs_compat.h>
#include <ucs/sys/math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const pt_test_info_t pt_tests[PT_TEST_LAST] = {
    /*                     name, desc, lat_label, window, pingpong,
     *                     streamed, rma, min_size */
    [PT_TEST_TAG_LAT]   = {"tag_lat", "tag match latency", "latency", 1, 1,
                           0, 0, 0},
    [PT_TEST_TAG_BW]    = {"tag_bw", "tag match bandwidth", "overhead", 32, 0,
                           1, 0, 0},
    [PT_TEST_CALIBRATE] = {"calibrate", "calibration session", "", 1, 0,
                           0, 0, 0},
    [PT_TEST_PUT_LAT]   = {"put_lat", "put latency", "latency", 1, 1,
                           0, 1, 1},
    [PT_TEST_PUT_BW]    = {"put_bw", "put bandwidth", "overhead", 32, 0,
                           1, 1, 0},
    [PT_TEST_GET_LAT]   = {"get_lat", "get latency", "latency", 1, 0,
                           0, 1, 0},
    [PT_TEST_GET_BW]    = {"get_bw", "get bandwidth", "overhead", 32, 0,
                           1, 1, 0},
    [PT_TEST_AM_LAT]    = {"am_lat", "active message latency", "latency", 1,
                           1, 0, 0, 0},
    [PT_TEST_AM_BW]     = {"am_bw", "active message bandwidth", "overhead", 32,
                           0, 1, 0, 0},
};

int pt_params_check(const pt_params_t *params, char *err, size_t len)
{
    if (params->test >= PT_TEST_LAST) {
        snprintf(err, len, "unknown test id %u (accepted: 0 to %u)",
                 params->test, PT_TEST_LAST - 1);
    } else if (params->flags & ~PT_FLAGS_ALL) {
        snprintf(err, len, "unknown test flags 0x%x", params->flags);
    } else if ((params->flags & PT_FLAG_UCP) &&
               (params->test == PT_TEST_CALIBRATE)) {
        snprintf(err, len, "the UCP data path flag (--ucp) applies to "
                 "tag_lat and tag_bw, not to a calibration session");
    } else if (params->size < pt_tests[params->test].min_size) {
        snprintf(err, len, "%s needs at least %zu bytes",
                 pt_tests[params->test].name, pt_tests[params->test].min_size);
    } else if (params->size > PT_MAX_SIZE) {
        snprintf(err, len, "message size %llu is above the limit %llu",
                 (unsigned long long)params->size, PT_MAX_SIZE);
    } else if ((params->iters == 0) || (params->iters > PT_MAX_ITERS)) {
        snprintf(err, len, "iterations %llu out of range 1..%llu",
                 (unsigned long long)params->iters, PT_MAX_ITERS);
    } else if (params->warmup > PT_MAX_ITERS) {
        snprintf(err, len, "warm-up iterations %llu above %llu",
                 (unsigned long long)params->warmup, PT_MAX_ITERS);
    } else if (params->outstanding > PT_MAX_OUTSTANDING) {
        snprintf(err, len, "outstanding sends %u above %u",
                 params->outstanding, PT_MAX_OUTSTANDING);
    } else if ((params->test == PT_TEST_TAG_LAT) &&
               (params->outstanding > 1)) {
        snprintf(err, len, "tag_lat runs one message at a time; -O %u "
                 "applies to tag_bw only", params->outstanding);
    } else {
        return 0;
    }
    return -1;
}

static unsigned pt_window(const pt_params_t *params)
{
    return (params->outstanding != 0) ? params->outstanding :
           pt_tests[params->test].window;
}


/* ---------------------------------------------------------------------- */
/* Parameters on the wire (little-endian, after the magic "PSPT")          */
/* ---------------------------------------------------------------------- */

void pt_params_pack(const pt_params_t *params,
                           uint8_t buf[PT_WIRE_PARAMS_SIZE])
{
    memcpy(buf, PT_WIRE_MAGIC, 4);
    psel_oob_put_le(buf + 4,  PT_WIRE_VERSION,     2);
    psel_oob_put_le(buf + 6,  params->test,        2);
    psel_oob_put_le(buf + 8,  params->flags,       4);
    psel_oob_put_le(buf + 12, params->outstanding, 4);
    psel_oob_put_le(buf + 16, params->size,        8);
    psel_oob_put_le(buf + 24, params->iters,       8);
    psel_oob_put_le(buf + 32, params->warmup,      8);
}

int pt_params_unpack(const uint8_t buf[PT_WIRE_PARAMS_SIZE],
                            pt_params_t *params, char *err, size_t len)
{
    uint64_t version = psel_oob_get_le(buf + 4, 2);

    if (memcmp(buf, PT_WIRE_MAGIC, 4)) {
        snprintf(err, len, "not a psel_perftest client (magic bytes "
                 "%02x %02x %02x %02x)", buf[0], buf[1], buf[2], buf[3]);
        return -1;
    }
    if (version != PT_WIRE_VERSION) {
        snprintf(err, len, "protocol version %llu, this server speaks %u",
                 (unsigned long long)version, PT_WIRE_VERSION);
        return -1;
    }

    params->test        = psel_oob_get_le(buf + 6, 2);
    params->flags       = psel_oob_get_le(buf + 8, 4);
    params->outstanding = psel_oob_get_le(buf + 12, 4);
    params->size        = psel_oob_get_le(buf + 16, 8);
    params->iters       = psel_oob_get_le(buf + 24, 8);
    params->warmup      = psel_oob_get_le(buf + 32, 8);
    return pt_params_check(params, err, len);
}


/* ---------------------------------------------------------------------- */
/* The handshake: the client's parameters, the server's verdict           */
/* ---------------------------------------------------------------------- */

ucs_status_t pt_handshake_client(pt_run_t *run, const char *server,
                                 uint16_t port, const char *what)
{
    uint8_t wire[PT_WIRE_PARAMS_SIZE], reply[8]; /* magic, verdict */
    void *reason = NULL;
    size_t reason_len;
    ucs_status_t status;

    pt_params_pack(&run->params, wire);
    status = psel_oob_send(&run->oob, wire, sizeof(wire));
    if (status == UCS_OK) {
        status = psel_oob_recv(&run->oob, reply, sizeof(reply));
    }
    if ((status == UCS_OK) && memcmp(reply, PT_WIRE_MAGIC, 4)) {
        PT_ERR("%s:%u is not a psel_perftest server of this version "
               "(unexpected reply %02x %02x %02x %02x)\n", server, port,
               reply[0], reply[1], reply[2], reply[3]);
        return UCS_ERR_INVALID_PARAM;
    }
    if (status == UCS_OK) {
        status = psel_oob_recv_blob(&run->oob, "reply", PT_MAX_REPLY_LEN,
                                    &reason, &reason_len);
    }
    if ((status == UCS_OK) && (psel_oob_get_le(reply + 4, 4) != 0)) {
        PT_ERR("the server rejected the %s: %.*s\n", what, (int)reason_len,
               (char*)reason);
        status = UCS_ERR_INVALID_PARAM;
    }
    free(reason);
    return status;
}

ucs_status_t pt_handshake_server(pt_run_t *run)
{
    uint8_t wire[PT_WIRE_PARAMS_SIZE], reply[8];
    char err[256] = "";
    uint32_t verdict;
    ucs_status_t status;

    status = psel_oob_recv(&run->oob, wire, sizeof(wire));
    if (status != UCS_OK) {
        return status;
    }

    verdict = (pt_params_unpack(wire, &run->params, err, sizeof(err)) != 0);
    if (!verdict && (run->params.test > PT_TEST_CALIBRATE)) {
        snprintf(err, sizeof(err), "%s runs inside a calibration session "
                 "only (psel_calibrate --ucp)", pt_tests[run->params.test].name);
        verdict = 1;
    }
    if (verdict) {
        PT_ERR("rejected the client's test: %s\n", err);
    }
    memcpy(reply, PT_WIRE_MAGIC, 4);
    psel_oob_put_le(reply + 4, verdict, 4);
    status = psel_oob_send(&run->oob, reply, sizeof(reply));
    if (status == UCS_OK) {
        status = psel_oob_send_blob(&run->oob, err, strlen(err));
    }
    return (status != UCS_OK) ? status :
           verdict            ? UCS_ERR_INVALID_PARAM : UCS_OK;
}


/* ---------------------------------------------------------------------- */
/* Setup and the two roles                                                */
/* ---------------------------------------------------------------------- */

static void pt_progress_cb(void *arg)
{
    psel_worker_progress((psel_worker_h)arg);
}

/* Bytes of the last level cache; 32 MiB when the system does not say */
static size_t pt_llc_size(void)
{
    long size = sysconf(_SC_LEVEL3_CACHE_SIZE);

    if (size <= 0) {
        size = sysconf(_SC_LEVEL2_CACHE_SIZE);
    }
    return (size > 0) ? (size_t)size : (32ul << 20);
}

ucs_status_t pt_prepare(pt_run_t *run)
{
    size_t size     = run->params.size ? run->params.size : 1;
    size_t span;

    run->window    = pt_window(&run->params);
    run->recv_mask = (run->params.flags & PT_FLAG_WILDCARD) ? 0 :
                     PT_TAG_MASK_FULL;
    /* a failed phase ends the session: nothing of it is counted on */
    run->sends      = 0;
    run->recvs      = 0;
    run->am_arrived = 0;
    run->failure   = UCS_OK;

    /* cold: messages rotate over page-aligned slots that span twice the
     * last level cache, so each one starts out of cache, as an
     * application's data would */
    run->slot_size = psel_align_up(size, 4096);
    run->num_slots = 1;
    if (run->params.flags & PT_FLAG_COLD) {
        span           = ucs_min(ucs_max(2 * pt_llc_size(),
                                         2 * run->slot_size),
                                 ucs_max(PT_COLD_MAX_SPAN, 2 * run->slot_size));
        run->num_slots = span / run->slot_size;
        size           = run->num_slots * run->slot_size;
    }

    if (size <= run->buf_size) {
        return UCS_OK;
    }
    pt_ucp_rma_unmap(run);
    free(run->sbuf);
    free(run->rbuf);
    run->sbuf     = run->rbuf = NULL;
    run->buf_size = 0;
    if ((posix_memalign(&run->sbuf, 4096, size) != 0) ||
        (posix_memalign(&run->rbuf, 4096, size) != 0)) {
        goto err_nomem;
    }
    run->buf_size = size;
    memset(run->sbuf, 0x5a, size);
    memset(run->rbuf, 0, size);
    return UCS_OK;

err_nomem:
    PT_ERR("out of memory for %zu-byte buffers\n", size);
    return UCS_ERR_NO_MEMORY;
}

ucs_status_t pt_report_failure(pt_run_t *run, const char *what)
{
    if (run->failure == UCS_ERR_MESSAGE_TRUNCATED) {
        PT_ERR("a %s got %zu bytes, expected %zu (waiting for the %s)\n",
               run->failure_op, run->failure_got, run->recv_size, what);
    } else {
        PT_ERR("a %s failed: %s (waiting for the %s)\n", run->failure_op,
               ucs_status_string(run->failure), what);
    }
    return run->failure;
}

ucs_status_t pt_check_stalled(pt_run_t *run, double *deadline,
                              const char *what)
{
    double now = psel_oob_time();

    if (run->failure != UCS_OK) {
        return pt_report_failure(run, what); /* what is awaited may not end */
    }
    if (*deadline == 0) {
        *deadline = now + PT_TIMEOUT_SEC;
    } else if (now > *deadline) {
        PT_ERR("%s did not complete within %.0f seconds\n", what,
               PT_TIMEOUT_SEC);
        return UCS_ERR_TIMED_OUT;
    }

    if (psel_oob_peer_closed(&run->oob)) {
        PT_ERR("the peer closed the control connection while a %s was in "
               "progress\n", what);
        return UCS_ERR_CONNECTION_RESET;
    }
    return UCS_OK;
}

/*
 * One step of setting up both sides, exchanged as a blob: 'A' and a payload
 * (the worker address, or nothing) when this side's step worked, or 'E', the
 * status (4 bytes, little-endian) and a reason when it failed, so that the peer
 * says why instead of finding a closed connection. The client sends first;
 * a client whose step failed sends its reason and stops there.
 */
#define PT_SETUP_OK     'A'
#define PT_SETUP_FAILED 'E'

static ucs_status_t pt_setup_send(pt_run_t *run, ucs_status_t status,
                                  const void *payload, size_t len,
                                  const char *reason)
{
    uint8_t *blob;
    size_t blob_len;
    ucs_status_t ret;

    blob_len = 1 + ((status == UCS_OK) ? len : 4 + strlen(reason));
    blob     = malloc(blob_len);
    if (blob == NULL) {
        PT_ERR("out of memory for the setup message\n");
        return UCS_ERR_NO_MEMORY;
    }
    if (status == UCS_OK) {
        blob[0] = PT_SETUP_OK;
        memcpy(blob + 1, payload, len);
    } else {
        blob[0] = PT_SETUP_FAILED;
        psel_oob_put_le(blob + 1, (uint32_t)(int32_t)status, 4);
        memcpy(blob + 5, reason, strlen(reason));
    }
    ret = psel_oob_send_blob(&run->oob, blob, blob_len);
    free(blob);
    return ret;
}

/* Receive the peer's step: its payload (malloc'ed, or NULL when empty), or
 * its failure, printed with what to do. */
static ucs_status_t pt_setup_recv(pt_run_t *run, int is_client,
                                  const char *what, size_t max,
                                  void **payload_p, size_t *len_p)
{
    const char *peer = is_client ? "server" : "client";
    char reason[PT_REASON_MAX];
    ucs_status_t status;
    uint8_t *blob;
    size_t len, i;
    int32_t code;

    status = psel_oob_recv_blob(&run->oob, what,
                                ucs_max(max + 1, 5 + PT_REASON_MAX),
                                (void**)&blob, &len);
    if (status != UCS_OK) {
        return status;
    }
    if ((len >= 1) && (len <= max + 1) && (blob[0] == PT_SETUP_OK)) {
        *len_p     = len - 1;
        *payload_p = NULL;
        if (len > 1) {
            *payload_p = malloc(len - 1);
            if (*payload_p == NULL) {
                free(blob);
                return UCS_ERR_NO_MEMORY;
            }
            memcpy(*payload_p, blob + 1, len - 1);
        }
        free(blob);
        return UCS_OK;
    }
    if ((len < 5) || (blob[0] != PT_SETUP_FAILED)) {
        PT_ERR("the %s sent a malformed %s (%zu bytes): is it the same "
               "protosel version?\n", peer, what, len);
        free(blob);
        return UCS_ERR_INVALID_PARAM;
    }

    code = (int32_t)psel_oob_get_le(blob + 1, 4);
    for (i = 0; (i < len - 5) && (i < sizeof(reason) - 1); ++i) {
        reason[i] = ((blob[5 + i] >= ' ') && (blob[5 + i] <= '~')) ?
                    blob[5 + i] : '?';
    }
    reason[i] = '\0';
    free(blob);
    status = ((code < 0) && (code > UCS_ERR_LAST)) ? (ucs_status_t)code :
             UCS_ERR_IO_ERROR;
    if (status == UCS_ERR_INVALID_PARAM) {
        /* a setting or a file it names: the reason says which */
        PT_ERR("the %s could not set up its side: %s.\n"
               "  Fix, on the %s, what the message names; then run it "
               "again.\n", peer, reason, peer);
    } else {
        PT_ERR("the %s could not set up its side: %s.\n"
               "  Its own output says more. Check, on the %s, that "
               "UCX_PSEL_TLS and UCX_PSEL_NET_DEVICES name transports and "
               "devices it has, and that its network devices are up with "
               "carrier (right after a network namespace or a link comes up, "
               "wait for LOWER_UP in `ip -br link`); then run it again.\n",
               peer, reason, peer);
    }
    return status;
}

/* Exchange one setup step: @a status and @a payload of this side, the
 * peer's payload back (see pt_setup_send). */
static ucs_status_t pt_setup_exchange(pt_run_t *run, int is_client,
                                      ucs_status_t status, const void *payload,
                                      size_t len, const char *reason,
                                      const char *what, size_t max,
                                      void **peer_payload, size_t *peer_len)
{
    ucs_status_t ret;

    *peer_payload = NULL;
    *peer_len     = 0;
    if (is_client) {
        ret = pt_setup_send(run, status, payload, len, reason);
        if ((ret != UCS_OK) || (status != UCS_OK)) {
            return (status != UCS_OK) ? status : ret;
        }
        return pt_setup_recv(run, 1, what, max, peer_payload, peer_len);
    }

    ret = pt_setup_recv(run, 0, what, max, peer_payload, peer_len);
    if (ret != UCS_OK) {
        return ret;
    }
    ret = pt_setup_send(run, status, payload, len, reason);
    if ((ret != UCS_OK) || (status != UCS_OK)) {
        free(*peer_payload);
        *peer_payload = NULL;
        return (status != UCS_OK) ? status : ret;
    }
    return UCS_OK;
}

/* Why this side failed, for the peer: the step, the status, the error
 * logged during the step (after @a mark), and the transport settings of the
 * run's path that decide which resources there are */
void pt_setup_reason(const pt_run_t *run, char *reason, const char *step,
                     ucs_status_t status, unsigned mark)
{
    const char *prefix = (run->path == PT_PATH_UCP) ? "UCX" : "UCX_PSEL";
    const char *cause  = psel_tool_diag_since(mark);
    char tls_var[32], devs_var[32];
    const char *tls, *devs;

    snprintf(tls_var, sizeof(tls_var), "%s_TLS", prefix);
    snprintf(devs_var, sizeof(devs_var), "%s_NET_DEVICES", prefix);
    tls  = getenv(tls_var);
    devs = getenv(devs_var);
    snprintf(reason, PT_REASON_MAX, "cannot %s: %s%s%s (%s=%s, %s=%s)", step,
             ucs_status_string(status), (cause != NULL) ? ": " : "",
             (cause != NULL) ? cause : "", tls_var, (tls != NULL) ? tls : "all",
             devs_var, (devs != NULL) ? devs : "all");
    PT_ERR("%s\n", reason);
}

/* This side's context, worker and address; a reason on failure */
static ucs_status_t pt_setup_local(pt_run_t *run, void **address, size_t *len,
                                   char *reason)
{
    unsigned mark = psel_tool_diag_mark();
    ucs_status_t status;

    status = psel_context_create(&run->context);
    if (status != UCS_OK) {
        pt_setup_reason(run, reason, "create the protosel context", status, mark);
        return status;
    }

    status = psel_worker_create(run->context, &run->worker);
    if (status != UCS_OK) {
        pt_setup_reason(run, reason, "create the worker", status, mark);
        return status;
    }

    run->oob.progress     = pt_progress_cb;
    run->oob.progress_arg = run->worker;

    status = psel_worker_get_address(run->worker, address, len);
    if (status != UCS_OK) {
        pt_setup_reason(run, reason, "get the worker address", status, mark);
    }
    return status;
}

/* Context, worker, address exchange, endpoint; the client sends first. Each
 * side tells the other when a step failed, and why. */
ucs_status_t pt_connect(pt_run_t *run, int is_client)
{
    char reason[PT_REASON_MAX] = "";
    void *local = NULL, *remote = NULL, *dummy;
    size_t local_len = 0, remote_len, dummy_len;
    ucs_status_t status;
    unsigned mark;

    status = (run->path == PT_PATH_UCP) ?
             pt_ucp_setup_local(run, &local, &local_len, reason) :
             pt_setup_local(run, &local, &local_len, reason);
    status = pt_setup_exchange(run, is_client, status, local, local_len,
                               reason, "worker address", PT_MAX_ADDRESS_LEN,
                               &remote, &remote_len);
    free(local);
    if (status != UCS_OK) {
        return status;
    }

    mark = psel_tool_diag_mark();
    if (run->path == PT_PATH_UCP) {
        status = pt_ucp_ep_create(run, remote, remote_len, reason);
    } else {
        status = psel_ep_create(run->worker, remote, remote_len, &run->ep);
        if (status != UCS_OK) {
            pt_setup_reason(run, reason, "connect to the peer's worker "
                            "address", status, mark);
        }
    }
    free(remote);
    status = pt_setup_exchange(run, is_client, status, NULL, 0, reason,
                               "endpoint status", 0, &dummy, &dummy_len);
    free(dummy);
    if (status != UCS_OK) {
        return status;
    }

    return pt_prepare(run);
}

/* Destroy protosel's endpoint, worker and context, or UCP's (orderly: at a
 * point of the session both sides reach) */
static void pt_destroy(pt_run_t *run, int orderly)
{
    pt_ucp_disconnect(run, orderly);
    if (run->ep != NULL) {
        psel_ep_destroy(run->ep);
    }
    if (run->worker != NULL) {
        psel_worker_destroy(run->worker);
    }
    if (run->context != NULL) {
        psel_context_destroy(run->context);
    }
    run->ep       = NULL;
    run->worker   = NULL;
    run->context  = NULL;
    run->oob.progress = NULL;
}

void pt_disconnect(pt_run_t *run)
{
    pt_destroy(run, 1);
}

void pt_cleanup(pt_run_t *run)
{
    pt_destroy(run, 0);
    free(run->sbuf);
    free(run->rbuf);
    psel_oob_close(&run->oob);
}
