/*
 * Soak: endpoint connect/disconnect cycles between two processes, with the
 * resident memory and the open file descriptors of both flat.
 *
 * Each cycle this process (the client) creates an endpoint to the server,
 * sends an 8-byte eager message and a 64 KiB rendezvous message (which
 * makes the server create its endpoint back, through wireup), waits for
 * both, and closes the endpoint with a flush. The server receives, and
 * keeps serving. After a tenth of the cycles (pools and caches grown) both
 * sides note their RSS (/proc/self/statm) and open fds (/proc/self/fd);
 * at the end the growth must stay within SOAK_RSS_SLACK and SOAK_FD_SLACK.
 *
 * PSEL_SOAK_CYCLES (default 1000 per transport), PSEL_SOAK_TLS (default
 * "posix tcp") and PSEL_SOAK_RSS_SLACK_KB (default 4096) set the run; bench/soak.sh runs 10000 cycles and prints the
 * figures.
 */
#include "test_util.h"

#include <core/core_int.h>

#include <dirent.h>
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
#include <ucs/sys/math.h>

#define SOAK_EAGER       8
#define SOAK_RNDV        (64 * 1024)
#define SOAK_RSS_SLACK   (4ul << 20) /* bytes of RSS growth allowed */
#define SOAK_FD_SLACK    2           /* open fds of growth allowed */
#define SOAK_CYCLE_SEC   30.0        /* one cycle's bound */

/* RSS and open fds of this process. */
typedef struct {
    size_t   rss;
    unsigned fds;
} soak_usage_t;

static void soak_usage(soak_usage_t *u)
{
    unsigned long pages = 0, resident = 0;
    struct dirent *d;
    FILE *f;
    DIR *dir;

    f = fopen("/proc/self/statm", "r");
    if ((f == NULL) || (fscanf(f, "%lu %lu", &pages, &resident) != 2)) {
        resident = 0;
    }
    if (f != NULL) {
        fclose(f);
    }
    memset(u, 0, sizeof(*u)); /* it goes over a socket whole */
    u->rss = resident * (size_t)sysconf(_SC_PAGESIZE);
    u->fds = 0;
    dir    = opendir("/proc/self/fd");
    while ((dir != NULL) && ((d = readdir(dir)) != NULL)) {
        u->fds += (d->d_name[0] != '.');
    }
    if (dir != NULL) {
        closedir(dir);
        --u->fds; /* the directory's own */
    }
}

static unsigned soak_cycles(void)
{
    const char *env = getenv("PSEL_SOAK_CYCLES");

    return (env != NULL) ? (unsigned)strtoul(env, NULL, 0) : 1000;
}

static ucs_status_t soak_wait(psel_worker_h worker, psel_request_t *req)
{
    double deadline = psel_time_sec() + SOAK_CYCLE_SEC;

    while ((psel_request_test(req, NULL) == UCS_INPROGRESS) &&
           (psel_time_sec() < deadline)) {
        psel_worker_progress(worker);
    }
    return psel_request_test(req, NULL);
}

/* The server: receive two messages a cycle; report the usage at the tenth
 * and at the end. */
static int soak_server(int sock, unsigned cycles)
{
    static uint8_t buf[SOAK_RNDV];
    soak_usage_t usage[2];
    psel_context_h context;
    psel_worker_h worker;
    psel_request_t *req;
    void *address;
    size_t len;
    unsigned i, k;

    if ((psel_context_create(&context) != UCS_OK) ||
        (psel_worker_create(context, &worker) != UCS_OK) ||
        (psel_worker_get_address(worker, &address, &len) != UCS_OK) ||
        psel_test_write_all(sock, &len, sizeof(len)) ||
        psel_test_write_all(sock, address, len)) {
        fprintf(stderr, "soak server: no worker\n");
        return 1;
    }
    free(address);
    for (i = 0; i < cycles; ++i) {
        if (i == cycles / 10) {
            soak_usage(&usage[0]);
        }
        for (k = 0; k < 2; ++k) {
            req = psel_tag_recv_nb(worker, buf, sizeof(buf), k, UINT64_MAX,
                                   NULL, NULL);
            if (soak_wait(worker, req) != UCS_OK) {
                fprintf(stderr, "soak server: cycle %u message %u: %s\n", i,
                        k, ucs_status_string(psel_request_test(req, NULL)));
                return 2;
            }
            psel_request_free(req);
        }
    }
    /* the client's last close is flushed once we have progressed it */
    while (!psel_test_sock_readable(sock)) {
        psel_worker_progress(worker);
    }
    soak_usage(&usage[1]);
    if (psel_test_write_all(sock, usage, sizeof(usage))) {
        return 3;
    }
    psel_worker_destroy(worker);
    psel_context_destroy(context);
    return 0;
}

static void soak_print(const char *tls, const char *side, unsigned cycles,
                       const soak_usage_t *u)
{
    print_message("    %-6s %-6s %u cycles: RSS %zu -> %zu KiB (%+ld), open "
                  "fds %u -> %u\n", tls, side, cycles, u[0].rss >> 10,
                  u[1].rss >> 10,
                  ((long)u[1].rss - (long)u[0].rss) / 1024, u[0].fds,
                  u[1].fds);
}

static void soak_check(const soak_usage_t *u)
{
    /* valgrind keeps freed blocks a while: its runs say how much to allow;
     * ASan's quarantine too, and LeakSanitizer judges leaks there */
#ifdef __SANITIZE_ADDRESS__
    size_t slack    = SIZE_MAX / 2;
#else
    const char *env = getenv("PSEL_SOAK_RSS_SLACK_KB");
    size_t slack    = (env != NULL) ? strtoul(env, NULL, 0) << 10 :
                      SOAK_RSS_SLACK;
#endif

    assert_true(u[1].rss <= u[0].rss + slack);
    assert_true(u[1].fds <= u[0].fds + SOAK_FD_SLACK);
}

static void run_soak(const char *tls)
{
    static uint8_t buf[SOAK_RNDV];
    soak_usage_t usage[2], server_usage[2];
    unsigned cycles = soak_cycles(), i;
    psel_request_t *reqs[2];
    psel_context_h context;
    psel_worker_h worker;
    void *address;
    size_t len;
    psel_ep_h ep;
    int sv[2];
    pid_t pid;
    double start;

    setenv("UCX_PSEL_TLS", tls, 1);
    setenv("UCX_PSEL_NET_DEVICES", "lo", 1);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pid = psel_test_fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        _exit(soak_server(sv[1], cycles));
    }
    close(sv[1]);
    address = psel_test_read_address(sv[0], &len);
    assert_non_null(address);
    assert_int_equal(psel_context_create(&context), UCS_OK);
    assert_int_equal(psel_worker_create(context, &worker), UCS_OK);

    start = psel_time_sec();
    for (i = 0; i < cycles; ++i) {
        if (i == cycles / 10) {
            soak_usage(&usage[0]);
        }
        assert_int_equal(psel_ep_create(worker, address, len, &ep), UCS_OK);
        reqs[0] = psel_tag_send_nb(ep, buf, SOAK_EAGER, 0, NULL, NULL);
        reqs[1] = psel_tag_send_nb(ep, buf, SOAK_RNDV, 1, NULL, NULL);
        assert_int_equal(soak_wait(worker, reqs[0]), UCS_OK);
        assert_int_equal(soak_wait(worker, reqs[1]), UCS_OK);
        psel_request_free(reqs[0]);
        psel_request_free(reqs[1]);
        assert_int_equal(psel_test_close_ep(worker, ep), UCS_OK);
    }
    soak_usage(&usage[1]);
    assert_int_equal(psel_test_write_all(sv[0], "x", 1), 0);
    assert_int_equal(psel_test_read_all(sv[0], server_usage,
                                        sizeof(server_usage)), 0);
    assert_int_equal(psel_test_wait_child(pid, 30), 0);
    print_message("    %-6s %u cycles in %.1f s\n", tls, cycles,
                  psel_time_sec() - start);
#ifdef __SANITIZE_ADDRESS__
    print_message("    (ASan: RSS not judged, its quarantine holds freed "
                  "memory; LeakSanitizer checks leaks at exit)\n");
#endif
    soak_print(tls, "client", cycles, usage);
    soak_print(tls, "server", cycles, server_usage);
    soak_check(usage);
    soak_check(server_usage);

    psel_worker_destroy(worker);
    psel_context_destroy(context);
    close(sv[0]);
    free(address);
    unsetenv("UCX_PSEL_TLS");
    unsetenv("UCX_PSEL_NET_DEVICES");
}

/* ---- departed clients: the endpoints wireup made for them go ---- */

#define DEPART_CLIENTS   20
#define DEPART_SIZE      (1 << 20) /* rendezvous: the server gets an
                                      endpoint back to each client */
#define DEPART_WAIT_SEC  10.0      /* the last ones go within (keepalive) */

/* A client process: connect, send DEPART_SIZE bytes with tag @a i, then
 * close the endpoint and the worker as a well-behaved client (@a i even),
 * or die by SIGKILL (@a i odd). */
static int depart_client(const void *address, size_t len, unsigned i)
{
    static uint8_t buf[DEPART_SIZE];
    psel_context_h context;
    psel_worker_h worker;
    psel_request_t *req;
    ucs_status_t status;
    psel_ep_h ep;

    if ((psel_context_create(&context) != UCS_OK) ||
        (psel_worker_create(context, &worker) != UCS_OK) ||
        (psel_ep_create(worker, address, len, &ep) != UCS_OK)) {
        fprintf(stderr, "client %u: no worker or endpoint\n", i);
        return 1;
    }
    req    = psel_tag_send_nb(ep, buf, sizeof(buf), i, NULL, NULL);
    status = soak_wait(worker, req);
    psel_request_free(req);
    if (status != UCS_OK) {
        fprintf(stderr, "client %u: send: %s\n", i, ucs_status_string(status));
        return 2;
    }
    if (i % 2) {
        raise(SIGKILL);
    }
    if (psel_test_close_ep(worker, ep) != UCS_OK) {
        return 3;
    }
    psel_worker_destroy(worker);
    psel_context_destroy(context);
    return 0;
}

/* What the server has left of its clients. */
typedef struct {
    unsigned eps;          /* endpoints */
    unsigned eps_max;      /* the most at a time */
    unsigned rndv_sends;   /* rendezvous maps */
    unsigned rndv_recvs;
    unsigned rndv_eps;
    unsigned tm_unexpected;/* tag matching */
    unsigned tm_inflight;
    unsigned tm_expected;
    unsigned failed;       /* receives that failed */
} soak_counts_t;

static void soak_counts(psel_worker_h worker, soak_counts_t *c)
{
    c->eps           = ucs_list_length(&worker->eps);
    c->eps_max       = ucs_max(c->eps_max, c->eps);
    c->rndv_sends    = kh_size(&worker->rndv.sends);
    c->rndv_recvs    = kh_size(&worker->rndv.recvs);
    c->rndv_eps      = kh_size(&worker->rndv.eps);
    c->tm_unexpected = psel_tm_num_unexpected(&worker->tm);
    c->tm_inflight   = psel_tm_num_inflight(&worker->tm);
    c->tm_expected   = psel_tm_num_expected(&worker->tm);
}

/* Progress until the server has no endpoint left (bounded). */
static void soak_settle(psel_worker_h worker, soak_counts_t *c)
{
    double deadline = psel_time_sec() + DEPART_WAIT_SEC;

    while (!ucs_list_is_empty(&worker->eps) && (psel_time_sec() < deadline)) {
        psel_worker_progress(worker);
    }
    soak_counts(worker, c);
}

static pid_t soak_children[2];

static int teardown_children(void **state)
{
    unsigned i;

    for (i = 0; i < 2; ++i) {
        if (soak_children[i] > 0) {
            kill(soak_children[i], SIGKILL);
            waitpid(soak_children[i], NULL, 0);
            soak_children[i] = 0;
        }
    }
    unsetenv("UCX_PSEL_TLS");
    unsetenv("UCX_PSEL_NET_DEVICES");
    return 0;
}

/* The server (this process's child): receive one message from each
 * client, then report what is left once they are all gone. */
static int depart_server(int sock)
{
    static uint8_t buf[DEPART_SIZE];
    soak_counts_t counts = {0};
    psel_context_h context;
    psel_worker_h worker;
    psel_request_t *req;
    void *address;
    size_t len;
    unsigned i;
    uint8_t go;

    if ((psel_context_create(&context) != UCS_OK) ||
        (psel_worker_create(context, &worker) != UCS_OK) ||
        (psel_worker_get_address(worker, &address, &len) != UCS_OK) ||
        psel_test_write_all(sock, &len, sizeof(len)) ||
        psel_test_write_all(sock, address, len)) {
        fprintf(stderr, "depart server: no worker\n");
        return 1;
    }
    free(address);
    for (i = 0; i < DEPART_CLIENTS; ++i) {
        req = psel_tag_recv_nb(worker, buf, sizeof(buf), i, UINT64_MAX, NULL,
                               NULL);
        if (soak_wait(worker, req) != UCS_OK) {
            ++counts.failed;
        }
        psel_request_free(req);
        soak_counts(worker, &counts);
    }
    /* the parent reaped every client: the last ones' endpoints go too */
    if (psel_test_read_all(sock, &go, 1)) {
        return 2;
    }
    soak_settle(worker, &counts);
    if (psel_test_write_all(sock, &counts, sizeof(counts))) {
        return 3;
    }
    psel_worker_destroy(worker);
    psel_context_destroy(context);
    return 0;
}

/* @a protos: UCX_PSEL_PROTOS of the clients, or NULL */
static void run_departed_clients(const char *tls, const char *protos)
{
    soak_counts_t counts;
    void *address;
    int sv[2], wstatus;
    unsigned i;
    size_t len;
    pid_t pid;

    setenv("UCX_PSEL_TLS", tls, 1);
    setenv("UCX_PSEL_NET_DEVICES", "lo", 1);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    soak_children[0] = psel_test_fork();
    assert_true(soak_children[0] >= 0);
    if (soak_children[0] == 0) {
        close(sv[0]);
        _exit(depart_server(sv[1]));
    }
    close(sv[1]);
    address = psel_test_read_address(sv[0], &len);
    assert_non_null(address);

    /* one client at a time, each a new process (this one has no worker) */
    for (i = 0; i < DEPART_CLIENTS; ++i) {
        pid = psel_test_fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            if (protos != NULL) {
                setenv("UCX_PSEL_PROTOS", protos, 1);
            }
            _exit(depart_client(address, len, i));
        }
        soak_children[1] = pid;
        if (i % 2) {
            assert_int_equal(waitpid(pid, &wstatus, 0), pid);
            assert_true(WIFSIGNALED(wstatus) && (WTERMSIG(wstatus) == SIGKILL));
        } else {
            assert_int_equal(psel_test_wait_child(pid, 30), 0);
        }
        soak_children[1] = 0;
    }
    assert_int_equal(psel_test_write_all(sv[0], "x", 1), 0);
    assert_int_equal(psel_test_read_all(sv[0], &counts, sizeof(counts)), 0);
    assert_int_equal(psel_test_wait_child(soak_children[0], 30), 0);
    soak_children[0] = 0;
    print_message("    %-6s %u clients (half closed, half killed): the server "
                  "had at most %u endpoints, %u left; rendezvous %u/%u/%u, "
                  "tag matching %u/%u/%u, %u receives failed\n", tls,
                  DEPART_CLIENTS, counts.eps_max, counts.eps,
                  counts.rndv_sends, counts.rndv_recvs, counts.rndv_eps,
                  counts.tm_unexpected, counts.tm_inflight,
                  counts.tm_expected, counts.failed);
    assert_int_equal(counts.failed, 0);
    assert_int_equal(counts.eps, 0);
    assert_int_equal(counts.rndv_sends, 0);
    assert_int_equal(counts.rndv_recvs, 0);
    assert_int_equal(counts.rndv_eps, 0);
    assert_int_equal(counts.tm_unexpected, 0);
    assert_int_equal(counts.tm_inflight, 0);
    assert_int_equal(counts.tm_expected, 0);
    close(sv[0]);
    free(address);
    unsetenv("UCX_PSEL_TLS");
    unsetenv("UCX_PSEL_NET_DEVICES");
}

/* posix alone sends 1 MiB eager: rndv/am makes the clients announce
 * themselves (cma, for rndv/get, needs ptrace rights) */
static void test_departed_clients_posix(void **state)
{
    run_departed_clients("posix", "rndv/am");
}

static void test_departed_clients_tcp(void **state)
{
    run_departed_clients("tcp", NULL);
}

static void test_soak_ep_cycles(void **state)
{
    const char *env = getenv("PSEL_SOAK_TLS");
    char tls_list[256], *tls, *save = NULL;

    snprintf(tls_list, sizeof(tls_list), "%s", env ? env : "posix tcp");
    for (tls = strtok_r(tls_list, " ", &save); tls != NULL;
         tls = strtok_r(NULL, " ", &save)) {
        run_soak(tls);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_soak_ep_cycles, teardown_children),
        cmocka_unit_test_teardown(test_departed_clients_posix,
                                  teardown_children),
        cmocka_unit_test_teardown(test_departed_clients_tcp,
                                  teardown_children)
    };

    setenv("UCX_PSEL_CALIBRATION", "none", 0);
    if (getenv("PSEL_TEST_FILTER") != NULL) {
        cmocka_set_test_filter(getenv("PSEL_TEST_FILTER")); /* by hand */
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
