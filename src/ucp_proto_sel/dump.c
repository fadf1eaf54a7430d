/*
 * Text, explain and JSON dumps of selection tables.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "dump.h"
#include "calib.h"

#include <lane_select/text_json.h>
#include <lane_select/text_scan.h>

#include <assert.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <math.h>
#include <string.h>

/* Table borders are cut from this with %.*s */
#define PSEL_DASHES "------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------"

static const char *psel_boundary_reason_names[] = {
    [PSEL_BOUNDARY_MAX_LENGTH] = "max size",
    [PSEL_BOUNDARY_MIN_LENGTH] = "min size",
    [PSEL_BOUNDARY_FORCED]     = "forced threshold",
    [PSEL_BOUNDARY_CROSSOVER]  = "crossover",
    [PSEL_BOUNDARY_BIAS_BOUND] = "bias bound",
    [PSEL_BOUNDARY_MARGIN]     = "switch margin"
};

static const char *psel_perf_type_name(const psel_select_t *select)
{
    return (select->config->select_perf == PSEL_PERF_MULTI) ? "multi" :
                                                              "single";
}

static size_t psel_row_start(const psel_select_table_t *table, unsigned row)
{
    return (row == 0) ? 0 : (table->elems[row - 1].max_length + 1);
}

void psel_select_proto_status_str(const psel_select_table_t *table, unsigned i,
                                  ucs_string_buffer_t *strb)
{
    const psel_proto_caps_t *caps = &table->caps[i];

    switch (table->status[i]) {
    case UCS_OK:
        ucs_string_buffer_appendf(strb, "sizes %zu..", caps->min_length);
        psel_size_str(psel_proto_caps_max_length(caps), strb);
        if (caps->cfg_thresh != PSEL_THRESH_AUTO) {
            ucs_string_buffer_appendf(strb, ", forced from %zu",
                                      caps->cfg_thresh);
        }
        break;
    case UCS_ERR_NO_ELEM:
        ucs_string_buffer_appendf(strb, "disabled by UCX_PSEL_PROTOS");
        break;
    case UCS_ERR_UNSUPPORTED:
        ucs_string_buffer_appendf(strb, "not applicable: %s",
                                  caps->desc[0] ? caps->desc : "no reason given");
        break;
    default:
        ucs_string_buffer_appendf(strb, "init failed: %s",
                                  ucs_status_string(table->status[i]));
        break;
    }
}

static ucs_linear_func_t psel_proto_func_at(const psel_select_t *select,
                                            const psel_select_table_t *table,
                                            unsigned i, size_t x)
{
    return psel_proto_caps_range(&table->caps[i], x)
                   ->perf[select->config->select_perf];
}

static double psel_lines_cross(ucs_linear_func_t a, ucs_linear_func_t b)
{
    return (a.m == b.m) ? NAN : (b.c - a.c) / (a.m - b.m);
}

void psel_select_boundary(const psel_select_t *select,
                          const psel_select_table_t *table, unsigned row,
                          psel_boundary_t *boundary)
{
    unsigned left                = table->elems[row].proto_index;
    unsigned right               = table->elems[row + 1].proto_index;
    const psel_proto_caps_t *lc  = &table->caps[left];
    const psel_proto_caps_t *rc  = &table->caps[right];
    size_t at                    = table->elems[row].max_length + 1;
    ucs_linear_func_t fl, fr;
    double d, margin;
    unsigned i;

    boundary->at              = at;
    boundary->crossing        = NAN;
    boundary->biased_crossing = NAN;
    boundary->margin_crossing = NAN;

    if (psel_proto_caps_range(lc, at) == NULL) {
        boundary->reason = PSEL_BOUNDARY_MAX_LENGTH;
        return;
    }
    if (rc->min_length == at) {
        boundary->reason = PSEL_BOUNDARY_MIN_LENGTH;
        return;
    }
    for (i = 0; i < table->num_protos; ++i) {
        if ((table->status[i] == UCS_OK) && (table->caps[i].cfg_thresh == at)) {
            boundary->reason = PSEL_BOUNDARY_FORCED;
            return;
        }
    }

    fl                 = psel_proto_func_at(select, table, left, at - 1);
    fr                 = psel_proto_func_at(select, table, right, at);
    boundary->crossing = psel_lines_cross(fl, fr);
    boundary->reason   = PSEL_BOUNDARY_CROSSOVER;

    d = psel_config_rndv_bias(select->config);
    if ((d < 1.0) &&
        ((lc->flags ^ rc->flags) & PSEL_PROTO_CAP_RNDV_BIAS)) {
        if (lc->flags & PSEL_PROTO_CAP_RNDV_BIAS) {
            fl = ucs_linear_func_make(fl.c * d, fl.m * d);
        } else {
            fr = ucs_linear_func_make(fr.c * d, fr.m * d);
        }
        boundary->biased_crossing = psel_lines_cross(fl, fr);
    }

    /* the right one takes the sizes where it beats the left one by the
     * switch margin (select.h) */
    margin = psel_select_switch_margin(select);
    if (margin > 0) {
        boundary->margin_crossing = psel_lines_cross(
                ucs_linear_func_make(fl.c * (1.0 - margin), fl.m * (1.0 - margin)),
                fr);
    }
    if ((fabs(boundary->crossing - (double)at) <= 1.0) ||
        (fabs(boundary->biased_crossing - (double)at) <= 1.0)) {
        return;
    } else if (fabs(boundary->margin_crossing - (double)at) <= 1.0) {
        boundary->reason = PSEL_BOUNDARY_MARGIN;
    } else if (!isnan(boundary->biased_crossing)) {
        /* no crossing explains the boundary: the x2 bound does */
        boundary->reason = PSEL_BOUNDARY_BIAS_BOUND;
    }
}

static void psel_range_str(size_t start, size_t end, ucs_string_buffer_t *strb)
{
    ucs_string_buffer_appendf(strb, "%zu..", start);
    psel_size_str(end, strb);
}

static void psel_boundary_str(const psel_select_t *select,
                              const psel_select_table_t *table, unsigned row,
                              ucs_string_buffer_t *strb)
{
    const psel_proto_t *left  = table->elems[row].proto;
    const psel_proto_t *right = table->elems[row + 1].proto;
    psel_boundary_t b;

    psel_select_boundary(select, table, row, &b);
    ucs_string_buffer_appendf(strb, "    at %zu: %s -> %s: ", b.at, left->name,
                              right->name);
    switch (b.reason) {
    case PSEL_BOUNDARY_MAX_LENGTH:
        ucs_string_buffer_appendf(strb, "%s handles at most %zu bytes",
                                  left->name, b.at - 1);
        break;
    case PSEL_BOUNDARY_MIN_LENGTH:
        ucs_string_buffer_appendf(strb, "%s applies from %zu bytes",
                                  right->name, b.at);
        break;
    case PSEL_BOUNDARY_FORCED:
        ucs_string_buffer_appendf(strb, "a forced threshold starts here "
                                  "(UCX_PSEL_RNDV_THRESH or "
                                  "UCX_PSEL_ZCOPY_THRESH)");
        break;
    case PSEL_BOUNDARY_CROSSOVER:
    case PSEL_BOUNDARY_BIAS_BOUND:
        ucs_string_buffer_appendf(strb, "cost lines cross at %.1f bytes",
                                  b.crossing);
        if (!isnan(b.biased_crossing)) {
            ucs_string_buffer_appendf(strb, ", at %.1f with the rendezvous "
                                      "bias d=%.4f", b.biased_crossing,
                                      psel_config_rndv_bias(select->config));
        }
        if (b.reason == PSEL_BOUNDARY_BIAS_BOUND) {
            ucs_string_buffer_appendf(strb, "; the bias may move a boundary by "
                                      "at most x2, so it stays at %zu", b.at);
        }
        break;
    case PSEL_BOUNDARY_MARGIN:
        ucs_string_buffer_appendf(strb, "cost lines cross at %.1f bytes; %s "
                                  "is cheaper than %s by the %.1f%% switch "
                                  "margin (%s) from %.1f", b.crossing,
                                  right->name, left->name,
                                  100.0 * psel_select_switch_margin(select),
                                  psel_select_switch_margin_source(select),
                                  b.margin_crossing);
        break;
    case PSEL_BOUNDARY_LAST: /* a count, never a reason */
        break;
    }
    ucs_string_buffer_appendf(strb, "\n");
}

/* Cost of candidate i against the winner of a row, at the row's first size
 * and at its last (or, for an open-ended row, asymptotically by slope). */
static void psel_margin_str(const psel_select_t *select,
                            const psel_select_table_t *table, unsigned winner,
                            unsigned i, size_t start, size_t end,
                            ucs_string_buffer_t *strb)
{
    double cw = psel_select_cost(select, &table->caps[winner], start, 1);
    double ci = psel_select_cost(select, &table->caps[i], start, 1);
    ucs_linear_func_t fw, fi;

    double margin = psel_select_switch_margin(select);
    int cheaper   = ci < cw;

    ucs_string_buffer_appendf(strb, "%+.1f%% at %zu", 100.0 * (ci - cw) / cw,
                              start);
    if (end == SIZE_MAX) {
        fw = psel_proto_func_at(select, table, winner, end);
        fi = psel_proto_func_at(select, table, i, end);
        ucs_string_buffer_appendf(strb, ", %+.1f%% per byte for large sizes",
                                  100.0 * (fi.m - fw.m) / fw.m);
        cheaper |= fi.m < fw.m;
    } else if (end > start) {
        cw = psel_select_cost(select, &table->caps[winner], end, 1);
        ci = psel_select_cost(select, &table->caps[i], end, 1);
        ucs_string_buffer_appendf(strb, ", %+.1f%% at %zu",
                                  100.0 * (ci - cw) / cw, end);
        cheaper |= ci < cw;
    }
    if (cheaper && (margin > 0)) {
        /* the tie: the winner keeps the sizes within the margin */
        ucs_string_buffer_appendf(strb, " (a tie within the %.1f%% switch "
                                  "margin, %s)", 100.0 * margin,
                                  psel_select_switch_margin_source(select));
    }
}

/* Every candidate's cost line on [start, end], where no line changes. */
static void psel_explain_piece(const psel_select_t *select,
                               const psel_select_table_t *table,
                               unsigned winner, size_t start, size_t end,
                               ucs_string_buffer_t *strb)
{
    const psel_proto_caps_t *caps;
    unsigned i;

    for (i = 0; i < table->num_protos; ++i) {
        if (!psel_select_serves(select, table, i)) {
            continue;
        }
        caps = &table->caps[i];
        ucs_string_buffer_appendf(strb, "    %c %-12s ",
                                  (i == winner) ? '*' : ' ',
                                  select->protos[i]->name);
        if ((table->status[i] != UCS_OK) ||
            (psel_proto_caps_range(caps, start) == NULL) ||
            (psel_proto_caps_range(caps, end) == NULL)) {
            psel_select_proto_status_str(table, i, strb);
            ucs_string_buffer_appendf(strb, "\n");
            continue;
        }
        psel_perf_func_str(psel_proto_func_at(select, table, i, start), strb);
        if (caps->flags & PSEL_PROTO_CAP_RNDV_BIAS) {
            ucs_string_buffer_appendf(strb, " (x%.4f bias)",
                                      psel_config_rndv_bias(select->config));
        }
        if (i != winner) {
            ucs_string_buffer_appendf(strb, "  ");
            psel_margin_str(select, table, winner, i, start, end, strb);
        }
        ucs_string_buffer_appendf(strb, "\n");
    }
}

/* The first range end of any candidate in [start, end), or end. */
static size_t psel_next_line_change(const psel_select_table_t *table,
                                    size_t start, size_t end)
{
    const psel_proto_caps_t *caps;
    unsigned i, r;

    for (i = 0; i < table->num_protos; ++i) {
        if (table->status[i] != UCS_OK) {
            continue;
        }
        caps = &table->caps[i];
        if ((caps->min_length > start) && (caps->min_length <= end)) {
            end = caps->min_length - 1;
        }
        for (r = 0; r < caps->num_ranges; ++r) {
            if ((caps->ranges[r].max_length >= start) &&
                (caps->ranges[r].max_length < end)) {
                end = caps->ranges[r].max_length;
            }
        }
    }
    return end;
}

static void psel_explain_row(const psel_select_t *select,
                             const psel_select_table_t *table, unsigned row,
                             ucs_string_buffer_t *strb)
{
    size_t start    = psel_row_start(table, row);
    size_t end      = table->elems[row].max_length;
    unsigned winner = table->elems[row].proto_index;
    size_t piece_end;

    for (;;) {
        piece_end = psel_next_line_change(table, start, end);
        ucs_string_buffer_appendf(strb, "  ");
        psel_range_str(start, piece_end, strb);
        ucs_string_buffer_appendf(strb, ": %s\n",
                                  table->elems[row].proto->name);
        psel_explain_piece(select, table, winner, start, piece_end, strb);
        if (piece_end == end) {
            break;
        }
        start = piece_end + 1;
    }
    if (row + 1 < table->count) {
        psel_boundary_str(select, table, row, strb);
    }
}

static void psel_select_dump_strb(const psel_select_t *select,
                                  const psel_select_table_t *table,
                                  const char *title, unsigned flags,
                                  ucs_string_buffer_t *strb)
{
    UCS_STRING_BUFFER_ONSTACK(cell, 256);
    UCS_STRING_BUFFER_ONSTACK(header, 256);
    int w_range = (int)strlen(title), w_proto = 0, w_lanes = 5, w_all;
    const psel_select_elem_t *elem;
    const psel_proto_caps_t *caps;
    unsigned row;

    psel_buffer_type_str(table->buf_type, &header);
    for (row = 0; row < table->count; ++row) {
        elem = &table->elems[row];
        caps = &table->caps[elem->proto_index];
        ucs_string_buffer_reset(&cell);
        psel_range_str(psel_row_start(table, row), elem->max_length, &cell);
        w_range = ucs_max(w_range, (int)strlen(ucs_string_buffer_cstr(&cell)));
        w_proto = ucs_max(w_proto, (int)(strlen(elem->proto->desc) +
                                         strlen(elem->proto->name) + 3));
        w_lanes = ucs_max(w_lanes, (int)strlen(caps->desc));
    }
    w_all   = ucs_max(w_proto + w_lanes + 3,
                      (int)strlen(ucs_string_buffer_cstr(&header)));
    w_proto = w_all - w_lanes - 3;

    ucs_string_buffer_appendf(strb, "+-%.*s-+-%.*s-+\n", w_range, PSEL_DASHES,
                              w_all, PSEL_DASHES);
    ucs_string_buffer_appendf(strb, "| %-*s | %-*s |\n", w_range, title, w_all,
                              ucs_string_buffer_cstr(&header));
    ucs_string_buffer_appendf(strb, "+-%.*s-+-%.*s-+-%.*s-+\n", w_range,
                              PSEL_DASHES, w_proto, PSEL_DASHES, w_lanes,
                              PSEL_DASHES);
    for (row = 0; row < table->count; ++row) {
        elem = &table->elems[row];
        caps = &table->caps[elem->proto_index];
        ucs_string_buffer_reset(&cell);
        psel_range_str(psel_row_start(table, row), elem->max_length, &cell);
        ucs_string_buffer_appendf(strb, "| %*s | %s [%s]%*s | %-*s |\n",
                                  w_range, ucs_string_buffer_cstr(&cell),
                                  elem->proto->desc, elem->proto->name,
                                  (int)(w_proto - strlen(elem->proto->desc) -
                                        strlen(elem->proto->name) - 3), "",
                                  w_lanes, caps->desc);
    }
    ucs_string_buffer_appendf(strb, "+-%.*s-+-%.*s-+-%.*s-+\n", w_range,
                              PSEL_DASHES, w_proto, PSEL_DASHES, w_lanes,
                              PSEL_DASHES);

    if (flags & PSEL_DUMP_EXPLAIN) {
        ucs_string_buffer_appendf(strb, "cost per message (%s), '*' = selected, "
                                  "%% = extra time over the selected protocol:\n",
                                  psel_perf_type_name(select));
        for (row = 0; row < table->count; ++row) {
            psel_explain_row(select, table, row, strb);
        }
    }
}

static void psel_select_dump_in_c_locale(FILE *stream,
                                         const psel_select_t *select,
                                         const psel_select_table_t *table,
                                         const char *title, unsigned flags)
{
    ucs_string_buffer_t strb;

    ucs_string_buffer_init(&strb);
    psel_select_dump_strb(select, table, title, flags, &strb);
    fputs(ucs_string_buffer_cstr(&strb), stream);
    ucs_string_buffer_cleanup(&strb);
}

/* numbers with '.' whatever LC_NUMERIC the application set */
void psel_select_dump(FILE *stream, const psel_select_t *select,
                      const psel_select_table_t *table, const char *title,
                      unsigned flags)
{
    psel_text_locale_t saved = psel_text_c_locale_enter();

    psel_select_dump_in_c_locale(stream, select, table, title, flags);
    psel_text_c_locale_leave(saved);
}

static void
psel_select_dump_protos_in_c_locale(FILE *stream, const psel_select_t *select,
                                    const psel_select_table_t *table)
{
    UCS_STRING_BUFFER_ONSTACK(status, 256);
    int width = 10;
    unsigned i;

    /* the protocols of the table's operation; the others are not weighed */
    for (i = 0; i < table->num_protos; ++i) {
        if (psel_select_serves(select, table, i)) {
            width = ucs_max(width, (int)strlen(select->protos[i]->name));
        }
    }
    fprintf(stream, "# %-*s %-24s %s\n", width, "protocol", "applies to",
            "lanes");
    for (i = 0; i < table->num_protos; ++i) {
        if (!psel_select_serves(select, table, i)) {
            continue;
        }
        ucs_string_buffer_reset(&status);
        psel_select_proto_status_str(table, i, &status);
        if (table->status[i] == UCS_OK) {
            fprintf(stream, "# %-*s %-24s %s\n", width,
                    select->protos[i]->name, ucs_string_buffer_cstr(&status),
                    table->caps[i].desc);
        } else {
            fprintf(stream, "# %-*s %s\n", width, select->protos[i]->name,
                    ucs_string_buffer_cstr(&status));
        }
    }
    fprintf(stream, "#\n");
}

/* numbers with '.' whatever LC_NUMERIC the application set */
void psel_select_dump_protos(FILE *stream, const psel_select_t *select,
                             const psel_select_table_t *table)
{
    psel_text_locale_t saved = psel_text_c_locale_enter();

    psel_select_dump_protos_in_c_locale(stream, select, table);
    psel_text_c_locale_leave(saved);
}

static void psel_select_dump_log_in_c_locale(const psel_select_t *select,
                                             const psel_select_table_t *table)
{
    /* the streamed table (multi cost) is titled as psel_info titles it */
    const char *title = (select->config->select_perf == PSEL_PERF_MULTI) ?
                                "protosel streamed" : "protosel";
    ucs_string_buffer_t strb;
    char *line, *saveptr = NULL;

    ucs_string_buffer_init(&strb);
    psel_select_dump_strb(select, table, title, 0, &strb);
    for (line = strtok_r((char*)ucs_string_buffer_cstr(&strb), "\n", &saveptr);
         line != NULL; line = strtok_r(NULL, "\n", &saveptr)) {
        ucs_log_print_compact(line);
    }
    ucs_string_buffer_cleanup(&strb);
}

/* numbers with '.' whatever LC_NUMERIC the application set */
void psel_select_dump_log(const psel_select_t *select,
                          const psel_select_table_t *table)
{
    psel_text_locale_t saved = psel_text_c_locale_enter();

    psel_select_dump_log_in_c_locale(select, table);
    psel_text_c_locale_leave(saved);
}

/* The machine's noise while measuring, and the rails measured alone */
static void psel_calib_noise_print(FILE *stream, const psel_calib_t *calib)
{
    const psel_calib_noise_t *noise = &calib->noise;
    unsigned i;

    if (calib->has_noise) {
        fprintf(stream, "# calibration noise: run spread %.1f%% (worst point "
                "kept %.1f%%), CPU steal %.1f%%, other processes %.2f CPUs, "
                "%u point%s refused as too noisy\n", 100 * noise->spread,
                100 * noise->max_spread, 100 * noise->steal, noise->load,
                noise->refused, (noise->refused == 1) ? "" : "s");
    }
    for (i = 0; i < calib->num_rails; ++i) {
        fprintf(stream, "%s %s %.1f us %.0f MB/s to %s%s",
                (i == 0) ? "# measured rails:" : ",", calib->rails[i].lane,
                calib->rails[i].latency * 1e6,
                calib->rails[i].bandwidth / UCS_MBYTE,
                (calib->rails[i].peer[0] != '\0') ? calib->rails[i].peer :
                                                     "every peer",
                (i + 1 == calib->num_rails) ? " (lane selection uses these "
                "instead of the advertised latency and bandwidth, on "
                "endpoints to the peer each names)\n" : "");
    }
}

static void psel_calib_origin_str(const psel_calib_t *calib,
                                  ucs_string_buffer_t *strb)
{
    ucs_string_buffer_appendf(strb, "measured on %s %s (%s)", calib->hostname,
                              calib->created, calib->mode);
}

static void
psel_select_dump_cost_source_in_c_locale(FILE *stream,
                                         const psel_select_t *select,
                                         const psel_select_table_t *table)
{
    UCS_STRING_BUFFER_ONSTACK(strb, 512);
    unsigned i, measured = 0, applicable = 0, pass, count;

    if (select->calib == NULL) {
        /* what the lines rest on, and how to measure them instead */
        fprintf(stream, "# cost lines: the transports' advertised attributes, "
                "memory copies at %.0f MB/s (%s); to measure this machine's "
                "protocols, run psel_calibrate: selection uses its file from "
                "then on (UCX_PSEL_CALIBRATION=auto)\n",
                select->config->copy_bw / UCS_MBYTE,
                psel_config_copy_source_str(select->config));
        return;
    }
    ucs_string_buffer_appendf(&strb, "# cost lines: ");
    psel_calib_origin_str(select->calib, &strb);
    /* for UCP: the lines measured through UCP, then protosel's */
    for (pass = select->calib_for_ucp ? 0 : 1; pass < 2; ++pass) {
        for (i = 0, count = 0; i < table->num_protos; ++i) {
            if ((table->status[i] != UCS_OK) ||
                !(table->caps[i].flags & PSEL_PROTO_CAP_CALIBRATED) ||
                (!!(table->caps[i].flags & PSEL_SELECT_CAP_MEASURED_UCP) ==
                 pass)) {
                continue;
            }
            if ((count++ == 0) && select->calib_for_ucp) {
                ucs_string_buffer_appendf(&strb, "%s through %s for",
                                          (measured == 0) ? "," : ";",
                                          (pass == 0) ? "UCP" : "protosel");
            } else if ((count == 1) && (measured == 0)) {
                ucs_string_buffer_appendf(&strb, " for");
            }
            ucs_string_buffer_appendf(&strb, " %s", select->protos[i]->name);
            ++measured;
        }
    }
    for (i = 0; i < table->num_protos; ++i) {
        applicable += (table->status[i] == UCS_OK);
    }
    if (measured == 0) {
        ucs_string_buffer_appendf(&strb, ", none for these lanes; advertised "
                                  "attributes for all protocols");
    } else if (measured < applicable) {
        ucs_string_buffer_appendf(&strb, "; advertised attributes for the "
                                  "rest");
    }
    fprintf(stream, "%s\n", ucs_string_buffer_cstr(&strb));
    psel_calib_noise_print(stream, select->calib);
}

/* numbers with '.' whatever LC_NUMERIC the application set */
void psel_select_dump_cost_source(FILE *stream, const psel_select_t *select,
                                  const psel_select_table_t *table)
{
    psel_text_locale_t saved = psel_text_c_locale_enter();

    psel_select_dump_cost_source_in_c_locale(stream, select, table);
    psel_text_c_locale_leave(saved);
}

void psel_select_rows_str(const psel_select_table_t *table,
                          ucs_string_buffer_t *strb)
{
    unsigned row;

    for (row = 0; row < table->count; ++row) {
        ucs_string_buffer_appendf(strb, "%s", (row > 0) ? ", " : "");
        psel_range_str(psel_row_start(table, row), table->elems[row].max_length,
                       strb);
        ucs_string_buffer_appendf(strb, " %s", table->elems[row].proto->name);
    }
}

/* End of the range of @a caps that holds @a x */
static size_t psel_caps_range_end(const psel_proto_caps_t *caps, size_t x)
{
    return psel_proto_caps_range(caps, x)->max_length;
}

/* One candidate: its size pieces where neither line changes, each with the
 * attribute line and the measured one. */
static void psel_compare_proto(const psel_select_t *measured,
                               const psel_select_table_t *mtable,
                               const psel_select_table_t *atable, unsigned i,
                               ucs_string_buffer_t *strb)
{
    const psel_proto_caps_t *mcaps = &mtable->caps[i];
    const psel_proto_caps_t *acaps = &atable->caps[i];
    psel_perf_type_t type          = measured->config->select_perf;
    int calibrated = !!(mcaps->flags & PSEL_PROTO_CAP_CALIBRATED);
    UCS_STRING_BUFFER_ONSTACK(cell, 128);
    size_t start, end, max;

    if ((atable->status[i] != UCS_OK) || (mtable->status[i] != UCS_OK)) {
        ucs_string_buffer_appendf(strb, "  %-10s ",
                                  measured->protos[i]->name);
        psel_select_proto_status_str(atable, i, strb);
        ucs_string_buffer_appendf(strb, "\n");
        return;
    }

    max = psel_proto_caps_max_length(acaps);
    for (start = acaps->min_length;; start = end + 1) {
        end = psel_caps_range_end(acaps, start);
        if (calibrated) {
            end = ucs_min(end, psel_caps_range_end(mcaps, start));
        }
        ucs_string_buffer_reset(&cell);
        psel_range_str(start, end, &cell);
        ucs_string_buffer_appendf(strb, "  %-10s %-16s %-14s ",
                                  (start == acaps->min_length) ?
                                  measured->protos[i]->name : "",
                                  (start == acaps->min_length) ?
                                  acaps->lanes : "",
                                  ucs_string_buffer_cstr(&cell));
        ucs_string_buffer_reset(&cell);
        psel_perf_func_str(psel_proto_caps_range(acaps, start)->perf[type],
                           &cell);
        ucs_string_buffer_appendf(strb, "%-28s  ",
                                  ucs_string_buffer_cstr(&cell));
        if (calibrated) {
            psel_perf_func_str(psel_proto_caps_range(mcaps, start)->perf[type],
                               strb);
        } else if (start == acaps->min_length) {
            ucs_string_buffer_appendf(strb, "no line for %s in the file",
                                      acaps->lanes);
        } else {
            ucs_string_buffer_appendf(strb, "-");
        }
        ucs_string_buffer_appendf(strb, "\n");
        if (end >= max) {
            break;
        }
    }
}

static void
psel_select_dump_compare_in_c_locale(FILE *stream,
                                     const psel_select_t *measured,
                                     const psel_select_table_t *mtable,
                                     const psel_select_table_t *atable)
{
    ucs_string_buffer_t strb;
    unsigned i;

    assert(measured->calib != NULL);
    assert(mtable->num_protos == atable->num_protos);

    ucs_string_buffer_init(&strb);
    ucs_string_buffer_appendf(&strb, "cost lines (%s) from the transports' "
                              "attributes and ", psel_perf_type_name(measured));
    psel_calib_origin_str(measured->calib, &strb);
    ucs_string_buffer_appendf(&strb, ":\n  %-10s %-16s %-14s %-28s  %s\n",
                              "protocol", "lanes", "sizes", "attributes",
                              "measured");
    for (i = 0; i < mtable->num_protos; ++i) {
        if (psel_select_serves(measured, mtable, i)) {
            psel_compare_proto(measured, mtable, atable, i, &strb);
        }
    }
    ucs_string_buffer_appendf(&strb, "thresholds:\n  attributes: ");
    psel_select_rows_str(atable, &strb);
    ucs_string_buffer_appendf(&strb, "\n  measured:   ");
    psel_select_rows_str(mtable, &strb);
    ucs_string_buffer_appendf(&strb, "\n");
    fputs(ucs_string_buffer_cstr(&strb), stream);
    ucs_string_buffer_cleanup(&strb);
}

/* numbers with '.' whatever LC_NUMERIC the application set */
void psel_select_dump_compare(FILE *stream, const psel_select_t *measured,
                              const psel_select_table_t *mtable,
                              const psel_select_table_t *atable)
{
    psel_text_locale_t saved = psel_text_c_locale_enter();

    psel_select_dump_compare_in_c_locale(stream, measured, mtable, atable);
    psel_text_c_locale_leave(saved);
}

static void psel_json_func(FILE *stream, ucs_linear_func_t func)
{
    fputs("{\"c\": ", stream);
    psel_json_number(stream, func.c);
    fputs(", \"m\": ", stream);
    psel_json_number(stream, func.m);
    fputs("}", stream);
}

static void psel_json_candidate(FILE *stream, const psel_select_t *select,
                                const psel_select_table_t *table, unsigned i)
{
    const psel_proto_caps_t *caps = &table->caps[i];
    UCS_STRING_BUFFER_ONSTACK(status, 256);
    unsigned r;

    psel_select_proto_status_str(table, i, &status);
    fputs("    {\"protocol\": ", stream);
    psel_json_string(stream, select->protos[i]->name);
    fputs(", \"description\": ", stream);
    psel_json_string(stream, select->protos[i]->desc);
    fprintf(stream, ", \"applies\": %s, \"status\": ",
            (table->status[i] == UCS_OK) ? "true" : "false");
    psel_json_string(stream, ucs_string_buffer_cstr(&status));
    if (table->status[i] == UCS_OK) {
        fputs(", \"lanes\": ", stream);
        psel_json_string(stream, caps->desc);
        fprintf(stream, ", \"min_length\": %zu, \"forced_from\": ",
                caps->min_length);
        if (caps->cfg_thresh == PSEL_THRESH_AUTO) {
            fputs("null", stream);
        } else {
            psel_json_size(stream, caps->cfg_thresh);
        }
        fprintf(stream, ", \"rndv_bias\": %s, \"calibrated\": %s, "
                "\"ranges\": [",
                (caps->flags & PSEL_PROTO_CAP_RNDV_BIAS) ? "true" : "false",
                (caps->flags & PSEL_PROTO_CAP_CALIBRATED) ? "true" : "false");
        for (r = 0; r < caps->num_ranges; ++r) {
            fputs((r > 0) ? ", {\"max_length\": " : "{\"max_length\": ", stream);
            psel_json_size(stream, caps->ranges[r].max_length);
            fputs(", \"single\": ", stream);
            psel_json_func(stream, caps->ranges[r].perf[PSEL_PERF_SINGLE]);
            fputs(", \"multi\": ", stream);
            psel_json_func(stream, caps->ranges[r].perf[PSEL_PERF_MULTI]);
            fputs("}", stream);
        }
        fputs("]", stream);
    }
    fputs("}", stream);
}

void psel_select_dump_json_calib(FILE *stream, const psel_select_t *select)
{
    if (select->calib == NULL) {
        fputs("null", stream);
        return;
    }
    fputs("{\"host\": ", stream);
    psel_json_string(stream, select->calib->hostname);
    fputs(", \"created\": ", stream);
    psel_json_string(stream, select->calib->created);
    fputs(", \"mode\": ", stream);
    psel_json_string(stream, select->calib->mode);
    fputs("}", stream);
}

static void psel_select_dump_json_in_c_locale(FILE *stream,
                                              const psel_select_t *select,
                                              const psel_select_table_t *table,
                                              const char *title)
{
    const psel_select_elem_t *elem;
    const char *sep;
    psel_boundary_t b;
    unsigned row, i;

    fputs("{\"title\": ", stream);
    psel_json_string(stream, title);
    fputs(", \"operation\": ", stream);
    psel_json_string(stream, psel_op_name(table->buf_type.op));
    fputs(", \"datatype\": ", stream);
    psel_json_string(stream, psel_dt_class_name(table->buf_type.dt_class));
    fputs(", \"memory_type\": ", stream);
    psel_json_string(stream, ucs_memory_type_names[table->buf_type.mem_type]);
    fprintf(stream, ", \"sg_count\": %u, \"select_perf\": \"%s\", "
            "\"rndv_bias\": ", table->buf_type.sg_count,
            psel_perf_type_name(select));
    psel_json_number(stream, psel_config_rndv_bias(select->config));
    fputs(",\n  \"rows\": [\n", stream);
    for (row = 0; row < table->count; ++row) {
        elem = &table->elems[row];
        fprintf(stream, "    {\"start\": %zu, \"end\": ",
                psel_row_start(table, row));
        psel_json_size(stream, elem->max_length);
        fputs(", \"protocol\": ", stream);
        psel_json_string(stream, elem->proto->name);
        fputs(", \"description\": ", stream);
        psel_json_string(stream, elem->proto->desc);
        fputs(", \"lanes\": ", stream);
        psel_json_string(stream, table->caps[elem->proto_index].desc);
        fputs((row + 1 < table->count) ? "},\n" : "}\n", stream);
    }
    fputs("  ],\n  \"boundaries\": [\n", stream);
    UCS_STATIC_ASSERT(ucs_static_array_size(psel_boundary_reason_names) ==
                      PSEL_BOUNDARY_LAST);
    for (row = 0; row + 1 < table->count; ++row) {
        psel_select_boundary(select, table, row, &b);
        fprintf(stream, "    {\"at\": %zu, \"reason\": \"%s\", \"crossing\": ",
                b.at, psel_boundary_reason_names[b.reason]);
        psel_json_number(stream, b.crossing);
        fputs(", \"biased_crossing\": ", stream);
        psel_json_number(stream, b.biased_crossing);
        fputs((row + 2 < table->count) ? "},\n" : "}\n", stream);
    }
    fputs("  ],\n  \"candidates\": [\n", stream);
    for (i = 0, sep = ""; i < table->num_protos; ++i) {
        if (psel_select_serves(select, table, i)) {
            fputs(sep, stream);
            psel_json_candidate(stream, select, table, i);
            sep = ",\n";
        }
    }
    fputs("\n", stream);
    fputs("  ]\n}\n", stream);
}

/* numbers with '.' whatever LC_NUMERIC the application set */
void psel_select_dump_json(FILE *stream, const psel_select_t *select,
                           const psel_select_table_t *table, const char *title)
{
    psel_text_locale_t saved = psel_text_c_locale_enter();

    psel_select_dump_json_in_c_locale(stream, select, table, title);
    psel_text_c_locale_leave(saved);
}
