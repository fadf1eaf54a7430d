/*
 * Rendezvous wire headers (proto_rndv.h): pack and parse side by side.
 * Every field of wire input is checked before use; a bad message is logged
 * with what is wrong and where, and dropped.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_rndv_int.h"

#include <endian.h>
#include <inttypes.h>
#include <string.h>
#include <ucs/debug/log_def.h>

/* Between host order and the wire's little-endian: the same operation in
 * both directions (a byte swap on a big-endian host, nothing here). */
static void psel_rndv_rts_hdr_le(void *arg)
{
    psel_rndv_rts_hdr_t *hdr = arg;

    hdr->tag       = htole64(hdr->tag);
    hdr->length    = htole64(hdr->length);
    hdr->sender_id = htole64(hdr->sender_id);
    hdr->msg_id    = htole64(hdr->msg_id);
    hdr->sreq_id   = htole64(hdr->sreq_id);
    hdr->address   = htole64(hdr->address);
}

static void psel_rndv_rtr_hdr_le(void *arg)
{
    psel_rndv_rtr_hdr_t *hdr = arg;

    hdr->sreq_id = htole64(hdr->sreq_id);
    hdr->rreq_id = htole64(hdr->rreq_id);
    hdr->address = htole64(hdr->address);
    hdr->length  = htole64(hdr->length);
}

static void psel_rndv_lane_rec_le(psel_rndv_lane_rec_t *rec)
{
    rec->weight    = htole16(rec->weight);
    rec->rkey_size = htole16(rec->rkey_size);
}

static void psel_rndv_cancel_le(void *arg)
{
    psel_rndv_cancel_hdr_t *hdr = arg;

    hdr->sender_id = htole64(hdr->sender_id);
    hdr->msg_id    = htole64(hdr->msg_id);
    hdr->sreq_id   = htole64(hdr->sreq_id);
}

static void psel_rndv_ack_le(void *arg)
{
    psel_rndv_ack_hdr_t *hdr = arg;

    hdr->req_id = htole64(hdr->req_id);
}

static void psel_rndv_data_le(void *arg)
{
    psel_rndv_data_hdr_t *hdr = arg;

    hdr->rreq_id = htole64(hdr->rreq_id);
    hdr->offset  = htole64(hdr->offset);
}

/* ---- pack ---- */

void psel_rndv_rts_hdr_pack(void *dest, const psel_rndv_rts_hdr_t *hdr)
{
    psel_rndv_rts_hdr_t wire = *hdr;

    wire.version = PSEL_RNDV_WIRE_VERSION;
    psel_rndv_rts_hdr_le(&wire);
    memcpy(dest, &wire, sizeof(wire));
}

void psel_rndv_rtr_hdr_pack(void *dest, const psel_rndv_rtr_hdr_t *hdr)
{
    psel_rndv_rtr_hdr_t wire = *hdr;

    wire.version = PSEL_RNDV_WIRE_VERSION;
    psel_rndv_rtr_hdr_le(&wire);
    memcpy(dest, &wire, sizeof(wire));
}

void psel_rndv_lane_rec_pack(void *dest, const psel_rndv_lane_rec_t *rec)
{
    psel_rndv_lane_rec_t wire = *rec;

    psel_rndv_lane_rec_le(&wire);
    memcpy(dest, &wire, sizeof(wire));
}

void psel_rndv_data_hdr_pack(void *dest, uint64_t rreq_id, uint64_t offset)
{
    psel_rndv_data_hdr_t wire;

    wire.version = PSEL_RNDV_WIRE_VERSION;
    wire.rreq_id = rreq_id;
    wire.offset  = offset;
    psel_rndv_data_le(&wire);
    memcpy(dest, &wire, sizeof(wire));
}

void psel_rndv_cancel_pack(void *dest, uint64_t sender_id, uint64_t msg_id,
                           uint64_t sreq_id)
{
    psel_rndv_cancel_hdr_t wire;

    memset(&wire, 0, sizeof(wire));
    wire.version   = PSEL_RNDV_WIRE_VERSION;
    wire.sender_id = sender_id;
    wire.msg_id    = msg_id;
    wire.sreq_id   = sreq_id;
    psel_rndv_cancel_le(&wire);
    memcpy(dest, &wire, sizeof(wire));
}

void psel_rndv_ack_hdr_pack(void *dest, ucs_status_t status, uint64_t req_id)
{
    psel_rndv_ack_hdr_t wire;

    wire.version = PSEL_RNDV_WIRE_VERSION;
    wire.status  = (int8_t)status;
    wire.req_id  = req_id;
    psel_rndv_ack_le(&wire);
    memcpy(dest, &wire, sizeof(wire));
}

static size_t psel_rndv_ack_copy(void *dest, void *arg)
{
    memcpy(dest, arg, sizeof(psel_rndv_ack_hdr_t));
    return sizeof(psel_rndv_ack_hdr_t);
}

ucs_status_t psel_rndv_send_ack(uct_ep_h ep, uint8_t am_id,
                                ucs_status_t status, uint64_t req_id)
{
    uint8_t ack[sizeof(psel_rndv_ack_hdr_t)];
    ssize_t packed;

    psel_rndv_ack_hdr_pack(ack, status, req_id);
    packed = uct_ep_am_bcopy(ep, am_id, psel_rndv_ack_copy, ack, 0);
    return (packed < 0) ? (ucs_status_t)packed : UCS_OK;
}

/* ---- parse ---- */

const psel_rndv_mode_ops_t *psel_rndv_mode_ops(unsigned mode)
{
    const psel_rndv_mode_ops_t *ops;
    unsigned i;

    for (i = 0; i < psel_num_builtin_protos; ++i) {
        ops = psel_builtin_protos[i]->rndv;
        if ((ops != NULL) && (ops->mode == mode)) {
            return ops;
        }
    }
    return NULL;
}

const char *psel_rndv_mode_name(unsigned mode)
{
    const psel_rndv_mode_ops_t *ops = psel_rndv_mode_ops(mode);

    return (ops != NULL) ? ops->name : "?";
}

static int psel_rndv_status_is_valid(int status)
{
    return (status == UCS_OK) ||
           ((status < 0) && (status > UCS_ERR_LAST) &&
            (status != UCS_ERR_NO_RESOURCE));
}

/* Copy the @a size-byte header at the start of a @a length-byte message to
 * @a hdr, if it is of our version (the first byte, checked first: another
 * version's message may have another length) and long enough (exactly
 * @a size if @a exact). */
static ucs_status_t psel_rndv_read_hdr(const char *what, const void *data,
                                       size_t length, size_t size, int exact,
                                       void *hdr, void (*le)(void *hdr))
{
    uint8_t version;

    if (length > 0) {
        version = *(const uint8_t*)data;
        if (version != PSEL_RNDV_WIRE_VERSION) {
            ucs_error("rendezvous %s: wire version %u, this build speaks %u; "
                      "dropped (run the same protosel on both peers)", what,
                      version, PSEL_RNDV_WIRE_VERSION);
            return UCS_ERR_UNSUPPORTED;
        }
    }
    if (exact ? (length != size) : (length < size)) {
        ucs_error("rendezvous %s: %zu bytes, %s %zu; dropped", what, length,
                  exact ? "not" : "shorter than its header of", size);
        return UCS_ERR_INVALID_PARAM;
    }
    memcpy(hdr, data, size);
    le(hdr);
    return UCS_OK;
}

/* Lane records after the @a hdr_size-byte header of an RTS or an RTR. */
static ucs_status_t psel_rndv_parse_lanes(const char *what, const void *data,
                                          size_t length, size_t hdr_size,
                                          unsigned num_lanes, int with_rkeys,
                                          psel_rndv_lane_in_t *lanes)
{
    const uint8_t *start = data;
    const uint8_t *p     = start + hdr_size;
    const uint8_t *end   = start + length;
    unsigned i;

    if (num_lanes > PSEL_MAX_LANES) {
        ucs_error("rendezvous %s: %u lane records, at most %u; dropped", what,
                  num_lanes, PSEL_MAX_LANES);
        return UCS_ERR_INVALID_PARAM;
    }
    for (i = 0; i < num_lanes; ++i) {
        if ((size_t)(end - p) < sizeof(lanes[i].rec)) {
            ucs_error("rendezvous %s: lane record %u at offset %zu is cut "
                      "short (%zu bytes left); dropped", what, i,
                      (size_t)(p - start), (size_t)(end - p));
            return UCS_ERR_INVALID_PARAM;
        }
        memcpy(&lanes[i].rec, p, sizeof(lanes[i].rec));
        psel_rndv_lane_rec_le(&lanes[i].rec);
        p += sizeof(lanes[i].rec);
        if (lanes[i].rec.reserved != 0) {
            ucs_error("rendezvous %s: lane record %u has reserved byte 0x%x; "
                      "dropped", what, i, lanes[i].rec.reserved);
            return UCS_ERR_INVALID_PARAM;
        }
        if (!with_rkeys && (lanes[i].rec.rkey_size != 0)) {
            ucs_error("rendezvous %s: lane record %u carries a %u-byte rkey "
                      "where none belongs; dropped", what, i,
                      lanes[i].rec.rkey_size);
            return UCS_ERR_INVALID_PARAM;
        }
        if (lanes[i].rec.rkey_size > (size_t)(end - p)) {
            ucs_error("rendezvous %s: lane record %u: its %u-byte rkey at "
                      "offset %zu overruns the message; dropped", what, i,
                      lanes[i].rec.rkey_size, (size_t)(p - start));
            return UCS_ERR_INVALID_PARAM;
        }
        lanes[i].rkey = p;
        p            += lanes[i].rec.rkey_size;
    }
    if (p != end) {
        ucs_error("rendezvous %s: %zu stray bytes after offset %zu; dropped",
                  what, (size_t)(end - p), (size_t)(p - start));
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

ucs_status_t psel_rndv_parse_rts(const psel_proto_worker_t *worker,
                                 const void *data, size_t length,
                                 psel_rndv_msg_t *msg, uint64_t *id_p)
{
    psel_rndv_rts_t *rts           = &msg->rts;
    const psel_rndv_rts_hdr_t *hdr = &rts->hdr;
    const psel_rndv_mode_ops_t *ops;
    ucs_status_t status;
    int has_lanes;
    unsigned i;

    status = psel_rndv_read_hdr("RTS", data, length, sizeof(*hdr), 0,
                                &rts->hdr, psel_rndv_rts_hdr_le);
    if (status != UCS_OK) {
        return status;
    }
    ops = psel_rndv_mode_ops(hdr->mode);
    if ((ops == NULL) || (hdr->reserved != 0)) {
        ucs_error("rendezvous RTS: unknown mode %u or reserved byte 0x%x "
                  "(sender %" PRIx64 " msg %" PRIx64 "); dropped", hdr->mode,
                  hdr->reserved, hdr->sender_id, hdr->msg_id);
        return UCS_ERR_INVALID_PARAM;
    }
    has_lanes = (ops->rts_lanes != PSEL_RNDV_RTS_NO_LANES);
    if (!has_lanes ? (hdr->num_lanes != 0) :
        ((hdr->length > 0) && (hdr->num_lanes == 0))) {
        ucs_error("rendezvous RTS: %u lane records for rndv/%s of %" PRIu64
                  " bytes (sender %" PRIx64 " msg %" PRIx64 "); dropped",
                  hdr->num_lanes, ops->name, hdr->length, hdr->sender_id,
                  hdr->msg_id);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((hdr->sreq_id == 0) || (hdr->length > SIZE_MAX / 2)) {
        ucs_error("rendezvous RTS: request id %" PRIx64 ", length %" PRIu64
                  " (sender %" PRIx64 " msg %" PRIx64 "); dropped",
                  hdr->sreq_id, hdr->length, hdr->sender_id, hdr->msg_id);
        return UCS_ERR_INVALID_PARAM;
    }
    status = psel_rndv_parse_lanes("RTS", data, length, sizeof(*hdr),
                                   hdr->num_lanes,
                                   ops->rts_lanes == PSEL_RNDV_RTS_OUR_ENTRIES,
                                   rts->lanes);
    if (status != UCS_OK) {
        return status;
    }
    for (i = 0; i < hdr->num_lanes; ++i) {
        if ((ops->rts_lanes == PSEL_RNDV_RTS_PEER_ENTRIES) &&
            (rts->lanes[i].rec.entry >= worker->num_ifaces)) {
            ucs_error("rendezvous RTS: lane record %u names iface %u, this "
                      "worker has %u; dropped", i, rts->lanes[i].rec.entry,
                      worker->num_ifaces);
            return UCS_ERR_INVALID_PARAM;
        }
        if (rts->lanes[i].rec.weight == 0) {
            ucs_error("rendezvous RTS: lane record %u has weight 0; dropped",
                      i);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    return UCS_OK;
}

ucs_status_t psel_rndv_parse_rtr(const psel_proto_worker_t *worker,
                                 const void *data, size_t length,
                                 psel_rndv_msg_t *msg, uint64_t *id_p)
{
    psel_rndv_rtr_t *rtr           = &msg->rtr;
    const psel_rndv_rtr_hdr_t *hdr = &rtr->hdr;
    const psel_rndv_mode_ops_t *ops;
    ucs_status_t status;

    status = psel_rndv_read_hdr("RTR", data, length, sizeof(*hdr), 0,
                                &rtr->hdr, psel_rndv_rtr_hdr_le);
    if (status != UCS_OK) {
        return status;
    }
    *id_p = hdr->sreq_id;
    ops = psel_rndv_mode_ops(hdr->mode);
    if ((ops == NULL) || !ops->rtr || (hdr->reserved != 0) ||
        (!ops->rtr_rkeys && (hdr->num_lanes != 0)) || (hdr->rreq_id == 0)) {
        ucs_error("rendezvous RTR: mode %u with %u lane records, reserved "
                  "0x%x, receiver request %" PRIx64 " (request %" PRIx64
                  "); dropped", hdr->mode, hdr->num_lanes, hdr->reserved,
                  hdr->rreq_id, hdr->sreq_id);
        return UCS_ERR_INVALID_PARAM;
    }
    return psel_rndv_parse_lanes("RTR", data, length, sizeof(*hdr),
                                 hdr->num_lanes, ops->rtr_rkeys, rtr->lanes);
}

/* ATS, FIN and CANCEL-ACK: one header. */
static ucs_status_t psel_rndv_parse_ack(const char *what, const void *data,
                                        size_t length, psel_rndv_msg_t *msg,
                                        uint64_t *id_p)
{
    psel_rndv_ack_hdr_t *ack = &msg->ack;
    ucs_status_t status;

    status = psel_rndv_read_hdr(what, data, length, sizeof(*ack), 1, ack,
                                psel_rndv_ack_le);
    if (status != UCS_OK) {
        return status;
    }
    *id_p = ack->req_id;
    if (!psel_rndv_status_is_valid(ack->status)) {
        ucs_error("rendezvous %s: status %d is not a final status (request "
                  "%" PRIx64 "); dropped", what, ack->status, ack->req_id);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

ucs_status_t psel_rndv_parse_ats(const psel_proto_worker_t *worker,
                                 const void *data, size_t length,
                                 psel_rndv_msg_t *msg, uint64_t *id_p)
{
    return psel_rndv_parse_ack("ATS", data, length, msg, id_p);
}

ucs_status_t psel_rndv_parse_fin(const psel_proto_worker_t *worker,
                                 const void *data, size_t length,
                                 psel_rndv_msg_t *msg, uint64_t *id_p)
{
    return psel_rndv_parse_ack("FIN", data, length, msg, id_p);
}

/* An answer to a CANCEL: withdrawn, busy, or unknown. */
ucs_status_t psel_rndv_parse_cancel_ack(const psel_proto_worker_t *worker,
                                        const void *data, size_t length,
                                        psel_rndv_msg_t *msg, uint64_t *id_p)
{
    const psel_rndv_ack_hdr_t *ack = &msg->ack;
    ucs_status_t status;

    status = psel_rndv_parse_ack("CANCEL-ACK", data, length, msg, id_p);
    if (status != UCS_OK) {
        return status;
    }
    if ((ack->status != UCS_OK) && (ack->status != UCS_ERR_BUSY) &&
        (ack->status != UCS_ERR_NO_ELEM)) {
        ucs_error("rendezvous CANCEL-ACK: status %d is not an answer to a "
                  "cancel (request %" PRIx64 "); dropped", ack->status,
                  ack->req_id);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

ucs_status_t psel_rndv_parse_cancel(const psel_proto_worker_t *worker,
                                    const void *data, size_t length,
                                    psel_rndv_msg_t *msg, uint64_t *id_p)
{
    psel_rndv_cancel_hdr_t *hdr = &msg->cancel;
    ucs_status_t status;

    status = psel_rndv_read_hdr("CANCEL", data, length, sizeof(*hdr), 1,
                                hdr, psel_rndv_cancel_le);
    if (status != UCS_OK) {
        return status;
    }
    if ((hdr->reserved != 0) || (hdr->sreq_id == 0)) {
        ucs_error("rendezvous CANCEL: reserved byte 0x%x, request id %" PRIx64
                  " (sender %" PRIx64 " msg %" PRIx64 "); dropped",
                  hdr->reserved, hdr->sreq_id, hdr->sender_id, hdr->msg_id);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

ucs_status_t psel_rndv_parse_data(const psel_proto_worker_t *worker,
                                  const void *data, size_t length,
                                  psel_rndv_msg_t *msg, uint64_t *id_p)
{
    psel_rndv_data_hdr_t *hdr = &msg->data.hdr;
    ucs_status_t status;

    status = psel_rndv_read_hdr("DATA", data, length, sizeof(*hdr), 0, hdr,
                                psel_rndv_data_le);
    if (status != UCS_OK) {
        return status;
    }
    if (length == sizeof(*hdr)) {
        ucs_error("rendezvous DATA: no payload after its %zu-byte header; "
                  "dropped", sizeof(*hdr));
        return UCS_ERR_INVALID_PARAM;
    }
    msg->data.payload = UCS_PTR_BYTE_OFFSET(data, sizeof(*hdr));
    msg->data.length  = length - sizeof(*hdr);
    *id_p             = hdr->rreq_id;
    return UCS_OK;
}
