/*
 * Rendezvous under faults: the peer dies at each stage of a rendezvous.
 * Two processes, this one survives and the other dies with SIGKILL at a
 * chosen point, found by the rendezvous engine's event hook
 * (psel_rndv_event_hook): the RTS out, a read posted (during the get), a
 * put chunk posted (between chunks), before the ATS or the FIN, before
 * the RTR. The survivor's request must fail with an error within
 * FAULT_FAIL_WITHIN seconds (tcp reports the closed connection; shared
 * memory is found by keepalive), and its worker must then still exchange
 * messages with a new peer.
 *
 * The dead process is reaped at once by a thread, as its parent would be
 * in a real job: UCT's shared-memory keepalive compares the peer's start
 * time in /proc, which a zombie still has. Over shared memory the victim
 * dies by its own hand at its point; over tcp the survivor may kill it
 * from outside at any time. (A process killed from outside while it writes
 * into a peer's shared-memory FIFO leaves that slot unfinished, and UCT's
 * mm FIFO then stops for every sender: a UCT limit, docs/data-path.md "Peer failure".)
 */
#include "test_util.h"

#include <core/core_int.h>
#include <ucp_proto_sel/proto_rndv_int.h> /* the rendezvous internals it checks */

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#define FAULT_FAIL_WITHIN 10.0   /* s: the survivor's request fails */
#define FAULT_TAG         0x51
#define FAULT_GOOD_TAG    0x52

/* Which process dies, and where. */
typedef struct {
    const char       *name;
    const char       *tls;
    const char       *protos;
    size_t            size;
    int               victim_sends;  /* the dying process is the sender */
    psel_rndv_event_t event;         /* the point it dies at */
} fault_case_t;

static const fault_case_t fault_cases[] = {
    {"RTS matched, the receiver dies",      "posix,cma", "rndv/get",
     4 << 20, 0, PSEL_RNDV_EVENT_MATCHED},
    {"RTS out, the receiver is killed",     "tcp",       "rndv/am",
     4 << 20, 0, PSEL_RNDV_EVENT_RTS_SENT},
    {"RTS out, the sender dies",            "posix,cma", "rndv/am",
     4 << 20, 1, PSEL_RNDV_EVENT_RTS_SENT},
    {"during the get, the reader dies",     "posix,cma", "rndv/get",
     16 << 20, 0, PSEL_RNDV_EVENT_GET_POSTED},
    {"before the ATS, the reader dies",     "sysv,cma",  "rndv/get",
     4 << 20, 0, PSEL_RNDV_EVENT_ATS},
    {"before the RTR, the receiver dies",   "tcp",       "rndv/am",
     4 << 20, 0, PSEL_RNDV_EVENT_RTR},
    {"between put chunks, the receiver dies", "tcp",     "rndv/put",
     16 << 20, 0, PSEL_RNDV_EVENT_DATA_POSTED},
    {"between put chunks, the sender dies", "tcp",       "rndv/put",
     16 << 20, 1, PSEL_RNDV_EVENT_DATA_POSTED},
    {"before the FIN, the sender dies",     "posix,cma", "rndv/put",
     4 << 20, 1, PSEL_RNDV_EVENT_FIN},
    {"between am chunks, the sender dies",  "tcp",       "rndv/am",
     16 << 20, 1, PSEL_RNDV_EVENT_DATA_POSTED}
};

/* The event this process dies at (the child), or kills the child at (the
 * parent, for sender-side events of a dying receiver). */
static psel_rndv_event_t fault_event;
static pid_t             fault_kill_pid;

static void fault_hook(psel_rndv_event_t event)
{
    if (event != fault_event) {
        return;
    }
    if (fault_kill_pid == 0) {
        raise(SIGKILL);
    }
    if (fault_kill_pid > 0) {
        kill(fault_kill_pid, SIGKILL); /* the reaper thread waits for it */
        fault_kill_pid = -1;           /* once */
    }
}

static int fault_is_sender_event(psel_rndv_event_t event)
{
    return (event == PSEL_RNDV_EVENT_RTS_SENT) ||
           (event == PSEL_RNDV_EVENT_DATA_POSTED) ||
           (event == PSEL_RNDV_EVENT_FIN);
}

typedef struct {
    psel_context_h context;
    psel_worker_h  worker;
    psel_ep_h      ep;
} fault_side_t;

/* A worker, its address sent on @a sock, the peer's read from it, and an
 * endpoint to the peer. @return 0 or -1. */
static int fault_open(fault_side_t *side, int sock)
{
    void *address, *peer;
    size_t len, peer_len;

    if ((psel_context_create(&side->context) != UCS_OK) ||
        (psel_worker_create(side->context, &side->worker) != UCS_OK) ||
        (psel_worker_get_address(side->worker, &address, &len) != UCS_OK)) {
        fprintf(stderr, "fault %d: no worker\n", (int)getpid());
        return -1;
    }
    if (psel_test_write_all(sock, &len, sizeof(len)) ||
        psel_test_write_all(sock, address, len) ||
        psel_test_read_all(sock, &peer_len, sizeof(peer_len)) ||
        ((peer = malloc(peer_len)) == NULL) ||
        psel_test_read_all(sock, peer, peer_len)) {
        fprintf(stderr, "fault %d: no address exchange\n", (int)getpid());
        return -1;
    }
    free(address);
    if (psel_ep_create(side->worker, peer, peer_len, &side->ep) != UCS_OK) {
        fprintf(stderr, "fault %d: no endpoint\n", (int)getpid());
        return -1;
    }
    free(peer);
    return 0;
}

static void fault_close(fault_side_t *side)
{
    psel_ep_destroy(side->ep);
    psel_worker_destroy(side->worker);
    psel_context_destroy(side->context);
}

/* Progress until @a req completes or @a sec pass; its status. */
static ucs_status_t fault_wait(psel_worker_h worker, psel_request_t *req,
                               double sec)
{
    double deadline = psel_time_sec() + sec;

    while ((psel_request_test(req, NULL) == UCS_INPROGRESS) &&
           (psel_time_sec() < deadline)) {
        psel_worker_progress(worker);
    }
    return psel_request_test(req, NULL);
}

/* The process that dies (or, healthy, the new peer): send or receive one
 * message of @a size; healthy, answer with a small message too. */
static int fault_child(int sock, const fault_case_t *c, int healthy)
{
    fault_side_t side;
    psel_request_t *req;
    uint8_t *buf, go;
    ucs_status_t status;

    buf = calloc(1, c->size);
    if ((buf == NULL) || fault_open(&side, sock)) {
        fprintf(stderr, "fault child: no worker or endpoint\n");
        return 1;
    }
    if (!healthy) {
        fault_event          = c->event;
        fault_kill_pid       = 0; /* die */
        psel_rndv_event_hook = fault_hook;
        /* the survivor has its endpoint: the peer's resources must still
         * be there when it connects */
        if (psel_test_read_all(sock, &go, 1)) {
            return 5;
        }
    }
    if (!healthy && c->victim_sends) {
        req = psel_tag_send_nb(side.ep, buf, c->size, FAULT_TAG, NULL, NULL);
    } else {
        req = psel_tag_recv_nb(side.worker, buf, c->size, FAULT_TAG,
                               UINT64_MAX, NULL, NULL);
    }
    status = fault_wait(side.worker, req, healthy ? 20 : 30);
    if (!healthy) {
        fprintf(stderr, "fault child: did not die at event %d (%s)\n",
                c->event, ucs_status_string(status));
        return 2;
    }
    if (status != UCS_OK) {
        fprintf(stderr, "fault child: healthy receive: %s (unexpected %zu, "
                "rendezvous receives %u, endpoints %zu)\n",
                ucs_status_string(status),
                psel_tm_num_unexpected(&side.worker->tm),
                kh_size(&side.worker->rndv.recvs),
                (size_t)ucs_list_length(&side.worker->eps));
        return 3;
    }
    psel_request_free(req);
    req    = psel_tag_send_nb(side.ep, "ok", 3, FAULT_GOOD_TAG, NULL, NULL);
    status = fault_wait(side.worker, req, 30);
    psel_request_free(req);
    if (status != UCS_OK) {
        fprintf(stderr, "fault child: healthy answer: %s\n",
                ucs_status_string(status));
        fflush(stdout);
        return 4;
    }
    /* stay until the parent has it */
    while (!psel_test_sock_readable(sock)) {
        psel_worker_progress(side.worker);
    }
    fault_close(&side);
    free(buf);
    return 0;
}

static pid_t fault_fork(const fault_case_t *c, int healthy, int *sock)
{
    int sv[2];
    pid_t pid;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pid = psel_test_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        _exit(fault_child(sv[1], c, healthy));
    }
    close(sv[1]);
    *sock = sv[0];
    return pid;
}

/* The survivor's worker still serves a new peer (@a pid, forked before
 * this process had a worker: UCX's async thread does not survive a fork):
 * one message each way. */
static void fault_new_peer(const fault_case_t *c, psel_worker_h worker,
                           pid_t pid, int sock)
{
    fault_side_t side = {.worker = worker};
    psel_request_t *req;
    void *address, *peer;
    size_t len, peer_len;
    uint8_t *buf, ok[3];

    buf = calloc(1, c->size);
    assert_non_null(buf);
    assert_int_equal(psel_worker_get_address(worker, &address, &len), UCS_OK);
    assert_int_equal(psel_test_write_all(sock, &len, sizeof(len)), 0);
    assert_int_equal(psel_test_write_all(sock, address, len), 0);
    assert_int_equal(psel_test_read_all(sock, &peer_len, sizeof(peer_len)),
                     0);
    peer = malloc(peer_len);
    assert_non_null(peer);
    assert_int_equal(psel_test_read_all(sock, peer, peer_len), 0);
    assert_int_equal(psel_ep_create(worker, peer, peer_len, &side.ep),
                     UCS_OK);
    req = psel_tag_send_nb(side.ep, buf, c->size, FAULT_TAG, NULL, NULL);
    assert_int_equal(fault_wait(worker, req, 30), UCS_OK);
    psel_request_free(req);
    req = psel_tag_recv_nb(worker, ok, sizeof(ok), FAULT_GOOD_TAG, UINT64_MAX,
                           NULL, NULL);
    assert_int_equal(fault_wait(worker, req, 30), UCS_OK);
    assert_string_equal((char*)ok, "ok");
    psel_request_free(req);
    assert_int_equal(psel_test_close_ep(worker, side.ep), UCS_OK);
    assert_int_equal(psel_test_write_all(sock, "x", 1), 0);
    assert_int_equal(psel_test_wait_child(pid, 30), 0);
    free(address);
    free(peer);
    free(buf);
}

/* Children of the running case, killed by the teardown if it fails. */
static pid_t fault_children[2];

static void ep_children_set(pid_t victim, pid_t good)
{
    fault_children[0] = victim;
    fault_children[1] = good;
}

static int teardown_children(void **state)
{
    unsigned i;

    psel_rndv_event_hook = NULL;
    for (i = 0; i < 2; ++i) {
        if (fault_children[i] > 0) {
            kill(fault_children[i], SIGKILL);
            waitpid(fault_children[i], NULL, WNOHANG);
        }
    }
    ep_children_set(0, 0);
    return 0;
}

/* Reap the victim as soon as it dies, keeping its status. */
typedef struct {
    pid_t pid;
    int   wstatus;
} fault_reaper_t;

static void *fault_reap(void *arg)
{
    fault_reaper_t *r = arg;

    while ((waitpid(r->pid, &r->wstatus, 0) < 0) && (errno == EINTR)) {
    }
    return NULL;
}

static int fault_skip(const fault_case_t *c)
{
    if (strstr(c->tls, "cma") && !psel_test_has_transport("cma")) {
        print_message("    %-40s SKIP: needs cma, which this machine lacks "
                      "(ptrace rights)\n", c->name);
        return 1;
    }
    return 0;
}

static void run_fault(const fault_case_t *c)
{
    fault_reaper_t reaper = {0};
    pthread_t reaper_thread;
    fault_side_t side;
    psel_request_t *req;
    ucs_status_t status;
    double start, took;
    int sock, good_sock;
    pid_t pid, good_pid;
    uint8_t *buf;

    setenv("UCX_PSEL_TLS", c->tls, 1);
    setenv("UCX_PSEL_PROTOS", c->protos, 1);
    buf = calloc(1, c->size);
    assert_non_null(buf);
    pid      = fault_fork(c, 0, &sock);
    good_pid = fault_fork(c, 1, &good_sock);
    ep_children_set(pid, good_pid);
    assert_int_equal(fault_open(&side, sock), 0);
    reaper.pid = pid;
    assert_int_equal(pthread_create(&reaper_thread, NULL, fault_reap,
                                    &reaper), 0);
    assert_int_equal(psel_test_write_all(sock, "g", 1), 0); /* go */

    /* a dying receiver's sender-side event: this process kills it then */
    if (!c->victim_sends && fault_is_sender_event(c->event)) {
        fault_event          = c->event;
        fault_kill_pid       = pid;
        psel_rndv_event_hook = fault_hook;
    }
    start = psel_time_sec();
    if (c->victim_sends) {
        req = psel_tag_recv_nb(side.worker, buf, c->size, FAULT_TAG,
                               UINT64_MAX, NULL, NULL);
    } else {
        req = psel_tag_send_nb(side.ep, buf, c->size, FAULT_TAG, NULL, NULL);
    }
    status = fault_wait(side.worker, req, FAULT_FAIL_WITHIN);
    took   = psel_time_sec() - start;
    psel_rndv_event_hook = NULL;
    print_message("    %-40s %-9s %-8s: the %s %s after %.3f s\n", c->name,
                  c->tls, c->protos, c->victim_sends ? "receive" : "send",
                  ucs_status_string(status), took);
    assert_true(UCS_STATUS_IS_ERR(status));
    psel_request_free(req);

    /* the victim died at its point, by SIGKILL */
    assert_int_equal(pthread_join(reaper_thread, NULL), 0);
    assert_true(WIFSIGNALED(reaper.wstatus) &&
                (WTERMSIG(reaper.wstatus) == SIGKILL));
    fault_kill_pid = 0;
    close(sock);

    /* nothing of the dead peer's rendezvous is left */
    psel_ep_destroy(side.ep);
    assert_int_equal(kh_size(&side.worker->rndv.sends), 0);
    assert_int_equal(kh_size(&side.worker->rndv.recvs), 0);
    assert_true(ucs_list_is_empty(&side.worker->proto.rndv_work));

    fault_new_peer(c, side.worker, good_pid, good_sock);
    ep_children_set(0, 0);
    close(good_sock);
    psel_worker_destroy(side.worker);
    psel_context_destroy(side.context);
    free(buf);
}

static void test_rndv_faults(void **state)
{
    const char *filter = getenv("PSEL_FAULT_FILTER"); /* a developer's knob */
    unsigned i;

    for (i = 0; i < sizeof(fault_cases) / sizeof(fault_cases[0]); ++i) {
        if (((filter == NULL) || strstr(fault_cases[i].name, filter)) &&
            !fault_skip(&fault_cases[i])) {
            run_fault(&fault_cases[i]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_rndv_faults, teardown_children)
    };

    setenv("UCX_PSEL_CALIBRATION", "none", 0);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
