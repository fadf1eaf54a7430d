/*
 * Receive-side tag matching and eager reassembly (see tag_match.h).
 */
#include "tag_match.h"

#include <ucp_proto_sel/byte_ranges.h>

#include <ucs/debug/log_def.h>
#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct psel_tm_msg {
    ucs_list_link_t    list;        /* unexpected queue, while unmatched */
    psel_tm_key_t      key;
    uint64_t           tag;
    size_t             total_length;
    psel_tm_recv_t     *recv;       /* matched receive, or NULL */
    uint8_t            *data;       /* unexpected buffer, NULL once matched;
                                       rendezvous: the descriptor */
    size_t             desc_len;    /* rendezvous: bytes of the descriptor;
                                       0 for an eager message */
    psel_byte_ranges_t landed;      /* bytes landed so far */
};


static inline khint_t psel_tm_key_hash(psel_tm_key_t key)
{
    uint64_t h = (key.sender_id * 0x9e3779b97f4a7c15ull) ^ key.msg_id;

    return kh_int64_hash_func(h);
}

#define psel_tm_key_equal(_a, _b) \
    (((_a).sender_id == (_b).sender_id) && ((_a).msg_id == (_b).msg_id))

KHASH_IMPL(psel_tm_inflight, psel_tm_key_t, psel_tm_msg_t*, 1,
           psel_tm_key_hash, psel_tm_key_equal)


static inline int psel_tm_is_match(const psel_tm_recv_t *recv, uint64_t tag)
{
    return ((tag ^ recv->tag) & recv->tag_mask) == 0;
}

static inline size_t psel_tm_min(size_t a, size_t b)
{
    return (a < b) ? a : b;
}

static void psel_tm_msg_free(psel_tm_msg_t *msg)
{
    psel_byte_ranges_cleanup(&msg->landed);
    free(msg);
}

/* Complete a receive that left every queue; it may be released by the
 * callback, so nothing touches it afterwards. */
static void psel_tm_recv_complete(psel_tm_recv_t *recv)
{
    recv->state = PSEL_TM_RECV_IDLE;
    recv->complete(recv);
}

/* Results of matching @a recv to a message of @a tag and @a total bytes. */
static void psel_tm_recv_matched(psel_tm_recv_t *recv, uint64_t tag,
                                 size_t total)
{
    recv->info.tag  = tag;
    recv->info.length = total;
    recv->status      = (total > recv->length) ? UCS_ERR_MESSAGE_TRUNCATED :
                                                 UCS_OK;
    recv->state       = PSEL_TM_RECV_MATCHED;
}

/* Copy message bytes [offset, offset + len) into the receive's buffer,
 * dropping what lies beyond its length. */
static void psel_tm_recv_copy(psel_tm_recv_t *recv, size_t offset,
                              const void *data, size_t len)
{
    size_t n;

    if (offset >= recv->length) {
        return;
    }
    n = psel_tm_min(len, recv->length - offset);
    if (n > 0) {
        memcpy((uint8_t*)recv->buffer + offset, data, n);
    }
}

ucs_status_t psel_tm_init(psel_tm_t *tm)
{
    ucs_list_head_init(&tm->expected);
    ucs_list_head_init(&tm->unexpected);
    kh_init_inplace(psel_tm_inflight, &tm->inflight);
    tm->num_expected   = 0;
    tm->num_unexpected = 0;
    tm->max_length     = SIZE_MAX;
    tm->in_cleanup     = 0;
    tm->rndv_matched   = NULL;
    tm->rndv_arg       = NULL;
    return UCS_OK;
}

void psel_tm_cleanup(psel_tm_t *tm)
{
    ucs_list_link_t canceled;
    psel_tm_recv_t *recv;
    psel_tm_msg_t *msg, *tmp;

    tm->in_cleanup = 1;
    ucs_list_head_init(&canceled);

    /* matched messages still arriving: their receives are canceled; the
     * unmatched ones are freed from the unexpected queue below */
    kh_foreach_value(&tm->inflight, msg, {
        if (msg->recv != NULL) {
            ucs_list_add_tail(&canceled, &msg->recv->list);
            psel_tm_msg_free(msg);
        }
    });
    kh_destroy_inplace(psel_tm_inflight, &tm->inflight);
    kh_init_inplace(psel_tm_inflight, &tm->inflight);

    ucs_list_for_each_safe(msg, tmp, &tm->unexpected, list) {
        psel_tm_msg_free(msg);
    }
    ucs_list_head_init(&tm->unexpected);
    tm->num_unexpected = 0;

    ucs_list_splice_tail(&canceled, &tm->expected);
    ucs_list_head_init(&tm->expected);
    tm->num_expected = 0;

    while (!ucs_list_is_empty(&canceled)) {
        recv = ucs_list_extract_head(&canceled, psel_tm_recv_t, list);
        recv->status      = UCS_ERR_CANCELED;
        recv->info.length = 0;
        psel_tm_recv_complete(recv);
    }

    tm->in_cleanup = 0;
}

void psel_tm_post(psel_tm_t *tm, psel_tm_recv_t *recv)
{
    psel_tm_msg_t *msg;
    unsigned i;

    assert(!tm->in_cleanup);
    assert((recv->buffer != NULL) || (recv->length == 0));

    ucs_list_for_each(msg, &tm->unexpected, list) {
        if (!psel_tm_is_match(recv, msg->tag)) {
            continue;
        }

        ucs_list_del(&msg->list);
        --tm->num_unexpected;
        psel_tm_recv_matched(recv, msg->tag, msg->total_length);

        if (msg->desc_len > 0) {
            /* rendezvous: its owner moves the data from now on */
            tm->rndv_matched(tm->rndv_arg, recv, msg->data, msg->desc_len);
            psel_tm_msg_free(msg);
            return;
        }

        if (msg->landed.landed == msg->total_length) {
            psel_tm_recv_copy(recv, 0, msg->data, msg->total_length);
            psel_tm_msg_free(msg);
            psel_tm_recv_complete(recv);
            return;
        }

        /* still being reassembled: take it over, the rest lands directly */
        for (i = 0; i < msg->landed.num; ++i) {
            psel_tm_recv_copy(recv, msg->landed.ranges[i].start,
                              msg->data + msg->landed.ranges[i].start,
                              msg->landed.ranges[i].end -
                              msg->landed.ranges[i].start);
        }
        msg->recv = recv;
        msg->data = NULL;
        return;
    }

    recv->state = PSEL_TM_RECV_EXPECTED;
    ucs_list_add_tail(&tm->expected, &recv->list);
    ++tm->num_expected;
}

ucs_status_t psel_tm_cancel(psel_tm_t *tm, psel_tm_recv_t *recv)
{
    switch (recv->state) {
    case PSEL_TM_RECV_EXPECTED:
        ucs_list_del(&recv->list);
        --tm->num_expected;
        recv->status      = UCS_ERR_CANCELED;
        recv->info.length = 0;
        psel_tm_recv_complete(recv);
        return UCS_OK;
    case PSEL_TM_RECV_MATCHED:
        return UCS_ERR_BUSY;
    default:
        return UCS_ERR_NO_ELEM;
    }
}

ucs_status_t psel_tm_eager_first(psel_tm_t *tm, uint64_t sender_id,
                                 uint64_t msg_id, uint64_t tag,
                                 size_t total_length, const void *data,
                                 size_t len)
{
    psel_tm_key_t key = {.sender_id = sender_id, .msg_id = msg_id};
    psel_tm_recv_t *recv = NULL, *elem;
    psel_tm_msg_t *msg;
    size_t size;
    khiter_t iter;
    int ret;

    if (len > total_length) {
        ucs_error("tag match: first fragment of %zu bytes is longer than its "
                  "message of %zu bytes (sender %" PRIx64 " msg %" PRIx64
                  " offset 0)", len, total_length, sender_id, msg_id);
        return UCS_ERR_INVALID_PARAM;
    }

    if (total_length > tm->max_length) {
        ucs_error("tag match: message length %zu is above the limit %zu "
                  "(sender %" PRIx64 " msg %" PRIx64 " offset 0)",
                  total_length, tm->max_length, sender_id, msg_id);
        return UCS_ERR_INVALID_PARAM;
    }

    /* no hash lookup per message while nothing is in flight */
    if ((kh_size(&tm->inflight) > 0) &&
        (kh_get(psel_tm_inflight, &tm->inflight, key) !=
         kh_end(&tm->inflight))) {
        ucs_error("tag match: first fragment of a message already in flight "
                  "(sender %" PRIx64 " msg %" PRIx64 " offset 0 length %zu)",
                  sender_id, msg_id, len);
        return UCS_ERR_INVALID_PARAM;
    }

    ucs_list_for_each(elem, &tm->expected, list) {
        if (psel_tm_is_match(elem, tag)) {
            recv = elem;
            break;
        }
    }

    if ((recv != NULL) && (len == total_length)) {
        /* the fast path: a whole message for a posted receive */
        ucs_list_del(&recv->list);
        --tm->num_expected;
        psel_tm_recv_matched(recv, tag, total_length);
        psel_tm_recv_copy(recv, 0, data, len);
        psel_tm_recv_complete(recv);
        return UCS_OK;
    }

    size = sizeof(*msg);
    if (recv == NULL) {
        if (total_length > SIZE_MAX - size) {
            ucs_error("tag match: message length %zu cannot be buffered "
                      "(sender %" PRIx64 " msg %" PRIx64 " offset 0)",
                      total_length, sender_id, msg_id);
            return UCS_ERR_INVALID_PARAM;
        }
        size += total_length;
    }

    msg = malloc(size);
    if (msg == NULL) {
        ucs_error("tag match: failed to allocate %zu bytes for a message "
                  "(sender %" PRIx64 " msg %" PRIx64 " offset 0)", size,
                  sender_id, msg_id);
        return UCS_ERR_NO_MEMORY;
    }

    msg->key          = key;
    msg->tag          = tag;
    msg->total_length = total_length;
    msg->recv         = recv;
    msg->data         = (recv == NULL) ? (uint8_t*)(msg + 1) : NULL;
    msg->desc_len     = 0;
    psel_byte_ranges_init(&msg->landed, PSEL_TM_MAX_RANGES);
    if (len > 0) {
        psel_byte_ranges_add(&msg->landed, 0, len); /* the first: inline */
    }

    if (len < total_length) {
        iter = kh_put(psel_tm_inflight, &tm->inflight, key, &ret);
        if (ret < 0) {
            ucs_error("tag match: failed to track a fragmented message "
                      "(sender %" PRIx64 " msg %" PRIx64 " offset 0)",
                      sender_id, msg_id);
            free(msg);
            return UCS_ERR_NO_MEMORY;
        }
        kh_val(&tm->inflight, iter) = msg;
    }

    if (recv != NULL) {
        ucs_list_del(&recv->list);
        --tm->num_expected;
        psel_tm_recv_matched(recv, tag, total_length);
        psel_tm_recv_copy(recv, 0, data, len);
    } else {
        if (len > 0) {
            memcpy(msg->data, data, len);
        }
        ucs_list_add_tail(&tm->unexpected, &msg->list);
        ++tm->num_unexpected;
    }
    return UCS_OK;
}

ucs_status_t psel_tm_eager_middle(psel_tm_t *tm, uint64_t sender_id,
                                  uint64_t msg_id, size_t offset,
                                  const void *data, size_t len)
{
    psel_tm_key_t key = {.sender_id = sender_id, .msg_id = msg_id};
    psel_tm_recv_t *recv;
    psel_tm_msg_t *msg;
    ucs_status_t status;
    khiter_t iter;

    iter = kh_get(psel_tm_inflight, &tm->inflight, key);
    if (iter == kh_end(&tm->inflight)) {
        ucs_error("tag match: middle fragment of an unknown message "
                  "(sender %" PRIx64 " msg %" PRIx64 " offset %zu length %zu)",
                  sender_id, msg_id, offset, len);
        return UCS_ERR_INVALID_PARAM;
    }

    msg = kh_val(&tm->inflight, iter);
    if (len == 0) {
        ucs_error("tag match: empty middle fragment (sender %" PRIx64
                  " msg %" PRIx64 " offset %zu length 0)", sender_id, msg_id,
                  offset);
        return UCS_ERR_INVALID_PARAM;
    }

    if ((offset > msg->total_length) || (len > msg->total_length - offset)) {
        ucs_error("tag match: fragment beyond the end of the message "
                  "(sender %" PRIx64 " msg %" PRIx64 " offset %zu length %zu "
                  "total %zu)", sender_id, msg_id, offset, len,
                  msg->total_length);
        return UCS_ERR_INVALID_PARAM;
    }

    status = psel_byte_ranges_add(&msg->landed, offset, offset + len);
    if (status == UCS_ERR_INVALID_PARAM) {
        ucs_error("tag match: fragment overlaps data already received "
                  "(sender %" PRIx64 " msg %" PRIx64 " offset %zu length %zu "
                  "total %zu)", sender_id, msg_id, offset, len,
                  msg->total_length);
        return UCS_ERR_INVALID_PARAM;
    } else if (status == UCS_ERR_EXCEEDS_LIMIT) {
        ucs_error("tag match: more than %u out-of-order pieces "
                  "(sender %" PRIx64 " msg %" PRIx64 " offset %zu length %zu "
                  "total %zu)", PSEL_TM_MAX_RANGES, sender_id, msg_id, offset,
                  len, msg->total_length);
        return UCS_ERR_INVALID_PARAM;
    } else if (status != UCS_OK) {
        ucs_error("tag match: failed to track out-of-order fragments "
                  "(sender %" PRIx64 " msg %" PRIx64 " offset %zu length %zu)",
                  sender_id, msg_id, offset, len);
        return status;
    }

    if (msg->recv != NULL) {
        psel_tm_recv_copy(msg->recv, offset, data, len);
    } else {
        memcpy(msg->data + offset, data, len);
    }

    if (msg->landed.landed < msg->total_length) {
        return UCS_OK;
    }

    kh_del(psel_tm_inflight, &tm->inflight, iter);
    recv = msg->recv;
    if (recv != NULL) {
        psel_tm_msg_free(msg);
        psel_tm_recv_complete(recv);
    }
    /* else the message waits, whole, in the unexpected queue */
    return UCS_OK;
}

ucs_status_t psel_tm_rndv_first(psel_tm_t *tm, uint64_t sender_id,
                                uint64_t msg_id, uint64_t tag,
                                size_t total_length, const void *desc,
                                size_t desc_len)
{
    psel_tm_recv_t *recv;
    psel_tm_msg_t *msg;

    if ((tm->rndv_matched == NULL) || (desc_len == 0)) {
        ucs_error("tag match: rendezvous message %s (sender %" PRIx64
                  " msg %" PRIx64 " length %zu)",
                  (desc_len == 0) ? "without a descriptor" :
                  "but no rendezvous handler", sender_id, msg_id,
                  total_length);
        return UCS_ERR_INVALID_PARAM;
    }

    ucs_list_for_each(recv, &tm->expected, list) {
        if (psel_tm_is_match(recv, tag)) {
            ucs_list_del(&recv->list);
            --tm->num_expected;
            psel_tm_recv_matched(recv, tag, total_length);
            tm->rndv_matched(tm->rndv_arg, recv, desc, desc_len);
            return UCS_OK;
        }
    }

    msg = malloc(sizeof(*msg) + desc_len);
    if (msg == NULL) {
        ucs_error("tag match: failed to keep a %zu-byte rendezvous "
                  "descriptor (sender %" PRIx64 " msg %" PRIx64 ")", desc_len,
                  sender_id, msg_id);
        return UCS_ERR_NO_MEMORY;
    }
    msg->key.sender_id = sender_id;
    msg->key.msg_id    = msg_id;
    msg->tag           = tag;
    msg->total_length  = total_length;
    msg->recv          = NULL;
    msg->data          = (uint8_t*)(msg + 1);
    msg->desc_len      = desc_len;
    psel_byte_ranges_init(&msg->landed, PSEL_TM_MAX_RANGES);
    memcpy(msg->data, desc, desc_len);
    ucs_list_add_tail(&tm->unexpected, &msg->list);
    ++tm->num_unexpected;
    return UCS_OK;
}

ucs_status_t psel_tm_rndv_withdraw(psel_tm_t *tm, uint64_t sender_id,
                                   uint64_t msg_id)
{
    psel_tm_msg_t *msg;

    ucs_list_for_each(msg, &tm->unexpected, list) {
        if ((msg->desc_len > 0) && (msg->key.sender_id == sender_id) &&
            (msg->key.msg_id == msg_id)) {
            ucs_list_del(&msg->list);
            --tm->num_unexpected;
            psel_tm_msg_free(msg);
            return UCS_OK;
        }
    }
    return UCS_ERR_NO_ELEM;
}

void psel_tm_rndv_complete(psel_tm_recv_t *recv, ucs_status_t status)
{
    assert(recv->state == PSEL_TM_RECV_MATCHED);
    if (status != UCS_OK) {
        recv->status = status;
    }
    psel_tm_recv_complete(recv);
}

unsigned psel_tm_purge_sender(psel_tm_t *tm, uint64_t sender_id,
                              ucs_status_t status)
{
    ucs_list_link_t failed;
    psel_tm_recv_t *recv;
    psel_tm_msg_t *msg;
    unsigned count = 0;
    khiter_t iter;

    ucs_list_head_init(&failed);
    for (iter = kh_begin(&tm->inflight); iter != kh_end(&tm->inflight);
         ++iter) {
        if (!kh_exist(&tm->inflight, iter)) {
            continue;
        }
        msg = kh_val(&tm->inflight, iter);
        if (msg->key.sender_id != sender_id) {
            continue;
        }
        ucs_debug("tag match: sender %" PRIx64 " is gone: message %" PRIx64
                  " (tag %" PRIx64 ", %zu of %zu bytes) dropped", sender_id,
                  msg->key.msg_id, msg->tag, msg->landed.landed,
                  msg->total_length);
        kh_del(psel_tm_inflight, &tm->inflight, iter);
        if (msg->recv != NULL) {
            ucs_list_add_tail(&failed, &msg->recv->list);
        } else {
            ucs_list_del(&msg->list);
            --tm->num_unexpected;
        }
        psel_tm_msg_free(msg);
        ++count;
    }

    while (!ucs_list_is_empty(&failed)) {
        recv              = ucs_list_extract_head(&failed, psel_tm_recv_t,
                                                  list);
        recv->status      = status;
        recv->info.length = 0; /* nothing of it is delivered */
        psel_tm_recv_complete(recv);
    }
    return count;
}

size_t psel_tm_num_expected(const psel_tm_t *tm)
{
    return tm->num_expected;
}

size_t psel_tm_num_unexpected(const psel_tm_t *tm)
{
    return tm->num_unexpected;
}

size_t psel_tm_num_inflight(const psel_tm_t *tm)
{
    return kh_size(&tm->inflight);
}
