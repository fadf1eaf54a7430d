/*
 * Endpoints created by several threads at once, for libprotosel_ucx.so's
 * thread-safety test: one UCP context (multi-thread), one worker per
 * thread; after a barrier every thread connects to every worker (its own
 * included) and exchanges tagged messages of sizes from eager to
 * rendezvous with each, checking every byte. Protocol selection thus runs
 * in all threads at the same time.
 *
 *   ucp_threads [THREADS]      (default 4, at most 16)
 *
 * Prints "ok THREADS threads, N messages" and exits 0, or says what failed
 * and exits 1. Every wait gives up after 30 s.
 */
#include <ucp/api/ucp.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 16
#define TIMEOUT_S   30.0

static const size_t sizes[] = {8, 300, 4096, 20000, 65536, 1 << 20};
#define NUM_SIZES (sizeof(sizes) / sizeof(sizes[0]))

static ucp_context_h context;
static int nthreads;
static pthread_barrier_t barrier;
static ucp_address_t *addresses[MAX_THREADS];
static size_t address_lengths[MAX_THREADS];
static int errors;
static int done_count;  /* threads whose messages all arrived */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(int thread, const char *what, ucs_status_t status)
{
    pthread_mutex_lock(&lock);
    fprintf(stderr, "ucp_threads: thread %d: %s: %s\n", thread, what,
            ucs_status_string(status));
    ++errors;
    pthread_mutex_unlock(&lock);
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static unsigned char pattern(int from, int to, size_t size, size_t i)
{
    return (unsigned char)(from * 17 + to * 5 + size * 3 + i * 13);
}

/* Progress until every request is done (or the time runs out) */
static int wait_all(ucp_worker_h worker, void **reqs, unsigned count,
                    int thread)
{
    double deadline = now() + TIMEOUT_S;
    ucs_status_t status;
    unsigned i, left;

    do {
        ucp_worker_progress(worker);
        left = 0;
        for (i = 0; i < count; ++i) {
            if (!UCS_PTR_IS_PTR(reqs[i])) {
                continue;
            }
            status = ucp_request_check_status(reqs[i]);
            if (status == UCS_INPROGRESS) {
                ++left;
                continue;
            }
            if (status != UCS_OK) {
                fail(thread, "request", status);
            }
            ucp_request_free(reqs[i]);
            reqs[i] = NULL;
        }
    } while ((left > 0) && (now() < deadline));
    if (left > 0) {
        fail(thread, "requests still pending after 30 s", UCS_ERR_TIMED_OUT);
        return -1;
    }
    return 0;
}

static void *thread_main(void *arg)
{
    int self = (int)(intptr_t)arg, peer, r;
    ucp_worker_params_t wparams = {
        .field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SINGLE
    };
    ucp_request_param_t param   = {.op_attr_mask = 0};
    void *reqs[2 * MAX_THREADS * NUM_SIZES];
    unsigned char *sbuf[MAX_THREADS][NUM_SIZES];
    unsigned char *rbuf[MAX_THREADS][NUM_SIZES];
    ucp_ep_h eps[MAX_THREADS];
    ucp_ep_params_t eparams;
    ucp_worker_h worker;
    ucs_status_t status;
    unsigned nreqs = 0, s;
    size_t i;

    status = ucp_worker_create(context, &wparams, &worker);
    if (status != UCS_OK) {
        fail(self, "ucp_worker_create", status);
        pthread_barrier_wait(&barrier);
        pthread_barrier_wait(&barrier);
        return NULL;
    }
    status = ucp_worker_get_address(worker, &addresses[self],
                                    &address_lengths[self]);
    if (status != UCS_OK) {
        fail(self, "ucp_worker_get_address", status);
    }
    pthread_barrier_wait(&barrier);

    /* every thread connects to every worker at the same time */
    for (peer = 0; peer < nthreads; ++peer) {
        eparams.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        eparams.address    = addresses[peer];
        status = ucp_ep_create(worker, &eparams, &eps[peer]);
        if (status != UCS_OK) {
            fail(self, "ucp_ep_create", status);
            eps[peer] = NULL;
        }
    }

    for (peer = 0; peer < nthreads; ++peer) {
        for (s = 0; s < NUM_SIZES; ++s) {
            rbuf[peer][s] = malloc(sizes[s]);
            sbuf[peer][s] = malloc(sizes[s]);
            for (i = 0; i < sizes[s]; ++i) {
                sbuf[peer][s][i] = pattern(self, peer, sizes[s], i);
            }
            /* tag: sender, size index */
            reqs[nreqs++] = ucp_tag_recv_nbx(worker, rbuf[peer][s], sizes[s],
                                             ((uint64_t)peer << 8) | s,
                                             (uint64_t)-1, &param);
            reqs[nreqs++] = (eps[peer] == NULL) ? NULL :
                            ucp_tag_send_nbx(eps[peer], sbuf[peer][s],
                                             sizes[s],
                                             ((uint64_t)self << 8) | s,
                                             &param);
        }
    }
    for (r = 0; r < (int)nreqs; ++r) {
        if (UCS_PTR_IS_ERR(reqs[r])) {
            fail(self, "post", UCS_PTR_STATUS(reqs[r]));
            reqs[r] = NULL;
        }
    }
    wait_all(worker, reqs, nreqs, self);

    for (peer = 0; peer < nthreads; ++peer) {
        for (s = 0; s < NUM_SIZES; ++s) {
            for (i = 0; i < sizes[s]; ++i) {
                if (rbuf[peer][s][i] != pattern(peer, self, sizes[s], i)) {
                    fail(self, "wrong byte received", UCS_ERR_IO_ERROR);
                    break;
                }
            }
        }
    }

    /* keep progressing until every thread is done with its messages: a
     * peer's rendezvous may still need this worker */
    __atomic_add_fetch(&done_count, 1, __ATOMIC_SEQ_CST);
    {
        double deadline = now() + TIMEOUT_S;
        while ((__atomic_load_n(&done_count, __ATOMIC_SEQ_CST) < nthreads) &&
               (now() < deadline)) {
            ucp_worker_progress(worker);
        }
    }
    for (peer = 0, nreqs = 0; peer < nthreads; ++peer) {
        if (eps[peer] != NULL) {
            reqs[nreqs++] = ucp_ep_close_nb(eps[peer], UCP_EP_CLOSE_MODE_FORCE);
        }
    }
    wait_all(worker, reqs, nreqs, self);
    for (peer = 0; peer < nthreads; ++peer) {
        for (s = 0; s < NUM_SIZES; ++s) {
            free(rbuf[peer][s]);
            free(sbuf[peer][s]);
        }
    }
    return worker;
}

int main(int argc, char **argv)
{
    ucp_params_t params = {
        .field_mask        = UCP_PARAM_FIELD_FEATURES |
                             UCP_PARAM_FIELD_MT_WORKERS_SHARED,
        .features          = UCP_FEATURE_TAG,
        .mt_workers_shared = 1
    };
    pthread_t threads[MAX_THREADS];
    void *workers[MAX_THREADS];
    ucs_status_t status;
    int t;

    nthreads = (argc > 1) ? atoi(argv[1]) : 4;
    if ((nthreads < 1) || (nthreads > MAX_THREADS)) {
        fprintf(stderr, "ucp_threads: THREADS must be 1..%d\n", MAX_THREADS);
        return 1;
    }
    status = ucp_init(&params, NULL, &context);
    if (status != UCS_OK) {
        fprintf(stderr, "ucp_threads: ucp_init: %s\n",
                ucs_status_string(status));
        return 1;
    }
    pthread_barrier_init(&barrier, NULL, nthreads);
    for (t = 0; t < nthreads; ++t) {
        pthread_create(&threads[t], NULL, thread_main, (void*)(intptr_t)t);
    }
    for (t = 0; t < nthreads; ++t) {
        pthread_join(threads[t], &workers[t]);
    }
    for (t = 0; t < nthreads; ++t) {
        if (workers[t] != NULL) {
            ucp_worker_release_address(workers[t], addresses[t]);
            ucp_worker_destroy(workers[t]);
        }
    }
    pthread_barrier_destroy(&barrier);
    ucp_cleanup(context);
    if (errors > 0) {
        return 1;
    }
    printf("ok %d threads, %zu messages\n", nthreads,
           (size_t)nthreads * nthreads * NUM_SIZES);
    return 0;
}
