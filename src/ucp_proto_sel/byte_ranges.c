/*
 * The landed byte ranges of a message (see byte_ranges.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "byte_ranges.h"

#include <ucs/sys/math.h>
#include <stdlib.h>
#include <string.h>

void psel_byte_ranges_init(psel_byte_ranges_t *r, unsigned limit)
{
    r->ranges = r->inline_ranges;
    r->num    = 0;
    r->max    = PSEL_BYTE_RANGES_INLINE;
    r->limit  = ucs_max(limit, PSEL_BYTE_RANGES_INLINE);
    r->landed = 0;
}

void psel_byte_ranges_cleanup(psel_byte_ranges_t *r)
{
    if (r->ranges != r->inline_ranges) {
        free(r->ranges);
    }
    r->ranges = r->inline_ranges;
    r->num    = 0;
    r->max    = PSEL_BYTE_RANGES_INLINE;
}

/* Index of the first range whose end is >= @a start (num if none). */
static unsigned psel_byte_ranges_find(const psel_byte_ranges_t *r,
                                      size_t start)
{
    unsigned lo = 0, hi = r->num, mid;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (r->ranges[mid].end < start) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Room for one more range. */
static ucs_status_t psel_byte_ranges_grow(psel_byte_ranges_t *r)
{
    psel_byte_range_t *ranges;
    unsigned max;

    if (r->num < r->max) {
        return UCS_OK;
    }
    if (r->max >= r->limit) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    max = ucs_min(r->max * 2, r->limit);
    if (r->ranges == r->inline_ranges) {
        ranges = malloc(max * sizeof(*ranges));
        if (ranges != NULL) {
            memcpy(ranges, r->inline_ranges, r->num * sizeof(*ranges));
        }
    } else {
        ranges = realloc(r->ranges, max * sizeof(*ranges));
    }
    if (ranges == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    r->ranges = ranges;
    r->max    = max;
    return UCS_OK;
}

ucs_status_t psel_byte_ranges_add(psel_byte_ranges_t *r, size_t start,
                                  size_t end)
{
    unsigned i = psel_byte_ranges_find(r, start);
    ucs_status_t status;
    unsigned next;
    int left, right;

    if (start >= end) {
        return UCS_ERR_INVALID_PARAM; /* an empty range would be kept */
    }
    /* ranges[i] ends at or after start: it overlaps unless it starts at or
     * after end, or ends exactly at start (then ranges[i + 1] may overlap) */
    next = ((i < r->num) && (r->ranges[i].end == start)) ? i + 1 : i;
    if ((next < r->num) && (r->ranges[next].start < end)) {
        return UCS_ERR_INVALID_PARAM;
    }

    left  = (i < r->num) && (r->ranges[i].end == start);
    right = (next < r->num) && (r->ranges[next].start == end);
    if (left && right) {
        r->ranges[i].end = r->ranges[next].end;
        memmove(&r->ranges[next], &r->ranges[next + 1],
                (r->num - next - 1) * sizeof(*r->ranges));
        --r->num;
    } else if (left) {
        r->ranges[i].end = end;
    } else if (right) {
        r->ranges[next].start = start;
    } else {
        status = psel_byte_ranges_grow(r);
        if (status != UCS_OK) {
            return status;
        }
        memmove(&r->ranges[i + 1], &r->ranges[i],
                (r->num - i) * sizeof(*r->ranges));
        r->ranges[i].start = start;
        r->ranges[i].end   = end;
        ++r->num;
    }
    r->landed += end - start;
    return UCS_OK;
}
