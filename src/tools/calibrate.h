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
#define CAL_SETTLE_ITERS   50           /* round trips after each connect */


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
    const cal_mode_t *mode;
    const char       *output;
    const char       *server;      /* NULL: fork a local peer */
    uint16_t          port;
    size_t            max_size;
    const char       *only;        /* "shm" or "tcp", or NULL: both */
    int               verbose;
} cal_opts_t;


/** A transport setup: a name and the settings both sides run with. */
typedef struct {
    const char *name;
    const char *settings;
} cal_setup_t;


/** CPU time of the CPUs this process may run on, and of its processes. */
typedef struct {
    double wall;       /* [s] */
    double total;      /* [s] of all states, summed over the CPUs */
    double busy;       /* [s] user, nice, system, irq, softirq */
    double steal;      /* [s] taken by the hypervisor */
    double own;        /* [s] used by this process and the local peer */
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
    double             *spreads;     /* run spreads of the measurements kept */
    unsigned            num_spreads;
    unsigned            max_spreads;
    unsigned            refused;     /* measurements left out as too noisy */
} cal_ctx_t;


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

#endif
