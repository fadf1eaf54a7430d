/*
 * The counter behind psel_time_sec() (clock.h): its rate, measured once
 * against CLOCK_MONOTONIC.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "clock.h"

#include <stdio.h>
#include <string.h>

#define PSEL_CLOCK_MEASURE_SEC  0.01  /* span of the rate measurement */
#define PSEL_CLOCK_TRIES        16    /* reads per end, the tightest kept */

double psel_clock_tick_sec = 0;

#if defined(__x86_64__)
/* Does /proc/cpuinfo say the counter runs at one rate in every state? */
static int psel_clock_tsc_is_invariant(void)
{
    char line[4096];
    int constant = 0, nonstop = 0;
    FILE *f;

    f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) {
        return 0;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if (!strncmp(line, "flags", 5)) {
            constant = (strstr(line, " constant_tsc") != NULL);
            nonstop  = (strstr(line, " nonstop_tsc") != NULL);
            break;
        }
    }
    fclose(f);
    return constant && nonstop;
}

/* A (counter, monotonic time) pair read as close together as we can: of
 * several tries, the one whose counter reads bracket the clock tightest
 * (a preemption between the two reads would skew the rate). */
static void psel_clock_pair(unsigned long long *tsc_p, double *sec_p)
{
    unsigned long long before, after, best = ~0ull;
    double sec;
    unsigned i;

    for (i = 0; i < PSEL_CLOCK_TRIES; ++i) {
        before = __rdtsc();
        sec    = psel_clock_monotonic();
        after  = __rdtsc();
        if (after - before < best) {
            best   = after - before;
            *tsc_p = before + (after - before) / 2;
            *sec_p = sec;
        }
    }
}
#endif

double psel_clock_init(void)
{
#if defined(__x86_64__)
    unsigned long long tsc0, tsc1;
    double sec0, sec1;

    if (!psel_clock_tsc_is_invariant()) {
        psel_clock_tick_sec = -1;
        return psel_clock_monotonic();
    }
    psel_clock_pair(&tsc0, &sec0);
    do {
        psel_clock_pair(&tsc1, &sec1);
    } while (sec1 - sec0 < PSEL_CLOCK_MEASURE_SEC);
    psel_clock_tick_sec = (tsc1 > tsc0) ? (sec1 - sec0) / (tsc1 - tsc0) : -1;
    return psel_time_sec();
#else
    psel_clock_tick_sec = -1;
    return psel_clock_monotonic();
#endif
}
