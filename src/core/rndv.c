/*
 * Rendezvous in the data path (see rndv.h and ucp_proto_sel/proto_rndv.h):
 * ids of rendezvous requests, the reply handlers of the sender, and the
 * receiver's side of rndv/am, rndv/get and rndv/put.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "core_int.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if PSEL_RNDV_MAX_MDS != PSEL_WORKER_MAX_MDS
#error "PSEL_RNDV_MAX_MDS must equal PSEL_WORKER_MAX_MDS"
#endif

/* How long a receive waits for the wireup that gives it an endpoint back to
 * its sender (normally already there: it precedes the RTS on its lane) */
#define PSEL_RNDV_EP_WAIT_SEC 2.0

/** Stages of a rendezvous receive. */
typedef enum {
    PSEL_RNDV_RECV_START,    /* find the reply endpoint, prepare */
    PSEL_RNDV_RECV_GET,      /* rndv/get: post the reads */
    PSEL_RNDV_RECV_GET_WAIT, /* rndv/get: wait for the reads */
    PSEL_RNDV_RECV_RTR,      /* send the RTR */
    PSEL_RNDV_RECV_WAIT,     /* wait for FIN (put) or the data (am) */
    PSEL_RNDV_RECV_ATS       /* send the ATS, then complete */
} psel_rndv_recv_stage_t;

/** A validated lane record. */
typedef struct {
    psel_rndv_lane_rec_t rec;
    const uint8_t       *rkey;
} psel_rndv_lane_in_t;

/** A validated RTS. */
typedef struct {
    psel_rndv_rts_hdr_t hdr;
    psel_rndv_lane_in_t lanes[PSEL_MAX_LANES];
} psel_rndv_rts_t;

/** A validated RTR. */
typedef struct {
    psel_rndv_rtr_hdr_t hdr;
    psel_rndv_lane_in_t lanes[PSEL_MAX_LANES];
} psel_rndv_rtr_t;

/** A rendezvous receive: a matched receive and its transfer. A reply to a
 * CANCEL is one too, without a receive (@a recv NULL): it only finds the
 * endpoint back (START) and sends its CANCEL-ACK (ATS stage). */
typedef struct psel_rndv_recv {
    ucs_list_link_t        list;      /* worker->rndv.work, while queued */
    int                    queued;
    psel_worker_h          worker;
    psel_tm_recv_t        *recv;
    uint64_t               id;        /* rreq_id */
    psel_ep_h              ep;        /* replies go there */
    double                 ep_deadline; /* give up waiting for it [s] */
    psel_rndv_recv_stage_t stage;
    ucs_status_t           status;    /* of the receive; the sender's ATS
                                         says UCS_OK unless it failed */
    ucs_status_t           ats_status;
    uint8_t                ack_am_id; /* ATS, or CANCEL-ACK */
    size_t                 landed;    /* rndv/am: bytes arrived */
    uint32_t               rkey_map;  /* rndv/get: lanes with an rkey */
    uct_rkey_bundle_t      rkeys[PSEL_MAX_LANES];
    uint32_t               md_map;    /* memory domains registered on */
    uct_mem_h              memh[PSEL_RNDV_MAX_MDS];
    uct_completion_t       comp;      /* rndv/get: reads in flight */
    psel_proto_xfer_t      xfer;      /* rndv/get */
    void                  *rtr;       /* rndv/put, rndv/am: packed RTR */
    size_t                 rtr_length;
    psel_rndv_rts_t        rts;       /* parsed; rkeys point into rts_data */
    size_t                 rts_length;
    uint8_t                rts_data[];
} psel_rndv_recv_t;


static const char *psel_rndv_mode_names[] = {
    [PSEL_RNDV_MODE_AM]  = "am",
    [PSEL_RNDV_MODE_GET] = "get",
    [PSEL_RNDV_MODE_PUT] = "put"
};

static double psel_rndv_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- ids ---- */

static ucs_status_t psel_rndv_map_add(khash_t(psel_rndv_reqs) *map,
                                      uint64_t id, void *value)
{
    khiter_t iter;
    int ret;

    iter = kh_put(psel_rndv_reqs, map, id, &ret);
    if (ret < 0) {
        return UCS_ERR_NO_MEMORY;
    }
    kh_val(map, iter) = value;
    return UCS_OK;
}

static void *psel_rndv_map_find(khash_t(psel_rndv_reqs) *map, uint64_t id)
{
    khiter_t iter = kh_get(psel_rndv_reqs, map, id);

    return (iter == kh_end(map)) ? NULL : kh_val(map, iter);
}

static void psel_rndv_map_del(khash_t(psel_rndv_reqs) *map, uint64_t id)
{
    khiter_t iter = kh_get(psel_rndv_reqs, map, id);

    if (iter != kh_end(map)) {
        kh_del(psel_rndv_reqs, map, iter);
    }
}

ucs_status_t psel_rndv_track_send(psel_proto_req_t *proto)
{
    psel_request_t *req  = ucs_container_of(proto, psel_request_t, proto);
    psel_ep_h ep         = req->ep;
    psel_worker_h worker = ep->worker;
    uint64_t id          = ++worker->rndv.next_id;
    ucs_status_t status;

    /* the receiver answers on its endpoint to this one: make sure it knows
     * our id (an endpoint with only iface lanes sent no wireup REQUEST;
     * one that heard from the peer, or has ep-to-ep lanes, did) */
    if (!ep->rndv_announced && (ep->remote_id == 0) &&
        (ep->p2p_lanes == 0)) {
        status = psel_wireup_announce(ep);
        if (status != UCS_OK) {
            return status;
        }
        ep->rndv_announced = 1;
    }

    status = psel_rndv_map_add(&worker->rndv.sends, id, req);
    if (status == UCS_OK) {
        proto->req_id = id;
    }
    return status;
}

void psel_rndv_untrack_send(psel_worker_h worker, uint64_t id)
{
    psel_rndv_map_del(&worker->rndv.sends, id);
}

/* ---- lanes and memory domains ---- */

static const psel_rndv_md_t *psel_rndv_md(psel_worker_h worker,
                                          unsigned iface_index)
{
    const psel_resource_t *rsc = &worker->local.resources[iface_index];
    unsigned md_index          = worker->ifaces[iface_index].md_index;
    psel_rndv_md_t *md         = &worker->rndv.mds[md_index];
    uct_component_attr_t attr;
    unsigned i;

    if (md->valid) {
        return md;
    }
    md->rkey_size = rsc->rkey_size;
    md->mem_reg   = !!(rsc->md_flags & UCT_MD_FLAG_REG);
    for (i = 0; i < worker->num_components; ++i) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if ((uct_component_query(worker->components[i], &attr) == UCS_OK) &&
            !strcmp(attr.name, rsc->component)) {
            md->component = worker->components[i];
        }
    }
    md->valid = 1;
    return md;
}

const psel_proto_lane_info_t *psel_rndv_ep_lane_info(psel_ep_h ep)
{
    const psel_ep_lanes_t *lanes = &ep->config.lanes;
    psel_proto_lane_info_t *info;
    const psel_rndv_md_t *md;
    unsigned i, local;

    if (ep->lane_info_ready) {
        return ep->lane_info;
    }
    for (i = 0; i < lanes->num_lanes; ++i) {
        local              = lanes->info[i].local;
        md                 = psel_rndv_md(ep->worker, local);
        info               = &ep->lane_info[i];
        info->iface_attr   = &ep->worker->ifaces[local].attr;
        info->component    = md->component;
        info->rkey_size    = md->rkey_size;
        info->mem_reg      = md->mem_reg;
        info->local_entry  = local;
        info->remote_entry = lanes->info[i].remote;
    }
    ep->lane_info_ready = 1;
    return ep->lane_info;
}

/* The lane our control messages go on: the am lane. */
static unsigned psel_rndv_ctrl_lane(psel_ep_h ep)
{
    const psel_ep_lanes_t *lanes = &ep->config.lanes;
    unsigned i;

    for (i = 0; i < lanes->num_lanes; ++i) {
        if ((lanes->info[i].roles & UCS_BIT(PSEL_LANE_ROLE_AM)) &&
            (lanes->lanes[i].caps & PSEL_LANE_CAP_AM_BCOPY)) {
            return i;
        }
    }
    for (i = 0; i < lanes->num_lanes; ++i) {
        if (lanes->lanes[i].caps & PSEL_LANE_CAP_AM_BCOPY) {
            return i;
        }
    }
    return 0;
}

/* Our endpoint to the sender of a message: the one whose peer endpoint
 * (learnt by wireup) is @a sender_id. */
static psel_ep_h psel_rndv_reply_ep(psel_worker_h worker, uint64_t sender_id)
{
    psel_ep_h ep;

    ucs_list_for_each(ep, &worker->eps, list) {
        if ((ep->remote_id == sender_id) && psel_ep_is_ready(ep)) {
            return ep;
        }
    }
    return NULL;
}

/* ---- parsing: every field of wire input is checked ---- */

static int psel_rndv_status_is_valid(int status)
{
    return (status == UCS_OK) ||
           ((status < 0) && (status > UCS_ERR_LAST) &&
            (status != UCS_ERR_NO_RESOURCE));
}

static ucs_status_t psel_rndv_check_version(const char *what, uint8_t version)
{
    if (version != PSEL_RNDV_WIRE_VERSION) {
        ucs_error("rendezvous %s: version %u, this build speaks %u; dropped "
                  "(run the same protosel on both peers)", what, version,
                  PSEL_RNDV_WIRE_VERSION);
        return UCS_ERR_UNSUPPORTED;
    }
    return UCS_OK;
}

/* Lane records after a header, for an RTS or an RTR. */
static ucs_status_t psel_rndv_parse_lanes(const char *what, const uint8_t *p,
                                          const uint8_t *end,
                                          size_t hdr_size, unsigned num_lanes,
                                          int with_rkeys,
                                          psel_rndv_lane_in_t *lanes)
{
    const uint8_t *start = p - hdr_size;
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

static ucs_status_t psel_rndv_parse_rts(psel_worker_h worker,
                                        const void *data, size_t length,
                                        psel_rndv_rts_t *rts)
{
    const psel_rndv_rts_hdr_t *hdr = &rts->hdr;
    ucs_status_t status;
    unsigned i;

    if (length < sizeof(rts->hdr)) {
        ucs_error("rendezvous RTS: %zu bytes, shorter than its %zu-byte "
                  "header; dropped", length, sizeof(rts->hdr));
        return UCS_ERR_INVALID_PARAM;
    }
    memcpy(&rts->hdr, data, sizeof(rts->hdr));
    status = psel_rndv_check_version("RTS", hdr->version);
    if (status != UCS_OK) {
        return status;
    }
    if ((hdr->mode < PSEL_RNDV_MODE_AM) || (hdr->mode >= PSEL_RNDV_MODE_LAST) ||
        (hdr->reserved != 0)) {
        ucs_error("rendezvous RTS: unknown mode %u or reserved byte 0x%x "
                  "(sender %" PRIx64 " msg %" PRIx64 "); dropped", hdr->mode,
                  hdr->reserved, hdr->sender_id, hdr->msg_id);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((hdr->mode == PSEL_RNDV_MODE_AM) ? (hdr->num_lanes != 0) :
        ((hdr->length > 0) && (hdr->num_lanes == 0))) {
        ucs_error("rendezvous RTS: %u lane records for rndv/%s of %" PRIu64
                  " bytes (sender %" PRIx64 " msg %" PRIx64 "); dropped",
                  hdr->num_lanes, psel_rndv_mode_names[hdr->mode],
                  hdr->length, hdr->sender_id, hdr->msg_id);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((hdr->sreq_id == 0) || (hdr->length > SIZE_MAX / 2)) {
        ucs_error("rendezvous RTS: request id %" PRIx64 ", length %" PRIu64
                  " (sender %" PRIx64 " msg %" PRIx64 "); dropped",
                  hdr->sreq_id, hdr->length, hdr->sender_id, hdr->msg_id);
        return UCS_ERR_INVALID_PARAM;
    }
    status = psel_rndv_parse_lanes("RTS",
                                   UCS_PTR_BYTE_OFFSET(data, sizeof(*hdr)),
                                   UCS_PTR_BYTE_OFFSET(data, length),
                                   sizeof(*hdr), hdr->num_lanes,
                                   hdr->mode == PSEL_RNDV_MODE_GET,
                                   rts->lanes);
    if (status != UCS_OK) {
        return status;
    }
    for (i = 0; i < hdr->num_lanes; ++i) {
        if ((hdr->mode == PSEL_RNDV_MODE_PUT) &&
            (rts->lanes[i].rec.entry >= worker->num_ifaces)) {
            ucs_error("rendezvous RTS: lane record %u names iface %u, this "
                      "worker has %u; dropped", i, rts->lanes[i].rec.entry,
                      worker->num_ifaces);
            return UCS_ERR_INVALID_PARAM;
        }
        if ((hdr->mode == PSEL_RNDV_MODE_GET) &&
            (rts->lanes[i].rec.weight == 0)) {
            ucs_error("rendezvous RTS: lane record %u has weight 0; dropped",
                      i);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    return UCS_OK;
}

static ucs_status_t psel_rndv_parse_rtr(const void *data, size_t length,
                                        psel_rndv_rtr_t *rtr)
{
    const psel_rndv_rtr_hdr_t *hdr = &rtr->hdr;
    ucs_status_t status;

    if (length < sizeof(rtr->hdr)) {
        ucs_error("rendezvous RTR: %zu bytes, shorter than its %zu-byte "
                  "header; dropped", length, sizeof(rtr->hdr));
        return UCS_ERR_INVALID_PARAM;
    }
    memcpy(&rtr->hdr, data, sizeof(rtr->hdr));
    status = psel_rndv_check_version("RTR", hdr->version);
    if (status != UCS_OK) {
        return status;
    }
    if (((hdr->mode != PSEL_RNDV_MODE_AM) &&
         (hdr->mode != PSEL_RNDV_MODE_PUT)) || (hdr->reserved != 0) ||
        ((hdr->mode == PSEL_RNDV_MODE_AM) && (hdr->num_lanes != 0)) ||
        (hdr->rreq_id == 0)) {
        ucs_error("rendezvous RTR: mode %u with %u lane records, reserved "
                  "0x%x, receiver request %" PRIx64 " (request %" PRIx64
                  "); dropped", hdr->mode, hdr->num_lanes, hdr->reserved,
                  hdr->rreq_id, hdr->sreq_id);
        return UCS_ERR_INVALID_PARAM;
    }
    return psel_rndv_parse_lanes("RTR", UCS_PTR_BYTE_OFFSET(data, sizeof(*hdr)),
                                 UCS_PTR_BYTE_OFFSET(data, length),
                                 sizeof(*hdr), hdr->num_lanes,
                                 hdr->mode == PSEL_RNDV_MODE_PUT, rtr->lanes);
}

static ucs_status_t psel_rndv_parse_ack(const char *what, const void *data,
                                        size_t length, psel_rndv_ack_hdr_t *ack)
{
    ucs_status_t status;

    if (length != sizeof(*ack)) {
        ucs_error("rendezvous %s: %zu bytes, not %zu; dropped", what, length,
                  sizeof(*ack));
        return UCS_ERR_INVALID_PARAM;
    }
    memcpy(ack, data, sizeof(*ack));
    status = psel_rndv_check_version(what, ack->version);
    if (status != UCS_OK) {
        return status;
    }
    if (!psel_rndv_status_is_valid(ack->status)) {
        ucs_error("rendezvous %s: status %d is not a final status (request "
                  "%" PRIx64 "); dropped", what, ack->status, ack->req_id);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

static ucs_status_t psel_rndv_parse_cancel(const void *data, size_t length,
                                           psel_rndv_cancel_hdr_t *hdr)
{
    ucs_status_t status;

    if (length != sizeof(*hdr)) {
        ucs_error("rendezvous CANCEL: %zu bytes, not %zu; dropped", length,
                  sizeof(*hdr));
        return UCS_ERR_INVALID_PARAM;
    }
    memcpy(hdr, data, sizeof(*hdr));
    status = psel_rndv_check_version("CANCEL", hdr->version);
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

/* ---- the receiver ---- */

static void psel_rndv_recv_queue(psel_rndv_recv_t *op)
{
    if (!op->queued) {
        op->queued = 1;
        ucs_list_add_tail(&op->worker->rndv.work, &op->list);
    }
}

static void psel_rndv_recv_release(psel_rndv_recv_t *op)
{
    psel_worker_h worker = op->worker;
    unsigned i;

    for (i = 0; i < PSEL_MAX_LANES; ++i) {
        if (op->rkey_map & UCS_BIT(i)) {
            uct_rkey_release(op->ep->lane_info[i].component, &op->rkeys[i]);
        }
    }
    for (i = 0; i < PSEL_RNDV_MAX_MDS; ++i) {
        if (op->md_map & UCS_BIT(i)) {
            uct_md_mem_dereg(worker->mds[i], op->memh[i]);
        }
    }
    op->rkey_map = 0;
    op->md_map   = 0;
}

/* The receive is done: release everything, complete it. */
static void psel_rndv_recv_finish(psel_rndv_recv_t *op, ucs_status_t status)
{
    psel_tm_recv_t *recv = op->recv;

    psel_rndv_recv_release(op);
    if (op->queued) {
        ucs_list_del(&op->list);
    }
    psel_rndv_map_del(&op->worker->rndv.recvs, op->id);
    free(op->rtr);
    free(op);
    if (recv != NULL) {
        psel_tm_rndv_complete(recv, status);
    }
}

static void psel_rndv_recv_completed(uct_completion_t *comp)
{
    psel_rndv_recv_queue(ucs_container_of(comp, psel_rndv_recv_t, comp));
}

/* The tag matcher matched an RTS to a receive: start from progress. */
static void psel_rndv_matched(void *arg, psel_tm_recv_t *recv,
                              const void *desc, size_t desc_len)
{
    psel_worker_h worker = arg;
    psel_rndv_recv_t *op;
    ucs_status_t status;

    op = calloc(1, sizeof(*op) + desc_len);
    if (op == NULL) {
        ucs_error("rendezvous: no memory to receive a %zu-byte message",
                  recv->recv_length);
        psel_tm_rndv_complete(recv, UCS_ERR_NO_MEMORY);
        return;
    }
    memcpy(op->rts_data, desc, desc_len);
    op->rts_length = desc_len;
    op->worker     = worker;
    op->recv       = recv;
    op->id         = ++worker->rndv.next_id;
    op->stage      = PSEL_RNDV_RECV_START;
    op->status     = UCS_OK;
    op->ack_am_id  = PSEL_AM_ID_RNDV_ATS;
    op->comp.func  = psel_rndv_recv_completed;
    /* validated on arrival */
    status = psel_rndv_parse_rts(worker, op->rts_data, desc_len, &op->rts);
    if (status == UCS_OK) {
        status = psel_rndv_map_add(&worker->rndv.recvs, op->id, op);
    }
    if (status != UCS_OK) {
        free(op);
        psel_tm_rndv_complete(recv, status);
        return;
    }
    psel_rndv_recv_queue(op);
}

static ucs_status_t psel_rndv_recv_register(psel_rndv_recv_t *op,
                                            unsigned iface_index,
                                            unsigned access)
{
    psel_worker_h worker = op->worker;
    unsigned md_index    = worker->ifaces[iface_index].md_index;
    ucs_status_t status;

    if ((op->md_map & UCS_BIT(md_index)) ||
        !psel_rndv_md(worker, iface_index)->mem_reg) {
        return UCS_OK;
    }
    status = uct_md_mem_reg(worker->mds[md_index], op->recv->buffer,
                            op->recv->recv_length, access,
                            &op->memh[md_index]);
    if (status != UCS_OK) {
        ucs_error("rendezvous: registering the %zu-byte receive buffer on "
                  "%s failed: %s", op->recv->recv_length,
                  worker->md_names[md_index], ucs_status_string(status));
        return status;
    }
    op->md_map |= UCS_BIT(md_index);
    return UCS_OK;
}

/* rndv/get: our lanes to the sender's entries in the RTS, with the rkeys
 * unpacked, split by the weights the sender gave. */
static ucs_status_t psel_rndv_recv_get_init(psel_rndv_recv_t *op)
{
    psel_ep_h ep                        = op->ep;
    const psel_ep_lanes_t *lanes        = &ep->config.lanes;
    const psel_proto_lane_info_t *info  = psel_rndv_ep_lane_info(ep);
    psel_proto_split_lane_t split[PSEL_MAX_LANES];
    const psel_rndv_lane_in_t *in;
    unsigned i, lane, n = 0;
    ucs_status_t status;

    for (i = 0; i < op->rts.hdr.num_lanes; ++i) {
        in = &op->rts.lanes[i];
        if ((in->rec.entry >= ep->address.count) ||
            (in->rec.rkey_size != ep->address.entries[in->rec.entry].rkey_size)) {
            ucs_error("rendezvous get: lane record %u names the sender's "
                      "entry %u with a %u-byte rkey; its address has %u "
                      "entries", i, in->rec.entry, in->rec.rkey_size,
                      ep->address.count);
            return UCS_ERR_INVALID_PARAM;
        }
        for (lane = 0; lane < lanes->num_lanes; ++lane) {
            if ((info[lane].remote_entry != in->rec.entry) ||
                !(lanes->lanes[lane].caps & PSEL_LANE_CAP_GET_ZCOPY) ||
                (op->rkey_map & UCS_BIT(lane))) {
                continue;
            }
            status = uct_rkey_unpack(info[lane].component, in->rkey,
                                     &op->rkeys[lane]);
            if (status != UCS_OK) {
                ucs_error("rendezvous get: unpacking the rkey of lane %u "
                          "failed: %s", lane, ucs_status_string(status));
                return status;
            }
            op->rkey_map |= UCS_BIT(lane);
            status = psel_rndv_recv_register(op, info[lane].local_entry,
                                             UCT_MD_MEM_ACCESS_LOCAL_WRITE);
            if (status != UCS_OK) {
                return status;
            }
            psel_proto_xfer_lane(info[lane].iface_attr, PSEL_PROTO_XFER_GET,
                                 lane, in->rec.weight, &split[n++]);
            break;
        }
    }
    if (n == 0) {
        ucs_error("rendezvous get: no lane of ours reads from the sender's "
                  "%u lane(s) (first entry %u)", op->rts.hdr.num_lanes,
                  op->rts.lanes[0].rec.entry);
        return UCS_ERR_UNREACHABLE;
    }
    psel_proto_xfer_init(&op->xfer, split, n, op->rts.hdr.length,
                         PSEL_RNDV_MIN_CHUNK);
    return UCS_OK;
}

/* The RTR: rndv/put registers the receive buffer on the memory domains of
 * the entries the sender writes to and packs their rkeys. */
static ucs_status_t psel_rndv_recv_rtr_init(psel_rndv_recv_t *op)
{
    psel_worker_h worker = op->worker;
    unsigned num_lanes   = (op->rts.hdr.mode == PSEL_RNDV_MODE_PUT) ?
                           op->rts.hdr.num_lanes : 0;
    psel_rndv_lane_rec_t rec;
    psel_rndv_rtr_hdr_t hdr;
    const psel_rndv_md_t *md;
    unsigned i, entry, md_index;
    ucs_status_t status;
    size_t length;
    uint8_t *p;

    length = sizeof(hdr);
    for (i = 0; i < num_lanes; ++i) {
        length += sizeof(rec) +
                  psel_rndv_md(worker, op->rts.lanes[i].rec.entry)->rkey_size;
        status  = psel_rndv_recv_register(op, op->rts.lanes[i].rec.entry,
                                          UCT_MD_MEM_ACCESS_REMOTE_PUT);
        if (status != UCS_OK) {
            return status;
        }
    }
    op->rtr = malloc(length);
    if (op->rtr == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    memset(&hdr, 0, sizeof(hdr));
    hdr.version   = PSEL_RNDV_WIRE_VERSION;
    hdr.mode      = op->rts.hdr.mode;
    hdr.num_lanes = num_lanes;
    hdr.sreq_id   = op->rts.hdr.sreq_id;
    hdr.rreq_id   = op->id;
    hdr.address   = (num_lanes > 0) ? (uintptr_t)op->recv->buffer : 0;
    hdr.length    = op->rts.hdr.length;
    p             = op->rtr;
    memcpy(p, &hdr, sizeof(hdr));
    p            += sizeof(hdr);
    for (i = 0; i < num_lanes; ++i) {
        entry    = op->rts.lanes[i].rec.entry;
        md       = psel_rndv_md(worker, entry);
        md_index = worker->ifaces[entry].md_index;
        memset(&rec, 0, sizeof(rec));
        rec.entry     = entry;
        rec.rkey_size = (op->md_map & UCS_BIT(md_index)) ? md->rkey_size : 0;
        memcpy(p, &rec, sizeof(rec));
        p += sizeof(rec);
        if (rec.rkey_size > 0) {
            status = uct_md_mkey_pack(worker->mds[md_index],
                                      op->memh[md_index], p);
            if (status != UCS_OK) {
                ucs_error("rendezvous put: packing the rkey on %s failed: %s",
                          worker->md_names[md_index],
                          ucs_status_string(status));
                return status;
            }
            p += rec.rkey_size;
        }
    }
    op->rtr_length = p - (uint8_t*)op->rtr;
    return UCS_OK;
}

static size_t psel_rndv_rtr_pack(void *dest, void *arg)
{
    psel_rndv_recv_t *op = arg;

    memcpy(dest, op->rtr, op->rtr_length);
    return op->rtr_length;
}

/* What to do once the reply endpoint is known. */
static void psel_rndv_recv_start(psel_rndv_recv_t *op)
{
    ucs_status_t status;

    if ((op->recv->status != UCS_OK) || (op->rts.hdr.length == 0)) {
        /* truncated (nothing is transferred) or empty: only the ATS, and
         * the sender completes normally */
        op->ats_status = UCS_OK;
        op->stage      = PSEL_RNDV_RECV_ATS;
        return;
    }
    if (op->rts.hdr.mode == PSEL_RNDV_MODE_GET) {
        status    = psel_rndv_recv_get_init(op);
        op->stage = PSEL_RNDV_RECV_GET;
    } else {
        status    = psel_rndv_recv_rtr_init(op);
        op->stage = PSEL_RNDV_RECV_RTR;
    }
    if (status != UCS_OK) {
        op->status     = status;
        op->ats_status = status;
        op->stage      = PSEL_RNDV_RECV_ATS;
    }
}

/* rndv/get: post reads round robin over the lanes. */
static ucs_status_t psel_rndv_recv_post_gets(psel_rndv_recv_t *op)
{
    size_t offset, length;
    ucs_status_t status;
    unsigned index;
    uct_iov_t iov;
    uint8_t lane;

    while (psel_proto_xfer_next(&op->xfer, &index, &offset, &length)) {
        lane       = op->xfer.lanes[index];
        iov.buffer = UCS_PTR_BYTE_OFFSET(op->recv->buffer, offset);
        iov.length = length;
        iov.memh   = op->memh[op->worker->ifaces[
                             op->ep->lane_info[lane].local_entry].md_index];
        iov.stride = 0;
        iov.count  = 1;
        ++op->comp.count;
        status = uct_ep_get_zcopy(op->ep->uct_eps[lane], &iov, 1,
                                  op->rts.hdr.address + offset,
                                  op->rkeys[lane].rkey, &op->comp);
        if (status != UCS_INPROGRESS) {
            --op->comp.count;
            if (UCS_STATUS_IS_ERR(status)) {
                return status;
            }
        }
        psel_proto_xfer_posted(&op->xfer, index, length);
    }
    return UCS_OK;
}

/* Move a receive forward. @return UCS_ERR_NO_RESOURCE to stay queued (and
 * retry), UCS_OK when it left the queue (waiting for an event, or done). */
static ucs_status_t psel_rndv_recv_progress(psel_rndv_recv_t *op)
{
    psel_worker_h worker = op->worker;
    ucs_status_t status;
    ssize_t packed;
    unsigned steps;

    for (steps = 0; steps <= PSEL_RNDV_RECV_ATS; ++steps) {
        switch (op->stage) {
        case PSEL_RNDV_RECV_START:
            op->ep = psel_rndv_reply_ep(worker, op->rts.hdr.sender_id);
            if (op->ep == NULL) {
                /* the sender's wireup REQUEST precedes its first RTS on
                 * the same lane, unless that lane was busy: wait a while */
                if (op->ep_deadline == 0) {
                    op->ep_deadline = psel_rndv_now() + PSEL_RNDV_EP_WAIT_SEC;
                }
                if (!ucs_list_is_empty(&worker->wireup_in) ||
                    (worker->wireup_out > 0) ||
                    (psel_rndv_now() < op->ep_deadline)) {
                    return UCS_ERR_NO_RESOURCE;
                }
                ucs_error("rendezvous: no endpoint back to sender %" PRIx64
                          " (msg %" PRIx64 ", %" PRIu64 " bytes) to answer "
                          "on", op->rts.hdr.sender_id, op->rts.hdr.msg_id,
                          op->rts.hdr.length);
                psel_rndv_recv_finish(op, UCS_ERR_UNREACHABLE);
                return UCS_OK;
            }
            psel_rndv_ep_lane_info(op->ep);
            if (op->recv == NULL) {
                op->stage = PSEL_RNDV_RECV_ATS; /* a CANCEL-ACK */
            } else {
                psel_rndv_recv_start(op);
            }
            break;
        case PSEL_RNDV_RECV_GET:
            status = psel_rndv_recv_post_gets(op);
            if (status == UCS_ERR_NO_RESOURCE) {
                return status;
            } else if (status != UCS_OK) {
                op->status     = status;
                op->ats_status = status;
            }
            op->stage = PSEL_RNDV_RECV_GET_WAIT;
            break;
        case PSEL_RNDV_RECV_GET_WAIT:
            if (op->comp.count > 0) {
                goto dequeue; /* the last read's completion queues it */
            }
            if ((op->status == UCS_OK) && (op->comp.status != UCS_OK)) {
                op->status     = op->comp.status;
                op->ats_status = op->comp.status;
            }
            op->stage = PSEL_RNDV_RECV_ATS;
            break;
        case PSEL_RNDV_RECV_RTR:
            packed = uct_ep_am_bcopy(op->ep->uct_eps[psel_rndv_ctrl_lane(op->ep)],
                                     PSEL_AM_ID_RNDV_RTR, psel_rndv_rtr_pack,
                                     op, 0);
            if (packed == UCS_ERR_NO_RESOURCE) {
                return UCS_ERR_NO_RESOURCE;
            } else if (packed < 0) {
                ucs_error("rendezvous: sending the RTR failed: %s",
                          ucs_status_string((ucs_status_t)packed));
                psel_rndv_recv_finish(op, (ucs_status_t)packed);
                return UCS_OK;
            }
            op->stage = PSEL_RNDV_RECV_WAIT;
            goto dequeue;
        case PSEL_RNDV_RECV_WAIT:
            goto dequeue; /* FIN or the data finish it */
        case PSEL_RNDV_RECV_ATS:
            status = psel_rndv_send_ack(
                    op->ep->uct_eps[psel_rndv_ctrl_lane(op->ep)],
                    op->ack_am_id, op->ats_status, op->rts.hdr.sreq_id);
            if (status == UCS_ERR_NO_RESOURCE) {
                return status;
            } else if (status != UCS_OK) {
                ucs_error("rendezvous: sending the %s failed: %s",
                          (op->recv == NULL) ? "CANCEL-ACK" : "ATS",
                          ucs_status_string(status));
            }
            psel_rndv_recv_finish(op, op->status);
            return UCS_OK;
        }
    }
    return UCS_ERR_NO_RESOURCE; /* not reached: every stage settles */

dequeue:
    if (op->queued) {
        op->queued = 0;
        ucs_list_del(&op->list);
    }
    return UCS_OK;
}

unsigned psel_rndv_progress(psel_worker_h worker)
{
    psel_rndv_recv_t *op, *tmp;
    unsigned count = 0;

    ucs_list_for_each_safe(op, tmp, &worker->rndv.work, list) {
        if (count++ == PSEL_PENDING_PER_PROGRESS) {
            break;
        }
        if (psel_rndv_recv_progress(op) == UCS_ERR_NO_RESOURCE) {
            break; /* the transport is busy: keep the order */
        }
    }
    return count;
}

/* ---- handlers ---- */

static ucs_status_t psel_rndv_on_rts(psel_worker_h worker, const void *data,
                                     size_t length)
{
    psel_rndv_rts_t rts;
    ucs_status_t status;

    status = psel_rndv_parse_rts(worker, data, length, &rts);
    if (status != UCS_OK) {
        return status;
    }
    return psel_tm_rndv_first(&worker->tm, rts.hdr.sender_id, rts.hdr.msg_id,
                              rts.hdr.tag, rts.hdr.length, data, length);
}

/* The send a reply names, in the stage that waits for it. */
static ucs_status_t psel_rndv_find_send(psel_worker_h worker, const char *what,
                                        uint64_t id, psel_request_t **req_p)
{
    psel_request_t *req = psel_rndv_map_find(&worker->rndv.sends, id);

    if (req == NULL) {
        ucs_error("rendezvous %s: unknown request %" PRIx64 "; dropped", what,
                  id);
        return UCS_ERR_NO_ELEM;
    }
    if ((req->proto.rndv == NULL) ||
        (req->proto.rndv->stage != PSEL_RNDV_STAGE_WAIT)) {
        ucs_error("rendezvous %s: request %" PRIx64 " is not waiting for "
                  "one (stage %d); dropped", what, id,
                  (req->proto.rndv == NULL) ? -1 : (int)req->proto.rndv->stage);
        return UCS_ERR_INVALID_PARAM;
    }
    *req_p = req;
    return UCS_OK;
}

static ucs_status_t psel_rndv_on_rtr(psel_worker_h worker, const void *data,
                                     size_t length)
{
    const psel_proto_lane_info_t *info;
    const psel_ep_lanes_t *lanes;
    const psel_rndv_lane_in_t *in;
    psel_proto_rndv_t *rndv;
    psel_request_t *req;
    psel_rndv_rtr_t rtr;
    ucs_status_t status;
    unsigned i, lane;

    status = psel_rndv_parse_rtr(data, length, &rtr);
    if (status == UCS_OK) {
        status = psel_rndv_find_send(worker, "RTR", rtr.hdr.sreq_id, &req);
    }
    if (status != UCS_OK) {
        return status;
    }
    rndv = req->proto.rndv;
    if ((rtr.hdr.mode != rndv->mode) ||
        (rtr.hdr.length != req->proto.length)) {
        ucs_error("rendezvous RTR: rndv/%s of %" PRIu64 " bytes for request "
                  "%" PRIx64 ", a %zu-byte rndv/%s; dropped",
                  psel_rndv_mode_names[rtr.hdr.mode], rtr.hdr.length,
                  rtr.hdr.sreq_id, req->proto.length,
                  psel_rndv_mode_names[rndv->mode]);
        return UCS_ERR_INVALID_PARAM;
    }

    /* rndv/put: the rkey of each entry, for our lanes that write to it */
    lanes = &req->ep->config.lanes;
    info  = req->proto.lane_info;
    for (i = 0; i < rtr.hdr.num_lanes; ++i) {
        in = &rtr.lanes[i];
        for (lane = 0; lane < lanes->num_lanes; ++lane) {
            if ((info[lane].remote_entry != in->rec.entry) ||
                !(lanes->lanes[lane].caps & PSEL_LANE_CAP_PUT_ZCOPY) ||
                (rndv->rkey_map & UCS_BIT(lane))) {
                continue;
            }
            if (in->rec.rkey_size !=
                req->ep->address.entries[in->rec.entry].rkey_size) {
                ucs_error("rendezvous RTR: a %u-byte rkey for entry %u, whose "
                          "rkeys have %u bytes (request %" PRIx64 "); "
                          "dropped", in->rec.rkey_size, in->rec.entry,
                          req->ep->address.entries[in->rec.entry].rkey_size,
                          rtr.hdr.sreq_id);
                return UCS_ERR_INVALID_PARAM;
            }
            status = uct_rkey_unpack(info[lane].component, in->rkey,
                                     &rndv->rkeys[lane]);
            if (status != UCS_OK) {
                ucs_error("rendezvous RTR: unpacking the rkey of lane %u "
                          "failed: %s", lane, ucs_status_string(status));
                break; /* the protocol fails the send for the lane */
            }
            rndv->rkey_map |= UCS_BIT(lane);
        }
    }
    rndv->remote_req_id  = rtr.hdr.rreq_id;
    rndv->remote_address = rtr.hdr.address;
    rndv->stage          = PSEL_RNDV_STAGE_DATA;
    req->proto.resume(&req->proto);
    return UCS_OK;
}

static ucs_status_t psel_rndv_on_ats(psel_worker_h worker, const void *data,
                                     size_t length)
{
    psel_rndv_ack_hdr_t ats;
    psel_request_t *req;
    ucs_status_t status;

    status = psel_rndv_parse_ack("ATS", data, length, &ats);
    if (status == UCS_OK) {
        status = psel_rndv_find_send(worker, "ATS", ats.req_id, &req);
    }
    if (status != UCS_OK) {
        return status;
    }
    req->proto.rndv->status = (ucs_status_t)ats.status;
    req->proto.rndv->stage  = PSEL_RNDV_STAGE_DONE;
    req->proto.resume(&req->proto);
    return UCS_OK;
}

/* The sender withdraws a message: gone from the unexpected queue (OK), or
 * a receive has it (BUSY: it goes on), or we know nothing of it (NO_ELEM:
 * whatever it got was answered before this, on the same lane). The answer
 * is a receive-side op without a receive: it waits for the endpoint back
 * like a receive does, then sends the CANCEL-ACK. */
static ucs_status_t psel_rndv_on_cancel(psel_worker_h worker,
                                        const void *data, size_t length)
{
    psel_rndv_cancel_hdr_t hdr;
    psel_rndv_recv_t *op, *match;
    ucs_status_t status, answer;
    void *value;

    status = psel_rndv_parse_cancel(data, length, &hdr);
    if (status != UCS_OK) {
        return status;
    }
    /* the answer's op first: a withdrawn RTS must be answered */
    op = calloc(1, sizeof(*op));
    if (op == NULL) {
        ucs_error("rendezvous CANCEL: no memory to answer it (sender %" PRIx64
                  " msg %" PRIx64 "); dropped", hdr.sender_id, hdr.msg_id);
        return UCS_ERR_NO_MEMORY;
    }
    op->worker = worker;
    op->id     = ++worker->rndv.next_id;
    status     = psel_rndv_map_add(&worker->rndv.recvs, op->id, op);
    if (status != UCS_OK) {
        free(op);
        return status;
    }

    answer = psel_tm_rndv_withdraw(&worker->tm, hdr.sender_id, hdr.msg_id);
    if (answer != UCS_OK) {
        kh_foreach_value(&worker->rndv.recvs, value, {
            match = value;
            if ((match->recv != NULL) &&
                (match->rts.hdr.sender_id == hdr.sender_id) &&
                (match->rts.hdr.msg_id == hdr.msg_id)) {
                answer = UCS_ERR_BUSY;
            }
        });
    }
    ucs_debug("rendezvous CANCEL of sender %" PRIx64 " msg %" PRIx64 ": %s",
              hdr.sender_id, hdr.msg_id, ucs_status_string(answer));

    op->stage             = PSEL_RNDV_RECV_START;
    op->ats_status        = answer;
    op->ack_am_id         = PSEL_AM_ID_RNDV_CANCEL_ACK;
    op->rts.hdr.sender_id = hdr.sender_id;
    op->rts.hdr.msg_id    = hdr.msg_id;
    op->rts.hdr.sreq_id   = hdr.sreq_id;
    psel_rndv_recv_queue(op);
    return UCS_OK;
}

/* The receiver's answer to our CANCEL. OK (or NO_ELEM while nothing else
 * answered the RTS: nothing will) ends the send with UCS_ERR_CANCELED;
 * otherwise the transfer goes on, and a send that ended meanwhile waited
 * for this answer (it names the request) and completes now. */
static ucs_status_t psel_rndv_on_cancel_ack(psel_worker_h worker,
                                            const void *data, size_t length)
{
    psel_rndv_ack_hdr_t ack;
    psel_proto_rndv_t *rndv;
    psel_request_t *req;
    ucs_status_t status;

    status = psel_rndv_parse_ack("CANCEL-ACK", data, length, &ack);
    if (status != UCS_OK) {
        return status;
    }
    if ((ack.status != UCS_OK) && (ack.status != UCS_ERR_BUSY) &&
        (ack.status != UCS_ERR_NO_ELEM)) {
        ucs_error("rendezvous CANCEL-ACK: status %d is not an answer to a "
                  "cancel (request %" PRIx64 "); dropped", ack.status,
                  ack.req_id);
        return UCS_ERR_INVALID_PARAM;
    }
    req = psel_rndv_map_find(&worker->rndv.sends, ack.req_id);
    if (req == NULL) {
        ucs_error("rendezvous CANCEL-ACK: unknown request %" PRIx64 "; "
                  "dropped", ack.req_id);
        return UCS_ERR_NO_ELEM;
    }
    rndv = req->proto.rndv;
    if ((rndv == NULL) || (rndv->cancel != PSEL_RNDV_CANCEL_SENT)) {
        ucs_error("rendezvous CANCEL-ACK: request %" PRIx64 " sent no "
                  "CANCEL; dropped", ack.req_id);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((ack.status == UCS_OK) && (rndv->stage != PSEL_RNDV_STAGE_WAIT)) {
        /* the receiver answered the RTS, then withdrew it: a broken peer */
        ucs_error("rendezvous CANCEL-ACK: request %" PRIx64 " withdrawn "
                  "after an answer (stage %d); the transfer goes on",
                  ack.req_id, (int)rndv->stage);
    }
    if ((rndv->stage == PSEL_RNDV_STAGE_WAIT) &&
        (ack.status != UCS_ERR_BUSY)) {
        rndv->cancel = PSEL_RNDV_CANCEL_NONE;
        rndv->status = UCS_ERR_CANCELED;
        rndv->stage  = PSEL_RNDV_STAGE_DONE;
    } else {
        rndv->cancel = PSEL_RNDV_CANCEL_REFUSED;
    }
    req->proto.resume(&req->proto);
    return UCS_OK;
}

/* The receive a FIN or DATA names, waiting for it. */
static ucs_status_t psel_rndv_find_recv(psel_worker_h worker, const char *what,
                                        uint64_t id, psel_rndv_recv_t **op_p)
{
    psel_rndv_recv_t *op = psel_rndv_map_find(&worker->rndv.recvs, id);

    if (op == NULL) {
        ucs_error("rendezvous %s: unknown receive %" PRIx64 "; dropped", what,
                  id);
        return UCS_ERR_NO_ELEM;
    }
    if (op->stage != PSEL_RNDV_RECV_WAIT) {
        ucs_error("rendezvous %s: receive %" PRIx64 " is not waiting for it "
                  "(stage %d); dropped", what, id, op->stage);
        return UCS_ERR_INVALID_PARAM;
    }
    *op_p = op;
    return UCS_OK;
}

static ucs_status_t psel_rndv_on_fin(psel_worker_h worker, const void *data,
                                     size_t length)
{
    psel_rndv_ack_hdr_t fin;
    psel_rndv_recv_t *op;
    ucs_status_t status;

    status = psel_rndv_parse_ack("FIN", data, length, &fin);
    if (status == UCS_OK) {
        status = psel_rndv_find_recv(worker, "FIN", fin.req_id, &op);
    }
    if (status != UCS_OK) {
        return status;
    }
    if ((op->rts.hdr.mode != PSEL_RNDV_MODE_PUT) && (fin.status == UCS_OK)) {
        ucs_error("rendezvous FIN: receive %" PRIx64 " is rndv/%s, which "
                  "ends by its data; dropped", fin.req_id,
                  psel_rndv_mode_names[op->rts.hdr.mode]);
        return UCS_ERR_INVALID_PARAM;
    }
    psel_rndv_recv_finish(op, (ucs_status_t)fin.status);
    return UCS_OK;
}

static ucs_status_t psel_rndv_on_data(psel_worker_h worker, const void *data,
                                      size_t length)
{
    psel_rndv_data_hdr_t hdr;
    psel_rndv_recv_t *op;
    ucs_status_t status;
    size_t len;

    if (length <= sizeof(hdr)) {
        ucs_error("rendezvous DATA: %zu bytes, no payload after its %zu-byte "
                  "header; dropped", length, sizeof(hdr));
        return UCS_ERR_INVALID_PARAM;
    }
    memcpy(&hdr, data, sizeof(hdr));
    status = psel_rndv_check_version("DATA", hdr.version);
    if (status == UCS_OK) {
        status = psel_rndv_find_recv(worker, "DATA", hdr.rreq_id, &op);
    }
    if (status != UCS_OK) {
        return status;
    }
    len = length - sizeof(hdr);
    if ((op->rts.hdr.mode != PSEL_RNDV_MODE_AM) ||
        (hdr.offset > op->rts.hdr.length) ||
        (len > op->rts.hdr.length - hdr.offset) ||
        (len > op->rts.hdr.length - op->landed)) {
        ucs_error("rendezvous DATA: %zu bytes at offset %" PRIu64 " for "
                  "rndv/%s receive %" PRIx64 " of %" PRIu64 " bytes (%zu "
                  "landed); dropped", len, hdr.offset,
                  psel_rndv_mode_names[op->rts.hdr.mode], hdr.rreq_id,
                  op->rts.hdr.length, op->landed);
        return UCS_ERR_INVALID_PARAM;
    }
    memcpy(UCS_PTR_BYTE_OFFSET(op->recv->buffer, hdr.offset),
           UCS_PTR_BYTE_OFFSET(data, sizeof(hdr)), len);
    op->landed += len;
    if (op->landed == op->rts.hdr.length) {
        psel_rndv_recv_finish(op, UCS_OK);
    }
    return UCS_OK;
}

ucs_status_t psel_rndv_am_input(psel_worker_h worker, uint8_t am_id,
                                const void *data, size_t length)
{
    switch (am_id) {
    case PSEL_AM_ID_RNDV_RTS:  return psel_rndv_on_rts(worker, data, length);
    case PSEL_AM_ID_RNDV_RTR:  return psel_rndv_on_rtr(worker, data, length);
    case PSEL_AM_ID_RNDV_ATS:  return psel_rndv_on_ats(worker, data, length);
    case PSEL_AM_ID_RNDV_FIN:  return psel_rndv_on_fin(worker, data, length);
    case PSEL_AM_ID_RNDV_DATA: return psel_rndv_on_data(worker, data, length);
    case PSEL_AM_ID_RNDV_CANCEL:
        return psel_rndv_on_cancel(worker, data, length);
    case PSEL_AM_ID_RNDV_CANCEL_ACK:
        return psel_rndv_on_cancel_ack(worker, data, length);
    default:
        ucs_error("rendezvous: active message id %u is not one of ours; "
                  "dropped", am_id);
        return UCS_ERR_INVALID_PARAM;
    }
}

/* The UCT handler of each rendezvous AM id: all feed psel_rndv_am_input() */
#define PSEL_RNDV_AM_HANDLER(_name, _am_id) \
    ucs_status_t psel_rndv_am_##_name(void *arg, void *data, size_t length, \
                                      unsigned flags) \
    { \
        psel_rndv_am_input(arg, _am_id, data, length); \
        return UCS_OK; \
    }

PSEL_RNDV_AM_HANDLER(rts, PSEL_AM_ID_RNDV_RTS)
PSEL_RNDV_AM_HANDLER(rtr, PSEL_AM_ID_RNDV_RTR)
PSEL_RNDV_AM_HANDLER(ats, PSEL_AM_ID_RNDV_ATS)
PSEL_RNDV_AM_HANDLER(fin, PSEL_AM_ID_RNDV_FIN)
PSEL_RNDV_AM_HANDLER(data, PSEL_AM_ID_RNDV_DATA)
PSEL_RNDV_AM_HANDLER(cancel, PSEL_AM_ID_RNDV_CANCEL)
PSEL_RNDV_AM_HANDLER(cancel_ack, PSEL_AM_ID_RNDV_CANCEL_ACK)

/* ---- life cycle and failure ---- */

void psel_rndv_init(psel_worker_h worker)
{
    kh_init_inplace(psel_rndv_reqs, &worker->rndv.sends);
    kh_init_inplace(psel_rndv_reqs, &worker->rndv.recvs);
    ucs_list_head_init(&worker->rndv.work);
    worker->rndv.next_id   = 0;
    worker->tm.rndv_matched = psel_rndv_matched;
    worker->tm.rndv_arg     = worker;
}

/* Abort a tracked send: the protocol releases what it holds and the
 * request completes with @a status. */
static void psel_rndv_abort_send(psel_request_t *req, ucs_status_t status)
{
    psel_proto_rndv_t *rndv = req->proto.rndv;

    if (req->queued) {
        ucs_list_del(&req->list);
        req->queued = 0;
    }
    rndv->status     = status;
    rndv->stage      = PSEL_RNDV_STAGE_DONE;
    rndv->cancel     = PSEL_RNDV_CANCEL_NONE; /* no CANCEL-ACK to wait for */
    req->proto.comp.count = 0; /* operations in flight are given up */
    psel_send_progress(req);
}

ucs_status_t psel_rndv_cancel_send(psel_request_t *req)
{
    psel_proto_rndv_t *rndv = req->proto.rndv;

    if (rndv == NULL) {
        return UCS_ERR_BUSY; /* not a rendezvous, or not started */
    }
    switch (rndv->stage) {
    case PSEL_RNDV_STAGE_START:
    case PSEL_RNDV_STAGE_RTS:
        /* the RTS waits for the transport: nothing reached the receiver */
        psel_rndv_abort_send(req, UCS_ERR_CANCELED);
        return UCS_OK;
    case PSEL_RNDV_STAGE_WAIT:
        if (rndv->cancel == PSEL_RNDV_CANCEL_REFUSED) {
            return UCS_ERR_BUSY;
        }
        if (rndv->cancel == PSEL_RNDV_CANCEL_NONE) {
            rndv->cancel = PSEL_RNDV_CANCEL_WANTED; /* sent from progress */
            req->proto.resume(&req->proto);
        }
        return UCS_INPROGRESS;
    default:
        return UCS_ERR_BUSY; /* answered: the data moves */
    }
}

void psel_rndv_ep_fail(psel_ep_h ep, ucs_status_t status)
{
    psel_worker_h worker = ep->worker;
    psel_request_t *req;
    psel_rndv_recv_t *op;
    uint64_t id;
    unsigned n, i;
    void *value;
    uint64_t ids[64];

    /* collect ids first: finishing an entry deletes it from the map; a
     * bounded number per round, rounds until none is left */
    do {
        n = 0;
        kh_foreach(&worker->rndv.sends, id, value, {
            req = value;
            if ((req->ep == ep) && (n < 64)) {
                ids[n++] = id;
            }
        });
        for (i = 0; i < n; ++i) {
            req = psel_rndv_map_find(&worker->rndv.sends, ids[i]);
            if (req != NULL) {
                psel_rndv_abort_send(req, status);
            }
        }
    } while (n == 64);

    do {
        n = 0;
        kh_foreach(&worker->rndv.recvs, id, value, {
            op = value;
            if (((op->ep == ep) ||
                 ((op->ep == NULL) && (op->rts.hdr.sender_id == ep->remote_id)))
                && (n < 64)) {
                ids[n++] = id;
            }
        });
        for (i = 0; i < n; ++i) {
            op = psel_rndv_map_find(&worker->rndv.recvs, ids[i]);
            if (op != NULL) {
                op->comp.count = 0;
                psel_rndv_recv_finish(op, status);
            }
        }
    } while (n == 64);
}

void psel_rndv_cleanup(psel_worker_h worker)
{
    psel_request_t *req;
    psel_rndv_recv_t *op;
    khiter_t iter;
    unsigned bound;

    /* each round finishes one entry, which leaves its map */
    for (bound = kh_size(&worker->rndv.sends); bound > 0; --bound) {
        iter = kh_begin(&worker->rndv.sends);
        while ((iter != kh_end(&worker->rndv.sends)) &&
               !kh_exist(&worker->rndv.sends, iter)) {
            ++iter;
        }
        if (iter == kh_end(&worker->rndv.sends)) {
            break;
        }
        req = kh_val(&worker->rndv.sends, iter);
        psel_rndv_abort_send(req, UCS_ERR_CANCELED);
    }
    for (bound = kh_size(&worker->rndv.recvs); bound > 0; --bound) {
        iter = kh_begin(&worker->rndv.recvs);
        while ((iter != kh_end(&worker->rndv.recvs)) &&
               !kh_exist(&worker->rndv.recvs, iter)) {
            ++iter;
        }
        if (iter == kh_end(&worker->rndv.recvs)) {
            break;
        }
        op             = kh_val(&worker->rndv.recvs, iter);
        op->comp.count = 0;
        psel_rndv_recv_finish(op, UCS_ERR_CANCELED);
    }
    kh_destroy_inplace(psel_rndv_reqs, &worker->rndv.sends);
    kh_destroy_inplace(psel_rndv_reqs, &worker->rndv.recvs);
}
