/*
 * A small MPI program for libprotosel_ucx.so's tests and benchmark: a
 * ping-pong between ranks 0 and 1 over message sizes, then an all-to-all,
 * each checking every byte received. Rank 0 prints one line per size,
 *   pingpong SIZE ok DIGEST HALF_RTT_US
 * then "alltoall SIZE ok DIGEST" and "done", so that two runs (with and
 * without the library) can be compared line by line, the times aside.
 *
 *   mpi_pingpong [-s "S S ..."] [-n ITERS] [-w WARMUP] [-a ALLTOALL_SIZE]
 *
 * Defaults: sizes 8 B .. 4 MiB (x4), 20 iterations after 2 warm-up ones.
 * Exits nonzero (after MPI_Abort) on a wrong byte or a bad argument.
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

#define MAX_SIZES 64

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
                "\"S S ...\"] [-n ITERS] [-w WARMUP] [-a ALLTOALL_SIZE]\n",
                msg, arg);
    }
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    size_t sizes[MAX_SIZES], size, max = 0, a2a_size = 4096;
    int num_sizes = 0, iters = 20, warmup = 2, rank, nranks, opt, i, it, peer;
    unsigned char *sbuf, *rbuf;
    char *tok, *save, *list = NULL;
    double t0, elapsed;
    uint64_t h;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    while ((opt = getopt(argc, argv, "s:n:w:a:")) != -1) {
        switch (opt) {
        case 's': list = optarg; break;
        case 'n': iters  = atoi(optarg);
                  if (iters < 1) usage_error(rank, "bad -n", optarg);
                  break;
        case 'w': warmup = atoi(optarg);
                  if (warmup < 0) usage_error(rank, "bad -w", optarg);
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
    for (i = 0; i < num_sizes; ++i) {
        size = sizes[i];
        h    = 14695981039346656037ull;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = 0;
        for (it = -warmup; (rank < 2) && (it < iters); ++it) {
            if (it == 0) {
                t0 = now();
            }
            if (rank == 0) {
                fill(sbuf, size, 0, it + warmup);
                MPI_Send(sbuf, (int)size, MPI_BYTE, 1, it + warmup,
                         MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)size, MPI_BYTE, 1, it + warmup,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check(rbuf, size, 1, it + warmup, "pong");
                h = digest(h, rbuf, size);
            } else {
                MPI_Recv(rbuf, (int)size, MPI_BYTE, 0, it + warmup,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check(rbuf, size, 0, it + warmup, "ping");
                fill(sbuf, size, 1, it + warmup);
                MPI_Send(sbuf, (int)size, MPI_BYTE, 0, it + warmup,
                         MPI_COMM_WORLD);
            }
        }
        elapsed = now() - t0;
        if (rank == 0) {
            printf("pingpong %zu ok %016" PRIx64 " %.3f\n", size, h,
                   elapsed * 1e6 / (2.0 * iters));
            fflush(stdout);
        }
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
