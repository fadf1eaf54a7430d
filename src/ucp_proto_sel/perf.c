/*
 * Perf model helpers: buffer type names and cost-line formatting.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perf.h"

#include <ucs/sys/string.h>

#include <ucs/sys/math.h>
#include <stdint.h>

static const char *psel_op_names[] = {
    [PSEL_OP_TAG_SEND] = "tag send"
};

static const char *psel_dt_class_names[] = {
    [PSEL_DT_CONTIG]  = "contig",
    [PSEL_DT_IOV]     = "iov",
    [PSEL_DT_GENERIC] = "generic"
};

const char *psel_op_name(psel_op_t op)
{
    return (op < PSEL_OP_LAST) ? psel_op_names[op] : "unknown op";
}

const char *psel_dt_class_name(psel_dt_class_t dt_class)
{
    return (dt_class < PSEL_DT_LAST) ? psel_dt_class_names[dt_class] :
                                       "unknown datatype";
}

void psel_buffer_type_str(psel_buffer_type_t bt, ucs_string_buffer_t *strb)
{
    ucs_string_buffer_appendf(strb, "%s, %s %s memory", psel_op_name(bt.op),
                              psel_dt_class_name(bt.dt_class),
                              (bt.mem_type < UCS_MEMORY_TYPE_LAST) ?
                              ucs_memory_type_names[bt.mem_type] : "unknown");
    if (bt.dt_class == PSEL_DT_IOV) {
        ucs_string_buffer_appendf(strb, ", %u buffers", bt.sg_count);
    }
}

void psel_perf_from_stages(const ucs_linear_func_t *stages, unsigned num_stages,
                           psel_perf_range_t *range)
{
    ucs_linear_func_t single = ucs_linear_func_make(0, 0);
    ucs_linear_func_t multi  = ucs_linear_func_make(0, 0);
    unsigned i;

    for (i = 0; i < num_stages; ++i) {
        ucs_linear_func_add_inplace(&single, stages[i]);
        multi.c = ucs_max(multi.c, stages[i].c);
        multi.m = ucs_max(multi.m, stages[i].m);
    }
    range->perf[PSEL_PERF_SINGLE] = single;
    range->perf[PSEL_PERF_MULTI]  = multi;
}

void psel_perf_func_str(ucs_linear_func_t func, ucs_string_buffer_t *strb)
{
    ucs_string_buffer_appendf(strb, "%.3f us + %.4f ns/B", func.c * 1e6,
                              func.m * 1e9);
}

void psel_size_str(size_t size, ucs_string_buffer_t *strb)
{
    char buf[32];

    /* ucs_memunits_to_str() but for (size_t)-2, which it names "auto" */
    if (size == UCS_MEMUNITS_AUTO) {
        ucs_string_buffer_appendf(strb, "%zu", size);
    } else {
        ucs_string_buffer_appendf(strb, "%s",
                                  ucs_memunits_to_str(size, buf, sizeof(buf)));
    }
}
