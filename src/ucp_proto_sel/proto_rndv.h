/**
 * @file proto_rndv.h
 * What core calls of the rendezvous protocols: the AM handlers it
 * registers, the hand-over of a matched RTS, the work queue's progress.
 * Everything else of rendezvous (wire headers, both state machines, the
 * modes) is private to ucp_proto_sel (proto_rndv_int.h): core includes
 * this file only. Internal: not installed.
 */
#ifndef PSEL_UCP_PROTO_SEL_PROTO_RNDV_H_
#define PSEL_UCP_PROTO_SEL_PROTO_RNDV_H_

#include "proto_req.h"

#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the receiver (proto_rndv_recv.c): what core calls ---- */

/** Set up the protocols' part of a worker view (the work queue). */
void psel_rndv_worker_init(psel_proto_worker_t *worker);

/**
 * Tag matching matched an RTS (@a desc, as given to rts_arrived()) to the
 * receive @a recv of @a length bytes at @a buffer (@a truncated: nothing
 * is transferred). Starts the receive from progress; on failure completes
 * it through recv_complete().
 */
void psel_rndv_matched(psel_proto_worker_t *worker, void *recv, void *buffer,
                       size_t length, int truncated, const void *desc,
                       size_t desc_len);

/** Run the receives that have something to send or post (bounded). */
unsigned psel_rndv_progress(psel_proto_worker_t *worker);


/* ---- the messages (proto_rndv_handlers.c): what core registers ---- */

/**
 * Handle a rendezvous active message: parse, find the request it names,
 * check it waits for it, act. Exposed for tests that feed malformed
 * headers.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM or UCS_ERR_UNSUPPORTED (another
 *         version) if the message was dropped, with an error log saying
 *         what was wrong; UCS_ERR_NO_ELEM for an unknown request id.
 */
ucs_status_t psel_rndv_am_input(psel_proto_worker_t *worker, uint8_t am_id,
                                const void *data, size_t length);

/** A UCT AM handler of the rendezvous ids: arg = psel_proto_worker_t. */
typedef struct psel_rndv_am_handler {
    uint8_t           id;
    uct_am_callback_t cb;
} psel_rndv_am_handler_t;

/** The handlers of every rendezvous AM id, for core to register. */
extern const psel_rndv_am_handler_t psel_rndv_am_handlers[];

/** Entries of psel_rndv_am_handlers. */
extern const unsigned psel_rndv_num_am_handlers;

#endif
