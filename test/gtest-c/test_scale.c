/*
 * Unit tests of src/scale and of selection at N peers:
 *  - Open MPI receive queue specs: every default, every error (message and
 *    column), the three example strings of Open MPI's notes at 512
 *    processes computed by hand;
 *  - the number of peers on real `ucx_info -d` dumps: the rc -> dc switch
 *    by latency growth, the max eps boundary (256 / 257), UCP's fallback
 *    when nothing scalable makes an endpoint, ties, UCX_PSEL_NUM_EPS;
 *  - the memory footprint, term by term by hand;
 *  - LogGP parameters and the alltoall estimate against a hand computation.
 */
#include "test_util.h"

#include <lane_select/reachability.h>
#include <lane_select/resource_table.h>
#include <lane_select/ucx_info_import.h>
#include <scale/footprint.h>
#include <scale/loggp.h>
#include <scale/rq_spec.h>
#include <ucp_proto_sel/ep_config.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define F000 "000-debian12-vm-ucx1.13.1.txt"
#define F001 "001-azure-hbv3-cx6vf-ucx1.17.txt"
#define F048 "048-centos8-cx5-fdr56-ucx1.9.txt"

static void assert_close(double got, double expected, double rel)
{
    if (fabs(got - expected) > rel * fabs(expected)) {
        print_error("expected %.12g, got %.12g\n", expected, got);
        fail();
    }
}

/* ------------------------------------------------------------------------
 * Receive queue specs
 */

static psel_rq_spec_t parse_ok(const char *text)
{
    char error[PSEL_RQ_ERROR_MAX] = "";
    psel_rq_spec_t spec;

    if (psel_rq_spec_parse(text, &spec, error, sizeof(error), NULL) !=
        UCS_OK) {
        print_error("'%s' rejected: %s\n", text, error);
        fail();
    }
    return spec;
}

/* Defaults: low_wm = num/2; P: window = low_wm/2, reserve = (2 num - 1) /
 * window; S: max_pending = low_wm/4. Given values are kept. */
static void test_rq_defaults(void **state)
{
    psel_rq_spec_t s;
    const psel_rq_queue_t *q;

    s = parse_ok("P,128,256");
    q = &s.queues[0];
    assert_int_equal(s.num_queues, 1);
    assert_int_equal(q->type, PSEL_RQ_PER_PEER);
    assert_int_equal(q->size, 128);
    assert_int_equal(q->num, 256);
    assert_int_equal(q->low_wm, 128);   /* 256 / 2 */
    assert_int_equal(q->window, 64);    /* 128 / 2 */
    assert_int_equal(q->reserve, 7);    /* 511 / 64 = 7.98 */
    assert_int_equal(q->num_given, 2);

    s = parse_ok("P,128,100,30");
    q = &s.queues[0];
    assert_int_equal(q->low_wm, 30);    /* given */
    assert_int_equal(q->window, 15);    /* 30 / 2 */
    assert_int_equal(q->reserve, 13);   /* 199 / 15 = 13.3 */

    s = parse_ok("P,128,100,30,4");
    assert_int_equal(s.queues[0].window, 4);
    assert_int_equal(s.queues[0].reserve, 49);  /* 199 / 4 = 49.75 */

    s = parse_ok("P,128,100,30,4,0");
    assert_int_equal(s.queues[0].reserve, 0);   /* given, even 0 */
    assert_int_equal(s.queues[0].num_given, 5);

    s = parse_ok("S,2048,100");
    q = &s.queues[0];
    assert_int_equal(q->type, PSEL_RQ_SHARED);
    assert_int_equal(q->low_wm, 50);     /* 100 / 2 */
    assert_int_equal(q->max_pending, 12); /* 50 / 4 = 12.5 */
    assert_int_equal(q->window, 0);
    assert_int_equal(q->reserve, 0);

    s = parse_ok("S,2048,100,60");
    assert_int_equal(s.queues[0].max_pending, 15);  /* 60 / 4 */
    s = parse_ok("S,2048,100,60,3");
    assert_int_equal(s.queues[0].max_pending, 3);

    /* several queues; columns of their letters */
    s = parse_ok("P,128,256,128,16:S,1024,256,128,32");
    assert_int_equal(s.num_queues, 2);
    assert_int_equal(s.queues[0].column, 1);
    assert_int_equal(s.queues[1].column, 18);
    assert_int_equal(s.queues[0].reserve, 31);  /* 511 / 16 */
}

/* The full form spells every default out and parses back the same */
static void test_rq_format(void **state)
{
    char text[256];
    psel_rq_spec_t s = parse_ok("P,128,256,128,16:P,1024,32,16:S,4096,9");

    psel_rq_spec_format(&s, text, sizeof(text));
    assert_string_equal(text, "P,128,256,128,16,31:P,1024,32,16,8,7:"
                              "S,4096,9,4,1");
}

/* Every error: the message says what and where, the column points at it */
static void test_rq_errors(void **state)
{
    static const struct {
        const char *text;
        size_t      column;
        const char *message;
    } cases[] = {
        {"", 1, "column 1: empty specification"},
        {"Q,128,256", 1, "queue 1 (column 1): expected the queue type P "
                         "(per-peer) or S (shared), got 'Q'"},
        {"p,128,256", 1, "expected the queue type P"},
        {"X,128,256", 1, "X (XRC) queues are not supported"},
        {"P128,256", 2, "expected ',' after the queue type P, got '128'"},
        {"P,128", 6, "a P queue needs at least P,<size>,<num_buffers>, got "
                     "end of input"},
        {"S", 2, "expected ',' after the queue type S, got end of input"},
        {"P,,256", 3, "expected size as a decimal number, got ','"},
        {"P,-128,256", 3, "expected size as a decimal number, got '-128'"},
        {"P, 128,256", 3, "expected size as a decimal number"},
        {"P,12x,256", 5, "expected ',' or ':' after size, got 'x'"},
        {"P,0x80,256", 4, "expected ',' or ':' after size"},
        {"P,128,256 ", 10, "expected ',' or ':' after num_buffers"},
        {"P,2147483648,2", 3, "size is too large (at most 1073741824)"},
        {"P,128,99999999999999999999", 7, "num_buffers is too large"},
        {"P,0,256", 3, "size must be at least 1 byte"},
        {"P,128,0", 7, "num_buffers must be at least 1"},
        {"P,128,256,256", 11, "low_watermark 256 must be below num_buffers "
                              "256"},
        {"P,128,2", 7, "window_size is 0 (the default is low_watermark/2 = "
                       "1/2)"},
        {"P,128,256,128,0", 15, "window_size is 0"},
        {"S,128,4", 7, "max_pending_sends is 0 (the default is "
                       "low_watermark/4 = 2/4)"},
        {"S,128,256,128,0", 15, "max_pending_sends is 0"},
        {"P,128,256,128,16,31,1", 21, "a P queue takes at most 5 values "
                                      "after its type"},
        {"S,128,256,128,32,1", 18, "a S queue takes at most 4 values"},
        {"P,128,256:", 11, "queue 2 (column 11): empty queue"},
        {"P,128,256::S,1024,8", 11, "empty queue"},
        {":P,128,256", 1, "queue 1 (column 1): empty queue"},
        {"P,128,256:S,128,256", 13, "queue 2 (column 13): size 128 is not "
                                    "larger than queue 1's 128: sizes must "
                                    "ascend"},
        {"P,4096,32:P,1024,32", 13, "size 1024 is not larger than queue 1's "
                                    "4096"},
        {"P,128,256,128,16:S,1024,256,128,32:S,512,256", 38,
         "queue 3 (column 38): size 512 is not larger than queue 2's 1024"},
    };
    char error[PSEL_RQ_ERROR_MAX];
    psel_rq_spec_t spec, untouched;
    size_t column;
    unsigned i;

    for (i = 0; i < ucs_static_array_size(cases); ++i) {
        memset(&spec, 0x5a, sizeof(spec));
        untouched = spec;
        column    = 0;
        error[0]  = '\0';
        assert_int_equal(psel_rq_spec_parse(cases[i].text, &spec, error,
                                            sizeof(error), &column),
                         UCS_ERR_INVALID_PARAM);
        if ((strstr(error, cases[i].message) == NULL) ||
            (column != cases[i].column)) {
            print_error("'%s': expected column %zu '%s', got column %zu "
                        "'%s'\n", cases[i].text, cases[i].column,
                        cases[i].message, column, error);
            fail();
        }
        assert_memory_equal(&spec, &untouched, sizeof(spec));
    }

    /* 16 queues fit, the 17th does not */
    {
        char text[512];
        size_t len = 0;
        for (i = 0; i < PSEL_RQ_MAX_QUEUES + 1; ++i) {
            len += snprintf(text + len, sizeof(text) - len, "%sS,%u,8",
                            i ? ":" : "", 128u << i);
        }
        assert_int_equal(psel_rq_spec_parse(text, &spec, error, sizeof(error),
                                            &column), UCS_ERR_INVALID_PARAM);
        assert_non_null(strstr(error, "too many queues (at most 16)"));
    }
}

/*
 * Open MPI's three examples for a fully connected 512-process job: 511
 * peers. By hand:
 *   P,128,256,128,16: reserve (512 - 1) / 16 = 31, 511 x 287 x 128 =
 *                     18,772,096 B
 *   S,1024,256:       256 x 1024  =    262,144 B
 *   S,4096,256:       256 x 4096  =  1,048,576 B
 *   S,65536,256:      256 x 65536 = 16,777,216 B
 *   SRQ string: 36,860,032 B (36.9 MB; Open MPI states "a little over 65")
 *   P,1024,32,16:     window 8, reserve 63 / 8 = 7: 511 x 39 x 1024 =
 *                     20,407,296 B
 *   P,4096,32,16:     511 x 39 x 4096  =    81,629,184 B
 *   P,65536,32,16:    511 x 39 x 65536 = 1,306,066,944 B
 *   no-SRQ string: 1,426,875,520 B (1.43 GB; stated about 385 MB); without
 *   the 64 KiB queue 120,808,576 B (120.8 MB; stated about 128 MB).
 */
static void test_rq_ompi_examples(void **state)
{
    psel_rq_spec_t srq = parse_ok("P,128,256,128,16:S,1024,256,128,32:"
                                  "S,4096,256,128,32:S,65536,256,128,32");
    psel_rq_spec_t pp  = parse_ok("P,128,256,128,16:P,1024,32,16:"
                                  "P,4096,32,16:P,65536,32,16");
    psel_rq_spec_t pp3 = parse_ok("P,128,256,128,16:P,1024,32,16:"
                                  "P,4096,32,16");

    assert_int_equal(srq.queues[0].reserve, 31);
    assert_true(psel_rq_queue_bytes(&srq.queues[0], 511) == 18772096.0);
    assert_true(psel_rq_queue_bytes(&srq.queues[1], 511) == 262144.0);
    assert_true(psel_rq_queue_bytes(&srq.queues[2], 511) == 1048576.0);
    assert_true(psel_rq_queue_bytes(&srq.queues[3], 511) == 16777216.0);
    assert_true(psel_rq_spec_bytes(&srq, 511) == 36860032.0);
    /* shared queues do not grow with the peers */
    assert_true(psel_rq_queue_bytes(&srq.queues[3], 4095) == 16777216.0);

    assert_int_equal(pp.queues[1].window, 8);
    assert_int_equal(pp.queues[1].reserve, 7);
    assert_true(psel_rq_queue_bytes(&pp.queues[1], 511) == 20407296.0);
    assert_true(psel_rq_queue_bytes(&pp.queues[2], 511) == 81629184.0);
    assert_true(psel_rq_queue_bytes(&pp.queues[3], 511) == 1306066944.0);
    assert_true(psel_rq_spec_bytes(&pp, 511) == 1426875520.0);
    assert_true(psel_rq_spec_bytes(&pp3, 511) == 120808576.0);
}

/* Suggestion from a selection: sizes from the eager rows, S by SRQ and N */
static void test_rq_suggest(void **state)
{
    static const size_t ends[] = {178, 304, 11934};
    psel_rq_suggest_params_t params = {ends, 3, 11935, 1, 511};
    char text[256];
    psel_rq_spec_t spec;

    /* 178 + 64 -> 256, 304 + 64 -> 512, 11934 + 64 -> 16384 (the largest
     * holds 11934 + 64 already: the rendezvous threshold's queue) */
    assert_int_equal(psel_rq_suggest(&params, &spec), UCS_OK);
    psel_rq_spec_format(&spec, text, sizeof(text));
    assert_string_equal(text, "P,128,256,128,16,31:S,256,256,128,32:"
                              "S,512,256,128,32:S,16384,256,128,32");

    /* 4 peers: a P queue costs 4 x 39 buffers < 256 shared: P */
    params.num_peers = 4;
    assert_int_equal(psel_rq_suggest(&params, &spec), UCS_OK);
    psel_rq_spec_format(&spec, text, sizeof(text));
    assert_string_equal(text, "P,128,256,128,16,31:P,256,32,16,8,7:"
                              "P,512,32,16,8,7:P,16384,32,16,8,7");

    /* 7 peers: 7 x 39 = 273 > 256: S wins */
    params.num_peers = 7;
    assert_int_equal(psel_rq_suggest(&params, &spec), UCS_OK);
    assert_int_equal(spec.queues[1].type, PSEL_RQ_SHARED);

    /* no SRQ: all P; no rendezvous: the largest is 64 KiB */
    params.srq         = 0;
    params.rndv_thresh = SIZE_MAX;
    params.num_peers   = 511;
    assert_int_equal(psel_rq_suggest(&params, &spec), UCS_OK);
    psel_rq_spec_format(&spec, text, sizeof(text));
    assert_string_equal(text, "P,128,256,128,16,31:P,256,32,16,8,7:"
                              "P,512,32,16,8,7:P,65536,32,16,8,7");

    params.num_peers = 0;
    assert_int_equal(psel_rq_suggest(&params, &spec), UCS_ERR_INVALID_PARAM);
}

/* ------------------------------------------------------------------------
 * Selection at N peers on real dumps
 */

typedef struct {
    psel_resource_table_t table;
    psel_config_t         config;
    psel_ep_config_t      ep;
} fixture_ep_t;

static void fixture_ep_init(fixture_ep_t *f, const char *fixture,
                            const char *tls, size_t num_eps)
{
    psel_ep_params_t params;

    psel_resource_table_init(&f->table);
    assert_int_equal(psel_ucx_info_import_file(psel_test_fixture_path(fixture),
                                               &f->table), UCS_OK);
    unsetenv("UCX_PSEL_NUM_EPS");
    if (tls != NULL) {
        setenv("UCX_PSEL_TLS", tls, 1);
    }
    assert_int_equal(psel_config_read(&f->config), UCS_OK);
    unsetenv("UCX_PSEL_TLS");
    assert_int_equal(psel_resource_filter(&f->table, &f->config.tls,
                                          &f->config.net_devices), UCS_OK);
    memset(&params, 0, sizeof(params));
    params.features = PSEL_FEATURE_TAG;
    params.local    = &f->table;
    params.remote   = &f->table;
    params.locality = PSEL_PEER_REMOTE_HOST;
    params.config   = &f->config;
    params.num_eps  = num_eps;
    assert_int_equal(psel_ep_config_init(&f->ep, &params), UCS_OK);
}

static void fixture_ep_cleanup(fixture_ep_t *f)
{
    psel_ep_config_cleanup(&f->ep);
    psel_config_release(&f->config);
    psel_resource_table_cleanup(&f->table);
}

static const char *role_lane(const fixture_ep_t *f, psel_lane_role_t role)
{
    return (f->ep.lanes.sets.role[role].count > 0) ?
           f->ep.lanes.sets.role[role].lanes[0]->name : "-";
}

static void check_am_lane(const char *fixture, const char *tls,
                          size_t num_eps, const char *expected,
                          double latency_ns)
{
    fixture_ep_t f;

    fixture_ep_init(&f, fixture, tls, num_eps);
    if (strcmp(role_lane(&f, PSEL_LANE_ROLE_AM), expected)) {
        print_error("%s at %zu endpoints: expected am lane %s, got %s\n",
                    fixture, num_eps, expected,
                    role_lane(&f, PSEL_LANE_ROLE_AM));
        fail();
    }
    assert_int_equal(f.ep.lanes.num_eps, num_eps ? num_eps : 1);
    assert_close(f.ep.lanes.sets.role[PSEL_LANE_ROLE_AM].lanes[0]->latency,
                 latency_ns * 1e-9, 1e-9);
    fixture_ep_cleanup(&f);
}

/*
 * 001 (ConnectX-6 HDR): rc_mlx5 600 + 1·N ns, o 40; dc_mlx5 660 ns, o 40;
 * same bandwidth and priority. am score 1e-3 / (lat + 80 ns): rc while
 * 600 + N < 660, a tie at N = 60 that goes to the earlier resource
 * (dc_mlx5 comes first in the dump), dc from there on; rc is left out
 * above its max eps 256 anyway. UCP gives the same (select.c
 * ucp_wireup_am_score_func at est_num_eps).
 */
static void test_peers_001_switch(void **state)
{
    check_am_lane(F001, NULL, 0, "rc_mlx5/mlx5_0:1", 601);     /* N = 1 */
    check_am_lane(F001, NULL, 1, "rc_mlx5/mlx5_0:1", 601);
    check_am_lane(F001, NULL, 32, "rc_mlx5/mlx5_0:1", 632);
    check_am_lane(F001, NULL, 59, "rc_mlx5/mlx5_0:1", 659);
    check_am_lane(F001, NULL, 60, "dc_mlx5/mlx5_0:1", 660);    /* tie */
    check_am_lane(F001, NULL, 64, "dc_mlx5/mlx5_0:1", 660);
    check_am_lane(F001, NULL, 4096, "dc_mlx5/mlx5_0:1", 660);
}

/* 048 (ConnectX-5 FDR): rc_mlx5 700 + N, dc_mlx5 760, every priority 38,
 * and rc_mlx5 comes before dc_mlx5 in this dump: the tie at N = 60 (equal
 * within UCP's 1e-6, ucp_score_cmp) stays rc, dc from 61 */
static void test_peers_048_tie(void **state)
{
    check_am_lane(F048, NULL, 59, "rc_mlx5/mlx5_0:1", 759);
    check_am_lane(F048, NULL, 60, "rc_mlx5/mlx5_0:1", 760);
    check_am_lane(F048, NULL, 61, "dc_mlx5/mlx5_0:1", 760);
}

/*
 * The max eps boundary alone: rc_mlx5 and ud_mlx5 only. ud wins the am
 * lane (630 ns + 2·80 ns vs 600 + N + 80 from N = 111 on), but only rc has
 * get/put zero-copy, so rc stays the rma_bw lane up to its max eps, 256,
 * and is left out from 257: then no rma_bw lane at all.
 */
static void test_peers_max_eps_boundary(void **state)
{
    fixture_ep_t f;

    fixture_ep_init(&f, F001, "rc_mlx5,ud_mlx5", 256);
    assert_string_equal(role_lane(&f, PSEL_LANE_ROLE_AM), "ud_mlx5/mlx5_0:1");
    assert_string_equal(role_lane(&f, PSEL_LANE_ROLE_RMA_BW),
                        "rc_mlx5/mlx5_0:1");
    assert_int_equal(f.ep.lanes.unscalable_left_out, 0);
    assert_close(f.ep.lanes.sets.role[PSEL_LANE_ROLE_RMA_BW].lanes[0]->latency,
                 856e-9, 1e-9);
    fixture_ep_cleanup(&f);

    fixture_ep_init(&f, F001, "rc_mlx5,ud_mlx5", 257);
    assert_string_equal(role_lane(&f, PSEL_LANE_ROLE_AM), "ud_mlx5/mlx5_0:1");
    assert_string_equal(role_lane(&f, PSEL_LANE_ROLE_RMA_BW), "-");
    assert_int_equal(f.ep.lanes.unscalable_left_out, 1);
    assert_false(f.ep.lanes.unscalable_fallback);
    assert_int_equal(f.ep.lanes.num_lanes, 1);
    fixture_ep_cleanup(&f);
}

/* rc_mlx5 and tcp both have max eps 256: at 257 nothing scalable makes an
 * am lane, so, as UCP, selection weighs them all again: rc */
static void test_peers_fallback(void **state)
{
    fixture_ep_t f;

    fixture_ep_init(&f, F001, "rc_mlx5,tcp", 257);
    assert_string_equal(role_lane(&f, PSEL_LANE_ROLE_AM), "rc_mlx5/mlx5_0:1");
    assert_true(f.ep.lanes.unscalable_fallback);
    assert_int_equal(f.ep.lanes.unscalable_left_out, 0);
    assert_close(f.ep.lanes.lanes[0].latency, 857e-9, 1e-9);
    fixture_ep_cleanup(&f);

    fixture_ep_init(&f, F001, "rc_mlx5,tcp", 256);
    assert_false(f.ep.lanes.unscalable_fallback);
    fixture_ep_cleanup(&f);
}

/* UCX_PSEL_NUM_EPS overrides the application's estimate; bad values are
 * rejected with the variable's name */
static void test_peers_config(void **state)
{
    static const char *bad[] = {"0", "-5", "inf", "67108865", "abc"};
    psel_config_t config;
    unsigned i;

    unsetenv("UCX_PSEL_NUM_EPS");
    assert_int_equal(psel_config_read(&config), UCS_OK);
    assert_int_equal(psel_config_num_eps(&config, 0), 1);
    assert_int_equal(psel_config_num_eps(&config, 300), 300);
    psel_config_release(&config);

    setenv("UCX_PSEL_NUM_EPS", "4096", 1);
    assert_int_equal(psel_config_read(&config), UCS_OK);
    assert_int_equal(psel_config_num_eps(&config, 300), 4096);
    psel_config_release(&config);

    for (i = 0; i < ucs_static_array_size(bad); ++i) {
        setenv("UCX_PSEL_NUM_EPS", bad[i], 1);
        psel_test_log_capture_start();
        assert_int_equal(psel_config_read(&config), UCS_ERR_INVALID_PARAM);
        psel_test_log_capture_stop();
        psel_assert_log_contains("UCX_PSEL_NUM_EPS");
        psel_test_log_clear();
    }
    unsetenv("UCX_PSEL_NUM_EPS");
}

/* The lanes a data-path endpoint gets between two workers of this process
 * over posix and tcp, with the context's estimate @a num_eps (0: not set)
 * and UCX_PSEL_NUM_EPS = @a env (or unset) */
static void data_path_lanes(size_t num_eps, const char *env, char *out,
                            size_t max)
{
    psel_context_h ctx[2];
    psel_worker_h worker[2];
    void *address;
    size_t len;
    psel_ep_h ep;
    FILE *f;
    int i;

    setenv("UCX_PSEL_TLS", "tcp,posix", 1);
    if (env != NULL) {
        setenv("UCX_PSEL_NUM_EPS", env, 1);
    }
    for (i = 0; i < 2; ++i) {
        assert_int_equal(psel_context_create(&ctx[i]), UCS_OK);
        if (num_eps > 0) {
            psel_context_set_num_eps(ctx[i], num_eps);
        }
        assert_int_equal(psel_worker_create(ctx[i], &worker[i]), UCS_OK);
    }
    unsetenv("UCX_PSEL_TLS");
    unsetenv("UCX_PSEL_NUM_EPS");
    assert_int_equal(psel_worker_get_address(worker[1], &address, &len),
                     UCS_OK);
    assert_int_equal(psel_ep_create(worker[0], address, len, &ep), UCS_OK);
    free(address);
    f = fmemopen(out, max, "w");
    assert_non_null(f);
    psel_ep_print_info(ep, f);
    fclose(f);
    psel_ep_destroy(ep);
    for (i = 1; i >= 0; --i) {
        psel_worker_destroy(worker[i]);
        psel_context_destroy(ctx[i]);
    }
}

/* The data path selects at the context's estimate: tcp (max eps 256 in
 * UCX 1.13.1) carries the rma_bw lanes at 1 endpoint, is left out at 300
 * (posix, unlimited, makes the endpoint alone); UCX_PSEL_NUM_EPS
 * overrides the estimate either way */
static void test_peers_data_path(void **state)
{
    char info[4096];

    data_path_lanes(0, NULL, info, sizeof(info));
    assert_non_null(strstr(info, "posix/memory"));
    assert_non_null(strstr(info, "tcp/"));
    data_path_lanes(300, NULL, info, sizeof(info));
    assert_non_null(strstr(info, "posix/memory"));
    assert_null(strstr(info, "tcp/"));
    data_path_lanes(300, "1", info, sizeof(info));
    assert_non_null(strstr(info, "tcp/"));
    data_path_lanes(0, "300", info, sizeof(info));
    assert_null(strstr(info, "tcp/"));
}

/* ------------------------------------------------------------------------
 * Memory footprint, by hand
 */

static const psel_footprint_term_t *term(const psel_footprint_t *fp,
                                         const char *what)
{
    unsigned i;

    for (i = 0; i < fp->num_terms; ++i) {
        if (!strcmp(fp->terms[i].what, what)) {
            return &fp->terms[i];
        }
    }
    print_error("no term '%s'\n", what);
    fail();
    return NULL;
}

/*
 * 001 at 32 peers: one rc_mlx5 lane.
 *  receive buffers: round(1.1 x 4095) = 4505 x 8256 B = 37,193,280 B
 *  send buffers:    1024 x 8256 B                     =  8,454,144 B
 *  CQs:             (4096 + 4095) x 64 B              =    524,224 B
 *  QP send queue:   256 x 272 B = 69,632 -> 2^17 = 131,072 B per peer,
 *                   x 32                              =  4,194,304 B
 *  total 50,365,952 B
 */
static void test_footprint_rc(void **state)
{
    const psel_footprint_term_t *t;
    psel_footprint_t fp;
    fixture_ep_t f;

    fixture_ep_init(&f, F001, NULL, 32);
    assert_int_equal(psel_footprint_compute(&f.table, &f.ep.lanes, 32, &fp),
                     UCS_OK);
    assert_int_equal(fp.num_terms, 4);
    t = term(&fp, "receive buffers (shared receive queue)");
    assert_true((t->count == 4505) && (t->item_size == 8256) &&
                !t->per_peer && (t->bytes == 37193280.0));
    assert_non_null(strstr(t->setting, "UCX_RC_MLX5_RX_QUEUE_LEN=4095"));
    assert_non_null(strstr(t->setting, "UCX_RC_MLX5_SEG_SIZE=8256"));
    assert_non_null(strstr(t->source, "rc_iface.c"));
    t = term(&fp, "send buffers (first bcopy send)");
    assert_true(t->bytes == 8454144.0);
    assert_non_null(strstr(t->setting, "UCX_RC_MLX5_TX_BUFS_GROW=1024"));
    t = term(&fp, "completion queues (send + receive)");
    assert_true(t->bytes == 524224.0);
    t = term(&fp, "queue pair send queue");
    assert_true(t->per_peer && (t->item_size == 131072.0) &&
                (t->bytes == 4194304.0));
    assert_non_null(strstr(t->setting, "UCX_RC_MLX5_TX_QUEUE_LEN=256"));
    assert_true(fp.shared == 46171648.0);
    assert_true(fp.per_peer == 131072.0);
    assert_true(fp.total == 50365952.0);
    assert_true(fp.kernel == 0);
    assert_int_equal(psel_footprint_compute(&f.table, &f.ep.lanes, 0, &fp),
                     UCS_ERR_INVALID_PARAM);
    fixture_ep_cleanup(&f);
}

/*
 * 001 at 4096 peers: dc_mlx5 pays nothing per peer.
 *  receive 37,193,280 + send 8,454,144 (as rc) +
 *  DCIs (8 + 1 keepalive) x 2^16 (128 x 272 = 34,816 -> 65,536) = 589,824 +
 *  CQs (128 x 9 + 4095) x 64 = 335,808: 46,573,056 B at any N.
 */
static void test_footprint_dc(void **state)
{
    psel_footprint_t fp;
    fixture_ep_t f;

    fixture_ep_init(&f, F001, NULL, 4096);
    assert_string_equal(f.ep.lanes.lanes[0].name, "dc_mlx5/mlx5_0:1");
    assert_int_equal(psel_footprint_compute(&f.table, &f.ep.lanes, 4096, &fp),
                     UCS_OK);
    assert_true(term(&fp, "DC initiator send queues")->bytes == 589824.0);
    assert_true(term(&fp, "completion queues (send + receive)")->bytes ==
                335808.0);
    assert_true(fp.per_peer == 0);
    assert_true(fp.total == 46573056.0);
    fixture_ep_cleanup(&f);
}

/*
 * 000 across hosts: tcp/eth0. receive 8 x 65536 + send 8 x 8192 =
 * 589,824 B once; the sockets' kernel buffers 131072 + 16384 per peer,
 * counted apart: 100 peers -> 14,745,600 B.
 */
static void test_footprint_tcp(void **state)
{
    psel_footprint_t fp;
    fixture_ep_t f;

    fixture_ep_init(&f, F000, NULL, 100);
    assert_int_equal(psel_footprint_compute(&f.table, &f.ep.lanes, 100, &fp),
                     UCS_OK);
    assert_true(fp.shared == 589824.0);
    assert_true(fp.per_peer == 0);
    assert_true(fp.total == 589824.0);
    assert_true(fp.kernel == 14745600.0);
    assert_true(term(&fp, "socket buffers (kernel)")->kernel);
    fixture_ep_cleanup(&f);
}

/* ------------------------------------------------------------------------
 * LogGP
 */

/* From lines: L + 2o = c_single, g = c_multi, G = m_multi; o at most
 * c_single / 2 */
static void test_loggp_from_lines(void **state)
{
    psel_loggp_t p;

    p = psel_loggp_from_lines(ucs_linear_func_make(1e-6, 1e-9),
                              ucs_linear_func_make(0.5e-6, 0.25e-9), 0.1e-6);
    assert_close(p.L, 0.8e-6, 1e-12);
    assert_close(p.o, 0.1e-6, 1e-12);
    assert_close(p.g, 0.5e-6, 1e-12);
    assert_close(p.G, 0.25e-9, 1e-12);
    assert_close(p.G1, 1e-9, 1e-12);

    p = psel_loggp_from_lines(ucs_linear_func_make(2.38e-6, 0),
                              ucs_linear_func_make(2.38e-6, 0), 2e-6);
    assert_close(p.o, 1.19e-6, 1e-12);
    assert_true(p.L == 0);
}

/*
 * One lane by hand: 001 at 2 endpoints, egr/short over rc_mlx5 at n = 100
 * B, 3 processes (k = 2). UCX 1.17's short class on rc_mlx5 (docs/lane-selection.md,
 * "Per-operation costs"): latency 600 + 1 x 2 = 602 ns, send_pre 40 ns,
 * send_post 40 ns (the doorbell), recv 40 ns; bw 23588.47 MB/s; copies at
 * UCX_PSEL_BCOPY_BW 5800 MB/s, c_m = 1 / (5800 x 2^20) s/B each.
 *   stages: send 40 ns + c_m n (40 more after the post, in a stream);
 *           wire n / bw; recv 40 ns + c_m n
 *   single c = L + o_s + o_r = 602 + 80 = 682 ns, o = (40 + 40)/2 = 40 ns,
 *   L = 682 - 80 = 602 ns; single m = 1/bw + 2 copies:
 *   G1 = 1e9 / (23588.47 x 2^20) + 2e9 / (5800 x 2^20) ns/B;
 *   multi = the envelope of the stages: the sender's 80 ns + c_m n is above
 *   the receiver's 40 ns + c_m n and, with a steeper slope, above the wire
 *   everywhere: g = 80 ns, G = c_m (the latency is no part of the gap; the
 *   former stages made g = 682 ns, G = 0).
 *   T_direct = 602 + 80 + 100 G1 + (2 - 1) x (80 + 100 G)  [ns]
 *   T_proxy  = T_direct + 2 x 1000 ns
 *   converge: 2 x 1000 / 0.1 - (602 + 80 + 80) = 19238 ns over
 *   (G1 + G) per byte.
 */
/* One copy at UCX_PSEL_BCOPY_BW's 5800 MB/s [s/B] */
#define COPY_5800 (1e9 / (5800.0 * 1048576.0) * 1e-9)

/* LogGP of the protocol @a proto that the contiguous table of @a f runs at
 * @a n */
static psel_loggp_t loggp_of(const fixture_ep_t *f, size_t n,
                             const char *proto)
{
    const psel_select_table_t *table = f->ep.select.fast[PSEL_OP_TAG_SEND];
    unsigned row;
    psel_loggp_t p;

    p = psel_loggp_at(table, &f->ep.lanes.sets, n, &row);
    assert_string_equal(table->elems[row].proto->name, proto);
    return p;
}

static void test_loggp_one_lane(void **state)
{
    /* the single line pays two copies and the wire's time per byte;
     * streaming, the sender's stage paces: its copy */
    double G1 = 2 * COPY_5800 + (1e9 / (23588.47 * 1048576.0) * 1e-9);
    double G  = COPY_5800;
    size_t n_star;
    psel_loggp_t p;
    fixture_ep_t f;

    fixture_ep_init(&f, F001, NULL, 2);
    p = loggp_of(&f, 100, "egr/short");
    assert_close(p.L, 602e-9, 1e-9);
    assert_close(p.o, 40e-9, 1e-9);
    assert_close(p.g, 80e-9, 1e-9);
    assert_close(p.G, G, 1e-6);
    assert_close(p.G1, G1, 1e-6);
    assert_close(psel_alltoall_direct(&p, 3, 100),
                 (602 + 80 + 80) * 1e-9 + 100 * (G1 + G), 1e-9);
    assert_close(psel_alltoall_proxy(&p, 3, 100, 1e-6),
                 (602 + 80 + 80 + 2000) * 1e-9 + 100 * (G1 + G), 1e-9);
    /* two processes: one message each way, the single line itself */
    assert_close(psel_alltoall_direct(&p, 2, 100), 682e-9 + 100 * G1, 1e-9);

    /* 19238 ns / (0.36928 + 0.16443 ns/B) = 36045.8: from 36046 B on */
    n_star = psel_alltoall_converge(&p, 3, 1e-6, 0.1);
    assert_int_equal(n_star, (size_t)ceil(19238e-9 / (G1 + G)));
    assert_true(psel_alltoall_proxy(&p, 3, n_star, 1e-6) <=
                1.1 * psel_alltoall_direct(&p, 3, n_star));
    assert_true(psel_alltoall_proxy(&p, 3, n_star - 1, 1e-6) >
                1.1 * psel_alltoall_direct(&p, 3, n_star - 1));
    /* one process: nothing to exchange; no proxy cost: at once */
    assert_true(psel_alltoall_direct(&p, 1, 100) == 0);
    assert_int_equal(psel_alltoall_converge(&p, 3, 0, 0.1), 0);
    /* no per-byte cost: never */
    p.G = p.G1 = 0;
    assert_int_equal(psel_alltoall_converge(&p, 3, 1e-6, 0.1), SIZE_MAX);
    fixture_ep_cleanup(&f);
}

/*
 * g and G are those of the stage that paces the stream at n, not a bound
 * over the protocol's stages. 001 at 2 endpoints, egr/zcopy (274..17395 B)
 * over rc_mlx5, zcopy class: send_pre 40, send_post 40 + 20 = 60, recv 40
 * ns; the registration a cache hit (UCX_PSEL_RCACHE_OVERHEAD 50 ns):
 *   send stage (stream) = 50 + 40 + 60 = 150 ns, flat;
 *   recv stage = 40 ns + c_m n (the copy out of the transport buffer);
 *   wire = n / bw, flatter than c_m.
 * The receiver overtakes the sender at 110 ns / c_m = 110 x 5800 x 2^20 /
 * 1e9 = 668.99 B: at 300 B g = 150 ns, G = 0; at 4096 B g = 40 ns, G = c_m
 * (the former bound gave g = 150 ns and G = c_m at both).
 */
static void test_loggp_pacing_stage(void **state)
{
    psel_loggp_t p;
    fixture_ep_t f;

    fixture_ep_init(&f, F001, NULL, 2);
    p = loggp_of(&f, 300, "egr/zcopy");
    assert_close(p.g, 150e-9, 1e-9);
    assert_true(p.G == 0);
    p = loggp_of(&f, 4096, "egr/zcopy");
    assert_close(p.g, 40e-9, 1e-9);
    assert_close(p.G, COPY_5800, 1e-6);
    /* the boundary: 668 still the sender's, 669 the receiver's */
    assert_close(loggp_of(&f, 668, "egr/zcopy").g, 150e-9, 1e-9);
    assert_close(loggp_of(&f, 669, "egr/zcopy").g, 40e-9, 1e-9);
    fixture_ep_cleanup(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rq_defaults),
        cmocka_unit_test(test_rq_format),
        cmocka_unit_test(test_rq_errors),
        cmocka_unit_test(test_rq_ompi_examples),
        cmocka_unit_test(test_rq_suggest),
        cmocka_unit_test(test_peers_001_switch),
        cmocka_unit_test(test_peers_048_tie),
        cmocka_unit_test(test_peers_max_eps_boundary),
        cmocka_unit_test(test_peers_fallback),
        cmocka_unit_test(test_peers_config),
        cmocka_unit_test(test_peers_data_path),
        cmocka_unit_test(test_footprint_rc),
        cmocka_unit_test(test_footprint_dc),
        cmocka_unit_test(test_footprint_tcp),
        cmocka_unit_test(test_loggp_from_lines),
        cmocka_unit_test(test_loggp_one_lane),
        cmocka_unit_test(test_loggp_pacing_stage),
    };

    /* the tables here are the exact crossings of the lines in the
     * reasoning above, with no switch margin */
    setenv("UCX_PSEL_SWITCH_MARGIN", "0", 1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
