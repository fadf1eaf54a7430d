/*
 * Rendezvous over real UCT transports, in two processes: a forked receiver
 * publishes its worker address over a socketpair, the sender connects (the
 * wireup exchange gives the receiver its endpoint back) and sends; the
 * receiver checks every message's status, tag, size and checksum and
 * reports back. Every wait is bounded.
 *
 * Setups: each rendezvous protocol forced through UCX_PSEL_PROTOS on
 * posix+cma, sysv+cma (rndv/am over shared memory, get/put over cma) and
 * tcp (rndv/am by zero-copy AM, rndv/put over tcp/lo and the other tcp
 * devices: a multi-lane split; tcp has no get), then automatic selection.
 * Sizes: 1 B to 64 MiB, around every fragment, chunk and table boundary,
 * plus random sizes from a fixed seed (printed).
 */
#include "test_util.h"

#include <core/core_int.h>

#include <errno.h>
#include <math.h>
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

#define RNDV_TIMEOUT_SEC  60      /* per run, both processes */
#define RNDV_MAX_MSGS     256
#define RNDV_SEED         20261122u
#define MiB               (1024ul * 1024)

typedef enum {
    CASE_SIZES,       /* one message at a time, receive posted first */
    CASE_UNEXPECTED,  /* every RTS arrives before its receive is posted */
    CASE_IN_FLIGHT,   /* all sends and receives at once */
    CASE_TRUNCATE     /* every other receive one byte short */
} rndv_case_t;

typedef struct {
    const char   *tls;      /* UCX_PSEL_TLS */
    const char   *protos;   /* UCX_PSEL_PROTOS, NULL for automatic */
    rndv_case_t   kind;
    unsigned      count;    /* messages; the sender adds the boundaries of
                               its selection table when protos is NULL */
    size_t        sizes[RNDV_MAX_MSGS]; /* per message */
} rndv_test_t;

static void fill(uint8_t *buf, size_t len, unsigned msg)
{
    uint64_t x = 0x9e3779b97f4a7c15ull * (msg + 1);
    size_t i;

    for (i = 0; i + 8 <= len; i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(buf + i, &x, 8);
    }
    for (; i < len; ++i) {
        buf[i] = (uint8_t)(msg + i);
    }
}

/* FNV-1a over 8-byte words, then the tail */
static uint64_t checksum(const uint8_t *buf, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull, w;
    size_t i;

    for (i = 0; i + 8 <= len; i += 8) {
        memcpy(&w, buf + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (; i < len; ++i) {
        h = (h ^ buf[i]) * 0x100000001b3ull;
    }
    return h;
}

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
    fprintf(stderr, "rndv: %u of %u requests still running at the "
            "deadline\n", n - done, n);
    return -1;
}

static void set_env(const rndv_test_t *t)
{
    setenv("UCX_PSEL_TLS", t->tls, 1);
    if (t->protos != NULL) {
        setenv("UCX_PSEL_PROTOS", t->protos, 1);
    } else {
        unsetenv("UCX_PSEL_PROTOS");
    }
}

static int truncated(const rndv_test_t *t, unsigned i)
{
    return (t->kind == CASE_TRUNCATE) && (i % 2);
}

/* The receiver: returns the number of wrong messages (or -1). */
static int receiver(rndv_test_t *t, int sock)
{
    static psel_request_t *reqs[RNDV_MAX_MSGS];
    static uint8_t *bufs[RNDV_MAX_MSGS];
    double deadline = psel_test_now() + RNDV_TIMEOUT_SEC;
    psel_context_h context;
    psel_worker_h worker;
    psel_recv_info_t info;
    unsigned i, errors = 0;
    size_t len, buf_len, k;
    ucs_status_t status, expected;
    uint8_t *ref;
    void *address;
    char go;

    set_env(t);
    if ((psel_context_create(&context) != UCS_OK) ||
        (psel_worker_create(context, &worker) != UCS_OK) ||
        (psel_worker_get_address(worker, &address, &len) != UCS_OK) ||
        psel_test_write_all(sock, &len, sizeof(len)) || psel_test_write_all(sock, address, len) ||
        psel_test_read_all(sock, &t->count, sizeof(t->count)) ||
        (t->count > RNDV_MAX_MSGS) ||
        psel_test_read_all(sock, t->sizes, t->count * sizeof(t->sizes[0]))) {
        return -1;
    }
    free(address);

    if (t->kind == CASE_UNEXPECTED) {
        /* no receive posted until every RTS waits in the unexpected queue */
        while (psel_tm_num_unexpected(&worker->tm) < t->count) {
            psel_worker_progress(worker);
            if (psel_test_now() > deadline) {
                fprintf(stderr, "rndv: %zu of %u messages arrived "
                        "unexpected\n", psel_tm_num_unexpected(&worker->tm),
                        t->count);
                return -1;
            }
        }
    }

    for (i = 0; i < t->count; ++i) {
        buf_len = t->sizes[i] - (truncated(t, i) ? 1 : 0);
        bufs[i] = malloc(buf_len + 1);
        if (bufs[i] == NULL) {
            return -1;
        }
        memset(bufs[i], 0xee, buf_len + 1);
        reqs[i] = psel_tag_recv_nb(worker, bufs[i], buf_len, 1000 + i,
                                   UINT64_MAX, NULL, NULL);
        if ((t->kind == CASE_SIZES) &&
            wait_all(worker, &reqs[i], 1, deadline)) {
            return -1;
        }
    }
    if (wait_all(worker, reqs, t->count, deadline)) {
        return -1;
    }

    for (i = 0; i < t->count; ++i) {
        len      = t->sizes[i];
        status   = psel_request_test(reqs[i], &info);
        expected = truncated(t, i) ? UCS_ERR_MESSAGE_TRUNCATED : UCS_OK;
        if ((status != expected) || (info.tag != 1000 + i) ||
            (info.length != len)) {
            fprintf(stderr, "rndv: message %u: status %s tag %lu length "
                    "%zu, expected %s tag %u length %zu\n", i,
                    ucs_status_string(status), (unsigned long)info.tag,
                    info.length, ucs_status_string(expected), 1000 + i, len);
            ++errors;
        }
        if (expected == UCS_OK) {
            ref = malloc(len + 1);
            if (ref == NULL) {
                return -1;
            }
            fill(ref, len, i);
            if (checksum(bufs[i], len) != checksum(ref, len)) {
                for (k = 0; (k < len) && (bufs[i][k] == ref[k]); ++k) {
                }
                fprintf(stderr, "rndv: message %u (%zu B): checksum "
                        "mismatch, first wrong byte at %zu\n", i, len, k);
                ++errors;
            }
            free(ref);
        }
        buf_len = len - (truncated(t, i) ? 1 : 0);
        if (bufs[i][buf_len] != 0xee) {
            fprintf(stderr, "rndv: message %u: written past the receive "
                    "buffer\n", i);
            ++errors;
        }
        psel_request_free(reqs[i]);
        free(bufs[i]);
    }

    /* the last replies may still be on their way: progress until the
     * sender has seen every send complete */
    while (!psel_test_sock_readable(sock) && (psel_test_now() < deadline)) {
        psel_worker_progress(worker);
    }
    psel_test_read_all(sock, &go, 1);
    psel_worker_destroy(worker);
    psel_context_destroy(context);
    return errors;
}

/* The sender; returns 0 on success. */
/* Automatic selection: add both sides of every boundary of the table the
 * endpoint selects from. */
static void add_table_boundaries(rndv_test_t *t, psel_ep_h ep)
{
    const psel_select_table_t *table =
            ep->config.select.fast[PSEL_OP_TAG_SEND];
    unsigned i;

    for (i = 0; (i + 1 < table->count) && (t->count + 2 <= RNDV_MAX_MSGS);
         ++i) {
        t->sizes[t->count++] = table->elems[i].max_length;
        t->sizes[t->count++] = table->elems[i].max_length + 1;
    }
}

static int sender(rndv_test_t *t, int sock)
{
    static psel_request_t *reqs[RNDV_MAX_MSGS];
    static uint8_t *bufs[RNDV_MAX_MSGS];
    double deadline = psel_test_now() + RNDV_TIMEOUT_SEC;
    psel_context_h context;
    psel_worker_h worker;
    psel_request_t *closing;
    void *address;
    unsigned i;
    size_t len;
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
    if (t->protos == NULL) {
        add_table_boundaries(t, ep);
    }
    if (psel_test_write_all(sock, &t->count, sizeof(t->count)) ||
        psel_test_write_all(sock, t->sizes, t->count * sizeof(t->sizes[0]))) {
        return -1;
    }

    for (i = 0; i < t->count; ++i) {
        bufs[i] = malloc(t->sizes[i] + 1);
        if (bufs[i] == NULL) {
            return -1;
        }
        fill(bufs[i], t->sizes[i], i);
        reqs[i] = psel_tag_send_nb(ep, bufs[i], t->sizes[i], 1000 + i, NULL,
                                   NULL);
        if ((t->kind == CASE_SIZES) &&
            wait_all(worker, &reqs[i], 1, deadline)) {
            fprintf(stderr, "rndv: send %u of %zu bytes\n", i, t->sizes[i]);
            ret = -1;
            break;
        }
    }
    if ((ret == 0) && wait_all(worker, reqs, t->count, deadline)) {
        ret = -1;
    }
    for (i = 0; (ret == 0) && (i < t->count); ++i) {
        if (psel_request_test(reqs[i], NULL) != UCS_OK) {
            fprintf(stderr, "rndv: send %u of %zu bytes: %s\n", i,
                    t->sizes[i],
                    ucs_status_string(psel_request_test(reqs[i], NULL)));
            ret = -1;
        }
    }
    if ((ret == 0) && psel_test_check_used(worker, t->protos, t->count)) {
        ret = -1;
    }
    closing = psel_ep_close_nb(ep, PSEL_EP_CLOSE_FLUSH, NULL, NULL);
    if ((closing == NULL) || wait_all(worker, &closing, 1, deadline) ||
        (psel_request_test(closing, NULL) != UCS_OK)) {
        fprintf(stderr, "rndv: closing the endpoint failed\n");
        ret = -1;
    }
    if (closing != NULL) {
        psel_request_free(closing);
    }
    psel_test_write_all(sock, &go, 1);
    /* keep progressing until the receiver reports */
    while (!psel_test_sock_readable(sock) && (psel_test_now() < deadline)) {
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

static void run_rndv(rndv_test_t *t)
{
    const char *filter = getenv("PSEL_RNDV_LIVE_FILTER");
    double start       = psel_test_now();
    double deadline    = start + RNDV_TIMEOUT_SEC + 10;
    int sv[2], status = 0, errors = -1, sent;
    char name[64];
    pid_t pid;

    /* a developer's knob: run only the setups whose name contains it */
    snprintf(name, sizeof(name), "%s %s %d", t->tls,
             t->protos ? t->protos : "auto", t->kind);
    if ((filter != NULL) && (strstr(name, filter) == NULL)) {
        return;
    }

    if (strstr(t->tls, "cma") && (t->protos != NULL) &&
        (strstr(t->protos, "get") || strstr(t->protos, "put")) &&
        !psel_test_has_transport("cma")) {
        printf("    tls=%-10s protos=%-9s case=%d: SKIP: needs cma, which "
               "this machine lacks (ptrace rights)\n", t->tls, t->protos,
               t->kind);
        return;
    }
    assert_true(t->count <= RNDV_MAX_MSGS);
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
    printf("    tls=%-10s protos=%-9s case=%d: %u messages in %.2f s\n",
           t->tls, t->protos ? t->protos : "auto", t->kind, t->count,
           psel_test_now() - start);
    if ((sent != 0) || (errors != 0)) {
        print_error("tls=%s protos=%s case=%d: sender %d, receiver errors "
                    "%d\n", t->tls, t->protos ? t->protos : "auto", t->kind,
                    sent, errors);
    }
    assert_int_equal(sent, 0);
    assert_int_equal(errors, 0);
    assert_int_equal(status, 0);
}

/* ---- sizes ---- */

/* Around every boundary of the data path: one byte; the AM fragments of
 * rndv/am (shared memory bcopy 8256 - 17, tcp bcopy 8192 - 17 and zcopy
 * 65536 - 17 bytes) and their doubles; PSEL_RNDV_MIN_CHUNK and twice it
 * (from there a message may use two lanes); page sizes; up to 64 MiB. */
static const size_t boundary_sizes[] = {
    1, 2, 17, 100, 4095, 4096, 4097, 8174, 8175, 8176, 8238, 8239, 8240,
    16350, 16351, 16478, 16479, 65518, 65519, 65520, 65535, 65536, 65537,
    131038, 131039, 131071, 131072, 131073, 196607, 196608, 262144,
    MiB - 1, MiB, MiB + 1, 4 * MiB + 3, 16 * MiB, 64 * MiB
};

#define NUM_RANDOM_SIZES 16

/* The boundary sizes, then random sizes, log-uniform in 1 B .. 64 MiB, from
 * a fixed seed. */
static void sizes_boundaries_random(rndv_test_t *t)
{
    static int printed = 0;
    unsigned seed      = RNDV_SEED;
    unsigned i;

    if (!printed) {
        printf("    random sizes from seed %u\n", RNDV_SEED);
        printed = 1;
    }
    t->count = 0;
    for (i = 0; i < sizeof(boundary_sizes) / sizeof(boundary_sizes[0]); ++i) {
        t->sizes[t->count++] = boundary_sizes[i];
    }
    for (i = 0; i < NUM_RANDOM_SIZES; ++i) {
        /* 2^(26 * r), r uniform in [0, 1) */
        t->sizes[t->count++] = 1 + (size_t)(exp2(26.0 * rand_r(&seed) /
                                                 ((double)RAND_MAX + 1)));
    }
}

static void sizes_list(rndv_test_t *t, const size_t *sizes, unsigned count,
                       unsigned repeat)
{
    unsigned i;

    t->count = 0;
    for (i = 0; i < count * repeat; ++i) {
        t->sizes[t->count++] = sizes[i % count];
    }
}

/* Each rendezvous protocol forced, on every setup that has it. */
static const struct {
    const char *tls;
    const char *protos;
} forced_setups[] = {
    {"posix,cma", "rndv/am"}, {"posix,cma", "rndv/get"},
    {"posix,cma", "rndv/put"},
    {"sysv,cma",  "rndv/am"}, {"sysv,cma",  "rndv/get"},
    {"sysv,cma",  "rndv/put"},
    {"tcp",       "rndv/am"}, {"tcp",       "rndv/put"}
};

#define NUM_FORCED (sizeof(forced_setups) / sizeof(forced_setups[0]))

static void test_rndv_forced_sizes(void **state)
{
    rndv_test_t t = {.kind = CASE_SIZES};
    unsigned i;

    for (i = 0; i < NUM_FORCED; ++i) {
        t.tls    = forced_setups[i].tls;
        t.protos = forced_setups[i].protos;
        sizes_boundaries_random(&t);
        run_rndv(&t);
    }
}

/* Automatic selection over the same sizes and both sides of every
 * boundary of the endpoint's table: eager below, rendezvous above. */
static void test_rndv_auto_sizes(void **state)
{
    static const char *tls[] = {"posix,cma", "sysv,cma", "tcp"};
    rndv_test_t t = {.kind = CASE_SIZES};
    unsigned i;

    for (i = 0; i < 3; ++i) {
        t.tls    = tls[i];
        t.protos = NULL;
        sizes_boundaries_random(&t);
        run_rndv(&t);
    }
}

static void test_rndv_unexpected(void **state)
{
    static const size_t sizes[] = {1, 8240, 65537, 131073, MiB, 4 * MiB + 3};
    rndv_test_t t = {.kind = CASE_UNEXPECTED};
    unsigned i;

    for (i = 0; i < NUM_FORCED; ++i) {
        if (strncmp(forced_setups[i].tls, "sysv", 4) == 0) {
            continue; /* the same code path as posix */
        }
        t.tls    = forced_setups[i].tls;
        t.protos = forced_setups[i].protos;
        sizes_list(&t, sizes, 6, 2);
        run_rndv(&t);
    }
}

static void test_rndv_many_in_flight(void **state)
{
    static const size_t sizes[] = {MiB, 2 * MiB + 5, 300000, 4 * MiB};
    rndv_test_t t = {.kind = CASE_IN_FLIGHT};
    unsigned i;

    for (i = 0; i < NUM_FORCED; ++i) {
        if (strncmp(forced_setups[i].tls, "sysv", 4) == 0) {
            continue;
        }
        t.tls    = forced_setups[i].tls;
        t.protos = forced_setups[i].protos;
        sizes_list(&t, sizes, 4, 16);
        run_rndv(&t);
    }
}

/* A receive one byte short completes with UCS_ERR_MESSAGE_TRUNCATED and
 * the message's length; the sender completes normally, nothing moves. */
static void test_rndv_truncation(void **state)
{
    static const size_t sizes[] = {1, 9000, 70000, 3 * MiB};
    rndv_test_t t = {.kind = CASE_TRUNCATE};
    unsigned i;

    for (i = 0; i < NUM_FORCED; ++i) {
        if (strncmp(forced_setups[i].tls, "sysv", 4) == 0) {
            continue;
        }
        t.tls    = forced_setups[i].tls;
        t.protos = forced_setups[i].protos;
        sizes_list(&t, sizes, 4, 2);
        run_rndv(&t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rndv_forced_sizes),
        cmocka_unit_test(test_rndv_auto_sizes),
        cmocka_unit_test(test_rndv_unexpected),
        cmocka_unit_test(test_rndv_many_in_flight),
        cmocka_unit_test(test_rndv_truncation),
    };

    signal(SIGPIPE, SIG_IGN);
    /* the protocols that ran are checked: count them */
    setenv("UCX_PSEL_PROTO_INFO", "used", 1);
    return cmocka_run_group_tests_name("rndv_live", tests, NULL, NULL);
}
