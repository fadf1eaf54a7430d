/**
 * @file calib.h
 * Calibration data: measured times of each protocol over a lane set, the
 * piecewise cost lines fitted to them, and a text file to keep both.
 *
 * A measurement tool (psel_calibrate) times every protocol at log-spaced
 * sizes, in both perf flavours (see perf.h): *single* is half the round trip
 * of a ping-pong, *multi* the time per message when streaming. This module
 * stores those points per (protocol, lanes, memory type) line, fits cost lines
 * `c + m·size` to them per size range, saves and loads them (format: the
 * "The calibration file" section of docs/calibration.md), tells whether a
 * file belongs to this host, and replaces a protocol's attribute-derived perf
 * ranges with the measured ones. Pure logic: no UCT, no measurement.
 */
#ifndef PSEL_UCP_PROTO_SEL_CALIB_H_
#define PSEL_UCP_PROTO_SEL_CALIB_H_

#include "proto.h"

#include <ucs/datastruct/linear_func.h>
#include <ucs/datastruct/string_buffer.h>
#include <ucs/memory/memory_type.h>
#include <ucs/type/status.h>
#include <stddef.h>
#include <stdio.h>

#define PSEL_CALIB_FORMAT_VERSION 5    /**< Written on line 2; 1 to 5 are read
                                            (2 added noise and rail lines, 3
                                            the rail's peer and B/s, 4 the
                                            lines measured through UCP, 5
                                            those of UCP's put, get and
                                            active messages) */
#define PSEL_CALIB_PROTO_MAX      32   /**< Bytes of a protocol name, with NUL */
#define PSEL_CALIB_MAX_LINES      512  /**< Lines (proto, lanes, memtype) per calibration */
#define PSEL_CALIB_MAX_POINTS     4096 /**< Points per line */
#define PSEL_CALIB_MAX_RAILS      PSEL_MAX_LANES /**< Measured rails */
#define PSEL_CALIB_MAX_TEXT_LINE  1024 /**< Longest line of a file, without '\n' */
#define PSEL_CALIB_MAX_FIT_RANGES 4    /**< Ranges between breaks that a fit
                                            makes; each may be split in two
                                            where its multi cost bends
                                            (PSEL_PROTO_MAX_RANGES in all) */


/** One measured size. */
typedef struct psel_calib_point {
    size_t size;                   /**< Message size [B] */
    double time[PSEL_PERF_LAST];   /**< Median seconds per message, by
                                        psel_perf_type_t; NAN if not measured */
    double spread[PSEL_PERF_LAST]; /**< Run spread of each time, median /
                                        fastest repeat - 1; NAN if unknown
                                        (not kept in the file) */
} psel_calib_point_t;


/** The data path a line was measured through. */
typedef enum {
    PSEL_CALIB_VIA_PROTOSEL, /**< protosel's own (psel_calibrate): the lines
                                  protosel's data path selects on */
    PSEL_CALIB_VIA_UCP,      /**< stock UCP's protocol of that name
                                  (psel_calibrate --ucp): the lines
                                  libprotosel_ucx.so puts into UCP */
    PSEL_CALIB_VIA_LAST
} psel_calib_via_t;


/** Measurements and fitted costs of one protocol over one lane set. */
typedef struct psel_calib_line {
    psel_calib_via_t   via;                          /**< Data path measured */
    int                unsupported;                  /**< PSEL_CALIB_VIA_UCP:
                                                          UCP ran another
                                                          protocol when this
                                                          one was forced (no
                                                          ranges, no points) */
    char               proto[PSEL_CALIB_PROTO_MAX];  /**< protosel's name,
                                                          "egr/bcopy" (UCP's
                                                          egr/single/bcopy and
                                                          egr/multi/bcopy are
                                                          one line) */
    char               lanes[PSEL_PROTO_DESC_MAX];   /**< "tcp/lo", "tcp/a+tcp/b" */
    ucs_memory_type_t  mem_type;                     /**< Buffer memory type */
    unsigned           num_ranges;                   /**< 0 until fitted */
    psel_perf_range_t  ranges[PSEL_PROTO_MAX_RANGES];/**< Ascending; the last
                                                          max_length is SIZE_MAX */
    unsigned           num_points;                   /**< Entries in @a points */
    psel_calib_point_t *points;                      /**< Ascending size, unique */
} psel_calib_line_t;


/**
 * One rail (network lane) measured on its own against one peer device: what
 * selection takes instead of the lane's advertised latency and bandwidth
 * (lane_engine.h) on endpoints whose lane reaches that device.
 */
typedef struct psel_calib_rail {
    char   lane[PSEL_LANE_NAME_MAX]; /**< Local "transport/device", "tcp/eth1" */
    char   peer[PSEL_DEV_ADDR_HEX_MAX]; /**< The peer device it was measured
                                          against: its device address
                                          (psel_resource_t::dev_addr); ""
                                          applies to every peer (a rail of
                                          format 2, which named none) */
    double latency;                  /**< Half the round trip of a small
                                          message over this rail alone [s] */
    double bandwidth;                /**< Streaming bandwidth of this rail
                                          alone [B/s] */
} psel_calib_rail_t;


/** How noisy the machine was while it was measured. */
typedef struct psel_calib_noise {
    double   spread;      /**< Median over the points kept of their run
                               spread, median / fastest repeat - 1 */
    double   max_spread;  /**< Largest run spread of a point kept */
    double   steal;       /**< Share of CPU time the hypervisor stole */
    double   load;        /**< CPU time other processes took on the CPUs
                               used, in CPUs (1 = one CPU busy all along) */
    unsigned refused;     /**< Points left out as too noisy */
} psel_calib_noise_t;


/** A calibration: where and when it was measured, and its lines. */
typedef struct psel_calib {
    char     hostname[128];       /**< Host measured on (no whitespace) */
    char     machine_id[64];      /**< /etc/machine-id, or "-" */
    char     ucx_version[32];     /**< e.g. "1.13.1" */
    char     created[32];         /**< ISO 8601 UTC, "2026-11-22T10:11:12Z" */
    double   duration;            /**< Seconds the measurement took */
    char     mode[16];            /**< "quick" or "full" */
    int      has_noise;           /**< Whether @a noise was measured */
    psel_calib_noise_t noise;     /**< The machine's noise while measuring */
    unsigned num_rails;           /**< Entries in @a rails */
    psel_calib_rail_t rails[PSEL_CALIB_MAX_RAILS]; /**< Unique (lane, peer) */
    unsigned num_lines;           /**< Entries in @a lines */
    psel_calib_line_t *lines;     /**< Room for PSEL_CALIB_MAX_LINES, so a line
                                       pointer stays valid until cleanup */
} psel_calib_t;


/** Result of psel_calib_check(). */
typedef enum {
    PSEL_CALIB_MATCH,       /**< This host and this UCX */
    PSEL_CALIB_STALE,       /**< This host, another UCX version: measure again */
    PSEL_CALIB_MISMATCHED   /**< Another host: do not use */
} psel_calib_match_t;


/**
 * Start an empty calibration of this host: hostname (spaces and control
 * characters replaced by '_'), machine id (first word of /etc/machine-id, or
 * "-"), UCX version, created = now, duration 0, mode "full".
 *
 * The UCX version is UCT_VERNO_STRING, the version compiled against: neither
 * libucs nor libuct 1.13 has a run-time version call (only libucp does).
 *
 * @param [out] calib  Calibration to initialize.
 */
void psel_calib_init(psel_calib_t *calib);


/**
 * Free the lines and points of a calibration; it is empty afterwards.
 *
 * @param [in,out] calib  Calibration from psel_calib_init() or a load.
 */
void psel_calib_cleanup(psel_calib_t *calib);


/**
 * Find a line, or add an empty one.
 *
 * @param [in,out] calib     Calibration.
 * @param [in]     proto     Protocol name; non-empty, printable, no
 *                           whitespace or '#', shorter than
 *                           PSEL_CALIB_PROTO_MAX.
 * @param [in]     lanes     Lane set, same rules, shorter than
 *                           PSEL_PROTO_DESC_MAX.
 * @param [in]     mem_type  Memory type below UCS_MEMORY_TYPE_LAST.
 *
 * @return The line, valid until psel_calib_cleanup(); NULL (with an error
 *         message) on a bad name or memory type, PSEL_CALIB_MAX_LINES lines
 *         already, or no memory.
 */
psel_calib_line_t *psel_calib_line_get(psel_calib_t *calib, const char *proto,
                                       const char *lanes,
                                       ucs_memory_type_t mem_type);


/**
 * psel_calib_line_get() of a line measured through @a via.
 */
psel_calib_line_t *psel_calib_line_get_via(psel_calib_t *calib,
                                           psel_calib_via_t via,
                                           const char *proto,
                                           const char *lanes,
                                           ucs_memory_type_t mem_type);


/**
 * Add a measured point, keeping points sorted by size; a point of an equal
 * size is replaced. Fitted ranges are left as they are (fit again).
 *
 * @param [in,out] line    Line to add to.
 * @param [in]     size    Message size [B].
 * @param [in]     single  Median single-message time [s], or NAN.
 * @param [in]     multi   Median streaming time per message [s], or NAN.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM if a time is negative or infinite;
 *         UCS_ERR_EXCEEDS_LIMIT at PSEL_CALIB_MAX_POINTS points;
 *         UCS_ERR_NO_MEMORY.
 */
ucs_status_t psel_calib_line_add_point(psel_calib_line_t *line, size_t size,
                                       double single, double multi);


/**
 * Set the run spreads of the point of size @a size (see psel_calib_point_t).
 *
 * @return UCS_OK; UCS_ERR_NO_ELEM if the line has no point of that size.
 */
ucs_status_t psel_calib_line_set_spread(psel_calib_line_t *line, size_t size,
                                        double single, double multi);


/** One protocol of a transport setup, for psel_calib_fit_in_order(). */
typedef struct psel_calib_order_entry {
    psel_calib_line_t *line;        /**< Its measured points, with spreads */
    unsigned           rank;        /**< Place in the natural order: copy
                                         before zero-copy before rendezvous
                                         (psel_calib_natural_rank) */
    size_t             min_length;  /**< Sizes it runs: from this one */
    size_t             max_length;  /**< up to this one */
    const size_t      *breaks;      /**< Breaks for psel_calib_line_fit_knee */
    unsigned           num_breaks;  /**< Entries in @a breaks */
} psel_calib_order_entry_t;


/**
 * Natural rank of a protocol: 2 x its class (copy 0, eager zero-copy 1,
 * rendezvous 2: caps->cfg_priority), plus 1 if it has no largest size (in
 * a class, the protocol limited to small sizes, like eager short, comes
 * first).
 */
unsigned psel_calib_natural_rank(unsigned cfg_priority, size_t max_length);


/**
 * Fit the lines of one transport setup so that noise cannot turn into a
 * table (docs/calibration.md, "Natural order"):
 *  1. a point whose run spread is above @a max_spread is dropped; a line
 *     that loses more than a third of its points, or keeps fewer than 2,
 *     is refused (cleared: it is not written, its protocol keeps its
 *     attribute line);
 *  2. where a protocol of a later rank looks faster than one of an earlier
 *     rank at a measured size by less than their summed spreads, it is a
 *     tie: its time is raised to the earlier one's;
 *  3. each line is fitted (psel_calib_line_fit_knee);
 *  4. the tables the fitted single and multi lines give at the measured
 *     sizes must keep the natural order, unless at the size where one goes
 *     back to an earlier rank the points show that protocol faster by more
 *     than their summed spreads; within the spreads the earlier line of
 *     that flavour is lifted from that size on, beyond them the line whose
 *     fit strays further from its point is wrong: the earlier one is taken
 *     out of that flavour's table from there (psel_calib_take_out), the
 *     later one is refused.
 * Every drop and refusal is described in @a report, one line each ("what,
 * where, why").
 *
 * @param [in,out] entries     The setup's protocols.
 * @param [in]     num         Number of entries.
 * @param [in]     max_spread  Largest run spread a kept point may have.
 * @param [out]    report      Appended to.
 *
 * @return UCS_OK; UCS_ERR_NO_MEMORY.
 */
ucs_status_t psel_calib_fit_in_order(psel_calib_order_entry_t *entries,
                                     unsigned num, double max_spread,
                                     ucs_string_buffer_t *report);


#define PSEL_CALIB_MAX_CROSSOVERS   16   /**< Crossovers of one flavour's
                                            table that are listed */
#define PSEL_CALIB_CROSS_MARGIN     0.03 /**< A crossover's lines hold while
                                            the measured ratio is within
                                            this (plus the run spreads) of
                                            theirs */
#define PSEL_CALIB_CROSS_SETTLED    0.15 /**< One protocol's two measurements
                                            of a size in one check may be
                                            this far apart (plus the run
                                            spread), as a level check */
#define PSEL_CALIB_CROSS_MAX_FACTOR 2.0  /**< A line is scaled by at most
                                            this, or by 1/this */


/** Where the table of a setup's fitted lines of one flavour changes. */
typedef struct psel_calib_crossover {
    psel_perf_type_t t;      /**< The flavour */
    unsigned         below;  /**< Entry that wins just below @a size */
    unsigned         above;  /**< Entry that wins from @a size on */
    size_t           size;   /**< The first size @a above wins */
} psel_calib_crossover_t;


/**
 * One size around a crossover, measured in alternation: the lower
 * protocol, the upper one twice, the lower one again. The means of each
 * protocol's two measurements then share one instant, so a drift of the
 * machine that is linear in time over the check cancels out of their ratio.
 */
typedef struct psel_calib_cross_point {
    size_t size;       /**< Message size [B] */
    double below[2];   /**< [s] the lower protocol, first and last */
    double above[2];   /**< [s] the upper protocol, both in between */
    double spread;     /**< The largest run spread of the four */
} psel_calib_cross_point_t;


/** What psel_calib_cross_judge() made of a crossover. */
typedef enum {
    PSEL_CALIB_CROSS_HOLDS,     /**< The measured ratio agrees with the
                                     lines' within the margin */
    PSEL_CALIB_CROSS_SCALED,    /**< The upper line was scaled */
    PSEL_CALIB_CROSS_UNSETTLED  /**< The machine's speed changed during the
                                     check, no size was measured, or the
                                     factor was implausible: lines kept */
} psel_calib_cross_verdict_t;


/**
 * The crossovers of the table that the fitted lines of flavour @a t give
 * (psel_calib_winner), from 1 B to @a max_size, ascending: log-spaced sizes
 * (16 per doubling) where the winner changes, bisected to the exact first
 * size of the new one; also where the lower one's sizes end (egr/short at
 * its largest size), since the upper one may be faster before that. A
 * change from or to no winner is not a crossover.
 *
 * @return Entries written to @a crossovers, at most @a max.
 */
unsigned psel_calib_crossovers(const psel_calib_order_entry_t *entries,
                               unsigned num, psel_perf_type_t t,
                               size_t max_size,
                               psel_calib_crossover_t *crossovers,
                               unsigned max);


/**
 * Scale every range of @a line's flavour @a t by @a factor (constant and
 * slope); a range taken out of the table (psel_calib_take_out) stays out.
 */
void psel_calib_line_scale(psel_calib_line_t *line, psel_perf_type_t t,
                           double factor);


/**
 * Judge crossover @a c of the entries of psel_calib_fit_in_order() by the
 * sizes around it measured in alternation (psel_calib_cross_point_t).
 * The lines were fitted on sweeps made one protocol after the other, so a
 * drift of the machine between them moves one line against the other;
 * measured in alternation, the two protocols' ratio has no such drift.
 * The factor is the geometric mean over the points of (measured ratio of
 * upper to lower) / (ratio of their lines). Within PSEL_CALIB_CROSS_MARGIN
 * plus the points' largest run spread the lines hold. Beyond it the upper
 * line's flavour is scaled by the factor (psel_calib_line_scale), which
 * moves the crossover to where the alternated points put it: the lower
 * line stays, so the crossovers of a table, judged in ascending order,
 * scale each line against the one below it. Lines are kept when a
 * protocol's first and last measurement of a size differ by more than
 * PSEL_CALIB_CROSS_SETTLED plus the spread (the machine changed speed
 * during the check), when no point is usable, or when the factor is beyond
 * PSEL_CALIB_CROSS_MAX_FACTOR. Each outcome is one line of @a report.
 *
 * @param [in,out] entries     Entries of the fit; the upper line may change.
 * @param [in]     num         Number of entries.
 * @param [in]     c           The crossover (from psel_calib_crossovers()).
 * @param [in]     points      The sizes measured around it.
 * @param [in]     num_points  Number of points.
 * @param [in]     max_size    The largest size a moved crossover is looked
 *                             for at (for the report).
 * @param [out]    report      Appended to.
 */
psel_calib_cross_verdict_t
psel_calib_cross_judge(psel_calib_order_entry_t *entries, unsigned num,
                       const psel_calib_crossover_t *c,
                       const psel_calib_cross_point_t *points,
                       unsigned num_points, size_t max_size,
                       ucs_string_buffer_t *report);


/**
 * Robust fit of y = c + m·x minimizing the *relative* error, since the
 * model's fidelity is judged by the median of |predicted - measured| /
 * measured: weighted least squares with weights 1/y², repeated while
 * points whose relative residual lies more than 3.5 robust sigmas (1.4826 ·
 * MAD) from the median residual are dropped (residuals within 0.1% are never
 * outliers, at least 2 points stay). c and m are clamped to >= 0 (the better
 * of the two boundary fits). One usable point gives c = y, m = 0; points that
 * all share one x give m = 0.
 *
 * @param [in]  x     Sizes [B].
 * @param [in]  y     Times [s]; NaN, infinite and <= 0 values are ignored.
 * @param [in]  n     Number of points.
 * @param [out] func  Fitted line; set only on success.
 *
 * @return UCS_OK, UCS_ERR_INVALID_PARAM if no point is usable,
 *         UCS_ERR_NO_MEMORY.
 */
ucs_status_t psel_calib_fit_linear(const size_t *x, const double *y,
                                   unsigned n, ucs_linear_func_t *func);


/**
 * Fit line->ranges for both flavours. The ranges split at @a breaks (e.g. the
 * fragment limits of the attribute model): range i covers sizes up to
 * breaks[i], the last one up to SIZE_MAX. A break outside the measured sizes
 * (below the first or at/after the last usable point), or one that leaves a
 * range with fewer than 2 usable points, is dropped: its range merges into the
 * next one. At most PSEL_CALIB_MAX_FIT_RANGES - 1 breaks are used (the first
 * ones that qualify). A flavour with no usable point in a range takes the
 * other flavour's line there.
 *
 * @param [in,out] line        Line with points; ranges set on success.
 * @param [in]     breaks      Strictly ascending sizes, may be NULL if
 *                             @a num_breaks is 0.
 * @param [in]     num_breaks  Number of breaks.
 *
 * @return UCS_OK, UCS_ERR_INVALID_PARAM if no point has a usable time or the
 *         breaks do not ascend, UCS_ERR_NO_MEMORY.
 */
ucs_status_t psel_calib_line_fit(psel_calib_line_t *line, const size_t *breaks,
                                 unsigned num_breaks);


/**
 * psel_calib_line_fit(), then more breaks where the cost bends ("knees":
 * e.g. a copy that stays flat up to a cache or packet size and then grows),
 * one at a time: every measured size is tried as an extra break, and the
 * best is kept if it cuts the mean relative error of both flavours by 20%
 * or more; then the next, while there is room for one more range (up to
 * PSEL_CALIB_MAX_FIT_RANGES) and the mean error is still above 2%. With
 * one knee, tcp/lo's rndv/put (flatter per byte from a few hundred KB on)
 * was fitted 15-17% above its points at 512-724 KiB, and its crossing with
 * eager zero-copy put at 592 KB where the points have it at 370-524 KB.
 *
 * @return As psel_calib_line_fit().
 */
ucs_status_t psel_calib_line_fit_knee(psel_calib_line_t *line,
                                      const size_t *breaks,
                                      unsigned num_breaks);


/**
 * Median relative error of the fitted ranges against the measured points,
 * |predicted - measured| / measured, for one flavour.
 *
 * @param [in] line  Fitted line.
 * @param [in] type  Flavour.
 *
 * @return The median, or NAN if the line has no ranges or no usable point.
 */
double psel_calib_line_fit_error(const psel_calib_line_t *line,
                                 psel_perf_type_t type);


/**
 * Write a calibration as text. Lines without ranges or points are skipped.
 *
 * @param [in] calib   Calibration to write.
 * @param [in] stream  Stream to write to.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM (with a message) if a header field
 *         could not be read back (empty, whitespace, mode neither "quick"
 *         nor "full", bad date, negative duration) or a line is not
 *         representable (bad names, ranges not ascending or not ending at
 *         SIZE_MAX, negative or non-finite costs); UCS_ERR_IO_ERROR if
 *         writing failed.
 */
ucs_status_t psel_calib_write(const psel_calib_t *calib, FILE *stream);


/**
 * Save a calibration to a file atomically: write a temporary file next to it
 * and rename it over @a path, creating the parent directories first.
 *
 * @param [in] calib  Calibration to save.
 * @param [in] path   File to replace.
 *
 * @return As psel_calib_write(); UCS_ERR_IO_ERROR (with a message naming
 *         the path) if a directory or the file cannot be created or written.
 */
ucs_status_t psel_calib_save(const psel_calib_t *calib, const char *path);


/**
 * Parse a calibration file held in memory. Malformed input is rejected with
 * an error message "<name>:<line>: <field>: <what is wrong>": unknown
 * keywords, missing or duplicate header lines, header lines after data,
 * wrong field counts, bad numbers (negative, NaN, inf, overflow, trailing
 * junk), unknown memory types, bad names, duplicate points, ranges not
 * ascending, more than PSEL_PROTO_MAX_RANGES ranges, a last range not ending
 * at inf, NUL characters, lines longer than PSEL_CALIB_MAX_TEXT_LINE.
 *
 * @param [in]  text    File contents; need not be NUL-terminated.
 * @param [in]  length  Bytes in @a text.
 * @param [in]  name    File name for messages.
 * @param [out] calib   Overwritten on success (not cleaned up first; the
 *                      caller frees the result with psel_calib_cleanup());
 *                      untouched on error.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM on malformed input;
 *         UCS_ERR_UNSUPPORTED if the file has another format version
 *         (treat as stale: measure again); UCS_ERR_NO_MEMORY.
 */
ucs_status_t psel_calib_parse(const char *text, size_t length,
                              const char *name, psel_calib_t *calib);


/**
 * Read and parse a calibration file, as psel_calib_parse().
 *
 * @param [in]  path   File to read.
 * @param [out] calib  Set on success, untouched on error.
 *
 * @return As psel_calib_parse(); UCS_ERR_NO_ELEM if the file does not exist
 *         (no message); UCS_ERR_IO_ERROR if it cannot be read.
 */
ucs_status_t psel_calib_load(const char *path, psel_calib_t *calib);


/**
 * Does a calibration belong to this host and this UCX? The machine id is
 * compared only when both sides know it (neither is "-"). The format version
 * is checked when loading (UCS_ERR_UNSUPPORTED).
 *
 * @param [in]  calib  Loaded calibration.
 * @param [out] why    One-line explanation, or NULL.
 * @param [in]  max    Size of @a why.
 *
 * @return PSEL_CALIB_MISMATCHED if the hostname or machine id differ,
 *         PSEL_CALIB_STALE if the UCX version differs, else PSEL_CALIB_MATCH.
 */
psel_calib_match_t psel_calib_check(const psel_calib_t *calib, char *why,
                                    size_t max);


/**
 * Record a rail's measurement (replacing an earlier one of the same lane and
 * peer).
 *
 * @param [in,out] calib      Calibration.
 * @param [in]     lane       Local "transport/device": a token shorter than
 *                            PSEL_LANE_NAME_MAX.
 * @param [in]     peer       The peer device's address
 *                            (psel_resource_t::dev_addr), or "" for a rail
 *                            that applies to every peer.
 * @param [in]     latency    Half round trip of a small message [s], > 0.
 * @param [in]     bandwidth  Streaming bandwidth [B/s], > 0.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM on a bad name, peer or value;
 *         UCS_ERR_EXCEEDS_LIMIT at PSEL_CALIB_MAX_RAILS rails.
 */
ucs_status_t psel_calib_rail_set(psel_calib_t *calib, const char *lane,
                                 const char *peer, double latency,
                                 double bandwidth);


/**
 * The rail that applies to lane @a lane of an endpoint to @a peer, reaching
 * its device @a remote: the one measured against that device; else one
 * measured against another device of @a peer (the same host: a rail
 * describes what the local device does towards it); else one that names
 * no peer.
 *
 * @param [in] peer    The peer's resources (their dev_addr; "" where not
 *                     known: then only a rail that names no peer applies).
 * @param [in] remote  The peer's resource the lane reaches.
 *
 * @return The rail, or NULL.
 */
const psel_calib_rail_t *psel_calib_rail_find(const psel_calib_t *calib,
                                              const char *lane,
                                              const psel_resource_table_t *peer,
                                              const psel_resource_t *remote);


/**
 * Lane selection's psel_lane_measured_cb_t over a calibration's rails
 * (@a calib is the psel_calib_t): psel_calib_rail_find().
 */
int psel_calib_rail_measured(void *calib, const char *lane,
                             const psel_resource_table_t *peer,
                             const psel_resource_t *remote, double *latency,
                             double *bandwidth);


/**
 * Find a line measured through protosel's data path.
 *
 * @return The line, or NULL if there is none.
 */
const psel_calib_line_t *psel_calib_find(const psel_calib_t *calib,
                                         const char *proto, const char *lanes,
                                         ucs_memory_type_t mem_type);


/** Does @a calib hold a line measured @a via over @a lanes for @a mem_type,
 *  of any protocol of @a proto's operations (tag send, put, get, active
 *  messages)? A file of active-message lines alone says nothing of tag
 *  send over those lanes. */
int psel_calib_covers(const psel_calib_t *calib, psel_calib_via_t via,
                      const char *proto, const char *lanes,
                      ucs_memory_type_t mem_type);

/**
 * Find a line measured through @a via.
 *
 * @return The line, or NULL if there is none.
 */
const psel_calib_line_t *psel_calib_find_via(const psel_calib_t *calib,
                                             psel_calib_via_t via,
                                             const char *proto,
                                             const char *lanes,
                                             ucs_memory_type_t mem_type);


/**
 * Copy the lines of @a src measured through @a via into @a dst (replacing
 * @a dst's lines of the same key), with their ranges, points and the
 * unsupported mark: psel_calibrate keeps the lines of the other data path
 * of the file it rewrites.
 *
 * @return UCS_OK; UCS_ERR_NO_MEMORY or UCS_ERR_EXCEEDS_LIMIT (too many
 *         lines or points).
 */
ucs_status_t psel_calib_copy_via(psel_calib_t *dst, const psel_calib_t *src,
                                 psel_calib_via_t via);


/** Name of @a via in messages and dumps: "protosel", "UCP". */
const char *psel_calib_via_name(psel_calib_via_t via);


/** Does @a calib hold lines measured through @a via (fitted or refused)? */
int psel_calib_has_via(const psel_calib_t *calib, psel_calib_via_t via);


/**
 * Replace a protocol's perf ranges by the fitted ranges of its line.
 * caps->min_length and caps' largest size (its last range's max_length) stay:
 * calibrated ranges ending in [min_length, largest size) are kept, the next
 * one is cut to end at the largest size, and ranges ending below min_length
 * are dropped.
 *
 * @param [in]     calib     Calibration.
 * @param [in]     proto     Protocol name.
 * @param [in]     lanes     Lane set.
 * @param [in]     mem_type  Memory type.
 * @param [in,out] caps      Protocol caps from its init (at least one range).
 *
 * @return 1 if applied; 0 if there is no fitted line or caps has no range
 *         (caps untouched).
 */
int psel_calib_apply(const psel_calib_t *calib, const char *proto,
                     const char *lanes, ucs_memory_type_t mem_type,
                     psel_proto_caps_t *caps);


/** What psel_calib_apply_for_ucp() did. */
typedef enum {
    PSEL_CALIB_APPLIED_NONE,        /**< No measured line: caps untouched */
    PSEL_CALIB_APPLIED_UCP,         /**< The line measured through UCP */
    PSEL_CALIB_APPLIED_PROTOSEL,    /**< No UCP line: protosel's line */
    PSEL_CALIB_APPLIED_UNSUPPORTED  /**< UCP ran another protocol when this
                                         one was forced: caps untouched, the
                                         protocol is not UCP's to run here */
} psel_calib_applied_t;


/**
 * For a selection that stock UCP runs (libprotosel_ucx.so, psel_info
 * --ucx-env): the line measured through UCP (psel_calibrate --ucp) if there
 * is one, else protosel's, as psel_calib_apply(), unless UCP was measured
 * over these lanes: then a protocol without a UCP line (refused as noise
 * or out of natural order) keeps its attributes, so that no line of
 * protosel's data path is set against UCP's.
 *
 * @return What was applied.
 */
psel_calib_applied_t psel_calib_apply_for_ucp(const psel_calib_t *calib,
                                              const char *proto,
                                              const char *lanes,
                                              ucs_memory_type_t mem_type,
                                              psel_proto_caps_t *caps);


/**
 * Default file for UCX_PSEL_CALIBRATION=auto:
 * ${XDG_CACHE_HOME:-$HOME/.cache}/protosel/calibration-<hostname>.txt
 * (an empty variable counts as unset).
 *
 * @param [out] path  Buffer for the path.
 * @param [in]  max   Size of @a path.
 *
 * @return UCS_OK; UCS_ERR_NO_ELEM if neither variable is set;
 *         UCS_ERR_BUFFER_TOO_SMALL if the path does not fit.
 */
ucs_status_t psel_calib_default_path(char *path, size_t max);

#endif
