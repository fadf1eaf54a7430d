/*
 * The measuring core shared by psel_perftest and psel_calibrate, see
 * perftest_run.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest_run.h"

#include <ucs/sys/math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PT_ERR(_fmt, ...) fprintf(stderr, "%s: " _fmt, pt_prog, ## __VA_ARGS__)

const char *pt_prog = "psel_perftest";

const pt_test_info_t pt_tests[PT_TEST_LAST] = {
    [PT_TEST_TAG_LAT]   = {"tag_lat", "tag match latency",   "latency",  1,  1},
    [PT_TEST_TAG_BW]    = {"tag_bw",  "tag match bandwidth", "overhead", 32, 0},
    [PT_TEST_CALIBRATE] = {"calibrate", "calibration session", "", 1, 0},
};

int pt_params_check(const pt_params_t *params, char *err, size_t len)
{
    if (params->test >= PT_TEST_LAST) {
        snprintf(err, len, "unknown test id %u (accepted: tag_lat, tag_bw)",
                 params->test);
    } else if (params->flags & ~PT_FLAGS_ALL) {
        snprintf(err, len, "unknown test flags 0x%x", params->flags);
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
/* Parameters on the wire (big-endian)                                    */
/* ---------------------------------------------------------------------- */

void pt_put(uint8_t *p, uint64_t value, unsigned bytes)
{
    while (bytes-- > 0) {
        p[bytes] = value & 0xff;
        value  >>= 8;
    }
}

uint64_t pt_get(const uint8_t *p, unsigned bytes)
{
    uint64_t value = 0;
    unsigned i;

    for (i = 0; i < bytes; ++i) {
        value = (value << 8) | p[i];
    }
    return value;
}

void pt_params_pack(const pt_params_t *params,
                           uint8_t buf[PT_WIRE_PARAMS_SIZE])
{
    pt_put(buf + 0,  PT_WIRE_MAGIC,       4);
    pt_put(buf + 4,  PT_WIRE_VERSION,     2);
    pt_put(buf + 6,  params->test,        2);
    pt_put(buf + 8,  params->flags,       4);
    pt_put(buf + 12, params->outstanding, 4);
    pt_put(buf + 16, params->size,        8);
    pt_put(buf + 24, params->iters,       8);
    pt_put(buf + 32, params->warmup,      8);
}

int pt_params_unpack(const uint8_t buf[PT_WIRE_PARAMS_SIZE],
                            pt_params_t *params, char *err, size_t len)
{
    uint64_t magic   = pt_get(buf, 4);
    uint64_t version = pt_get(buf + 4, 2);

    if (magic != PT_WIRE_MAGIC) {
        snprintf(err, len, "not a psel_perftest client (magic 0x%08llx)",
                 (unsigned long long)magic);
        return -1;
    }
    if (version != PT_WIRE_VERSION) {
        snprintf(err, len, "protocol version %llu, this server speaks %u",
                 (unsigned long long)version, PT_WIRE_VERSION);
        return -1;
    }

    params->test        = pt_get(buf + 6, 2);
    params->flags       = pt_get(buf + 8, 4);
    params->outstanding = pt_get(buf + 12, 4);
    params->size        = pt_get(buf + 16, 8);
    params->iters       = pt_get(buf + 24, 8);
    params->warmup      = pt_get(buf + 32, 8);
    return pt_params_check(params, err, len);
}


/* ---------------------------------------------------------------------- */
/* Measurements and output, in ucx_perftest's format                      */

static void pt_request_cb(psel_request_t *request, ucs_status_t status,
                          void *arg)
{
}

static void pt_progress_cb(void *arg)
{
    psel_worker_progress((psel_worker_h)arg);
}

/*
 * Wait for @a req and free it. Gives up when nothing completes for
 * PT_TIMEOUT_SEC or when the peer's control connection closes.
 */
static ucs_status_t pt_wait(pt_run_t *run, psel_request_t *req,
                            psel_recv_info_t *info, const char *what)
{
    double deadline  = 0;
    unsigned spins   = 0;
    ucs_status_t status;
    double now;

    if (req == NULL) {
        return UCS_OK;
    }

    while ((status = psel_request_test(req, info)) == UCS_INPROGRESS) {
        psel_worker_progress(run->worker);
        if (++spins < PT_SPINS_PER_CHECK) {
            continue;
        }

        spins = 0;
        now   = psel_oob_time();
        if (deadline == 0) {
            deadline = now + PT_TIMEOUT_SEC;
        } else if (now > deadline) {
            PT_ERR("%s did not complete within %.0f "
                    "seconds\n", what, PT_TIMEOUT_SEC);
            status = UCS_ERR_TIMED_OUT;
            break;
        }

        if (psel_oob_peer_closed(&run->oob)) {
            PT_ERR("the peer closed the control "
                    "connection while a %s was in progress\n", what);
            status = UCS_ERR_CONNECTION_RESET;
            break;
        }
    }

    psel_request_free(req);
    if ((status != UCS_OK) && (status != UCS_ERR_TIMED_OUT) &&
        (status != UCS_ERR_CONNECTION_RESET)) {
        PT_ERR("%s failed: %s\n", what,
                ucs_status_string(status));
    }
    return status;
}

/* Wait for a receive and check it got a whole message of @a length. */
static ucs_status_t pt_wait_recv(pt_run_t *run, psel_request_t *req,
                                 size_t length, const char *what)
{
    psel_recv_info_t info = {0, length};
    ucs_status_t status;

    status = pt_wait(run, req, &info, what);
    if ((status == UCS_OK) && (info.length != length)) {
        PT_ERR("%s got %zu bytes, expected %zu\n",
                what, info.length, length);
        status = UCS_ERR_MESSAGE_TRUNCATED;
    }
    return status;
}

static void pt_ring_push(pt_run_t *run, psel_request_t *req)
{
    run->ring[(run->ring_head + run->ring_count) % run->ring_size] = req;
    ++run->ring_count;
}

static psel_request_t *pt_ring_pop(pt_run_t *run)
{
    psel_request_t *req = run->ring[run->ring_head];

    run->ring_head = (run->ring_head + 1) % run->ring_size;
    --run->ring_count;
    return req;
}

/* After an error: release what is still outstanding (it ends on its own). */
static void pt_ring_abandon(pt_run_t *run)
{
    while (run->ring_count > 0) {
        psel_request_free(pt_ring_pop(run));
    }
}

/* tag_lat, client: send, post the receive of the reply, wait for both; one
 * round trip an iteration. The order is libperf's (ucx_perftest): the
 * receive is posted while the message flies, off the round trip. */
static ucs_status_t pt_lat_client(pt_run_t *run, uint64_t iters,
                                  int measured)
{
    size_t size = run->params.size;
    psel_request_t *rreq, *sreq;
    ucs_status_t status;
    uint64_t i;

    for (i = 0; i < iters; ++i) {
        sreq = psel_tag_send_nb(run->ep, run->sbuf, size, PT_TAG_DATA,
                                pt_request_cb, NULL);
        rreq = psel_tag_recv_nb(run->worker, run->rbuf, size, PT_TAG_REPLY,
                                run->recv_mask, pt_request_cb, NULL);
        status = pt_wait(run, sreq, NULL, "send");
        if (status != UCS_OK) {
            psel_request_free(rreq);
            return status;
        }

        status = pt_wait_recv(run, rreq, size, "receive of the reply");
        if (status != UCS_OK) {
            return status;
        }

        if (measured && (run->on_iter != NULL)) {
            run->on_iter(run->on_iter_arg, size);
        }
    }
    return UCS_OK;
}

/* tag_lat, server: receive, reply; as libperf, the receive is posted after
 * the previous reply went out. */
static ucs_status_t pt_lat_server(pt_run_t *run, uint64_t iters)
{
    size_t size = run->params.size;
    psel_request_t *rreq, *sreq;
    ucs_status_t status;
    uint64_t i;

    for (i = 0; i < iters; ++i) {
        rreq   = psel_tag_recv_nb(run->worker, run->rbuf, size, PT_TAG_DATA,
                                  run->recv_mask, pt_request_cb, NULL);
        status = pt_wait_recv(run, rreq, size, "receive");
        if (status != UCS_OK) {
            return status;
        }

        sreq   = psel_tag_send_nb(run->ep, run->sbuf, size, PT_TAG_REPLY,
                                  pt_request_cb, NULL);
        status = pt_wait(run, sreq, NULL, "send of the reply");
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

/* tag_bw, client: keep up to -O sends in flight, then wait for the ack. */
static ucs_status_t pt_bw_client(pt_run_t *run, uint64_t iters,
                                 int measured)
{
    size_t size = run->params.size;
    psel_request_t *areq, *req;
    ucs_status_t status;
    uint64_t i;

    run->ack = 0;
    areq     = psel_tag_recv_nb(run->worker, &run->ack, sizeof(run->ack),
                                PT_TAG_ACK, PT_TAG_MASK_FULL, pt_request_cb,
                                NULL);

    for (i = 0; i < iters; ++i) {
        if (run->ring_count == run->window) {
            status = pt_wait(run, pt_ring_pop(run), NULL, "send");
            if (status != UCS_OK) {
                goto err;
            }
        }

        req = psel_tag_send_nb(run->ep, run->sbuf, size, PT_TAG_DATA,
                               pt_request_cb, NULL);
        if (req != NULL) {
            pt_ring_push(run, req);
        }

        if (measured && (run->on_iter != NULL)) {
            run->on_iter(run->on_iter_arg, size);
        }
    }

    while (run->ring_count > 0) {
        status = pt_wait(run, pt_ring_pop(run), NULL, "send");
        if (status != UCS_OK) {
            goto err;
        }
    }

    status = pt_wait_recv(run, areq, sizeof(run->ack),
                          "receive of the server's acknowledgement");
    if (status != UCS_OK) {
        return status;
    }

    if (pt_get((const uint8_t*)&run->ack, 8) != iters) {
        PT_ERR("the server received %llu messages, "
                "%llu were sent\n",
                (unsigned long long)pt_get((const uint8_t*)&run->ack, 8),
                (unsigned long long)iters);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;

err:
    pt_ring_abandon(run);
    if (areq != NULL) {
        psel_request_free(areq);
    }
    return status;
}

/* tag_bw, server: keep up to -O receives posted, then acknowledge. */
static ucs_status_t pt_bw_server(pt_run_t *run, uint64_t iters)
{
    size_t size     = run->params.size;
    uint64_t posted = 0, done = 0;
    psel_request_t *req;
    ucs_status_t status;

    while (done < iters) {
        while ((run->ring_count < run->window) && (posted < iters)) {
            req = psel_tag_recv_nb(run->worker, run->rbuf, size, PT_TAG_DATA,
                                   run->recv_mask, pt_request_cb, NULL);
            ++posted;
            if (req != NULL) {
                pt_ring_push(run, req);
            } else {
                ++done;
            }
        }

        if (run->ring_count > 0) {
            status = pt_wait_recv(run, pt_ring_pop(run), size, "receive");
            if (status != UCS_OK) {
                pt_ring_abandon(run);
                return status;
            }
            ++done;
        }
    }

    pt_put((uint8_t*)&run->ack, done, 8);
    req = psel_tag_send_nb(run->ep, &run->ack, sizeof(run->ack), PT_TAG_ACK,
                           pt_request_cb, NULL);
    return pt_wait(run, req, NULL, "send of the acknowledgement");
}

ucs_status_t pt_run_phase(pt_run_t *run, int is_client, uint64_t iters,
                          int measured)
{
    if (run->params.test == PT_TEST_TAG_LAT) {
        return is_client ? pt_lat_client(run, iters, measured) :
                           pt_lat_server(run, iters);
    }
    return is_client ? pt_bw_client(run, iters, measured) :
                       pt_bw_server(run, iters);
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


/* ---------------------------------------------------------------------- */
/* Setup and the two roles                                                */
/* ---------------------------------------------------------------------- */

ucs_status_t pt_prepare(pt_run_t *run)
{
    size_t size     = run->params.size ? run->params.size : 1;
    unsigned window = pt_window(&run->params);
    psel_request_t **ring;

    run->window    = window;
    run->recv_mask = (run->params.flags & PT_FLAG_WILDCARD) ? 0 :
                     PT_TAG_MASK_FULL;
    if (window > run->ring_size) {
        ring = realloc(run->ring, window * sizeof(*ring));
        if (ring == NULL) {
            goto err_nomem;
        }
        run->ring      = ring;
        run->ring_size = window;
    }
    run->ring_head = run->ring_count = 0;

    if (size <= run->buf_size) {
        return UCS_OK;
    }
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

/* Context, worker, address exchange, endpoint; the client sends first. */
ucs_status_t pt_connect(pt_run_t *run, int is_client)
{
    void *local = NULL, *remote = NULL;
    size_t local_len, remote_len;
    ucs_status_t status;

    status = psel_context_create(&run->context);
    if (status != UCS_OK) {
        PT_ERR("cannot create the protosel context: "
                "%s\n", ucs_status_string(status));
        return status;
    }

    status = psel_worker_create(run->context, &run->worker);
    if (status != UCS_OK) {
        PT_ERR("cannot create the worker: %s\n",
                ucs_status_string(status));
        return status;
    }

    run->oob.progress     = pt_progress_cb;
    run->oob.progress_arg = run->worker;

    status = psel_worker_get_address(run->worker, &local, &local_len);
    if (status != UCS_OK) {
        PT_ERR("cannot get the worker address: %s\n",
                ucs_status_string(status));
        return status;
    }

    if (is_client) {
        status = psel_oob_send_blob(&run->oob, local, local_len);
        if (status == UCS_OK) {
            status = psel_oob_recv_blob(&run->oob, "worker address",
                                        PT_MAX_ADDRESS_LEN, &remote,
                                        &remote_len);
        }
    } else {
        status = psel_oob_recv_blob(&run->oob, "worker address",
                                    PT_MAX_ADDRESS_LEN, &remote, &remote_len);
        if (status == UCS_OK) {
            status = psel_oob_send_blob(&run->oob, local, local_len);
        }
    }
    free(local);
    if (status != UCS_OK) {
        return status;
    }

    status = psel_ep_create(run->worker, remote, remote_len, &run->ep);
    free(remote);
    if (status != UCS_OK) {
        PT_ERR("cannot connect to the peer's worker "
                "address: %s\n", ucs_status_string(status));
        return status;
    }

    return pt_prepare(run);
}

void pt_disconnect(pt_run_t *run)
{
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

void pt_cleanup(pt_run_t *run)
{
    pt_disconnect(run);
    free(run->ring);
    free(run->sbuf);
    free(run->rbuf);
    psel_oob_close(&run->oob);
}

/* Warm-up, the measured run between two barriers, and the last barrier. */


/* ---------------------------------------------------------------------- */
/* Calibration session                                                    */
/* ---------------------------------------------------------------------- */

#define PT_SESSION_MAX_SETTINGS_LEN 4096u
#define PT_SESSION_MAX_REPEATS      1000u
#define PT_SETTING_PREFIX           "UCX_PSEL_"

enum {
    PT_CMD_CONFIGURE = 1, /* blob: settings; reply: verdict + reason blob */
    PT_CMD_MEASURE   = 2, /* params + repeats; then warm-up and phases */
    PT_CMD_END       = 3
};

/* The settings this process applied last, so the next ones replace them. */
static char pt_applied_settings[PT_SESSION_MAX_SETTINGS_LEN + 1];

/* Each line "UCX_PSEL_NAME=value", printable, no spaces; 0 or -1 + err. */
static int pt_settings_check(const char *settings, size_t len, char *err,
                             size_t max)
{
    const char *line = settings, *end = settings + len, *eol, *p;
    unsigned lineno  = 1;

    if (len > PT_SESSION_MAX_SETTINGS_LEN) {
        snprintf(err, max, "settings of %zu bytes, at most %u", len,
                 PT_SESSION_MAX_SETTINGS_LEN);
        return -1;
    }
    for (; line < end; line = eol + 1, ++lineno) {
        eol = memchr(line, '\n', end - line);
        eol = (eol != NULL) ? eol : end;
        if (eol == line) {
            continue;
        }
        if (((size_t)(eol - line) <= strlen(PT_SETTING_PREFIX)) ||
            strncmp(line, PT_SETTING_PREFIX, strlen(PT_SETTING_PREFIX))) {
            snprintf(err, max, "setting %u does not start with %s", lineno,
                     PT_SETTING_PREFIX);
            return -1;
        }
        for (p = line; (p < eol) && (*p != '='); ++p) {
            if (!(((*p >= 'A') && (*p <= 'Z')) || ((*p >= '0') && (*p <= '9')) ||
                  (*p == '_'))) {
                snprintf(err, max, "setting %u: bad character 0x%02x in the "
                         "name", lineno, (unsigned char)*p);
                return -1;
            }
        }
        if (p == eol) {
            snprintf(err, max, "setting %u has no '='", lineno);
            return -1;
        }
        for (++p; p < eol; ++p) {
            if ((*p <= ' ') || (*p > '~')) {
                snprintf(err, max, "setting %u: bad character 0x%02x in the "
                         "value", lineno, (unsigned char)*p);
                return -1;
            }
        }
    }
    return 0;
}

/* Unset the previous settings, set these (already checked). */
static void pt_settings_apply(const char *settings)
{
    char buf[PT_SESSION_MAX_SETTINGS_LEN + 1];
    char *line, *save, *eq;

    strcpy(buf, pt_applied_settings);
    for (line = strtok_r(buf, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        eq = strchr(line, '=');
        *eq = '\0';
        unsetenv(line);
    }

    snprintf(pt_applied_settings, sizeof(pt_applied_settings), "%s",
             settings);
    strcpy(buf, settings);
    for (line = strtok_r(buf, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        eq    = strchr(line, '=');
        *eq++ = '\0';
        setenv(line, eq, 1);
    }
}

static ucs_status_t pt_send_cmd(pt_run_t *run, uint32_t cmd)
{
    uint8_t wire[4];

    pt_put(wire, cmd, sizeof(wire));
    return psel_oob_send(&run->oob, wire, sizeof(wire));
}

/* Warm-up, then @a repeats phases between barriers; the client times them. */
static ucs_status_t pt_measure_phases(pt_run_t *run, int is_client,
                                      unsigned repeats, double *times)
{
    ucs_status_t status;
    unsigned factor = pt_tests[run->params.test].pingpong ? 2 : 1;
    double start;
    unsigned i;

    status = pt_prepare(run);
    if (status == UCS_OK) {
        status = pt_warmup(run, is_client);
    }
    for (i = 0; (status == UCS_OK) && (i < repeats); ++i) {
        /* the barrier leaves the peer blocked in poll(); one untimed
         * iteration gets both sides spinning before the clock starts, so
         * the peer's wake-up is not counted */
        status = psel_oob_barrier(&run->oob);
        if (status == UCS_OK) {
            status = pt_run_phase(run, is_client, 1, 0);
        }
        if (status != UCS_OK) {
            break;
        }
        start  = psel_oob_time();
        status = pt_run_phase(run, is_client, run->params.iters, 0);
        if (is_client) {
            times[i] = (psel_oob_time() - start) /
                       ((double)run->params.iters * factor);
        }
    }
    if (status == UCS_OK) {
        status = psel_oob_barrier(&run->oob);
    }
    return status;
}

static ucs_status_t pt_serve_configure(pt_run_t *run)
{
    char err[256] = "", *settings = NULL;
    uint32_t verdict;
    uint8_t wire[4];
    size_t len;
    ucs_status_t status;

    status = psel_oob_recv_blob(&run->oob, "settings",
                                PT_SESSION_MAX_SETTINGS_LEN, (void**)&settings,
                                &len);
    if (status != UCS_OK) {
        return status;
    }

    verdict = (pt_settings_check(settings, len, err, sizeof(err)) != 0);
    if (verdict) {
        PT_ERR("rejected the client's settings: %s\n", err);
    } else {
        pt_settings_apply(settings);
    }
    free(settings);

    pt_put(wire, verdict, sizeof(wire));
    status = psel_oob_send(&run->oob, wire, sizeof(wire));
    if (status == UCS_OK) {
        status = psel_oob_send_blob(&run->oob, err, strlen(err));
    }
    if ((status != UCS_OK) || verdict) {
        return (status != UCS_OK) ? status : UCS_ERR_INVALID_PARAM;
    }

    pt_disconnect(run);
    return pt_connect(run, 0);
}

static ucs_status_t pt_serve_measure(pt_run_t *run)
{
    uint8_t wire[PT_WIRE_PARAMS_SIZE + 4];
    char err[256];
    unsigned repeats;
    ucs_status_t status;

    status = psel_oob_recv(&run->oob, wire, sizeof(wire));
    if (status != UCS_OK) {
        return status;
    }
    if (pt_params_unpack(wire, &run->params, err, sizeof(err)) != 0) {
        PT_ERR("rejected a measurement: %s\n", err);
        return UCS_ERR_INVALID_PARAM;
    }
    repeats = pt_get(wire + PT_WIRE_PARAMS_SIZE, 4);
    if ((run->params.test >= PT_TEST_CALIBRATE) || (repeats == 0) ||
        (repeats > PT_SESSION_MAX_REPEATS) || (run->ep == NULL)) {
        PT_ERR("rejected a measurement: test %u, %u repeats%s\n",
               run->params.test, repeats,
               (run->ep == NULL) ? ", before any configuration" : "");
        return UCS_ERR_INVALID_PARAM;
    }
    return pt_measure_phases(run, 0, repeats, NULL);
}

ucs_status_t pt_session_serve(pt_run_t *run)
{
    ucs_status_t status;
    uint8_t wire[4];
    uint32_t cmd;

    for (;;) {
        status = psel_oob_recv(&run->oob, wire, sizeof(wire));
        if (status != UCS_OK) {
            return status;
        }
        cmd = pt_get(wire, sizeof(wire));
        switch (cmd) {
        case PT_CMD_CONFIGURE:
            status = pt_serve_configure(run);
            break;
        case PT_CMD_MEASURE:
            status = pt_serve_measure(run);
            break;
        case PT_CMD_END:
            return UCS_OK;
        default:
            PT_ERR("unknown calibration command %u from the client\n", cmd);
            return UCS_ERR_INVALID_PARAM;
        }
        if (status != UCS_OK) {
            return status;
        }
    }
}

ucs_status_t pt_session_configure(pt_run_t *run, const char *settings)
{
    size_t len  = strlen(settings);
    void *reason = NULL;
    size_t reason_len;
    char err[256];
    uint8_t wire[4];
    ucs_status_t status;

    if (pt_settings_check(settings, len, err, sizeof(err)) != 0) {
        PT_ERR("bad settings: %s\n", err);
        return UCS_ERR_INVALID_PARAM;
    }

    status = pt_send_cmd(run, PT_CMD_CONFIGURE);
    if (status == UCS_OK) {
        status = psel_oob_send_blob(&run->oob, settings, len);
    }
    if (status == UCS_OK) {
        status = psel_oob_recv(&run->oob, wire, sizeof(wire));
    }
    if (status == UCS_OK) {
        status = psel_oob_recv_blob(&run->oob, "reply", PT_MAX_REPLY_LEN,
                                    &reason, &reason_len);
    }
    if (status != UCS_OK) {
        return status;
    }
    if (pt_get(wire, sizeof(wire)) != 0) {
        PT_ERR("the server rejected the settings: %.*s\n", (int)reason_len,
               (char*)reason);
        free(reason);
        return UCS_ERR_INVALID_PARAM;
    }
    free(reason);

    pt_settings_apply(settings);
    pt_disconnect(run);
    return pt_connect(run, 1);
}

ucs_status_t pt_session_measure(pt_run_t *run, pt_test_id_t test, size_t size,
                                uint64_t iters, unsigned repeats,
                                double *times)
{
    uint8_t wire[PT_WIRE_PARAMS_SIZE + 4];
    pt_params_t params = {
        .test   = test,
        .size   = size,
        .iters  = iters,
        .warmup = ucs_max(iters / 4, 1)
    };
    char err[256];
    ucs_status_t status;

    if ((pt_params_check(&params, err, sizeof(err)) != 0) || (repeats == 0) ||
        (repeats > PT_SESSION_MAX_REPEATS)) {
        PT_ERR("bad measurement (%u repeats): %s\n", repeats, err);
        return UCS_ERR_INVALID_PARAM;
    }

    pt_params_pack(&params, wire);
    pt_put(wire + PT_WIRE_PARAMS_SIZE, repeats, 4);
    status = pt_send_cmd(run, PT_CMD_MEASURE);
    if (status == UCS_OK) {
        status = psel_oob_send(&run->oob, wire, sizeof(wire));
    }
    if (status != UCS_OK) {
        return status;
    }

    run->params = params;
    return pt_measure_phases(run, 1, repeats, times);
}

ucs_status_t pt_session_end(pt_run_t *run)
{
    return pt_send_cmd(run, PT_CMD_END);
}
