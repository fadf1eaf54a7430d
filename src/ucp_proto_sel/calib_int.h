/**
 * @file calib_int.h
 * What the calibration files share among themselves (not installed):
 * calib.c (the store: lines, points, identity), calib_fit.c (fits),
 * calib_file.c (text file) and calib_apply.c (host check, application).
 */
#ifndef PSEL_UCP_PROTO_SEL_CALIB_INT_H_
#define PSEL_UCP_PROTO_SEL_CALIB_INT_H_

#include "calib.h"

#include <lane_select/resource_table.h>


/**
 * Is @a str one printable token without '#' (which starts a comment),
 * non-empty and shorter than @a max?
 */
int psel_calib_token_ok(const char *str, size_t max);


/** Are a line's protocol and lane names tokens, and its memory type known? */
int psel_calib_names_ok(const char *proto, const char *lanes,
                        ucs_memory_type_t mem_type);


/** This host's name as a token (characters that cannot be in one are '_'). */
void psel_calib_this_hostname(char *name, size_t max);


/** First word of /etc/machine-id as a token, or "-" when unknown. */
void psel_calib_this_machine_id(char *id, size_t max);


/** First word of the machine-id file @a path as a token, or "-" when the
 *  file is missing or empty. */
void psel_calib_read_machine_id(const char *path, char *id, size_t max);


/** psel_calib_check() against the given host identity instead of this
 *  host's ("-": machine id unknown). */
psel_calib_match_t psel_calib_check_host(const psel_calib_t *calib,
                                         const char *hostname,
                                         const char *machine_id, char *why,
                                         size_t max);


/** Find a line, or add an empty one, without messages (names not
 *  checked). */
psel_calib_line_t *psel_calib_line_add(psel_calib_t *calib,
                                       psel_calib_via_t via, const char *proto,
                                       const char *lanes,
                                       ucs_memory_type_t mem_type);


/** The rail of exactly (@a lane, @a peer), or NULL. */
psel_calib_rail_t *psel_calib_rail_get(const psel_calib_t *calib,
                                       const char *lane, const char *peer);


/** [s] added to the constant of a line where it is taken out of a table
 *  (psel_calib_take_out): it cannot win there below petabytes */
#define PSEL_CALIB_OUT_OF_TABLE 3600.0


/**
 * Take @a line out of the table of flavour @a t from @a size on (calib_order.c:
 * where the fit in natural order finds it would win again, the points not
 * showing it): its ranges there cost PSEL_CALIB_OUT_OF_TABLE more, split
 * at @a size if needed, or, when the line has no room for another range,
 * from the start of the range holding @a size; the other flavour and the
 * smaller sizes keep the fit. Never a refusal, which would leave the
 * protocol its attribute line, on another scale than the measured ones.
 * @return 1 with the size it is out from in @a from_p (@a size or less),
 *         or 0 with the line unchanged if no range holds @a size.
 */
int psel_calib_take_out(psel_calib_line_t *line, size_t size,
                        psel_perf_type_t t, size_t *from_p);


/** "latency" or "streaming": a flavour as the calibration's reports name it */
const char *psel_calib_flavour_name(psel_perf_type_t t);


/** The fitted line of flavour @a t at @a size (INFINITY past its ranges) */
double psel_calib_model(const psel_calib_line_t *line, size_t size,
                        psel_perf_type_t t);


/** Whether an entry of a fit in order still has its points (not refused) */
int psel_calib_entry_live(const psel_calib_order_entry_t *entry);


/**
 * The entry the fitted lines of flavour @a t select at @a size (the lowest
 * cost among the live entries that run it; the earlier rank on a tie), or
 * -1 when none does.
 */
int psel_calib_winner(const psel_calib_order_entry_t *entries, unsigned num,
                      size_t size, psel_perf_type_t t);


/** Index of the first point of @a line with size >= @a size. */
unsigned psel_calib_point_index(const psel_calib_line_t *line, size_t size);

#endif
