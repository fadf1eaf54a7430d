/*
 * Unit tests of the lane engine over synthetic resource tables: each
 * selector's criteria, the score formulas computed by hand, reachability,
 * multi-lane limits (max lanes, dev_num_paths, bandwidth ratio, shares),
 * lanes shared by roles, ties and the unreachable error.
 */
#include "test_util.h"

#include <lane_select/lane_engine.h>
#include <ucp_proto_sel/calib.h>
#include <lane_select/reachability.h>
#include <lane_select/resource_table.h>
#include <ucs/sys/math.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define US 1e-6
#define NS 1e-9
#define MBS (1024.0 * 1024.0)   /* MB/s as ucx_info prints it */

#define CAP_ALL (UCT_IFACE_FLAG_CONNECT_TO_EP | UCT_IFACE_FLAG_AM_SHORT | \
                 UCT_IFACE_FLAG_AM_BCOPY | UCT_IFACE_FLAG_AM_ZCOPY | \
                 UCT_IFACE_FLAG_PUT_ZCOPY | UCT_IFACE_FLAG_GET_ZCOPY | \
                 UCT_IFACE_FLAG_PUT_SHORT | UCT_IFACE_FLAG_PUT_BCOPY | \
                 UCT_IFACE_FLAG_GET_BCOPY)

/* A network resource with every capability; tests take away what they
 * check. The memory domain is named after the device. */
static psel_resource_t make_rsc(const char *tl, const char *dev, double bw_mbs,
                                double lat_ns, double ovh_ns)
{
    psel_resource_t rsc;
    const char *colon = strchr(dev, ':');

    memset(&rsc, 0, sizeof(rsc));
    snprintf(rsc.component, sizeof(rsc.component), "ib");
    snprintf(rsc.md_name, sizeof(rsc.md_name), "%.*s",
             (int)(colon ? (size_t)(colon - dev) : strlen(dev)), dev);
    snprintf(rsc.tl_name, sizeof(rsc.tl_name), "%s", tl);
    snprintf(rsc.dev_name, sizeof(rsc.dev_name), "%s", dev);
    rsc.dev_type        = UCT_DEVICE_TYPE_NET;
    rsc.latency         = ucs_linear_func_make(lat_ns * NS, 0);
    rsc.bw_shared       = bw_mbs * MBS;
    rsc.overhead        = ovh_ns * NS;
    rsc.dev_num_paths   = 1;
    rsc.max_num_eps     = PSEL_SIZE_UNLIMITED;
    rsc.am.max_short    = 200;
    rsc.am.max_bcopy    = 8192;
    rsc.am.max_zcopy    = 8192;
    rsc.am.max_iov      = 4;
    rsc.put.max_zcopy   = 1ul << 30;
    rsc.get.max_zcopy   = 1ul << 30;
    rsc.cap_flags       = CAP_ALL;
    rsc.atomic64_ops    = UCS_BIT(UCT_ATOMIC_OP_ADD);
    rsc.atomic64_fops   = UCS_BIT(UCT_ATOMIC_OP_ADD) |
                          UCS_BIT(UCT_ATOMIC_OP_CSWAP);
    rsc.reg_cost        = ucs_linear_func_make(200 * NS, 0.01 * NS);
    rsc.md_flags        = UCT_MD_FLAG_REG;
    rsc.reg_mem_types   = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    rsc.max_reg         = SIZE_MAX;
    return rsc;
}

static void table_add(psel_resource_table_t *table, const psel_resource_t *rsc)
{
    assert_int_equal(psel_resource_table_append(table, rsc), UCS_OK);
}

static psel_lane_select_params_t params_of(unsigned am, unsigned am_bw,
                                           unsigned rma_bw, unsigned amo,
                                           int locality)
{
    psel_lane_select_params_t params;

    memset(&params, 0, sizeof(params));
    params.max_lanes[PSEL_LANE_ROLE_AM]     = am;
    params.max_lanes[PSEL_LANE_ROLE_AM_BW]  = am_bw;
    params.max_lanes[PSEL_LANE_ROLE_RMA_BW] = rma_bw;
    params.max_lanes[PSEL_LANE_ROLE_AMO]    = amo;
    params.max_ratio                        = 4;
    params.locality                         = locality;
    return params;
}

/* Select with local = remote = @a table. */
static void select_self(const psel_resource_table_t *table,
                        const psel_lane_select_params_t *params,
                        psel_ep_lanes_t *ep)
{
    assert_int_equal(psel_lanes_select(table, table, params, ep), UCS_OK);
}

/* Name of lane @a i of a role, or "-" if the role has fewer lanes. */
static const char *role_lane(const psel_ep_lanes_t *ep, psel_lane_role_t role,
                             unsigned i)
{
    return (i < ep->sets.role[role].count) ?
           ep->sets.role[role].lanes[i]->name : "-";
}

static void assert_rel(double got, double expected)
{
    if (fabs(got - expected) > 1e-12 * fabs(expected)) {
        print_error("expected %.17g, got %.17g\n", expected, got);
        fail();
    }
}

/* ------------------------------------------------------------------------
 * Selector criteria
 */

/* The fastest resource lacks am_short: it may carry am_bw, never am. */
static void test_am_needs_am_short(void **state)
{
    psel_resource_table_t table;
    psel_resource_t rsc;
    psel_ep_lanes_t ep;
    psel_lane_select_params_t params = params_of(1, 2, 0, 0,
                                                 PSEL_PEER_REMOTE_HOST);

    psel_resource_table_init(&table);
    rsc            = make_rsc("rc_mlx5", "mlx5_0:1", 20000, 500, 10);
    rsc.cap_flags &= ~UCT_IFACE_FLAG_AM_SHORT;
    table_add(&table, &rsc);
    rsc = make_rsc("rc_verbs", "mlx5_1:1", 5000, 2000, 200);
    table_add(&table, &rsc);

    /* the am lane leads am_bw (as in UCX); the faster one comes second */
    select_self(&table, &params, &ep);
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM, 0),
                        "rc_verbs/mlx5_1:1");
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM_BW, 0),
                        "rc_verbs/mlx5_1:1");
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM_BW, 1),
                        "rc_mlx5/mlx5_0:1");
    assert_true(ep.sets.role[PSEL_LANE_ROLE_AM].lanes[0]->caps &
                PSEL_LANE_CAP_AM_SHORT);
    assert_false(ep.sets.role[PSEL_LANE_ROLE_AM_BW].lanes[1]->caps &
                 PSEL_LANE_CAP_AM_SHORT);
    psel_resource_table_cleanup(&table);

    /* with no am_short anywhere there is no am lane at all */
    psel_resource_table_init(&table);
    rsc            = make_rsc("rc_mlx5", "mlx5_0:1", 20000, 500, 10);
    rsc.cap_flags &= ~UCT_IFACE_FLAG_AM_SHORT;
    table_add(&table, &rsc);
    select_self(&table, &params, &ep);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_AM].count, 0);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_AM_BW].count, 1);
    assert_int_equal(ep.num_lanes, 1);
    assert_false(ep.info[0].roles & UCS_BIT(PSEL_LANE_ROLE_AM));
    psel_resource_table_cleanup(&table);
}

/* rma_bw needs get or put zcopy and a memory domain that registers. */
static void test_rma_bw_criteria(void **state)
{
    psel_resource_table_t table;
    psel_resource_t rsc;
    psel_ep_lanes_t ep;
    psel_lane_select_params_t params = params_of(0, 0, 1, 0,
                                                 PSEL_PEER_REMOTE_HOST);

    psel_resource_table_init(&table);
    /* fastest: no zcopy RMA at all */
    rsc            = make_rsc("rc_mlx5", "mlx5_0:1", 40000, 500, 10);
    rsc.cap_flags &= ~(UCT_IFACE_FLAG_GET_ZCOPY | UCT_IFACE_FLAG_PUT_ZCOPY);
    table_add(&table, &rsc);
    /* next: zcopy, but its memory domain cannot register */
    rsc           = make_rsc("rc_verbs", "mlx5_1:1", 30000, 500, 10);
    rsc.md_flags &= ~UCT_MD_FLAG_REG;
    table_add(&table, &rsc);
    /* slowest: put zcopy only, registers: the only candidate */
    rsc            = make_rsc("dc_mlx5", "mlx5_2:1", 1000, 3000, 300);
    rsc.cap_flags &= ~UCT_IFACE_FLAG_GET_ZCOPY;
    table_add(&table, &rsc);

    select_self(&table, &params, &ep);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].count, 1);
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_RMA_BW, 0),
                        "dc_mlx5/mlx5_2:1");
    /* its lane keeps put's limits, whatever get's are */
    assert_true(ep.lanes[0].caps & PSEL_LANE_CAP_PUT_ZCOPY);
    assert_false(ep.lanes[0].caps & PSEL_LANE_CAP_GET_ZCOPY);
    assert_int_equal(ep.lanes[0].put.max_zcopy, 1ul << 30);
    /* and the am's apart: its 4 iov entries are not put's */
    assert_int_equal(ep.lanes[0].am.max_iov, 4);
    assert_int_equal(ep.lanes[0].put.max_iov, 0);

    /* without the put zcopy either, nothing qualifies */
    table.resources[2].cap_flags &= ~UCT_IFACE_FLAG_PUT_ZCOPY;
    psel_test_log_capture_start();
    assert_int_equal(psel_lanes_select(&table, &table, &params, &ep),
                     UCS_ERR_UNREACHABLE);
    psel_test_log_capture_stop();
    psel_resource_table_cleanup(&table);
}

/* amo needs 64-bit atomics (plain or fetching); 32-bit ones do not count. */
static void test_amo_needs_atomics(void **state)
{
    psel_resource_table_t table;
    psel_resource_t rsc;
    psel_ep_lanes_t ep;
    psel_lane_select_params_t params = params_of(0, 0, 0, 1,
                                                 PSEL_PEER_REMOTE_HOST);

    psel_resource_table_init(&table);
    rsc               = make_rsc("rc_mlx5", "mlx5_0:1", 20000, 300, 10);
    rsc.atomic64_ops  = 0;
    rsc.atomic64_fops = 0;
    table_add(&table, &rsc);
    rsc               = make_rsc("rc_verbs", "mlx5_1:1", 20000, 400, 10);
    rsc.atomic64_ops  = 0;
    rsc.atomic64_fops = 0;
    rsc.atomic32_ops  = UCS_BIT(UCT_ATOMIC_OP_ADD);
    rsc.atomic32_fops = UCS_BIT(UCT_ATOMIC_OP_ADD);
    table_add(&table, &rsc);
    rsc               = make_rsc("dc_mlx5", "mlx5_2:1", 1000, 5000, 500);
    rsc.atomic64_ops  = 0;   /* fetching 64-bit only: enough */
    table_add(&table, &rsc);

    select_self(&table, &params, &ep);
    assert_int_equal(ep.num_lanes, 1);
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AMO, 0),
                        "dc_mlx5/mlx5_2:1");
    assert_true(ep.lanes[0].caps & PSEL_LANE_CAP_AMO);
    psel_resource_table_cleanup(&table);
}

/* A resource that cannot connect (neither to iface nor to ep) has no role. */
static void test_needs_connection(void **state)
{
    psel_resource_table_t table;
    psel_resource_t rsc;
    psel_ep_lanes_t ep;
    psel_lane_select_params_t params = params_of(1, 1, 1, 1,
                                                 PSEL_PEER_REMOTE_HOST);

    psel_resource_table_init(&table);
    rsc            = make_rsc("rc_mlx5", "mlx5_0:1", 20000, 300, 10);
    rsc.cap_flags &= ~UCT_IFACE_FLAG_CONNECT_TO_EP;
    rsc.cap_flags |= UCT_IFACE_FLAG_CONNECT_TO_SOCKADDR;
    table_add(&table, &rsc);
    rsc            = make_rsc("ud_mlx5", "mlx5_0:1", 100, 9000, 900);
    rsc.cap_flags &= ~UCT_IFACE_FLAG_CONNECT_TO_EP;
    rsc.cap_flags |= UCT_IFACE_FLAG_CONNECT_TO_IFACE;
    table_add(&table, &rsc);

    select_self(&table, &params, &ep);
    assert_int_equal(ep.num_lanes, 1);
    assert_string_equal(ep.lanes[0].name, "ud_mlx5/mlx5_0:1");
    assert_int_equal(ep.info[0].local, 1);
    psel_resource_table_cleanup(&table);
}

/* A shared-memory lane whose local bandwidth this process timed
 * (copy_probe.h) keeps it, whatever the peer's timing says: the peer times
 * the same memory, and taking the lower of two noisy figures would make
 * two processes' tables differ. UCT's figures: the lower side's. */
static void test_timed_local_bandwidth_kept(void **state)
{
    psel_lane_select_params_t params = params_of(1, 1, 1, 1,
                                                 PSEL_PEER_SAME_HOST);
    psel_resource_table_t local, remote;
    psel_resource_t lrsc, rrsc;
    psel_ep_lanes_t ep;

    lrsc               = make_rsc("posix", "memory", 0, 80, 10);
    lrsc.dev_type      = UCT_DEVICE_TYPE_SHM;
    lrsc.bw_dedicated  = 40000 * MBS;
    lrsc.bw_advertised = 12179 * MBS;
    rrsc               = lrsc;
    rrsc.bw_dedicated  = 30000 * MBS; /* the peer's timing, in its address */
    rrsc.bw_advertised = 0;           /* (not carried by the address) */

    psel_resource_table_init(&local);
    psel_resource_table_init(&remote);
    table_add(&local, &lrsc);
    table_add(&remote, &rrsc);
    assert_int_equal(psel_lanes_select(&local, &remote, &params, &ep), UCS_OK);
    assert_int_equal(ep.num_lanes, 1);
    assert_rel(ep.lanes[0].bandwidth, 40000 * MBS);

    local.resources[0].bw_advertised = 0; /* UCT's own figures: the lower */
    assert_int_equal(psel_lanes_select(&local, &remote, &params, &ep), UCS_OK);
    assert_rel(ep.lanes[0].bandwidth, 30000 * MBS);
    psel_resource_table_cleanup(&local);
    psel_resource_table_cleanup(&remote);
}

/* ------------------------------------------------------------------------
 * Scores, by hand: local and remote differ in every input, so max/min and
 * local/remote mix-ups show.
 */
static void test_score_formulas(void **state)
{
    psel_resource_table_t local, remote;
    psel_resource_t lrsc, rrsc;
    psel_ep_lanes_t ep;
    psel_lane_select_params_t params = params_of(1, 1, 1, 1,
                                                 PSEL_PEER_REMOTE_HOST);
    double lat, bw, o_l, o_r, reg;

    params.max_lanes[PSEL_LANE_ROLE_RMA] = 1;
    psel_resource_table_init(&local);
    psel_resource_table_init(&remote);
    lrsc              = make_rsc("rc_mlx5", "mlx5_0:1", 0, 700, 40);
    lrsc.bw_dedicated = 1000 * MBS;
    lrsc.bw_shared    = 11000 * MBS;          /* 12000 MB/s in all */
    lrsc.reg_cost     = ucs_linear_func_make(16 * US, 0.06 * NS);
    table_add(&local, &lrsc);
    rrsc              = make_rsc("rc_mlx5", "mlx5_4:1", 9000, 1300, 75);
    rrsc.reg_cost     = ucs_linear_func_make(1000 * US, 10 * NS);
    table_add(&remote, &rrsc);

    assert_int_equal(psel_lanes_select(&local, &remote, &params, &ep), UCS_OK);
    assert_int_equal(ep.num_lanes, 1);
    assert_int_equal(ep.info[0].roles, UCS_MASK(PSEL_LANE_ROLE_LAST));

    lat = 1300 * NS;                           /* max(700, 1300) ns */
    bw  = 9000 * MBS;                          /* min(12000, 9000) MB/s */
    o_l = 40 * NS;
    o_r = 75 * NS;
    reg = 16 * US + 0.06 * NS * 262144;        /* the local MD's cost */

    assert_rel(ep.info[0].score[PSEL_LANE_ROLE_AM], 1e-3 / (lat + o_l + o_r));
    assert_rel(ep.info[0].score[PSEL_LANE_ROLE_AM_BW],
               1.0 / (262144 / bw + lat + o_l));
    assert_rel(ep.info[0].score[PSEL_LANE_ROLE_RMA_BW],
               1.0 / (262144 / bw + lat + o_l + reg));
    assert_rel(ep.info[0].score[PSEL_LANE_ROLE_AMO], 1e-3 / (lat + o_l + o_r));
    assert_rel(ep.info[0].score[PSEL_LANE_ROLE_RMA],
               1e-3 / (lat + o_l + 4096 / bw));

    /* the lane's facts, which protocol costs are built from */
    assert_rel(ep.lanes[0].latency, lat);
    assert_rel(ep.lanes[0].bandwidth, bw);
    assert_rel(ep.lanes[0].overhead_send, o_l);
    assert_rel(ep.lanes[0].overhead_recv, o_r);
    assert_rel(ep.lanes[0].reg_cost.c, 16 * US);

    /* swapped: the pair facts are symmetric, overheads and reg are not */
    assert_int_equal(psel_lanes_select(&remote, &local, &params, &ep), UCS_OK);
    assert_rel(ep.info[0].score[PSEL_LANE_ROLE_AM], 1e-3 / (lat + o_l + o_r));
    assert_rel(ep.info[0].score[PSEL_LANE_ROLE_AM_BW],
               1.0 / (262144 / bw + lat + o_r));
    assert_rel(ep.info[0].score[PSEL_LANE_ROLE_RMA_BW],
               1.0 / (262144 / bw + lat + o_r + 1000 * US +
                      10 * NS * 262144));
    psel_resource_table_cleanup(&local);
    psel_resource_table_cleanup(&remote);
}

/* The best score wins each role: low latency for am, bandwidth for am_bw. */
static void test_score_ranks_roles(void **state)
{
    psel_resource_table_t table;
    psel_resource_t rsc;
    psel_ep_lanes_t ep;
    psel_lane_select_params_t params = params_of(1, 2, 1, 0,
                                                 PSEL_PEER_REMOTE_HOST);

    psel_resource_table_init(&table);
    /* low latency, low bandwidth: 1e-3/(1 us + 2·50 ns) beats the other */
    rsc = make_rsc("rc_verbs", "mlx5_0:1", 1000, 1000, 50);
    table_add(&table, &rsc);
    /* high bandwidth, higher latency: 256K/20 GB/s = 12.5 us vs 250 us */
    rsc = make_rsc("rc_mlx5", "mlx5_1:1", 20000, 3000, 50);
    table_add(&table, &rsc);
    /* same bandwidth, but registration costs 1 ms: loses rma_bw only */
    rsc          = make_rsc("dc_mlx5", "mlx5_2:1", 20000, 2000, 50);
    rsc.reg_cost = ucs_linear_func_make(1000 * US, 0);
    table_add(&table, &rsc);

    select_self(&table, &params, &ep);
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM, 0),
                        "rc_verbs/mlx5_0:1");
    /* am_bw: the am lane first (as in UCX), then the best by score */
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM_BW, 0),
                        "rc_verbs/mlx5_0:1");
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM_BW, 1),
                        "dc_mlx5/mlx5_2:1");
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_RMA_BW, 0),
                        "rc_mlx5/mlx5_1:1");
    assert_int_equal(ep.num_lanes, 3);
    psel_resource_table_cleanup(&table);
}

/* ------------------------------------------------------------------------
 * Reachability
 */
static ucs_status_t select_pair(psel_resource_t l, psel_resource_t r,
                                int locality, psel_ep_lanes_t *ep)
{
    psel_resource_table_t local, remote;
    psel_lane_select_params_t params = params_of(1, 1, 1, 1, locality);
    ucs_status_t status;

    psel_resource_table_init(&local);
    psel_resource_table_init(&remote);
    table_add(&local, &l);
    table_add(&remote, &r);
    psel_test_log_capture_start();
    status = psel_lanes_select(&local, &remote, &params, ep);
    psel_test_log_capture_stop();
    psel_resource_table_cleanup(&local);
    psel_resource_table_cleanup(&remote);
    return status;
}

static void test_reach_transports(void **state)
{
    psel_ep_lanes_t ep;

    /* same device, different transports: never, even in one process */
    assert_int_equal(select_pair(make_rsc("rc_mlx5", "mlx5_0:1", 1, 1, 1),
                                 make_rsc("dc_mlx5", "mlx5_0:1", 1, 1, 1),
                                 PSEL_PEER_SAME_PROCESS, &ep),
                     UCS_ERR_UNREACHABLE);
    assert_int_equal(select_pair(make_rsc("tcp", "eth0", 1, 1, 1),
                                 make_rsc("rc_verbs", "eth0", 1, 1, 1),
                                 PSEL_PEER_SAME_HOST, &ep),
                     UCS_ERR_UNREACHABLE);
    /* IB: any port of any HCA is one fabric */
    assert_int_equal(select_pair(make_rsc("rc_mlx5", "mlx5_0:1", 1, 1, 1),
                                 make_rsc("rc_mlx5", "mlx5_3:2", 1, 1, 1),
                                 PSEL_PEER_REMOTE_HOST, &ep), UCS_OK);
    assert_string_equal(ep.lanes[0].name, "rc_mlx5/mlx5_0:1");
    assert_int_equal(ep.info[0].remote, 0);
    assert_int_equal(select_pair(make_rsc("ud_verbs", "mlx4_0:1", 1, 1, 1),
                                 make_rsc("ud_verbs", "mlx5_1:1", 1, 1, 1),
                                 PSEL_PEER_REMOTE_HOST, &ep), UCS_OK);
}

static void test_reach_shm_and_self(void **state)
{
    static const int localities[] = {PSEL_PEER_REMOTE_HOST,
                                     PSEL_PEER_SAME_HOST,
                                     PSEL_PEER_SAME_PROCESS};
    psel_resource_t shm  = make_rsc("posix", "memory", 12000, 80, 10);
    psel_resource_t self = make_rsc("self", "memory0", 6911, 0, 10);
    psel_ep_lanes_t ep;
    unsigned i;

    shm.dev_type  = UCT_DEVICE_TYPE_SHM;
    self.dev_type = UCT_DEVICE_TYPE_SELF;
    for (i = 0; i < 3; ++i) {
        /* shm: same host or same process */
        assert_int_equal(select_pair(shm, shm, localities[i], &ep),
                         (localities[i] == PSEL_PEER_REMOTE_HOST) ?
                         UCS_ERR_UNREACHABLE : UCS_OK);
        /* self: only the same process */
        assert_int_equal(select_pair(self, self, localities[i], &ep),
                         (localities[i] == PSEL_PEER_SAME_PROCESS) ?
                         UCS_OK : UCS_ERR_UNREACHABLE);
    }

    /* in a table with both and a network lane: across hosts only the
     * network lane; on the same host shm wins am (80 ns vs 5 us) */
    {
        psel_resource_table_t table;
        psel_resource_t net = make_rsc("tcp", "eth0", 1000, 5000, 50000);
        psel_lane_select_params_t params;

        psel_resource_table_init(&table);
        table_add(&table, &self);
        table_add(&table, &shm);
        table_add(&table, &net);

        params = params_of(1, 1, 1, 0, PSEL_PEER_REMOTE_HOST);
        select_self(&table, &params, &ep);
        assert_int_equal(ep.num_lanes, 1);
        assert_string_equal(ep.lanes[0].name, "tcp/eth0");

        params = params_of(1, 1, 1, 0, PSEL_PEER_SAME_HOST);
        select_self(&table, &params, &ep);
        assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM, 0),
                            "posix/memory");

        params = params_of(1, 1, 1, 0, PSEL_PEER_SAME_PROCESS);
        select_self(&table, &params, &ep);
        assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM, 0),
                            "self/memory0");
        psel_resource_table_cleanup(&table);
    }
}

/* tcp on "lo" never leaves the host. */
static void test_reach_tcp_lo(void **state)
{
    psel_ep_lanes_t ep;

    assert_int_equal(select_pair(make_rsc("tcp", "lo", 11, 10960, 50000),
                                 make_rsc("tcp", "lo", 11, 10960, 50000),
                                 PSEL_PEER_REMOTE_HOST, &ep),
                     UCS_ERR_UNREACHABLE);
    assert_int_equal(select_pair(make_rsc("tcp", "lo", 11, 10960, 50000),
                                 make_rsc("tcp", "lo", 11, 10960, 50000),
                                 PSEL_PEER_SAME_HOST, &ep), UCS_OK);
    assert_int_equal(select_pair(make_rsc("tcp", "eth0", 11, 10960, 50000),
                                 make_rsc("tcp", "ib0", 11, 10960, 50000),
                                 PSEL_PEER_REMOTE_HOST, &ep), UCS_OK);
}

/* A live peer: the worker's callback (uct_iface_is_reachable) decides, not
 * the rules; it is asked about every candidate pair. */
static unsigned live_calls;

static int live_deny_first_remote(void *arg, unsigned local, unsigned remote)
{
    ++live_calls;
    return remote != *(const unsigned*)arg;
}

static void test_live_reachability_callback(void **state)
{
    psel_resource_t hca0 = make_rsc("rc_mlx5", "mlx5_0:1", 10000, 600, 40);
    psel_resource_t hca1 = make_rsc("rc_mlx5", "mlx5_1:1", 10000, 600, 40);
    psel_resource_table_t local, remote;
    psel_lane_select_params_t params;
    unsigned denied = 0;
    psel_ep_lanes_t ep;

    psel_resource_table_init(&local);
    psel_resource_table_init(&remote);
    table_add(&local, &hca0);
    table_add(&remote, &hca0);
    table_add(&remote, &hca1);

    params               = params_of(1, 0, 0, 0, PSEL_PEER_REMOTE_HOST);
    params.is_reachable  = live_deny_first_remote;
    params.reachable_arg = &denied;
    live_calls           = 0;
    assert_int_equal(psel_lanes_select(&local, &remote, &params, &ep), UCS_OK);
    /* the rules would take remote 0 (same device name); UCT says no */
    assert_int_equal(ep.num_lanes, 1);
    assert_int_equal(ep.info[0].remote, 1);
    assert_true(live_calls >= 2);

    /* UCT reaches nothing, although the rules would allow both */
    remote.count = 1;
    psel_test_log_capture_start();
    assert_int_equal(psel_lanes_select(&local, &remote, &params, &ep),
                     UCS_ERR_UNREACHABLE);
    psel_test_log_capture_stop();
    psel_assert_log_contains("no lane");
    remote.count = 2;

    psel_resource_table_cleanup(&local);
    psel_resource_table_cleanup(&remote);
}

/* ------------------------------------------------------------------------
 * Multi-lane
 */
static void test_max_lanes_per_role(void **state)
{
    psel_resource_table_t table;
    psel_resource_t rsc;
    psel_ep_lanes_t ep;
    psel_lane_select_params_t params = params_of(1, 3, 2, 0,
                                                 PSEL_PEER_REMOTE_HOST);
    char dev[32];
    unsigned i;

    psel_resource_table_init(&table);
    for (i = 0; i < 5; ++i) {
        snprintf(dev, sizeof(dev), "mlx5_%u:1", i);
        rsc = make_rsc("rc_mlx5", dev, 10000 - i * 100, 600, 40);
        table_add(&table, &rsc);
    }
    select_self(&table, &params, &ep);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_AM].count, 1);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_AM_BW].count, 3);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].count, 2);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_AMO].count, 0);
    /* best first, in bandwidth order; rma_bw reuses the am_bw lanes */
    for (i = 0; i < 3; ++i) {
        snprintf(dev, sizeof(dev), "rc_mlx5/mlx5_%u:1", i);
        assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM_BW, i), dev);
    }
    assert_ptr_equal(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].lanes[1],
                     ep.sets.role[PSEL_LANE_ROLE_AM_BW].lanes[1]);
    assert_int_equal(ep.num_lanes, 3);

    /* a limit above the devices: each device once (one path each) */
    params = params_of(1, 40, 40, 0, PSEL_PEER_REMOTE_HOST);
    select_self(&table, &params, &ep);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_AM_BW].count, 5);
    psel_resource_table_cleanup(&table);
}

static void test_dev_num_paths(void **state)
{
    psel_resource_table_t table;
    psel_resource_t rsc;
    psel_ep_lanes_t ep;
    psel_lane_select_params_t params = params_of(1, 4, 4, 0,
                                                 PSEL_PEER_REMOTE_HOST);
    unsigned i;

    psel_resource_table_init(&table);
    rsc               = make_rsc("rc_mlx5", "mlx5_bond_0:1", 20000, 600, 40);
    rsc.dev_num_paths = 2;
    table_add(&table, &rsc);
    /* another transport on the same device shares its paths */
    rsc               = make_rsc("dc_mlx5", "mlx5_bond_0:1", 20000, 700, 40);
    rsc.dev_num_paths = 2;
    table_add(&table, &rsc);

    select_self(&table, &params, &ep);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_AM_BW].count, 2);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].count, 2);
    assert_int_equal(ep.num_lanes, 2);
    for (i = 0; i < 2; ++i) {
        assert_int_equal(ep.info[i].local, 0);
        assert_int_equal(ep.info[i].remote, 0);
        assert_int_equal(ep.info[i].path, i);
        /* each path its own name, as UCX says "on path1" */
        assert_string_equal(ep.lanes[i].name,
                            (i == 0) ? "rc_mlx5/mlx5_bond_0:1/path0" :
                                       "rc_mlx5/mlx5_bond_0:1/path1");
        assert_ptr_equal(ep.sets.role[PSEL_LANE_ROLE_AM_BW].lanes[i],
                         &ep.lanes[i]);
    }
    /* shares of two equal paths */
    assert_rel(ep.sets.role[PSEL_LANE_ROLE_AM_BW].shares[0], 0.5);
    assert_rel(ep.sets.role[PSEL_LANE_ROLE_AM_BW].shares[1], 0.5);

    /* one path: one lane per role */
    table.resources[0].dev_num_paths = 1;
    table.resources[1].dev_num_paths = 1;
    select_self(&table, &params, &ep);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_AM_BW].count, 1);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].count, 1);
    assert_int_equal(ep.num_lanes, 1);
    assert_int_equal(ep.info[0].path, 0);
    /* a single-path device keeps the plain name */
    assert_string_equal(ep.lanes[0].name, "rc_mlx5/mlx5_bond_0:1");
    psel_resource_table_cleanup(&table);
}

/* Extra lanes below first/max_ratio are dropped; at or just above, kept. */
static void check_ratio(double second_mbs, int kept)
{
    psel_resource_table_t table;
    psel_resource_t rsc;
    psel_ep_lanes_t ep;
    psel_lane_select_params_t params = params_of(0, 2, 2, 0,
                                                 PSEL_PEER_REMOTE_HOST);

    psel_resource_table_init(&table);
    rsc = make_rsc("rc_mlx5", "mlx5_0:1", 1000, 600, 40);
    table_add(&table, &rsc);
    rsc = make_rsc("rc_mlx5", "mlx5_1:1", second_mbs, 600, 40);
    table_add(&table, &rsc);
    select_self(&table, &params, &ep);
    if (ep.sets.role[PSEL_LANE_ROLE_AM_BW].count != 1u + kept) {
        print_error("second lane of %.6f MB/s against 1000 MB/s / 4: "
                    "expected %s\n", second_mbs, kept ? "kept" : "dropped");
    }
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_AM_BW].count, 1 + kept);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].count, 1 + kept);
    assert_int_equal(ep.num_lanes, 1 + kept);
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM_BW, 0),
                        "rc_mlx5/mlx5_0:1");
    psel_resource_table_cleanup(&table);
}

static void test_multi_lane_ratio(void **state)
{
    check_ratio(249.99, 0);
    check_ratio(250.01, 1);
    check_ratio(250, 1);    /* "below" is strict */
    check_ratio(10, 0);
}

static void test_shares(void **state)
{
    psel_resource_table_t table;
    psel_resource_t rsc;
    psel_ep_lanes_t ep;
    psel_lane_select_params_t params = params_of(1, 3, 3, 0,
                                                 PSEL_PEER_REMOTE_HOST);
    const psel_lane_set_t *set;
    double sum;
    unsigned role, i;

    psel_resource_table_init(&table);
    rsc = make_rsc("rc_mlx5", "mlx5_0:1", 1000, 600, 40);
    table_add(&table, &rsc);
    rsc = make_rsc("rc_mlx5", "mlx5_1:1", 600, 600, 40);
    table_add(&table, &rsc);
    rsc = make_rsc("rc_mlx5", "mlx5_2:1", 400, 600, 40);
    table_add(&table, &rsc);
    select_self(&table, &params, &ep);

    for (role = PSEL_LANE_ROLE_AM_BW; role <= PSEL_LANE_ROLE_RMA_BW; ++role) {
        set = &ep.sets.role[role];
        assert_int_equal(set->count, 3);
        assert_rel(set->shares[0], 0.5);
        assert_rel(set->shares[1], 0.3);
        assert_rel(set->shares[2], 0.2);
        for (sum = 0, i = 0; i < set->count; ++i) {
            sum += set->shares[i];
            assert_rel(set->shares[i] / set->shares[0],
                       set->lanes[i]->bandwidth / set->lanes[0]->bandwidth);
        }
        assert_rel(sum, 1.0);
    }
    /* a single lane takes everything */
    assert_rel(ep.sets.role[PSEL_LANE_ROLE_AM].shares[0], 1.0);
    psel_resource_table_cleanup(&table);
}

/*
 * A pair that moves nothing (a peer's address or an edited file saying
 * bandwidth 0) is never a lane: eth0 with 0 MB/s and the lower latency
 * would win am on latency alone (1e-3 / (5 + 2 x 1) us against / (10 + 2 x
 * 1) us), and the am lane would become the am_bw lane with an infinite
 * wire time. eth1 takes every role; with eth0 alone there is no lane.
 */
static void test_zero_bandwidth_never_a_lane(void **state)
{
    psel_lane_select_params_t params = params_of(1, 1, 1, 0,
                                                 PSEL_PEER_REMOTE_HOST);
    psel_resource_table_t table;
    psel_resource_t rsc;
    psel_ep_lanes_t ep;

    psel_resource_table_init(&table);
    rsc = make_rsc("tcp", "eth0", 0, 5000, 1000);
    table_add(&table, &rsc);
    rsc = make_rsc("tcp", "eth1", 1192, 10000, 1000);
    table_add(&table, &rsc);
    select_self(&table, &params, &ep);
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM, 0), "tcp/eth1");
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM_BW, 0), "tcp/eth1");
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_RMA_BW, 0), "tcp/eth1");
    assert_int_equal(ep.num_lanes, 1);
    assert_true(ep.lanes[0].bandwidth > 0);
    psel_resource_table_cleanup(&table);

    psel_resource_table_init(&table);
    rsc = make_rsc("tcp", "eth0", 0, 5000, 1000);
    table_add(&table, &rsc);
    psel_test_log_capture_start();
    assert_int_equal(psel_lanes_select(&table, &table, &params, &ep),
                     UCS_ERR_UNREACHABLE);
    psel_test_log_capture_stop();
    psel_resource_table_cleanup(&table);
}

/* ------------------------------------------------------------------------
 * Measured rails (a calibration's rail lines) instead of the attributes
 */
typedef struct {
    const char *name;
    double      latency, bandwidth;
} rail_t;

/* Every rail here was measured against every peer (the peer is tested
 * with a real calibration below) */
static int measured_rails(void *arg, const char *lane_name,
                          const psel_resource_table_t *peer,
                          const psel_resource_t *remote, double *latency,
                          double *bandwidth)
{
    const rail_t *rail;

    for (rail = arg; rail->name != NULL; ++rail) {
        if (!strcmp(rail->name, lane_name)) {
            *latency   = rail->latency;
            *bandwidth = rail->bandwidth;
            return 1;
        }
    }
    return 0;
}

/* Two tcp rails that advertise the same (10 Gb/s, 10 us): the attributes
 * split 50/50 */
static void make_two_rails(psel_resource_table_t *table)
{
    psel_resource_t rsc;

    psel_resource_table_init(table);
    rsc = make_rsc("tcp", "eth0", 1192, 10000, 10000);
    table_add(table, &rsc);
    rsc = make_rsc("tcp", "eth1", 1192, 10000, 10000);
    table_add(table, &rsc);
}

/* Every lane set of a copy points into the copy, so the original can go:
 * each role's and each memory type's (a plain struct copy keeps pointers
 * into the original, which psel_info --peers freed) */
static void assert_set_in(const psel_lane_set_t *set, const psel_ep_lanes_t *ep)
{
    unsigned i;

    for (i = 0; i < set->count; ++i) {
        assert_ptr_equal(set->lanes[i], &ep->lanes[set->lanes[i]->index]);
    }
}

static void test_ep_lanes_copy_points_into_the_copy(void **state)
{
    psel_lane_select_params_t params = params_of(1, 2, 2, 1,
                                                 PSEL_PEER_REMOTE_HOST);
    psel_ep_lanes_t *src, copy;
    psel_resource_table_t table;
    unsigned i;

    make_two_rails(&table);
    src = malloc(sizeof(*src));
    assert_non_null(src);
    select_self(&table, &params, src);
    assert_true(src->sets.role[PSEL_LANE_ROLE_RMA_BW].count == 2);
    psel_ep_lanes_copy(&copy, src);
    memset(src, 0xa5, sizeof(*src));
    free(src);

    for (i = 0; i < PSEL_LANE_ROLE_LAST; ++i) {
        assert_set_in(&copy.sets.role[i], &copy);
    }
    for (i = 0; i < UCS_MEMORY_TYPE_LAST; ++i) {
        assert_set_in(&copy.sets.rma_bw_mem[i], &copy);
    }
    assert_string_equal(role_lane(&copy, PSEL_LANE_ROLE_RMA_BW, 1),
                        "tcp/eth1");
    psel_resource_table_cleanup(&table);
}

static void test_measured_rails_drop_the_slow_one(void **state)
{
    /* eth1 shaped to 112 MB/s: 13.7x slower than eth0 (> ratio 4), and its
     * small-message latency measured a little lower (a token bucket lets a
     * small message through at full speed) */
    static const rail_t rails[] = {{"tcp/eth0", 21.5 * US, 1539e6},
                                   {"tcp/eth1", 20.9 * US, 112e6},
                                   {NULL, 0, 0}};
    psel_lane_select_params_t params = params_of(1, 2, 2, 0,
                                                 PSEL_PEER_REMOTE_HOST);
    psel_resource_table_t table;
    psel_ep_lanes_t ep;

    make_two_rails(&table);
    select_self(&table, &params, &ep);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].count, 2);
    assert_rel(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].shares[0], 0.5);

    params.measured     = measured_rails;
    params.measured_arg = (void*)rails;
    select_self(&table, &params, &ep);
    /* the slow rail is below 1/4 of the fast one: dropped everywhere */
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].count, 1);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_AM_BW].count, 1);
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_RMA_BW, 0), "tcp/eth0");
    /* eager goes to the fast rail: 8 KiB on the wire takes 5.3 us there,
     * 73 us on eth1, which the 0.6 us of latency do not make up */
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM, 0), "tcp/eth0");
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM_BW, 0), "tcp/eth0");
    /* the lane carries what was measured */
    assert_rel(ep.sets.role[PSEL_LANE_ROLE_AM].lanes[0]->bandwidth, 1539e6);
    assert_rel(ep.sets.role[PSEL_LANE_ROLE_AM].lanes[0]->latency, 21.5 * US);
    /* tcp has no per-class terms: every class takes the measured latency */
    assert_rel(ep.sets.role[PSEL_LANE_ROLE_AM].lanes[0]->op[PSEL_OP_CLASS_SHORT]
               .latency, 21.5 * US);
    assert_rel(ep.sets.role[PSEL_LANE_ROLE_AM].lanes[0]->op[PSEL_OP_CLASS_ZCOPY]
               .latency, 21.5 * US);
    psel_resource_table_cleanup(&table);
}

/* The lane of rc_mlx5/mlx5_0:1, latency 600 + growth·N ns with UCX 1.17's
 * per-class terms, selected for @a num_eps endpoints with its rail measured
 * at 2.0 us (or not measured) */
static const psel_lane_t *rc_rail_lane(double growth_ns, size_t num_eps,
                                       int measured, psel_ep_lanes_t *ep)
{
    static const rail_t rails[] = {{"rc_mlx5/mlx5_0:1", 2.0 * US, 10000e6},
                                   {NULL, 0, 0}};
    psel_lane_select_params_t params = params_of(1, 1, 1, 0,
                                                 PSEL_PEER_REMOTE_HOST);
    psel_resource_table_t table;
    psel_resource_t rsc;

    psel_resource_table_init(&table);
    rsc         = make_rsc("rc_mlx5", "mlx5_0:1", 12000, 600, 40);
    rsc.latency = ucs_linear_func_make(600 * NS, growth_ns * NS);
    psel_resource_op_cost_derive(&rsc, "1.17.0");
    table_add(&table, &rsc);
    params.measured     = measured ? measured_rails : NULL;
    params.measured_arg = (void*)rails;
    params.num_eps      = num_eps;
    select_self(&table, &params, ep);
    psel_resource_table_cleanup(&table);
    return ep->sets.role[PSEL_LANE_ROLE_AM].lanes[0];
}

/* A measured IB rail keeps UCX 1.17's per-class terms on top of the measured
 * latency: short 2.0 us, bcopy and zcopy 2.0 + 0.35 (WQE fetch) */
static void test_measured_rail_keeps_class_terms(void **state)
{
    const psel_lane_t *lane;
    psel_ep_lanes_t ep;

    lane = rc_rail_lane(0, 1, 1, &ep);
    assert_rel(lane->latency, 2.0 * US);
    assert_rel(lane->op[PSEL_OP_CLASS_SHORT].latency, 2.0 * US);
    assert_rel(lane->op[PSEL_OP_CLASS_BCOPY].latency, 2.35 * US);
    assert_rel(lane->op[PSEL_OP_CLASS_ZCOPY].latency, 2.35 * US);
    /* unmeasured: the attributes, 600 and 950 ns */
    lane = rc_rail_lane(0, 1, 0, &ep);
    assert_rel(lane->op[PSEL_OP_CLASS_SHORT].latency, 600 * NS);
    assert_rel(lane->op[PSEL_OP_CLASS_BCOPY].latency, 950 * NS);
}

/*
 * A rail is measured with one endpoint; at N endpoints its latency grows as
 * the transport's does: rc_mlx5 "600 + 1.000 * N nsec", 2.0 us measured, at
 * 100 endpoints 2.0 us + 1 ns x (100 - 1) = 2.099 us (short), and the
 * bcopy class's 350 ns on top: 2.449 us. At 1 endpoint it is what was
 * measured. (Before, the 2.0 us replaced the latency at any N.)
 */
static void test_measured_rail_grows_with_endpoints(void **state)
{
    const psel_lane_t *lane;
    psel_ep_lanes_t ep;

    lane = rc_rail_lane(1, 100, 1, &ep);
    assert_rel(lane->latency, 2.099 * US);
    assert_rel(lane->op[PSEL_OP_CLASS_SHORT].latency, 2.099 * US);
    assert_rel(lane->op[PSEL_OP_CLASS_BCOPY].latency, 2.449 * US);

    lane = rc_rail_lane(1, 1, 1, &ep);
    assert_rel(lane->latency, 2.0 * US);
    assert_rel(lane->op[PSEL_OP_CLASS_BCOPY].latency, 2.35 * US);
}

/*
 * A rail applies to the peer device it was measured against. Host A's rails
 * were measured from here: eth0 1539 MB/s, eth1 112 MB/s (13.7x slower: the
 * second rail is dropped at ratio 4). An endpoint to host C, whose devices
 * have other addresses, keeps the attributes: both rails, 50/50 (before,
 * the rails of A applied to every host). A rail that names no peer (a
 * format 2 file) applies to C too.
 */
static void swap_resources(psel_resource_table_t *table)
{
    psel_resource_t tmp = table->resources[0];

    table->resources[0] = table->resources[1];
    table->resources[1] = tmp;
}

static void test_measured_rail_applies_to_its_peer(void **state)
{
    psel_lane_select_params_t params = params_of(1, 2, 2, 0,
                                                 PSEL_PEER_REMOTE_HOST);
    psel_resource_table_t local, host_a, host_c;
    psel_calib_t calib;
    psel_ep_lanes_t ep;

    make_two_rails(&local);
    make_two_rails(&host_a);
    make_two_rails(&host_c);
    /* tcp's device address: flags 00, AF_INET 02, the IPv4 address */
    snprintf(host_a.resources[0].dev_addr, PSEL_DEV_ADDR_HEX_MAX,
             "0002c0a80001");
    snprintf(host_a.resources[1].dev_addr, PSEL_DEV_ADDR_HEX_MAX,
             "0002c0a80101");
    snprintf(host_c.resources[0].dev_addr, PSEL_DEV_ADDR_HEX_MAX,
             "0002c0a80003");
    snprintf(host_c.resources[1].dev_addr, PSEL_DEV_ADDR_HEX_MAX,
             "0002c0a80103");
    memset(&calib, 0, sizeof(calib));
    assert_int_equal(psel_calib_rail_set(&calib, "tcp/eth0", "0002c0a80001",
                                         21.5 * US, 1539 * MBS), UCS_OK);
    assert_int_equal(psel_calib_rail_set(&calib, "tcp/eth1", "0002c0a80101",
                                         20.9 * US, 112 * MBS), UCS_OK);
    params.measured     = psel_calib_rail_measured;
    params.measured_arg = &calib;

    assert_int_equal(psel_lanes_select(&local, &host_a, &params, &ep), UCS_OK);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].count, 1);
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_RMA_BW, 0), "tcp/eth0");
    assert_rel(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].lanes[0]->bandwidth,
               1539 * MBS);
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM, 0), "tcp/eth0");

    /* the rail is the local device's towards host A, whichever of A's
     * devices a pair reaches: with eth1 first in every table, the pair
     * eth1 -> A's eth0 is measured too (112 MB/s), so it cannot win the am
     * lane on its advertised 10 us */
    swap_resources(&local);
    swap_resources(&host_a);
    assert_int_equal(psel_lanes_select(&local, &host_a, &params, &ep), UCS_OK);
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM, 0), "tcp/eth0");
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_RMA_BW, 0), "tcp/eth0");
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].count, 1);

    assert_int_equal(psel_lanes_select(&local, &host_c, &params, &ep), UCS_OK);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].count, 2);
    assert_rel(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].shares[0], 0.5);
    assert_rel(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].lanes[1]->bandwidth,
               1192 * MBS);

    /* eth1 measured for every peer: C's eth1 takes it, and is dropped */
    assert_int_equal(psel_calib_rail_set(&calib, "tcp/eth1", "", 20.9 * US,
                                         112 * MBS), UCS_OK);
    assert_int_equal(psel_lanes_select(&local, &host_c, &params, &ep), UCS_OK);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].count, 1);
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_RMA_BW, 0), "tcp/eth0");

    psel_resource_table_cleanup(&local);
    psel_resource_table_cleanup(&host_a);
    psel_resource_table_cleanup(&host_c);
}

static void test_measured_rails_set_the_shares(void **state)
{
    /* 1000 and 400 MB/s measured: both kept (2.5x < 4), shares 5/7, 2/7;
     * a lane the calibration does not know keeps its attributes */
    static const rail_t rails[] = {{"tcp/eth1", 20 * US, 1000e6},
                                   {"tcp/eth0", 20 * US, 400e6},
                                   {NULL, 0, 0}};
    psel_lane_select_params_t params = params_of(1, 2, 2, 0,
                                                 PSEL_PEER_REMOTE_HOST);
    const psel_lane_set_t *set;
    psel_resource_table_t table;
    psel_resource_t rsc;
    psel_ep_lanes_t ep;

    make_two_rails(&table);
    params.measured     = measured_rails;
    params.measured_arg = (void*)rails;
    select_self(&table, &params, &ep);
    set = &ep.sets.role[PSEL_LANE_ROLE_RMA_BW];
    assert_int_equal(set->count, 2);
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_RMA_BW, 0), "tcp/eth1");
    assert_rel(set->shares[0], 1000.0 / 1400);
    assert_rel(set->shares[1], 400.0 / 1400);
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM, 0), "tcp/eth1");
    psel_resource_table_cleanup(&table);

    /* a third device, not measured: its attributes (1192 MB/s as ucx_info
     * prints it) stand beside the measured ones */
    make_two_rails(&table);
    rsc = make_rsc("tcp", "eth2", 1192, 10000, 10000);
    table_add(&table, &rsc);
    params.max_lanes[PSEL_LANE_ROLE_RMA_BW] = 3;
    select_self(&table, &params, &ep);
    set = &ep.sets.role[PSEL_LANE_ROLE_RMA_BW];
    assert_int_equal(set->count, 3);
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_RMA_BW, 0), "tcp/eth2");
    assert_rel(set->lanes[0]->bandwidth, 1192 * MBS);
    psel_resource_table_cleanup(&table);
}

/* ------------------------------------------------------------------------
 * The rma lane: the best latency among the resources with put short, put
 * bcopy and get bcopy whose memory domain can reach the peer's registered
 * buffers (UCP's rma lane to registered memory)
 */
static void test_rma_lane(void **state)
{
    psel_lane_select_params_t params = params_of(0, 0, 0, 0,
                                                 PSEL_PEER_REMOTE_HOST);
    psel_resource_table_t table;
    psel_resource_t slow, fast;
    psel_ep_lanes_t ep;

    params.max_lanes[PSEL_LANE_ROLE_RMA] = 1;
    slow = make_rsc("rc_mlx5", "mlx5_0:1", 12000, 900, 40);
    fast = make_rsc("rc_verbs", "mlx5_1:1", 12000, 600, 40);

    /* a memory domain that registers nothing and needs keys (posix or
     * sysv): the slower lane */
    fast.md_flags = UCT_MD_FLAG_ALLOC | UCT_MD_FLAG_NEED_RKEY;
    psel_resource_table_init(&table);
    table_add(&table, &slow);
    table_add(&table, &fast);
    select_self(&table, &params, &ep);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_RMA].count, 1);
    assert_string_equal(ep.sets.role[PSEL_LANE_ROLE_RMA].lanes[0]->name,
                        "rc_mlx5/mlx5_0:1");
    assert_true(ep.sets.role[PSEL_LANE_ROLE_RMA].lanes[0]->caps &
                PSEL_LANE_CAP_PUT_SHORT);
    psel_resource_table_cleanup(&table);

    /* registering: the faster */
    fast.md_flags = UCT_MD_FLAG_REG;
    psel_resource_table_init(&table);
    table_add(&table, &slow);
    table_add(&table, &fast);
    select_self(&table, &params, &ep);
    assert_string_equal(ep.sets.role[PSEL_LANE_ROLE_RMA].lanes[0]->name,
                        "rc_verbs/mlx5_1:1");
    psel_resource_table_cleanup(&table);

    /* without get bcopy (tcp has none of the three): the slower */
    fast.cap_flags &= ~UCT_IFACE_FLAG_GET_BCOPY;
    psel_resource_table_init(&table);
    table_add(&table, &slow);
    table_add(&table, &fast);
    select_self(&table, &params, &ep);
    assert_string_equal(ep.sets.role[PSEL_LANE_ROLE_RMA].lanes[0]->name,
                        "rc_mlx5/mlx5_0:1");
    psel_resource_table_cleanup(&table);
}

/* ------------------------------------------------------------------------
 * One lane for several roles; roles without lanes
 */
static void test_lane_serves_roles_once(void **state)
{
    psel_resource_table_t table;
    psel_resource_t rsc;
    psel_ep_lanes_t ep;
    psel_lane_select_params_t params = params_of(1, 2, 2, 1,
                                                 PSEL_PEER_REMOTE_HOST);
    unsigned role;

    params.max_lanes[PSEL_LANE_ROLE_RMA] = 1;
    psel_resource_table_init(&table);
    rsc = make_rsc("rc_mlx5", "mlx5_0:1", 12000, 600, 40);
    table_add(&table, &rsc);
    select_self(&table, &params, &ep);

    assert_int_equal(ep.num_lanes, 1);
    assert_int_equal(ep.info[0].roles, UCS_MASK(PSEL_LANE_ROLE_LAST));
    for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
        assert_int_equal(ep.sets.role[role].count, 1);
        /* the sets point into ep itself, at the one lane */
        assert_ptr_equal(ep.sets.role[role].lanes[0], &ep.lanes[0]);
        assert_true(ep.info[0].score[role] > 0);
    }
    assert_int_equal(ep.lanes[0].index, 0);

    /* max_lanes 0: no lane for the role, and no score either */
    params = params_of(1, 1, 0, 0, PSEL_PEER_REMOTE_HOST);
    select_self(&table, &params, &ep);
    assert_int_equal(ep.num_lanes, 1);
    assert_int_equal(ep.info[0].roles, UCS_BIT(PSEL_LANE_ROLE_AM) |
                                       UCS_BIT(PSEL_LANE_ROLE_AM_BW));
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].count, 0);
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_AMO].count, 0);
    assert_true(ep.info[0].score[PSEL_LANE_ROLE_RMA_BW] == 0);
    psel_resource_table_cleanup(&table);
}

/* ------------------------------------------------------------------------
 * Ties and the unreachable error
 */
static void test_tie_priority(void **state)
{
    psel_resource_table_t table;
    psel_resource_t rsc;
    psel_ep_lanes_t ep;
    psel_lane_select_params_t params = params_of(1, 1, 1, 0,
                                                 PSEL_PEER_REMOTE_HOST);

    /* identical figures: the later one has the higher priority */
    psel_resource_table_init(&table);
    rsc          = make_rsc("rc_mlx5", "mlx5_0:1", 12000, 600, 40);
    rsc.priority = 10;
    table_add(&table, &rsc);
    rsc          = make_rsc("rc_mlx5", "mlx5_1:1", 12000, 600, 40);
    rsc.priority = 20;
    table_add(&table, &rsc);
    select_self(&table, &params, &ep);
    assert_int_equal(ep.num_lanes, 1);
    assert_string_equal(ep.lanes[0].name, "rc_mlx5/mlx5_1:1");
    assert_int_equal(ep.info[0].local, 1);

    /* equal priorities: the earlier resource */
    table.resources[1].priority = 10;
    select_self(&table, &params, &ep);
    assert_string_equal(ep.lanes[0].name, "rc_mlx5/mlx5_0:1");

    /* priority only breaks ties: a better score wins over it */
    table.resources[0].priority = 0;
    table.resources[0].latency  = ucs_linear_func_make(599 * NS, 0);
    table.resources[1].priority = 100;
    select_self(&table, &params, &ep);
    assert_string_equal(ep.lanes[0].name, "rc_mlx5/mlx5_0:1");
    psel_resource_table_cleanup(&table);
}

static void test_unreachable_error(void **state)
{
    psel_resource_table_t local, remote;
    psel_resource_t rsc;
    psel_ep_lanes_t ep;
    psel_lane_select_params_t params = params_of(1, 2, 2, 1,
                                                 PSEL_PEER_REMOTE_HOST);

    psel_resource_table_init(&local);
    psel_resource_table_init(&remote);
    rsc          = make_rsc("posix", "memory", 12000, 80, 10);
    rsc.dev_type = UCT_DEVICE_TYPE_SHM;
    table_add(&local, &rsc);
    table_add(&remote, &rsc);
    rsc = make_rsc("rc_mlx5", "mlx5_0:1", 12000, 600, 40);
    table_add(&local, &rsc);
    rsc = make_rsc("tcp", "eth0", 1000, 5000, 50000);
    table_add(&remote, &rsc);
    rsc = make_rsc("tcp", "lo", 1000, 5000, 50000);
    table_add(&remote, &rsc);

    psel_test_log_capture_start();
    assert_int_equal(psel_lanes_select(&local, &remote, &params, &ep),
                     UCS_ERR_UNREACHABLE);
    psel_test_log_capture_stop();
    psel_assert_log_contains("no lane: none of the 2 local resources "
                             "reaches any of the peer's 3");
    assert_int_equal(psel_test_log_count(), 1);

    /* an empty peer too */
    remote.count = 0;
    psel_test_log_capture_start();
    assert_int_equal(psel_lanes_select(&local, &remote, &params, &ep),
                     UCS_ERR_UNREACHABLE);
    psel_test_log_capture_stop();
    psel_assert_log_contains("of the peer's 0");
    remote.count = 3;

    /* the same tables on one host: posix reaches */
    params.locality = PSEL_PEER_SAME_HOST;
    assert_int_equal(psel_lanes_select(&local, &remote, &params, &ep), UCS_OK);
    assert_int_equal(ep.num_lanes, 1);
    assert_string_equal(ep.lanes[0].name, "posix/memory");
    psel_resource_table_cleanup(&local);
    psel_resource_table_cleanup(&remote);
}

/*
 * Lanes per memory type: an rma_bw lane for host memory must register host
 * memory (a GPU-only MD such as cuda_ipc's is not one, however fast), the
 * cuda set takes the MD that registers cuda memory, and an AM transport
 * whose MD does not reach host memory is no am/am_bw lane.
 */
static void test_lanes_per_memory_type(void **state)
{
    psel_lane_select_params_t params = params_of(1, 1, 2, 0,
                                                 PSEL_PEER_REMOTE_HOST);
    psel_resource_table_t table;
    psel_resource_t rsc;
    psel_ep_lanes_t ep;

    (void)state;
    psel_resource_table_init(&table);
    rsc = make_rsc("rc_mlx5", "mlx5_0:1", 12000, 600, 40);
    table_add(&table, &rsc);
    rsc = make_rsc("gpu_rdma", "gpu0:1", 300000, 1000, 40);
    rsc.reg_mem_types    = UCS_BIT(UCS_MEMORY_TYPE_CUDA);
    rsc.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_CUDA);
    table_add(&table, &rsc);

    select_self(&table, &params, &ep);
    /* host: only rc_mlx5, although gpu_rdma is 25x faster */
    assert_int_equal(ep.sets.role[PSEL_LANE_ROLE_RMA_BW].count, 1);
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_RMA_BW, 0),
                        "rc_mlx5/mlx5_0:1");
    assert_int_equal(ep.sets.rma_bw_mem[UCS_MEMORY_TYPE_HOST].count, 1);
    /* cuda: gpu_rdma only */
    assert_int_equal(ep.sets.rma_bw_mem[UCS_MEMORY_TYPE_CUDA].count, 1);
    assert_string_equal(ep.sets.rma_bw_mem[UCS_MEMORY_TYPE_CUDA].lanes[0]->name,
                        "gpu_rdma/gpu0:1");
    /* its MD reaches no host memory: not the am lane either */
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM, 0),
                        "rc_mlx5/mlx5_0:1");
    assert_string_equal(role_lane(&ep, PSEL_LANE_ROLE_AM_BW, 0),
                        "rc_mlx5/mlx5_0:1");
    assert_true(psel_lane_sets_mem_types(&ep.sets) ==
                (UCS_BIT(UCS_MEMORY_TYPE_HOST) | UCS_BIT(UCS_MEMORY_TYPE_CUDA)));
    psel_resource_table_cleanup(&table);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_am_needs_am_short),
        cmocka_unit_test(test_rma_bw_criteria),
        cmocka_unit_test(test_amo_needs_atomics),
        cmocka_unit_test(test_needs_connection),
        cmocka_unit_test(test_score_formulas),
        cmocka_unit_test(test_rma_lane),
        cmocka_unit_test(test_timed_local_bandwidth_kept),
        cmocka_unit_test(test_score_ranks_roles),
        cmocka_unit_test(test_reach_transports),
        cmocka_unit_test(test_reach_shm_and_self),
        cmocka_unit_test(test_reach_tcp_lo),
        cmocka_unit_test(test_live_reachability_callback),
        cmocka_unit_test(test_max_lanes_per_role),
        cmocka_unit_test(test_dev_num_paths),
        cmocka_unit_test(test_lanes_per_memory_type),
        cmocka_unit_test(test_multi_lane_ratio),
        cmocka_unit_test(test_zero_bandwidth_never_a_lane),
        cmocka_unit_test(test_ep_lanes_copy_points_into_the_copy),
        cmocka_unit_test(test_measured_rails_drop_the_slow_one),
        cmocka_unit_test(test_measured_rail_applies_to_its_peer),
        cmocka_unit_test(test_measured_rail_grows_with_endpoints),
        cmocka_unit_test(test_measured_rail_keeps_class_terms),
        cmocka_unit_test(test_measured_rails_set_the_shares),
        cmocka_unit_test(test_shares),
        cmocka_unit_test(test_lane_serves_roles_once),
        cmocka_unit_test(test_tie_priority),
        cmocka_unit_test(test_unreachable_error),
    };

    return cmocka_run_group_tests_name("lanes", tests, NULL, NULL);
}
