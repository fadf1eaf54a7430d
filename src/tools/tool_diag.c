/*
 * The tools' diagnostics (tool_diag.h): every libucs log message goes to
 * stderr, never to stdout. With psel_info -j a failure still gives valid
 * JSON on stdout: an error object with the messages that explain it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tool_diag.h"

#include <lane_select/text_json.h>
#include <ucp_proto_sel/calib.h>
#include <ucp_proto_sel/psel_config.h>

#include <ucs/debug/log_def.h>
#include <ucs/sys/compiler_def.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PSEL_TOOL_DIAG_KEEP   8     /* error/warning messages kept for JSON */
#define PSEL_TOOL_DIAG_MAX    1024  /* bytes of one message */

static struct {
    const char *prog;
    int         json_started;  /* stdout already holds (part of) a JSON value */
    unsigned    json_members;  /* members of the object on stdout so far */
    unsigned    count;         /* messages kept */
    unsigned    seq;           /* errors and warnings logged so far */
    unsigned    last_error_seq;/* seq of the last error, 0 if none */
    char        last_error[PSEL_TOOL_DIAG_MAX];
    char        messages[PSEL_TOOL_DIAG_KEEP][PSEL_TOOL_DIAG_MAX];
    const char  *levels[PSEL_TOOL_DIAG_KEEP];
} psel_tool_diag_state;

static const char *psel_tool_diag_level(ucs_log_level_t level)
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
psel_tool_diag_handler(const char *file, unsigned line, const char *function,
                       ucs_log_level_t level,
                       const ucs_log_component_config_t *comp_conf,
                       const char *message, va_list ap)
{
    char text[PSEL_TOOL_DIAG_MAX];
    const char *base;
    unsigned slot;

    (void)function;
    if (level > comp_conf->log_level) {
        return UCS_LOG_FUNC_RC_STOP;
    }
    vsnprintf(text, sizeof(text), message, ap);

    if (level <= UCS_LOG_LEVEL_WARN) {
        /* what the user must read: plain, as a command-line tool says it */
        fprintf(stderr, "%s: %s: %s\n", psel_tool_diag_state.prog,
                psel_tool_diag_level(level), text);
        slot = (psel_tool_diag_state.count < PSEL_TOOL_DIAG_KEEP) ?
               psel_tool_diag_state.count++ : PSEL_TOOL_DIAG_KEEP - 1;
        memcpy(psel_tool_diag_state.messages[slot], text, sizeof(text));
        psel_tool_diag_state.levels[slot] = psel_tool_diag_level(level);
        ++psel_tool_diag_state.seq;
        if (level <= UCS_LOG_LEVEL_ERROR) {
            memcpy(psel_tool_diag_state.last_error, text, sizeof(text));
            psel_tool_diag_state.last_error_seq = psel_tool_diag_state.seq;
        }
    } else {
        /* UCX_LOG_LEVEL=info/debug: UCX's own form, on stderr as well */
        base = strrchr(file, '/');
        fprintf(stderr, "[%s] %s:%u %s %s\n", psel_tool_diag_state.prog,
                (base != NULL) ? base + 1 : file, line,
                psel_tool_diag_level(level), text);
    }
    return UCS_LOG_FUNC_RC_STOP;
}

void psel_tool_diag_init(const char *prog)
{
    psel_tool_diag_state.prog = prog;
    ucs_log_push_handler(psel_tool_diag_handler);
}

unsigned psel_tool_diag_mark(void)
{
    return psel_tool_diag_state.seq;
}

const char *psel_tool_diag_since(unsigned mark)
{
    return (psel_tool_diag_state.last_error_seq > mark) ? psel_tool_diag_state.last_error :
                                                    NULL;
}

int psel_tool_config_check(int calibration)
{
    psel_calib_t *calib = NULL;
    psel_config_t config;
    ucs_status_t status;

    status = psel_config_read(&config);
    if (status != UCS_OK) {
        fprintf(stderr, "%s: fix the variable above; psel_info -c lists "
                "every UCX_PSEL_* variable with its accepted values\n",
                psel_tool_diag_state.prog);
        return 1;
    }
    if (calibration) {
        status = psel_config_calibration_load(&config, &calib);
        psel_config_calibration_release(calib);
    }
    psel_config_release(&config);
    return (status == UCS_OK) ? 0 : 1;
}

void psel_tool_diag_json_started(void)
{
    psel_tool_diag_state.json_started = 1;
}

void psel_tool_json_member(FILE *stream, const char *name)
{
    fputs(psel_tool_diag_state.json_members++ ? ",\n \"" : "{\"", stream);
    fputs(name, stream);
    fputs("\": ", stream);
    psel_tool_diag_state.json_started = 1;
}

void psel_tool_json_end(FILE *stream)
{
    if (psel_tool_diag_state.json_members > 0) {
        fputs("}\n", stream);
        psel_tool_diag_state.json_members = 0;
    }
}

void psel_tool_diag_json_error(FILE *stream, const char *what)
{
    int member = (psel_tool_diag_state.json_members > 0);
    unsigned i;

    if (psel_tool_diag_state.json_started && !member) {
        return; /* a whole JSON value is out already */
    }
    if (member) {
        /* the object on stdout so far, and what stopped it */
        psel_tool_json_member(stream, "error");
    } else {
        fputs("{\"error\": ", stream);
    }
    fputs("{\"what\": ", stream);
    psel_json_string(stream, what);
    fputs(", \"messages\": [", stream);
    for (i = 0; i < psel_tool_diag_state.count; ++i) {
        fprintf(stream, "%s{\"level\": \"%s\", \"text\": ", (i > 0) ? ", " : "",
                psel_tool_diag_state.levels[i]);
        psel_json_string(stream, psel_tool_diag_state.messages[i]);
        fputc('}', stream);
    }
    fputs("]}", stream);
    if (member) {
        psel_tool_json_end(stream);
    } else {
        fputs("}\n", stream);
    }
    psel_tool_diag_state.json_started = 1;
}
