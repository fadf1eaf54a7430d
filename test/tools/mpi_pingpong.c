/*
 * A small MPI program for libprotosel_ucx.so's tests and benchmark: a
 * ping-pong between ranks 0 and 1 over message sizes, then an all-to-all,
 * each checking every byte received. Rank 0 prints one line per size,
 *   pingpong SIZE ok DIGEST HALF_RTT_US
 * then "alltoall SIZE ok DIGEST" and "done", so that two runs (with and
 * without the library) can be compared line by line, the times aside.
 *
 *   mpi_pingpong [-s "S S ..."] [-n ITERS] [-w WARMUP] [-t MSEC]
 *                [-a ALLTOALL_SIZE]
 *
 * Defaults: sizes 8 B .. 4 MiB (x4), 20 iterations after 2 warm-up ones.
 * With -t, each size is also given a time budget: the warm-up goes on
 * (past WARMUP iterations) until it has taken MSEC/4, and the timed part
 * runs as many iterations (at least ITERS, at most MAX_ITERS) as the
 * warm-up's pace fits into MSEC. A benchmark needs it: the first few dozen
 * messages of a protocol pay one-time costs (a shared-memory FIFO's
 * elements and the bounce buffers are touched for the first time), and a
 * short fixed count charges them to whichever size first uses the
 * protocol. Rank 0 decides and tells rank 1 between chunks, outside the
 * timed part. Exits nonzero (after MPI_Abort) on a wrong byte or a bad
 * argument.
 */
#include <mpi.h>

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZES    64
#define MAX_ITERS    100000 /* per phase of one size, with -t */
#define WARMUP_CHUNK 16     /* warm-up iterations between two decisions */
#define MAX_TAG      32767  /* the least MPI_TAG_UB the standard allows */

/* CLOCK_MONOTONIC: MPI_Wtime may read a cycle counter whose rate Open MPI
 * guesses, which is off on some VMs */
static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The byte rank @a rank puts at @a i of a message of iteration @a iter */
static unsigned char pattern(int rank, size_t i, int iter)
{
    return (unsigned char)((i * 131u) ^ (rank * 29u) ^ (iter * 7u));
}

static void fill(unsigned char *buf, size_t size, int rank, int iter)
{
    size_t i;

    for (i = 0; i < size; ++i) {
        buf[i] = pattern(rank, i, iter);
    }
}

/* FNV-1a over what was received, the same whatever the protocol */
static uint64_t digest(uint64_t h, const unsigned char *buf, size_t size)
{
    size_t i;

    for (i = 0; i < size; ++i) {
        h = (h ^ buf[i]) * 1099511628211ull;
    }
    return h;
}

static void check(const unsigned char *buf, size_t size, int from, int iter,
                  const char *what)
{
    size_t i;

    for (i = 0; i < size; ++i) {
        if (buf[i] != pattern(from, i, iter)) {
            fprintf(stderr, "mpi_pingpong: %s of %zu bytes from rank %d, "
                    "iteration %d: byte %zu is 0x%02x, expected 0x%02x\n",
                    what, size, from, iter, i, buf[i], pattern(from, i, iter));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
}

/* @a count ping-pong iterations of @a size bytes between ranks 0 and 1,
 * numbered from *@a iter (patterns and tags); digests what rank 0 gets */
static void pingpong(int rank, size_t size, int count, int *iter,
                     unsigned char *sbuf, unsigned char *rbuf, uint64_t *h)
{
    int end = *iter + count;
    int k, tag;

    for (k = *iter; k < end; ++k) {
        tag = k % (MAX_TAG + 1);
        if (rank == 0) {
            fill(sbuf, size, 0, k);
            MPI_Send(sbuf, (int)size, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)size, MPI_BYTE, 1, tag, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            check(rbuf, size, 1, k, "pong");
            *h = digest(*h, rbuf, size);
        } else {
            MPI_Recv(rbuf, (int)size, MPI_BYTE, 0, tag, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            check(rbuf, size, 0, k, "ping");
            fill(sbuf, size, 1, k);
            MPI_Send(sbuf, (int)size, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
        }
    }
    *iter = end;
}

/* Rank 0's @a value, on ranks 0 and 1 (@a pair) */
static int pair_decision(MPI_Comm pair, int value)
{
    MPI_Bcast(&value, 1, MPI_INT, 0, pair);
    return value;
}

/* Warms up one size: at least @a warmup iterations, and with a budget until
 * they took @a budget_s / 4. Returns rank 0's time per iteration in the
 * last chunk (0 when there was no warm-up). */
static double warm_up(MPI_Comm pair, int rank, size_t size, int warmup,
                      double budget_s, int *iter, unsigned char *sbuf,
                      unsigned char *rbuf)
{
    double start = now(), chunk_start, per_iter = 0;
    int done     = (warmup == 0) && (budget_s == 0);
    int count    = 0, chunk;
    uint64_t h   = 0;

    while (!done) {
        chunk       = (budget_s == 0) ? warmup : WARMUP_CHUNK;
        chunk_start = now();
        pingpong(rank, size, chunk, iter, sbuf, rbuf, &h);
        count      += chunk;
        per_iter    = (now() - chunk_start) / chunk;
        done        = ((count >= warmup) &&
                       ((now() - start) >= (budget_s / 4))) ||
                      (count >= MAX_ITERS);
        done        = pair_decision(pair, done);
    }
    return per_iter;
}

static int parse_size(const char *s, size_t *size)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v     = strtoull(s, &end, 10);
    if ((errno != 0) || (end == s) || (*end != '\0') || (v == 0) ||
        (v > (1ull << 30))) {
        return -1;
    }
    *size = v;
    return 0;
}

static void usage_error(int rank, const char *msg, const char *arg)
{
    if (rank == 0) {
        fprintf(stderr, "mpi_pingpong: %s '%s'\nusage: mpi_pingpong [-s "
                "\"S S ...\"] [-n ITERS] [-w WARMUP] [-t MSEC] "
                "[-a ALLTOALL_SIZE]\n",
                msg, arg);
    }
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    size_t sizes[MAX_SIZES], size, max = 0, a2a_size = 4096;
    int num_sizes = 0, iters = 20, warmup = 2, rank, nranks, opt, i, peer;
    int iter, count;
    unsigned char *sbuf, *rbuf;
    char *tok, *save, *list = NULL;
    double t0, elapsed, budget_s = 0, per_iter;
    uint64_t h;
    MPI_Comm pair;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    while ((opt = getopt(argc, argv, "s:n:w:t:a:")) != -1) {
        switch (opt) {
        case 's': list = optarg; break;
        case 'n': iters  = atoi(optarg);
                  if ((iters < 1) || (iters > MAX_ITERS)) {
                      usage_error(rank, "bad -n (1..100000)", optarg);
                  }
                  break;
        case 'w': warmup = atoi(optarg);
                  if ((warmup < 0) || (warmup > MAX_ITERS)) {
                      usage_error(rank, "bad -w (0..100000)", optarg);
                  }
                  break;
        case 't': budget_s = atoi(optarg) * 1e-3;
                  if ((budget_s <= 0) || (budget_s > 60)) {
                      usage_error(rank, "bad -t (1..60000 ms)", optarg);
                  }
                  break;
        case 'a': if (parse_size(optarg, &a2a_size) != 0) {
                      usage_error(rank, "bad -a", optarg);
                  }
                  break;
        default:  usage_error(rank, "bad option", argv[optind - 1]);
        }
    }
    if (list != NULL) {
        for (tok = strtok_r(list, " ,", &save); tok != NULL;
             tok = strtok_r(NULL, " ,", &save)) {
            if ((num_sizes == MAX_SIZES) ||
                (parse_size(tok, &sizes[num_sizes]) != 0)) {
                usage_error(rank, "bad size (1..1G, at most 64)", tok);
            }
            ++num_sizes;
        }
    } else {
        for (size = 8; size <= 4 * 1024 * 1024; size *= 4) {
            sizes[num_sizes++] = size;
        }
    }
    if (nranks < 2) {
        usage_error(rank, "needs at least 2 ranks, has", "1");
    }
    for (i = 0; i < num_sizes; ++i) {
        max = (sizes[i] > max) ? sizes[i] : max;
    }
    max  = (a2a_size * nranks > max) ? a2a_size * nranks : max;
    sbuf = malloc(max);
    rbuf = malloc(max);
    if ((sbuf == NULL) || (rbuf == NULL)) {
        fprintf(stderr, "mpi_pingpong: out of memory for %zu bytes\n", max);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    /* ping-pong between ranks 0 and 1; the others wait */
    MPI_Comm_split(MPI_COMM_WORLD, (rank < 2) ? 0 : MPI_UNDEFINED, rank, &pair);
    for (i = 0; i < num_sizes; ++i) {
        size = sizes[i];
        h    = 14695981039346656037ull;
        iter = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank < 2) {
            per_iter = warm_up(pair, rank, size, warmup, budget_s, &iter,
                               sbuf, rbuf);
            count    = iters;
            if ((budget_s > 0) && (per_iter > 0) &&
                ((budget_s / per_iter) > count)) {
                count = (budget_s / per_iter) < MAX_ITERS ?
                        (int)(budget_s / per_iter) : MAX_ITERS;
            }
            count = pair_decision(pair, count);
            t0    = now();
            pingpong(rank, size, count, &iter, sbuf, rbuf, &h);
            elapsed = now() - t0;
            if (rank == 0) {
                printf("pingpong %zu ok %016" PRIx64 " %.3f\n", size, h,
                       elapsed * 1e6 / (2.0 * count));
                fflush(stdout);
            }
        }
    }
    if (pair != MPI_COMM_NULL) {
        MPI_Comm_free(&pair);
    }

    /* all-to-all: block j of rank r is pattern(r, ., j) */
    for (peer = 0; peer < nranks; ++peer) {
        for (size = 0; size < a2a_size; ++size) {
            sbuf[peer * a2a_size + size] = pattern(rank, size, peer);
        }
    }
    MPI_Alltoall(sbuf, (int)a2a_size, MPI_BYTE, rbuf, (int)a2a_size, MPI_BYTE,
                 MPI_COMM_WORLD);
    h = 14695981039346656037ull;
    for (peer = 0; peer < nranks; ++peer) {
        check(rbuf + peer * a2a_size, a2a_size, peer, rank, "alltoall block");
        h = digest(h, rbuf + peer * a2a_size, a2a_size);
    }
    if (rank == 0) {
        printf("alltoall %zu ok %016" PRIx64 "\ndone\n", a2a_size, h);
    }

    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
