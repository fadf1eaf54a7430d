/*
 * psel_info --alltoall P [--size n] [--proxy-overhead T] [--plot FILE]:
 * LogGP parameters of the selected protocols (src/scale/loggp.h) and the
 * estimated time of an alltoall, issued directly or through a CPU proxy.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "psel_info.h"

#include <scale/loggp.h>
#include <ucs/sys/math.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define PSEL_INFO_A2A_TOL       0.1           /* "within 10 %" */
#define PSEL_INFO_A2A_MAX_SIZE  (64ul << 20)  /* table and plot end */

static void a2a_print_params(FILE *stream, const psel_select_table_t *table,
                             const psel_lane_sets_t *sets)
{
    const psel_proto_caps_t *caps;
    size_t start, end, piece;
    char sizes[64];
    psel_loggp_t p;
    unsigned row;

    fprintf(stream, "# %-18s %-11s %-26s %8s %8s %8s %10s %10s\n", "sizes",
            "protocol", "lanes", "L [us]", "o [us]", "g [us]", "G [ns/KB]",
            "G1 [ns/KB]");
    for (row = 0; row < table->count; ++row) {
        start = (row == 0) ? 0 : (table->elems[row - 1].max_length + 1);
        end   = table->elems[row].max_length;
        caps  = &table->caps[table->elems[row].proto_index];
        /* one line per range of the protocol in the row: g and G are the
         * stage that paces the stream there */
        for (;; start = piece + 1) {
            piece = ucs_min(psel_proto_caps_range(caps, start)->max_length,
                            end);
            p     = psel_loggp_at(table, sets, start, NULL);
            if (piece == SIZE_MAX) {
                snprintf(sizes, sizeof(sizes), "%zu..inf", start);
            } else {
                snprintf(sizes, sizeof(sizes), "%zu..%zu", start, piece);
            }
            fprintf(stream, "# %-18s %-11s %-26.26s %8.3f %8.3f %8.3f %10.2f "
                    "%10.2f\n", sizes, table->elems[row].proto->name,
                    caps->lanes, p.L * 1e6, p.o * 1e6, p.g * 1e6,
                    p.G * 1e9 * 1024, p.G1 * 1e9 * 1024);
            if (piece >= end) {
                break;
            }
        }
    }
}

static void a2a_print_row(FILE *stream, const psel_select_table_t *table,
                          const psel_lane_sets_t *sets, unsigned procs,
                          size_t n, double o_proxy)
{
    unsigned row;
    psel_loggp_t p = psel_loggp_at(table, sets, n, &row);
    double direct  = psel_alltoall_direct(&p, procs, n);
    double proxy   = psel_alltoall_proxy(&p, procs, n, o_proxy);

    fprintf(stream, "%12zu %14.0f %14.3f %14.3f %8.3f  %s\n", n,
            (double)(procs - 1) * (double)n, direct * 1e6, proxy * 1e6,
            (direct > 0) ? proxy / direct : 1.0,
            table->elems[row].proto->name);
}

static int a2a_plot(const char *path, const char *keep_dir,
                    const psel_select_table_t *table,
                    const psel_lane_sets_t *sets, unsigned procs,
                    double o_proxy, size_t converge)
{
    char data[PATH_MAX], title[256];
    psel_info_gnuplot_t plot;
    psel_loggp_t p;
    double n;
    FILE *f;

    if (psel_info_gnuplot_open(&plot, path, keep_dir) != 0) {
        return 1;
    }
    snprintf(data, sizeof(data), "%s/alltoall.dat", plot.dir);
    if ((f = psel_info_gnuplot_data_open(data)) == NULL) {
        return psel_info_gnuplot_finish(&plot, 0);
    }
    for (n = 1; n <= (double)PSEL_INFO_A2A_MAX_SIZE; n *= 1.1) {
        p = psel_loggp_at(table, sets, (size_t)n, NULL);
        fprintf(f, "%zu %.6g %.6g\n", (size_t)n,
                psel_alltoall_direct(&p, procs, (size_t)n) * 1e6,
                psel_alltoall_proxy(&p, procs, (size_t)n, o_proxy) * 1e6);
    }
    if (psel_info_gnuplot_data_close(f, data) != 0) {
        return psel_info_gnuplot_finish(&plot, 0);
    }
    psel_info_gnuplot_terminal(plot.script, path, plot.png, 650);
    snprintf(title, sizeof(title), "alltoall among %u processes: LogGP "
             "estimate, direct issue vs a CPU proxy (%.3g us per request)",
             procs, o_proxy * 1e6);
    fputs("set logscale xy\nset grid\nset key top left\n"
          "set xlabel 'bytes per peer n'\nset ylabel 'alltoall time [us]'\n"
          "set title ", plot.script);
    psel_info_gnuplot_string(plot.script, title);
    fputs("\n", plot.script);
    if (converge != SIZE_MAX) {
        fprintf(plot.script, "set arrow from %zu, graph 0 to %zu, graph 1 "
                "nohead dt 3 lc rgb '#404040'\nset label 'within 10%%: %zu B' "
                "at %zu, graph 0.5 rotate by 90 left offset -0.8,0 "
                "tc rgb '#404040'\n", converge, converge, converge, converge);
    }
    fputs("plot ", plot.script);
    psel_info_gnuplot_string(plot.script, data);
    fputs(" using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'direct issue', "
          "\\\n     ", plot.script);
    psel_info_gnuplot_string(plot.script, data);
    fputs(" using 1:3 with lines lw 2 lc rgb '#d62728' title 'CPU proxy'\n",
          plot.script);
    return psel_info_gnuplot_finish(&plot, 1);
}

int psel_info_alltoall(FILE *stream, const psel_info_ep_ctx_t *ctx,
                       const psel_info_scale_opts_t *opts,
                       const char *plot_path, const char *keep_dir)
{
    const psel_select_table_t *table = ctx->tables[0].table;
    const psel_lane_sets_t *sets     = &ctx->ep->lanes.sets;
    unsigned procs                   = opts->alltoall;
    double o_proxy                   = opts->proxy_overhead;
    size_t converge, n;
    unsigned row = 0;

    fprintf(stream, "#\n# alltoall among %u processes (k = %u peers each, "
            "lanes selected for %zu endpoints), LogGP from the\n# selected "
            "cost lines (%s); o from the lanes' attributes\n", procs,
            procs - 1, ctx->ep->lanes.num_eps,
            (ctx->calib != NULL) ? "measured where calibrated" :
            "transports' attributes");
    a2a_print_params(stream, table, sets);
    fprintf(stream, "#\n# T_direct = L + 2o + n G1 + (k-1)(g + n G),  M = "
            "k n;  T_proxy = T_direct + k o_proxy,  o_proxy = %.3g us "
            "(--proxy-overhead)\n#\n", o_proxy * 1e6);
    fprintf(stream, "#%11s %14s %14s %14s %8s  %s\n", "n [B]", "M [B]",
            "direct [us]", "proxy [us]", "ratio", "protocol");
    if (opts->size_given) {
        a2a_print_row(stream, table, sets, procs, opts->size, o_proxy);
    } else {
        for (n = 1; n <= PSEL_INFO_A2A_MAX_SIZE; n *= 4) {
            a2a_print_row(stream, table, sets, procs, n, o_proxy);
        }
    }
    converge = psel_alltoall_converge_table(table, sets, procs, o_proxy,
                                            PSEL_INFO_A2A_TOL, &row);
    if (converge == SIZE_MAX) {
        fprintf(stream, "# the proxy stays more than 10%% slower at every "
                "size\n");
    } else {
        fprintf(stream, "# the proxy comes within 10%% of direct issue from "
                "%zu B per peer (%s)\n", converge,
                table->elems[row].proto->name);
    }
    fprintf(stream, "#\n");
    if ((plot_path != NULL) &&
        (a2a_plot(plot_path, keep_dir, table, sets, procs, o_proxy,
                  converge) != 0)) {
        return 1;
    }
    return 0;
}
