/*
 * test_ucx_runtime: the pure parts of libprotosel_ucx.so. The cost-line
 * arithmetic of the protocol tier (pieces cut, scaled and offset; a UCP
 * protocol's ranges rebuilt with penalties where protosel's lines do not
 * reach), with hand-computed results; the UCX settings derived from
 * hand-made tables; the ucx.conf writer; and the UCP configuration helpers
 * on a configuration the real libucp reads (user-set detection, defaults).
 */
#include "test_util.h"

#include <ucx_runtime/lines.h>
#include <ucx_runtime/ucx_settings.h>
#include <lane_select/reachability.h>
#include <lane_select/ucs_compat.h>
#include <ucp/api/ucp.h>
#include <ucs/sys/string.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define NS 1e-9

static psel_perf_range_t range(size_t max, double c_ns, double m_ns)
{
    psel_perf_range_t r;

    r.max_length            = max;
    r.perf[PSEL_PERF_SINGLE] = ucs_linear_func_make(c_ns * NS, m_ns * NS);
    r.perf[PSEL_PERF_MULTI]  = ucs_linear_func_make(c_ns * NS / 2,
                                                    m_ns * NS / 2);
    return r;
}

static psel_rt_line_t line(size_t max, double c_ns, double m_ns)
{
    psel_perf_range_t r = range(max, c_ns, m_ns);
    psel_rt_line_t l;

    l.max_length = max;
    memcpy(l.perf, r.perf, sizeof(l.perf));
    return l;
}

static void assert_line(const psel_rt_line_t *l, size_t max, double c_ns,
                        double m_ns)
{
    assert_int_equal(l->max_length, max);
    assert_true(fabs(l->perf[PSEL_PERF_SINGLE].c - c_ns * NS) < 1e-18);
    assert_true(fabs(l->perf[PSEL_PERF_SINGLE].m - m_ns * NS) < 1e-21);
    assert_true(fabs(l->perf[PSEL_PERF_MULTI].c - c_ns * NS / 2) < 1e-18);
    assert_true(fabs(l->perf[PSEL_PERF_MULTI].m - m_ns * NS / 2) < 1e-21);
}

/* ranges 0..100, 101..1000, 1001..inf cut to 50..2000: three pieces,
 * the last cut at 2000 */
static void test_lines_add_cuts_to_sizes(void **state)
{
    psel_perf_range_t r[] = {range(100, 10, 1), range(1000, 20, 2),
                             range(SIZE_MAX, 30, 3)};
    psel_rt_line_t l[8];
    unsigned n;

    n = psel_rt_lines_add(l, 0, 8, r, 3, 50, 2000);
    assert_int_equal(n, 3);
    assert_line(&l[0], 100, 10, 1);
    assert_line(&l[1], 1000, 20, 2);
    assert_line(&l[2], 2000, 30, 3);

    /* from 200: the first range is skipped; appended after what is there */
    n = psel_rt_lines_add(l, 1, 8, r, 3, 200, 500);
    assert_int_equal(n, 2);
    assert_line(&l[1], 500, 20, 2);
}

/* owned sizes scaled (0.99 * (100 ns + 2 ns/B) = 99 + 1.98/B single,
 * 49.5 + 0.99/B multi), the others + 1 ns and half a byte of the steeper of
 * the line and the selected protocol's (10 ns/B single at 10..499); split at
 * both lists' ends */
static void test_lines_own(void **state)
{
    psel_rt_line_t in[]         = {line(1000, 100, 2), line(SIZE_MAX, 200, 4)};
    psel_rt_owner_t owners[]    = {{499, 0, {10 * NS, 0}}, {5000, 1, {0, 0}},
                                   {SIZE_MAX, 0, {0, 0}}};
    psel_rt_line_t out[8];
    unsigned n;

    n = psel_rt_lines_own(in, 2, 10, owners, 3, 0.99, 1.0, 1 * NS, out, 8);
    assert_int_equal(n, 4);
    /* 10..499: not owned; + 1 + 10/2 ns single, + 1 + 1/2 ns multi */
    assert_int_equal(out[0].max_length, 499);
    assert_true(fabs(out[0].perf[PSEL_PERF_SINGLE].c - 106 * NS) < 1e-18);
    assert_true(fabs(out[0].perf[PSEL_PERF_SINGLE].m - 2 * NS) < 1e-21);
    assert_true(fabs(out[0].perf[PSEL_PERF_MULTI].c - 51.5 * NS) < 1e-18);
    /* 500..1000 and 1001..5000: owned, scaled */
    assert_int_equal(out[1].max_length, 1000);
    assert_true(fabs(out[1].perf[PSEL_PERF_SINGLE].c - 99 * NS) < 1e-18);
    assert_true(fabs(out[1].perf[PSEL_PERF_SINGLE].m - 1.98 * NS) < 1e-21);
    assert_true(fabs(out[1].perf[PSEL_PERF_MULTI].c - 49.5 * NS) < 1e-18);
    assert_true(fabs(out[1].perf[PSEL_PERF_MULTI].m - 0.99 * NS) < 1e-21);
    assert_int_equal(out[2].max_length, 5000);
    assert_true(fabs(out[2].perf[PSEL_PERF_SINGLE].c - 198 * NS) < 1e-18);
    /* 5001..inf: not owned; + 1 ns and half a byte of its own 4 ns/B */
    assert_int_equal(out[3].max_length, SIZE_MAX);
    assert_true(fabs(out[3].perf[PSEL_PERF_SINGLE].c - 203 * NS) < 1e-18);
    assert_true(fabs(out[3].perf[PSEL_PERF_SINGLE].m - 4 * NS) < 1e-21);

    /* lines that end before the owners do: the output ends with them */
    n = psel_rt_lines_own(in, 1, 0, owners, 3, 1.0, 1.0, 1 * NS, out, 8);
    assert_int_equal(n, 2);
    assert_int_equal(out[1].max_length, 1000);
    /* no room */
    assert_int_equal(psel_rt_lines_own(in, 2, 10, owners, 3, 1.0, 1.0, 0, out, 3),
                     4);
}

/* With a 2% switch margin, a line where protosel selects another protocol
 * is raised by 1 / 0.98 before the delta: protosel keeps a protocol against
 * a line up to 2% below it, and so must UCP. By hand, 100 ns + 2 ns/B not
 * owned: 102.0408 ns + 2.0408 ns/B, + 1 ns, + half a byte of the steeper
 * of 2.0408 and the owner's 10 ns/B (5 ns): 108.0408 ns */
static void test_lines_own_margin(void **state)
{
    psel_rt_line_t in[]      = {line(SIZE_MAX, 100, 2)};
    psel_rt_owner_t owners[] = {{499, 0, {10 * NS, 0}},
                                {SIZE_MAX, 1, {0, 0}}};
    psel_rt_line_t out[4];

    assert_int_equal(psel_rt_lines_own(in, 1, 0, owners, 2, 1.0, 1 / 0.98,
                                       1 * NS, out, 4), 2);
    assert_int_equal(out[0].max_length, 499);
    assert_true(fabs(out[0].perf[PSEL_PERF_SINGLE].c - 108.0408163 * NS) <
                1e-16);
    assert_true(fabs(out[0].perf[PSEL_PERF_SINGLE].m - 2.0408163 * NS) <
                1e-16);
    /* owned: the line as it is */
    assert_true(fabs(out[1].perf[PSEL_PERF_SINGLE].c - 100 * NS) < 1e-18);
    assert_true(fabs(out[1].perf[PSEL_PERF_SINGLE].m - 2 * NS) < 1e-21);
}

static void test_lines_add_overflow(void **state)
{
    psel_perf_range_t r[] = {range(10, 1, 0), range(20, 2, 0),
                             range(SIZE_MAX, 3, 0)};
    psel_rt_line_t l[2];

    assert_int_equal(psel_rt_lines_add(l, 0, 2, r, 3, 0, SIZE_MAX), 3);
    /* once over, it stays over */
    assert_int_equal(psel_rt_lines_add(l, 3, 2, r, 1, 0, 5), 3);
}

/* UCP's protocol covers 0..inf in two ranges (0..8000, 8001..inf);
 * protosel's lines cover it all, cut at 5000: UCP's boundaries vanish */
static void test_lines_replace_full_cover(void **state)
{
    psel_rt_line_t orig[]   = {line(8000, 500, 5), line(SIZE_MAX, 600, 6)};
    psel_rt_line_t pieces[] = {line(5000, 100, 1), line(SIZE_MAX, 200, 2)};
    psel_rt_line_t out[8];

    assert_int_equal(psel_rt_lines_replace(orig, 2, 0, 0, pieces, 2, 1.0,
                                           out, 8, NULL), 2);
    assert_line(&out[0], 5000, 100, 1);
    assert_line(&out[1], SIZE_MAX, 200, 2);
}

/* protosel from 100 to 3000, UCP from 10 to 10000: UCP's own line, 1000
 * times as steep, plus the penalty at 10..99 and 3001..10000 */
static void test_lines_replace_penalty_outside(void **state)
{
    psel_rt_line_t orig[]   = {line(10000, 500, 5)};
    psel_rt_line_t pieces[] = {line(3000, 100, 1)};
    psel_rt_line_t out[8];
    unsigned n;

    n = psel_rt_lines_replace(orig, 1, 10, 100, pieces, 1, 1.0, out, 8, NULL);
    assert_int_equal(n, 3);
    assert_int_equal(out[0].max_length, 99);
    assert_true(fabs(out[0].perf[PSEL_PERF_SINGLE].c -
                     (1.0 + 1000 * 500 * NS)) < 1e-15);
    assert_true(fabs(out[0].perf[PSEL_PERF_MULTI].c -
                     (1.0 + 1000 * 250 * NS)) < 1e-15);
    assert_line(&out[1], 3000, 100, 1);
    assert_int_equal(out[2].max_length, 10000);
    assert_true(fabs(out[2].perf[PSEL_PERF_SINGLE].m - 1000 * 5 * NS) < 1e-18);
}

/* UCP's boundary inside a gap of protosel's lines keeps UCP's two lines,
 * each with the penalty; equal neighbours merge; each new line names the
 * range of UCP's it starts in (for what else UCP keeps of it) */
static void test_lines_replace_split_and_merge(void **state)
{
    psel_rt_line_t orig[]   = {line(1000, 10, 1), line(4000, 20, 2)};
    psel_rt_line_t pieces[] = {line(200, 7, 7), line(500, 7, 7)};
    psel_rt_line_t out[8];
    unsigned index[8];
    unsigned n;

    n = psel_rt_lines_replace(orig, 2, 0, 0, pieces, 2, 2.0, out, 8, index);
    assert_int_equal(n, 3);
    assert_int_equal(index[0], 0);
    assert_int_equal(index[1], 0);
    assert_int_equal(index[2], 1);
    assert_line(&out[0], 500, 7, 7);         /* two pieces, merged */
    assert_int_equal(out[1].max_length, 1000);
    assert_true(fabs(out[1].perf[PSEL_PERF_SINGLE].c - (2.0 + 1e4 * NS)) <
                1e-15);
    assert_int_equal(out[2].max_length, 4000);
    assert_true(fabs(out[2].perf[PSEL_PERF_SINGLE].c - (2.0 + 2e4 * NS)) <
                1e-15);
}

static void test_lines_replace_no_room(void **state)
{
    psel_rt_line_t orig[]   = {line(SIZE_MAX, 1, 1)};
    psel_rt_line_t pieces[] = {line(10, 1, 2), line(20, 1, 3),
                               line(SIZE_MAX, 1, 4)};
    psel_rt_line_t out[2];

    assert_int_equal(psel_rt_lines_replace(orig, 1, 0, 0, pieces, 3, 1.0,
                                           out, 2, NULL), 0);
    assert_int_equal(psel_rt_lines_replace(orig, 0, 0, 0, pieces, 3, 1.0,
                                           out, 2, NULL), 0);
}


/* ------------------------------------------------------------------------
 * Settings from hand-made tables
 */

static psel_proto_t fake_protos[] = {
    {.name = "egr/short"}, {.name = "egr/bcopy"}, {.name = "egr/zcopy"},
    {.name = "rndv/am"},   {.name = "rndv/get"},  {.name = "rndv/put"}
};
enum { SHORT, BCOPY, ZCOPY, RNDV_AM, RNDV_GET, RNDV_PUT, NUM_FAKE };

typedef struct {
    psel_select_table_t table;
    psel_select_elem_t  elems[8];
    const psel_proto_t *protos[NUM_FAKE];
    psel_proto_caps_t   caps[NUM_FAKE];
    ucs_status_t        status[NUM_FAKE];
} fake_table_t;

/* rows: pairs of (last size, protocol), the last ending at SIZE_MAX */
static void fake_table(fake_table_t *t, unsigned count, const size_t *max,
                       const unsigned *proto, const char *const *lanes)
{
    unsigned i;

    memset(t, 0, sizeof(*t));
    for (i = 0; i < NUM_FAKE; ++i) {
        t->protos[i] = &fake_protos[i];
        t->status[i] = UCS_OK;
        ucs_strncpy_zero(t->caps[i].lanes, lanes[i], sizeof(t->caps[i].lanes));
        ucs_strncpy_zero(t->caps[i].desc, lanes[i], sizeof(t->caps[i].desc));
    }
    for (i = 0; i < count; ++i) {
        t->elems[i].max_length  = max[i];
        t->elems[i].proto       = &fake_protos[proto[i]];
        t->elems[i].proto_index = proto[i];
    }
    t->table.buf_type   = psel_buffer_type(PSEL_OP_TAG_SEND, PSEL_DT_CONTIG,
                                           UCS_MEMORY_TYPE_HOST, 1);
    t->table.count      = count;
    t->table.elems      = t->elems;
    t->table.num_protos = NUM_FAKE;
    t->table.protos     = t->protos;
    t->table.caps       = t->caps;
    t->table.status     = t->status;
}

/* two tcp devices, both lanes of the endpoint */
static void fake_tcp(psel_resource_table_t *local, psel_resource_t *rsc,
                     psel_ep_lanes_t *lanes)
{
    memset(rsc, 0, 2 * sizeof(*rsc));
    strcpy(rsc[0].tl_name, "tcp");
    strcpy(rsc[0].dev_name, "lo");
    rsc[0].dev_type = UCT_DEVICE_TYPE_NET;
    strcpy(rsc[1].tl_name, "tcp");
    strcpy(rsc[1].dev_name, "eth0");
    rsc[1].dev_type = UCT_DEVICE_TYPE_NET;
    memset(local, 0, sizeof(*local));
    local->count     = 2;
    local->resources = rsc;
    memset(lanes, 0, sizeof(*lanes));
    lanes->num_lanes     = 2;
    lanes->info[0].local = 0;
    lanes->info[1].local = 1;
}

static void assert_setting(const psel_ucx_settings_t *s, const char *name,
                           const char *value, unsigned flags)
{
    const psel_ucx_setting_t *setting = psel_ucx_settings_find(s, name);

    if (setting == NULL) {
        print_error("no setting UCX_%s\n", name);
        fail();
    }
    assert_string_equal(setting->value, value);
    assert_int_equal(setting->flags, flags);
}

static const char *const tcp_lanes[NUM_FAKE] = {
    "tcp/lo", "tcp/lo", "tcp/lo", "tcp/lo", "", "tcp/lo+tcp/eth0"
};

/* The settings of a hand-made tcp table (initialized; clean up after) */
static void derive_tcp(psel_ucx_settings_t *s, unsigned count,
                       const size_t *max, const unsigned *proto,
                       int calibrated)
{
    const psel_select_table_t *tables[1];
    psel_resource_t rsc[2];
    psel_resource_table_t local;
    psel_ep_lanes_t lanes;
    fake_table_t t;

    fake_table(&t, count, max, proto, tcp_lanes);
    fake_tcp(&local, rsc, &lanes);
    tables[0] = &t.table;
    psel_ucx_settings_init(s);
    psel_ucx_settings_derive(s, &local, &lanes, tables, 1, PSEL_PEER_SAME_HOST,
                             calibrated);
}

/* UCX_RNDV_THRESH for a peer on this host: from UCX 1.17 a value per kind
 * of peer, the network's left to UCP */
#if PSEL_UCX_AT_LEAST(1, 17)
#define SAME_HOST_THRESH(_v) "intra:" _v ",inter:auto"
#else
#define SAME_HOST_THRESH(_v) _v
#endif

/* tcp: 0..304 short, 305..7063 zcopy, 7064..inf put over two lanes */
static void test_settings_tcp(void **state)
{
    const size_t max[]      = {304, 7063, SIZE_MAX};
    const unsigned proto[]  = {SHORT, ZCOPY, RNDV_PUT};
    psel_ucx_settings_t s;

    derive_tcp(&s, 3, max, proto, 0);

    assert_int_equal(s.count, 9);
    assert_setting(&s, "RNDV_THRESH", SAME_HOST_THRESH("7064"),
                   PSEL_UCX_SETTING_SELECTION);
    assert_setting(&s, "ZCOPY_THRESH", "305", PSEL_UCX_SETTING_SELECTION);
    assert_setting(&s, "RNDV_SCHEME", "put_zcopy", PSEL_UCX_SETTING_SELECTION);
    assert_setting(&s, "MAX_EAGER_RAILS", "1", PSEL_UCX_SETTING_SELECTION);
    assert_setting(&s, "MAX_RNDV_RAILS", "2", PSEL_UCX_SETTING_SELECTION);
    assert_setting(&s, "TLS", "tcp,self", PSEL_UCX_SETTING_RESOURCES);
    assert_setting(&s, "NET_DEVICES", "lo,eth0", PSEL_UCX_SETTING_RESOURCES);
    assert_setting(&s, "PROTO_ENABLE", "y", 0);
    /* the rendezvous schemes stay for UCP's receiver to fall back on */
    assert_setting(&s, "PROTOS", "^egr/*/bcopy,rndv/rkey_ptr,egr/offload/*",
                   PSEL_UCX_SETTING_SELECTION);
    assert_non_null(strstr(ucs_string_buffer_cstr(&s.notes),
                           "protosel selects, on attribute cost lines: "
                           "0..304 egr/short, 305..7063 egr/zcopy, "
                           "7064..inf rndv/put\n"));
    psel_ucx_settings_cleanup(&s);
}

/* eager again after rendezvous, and two rendezvous schemes: what UCP's
 * knobs cannot say is noted; the scheme is the last one's; 16 KiB is
 * written as UCX writes it */
static void test_settings_notes_what_ucx_cannot_say(void **state)
{
    const size_t max[]     = {16383, 65535, 131071, SIZE_MAX};
    const unsigned proto[] = {BCOPY, RNDV_AM, BCOPY, RNDV_GET};
    psel_ucx_settings_t s;
    const char *notes;

    derive_tcp(&s, 4, max, proto, 1);
    notes = ucs_string_buffer_cstr(&s.notes);

    assert_setting(&s, "RNDV_THRESH", SAME_HOST_THRESH("16K"),
                   PSEL_UCX_SETTING_SELECTION);
    assert_setting(&s, "ZCOPY_THRESH", "inf", PSEL_UCX_SETTING_SELECTION);
    assert_setting(&s, "RNDV_SCHEME", "get_zcopy", PSEL_UCX_SETTING_SELECTION);
    assert_non_null(strstr(notes, "on measured cost lines"));
    assert_non_null(strstr(notes, "protosel goes back to egr/bcopy at 65536, "
                                  "after rendezvous"));
    assert_non_null(strstr(notes, "protosel switches from rndv/am to "
                                  "rndv/get at 131072"));
    psel_ucx_settings_cleanup(&s);
}

/* no rendezvous at all */
static void test_settings_no_rndv(void **state)
{
    const size_t max[]     = {SIZE_MAX};
    const unsigned proto[] = {BCOPY};
    psel_ucx_settings_t s;

    derive_tcp(&s, 1, max, proto, 0);
    assert_setting(&s, "RNDV_THRESH", SAME_HOST_THRESH("inf"),
                   PSEL_UCX_SETTING_SELECTION);
    assert_setting(&s, "RNDV_SCHEME", "auto", PSEL_UCX_SETTING_SELECTION);
    assert_setting(&s, "MAX_RNDV_RAILS", "1", PSEL_UCX_SETTING_SELECTION);
    psel_ucx_settings_cleanup(&s);
}

static void test_settings_write_conf(void **state)
{
    char dir[] = "/tmp/test_ucx_runtime.XXXXXX", path[256], line[1024];
    const char *expect[] = {"UCX_RNDV_THRESH=" SAME_HOST_THRESH("inf"),
                            "UCX_RNDV_SCHEME=auto"};
    unsigned settings = 0, comments = 0, i;
    const size_t max[]     = {SIZE_MAX};
    const unsigned proto[] = {BCOPY};
    psel_ucx_settings_t s;
    FILE *f;

    assert_non_null(mkdtemp(dir));
    derive_tcp(&s, 1, max, proto, 0);
    assert_int_equal(psel_ucx_settings_write_conf(&s, dir, "test"), UCS_OK);

    snprintf(path, sizeof(path), "%s/ucx.conf", dir);
    f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#') {
            ++comments;
            continue;
        }
        assert_int_equal(strncmp(line, "UCX_", 4), 0);
        assert_non_null(strchr(line, '='));
        for (i = 0; i < 2; ++i) {
            if (!strcmp(line, expect[i])) {
                settings |= 1u << i;
            }
        }
    }
    fclose(f);
    assert_int_equal(settings, 3);
    assert_true(comments > 3);  /* header and notes */
    unlink(path);
    rmdir(dir);

    /* a directory that does not exist: an error, nothing written */
    psel_test_log_capture_start();
    assert_int_equal(psel_ucx_settings_write_conf(&s, "/no/such/dir", "test"),
                     UCS_ERR_IO_ERROR);
    psel_test_log_capture_stop();
    psel_assert_log_contains("cannot create /no/such/dir/ucx.conf.");
    psel_ucx_settings_cleanup(&s);
}


/* ------------------------------------------------------------------------
 * UCP's configuration, as the real libucp reads it
 */

/* settings_set(S, NAME, VALUE, FLAGS): one hand-made setting */
static void settings_set(psel_ucx_settings_t *s, const char *name,
                         const char *value, unsigned flags)
{
    s->settings[s->count].name  = name;
    s->settings[s->count].flags = flags;
    snprintf(s->settings[s->count].value, PSEL_UCX_VALUE_MAX, "%s", value);
    ++s->count;
}

/* UCX's knobs are global: only what serves both kinds of peers stays */
static void test_settings_merge(void **state)
{
    const unsigned sel = PSEL_UCX_SETTING_SELECTION;
    psel_ucx_settings_t shm, net;

    psel_ucx_settings_init(&shm);
    psel_ucx_settings_init(&net);
    settings_set(&shm, "PROTO_ENABLE", "y", 0);
    settings_set(&shm, "RNDV_THRESH", "7305", sel);
    settings_set(&shm, "ZCOPY_THRESH", "inf", sel);
    settings_set(&shm, "RNDV_SCHEME", "get_zcopy", sel);
    settings_set(&shm, "MAX_EAGER_RAILS", "1", sel);
    settings_set(&shm, "TLS", "sysv,cma,self", PSEL_UCX_SETTING_RESOURCES);
    settings_set(&shm, "PROTOS", "^egr/single/zcopy,egr/multi/zcopy,"
                 "rndv/put/zcopy,rndv/rkey_ptr", sel);
    settings_set(&net, "PROTO_ENABLE", "y", 0);
    settings_set(&net, "RNDV_THRESH", "65536", sel);
    settings_set(&net, "ZCOPY_THRESH", "inf", sel);
    settings_set(&net, "MAX_EAGER_RAILS", "1", sel);
    settings_set(&net, "TLS", "tcp,self", PSEL_UCX_SETTING_RESOURCES);
    settings_set(&net, "PROTOS", "^rndv/get/zcopy,rndv/put/zcopy,"
                 "rndv/rkey_ptr,egr/single/zcopy", sel);

    psel_ucx_settings_merge(&shm, "peers on this host", &net,
                            "peers over the network");
    /* equal values and the non-selection settings stay; the threshold and
     * the scheme (absent for the network: UCP's default) go */
    assert_int_equal(shm.count, 5);
    assert_string_equal(psel_ucx_settings_find(&shm, "PROTO_ENABLE")->value,
                        "y");
    assert_string_equal(psel_ucx_settings_find(&shm, "ZCOPY_THRESH")->value,
                        "inf");
    assert_string_equal(psel_ucx_settings_find(&shm, "MAX_EAGER_RAILS")->value,
                        "1");
    assert_string_equal(psel_ucx_settings_find(&shm, "TLS")->value,
                        "sysv,cma,self");
    assert_null(psel_ucx_settings_find(&shm, "RNDV_THRESH"));
    assert_null(psel_ucx_settings_find(&shm, "RNDV_SCHEME"));
    /* only what both leave out, in the first list's order */
    assert_string_equal(psel_ucx_settings_find(&shm, "PROTOS")->value,
                        "^egr/single/zcopy,rndv/put/zcopy,rndv/rkey_ptr");
    assert_non_null(strstr(ucs_string_buffer_cstr(&shm.notes),
                           "UCX_RNDV_THRESH: 7305 for peers on this host, "
                           "65536 for peers over the network"));
    assert_non_null(strstr(ucs_string_buffer_cstr(&shm.notes),
                           "UCX_RNDV_SCHEME: get_zcopy for peers on this "
                           "host, UCP's default for peers over the network"));

    /* nothing left out by both: UCX_PROTOS goes */
    psel_ucx_settings_cleanup(&net);
    psel_ucx_settings_init(&net);
    settings_set(&net, "PROTOS", "^rndv/get/zcopy", sel);
    psel_ucx_settings_merge(&shm, "a", &net, "b");
    assert_null(psel_ucx_settings_find(&shm, "PROTOS"));
    psel_ucx_settings_cleanup(&shm);
    psel_ucx_settings_cleanup(&net);
}

/* From UCX 1.17, UCX_RNDV_THRESH has a value per kind of peer: the merge
 * takes the threshold of peers on this host as "intra" and that of the
 * network as "inter" */
static void test_settings_merge_per_locality(void **state)
{
    const unsigned sel = PSEL_UCX_SETTING_SELECTION;
    psel_ucx_settings_t shm, net;

    psel_ucx_settings_init(&shm);
    psel_ucx_settings_init(&net);
    settings_set(&shm, "RNDV_THRESH", "intra:7305,inter:auto", sel);
    settings_set(&net, "RNDV_THRESH", "intra:auto,inter:65536", sel);
    psel_ucx_settings_merge(&shm, "peers on this host", &net,
                            "peers over the network");
    assert_string_equal(psel_ucx_settings_find(&shm, "RNDV_THRESH")->value,
                        "intra:7305,inter:65536");
    assert_non_null(strstr(ucs_string_buffer_cstr(&shm.notes),
                           "UCX_RNDV_THRESH: intra-node for peers on this "
                           "host, inter-node for peers over the network"));
    psel_ucx_settings_cleanup(&shm);
    psel_ucx_settings_cleanup(&net);
}

static void test_config_get_and_default(void **state)
{
    char value[PSEL_UCX_VALUE_MAX];
    ucp_config_t *config;

    unsetenv("UCX_MAX_RNDV_RAILS");
    assert_int_equal(ucp_config_read(NULL, NULL, &config), UCS_OK);
    assert_non_null(psel_ucx_config_table(NULL));
    assert_int_equal(psel_ucx_config_get(config, "MAX_RNDV_RAILS", value,
                                         sizeof(value)), UCS_OK);
    assert_string_equal(value, "2");
    /* ucp_config_modify() would take this name quietly; the table has not */
    assert_int_equal(psel_ucx_config_get(config, "NO_SUCH_SETTING", value,
                                         sizeof(value)), UCS_ERR_NO_ELEM);
    assert_int_equal(ucp_config_modify(config, "MAX_RNDV_RAILS", "1"), UCS_OK);
    assert_int_equal(psel_ucx_config_get(config, "MAX_RNDV_RAILS", value,
                                         sizeof(value)), UCS_OK);
    assert_string_equal(value, "1");
    ucp_config_release(config);
}

static void test_user_set(void **state)
{
    char source[256], dir[] = "/tmp/psel_user_set.XXXXXX", path[64];
    FILE *f;

    unsetenv("UCX_ZCOPY_THRESH");
    unsetenv("UCX_MAX_EAGER_RAILS");
    unsetenv("TESTPFX_UCX_MAX_EAGER_RAILS");
    assert_false(psel_ucx_setting_user_set("ZCOPY_THRESH", NULL, source,
                                           sizeof(source)));

    setenv("UCX_ZCOPY_THRESH", "16k", 1);
    assert_true(psel_ucx_setting_user_set("ZCOPY_THRESH", NULL, source,
                                          sizeof(source)));
    assert_string_equal(source, "UCX_ZCOPY_THRESH=16k");
    unsetenv("UCX_ZCOPY_THRESH");

    /* with the application's prefix */
    setenv("TESTPFX_UCX_ZCOPY_THRESH", "32k", 1);
    assert_false(psel_ucx_setting_user_set("ZCOPY_THRESH", NULL, NULL, 0));
    assert_true(psel_ucx_setting_user_set("ZCOPY_THRESH", "TESTPFX", source,
                                          sizeof(source)));
    assert_string_equal(source, "TESTPFX_UCX_ZCOPY_THRESH=32k");
    unsetenv("TESTPFX_UCX_ZCOPY_THRESH");

    /* a ucx.conf, read by UCX's own parser, counts whatever the value: 1
     * is UCP's default of MAX_EAGER_RAILS, and the user's choice still;
     * the application's prefix there wins over the plain name */
    assert_false(psel_ucx_setting_user_set("MAX_EAGER_RAILS", "TESTPFX",
                                           source, sizeof(source)));
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/ucx.conf", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "UCX_MAX_EAGER_RAILS=1\nTESTPFX_UCX_MAX_RNDV_RAILS=1\n"
            "UCX_MAX_RNDV_RAILS=2\n");
    fclose(f);
    ucs_config_parse_config_file(dir, "ucx.conf", 1);
    unlink(path);
    rmdir(dir);
    assert_true(psel_ucx_setting_user_set("MAX_EAGER_RAILS", NULL, source,
                                          sizeof(source)));
    assert_string_equal(source, "UCX_MAX_EAGER_RAILS=1 in a ucx.conf");
    assert_true(psel_ucx_setting_user_set("MAX_EAGER_RAILS", "TESTPFX",
                                          source, sizeof(source)));
    assert_string_equal(source, "UCX_MAX_EAGER_RAILS=1 in a ucx.conf");
    assert_true(psel_ucx_setting_user_set("MAX_RNDV_RAILS", "TESTPFX", source,
                                          sizeof(source)));
    assert_string_equal(source, "TESTPFX_UCX_MAX_RNDV_RAILS=1 in a ucx.conf");
    assert_true(psel_ucx_setting_user_set("MAX_RNDV_RAILS", NULL, source,
                                          sizeof(source)));
    assert_string_equal(source, "UCX_MAX_RNDV_RAILS=2 in a ucx.conf");
    /* the environment still wins over the file */
    setenv("UCX_MAX_EAGER_RAILS", "2", 1);
    assert_true(psel_ucx_setting_user_set("MAX_EAGER_RAILS", NULL, source,
                                          sizeof(source)));
    assert_string_equal(source, "UCX_MAX_EAGER_RAILS=2");
    unsetenv("UCX_MAX_EAGER_RAILS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_add_cuts_to_sizes),
        cmocka_unit_test(test_lines_own),
        cmocka_unit_test(test_lines_own_margin),
        cmocka_unit_test(test_lines_add_overflow),
        cmocka_unit_test(test_lines_replace_full_cover),
        cmocka_unit_test(test_lines_replace_penalty_outside),
        cmocka_unit_test(test_lines_replace_split_and_merge),
        cmocka_unit_test(test_lines_replace_no_room),
        cmocka_unit_test(test_settings_tcp),
        cmocka_unit_test(test_settings_notes_what_ucx_cannot_say),
        cmocka_unit_test(test_settings_no_rndv),
        cmocka_unit_test(test_settings_write_conf),
        cmocka_unit_test(test_settings_merge),
        cmocka_unit_test(test_settings_merge_per_locality),
        cmocka_unit_test(test_config_get_and_default),
        cmocka_unit_test(test_user_set),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
