/**
 * @file lines.h
 * The protocol tier's arithmetic on cost lines, apart from UCP's types so
 * that it is unit-tested: protosel's perf ranges cut to sizes; marked with
 * the sizes protosel's table gives the protocol (ownership); and a UCP
 * protocol's ranges rebuilt from them, with UCP's own line plus a penalty
 * where protosel's do not reach.
 */
#ifndef PSEL_UCX_RUNTIME_LINES_H_
#define PSEL_UCX_RUNTIME_LINES_H_

#include <ucp_proto_sel/perf.h>

#include <stddef.h>

/** A last-resort line (psel_rt_lines_replace) grows this many times as fast
 * as UCP's own: with the constant penalty alone, a line of protosel's
 * passed it at large sizes (at 1 s, UCX's 12 MB/s tcp attributes on this
 * VM from 12 MB on). */
#define PSEL_RT_PENALTY_SCALE 1000.0

/** Sizes up to @a max_length on one line per perf flavour. */
typedef struct psel_rt_line {
    size_t            max_length;           /**< Last size of the piece */
    ucs_linear_func_t perf[PSEL_PERF_LAST]; /**< Time [s] of size [B] */
} psel_rt_line_t;


/** Sizes up to @a max_length, given to the protocol by protosel or not. */
typedef struct psel_rt_owner {
    size_t max_length;  /**< Last size */
    int    owned;       /**< Nonzero if protosel selects the protocol there */
    double slope[PSEL_PERF_LAST]; /**< The steepest slope [s/B], per flavour,
                                       of the protocol protosel selects
                                       there */
} psel_rt_owner_t;


/**
 * Append the pieces of protosel's @a ranges that cover @a start..@a end,
 * each cut at @a end.
 *
 * @param [inout] lines       Array of @a max entries.
 * @param [in]    count       Entries already used.
 * @param [in]    max         Capacity.
 * @param [in]    ranges      Ascending ranges; the first starts at or
 *                            before @a start.
 * @param [in]    num_ranges  Number of ranges.
 * @param [in]    start       First size.
 * @param [in]    end         Last size.
 *
 * @return The new count, or @a max + 1 if they do not fit (also when
 *         @a count is already @a max + 1).
 */
unsigned psel_rt_lines_add(psel_rt_line_t *lines, unsigned count, unsigned max,
                           const psel_perf_range_t *ranges,
                           unsigned num_ranges, size_t start, size_t end);

/**
 * Split lines at the boundaries of protosel's table for the protocol: where
 * protosel selects it they are multiplied by @a owned_scale (the rendezvous
 * bias, protosel's rule for comparing rendezvous with eager), elsewhere by
 * @a unowned_scale (1 / (1 - the switch margin): protosel keeps a protocol
 * against lines up to the margin below it), and @a delta and half a byte of
 * the steeper of the line and the selected protocol's
 * (psel_rt_owner_t::slope) are added. UCP's engine rounds a
 * crossing to the nearest byte and breaks exact ties by protocol id: the
 * half byte keeps a line that crosses the selected one inside a row (at
 * 625.24 B, say) from taking the byte nearest to it, and @a delta draws
 * each boundary at protosel's byte. At every size the protocol protosel
 * selects is the cheapest, over the whole byte, by at least @a delta.
 *
 * @param [in]  in          Lines, contiguous from @a start.
 * @param [in]  num_in      Their number.
 * @param [in]  start       First size of @a in.
 * @param [in]  owners      Ascending, the last ending at SIZE_MAX.
 * @param [in]  num_owners  Their number.
 * @param [in]  owned_scale Factor on time where owned.
 * @param [in]  unowned_scale Factor on time where not owned.
 * @param [in]  delta       Time [s] added where not owned.
 * @param [out] out         Array of @a max entries.
 * @param [in]  max         Capacity.
 *
 * @return Entries in @a out, or @a max + 1 if they do not fit.
 */
unsigned psel_rt_lines_own(const psel_rt_line_t *in, unsigned num_in,
                           size_t start, const psel_rt_owner_t *owners,
                           unsigned num_owners, double owned_scale,
                           double unowned_scale, double delta,
                           psel_rt_line_t *out, unsigned max);

/**
 * A protocol's new ranges: over its own sizes @a min_length .. the last
 * @a orig max_length, @a pieces where they reach (from @a pmin on), and
 * elsewhere the @a orig line of that size, PSEL_RT_PENALTY_SCALE times as
 * steep, plus @a penalty. Neighbours with equal lines are merged.
 *
 * @param [in]  orig        The protocol's ranges (ascending, >= 1).
 * @param [in]  num_orig    Their number.
 * @param [in]  min_length  The protocol's first size.
 * @param [in]  pmin        First size @a pieces cover.
 * @param [in]  pieces      Contiguous from @a pmin (may be none).
 * @param [in]  num_pieces  Their number.
 * @param [in]  penalty     Time [s] added where @a pieces do not reach.
 * @param [out] out         Array of @a max_out entries.
 * @param [in]  max_out     Capacity of @a out.
 * @param [out] orig_index  If not NULL, array of @a max_out entries: for
 *                          each entry of @a out, the entry of @a orig it
 *                          starts in (what else UCP keeps of a range, its
 *                          CPU time or perf node, comes from there).
 *
 * @return Entries in @a out, or 0 if they do not fit (or @a num_orig is 0).
 */
unsigned psel_rt_lines_replace(const psel_rt_line_t *orig, unsigned num_orig,
                               size_t min_length, size_t pmin,
                               const psel_rt_line_t *pieces,
                               unsigned num_pieces, double penalty,
                               psel_rt_line_t *out, unsigned max_out,
                               unsigned *orig_index);

#endif
