/*
 * The protocol tier's adapter of UCX 1.18 and later (proto_tier_int.h).
 * UCP asks each protocol's probe() to add its instances, each with a
 * ucp_proto_perf_t (segments of per-factor linear functions), and
 * flattens each into one line per segment: the sum of the factors, or for
 * a streaming send (UCP_OP_ATTR_FLAG_MULTI_SEND) their maximum.
 *
 * The wrapper runs UCP's probe, then replaces the perf of every instance
 * it added: protosel's line of each piece in one factor (LOCAL_TL), which
 * the sum and the maximum both give back, and the flat lines made again
 * as UCP makes them. The perf itself is replaced, not only the flat
 * lines: the rendezvous control protocols build theirs from the remote
 * protocol's perf, and the pipeline protocols read it too.
 *
 * tag/rndv and rndv/rtr add an instance per protocol their peer may run
 * (PSEL_UCP_MAP_REMOTE): each takes the line of the data protocol at the
 * end of that chain (rndv/get/zcopy, or through an RTR rndv/put/zcopy,
 * rndv/am/bcopy or rndv/am/zcopy).
 */
/* UCX's config.h of that tree comes first, by -include (Makefile.inc) */

#include "proto_tier_int.h"

#include <ucp/proto/proto_perf.h>
#include <ucp/rndv/proto_rndv.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* Rendezvous control protocols in a chain (tag/rndv -> rndv/rtr -> data) */
#define PSEL_PT_MAX_CHAIN 4

const char psel_pt_era_name[] = "probe() and ucp_proto_perf_t (UCX 1.18 on)";

/* libucp's, by dlsym: the impl has no undefined UCP symbol */
static struct {
    ucs_status_t (*create)(const char *name, ucp_proto_perf_t **perf_p);
    void         (*destroy)(ucp_proto_perf_t *perf);
    ucs_status_t (*add_funcs)(ucp_proto_perf_t *perf, size_t start,
                              size_t end,
                              const ucp_proto_perf_factors_t perf_factors,
                              ucp_proto_perf_node_t *child_perf_node,
                              const char *title, const char *desc_fmt, ...);
    const char  *(*name)(const ucp_proto_perf_t *perf);
    ucs_status_t (*sum)(const ucp_proto_perf_t *perf,
                        ucp_proto_flat_perf_t **flat_perf_ptr);
    ucs_status_t (*envelope)(const ucp_proto_perf_t *perf, int convex,
                             ucp_proto_flat_perf_t **flat_perf_ptr);
    void         (*flat_destroy)(ucp_proto_flat_perf_t *flat_perf);
} psel_pt_perf;

int psel_pt_era_resolve(void *libucp, char *why, size_t max)
{
    static const struct {
        const char *name;
        size_t      offset;
    } funcs[] = {
        {"ucp_proto_perf_create",       ucs_offsetof(typeof(psel_pt_perf), create)},
        {"ucp_proto_perf_destroy",      ucs_offsetof(typeof(psel_pt_perf), destroy)},
        {"ucp_proto_perf_add_funcs",    ucs_offsetof(typeof(psel_pt_perf), add_funcs)},
        {"ucp_proto_perf_name",         ucs_offsetof(typeof(psel_pt_perf), name)},
        {"ucp_proto_perf_sum",          ucs_offsetof(typeof(psel_pt_perf), sum)},
        {"ucp_proto_perf_envelope",     ucs_offsetof(typeof(psel_pt_perf), envelope)},
        {"ucp_proto_flat_perf_destroy", ucs_offsetof(typeof(psel_pt_perf), flat_destroy)}
    };
    void *sym;
    unsigned i;

    for (i = 0; i < ucs_static_array_size(funcs); ++i) {
        sym = dlsym(libucp, funcs[i].name);
        if (sym == NULL) {
            snprintf(why, max, "the loaded libucp has no %s", funcs[i].name);
            return 0;
        }
        memcpy(UCS_PTR_BYTE_OFFSET(&psel_pt_perf, funcs[i].offset), &sym,
               sizeof(sym));
    }
    return 1;
}

static const void *
psel_pt_elem_priv(const ucp_proto_select_init_protocols_t *proto_init,
                  const ucp_proto_init_elem_t *elem)
{
    if (elem->priv_offset >= ucs_array_length(&proto_init->priv_buf)) {
        return NULL; /* no private data (UCX 1.22: an invalid offset) */
    }
    return &ucs_array_elem(&proto_init->priv_buf, elem->priv_offset);
}

/* The mapping of the data protocol a rendezvous control instance leads
 * to: the protocol its peer is expected to run, through an RTR's own
 * peer; NULL when that is one protosel does not map (a pipeline, a
 * memory-type or an rkey_ptr protocol) */
static const psel_ucp_map_entry_t *
psel_pt_remote_data(const ucp_proto_rndv_ctrl_priv_t *rpriv)
{
    const psel_ucp_map_entry_t *entry;
    const ucp_proto_t *remote;
    unsigned depth;

    for (depth = 0; (depth < PSEL_PT_MAX_CHAIN) && (rpriv != NULL); ++depth) {
        remote = rpriv->remote_proto_config.proto;
        entry  = (remote != NULL) ? psel_ucp_map_find(remote->name) : NULL;
        if ((entry == NULL) || (entry->kind == PSEL_UCP_MAP_LINE)) {
            return entry;
        } else if (entry->kind != PSEL_UCP_MAP_REMOTE) {
            return NULL;
        }
        rpriv = rpriv->remote_proto_config.priv;
    }
    return NULL;
}

/* Replace the perf of the instance @a elem of @a pt by protosel's lines */
static void psel_pt_elem_write(const psel_pt_proto_t *pt,
                               const psel_pt_select_ctx_t *sel,
                               const ucp_proto_select_init_protocols_t *proto_init,
                               ucp_proto_init_elem_t *elem)
{
    int multi = !!(psel_pt_param_op_attr(sel->select_param) &
                   UCP_OP_ATTR_FLAG_MULTI_SEND);
    psel_perf_type_t flavour = multi ? PSEL_PERF_MULTI : PSEL_PERF_SINGLE;
    ucp_proto_perf_factors_t factors = UCP_PROTO_PERF_FACTORS_INITIALIZER;
    psel_rt_line_t orig[PSEL_PT_MAX_RANGES], out[PSEL_PT_MAX_RANGES];
    unsigned index[PSEL_PT_MAX_RANGES];
    const ucp_proto_flat_perf_range_t *range;
    const psel_ucp_map_entry_t *data;
    ucp_proto_flat_perf_t *flat;
    ucp_proto_perf_t *perf;
    unsigned i, num_orig, count;
    size_t cfg_thresh, start;
    ucs_status_t status;

    data = pt->map;
    if (data->kind == PSEL_UCP_MAP_REMOTE) {
        data = psel_pt_remote_data(psel_pt_elem_priv(proto_init, elem));
        if (data == NULL) {
            return; /* a scheme protosel does not model: UCP's lines */
        }
    }

    /* UCP's flat lines of the instance: contiguous, else left as they are */
    num_orig = ucs_array_length(elem->flat_perf);
    if ((num_orig == 0) || (num_orig > PSEL_PT_MAX_RANGES)) {
        return;
    }
    for (i = 0; i < num_orig; ++i) {
        range = &ucs_array_elem(elem->flat_perf, i);
        if ((i > 0) && (range->start != orig[i - 1].max_length + 1)) {
            return;
        }
        orig[i].max_length              = range->end;
        orig[i].perf[PSEL_PERF_SINGLE]  = range->value;
        orig[i].perf[PSEL_PERF_MULTI]   = range->value;
    }
    start      = ucs_array_elem(elem->flat_perf, 0).start;
    cfg_thresh = elem->cfg_thresh;
    count      = psel_pt_new_lines(pt, data, sel, orig, num_orig, start, out,
                                   index, &cfg_thresh);
    if (count == 0) {
        return;
    }

    if (psel_pt_perf.create(psel_pt_perf.name(elem->perf), &perf) != UCS_OK) {
        return;
    }
    for (i = 0; i < count; ++i) {
        factors[UCP_PROTO_PERF_FACTOR_LOCAL_TL] = out[i].perf[flavour];
        status = psel_pt_perf.add_funcs(perf, start, out[i].max_length,
                                        factors, NULL, "protosel",
                                        "%s's line", (data->psel_name != NULL) ?
                                        data->psel_name : "rendezvous");
        if (status != UCS_OK) {
            goto err_destroy;
        }
        start = out[i].max_length + 1;
    }
    status = multi ? psel_pt_perf.envelope(perf, 0, &flat) :
                     psel_pt_perf.sum(perf, &flat);
    if (status != UCS_OK) {
        goto err_destroy;
    }

    psel_pt_perf.flat_destroy(elem->flat_perf);
    psel_pt_perf.destroy(elem->perf);
    elem->perf       = perf;
    elem->flat_perf  = flat;
    elem->cfg_thresh = cfg_thresh;
    return;

err_destroy:
    psel_pt_perf.destroy(perf);
}

static void psel_pt_probe(const ucp_proto_init_params_t *params)
{
    ucp_proto_select_init_protocols_t *proto_init = params->ctx;
    psel_pt_proto_t *pt = psel_pt_proto_by_id(params->proto_id);
    const psel_pt_select_ctx_t sel = {
        .worker        = params->worker,
        .ep_cfg_index  = params->ep_cfg_index,
        .ep_config_key = params->ep_config_key,
        .select_param  = params->select_param
    };
    unsigned first, i;

    if ((pt == NULL) || (pt->orig == NULL)) {
        return; /* cannot happen: only these are wrapped */
    }

    /* UCP's own probe first: it sets each instance's private configuration
     * (weighing multi-lane protocols' lanes by the measured rails), and may
     * itself select (rendezvous asks the remote protocols) */
    psel_pt_rails_apply(params->worker, params->ep_config_key);
    first = ucs_array_length(&proto_init->protocols);
    ((ucp_proto_probe_func_t)pt->orig)(params);
    for (i = first; i < ucs_array_length(&proto_init->protocols); ++i) {
        if (pt->map == NULL) {
            if (psel_pt_op_modelled(params->select_param)) {
                psel_pt_report_unmapped(pt, params->select_param);
            }
            break;
        }
        psel_pt_elem_write(pt, &sel, proto_init,
                           &ucs_array_elem(&proto_init->protocols, i));
    }
}

int psel_pt_era_wrapped(const psel_pt_proto_t *pt)
{
    return pt->proto->probe == psel_pt_probe;
}

int psel_pt_era_wrap(psel_pt_proto_t *pt)
{
    if (pt->proto->probe == NULL) {
        return 0;
    }
    pt->orig = (void*)pt->proto->probe;
    /* an aligned pointer store: a thread selecting right now sees the old
     * probe or the new, both valid */
    __atomic_store_n(&pt->proto->probe, psel_pt_probe, __ATOMIC_RELEASE);
    return 1;
}
