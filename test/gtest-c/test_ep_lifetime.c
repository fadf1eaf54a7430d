/*
 * Endpoint lifetime under callbacks and transports that complete late, on
 * two workers of this process (tcp over lo):
 *  - an endpoint force-closed, or its worker destroyed, while rendezvous
 *    data is in flight: tcp purges the operations when the UCT endpoints
 *    go, and their completions must not put the dying endpoint back on the
 *    worker's list of endpoints with sends to retry;
 *  - a completion callback that closes its own endpoint (or another one)
 *    while the worker walks its pending sends, its failed endpoints or its
 *    flushing endpoints.
 * Each of these freed an endpoint still in use; the ASan job runs this
 * file, where a use after free aborts.
 */
#include "test_util.h"

#include <core/core_int.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define LT_BIG      (64ul << 20) /* large enough to be in flight a while */
#define LT_WAIT_SEC 10.0


typedef struct {
    psel_context_h context;
    psel_worker_h  a;          /* sends to the peers */
    psel_worker_h  peers[2];   /* b and c */
    void          *address[2];
    size_t         address_length[2];
} lt_pair_t;



static void lt_open(lt_pair_t *p, const char *tls, const char *protos,
                    int p2p)
{
    setenv("UCX_PSEL_TLS", tls, 1);
    setenv("UCX_PSEL_NET_DEVICES", "lo", 1);
    if (protos != NULL) {
        setenv("UCX_PSEL_PROTOS", protos, 1);
    } else {
        unsetenv("UCX_PSEL_PROTOS");
    }
    if (p2p) {
        /* tcp lanes connect endpoint to endpoint: sends wait for wireup */
        setenv("UCX_PSEL_WIREUP_P2P_TLS", "tcp", 1);
    } else {
        unsetenv("UCX_PSEL_WIREUP_P2P_TLS");
    }
    unsigned i;

    assert_int_equal(psel_context_create(&p->context), UCS_OK);
    assert_int_equal(psel_worker_create(p->context, &p->a), UCS_OK);
    for (i = 0; i < 2; ++i) {
        assert_int_equal(psel_worker_create(p->context, &p->peers[i]),
                         UCS_OK);
        assert_int_equal(psel_worker_get_address(p->peers[i], &p->address[i],
                                                 &p->address_length[i]),
                         UCS_OK);
    }
}

/* An endpoint of a to peer @a i (0: b, 1: c) */
static psel_ep_h lt_ep(lt_pair_t *p, unsigned i)
{
    psel_ep_h ep;

    assert_int_equal(psel_ep_create(p->a, p->address[i],
                                    p->address_length[i], &ep), UCS_OK);
    return ep;
}

static void lt_close(lt_pair_t *p)
{
    unsigned i;

    if (p->a != NULL) {
        psel_worker_destroy(p->a);
    }
    for (i = 0; i < 2; ++i) {
        psel_worker_destroy(p->peers[i]);
        free(p->address[i]);
    }
    psel_context_destroy(p->context);
    unsetenv("UCX_PSEL_TLS");
    unsetenv("UCX_PSEL_NET_DEVICES");
    unsetenv("UCX_PSEL_PROTOS");
    unsetenv("UCX_PSEL_WIREUP_P2P_TLS");
}

static void lt_progress(lt_pair_t *p, unsigned calls)
{
    while (calls-- > 0) {
        if (p->a != NULL) {
            psel_worker_progress(p->a);
        }
        psel_worker_progress(p->peers[0]);
        psel_worker_progress(p->peers[1]);
    }
}

/* Progress all until @a flag is set (or the bound); @return the flag. */
static int lt_progress_until(lt_pair_t *p, const int *flag)
{
    double deadline = psel_time_sec() + LT_WAIT_SEC;

    while (!*flag && (psel_time_sec() < deadline)) {
        lt_progress(p, 1);
    }
    return *flag;
}

static unsigned lt_num_eps(psel_worker_h worker)
{
    return ucs_list_length(&worker->eps);
}

/* ---- rendezvous data in flight when the endpoint or worker goes ---- */

typedef struct {
    int          called;
    ucs_status_t status;
} lt_result_t;

static void lt_record(psel_request_t *req, ucs_status_t status, void *arg)
{
    lt_result_t *r = arg;

    ++r->called;
    r->status = status;
}

static void lt_record_recv(psel_request_t *req, ucs_status_t status,
                           const psel_recv_info_t *info, void *arg)
{
    lt_record(req, status, arg);
}

/* Progress all until @a worker has an endpoint waiting for its linger
 * (or the bound). */
static int lt_progress_until_lingering(lt_pair_t *p, psel_worker_h worker)
{
    double deadline = psel_time_sec() + LT_WAIT_SEC;

    while ((worker->num_lingering_eps == 0) && (psel_time_sec() < deadline)) {
        lt_progress(p, 1);
    }
    return worker->num_lingering_eps == 1;
}

/* Progress all until @a worker has no endpoint (or the bound). */
static int lt_progress_until_no_eps(lt_pair_t *p, psel_worker_h worker)
{
    double deadline = psel_time_sec() + LT_WAIT_SEC;

    while ((lt_num_eps(worker) > 0) && (psel_time_sec() < deadline)) {
        lt_progress(p, 1);
    }
    return lt_num_eps(worker) == 0;
}

/* Progress until @a req has an operation in flight (the tcp transport
 * completes it later). */
static int lt_progress_until_in_flight(lt_pair_t *p, psel_request_t *req)
{
    double deadline = psel_time_sec() + LT_WAIT_SEC;

    while ((req->proto.comp.count == 0) && (psel_time_sec() < deadline)) {
        lt_progress(p, 1);
    }
    return req->proto.comp.count > 0;
}

/* a sends LT_BIG bytes to each of its @a num_peers peers with @a protos and
 * force-closes the endpoints, or (@a close_worker) destroys the worker,
 * while operations of every send are in flight */
static void lt_rndv_in_flight(const char *protos, unsigned num_peers,
                              int close_worker)
{
    uint8_t *sbuf = calloc(1, LT_BIG), *rbuf[2];
    lt_result_t sent[2] = {{0}}, received[2] = {{0}};
    double linger_until;
    psel_ep_h peer_ep;
    psel_request_t *sreq[2], *rreq[2];
    lt_pair_t p = {0};
    psel_ep_h ep[2];
    unsigned i;

    assert_non_null(sbuf);
    lt_open(&p, "tcp", protos, 0);
    for (i = 0; i < num_peers; ++i) {
        rbuf[i] = malloc(LT_BIG);
        assert_non_null(rbuf[i]);
        ep[i]   = lt_ep(&p, i);
        rreq[i] = psel_tag_recv_nb(p.peers[i], rbuf[i], LT_BIG, 1, UINT64_MAX,
                                   lt_record_recv, &received[i]);
        sreq[i] = psel_tag_send_nb(ep[i], sbuf, LT_BIG, 1, lt_record,
                                   &sent[i]);
        assert_true(UCS_PTR_IS_PTR(sreq[i]));
        assert_true(lt_progress_until_in_flight(&p, sreq[i]));
        psel_request_free(sreq[i]); /* the callback says how it ended */
    }
    for (i = 0; i < num_peers; ++i) {
        assert_int_equal(sent[i].called, 0); /* 64 MiB: still running */
    }

    if (close_worker) {
        psel_worker_destroy(p.a); /* warns: the endpoints are still open */
        p.a = NULL;
    } else {
        for (i = 0; i < num_peers; ++i) {
            assert_null(psel_ep_close_nb(ep[i], PSEL_EP_CLOSE_FORCE, NULL,
                                         NULL));
        }
        /* the purged operations' completions queued nothing */
        assert_true(ucs_list_is_empty(&p.a->pending_eps));
        assert_int_equal(lt_num_eps(p.a), 0);
        assert_int_equal(kh_size(&p.a->rndv.sends), 0);
    }
    for (i = 0; i < num_peers; ++i) {
        assert_int_equal(sent[i].called, 1);
        assert_int_equal(sent[i].status, UCS_ERR_CANCELED);
    }
    print_message("    %-8s %s with data in flight to %u peer(s): the sends "
                  "%s\n", protos, close_worker ? "worker destroyed" :
                  "endpoints force-closed", num_peers,
                  ucs_status_string(sent[0].status));

    lt_progress(&p, 1000); /* nothing of the endpoints is left to run */
    if (!close_worker) {
        /* the peers' endpoints made by wireup fail at once but outlive the
         * forced close by their linger (libuct 1.13.1's tcp, wireup.c),
         * then go */
        for (i = 0; i < num_peers; ++i) {
            assert_true(lt_progress_until_lingering(&p, p.peers[i]));
            assert_int_equal(lt_num_eps(p.peers[i]), 1);
            peer_ep = ucs_list_head(&p.peers[i]->eps, struct psel_ep, list);
            assert_true(UCS_STATUS_IS_ERR(peer_ep->status));
            linger_until = peer_ep->linger_until;
            assert_true(linger_until > 0);
            assert_true(lt_progress_until_no_eps(&p, p.peers[i]));
            assert_true(psel_time_sec() >= linger_until); /* not before */
            assert_int_equal(p.peers[i]->num_lingering_eps, 0);
            assert_int_equal(p.peers[i]->num_failed_eps, 0);
        }
    }
    for (i = 0; i < num_peers; ++i) {
        psel_request_free(rreq[i]);
    }
    lt_close(&p);
    for (i = 0; i < num_peers; ++i) {
        /* the receive ended, at the latest with its worker */
        assert_int_equal(received[i].called, 1);
        assert_true(UCS_STATUS_IS_ERR(received[i].status));
        free(rbuf[i]);
    }
    free(sbuf);
}

static void test_force_close_rndv_put_in_flight(void **state)
{
    lt_rndv_in_flight("rndv/put", 1, 0);
}

static void test_force_close_rndv_am_in_flight(void **state)
{
    lt_rndv_in_flight("rndv/am", 1, 0);
}

/* two endpoints: the first one's teardown must not leave it on the list
 * the second one's teardown unlinks itself from */
static void test_worker_destroy_rndv_put_in_flight(void **state)
{
    lt_rndv_in_flight("rndv/put", 2, 1);
}

static void test_worker_destroy_rndv_am_in_flight(void **state)
{
    lt_rndv_in_flight("rndv/am", 2, 1);
}

/* ---- callbacks that close endpoints while the worker walks them ---- */

typedef struct {
    psel_ep_h    close[2];   /* endpoints the callback force-closes */
    int          called;
    ucs_status_t status;
} lt_closer_t;

static void lt_close_cb(psel_request_t *req, ucs_status_t status, void *arg)
{
    lt_closer_t *c = arg;
    unsigned i;

    ++c->called;
    c->status = status;
    for (i = 0; i < 2; ++i) {
        if (c->close[i] != NULL) {
            psel_ep_close_nb(c->close[i], PSEL_EP_CLOSE_FORCE, NULL, NULL);
            c->close[i] = NULL;
        }
    }
}

/* A send that waited for wireup completes from the pending walk, and its
 * callback closes its endpoint, which has another send waiting. */
static void test_callback_closes_ep_in_pending_walk(void **state)
{
    lt_closer_t first = {{NULL}}, second = {{NULL}}, other = {{NULL}};
    psel_request_t *reqs[3];
    lt_pair_t p = {0};
    psel_ep_h ep, ep2;

    lt_open(&p, "tcp", NULL, 1);
    ep  = lt_ep(&p, 0);
    ep2 = lt_ep(&p, 1);
    assert_false(psel_ep_is_ready(ep)); /* waits for the wireup reply */
    first.close[0] = ep;
    reqs[0] = psel_tag_send_nb(ep, "hello", 6, 1, lt_close_cb, &first);
    reqs[1] = psel_tag_send_nb(ep, "again", 6, 2, lt_close_cb, &second);
    reqs[2] = psel_tag_send_nb(ep2, "other", 6, 3, lt_close_cb, &other);
    assert_int_equal(psel_request_test(reqs[0], NULL), UCS_INPROGRESS);
    assert_int_equal(psel_request_test(reqs[2], NULL), UCS_INPROGRESS);
    psel_request_free(reqs[0]);
    psel_request_free(reqs[1]);
    psel_request_free(reqs[2]);

    assert_true(lt_progress_until(&p, &other.called));
    assert_true(lt_progress_until(&p, &first.called));
    assert_int_equal(first.status, UCS_OK);
    assert_int_equal(second.called, 1);
    assert_int_equal(second.status, UCS_ERR_CANCELED);
    assert_int_equal(other.status, UCS_OK);
    lt_progress(&p, 100);
    assert_true(ucs_list_is_empty(&p.a->pending_eps));
    assert_int_equal(lt_num_eps(p.a), 1);
    psel_ep_destroy(ep2);
    lt_close(&p);
}

/* The worker handles two failed endpoints; the first one's failing send
 * closes both from its callback. */
static void test_callback_closes_eps_in_failure_walk(void **state)
{
    lt_closer_t c1 = {{NULL}}, c2 = {{NULL}};
    psel_request_t *r1, *r2;
    lt_pair_t p = {0};
    psel_ep_h e1, e2;

    lt_open(&p, "tcp", NULL, 1);
    e1 = lt_ep(&p, 0);
    e2 = lt_ep(&p, 1);
    r1 = psel_tag_send_nb(e1, "one", 4, 1, lt_close_cb, &c1);
    r2 = psel_tag_send_nb(e2, "two", 4, 2, lt_close_cb, &c2);
    psel_request_free(r1);
    psel_request_free(r2);
    c1.close[0] = e1;
    c1.close[1] = e2;
    /* as UCT reports failed endpoints, before any progress */
    e1->status = UCS_ERR_CONNECTION_RESET;
    e2->status = UCS_ERR_CONNECTION_RESET;
    p.a->num_failed_eps += 2;
    psel_worker_progress(p.a);
    assert_int_equal(c1.called, 1);
    assert_int_equal(c1.status, UCS_ERR_CONNECTION_RESET);
    assert_int_equal(c2.called, 1);
    assert_true(UCS_STATUS_IS_ERR(c2.status));
    assert_int_equal(p.a->num_failed_eps, 0);
    assert_int_equal(lt_num_eps(p.a), 0);
    lt_progress(&p, 100);
    lt_close(&p);
}

/* Two endpoints flush; the first flush's callback closes the second,
 * whose flush then ends (canceled) in the middle of the walk. */
static void test_callback_closes_ep_in_flush_walk(void **state)
{
    lt_closer_t c1 = {{NULL}}, c2 = {{NULL}};
    psel_request_t *f1, *f2;
    lt_pair_t p = {0};
    psel_ep_h e1, e2;

    lt_open(&p, "tcp", NULL, 1);
    e1 = lt_ep(&p, 0);
    e2 = lt_ep(&p, 1);
    c1.close[0] = e2;
    f1 = psel_ep_flush_nb(e1, lt_close_cb, &c1);
    f2 = psel_ep_flush_nb(e2, lt_close_cb, &c2);
    psel_request_free(f1);
    psel_request_free(f2);
    assert_true(lt_progress_until(&p, &c1.called));
    assert_int_equal(c1.status, UCS_OK);
    assert_int_equal(c2.called, 1);
    assert_true((c2.status == UCS_OK) || (c2.status == UCS_ERR_CANCELED));
    assert_int_equal(p.a->num_flushing, 0);
    lt_progress(&p, 100);
    assert_int_equal(lt_num_eps(p.a), 1);
    psel_ep_destroy(e1);
    lt_close(&p);
}

/* A destroy whose failing sends' callback closes the same endpoint again. */
static void test_callback_closes_ep_being_destroyed(void **state)
{
    lt_closer_t c = {{NULL}};
    psel_request_t *r;
    lt_pair_t p = {0};
    psel_ep_h ep;

    lt_open(&p, "tcp", NULL, 1);
    ep        = lt_ep(&p, 0);
    r         = psel_tag_send_nb(ep, "x", 2, 1, lt_close_cb, &c);
    c.close[0] = ep;
    psel_request_free(r);
    psel_ep_destroy(ep);
    assert_int_equal(c.called, 1);
    assert_int_equal(c.status, UCS_ERR_CANCELED);
    assert_int_equal(lt_num_eps(p.a), 0);
    lt_progress(&p, 100);
    lt_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_force_close_rndv_put_in_flight),
        cmocka_unit_test(test_force_close_rndv_am_in_flight),
        cmocka_unit_test(test_worker_destroy_rndv_put_in_flight),
        cmocka_unit_test(test_worker_destroy_rndv_am_in_flight),
        cmocka_unit_test(test_callback_closes_ep_in_pending_walk),
        cmocka_unit_test(test_callback_closes_eps_in_failure_walk),
        cmocka_unit_test(test_callback_closes_ep_in_flush_walk),
        cmocka_unit_test(test_callback_closes_ep_being_destroyed)
    };

    setenv("UCX_PSEL_CALIBRATION", "none", 0);
    if (getenv("PSEL_TEST_FILTER") != NULL) {
        cmocka_set_test_filter(getenv("PSEL_TEST_FILTER")); /* by hand */
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
