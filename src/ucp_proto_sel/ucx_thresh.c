/*
 * UCX 1.x's rendezvous threshold over protosel's lanes; see ucx_thresh.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "ucx_thresh.h"

#include <lane_select/text_scan.h>

#include <ucs/sys/math.h>
#include <math.h>
#include <string.h>

typedef struct {
    double   reg_c, reg_m, overhead, latency, bw;
    unsigned num_mds;   /* memory domains that register */
} psel_ucx_lane_sum_t;

/* ucp_ep_config_calc_params(): registration, overhead and latency summed
 * once per memory domain that registers, bandwidth per lane (eager lanes
 * pay their zcopy send overheads per max_bcopy fragment) */
static void psel_ucx_thresh_sum(const psel_lane_set_t *set, int eager,
                                psel_ucx_lane_sum_t *sum)
{
    const psel_lane_t *lane;
    double per_frag;
    unsigned i;

    memset(sum, 0, sizeof(*sum));
    for (i = 0; i < set->count; ++i) {
        lane = set->lanes[i];
        if (psel_lane_set_md_is_new(set, i)) {
            if (lane->caps & PSEL_LANE_CAP_MEM_REG) {
                sum->reg_c    += lane->reg_cost.c;
                sum->reg_m    += lane->reg_cost.m;
                sum->overhead += lane->overhead_send;
                sum->latency  += lane->latency;
                ++sum->num_mds;
            }
        }
        if (eager && (lane->am.max_bcopy > 0) && (lane->bandwidth > 0)) {
            per_frag = lane->op_valid ?
                       (lane->op[PSEL_OP_CLASS_ZCOPY].send_pre +
                        lane->op[PSEL_OP_CLASS_ZCOPY].send_post) :
                       lane->overhead_send;
            sum->bw += 1.0 / (1.0 / lane->bandwidth +
                              per_frag / lane->am.max_bcopy);
        } else {
            sum->bw += lane->bandwidth;
        }
    }
}

void psel_ucx_thresh_compute(const psel_select_t *select,
                             psel_ucx_thresh_t *out)
{
    const psel_lane_set_t *eager = &select->lanes->role[PSEL_LANE_ROLE_AM_BW];
    const psel_lane_set_t *rndv  = &select->lanes->role[PSEL_LANE_ROLE_RMA_BW];
    const double rrc             = 1; /* get/put: the receiver registers */
    psel_ucx_lane_sum_t e, r;

    memset(out, 0, sizeof(*out));
    if ((eager->count == 0) || (rndv->count == 0)) {
        return;
    }
    psel_ucx_thresh_sum(eager, 1, &e);
    psel_ucx_thresh_sum(rndv, 0, &r);
    if ((e.bw <= 0) || (r.bw <= 0)) {
        return;
    }

    out->valid       = 1;
    out->d           = psel_config_rndv_bias(select->config);
    out->bcopy_bw    = select->config->copy_bw;
    out->rts_latency = eager->lanes[0]->latency;
    out->max_bcopy   = eager->lanes[0]->am.max_bcopy;
    out->e_reg_c     = e.reg_c;
    out->e_reg_m     = e.reg_m;
    out->e_overhead  = e.overhead;
    out->e_bw        = e.bw;
    out->r_reg_c     = r.reg_c;
    out->r_reg_m     = r.reg_m;
    out->r_overhead  = r.overhead;
    out->r_latency   = r.latency;
    out->r_bw        = r.bw;

    out->numerator   = out->d * (r.reg_c * (1 + rrc) + 2 * out->rts_latency +
                                 2 * r.latency + 2 * e.overhead + r.overhead) -
                       e.reg_c - e.overhead;
    out->denominator = e.reg_m + 1.0 / ucs_min(e.bw, out->bcopy_bw) -
                       out->d * (r.reg_m * (1 + rrc) + 1.0 / r.bw);
    if ((out->numerator <= 0) || (out->denominator <= 0)) {
        out->fallback = 1;
        out->thresh   = (double)SIZE_MAX;
        return;
    }
    out->thresh = ucs_max(out->numerator / out->denominator,
                          (double)out->max_bcopy);
}

/* First size of the first rendezvous row, or SIZE_MAX */
static size_t psel_ucx_thresh_protosel_start(const psel_select_table_t *table)
{
    unsigned i;

    for (i = 0; i < table->count; ++i) {
        if (!strncmp(table->elems[i].proto->name, "rndv/", 5)) {
            return (i == 0) ? 0 : table->elems[i - 1].max_length + 1;
        }
    }
    return SIZE_MAX;
}

static void psel_ucx_thresh_dump_in_c_locale(FILE *stream,
                                             const psel_select_t *select,
                                             const psel_select_table_t *table)
{
    const psel_lane_set_t *eager = &select->lanes->role[PSEL_LANE_ROLE_AM_BW];
    const psel_lane_set_t *rndv  = &select->lanes->role[PSEL_LANE_ROLE_RMA_BW];
    size_t start                 = psel_ucx_thresh_protosel_start(table);
    psel_ucx_thresh_t t;
    psel_ucx_lane_sum_t r;

    psel_ucx_thresh_compute(select, &t);
    fprintf(stream, "UCX 1.x's rendezvous threshold over these lanes "
            "(ucp_ep_config_calc_rndv_thresh, protocols v1):\n");
    if (!t.valid) {
        fprintf(stream, "  none: UCX 1.x needs an am_bw and an rma_bw lane "
                "(this endpoint has %u and %u)\n", eager->count, rndv->count);
        return;
    }
    psel_ucx_thresh_sum(rndv, 0, &r);
    fprintf(stream, "  numerator   d·(r.reg·2 + 2·rts_lat + 2·r.lat + "
            "2·e.ovh + r.ovh) - e.reg - e.ovh\n"
            "            = %.4f·(%.3f·2 + 2·%.3f + 2·%.3f + 2·%.3f + %.3f) - "
            "%.3f - %.3f = %.3f us\n", t.d, t.r_reg_c * 1e6,
            t.rts_latency * 1e6, t.r_latency * 1e6, t.e_overhead * 1e6,
            t.r_overhead * 1e6, t.e_reg_c * 1e6, t.e_overhead * 1e6,
            t.numerator * 1e6);
    fprintf(stream, "  denominator e.reg_m + 1/min(e.bw, bcopy_bw) - "
            "d·(r.reg_m·2 + 1/r.bw)\n"
            "            = %.4f + 1/min(%.0f, %.0f MB/s) - %.4f·(%.4f·2 + "
            "1/%.0f MB/s) = %.4f ns/B\n", t.e_reg_m * 1e9, t.e_bw / UCS_MBYTE,
            t.bcopy_bw / UCS_MBYTE, t.d, t.r_reg_m * 1e9, t.r_bw / UCS_MBYTE,
            t.denominator * 1e9);
    if (t.fallback) {
        fprintf(stream, "  UCX 1.x: the lines never cross (numerator or "
                "denominator <= 0): rendezvous at UCX_RNDV_THRESH_FALLBACK "
                "(inf)");
    } else {
        fprintf(stream, "  UCX 1.x: rendezvous from %.0f bytes (num/den = "
                "%.1f, at least max_bcopy %zu)", ceil(t.thresh),
                t.numerator / t.denominator, t.max_bcopy);
    }
    if (start == SIZE_MAX) {
        fprintf(stream, "; protosel: no rendezvous\n");
    } else {
        fprintf(stream, "; protosel: from %zu bytes\n", start);
    }

    fprintf(stream, "  where the models differ:\n");
    if (r.num_mds > 1) {
        fprintf(stream, "    - UCX sums the %u rendezvous lanes' latencies "
                "and overheads (one per memory domain: %.3f + %.3f us); "
                "protosel takes the slowest lane's\n", r.num_mds,
                t.r_latency * 1e6, t.r_overhead * 1e6);
    }
    fprintf(stream, "    - UCX counts 2 RTS/RTR and 2 data latencies and "
            "the eager overhead twice; protosel 3 control messages and 1 "
            "data latency, with both ends' overheads of each\n");
    if (!isinf(select->config->rcache_overhead)) {
        fprintf(stream, "    - UCX 1.x charges the memory domains' full "
                "registration cost (%.3f us + %.4f ns/B for the rendezvous "
                "lanes); protosel a registration-cache lookup of %.0f ns "
                "(UCX_PSEL_RCACHE_OVERHEAD=inf charges the full cost)\n",
                t.r_reg_c * 1e6, t.r_reg_m * 1e9,
                select->config->rcache_overhead * 1e9);
    }
    fprintf(stream, "    - UCX's eager line copies at min(eager bw, "
            "bcopy_bw) once; protosel's eager zcopy pays the transfer and the "
            "receiver's copy-out (%.0f MB/s) one after the other\n",
            t.bcopy_bw / UCS_MBYTE);
    fprintf(stream, "    - protosel's bias d moves a boundary by at most x2 "
            "(select.h); UCX applies d unbounded\n");
}

/* numbers with '.' whatever LC_NUMERIC the application set */
void psel_ucx_thresh_dump(FILE *stream, const psel_select_t *select,
                          const psel_select_table_t *table)
{
    psel_text_locale_t saved = psel_text_c_locale_enter();

    psel_ucx_thresh_dump_in_c_locale(stream, select, table);
    psel_text_c_locale_leave(saved);
}
