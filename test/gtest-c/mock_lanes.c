#include "mock_lanes.h"

#include <ucs/memory/memory_type.h>
#include <ucs/sys/math.h>
#include <stdio.h>
#include <string.h>

psel_lane_t *psel_mock_ep_add_lane(psel_mock_ep_t *ep, const char *name,
                                   uint32_t caps, unsigned role_mask,
                                   double latency, double bandwidth,
                                   double overhead)
{
    psel_lane_t *lane = &ep->lanes[ep->num_lanes];
    psel_lane_set_t *set;
    unsigned role, i;

    memset(lane, 0, sizeof(*lane));
    snprintf(lane->name, sizeof(lane->name), "%s", name);
    lane->index         = ep->num_lanes;
    lane->md_index      = ep->num_lanes++;
    lane->caps          = caps;
    lane->latency       = latency;
    lane->bandwidth     = bandwidth;
    lane->overhead_send = overhead;
    lane->overhead_recv = overhead;
    lane->reg_cost      = ucs_linear_func_make(0, 0);
    lane->am.max_short        = 128;
    lane->am.max_bcopy        = 8192;
    lane->am.max_zcopy        = 65536;
    lane->am.min_zcopy        = 0;
    lane->am.opt_zcopy_align  = 1;
    lane->am.max_iov          = 8;
    lane->get.max_zcopy       = SIZE_MAX;
    lane->get.opt_zcopy_align = 1;
    lane->get.max_iov         = 8;
    lane->put                 = lane->get;
    lane->reg_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);

    for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
        if (!(role_mask & UCS_BIT(role))) {
            continue;
        }
        set                    = &ep->sets.role[role];
        set->lanes[set->count] = lane;
        ++set->count;
        for (i = 0; i < set->count; ++i) {
            set->shares[i] = 1.0 / set->count;
        }
    }
    return lane;
}

void psel_mock_ep_shm(psel_mock_ep_t *ep)
{
    psel_lane_t *lane;

    memset(ep, 0, sizeof(*ep));
    lane = psel_mock_ep_add_lane(ep, "posix/memory",
                                 PSEL_LANE_CAP_AM_SHORT |
                                 PSEL_LANE_CAP_AM_BCOPY |
                                 PSEL_LANE_CAP_PUT_SHORT |
                                 PSEL_LANE_CAP_PUT_BCOPY |
                                 PSEL_LANE_CAP_GET_BCOPY,
                                 UCS_BIT(PSEL_LANE_ROLE_AM) |
                                 UCS_BIT(PSEL_LANE_ROLE_AM_BW),
                                 80e-9, 12179.0 * UCS_MBYTE, 10e-9);
    lane->am.max_short  = 100;
    lane->am.max_bcopy  = 8256;
    lane->put.max_short = 256;
    lane->put.max_bcopy = 8192;
    lane->get.max_bcopy = 8192;
    lane = psel_mock_ep_add_lane(ep, "cma/memory", PSEL_LANE_CAP_GET_ZCOPY |
                                 PSEL_LANE_CAP_PUT_ZCOPY |
                                 PSEL_LANE_CAP_MEM_REG,
                                 UCS_BIT(PSEL_LANE_ROLE_RMA_BW), 80e-9,
                                 11145.0 * UCS_MBYTE, 2000e-9);
    lane->reg_cost = ucs_linear_func_make(0, 0);
}

void psel_mock_ep_ib(psel_mock_ep_t *ep)
{
    const uint32_t caps = PSEL_LANE_CAP_AM_SHORT | PSEL_LANE_CAP_AM_BCOPY |
                          PSEL_LANE_CAP_AM_ZCOPY | PSEL_LANE_CAP_GET_ZCOPY |
                          PSEL_LANE_CAP_PUT_ZCOPY | PSEL_LANE_CAP_MEM_REG |
                          PSEL_LANE_CAP_PUT_SHORT | PSEL_LANE_CAP_PUT_BCOPY |
                          PSEL_LANE_CAP_GET_BCOPY;
    psel_lane_t *lane;
    unsigned port;

    memset(ep, 0, sizeof(*ep));
    for (port = 1; port <= 2; ++port) {
        lane = psel_mock_ep_add_lane(ep, (port == 1) ? "rc_mlx5/mlx5_0:1" :
                                                       "rc_mlx5/mlx5_0:2",
                                     caps,
                                     ((port == 1) ?
                                      (UCS_BIT(PSEL_LANE_ROLE_AM) |
                                       UCS_BIT(PSEL_LANE_ROLE_RMA)) : 0) |
                                     UCS_BIT(PSEL_LANE_ROLE_AM_BW) |
                                     UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
                                     600e-9, 11600.0 * UCS_MBYTE, 40e-9);
        lane->am.max_short  = 2046;
        lane->am.max_bcopy  = 8256;
        lane->am.max_zcopy  = 8256;
        lane->get.max_zcopy = 1ul << 30;
        lane->put.max_zcopy = 1ul << 30;
        lane->put.max_short = 220;
        lane->put.max_bcopy = 8192;
        lane->get.max_bcopy = 8192;
        lane->reg_cost      = ucs_linear_func_make(16e-6, 0.06e-9);
        lane->md_index      = 0; /* both ports of one HCA: one MD */
    }
}
