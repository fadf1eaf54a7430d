/**
 * @file proto_tier.h
 * The protocol tier: protosel's cost lines in UCP's own protocols v2 (see
 * docs/runtime-library.md). Built against the internal headers of the
 * exact UCX version (configure --with-ucx-src); without them only the stub
 * proto_tier_none.c is built, and the tier is never available.
 */
#ifndef PSEL_UCX_RUNTIME_PROTO_TIER_H_
#define PSEL_UCX_RUNTIME_PROTO_TIER_H_

#include <ucp_proto_sel/calib.h>
#include <ucp_proto_sel/psel_config.h>

#include <stddef.h>

/**
 * Whether the protocol tier can act in this process: built with UCX's
 * internal headers, the loaded libucp is that very version, and it has
 * every protocol protosel maps, in writable memory.
 *
 * @param [in]  libucp  Handle of the loaded libucp.
 * @param [out] why     Why not, when it cannot.
 * @param [in]  max     Size of @a why.
 * @param [out] quiet   Set when the reason is not worth a warning (built
 *                      without the internal headers).
 *
 * @return Nonzero if available.
 */
int psel_proto_tier_available(void *libucp, char *why, size_t max, int *quiet);

/**
 * Wrap the init function of every UCP protocol protosel maps, once per
 * process. From then on, every protocol selection UCP makes replaces the
 * cost lines of those protocols by protosel's, computed over UCP's own
 * lanes with @a config and @a calib.
 *
 * @param [in] libucp  Handle of the loaded libucp.
 * @param [in] config  Settings; must stay valid for the process's life.
 * @param [in] calib   Measured cost lines, or NULL; same lifetime.
 */
void psel_proto_tier_install(void *libucp, const psel_config_t *config,
                             const psel_calib_t *calib);

/** @return The UCX version the protocol tier was built for, or "". */
const char *psel_proto_tier_built_for(void);

#endif
