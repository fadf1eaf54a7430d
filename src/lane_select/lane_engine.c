/*
 * Lane selection over resource pairs; see lane_engine.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "lane_engine.h"
#include "reachability.h"

#include <ucs/datastruct/string_buffer.h>

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct psel_lane_selector {
    const char *name;
    /* nonzero if the local resource can serve the role */
    int         (*applies)(const psel_resource_t *rsc);
    double      (*score)(const psel_resource_t *local,
                         const psel_resource_t *remote);
} psel_lane_selector_t;

static double psel_rsc_bandwidth(const psel_resource_t *rsc)
{
    return rsc->bw_dedicated + rsc->bw_shared;
}

static double psel_pair_latency(const psel_resource_t *local,
                                const psel_resource_t *remote)
{
    return ucs_max(local->latency.c, remote->latency.c);
}

static double psel_pair_bandwidth(const psel_resource_t *local,
                                  const psel_resource_t *remote)
{
    return ucs_min(psel_rsc_bandwidth(local), psel_rsc_bandwidth(remote));
}

static int psel_rsc_connects(const psel_resource_t *rsc)
{
    return !!(rsc->cap_flags & (UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                                UCT_IFACE_FLAG_CONNECT_TO_EP));
}

static int psel_am_applies(const psel_resource_t *rsc)
{
    return psel_rsc_connects(rsc) &&
           ((rsc->cap_flags & (UCT_IFACE_FLAG_AM_SHORT |
                               UCT_IFACE_FLAG_AM_BCOPY)) ==
            (UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY));
}

/* am: 1e-3 / (lat + o_l + o_r) */
static double psel_am_score(const psel_resource_t *local,
                            const psel_resource_t *remote)
{
    return 1e-3 / (psel_pair_latency(local, remote) + local->overhead +
                   remote->overhead);
}

static int psel_am_bw_applies(const psel_resource_t *rsc)
{
    return psel_rsc_connects(rsc) &&
           (rsc->cap_flags & (UCT_IFACE_FLAG_AM_BCOPY |
                              UCT_IFACE_FLAG_AM_ZCOPY));
}

/* am_bw: 1 / (256K/bw + lat + o_l) */
static double psel_am_bw_score(const psel_resource_t *local,
                               const psel_resource_t *remote)
{
    return 1.0 / ((PSEL_LANE_BW_SCORE_SIZE /
                   psel_pair_bandwidth(local, remote)) +
                  psel_pair_latency(local, remote) + local->overhead);
}

static int psel_rma_bw_applies(const psel_resource_t *rsc)
{
    return psel_rsc_connects(rsc) &&
           (rsc->cap_flags & (UCT_IFACE_FLAG_GET_ZCOPY |
                              UCT_IFACE_FLAG_PUT_ZCOPY)) &&
           (rsc->md_flags & UCT_MD_FLAG_REG);
}

/* rma_bw: 1 / (256K/bw + lat + o_l + reg(256K)) */
static double psel_rma_bw_score(const psel_resource_t *local,
                                const psel_resource_t *remote)
{
    return 1.0 / ((PSEL_LANE_BW_SCORE_SIZE /
                   psel_pair_bandwidth(local, remote)) +
                  psel_pair_latency(local, remote) + local->overhead +
                  ucs_linear_func_apply(local->reg_cost,
                                        PSEL_LANE_BW_SCORE_SIZE));
}

static int psel_amo_applies(const psel_resource_t *rsc)
{
    return psel_rsc_connects(rsc) &&
           ((rsc->atomic64_ops | rsc->atomic64_fops) != 0);
}

static const psel_lane_selector_t psel_lane_selectors[PSEL_LANE_ROLE_LAST] = {
    [PSEL_LANE_ROLE_AM]     = {"am", psel_am_applies, psel_am_score},
    [PSEL_LANE_ROLE_AM_BW]  = {"am_bw", psel_am_bw_applies, psel_am_bw_score},
    [PSEL_LANE_ROLE_RMA_BW] = {"rma_bw", psel_rma_bw_applies,
                               psel_rma_bw_score},
    [PSEL_LANE_ROLE_AMO]    = {"amo", psel_amo_applies, psel_am_score}
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
 * already taken by lanes of @a role. */
static unsigned psel_paths_used(const psel_ep_lanes_t *ep,
                                const psel_resource_table_t *table, int remote,
                                const psel_resource_t *rsc,
                                psel_lane_role_t role)
{
    unsigned i, used = 0, idx;

    for (i = 0; i < ep->num_lanes; ++i) {
        idx = remote ? ep->info[i].remote : ep->info[i].local;
        if ((ep->info[i].roles & UCS_BIT(role)) &&
            psel_same_device(&table->resources[idx], rsc)) {
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
                               psel_lane_role_t role)
{
    return (psel_paths_used(ep, local, 0, lrsc, role) <
            ucs_max(lrsc->dev_num_paths, 1)) &&
           (psel_paths_used(ep, remote, 1, rrsc, role) <
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

static void psel_lane_fill(const psel_resource_table_t *local, unsigned l,
                           const psel_resource_t *remote, unsigned index,
                           psel_lane_t *lane)
{
    const psel_resource_t *rsc = &local->resources[l];
    uint64_t f                 = rsc->cap_flags;

    memset(lane, 0, sizeof(*lane));
    snprintf(lane->name, sizeof(lane->name), "%.31s/%.31s", rsc->tl_name,
             rsc->dev_name);
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
                          (psel_amo_applies(rsc) ? PSEL_LANE_CAP_AMO : 0) |
                          ((rsc->md_flags & UCT_MD_FLAG_REG) ?
                           PSEL_LANE_CAP_MEM_REG : 0);
    lane->latency       = psel_pair_latency(rsc, remote);
    lane->bandwidth     = psel_pair_bandwidth(rsc, remote);
    lane->overhead_send = rsc->overhead;
    lane->overhead_recv = remote->overhead;
    lane->reg_cost      = (rsc->md_flags & UCT_MD_FLAG_REG) ?
                          rsc->reg_cost : ucs_linear_func_make(0, 0);
    lane->am_max_short  = rsc->am.max_short;
    lane->am_max_bcopy  = rsc->am.max_bcopy;
    lane->am_max_zcopy  = rsc->am.max_zcopy;
    lane->am_min_zcopy  = rsc->am.min_zcopy;
    if (f & UCT_IFACE_FLAG_GET_ZCOPY) {
        lane->rma_max_zcopy = rsc->get.max_zcopy;
        lane->rma_min_zcopy = rsc->get.min_zcopy;
        lane->zcopy_align   = rsc->get.opt_zcopy_align;
    } else {
        lane->rma_max_zcopy = rsc->put.max_zcopy;
        lane->rma_min_zcopy = rsc->put.min_zcopy;
        lane->zcopy_align   = rsc->put.opt_zcopy_align;
    }
    lane->max_iov       = rsc->am.max_iov;
    lane->reg_mem_types = rsc->reg_mem_types;
}

/* Find or add the lane for (local l, remote r, path); -1 if full. */
static int psel_lane_get(psel_ep_lanes_t *ep, const psel_resource_table_t *local,
                         unsigned l, const psel_resource_table_t *remote,
                         unsigned r, unsigned path)
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
    psel_lane_fill(local, l, &remote->resources[r], i, &ep->lanes[i]);
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

/* Higher score; then higher device priority; then a peer device of the same
 * name (lo to lo rather than lo to eth0) */
static int psel_pair_better(const psel_resource_table_t *local,
                            const psel_resource_table_t *remote, double score,
                            unsigned l, unsigned r, double best_score,
                            unsigned best_l, unsigned best_r)
{
    if (score != best_score) {
        return score > best_score;
    }
    if (local->resources[l].priority != local->resources[best_l].priority) {
        return local->resources[l].priority > local->resources[best_l].priority;
    }
    return !strcmp(local->resources[l].dev_name, remote->resources[r].dev_name) &&
           strcmp(local->resources[best_l].dev_name,
                  remote->resources[best_r].dev_name);
}

static void psel_lanes_select_role(const psel_resource_table_t *local,
                                   const psel_resource_table_t *remote,
                                   const psel_lane_select_params_t *params,
                                   psel_lane_role_t role, psel_ep_lanes_t *ep)
{
    const psel_lane_selector_t *selector = &psel_lane_selectors[role];
    psel_lane_set_t *set                 = &ep->sets.role[role];
    double score, best, total_bw = 0;
    unsigned l, r, best_l = 0, best_r = 0, path, i;
    const psel_resource_t *lrsc, *rrsc;
    int lane;

    while (set->count < ucs_min(params->max_lanes[role], PSEL_MAX_LANES)) {
        best = 0;
        for (l = 0; l < local->count; ++l) {
            lrsc = &local->resources[l];
            if (!selector->applies(lrsc)) {
                continue;
            }
            for (r = 0; r < remote->count; ++r) {
                rrsc = &remote->resources[r];
                if (!selector->applies(rrsc) ||
                    !psel_pair_reachable(params, local, l, remote, r) ||
                    !psel_pair_has_paths(ep, local, lrsc, remote, rrsc,
                                         role)) {
                    continue;
                }
                score = selector->score(lrsc, rrsc);
                if ((score > 0) && isfinite(score) &&
                    ((best == 0) || psel_pair_better(local, remote, score, l,
                                                     r, best, best_l,
                                                     best_r))) {
                    best   = score;
                    best_l = l;
                    best_r = r;
                }
            }
        }

        if ((best == 0) ||
            ((set->count > 0) &&
             (psel_pair_bandwidth(&local->resources[best_l],
                                  &remote->resources[best_r]) <
              set->lanes[0]->bandwidth / params->max_ratio))) {
            break;
        }

        path = psel_paths_used(ep, local, 0, &local->resources[best_l], role);
        lane = psel_lane_get(ep, local, best_l, remote, best_r, path);
        if (lane < 0) {
            break;
        }
        ep->info[lane].roles      |= UCS_BIT(role);
        ep->info[lane].score[role] = best;
        set->lanes[set->count++]   = &ep->lanes[lane];
    }

    for (i = 0; i < set->count; ++i) {
        total_bw += set->lanes[i]->bandwidth;
    }
    for (i = 0; i < set->count; ++i) {
        set->shares[i] = (total_bw > 0) ? set->lanes[i]->bandwidth / total_bw :
                                          1.0 / set->count;
    }
}

/* As UCX: the am lane is the first am_bw lane when it can serve the role,
 * so eager messages stay on one lane; extra am_bw lanes come by score. */
static void psel_lanes_am_bw_from_am(const psel_resource_table_t *local,
                                     const psel_resource_table_t *remote,
                                     const psel_lane_select_params_t *params,
                                     psel_ep_lanes_t *ep)
{
    const psel_lane_selector_t *selector = &psel_lane_selectors[PSEL_LANE_ROLE_AM_BW];
    psel_lane_set_t *am                  = &ep->sets.role[PSEL_LANE_ROLE_AM];
    psel_lane_set_t *set                 = &ep->sets.role[PSEL_LANE_ROLE_AM_BW];
    const psel_resource_t *lrsc, *rrsc;
    unsigned lane;

    if ((am->count == 0) || (params->max_lanes[PSEL_LANE_ROLE_AM_BW] == 0)) {
        return;
    }
    lane = am->lanes[0]->index;
    lrsc = &local->resources[ep->info[lane].local];
    rrsc = &remote->resources[ep->info[lane].remote];
    if (!selector->applies(lrsc) || !selector->applies(rrsc)) {
        return;
    }
    ep->info[lane].roles                      |= UCS_BIT(PSEL_LANE_ROLE_AM_BW);
    ep->info[lane].score[PSEL_LANE_ROLE_AM_BW] = selector->score(lrsc, rrsc);
    set->lanes[set->count++]                   = &ep->lanes[lane];
}

ucs_status_t psel_lanes_select(const psel_resource_table_t *local,
                               const psel_resource_table_t *remote,
                               const psel_lane_select_params_t *params,
                               psel_ep_lanes_t *ep)
{
    psel_ep_lanes_t result;
    unsigned role;

    for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
        if (params->max_lanes[role] > 0) {
            break;
        }
    }
    if (role == PSEL_LANE_ROLE_LAST) {
        ucs_error("no lane requested: every role has a limit of 0 lanes");
        return UCS_ERR_INVALID_PARAM;
    }

    memset(&result, 0, sizeof(result));
    for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
        if (role == PSEL_LANE_ROLE_AM_BW) {
            psel_lanes_am_bw_from_am(local, remote, params, &result);
        }
        psel_lanes_select_role(local, remote, params, role, &result);
    }
    if (result.num_lanes == 0) {
        ucs_error("no lane: none of the %u local resources reaches any of "
                  "the peer's %u", local->count, remote->count);
        return UCS_ERR_UNREACHABLE;
    }

    *ep = result;
    /* the sets point into *ep, not into the local copy */
    for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
        unsigned i;
        for (i = 0; i < ep->sets.role[role].count; ++i) {
            ep->sets.role[role].lanes[i] =
                    &ep->lanes[result.sets.role[role].lanes[i]->index];
        }
    }
    return UCS_OK;
}

void psel_ep_lanes_print(FILE *stream, const psel_ep_lanes_t *ep)
{
    const psel_lane_t *lane;
    char roles_buf[128];
    unsigned i, role;
    UCS_STRING_BUFFER_FIXED(roles, roles_buf, sizeof(roles_buf));

    fprintf(stream, "#\n# %4s  %-22s %-40s %9s %10s %9s\n", "lane",
            "transport/device", "roles (score)", "latency", "bandwidth",
            "overhead");
    for (i = 0; i < ep->num_lanes; ++i) {
        lane = &ep->lanes[i];
        ucs_string_buffer_reset(&roles);
        for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
            if (ep->info[i].roles & UCS_BIT(role)) {
                ucs_string_buffer_appendf(&roles, "%s(%.3g) ",
                                          psel_lane_role_name(role),
                                          ep->info[i].score[role]);
            }
        }
        ucs_string_buffer_rtrim(&roles, " ");
        fprintf(stream, "# %4u  %-22s %-40s %6.0f ns %5.0f MB/s %6.0f ns\n",
                i, lane->name, ucs_string_buffer_cstr(&roles),
                lane->latency * 1e9,
                lane->bandwidth / UCS_MBYTE, lane->overhead_send * 1e9);
    }
    fprintf(stream, "#\n");
}
