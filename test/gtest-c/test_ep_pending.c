/*
 * Send order is kept per endpoint, not per worker: an endpoint whose peer
 * is stalled (SIGSTOP) and whose sends therefore wait for the transport
 * does not delay sends on another endpoint of the same worker.
 *
 * Three processes: this one sends; a stalled peer (stopped once connected,
 * so its receive FIFO or socket fills and our sends to it wait in its
 * endpoint's pending queue); a healthy peer that must receive every
 * message sent to it afterwards, while the stalled one is still stopped.
 * With one pending queue per worker, the healthy peer's messages would
 * wait behind the stalled peer's forever. The healthy peer's messages are
 * small (eager), or rendezvous: those need replies and data that must not
 * wait behind the stalled endpoint either.
 *
 * The receive side too: a rendezvous receive whose reply (RTR) waits for
 * the stalled peer's full FIFO or socket must not hold up a rendezvous
 * receive from the healthy peer (the receive work queue keeps order per
 * sender only).
 *
 * Every wait is bounded; a child that fails says why and exits non-zero.
 *
 * Also: an iface is polled on every progress call only while a UCT
 * endpoint of ours uses it; once the last goes it is idle again, and a
 * peer's message wakes it. And a receiver that streams waits once after
 * it has caught up (UCX_PSEL_RX_SLIP); one that answers never does.
 */
#include "test_util.h"

#include <core/core_int.h>
#include <ucs/sys/math.h>

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
#include <unistd.h>
#include <cmocka.h>

#define EP_GOOD_MSGS       16
#define EP_FLOOD_MAX       200000  /* sends to the stalled peer at most */
#define EP_STALL_BYTES_MAX (256ul << 20)
#define EP_SERVED_WITHIN   10.0    /* s: the healthy peer gets its messages */
#define EP_CHILD_SEC       60.0    /* s: a child gives up */
#define EP_HELLO_TAG       999
#define EP_RNDV_TAG        777     /* the stalled peer's rendezvous to us */
#define EP_RNDV_SIZE       (256 * 1024)
#define EP_RNDV_THRESH     "65536" /* UCX_PSEL_RNDV_THRESH of these tests */

/* What a peer process does. */
typedef enum {
    PEER_STALLED,    /* receive one message, then progress until stopped */
    PEER_HEALTHY,    /* receive EP_GOOD_MSGS messages, check them */
    PEER_RNDV_TO_US  /* read our address, send us one rendezvous message
                        (tag EP_RNDV_TAG), report, progress until stopped */
} peer_role_t;

/* Progress @a worker until @a req completes or @a deadline passes. */
static ucs_status_t peer_wait(psel_worker_h worker, psel_request_t *req,
                              double deadline)
{
    while ((psel_request_test(req, NULL) == UCS_INPROGRESS) &&
           (psel_time_sec() < deadline)) {
        psel_worker_progress(worker);
    }
    return psel_request_test(req, NULL);
}

/* A peer process: publish the address on @a sock, then play @a role with
 * messages of @a size bytes; report on @a sock; progress until told to go
 * (or stopped and killed). */
static int peer(int sock, peer_role_t role, size_t size)
{
    double deadline = psel_time_sec() + EP_CHILD_SEC;
    psel_context_h context;
    psel_worker_h worker;
    psel_request_t *req = NULL;
    psel_ep_h ep        = NULL;
    uint8_t *buf, done;
    void *address;
    size_t len;
    unsigned i;

    buf = calloc(1, size);
    if ((buf == NULL) || (psel_context_create(&context) != UCS_OK) ||
        (psel_worker_create(context, &worker) != UCS_OK) ||
        (psel_worker_get_address(worker, &address, &len) != UCS_OK)) {
        fprintf(stderr, "peer: no worker\n");
        return 1;
    }
    if ((psel_test_write_all(sock, &len, sizeof(len)) != 0) ||
        (psel_test_write_all(sock, address, len) != 0)) {
        fprintf(stderr, "peer: could not publish the address\n");
        return 1;
    }
    free(address);
    switch (role) {
    case PEER_STALLED:
        /* one message first, so the connection is up before the stop */
        req = psel_tag_recv_nb(worker, buf, size, EP_HELLO_TAG, UINT64_MAX,
                               NULL, NULL);
        if (peer_wait(worker, req, deadline) != UCS_OK) {
            fprintf(stderr, "peer: no hello\n");
            return 2;
        }
        break;
    case PEER_RNDV_TO_US:
        if (((address = psel_test_read_address(sock, &len)) == NULL) ||
            (psel_ep_create(worker, address, len, &ep) != UCS_OK)) {
            fprintf(stderr, "peer: no endpoint to the receiver\n");
            return 2;
        }
        req = psel_tag_send_nb(ep, buf, size, EP_RNDV_TAG, NULL, NULL);
        if (!UCS_PTR_IS_PTR(req)) {
            fprintf(stderr, "peer: the rendezvous send ended at once\n");
            return 2;
        }
        /* the RTS goes out with the first progress calls */
        for (i = 0; i < 1000; ++i) {
            psel_worker_progress(worker);
        }
        break;
    case PEER_HEALTHY:
        for (i = 0; i < EP_GOOD_MSGS; ++i) {
            req = psel_tag_recv_nb(worker, buf, size, i, UINT64_MAX, NULL,
                                   NULL);
            if ((peer_wait(worker, req, deadline) != UCS_OK) ||
                (buf[0] != i) || (buf[size - 1] != (uint8_t)(i + 1))) {
                fprintf(stderr, "peer: message %u: %s\n", i,
                        ucs_status_string(psel_request_test(req, NULL)));
                return 3;
            }
            psel_request_free(req);
        }
        break;
    }
    done = 1;
    if (psel_test_write_all(sock, &done, 1) != 0) {
        return 4;
    }
    /* serve until told to go (the stalled ones are stopped and killed) */
    while ((psel_time_sec() < deadline) && !psel_test_sock_readable(sock)) {
        psel_worker_progress(worker);
    }
    if (role == PEER_STALLED) {
        return 5; /* should have been killed */
    }
    if (role == PEER_RNDV_TO_US) {
        if (peer_wait(worker, req, deadline) != UCS_OK) {
            fprintf(stderr, "peer: the rendezvous send: %s\n",
                    ucs_status_string(psel_request_test(req, NULL)));
            return 6;
        }
        psel_request_free(req);
        psel_ep_destroy(ep);
    }
    psel_worker_destroy(worker);
    psel_context_destroy(context);
    free(buf);
    return 0;
}

/* Children of the running test, killed by the teardown if it fails. */
static pid_t ep_children[2];


static int teardown_children(void **state)
{
    unsigned i;

    for (i = 0; i < 2; ++i) {
        if (ep_children[i] > 0) {
            kill(ep_children[i], SIGKILL);
            waitpid(ep_children[i], NULL, 0);
            ep_children[i] = 0;
        }
    }
    unsetenv("UCX_PSEL_TLS");
    unsetenv("UCX_PSEL_RNDV_THRESH");
    return 0;
}

/* Fork a peer playing @a role (child slot @a slot); read its address. */
static pid_t start_peer(unsigned slot, peer_role_t role, size_t size,
                        void **address, size_t *len, int *sock)
{
    int sv[2];
    pid_t pid;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pid = psel_test_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        _exit(peer(sv[1], role, size));
    }
    close(sv[1]);
    ep_children[slot] = pid;
    *address = psel_test_read_address(sv[0], len);
    assert_non_null(*address);
    *sock = sv[0];
    return pid;
}

/* Progress @a worker until @a sock is readable (bounded); assert it is. */
static void wait_readable(psel_worker_h worker, int sock, const char *what)
{
    double deadline = psel_time_sec() + EP_SERVED_WITHIN;

    while (!psel_test_sock_readable(sock) && (psel_time_sec() < deadline)) {
        psel_worker_progress(worker);
    }
    if (!psel_test_sock_readable(sock)) {
        print_message("    %s: no word within %.0f s\n", what,
                      EP_SERVED_WITHIN);
    }
    assert_true(psel_test_sock_readable(sock));
}

/* Progress @a worker until @a req completes (bounded); its status. */
static ucs_status_t wait_req(psel_worker_h worker, psel_request_t *req)
{
    return peer_wait(worker, req, psel_time_sec() + EP_SERVED_WITHIN);
}

/* Kill the stalled peer in slot @a slot and reap it. */
static void kill_peer(unsigned slot)
{
    int wstatus;

    assert_int_equal(kill(ep_children[slot], SIGKILL), 0);
    assert_int_equal(waitpid(ep_children[slot], &wstatus, 0),
                     ep_children[slot]);
    assert_true(WIFSIGNALED(wstatus) && (WTERMSIG(wstatus) == SIGKILL));
    ep_children[slot] = 0;
}

static void progress_for(psel_worker_h worker, unsigned calls)
{
    while (calls-- > 0) {
        psel_worker_progress(worker);
    }
}

/* Send to the stalled peer until a send stays waiting: its endpoint then
 * has sends in its pending queue. @return the number of sends made. */
static unsigned flood(psel_worker_h worker, psel_ep_h ep, const uint8_t *buf,
                      size_t size, psel_request_t **reqs)
{
    unsigned n;

    for (n = 0; (n < EP_FLOOD_MAX) && (n * size < EP_STALL_BYTES_MAX); ++n) {
        reqs[n] = psel_tag_send_nb(ep, buf, size, 1000 + n, NULL, NULL);
        assert_false(UCS_PTR_IS_ERR(reqs[n])); /* NULL: sent at once */
        progress_for(worker, 4);
        if (!ucs_list_is_empty(&ep->pending)) {
            return n + 1;
        }

    }
    return n;
}

/* The stalled peer's endpoint blocks with sends of @a size bytes waiting;
 * the healthy peer then receives EP_GOOD_MSGS messages of @a good_size
 * bytes (eager, or rendezvous above EP_RNDV_THRESH) within the bound. */
static void run_stalled_peer(const char *tls, size_t size, size_t good_size)
{
    psel_request_t **stalled_reqs, *good_reqs[EP_GOOD_MSGS], *hello;
    void *stalled_addr, *good_addr;
    size_t stalled_len, good_len;
    int stalled_sock, good_sock;
    psel_ep_h stalled_ep, good_ep;
    psel_context_h context;
    psel_worker_h worker;
    unsigned num_stalled, i, still_waiting;
    double start, elapsed;
    uint8_t *buf, *good_buf, done;

    setenv("UCX_PSEL_TLS", tls, 1);
    setenv("UCX_PSEL_RNDV_THRESH", EP_RNDV_THRESH, 1);
    buf          = calloc(1, size);
    good_buf     = calloc(EP_GOOD_MSGS, good_size);
    stalled_reqs = calloc(EP_FLOOD_MAX, sizeof(*stalled_reqs));
    assert_non_null(buf);
    assert_non_null(good_buf);
    assert_non_null(stalled_reqs);
    memset(buf, 0x5a, size);
    for (i = 0; i < EP_GOOD_MSGS; ++i) {
        good_buf[i * good_size]                 = i;
        good_buf[i * good_size + good_size - 1] = i + 1;
    }

    start_peer(0, PEER_STALLED, size, &stalled_addr, &stalled_len,
               &stalled_sock);
    start_peer(1, PEER_HEALTHY, good_size, &good_addr, &good_len, &good_sock);
    assert_int_equal(psel_context_create(&context), UCS_OK);
    assert_int_equal(psel_worker_create(context, &worker), UCS_OK);
    assert_int_equal(psel_ep_create(worker, stalled_addr, stalled_len,
                                    &stalled_ep), UCS_OK);
    assert_int_equal(psel_ep_create(worker, good_addr, good_len, &good_ep),
                     UCS_OK);
    /* the stalled peer got a first message: connected; then it stops */
    hello = psel_tag_send_nb(stalled_ep, buf, size, EP_HELLO_TAG, NULL, NULL);
    assert_false(UCS_PTR_IS_ERR(hello));
    wait_readable(worker, stalled_sock, "the stalled peer's hello");
    assert_int_equal(psel_test_read_all(stalled_sock, &done, 1), 0);
    assert_int_equal(kill(ep_children[0], SIGSTOP), 0);
    assert_int_equal(wait_req(worker, hello), UCS_OK);
    psel_request_free(hello);

    num_stalled = flood(worker, stalled_ep, buf, size, stalled_reqs);
    print_message("    tls=%-6s size=%zu: the stalled peer's endpoint blocks "
                  "after %u sends\n", tls, size, num_stalled);
    assert_false(ucs_list_is_empty(&stalled_ep->pending));

    start = psel_time_sec();
    for (i = 0; i < EP_GOOD_MSGS; ++i) {
        good_reqs[i] = psel_tag_send_nb(good_ep, good_buf + i * good_size,
                                        good_size, i, NULL, NULL);
        assert_false(UCS_PTR_IS_ERR(good_reqs[i]));
    }
    wait_readable(worker, good_sock, "the healthy peer");
    elapsed = psel_time_sec() - start;
    print_message("    tls=%-6s size=%zu: the healthy peer's %u messages of "
                  "%zu bytes: all received after %.3f s\n", tls, size,
                  EP_GOOD_MSGS, good_size, elapsed);
    assert_int_equal(psel_test_read_all(good_sock, &done, 1), 0);
    assert_int_equal(done, 1);
    for (i = 0; i < EP_GOOD_MSGS; ++i) {
        assert_int_equal(wait_req(worker, good_reqs[i]), UCS_OK);
        psel_request_free(good_reqs[i]);
    }
    /* the stalled peer is still stopped: its last send still waits */
    for (i = 0, still_waiting = 0; i < num_stalled; ++i) {
        still_waiting += (psel_request_test(stalled_reqs[i], NULL) ==
                          UCS_INPROGRESS);
    }
    assert_true(still_waiting > 0);

    /* end: the stalled peer dies; its waiting sends fail when the endpoint
     * goes; the healthy peer exits cleanly */
    kill_peer(0);
    psel_ep_destroy(stalled_ep);
    for (i = 0; i < num_stalled; ++i) {
        assert_true(psel_request_test(stalled_reqs[i], NULL) !=
                    UCS_INPROGRESS);
        psel_request_free(stalled_reqs[i]);
    }
    assert_int_equal(psel_test_close_ep(worker, good_ep), UCS_OK);
    assert_int_equal(psel_test_write_all(good_sock, &done, 1), 0);
    assert_int_equal(psel_test_wait_child(ep_children[1], 30.0), 0);
    ep_children[1] = 0;

    psel_worker_destroy(worker);
    psel_context_destroy(context);
    close(stalled_sock);
    close(good_sock);
    free(stalled_addr);
    free(good_addr);
    free(stalled_reqs);
    free(good_buf);
    free(buf);
}

static void test_stalled_peer_posix(void **state)
{
    run_stalled_peer("posix", 8, 8);
}

static void test_stalled_peer_sysv(void **state)
{
    run_stalled_peer("sysv", 8, 8);
}

static void test_stalled_peer_tcp(void **state)
{
    run_stalled_peer("tcp", 4096, 4096); /* egr/zcopy: fills the socket */
}

/* the healthy peer's messages are rendezvous: RTS, its replies and the
 * data all pass the stalled endpoint */
static void test_stalled_peer_rndv_posix(void **state)
{
    run_stalled_peer("posix", 8, EP_RNDV_SIZE);
}

static void test_stalled_peer_rndv_tcp(void **state)
{
    run_stalled_peer("tcp", 4096, EP_RNDV_SIZE);
}

/* Receive side: the stalled peer sent us a rendezvous message before it
 * stopped, and we filled its FIFO or socket; our receive of it is matched
 * and its RTR cannot go out. A rendezvous receive from the healthy peer,
 * queued after it, completes all the same. */
static void run_stalled_reply_lane(const char *tls, size_t flood_size)
{
    psel_request_t **stalled_reqs, *hello, *stalled_recv, *good_recv;
    void *stalled_addr, *good_addr, *address;
    size_t stalled_len, good_len, len;
    int stalled_sock, good_sock;
    psel_ep_h stalled_ep;
    psel_context_h context;
    psel_worker_h worker;
    unsigned num_stalled, i;
    uint8_t *buf, *rbuf[2], done;
    ucs_status_t status;
    double start;

    setenv("UCX_PSEL_TLS", tls, 1);
    setenv("UCX_PSEL_RNDV_THRESH", EP_RNDV_THRESH, 1);
    buf          = calloc(1, flood_size);
    rbuf[0]      = malloc(EP_RNDV_SIZE);
    rbuf[1]      = malloc(EP_RNDV_SIZE);
    stalled_reqs = calloc(EP_FLOOD_MAX, sizeof(*stalled_reqs));
    assert_true((buf != NULL) && (rbuf[0] != NULL) && (rbuf[1] != NULL) &&
                (stalled_reqs != NULL));

    start_peer(0, PEER_RNDV_TO_US, EP_RNDV_SIZE, &stalled_addr, &stalled_len,
               &stalled_sock);
    start_peer(1, PEER_RNDV_TO_US, EP_RNDV_SIZE, &good_addr, &good_len,
               &good_sock);
    assert_int_equal(psel_context_create(&context), UCS_OK);
    assert_int_equal(psel_worker_create(context, &worker), UCS_OK);
    assert_int_equal(psel_worker_get_address(worker, &address, &len), UCS_OK);
    /* our endpoint to the stalled peer: its announce makes it the reply
     * endpoint of its rendezvous */
    assert_int_equal(psel_ep_create(worker, stalled_addr, stalled_len,
                                    &stalled_ep), UCS_OK);
    hello = psel_tag_send_nb(stalled_ep, buf, 8, EP_HELLO_TAG, NULL, NULL);
    assert_false(UCS_PTR_IS_ERR(hello));

    /* the stalled peer's RTS arrives, then it stops */
    assert_int_equal(psel_test_write_all(stalled_sock, &len, sizeof(len)), 0);
    assert_int_equal(psel_test_write_all(stalled_sock, address, len), 0);
    wait_readable(worker, stalled_sock, "the stalled peer's rendezvous");
    assert_int_equal(psel_test_read_all(stalled_sock, &done, 1), 0);
    start = psel_time_sec();
    while ((psel_tm_num_unexpected(&worker->tm) == 0) &&
           (psel_time_sec() < start + EP_SERVED_WITHIN)) {
        psel_worker_progress(worker);
    }
    assert_int_equal(psel_tm_num_unexpected(&worker->tm), 1);
    assert_int_equal(kill(ep_children[0], SIGSTOP), 0);
    assert_int_equal(wait_req(worker, hello), UCS_OK);
    psel_request_free(hello);
    num_stalled = flood(worker, stalled_ep, buf, flood_size, stalled_reqs);
    assert_false(ucs_list_is_empty(&stalled_ep->pending));

    /* its receive: matched, its reply cannot go out */
    stalled_recv = psel_tag_recv_nb(worker, rbuf[0], EP_RNDV_SIZE,
                                    EP_RNDV_TAG, UINT64_MAX, NULL, NULL);
    for (i = 0; i < 100; ++i) {
        psel_worker_progress(worker);
    }
    assert_int_equal(psel_request_test(stalled_recv, NULL), UCS_INPROGRESS);
    assert_false(ucs_list_is_empty(&worker->proto.rndv_work));

    /* the healthy peer's rendezvous, queued behind it */
    good_recv = psel_tag_recv_nb(worker, rbuf[1], EP_RNDV_SIZE, EP_RNDV_TAG,
                                 UINT64_MAX, NULL, NULL);
    assert_int_equal(psel_test_write_all(good_sock, &len, sizeof(len)), 0);
    assert_int_equal(psel_test_write_all(good_sock, address, len), 0);
    start  = psel_time_sec();
    status = wait_req(worker, good_recv);
    print_message("    tls=%-6s the healthy peer's rendezvous receive %s "
                  "after %.3f s, while the stalled peer's waits for its "
                  "reply lane (%u sends blocked)\n", tls,
                  ucs_status_string(status), psel_time_sec() - start,
                  num_stalled);
    assert_int_equal(status, UCS_OK);
    assert_int_equal(psel_request_test(stalled_recv, NULL), UCS_INPROGRESS);
    wait_readable(worker, good_sock, "the healthy peer");
    assert_int_equal(psel_test_read_all(good_sock, &done, 1), 0);

    /* end: the stalled peer dies; what waits for it fails with its
     * endpoint */
    kill_peer(0);
    /* until keepalive finds it dead (bounded): a destroy before that would
     * try to tell the dead peer (wireup CLOSE), and libuct 1.13 leaks
     * ~100 bytes when its posix connect to a process that is gone fails */
    start = psel_time_sec();
    for (i = 0; (stalled_ep->status == UCS_OK) && (i < 100000000u) &&
                (psel_time_sec() < start + EP_SERVED_WITHIN); ++i) {
        psel_worker_progress(worker);
    }
    print_message("    tls=%-6s the dead peer's endpoint: %s after %.3f s\n",
                  tls, ucs_status_string(stalled_ep->status),
                  psel_time_sec() - start);
    /* keepalive must have found it, or the destroy below would meet the
     * libuct leak instead of saying so */
    assert_true(UCS_STATUS_IS_ERR(stalled_ep->status));
    psel_ep_destroy(stalled_ep);
    assert_true(UCS_STATUS_IS_ERR(psel_request_test(stalled_recv, NULL)));
    for (i = 0; i < num_stalled; ++i) {
        assert_true(psel_request_test(stalled_reqs[i], NULL) !=
                    UCS_INPROGRESS);
        psel_request_free(stalled_reqs[i]);
    }
    psel_request_free(stalled_recv);
    psel_request_free(good_recv);
    assert_int_equal(psel_test_write_all(good_sock, &done, 1), 0);
    assert_int_equal(psel_test_wait_child(ep_children[1], 30.0), 0);
    ep_children[1] = 0;
    psel_worker_destroy(worker);
    psel_context_destroy(context);
    close(stalled_sock);
    close(good_sock);
    free(address);
    free(stalled_addr);
    free(good_addr);
    free(stalled_reqs);
    free(buf);
    free(rbuf[0]);
    free(rbuf[1]);
}

static void test_stalled_reply_lane_posix(void **state)
{
    run_stalled_reply_lane("posix", 8);
}

static void test_stalled_reply_lane_tcp(void **state)
{
    run_stalled_reply_lane("tcp", 4096);
}

static void test_iface_idle_again(void **state)
{
    psel_context_h context;
    psel_worker_h a, b;
    psel_request_t *sreq, *rreq;
    void *address;
    size_t len;
    psel_ep_h ep;
    unsigned i;
    char buf[8];

    setenv("UCX_PSEL_TLS", "posix", 1);
    assert_int_equal(psel_context_create(&context), UCS_OK);
    assert_int_equal(psel_worker_create(context, &a), UCS_OK);
    assert_int_equal(psel_worker_create(context, &b), UCS_OK);
    assert_int_equal(a->num_ifaces, 1);
    assert_false(a->ifaces[0].active);

    /* a's endpoint to b: its lane's iface is polled */
    assert_int_equal(psel_worker_get_address(b, &address, &len), UCS_OK);
    assert_int_equal(psel_ep_create(a, address, len, &ep), UCS_OK);
    free(address);
    assert_true(a->ifaces[0].active);
    assert_int_equal(a->ifaces[0].num_eps, 1);
    rreq = psel_tag_recv_nb(b, buf, sizeof(buf), 1, UINT64_MAX, NULL, NULL);
    sreq = psel_tag_send_nb(ep, "hello", 6, 1, NULL, NULL);
    for (i = 0; (i < 1000000) &&
                (psel_request_test(rreq, NULL) == UCS_INPROGRESS); ++i) {
        psel_worker_progress(a);
        psel_worker_progress(b);
    }
    assert_int_equal(wait_req(a, sreq), UCS_OK);
    assert_int_equal(psel_request_test(rreq, NULL), UCS_OK);
    psel_request_free(sreq);
    psel_request_free(rreq);

    /* the last endpoint goes: idle again */
    assert_int_equal(psel_test_close_ep(a, ep), UCS_OK);
    assert_int_equal(a->ifaces[0].num_eps, 0);
    assert_false(a->ifaces[0].active);

    /* a message from b wakes it */
    assert_int_equal(psel_worker_get_address(a, &address, &len), UCS_OK);
    assert_int_equal(psel_ep_create(b, address, len, &ep), UCS_OK);
    free(address);
    rreq = psel_tag_recv_nb(a, buf, sizeof(buf), 2, UINT64_MAX, NULL, NULL);
    sreq = psel_tag_send_nb(ep, "again", 6, 2, NULL, NULL);
    assert_int_equal(wait_req(b, sreq), UCS_OK);
    assert_int_equal(wait_req(a, rreq), UCS_OK);
    assert_string_equal(buf, "again");
    assert_true(a->ifaces[0].active);
    psel_request_free(sreq);
    psel_request_free(rreq);

    assert_int_equal(psel_test_close_ep(b, ep), UCS_OK);
    psel_worker_destroy(a);
    psel_worker_destroy(b);
    psel_context_destroy(context);
    unsetenv("UCX_PSEL_TLS");
}

/* ---- a streaming receiver's temporal slip (UCX_PSEL_RX_SLIP) ---- */

#define SLIP_MSGS     16
#define SLIP_DURATION "20us" /* long enough to tell a wait from a poll */

/* Two workers of this process over posix, an endpoint each way. */
typedef struct {
    psel_context_h context;
    psel_worker_h  a, b;
    psel_ep_h      ab, ba;
} slip_pair_t;

static void slip_pair_open(slip_pair_t *p, const char *slip)
{
    void *address;
    size_t len;

    setenv("UCX_PSEL_TLS", "posix", 1);
    setenv("UCX_PSEL_RX_SLIP", slip, 1);
    assert_int_equal(psel_context_create(&p->context), UCS_OK);
    assert_int_equal(psel_worker_create(p->context, &p->a), UCS_OK);
    assert_int_equal(psel_worker_create(p->context, &p->b), UCS_OK);
    assert_int_equal(psel_worker_get_address(p->b, &address, &len), UCS_OK);
    assert_int_equal(psel_ep_create(p->a, address, len, &p->ab), UCS_OK);
    free(address);
    assert_int_equal(psel_worker_get_address(p->a, &address, &len), UCS_OK);
    assert_int_equal(psel_ep_create(p->b, address, len, &p->ba), UCS_OK);
    free(address);
    unsetenv("UCX_PSEL_TLS");
    unsetenv("UCX_PSEL_RX_SLIP");
}

static void slip_pair_close(slip_pair_t *p)
{
    assert_int_equal(psel_test_close_ep(p->a, p->ab), UCS_OK);
    assert_int_equal(psel_test_close_ep(p->b, p->ba), UCS_OK);
    psel_worker_destroy(p->a);
    psel_worker_destroy(p->b);
    psel_context_destroy(p->context);
}

/* Progress both workers until @a req completes (bounded); then free it. */
static void slip_wait(slip_pair_t *p, psel_request_t *req)
{
    double deadline = psel_time_sec() + EP_SERVED_WITHIN;

    while ((psel_request_test(req, NULL) == UCS_INPROGRESS) &&
           (psel_time_sec() < deadline)) {
        psel_worker_progress(p->a);
        psel_worker_progress(p->b);
    }
    assert_int_equal(psel_request_test(req, NULL), UCS_OK);
    psel_request_free(req);
}

/* a sends b SLIP_MSGS messages, one at a time; b answers each first if
 * @a reply. After each, one more progress call of b, which finds nothing:
 * its longest time goes to @a longest_p. @return b's waits meanwhile. */
static uint64_t slip_exchange(slip_pair_t *p, int reply, double *longest_p)
{
    uint64_t before = p->b->rx_slip.count;
    psel_request_t *sreq, *rreq;
    char buf[8];
    unsigned i;
    double t;

    *longest_p = 0;
    for (i = 0; i < SLIP_MSGS; ++i) {
        rreq = psel_tag_recv_nb(p->b, buf, sizeof(buf), 1, UINT64_MAX, NULL,
                                NULL);
        sreq = psel_tag_send_nb(p->ab, "stream", 7, 1, NULL, NULL);
        slip_wait(p, rreq);
        if (UCS_PTR_IS_PTR(sreq)) {
            slip_wait(p, sreq);
        }
        if (reply) {
            rreq = psel_tag_recv_nb(p->a, buf, sizeof(buf), 2, UINT64_MAX,
                                    NULL, NULL);
            sreq = psel_tag_send_nb(p->ba, "reply", 6, 2, NULL, NULL);
            slip_wait(p, rreq);
            if (UCS_PTR_IS_PTR(sreq)) {
                slip_wait(p, sreq);
            }
        }
        t = psel_time_sec();
        assert_int_equal(psel_worker_progress(p->b), 0);
        *longest_p = ucs_max(*longest_p, psel_time_sec() - t);
    }
    return p->b->rx_slip.count - before;
}

/* A receiver that gets messages with no send of its own between them
 * waits once, at its first progress call that then finds nothing; one that
 * answers each message never waits (ping-pong latency is untouched); "0"
 * turns it off. */
static void test_rx_slip(void **state)
{
    slip_pair_t p;
    double longest;

    slip_pair_open(&p, SLIP_DURATION);
    assert_true(p.b->rx_slip.duration >= 20e-6);

    /* request-reply first: b answers each message before it polls again */
    assert_int_equal(slip_exchange(&p, 1, &longest), 0);
    /* streaming: one wait after each message but the first, which came
     * after b's last answer; and it does wait */
    assert_int_equal(slip_exchange(&p, 0, &longest), SLIP_MSGS - 1);
    assert_true(longest >= 20e-6);
    /* request-reply again: the first answer disarms it */
    assert_int_equal(slip_exchange(&p, 1, &longest), 0);
    /* a, which only sent and got answers, never waited */
    assert_int_equal(p.a->rx_slip.count, 0);
    slip_pair_close(&p);

    slip_pair_open(&p, "0");
    assert_int_equal(slip_exchange(&p, 0, &longest), 0);
    slip_pair_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_stalled_peer_posix, teardown_children),
        cmocka_unit_test_teardown(test_stalled_peer_sysv, teardown_children),
        cmocka_unit_test_teardown(test_stalled_peer_tcp, teardown_children),
        cmocka_unit_test_teardown(test_stalled_peer_rndv_posix,
                                  teardown_children),
        cmocka_unit_test_teardown(test_stalled_peer_rndv_tcp,
                                  teardown_children),
        cmocka_unit_test_teardown(test_stalled_reply_lane_posix,
                                  teardown_children),
        cmocka_unit_test_teardown(test_stalled_reply_lane_tcp,
                                  teardown_children),
        cmocka_unit_test(test_iface_idle_again),
        cmocka_unit_test(test_rx_slip)
    };

    setenv("UCX_PSEL_CALIBRATION", "none", 0);
    if (getenv("PSEL_TEST_FILTER") != NULL) {
        cmocka_set_test_filter(getenv("PSEL_TEST_FILTER")); /* by hand */
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
