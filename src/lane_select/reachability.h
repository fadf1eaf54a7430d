/**
 * @file reachability.h
 * Reachability between resources of imported or snapshot tables, where no
 * live uct_iface_is_reachable() call is possible because one side is only a
 * description of another machine.
 *
 * Rules, in order (see also docs/lane-selection.md):
 * 1. Different transport names are never reachable (UCP also pairs lanes
 *    only by transport name), and neither are different device types.
 * 2. Loopback (self) and accelerator copy transports (cuda_copy, gdr_copy,
 *    rocm_copy: UCX's memory-type endpoint copies with them inside one
 *    process): only within one process, @a locality PSEL_PEER_SAME_PROCESS.
 * 3. Shared memory (intra-node: mm/posix/sysv/xpmem/cma/knem, and cuda_ipc,
 *    rocm_ipc): only on the same host (@a locality != PSEL_PEER_REMOTE_HOST).
 * 4. InfiniBand transports (rc, dc, ud in verbs or mlx5 flavour, and old
 *    unsuffixed names): every port of every HCA is treated as one fabric, so
 *    the device names do not matter (IB subnets/links are one fabric).
 * 5. tcp: reachable to tcp on any device, except that a loopback interface
 *    ("lo") only reaches the same host.
 * 6. Any other network transport: same name and type is reachable.
 *
 * psel_info's "loopback peer" is this machine connected to itself, like
 * `ucx_info -e`, which connects a worker to itself: it passes
 * PSEL_PEER_SAME_PROCESS, so self, shared memory and the network transports
 * all qualify.
 */
#ifndef PSEL_LANE_SELECT_REACHABILITY_H_
#define PSEL_LANE_SELECT_REACHABILITY_H_

#include "resource.h"


/** Where the remote peer is, relative to the local one */
enum {
    PSEL_PEER_REMOTE_HOST  = 0, /**< Another host: only the network */
    PSEL_PEER_SAME_HOST    = 1, /**< Another process on this host */
    PSEL_PEER_SAME_PROCESS = 2  /**< This very process (loopback peer) */
};


/**
 * Decide by the rules above whether @a local can reach @a remote.
 *
 * @param [in] local     Local resource.
 * @param [in] remote    Remote resource (from a snapshot or imported text).
 * @param [in] same_host Locality of the peer: PSEL_PEER_REMOTE_HOST (0),
 *                       PSEL_PEER_SAME_HOST (1) or PSEL_PEER_SAME_PROCESS (2);
 *                       any other nonzero value counts as the same host.
 *
 * @return Nonzero if reachable.
 */
int psel_resource_rule_reachable(const psel_resource_t *local,
                                 const psel_resource_t *remote, int same_host);


/**
 * @param [in] tl_name Transport name.
 *
 * @return Nonzero if @a tl_name is an InfiniBand transport (rc/dc/ud, verbs or
 *         mlx5), which rule 4 treats as one fabric.
 */
int psel_resource_tl_is_ib(const char *tl_name);


/**
 * @param [in] resource A resource.
 *
 * @return Nonzero if @a resource is tcp over the loopback interface ("lo"),
 *         which never leaves the host (rule 5).
 */
int psel_resource_is_tcp_loopback(const psel_resource_t *resource);

#endif
