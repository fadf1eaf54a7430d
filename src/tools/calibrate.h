/**
 * @file calibrate.h
 * What the files of psel_calibrate share: the modes, the command line, the
 * run's context, measuring one point under a time budget and the noise
 * around it (calibrate_measure.c), and one transport setup: its rails and
 * its protocols (calibrate_setup.c). psel_calibrate.c holds main().
 */
#ifndef PSEL_TOOLS_CALIBRATE_H_
#define PSEL_TOOLS_CALIBRATE_H_

#include "perftest_session.h"

#include <ucp_proto_sel/calib.h>

#include <ucs/datastruct/string_buffer.h>
#include <limits.h>
#include <sys/types.h>

#define CAL_MAX_SIZES      128
#define CAL_MAX_REPEATS    9
#define CAL_MAX_RETRIES    3
#define CAL_SETTINGS_MAX   1024
#define CAL_COLD_MIN       (64ul << 10) /* from this size, buffers out of cache */
#define CAL_STREAM_MIN     8            /* tag_bw messages of a phase, at least */
#define CAL_MAX_ITERS      100000
#define CAL_RAIL_TRIES     2            /* measurements of a rail, fastest kept */
#define CAL_RAILS_SHARE    0.3          /* of a setup's time, for its rails */
#define CAL_LOAD_SLACK     0.5          /* CPUs of others' load tolerated */
#define CAL_LOAD_MIN_WINDOW 0.2         /* [s] others' load is averaged
                                           over at least this (20 ticks) */
#define CAL_SETTLE_ITERS   50           /* round trips after each connect */
#define CAL_MAX_RUNS       16           /* size ranges a protocol runs in */
#define CAL_MAX_PROCS      2048         /* processes a CPU sample follows */
#define CAL_LEVEL_TOLERANCE 0.15        /* a protocol's first size measured
                                           again after its sweep: a change
                                           beyond this plus both spreads is
                                           one of the machine's speed (tcp's
                                           own noise reaches 10%, the change
                                           seen here was 24%) */
#define CAL_LEVEL_RETRIES  1            /* sweeps again after such a change */
#define CAL_LEVEL_CHECK_TIME 1.0        /* [s] at most, the second time */
#define CAL_LEVEL_CHECK_EVERY 0.5       /* [s] in a sweep, between two
                                           measurements of its first size
                                           again: the machine can change
                                           level and come back within one
                                           sweep */
#define CAL_LEVEL_OVERRUN  0.2          /* of the budget, for sweeps again
                                           after such a change (full 100 s:
                                           120 s at most) */


/** How thoroughly to measure, and in how much time. */
typedef struct {
    const char *name;
    unsigned    steps_per_octave; /* log-spaced sizes */
    unsigned    repeats;          /* timed phases per point; median */
    double      phase_time;       /* aimed seconds of one timed phase */
    double      budget;           /* seconds for the whole run */
    double      max_spread;       /* run spread a measurement may keep */
    size_t      rail_size;        /* message size of a rail's bandwidth */
} cal_mode_t;

extern const cal_mode_t cal_modes[];


/** Command line. */
typedef struct {
    pt_path_t         path;        /* protosel's data path, or stock UCP's
                                      (--ucp) */
    const cal_mode_t *mode;
    const char       *output;
    const char       *server;      /* NULL: fork a local peer */
    uint16_t          port;
    size_t            max_size;
    const char       *only;        /* "shm" or "tcp", or NULL: both */
    int               verbose;
    int               any_peer;    /* rails for every peer ('*'), not for
                                      the server's devices alone */
} cal_opts_t;


/** A transport setup: a name and the settings both sides run with. */
typedef struct {
    const char *name;
    const char *settings;
} cal_setup_t;


/** One process's CPU time at a sample. */
typedef struct {
    int    pid;
    double cpu;        /* [s] user + system, all its threads */
} cal_proc_time_t;


/**
 * CPU time of the CPUs this process may run on, and of the other processes.
 * The others are counted by their own CPU time, not as the CPUs' busy time
 * less this process's: a process that polls without ever being preempted
 * or entering the kernel is not charged its time on some kernels (this
 * VM's: a lone busy loop reads 0 ticks for seconds), so the busy-less-own
 * difference showed a CPU of phantom load while the calibration ran alone.
 * A process that competes for our CPUs is preempted, and charged. Each
 * process's time includes its waited-for children's, so that short-lived
 * ones (a build's compilers) are counted in their parent.
 */
typedef struct {
    double wall;       /* [s] */
    double total;      /* [s] of all states, summed over the CPUs */
    double steal;      /* [s] taken by the hypervisor */
    unsigned num_procs;
    cal_proc_time_t procs[CAL_MAX_PROCS]; /* other user processes (not this
                                             one, its local peer, kernel
                                             threads), by ascending pid */
} cal_cpu_sample_t;


/** The run. */
typedef struct {
    pt_run_t            run;
    cal_opts_t          opts;
    psel_calib_t        calib;
    pid_t               peer;        /* the local peer process, or -1 */
    double              deadline;    /* the time budget ends then */
    char                rails_file[PATH_MAX]; /* this run's rails as a
                                                 calibration, or "" */
    cal_cpu_sample_t    cpu_start;
    ucs_string_buffer_t report;      /* what was left out, and why */
    ucs_string_buffer_t crossovers;  /* the crossovers measured in
                                        alternation, and what came of them */
    double             *spreads;     /* run spreads of the measurements kept */
    unsigned            num_spreads;
    unsigned            max_spreads;
    unsigned            refused;     /* measurements left out as too noisy */
} cal_ctx_t;


/** A range of sizes, both ends included. */
typedef struct {
    size_t start, end;
} cal_run_t;


/**
 * A size of a protocol measured again to see a change of the machine's
 * speed: its first size, and its first from CAL_COLD_MIN, out of cache. The
 * VM's memory can slow down while small messages keep their speed (egr/bcopy
 * read 10.0 us at 128 KiB and 20.2 at 256 KiB, against 7.4 and 14.3 minutes
 * later, with 1 B unchanged).
 */
typedef struct {
    size_t size;       /* 0: none */
    double before;     /* its latency in the sweep [s] */
    double spread;     /* that latency's run spread */
    double after;      /* measured again [s]; 0: not measured again */
} cal_level_ref_t;

#define CAL_LEVEL_REFS 2


/** The operation a protocol serves, and so the tests that measure it */
typedef enum {
    CAL_OP_TAG,        /* tag_lat, tag_bw */
    CAL_OP_PUT,        /* put_lat, put_bw: stock UCP only (--ucp) */
    CAL_OP_GET,        /* get_lat, get_bw: likewise */
    CAL_OP_AM          /* am_lat, am_bw: likewise */
} cal_op_t;

/** One protocol of a setup: what its table says, and what was measured. */
typedef struct {
    char              name[PSEL_CALIB_PROTO_MAX];
    cal_op_t          op;
    psel_proto_caps_t caps;        /* min_length, the largest size (last
                                      range), lanes, cfg_priority */
    cal_run_t         runs[CAL_MAX_RUNS]; /* where the configuration that
                                      forces it runs it */
    unsigned          num_runs;
    unsigned          measured;    /* sizes measured */
    double            seconds;     /* time it took */
    size_t            late;        /* first size the budget left out, or 0 */
    double            steal;       /* CPU steal while it was measured */
    double            load;        /* other processes' CPUs meanwhile */
    char              settings[CAL_SETTINGS_MAX]; /* what forces it, on
                                      both sides */
    cal_level_ref_t   level[CAL_LEVEL_REFS]; /* its first size measured
                                      and its first from CAL_COLD_MIN,
                                      measured again during and after the
                                      sweep and at the end of the setup
                                      (cal_check_level) */
    unsigned          level_ref;   /* the one that changed, else 0 */
    int               level_changed; /* one of them differs beyond the
                                      spreads and CAL_LEVEL_TOLERANCE, after
                                      the last sweep */
    size_t            level_stop;  /* the sweep stopped after this size on
                                      such a change; 0: it ran to its end */
    int               level_late;  /* changed, and swept again too late to
                                      measure two sizes */
    size_t            breaks[PSEL_PROTO_MAX_RANGES];
    unsigned          num_breaks;
} cal_proto_t;


/** The test that measures @a p's single (latency) or streamed cost */
static inline pt_test_id_t cal_test(const cal_proto_t *p, int streamed)
{
    static const pt_test_id_t tests[][2] = {
        [CAL_OP_TAG] = {PT_TEST_TAG_LAT, PT_TEST_TAG_BW},
        [CAL_OP_PUT] = {PT_TEST_PUT_LAT, PT_TEST_PUT_BW},
        [CAL_OP_GET] = {PT_TEST_GET_LAT, PT_TEST_GET_BW},
        [CAL_OP_AM]  = {PT_TEST_AM_LAT, PT_TEST_AM_BW}
    };

    return tests[p->op][streamed != 0];
}

/** One measured size of one test. */
typedef struct {
    double time;       /* median seconds per message */
    double spread;     /* median / fastest repeat - 1 */
    double steal;      /* share of CPU time stolen while measuring */
    double load;       /* other processes' CPUs while measuring */
} cal_point_t;


/** Outcome of cal_measure(). */
typedef enum {
    CAL_POINT_OK,      /* measured, spread within the mode's limit */
    CAL_POINT_NOISY,   /* measured, spread still too wide after retries */
    CAL_POINT_LATE     /* not measured: it would not fit the time left */
} cal_point_status_t;


/** Sample the CPUs' time (see cal_cpu_sample_t). */
void cal_cpu_sample(const cal_ctx_t *ctx, cal_cpu_sample_t *sample);

/** Steal share and other processes' load [CPUs] between two samples. */
void cal_cpu_delta(const cal_cpu_sample_t *a, const cal_cpu_sample_t *b,
                   double *steal, double *load);

/**
 * CPUs other processes may use while a calibration polls without its
 * measurements turning into the scheduler's: those it may run on, less the
 * ones it busy-polls on (two with a local peer, one with a server), plus
 * CAL_LOAD_SLACK.
 */
double cal_cpu_spare(const cal_ctx_t *ctx);

/**
 * Measure @a test at @a size: a probe sizes the phases (about
 * mode->phase_time each, at least CAL_STREAM_MIN messages when streaming),
 * then mode->repeats timed phases; a spread above mode->max_spread is
 * measured again, up to CAL_MAX_RETRIES times while the time allows.
 * Sizes from CAL_COLD_MIN on use buffers out of cache (PT_FLAG_COLD).
 *
 * @param [in]  hint    Expected seconds per message, or 0 if unknown.
 * @param [in]  end     Give up (CAL_POINT_LATE) rather than end after this.
 * @param [out] point   Set unless CAL_POINT_LATE.
 * @param [out] result  The outcome.
 *
 * @return UCS_OK, or the error of the session (printed).
 */
ucs_status_t cal_measure(cal_ctx_t *ctx, pt_test_id_t test, size_t size,
                         double hint, double end, cal_point_t *point,
                         cal_point_status_t *result);

/**
 * Measure one transport setup until @a end: its rails (with a server and
 * several network lanes), then every protocol its table uses, and fit
 * their lines in natural order into ctx->calib.
 */
ucs_status_t cal_setup(cal_ctx_t *ctx, const cal_setup_t *setup, double end);

/**
 * Measure one transport setup of stock UCP until @a end (--ucp,
 * calibrate_ucp.c): each UCP protocol protosel models forced in turn, what
 * UCP really ran read from its UCX_PROTO_INFO tables, lines fitted in
 * natural order into ctx->calib as PSEL_CALIB_VIA_UCP lines.
 */
ucs_status_t cal_ucp_setup(cal_ctx_t *ctx, const cal_setup_t *setup,
                           double end);


/* What calibrate_setup.c shares with calibrate_ucp.c */

/**
 * Reconnect both sides with the setup's settings and @a extra ones (both
 * sides), and @a local ones (this side only); then settle the endpoints.
 */
ucs_status_t cal_configure(cal_ctx_t *ctx, const cal_setup_t *setup,
                           const char *extra, const char *local);

/** Does the configuration that forces @a p run it at @a size (p->runs)? */
int cal_runs(const cal_proto_t *p, size_t size);

/**
 * Log-spaced sizes of @a p (mode->steps_per_octave), from max(1,
 * min_length) to its largest size or @a max_size, and both sides of its
 * breaks; sorted, unique.
 */
unsigned cal_plan_sizes(const cal_proto_t *p, const cal_mode_t *mode,
                        size_t max_size, size_t *sizes);

/**
 * Measure @a p at its planned sizes where the configuration runs it
 * (p->runs), ascending, until @a end; @a start is when its share began.
 * Points go to @a line. The first size is measured again every
 * CAL_LEVEL_CHECK_EVERY during the sweep and after it; when the machine's
 * speed changed meanwhile, the sweep stops and is made again
 * (CAL_LEVEL_RETRIES), and p->level_changed says whether it still did.
 */
ucs_status_t cal_protocol(cal_ctx_t *ctx, const cal_setup_t *setup,
                          cal_proto_t *p, psel_calib_line_t *line, double end,
                          double start);

/**
 * The end of a setup: each protocol's first size measured once more (on
 * its p->settings), a protocol whose time moved since its sweep swept
 * again; lines refused when other processes took the polled CPUs or the
 * machine's speed would not stay, the spreads tallied, the lines fitted in
 * natural order (psel_calib_fit_in_order), a summary line each.
 */
ucs_status_t cal_fit_setup(cal_ctx_t *ctx, const cal_setup_t *setup,
                           cal_proto_t *protos, psel_calib_line_t **lines,
                           unsigned count);

/**
 * Measure each crossover of the setup's fitted lines (both flavours,
 * ascending) in alternation around its size, and scale the upper line
 * where the two protocols' ratio is not the lines'
 * (psel_calib_cross_judge(), calibrate_cross.c). Every check is a line of
 * ctx->crossovers. The configuration is the last protocol's afterwards.
 */
ucs_status_t cal_check_crossovers(cal_ctx_t *ctx, const cal_setup_t *setup,
                                  const cal_proto_t *protos,
                                  psel_calib_order_entry_t *entries,
                                  unsigned count);

#endif
