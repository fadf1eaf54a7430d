/**
 * @file perftest_run.h
 * The measuring core shared by psel_perftest and psel_calibrate: the test
 * parameters and their wire form and one side of a run (context, worker,
 * endpoint, buffers) in perftest_run.c; the tag_lat / tag_bw loops
 * (perftest_kernels.inc) and the warm-up in perftest_kernels.c. A run
 * measures protosel's data path, or stock UCP's (PT_PATH_UCP: its context,
 * worker, endpoint and loops in perftest_ucp.c; psel_calibrate --ucp). The
 * calibration session that a psel_perftest server runs for psel_calibrate:
 * perftest_session.h.
 */
#ifndef PSEL_TOOLS_PERFTEST_RUN_H_
#define PSEL_TOOLS_PERFTEST_RUN_H_

#include "perftest_oob.h"

#include <lane_select/clock.h>

#include <core/psel_core.h>

#include <ucp/api/ucp.h>

#include <stdint.h>
#include <stdio.h>

#define PT_DEFAULT_PORT        13337
#define PT_TIMEOUT_SEC         30.0       /* bound of every control wait */
#define PT_WARMUP_TIME_SEC     0.1        /* as ucx_perftest's warmup_time */
#define PT_MAX_SIZE            (1ull << 30)
#define PT_MAX_ITERS           (1ull << 62)
#define PT_MAX_OUTSTANDING     65536u
#define PT_MAX_ADDRESS_LEN     65536u
#define PT_MAX_REPLY_LEN       512u
#define PT_SPINS_PER_CHECK     16384u     /* progress calls between checks */

#define PT_WIRE_MAGIC          "PSPT"     /* the first 4 bytes */
#define PT_WIRE_VERSION        2u /* 2: little-endian; setup steps say
                                             why they failed */
#define PT_WIRE_PARAMS_SIZE    40u

#define PT_TAG_DATA            0x7073656c00000001ull
#define PT_TAG_REPLY           0x7073656c00000002ull
#define PT_TAG_ACK             0x7073656c00000003ull
#define PT_TAG_MASK_FULL       UINT64_MAX

/* Test flags, sent to the server */
#define PT_FLAG_WILDCARD       (1u << 0)  /* -C: receive with tag mask 0 */
#define PT_FLAG_COLD           (1u << 1)  /* consecutive messages use other
                                             buffers, over twice the last
                                             level cache (calibration) */
#define PT_FLAG_UCP            (1u << 2)  /* --ucp: both sides run stock
                                             UCP's data path (PT_PATH_UCP) */
#define PT_FLAGS_ALL           (PT_FLAG_WILDCARD | PT_FLAG_COLD | PT_FLAG_UCP)

#define PT_COLD_MAX_SPAN       (256ul << 20) /* bytes of rotating buffers */

typedef enum {
    PT_TEST_TAG_LAT,
    PT_TEST_TAG_BW,
    PT_TEST_CALIBRATE,      /* a calibration session (psel_calibrate) */
    PT_TEST_PUT_LAT,        /* put ping-pong, as ucx_perftest's ucp_put_lat;
                               this and the next five: stock UCP only
                               (psel_calibrate --ucp), perftest_ucp.c */
    PT_TEST_PUT_BW,         /* streamed puts, then a flush */
    PT_TEST_GET_LAT,        /* one get at a time, to completion */
    PT_TEST_GET_BW,         /* streamed gets */
    PT_TEST_AM_LAT,         /* active-message ping-pong (ucp_am_lat) */
    PT_TEST_AM_BW,          /* streamed active messages (ucp_am_bw) */
    PT_TEST_LAST
} pt_test_id_t;

typedef struct {
    const char *name;
    const char *desc;       /* "Test:" line of the server's box */
    const char *lat_label;  /* latency column title */
    unsigned    window;     /* default -O, as ucx_perftest */
    int         pingpong;   /* latency is half the round trip */
    int         streamed;   /* UCP_OP_ATTR_FLAG_MULTI_SEND: the cost
                               UCP's (multi) tables select on */
    int         rma;        /* a put or get test: the peer's buffers are
                               mapped, their keys exchanged */
    size_t      min_size;   /* put_lat: its last byte says it arrived */
} pt_test_info_t;

extern const pt_test_info_t pt_tests[PT_TEST_LAST];

/** An error message on stderr, "<program>: ..." (psel_oob_prog). */
#define PT_ERR(_fmt, ...) \
    fprintf(stderr, "%s: " _fmt, psel_oob_prog, ## __VA_ARGS__)

/** What the client tells the server (validated there as outside input). */
typedef struct {
    pt_test_id_t test;
    uint32_t     flags;        /* PT_FLAG_* */
    uint64_t     size;         /* message size, bytes */
    uint64_t     iters;        /* measured iterations */
    uint64_t     warmup;       /* warm-up iterations, at most */
    uint32_t     outstanding;  /* window; 0: the test's default */
} pt_params_t;

/** The data path a run measures. */
typedef enum {
    PT_PATH_PROTOSEL,       /**< protosel's (psel_core.h) */
    PT_PATH_UCP             /**< stock UCP's (ucp.h), protocols as UCX_*
                                 settings make it select them */
} pt_path_t;

#define PT_TIMING_QUEUE_SIZE   2048u      /* latency samples, percentile */

typedef struct {
    uint64_t iters, bytes, msgs;
    double   time;
} pt_counters_t;

/** What a client loop records after each measured iteration, as libperf's
 *  ucx_perf_update(): totals, the time of each of the last
 *  PT_TIMING_QUEUE_SIZE iterations, and a report call when due. */
typedef struct {
    pt_counters_t cur;       /* totals, and the clock at the last update */
    double        last;      /* the clock at the previous update */
    double        report_at; /* the clock of the next report */
    unsigned      head;      /* the next sample's place in queue */
    double        queue[PT_TIMING_QUEUE_SIZE];
    void        (*report)(void *arg);
    void         *report_arg;
} pt_timing_t;

/** One side of a run. */
typedef struct {
    pt_params_t      params;
    unsigned         window;
    uint64_t         recv_mask;
    pt_path_t        path;      /* what is measured; a forked peer
                                   inherits it, a psel_perftest server
                                   follows the client (PT_FLAG_UCP) */
    psel_context_h   context;   /* PT_PATH_PROTOSEL */
    psel_worker_h    worker;
    psel_ep_h        ep;
    ucp_context_h    ucp_context; /* PT_PATH_UCP */
    ucp_worker_h     ucp_worker;
    ucp_ep_h         ucp_ep;
    psel_oob_t       oob;
    void            *sbuf, *rbuf;
    size_t           buf_size;  /* bytes allocated in sbuf and rbuf */
    size_t           slot_size; /* PT_FLAG_COLD: bytes between buffers */
    unsigned         num_slots; /* buffers that messages rotate over (1
                                   without PT_FLAG_COLD) */
    uint64_t         ack;       /* tag_bw: messages the server received */
    int              sends;     /* sends started and not completed */
    int              recvs;     /* receives likewise */
    size_t           recv_size; /* what each receive of this side expects:
                                   params.size, 8 for the tag_bw ack */
    ucs_status_t     failure;   /* the first failed completion, or UCS_OK */
    const char      *failure_op;  /* its kind: "send" or "receive" */
    size_t           failure_got; /* its bytes, a truncated receive's */
    pt_timing_t     *timing;    /* a measured client phase's, or NULL */
    /* put and get tests (PT_PATH_UCP): this side's sbuf and rbuf mapped,
     * and the peer's, by their remote keys */
    ucp_mem_h        memh[2];   /* [0] sbuf, [1] rbuf; NULL: not mapped */
    ucp_rkey_h       peer_rkey[2];
    uint64_t         peer_addr[2];
    unsigned         peer_slots; /* slots of the peer's buffers */
    uint64_t         am_arrived; /* active messages whose data is here,
                                    since pt_prepare() */
} pt_run_t;


/** 0 if @a params are valid, else -1 with the reason in @a err. */
int pt_params_check(const pt_params_t *params, char *err, size_t len);

/** Wire form of @a params: "PSPT", then little-endian fields. */
void pt_params_pack(const pt_params_t *params, uint8_t buf[PT_WIRE_PARAMS_SIZE]);

/** Parse and check a wire form; -1 with the reason in @a err. */
int pt_params_unpack(const uint8_t buf[PT_WIRE_PARAMS_SIZE],
                     pt_params_t *params, char *err, size_t len);

/**
 * Client: send run->params, then read the server's verdict; a refusal is
 * printed with the server's reason ("the server rejected the @a what: ...").
 */
ucs_status_t pt_handshake_client(pt_run_t *run, const char *server,
                                 uint16_t port, const char *what);

/**
 * Server: read the client's parameters into run->params, check them as
 * outside input and answer accepted, or rejected with the reason.
 *
 * @return UCS_OK if accepted; UCS_ERR_INVALID_PARAM if rejected (printed).
 */
ucs_status_t pt_handshake_server(pt_run_t *run);

/**
 * Context, worker, address exchange over run->oob (the client sends first)
 * and endpoint, then buffers for run->params.
 */
ucs_status_t pt_connect(pt_run_t *run, int is_client);

/** Size the buffers for run->params (grows only); no operation is
 *  outstanding after it. */
ucs_status_t pt_prepare(pt_run_t *run);

/** The send or receive buffer of message @a i (rotating with
 *  PT_FLAG_COLD, else always the same). It runs between a completion and
 *  the next send: one slot costs no division (a 64-bit `div` is 3 to 15 ns
 *  on the round trip of tag_lat). */
static inline void *pt_buf(const pt_run_t *run, void *base, uint64_t i)
{
    if (ucs_likely(run->num_slots == 1)) {
        return base;
    }
    return (char*)base + (i % run->num_slots) * run->slot_size;
}

/**
 * Destroy the endpoint, worker and context; keep buffers and oob. Both sides
 * call it at the same point of the session (the UCP path closes its
 * endpoint in order and meets the peer at a barrier first).
 */
void pt_disconnect(pt_run_t *run);

/** Destroy what pt_connect() made without waiting for the peer, then free
 *  the buffers and close the oob connection. */
void pt_cleanup(pt_run_t *run);

/**
 * @a iters iterations of run->params.test. The client updates run->timing
 * after each one when @a measured.
 */
ucs_status_t pt_run_phase(pt_run_t *run, int is_client, uint64_t iters,
                          int measured);

/** One measured iteration of @a bytes done (inline: it runs between a
 *  completion and the next send). */
static inline void pt_timing_update(pt_timing_t *t, uint64_t bytes)
{
    double now = psel_time_sec();

    t->cur.time   = now;
    t->cur.iters += 1;
    t->cur.bytes += bytes;
    t->cur.msgs  += 1;
    t->queue[t->head] = now - t->last;
    t->head           = (t->head + 1) % PT_TIMING_QUEUE_SIZE;
    t->last           = now;
    if (ucs_unlikely(now >= t->report_at)) {
        t->report(t->report_arg);
    }
}

/*
 * Completion counting of the loops (perftest_kernels.inc), as libperf's:
 * a path counts an operation in run->sends or run->recvs before it starts
 * it (its callback can run before the call returns), passes what the call
 * returned to pt_started(), and its callback calls pt_send_done() or
 * pt_recv_done().
 */

/** Print the recorded failure, seen while waiting for @a what; @return
 *  it. */
ucs_status_t pt_report_failure(pt_run_t *run, const char *what);

/** Every PT_SPINS_PER_CHECK progress calls of a wait for @a what: the
 *  failure a completion recorded (printed), UCS_ERR_TIMED_OUT (printed)
 *  when it has waited PT_TIMEOUT_SEC from the first check (@a deadline, 0
 *  before it), UCS_ERR_CONNECTION_RESET when the peer closed the control
 *  connection, else UCS_OK. */
ucs_status_t pt_check_stalled(pt_run_t *run, double *deadline,
                              const char *what);

static inline void pt_fail(pt_run_t *run, const char *op,
                           ucs_status_t status, size_t got)
{
    if (run->failure == UCS_OK) {
        run->failure     = status;
        run->failure_op  = op;
        run->failure_got = got;
    }
}

/** UCS_OK, or the failure recorded by a completion (printed for @a what). */
static inline ucs_status_t pt_check_failed(pt_run_t *run, const char *what)
{
    if (ucs_likely(run->failure == UCS_OK)) {
        return UCS_OK;
    }
    return pt_report_failure(run, what);
}

/** What the call that started an operation counted in @a count returned:
 *  a request (@return UCS_INPROGRESS: its callback completes it), NULL
 *  (UCS_OK: done at once) or an error pointer (its status). */
static inline ucs_status_t pt_started(pt_run_t *run, int *count,
                                      const void *request)
{
    ucs_status_t status;

    if (UCS_PTR_IS_PTR(request)) {
        return UCS_INPROGRESS;
    }
    --*count; /* not outstanding */
    status = UCS_PTR_STATUS(request);
    if (UCS_STATUS_IS_ERR(status)) {
        pt_fail(run, (count == &run->sends) ? "send" : "receive", status, 0);
    }
    return status;
}

static inline void pt_send_done(pt_run_t *run, ucs_status_t status)
{
    --run->sends;
    if (ucs_unlikely(status != UCS_OK)) {
        pt_fail(run, "send", status, 0);
    }
}

/** A receive completed with a message of @a length bytes. */
static inline void pt_recv_done(pt_run_t *run, ucs_status_t status,
                                size_t length)
{
    --run->recvs;
    if (ucs_unlikely(status != UCS_OK)) {
        pt_fail(run, "receive", status, 0);
    } else if (ucs_unlikely(length != run->recv_size)) {
        pt_fail(run, "receive", UCS_ERR_MESSAGE_TRUNCATED, length);
    }
}


/* What perftest_ucp.c shares with perftest_run.c and perftest_kernels.c */

/**
 * UCP path: context (UCX_* settings of the environment), worker and its
 * address; on failure @a reason (PT_REASON_MAX) says why.
 */
ucs_status_t pt_ucp_setup_local(pt_run_t *run, void **address, size_t *len,
                                char *reason);

/** UCP path: the endpoint to the peer's worker address. */
ucs_status_t pt_ucp_ep_create(pt_run_t *run, const void *address, size_t len,
                              char *reason);

/**
 * UCP path: close the endpoint (flushed, then a barrier with the peer when
 * @a orderly) and destroy the worker and context.
 */
void pt_ucp_disconnect(pt_run_t *run, int orderly);

/**
 * UCP path, a put or get test (pt_tests[].rma): map this side's buffers
 * (again only when pt_prepare() replaced them) and exchange their addresses
 * and remote keys with the peer over the control connection (the client
 * first). Both sides call it before each measurement's phases.
 */
ucs_status_t pt_ucp_rma_exchange(pt_run_t *run, int is_client);

/** Release the peer's keys and unmap this side's buffers (none: no-op). */
void pt_ucp_rma_unmap(pt_run_t *run);

/** UCP path: pt_run_phase(). */
ucs_status_t pt_ucp_run_phase(pt_run_t *run, int is_client, uint64_t iters,
                              int measured);

/** Why this side failed, for the peer and stderr: the step, the status, the
 *  error logged since @a mark (psel_tool_diag_mark()) and the transport
 *  settings of the run's path. */
void pt_setup_reason(const pt_run_t *run, char *reason, const char *step,
                     ucs_status_t status, unsigned mark);

#define PT_REASON_MAX   256

/**
 * Warm up as ucx_perftest does: runs of 1, 2, 4... iterations until
 * run->params.warmup are done or PT_WARMUP_TIME_SEC passed; the client
 * decides and tells the server.
 */
ucs_status_t pt_warmup(pt_run_t *run, int is_client);

#endif
