/*
 * psel_calibrate: measuring one point under a time budget, and the noise
 * of the machine around it (CPU steal and other processes' load on the
 * CPUs this process may use, from /proc). See calibrate.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity() */
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "calibrate.h"

#include <ucs/sys/math.h>

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAL_PF_KTHREAD 0x00200000 /* task flag of a kernel thread */

/* Seconds of CPU time (user + system) process @a pid used, with that of
 * its children it has waited for: a build's compilers come and go between
 * two samples, and are counted in the make that waits for them. 0 if it is
 * a kernel thread (work such as the network stack's for our own traffic)
 * or gone */
static double cal_proc_cpu(int pid, double hz)
{
    unsigned long utime = 0, stime = 0, flags = 0;
    long cutime = 0, cstime = 0;
    char path[64], buf[1024], *p;
    size_t len;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = '\0';
    /* after "pid (comm) ", state is field 3; flags 9; utime and stime 14,
     * 15; cutime and cstime 16, 17 */
    p = strrchr(buf, ')');
    if ((p == NULL) ||
        (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %lu %*u %*u %*u %*u %lu %lu "
                "%ld %ld", &flags, &utime, &stime, &cutime, &cstime) != 5) ||
        (flags & CAL_PF_KTHREAD)) {
        return 0;
    }
    return (utime + stime + ucs_max(cutime, 0) + ucs_max(cstime, 0)) / hz;
}

static int cal_proc_time_cmp(const void *a, const void *b)
{
    int x = ((const cal_proc_time_t*)a)->pid;
    int y = ((const cal_proc_time_t*)b)->pid;

    return (x > y) - (x < y);
}

/* The CPU time of every user process but this one and the local peer */
static void cal_others_sample(const cal_ctx_t *ctx, double hz,
                              cal_cpu_sample_t *sample)
{
    struct dirent *entry;
    char *end;
    long pid;
    DIR *dir;

    sample->num_procs = 0;
    dir = opendir("/proc");
    if (dir == NULL) {
        return;
    }
    while (((entry = readdir(dir)) != NULL) &&
           (sample->num_procs < CAL_MAX_PROCS)) {
        pid = strtol(entry->d_name, &end, 10);
        if ((*end != '\0') || (pid <= 0) || (pid == getpid()) ||
            (pid == ctx->peer)) {
            continue;
        }
        sample->procs[sample->num_procs].pid = (int)pid;
        sample->procs[sample->num_procs].cpu = cal_proc_cpu((int)pid, hz);
        sample->num_procs += (sample->procs[sample->num_procs].cpu > 0);
    }
    closedir(dir);
    qsort(sample->procs, sample->num_procs, sizeof(*sample->procs),
          cal_proc_time_cmp);
}

void cal_cpu_sample(const cal_ctx_t *ctx, cal_cpu_sample_t *sample)
{
    unsigned long long v[8];
    double hz = (double)sysconf(_SC_CLK_TCK);
    char line[512];
    cpu_set_t cpus;
    int cpu, i;
    FILE *f;

    sample->wall      = psel_oob_time();
    sample->total     = 0;
    sample->steal     = 0;
    cal_others_sample(ctx, hz, sample);
    if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) {
        return;
    }
    f = fopen("/proc/stat", "r");
    if (f == NULL) {
        return;
    }
    /* cpuN user nice system idle iowait irq softirq steal ... */
    while (fgets(line, sizeof(line), f) != NULL) {
        memset(v, 0, sizeof(v));
        if ((sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu",
                    &cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                    &v[7]) < 5) ||
            (cpu < 0) || (cpu >= CPU_SETSIZE) || !CPU_ISSET(cpu, &cpus)) {
            continue;
        }
        for (i = 0; i < 8; ++i) {
            sample->total += v[i] / hz;
        }
        sample->steal += v[7] / hz;
    }
    fclose(f);
}

void cal_cpu_delta(const cal_cpu_sample_t *a, const cal_cpu_sample_t *b,
                   double *steal, double *load)
{
    double wall  = b->wall - a->wall;
    double total = b->total - a->total;
    double others = 0;
    unsigned i, j = 0;

    /* what each process used meanwhile; one started since used it all
     * meanwhile; one that ended is not counted */
    for (i = 0; i < b->num_procs; ++i) {
        while ((j < a->num_procs) && (a->procs[j].pid < b->procs[i].pid)) {
            ++j;
        }
        others += b->procs[i].cpu -
                  (((j < a->num_procs) && (a->procs[j].pid == b->procs[i].pid)) ?
                   a->procs[j].cpu : 0);
    }
    *steal = (total > 0) ? ucs_max((b->steal - a->steal) / total, 0) : 0;
    /* CPU time comes in ticks: over a short window one tick of a process
     * would read as a large load */
    *load  = ucs_max(others / ucs_max(wall, CAL_LOAD_MIN_WINDOW), 0);
}

double cal_cpu_spare(const cal_ctx_t *ctx)
{
    unsigned polling = (ctx->peer > 0) ? 2 : 1;
    cpu_set_t cpus;
    int num;

    num = (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) ?
          CPU_COUNT(&cpus) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    return ucs_max((double)num - polling, 0) + CAL_LOAD_SLACK;
}

static int cal_double_cmp(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

ucs_status_t cal_measure(cal_ctx_t *ctx, pt_test_id_t test, size_t size,
                         double hint, double end, cal_point_t *point,
                         cal_point_status_t *result)
{
    const cal_mode_t *mode = ctx->opts.mode;
    uint32_t flags         = (size >= CAL_COLD_MIN) ? PT_FLAG_COLD : 0;
    unsigned factor        = pt_tests[test].pingpong ? 2 : 1;
    uint64_t min_iters     = pt_tests[test].streamed ? CAL_STREAM_MIN : 2;
    double times[CAL_MAX_REPEATS], probe[3], cost, start;
    cal_cpu_sample_t before, after;
    ucs_status_t status;
    unsigned retry;
    uint64_t iters;

    /* put_lat's message says it arrived by its last byte: 1 byte stands
     * for 0 (a crossover's neighbours) */
    size = ucs_max(size, pt_tests[test].min_size);

    /* the probe alone would not fit */
    if ((hint > 0) && (psel_oob_time() + 3 * hint * factor > end)) {
        *result = CAL_POINT_LATE;
        return UCS_OK;
    }

    /* three probes of one message (after one of warm-up) size the phases;
     * the slowest, so that a busy moment does not make them long */
    status = pt_session_measure(&ctx->run, test, size, flags, 1, 3, probe);
    if (status != UCS_OK) {
        return status;
    }
    qsort(probe, 3, sizeof(double), cal_double_cmp);
    iters = (uint64_t)(mode->phase_time / (probe[2] * factor));
    iters = ucs_min(ucs_max(iters, min_iters), CAL_MAX_ITERS);
    /* the phases and their warm-up, each message taking what a probe did */
    cost  = (mode->repeats + 0.25) * iters * probe[2] * factor;
    if (psel_oob_time() + cost > end) {
        *result = CAL_POINT_LATE;
        return UCS_OK;
    }

    for (retry = 0; ; ++retry) {
        start = psel_oob_time();
        cal_cpu_sample(ctx, &before);
        status = pt_session_measure(&ctx->run, test, size, flags, iters,
                                    mode->repeats, times);
        if (status != UCS_OK) {
            return status;
        }
        cal_cpu_sample(ctx, &after);

        qsort(times, mode->repeats, sizeof(double), cal_double_cmp);
        point->time   = times[mode->repeats / 2];
        point->spread = point->time / times[0] - 1;
        cal_cpu_delta(&before, &after, &point->steal, &point->load);
        if (point->spread <= mode->max_spread) {
            *result = CAL_POINT_OK;
            break;
        }
        /* a stall (a descheduled peer, a connection still being set up):
         * measure again while the time allows, going by what this attempt
         * took */
        cost = ucs_max(cost, psel_oob_time() - start);
        if ((retry == CAL_MAX_RETRIES) || (psel_oob_time() + cost > end)) {
            *result = CAL_POINT_NOISY;
            break;
        }
    }
    return UCS_OK;
}
