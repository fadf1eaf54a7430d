/*
 * Integration tests of the data path over real UCT transports, in two
 * processes: a forked receiver publishes its worker address over a
 * socketpair, the sender connects and sends; the receiver checks every
 * message's tag, size and contents and reports back. Every wait is bounded.
 */
#include "test_util.h"

#include <core/psel_core.h>
#include <ucp_proto_sel/select.h>

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#define LIVE_TIMEOUT_SEC   60    /* per test case, both processes */
#define LIVE_MAX_MSGS      4096

typedef enum {
    CASE_SIZES,       /* one message per size, receive posted first */
    CASE_UNEXPECTED,  /* all sent before any receive is posted */
    CASE_IN_FLIGHT,   /* many messages at once, beyond the transport window */
    CASE_WILDCARD,    /* receives with a zero mask: arrival order */
    CASE_TRUNCATE     /* every other receive one byte short */
} live_case_t;

typedef struct {
    const char  *tls;      /* UCX_PSEL_TLS */
    const char  *protos;   /* UCX_PSEL_PROTOS, NULL for automatic */
    live_case_t  kind;
    unsigned     count;    /* messages */
    const size_t *sizes;   /* per message, cycled */
    unsigned     num_sizes;
    int          p2p;      /* tcp lanes connect ep to ep through wireup */
    int          stream_odd; /* odd messages sent as streamed
                                (PSEL_SEND_FLAG_STREAM) */
} live_test_t;

static uint8_t pattern(unsigned msg, size_t offset)
{
    return (uint8_t)(msg * 131 + offset * 7 + (offset >> 8));
}

static size_t msg_size(const live_test_t *t, unsigned msg)
{
    return t->sizes[msg % t->num_sizes];
}

/* Progress until every request completes or the deadline passes. */
static int wait_all(psel_worker_h worker, psel_request_t **reqs, unsigned n,
                    double deadline)
{
    unsigned i, done;

    do {
        psel_worker_progress(worker);
        for (i = 0, done = 0; i < n; ++i) {
            done += (reqs[i] == NULL) ||
                    (psel_request_test(reqs[i], NULL) != UCS_INPROGRESS);
        }
        if (done == n) {
            return 0;
        }
    } while (psel_test_now() < deadline);
    fprintf(stderr, "live: %u of %u requests still running at the deadline\n",
            n - done, n);
    return -1;
}

static void set_env(const live_test_t *t)
{
    setenv("UCX_PSEL_TLS", t->tls, 1);
    if (t->protos != NULL) {
        setenv("UCX_PSEL_PROTOS", t->protos, 1);
    } else {
        unsetenv("UCX_PSEL_PROTOS");
    }
    /* a rendezvous send completes only once its receive is posted, and a
     * truncated rendezvous moves no data: these cases are about eager
     * messages (test_rndv_live.c has their rendezvous versions) */
    if ((t->kind == CASE_UNEXPECTED) || (t->kind == CASE_TRUNCATE)) {
        setenv("UCX_PSEL_RNDV_THRESH", "inf", 1);
    } else {
        unsetenv("UCX_PSEL_RNDV_THRESH");
    }
    if (t->p2p) {
        setenv("UCX_PSEL_WIREUP_P2P_TLS", "tcp", 1);
    } else {
        unsetenv("UCX_PSEL_WIREUP_P2P_TLS");
    }
}

/* With t->p2p, the endpoint's lanes must have been connected ep to ep by
 * the wireup exchange, and it must know the peer's endpoint id. */
static int check_wireup(psel_ep_h ep, const live_test_t *t)
{
    char *text   = NULL;
    size_t size  = 0;
    FILE *stream = open_memstream(&text, &size);
    int ok;

    if (stream == NULL) {
        return -1;
    }
    psel_ep_print_info(ep, stream);
    fclose(stream);
    ok = t->p2p ? ((strstr(text, ": ready\n") != NULL) &&
                   (strstr(text, "connected ep to ep") != NULL) &&
                   (strstr(text, "not connected yet") == NULL)) :
                  (strstr(text, "ep to ep") == NULL);
    if (!ok) {
        fprintf(stderr, "unexpected endpoint state (p2p=%d):\n%s", t->p2p,
                text);
    }
    free(text);
    return ok ? 0 : -1;
}

/* With t->stream_odd (one size, two messages): the even one ran the
 * protocol of the endpoint's table of single sends, the odd one that of
 * its table of streamed sends, and the two differ at that size. */
static int check_streamed(psel_ep_h ep, psel_worker_h worker,
                          const live_test_t *t)
{
    const psel_select_table_t *single = psel_ep_tag_table(ep, 0);
    const psel_select_table_t *stream = psel_ep_tag_table(ep,
                                                          PSEL_SEND_FLAG_STREAM);
    const char *p_single, *p_stream;

    if ((single == NULL) || (stream == NULL) || (t->count != 2) ||
        (t->num_sizes != 1)) {
        fprintf(stderr, "streamed: no tables, or not 2 messages of a size\n");
        return -1;
    }
    p_single = psel_select_table_find(single, t->sizes[0])->proto->name;
    p_stream = psel_select_table_find(stream, t->sizes[0])->proto->name;
    if (!strcmp(p_single, p_stream)) {
        fprintf(stderr, "streamed: both tables run %s at %zu B over %s; the "
                "test needs a size where the multi cost selects another "
                "protocol (psel_info -e shows both tables)\n", p_single,
                t->sizes[0], t->tls);
        return -1;
    }
    if ((psel_test_used_count(worker, p_single) != 1) ||
        (psel_test_used_count(worker, p_stream) != 1)) {
        fprintf(stderr, "streamed: %s ran %ld times and %s %ld, expected "
                "once each\n", p_single, psel_test_used_count(worker, p_single),
                p_stream, psel_test_used_count(worker, p_stream));
        return -1;
    }
    return 0;
}

/* What a receive's callback was given */
typedef struct {
    unsigned         calls;
    ucs_status_t     status;
    psel_recv_info_t info;
} live_recv_seen_t;

static void live_recv_cb(psel_request_t *req, ucs_status_t status,
                         const psel_recv_info_t *info, void *arg)
{
    live_recv_seen_t *seen = arg;

    ++seen->calls;
    seen->status = status;
    seen->info   = *info;
}

/* The receiver: returns the number of wrong messages (or -1). Each
 * message's status, tag and length are checked as psel_request_test()
 * gives them and as the receive's callback was given them. */
static int receiver(const live_test_t *t, int sock)
{
    static psel_request_t *reqs[LIVE_MAX_MSGS];
    static live_recv_seen_t seen[LIVE_MAX_MSGS];
    static uint8_t *bufs[LIVE_MAX_MSGS];
    double deadline = psel_test_now() + LIVE_TIMEOUT_SEC;
    psel_context_h context;
    psel_worker_h worker;
    psel_recv_info_t info;
    unsigned i, errors = 0;
    size_t len, buf_len, k, expected_len;
    ucs_status_t status, expected;
    void *address;
    uint64_t mask;
    char go;

    memset(seen, 0, sizeof(seen));
    set_env(t);
    if ((psel_context_create(&context) != UCS_OK) ||
        (psel_worker_create(context, &worker) != UCS_OK) ||
        (psel_worker_get_address(worker, &address, &len) != UCS_OK) ||
        psel_test_write_all(sock, &len, sizeof(len)) || psel_test_write_all(sock, address, len)) {
        return -1;
    }
    free(address);

    if (t->kind == CASE_UNEXPECTED) {
        /* progress, with no receive posted, until the sender has seen every
         * send complete: all messages arrive unexpected */
        while (!psel_test_sock_readable(sock)) {
            psel_worker_progress(worker);
            if (psel_test_now() > deadline) {
                return -1;
            }
        }
        if (psel_test_read_all(sock, &go, 1)) {
            return -1;
        }
    }

    for (i = 0; i < t->count; ++i) {
        buf_len = msg_size(t, i);
        if ((t->kind == CASE_TRUNCATE) && (i % 2) && (buf_len > 0)) {
            --buf_len;
        }
        bufs[i] = malloc(buf_len + 1);
        memset(bufs[i], 0xee, buf_len + 1);
        mask    = (t->kind == CASE_WILDCARD) ? 0 : UINT64_MAX;
        reqs[i] = psel_tag_recv_nb(worker, bufs[i], buf_len, 1000 + i, mask,
                                   live_recv_cb, &seen[i]);
        if (t->kind == CASE_SIZES) {
            if (wait_all(worker, &reqs[i], 1, deadline)) {
                return -1;
            }
        }
    }
    if (wait_all(worker, reqs, t->count, deadline)) {
        return -1;
    }

    for (i = 0; i < t->count; ++i) {
        expected_len = msg_size(t, i);
        status       = psel_request_test(reqs[i], &info);
        expected     = ((t->kind == CASE_TRUNCATE) && (i % 2) &&
                        (expected_len > 0)) ? UCS_ERR_MESSAGE_TRUNCATED :
                                              UCS_OK;
        if ((status != expected) || (info.tag != 1000 + i) ||
            (info.length != expected_len)) {
            fprintf(stderr, "live: message %u: status %s tag %lu length %zu, "
                    "expected %s tag %u length %zu\n", i,
                    ucs_status_string(status), (unsigned long)info.tag,
                    info.length, ucs_status_string(expected), 1000 + i,
                    expected_len);
            ++errors;
        }
        if ((seen[i].calls != 1) || (seen[i].status != status) ||
            (seen[i].info.tag != info.tag) ||
            (seen[i].info.length != info.length)) {
            fprintf(stderr, "live: message %u: the callback was called %u "
                    "times, last with status %s tag %lu length %zu\n", i,
                    seen[i].calls, ucs_status_string(seen[i].status),
                    (unsigned long)seen[i].info.tag, seen[i].info.length);
            ++errors;
        }
        buf_len = (expected == UCS_OK) ? expected_len : expected_len - 1;
        for (k = 0; k < buf_len; ++k) {
            if (bufs[i][k] != pattern(i, k)) {
                fprintf(stderr, "live: message %u (%zu B): byte %zu is "
                        "0x%x, expected 0x%x\n", i, expected_len, k,
                        bufs[i][k], pattern(i, k));
                ++errors;
                break;
            }
        }
        if (bufs[i][buf_len] != 0xee) {
            fprintf(stderr, "live: message %u: written past the receive "
                    "buffer\n", i);
            ++errors;
        }
        psel_request_free(reqs[i]);
        free(bufs[i]);
    }

    /* stay until the sender has closed its endpoint (its flush needs us) */
    while (!psel_test_sock_readable(sock) && (psel_test_now() < deadline)) {
        psel_worker_progress(worker);
    }
    if (!psel_test_sock_readable(sock) || psel_test_read_all(sock, &go, 1)) {
        fprintf(stderr, "live: the sender did not report its close\n");
        ++errors;
    }
    psel_worker_destroy(worker);
    psel_context_destroy(context);
    return errors;
}

/* The sender; returns 0 on success. */
static int sender(const live_test_t *t, int sock)
{
    static psel_request_t *reqs[LIVE_MAX_MSGS];
    psel_request_t *flush;
    static uint8_t *bufs[LIVE_MAX_MSGS];
    double deadline = psel_test_now() + LIVE_TIMEOUT_SEC;
    psel_context_h context;
    psel_worker_h worker;
    void *address;
    unsigned i;
    size_t len, k;
    psel_ep_h ep;
    int ret = 0;
    char go = 1;

    set_env(t);
    if ((psel_context_create(&context) != UCS_OK) ||
        (psel_worker_create(context, &worker) != UCS_OK) ||
        ((address = psel_test_read_address(sock, &len)) == NULL) ||
        (psel_ep_create(worker, address, len, &ep) != UCS_OK)) {
        return -1;
    }
    free(address);

    for (i = 0; i < t->count; ++i) {
        len     = msg_size(t, i);
        bufs[i] = malloc(len + 1);
        for (k = 0; k < len; ++k) {
            bufs[i][k] = pattern(i, k);
        }
        reqs[i] = psel_tag_send_nbf(ep, bufs[i], len, 1000 + i,
                                    (t->stream_odd && (i % 2)) ?
                                    PSEL_SEND_FLAG_STREAM : 0, NULL, NULL);
        if ((t->kind == CASE_SIZES) &&
            wait_all(worker, &reqs[i], 1, deadline)) {
            ret = -1;
            break;
        }
    }
    if ((ret == 0) && (t->kind == CASE_IN_FLIGHT)) {
        /* a flush completes only after every send posted before it */
        flush = psel_ep_flush_nb(ep, NULL, NULL);
        if (wait_all(worker, &flush, 1, deadline) ||
            (psel_request_test(flush, NULL) != UCS_OK)) {
            ret = -1;
        }
        for (i = 0; (ret == 0) && (i < t->count); ++i) {
            if (psel_request_test(reqs[i], NULL) == UCS_INPROGRESS) {
                fprintf(stderr, "send %u still running after the flush\n",
                        i);
                ret = -1;
            }
        }
        if (flush != NULL) {
            psel_request_free(flush);
        }
    }
    if ((ret == 0) && wait_all(worker, reqs, t->count, deadline)) {
        ret = -1;
    }
    for (i = 0; (ret == 0) && (i < t->count); ++i) {
        if (psel_request_test(reqs[i], NULL) != UCS_OK) {
            ret = -1;
        }
    }
    if ((ret == 0) &&
        (psel_test_check_used(worker, t->protos, t->count) ||
         check_wireup(ep, t) || (t->stream_odd && check_streamed(ep, worker, t)))) {
        ret = -1;
    }
    if (t->kind == CASE_UNEXPECTED) {
        psel_test_write_all(sock, &go, 1);
    }
    /* close with a flush while the peer is alive: the endpoint is gone
     * once it completes */
    flush = psel_ep_close_nb(ep, PSEL_EP_CLOSE_FLUSH, NULL, NULL);
    if ((flush == NULL) || wait_all(worker, &flush, 1, deadline) ||
        (psel_request_test(flush, NULL) != UCS_OK)) {
        fprintf(stderr, "close: %s\n", (flush == NULL) ? "no request" :
                ucs_status_string(psel_request_test(flush, NULL)));
        ret = -1;
    }
    if (flush != NULL) {
        psel_request_free(flush);
    }
    psel_test_write_all(sock, &go, 1);
    /* keep progressing until the receiver reports */
    while ((ret == 0) && !psel_test_sock_readable(sock) && (psel_test_now() < deadline)) {
        psel_worker_progress(worker);
    }
    for (i = 0; i < t->count; ++i) {
        psel_request_free(reqs[i]);
        free(bufs[i]);
    }
    psel_worker_destroy(worker);
    psel_context_destroy(context);
    return ret;
}

static void run_live(const live_test_t *t)
{
    double deadline = psel_test_now() + LIVE_TIMEOUT_SEC + 10;
    int sv[2], status = 0, errors = -1, sent;
    pid_t pid;

    assert_true(t->count <= LIVE_MAX_MSGS);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pid = psel_test_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        errors = receiver(t, sv[1]);
        psel_test_write_all(sv[1], &errors, sizeof(errors));
        _exit((errors == 0) ? 0 : 1);
    }
    close(sv[1]);
    sent = sender(t, sv[0]);
    if (psel_test_read_all(sv[0], &errors, sizeof(errors))) {
        errors = -1;
    }
    /* the receiver process must end, and end well */
    status = psel_test_wait_child(pid, deadline - psel_test_now());
    close(sv[0]);
    if ((sent != 0) || (errors != 0)) {
        print_error("tls=%s protos=%s case=%d: sender %d, receiver errors %d\n",
                    t->tls, t->protos ? t->protos : "auto", t->kind, sent,
                    errors);
    }
    assert_int_equal(sent, 0);
    assert_int_equal(errors, 0);
    assert_int_equal(status, 0);
}

/* 0, 1, around the short limits (posix/sysv 92, tcp 8184), around the bcopy
 * fragment (8192 - 32 = 8160 on tcp, 8256 - 32 = 8224 on shm) and its
 * doubles, and large multi-fragment messages */
static const size_t sizes_all[] = {
    0, 1, 7, 8, 91, 92, 93, 100, 1000, 4096, 8159, 8160, 8161, 8183, 8184,
    8185, 8223, 8224, 8225, 16320, 16321, 16448, 16449, 65536, 65537, 262147,
    1 << 20
};

static const char *const tls_setups[] = {"posix", "sysv", "tcp"};
/* every eager protocol forced in turn (short alone covers only small sizes,
 * so it goes with one that covers the rest), then automatic selection;
 * zero-copy AM exists on tcp only here */
static const struct {
    const char *tls;
    const char *protos;
} proto_setups[] = {
    {"posix", "egr/bcopy"}, {"posix", "egr/short,egr/bcopy"}, {"posix", NULL},
    {"sysv", "egr/bcopy"},  {"sysv", "egr/short,egr/bcopy"},  {"sysv", NULL},
    {"tcp", "egr/bcopy"},   {"tcp", "egr/short,egr/bcopy"},
    {"tcp", "egr/zcopy"},   {"tcp", "egr/short,egr/zcopy"},   {"tcp", NULL}
};

/* tcp lanes connected endpoint to endpoint, as connect-to-ep transports
 * (rc) always are: the wireup exchange over a bootstrap endpoint; the
 * receiver has no endpoint of its own, so wireup creates one */
static void test_wireup_p2p(void **state)
{
    static const size_t sizes[] = {0, 8, 93, 9000, 70000, 1 << 20};
    live_test_t t = {"tcp", NULL, CASE_SIZES, 6, sizes, 6, 1};

    run_live(&t);
    t.protos = "egr/short,egr/bcopy";
    run_live(&t);
    t.protos = NULL;
    t.kind   = CASE_UNEXPECTED;
    t.count  = 60;
    run_live(&t);
    t.kind   = CASE_IN_FLIGHT;
    t.count  = 2000;
    run_live(&t);
}

static void test_sizes_every_protocol(void **state)
{
    live_test_t t = {NULL, NULL, CASE_SIZES,
                     sizeof(sizes_all) / sizeof(sizes_all[0]), sizes_all,
                     sizeof(sizes_all) / sizeof(sizes_all[0])};
    unsigned i;

    for (i = 0; i < sizeof(proto_setups) / sizeof(proto_setups[0]); ++i) {
        t.tls    = proto_setups[i].tls;
        t.protos = proto_setups[i].protos;
        run_live(&t);
    }
}

static void test_unexpected(void **state)
{
    static const size_t sizes[] = {0, 8, 92, 93, 9000, 70000};
    live_test_t t = {NULL, NULL, CASE_UNEXPECTED, 60, sizes, 6};
    unsigned i;

    for (i = 0; i < sizeof(tls_setups) / sizeof(tls_setups[0]); ++i) {
        t.tls = tls_setups[i];
        run_live(&t);
    }
}

static void test_many_in_flight(void **state)
{
    static const size_t sizes[] = {8, 200, 8300, 30000};
    live_test_t t = {NULL, NULL, CASE_IN_FLIGHT, 2000, sizes, 4};
    unsigned i;

    for (i = 0; i < sizeof(tls_setups) / sizeof(tls_setups[0]); ++i) {
        t.tls = tls_setups[i];
        run_live(&t);
    }
}

static void test_wildcard(void **state)
{
    static const size_t sizes[] = {16, 5000, 20000};
    live_test_t t = {"posix", NULL, CASE_WILDCARD, 30, sizes, 3};

    run_live(&t);
    t.tls = "tcp";
    run_live(&t);
}

static void test_truncation(void **state)
{
    static const size_t sizes[] = {1, 64, 9000, 40000};
    live_test_t t = {"posix", NULL, CASE_TRUNCATE, 16, sizes, 4};

    run_live(&t);
    t.tls = "tcp";
    run_live(&t);
}

/* A send flagged as streamed (as tag_bw's) selects on the multi cost: on
 * posix alone, rendezvous by AM pays off from a few MB when messages
 * stream (its stages overlap), and only from tens of MB for one message */
static void test_streamed_sends(void **state)
{
    static const size_t sizes[] = {8 << 20};
    live_test_t t = {"posix", NULL, CASE_SIZES, 2, sizes, 1, 0, 1};

    /* posix's eager bcopy and rndv/am tie within the default switch margin
     * (both copy): on the exact crossings the streamed table goes to
     * rndv/am at 8 MB, the plain one does not */
    setenv("UCX_PSEL_SWITCH_MARGIN", "0", 1);
    run_live(&t);
    unsetenv("UCX_PSEL_SWITCH_MARGIN");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_every_protocol),
        cmocka_unit_test(test_unexpected),
        cmocka_unit_test(test_many_in_flight),
        cmocka_unit_test(test_wildcard),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_wireup_p2p),
        cmocka_unit_test(test_streamed_sends),
    };

    signal(SIGPIPE, SIG_IGN);
    /* the protocols that ran are checked: count them */
    setenv("UCX_PSEL_PROTO_INFO", "used", 1);
    return cmocka_run_group_tests_name("tag_live", tests, NULL, NULL);
}
