/*
 * Shared parts of the protocol cost definitions; see proto_common.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_common.h"

#include <lane_select/lane_engine.h>
#include <ucs/datastruct/string_buffer.h>

#include <ucs/sys/math.h>
#include <ucs/sys/string.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

ucs_status_t psel_proto_unsupported(psel_proto_caps_t *caps, const char *fmt,
                                    ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(caps->desc, sizeof(caps->desc), fmt, ap);
    va_end(ap);
    return UCS_ERR_UNSUPPORTED;
}

static const char *psel_lane_caps_name(uint32_t lane_caps)
{
    switch (lane_caps) {
    case PSEL_LANE_CAP_AM_SHORT:  return "am_short";
    case PSEL_LANE_CAP_AM_BCOPY:  return "am_bcopy";
    case PSEL_LANE_CAP_AM_ZCOPY:  return "am_zcopy";
    case PSEL_LANE_CAP_PUT_ZCOPY: return "put_zcopy";
    case PSEL_LANE_CAP_GET_ZCOPY: return "get_zcopy";
    case PSEL_LANE_CAP_PUT_SHORT: return "put_short";
    case PSEL_LANE_CAP_PUT_BCOPY: return "put_bcopy";
    case PSEL_LANE_CAP_GET_BCOPY: return "get_bcopy";
    case PSEL_LANE_CAP_AMO:       return "atomics";
    default:                      return "required capabilities";
    }
}

ucs_linear_func_t psel_proto_reg_cost(const psel_config_t *config,
                                      const psel_lane_t *lane)
{
    if (!(lane->caps & PSEL_LANE_CAP_MEM_REG)) {
        return ucs_linear_func_make(0, 0);
    }
    if (isinf(config->rcache_overhead)) {
        return lane->reg_cost;
    }
    /* a cache hit: a lookup, whatever the MD would charge to register */
    return ucs_linear_func_make(config->rcache_overhead, 0);
}

/* Take the larger of each of @a op and one lane's per-operation costs; a
 * lane without them costs its latency and overheads for every class */
static void psel_proto_lane_op_max(const psel_lane_t *lane,
                                   psel_op_cost_t op[PSEL_OP_CLASS_LAST])
{
    psel_op_cost_t cost;
    unsigned i;

    for (i = 0; i < PSEL_OP_CLASS_LAST; ++i) {
        if (lane->op_valid) {
            cost = lane->op[i];
        } else {
            cost.latency   = lane->latency;
            cost.send_pre  = lane->overhead_send;
            cost.send_post = 0;
            cost.recv      = lane->overhead_recv;
        }
        op[i].latency   = ucs_max(op[i].latency, cost.latency);
        op[i].send_pre  = ucs_max(op[i].send_pre, cost.send_pre);
        op[i].send_post = ucs_max(op[i].send_post, cost.send_post);
        op[i].recv      = ucs_max(op[i].recv, cost.recv);
    }
}

ucs_status_t psel_proto_lane_set(const psel_proto_init_params_t *params,
                                 psel_lane_role_t role, uint32_t lane_caps,
                                 unsigned max_lanes, psel_lane_set_t *subset,
                                 psel_lane_set_perf_t *perf,
                                 psel_proto_caps_t *caps_out)
{
    ucs_memory_type_t mem_type = params->buf_type.mem_type;
    const psel_lane_set_t *set = &params->lanes->role[role];
    const psel_lane_t *lane;
    unsigned i;

    if ((role == PSEL_LANE_ROLE_RMA_BW) && (mem_type < UCS_MEMORY_TYPE_LAST) &&
        (mem_type != UCS_MEMORY_TYPE_HOST)) {
        /* the rma_bw lanes chosen for this memory type (lane.h); host
         * memory's are the role's own */
        set = &params->lanes->rma_bw_mem[mem_type];
        if (set->count == 0) {
            return psel_proto_unsupported(caps_out, "no rma_bw lane registers "
                                          "%s memory",
                                          ucs_memory_type_names[mem_type]);
        }
    }
    if (set->count == 0) {
        return psel_proto_unsupported(caps_out, "no %s lane",
                                      psel_lane_role_name(role));
    }

    /* the lanes of the role that can run this protocol, best first */
    memset(subset, 0, sizeof(*subset));
    for (i = 0; (i < set->count) && (subset->count < max_lanes); ++i) {
        if ((set->lanes[i]->caps & lane_caps) == lane_caps) {
            subset->lanes[subset->count]  = set->lanes[i];
            subset->shares[subset->count] = set->shares[i];
            ++subset->count;
        }
    }
    if (subset->count == 0) {
        return psel_proto_unsupported(caps_out, "%s lane %s has no %s",
                                      psel_lane_role_name(role),
                                      set->lanes[0]->name,
                                      psel_lane_caps_name(lane_caps));
    }

    /* lanes run in parallel with byte shares in proportion to bandwidth, so
     * the set moves data at the summed bandwidth and waits for its slowest
     * lane's latency and overheads */
    memset(perf, 0, sizeof(*perf));
    for (i = 0; i < subset->count; ++i) {
        lane             = subset->lanes[i];
        perf->bandwidth += lane->bandwidth;
        psel_proto_lane_op_max(lane, perf->op);
        /* one registration per memory domain, however many lanes use it */
        if (psel_lane_set_md_is_new(subset, i)) {
            ucs_linear_func_add_inplace(&perf->reg_cost,
                                        psel_proto_reg_cost(params->config,
                                                            lane));
        }
    }
    return UCS_OK;
}

void psel_proto_set_lanes(const psel_lane_set_t *set, const psel_lane_t *ctrl,
                          size_t frag_size, int zcopy, psel_proto_caps_t *caps)
{
    psel_proto_lanes_priv_t *priv = (psel_proto_lanes_priv_t*)caps->priv;
    unsigned count                = set->count;
    double total                  = 0;
    unsigned i;
    UCS_STRING_BUFFER_FIXED(desc, caps->desc, sizeof(caps->desc));
    UCS_STRING_BUFFER_FIXED(key, caps->lanes, sizeof(caps->lanes));

    UCS_STATIC_ASSERT(sizeof(*priv) <= PSEL_PROTO_PRIV_MAX);
    memset(priv, 0, sizeof(*priv));
    for (i = 0; i < count; ++i) {
        total += set->shares[i];
    }
    for (i = 0; i < count; ++i) {
        priv->lanes[i]  = set->lanes[i]->index;
        priv->shares[i] = (total > 0) ? (set->shares[i] / total) :
                                        (1.0 / count);
        if (count == 1) {
            ucs_string_buffer_appendf(&desc, "%s", set->lanes[i]->name);
        } else {
            ucs_string_buffer_appendf(&desc, "%s%s %.0f%%",
                                      (i > 0) ? " + " : "",
                                      set->lanes[i]->name,
                                      100.0 * priv->shares[i]);
        }
        ucs_string_buffer_appendf(&key, "%s%s", (i > 0) ? "+" : "",
                                  set->lanes[i]->name);
    }
    priv->num_lanes = count;
    priv->frag_size = frag_size;
    priv->ctrl_lane = (ctrl != NULL) ? ctrl->index : priv->lanes[0];
    priv->zcopy     = zcopy;
    caps->priv_size = sizeof(*priv);
    if (!zcopy) {
        caps->flags |= PSEL_PROTO_CAP_COPY;
    }
}

int psel_proto_buffer_is_host(const psel_proto_init_params_t *params)
{
    /* the CPU reaches it: UCX's UCP_MEM_IS_ACCESSIBLE_FROM_CPU, as the
     * installed UCX defines it (host and rocm-managed in 1.13) */
    return (params->buf_type.mem_type < UCS_MEMORY_TYPE_LAST) &&
           (UCS_BIT(params->buf_type.mem_type) &
            UCS_MEMORY_TYPES_CPU_ACCESSIBLE);
}

ucs_status_t psel_proto_copy_time(const psel_proto_init_params_t *params,
                                  int staging, ucs_linear_func_t *copy,
                                  const char **engine, psel_proto_caps_t *caps)
{
    ucs_memory_type_t mem_type = params->buf_type.mem_type;
    const psel_memtype_copy_t *engines;

    if (psel_proto_buffer_is_host(params)) {
        /* the CPU's memcpy, as UCX's bcopy_bw (ucp_proto_common_buffer_
         * copy_time for host to host) */
        *copy = ucs_linear_func_make(0, 1.0 / params->config->copy_bw);
        if (engine != NULL) {
            *engine = "memcpy";
        }
        return UCS_OK;
    }
    if (mem_type >= UCS_MEMORY_TYPE_LAST) {
        return psel_proto_unsupported(caps, "unknown memory type %d",
                                      mem_type);
    }

    /* another memory type: its copy engine's latency, overhead and
     * bandwidth (ucp_proto_common_buffer_copy_time with the memory-type
     * endpoint's rma lane for short copies, its rma_bw lane for staging) */
    engines = staging ? params->lanes->copy_zcopy : params->lanes->copy_short;
    if (engines[mem_type].name[0] == '\0') {
        return psel_proto_unsupported(caps, "no transport copies %s memory "
                                      "to host memory (%s)",
                                      ucs_memory_type_names[mem_type],
                                      staging ? "put/get zcopy" :
                                                "put/get short");
    }
    *copy = engines[mem_type].time;
    if (engine != NULL) {
        *engine = engines[mem_type].name;
    }
    return UCS_OK;
}

ucs_status_t psel_proto_check_zcopy(const psel_proto_init_params_t *params,
                                    const psel_lane_set_t *set,
                                    uint32_t lane_cap, psel_proto_caps_t *caps)
{
    psel_buffer_type_t bt = params->buf_type;
    unsigned i, count     = set->count;
    size_t max_iov;

    if (bt.dt_class == PSEL_DT_GENERIC) {
        return psel_proto_unsupported(caps, "generic datatypes need pack "
                                      "callbacks, no zero-copy");
    }
    for (i = 0; i < count; ++i) {
        if (!(set->lanes[i]->reg_mem_types & UCS_BIT(bt.mem_type))) {
            return psel_proto_unsupported(caps, "lane %s cannot register %s "
                                          "memory", set->lanes[i]->name,
                                          ucs_memory_type_names[bt.mem_type]);
        }
        max_iov = psel_lane_op_limits(set->lanes[i], lane_cap)->max_iov;
        if ((bt.dt_class == PSEL_DT_IOV) && (bt.sg_count > max_iov)) {
            return psel_proto_unsupported(caps, "lane %s: %s takes at most "
                                          "%zu iov entries, not %u",
                                          set->lanes[i]->name,
                                          psel_lane_caps_name(lane_cap),
                                          max_iov, bt.sg_count);
        }
    }
    return UCS_OK;
}

ucs_status_t psel_proto_short_lane(const psel_proto_init_params_t *params,
                                   psel_lane_role_t role, uint32_t lane_cap,
                                   psel_lane_set_t *set,
                                   psel_lane_set_perf_t *perf,
                                   psel_proto_caps_t *caps_out)
{
    if (!psel_proto_buffer_is_host(params) ||
        (params->buf_type.dt_class == PSEL_DT_GENERIC) ||
        (params->buf_type.sg_count != 1)) {
        return psel_proto_unsupported(caps_out,
                                      "needs one contiguous host buffer");
    }
    return psel_proto_lane_set(params, role, lane_cap, 1, set, perf, caps_out);
}

ucs_status_t psel_proto_frag_sizes(const psel_lane_set_t *set,
                                   uint32_t lane_cap, size_t hdr,
                                   size_t *min_length, size_t *frag_size,
                                   psel_proto_caps_t *caps)
{
    const uint32_t bcopy_caps = PSEL_LANE_CAP_AM_BCOPY |
                                PSEL_LANE_CAP_PUT_BCOPY |
                                PSEL_LANE_CAP_GET_BCOPY;
    int is_bcopy              = !!(lane_cap & bcopy_caps);
    const psel_op_limits_t *limits;
    size_t min = 0, max = SIZE_MAX, lane_max;
    unsigned i;

    for (i = 0; i < set->count; ++i) {
        limits   = psel_lane_op_limits(set->lanes[i], lane_cap);
        lane_max = is_bcopy ? limits->max_bcopy : limits->max_zcopy;
        if (lane_max <= hdr) {
            return psel_proto_unsupported(caps, "lane %s: %s holds no "
                                          "payload", set->lanes[i]->name,
                                          psel_lane_caps_name(lane_cap));
        }
        max = ucs_min(max, lane_max - hdr);
        if (!is_bcopy) {
            min = ucs_max(min, limits->min_zcopy);
        }
    }
    *min_length = min;
    *frag_size  = max;
    return UCS_OK;
}

ucs_status_t psel_proto_apply_thresh(size_t thresh, const char *var_name,
                                     unsigned priority, psel_proto_caps_t *caps)
{
    caps->cfg_priority = priority;
    if (thresh == UCS_MEMUNITS_INF) {
        return psel_proto_unsupported(caps, "disabled by %s=inf", var_name);
    }
    if (thresh != UCS_MEMUNITS_AUTO) {
        caps->cfg_thresh = thresh;
    }
    return UCS_OK;
}

void psel_proto_add_range(psel_proto_caps_t *caps, size_t max_length,
                          const psel_proto_stages_t *stages, size_t frag_size)
{
    /* fragments per byte: each after the first costs its CPU again */
    double per_byte = (frag_size >= PSEL_FRAG_UNLIMITED) ? 0 :
                      (1.0 / (double)frag_size);
    size_t lo       = (caps->num_ranges > 0) ?
                      (caps->ranges[caps->num_ranges - 1].max_length + 1) :
                      caps->min_length;
    ucs_linear_func_t single, multi[3];
    psel_perf_segment_t segments[3];
    psel_perf_range_t *range;
    unsigned i, count, room;

    /* single: a message alone waits for the latencies and every stage */
    single = ucs_linear_func_add3(stages->send, stages->wire, stages->recv);
    single.c += stages->latency;
    single.m += (stages->frag_send + stages->frag_recv) * per_byte;

    /* multi: the stages as a stream sees them, each host's CPU with what
     * it spends after its posts and per fragment */
    multi[0]    = stages->send;
    multi[0].c += stages->send_post;
    multi[0].m += stages->frag_send * per_byte;
    multi[1]    = stages->wire;
    multi[2]    = stages->recv;
    multi[2].c += stages->recv_post;
    multi[2].m += stages->frag_recv * per_byte;

    /* one range per stage that is the slowest somewhere */
    count = psel_perf_envelope(multi, 3, ucs_min(lo, max_length), max_length,
                               segments);
    room  = PSEL_PROTO_MAX_RANGES - caps->num_ranges;
    for (i = 0; (i < count) && (i < room); ++i) {
        range                         = &caps->ranges[caps->num_ranges++];
        range->max_length             = segments[i].max_length;
        range->perf[PSEL_PERF_SINGLE] = single;
        range->perf[PSEL_PERF_MULTI]  = multi[segments[i].index];
    }
    /* out of ranges (no built-in protocol gets here): the last range takes
     * the rest with a bound of the remaining pieces, max(c) + max(m)·x */
    for (; i < count; ++i) {
        range             = &caps->ranges[caps->num_ranges - 1];
        range->max_length = max_length;
        range->perf[PSEL_PERF_MULTI].c = ucs_max(range->perf[PSEL_PERF_MULTI].c,
                                                 multi[segments[i].index].c);
        range->perf[PSEL_PERF_MULTI].m = ucs_max(range->perf[PSEL_PERF_MULTI].m,
                                                 multi[segments[i].index].m);
    }
}

void psel_proto_am_stages(const psel_lane_set_perf_t *perf, psel_op_class_t op,
                          ucs_linear_func_t send, ucs_linear_func_t recv,
                          psel_proto_stages_t *stages)
{
    const psel_op_cost_t *cost = &perf->op[op];

    memset(stages, 0, sizeof(*stages));
    stages->latency   = cost->latency;
    stages->send      = send;
    stages->send.c   += cost->send_pre;
    stages->send_post = cost->send_post;
    stages->wire      = ucs_linear_func_make(0, 1.0 / perf->bandwidth);
    stages->recv      = recv;
    stages->recv.c   += cost->recv;
    stages->frag_send = cost->send_pre + cost->send_post;
}

ucs_status_t psel_proto_am_bcopy_setup(const psel_proto_init_params_t *params,
                                       size_t hdr_len, ucs_linear_func_t *copy,
                                       psel_lane_set_t *set,
                                       psel_lane_set_perf_t *perf,
                                       size_t *frag_size,
                                       psel_proto_caps_t *caps)
{
    ucs_status_t status;
    size_t min_length;

    /* pack and unpack: memcpy, or the memory-type copy engine (gdr_copy or
     * cuda_copy for cuda memory) as UCX's bcopy protocols do */
    status = psel_proto_copy_time(params, 0, copy, NULL, caps);
    if (status != UCS_OK) {
        return status;
    }
    status = psel_proto_lane_set(params, PSEL_LANE_ROLE_AM_BW,
                                 PSEL_LANE_CAP_AM_BCOPY, 1, set, perf, caps);
    if (status != UCS_OK) {
        return status;
    }
    return psel_proto_frag_sizes(set, PSEL_LANE_CAP_AM_BCOPY, hdr_len,
                                 &min_length, frag_size, caps);
}

void psel_proto_add_frag_ranges(psel_proto_caps_t *caps,
                                const psel_proto_stages_t *stages,
                                size_t frag_size)
{
    if (frag_size < PSEL_FRAG_UNLIMITED) {
        psel_proto_add_range(caps, frag_size, stages, PSEL_FRAG_UNLIMITED);
    }
    psel_proto_add_range(caps, SIZE_MAX, stages, frag_size);
}

void psel_proto_rndv_stages(const psel_lane_set_perf_t *ctrl,
                            const psel_op_cost_t *data, int receiver_posts,
                            psel_proto_stages_t *stages)
{
    const psel_op_cost_t *c = &ctrl->op[PSEL_OP_CLASS_BCOPY];
    double *poster_c, *poster_post, *poster_frag;

    /* three control messages (bcopy AMs) and the data: 3 latencies of the
     * control lane and one of the (slowest) data lane - the seed's 4·rlat
     * when they are one lane */
    memset(stages, 0, sizeof(*stages));
    stages->latency = (3 * c->latency) + data->latency;
    /* the control messages go S->R, R->S, S->R (RTS, RTR or ATS, FIN or
     * ATS): each costs its sender send_pre (and send_post in a stream) and
     * its receiver recv - the seed's 3·rover all told */
    stages->send.c    = (2 * c->send_pre) + c->recv;
    stages->send_post = 2 * c->send_post;
    stages->recv.c    = c->send_pre + (2 * c->recv);
    stages->recv_post = c->send_post;
    /* the data operations: their CPU is the poster's, the first one's
     * send_pre in the message, every further fragment's pre and post */
    poster_c    = receiver_posts ? &stages->recv.c : &stages->send.c;
    poster_post = receiver_posts ? &stages->recv_post : &stages->send_post;
    poster_frag = receiver_posts ? &stages->frag_recv : &stages->frag_send;
    *poster_c    += data->send_pre;
    *poster_post += data->send_post;
    *poster_frag  = data->send_pre + data->send_post;
}

ucs_status_t psel_proto_rndv_init(const psel_proto_init_params_t *params,
                                  psel_lane_role_t role, uint32_t lane_caps,
                                  unsigned rrc, int zcopy, unsigned copies,
                                  const struct psel_rndv_mode_ops *ops,
                                  psel_proto_caps_t *caps)
{
    const psel_config_t *config = params->config;
    psel_op_class_t data_op     = zcopy ? PSEL_OP_CLASS_ZCOPY :
                                          PSEL_OP_CLASS_BCOPY;
    psel_lane_set_t ctrl_set, data;
    psel_lane_set_perf_t ctrl, bw;
    psel_proto_stages_t stages;
    ucs_linear_func_t copy;
    size_t frag_size, min_length;
    ucs_status_t status;

    status = psel_proto_apply_thresh(config->rndv_thresh, "UCX_PSEL_RNDV_THRESH",
                                     2, caps);
    if (status != UCS_OK) {
        return status;
    }

    status = psel_proto_lane_set(params, PSEL_LANE_ROLE_AM,
                                 PSEL_LANE_CAP_AM_BCOPY, 1, &ctrl_set, &ctrl,
                                 caps);
    if (status != UCS_OK) {
        return status;
    }

    status = psel_proto_lane_set(params, role, lane_caps,
                                 config->max_rndv_lanes, &data, &bw, caps);
    if (status != UCS_OK) {
        return status;
    }

    if (zcopy) {
        status = psel_proto_check_zcopy(params, &data, lane_caps, caps);
        if (status != UCS_OK) {
            return status;
        }
    }
    /* every lane takes every fragment: the smallest maximum of the
     * operation the data goes by, and no message below its largest
     * minimum (rc's get_zcopy: 65 B up) */
    status = psel_proto_frag_sizes(&data, lane_caps,
                                   (role == PSEL_LANE_ROLE_RMA_BW) ? 0 :
                                   PSEL_RNDV_DATA_HDR, &min_length,
                                   &frag_size, caps);
    if (status != UCS_OK) {
        return status;
    }
    copy = ucs_linear_func_make(0, 0);
    if (copies > 0) {
        /* the AM data is copied: memcpy for host memory, the memory-type
         * copy engine for the others */
        status = psel_proto_copy_time(params, 0, &copy, NULL, caps);
        if (status != UCS_OK) {
            return status;
        }
    }

    /* seed: (1+rrc)(rcost + x·rgro) + 4·rlat + 3·rover + x/rbw, with the
     * CPU copies of AM data counted in rgro; each term on the host that
     * spends it: the sender registers (zero-copy) or packs (AM bcopy), the
     * receiver registers too (rrc: get and put) and copies AM data out.
     * The receiver posts the reads of rndv/get, the sender the rest */
    psel_proto_rndv_stages(&ctrl, &bw.op[data_op],
                           lane_caps == PSEL_LANE_CAP_GET_ZCOPY, &stages);
    if (zcopy) {
        ucs_linear_func_add_inplace(&stages.send, bw.reg_cost);
        if (rrc) {
            ucs_linear_func_add_inplace(&stages.recv, bw.reg_cost);
        }
    }
    if (copies > 1) {
        ucs_linear_func_add_inplace(&stages.send, copy);
    }
    if (copies > 0) {
        ucs_linear_func_add_inplace(&stages.recv, copy);
    }
    stages.wire = ucs_linear_func_make(0, 1.0 / bw.bandwidth);

    caps->min_length = min_length;
    caps->flags     |= PSEL_PROTO_CAP_RNDV_BIAS;
    psel_proto_add_range(caps, SIZE_MAX, &stages, frag_size);
    psel_proto_set_lanes(&data, ctrl_set.lanes[0], frag_size, zcopy, caps);
    ((psel_proto_lanes_priv_t*)caps->priv)->rndv = ops;
    return UCS_OK;
}
