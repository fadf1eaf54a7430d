/**
 * @file wireup.h
 * The wireup exchange (internal): when an endpoint is created, it sends the
 * peer a REQUEST over its bootstrap lane (a lane that connects to an iface
 * and has active messages). The REQUEST carries the sender's worker uuid,
 * endpoint id, packed worker address, and one record per lane that connects
 * endpoint to endpoint (with the endpoint address of the sender's side).
 * The peer finds or creates its endpoint back to the sender, connects the
 * matching lanes to those endpoint addresses and answers with a REPLY that
 * carries its own endpoint addresses; the sender then connects its side.
 *
 * Both sides end with the same pairs connected; each side also learns the
 * other's endpoint id (the destination id of messages that need a reply).
 * Sends wait in the pending queue until every lane of the endpoint is
 * connected.
 */
#ifndef PSEL_CORE_WIREUP_H_
#define PSEL_CORE_WIREUP_H_

#include <ucs/type/status.h>
#include <ucs/sys/compiler_def.h>
#include <stddef.h>
#include <stdint.h>

#define PSEL_WIREUP_VERSION 2u  /**< Wire format version: 2 is 1 in
                                     little-endian (1 was host order) */

/** Wireup message types. */
typedef enum {
    PSEL_WIREUP_REQUEST = 1,  /**< Here are my endpoint addresses */
    PSEL_WIREUP_REPLY   = 2,  /**< Connected; here are mine */
    PSEL_WIREUP_CLOSE   = 3   /**< My endpoint (sender_ep_id) is gone */
} psel_wireup_type_t;

/** CLOSE flag: the endpoint was force-closed, so its transport connections
 *  may still hold data towards the receiver (psel_wireup_on_close()). */
#define PSEL_WIREUP_FLAG_FORCED 0x1u

/** Header of a wireup message; the address and lane records follow.
 *  Packed, multi-byte fields little-endian (lane_select/wire.h). */
typedef struct UCS_S_PACKED psel_wireup_hdr {
    uint8_t  version;        /**< PSEL_WIREUP_VERSION */
    uint8_t  type;           /**< psel_wireup_type_t */
    uint8_t  num_lanes;      /**< Lane records after the address */
    uint8_t  flags;          /**< CLOSE: PSEL_WIREUP_FLAG_FORCED; else 0 */
    uint32_t address_length; /**< Sender's packed worker address (REQUEST;
                                  0 in a REPLY or CLOSE) */
    uint64_t sender_uuid;    /**< Sender's worker */
    uint64_t sender_ep_id;   /**< Sender's endpoint id */
    uint64_t dest_ep_id;     /**< REPLY: the requester's endpoint id;
                                  CLOSE: the receiver's endpoint id if the
                                  sender knows it; else 0 */
} psel_wireup_hdr_t;

/** One lane connected endpoint to endpoint; its ep address follows. */
typedef struct UCS_S_PACKED psel_wireup_lane {
    uint8_t sender_iface;    /**< Sender's iface (= address entry) index */
    uint8_t dest_iface;      /**< Receiver's iface (= address entry) index */
    uint8_t path;            /**< Path on the device */
    uint8_t ep_addr_length;  /**< Bytes of the sender's ep address */
} psel_wireup_lane_t;

typedef struct psel_worker *psel_worker_h;
typedef struct psel_ep     *psel_ep_h;

/** Start the exchange for a new endpoint: send its REQUEST. */
ucs_status_t psel_wireup_start(psel_ep_h ep);

/**
 * Validate a wireup message from the wire and process it; a bad message is
 * logged with what is wrong and dropped, and nothing else changes.
 * Called from progress, never from inside a UCT callback.
 */
ucs_status_t psel_wireup_process(psel_worker_h worker, const void *data,
                                 size_t length);

/** Retry the sends that found the bootstrap lane busy, and the CLOSEs
 *  of endpoints already destroyed (their farewell UCT endpoints go once
 *  the message is out, or after 5 s). */
void psel_wireup_progress(psel_worker_h worker);

/** Destroy the farewell UCT endpoints: those done with (@a wait), or all
 *  (worker destroy). */
void psel_wireup_farewells_cleanup(psel_worker_h worker, int wait);

/**
 * Send a REQUEST without lane records over the bootstrap lane, for an
 * endpoint whose lanes all connect to ifaces (it sent none at create):
 * the peer learns this endpoint's id and finds or creates its endpoint
 * back, for messages that need a reply (rendezvous). Messages sent on the
 * bootstrap lane after it arrive after it.
 */
ucs_status_t psel_wireup_announce(psel_ep_h ep);

/**
 * Tell the peer, best effort, that @a ep goes away (psel_ep_destroy() of an
 * endpoint the peer knows by its id): the peer fails what it runs with this
 * endpoint and destroys an endpoint wireup made for it, or forgets our id
 * on an endpoint of its user's. Nothing is sent if the peer does not know
 * our id; over a busy bootstrap lane the CLOSE goes over a UCT endpoint of
 * its own (a farewell, at most 5 s). After a forced close it carries
 * PSEL_WIREUP_FLAG_FORCED.
 */
void psel_wireup_close(psel_ep_h ep);

#endif
