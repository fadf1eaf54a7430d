/*
 * psel_info --plot: every candidate's cost lines, the calibration's measured
 * points and the selected envelope, drawn by gnuplot on log-log axes. The
 * data files and the script go to a directory (temporary unless
 * --plot-keep), gnuplot runs bounded in time.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "psel_info.h"

#include <ucs/sys/math.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PSEL_PLOT_MIN_SIZE     1ul
#define PSEL_PLOT_MAX_SIZE     (16ul << 20)
#define PSEL_PLOT_PER_DECADE   24       /* samples of a line per decade */
#define PSEL_PLOT_TIMEOUT      60       /* seconds gnuplot may take */

/* one colour per protocol of the built-in list, by index */
static const char *psel_plot_colors[] = {
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
    "#8c564b", "#e377c2"
};

typedef psel_info_gnuplot_t psel_plot_t;


/* gnuplot single-quoted string: '' stands for ' */
void psel_info_gnuplot_string(FILE *stream, const char *str)
{
    fputc('\'', stream);
    for (; *str != '\0'; ++str) {
        fputs((*str == '\'') ? "''" : (char[2]){*str, '\0'}, stream);
    }
    fputc('\'', stream);
}

static double caps_cost(const psel_proto_caps_t *caps, psel_perf_type_t type,
                        size_t x)
{
    return ucs_linear_func_apply(psel_proto_caps_range(caps, x)->perf[type],
                                 (double)x);
}

static size_t row_start(const psel_select_table_t *table, unsigned row)
{
    return (row == 0) ? 0 : (table->elems[row - 1].max_length + 1);
}

/* "<dir>/p0-egr_short-attributes.dat" */
static void data_path(const psel_plot_t *plot, unsigned panel,
                      const char *proto, const char *what, char *path,
                      size_t max)
{
    char name[128], *p;

    snprintf(name, sizeof(name), "p%u-%s-%s.dat", panel,
             (proto != NULL) ? proto : "table", what);
    for (p = name; *p != '\0'; ++p) {
        *p = (*p == '/') ? '_' : *p;
    }
    snprintf(path, max, "%s/%s", plot->dir, name);
}

FILE *psel_info_gnuplot_data_open(const char *path)
{
    FILE *f = fopen(path, "w");

    if (f == NULL) {
        fprintf(stderr, "psel_info: cannot write %s: %m\n", path);
    }
    return f;
}

int psel_info_gnuplot_data_close(FILE *f, const char *path)
{
    if (fclose(f) != 0) {
        fprintf(stderr, "psel_info: cannot write %s: %m\n", path);
        return 1;
    }
    return 0;
}

/* A line on [start, end]: both ends and the sizes of a log grid between */
static void sample_line(FILE *f, const psel_proto_caps_t *caps,
                        psel_perf_type_t type, size_t start, size_t end)
{
    double step = pow(10.0, 1.0 / PSEL_PLOT_PER_DECADE);
    double grid;
    size_t x;

    start = ucs_max(start, PSEL_PLOT_MIN_SIZE);
    fprintf(f, "%zu %.6g\n", start, caps_cost(caps, type, start) * 1e6);
    for (grid = PSEL_PLOT_MIN_SIZE, x = start; x < end; grid *= step) {
        if ((size_t)grid > x) {
            x = ucs_min((size_t)grid, end);
            fprintf(f, "%zu %.6g\n", x, caps_cost(caps, type, x) * 1e6);
        }
    }
}

/* A protocol's ranges up to @a xmax, one block each */
static int write_line(const char *path, const psel_proto_caps_t *caps,
                      psel_perf_type_t type, size_t xmax)
{
    size_t start = caps->min_length;
    unsigned r;
    FILE *f;

    f = psel_info_gnuplot_data_open(path);
    if (f == NULL) {
        return 1;
    }
    for (r = 0; (r < caps->num_ranges) && (start <= xmax); ++r) {
        if (caps->ranges[r].max_length >= ucs_max(start, PSEL_PLOT_MIN_SIZE)) {
            sample_line(f, caps, type, start,
                        ucs_min(caps->ranges[r].max_length, xmax));
            fputs("\n", f);
        }
        start = caps->ranges[r].max_length + 1;
    }
    return psel_info_gnuplot_data_close(f, path);
}

/* The calibration's measured times of a protocol over its lanes */
static int write_points(const char *path, const psel_calib_line_t *line,
                        psel_perf_type_t type, int *any)
{
    unsigned i;
    FILE *f;

    f = psel_info_gnuplot_data_open(path);
    if (f == NULL) {
        return 1;
    }
    *any = 0;
    for (i = 0; i < line->num_points; ++i) {
        if (isfinite(line->points[i].time[type]) &&
            (line->points[i].time[type] > 0) && (line->points[i].size > 0)) {
            fprintf(f, "%zu %.6g\n", line->points[i].size,
                    line->points[i].time[type] * 1e6);
            *any = 1;
        }
    }
    return psel_info_gnuplot_data_close(f, path);
}

/* The selected protocol's cost along the table, one block per row */
static int write_envelope(const char *path, const psel_select_table_t *table,
                          psel_perf_type_t type, size_t xmax)
{
    const psel_proto_caps_t *caps;
    size_t start, end, piece;
    unsigned row;
    FILE *f;

    f = psel_info_gnuplot_data_open(path);
    if (f == NULL) {
        return 1;
    }
    for (row = 0; row < table->count; ++row) {
        caps  = &table->caps[table->elems[row].proto_index];
        start = ucs_max(row_start(table, row), PSEL_PLOT_MIN_SIZE);
        end   = ucs_min(table->elems[row].max_length, xmax);
        /* a row may span several ranges of its protocol */
        for (; start <= end; start = piece + 1) {
            piece = ucs_min(psel_proto_caps_range(caps, start)->max_length,
                            end);
            sample_line(f, caps, type, start, piece);
            fputs("\n", f);
        }
    }
    return psel_info_gnuplot_data_close(f, path);
}

static size_t plot_xmax(const psel_info_table_t *tables, unsigned count)
{
    size_t xmax = PSEL_PLOT_MAX_SIZE;
    size_t last;
    unsigned i;

    for (i = 0; i < count; ++i) {
        if (tables[i].table->count > 1) {
            last = row_start(tables[i].table, tables[i].table->count - 1);
            if (last < (SIZE_MAX / 4)) {
                xmax = ucs_max(xmax, 4 * last);
            }
        }
    }
    return xmax;
}

void psel_info_gnuplot_terminal(FILE *s, const char *path, int png,
                                unsigned height)
{
    if (png) {
        fprintf(s, "set terminal pngcairo size 1100,%u font 'sans,10' "
                "noenhanced\n", height);
    } else {
        fprintf(s, "set terminal svg size 1100,%u dynamic font 'sans,10' "
                "background '#ffffff' noenhanced\n", height);
    }
    fputs("set output ", s);
    psel_info_gnuplot_string(s, path);
    fputs("\n", s);
}

/* Terminal, axes and layout */
static void script_header(FILE *s, const char *path, int png, unsigned count,
                          size_t xmax)
{
    size_t x;

    psel_info_gnuplot_terminal(s, path, png, 650 * count);
    fputs("set logscale xy\nset grid xtics ytics mxtics mytics lc rgb "
          "'#e0e0e0'\nset xlabel 'message size [bytes]'\nset ylabel "
          "'time per message [us]'\nset key outside right top\nset xtics (",
          s);
    for (x = 1; x <= xmax; x *= 16) {
        fprintf(s, "%s'%zu%s' %zu", (x == 1) ? "" : ", ",
                (x >= (1ul << 20)) ? (x >> 20) : (x >= 1024) ? (x >> 10) : x,
                (x >= (1ul << 20)) ? "M" : (x >= 1024) ? "K" : "", x);
        if (x > (SIZE_MAX / 16)) {
            break;
        }
    }
    fprintf(s, ")\nset xrange [%lu:%zu]\n", PSEL_PLOT_MIN_SIZE, xmax);
    if (count > 1) {
        fprintf(s, "set multiplot layout %u,1\n", count);
    }
}

/* One panel: data files, then its title, thresholds and plot command */
static int plot_panel(psel_plot_t *plot, unsigned panel,
                      const psel_info_table_t *t, const psel_calib_t *calib,
                      size_t xmax)
{
    const psel_select_table_t *table = t->table;
    psel_perf_type_t type            = t->select->config->select_perf;
    UCS_STRING_BUFFER_ONSTACK(title, 512);
    const psel_calib_line_t *line;
    const psel_proto_caps_t *caps;
    const char *name, *color, *sep = "plot ";
    FILE *s                          = plot->script;
    char path[PATH_MAX];
    unsigned i, row;
    size_t at;
    int any;

    psel_buffer_type_str(table->buf_type, &title);
    ucs_string_buffer_appendf(&title, ": cost per message (%s), ",
                              (type == PSEL_PERF_MULTI) ? "multi" : "single");
    if (calib != NULL) {
        ucs_string_buffer_appendf(&title, "measured on %s %s (%s)",
                                  calib->hostname, calib->created,
                                  calib->mode);
    } else {
        ucs_string_buffer_appendf(&title, "from the transports' attributes");
    }
    fputs("set title ", s);
    psel_info_gnuplot_string(s, ucs_string_buffer_cstr(&title));
    fputs("\nunset arrow\nunset label\n", s);

    for (row = 1; row < table->count; ++row) {
        at = row_start(table, row);
        if (at > xmax) {
            break;
        }
        fprintf(s, "set arrow from %zu, graph 0 to %zu, graph 1 nohead "
                "dt 3 lc rgb '#404040'\n", at, at);
        fprintf(s, "set label '%zu %s' at %zu, graph 0.02 rotate by 90 "
                "left offset -0.8,0 font ',8' tc rgb '#404040'\n", at,
                table->elems[row].proto->name, at);
    }

    data_path(plot, panel, NULL, "envelope", path, sizeof(path));
    if (write_envelope(path, table, type, xmax) != 0) {
        return 1;
    }
    fputs("plot ", s);
    psel_info_gnuplot_string(s, path);
    fputs(" with lines lw 9 lc rgb '#c8c8c8' title 'selected'", s);
    sep = ", \\\n     ";

    for (i = 0; i < table->num_protos; ++i) {
        if ((t->attrs->status[i] != UCS_OK) ||
            !psel_select_serves(t->select, table, i)) {
            continue;
        }
        name  = t->select->protos[i]->name;
        color = psel_plot_colors[i % ucs_static_array_size(psel_plot_colors)];
        caps  = &t->attrs->caps[i];

        data_path(plot, panel, name, "attributes", path, sizeof(path));
        if (write_line(path, caps, type, xmax) != 0) {
            return 1;
        }
        fputs(sep, s);
        psel_info_gnuplot_string(s, path);
        fprintf(s, " with lines dt 2 lw 1.5 lc rgb '%s' title '%s "
                "(attributes)'", color, name);

        caps = &table->caps[i];
        if (!(caps->flags & PSEL_PROTO_CAP_CALIBRATED)) {
            continue;
        }
        data_path(plot, panel, name, "measured", path, sizeof(path));
        if (write_line(path, caps, type, xmax) != 0) {
            return 1;
        }
        fputs(sep, s);
        psel_info_gnuplot_string(s, path);
        fprintf(s, " with lines dt 1 lw 2 lc rgb '%s' title '%s (measured)'",
                color, name);

        line = psel_calib_find_via(calib,
                                   (caps->flags & PSEL_SELECT_CAP_MEASURED_UCP) ?
                                   PSEL_CALIB_VIA_UCP : PSEL_CALIB_VIA_PROTOSEL,
                                   name, caps->lanes,
                                   (ucs_memory_type_t)table->buf_type.mem_type);
        if (line == NULL) {
            continue;
        }
        data_path(plot, panel, name, "points", path, sizeof(path));
        if (write_points(path, line, type, &any) != 0) {
            return 1;
        }
        if (any) {
            fputs(sep, s);
            psel_info_gnuplot_string(s, path);
            fprintf(s, " with points pt 7 ps 0.6 lc rgb '%s' notitle", color);
        }
    }
    fputs("\n", s);
    return 0;
}

/* Run gnuplot on @a script, for at most PSEL_PLOT_TIMEOUT seconds */
static int run_gnuplot(const char *script)
{
    struct timespec tick = {0, 20 * 1000 * 1000};
    int status, waited;
    pid_t pid;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "psel_info: cannot start gnuplot: %m\n");
        return 1;
    }
    if (pid == 0) {
        execlp("gnuplot", "gnuplot", script, (char*)NULL);
        fprintf(stderr, "psel_info: cannot run gnuplot: %m; install "
                "gnuplot-nox (apt-get install gnuplot-nox)\n");
        _exit(127);
    }

    for (waited = 0; waitpid(pid, &status, WNOHANG) == 0; ++waited) {
        if (waited >= PSEL_PLOT_TIMEOUT * 50) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fprintf(stderr, "psel_info: gnuplot did not finish in %d s; "
                    "killed it\n", PSEL_PLOT_TIMEOUT);
            return 1;
        }
        nanosleep(&tick, NULL);
    }
    if (WIFEXITED(status) && (WEXITSTATUS(status) == 127)) {
        return 1; /* the child said why */
    }
    if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0)) {
        fprintf(stderr, "psel_info: gnuplot failed on %s (see its message "
                "above)\n", script);
        return 1;
    }
    return 0;
}

/* Does this gnuplot have the pngcairo terminal? */
static int have_pngcairo(psel_plot_t *plot)
{
    char path[PATH_MAX];
    FILE *f;

    snprintf(path, sizeof(path), "%s/probe-pngcairo.gp", plot->dir);
    f = psel_info_gnuplot_data_open(path);
    if (f == NULL) {
        return 0;
    }
    fputs("set terminal pngcairo\n", f);
    return !psel_info_gnuplot_data_close(f, path) && !run_gnuplot(path);
}

static int plot_dir_open(psel_plot_t *plot, const char *keep_dir)
{
    const char *tmp = getenv("TMPDIR");

    if ((keep_dir != NULL) && (strlen(keep_dir) >= sizeof(plot->dir))) {
        fprintf(stderr, "psel_info: --plot-keep: path too long\n");
        return 1;
    } else if (keep_dir != NULL) {
        if ((mkdir(keep_dir, 0777) != 0) && (errno != EEXIST)) {
            fprintf(stderr, "psel_info: cannot create %s: %m\n", keep_dir);
            return 1;
        }
        snprintf(plot->dir, sizeof(plot->dir), "%s", keep_dir);
        plot->temporary = 0;
        return 0;
    }
    snprintf(plot->dir, sizeof(plot->dir), "%s/psel_plot.XXXXXX",
             ((tmp != NULL) && (tmp[0] != '\0')) ? tmp : "/tmp");
    if (mkdtemp(plot->dir) == NULL) {
        fprintf(stderr, "psel_info: cannot create a directory %s: %m; set "
                "TMPDIR or use --plot-keep DIR\n", plot->dir);
        return 1;
    }
    plot->temporary = 1;
    return 0;
}

/* Remove the temporary directory: it holds only files this module wrote */
static void plot_dir_close(psel_plot_t *plot)
{
    char path[PATH_MAX];
    struct dirent *entry;
    DIR *dir;

    if (!plot->temporary || ((dir = opendir(plot->dir)) == NULL)) {
        return;
    }
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] != '.') {
            snprintf(path, sizeof(path), "%s/%s", plot->dir, entry->d_name);
            unlink(path);
        }
    }
    closedir(dir);
    rmdir(plot->dir);
}

int psel_info_gnuplot_open(psel_info_gnuplot_t *plot, const char *path,
                           const char *keep_dir)
{
    const char *ext = strrchr(path, '.');
    char script[PATH_MAX];
    FILE *out;

    memset(plot, 0, sizeof(*plot));
    plot->path = path;
    if ((ext == NULL) || (strcmp(ext, ".svg") && strcmp(ext, ".png"))) {
        fprintf(stderr, "psel_info: --plot %s: the file name must end in "
                ".svg or .png\n", path);
        return 1;
    }
    plot->png = !strcmp(ext, ".png");

    /* say now, not in gnuplot's words, that the file cannot be written */
    out = fopen(path, "w");
    if (out == NULL) {
        fprintf(stderr, "psel_info: --plot: cannot write %s: %m\n", path);
        return 1;
    }
    fclose(out);

    if (plot_dir_open(plot, keep_dir) != 0) {
        goto err_remove;
    }
    if (plot->png && !have_pngcairo(plot)) {
        fprintf(stderr, "psel_info: gnuplot has no pngcairo terminal for %s; "
                "install gnuplot-nox, or plot to a .svg file\n", path);
        goto err_dir;
    }

    snprintf(script, sizeof(script), "%s/plot.gp", plot->dir);
    plot->script = psel_info_gnuplot_data_open(script);
    if (plot->script == NULL) {
        goto err_dir;
    }
    return 0;

err_dir:
    plot_dir_close(plot);
err_remove:
    unlink(path);
    return 1;
}

int psel_info_gnuplot_finish(psel_info_gnuplot_t *plot, int ok)
{
    char script[PATH_MAX];
    int ret = 1;

    snprintf(script, sizeof(script), "%s/plot.gp", plot->dir);
    if (!ok) {
        fclose(plot->script);
    } else if ((psel_info_gnuplot_data_close(plot->script, script) == 0) &&
               (run_gnuplot(script) == 0)) {
        ret = 0;
        fprintf(stderr, "psel_info: wrote %s%s%s\n", plot->path,
                plot->temporary ? "" : "; data and script in ",
                plot->temporary ? "" : plot->dir);
    }
    plot_dir_close(plot);
    if (ret != 0) {
        unlink(plot->path);
    }
    return ret;
}

int psel_info_plot(const char *path, const char *keep_dir,
                   const psel_info_table_t *tables, unsigned count,
                   const psel_calib_t *calib)
{
    size_t xmax = plot_xmax(tables, count);
    psel_plot_t plot;
    unsigned panel;
    int ok = 1;

    if (psel_info_gnuplot_open(&plot, path, keep_dir) != 0) {
        return 1;
    }
    fprintf(plot.script, "# psel_info --plot: dashed = from the transports' "
            "attributes, solid = measured (calibration), points = measured "
            "times, thick grey = selected, dotted = thresholds\n");
    script_header(plot.script, path, plot.png, count, xmax);
    for (panel = 0; ok && (panel < count); ++panel) {
        ok = (plot_panel(&plot, panel, &tables[panel], calib, xmax) == 0);
    }
    if (ok && (count > 1)) {
        fputs("unset multiplot\n", plot.script);
    }
    return psel_info_gnuplot_finish(&plot, ok);
}
