/*
 * The copy probe (copy_probe.h): memcpy and process_vm_readv() timed on
 * this host, and their bandwidths given to the transports that copy on
 * this host: shared memory and tcp over loopback.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* process_vm_readv */
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "copy_probe.h"
#include "clock.h"
#include "reachability.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <sys/uio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PSEL_COPY_PROBE_ROUNDS   8     /* the fastest round counts */
#define PSEL_COPY_PROBE_SPAN_SEC 20e-6 /* time each round aims at */

typedef enum {
    PSEL_COPY_PROBE_MEMCPY,
    PSEL_COPY_PROBE_VM_READ
} psel_copy_probe_op_t;


/* One operation of @a size bytes; returns 0 on success */
static int psel_copy_probe_once(psel_copy_probe_op_t op, void *dst,
                                void *src, size_t size, pid_t self)
{
    struct iovec local  = {dst, size};
    struct iovec remote = {src, size};

    if (op == PSEL_COPY_PROBE_MEMCPY) {
        memcpy(dst, src, size);
        /* the copy's result is used: the compiler keeps it */
        __asm__ __volatile__("" : : "r"(dst) : "memory");
        return 0;
    }
    return (process_vm_readv(self, &local, 1, &remote, 1, 0) ==
            (ssize_t)size) ? 0 : -1;
}

/* Seconds per operation of @a size bytes, the fastest round; < 0 if the
 * operation failed */
static double psel_copy_probe_time(psel_copy_probe_op_t op, void *dst,
                                   void *src, size_t size, pid_t self)
{
    double best = -1, start, first, elapsed;
    unsigned round, rep, reps;

    start = psel_clock_monotonic();
    if (psel_copy_probe_once(op, dst, src, size, self) != 0) {
        return -1;
    }
    first = psel_clock_monotonic() - start;
    reps  = (first > PSEL_COPY_PROBE_SPAN_SEC) ? 1 :
            (unsigned)(PSEL_COPY_PROBE_SPAN_SEC / ucs_max(first, 1e-8)) + 1;
    reps  = ucs_min(reps, 64);

    for (round = 0; round < PSEL_COPY_PROBE_ROUNDS; ++round) {
        start = psel_clock_monotonic();
        for (rep = 0; rep < reps; ++rep) {
            if (psel_copy_probe_once(op, dst, src, size, self) != 0) {
                return -1;
            }
        }
        elapsed = (psel_clock_monotonic() - start) / reps;
        if ((best < 0) || (elapsed < best)) {
            best = elapsed;
        }
    }
    return best;
}

/* The line through the times at the two sizes; m = 0 if it failed or is
 * out of range */
static ucs_linear_func_t psel_copy_probe_line(psel_copy_probe_op_t op,
                                              void *dst, void *src)
{
    const double span = PSEL_COPY_PROBE_LARGE - PSEL_COPY_PROBE_SMALL;
    pid_t self        = getpid();
    double small, large, m;

    small = psel_copy_probe_time(op, dst, src, PSEL_COPY_PROBE_SMALL, self);
    large = psel_copy_probe_time(op, dst, src, PSEL_COPY_PROBE_LARGE, self);
    if ((small < 0) || (large < 0)) {
        return ucs_linear_func_make(0, 0);
    }
    m = (large - small) / span;
    if (!(m >= 1.0 / PSEL_COPY_PROBE_BW_MAX) ||
        !(m <= 1.0 / PSEL_COPY_PROBE_BW_MIN)) {
        return ucs_linear_func_make(0, 0);
    }
    return ucs_linear_func_make(ucs_max(small - (m * PSEL_COPY_PROBE_SMALL),
                                        0), m);
}

ucs_status_t psel_copy_probe_run(psel_copy_probe_t *probe)
{
    char *buffers;

    memset(probe, 0, sizeof(*probe));
    buffers = malloc(2 * PSEL_COPY_PROBE_LARGE);
    if (buffers == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    /* every page present before any timing */
    memset(buffers, 0x5a, 2 * PSEL_COPY_PROBE_LARGE);

    probe->memcpy_cost  = psel_copy_probe_line(PSEL_COPY_PROBE_MEMCPY,
                                               buffers + PSEL_COPY_PROBE_LARGE,
                                               buffers);
    probe->vm_read_cost = psel_copy_probe_line(PSEL_COPY_PROBE_VM_READ,
                                               buffers + PSEL_COPY_PROBE_LARGE,
                                               buffers);
    free(buffers);

    if (probe->memcpy_cost.m == 0) {
        ucs_warn("protosel: timing memcpy on this host gave no usable "
                 "bandwidth (outside %.0f..%.0f MB/s); cost lines keep the "
                 "advertised figures. Set UCX_PSEL_BCOPY_BW to this host's "
                 "copy bandwidth to silence this",
                 PSEL_COPY_PROBE_BW_MIN / (1024 * 1024),
                 PSEL_COPY_PROBE_BW_MAX / (1024 * 1024));
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

/* The probe line that stands for @a resource's data path, or NULL */
static const ucs_linear_func_t *
psel_copy_probe_line_of(const psel_copy_probe_t *probe,
                        const psel_resource_t *resource)
{
    if (resource->dev_type != UCT_DEVICE_TYPE_SHM) {
        return NULL;
    }
    if (!strcmp(resource->tl_name, "cma")) {
        return &probe->vm_read_cost;
    }
    if (resource->cap_flags & UCT_IFACE_FLAG_AM_BCOPY) {
        return &probe->memcpy_cost; /* a FIFO of copies: posix, sysv, xpmem */
    }
    return NULL;
}

/* Does @a table hold a transport that copies through shared memory? */
static int psel_copy_probe_has_shm(const psel_copy_probe_t *probe,
                                   const psel_resource_table_t *table)
{
    unsigned i;

    for (i = 0; i < table->count; ++i) {
        if (psel_copy_probe_line_of(probe, &table->resources[i]) != NULL) {
            return 1;
        }
    }
    return 0;
}

unsigned psel_copy_probe_apply(const psel_copy_probe_t *probe,
                               psel_resource_table_t *table)
{
    /* tcp over loopback moves data by a kernel copy on each side, the two
     * sides on their own CPUs; UCT advertises the 100 Mb/s of a device
     * without a link speed. Beside shared memory it keeps that figure:
     * shared memory serves a peer on this host, and the two would copy on
     * the same CPUs, not add up as two rails */
    int tcp_loopback = !psel_copy_probe_has_shm(probe, table);
    const ucs_linear_func_t *line;
    psel_resource_t *resource;
    unsigned i, count = 0;

    for (i = 0; i < table->count; ++i) {
        resource = &table->resources[i];
        line     = (tcp_loopback && psel_resource_is_tcp_loopback(resource)) ?
                   &probe->memcpy_cost :
                   psel_copy_probe_line_of(probe, resource);
        if ((line == NULL) || (psel_copy_probe_bw(*line) == 0)) {
            continue;
        }
        if (resource->bw_advertised == 0) {
            resource->bw_advertised = resource->bw_dedicated +
                                      resource->bw_shared;
        }
        resource->bw_dedicated = psel_copy_probe_bw(*line);
        resource->bw_shared    = 0;
        ++count;
    }
    return count;
}
