/*
 * psel_info's diagnostics: every libucs log message (protosel's parsers log
 * through it) goes to stderr, never to stdout, so that stdout holds only
 * the tables or the JSON. With -j a failure still gives valid JSON on
 * stdout: an error object with the messages that explain it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "psel_info.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/compiler_def.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PSEL_INFO_DIAG_KEEP   8     /* error/warning messages kept for JSON */
#define PSEL_INFO_DIAG_MAX    1024  /* bytes of one message */

static struct {
    const char *prog;
    int         json_started;  /* stdout already holds (part of) a JSON value */
    unsigned    count;         /* messages kept */
    char        messages[PSEL_INFO_DIAG_KEEP][PSEL_INFO_DIAG_MAX];
    const char  *levels[PSEL_INFO_DIAG_KEEP];
} psel_info_diag;

static const char *psel_info_diag_level(ucs_log_level_t level)
{
    switch (level) {
    case UCS_LOG_LEVEL_FATAL: return "fatal";
    case UCS_LOG_LEVEL_ERROR: return "error";
    case UCS_LOG_LEVEL_WARN:  return "warning";
    case UCS_LOG_LEVEL_DIAG:  return "diag";
    case UCS_LOG_LEVEL_INFO:  return "info";
    default:                  return "debug";
    }
}

static ucs_log_func_rc_t
psel_info_diag_handler(const char *file, unsigned line, const char *function,
                       ucs_log_level_t level,
                       const ucs_log_component_config_t *comp_conf,
                       const char *message, va_list ap)
{
    char text[PSEL_INFO_DIAG_MAX];
    const char *base;
    unsigned slot;

    (void)function;
    if (level > comp_conf->log_level) {
        return UCS_LOG_FUNC_RC_STOP;
    }
    vsnprintf(text, sizeof(text), message, ap);

    if (level <= UCS_LOG_LEVEL_WARN) {
        /* what the user must read: plain, as a command-line tool says it */
        fprintf(stderr, "%s: %s: %s\n", psel_info_diag.prog,
                psel_info_diag_level(level), text);
        slot = (psel_info_diag.count < PSEL_INFO_DIAG_KEEP) ?
               psel_info_diag.count++ : PSEL_INFO_DIAG_KEEP - 1;
        memcpy(psel_info_diag.messages[slot], text, sizeof(text));
        psel_info_diag.levels[slot] = psel_info_diag_level(level);
    } else {
        /* UCX_LOG_LEVEL=info/debug: UCX's own form, on stderr as well */
        base = strrchr(file, '/');
        fprintf(stderr, "[%s] %s:%u %s %s\n", psel_info_diag.prog,
                (base != NULL) ? base + 1 : file, line,
                psel_info_diag_level(level), text);
    }
    return UCS_LOG_FUNC_RC_STOP;
}

void psel_info_diag_init(const char *prog)
{
    psel_info_diag.prog = prog;
    ucs_log_push_handler(psel_info_diag_handler);
}

void psel_info_diag_json_started(void)
{
    psel_info_diag.json_started = 1;
}

void psel_info_json_string(FILE *stream, const char *text)
{
    const unsigned char *c;

    fputc('"', stream);
    for (c = (const unsigned char*)text; *c != '\0'; ++c) {
        if ((*c == '"') || (*c == '\\')) {
            fprintf(stream, "\\%c", *c);
        } else if (*c < 0x20) {
            fprintf(stream, "\\u%04x", *c);
        } else {
            fputc(*c, stream);
        }
    }
    fputc('"', stream);
}

void psel_info_diag_json_error(FILE *stream, const char *what)
{
    unsigned i;

    if (psel_info_diag.json_started) {
        return;
    }
    fprintf(stream, "{\"error\": {\"what\": ");
    psel_info_json_string(stream, what);
    fprintf(stream, ", \"messages\": [");
    for (i = 0; i < psel_info_diag.count; ++i) {
        fprintf(stream, "%s{\"level\": \"%s\", \"text\": ", (i > 0) ? ", " : "",
                psel_info_diag.levels[i]);
        psel_info_json_string(stream, psel_info_diag.messages[i]);
        fputc('}', stream);
    }
    fprintf(stream, "]}}\n");
    psel_info_diag.json_started = 1;
}
