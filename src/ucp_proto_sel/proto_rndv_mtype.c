/*
 * rndv/mtype: rendezvous of GPU (cuda, rocm) memory staged through host
 * bounce buffers, as UCX's rndv/get/mtype and rndv/put/mtype with its
 * pipeline (ucp/rndv/rndv_mtype.inl, rndv_ppln.c): the sender copies a
 * fragment from GPU to host memory with the memory-type copy engine
 * (cuda_copy), the host rma_bw lanes move it, the receiver copies it from
 * host to GPU memory; fragments overlap.
 *
 * Model only (no progress function): protosel's data path sends host memory.
 * psel_info shows it in the cuda/rocm tables of imported dumps.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_common.h"

#include <ucs/sys/math.h>
#include <string.h>

/* UCX_RNDV_FRAG_SIZE's host bounce buffer in UCX 1.13 to 1.20
 * ("host:512K,cuda:4M": the host buffers stage GPU memory) */
#define PSEL_RNDV_MTYPE_FRAG   (512ul * 1024)

static ucs_status_t psel_rndv_mtype_init(const psel_proto_init_params_t *params,
                                         psel_proto_caps_t *caps)
{
    const psel_config_t *config = params->config;
    psel_proto_init_params_t host_params;
    psel_lane_set_t ctrl_set, data;
    psel_lane_set_perf_t ctrl, bw;
    ucs_linear_func_t copy, pipelined;
    psel_proto_stages_t stages;
    double m_max, m_sum, ctrl_c, o_frag;
    const char *engine;
    ucs_status_t status;
    unsigned i, first;
    uint32_t data_cap;
    size_t len;

    if (psel_proto_buffer_is_host(params)) {
        return psel_proto_unsupported(caps, "host memory needs no staging");
    }
    if (params->buf_type.dt_class != PSEL_DT_CONTIG) {
        return psel_proto_unsupported(caps, "stages contiguous buffers only");
    }
    status = psel_proto_apply_thresh(config->rndv_thresh,
                                     "UCX_PSEL_RNDV_THRESH", 2, caps);
    if (status != UCS_OK) {
        return status;
    }
    status = psel_proto_copy_time(params, 1, &copy, &engine, caps);
    if (status != UCS_OK) {
        return status;
    }

    /* the bounce buffers are host memory: the host rma_bw lanes, get if
     * they can (UCX's rndv/get/mtype), else put (rndv/put/mtype) */
    host_params                   = *params;
    host_params.buf_type.mem_type = UCS_MEMORY_TYPE_HOST;
    status = psel_proto_lane_set(&host_params, PSEL_LANE_ROLE_AM,
                                 PSEL_LANE_CAP_AM_BCOPY, 1, &ctrl_set, &ctrl,
                                 caps);
    if (status != UCS_OK) {
        return status;
    }
    data_cap = PSEL_LANE_CAP_GET_ZCOPY;
    status   = psel_proto_lane_set(&host_params, PSEL_LANE_ROLE_RMA_BW,
                                   data_cap, config->max_rndv_lanes, &data,
                                   &bw, caps);
    if (status == UCS_ERR_UNSUPPORTED) {
        data_cap = PSEL_LANE_CAP_PUT_ZCOPY;
        status   = psel_proto_lane_set(&host_params, PSEL_LANE_ROLE_RMA_BW,
                                       data_cap, config->max_rndv_lanes,
                                       &data, &bw, caps);
    }
    if (status != UCS_OK) {
        return status;
    }

    /* the stages of one fragment: RTS/RTR/ATS and the data's latency and
     * CPU (as every rendezvous; reads are the receiver's), the copy to host
     * on the sender, the network, the copy to GPU memory on the receiver.
     * Bounce buffers are registered once (UCX's fragment mpool): no
     * registration per message */
    psel_proto_rndv_stages(&ctrl, &bw.op[PSEL_OP_CLASS_ZCOPY],
                           data_cap == PSEL_LANE_CAP_GET_ZCOPY, &stages);
    ctrl_c = stages.latency + stages.send.c + stages.recv.c;
    ucs_linear_func_add_inplace(&stages.send, copy);        /* GPU -> host */
    stages.wire = ucs_linear_func_make(0, 1.0 / bw.bandwidth); /* network */
    ucs_linear_func_add_inplace(&stages.recv, copy);        /* host -> GPU */

    caps->min_length = 0;
    caps->flags     |= PSEL_PROTO_CAP_RNDV_BIAS;
    psel_proto_add_range(caps, PSEL_RNDV_MTYPE_FRAG - 1, &stages,
                         PSEL_RNDV_MTYPE_FRAG);
    first = caps->num_ranges;
    psel_proto_add_range(caps, SIZE_MAX, &stages, PSEL_RNDV_MTYPE_FRAG);

    /* from one fragment F on the fragments overlap: the first fragment
     * goes through every stage, each further one adds the slowest stage's
     * time per fragment M·F, where every fragment pays the copy's constant
     * and the network's send overhead:
     *   T(x) = ctrl + 2·c_copy + F·(2·m_copy + m_net) + (x - F)·M,
     *   M    = max(m_copy + c_copy/F, m_net + o_frag/F)
     * (the multi flavour is the slowest stage's rate already) */
    o_frag = bw.op[PSEL_OP_CLASS_ZCOPY].send_pre +
             bw.op[PSEL_OP_CLASS_ZCOPY].send_post;
    m_sum  = 2 * copy.m + stages.wire.m;
    m_max  = ucs_max(copy.m + copy.c / PSEL_RNDV_MTYPE_FRAG,
                     stages.wire.m + o_frag / PSEL_RNDV_MTYPE_FRAG);
    pipelined = ucs_linear_func_make(ctrl_c + 2 * copy.c +
                                     PSEL_RNDV_MTYPE_FRAG * (m_sum - m_max),
                                     m_max);
    for (i = first; i < caps->num_ranges; ++i) {
        caps->ranges[i].perf[PSEL_PERF_SINGLE] = pipelined;
    }

    psel_proto_set_lanes(&data, ctrl_set.lanes[0], PSEL_RNDV_MTYPE_FRAG, 1,
                         caps);
    /* say which engine stages the data: "cuda_copy/cuda + rc_mlx5/mlx5_0:1" */
    len = strlen(caps->desc);
    memmove(caps->desc + strlen(engine) + 3, caps->desc,
            ucs_min(len + 1, sizeof(caps->desc) - strlen(engine) - 3));
    memcpy(caps->desc, engine, strlen(engine));
    memcpy(caps->desc + strlen(engine), " + ", 3);
    caps->desc[sizeof(caps->desc) - 1] = '\0';
    return UCS_OK;
}

const psel_proto_t psel_proto_rndv_mtype = {
    .name       = "rndv/mtype",
    .desc       = "rendezvous staged through host memory",
    .op_mask    = UCS_BIT(PSEL_OP_TAG_SEND),
    .lane_roles = UCS_BIT(PSEL_LANE_ROLE_AM) | UCS_BIT(PSEL_LANE_ROLE_RMA_BW),
    .init       = psel_rndv_mtype_init,
    .progress   = NULL
};
