/*
 * libprotosel_ucx.so: the library a user preloads into a stock UCX
 * application. It depends on libc alone and has no constructor, so that in
 * a process that never calls UCP (bash, timeout, mpirun) it does nothing at
 * all. It interposes two UCP entry points; the first call of either loads
 * the part that works, libprotosel_ucx_impl.so (runtime.h), from next to
 * this library, unless UCX_PSEL_ENABLE says no. Whatever fails there, UCP's
 * own function runs as if this library were not loaded.
 */
#define _GNU_SOURCE  /* dladdr, RTLD_NEXT */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "runtime.h"

#include <uct/api/version.h>  /* the UCX this build is for: header only */

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The interposed functions are this library's API: export only them */
#define PSEL_EXPORT __attribute__((visibility("default")))

typedef ucs_status_t (*psel_config_read_func_t)(const char *, const char *,
                                                ucp_config_t **);
typedef ucs_status_t (*psel_init_version_func_t)(unsigned, unsigned,
                                                 const ucp_params_t *,
                                                 const ucp_config_t *,
                                                 ucp_context_h *);

static pthread_once_t psel_preload_once       = PTHREAD_ONCE_INIT;
static psel_config_read_func_t psel_next_config_read;
static psel_init_version_func_t psel_next_init_version;
static const psel_ucx_runtime_v1_t *psel_runtime;


static void psel_preload_warn(const char *what, const char *why)
{
    fprintf(stderr, "[protosel] warning: %s: %s; UCX runs without protosel "
            "(unset LD_PRELOAD or set UCX_PSEL_ENABLE=n to silence this)\n",
            what, why);
}

/* UCX_PSEL_ENABLE=n (as the ucs parser spells "no"): do not even load */
static int psel_preload_disabled(void)
{
    static const char *no[] = {"n", "no", "off", "0"};
    const char *value       = getenv("UCX_PSEL_ENABLE");
    unsigned i;

    for (i = 0; (value != NULL) && (i < sizeof(no) / sizeof(no[0])); ++i) {
        if (!strcasecmp(value, no[i])) {
            return 1;
        }
    }
    return 0;
}

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

/*
 * Is the loaded UCP the major.minor release this build is for? Checked
 * before the impl is loaded: the impl links libucs and libuct, and was
 * compiled against this release's headers (and the protocol tier against
 * its internal structures); dlopen()ing it into another release's
 * libraries could crash the application, so on a mismatch nothing but
 * this check runs. The version asked is the one UCP reports to the
 * application (an interposer of ucp_get_version is part of its UCP).
 */
static int psel_preload_version_ok(void)
{
    void (*get_version)(unsigned*, unsigned*, unsigned*);
    unsigned major, minor, release;
    char why[256];

    get_version = dlsym(RTLD_DEFAULT, "ucp_get_version");
    if (get_version == NULL) {
        get_version = psel_preload_next("ucp_get_version");
    }
    if (get_version == NULL) {
        psel_preload_warn("the loaded libucp", "it has no ucp_get_version");
        return 0;
    }
    get_version(&major, &minor, &release);
    if ((major == UCT_VERNO_MAJOR) && (minor == UCT_VERNO_MINOR)) {
        return 1;
    }
    snprintf(why, sizeof(why), "UCX %u.%u.%u is loaded, and it was built for "
             "UCX " UCT_VERNO_STRING " (its ABI and internal structures); "
             "rebuild protosel against this UCX, or run the UCX it was built "
             "for", major, minor, release);
    psel_preload_warn("libprotosel_ucx.so", why);
    return 0;
}

static void psel_preload_load(void)
{
    char path[PATH_MAX], *slash;
    const psel_ucx_runtime_v1_t *runtime;
    void *impl, *libucp;
    Dl_info info;

    psel_next_config_read  = (psel_config_read_func_t)
                             psel_preload_next("ucp_config_read");
    psel_next_init_version = (psel_init_version_func_t)
                             psel_preload_next("ucp_init_version");
    if ((psel_next_config_read == NULL) || (psel_next_init_version == NULL) ||
        psel_preload_disabled() || !psel_preload_version_ok()) {
        return;
    }

    /* the part that works lives next to this library, or in protosel/ */
    if (!dladdr((void*)psel_preload_load, &info) || (info.dli_fname == NULL) ||
        (strlen(info.dli_fname) >= sizeof(path))) {
        psel_preload_warn("cannot locate libprotosel_ucx.so", "dladdr failed");
        return;
    }
    strcpy(path, info.dli_fname);
    slash  = strrchr(path, '/');
    *(slash ? slash + 1 : path) = '\0';
    if (strlen(path) + sizeof("protosel/" PSEL_UCX_RUNTIME_IMPL) >
        sizeof(path)) {
        psel_preload_warn(info.dli_fname, "path too long");
        return;
    }
    slash = path + strlen(path);
    strcpy(slash, "protosel/" PSEL_UCX_RUNTIME_IMPL);
    impl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (impl == NULL) {
        strcpy(slash, PSEL_UCX_RUNTIME_IMPL);
        impl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (impl == NULL) {
        psel_preload_warn("cannot load " PSEL_UCX_RUNTIME_IMPL, dlerror());
        return;
    }

    runtime = dlsym(impl, PSEL_UCX_RUNTIME_SYMBOL);
    if (runtime == NULL) {
        psel_preload_warn(path, "no " PSEL_UCX_RUNTIME_SYMBOL);
        return;
    }
    if (runtime->version != PSEL_UCX_RUNTIME_VERSION) {
        psel_preload_warn(path, "another version of libprotosel_ucx.so; "
                          "install both from one build");
        return;
    }

    /* the libucp the application uses, for the runtime's UCP symbols */
    libucp = NULL;
    if (dladdr((void*)psel_next_config_read, &info) &&
        (info.dli_fname != NULL)) {
        libucp = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    }
    if (libucp == NULL) {
        psel_preload_warn("cannot find the libucp in use", dlerror());
        return;
    }
    runtime->attach(libucp);
    psel_runtime = runtime;
}

PSEL_EXPORT
ucs_status_t ucp_config_read(const char *env_prefix, const char *filename,
                             ucp_config_t **config_p)
{
    ucs_status_t status;

    pthread_once(&psel_preload_once, psel_preload_load);
    if (psel_next_config_read == NULL) {
        return UCS_ERR_UNSUPPORTED; /* no libucp: cannot happen in a caller
                                       linked against it */
    }
    status = psel_next_config_read(env_prefix, filename, config_p);
    if ((status == UCS_OK) && (psel_runtime != NULL)) {
        psel_runtime->config_read(env_prefix, *config_p);
    }
    return status;
}

PSEL_EXPORT
ucs_status_t ucp_init_version(unsigned api_major_version,
                              unsigned api_minor_version,
                              const ucp_params_t *params,
                              const ucp_config_t *config,
                              ucp_context_h *context_p)
{
    pthread_once(&psel_preload_once, psel_preload_load);
    if (psel_next_init_version == NULL) {
        return UCS_ERR_UNSUPPORTED;
    }
    if (psel_runtime != NULL) {
        psel_runtime->context_init();
    }
    return psel_next_init_version(api_major_version, api_minor_version,
                                  params, config, context_p);
}
