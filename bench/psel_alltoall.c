/*
 * psel_alltoall: an alltoall among P processes on this host over
 * protosel's data path (src/core), to compare with the LogGP estimate of
 * `psel_info --alltoall P --size n`.
 *
 * The first process forks the others; they exchange worker addresses and
 * meet at barriers over Unix socket pairs (out of band, never timed; every
 * process keeps progressing its worker while it waits). Each alltoall
 * posts a receive from every peer (tag: iteration and source) and sends n
 * bytes to every peer, the i-th send going to rank me + i (mod P) as MPI's
 * pairwise order does, then progresses until all 2(P-1) requests complete.
 * Per size, after warm-up iterations: "isolated", the median of
 * alltoalls that each start after a barrier over the data path (what the
 * LogGP estimate models: all processes start together), and
 * "back-to-back", the mean of alltoalls in a row (they overlap: a message
 * of the next one may arrive before its receive is posted). Each figure is
 * the largest over the processes (an alltoall ends when its slowest
 * process is done).
 *
 * Usage: psel_alltoall [-P procs] [-s size,size,...] [-n iters] [-y 0|1]
 *   -y 1 yields the CPU while waiting (default when P > online CPUs, as
 *   Open MPI does when oversubscribed): busy-polling processes would
 *   otherwise take the CPU from the one that has work to do.
 * Transports come from UCX_PSEL_TLS / UCX_PSEL_NET_DEVICES.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <core/psel_core.h>

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define A2A_MAX_PROCS    16
#define A2A_MAX_SIZES    32
#define A2A_TIMEOUT      60.0      /* seconds any wait may take */
#define A2A_DEFAULT_SIZES "8,64,512,4096,32768,262144,1048576"

typedef struct {
    unsigned        procs, me;
    int             yield;
    int             sock[A2A_MAX_PROCS]; /* rank 0: one per child; child:
                                            sock[0] to rank 0 */
    psel_context_h  context;
    psel_worker_h   worker;
    psel_ep_h       eps[A2A_MAX_PROCS];
    uint8_t        *sbuf, *rbuf;
} a2a_t;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

static void die(const a2a_t *a, const char *what)
{
    fprintf(stderr, "psel_alltoall: rank %u: %s\n", a->me, what);
    exit(1);
}

static void io_all(a2a_t *a, int fd, void *buf, size_t len, int write_it)
{
    ssize_t n;

    while (len > 0) {
        n = write_it ? write(fd, buf, len) : read(fd, buf, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            die(a, "the out-of-band connection broke (a peer died?)");
        }
        buf  = (uint8_t*)buf + n;
        len -= (size_t)n;
    }
}

/* Wait until @a fd is readable, progressing the worker meanwhile */
static void wait_readable(a2a_t *a, int fd)
{
    struct pollfd pfd = {fd, POLLIN, 0};
    double deadline   = now() + A2A_TIMEOUT;

    for (;;) {
        if (a->worker != NULL) {
            psel_worker_progress(a->worker);
        }
        if (poll(&pfd, 1, 0) > 0) {
            return;
        }
        if (now() > deadline) {
            die(a, "a barrier waited more than 60 s");
        }
        if (a->yield || (a->worker == NULL)) {
            sched_yield();
        }
    }
}

static void barrier(a2a_t *a)
{
    unsigned i;
    char c = 1;

    if (a->me == 0) {
        for (i = 1; i < a->procs; ++i) {
            wait_readable(a, a->sock[i]);
            io_all(a, a->sock[i], &c, 1, 0);
        }
        for (i = 1; i < a->procs; ++i) {
            io_all(a, a->sock[i], &c, 1, 1);
        }
    } else {
        io_all(a, a->sock[0], &c, 1, 1);
        wait_readable(a, a->sock[0]);
        io_all(a, a->sock[0], &c, 1, 0);
    }
}

/* Rank 0 gathers every address and sends all of them to every child */
static void exchange_addresses(a2a_t *a, void **addrs, size_t *lens)
{
    unsigned i, j;

    if (psel_worker_get_address(a->worker, &addrs[a->me], &lens[a->me]) !=
        UCS_OK) {
        die(a, "no worker address");
    }
    if (a->me == 0) {
        for (i = 1; i < a->procs; ++i) {
            io_all(a, a->sock[i], &lens[i], sizeof(lens[i]), 0);
            if ((lens[i] == 0) || (lens[i] > (1u << 20)) ||
                ((addrs[i] = malloc(lens[i])) == NULL)) {
                die(a, "bad address length");
            }
            io_all(a, a->sock[i], addrs[i], lens[i], 0);
        }
        for (i = 1; i < a->procs; ++i) {
            for (j = 0; j < a->procs; ++j) {
                io_all(a, a->sock[i], &lens[j], sizeof(lens[j]), 1);
                io_all(a, a->sock[i], addrs[j], lens[j], 1);
            }
        }
    } else {
        io_all(a, a->sock[0], &lens[a->me], sizeof(lens[a->me]), 1);
        io_all(a, a->sock[0], addrs[a->me], lens[a->me], 1);
        for (j = 0; j < a->procs; ++j) {
            if (j == a->me) {
                size_t len;
                void *skip;
                io_all(a, a->sock[0], &len, sizeof(len), 0);
                skip = malloc(len);
                io_all(a, a->sock[0], skip, len, 0);
                free(skip);
                continue;
            }
            io_all(a, a->sock[0], &lens[j], sizeof(lens[j]), 0);
            if ((lens[j] == 0) || (lens[j] > (1u << 20)) ||
                ((addrs[j] = malloc(lens[j])) == NULL)) {
                die(a, "bad address length");
            }
            io_all(a, a->sock[0], addrs[j], lens[j], 0);
        }
    }
}

static void wait_requests(a2a_t *a, psel_request_t **reqs, unsigned count)
{
    double deadline = now() + A2A_TIMEOUT;
    unsigned i, done;

    for (;;) {
        for (i = 0, done = 0; i < count; ++i) {
            done += (psel_request_test(reqs[i], NULL) != UCS_INPROGRESS);
        }
        if (done == count) {
            break;
        }
        if (psel_worker_progress(a->worker) == 0) {
            if (now() > deadline) {
                die(a, "an alltoall made no progress for 60 s");
            }
            if (a->yield) {
                sched_yield();
            }
        }
    }
    for (i = 0; i < count; ++i) {
        if (psel_request_test(reqs[i], NULL) != UCS_OK) {
            die(a, ucs_status_string(psel_request_test(reqs[i], NULL)));
        }
        psel_request_free(reqs[i]);
    }
}

/* Tags: iteration and source; barrier messages have the top bit set */
#define A2A_TAG_BARRIER  (1ull << 63)

static void exchange(a2a_t *a, size_t n, uint64_t tag_base)
{
    psel_request_t *reqs[2 * A2A_MAX_PROCS];
    unsigned i, peer, count = 0;

    for (i = 1; i < a->procs; ++i) {
        peer          = (a->me + a->procs - i) % a->procs;
        reqs[count++] = psel_tag_recv_nb(a->worker, a->rbuf + (peer * n), n,
                                         tag_base | peer, UINT64_MAX, NULL,
                                         NULL);
    }
    for (i = 1; i < a->procs; ++i) {
        peer          = (a->me + i) % a->procs;
        reqs[count++] = psel_tag_send_nb(a->eps[peer], a->sbuf + (peer * n),
                                         n, tag_base | a->me, NULL, NULL);
    }
    /* a receive is NULL only without memory; a send is NULL when it
     * completed at once, an error pointer when it failed (psel_core.h) */
    for (i = 0; i < a->procs - 1; ++i) {
        if (reqs[i] == NULL) {
            die(a, "out of memory for receive requests");
        }
    }
    for (; i < count; ++i) {
        if (UCS_PTR_IS_ERR(reqs[i])) {
            die(a, ucs_status_string(UCS_PTR_STATUS(reqs[i])));
        }
    }
    wait_requests(a, reqs, count);
}

static void alltoall(a2a_t *a, size_t n, unsigned iter)
{
    exchange(a, n, (uint64_t)iter << 16);
}

/* A barrier over the data path: nobody leaves before everyone arrived,
 * and the processes leave within about one message latency of each other
 * (an out-of-band barrier would add the kernel's wake-up skew) */
static void dp_barrier(a2a_t *a, unsigned iter)
{
    exchange(a, 0, A2A_TAG_BARRIER | ((uint64_t)iter << 16));
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double*)x, b = *(const double*)y;

    return (a > b) - (a < b);
}

static unsigned iterations(size_t n, unsigned forced)
{
    if (forced > 0) {
        return forced;
    }
    return (n <= 4096) ? 1000 : (n <= 65536) ? 200 : 40;
}

/* One size: every rank's median of isolated alltoalls (each after a
 * barrier) and mean of back-to-back ones; rank 0 prints the largest */
static void run_size(a2a_t *a, size_t n, unsigned forced, unsigned *iter)
{
    unsigned iters = iterations(n, forced), warm = iters / 10 + 1, i;
    double *t      = malloc(iters * sizeof(*t));
    double res[2], worst[2] = {0, 0}, start, begin;

    if (t == NULL) {
        die(a, "out of memory");
    }
    barrier(a);
    for (i = 0; i < warm; ++i) {
        alltoall(a, n, (*iter)++);
    }
    for (i = 0; i < iters; ++i) {
        dp_barrier(a, *iter);
        start = now();
        alltoall(a, n, (*iter)++);
        t[i] = now() - start;
    }
    qsort(t, iters, sizeof(*t), cmp_double);
    res[0] = t[iters / 2];
    barrier(a);
    begin = now();
    for (i = 0; i < iters; ++i) {
        alltoall(a, n, (*iter)++);
    }
    res[1] = (now() - begin) / iters;
    free(t);

    if (a->me == 0) {
        worst[0] = res[0];
        worst[1] = res[1];
        for (i = 1; i < a->procs; ++i) {
            wait_readable(a, a->sock[i]);
            io_all(a, a->sock[i], res, sizeof(res), 0);
            worst[0] = (res[0] > worst[0]) ? res[0] : worst[0];
            worst[1] = (res[1] > worst[1]) ? res[1] : worst[1];
        }
        printf("%10zu %7u %14.3f %14.3f\n", n, iters, worst[0] * 1e6,
               worst[1] * 1e6);
        fflush(stdout);
    } else {
        io_all(a, a->sock[0], res, sizeof(res), 1);
    }
}

static void run(a2a_t *a, const size_t *sizes, unsigned num_sizes,
                unsigned forced)
{
    void *addrs[A2A_MAX_PROCS] = {NULL};
    size_t lens[A2A_MAX_PROCS] = {0}, max = 0;
    psel_request_t *close_reqs[A2A_MAX_PROCS];
    unsigned i, count = 0, iter = 0;

    for (i = 0; i < num_sizes; ++i) {
        max = (sizes[i] > max) ? sizes[i] : max;
    }
    a->sbuf = malloc((max * a->procs) + 1);
    a->rbuf = malloc((max * a->procs) + 1);
    if ((a->sbuf == NULL) || (a->rbuf == NULL)) {
        die(a, "out of memory for buffers");
    }
    memset(a->sbuf, (int)a->me, (max * a->procs) + 1);

    if ((psel_context_create(&a->context) != UCS_OK)) {
        die(a, "psel_context_create failed (see above)");
    }
    psel_context_set_num_eps(a->context, a->procs - 1);
    if (psel_worker_create(a->context, &a->worker) != UCS_OK) {
        die(a, "psel_worker_create failed (see above)");
    }
    exchange_addresses(a, addrs, lens);
    for (i = 0; i < a->procs; ++i) {
        if ((i != a->me) &&
            (psel_ep_create(a->worker, addrs[i], lens[i], &a->eps[i]) !=
             UCS_OK)) {
            die(a, "psel_ep_create failed (see above)");
        }
    }
    if ((a->me == 0)) {
        printf("# psel_alltoall: %u processes, yield %s; time per alltoall, "
               "the largest over the processes:\n# isolated = median of "
               "alltoalls each after a barrier; back-to-back = mean of "
               "alltoalls in a row\n#%9s %7s %14s %14s\n", a->procs,
               a->yield ? "on" : "off", "n [B]", "iters", "isolated [us]",
               "back2back [us]");
        fflush(stdout);
    }
    for (i = 0; i < num_sizes; ++i) {
        run_size(a, sizes[i], forced, &iter);
    }

    /* close while every peer still progresses */
    barrier(a);
    for (i = 0; i < a->procs; ++i) {
        if (i != a->me) {
            close_reqs[count] = psel_ep_close_nb(a->eps[i],
                                                 PSEL_EP_CLOSE_FLUSH, NULL,
                                                 NULL);
            if (close_reqs[count] != NULL) {
                ++count;
            }
        }
    }
    wait_requests(a, close_reqs, count);
    barrier(a);
    psel_worker_destroy(a->worker);
    psel_context_destroy(a->context);
    for (i = 0; i < a->procs; ++i) {
        if (i != a->me) {
            free(addrs[i]);
        }
    }
    free(addrs[a->me]);
    free(a->sbuf);
    free(a->rbuf);
}

static unsigned parse_sizes(const char *arg, size_t *sizes)
{
    char *copy = strdup(arg), *tok, *save = NULL, *end;
    unsigned n = 0;
    unsigned long long v;

    for (tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        errno = 0;
        v     = strtoull(tok, &end, 10);
        if ((n == A2A_MAX_SIZES) || (*tok < '0') || (*tok > '9') ||
            (*end != '\0') || errno || (v > (64ull << 20))) {
            fprintf(stderr, "psel_alltoall: -s '%s': give up to %d sizes in "
                    "bytes, 0..64M, separated by commas\n", arg,
                    A2A_MAX_SIZES);
            exit(2);
        }
        sizes[n++] = v;
    }
    free(copy);
    return n;
}

int main(int argc, char **argv)
{
    size_t sizes[A2A_MAX_SIZES];
    unsigned num_sizes = parse_sizes(A2A_DEFAULT_SIZES, sizes), forced = 0, i;
    pid_t pids[A2A_MAX_PROCS];
    int sv[2], c, status, ret = 0;
    a2a_t a;

    memset(&a, 0, sizeof(a));
    a.procs = 2;
    a.yield = -1;
    while ((c = getopt(argc, argv, "P:s:n:y:h")) != -1) {
        switch (c) {
        case 'P': a.procs = (unsigned)atoi(optarg); break;
        case 's': num_sizes = parse_sizes(optarg, sizes); break;
        case 'n': forced = (unsigned)atoi(optarg); break;
        case 'y': a.yield = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: psel_alltoall [-P procs 2..%d] "
                    "[-s size,...] [-n iters] [-y 0|1]\n", A2A_MAX_PROCS);
            return (c == 'h') ? 0 : 2;
        }
    }
    if ((a.procs < 2) || (a.procs > A2A_MAX_PROCS)) {
        fprintf(stderr, "psel_alltoall: -P %u: give 2..%d processes\n",
                a.procs, A2A_MAX_PROCS);
        return 2;
    }
    if (a.yield < 0) {
        a.yield = (a.procs > (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
    }

    fflush(stdout);
    for (i = 1; i < a.procs; ++i) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
            perror("socketpair");
            return 1;
        }
        pids[i] = fork();
        if (pids[i] < 0) {
            perror("fork");
            return 1;
        }
        if (pids[i] == 0) {
            close(sv[0]);
            memset(a.sock, -1, sizeof(a.sock));
            a.me      = i;
            a.sock[0] = sv[1];
            run(&a, sizes, num_sizes, forced);
            _exit(0);
        }
        close(sv[1]);
        a.sock[i] = sv[0];
    }
    a.me = 0;
    run(&a, sizes, num_sizes, forced);
    for (i = 1; i < a.procs; ++i) {
        if ((waitpid(pids[i], &status, 0) != pids[i]) ||
            !WIFEXITED(status) || (WEXITSTATUS(status) != 0)) {
            fprintf(stderr, "psel_alltoall: rank %u failed\n", i);
            ret = 1;
        }
    }
    return ret;
}
