/**
 * @file proto_rndv.h
 * Rendezvous: the wire headers, the state a rendezvous send shares with the
 * data path, and the one function that splits a transfer over lanes (used
 * by the sender's rndv/put and rndv/am and by the receiver's rndv/get).
 *
 * @section rndv_wire Wire format, version 1
 *
 * Host byte order (both peers run on hosts of the same kind), packed. Every
 * header starts with its version byte; a receiver drops (with an error log)
 * a header of another version, a short or overlong message, an unknown
 * mode, a status that is not a ucs_status_t, a lane record that overruns
 * the message or names an iface that does not exist, and a request id it
 * does not know.
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
 *       put completed and was flushed.
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
 */
#ifndef PSEL_UCP_PROTO_SEL_PROTO_RNDV_H_
#define PSEL_UCP_PROTO_SEL_PROTO_RNDV_H_

#include "proto_req.h"

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

#define PSEL_RNDV_WIRE_VERSION  1u  /**< Version byte of every header */

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

/** Which rendezvous flow a message takes. */
typedef enum {
    PSEL_RNDV_MODE_AM  = 1,  /**< RTS, RTR, data by AM */
    PSEL_RNDV_MODE_GET = 2,  /**< RTS with rkeys, get by the receiver, ATS */
    PSEL_RNDV_MODE_PUT = 3,  /**< RTS, RTR with rkeys, put, FIN */
    PSEL_RNDV_MODE_LAST
} psel_rndv_mode_t;


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
    uint16_t weight;     /**< rndv/get: byte share, relative; else 0 */
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

/** ATS (names the sender's request) and FIN (names the receiver's). */
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


/** One lane given to psel_proto_xfer_init(). */
typedef struct psel_proto_split_lane {
    uint8_t lane;        /**< Lane index of the endpoint */
    double  share;       /**< Relative byte share (> 0) */
    size_t  max_frag;    /**< Largest operation the lane takes (>= 1) */
    size_t  align;       /**< Chunk and fragment alignment (>= 1) */
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
    size_t   offset[PSEL_MAX_LANES];    /**< Next byte to post */
    size_t   end[PSEL_MAX_LANES];       /**< End of the lane's chunk */
} psel_proto_xfer_t;

/**
 * Split @a length bytes over @a lanes (best first) by their shares.
 *  - A lane takes part only if its chunk is at least @a min_chunk; the
 *    message uses at most length / min_chunk lanes (at least one); the
 *    lanes that drop out are the last ones.
 *  - Chunk boundaries are multiples of the lane's alignment (relative to
 *    the message start); the last lane takes the remainder.
 *  - Fragments are max_frag rounded down to the alignment.
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
 * (max_zcopy of put/get, or the AM size less psel_rndv_data_hdr_t) and the
 * alignment (the larger of opt_zcopy_align and align_mtu, at least 1).
 */
void psel_proto_xfer_lane(const uct_iface_attr_t *attr,
                          psel_proto_xfer_op_t op, uint8_t lane, double share,
                          psel_proto_split_lane_t *out);

/**
 * Send an ATS, a FIN or a CANCEL-ACK (psel_rndv_ack_hdr_t) by bcopy AM.
 *
 * @return UCS_OK, UCS_ERR_NO_RESOURCE (nothing sent), or another error.
 */
ucs_status_t psel_rndv_send_ack(uct_ep_h ep, uint8_t am_id,
                                ucs_status_t status, uint64_t req_id);


/** Stages of a rendezvous send. */
typedef enum {
    PSEL_RNDV_STAGE_START = 0, /**< Register, get an id */
    PSEL_RNDV_STAGE_RTS,       /**< Send the RTS */
    PSEL_RNDV_STAGE_WAIT,      /**< Wait for RTR or ATS */
    PSEL_RNDV_STAGE_DATA,      /**< RTR arrived: post the data */
    PSEL_RNDV_STAGE_DRAIN,     /**< Wait for the posted data to complete */
    PSEL_RNDV_STAGE_FLUSH,     /**< rndv/put: flush each data lane */
    PSEL_RNDV_STAGE_FIN,       /**< rndv/put: send FIN */
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
 * Rendezvous state of a send, allocated by the protocol at its first
 * progress call and freed when it finishes. The data path's reply handlers
 * fill the "from the receiver" fields, move @a stage from WAIT to DATA
 * (RTR) or DONE (ATS) and call resume(); to abort (peer failure, cancel),
 * it sets @a status and stage DONE and calls resume(): the protocol then
 * waits for operations in flight, releases registrations and completes.
 * To cancel, the data path sets @a cancel to WANTED in stage WAIT and
 * calls resume(); the protocol sends CANCEL on the lane of the RTS and
 * completes no earlier than the CANCEL-ACK, which the data path handles
 * like the other replies (UCS_OK: status UCS_ERR_CANCELED, stage DONE).
 */
typedef struct psel_proto_rndv {
    psel_rndv_mode_t  mode;            /**< The protocol's flow */
    psel_rndv_stage_t stage;           /**< Where it is */
    ucs_status_t      status;          /**< Final status */
    psel_rndv_cancel_t cancel;         /**< Cancel exchange */
    /* from the receiver (RTR) */
    uint64_t          remote_req_id;   /**< rreq_id */
    uint64_t          remote_address;  /**< rndv/put: where to write */
    uint32_t          rkey_map;        /**< Lanes with an rkey in @a rkeys */
    uct_rkey_bundle_t rkeys[PSEL_MAX_LANES]; /**< rndv/put, per lane */
    /* the protocol's */
    uct_mem_h         memh[PSEL_MAX_LANES];  /**< Registration per lane
                                                  (lanes on one memory
                                                  domain share it) */
    uint32_t          memh_owner;      /**< Lanes whose memh to deregister */
    unsigned          flush_next;      /**< rndv/put: next lane to flush */
    psel_proto_xfer_t xfer;            /**< Data split over the lanes */
    size_t            rts_length;      /**< Bytes of @a rts */
    uint8_t          *rts;             /**< The RTS, packed at start (it
                                            follows this struct) */
} psel_proto_rndv_t;

#endif
