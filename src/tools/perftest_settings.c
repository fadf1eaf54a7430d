/*
 * The allow-listed settings of a calibration session, see
 * perftest_settings.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest_settings.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a value may be made of */
typedef enum {
    PT_VALUE_LIST,   /* ','-joined tokens of 'chars', optional leading '^' */
    PT_VALUE_LANES,  /* 1..16 */
    PT_VALUE_NONE,   /* the word "none" */
    PT_VALUE_CHOICE, /* one of the '|'-separated words of 'chars' */
    PT_VALUE_SIZE    /* "auto", "inf", or 1..19 decimal digits (bytes) */
} pt_value_kind_t;

typedef struct {
    const char      *name;
    pt_value_kind_t kind;
    const char      *chars;  /* PT_VALUE_LIST: characters of a token */
    const char      *what;   /* for messages */
} pt_setting_def_t;

#define PT_LOWER  "abcdefghijklmnopqrstuvwxyz"
#define PT_UPPER  "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define PT_DIGITS "0123456789"

static const pt_setting_def_t pt_setting_defs[PT_SETTINGS_MAX_KEYS] = {
    {"UCX_PSEL_TLS", PT_VALUE_LIST, PT_LOWER PT_DIGITS "_",
     "transport names ([a-z0-9_], ',' between, optional leading '^')"},
    {"UCX_PSEL_NET_DEVICES", PT_VALUE_LIST,
     PT_LOWER PT_UPPER PT_DIGITS "_.:-",
     "device names ([A-Za-z0-9_.:-], ',' between, optional leading '^')"},
    {"UCX_PSEL_PROTOS", PT_VALUE_LIST, PT_LOWER PT_DIGITS "_/*",
     "protocol patterns ([a-z0-9_/*], ',' between, optional leading '^')"},
    {"UCX_PSEL_MAX_RNDV_LANES", PT_VALUE_LANES, NULL, "a lane count, 1..16"},
    {"UCX_PSEL_MAX_EAGER_LANES", PT_VALUE_LANES, NULL, "a lane count, 1..16"},
    {"UCX_PSEL_CALIBRATION", PT_VALUE_NONE, NULL,
     "'none' (a server never takes a file name from the network)"},
    /* stock UCP's (PT_PATH_UCP: psel_calibrate --ucp and its forked peer) */
    {"UCX_TLS", PT_VALUE_LIST, PT_LOWER PT_DIGITS "_",
     "transport names ([a-z0-9_], ',' between, optional leading '^')"},
    {"UCX_NET_DEVICES", PT_VALUE_LIST, PT_LOWER PT_UPPER PT_DIGITS "_.:-",
     "device names ([A-Za-z0-9_.:-], ',' between, optional leading '^')"},
    {"UCX_PROTO_ENABLE", PT_VALUE_CHOICE, "y|n", "y or n"},
    {"UCX_RNDV_THRESH", PT_VALUE_SIZE, NULL, "auto, inf or a size in bytes"},
    {"UCX_ZCOPY_THRESH", PT_VALUE_SIZE, NULL, "auto, inf or a size in bytes"},
    {"UCX_BCOPY_THRESH", PT_VALUE_SIZE, NULL, "auto, inf or a size in bytes"},
    {"UCX_RNDV_SCHEME", PT_VALUE_CHOICE, "auto|get_zcopy|put_zcopy|am",
     "auto, get_zcopy, put_zcopy or am"},
    {"UCX_PROTOS", PT_VALUE_LIST, PT_LOWER PT_DIGITS "_/*",
     "protocol patterns ([a-z0-9_/*], ',' between, optional leading '^')"},
};

/* The environment as it was before a session changed it: each name the
 * session set, with its value then (NULL: unset), to go back to */
#define PT_ENV_MAX_SAVED  16u
static struct {
    char *name;
    char *value;
} pt_env_saved[PT_ENV_MAX_SAVED];
static unsigned pt_env_num_saved;

const char *pt_settings_key(unsigned i)
{
    return (i < PT_SETTINGS_MAX_KEYS) ? pt_setting_defs[i].name : NULL;
}

int pt_settings_has_ucp(const pt_settings_t *settings)
{
    unsigned i;

    for (i = 0; i < PT_SETTINGS_MAX_KEYS; ++i) {
        if ((settings->value[i][0] != '\0') &&
            strncmp(pt_setting_defs[i].name, "UCX_PSEL_", 9)) {
            return 1;
        }
    }
    return 0;
}

static int pt_value_ok(const pt_setting_def_t *def, const char *value,
                       size_t len)
{
    const char *p = value, *end = value + len;
    size_t token;

    switch (def->kind) {
    case PT_VALUE_NONE:
        return (len == 4) && !memcmp(value, "none", 4);
    case PT_VALUE_CHOICE:
        for (p = def->chars; *p != '\0'; p += token + (p[token] == '|')) {
            token = strcspn(p, "|");
            if ((token == len) && !memcmp(p, value, len)) {
                return 1;
            }
        }
        return 0;
    case PT_VALUE_SIZE:
        if (((len == 4) && !memcmp(value, "auto", 4)) ||
            ((len == 3) && !memcmp(value, "inf", 3))) {
            return 1;
        }
        for (token = 0; (token < len) && (value[token] >= '0') &&
                        (value[token] <= '9'); ++token) {
        }
        return (len >= 1) && (len <= 19) && (token == len);
    case PT_VALUE_LANES:
        return ((len == 1) && (value[0] >= '1') && (value[0] <= '9')) ||
               ((len == 2) && (value[0] == '1') && (value[1] >= '0') &&
                (value[1] <= '6'));
    case PT_VALUE_LIST:
        if ((p < end) && (*p == '^')) {
            ++p;
        }
        for (;;) {
            for (token = 0; (p + token < end) && (p[token] != '\0') &&
                            strchr(def->chars, p[token]); ++token) {
            }
            if (token == 0) {
                return 0; /* empty token, or a character not allowed */
            }
            p += token;
            if (p == end) {
                return 1;
            }
            if (*p++ != ',') {
                return 0;
            }
        }
    }
    return 0;
}

static int pt_settings_fail(char *err, size_t max, unsigned lineno,
                            const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int pt_settings_fail(char *err, size_t max, unsigned lineno,
                            const char *fmt, ...)
{
    int len = snprintf(err, max, "setting %u: ", lineno);
    va_list ap;

    if ((len >= 0) && ((size_t)len < max)) {
        va_start(ap, fmt);
        vsnprintf(err + len, max - len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* A name for messages: what came from the network, printable */
static void pt_settings_name_copy(char *dst, size_t max, const char *src,
                                  size_t len)
{
    size_t i;

    len = (len < max) ? len : (max - 1);
    for (i = 0; i < len; ++i) {
        dst[i] = ((src[i] > ' ') && (src[i] <= '~')) ? src[i] : '?';
    }
    dst[len] = '\0';
}

int pt_settings_parse(const char *text, size_t len, pt_settings_t *settings,
                      char *err, size_t max)
{
    const char *line = text, *end = text + len, *eol, *eq;
    char name[64];
    pt_settings_t result;
    unsigned lineno = 1, i;
    size_t name_len, value_len;

    memset(&result, 0, sizeof(result));
    if (len > PT_SETTINGS_MAX_TEXT) {
        snprintf(err, max, "settings of %zu bytes, at most %u", len,
                 PT_SETTINGS_MAX_TEXT);
        return -1;
    }
    if (memchr(text, '\0', len) != NULL) {
        snprintf(err, max, "settings contain a NUL byte");
        return -1;
    }

    for (; line < end; line = eol + 1, ++lineno) {
        eol = memchr(line, '\n', end - line);
        eol = (eol != NULL) ? eol : end;
        if (eol == line) {
            continue;
        }
        eq = memchr(line, '=', eol - line);
        if (eq == NULL) {
            return pt_settings_fail(err, max, lineno, "no '=' (NAME=VALUE "
                                    "expected)");
        }
        name_len = eq - line;
        pt_settings_name_copy(name, sizeof(name), line, name_len);
        for (i = 0; i < PT_SETTINGS_MAX_KEYS; ++i) {
            if ((strlen(pt_setting_defs[i].name) == name_len) &&
                !memcmp(pt_setting_defs[i].name, line, name_len)) {
                break;
            }
        }
        if (i == PT_SETTINGS_MAX_KEYS) {
            return pt_settings_fail(err, max, lineno, "%s is not among the "
                                    "settings a calibration may send "
                                    "(UCX_PSEL_TLS, UCX_PSEL_NET_DEVICES, "
                                    "UCX_PSEL_PROTOS, UCX_PSEL_MAX_RNDV_LANES, "
                                    "UCX_PSEL_MAX_EAGER_LANES, "
                                    "UCX_PSEL_CALIBRATION; and for stock UCP "
                                    "UCX_TLS, UCX_NET_DEVICES, "
                                    "UCX_PROTO_ENABLE, UCX_RNDV_THRESH, "
                                    "UCX_ZCOPY_THRESH, UCX_BCOPY_THRESH, "
                                    "UCX_RNDV_SCHEME)", name);
        }
        if (result.value[i][0] != '\0') {
            return pt_settings_fail(err, max, lineno, "%s given twice", name);
        }
        value_len = eol - eq - 1;
        if ((value_len == 0) || (value_len > PT_SETTINGS_MAX_VALUE) ||
            !pt_value_ok(&pt_setting_defs[i], eq + 1, value_len)) {
            return pt_settings_fail(err, max, lineno, "%s: bad value (of %zu "
                                    "bytes): expected %s", name, value_len,
                                    pt_setting_defs[i].what);
        }
        memcpy(result.value[i], eq + 1, value_len);
        result.value[i][value_len] = '\0';
    }

    *settings = result;
    return 0;
}

size_t pt_settings_format(const pt_settings_t *settings, char *text,
                          size_t max)
{
    size_t len = 0;
    unsigned i;
    int n;

    if (max > 0) {
        text[0] = '\0';
    }
    for (i = 0; i < PT_SETTINGS_MAX_KEYS; ++i) {
        if (settings->value[i][0] == '\0') {
            continue;
        }
        n = snprintf(text + len, (len < max) ? (max - len) : 0, "%s%s=%s",
                     (len > 0) ? "\n" : "", pt_setting_defs[i].name,
                     settings->value[i]);
        len += (n > 0) ? (size_t)n : 0;
    }
    return len;
}

void pt_env_set(const char *name, const char *value)
{
    const char *before;
    unsigned i;

    for (i = 0; i < pt_env_num_saved; ++i) {
        if (!strcmp(pt_env_saved[i].name, name)) {
            break;
        }
    }
    if ((i == pt_env_num_saved) && (i < PT_ENV_MAX_SAVED)) {
        before                   = getenv(name);
        pt_env_saved[i].name     = strdup(name);
        pt_env_saved[i].value    = (before != NULL) ? strdup(before) : NULL;
        if ((pt_env_saved[i].name != NULL) &&
            ((before == NULL) || (pt_env_saved[i].value != NULL))) {
            ++pt_env_num_saved;
        } else {
            free(pt_env_saved[i].name);
            free(pt_env_saved[i].value);
        }
    }
    setenv(name, value, 1);
}

void pt_env_restore(void)
{
    unsigned i;

    for (i = 0; i < pt_env_num_saved; ++i) {
        if (pt_env_saved[i].value != NULL) {
            setenv(pt_env_saved[i].name, pt_env_saved[i].value, 1);
        } else {
            unsetenv(pt_env_saved[i].name);
        }
        free(pt_env_saved[i].name);
        free(pt_env_saved[i].value);
    }
    pt_env_num_saved = 0;
}

void pt_settings_apply(const pt_settings_t *settings)
{
    unsigned i;

    pt_env_restore();
    for (i = 0; i < PT_SETTINGS_MAX_KEYS; ++i) {
        if (settings->value[i][0] != '\0') {
            pt_env_set(pt_setting_defs[i].name, settings->value[i]);
        }
    }
}
