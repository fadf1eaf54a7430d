/*
 * Cost-line arithmetic of the protocol tier (see lines.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "lines.h"

#include <ucs/sys/math.h>
#include <string.h>

unsigned psel_rt_lines_add(psel_rt_line_t *lines, unsigned count, unsigned max,
                           const psel_perf_range_t *ranges,
                           unsigned num_ranges, size_t start, size_t end)
{
    unsigned i;

    for (i = 0; (i < num_ranges) && (count <= max); ++i) {
        if (ranges[i].max_length < start) {
            continue;
        }
        if (count == max) {
            return max + 1;
        }
        lines[count].max_length = ucs_min(ranges[i].max_length, end);
        memcpy(lines[count].perf, ranges[i].perf, sizeof(lines[count].perf));
        ++count;
        if (ranges[i].max_length >= end) {
            break;
        }
    }
    return count;
}

unsigned psel_rt_lines_own(const psel_rt_line_t *in, unsigned num_in,
                           size_t start, const psel_rt_owner_t *owners,
                           unsigned num_owners, double owned_scale,
                           double unowned_scale, double delta,
                           psel_rt_line_t *out, unsigned max)
{
    unsigned i = 0, o = 0, count = 0, t;
    ucs_linear_func_t f;
    size_t x, end;
    double raise;

    if (num_in == 0) {
        return 0;
    }
    for (x = start; ; x = end + 1) {
        while ((i < num_in - 1) && (in[i].max_length < x)) {
            ++i;
        }
        while ((o < num_owners - 1) && (owners[o].max_length < x)) {
            ++o;
        }
        if (count == max) {
            return max + 1;
        }
        end = ucs_min(in[i].max_length, owners[o].max_length);
        out[count].max_length = end;
        for (t = 0; t < PSEL_PERF_LAST; ++t) {
            raise = delta + (0.5 * ucs_max(owners[o].slope[t],
                                           unowned_scale * in[i].perf[t].m));
            f     = owners[o].owned ? ucs_linear_func_make(0, owned_scale) :
                                      ucs_linear_func_make(raise, unowned_scale);
            out[count].perf[t] = ucs_linear_func_compose(f, in[i].perf[t]);
        }
        ++count;
        if (end >= in[num_in - 1].max_length) {
            return count;
        }
    }
}

static int psel_rt_line_equal(const psel_rt_line_t *a,
                              const ucs_linear_func_t *perf)
{
    unsigned i;

    for (i = 0; i < PSEL_PERF_LAST; ++i) {
        if ((a->perf[i].c != perf[i].c) || (a->perf[i].m != perf[i].m)) {
            return 0;
        }
    }
    return 1;
}

unsigned psel_rt_lines_replace(const psel_rt_line_t *orig, unsigned num_orig,
                               size_t min_length, size_t pmin,
                               const psel_rt_line_t *pieces,
                               unsigned num_pieces, double penalty,
                               psel_rt_line_t *out, unsigned max_out,
                               unsigned *orig_index)
{
    ucs_linear_func_t perf[PSEL_PERF_LAST];
    const psel_rt_line_t *o;
    unsigned count = 0, u = 0, p = 0, t;
    size_t x, end, last;
    int covered;

    if (num_orig == 0) {
        return 0;
    }
    last = orig[num_orig - 1].max_length;
    for (x = min_length; ; x = end + 1) {
        while ((u < num_orig - 1) && (orig[u].max_length < x)) {
            ++u;
        }
        while ((p < num_pieces) && (pieces[p].max_length < x)) {
            ++p;
        }
        o       = &orig[u];
        covered = (x >= pmin) && (p < num_pieces);
        end     = o->max_length;
        if (covered) {
            end = ucs_min(end, pieces[p].max_length);
        } else if ((x < pmin) && (pmin - 1 < end)) {
            end = pmin - 1;
        }
        for (t = 0; t < PSEL_PERF_LAST; ++t) {
            perf[t] = covered ? pieces[p].perf[t] :
                      ucs_linear_func_compose(
                              ucs_linear_func_make(penalty,
                                                   PSEL_RT_PENALTY_SCALE),
                              o->perf[t]);
        }

        if ((count > 0) && psel_rt_line_equal(&out[count - 1], perf)) {
            out[count - 1].max_length = end;
        } else {
            if (count == max_out) {
                return 0;
            }
            out[count].max_length = end;
            for (t = 0; t < PSEL_PERF_LAST; ++t) {
                out[count].perf[t] = perf[t];
            }
            if (orig_index != NULL) {
                orig_index[count] = u;
            }
            ++count;
        }
        if (end >= last) {
            return count;
        }
    }
}
