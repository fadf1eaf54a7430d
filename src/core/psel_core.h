/**
 * @file psel_core.h
 * The data path: a context holds the resources and the configuration; a
 * worker owns a UCT worker and the ifaces, registers the active message
 * handlers and progresses everything; an endpoint, created from a peer's
 * worker address, runs lane selection and endpoint init and sends tagged
 * messages with the protocol its selection table names.
 */
#ifndef PSEL_CORE_PSEL_CORE_H_
#define PSEL_CORE_PSEL_CORE_H_

#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct psel_context *psel_context_h; /**< Resources and config */
typedef struct psel_worker  *psel_worker_h;  /**< Progress engine */
typedef struct psel_ep      *psel_ep_h;      /**< Connection to a peer */
typedef struct psel_request  psel_request_t; /**< Non-blocking operation */

/**
 * Completion callback of a request. It may free @a request
 * (psel_request_free()), as a UCP callback may; the request is then gone,
 * and so is the pointer returned by the call that started it (a callback
 * can run before that call returns).
 */
typedef void (*psel_request_cb_t)(psel_request_t *request, ucs_status_t status,
                                  void *arg);

/** Information about a completed receive. */
typedef struct psel_recv_info {
    uint64_t tag;     /**< Tag of the message */
    size_t   length;  /**< Size of the message as sent */
} psel_recv_info_t;

/**
 * Completion callback of a receive, as ucp_tag_recv_nbx's: @a info holds
 * the matched message's tag and length (0 when canceled). It points into
 * @a request: valid during the call, until the callback frees @a request,
 * which it may do, as a psel_request_cb_t may.
 */
typedef void (*psel_tag_recv_cb_t)(psel_request_t *request,
                                   ucs_status_t status,
                                   const psel_recv_info_t *info, void *arg);


/**
 * Create a context: read UCX_PSEL_* and discover this machine's resources,
 * filtered by UCX_PSEL_TLS and UCX_PSEL_NET_DEVICES.
 */
ucs_status_t psel_context_create(psel_context_h *context_p);

/**
 * An optimization hint, as ucp_params_t::estimated_num_eps: how many
 * endpoints (peers) each process of the job will create. Lane selection
 * takes latencies at this number and leaves out transports whose max eps is
 * below it (see lane_select/lane_engine.h). UCX_PSEL_NUM_EPS, when set,
 * overrides it, as UCX_NUM_EPS does. Applies to endpoints created after
 * the call; without it, 1.
 */
void psel_context_set_num_eps(psel_context_h context, size_t num_eps);

/** Destroy a context (after all its workers). */
void psel_context_destroy(psel_context_h context);

/** Create a worker: open every iface that peers can connect to directly. */
ucs_status_t psel_worker_create(psel_context_h context, psel_worker_h *worker_p);

/** Destroy a worker (after all its endpoints). */
void psel_worker_destroy(psel_worker_h worker);

/**
 * Print which protocols this worker's sends ran, per selection-table row,
 * with the sizes seen and the message counts. Sends are counted only with
 * UCX_PSEL_PROTO_INFO=used (no per-message cost otherwise), which also
 * prints it to the UCX log at worker destroy.
 */
void psel_worker_print_used(psel_worker_h worker, FILE *stream);

/** Progress communication; @return the number of events processed. */
unsigned psel_worker_progress(psel_worker_h worker);

/**
 * The worker's packed address, to give to peers (out of band).
 *
 * @param [out] address_p  Packed address; release with free().
 * @param [out] length_p   Its size.
 */
ucs_status_t psel_worker_get_address(psel_worker_h worker, void **address_p,
                                     size_t *length_p);

/**
 * Connect to a peer: unpack and validate its address, select lanes, build
 * the selection tables and connect the lanes.
 */
ucs_status_t psel_ep_create(psel_worker_h worker, const void *address,
                            size_t length, psel_ep_h *ep_p);

/**
 * Print an endpoint's lanes and how each is connected (to the peer's iface,
 * or endpoint to endpoint through the wireup exchange), and the peer's
 * endpoint id once wireup told it.
 */
void psel_ep_print_info(psel_ep_h ep, FILE *stream);

struct psel_select_table;

/**
 * The endpoint's tag-send selection table for contiguous host memory that
 * sends of PSEL_SEND_FLAG_* @a flags use (psel_tag_send_nbf()): its rows,
 * and each candidate protocol's status and caps (see
 * ucp_proto_sel/select.h). For tools (psel_calibrate) and tests; valid
 * while @a ep lives. NULL if the table could not be built.
 */
const struct psel_select_table *psel_ep_tag_table(psel_ep_h ep,
                                                  unsigned flags);

/**
 * The peer device a lane of @a ep reaches, as a calibration's rail names it:
 * the device address of the peer's resource (psel_resource_t::dev_addr,
 * lowercase hex). For tools (psel_calibrate).
 *
 * @param [in]  ep         Endpoint.
 * @param [in]  lane_name  "transport/device" of one of its lanes.
 * @param [out] peer       The address; at least PSEL_DEV_ADDR_HEX_MAX bytes.
 * @param [in]  max        Size of @a peer.
 *
 * @return UCS_OK; UCS_ERR_NO_ELEM if no lane has that name or the peer's
 *         device address is not known (longer than PSEL_DEV_ADDR_MAX).
 */
ucs_status_t psel_ep_lane_peer(psel_ep_h ep, const char *lane_name,
                               char *peer, size_t max);

/** How psel_ep_close_nb() closes. */
typedef enum {
    PSEL_EP_CLOSE_FLUSH, /**< Let every send posted before complete */
    PSEL_EP_CLOSE_FORCE  /**< Now: sends still running are canceled */
} psel_ep_close_mode_t;

/**
 * Flush an endpoint: the request completes once every send posted on it
 * before has completed and every lane's UCT operations are done
 * (uct_ep_flush), in the order flushes were posted.
 *
 * @return A request to test and free, or NULL if out of memory.
 */
psel_request_t *psel_ep_flush_nb(psel_ep_h ep, psel_request_cb_t cb,
                                 void *arg);

/**
 * Close an endpoint. PSEL_EP_CLOSE_FLUSH flushes it first and destroys it
 * when the returned request completes; PSEL_EP_CLOSE_FORCE destroys it now
 * (as psel_ep_destroy()) and returns NULL. Either way @a ep is invalid
 * once the close is done.
 */
psel_request_t *psel_ep_close_nb(psel_ep_h ep, psel_ep_close_mode_t mode,
                                 psel_request_cb_t cb, void *arg);

/** Destroy an endpoint; pending sends complete with UCS_ERR_CANCELED. */
void psel_ep_destroy(psel_ep_h ep);

/**
 * Send a tagged message.
 *
 * As ucp_tag_send_nbx: a send that completes at once (eager short, and
 * eager bcopy of one fragment, when the transport takes it) returns NULL
 * and does not call @a cb.
 *
 * @return NULL if the send completed; a request to test and free (it may
 *         already be complete, with an error if the peer failed); or an
 *         error pointer, UCS_STATUS_PTR(UCS_ERR_NO_MEMORY)
 *         (UCS_PTR_IS_ERR()). psel_request_test() of NULL is UCS_OK and of
 *         an error pointer its status; psel_request_free() ignores both.
 */
psel_request_t *psel_tag_send_nb(psel_ep_h ep, const void *buffer,
                                 size_t length, uint64_t tag,
                                 psel_request_cb_t cb, void *arg);

/** Flags of psel_tag_send_nbf(). */
enum {
    /** One of many sends in a row, as UCP's UCP_OP_ATTR_FLAG_MULTI_SEND:
     *  the protocol is selected on the streaming (multi) cost, where
     *  pipelined stages overlap, rather than on one message's latency
     *  (the endpoint's second table; UCX_PSEL_SELECT_PERF sets the
     *  flavour of sends without the flag). */
    PSEL_SEND_FLAG_STREAM = 1u << 0
};

/** psel_tag_send_nb() with PSEL_SEND_FLAG_* @a flags. */
psel_request_t *psel_tag_send_nbf(psel_ep_h ep, const void *buffer,
                                  size_t length, uint64_t tag, unsigned flags,
                                  psel_request_cb_t cb, void *arg);

/**
 * Post a tagged receive; it matches when (msg tag & mask) == (tag & mask).
 *
 * @return A request to test and free, or UCS_STATUS_PTR(UCS_ERR_NO_MEMORY).
 */
psel_request_t *psel_tag_recv_nb(psel_worker_h worker, void *buffer,
                                 size_t length, uint64_t tag, uint64_t mask,
                                 psel_tag_recv_cb_t cb, void *arg);

/**
 * @return UCS_INPROGRESS while the request runs, else its final status;
 *         @a info (may be NULL) is filled for a completed receive.
 */
ucs_status_t psel_request_test(psel_request_t *request, psel_recv_info_t *info);

/**
 * Cancel a request. A receive still waiting for a message completes with
 * UCS_ERR_CANCELED before this returns; a send not started yet (waiting in
 * the pending queue, or for wireup) too, and a rendezvous send whose
 * announcement (RTS) has not gone out. A rendezvous send whose RTS went
 * out and that the receiver has not answered yet asks the receiver to
 * withdraw the RTS: if no receive had matched it, the send completes with
 * UCS_ERR_CANCELED (registrations released) once the receiver confirms,
 * else it completes normally when its transfer ends. Peer failure still
 * fails it meanwhile.
 *
 * @return UCS_OK if canceled; UCS_INPROGRESS if the receiver was asked
 *         (also on a second call before it answers): test the request for
 *         how it ended; UCS_ERR_BUSY if it is already moving data (it
 *         completes normally: a matched receive, an eager send whose first
 *         bytes went out, a rendezvous send the receiver answered or
 *         refused to withdraw); UCS_ERR_NO_ELEM if it has completed.
 */
ucs_status_t psel_request_cancel(psel_request_t *request);

/** Release a request; a request still running is released when it ends. */
void psel_request_free(psel_request_t *request);

#endif
