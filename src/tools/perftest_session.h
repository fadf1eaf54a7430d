/**
 * @file perftest_session.h
 * The calibration session: after the handshake of a PT_TEST_CALIBRATE
 * client (psel_calibrate), the client sends commands and the server (a
 * psel_perftest server, or a peer psel_calibrate forked) obeys until END or
 * an error: CONFIGURE (reconnect both sides with new UCX_PSEL_* settings)
 * and MEASURE (warm up, then timed phases of tag_lat or tag_bw).
 */
#ifndef PSEL_TOOLS_PERFTEST_SESSION_H_
#define PSEL_TOOLS_PERFTEST_SESSION_H_

#include "perftest_run.h"
#include "perftest_settings.h"

/** Server: serve commands until END (UCS_OK) or an error. */
ucs_status_t pt_session_serve(pt_run_t *run);

/**
 * Client: (re)connect both sides with these UCX_PSEL_* settings,
 * "NAME=VALUE" separated by newlines (replacing those of the previous
 * configuration). Only the keys of perftest_settings.h are accepted, on
 * both sides. @a local, "NAME=VALUE" lines or NULL, is set on this side
 * only, after @a settings (e.g. this side's devices, or a calibration file
 * of this host); it is never sent.
 */
ucs_status_t pt_session_configure(pt_run_t *run, const char *settings,
                                  const char *local);

/**
 * Client: warm up, then time @a repeats phases of @a iters iterations of
 * @a test at @a size, with PT_FLAG_* @a flags (PT_FLAG_COLD: buffers out of
 * cache). @a times gets the seconds per message of each phase (half the
 * round trip for tag_lat).
 */
ucs_status_t pt_session_measure(pt_run_t *run, pt_test_id_t test, size_t size,
                                uint32_t flags, uint64_t iters,
                                unsigned repeats, double *times);

/** Client: end the session. */
ucs_status_t pt_session_end(pt_run_t *run);

#endif
