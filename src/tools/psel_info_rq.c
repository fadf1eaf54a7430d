/*
 * psel_info --ompi-receive-queues SPEC and --suggest-receive-queues: Open
 * MPI's btl_openib_receive_queues, parsed and costed (src/scale/rq_spec.h),
 * and a spec derived from protosel's selection.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "psel_info.h"

#include <scale/rq_spec.h>
#include <ucs/sys/math.h>

#include <stdio.h>
#include <string.h>

#define PSEL_INFO_RQ_SPEC_MAX  1024

/* "18.77 MB (17.90 MiB)": Open MPI's figures are in MB; UCX prints MiB */
/* "36.86 MB (35.15 MiB)": Open MPI's documents count in MB */
static const char *fmt_mb(double bytes, char *buf, size_t max)
{
    char binary[32];

    snprintf(buf, max, "%.2f MB (%s)", bytes / 1e6,
             psel_info_bytes_str(bytes, binary, sizeof(binary)));
    return buf;
}

/* A value, with '*' when it is a default */
static const char *fmt_field(unsigned value, int is_default, char *buf,
                             size_t max)
{
    snprintf(buf, max, "%u%s", value, is_default ? "*" : " ");
    return buf;
}

static void rq_print_table(FILE *stream, const psel_rq_spec_t *spec,
                           size_t peers)
{
    char low[16], win[16], rsv[16], pend[16], mem[64], formula[96];
    const psel_rq_queue_t *q;
    unsigned i;

    fprintf(stream, "# %5s %4s %8s %8s %7s %7s %8s %8s  %-25s %s\n", "queue",
            "type", "size", "buffers", "low_wm", "window", "reserve",
            "pending", "memory", "formula");
    for (i = 0; i < spec->num_queues; ++i) {
        q = &spec->queues[i];
        if (q->type == PSEL_RQ_PER_PEER) {
            snprintf(formula, sizeof(formula), "%zu x (%u + %u) x %u B", peers,
                     q->num, q->reserve, q->size);
        } else {
            snprintf(formula, sizeof(formula), "%u x %u B (shared)", q->num,
                     q->size);
        }
        fprintf(stream, "# %5u %4c %8u %8u %7s %7s %8s %8s  %-25s %s\n", i + 1,
                (char)q->type, q->size, q->num,
                fmt_field(q->low_wm, q->num_given < 3, low, sizeof(low)),
                (q->type == PSEL_RQ_PER_PEER) ?
                fmt_field(q->window, q->num_given < 4, win, sizeof(win)) : "-",
                (q->type == PSEL_RQ_PER_PEER) ?
                fmt_field(q->reserve, q->num_given < 5, rsv, sizeof(rsv)) :
                "-",
                (q->type == PSEL_RQ_SHARED) ?
                fmt_field(q->max_pending, q->num_given < 4, pend,
                          sizeof(pend)) : "-",
                fmt_mb(psel_rq_queue_bytes(q, peers), mem, sizeof(mem)),
                formula);
    }
    fprintf(stream, "# (* = default: low_wm = num/2; P: window = low_wm/2, "
            "reserve = (2 num - 1)/window; S: pending = low_wm/4)\n");
}

static void rq_print_total(FILE *stream, const psel_rq_spec_t *spec,
                           size_t peers)
{
    char mem[64];

    fprintf(stream, "# total per process with %zu peer%s (a fully connected "
            "job of %zu processes): %s\n", peers, (peers == 1) ? "" : "s",
            peers + 1, fmt_mb(psel_rq_spec_bytes(spec, peers), mem,
                              sizeof(mem)));
}

int psel_info_rq_spec(FILE *stream, const char *text, size_t peers)
{
    static const size_t ladder[] = {63, 511, 4095};
    char full[PSEL_INFO_RQ_SPEC_MAX], error[PSEL_RQ_ERROR_MAX], mem[64];
    size_t column = 0;
    psel_rq_spec_t spec;
    unsigned i;

    if (psel_rq_spec_parse(text, &spec, error, sizeof(error), &column) !=
        UCS_OK) {
        fprintf(stderr, "psel_info: --ompi-receive-queues: %s\n  %s\n  %*s^\n",
                error, text, (int)ucs_min(column, (size_t)512) - 1, "");
        return 1;
    }
    psel_rq_spec_format(&spec, full, sizeof(full));
    fprintf(stream, "#\n# Open MPI btl_openib_receive_queues %s\n", text);
    fprintf(stream, "# with the documented defaults:     %s\n#\n", full);
    if (peers == 0) {
        fprintf(stream, "# per process: %.0f B once + %.0f B per peer\n",
                psel_rq_spec_bytes(&spec, 0),
                psel_rq_spec_bytes(&spec, 1) - psel_rq_spec_bytes(&spec, 0));
        for (i = 0; i < ucs_static_array_size(ladder); ++i) {
            fprintf(stream, "#   %5zu peers (%5zu processes): %s\n", ladder[i],
                    ladder[i] + 1, fmt_mb(psel_rq_spec_bytes(&spec,
                                                             ladder[i]),
                                          mem, sizeof(mem)));
        }
        fprintf(stream, "# --peers N for the queue by queue memory at N\n#\n");
        return 0;
    }
    rq_print_table(stream, &spec, peers);
    rq_print_total(stream, &spec, peers);
    fprintf(stream, "#\n");
    return 0;
}

/* Does the endpoint run over an InfiniBand transport (rc, dc, ud)? Their
 * HCAs have shared receive queues: UCX's rc and dc use one per interface */
static int rq_lanes_srq(const psel_info_ep_ctx_t *ctx, char *names,
                        size_t max)
{
    const psel_ep_lanes_t *lanes = &ctx->ep->lanes;
    const char *tl;
    size_t len = 0;
    unsigned i;
    int srq = 0;

    names[0] = '\0';
    for (i = 0; i < lanes->num_lanes; ++i) {
        tl   = ctx->local->resources[lanes->info[i].local].tl_name;
        srq |= !strncmp(tl, "rc", 2) || !strncmp(tl, "dc", 2) ||
               !strncmp(tl, "ud", 2);
        if (len < max) {
            len += (size_t)snprintf(names + len, max - len, "%s%s",
                                    i ? ", " : "", lanes->lanes[i].name);
        }
    }
    return srq;
}

int psel_info_rq_suggest(FILE *stream, const psel_info_ep_ctx_t *ctx,
                         size_t peers)
{
    const psel_select_table_t *table = ctx->tables[0].table;
    size_t ends[PSEL_SELECT_MAX_PROTOS], rndv = SIZE_MAX, start;
    psel_rq_suggest_params_t params;
    char spec_text[PSEL_INFO_RQ_SPEC_MAX], names[512];
    psel_rq_spec_t spec;
    unsigned row, n = 0;
    const char *proto;

    for (row = 0; row < table->count; ++row) {
        proto = table->elems[row].proto->name;
        start = (row == 0) ? 0 : (table->elems[row - 1].max_length + 1);
        if (!strncmp(proto, "rndv/", 5)) {
            rndv = ucs_min(rndv, start);
        } else if ((rndv == SIZE_MAX) && (n < PSEL_SELECT_MAX_PROTOS) &&
                   (table->elems[row].max_length != SIZE_MAX)) {
            ends[n++] = table->elems[row].max_length;
        }
    }
    params.eager_ends  = ends;
    params.num_eager   = n;
    params.rndv_thresh = rndv;
    params.srq         = rq_lanes_srq(ctx, names, sizeof(names));
    params.num_peers   = peers;
    if (psel_rq_suggest(&params, &spec) != UCS_OK) {
        fprintf(stderr, "psel_info: --suggest-receive-queues: no spec for "
                "%zu peers\n", peers);
        return 1;
    }
    psel_rq_spec_format(&spec, spec_text, sizeof(spec_text));

    fprintf(stream, "#\n# btl_openib_receive_queues for %zu peers, from "
            "this selection (tag send, contig host memory):\n", peers);
    fprintf(stream, "#   queue sizes from the eager rows (+64 B headers, to a "
            "power of 2, >= 128 B);\n#   the largest holds the largest eager "
            "message (%s);\n", (rndv == SIZE_MAX) ?
            "no rendezvous: 64 KiB, Open MPI's default" :
            "below the rendezvous threshold");
    fprintf(stream, "#   lanes %s: %s\n", names, params.srq ?
            "InfiniBand, shared receive queues: S queues where they cost "
            "less than P at N" :
            "no InfiniBand HCA, so no SRQ (Open MPI's openib BTL would not "
            "run on them): P queues");
    rq_print_table(stream, &spec, peers);
    rq_print_total(stream, &spec, peers);
    fprintf(stream, "# a user's btl_openib_receive_queues always wins over "
            "this suggestion\n");
    fprintf(stream, "%s\n", spec_text);
    return 0;
}
