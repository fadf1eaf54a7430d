/*
 * Tests of the `ucx_info -d` importer: the real fixtures with concrete values,
 * synthetic snippets of the other layouts (UCX 1.6 .. 1.19), malformed input,
 * and every fixture cut after each of its lines.
 */
#include "test_util.h"

#include <lane_select/resource_table.h>
#include <lane_select/snapshot.h>
#include <lane_select/ucx_info_import.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define MB          1048576.0
#define NSEC        1e-9
#define FIXTURE_000 "000-debian12-vm-ucx1.13.1.txt"
#define FIXTURE_001 "001-azure-hbv3-cx6vf-ucx1.17.txt"
#define FIXTURE_048 "048-centos8-cx5-fdr56-ucx1.9.txt"

#define assert_near(_a, _b) \
    assert_true(fabs((double)(_a) - (double)(_b)) <= \
                1e-9 * fabs((double)(_b)) + 1e-18)

static ucs_status_t import_text(const char *text, psel_resource_table_t *table)
{
    ucs_status_t status;
    FILE *in;

    in = fmemopen((void*)text, strlen(text), "r");
    assert_non_null(in);
    status = psel_ucx_info_import(in, "snippet", table);
    fclose(in);
    return status;
}

static void import_fixture(const char *name, psel_resource_table_t *table)
{
    memset(table, 0, sizeof(*table));
    assert_int_equal(psel_ucx_info_import_file(psel_test_fixture_path(name),
                                               table), UCS_OK);
}

static const psel_resource_t *
find(const psel_resource_table_t *table, const char *md, const char *tl,
     const char *dev)
{
    unsigned i;

    for (i = 0; i < table->count; ++i) {
        if (!strcmp(table->resources[i].md_name, md) &&
            !strcmp(table->resources[i].tl_name, tl) &&
            !strcmp(table->resources[i].dev_name, dev)) {
            return &table->resources[i];
        }
    }
    fail_msg("resource %s/%s/%s not found", md, tl, dev);
    return NULL;
}

#define ALL_AMO_OPS  (UCS_BIT(UCT_ATOMIC_OP_ADD) | UCS_BIT(UCT_ATOMIC_OP_AND) | \
                      UCS_BIT(UCT_ATOMIC_OP_OR) | UCS_BIT(UCT_ATOMIC_OP_XOR))
#define ALL_AMO_FOPS (ALL_AMO_OPS | UCS_BIT(UCT_ATOMIC_OP_SWAP) | \
                      UCS_BIT(UCT_ATOMIC_OP_CSWAP))

/* ---- fixtures ---- */

static void test_fixture_000_this_machine(void **state)
{
    (void)state;
    psel_resource_table_t table;
    const psel_resource_t *r;

    import_fixture(FIXTURE_000, &table);
    assert_int_equal(table.count, 6);
    assert_string_equal(table.ucx_version, "1.13.1");
    assert_non_null(strstr(table.origin, FIXTURE_000));

    r = find(&table, "tcp", "tcp", "lo");
    assert_string_equal(r->component, "tcp");
    assert_int_equal(r->dev_type, UCT_DEVICE_TYPE_NET);
    assert_near(r->bw_shared, 11.91 * MB);
    assert_near(r->bw_dedicated, 0);
    assert_near(r->latency.c, 10960 * NSEC);
    assert_near(r->latency.m, 0);
    assert_near(r->overhead, 50e-6);
    assert_int_equal(r->am.max_short, 8192);
    assert_int_equal(r->am.max_bcopy, 8192);
    assert_int_equal(r->am.max_zcopy, 65536);
    assert_int_equal(r->am.max_iov, 6);
    assert_int_equal(r->am.opt_zcopy_align, 1);
    assert_int_equal(r->am.align_mtu, 0);
    assert_int_equal(r->am_max_hdr, 8037);
    assert_int_equal(r->put.max_zcopy, 18446744073709551590ull);
    assert_int_equal(r->get.max_zcopy, 0);
    assert_int_equal(r->priority, 1);
    assert_int_equal(r->dev_num_paths, 1);
    assert_int_equal(r->max_num_eps, 256);
    assert_int_equal(r->device_addr_len, 18);
    assert_int_equal(r->iface_addr_len, 2);
    assert_int_equal(r->ep_addr_len, 10);
    assert_int_equal(r->cap_flags,
                     UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
                     UCT_IFACE_FLAG_AM_ZCOPY | UCT_IFACE_FLAG_PUT_ZCOPY |
                     UCT_IFACE_FLAG_CONNECT_TO_EP |
                     UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                     UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE |
                     UCT_IFACE_FLAG_EP_CHECK | UCT_IFACE_FLAG_EP_KEEPALIVE);
    assert_int_equal(r->md_flags, UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_RKEY);
    assert_int_equal(r->max_reg, PSEL_SIZE_UNLIMITED);
    /* UCX 1.13 prints no memory types: host is derived */
    assert_int_equal(r->reg_mem_types, UCS_BIT(UCS_MEMORY_TYPE_HOST));
    assert_near(find(&table, "tcp", "tcp", "eth0")->bw_shared, 11.27 * MB);
    assert_int_equal(find(&table, "tcp", "tcp", "eth0")->priority, 0);

    r = find(&table, "self", "self", "memory0");
    assert_int_equal(r->dev_type, UCT_DEVICE_TYPE_SELF);
    assert_near(r->bw_dedicated, 6911 * MB);
    assert_near(r->bw_shared, 0);
    assert_near(r->overhead, 10 * NSEC);
    assert_int_equal(r->put.max_short, 4294967295ull);
    assert_int_equal(r->put.max_bcopy, PSEL_SIZE_UNLIMITED);
    assert_int_equal(r->get.max_bcopy, PSEL_SIZE_UNLIMITED);
    assert_int_equal(r->max_num_eps, PSEL_SIZE_UNLIMITED);
    assert_int_equal(r->atomic32_ops, ALL_AMO_OPS);
    assert_int_equal(r->atomic64_ops, ALL_AMO_OPS);
    assert_int_equal(r->atomic32_fops, ALL_AMO_FOPS);
    assert_int_equal(r->atomic64_fops, ALL_AMO_FOPS);
    assert_true(r->cap_flags & UCT_IFACE_FLAG_ATOMIC_CPU);
    assert_int_equal(r->cap_flags & UCT_IFACE_FLAG_CONNECT_TO_EP, 0);
    assert_true(r->cap_flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE);

    r = find(&table, "posix", "posix", "memory");
    assert_int_equal(r->dev_type, UCT_DEVICE_TYPE_SHM);
    assert_int_equal(r->md_flags, UCT_MD_FLAG_ALLOC | UCT_MD_FLAG_NEED_RKEY |
                                  UCT_MD_FLAG_RKEY_PTR);
    assert_int_equal(r->max_alloc, 24683620ull * 1024);
    assert_int_equal(r->rkey_size, 24);
    assert_int_equal(r->am.max_short, 100);
    assert_int_equal(r->am.max_bcopy, 8256);

    r = find(&table, "cma", "cma", "memory");
    assert_near(r->reg_cost.c, 9 * NSEC);
    assert_near(r->reg_cost.m, 0);
    assert_int_equal(r->md_flags, UCT_MD_FLAG_REG);
    assert_int_equal(r->put.max_zcopy, PSEL_SIZE_UNLIMITED);
    assert_int_equal(r->get.max_iov, 16);
    assert_int_equal(r->cap_flags & UCT_IFACE_FLAG_EP_KEEPALIVE, 0);
    free(table.resources);
}

static void test_fixture_001_cx6_ucx117(void **state)
{
    (void)state;
    psel_resource_table_t table;
    const psel_resource_t *r;

    import_fixture(FIXTURE_001, &table);
    /* self, tcp x2, sysv, posix, 5 on mlx5_0:1, cma, knem; gga has no device */
    assert_int_equal(table.count, 12);
    assert_string_equal(table.ucx_version, "1.17.0");

    r = find(&table, "mlx5_0", "rc_mlx5", "mlx5_0:1");
    assert_string_equal(r->component, "ib");
    assert_string_equal(r->sys_dev, "mlx5_0");
    assert_int_equal(r->dev_type, UCT_DEVICE_TYPE_NET);
    assert_near(r->bw_shared, 23588.47 * MB);
    assert_near(r->latency.c, 600 * NSEC);
    assert_near(r->latency.m, 1 * NSEC);
    assert_near(r->overhead, 40 * NSEC);
    assert_int_equal(r->put.max_short, 220);
    assert_int_equal(r->put.max_bcopy, 8256);
    assert_int_equal(r->put.max_zcopy, 1ull << 30);
    assert_int_equal(r->put.max_iov, 14);
    assert_int_equal(r->put.opt_zcopy_align, 512);
    assert_int_equal(r->put.align_mtu, 4096);
    assert_int_equal(r->get.min_zcopy, 65);
    assert_int_equal(r->get.max_zcopy, 1ull << 30);
    assert_int_equal(r->am.max_short, 234);
    assert_int_equal(r->am.max_zcopy, 8254);
    assert_int_equal(r->am.max_iov, 3);
    assert_int_equal(r->am_max_hdr, 186);
    assert_int_equal(r->priority, 50);
    assert_int_equal(r->max_num_eps, 256);
    assert_int_equal(r->ep_addr_len, 10);
    assert_int_equal(r->iface_addr_len, 0);
    assert_true(r->cap_flags & UCT_IFACE_FLAG_CONNECT_TO_EP);
    assert_int_equal(r->cap_flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE, 0);
    assert_true(r->cap_flags & UCT_IFACE_FLAG_ATOMIC_DEVICE);
    assert_int_equal(r->cap_flags & (UCT_IFACE_FLAG_ERRHANDLE_ZCOPY_BUF |
                                     UCT_IFACE_FLAG_ERRHANDLE_REMOTE_MEM |
                                     UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE |
                                     UCT_IFACE_FLAG_EP_CHECK |
                                     UCT_IFACE_FLAG_EP_KEEPALIVE),
                     UCT_IFACE_FLAG_ERRHANDLE_ZCOPY_BUF |
                     UCT_IFACE_FLAG_ERRHANDLE_REMOTE_MEM |
                     UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE |
                     UCT_IFACE_FLAG_EP_CHECK);
    /* MD: "register: unlimited, dmabuf, cost: 16000 + 0.060 * N nsec" */
    assert_near(r->reg_cost.c, 16000 * NSEC);
    assert_near(r->reg_cost.m, 0.060 * NSEC);
    assert_int_equal(r->rkey_size, 8);
    assert_int_equal(r->md_flags, UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_RKEY |
                                  UCT_MD_FLAG_NEED_MEMH |
                                  UCT_MD_FLAG_INVALIDATE);
    assert_int_equal(r->reg_mem_types, UCS_BIT(UCS_MEMORY_TYPE_HOST));
    assert_int_equal(r->access_mem_types, UCS_BIT(UCS_MEMORY_TYPE_HOST));
    assert_int_equal(r->alloc_mem_types, 0);

    r = find(&table, "mlx5_0", "dc_mlx5", "mlx5_0:1");
    assert_near(r->latency.c, 660 * NSEC);
    assert_near(r->latency.m, 0);
    assert_int_equal(r->put.max_short, 172);
    assert_int_equal(r->put.max_iov, 11);
    assert_int_equal(r->max_num_eps, PSEL_SIZE_UNLIMITED);
    assert_int_equal(r->iface_addr_len, 7);
    assert_true(r->cap_flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE);
    assert_int_equal(r->cap_flags & UCT_IFACE_FLAG_CONNECT_TO_EP, 0);

    r = find(&table, "mlx5_0", "rc_verbs", "mlx5_0:1");
    assert_near(r->overhead, 75 * NSEC);
    assert_int_equal(r->atomic32_ops, 0);
    assert_int_equal(r->atomic32_fops, 0);
    assert_int_equal(r->atomic64_ops, UCS_BIT(UCT_ATOMIC_OP_ADD));
    assert_int_equal(r->atomic64_fops, UCS_BIT(UCT_ATOMIC_OP_ADD) |
                                       UCS_BIT(UCT_ATOMIC_OP_CSWAP));

    r = find(&table, "mlx5_0", "ud_mlx5", "mlx5_0:1");
    assert_near(r->latency.c, 630 * NSEC);
    assert_int_equal(r->am.max_bcopy, 4088);
    assert_int_equal(r->am_max_hdr, 132);
    assert_int_equal(r->cap_flags & (UCT_IFACE_FLAG_PUT_SHORT |
                                     UCT_IFACE_FLAG_PUT_ZCOPY |
                                     UCT_IFACE_FLAG_GET_ZCOPY), 0);

    r = find(&table, "knem", "knem", "memory");
    assert_near(r->reg_cost.c, 1200 * NSEC);
    assert_near(r->reg_cost.m, 0.007 * NSEC);
    assert_near(r->bw_dedicated, 13862 * MB);
    assert_int_equal(r->cap_flags & UCT_IFACE_FLAG_EP_CHECK, 0);

    r = find(&table, "sysv", "sysv", "memory");
    assert_int_equal(r->alloc_mem_types, UCS_BIT(UCS_MEMORY_TYPE_HOST));
    assert_int_equal(r->reg_mem_types, 0);
    free(table.resources);
}

static void test_fixture_048_cx5_ucx19(void **state)
{
    (void)state;
    psel_resource_table_t table;
    const psel_resource_t *r;

    import_fixture(FIXTURE_048, &table);
    /* posix, sysv, self, tcp x2, 5 on mlx5_0:1, cma; i40iw* have no devices */
    assert_int_equal(table.count, 11);
    assert_string_equal(table.ucx_version, "1.9.0");

    /* UCX 1.9 prints no "Type:": derived from the transport name */
    assert_int_equal(find(&table, "posix", "posix", "memory")->dev_type,
                     UCT_DEVICE_TYPE_SHM);
    assert_int_equal(find(&table, "self", "self", "memory")->dev_type,
                     UCT_DEVICE_TYPE_SELF);
    assert_int_equal(find(&table, "cma", "cma", "memory")->dev_type,
                     UCT_DEVICE_TYPE_SHM);
    assert_int_equal(find(&table, "tcp", "tcp", "ib0")->dev_type,
                     UCT_DEVICE_TYPE_NET);
    assert_near(find(&table, "tcp", "tcp", "ib0")->bw_shared, 6239.81 * MB);

    r = find(&table, "mlx5_0", "rc_mlx5", "mlx5_0:1");
    assert_int_equal(r->dev_type, UCT_DEVICE_TYPE_NET);
    assert_string_equal(r->sys_dev, "");
    assert_near(r->bw_shared, 6433.22 * MB);
    assert_near(r->latency.c, 700 * NSEC);
    assert_near(r->latency.m, 1 * NSEC);
    assert_int_equal(r->put.max_short, 2048);
    assert_int_equal(r->am.max_short, 2046);
    assert_int_equal(r->priority, 38);
    assert_int_equal(r->ep_addr_len, 7);
    assert_int_equal(r->cap_flags & UCT_IFACE_FLAG_EP_CHECK, 0);
    assert_near(r->reg_cost.c, 180 * NSEC);
    assert_near(r->reg_cost.m, 0);
    assert_int_equal(r->md_flags, UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_RKEY |
                                  UCT_MD_FLAG_NEED_MEMH);

    r = find(&table, "mlx5_0", "ud_verbs", "mlx5_0:1");
    assert_int_equal(r->am.max_iov, 1);
    assert_int_equal(r->am_max_hdr, 3952);
    assert_near(r->latency.c, 730 * NSEC);

    r = find(&table, "cma", "cma", "memory");
    assert_near(r->overhead, 400 * NSEC);
    assert_int_equal(r->cap_flags & (UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE |
                                     UCT_IFACE_FLAG_EP_CHECK), 0);
    free(table.resources);
}

/* ---- synthetic layouts ---- */

#define BLOCK_TAIL \
    "#           connection: to iface\n" \
    "#      device priority: 0\n" \
    "#       device address: 8 bytes\n" \
    "#       error handling: none\n"

static void test_layout_ucx16(void **state)
{
    (void)state;
    /* UCX 1.6: "ib/NAME" MDs, lowercase "component", one Transport with
     * several Device blocks, "N MB/sec", "priority", "8k" */
    static const char text[] =
        "$ ucx_info -d\n"
        "#\n"
        "# Memory domain: ib/mlx4_0\n"
        "#            component: ib\n"
        "#             register: unlimited, cost: 90 nsec\n"
        "#           remote key: 24 bytes\n"
        "#\n"
        "#   Transport: rc\n"
        "#\n"
        "#   Device: mlx4_0:1\n"
        "#\n"
        "#      capabilities:\n"
        "#            bandwidth: 3200.00 MB/sec\n"
        "#              latency: 800 nsec + 1 * N\n"
        "#             overhead: 75 nsec\n"
        "#             am_short: <= 8k\n"
        "#           connection: to ep\n"
        "#             priority: 10\n"
        "#       device address: 3 bytes\n"
        "#       error handling: peer failure\n"
        "#\n"
        "#   Device: mlx4_0:2\n"
        "#            bandwidth: 3100.00 MB/sec\n"
        "#              latency: 800 nsec\n"
        "#             overhead: 75 nsec\n"
        "#           connection: to ep\n"
        "#             priority: 10\n"
        "#       device address: 3 bytes\n"
        "#       error handling: none\n"
        "#\n"
        "# Memory domain: posix\n"
        "#            component: posix\n"
        "#             allocate: unlimited\n"
        "#   Transport: mm\n"
        "#   Device: posix\n"
        "#            bandwidth: 12179.00 MB/sec\n"
        "#              latency: 80 nsec\n"
        "#             overhead: 10 nsec\n"
        BLOCK_TAIL;
    psel_resource_table_t table = {0};
    const psel_resource_t *r;

    assert_int_equal(import_text(text, &table), UCS_OK);
    assert_int_equal(table.count, 3);
    r = find(&table, "mlx4_0", "rc", "mlx4_0:1");
    assert_string_equal(r->component, "ib");
    assert_int_equal(r->dev_type, UCT_DEVICE_TYPE_NET);
    /* one old number: network bandwidth is shared, like later versions */
    assert_near(r->bw_shared, 3200 * MB);
    assert_near(r->bw_dedicated, 0);
    assert_int_equal(r->am.max_short, 8192);
    assert_int_equal(r->priority, 10);
    assert_int_equal(r->dev_num_paths, 1);
    assert_int_equal(r->max_num_eps, PSEL_SIZE_UNLIMITED);
    assert_near(r->reg_cost.c, 90 * NSEC);
    /* UCX 1.6 prints the growth after the unit: 800 ns + 1 ns per endpoint */
    assert_near(r->latency.c, 800 * NSEC);
    assert_near(r->latency.m, 1 * NSEC);
    assert_near(psel_resource_latency(r, 1), 801 * NSEC);
    assert_near(psel_resource_latency(r, 4096), (800 + 4096) * NSEC);
    assert_near(find(&table, "mlx4_0", "rc", "mlx4_0:2")->bw_shared,
                3100 * MB);
    assert_near(find(&table, "mlx4_0", "rc", "mlx4_0:2")->latency.m, 0);
    r = find(&table, "posix", "mm", "posix");
    assert_int_equal(r->dev_type, UCT_DEVICE_TYPE_SHM);
    assert_near(r->bw_dedicated, 12179 * MB);
    assert_near(r->bw_shared, 0);
    free(table.resources);
}

static void test_layout_ucx18_bandwidth(void **state)
{
    (void)state;
    /* UCX 1.7-1.8: "DEDICATED + SHARED MB/sec" without "/ppn" */
    static const char text[] =
        "# Memory domain: tcp\n"
        "#     Component: tcp\n"
        "#   Transport: tcp\n"
        "#      Device: ib7\n"
        "#            bandwidth: 0.00 + 11142.51 MB/sec\n"
        "#              latency: 5206 nsec\n"
        "#             overhead: 50000 nsec\n"
        BLOCK_TAIL
        "# Memory domain: posix\n"
        "#     Component: posix\n"
        "#   Transport: posix\n"
        "#      Device: memory\n"
        "#            bandwidth: 12179.00 + 0.00 MB/sec\n"
        "#              latency: 80 nsec\n"
        "#             overhead: 10 nsec\n"
        BLOCK_TAIL;
    psel_resource_table_t table = {0};

    assert_int_equal(import_text(text, &table), UCS_OK);
    assert_int_equal(table.count, 2);
    assert_near(table.resources[0].bw_shared, 11142.51 * MB);
    assert_near(table.resources[0].bw_dedicated, 0);
    assert_near(table.resources[1].bw_dedicated, 12179 * MB);
    assert_near(table.resources[1].bw_shared, 0);
    assert_string_equal(table.ucx_version, "");
    free(table.resources);
}

static void test_layout_register_variants(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        size_t     max_reg;
        double     c, m;
    } cases[] = {
        {"unlimited, cost: 0 nsec", PSEL_SIZE_UNLIMITED, 0, 0},
        {"unlimited, cost: 16000 + 0.060 * N nsec", PSEL_SIZE_UNLIMITED,
         16000 * NSEC, 0.060 * NSEC},
        {"unlimited, dmabuf, cost: 180 nsec", PSEL_SIZE_UNLIMITED,
         180 * NSEC, 0},
        {"unlimited, dmabuf, 180 nsec", PSEL_SIZE_UNLIMITED, 180 * NSEC, 0},
        {"<= 1G, cost: 1200 + 0.007 * N nsec", 1ull << 30, 1200 * NSEC,
         0.007 * NSEC},
        {"unlimited", PSEL_SIZE_UNLIMITED, 0, 0},
    };
    char text[1024];
    psel_resource_table_t table;
    unsigned i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        snprintf(text, sizeof(text),
                 "# Memory domain: m\n"
                 "#     Component: c\n"
                 "#             register: %s\n"
                 "#   Transport: t\n"
                 "#      Device: d\n"
                 "#            bandwidth: 1.00/ppn + 2.00 MB/sec\n"
                 "#              latency: 1 nsec\n"
                 "#             overhead: 1 nsec\n" BLOCK_TAIL, cases[i].line);
        memset(&table, 0, sizeof(table));
        assert_int_equal(import_text(text, &table), UCS_OK);
        assert_int_equal(table.resources[0].max_reg, cases[i].max_reg);
        assert_near(table.resources[0].reg_cost.c, cases[i].c);
        assert_near(table.resources[0].reg_cost.m, cases[i].m);
        assert_true(table.resources[0].md_flags & UCT_MD_FLAG_REG);
        free(table.resources);
    }
}

/* The growth term is kept by a snapshot of the imported table */
static void check_growth_survives_snapshot(const psel_resource_table_t *table)
{
    psel_resource_table_t loaded;
    FILE *f = tmpfile();

    assert_non_null(f);
    assert_int_equal(psel_snapshot_save(table, f), UCS_OK);
    rewind(f);
    memset(&loaded, 0, sizeof(loaded));
    assert_int_equal(psel_snapshot_load(f, "growth", &loaded), UCS_OK);
    fclose(f);
    assert_int_equal(loaded.count, 1);
    assert_true(loaded.resources[0].latency.c == table->resources[0].latency.c);
    assert_true(loaded.resources[0].latency.m == table->resources[0].latency.m);
    free(loaded.resources);
}

/* Latency that grows with the number of endpoints N, in every layout and
 * with the spacing a hand-edited or re-wrapped dump may have */
static void test_layout_latency_growth(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        double     c, m; /* ns, ns per endpoint */
    } cases[] = {
        {"600 nsec + 1 * N",            600, 1},     /* UCX <= 1.7 */
        {"600 + 1.000 * N nsec",        600, 1},     /* UCX >= 1.8 */
        {"600nsec+1*N",                 600, 1},
        {"600 nsec+ 1 *N",              600, 1},
        {"  600   nsec   +   2.5   *   N  ", 600, 2.5},
        {"600 nsec + 1 nsec * N",       600, 1},
        {"600 nsec + 1 * N nsec",       600, 1},
        {"1 usec + 3 * N",              1000, 3000}, /* N takes C's unit */
        {"1 usec + 3 nsec * N",         1000, 3},
        {"600 + 0.001 * N nsec",        600, 0.001},
        {"700 nsec",                    700, 0},
    };
    char text[1024];
    psel_resource_table_t table;
    unsigned i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        print_message("latency: %s\n", cases[i].value);
        snprintf(text, sizeof(text),
                 "# Memory domain: m\n"
                 "#   Transport: t\n"
                 "#      Device: d\n"
                 "#            bandwidth: 1.00/ppn + 2.00 MB/sec\n"
                 "#              latency: %s\n"
                 "#             overhead: 1 nsec\n" BLOCK_TAIL,
                 cases[i].value);
        memset(&table, 0, sizeof(table));
        assert_int_equal(import_text(text, &table), UCS_OK);
        assert_near(table.resources[0].latency.c, cases[i].c * NSEC);
        assert_near(table.resources[0].latency.m, cases[i].m * NSEC);
        /* hand-computed: c + m * N at N = 64 */
        assert_near(psel_resource_latency(&table.resources[0], 64),
                    (cases[i].c + 64 * cases[i].m) * NSEC);
        check_growth_survives_snapshot(&table);
        free(table.resources);
    }
}

static void test_layout_newest_and_unknown_lines(void **state)
{
    (void)state;
    /* ucx_info -v version line, log lines, memory types with cuda, "inf" and
     * ">=" sizes, 32-bit-only atomics, unknown lines and list items */
    static const char text[] =
        "source: somewhere\n"
        "ucx_version: 1.0.0 (to be overridden)\n"
        "\n"
        "# Library version: 1.19.0\n"
        "[1643916642.835274] [host:1:0] tcp_iface.c:537 UCX DEBUG noise: x\n"
        "# Memory domain: mlx5_2\n"
        "#     Component: ib\n"
        "#             register: unlimited, dmabuf, 180 nsec\n"
        "#         memory types: host (access,reg,cache), cuda (reg), "
        "future_mem (reg)\n"
        "#           some new md line\n"
        "#      Transport: rc_mlx5\n"
        "#         Device: mlx5_2:1\n"
        "#           Type: network\n"
        "#  System device: 0000:41:00.0 (1)\n"
        "#            bandwidth: 48000.00/ppn + 0.00 MB/sec\n"
        "#              latency: 600 + 1.000 * N nsec\n"
        "#             overhead: 40 nsec\n"
        "#            put_zcopy: inf, up to 14 iov\n"
        "#            get_zcopy: >= 65, up to 14 iov\n"
        "#      tag_eager_short: <= 1K\n"
        "#           atomic_add: 32 bit\n"
        "#           connection: to ep, to future\n"
        "#      device priority: 50\n"
        "#     device num paths: 2\n"
        "#              max eps: inf\n"
        "#       device address: 3 bytes\n"
        "#       error handling: buffer (short,bcopy), remote access, "
        "future_flag\n"
        "#  < failed to open connection manager rdmacm >\n"
        "#      Transport: dc_mlx5\n"
        "#         Device: mlx5_2:1\n"
        "#   < failed to open interface >\n";
    psel_resource_table_t table = {0};
    const psel_resource_t *r;

    assert_int_equal(import_text(text, &table), UCS_OK);
    assert_int_equal(table.count, 1); /* dc_mlx5 failed to open: dropped */
    assert_string_equal(table.ucx_version, "1.19.0");
    r = &table.resources[0];
    assert_string_equal(r->sys_dev, "0000:41:00.0");
    assert_near(r->reg_cost.c, 180 * NSEC);
    assert_int_equal(r->reg_mem_types, UCS_BIT(UCS_MEMORY_TYPE_HOST) |
                                       UCS_BIT(UCS_MEMORY_TYPE_CUDA));
    assert_int_equal(r->access_mem_types, UCS_BIT(UCS_MEMORY_TYPE_HOST));
    assert_int_equal(r->put.max_zcopy, PSEL_SIZE_UNLIMITED);
    assert_int_equal(r->get.min_zcopy, 65);
    assert_int_equal(r->get.max_zcopy, PSEL_SIZE_UNLIMITED);
    assert_int_equal(r->atomic32_ops, UCS_BIT(UCT_ATOMIC_OP_ADD));
    assert_int_equal(r->atomic64_ops, 0);
    assert_int_equal(r->dev_num_paths, 2);
    assert_int_equal(r->max_num_eps, PSEL_SIZE_UNLIMITED);
    assert_int_equal(r->cap_flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE, 0);
    assert_int_equal(r->cap_flags & (UCT_IFACE_FLAG_ERRHANDLE_SHORT_BUF |
                                     UCT_IFACE_FLAG_ERRHANDLE_BCOPY_BUF |
                                     UCT_IFACE_FLAG_ERRHANDLE_ZCOPY_BUF |
                                     UCT_IFACE_FLAG_ERRHANDLE_REMOTE_MEM),
                     UCT_IFACE_FLAG_ERRHANDLE_SHORT_BUF |
                     UCT_IFACE_FLAG_ERRHANDLE_BCOPY_BUF |
                     UCT_IFACE_FLAG_ERRHANDLE_REMOTE_MEM);
    /* tag offload is not imported */
    assert_int_equal(r->cap_flags & UCT_IFACE_FLAG_TAG_EAGER_SHORT, 0);
    free(table.resources);
}

/* ---- layout variations of real dumps ---- */

#define FIXTURE_002 "002-gpu-cx6-hdr-cuda-ucx1.16.txt"
#define FIXTURE_003 "003-centos7-cx-edr-ucx1.6.txt"
#define FIXTURE_004 "004-rhel7-4xcx5-edr-nohash-ucx1.13.txt"

static char *read_fixture(const char *name, size_t *size_p)
{
    FILE *f = fopen(psel_test_fixture_path(name), "r");
    char *text;

    assert_non_null(f);
    text    = calloc(1, 1 << 20);
    *size_p = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    assert_true(*size_p > 0);
    return text;
}

/*
 * Rewrite every line after the fixture header (which ends at the first empty
 * line) as prefix + line; lines not starting with '#' get prefix + "#" +
 * line when @a add_hash. Returns the new text.
 */
static char *rewrite_lines(const char *text, const char *prefix, int add_hash)
{
    size_t cap = strlen(text) * 2 + (1 << 16), len = 0;
    char *out  = calloc(1, cap);
    const char *line = text, *nl;
    int in_header    = 1;

    for (; *line != '\0'; line = nl + 1) {
        nl = strchr(line, '\n');
        assert_non_null(nl);
        if (in_header) {
            len += snprintf(out + len, cap - len, "%.*s\n", (int)(nl - line),
                            line);
            in_header = (nl != line);
            continue;
        }
        len += snprintf(out + len, cap - len, "%s%s%.*s\n", prefix,
                        (add_hash && (*line != '#')) ? "#" : "",
                        (int)(nl - line), line);
        assert_true(len < cap);
    }
    return out;
}

static void assert_same_resources(const psel_resource_table_t *a,
                                  const psel_resource_table_t *b)
{
    unsigned i;

    assert_int_equal(a->count, b->count);
    for (i = 0; i < a->count; ++i) {
        assert_memory_equal(&a->resources[i], &b->resources[i],
                            sizeof(psel_resource_t));
    }
}

static void test_fixture_002_gpu_node(void **state)
{
    (void)state;
    psel_resource_table_t table;
    const psel_resource_t *r;

    import_fixture(FIXTURE_002, &table);
    assert_int_equal(table.count, 15);
    assert_string_equal(table.ucx_version, "1.16.0");

    /* cuda_copy: host memory registered only, cuda accessed and detected */
    r = find(&table, "cuda_cpy", "cuda_copy", "cuda");
    assert_int_equal(r->dev_type, UCT_DEVICE_TYPE_ACC);
    assert_int_equal(r->access_mem_types,
                     UCS_BIT(UCS_MEMORY_TYPE_CUDA) |
                     UCS_BIT(UCS_MEMORY_TYPE_CUDA_MANAGED));
    assert_int_equal(r->reg_mem_types, UCS_BIT(UCS_MEMORY_TYPE_HOST) |
                                       UCS_BIT(UCS_MEMORY_TYPE_CUDA) |
                                       UCS_BIT(UCS_MEMORY_TYPE_CUDA_MANAGED));
    assert_int_equal(r->detect_mem_types,
                     UCS_BIT(UCS_MEMORY_TYPE_CUDA) |
                     UCS_BIT(UCS_MEMORY_TYPE_CUDA_MANAGED));
    assert_near(r->latency.c, 8000 * NSEC);
    assert_near(r->bw_shared, 10000 * MB);

    /* cuda_ipc: printed as intra-node, but it moves only cuda memory */
    r = find(&table, "cuda_ipc", "cuda_ipc", "cuda");
    assert_int_equal(r->dev_type, UCT_DEVICE_TYPE_SHM);
    assert_int_equal(r->access_mem_types, UCS_BIT(UCS_MEMORY_TYPE_CUDA));
    assert_int_equal(r->reg_mem_types, UCS_BIT(UCS_MEMORY_TYPE_CUDA));
    assert_near(r->bw_shared, 300000 * MB);
    assert_near(r->overhead, 7000 * NSEC);

    r = find(&table, "gdr_copy", "gdr_copy", "cuda");
    assert_int_equal(r->access_mem_types, UCS_BIT(UCS_MEMORY_TYPE_CUDA));
    assert_int_equal(r->cap_flags & (UCT_IFACE_FLAG_PUT_SHORT |
                                     UCT_IFACE_FLAG_GET_SHORT),
                     UCT_IFACE_FLAG_PUT_SHORT | UCT_IFACE_FLAG_GET_SHORT);

    /* the HCA registers host memory only (GPUDirect RDMA disabled there) */
    r = find(&table, "mlx5_0", "rc_mlx5", "mlx5_0:1");
    assert_int_equal(r->reg_mem_types, UCS_BIT(UCS_MEMORY_TYPE_HOST));
    assert_near(r->reg_cost.c, 16000 * NSEC);
    assert_near(r->reg_cost.m, 0.060 * NSEC);
    assert_near(r->bw_shared, 23588.47 * MB);
    free(table.resources);
}

static void test_fixture_003_ucx16(void **state)
{
    (void)state;
    psel_resource_table_t table;
    const psel_resource_t *r;

    import_fixture(FIXTURE_003, &table);
    /* mm/posix, mm/sysv, self, tcp x2, rc, rc_mlx5, dc_mlx5, ud, ud_mlx5,
     * cm, cma, knem; rdmacm has no device */
    assert_int_equal(table.count, 13);
    assert_string_equal(table.ucx_version, "1.6");

    r = find(&table, "mlx5_0", "rc", "mlx5_0:1");
    assert_string_equal(r->component, "ib");
    assert_near(r->latency.c, 600 * NSEC);
    assert_near(r->latency.m, 1 * NSEC);
    assert_near(r->bw_shared, 11794.23 * MB);
    assert_int_equal(r->priority, 38);
    assert_int_equal(r->am.max_bcopy, 8191);
    r = find(&table, "mlx5_0", "dc_mlx5", "mlx5_0:1");
    assert_near(r->latency.m, 0);
    r = find(&table, "posix", "mm", "posix");
    assert_int_equal(r->dev_type, UCT_DEVICE_TYPE_SHM);
    assert_near(r->bw_dedicated, 12179 * MB);
    r = find(&table, "tcp", "tcp", "ib0");
    assert_near(r->bw_shared, 11737.53 * MB);
    free(table.resources);
}

/* A dump whose '#' were lost imports as the same dump with them */
static void test_fixture_004_without_hash(void **state)
{
    (void)state;
    psel_resource_table_t bare, hashed;
    char *text, *with_hash;
    size_t size;
    FILE *f;

    import_fixture(FIXTURE_004, &bare);
    assert_int_equal(bare.count, 19);
    assert_string_equal(bare.ucx_version, "1.13.0");
    assert_near(find(&bare, "mlx5_1", "rc_mlx5", "mlx5_1:1")->latency.m,
                1 * NSEC);
    assert_int_equal(find(&bare, "knem", "knem", "memory")->dev_type,
                     UCT_DEVICE_TYPE_SHM);

    text      = read_fixture(FIXTURE_004, &size);
    with_hash = rewrite_lines(text, "", 1);
    f         = fmemopen(with_hash, strlen(with_hash), "r");
    memset(&hashed, 0, sizeof(hashed));
    assert_int_equal(psel_ucx_info_import(f, "hashed", &hashed), UCS_OK);
    fclose(f);
    assert_same_resources(&bare, &hashed);
    free(hashed.resources);
    free(bare.resources);
    free(with_hash);
    free(text);
}

/* Prefixes that launchers and log collectors put before every line */
static void test_layout_line_prefixes(void **state)
{
    (void)state;
    static const char *prefixes[] = {
        "[1,0]<stdout>:", "node01: ", "18:18:27 ", "  \t", "[1,12]<stdout>: "
    };
    psel_resource_table_t plain, prefixed;
    char *text, *rewritten;
    unsigned i;
    size_t size;
    FILE *f;

    import_fixture(FIXTURE_001, &plain);
    text = read_fixture(FIXTURE_001, &size);
    for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); ++i) {
        print_message("prefix '%s'\n", prefixes[i]);
        rewritten = rewrite_lines(text, prefixes[i], 0);
        f         = fmemopen(rewritten, strlen(rewritten), "r");
        memset(&prefixed, 0, sizeof(prefixed));
        assert_int_equal(psel_ucx_info_import(f, "prefixed", &prefixed),
                         UCS_OK);
        fclose(f);
        assert_same_resources(&plain, &prefixed);
        free(prefixed.resources);
        free(rewritten);
    }
    free(text);
    free(plain.resources);
}

/* Blocks that lack lines: needed ones leave the block out (with a
 * warning), optional ones take defaults; unknown words are tolerated */
static void test_layout_missing_and_unknown_lines(void **state)
{
    (void)state;
    static const char text[] =
        "# Memory domain: m\n"
        "#   Transport: no_latency\n"
        "#      Device: d\n"
        "#            bandwidth: 1.00/ppn + 2.00 MB/sec\n"
        "#             overhead: 1 nsec\n" BLOCK_TAIL
        "#   Transport: bare_minimum\n"
        "#      Device: d\n"
        "#            bandwidth: 3.00/ppn + 0.00 GB/s\n"
        "#              latency: 5 usec\n"
        "#             overhead: 1 nsec\n"
        "#           connection: to iface\n"
        "#   Transport: future_tl\n"
        "#\tDevice:\tx0\n"
        "#\t\tType: photonic\n"
        "#   bandwidth:   7.00/ppn   +   0.00   MB/sec\n"
        "#     latency:500 nsec\n"
        "#    overhead: 2 nsec\n"
        "#  warp factor: 9\n"
        "#   connection: to ep, to wormhole\n"
        "#      error handling: none\n";
    psel_resource_table_t table = {0};
    const psel_resource_t *r;

    psel_test_log_capture_start();
    assert_int_equal(import_text(text, &table), UCS_OK);
    psel_assert_log_contains("snippet:3: leaving out no_latency/d: its block "
                             "has no 'latency:' line");
    psel_test_log_capture_stop();
    assert_int_equal(table.count, 2);

    r = &table.resources[0];
    assert_string_equal(r->tl_name, "bare_minimum");
    assert_near(r->bw_shared, 3 * 1024 * MB);
    assert_near(r->latency.c, 5000 * NSEC);
    assert_int_equal(r->priority, 0);
    assert_int_equal(r->device_addr_len, 0);
    assert_int_equal(r->dev_type, UCT_DEVICE_TYPE_NET);

    r = &table.resources[1];
    assert_string_equal(r->tl_name, "future_tl");
    assert_string_equal(r->dev_name, "x0");
    /* an unknown Type word: derived from the transport name (network) */
    assert_int_equal(r->dev_type, UCT_DEVICE_TYPE_NET);
    assert_near(r->bw_shared, 7 * MB);
    assert_near(r->latency.c, 500 * NSEC);
    assert_int_equal(r->cap_flags & (UCT_IFACE_FLAG_CONNECT_TO_EP |
                                     UCT_IFACE_FLAG_CONNECT_TO_IFACE),
                     UCT_IFACE_FLAG_CONNECT_TO_EP);
    free(table.resources);
}

/* Files of another kind say what they are and what to run instead */
static void test_other_kinds_of_file(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *expect;
    } cases[] = {
        {"+-------+------+\n| mpi ep_cfg[0] | tagged message by "
         "ucp_tag_send*() from host memory |\n|  0..2007 | eager short | "
         "rc_mlx5/mlx5_0:1 |\n| 2008..inf | rendezvous | rc_mlx5/mlx5_0:1 |\n",
         "this is a UCX_PROTO_INFO table (UCX's protocol selection), not "
         "`ucx_info -d` output; it shows UCX's selection, not the resources: "
         "pass it to `psel_info --compare-ucx FILE`"},
        {"#                tag_send: 0..<egr/short>..180..<egr/bcopy>..1076.."
         "<rndv>..(inf)\n",
         "this is `ucx_info -e` threshold lines"},
        {"+--------------+\n|              |       overhead (usec)        |   "
         "bandwidth (MB/s)  |\n|    Stage     | # iterations | 50.0%ile |\n"
         "Final:   1000   0.990  1680.187\n",
         "this is `ucx_perftest` output, not `ucx_info -d` output; it holds "
         "measurements"},
        {"# Library version: 1.16.0\n# Library path: /usr/lib/libucs.so.0\n"
         "# API headers version: 1.16.0\n",
         "this is `ucx_info -v` output"},
        {"UCX_TLS=all\nUCX_NET_DEVICES=all\n",
         "this is `ucx_info -c` settings"},
        {"hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n"
         "\tvendor_part_id:\t\t\t4123\n\tphys_port_cnt:\t\t\t1\n",
         "this is `ibv_devinfo` output"},
        {"CA 'mlx5_0'\n\tCA type: MT4119\n\tPort 1:\n\t\tLink layer: "
         "InfiniBand\n", "this is `ibstat` output"},
        {"protosel-snapshot 1\nucx_version = 1.13.1\n",
         "this is a protosel resource snapshot"},
        {"# protosel calibration\nprotosel-calibration 1\nhost vm -\n",
         "this is a protosel calibration file"},
    };
    psel_resource_table_t table;
    unsigned i;

    psel_test_log_capture_start();
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        print_message("kind case %u\n", i);
        memset(&table, 0, sizeof(table));
        psel_test_log_clear();
        assert_int_equal(import_text(cases[i].text, &table),
                         UCS_ERR_INVALID_PARAM);
        assert_null(table.resources);
        psel_assert_log_contains(cases[i].expect);
    }
    psel_test_log_capture_stop();
}

/* ---- malformed input ---- */

#define MD_HEAD "# Memory domain: m\n#     Component: c\n"
#define TL_HEAD "#   Transport: t\n#      Device: d\n"
#define GOOD_PERF "#            bandwidth: 1.00/ppn + 2.00 MB/sec\n" \
                  "#              latency: 1 nsec\n" \
                  "#             overhead: 1 nsec\n"
#define GOOD_RES  TL_HEAD GOOD_PERF BLOCK_TAIL

static void test_malformed_inputs(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        const char *text;
        const char *expect; /* must appear in the error message */
    } cases[] = {
        {"empty", "", "snippet: the file is empty; the output did not reach "
         "it: run `ucx_info -d > FILE`"},
        {"blanks and '#' only", "#\n  \n#\t\n",
         "snippet: the file is empty (nothing but blanks and '#'); the output"},
        {"header only", "ucx_version: 1.13\n\n", "snippet:2: expected at least"},
        {"nothing but prose", "hello\nworld: 1\n",
         "(run `ucx_info -d > FILE` on the machine whose resources you want "
         "and pass that file), found end of input"},
        {"md without transports", MD_HEAD "#  register: unlimited\n",
         "snippet:3: expected at least one"},
        {"attribute before md", "#            bandwidth: 1.00 MB/sec\n",
         "snippet:1:1: expected 'Memory domain:' before 'bandwidth:', found "
         "'#            bandwidth: 1.00 MB/sec'"},
        {"md attribute before md", "#  remote key: 8 bytes\n" MD_HEAD GOOD_RES,
         "snippet:1:1: expected 'Memory domain:'"},
        {"transport before md", TL_HEAD GOOD_PERF BLOCK_TAIL,
         "snippet:1:1: expected 'Memory domain:' before 'Transport:'"},
        {"device without transport", MD_HEAD "#      Device: d\n",
         "snippet:3:1: expected 'Transport: NAME' before 'Device:'"},
        {"transport without device at eof", MD_HEAD "#   Transport: t\n",
         "snippet:3: expected 'Device:' after 'Transport: t' of line 3, "
         "found end of input"},
        {"transport without device, next transport",
         MD_HEAD "#   Transport: t\n" GOOD_RES,
         "snippet:4:1: expected 'Device:' after 'Transport: t' of line 3, "
         "found '#   Transport: t'"},
        {"transport without device, attribute",
         MD_HEAD "#   Transport: t\n" GOOD_PERF,
         "snippet:4:1: expected 'Device:' after 'Transport: t'"},
        {"only block misses bandwidth", MD_HEAD TL_HEAD
         "#              latency: 1 nsec\n#  overhead: 1 nsec\n" BLOCK_TAIL,
         "snippet:4: leaving out t/d: its block has no 'bandwidth:' line"},
        {"truncated block", MD_HEAD TL_HEAD GOOD_PERF,
         "snippet:7: expected 'error handling:', the last line of a block, in "
         "the block of t/d (line 4): the input was cut, found end of input"},
        {"garbled bandwidth", MD_HEAD TL_HEAD
         "#            bandwidth: fast MB/sec\n",
         "snippet:5:25: expected 'bandwidth: 'SHARED/ppn + DEDICATED MB/sec', "
         "'DEDICATED + SHARED MB/sec' or 'N MB/sec', above 0 in total', found "
         "'fast MB/sec'"},
        {"zero bandwidth", MD_HEAD TL_HEAD
         "#            bandwidth: 0.00/ppn + 0.00 MB/sec\n",
         "snippet:5:25: expected 'bandwidth: 'SHARED/ppn + DEDICATED MB/sec', "
         "'DEDICATED + SHARED MB/sec' or 'N MB/sec', above 0 in total', found "
         "'0.00/ppn + 0.00 MB/sec'"},
        {"zero bandwidth, one number", MD_HEAD TL_HEAD
         "#            bandwidth: 0 MB/sec\n",
         "snippet:5:25: expected 'bandwidth:"},
        {"bandwidth without unit", MD_HEAD TL_HEAD
         "#            bandwidth: 1.00/ppn + 2.00\n",
         "snippet:5:40: expected 'bandwidth:"},
        {"bandwidth comma decimal", MD_HEAD TL_HEAD
         "#            bandwidth: 1,00/ppn + 2,00 MB/sec\n",
         "snippet:5:26: expected 'bandwidth:"},
        {"bandwidth nan", MD_HEAD TL_HEAD
         "#            bandwidth: nan/ppn + 2.00 MB/sec\n",
         "snippet:5:25: expected 'bandwidth:"},
        {"negative latency", MD_HEAD TL_HEAD
         "#              latency: -1 nsec\n",
         "snippet:5:25: expected 'latency: 'C nsec', 'C + M * N nsec' or "
         "'C nsec + M * N'', found '-1 nsec'"},
        {"latency without unit", MD_HEAD TL_HEAD
         "#              latency: 600 + 1.000 * N\n",
         "snippet:5:40: expected 'latency:"},
        {"latency growth without N", MD_HEAD TL_HEAD
         "#              latency: 600 nsec + 1 *\n",
         "snippet:5:39: expected 'latency: 'C nsec', 'C + M * N nsec' or "
         "'C nsec + M * N'', found end of line"},
        {"latency growth times M", MD_HEAD TL_HEAD
         "#              latency: 600 nsec + 1 * M\n",
         "snippet:5:40: expected 'latency:"},
        {"latency growth negative", MD_HEAD TL_HEAD
         "#              latency: 600 nsec + -1 * N\n",
         "snippet:5:36: expected 'latency:"},
        {"latency growth trailing text", MD_HEAD TL_HEAD
         "#              latency: 600 nsec + 1 * N per ep\n",
         "found 'per ep'"},
        {"overhead with growth", MD_HEAD TL_HEAD
         "#              latency: 600 nsec\n"
         "#             overhead: 10 nsec + 1 * N\n",
         "snippet:6:25: expected 'overhead: 'N nsec'', found '10 nsec + 1 * N'"},
        {"garbled size", MD_HEAD TL_HEAD "#   am_short: <= 8Q\n",
         "snippet:5:19: expected 'am_short: '<= SIZE', 'unlimited' or 'inf'', "
         "found 'Q'"},
        {"size overflow", MD_HEAD TL_HEAD
         "#   am_bcopy: <= 18446744073709551616\n",
         "snippet:5:18: expected 'am_bcopy:"},
        {"size suffix overflow", MD_HEAD TL_HEAD
         "#   am_bcopy: <= 17179869184G\n", "snippet:5:18: expected 'am_bcopy:"},
        {"inverted zcopy range", MD_HEAD TL_HEAD "#   get_zcopy: 1G..65\n",
         "snippet:5:20: expected 'get_zcopy:"},
        {"zero iov", MD_HEAD TL_HEAD "#   put_zcopy: <= 1G, up to 0 iov\n",
         "snippet:5:29: expected 'put_zcopy:"},
        {"bad atomic width", MD_HEAD TL_HEAD "#   atomic_add: 48 bit\n",
         "snippet:5:17: expected 'atomic_add: '32, 64 bit'"},
        {"bad type", MD_HEAD TL_HEAD "#   Type: 4th\n",
         "snippet:5:11: expected 'type: 'network'"},
        {"negative priority", MD_HEAD TL_HEAD "#  device priority: -1\n",
         "snippet:5:21: expected 'device priority: an integer', found '-1'"},
        {"garbled address", MD_HEAD TL_HEAD "#  device address: 8 bits\n",
         "snippet:5:22: expected 'device address: 'N bytes'', found 'bits'"},
        {"garbled error handling", MD_HEAD TL_HEAD
         "#  error handling: peer failure, 42\n",
         "snippet:5:34: expected 'error handling:"},
        {"garbled connection", MD_HEAD TL_HEAD "#  connection: to ep, #1\n",
         "snippet:5:23: expected 'connection:"},
        {"garbled register cost", MD_HEAD
         "#   register: unlimited, cost: 16000 + x * N nsec\n",
         "snippet:3:40: expected 'register:"},
        {"garbled rkey", MD_HEAD "#   remote key: many bytes\n",
         "snippet:3:17: expected 'remote key: 'N bytes'', found 'many bytes'"},
        {"garbled memory types", MD_HEAD "#   memory types: host (access\n",
         "snippet:3:19: expected 'memory types:"},
        {"duplicate attribute", MD_HEAD TL_HEAD GOOD_PERF
         "#              latency: 2 nsec\n",
         "snippet:8:1: expected one 'latency:' line per device block"},
        {"duplicate priority alias", MD_HEAD TL_HEAD
         "#  priority: 1\n#  device priority: 2\n",
         "snippet:6:1: expected one 'device priority:' line"},
        {"md attribute inside block", MD_HEAD TL_HEAD
         "#   register: unlimited\n",
         "snippet:5:1: expected memory domain attribute 'register:' before"},
        {"md sentence inside block", MD_HEAD TL_HEAD
         "#   rkey_ptr is supported\n",
         "snippet:5:1: expected 'rkey_ptr is supported' right after"},
        {"repeated transport and device", MD_HEAD GOOD_RES GOOD_RES,
         "snippet:20: expected one block per transport and device, but t/d "
         "(line 13) repeats, found end of input"},
        {"transport without name", MD_HEAD "#   Transport:\n",
         "snippet:3:15: expected 'Transport: NAME', found end of line"},
        {"name too long", "# Memory domain: "
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
         "snippet:1:18: expected 'Memory domain: NAME' with a name of 1..63"},
        {"last line cut inside its block", MD_HEAD GOOD_RES
         "# Memory domain: x\n#  Transport: t2\n#  Device: d2\n#  regis",
         "snippet:15: expected 'error handling:', the last line of a block, "
         "in the block of t2/d2 (line 14): the input was cut, found end of "
         "input"},
    };
    psel_resource_table_t table;
    unsigned i;

    psel_test_log_capture_start();
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        print_message("case: %s\n", cases[i].name);
        /* on error the table must stay untouched */
        memset(&table, 0x5a, sizeof(table));
        psel_test_log_clear();
        assert_int_equal(import_text(cases[i].text, &table),
                         UCS_ERR_INVALID_PARAM);
        assert_int_equal(table.count, 0x5a5a5a5a);
        psel_assert_log_contains(cases[i].expect);
    }
    psel_test_log_capture_stop();
}

static void test_malformed_nul_byte(void **state)
{
    (void)state;
    static const char text[] = MD_HEAD TL_HEAD "#  bandwidth: 1\0.00 MB/sec\n";
    psel_resource_table_t table;
    FILE *in;

    memset(&table, 0, sizeof(table));
    psel_test_log_capture_start();
    in = fmemopen((void*)text, sizeof(text) - 1, "r");
    assert_int_equal(psel_ucx_info_import(in, "nul", &table),
                     UCS_ERR_INVALID_PARAM);
    fclose(in);
    psel_assert_log_contains("nul:5:16: expected a text line without NUL "
                             "bytes, found a NUL byte");
    psel_test_log_capture_stop();
    assert_null(table.resources);
}

static void test_missing_file(void **state)
{
    (void)state;
    psel_resource_table_t table = {0};

    psel_test_log_capture_start();
    assert_int_equal(psel_ucx_info_import_file("/nonexistent/ucx_info.txt",
                                               &table), UCS_ERR_IO_ERROR);
    psel_assert_log_contains("/nonexistent/ucx_info.txt: cannot open "
                             "`ucx_info -d` text: No such file or directory");
    psel_test_log_capture_stop();
}

/* ---- truncation sweep ---- */

/*
 * The documented rule: input cut between two blocks imports the resources
 * read so far (those whose "error handling" line, the last of every block,
 * made it); input cut inside a block (after "Transport:" or "Device:" but
 * before "error handling") is an error naming the last line. In both cases
 * the resources that do come back are identical to the full import's.
 */
static int line_has(const char *line, const char *needle)
{
    const char *found = strstr(line, needle);

    return (found != NULL) && (memchr(line, '\n', found - line) == NULL);
}

/*
 * Import the first @a len bytes of @a text. If @a expect_ok is 1, it must
 * give @a count resources equal to the full import's, except that with
 * @a may_lose_flags the last may lack some of its flags (a cut inside the
 * words of a block's last line); if 0, it must fail; if -1, either.
 */
static void check_cut(const char *fixture, char *text, size_t len,
                      int expect_ok, unsigned count, int may_lose_flags,
                      const psel_resource_table_t *full)
{
    psel_resource_table_t part;
    psel_resource_t same;
    ucs_status_t status;
    unsigned i;
    FILE *f;

    f = fmemopen(text, len, "r");
    assert_non_null(f);
    memset(&part, 0, sizeof(part));
    psel_test_log_clear();
    status = psel_ucx_info_import(f, "cut", &part);
    fclose(f);
    if ((expect_ok == -1) && (status != UCS_OK)) {
        expect_ok = 0;
    }
    if (!expect_ok) {
        if (status != UCS_ERR_INVALID_PARAM) {
            fail_msg("%s cut at byte %zu (\"...%.20s\"): expected an error",
                     fixture, len, text + len - ((len < 20) ? len : 20));
        }
        assert_null(part.resources);
        return;
    }
    if (status != UCS_OK) {
        fail_msg("%s cut at byte %zu: expected %u resources, got error: %s",
                 fixture, len, count, psel_test_log_captured());
    }
    assert_int_equal(part.count, count);
    for (i = 0; i < count; ++i) {
        same           = full->resources[i];
        same.cap_flags = part.resources[i].cap_flags;
        if (!memcmp(&part.resources[i], &full->resources[i], sizeof(same)) ||
            (may_lose_flags && (i + 1 == count) &&
             !(part.resources[i].cap_flags & ~full->resources[i].cap_flags) &&
             !memcmp(&part.resources[i], &same, sizeof(same)))) {
            continue;
        }
        fail_msg("%s cut at byte %zu: resource %u differs from the full "
                 "import's", fixture, len, i);
    }
    free(part.resources);
}

static void check_truncation(const char *fixture)
{
    psel_resource_table_t full, part;
    char *text, *lines[2048], *cut, expect[64];
    unsigned nlines = 0, k, complete, i;
    int open_block;
    size_t size, len, line_len, cut_at;
    ucs_status_t status;
    FILE *f;

    import_fixture(fixture, &full);
    f = fopen(psel_test_fixture_path(fixture), "r");
    assert_non_null(f);
    text = calloc(1, 1 << 20);
    size = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    assert_true(size > 0);

    for (cut = text; (cut < text + size) && (nlines < 2048); ++nlines) {
        lines[nlines] = cut;
        cut           = strchr(cut, '\n');
        assert_non_null(cut);
        ++cut;
    }

    psel_test_log_capture_start();
    for (k = 0; k <= nlines; ++k) {
        /* the oracle: what a reader of the first k lines knows */
        complete   = 0;
        open_block = 0;
        for (i = 0; i < k; ++i) {
            if (line_has(lines[i], "Transport:") ||
                line_has(lines[i], "Device:")) {
                open_block = 1;
            } else if (line_has(lines[i], "error handling:")) {
                open_block = 0;
                ++complete;
            }
        }

        len = (k < nlines) ? (size_t)(lines[k] - text) : size;

        /* cut inside line k: an error, or what the k lines before give,
         * except that a block's last line may complete its block, and a
         * cut inside its words may lose flags (docs/lane-selection.md,
         * "Errors and cut input"); inside an open block always an error */
        for (i = 1; (k < nlines) && (i <= 3); ++i) {
            line_len = strchr(lines[k], '\n') - lines[k];
            cut_at   = (i * line_len) / 4;
            if (cut_at == 0) {
                continue;
            }
            if (line_has(lines[k], "error handling:")) {
                check_cut(fixture, text, len + cut_at, -1, complete + 1, 1,
                          &full);
            } else {
                /* an error (a value cut short) or the resources so far */
                check_cut(fixture, text, len + cut_at,
                          (!open_block && (complete > 0)) ? -1 : 0, complete,
                          0, &full);
            }
        }

        f   = (len > 0) ? fmemopen(text, len, "r") : fopen("/dev/null", "r");
        assert_non_null(f);
        memset(&part, 0, sizeof(part));
        psel_test_log_clear();
        status = psel_ucx_info_import(f, "cut", &part);
        fclose(f);

        if (open_block || (complete == 0)) {
            if (status != UCS_ERR_INVALID_PARAM) {
                fail_msg("%s cut after line %u: expected an error", fixture, k);
            }
            snprintf(expect, sizeof(expect), "cut:%u: expected", k);
            if (strstr(psel_test_log_captured(), "cut: the file is empty")) {
                /* so far nothing but blanks and '#' */
                for (i = 0; i < k; ++i) {
                    assert_true(lines[i][strspn(lines[i], "# \t\r")] == '\n');
                }
            } else {
                psel_assert_log_contains(expect);
            }
            assert_null(part.resources);
            continue;
        }
        if (status != UCS_OK) {
            fail_msg("%s cut after line %u: expected %u resources, got error: "
                     "%s", fixture, k, complete, psel_test_log_captured());
        }
        assert_int_equal(part.count, complete);
        for (i = 0; i < complete; ++i) {
            assert_memory_equal(&part.resources[i], &full.resources[i],
                                sizeof(psel_resource_t));
        }
        free(part.resources);

        /* the same cut without the newline of its last line: the same
         * resources (a file saved without a final newline is complete) */
        if (k > 0) {
            check_cut(fixture, text, len - 1, 1, complete, 0, &full);
        }
    }
    psel_test_log_capture_stop();
    free(text);
    free(full.resources);
}

/* A complete dump saved without its trailing '#' lines and final newline
 * (as an editor or a paste leaves it) imports whole */
static void test_complete_dump_without_final_newline(void **state)
{
    psel_resource_table_t full, part;
    size_t size;
    char *text;
    FILE *f;

    (void)state;
    import_fixture(FIXTURE_001, &full);
    f = fopen(psel_test_fixture_path(FIXTURE_001), "r");
    assert_non_null(f);
    text = calloc(1, 1 << 20);
    size = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    while ((size > 0) && (strchr("#\n \t", text[size - 1]) != NULL)) {
        --size;
    }
    assert_true(size > 0);
    assert_non_null(strstr(text + size - 40, "error handling: none"));

    f = fmemopen(text, size, "r");
    memset(&part, 0, sizeof(part));
    assert_int_equal(psel_ucx_info_import(f, "no-newline", &part), UCS_OK);
    fclose(f);
    assert_int_equal(part.count, full.count);
    assert_memory_equal(part.resources, full.resources,
                        full.count * sizeof(psel_resource_t));
    free(part.resources);
    free(full.resources);
    free(text);
}

static void test_truncated_fixture_000(void **state)
{
    (void)state;
    check_truncation(FIXTURE_000);
}

static void test_truncated_fixture_001(void **state)
{
    (void)state;
    check_truncation(FIXTURE_001);
}

static void test_truncated_fixture_048(void **state)
{
    (void)state;
    check_truncation(FIXTURE_048);
}

static void test_truncated_fixture_002(void **state)
{
    (void)state;
    check_truncation(FIXTURE_002);
}

static void test_truncated_fixture_003(void **state)
{
    (void)state;
    check_truncation(FIXTURE_003);
}

static void test_truncated_fixture_004(void **state)
{
    (void)state;
    check_truncation(FIXTURE_004);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_000_this_machine),
        cmocka_unit_test(test_fixture_001_cx6_ucx117),
        cmocka_unit_test(test_fixture_048_cx5_ucx19),
        cmocka_unit_test(test_fixture_002_gpu_node),
        cmocka_unit_test(test_fixture_003_ucx16),
        cmocka_unit_test(test_fixture_004_without_hash),
        cmocka_unit_test(test_layout_line_prefixes),
        cmocka_unit_test(test_layout_missing_and_unknown_lines),
        cmocka_unit_test(test_other_kinds_of_file),
        cmocka_unit_test(test_layout_ucx16),
        cmocka_unit_test(test_layout_ucx18_bandwidth),
        cmocka_unit_test(test_layout_register_variants),
        cmocka_unit_test(test_layout_latency_growth),
        cmocka_unit_test(test_layout_newest_and_unknown_lines),
        cmocka_unit_test(test_malformed_inputs),
        cmocka_unit_test(test_malformed_nul_byte),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_complete_dump_without_final_newline),
        cmocka_unit_test(test_truncated_fixture_000),
        cmocka_unit_test(test_truncated_fixture_001),
        cmocka_unit_test(test_truncated_fixture_048),
        cmocka_unit_test(test_truncated_fixture_002),
        cmocka_unit_test(test_truncated_fixture_003),
        cmocka_unit_test(test_truncated_fixture_004),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
