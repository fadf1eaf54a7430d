/*
 * The protocol tier's adapter of UCX 1.13-1.16 (proto_tier_int.h). UCP
 * asks each protocol's init() for its capabilities, one caps per
 * selection: the wrapper runs UCP's init, then writes protosel's lines
 * into the caps' perf ranges (single and multi flavour). From 1.14 a range
 * also has a CPU time and a perf node: the CPU time stays UCP's (protosel
 * has no such line; UCP adds it as a stage of its rendezvous), the node
 * goes (its figures would be UCP's, not the line's).
 */
/* UCX's config.h of that tree comes first, by -include (Makefile.inc) */

#include "proto_tier_int.h"

#include <dlfcn.h>
#include <string.h>

const char psel_pt_era_name[] = "init() and caps (UCX 1.13-1.16)";

#if PSEL_UCX_AT_LEAST(1, 14)
/* libucp's, by dlsym: the impl has no undefined UCP symbol */
static void (*psel_pt_node_deref)(ucp_proto_perf_node_t **node_p);
#endif

int psel_pt_era_resolve(void *libucp, char *why, size_t max)
{
#if PSEL_UCX_AT_LEAST(1, 14)
    psel_pt_node_deref = (void (*)(ucp_proto_perf_node_t**))
            dlsym(libucp, "ucp_proto_perf_node_deref");
    if (psel_pt_node_deref == NULL) {
        snprintf(why, max, "the loaded libucp has no "
                 "ucp_proto_perf_node_deref");
        return 0;
    }
#endif
    return 1;
}

/* Write protosel's lines into the caps UCP's init filled */
static void psel_pt_caps_write(const psel_pt_proto_t *pt,
                               const ucp_proto_init_params_t *params)
{
    const psel_pt_select_ctx_t sel = {
        .worker        = params->worker,
        .ep_cfg_index  = params->ep_cfg_index,
        .ep_config_key = params->ep_config_key,
        .select_param  = params->select_param
    };
    ucp_proto_caps_t *caps = params->caps;
    psel_rt_line_t orig[PSEL_PT_MAX_RANGES], out[PSEL_PT_MAX_RANGES];
    ucp_proto_perf_range_t old[PSEL_PT_MAX_RANGES];
    unsigned index[PSEL_PT_MAX_RANGES];
    unsigned i, t, count, num_old;
    size_t cfg_thresh;

    UCS_STATIC_ASSERT((int)PSEL_PERF_SINGLE == (int)UCP_PROTO_PERF_TYPE_SINGLE);
    UCS_STATIC_ASSERT((int)PSEL_PERF_MULTI == (int)UCP_PROTO_PERF_TYPE_MULTI);
    num_old = caps->num_ranges;
    if ((num_old == 0) || (num_old > PSEL_PT_MAX_RANGES)) {
        return;
    }
    for (i = 0; i < num_old; ++i) {
        old[i]             = caps->ranges[i];
        orig[i].max_length = caps->ranges[i].max_length;
        for (t = 0; t < PSEL_PERF_LAST; ++t) {
            orig[i].perf[t] = caps->ranges[i].perf[t];
        }
    }
    cfg_thresh = caps->cfg_thresh;
    count      = psel_pt_new_lines(pt, pt->map, &sel, orig, num_old,
                                   caps->min_length, out, index, &cfg_thresh);
    if (count == 0) {
        return;
    }

    for (i = 0; i < count; ++i) {
        caps->ranges[i]            = old[index[i]];
        caps->ranges[i].max_length = out[i].max_length;
        for (t = 0; t < PSEL_PERF_LAST; ++t) {
            caps->ranges[i].perf[t] = out[i].perf[t];
        }
#if PSEL_UCX_AT_LEAST(1, 14)
        caps->ranges[i].node = NULL;
#endif
    }
#if PSEL_UCX_AT_LEAST(1, 14)
    for (i = 0; i < num_old; ++i) {
        psel_pt_node_deref(&old[i].node);
    }
#endif
    caps->num_ranges = count;
    caps->cfg_thresh = cfg_thresh;
}

static ucs_status_t psel_pt_init(const ucp_proto_init_params_t *params)
{
    psel_pt_proto_t *pt = psel_pt_proto_by_name(params->proto_name);
    ucp_proto_init_func_t orig;
    ucs_status_t status;

    if ((pt == NULL) || (pt->orig == NULL)) {
        return UCS_ERR_UNSUPPORTED; /* cannot happen: only these are wrapped */
    }

    /* UCP's own init first: it sets the protocol's private configuration
     * (weighing multi-lane protocols' lanes by the measured rails), and may
     * itself select (rendezvous asks the remote protocols) */
    psel_pt_rails_apply(params->worker, params->ep_config_key);
    orig   = (ucp_proto_init_func_t)pt->orig;
    status = orig(params);
    if (status != UCS_OK) {
        return status;
    } else if (pt->map != NULL) {
        psel_pt_caps_write(pt, params);
    } else if (psel_pt_op_modelled(params->select_param)) {
        psel_pt_report_unmapped(pt, params->select_param);
    }
    return status;
}

int psel_pt_era_wrapped(const psel_pt_proto_t *pt)
{
    return pt->proto->init == psel_pt_init;
}

int psel_pt_era_wrap(psel_pt_proto_t *pt)
{
    if (pt->proto->init == NULL) {
        return 0;
    }
    pt->orig = (void*)pt->proto->init;
    /* an aligned pointer store: a thread selecting right now sees the old
     * init or the new, both valid */
    __atomic_store_n(&pt->proto->init, psel_pt_init, __ATOMIC_RELEASE);
    return 1;
}
