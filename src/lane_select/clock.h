/**
 * @file clock.h
 * The one monotonic clock of protosel, in seconds: deadlines, keepalive,
 * timed phases. (libucs 1.13 installs no time API: ucs/time/time.h is
 * internal to UCX.) Internal: not installed.
 */
#ifndef PSEL_LANE_SELECT_CLOCK_H_
#define PSEL_LANE_SELECT_CLOCK_H_

#include <time.h>

/** Seconds since an arbitrary point, from CLOCK_MONOTONIC. */
static inline double psel_time_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + (ts.tv_nsec * 1e-9);
}

#endif
