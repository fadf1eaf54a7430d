/**
 * @file loader.h
 * What the two ways into a stock UCP process share (both libc only, no
 * UCX library linked): preload.c (libprotosel_ucx.so, LD_PRELOAD: the UCP
 * entry points are interposed) and plugin.c (libucs_protosel.so.0, a UCS
 * plugin of UCX >= 1.22: the same entry points are redirected in their
 * callers' GOT). On the first call of either entry point the loader loads
 * libprotosel_ucx_impl.so (runtime.h), unless UCX_PSEL_ENABLE says no or
 * the loaded UCP is another release; whatever fails, UCP's own function
 * runs as if protosel were not there.
 */
#ifndef PSEL_UCX_RUNTIME_LOADER_H_
#define PSEL_UCX_RUNTIME_LOADER_H_

#include <ucp/api/ucp.h>

/** How UCP is entered, defined once by each library (preload.c, plugin.c). */
typedef struct psel_loader_entry {
    const char *name;         /**< the library, for messages */
    const char *off_hint;     /**< how to take it out, for messages */
    /** UCP's own function @a name (not this library's wrapper), or NULL */
    void      *(*next)(const char *name);
} psel_loader_entry_t;

extern const psel_loader_entry_t psel_loader_entry;


/** One warning on stderr: @a what failed because @a why; UCX goes on alone. */
void psel_loader_warn(const char *what, const char *why);


/** @return Nonzero when UCX_PSEL_ENABLE says no (as the ucs parser spells it). */
int psel_loader_disabled(void);


/**
 * @return Nonzero when the loaded UCP (as it reports itself to the
 *         application) is the major.minor release this build is for;
 *         otherwise warns once.
 */
int psel_loader_version_ok(void);


/** The wrapper of ucp_config_read() both libraries install. */
ucs_status_t psel_loader_config_read(const char *env_prefix,
                                     const char *filename,
                                     ucp_config_t **config_p);


/** The wrapper of ucp_init_version() both libraries install. */
ucs_status_t psel_loader_init_version(unsigned api_major_version,
                                      unsigned api_minor_version,
                                      const ucp_params_t *params,
                                      const ucp_config_t *config,
                                      ucp_context_h *context_p);

#endif
