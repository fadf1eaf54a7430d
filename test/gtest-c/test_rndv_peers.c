/*
 * Rendezvous between several workers of this process, where one peer
 * misbehaves or goes away while the others carry on:
 *  - a failed (not destroyed) peer's RTS matched by a receive must not hold
 *    up another peer's rendezvous: the receive fails with the endpoint's
 *    error at once, and the work queue moves past it;
 *  - a sender that force-closes its endpoint (its process stays alive, so
 *    no keepalive will notice) must not leave the receiver's receive
 *    hanging, in every mode, before and after it saw the receiver's
 *    answer.
 * posix (+cma for rndv/get) and tcp over lo.
 */
#include "test_util.h"

#include <core/core_int.h>
#include <ucp_proto_sel/proto_rndv_int.h> /* the event hook */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define PEERS_SIZE     (1ul << 20)
#define PEERS_WAIT_SEC 10.0
#define PEERS_MAX      3

typedef struct {
    psel_context_h context;
    unsigned       num;
    psel_worker_h  w[PEERS_MAX];
    void          *address[PEERS_MAX];
    size_t         address_length[PEERS_MAX];
} peers_t;

static void peers_open(peers_t *p, unsigned num, const char *tls,
                       const char *protos)
{
    unsigned i;

    setenv("UCX_PSEL_TLS", tls, 1);
    setenv("UCX_PSEL_NET_DEVICES", "lo", 1);
    setenv("UCX_PSEL_PROTOS", protos, 1);
    p->num = num;
    assert_int_equal(psel_context_create(&p->context), UCS_OK);
    for (i = 0; i < num; ++i) {
        assert_int_equal(psel_worker_create(p->context, &p->w[i]), UCS_OK);
        assert_int_equal(psel_worker_get_address(p->w[i], &p->address[i],
                                                 &p->address_length[i]),
                         UCS_OK);
    }
}

static void peers_close(peers_t *p)
{
    unsigned i;

    for (i = 0; i < p->num; ++i) {
        psel_worker_destroy(p->w[i]);
        free(p->address[i]);
    }
    psel_context_destroy(p->context);
    unsetenv("UCX_PSEL_TLS");
    unsetenv("UCX_PSEL_NET_DEVICES");
    unsetenv("UCX_PSEL_PROTOS");
}

/* An endpoint of worker @a from to worker @a to. */
static psel_ep_h peers_ep(peers_t *p, unsigned from, unsigned to)
{
    psel_ep_h ep;

    assert_int_equal(psel_ep_create(p->w[from], p->address[to],
                                    p->address_length[to], &ep), UCS_OK);
    return ep;
}

static void peers_progress(peers_t *p)
{
    unsigned i;

    for (i = 0; i < p->num; ++i) {
        psel_worker_progress(p->w[i]);
    }
}

/* Progress every worker until @a req completes (bounded); its status. */
static ucs_status_t peers_wait(peers_t *p, psel_request_t *req)
{
    double deadline = psel_time_sec() + PEERS_WAIT_SEC;

    while ((psel_request_test(req, NULL) == UCS_INPROGRESS) &&
           (psel_time_sec() < deadline)) {
        peers_progress(p);
    }
    return psel_request_test(req, NULL);
}

/* ---- a failed peer's matched RTS does not hold up another peer ---- */

enum { R = 0, F = 1, H = 2 }; /* receiver, failed peer, healthy peer */

static void failed_peer_hol(const char *tls, const char *protos)
{
    uint8_t *sbuf = calloc(1, PEERS_SIZE), *rbuf[2];
    psel_request_t *s_f, *s_h, *q_f, *q_h, *req;
    psel_ep_h r_to_f, f_to_r, h_to_r;
    ucs_status_t status;
    double start;
    peers_t p;

    assert_non_null(sbuf);
    rbuf[0] = malloc(PEERS_SIZE);
    rbuf[1] = malloc(PEERS_SIZE);
    assert_true((rbuf[0] != NULL) && (rbuf[1] != NULL));
    peers_open(&p, 3, tls, protos);
    r_to_f = peers_ep(&p, R, F); /* the user's: failure does not destroy it */
    f_to_r = peers_ep(&p, F, R);
    h_to_r = peers_ep(&p, H, R);

    /* one transfer from F: R's endpoint learns F's id (F announced) */
    req = psel_tag_recv_nb(p.w[R], rbuf[0], PEERS_SIZE, 9, UINT64_MAX, NULL,
                           NULL);
    s_f = psel_tag_send_nb(f_to_r, sbuf, PEERS_SIZE, 9, NULL, NULL);
    assert_int_equal(peers_wait(&p, req), UCS_OK);
    assert_int_equal(peers_wait(&p, s_f), UCS_OK);
    psel_request_free(req);
    psel_request_free(s_f);
    assert_int_not_equal(r_to_f->remote_id, 0);

    /* R's endpoint to F fails, as UCT reports it; R handles it and the
     * user keeps the endpoint */
    r_to_f->status = UCS_ERR_CONNECTION_RESET;
    ++p.w[R]->num_failed_eps;
    psel_worker_progress(p.w[R]);
    assert_true(r_to_f->failure_handled);

    /* then F's next RTS arrives and a receive matches it, before H's */
    s_f = psel_tag_send_nb(f_to_r, sbuf, PEERS_SIZE, 1, NULL, NULL);
    start = psel_time_sec();
    while ((psel_tm_num_unexpected(&p.w[R]->tm) == 0) &&
           (psel_time_sec() < start + PEERS_WAIT_SEC)) {
        peers_progress(&p);
    }
    assert_int_equal(psel_tm_num_unexpected(&p.w[R]->tm), 1);
    q_f = psel_tag_recv_nb(p.w[R], rbuf[0], PEERS_SIZE, 1, UINT64_MAX, NULL,
                           NULL);
    s_h = psel_tag_send_nb(h_to_r, sbuf, PEERS_SIZE, 2, NULL, NULL);
    q_h = psel_tag_recv_nb(p.w[R], rbuf[1], PEERS_SIZE, 2, UINT64_MAX, NULL,
                           NULL);

    start  = psel_time_sec();
    status = peers_wait(&p, q_h);
    print_message("    %-9s %-8s: the healthy peer's receive %s after %.3f s; "
                  "the failed peer's %s\n", tls, protos,
                  ucs_status_string(status), psel_time_sec() - start,
                  ucs_status_string(psel_request_test(q_f, NULL)));
    assert_int_equal(status, UCS_OK);
    assert_int_equal(peers_wait(&p, s_h), UCS_OK);
    /* the failed endpoint answers nothing: the receive fails with its
     * error, at once (not after the wait for a reply endpoint) */
    assert_int_equal(psel_request_test(q_f, NULL), UCS_ERR_CONNECTION_RESET);
    assert_int_equal(kh_size(&p.w[R]->rndv.recvs), 0);

    psel_request_free(q_f);
    psel_request_free(q_h);
    psel_request_free(s_h);
    psel_ep_destroy(f_to_r); /* its send waits for an answer: canceled */
    assert_int_equal(psel_request_test(s_f, NULL), UCS_ERR_CANCELED);
    psel_request_free(s_f);
    psel_ep_destroy(r_to_f);
    psel_ep_destroy(h_to_r);
    peers_close(&p);
    free(sbuf);
    free(rbuf[0]);
    free(rbuf[1]);
}

static void test_failed_peer_hol_posix(void **state)
{
    failed_peer_hol("posix", "rndv/am");
}

static void test_failed_peer_hol_tcp(void **state)
{
    failed_peer_hol("tcp", "rndv/put");
}

/* ---- a sender that force-closes leaves no receive hanging ---- */

static psel_rndv_event_t orphan_event;
static int               orphan_seen;

static void orphan_hook(psel_rndv_event_t event)
{
    if (event == orphan_event) {
        orphan_seen = 1;
    }
}

enum { SND = 0, RCV = 1 };

/* The sender force-closes its endpoint when @a event happened (after the
 * progress call it happened in); PSEL_RNDV_EVENT_MATCHED: right after the
 * receiver matched the RTS, before the receiver progresses. The receiver's
 * process (this one) stays alive, so only the sender can tell it. */
static void orphan(const char *tls, const char *protos,
                   psel_rndv_event_t event)
{
    uint8_t *sbuf = calloc(1, 4 * PEERS_SIZE), *rbuf = malloc(4 * PEERS_SIZE);
    ucs_status_t sent, received;
    psel_request_t *sreq, *rreq;
    double deadline;
    psel_ep_h ep;
    peers_t p;

    assert_true((sbuf != NULL) && (rbuf != NULL));
    peers_open(&p, 2, tls, protos);
    ep = peers_ep(&p, SND, RCV);
    orphan_event         = event;
    orphan_seen          = 0;
    psel_rndv_event_hook = orphan_hook;
    sreq = psel_tag_send_nb(ep, sbuf, 4 * PEERS_SIZE, 1, NULL, NULL);
    assert_true(UCS_PTR_IS_PTR(sreq));
    deadline = psel_time_sec() + PEERS_WAIT_SEC;
    if (event == PSEL_RNDV_EVENT_MATCHED) {
        /* the RTS waits unexpected; the receive matches it when posted */
        while ((psel_tm_num_unexpected(&p.w[RCV]->tm) == 0) &&
               (psel_time_sec() < deadline)) {
            peers_progress(&p);
        }
        rreq = psel_tag_recv_nb(p.w[RCV], rbuf, 4 * PEERS_SIZE, 1,
                                UINT64_MAX, NULL, NULL);
    } else {
        rreq = psel_tag_recv_nb(p.w[RCV], rbuf, 4 * PEERS_SIZE, 1,
                                UINT64_MAX, NULL, NULL);
        while (!orphan_seen && (psel_time_sec() < deadline)) {
            peers_progress(&p);
        }
    }
    psel_rndv_event_hook = NULL;
    assert_true(orphan_seen);
    sent = psel_request_test(sreq, NULL);
    psel_ep_close_nb(ep, PSEL_EP_CLOSE_FORCE, NULL, NULL);

    received = peers_wait(&p, rreq);
    print_message("    %-9s %-8s: sender force-closed at event %d (send %s "
                  "then %s): the receive %s\n", tls, protos, (int)event,
                  ucs_status_string(sent),
                  ucs_status_string(psel_request_test(sreq, NULL)),
                  ucs_status_string(received));
    assert_int_not_equal(received, UCS_INPROGRESS);
    if (sent == UCS_INPROGRESS) {
        /* the sender gave up before the end: not all of it arrived */
        assert_true(UCS_STATUS_IS_ERR(received));
        assert_int_equal(psel_request_test(sreq, NULL), UCS_ERR_CANCELED);
    }
    assert_int_equal(kh_size(&p.w[RCV]->rndv.recvs), 0);
    assert_true(ucs_list_is_empty(&p.w[RCV]->proto.rndv_work));
    psel_request_free(sreq);
    psel_request_free(rreq);
    peers_close(&p);
    free(sbuf);
    free(rbuf);
}

/* rndv/get: the receiver matched, has not read yet (tcp has no get) */
static void test_orphan_get_matched(void **state)
{
    if (!psel_test_has_transport("cma")) {
        print_message("SKIP: rndv/get needs cma, which this machine lacks "
                      "(ptrace rights)\n");
        skip();
    }
    orphan("posix,cma", "rndv/get", PSEL_RNDV_EVENT_MATCHED);
}

/* rndv/put and rndv/am: the receiver sent its RTR, the sender has not
 * seen it */
static void test_orphan_put_rtr_posix(void **state)
{
    if (!psel_test_has_transport("cma")) {
        print_message("SKIP: rndv/put on shared memory needs cma, which this "
                      "machine lacks (ptrace rights)\n");
        skip();
    }
    orphan("posix,cma", "rndv/put", PSEL_RNDV_EVENT_RTR);
}

static void test_orphan_am_rtr_posix(void **state)
{
    orphan("posix", "rndv/am", PSEL_RNDV_EVENT_RTR);
}

static void test_orphan_put_rtr_tcp(void **state)
{
    orphan("tcp", "rndv/put", PSEL_RNDV_EVENT_RTR);
}

static void test_orphan_am_rtr_tcp(void **state)
{
    orphan("tcp", "rndv/am", PSEL_RNDV_EVENT_RTR);
}

/* ... the sender has posted data (puts on tcp complete later; am fills
 * the FIFO or the socket) */
static void test_orphan_am_data_posix(void **state)
{
    orphan("posix", "rndv/am", PSEL_RNDV_EVENT_DATA_POSTED);
}

static void test_orphan_put_data_tcp(void **state)
{
    orphan("tcp", "rndv/put", PSEL_RNDV_EVENT_DATA_POSTED);
}

static void test_orphan_am_data_tcp(void **state)
{
    orphan("tcp", "rndv/am", PSEL_RNDV_EVENT_DATA_POSTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failed_peer_hol_posix),
        cmocka_unit_test(test_failed_peer_hol_tcp),
        cmocka_unit_test(test_orphan_get_matched),
        cmocka_unit_test(test_orphan_put_rtr_posix),
        cmocka_unit_test(test_orphan_am_rtr_posix),
        cmocka_unit_test(test_orphan_put_rtr_tcp),
        cmocka_unit_test(test_orphan_am_rtr_tcp),
        cmocka_unit_test(test_orphan_am_data_posix),
        cmocka_unit_test(test_orphan_put_data_tcp),
        cmocka_unit_test(test_orphan_am_data_tcp)
    };

    setenv("UCX_PSEL_CALIBRATION", "none", 0);
    if (getenv("PSEL_TEST_FILTER") != NULL) {
        cmocka_set_test_filter(getenv("PSEL_TEST_FILTER")); /* by hand */
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
