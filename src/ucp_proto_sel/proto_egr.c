/*
 * Eager protocols: the whole message goes with the first send, so the
 * receiver may have to buffer it as unexpected.
 *  egr/short  one uct_ep_am_short, payload inline;
 *  egr/bcopy  am_bcopy: packed into a transport buffer, one fragment or many;
 *  egr/zcopy  am_zcopy from the registered user buffer.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_common.h"
#include "proto_egr.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <string.h>

void psel_eager_hdr_error(const char *what, size_t length, size_t hdr_length,
                          unsigned version)
{
    if (version != PSEL_EAGER_WIRE_VERSION) {
        ucs_error("eager %s: wire version %u, this build speaks %u; dropped "
                  "(run the same protosel on both peers)", what, version,
                  PSEL_EAGER_WIRE_VERSION);
    } else {
        ucs_error("eager %s: %zu bytes, shorter than its %zu-byte header; "
                  "dropped", what, length, hdr_length);
    }
}

static ucs_status_t psel_egr_short_init(const psel_proto_init_params_t *params,
                                        psel_proto_caps_t *caps)
{
    ucs_linear_func_t copy = ucs_linear_func_make(
            0, 1.0 / params->config->copy_bw);
    psel_lane_set_perf_t perf;
    psel_proto_stages_t stages;
    psel_lane_set_t set;
    ucs_status_t status;

    status = psel_proto_short_lane(params, PSEL_LANE_ROLE_AM,
                                   PSEL_LANE_CAP_AM_SHORT, &set, &perf, caps);
    if (status != UCS_OK) {
        return status;
    }
    if (set.lanes[0]->am.max_short < PSEL_EAGER_SHORT_HDR) {
        return psel_proto_unsupported(caps, "lane %s: short AM holds no "
                                      "payload", set.lanes[0]->name);
    }

    /* the CPU copies the payload into the send and out of the receive
     * buffers, as for bcopy */
    psel_proto_am_stages(&perf, PSEL_OP_CLASS_SHORT, copy, copy, &stages);
    psel_proto_add_range(caps,
                         set.lanes[0]->am.max_short - PSEL_EAGER_SHORT_HDR,
                         &stages, SIZE_MAX);
    psel_proto_set_lanes(&set, NULL,
                         caps->ranges[caps->num_ranges - 1].max_length, 0,
                         caps);
    return UCS_OK;
}

static ucs_status_t psel_egr_bcopy_init(const psel_proto_init_params_t *params,
                                        psel_proto_caps_t *caps)
{
    psel_lane_set_perf_t perf;
    psel_proto_stages_t stages;
    ucs_linear_func_t copy;
    psel_lane_set_t set;
    ucs_status_t status;
    size_t frag_size;

    status = psel_proto_am_bcopy_setup(params, PSEL_EAGER_HDR, &copy, &set,
                                       &perf, &frag_size, caps);
    if (status != UCS_OK) {
        return status;
    }

    /* pack on the sender and unpack on the receiver: a copy each */
    psel_proto_am_stages(&perf, PSEL_OP_CLASS_BCOPY, copy, copy, &stages);
    psel_proto_add_frag_ranges(caps, &stages, frag_size);
    psel_proto_set_lanes(&set, NULL, frag_size, 0, caps);
    return UCS_OK;
}

static ucs_status_t psel_egr_zcopy_init(const psel_proto_init_params_t *params,
                                        psel_proto_caps_t *caps)
{
    const psel_config_t *config = params->config;
    psel_lane_set_perf_t perf;
    psel_proto_stages_t stages;
    ucs_linear_func_t copy_out;
    psel_lane_set_t set;
    ucs_status_t status;
    size_t frag_size, min_length;

    status = psel_proto_apply_thresh(config->zcopy_thresh,
                                     "UCX_PSEL_ZCOPY_THRESH", 1, caps);
    if (status != UCS_OK) {
        return status;
    }

    status = psel_proto_lane_set(params, PSEL_LANE_ROLE_AM_BW,
                                 PSEL_LANE_CAP_AM_ZCOPY,
                                 config->max_eager_lanes, &set, &perf, caps);
    if (status != UCS_OK) {
        return status;
    }

    status = psel_proto_check_zcopy(params, &set, PSEL_LANE_CAP_AM_ZCOPY,
                                    caps);
    if (status != UCS_OK) {
        return status;
    }
    /* the receiver copies the message out of the transport buffer into
     * the buffer's memory */
    status = psel_proto_copy_time(params, 0, &copy_out, NULL, caps);
    if (status != UCS_OK) {
        return status;
    }
    status = psel_proto_frag_sizes(&set, PSEL_LANE_CAP_AM_ZCOPY,
                                   PSEL_EAGER_HDR, &min_length, &frag_size,
                                   caps);
    if (status != UCS_OK) {
        return status;
    }

    /* seed: ecost + x·egro + x/ebw + eover, egro with the copy-out: the
     * sender registers, the receiver copies the message out */
    psel_proto_am_stages(&perf, PSEL_OP_CLASS_ZCOPY, perf.reg_cost, copy_out,
                    &stages);
    caps->min_length = min_length;
    psel_proto_add_frag_ranges(caps, &stages, frag_size);
    psel_proto_set_lanes(&set, NULL, frag_size, 1, caps);
    return UCS_OK;
}

static const psel_proto_lanes_priv_t *psel_egr_priv(const psel_proto_req_t *req)
{
    return (const psel_proto_lanes_priv_t*)req->priv;
}

static uct_ep_h psel_egr_ep(const psel_proto_req_t *req)
{
    return req->ep->uct_eps[psel_egr_priv(req)->lanes[0]];
}

static ucs_status_t psel_egr_short_progress(psel_proto_req_t *req)
{
    return psel_egr_short_send(psel_egr_ep(req), req->tag, req->buffer,
                               req->length);
}

/* A message that fits one fragment goes as UCP's eager-only messages do:
 * under EAGER_SHORT's 8-byte header (the tag), whatever the UCT call, so
 * its payload sits where UCP's does in the transport buffer. Longer ones
 * go as a first fragment and later ones. */
static int psel_egr_is_whole(const psel_proto_req_t *req)
{
    return (req->offset == 0) &&
           (req->length <= psel_egr_priv(req)->frag_size);
}

static uint8_t psel_egr_am_id(const psel_proto_req_t *req)
{
    if (psel_egr_is_whole(req)) {
        return PSEL_AM_ID_EAGER_SHORT;
    }
    return (req->offset == 0) ? PSEL_AM_ID_EAGER_FIRST :
                                PSEL_AM_ID_EAGER_MIDDLE;
}

/* The header of the next fragment, for psel_egr_am_id(); @return its
 * size. */
static size_t psel_egr_hdr_pack(const psel_proto_req_t *req, void *dest)
{
    if (psel_egr_is_whole(req)) {
        psel_wire_put64(dest, req->tag);
        return PSEL_EAGER_SHORT_HDR;
    }
    if (req->offset == 0) {
        psel_eager_first_pack(dest, req->tag, req->ep->id, req->msg_id,
                              req->length);
        return PSEL_EAGER_FIRST_HDR;
    }
    psel_eager_middle_pack(dest, req->ep->id, req->msg_id, req->offset);
    return PSEL_EAGER_MIDDLE_HDR;
}

/* Packs the next fragment: the first carries the tag and the total size,
 * later ones their offset; the payload follows the header. */
static size_t psel_egr_bcopy_pack(void *dest, void *arg)
{
    psel_proto_req_t *req = arg;
    size_t frag_size      = psel_egr_priv(req)->frag_size;
    size_t len            = ucs_min(frag_size, req->length - req->offset);
    size_t hdr_len        = psel_egr_hdr_pack(req, dest);

    memcpy(UCS_PTR_BYTE_OFFSET(dest, hdr_len),
           UCS_PTR_BYTE_OFFSET(req->buffer, req->offset), len);
    return hdr_len + len;
}

static ucs_status_t psel_egr_bcopy_progress(psel_proto_req_t *req)
{
    size_t frag_size = psel_egr_priv(req)->frag_size;
    uint8_t am_id    = psel_egr_am_id(req);
    ssize_t packed;

    packed = uct_ep_am_bcopy(psel_egr_ep(req), am_id, psel_egr_bcopy_pack,
                             req, 0);
    if (packed < 0) {
        return (ucs_status_t)packed;
    }
    req->offset += ucs_min(frag_size, req->length - req->offset);
    return (req->offset == req->length) ? UCS_OK : UCS_INPROGRESS;
}

/* Ends a zero-copy send: releases the registration, reports the status. */
static ucs_status_t psel_egr_zcopy_finish(psel_proto_req_t *req)
{
    uint8_t lane        = psel_egr_priv(req)->lanes[0];
    ucs_status_t status = req->comp.status;

    if (req->memh != NULL) {
        uct_md_mem_dereg(req->ep->lane_info[lane].iface->md, req->memh);
        req->memh = NULL;
    }
    return status;
}

static void psel_egr_zcopy_completed(uct_completion_t *comp)
{
    psel_proto_req_t *req = ucs_container_of(comp, psel_proto_req_t, comp);

    req->ep->worker->send_complete(req, psel_egr_zcopy_finish(req));
}

static ucs_status_t psel_egr_zcopy_progress(psel_proto_req_t *req)
{
    size_t frag_size = psel_egr_priv(req)->frag_size;
    uint8_t lane     = psel_egr_priv(req)->lanes[0];
    size_t len       = ucs_min(frag_size, req->length - req->offset);
    uint8_t hdr[PSEL_EAGER_FIRST_HDR];
    ucs_status_t status;
    unsigned hdr_len;
    uint8_t am_id;
    uct_iov_t iov;

    if (req->comp.func == NULL) {
        /* first call: register (where the memory domain does: tcp from
         * UCX 1.20 sends unregistered memory), and hold one count until
         * all is posted */
        if ((req->length > 0) && req->ep->lane_info[lane].iface->mem_reg) {
            status = uct_md_mem_reg(req->ep->lane_info[lane].iface->md,
                                    (void*)req->buffer,
                                    req->length, UCT_MD_MEM_ACCESS_LOCAL_READ,
                                    &req->memh);
            if (status != UCS_OK) {
                return status;
            }
        }
        req->comp.func   = psel_egr_zcopy_completed;
        req->comp.count  = 1;
        req->comp.status = UCS_OK;
    }

    am_id      = psel_egr_am_id(req);
    hdr_len    = psel_egr_hdr_pack(req, hdr);
    iov.buffer = (void*)UCS_PTR_BYTE_OFFSET(req->buffer, req->offset);
    iov.length = len;
    iov.memh   = req->memh;
    iov.stride = 0;
    iov.count  = 1;

    ++req->comp.count;
    status = uct_ep_am_zcopy(req->ep->uct_eps[lane], am_id, hdr, hdr_len,
                             &iov, (len > 0) ? 1 : 0, 0, &req->comp);
    if (status != UCS_INPROGRESS) {
        --req->comp.count; /* done at once, or not posted */
        if (UCS_STATUS_IS_ERR(status)) {
            if ((status != UCS_ERR_NO_RESOURCE) && (req->offset == 0)) {
                psel_egr_zcopy_finish(req);
            }
            return status;
        }
    }

    req->offset += len;
    if (req->offset < req->length) {
        return UCS_INPROGRESS;
    }
    /* all posted: drop our count; done now, or when the last completes */
    if (--req->comp.count == 0) {
        return psel_egr_zcopy_finish(req);
    }
    return UCS_INPROGRESS;
}

/* Peer failure or endpoint close: nothing more is posted; fragments in
 * flight complete it (their last completion reports @a status). */
static void psel_egr_zcopy_abort(psel_proto_req_t *req, ucs_status_t status,
                                 unsigned flags)
{
    if (req->comp.func != NULL) {
        if (req->offset < req->length) {
            --req->comp.count;          /* the hold of a send not all posted */
            req->offset = req->length;
        }
        if (flags & PSEL_PROTO_ABORT_FORCE) {
            req->comp.count = 0;        /* the UCT endpoints are gone */
        }
        req->comp.status = status;
        if (req->comp.count > 0) {
            return; /* psel_egr_zcopy_completed() completes it */
        }
        psel_egr_zcopy_finish(req);
    }
    req->ep->worker->send_complete(req, status);
}

/* Back to the first call, while no fragment went out. */
static ucs_status_t psel_egr_zcopy_reset(psel_proto_req_t *req)
{
    if ((req->offset > 0) || (req->comp.count > 1)) {
        return UCS_ERR_BUSY;
    }
    psel_egr_zcopy_finish(req);
    req->comp.func = NULL;
    return UCS_OK;
}

const psel_proto_t psel_proto_egr_short = {
    .name     = "egr/short",
    .desc     = "eager short",
    .op_mask  = UCS_BIT(PSEL_OP_TAG_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM),
    .flags    = PSEL_PROTO_FLAG_INLINE,
    .init     = psel_egr_short_init,
    .progress = psel_egr_short_progress
};

const psel_proto_t psel_proto_egr_bcopy = {
    .name     = "egr/bcopy",
    .desc     = "eager copy-in copy-out",
    .op_mask  = UCS_BIT(PSEL_OP_TAG_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM_BW),
    .flags    = PSEL_PROTO_FLAG_INLINE,
    .init     = psel_egr_bcopy_init,
    .progress = psel_egr_bcopy_progress
};

const psel_proto_t psel_proto_egr_zcopy = {
    .name     = "egr/zcopy",
    .desc     = "eager zero-copy copy-out",
    .op_mask  = UCS_BIT(PSEL_OP_TAG_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM_BW),
    .init     = psel_egr_zcopy_init,
    .progress = psel_egr_zcopy_progress,
    .abort    = psel_egr_zcopy_abort,
    .reset    = psel_egr_zcopy_reset
};

/*
 * Active messages (ucp_am_send_nbx) go by the same eager machinery as tag
 * sends, with UCP's active-message names: the same lanes and costs, cost
 * model only (protosel's data path sends tags). An eager active message
 * of more than one fragment is left to rendezvous: UCP assembles it in a
 * buffer it allocates per message (ucp_am_long_first_handler), a cost
 * protosel does not model (docs/decisions.md).
 */
static ucs_status_t psel_am_one_fragment(ucs_status_t status,
                                         psel_proto_caps_t *caps)
{
    size_t frag_size;
    unsigned i;

    if (status != UCS_OK) {
        return status;
    }
    frag_size = ((const psel_proto_lanes_priv_t*)caps->priv)->frag_size;
    for (i = 0; i < caps->num_ranges; ++i) {
        if (caps->ranges[i].max_length >= frag_size) {
            caps->ranges[i].max_length = frag_size;
            caps->num_ranges           = i + 1;
        }
    }
    return UCS_OK;
}

static ucs_status_t psel_am_egr_bcopy_init(const psel_proto_init_params_t *params,
                                           psel_proto_caps_t *caps)
{
    return psel_am_one_fragment(psel_egr_bcopy_init(params, caps), caps);
}

static ucs_status_t psel_am_egr_zcopy_init(const psel_proto_init_params_t *params,
                                           psel_proto_caps_t *caps)
{
    return psel_am_one_fragment(psel_egr_zcopy_init(params, caps), caps);
}

const psel_proto_t psel_proto_am_egr_short = {
    .name       = "am/egr/short",
    .twin       = "egr/short",
    .desc       = "active message eager short",
    .op_mask    = UCS_BIT(PSEL_OP_AM_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM),
    .init       = psel_egr_short_init
};

const psel_proto_t psel_proto_am_egr_bcopy = {
    .name       = "am/egr/bcopy",
    .twin       = "egr/bcopy",
    .desc       = "active message eager copy-in copy-out",
    .op_mask    = UCS_BIT(PSEL_OP_AM_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM_BW),
    .init       = psel_am_egr_bcopy_init
};

const psel_proto_t psel_proto_am_egr_zcopy = {
    .name       = "am/egr/zcopy",
    .twin       = "egr/zcopy",
    .desc       = "active message eager zero-copy",
    .op_mask    = UCS_BIT(PSEL_OP_AM_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM_BW),
    .init       = psel_am_egr_zcopy_init
};

int psel_proto_egr_short_lane(const psel_proto_t *proto, const void *priv)
{
    if (proto != &psel_proto_egr_short) {
        return -1;
    }
    return ((const psel_proto_lanes_priv_t*)priv)->lanes[0];
}
