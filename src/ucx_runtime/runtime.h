/**
 * @file runtime.h
 * What the preloaded library (preload.c, libprotosel_ucx.so: libc only)
 * asks of the part that does the work (runtime.c and proto_tier.c,
 * libprotosel_ucx_impl.so: protosel, libucs, libuct). The preloaded part
 * loads the other with dlopen() the first time a UCP entry point it wraps
 * runs, that is only in processes that use UCP; it finds one exported
 * symbol, PSEL_UCX_RUNTIME_SYMBOL, and checks its version.
 */
#ifndef PSEL_UCX_RUNTIME_RUNTIME_H_
#define PSEL_UCX_RUNTIME_RUNTIME_H_

#include <ucp/api/ucp.h>

#define PSEL_UCX_RUNTIME_SYMBOL   "psel_ucx_runtime_v1"
#define PSEL_UCX_RUNTIME_VERSION  1
#define PSEL_UCX_RUNTIME_IMPL     "libprotosel_ucx_impl.so"


/** The entry points of libprotosel_ucx_impl.so, version 1. */
typedef struct psel_ucx_runtime_v1 {
    unsigned version;   /**< PSEL_UCX_RUNTIME_VERSION */

    /**
     * Called once, first: the libucp the application uses (a dlopen()
     * handle, RTLD_NOLOAD), for the UCP symbols the runtime needs. Never
     * fails: without them the runtime stays out of the way.
     *
     * @param [in] libucp  Handle of the libucp that ucp_config_read() came
     *                     from.
     */
    void (*attach)(void *libucp);

    /**
     * A UCP configuration was just read by ucp_config_read(): apply the
     * config tier to it. Never fails: a problem is warned about once and
     * leaves @a config as UCP read it.
     *
     * @param [in]    env_prefix  As given to ucp_config_read().
     * @param [inout] config      The configuration read.
     */
    void (*config_read)(const char *env_prefix, ucp_config_t *config);

    /**
     * ucp_init_version() is about to run: install the protocol tier (once
     * per process) if it applies. Never fails.
     */
    void (*context_init)(void);
} psel_ucx_runtime_v1_t;

#endif
