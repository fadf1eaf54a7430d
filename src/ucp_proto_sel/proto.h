/**
 * @file proto.h
 * What a protocol is: a name, the operations it serves, an init function
 * that reports its perf ranges over the lanes it is given (or says it does
 * not apply), and its data path: the sender's progress, abort, reset and
 * cancel, and for a rendezvous protocol the receiver's half and its wire
 * (psel_rndv_mode_ops_t, proto_rndv.h). The data path's view of requests
 * and endpoints is in proto_req.h (internal).
 *
 * The engine knows nothing about any single protocol; protocols know nothing
 * about how their lanes were chosen.
 */
#ifndef PSEL_UCP_PROTO_SEL_PROTO_H_
#define PSEL_UCP_PROTO_SEL_PROTO_H_

#include "perf.h"
#include "psel_config.h"

#include <lane_select/lane.h>
#include <ucs/type/status.h>

#define PSEL_PROTO_MAX_RANGES   8    /**< Perf ranges per protocol: a few
                                          size ranges, each split where
                                          another stage paces streaming */
#define PSEL_PROTO_PRIV_MAX     256  /**< Bytes of private config */
#define PSEL_PROTO_DESC_MAX     128  /**< Lane description / reason text */
#define PSEL_THRESH_AUTO        SIZE_MAX /**< cfg_thresh: select by perf */

/** Flags of a protocol definition (psel_proto_t::flags). */
enum {
    /** Its progress keeps no pointer to the request view between calls
     *  (no completion, no state but the offset): the data path may run a
     *  send's first call on a temporary view, so a send it completes at
     *  once needs no request (as UCX's eager short) */
    PSEL_PROTO_FLAG_INLINE = 1u << 0
};

/** Flags of protocol caps. */
enum {
    /** Rendezvous protocol: the rendezvous bias d applies to its cost */
    PSEL_PROTO_CAP_RNDV_BIAS   = 1u << 0,
    /** Its ranges are measured (UCX_PSEL_CALIBRATION), set by selection */
    PSEL_PROTO_CAP_CALIBRATED  = 1u << 1,
    /** The CPU copies the data into transport buffers (short, bcopy), as
     *  opposed to sending it from the user's registered buffer (zcopy):
     *  which of stock UCP's protocols does the same work (rndv/am/bcopy or
     *  rndv/am/zcopy) depends on it */
    PSEL_PROTO_CAP_COPY        = 1u << 2,
    /** Selected only at sizes where no other protocol of its operation
     *  applies: UCP's put and get by active messages while
     *  UCX_PREFER_OFFLOAD=y (their cfg_thresh is then "inf") */
    PSEL_PROTO_CAP_LAST_RESORT = 1u << 3
};


/** Input of a protocol's init. */
typedef struct psel_proto_init_params {
    psel_buffer_type_t      buf_type;  /**< Buffer type to report perf for */
    const psel_lane_sets_t *lanes;     /**< Lanes by selector role */
    const psel_config_t    *config;    /**< Settings (thresholds etc.) */
} psel_proto_init_params_t;


/** Output of a protocol's init. */
typedef struct psel_proto_caps {
    size_t            min_length;     /**< Smallest size it can send */
    unsigned          num_ranges;     /**< Entries used in @a ranges */
    psel_perf_range_t ranges[PSEL_PROTO_MAX_RANGES]; /**< Ascending; the last
                                           max_length is its largest size */
    size_t            cfg_thresh;     /**< Forced from this size on, and
                                           disabled below it; or
                                           PSEL_THRESH_AUTO */
    unsigned          cfg_priority;   /**< Class rank: when a protocol is
                                           forced, lower ranks drop out */
    unsigned          flags;          /**< PSEL_PROTO_CAP_* */
    char              desc[PSEL_PROTO_DESC_MAX]; /**< On success: lanes and
                                           shares ("tcp/lo 60% + tcp/eth0 40%");
                                           on UNSUPPORTED: the reason */
    char              lanes[PSEL_PROTO_DESC_MAX]; /**< On success: the data
                                           lanes joined by '+' ("tcp/lo+
                                           tcp/eth0"), the key of measured
                                           cost lines (calib.h) */
    size_t            priv_size;      /**< Bytes used in @a priv */
    uint8_t           priv[PSEL_PROTO_PRIV_MAX]; /**< Private config, handed
                                           back by lookup */
} psel_proto_caps_t;


/**
 * Report perf ranges for a buffer type.
 *
 * @param [in]  params  Buffer type, lanes and config.
 * @param [out] caps    Zeroed by the caller, cfg_thresh preset to
 *                      PSEL_THRESH_AUTO; filled by the protocol.
 *
 * @return UCS_OK, or UCS_ERR_UNSUPPORTED (with the reason in caps->desc)
 *         when the protocol does not apply.
 */
typedef ucs_status_t (*psel_proto_init_func_t)(
        const psel_proto_init_params_t *params, psel_proto_caps_t *caps);

struct psel_proto_req;        /* proto_req.h */
struct psel_rndv_mode_ops;    /* proto_rndv.h */

/**
 * Send (more of) a message over the lanes (see proto_req.h).
 *
 * @return UCS_OK when every byte is sent and the request is complete;
 *         UCS_INPROGRESS when more fragments remain (call again), or, once
 *         req->offset == req->length, when every fragment is posted and the
 *         protocol will call req->complete() when they have completed;
 *         UCS_ERR_NO_RESOURCE when the transport is busy (call again later,
 *         nothing of the current fragment was sent); another error on failure.
 */
typedef ucs_status_t (*psel_proto_progress_func_t)(struct psel_proto_req *req);

/** Flags of psel_proto_abort_func_t. */
enum {
    /** The endpoint's UCT endpoints are destroyed: completions of the
     *  operations still in flight will never come */
    PSEL_PROTO_ABORT_FORCE = 1u << 0
};

/**
 * Fail a send (peer failure, endpoint close, worker destroy): it moves no
 * more data; the protocol releases what it holds and calls the worker's
 * send_complete() with @a status - at once if no operation of it is in
 * flight, else when the last one completes (UCT completes them, with an
 * error, when the endpoint fails or its UCT endpoints are destroyed), or
 * at once with PSEL_PROTO_ABORT_FORCE. Never earlier: a UCT completion
 * must not find the request freed.
 */
typedef void (*psel_proto_abort_func_t)(struct psel_proto_req *req,
                                        ucs_status_t status, unsigned flags);

/**
 * Return a send to the state before its first progress call, releasing
 * what the protocol holds, while nothing of it reached the peer (so it can
 * be canceled, or run again with another protocol).
 *
 * @return UCS_OK, or UCS_ERR_BUSY if the peer has seen part of it.
 */
typedef ucs_status_t (*psel_proto_reset_func_t)(struct psel_proto_req *req);

/**
 * Cancel a send (psel_request_cancel()).
 *
 * @return UCS_OK if it completed with UCS_ERR_CANCELED; UCS_INPROGRESS if
 *         the peer was asked; UCS_ERR_BUSY if it goes on to completion.
 */
typedef ucs_status_t (*psel_proto_cancel_func_t)(struct psel_proto_req *req);


/** A protocol definition. */
typedef struct psel_proto {
    const char                 *name;      /**< Short name, "egr/short" */
    const char                 *desc;      /**< Description, "eager short" */
    uint64_t                    op_mask;   /**< UCS_BIT(psel_op_t) served */
    uint32_t                    lane_roles;/**< UCS_BIT(psel_lane_role_t):
                                                the selectors it needs */
    psel_proto_init_func_t      init;      /**< Perf ranges, or unsupported */
    psel_proto_progress_func_t  progress;  /**< The sender's data path */
    psel_proto_abort_func_t     abort;     /**< NULL: it holds nothing, the
                                                data path completes it */
    psel_proto_reset_func_t     reset;     /**< NULL: restartable until its
                                                first byte is sent */
    psel_proto_cancel_func_t    cancel;    /**< NULL: reset, else busy */
    const struct psel_rndv_mode_ops *rndv; /**< Rendezvous: its mode (both
                                                halves, the wire); else NULL */
    unsigned                    flags;     /**< PSEL_PROTO_FLAG_* */
    const char                 *twin;      /**< The protocol of another
                                                operation that does the same
                                                work ("egr/bcopy" for
                                                "am/egr/bcopy"): its measured
                                                lines, and the UCP protocols
                                                that stand for it, are this
                                                one's; NULL: none */
} psel_proto_t;

/** The name @a proto's measured lines and UCP mapping go by: its twin's,
 *  or its own */
static inline const char *psel_proto_lines_name(const psel_proto_t *proto)
{
    return (proto->twin != NULL) ? proto->twin : proto->name;
}


/**
 * The lane index egr/short sends on, if @a proto is egr/short (with its
 * private config @a priv), else -1. The sender's fast path (core's
 * psel_tag_send_nbf()) sends there without a lookup, as UCP's
 * ucp_tag_send_inline() does below max_eager_short.
 */
int psel_proto_egr_short_lane(const psel_proto_t *proto, const void *priv);

/** The built-in protocols, in tie-break order (earlier wins exact ties). */
extern const psel_proto_t *const psel_builtin_protos[];

/** Number of entries in psel_builtin_protos. */
extern const unsigned psel_num_builtin_protos;

/** The built-in protocol named @a name ("egr/short"), or NULL. */
const psel_proto_t *psel_proto_by_name(const char *name);

#endif
