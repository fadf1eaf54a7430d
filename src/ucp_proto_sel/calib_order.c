/*
 * Fitting a transport setup's lines so that noise cannot turn into a table:
 * noisy points dropped, noisy lines refused, ties within noise go to the
 * natural order, and a fitted table that leaves the natural order without
 * the points showing it refuses the line that makes the turn. See calib.h,
 * psel_calib_fit_in_order(), and docs/calibration.md, "Natural order".
 */
#include "calib_int.h"

#include <ucs/sys/math.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A line that loses more than this share of its points to noise is refused */
#define PSEL_CALIB_NOISY_SHARE   (1.0 / 3)
/* Noisy points named in a report, at most */
#define PSEL_CALIB_REPORT_POINTS 6
/* Times closer than this (relative) always tie */
#define PSEL_CALIB_TIE_FLOOR     0.03
/* Rounds of lifting ranges to keep the table in order, at most */
#define PSEL_CALIB_ORDER_ROUNDS  64

static const char *psel_calib_flavour_names[] = {
    [PSEL_PERF_SINGLE] = "latency",
    [PSEL_PERF_MULTI]  = "streaming"
};

const char *psel_calib_flavour_name(psel_perf_type_t t)
{
    return psel_calib_flavour_names[t];
}

unsigned psel_calib_natural_rank(unsigned cfg_priority, size_t max_length)
{
    return 2 * cfg_priority + (max_length == SIZE_MAX);
}

static double psel_calib_spread_of(const psel_calib_point_t *point,
                                   psel_perf_type_t t)
{
    return isnan(point->spread[t]) ? 0 : point->spread[t];
}

/* How far two protocols' times at one size may be apart and still tie:
 * their summed run spreads, and at least PSEL_CALIB_TIE_FLOOR (protocols
 * are measured one after the other: the machine drifts in between) */
static double psel_calib_tie_margin(const psel_calib_point_t *a,
                                    const psel_calib_point_t *b,
                                    psel_perf_type_t t)
{
    return ucs_max(psel_calib_spread_of(a, t) + psel_calib_spread_of(b, t),
                   PSEL_CALIB_TIE_FLOOR);
}

static int psel_calib_time_usable(double t)
{
    return isfinite(t) && (t > 0);
}

static void psel_calib_line_clear(psel_calib_line_t *line)
{
    free(line->points);
    line->points     = NULL;
    line->num_points = 0;
    line->num_ranges = 0;
}

int psel_calib_entry_live(const psel_calib_order_entry_t *entry)
{
    return entry->line->num_points > 0;
}

/* 1. Drop the flavours of points whose spread is too wide; refuse the line
 * when too many points were noisy */
static void psel_calib_drop_noisy(psel_calib_order_entry_t *entry,
                                  double max_spread,
                                  ucs_string_buffer_t *report)
{
    psel_calib_line_t *line = entry->line;
    unsigned i, j, t, noisy = 0, total = line->num_points, usable;
    psel_calib_point_t *point;
    UCS_STRING_BUFFER_ONSTACK(names, 512);

    for (i = 0; i < line->num_points; ++i) {
        point = &line->points[i];
        for (t = 0; t < PSEL_PERF_LAST; ++t) {
            if (!psel_calib_time_usable(point->time[t]) ||
                !(point->spread[t] > max_spread)) {
                continue;
            }
            if (noisy < PSEL_CALIB_REPORT_POINTS) {
                ucs_string_buffer_appendf(&names, "%s%zu B %s %.0f%%",
                                          (noisy > 0) ? ", " : "",
                                          point->size,
                                          psel_calib_flavour_names[t],
                                          100 * point->spread[t]);
            } else if (noisy == PSEL_CALIB_REPORT_POINTS) {
                ucs_string_buffer_appendf(&names, ", ...");
            }
            point->time[t] = NAN;
            ++noisy;
        }
    }

    /* remove the points left without any time */
    for (i = j = 0; i < line->num_points; ++i) {
        if (psel_calib_time_usable(line->points[i].time[PSEL_PERF_SINGLE]) ||
            psel_calib_time_usable(line->points[i].time[PSEL_PERF_MULTI])) {
            line->points[j++] = line->points[i];
        }
    }
    line->num_points = j;
    usable           = j;
    if (noisy == 0) {
        return;
    }

    if ((noisy > PSEL_CALIB_NOISY_SHARE * PSEL_PERF_LAST * total) ||
        (usable < 2)) {
        ucs_string_buffer_appendf(report, "%s over %s: refused: %u of %u "
                                  "measurements kept a run spread above "
                                  "%.0f%% after re-measuring (%s); it keeps "
                                  "its attribute line\n", line->proto,
                                  line->lanes, noisy, PSEL_PERF_LAST * total,
                                  100 * max_spread,
                                  ucs_string_buffer_cstr(&names));
        psel_calib_line_clear(line);
    } else {
        ucs_string_buffer_appendf(report, "%s over %s: %u noisy measurement%s "
                                  "left out (run spread above %.0f%%: %s)\n",
                                  line->proto, line->lanes, noisy,
                                  (noisy == 1) ? "" : "s", 100 * max_spread,
                                  ucs_string_buffer_cstr(&names));
    }
}

static psel_calib_point_t *psel_calib_point_at(psel_calib_line_t *line,
                                               size_t size)
{
    unsigned idx = psel_calib_point_index(line, size);

    return ((idx < line->num_points) && (line->points[idx].size == size)) ?
           &line->points[idx] : NULL;
}

/* 2. A later rank faster than an earlier one by less than their spreads:
 * a tie, which the earlier rank keeps */
static void psel_calib_ties(psel_calib_order_entry_t *early,
                            psel_calib_order_entry_t *late,
                            ucs_string_buffer_t *report)
{
    psel_calib_point_t *pe, *pl;
    unsigned i, t, ties = 0;
    double te, tl, margin;

    for (i = 0; i < late->line->num_points; ++i) {
        pl = &late->line->points[i];
        pe = psel_calib_point_at(early->line, pl->size);
        for (t = 0; (pe != NULL) && (t < PSEL_PERF_LAST); ++t) {
            te     = pe->time[t];
            tl     = pl->time[t];
            margin = psel_calib_tie_margin(pe, pl, t);
            if (psel_calib_time_usable(te) && psel_calib_time_usable(tl) &&
                (tl < te) && (te <= tl * (1 + margin))) {
                pl->time[t] = te;
                ++ties;
            }
        }
    }
    if (ties > 0) {
        ucs_string_buffer_appendf(report, "%s over %s: %u measurement%s "
                                  "within noise of %s taken as a tie, which "
                                  "%s keeps\n", late->line->proto,
                                  late->line->lanes, ties,
                                  (ties == 1) ? "" : "s", early->line->proto,
                                  early->line->proto);
    }
}

double psel_calib_model(const psel_calib_line_t *line, size_t size,
                        psel_perf_type_t t)
{
    unsigned r;

    for (r = 0; r < line->num_ranges; ++r) {
        if (size <= line->ranges[r].max_length) {
            return ucs_linear_func_apply(line->ranges[r].perf[t], size);
        }
    }
    return INFINITY;
}

int psel_calib_winner(const psel_calib_order_entry_t *entries, unsigned num,
                      size_t size, psel_perf_type_t t)
{
    double best = INFINITY, y;
    int w       = -1;
    unsigned i;

    for (i = 0; i < num; ++i) {
        if (!psel_calib_entry_live(&entries[i]) ||
            (entries[i].line->num_ranges == 0) ||
            (size < entries[i].min_length) || (size > entries[i].max_length)) {
            continue;
        }
        y = psel_calib_model(entries[i].line, size, t);
        if ((y < best) ||
            ((y == best) && (w >= 0) && (entries[i].rank < entries[w].rank))) {
            best = y;
            w    = i;
        }
    }
    return w;
}

/* Relative distance of a line's fit of flavour @a t from its own point at
 * @a size */
static double psel_calib_fit_miss(psel_calib_line_t *line, size_t size,
                                  psel_perf_type_t t)
{
    psel_calib_point_t *p = psel_calib_point_at(line, size);
    double y;

    if (p == NULL) {
        return INFINITY;
    }
    y = p->time[t];
    return psel_calib_time_usable(y) ?
           (fabs(psel_calib_model(line, size, t) - y) / y) : INFINITY;
}

/* The first size of range @a r of @a line */
static size_t psel_calib_range_start(const psel_calib_line_t *line,
                                     unsigned r)
{
    return (r == 0) ? 0 : line->ranges[r - 1].max_length + 1;
}

/* The range of @a line that holds @a size */
static psel_perf_range_t *psel_calib_range_at(psel_calib_line_t *line,
                                              size_t size)
{
    unsigned r;

    for (r = 0; r < line->num_ranges; ++r) {
        if (size <= line->ranges[r].max_length) {
            return &line->ranges[r];
        }
    }
    return NULL;
}

/* A range of @a line that starts at @a size, split from the one that holds
 * it if needed (the same lines on both sides); or, when the line has no
 * room for another range, the one that holds it */
static psel_perf_range_t *psel_calib_range_from(psel_calib_line_t *line,
                                                size_t size)
{
    psel_perf_range_t *range = psel_calib_range_at(line, size);
    unsigned r;

    if ((range == NULL) || (size == 0) ||
        ((range > line->ranges) && ((range - 1)->max_length == size - 1)) ||
        (line->num_ranges == PSEL_PROTO_MAX_RANGES)) {
        return range;
    }
    r = range - line->ranges;
    memmove(range + 1, range, (line->num_ranges - r) * sizeof(*range));
    range->max_length = size - 1;
    ++line->num_ranges;
    return range + 1;
}

int psel_calib_take_out(psel_calib_line_t *line, size_t size,
                        psel_perf_type_t t, size_t *from_p)
{
    /* split at @a size; with no room for another range, the range holding
     * it starts before it */
    psel_perf_range_t *range = psel_calib_range_from(line, size);

    if (range == NULL) {
        return 0;
    }
    *from_p = psel_calib_range_start(line, range - line->ranges);
    for (; range < line->ranges + line->num_ranges; ++range) {
        range->perf[t].c += PSEL_CALIB_OUT_OF_TABLE;
    }
    return 1;
}

/*
 * Would raising @a up's line of flavour @a t by @a lift from @a lo to @a hi
 * put it at or above @a other's line at a measured size there where the
 * points show @a up faster than @a other beyond their spreads? A lift
 * settles a tie (noise) and must not undo what the points show: one noisy
 * point with a wide spread would otherwise lift a whole range.
 */
static int psel_calib_lift_contradicts(psel_calib_line_t *up,
                                       psel_calib_line_t *other, size_t lo,
                                       size_t hi, double lift,
                                       const size_t *sizes, unsigned num_sizes,
                                       psel_perf_type_t t)
{
    psel_calib_point_t *pu, *po;
    unsigned k;

    for (k = 0; k < num_sizes; ++k) {
        if ((sizes[k] < lo) || (sizes[k] > hi)) {
            continue;
        }
        pu = psel_calib_point_at(up, sizes[k]);
        po = psel_calib_point_at(other, sizes[k]);
        if ((pu == NULL) || (po == NULL) ||
            !psel_calib_time_usable(pu->time[t]) ||
            !psel_calib_time_usable(po->time[t]) ||
            !(pu->time[t] * (1 + psel_calib_tie_margin(pu, po, t)) <
              po->time[t])) {
            continue; /* not shown here */
        }
        if (psel_calib_model(up, sizes[k], t) + lift >=
            psel_calib_model(other, sizes[k], t)) {
            return 1;
        }
    }
    return 0;
}

/*
 * Do the points after sizes[@a k] show @a early faster than @a late beyond
 * their spreads, before any shows @a late faster? Then the table going back
 * from @a late to @a early is shown by the points, and a tie at sizes[k]
 * says only where, within the tie, it turns.
 */
static int psel_calib_turn_shown_after(psel_calib_line_t *early,
                                       psel_calib_line_t *late,
                                       const size_t *sizes, unsigned num_sizes,
                                       unsigned k, psel_perf_type_t t)
{
    psel_calib_point_t *pe, *pl;
    double margin;
    unsigned j;

    for (j = k + 1; j < num_sizes; ++j) {
        pe = psel_calib_point_at(early, sizes[j]);
        pl = psel_calib_point_at(late, sizes[j]);
        if ((pe == NULL) || (pl == NULL) ||
            !psel_calib_time_usable(pe->time[t]) ||
            !psel_calib_time_usable(pl->time[t])) {
            continue;
        }
        margin = psel_calib_tie_margin(pe, pl, t);
        if (pe->time[t] * (1 + margin) < pl->time[t]) {
            return 1;
        }
        if (pl->time[t] * (1 + margin) < pe->time[t]) {
            return 0;
        }
    }
    return 0;
}

/*
 * The most @a up's line of flavour @a t lies below @a other's over [@a lo,
 * @a hi] (0 if never): the lines are linear between range ends, so the
 * largest gap is at an end of the span or at a range end of either.
 */
static double psel_calib_gap_at(const psel_calib_line_t *up,
                                const psel_calib_line_t *other, size_t x,
                                psel_perf_type_t t)
{
    double gap = psel_calib_model(other, x, t) - psel_calib_model(up, x, t);

    return isfinite(gap) ? ucs_max(gap, 0) : 0; /* a line ended: no gap */
}

static double psel_calib_max_gap(const psel_calib_line_t *up,
                                 const psel_calib_line_t *other, size_t lo,
                                 size_t hi, psel_perf_type_t t)
{
    const psel_calib_line_t *lines[] = {up, other};
    double gap;
    unsigned i, r;
    size_t x;

    gap = ucs_max(psel_calib_gap_at(up, other, lo, t),
                  psel_calib_gap_at(up, other, hi, t));
    for (i = 0; i < 2; ++i) {
        for (r = 0; r < lines[i]->num_ranges; ++r) {
            x = lines[i]->ranges[r].max_length;
            if ((x >= lo) && (x <= hi)) {
                gap = ucs_max(gap, psel_calib_gap_at(up, other, x, t));
            }
        }
    }
    return gap;
}

/*
 * 4a. The fitted lines of flavour @a t of a later rank below an earlier
 * rank's at a size where the points tie: the fit, not the measurement,
 * would reorder the table. Lift the later line's cost of that flavour in
 * that range by the gap, if the gap is within the points' spreads there
 * (noise); what is left is for the turn check.
 */
static void psel_calib_lift_ties(psel_calib_order_entry_t *early,
                                 psel_calib_order_entry_t *late,
                                 const size_t *sizes, unsigned num_sizes,
                                 psel_perf_type_t t,
                                 ucs_string_buffer_t *report)
{
    double lift[PSEL_PROTO_MAX_RANGES] = {0}, te, tl, me, ml, margin;
    psel_calib_point_t *pe, *pl;
    psel_perf_range_t *range;
    unsigned k, r, lifted = 0;
    size_t x;

    if ((early->line->num_ranges == 0) || (late->line->num_ranges == 0)) {
        return;
    }
    for (k = 0; k < num_sizes; ++k) {
        x = sizes[k];
        if ((x < early->min_length) || (x > early->max_length) ||
            (x < late->min_length) || (x > late->max_length)) {
            continue;
        }
        me = psel_calib_model(early->line, x, t);
        ml = psel_calib_model(late->line, x, t);
        pe = psel_calib_point_at(early->line, x);
        pl = psel_calib_point_at(late->line, x);
        if (!(ml < me) || (pe == NULL) || (pl == NULL)) {
            continue;
        }
        te     = pe->time[t];
        tl     = pl->time[t];
        margin = psel_calib_tie_margin(pe, pl, t);
        if (!psel_calib_time_usable(te) || !psel_calib_time_usable(tl) ||
            (tl * (1 + margin) < te) ||       /* the points show it */
            (me - ml > margin * me)) {        /* more than noise: not ours */
            continue;
        }
        range = psel_calib_range_at(late->line, x);
        r     = range - late->line->ranges;
        lift[r] = ucs_max(lift[r], (me - ml) * (1 + 1e-9));
    }
    for (r = 0; r < late->line->num_ranges; ++r) {
        if ((lift[r] > 0) &&
            !psel_calib_lift_contradicts(late->line, early->line,
                                         psel_calib_range_start(late->line,
                                                                r),
                                         late->line->ranges[r].max_length,
                                         lift[r], sizes, num_sizes, t)) {
            late->line->ranges[r].perf[t].c += lift[r];
            ++lifted;
        }
    }
    if (lifted > 0) {
        ucs_string_buffer_appendf(report, "%s over %s: %u fitted %s range%s "
                                  "lifted to %s's line where the points tie "
                                  "within their spread\n",
                                  late->line->proto, late->line->lanes, lifted,
                                  psel_calib_flavour_names[t],
                                  (lifted == 1) ? "" : "s",
                                  early->line->proto);
    }
}

/*
 * 4b. The first turn back to an earlier rank, in the table of flavour @a t,
 * that the points do not show.
 * Within the points' spreads (noise) the earlier protocol's line is lifted
 * there, so the later one, which won at a smaller size, keeps winning;
 * beyond them the line whose fit strays further from its own point is
 * wrong: the earlier one is taken out of this table from that size on,
 * the later one is refused. Sizes where either protocol has no point
 * cannot be judged and are skipped. Returns 1 if it changed a line (check again), 0 if the
 * table is in order.
 */
static int psel_calib_fix_turn(psel_calib_order_entry_t *entries,
                               unsigned num, const size_t *sizes,
                               unsigned num_sizes, psel_perf_type_t t,
                               int allow_lift, ucs_string_buffer_t *why)
{
    psel_calib_point_t *pw, *ph;
    psel_perf_range_t *range;
    double tw, th, margin, gap, lift;
    int w, hi = -1, bad;
    size_t end, from;
    unsigned k;

    for (k = 0; k < num_sizes; ++k) {
        w = psel_calib_winner(entries, num, sizes[k], t);
        if (w < 0) {
            continue;
        }
        if ((hi < 0) || (entries[w].rank >= entries[hi].rank)) {
            hi = w;
            continue;
        }

        pw = psel_calib_point_at(entries[w].line, sizes[k]);
        ph = psel_calib_point_at(entries[hi].line, sizes[k]);
        tw = (pw != NULL) ? pw->time[t] : NAN;
        th = (ph != NULL) ? ph->time[t] : NAN;
        if (!psel_calib_time_usable(tw) || !psel_calib_time_usable(th)) {
            continue; /* no points of both here: cannot be judged */
        }
        margin = psel_calib_tie_margin(pw, ph, t);
        if ((tw * (1 + margin) < th) ||
            psel_calib_turn_shown_after(entries[w].line, entries[hi].line,
                                        sizes, num_sizes, k, t)) {
            continue; /* shown by the points, here or past a tie */
        }

        gap   = psel_calib_model(entries[hi].line, sizes[k], t) -
                psel_calib_model(entries[w].line, sizes[k], t);
        range = psel_calib_range_at(entries[w].line, sizes[k]);
        /* a lift from this size raises the range by the largest gap up to
         * the next measured size, not the point's: the later protocol must
         * not win at the point alone and lose one byte on, where the
         * earlier one's line is flatter. The next point is checked in its
         * own round, as before */
        end   = (k + 1 < num_sizes) ? (sizes[k + 1] - 1) : sizes[k];
        end   = ucs_min(ucs_min(range->max_length, end),
                        ucs_min(entries[w].max_length,
                                entries[hi].max_length));
        lift  = ucs_max(gap, psel_calib_max_gap(entries[w].line,
                                                entries[hi].line, sizes[k],
                                                ucs_max(end, sizes[k]), t)) *
                (1 + 1e-9) + 1e-15;
        if (psel_calib_lift_contradicts(entries[w].line, entries[hi].line,
                                        sizes[k], range->max_length, lift,
                                        sizes, num_sizes, t)) {
            continue; /* a tie here, and further on in this range the
                         points show the turn: the table may turn here */
        }
        if (allow_lift &&
            (gap <= margin * psel_calib_model(entries[w].line, sizes[k], t))) {
            /* from this size on: the smaller sizes keep the fit */
            range = psel_calib_range_from(entries[w].line, sizes[k]);
            range->perf[t].c += lift; /* above: not a tie */
            ucs_string_buffer_appendf(why, "%s over %s: fitted %s range "
                                      "lifted to %s's line at %zu B, where "
                                      "the points tie within their spread, "
                                      "so the table does not go back\n",
                                      entries[w].line->proto,
                                      entries[w].line->lanes,
                                      psel_calib_flavour_names[t],
                                      entries[hi].line->proto, sizes[k]);
            return 1;
        }

        /* the line whose fit strays further from its own point is wrong */
        bad = (psel_calib_fit_miss(entries[w].line, sizes[k], t) >
               psel_calib_fit_miss(entries[hi].line, sizes[k], t)) ? w : hi;
        if ((bad == w) &&
            psel_calib_take_out(entries[w].line, sizes[k], t, &from)) {
            /* the earlier protocol, which would win again here: out of
             * this table from here on, its line kept below (refused, it
             * would fall back to its attribute line, on another scale) */
            ucs_string_buffer_appendf(why, "%s over %s: taken out of the "
                                      "%s table from %zu B%s: with it the "
                                      "table would go back from %s to it "
                                      "at %zu B, which the points do not "
                                      "show beyond their spread (%s %.3f "
                                      "us, %s %.3f us)\n",
                                      entries[w].line->proto,
                                      entries[w].line->lanes,
                                      psel_calib_flavour_names[t], from,
                                      (from < sizes[k]) ?
                                      " (its fitted range there has no room "
                                      "to split)" : "",
                                      entries[hi].line->proto, sizes[k],
                                      entries[w].line->proto, tw * 1e6,
                                      entries[hi].line->proto, th * 1e6);
            return 1;
        }
        ucs_string_buffer_appendf(why, "%s over %s: refused: with it the "
                                  "%s table would go back from %s to %s at "
                                  "%zu B, which the points there do not show "
                                  "beyond their spread (%s %.3f us, %s %.3f "
                                  "us); it keeps its attribute line\n",
                                  entries[bad].line->proto,
                                  entries[bad].line->lanes,
                                  psel_calib_flavour_names[t],
                                  entries[hi].line->proto,
                                  entries[w].line->proto, sizes[k],
                                  entries[w].line->proto, tw * 1e6,
                                  entries[hi].line->proto, th * 1e6);
        psel_calib_line_clear(entries[bad].line);
        return 1;
    }
    return 0;
}

static int psel_calib_size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t*)a, y = *(const size_t*)b;

    return (x > y) - (x < y);
}

ucs_status_t psel_calib_fit_in_order(psel_calib_order_entry_t *entries,
                                     unsigned num, double max_spread,
                                     ucs_string_buffer_t *report)
{
    psel_calib_point_t **measured;
    unsigned i, j, t, num_sizes = 0, total = 0;
    ucs_status_t status = UCS_OK;
    size_t *sizes;

    for (i = 0; i < num; ++i) {
        psel_calib_drop_noisy(&entries[i], max_spread, report);
    }

    /* ties change what the lines are fitted on, not the points kept */
    measured = calloc(num, sizeof(*measured));
    if (measured == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    for (i = 0; i < num; ++i) {
        measured[i] = malloc((entries[i].line->num_points + 1) *
                             sizeof(**measured));
        if (measured[i] == NULL) {
            status = UCS_ERR_NO_MEMORY;
            goto out;
        }
        if (entries[i].line->num_points > 0) { /* a refused line has none */
            memcpy(measured[i], entries[i].line->points,
                   entries[i].line->num_points * sizeof(**measured));
        }
    }
    for (i = 0; i < num; ++i) {
        for (j = 0; j < num; ++j) {
            if ((entries[i].rank < entries[j].rank) &&
                psel_calib_entry_live(&entries[i]) &&
                psel_calib_entry_live(&entries[j])) {
                psel_calib_ties(&entries[i], &entries[j], report);
            }
        }
    }
    for (i = 0; i < num; ++i) {
        if (!psel_calib_entry_live(&entries[i])) {
            continue;
        }
        status = psel_calib_line_fit_knee(entries[i].line, entries[i].breaks,
                                          entries[i].num_breaks);
        memcpy(entries[i].line->points, measured[i],
               entries[i].line->num_points * sizeof(**measured));
        if (status == UCS_ERR_NO_MEMORY) {
            goto out;
        } else if (status != UCS_OK) {
            ucs_string_buffer_appendf(report, "%s over %s: no line fitted "
                                      "(%s)\n", entries[i].line->proto,
                                      entries[i].line->lanes,
                                      ucs_status_string(status));
            psel_calib_line_clear(entries[i].line);
        }
        total += entries[i].line->num_points;
    }
    status = UCS_OK;

    sizes = malloc((total + 1) * sizeof(*sizes));
    if (sizes == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto out;
    }
    for (i = 0; i < num; ++i) {
        for (j = 0; j < entries[i].line->num_points; ++j) {
            sizes[num_sizes++] = entries[i].line->points[j].size;
        }
    }
    qsort(sizes, num_sizes, sizeof(*sizes), psel_calib_size_cmp);
    for (i = j = 0; i < num_sizes; ++i) {
        if ((j == 0) || (sizes[j - 1] != sizes[i])) {
            sizes[j++] = sizes[i];
        }
    }
    num_sizes = j;

    /* both tables keep the order: one message's (single) and streamed
     * sends' (multi) */
    for (t = 0; t < PSEL_PERF_LAST; ++t) {
        for (i = 0; i < num; ++i) {
            for (j = 0; j < num; ++j) {
                if (entries[i].rank < entries[j].rank) {
                    psel_calib_lift_ties(&entries[i], &entries[j], sizes,
                                         num_sizes, t, report);
                }
            }
        }

        /* each round lifts a range or refuses a line; after too many
         * lifts, only refusals (each removes a line) */
        for (i = 0; (i < PSEL_CALIB_ORDER_ROUNDS) &&
                    psel_calib_fix_turn(entries, num, sizes, num_sizes, t, 1,
                                        report);
             ++i) {
        }
        for (; (i < PSEL_CALIB_ORDER_ROUNDS + num) &&
               psel_calib_fix_turn(entries, num, sizes, num_sizes, t, 0,
                                   report);
             ++i) {
        }
    }
    free(sizes);

out:
    for (i = 0; i < num; ++i) {
        free(measured[i]);
    }
    free(measured);
    return status;
}
