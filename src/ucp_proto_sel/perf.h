/**
 * @file perf.h
 * The performance model: operations, buffer types and perf ranges.
 *
 * A protocol describes its cost as a list of perf ranges. Each range covers
 * message sizes up to its max_length and holds linear functions of the size
 * (seconds as a function of bytes), in two flavours as UCX does:
 *  - single: latency of one message, the sum of its stages;
 *  - multi:  cost per message when many are streamed: the slowest stage,
 *            i.e. the upper envelope of the stage lines (psel_perf_envelope),
 *            one line per range where a different stage is the slowest.
 */
#ifndef PSEL_UCP_PROTO_SEL_PERF_H_
#define PSEL_UCP_PROTO_SEL_PERF_H_

#include <ucs/datastruct/linear_func.h>
#include <ucs/datastruct/string_buffer.h>
#include <ucs/memory/memory_type.h>
#include <stddef.h>
#include <stdint.h>

/** Operations that protocols serve. */
typedef enum {
    PSEL_OP_TAG_SEND,       /**< Tagged send */
    PSEL_OP_PUT,            /**< One-sided write (ucp_put_nbx): cost model
                                 only, no data path */
    PSEL_OP_GET,            /**< One-sided read (ucp_get_nbx): cost model
                                 only */
    PSEL_OP_AM_SEND,        /**< Active message send (ucp_am_send_nbx):
                                 cost model only */
    PSEL_OP_LAST
} psel_op_t;

/** Datatype classes. */
typedef enum {
    PSEL_DT_CONTIG,         /**< Contiguous buffer */
    PSEL_DT_IOV,            /**< Scatter/gather list */
    PSEL_DT_GENERIC,        /**< Opaque datatype with pack/unpack callbacks */
    PSEL_DT_LAST
} psel_dt_class_t;

/** Perf flavours, see the file comment. */
typedef enum {
    PSEL_PERF_SINGLE,
    PSEL_PERF_MULTI,
    PSEL_PERF_LAST
} psel_perf_type_t;


/**
 * What a message looks like, apart from its size: the selection key. Packs
 * into 32 bits so it hashes cheaply.
 */
typedef union psel_buffer_type {
    struct {
        uint8_t op;        /**< psel_op_t */
        uint8_t dt_class;  /**< psel_dt_class_t */
        uint8_t mem_type;  /**< ucs_memory_type_t */
        uint8_t sg_count;  /**< Number of buffers (1 for contig) */
    };
    uint32_t    key;       /**< All of the above as one hash key */
} psel_buffer_type_t;


/** Costs of a protocol for sizes up to @a max_length. */
typedef struct psel_perf_range {
    size_t            max_length;           /**< Last size of the range */
    ucs_linear_func_t perf[PSEL_PERF_LAST]; /**< Time [s] of size [B] */
} psel_perf_range_t;


/**
 * Make a buffer type.
 *
 * @param [in] op        Operation.
 * @param [in] dt_class  Datatype class.
 * @param [in] mem_type  Memory type.
 * @param [in] sg_count  Number of buffers; saturates at 255.
 */
psel_buffer_type_t psel_buffer_type(psel_op_t op, psel_dt_class_t dt_class,
                                    ucs_memory_type_t mem_type,
                                    unsigned sg_count);

/** @return Nonzero if @a bt is contiguous host memory: the fast path. */
static inline int psel_buffer_type_is_fast(psel_buffer_type_t bt)
{
    return (bt.dt_class == PSEL_DT_CONTIG) &&
           (bt.mem_type == UCS_MEMORY_TYPE_HOST) && (bt.sg_count == 1);
}

/** Append a description such as "tag send, contig host memory" to @a strb. */
void psel_buffer_type_str(psel_buffer_type_t bt, ucs_string_buffer_t *strb);

/** @return Name of an operation, e.g. "tag send". */
const char *psel_op_name(psel_op_t op);

/** @return Name of a datatype class, e.g. "contig". */
const char *psel_dt_class_name(psel_dt_class_t dt_class);

/** One piece of an upper envelope: a line on sizes up to @a max_length. */
typedef struct psel_perf_segment {
    size_t   max_length;   /**< Last size the piece covers */
    unsigned index;        /**< The line that is the largest there */
} psel_perf_segment_t;


/**
 * Upper envelope (pointwise maximum) of lines over the sizes lo..hi, as
 * UCX 1.13 builds a protocol's "multi" cost from its stages: when messages
 * stream, the stages of consecutive messages overlap and the slowest one
 * paces the stream, so the cost at each size is the largest stage there.
 * Exact to the byte: piece k holds sizes where line index[k] is the
 * largest (ties go to the steeper line, which stays largest afterwards).
 * Pieces ascend and their lines' slopes strictly increase, so there are at
 * most @a num_lines pieces.
 *
 * @param [in]  lines      Lines, time [s] of size [B], non-negative slopes.
 * @param [in]  num_lines  Number of lines, at least 1.
 * @param [in]  lo         First size.
 * @param [in]  hi         Last size, >= lo.
 * @param [out] segments   At least @a num_lines entries.
 *
 * @return The number of pieces; the last ends at @a hi.
 */
unsigned psel_perf_envelope(const ucs_linear_func_t *lines, unsigned num_lines,
                            size_t lo, size_t hi,
                            psel_perf_segment_t *segments);

/** Append "c + m·x" as "<c in us> us + <m in ns/B> ns/B", e.g.
 *  "1.230 us + 0.4500 ns/B". */
void psel_perf_func_str(ucs_linear_func_t func, ucs_string_buffer_t *strb);

/** Append a size, "inf" for SIZE_MAX, with K/M/G suffix when exact. */
void psel_size_str(size_t size, ucs_string_buffer_t *strb);

#endif
