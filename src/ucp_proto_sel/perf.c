/*
 * Perf model helpers: buffer type names and cost-line formatting.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perf.h"

#include <ucs/sys/string.h>

#include <ucs/sys/math.h>
#include <stdint.h>

static const char *psel_op_names[] = {
    [PSEL_OP_TAG_SEND] = "tag send",
    [PSEL_OP_PUT]      = "put",
    [PSEL_OP_GET]      = "get",
    [PSEL_OP_AM_SEND]  = "am send"
};

static const char *psel_dt_class_names[] = {
    [PSEL_DT_CONTIG]  = "contig",
    [PSEL_DT_IOV]     = "iov",
    [PSEL_DT_GENERIC] = "generic"
};

const char *psel_op_name(psel_op_t op)
{
    return (op < PSEL_OP_LAST) ? psel_op_names[op] : "unknown op";
}

const char *psel_dt_class_name(psel_dt_class_t dt_class)
{
    return (dt_class < PSEL_DT_LAST) ? psel_dt_class_names[dt_class] :
                                       "unknown datatype";
}

void psel_buffer_type_str(psel_buffer_type_t bt, ucs_string_buffer_t *strb)
{
    ucs_string_buffer_appendf(strb, "%s, %s %s memory", psel_op_name(bt.op),
                              psel_dt_class_name(bt.dt_class),
                              (bt.mem_type < UCS_MEMORY_TYPE_LAST) ?
                              ucs_memory_type_names[bt.mem_type] : "unknown");
    if (bt.dt_class == PSEL_DT_IOV) {
        ucs_string_buffer_appendf(strb, ", %u buffers", bt.sg_count);
    }
}

/* Sizes to step past a computed crossing to absorb rounding */
#define PSEL_PERF_ENVELOPE_STEPS 64

/* The line largest at @a x; ties to the steeper one (largest from x on) */
static unsigned psel_perf_largest_at(const ucs_linear_func_t *lines,
                                     unsigned num_lines, double x)
{
    unsigned i, best = 0;
    double y, best_y = ucs_linear_func_apply(lines[0], x);

    for (i = 1; i < num_lines; ++i) {
        y = ucs_linear_func_apply(lines[i], x);
        if ((y > best_y) || ((y == best_y) && (lines[i].m > lines[best].m))) {
            best   = i;
            best_y = y;
        }
    }
    return best;
}

unsigned psel_perf_envelope(const ucs_linear_func_t *lines, unsigned num_lines,
                            size_t lo, size_t hi, psel_perf_segment_t *segments)
{
    unsigned count = 0, best, i, steps;
    size_t start   = lo, end, first;
    double cross;

    for (;;) {
        best = psel_perf_largest_at(lines, num_lines, (double)start);
        /* the first size after start where a steeper line is larger: the
         * crossing rounded down, plus one (equal at the crossing itself) */
        end = hi;
        for (i = 0; i < num_lines; ++i) {
            if ((lines[i].m <= lines[best].m) ||
                (ucs_linear_func_intersect(lines[i], lines[best], &cross) !=
                 UCS_OK) ||
                (cross >= (double)end)) {
                continue;
            }
            first = (cross < (double)start) ? (start + 1) :
                    ((size_t)cross + 1);
            /* rounding: step until the steeper line is really larger; a
             * difference below double precision is no crossing */
            for (steps = 0; (steps < PSEL_PERF_ENVELOPE_STEPS) &&
                            (first <= end) &&
                            (ucs_linear_func_apply(lines[i], first) <=
                             ucs_linear_func_apply(lines[best], first));
                 ++steps) {
                ++first;
            }
            if ((steps < PSEL_PERF_ENVELOPE_STEPS) && (first > start) &&
                (first - 1 < end)) {
                end = first - 1;
            }
        }
        segments[count].max_length = end;
        segments[count].index      = best;
        ++count;
        if ((end >= hi) || (count == num_lines)) {
            segments[count - 1].max_length = hi;
            return count;
        }
        start = end + 1;
    }
}

void psel_perf_func_str(ucs_linear_func_t func, ucs_string_buffer_t *strb)
{
    ucs_string_buffer_appendf(strb, "%.3f us + %.4f ns/B", func.c * 1e6,
                              func.m * 1e9);
}

void psel_size_str(size_t size, ucs_string_buffer_t *strb)
{
    char buf[32];

    /* ucs_memunits_to_str() but for (size_t)-2, which it names "auto" */
    if (size == UCS_MEMUNITS_AUTO) {
        ucs_string_buffer_appendf(strb, "%zu", size);
    } else {
        ucs_string_buffer_appendf(strb, "%s",
                                  ucs_memunits_to_str(size, buf, sizeof(buf)));
    }
}
