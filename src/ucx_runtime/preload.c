/*
 * libprotosel_ucx.so: the library a user preloads into a stock UCX
 * application. It depends on libc alone and has no constructor, so that in
 * a process that never calls UCP (bash, timeout, mpirun) it does nothing at
 * all. It interposes two UCP entry points; the first call of either loads
 * the part that works (loader.h).
 */
#define _GNU_SOURCE  /* RTLD_NEXT */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "loader.h"

#include <dlfcn.h>
#include <stddef.h>

/* The interposed functions are this library's API: export only them */
#define PSEL_EXPORT __attribute__((visibility("default")))


/* UCP's own function: the next definition after this library, or, when
 * libucp was loaded with RTLD_LOCAL (a dlopen()ed plugin such as Open MPI's
 * pml ucx), the one of the loaded libucp.so.0 */
static void *psel_preload_next(const char *name)
{
    void *func = dlsym(RTLD_NEXT, name);
    void *libucp;

    if (func != NULL) {
        return func;
    }
    libucp = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (libucp == NULL) {
        return NULL;
    }
    func = dlsym(libucp, name);
    dlclose(libucp);
    return func;
}

const psel_loader_entry_t psel_loader_entry = {
    .name     = "libprotosel_ucx.so",
    .off_hint = "unset LD_PRELOAD",
    .next     = psel_preload_next
};

PSEL_EXPORT
ucs_status_t ucp_config_read(const char *env_prefix, const char *filename,
                             ucp_config_t **config_p)
{
    return psel_loader_config_read(env_prefix, filename, config_p);
}

PSEL_EXPORT
ucs_status_t ucp_init_version(unsigned api_major_version,
                              unsigned api_minor_version,
                              const ucp_params_t *params,
                              const ucp_config_t *config,
                              ucp_context_h *context_p)
{
    return psel_loader_init_version(api_major_version, api_minor_version,
                                    params, config, context_p);
}
