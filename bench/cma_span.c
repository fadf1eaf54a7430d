/*
 * Cross-memory attach against plain copies as the buffers' span grows:
 * the kernel path under UCT's cma transport (process_vm_readv, as
 * rndv/get's reads) and a memcpy, both over 1 MiB messages that rotate over
 * SPAN bytes of page-aligned, touched buffers. One buffer (SPAN = the
 * message) is what ucx_perftest and psel_perftest time; a wide span is an
 * application whose messages come from many buffers (psel_perftest --cold).
 *
 *   bench/cma_span [MSG_KIB [SPAN_MIB...]]     defaults: 1024, then 1 4 16 64 256
 *
 * Prints, per span, microseconds per message for each and their ratio. A
 * benchmark: exits 0 once printed, 1 if a buffer or a call fails. Each
 * span runs at most 400 messages or 2 s per kind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_MSGS  400
#define MAX_TIME  2.0 /* [s] per span and kind */

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Seconds per message over @a span bytes: process_vm_readv from @a pid's
 * @a src (cma), or memcpy from this process's @a src */
static double time_copies(pid_t pid, char *dst, char *src, size_t msg,
                          size_t span, int cma)
{
    size_t slots = span / msg, i;
    double start = now();
    struct iovec local, remote;
    char *d, *s;

    for (i = 0; (i < MAX_MSGS) && (now() - start < MAX_TIME); ++i) {
        d = dst + (i % slots) * msg;
        s = src + (i % slots) * msg;
        if (!cma) {
            memcpy(d, s, msg);
            continue;
        }
        local.iov_base  = d;
        local.iov_len   = msg;
        remote.iov_base = s;
        remote.iov_len  = msg;
        if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)msg) {
            fprintf(stderr, "cma_span: process_vm_readv: %s (ptrace "
                    "scope? see /proc/sys/kernel/yama/ptrace_scope)\n",
                    strerror(errno));
            return -1;
        }
    }
    return (now() - start) / i;
}

int main(int argc, char **argv)
{
    static const size_t default_spans[] = {1, 4, 16, 64, 256};
    size_t msg = 1024ul << 10, span, max_span = 0, spans[32];
    unsigned num_spans = 0, i;
    int to_child[2], to_parent[2], status = 0;
    double cma, copy;
    char *src, *dst, c;
    pid_t pid;

    if (argc > 1) {
        msg = strtoul(argv[1], NULL, 10) << 10;
    }
    for (i = 2; (i < (unsigned)argc) && (num_spans < 32); ++i) {
        spans[num_spans++] = strtoul(argv[i], NULL, 10) << 20;
    }
    if (num_spans == 0) {
        for (i = 0; i < sizeof(default_spans) / sizeof(*default_spans); ++i) {
            spans[num_spans++] = default_spans[i] << 20;
        }
    }
    for (i = 0; i < num_spans; ++i) {
        spans[i] = (spans[i] < msg) ? msg : spans[i];
        max_span = (spans[i] > max_span) ? spans[i] : max_span;
    }
    if ((msg == 0) || (posix_memalign((void**)&src, 4096, max_span) != 0)) {
        fprintf(stderr, "cma_span: usage: cma_span [MSG_KIB [SPAN_MIB...]], "
                "or no memory for %zu-byte buffers\n", max_span);
        return 1;
    }
    memset(src, 0x5a, max_span);
    if ((pipe(to_child) != 0) || (pipe(to_parent) != 0)) {
        perror("cma_span: pipe");
        return 1;
    }

    /* the child holds the source (its copy of the touched pages) and waits */
    pid = fork();
    if (pid < 0) {
        perror("cma_span: fork");
        return 1;
    } else if (pid == 0) {
        memset(src, 0x5a, max_span); /* its own pages, not shared copy-on-write */
        if (write(to_parent[1], "r", 1) != 1) {
            _exit(1);
        }
        _exit((read(to_child[0], &c, 1) == 1) ? 0 : 1);
    }
    if (read(to_parent[0], &c, 1) != 1) {
        fprintf(stderr, "cma_span: the child did not start\n");
        return 1;
    }
    /* after the fork: a destination shared copy-on-write with the child
     * would time a page fault per page written */
    if (posix_memalign((void**)&dst, 4096, max_span) != 0) {
        fprintf(stderr, "cma_span: no memory for %zu-byte buffers\n",
                max_span);
        return 1;
    }
    memset(dst, 0, max_span);

    printf("# %zu KiB messages rotating over SPAN of touched buffers\n",
           msg >> 10);
    printf("# %9s %18s %14s %8s\n", "span MiB", "process_vm_readv us",
           "memcpy us", "ratio");
    for (i = 0; i < num_spans; ++i) {
        span = spans[i];
        cma  = time_copies(pid, dst, src, msg, span, 1);
        copy = time_copies(pid, dst, src, msg, span, 0);
        if (cma < 0) {
            status = 1;
            break;
        }
        printf("  %9zu %18.1f %14.1f %8.2f\n", span >> 20, cma * 1e6,
               copy * 1e6, cma / copy);
    }
    if (write(to_child[1], "x", 1) != 1) {
        status = 1;
    }
    waitpid(pid, NULL, 0);
    return status;
}
