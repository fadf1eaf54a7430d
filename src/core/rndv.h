/**
 * @file rndv.h
 * Rendezvous in the data path (internal): the worker's maps of rendezvous
 * requests by id, the receiver's side of rndv/am, rndv/get and rndv/put,
 * the handlers of RTS, RTR, ATS, FIN, DATA, CANCEL and CANCEL-ACK (wire
 * format in ucp_proto_sel/proto_rndv.h), and the cancel of a rendezvous
 * send. The sender's side is the protocols'
 * (proto_rndv.c); it reaches this file through the request view's track()
 * and resume() and the fields of psel_proto_rndv_t.
 */
#ifndef PSEL_CORE_RNDV_H_
#define PSEL_CORE_RNDV_H_

#include <ucp_proto_sel/proto_rndv.h>
#include <ucs/datastruct/khash.h>
#include <ucs/datastruct/list.h>
#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

#define PSEL_RNDV_MAX_MDS 16  /**< = PSEL_WORKER_MAX_MDS (checked in rndv.c) */

typedef struct psel_worker  *psel_worker_h;
typedef struct psel_ep      *psel_ep_h;
struct psel_request;

KHASH_INIT(psel_rndv_reqs, uint64_t, void*, 1, kh_int64_hash_func,
           kh_int64_hash_equal)

/** What rendezvous needs of one memory domain of the worker. */
typedef struct psel_rndv_md {
    uct_component_h component;  /**< Unpacks rkeys of this kind */
    uint16_t        rkey_size;  /**< Packed rkey size */
    uint8_t         mem_reg;    /**< Registers memory */
    uint8_t         valid;      /**< Filled */
} psel_rndv_md_t;

/** Rendezvous state of a worker. */
typedef struct psel_rndv_worker {
    khash_t(psel_rndv_reqs) sends;    /**< Send requests by id
                                           (psel_request_t*) */
    khash_t(psel_rndv_reqs) recvs;    /**< Receives by id
                                           (psel_rndv_recv_t*, rndv.c) */
    uint64_t                next_id;  /**< Last id given */
    ucs_list_link_t         work;     /**< Receives with something to send
                                           or post, oldest first */
    psel_rndv_md_t          mds[PSEL_RNDV_MAX_MDS]; /**< By worker MD index */
} psel_rndv_worker_t;


/** Set up the worker's rendezvous state and the tag matcher's hook. */
void psel_rndv_init(psel_worker_h worker);

/**
 * Release the rendezvous state, before the tag matcher and the ifaces:
 * receives in progress complete with UCS_ERR_CANCELED and sends still
 * tracked are aborted with UCS_ERR_CANCELED (registrations released).
 */
void psel_rndv_cleanup(psel_worker_h worker);

/** Run the receives that have something to send or post (bounded). */
unsigned psel_rndv_progress(psel_worker_h worker);

/**
 * Fail every rendezvous of @a ep (its sends, and receives whose replies go
 * to it) with @a status, releasing registrations and rkeys. For peer
 * failure and endpoint close; call it before the endpoint's UCT endpoints
 * are destroyed: operations still in flight are given up (their
 * completions must not arrive afterwards).
 */
void psel_rndv_ep_fail(psel_ep_h ep, ucs_status_t status);

/** The lane facts of @a ep the protocols need (filled on first use). */
const psel_proto_lane_info_t *psel_rndv_ep_lane_info(psel_ep_h ep);

/** The request view's track(): give the send an id replies find it by. */
ucs_status_t psel_rndv_track_send(psel_proto_req_t *proto);

/**
 * Cancel a rendezvous send (psel_request_cancel()). An RTS still waiting
 * for the transport is dropped and the send completes with
 * UCS_ERR_CANCELED now. A send waiting for the receiver's answer (RTR or
 * ATS) sends CANCEL: the receiver withdraws the RTS if no receive matched
 * it (the send then completes with UCS_ERR_CANCELED, its registrations
 * released), else the transfer goes on and completes normally.
 *
 * @return UCS_OK if canceled now; UCS_INPROGRESS if a CANCEL is (or was)
 *         sent and not answered yet; UCS_ERR_BUSY if the receiver answered
 *         already (or refused the CANCEL) or the send is no rendezvous.
 */
ucs_status_t psel_rndv_cancel_send(struct psel_request *req);

/** Forget a send's id (at its completion). */
void psel_rndv_untrack_send(psel_worker_h worker, uint64_t id);

/**
 * Handle a rendezvous active message (what the AM handlers call): validate
 * it and act on it. Exposed for tests that feed malformed headers.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM or UCS_ERR_UNSUPPORTED (another
 *         version) if the message was dropped, with an error log saying
 *         what was wrong; UCS_ERR_NO_ELEM for an unknown request id.
 */
ucs_status_t psel_rndv_am_input(psel_worker_h worker, uint8_t am_id,
                                const void *data, size_t length);

/** UCT AM handlers (arg = worker). */
ucs_status_t psel_rndv_am_rts(void *arg, void *data, size_t length,
                              unsigned flags);
ucs_status_t psel_rndv_am_rtr(void *arg, void *data, size_t length,
                              unsigned flags);
ucs_status_t psel_rndv_am_ats(void *arg, void *data, size_t length,
                              unsigned flags);
ucs_status_t psel_rndv_am_fin(void *arg, void *data, size_t length,
                              unsigned flags);
ucs_status_t psel_rndv_am_data(void *arg, void *data, size_t length,
                               unsigned flags);
ucs_status_t psel_rndv_am_cancel(void *arg, void *data, size_t length,
                                 unsigned flags);
ucs_status_t psel_rndv_am_cancel_ack(void *arg, void *data, size_t length,
                                     unsigned flags);

#endif
