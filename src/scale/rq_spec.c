/*
 * Open MPI receive queue specifications; see rq_spec.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "rq_spec.h"

#include <ucs/sys/compiler_def.h>
#include <ucs/sys/math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Open MPI's credit messages and smallest default queue */
#define PSEL_RQ_MIN_QUEUE_SIZE     128
/* allowance for the BTL and PML headers of an eager fragment */
#define PSEL_RQ_HEADER_ALLOWANCE   64
/* largest queue when nothing goes by rendezvous: Open MPI's default
 * largest queue (64 KiB) */
#define PSEL_RQ_MAX_EAGER_QUEUE    65536
#define PSEL_RQ_SUGGEST_MAX_QUEUES 4

enum {
    PSEL_RQ_FIELD_SIZE,
    PSEL_RQ_FIELD_NUM,
    PSEL_RQ_FIELD_LOW_WM,
    PSEL_RQ_FIELD_4TH,      /* P: window_size, S: max_pending_sends */
    PSEL_RQ_FIELD_5TH,      /* P: reserve */
    PSEL_RQ_FIELD_LAST
};

static const char *psel_rq_field_names[2][PSEL_RQ_FIELD_LAST] = {
    {"size", "num_buffers", "low_watermark", "window_size", "reserve"},
    {"size", "num_buffers", "low_watermark", "max_pending_sends", NULL}
};

typedef struct {
    const char *text;
    unsigned    queue;     /* 1-based, for messages */
    char       *error;
    size_t      max;
    size_t     *column_p;
} psel_rq_parser_t;


static ucs_status_t psel_rq_fail(const psel_rq_parser_t *parser,
                                 const char *at, const char *fmt, ...)
    UCS_F_PRINTF(3, 4);

/* "queue 2 (column 17): <what>, got '<token>'" */
static ucs_status_t psel_rq_fail(const psel_rq_parser_t *parser,
                                 const char *at, const char *fmt, ...)
{
    size_t column = (size_t)(at - parser->text) + 1;
    size_t len, tok;
    va_list ap;

    if (parser->column_p != NULL) {
        *parser->column_p = column;
    }
    if ((parser->error == NULL) || (parser->max == 0)) {
        return UCS_ERR_INVALID_PARAM;
    }
    len = (parser->queue == 0) ?
          (size_t)snprintf(parser->error, parser->max, "column %zu: ",
                           column) :
          (size_t)snprintf(parser->error, parser->max,
                           "queue %u (column %zu): ", parser->queue, column);
    if (len >= parser->max) {
        return UCS_ERR_INVALID_PARAM;
    }
    va_start(ap, fmt);
    len += (size_t)vsnprintf(parser->error + len, parser->max - len, fmt, ap);
    va_end(ap);
    if (len >= parser->max) {
        return UCS_ERR_INVALID_PARAM;
    }
    tok = strcspn(at, ",:");
    if (*at == '\0') {
        snprintf(parser->error + len, parser->max - len,
                 ", got end of input");
    } else {
        snprintf(parser->error + len, parser->max - len, ", got '%.*s'",
                 (int)ucs_min(tok ? tok : 1, 24), at);
    }
    return UCS_ERR_INVALID_PARAM;
}

/* A decimal number of at most @a limit; *p moves past it */
static ucs_status_t psel_rq_number(const psel_rq_parser_t *parser,
                                   const char **p, const char *name,
                                   unsigned limit, unsigned *value)
{
    const char *start = *p;
    uint64_t v        = 0;

    if ((**p < '0') || (**p > '9')) {
        return psel_rq_fail(parser, start, "expected %s as a decimal number",
                            name);
    }
    for (; (**p >= '0') && (**p <= '9'); ++*p) {
        v = (v * 10) + (uint64_t)(**p - '0');
        if (v > limit) {
            return psel_rq_fail(parser, start, "%s is too large (at most %u)",
                                name, limit);
        }
    }
    if ((**p != ',') && (**p != ':') && (**p != '\0')) {
        return psel_rq_fail(parser, *p, "expected ',' or ':' after %s", name);
    }
    *value = (unsigned)v;
    return UCS_OK;
}

/* The documented defaults, then the checks that need every value */
static ucs_status_t psel_rq_queue_finish(const psel_rq_parser_t *parser,
                                         psel_rq_queue_t *q,
                                         const char *const *at)
{
    const char *last = at[q->num_given - 1];

    if (q->size == 0) {
        return psel_rq_fail(parser, at[PSEL_RQ_FIELD_SIZE],
                            "size must be at least 1 byte");
    }
    if (q->num == 0) {
        return psel_rq_fail(parser, at[PSEL_RQ_FIELD_NUM],
                            "num_buffers must be at least 1");
    }
    if (q->num_given <= PSEL_RQ_FIELD_LOW_WM) {
        q->low_wm = q->num / 2;
    }
    if (q->low_wm >= q->num) {
        return psel_rq_fail(parser, (q->num_given > PSEL_RQ_FIELD_LOW_WM) ?
                            at[PSEL_RQ_FIELD_LOW_WM] : last,
                            "low_watermark %u must be below num_buffers %u",
                            q->low_wm, q->num);
    }
    if (q->type == PSEL_RQ_PER_PEER) {
        if (q->num_given <= PSEL_RQ_FIELD_4TH) {
            q->window = q->low_wm / 2;
        }
        if (q->window == 0) {
            return psel_rq_fail(parser, (q->num_given > PSEL_RQ_FIELD_4TH) ?
                                at[PSEL_RQ_FIELD_4TH] : last,
                                "window_size is 0 (the default is "
                                "low_watermark/2 = %u/2): give a window_size "
                                ">= 1 or num_buffers >= 4", q->low_wm);
        }
        if (q->num_given <= PSEL_RQ_FIELD_5TH) {
            q->reserve = ((q->num * 2) - 1) / q->window;
        }
    } else {
        if (q->num_given <= PSEL_RQ_FIELD_4TH) {
            q->max_pending = q->low_wm / 4;
        }
        if (q->max_pending == 0) {
            return psel_rq_fail(parser, (q->num_given > PSEL_RQ_FIELD_4TH) ?
                                at[PSEL_RQ_FIELD_4TH] : last,
                                "max_pending_sends is 0 (the default is "
                                "low_watermark/4 = %u/4): give a "
                                "max_pending_sends >= 1 or num_buffers >= 8",
                                q->low_wm);
        }
    }
    return UCS_OK;
}

/* One queue at *p, up to ':' or the end */
static ucs_status_t psel_rq_queue_parse(const psel_rq_parser_t *parser,
                                        const char **p, psel_rq_queue_t *q)
{
    static const unsigned limits[PSEL_RQ_FIELD_LAST] = {
        PSEL_RQ_MAX_SIZE, PSEL_RQ_MAX_COUNT, PSEL_RQ_MAX_COUNT,
        PSEL_RQ_MAX_COUNT, PSEL_RQ_MAX_COUNT
    };
    const char *at[PSEL_RQ_FIELD_LAST] = {NULL};
    unsigned *fields[PSEL_RQ_FIELD_LAST];
    const char *const *names;
    unsigned max_fields, value = 0, f;
    ucs_status_t status;

    memset(q, 0, sizeof(*q));
    q->column = (size_t)(*p - parser->text) + 1;
    switch (**p) {
    case 'P':
    case 'S':
        q->type = (psel_rq_type_t)**p;
        break;
    case 'X':
        return psel_rq_fail(parser, *p, "X (XRC) queues are not supported; "
                            "use P (per-peer) or S (shared)");
    case ':':
    case '\0':
        return psel_rq_fail(parser, *p, "empty queue: expected "
                            "P,<size>,<num_buffers> or S,<size>,<num_buffers>");
    default:
        return psel_rq_fail(parser, *p, "expected the queue type P "
                            "(per-peer) or S (shared)");
    }
    ++*p;
    if (**p != ',') {
        return psel_rq_fail(parser, *p, "expected ',' after the queue type "
                            "%c", (char)q->type);
    }

    names      = psel_rq_field_names[q->type == PSEL_RQ_SHARED];
    max_fields = (q->type == PSEL_RQ_PER_PEER) ? 5 : 4;
    fields[PSEL_RQ_FIELD_SIZE]   = &q->size;
    fields[PSEL_RQ_FIELD_NUM]    = &q->num;
    fields[PSEL_RQ_FIELD_LOW_WM] = &q->low_wm;
    fields[PSEL_RQ_FIELD_4TH]    = (q->type == PSEL_RQ_PER_PEER) ?
                                   &q->window : &q->max_pending;
    fields[PSEL_RQ_FIELD_5TH]    = &q->reserve;
    for (f = 0; **p == ','; ++f) {
        ++*p;
        if (f == max_fields) {
            return psel_rq_fail(parser, *p, "a %c queue takes at most %u "
                                "values after its type (%s,%s,%s,%s%s%s)",
                                (char)q->type, max_fields, names[0], names[1],
                                names[2], names[3], names[4] ? "," : "",
                                names[4] ? names[4] : "");
        }
        at[f]  = *p;
        status = psel_rq_number(parser, p, names[f], limits[f], &value);
        if (status != UCS_OK) {
            return status;
        }
        *fields[f] = value;
    }
    if (f < 2) {
        return psel_rq_fail(parser, *p, "a %c queue needs at least "
                            "%c,<size>,<num_buffers>", (char)q->type,
                            (char)q->type);
    }
    q->num_given = f;
    return psel_rq_queue_finish(parser, q, at);
}

ucs_status_t psel_rq_spec_parse(const char *text, psel_rq_spec_t *spec,
                                char *error, size_t max, size_t *column_p)
{
    psel_rq_parser_t parser = {text, 1, error, max, column_p};
    const char *p           = text;
    psel_rq_spec_t result;
    psel_rq_queue_t *q;
    ucs_status_t status;

    memset(&result, 0, sizeof(result));
    if (*p == '\0') {
        parser.queue = 0;
        return psel_rq_fail(&parser, p, "empty specification: expected "
                            "P,<size>,<num_buffers> or S,<size>,"
                            "<num_buffers>, queues separated by ':'");
    }
    for (;;) {
        if (result.num_queues == PSEL_RQ_MAX_QUEUES) {
            return psel_rq_fail(&parser, p, "too many queues (at most %d)",
                                PSEL_RQ_MAX_QUEUES);
        }
        q      = &result.queues[result.num_queues];
        status = psel_rq_queue_parse(&parser, &p, q);
        if (status != UCS_OK) {
            return status;
        }
        if ((result.num_queues > 0) &&
            (q->size <= result.queues[result.num_queues - 1].size)) {
            return psel_rq_fail(&parser, text + q->column + 1,
                                "size %u is not larger than queue %u's %u: "
                                "sizes must ascend", q->size,
                                result.num_queues,
                                result.queues[result.num_queues - 1].size);
        }
        ++result.num_queues;
        if (*p == '\0') {
            break;
        }
        ++p; /* ':' */
        ++parser.queue;
    }
    *spec = result;
    return UCS_OK;
}

int psel_rq_spec_format(const psel_rq_spec_t *spec, char *buf, size_t max)
{
    const psel_rq_queue_t *q;
    size_t len = 0;
    unsigned i;
    int n;

    if (max > 0) {
        buf[0] = '\0';
    }
    for (i = 0; i < spec->num_queues; ++i) {
        q = &spec->queues[i];
        if (q->type == PSEL_RQ_PER_PEER) {
            n = snprintf(buf + len, (len < max) ? max - len : 0,
                         "%sP,%u,%u,%u,%u,%u", i ? ":" : "", q->size, q->num,
                         q->low_wm, q->window, q->reserve);
        } else {
            n = snprintf(buf + len, (len < max) ? max - len : 0,
                         "%sS,%u,%u,%u,%u", i ? ":" : "", q->size, q->num,
                         q->low_wm, q->max_pending);
        }
        len += (size_t)n;
    }
    return (int)len;
}

unsigned psel_rq_queue_buffers(const psel_rq_queue_t *queue)
{
    return queue->num +
           ((queue->type == PSEL_RQ_PER_PEER) ? queue->reserve : 0);
}

double psel_rq_queue_bytes(const psel_rq_queue_t *queue, size_t num_peers)
{
    double bytes = (double)psel_rq_queue_buffers(queue) * queue->size;

    return (queue->type == PSEL_RQ_PER_PEER) ? bytes * (double)num_peers :
                                               bytes;
}

double psel_rq_spec_bytes(const psel_rq_spec_t *spec, size_t num_peers)
{
    double total = 0;
    unsigned i;

    for (i = 0; i < spec->num_queues; ++i) {
        total += psel_rq_queue_bytes(&spec->queues[i], num_peers);
    }
    return total;
}

static unsigned psel_rq_pow2(size_t x)
{
    unsigned p = PSEL_RQ_MIN_QUEUE_SIZE;

    while ((p < x) && (p < PSEL_RQ_MAX_SIZE)) {
        p *= 2;
    }
    return p;
}

/* A queue of Open MPI's example counts: P,size,32,16 (the first P,size,256,
 * 128,16) or S,size,256,128,32; defaults filled in */
static void psel_rq_suggest_queue(psel_rq_queue_t *q, psel_rq_type_t type,
                                  unsigned size, int first)
{
    memset(q, 0, sizeof(*q));
    q->type = type;
    q->size = size;
    if (type == PSEL_RQ_SHARED) {
        q->num         = 256;
        q->low_wm      = 128;
        q->max_pending = 32;
        q->num_given   = 4;
    } else {
        q->num       = first ? 256 : 32;
        q->low_wm    = first ? 128 : 16;
        q->window    = first ? 16 : (q->low_wm / 2);
        q->reserve   = ((q->num * 2) - 1) / q->window;
        q->num_given = first ? 4 : 3;
    }
}

ucs_status_t psel_rq_suggest(const psel_rq_suggest_params_t *params,
                             psel_rq_spec_t *spec)
{
    unsigned sizes[PSEL_RQ_SUGGEST_MAX_QUEUES + 1], n = 0, size, i;
    psel_rq_queue_t per_peer, shared;
    size_t largest;

    if (params->num_peers == 0) {
        return UCS_ERR_INVALID_PARAM;
    }
    largest = (params->rndv_thresh == SIZE_MAX) ? PSEL_RQ_MAX_EAGER_QUEUE :
              psel_rq_pow2(ucs_min(params->rndv_thresh - 1 +
                                   PSEL_RQ_HEADER_ALLOWANCE,
                                   (size_t)PSEL_RQ_MAX_SIZE));
    sizes[n++] = PSEL_RQ_MIN_QUEUE_SIZE;
    for (i = 0; i < params->num_eager; ++i) {
        size = psel_rq_pow2(ucs_min(params->eager_ends[i],
                                    (size_t)PSEL_RQ_MAX_SIZE) +
                            PSEL_RQ_HEADER_ALLOWANCE);
        if ((size > sizes[n - 1]) && (size < largest) &&
            (n < PSEL_RQ_SUGGEST_MAX_QUEUES - 1)) {
            sizes[n++] = size;
        }
    }
    if (largest > sizes[n - 1]) {
        sizes[n++] = (unsigned)largest;
    }

    memset(spec, 0, sizeof(*spec));
    for (i = 0; i < n; ++i) {
        psel_rq_suggest_queue(&per_peer, PSEL_RQ_PER_PEER, sizes[i], i == 0);
        psel_rq_suggest_queue(&shared, PSEL_RQ_SHARED, sizes[i], 0);
        spec->queues[i] = ((i > 0) && params->srq &&
                           (psel_rq_queue_bytes(&shared, params->num_peers) <
                            psel_rq_queue_bytes(&per_peer,
                                                params->num_peers))) ?
                          shared : per_peer;
    }
    spec->num_queues = n;
    return UCS_OK;
}
