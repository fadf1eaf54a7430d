/*
 * Peer failure, two processes over real transports: the receiver stops
 * progressing while 256 KiB sends wait for it (rendezvous waiting for its
 * answer, or eager fragments queued) and is then killed. Every request on
 * the endpoint must complete with an error within a bounded time (tcp
 * reports the closed connection; shared memory is found by keepalive,
 * uct_ep_check), later sends and flushes fail at once, and the worker still
 * talks to a new peer.
 *
 * The mirror case: the sender of a 64 MiB rndv/get dies after the receiver
 * matched its RTS, before the receiver's reads are done. The receive must
 * fail within PF_GET_FAIL_WITHIN, release what it holds, and the worker
 * still talks to a new peer. (cma, the only transport here that reads,
 * does each read synchronously inside one progress call, so "while the
 * read runs" cannot be observed from outside: the sender is killed between
 * the match and the progress call that reads.)
 */
#include "test_util.h"

#include <core/core_int.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#define PF_MSGS        64
#define PF_MSG_SIZE    (256 * 1024)
#define PF_FAIL_WITHIN 10.0   /* seconds: the bound the test enforces */
#define PF_GOOD_MSGS   10
#define PF_GET_SIZE    (64ul << 20)
#define PF_GET_FAIL_WITHIN 5.0 /* seconds: the mirror case's bound */
#define PF_GET_TAG     0x77

static double now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A receiver process: publish the address; then either never progress
 * (@a healthy = 0, until killed) or receive PF_GOOD_MSGS and check them. */
static int receiver(int sock, int healthy)
{
    static uint8_t buf[PF_MSG_SIZE];
    psel_context_h context;
    psel_worker_h worker;
    psel_request_t *req;
    double deadline;
    void *address;
    size_t len;
    unsigned i;

    if (psel_context_create(&context) != UCS_OK) {
        fprintf(stderr, "receiver: no context\n");
        return 1;
    }
    if ((psel_worker_create(context, &worker) != UCS_OK) ||
        (psel_worker_get_address(worker, &address, &len) != UCS_OK)) {
        fprintf(stderr, "receiver: no worker\n");
        return 1;
    }
    if ((write(sock, &len, sizeof(len)) != sizeof(len)) ||
        (write(sock, address, len) != (ssize_t)len)) {
        fprintf(stderr, "receiver: could not publish the address\n");
        return 1;
    }
    if (!healthy) {
        /* until SIGKILL, or the test's own deadline has long passed */
        deadline = now_sec() + 120;
        while (now_sec() < deadline) {
            sleep(1);
        }
        return 4;
    }
    deadline = now_sec() + 30;
    for (i = 0; i < PF_GOOD_MSGS; ++i) {
        req = psel_tag_recv_nb(worker, buf, sizeof(buf), i, UINT64_MAX, NULL,
                               NULL);
        while (psel_request_test(req, NULL) == UCS_INPROGRESS) {
            psel_worker_progress(worker);
            if (now_sec() > deadline) {
                fprintf(stderr, "receiver: message %u did not arrive\n", i);
                return 2;
            }
        }
        if ((psel_request_test(req, NULL) != UCS_OK) || (buf[0] != i)) {
            fprintf(stderr, "receiver: message %u: %s, first byte %u\n", i,
                    ucs_status_string(psel_request_test(req, NULL)), buf[0]);
            return 3;
        }
        psel_request_free(req);
    }
    /* let the sender's close flush finish */
    while (now_sec() < deadline) {
        psel_worker_progress(worker);
        if (recv(sock, buf, 1, MSG_DONTWAIT) == 1) {
            break;
        }
    }
    psel_worker_destroy(worker);
    psel_context_destroy(context);
    return 0;
}

static pid_t start_receiver(int healthy, void **address, size_t *len,
                            int *sock)
{
    int sv[2];
    pid_t pid;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pid = psel_test_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        _exit(receiver(sv[1], healthy));
    }
    close(sv[1]);
    *address = psel_test_read_address(sv[0], len);
    assert_non_null(*address);
    *sock = sv[0];
    return pid;
}

static void talk_to_good_peer(psel_worker_h worker, void *good_address,
                              size_t good_len, int good_sock, pid_t good_pid);

static void run_peer_failure(const char *tls)
{
    static uint8_t buf[PF_MSG_SIZE];
    psel_request_t *reqs[PF_MSGS], *req;
    unsigned i, failed = 0, waiting_failed = 0, pending, kill_pending;
    int waiting[PF_MSGS];
    psel_context_h context;
    ucs_status_t st;
    psel_worker_h worker;
    double start, deadline, took;
    int sock, good_sock, status;
    void *address, *good_address;
    size_t len, good_len;
    pid_t pid, good_pid;
    psel_ep_h ep;

    /* both peers start before this process opens UCX: a child forked from
     * a process with live UCX workers inherits a broken async state */
    setenv("UCX_PSEL_TLS", tls, 1);
    setenv("UCX_PSEL_NET_DEVICES", "lo", 1);
    pid      = start_receiver(0, &address, &len, &sock);
    good_pid = start_receiver(1, &good_address, &good_len, &good_sock);
    assert_int_equal(psel_context_create(&context), UCS_OK);
    assert_int_equal(psel_worker_create(context, &worker), UCS_OK);

    /* 1. queue sends to a receiver that never progresses, then kill it */
    assert_int_equal(psel_ep_create(worker, address, len, &ep), UCS_OK);
    free(address);
    memset(buf, 0x5a, sizeof(buf));
    for (i = 0; i < PF_MSGS; ++i) {
        reqs[i] = psel_tag_send_nb(ep, buf, sizeof(buf), i, NULL, NULL);
        assert_false(UCS_PTR_IS_ERR(reqs[i]));
    }
    deadline = now_sec() + 0.2;
    while (now_sec() < deadline) {
        psel_worker_progress(worker);
    }
    for (i = 0, pending = 0; i < PF_MSGS; ++i) {
        waiting[i] = psel_request_test(reqs[i], NULL) == UCS_INPROGRESS;
        pending   += waiting[i];
    }
    assert_true(pending > 0); /* the peer's queue is full: sends wait */
    kill_pending = pending;   /* no progress until the kill */

    psel_test_log_capture_start();
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    close(sock);
    start    = now_sec();
    deadline = start + PF_FAIL_WITHIN;
    do {
        psel_worker_progress(worker);
        for (i = 0, pending = 0; i < PF_MSGS; ++i) {
            pending += psel_request_test(reqs[i], NULL) == UCS_INPROGRESS;
        }
    } while (pending && (now_sec() < deadline));
    took = now_sec() - start;
    print_message("%s: %u sends still running %.3f s after the peer died\n",
                  tls, pending, took);
    assert_int_equal(pending, 0);
    for (i = 0; i < PF_MSGS; ++i) {
        st              = psel_request_test(reqs[i], NULL);
        failed         += st != UCS_OK;
        waiting_failed += waiting[i] && (st != UCS_OK);
        psel_request_free(reqs[i]);
    }
    print_message("%s: %u of %u sends failed, in %.3f s (%u were waiting "
                  "when the peer died; an eager send whose data the peer's "
                  "queue took before is complete)\n", tls, failed, PF_MSGS,
                  took, waiting_failed);
    /* every send still waiting: none of them could end well */
    assert_int_equal(waiting_failed, kill_pending);
    psel_assert_log_contains("the peer failed");

    /* 2. the endpoint stays failed: sends and flushes end at once */
    req = psel_tag_send_nb(ep, buf, 8, 0, NULL, NULL);
    assert_true(UCS_STATUS_IS_ERR(psel_request_test(req, NULL)));
    psel_request_free(req);
    req = psel_ep_flush_nb(ep, NULL, NULL);
    assert_true(UCS_STATUS_IS_ERR(psel_request_test(req, NULL)));
    psel_request_free(req);
    psel_ep_destroy(ep);
    psel_test_log_capture_stop();

    /* 3. the worker still talks to another peer */
    talk_to_good_peer(worker, good_address, good_len, good_sock, good_pid);
    psel_worker_destroy(worker);
    psel_context_destroy(context);
}

/* Send PF_GOOD_MSGS to a healthy receiver (start_receiver(1)); all must
 * arrive (it checks them and exits 0), then close. */
static void talk_to_good_peer(psel_worker_h worker, void *good_address,
                              size_t good_len, int good_sock, pid_t good_pid)
{
    static uint8_t good_bufs[PF_GOOD_MSGS][PF_MSG_SIZE];
    psel_request_t *reqs[PF_GOOD_MSGS], *req;
    unsigned i, pending;
    double deadline;
    psel_ep_h ep;
    int status;

    assert_int_equal(psel_ep_create(worker, good_address, good_len, &ep),
                     UCS_OK);
    free(good_address);
    for (i = 0; i < PF_GOOD_MSGS; ++i) {
        good_bufs[i][0] = i; /* a buffer each: zero-copy sends read late */
        reqs[i] = psel_tag_send_nb(ep, good_bufs[i], PF_MSG_SIZE, i, NULL,
                                   NULL);
    }
    deadline = now_sec() + 30;
    do {
        psel_worker_progress(worker);
        for (i = 0, pending = 0; i < PF_GOOD_MSGS; ++i) {
            pending += psel_request_test(reqs[i], NULL) == UCS_INPROGRESS;
        }
    } while (pending && (now_sec() < deadline));
    for (i = 0; i < PF_GOOD_MSGS; ++i) {
        assert_int_equal(psel_request_test(reqs[i], NULL), UCS_OK);
        psel_request_free(reqs[i]);
    }
    req = psel_ep_close_nb(ep, PSEL_EP_CLOSE_FLUSH, NULL, NULL);
    while ((psel_request_test(req, NULL) == UCS_INPROGRESS) &&
           (now_sec() < deadline)) {
        psel_worker_progress(worker);
    }
    assert_int_equal(psel_request_test(req, NULL), UCS_OK);
    psel_request_free(req);
    assert_int_equal(write(good_sock, "x", 1), 1);
    waitpid(good_pid, &status, 0);
    close(good_sock);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_peer_failure_tcp(void **state)
{
    run_peer_failure("tcp");
}

static void test_peer_failure_posix(void **state)
{
    run_peer_failure("posix,cma");
}

static void test_peer_failure_sysv(void **state)
{
    run_peer_failure("sysv,cma");
}

/* The sender of the mirror case: publish the address, get the receiver's,
 * send one PF_GET_SIZE message (rndv/get) and progress until killed. */
static int get_sender(int sock)
{
    psel_context_h context;
    psel_worker_h worker;
    psel_request_t *req;
    void *address, *peer;
    double deadline;
    uint8_t *buf;
    size_t len;
    psel_ep_h ep;

    buf = malloc(PF_GET_SIZE);
    if ((buf == NULL) || (psel_context_create(&context) != UCS_OK) ||
        (psel_worker_create(context, &worker) != UCS_OK) ||
        (psel_worker_get_address(worker, &address, &len) != UCS_OK)) {
        fprintf(stderr, "get sender: no worker\n");
        return 1;
    }
    memset(buf, 0x3c, PF_GET_SIZE);
    if (psel_test_write_all(sock, &len, sizeof(len)) ||
        psel_test_write_all(sock, address, len) ||
        ((peer = psel_test_read_address(sock, &len)) == NULL)) {
        fprintf(stderr, "get sender: no address exchange\n");
        return 1;
    }
    if (psel_ep_create(worker, peer, len, &ep) != UCS_OK) {
        fprintf(stderr, "get sender: no endpoint\n");
        return 1;
    }
    req      = psel_tag_send_nb(ep, buf, PF_GET_SIZE, PF_GET_TAG, NULL, NULL);
    deadline = now_sec() + 30;
    while ((req != NULL) && (now_sec() < deadline)) {
        psel_worker_progress(worker); /* until SIGKILL */
    }
    fprintf(stderr, "get sender: not killed within 30 s (send %s)\n",
            (req == NULL) ? "not posted" :
            ucs_status_string(psel_request_test(req, NULL)));
    return 1;
}

static void run_sender_dies_mid_get(const char *tls)
{
    psel_context_h context;
    psel_worker_h worker;
    psel_request_t *req;
    double start, deadline, took;
    int sv[2], good_sock, status;
    void *address, *good_address;
    size_t len, good_len;
    pid_t pid, good_pid;
    ucs_status_t st;
    uint8_t *buf;
    psel_ep_h ep;

    if (!psel_test_has_transport("cma")) {
        print_message("SKIP: %s: the get needs cma, which this machine lacks "
                      "(ptrace rights)\n", tls);
        return;
    }
    setenv("UCX_PSEL_TLS", tls, 1);
    setenv("UCX_PSEL_NET_DEVICES", "lo", 1);
    setenv("UCX_PSEL_PROTOS", "rndv/get", 1);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pid = psel_test_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        _exit(get_sender(sv[1]));
    }
    close(sv[1]);
    good_pid = start_receiver(1, &good_address, &good_len, &good_sock);
    assert_int_equal(psel_context_create(&context), UCS_OK);
    assert_int_equal(psel_worker_create(context, &worker), UCS_OK);

    /* addresses: the sender's, then ours to it; an endpoint back, which
     * the sender's wireup announcement pairs with */
    address = psel_test_read_address(sv[0], &len);
    assert_non_null(address);
    assert_int_equal(psel_ep_create(worker, address, len, &ep), UCS_OK);
    free(address);
    assert_int_equal(psel_worker_get_address(worker, &address, &len), UCS_OK);
    assert_int_equal(psel_test_write_all(sv[0], &len, sizeof(len)), 0);
    assert_int_equal(psel_test_write_all(sv[0], address, len), 0);
    free(address);

    /* 1. the RTS arrives unexpected and the endpoint knows its peer */
    deadline = now_sec() + 10;
    while ((psel_tm_num_unexpected(&worker->tm) == 0) ||
           (ep->remote_id == 0)) {
        assert_true(now_sec() < deadline);
        psel_worker_progress(worker);
    }

    /* 2. match it (the reads start at the next progress), kill the
     * sender, then progress: the receive must fail in time */
    buf = malloc(PF_GET_SIZE);
    assert_non_null(buf);
    req = psel_tag_recv_nb(worker, buf, PF_GET_SIZE, PF_GET_TAG, UINT64_MAX,
                           NULL, NULL);
    assert_int_equal(psel_tm_num_unexpected(&worker->tm), 0);
    assert_int_equal(kh_size(&worker->rndv.recvs), 1);
    assert_int_equal(psel_request_test(req, NULL), UCS_INPROGRESS);
    psel_test_log_capture_start();
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status)); /* not an early exit of its own */
    close(sv[0]);
    start    = now_sec();
    deadline = start + 2 * PF_GET_FAIL_WITHIN;
    while ((psel_request_test(req, NULL) == UCS_INPROGRESS) &&
           (now_sec() < deadline)) {
        psel_worker_progress(worker);
    }
    took = now_sec() - start;
    st   = psel_request_test(req, NULL);
    print_message("%s: the receive of a 64 MiB rndv/get ended %.3f s after "
                  "its sender died: %s\n", tls, took, ucs_status_string(st));
    assert_true(UCS_STATUS_IS_ERR(st));
    assert_int_not_equal(st, UCS_ERR_MESSAGE_TRUNCATED);
    assert_true(took < PF_GET_FAIL_WITHIN);
    /* the rendezvous let go of it: rkeys and registrations released */
    assert_int_equal(kh_size(&worker->rndv.recvs), 0);
    assert_true(ucs_list_is_empty(&worker->proto.rndv_work));
    psel_request_free(req);
    free(buf);
    psel_ep_destroy(ep);
    psel_test_log_capture_stop();

    /* 3. the worker still talks to another peer */
    talk_to_good_peer(worker, good_address, good_len, good_sock, good_pid);
    psel_worker_destroy(worker);
    psel_context_destroy(context);
    unsetenv("UCX_PSEL_PROTOS");
}

static void test_sender_dies_mid_get_posix(void **state)
{
    run_sender_dies_mid_get("posix,cma");
}

static void test_sender_dies_mid_get_sysv(void **state)
{
    run_sender_dies_mid_get("sysv,cma");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peer_failure_tcp),
        cmocka_unit_test(test_peer_failure_posix),
        cmocka_unit_test(test_peer_failure_sysv),
        cmocka_unit_test(test_sender_dies_mid_get_posix),
        cmocka_unit_test(test_sender_dies_mid_get_sysv),
    };

    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
