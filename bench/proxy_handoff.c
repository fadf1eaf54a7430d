/*
 * proxy_handoff: what handing a request to a CPU proxy thread costs on this
 * host, the CPU part of `psel_info --alltoall --proxy-overhead`.
 *
 * An issuer thread writes requests into a ring of cache-line slots; a
 * proxy thread polls the ring, takes each request and marks it done, as a
 * proxy that would then post it to the network does (the post itself is
 * not counted: it is the lane's o, which the estimate already has).
 *  - pipelined: the issuer keeps the ring full; time per request at the
 *    proxy (what k requests in a row cost);
 *  - round trip: one request at a time, issuer waits for its completion;
 *    half of that is one handoff.
 * The threads run on CPUs 0 and 1 when there are two. Medians of 7 runs.
 * A benchmark: it prints figures and never fails on speed.
 *
 * Usage: proxy_handoff [-n requests]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RING      256
#define REPEATS   7

typedef struct {
    _Alignas(64) volatile uint64_t seq;   /* request number, 0 = empty */
    uint64_t                       payload[7];
} slot_t;

static slot_t ring[RING];
static _Alignas(64) volatile uint64_t done_count;
static uint64_t requests = 1000000;
static volatile int stop;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

static void pin(int cpu)
{
    cpu_set_t set;

    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        return;
    }
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* The proxy: take requests in order, mark each done */
static void *proxy(void *arg)
{
    uint64_t next = 1;
    slot_t *s;

    (void)arg;
    pin(1);
    while (!stop) {
        s = &ring[next % RING];
        if (s->seq != next) {
            continue;
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        s->seq = 0;
        __atomic_store_n(&done_count, next, __ATOMIC_RELEASE);
        ++next;
    }
    return NULL;
}

static void post(uint64_t i)
{
    slot_t *s = &ring[i % RING];

    while (s->seq != 0) {
    }
    s->payload[0] = i;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    s->seq = i;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    double pipelined[REPEATS], roundtrip[REPEATS], t;
    uint64_t i, base = 0;
    pthread_t thread;
    int c, r;

    while ((c = getopt(argc, argv, "n:")) != -1) {
        if (c == 'n') {
            requests = strtoull(optarg, NULL, 10);
        } else {
            fprintf(stderr, "usage: proxy_handoff [-n requests]\n");
            return 2;
        }
    }
    if (requests < 1000) {
        requests = 1000;
    }
    pin(0);
    pthread_create(&thread, NULL, proxy, NULL);
    for (r = 0; r < REPEATS; ++r) {
        t = now();
        for (i = 1; i <= requests; ++i) {
            post(base + i);
        }
        while (__atomic_load_n(&done_count, __ATOMIC_ACQUIRE) <
               base + requests) {
        }
        pipelined[r] = (now() - t) / requests;
        base        += requests;

        t = now();
        for (i = 1; i <= requests / 10; ++i) {
            post(base + i);
            while (__atomic_load_n(&done_count, __ATOMIC_ACQUIRE) <
                   base + i) {
            }
        }
        roundtrip[r] = (now() - t) / (requests / 10);
        base        += requests / 10;
    }
    stop = 1;
    pthread_join(thread, NULL);
    qsort(pipelined, REPEATS, sizeof(double), cmp);
    qsort(roundtrip, REPEATS, sizeof(double), cmp);
    printf("# proxy_handoff: %lu requests x %d runs, threads on CPUs 0 and "
           "1, medians (min)\n", (unsigned long)requests, REPEATS);
    printf("pipelined, per request at the proxy: %8.1f ns (%.1f)\n",
           pipelined[REPEATS / 2] * 1e9, pipelined[0] * 1e9);
    printf("one request, issue to completion:    %8.1f ns (%.1f)\n",
           roundtrip[REPEATS / 2] * 1e9, roundtrip[0] * 1e9);
    return 0;
}
