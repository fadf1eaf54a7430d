/**
 * @file psel_info.h
 * psel_info's outputs beyond the dumps of ucp_proto_sel/dump.h: the cost
 * plot (psel_info_plot.c) and the UCX settings closest to a selection
 * or as a ucx.conf (psel_info_ucx_env.c).
 */
#ifndef PSEL_TOOLS_PSEL_INFO_H_
#define PSEL_TOOLS_PSEL_INFO_H_

#include <lane_select/lane_engine.h>
#include <lane_select/resource_table.h>
#include <ucp_proto_sel/calib.h>
#include <ucp_proto_sel/ep_config.h>
#include <ucp_proto_sel/select.h>

#include "tool_diag.h"

#include <getopt.h>

/** One buffer type's table, with the table of the attribute lines alone. */
typedef struct psel_info_table {
    const psel_select_t       *select; /**< Selection that owns @a table */
    const psel_select_table_t *table;  /**< The table selection uses */
    const psel_select_table_t *attrs;  /**< The same buffer type costed on
                                            the transports' attributes only
                                            (== @a table without calibration) */
} psel_info_table_t;


/** A gnuplot run: a script and data files in a directory (temporary
 *  unless kept), gnuplot bounded in time (psel_info_plot.c). */
typedef struct psel_info_gnuplot {
    char        dir[2048];   /**< Data files and the script plot.gp */
    int         temporary;   /**< Remove @a dir afterwards */
    FILE       *script;      /**< The script, open for writing */
    int         png;         /**< Nonzero: .png output, else .svg */
    const char *path;        /**< Output file */
} psel_info_gnuplot_t;

/**
 * Check the output name (.svg or .png) and that it can be written, make the
 * directory (@a keep_dir, or a temporary one) and open the script. The
 * caller writes the terminal line and the plot, then calls
 * psel_info_gnuplot_finish(). @return 0, or 1 with a message.
 */
int psel_info_gnuplot_open(psel_info_gnuplot_t *plot, const char *path,
                           const char *keep_dir);

/**
 * Close the script, run gnuplot on it if @a ok (at most 60 s), remove a
 * temporary directory, and the output file on failure.
 * @return 0, or 1 with a message.
 */
int psel_info_gnuplot_finish(psel_info_gnuplot_t *plot, int ok);

/** Write the terminal (1100 pixels wide, @a height high; pngcairo if
 *  @a png, else svg) and the output file lines of a script. */
void psel_info_gnuplot_terminal(FILE *script, const char *path, int png,
                                unsigned height);

/** Write @a str as a gnuplot single-quoted string. */
void psel_info_gnuplot_string(FILE *stream, const char *str);

/** Open a data file for writing; NULL with a message. */
FILE *psel_info_gnuplot_data_open(const char *path);

/** Close a data file; 0, or 1 with a message. */
int psel_info_gnuplot_data_close(FILE *f, const char *path);

/**
 * Draw every candidate's cost lines per table with gnuplot: dashed from
 * attributes, solid from the calibration, the calibration's measured points,
 * the selected envelope (thick) and its thresholds.
 *
 * @param [in] path      Output file, ending in .svg or .png.
 * @param [in] keep_dir  Directory to write (and keep) the data files and the
 *                       script in, or NULL for a temporary one.
 * @param [in] tables    Tables to draw, one panel each.
 * @param [in] count     Number of tables.
 * @param [in] calib     Calibration in use, or NULL.
 *
 * @return 0 on success, 1 with a message on stderr.
 */
int psel_info_plot(const char *path, const char *keep_dir,
                   const psel_info_table_t *tables, unsigned count,
                   const psel_calib_t *calib);


/**
 * Print, one NAME=VALUE per line on stdout, or write as DIR/ucx.conf, the
 * UCX settings that bring a stock UCP application closest to the selection
 * of @a tables (thresholds, rendezvous scheme, rails, transports,
 * protocols; ucx_runtime/ucx_settings.h). Each setting is checked against
 * the installed UCP; one it does not know is left out with a note.
 *
 * @param [in] local     Local resources (the lanes index them).
 * @param [in] lanes     The endpoint's lanes.
 * @param [in] tables    The tables of every buffer type, contig first.
 * @param [in] count     Number of tables.
 * @param [in] conf_dir  Write DIR/ucx.conf instead of printing, or NULL.
 * @param [in] quiet     Nonzero: no comments on stderr (warnings stay).
 *
 * @return 0 on success, 1 with a message on stderr.
 */
int psel_info_ucx_env(const psel_resource_table_t *local,
                      const psel_ep_lanes_t *lanes,
                      const psel_info_table_t *tables, unsigned count,
                      int locality, const char *conf_dir, int quiet);


/**
 * --compare-ucx FILE: UCX's table of an operation for a machine (tag send:
 * a protocols v2 table or the v1 "tag_send:" line; put, get and active
 * messages: the v2 table) beside protosel's over the same lanes, range by
 * range, with the reasons where they differ (psel_info_compare.c).
 *
 * @param [in] path      UCX's output.
 * @param [in] op        The operation (PSEL_OP_*).
 * @param [in] local     Local resources (the machine UCX ran on).
 * @param [in] peer      The peer's resources.
 * @param [in] config    protosel's settings.
 * @param [in] locality  PSEL_PEER_*, or -1 to take it from the file.
 * @param [in] json      Nonzero: JSON on stdout.
 *
 * @return 0, or 1 with the reason on stderr.
 */
int psel_info_compare_ucx(const char *path, psel_op_t op,
                          const psel_resource_table_t *local,
                          const psel_resource_table_t *peer,
                          const psel_config_t *config, int locality, int json);
/* ------------------------------------------------------------------------
 * Scale: number of peers, memory footprint, Open MPI receive queues, LogGP
 * alltoall (psel_info_scale.c, psel_info_rq.c, psel_info_alltoall.c)
 */

/** Options of scale. */
typedef struct psel_info_scale_opts {
    size_t      peers;          /**< --peers N: endpoints per process, 0 if
                                     not given */
    const char *rq_spec;        /**< --ompi-receive-queues SPEC */
    int         rq_suggest;     /**< --suggest-receive-queues */
    unsigned    alltoall;       /**< --alltoall P: processes, 0 if not given */
    size_t      size;           /**< --size n: bytes per peer */
    int         size_given;     /**< --size was given */
    double      proxy_overhead; /**< --proxy-overhead: seconds per request */
} psel_info_scale_opts_t;

enum {
    PSEL_INFO_OPT_PEERS = 0x200,
    PSEL_INFO_OPT_RQ,
    PSEL_INFO_OPT_RQ_SUGGEST,
    PSEL_INFO_OPT_ALLTOALL,
    PSEL_INFO_OPT_SIZE,
    PSEL_INFO_OPT_PROXY
};

/** Entries of psel_info's getopt_long table for the options of scale. */
#define PSEL_INFO_SCALE_LONG_OPTIONS \
    {"peers", required_argument, NULL, PSEL_INFO_OPT_PEERS}, \
    {"ompi-receive-queues", required_argument, NULL, PSEL_INFO_OPT_RQ}, \
    {"suggest-receive-queues", no_argument, NULL, PSEL_INFO_OPT_RQ_SUGGEST}, \
    {"alltoall", required_argument, NULL, PSEL_INFO_OPT_ALLTOALL}, \
    {"size", required_argument, NULL, PSEL_INFO_OPT_SIZE}, \
    {"proxy-overhead", required_argument, NULL, PSEL_INFO_OPT_PROXY}

/** What an endpoint's outputs of scale work from. */
typedef struct psel_info_ep_ctx {
    const psel_resource_table_t *local;    /**< Local resources */
    const psel_resource_table_t *peer;     /**< The peer's resources */
    const psel_config_t         *config;   /**< Settings */
    const psel_calib_t          *calib;    /**< Calibration, or NULL */
    int                          locality; /**< PSEL_PEER_* */
    const psel_ep_config_t      *ep;       /**< The endpoint shown */
    const psel_info_table_t     *tables;   /**< Its tables, contig first */
    unsigned                     count;    /**< Number of tables */
} psel_info_ep_ctx_t;

/** @return @a bytes in binary units as UCX prints memory ("35.47 MiB",
 *          "512 B"), in @a buf. */
const char *psel_info_bytes_str(double bytes, char *buf, size_t max);

/** Set the defaults of the options of scale. */
void psel_info_scale_defaults(psel_info_scale_opts_t *opts);

/** Take one option of scale; 0, or -1 with a message. */
int psel_info_scale_opt(int opt, const char *arg,
                        psel_info_scale_opts_t *opts);

/** Check the combination of options of scale; 0, or -1 with a message. */
int psel_info_scale_check(const psel_info_scale_opts_t *opts, int endpoint,
                          int json);

/** Print the usage lines of the options of scale. */
void psel_info_scale_usage(FILE *stream);

/** @return Nonzero if an option needs an endpoint (selection). */
int psel_info_scale_needs_ep(const psel_info_scale_opts_t *opts);

/** @return The endpoints per process to select for: --peers, else
 *  UCX_PSEL_NUM_EPS, else --alltoall P - 1, else 1. */
size_t psel_info_scale_num_eps(const psel_info_scale_opts_t *opts,
                               const psel_config_t *config);

/**
 * With --peers: the memory footprint of the endpoint's lanes at N peers,
 * term by term, and where the lanes change as N grows.
 */
void psel_info_footprint_print(FILE *stream, const psel_info_ep_ctx_t *ctx,
                               size_t peers);

/** The same as psel_info_footprint_print(), as one JSON value (-j): the
 *  terms, what is not counted, the sums, and where the lanes change. */
void psel_info_footprint_json(FILE *stream, const psel_info_ep_ctx_t *ctx,
                              size_t peers);

/** --peers N --plot FILE: footprint against the number of peers, lanes'
 *  changes marked. @return 0, or 1 with a message. */
int psel_info_footprint_plot(const char *path, const char *keep_dir,
                             const psel_info_ep_ctx_t *ctx, size_t peers);

/** --ompi-receive-queues SPEC: parse, defaults, memory. @return 0, or 1. */
int psel_info_rq_spec(FILE *stream, const char *spec, size_t peers);

/** --suggest-receive-queues: a spec from the selection. @return 0, or 1. */
int psel_info_rq_suggest(FILE *stream, const psel_info_ep_ctx_t *ctx,
                         size_t peers);

/** --alltoall P: the LogGP estimate (--plot draws it). @return 0, or 1. */
int psel_info_alltoall(FILE *stream, const psel_info_ep_ctx_t *ctx,
                       const psel_info_scale_opts_t *opts,
                       const char *plot_path, const char *keep_dir);

#endif
