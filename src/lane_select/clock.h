/**
 * @file clock.h
 * The one monotonic clock of protosel, in seconds: deadlines, keepalive,
 * timed phases and per-iteration timing of the benchmarks. libucs 1.13
 * installs no time API (ucs/time/time.h is internal to UCX), so this is
 * ours, read the way UCX reads its own: the CPU's time-stamp counter where
 * it runs at a constant rate in every state (x86-64 with constant_tsc and
 * nonstop_tsc), scaled by a rate measured once against CLOCK_MONOTONIC;
 * else CLOCK_MONOTONIC itself. A counter read costs about 8 ns here, a
 * clock_gettime() 23 ns: per message that mattered (bench/README.md).
 * Also the body of a timed spin-wait (psel_cpu_relax).
 * Internal: not installed.
 */
#ifndef PSEL_LANE_SELECT_CLOCK_H_
#define PSEL_LANE_SELECT_CLOCK_H_

#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/** Seconds per counter tick, or 0 until measured, or -1: no counter. */
extern double psel_clock_tick_sec;

/** Measure the counter's rate (or decide against it); returns the time. */
double psel_clock_init(void);

/** Seconds since an arbitrary point, from CLOCK_MONOTONIC. */
static inline double psel_clock_monotonic(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

/** Seconds since an arbitrary point (the same one within a process). */
static inline double psel_time_sec(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(psel_clock_tick_sec > 0, 1)) {
        return (double)__rdtsc() * psel_clock_tick_sec;
    }
    if (psel_clock_tick_sec == 0) {
        return psel_clock_init();
    }
#endif
    return psel_clock_monotonic();
}

/** Tell the CPU this thread is spinning (a spin-wait's loop body). */
static inline void psel_cpu_relax(void)
{
#if defined(__x86_64__)
    _mm_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#else
    __asm__ volatile("" ::: "memory");
#endif
}

#endif
