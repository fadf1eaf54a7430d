/**
 * @file mock_lanes.h
 * Lanes with made-up attributes, for unit tests of pure selection logic and
 * for the engine micro-benchmark. Tests over real devices never use these.
 */
#ifndef PSEL_TEST_MOCK_LANES_H_
#define PSEL_TEST_MOCK_LANES_H_

#include <lane_select/lane.h>

/** Storage for a mock endpoint's lanes. */
typedef struct psel_mock_ep {
    psel_lane_t      lanes[PSEL_MAX_LANES];
    unsigned         num_lanes;
    psel_lane_sets_t sets;
} psel_mock_ep_t;

/**
 * Add a lane to @a ep and to the roles in @a role_mask (bits of
 * psel_lane_role_t), with an even share.
 *
 * @return The lane, for further tweaks.
 */
psel_lane_t *psel_mock_ep_add_lane(psel_mock_ep_t *ep, const char *name,
                                   uint32_t caps, unsigned role_mask,
                                   double latency, double bandwidth,
                                   double overhead);

/** An endpoint like shared memory + cma: am/am_bw on "posix/memory", get
 *  zcopy on "cma/memory". */
void psel_mock_ep_shm(psel_mock_ep_t *ep);

/** An endpoint like an InfiniBand HCA with two ports of rc. */
void psel_mock_ep_ib(psel_mock_ep_t *ep);

#endif
