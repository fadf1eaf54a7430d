/**
 * @file proto_rndv_int.h
 * Rendezvous, both halves: the wire headers (pack and parse in
 * proto_rndv_wire.c), the sender's and the receiver's state, the engine
 * that runs both state machines (proto_rndv_send.c, proto_rndv_recv.c,
 * proto_rndv_handlers.c) and the per-mode parts a
 * rendezvous protocol plugs into it (proto_rndv_am.c, proto_rndv_get.c,
 * proto_rndv_put.c). Core reaches it through psel_proto_t's callbacks, the
 * AM handler table psel_rndv_am_handlers and psel_rndv_matched()
 * (proto_rndv.h, all core includes); the protocols reach core through
 * proto_req.h. Private to ucp_proto_sel (and its tests): not installed.
 *
 * @section rndv_wire Wire format, version 2
 *
 * Little-endian (lane_select/wire.h), packed: the structs below give the
 * layout, their multi-byte fields hold little-endian values. Every header
 * starts with its version byte; a receiver drops (with an error log) a
 * header of another version, a short or overlong message, an unknown
 * mode, a status that is not a ucs_status_t, a lane record that overruns
 * the message or names an iface that does not exist, and a request id it
 * does not know or that does not wait for that message.
 *
 * @code
 *  RTS  (AM 5, sender -> receiver): psel_rndv_rts_hdr_t, then num_lanes
 *       psel_rndv_lane_rec_t, each followed by rkey_size rkey bytes.
 *         rndv/get: the sender's address entries of the rma_bw lanes the
 *                   protocol uses (only those), their weights and rkeys,
 *                   and the buffer address;
 *         rndv/put: the receiver's address entries the put lanes write to
 *                   (no rkeys: the RTR brings them);
 *         rndv/am:  no lanes.
 *  RTR  (AM 6, receiver -> sender): psel_rndv_rtr_hdr_t, then for rndv/put
 *       one lane record per entry of the RTS with the rkey of the receive
 *       buffer; rndv/am: no lanes ("go").
 *  ATS  (AM 7, receiver -> sender): psel_rndv_ack_hdr_t. rndv/get: the data
 *       was read; any mode: the receiver took the message without a
 *       transfer (zero length, truncated receive) or failed.
 *  FIN  (AM 8, sender -> receiver): psel_rndv_ack_hdr_t. rndv/put: every
 *       put completed and was flushed; any mode: the sender failed.
 *  DATA (AM 9, sender -> receiver): psel_rndv_data_hdr_t + payload (rndv/am).
 *  CANCEL (AM 10, sender -> receiver): psel_rndv_cancel_hdr_t. The sender
 *       withdraws a message whose RTS went out and that no RTR or ATS
 *       answered yet; it goes on the lane of the RTS, after it.
 *  CANCEL-ACK (AM 11, receiver -> sender): psel_rndv_ack_hdr_t naming the
 *       sender's request, status UCS_OK (the RTS was still unexpected and
 *       is gone: nothing else will come), UCS_ERR_BUSY (a receive matched
 *       it: the transfer goes on) or UCS_ERR_NO_ELEM (no such message:
 *       what it got was already answered).
 * @endcode
 *
 * Version 2 is version 1 in little-endian (version 1 was host order).
 *
 * @section rndv_add Adding a rendezvous mode
 *
 * A new file in this directory defines a psel_rndv_mode_ops_t (a new
 * psel_rndv_mode_t value, what its RTS and RTR carry, how the sender posts
 * data, how the receiver starts) and a psel_proto_t whose progress, abort,
 * reset and cancel are the engine's (PSEL_PROTO_RNDV_CALLBACKS) and whose
 * rndv member points to the ops; then one line in proto_list.c and one in
 * Makefile.inc. Core needs no change: it dispatches by AM id and request
 * id, and the engine finds the mode's ops by the RTS's mode byte.
 */
#ifndef PSEL_UCP_PROTO_SEL_PROTO_RNDV_INT_H_
#define PSEL_UCP_PROTO_SEL_PROTO_RNDV_INT_H_

#include "byte_ranges.h"
#include "proto.h"
#include "proto_rndv.h"

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

#define PSEL_RNDV_WIRE_VERSION  2u  /**< Version byte of every header */
#define PSEL_RNDV_MAX_MDS       32  /**< Memory domains a receive registers
                                         on, by worker MD index */

/**
 * Smallest part of a message one lane of a multi-lane transfer carries.
 * Another lane saves (bytes it takes) / bandwidth but costs one more
 * operation's overhead and latency, a few microseconds (cma 2 us per
 * get, tcp 5-10 us per send): at 10 GB/s, 64 KiB is 6.5 us of transfer, so
 * a lane is worth adding only when it takes at least that much. A message
 * of n bytes therefore uses at most n / 64 KiB lanes, and a medium message
 * is never cut into slivers.
 */
#define PSEL_RNDV_MIN_CHUNK     (64 * 1024)

/** Which rendezvous flow a message takes (the RTS's mode byte). */
typedef enum {
    PSEL_RNDV_MODE_AM  = 1,  /**< RTS, RTR, data by AM */
    PSEL_RNDV_MODE_GET = 2,  /**< RTS with rkeys, get by the receiver, ATS */
    PSEL_RNDV_MODE_PUT = 3,  /**< RTS, RTR with rkeys, put, FIN */
    PSEL_RNDV_MODE_LAST
} psel_rndv_mode_t;


/* ---- wire headers (layout; fields little-endian) ---- */

/** Request to send. */
typedef struct UCS_S_PACKED psel_rndv_rts_hdr {
    uint8_t  version;    /**< PSEL_RNDV_WIRE_VERSION */
    uint8_t  mode;       /**< psel_rndv_mode_t */
    uint8_t  num_lanes;  /**< Lane records that follow */
    uint8_t  reserved;   /**< 0 */
    uint64_t tag;        /**< Message tag */
    uint64_t length;     /**< Message size */
    uint64_t sender_id;  /**< Sending endpoint's id: the receiver replies on
                              its endpoint to that one */
    uint64_t msg_id;     /**< Message id, unique per sender */
    uint64_t sreq_id;    /**< Sender's request id, named by RTR and ATS */
    uint64_t address;    /**< rndv/get: the sender's buffer; else 0 */
} psel_rndv_rts_hdr_t;

/** A lane record of an RTS or RTR; rkey_size rkey bytes follow it. */
typedef struct UCS_S_PACKED psel_rndv_lane_rec {
    uint8_t  entry;      /**< Address entry (iface) index: the sender's for
                              rndv/get, the receiver's for rndv/put */
    uint8_t  reserved;   /**< 0 */
    uint16_t weight;     /**< Byte share, relative (> 0 in an RTS) */
    uint16_t rkey_size;  /**< Packed rkey bytes that follow */
} psel_rndv_lane_rec_t;

/** Ready to receive. */
typedef struct UCS_S_PACKED psel_rndv_rtr_hdr {
    uint8_t  version;    /**< PSEL_RNDV_WIRE_VERSION */
    uint8_t  mode;       /**< As in the RTS */
    uint8_t  num_lanes;  /**< rndv/put: lane records with rkeys */
    uint8_t  reserved;   /**< 0 */
    uint64_t sreq_id;    /**< Sender's request */
    uint64_t rreq_id;    /**< Receiver's request, named by FIN and DATA */
    uint64_t address;    /**< rndv/put: the receive buffer; else 0 */
    uint64_t length;     /**< Bytes to send: the message size */
} psel_rndv_rtr_hdr_t;

/** ATS, CANCEL-ACK (name the sender's request) and FIN (the receiver's). */
typedef struct UCS_S_PACKED psel_rndv_ack_hdr {
    uint8_t  version;    /**< PSEL_RNDV_WIRE_VERSION */
    int8_t   status;     /**< UCS_OK, or the error the peer ended with */
    uint64_t req_id;     /**< The request it completes */
} psel_rndv_ack_hdr_t;

/** The sender withdraws a message (names it as its RTS did). */
typedef struct UCS_S_PACKED psel_rndv_cancel_hdr {
    uint8_t  version;    /**< PSEL_RNDV_WIRE_VERSION */
    uint8_t  reserved;   /**< 0 */
    uint64_t sender_id;  /**< As in the RTS */
    uint64_t msg_id;     /**< As in the RTS */
    uint64_t sreq_id;    /**< As in the RTS; the CANCEL-ACK names it */
} psel_rndv_cancel_hdr_t;

/** rndv/am data fragment; the payload follows. */
typedef struct UCS_S_PACKED psel_rndv_data_hdr {
    uint8_t  version;    /**< PSEL_RNDV_WIRE_VERSION */
    uint64_t rreq_id;    /**< Receiver's request */
    uint64_t offset;     /**< Where the payload goes in the message */
} psel_rndv_data_hdr_t;


/* ---- parsed messages (host order, validated) ---- */

/** A lane record and its rkey. */
typedef struct psel_rndv_lane_in {
    psel_rndv_lane_rec_t rec;
    const uint8_t       *rkey;   /**< Into the message */
} psel_rndv_lane_in_t;

/** An RTS. */
typedef struct psel_rndv_rts {
    psel_rndv_rts_hdr_t hdr;
    psel_rndv_lane_in_t lanes[PSEL_MAX_LANES];
} psel_rndv_rts_t;

/** An RTR. */
typedef struct psel_rndv_rtr {
    psel_rndv_rtr_hdr_t hdr;
    psel_rndv_lane_in_t lanes[PSEL_MAX_LANES];
} psel_rndv_rtr_t;

/** Any rendezvous message, parsed. */
typedef union psel_rndv_msg {
    psel_rndv_rts_t        rts;
    psel_rndv_rtr_t        rtr;
    psel_rndv_ack_hdr_t    ack;
    psel_rndv_cancel_hdr_t cancel;
    struct {
        psel_rndv_data_hdr_t hdr;
        const void          *payload;
        size_t               length;
    } data;
} psel_rndv_msg_t;


/* ---- the multi-lane split (proto_split.c) ---- */

/** One lane given to psel_proto_xfer_init(). */
typedef struct psel_proto_split_lane {
    uint8_t lane;        /**< Lane index of the endpoint */
    double  share;       /**< Relative byte share (> 0) */
    size_t  max_frag;    /**< Largest operation the lane takes (>= 1) */
    size_t  align;       /**< Chunk and fragment alignment (>= 1) */
    size_t  min_frag;    /**< Smallest operation the lane takes (UCT's
                              min_zcopy; 0: any) */
} psel_proto_split_lane_t;

/**
 * A transfer split over lanes: lane i carries bytes [start_i, end[i]) of
 * the message, contiguous and in lane order, in fragments of at most
 * max_frag[i]; fragments are issued round robin over the lanes.
 */
typedef struct psel_proto_xfer {
    unsigned num_lanes;                 /**< Lanes that carry bytes */
    unsigned next;                      /**< Lane to try first */
    uint8_t  lanes[PSEL_MAX_LANES];     /**< Lane indices */
    size_t   max_frag[PSEL_MAX_LANES];  /**< Fragment size (aligned) */
    size_t   min_frag[PSEL_MAX_LANES];  /**< Smallest fragment */
    size_t   offset[PSEL_MAX_LANES];    /**< Next byte to post */
    size_t   end[PSEL_MAX_LANES];       /**< End of the lane's chunk */
} psel_proto_xfer_t;

/**
 * Split @a length bytes over @a lanes (best first) by their shares.
 *  - A lane takes part only if its chunk is at least @a min_chunk and its
 *    min_frag; the message uses at most length / min_chunk lanes (at
 *    least one); the lanes that drop out are the last ones.
 *  - Chunk boundaries are multiples of the lane's alignment (relative to
 *    the message start); the last lane takes the remainder.
 *  - Fragments are max_frag rounded down to the alignment, and none is
 *    below the lane's min_frag: where the last fragment of a chunk would
 *    be, the one before it leaves it min_frag bytes (so a chunk of at
 *    least min_frag bytes never needs a smaller operation, as long as
 *    max_frag >= 2 min_frag, which every UCT transport's limits give).
 */
void psel_proto_xfer_init(psel_proto_xfer_t *xfer,
                          const psel_proto_split_lane_t *lanes,
                          unsigned num_lanes, size_t length, size_t min_chunk);

/**
 * The next fragment to post, round robin from xfer->next.
 *
 * @return 1 and the lane position @a index_p (in xfer->lanes), @a offset_p
 *         and @a length_p; 0 when every byte is posted.
 */
int psel_proto_xfer_next(const psel_proto_xfer_t *xfer, unsigned *index_p,
                         size_t *offset_p, size_t *length_p);

/** Record that the fragment from psel_proto_xfer_next() was posted. */
void psel_proto_xfer_posted(psel_proto_xfer_t *xfer, unsigned index,
                            size_t length);

/** The operation a transfer's lanes run, for their limits. */
typedef enum {
    PSEL_PROTO_XFER_PUT,       /**< put_zcopy */
    PSEL_PROTO_XFER_GET,       /**< get_zcopy */
    PSEL_PROTO_XFER_AM_ZCOPY,  /**< am_zcopy with a data header */
    PSEL_PROTO_XFER_AM_BCOPY   /**< am_bcopy with a data header */
} psel_proto_xfer_op_t;

/**
 * Fill @a out for a lane from its iface limits: the largest operation
 * (max_zcopy of put/get, or the AM size less psel_rndv_data_hdr_t), the
 * smallest (min_zcopy of the zero-copy operation; bcopy has none) and the
 * alignment (the larger of opt_zcopy_align and align_mtu, at least 1).
 */
void psel_proto_xfer_lane(const uct_iface_attr_t *attr,
                          psel_proto_xfer_op_t op, uint8_t lane, double share,
                          psel_proto_split_lane_t *out);


/* ---- the sender ---- */

/** Stages of a rendezvous send. */
typedef enum {
    PSEL_RNDV_STAGE_START = 0, /**< Register, get an id */
    PSEL_RNDV_STAGE_RTS,       /**< Send the RTS */
    PSEL_RNDV_STAGE_WAIT,      /**< Wait for RTR or ATS */
    PSEL_RNDV_STAGE_DATA,      /**< RTR arrived: post the data */
    PSEL_RNDV_STAGE_DRAIN,     /**< Wait for the posted data to complete */
    PSEL_RNDV_STAGE_FLUSH,     /**< Flush each data lane (modes with FIN) */
    PSEL_RNDV_STAGE_FIN,       /**< Send FIN */
    PSEL_RNDV_STAGE_DONE       /**< Finish with @ref psel_proto_rndv::status */
} psel_rndv_stage_t;

/** Where the cancel of a rendezvous send is (psel_proto_rndv::cancel). */
typedef enum {
    PSEL_RNDV_CANCEL_NONE = 0, /**< Not asked */
    PSEL_RNDV_CANCEL_WANTED,   /**< Asked while waiting for RTR or ATS: send
                                    CANCEL (from progress, stage WAIT) */
    PSEL_RNDV_CANCEL_SENT,     /**< CANCEL out: the send does not complete
                                    before the CANCEL-ACK */
    PSEL_RNDV_CANCEL_REFUSED   /**< The receiver had matched it: the
                                    transfer goes on */
} psel_rndv_cancel_t;

/**
 * Rendezvous state of a send, allocated at its first progress call and
 * freed when it finishes; only the engine and the mode's ops touch it.
 */
typedef struct psel_proto_rndv {
    const struct psel_rndv_mode_ops *ops; /**< The protocol's mode */
    psel_rndv_stage_t stage;           /**< Where it is */
    ucs_status_t      status;          /**< Final status */
    psel_rndv_cancel_t cancel;         /**< Cancel exchange */
    /* from the receiver (RTR) */
    uint64_t          remote_req_id;   /**< rreq_id */
    uint64_t          remote_address;  /**< rndv/put: where to write */
    uint32_t          rkey_map;        /**< Lanes with an rkey in @a rkeys */
    uct_rkey_bundle_t rkeys[PSEL_MAX_LANES]; /**< rndv/put, per lane */
    /* the sender's */
    uct_mem_h         memh[PSEL_MAX_LANES];  /**< Registration per lane
                                                  (lanes on one memory
                                                  domain share it) */
    uint32_t          memh_owner;      /**< Lanes whose memh to deregister */
    unsigned          flush_next;      /**< Next lane to flush */
    psel_proto_xfer_t xfer;            /**< Data split over the lanes */
    size_t            rts_length;      /**< Bytes of @a rts */
    uint8_t          *rts;             /**< The RTS, packed at start (it
                                            follows this struct) */
} psel_proto_rndv_t;


/* ---- the receiver ---- */

/** Stages of a rendezvous receive. */
typedef enum {
    PSEL_RNDV_RECV_START,    /**< Find the reply endpoint, prepare */
    PSEL_RNDV_RECV_GET,      /**< Post the reads (modes with recv_post) */
    PSEL_RNDV_RECV_GET_WAIT, /**< Wait for the reads */
    PSEL_RNDV_RECV_RTR,      /**< Send the RTR */
    PSEL_RNDV_RECV_WAIT,     /**< Wait for FIN or the data */
    PSEL_RNDV_RECV_ATS       /**< Send the ATS (or CANCEL-ACK), complete */
} psel_rndv_recv_stage_t;

/**
 * A rendezvous receive: a matched receive and its transfer. A reply to a
 * CANCEL is one too, without a receive (@a recv NULL): it only finds the
 * endpoint back (START) and sends its CANCEL-ACK (ATS stage).
 */
typedef struct psel_rndv_recv {
    psel_proto_rreq_t      super;     /**< What core sees; first member */
    ucs_list_link_t        list;      /**< worker->rndv_work, while queued */
    int                    queued;
    psel_proto_worker_t   *worker;
    const struct psel_rndv_mode_ops *ops; /**< The RTS's mode; NULL for a
                                           CANCEL-ACK */
    void                  *recv;      /**< Core's receive, or NULL */
    void                  *buffer;    /**< The receive buffer */
    size_t                 length;    /**< Bytes to receive */
    int                    truncated; /**< Nothing is transferred (ATS) */
    double                 ep_deadline; /**< Give up waiting for the reply
                                           endpoint then (psel_time_sec) */
    psel_rndv_recv_stage_t stage;
    ucs_status_t           status;    /**< Of the receive */
    ucs_status_t           ats_status;/**< What the ATS says */
    ucs_status_t           abort_status; /**< Aborted with it, waiting for
                                           its reads in flight; or UCS_OK */
    uint8_t                ack_am_id; /**< ATS, or CANCEL-ACK */
    psel_byte_ranges_t     landed;    /**< Data by AM: the bytes arrived
                                           (a duplicate is found) */
    uint32_t               rkey_map;  /**< Lanes with an rkey (rndv/get) */
    uct_rkey_bundle_t      rkeys[PSEL_MAX_LANES];
    uint32_t               md_map;    /**< Memory domains registered on */
    uct_mem_h              memh[PSEL_RNDV_MAX_MDS];
    uct_completion_t       comp;      /**< Reads in flight */
    psel_proto_xfer_t      xfer;      /**< rndv/get */
    void                  *rtr;       /**< Packed RTR */
    size_t                 rtr_length;
    psel_rndv_rts_t        rts;       /**< Parsed; rkeys point into rts_data */
    size_t                 rts_length;
    uint8_t                rts_data[];
} psel_rndv_recv_t;


/* ---- a rendezvous mode ---- */

/** What the lane records of a mode's RTS name. */
typedef enum {
    PSEL_RNDV_RTS_NO_LANES,     /**< None */
    PSEL_RNDV_RTS_OUR_ENTRIES,  /**< The sender's entries with rkeys and the
                                     buffer address (the receiver reads) */
    PSEL_RNDV_RTS_PEER_ENTRIES  /**< The receiver's entries the sender will
                                     write to (its RTR brings the rkeys) */
} psel_rndv_rts_lanes_t;

/** The parts of one rendezvous mode the engine calls. */
typedef struct psel_rndv_mode_ops {
    psel_rndv_mode_t      mode;        /**< Its RTS mode byte */
    const char           *name;        /**< "get", for logs */
    psel_rndv_rts_lanes_t rts_lanes;   /**< What its RTS's records name */
    int                   rtr;         /**< The receiver answers with an RTR
                                            (else an ATS ends it) */
    int                   rtr_rkeys;   /**< The RTR's records carry rkeys */
    int                   fin;         /**< The sender flushes its data
                                            lanes and sends FIN */
    uint32_t              recv_waits;  /**< UCS_BIT(am id) of what ends a
                                            receive in stage WAIT with
                                            success (FIN, DATA) */

    /** The sender: memory access to register the buffer with, 0 for none. */
    unsigned             (*send_access)(const psel_proto_req_t *req);
    /** The sender, RTR arrived (modes with an RTR): take what it carries. */
    ucs_status_t         (*send_rtr)(psel_proto_req_t *req,
                                     const psel_rndv_rtr_t *rtr);
    /** The sender: the operation of its data lanes (modes with an RTR). */
    psel_proto_xfer_op_t (*send_xfer_op)(const psel_proto_req_t *req);
    /** The sender: post one fragment; UCS_OK or UCS_INPROGRESS if posted. */
    ucs_status_t         (*send_post)(psel_proto_req_t *req, uint8_t lane,
                                      size_t offset, size_t length);
    /** The receiver, reply endpoint known: prepare and say the next stage
     *  (PSEL_RNDV_RECV_GET or PSEL_RNDV_RECV_RTR). */
    ucs_status_t         (*recv_start)(psel_rndv_recv_t *op,
                                       psel_rndv_recv_stage_t *next_p);
    /** The receiver: post its reads (stage GET). */
    ucs_status_t         (*recv_post)(psel_rndv_recv_t *op);
} psel_rndv_mode_ops_t;


/* ---- the sender (proto_rndv_send.c): psel_proto_t callbacks ---- */

/** A rendezvous protocol's send progress (psel_proto_t::progress). */
ucs_status_t psel_rndv_send_progress(psel_proto_req_t *req);

/** Fail a send (psel_proto_t::abort). */
void psel_rndv_send_abort(psel_proto_req_t *req, ucs_status_t status,
                          unsigned flags);

/** Back to the start while the RTS has not gone out (psel_proto_t::reset). */
ucs_status_t psel_rndv_send_reset(psel_proto_req_t *req);

/**
 * Cancel a send (psel_proto_t::cancel). Before the RTS went out it
 * completes with UCS_ERR_CANCELED now (UCS_OK); waiting for the answer it
 * sends CANCEL (UCS_INPROGRESS; see psel_request_cancel()); answered:
 * UCS_ERR_BUSY.
 */
ucs_status_t psel_rndv_send_cancel(psel_proto_req_t *req);

/** The callbacks of every rendezvous psel_proto_t. */
#define PSEL_PROTO_RNDV_CALLBACKS \
    .progress = psel_rndv_send_progress, \
    .abort    = psel_rndv_send_abort, \
    .reset    = psel_rndv_send_reset, \
    .cancel   = psel_rndv_send_cancel



/**
 * Act on a message psel_rndv_am_input() parsed and checked: @a target is
 * the send (psel_proto_req_t) or receive (psel_rndv_recv_t) it names and
 * that waits for it (NULL for RTS and CANCEL), @a data the message as it
 * arrived. The send side's are in proto_rndv_send.c, the receive side's
 * in proto_rndv_recv.c.
 */
typedef ucs_status_t psel_rndv_act_func_t(psel_proto_worker_t *worker,
                                          void *target,
                                          const psel_rndv_msg_t *msg,
                                          const void *data, size_t length);

psel_rndv_act_func_t psel_rndv_send_on_rtr;
psel_rndv_act_func_t psel_rndv_send_on_ats;
psel_rndv_act_func_t psel_rndv_send_on_cancel_ack;
psel_rndv_act_func_t psel_rndv_recv_on_rts;
psel_rndv_act_func_t psel_rndv_recv_on_fin;
psel_rndv_act_func_t psel_rndv_recv_on_data;
psel_rndv_act_func_t psel_rndv_recv_on_cancel;


/* ---- wire (proto_rndv_wire.c) ---- */

/** The mode ops of @a mode (the RTS's mode byte) among the built-in
 *  protocols, or NULL. */
const psel_rndv_mode_ops_t *psel_rndv_mode_ops(unsigned mode);

/** The mode's name for logs ("get"), or "?" */
const char *psel_rndv_mode_name(unsigned mode);

/**
 * Parse and validate one message (every field checked; what is wrong is
 * logged). @a worker gives the ifaces an RTS may name; @a id_p gets the
 * request id a reply names (0 for RTS and CANCEL).
 *
 * @return UCS_OK, UCS_ERR_INVALID_PARAM, or UCS_ERR_UNSUPPORTED (another
 *         wire version).
 */
typedef ucs_status_t psel_rndv_parse_func_t(const psel_proto_worker_t *worker,
                                            const void *data, size_t length,
                                            psel_rndv_msg_t *msg,
                                            uint64_t *id_p);

psel_rndv_parse_func_t psel_rndv_parse_rts;
psel_rndv_parse_func_t psel_rndv_parse_rtr;
psel_rndv_parse_func_t psel_rndv_parse_ats;
psel_rndv_parse_func_t psel_rndv_parse_fin;
psel_rndv_parse_func_t psel_rndv_parse_cancel_ack;
psel_rndv_parse_func_t psel_rndv_parse_cancel;
psel_rndv_parse_func_t psel_rndv_parse_data;

/** Write an RTS header (host values in @a hdr) at @a dest. */
void psel_rndv_rts_hdr_pack(void *dest, const psel_rndv_rts_hdr_t *hdr);

/** Write an RTR header at @a dest. */
void psel_rndv_rtr_hdr_pack(void *dest, const psel_rndv_rtr_hdr_t *hdr);

/** Write a lane record at @a dest. */
void psel_rndv_lane_rec_pack(void *dest, const psel_rndv_lane_rec_t *rec);

/** Write a DATA header for (@a rreq_id, @a offset) at @a dest. */
void psel_rndv_data_hdr_pack(void *dest, uint64_t rreq_id, uint64_t offset);

/** Write an ATS, FIN or CANCEL-ACK at @a dest. */
void psel_rndv_ack_hdr_pack(void *dest, ucs_status_t status, uint64_t req_id);

/** Write a CANCEL at @a dest. */
void psel_rndv_cancel_pack(void *dest, uint64_t sender_id, uint64_t msg_id,
                           uint64_t sreq_id);

/**
 * Send an ATS, a FIN or a CANCEL-ACK (psel_rndv_ack_hdr_t) by bcopy AM.
 *
 * @return UCS_OK, UCS_ERR_NO_RESOURCE (nothing sent), or another error.
 */
ucs_status_t psel_rndv_send_ack(uct_ep_h ep, uint8_t am_id,
                                ucs_status_t status, uint64_t req_id);


/* ---- fault injection for tests ---- */

/** Points of a rendezvous where a test may act (kill a process). */
typedef enum {
    PSEL_RNDV_EVENT_RTS_SENT,    /**< Sender: the RTS went out */
    PSEL_RNDV_EVENT_DATA_POSTED, /**< Sender: a data fragment was posted */
    PSEL_RNDV_EVENT_FIN,         /**< Sender: about to send FIN */
    PSEL_RNDV_EVENT_MATCHED,     /**< Receiver: an RTS matched a receive */
    PSEL_RNDV_EVENT_GET_POSTED,  /**< Receiver: a read was posted */
    PSEL_RNDV_EVENT_RTR,         /**< Receiver: about to send the RTR */
    PSEL_RNDV_EVENT_ATS,         /**< Receiver: about to send the ATS */
    PSEL_RNDV_EVENT_LAST
} psel_rndv_event_t;

/** Called at each event when set (NULL: never; a test sets it). */
extern void (*psel_rndv_event_hook)(psel_rndv_event_t event);

#define PSEL_RNDV_EVENT(_event) \
    do { \
        if (ucs_unlikely(psel_rndv_event_hook != NULL)) { \
            psel_rndv_event_hook(_event); \
        } \
    } while (0)


/* ---- helpers shared by the modes (proto_rndv_recv.c) ---- */

/** The protocol's lanes of a send. */
static inline const struct psel_proto_lanes_priv *
psel_rndv_priv(const psel_proto_req_t *req)
{
    return (const struct psel_proto_lanes_priv*)req->priv;
}

/**
 * Register the receive buffer on the memory domain of our iface
 * @a iface_index (once per memory domain; nothing if it does not register).
 */
ucs_status_t psel_rndv_recv_register(psel_rndv_recv_t *op,
                                     unsigned iface_index, unsigned access);

/**
 * Unpack the peer's rkey of @a rkey_size bytes for @a component. An empty
 * one is the memory domain that needs none (cma from UCX 1.20 reads and
 * writes by pid): UCT_INVALID_RKEY, as UCP passes for such a domain.
 */
ucs_status_t psel_rndv_rkey_unpack(uct_component_h component,
                                   const void *packed, size_t rkey_size,
                                   uct_rkey_bundle_t *bundle);

/** Release an rkey of psel_rndv_rkey_unpack. */
void psel_rndv_rkey_release(uct_component_h component,
                            uct_rkey_bundle_t *bundle);

#endif
