/*
 * Unit tests of tag matching and eager reassembly: expected and unexpected
 * arrivals, masks, order, fragments in every position, truncation, 0-byte
 * messages, cancel, cleanup, malformed arrivals, a randomized stress test
 * against a simple model, and rendezvous descriptors in the same queues.
 */
#include "test_util.h"

#include <core/tag_match.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define FILL_BYTE   0xee    /* receive buffers start with this */
#define FULL_MASK   UINT64_MAX


/* ---- helpers ------------------------------------------------------------ */

typedef struct {
    psel_tm_recv_t recv;
    unsigned       completions;  /* times complete() was called */
    unsigned       order;        /* completion_seq at the last completion */
} test_req_t;

static unsigned completion_seq;

static uint64_t rng_state;

static uint64_t rnd(void)
{
    /* xorshift64*: deterministic, seeded per test */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

/* uniform in [lo, hi] */
static size_t rnd_range(size_t lo, size_t hi)
{
    return lo + (size_t)(rnd() % (hi - lo + 1));
}

/* Byte @a offset of message (sender, msg): every message has its own bytes. */
static uint8_t msg_byte(uint64_t sender, uint64_t msg, size_t offset)
{
    uint64_t h = (sender * 1000003u) ^ (msg * 7919u) ^ (offset * 131u);

    h ^= h >> 13;
    return (uint8_t)(h * 0x9e3779b1u >> 24);
}

static uint8_t *msg_data(uint64_t sender, uint64_t msg, size_t total)
{
    uint8_t *data = malloc(total ? total : 1);
    size_t i;

    assert_non_null(data);
    for (i = 0; i < total; ++i) {
        data[i] = msg_byte(sender, msg, i);
    }
    return data;
}

static void req_complete_cb(psel_tm_recv_t *recv)
{
    test_req_t *req = (test_req_t*)((char*)recv - offsetof(test_req_t, recv));

    ++req->completions;
    req->order = ++completion_seq;
}

/* A receive of @a length bytes (buffer NULL if 0), filled with FILL_BYTE. */
static void req_init(test_req_t *req, uint64_t tag, uint64_t mask,
                     size_t length)
{
    memset(req, 0, sizeof(*req));
    req->recv.tag      = tag;
    req->recv.tag_mask = mask;
    req->recv.length   = length;
    req->recv.buffer   = length ? malloc(length) : NULL;
    req->recv.complete = req_complete_cb;
    req->recv.status   = UCS_ERR_LAST;
    if (length) {
        assert_non_null(req->recv.buffer);
        memset(req->recv.buffer, FILL_BYTE, length);
    }
}

static void req_release(test_req_t *req)
{
    free(req->recv.buffer);
    req->recv.buffer = NULL;
}

/* The receive completed once with message (sender, msg, tag, total):
 * min(length, total) bytes are the message's, the rest untouched. */
static void check_req(const test_req_t *req, uint64_t sender, uint64_t msg,
                      uint64_t tag, size_t total)
{
    const uint8_t *buf = req->recv.buffer;
    size_t i, n = (total < req->recv.length) ? total : req->recv.length;

    assert_int_equal(req->completions, 1);
    assert_int_equal(req->recv.status, (total > req->recv.length) ?
                     UCS_ERR_MESSAGE_TRUNCATED : UCS_OK);
    assert_int_equal(req->recv.info.length, total);
    assert_int_equal(req->recv.info.tag, tag);
    assert_int_equal(req->recv.state, PSEL_TM_RECV_IDLE);
    for (i = 0; i < n; ++i) {
        if (buf[i] != msg_byte(sender, msg, i)) {
            fail_msg("sender %" PRIu64 " msg %" PRIu64 " byte %zu: got 0x%x "
                     "expected 0x%x", sender, msg, i, buf[i],
                     msg_byte(sender, msg, i));
        }
    }
    for (; i < req->recv.length; ++i) {
        if (buf[i] != FILL_BYTE) {
            fail_msg("byte %zu beyond the message was written", i);
        }
    }
}

/* Send a whole message in one fragment. */
static void send_whole(psel_tm_t *tm, uint64_t sender, uint64_t msg,
                       uint64_t tag, size_t total)
{
    uint8_t *data = msg_data(sender, msg, total);

    assert_int_equal(psel_tm_eager_first(tm, sender, msg, tag, total, data,
                                         total), UCS_OK);
    free(data);
}

/* Split [0, total) into random fragments of 1..max_frag bytes (the first
 * may be 0 bytes when total is 0); returns their count, offsets in @a offs. */
static size_t split(size_t total, size_t max_frag, size_t *offs)
{
    size_t n = 0, off = 0;

    do {
        offs[n++] = off;
        off      += rnd_range(1, max_frag);
    } while (off < total);
    offs[n] = total;
    return n;
}

/* Deliver fragment @a i of a message split at @a offs. */
static ucs_status_t send_frag(psel_tm_t *tm, uint64_t sender, uint64_t msg,
                              uint64_t tag, const uint8_t *data, size_t total,
                              const size_t *offs, size_t i)
{
    size_t len = offs[i + 1] - offs[i];

    if (i == 0) {
        return psel_tm_eager_first(tm, sender, msg, tag, total, data, len);
    }
    return psel_tm_eager_middle(tm, sender, msg, offs[i], data + offs[i], len);
}

static void shuffle(size_t *v, size_t n)
{
    size_t i, j, t;

    for (i = n; i > 1; --i) {
        j        = rnd() % i;
        t        = v[i - 1];
        v[i - 1] = v[j];
        v[j]     = t;
    }
}

static void expect_reject(ucs_status_t status, const char *needle)
{
    assert_int_equal(status, UCS_ERR_INVALID_PARAM);
    psel_assert_log_contains("tag match: ");
    psel_assert_log_contains(needle);
    psel_assert_log_contains("sender ");
    psel_assert_log_contains(" msg ");
    psel_test_log_clear();
}

static int setup(void **state)
{
    psel_tm_t *tm = malloc(sizeof(*tm));

    assert_non_null(tm);
    assert_int_equal(psel_tm_init(tm), UCS_OK);
    completion_seq = 0;
    rng_state      = 0x1234567887654321ull;
    *state         = tm;
    return 0;
}

static int teardown(void **state)
{
    psel_tm_t *tm = *state;

    psel_test_log_capture_stop();
    assert_int_equal(psel_tm_num_inflight(tm), 0);
    psel_tm_cleanup(tm);
    free(tm);
    return 0;
}


/* ---- expected / unexpected ------------------------------------------- */

static void test_expected_then_arrival(void **state)
{
    psel_tm_t *tm = *state;
    test_req_t req;

    req_init(&req, 42, FULL_MASK, 100);
    psel_tm_post(tm, &req.recv);
    assert_int_equal(psel_tm_num_expected(tm), 1);
    assert_int_equal(req.completions, 0);
    assert_int_equal(req.recv.state, PSEL_TM_RECV_EXPECTED);

    send_whole(tm, 1, 1, 42, 60);
    check_req(&req, 1, 1, 42, 60);
    assert_int_equal(psel_tm_num_expected(tm), 0);
    assert_int_equal(psel_tm_num_unexpected(tm), 0);
    req_release(&req);
}

static void test_unexpected_then_post(void **state)
{
    psel_tm_t *tm = *state;
    test_req_t req;

    send_whole(tm, 3, 9, 42, 100);
    assert_int_equal(psel_tm_num_unexpected(tm), 1);
    assert_int_equal(psel_tm_num_inflight(tm), 0);

    req_init(&req, 42, FULL_MASK, 100);
    psel_tm_post(tm, &req.recv);
    check_req(&req, 3, 9, 42, 100);
    assert_int_equal(psel_tm_num_expected(tm), 0);
    assert_int_equal(psel_tm_num_unexpected(tm), 0);
    req_release(&req);
}

static void test_mask_full_matches_only_the_exact_tag(void **state)
{
    psel_tm_t *tm = *state;
    test_req_t req;

    req_init(&req, 0xabcd, FULL_MASK, 16);
    psel_tm_post(tm, &req.recv);
    send_whole(tm, 1, 1, 0xabcc, 8);
    send_whole(tm, 1, 2, 0x1abcd, 8);
    send_whole(tm, 1, 3, 0xabcd | (1ull << 63), 8);
    assert_int_equal(req.completions, 0);
    assert_int_equal(psel_tm_num_unexpected(tm), 3);

    send_whole(tm, 1, 4, 0xabcd, 8);
    check_req(&req, 1, 4, 0xabcd, 8);
    req_release(&req);
}

static void test_mask_zero_matches_every_tag(void **state)
{
    psel_tm_t *tm = *state;
    test_req_t req[3];
    uint64_t tags[3] = {0, UINT64_MAX, 0x123456789};
    int i;

    for (i = 0; i < 3; ++i) {
        req_init(&req[i], 0x5555, 0, 8);
        psel_tm_post(tm, &req[i].recv);
    }
    for (i = 0; i < 3; ++i) {
        send_whole(tm, 2, i, tags[i], 8);
        check_req(&req[i], 2, i, tags[i], 8);
        req_release(&req[i]);
    }
}

static void test_mask_partial_compares_masked_bits(void **state)
{
    psel_tm_t *tm = *state;
    const uint64_t mask = 0xffff0000ffff0000ull;
    test_req_t req;

    /* unexpected: differs in masked bits, then equal up to unmasked bits */
    send_whole(tm, 1, 1, 0x0001000000010000ull, 4);
    send_whole(tm, 1, 2, 0x000200000001ffffull, 4);
    send_whole(tm, 1, 3, 0x0001ffff0001ffffull, 4);

    req_init(&req, 0x0001000000010000ull, mask, 4);
    psel_tm_post(tm, &req.recv);
    check_req(&req, 1, 1, 0x0001000000010000ull, 4);
    req_release(&req);

    req_init(&req, 0x0001123400015678ull, mask, 4);
    psel_tm_post(tm, &req.recv);
    check_req(&req, 1, 3, 0x0001ffff0001ffffull, 4);
    req_release(&req);

    assert_int_equal(psel_tm_num_unexpected(tm), 1);
    req_init(&req, 0x0002000000010000ull, mask, 4);
    psel_tm_post(tm, &req.recv);
    check_req(&req, 1, 2, 0x000200000001ffffull, 4);
    req_release(&req);
}

static void test_expected_oldest_matching_receive_wins(void **state)
{
    psel_tm_t *tm = *state;
    test_req_t exact, wild, exact2;

    req_init(&exact, 7, FULL_MASK, 8);
    req_init(&wild, 0, 0, 8);
    req_init(&exact2, 7, FULL_MASK, 8);
    psel_tm_post(tm, &exact.recv);
    psel_tm_post(tm, &wild.recv);
    psel_tm_post(tm, &exact2.recv);

    send_whole(tm, 1, 1, 8, 8);      /* skips exact, takes wild */
    check_req(&wild, 1, 1, 8, 8);
    send_whole(tm, 1, 2, 7, 8);
    check_req(&exact, 1, 2, 7, 8);
    send_whole(tm, 1, 3, 7, 8);
    check_req(&exact2, 1, 3, 7, 8);
    assert_true(wild.order < exact.order && exact.order < exact2.order);
    req_release(&exact);
    req_release(&wild);
    req_release(&exact2);
}


/* ---- order --------------------------------------------------------- */

static void test_fifo_per_sender_and_among_senders_unexpected(void **state)
{
    psel_tm_t *tm = *state;
    enum { SENDERS = 4, PER_SENDER = 25 };
    uint64_t sender[SENDERS * PER_SENDER], msg[SENDERS * PER_SENDER];
    size_t total[SENDERS * PER_SENDER];
    uint64_t next[SENDERS] = {0};
    test_req_t req;
    size_t i;

    /* random interleaving of senders, each in its own order */
    for (i = 0; i < SENDERS * PER_SENDER; ++i) {
        do {
            sender[i] = rnd() % SENDERS;
        } while (next[sender[i]] == PER_SENDER);
        msg[i] = next[sender[i]]++;
        total[i] = rnd_range(0, 40);
        send_whole(tm, sender[i], msg[i], 5, total[i]);
    }
    assert_int_equal(psel_tm_num_unexpected(tm), SENDERS * PER_SENDER);

    for (i = 0; i < SENDERS * PER_SENDER; ++i) {
        req_init(&req, 5, FULL_MASK, 64);
        psel_tm_post(tm, &req.recv);
        check_req(&req, sender[i], msg[i], 5, total[i]);
        req_release(&req);
    }
    assert_int_equal(psel_tm_num_unexpected(tm), 0);
}

static void test_fifo_per_sender_and_among_senders_expected(void **state)
{
    psel_tm_t *tm = *state;
    enum { SENDERS = 3, N = 60 };
    test_req_t req[N];
    uint64_t next[SENDERS] = {0}, s;
    size_t i;

    for (i = 0; i < N; ++i) {
        req_init(&req[i], 0, 0, 32);
        psel_tm_post(tm, &req[i].recv);
    }
    for (i = 0; i < N; ++i) {
        s = rnd() % SENDERS;
        send_whole(tm, s, next[s], s << 32, 32);
        check_req(&req[i], s, next[s], s << 32, 32);
        ++next[s];
        req_release(&req[i]);
    }
}


/* ---- reassembly ------------------------------------------------------ */

/* One message in random fragments, the receive posted before fragment
 * @a post_at (nfrags = after the last). */
static void run_reassembly(psel_tm_t *tm, size_t total, size_t max_frag,
                           size_t length, int post_pos, int out_of_order)
{
    static uint64_t msg_id;
    size_t offs[total + 2], order[total + 1];
    uint8_t *data;
    size_t n, i, post_at;
    test_req_t req;
    uint64_t id = ++msg_id;

    data = msg_data(7, id, total);
    n    = split(total, max_frag, offs);
    for (i = 0; i < n; ++i) {
        order[i] = i;
    }
    if (out_of_order) {
        shuffle(order + 1, n - 1);   /* the first fragment stays first */
    }
    post_at = (post_pos < 0) ? rnd_range(0, n) : ((size_t)post_pos > n) ?
              n : (size_t)post_pos;

    req_init(&req, 99, FULL_MASK, length);
    for (i = 0; i <= n; ++i) {
        if (i == post_at) {
            psel_tm_post(tm, &req.recv);
            assert_int_equal(psel_tm_num_expected(tm), (i == 0) ? 1 : 0);
        }
        if (i == n) {
            break;
        }
        assert_int_equal(req.completions, 0);
        assert_int_equal(send_frag(tm, 7, id, 99, data, total, offs, order[i]),
                         UCS_OK);
        assert_int_equal(psel_tm_num_inflight(tm), (i + 1 < n) ? 1 : 0);
    }
    check_req(&req, 7, id, 99, total);
    assert_int_equal(psel_tm_num_expected(tm), 0);
    assert_int_equal(psel_tm_num_unexpected(tm), 0);
    assert_int_equal(psel_tm_num_inflight(tm), 0);
    req_release(&req);
    free(data);
}

static void test_reassembly_posted_before_fragments(void **state)
{
    size_t total, frag;

    for (total = 1; total <= 70; total += 3) {
        for (frag = 1; frag <= total + 1; frag += 2) {
            run_reassembly(*state, total, frag, total, 0, 0);
        }
    }
}

static void test_reassembly_posted_after_fragments(void **state)
{
    size_t total, frag;

    for (total = 1; total <= 70; total += 3) {
        for (frag = 1; frag <= total + 1; frag += 2) {
            run_reassembly(*state, total, frag, total + 5, INT32_MAX, 0);
        }
    }
}

static void test_reassembly_posted_between_fragments(void **state)
{
    size_t total, i;

    for (i = 0; i < 400; ++i) {
        total = rnd_range(2, 300);
        run_reassembly(*state, total, rnd_range(1, total), total, -1, 0);
    }
    for (i = 1; i < 20; ++i) {   /* every position, 1-byte fragments */
        run_reassembly(*state, 20, 1, 20, (int)i, 0);
    }
}

static void test_reassembly_out_of_order_middle_fragments(void **state)
{
    size_t total, i;

    for (i = 0; i < 400; ++i) {
        total = rnd_range(2, 400);
        run_reassembly(*state, total, rnd_range(1, 16), total, -1, 1);
    }
}

static void test_reassembly_interleaved_messages(void **state)
{
    psel_tm_t *tm = *state;
    enum { N = 6, TOTAL = 500 };
    size_t offs[N][TOTAL + 2], nfrag[N], sent[N] = {0}, left = 0, i;
    uint8_t *data[N];
    test_req_t req[N];

    /* three posted before, three after; all fragments interleaved */
    for (i = 0; i < N; ++i) {
        data[i]  = msg_data(i, 100 + i, TOTAL);
        nfrag[i] = split(TOTAL, 37, offs[i]);
        left    += nfrag[i];
        req_init(&req[i], i, FULL_MASK, TOTAL);
        if (i < N / 2) {
            psel_tm_post(tm, &req[i].recv);
        }
    }
    for (i = 0; i < N; ++i) {      /* first fragments in order */
        assert_int_equal(send_frag(tm, i, 100 + i, i, data[i], TOTAL, offs[i],
                                   0), UCS_OK);
        ++sent[i];
        --left;
    }
    assert_int_equal(psel_tm_num_inflight(tm), N);
    while (left > 0) {
        i = rnd() % N;
        if (sent[i] == nfrag[i]) {
            continue;
        }
        if ((i >= N / 2) && (sent[i] == nfrag[i] / 2)) {
            psel_tm_post(tm, &req[i].recv);
        }
        assert_int_equal(send_frag(tm, i, 100 + i, i, data[i], TOTAL, offs[i],
                                   sent[i]), UCS_OK);
        ++sent[i];
        --left;
    }
    for (i = 0; i < N; ++i) {
        check_req(&req[i], i, 100 + i, i, TOTAL);
        req_release(&req[i]);
        free(data[i]);
    }
}


/* ---- truncation and 0 bytes ------------------------------------------- */

static void test_truncation_consumes_message_next_is_intact(void **state)
{
    psel_tm_t *tm = *state;
    int pos;

    for (pos = 0; pos < 3; ++pos) {
        /* posted before, between and after the fragments; both single and
         * multi-fragment; each followed by an intact message */
        run_reassembly(tm, 200, 30, 50, (pos == 0) ? 0 :
                       (pos == 1) ? 3 : INT32_MAX, 0);
        run_reassembly(tm, 200, 30, 200, pos - 1, 0);
        run_reassembly(tm, 200, 300, 1, pos ? INT32_MAX : 0, 0);
        run_reassembly(tm, 200, 300, 200, pos ? INT32_MAX : 0, 0);
    }
}

static void test_truncation_expected_then_next_message(void **state)
{
    psel_tm_t *tm = *state;
    test_req_t small, big;

    req_init(&small, 1, FULL_MASK, 10);
    req_init(&big, 1, FULL_MASK, 100);
    psel_tm_post(tm, &small.recv);
    psel_tm_post(tm, &big.recv);
    send_whole(tm, 4, 1, 1, 100);
    send_whole(tm, 4, 2, 1, 100);
    check_req(&small, 4, 1, 1, 100);
    assert_int_equal(small.recv.status, UCS_ERR_MESSAGE_TRUNCATED);
    assert_int_equal(small.recv.info.length, 100);
    check_req(&big, 4, 2, 1, 100);
    assert_int_equal(big.recv.status, UCS_OK);
    assert_int_equal(psel_tm_num_unexpected(tm), 0);
    req_release(&small);
    req_release(&big);
}

static void test_zero_byte_messages(void **state)
{
    psel_tm_t *tm = *state;
    test_req_t req;

    /* expected, NULL buffer */
    req_init(&req, 3, FULL_MASK, 0);
    psel_tm_post(tm, &req.recv);
    assert_int_equal(psel_tm_eager_first(tm, 1, 1, 3, 0, NULL, 0), UCS_OK);
    check_req(&req, 1, 1, 3, 0);

    /* unexpected, then a receive with a buffer */
    assert_int_equal(psel_tm_eager_first(tm, 1, 2, 3, 0, NULL, 0), UCS_OK);
    assert_int_equal(psel_tm_num_unexpected(tm), 1);
    assert_int_equal(psel_tm_num_inflight(tm), 0);
    req_init(&req, 3, FULL_MASK, 8);
    psel_tm_post(tm, &req.recv);
    check_req(&req, 1, 2, 3, 0);
    req_release(&req);

    /* a 5-byte message into a 0-byte receive: truncated */
    req_init(&req, 3, FULL_MASK, 0);
    psel_tm_post(tm, &req.recv);
    send_whole(tm, 1, 3, 3, 5);
    check_req(&req, 1, 3, 3, 5);
    assert_int_equal(req.recv.status, UCS_ERR_MESSAGE_TRUNCATED);

    /* through the fragment path, posted before and after */
    run_reassembly(tm, 0, 1, 0, 0, 0);
    run_reassembly(tm, 0, 1, 0, 1, 0);
}

static void test_zero_length_first_fragment_of_larger_message(void **state)
{
    psel_tm_t *tm = *state;
    uint8_t *data = msg_data(2, 8, 10);
    test_req_t req;

    assert_int_equal(psel_tm_eager_first(tm, 2, 8, 0, 10, NULL, 0), UCS_OK);
    assert_int_equal(psel_tm_eager_middle(tm, 2, 8, 5, data + 5, 5), UCS_OK);
    req_init(&req, 0, FULL_MASK, 10);
    psel_tm_post(tm, &req.recv);
    assert_int_equal(req.completions, 0);
    assert_int_equal(psel_tm_eager_middle(tm, 2, 8, 0, data, 5), UCS_OK);
    check_req(&req, 2, 8, 0, 10);
    req_release(&req);
    free(data);
}


/* ---- cancel, cleanup, callbacks --------------------------------------- */

static void test_cancel_expected_busy_and_no_elem(void **state)
{
    psel_tm_t *tm = *state;
    uint8_t *data = msg_data(1, 1, 20);
    test_req_t a, b;

    req_init(&a, 1, FULL_MASK, 20);
    req_init(&b, 1, FULL_MASK, 20);
    psel_tm_post(tm, &a.recv);
    psel_tm_post(tm, &b.recv);

    assert_int_equal(psel_tm_cancel(tm, &a.recv), UCS_OK);
    assert_int_equal(a.completions, 1);
    assert_int_equal(a.recv.status, UCS_ERR_CANCELED);
    assert_int_equal(a.recv.info.length, 0);
    assert_int_equal(psel_tm_num_expected(tm), 1);
    assert_int_equal(psel_tm_cancel(tm, &a.recv), UCS_ERR_NO_ELEM);
    assert_int_equal(a.completions, 1);

    /* b matches a message still arriving: busy, then completes normally */
    assert_int_equal(psel_tm_eager_first(tm, 1, 1, 1, 20, data, 10), UCS_OK);
    assert_int_equal(psel_tm_cancel(tm, &b.recv), UCS_ERR_BUSY);
    assert_int_equal(psel_tm_eager_middle(tm, 1, 1, 10, data + 10, 10),
                     UCS_OK);
    check_req(&b, 1, 1, 1, 20);
    assert_int_equal(psel_tm_cancel(tm, &b.recv), UCS_ERR_NO_ELEM);
    assert_int_equal(b.completions, 1);

    /* the canceled receive matches nothing any more */
    send_whole(tm, 1, 2, 1, 4);
    assert_int_equal(psel_tm_num_unexpected(tm), 1);
    assert_int_equal(a.completions, 1);
    req_release(&a);
    req_release(&b);
    free(data);
}

static void test_cleanup_cancels_receives_and_frees_pending_data(void **state)
{
    psel_tm_t *tm = *state;
    uint8_t *data = msg_data(1, 1, 4000);
    test_req_t expected, matched, matched_ooo;
    size_t i;

    /* a whole unexpected message, a partial unexpected message with many
     * gaps (heap range tracking), a matched partial message, a matched
     * partial message with gaps, and an expected receive */
    send_whole(tm, 9, 1, 1, 300);
    assert_int_equal(psel_tm_eager_first(tm, 9, 2, 1, 4000, data, 100),
                     UCS_OK);
    for (i = 0; i < 20; ++i) {
        assert_int_equal(psel_tm_eager_middle(tm, 9, 2, 200 + i * 100,
                                              data + 200 + i * 100, 50),
                         UCS_OK);
    }
    req_init(&matched, 2, FULL_MASK, 4000);
    psel_tm_post(tm, &matched.recv);
    assert_int_equal(psel_tm_eager_first(tm, 9, 3, 2, 4000, data, 100),
                     UCS_OK);
    req_init(&matched_ooo, 3, FULL_MASK, 4000);
    psel_tm_post(tm, &matched_ooo.recv);
    assert_int_equal(psel_tm_eager_first(tm, 9, 4, 3, 4000, data, 100),
                     UCS_OK);
    for (i = 0; i < 20; ++i) {
        assert_int_equal(psel_tm_eager_middle(tm, 9, 4, 200 + i * 100,
                                              data + 200 + i * 100, 50),
                         UCS_OK);
    }
    req_init(&expected, 4, FULL_MASK, 10);
    psel_tm_post(tm, &expected.recv);

    assert_int_equal(psel_tm_num_unexpected(tm), 2);
    assert_int_equal(psel_tm_num_expected(tm), 1);
    assert_int_equal(psel_tm_num_inflight(tm), 3);

    psel_tm_cleanup(tm);
    assert_int_equal(expected.completions, 1);
    assert_int_equal(expected.recv.status, UCS_ERR_CANCELED);
    assert_int_equal(matched.completions, 1);
    assert_int_equal(matched.recv.status, UCS_ERR_CANCELED);
    assert_int_equal(matched_ooo.completions, 1);
    assert_int_equal(matched_ooo.recv.status, UCS_ERR_CANCELED);
    assert_int_equal(psel_tm_cancel(tm, &matched.recv), UCS_ERR_NO_ELEM);
    assert_int_equal(psel_tm_num_unexpected(tm), 0);
    assert_int_equal(psel_tm_num_expected(tm), 0);
    assert_int_equal(psel_tm_num_inflight(tm), 0);

    /* the matcher is usable again; teardown cleans up once more */
    send_whole(tm, 9, 1, 1, 30);
    req_release(&expected);
    req_release(&matched);
    req_release(&matched_ooo);
    free(data);
}

/* A sender goes (K5): its half-arrived messages go with it - unmatched ones
 * leave the unexpected queue, a receive that took one over completes with
 * the error - while its whole messages stay, and another sender's half
 * message completes normally. A late fragment of a purged message is an
 * unknown message's. */
static void test_purge_sender(void **state)
{
    psel_tm_t *tm = *state;
    uint8_t *a2   = msg_data(7, 2, 1000);
    uint8_t *a3   = msg_data(7, 3, 1000);
    uint8_t *b1   = msg_data(8, 1, 1000);
    test_req_t matched, whole, other;

    send_whole(tm, 7, 1, 1, 300);                     /* whole: stays */
    assert_int_equal(psel_tm_eager_first(tm, 7, 2, 2, 1000, a2, 100),
                     UCS_OK);                         /* half, unmatched */
    req_init(&matched, 3, FULL_MASK, 1000);
    psel_tm_post(tm, &matched.recv);
    assert_int_equal(psel_tm_eager_first(tm, 7, 3, 3, 1000, a3, 100),
                     UCS_OK);                         /* half, matched */
    assert_int_equal(psel_tm_eager_first(tm, 8, 1, 4, 1000, b1, 100),
                     UCS_OK);                         /* another sender */
    assert_int_equal(psel_tm_num_unexpected(tm), 3);
    assert_int_equal(psel_tm_num_inflight(tm), 3);

    assert_int_equal(psel_tm_purge_sender(tm, 7, UCS_ERR_CONNECTION_RESET),
                     2);
    assert_int_equal(matched.completions, 1);
    assert_int_equal(matched.recv.status, UCS_ERR_CONNECTION_RESET);
    assert_int_equal(matched.recv.info.length, 0); /* nothing delivered */
    assert_int_equal(psel_tm_num_unexpected(tm), 2);
    assert_int_equal(psel_tm_num_inflight(tm), 1);
    assert_int_equal(psel_tm_purge_sender(tm, 7, UCS_ERR_CONNECTION_RESET),
                     0);

    psel_test_log_clear();
    psel_test_log_capture_start();
    assert_int_equal(psel_tm_eager_middle(tm, 7, 2, 100, a2 + 100, 900),
                     UCS_ERR_INVALID_PARAM);
    psel_test_log_capture_stop();
    psel_assert_log_contains("middle fragment of an unknown message");

    req_init(&whole, 1, FULL_MASK, 300);
    psel_tm_post(tm, &whole.recv);
    check_req(&whole, 7, 1, 1, 300);
    req_init(&other, 4, FULL_MASK, 1000);
    psel_tm_post(tm, &other.recv);
    assert_int_equal(other.completions, 0);
    assert_int_equal(psel_tm_eager_middle(tm, 8, 1, 100, b1 + 100, 900),
                     UCS_OK);
    check_req(&other, 8, 1, 4, 1000);
    assert_int_equal(psel_tm_num_unexpected(tm), 0);
    assert_int_equal(psel_tm_num_inflight(tm), 0);

    req_release(&matched);
    req_release(&whole);
    req_release(&other);
    free(a2);
    free(a3);
    free(b1);
}

static psel_tm_t  *repost_tm;
static test_req_t repost_next;
static int        repost_done;

static void repost_cb(psel_tm_recv_t *recv)
{
    req_complete_cb(recv);
    if (!repost_done) {
        repost_done = 1;
        psel_tm_post(repost_tm, &repost_next.recv);
    }
}

static void test_post_from_callback_reposts(void **state)
{
    psel_tm_t *tm = *state;
    test_req_t first;

    /* the callback posts while the matcher is completing: that receive
     * consumes the next unexpected message at once */
    repost_tm   = tm;
    repost_done = 0;
    send_whole(tm, 1, 1, 6, 8);
    send_whole(tm, 1, 2, 6, 8);
    req_init(&repost_next, 6, FULL_MASK, 8);
    req_init(&first, 6, FULL_MASK, 8);
    first.recv.complete = repost_cb;
    psel_tm_post(tm, &first.recv);
    check_req(&first, 1, 1, 6, 8);
    check_req(&repost_next, 1, 2, 6, 8);
    assert_true(first.order < repost_next.order);
    assert_int_equal(psel_tm_num_unexpected(tm), 0);

    /* and from a completion by a fragment arrival */
    req_release(&repost_next);
    req_release(&first);
    req_init(&repost_next, 6, FULL_MASK, 8);
    req_init(&first, 6, FULL_MASK, 8);
    first.recv.complete = repost_cb;
    repost_done         = 0;
    psel_tm_post(tm, &first.recv);
    send_whole(tm, 1, 3, 6, 8);
    assert_int_equal(psel_tm_num_expected(tm), 1);
    send_whole(tm, 1, 4, 6, 8);
    check_req(&first, 1, 3, 6, 8);
    check_req(&repost_next, 1, 4, 6, 8);
    req_release(&repost_next);
    req_release(&first);
}


/* ---- malformed arrivals ---------------------------------------------- */

static void test_reject_middle_of_unknown_message(void **state)
{
    psel_tm_t *tm = *state;
    uint8_t b[4] = {0};

    psel_test_log_capture_start();
    expect_reject(psel_tm_eager_middle(tm, 0xab, 0xcd, 10, b, 4),
                  "middle fragment of an unknown message (sender ab msg cd "
                  "offset 10 length 4)");
    /* a complete message is no longer in flight */
    send_whole(tm, 0xab, 0xcd, 1, 4);
    expect_reject(psel_tm_eager_middle(tm, 0xab, 0xcd, 0, b, 4),
                  "unknown message");
    assert_int_equal(psel_tm_num_unexpected(tm), 1);
    assert_int_equal(psel_tm_num_inflight(tm), 0);
}

/* A partial message (sender 5, msg 1, 100 bytes, [0, 40) and [60, 80)
 * landed), posted or not; after the bad fragment, the rest still lands and
 * the message is intact. */
static void run_bad_fragment(psel_tm_t *tm, int posted, size_t offset,
                             size_t len, const char *needle)
{
    uint8_t *data = msg_data(5, 1, 100), junk[200];
    test_req_t req;

    memset(junk, 0x77, sizeof(junk));
    req_init(&req, 1, FULL_MASK, 100);
    if (posted) {
        psel_tm_post(tm, &req.recv);
    }
    assert_int_equal(psel_tm_eager_first(tm, 5, 1, 1, 100, data, 40), UCS_OK);
    assert_int_equal(psel_tm_eager_middle(tm, 5, 1, 60, data + 60, 20),
                     UCS_OK);

    psel_test_log_capture_start();
    expect_reject(psel_tm_eager_middle(tm, 5, 1, offset, junk, len), needle);
    psel_test_log_capture_stop();
    assert_int_equal(psel_tm_num_inflight(tm), 1);
    assert_int_equal(psel_tm_num_unexpected(tm), posted ? 0 : 1);

    /* another message is unaffected */
    send_whole(tm, 6, 1, 2, 10);
    assert_int_equal(psel_tm_num_unexpected(tm), posted ? 1 : 2);

    if (!posted) {
        psel_tm_post(tm, &req.recv);
    }
    assert_int_equal(psel_tm_eager_middle(tm, 5, 1, 40, data + 40, 20),
                     UCS_OK);
    assert_int_equal(req.completions, 0);
    assert_int_equal(psel_tm_eager_middle(tm, 5, 1, 80, data + 80, 20),
                     UCS_OK);
    check_req(&req, 5, 1, 1, 100);
    req_release(&req);

    req_init(&req, 2, FULL_MASK, 10);
    psel_tm_post(tm, &req.recv);
    check_req(&req, 6, 1, 2, 10);
    req_release(&req);
    free(data);
}

static void test_reject_fragment_beyond_end(void **state)
{
    int posted;

    for (posted = 0; posted < 2; ++posted) {
        run_bad_fragment(*state, posted, 90, 11,
                         "beyond the end of the message (sender 5 msg 1 "
                         "offset 90 length 11 total 100)");
        run_bad_fragment(*state, posted, 101, 1, "beyond the end");
        run_bad_fragment(*state, posted, 100, 1, "beyond the end");
        run_bad_fragment(*state, posted, SIZE_MAX, 2, "beyond the end");
        run_bad_fragment(*state, posted, 50, SIZE_MAX - 10, "beyond the end");
    }
}

static void test_reject_overlap_and_duplicate(void **state)
{
    int posted;

    for (posted = 0; posted < 2; ++posted) {
        /* duplicate of the first fragment, of a middle one, partial
         * overlaps on each side, and one covering a gap and more */
        run_bad_fragment(*state, posted, 0, 40,
                         "overlaps data already received (sender 5 msg 1 "
                         "offset 0 length 40 total 100)");
        run_bad_fragment(*state, posted, 60, 20, "overlaps");
        run_bad_fragment(*state, posted, 39, 2, "overlaps");
        run_bad_fragment(*state, posted, 50, 11, "overlaps");
        run_bad_fragment(*state, posted, 79, 5, "overlaps");
        run_bad_fragment(*state, posted, 40, 41, "overlaps");
        run_bad_fragment(*state, posted, 30, 70, "overlaps");
    }
}

static void test_reject_empty_middle_fragment(void **state)
{
    run_bad_fragment(*state, 0, 50, 0, "empty middle fragment (sender 5 msg 1 "
                                       "offset 50 length 0)");
    run_bad_fragment(*state, 1, 40, 0, "empty middle fragment");
}

static void test_reject_first_fragment_already_in_flight(void **state)
{
    psel_tm_t *tm = *state;
    uint8_t *data = msg_data(3, 4, 50);
    test_req_t req;

    assert_int_equal(psel_tm_eager_first(tm, 3, 4, 1, 50, data, 20), UCS_OK);
    psel_test_log_capture_start();
    expect_reject(psel_tm_eager_first(tm, 3, 4, 1, 50, data, 20),
                  "first fragment of a message already in flight (sender 3 "
                  "msg 4");
    expect_reject(psel_tm_eager_first(tm, 3, 4, 2, 5, data, 5),
                  "already in flight");
    psel_test_log_capture_stop();
    assert_int_equal(psel_tm_num_unexpected(tm), 1);

    req_init(&req, 0, 0, 50);
    psel_tm_post(tm, &req.recv);
    assert_int_equal(psel_tm_eager_middle(tm, 3, 4, 20, data + 20, 30),
                     UCS_OK);
    check_req(&req, 3, 4, 1, 50);
    assert_int_equal(psel_tm_num_unexpected(tm), 0);
    req_release(&req);

    /* the (sender, msg) may be reused once complete */
    send_whole(tm, 3, 4, 1, 7);
    assert_int_equal(psel_tm_num_unexpected(tm), 1);
    free(data);
}

static void test_reject_first_fragment_longer_than_message(void **state)
{
    psel_tm_t *tm = *state;
    uint8_t data[16] = {0};
    test_req_t req;

    req_init(&req, 0, 0, 16);
    psel_tm_post(tm, &req.recv);
    psel_test_log_capture_start();
    expect_reject(psel_tm_eager_first(tm, 0x10, 0x20, 1, 8, data, 9),
                  "first fragment of 9 bytes is longer than its message of "
                  "8 bytes (sender 10 msg 20 offset 0)");
    expect_reject(psel_tm_eager_first(tm, 0x10, 0x21, 1, 0, data, 1),
                  "longer than its message");
    assert_int_equal(req.completions, 0);
    assert_int_equal(psel_tm_num_expected(tm), 1);
    assert_int_equal(psel_tm_num_inflight(tm), 0);

    /* beyond max_length, and a length that cannot be buffered */
    tm->max_length = 1000;
    assert_int_equal(psel_tm_cancel(tm, &req.recv), UCS_OK);
    expect_reject(psel_tm_eager_first(tm, 1, 1, 1, 1001, data, 16),
                  "message length 1001 is above the limit 1000");
    tm->max_length = SIZE_MAX;
    expect_reject(psel_tm_eager_first(tm, 1, 1, 1, SIZE_MAX - 8, data, 16),
                  "cannot be buffered");
    assert_int_equal(psel_tm_num_unexpected(tm), 0);
    assert_int_equal(psel_tm_num_inflight(tm), 0);
    req_release(&req);
}

static void test_reject_too_many_out_of_order_pieces(void **state)
{
    psel_tm_t *tm = *state;
    const size_t total = 2 * PSEL_TM_MAX_RANGES + 2;
    uint8_t *data = msg_data(1, 2, total);
    test_req_t req;
    size_t i;

    /* every other byte leaves a gap: MAX ranges fit, one more does not */
    assert_int_equal(psel_tm_eager_first(tm, 1, 2, 0, total, NULL, 0),
                     UCS_OK);
    for (i = 0; i < PSEL_TM_MAX_RANGES; ++i) {
        assert_int_equal(psel_tm_eager_middle(tm, 1, 2, 2 * i, data + 2 * i,
                                              1), UCS_OK);
    }
    psel_test_log_capture_start();
    expect_reject(psel_tm_eager_middle(tm, 1, 2, total - 1, data + total - 1,
                                       1), "out-of-order pieces");
    psel_test_log_capture_stop();

    /* filling the gaps merges the ranges and completes the message */
    req_init(&req, 0, FULL_MASK, total);
    psel_tm_post(tm, &req.recv);
    for (i = 0; i < PSEL_TM_MAX_RANGES; ++i) {
        assert_int_equal(psel_tm_eager_middle(tm, 1, 2, 2 * i + 1,
                                              data + 2 * i + 1, 1), UCS_OK);
    }
    assert_int_equal(req.completions, 0);
    assert_int_equal(psel_tm_eager_middle(tm, 1, 2, total - 2,
                                          data + total - 2, 2), UCS_OK);
    check_req(&req, 1, 2, 0, total);
    req_release(&req);
    free(data);
}


/* ---- randomized stress against a model -------------------------------- */

enum {
    ST_SENDERS     = 6,
    ST_MSGS        = 150,   /* per sender */
    ST_MAX_SIZE    = 300,
    ST_MAX_FRAG    = 64,
    ST_IN_FLIGHT   = 3,     /* messages of one sender interleaved */
    ST_TAGS        = 4,
    ST_MAX_POSTS   = ST_SENDERS * ST_MSGS + 50,  /* random posts */
    ST_MAX_RECVS   = ST_MAX_POSTS + ST_SENDERS * ST_MSGS /* + drain */
};

typedef struct {
    uint64_t sender, id, tag;
    size_t   total, nfrag, sent;
    size_t   offs[ST_MAX_SIZE + 2];
    size_t   order[ST_MAX_SIZE + 1];
    uint8_t  *data;
    int      recv;        /* model: matched receive, -1 if none */
} st_msg_t;

typedef struct {
    test_req_t req;
    int        msg;       /* model: matched message index, -1 if none */
    unsigned   expect_order;
} st_recv_t;

typedef struct {
    st_msg_t  *msgs;
    st_recv_t *recvs;
    int       expected[ST_MAX_RECVS];    /* model expected queue (recv idx) */
    size_t    num_expected;
    int       unexpected[ST_SENDERS * ST_MSGS]; /* model unexpected queue */
    size_t    num_unexpected;
    unsigned  model_seq;
} st_model_t;

static int st_match(const st_recv_t *r, const st_msg_t *m)
{
    return ((r->req.recv.tag ^ m->tag) & r->req.recv.tag_mask) == 0;
}

static void st_remove(int *q, size_t *n, size_t i)
{
    memmove(&q[i], &q[i + 1], (*n - i - 1) * sizeof(*q));
    --*n;
}

static void st_predict_completion(st_model_t *md, int r)
{
    md->recvs[r].expect_order = ++md->model_seq;
}

static void st_check_completions(st_model_t *md)
{
    assert_int_equal(completion_seq, md->model_seq);
}

static void st_post(psel_tm_t *tm, st_model_t *md, int r)
{
    st_recv_t *rv = &md->recvs[r];
    st_msg_t *m;
    size_t i;

    rv->msg = -1;
    for (i = 0; i < md->num_unexpected; ++i) {
        m = &md->msgs[md->unexpected[i]];
        if (st_match(rv, m)) {
            rv->msg = md->unexpected[i];
            m->recv = r;
            st_remove(md->unexpected, &md->num_unexpected, i);
            if (m->sent == m->nfrag) {
                st_predict_completion(md, r);
            }
            break;
        }
    }
    if (rv->msg < 0) {
        md->expected[md->num_expected++] = r;
    }
    psel_tm_post(tm, &rv->req.recv);
    st_check_completions(md);
    if (rv->expect_order) {
        assert_int_equal(rv->req.order, rv->expect_order);
    }
}

static void st_arrive(psel_tm_t *tm, st_model_t *md, int mi)
{
    st_msg_t *m = &md->msgs[mi];
    size_t i, frag = m->order[m->sent];

    if (m->sent == 0) {
        for (i = 0; i < md->num_expected; ++i) {
            if (st_match(&md->recvs[md->expected[i]], m)) {
                m->recv                     = md->expected[i];
                md->recvs[m->recv].msg      = mi;
                st_remove(md->expected, &md->num_expected, i);
                break;
            }
        }
        if (m->recv < 0) {
            md->unexpected[md->num_unexpected++] = mi;
        }
    }
    ++m->sent;
    if ((m->sent == m->nfrag) && (m->recv >= 0)) {
        st_predict_completion(md, m->recv);
    }
    assert_int_equal(send_frag(tm, m->sender, m->id, m->tag, m->data,
                               m->total, m->offs, frag), UCS_OK);
    st_check_completions(md);
    if ((m->sent == m->nfrag) && (m->recv >= 0)) {
        assert_int_equal(md->recvs[m->recv].req.order,
                         md->recvs[m->recv].expect_order);
    }
}

static void st_new_recv(st_model_t *md, int r)
{
    static const uint64_t masks[] = {FULL_MASK, 0, 0x1, 0x2};
    st_recv_t *rv = &md->recvs[r];
    size_t len;

    /* mostly large enough; sometimes truncating */
    len = (rnd() % 8) ? ST_MAX_SIZE : rnd_range(0, ST_MAX_SIZE);
    req_init(&rv->req, rnd() % ST_TAGS, masks[rnd() % 4], len);
    rv->msg          = -1;
    rv->expect_order = 0;
}

static void run_stress(psel_tm_t *tm, int ooo)
{
    st_model_t *md = calloc(1, sizeof(*md));
    size_t next_msg[ST_SENDERS] = {0}, active[ST_SENDERS][ST_IN_FLIGHT];
    size_t nactive[ST_SENDERS] = {0}, i, k, n, s, total_msgs;
    size_t msgs_done = 0, started = 0, total_frags = 0;
    int num_recvs = 0, r;
    st_msg_t *m;

    assert_non_null(md);
    total_msgs = ST_SENDERS * ST_MSGS;
    md->msgs   = calloc(total_msgs, sizeof(*md->msgs));
    md->recvs  = calloc(ST_MAX_RECVS, sizeof(*md->recvs));
    assert_non_null(md->msgs);
    assert_non_null(md->recvs);

    for (i = 0; i < total_msgs; ++i) {
        m         = &md->msgs[i];
        m->sender = 1000 + i % ST_SENDERS;
        m->id     = i / ST_SENDERS;
        m->tag    = rnd() % ST_TAGS;
        m->total  = (rnd() % 10) ? rnd_range(0, ST_MAX_SIZE) : 0;
        m->data   = msg_data(m->sender, m->id, m->total);
        m->nfrag  = split(m->total, rnd_range(1, ST_MAX_FRAG), m->offs);
        m->recv   = -1;
        for (k = 0; k < m->nfrag; ++k) {
            m->order[k] = k;
        }
        if (ooo) {
            shuffle(m->order + 1, m->nfrag - 1);
        }
        total_frags += m->nfrag;
    }

    while (msgs_done < total_msgs) {
        /* posts spread over the whole run, about one per message */
        if ((rnd() % (total_frags + total_msgs) < total_msgs) &&
            (num_recvs < ST_MAX_POSTS)) {
            st_new_recv(md, num_recvs);
            st_post(tm, md, num_recvs++);
        } else {
            /* a random sender: start its next message, or continue one of
             * its messages in flight (first fragments in send order) */
            s = rnd() % ST_SENDERS;
            if ((nactive[s] < ST_IN_FLIGHT) && (next_msg[s] < ST_MSGS) &&
                ((nactive[s] == 0) || (rnd() % 2))) {
                n = next_msg[s]++ * ST_SENDERS + s;
                active[s][nactive[s]++] = n;
                ++started;
            } else if (nactive[s] > 0) {
                k = rnd() % nactive[s];
                n = active[s][k];
            } else {
                continue;
            }
            st_arrive(tm, md, (int)n);
            if (md->msgs[n].sent == md->msgs[n].nfrag) {
                ++msgs_done;
                k = 0;
                while (active[s][k] != n) {
                    ++k;
                }
                active[s][k] = active[s][--nactive[s]];
            }
        }
        assert_int_equal(psel_tm_num_expected(tm), md->num_expected);
        assert_int_equal(psel_tm_num_unexpected(tm), md->num_unexpected);
    }
    assert_int_equal(started, total_msgs);
    assert_int_equal(psel_tm_num_inflight(tm), 0);

    /* drain the unexpected queue with wildcard receives */
    while (md->num_unexpected > 0) {
        r = num_recvs++;
        st_new_recv(md, r);
        md->recvs[r].req.recv.tag_mask = 0;
        st_post(tm, md, r);
        assert_int_equal(md->recvs[r].req.completions, 1);
    }

    /* the rest are canceled at cleanup */
    n = md->num_expected;
    psel_tm_cleanup(tm);
    assert_int_equal(completion_seq, md->model_seq + n);

    for (r = 0; r < num_recvs; ++r) {
        st_recv_t *rv = &md->recvs[r];

        if (rv->msg < 0) {
            assert_int_equal(rv->req.completions, 1);
            assert_int_equal(rv->req.recv.status, UCS_ERR_CANCELED);
        } else {
            m = &md->msgs[rv->msg];
            check_req(&rv->req, m->sender, m->id, m->tag, m->total);
            assert_int_equal(rv->req.order, rv->expect_order);
        }
        req_release(&rv->req);
    }
    for (i = 0; i < total_msgs; ++i) {
        assert_true(md->msgs[i].recv >= 0);
        free(md->msgs[i].data);
    }
    free(md->msgs);
    free(md->recvs);
    free(md);
}

static void test_stress_against_model_in_order_fragments(void **state)
{
    int round;

    for (round = 0; round < 3; ++round) {
        rng_state      = 0x9e3779b97f4a7c15ull + round;
        completion_seq = 0;
        run_stress(*state, 0);
    }
}

static void test_stress_against_model_out_of_order_fragments(void **state)
{
    int round;

    for (round = 0; round < 3; ++round) {
        rng_state      = 0xdeadbeefcafef00dull + round;
        completion_seq = 0;
        run_stress(*state, 1);
    }
}



/* ---- rendezvous descriptors ------------------------------------------- */

/* What the rendezvous hook saw: each matched receive and its descriptor. */
typedef struct {
    unsigned        count;
    psel_tm_recv_t *recvs[16];
    char            descs[16][32];
} rndv_seen_t;

static void rndv_matched_cb(void *arg, psel_tm_recv_t *recv, const void *desc,
                            size_t desc_len)
{
    rndv_seen_t *seen = arg;

    assert_true(seen->count < 16);
    assert_true(desc_len < 32);
    assert_int_equal(recv->state, PSEL_TM_RECV_MATCHED);
    seen->recvs[seen->count] = recv;
    memcpy(seen->descs[seen->count], desc, desc_len);
    seen->descs[seen->count][desc_len] = '\0';
    ++seen->count;
}

static void rndv_hook(psel_tm_t *tm, rndv_seen_t *seen)
{
    memset(seen, 0, sizeof(*seen));
    tm->rndv_matched = rndv_matched_cb;
    tm->rndv_arg     = seen;
}

/* A posted receive matches an RTS at once: the hook gets it and the
 * descriptor; the matcher no longer holds it (cancel says busy) until the
 * rendezvous completes it. */
static void test_rndv_expected_then_rts(void **state)
{
    psel_tm_t *tm = *state;
    rndv_seen_t seen;
    test_req_t req;

    rndv_hook(tm, &seen);
    req_init(&req, 5, FULL_MASK, 1000);
    psel_tm_post(tm, &req.recv);
    assert_int_equal(psel_tm_rndv_first(tm, 1, 1, 5, 1000, "rts-a", 5),
                     UCS_OK);
    assert_int_equal(seen.count, 1);
    assert_ptr_equal(seen.recvs[0], &req.recv);
    assert_string_equal(seen.descs[0], "rts-a");
    assert_int_equal(psel_tm_num_expected(tm), 0);
    assert_int_equal(psel_tm_num_unexpected(tm), 0);
    assert_int_equal(psel_tm_num_inflight(tm), 0);
    assert_int_equal(req.completions, 0);
    assert_int_equal(psel_tm_cancel(tm, &req.recv), UCS_ERR_BUSY);
    assert_int_equal(req.recv.info.length, 1000);
    assert_int_equal(req.recv.info.tag, 5);

    psel_tm_rndv_complete(&req.recv, UCS_OK);
    assert_int_equal(req.completions, 1);
    assert_int_equal(req.recv.status, UCS_OK);
    assert_int_equal(req.recv.state, PSEL_TM_RECV_IDLE);
    req_release(&req);
}

/* An RTS with no receive waits in the unexpected queue (a copy of its
 * descriptor, nothing of its length buffered) and starts at the post. */
static void test_rndv_unexpected_then_post(void **state)
{
    psel_tm_t *tm = *state;
    rndv_seen_t seen;
    test_req_t req;
    char desc[8] = "rts-b";

    rndv_hook(tm, &seen);
    tm->max_length = 100; /* eager bound: not applied to rendezvous */
    assert_int_equal(psel_tm_rndv_first(tm, 1, 2, 6, 1 << 30, desc, 5),
                     UCS_OK);
    memset(desc, 'x', sizeof(desc)); /* the matcher kept its own copy */
    assert_int_equal(psel_tm_num_unexpected(tm), 1);
    assert_int_equal(seen.count, 0);

    req_init(&req, 6, FULL_MASK, 64);
    psel_tm_post(tm, &req.recv);
    assert_int_equal(seen.count, 1);
    assert_string_equal(seen.descs[0], "rts-b");
    assert_int_equal(psel_tm_num_unexpected(tm), 0);
    /* a 64-byte receive of a 1 GiB message: truncated, and stays so */
    assert_int_equal(req.recv.status, UCS_ERR_MESSAGE_TRUNCATED);
    psel_tm_rndv_complete(&req.recv, UCS_OK);
    assert_int_equal(req.completions, 1);
    assert_int_equal(req.recv.status, UCS_ERR_MESSAGE_TRUNCATED);
    assert_int_equal(req.recv.info.length, 1 << 30);
    req_release(&req);
}

/* Eager and rendezvous messages share one arrival order: receives with the
 * same tag take them in the order their first fragment / RTS arrived. */
static void test_rndv_order_with_eager(void **state)
{
    psel_tm_t *tm = *state;
    uint8_t *data = msg_data(1, 1, 10);
    test_req_t reqs[3];
    rndv_seen_t seen;
    unsigned i;

    rndv_hook(tm, &seen);
    assert_int_equal(psel_tm_eager_first(tm, 1, 1, 9, 10, data, 10), UCS_OK);
    assert_int_equal(psel_tm_rndv_first(tm, 1, 2, 9, 5000, "second", 6),
                     UCS_OK);
    assert_int_equal(psel_tm_eager_first(tm, 1, 3, 9, 10, data, 10), UCS_OK);
    for (i = 0; i < 3; ++i) {
        req_init(&reqs[i], 0, 0, 5000); /* wildcard */
        psel_tm_post(tm, &reqs[i].recv);
    }
    assert_int_equal(reqs[0].completions, 1);
    assert_int_equal(reqs[0].recv.info.length, 10);
    assert_int_equal(seen.count, 1);
    assert_ptr_equal(seen.recvs[0], &reqs[1].recv);
    assert_int_equal(reqs[1].completions, 0);
    assert_int_equal(reqs[2].completions, 1);
    psel_tm_rndv_complete(&reqs[1].recv, UCS_ERR_UNREACHABLE);
    assert_int_equal(reqs[1].recv.status, UCS_ERR_UNREACHABLE);
    for (i = 0; i < 3; ++i) {
        req_release(&reqs[i]);
    }
    free(data);
}

/* A withdrawn rendezvous message (its sender canceled it) leaves the
 * unexpected queue: the next receive matches the message after it. Only an
 * unexpected rendezvous message of that (sender, msg) is withdrawn: not an
 * eager one, not a matched one, not another sender's. */
static void test_rndv_withdraw(void **state)
{
    psel_tm_t *tm = *state;
    uint8_t *data = msg_data(1, 3, 10);
    test_req_t reqs[2];
    rndv_seen_t seen;
    unsigned i;

    rndv_hook(tm, &seen);
    assert_int_equal(psel_tm_rndv_first(tm, 1, 1, 9, 5000, "first", 5),
                     UCS_OK);
    assert_int_equal(psel_tm_rndv_first(tm, 1, 2, 9, 5000, "second", 6),
                     UCS_OK);
    assert_int_equal(psel_tm_eager_first(tm, 1, 3, 9, 10, data, 10), UCS_OK);
    assert_int_equal(psel_tm_num_unexpected(tm), 3);

    assert_int_equal(psel_tm_rndv_withdraw(tm, 2, 1), UCS_ERR_NO_ELEM);
    assert_int_equal(psel_tm_rndv_withdraw(tm, 1, 3), UCS_ERR_NO_ELEM);
    assert_int_equal(psel_tm_rndv_withdraw(tm, 1, 1), UCS_OK);
    assert_int_equal(psel_tm_rndv_withdraw(tm, 1, 1), UCS_ERR_NO_ELEM);
    assert_int_equal(psel_tm_num_unexpected(tm), 2);

    for (i = 0; i < 2; ++i) {
        req_init(&reqs[i], 9, FULL_MASK, 5000);
        psel_tm_post(tm, &reqs[i].recv);
    }
    assert_int_equal(seen.count, 1);
    assert_string_equal(seen.descs[0], "second");
    assert_int_equal(reqs[1].completions, 1);
    assert_int_equal(reqs[1].recv.info.length, 10);
    /* matched: no longer withdrawable */
    assert_int_equal(psel_tm_rndv_withdraw(tm, 1, 2), UCS_ERR_NO_ELEM);
    psel_tm_rndv_complete(&reqs[0].recv, UCS_OK);
    for (i = 0; i < 2; ++i) {
        req_release(&reqs[i]);
    }
    assert_int_equal(psel_tm_num_unexpected(tm), 0);
    free(data);
}

/* Without a rendezvous hook, or without a descriptor, an RTS is rejected
 * and nothing changes; cleanup frees unexpected descriptors. */
static void test_rndv_reject_and_cleanup(void **state)
{
    psel_tm_t *tm = *state;
    rndv_seen_t seen;

    psel_test_log_capture_start();
    assert_int_equal(psel_tm_rndv_first(tm, 1, 1, 5, 100, "d", 1),
                     UCS_ERR_INVALID_PARAM);
    psel_assert_log_contains("no rendezvous handler");
    rndv_hook(tm, &seen);
    assert_int_equal(psel_tm_rndv_first(tm, 1, 1, 5, 100, NULL, 0),
                     UCS_ERR_INVALID_PARAM);
    psel_assert_log_contains("without a descriptor");
    psel_test_log_capture_stop();
    assert_int_equal(psel_tm_num_unexpected(tm), 0);

    assert_int_equal(psel_tm_rndv_first(tm, 1, 2, 5, 100, "d", 1), UCS_OK);
    assert_int_equal(psel_tm_rndv_first(tm, 1, 3, 5, 100, "e", 1), UCS_OK);
    assert_int_equal(psel_tm_num_unexpected(tm), 2);
    /* teardown's cleanup frees them (checked by ASan / valgrind) */
}

int main(void)
{
#define T(_name) cmocka_unit_test_setup_teardown(_name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_expected_then_arrival),
        T(test_unexpected_then_post),
        T(test_mask_full_matches_only_the_exact_tag),
        T(test_mask_zero_matches_every_tag),
        T(test_mask_partial_compares_masked_bits),
        T(test_expected_oldest_matching_receive_wins),
        T(test_fifo_per_sender_and_among_senders_unexpected),
        T(test_fifo_per_sender_and_among_senders_expected),
        T(test_post_from_callback_reposts),
        T(test_reassembly_posted_before_fragments),
        T(test_reassembly_posted_after_fragments),
        T(test_reassembly_posted_between_fragments),
        T(test_reassembly_out_of_order_middle_fragments),
        T(test_reassembly_interleaved_messages),
        T(test_truncation_consumes_message_next_is_intact),
        T(test_truncation_expected_then_next_message),
        T(test_zero_byte_messages),
        T(test_zero_length_first_fragment_of_larger_message),
        T(test_cancel_expected_busy_and_no_elem),
        T(test_cleanup_cancels_receives_and_frees_pending_data),
        T(test_purge_sender),
        T(test_reject_middle_of_unknown_message),
        T(test_reject_fragment_beyond_end),
        T(test_reject_overlap_and_duplicate),
        T(test_reject_empty_middle_fragment),
        T(test_reject_first_fragment_already_in_flight),
        T(test_reject_first_fragment_longer_than_message),
        T(test_reject_too_many_out_of_order_pieces),
        T(test_stress_against_model_in_order_fragments),
        T(test_stress_against_model_out_of_order_fragments),
        T(test_rndv_expected_then_rts),
        T(test_rndv_withdraw),
        T(test_rndv_unexpected_then_post),
        T(test_rndv_order_with_eager),
        T(test_rndv_reject_and_cleanup),
    };
#undef T

    return cmocka_run_group_tests(tests, NULL, NULL);
}
