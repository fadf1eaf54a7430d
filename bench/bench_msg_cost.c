/*
 * The data path's own cost per small message, protosel against UCP, in one
 * process and on one CPU: two workers over shared memory, and per message
 * post a receive, send 8 bytes (eager short), progress until the receive
 * completes, free both requests. No second CPU, no cache line crossing
 * cores, no peer to wait for: what is left is software (the send call, the
 * AM handler, tag matching, completion, request pools), which is what
 * `perf record` of a ping-pong cannot separate from polling.
 *
 *   bench/bench_msg_cost [-n MESSAGES] [-r ROUNDS] [-s SIZE]
 *
 * Rounds alternate protosel and UCP; each prints ns per message, and the
 * minimum and median of the rounds end the output (the minimum is the
 * steadiest figure on a busy machine). A benchmark: it never fails on speed.
 * Both use posix, sysv and cma (UCX_PSEL_TLS and UCX_TLS are set).
 */
#include <core/psel_core.h>
#include <lane_select/clock.h>

#include <ucp/api/ucp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MC_ROUNDS_MAX 64

static void mc_die(const char *what)
{
    fprintf(stderr, "bench_msg_cost: %s\n", what);
    exit(1);
}

/* ---- protosel ---- */

typedef struct {
    psel_context_h context;
    psel_worker_h  sender, receiver;
    psel_ep_h      ep;
} mc_psel_t;

static void mc_psel_open(mc_psel_t *p)
{
    void *address;
    size_t len;

    if ((psel_context_create(&p->context) != UCS_OK) ||
        (psel_worker_create(p->context, &p->sender) != UCS_OK) ||
        (psel_worker_create(p->context, &p->receiver) != UCS_OK) ||
        (psel_worker_get_address(p->receiver, &address, &len) != UCS_OK) ||
        (psel_ep_create(p->sender, address, len, &p->ep) != UCS_OK)) {
        mc_die("protosel setup failed");
    }
    free(address);
}

static double mc_psel_round(mc_psel_t *p, unsigned n, size_t size, char *sbuf,
                            char *rbuf)
{
    psel_request_t *rreq, *sreq;
    double start = psel_time_sec();
    unsigned i;

    for (i = 0; i < n; ++i) {
        rreq = psel_tag_recv_nb(p->receiver, rbuf, size, 5, UINT64_MAX, NULL,
                                NULL);
        sreq = psel_tag_send_nb(p->ep, sbuf, size, 5, NULL, NULL);
        while (psel_request_test(rreq, NULL) == UCS_INPROGRESS) {
            psel_worker_progress(p->receiver);
        }
        while (psel_request_test(sreq, NULL) == UCS_INPROGRESS) {
            psel_worker_progress(p->sender);
        }
        psel_request_free(rreq);
        psel_request_free(sreq);
    }
    return (psel_time_sec() - start) / n;
}

/* ---- UCP ---- */

typedef struct {
    ucp_context_h context;
    ucp_worker_h  sender, receiver;
    ucp_ep_h      ep;
} mc_ucp_t;

static void mc_ucp_recv_cb(void *request, ucs_status_t status,
                           const ucp_tag_recv_info_t *info, void *arg)
{
}

static void mc_ucp_open(mc_ucp_t *u)
{
    ucp_params_t params           = {0};
    ucp_worker_params_t wparams   = {0};
    ucp_ep_params_t eparams       = {0};
    ucp_config_t *config;
    ucp_address_t *address;
    size_t len;

    params.field_mask   = UCP_PARAM_FIELD_FEATURES;
    params.features     = UCP_FEATURE_TAG;
    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    if ((ucp_config_read(NULL, NULL, &config) != UCS_OK) ||
        (ucp_init(&params, config, &u->context) != UCS_OK) ||
        (ucp_worker_create(u->context, &wparams, &u->sender) != UCS_OK) ||
        (ucp_worker_create(u->context, &wparams, &u->receiver) != UCS_OK) ||
        (ucp_worker_get_address(u->receiver, &address, &len) != UCS_OK)) {
        mc_die("UCP setup failed");
    }
    ucp_config_release(config);
    eparams.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    eparams.address    = address;
    if (ucp_ep_create(u->sender, &eparams, &u->ep) != UCS_OK) {
        mc_die("UCP endpoint failed");
    }
    ucp_worker_release_address(u->receiver, address);
}

static void mc_ucp_wait(ucp_worker_h worker, void *req)
{
    if (!UCS_PTR_IS_PTR(req)) {
        return;
    }
    while (ucp_request_check_status(req) == UCS_INPROGRESS) {
        ucp_worker_progress(worker);
    }
    ucp_request_free(req);
}

static double mc_ucp_round(mc_ucp_t *u, unsigned n, size_t size, char *sbuf,
                           char *rbuf)
{
    ucp_request_param_t rparam = {0}, sparam = {0};
    double start = psel_time_sec();
    void *rreq, *sreq;
    unsigned i;

    rparam.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK;
    rparam.cb.recv      = mc_ucp_recv_cb;
    for (i = 0; i < n; ++i) {
        rreq = ucp_tag_recv_nbx(u->receiver, rbuf, size, 5, UINT64_MAX,
                                &rparam);
        sreq = ucp_tag_send_nbx(u->ep, sbuf, size, 5, &sparam);
        mc_ucp_wait(u->receiver, rreq);
        mc_ucp_wait(u->sender, sreq);
    }
    return (psel_time_sec() - start) / n;
}

static int mc_cmp(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

static void mc_summary(const char *name, double *t, unsigned rounds)
{
    qsort(t, rounds, sizeof(*t), mc_cmp);
    printf("%-8s min %6.1f ns  median %6.1f ns per message\n", name,
           t[0] * 1e9, t[rounds / 2] * 1e9);
}

int main(int argc, char **argv)
{
    double tp[MC_ROUNDS_MAX], tu[MC_ROUNDS_MAX];
    unsigned n = 1000000, rounds = 9, r;
    size_t size = 8;
    char sbuf[256] = {1}, rbuf[256];
    mc_psel_t psel;
    mc_ucp_t ucp;
    int c;

    while ((c = getopt(argc, argv, "n:r:s:")) != -1) {
        switch (c) {
        case 'n': n = strtoul(optarg, NULL, 0); break;
        case 'r': rounds = strtoul(optarg, NULL, 0); break;
        case 's': size = strtoul(optarg, NULL, 0); break;
        default:
            fprintf(stderr, "usage: %s [-n MESSAGES] [-r ROUNDS] [-s SIZE]\n",
                    argv[0]);
            return 2;
        }
    }
    if ((n == 0) || (rounds == 0) || (rounds > MC_ROUNDS_MAX) ||
        (size > sizeof(sbuf))) {
        mc_die("-n and -r must be positive, -r at most 64, -s at most 256");
    }
    setenv("UCX_PSEL_TLS", "posix,sysv,cma", 1);
    setenv("UCX_PSEL_CALIBRATION", "none", 1);
    setenv("UCX_TLS", "posix,sysv,cma", 1);
    mc_psel_open(&psel);
    mc_ucp_open(&ucp);
    mc_psel_round(&psel, n / 10, size, sbuf, rbuf); /* warm up */
    mc_ucp_round(&ucp, n / 10, size, sbuf, rbuf);
    printf("# %u messages of %zu bytes per round, rounds alternate\n", n,
           size);
    for (r = 0; r < rounds; ++r) {
        tp[r] = mc_psel_round(&psel, n, size, sbuf, rbuf);
        tu[r] = mc_ucp_round(&ucp, n, size, sbuf, rbuf);
        printf("round %u: protosel %6.1f ns, UCP %6.1f ns\n", r, tp[r] * 1e9,
               tu[r] * 1e9);
    }
    mc_summary("protosel", tp, rounds);
    mc_summary("UCP", tu, rounds);
    return 0;
}
