/*
 * test_resource: live discovery over the UCT transports of this machine
 * (self, tcp on lo, posix, sysv, cma), the copy probe and its rule, table
 * operations, UCX-style allow-list filters on a synthetic table, printing,
 * and the ibverbs port conversion.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* process_vm_readv */
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"  /* PSEL_UCT_V2_HEADER */
#endif
#include "test_util.h"

#include <lane_select/copy_probe.h>
#include <lane_select/resource_table.h>
#include <ucp_proto_sel/psel_config.h>

#include <ucs/arch/bitops.h>
#include <ucs/sys/math.h>
#include <ucs/sys/preprocessor.h>
#include <ucs/memory/memory_type.h>
#include <infiniband/verbs.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <cmocka.h>


static psel_resource_table_t live_table;

static int setup_live(void **state)
{
    return (psel_resource_discover(&live_table) == UCS_OK) ? 0 : -1;
}

static int teardown_live(void **state)
{
    psel_resource_table_cleanup(&live_table);
    return 0;
}

/* First resource with this transport, and this device if dev != NULL */
static const psel_resource_t *find_tl(const psel_resource_table_t *table,
                                      const char *tl, const char *dev)
{
    unsigned i;

    for (i = 0; i < table->count; ++i) {
        if (!strcmp(table->resources[i].tl_name, tl) &&
            ((dev == NULL) || !strcmp(table->resources[i].dev_name, dev))) {
            return &table->resources[i];
        }
    }
    return NULL;
}

static void test_discover_finds_self_tcp_lo_and_shm(void **state)
{
    static const char *shm_tls[] = {"posix", "sysv"};
    const psel_resource_t *res;
    unsigned i;

    assert_string_equal(live_table.origin, "live");
    assert_true(live_table.ucx_version[0] != '\0');

    res = find_tl(&live_table, "self", NULL);
    assert_non_null(res);
    assert_int_equal(res->dev_type, UCT_DEVICE_TYPE_SELF);
    assert_true(res->cap_flags & UCT_IFACE_FLAG_AM_SHORT);
    assert_true(res->cap_flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE);
    assert_true(res->am.max_short > 0);

    res = find_tl(&live_table, "tcp", "lo");
    assert_non_null(res);
    assert_string_equal(res->component, "tcp");
    assert_int_equal(res->dev_type, UCT_DEVICE_TYPE_NET);
    assert_true(res->cap_flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE);
    assert_true(res->cap_flags & UCT_IFACE_FLAG_AM_BCOPY);
    assert_true(res->am.max_bcopy > 0);
    assert_true(res->latency.c > 0);
    assert_true(res->iface_addr_len > 0);
    assert_true(res->device_addr_len > 0);

    for (i = 0; i < sizeof(shm_tls) / sizeof(shm_tls[0]); ++i) {
        res = find_tl(&live_table, shm_tls[i], NULL);
        assert_non_null(res);
        assert_int_equal(res->dev_type, UCT_DEVICE_TYPE_SHM);
        assert_true(res->cap_flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE);
    }

    /* cma needs ptrace rights over the peer; UCX leaves it out where it
     * cannot work (kernel.yama.ptrace_scope, a container's seccomp) */
    res = find_tl(&live_table, "cma", NULL);
    if (res == NULL) {
        print_message("SKIP: the cma checks: this machine has no cma "
                      "transport (ucx_info -d lists none)\n");
    } else {
        assert_int_equal(res->dev_type, UCT_DEVICE_TYPE_SHM);
        assert_true(res->cap_flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE);
        assert_true(res->cap_flags & UCT_IFACE_FLAG_GET_ZCOPY);
        assert_true(res->cap_flags & UCT_IFACE_FLAG_PUT_ZCOPY);
        assert_true(res->get.max_zcopy > 0);
        assert_true(res->get.max_iov > 0);
        /* its zero-copy reaches host memory: registered (to UCX 1.18), or
         * accessed by an MD that needs no memory handle (1.20 on) */
        assert_true((res->md_flags & UCT_MD_FLAG_REG) ||
                    (!(res->md_flags & (UCT_MD_FLAG_NEED_MEMH |
                                        UCT_MD_FLAG_NEED_RKEY)) &&
                     (res->access_mem_types & UCS_BIT(UCS_MEMORY_TYPE_HOST))));
    }

    res = find_tl(&live_table, "posix", NULL);
    assert_true(res->cap_flags & UCT_IFACE_FLAG_AM_SHORT);
    assert_true(res->md_flags & UCT_MD_FLAG_ALLOC);
    assert_true(res->md_flags & UCT_MD_FLAG_RKEY_PTR);
    assert_true(res->rkey_size > 0);
}

static void test_discover_attributes_are_sane(void **state)
{
    const psel_resource_t *res;
    unsigned i;

    /* self, tcp on lo, posix, sysv (and cma where ptrace allows it) */
    assert_true(live_table.count >= 4);
    for (i = 0; i < live_table.count; ++i) {
        res = &live_table.resources[i];
        assert_true(res->component[0] != '\0');
        assert_true(res->md_name[0] != '\0');
        assert_true(res->tl_name[0] != '\0');
        assert_true(res->dev_name[0] != '\0');
        assert_true(res->bw_dedicated + res->bw_shared > 0);
        assert_true(res->latency.c >= 0);
        assert_true(res->overhead > 0);
        assert_true(res->dev_num_paths >= 1);
        assert_true(res->max_num_eps > 0);
        assert_true((res->cap_flags & (UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                                       UCT_IFACE_FLAG_CONNECT_TO_EP)) != 0);
        /* no RDMA hardware here: nothing may claim ibverbs facts */
        assert_false(res->ib.valid);
        assert_ptr_equal(psel_resource_table_find(&live_table, "x"), NULL);
    }
}

/*
 * Discovery fills the per-operation costs: from uct_iface_estimate_perf when
 * protosel is built with the UCT v2 header (then they must equal UCX's rules
 * for the installed version, as the importer applies them to dumps), else
 * by those rules.
 */
static void test_discover_op_costs(void **state)
{
    psel_resource_table_t table;
    psel_resource_t derived;
    unsigned i, op;

    (void)state;
#ifdef PSEL_UCT_V2_HEADER
    print_message("built with %s: checking uct_iface_estimate_perf's costs "
                  "against UCX's rules\n",
                  UCS_PP_MAKE_STRING(PSEL_UCT_V2_HEADER));
#else
    print_message("built without the UCT v2 header (configure "
                  "--with-ucx-src=DIR adds it): the derived costs only\n");
#endif
    assert_int_equal(psel_resource_discover(&table), UCS_OK);
    for (i = 0; i < table.count; ++i) {
        derived = table.resources[i];
        psel_resource_op_cost_derive(&derived, NULL);
        print_message("%s/%s: per-operation costs %s\n",
                      table.resources[i].tl_name, table.resources[i].dev_name,
                      (table.resources[i].op_cost_source ==
                       PSEL_OP_COST_LIVE) ? "live" : "derived");
        assert_true(table.resources[i].op_cost_source != PSEL_OP_COST_NONE);
#ifdef PSEL_UCT_V2_HEADER
        /* built with the v2 header: every transport here has active
         * messages or put/get, so the costs must be UCX's own estimate */
        assert_int_equal(table.resources[i].op_cost_source, PSEL_OP_COST_LIVE);
#endif
        for (op = 0; op < PSEL_OP_CLASS_LAST; ++op) {
            assert_true(fabs(table.resources[i].op_cost[op].send_pre -
                             derived.op_cost[op].send_pre) < 1e-12);
            assert_true(fabs(table.resources[i].op_cost[op].send_post -
                             derived.op_cost[op].send_post) < 1e-12);
            assert_true(fabs(table.resources[i].op_cost[op].recv -
                             derived.op_cost[op].recv) < 1e-12);
            assert_true(fabs(table.resources[i].op_cost[op].latency -
                             derived.op_cost[op].latency) < 1e-12);
        }
    }
    psel_resource_table_cleanup(&table);
}

static void test_discover_filter_live(void **state)
{
    char *names[] = {"tcp"};
    ucs_config_allow_list_t tls = {{names, 1, 0},
                                   UCS_CONFIG_ALLOW_LIST_NEGATE};
    psel_resource_table_t table;
    ucs_status_t status;

    status = psel_resource_discover(&table);
    assert_int_equal(status, UCS_OK);
    psel_resource_filter(&table, &tls, NULL);
    assert_null(find_tl(&table, "tcp", NULL));
    assert_non_null(find_tl(&table, "posix", NULL));
    assert_non_null(find_tl(&table, "self", NULL));
    psel_resource_table_cleanup(&table);
    assert_int_equal(table.count, 0);
    assert_null(table.resources);
}

static char *print_to_string(const psel_resource_table_t *table)
{
    FILE *stream = tmpfile();
    char *text;
    long size;

    assert_non_null(stream);
    psel_resource_table_print(stream, table);
    size = ftell(stream);
    assert_true(size > 0);
    text = calloc(1, size + 1);
    assert_non_null(text);
    rewind(stream);
    assert_int_equal(fread(text, 1, size, stream), size);
    fclose(stream);
    return text;
}

static void test_print_live_like_ucx_info(void **state)
{
    static const char *expected[] = {
        "# Memory domain: posix", "#     Component: posix",
        "#      Transport: cma", "#         Device: lo",
        "#           Type: network", "#           Type: intra-node",
        "#           Type: loopback", "#            bandwidth: ",
        "/ppn + ", " MB/sec", "#              latency: ",
        "#             overhead: ", "#            get_zcopy: unlimited, up to ",
        "#           connection: to ep, to iface",
        "#      device priority: ", "#     device num paths: 1",
        "#       device address: ", "#        iface address: ",
        "#       error handling: ", "#           remote key: ",
        "rkey_ptr is supported", "#             register: unlimited, cost: "
    };
    char *text = print_to_string(&live_table);
    unsigned i;

    for (i = 0; i < sizeof(expected) / sizeof(expected[0]); ++i) {
        if (strstr(text, expected[i]) == NULL) {
            print_error("'%s' not found in:\n%s\n", expected[i], text);
            fail();
        }
    }
    /* memory domains are printed once each, even when they have many tls */
    assert_ptr_equal(strstr(strstr(text, "# Memory domain: tcp") + 1,
                            "# Memory domain: tcp"), NULL);
    free(text);
}


/* Synthetic table: every kind of device, and the ib transports */
static void make_resource(psel_resource_t *res, const char *md,
                          const char *tl, const char *dev,
                          uct_device_type_t type)
{
    memset(res, 0, sizeof(*res));
    snprintf(res->component, sizeof(res->component), "%s", md);
    snprintf(res->md_name, sizeof(res->md_name), "%s", md);
    snprintf(res->tl_name, sizeof(res->tl_name), "%s", tl);
    snprintf(res->dev_name, sizeof(res->dev_name), "%s", dev);
    res->dev_type     = type;
    res->bw_dedicated = 1e9;
}

static void make_synthetic(psel_resource_table_t *table)
{
    static const struct {
        const char        *md, *tl, *dev;
        uct_device_type_t type;
    } list[] = {
        {"self",   "self",     "memory",   UCT_DEVICE_TYPE_SELF},
        {"tcp",    "tcp",      "lo",       UCT_DEVICE_TYPE_NET},
        {"tcp",    "tcp",      "eth0",     UCT_DEVICE_TYPE_NET},
        {"sysv",   "sysv",     "memory",   UCT_DEVICE_TYPE_SHM},
        {"posix",  "posix",    "memory",   UCT_DEVICE_TYPE_SHM},
        {"cma",    "cma",      "memory",   UCT_DEVICE_TYPE_SHM},
        {"knem",   "knem",     "memory",   UCT_DEVICE_TYPE_SHM},
        {"mlx5_0", "rc_verbs", "mlx5_0:1", UCT_DEVICE_TYPE_NET},
        {"mlx5_0", "rc_mlx5",  "mlx5_0:1", UCT_DEVICE_TYPE_NET},
        {"mlx5_0", "ud_verbs", "mlx5_0:1", UCT_DEVICE_TYPE_NET},
        {"mlx5_0", "ud_mlx5",  "mlx5_0:1", UCT_DEVICE_TYPE_NET},
        {"mlx5_0", "dc_mlx5",  "mlx5_0:1", UCT_DEVICE_TYPE_NET},
        {"mlx5_1", "rc_mlx5",  "mlx5_1:1", UCT_DEVICE_TYPE_NET},
        {"cuda",   "cuda_ipc", "cuda",     UCT_DEVICE_TYPE_ACC},
    };
    psel_resource_t res;
    unsigned i;

    psel_resource_table_init(table);
    for (i = 0; i < sizeof(list) / sizeof(list[0]); ++i) {
        make_resource(&res, list[i].md, list[i].tl, list[i].dev, list[i].type);
        assert_int_equal(psel_resource_table_append(table, &res), UCS_OK);
    }
}

static void test_table_find_and_duplicates(void **state)
{
    psel_resource_table_t table;
    const psel_resource_t *res;

    make_synthetic(&table);
    res = psel_resource_table_find(&table, "rc_mlx5/mlx5_1:1");
    assert_non_null(res);
    assert_string_equal(res->md_name, "mlx5_1");
    assert_non_null(psel_resource_table_find(&table, "tcp/lo"));
    assert_null(psel_resource_table_find(&table, "tcp/l"));
    assert_null(psel_resource_table_find(&table, "tc/lo"));
    assert_null(psel_resource_table_find(&table, "tcp"));
    assert_null(psel_resource_table_find(&table, "/lo"));

    assert_int_equal(psel_resource_table_append(&table, res),
                     UCS_ERR_ALREADY_EXISTS);
    assert_int_equal(table.count, 14);
    psel_resource_table_cleanup(&table);
}

/* Allow-list from "a,b" ("" = no names), mode as UCX parses '^' and "all" */
typedef struct {
    char                    buf[256];
    char                    *names[16];
    ucs_config_allow_list_t list;
} test_allow_list_t;

static const ucs_config_allow_list_t *make_list(test_allow_list_t *al,
                                                const char *spec)
{
    char *tok, *save;

    memset(al, 0, sizeof(*al));
    if (spec == NULL) {
        return NULL;
    }
    if (!strcmp(spec, "all")) {
        al->list.mode = UCS_CONFIG_ALLOW_LIST_ALLOW_ALL;
        return &al->list;
    }
    al->list.mode = (spec[0] == '^') ? UCS_CONFIG_ALLOW_LIST_NEGATE :
                                       UCS_CONFIG_ALLOW_LIST_ALLOW;
    snprintf(al->buf, sizeof(al->buf), "%s", spec + (spec[0] == '^'));
    for (tok = strtok_r(al->buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        al->names[al->list.array.count++] = tok;
    }
    al->list.array.names = al->names;
    return &al->list;
}

static void test_filter_allow_lists_and_aliases(void **state)
{
    static const struct {
        const char *tls, *net_devices, *expected;
    } cases[] = {
        {NULL, NULL, "self/memory tcp/lo tcp/eth0 sysv/memory posix/memory "
                     "cma/memory knem/memory rc_verbs/mlx5_0:1 "
                     "rc_mlx5/mlx5_0:1 ud_verbs/mlx5_0:1 ud_mlx5/mlx5_0:1 "
                     "dc_mlx5/mlx5_0:1 rc_mlx5/mlx5_1:1 cuda_ipc/cuda"},
        {"all", "all", "self/memory tcp/lo tcp/eth0 sysv/memory posix/memory "
                       "cma/memory knem/memory rc_verbs/mlx5_0:1 "
                       "rc_mlx5/mlx5_0:1 ud_verbs/mlx5_0:1 ud_mlx5/mlx5_0:1 "
                       "dc_mlx5/mlx5_0:1 rc_mlx5/mlx5_1:1 cuda_ipc/cuda"},
        {"tcp", NULL, "tcp/lo tcp/eth0"},
        {"shm", NULL, "sysv/memory posix/memory cma/memory knem/memory"},
        {"sm,self", NULL, "self/memory sysv/memory posix/memory cma/memory "
                          "knem/memory"},
        {"mm", NULL, "sysv/memory posix/memory"},
        {"rc", NULL, "rc_verbs/mlx5_0:1 rc_mlx5/mlx5_0:1 rc_mlx5/mlx5_1:1"},
        {"ud", NULL, "ud_verbs/mlx5_0:1 ud_mlx5/mlx5_0:1"},
        {"dc", NULL, "dc_mlx5/mlx5_0:1"},
        {"rc_x,ud_v", NULL, "rc_mlx5/mlx5_0:1 ud_verbs/mlx5_0:1 "
                            "rc_mlx5/mlx5_1:1"},
        {"ib", NULL, "rc_verbs/mlx5_0:1 rc_mlx5/mlx5_0:1 ud_verbs/mlx5_0:1 "
                     "ud_mlx5/mlx5_0:1 dc_mlx5/mlx5_0:1 rc_mlx5/mlx5_1:1"},
        {"^ib,tcp", NULL, "self/memory sysv/memory posix/memory cma/memory "
                          "knem/memory cuda_ipc/cuda"},
        {"^shm", NULL, "self/memory tcp/lo tcp/eth0 rc_verbs/mlx5_0:1 "
                       "rc_mlx5/mlx5_0:1 ud_verbs/mlx5_0:1 ud_mlx5/mlx5_0:1 "
                       "dc_mlx5/mlx5_0:1 rc_mlx5/mlx5_1:1 cuda_ipc/cuda"},
        {"self,all", NULL, "self/memory tcp/lo tcp/eth0 sysv/memory "
                           "posix/memory cma/memory knem/memory "
                           "rc_verbs/mlx5_0:1 rc_mlx5/mlx5_0:1 "
                           "ud_verbs/mlx5_0:1 ud_mlx5/mlx5_0:1 "
                           "dc_mlx5/mlx5_0:1 rc_mlx5/mlx5_1:1 cuda_ipc/cuda"},
        {"nonexistent", NULL, ""},
        /* net_devices applies to network devices only, as UCX_NET_DEVICES */
        {NULL, "mlx5_0:1", "self/memory sysv/memory posix/memory cma/memory "
                           "knem/memory rc_verbs/mlx5_0:1 rc_mlx5/mlx5_0:1 "
                           "ud_verbs/mlx5_0:1 ud_mlx5/mlx5_0:1 "
                           "dc_mlx5/mlx5_0:1 cuda_ipc/cuda"},
        {"rc,tcp", "^lo,mlx5_0:1", "tcp/eth0 rc_mlx5/mlx5_1:1"},
        {"tcp,posix", "eth0", "tcp/eth0 posix/memory"},
        {"self,tcp", "memory", "self/memory"},
        {"shm", "none", "sysv/memory posix/memory cma/memory knem/memory"},
    };
    test_allow_list_t tls, devs;
    psel_resource_table_t table;
    char got[1024];
    size_t len;
    unsigned i, j;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        make_synthetic(&table);
        assert_int_equal(psel_resource_filter(&table,
                                              make_list(&tls, cases[i].tls),
                                              make_list(&devs,
                                                        cases[i].net_devices)),
                         UCS_OK);
        got[0] = '\0';
        for (j = 0; j < table.count; ++j) {
            len = strlen(got);
            snprintf(got + len, sizeof(got) - len, "%s%s/%s", j ? " " : "",
                     table.resources[j].tl_name, table.resources[j].dev_name);
        }
        if (strcmp(got, cases[i].expected)) {
            print_error("tls=%s net_devices=%s:\n  expected '%s'\n  got      "
                        "'%s'\n", cases[i].tls, cases[i].net_devices,
                        cases[i].expected, got);
            fail();
        }
        psel_resource_table_cleanup(&table);
    }
}

static void test_tl_allowed_aliases(void **state)
{
    test_allow_list_t al;

    assert_true(psel_resource_tl_allowed("xpmem", make_list(&al, "mm")));
    assert_false(psel_resource_tl_allowed("cma", make_list(&al, "mm")));
    assert_true(psel_resource_tl_allowed("cma", make_list(&al, "shm")));
    assert_false(psel_resource_tl_allowed("cma", make_list(&al, "^sm")));
    assert_true(psel_resource_tl_allowed("dc_mlx5", make_list(&al, "ib")));
    assert_false(psel_resource_tl_allowed("tcp", make_list(&al, "ib")));
    assert_true(psel_resource_tl_allowed("tcp", NULL));
    assert_true(psel_resource_tl_allowed("tcp", make_list(&al, "all")));
}


/* ibverbs port conversion, from constructed attributes */

static void make_attr(struct ibv_port_attr *attr, uint8_t speed, uint8_t width,
                      enum ibv_mtu mtu, uint8_t link_layer)
{
    memset(attr, 0, sizeof(*attr));
    attr->state        = IBV_PORT_ACTIVE;
    attr->active_speed = speed;
    attr->active_width = width;
    attr->active_mtu   = mtu;
    attr->link_layer   = link_layer;
}

static void test_ib_port_hdr_4x_is_200g(void **state)
{
    struct ibv_port_attr attr;
    psel_ib_port_info_t info;

    make_attr(&attr, 64 /* HDR */, 2 /* 4x */, IBV_MTU_4096,
              IBV_LINK_LAYER_INFINIBAND);
    assert_int_equal(psel_ib_port_info_from_attr(&attr, &info), UCS_OK);
    assert_true(info.valid);
    assert_int_equal(info.port_state, IBV_PORT_ACTIVE);
    assert_int_equal(info.link_layer, IBV_LINK_LAYER_INFINIBAND);
    assert_int_equal(info.active_mtu, 4096);
    assert_int_equal(info.active_speed, 500);
    assert_int_equal(info.active_width, 4);
    /* HDR's 50 Gb/s per lane is already the data rate: 4 x 50 Gb/s / 8 */
    assert_true(info.link_rate == 25e9);
}

static void test_ib_port_fdr_4x_is_56g_nominal_64b66b_data(void **state)
{
    struct ibv_port_attr attr;
    psel_ib_port_info_t info;
    double expected = 4 * 14.0625e9 * 64.0 / 66.0 / 8.0;

    make_attr(&attr, 16 /* FDR */, 2 /* 4x */, IBV_MTU_2048,
              IBV_LINK_LAYER_INFINIBAND);
    assert_int_equal(psel_ib_port_info_from_attr(&attr, &info), UCS_OK);
    assert_int_equal(info.active_mtu, 2048);
    assert_int_equal(info.active_speed, 140);
    assert_int_equal(info.active_width, 4);
    /* "56 Gb/s" is 4 x 14 nominal; the data rate after 64b/66b is lower */
    assert_int_equal(info.active_speed * info.active_width, 560);
    assert_true(info.link_rate > expected * 0.999999);
    assert_true(info.link_rate < expected * 1.000001);
    assert_true(info.link_rate * 8 < 56e9);
    assert_true(info.link_rate * 8 > 54.5e9);
}

static void test_ib_port_other_rates(void **state)
{
    static const struct {
        uint8_t  speed, width;
        unsigned speed_x10, lanes;
        double   gbps;        /* data rate, Gbit/s */
    } cases[] = {
        {1,   1,  25,   1,  2.0},    /* SDR 1x, 8b/10b */
        {2,   2,  50,   4,  16.0},   /* DDR 4x */
        {4,   2,  100,  4,  32.0},   /* QDR 4x: "40 Gb/s" nominal */
        {8,   2,  100,  4,  40.0},   /* FDR10 4x, 64b/66b */
        {32,  2,  250,  4,  100.0},  /* EDR 4x: 25.78125 x 64/66 = 25 */
        {32,  1,  250,  1,  25.0},   /* EDR 1x (RoCE 25G) */
        {64,  16, 500,  2,  100.0},  /* HDR 2x */
        {128, 2,  1000, 4,  400.0},  /* NDR 4x */
        {64,  8,  500,  12, 600.0},  /* HDR 12x */
        {64,  4,  500,  8,  400.0},  /* HDR 8x */
    };
    struct ibv_port_attr attr;
    psel_ib_port_info_t info;
    unsigned i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        make_attr(&attr, cases[i].speed, cases[i].width, IBV_MTU_1024,
                  IBV_LINK_LAYER_ETHERNET);
        assert_int_equal(psel_ib_port_info_from_attr(&attr, &info), UCS_OK);
        assert_int_equal(info.active_speed, cases[i].speed_x10);
        assert_int_equal(info.active_width, cases[i].lanes);
        assert_int_equal(info.active_mtu, 1024);
        assert_int_equal(info.link_layer, IBV_LINK_LAYER_ETHERNET);
        assert_true(fabs(info.link_rate * 8 / 1e9 - cases[i].gbps) < 1e-6);
    }
}

static void test_ib_port_unknown_codes_give_zero_rate(void **state)
{
    struct ibv_port_attr attr;
    psel_ib_port_info_t info;

    make_attr(&attr, 0, 0, 0, IBV_LINK_LAYER_UNSPECIFIED);
    attr.state = IBV_PORT_DOWN;
    assert_int_equal(psel_ib_port_info_from_attr(&attr, &info), UCS_OK);
    assert_true(info.valid);
    assert_int_equal(info.port_state, IBV_PORT_DOWN);
    assert_int_equal(info.active_mtu, 0);
    assert_int_equal(info.active_speed, 0);
    assert_int_equal(info.active_width, 0);
    assert_true(info.link_rate == 0);

    make_attr(&attr, 3 /* not a speed code */, 2, 7, IBV_LINK_LAYER_INFINIBAND);
    assert_int_equal(psel_ib_port_info_from_attr(&attr, &info), UCS_OK);
    assert_int_equal(info.active_mtu, 0);
    assert_true(info.link_rate == 0);

    assert_string_equal(psel_ib_port_state_name(IBV_PORT_ACTIVE), "active");
    assert_string_equal(psel_ib_link_layer_name(IBV_LINK_LAYER_ETHERNET),
                        "ethernet");
    assert_null(psel_ib_port_state_name(17));
    assert_null(psel_ib_link_layer_name(-1));
}

static void test_print_ib_facts(void **state)
{
    psel_resource_table_t table;
    struct ibv_port_attr attr;
    psel_resource_t res;
    char *text;

    psel_resource_table_init(&table);
    make_resource(&res, "mlx5_0", "rc_mlx5", "mlx5_0:1", UCT_DEVICE_TYPE_NET);
    make_attr(&attr, 64, 2, IBV_MTU_4096, IBV_LINK_LAYER_INFINIBAND);
    psel_ib_port_info_from_attr(&attr, &res.ib);
    res.cap_flags = UCT_IFACE_FLAG_CONNECT_TO_EP | UCT_IFACE_FLAG_AM_ZCOPY;
    res.am.max_zcopy = PSEL_SIZE_UNLIMITED;
    assert_int_equal(psel_resource_table_append(&table, &res), UCS_OK);

    text = print_to_string(&table);
    assert_non_null(strstr(text, "#       ibv port state: active\n"));
    assert_non_null(strstr(text, "#       ibv link layer: InfiniBand\n"));
    assert_non_null(strstr(text, "#       ibv active mtu: 4096\n"));
    assert_non_null(strstr(text, "4x HDR 50.0 Gb/s = 200.0 Gb/s nominal"));
    assert_non_null(strstr(text, "#             am_zcopy: unlimited, up to 0 "
                                 "iov\n"));
    assert_non_null(strstr(text, "#           connection: to ep\n"));
    assert_non_null(strstr(text, "#       error handling: none\n"));
    free(text);
    psel_resource_table_cleanup(&table);
}

static void test_flag_names_round_trip(void **state)
{
    unsigned set, bit;
    const char *name;

    for (set = 0; set < PSEL_FLAG_SET_LAST; ++set) {
        for (bit = 0; bit < 64; ++bit) {
            name = psel_flag_name(set, bit);
            if (name != NULL) {
                assert_int_equal(psel_flag_bit(set, name), bit);
            }
        }
    }
    assert_string_equal(psel_flag_name(PSEL_FLAG_SET_IFACE,
                                       ucs_ilog2(UCT_IFACE_FLAG_GET_ZCOPY)),
                        "get_zcopy");
    assert_string_equal(psel_flag_name(PSEL_FLAG_SET_MEM_TYPE,
                                       UCS_MEMORY_TYPE_HOST), "host");
    assert_int_equal(psel_flag_bit(PSEL_FLAG_SET_MD, "rkey_ptr"),
                     ucs_ilog2(UCT_MD_FLAG_RKEY_PTR));
    assert_int_equal(psel_flag_bit(PSEL_FLAG_SET_ATOMIC, "cswap"),
                     UCT_ATOMIC_OP_CSWAP);
    assert_int_equal(psel_flag_bit(PSEL_FLAG_SET_IFACE, "no_such_flag"), -1);
}

static int probe_bw_in_range(double bw)
{
    return (bw >= PSEL_COPY_PROBE_BW_MIN) && (bw <= PSEL_COPY_PROBE_BW_MAX);
}

/* The probe times this host: memcpy always, process_vm_readv exactly when
 * this process may call it (a container's seccomp may forbid it) */
static void test_copy_probe_times_this_host(void **state)
{
    char src[64] = "copy", dst[64];
    struct iovec local = {dst, sizeof(dst)}, remote = {src, sizeof(src)};
    int vm_read_allowed = process_vm_readv(getpid(), &local, 1, &remote, 1,
                                           0) == sizeof(src);
    psel_copy_probe_t probe;

    assert_int_equal(psel_copy_probe_run(&probe), UCS_OK);
    print_message("memcpy %.0f MB/s (c %.2f us), process_vm_readv %.0f MB/s "
                  "(c %.2f us)\n",
                  psel_copy_probe_bw(probe.memcpy_cost) / UCS_MBYTE,
                  probe.memcpy_cost.c * 1e6,
                  psel_copy_probe_bw(probe.vm_read_cost) / UCS_MBYTE,
                  probe.vm_read_cost.c * 1e6);
    assert_true(probe_bw_in_range(psel_copy_probe_bw(probe.memcpy_cost)));
    assert_true(probe.memcpy_cost.c >= 0);
    if (vm_read_allowed) {
        assert_true(probe_bw_in_range(psel_copy_probe_bw(probe.vm_read_cost)));
    } else {
        assert_true(probe.vm_read_cost.m == 0);
    }
}

/* Which of this host's transports take which timed figure (the figures are
 * made up: this is the rule, not the timing) */
static void test_copy_probe_apply_to_live_table(void **state)
{
    psel_copy_probe_t probe = {ucs_linear_func_make(1e-7, 1.0 / 40e9),
                               ucs_linear_func_make(1e-6, 1.0 / 10e9)};
    psel_resource_table_t table = live_table, tcp_only = live_table;
    const psel_resource_t *uct, *res;
    unsigned i, expected = 0;

    table.resources = malloc(sizeof(*table.resources) * table.count);
    assert_non_null(table.resources);
    memcpy(table.resources, live_table.resources,
           sizeof(*table.resources) * table.count);
    for (i = 0; i < table.count; ++i) {
        res       = &table.resources[i];
        expected += (res->dev_type == UCT_DEVICE_TYPE_SHM) &&
                    (!strcmp(res->tl_name, "cma") ||
                     (res->cap_flags & UCT_IFACE_FLAG_AM_BCOPY));
    }
    assert_true(expected >= 2); /* posix and sysv; tcp/lo beside them keeps
                                   UCT's figure */
    assert_int_equal(psel_copy_probe_apply(&probe, &table), expected);

    for (i = 0; i < table.count; ++i) {
        res = &table.resources[i];
        uct = &live_table.resources[i];
        if (!strcmp(res->tl_name, "posix") || !strcmp(res->tl_name, "sysv")) {
            assert_true(res->bw_dedicated == 40e9);
        } else if (!strcmp(res->tl_name, "cma")) {
            assert_true(res->bw_dedicated == 10e9);
        } else {
            assert_true(res->bw_dedicated == uct->bw_dedicated);
            assert_true(res->bw_shared == uct->bw_shared);
            assert_true(res->bw_advertised == 0);
            continue;
        }
        assert_true(res->bw_shared == 0);
        assert_true(res->bw_advertised == uct->bw_dedicated + uct->bw_shared);
    }

    /* tcp alone (UCX_PSEL_TLS=tcp): over loopback it takes memcpy's
     * figure, a kernel copy on each side; other devices keep UCT's */
    tcp_only.count     = 0;
    tcp_only.resources = malloc(sizeof(*tcp_only.resources) * table.count);
    assert_non_null(tcp_only.resources);
    for (i = 0; i < live_table.count; ++i) {
        if (!strcmp(live_table.resources[i].tl_name, "tcp")) {
            tcp_only.resources[tcp_only.count++] = live_table.resources[i];
        }
    }
    assert_int_equal(psel_copy_probe_apply(&probe, &tcp_only), 1); /* lo */
    for (i = 0; i < tcp_only.count; ++i) {
        res = &tcp_only.resources[i];
        if (!strcmp(res->dev_name, "lo")) {
            assert_true(res->bw_dedicated == 40e9);
            assert_true(res->bw_advertised > 0);
        } else {
            assert_true(res->bw_advertised == 0);
        }
    }
    free(tcp_only.resources);

    /* timed again, without process_vm_readv: UCT's figure stays beside */
    probe.memcpy_cost  = ucs_linear_func_make(0, 1.0 / 20e9);
    probe.vm_read_cost = ucs_linear_func_make(0, 0);
    psel_copy_probe_apply(&probe, &table);
    for (i = 0; i < table.count; ++i) {
        res = &table.resources[i];
        uct = &live_table.resources[i];
        if (!strcmp(res->tl_name, "posix")) {
            assert_true(res->bw_dedicated == 20e9);
            assert_true(res->bw_advertised ==
                        uct->bw_dedicated + uct->bw_shared);
        } else if (!strcmp(res->tl_name, "cma")) {
            assert_true(res->bw_dedicated == 10e9);
        }
    }
    free(table.resources);
}

/* UCX_PSEL_BCOPY_BW: "auto" is UCX's estimate until timed, then the timed
 * figure, which the live table takes too; a set value is kept, nothing is
 * timed and no transport changes */
static void test_copy_config(void **state)
{
    psel_resource_table_t table = live_table, file;
    psel_config_t config;

    table.resources = malloc(sizeof(*table.resources) * table.count);
    assert_non_null(table.resources);
    memcpy(table.resources, live_table.resources,
           sizeof(*table.resources) * table.count);

    unsetenv("UCX_PSEL_BCOPY_BW");
    assert_int_equal(psel_config_read(&config), UCS_OK);
    assert_int_equal(config.copy_bw_source, PSEL_BCOPY_BW_SOURCE_ESTIMATE);
    assert_true(config.copy_bw == PSEL_BCOPY_BW_ESTIMATE);
    psel_config_measure_copies(&config);
    assert_int_equal(config.copy_bw_source, PSEL_BCOPY_BW_SOURCE_MEASURED);
    assert_true(config.copy_bw == psel_copy_probe_bw(config.copies.memcpy_cost));
    assert_true(psel_config_apply_copies(&config, &table) >= 2);
    assert_true(table.copy_bw == config.copy_bw);
    psel_config_release(&config);

    /* a snapshot's timed figure, for "auto" only */
    psel_resource_table_init(&file);
    file.copy_bw = 3e10;
    assert_int_equal(psel_config_read(&config), UCS_OK);
    psel_config_copies_of_file(&config, &file);
    assert_int_equal(config.copy_bw_source, PSEL_BCOPY_BW_SOURCE_FILE);
    assert_true(config.copy_bw == 3e10);
    psel_config_release(&config);

    setenv("UCX_PSEL_BCOPY_BW", "7000MBs", 1);
    assert_int_equal(psel_config_read(&config), UCS_OK);
    assert_int_equal(config.copy_bw_source, PSEL_BCOPY_BW_SOURCE_SET);
    psel_config_measure_copies(&config);
    psel_config_copies_of_file(&config, &file);
    assert_int_equal(config.copy_bw_source, PSEL_BCOPY_BW_SOURCE_SET);
    assert_true(config.copy_bw == 7000.0 * UCS_MBYTE);
    memcpy(table.resources, live_table.resources,
           sizeof(*table.resources) * table.count);
    assert_int_equal(psel_config_apply_copies(&config, &table), 0);
    assert_true(table.resources[0].bw_advertised == 0);
    psel_config_release(&config);

    setenv("UCX_PSEL_BCOPY_BW", "-3MBs", 1);
    assert_int_equal(psel_config_read(&config), UCS_ERR_INVALID_PARAM);
    unsetenv("UCX_PSEL_BCOPY_BW");
    free(table.resources);
}

int main(void)
{
    const struct CMUnitTest live_tests[] = {
        cmocka_unit_test(test_discover_finds_self_tcp_lo_and_shm),
        cmocka_unit_test(test_discover_attributes_are_sane),
        cmocka_unit_test(test_discover_filter_live),
        cmocka_unit_test(test_discover_op_costs),
        cmocka_unit_test(test_print_live_like_ucx_info),
        cmocka_unit_test(test_copy_probe_times_this_host),
        cmocka_unit_test(test_copy_probe_apply_to_live_table),
        cmocka_unit_test(test_copy_config),
    };
    const struct CMUnitTest unit_tests[] = {
        cmocka_unit_test(test_table_find_and_duplicates),
        cmocka_unit_test(test_filter_allow_lists_and_aliases),
        cmocka_unit_test(test_tl_allowed_aliases),
        cmocka_unit_test(test_ib_port_hdr_4x_is_200g),
        cmocka_unit_test(test_ib_port_fdr_4x_is_56g_nominal_64b66b_data),
        cmocka_unit_test(test_ib_port_other_rates),
        cmocka_unit_test(test_ib_port_unknown_codes_give_zero_rate),
        cmocka_unit_test(test_print_ib_facts),
        cmocka_unit_test(test_flag_names_round_trip),
    };

    return cmocka_run_group_tests_name("resource_unit", unit_tests, NULL,
                                       NULL) |
           cmocka_run_group_tests_name("resource_live", live_tests, setup_live,
                                       teardown_live);
}
