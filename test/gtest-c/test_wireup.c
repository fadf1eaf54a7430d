/*
 * The wireup message parser, fed from the wire side on a real worker
 * (self, posix and tcp ifaces): every malformed message is rejected with a
 * message saying what is wrong, creates no endpoint, and the worker keeps
 * working; random mutations of a valid request never crash it.
 */
#include "test_util.h"

#include <core/core_int.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

typedef struct {
    psel_context_h context;
    psel_worker_h  worker;
    void          *address;
    size_t         address_length;
    uint8_t        msg[4096];
    size_t         msg_length;
} wireup_test_t;

static int setup(void **state)
{
    wireup_test_t *t = calloc(1, sizeof(*t));

    setenv("UCX_PSEL_TLS", "self,posix,tcp", 1);
    setenv("UCX_PSEL_NET_DEVICES", "lo", 1);
    if ((t == NULL) || (psel_context_create(&t->context) != UCS_OK) ||
        (psel_worker_create(t->context, &t->worker) != UCS_OK) ||
        (psel_worker_get_address(t->worker, &t->address,
                                 &t->address_length) != UCS_OK)) {
        return -1;
    }
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    wireup_test_t *t = *state;

    free(t->address);
    psel_worker_destroy(t->worker);
    psel_context_destroy(t->context);
    free(t);
    return 0;
}

/* A request from "a peer" at this worker's own address, with no lanes. */
static void build_request(wireup_test_t *t, unsigned num_lanes)
{
    psel_wireup_hdr_t hdr = {0};

    hdr.version        = PSEL_WIREUP_VERSION;
    hdr.type           = PSEL_WIREUP_REQUEST;
    hdr.num_lanes      = num_lanes;
    hdr.address_length = t->address_length;
    hdr.sender_uuid    = 0x1234;
    hdr.sender_ep_id   = 0x5678;
    memcpy(t->msg, &hdr, sizeof(hdr));
    memcpy(t->msg + sizeof(hdr), t->address, t->address_length);
    t->msg_length = sizeof(hdr) + t->address_length;
}

static psel_wireup_hdr_t *hdr_of(wireup_test_t *t)
{
    return (psel_wireup_hdr_t*)t->msg;
}

static void append_record(wireup_test_t *t, uint8_t dest_iface,
                          uint8_t ep_addr_length, size_t ep_addr_bytes)
{
    psel_wireup_lane_t rec = {0, dest_iface, 0, ep_addr_length};

    memcpy(t->msg + t->msg_length, &rec, sizeof(rec));
    t->msg_length += sizeof(rec);
    memset(t->msg + t->msg_length, 0x5a, ep_addr_bytes);
    t->msg_length += ep_addr_bytes;
}

/* The index of this worker's iface of transport @a tl_name; skips the test
 * (with the reason) if there is none. */
static unsigned find_iface(wireup_test_t *t, const char *tl_name)
{
    unsigned i;

    for (i = 0; i < t->worker->num_ifaces; ++i) {
        if (!strcmp(t->worker->local.resources[i].tl_name, tl_name)) {
            return i;
        }
    }
    print_message("SKIP: this machine has no %s iface (UCX_PSEL_TLS=%s)\n",
                  tl_name, getenv("UCX_PSEL_TLS"));
    skip();
    return 0;
}

static unsigned num_eps(psel_worker_h worker)
{
    return ucs_list_length(&worker->eps);
}

/* Feed the message; it must fail with @a needle logged, and no endpoint. */
static void expect_rejected(wireup_test_t *t, const char *needle)
{
    ucs_status_t status;

    psel_test_log_capture_start();
    psel_test_log_clear();
    status = psel_wireup_process(t->worker, t->msg, t->msg_length);
    psel_test_log_capture_stop();
    assert_int_not_equal(status, UCS_OK);
    psel_assert_log_contains(needle);
    assert_int_equal(num_eps(t->worker), 0);
}

static void test_malformed(void **state)
{
    wireup_test_t *t   = *state;
    unsigned tcp_iface = find_iface(t, "tcp");
    unsigned self_iface = find_iface(t, "self");
    unsigned i;

    build_request(t, 0);
    t->msg_length = sizeof(psel_wireup_hdr_t) - 1;
    expect_rejected(t, "shorter than its");

    build_request(t, 0);
    hdr_of(t)->version = PSEL_WIREUP_VERSION + 1;
    expect_rejected(t, "run the same protosel on both peers");
    /* another version, and shorter than our header: the version says it */
    t->msg_length = 2;
    expect_rejected(t, "wireup: wire version");

    build_request(t, 0);
    hdr_of(t)->type = 7;
    expect_rejected(t, "unknown message type 7");

    build_request(t, 0);
    hdr_of(t)->address_length = 0;
    t->msg_length             = sizeof(psel_wireup_hdr_t);
    expect_rejected(t, "a request with a 0-byte address");

    build_request(t, 0);
    hdr_of(t)->type = PSEL_WIREUP_REPLY;
    expect_rejected(t, "a reply with a");

    build_request(t, 0);
    hdr_of(t)->address_length += 1;
    expect_rejected(t, "overruns the");

    build_request(t, PSEL_MAX_LANES + 1);
    expect_rejected(t, "lane records, at most");

    build_request(t, 1);
    t->msg_length += 2;
    expect_rejected(t, "lane record 0 at offset");

    build_request(t, 1);
    append_record(t, tcp_iface, 200, 10);
    expect_rejected(t, "overruns the message");

    build_request(t, 1);
    append_record(t, t->worker->num_ifaces, 0, 0);
    expect_rejected(t, "names iface");

    build_request(t, 1);
    append_record(t, tcp_iface, t->worker->ifaces[tcp_iface].attr.ep_addr_len
                                + 1,
                  t->worker->ifaces[tcp_iface].attr.ep_addr_len + 1);
    expect_rejected(t, "names iface");

    /* self connects to ifaces only: an ep-to-ep record for it is wrong
     * (it would have called a connect_to_ep that self does not have) */
    build_request(t, 1);
    append_record(t, self_iface, t->worker->ifaces[self_iface].attr.ep_addr_len,
                  t->worker->ifaces[self_iface].attr.ep_addr_len);
    expect_rejected(t, "does not connect endpoint to endpoint");

    build_request(t, 0);
    t->msg[t->msg_length++] = 0;
    expect_rejected(t, "stray bytes");

    build_request(t, 0);
    memset(t->msg + sizeof(psel_wireup_hdr_t), 0xff, 4);
    expect_rejected(t, "address");

    /* a close carries neither an address nor lane records */
    build_request(t, 0);
    hdr_of(t)->type = PSEL_WIREUP_CLOSE;
    expect_rejected(t, "a close with a");
    build_request(t, 1);
    hdr_of(t)->type           = PSEL_WIREUP_CLOSE;
    hdr_of(t)->address_length = 0;
    t->msg_length             = sizeof(psel_wireup_hdr_t);
    append_record(t, tcp_iface, t->worker->ifaces[tcp_iface].attr.ep_addr_len,
                  t->worker->ifaces[tcp_iface].attr.ep_addr_len);
    expect_rejected(t, "a close with 1 lane records");

    /* a close of an endpoint nobody here knows changes nothing */
    build_request(t, 0);
    hdr_of(t)->type           = PSEL_WIREUP_CLOSE;
    hdr_of(t)->address_length = 0;
    t->msg_length             = sizeof(psel_wireup_hdr_t);
    assert_int_equal(psel_wireup_process(t->worker, t->msg, t->msg_length),
                     UCS_ERR_NO_ELEM);
    assert_int_equal(num_eps(t->worker), 0);

    /* a reply for an endpoint that does not exist changes nothing */
    build_request(t, 0);
    hdr_of(t)->type           = PSEL_WIREUP_REPLY;
    hdr_of(t)->address_length = 0;
    hdr_of(t)->dest_ep_id     = 42;
    t->msg_length             = sizeof(psel_wireup_hdr_t);
    assert_int_equal(psel_wireup_process(t->worker, t->msg, t->msg_length),
                     UCS_ERR_NO_ELEM);
    assert_int_equal(num_eps(t->worker), 0);

    /* and the worker still works: a valid request creates the endpoint
     * back, once; a repeat finds it */
    for (i = 0; i < 2; ++i) {
        build_request(t, 0);
        assert_int_equal(psel_wireup_process(t->worker, t->msg,
                                             t->msg_length), UCS_OK);
        assert_int_equal(num_eps(t->worker), 1);
    }
    for (i = 0; i < 1000; ++i) {
        psel_worker_progress(t->worker);
    }
}

/* Random byte flips, truncations and extensions of a valid request with a
 * lane record: whatever the result, no crash, and the endpoints stay
 * bounded (at most one per distinct sender). Fixed seed, printed. */
static void test_mutations(void **state)
{
    const unsigned seed = 20261122;
    wireup_test_t *t    = *state;
    uint8_t valid[4096];
    size_t valid_length;
    unsigned i, k, tcp_iface;

    tcp_iface = find_iface(t, "tcp");
    build_request(t, 1);
    append_record(t, tcp_iface, t->worker->ifaces[tcp_iface].attr.ep_addr_len,
                  t->worker->ifaces[tcp_iface].attr.ep_addr_len);
    memcpy(valid, t->msg, t->msg_length);
    valid_length = t->msg_length;

    print_message("mutation seed %u\n", seed);
    srand(seed);
    psel_test_log_capture_start();
    for (i = 0; i < 3000; ++i) {
        memcpy(t->msg, valid, valid_length);
        t->msg_length = valid_length;
        for (k = 0; k < 1 + (unsigned)rand() % 4; ++k) {
            switch (rand() % 3) {
            case 0:
                if (t->msg_length > 0) {
                    t->msg[rand() % t->msg_length] ^= 1u << (rand() % 8);
                }
                break;
            case 1:
                t->msg_length = rand() % (t->msg_length + 1);
                break;
            default:
                if (t->msg_length < sizeof(t->msg) - 8) {
                    t->msg_length += rand() % 8;
                }
            }
        }
        /* keep the sender unknown so a mutation that parses makes at most
         * one endpoint per uuid */
        if (t->msg_length >= offsetof(psel_wireup_hdr_t, sender_ep_id)) {
            memset(t->msg + offsetof(psel_wireup_hdr_t, sender_uuid), 0, 8);
        }
        psel_wireup_process(t->worker, t->msg, t->msg_length);
        psel_worker_progress(t->worker);
    }
    psel_test_log_capture_stop();
    assert_true(num_eps(t->worker) <= 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mutations, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
