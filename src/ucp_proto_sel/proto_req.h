/**
 * @file proto_req.h
 * What a protocol's progress function sees of a request: the message, where
 * it is, the UCT endpoints of the lanes, and callbacks into the data path.
 * The data path (src/core) fills it in; protocols never include core's
 * headers, so the dependency points one way.
 */
#ifndef PSEL_UCP_PROTO_SEL_PROTO_REQ_H_
#define PSEL_UCP_PROTO_SEL_PROTO_REQ_H_

#include <lane_select/lane.h>
#include <uct/api/uct.h>

/** Active message ids of the data path. */
enum {
    PSEL_AM_ID_EAGER_SHORT  = 1,  /**< Whole message; header = tag */
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

/** Header of the first fragment of an eager message. */
typedef struct UCS_S_PACKED psel_eager_first_hdr {
    uint64_t tag;           /**< Message tag */
    uint64_t sender_id;     /**< Sending endpoint's id */
    uint64_t msg_id;        /**< Message id, unique per sender */
    uint64_t total_length;  /**< Whole message size */
} psel_eager_first_hdr_t;

/** Header of a later fragment. */
typedef struct UCS_S_PACKED psel_eager_middle_hdr {
    uint64_t sender_id;     /**< Sending endpoint's id */
    uint64_t msg_id;        /**< Message id */
    uint64_t offset;        /**< Where the payload goes */
} psel_eager_middle_hdr_t;


/** What a protocol needs to know of one lane besides its UCT endpoint
 *  (rendezvous: limits, registration, rkeys, address entries). */
typedef struct psel_proto_lane_info {
    const uct_iface_attr_t *iface_attr;  /**< Limits and alignment of the
                                              lane's iface */
    uct_component_h         component;   /**< Unpacks rkeys the peer packed
                                              for this lane's transport */
    uint16_t                rkey_size;   /**< Packed rkey size of the lane's
                                              memory domain */
    uint8_t                 mem_reg;     /**< The memory domain registers
                                              memory (uct_md_mem_reg) */
    uint8_t                 local_entry; /**< Our iface = our address entry */
    uint8_t                 remote_entry;/**< The peer's address entry */
} psel_proto_lane_info_t;

struct psel_proto_rndv; /* proto_rndv.h */


/** A send request as protocols see it. */
typedef struct psel_proto_req {
    const void        *buffer;       /**< Message */
    size_t             length;       /**< Message size */
    uint64_t           tag;          /**< Tag */
    uint64_t           sender_id;    /**< This endpoint's id at the peer */
    uint64_t           msg_id;       /**< Message id */
    size_t             offset;       /**< Bytes sent so far */
    const void        *priv;         /**< The protocol's private config */
    uct_ep_h const    *lanes;        /**< UCT endpoint of each lane index */
    uct_md_h const    *mds;          /**< Memory domain of each lane index */
    uct_mem_h          memh;         /**< Registration of @a buffer, or NULL */
    uct_completion_t   comp;         /**< Zero-copy operations in flight;
                                          func is NULL until the first one */
    void             (*complete)(struct psel_proto_req *req,
                                 ucs_status_t status); /**< The data path's
                                          completion, for a protocol that
                                          ends asynchronously */
    /* rendezvous */
    const psel_proto_lane_info_t *lane_info; /**< Per lane index */
    struct psel_proto_rndv *rndv;    /**< Rendezvous state: allocated and
                                          freed by the protocol, filled by
                                          the data path from replies */
    uint64_t           req_id;       /**< Id replies name this request by;
                                          0 until track() */
    ucs_status_t     (*track)(struct psel_proto_req *req); /**< Sets req_id:
                                          replies find the request until it
                                          completes */
    void             (*resume)(struct psel_proto_req *req); /**< Run progress
                                          again from the worker's progress
                                          (a reply or completion arrived) */
} psel_proto_req_t;

#endif
