/**
 * @file ucx_info_import.c
 * Parser of `ucx_info -d` text. See ucx_info_import.h and docs/lane-selection.md for the
 * accepted layouts and the rules for values the text does not show.
 */
#include "ucx_info_import.h"
#include "resource_table.h"
#include "text_kind.h"
#include "text_scan.h"

#include <ucs/debug/log_def.h>
#include <ucs/memory/memory_type.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/sys/math.h>
#include <ucs/sys/string.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

/* ucx_info prints bandwidth in MB/sec with MB = 2^20 bytes (UCS_MBYTE) */
#define PSEL_IMPORT_INITIAL_CAP  8


/** Which operation class a limit line describes */
enum {
    PSEL_IMPORT_OP_PUT,
    PSEL_IMPORT_OP_GET,
    PSEL_IMPORT_OP_AM
};


/** How the value of an iface attribute line is parsed */
typedef enum {
    PSEL_IKEY_TYPE,
    PSEL_IKEY_SYS_DEV,
    PSEL_IKEY_BANDWIDTH,
    PSEL_IKEY_LATENCY,
    PSEL_IKEY_OVERHEAD,
    PSEL_IKEY_SHORT,
    PSEL_IKEY_BCOPY,
    PSEL_IKEY_ZCOPY,
    PSEL_IKEY_OPT_ALIGN,
    PSEL_IKEY_ALIGN_MTU,
    PSEL_IKEY_AM_HDR,
    PSEL_IKEY_DOMAIN,
    PSEL_IKEY_ATOMIC,
    PSEL_IKEY_CONNECTION,
    PSEL_IKEY_PRIORITY,
    PSEL_IKEY_NUM_PATHS,
    PSEL_IKEY_MAX_EPS,
    PSEL_IKEY_DEV_ADDR,
    PSEL_IKEY_IFACE_ADDR,
    PSEL_IKEY_EP_ADDR,
    PSEL_IKEY_ERR_HANDLING
} psel_ikey_kind_t;


/** One known attribute line of a transport/device block */
typedef struct psel_ikey {
    const char       *name;     /* key as printed, compared case-insensitively */
    psel_ikey_kind_t kind;
    int              arg;       /* operation class or UCT_ATOMIC_OP_* */
    uint64_t         flag;      /* UCT_IFACE_FLAG_* implied by the line */
    int              fetch;     /* atomics: the fetching variant */
    int              needed;    /* a block without it is left out */
    const char       *grammar;  /* what the value must look like */
} psel_ikey_t;


#define PSEL_SIZE_GRAMMAR  "'<= SIZE', 'unlimited' or 'inf'"
#define PSEL_ZCOPY_GRAMMAR "'<= SIZE', 'MIN..MAX' or 'unlimited', " \
                           "optionally ', up to N iov'"
#define PSEL_ATOMIC_GRAMMAR "'32, 64 bit', '32 bit' or '64 bit'"

static const psel_ikey_t psel_ikeys[] = {
    {"type", PSEL_IKEY_TYPE, 0, 0, 0, 0,
     "'network', 'intra-node', 'loopback', 'accelerator' or another word"},
    {"system device", PSEL_IKEY_SYS_DEV, 0, 0, 0, 0, "'NAME (N)' or '<unknown>'"},
    {"bandwidth", PSEL_IKEY_BANDWIDTH, 0, 0, 0, 1,
     "'SHARED/ppn + DEDICATED MB/sec', 'DEDICATED + SHARED MB/sec' or "
     "'N MB/sec', above 0 in total"},
    {"latency", PSEL_IKEY_LATENCY, 0, 0, 0, 1,
     "'C nsec', 'C + M * N nsec' or 'C nsec + M * N'"},
    {"overhead", PSEL_IKEY_OVERHEAD, 0, 0, 0, 1, "'N nsec'"},
    {"put_short", PSEL_IKEY_SHORT, PSEL_IMPORT_OP_PUT, UCT_IFACE_FLAG_PUT_SHORT,
     0, 0, PSEL_SIZE_GRAMMAR},
    {"put_bcopy", PSEL_IKEY_BCOPY, PSEL_IMPORT_OP_PUT, UCT_IFACE_FLAG_PUT_BCOPY,
     0, 0, PSEL_SIZE_GRAMMAR},
    {"put_zcopy", PSEL_IKEY_ZCOPY, PSEL_IMPORT_OP_PUT, UCT_IFACE_FLAG_PUT_ZCOPY,
     0, 0, PSEL_ZCOPY_GRAMMAR},
    {"put_opt_zcopy_align", PSEL_IKEY_OPT_ALIGN, PSEL_IMPORT_OP_PUT, 0, 0, 0,
     PSEL_SIZE_GRAMMAR},
    {"put_align_mtu", PSEL_IKEY_ALIGN_MTU, PSEL_IMPORT_OP_PUT, 0, 0, 0,
     PSEL_SIZE_GRAMMAR},
    {"get_short", PSEL_IKEY_SHORT, PSEL_IMPORT_OP_GET, UCT_IFACE_FLAG_GET_SHORT,
     0, 0, PSEL_SIZE_GRAMMAR},
    {"get_bcopy", PSEL_IKEY_BCOPY, PSEL_IMPORT_OP_GET, UCT_IFACE_FLAG_GET_BCOPY,
     0, 0, PSEL_SIZE_GRAMMAR},
    {"get_zcopy", PSEL_IKEY_ZCOPY, PSEL_IMPORT_OP_GET, UCT_IFACE_FLAG_GET_ZCOPY,
     0, 0, PSEL_ZCOPY_GRAMMAR},
    {"get_opt_zcopy_align", PSEL_IKEY_OPT_ALIGN, PSEL_IMPORT_OP_GET, 0, 0, 0,
     PSEL_SIZE_GRAMMAR},
    {"get_align_mtu", PSEL_IKEY_ALIGN_MTU, PSEL_IMPORT_OP_GET, 0, 0, 0,
     PSEL_SIZE_GRAMMAR},
    {"am_short", PSEL_IKEY_SHORT, PSEL_IMPORT_OP_AM, UCT_IFACE_FLAG_AM_SHORT,
     0, 0, PSEL_SIZE_GRAMMAR},
    {"am_bcopy", PSEL_IKEY_BCOPY, PSEL_IMPORT_OP_AM, UCT_IFACE_FLAG_AM_BCOPY,
     0, 0, PSEL_SIZE_GRAMMAR},
    {"am_zcopy", PSEL_IKEY_ZCOPY, PSEL_IMPORT_OP_AM, UCT_IFACE_FLAG_AM_ZCOPY,
     0, 0, PSEL_ZCOPY_GRAMMAR},
    {"am_opt_zcopy_align", PSEL_IKEY_OPT_ALIGN, PSEL_IMPORT_OP_AM, 0, 0, 0,
     PSEL_SIZE_GRAMMAR},
    {"am_align_mtu", PSEL_IKEY_ALIGN_MTU, PSEL_IMPORT_OP_AM, 0, 0, 0,
     PSEL_SIZE_GRAMMAR},
    {"am header", PSEL_IKEY_AM_HDR, 0, 0, 0, 0, PSEL_SIZE_GRAMMAR},
    {"domain", PSEL_IKEY_DOMAIN, 0, 0, 0, 0, "'cpu' or 'device'"},
    {"atomic_add", PSEL_IKEY_ATOMIC, UCT_ATOMIC_OP_ADD, 0, 0, 0,
     PSEL_ATOMIC_GRAMMAR},
    {"atomic_and", PSEL_IKEY_ATOMIC, UCT_ATOMIC_OP_AND, 0, 0, 0,
     PSEL_ATOMIC_GRAMMAR},
    {"atomic_or", PSEL_IKEY_ATOMIC, UCT_ATOMIC_OP_OR, 0, 0, 0,
     PSEL_ATOMIC_GRAMMAR},
    {"atomic_xor", PSEL_IKEY_ATOMIC, UCT_ATOMIC_OP_XOR, 0, 0, 0,
     PSEL_ATOMIC_GRAMMAR},
    {"atomic_fadd", PSEL_IKEY_ATOMIC, UCT_ATOMIC_OP_ADD, 0, 1, 0,
     PSEL_ATOMIC_GRAMMAR},
    {"atomic_fand", PSEL_IKEY_ATOMIC, UCT_ATOMIC_OP_AND, 0, 1, 0,
     PSEL_ATOMIC_GRAMMAR},
    {"atomic_for", PSEL_IKEY_ATOMIC, UCT_ATOMIC_OP_OR, 0, 1, 0,
     PSEL_ATOMIC_GRAMMAR},
    {"atomic_fxor", PSEL_IKEY_ATOMIC, UCT_ATOMIC_OP_XOR, 0, 1, 0,
     PSEL_ATOMIC_GRAMMAR},
    {"atomic_swap", PSEL_IKEY_ATOMIC, UCT_ATOMIC_OP_SWAP, 0, 1, 0,
     PSEL_ATOMIC_GRAMMAR},
    {"atomic_cswap", PSEL_IKEY_ATOMIC, UCT_ATOMIC_OP_CSWAP, 0, 1, 0,
     PSEL_ATOMIC_GRAMMAR},
    {"connection", PSEL_IKEY_CONNECTION, 0, 0, 0, 1,
     "'to ep', 'to iface', both or 'none'"},
    /* "priority" before UCX 1.8, "device priority" since; one slot */
    {"device priority", PSEL_IKEY_PRIORITY, 0, 0, 0, 0, "an integer"},
    {"priority", PSEL_IKEY_PRIORITY, 0, 0, 0, 0, "an integer"},
    {"device num paths", PSEL_IKEY_NUM_PATHS, 0, 0, 0, 0, "an integer"},
    {"max eps", PSEL_IKEY_MAX_EPS, 0, 0, 0, 0, "an integer or 'inf'"},
    {"device address", PSEL_IKEY_DEV_ADDR, 0, 0, 0, 0, "'N bytes'"},
    {"iface address", PSEL_IKEY_IFACE_ADDR, 0, 0, 0, 0, "'N bytes'"},
    {"ep address", PSEL_IKEY_EP_ADDR, 0, 0, 0, 0, "'N bytes'"},
    {"error handling", PSEL_IKEY_ERR_HANDLING, 0, 0, 0, 0,
     "a list such as 'peer failure, ep_check' or 'none'"},
};

#define PSEL_IKEY_COUNT  (sizeof(psel_ikeys) / sizeof(psel_ikeys[0]))


/** Known attribute lines of a memory domain block */
typedef enum {
    PSEL_MDKEY_COMPONENT,
    PSEL_MDKEY_REGISTER,
    PSEL_MDKEY_ALLOCATE,
    PSEL_MDKEY_RKEY,
    PSEL_MDKEY_MEM_TYPES,
    PSEL_MDKEY_LAST
} psel_mdkey_t;

static const struct {
    const char *name;
    const char *grammar;
} psel_mdkeys[PSEL_MDKEY_LAST] = {
    [PSEL_MDKEY_COMPONENT] = {"component", "a component name"},
    [PSEL_MDKEY_REGISTER]  = {"register",
                              "'unlimited' or '<= SIZE', then ', cost: C nsec' "
                              "or ', cost: C + M * N nsec'"},
    [PSEL_MDKEY_ALLOCATE]  = {"allocate", PSEL_SIZE_GRAMMAR},
    [PSEL_MDKEY_RKEY]      = {"remote key", "'N bytes'"},
    [PSEL_MDKEY_MEM_TYPES] = {"memory types",
                              "a list such as 'host (access,reg,cache)'"},
};


/** Memory domain lines without a value, each implying a UCT_MD_FLAG_* */
static const struct {
    const char *text;
    uint64_t   flag;
} psel_md_sentences[] = {
    {"rkey_ptr is supported",                     UCT_MD_FLAG_RKEY_PTR},
    {"local memory handle is required for zcopy", UCT_MD_FLAG_NEED_MEMH},
    {"memory invalidation is supported",          UCT_MD_FLAG_INVALIDATE},
    {"supports client-server connection establishment via sockaddr",
     UCT_MD_FLAG_SOCKADDR},
};


/** Parser state */
typedef struct psel_import {
    const char      *origin;
    unsigned        line_no;
    const char      *got;          /* the current line as read (NULL at the
                                      end of input); columns count from it */
    const char      *work;         /* the copy of it being parsed (same
                                      offsets, NULs written into it) */
    int             seen_hash;     /* a '#' line was seen: header is over */
    int             bare;          /* lines without '#' are ucx_info's too */
    unsigned        blocks_done;   /* resource blocks closed so far */
    psel_text_kind_detector_t kind; /* what the input looks like */
    char            ucx_version[PSEL_NAME_MAX];
    char            top_component[PSEL_NAME_MAX]; /* top-level "Component:" */

    /* current memory domain; its fields are kept in md_tmpl */
    int             in_md;
    int             in_cm;         /* inside a "Connection manager:" block */
    int             md_has_mem_types;
    unsigned        md_seen;       /* bitmap of psel_mdkey_t */
    unsigned        md_resources;  /* resources opened under this MD */
    psel_resource_t md_tmpl;

    /* current transport and resource */
    char            tl_name[PSEL_NAME_MAX];
    unsigned        tl_line;       /* Transport waiting for a Device, or 0 */
    int             in_res;
    unsigned        res_line;
    uint64_t        res_seen;      /* bitmap of psel_ikeys indices */
    int             res_last_slot; /* slot of the block's latest line */
    int             end_slot;      /* slot of the line that ends a block in
                                      this input, learned from its first
                                      complete block; -1 until then */
    int             type_known;    /* a known "Type:" line was read */
    int             bw_total_form; /* UCX <= 1.6: "N MB/sec" */
    double          bw_total;
    psel_resource_t res;

    /* output */
    psel_resource_t *resources;
    unsigned        count;
    unsigned        capacity;
} psel_import_t;


/*
 * "origin:line:column: expected ..., found '...'" at @a at, a position in the
 * current line (NULL: the start of its text, or the end of input)
 */
static ucs_status_t UCS_F_PRINTF(3, 4)
psel_import_error(const psel_import_t *imp, const char *at,
                  const char *expected_fmt, ...)
{
    psel_text_pos_t pos = {imp->origin, imp->line_no, imp->got};
    char expected[256];
    va_list ap;

    va_start(ap, expected_fmt);
    vsnprintf(expected, sizeof(expected), expected_fmt, ap);
    va_end(ap);

    if (imp->got != NULL) {
        /* positions come from the work copy; report them in the line */
        at = (at == NULL) ? imp->got + strspn(imp->got, " \t") :
                            imp->got + (at - imp->work);
    }
    psel_text_error(&pos, at, "%s", expected);
    return UCS_ERR_INVALID_PARAM;
}

/*
 * ---- value parsing ----
 * A helper advances *p past what it matched and returns 1; on failure it
 * returns 0 with *p at the first character that did not match (the column
 * of the error message). Literals and numbers leave *p alone on failure.
 */

static void psel_import_skip_ws(const char **p)
{
    while ((**p == ' ') || (**p == '\t')) {
        ++*p;
    }
}

static int psel_import_at_end(const char **p)
{
    psel_import_skip_ws(p);
    return **p == '\0';
}

/* Match a literal (after blanks); words must not continue into letters */
static int psel_import_literal(const char **p, const char *lit)
{
    const char *s = *p;
    size_t len    = strlen(lit);

    psel_import_skip_ws(&s);
    if (strncasecmp(s, lit, len) != 0) {
        return 0;
    }
    if (isalpha((unsigned char)lit[len - 1]) && isalpha((unsigned char)s[len])) {
        return 0;
    }
    *p = s + len;
    return 1;
}

/* Numbers: the one scanner of text_scan.h (C locale, no sign/inf/nan/hex) */
static int psel_import_u64(const char **p, uint64_t *value_p)
{
    if (psel_scan_u64(p, value_p)) {
        return 1;
    }
    psel_import_skip_ws(p);
    return 0;
}

static int psel_import_double(const char **p, double *value_p)
{
    if (psel_scan_double(p, value_p)) {
        return 1;
    }
    psel_import_skip_ws(p);
    return 0;
}

/* Leave a failed compound match at @a stop */
static int psel_import_fail(const char **p, const char *stop)
{
    *p = stop;
    psel_import_skip_ws(p);
    return 0;
}

/*
 * A size as ucs_memunits_to_str prints it: "8256", "8K", "1G", "8k" (UCX 1.6),
 * "unlimited" or "inf". ucs_str_to_memunits needs the whole string, and the
 * values here sit inside longer text, hence this small cursor version.
 */
static int psel_import_size(const char **p, size_t *size_p)
{
    const char *s = *p;
    uint64_t value;
    unsigned shift;

    if (psel_import_literal(&s, "unlimited") || psel_import_literal(&s, "inf")) {
        *size_p = PSEL_SIZE_UNLIMITED;
        *p      = s;
        return 1;
    }
    if (!psel_import_u64(&s, &value)) {
        return psel_import_fail(p, s);
    }
    switch (*s) {
    case 'k': case 'K': shift = 10; ++s; break;
    case 'm': case 'M': shift = 20; ++s; break;
    case 'g': case 'G': shift = 30; ++s; break;
    case 't': case 'T': shift = 40; ++s; break;
    default:            shift = 0;       break;
    }
    if ((shift > 0) && (*s == 'b' || *s == 'B')) {
        ++s;
    }
    if (isalnum((unsigned char)*s) || (value > (SIZE_MAX >> shift))) {
        return psel_import_fail(p, isalnum((unsigned char)*s) ? s : *p);
    }
    *size_p = (size_t)value << shift;
    *p      = s;
    return 1;
}

/* "<= SIZE" or a bare size */
static int psel_import_max_size(const char **p, size_t *size_p)
{
    const char *s = *p;

    psel_import_literal(&s, "<=");
    if (!psel_import_size(&s, size_p)) {
        return psel_import_fail(p, s);
    }
    *p = s;
    return 1;
}

/* "<= MAX", ">= MIN", "MIN..MAX", "unlimited", "inf" or a bare maximum */
static int psel_import_range(const char **p, size_t *min_p, size_t *max_p)
{
    const char *s = *p, *at;
    size_t min = 0, max;

    if (psel_import_literal(&s, "<=")) {
        if (!psel_import_size(&s, &max)) {
            return psel_import_fail(p, s);
        }
    } else if (psel_import_literal(&s, ">=")) {
        if (!psel_import_size(&s, &min)) {
            return psel_import_fail(p, s);
        }
        max = PSEL_SIZE_UNLIMITED;
    } else {
        if (!psel_import_size(&s, &max)) {
            return psel_import_fail(p, s);
        }
        if (psel_import_literal(&s, "..")) {
            min = max;
            at  = s;
            if (!psel_import_size(&s, &max)) {
                return psel_import_fail(p, s);
            }
            if (min > max) {
                return psel_import_fail(p, at);
            }
        }
    }
    *min_p = min;
    *max_p = max;
    *p     = s;
    return 1;
}

/* An optional time unit; *scale_p is seconds per unit, or 0 if none */
static void psel_import_time_unit(const char **p, double *scale_p)
{
    static const struct {
        const char *name;
        double     scale;
    } units[] = {
        {"nsec", 1e-9}, {"ns", 1e-9}, {"usec", 1e-6}, {"us", 1e-6},
        {"msec", 1e-3}, {"ms", 1e-3}, {"sec", 1},     {"s", 1}
    };
    unsigned i;

    for (i = 0; i < sizeof(units) / sizeof(units[0]); ++i) {
        if (psel_import_literal(p, units[i].name)) {
            *scale_p = units[i].scale;
            return;
        }
    }
    *scale_p = 0;
}

/*
 * A time that may grow with the number of endpoints N, in seconds:
 *   "C nsec"               every version
 *   "C + M * N nsec"       UCX >= 1.8 (PRINT_LINEAR_FUNC_NS in tl_info.c)
 *   "C nsec + M * N"       UCX <= 1.7 (latency.overhead, then .growth)
 * also with usec/msec/sec, a unit after both terms, and any spacing
 * ("600nsec+1*N"). A term without its own unit takes the other term's;
 * at least one unit is required.
 */
static int psel_import_linear_time(const char **p, ucs_linear_func_t *func)
{
    const char *s = *p;
    double c, m = 0, c_scale, m_scale = 0, end_scale;

    if (!psel_import_double(&s, &c)) {
        return psel_import_fail(p, s);
    }
    psel_import_time_unit(&s, &c_scale);
    if (psel_import_literal(&s, "+")) {
        if (!psel_import_double(&s, &m)) {
            return psel_import_fail(p, s);
        }
        psel_import_time_unit(&s, &m_scale);
        if (!psel_import_literal(&s, "*") || !psel_import_literal(&s, "N")) {
            return psel_import_fail(p, s);
        }
    }
    psel_import_time_unit(&s, &end_scale);
    if (end_scale != 0) {
        /* "C + M * N nsec": the unit applies to the terms without one */
        c_scale = (c_scale != 0) ? c_scale : end_scale;
        m_scale = (m_scale != 0) ? m_scale : end_scale;
    }
    if (c_scale == 0) {
        return psel_import_fail(p, s);
    }
    func->c = c * c_scale;
    func->m = m * ((m_scale != 0) ? m_scale : c_scale);
    *p      = s;
    return 1;
}

static int psel_import_bytes(const char **p, size_t *size_p)
{
    const char *s = *p;
    uint64_t value;

    if (!psel_import_u64(&s, &value) || (value > SIZE_MAX)) {
        return psel_import_fail(p, s);
    }
    if (!psel_import_literal(&s, "bytes")) {
        return psel_import_fail(p, s);
    }
    *size_p = value;
    *p      = s;
    return 1;
}

static int psel_import_uint(const char **p, unsigned *value_p)
{
    const char *s = *p;
    uint64_t value;

    if (!psel_import_u64(&s, &value) || (value > UINT_MAX)) {
        return psel_import_fail(p, s);
    }
    *value_p = value;
    *p       = s;
    return 1;
}

/*
 * Split a comma-separated list at the top level (commas inside parentheses
 * belong to the item). Returns the next item trimmed into @a item, or 0 at the
 * end of the list; -1 on unbalanced parentheses or an empty item.
 */
static int psel_import_next_item(const char **p, char *item, size_t max)
{
    const char *s = *p, *start;
    int depth     = 0;
    size_t len;

    psel_import_skip_ws(&s);
    if (*s == '\0') {
        return 0;
    }
    start = s;
    for (; *s != '\0'; ++s) {
        if (*s == '(') {
            ++depth;
        } else if (*s == ')') {
            if (--depth < 0) {
                return -1;
            }
        } else if ((*s == ',') && (depth == 0)) {
            break;
        }
    }
    if (depth != 0) {
        return -1;
    }
    len = s - start;
    while ((len > 0) && isspace((unsigned char)start[len - 1])) {
        --len;
    }
    if ((len == 0) || (len >= max)) {
        return -1;
    }
    memcpy(item, start, len);
    item[len] = '\0';
    *p        = (*s == ',') ? s + 1 : s;
    return 1;
}

/*
 * An item of a list that this importer does not know: a plain word (new flag
 * names of later UCX versions) is skipped, anything else is garbled input.
 */
static int psel_import_unknown_word(const psel_import_t *imp, const char *key,
                                    const char *item)
{
    const char *s;

    for (s = item; *s != '\0'; ++s) {
        if (!isalpha((unsigned char)*s) && (strchr(" _-()", *s) == NULL)) {
            return 0;
        }
    }
    ucs_debug("%s:%u: '%s': skipping unknown item '%s'", imp->origin,
              imp->line_no, key, item);
    return 1;
}

static int psel_import_copy_name(char *dest, const char *src, size_t len)
{
    if ((len == 0) || (len >= PSEL_NAME_MAX)) {
        return 0;
    }
    memcpy(dest, src, len);
    dest[len] = '\0';
    return 1;
}

/* ---- iface attributes ---- */

static psel_op_limits_t *psel_import_op(psel_resource_t *res, int op)
{
    switch (op) {
    case PSEL_IMPORT_OP_PUT: return &res->put;
    case PSEL_IMPORT_OP_GET: return &res->get;
    default:                 return &res->am;
    }
}

/* A "Type:" name; an unknown one (a later UCX) is derived from the transport
 * name when the block ends, as for layouts without the line */
static int psel_import_type(psel_import_t *imp, const char *value,
                            int *known_p)
{
    static const struct {
        const char        *name;
        uct_device_type_t type;
    } types[] = {
        {"network",     UCT_DEVICE_TYPE_NET},
        {"intra-node",  UCT_DEVICE_TYPE_SHM},
        {"accelerator", UCT_DEVICE_TYPE_ACC},
        {"loopback",    UCT_DEVICE_TYPE_SELF},
    };
    unsigned i;

    for (i = 0; i < sizeof(types) / sizeof(types[0]); ++i) {
        if (!strcasecmp(value, types[i].name)) {
            imp->res.dev_type = types[i].type;
            *known_p          = 1;
            return 1;
        }
    }
    if (!psel_import_unknown_word(imp, "Type", value)) {
        return 0;
    }
    *known_p = 0;
    return 1;
}

/* "MB/sec" (every version) and the spellings a later or edited dump may use;
 * MB = 2^20 bytes as UCS_MBYTE */
static int psel_import_bw_unit(const char **p, double *scale_p)
{
    static const struct {
        const char *name;
        double     scale;
    } units[] = {
        {"MB/sec", UCS_MBYTE},       {"MB/s", UCS_MBYTE},
        {"MiB/s", UCS_MBYTE},        {"GB/sec", UCS_GBYTE},
        {"GB/s", UCS_GBYTE},         {"KB/sec", UCS_KBYTE},
        {"KB/s", UCS_KBYTE}
    };
    unsigned i;

    for (i = 0; i < sizeof(units) / sizeof(units[0]); ++i) {
        if (psel_import_literal(p, units[i].name)) {
            *scale_p = units[i].scale;
            return 1;
        }
    }
    return 0;
}

static int psel_import_bandwidth(psel_import_t *imp, const char **p)
{
    const char *s = *p;
    double x, y, scale;
    enum { BW_PPN, BW_SUM, BW_TOTAL } form;

    if (!psel_import_double(&s, &x)) {
        return psel_import_fail(p, s);
    }
    if (psel_import_literal(&s, "/ppn")) {
        /* UCX >= 1.9: shared/ppn + dedicated */
        form = BW_PPN;
        if (!psel_import_literal(&s, "+") || !psel_import_double(&s, &y)) {
            return psel_import_fail(p, s);
        }
    } else if (psel_import_literal(&s, "+")) {
        /* UCX 1.7-1.8: dedicated + shared (shm prints "12179.00 + 0.00") */
        form = BW_SUM;
        if (!psel_import_double(&s, &y)) {
            return psel_import_fail(p, s);
        }
    } else {
        /* UCX <= 1.6: one number, split by device type when the block ends */
        form = BW_TOTAL;
        y    = 0;
    }
    if (!psel_import_bw_unit(&s, &scale) || !psel_import_at_end(&s)) {
        return psel_import_fail(p, s);
    }
    if (!((x + y) > 0)) {
        /* a lane that moves nothing: lane scores and costs divide by it */
        return psel_import_fail(p, *p);
    }

    switch (form) {
    case BW_PPN:
        imp->res.bw_shared    = x * scale;
        imp->res.bw_dedicated = y * scale;
        break;
    case BW_SUM:
        imp->res.bw_dedicated = x * scale;
        imp->res.bw_shared    = y * scale;
        break;
    case BW_TOTAL:
        imp->bw_total_form = 1;
        imp->bw_total      = x * scale;
        break;
    }
    *p = s;
    return 1;
}

static int psel_import_atomic(psel_import_t *imp, const psel_ikey_t *key,
                              const char **p)
{
    uint64_t bits, op = UCS_BIT(key->arg);
    const char *s = *p, *at;
    int has32 = 0, has64 = 0;

    do {
        at = s;
        if (!psel_import_u64(&s, &bits)) {
            return psel_import_fail(p, s);
        }
        if (bits == 32) {
            has32 = 1;
        } else if (bits == 64) {
            has64 = 1;
        } else {
            return psel_import_fail(p, at);
        }
    } while (psel_import_literal(&s, ","));
    if (!psel_import_literal(&s, "bit") || !psel_import_at_end(&s)) {
        return psel_import_fail(p, s);
    }

    if (has32) {
        *(key->fetch ? &imp->res.atomic32_fops : &imp->res.atomic32_ops) |= op;
    }
    if (has64) {
        *(key->fetch ? &imp->res.atomic64_fops : &imp->res.atomic64_ops) |= op;
    }
    *p = s;
    return 1;
}

static int psel_import_connection(psel_import_t *imp, const char **p)
{
    const char *s = *p, *at = *p;
    char item[PSEL_NAME_MAX];
    int rc, any = 0;

    while ((rc = psel_import_next_item(&s, item, sizeof(item))) > 0) {
        any = 1;
        if (!strcasecmp(item, "to ep")) {
            imp->res.cap_flags |= UCT_IFACE_FLAG_CONNECT_TO_EP;
        } else if (!strcasecmp(item, "to iface")) {
            imp->res.cap_flags |= UCT_IFACE_FLAG_CONNECT_TO_IFACE;
        } else if (!strcasecmp(item, "to sockaddr")) {
            imp->res.cap_flags |= UCT_IFACE_FLAG_CONNECT_TO_SOCKADDR;
        } else if (!strcasecmp(item, "none")) {
            /* UCX 1.7's sockcm: no connection to ep or iface (never a lane) */
        } else if (!psel_import_unknown_word(imp, "connection", item)) {
            return psel_import_fail(p, at);
        }
        at = s;
    }
    if ((rc != 0) || !any) {
        return psel_import_fail(p, s);
    }
    *p = s;
    return 1;
}

static int psel_import_buffer_errors(psel_import_t *imp, const char *inner)
{
    char copy[PSEL_NAME_MAX], *tok, *save;
    int any = 0;

    ucs_strncpy_zero(copy, inner, sizeof(copy));
    for (tok = strtok_r(copy, ", ", &save); tok != NULL;
         tok = strtok_r(NULL, ", ", &save)) {
        any = 1;
        if (!strcasecmp(tok, "short")) {
            imp->res.cap_flags |= UCT_IFACE_FLAG_ERRHANDLE_SHORT_BUF;
        } else if (!strcasecmp(tok, "bcopy")) {
            imp->res.cap_flags |= UCT_IFACE_FLAG_ERRHANDLE_BCOPY_BUF;
        } else if (!strcasecmp(tok, "zcopy")) {
            imp->res.cap_flags |= UCT_IFACE_FLAG_ERRHANDLE_ZCOPY_BUF;
        } else if (!psel_import_unknown_word(imp, "error handling", tok)) {
            return 0;
        }
    }
    return any;
}

static int psel_import_err_handling(psel_import_t *imp, const char **p)
{
    static const struct {
        const char *name;
        uint64_t   flag;
    } names[] = {
        {"remote access", UCT_IFACE_FLAG_ERRHANDLE_REMOTE_MEM},
        {"peer failure",  UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE},
        {"ep_check",      UCT_IFACE_FLAG_EP_CHECK},
        {"keepalive",     UCT_IFACE_FLAG_EP_KEEPALIVE},
    };
    const char *s = *p, *at = *p;
    char item[PSEL_NAME_MAX];
    unsigned i, n = 0;
    size_t len;
    int rc, none = 0;

    while ((rc = psel_import_next_item(&s, item, sizeof(item))) > 0) {
        ++n;
        len = strlen(item);
        if (!strcasecmp(item, "none")) {
            none = 1;
        } else if (!strncasecmp(item, "buffer (", 8) && (item[len - 1] == ')')) {
            item[len - 1] = '\0';
            if (!psel_import_buffer_errors(imp, item + 8)) {
                return psel_import_fail(p, at);
            }
        } else {
            for (i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
                if (!strcasecmp(item, names[i].name)) {
                    imp->res.cap_flags |= names[i].flag;
                    break;
                }
            }
            if ((i == sizeof(names) / sizeof(names[0])) &&
                !psel_import_unknown_word(imp, "error handling", item)) {
                return psel_import_fail(p, at);
            }
        }
        if (none && (n > 1)) {
            /* "none" is the whole list or nothing */
            return psel_import_fail(p, at);
        }
        at = s;
    }
    if ((rc != 0) || (n == 0)) {
        return psel_import_fail(p, s);
    }
    *p = s;
    return 1;
}

static int psel_import_sys_dev(psel_import_t *imp, const char *s)
{
    const char *paren;

    if (!strcmp(s, "<unknown>")) {
        imp->res.sys_dev[0] = '\0';
        return 1;
    }
    /* "mlx5_0 (0)": keep the name, drop UCX's topology index */
    paren = strstr(s, " (");
    return psel_import_copy_name(imp->res.sys_dev, s,
                                 (paren != NULL) ? (size_t)(paren - s) :
                                                   strlen(s));
}

/* A value that is one size (after "<=") and nothing else */
static int psel_import_size_line(const char **p, size_t *size_p)
{
    return psel_import_max_size(p, size_p) && psel_import_at_end(p);
}

/*
 * Parse one iface attribute value at *sp. On failure *sp is where the text
 * stopped matching the key's grammar.
 */
static int psel_import_iface_value(psel_import_t *imp, const psel_ikey_t *key,
                                   const char **sp)
{
    psel_resource_t *res  = &imp->res;
    psel_op_limits_t *lim = psel_import_op(res, key->arg);
    ucs_linear_func_t ovh;
    const char *at;
    size_t min, max;
    uint64_t value;

    res->cap_flags |= key->flag;
    switch (key->kind) {
    case PSEL_IKEY_TYPE:
        return psel_import_type(imp, *sp, &imp->type_known);
    case PSEL_IKEY_SYS_DEV:
        return psel_import_sys_dev(imp, *sp);
    case PSEL_IKEY_BANDWIDTH:
        return psel_import_bandwidth(imp, sp);
    case PSEL_IKEY_LATENCY:
        return psel_import_linear_time(sp, &res->latency) &&
               psel_import_at_end(sp);
    case PSEL_IKEY_OVERHEAD:
        at = *sp;
        if (!psel_import_linear_time(sp, &ovh)) {
            return 0;
        }
        if (ovh.m != 0) {
            /* an overhead does not grow with endpoints */
            *sp = at;
            return 0;
        }
        res->overhead = ovh.c;
        return psel_import_at_end(sp);
    case PSEL_IKEY_SHORT:
        return psel_import_size_line(sp, &lim->max_short);
    case PSEL_IKEY_BCOPY:
        return psel_import_size_line(sp, &lim->max_bcopy);
    case PSEL_IKEY_ZCOPY:
        if (!psel_import_range(sp, &min, &max)) {
            return 0;
        }
        lim->min_zcopy = min;
        lim->max_zcopy = max;
        lim->max_iov   = 1; /* UCT zcopy always takes at least one iov */
        if (psel_import_literal(sp, ",")) {
            if (!psel_import_literal(sp, "up to")) {
                return psel_import_fail(sp, *sp);
            }
            at = *sp;
            if (!psel_import_u64(sp, &value)) {
                return 0;
            }
            if ((value == 0) || (value > SIZE_MAX)) {
                return psel_import_fail(sp, at);
            }
            if (!psel_import_literal(sp, "iov")) {
                return psel_import_fail(sp, *sp);
            }
            lim->max_iov = value;
        }
        return psel_import_at_end(sp);
    case PSEL_IKEY_OPT_ALIGN:
        return psel_import_size_line(sp, &lim->opt_zcopy_align);
    case PSEL_IKEY_ALIGN_MTU:
        return psel_import_size_line(sp, &lim->align_mtu);
    case PSEL_IKEY_AM_HDR:
        return psel_import_size_line(sp, &res->am_max_hdr);
    case PSEL_IKEY_DOMAIN:
        if (!strcasecmp(*sp, "cpu")) {
            res->cap_flags |= UCT_IFACE_FLAG_ATOMIC_CPU;
        } else if (!strcasecmp(*sp, "device")) {
            res->cap_flags |= UCT_IFACE_FLAG_ATOMIC_DEVICE;
        } else {
            return 0;
        }
        return 1;
    case PSEL_IKEY_ATOMIC:
        return psel_import_atomic(imp, key, sp);
    case PSEL_IKEY_CONNECTION:
        return psel_import_connection(imp, sp);
    case PSEL_IKEY_PRIORITY:
        return psel_import_uint(sp, &res->priority) && psel_import_at_end(sp);
    case PSEL_IKEY_NUM_PATHS:
        at = *sp;
        if (!psel_import_uint(sp, &res->dev_num_paths)) {
            return 0;
        }
        if (res->dev_num_paths == 0) {
            return psel_import_fail(sp, at);
        }
        return psel_import_at_end(sp);
    case PSEL_IKEY_MAX_EPS:
        return psel_import_size(sp, &res->max_num_eps) && psel_import_at_end(sp);
    case PSEL_IKEY_DEV_ADDR:
        return psel_import_bytes(sp, &res->device_addr_len) &&
               psel_import_at_end(sp);
    case PSEL_IKEY_IFACE_ADDR:
        return psel_import_bytes(sp, &res->iface_addr_len) &&
               psel_import_at_end(sp);
    case PSEL_IKEY_EP_ADDR:
        return psel_import_bytes(sp, &res->ep_addr_len) &&
               psel_import_at_end(sp);
    case PSEL_IKEY_ERR_HANDLING:
        return psel_import_err_handling(imp, sp);
    }
    return 0;
}

/* Bit of the "seen" map: aliases of one attribute share the first index */
static unsigned psel_import_ikey_slot(const psel_ikey_t *key)
{
    unsigned i;

    for (i = 0; i < PSEL_IKEY_COUNT; ++i) {
        if (psel_ikeys[i].kind == key->kind && psel_ikeys[i].arg == key->arg &&
            psel_ikeys[i].fetch == key->fetch) {
            return i;
        }
    }
    return key - psel_ikeys;
}

static const psel_ikey_t *psel_import_find_ikey(const char *name)
{
    unsigned i;

    for (i = 0; i < PSEL_IKEY_COUNT; ++i) {
        if (!strcasecmp(name, psel_ikeys[i].name)) {
            return &psel_ikeys[i];
        }
    }
    return NULL;
}

static int psel_import_find_mdkey(const char *name)
{
    int i;

    for (i = 0; i < PSEL_MDKEY_LAST; ++i) {
        if (!strcasecmp(name, psel_mdkeys[i].name)) {
            return i;
        }
    }
    return -1;
}

/* ---- memory domain attributes ---- */

static int psel_import_register(psel_import_t *imp, const char **p)
{
    psel_resource_t *md = &imp->md_tmpl;
    const char *s = *p, *at, *c;
    char item[128];
    int rc;

    if (!psel_import_max_size(&s, &md->max_reg)) {
        return psel_import_fail(p, s);
    }
    md->md_flags |= UCT_MD_FLAG_REG;
    if (psel_import_at_end(&s)) {
        *p = s;
        return 1;
    }
    if (!psel_import_literal(&s, ",")) {
        return psel_import_fail(p, s);
    }
    at = s;
    while ((rc = psel_import_next_item(&s, item, sizeof(item))) > 0) {
        c = item;
        if (psel_import_literal(&c, "cost:") || isdigit((unsigned char)*c)) {
            /* "cost: 16000 + 0.060 * N nsec" and the bare "180 nsec" form */
            if (!psel_import_linear_time(&c, &md->reg_cost) ||
                !psel_import_at_end(&c)) {
                /* the item is a copy: map its column back into the line */
                return psel_import_fail(p, at + strspn(at, " \t") +
                                           (c - item));
            }
        } else if (!strcasecmp(item, "dmabuf")) {
            /* no UCT_MD_FLAG_* for it in the UCT API this builds against */
            ucs_debug("%s:%u: md %s supports dmabuf registration", imp->origin,
                      imp->line_no, md->md_name);
        } else if (!psel_import_unknown_word(imp, "register", item)) {
            return psel_import_fail(p, at);
        }
        at = s;
    }
    if (rc != 0) {
        return psel_import_fail(p, s);
    }
    *p = s;
    return 1;
}

static int psel_import_mem_types(psel_import_t *imp, const char **p)
{
    psel_resource_t *md = &imp->md_tmpl;
    const char *s = *p, *at = *p;
    char item[128], *paren, *flag, *save;
    int rc, mt, any = 0;

    while ((rc = psel_import_next_item(&s, item, sizeof(item))) > 0) {
        any   = 1;
        paren = strchr(item, '(');
        if (paren != NULL) {
            if (item[strlen(item) - 1] != ')') {
                return psel_import_fail(p, at);
            }
            item[strlen(item) - 1] = '\0';
            *paren++               = '\0';
        }
        ucs_strtrim(item);
        for (mt = 0; mt < UCS_MEMORY_TYPE_LAST; ++mt) {
            if (!strcasecmp(item, ucs_memory_type_names[mt])) {
                break;
            }
        }
        if (mt == UCS_MEMORY_TYPE_LAST) {
            if (!psel_import_unknown_word(imp, "memory types", item)) {
                return psel_import_fail(p, at);
            }
            at = s;
            continue;
        }
        if (paren == NULL) {
            /* a bare name: the MD handles this type the way it can */
            if (md->md_flags & UCT_MD_FLAG_REG) {
                md->reg_mem_types |= UCS_BIT(mt);
            }
            md->access_mem_types |= UCS_BIT(mt);
            at = s;
            continue;
        }
        for (flag = strtok_r(paren, ", ", &save); flag != NULL;
             flag = strtok_r(NULL, ", ", &save)) {
            if (!strcasecmp(flag, "access")) {
                md->access_mem_types |= UCS_BIT(mt);
            } else if (!strcasecmp(flag, "reg")) {
                md->reg_mem_types |= UCS_BIT(mt);
            } else if (!strcasecmp(flag, "alloc")) {
                md->alloc_mem_types |= UCS_BIT(mt);
            } else if (!strcasecmp(flag, "detect")) {
                md->detect_mem_types |= UCS_BIT(mt);
            } else if (!psel_import_unknown_word(imp, "memory types", flag)) {
                return psel_import_fail(p, at);
            }
        }
        at = s;
    }
    if ((rc != 0) || !any) {
        return psel_import_fail(p, s);
    }
    imp->md_has_mem_types = 1;
    *p = s;
    return 1;
}

static int psel_import_md_value(psel_import_t *imp, psel_mdkey_t key,
                                const char **sp)
{
    psel_resource_t *md = &imp->md_tmpl;

    switch (key) {
    case PSEL_MDKEY_COMPONENT:
        return psel_import_copy_name(md->component, *sp, strlen(*sp));
    case PSEL_MDKEY_REGISTER:
        return psel_import_register(imp, sp);
    case PSEL_MDKEY_ALLOCATE:
        md->md_flags |= UCT_MD_FLAG_ALLOC;
        return psel_import_size_line(sp, &md->max_alloc);
    case PSEL_MDKEY_RKEY:
        /* ucx_info prints the rkey size only for MDs that need rkeys */
        md->md_flags |= UCT_MD_FLAG_NEED_RKEY;
        return psel_import_bytes(sp, &md->rkey_size) && psel_import_at_end(sp);
    case PSEL_MDKEY_MEM_TYPES:
        return psel_import_mem_types(imp, sp);
    case PSEL_MDKEY_LAST:
        break;
    }
    return 0;
}

/* ---- blocks ---- */

/* Transport name -> device type, for layouts without a "Type:" line (< 1.11) */
static uct_device_type_t psel_import_derive_type(const char *tl_name)
{
    static const char *shm[] = {"mm", "posix", "sysv", "xpmem", "cma", "knem",
                                "shm"};
    static const char *acc[] = {"cuda", "rocm", "gdr_copy", "ze_"};
    unsigned i;

    if (!strcmp(tl_name, "self")) {
        return UCT_DEVICE_TYPE_SELF;
    }
    if (strstr(tl_name, "_ipc") != NULL) {
        /* cuda_ipc, rocm_ipc: GPU memory of another process on this host;
         * later versions print them as intra-node */
        return UCT_DEVICE_TYPE_SHM;
    }
    for (i = 0; i < sizeof(shm) / sizeof(shm[0]); ++i) {
        if (!strcmp(tl_name, shm[i])) {
            return UCT_DEVICE_TYPE_SHM;
        }
    }
    for (i = 0; i < sizeof(acc) / sizeof(acc[0]); ++i) {
        if (!strncmp(tl_name, acc[i], strlen(acc[i]))) {
            return UCT_DEVICE_TYPE_ACC;
        }
    }
    return UCT_DEVICE_TYPE_NET;
}

static ucs_status_t psel_import_check_transport(const psel_import_t *imp)
{
    if (imp->tl_line != 0) {
        return psel_import_error(imp, NULL, "'Device:' after 'Transport: %s' "
                                 "of line %u", imp->tl_name, imp->tl_line);
    }
    return UCS_OK;
}

static int psel_import_slot_of(const char *name)
{
    return (int)psel_import_ikey_slot(psel_import_find_ikey(name));
}

/*
 * Close the current resource block and append it. A block lacking a line
 * protosel needs (bandwidth, latency, overhead, connection) is left out with
 * a warning; optional lines keep their defaults. At the end of input a block
 * without the line that ended this input's first block ("error handling",
 * the last line in every UCX version) was cut: that is an error.
 */
static ucs_status_t psel_import_end_resource(psel_import_t *imp, int at_eof)
{
    psel_resource_t *res = &imp->res;
    const psel_ikey_t *key;
    psel_resource_t *array;
    unsigned capacity, i;
    int end_slot;

    if (!imp->in_res) {
        return UCS_OK;
    }

    end_slot = (imp->end_slot >= 0) ? imp->end_slot :
                                      psel_import_slot_of("error handling");
    if (at_eof && !(imp->res_seen & UCS_BIT(end_slot))) {
        return psel_import_error(imp, NULL, "'%s:', the last line of a block, "
                                 "in the block of %s/%s (line %u): the input "
                                 "was cut", psel_ikeys[end_slot].name,
                                 res->tl_name, res->dev_name, imp->res_line);
    }
    imp->in_res = 0;
    for (key = psel_ikeys; key < psel_ikeys + PSEL_IKEY_COUNT; ++key) {
        if (key->needed &&
            !(imp->res_seen & UCS_BIT(psel_import_ikey_slot(key)))) {
            ucs_warn("%s:%u: leaving out %s/%s: its block has no '%s:' line",
                     imp->origin, imp->res_line, res->tl_name, res->dev_name,
                     key->name);
            return UCS_OK;
        }
    }
    if (imp->end_slot < 0) {
        /* the first complete block tells how blocks end in this input */
        imp->end_slot = imp->res_last_slot;
    }

    if (!imp->type_known) {
        res->dev_type = psel_import_derive_type(res->tl_name);
    }
    if (imp->bw_total_form) {
        /* later versions report network bandwidth as shared, the rest as
         * dedicated; split the single old number the same way */
        if (res->dev_type == UCT_DEVICE_TYPE_NET) {
            res->bw_shared = imp->bw_total;
        } else {
            res->bw_dedicated = imp->bw_total;
        }
    }

    /* the table is looked up by "tl/dev": keep the pairs unique */
    for (i = 0; i < imp->count; ++i) {
        if (!strcmp(imp->resources[i].tl_name, res->tl_name) &&
            !strcmp(imp->resources[i].dev_name, res->dev_name)) {
            return psel_import_error(imp, NULL, "one block per transport and "
                                     "device, but %s/%s (line %u) repeats",
                                     res->tl_name, res->dev_name,
                                     imp->res_line);
        }
    }

    if (imp->count == imp->capacity) {
        capacity = imp->capacity ? imp->capacity * 2 : PSEL_IMPORT_INITIAL_CAP;
        array    = realloc(imp->resources, capacity * sizeof(*array));
        if (array == NULL) {
            ucs_error("%s: failed to allocate %u resources", imp->origin,
                      capacity);
            return UCS_ERR_NO_MEMORY;
        }
        imp->resources = array;
        imp->capacity  = capacity;
    }
    imp->resources[imp->count++] = *res;
    return UCS_OK;
}

/* Close everything open before a new top-level block or the end of input */
static ucs_status_t psel_import_end_blocks(psel_import_t *imp, int at_eof)
{
    ucs_status_t status;

    status = psel_import_check_transport(imp);
    if (status != UCS_OK) {
        return status;
    }
    return psel_import_end_resource(imp, at_eof);
}

static ucs_status_t psel_import_memory_domain(psel_import_t *imp,
                                              const char *value)
{
    psel_resource_t *md = &imp->md_tmpl;
    const char *slash   = strchr(value, '/');
    ucs_status_t status;

    status = psel_import_end_blocks(imp, 0);
    if (status != UCS_OK) {
        return status;
    }

    memset(md, 0, sizeof(*md));
    /* UCX 1.6 names IB domains "ib/mlx5_0": component, then the MD */
    if (((slash != NULL) &&
         (!psel_import_copy_name(md->component, value, slash - value) ||
          !psel_import_copy_name(md->md_name, slash + 1, strlen(slash + 1)))) ||
        ((slash == NULL) &&
         !psel_import_copy_name(md->md_name, value, strlen(value)))) {
        return psel_import_error(imp, value, "'Memory domain: NAME' with a "
                                 "name of 1..%d characters", PSEL_NAME_MAX - 1);
    }
    if ((slash == NULL) && (imp->top_component[0] != '\0')) {
        ucs_strncpy_zero(md->component, imp->top_component,
                         sizeof(md->component));
    }
    imp->in_md            = 1;
    imp->in_cm            = 0;
    imp->md_seen          = 0;
    imp->md_resources     = 0;
    imp->md_has_mem_types = 0;
    imp->tl_name[0]       = '\0';
    return UCS_OK;
}

/* MD facts that old layouts do not print */
static void psel_import_finish_md(psel_import_t *imp)
{
    psel_resource_t *md = &imp->md_tmpl;
    uint64_t host       = UCS_BIT(UCS_MEMORY_TYPE_HOST);

    if (md->component[0] == '\0') {
        ucs_strncpy_zero(md->component, md->md_name, sizeof(md->component));
    }
    if (!imp->md_has_mem_types &&
        (psel_import_derive_type(md->component) != UCT_DEVICE_TYPE_ACC)) {
        /* before UCX 1.14 "memory types" is not printed: host memory is what
         * every non-accelerator MD accesses, registers and allocates */
        md->access_mem_types |= host;
        if (md->md_flags & UCT_MD_FLAG_REG) {
            md->reg_mem_types |= host;
        }
        if (md->md_flags & UCT_MD_FLAG_ALLOC) {
            md->alloc_mem_types |= host;
        }
    }
}

static ucs_status_t psel_import_device(psel_import_t *imp, const char *value)
{
    psel_resource_t *res = &imp->res;
    ucs_status_t status;

    if (imp->tl_name[0] == '\0') {
        return psel_import_error(imp, NULL, "'Transport: NAME' before "
                                 "'Device:'");
    }
    status = psel_import_end_resource(imp, 0);
    if (status != UCS_OK) {
        return status;
    }

    if (imp->md_resources++ == 0) {
        psel_import_finish_md(imp);
    }
    *res = imp->md_tmpl;
    ucs_strncpy_zero(res->tl_name, imp->tl_name, sizeof(res->tl_name));
    if (!psel_import_copy_name(res->dev_name, value, strlen(value))) {
        return psel_import_error(imp, value, "'Device: NAME' with a name of "
                                 "1..%d characters", PSEL_NAME_MAX - 1);
    }
    res->dev_num_paths  = 1;                   /* before UCX 1.9 */
    res->max_num_eps    = PSEL_SIZE_UNLIMITED; /* before UCX 1.9 */
    res->put.opt_zcopy_align = 1;
    res->get.opt_zcopy_align = 1;
    res->am.opt_zcopy_align  = 1;

    imp->tl_line       = 0;
    imp->in_res        = 1;
    imp->res_line      = imp->line_no;
    imp->res_seen      = 0;
    imp->res_last_slot = -1;
    imp->type_known    = 0;
    imp->bw_total_form = 0;
    imp->bw_total      = 0;
    return UCS_OK;
}

static ucs_status_t psel_import_key_value(psel_import_t *imp, const char *key,
                                          const char *value)
{
    const psel_ikey_t *ikey;
    ucs_status_t status;
    const char *at;
    uint64_t slot;
    int mdkey;

    /* "Protection domain" is the name before UCX 1.2 */
    if (!strcasecmp(key, "memory domain") ||
        !strcasecmp(key, "protection domain")) {
        return psel_import_memory_domain(imp, value);
    }
    if (!strcasecmp(key, "connection manager")) {
        status = psel_import_end_blocks(imp, 0);
        imp->in_md = 0;
        imp->in_cm = 1;
        return status;
    }
    if (!strcasecmp(key, "transport")) {
        if (!imp->in_md) {
            return psel_import_error(imp, NULL, "'Memory domain:' before "
                                     "'Transport:'");
        }
        status = psel_import_end_blocks(imp, 0);
        if (status != UCS_OK) {
            return status;
        }
        if (!psel_import_copy_name(imp->tl_name, value, strlen(value))) {
            return psel_import_error(imp, value, "'Transport: NAME' with a "
                                     "name of 1..%d characters",
                                     PSEL_NAME_MAX - 1);
        }
        imp->tl_line = imp->line_no;
        return UCS_OK;
    }
    if (!strcasecmp(key, "device")) {
        if (!imp->in_md) {
            return psel_import_error(imp, NULL, "'Memory domain:' before "
                                     "'Device:'");
        }
        return psel_import_device(imp, value);
    }
    if (!strcasecmp(key, "version") || !strcasecmp(key, "library version")) {
        ucs_strncpy_zero(imp->ucx_version, value, sizeof(imp->ucx_version));
        imp->ucx_version[strcspn(imp->ucx_version, " \t")] = '\0';
        return UCS_OK;
    }
    if (imp->in_cm) {
        ucs_debug("%s:%u: skipping connection manager line '%s'", imp->origin,
                  imp->line_no, key);
        return UCS_OK;
    }

    mdkey = psel_import_find_mdkey(key);
    ikey  = psel_import_find_ikey(key);
    if ((mdkey < 0) && (ikey == NULL)) {
        ucs_debug("%s:%u: skipping unknown attribute '%s'", imp->origin,
                  imp->line_no, key);
        return UCS_OK;
    }

    if ((mdkey == PSEL_MDKEY_COMPONENT) && !imp->in_md && !imp->in_res) {
        /* a top-level "Component:" block applies to the MDs that follow */
        if (!psel_import_copy_name(imp->top_component, value, strlen(value))) {
            return psel_import_error(imp, value, "'Component: NAME'");
        }
        return UCS_OK;
    }
    if (!imp->in_md) {
        return psel_import_error(imp, NULL, "'Memory domain:' before '%s:'",
                                 key);
    }

    at = value;
    if (mdkey >= 0) {
        if (imp->in_res || (imp->tl_line != 0) || (imp->md_resources > 0)) {
            return psel_import_error(imp, NULL, "memory domain attribute "
                                     "'%s:' before the first 'Transport:' of "
                                     "'Memory domain: %s'", key,
                                     imp->md_tmpl.md_name);
        }
        if (imp->md_seen & UCS_BIT(mdkey)) {
            return psel_import_error(imp, NULL, "one '%s:' line per memory "
                                     "domain", key);
        }
        imp->md_seen |= UCS_BIT(mdkey);
        if (!psel_import_md_value(imp, mdkey, &at)) {
            return psel_import_error(imp, at, "'%s: %s'",
                                     psel_mdkeys[mdkey].name,
                                     psel_mdkeys[mdkey].grammar);
        }
        return UCS_OK;
    }

    status = psel_import_check_transport(imp);
    if (status != UCS_OK) {
        return status;
    }
    if (!imp->in_res) {
        return psel_import_error(imp, NULL, "'Transport:' and 'Device:' "
                                 "before '%s:'", key);
    }
    slot = UCS_BIT(psel_import_ikey_slot(ikey));
    if (imp->res_seen & slot) {
        return psel_import_error(imp, NULL, "one '%s:' line per device block",
                                 ikey->name);
    }
    imp->res_seen     |= slot;
    imp->res_last_slot = psel_import_ikey_slot(ikey);
    if (!psel_import_iface_value(imp, ikey, &at)) {
        return psel_import_error(imp, at, "'%s: %s'", ikey->name,
                                 ikey->grammar);
    }
    return UCS_OK;
}

/* A '#' line without "key: value" */
static ucs_status_t psel_import_sentence(psel_import_t *imp, const char *text)
{
    unsigned i;

    if (*text == '<') {
        /* "< no supported devices found >", "< failed to open ... >",
         * "< failed to query interface >" (UCX 1.6) */
        if (imp->in_res && (strstr(text, "failed to") != NULL) &&
            (strstr(text, "interface") != NULL) &&
            !(imp->res_seen & UCS_BIT(psel_import_slot_of("bandwidth")))) {
            ucs_debug("%s:%u: dropping %s/%s: %s", imp->origin, imp->line_no,
                      imp->res.tl_name, imp->res.dev_name, text);
            imp->in_res = 0;
        }
        return UCS_OK;
    }
    if (!strncasecmp(text, "UCT version=", 12)) {
        ucs_strncpy_zero(imp->ucx_version, text + 12, sizeof(imp->ucx_version));
        imp->ucx_version[strcspn(imp->ucx_version, " \t")] = '\0';
        return UCS_OK;
    }
    for (i = 0; i < sizeof(psel_md_sentences) / sizeof(psel_md_sentences[0]);
         ++i) {
        if (strcasecmp(text, psel_md_sentences[i].text)) {
            continue;
        }
        if (!imp->in_md || imp->in_res || (imp->md_resources > 0)) {
            return psel_import_error(imp, NULL, "'%s' right after 'Memory "
                                     "domain:'", text);
        }
        imp->md_tmpl.md_flags |= psel_md_sentences[i].flag;
        return UCS_OK;
    }
    ucs_debug("%s:%u: skipping unknown line '%s'", imp->origin, imp->line_no,
              text);
    return UCS_OK;
}

/* Before the first '#' line: a fixture header or other preamble */
static void psel_import_preamble(psel_import_t *imp, const char *text)
{
    if (!strncasecmp(text, "ucx_version:", 12)) {
        text += 12;
        psel_import_skip_ws(&text);
        ucs_strncpy_zero(imp->ucx_version, text, sizeof(imp->ucx_version));
        imp->ucx_version[strcspn(imp->ucx_version, " \t")] = '\0';
    }
}

/*
 * A line that carries ucx_info's '#' after a one-word prefix that a launcher
 * or log collector added: "[1,0]<stdout>:# ..." (mpirun --tag-output),
 * "node01: # ..." (pdsh), "18:18:27 # ..." (CI timestamps). Returns the '#',
 * or NULL. A UCX log line has several words before any '#' and never
 * qualifies.
 */
static char *psel_import_strip_prefix(char *text)
{
    char *hash = strchr(text, '#');
    char *end;

    if ((hash == NULL) || (hash == text)) {
        return NULL;
    }
    for (end = hash; (end > text) && ((end[-1] == ' ') || (end[-1] == '\t'));
         --end) {
    }
    if ((end == text) || ((end[-1] != ':') && (end[-1] != '>') &&
                          !isdigit((unsigned char)end[-1]))) {
        return NULL;
    }
    for (; text < end; ++text) {
        if (!isalnum((unsigned char)*text) && !strchr("_.:,<>[]()-", *text)) {
            return NULL;
        }
    }
    return hash;
}

/* A line without '#' that starts ucx_info text whose '#' were lost (a dump
 * pasted where markdown turned "# Memory domain:" into a heading) */
static int psel_import_bare_start(const char *text)
{
    return !strncasecmp(text, "memory domain:", 14) ||
           !strncasecmp(text, "protection domain:", 18);
}

/* Parse one line; @a line is a modifiable copy of imp->got */
static ucs_status_t psel_import_line(psel_import_t *imp, char *line)
{
    char *text = ucs_strtrim(line), *colon, *key, *value, *hash;

    if (*text == '#') {
        imp->seen_hash = 1;
        text           = ucs_strtrim(text + 1);
    } else if ((hash = psel_import_strip_prefix(text)) != NULL) {
        imp->seen_hash = 1;
        text           = ucs_strtrim(hash + 1);
    } else if (imp->bare || psel_import_bare_start(text)) {
        /* ucx_info text without its '#': every line is content */
        imp->bare = 1;
    } else {
        if (!imp->seen_hash) {
            psel_import_preamble(imp, text);
        }
        /* log lines interleaved by UCX_LOG_LEVEL, prompts: not ucx_info's */
        return UCS_OK;
    }

    colon = strchr(text, ':');
    if ((*text == '<') || (colon == NULL)) {
        return (*text == '\0') ? UCS_OK : psel_import_sentence(imp, text);
    }

    *colon = '\0';
    key    = ucs_strtrim(text);
    value  = ucs_strtrim(colon + 1);
    if (*value != '\0') {
        return psel_import_key_value(imp, key, value);
    }
    if (!strcasecmp(key, "memory domain") || !strcasecmp(key, "component") ||
        !strcasecmp(key, "transport") || !strcasecmp(key, "device")) {
        return psel_import_error(imp, colon + 1, "'%s: NAME'", key);
    }
    /* "capabilities:" and other headings */
    return UCS_OK;
}

/* The input had no resource: say what it is, and what to run instead */
static ucs_status_t psel_import_no_resource(psel_import_t *imp)
{
    psel_text_kind_t kind = psel_text_kind_result(&imp->kind);

    if (kind == PSEL_TEXT_KIND_EMPTY) {
        ucs_error("%s: the file is empty%s; %s", imp->origin,
                  (imp->line_no > 0) ? " (nothing but blanks and '#')" : "",
                  psel_text_kind_advice(kind));
        return UCS_ERR_INVALID_PARAM;
    }
    if ((kind != PSEL_TEXT_KIND_UNKNOWN) &&
        (kind != PSEL_TEXT_KIND_UCX_INFO_D)) {
        ucs_error("%s: this is %s, not `ucx_info -d` output; %s", imp->origin,
                  psel_text_kind_name(kind), psel_text_kind_advice(kind));
        return UCS_ERR_INVALID_PARAM;
    }
    return psel_import_error(imp, NULL, "at least one 'Memory domain:' with "
                             "a 'Transport:' and 'Device:' block (%s)",
                             psel_text_kind_advice(PSEL_TEXT_KIND_UNKNOWN));
}

ucs_status_t psel_ucx_info_import(FILE *in, const char *origin_name,
                                  psel_resource_table_t *table)
{
    psel_import_t imp;
    ucs_status_t status = UCS_OK;
    char *line          = NULL;
    char *work          = NULL;
    size_t line_max     = 0;
    size_t work_max     = 0;
    unsigned i;
    char *tmp;
    ssize_t len;

    memset(&imp, 0, sizeof(imp));
    imp.origin   = (origin_name != NULL) ? origin_name : "<ucx_info>";
    imp.end_slot = -1;

    while ((len = getline(&line, &line_max, in)) >= 0) {
        ++imp.line_no;
        imp.got  = line;
        imp.work = line;
        if (strlen(line) != (size_t)len) {
            ucs_error("%s:%u:%zu: expected a text line without NUL bytes, "
                      "found a NUL byte", imp.origin, imp.line_no,
                      strlen(line) + 1);
            status = UCS_ERR_INVALID_PARAM;
            goto out_free_resources;
        }
        /* a last line without its newline (a file saved by an editor, a
         * paste) is read as any other: a dump cut inside a block lacks the
         * block's last line, which the end of input catches */
        line[strcspn(line, "\r\n")] = '\0';
        psel_text_kind_feed(&imp.kind, line);

        if (work_max < line_max) {
            tmp = realloc(work, line_max);
            if (tmp == NULL) {
                ucs_error("%s:%u: failed to allocate %zu bytes", imp.origin,
                          imp.line_no, line_max);
                status = UCS_ERR_NO_MEMORY;
                goto out_free_resources;
            }
            work     = tmp;
            work_max = line_max;
        }
        strcpy(work, line);
        imp.work = work;
        status   = psel_import_line(&imp, work);
        if (status != UCS_OK) {
            goto out_free_resources;
        }
    }
    if (ferror(in)) {
        ucs_error("%s:%u: read error: %m", imp.origin, imp.line_no);
        status = UCS_ERR_IO_ERROR;
        goto out_free_resources;
    }

    imp.got = NULL;
    status  = psel_import_end_blocks(&imp, 1);
    if (status != UCS_OK) {
        goto out_free_resources;
    }
    if (imp.count == 0) {
        status = psel_import_no_resource(&imp);
        goto out_free_resources;
    }

    /* UCX's per-operation terms, as the version that printed the dump
     * applies them */
    for (i = 0; i < imp.count; ++i) {
        psel_resource_op_cost_derive(&imp.resources[i], imp.ucx_version);
    }
    table->count     = imp.count;
    table->resources = imp.resources;
    ucs_strncpy_zero(table->origin, imp.origin, sizeof(table->origin));
    ucs_strncpy_zero(table->ucx_version, imp.ucx_version,
                     sizeof(table->ucx_version));
    table->host[0] = '\0';
    free(work);
    free(line);
    return UCS_OK;

out_free_resources:
    free(imp.resources);
    free(work);
    free(line);
    return status;
}

ucs_status_t psel_ucx_info_import_file(const char *path,
                                       psel_resource_table_t *table)
{
    ucs_status_t status;
    FILE *in;

    in = psel_text_file_open(path, "`ucx_info -d` text");
    if (in == NULL) {
        return UCS_ERR_IO_ERROR;
    }
    status = psel_ucx_info_import(in, path, table);
    fclose(in);
    return status;
}
