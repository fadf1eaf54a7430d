/**
 * @file perftest_settings.h
 * The UCX_PSEL_* settings a calibration session sends to its server: which
 * keys are allowed, the grammar of each value, parsing the text that comes
 * over the network, and applying a parsed set to the environment.
 *
 * A server must never take from the network more than calibration needs,
 * so only these keys are accepted (anything else is refused with the
 * reason, and nothing is applied):
 *
 * | key                        | value                                        |
 * |----------------------------|----------------------------------------------|
 * | UCX_PSEL_TLS               | transport names: [a-z0-9_] tokens, ','-joined, optional leading '^' |
 * | UCX_PSEL_NET_DEVICES       | device names: [A-Za-z0-9_.:-] tokens, likewise |
 * | UCX_PSEL_PROTOS            | protocol patterns: [a-z0-9_/] and "*" tokens, likewise |
 * | UCX_PSEL_MAX_RNDV_LANES    | 1..16                                        |
 * | UCX_PSEL_MAX_EAGER_LANES   | 1..16                                        |
 * | UCX_PSEL_CALIBRATION       | "none" only: never a file path from the network |
 * | UCX_TLS, UCX_NET_DEVICES   | as UCX_PSEL_TLS, UCX_PSEL_NET_DEVICES        |
 * | UCX_PROTO_ENABLE           | y or n                                       |
 * | UCX_RNDV_THRESH, UCX_ZCOPY_THRESH, UCX_BCOPY_THRESH | auto, inf, or 1..19 decimal digits |
 * | UCX_RNDV_SCHEME            | auto, get_zcopy, put_zcopy or am             |
 *
 * The UCX_* (not UCX_PSEL_*) keys set what stock UCP runs, when a session
 * measures UCP (psel_calibrate --ucp, with a peer it forks); a
 * psel_perftest server measures protosel's data path and refuses them
 * (pt_settings_has_ucp()).
 *
 * Text form: "NAME=VALUE" lines separated by '\n', each key at most once,
 * values of 1..PT_SETTINGS_MAX_VALUE bytes, at most PT_SETTINGS_MAX_TEXT
 * bytes in all. Pure logic apart from the environment (pt_settings_apply(),
 * pt_env_set(), pt_env_restore()): no UCX, no I/O.
 */
#ifndef PSEL_TOOLS_PERFTEST_SETTINGS_H_
#define PSEL_TOOLS_PERFTEST_SETTINGS_H_

#include <stddef.h>

#define PT_SETTINGS_MAX_TEXT   1024u  /**< Bytes of the text form */
#define PT_SETTINGS_MAX_VALUE  255u   /**< Bytes of one value */
#define PT_SETTINGS_MAX_KEYS   14u    /**< Entries of the allow-list */


/** A parsed, checked set of settings: one slot per allowed key. */
typedef struct {
    char value[PT_SETTINGS_MAX_KEYS][PT_SETTINGS_MAX_VALUE + 1]; /**< "" if
                                           the key is not set */
} pt_settings_t;


/** @return Name of allowed key @a i (< PT_SETTINGS_MAX_KEYS). */
const char *pt_settings_key(unsigned i);


/** @return Whether @a settings set a key of stock UCP (UCX_*, not
 *          UCX_PSEL_*). */
int pt_settings_has_ucp(const pt_settings_t *settings);


/**
 * Parse and check settings text as it arrives from the network.
 *
 * @param [in]  text      The text; need not be NUL-terminated.
 * @param [in]  len       Its length in bytes.
 * @param [out] settings  Set on success only.
 * @param [out] err       On failure, "setting N (NAME): what is wrong".
 * @param [in]  max       Size of @a err.
 *
 * @return 0 if accepted, -1 if refused.
 */
int pt_settings_parse(const char *text, size_t len, pt_settings_t *settings,
                      char *err, size_t max);


/**
 * Canonical text of @a settings (keys in allow-list order), which
 * pt_settings_parse() gives back unchanged.
 *
 * @return The length written (always < PT_SETTINGS_MAX_TEXT + 1).
 */
size_t pt_settings_format(const pt_settings_t *settings, char *text,
                          size_t max);


/**
 * Apply @a settings to this process's environment, on top of the
 * environment the process was started with: first every variable an
 * earlier call (or pt_env_set()) changed gets its value from before back
 * (or is unset again, if it was not set), then the keys @a settings sets
 * are set. So a key a later configuration omits is what the operator gave
 * the process, never left from the previous configuration nor removed.
 */
void pt_settings_apply(const pt_settings_t *settings);


/**
 * Set one environment variable for this session, saving the value it had
 * before the session first changed it (for pt_env_restore() and the next
 * pt_settings_apply()). At most 16 names are saved; a further one is set
 * without being restored.
 */
void pt_env_set(const char *name, const char *value);


/** Give every variable the session set its value from before (unset it
 *  if it was not set). */
void pt_env_restore(void);

#endif
