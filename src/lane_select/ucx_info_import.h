/**
 * @file ucx_info_import.h
 * Import the text printed by `ucx_info -d` (UCX 1.6 up to the newest layout)
 * into a resource table, so that lane selection can run on the resources of
 * a machine that is not this one.
 *
 * Accepted input, in short (the full grammar is in docs/lane-selection.md):
 * - Only lines whose first non-blank character is '#' are parsed. Other lines
 *   (a fixture's "key: value" header, log lines interleaved by UCX_LOG_LEVEL,
 *   shell prompts) are skipped; before the first '#' line, a header line
 *   "ucx_version: X" records the UCX version.
 * - Blocks "# Memory domain:", "Component:", "Transport:", "Device:" and
 *   "Connection manager:"; each Device line opens one resource (the 1.6 layout
 *   lists several Device blocks under one Transport).
 * - Every attribute line of UCX 1.6 .. 1.19; unknown lines are skipped with a
 *   debug message, garbled values of known keys are errors.
 */
#ifndef PSEL_LANE_SELECT_UCX_INFO_IMPORT_H_
#define PSEL_LANE_SELECT_UCX_INFO_IMPORT_H_

#include "resource.h"

#include <stdio.h>


/**
 * Parse `ucx_info -d` text into a resource table.
 *
 * A resource is complete when its block has at least: bandwidth, latency,
 * overhead, connection, (device) priority, device address and error
 * handling. Input that ends inside a resource block, or a block that lacks
 * one of these, is an error; input that ends between two blocks gives the
 * resources read so far. A resource reported as "< failed to open interface >"
 * is dropped.
 *
 * @param [in]  in          Stream to read until end of file.
 * @param [in]  origin_name Name used in messages and stored as the origin.
 * @param [out] table       Filled only on success: @a count, @a resources
 *                          (allocated with malloc; release with
 *                          free(table->resources)), @a origin, @a ucx_version
 *                          ("" if unknown) and @a host (""). The previous
 *                          content is overwritten without being freed.
 *
 * @return UCS_OK, UCS_ERR_INVALID_PARAM on malformed or partial input (a
 *         message "origin:line: expected ..., got '...'" is logged),
 *         UCS_ERR_NO_MEMORY, or UCS_ERR_IO_ERROR if reading fails.
 */
ucs_status_t psel_ucx_info_import(FILE *in, const char *origin_name,
                                  psel_resource_table_t *table);


/**
 * Same as @ref psel_ucx_info_import, reading the file at @a path, which is
 * also the origin name.
 *
 * @param [in]  path  File to read.
 * @param [out] table Filled only on success.
 *
 * @return As @ref psel_ucx_info_import; UCS_ERR_IO_ERROR if the file cannot be
 *         opened.
 */
ucs_status_t psel_ucx_info_import_file(const char *path,
                                       psel_resource_table_t *table);

#endif
