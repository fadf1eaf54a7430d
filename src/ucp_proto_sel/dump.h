/**
 * @file dump.h
 * Selection tables for people and scripts: a UCX_PROTO_INFO-style text table,
 * an explain mode with every candidate's cost lines, crossovers and margins,
 * and JSON with the same content.
 */
#ifndef PSEL_UCP_PROTO_SEL_DUMP_H_
#define PSEL_UCP_PROTO_SEL_DUMP_H_

#include "select.h"

#include <stdio.h>

/** Why a boundary between two rows sits where it does. */
typedef enum {
    PSEL_BOUNDARY_MAX_LENGTH,   /**< The left protocol reaches its max size */
    PSEL_BOUNDARY_MIN_LENGTH,   /**< The right protocol starts to apply */
    PSEL_BOUNDARY_FORCED,       /**< A forced threshold (UCX_PSEL_*_THRESH) */
    PSEL_BOUNDARY_CROSSOVER,    /**< The cost lines cross */
    PSEL_BOUNDARY_BIAS_BOUND,   /**< The rendezvous bias hit its x2 bound */
    PSEL_BOUNDARY_MARGIN,       /**< The right one beats the left by the
                                     switch margin from here */
    PSEL_BOUNDARY_LAST
} psel_boundary_reason_t;

/** Explanation of the boundary after row @a row of a table. */
typedef struct psel_boundary {
    size_t                 at;        /**< First size of the next row */
    psel_boundary_reason_t reason;    /**< Why */
    double                 crossing;  /**< Unbiased crossing of the two lines
                                           [B], or NaN if they do not cross */
    double                 biased_crossing; /**< Crossing with the bias, or NaN */
    double                 margin_crossing; /**< Where the right line goes
                                               below the left one less the
                                               switch margin, or NaN */
} psel_boundary_t;

/** Output flags. */
enum {
    PSEL_DUMP_EXPLAIN = 1u << 0   /**< Add cost lines, crossovers, margins */
};

/**
 * Print a table as text.
 *
 * @param [in] stream  Output.
 * @param [in] select  Selection that owns @a table.
 * @param [in] table   Table to print.
 * @param [in] title   Left header cell, e.g. "ep_cfg[0]".
 * @param [in] flags   PSEL_DUMP_*.
 */
void psel_select_dump(FILE *stream, const psel_select_t *select,
                      const psel_select_table_t *table, const char *title,
                      unsigned flags);

/**
 * Print each candidate protocol of a table: its sizes and lanes with their
 * shares, or why it does not apply.
 */
void psel_select_dump_protos(FILE *stream, const psel_select_t *select,
                             const psel_select_table_t *table);

/** Print a table as one JSON object (always with the explain content). */
void psel_select_dump_json(FILE *stream, const psel_select_t *select,
                           const psel_select_table_t *table, const char *title);

/** Print the JSON value of psel_info's "calibration": the origin of the
 *  measured cost lines the selection uses ({"host", "created", "mode"}),
 *  or null. */
void psel_select_dump_json_calib(FILE *stream, const psel_select_t *select);

/** Print a table to the UCX log stream (UCX_PSEL_PROTO_INFO=y). */
void psel_select_dump_log(const psel_select_t *select,
                          const psel_select_table_t *table);

/**
 * Print which cost lines a table was selected on, when the selection has a
 * calibration (UCX_PSEL_CALIBRATION): "# cost lines: measured on <host>
 * <created> (<mode>) for egr/short ...; advertised attributes for the rest";
 * without one, that the lines are the advertised attributes, with the copy
 * bandwidth they assume, and how to measure them.
 *
 * @param [in] stream  Output.
 * @param [in] select  Selection that owns @a table.
 * @param [in] table   Table to describe.
 */
void psel_select_dump_cost_source(FILE *stream, const psel_select_t *select,
                                  const psel_select_table_t *table);

/**
 * Print, side by side, each candidate's cost lines from the transports'
 * attributes and from the calibration, per size range (in the selection's
 * perf flavour), then the rows each would select.
 *
 * @param [in] stream    Output.
 * @param [in] measured  Selection with a calibration.
 * @param [in] mtable    Its table.
 * @param [in] atable    Table of the same buffer type from a selection of
 *                       the same protocols, lanes and config without a
 *                       calibration.
 */
void psel_select_dump_compare(FILE *stream, const psel_select_t *measured,
                              const psel_select_table_t *mtable,
                              const psel_select_table_t *atable);

/** Append a table's rows in one line: "0..304 egr/short, 305..inf egr/zcopy". */
void psel_select_rows_str(const psel_select_table_t *table,
                          ucs_string_buffer_t *strb);

/** Explain the boundary after row @a row (row < table->count - 1). */
void psel_select_boundary(const psel_select_t *select,
                          const psel_select_table_t *table, unsigned row,
                          psel_boundary_t *boundary);

/** Append why protocol @a i stands where it does in @a table: its size
 *  range, or why it is out (not applicable, filtered, threshold). */
void psel_select_proto_status_str(const psel_select_table_t *table, unsigned i,
                                  ucs_string_buffer_t *strb);

#endif
