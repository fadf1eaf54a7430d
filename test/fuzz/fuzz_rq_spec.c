/*
 * Fuzz harness for Open MPI receive queue specs (src/scale/rq_spec.h): any
 * input is either rejected with UCS_ERR_INVALID_PARAM, a message and a
 * column inside the text (or just past it), or parsed into queues that obey
 * the rules (sizes ascending, low_wm < num, window and max_pending >= 1,
 * the documented defaults) and whose full form parses back to the same
 * queues and formats to the same text. Memory is finite, non-negative and
 * grows with the number of peers. Built with replay_main.c for make check.
 */
#include <scale/rq_spec.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_check(int cond, const char *what, const char *text)
{
    if (!cond) {
        fprintf(stderr, "fuzz_rq_spec: %s on '%s'\n", what, text);
        abort();
    }
}

static void fuzz_check_queue(const psel_rq_queue_t *q, const char *text)
{
    fuzz_check((q->type == PSEL_RQ_PER_PEER) || (q->type == PSEL_RQ_SHARED),
               "bad type", text);
    fuzz_check((q->size >= 1) && (q->size <= PSEL_RQ_MAX_SIZE) &&
               (q->num >= 1) && (q->low_wm < q->num), "bad counts", text);
    fuzz_check((q->num_given >= 2) && (q->num_given <= 5), "num_given",
               text);
    if (q->num_given <= 2) {
        fuzz_check(q->low_wm == q->num / 2, "low_wm default", text);
    }
    if (q->type == PSEL_RQ_PER_PEER) {
        fuzz_check(q->window >= 1, "window 0", text);
        if (q->num_given <= 3) {
            fuzz_check(q->window == q->low_wm / 2, "window default", text);
        }
        if (q->num_given <= 4) {
            fuzz_check(q->reserve == ((2 * q->num) - 1) / q->window,
                       "reserve default", text);
        }
    } else {
        fuzz_check(q->max_pending >= 1, "max_pending 0", text);
        if (q->num_given <= 3) {
            fuzz_check(q->max_pending == q->low_wm / 4, "pending default",
                       text);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), full[4096], again_text[4096];
    char error[PSEL_RQ_ERROR_MAX];
    psel_rq_spec_t spec, again;
    size_t column = 0;
    double m1, m2;
    unsigned i;

    fuzz_check(text != NULL, "out of memory", "");
    memcpy(text, data, size);
    text[size] = '\0';     /* a NUL inside ends the spec there */

    error[0] = '\0';
    if (psel_rq_spec_parse(text, &spec, error, sizeof(error), &column) !=
        UCS_OK) {
        fuzz_check(error[0] != '\0', "rejected without a message", text);
        fuzz_check((column >= 1) && (column <= strlen(text) + 1),
                   "column outside the text", text);
        free(text);
        return 0;
    }

    fuzz_check((spec.num_queues >= 1) &&
               (spec.num_queues <= PSEL_RQ_MAX_QUEUES), "queue count", text);
    for (i = 0; i < spec.num_queues; ++i) {
        fuzz_check_queue(&spec.queues[i], text);
        fuzz_check((i == 0) ||
                   (spec.queues[i].size > spec.queues[i - 1].size),
                   "sizes do not ascend", text);
    }

    psel_rq_spec_format(&spec, full, sizeof(full));
    fuzz_check(psel_rq_spec_parse(full, &again, error, sizeof(error),
                                  NULL) == UCS_OK,
               "the full form does not parse", text);
    fuzz_check(again.num_queues == spec.num_queues, "full form changed",
               text);
    for (i = 0; i < spec.num_queues; ++i) {
        fuzz_check((again.queues[i].type == spec.queues[i].type) &&
                   (again.queues[i].size == spec.queues[i].size) &&
                   (again.queues[i].num == spec.queues[i].num) &&
                   (again.queues[i].low_wm == spec.queues[i].low_wm) &&
                   (again.queues[i].window == spec.queues[i].window) &&
                   (again.queues[i].reserve == spec.queues[i].reserve) &&
                   (again.queues[i].max_pending ==
                    spec.queues[i].max_pending), "full form changed", text);
    }
    psel_rq_spec_format(&again, again_text, sizeof(again_text));
    fuzz_check(!strcmp(full, again_text), "format not stable", text);

    m1 = psel_rq_spec_bytes(&spec, 1);
    m2 = psel_rq_spec_bytes(&spec, 4096);
    fuzz_check(isfinite(m1) && isfinite(m2) && (m1 > 0) && (m2 >= m1),
               "memory", text);
    free(text);
    return 0;
}
