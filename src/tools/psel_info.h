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
                      const char *conf_dir, int quiet);

#endif
