/**
 * @file proto_req.h
 * The interface between the protocols and the data path (src/core): what a
 * protocol sees of an endpoint, a send request, a rendezvous receive and
 * the worker, and the callbacks core fills in. Protocols never include
 * core's headers; core calls protocols through psel_proto_t and the
 * rendezvous entry points (proto_rndv.h). Internal: not installed.
 *
 * Who owns what:
 *  - core: requests and their memory, the request-id maps (a reply finds
 *    its request through them), tag matching, endpoints and wireup, the
 *    pending queues, the AM id registration, failure fan-out;
 *  - a protocol: everything between a send's first progress call and its
 *    completion, both sides of a rendezvous, its wire headers, and what it
 *    registered or unpacked (released by its abort/reset).
 */
#ifndef PSEL_UCP_PROTO_SEL_PROTO_REQ_H_
#define PSEL_UCP_PROTO_SEL_PROTO_REQ_H_

#include <lane_select/lane.h>
#include <ucs/datastruct/list.h>
#include <uct/api/uct.h>

#include <endian.h>

#define PSEL_PROTO_MAX_IFACES  32  /**< Ifaces of one worker (= entries of
                                        its address) */

/** Active message ids of the data path. */
enum {
    PSEL_AM_ID_EAGER_SHORT  = 1,  /**< Whole message; header = tag (proto_egr.h) */
    PSEL_AM_ID_EAGER_FIRST  = 2,  /**< First (or only) fragment, psel_eager_first_hdr_t */
    PSEL_AM_ID_EAGER_MIDDLE = 3,  /**< Later fragment, psel_eager_middle_hdr_t */
    PSEL_AM_ID_WIREUP       = 4,  /**< Endpoint addresses of connect-to-ep
                                       lanes (src/core/wireup.c) */
    PSEL_AM_ID_RNDV_RTS     = 5,  /**< Rendezvous request to send,
                                       psel_rndv_rts_hdr_t (proto_rndv.h) */
    PSEL_AM_ID_RNDV_RTR     = 6,  /**< Ready to receive, psel_rndv_rtr_hdr_t */
    PSEL_AM_ID_RNDV_ATS     = 7,  /**< Receiver done (or refused), to the
                                       sender, psel_rndv_ack_hdr_t */
    PSEL_AM_ID_RNDV_FIN     = 8,  /**< Sender done (rndv/put), to the
                                       receiver, psel_rndv_ack_hdr_t */
    PSEL_AM_ID_RNDV_DATA    = 9,  /**< rndv/am data, psel_rndv_data_hdr_t */
    PSEL_AM_ID_RNDV_CANCEL  = 10, /**< Sender withdraws its RTS, to the
                                       receiver, psel_rndv_cancel_hdr_t */
    PSEL_AM_ID_RNDV_CANCEL_ACK = 11, /**< Receiver's answer to CANCEL, to
                                       the sender, psel_rndv_ack_hdr_t */
    /* 12..15: free, reserved for rendezvous */
    PSEL_AM_ID_LAST
};

typedef struct psel_proto_worker psel_proto_worker_t;
struct psel_proto_rndv;  /* proto_rndv.h */


/** One iface of the worker (= one entry of its address), for protocols
 *  that register memory or read rkeys on ifaces the peer names. */
typedef struct psel_proto_iface_info {
    const uct_iface_attr_t *attr;        /**< Limits and alignment */
    uct_md_h                md;          /**< Its memory domain */
    unsigned                md_index;    /**< Worker's index of @a md (< 32):
                                              ifaces on one MD share it */
    uct_component_h         component;   /**< Unpacks rkeys of this kind */
    uint16_t                rkey_size;   /**< Packed rkey size of @a md */
    uint8_t                 mem_reg;     /**< @a md registers memory */
} psel_proto_iface_info_t;


/** What a protocol needs to know of one lane besides its UCT endpoint. */
typedef struct psel_proto_lane_info {
    const psel_proto_iface_info_t *iface; /**< Our iface of the lane */
    uint32_t                caps;        /**< PSEL_LANE_CAP_* */
    uint16_t                remote_rkey_size; /**< Rkey size of the peer's
                                              entry: what rkeys it sends
                                              for this lane must have */
    uint8_t                 local_entry; /**< Our iface = our address entry */
    uint8_t                 remote_entry;/**< The peer's address entry */
} psel_proto_lane_info_t;


/** An endpoint as protocols see it (filled by core when its lanes are
 *  connected; read-only for protocols). */
typedef struct psel_proto_ep {
    psel_proto_worker_t   *worker;       /**< The worker it belongs to */
    uint64_t               id;           /**< Sender id of our messages */
    unsigned               num_lanes;    /**< Lanes in use */
    uint8_t                am_lane;      /**< Lane of control messages (the
                                              am lane with bcopy) */
    unsigned               num_remote_entries; /**< Entries of the peer's
                                              address */
    uct_ep_h               uct_eps[PSEL_MAX_LANES]; /**< UCT endpoint of
                                              each lane index */
    psel_proto_lane_info_t lane_info[PSEL_MAX_LANES]; /**< Per lane index */
} psel_proto_ep_t;


/** A send request as protocols see it. */
typedef struct psel_proto_req {
    const void            *buffer;       /**< Message */
    size_t                 length;       /**< Message size */
    uint64_t               tag;          /**< Tag */
    uint64_t               msg_id;       /**< Message id, unique per sender */
    size_t                 offset;       /**< Bytes sent so far */
    const void            *priv;         /**< The protocol's private config */
    const psel_proto_ep_t *ep;           /**< The endpoint */
    uct_mem_h              memh;         /**< Registration of @a buffer, or NULL */
    uct_completion_t       comp;         /**< Zero-copy operations in flight;
                                              func is NULL until the first one */
    struct psel_proto_rndv *rndv;        /**< Rendezvous state: allocated and
                                              freed by the protocol */
    uint64_t               req_id;       /**< Id replies name this request
                                              by; 0 until send_track() */
} psel_proto_req_t;


/**
 * A rendezvous receive as core sees it: the first member of the protocol's
 * receive state. Core keeps it in its request-id map and, when the
 * endpoint fails or the worker goes away, calls @a abort.
 */
typedef struct psel_proto_rreq {
    uint64_t          id;          /**< Given by rreq_track(); named by the
                                        sender's replies */
    uint64_t          sender_id;   /**< The message, as the RTS named it */
    uint64_t          msg_id;
    int               matched;     /**< 1 if it serves a matched receive
                                        (0: it only answers a CANCEL) */
    psel_proto_ep_t  *ep;          /**< Where replies go; NULL until found */
    /** Fail it with @a status: release what it holds, complete the
     *  receive, leave the map - once its reads in flight completed, or at
     *  once with PSEL_PROTO_ABORT_FORCE (as psel_proto_abort_func_t). */
    void            (*abort)(struct psel_proto_rreq *rreq, ucs_status_t status,
                             unsigned flags);
} psel_proto_rreq_t;


/**
 * The worker as protocols see it: its ifaces, the rendezvous work queue
 * (the protocols'), and the data path's callbacks (core's).
 */
struct psel_proto_worker {
    unsigned                num_ifaces;  /**< = entries of our address */
    psel_proto_iface_info_t ifaces[PSEL_PROTO_MAX_IFACES];
    ucs_list_link_t         rndv_work;   /**< Rendezvous receives with
                                              something to send or post,
                                              oldest first (proto_rndv_recv.c) */

    /* ---- sends ---- */
    /** The send ended asynchronously (after progress returned
     *  UCS_INPROGRESS with every byte posted): complete the request. */
    void              (*send_complete)(psel_proto_req_t *req,
                                       ucs_status_t status);
    /** Run the send's progress again from the worker's progress (a reply
     *  or a completion arrived); once however often it is called. */
    void              (*send_resume)(psel_proto_req_t *req);
    /** Give the send an id (req->req_id) that replies find it by until it
     *  completes; makes sure the peer can answer (wireup). */
    ucs_status_t      (*send_track)(psel_proto_req_t *req);
    /** The send tracked under @a id, or NULL. */
    psel_proto_req_t *(*send_find)(psel_proto_worker_t *worker, uint64_t id);

    /* ---- rendezvous receives ---- */
    /** Track @a rreq: sets rreq->id. */
    ucs_status_t      (*rreq_track)(psel_proto_worker_t *worker,
                                    psel_proto_rreq_t *rreq);
    /** Forget @a rreq (it completes). */
    void              (*rreq_untrack)(psel_proto_worker_t *worker,
                                      psel_proto_rreq_t *rreq);
    /** The receive tracked under @a id, or NULL. */
    psel_proto_rreq_t *(*rreq_find)(psel_proto_worker_t *worker, uint64_t id);
    /** A matched receive of the message (sender_id, msg_id), or NULL. */
    psel_proto_rreq_t *(*rreq_find_msg)(psel_proto_worker_t *worker,
                                        uint64_t sender_id, uint64_t msg_id);
    /**
     * Our endpoint to the sender @a sender_id, to reply on.
     * @return UCS_OK; UCS_ERR_NO_RESOURCE while wireup is under way (wait,
     *         for a while); UCS_ERR_NO_ELEM if there is none and none is
     *         coming; the endpoint's error if it failed.
     */
    ucs_status_t      (*reply_ep)(psel_proto_worker_t *worker,
                                  uint64_t sender_id, psel_proto_ep_t **ep_p);
    /** A control message (@a what: "RTR", "ATS", ...) could not be sent
     *  to @a ep's peer: its lane failed (@a status, not
     *  UCS_ERR_NO_RESOURCE). Fail the endpoint as a UCT error would: its
     *  requests complete with @a status, its owner hears of it. */
    void              (*ep_failed)(const psel_proto_ep_t *ep,
                                   ucs_status_t status,
                                   const char *what);

    /* ---- tag matching ---- */
    /** A validated RTS arrived: match it (now or when a receive is
     *  posted); @a desc (the whole RTS) comes back to psel_rndv_matched(). */
    ucs_status_t      (*rts_arrived)(psel_proto_worker_t *worker,
                                     uint64_t sender_id, uint64_t msg_id,
                                     uint64_t tag, size_t length,
                                     const void *desc, size_t desc_len);
    /** Withdraw an RTS still waiting unexpected: UCS_OK, or
     *  UCS_ERR_NO_ELEM if none waits. */
    ucs_status_t      (*rts_withdraw)(psel_proto_worker_t *worker,
                                      uint64_t sender_id, uint64_t msg_id);
    /** Complete a matched receive (handed over by psel_rndv_matched()). */
    void              (*recv_complete)(void *recv, ucs_status_t status);
};

/** An eager short message: egr/short's one UCT call, also made by the
 *  sender's fast path. UCT stores the header as a host integer: its bytes
 *  are made little-endian. */
static UCS_F_ALWAYS_INLINE ucs_status_t
psel_egr_short_send(uct_ep_h uct_ep, uint64_t tag, const void *buffer,
                    size_t length)
{
    return uct_ep_am_short(uct_ep, PSEL_AM_ID_EAGER_SHORT, htole64(tag),
                           buffer, (unsigned)length);
}

#endif
