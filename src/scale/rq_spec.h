/**
 * @file rq_spec.h
 * Open MPI's btl_openib_receive_queues specification: parse, validate,
 * fill in the documented defaults, and compute the receive buffer memory a
 * process pays with N peers.
 *
 * Grammar (colon-separated queues, in ascending buffer size):
 *
 *     spec  := queue (':' queue)*
 *     queue := 'P' ',' size ',' num [',' low_wm [',' window [',' reserve]]]
 *            | 'S' ',' size ',' num [',' low_wm [',' max_pending]]
 *
 * Numbers are decimal integers without sign or blanks. Documented
 * defaults: low_wm = num/2; P: window = low_wm/2,
 * reserve = (2·num - 1)/window; S: max_pending = low_wm/4 (integer
 * division throughout). Rules: sizes ascend strictly; size, num >= 1;
 * low_wm < num; a P queue's window >= 1 (the reserve divides by it); an S
 * queue's max_pending >= 1 (with 0 no send could ever be posted).
 *
 * Memory, per process with N peers (a fully connected job of N + 1
 * processes):
 *  - P: every peer has its own queue of num + reserve buffers:
 *       N · (num + reserve) · size
 *  - S: one queue for all peers: num · size
 * low_wm, window and max_pending change when buffers are reposted or
 * credits returned, not how many exist, so they cost no memory.
 */
#ifndef PSEL_SCALE_RQ_SPEC_H_
#define PSEL_SCALE_RQ_SPEC_H_

#include <ucs/type/status.h>
#include <stddef.h>

#define PSEL_RQ_MAX_QUEUES     16          /**< Queues in one spec */
#define PSEL_RQ_MAX_SIZE       (1u << 30)  /**< Largest buffer size */
#define PSEL_RQ_MAX_COUNT      (1u << 20)  /**< Largest buffer count */
#define PSEL_RQ_ERROR_MAX      256         /**< Bytes of an error message */


/** Kind of queue: its letter in the spec. */
typedef enum {
    PSEL_RQ_PER_PEER = 'P',   /**< One queue pair and buffers per peer */
    PSEL_RQ_SHARED   = 'S'    /**< One shared receive queue for all peers */
} psel_rq_type_t;


/** One receive queue, defaults filled in. */
typedef struct psel_rq_queue {
    psel_rq_type_t type;         /**< P or S */
    unsigned       num_given;    /**< Fields given, the letter excluded
                                      (2..5): the rest are defaults */
    unsigned       size;         /**< Buffer size [B] */
    unsigned       num;          /**< Buffers */
    unsigned       low_wm;       /**< Low watermark: repost below it */
    unsigned       window;       /**< P: credits returned per window */
    unsigned       reserve;      /**< P: extra buffers for credit messages */
    unsigned       max_pending;  /**< S: max pending sends */
    size_t         column;       /**< 1-based column of its letter */
} psel_rq_queue_t;


/** A parsed specification. */
typedef struct psel_rq_spec {
    unsigned        num_queues;
    psel_rq_queue_t queues[PSEL_RQ_MAX_QUEUES];
} psel_rq_spec_t;


/**
 * Parse and validate a specification.
 *
 * @param [in]  text     The spec, NUL-terminated.
 * @param [out] spec     Filled on success only.
 * @param [out] error    On failure: "queue 2 (column 17): <what>, got
 *                       '<text>'" (may be NULL).
 * @param [in]  max      Size of @a error.
 * @param [out] column_p On failure: the 1-based column the error is at
 *                       (may be NULL).
 *
 * @return UCS_OK or UCS_ERR_INVALID_PARAM.
 */
ucs_status_t psel_rq_spec_parse(const char *text, psel_rq_spec_t *spec,
                                char *error, size_t max, size_t *column_p);

/**
 * Write a spec back in full, every default spelled out
 * ("P,128,256,128,64,7:S,1024,256,128,32").
 *
 * @return Characters written (as snprintf).
 */
int psel_rq_spec_format(const psel_rq_spec_t *spec, char *buf, size_t max);

/** @return Buffers one queue holds per peer (P) or in all (S). */
unsigned psel_rq_queue_buffers(const psel_rq_queue_t *queue);

/**
 * @return Receive buffer memory of one queue for a process with
 *         @a num_peers peers, in bytes (see the file comment).
 */
double psel_rq_queue_bytes(const psel_rq_queue_t *queue, size_t num_peers);

/** @return The sum of psel_rq_queue_bytes() over the spec. */
double psel_rq_spec_bytes(const psel_rq_spec_t *spec, size_t num_peers);


/** What a suggestion is derived from. */
typedef struct psel_rq_suggest_params {
    const size_t *eager_ends;    /**< Largest size of each eager row of the
                                      selection table, ascending */
    unsigned      num_eager;     /**< Entries in @a eager_ends */
    size_t        rndv_thresh;   /**< First rendezvous size, SIZE_MAX if
                                      none */
    int           srq;           /**< Nonzero: the device has SRQs */
    size_t        num_peers;     /**< Peers per process */
} psel_rq_suggest_params_t;

/**
 * Derive a specification from a selection (docs/scale.md, "Suggesting a spec"):
 * sizes from the eager rows plus a 64 B header allowance, to powers of two,
 * at least 128 B; the largest holds the largest eager message (capped at
 * 64 KiB without rendezvous); at most 4 queues. The first queue is P (it
 * carries credit messages); the others are S when the device has SRQs and
 * N · (per-peer buffers) exceeds the shared count, else P.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM if @a params->num_peers is 0.
 */
ucs_status_t psel_rq_suggest(const psel_rq_suggest_params_t *params,
                             psel_rq_spec_t *spec);

#endif
