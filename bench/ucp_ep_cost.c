/*
 * ucp_ep_cost: what a new endpoint configuration costs in stock UCP, for
 * bench/ucx_runtime.sh to compare with and without libprotosel_ucx.so.
 *
 *   ucp_ep_cost [WORKERS]      (default 8, at most 64)
 *
 * Creates a UCP context (tag feature), then, one after the other, WORKERS
 * workers, each with an endpoint to itself. Each worker has its own
 * endpoint configurations, so UCP selects protocols again for each: the
 * time of ucp_ep_create() plus ucp_ep_print_info() (to /dev/null), which
 * builds the endpoint's tag-send tables as `ucx_info -e` does (protocols v2:
 * every protocol's init, the rendezvous ones recursively), is that cost.
 * Prints, in microseconds:
 *   context_us X            ucp_init()
 *   first_ep_config_us X    the first worker's
 *   next_ep_config_us X     the median of the others
 *   first_ep_config_minflt X  page faults (minor) of the first worker's:
 *                           first touches of code and data
 * A benchmark helper, not a test: it never judges the figures.
 */
#include <ucp/api/ucp.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_WORKERS 64

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static long minflt(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES,
        .features   = UCP_FEATURE_TAG
    };
    ucp_worker_params_t wparams = {
        .field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SINGLE
    };
    double t0, cost[MAX_WORKERS];
    ucp_ep_params_t eparams;
    ucp_address_t *address;
    ucp_context_h context;
    ucp_worker_h worker;
    size_t address_length;
    ucs_status_t status;
    ucp_ep_h ep;
    void *req;
    long faults0, faults = 0;
    FILE *null;
    int i, n;

    n = (argc > 1) ? atoi(argv[1]) : 8;
    if ((n < 1) || (n > MAX_WORKERS)) {
        fprintf(stderr, "ucp_ep_cost: WORKERS must be 1..%d\n", MAX_WORKERS);
        return 1;
    }
    null = fopen("/dev/null", "w");
    if (null == NULL) {
        perror("ucp_ep_cost: /dev/null");
        return 1;
    }

    t0     = now_us();
    status = ucp_init(&params, NULL, &context);
    if (status != UCS_OK) {
        fprintf(stderr, "ucp_ep_cost: ucp_init: %s\n",
                ucs_status_string(status));
        return 1;
    }
    printf("context_us %.1f\n", now_us() - t0);

    for (i = 0; i < n; ++i) {
        status = ucp_worker_create(context, &wparams, &worker);
        if (status == UCS_OK) {
            status = ucp_worker_get_address(worker, &address, &address_length);
        }
        if (status != UCS_OK) {
            fprintf(stderr, "ucp_ep_cost: worker %d: %s\n", i,
                    ucs_status_string(status));
            return 1;
        }
        eparams.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        eparams.address    = address;

        faults0 = minflt();
        t0      = now_us();
        status  = ucp_ep_create(worker, &eparams, &ep);
        if (status != UCS_OK) {
            fprintf(stderr, "ucp_ep_cost: ucp_ep_create: %s\n",
                    ucs_status_string(status));
            return 1;
        }
        ucp_ep_print_info(ep, null);
        cost[i] = now_us() - t0;
        if (i == 0) {
            faults = minflt() - faults0;
        }

        req = ucp_ep_close_nb(ep, UCP_EP_CLOSE_MODE_FORCE);
        while (UCS_PTR_IS_PTR(req) &&
               (ucp_request_check_status(req) == UCS_INPROGRESS)) {
            ucp_worker_progress(worker);
        }
        if (UCS_PTR_IS_PTR(req)) {
            ucp_request_free(req);
        }
        ucp_worker_release_address(worker, address);
        ucp_worker_destroy(worker);
    }

    printf("first_ep_config_us %.1f\n", cost[0]);
    printf("first_ep_config_minflt %ld\n", faults);
    if (n > 1) {
        qsort(cost + 1, n - 1, sizeof(cost[0]), cmp_double);
        printf("next_ep_config_us %.1f\n",
               ((n - 1) % 2) ? cost[1 + (n - 1) / 2] :
                               (cost[(n - 1) / 2] + cost[(n + 1) / 2]) / 2);
    }
    ucp_cleanup(context);
    fclose(null);
    return 0;
}
