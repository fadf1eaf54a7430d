/**
 * @file psel_info.h
 * psel_info's outputs beyond the dumps of ucp_proto_sel/dump.h: the cost
 * plot (psel_info_plot.c) and the UCX settings closest to a selection
 * (psel_info_ucx_env.c).
 */
#ifndef PSEL_TOOLS_PSEL_INFO_H_
#define PSEL_TOOLS_PSEL_INFO_H_

#include <lane_select/lane_engine.h>
#include <lane_select/resource_table.h>
#include <ucp_proto_sel/calib.h>
#include <ucp_proto_sel/select.h>

/** One buffer type's table, with the table of the attribute lines alone. */
typedef struct psel_info_table {
    const psel_select_t       *select; /**< Selection that owns @a table */
    const psel_select_table_t *table;  /**< The table selection uses */
    const psel_select_table_t *attrs;  /**< The same buffer type costed on
                                            the transports' attributes only
                                            (== @a table without calibration) */
} psel_info_table_t;


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
 * Print, one NAME=VALUE per line on stdout, the UCX settings that bring a
 * stock UCP application closest to the selection of @a tables (thresholds,
 * rendezvous scheme, rails, transports, protocols). Each setting is checked
 * against the installed UCP; one it does not know is left out with a note.
 *
 * @param [in] local   Local resources (the lanes index them).
 * @param [in] lanes   The endpoint's lanes.
 * @param [in] tables  The tables of every buffer type, contig first.
 * @param [in] count   Number of tables.
 * @param [in] quiet   Nonzero: no comments on stderr (warnings stay).
 *
 * @return 0 on success, 1 with a message on stderr.
 */
int psel_info_ucx_env(const psel_resource_table_t *local,
                      const psel_ep_lanes_t *lanes,
                      const psel_info_table_t *tables, unsigned count,
                      int quiet);


/**
 * Route every libucs log message to stderr ("psel_info: error: ..."), so
 * that stdout holds only tables or JSON; errors and warnings are also kept
 * for psel_info_diag_json_error(). Call first in main().
 *
 * @param [in] prog  Program name for the messages.
 */
void psel_info_diag_init(const char *prog);

/** Say that stdout now holds JSON output, so no error object follows it. */
void psel_info_diag_json_started(void);

/**
 * With -j, after a failure: print {"error": {"what": ..., "messages": [...]}}
 * on @a stream, unless JSON was already started.
 *
 * @param [in] stream  Where to print (stdout).
 * @param [in] what    One sentence saying what failed.
 */
void psel_info_diag_json_error(FILE *stream, const char *what);

/** Print @a text as a JSON string (quoted, escaped). */
void psel_info_json_string(FILE *stream, const char *text);


/**
 * --compare-ucx FILE: UCX's tag-send table for a machine (protocols v2 table
 * or the v1 "tag_send:" line) beside protosel's over the same lanes, range
 * by range, with the reasons where they differ (psel_info_compare.c).
 *
 * @param [in] path      UCX's output.
 * @param [in] local     Local resources (the machine UCX ran on).
 * @param [in] peer      The peer's resources.
 * @param [in] config    protosel's settings.
 * @param [in] locality  PSEL_PEER_*, or -1 to take it from the file.
 * @param [in] json      Nonzero: JSON on stdout.
 *
 * @return 0, or 1 with the reason on stderr.
 */
int psel_info_compare_ucx(const char *path, const psel_resource_table_t *local,
                          const psel_resource_table_t *peer,
                          const psel_config_t *config, int locality, int json);

#endif
