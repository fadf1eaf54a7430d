/*
 * UCP opened RTLD_LOCAL, as a plugin loader does (Open MPI's pml ucx is a
 * dlopen()ed component linked against libucp): libprotosel_ucx.so's test
 * that its impl loads and acts there (test_ucx_runtime_safe.sh). The
 * program is not linked against UCX: it dlopen()s libucp.so.0 RTLD_LOCAL,
 * checks that UCP is not in the global scope, then sends 8 B, 64 KiB and
 * 1 MiB tagged messages to its own worker (selecting eager and rendezvous
 * protocols) and checks every byte.
 *
 * Prints "ok libucp RTLD_LOCAL, 3 messages" and exits 0, or says what
 * failed and exits 1. Every wait gives up after 30 s.
 */
#define _GNU_SOURCE  /* RTLD_DEFAULT */
#include <ucp/api/ucp.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct {
    ucs_status_t (*init_version)(unsigned, unsigned, const ucp_params_t*,
                                 const ucp_config_t*, ucp_context_h*);
    void (*cleanup)(ucp_context_h);
    ucs_status_t (*worker_create)(ucp_context_h, const ucp_worker_params_t*,
                                  ucp_worker_h*);
    void (*worker_destroy)(ucp_worker_h);
    ucs_status_t (*worker_get_address)(ucp_worker_h, ucp_address_t**,
                                       size_t*);
    void (*worker_release_address)(ucp_worker_h, ucp_address_t*);
    unsigned (*worker_progress)(ucp_worker_h);
    ucs_status_t (*ep_create)(ucp_worker_h, const ucp_ep_params_t*,
                              ucp_ep_h*);
    ucs_status_ptr_t (*ep_close_nb)(ucp_ep_h, unsigned);
    ucs_status_ptr_t (*tag_send_nbx)(ucp_ep_h, const void*, size_t, ucp_tag_t,
                                     const ucp_request_param_t*);
    ucs_status_ptr_t (*tag_recv_nbx)(ucp_worker_h, void*, size_t, ucp_tag_t,
                                     ucp_tag_t, const ucp_request_param_t*);
    ucs_status_t (*request_check_status)(void*);
    void (*request_free)(void*);
} ucp;

static void *sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);

    if (p == NULL) {
        fprintf(stderr, "ucp_local: libucp.so.0 has no %s\n", name);
        exit(1);
    }
    return p;
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Progress until the request is done; 0 if it completed well */
static int wait_req(ucp_worker_h worker, void *req)
{
    double deadline = now() + 30.0;
    ucs_status_t status;

    if (UCS_PTR_IS_ERR(req)) {
        return -1;
    }
    if (req == NULL) {
        return 0;
    }
    do {
        ucp.worker_progress(worker);
        status = ucp.request_check_status(req);
    } while ((status == UCS_INPROGRESS) && (now() < deadline));
    if (status == UCS_INPROGRESS) {
        return -1; /* left to the process exit */
    }
    ucp.request_free(req);
    return (status == UCS_OK) ? 0 : -1;
}

int main(void)
{
    static const size_t sizes[] = {8, 65536, 1 << 20};
    ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                           .features   = UCP_FEATURE_TAG};
    ucp_worker_params_t wparams = {.field_mask = 0};
    ucp_request_param_t rparam  = {.op_attr_mask = 0};
    ucp_ep_params_t eparams;
    ucp_address_t *address;
    ucp_context_h context;
    ucp_worker_h worker;
    size_t address_length, i;
    unsigned char *sbuf, *rbuf;
    void *lib, *sreq, *rreq;
    ucp_ep_h ep;
    unsigned s;

    lib = dlopen("libucp.so.0", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "ucp_local: %s\n", dlerror());
        return 1;
    }
    if (dlsym(RTLD_DEFAULT, "ucp_worker_create") != NULL) {
        fprintf(stderr, "ucp_local: UCP is in the global scope\n");
        return 1;
    }
    ucp.init_version           = sym(lib, "ucp_init_version");
    ucp.cleanup                = sym(lib, "ucp_cleanup");
    ucp.worker_create          = sym(lib, "ucp_worker_create");
    ucp.worker_destroy         = sym(lib, "ucp_worker_destroy");
    ucp.worker_get_address     = sym(lib, "ucp_worker_get_address");
    ucp.worker_release_address = sym(lib, "ucp_worker_release_address");
    ucp.worker_progress        = sym(lib, "ucp_worker_progress");
    ucp.ep_create              = sym(lib, "ucp_ep_create");
    ucp.ep_close_nb            = sym(lib, "ucp_ep_close_nb");
    ucp.tag_send_nbx           = sym(lib, "ucp_tag_send_nbx");
    ucp.tag_recv_nbx           = sym(lib, "ucp_tag_recv_nbx");
    ucp.request_check_status   = sym(lib, "ucp_request_check_status");
    ucp.request_free           = sym(lib, "ucp_request_free");

    /* no configuration given: UCP reads its own (ucp_config_read) */
    if ((ucp.init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, NULL,
                          &context) != UCS_OK) ||
        (ucp.worker_create(context, &wparams, &worker) != UCS_OK) ||
        (ucp.worker_get_address(worker, &address, &address_length) !=
         UCS_OK)) {
        fprintf(stderr, "ucp_local: cannot set UCP up\n");
        return 1;
    }
    eparams.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    eparams.address    = address;
    if (ucp.ep_create(worker, &eparams, &ep) != UCS_OK) {
        fprintf(stderr, "ucp_local: cannot connect to itself\n");
        return 1;
    }

    for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
        sbuf = malloc(sizes[s]);
        rbuf = calloc(1, sizes[s]);
        if ((sbuf == NULL) || (rbuf == NULL)) {
            return 1;
        }
        for (i = 0; i < sizes[s]; ++i) {
            sbuf[i] = (unsigned char)(i * 7 + s);
        }
        rreq = ucp.tag_recv_nbx(worker, rbuf, sizes[s], s, (ucp_tag_t)-1,
                                &rparam);
        sreq = ucp.tag_send_nbx(ep, sbuf, sizes[s], s, &rparam);
        if ((wait_req(worker, sreq) != 0) || (wait_req(worker, rreq) != 0) ||
            memcmp(sbuf, rbuf, sizes[s])) {
            fprintf(stderr, "ucp_local: the %zu B message failed\n", sizes[s]);
            return 1;
        }
        free(sbuf);
        free(rbuf);
    }

    wait_req(worker, ucp.ep_close_nb(ep, UCP_EP_CLOSE_MODE_FORCE));
    ucp.worker_release_address(worker, address);
    ucp.worker_destroy(worker);
    ucp.cleanup(context);
    printf("ok libucp RTLD_LOCAL, %zu messages\n",
           sizeof(sizes) / sizeof(sizes[0]));
    return 0;
}
