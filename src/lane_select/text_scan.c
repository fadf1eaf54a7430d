/*
 * The number scanner and error format of every text parser; see
 * text_scan.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strtod_l */
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "text_scan.h"

#include <ucs/debug/log_def.h>

#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Longest number token converted (DBL_MAX needs 309 digits, and a value
 * with more significant digits than a double holds is still exact enough) */
#define PSEL_SCAN_NUMBER_MAX  400
/* How much of the offending text goes into an error message */
#define PSEL_TEXT_FOUND_MAX   48

static pthread_once_t psel_text_c_locale_once = PTHREAD_ONCE_INIT;
static locale_t       psel_text_c_locale;

static void psel_text_c_locale_create(void)
{
    psel_text_c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* The C locale, created once; (locale_t)0 if even that failed */
static locale_t psel_text_c_locale_get(void)
{
    pthread_once(&psel_text_c_locale_once, psel_text_c_locale_create);
    return psel_text_c_locale;
}

static void psel_scan_blanks(const char **p)
{
    while ((**p == ' ') || (**p == '\t')) {
        ++*p;
    }
}

static size_t psel_scan_digits(const char *s)
{
    size_t n = 0;

    while ((s[n] >= '0') && (s[n] <= '9')) {
        ++n;
    }
    return n;
}

int psel_scan_u64(const char **p, uint64_t *value_p)
{
    const char *s = *p;
    uint64_t value = 0;
    size_t n, i;

    psel_scan_blanks(&s);
    n = psel_scan_digits(s);
    if (n == 0) {
        return 0;
    }
    for (i = 0; i < n; ++i) {
        if (value > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10) {
            return 0;
        }
        value = value * 10 + (uint64_t)(s[i] - '0');
    }
    *value_p = value;
    *p       = s + n;
    return 1;
}

int psel_scan_double(const char **p, double *value_p)
{
    char token[PSEL_SCAN_NUMBER_MAX + 1];
    const char *s = *p;
    size_t len, n;
    locale_t c_locale;
    double value;
    char *end;

    psel_scan_blanks(&s);
    /* the grammar decides where the number ends, not strtod */
    len = psel_scan_digits(s);
    if (len == 0) {
        return 0;
    }
    if (s[len] == '.') {
        len += 1 + psel_scan_digits(s + len + 1);
    }
    if ((s[len] == 'e') || (s[len] == 'E')) {
        n = len + 1;
        if ((s[n] == '+') || (s[n] == '-')) {
            ++n;
        }
        if (psel_scan_digits(s + n) > 0) {
            len = n + psel_scan_digits(s + n);
        }
    }
    if (len > PSEL_SCAN_NUMBER_MAX) {
        return 0;
    }
    memcpy(token, s, len);
    token[len] = '\0';

    c_locale = psel_text_c_locale_get();
    if (c_locale == (locale_t)0) {
        return 0;
    }
    /* overflow gives inf (rejected); underflow a subnormal or 0, which is
     * the nearest double and kept, as a round trip of "%.17g" needs */
    value = strtod_l(token, &end, c_locale);
    if ((end != token + len) || !isfinite(value)) {
        return 0;
    }
    *value_p = value;
    *p       = s + len;
    return 1;
}

int psel_scan_double_all(const char *text, double *value_p)
{
    const char *s = text;
    double value;

    if (!psel_scan_double(&s, &value)) {
        return 0;
    }
    psel_scan_blanks(&s);
    if (*s != '\0') {
        return 0;
    }
    *value_p = value;
    return 1;
}

int psel_scan_u64_all(const char *text, uint64_t *value_p)
{
    const char *s = text;
    uint64_t value;

    if (!psel_scan_u64(&s, &value)) {
        return 0;
    }
    psel_scan_blanks(&s);
    if (*s != '\0') {
        return 0;
    }
    *value_p = value;
    return 1;
}

void psel_text_error(const psel_text_pos_t *pos, const char *at,
                     const char *expected_fmt, ...)
{
    char expected[512], found[PSEL_TEXT_FOUND_MAX + 8];
    unsigned column;
    size_t len;
    va_list ap;

    va_start(ap, expected_fmt);
    vsnprintf(expected, sizeof(expected), expected_fmt, ap);
    va_end(ap);

    if ((at == NULL) || (pos->line_text == NULL)) {
        ucs_error("%s:%u: expected %s, found end of input", pos->file,
                  pos->line, expected);
        return;
    }

    column = (unsigned)(at - pos->line_text) + 1;
    len    = strcspn(at, "\r\n");
    while ((len > 0) && isspace((unsigned char)at[len - 1])) {
        --len;
    }
    if (len == 0) {
        ucs_error("%s:%u:%u: expected %s, found end of line", pos->file,
                  pos->line, column, expected);
        return;
    }
    if (len > PSEL_TEXT_FOUND_MAX) {
        snprintf(found, sizeof(found), "%.*s...", PSEL_TEXT_FOUND_MAX - 3, at);
    } else {
        snprintf(found, sizeof(found), "%.*s", (int)len, at);
    }
    ucs_error("%s:%u:%u: expected %s, found '%s'", pos->file, pos->line,
              column, expected, found);
}

psel_text_locale_t psel_text_c_locale_enter(void)
{
    locale_t c_locale = psel_text_c_locale_get();

    return (c_locale != (locale_t)0) ? uselocale(c_locale) : (locale_t)0;
}

void psel_text_c_locale_leave(psel_text_locale_t saved)
{
    if (saved != (locale_t)0) {
        uselocale(saved);
    }
}

int psel_text_fprintf(FILE *stream, const char *fmt, ...)
{
    locale_t saved = psel_text_c_locale_enter();
    va_list ap;
    int ret;

    va_start(ap, fmt);
    ret = vfprintf(stream, fmt, ap);
    va_end(ap);
    psel_text_c_locale_leave(saved);
    return ret;
}

int psel_text_snprintf(char *buf, size_t size, const char *fmt, ...)
{
    locale_t saved = psel_text_c_locale_enter();
    va_list ap;
    int ret;

    va_start(ap, fmt);
    ret = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    psel_text_c_locale_leave(saved);
    return ret;
}

FILE *psel_text_file_open(const char *path, const char *what)
{
    FILE *stream = fopen(path, "r");

    if (stream == NULL) {
        ucs_error("%s: cannot open %s: %s", path, what, strerror(errno));
    }
    return stream;
}
