/**
 * @file tool_diag.h
 * What every protosel tool (psel_info, psel_perftest, psel_calibrate) does
 * with its diagnostics: every libucs log message (protosel's libraries log
 * through it) goes to stderr as "<prog>: error: ...", never to stdout, so
 * that stdout holds only the tool's output (tables, JSON, ucx_perftest's
 * result lines). Errors and warnings are kept: for psel_info -j's error
 * object, and for a tool to name the real cause of a failed step.
 */
#ifndef PSEL_TOOLS_TOOL_DIAG_H_
#define PSEL_TOOLS_TOOL_DIAG_H_

#include <stdio.h>

/**
 * Route every libucs log message to stderr. Call first in main().
 *
 * @param [in] prog  Program name for the messages.
 */
void psel_tool_diag_init(const char *prog);

/**
 * @return A mark of the messages so far, for psel_tool_diag_since().
 */
unsigned psel_tool_diag_mark(void);

/**
 * @return The text of the last error logged after @a mark (without the
 *         program name), or NULL if there was none.
 */
const char *psel_tool_diag_since(unsigned mark);

/**
 * Check the UCX_PSEL_* settings of this process's environment, and with
 * @a calibration also the file UCX_PSEL_CALIBRATION names, before any work
 * (a fork, a connection): on failure the messages say what is wrong, and
 * "<prog>: fix the variable above; ..." what to do.
 *
 * @return 0 if they are good, 1 if not.
 */
int psel_tool_config_check(int calibration);

/** Say that stdout now holds JSON output, so no error object follows it. */
void psel_tool_diag_json_started(void);

/**
 * With -j, after a failure: print {"error": {"what": ..., "messages": [...]}}
 * and a newline on @a stream; as the member "error" of the object
 * psel_tool_json_member() started, closing it; nothing if a whole JSON value
 * is out already.
 *
 * @param [in] stream  Where to print (stdout).
 * @param [in] what    One sentence saying what failed.
 */
void psel_tool_diag_json_error(FILE *stream, const char *what);

/**
 * Start the member @a name of the one JSON object a tool prints on
 * @a stream: '{' before the first member, ',' before the others, then
 * "name": (the caller prints the value).
 */
void psel_tool_json_member(FILE *stream, const char *name);

/** Close the object psel_tool_json_member() started, with a newline. */
void psel_tool_json_end(FILE *stream);

#endif
