/*
 * The selection engine: lower envelope of protocol cost lines, thresholds
 * arrays and lookup. See select.h for the rules.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "select.h"
#include "calib.h"
#include "dump.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bounds the walk; a real envelope has a handful of segments. */
#define PSEL_ENVELOPE_MAX_SEGMENTS 1024

/* Two cost lines whose constants and slopes are this close, relative, are
 * the same line: a peer's attributes travel as f32 in its address
 * (lane_select/address.h), so lines that tie on this machine's doubles
 * differ by rounding on the wire, and would cross at an arbitrary size */
#define PSEL_SELECT_TIE_REL        1e-6

typedef struct {
    size_t   end;      /* last size of the segment */
    unsigned proto;    /* winner */
} psel_segment_t;

/* Grown as the walk needs (a handful of entries), not a buffer sized to
 * the bound: that one's 16 KB cost page faults on its first use, in an
 * application's first endpoint. (ucs_array's macros need libucs's
 * internal assert header, which libucx-dev does not install.) */
typedef struct {
    psel_segment_t *items;
    unsigned       count;
    unsigned       capacity;
} psel_segments_t;

#define PSEL_SEGMENTS_INITIALIZER {NULL, 0, 0}

typedef struct {
    const psel_select_t       *select;
    const psel_select_table_t *table;
    int                        biased;
    double                     margin;  /* psel_select_switch_margin() */
} psel_envelope_t;


psel_buffer_type_t psel_buffer_type(psel_op_t op, psel_dt_class_t dt_class,
                                    ucs_memory_type_t mem_type,
                                    unsigned sg_count)
{
    psel_buffer_type_t bt;

    bt.key      = 0;
    bt.op       = op;
    bt.dt_class = dt_class;
    bt.mem_type = mem_type;
    bt.sg_count = ucs_min(sg_count, UINT8_MAX);
    return bt;
}

const psel_perf_range_t *psel_proto_caps_range(const psel_proto_caps_t *caps,
                                               size_t length)
{
    unsigned i;

    if (length < caps->min_length) {
        return NULL;
    }
    for (i = 0; i < caps->num_ranges; ++i) {
        if (length <= caps->ranges[i].max_length) {
            return &caps->ranges[i];
        }
    }
    return NULL;
}

/* The cost line of flavour @a perf, with the rendezvous bias if @a biased */
static ucs_linear_func_t
psel_select_func_of(const psel_select_t *select, const psel_proto_caps_t *caps,
                    const psel_perf_range_t *range, int biased, int perf)
{
    ucs_linear_func_t func = range->perf[perf];
    double d;

    if (biased && (caps->flags & PSEL_PROTO_CAP_RNDV_BIAS)) {
        d       = psel_config_rndv_bias(select->config);
        func.c *= d;
        func.m *= d;
    }
    return func;
}

/* The cost line selection compares: of the flavour UCX_PSEL_SELECT_PERF
 * names (select_perf) */
static ucs_linear_func_t
psel_select_func(const psel_select_t *select, const psel_proto_caps_t *caps,
                 const psel_perf_range_t *range, int biased)
{
    return psel_select_func_of(select, caps, range, biased,
                               select->config->select_perf);
}

double psel_select_cost(const psel_select_t *select,
                        const psel_proto_caps_t *caps, size_t length,
                        int biased)
{
    const psel_perf_range_t *range = psel_proto_caps_range(caps, length);

    assert(range != NULL);
    return ucs_linear_func_apply(psel_select_func(select, caps, range, biased),
                                 (double)length);
}

static int psel_envelope_applies(const psel_envelope_t *env, unsigned i,
                                 size_t x)
{
    const psel_proto_caps_t *caps = &env->table->caps[i];

    return (env->table->status[i] == UCS_OK) && (x >= caps->min_length) &&
           (x <= psel_proto_caps_max_length(caps)) &&
           ((caps->cfg_thresh == PSEL_THRESH_AUTO) || (x >= caps->cfg_thresh));
}

/* Protocols competing at size x: the applicable ones; if any of them is
 * forced at x, only those whose cfg_priority is at least the highest forced
 * priority. Returns a bitmap. */
static uint64_t psel_envelope_candidates(const psel_envelope_t *env, size_t x)
{
    uint64_t applicable = 0, result = 0, last_resort = 0;
    unsigned i, max_forced = 0;
    int forced = 0;
    const psel_proto_caps_t *caps;

    for (i = 0; i < env->table->num_protos; ++i) {
        if (!psel_envelope_applies(env, i, x)) {
            continue;
        }
        applicable |= UCS_BIT(i);
        caps        = &env->table->caps[i];
        if (caps->cfg_thresh != PSEL_THRESH_AUTO) {
            max_forced = forced ? ucs_max(max_forced, caps->cfg_priority) :
                                  caps->cfg_priority;
            forced     = 1;
        }
    }

    /* a last resort drops out wherever another protocol applies */
    for (i = 0; i < env->table->num_protos; ++i) {
        if (env->table->caps[i].flags & PSEL_PROTO_CAP_LAST_RESORT) {
            last_resort |= UCS_BIT(i);
        }
    }
    if (applicable & ~last_resort) {
        applicable &= ~last_resort;
    }

    if (!forced) {
        return applicable;
    }
    for (i = 0; i < env->table->num_protos; ++i) {
        if ((applicable & UCS_BIT(i)) &&
            (env->table->caps[i].cfg_priority >= max_forced)) {
            result |= UCS_BIT(i);
        }
    }
    return result;
}

static int psel_select_close(double a, double b)
{
    return fabs(a - b) <= PSEL_SELECT_TIE_REL * fmax(fabs(a), fabs(b));
}

/* Protocol i's cost line at size x: of the flavour selection compares
 * (@a tie_break 0), or of the other one (1), which decides between two
 * protocols whose lines of the first are the same line: streamed sends over
 * a link slower than every copy cost the same per message whatever the
 * protocol, and the one that costs less alone is the better there */
static ucs_linear_func_t psel_envelope_func(const psel_envelope_t *env,
                                            unsigned i, size_t x,
                                            int tie_break)
{
    const psel_proto_caps_t *caps = &env->table->caps[i];
    int perf                      = env->select->config->select_perf;

    if (tie_break) {
        perf = (perf == PSEL_PERF_SINGLE) ? PSEL_PERF_MULTI : PSEL_PERF_SINGLE;
    }
    return psel_select_func_of(env->select, caps,
                               psel_proto_caps_range(caps, x), env->biased,
                               perf);
}

static int psel_select_same_line(ucs_linear_func_t fa, ucs_linear_func_t fb)
{
    return psel_select_close(fa.c, fb.c) && psel_select_close(fa.m, fb.m);
}

/* Nonzero if protocol a beats protocol b at size x (both must apply): the
 * cheaper, then the flatter; where the two lines are the same, the same by
 * the other flavour's lines; then the first of the list. */
static int psel_envelope_better(const psel_envelope_t *env, unsigned a,
                                unsigned b, size_t x)
{
    ucs_linear_func_t fa, fb;
    double cost_a, cost_b;
    int tie_break;

    for (tie_break = 0; tie_break <= 1; ++tie_break) {
        fa = psel_envelope_func(env, a, x, tie_break);
        fb = psel_envelope_func(env, b, x, tie_break);
        if (psel_select_same_line(fa, fb)) {
            continue;
        }
        cost_a = ucs_linear_func_apply(fa, (double)x);
        cost_b = ucs_linear_func_apply(fb, (double)x);
        if (cost_a != cost_b) {
            return cost_a < cost_b;
        }
        return fa.m < fb.m; /* equal at x and not the same line */
    }
    return a < b;
}

/* Nonzero if protocol a beats protocol b at size x by the switch margin:
 * costs less than (1 - margin) times b's; with no margin, as
 * psel_envelope_better() */
static int psel_envelope_beats(const psel_envelope_t *env, unsigned a,
                               unsigned b, size_t x)
{
    double cost_a, cost_b;

    if (env->margin <= 0) {
        return psel_envelope_better(env, a, b, x);
    }
    cost_a = ucs_linear_func_apply(psel_envelope_func(env, a, x, 0), (double)x);
    cost_b = ucs_linear_func_apply(psel_envelope_func(env, b, x, 0), (double)x);
    return cost_a < (1.0 - env->margin) * cost_b;
}

static unsigned psel_envelope_winner(const psel_envelope_t *env,
                                     uint64_t candidates, size_t x)
{
    unsigned i, winner = UINT_MAX;

    for (i = 0; i < env->table->num_protos; ++i) {
        if ((candidates & UCS_BIT(i)) &&
            ((winner == UINT_MAX) || psel_envelope_better(env, i, winner, x))) {
            winner = i;
        }
    }
    return winner;
}

/* The protocol that serves sizes from x on, where @a prev served those
 * before (UINT_MAX: none, or the candidates changed it away): @a prev as
 * long as no candidate beats it by the switch margin, then the cheapest;
 * with no previous one, the first of the list (the natural order: short,
 * bcopy, zcopy, rendezvous) that no later one beats by the margin. So every
 * candidate costs at least (1 - margin) times the winner's */
static unsigned psel_envelope_keep(const psel_envelope_t *env,
                                   uint64_t candidates, size_t x,
                                   unsigned prev)
{
    unsigned i, winner = UINT_MAX;

    if ((prev != UINT_MAX) && (candidates & UCS_BIT(prev))) {
        for (i = 0; i < env->table->num_protos; ++i) {
            if ((candidates & UCS_BIT(i)) && psel_envelope_beats(env, i, prev, x)) {
                return psel_envelope_winner(env, candidates, x);
            }
        }
        return prev;
    }
    for (i = 0; i < env->table->num_protos; ++i) {
        if ((candidates & UCS_BIT(i)) &&
            ((winner == UINT_MAX) || psel_envelope_beats(env, i, winner, x))) {
            winner = i;
        }
    }
    return winner;
}

/* Last size at or after x where the candidate set and every candidate's cost
 * line stay the same: the next range end, min_length or forced threshold. */
static size_t psel_envelope_stable_until(const psel_envelope_t *env, size_t x)
{
    size_t end = SIZE_MAX;
    const psel_proto_caps_t *caps;
    unsigned i, r;

    for (i = 0; i < env->table->num_protos; ++i) {
        if (env->table->status[i] != UCS_OK) {
            continue;
        }
        caps = &env->table->caps[i];
        if (caps->min_length > x) {
            end = ucs_min(end, caps->min_length - 1);
        }
        if ((caps->cfg_thresh != PSEL_THRESH_AUTO) && (caps->cfg_thresh > x)) {
            end = ucs_min(end, caps->cfg_thresh - 1);
        }
        for (r = 0; r < caps->num_ranges; ++r) {
            if (caps->ranges[r].max_length >= x) {
                end = ucs_min(end, caps->ranges[r].max_length);
                break;
            }
        }
    }
    return end;
}

/*
 * First size in (lo, end] where q beats w (by the switch margin), given
 * that w wins at lo and both lines are fixed on [lo, end]. The closed-form
 * crossing gives a guess; a bracketing search with the same comparator the
 * lookup tests use makes the answer exact despite floating-point rounding.
 */
static int psel_envelope_first_win(const psel_envelope_t *env, unsigned q,
                                   unsigned w, size_t lo, size_t end,
                                   size_t *x_p)
{
    ucs_linear_func_t fq, fw;
    size_t guess, hi, cand, step;
    double cross;

    fq = psel_envelope_func(env, q, lo, 0);
    fw = psel_envelope_func(env, w, lo, 0);
    if (env->margin > 0) {
        /* q must beat w's line less the margin */
        fw = ucs_linear_func_make(fw.c * (1.0 - env->margin),
                                  fw.m * (1.0 - env->margin));
    } else if (psel_select_same_line(fq, fw)) {
        /* the same line on all of [lo, end]: the other flavour decides */
        fq = psel_envelope_func(env, q, lo, 1);
        fw = psel_envelope_func(env, w, lo, 1);
    }
    if ((fq.m >= fw.m) || (lo == end)) {
        return 0; /* q is no cheaper per byte: it cannot overtake */
    }

    cross = (fq.c - fw.c) / (fw.m - fq.m);
    if (!(cross > (double)lo)) {
        guess = lo + 1;
    } else if (cross >= (double)end) {
        guess = end;
    } else {
        guess = ucs_max(lo + 1, ucs_min(end, (size_t)ceil(cross)));
    }

    step = 1;
    if (psel_envelope_beats(env, q, w, guess)) {
        hi = guess;
        while (hi - lo > 1) {
            cand = (hi - lo > step) ? (hi - step) : (lo + 1);
            if (!psel_envelope_beats(env, q, w, cand)) {
                lo = cand;
                break;
            }
            hi    = cand;
            step *= 2;
        }
    } else {
        lo = guess;
        for (;;) {
            if (lo == end) {
                return 0;
            }
            cand = (end - lo > step) ? (lo + step) : end;
            if (psel_envelope_beats(env, q, w, cand)) {
                hi = cand;
                break;
            }
            lo    = cand;
            step *= 2;
        }
    }

    while (hi - lo > 1) {
        cand = lo + (hi - lo) / 2;
        if (psel_envelope_beats(env, q, w, cand)) {
            hi = cand;
        } else {
            lo = cand;
        }
    }
    *x_p = hi;
    return 1;
}

static ucs_status_t psel_segments_push(psel_segments_t *segs, size_t end,
                                       unsigned proto)
{
    psel_segment_t *items;
    unsigned capacity;

    if ((segs->count > 0) && (segs->items[segs->count - 1].proto == proto)) {
        segs->items[segs->count - 1].end = end;
        return UCS_OK;
    }
    if (segs->count == PSEL_ENVELOPE_MAX_SEGMENTS) {
        ucs_error("selection: more than %d segments, giving up",
                  PSEL_ENVELOPE_MAX_SEGMENTS);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    if (segs->count == segs->capacity) {
        capacity = ucs_max(16, 2 * segs->capacity);
        items    = realloc(segs->items, capacity * sizeof(*items));
        if (items == NULL) {
            return UCS_ERR_NO_MEMORY;
        }
        segs->items    = items;
        segs->capacity = capacity;
    }
    segs->items[segs->count].end   = end;
    segs->items[segs->count].proto = proto;
    ++segs->count;
    return UCS_OK;
}

static void psel_envelope_report_uncovered(const psel_envelope_t *env,
                                           size_t start)
{
    const psel_select_table_t *table = env->table;
    const psel_select_t *select      = env->select;
    ucs_string_buffer_t strb;
    size_t end = start;
    unsigned i;

    ucs_string_buffer_init(&strb);

    /* find where coverage resumes, to name the whole gap */
    while ((end < SIZE_MAX) && (psel_envelope_candidates(env, end + 1) == 0)) {
        end = psel_envelope_stable_until(env, end + 1);
    }

    ucs_string_buffer_appendf(&strb, "no protocol for ");
    psel_buffer_type_str(table->buf_type, &strb);
    ucs_string_buffer_appendf(&strb, " at sizes %zu..", start);
    psel_size_str(end, &strb);
    ucs_string_buffer_appendf(&strb, ":");
    for (i = 0; i < table->num_protos; ++i) {
        if (!psel_select_serves(select, table, i)) {
            continue;
        }
        ucs_string_buffer_appendf(&strb, " %s (", select->protos[i]->name);
        psel_select_proto_status_str(table, i, &strb);
        ucs_string_buffer_appendf(&strb, ");");
    }
    ucs_string_buffer_rtrim(&strb, ";");
    ucs_error("%s", ucs_string_buffer_cstr(&strb));
    ucs_string_buffer_cleanup(&strb);
}

/* Lower envelope over 0..SIZE_MAX, biased or not, with the switch margin
 * (psel_envelope_keep) */
static ucs_status_t psel_envelope_walk(const psel_envelope_t *env,
                                       psel_segments_t *segs)
{
    size_t start = 0, end, x;
    unsigned w = UINT_MAX, q;
    uint64_t candidates;
    ucs_status_t status;

    segs->count = 0;
    for (;;) {
        candidates = psel_envelope_candidates(env, start);
        if (candidates == 0) {
            psel_envelope_report_uncovered(env, start);
            return UCS_ERR_UNSUPPORTED;
        }

        w   = psel_envelope_keep(env, candidates, start, w);
        end = psel_envelope_stable_until(env, start);
        for (q = 0; q < env->table->num_protos; ++q) {
            if ((q != w) && (candidates & UCS_BIT(q)) &&
                psel_envelope_first_win(env, q, w, start, end, &x)) {
                end = x - 1;
            }
        }

        status = psel_segments_push(segs, end, w);
        if (status != UCS_OK) {
            return status;
        }
        if (end == SIZE_MAX) {
            return UCS_OK;
        }
        start = end + 1;
    }
}

static unsigned psel_segments_at(const psel_segments_t *segs, size_t x)
{
    unsigned i;

    for (i = 0; x > segs->items[i].end; ++i) {
    }
    return segs->items[i].proto;
}

static size_t psel_size_double(size_t x)
{
    return (x > SIZE_MAX / 2) ? SIZE_MAX : (2 * x);
}

/* Nonzero if proto wins without bias somewhere in [x/2, 2x]. */
static int psel_unbiased_wins_near(const psel_segments_t *unbiased,
                                   unsigned proto, size_t x)
{
    size_t start = 0;
    unsigned i;

    for (i = 0; i < unbiased->count; ++i) {
        if ((unbiased->items[i].proto == proto) &&
            (x >= start / 2) && (x <= psel_size_double(unbiased->items[i].end))) {
            return 1;
        }
        start = unbiased->items[i].end + 1;
    }
    return 0;
}

static int psel_size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t*)a, y = *(const size_t*)b;

    return (x > y) - (x < y);
}

/* Final envelope under the bounded bias rule of select.h. It is constant
 * between the ends of both envelopes and the ends of the [a/2, 2b] windows. */
static ucs_status_t psel_envelope_bounded_bias(const psel_segments_t *unbiased,
                                               const psel_segments_t *biased,
                                               psel_segments_t *result)
{
    unsigned num_points = 0, i, b, u;
    size_t start = 0, seg_start = 0;
    ucs_status_t status;
    size_t *points;

    /* sized to need, not to the bound: the bound's 48 KB of stack cost page
     * faults on first use */
    points = malloc(sizeof(*points) * (3 * unbiased->count +
                                       biased->count));
    if (points == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    for (i = 0; i < unbiased->count; ++i) {
        points[num_points++] = unbiased->items[i].end;
        points[num_points++] = psel_size_double(unbiased->items[i].end);
        if (seg_start / 2 > 0) {
            points[num_points++] = seg_start / 2 - 1;
        }
        seg_start = unbiased->items[i].end + 1;
    }
    for (i = 0; i < biased->count; ++i) {
        points[num_points++] = biased->items[i].end;
    }
    qsort(points, num_points, sizeof(*points), psel_size_cmp);

    result->count = 0;
    status = UCS_OK;
    for (i = 0; i < num_points; ++i) {
        if ((points[i] < start) || ((i > 0) && (points[i] == points[i - 1]))) {
            continue;
        }
        b      = psel_segments_at(biased, start);
        u      = psel_segments_at(unbiased, start);
        status = psel_segments_push(result, points[i],
                                    ((b == u) ||
                                     psel_unbiased_wins_near(unbiased, b, start)) ?
                                    b : u);
        if ((status != UCS_OK) || (points[i] == SIZE_MAX)) {
            break;
        }
        start = points[i] + 1;
    }
    free(points);
    return status;
}

double psel_select_switch_margin(const psel_select_t *select)
{
    const struct psel_calib *calib = select->calib;

    if (select->config->switch_margin != PSEL_SWITCH_MARGIN_AUTO) {
        return select->config->switch_margin;
    }
    /* two lines measured apart each move by the run spread */
    return ((calib != NULL) && calib->has_noise) ?
           ucs_min(ucs_max(2.0 * calib->noise.spread, PSEL_SWITCH_MARGIN_MIN),
                   PSEL_SWITCH_MARGIN_MAX) :
           PSEL_SWITCH_MARGIN_ATTR;
}

const char *psel_select_switch_margin_source(const psel_select_t *select)
{
    if (select->config->switch_margin != PSEL_SWITCH_MARGIN_AUTO) {
        return "UCX_PSEL_SWITCH_MARGIN";
    }
    return ((select->calib != NULL) && select->calib->has_noise) ?
           "the calibration's run spread" : "on attribute lines";
}

static int psel_select_has_bias(const psel_select_table_t *table,
                                const psel_config_t *config)
{
    unsigned i;

    if (psel_config_rndv_bias(config) >= 1.0) {
        return 0;
    }
    for (i = 0; i < table->num_protos; ++i) {
        if ((table->status[i] == UCS_OK) &&
            (table->caps[i].flags & PSEL_PROTO_CAP_RNDV_BIAS)) {
            return 1;
        }
    }
    return 0;
}

static ucs_status_t psel_select_envelope(const psel_select_t *select,
                                         const psel_select_table_t *table,
                                         psel_segments_t *result)
{
    psel_envelope_t env               = {select, table, 0,
                                         psel_select_switch_margin(select)};
    psel_segments_t unbiased          = PSEL_SEGMENTS_INITIALIZER;
    psel_segments_t biased            = PSEL_SEGMENTS_INITIALIZER;
    ucs_status_t status;

    if (!psel_select_has_bias(table, select->config)) {
        return psel_envelope_walk(&env, result);
    }

    status = psel_envelope_walk(&env, &unbiased);
    if (status != UCS_OK) {
        goto out_free;
    }
    env.biased = 1;
    status     = psel_envelope_walk(&env, &biased);
    if (status != UCS_OK) {
        goto out_free;
    }
    status = psel_envelope_bounded_bias(&unbiased, &biased, result);

out_free:
    free(biased.items);
    free(unbiased.items);
    return status;
}

/* Protocol init output is trusted no more than any other input. */
static ucs_status_t psel_select_check_caps(const psel_proto_t *proto,
                                           const psel_proto_caps_t *caps)
{
    unsigned r, t;
    size_t prev = 0;

    if ((caps->num_ranges == 0) || (caps->num_ranges > PSEL_PROTO_MAX_RANGES) ||
        (caps->priv_size > PSEL_PROTO_PRIV_MAX)) {
        ucs_error("protocol %s: invalid caps: %u perf ranges, %zu private bytes",
                  proto->name, caps->num_ranges, caps->priv_size);
        return UCS_ERR_INVALID_PARAM;
    }
    for (r = 0; r < caps->num_ranges; ++r) {
        if (((r > 0) && (caps->ranges[r].max_length <= prev)) ||
            (caps->ranges[r].max_length < caps->min_length)) {
            ucs_error("protocol %s: perf range %u ends at %zu, not after %zu",
                      proto->name, r, caps->ranges[r].max_length,
                      (r > 0) ? prev : caps->min_length);
            return UCS_ERR_INVALID_PARAM;
        }
        for (t = 0; t < PSEL_PERF_LAST; ++t) {
            if (!isfinite(caps->ranges[r].perf[t].c) ||
                !isfinite(caps->ranges[r].perf[t].m) ||
                (caps->ranges[r].perf[t].c < 0) ||
                (caps->ranges[r].perf[t].m < 0)) {
                ucs_error("protocol %s: perf range %u has cost %g + %g*x",
                          proto->name, r, caps->ranges[r].perf[t].c,
                          caps->ranges[r].perf[t].m);
                return UCS_ERR_INVALID_PARAM;
            }
        }
        prev = caps->ranges[r].max_length;
    }
    return UCS_OK;
}

/* Measured lines in place of @a caps' own (select->calib), flagged: UCS_OK,
 * or UCS_ERR_UNSUPPORTED (the reason in caps->desc) when the table is for
 * stock UCP and UCP ran another protocol when this one was forced */
static ucs_status_t psel_select_calib_apply(const psel_select_t *select,
                                            const psel_proto_t *proto,
                                            ucs_memory_type_t mem_type,
                                            psel_proto_caps_t *caps)
{
    const char *lines_name = psel_proto_lines_name(proto);
    psel_calib_applied_t applied;

    if (!select->calib_for_ucp) {
        applied = psel_calib_apply(select->calib, lines_name, caps->lanes,
                                   mem_type, caps) ?
                  PSEL_CALIB_APPLIED_PROTOSEL : PSEL_CALIB_APPLIED_NONE;
    } else {
        /* UCP's own protocol of this operation measured (an active
         * message's, psel_calibrate --ucp) before its twin's lines */
        if ((proto->twin != NULL) &&
            (psel_calib_find_via(select->calib, PSEL_CALIB_VIA_UCP,
                                 proto->name, caps->lanes, mem_type) != NULL)) {
            lines_name = proto->name;
        }
        applied = psel_calib_apply_for_ucp(select->calib, lines_name,
                                           caps->lanes, mem_type, caps);
    }

    switch (applied) {
    case PSEL_CALIB_APPLIED_UCP:
        caps->flags |= PSEL_PROTO_CAP_CALIBRATED | PSEL_SELECT_CAP_MEASURED_UCP;
        break;
    case PSEL_CALIB_APPLIED_PROTOSEL:
        caps->flags |= PSEL_PROTO_CAP_CALIBRATED;
        break;
    case PSEL_CALIB_APPLIED_UNSUPPORTED:
        snprintf(caps->desc, sizeof(caps->desc), "stock UCP ran another "
                 "protocol when it was forced over these lanes "
                 "(psel_calibrate --ucp)");
        return UCS_ERR_UNSUPPORTED;
    default:
        break;
    }
    return UCS_OK;
}

/* Protocol @a i's caps over @a select's lanes: its init, then the
 * calibration, then the checks */
static ucs_status_t
psel_select_proto_caps(const psel_select_t *select,
                       const psel_proto_init_params_t *params, unsigned i,
                       psel_proto_caps_t *caps)
{
    const psel_proto_t *proto   = select->protos[i];
    psel_buffer_type_t buf_type = params->buf_type;
    ucs_status_t status;

    caps->cfg_thresh = PSEL_THRESH_AUTO;
    if (!(proto->op_mask & UCS_BIT(buf_type.op))) {
        snprintf(caps->desc, sizeof(caps->desc), "does not serve %s",
                 psel_op_name(buf_type.op));
        return UCS_ERR_UNSUPPORTED;
    } else if (!(select->enabled & UCS_BIT(i))) {
        return UCS_ERR_NO_ELEM;
    }

    status = proto->init(params, caps);
    /* calibration measures contiguous buffers only */
    if ((status == UCS_OK) && (select->calib != NULL) &&
        (buf_type.dt_class == PSEL_DT_CONTIG) && (buf_type.sg_count == 1)) {
        status = psel_select_calib_apply(select, proto, buf_type.mem_type,
                                         caps);
    }
    /* for stock UCP, a line of protosel's own that describes another
     * mechanism than UCP's protocol of that name is out */
    if ((status == UCS_OK) && select->calib_for_ucp &&
        (select->ucp_filter != NULL) &&
        !(caps->flags & PSEL_SELECT_CAP_MEASURED_UCP) &&
        !select->ucp_filter(proto, caps, caps->desc, sizeof(caps->desc))) {
        status = UCS_ERR_UNSUPPORTED;
    }
    if (status == UCS_OK) {
        status = psel_select_check_caps(proto, caps);
    }
    return status;
}

/* The table of select->caps_from for @a buf_type, when its caps are this
 * selection's too (select.h); else NULL */
static const psel_select_table_t *
psel_select_shared_table(const psel_select_t *select,
                         psel_buffer_type_t buf_type)
{
    psel_select_t *source = select->caps_from;
    const psel_select_table_t *table;

    if ((source == NULL) || (source == select) ||
        (source->lanes != select->lanes) || (source->calib != select->calib) ||
        (source->calib_for_ucp != select->calib_for_ucp) ||
        (source->ucp_filter != select->ucp_filter) ||
        (psel_select_build(source, buf_type, &table) != UCS_OK)) {
        return NULL;
    }
    return table;
}

/* Copy protocol @a i's caps and status from @a shared: 1, or 0 when the
 * table does not have them (no table, not its protocol, another
 * allow-list verdict) */
static int psel_select_copy_caps(const psel_select_t *select,
                                 const psel_select_table_t *shared, unsigned i,
                                 psel_proto_caps_t *caps,
                                 ucs_status_t *status_p)
{
    unsigned j;

    if (shared == NULL) {
        return 0;
    }
    for (j = 0; j < shared->num_protos; ++j) {
        if (shared->protos[j] != select->protos[i]) {
            continue;
        }
        if (!(select->caps_from->enabled & UCS_BIT(j)) !=
            !(select->enabled & UCS_BIT(i))) {
            return 0;
        }
        *caps     = shared->caps[j];
        *status_p = shared->status[j];
        return 1;
    }
    return 0;
}

static void psel_select_table_free(psel_select_table_t *table)
{
    free(table->elems);
    free(table->caps);
    free(table->status);
    free(table);
}

static ucs_status_t
psel_select_table_create(const psel_select_t *select,
                         psel_buffer_type_t buf_type,
                         psel_select_table_t **table_p)
{
    psel_proto_init_params_t params = {buf_type, select->lanes, select->config};
    const psel_select_table_t *shared;
    psel_select_table_t *table;
    psel_segments_t segs = PSEL_SEGMENTS_INITIALIZER;
    ucs_status_t status;
    unsigned i;

    table = calloc(1, sizeof(*table));
    if (table == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }

    table->buf_type   = buf_type;
    table->num_protos = select->num_protos;
    table->protos     = select->protos;
    table->caps       = calloc(select->num_protos, sizeof(*table->caps));
    table->status     = calloc(select->num_protos, sizeof(*table->status));
    if ((table->caps == NULL) || (table->status == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }

    shared = psel_select_shared_table(select, buf_type);
    for (i = 0; i < select->num_protos; ++i) {
        if (!psel_select_copy_caps(select, shared, i, &table->caps[i],
                                   &table->status[i])) {
            table->status[i] = psel_select_proto_caps(select, &params, i,
                                                      &table->caps[i]);
        }
    }

    status = psel_select_envelope(select, table, &segs);
    if (status != UCS_OK) {
        goto err_free;
    }

    table->elems = calloc(segs.count, sizeof(*table->elems));
    if (table->elems == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }
    for (i = 0; i < segs.count; ++i) {
        table->elems[i].max_length  = segs.items[i].end;
        table->elems[i].proto       = select->protos[segs.items[i].proto];
        table->elems[i].priv        = table->caps[segs.items[i].proto].priv;
        table->elems[i].proto_index = segs.items[i].proto;
    }
    table->count = segs.count;

    free(segs.items);
    *table_p = table;
    return UCS_OK;

err_free:
    free(segs.items);
    if (table != NULL) {
        psel_select_table_free(table);
    }
    return status;
}

ucs_status_t psel_select_init(psel_select_t *select,
                              const psel_proto_t *const *protos,
                              unsigned num_protos,
                              const psel_lane_sets_t *lanes,
                              const psel_config_t *config)
{
    unsigned i;

    if (num_protos > PSEL_SELECT_MAX_PROTOS) {
        ucs_error("selection: %u protocols, at most %d are supported",
                  num_protos, PSEL_SELECT_MAX_PROTOS);
        return UCS_ERR_INVALID_PARAM;
    }

    memset(select, 0, sizeof(*select));
    select->protos     = protos;
    select->num_protos = num_protos;
    select->lanes      = lanes;
    select->config     = config;
    for (i = 0; i < num_protos; ++i) {
        if (psel_config_allow_list_match(&config->protos, protos[i]->name)) {
            select->enabled |= UCS_BIT(i);
        }
    }
    kh_init_inplace(psel_select_tables, &select->tables);
    return UCS_OK;
}

void psel_select_cleanup(psel_select_t *select)
{
    psel_select_table_t *table;

    kh_foreach_value(&select->tables, table, {
        psel_select_table_free(table);
    });
    kh_destroy_inplace(psel_select_tables, &select->tables);
    memset(select->fast, 0, sizeof(select->fast));
}

ucs_status_t psel_select_build(psel_select_t *select,
                               psel_buffer_type_t buf_type,
                               const psel_select_table_t **table_p)
{
    psel_select_table_t *table;
    ucs_status_t status;
    khiter_t iter;
    int ret;

    iter = kh_get(psel_select_tables, &select->tables, buf_type.key);
    if (iter != kh_end(&select->tables)) {
        *table_p = kh_val(&select->tables, iter);
        return UCS_OK;
    }

    status = psel_select_table_create(select, buf_type, &table);
    if (status != UCS_OK) {
        return status;
    }

    iter = kh_put(psel_select_tables, &select->tables, buf_type.key, &ret);
    if (ret < 0) {
        psel_select_table_free(table);
        return UCS_ERR_NO_MEMORY;
    }
    kh_val(&select->tables, iter) = table;
    if (psel_buffer_type_is_fast(buf_type)) {
        select->fast[buf_type.op] = table;
    }

    if (select->config->proto_info == PSEL_PROTO_INFO_YES) {
        psel_select_dump_log(select, table);
    }

    *table_p = table;
    return UCS_OK;
}

const psel_select_elem_t *
psel_select_lookup_slow(psel_select_t *select, psel_buffer_type_t buf_type,
                        size_t length)
{
    const psel_select_table_t *table;

    if (psel_select_build(select, buf_type, &table) != UCS_OK) {
        return NULL;
    }
    return psel_select_table_find(table, length);
}
