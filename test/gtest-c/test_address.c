/*
 * Unit tests of the worker address: bootable selection and dedup over mock
 * resources, pack/unpack round trips, and rejection of malformed buffers.
 */
#include "test_util.h"

#include <lane_select/address.h>

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define BOOT_FLAGS (UCT_IFACE_FLAG_CONNECT_TO_IFACE | UCT_IFACE_FLAG_AM_SHORT)


/* ---- helpers ------------------------------------------------------------ */

static void mock_rsc(psel_resource_t *r, const char *md, const char *tl,
                     const char *dev, double lat, unsigned prio,
                     uint64_t flags)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->md_name, sizeof(r->md_name), "%s", md);
    snprintf(r->tl_name, sizeof(r->tl_name), "%s", tl);
    snprintf(r->dev_name, sizeof(r->dev_name), "%s", dev);
    r->dev_type     = UCT_DEVICE_TYPE_NET;
    r->latency.c    = lat;
    r->priority     = prio;
    r->cap_flags    = flags;
    r->bw_dedicated = 1e9;
}

static void mock_entry(psel_address_entry_t *e, unsigned i)
{
    unsigned k;

    memset(e, 0, sizeof(*e));
    snprintf(e->tl_name, sizeof(e->tl_name), "tl%u", i);
    snprintf(e->dev_name, sizeof(e->dev_name), "dev_%u:1", i);
    e->dev_type       = (psel_address_dev_type_t)(i % PSEL_ADDRESS_DEV_LAST);
    e->priority       = i * 7;
    e->caps           = (i * 0x1357) & PSEL_ADDRESS_CAP_ALL;
    e->rkey_size      = 16 + i;
    e->latency        = 1.1e-6 + i * 1e-9;
    e->bw_dedicated   = 12.5e9 / (i + 1);
    e->bw_shared      = 3.3e9 * i;
    e->overhead       = 4e-8;
    e->reg_cost_c     = 1.6e-5;
    e->reg_cost_m     = 6e-11 * i;
    e->dev_addr_len   = (i * 5) % 20;
    e->iface_addr_len = (i * 3) % 13 + 1;
    for (k = 0; k < e->dev_addr_len; ++k) {
        e->dev_addr[k] = (uint8_t)(i + k);
    }
    for (k = 0; k < e->iface_addr_len; ++k) {
        e->iface_addr[k] = (uint8_t)(0xa0 ^ (i * 3 + k));
    }
}

/* Compare every field; perf values travel as binary32 */
static void assert_entry_equal(const psel_address_entry_t *exp,
                               const psel_address_entry_t *act)
{
    assert_string_equal(exp->tl_name, act->tl_name);
    assert_string_equal(exp->dev_name, act->dev_name);
    assert_int_equal(exp->dev_type, act->dev_type);
    assert_int_equal(exp->priority, act->priority);
    assert_int_equal(exp->caps, act->caps);
    assert_int_equal(exp->rkey_size, act->rkey_size);
    assert_true((double)(float)exp->latency == act->latency);
    assert_true((double)(float)exp->bw_dedicated == act->bw_dedicated);
    assert_true((double)(float)exp->bw_shared == act->bw_shared);
    assert_true((double)(float)exp->overhead == act->overhead);
    assert_true((double)(float)exp->reg_cost_c == act->reg_cost_c);
    assert_true((double)(float)exp->reg_cost_m == act->reg_cost_m);
    /* documented precision: relative error <= 2^-24 */
    assert_true(fabs(act->latency - exp->latency) <= exp->latency * 0x1p-24);
    assert_int_equal(exp->dev_addr_len, act->dev_addr_len);
    assert_int_equal(exp->iface_addr_len, act->iface_addr_len);
    assert_memory_equal(exp->dev_addr, act->dev_addr, exp->dev_addr_len);
    assert_memory_equal(exp->iface_addr, act->iface_addr, exp->iface_addr_len);
}

static void round_trip(const psel_address_entry_t *entries, unsigned n)
{
    psel_address_t addr = {0};
    void          *buf  = NULL, *buf2 = NULL;
    size_t         len, len2;
    unsigned       i;

    assert_int_equal(psel_address_pack(entries, n, &buf, &len), UCS_OK);
    assert_int_equal(psel_address_unpack(buf, len, &addr), UCS_OK);
    assert_int_equal(addr.count, n);
    for (i = 0; i < n; ++i) {
        assert_entry_equal(&entries[i], &addr.entries[i]);
    }

    /* canonical: re-packing gives the same bytes */
    assert_int_equal(psel_address_pack(addr.entries, addr.count, &buf2, &len2),
                     UCS_OK);
    assert_int_equal(len, len2);
    assert_memory_equal(buf, buf2, len);

    psel_address_release(&addr);
    assert_null(addr.entries);
    assert_int_equal(addr.count, 0);
    free(buf);
    free(buf2);
}

/* A valid 3-entry buffer used by the bad-input tests */
static uint8_t *valid_buffer(size_t *len)
{
    psel_address_entry_t e[3];
    void                *buf;
    unsigned             i;

    for (i = 0; i < 3; ++i) {
        mock_entry(&e[i], i + 1);
    }
    assert_int_equal(psel_address_pack(e, 3, &buf, len), UCS_OK);
    return buf;
}

/* Unpack must fail with INVALID_PARAM, log @a needle and "offset", and leave
 * the output untouched */
static void expect_reject(const uint8_t *data, size_t len, const char *needle)
{
    psel_address_t addr;
    uint8_t       *exact = malloc(len ? len : 1);

    memcpy(exact, data, len);
    memset(&addr, 0x5a, sizeof(addr));
    psel_test_log_capture_start();
    assert_int_equal(psel_address_unpack(exact, len, &addr),
                     UCS_ERR_INVALID_PARAM);
    psel_assert_log_contains("worker address: ");
    psel_assert_log_contains("offset");
    if (needle != NULL) {
        psel_assert_log_contains(needle);
    }
    psel_test_log_capture_stop();
    assert_int_equal(addr.count, 0x5a5a5a5a);
    free(exact);
}

static void put_f32(uint8_t *p, float f)
{
    uint32_t u;

    memcpy(&u, &f, 4);
    p[0] = u; p[1] = u >> 8; p[2] = u >> 16; p[3] = u >> 24;
}


/* ---- round trips -------------------------------------------------------- */

static void test_round_trip_empty(void **state)
{
    void  *buf;
    size_t len;

    (void)state;
    round_trip(NULL, 0);
    assert_int_equal(psel_address_pack(NULL, 0, &buf, &len), UCS_OK);
    assert_int_equal(len, PSEL_ADDRESS_HDR_SIZE);
    assert_int_equal(((uint8_t*)buf)[0], PSEL_ADDRESS_MAGIC);
    assert_int_equal(((uint8_t*)buf)[1], PSEL_ADDRESS_VERSION);
    assert_int_equal(((uint8_t*)buf)[2], 0);
    free(buf);
}

static void test_round_trip_one_entry_has_documented_size(void **state)
{
    psel_address_entry_t e;
    void                *buf;
    size_t               len;

    (void)state;
    mock_entry(&e, 3);
    round_trip(&e, 1);
    assert_int_equal(psel_address_pack(&e, 1, &buf, &len), UCS_OK);
    assert_int_equal(len, PSEL_ADDRESS_HDR_SIZE + PSEL_ADDRESS_ENTRY_FIXED +
                          strlen(e.tl_name) + strlen(e.dev_name) +
                          e.dev_addr_len + e.iface_addr_len);
    free(buf);
}

static void test_round_trip_many_entries(void **state)
{
    psel_address_entry_t *e = calloc(PSEL_ADDRESS_MAX_ENTRIES, sizeof(*e));
    unsigned              i;

    (void)state;
    for (i = 0; i < PSEL_ADDRESS_MAX_ENTRIES; ++i) {
        mock_entry(&e[i], i);
    }
    round_trip(e, 17);
    round_trip(e, PSEL_ADDRESS_MAX_ENTRIES);
    free(e);
}

static void test_round_trip_max_sizes_and_extreme_values(void **state)
{
    psel_address_entry_t e[2];
    unsigned             k;

    (void)state;
    mock_entry(&e[0], 1);
    memset(e[0].tl_name, 'T', PSEL_NAME_MAX - 1);
    e[0].tl_name[PSEL_NAME_MAX - 1] = '\0';
    memset(e[0].dev_name, '~', PSEL_NAME_MAX - 1);
    e[0].dev_name[PSEL_NAME_MAX - 1] = '\0';
    e[0].dev_addr_len   = PSEL_ADDRESS_ADDR_MAX;
    e[0].iface_addr_len = PSEL_ADDRESS_ADDR_MAX;
    for (k = 0; k < PSEL_ADDRESS_ADDR_MAX; ++k) {
        e[0].dev_addr[k]   = k;
        e[0].iface_addr[k] = 255 - k;
    }
    e[0].caps      = PSEL_ADDRESS_CAP_ALL;
    e[0].priority  = 255;
    e[0].rkey_size = 65535;

    mock_entry(&e[1], 2);
    e[1].latency        = 0;
    e[1].bw_dedicated   = FLT_MAX;
    e[1].overhead       = FLT_MIN / 4; /* subnormal */
    e[1].dev_addr_len   = 0;
    e[1].iface_addr_len = 0;
    round_trip(e, 2);
}

static void test_pack_rejects_unrepresentable_entries(void **state)
{
    psel_address_entry_t e;
    void                *buf = (void*)0x1;
    size_t               len = 77;

    (void)state;
    psel_test_log_capture_start();

    mock_entry(&e, 1);
    e.latency = NAN;
    assert_int_equal(psel_address_pack(&e, 1, &buf, &len),
                     UCS_ERR_INVALID_PARAM);
    psel_assert_log_contains("latency");

    mock_entry(&e, 1);
    e.bw_shared = 1e300; /* above FLT_MAX */
    assert_int_equal(psel_address_pack(&e, 1, &buf, &len),
                     UCS_ERR_INVALID_PARAM);

    mock_entry(&e, 1);
    e.overhead = -1e-9;
    assert_int_equal(psel_address_pack(&e, 1, &buf, &len),
                     UCS_ERR_INVALID_PARAM);

    mock_entry(&e, 1);
    e.tl_name[1] = ' ';
    assert_int_equal(psel_address_pack(&e, 1, &buf, &len),
                     UCS_ERR_INVALID_PARAM);
    psel_assert_log_contains("transport name");

    mock_entry(&e, 1);
    e.dev_name[0] = '\0';
    assert_int_equal(psel_address_pack(&e, 1, &buf, &len),
                     UCS_ERR_INVALID_PARAM);

    mock_entry(&e, 1);
    e.caps = 0x8000;
    assert_int_equal(psel_address_pack(&e, 1, &buf, &len),
                     UCS_ERR_INVALID_PARAM);

    mock_entry(&e, 1);
    assert_int_equal(psel_address_pack(&e, PSEL_ADDRESS_MAX_ENTRIES + 1, &buf,
                                       &len), UCS_ERR_INVALID_PARAM);

    psel_test_log_capture_stop();
    assert_ptr_equal(buf, (void*)0x1);
    assert_int_equal(len, 77);
}

static void test_entry_from_resource_converts_flags_and_md(void **state)
{
    psel_resource_t      r;
    psel_address_entry_t e;
    uint8_t              dev[4] = {1, 2, 3, 4}, iface[2] = {9, 8};

    (void)state;
    mock_rsc(&r, "mlx5_0", "rc_mlx5", "mlx5_0:1", 6e-7, 30,
             BOOT_FLAGS | UCT_IFACE_FLAG_CONNECT_TO_EP |
             UCT_IFACE_FLAG_GET_ZCOPY | UCT_IFACE_FLAG_PUT_ZCOPY |
             UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE);
    r.dev_type     = UCT_DEVICE_TYPE_NET;
    r.bw_shared    = 2.5e10;
    r.overhead     = 4e-8;
    r.reg_cost.c   = 1.6e-5;
    r.reg_cost.m   = 6e-11;
    r.rkey_size    = 18;
    r.atomic64_ops = 1;

    assert_int_equal(psel_address_entry_from_resource(&r, dev, sizeof(dev),
                                                      iface, sizeof(iface), &e),
                     UCS_OK);
    assert_string_equal(e.tl_name, "rc_mlx5");
    assert_string_equal(e.dev_name, "mlx5_0:1");
    assert_int_equal(e.dev_type, PSEL_ADDRESS_DEV_NET);
    assert_int_equal(e.priority, 30);
    assert_int_equal(e.caps, PSEL_ADDRESS_CAP_CONNECT_TO_IFACE |
                             PSEL_ADDRESS_CAP_CONNECT_TO_EP |
                             PSEL_ADDRESS_CAP_AM_SHORT |
                             PSEL_ADDRESS_CAP_GET_ZCOPY |
                             PSEL_ADDRESS_CAP_PUT_ZCOPY |
                             PSEL_ADDRESS_CAP_ERRH_PEER_FAILURE |
                             PSEL_ADDRESS_CAP_ATOMIC64);
    assert_int_equal(e.rkey_size, 18);
    assert_true(e.reg_cost_c == 1.6e-5);
    assert_true(e.reg_cost_m == 6e-11);
    assert_true(e.bw_shared == 2.5e10);
    assert_int_equal(e.dev_addr_len, 4);
    assert_memory_equal(e.iface_addr, iface, 2);

    psel_test_log_capture_start();
    assert_int_equal(psel_address_entry_from_resource(&r, dev,
                                                      PSEL_ADDRESS_ADDR_MAX + 1,
                                                      iface, 2, &e),
                     UCS_ERR_INVALID_PARAM);
    psel_assert_log_contains("above the maximum");
    psel_test_log_capture_stop();
}


/* ---- bootable selection ------------------------------------------------- */

static void test_bootable_lowest_latency_per_device(void **state)
{
    psel_resource_t       r[7];
    psel_resource_table_t t = {.count = 7, .resources = r};
    unsigned              idx[7], n = 7;

    (void)state;
    mock_rsc(&r[0], "mlx5_0", "rc_mlx5", "mlx5_0:1", 6e-7, 0,
             UCT_IFACE_FLAG_CONNECT_TO_EP | UCT_IFACE_FLAG_AM_SHORT);
    mock_rsc(&r[1], "mlx5_0", "ud_mlx5", "mlx5_0:1", 8e-7, 0, BOOT_FLAGS);
    mock_rsc(&r[2], "mlx5_0", "dc_mlx5", "mlx5_0:1", 7e-7, 0, BOOT_FLAGS);
    mock_rsc(&r[3], "tcp", "tcp", "eth0", 1e-5, 0, BOOT_FLAGS);
    /* no AM short: not bootable even though it connects to iface */
    mock_rsc(&r[4], "cma", "cma", "memory", 1e-9, 0,
             UCT_IFACE_FLAG_CONNECT_TO_IFACE | UCT_IFACE_FLAG_GET_ZCOPY);
    mock_rsc(&r[5], "posix", "posix", "memory", 8e-8, 0, BOOT_FLAGS);
    mock_rsc(&r[6], "tcp", "tcp", "lo", 1e-5, 0, BOOT_FLAGS);

    assert_int_equal(psel_address_select_bootable(&t, idx, &n), UCS_OK);
    /* best first: posix (80ns), dc (700ns, rc is not bootable), then tcp
     * on eth0 and lo (equal latency and priority: by device name) */
    assert_int_equal(n, 4);
    assert_int_equal(idx[0], 5);
    assert_int_equal(idx[1], 2);
    assert_int_equal(idx[2], 3);
    assert_int_equal(idx[3], 6);
}

static void test_bootable_ties_priority_then_name(void **state)
{
    psel_resource_t       r[5];
    psel_resource_table_t t = {.count = 5, .resources = r};
    unsigned              idx[5], n = 5;

    (void)state;
    /* same latency on "memory": sysv and posix tie, posix wins by name */
    mock_rsc(&r[0], "sysv", "sysv", "memory", 8e-8, 0, BOOT_FLAGS);
    mock_rsc(&r[1], "posix", "posix", "memory", 8e-8, 0, BOOT_FLAGS);
    /* same latency on "hca": higher priority wins over name order */
    mock_rsc(&r[2], "mlx", "aaa", "hca", 1e-6, 10, BOOT_FLAGS);
    mock_rsc(&r[3], "mlx", "zzz", "hca", 1e-6, 50, BOOT_FLAGS);
    /* same tl and latency on "hca" under another MD: MD name decides */
    mock_rsc(&r[4], "alt", "zzz", "hca", 1e-6, 50, BOOT_FLAGS);

    assert_int_equal(psel_address_select_bootable(&t, idx, &n), UCS_OK);
    assert_int_equal(n, 2);
    assert_int_equal(idx[0], 1);
    assert_int_equal(idx[1], 4);
}

static void test_bootable_capacity_and_empty(void **state)
{
    psel_resource_t       r[2];
    psel_resource_table_t t = {.count = 2, .resources = r};
    unsigned              idx[2] = {99, 99}, n = 1;

    (void)state;
    mock_rsc(&r[0], "a", "a", "d0", 1e-6, 0, BOOT_FLAGS);
    mock_rsc(&r[1], "b", "b", "d1", 1e-6, 0, BOOT_FLAGS);
    assert_int_equal(psel_address_select_bootable(&t, idx, &n),
                     UCS_ERR_EXCEEDS_LIMIT);
    assert_int_equal(n, 1);
    assert_int_equal(idx[0], 99);

    r[0].cap_flags = r[1].cap_flags = UCT_IFACE_FLAG_CONNECT_TO_EP;
    n = 2;
    assert_int_equal(psel_address_select_bootable(&t, idx, &n), UCS_OK);
    assert_int_equal(n, 0);
}


/* ---- dedup -------------------------------------------------------------- */

typedef struct {
    unsigned calls;
} mock_reach_t;

/* Mock fabric: an entry's network is the first byte of its device address;
 * two entries reach each other when those match */
static int mock_is_reachable(const psel_address_entry_t *kept,
                             const psel_address_entry_t *cand, void *arg)
{
    mock_reach_t *m = arg;

    ++m->calls;
    assert_string_equal(kept->tl_name, cand->tl_name);
    return kept->dev_addr[0] == cand->dev_addr[0];
}

static void set_net(psel_address_entry_t *e, const char *tl, const char *dev,
                    uint8_t net)
{
    mock_entry(e, net);
    snprintf(e->tl_name, sizeof(e->tl_name), "%s", tl);
    snprintf(e->dev_name, sizeof(e->dev_name), "%s", dev);
    e->dev_addr_len = 1;
    e->dev_addr[0]  = net;
}

static void test_dedup_keeps_first_per_network(void **state)
{
    psel_address_entry_t e[6];
    mock_reach_t         m = {0};
    unsigned             n = 6;

    (void)state;
    set_net(&e[0], "rc", "mlx5_0:1", 1);
    set_net(&e[1], "tcp", "eth0", 1);   /* other tl: never replaced by rc */
    set_net(&e[2], "rc", "mlx5_1:1", 1);/* same fabric as mlx5_0: dropped */
    set_net(&e[3], "rc", "mlx5_2:1", 2);/* other fabric: kept */
    set_net(&e[4], "tcp", "eth1", 1);   /* same net as eth0: dropped */
    set_net(&e[5], "rc", "mlx5_3:1", 2);/* same as mlx5_2: dropped */

    assert_int_equal(psel_address_dedup(e, &n, mock_is_reachable, &m), UCS_OK);
    assert_int_equal(n, 3);
    assert_string_equal(e[0].dev_name, "mlx5_0:1");
    assert_string_equal(e[1].dev_name, "eth0");
    assert_string_equal(e[2].dev_name, "mlx5_2:1");
    /* only same-transport pairs are asked: 2:{0} 3:{0} 4:{1} 5:{0,3} */
    assert_int_equal(m.calls, 5);
}

static void test_dedup_nothing_reachable_keeps_all(void **state)
{
    psel_address_entry_t e[3];
    mock_reach_t         m = {0};
    unsigned             n = 3;

    (void)state;
    set_net(&e[0], "ud", "a", 1);
    set_net(&e[1], "ud", "b", 2);
    set_net(&e[2], "ud", "c", 3);
    assert_int_equal(psel_address_dedup(e, &n, mock_is_reachable, &m), UCS_OK);
    assert_int_equal(n, 3);
    assert_string_equal(e[2].dev_name, "c");

    n = 0;
    assert_int_equal(psel_address_dedup(NULL, &n, mock_is_reachable, &m),
                     UCS_OK);
    assert_int_equal(psel_address_dedup(e, &n, NULL, &m),
                     UCS_ERR_INVALID_PARAM);
}


/* ---- bad input ---------------------------------------------------------- */

static void test_unpack_rejects_every_truncation(void **state)
{
    size_t   len, cut;
    uint8_t *buf = valid_buffer(&len);

    (void)state;
    for (cut = 0; cut < len; ++cut) {
        expect_reject(buf, cut, NULL);
    }
    free(buf);
}

static void test_unpack_rejects_trailing_bytes(void **state)
{
    size_t   len;
    uint8_t *buf = valid_buffer(&len), *big = malloc(len + 5);

    (void)state;
    memcpy(big, buf, len);
    memset(big + len, 0, 5);
    expect_reject(big, len + 1, "trailing");
    expect_reject(big, len + 5, "5 trailing bytes");
    free(big);
    free(buf);
}

typedef struct {
    const char *name;
    size_t      offset;  /* absolute, in the first entry (starts at 3) */
    unsigned    width;   /* 1, 2 or 4 (float) */
    double      value;
    const char *needle;
} bad_field_t;

#define E0 PSEL_ADDRESS_HDR_SIZE

static const bad_field_t bad_fields[] = {
    {"magic",             0,       1, 0x5a,  "bad magic 0x5a at offset 0"},
    {"version 0",         1,       1, 0,     "unsupported version 0 at offset 1"},
    {"version 1 (older)", 1,       1, 1,     "unsupported version 1 at offset 1 (this build reads version 2): the peer runs another protosel"},
    {"version 3",         1,       1, 3,     "unsupported version 3"},
    {"count above max",   2,       1, 200,   "entry count 200 above the maximum"},
    {"count too large",   2,       1, 20,    "entry count 20 needs at least"},
    {"count one more",    2,       1, 4,     "entry 3: truncated header"},
    {"count one less",    2,       1, 2,     "trailing bytes"},
    {"tl_len zero",       E0 + 0,  1, 0,     "transport name length 0"},
    {"tl_len 64",         E0 + 0,  1, 64,    "transport name length 64"},
    {"tl_len 255",        E0 + 0,  1, 255,   "transport name length 255"},
    {"dev_len zero",      E0 + 1,  1, 0,     "device name length 0"},
    {"dev_len huge",      E0 + 1,  1, 200,   "device name length 200"},
    {"dev_addr oversize", E0 + 2,  1, 255,   "names and addresses need"},
    {"iface_addr oversz", E0 + 3,  1, 250,   "names and addresses need"},
    {"dev_type",          E0 + 4,  1, 4,     "unknown device type 4 at offset 7"},
    {"caps unknown bit",  E0 + 6,  2, 0x8001,"unknown capability bits 0x8000"},
    {"latency NaN",       E0 + 10, 4, NAN,   "latency nan is not a finite"},
    {"latency negative",  E0 + 10, 4, -1e-6, "latency"},
    {"bw_ded infinite",   E0 + 14, 4, INFINITY, "bw_dedicated inf"},
    {"bw_shared -0",      E0 + 18, 4, -0.0,  "bw_shared"},
    {"overhead -NaN",     E0 + 22, 4, -NAN,  "overhead"},
    {"reg_cost_c neg",    E0 + 26, 4, -5,    "reg_cost_c"},
    {"reg_cost_m NaN",    E0 + 30, 4, NAN,   "reg_cost_m nan is not a finite non-negative number at offset 33"},
    {"tl name space",     E0 + 34, 1, ' ',   "transport name has non-printable byte 0x20"},
    {"tl name NUL",       E0 + 35, 1, 0,     "transport name has non-printable byte 0x00"},
    {"dev name DEL",      E0 + 37, 1, 0x7f,  "device name has non-printable"},
    {"dev name high",     E0 + 37, 1, 0xc3,  "device name has non-printable byte 0xc3"},
};

static void test_unpack_rejects_bad_fields(void **state)
{
    size_t   len, i;
    uint8_t *buf = valid_buffer(&len), *bad = malloc(len);

    (void)state;
    /* layout sanity for the table: entry 0 is "tl1" on "dev_1:1" */
    assert_memory_equal(buf + E0 + 34, "tl1dev_1:1", 10);

    for (i = 0; i < sizeof(bad_fields) / sizeof(bad_fields[0]); ++i) {
        const bad_field_t *b = &bad_fields[i];

        print_message("bad field: %s\n", b->name);
        memcpy(bad, buf, len);
        if (b->width == 1) {
            bad[b->offset] = (uint8_t)b->value;
        } else if (b->width == 2) {
            bad[b->offset]     = (unsigned)b->value & 0xff;
            bad[b->offset + 1] = (unsigned)b->value >> 8;
        } else {
            put_f32(bad + b->offset, (float)b->value);
        }
        expect_reject(bad, len, b->needle);
    }
    free(bad);
    free(buf);
}

static void test_unpack_rejects_null_and_keeps_output(void **state)
{
    psel_address_t addr = {0};
    uint8_t        hdr[] = {PSEL_ADDRESS_MAGIC, PSEL_ADDRESS_VERSION, 0};

    (void)state;
    assert_int_equal(psel_address_unpack(NULL, 5, &addr), UCS_ERR_INVALID_PARAM);
    assert_int_equal(psel_address_unpack(hdr, 3, NULL), UCS_ERR_INVALID_PARAM);
    expect_reject(hdr, 0, "truncated header at offset 0");
    assert_int_equal(psel_address_unpack(hdr, 3, &addr), UCS_OK);
    assert_int_equal(addr.count, 0);
    assert_null(addr.entries);
    psel_address_release(&addr);
    psel_address_release(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_empty),
        cmocka_unit_test(test_round_trip_one_entry_has_documented_size),
        cmocka_unit_test(test_round_trip_many_entries),
        cmocka_unit_test(test_round_trip_max_sizes_and_extreme_values),
        cmocka_unit_test(test_pack_rejects_unrepresentable_entries),
        cmocka_unit_test(test_entry_from_resource_converts_flags_and_md),
        cmocka_unit_test(test_bootable_lowest_latency_per_device),
        cmocka_unit_test(test_bootable_ties_priority_then_name),
        cmocka_unit_test(test_bootable_capacity_and_empty),
        cmocka_unit_test(test_dedup_keeps_first_per_network),
        cmocka_unit_test(test_dedup_nothing_reachable_keeps_all),
        cmocka_unit_test(test_unpack_rejects_every_truncation),
        cmocka_unit_test(test_unpack_rejects_trailing_bytes),
        cmocka_unit_test(test_unpack_rejects_bad_fields),
        cmocka_unit_test(test_unpack_rejects_null_and_keeps_output),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
