/**
 * @file byte_ranges.h
 * The byte ranges of a message that have landed, for receivers whose
 * fragments may arrive out of order (eager reassembly in core's tag
 * matching, rndv/am data): sorted, disjoint, non-adjacent ranges, so a
 * fragment that overlaps bytes already there is found exactly. One range
 * while fragments arrive in order; two inline, more on the heap up to a
 * limit. Internal: not installed.
 */
#ifndef PSEL_UCP_PROTO_SEL_BYTE_RANGES_H_
#define PSEL_UCP_PROTO_SEL_BYTE_RANGES_H_

#include <ucs/type/status.h>
#include <stddef.h>

#define PSEL_BYTE_RANGES_INLINE 2u

/** Bytes [start, end). */
typedef struct psel_byte_range {
    size_t start;
    size_t end;
} psel_byte_range_t;

/** The landed ranges of one message. */
typedef struct psel_byte_ranges {
    psel_byte_range_t *ranges;   /**< Sorted; @a num of them */
    unsigned           num;
    unsigned           max;      /**< Room in @a ranges */
    unsigned           limit;    /**< Most ranges allowed */
    size_t             landed;   /**< Bytes in the ranges */
    psel_byte_range_t  inline_ranges[PSEL_BYTE_RANGES_INLINE];
} psel_byte_ranges_t;

/** No byte landed yet; at most @a limit separate ranges (>= 2). */
void psel_byte_ranges_init(psel_byte_ranges_t *r, unsigned limit);

/** Release what psel_byte_ranges_add() allocated. */
void psel_byte_ranges_cleanup(psel_byte_ranges_t *r);

/**
 * Record bytes [start, end) (start < end) as landed. On failure nothing
 * changes.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM if they overlap bytes that landed
 *         (or start >= end);
 *         UCS_ERR_EXCEEDS_LIMIT if that would take more than the limit of
 *         ranges; UCS_ERR_NO_MEMORY.
 */
ucs_status_t psel_byte_ranges_add(psel_byte_ranges_t *r, size_t start,
                                  size_t end);

#endif
