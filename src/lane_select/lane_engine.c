/*
 * Lane selection over resource pairs; see lane_engine.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "lane_engine.h"
#include "text_scan.h"
#include "reachability.h"
#include "resource_table.h"

#include <ucs/datastruct/string_buffer.h>

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* What a pair of resources delivers at the number of endpoints: from the
 * attributes, or measured */
typedef struct psel_pair_perf {
    double latency;    /* [s] */
    double bandwidth;  /* [B/s] */
    int    measured;   /* from params->measured */
} psel_pair_perf_t;

typedef struct psel_lane_selector {
    const char *name;
    /* nonzero if the local resource can serve the role */
    int         (*applies)(const psel_resource_t *rsc);
    /* score of the pair, which delivers @a perf */
    double      (*score)(const psel_resource_t *local,
                         const psel_resource_t *remote,
                         const psel_pair_perf_t *perf);
} psel_lane_selector_t;

/* One selection pass: the caller's limits, the number of endpoints, and
 * whether transports that do not scale to it are left out */
typedef struct psel_lane_pass {
    const psel_lane_select_params_t *params;
    size_t                           num_eps;
    int                              scalable_only;
} psel_lane_pass_t;

/* "transport/device", the name of a lane from this local resource */
static void psel_lane_name(const psel_resource_t *rsc, char *name, size_t max)
{
    snprintf(name, max, "%.31s/%.31s", rsc->tl_name, rsc->dev_name);
}

static double psel_rsc_bandwidth(const psel_resource_t *rsc)
{
    return rsc->bw_dedicated + rsc->bw_shared;
}

/* Each side's latency at its number of endpoints (a job's processes have
 * as many peers each): UCP's ucp_wireup_tl_iface_latency() takes the larger
 * of the peer's packed latency and its own at est_num_eps */
static double psel_pair_latency(const psel_resource_t *local,
                                const psel_resource_t *remote, size_t num_eps)
{
    return ucs_max(psel_resource_latency(local, num_eps),
                   psel_resource_latency(remote, num_eps));
}

/* The slower side's bandwidth; but a transport timed on this host
 * (copy_probe.h: shared memory, tcp over loopback) keeps this host's
 * figure: its peer is on this host,
 * and the peer's own timing of it differs only by noise, which would make
 * two processes' tables differ */
static double psel_pair_bandwidth(const psel_resource_t *local,
                                  const psel_resource_t *remote)
{
    if (local->bw_advertised > 0) {
        return psel_rsc_bandwidth(local);
    }
    return ucs_min(psel_rsc_bandwidth(local), psel_rsc_bandwidth(remote));
}

/* The pair's latency (at @a num_eps endpoints) and bandwidth: measured
 * (params->measured, by the local "transport/device", the peer @a peer and
 * the remote device @a r of it) or from both sides' attributes; @a params
 * may be NULL (attributes). A rail is measured with one endpoint: at N its
 * latency grows as the attributes say it does from 1 to N (m·(N-1) when
 * both ends grow alike: rc's 1 ns per QP) */
static void psel_pair_perf(const psel_lane_select_params_t *params,
                           const psel_resource_t *local,
                           const psel_resource_table_t *peer, unsigned r,
                           size_t num_eps, psel_pair_perf_t *perf)
{
    const psel_resource_t *remote = &peer->resources[r];
    char name[PSEL_LANE_NAME_MAX];
    double latency, bandwidth;

    perf->latency   = psel_pair_latency(local, remote, num_eps);
    perf->bandwidth = psel_pair_bandwidth(local, remote);
    perf->measured  = 0;
    if ((params == NULL) || (params->measured == NULL)) {
        return;
    }
    psel_lane_name(local, name, sizeof(name));
    if (params->measured(params->measured_arg, name, peer, remote,
                         &latency, &bandwidth) &&
        (latency > 0) && (bandwidth > 0)) {
        perf->latency   = latency + perf->latency -
                          psel_pair_latency(local, remote, 1);
        perf->bandwidth = bandwidth;
        perf->measured  = 1;
    }
}

/* A pair that moves data: a bandwidth of 0 (a peer's address or a file
 * may say so) makes every cost of the lane infinite, whatever its score
 * in a role that does not weigh bandwidth (am) */
static int psel_pair_moves_data(const psel_pair_perf_t *perf)
{
    return (perf->bandwidth > 0) && isfinite(perf->bandwidth);
}

static int psel_rsc_connects(const psel_resource_t *rsc)
{
    return !!(rsc->cap_flags & (UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                                UCT_IFACE_FLAG_CONNECT_TO_EP));
}

/* Active messages carry host memory: the MD must access or register it
 * (a resource that states no memory types at all is taken to) */
static int psel_rsc_handles_host(const psel_resource_t *rsc)
{
    uint64_t mem_types = rsc->access_mem_types | rsc->reg_mem_types;

    return ((mem_types | rsc->alloc_mem_types) == 0) ||
           (mem_types & UCS_BIT(UCS_MEMORY_TYPE_HOST));
}

static int psel_am_applies(const psel_resource_t *rsc)
{
    return psel_rsc_connects(rsc) && psel_rsc_handles_host(rsc) &&
           ((rsc->cap_flags & (UCT_IFACE_FLAG_AM_SHORT |
                               UCT_IFACE_FLAG_AM_BCOPY)) ==
            (UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY));
}

/* am: 1e-3 / (lat + o_l + o_r); on a measured pair also the time of a
 * PSEL_LANE_AM_MEASURED_SIZE message on the wire (see lane_engine.h) */
static double psel_am_score(const psel_resource_t *local,
                            const psel_resource_t *remote,
                            const psel_pair_perf_t *perf)
{
    return 1e-3 / (perf->latency + local->overhead + remote->overhead +
                   (perf->measured ?
                    (PSEL_LANE_AM_MEASURED_SIZE / perf->bandwidth) : 0));
}

static int psel_am_bw_applies(const psel_resource_t *rsc)
{
    return psel_rsc_connects(rsc) && psel_rsc_handles_host(rsc) &&
           (rsc->cap_flags & (UCT_IFACE_FLAG_AM_BCOPY |
                              UCT_IFACE_FLAG_AM_ZCOPY));
}

/* am_bw: 1 / (256K/bw + lat + o_l) */
static double psel_am_bw_score(const psel_resource_t *local,
                               const psel_resource_t *remote,
                               const psel_pair_perf_t *perf)
{
    return 1.0 / ((PSEL_LANE_BW_SCORE_SIZE / perf->bandwidth) +
                  perf->latency + local->overhead);
}

/* The memory types a resource's zero-copy operations reach, as UCP counts
 * them (ucp_context_memaccess_tl_bitmap, UCX 1.20): those its MD
 * registers; or, where it needs neither a memory handle nor a remote key,
 * those it accesses (cma and tcp register nothing from UCX 1.20 on) */
static uint64_t psel_rsc_zcopy_mem_types(const psel_resource_t *rsc)
{
    if (rsc->md_flags & UCT_MD_FLAG_REG) {
        return rsc->reg_mem_types;
    } else if (!(rsc->md_flags & (UCT_MD_FLAG_NEED_MEMH |
                                  UCT_MD_FLAG_NEED_RKEY))) {
        return rsc->access_mem_types;
    }
    return 0;
}

/* Can one-sided operations reach a peer's registered buffer over it? A
 * peer's resource from its address has the MD flags alone (REG where it
 * offers zero-copy RMA): the flags decide, the memory types are the local
 * lane's to check */
static int psel_rsc_reaches_registered(const psel_resource_t *rsc)
{
    return (rsc->md_flags & UCT_MD_FLAG_REG) ||
           !(rsc->md_flags & (UCT_MD_FLAG_NEED_MEMH | UCT_MD_FLAG_NEED_RKEY));
}

static int psel_rma_bw_applies(const psel_resource_t *rsc)
{
    return psel_rsc_connects(rsc) &&
           (rsc->cap_flags & (UCT_IFACE_FLAG_GET_ZCOPY |
                              UCT_IFACE_FLAG_PUT_ZCOPY)) &&
           psel_rsc_reaches_registered(rsc);
}

/* rma_bw: 1 / (256K/bw + lat + o_l + reg(256K)) */
static double psel_rma_bw_score(const psel_resource_t *local,
                                const psel_resource_t *remote,
                                const psel_pair_perf_t *perf)
{
    return 1.0 / ((PSEL_LANE_BW_SCORE_SIZE / perf->bandwidth) +
                  perf->latency + local->overhead +
                  ucs_linear_func_apply(local->reg_cost,
                                        PSEL_LANE_BW_SCORE_SIZE));
}

static int psel_amo_applies(const psel_resource_t *rsc)
{
    return psel_rsc_connects(rsc) &&
           ((rsc->atomic64_ops | rsc->atomic64_fops) != 0);
}

/* As UCP's rma lanes (ucp_wireup_add_rma_lanes) to registered memory:
 * put_short, put_bcopy and get_bcopy, on a memory domain that registers
 * the peer's buffers or needs no key. UCP also asks for a pending queue,
 * which every transport with these operations has and ucx_info -d does not
 * print. UCP's further rma lanes to memory that a shared-memory transport
 * allocated (ucp_mem_map with UCP_MEM_MAP_ALLOCATE) are not modelled
 * (docs/decisions.md) */
static int psel_rma_applies(const psel_resource_t *rsc)
{
    const uint64_t flags = UCT_IFACE_FLAG_PUT_SHORT | UCT_IFACE_FLAG_PUT_BCOPY |
                           UCT_IFACE_FLAG_GET_BCOPY;

    return psel_rsc_connects(rsc) && psel_rsc_handles_host(rsc) &&
           ((rsc->cap_flags & flags) == flags) &&
           psel_rsc_reaches_registered(rsc);
}

/* rma: 1e-3 / (lat + o_l + 4K/bw), UCP's score for 4 KiB one-sided
 * operations (ucp_wireup_rma_score_func) */
static double psel_rma_score(const psel_resource_t *local,
                             const psel_resource_t *remote,
                             const psel_pair_perf_t *perf)
{
    return 1e-3 / (perf->latency + local->overhead +
                   (PSEL_LANE_RMA_SCORE_SIZE / perf->bandwidth));
}

static const psel_lane_selector_t psel_lane_selectors[PSEL_LANE_ROLE_LAST] = {
    [PSEL_LANE_ROLE_AM]     = {"am", psel_am_applies, psel_am_score},
    [PSEL_LANE_ROLE_AM_BW]  = {"am_bw", psel_am_bw_applies, psel_am_bw_score},
    [PSEL_LANE_ROLE_RMA_BW] = {"rma_bw", psel_rma_bw_applies,
                               psel_rma_bw_score},
    [PSEL_LANE_ROLE_AMO]    = {"amo", psel_amo_applies, psel_am_score},
    [PSEL_LANE_ROLE_RMA]    = {"rma", psel_rma_applies, psel_rma_score}
};

const char *psel_lane_role_name(psel_lane_role_t role)
{
    return (role < PSEL_LANE_ROLE_LAST) ? psel_lane_selectors[role].name : "?";
}

static int psel_dev_is_host_memory(const psel_resource_t *rsc)
{
    return (rsc->dev_type == UCT_DEVICE_TYPE_SHM) ||
           (rsc->dev_type == UCT_DEVICE_TYPE_SELF);
}

/* One physical device, whatever the transport: rc and ud on "mlx5_0:1"; and
 * every shared-memory or self transport moves data through the same host
 * memory, so two of them are not two rails */
static int psel_same_device(const psel_resource_t *a, const psel_resource_t *b)
{
    if (psel_dev_is_host_memory(a) && psel_dev_is_host_memory(b)) {
        return 1;
    }
    return (a->dev_type == b->dev_type) && !strcmp(a->dev_name, b->dev_name);
}

/* Paths of the device of @a rsc (in @a table, the local or the remote side)
 * already taken by the lanes of @a set (one role, one memory type). */
static unsigned psel_paths_used(const psel_ep_lanes_t *ep,
                                const psel_resource_table_t *table, int remote,
                                const psel_resource_t *rsc,
                                const psel_lane_set_t *set)
{
    unsigned i, used = 0, idx, lane;

    for (i = 0; i < set->count; ++i) {
        lane = set->lanes[i]->index;
        idx  = remote ? ep->info[lane].remote : ep->info[lane].local;
        if (psel_same_device(&table->resources[idx], rsc)) {
            ++used;
        }
    }
    return used;
}

/* Both ends of a new lane must have a free path on their device. */
static int psel_pair_has_paths(const psel_ep_lanes_t *ep,
                               const psel_resource_table_t *local,
                               const psel_resource_t *lrsc,
                               const psel_resource_table_t *remote,
                               const psel_resource_t *rrsc,
                               const psel_lane_set_t *set)
{
    return (psel_paths_used(ep, local, 0, lrsc, set) <
            ucs_max(lrsc->dev_num_paths, 1)) &&
           (psel_paths_used(ep, remote, 1, rrsc, set) <
            ucs_max(rrsc->dev_num_paths, 1));
}

static unsigned psel_md_index(const psel_resource_table_t *local, unsigned idx)
{
    unsigned i;

    for (i = 0; i < idx; ++i) {
        if (!strcmp(local->resources[i].md_name,
                    local->resources[idx].md_name)) {
            return i;
        }
    }
    return idx;
}

/* The per-operation costs of a resource: its own, or UCX's rules for the
 * UCX protosel is built on when it came without them */
static void psel_rsc_op_cost(const psel_resource_t *rsc,
                             psel_op_cost_t cost[PSEL_OP_CLASS_LAST])
{
    psel_resource_t derived;

    if (rsc->op_cost_source != PSEL_OP_COST_NONE) {
        memcpy(cost, rsc->op_cost, sizeof(rsc->op_cost));
        return;
    }
    derived = *rsc;
    psel_resource_op_cost_derive(&derived, NULL);
    memcpy(cost, derived.op_cost, sizeof(derived.op_cost));
}

/* Per class as psel_pair_latency(): each side's operation latency grows
 * with the endpoints as its interface's does (uct_base_iface_estimate_perf
 * copies iface_attr.latency, c and m, and the IB terms add to c only).
 * A measured rail moves every class by @a shift, what the measurement
 * changed of the pair's latency: UCX's per-class terms stay on top of it */
static void psel_lane_fill_op_cost(const psel_resource_t *local,
                                   const psel_resource_t *remote,
                                   size_t num_eps, double shift,
                                   psel_lane_t *lane)
{
    psel_op_cost_t lcost[PSEL_OP_CLASS_LAST], rcost[PSEL_OP_CLASS_LAST];
    unsigned op;

    psel_rsc_op_cost(local, lcost);
    psel_rsc_op_cost(remote, rcost);
    for (op = 0; op < PSEL_OP_CLASS_LAST; ++op) {
        lane->op[op].latency   = ucs_max(lcost[op].latency +
                                         local->latency.m * num_eps,
                                         rcost[op].latency +
                                         remote->latency.m * num_eps) +
                                 shift;
        lane->op[op].send_pre  = lcost[op].send_pre;
        lane->op[op].send_post = lcost[op].send_post;
        lane->op[op].recv      = rcost[op].recv;
    }
    lane->op_valid = 1;
}

static void psel_lane_fill(const psel_lane_select_params_t *params,
                           const psel_resource_table_t *local, unsigned l,
                           const psel_resource_table_t *peer, unsigned r,
                           size_t num_eps, unsigned index, unsigned path,
                           psel_lane_t *lane)
{
    const psel_resource_t *remote = &peer->resources[r];
    const psel_resource_t *rsc = &local->resources[l];
    uint64_t f                 = rsc->cap_flags;
    psel_pair_perf_t perf;

    memset(lane, 0, sizeof(*lane));
    if (rsc->dev_num_paths > 1) {
        /* a device with several paths (RoCE LAG bond, IB LMC): each lane is
         * one path, "rc_mlx5/mlx5_bond_0:1/path1", as UCX says "on path1";
         * a measured rail is the device's, for every path */
        snprintf(lane->name, sizeof(lane->name), "%.24s/%.24s/path%u",
                 rsc->tl_name, rsc->dev_name, path);
    } else {
        psel_lane_name(rsc, lane->name, sizeof(lane->name));
    }
    lane->index         = index;
    lane->md_index      = psel_md_index(local, l);
    lane->caps          = ((f & UCT_IFACE_FLAG_AM_SHORT) ?
                           PSEL_LANE_CAP_AM_SHORT : 0) |
                          ((f & UCT_IFACE_FLAG_AM_BCOPY) ?
                           PSEL_LANE_CAP_AM_BCOPY : 0) |
                          ((f & UCT_IFACE_FLAG_AM_ZCOPY) ?
                           PSEL_LANE_CAP_AM_ZCOPY : 0) |
                          ((f & UCT_IFACE_FLAG_PUT_ZCOPY) ?
                           PSEL_LANE_CAP_PUT_ZCOPY : 0) |
                          ((f & UCT_IFACE_FLAG_GET_ZCOPY) ?
                           PSEL_LANE_CAP_GET_ZCOPY : 0) |
                          ((f & UCT_IFACE_FLAG_PUT_SHORT) ?
                           PSEL_LANE_CAP_PUT_SHORT : 0) |
                          ((f & UCT_IFACE_FLAG_PUT_BCOPY) ?
                           PSEL_LANE_CAP_PUT_BCOPY : 0) |
                          ((f & UCT_IFACE_FLAG_GET_BCOPY) ?
                           PSEL_LANE_CAP_GET_BCOPY : 0) |
                          (psel_amo_applies(rsc) ? PSEL_LANE_CAP_AMO : 0) |
                          ((rsc->md_flags & UCT_MD_FLAG_REG) ?
                           PSEL_LANE_CAP_MEM_REG : 0);
    psel_pair_perf(params, rsc, peer, r, num_eps, &perf);
    lane->latency       = perf.latency;
    lane->bandwidth     = perf.bandwidth;
    lane->overhead_send = rsc->overhead;
    lane->overhead_recv = remote->overhead;
    lane->reg_cost      = (rsc->md_flags & UCT_MD_FLAG_REG) ?
                          rsc->reg_cost : ucs_linear_func_make(0, 0);
    /* each operation's own limits: rndv/get reads with get's sizes and
     * iov entries, rndv/put writes with put's, AMs have theirs */
    lane->am            = rsc->am;
    lane->get           = rsc->get;
    lane->put           = rsc->put;
    psel_lane_fill_op_cost(rsc, remote, num_eps,
                           perf.measured ?
                           (perf.latency -
                            psel_pair_latency(rsc, remote, num_eps)) : 0,
                           lane);
    lane->reg_mem_types = psel_rsc_zcopy_mem_types(rsc);
    lane->access_mem_types = rsc->access_mem_types;
}

/* Find or add the lane for (local l, remote r, path); -1 if full. */
static int psel_lane_get(const psel_lane_select_params_t *params,
                         psel_ep_lanes_t *ep, const psel_resource_table_t *local,
                         unsigned l, const psel_resource_table_t *remote,
                         unsigned r, unsigned path, size_t num_eps)
{
    unsigned i;

    for (i = 0; i < ep->num_lanes; ++i) {
        if ((ep->info[i].local == l) && (ep->info[i].remote == r) &&
            (ep->info[i].path == path)) {
            return i;
        }
    }
    if (ep->num_lanes == PSEL_MAX_LANES) {
        return -1;
    }
    i = ep->num_lanes++;
    memset(&ep->info[i], 0, sizeof(ep->info[i]));
    ep->info[i].local  = l;
    ep->info[i].remote = r;
    ep->info[i].path   = path;
    psel_lane_fill(params, local, l, remote, r, num_eps, i, path,
                   &ep->lanes[i]);
    return i;
}

static int psel_pair_reachable(const psel_lane_select_params_t *params,
                               const psel_resource_table_t *local, unsigned l,
                               const psel_resource_table_t *remote, unsigned r)
{
    if (params->is_reachable != NULL) {
        return params->is_reachable(params->reachable_arg, l, r);
    }
    return psel_resource_rule_reachable(&local->resources[l],
                                        &remote->resources[r],
                                        params->locality);
}

/* Scores within 1e-6 of their sum are equal, as UCP's ucp_score_cmp():
 * c + m·N in floating point must not decide a tie (600 + 1·60 ns against
 * 660 ns) */
static int psel_score_cmp(double a, double b)
{
    return (fabs(a - b) < ((a + b) * 1e-6)) ? 0 : ((a > b) ? 1 : -1);
}

/* Higher score; then higher device priority; then a peer device of the same
 * name (lo to lo rather than lo to eth0) */
static int psel_pair_better(const psel_resource_table_t *local,
                            const psel_resource_table_t *remote, double score,
                            unsigned l, unsigned r, double best_score,
                            unsigned best_l, unsigned best_r)
{
    if (psel_score_cmp(score, best_score) != 0) {
        return score > best_score;
    }
    if (local->resources[l].priority != local->resources[best_l].priority) {
        return local->resources[l].priority > local->resources[best_l].priority;
    }
    return !strcmp(local->resources[l].dev_name, remote->resources[r].dev_name) &&
           strcmp(local->resources[best_l].dev_name,
                  remote->resources[best_r].dev_name);
}

/* Shares within a role are proportional to bandwidth */
static void psel_lane_set_shares(psel_lane_set_t *set)
{
    double total_bw = 0;
    unsigned i;

    for (i = 0; i < set->count; ++i) {
        total_bw += set->lanes[i]->bandwidth;
    }
    for (i = 0; i < set->count; ++i) {
        set->shares[i] = (total_bw > 0) ? set->lanes[i]->bandwidth / total_bw :
                                          1.0 / set->count;
    }
}

/* Can local resource @a l take part in this pass? */
static int psel_pass_uses(const psel_lane_pass_t *pass,
                          const psel_resource_t *lrsc)
{
    return !pass->scalable_only ||
           psel_resource_is_scalable(lrsc, pass->num_eps);
}

/*
 * Choose the lanes of one set: @a role, and for rma_bw one memory type
 * (@a mem_type; UCS_MEMORY_TYPE_LAST for the other roles), whose local MD
 * must register it, as UCX's ucp_wireup_add_rma_bw_lanes() asks per memory
 * type (criteria.reg_mem_types). The set's lanes and shares go to @a set.
 */
static void psel_lanes_select_set(const psel_resource_table_t *local,
                                  const psel_resource_table_t *remote,
                                  const psel_lane_pass_t *pass,
                                  psel_lane_role_t role,
                                  ucs_memory_type_t mem_type,
                                  psel_lane_set_t *set, psel_ep_lanes_t *ep)
{
    const psel_lane_select_params_t *params = pass->params;
    const psel_lane_selector_t *selector    = &psel_lane_selectors[role];
    double score, best, best_bw = 0;
    unsigned l, r, best_l = 0, best_r = 0, path;
    const psel_resource_t *lrsc, *rrsc;
    psel_pair_perf_t perf;
    int lane;

    while (set->count < ucs_min(params->max_lanes[role], PSEL_MAX_LANES)) {
        best = 0;
        for (l = 0; l < local->count; ++l) {
            lrsc = &local->resources[l];
            if (!selector->applies(lrsc) || !psel_pass_uses(pass, lrsc) ||
                ((mem_type < UCS_MEMORY_TYPE_LAST) &&
                 !(psel_rsc_zcopy_mem_types(lrsc) & UCS_BIT(mem_type)))) {
                continue;
            }
            for (r = 0; r < remote->count; ++r) {
                rrsc = &remote->resources[r];
                if (!selector->applies(rrsc) ||
                    !psel_pair_reachable(params, local, l, remote, r) ||
                    !psel_pair_has_paths(ep, local, lrsc, remote, rrsc, set)) {
                    continue;
                }
                psel_pair_perf(params, lrsc, remote, r, pass->num_eps, &perf);
                if (!psel_pair_moves_data(&perf)) {
                    continue;
                }
                score = selector->score(lrsc, rrsc, &perf);
                if ((score > 0) && isfinite(score) &&
                    ((best == 0) || psel_pair_better(local, remote, score, l,
                                                     r, best, best_l,
                                                     best_r))) {
                    best    = score;
                    best_l  = l;
                    best_r  = r;
                    best_bw = perf.bandwidth;
                }
            }
        }

        if ((best == 0) ||
            ((set->count > 0) &&
             (best_bw < set->lanes[0]->bandwidth / params->max_ratio))) {
            break;
        }

        path = psel_paths_used(ep, local, 0, &local->resources[best_l], set);
        lane = psel_lane_get(params, ep, local, best_l, remote, best_r, path,
                             pass->num_eps);
        if (lane < 0) {
            break;
        }
        ep->info[lane].roles      |= UCS_BIT(role);
        ep->info[lane].score[role] = best;
        set->lanes[set->count++]   = &ep->lanes[lane];
    }

    psel_lane_set_shares(set);
}

static void psel_lanes_select_role(const psel_resource_table_t *local,
                                   const psel_resource_table_t *remote,
                                   const psel_lane_pass_t *pass,
                                   psel_lane_role_t role, psel_ep_lanes_t *ep)
{
    ucs_memory_type_t mem_type;

    if (role != PSEL_LANE_ROLE_RMA_BW) {
        psel_lanes_select_set(local, remote, pass, role,
                              UCS_MEMORY_TYPE_LAST, &ep->sets.role[role], ep);
        return;
    }

    /* host memory first: it is the role's set too */
    for (mem_type = UCS_MEMORY_TYPE_HOST; mem_type < UCS_MEMORY_TYPE_LAST;
         ++mem_type) {
        psel_lanes_select_set(local, remote, pass, role, mem_type,
                              &ep->sets.rma_bw_mem[mem_type], ep);
    }
    ep->sets.role[role] = ep->sets.rma_bw_mem[UCS_MEMORY_TYPE_HOST];
}

/*
 * The copy engines between host memory and each other memory type, from the
 * local resources, as UCX's memory-type endpoint (ucp_worker_mem_type_eps_
 * create) picks them: accelerator transports whose MD accesses that memory
 * type. The short engine (pack/unpack: put/get_short) has the lowest latency
 * + overhead, the zcopy engine (staging: put/get_zcopy) the best bandwidth
 * score at 256 KiB.
 */
static void psel_lanes_select_copy(const psel_resource_table_t *local,
                                   psel_lane_sets_t *sets)
{
    const uint64_t short_caps = UCT_IFACE_FLAG_PUT_SHORT |
                                UCT_IFACE_FLAG_GET_SHORT;
    const uint64_t zcopy_caps = UCT_IFACE_FLAG_PUT_ZCOPY |
                                UCT_IFACE_FLAG_GET_ZCOPY;
    double short_best[UCS_MEMORY_TYPE_LAST] = {0};
    double zcopy_best[UCS_MEMORY_TYPE_LAST] = {0};
    const psel_resource_t *rsc;
    ucs_memory_type_t mt;
    double bw, lat;
    unsigned l;

    for (l = 0; l < local->count; ++l) {
        rsc = &local->resources[l];
        bw  = psel_rsc_bandwidth(rsc);
        lat = rsc->latency.c + rsc->overhead;
        if ((rsc->dev_type != UCT_DEVICE_TYPE_ACC) || (bw <= 0)) {
            continue;
        }
        for (mt = UCS_MEMORY_TYPE_HOST + 1; mt < UCS_MEMORY_TYPE_LAST; ++mt) {
            if (!(rsc->access_mem_types & UCS_BIT(mt))) {
                continue;
            }
            if ((rsc->cap_flags & short_caps) &&
                ((short_best[mt] == 0) || (1.0 / lat > short_best[mt]))) {
                short_best[mt] = (lat > 0) ? 1.0 / lat : HUGE_VAL;
                psel_lane_name(rsc, sets->copy_short[mt].name,
                               PSEL_LANE_NAME_MAX);
                sets->copy_short[mt].time = ucs_linear_func_make(lat, 1.0 / bw);
            }
            if ((rsc->cap_flags & zcopy_caps) &&
                (1.0 / (PSEL_LANE_BW_SCORE_SIZE / bw + lat) > zcopy_best[mt])) {
                zcopy_best[mt] = 1.0 / (PSEL_LANE_BW_SCORE_SIZE / bw + lat);
                psel_lane_name(rsc, sets->copy_zcopy[mt].name,
                               PSEL_LANE_NAME_MAX);
                sets->copy_zcopy[mt].time = ucs_linear_func_make(lat, 1.0 / bw);
            }
        }
    }
}

uint64_t psel_lane_sets_mem_types(const psel_lane_sets_t *sets)
{
    uint64_t mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    ucs_memory_type_t mt;

    for (mt = UCS_MEMORY_TYPE_HOST + 1; mt < UCS_MEMORY_TYPE_LAST; ++mt) {
        if ((sets->rma_bw_mem[mt].count > 0) ||
            (sets->copy_short[mt].name[0] != '\0') ||
            (sets->copy_zcopy[mt].name[0] != '\0')) {
            mem_types |= UCS_BIT(mt);
        }
    }
    return mem_types;
}

/* As UCX: the am lane is the first am_bw lane when it can serve the role,
 * so eager messages stay on one lane; extra am_bw lanes come by score. */
static void psel_lanes_am_bw_from_am(const psel_resource_table_t *local,
                                     const psel_resource_table_t *remote,
                                     const psel_lane_pass_t *pass,
                                     psel_ep_lanes_t *ep)
{
    const psel_lane_selector_t *selector = &psel_lane_selectors[PSEL_LANE_ROLE_AM_BW];
    psel_lane_set_t *am                  = &ep->sets.role[PSEL_LANE_ROLE_AM];
    psel_lane_set_t *set                 = &ep->sets.role[PSEL_LANE_ROLE_AM_BW];
    const psel_resource_t *lrsc, *rrsc;
    psel_pair_perf_t perf;
    unsigned lane;
    double score;

    if ((am->count == 0) ||
        (pass->params->max_lanes[PSEL_LANE_ROLE_AM_BW] == 0)) {
        return;
    }
    lane = am->lanes[0]->index;
    lrsc = &local->resources[ep->info[lane].local];
    rrsc = &remote->resources[ep->info[lane].remote];
    if (!selector->applies(lrsc) || !selector->applies(rrsc)) {
        return;
    }
    psel_pair_perf(pass->params, lrsc, remote, ep->info[lane].remote,
                   pass->num_eps, &perf);
    score = selector->score(lrsc, rrsc, &perf);
    if (!psel_pair_moves_data(&perf) || !(score > 0) || !isfinite(score)) {
        return; /* am_bw lanes come by score, as for any role */
    }
    ep->info[lane].roles                      |= UCS_BIT(PSEL_LANE_ROLE_AM_BW);
    ep->info[lane].score[PSEL_LANE_ROLE_AM_BW] = score;
    set->lanes[set->count++]                   = &ep->lanes[lane];
}

static void psel_lane_set_rebase(psel_lane_set_t *set, psel_ep_lanes_t *ep)
{
    unsigned i;

    for (i = 0; i < set->count; ++i) {
        set->lanes[i] = &ep->lanes[set->lanes[i]->index];
    }
}

static void psel_lanes_select_pass(const psel_resource_table_t *local,
                                   const psel_resource_table_t *remote,
                                   const psel_lane_pass_t *pass,
                                   psel_ep_lanes_t *result)
{
    unsigned role;

    memset(result, 0, sizeof(*result));
    for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
        if (role == PSEL_LANE_ROLE_AM_BW) {
            psel_lanes_am_bw_from_am(local, remote, pass, result);
        }
        psel_lanes_select_role(local, remote, pass, role, result);
    }
    result->num_eps = pass->num_eps;
}

size_t psel_lane_num_eps(const psel_lane_select_params_t *params)
{
    return (params->num_eps == 0) ? 1 : params->num_eps;
}

int psel_resource_is_scalable(const psel_resource_t *resource, size_t num_eps)
{
    return resource->max_num_eps >= num_eps;
}

/* UCP needs an am lane whenever the endpoint sends messages; a pass over
 * the scalable transports only that finds none fails (as
 * ucp_wireup_search_lanes() does) */
static int psel_pass_complete(const psel_lane_select_params_t *params,
                              const psel_ep_lanes_t *ep)
{
    return (ep->num_lanes > 0) &&
           ((params->max_lanes[PSEL_LANE_ROLE_AM] == 0) ||
            (ep->sets.role[PSEL_LANE_ROLE_AM].count > 0));
}

ucs_status_t psel_lanes_select(const psel_resource_table_t *local,
                               const psel_resource_table_t *remote,
                               const psel_lane_select_params_t *params,
                               psel_ep_lanes_t *ep)
{
    psel_lane_pass_t pass = {params, psel_lane_num_eps(params), 0};
    psel_ep_lanes_t result;
    unsigned role, l, unscalable = 0;

    for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
        if (params->max_lanes[role] > 0) {
            break;
        }
    }
    if (role == PSEL_LANE_ROLE_LAST) {
        ucs_error("no lane requested: every role has a limit of 0 lanes");
        return UCS_ERR_INVALID_PARAM;
    }

    /* As UCP (ucp_wireup_select_lanes): first the transports whose max eps
     * covers the estimated number of endpoints; if they cannot make the
     * endpoint, every transport, on score alone */
    for (l = 0; l < local->count; ++l) {
        unscalable += !psel_resource_is_scalable(&local->resources[l],
                                                 pass.num_eps);
    }
    if (unscalable > 0) {
        pass.scalable_only = 1;
        psel_lanes_select_pass(local, remote, &pass, &result);
        result.unscalable_left_out = unscalable;
        if (!psel_pass_complete(params, &result)) {
            ucs_debug("the transports that scale to %zu endpoints make no "
                      "endpoint; selecting among all", pass.num_eps);
            pass.scalable_only = 0;
        }
    }
    if (!pass.scalable_only) {
        psel_lanes_select_pass(local, remote, &pass, &result);
        result.unscalable_fallback = (unscalable > 0);
    }
    psel_lanes_select_copy(local, &result.sets);
    if (result.num_lanes == 0) {
        ucs_error("no lane: none of the %u local resources reaches any of "
                  "the peer's %u", local->count, remote->count);
        return UCS_ERR_UNREACHABLE;
    }

    /* the sets point into *ep, not into the local copy */
    psel_ep_lanes_copy(ep, &result);
    return UCS_OK;
}

void psel_ep_lanes_copy(psel_ep_lanes_t *dst, const psel_ep_lanes_t *src)
{
    unsigned i;

    *dst = *src;
    for (i = 0; i < PSEL_LANE_ROLE_LAST; ++i) {
        psel_lane_set_rebase(&dst->sets.role[i], dst);
    }
    for (i = 0; i < UCS_MEMORY_TYPE_LAST; ++i) {
        psel_lane_set_rebase(&dst->sets.rma_bw_mem[i], dst);
    }
}

ucs_status_t psel_lanes_from_layout(const psel_resource_table_t *local,
                                    const psel_resource_table_t *remote,
                                    const psel_lane_layout_t *layout,
                                    const psel_lane_select_params_t *params,
                                    psel_ep_lanes_t *ep)
{
    size_t num_eps = ucs_max(layout->num_eps, 1);
    const psel_lane_set_t *rma_bw;
    ucs_memory_type_t mem_type;
    psel_lane_set_t *set;
    unsigned i, role, lane;

    if (layout->num_lanes > PSEL_MAX_LANES) {
        return UCS_ERR_INVALID_PARAM;
    }
    memset(ep, 0, sizeof(*ep));
    for (i = 0; i < layout->num_lanes; ++i) {
        if ((layout->local[i] >= local->count) ||
            (layout->remote[i] >= remote->count)) {
            return UCS_ERR_INVALID_PARAM;
        }
        ep->info[i].local  = layout->local[i];
        ep->info[i].remote = layout->remote[i];
        ep->info[i].path   = layout->path[i];
        psel_lane_fill(params, local, layout->local[i], remote,
                       layout->remote[i], num_eps, i, layout->path[i],
                       &ep->lanes[i]);
    }
    ep->num_lanes = layout->num_lanes;
    ep->num_eps   = num_eps;

    for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
        set = &ep->sets.role[role];
        if (layout->role_count[role] > PSEL_MAX_LANES) {
            return UCS_ERR_INVALID_PARAM;
        }
        for (i = 0; i < layout->role_count[role]; ++i) {
            lane = layout->role_lanes[role][i];
            if (lane >= ep->num_lanes) {
                return UCS_ERR_INVALID_PARAM;
            }
            ep->info[lane].roles   |= UCS_BIT(role);
            set->lanes[set->count++] = &ep->lanes[lane];
        }
        psel_lane_set_shares(set);
    }

    /* per memory type, the rma_bw lanes whose memory domain registers it;
     * host memory's are the role's */
    rma_bw = &ep->sets.role[PSEL_LANE_ROLE_RMA_BW];
    for (mem_type = 0; mem_type < UCS_MEMORY_TYPE_LAST; ++mem_type) {
        set = &ep->sets.rma_bw_mem[mem_type];
        for (i = 0; i < rma_bw->count; ++i) {
            if ((mem_type == UCS_MEMORY_TYPE_HOST) ||
                (rma_bw->lanes[i]->reg_mem_types & UCS_BIT(mem_type))) {
                set->lanes[set->count++] = rma_bw->lanes[i];
            }
        }
        psel_lane_set_shares(set);
    }
    return UCS_OK;
}

static void psel_ep_lanes_print_in_c_locale(FILE *stream,
                                            const psel_ep_lanes_t *ep)
{
    char roles_buf[PSEL_MAX_LANES][128];
    const psel_lane_t *lane;
    unsigned i, role;
    int width = 40;

    /* the roles column is as wide as its longest entry */
    for (i = 0; i < ep->num_lanes; ++i) {
        UCS_STRING_BUFFER_FIXED(roles, roles_buf[i], sizeof(roles_buf[i]));

        for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
            if (ep->info[i].roles & UCS_BIT(role)) {
                ucs_string_buffer_appendf(&roles, "%s(%.3g) ",
                                          psel_lane_role_name(role),
                                          ep->info[i].score[role]);
            }
        }
        ucs_string_buffer_rtrim(&roles, " ");
        width = ucs_max(width, (int)strlen(roles_buf[i]));
    }

    fprintf(stream, "#\n# %4s  %-22s %-*s %9s %10s %9s\n", "lane",
            "transport/device", width, "roles (score)", "latency",
            "bandwidth", "overhead");
    for (i = 0; i < ep->num_lanes; ++i) {
        lane = &ep->lanes[i];
        fprintf(stream, "# %4u  %-22s %-*s %6.0f ns %5.0f MB/s %6.0f ns\n",
                i, lane->name, width, roles_buf[i], lane->latency * 1e9,
                lane->bandwidth / UCS_MBYTE, lane->overhead_send * 1e9);
    }
    fprintf(stream, "#\n");
}

/* numbers with '.' whatever LC_NUMERIC the application set */
void psel_ep_lanes_print(FILE *stream, const psel_ep_lanes_t *ep)
{
    psel_text_locale_t saved = psel_text_c_locale_enter();

    psel_ep_lanes_print_in_c_locale(stream, ep);
    psel_text_c_locale_leave(saved);
}

/* Best score of local resource @a l for @a role over the reachable peer
 * resources, at the pass's number of endpoints; 0 if none */
static double psel_candidate_score(const psel_resource_table_t *local,
                                   unsigned l,
                                   const psel_resource_table_t *remote,
                                   const psel_lane_select_params_t *params,
                                   psel_lane_role_t role, size_t num_eps,
                                   unsigned *best_r)
{
    const psel_lane_selector_t *selector = &psel_lane_selectors[role];
    psel_pair_perf_t perf;
    double score, best = 0;
    unsigned r;

    if (!selector->applies(&local->resources[l])) {
        return 0;
    }
    for (r = 0; r < remote->count; ++r) {
        if (!selector->applies(&remote->resources[r]) ||
            !psel_pair_reachable(params, local, l, remote, r)) {
            continue;
        }
        psel_pair_perf(params, &local->resources[l], remote, r, num_eps,
                       &perf);
        if (!psel_pair_moves_data(&perf)) {
            continue;
        }
        score = selector->score(&local->resources[l], &remote->resources[r],
                                &perf);
        if (isfinite(score) && (score > best)) {
            best    = score;
            *best_r = r;
        }
    }
    return best;
}

static int psel_ep_uses_local(const psel_ep_lanes_t *ep, unsigned l,
                              psel_lane_role_t role)
{
    unsigned i;

    for (i = 0; i < ep->num_lanes; ++i) {
        if ((ep->info[i].local == l) && (ep->info[i].roles & UCS_BIT(role))) {
            return 1;
        }
    }
    return 0;
}

#define PSEL_EXPLAIN_MAX_CANDIDATES 8

/* Does (score a, index la) come before (b, lb): higher score, then order */
static int psel_candidate_before(double a, unsigned la, double b, unsigned lb)
{
    return (a > b) || ((a == b) && (la < lb));
}

static void
psel_lanes_print_candidates_in_c_locale(FILE *stream,
                                        const psel_resource_table_t *local,
                                        const psel_resource_table_t *remote,
                                        const psel_lane_select_params_t *params,
                                        const psel_ep_lanes_t *ep)
{
    size_t num_eps = ep->num_eps ? ep->num_eps : 1;
    double score, best, last = INFINITY;
    unsigned role, l, j, r = 0, best_l, last_l = 0;
    const psel_resource_t *rsc;
    char name[PSEL_LANE_NAME_MAX], eps[32];

    fprintf(stream, "# %zu endpoint%s per process (UCX_PSEL_NUM_EPS, "
            "--peers): latency at %zu endpoints; as UCP, transports whose "
            "max eps\n# is below it are left out while the others can make "
            "the endpoint\n", num_eps, (num_eps == 1) ? "" : "s", num_eps);
    if (ep->unscalable_fallback) {
        fprintf(stream, "# no am lane among the transports that scale to "
                "%zu endpoints: all transports weighed on score alone\n",
                num_eps);
    }
    fprintf(stream, "# %-6s   %-22s %10s %10s  %s\n", "role", "candidate",
            "score", "latency", "why");
    for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
        if (params->max_lanes[role] == 0) {
            continue;
        }
        /* the best candidates in order: each round the best after the last */
        last = INFINITY;
        for (j = 0; j < PSEL_EXPLAIN_MAX_CANDIDATES; ++j) {
            best   = 0;
            best_l = local->count;
            for (l = 0; l < local->count; ++l) {
                score = psel_candidate_score(local, l, remote, params, role,
                                             num_eps, &r);
                if ((score > 0) &&
                    ((j == 0) ||
                     psel_candidate_before(last, last_l, score, l)) &&
                    ((best_l == local->count) ||
                     psel_candidate_before(score, l, best, best_l))) {
                    best   = score;
                    best_l = l;
                }
            }
            if (best_l == local->count) {
                break;
            }
            last   = best;
            last_l = best_l;
            rsc    = &local->resources[best_l];
            psel_lane_name(rsc, name, sizeof(name));
            fprintf(stream, "# %-6s %c %-22s %10.4g %7.0f ns",
                    psel_lane_role_name(role),
                    psel_ep_uses_local(ep, best_l, role) ? '*' : ' ', name,
                    best, psel_resource_latency(rsc, num_eps) * 1e9);
            if (!psel_resource_is_scalable(rsc, num_eps)) {
                fprintf(stream, "  max eps %s < %zu: %s",
                        psel_size_or_inf_str(rsc->max_num_eps, eps,
                                             sizeof(eps)),
                        num_eps, ep->unscalable_fallback ?
                        "weighed, nothing that scales makes the endpoint" :
                        "left out");
            } else if (rsc->latency.m > 0) {
                fprintf(stream, "  latency %.0f + %.3g x %zu ns",
                        rsc->latency.c * 1e9, rsc->latency.m * 1e9, num_eps);
            }
            fputs("\n", stream);
        }
    }
    fprintf(stream, "#\n");
}

/* numbers with '.' whatever LC_NUMERIC the application set */
void psel_lanes_print_candidates(FILE *stream,
                                 const psel_resource_table_t *local,
                                 const psel_resource_table_t *remote,
                                 const psel_lane_select_params_t *params,
                                 const psel_ep_lanes_t *ep)
{
    psel_text_locale_t saved = psel_text_c_locale_enter();

    psel_lanes_print_candidates_in_c_locale(stream, local, remote, params, ep);
    psel_text_c_locale_leave(saved);
}
