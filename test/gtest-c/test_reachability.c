/*
 * Tests of the documented reachability rules for imported and snapshot peers
 * (src/lane_select/reachability.h): one test per rule.
 */
#include "test_util.h"

#include <lane_select/reachability.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

static psel_resource_t res(const char *tl, const char *dev,
                           uct_device_type_t type)
{
    psel_resource_t r;

    memset(&r, 0, sizeof(r));
    snprintf(r.tl_name, sizeof(r.tl_name), "%s", tl);
    snprintf(r.dev_name, sizeof(r.dev_name), "%s", dev);
    r.dev_type = type;
    return r;
}

/* Reachable in both directions, or in neither */
static int reach(const psel_resource_t *a, const psel_resource_t *b,
                 int locality)
{
    int ab = psel_resource_rule_reachable(a, b, locality);

    assert_int_equal(ab, psel_resource_rule_reachable(b, a, locality));
    return ab;
}

static void test_different_transports_never(void **state)
{
    psel_resource_t rc_mlx5  = res("rc_mlx5", "mlx5_0:1", UCT_DEVICE_TYPE_NET);
    psel_resource_t rc_verbs = res("rc_verbs", "mlx5_0:1", UCT_DEVICE_TYPE_NET);
    psel_resource_t tcp      = res("tcp", "eth0", UCT_DEVICE_TYPE_NET);
    psel_resource_t posix    = res("posix", "memory", UCT_DEVICE_TYPE_SHM);
    psel_resource_t sysv     = res("sysv", "memory", UCT_DEVICE_TYPE_SHM);
    int loc;

    (void)state;
    for (loc = PSEL_PEER_REMOTE_HOST; loc <= PSEL_PEER_SAME_PROCESS; ++loc) {
        assert_false(reach(&rc_mlx5, &rc_verbs, loc));
        assert_false(reach(&rc_mlx5, &tcp, loc));
        assert_false(reach(&posix, &sysv, loc));
        assert_false(reach(&posix, &tcp, loc));
    }
}

static void test_same_name_different_type_never(void **state)
{
    psel_resource_t a = res("foo", "d", UCT_DEVICE_TYPE_NET);
    psel_resource_t b = res("foo", "d", UCT_DEVICE_TYPE_SHM);

    (void)state;
    assert_false(reach(&a, &b, PSEL_PEER_SAME_PROCESS));
}

static void test_ib_is_one_fabric(void **state)
{
    static const char *tls[] = {"rc_mlx5", "rc_verbs", "dc_mlx5", "ud_mlx5",
                                "ud_verbs", "rc", "ud", "dc"};
    psel_resource_t a, b;
    unsigned i;

    (void)state;
    for (i = 0; i < sizeof(tls) / sizeof(tls[0]); ++i) {
        assert_true(psel_resource_tl_is_ib(tls[i]));
        /* other HCA, other port, other host: still the same fabric */
        a = res(tls[i], "mlx5_0:1", UCT_DEVICE_TYPE_NET);
        b = res(tls[i], "mlx5_3:2", UCT_DEVICE_TYPE_NET);
        assert_true(reach(&a, &b, PSEL_PEER_REMOTE_HOST));
        assert_true(reach(&a, &b, PSEL_PEER_SAME_HOST));
        assert_true(reach(&a, &a, PSEL_PEER_SAME_PROCESS));
    }
    assert_false(psel_resource_tl_is_ib("tcp"));
    assert_false(psel_resource_tl_is_ib("rc_x"));
}

static void test_tcp_reaches_tcp(void **state)
{
    psel_resource_t eth0 = res("tcp", "eth0", UCT_DEVICE_TYPE_NET);
    psel_resource_t ib0  = res("tcp", "ib0", UCT_DEVICE_TYPE_NET);
    psel_resource_t lo   = res("tcp", "lo", UCT_DEVICE_TYPE_NET);

    (void)state;
    assert_true(reach(&eth0, &ib0, PSEL_PEER_REMOTE_HOST));
    assert_true(reach(&eth0, &eth0, PSEL_PEER_REMOTE_HOST));
    /* 127.0.0.1 does not leave the host */
    assert_false(reach(&lo, &lo, PSEL_PEER_REMOTE_HOST));
    assert_false(reach(&lo, &eth0, PSEL_PEER_REMOTE_HOST));
    assert_true(reach(&lo, &lo, PSEL_PEER_SAME_HOST));
    assert_true(reach(&lo, &eth0, PSEL_PEER_SAME_PROCESS));
}

static void test_shm_only_same_host(void **state)
{
    static const char *tls[] = {"posix", "sysv", "cma", "knem", "xpmem", "mm"};
    psel_resource_t a;
    unsigned i;

    (void)state;
    for (i = 0; i < sizeof(tls) / sizeof(tls[0]); ++i) {
        a = res(tls[i], "memory", UCT_DEVICE_TYPE_SHM);
        assert_false(reach(&a, &a, PSEL_PEER_REMOTE_HOST));
        assert_true(reach(&a, &a, PSEL_PEER_SAME_HOST));
        assert_true(reach(&a, &a, PSEL_PEER_SAME_PROCESS));
    }
}

static void test_ipc_only_same_host(void **state)
{
    /* cuda_ipc: printed as intra-node since UCX 1.11 */
    psel_resource_t a = res("cuda_ipc", "cuda", UCT_DEVICE_TYPE_SHM);

    (void)state;
    assert_false(reach(&a, &a, PSEL_PEER_REMOTE_HOST));
    assert_true(reach(&a, &a, PSEL_PEER_SAME_HOST));
}

static void test_accelerator_copy_only_same_process(void **state)
{
    psel_resource_t copy = res("cuda_copy", "cuda", UCT_DEVICE_TYPE_ACC);
    psel_resource_t gdr  = res("gdr_copy", "cuda", UCT_DEVICE_TYPE_ACC);

    (void)state;
    assert_false(reach(&copy, &copy, PSEL_PEER_REMOTE_HOST));
    assert_false(reach(&copy, &copy, PSEL_PEER_SAME_HOST));
    assert_true(reach(&copy, &copy, PSEL_PEER_SAME_PROCESS));
    assert_false(reach(&gdr, &gdr, PSEL_PEER_SAME_HOST));
    assert_false(reach(&copy, &gdr, PSEL_PEER_SAME_PROCESS));
}

static void test_self_only_same_process(void **state)
{
    psel_resource_t self = res("self", "memory0", UCT_DEVICE_TYPE_SELF);

    (void)state;
    assert_false(reach(&self, &self, PSEL_PEER_REMOTE_HOST));
    assert_false(reach(&self, &self, PSEL_PEER_SAME_HOST));
    /* psel_info's loopback peer: this process to itself */
    assert_true(reach(&self, &self, PSEL_PEER_SAME_PROCESS));
}

static void test_other_network_same_name(void **state)
{
    psel_resource_t a = res("ugni_rdma", "ipogif0", UCT_DEVICE_TYPE_NET);
    psel_resource_t b = res("ugni_rdma", "ipogif1", UCT_DEVICE_TYPE_NET);

    (void)state;
    assert_true(reach(&a, &b, PSEL_PEER_REMOTE_HOST));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_different_transports_never),
        cmocka_unit_test(test_same_name_different_type_never),
        cmocka_unit_test(test_ib_is_one_fabric),
        cmocka_unit_test(test_tcp_reaches_tcp),
        cmocka_unit_test(test_shm_only_same_host),
        cmocka_unit_test(test_ipc_only_same_host),
        cmocka_unit_test(test_accelerator_copy_only_same_process),
        cmocka_unit_test(test_self_only_same_process),
        cmocka_unit_test(test_other_network_same_name),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
