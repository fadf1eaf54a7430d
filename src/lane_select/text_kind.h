/**
 * @file text_kind.h
 * Recognise what kind of text a file holds, so that a parser given the wrong
 * file can say what it got and what to run instead ("this is a
 * UCX_PROTO_INFO table, not `ucx_info -d` output").
 *
 * Lines are fed one at a time; the verdict is the kind with the strongest
 * evidence. Recognised: `ucx_info -d` (with or without the leading '#'),
 * UCX_PROTO_INFO / `ucx_info -e` v2 tables, v1 `ucx_info -e` threshold lines,
 * `ucx_perftest` output, `ucx_info -v` alone, `ucx_info -c`/`-f` settings,
 * `ibv_devinfo` and `ibstat` output, and protosel's own snapshot and
 * calibration files. Internal header: not installed.
 */
#ifndef PSEL_LANE_SELECT_TEXT_KIND_H_
#define PSEL_LANE_SELECT_TEXT_KIND_H_

#include <stddef.h>


/** Kinds of text. */
typedef enum psel_text_kind {
    PSEL_TEXT_KIND_UNKNOWN,       /**< Nothing recognised */
    PSEL_TEXT_KIND_UCX_INFO_D,    /**< `ucx_info -d` resources */
    PSEL_TEXT_KIND_PROTO_TABLE,   /**< UCX_PROTO_INFO / `ucx_info -e` v2 table */
    PSEL_TEXT_KIND_UCX_INFO_E_V1, /**< `ucx_info -e` v1: "tag_send: 0..<egr/short>.." */
    PSEL_TEXT_KIND_PERFTEST,      /**< `ucx_perftest` / `psel_perftest` output */
    PSEL_TEXT_KIND_UCX_VERSION,   /**< `ucx_info -v` alone */
    PSEL_TEXT_KIND_UCX_CONFIG,    /**< `ucx_info -c` / `-f`: UCX_*=value */
    PSEL_TEXT_KIND_IBV_DEVINFO,   /**< `ibv_devinfo` */
    PSEL_TEXT_KIND_IBSTAT,        /**< `ibstat` */
    PSEL_TEXT_KIND_SNAPSHOT,      /**< protosel resource snapshot */
    PSEL_TEXT_KIND_CALIBRATION,   /**< protosel calibration file */
    PSEL_TEXT_KIND_EMPTY,         /**< Nothing but blanks and '#' marks */
    PSEL_TEXT_KIND_LAST
} psel_text_kind_t;


/** Evidence gathered so far; zero-initialize before the first line. */
typedef struct psel_text_kind_detector {
    unsigned lines;                      /**< Lines fed */
    unsigned text_lines;                 /**< Lines with more than blanks
                                              and '#' marks */
    unsigned score[PSEL_TEXT_KIND_LAST]; /**< Evidence per kind */
} psel_text_kind_detector_t;


/**
 * Add one line (without its newline) to the evidence.
 *
 * @param [inout] det   Detector.
 * @param [in]    line  The line.
 */
void psel_text_kind_feed(psel_text_kind_detector_t *det, const char *line);


/** @return The kind with the most evidence, PSEL_TEXT_KIND_EMPTY if no line
 *          held more than blanks and '#', or PSEL_TEXT_KIND_UNKNOWN. */
psel_text_kind_t psel_text_kind_result(const psel_text_kind_detector_t *det);


/** @return What a kind is, as a noun phrase: "a UCX_PROTO_INFO table". */
const char *psel_text_kind_name(psel_text_kind_t kind);


/**
 * @return What to do with a file of this kind when `ucx_info -d` text was
 *         expected, as a sentence ("pass it to psel_info --compare-ucx; for
 *         the resources run `ucx_info -d > FILE` on that machine").
 */
const char *psel_text_kind_advice(psel_text_kind_t kind);

#endif
