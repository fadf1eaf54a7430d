/*
 * The measuring loops of psel_perftest and psel_calibrate (see
 * perftest_run.h): tag_lat and tag_bw on both sides, and the warm-up.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest_run.h"

#include <stdio.h>

/* ---------------------------------------------------------------------- */
/* The tag_lat and tag_bw loops of both sides, and the warm-up            */
/* ---------------------------------------------------------------------- */

static void pt_request_cb(psel_request_t *request, ucs_status_t status,
                          void *arg)
{
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
        sreq = psel_tag_send_nb(run->ep, pt_buf(run, run->sbuf, i), size,
                                PT_TAG_DATA, pt_request_cb, NULL);
        rreq = psel_tag_recv_nb(run->worker, pt_buf(run, run->rbuf, i), size,
                                PT_TAG_REPLY, run->recv_mask, pt_request_cb,
                                NULL);
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
        rreq   = psel_tag_recv_nb(run->worker, pt_buf(run, run->rbuf, i), size,
                                  PT_TAG_DATA, run->recv_mask, pt_request_cb,
                                  NULL);
        status = pt_wait_recv(run, rreq, size, "receive");
        if (status != UCS_OK) {
            return status;
        }

        sreq   = psel_tag_send_nb(run->ep, pt_buf(run, run->sbuf, i), size,
                                  PT_TAG_REPLY, pt_request_cb, NULL);
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

        req = psel_tag_send_nb(run->ep, pt_buf(run, run->sbuf, i), size,
                               PT_TAG_DATA, pt_request_cb, NULL);
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

    if (psel_oob_get_le((const uint8_t*)&run->ack, 8) != iters) {
        PT_ERR("the server received %llu messages, "
                "%llu were sent\n",
                (unsigned long long)psel_oob_get_le((const uint8_t*)&run->ack, 8),
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
            req = psel_tag_recv_nb(run->worker,
                                   pt_buf(run, run->rbuf, posted), size,
                                   PT_TAG_DATA, run->recv_mask, pt_request_cb,
                                   NULL);
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

    psel_oob_put_le((uint8_t*)&run->ack, done, 8);
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
