/*
 * Rendezvous without a second process: the multi-lane split
 * (psel_proto_xfer_*), and the rendezvous handlers fed malformed headers
 * from the wire side on a real worker (posix and cma) - each dropped with a
 * message saying what is wrong, nothing changed - after which a rendezvous
 * between two workers of this process still moves its data.
 */
#include "test_util.h"

#include <core/core_int.h>
#include <ucp_proto_sel/proto_rndv_int.h> /* the rendezvous internals it checks */
#include <ucp_proto_sel/proto_egr.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define KiB 1024ul

/* ---- the split ---- */

static psel_proto_split_lane_t split_lane(uint8_t lane, double share,
                                          size_t max_frag, size_t align)
{
    psel_proto_split_lane_t l = {lane, share, max_frag, align, 0};

    return l;
}

/* Walk every fragment: they cover [0, length) once, each within its
 * lane's chunk and max_frag; returns the number of fragments. */
static unsigned walk(psel_proto_xfer_t *x, size_t length)
{
    uint8_t *seen = calloc(1, length + 1);
    size_t offset, len, k, total = 0;
    unsigned index, frags = 0;

    assert_non_null(seen);
    while (psel_proto_xfer_next(x, &index, &offset, &len)) {
        assert_true(index < x->num_lanes);
        assert_true(len > 0);
        assert_true(len <= x->max_frag[index]);
        assert_true(len >= x->min_frag[index]);
        assert_true(offset + len <= x->end[index]);
        for (k = offset; k < offset + len; ++k) {
            assert_int_equal(seen[k], 0);
            seen[k] = 1;
        }
        total += len;
        psel_proto_xfer_posted(x, index, len);
        assert_true(++frags < 1000000);
    }
    assert_int_equal(total, length);
    free(seen);
    return frags;
}

static void test_split_one_lane_fragments(void **state)
{
    psel_proto_split_lane_t l = split_lane(3, 1.0, 8239, 1);
    psel_proto_xfer_t x;

    psel_proto_xfer_init(&x, &l, 1, 3 * 8239 + 1, PSEL_RNDV_MIN_CHUNK);
    assert_int_equal(x.num_lanes, 1);
    assert_int_equal(x.lanes[0], 3);
    assert_int_equal(walk(&x, 3 * 8239 + 1), 4);

    psel_proto_xfer_init(&x, &l, 1, 0, PSEL_RNDV_MIN_CHUNK);
    assert_int_equal(walk(&x, 0), 0);
}

/* A message shorter than two minimum chunks stays on the best lane, however
 * many lanes there are: no slivers. */
static void test_split_min_chunk(void **state)
{
    psel_proto_split_lane_t l[2] = {split_lane(0, 0.5, SIZE_MAX, 1),
                                    split_lane(1, 0.5, SIZE_MAX, 1)};
    psel_proto_xfer_t x;

    psel_proto_xfer_init(&x, l, 2, 2 * PSEL_RNDV_MIN_CHUNK - 1,
                         PSEL_RNDV_MIN_CHUNK);
    assert_int_equal(x.num_lanes, 1);
    assert_int_equal(walk(&x, 2 * PSEL_RNDV_MIN_CHUNK - 1), 1);

    psel_proto_xfer_init(&x, l, 2, 2 * PSEL_RNDV_MIN_CHUNK,
                         PSEL_RNDV_MIN_CHUNK);
    assert_int_equal(x.num_lanes, 2);
    assert_int_equal(x.end[0], PSEL_RNDV_MIN_CHUNK);
    assert_int_equal(x.end[1], 2 * PSEL_RNDV_MIN_CHUNK);
    assert_int_equal(walk(&x, 2 * PSEL_RNDV_MIN_CHUNK), 2);
}

/* Shares: a lane whose share would fall below the minimum chunk drops out;
 * otherwise bytes follow the shares. */
static void test_split_shares(void **state)
{
    psel_proto_split_lane_t l[3] = {split_lane(0, 0.6, SIZE_MAX, 1),
                                    split_lane(1, 0.3, SIZE_MAX, 1),
                                    split_lane(2, 0.1, SIZE_MAX, 1)};
    size_t length = 1000 * KiB;
    psel_proto_xfer_t x;

    /* 10% of 1000 KiB = 100 KiB >= 64 KiB: three lanes */
    psel_proto_xfer_init(&x, l, 3, length, PSEL_RNDV_MIN_CHUNK);
    assert_int_equal(x.num_lanes, 3);
    assert_int_equal(x.end[0], (size_t)(length * 0.6));
    assert_int_equal(x.end[1] - x.end[0], (size_t)(length * 0.3));
    walk(&x, length);

    /* 10% of 500 KiB = 50 KiB: the third lane drops out, 2:1 on the rest */
    length = 500 * KiB;
    psel_proto_xfer_init(&x, l, 3, length, PSEL_RNDV_MIN_CHUNK);
    assert_int_equal(x.num_lanes, 2);
    assert_int_equal(x.end[0], (size_t)(length * 0.6 / 0.9));
    walk(&x, length);
}

/* Chunk boundaries and fragments are multiples of the lane's alignment;
 * max_frag bounds every operation. */
static void test_split_alignment_and_max_frag(void **state)
{
    psel_proto_split_lane_t l[2] = {split_lane(0, 1.0, 10000, 4096),
                                    split_lane(1, 1.0, 65536, 512)};
    size_t length = 300 * KiB + 123;
    size_t offset, len;
    psel_proto_xfer_t x;
    unsigned index;

    psel_proto_xfer_init(&x, l, 2, length, PSEL_RNDV_MIN_CHUNK);
    assert_int_equal(x.num_lanes, 2);
    assert_int_equal(x.end[0] % 4096, 0);
    assert_int_equal(x.max_frag[0], 8192);
    assert_int_equal(x.max_frag[1], 65536);
    while (psel_proto_xfer_next(&x, &index, &offset, &len)) {
        if (index == 0) {
            assert_int_equal(offset % 4096, 0);
        }
        psel_proto_xfer_posted(&x, index, len);
    }
    psel_proto_xfer_init(&x, l, 2, length, PSEL_RNDV_MIN_CHUNK);
    walk(&x, length);
}

/*
 * No operation below the lane's min_zcopy (rc's get_zcopy: 65 B up). One
 * lane, max 1000, min 65, 2010 bytes: 1000 leaves 1010; 1000 more would
 * leave 10 < 65, so the second gives up 65: 1000, 945, 65 (before: 1000,
 * 1000, 10). A chunk must hold the lane's smallest operation too: two
 * lanes with min 100 KiB and 160 KiB to split are one lane (80 KiB each
 * passes the 64 KiB minimum chunk but not 100 KiB).
 */
static void test_split_min_frag(void **state)
{
    psel_proto_split_lane_t l = split_lane(0, 1.0, 1000, 1);
    psel_proto_split_lane_t two[2];
    size_t offset, len, expected[] = {1000, 945, 65};
    psel_proto_xfer_t x;
    unsigned index, i = 0;

    l.min_frag = 65;
    psel_proto_xfer_init(&x, &l, 1, 2010, PSEL_RNDV_MIN_CHUNK);
    while (psel_proto_xfer_next(&x, &index, &offset, &len)) {
        assert_true(i < 3);
        assert_int_equal(len, expected[i++]);
        psel_proto_xfer_posted(&x, index, len);
    }
    assert_int_equal(i, 3);
    /* exactly max + min: no change needed; 1065 = 1000 + 65 */
    psel_proto_xfer_init(&x, &l, 1, 1065, PSEL_RNDV_MIN_CHUNK);
    assert_int_equal(walk(&x, 1065), 2);

    two[0]          = split_lane(0, 0.5, SIZE_MAX, 1);
    two[1]          = split_lane(1, 0.5, SIZE_MAX, 1);
    two[0].min_frag = two[1].min_frag = 100 * KiB;
    psel_proto_xfer_init(&x, two, 2, 160 * KiB, PSEL_RNDV_MIN_CHUNK);
    assert_int_equal(x.num_lanes, 1);
    walk(&x, 160 * KiB);
    /* 200 KiB: 100 KiB each, both lanes */
    psel_proto_xfer_init(&x, two, 2, 200 * KiB, PSEL_RNDV_MIN_CHUNK);
    assert_int_equal(x.num_lanes, 2);
    walk(&x, 200 * KiB);
}

/* The limits of real iface attributes. */
static void test_split_lane_limits(void **state)
{
    uct_iface_attr_t attr;
    psel_proto_split_lane_t l;

    memset(&attr, 0, sizeof(attr));
    attr.cap.put.max_zcopy       = 1 << 20;
    attr.cap.put.opt_zcopy_align = 64;
    attr.cap.put.align_mtu       = 4096;
    attr.cap.put.min_zcopy       = 1;
    attr.cap.am.max_bcopy        = 8256;
    attr.cap.am.max_zcopy        = 65536;
    attr.cap.am.min_zcopy        = 33;
    psel_proto_xfer_lane(&attr, PSEL_PROTO_XFER_PUT, 2, 0.5, &l);
    assert_int_equal(l.max_frag, 1 << 20);
    assert_int_equal(l.align, 4096);
    assert_int_equal(l.min_frag, 1);
    psel_proto_xfer_lane(&attr, PSEL_PROTO_XFER_AM_BCOPY, 2, 0.5, &l);
    assert_int_equal(l.max_frag, 8256 - sizeof(psel_rndv_data_hdr_t));
    assert_int_equal(l.min_frag, 0);
    psel_proto_xfer_lane(&attr, PSEL_PROTO_XFER_AM_ZCOPY, 2, 0.5, &l);
    assert_int_equal(l.max_frag, 65536 - sizeof(psel_rndv_data_hdr_t));
    assert_int_equal(l.min_frag, 33);
    psel_proto_xfer_lane(&attr, PSEL_PROTO_XFER_GET, 2, 0.5, &l);
    assert_int_equal(l.max_frag, 1); /* no get: at least 1 */
    assert_int_equal(l.align, 1);
    assert_int_equal(l.min_frag, 0);
    attr.cap.get.min_zcopy       = 65;
    psel_proto_xfer_lane(&attr, PSEL_PROTO_XFER_GET, 2, 0.5, &l);
    assert_int_equal(l.min_frag, 65);
}

/* ---- landed byte ranges ---- */

/* Ranges merge with both neighbours, overlaps anywhere are refused with
 * nothing changed, and the limit of separate ranges holds. */
static void test_byte_ranges(void **state)
{
    psel_byte_ranges_t r;
    unsigned i;

    psel_byte_ranges_init(&r, 4);
    assert_int_equal(psel_byte_ranges_add(&r, 10, 20), UCS_OK);
    assert_int_equal(psel_byte_ranges_add(&r, 30, 40), UCS_OK);
    assert_int_equal(r.num, 2);
    assert_int_equal(r.landed, 20);
    /* overlaps: inside, across an edge, spanning a gap, a duplicate, empty */
    assert_int_equal(psel_byte_ranges_add(&r, 12, 14), UCS_ERR_INVALID_PARAM);
    assert_int_equal(psel_byte_ranges_add(&r, 5, 11), UCS_ERR_INVALID_PARAM);
    assert_int_equal(psel_byte_ranges_add(&r, 39, 45), UCS_ERR_INVALID_PARAM);
    assert_int_equal(psel_byte_ranges_add(&r, 15, 35), UCS_ERR_INVALID_PARAM);
    assert_int_equal(psel_byte_ranges_add(&r, 30, 40), UCS_ERR_INVALID_PARAM);
    assert_int_equal(psel_byte_ranges_add(&r, 25, 25), UCS_ERR_INVALID_PARAM);
    assert_int_equal(psel_byte_ranges_add(&r, 20, 31), UCS_ERR_INVALID_PARAM);
    assert_int_equal(r.num, 2);
    assert_int_equal(r.landed, 20);
    /* three more separate ranges: the third passes the limit of 4 */
    assert_int_equal(psel_byte_ranges_add(&r, 0, 5), UCS_OK);
    assert_int_equal(psel_byte_ranges_add(&r, 50, 60), UCS_OK);
    assert_int_equal(r.num, 4);
    assert_int_equal(psel_byte_ranges_add(&r, 70, 80), UCS_ERR_EXCEEDS_LIMIT);
    assert_int_equal(r.num, 4);
    assert_int_equal(r.landed, 35);
    /* gaps filled exactly: each merges left and right */
    assert_int_equal(psel_byte_ranges_add(&r, 20, 30), UCS_OK);
    assert_int_equal(psel_byte_ranges_add(&r, 5, 10), UCS_OK);
    assert_int_equal(psel_byte_ranges_add(&r, 40, 50), UCS_OK);
    assert_int_equal(r.num, 1);
    assert_int_equal(r.ranges[0].start, 0);
    assert_int_equal(r.ranges[0].end, 60);
    assert_int_equal(r.landed, 60);
    psel_byte_ranges_cleanup(&r);

    /* backwards, one byte at a time: one range, all the way */
    psel_byte_ranges_init(&r, 2);
    for (i = 100; i > 0; --i) {
        assert_int_equal(psel_byte_ranges_add(&r, i - 1, i), UCS_OK);
        assert_int_equal(r.num, 1);
    }
    assert_int_equal(r.landed, 100);
    psel_byte_ranges_cleanup(&r);
}

/* ---- malformed headers ---- */

typedef struct {
    psel_context_h context;
    psel_worker_h  sender;
    psel_worker_h  receiver;
    uint8_t        msg[1024];
    size_t         length;
} rndv_unit_t;

static int setup(void **state)
{
    rndv_unit_t *t = calloc(1, sizeof(*t));

    setenv("UCX_PSEL_TLS", "posix,cma", 1);
    if ((t == NULL) || (psel_context_create(&t->context) != UCS_OK) ||
        (psel_worker_create(t->context, &t->sender) != UCS_OK) ||
        (psel_worker_create(t->context, &t->receiver) != UCS_OK)) {
        return -1;
    }
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    rndv_unit_t *t = *state;

    psel_worker_destroy(t->sender);
    psel_worker_destroy(t->receiver);
    psel_context_destroy(t->context);
    unsetenv("UCX_PSEL_PROTOS");
    free(t);
    return 0;
}

static void put_bytes(rndv_unit_t *t, const void *data, size_t length)
{
    assert_true(t->length + length <= sizeof(t->msg));
    memcpy(t->msg + t->length, data, length);
    t->length += length;
}

static void build_rts(rndv_unit_t *t, psel_rndv_mode_t mode, unsigned lanes,
                      uint16_t rkey_size)
{
    psel_rndv_rts_hdr_t hdr = {0};
    psel_rndv_lane_rec_t rec = {0};
    uint8_t rkey[64]         = {0};
    unsigned i;

    hdr.version   = PSEL_RNDV_WIRE_VERSION;
    hdr.mode      = mode;
    hdr.num_lanes = lanes;
    hdr.tag       = 7;
    hdr.length    = 100000;
    hdr.sender_id = 0x1234;
    hdr.msg_id    = 1;
    hdr.sreq_id   = 1;
    t->length     = 0;
    put_bytes(t, &hdr, sizeof(hdr));
    for (i = 0; i < lanes; ++i) {
        rec.entry     = 0;
        rec.weight    = 100;
        rec.rkey_size = rkey_size;
        put_bytes(t, &rec, sizeof(rec));
        put_bytes(t, rkey, rkey_size);
    }
}

/* Feed the message: rejected with @a status, a log naming @a what, and
 * nothing queued. */
static void expect_drop(rndv_unit_t *t, uint8_t am_id, ucs_status_t status,
                        const char *what)
{
    psel_test_log_clear();
    psel_test_log_capture_start();
    assert_int_equal(psel_rndv_am_input(&t->receiver->proto, am_id, t->msg,
                                        t->length), status);
    psel_test_log_capture_stop();
    psel_assert_log_contains(what);
    assert_int_equal(psel_tm_num_unexpected(&t->receiver->tm), 0);
    assert_int_equal(psel_tm_num_expected(&t->receiver->tm), 0);
    assert_true(ucs_list_is_empty(&t->receiver->proto.rndv_work));
}

static void test_malformed_rts(void **state)
{
    rndv_unit_t *t = *state;
    psel_rndv_rts_hdr_t *hdr = (psel_rndv_rts_hdr_t*)t->msg;

    build_rts(t, PSEL_RNDV_MODE_GET, 1, 8);
    t->length = sizeof(*hdr) - 1;
    expect_drop(t, PSEL_AM_ID_RNDV_RTS, UCS_ERR_INVALID_PARAM,
                "shorter than its");

    build_rts(t, PSEL_RNDV_MODE_GET, 1, 8);
    hdr->version = 9;
    expect_drop(t, PSEL_AM_ID_RNDV_RTS, UCS_ERR_UNSUPPORTED, "version 9");

    build_rts(t, PSEL_RNDV_MODE_AM, 0, 0);
    hdr->mode = 0;
    expect_drop(t, PSEL_AM_ID_RNDV_RTS, UCS_ERR_INVALID_PARAM,
                "unknown mode 0");
    hdr->mode = PSEL_RNDV_MODE_LAST;
    expect_drop(t, PSEL_AM_ID_RNDV_RTS, UCS_ERR_INVALID_PARAM,
                "unknown mode");
    hdr->mode     = PSEL_RNDV_MODE_AM;
    hdr->reserved = 1;
    expect_drop(t, PSEL_AM_ID_RNDV_RTS, UCS_ERR_INVALID_PARAM,
                "reserved byte 0x1");

    build_rts(t, PSEL_RNDV_MODE_AM, 1, 0);
    expect_drop(t, PSEL_AM_ID_RNDV_RTS, UCS_ERR_INVALID_PARAM,
                "1 lane records for rndv/am");
    build_rts(t, PSEL_RNDV_MODE_GET, 0, 0);
    expect_drop(t, PSEL_AM_ID_RNDV_RTS, UCS_ERR_INVALID_PARAM,
                "0 lane records for rndv/get");

    build_rts(t, PSEL_RNDV_MODE_AM, 0, 0);
    hdr->sreq_id = 0;
    expect_drop(t, PSEL_AM_ID_RNDV_RTS, UCS_ERR_INVALID_PARAM,
                "request id 0");

    build_rts(t, PSEL_RNDV_MODE_GET, 1, 8);
    hdr->num_lanes = PSEL_MAX_LANES + 1;
    expect_drop(t, PSEL_AM_ID_RNDV_RTS, UCS_ERR_INVALID_PARAM,
                "17 lane records, at most 16");

    build_rts(t, PSEL_RNDV_MODE_GET, 2, 8);
    t->length -= 8 + 1; /* record 1 is one byte short */
    expect_drop(t, PSEL_AM_ID_RNDV_RTS, UCS_ERR_INVALID_PARAM,
                "lane record 1 at offset");

    build_rts(t, PSEL_RNDV_MODE_GET, 1, 8);
    t->length -= 1;
    expect_drop(t, PSEL_AM_ID_RNDV_RTS, UCS_ERR_INVALID_PARAM,
                "overruns the message");

    build_rts(t, PSEL_RNDV_MODE_GET, 1, 8);
    t->length += 3;
    expect_drop(t, PSEL_AM_ID_RNDV_RTS, UCS_ERR_INVALID_PARAM,
                "3 stray bytes");

    build_rts(t, PSEL_RNDV_MODE_PUT, 1, 8);
    expect_drop(t, PSEL_AM_ID_RNDV_RTS, UCS_ERR_INVALID_PARAM,
                "carries a 8-byte rkey where none belongs");

    build_rts(t, PSEL_RNDV_MODE_PUT, 1, 0);
    ((psel_rndv_lane_rec_t*)(hdr + 1))->entry = 200;
    expect_drop(t, PSEL_AM_ID_RNDV_RTS, UCS_ERR_INVALID_PARAM,
                "names iface 200");

    build_rts(t, PSEL_RNDV_MODE_GET, 1, 8);
    ((psel_rndv_lane_rec_t*)(hdr + 1))->weight = 0;
    expect_drop(t, PSEL_AM_ID_RNDV_RTS, UCS_ERR_INVALID_PARAM, "weight 0");
}

static void test_malformed_replies(void **state)
{
    rndv_unit_t *t = *state;
    psel_rndv_rtr_hdr_t rtr   = {0};
    psel_rndv_ack_hdr_t ack   = {0};
    psel_rndv_data_hdr_t data = {0};

    rtr.version = PSEL_RNDV_WIRE_VERSION;
    rtr.mode    = PSEL_RNDV_MODE_AM;
    rtr.sreq_id = 99;
    rtr.rreq_id = 5;
    t->length   = 0;
    put_bytes(t, &rtr, sizeof(rtr) - 1);
    expect_drop(t, PSEL_AM_ID_RNDV_RTR, UCS_ERR_INVALID_PARAM,
                "rendezvous RTR: 35 bytes");
    t->length = 0;
    put_bytes(t, &rtr, sizeof(rtr));
    expect_drop(t, PSEL_AM_ID_RNDV_RTR, UCS_ERR_NO_ELEM,
                "unknown request 63");
    ((psel_rndv_rtr_hdr_t*)t->msg)->mode = PSEL_RNDV_MODE_GET;
    expect_drop(t, PSEL_AM_ID_RNDV_RTR, UCS_ERR_INVALID_PARAM, "mode 2");
    ((psel_rndv_rtr_hdr_t*)t->msg)->mode    = PSEL_RNDV_MODE_AM;
    ((psel_rndv_rtr_hdr_t*)t->msg)->version = 0;
    expect_drop(t, PSEL_AM_ID_RNDV_RTR, UCS_ERR_UNSUPPORTED, "version 0");

    ack.version = PSEL_RNDV_WIRE_VERSION;
    ack.req_id  = 77;
    t->length   = 0;
    put_bytes(t, &ack, sizeof(ack));
    expect_drop(t, PSEL_AM_ID_RNDV_ATS, UCS_ERR_NO_ELEM,
                "unknown request 4d");
    expect_drop(t, PSEL_AM_ID_RNDV_FIN, UCS_ERR_NO_ELEM,
                "unknown receive 4d");
    ((psel_rndv_ack_hdr_t*)t->msg)->status = 5;
    expect_drop(t, PSEL_AM_ID_RNDV_ATS, UCS_ERR_INVALID_PARAM,
                "status 5 is not a final status");
    ((psel_rndv_ack_hdr_t*)t->msg)->status = UCS_ERR_NO_RESOURCE;
    expect_drop(t, PSEL_AM_ID_RNDV_FIN, UCS_ERR_INVALID_PARAM,
                "is not a final status");
    put_bytes(t, &ack, 1);
    expect_drop(t, PSEL_AM_ID_RNDV_ATS, UCS_ERR_INVALID_PARAM,
                "rendezvous ATS: 11 bytes, not 10");

    data.version = PSEL_RNDV_WIRE_VERSION;
    data.rreq_id = 3;
    t->length    = 0;
    put_bytes(t, &data, sizeof(data));
    expect_drop(t, PSEL_AM_ID_RNDV_DATA, UCS_ERR_INVALID_PARAM,
                "no payload");
    put_bytes(t, "x", 1);
    expect_drop(t, PSEL_AM_ID_RNDV_DATA, UCS_ERR_NO_ELEM,
                "unknown receive 3");
    ((psel_rndv_data_hdr_t*)t->msg)->version = 9;
    expect_drop(t, PSEL_AM_ID_RNDV_DATA, UCS_ERR_UNSUPPORTED, "version 9");

    expect_drop(t, PSEL_AM_ID_LAST, UCS_ERR_INVALID_PARAM,
                "is not one of ours");
}

/* The version byte is looked at first: a message of another version is
 * refused as such, whatever its length (it may have another layout), and
 * parsed no further; a short one of ours is short. */
static void test_version_first(void **state)
{
    rndv_unit_t *t = *state;
    const uint8_t other[3] = {9, 0, 0};
    const uint8_t ours[3]  = {PSEL_EAGER_WIRE_VERSION, 0, 0};
    psel_eager_middle_t middle;
    psel_eager_first_t first;

    t->length = 0;
    put_bytes(t, other, sizeof(other));
    expect_drop(t, PSEL_AM_ID_RNDV_RTR, UCS_ERR_UNSUPPORTED,
                "rendezvous RTR: wire version 9, this build speaks");
    expect_drop(t, PSEL_AM_ID_RNDV_ATS, UCS_ERR_UNSUPPORTED,
                "rendezvous ATS: wire version 9");
    t->msg[0] = PSEL_RNDV_WIRE_VERSION;
    expect_drop(t, PSEL_AM_ID_RNDV_RTR, UCS_ERR_INVALID_PARAM,
                "rendezvous RTR: 3 bytes, shorter than its header");

    psel_test_log_clear();
    psel_test_log_capture_start();
    assert_int_equal(psel_eager_first_parse(other, sizeof(other), &first),
                     UCS_ERR_UNSUPPORTED);
    psel_assert_log_contains("eager first fragment: wire version 9");
    psel_test_log_clear();
    assert_int_equal(psel_eager_middle_parse(other, sizeof(other), &middle),
                     UCS_ERR_UNSUPPORTED);
    psel_assert_log_contains("eager fragment: wire version 9");
    psel_test_log_clear();
    assert_int_equal(psel_eager_first_parse(ours, sizeof(ours), &first),
                     UCS_ERR_INVALID_PARAM);
    psel_assert_log_contains("eager first fragment: 3 bytes, shorter");
    psel_test_log_clear();
    assert_int_equal(psel_eager_middle_parse(ours, 0, &middle),
                     UCS_ERR_INVALID_PARAM);
    psel_assert_log_contains("eager fragment: 0 bytes, shorter");
    psel_test_log_capture_stop();
}

static void test_malformed_cancel(void **state)
{
    rndv_unit_t *t = *state;
    psel_rndv_cancel_hdr_t cancel = {0};
    psel_rndv_ack_hdr_t ack       = {0};

    cancel.version   = PSEL_RNDV_WIRE_VERSION;
    cancel.sender_id = 0x1234;
    cancel.msg_id    = 1;
    cancel.sreq_id   = 0x55;
    t->length        = 0;
    put_bytes(t, &cancel, sizeof(cancel) - 1);
    expect_drop(t, PSEL_AM_ID_RNDV_CANCEL, UCS_ERR_INVALID_PARAM,
                "rendezvous CANCEL: 25 bytes, not 26");
    put_bytes(t, "xy", 2);
    expect_drop(t, PSEL_AM_ID_RNDV_CANCEL, UCS_ERR_INVALID_PARAM,
                "rendezvous CANCEL: 27 bytes, not 26");
    t->length = 0;
    put_bytes(t, &cancel, sizeof(cancel));
    ((psel_rndv_cancel_hdr_t*)t->msg)->version = 3;
    expect_drop(t, PSEL_AM_ID_RNDV_CANCEL, UCS_ERR_UNSUPPORTED,
                "rendezvous CANCEL: wire version 3");
    ((psel_rndv_cancel_hdr_t*)t->msg)->version  = PSEL_RNDV_WIRE_VERSION;
    ((psel_rndv_cancel_hdr_t*)t->msg)->reserved = 4;
    expect_drop(t, PSEL_AM_ID_RNDV_CANCEL, UCS_ERR_INVALID_PARAM,
                "reserved byte 0x4");
    ((psel_rndv_cancel_hdr_t*)t->msg)->reserved = 0;
    ((psel_rndv_cancel_hdr_t*)t->msg)->sreq_id  = 0;
    expect_drop(t, PSEL_AM_ID_RNDV_CANCEL, UCS_ERR_INVALID_PARAM,
                "request id 0 (sender 1234 msg 1)");

    ack.version = PSEL_RNDV_WIRE_VERSION;
    ack.status  = UCS_OK;
    ack.req_id  = 0x66;
    t->length   = 0;
    put_bytes(t, &ack, sizeof(ack));
    expect_drop(t, PSEL_AM_ID_RNDV_CANCEL_ACK, UCS_ERR_NO_ELEM,
                "rendezvous CANCEL-ACK: unknown request 66");
    ((psel_rndv_ack_hdr_t*)t->msg)->status = UCS_ERR_IO_ERROR;
    expect_drop(t, PSEL_AM_ID_RNDV_CANCEL_ACK, UCS_ERR_INVALID_PARAM,
                "is not an answer to a cancel");
    ((psel_rndv_ack_hdr_t*)t->msg)->status = UCS_ERR_NO_RESOURCE;
    expect_drop(t, PSEL_AM_ID_RNDV_CANCEL_ACK, UCS_ERR_INVALID_PARAM,
                "is not a final status");
    ((psel_rndv_ack_hdr_t*)t->msg)->status  = UCS_ERR_BUSY;
    ((psel_rndv_ack_hdr_t*)t->msg)->version = 0;
    expect_drop(t, PSEL_AM_ID_RNDV_CANCEL_ACK, UCS_ERR_UNSUPPORTED,
                "rendezvous CANCEL-ACK: wire version 0");
    ((psel_rndv_ack_hdr_t*)t->msg)->version = PSEL_RNDV_WIRE_VERSION;
    put_bytes(t, &ack, 1);
    expect_drop(t, PSEL_AM_ID_RNDV_CANCEL_ACK, UCS_ERR_INVALID_PARAM,
                "rendezvous CANCEL-ACK: 11 bytes, not 10");
}

/* After all of that, rendezvous between two workers of this process still
 * works, by each protocol. */
static void test_still_works(void **state)
{
    static const char *protos[] = {"rndv/get", "rndv/put", "rndv/am"};
    rndv_unit_t *t = *state;
    size_t length  = 300 * KiB + 7;
    psel_context_h context;
    psel_worker_h sender, receiver;
    psel_request_t *sreq, *rreq;
    uint8_t *sbuf, *rbuf;
    void *address;
    size_t addr_len, k;
    unsigned i, n;
    psel_ep_h ep;

    sbuf = malloc(length);
    rbuf = malloc(length);
    assert_non_null(sbuf);
    assert_non_null(rbuf);
    for (k = 0; k < length; ++k) {
        sbuf[k] = (uint8_t)(k * 13 + (k >> 9));
    }
    for (i = 0; i < 3; ++i) {
        setenv("UCX_PSEL_PROTOS", protos[i], 1);
        assert_int_equal(psel_context_create(&context), UCS_OK);
        /* the worker fed malformed input receives, a new one sends */
        receiver = (i == 0) ? t->receiver : NULL;
        if (receiver == NULL) {
            assert_int_equal(psel_worker_create(context, &receiver), UCS_OK);
        }
        assert_int_equal(psel_worker_create(context, &sender), UCS_OK);
        assert_int_equal(psel_worker_get_address(receiver, &address,
                                                 &addr_len), UCS_OK);
        assert_int_equal(psel_ep_create(sender, address, addr_len, &ep),
                         UCS_OK);
        free(address);
        memset(rbuf, 0, length);
        rreq = psel_tag_recv_nb(receiver, rbuf, length, 42, UINT64_MAX, NULL,
                                NULL);
        sreq = psel_tag_send_nb(ep, sbuf, length, 42, NULL, NULL);
        for (n = 0; (n < 10000000) &&
                    ((psel_request_test(sreq, NULL) == UCS_INPROGRESS) ||
                     (psel_request_test(rreq, NULL) == UCS_INPROGRESS));
             ++n) {
            psel_worker_progress(sender);
            psel_worker_progress(receiver);
        }
        assert_int_equal(psel_request_test(sreq, NULL), UCS_OK);
        assert_int_equal(psel_request_test(rreq, NULL), UCS_OK);
        assert_memory_equal(sbuf, rbuf, length);
        psel_request_free(sreq);
        psel_request_free(rreq);
        psel_ep_destroy(ep);
        psel_worker_destroy(sender);
        if (receiver != t->receiver) {
            psel_worker_destroy(receiver);
        }
        psel_context_destroy(context);
    }
    free(sbuf);
    free(rbuf);
}

/* ---- cancel ---- */

#define CANCEL_LENGTH (300 * KiB + 5)
#define SPIN_MAX      10000000u  /* progress calls a wait may take */
#define SPIN_SEC      20.0       /* and seconds */

/* Two workers of this process and the sender's endpoint to the receiver,
 * with UCX_PSEL_PROTOS = @a protos. */
typedef struct {
    psel_context_h context;
    psel_worker_h  sender;
    psel_worker_h  receiver;
    psel_ep_h      ep;
    const char    *protos;    /* UCX_PSEL_PROTOS */
    uint8_t       *sbuf[2];   /* two messages, distinct patterns */
    uint8_t       *rbuf;
} cancel_pair_t;

static void pair_open(cancel_pair_t *p, const char *protos)
{
    void *address;
    size_t len, k;
    unsigned i;

    p->protos = protos;
    setenv("UCX_PSEL_PROTOS", protos, 1);
    assert_int_equal(psel_context_create(&p->context), UCS_OK);
    assert_int_equal(psel_worker_create(p->context, &p->receiver), UCS_OK);
    assert_int_equal(psel_worker_create(p->context, &p->sender), UCS_OK);
    assert_int_equal(psel_worker_get_address(p->receiver, &address, &len),
                     UCS_OK);
    assert_int_equal(psel_ep_create(p->sender, address, len, &p->ep), UCS_OK);
    free(address);
    for (i = 0; i < 2; ++i) {
        p->sbuf[i] = malloc(CANCEL_LENGTH);
        assert_non_null(p->sbuf[i]);
        for (k = 0; k < CANCEL_LENGTH; ++k) {
            p->sbuf[i][k] = (uint8_t)(k * (i + 3) + (k >> 10) + i);
        }
    }
    p->rbuf = calloc(1, CANCEL_LENGTH);
    assert_non_null(p->rbuf);
}

/* The @a num_msgs sends ran the forced protocol; nothing of a rendezvous
 * is left on either side. */
static void pair_close(cancel_pair_t *p, unsigned num_msgs)
{
    assert_int_equal(psel_test_check_used(p->sender, p->protos, num_msgs), 0);
    assert_int_equal(kh_size(&p->sender->rndv.sends), 0);
    assert_int_equal(kh_size(&p->sender->rndv.recvs), 0);
    assert_int_equal(kh_size(&p->receiver->rndv.recvs), 0);
    assert_true(ucs_list_is_empty(&p->receiver->proto.rndv_work));
    assert_int_equal(psel_tm_num_unexpected(&p->receiver->tm), 0);
    if (p->ep != NULL) {
        psel_ep_destroy(p->ep);
    }
    psel_worker_destroy(p->sender);
    psel_worker_destroy(p->receiver);
    psel_context_destroy(p->context);
    free(p->sbuf[0]);
    free(p->sbuf[1]);
    free(p->rbuf);
    unsetenv("UCX_PSEL_PROTOS");
}

/* Whom a wait progresses. */
enum {
    SENDER   = 1,
    RECEIVER = 2,
    BOTH     = 3
};

/* What a wait waits for. */
typedef enum {
    WAIT_UNEXPECTED,   /* the receiver holds @a n unexpected messages */
    WAIT_EXPECTED,     /* the receiver holds @a n expected receives */
    WAIT_DONE,         /* @a a and @a b (if not NULL) completed */
    WAIT_CANCEL_SENT   /* @a a sent its CANCEL */
} wait_what_t;

static int wait_cond(cancel_pair_t *p, wait_what_t what, size_t n,
                     psel_request_t *a, psel_request_t *b)
{
    switch (what) {
    case WAIT_UNEXPECTED:
        return psel_tm_num_unexpected(&p->receiver->tm) == n;
    case WAIT_EXPECTED:
        return psel_tm_num_expected(&p->receiver->tm) == n;
    case WAIT_DONE:
        return (psel_request_test(a, NULL) != UCS_INPROGRESS) &&
               ((b == NULL) || (psel_request_test(b, NULL) != UCS_INPROGRESS));
    case WAIT_CANCEL_SENT:
        return (a->proto.rndv != NULL) &&
               (a->proto.rndv->cancel == PSEL_RNDV_CANCEL_SENT);
    }
    return 0;
}

/* Progress @a who until the condition holds; bounded in calls and time. */
static void wait_for(cancel_pair_t *p, int who, wait_what_t what,
                     size_t n, psel_request_t *a, psel_request_t *b)
{
    double deadline = psel_time_sec() + SPIN_SEC;
    unsigned count;

    for (count = 0; !wait_cond(p, what, n, a, b); ++count) {
        assert_true((count < SPIN_MAX) && (psel_time_sec() < deadline));
        if (who & SENDER) {
            psel_worker_progress(p->sender);
        }
        if (who & RECEIVER) {
            psel_worker_progress(p->receiver);
        }
    }
}

/* A posted receive ends at once with UCS_ERR_CANCELED and a second cancel
 * finds nothing. */
static void test_cancel_recv(void **state)
{
    rndv_unit_t *t = *state;
    uint8_t buf[8];
    psel_request_t *rreq;

    rreq = psel_tag_recv_nb(t->receiver, buf, sizeof(buf), 7, UINT64_MAX,
                            NULL, NULL);
    assert_int_equal(psel_tm_num_expected(&t->receiver->tm), 1);
    assert_int_equal(psel_request_cancel(rreq), UCS_OK);
    assert_int_equal(psel_request_test(rreq, NULL), UCS_ERR_CANCELED);
    assert_int_equal(psel_tm_num_expected(&t->receiver->tm), 0);
    assert_int_equal(psel_request_cancel(rreq), UCS_ERR_NO_ELEM);
    psel_request_free(rreq);
}

/* A send whose RTS waits unexpected at the receiver: the CANCEL withdraws
 * it, the send ends with UCS_ERR_CANCELED (its rendezvous state and
 * registrations released), and the receiver's next receive matches the
 * message after it. Before that, a CANCEL-ACK for a send that sent no
 * CANCEL is dropped and changes nothing. */
static void cancel_unexpected(const char *protos)
{
    psel_rndv_ack_hdr_t ack = {PSEL_RNDV_WIRE_VERSION, UCS_OK, 0};
    psel_request_t *sreq[2], *rreq;
    cancel_pair_t p;
    unsigned i;

    pair_open(&p, protos);
    for (i = 0; i < 2; ++i) {
        sreq[i] = psel_tag_send_nb(p.ep, p.sbuf[i], CANCEL_LENGTH, 8, NULL,
                                   NULL);
        assert_non_null(sreq[i]);
        wait_for(&p, BOTH, WAIT_UNEXPECTED, i + 1, NULL, NULL);
    }
    assert_int_equal(psel_request_test(sreq[0], NULL), UCS_INPROGRESS);
    assert_int_equal(sreq[0]->proto.rndv->stage, PSEL_RNDV_STAGE_WAIT);

    ack.req_id = sreq[0]->proto.req_id;
    psel_test_log_clear();
    psel_test_log_capture_start();
    assert_int_equal(psel_rndv_am_input(&p.sender->proto, PSEL_AM_ID_RNDV_CANCEL_ACK,
                                        &ack, sizeof(ack)),
                     UCS_ERR_INVALID_PARAM);
    psel_assert_log_contains("sent no CANCEL");
    assert_int_equal(psel_request_test(sreq[0], NULL), UCS_INPROGRESS);

    psel_test_log_clear();
    assert_int_equal(psel_request_cancel(sreq[0]), UCS_INPROGRESS);
    assert_int_equal(psel_request_cancel(sreq[0]), UCS_INPROGRESS);
    wait_for(&p, BOTH, WAIT_DONE, 0, sreq[0], NULL);
    psel_test_log_capture_stop();
    assert_int_equal(psel_test_log_count(), 0); /* no error on either side */
    assert_int_equal(psel_request_test(sreq[0], NULL), UCS_ERR_CANCELED);
    assert_null(sreq[0]->proto.rndv);
    assert_int_equal(psel_request_cancel(sreq[0]), UCS_ERR_NO_ELEM);
    assert_int_equal(psel_tm_num_unexpected(&p.receiver->tm), 1);
    assert_int_equal(kh_size(&p.sender->rndv.sends), 1);

    rreq = psel_tag_recv_nb(p.receiver, p.rbuf, CANCEL_LENGTH, 8, UINT64_MAX,
                            NULL, NULL);
    wait_for(&p, BOTH, WAIT_DONE, 0, rreq, sreq[1]);
    assert_int_equal(psel_request_test(sreq[1], NULL), UCS_OK);
    assert_int_equal(psel_request_test(rreq, NULL), UCS_OK);
    assert_memory_equal(p.rbuf, p.sbuf[1], CANCEL_LENGTH);
    for (i = 0; i < 2; ++i) {
        psel_request_free(sreq[i]);
    }
    psel_request_free(rreq);
    pair_close(&p, 2);
}

/* The receiver matched the RTS before the CANCEL came (the receive was
 * posted first; the CANCEL left before the sender heard anything): it
 * refuses, and the transfer completes normally with the data (the send
 * waited for the CANCEL-ACK: an answer "withdrawn" would have ended it
 * with UCS_ERR_CANCELED). */
static void cancel_matched(const char *protos)
{
    psel_request_t *sreq, *rreq;
    cancel_pair_t p;

    pair_open(&p, protos);
    sreq = psel_tag_send_nb(p.ep, p.sbuf[0], CANCEL_LENGTH, 9, NULL, NULL);
    assert_non_null(sreq);
    /* the receiver does not progress: the RTS waits in its transport */
    rreq = psel_tag_recv_nb(p.receiver, p.rbuf, CANCEL_LENGTH, 9, UINT64_MAX,
                            NULL, NULL);
    assert_int_equal(psel_tm_num_expected(&p.receiver->tm), 1);
    assert_int_equal(psel_request_cancel(sreq), UCS_INPROGRESS);
    wait_for(&p, SENDER, WAIT_CANCEL_SENT, 0, sreq, NULL);

    psel_test_log_clear();
    psel_test_log_capture_start();
    wait_for(&p, RECEIVER, WAIT_EXPECTED, 0, NULL, NULL); /* RTS matched;
                                                             the CANCEL
                                                             follows it */
    wait_for(&p, BOTH, WAIT_DONE, 0, sreq, rreq);
    psel_test_log_capture_stop();
    assert_int_equal(psel_test_log_count(), 0);
    assert_int_equal(psel_request_test(sreq, NULL), UCS_OK);
    assert_int_equal(psel_request_test(rreq, NULL), UCS_OK);
    assert_memory_equal(p.rbuf, p.sbuf[0], CANCEL_LENGTH);
    psel_request_free(sreq);
    psel_request_free(rreq);
    pair_close(&p, 1);
}

static void test_cancel_unexpected_am(void **state)
{
    cancel_unexpected("rndv/am");
}

static void test_cancel_unexpected_put(void **state)
{
    cancel_unexpected("rndv/put");
}

static void test_cancel_unexpected_get(void **state)
{
    cancel_unexpected("rndv/get");
}

static void test_cancel_matched_am(void **state)
{
    cancel_matched("rndv/am");
}

static void test_cancel_matched_put(void **state)
{
    cancel_matched("rndv/put");
}

static void test_cancel_matched_get(void **state)
{
    cancel_matched("rndv/get");
}

/* ---- rndv/am data: every byte lands once ---- */

/* The receiver's one receive, or NULL. */
static psel_rndv_recv_t *the_recv(cancel_pair_t *p)
{
    khash_t(psel_rndv_reqs) *recvs = &p->receiver->rndv.recvs;
    khiter_t iter;

    for (iter = kh_begin(recvs); iter != kh_end(recvs); ++iter) {
        if (kh_exist(recvs, iter)) {
            return ucs_derived_of(kh_val(recvs, iter), psel_rndv_recv_t);
        }
    }
    return NULL;
}

/* A send and its receive of tag @a tag, up to the receiver waiting after
 * its RTR, which the sender has not seen (it does not progress): the
 * receiver's receive. */
static psel_rndv_recv_t *start_to_rtr(cancel_pair_t *p, uint64_t tag,
                                      psel_request_t **sreq_p,
                                      psel_request_t **rreq_p)
{
    double deadline = psel_time_sec() + SPIN_SEC;
    psel_request_t *sreq;
    psel_rndv_recv_t *op;
    unsigned n;

    *rreq_p = psel_tag_recv_nb(p->receiver, p->rbuf, CANCEL_LENGTH, tag,
                               UINT64_MAX, NULL, NULL);
    sreq    = psel_tag_send_nb(p->ep, p->sbuf[0], CANCEL_LENGTH, tag, NULL,
                               NULL);
    assert_non_null(sreq);
    for (n = 0; (sreq->proto.rndv == NULL) ||
                (sreq->proto.rndv->stage != PSEL_RNDV_STAGE_WAIT); ++n) {
        assert_true((n < SPIN_MAX) && (psel_time_sec() < deadline));
        psel_worker_progress(p->sender);
    }
    for (n = 0; ((op = the_recv(p)) == NULL) ||
                (op->stage != PSEL_RNDV_RECV_WAIT); ++n) {
        assert_true((n < SPIN_MAX) && (psel_time_sec() < deadline));
        psel_worker_progress(p->receiver);
    }
    *sreq_p = sreq;
    return op;
}

/* Feed the receiver a DATA fragment of @a len bytes at @a offset (the
 * sender's bytes there, or past its end zeros): @a status, and if refused
 * a log naming @a what. */
static void feed_data(cancel_pair_t *p, uint64_t rreq_id, size_t offset,
                      size_t len, ucs_status_t status, const char *what)
{
    psel_rndv_data_hdr_t hdr = {PSEL_RNDV_WIRE_VERSION, rreq_id, offset};
    uint8_t *msg             = calloc(1, sizeof(hdr) + len);
    size_t copy;

    assert_non_null(msg);
    memcpy(msg, &hdr, sizeof(hdr));
    copy = (offset >= CANCEL_LENGTH) ? 0 :
           ((len < CANCEL_LENGTH - offset) ? len : CANCEL_LENGTH - offset);
    memcpy(msg + sizeof(hdr), p->sbuf[0] + offset, copy);
    psel_test_log_clear();
    psel_test_log_capture_start();
    assert_int_equal(psel_rndv_am_input(&p->receiver->proto,
                                        PSEL_AM_ID_RNDV_DATA, msg,
                                        sizeof(hdr) + len), status);
    psel_test_log_capture_stop();
    if (what != NULL) {
        psel_assert_log_contains(what);
    } else {
        assert_int_equal(psel_test_log_count(), 0);
    }
    free(msg);
}

/*
 * A rndv/am receive waiting for its data, fed fragments from the wire side:
 * out of order is fine; a fragment over bytes already there (a duplicate,
 * an overlap), past the end, or one more separate piece than it tracks is
 * refused with nothing changed; the receive completes exactly when the
 * last byte lands, with the sender's bytes. The real sender's fragments,
 * coming after, find no receive and are dropped; the send completes.
 */
static void test_am_data_ranges(void **state)
{
    const size_t mid = 200 * KiB;
    psel_request_t *sreq, *rreq;
    psel_rndv_recv_t *op;
    cancel_pair_t p;
    uint64_t id;
    size_t k;

    pair_open(&p, "rndv/am");
    op = start_to_rtr(&p, 5, &sreq, &rreq);
    id = op->super.id;

    /* 64 separate bytes (the most it tracks), then one more piece */
    for (k = 0; k < 128; k += 2) {
        feed_data(&p, id, k, 1, UCS_OK, NULL);
    }
    feed_data(&p, id, 128, 1, UCS_ERR_INVALID_PARAM, "leave too many gaps");
    feed_data(&p, id, 0, 1, UCS_ERR_INVALID_PARAM,
              "overlap bytes already received");
    feed_data(&p, id, CANCEL_LENGTH - 10, 11, UCS_ERR_INVALID_PARAM,
              "of 307205 bytes; dropped");
    feed_data(&p, id, CANCEL_LENGTH, 1, UCS_ERR_INVALID_PARAM,
              "of 307205 bytes; dropped");
    /* the gaps: each joins two pieces */
    for (k = 1; k < 128; k += 2) {
        feed_data(&p, id, k, 1, UCS_OK, NULL);
    }
    assert_int_equal(op->landed.num, 1);
    feed_data(&p, id, mid, CANCEL_LENGTH - mid, UCS_OK, NULL);
    feed_data(&p, id, mid - 1, 2, UCS_ERR_INVALID_PARAM,
              "(102533 of 307205 bytes landed)");
    feed_data(&p, id, mid, CANCEL_LENGTH - mid, UCS_ERR_INVALID_PARAM,
              "overlap bytes already received");
    feed_data(&p, id, 127, mid - 127, UCS_ERR_INVALID_PARAM,
              "overlap bytes already received");
    assert_int_equal(psel_request_test(rreq, NULL), UCS_INPROGRESS);
    feed_data(&p, id, 128, mid - 128, UCS_OK, NULL);
    assert_int_equal(psel_request_test(rreq, NULL), UCS_OK);
    assert_memory_equal(p.rbuf, p.sbuf[0], CANCEL_LENGTH);
    assert_null(the_recv(&p));

    /* the sender, late: its fragments name a receive that is gone */
    psel_test_log_clear();
    psel_test_log_capture_start();
    wait_for(&p, BOTH, WAIT_DONE, 0, sreq, NULL);
    psel_test_log_capture_stop();
    psel_assert_log_contains("unknown receive");
    assert_int_equal(psel_request_test(sreq, NULL), UCS_OK);
    psel_request_free(sreq);
    psel_request_free(rreq);
    pair_close(&p, 1);
}

/* ---- rndv/put: an RTR with a bad record ---- */

/*
 * The receiver's RTR, with its first record's rkey one byte longer than the
 * sender's lane takes: the sender checks every record before it unpacks
 * any, keeps no rkey, fails the send and tells the receiver by FIN, which
 * fails the receive: neither waits for ever. The real RTR, after, names a
 * send that is gone.
 */
static void test_put_rtr_bad_record(void **state)
{
    psel_request_t *sreq, *rreq;
    psel_rndv_lane_rec_t rec;
    const uint8_t *in, *end;
    psel_rndv_recv_t *op;
    uint8_t *rtr, *out;
    double deadline;
    cancel_pair_t p;
    unsigned n, i, num;

    pair_open(&p, "rndv/put");
    op       = start_to_rtr(&p, 6, &sreq, &rreq);
    deadline = psel_time_sec() + SPIN_SEC;

    /* the same RTR, one byte more in the first record's rkey */
    num = ((const psel_rndv_rtr_hdr_t*)op->rtr)->num_lanes;
    assert_true(num >= 1);
    rtr = calloc(1, op->rtr_length + 1);
    assert_non_null(rtr);
    memcpy(rtr, op->rtr, sizeof(psel_rndv_rtr_hdr_t));
    in  = (const uint8_t*)op->rtr + sizeof(psel_rndv_rtr_hdr_t);
    end = (const uint8_t*)op->rtr + op->rtr_length;
    out = rtr + sizeof(psel_rndv_rtr_hdr_t);
    for (i = 0; i < num; ++i) {
        assert_true(in + sizeof(rec) <= end);
        memcpy(&rec, in, sizeof(rec));
        in += sizeof(rec);
        assert_true(in + rec.rkey_size <= end);
        memcpy(out + sizeof(rec), in, rec.rkey_size);
        in += rec.rkey_size;
        if (i == 0) {
            ++rec.rkey_size; /* the byte after it is 0 */
        }
        memcpy(out, &rec, sizeof(rec));
        out += sizeof(rec) + rec.rkey_size;
    }

    psel_test_log_clear();
    psel_test_log_capture_start();
    assert_int_equal(psel_rndv_am_input(&p.sender->proto, PSEL_AM_ID_RNDV_RTR,
                                        rtr, out - rtr),
                     UCS_ERR_INVALID_PARAM);
    psel_test_log_capture_stop();
    psel_assert_log_contains("rkeys have");
    psel_assert_log_contains("the send fails");
    assert_int_equal(sreq->proto.rndv->rkey_map, 0);
    free(rtr);

    psel_test_log_clear();
    psel_test_log_capture_start();
    wait_for(&p, BOTH, WAIT_DONE, 0, sreq, rreq);
    assert_int_equal(psel_request_test(sreq, NULL), UCS_ERR_INVALID_PARAM);
    assert_int_equal(psel_request_test(rreq, NULL), UCS_ERR_INVALID_PARAM);
    /* the real RTR comes in after the bad one: dropped */
    for (n = 0; psel_test_log_count() == 0; ++n) {
        assert_true((n < SPIN_MAX) && (psel_time_sec() < deadline + SPIN_SEC));
        psel_worker_progress(p.sender);
    }
    psel_test_log_capture_stop();
    psel_assert_log_contains("rendezvous RTR: ");
    psel_request_free(sreq);
    psel_request_free(rreq);
    pair_close(&p, 1);
}

/* ---- a control message that cannot be sent ---- */

#define FAIL_MAX_IFACES 16

static psel_worker_h     fail_worker;  /* whose ifaces refuse bcopy AMs */
static psel_rndv_event_t fail_event;   /* from this event on */
static unsigned          fail_num;
static uct_iface_h       fail_ifaces[FAIL_MAX_IFACES];
static ssize_t (*fail_saved[FAIL_MAX_IFACES])(uct_ep_h, uint8_t,
                                              uct_pack_callback_t, void*,
                                              unsigned);

/* A lane that broke: every bcopy AM fails as tcp's does on a reset. */
static ssize_t failing_am_bcopy(uct_ep_h ep, uint8_t id,
                                uct_pack_callback_t pack_cb, void *arg,
                                unsigned flags)
{
    return UCS_ERR_CONNECTION_RESET;
}

/* Replace the bcopy AM call of @a worker's ifaces by @a am_bcopy, keeping
 * theirs in fail_saved (fail_restore puts them back). */
static void bcopy_hook(psel_worker_h worker,
                       ssize_t (*am_bcopy)(uct_ep_h, uint8_t,
                                           uct_pack_callback_t, void*,
                                           unsigned))
{
    unsigned i;

    for (i = 0; (i < worker->num_ifaces) && (i < FAIL_MAX_IFACES); ++i) {
        fail_ifaces[i] = worker->ifaces[i].iface;
        fail_saved[i]  = fail_ifaces[i]->ops.ep_am_bcopy;
        fail_ifaces[i]->ops.ep_am_bcopy = am_bcopy;
    }
    fail_num = i;
}

static void fail_hook(psel_rndv_event_t event)
{
    if ((event == fail_event) && (fail_num == 0)) {
        bcopy_hook(fail_worker, failing_am_bcopy);
    }
}

static void fail_restore(void)
{
    unsigned i;

    psel_rndv_event_hook = NULL;
    for (i = 0; i < fail_num; ++i) {
        fail_ifaces[i]->ops.ep_am_bcopy = fail_saved[i];
    }
    fail_num = 0;
}

/*
 * The receiver's lane breaks just before its RTR (rndv/am) or its ATS
 * (rndv/get): the failure is not lost. The receive completes - with the
 * error, or, after an ATS that did not go, with the data it read - the
 * log says what did not go to whom, and the endpoint back to the sender
 * fails (it was wireup's, for the sender: so it goes). The sender, which
 * will hear nothing on that lane, ends when its endpoint is closed.
 */
static void control_send_fails(const char *protos, psel_rndv_event_t event,
                               ucs_status_t recv_status, const char *what)
{
    psel_request_t *sreq, *rreq;
    cancel_pair_t p;

    pair_open(&p, protos);
    assert_int_equal(ucs_list_length(&p.receiver->eps), 0);
    fail_worker          = p.receiver;
    fail_event           = event;
    fail_num             = 0;
    psel_rndv_event_hook = fail_hook;
    rreq = psel_tag_recv_nb(p.receiver, p.rbuf, CANCEL_LENGTH, 4, UINT64_MAX,
                            NULL, NULL);
    sreq = psel_tag_send_nb(p.ep, p.sbuf[0], CANCEL_LENGTH, 4, NULL, NULL);
    assert_non_null(sreq);
    psel_test_log_clear();
    psel_test_log_capture_start();
    wait_for(&p, BOTH, WAIT_DONE, 0, rreq, NULL);
    /* the failed endpoint back goes in the same progress call */
    psel_worker_progress(p.receiver);
    psel_test_log_capture_stop();
    fail_restore();
    assert_int_equal(psel_request_test(rreq, NULL), recv_status);
    if (recv_status == UCS_OK) {
        assert_memory_equal(p.rbuf, p.sbuf[0], CANCEL_LENGTH);
    }
    psel_assert_log_contains(what);
    psel_assert_log_contains("Connection reset by remote peer");
    assert_int_equal(ucs_list_length(&p.receiver->eps), 0);
    assert_int_equal(psel_request_test(sreq, NULL), UCS_INPROGRESS);

    psel_ep_close_nb(p.ep, PSEL_EP_CLOSE_FORCE, NULL, NULL);
    p.ep = NULL;
    assert_int_equal(psel_request_test(sreq, NULL), UCS_ERR_CANCELED);
    psel_request_free(sreq);
    psel_request_free(rreq);
    pair_close(&p, 1);
}

static void test_rtr_send_fails(void **state)
{
    control_send_fails("rndv/am", PSEL_RNDV_EVENT_RTR,
                       UCS_ERR_CONNECTION_RESET, "sending the RTR to sender");
}

static void test_ats_send_fails(void **state)
{
    control_send_fails("rndv/get", PSEL_RNDV_EVENT_ATS, UCS_OK,
                       "sending the ATS to sender");
}

/* ---- eager headers: a whole message goes as UCP's eager-only ---- */

#define SEEN_MAX_AMS 8

static unsigned seen_num;
static uint8_t  seen_ids[SEEN_MAX_AMS];
static ssize_t  seen_lengths[SEEN_MAX_AMS];

/* The sender's bcopy AMs, recorded and then sent by the transport's own
 * call (kept by bcopy_hook). */
static ssize_t seeing_am_bcopy(uct_ep_h ep, uint8_t id,
                               uct_pack_callback_t pack_cb, void *arg,
                               unsigned flags)
{
    unsigned i;
    ssize_t packed;

    for (i = 0; (i < fail_num) && (fail_ifaces[i] != ep->iface); ++i) {
    }
    assert_true(i < fail_num);
    packed = fail_saved[i](ep, id, pack_cb, arg, flags);
    if ((packed >= 0) && (seen_num < SEEN_MAX_AMS)) {
        seen_ids[seen_num]     = id;
        seen_lengths[seen_num] = packed;
        ++seen_num;
    }
    return packed;
}

/* Send @a length bytes by egr/bcopy; @return the AMs it took. */
static unsigned send_seen(cancel_pair_t *p, size_t length)
{
    psel_request_t *sreq, *rreq;

    seen_num = 0;
    rreq = psel_tag_recv_nb(p->receiver, p->rbuf, length, 5, UINT64_MAX,
                            NULL, NULL);
    sreq = psel_tag_send_nb(p->ep, p->sbuf[0], length, 5, NULL, NULL);
    wait_for(p, BOTH, WAIT_DONE, 0, rreq, UCS_PTR_IS_PTR(sreq) ? sreq : NULL);
    assert_int_equal(psel_request_test(rreq, NULL), UCS_OK);
    assert_memory_equal(p->rbuf, p->sbuf[0], length);
    psel_request_free(rreq);
    if (UCS_PTR_IS_PTR(sreq)) {
        assert_int_equal(psel_request_test(sreq, NULL), UCS_OK);
        psel_request_free(sreq);
    }
    return seen_num;
}

/* A message that fits one fragment carries only its tag (8 bytes) under
 * EAGER_SHORT, as UCP's eager-only messages: the payload sits where UCP's
 * does in the transport buffer. A longer one goes as a first fragment
 * (32-byte header with ids and size) and later ones (24 bytes). */
static void test_eager_whole_header(void **state)
{
    cancel_pair_t p;
    unsigned i, n;
    ssize_t total;

    pair_open(&p, "egr/bcopy");
    bcopy_hook(p.sender, seeing_am_bcopy);

    assert_int_equal(send_seen(&p, 1000), 1);
    assert_int_equal(seen_ids[0], PSEL_AM_ID_EAGER_SHORT);
    assert_int_equal(seen_lengths[0], PSEL_EAGER_SHORT_HDR + 1000);

    n = send_seen(&p, 20000); /* posix: 8 KiB fragments */
    assert_true((n >= 3) && (n < SEEN_MAX_AMS));
    assert_int_equal(seen_ids[0], PSEL_AM_ID_EAGER_FIRST);
    assert_int_equal(seen_ids[1], PSEL_AM_ID_EAGER_MIDDLE);
    assert_int_equal(seen_ids[n - 1], PSEL_AM_ID_EAGER_MIDDLE);
    for (i = 0, total = 0; i < n; ++i) {
        total += seen_lengths[i];
    }
    assert_int_equal(total, PSEL_EAGER_FIRST_HDR + 20000 +
                            (n - 1) * PSEL_EAGER_MIDDLE_HDR);

    fail_restore();
    pair_close(&p, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_one_lane_fragments),
        cmocka_unit_test(test_split_min_chunk),
        cmocka_unit_test(test_split_shares),
        cmocka_unit_test(test_split_alignment_and_max_frag),
        cmocka_unit_test(test_split_min_frag),
        cmocka_unit_test(test_split_lane_limits),
        cmocka_unit_test(test_malformed_rts),
        cmocka_unit_test(test_malformed_replies),
        cmocka_unit_test(test_still_works),
        cmocka_unit_test(test_malformed_cancel),
        cmocka_unit_test(test_version_first),
        cmocka_unit_test(test_cancel_recv),
        cmocka_unit_test(test_cancel_unexpected_am),
        cmocka_unit_test(test_cancel_unexpected_put),
        cmocka_unit_test(test_cancel_unexpected_get),
        cmocka_unit_test(test_cancel_matched_am),
        cmocka_unit_test(test_cancel_matched_put),
        cmocka_unit_test(test_cancel_matched_get),
        cmocka_unit_test(test_byte_ranges),
        cmocka_unit_test(test_am_data_ranges),
        cmocka_unit_test(test_put_rtr_bad_record),
        cmocka_unit_test(test_rtr_send_fails),
        cmocka_unit_test(test_ats_send_fails),
        cmocka_unit_test(test_eager_whole_header),
    };

    /* the protocols that ran are checked: count them */
    setenv("UCX_PSEL_PROTO_INFO", "used", 1);
    return cmocka_run_group_tests_name("rndv_unit", tests, setup, teardown);
}
