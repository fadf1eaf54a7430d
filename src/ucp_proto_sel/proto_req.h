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
    /* 5..15: rendezvous (RTS, RTR, ATS, FIN, data) */
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
} psel_proto_req_t;

#endif
