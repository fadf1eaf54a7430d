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
 * wait behind the stalled peer's forever.
 *
 * Also: an iface is polled on every progress call only while a UCT
 * endpoint of ours uses it; once the last goes it is idle again, and a
 * peer's message wakes it.
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
#include <unistd.h>
#include <cmocka.h>

#define EP_GOOD_MSGS       16
#define EP_FLOOD_MAX       200000  /* sends to the stalled peer at most */
#define EP_STALL_BYTES_MAX (256ul << 20)
#define EP_SERVED_WITHIN   10.0    /* s: the healthy peer gets its messages */
#define EP_HELLO_TAG       999

/* A peer process: publish the address on @a sock; stalled (@a healthy 0):
 * progress until stopped, then killed; healthy: receive EP_GOOD_MSGS of
 * @a size bytes, check them, report on @a sock, progress until told to
 * go. */
static int peer(int sock, int healthy, size_t size)
{
    psel_context_h context;
    psel_worker_h worker;
    psel_request_t *req;
    uint8_t *buf, done;
    double deadline;
    void *address;
    size_t len;
    unsigned i;

    buf = malloc(size);
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
    deadline = psel_time_sec() + 60;
    if (!healthy) {
        /* one message first, so the connection is up before the stop */
        req = psel_tag_recv_nb(worker, buf, size, EP_HELLO_TAG, UINT64_MAX,
                               NULL, NULL);
        while (psel_request_test(req, NULL) == UCS_INPROGRESS) {
            psel_worker_progress(worker);
        }
        done = 1;
        psel_test_write_all(sock, &done, 1);
        while (psel_time_sec() < deadline) {
            psel_worker_progress(worker); /* until SIGSTOP, then SIGKILL */
        }
        return 2;
    }
    for (i = 0; i < EP_GOOD_MSGS; ++i) {
        req = psel_tag_recv_nb(worker, buf, size, i, UINT64_MAX, NULL, NULL);
        while ((psel_request_test(req, NULL) == UCS_INPROGRESS) &&
               (psel_time_sec() < deadline)) {
            psel_worker_progress(worker);
        }
        if ((psel_request_test(req, NULL) != UCS_OK) || (buf[0] != i) ||
            (buf[size - 1] != (uint8_t)(i + 1))) {
            fprintf(stderr, "peer: message %u: %s\n", i,
                    ucs_status_string(psel_request_test(req, NULL)));
            return 3;
        }
        psel_request_free(req);
    }
    done = 1;
    if (psel_test_write_all(sock, &done, 1) != 0) {
        return 4;
    }
    /* serve the sender's close until it says so */
    while ((psel_time_sec() < deadline) && !psel_test_sock_readable(sock)) {
        psel_worker_progress(worker);
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
    return 0;
}

static pid_t start_peer(int healthy, size_t size, void **address,
                        size_t *len, int *sock)
{
    int sv[2];
    pid_t pid;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        _exit(peer(sv[1], healthy, size));
    }
    close(sv[1]);
    ep_children[healthy] = pid;
    assert_int_equal(psel_test_read_all(sv[0], len, sizeof(*len)), 0);
    *address = malloc(*len);
    assert_non_null(*address);
    assert_int_equal(psel_test_read_all(sv[0], *address, *len), 0);
    *sock = sv[0];
    return pid;
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

static void run_stalled_peer(const char *tls, size_t size)
{
    psel_request_t **stalled_reqs, *good_reqs[EP_GOOD_MSGS], *hello;
    void *stalled_addr, *good_addr;
    size_t stalled_len, good_len;
    int stalled_sock, good_sock, wstatus;
    pid_t stalled_pid, good_pid;
    psel_ep_h stalled_ep, good_ep;
    psel_context_h context;
    psel_worker_h worker;
    unsigned num_stalled, i, still_waiting;
    double start, elapsed;
    uint8_t *buf, done;

    setenv("UCX_PSEL_TLS", tls, 1);
    buf          = malloc(size * (EP_GOOD_MSGS + 1));
    stalled_reqs = calloc(EP_FLOOD_MAX, sizeof(*stalled_reqs));
    assert_non_null(buf);
    assert_non_null(stalled_reqs);
    memset(buf, 0x5a, size);
    for (i = 0; i < EP_GOOD_MSGS; ++i) {
        memset(buf + (i + 1) * size, 0, size);
        buf[(i + 1) * size]            = i;
        buf[(i + 1) * size + size - 1] = i + 1;
    }

    stalled_pid = start_peer(0, size, &stalled_addr, &stalled_len,
                             &stalled_sock);
    good_pid    = start_peer(1, size, &good_addr, &good_len, &good_sock);
    assert_int_equal(psel_context_create(&context), UCS_OK);
    assert_int_equal(psel_worker_create(context, &worker), UCS_OK);
    assert_int_equal(psel_ep_create(worker, stalled_addr, stalled_len,
                                    &stalled_ep), UCS_OK);
    assert_int_equal(psel_ep_create(worker, good_addr, good_len, &good_ep),
                     UCS_OK);
    /* the stalled peer got a first message: connected; then it stops */
    hello = psel_tag_send_nb(stalled_ep, buf, size, EP_HELLO_TAG, NULL, NULL);
    assert_false(UCS_PTR_IS_ERR(hello));
    start = psel_time_sec();
    while (!psel_test_sock_readable(stalled_sock) &&
           (psel_time_sec() - start < EP_SERVED_WITHIN)) {
        psel_worker_progress(worker);
    }
    assert_int_equal(psel_test_read_all(stalled_sock, &done, 1), 0);
    assert_int_equal(kill(stalled_pid, SIGSTOP), 0);
    assert_int_equal(psel_request_test(hello, NULL), UCS_OK);
    psel_request_free(hello);

    num_stalled = flood(worker, stalled_ep, buf, size, stalled_reqs);
    print_message("    tls=%-6s size=%zu: the stalled peer's endpoint blocks "
                  "after %u sends\n", tls, size, num_stalled);
    assert_false(ucs_list_is_empty(&stalled_ep->pending));

    start = psel_time_sec();
    for (i = 0; i < EP_GOOD_MSGS; ++i) {
        good_reqs[i] = psel_tag_send_nb(good_ep, buf + (i + 1) * size, size,
                                        i, NULL, NULL);
        assert_false(UCS_PTR_IS_ERR(good_reqs[i]));
    }
    while (!psel_test_sock_readable(good_sock) &&
           (psel_time_sec() - start < EP_SERVED_WITHIN)) {
        psel_worker_progress(worker);
    }
    elapsed = psel_time_sec() - start;
    print_message("    tls=%-6s size=%zu: the healthy peer's %u messages: %s "
                  "after %.3f s\n", tls, size, EP_GOOD_MSGS,
                  psel_test_sock_readable(good_sock) ? "all received" :
                  "NOT received", elapsed);
    assert_true(psel_test_sock_readable(good_sock));
    assert_int_equal(psel_test_read_all(good_sock, &done, 1), 0);
    assert_int_equal(done, 1);
    for (i = 0; i < EP_GOOD_MSGS; ++i) {
        while (psel_request_test(good_reqs[i], NULL) == UCS_INPROGRESS) {
            psel_worker_progress(worker);
        }
        assert_int_equal(psel_request_test(good_reqs[i], NULL), UCS_OK);
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
    assert_int_equal(kill(stalled_pid, SIGKILL), 0);
    assert_int_equal(waitpid(stalled_pid, &wstatus, 0), stalled_pid);
    assert_true(WIFSIGNALED(wstatus) && (WTERMSIG(wstatus) == SIGKILL));
    ep_children[0] = 0;
    psel_ep_destroy(stalled_ep);
    for (i = 0; i < num_stalled; ++i) {
        assert_true(psel_request_test(stalled_reqs[i], NULL) !=
                    UCS_INPROGRESS);
        psel_request_free(stalled_reqs[i]);
    }
    assert_int_equal(psel_test_close_ep(worker, good_ep), UCS_OK);
    assert_int_equal(psel_test_write_all(good_sock, &done, 1), 0);
    assert_int_equal(psel_test_wait_child(good_pid, 30.0), 0);
    ep_children[1] = 0;

    psel_worker_destroy(worker);
    psel_context_destroy(context);
    close(stalled_sock);
    close(good_sock);
    free(stalled_addr);
    free(good_addr);
    free(stalled_reqs);
    free(buf);
}

static void test_stalled_peer_posix(void **state)
{
    run_stalled_peer("posix", 8);
}

static void test_stalled_peer_sysv(void **state)
{
    run_stalled_peer("sysv", 8);
}

static void test_stalled_peer_tcp(void **state)
{
    run_stalled_peer("tcp", 4096); /* egr/zcopy: fills the socket */
}

/* Progress @a worker until @a req completes (or 10 s). */
static ucs_status_t wait_req(psel_worker_h worker, psel_request_t *req)
{
    double deadline = psel_time_sec() + 10;

    while ((psel_request_test(req, NULL) == UCS_INPROGRESS) &&
           (psel_time_sec() < deadline)) {
        psel_worker_progress(worker);
    }
    return psel_request_test(req, NULL);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_stalled_peer_posix, teardown_children),
        cmocka_unit_test_teardown(test_stalled_peer_sysv, teardown_children),
        cmocka_unit_test_teardown(test_stalled_peer_tcp, teardown_children),
        cmocka_unit_test(test_iface_idle_again)
    };

    setenv("UCX_PSEL_CALIBRATION", "none", 0);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
