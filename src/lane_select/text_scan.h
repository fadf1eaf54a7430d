/**
 * @file text_scan.h
 * The one number scanner of every text format protosel reads: imported
 * `ucx_info -d` text, resource snapshots and calibration files. Numbers are
 * read and written in the C locale whatever the application set with
 * setlocale(LC_NUMERIC, ...): a host application in a comma-decimal locale
 * (de_DE) reads and writes the same files as everyone else.
 *
 * Grammar of a number (no locale, no sign, no "inf"/"nan", no hex):
 *   integer:  DIGIT+
 *   decimal:  DIGIT+ [ "." DIGIT* ] [ ("e" | "E") [ "+" | "-" ] DIGIT+ ]
 * Leading blanks (space, tab) are skipped. A scanner advances its cursor
 * past the number on success and leaves it untouched on failure, so callers
 * can try alternatives and report the column where the text went wrong.
 *
 * Errors: psel_text_error() logs "FILE:LINE:COLUMN: expected WHAT, found
 * 'TEXT'" (or "found end of line"), the form every parser of outside text
 * uses. Internal header: not installed.
 */
#ifndef PSEL_LANE_SELECT_TEXT_SCAN_H_
#define PSEL_LANE_SELECT_TEXT_SCAN_H_

#include <ucs/sys/compiler_def.h>
#include <locale.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>


/** Where a piece of text comes from, for error messages. */
typedef struct psel_text_pos {
    const char *file;       /**< File (or stream) name */
    unsigned    line;       /**< 1-based line number */
    const char *line_text;  /**< The line; columns count from its start */
} psel_text_pos_t;


/**
 * Scan a decimal integer.
 *
 * @param [inout] p        Cursor; advanced past the number on success.
 * @param [out]   value_p  The number.
 *
 * @return 1 on success; 0 if the text does not start (after blanks) with a
 *         digit, or the number does not fit in 64 bits.
 */
int psel_scan_u64(const char **p, uint64_t *value_p);


/**
 * Scan a non-negative decimal number in the C locale (see the grammar
 * above). The conversion is exact to the last bit (strtod_l in the C
 * locale on exactly the characters the grammar accepted).
 *
 * @param [inout] p        Cursor; advanced past the number on success.
 * @param [out]   value_p  The number, finite and >= 0.
 *
 * @return 1 on success; 0 on anything else (a sign, "nan", "inf", hex, a
 *         comma as decimal separator, a value that overflows a double).
 */
int psel_scan_double(const char **p, double *value_p);


/**
 * Scan a whole string as one number: blanks around it are allowed,
 * anything else is not.
 *
 * @return 1 on success, 0 otherwise (the value is then untouched).
 */
int psel_scan_double_all(const char *text, double *value_p);

/** As psel_scan_double_all(), for a decimal integer. */
int psel_scan_u64_all(const char *text, uint64_t *value_p);


/**
 * Log a parse error at @a at, a position inside @a pos->line_text (or NULL
 * for the end of input): "FILE:LINE:COLUMN: expected WHAT, found 'TEXT'",
 * where TEXT is the rest of the line from @a at (shortened if long), or
 * "found end of line" / "found end of input".
 *
 * @param [in] pos          File, line and line text.
 * @param [in] at           Where the text stops matching, or NULL.
 * @param [in] expected_fmt What was expected, printf-style.
 */
void psel_text_error(const psel_text_pos_t *pos, const char *at,
                     const char *expected_fmt, ...) UCS_F_PRINTF(3, 4);


/**
 * fprintf() in the C locale: numbers are written with '.' whatever
 * LC_NUMERIC the application set. Only this thread's locale is switched,
 * and only for the call.
 *
 * @return As fprintf().
 */
int psel_text_fprintf(FILE *stream, const char *fmt, ...) UCS_F_PRINTF(2, 3);

/**
 * Open a file of outside text for reading, the one way every reader does:
 * on failure log "PATH: cannot open WHAT: <the error>" (errno's text).
 *
 * @param [in] path  The file.
 * @param [in] what  What the file should hold, for the message
 *                   ("`ucx_info -d` text", "a snapshot").
 *
 * @return The stream, or NULL (the caller returns UCS_ERR_IO_ERROR).
 */
FILE *psel_text_file_open(const char *path, const char *what);


/** A thread's locale, as uselocale() returns it. */
typedef locale_t psel_text_locale_t;

/**
 * Put this thread in the C locale (uselocale()) until
 * psel_text_c_locale_leave(): every writer of text or JSON wraps its output
 * in the two, so that numbers are written with '.' whatever LC_NUMERIC the
 * application set. Calls nest.
 *
 * @return The thread's locale before, for psel_text_c_locale_leave().
 */
psel_text_locale_t psel_text_c_locale_enter(void);

/** Give the thread back the locale psel_text_c_locale_enter() returned. */
void psel_text_c_locale_leave(psel_text_locale_t saved);

/** snprintf() in the C locale, as psel_text_fprintf(). */
int psel_text_snprintf(char *buf, size_t size, const char *fmt, ...)
        UCS_F_PRINTF(3, 4);

#endif
