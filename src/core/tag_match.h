/**
 * @file tag_match.h
 * Receive-side tag matching and eager reassembly: pure logic, no UCT.
 *
 * The worker calls psel_tm_post() and psel_tm_cancel() from its receive API,
 * and psel_tm_eager_first() / psel_tm_eager_middle() / psel_tm_rndv_first()
 * from its AM handlers.
 *
 * @section tm_model Model
 *
 * - The **expected queue** holds posted receives that matched nothing yet,
 *   oldest first.
 * - The **unexpected queue** holds messages whose first fragment arrived
 *   while no posted receive matched, in arrival order, each with a malloc'ed
 *   buffer of its full length.
 * - The **in-flight hash**, keyed by (sender id, message id), holds every
 *   message whose first fragment arrived but not yet all of its bytes, both
 *   matched (the data lands in the receive's buffer) and unexpected (it lands
 *   in the unexpected buffer).
 *
 * A message is matched once, when its first fragment arrives (to the oldest
 * matching expected receive) or when a receive is posted (to the oldest
 * matching unexpected message, even one still being reassembled: what has
 * landed is copied and the rest lands directly in the receive's buffer).
 * Matching is by arrival of the first fragment, so as long as each sender's
 * first fragments arrive in send order, order is preserved per sender, and
 * receives with the same tag/mask complete in the order their messages
 * arrived.
 *
 * A rendezvous message (psel_tm_rndv_first()) is matched the same way, in
 * the same queues: its unexpected entry holds a copy of its descriptor (the
 * RTS) instead of data, is never in the in-flight hash and is not bounded
 * by @ref psel_tm_t::max_length (nothing of its length is buffered). When
 * it matches, at its arrival or at a post, the matcher hands the receive
 * and the descriptor to @ref psel_tm_t::rndv_matched and drops every
 * reference to the receive: the rendezvous owner moves the data and
 * completes it with psel_tm_rndv_complete(). psel_tm_cancel() answers
 * UCS_ERR_BUSY for it meanwhile, and psel_tm_cleanup() does not see it.
 *
 * A receive matches a message when
 * `(msg_tag & recv->tag_mask) == (recv->tag & recv->tag_mask)`:
 * mask 0 matches every tag, mask ~0 only the exact tag.
 *
 * @section tm_wire Fragments
 *
 * The first fragment of a message carries its tag, total length and bytes
 * [0, len); every further ("middle") fragment carries (sender id, message
 * id, offset) and bytes [offset, offset + len). Middle fragments may arrive
 * in any order, but after the first one. Every byte of the message must be
 * delivered exactly once; the message is complete when all total_length
 * bytes have landed. (sender id, message id) may be reused once the message
 * is complete.
 *
 * Arrivals are outside input and are validated: a middle fragment of an
 * unknown message, bytes beyond the total length, bytes delivered twice, a
 * first fragment longer than its message or above @ref psel_tm_t::max_length,
 * a first fragment whose (sender, msg) is still in flight, an empty middle
 * fragment, or more than @ref PSEL_TM_MAX_RANGES separate pieces landed out
 * of order, are each rejected with an error log ("tag match: ...") and
 * UCS_ERR_INVALID_PARAM; the fragment is dropped and every other state is
 * unchanged.
 *
 * @section tm_complete Completion
 *
 * psel_tm_recv_t::complete is called exactly once per posted receive, after
 * all data has landed in its buffer (or at cancel/cleanup). At that point the
 * receive is no longer referenced by the matcher: the callback may release
 * or re-post it, and may post other receives, except from
 * psel_tm_cleanup().
 *
 * Not thread safe: the caller serialises all calls on one psel_tm_t.
 */
#ifndef PSEL_CORE_TAG_MATCH_H_
#define PSEL_CORE_TAG_MATCH_H_

#include "psel_core.h"

#include <ucs/datastruct/khash.h>
#include <ucs/datastruct/list.h>
#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

/** Max separate byte ranges one message may have landed in before it is
 *  complete (fragments arriving out of order leave gaps). Beyond this, a
 *  fragment is rejected. In-order arrival always uses one range. */
#define PSEL_TM_MAX_RANGES 1024u


/** State of a posted receive (internal, readable for debug). */
typedef enum {
    PSEL_TM_RECV_IDLE = 0,   /**< Not in the matcher: completed or never posted */
    PSEL_TM_RECV_EXPECTED,   /**< In the expected queue, matched nothing yet */
    PSEL_TM_RECV_MATCHED     /**< Matched a message whose data is arriving */
} psel_tm_recv_state_t;


/**
 * A posted receive. The caller embeds it in its request, fills the input
 * fields and calls psel_tm_post(); results are valid when complete() runs.
 */
typedef struct psel_tm_recv {
    ucs_list_link_t      list;         /**< Internal: expected queue link */

    /* input */
    uint64_t             tag;          /**< Tag to match */
    uint64_t             tag_mask;     /**< Bits of @a tag that must match */
    void                 *buffer;      /**< Where the data lands */
    size_t               length;       /**< Size of @a buffer, bytes */
    /** Called exactly once, when all data has landed, or on cancel/cleanup */
    void                 (*complete)(struct psel_tm_recv *recv);

    /* output, valid when complete() is called */
    /** Tag and length of the matched message (the length as UCX reports
     *  it, also when truncated: then only min(length, info.length) bytes
     *  were written; 0 when canceled). What a receive's callback gets. */
    psel_recv_info_t     info;
    /** UCS_OK; UCS_ERR_MESSAGE_TRUNCATED if the message was longer than
     *  @a length (all of its fragments are still consumed);
     *  UCS_ERR_CANCELED by psel_tm_cancel() or psel_tm_cleanup() */
    ucs_status_t         status;

    /* internal */
    psel_tm_recv_state_t state;        /**< Where the receive is */
} psel_tm_recv_t;


/** Internal: key of the in-flight hash. */
typedef struct {
    uint64_t sender_id;                /**< Sender id from the wire */
    uint64_t msg_id;                   /**< Message id from the wire */
} psel_tm_key_t;

/** Internal: a message being received or waiting unexpected (tag_match.c). */
typedef struct psel_tm_msg psel_tm_msg_t;

/**
 * A rendezvous message matched @a recv (its state is
 * PSEL_TM_RECV_MATCHED, with info and status set).
 *
 * @param [in] arg       psel_tm_t::rndv_arg.
 * @param [in] recv      The receive; the callee completes it later with
 *                       psel_tm_rndv_complete().
 * @param [in] desc      The descriptor given to psel_tm_rndv_first(); only
 *                       valid during the call.
 * @param [in] desc_len  Its length.
 */
typedef void (*psel_tm_rndv_cb_t)(void *arg, psel_tm_recv_t *recv,
                                  const void *desc, size_t desc_len);

KHASH_TYPE(psel_tm_inflight, psel_tm_key_t, psel_tm_msg_t*)


/** Tag matching state of one worker. */
typedef struct psel_tm {
    ucs_list_link_t            expected;     /**< Posted receives, FIFO */
    ucs_list_link_t            unexpected;   /**< Unmatched messages, FIFO */
    khash_t(psel_tm_inflight)  inflight;     /**< Messages still arriving */
    size_t                     num_expected; /**< Length of @a expected */
    size_t                     num_unexpected; /**< Length of @a unexpected */
    /** Largest total length accepted from a first fragment (bounds the
     *  unexpected buffer a peer can make us allocate). psel_tm_init() sets
     *  SIZE_MAX; the worker may lower it to its largest eager message. */
    size_t                     max_length;
    int                        in_cleanup;   /**< Set during psel_tm_cleanup() */
    psel_tm_rndv_cb_t          rndv_matched; /**< A rendezvous message
                                                  matched; NULL: rendezvous
                                                  messages are rejected */
    void                      *rndv_arg;     /**< Its argument */
} psel_tm_t;


/**
 * Initialise an empty matcher.
 *
 * @param [out] tm  Matcher to initialise.
 *
 * @return UCS_OK.
 */
ucs_status_t psel_tm_init(psel_tm_t *tm);


/**
 * Release everything: unexpected messages and their data are freed, and
 * every posted receive (expected, or matched with data still arriving)
 * completes with UCS_ERR_CANCELED. The callbacks must not call into @a tm.
 *
 * @param [in] tm  Matcher to clean up.
 */
void psel_tm_cleanup(psel_tm_t *tm);


/**
 * Post a receive. The oldest unexpected message that matches is consumed:
 * its data is copied to @a recv->buffer, and @a recv completes now if the
 * message is whole, else when its last fragment lands. With no match,
 * @a recv joins the tail of the expected queue.
 *
 * @param [in] tm    Matcher.
 * @param [in] recv  Receive with tag, tag_mask, buffer, length and complete
 *                   set; owned by the matcher until complete() is called.
 *                   @a buffer may be NULL when @a length is 0.
 */
void psel_tm_post(psel_tm_t *tm, psel_tm_recv_t *recv);


/**
 * Cancel a receive that is still in the expected queue; it completes with
 * UCS_ERR_CANCELED (info.length 0) before this returns.
 *
 * @param [in] tm    Matcher.
 * @param [in] recv  A receive passed to psel_tm_post(), not yet released.
 *
 * @return UCS_OK if canceled; UCS_ERR_BUSY if it matched a message whose
 *         data is still arriving (it will complete normally);
 *         UCS_ERR_NO_ELEM if it has already completed.
 */
ucs_status_t psel_tm_cancel(psel_tm_t *tm, psel_tm_recv_t *recv);


/**
 * The first fragment of a message arrived. It is matched to the oldest
 * matching expected receive, else queued as unexpected (data copied).
 *
 * @param [in] tm            Matcher.
 * @param [in] sender_id     Sender id (unique per sending endpoint).
 * @param [in] msg_id        Message id, unique per sender while in flight.
 * @param [in] tag           Tag of the message.
 * @param [in] total_length  Length of the whole message.
 * @param [in] data          Bytes [0, len) of the message; only valid
 *                           during the call. May be NULL if @a len is 0.
 * @param [in] len           Bytes in this fragment; @a len == @a
 *                           total_length for a single-fragment message.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM if the fragment was rejected (logged);
 *         UCS_ERR_NO_MEMORY if the unexpected buffer could not be allocated
 *         (logged; the message is dropped).
 */
ucs_status_t psel_tm_eager_first(psel_tm_t *tm, uint64_t sender_id,
                                 uint64_t msg_id, uint64_t tag,
                                 size_t total_length, const void *data,
                                 size_t len);


/**
 * A later fragment of a message arrived. Its bytes land in the matched
 * receive's buffer (truncated to its length) or in the unexpected buffer;
 * the last one completes the message.
 *
 * @param [in] tm         Matcher.
 * @param [in] sender_id  Sender id, as in the first fragment.
 * @param [in] msg_id     Message id, as in the first fragment.
 * @param [in] offset     Offset of @a data in the message.
 * @param [in] data       Bytes [offset, offset + len); only valid during
 *                        the call.
 * @param [in] len        Bytes in this fragment, at least 1.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM if rejected (logged);
 *         UCS_ERR_NO_MEMORY if out-of-order tracking could not grow (logged;
 *         the fragment is dropped).
 */
ucs_status_t psel_tm_eager_middle(psel_tm_t *tm, uint64_t sender_id,
                                  uint64_t msg_id, size_t offset,
                                  const void *data, size_t len);


/**
 * A rendezvous message arrived: matched to the oldest matching expected
 * receive (then tm->rndv_matched is called before this returns), else
 * queued as unexpected with a copy of @a desc.
 *
 * @param [in] tm            Matcher.
 * @param [in] sender_id     Sender id (for the log).
 * @param [in] msg_id        Message id (for the log).
 * @param [in] tag           Tag of the message.
 * @param [in] total_length  Length of the message (not buffered).
 * @param [in] desc          Descriptor to hand to tm->rndv_matched; only
 *                           valid during the call.
 * @param [in] desc_len      Its length, at least 1.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM if rejected (no callback set, or
 *         an empty descriptor; logged); UCS_ERR_NO_MEMORY if the descriptor
 *         could not be kept (logged; the message is dropped).
 */
ucs_status_t psel_tm_rndv_first(psel_tm_t *tm, uint64_t sender_id,
                                uint64_t msg_id, uint64_t tag,
                                size_t total_length, const void *desc,
                                size_t desc_len);


/**
 * Withdraw a rendezvous message still waiting in the unexpected queue (its
 * sender canceled it): it is removed and freed; no receive will match it.
 *
 * @param [in] tm         Matcher.
 * @param [in] sender_id  Sender id, as given to psel_tm_rndv_first().
 * @param [in] msg_id     Message id, as given to psel_tm_rndv_first().
 *
 * @return UCS_OK if removed; UCS_ERR_NO_ELEM if no such rendezvous message
 *         waits unexpected (it matched a receive already, or never came).
 */
ucs_status_t psel_tm_rndv_withdraw(psel_tm_t *tm, uint64_t sender_id,
                                   uint64_t msg_id);


/**
 * The sender @a sender_id is gone (failed, or closed its endpoint): its
 * eager messages still being reassembled will never complete. Those not
 * matched yet leave the unexpected queue and are freed; the receives that
 * took one over complete with @a status (after the matcher is consistent
 * again: their callbacks may post). Whole messages stay: they arrived.
 *
 * @return The number of messages dropped.
 */
unsigned psel_tm_purge_sender(psel_tm_t *tm, uint64_t sender_id,
                              ucs_status_t status);


/**
 * Complete a receive handed to tm->rndv_matched: @a status replaces the
 * receive's status unless it is UCS_OK (a truncated receive stays
 * UCS_ERR_MESSAGE_TRUNCATED); then recv->complete() is called.
 *
 * @param [in] recv    The receive.
 * @param [in] status  UCS_OK when the data landed, else the error.
 */
void psel_tm_rndv_complete(psel_tm_recv_t *recv, ucs_status_t status);


/**
 * @return Number of receives in the expected queue.
 */
size_t psel_tm_num_expected(const psel_tm_t *tm);


/**
 * @return Number of messages in the unexpected queue (including those
 *         still being reassembled).
 */
size_t psel_tm_num_unexpected(const psel_tm_t *tm);


/**
 * @return Number of messages whose fragments are still arriving, matched
 *         or not.
 */
size_t psel_tm_num_inflight(const psel_tm_t *tm);

#endif
