/**
 * @file proto_egr.h
 * Eager wire headers: pack and parse side by side (the receiver's parse
 * runs in core's AM handlers, which hand the payload to tag matching).
 * Internal: not installed.
 *
 * @section egr_wire Wire format, version 1
 *
 * Little-endian (lane_select/wire.h), no padding.
 *
 * @code
 *  EAGER_SHORT (AM 1): tag (8), payload: a whole message, by am_short or,
 *        when it fits one fragment, by am_bcopy or am_zcopy (as UCP's
 *        eager-only messages). No version byte: the format of the hottest
 *        message is tied to the worker address version
 *        (lane_select/address.h), so a change to it bumps that version
 *        and peers of different versions never connect.
 *  EAGER_FIRST (AM 2), 32 bytes, then the payload (a message of more
 *        than one fragment):
 *        0  1  version = PSEL_EAGER_WIRE_VERSION
 *        1  7  total_length (56 bits)
 *        8  8  tag
 *       16  8  sender_id (the sending endpoint's id)
 *       24  8  msg_id (unique per sender)
 *  EAGER_MIDDLE (AM 3), 24 bytes, then the payload:
 *        0  1  version
 *        1  7  offset of the payload in the message (56 bits)
 *        8  8  sender_id
 *       16  8  msg_id
 * @endcode
 *
 * The version shares a 64-bit word with a 56-bit size, so the headers
 * keep UCX's sizes (32 and 24 bytes) and the fragment sizes stay those of
 * the tables. A receiver drops a header that is short or of another
 * version, with an error naming both versions.
 */
#ifndef PSEL_UCP_PROTO_SEL_PROTO_EGR_H_
#define PSEL_UCP_PROTO_SEL_PROTO_EGR_H_

#include <lane_select/wire.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

#define PSEL_EAGER_WIRE_VERSION  1u   /**< Version byte of FIRST and MIDDLE */
#define PSEL_EAGER_SHORT_HDR     8u   /**< Tag */
#define PSEL_EAGER_FIRST_HDR     32u  /**< First fragment's header */
#define PSEL_EAGER_MIDDLE_HDR    24u  /**< Later fragment's header */
#define PSEL_EAGER_MAX_LENGTH    ((UINT64_C(1) << 56) - 1) /**< Largest
                                           eager message the header holds */

/** A parsed first-fragment header. */
typedef struct psel_eager_first {
    uint64_t    tag;          /**< Message tag (0 ids: a short message) */
    uint64_t    sender_id;    /**< Sending endpoint's id */
    uint64_t    msg_id;       /**< Message id */
    uint64_t    total_length; /**< Whole message size */
    const void *payload;      /**< After the header */
    size_t      length;       /**< Payload bytes */
} psel_eager_first_t;

/** A parsed later-fragment header. */
typedef struct psel_eager_middle {
    uint64_t    sender_id;    /**< Sending endpoint's id */
    uint64_t    msg_id;       /**< Message id */
    uint64_t    offset;       /**< Where the payload goes */
    const void *payload;      /**< After the header */
    size_t      length;       /**< Payload bytes */
} psel_eager_middle_t;


/** Log why an eager header was dropped (proto_egr.c): @a version (its
 *  first byte; PSEL_EAGER_WIRE_VERSION for a message without one) is not
 *  ours, else it is short (@a length below @a hdr_length). */
void psel_eager_hdr_error(const char *what, size_t length, size_t hdr_length,
                          unsigned version);

static UCS_F_ALWAYS_INLINE uint64_t psel_eager_word(uint64_t value)
{
    return (value << 8) | PSEL_EAGER_WIRE_VERSION;
}

/** Pack a first-fragment header (32 bytes) at @a dest. */
static UCS_F_ALWAYS_INLINE void
psel_eager_first_pack(void *dest, uint64_t tag, uint64_t sender_id,
                      uint64_t msg_id, uint64_t total_length)
{
    psel_wire_put64(dest, psel_eager_word(total_length));
    psel_wire_put64(UCS_PTR_BYTE_OFFSET(dest, 8), tag);
    psel_wire_put64(UCS_PTR_BYTE_OFFSET(dest, 16), sender_id);
    psel_wire_put64(UCS_PTR_BYTE_OFFSET(dest, 24), msg_id);
}

/** Pack a later-fragment header (24 bytes) at @a dest. */
static UCS_F_ALWAYS_INLINE void
psel_eager_middle_pack(void *dest, uint64_t sender_id, uint64_t msg_id,
                       uint64_t offset)
{
    psel_wire_put64(dest, psel_eager_word(offset));
    psel_wire_put64(UCS_PTR_BYTE_OFFSET(dest, 8), sender_id);
    psel_wire_put64(UCS_PTR_BYTE_OFFSET(dest, 16), msg_id);
}

/**
 * Parse a first fragment of @a length bytes.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM (short) or UCS_ERR_UNSUPPORTED
 *         (another version), logged.
 */
static UCS_F_ALWAYS_INLINE ucs_status_t
psel_eager_first_parse(const void *data, size_t length, psel_eager_first_t *hdr)
{
    uint64_t word;

    /* the version byte first: another version may have another length */
    if (ucs_unlikely((length > 0) &&
                     (*(const uint8_t*)data != PSEL_EAGER_WIRE_VERSION))) {
        psel_eager_hdr_error("first fragment", length, PSEL_EAGER_FIRST_HDR,
                             *(const uint8_t*)data);
        return UCS_ERR_UNSUPPORTED;
    }
    if (ucs_unlikely(length < PSEL_EAGER_FIRST_HDR)) {
        psel_eager_hdr_error("first fragment", length, PSEL_EAGER_FIRST_HDR,
                             PSEL_EAGER_WIRE_VERSION);
        return UCS_ERR_INVALID_PARAM;
    }
    word = psel_wire_get64(data);
    hdr->total_length = word >> 8;
    hdr->tag          = psel_wire_get64(UCS_PTR_BYTE_OFFSET(data, 8));
    hdr->sender_id    = psel_wire_get64(UCS_PTR_BYTE_OFFSET(data, 16));
    hdr->msg_id       = psel_wire_get64(UCS_PTR_BYTE_OFFSET(data, 24));
    hdr->payload      = UCS_PTR_BYTE_OFFSET(data, PSEL_EAGER_FIRST_HDR);
    hdr->length       = length - PSEL_EAGER_FIRST_HDR;
    return UCS_OK;
}

/** Parse a later fragment of @a length bytes (as the first). */
static UCS_F_ALWAYS_INLINE ucs_status_t
psel_eager_middle_parse(const void *data, size_t length,
                        psel_eager_middle_t *hdr)
{
    uint64_t word;

    if (ucs_unlikely((length > 0) &&
                     (*(const uint8_t*)data != PSEL_EAGER_WIRE_VERSION))) {
        psel_eager_hdr_error("fragment", length, PSEL_EAGER_MIDDLE_HDR,
                             *(const uint8_t*)data);
        return UCS_ERR_UNSUPPORTED;
    }
    if (ucs_unlikely(length < PSEL_EAGER_MIDDLE_HDR)) {
        psel_eager_hdr_error("fragment", length, PSEL_EAGER_MIDDLE_HDR,
                             PSEL_EAGER_WIRE_VERSION);
        return UCS_ERR_INVALID_PARAM;
    }
    word = psel_wire_get64(data);
    hdr->offset    = word >> 8;
    hdr->sender_id = psel_wire_get64(UCS_PTR_BYTE_OFFSET(data, 8));
    hdr->msg_id    = psel_wire_get64(UCS_PTR_BYTE_OFFSET(data, 16));
    hdr->payload   = UCS_PTR_BYTE_OFFSET(data, PSEL_EAGER_MIDDLE_HDR);
    hdr->length    = length - PSEL_EAGER_MIDDLE_HDR;
    return UCS_OK;
}

/** Parse an eager short message as a whole first fragment (sender and
 *  message ids 0: it never reaches the in-flight hash).
 *  @return UCS_OK or UCS_ERR_INVALID_PARAM (short). */
static UCS_F_ALWAYS_INLINE ucs_status_t
psel_eager_short_parse(const void *data, size_t length, psel_eager_first_t *hdr)
{
    if (ucs_unlikely(length < PSEL_EAGER_SHORT_HDR)) {
        psel_eager_hdr_error("short message", length, PSEL_EAGER_SHORT_HDR,
                             PSEL_EAGER_WIRE_VERSION);
        return UCS_ERR_INVALID_PARAM;
    }
    hdr->tag          = psel_wire_get64(data);
    hdr->sender_id    = 0;
    hdr->msg_id       = 0;
    hdr->payload      = UCS_PTR_BYTE_OFFSET(data, PSEL_EAGER_SHORT_HDR);
    hdr->length       = length - PSEL_EAGER_SHORT_HDR;
    hdr->total_length = hdr->length;
    return UCS_OK;
}

#endif
