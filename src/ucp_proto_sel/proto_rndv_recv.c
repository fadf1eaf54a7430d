/*
 * Rendezvous, the receiver (proto_rndv.h): a matched RTS becomes a
 * psel_rndv_recv_t that finds the endpoint back to the sender, runs the
 * mode's start (reads, or an RTR), waits for FIN or the data and answers
 * with ATS; and the answer to a CANCEL. Receives with something to send
 * wait in the worker's rendezvous work queue.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_common.h"
#include "proto_rndv_int.h"

#include <lane_select/clock.h>
#include <ucs/debug/log_def.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* How long a receive waits for the wireup that gives it an endpoint back to
 * its sender (normally already there: it precedes the RTS on its lane) */
#define PSEL_RNDV_EP_WAIT_SEC      2.0

/* Separate pieces a rndv/am receive may have landed: fragments come in
 * order on each lane, so a message has at most a gap per lane */
#define PSEL_RNDV_MAX_RANGES       64

/* Receives the work queue runs per progress call */
#define PSEL_RNDV_WORK_PER_PROGRESS 64

void psel_rndv_worker_init(psel_proto_worker_t *worker)
{
    ucs_list_head_init(&worker->rndv_work);
}

static void psel_rndv_recv_queue(psel_rndv_recv_t *op)
{
    if (!op->queued) {
        op->queued = 1;
        ucs_list_add_tail(&op->worker->rndv_work, &op->list);
    }
}

static void psel_rndv_recv_dequeue(psel_rndv_recv_t *op)
{
    if (op->queued) {
        op->queued = 0;
        ucs_list_del(&op->list);
    }
}

/* The receive is done: release everything, complete it. */
static void psel_rndv_recv_finish(psel_rndv_recv_t *op, ucs_status_t status)
{
    psel_proto_worker_t *worker = op->worker;
    void *recv                  = op->recv;
    unsigned i;

    for (i = 0; i < PSEL_MAX_LANES; ++i) {
        if (op->rkey_map & UCS_BIT(i)) {
            psel_rndv_rkey_release(op->super.ep->lane_info[i].iface->component,
                                   &op->rkeys[i]);
        }
    }
    for (i = 0; i < worker->num_ifaces; ++i) {
        if (op->md_map & UCS_BIT(worker->ifaces[i].md_index)) {
            uct_md_mem_dereg(worker->ifaces[i].md,
                             op->memh[worker->ifaces[i].md_index]);
            op->md_map &= ~UCS_BIT(worker->ifaces[i].md_index);
        }
    }
    psel_rndv_recv_dequeue(op);
    worker->rreq_untrack(worker, &op->super);
    psel_byte_ranges_cleanup(&op->landed);
    free(op->rtr);
    free(op);
    if (recv != NULL) {
        worker->recv_complete(recv, status);
    }
}

static void psel_rndv_recv_abort(psel_proto_rreq_t *rreq, ucs_status_t status,
                                 unsigned flags)
{
    psel_rndv_recv_t *op = ucs_derived_of(rreq, psel_rndv_recv_t);

    if (flags & PSEL_PROTO_ABORT_FORCE) {
        op->comp.count = 0; /* the UCT endpoints are gone */
    }
    if (op->comp.count > 0) {
        /* reads in flight: the last completion queues it, then it ends */
        op->abort_status = status;
        return;
    }
    psel_rndv_recv_finish(op, status);
}

static void psel_rndv_recv_completed(uct_completion_t *comp)
{
    psel_rndv_recv_queue(ucs_container_of(comp, psel_rndv_recv_t, comp));
}

/* A receive-side op: tracked by core, aborted through super.abort. */
static psel_rndv_recv_t *psel_rndv_recv_new(psel_proto_worker_t *worker,
                                            size_t desc_len)
{
    psel_rndv_recv_t *op = calloc(1, sizeof(*op) + desc_len);

    if (op == NULL) {
        return NULL;
    }
    op->worker      = worker;
    op->super.abort = psel_rndv_recv_abort;
    op->stage       = PSEL_RNDV_RECV_START;
    op->status      = UCS_OK;
    op->ack_am_id   = PSEL_AM_ID_RNDV_ATS;
    op->comp.func   = psel_rndv_recv_completed;
    psel_byte_ranges_init(&op->landed, PSEL_RNDV_MAX_RANGES);
    if (worker->rreq_track(worker, &op->super) != UCS_OK) {
        free(op);
        return NULL;
    }
    return op;
}

void psel_rndv_matched(psel_proto_worker_t *worker, void *recv, void *buffer,
                       size_t length, int truncated, const void *desc,
                       size_t desc_len)
{
    psel_rndv_recv_t *op;
    psel_rndv_msg_t msg;
    ucs_status_t status;
    uint64_t id;

    op = psel_rndv_recv_new(worker, desc_len);
    if (op == NULL) {
        ucs_error("rendezvous: no memory to receive a %zu-byte message",
                  length);
        worker->recv_complete(recv, UCS_ERR_NO_MEMORY);
        return;
    }
    memcpy(op->rts_data, desc, desc_len);
    op->rts_length = desc_len;
    op->recv       = recv;
    op->buffer     = buffer;
    op->length     = length;
    op->truncated  = truncated;
    /* validated on arrival */
    status = psel_rndv_parse_rts(worker, op->rts_data, desc_len, &msg, &id);
    if (status != UCS_OK) {
        psel_rndv_recv_finish(op, status);
        return;
    }
    op->rts             = msg.rts; /* its rkeys point into op->rts_data */
    op->ops             = psel_rndv_mode_ops(op->rts.hdr.mode);
    op->super.sender_id = op->rts.hdr.sender_id;
    op->super.msg_id    = op->rts.hdr.msg_id;
    op->super.matched   = 1;
    psel_rndv_recv_queue(op);
    PSEL_RNDV_EVENT(PSEL_RNDV_EVENT_MATCHED);
}

ucs_status_t psel_rndv_recv_register(psel_rndv_recv_t *op,
                                     unsigned iface_index, unsigned access)
{
    const psel_proto_iface_info_t *iface = &op->worker->ifaces[iface_index];
    ucs_status_t status;

    if ((op->md_map & UCS_BIT(iface->md_index)) || !iface->mem_reg) {
        return UCS_OK;
    }
    status = uct_md_mem_reg(iface->md, op->buffer, op->length, access,
                            &op->memh[iface->md_index]);
    if (status != UCS_OK) {
        ucs_error("rendezvous: registering the %zu-byte receive buffer on "
                  "iface %u failed: %s", op->length, iface_index,
                  ucs_status_string(status));
        return status;
    }
    op->md_map |= UCS_BIT(iface->md_index);
    return UCS_OK;
}

ucs_status_t psel_rndv_rkey_unpack(uct_component_h component,
                                   const void *packed, size_t rkey_size,
                                   uct_rkey_bundle_t *bundle)
{
    if (rkey_size == 0) {
        bundle->rkey   = UCT_INVALID_RKEY;
        bundle->handle = NULL;
        bundle->type   = NULL;
        return UCS_OK;
    }
    return uct_rkey_unpack(component, packed, bundle);
}

void psel_rndv_rkey_release(uct_component_h component,
                            uct_rkey_bundle_t *bundle)
{
    if (bundle->rkey != UCT_INVALID_RKEY) {
        uct_rkey_release(component, bundle);
    }
}

/* The RTR: the mode's records (with the rkeys of the entries the sender
 * writes to, registered here) or none. */
static ucs_status_t psel_rndv_recv_rtr_pack(psel_rndv_recv_t *op)
{
    psel_proto_worker_t *worker = op->worker;
    unsigned num_lanes          = op->ops->rtr_rkeys ?
                                  op->rts.hdr.num_lanes : 0;
    size_t max_rtr              = op->super.ep->lane_info[op->super.ep->am_lane]
                                          .iface->attr->cap.am.max_bcopy;
    const psel_proto_iface_info_t *iface;
    psel_rndv_lane_rec_t rec;
    psel_rndv_rtr_hdr_t hdr;
    ucs_status_t status;
    size_t length;
    unsigned i;
    uint8_t *p;

    length = sizeof(hdr);
    for (i = 0; i < num_lanes; ++i) {
        length += sizeof(rec) +
                  worker->ifaces[op->rts.lanes[i].rec.entry].rkey_size;
    }
    if (length > max_rtr) {
        ucs_error("rendezvous %s: a %zu-byte RTR does not fit the %zu bytes "
                  "of a bcopy AM on lane %u (sender %" PRIx64 " msg %" PRIx64
                  ")", op->ops->name, length, max_rtr, op->super.ep->am_lane,
                  op->super.sender_id, op->super.msg_id);
        return UCS_ERR_EXCEEDS_LIMIT; /* the ATS tells the sender */
    }
    for (i = 0; i < num_lanes; ++i) {
        status = psel_rndv_recv_register(op, op->rts.lanes[i].rec.entry,
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
    hdr.mode      = op->rts.hdr.mode;
    hdr.num_lanes = num_lanes;
    hdr.sreq_id   = op->rts.hdr.sreq_id;
    hdr.rreq_id   = op->super.id;
    hdr.address   = (num_lanes > 0) ? (uintptr_t)op->buffer : 0;
    hdr.length    = op->rts.hdr.length;
    p             = op->rtr;
    psel_rndv_rtr_hdr_pack(p, &hdr);
    p            += sizeof(hdr);
    for (i = 0; i < num_lanes; ++i) {
        iface = &worker->ifaces[op->rts.lanes[i].rec.entry];
        memset(&rec, 0, sizeof(rec));
        rec.entry     = op->rts.lanes[i].rec.entry;
        rec.weight    = op->rts.lanes[i].rec.weight;
        rec.rkey_size = (op->md_map & UCS_BIT(iface->md_index)) ?
                        iface->rkey_size : 0;
        psel_rndv_lane_rec_pack(p, &rec);
        p += sizeof(rec);
        if (rec.rkey_size > 0) {
            status = uct_md_mkey_pack(iface->md, op->memh[iface->md_index],
                                      p);
            if (status != UCS_OK) {
                ucs_error("rendezvous %s: packing the rkey of iface %u "
                          "failed: %s", op->ops->name, rec.entry,
                          ucs_status_string(status));
                return status;
            }
            p += rec.rkey_size;
        }
    }
    op->rtr_length = p - (uint8_t*)op->rtr;
    return UCS_OK;
}

static size_t psel_rndv_rtr_copy(void *dest, void *arg)
{
    psel_rndv_recv_t *op = arg;

    memcpy(dest, op->rtr, op->rtr_length);
    return op->rtr_length;
}

/* What to do once the reply endpoint is known. */
static void psel_rndv_recv_start(psel_rndv_recv_t *op)
{
    ucs_status_t status;

    if (op->truncated || (op->rts.hdr.length == 0)) {
        /* truncated (nothing is transferred) or empty: only the ATS, and
         * the sender completes normally */
        op->ats_status = UCS_OK;
        op->stage      = PSEL_RNDV_RECV_ATS;
        return;
    }
    status = op->ops->recv_start(op, &op->stage);
    if ((status == UCS_OK) && (op->stage == PSEL_RNDV_RECV_RTR)) {
        status = psel_rndv_recv_rtr_pack(op);
    }
    if (status != UCS_OK) {
        op->status     = status;
        op->ats_status = status;
        op->stage      = PSEL_RNDV_RECV_ATS;
    }
}

/* Find the endpoint back to the sender; wait for wireup a while, and fail
 * at once if the endpoint failed. */
static ucs_status_t psel_rndv_recv_find_ep(psel_rndv_recv_t *op)
{
    psel_proto_worker_t *worker = op->worker;
    ucs_status_t status;

    status = worker->reply_ep(worker, op->super.sender_id, &op->super.ep);
    if (status == UCS_OK) {
        return UCS_OK;
    }
    if ((status != UCS_ERR_NO_RESOURCE) && (status != UCS_ERR_NO_ELEM)) {
        ucs_debug("rendezvous: the endpoint back to sender %" PRIx64 " (msg %"
                  PRIx64 ") failed: %s", op->super.sender_id,
                  op->super.msg_id, ucs_status_string(status));
        return status;
    }
    /* the sender's wireup REQUEST precedes its first RTS on the same
     * lane, unless that lane was busy, and our endpoint's own wireup may
     * still run: wait a while, never for ever */
    if (op->ep_deadline == 0) {
        op->ep_deadline = psel_time_sec() + PSEL_RNDV_EP_WAIT_SEC;
    }
    if (psel_time_sec() < op->ep_deadline) {
        return UCS_ERR_NO_RESOURCE;
    }
    ucs_error("rendezvous: no endpoint back to sender %" PRIx64 " (msg %"
              PRIx64 ", %" PRIu64 " bytes) to answer on within %.0f s%s",
              op->super.sender_id, op->super.msg_id, op->rts.hdr.length,
              PSEL_RNDV_EP_WAIT_SEC, (status == UCS_ERR_NO_RESOURCE) ?
              " (its wireup did not end)" : "");
    return UCS_ERR_UNREACHABLE;
}

/* Move a receive forward. @return UCS_ERR_NO_RESOURCE to stay queued (and
 * retry), UCS_OK when it left the queue (waiting for an event, or done). */
static ucs_status_t psel_rndv_recv_progress(psel_rndv_recv_t *op)
{
    const char *what;
    ucs_status_t status;
    ssize_t packed;
    unsigned steps;

    if (ucs_unlikely(op->abort_status != UCS_OK)) {
        if (op->comp.count == 0) {
            psel_rndv_recv_finish(op, op->abort_status); /* aborted */
        } else {
            psel_rndv_recv_dequeue(op); /* the last read queues it */
        }
        return UCS_OK;
    }

    for (steps = 0; steps <= PSEL_RNDV_RECV_ATS; ++steps) {
        switch (op->stage) {
        case PSEL_RNDV_RECV_START:
            status = psel_rndv_recv_find_ep(op);
            if (status == UCS_ERR_NO_RESOURCE) {
                return status;
            } else if (status != UCS_OK) {
                psel_rndv_recv_finish(op, status);
                return UCS_OK;
            }
            if (op->recv == NULL) {
                op->stage = PSEL_RNDV_RECV_ATS; /* a CANCEL-ACK */
            } else {
                psel_rndv_recv_start(op);
            }
            break;
        case PSEL_RNDV_RECV_GET:
            status = op->ops->recv_post(op);
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
                psel_rndv_recv_dequeue(op); /* the last read queues it */
                return UCS_OK;
            }
            if ((op->status == UCS_OK) && (op->comp.status != UCS_OK)) {
                op->status     = op->comp.status;
                op->ats_status = op->comp.status;
            }
            op->stage = PSEL_RNDV_RECV_ATS;
            break;
        case PSEL_RNDV_RECV_RTR:
            PSEL_RNDV_EVENT(PSEL_RNDV_EVENT_RTR);
            packed = uct_ep_am_bcopy(op->super.ep->uct_eps[op->super.ep->am_lane],
                                     PSEL_AM_ID_RNDV_RTR, psel_rndv_rtr_copy,
                                     op, 0);
            if (packed == UCS_ERR_NO_RESOURCE) {
                return UCS_ERR_NO_RESOURCE;
            } else if (packed < 0) {
                /* the lane failed: the receive fails, and so does the
                 * endpoint (its owner hears of it; no ATS would get
                 * through) */
                status = (ucs_status_t)packed;
                ucs_error("rendezvous: sending the RTR to sender %" PRIx64
                          " (msg %" PRIx64 ") failed: %s",
                          op->super.sender_id, op->super.msg_id,
                          ucs_status_string(status));
                op->worker->ep_failed(op->super.ep, status, "RTR");
                psel_rndv_recv_finish(op, status);
                return UCS_OK;
            }
            op->stage = PSEL_RNDV_RECV_WAIT;
            /* fall through */
        case PSEL_RNDV_RECV_WAIT:
            psel_rndv_recv_dequeue(op); /* FIN or the data finish it */
            return UCS_OK;
        case PSEL_RNDV_RECV_ATS:
            if (op->recv != NULL) {
                PSEL_RNDV_EVENT(PSEL_RNDV_EVENT_ATS);
            }
            status = psel_rndv_send_ack(op->super.ep->uct_eps[op->super.ep->am_lane],
                                        op->ack_am_id, op->ats_status,
                                        op->rts.hdr.sreq_id);
            if (status == UCS_ERR_NO_RESOURCE) {
                return status;
            } else if (status != UCS_OK) {
                /* the sender will not hear: the endpoint fails, so the
                 * owners of it and of its requests do */
                what = (op->recv == NULL) ? "CANCEL-ACK" : "ATS";
                ucs_error("rendezvous: sending the %s to sender %" PRIx64
                          " (msg %" PRIx64 ") failed: %s", what,
                          op->super.sender_id, op->super.msg_id,
                          ucs_status_string(status));
                op->worker->ep_failed(op->super.ep, status, what);
            }
            psel_rndv_recv_finish(op, op->status);
            return UCS_OK;
        }
    }
    return UCS_ERR_NO_RESOURCE; /* not reached: every stage settles */
}

/* Is @a sender_id among the @a n senders in @a blocked? */
static int psel_rndv_sender_blocked(const uint64_t *blocked, unsigned n,
                                    uint64_t sender_id)
{
    unsigned i;

    for (i = 0; i < n; ++i) {
        if (blocked[i] == sender_id) {
            return 1;
        }
    }
    return 0;
}

unsigned psel_rndv_progress(psel_proto_worker_t *worker)
{
    uint64_t blocked[PSEL_RNDV_WORK_PER_PROGRESS];
    unsigned num_blocked = 0;
    ucs_list_link_t todo, kept;
    psel_rndv_recv_t *op;
    unsigned count = 0;
    uint64_t sender_id;

    /* run the receives queued now, oldest first; a receive stays in a list
     * of this function while it runs (kept), so that one a callback
     * finishes - this one or any other - just leaves the list it is in.
     * A receive that must wait (its reply lane is busy, its endpoint back
     * is not there yet) holds up only the later receives of the same
     * sender, which keep their order behind it: another peer's never wait
     * for it. */
    ucs_list_head_init(&todo);
    ucs_list_head_init(&kept);
    ucs_list_splice_tail(&todo, &worker->rndv_work);
    ucs_list_head_init(&worker->rndv_work);
    while (!ucs_list_is_empty(&todo) &&
           (count < PSEL_RNDV_WORK_PER_PROGRESS)) {
        op = ucs_list_extract_head(&todo, psel_rndv_recv_t, list);
        ucs_list_add_tail(&kept, &op->list);
        sender_id = op->super.sender_id;
        if (psel_rndv_sender_blocked(blocked, num_blocked, sender_id)) {
            continue;
        }
        ++count;
        if (psel_rndv_recv_progress(op) == UCS_ERR_NO_RESOURCE) {
            blocked[num_blocked++] = sender_id;
        }
    }
    /* the queue again: what ran or waits, what did not run, then what
     * callbacks queued meanwhile */
    ucs_list_splice_tail(&kept, &todo);
    ucs_list_splice_tail(&kept, &worker->rndv_work);
    ucs_list_head_init(&worker->rndv_work);
    ucs_list_splice_tail(&worker->rndv_work, &kept);
    return count;
}

/* ---- messages (psel_rndv_am_input checked them) ---- */

ucs_status_t psel_rndv_recv_on_rts(psel_proto_worker_t *worker,
                                   void *target, const psel_rndv_msg_t *msg,
                                   const void *data, size_t length)
{
    const psel_rndv_rts_hdr_t *hdr = &msg->rts.hdr;

    return worker->rts_arrived(worker, hdr->sender_id, hdr->msg_id, hdr->tag,
                               hdr->length, data, length);
}

ucs_status_t psel_rndv_recv_on_fin(psel_proto_worker_t *worker,
                                   void *target, const psel_rndv_msg_t *msg,
                                   const void *data, size_t length)
{
    psel_rndv_recv_t *op = target;

    if (!(op->ops->recv_waits & UCS_BIT(PSEL_AM_ID_RNDV_FIN)) &&
        (msg->ack.status == UCS_OK)) {
        ucs_error("rendezvous FIN: receive %" PRIx64 " is rndv/%s, which "
                  "ends by its data; dropped", msg->ack.req_id,
                  op->ops->name);
        return UCS_ERR_INVALID_PARAM;
    }
    psel_rndv_recv_finish(op, (ucs_status_t)msg->ack.status);
    return UCS_OK;
}

ucs_status_t psel_rndv_recv_on_data(psel_proto_worker_t *worker,
                                    void *target, const psel_rndv_msg_t *msg,
                                    const void *data, size_t length)
{
    psel_rndv_recv_t *op = target;
    size_t total         = op->rts.hdr.length;
    uint64_t offset      = msg->data.hdr.offset;
    size_t len           = msg->data.length;
    ucs_status_t status;

    if (!(op->ops->recv_waits & UCS_BIT(PSEL_AM_ID_RNDV_DATA)) ||
        (offset > total) || (len > total - offset)) {
        ucs_error("rendezvous DATA: %zu bytes at offset %" PRIu64 " for "
                  "rndv/%s receive %" PRIx64 " of %zu bytes; dropped", len,
                  offset, op->ops->name, op->super.id, total);
        return UCS_ERR_INVALID_PARAM;
    }
    /* every byte lands once: a fragment over bytes that are there already
     * is a broken sender's, and would make the count lie */
    status = psel_byte_ranges_add(&op->landed, offset, offset + len);
    if (status != UCS_OK) {
        ucs_error("rendezvous DATA: %zu bytes at offset %" PRIu64 " for "
                  "receive %" PRIx64 " %s (%zu of %zu bytes landed); "
                  "dropped", len, offset, op->super.id,
                  (status == UCS_ERR_INVALID_PARAM) ?
                  "overlap bytes already received" :
                  "leave too many gaps", op->landed.landed, total);
        return UCS_ERR_INVALID_PARAM;
    }
    memcpy(UCS_PTR_BYTE_OFFSET(op->buffer, offset), msg->data.payload, len);
    if (op->landed.landed == total) {
        psel_rndv_recv_finish(op, UCS_OK);
    }
    return UCS_OK;
}

/* The sender withdraws a message: gone from the unexpected queue (OK), or
 * a receive has it (BUSY: it goes on), or we know nothing of it (NO_ELEM:
 * whatever it got was answered before this, on the same lane). The answer
 * is a receive-side op without a receive: it waits for the endpoint back
 * like a receive does, then sends the CANCEL-ACK. */
ucs_status_t psel_rndv_recv_on_cancel(psel_proto_worker_t *worker,
                                      void *target,
                                      const psel_rndv_msg_t *msg,
                                      const void *data, size_t length)
{
    const psel_rndv_cancel_hdr_t *hdr = &msg->cancel;
    psel_rndv_recv_t *op;
    ucs_status_t answer;

    /* the answer's op first: a withdrawn RTS must be answered */
    op = psel_rndv_recv_new(worker, 0);
    if (op == NULL) {
        ucs_error("rendezvous CANCEL: no memory to answer it (sender %" PRIx64
                  " msg %" PRIx64 "); dropped", hdr->sender_id, hdr->msg_id);
        return UCS_ERR_NO_MEMORY;
    }
    answer = worker->rts_withdraw(worker, hdr->sender_id, hdr->msg_id);
    if ((answer != UCS_OK) &&
        (worker->rreq_find_msg(worker, hdr->sender_id, hdr->msg_id) != NULL)) {
        answer = UCS_ERR_BUSY;
    }
    ucs_debug("rendezvous CANCEL of sender %" PRIx64 " msg %" PRIx64 ": %s",
              hdr->sender_id, hdr->msg_id, ucs_status_string(answer));

    op->ats_status        = answer;
    op->ack_am_id         = PSEL_AM_ID_RNDV_CANCEL_ACK;
    op->super.sender_id   = hdr->sender_id;
    op->super.msg_id      = hdr->msg_id;
    op->rts.hdr.sender_id = hdr->sender_id;
    op->rts.hdr.msg_id    = hdr->msg_id;
    op->rts.hdr.sreq_id   = hdr->sreq_id;
    psel_rndv_recv_queue(op);
    return UCS_OK;
}
