/*
 * The loader both entry libraries share (loader.h): the first call of a
 * wrapped UCP entry point loads libprotosel_ucx_impl.so, found next to the
 * entry library, in its protosel/ subdirectory, or in ../protosel/ (the
 * plugin is installed in $(libdir)/ucx, the impl in $(pkglibdir)).
 */
#define _GNU_SOURCE  /* dladdr */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "loader.h"
#include "runtime.h"

#include <uct/api/version.h>  /* the UCX this build is for: header only */

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef ucs_status_t (*psel_config_read_func_t)(const char *, const char *,
                                                ucp_config_t **);
typedef ucs_status_t (*psel_init_version_func_t)(unsigned, unsigned,
                                                 const ucp_params_t *,
                                                 const ucp_config_t *,
                                                 ucp_context_h *);

static pthread_once_t psel_loader_once = PTHREAD_ONCE_INIT;
static psel_config_read_func_t psel_next_config_read;
static psel_init_version_func_t psel_next_init_version;
static const psel_ucx_runtime_v1_t *psel_runtime;


void psel_loader_warn(const char *what, const char *why)
{
    fprintf(stderr, "[protosel] warning: %s: %s; UCX runs without protosel "
            "(%s or set UCX_PSEL_ENABLE=n to silence this)\n", what, why,
            psel_loader_entry.off_hint);
}

int psel_loader_disabled(void)
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

/*
 * Checked before the impl is loaded: the impl links libucs and libuct, and
 * was compiled against this release's headers (and the protocol tier
 * against its internal structures); dlopen()ing it into another release's
 * libraries could crash the application, so on a mismatch nothing but this
 * check runs. The version asked is the one UCP reports to the application
 * (an interposer of ucp_get_version is part of its UCP).
 */
int psel_loader_version_ok(void)
{
    void (*get_version)(unsigned*, unsigned*, unsigned*);
    unsigned major, minor, release;
    char why[256];

    get_version = dlsym(RTLD_DEFAULT, "ucp_get_version");
    if (get_version == NULL) {
        get_version = psel_loader_entry.next("ucp_get_version");
    }
    if (get_version == NULL) {
        psel_loader_warn("the loaded libucp", "it has no ucp_get_version");
        return 0;
    }
    get_version(&major, &minor, &release);
    if ((major == UCT_VERNO_MAJOR) && (minor == UCT_VERNO_MINOR)) {
        return 1;
    }
    snprintf(why, sizeof(why), "UCX %u.%u.%u is loaded, and it was built for "
             "UCX " UCT_VERNO_STRING " (its ABI and internal structures); "
             "rebuild protosel against this UCX (./dev.sh ucx %u.%u.%u in "
             "protosel's source), or run the UCX it was built for", major,
             minor, release, major, minor, release);
    psel_loader_warn(psel_loader_entry.name, why);
    return 0;
}

/* The impl next to the entry library @a self: in protosel/, beside it, or
 * in ../protosel/; @a error gets the reason the one beside it failed */
static void *psel_loader_open_impl(const char *self, char *path, size_t max,
                                   char *error, size_t error_max)
{
    static const char *dirs[] = {"protosel/", "", "../protosel/"};
    size_t dir_len;
    char *slash;
    void *impl;
    unsigned i;

    if (strlen(self) >= max) {
        return NULL;
    }
    strcpy(path, self);
    slash   = strrchr(path, '/');
    dir_len = slash ? (size_t)(slash + 1 - path) : 0;
    for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); ++i) {
        if (dir_len + strlen(dirs[i]) + sizeof(PSEL_UCX_RUNTIME_IMPL) > max) {
            return NULL;
        }
        snprintf(path + dir_len, max - dir_len, "%s%s", dirs[i],
                 PSEL_UCX_RUNTIME_IMPL);
        impl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (impl != NULL) {
            return impl;
        }
        if (dirs[i][0] == '\0') {
            snprintf(error, error_max, "%s", dlerror());
        }
    }
    return NULL;
}

static void psel_loader_load(void)
{
    const psel_ucx_runtime_v1_t *runtime;
    char path[PATH_MAX], error[PATH_MAX + 256];
    void *impl, *libucp;
    Dl_info info;

    psel_next_config_read  = (psel_config_read_func_t)
                             psel_loader_entry.next("ucp_config_read");
    psel_next_init_version = (psel_init_version_func_t)
                             psel_loader_entry.next("ucp_init_version");
    if ((psel_next_config_read == NULL) || (psel_next_init_version == NULL) ||
        psel_loader_disabled() || !psel_loader_version_ok()) {
        return;
    }

    if (!dladdr((void*)psel_loader_load, &info) || (info.dli_fname == NULL)) {
        psel_loader_warn("cannot locate " PSEL_UCX_RUNTIME_IMPL,
                         "dladdr failed");
        return;
    }
    snprintf(error, sizeof(error), "%s: path too long", info.dli_fname);
    impl = psel_loader_open_impl(info.dli_fname, path, sizeof(path), error,
                                 sizeof(error));
    if (impl == NULL) {
        psel_loader_warn("cannot load " PSEL_UCX_RUNTIME_IMPL, error);
        return;
    }

    runtime = dlsym(impl, PSEL_UCX_RUNTIME_SYMBOL);
    if (runtime == NULL) {
        psel_loader_warn(path, "no " PSEL_UCX_RUNTIME_SYMBOL);
        return;
    }
    if (runtime->version != PSEL_UCX_RUNTIME_VERSION) {
        psel_loader_warn(path, "another version of protosel's UCX runtime; "
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
        psel_loader_warn("cannot find the libucp in use", dlerror());
        return;
    }
    runtime->attach(libucp);
    psel_runtime = runtime;
}

ucs_status_t psel_loader_config_read(const char *env_prefix,
                                     const char *filename,
                                     ucp_config_t **config_p)
{
    ucs_status_t status;

    pthread_once(&psel_loader_once, psel_loader_load);
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

ucs_status_t psel_loader_init_version(unsigned api_major_version,
                                      unsigned api_minor_version,
                                      const ucp_params_t *params,
                                      const ucp_config_t *config,
                                      ucp_context_h *context_p)
{
    pthread_once(&psel_loader_once, psel_loader_load);
    if (psel_next_init_version == NULL) {
        return UCS_ERR_UNSUPPORTED;
    }
    if (psel_runtime != NULL) {
        psel_runtime->context_init();
    }
    return psel_next_init_version(api_major_version, api_minor_version,
                                  params, config, context_p);
}
