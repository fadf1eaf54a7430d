/**
 * @file snapshot.h
 * Save a resource table to a line-oriented text file and load it back,
 * losslessly. The format is documented in src/lane_select/SNAPSHOT.md.
 */
#ifndef PSEL_LANE_SELECT_SNAPSHOT_H_
#define PSEL_LANE_SELECT_SNAPSHOT_H_

#include "resource.h"

#include <stdio.h>

/** Version written on the first line of every snapshot, and the only one read */
#define PSEL_SNAPSHOT_VERSION 1


/**
 * Write a resource table as a snapshot.
 *
 * @param [in] table    Table to save.
 * @param [in] stream   Stream to write to.
 *
 * @return UCS_OK, UCS_ERR_INVALID_PARAM if a name cannot be represented
 *         (contains a newline, '=' or leading/trailing spaces), or
 *         UCS_ERR_IO_ERROR if writing failed.
 */
ucs_status_t psel_snapshot_save(const psel_resource_table_t *table,
                                FILE *stream);


/**
 * Print a resource table as one JSON object (psel_info -d -j): "origin",
 * "ucx_version", "host", and "resources", one object per resource whose
 * keys are the snapshot's (SNAPSHOT.md): names as strings, numbers in UCT's
 * units (C locale), unlimited sizes as "inf", flags as arrays of names.
 *
 * @param [in] table    Table to print.
 * @param [in] stream   Stream to write to.
 */
void psel_snapshot_print_json(const psel_resource_table_t *table, FILE *stream);


/**
 * Save a resource table to a file, replacing it.
 *
 * @param [in] table   Table to save.
 * @param [in] path    File to write.
 *
 * @return As psel_snapshot_save(), or UCS_ERR_IO_ERROR if the file cannot be
 *         created.
 */
ucs_status_t psel_snapshot_save_path(const psel_resource_table_t *table,
                                     const char *path);


/**
 * Read a snapshot from a stream. Any malformed input (unknown or duplicate
 * key, bad number, unknown flag name, missing key, duplicate resource, wrong
 * resource count, bad version...) is rejected with an error message
 * "<name>:<line>: <what was expected>".
 *
 * @param [in]  stream   Stream to read.
 * @param [in]  name     Name for messages and for the table's origin.
 * @param [out] table    Filled on success; untouched on error. Need not be
 *                       initialized; the caller owns the result and frees it
 *                       with psel_resource_table_cleanup().
 *
 * @return UCS_OK, UCS_ERR_INVALID_PARAM on malformed input,
 *         UCS_ERR_NO_MEMORY.
 */
ucs_status_t psel_snapshot_load(FILE *stream, const char *name,
                                psel_resource_table_t *table);


/**
 * Read a snapshot from a file, as psel_snapshot_load().
 *
 * @param [in]  path    File to read.
 * @param [out] table   Filled on success; untouched on error.
 *
 * @return As psel_snapshot_load(), or UCS_ERR_IO_ERROR if the file cannot be
 *         opened.
 */
ucs_status_t psel_snapshot_load_path(const char *path,
                                     psel_resource_table_t *table);

#endif
