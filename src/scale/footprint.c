/*
 * Memory footprint of lanes at N peers, from UCX 1.13.1's defaults; see
 * footprint.h and docs/scale.md.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "footprint.h"

#include <ucs/sys/compiler_def.h>
#include <ucs/sys/math.h>
#include <ucs/sys/string.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * UCX 1.13.1 defaults (config tables in src/uct), by transport family.
 *
 * InfiniBand, every transport (uct/ib/base/ib_iface.c,
 * uct_ib_iface_config_table): TX_QUEUE_LEN=256, RX_QUEUE_LEN=4096,
 * SEG_SIZE=8192, TX_BUFS_GROW=1024 (UCT_IFACE_MPOOL_CONFIG_FIELDS "TX_").
 * The receive pool grows in one chunk of 1.1 x RX_QUEUE_LEN buffers
 * (uct_ib_iface_recv_mpool_init), allocated when the queue is first filled.
 */
#define PSEL_FP_IB_TX_QUEUE_LEN     256
#define PSEL_FP_IB_RX_QUEUE_LEN     4096
#define PSEL_FP_IB_SEG_SIZE         8192
#define PSEL_FP_IB_TX_BUFS_GROW     1024
#define PSEL_FP_IB_RX_POOL_FACTOR   1.1
#define PSEL_FP_IB_CQE_SIZE         64   /* mlx5 CQE, the default size */

/* RC and DC (uct/ib/rc/base/rc_iface.c, uct_rc_iface_common_config_table:
 * "RX_QUEUE_LEN=4095;SEG_SIZE=8256"; uct_rc_iface_config_table:
 * TX_CQ_LEN=4096, MAX_NUM_EPS=256). Receive buffers sit in one shared
 * receive queue per interface (uct_rc_iface_init_rx: ibv_create_srq), so
 * they are paid once, not per peer. */
#define PSEL_FP_RC_RX_QUEUE_LEN     4095
#define PSEL_FP_RC_SEG_SIZE         8256
#define PSEL_FP_RC_TX_CQ_LEN        4096

/* A queue pair's send queue holds TX_QUEUE_LEN work requests of a fixed
 * slot size, rounded up to a power of two bytes. rc_mlx5 and dc_mlx5 build
 * it themselves (uct/ib/mlx5/dv/ib_mlx5_dv.c, uct_ib_mlx5_devx_create_qp):
 * control 16 + UMR control 48 + mkey context 64 + max(KLM 16, 64) +
 * max(5 SGEs x 16 (TX_MIN_SGE=5), align16(4 + 64 inline (TX_MIN_INLINE=64)))
 * = 272 B. rc_verbs gets rdma-core's mlx5 layout (providers/mlx5/verbs.c,
 * mlx5_calc_send_wqe): RC overhead 16 + 176 (memory window bind), plus the
 * same 80 B of SGEs, rounded up to the 64 B basic block: 320 B. */
#define PSEL_FP_MLX5_WQE_SLOT       272
#define PSEL_FP_VERBS_RC_WQE_SLOT   320

/* DC (uct/ib/dc/dc_mlx5.c, uct_dc_mlx5_iface_config_sub_table):
 * "IB_TX_QUEUE_LEN=128", NUM_DCI=8, plus one keepalive DCI
 * (UCT_DC_MLX5_KEEPALIVE_NUM_DCIS); the send CQ holds
 * TX_QUEUE_LEN x (NUM_DCI + 1) entries. */
#define PSEL_FP_DC_TX_QUEUE_LEN     128
#define PSEL_FP_DC_NUM_DCI          8
#define PSEL_FP_DC_KEEPALIVE_DCIS   1

/* Shared memory (uct/sm/mm/base/mm_iface.c, uct_mm_iface_config_table):
 * FIFO_SIZE=64, FIFO_ELEM_SIZE=128, SEG_SIZE=8256, RX_BUFS_GROW=512. */
#define PSEL_FP_MM_FIFO_SIZE        64
#define PSEL_FP_MM_FIFO_ELEM_SIZE   128
#define PSEL_FP_MM_SEG_SIZE         8256
#define PSEL_FP_MM_RX_BUFS_GROW     512

/* TCP (uct/tcp/tcp_iface.c, uct_tcp_iface_config_table): TX_SEG_SIZE=8kb,
 * RX_SEG_SIZE=64kb, TX_BUFS_GROW=8, RX_BUFS_GROW=8, SNDBUF=RCVBUF=auto
 * (the kernel's defaults: net.ipv4.tcp_wmem and tcp_rmem, second field,
 * 16384 and 131072 on Linux; autotuning may grow them). */
#define PSEL_FP_TCP_TX_SEG_SIZE     8192
#define PSEL_FP_TCP_RX_SEG_SIZE     65536
#define PSEL_FP_TCP_BUFS_GROW       8
#define PSEL_FP_TCP_WMEM_DEFAULT    16384
#define PSEL_FP_TCP_RMEM_DEFAULT    131072

#define PSEL_FP_SRC_IB   "uct/ib/base/ib_iface.c"
#define PSEL_FP_SRC_RC   "uct/ib/rc/base/rc_iface.c, " PSEL_FP_SRC_IB
#define PSEL_FP_SRC_DC   "uct/ib/dc/dc_mlx5.c, uct/ib/rc/base/rc_iface.c"
#define PSEL_FP_SRC_UD   PSEL_FP_SRC_IB ", uct/ib/ud/base/ud_iface.c"
#define PSEL_FP_SRC_MM   "uct/sm/mm/base/mm_iface.c"
#define PSEL_FP_SRC_TCP  "uct/tcp/tcp_iface.c"

typedef enum {
    PSEL_FP_FAMILY_NONE,   /* no buffers of its own (cma, knem, self) */
    PSEL_FP_FAMILY_RC,
    PSEL_FP_FAMILY_DC,
    PSEL_FP_FAMILY_UD,
    PSEL_FP_FAMILY_MM,
    PSEL_FP_FAMILY_TCP,
    PSEL_FP_FAMILY_UNKNOWN
} psel_fp_family_t;

/* Fills the terms; @a env is "UCX_RC_MLX5_" for the settings */
typedef struct {
    psel_footprint_t      *fp;
    const psel_resource_t *rsc;
    const char            *lane;
    char                   env[PSEL_NAME_MAX + 8];
} psel_fp_ctx_t;


static psel_fp_family_t psel_fp_family(const char *tl_name)
{
    static const struct {
        const char      *name;
        psel_fp_family_t family;
    } families[] = {
        {"rc_mlx5", PSEL_FP_FAMILY_RC}, {"rc_verbs", PSEL_FP_FAMILY_RC},
        {"rc", PSEL_FP_FAMILY_RC},      {"dc_mlx5", PSEL_FP_FAMILY_DC},
        {"dc", PSEL_FP_FAMILY_DC},      {"ud_mlx5", PSEL_FP_FAMILY_UD},
        {"ud_verbs", PSEL_FP_FAMILY_UD},{"ud", PSEL_FP_FAMILY_UD},
        {"posix", PSEL_FP_FAMILY_MM},   {"sysv", PSEL_FP_FAMILY_MM},
        {"xpmem", PSEL_FP_FAMILY_MM},   {"mm", PSEL_FP_FAMILY_MM},
        {"tcp", PSEL_FP_FAMILY_TCP},    {"cma", PSEL_FP_FAMILY_NONE},
        {"knem", PSEL_FP_FAMILY_NONE},  {"self", PSEL_FP_FAMILY_NONE}
    };
    unsigned i;

    for (i = 0; i < ucs_static_array_size(families); ++i) {
        if (!strcmp(tl_name, families[i].name)) {
            return families[i].family;
        }
    }
    return PSEL_FP_FAMILY_UNKNOWN;
}

/* Smallest power of two >= @a x */
static double psel_fp_pow2(double x)
{
    double p = 1;

    while (p < x) {
        p *= 2;
    }
    return p;
}

static void psel_fp_add(psel_fp_ctx_t *ctx, const char *what, int per_peer,
                        int kernel, double count, double item_size,
                        const char *source, const char *setting_fmt, ...)
    UCS_F_PRINTF(8, 9);

static void psel_fp_add(psel_fp_ctx_t *ctx, const char *what, int per_peer,
                        int kernel, double count, double item_size,
                        const char *source, const char *setting_fmt, ...)
{
    psel_footprint_t *fp = ctx->fp;
    psel_footprint_term_t *term;
    va_list ap;

    if (fp->num_terms == PSEL_FOOTPRINT_MAX_TERMS) {
        return; /* 16 lanes x at most 4 terms each fit */
    }
    term = &fp->terms[fp->num_terms++];
    ucs_strncpy_zero(term->lane, ctx->lane, sizeof(term->lane));
    term->what      = what;
    term->per_peer  = per_peer;
    term->kernel    = kernel;
    term->count     = count;
    term->item_size = item_size;
    term->source    = source;
    va_start(ap, setting_fmt);
    vsnprintf(term->setting, sizeof(term->setting), setting_fmt, ap);
    va_end(ap);
    term->bytes     = count * item_size *
                      (per_peer ? (double)fp->num_peers : 1.0);
    if (kernel) {
        fp->kernel   += term->bytes;
    } else if (per_peer) {
        fp->per_peer += count * item_size;
    } else {
        fp->shared   += term->bytes;
    }
}

/* A receive pool of 1.1 x the queue, as uct_ib_iface_recv_mpool_init */
static double psel_fp_ib_rx_pool(unsigned queue_len)
{
    return (double)(unsigned)(PSEL_FP_IB_RX_POOL_FACTOR * queue_len + 0.5);
}

static void psel_fp_shared_rc_dc(psel_fp_ctx_t *ctx, const char *source)
{
    psel_fp_add(ctx, "receive buffers (shared receive queue)", 0, 0,
                psel_fp_ib_rx_pool(PSEL_FP_RC_RX_QUEUE_LEN),
                PSEL_FP_RC_SEG_SIZE, source,
                "%sRX_QUEUE_LEN=%u x 1.1 (pool), %sSEG_SIZE=%u", ctx->env,
                PSEL_FP_RC_RX_QUEUE_LEN, ctx->env, PSEL_FP_RC_SEG_SIZE);
    psel_fp_add(ctx, "send buffers (first bcopy send)", 0, 0,
                PSEL_FP_IB_TX_BUFS_GROW, PSEL_FP_RC_SEG_SIZE, source,
                "%sTX_BUFS_GROW=%u, %sSEG_SIZE=%u", ctx->env,
                PSEL_FP_IB_TX_BUFS_GROW, ctx->env, PSEL_FP_RC_SEG_SIZE);
}

/* The interface's shared terms (first lane on it), then one queue pair
 * per peer for every lane (each path is its own QP) */
static void psel_fp_rc(psel_fp_ctx_t *ctx, int first)
{
    unsigned slot = !strcmp(ctx->rsc->tl_name, "rc_verbs") ?
                    PSEL_FP_VERBS_RC_WQE_SLOT : PSEL_FP_MLX5_WQE_SLOT;

    if (first) {
        psel_fp_shared_rc_dc(ctx, PSEL_FP_SRC_RC);
        psel_fp_add(ctx, "completion queues (send + receive)", 0, 0,
                    PSEL_FP_RC_TX_CQ_LEN + PSEL_FP_RC_RX_QUEUE_LEN,
                    PSEL_FP_IB_CQE_SIZE, PSEL_FP_SRC_RC,
                    "%sTX_CQ_LEN=%u + %sRX_QUEUE_LEN=%u, %u B per CQE",
                    ctx->env, PSEL_FP_RC_TX_CQ_LEN, ctx->env,
                    PSEL_FP_RC_RX_QUEUE_LEN, PSEL_FP_IB_CQE_SIZE);
    }
    psel_fp_add(ctx, "queue pair send queue", 1, 0, 1,
                psel_fp_pow2((double)PSEL_FP_IB_TX_QUEUE_LEN * slot),
                !strcmp(ctx->rsc->tl_name, "rc_verbs") ?
                PSEL_FP_SRC_IB ", rdma-core providers/mlx5/verbs.c" :
                PSEL_FP_SRC_IB ", uct/ib/mlx5/dv/ib_mlx5_dv.c",
                "%sTX_QUEUE_LEN=%u x %u B per WQE, to a power of 2",
                ctx->env, PSEL_FP_IB_TX_QUEUE_LEN, slot);
}

static void psel_fp_dc(psel_fp_ctx_t *ctx)
{
    unsigned dcis = PSEL_FP_DC_NUM_DCI + PSEL_FP_DC_KEEPALIVE_DCIS;

    psel_fp_shared_rc_dc(ctx, PSEL_FP_SRC_DC);
    psel_fp_add(ctx, "DC initiator send queues", 0, 0, dcis,
                psel_fp_pow2((double)PSEL_FP_DC_TX_QUEUE_LEN *
                             PSEL_FP_MLX5_WQE_SLOT), PSEL_FP_SRC_DC,
                "%sNUM_DCI=%u + 1 keepalive, %sTX_QUEUE_LEN=%u x %u B",
                ctx->env, PSEL_FP_DC_NUM_DCI, ctx->env,
                PSEL_FP_DC_TX_QUEUE_LEN, PSEL_FP_MLX5_WQE_SLOT);
    psel_fp_add(ctx, "completion queues (send + receive)", 0, 0,
                (PSEL_FP_DC_TX_QUEUE_LEN * dcis) + PSEL_FP_RC_RX_QUEUE_LEN,
                PSEL_FP_IB_CQE_SIZE, PSEL_FP_SRC_DC,
                "%sTX_QUEUE_LEN=%u x %u DCIs + %sRX_QUEUE_LEN=%u, %u B",
                ctx->env, PSEL_FP_DC_TX_QUEUE_LEN, dcis, ctx->env,
                PSEL_FP_RC_RX_QUEUE_LEN, PSEL_FP_IB_CQE_SIZE);
}

/* UD segments are one MTU at most (ud_iface.c: min(MTU, SEG_SIZE)); the
 * dump's am_align_mtu is the port MTU */
static void psel_fp_ud(psel_fp_ctx_t *ctx)
{
    size_t mtu = ctx->rsc->am.align_mtu;
    size_t seg = ((mtu > 0) && (mtu < PSEL_FP_IB_SEG_SIZE)) ?
                 mtu : PSEL_FP_IB_SEG_SIZE;

    psel_fp_add(ctx, "receive buffers (one QP for all peers)", 0, 0,
                psel_fp_ib_rx_pool(PSEL_FP_IB_RX_QUEUE_LEN), (double)seg,
                PSEL_FP_SRC_UD,
                "%sRX_QUEUE_LEN=%u x 1.1 (pool), min(MTU, %sSEG_SIZE=%u)",
                ctx->env, PSEL_FP_IB_RX_QUEUE_LEN, ctx->env,
                PSEL_FP_IB_SEG_SIZE);
    psel_fp_add(ctx, "send buffers (first send)", 0, 0,
                PSEL_FP_IB_TX_BUFS_GROW, (double)seg, PSEL_FP_SRC_UD,
                "%sTX_BUFS_GROW=%u, min(MTU, %sSEG_SIZE=%u)", ctx->env,
                PSEL_FP_IB_TX_BUFS_GROW, ctx->env, PSEL_FP_IB_SEG_SIZE);
    psel_fp_add(ctx, "completion queues (send + receive)", 0, 0,
                PSEL_FP_IB_TX_QUEUE_LEN + PSEL_FP_IB_RX_QUEUE_LEN,
                PSEL_FP_IB_CQE_SIZE, PSEL_FP_SRC_UD,
                "%sTX_QUEUE_LEN=%u + %sRX_QUEUE_LEN=%u, %u B per CQE",
                ctx->env, PSEL_FP_IB_TX_QUEUE_LEN, ctx->env,
                PSEL_FP_IB_RX_QUEUE_LEN, PSEL_FP_IB_CQE_SIZE);
}

static void psel_fp_mm(psel_fp_ctx_t *ctx)
{
    psel_fp_add(ctx, "receive FIFO (shared memory)", 0, 0,
                PSEL_FP_MM_FIFO_SIZE, PSEL_FP_MM_FIFO_ELEM_SIZE,
                PSEL_FP_SRC_MM, "%sFIFO_SIZE=%u, %sFIFO_ELEM_SIZE=%u",
                ctx->env, PSEL_FP_MM_FIFO_SIZE, ctx->env,
                PSEL_FP_MM_FIFO_ELEM_SIZE);
    psel_fp_add(ctx, "receive descriptors", 0, 0, PSEL_FP_MM_RX_BUFS_GROW,
                PSEL_FP_MM_SEG_SIZE, PSEL_FP_SRC_MM,
                "%sRX_BUFS_GROW=%u, %sSEG_SIZE=%u", ctx->env,
                PSEL_FP_MM_RX_BUFS_GROW, ctx->env, PSEL_FP_MM_SEG_SIZE);
}

static void psel_fp_tcp(psel_fp_ctx_t *ctx)
{
    psel_fp_add(ctx, "receive buffers", 0, 0, PSEL_FP_TCP_BUFS_GROW,
                PSEL_FP_TCP_RX_SEG_SIZE, PSEL_FP_SRC_TCP,
                "%sRX_BUFS_GROW=%u, %sRX_SEG_SIZE=%u", ctx->env,
                PSEL_FP_TCP_BUFS_GROW, ctx->env, PSEL_FP_TCP_RX_SEG_SIZE);
    psel_fp_add(ctx, "send buffers", 0, 0, PSEL_FP_TCP_BUFS_GROW,
                PSEL_FP_TCP_TX_SEG_SIZE, PSEL_FP_SRC_TCP,
                "%sTX_BUFS_GROW=%u, %sTX_SEG_SIZE=%u", ctx->env,
                PSEL_FP_TCP_BUFS_GROW, ctx->env, PSEL_FP_TCP_TX_SEG_SIZE);
    psel_fp_add(ctx, "socket buffers (kernel)", 1, 1, 1,
                PSEL_FP_TCP_RMEM_DEFAULT + PSEL_FP_TCP_WMEM_DEFAULT,
                PSEL_FP_SRC_TCP ", Linux net.ipv4.tcp_rmem/tcp_wmem",
                "%sRCVBUF=auto (%u) + %sSNDBUF=auto (%u)", ctx->env,
                PSEL_FP_TCP_RMEM_DEFAULT, ctx->env, PSEL_FP_TCP_WMEM_DEFAULT);
}

/* Is local resource @a l used by a lane before @a lane? Shared terms are
 * paid once per interface. */
static int psel_fp_iface_seen(const psel_ep_lanes_t *lanes, unsigned lane)
{
    unsigned i;

    for (i = 0; i < lane; ++i) {
        if (lanes->info[i].local == lanes->info[lane].local) {
            return 1;
        }
    }
    return 0;
}

ucs_status_t psel_footprint_compute(const psel_resource_table_t *local,
                                    const psel_ep_lanes_t *lanes,
                                    size_t num_peers, psel_footprint_t *fp)
{
    psel_footprint_t result;
    psel_fp_ctx_t ctx;
    unsigned i, first;
    char *p;

    if (num_peers == 0) {
        return UCS_ERR_INVALID_PARAM;
    }
    memset(&result, 0, sizeof(result));
    result.num_peers = num_peers;
    ctx.fp           = &result;
    for (i = 0; i < lanes->num_lanes; ++i) {
        ctx.rsc  = &local->resources[lanes->info[i].local];
        ctx.lane = lanes->lanes[i].name;
        snprintf(ctx.env, sizeof(ctx.env), "UCX_%s_", ctx.rsc->tl_name);
        for (p = ctx.env; *p != '\0'; ++p) {
            *p = (char)toupper((unsigned char)*p);
        }
        first = !psel_fp_iface_seen(lanes, i);
        switch (psel_fp_family(ctx.rsc->tl_name)) {
        case PSEL_FP_FAMILY_RC:
            psel_fp_rc(&ctx, first);
            break;
        case PSEL_FP_FAMILY_DC:
            if (first) {
                psel_fp_dc(&ctx);
            }
            break;
        case PSEL_FP_FAMILY_UD:
            if (first) {
                psel_fp_ud(&ctx);
            }
            break;
        case PSEL_FP_FAMILY_MM:
            if (first) {
                psel_fp_mm(&ctx);
            }
            break;
        case PSEL_FP_FAMILY_TCP:
            if (first) {
                psel_fp_tcp(&ctx);
            }
            break;
        case PSEL_FP_FAMILY_NONE:
            break;
        case PSEL_FP_FAMILY_UNKNOWN:
            if (first) {
                ucs_strncpy_zero(result.unmodelled[result.num_unmodelled++],
                                 ctx.lane, PSEL_LANE_NAME_MAX);
            }
            break;
        }
    }
    result.total = result.shared + (result.per_peer * (double)num_peers);
    *fp          = result;
    return UCS_OK;
}
