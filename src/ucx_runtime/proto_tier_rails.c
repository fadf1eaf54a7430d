/*
 * The protocol tier's measured rails.
 *
 * UCP splits a multi-lane protocol's message (rendezvous, put and get
 * zero-copy) over its lanes by the bandwidth each lane's iface estimates
 * (uct_iface_estimate_perf), and drops a lane slower than
 * 1/UCX_MULTI_LANE_MAX_RATIO of the fastest. That estimate is the device's
 * advertised speed: two rails that advertise the same speed get 50/50 even
 * when one of them is shaped or congested. Where the calibration measured a
 * device's rail (a rail that names no peer: an endpoint configuration
 * serves every peer), the ifaces of that device estimate the measured
 * bandwidth instead, so UCP's own code weighs and drops its lanes as
 * protosel's lanes do. Lanes and their order stay UCP's.
 *
 * How: each such iface gets a copy of its transport's internal operations
 * whose estimate_perf scales the bandwidths of the original's answer
 * (dedicated, shared and path alike, so their proportions stay UCP's) to
 * the measured figure, and a close that gives the copy back before the
 * iface goes. Only the iface's own pointers change: an aligned pointer
 * store, so a thread in the middle of a call sees the old table or the new.
 */
#include "proto_tier_int.h"

#include <ucp_proto_sel/calib.h>

#include <ucp/core/ucp_context.h>
#include <ucp/core/ucp_worker.inl>
#include <uct/base/uct_iface.h>
#include <ucs/debug/log_def.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* ifaces at once: a worker opens one per transport and device, and only
 * measured network devices take one */
#define PSEL_PT_RAIL_IFACES 64

typedef struct psel_pt_rail_iface {
    uct_iface_h                 iface;      /* NULL: free */
    uct_iface_internal_ops_t   *orig;       /* the transport's */
    uct_iface_internal_ops_t    ops;        /* orig's, estimate_perf ours */
    uct_iface_close_func_t      orig_close; /* the iface's own close */
    double                      bandwidth;  /* measured [B/s] */
} psel_pt_rail_iface_t;

static struct {
    pthread_mutex_t      lock;
    const psel_calib_t  *calib;     /* its rails; NULL: none */
    int                  say;       /* UCX_PSEL_PROTO_INFO=y */
    psel_pt_rail_iface_t ifaces[PSEL_PT_RAIL_IFACES];
    int                  said_full;
    char                 said[PSEL_CALIB_MAX_RAILS][64]; /* lanes told of */
} psel_pt_rails = {
    .lock = PTHREAD_MUTEX_INITIALIZER
};

static psel_pt_rail_iface_t *psel_pt_rail_of(uct_iface_h tl_iface)
{
    uct_base_iface_t *iface = ucs_derived_of(tl_iface, uct_base_iface_t);
    uct_iface_internal_ops_t *ops = iface->internal_ops;
    unsigned i;

    for (i = 0; i < PSEL_PT_RAIL_IFACES; ++i) {
        if (ops == &psel_pt_rails.ifaces[i].ops) {
            return &psel_pt_rails.ifaces[i];
        }
    }
    return NULL;
}

static void psel_pt_rail_scale(uct_ppn_bandwidth_t *bw, double scale)
{
    bw->dedicated *= scale;
    bw->shared    *= scale;
}

static ucs_status_t psel_pt_rail_estimate_perf(uct_iface_h tl_iface,
                                               uct_perf_attr_t *perf_attr)
{
    const psel_pt_rail_iface_t *rail =
            ucs_container_of(ucs_derived_of(tl_iface,
                                            uct_base_iface_t)->internal_ops,
                             psel_pt_rail_iface_t, ops);
    ucs_status_t status;
    double advertised, scale;

    status = rail->orig->iface_estimate_perf(tl_iface, perf_attr);
    if ((status != UCS_OK) ||
        !(perf_attr->field_mask & UCT_PERF_ATTR_FIELD_BANDWIDTH)) {
        return status;
    }
    advertised = perf_attr->bandwidth.dedicated + perf_attr->bandwidth.shared;
    if (advertised <= 0) {
        return status;
    }
    scale = rail->bandwidth / advertised;
    psel_pt_rail_scale(&perf_attr->bandwidth, scale);
#if PSEL_UCX_AT_LEAST(1, 20)
    if (perf_attr->field_mask & UCT_PERF_ATTR_FIELD_PATH_BANDWIDTH) {
        psel_pt_rail_scale(&perf_attr->path_bandwidth, scale);
    }
#endif
    return status;
}

static void psel_pt_rail_close(uct_iface_h tl_iface)
{
    uct_base_iface_t *iface = ucs_derived_of(tl_iface, uct_base_iface_t);
    psel_pt_rail_iface_t *rail;
    uct_iface_close_func_t close_func;

    pthread_mutex_lock(&psel_pt_rails.lock);
    rail = psel_pt_rail_of(tl_iface);
    /* cannot be NULL: only ifaces given a copy get this close */
    iface->internal_ops       = rail->orig;
    tl_iface->ops.iface_close = rail->orig_close;
    close_func                = rail->orig_close;
    rail->iface               = NULL;
    pthread_mutex_unlock(&psel_pt_rails.lock);
    close_func(tl_iface);
}

/* Say once per lane, with UCX_PSEL_PROTO_INFO=y, which bandwidth UCP now
 * weighs it by; under the lock */
static void psel_pt_rail_say(const char *lane, double bandwidth)
{
    char line[256];
    unsigned i;

    for (i = 0; (i < PSEL_CALIB_MAX_RAILS) && (psel_pt_rails.said[i][0] != '\0');
         ++i) {
        if (!strcmp(psel_pt_rails.said[i], lane)) {
            return;
        }
    }
    if (i == PSEL_CALIB_MAX_RAILS) {
        return;
    }
    ucs_strncpy_zero(psel_pt_rails.said[i], lane, sizeof(psel_pt_rails.said[i]));
    snprintf(line, sizeof(line), "protosel: %s: UCP weighs this lane by the "
             "calibration's measured rail, %.1f MB/s", lane,
             bandwidth / UCS_MBYTE);
    ucs_log_print_compact(line);
}

static void psel_pt_rail_install(uct_iface_h tl_iface, const char *lane,
                                 double bandwidth)
{
    uct_base_iface_t *iface = ucs_derived_of(tl_iface, uct_base_iface_t);
    psel_pt_rail_iface_t *rail = NULL;
    unsigned i;

    pthread_mutex_lock(&psel_pt_rails.lock);
    if (psel_pt_rail_of(tl_iface) != NULL) {
        goto out; /* another thread was first */
    }
    for (i = 0; (i < PSEL_PT_RAIL_IFACES) && (rail == NULL); ++i) {
        if (psel_pt_rails.ifaces[i].iface == NULL) {
            rail = &psel_pt_rails.ifaces[i];
        }
    }
    if (rail == NULL) {
        if (!psel_pt_rails.said_full) {
            psel_pt_rails.said_full = 1;
            ucs_warn("protosel: more than %d network ifaces open at once: "
                     "UCP weighs the others by their advertised bandwidth",
                     PSEL_PT_RAIL_IFACES);
        }
        goto out;
    }
    rail->iface                   = tl_iface;
    rail->orig                    = iface->internal_ops;
    rail->ops                     = *iface->internal_ops;
    rail->ops.iface_estimate_perf = psel_pt_rail_estimate_perf;
    rail->orig_close              = tl_iface->ops.iface_close;
    rail->bandwidth               = bandwidth;
    __atomic_store_n(&tl_iface->ops.iface_close, psel_pt_rail_close,
                     __ATOMIC_RELEASE);
    __atomic_store_n(&iface->internal_ops, &rail->ops, __ATOMIC_RELEASE);
    if (psel_pt_rails.say) {
        psel_pt_rail_say(lane, bandwidth);
    }
out:
    pthread_mutex_unlock(&psel_pt_rails.lock);
}

void psel_pt_rails_init(const psel_calib_t *calib, int say)
{
    psel_pt_rails.calib = ((calib != NULL) && (calib->num_rails > 0)) ? calib :
                                                                      NULL;
    psel_pt_rails.say   = say;
}

void psel_pt_rails_apply(ucp_worker_h worker, const ucp_ep_config_key_t *key)
{
    static const psel_resource_t any_peer; /* dev_addr "": no peer named */
    static const psel_resource_table_t no_peer;
    ucp_context_h context = worker->context;
    const uct_tl_resource_desc_t *tl;
    const psel_calib_rail_t *rail;
    ucp_worker_iface_t *wiface;
    ucp_rsc_index_t rsc_index;
    ucp_lane_index_t lane;
    char name[64];

    if (psel_pt_rails.calib == NULL) {
        return;
    }
    for (lane = 0; lane < key->num_lanes; ++lane) {
        rsc_index = key->lanes[lane].rsc_index;
        if ((rsc_index == UCP_NULL_RESOURCE) ||
            (rsc_index >= context->num_tls)) {
            continue;
        }
        wiface = ucp_worker_iface(worker, rsc_index);
        if ((wiface == NULL) || (wiface->iface == NULL) ||
            (psel_pt_rail_of(wiface->iface) != NULL)) {
            continue;
        }
        tl = &context->tl_rscs[rsc_index].tl_rsc;
        snprintf(name, sizeof(name), "%.31s/%.31s", tl->tl_name, tl->dev_name);
        rail = psel_calib_rail_find(psel_pt_rails.calib, name, &no_peer, &any_peer);
        if ((rail != NULL) && (rail->bandwidth > 0)) {
            psel_pt_rail_install(wiface->iface, name, rail->bandwidth);
        }
    }
}
