/**
 * @file rndv.h
 * Rendezvous in core (internal): the request-id maps that replies find
 * their requests by, the callbacks the protocols call (proto_req.h), and
 * the failure fan-out. The state machines, wire headers and abort/cancel
 * of both halves are the protocols' (ucp_proto_sel/proto_rndv*.c); core
 * never touches their private state.
 */
#ifndef PSEL_CORE_RNDV_H_
#define PSEL_CORE_RNDV_H_

#include <ucp_proto_sel/proto_req.h>
#include <ucs/datastruct/khash.h>
#include <ucs/type/status.h>
#include <stdint.h>

typedef struct psel_worker  *psel_worker_h;
typedef struct psel_ep      *psel_ep_h;

KHASH_INIT(psel_rndv_reqs, uint64_t, void*, 1, kh_int64_hash_func,
           kh_int64_hash_equal)

/** Rendezvous state of a worker. */
typedef struct psel_rndv_worker {
    khash_t(psel_rndv_reqs) sends;    /**< Send requests by id
                                           (psel_request_t*) */
    khash_t(psel_rndv_reqs) recvs;    /**< Receives by id
                                           (psel_proto_rreq_t*) */
    khash_t(psel_rndv_reqs) eps;      /**< Endpoints by the peer's endpoint
                                           id (psel_ep_h): where replies to
                                           a sender go */
    uint64_t                next_id;  /**< Last id given */
} psel_rndv_worker_t;


/** Set up the worker's rendezvous state and fill the protocols' view of
 *  the worker with core's callbacks (the ifaces are filled as opened). */
void psel_rndv_init(psel_worker_h worker);

/**
 * Release the rendezvous state, before the tag matcher and the ifaces:
 * receives in progress and sends still tracked are aborted with
 * UCS_ERR_CANCELED.
 */
void psel_rndv_cleanup(psel_worker_h worker);

/**
 * Fail every rendezvous of @a ep (its sends, and receives whose replies go
 * to it) with @a status through the protocols' abort: each completes at
 * once, or when its operations in flight complete; with
 * PSEL_PROTO_ABORT_FORCE (after the endpoint's UCT endpoints are
 * destroyed: no completion will come) at once.
 */
void psel_rndv_ep_fail(psel_ep_h ep, ucs_status_t status, unsigned flags);

/** Forget a send's id (at its completion). */
void psel_rndv_untrack_send(psel_worker_h worker, uint64_t id);

/** Record that @a ep's peer endpoint is @a remote_id (wireup learnt it). */
void psel_rndv_set_remote_id(psel_ep_h ep, uint64_t remote_id);

/** Forget @a ep as a reply endpoint (it is destroyed). */
void psel_rndv_ep_remove(psel_ep_h ep);

#endif
