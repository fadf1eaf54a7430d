/**
 * @file copy_probe.h
 * What moving bytes costs on this host, timed in 1-2 ms:
 * memcpy (what a copy protocol's pack and unpack cost, and what a
 * shared-memory FIFO transport such as posix or sysv moves data with), and
 * process_vm_readv() (what cma's get and put run).
 *
 * UCT advertises neither: the shared-memory transports' bandwidths are
 * configured constants (UCX_POSIX_BW, UCX_SYSV_BW: 12179 MB/s; UCX_CMA_BW:
 * 11145 MB/s), and UCX's copy bandwidth is a fixed figure per CPU vendor
 * (5800 MB/s). On a machine that copies ten times faster, those figures
 * make every copy protocol look ten times dearer than it is (docs/calibration.md,
 * "Copies timed at start"). Internal: not installed.
 */
#ifndef PSEL_LANE_SELECT_COPY_PROBE_H_
#define PSEL_LANE_SELECT_COPY_PROBE_H_

#include "resource.h"

#include <ucs/datastruct/linear_func.h>
#include <ucs/type/status.h>


/** Sizes the probe times each operation at; the line runs through both. */
#define PSEL_COPY_PROBE_SMALL  (64 * 1024)
#define PSEL_COPY_PROBE_LARGE  (1024 * 1024)

/** Bandwidths outside this range are taken as a failed measurement [B/s]. */
#define PSEL_COPY_PROBE_BW_MIN (100.0 * 1024 * 1024)
#define PSEL_COPY_PROBE_BW_MAX (10000.0 * 1024 * 1024 * 1024)


/** The measured cost lines, c [s] + m [s/B]; m = 0: not measured. */
typedef struct psel_copy_probe {
    ucs_linear_func_t memcpy_cost;   /**< memcpy within this process */
    ucs_linear_func_t vm_read_cost;  /**< process_vm_readv() of this
                                          process's own memory (0 if the
                                          call is not allowed here) */
} psel_copy_probe_t;


/**
 * Time both operations at PSEL_COPY_PROBE_SMALL and _LARGE (the fastest of
 * a few rounds, so another process's burst does not count) and fit a line
 * through the two points of each.
 *
 * @return UCS_OK, UCS_ERR_NO_MEMORY, or UCS_ERR_IO_ERROR when memcpy's
 *         line came out of range (a warning says so); the caller then keeps
 *         the advertised figures.
 */
ucs_status_t psel_copy_probe_run(psel_copy_probe_t *probe);


/** Bandwidth of a probe line [B/s], 0 if it was not measured. */
static inline double psel_copy_probe_bw(ucs_linear_func_t cost)
{
    return (cost.m > 0) ? (1.0 / cost.m) : 0;
}


/**
 * Use a probe's figures for the live table's transports that move data
 * by copies on this host: those that move active messages by copy through
 * shared memory (posix, sysv, xpmem: memcpy's bandwidth), cma
 * (process_vm_readv's), and tcp over the loopback interface (memcpy's: a
 * kernel copy on each side) where @a table has no shared-memory transport
 * (beside one, tcp/lo would copy on the same CPUs, not add a rail). Their
 * UCT figure moves to psel_resource_t::bw_advertised; other transports
 * keep theirs. Pass the table as filtered by the user's transports. A
 * table read from a file must not be passed here.
 *
 * @return How many resources took a measured bandwidth.
 */
unsigned psel_copy_probe_apply(const psel_copy_probe_t *probe,
                               psel_resource_table_t *table);

#endif
