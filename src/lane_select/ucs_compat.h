/**
 * @file ucs_compat.h
 * The one home of the differences of libucs's public API between the UCX
 * releases protosel builds against (1.13 to 1.22, docs/runtime-library.md).
 * Each difference is keyed
 * on the first release that has it (from openucx/ucx's history), so a
 * release in between builds too. Callers use these names, never an #if of
 * their own.
 */
#ifndef PSEL_LANE_SELECT_UCS_COMPAT_H_
#define PSEL_LANE_SELECT_UCS_COMPAT_H_

#include <uct/api/version.h>
#include <ucs/config/parser.h>
#include <ucs/datastruct/mpool.h>
#include <ucs/sys/math.h>

/** The UCX this build compiles against is MAJOR.MINOR or later. */
#define PSEL_UCX_AT_LEAST(_major, _minor) \
    ((UCT_VERNO_MAJOR > (_major)) || \
     ((UCT_VERNO_MAJOR == (_major)) && (UCT_VERNO_MINOR >= (_minor))))


/** A bandwidth setting (UCS_CONFIG_TYPE_BW) is "auto". Releases after 1.13
 *  (1.16 has it) name the helper after doubles in general; keyed on the
 *  macro itself, so a release in between builds either way. */
#ifdef UCS_CONFIG_DBL_IS_AUTO
#  define PSEL_UCS_CONFIG_BW_IS_AUTO(_value) UCS_CONFIG_DBL_IS_AUTO(_value)
#else
#  define PSEL_UCS_CONFIG_BW_IS_AUTO(_value) UCS_CONFIG_BW_IS_AUTO(_value)
#endif


/** A ucs_config_parser_t initializer; 1.17 added the doc callback. */
#if PSEL_UCX_AT_LEAST(1, 17)
#  define PSEL_UCS_CONFIG_PARSER(_read, _write, _clone, _release, _help, _arg) \
    {_read, _write, _clone, _release, _help, ucs_config_doc_nop, _arg}
#else
#  define PSEL_UCS_CONFIG_PARSER(_read, _write, _clone, _release, _help, _arg) \
    {_read, _write, _clone, _release, _help, _arg}
#endif


/**
 * ucs_config_parser_fill_opts() of @a fields with the table prefix
 * @a table_prefix (NULL for none); 1.15 takes a global-list entry.
 */
static inline ucs_status_t
psel_ucs_config_fill_opts(void *opts, ucs_config_field_t *fields,
                          const char *env_prefix, const char *table_prefix,
                          int ignore_errors)
{
#if PSEL_UCX_AT_LEAST(1, 15)
    ucs_config_global_list_entry_t entry = {
        .name   = "protosel",
        .prefix = table_prefix,
        .table  = fields
    };

    return ucs_config_parser_fill_opts(opts, &entry, env_prefix,
                                       ignore_errors);
#else
    return ucs_config_parser_fill_opts(opts, fields, env_prefix, table_prefix,
                                       ignore_errors);
#endif
}


/** ucs_config_parser_set_value() by full name; 1.17 added a table prefix. */
static inline ucs_status_t
psel_ucs_config_set_value(void *opts, ucs_config_field_t *fields,
                          const char *name, const char *value)
{
#if PSEL_UCX_AT_LEAST(1, 17)
    return ucs_config_parser_set_value(opts, fields, NULL, name, value);
#else
    return ucs_config_parser_set_value(opts, fields, name, value);
#endif
}


/** ucs_config_parser_print_opts() of every field; 1.19 added a filter. */
static inline void
psel_ucs_config_print_opts(FILE *stream, const char *title, const void *opts,
                           ucs_config_field_t *fields,
                           const char *table_prefix, const char *prefix,
                           ucs_config_print_flags_t flags)
{
#if PSEL_UCX_AT_LEAST(1, 19)
    ucs_config_parser_print_opts(stream, title, opts, fields, table_prefix,
                                 prefix, flags, NULL);
#else
    ucs_config_parser_print_opts(stream, title, opts, fields, table_prefix,
                                 prefix, flags);
#endif
}


/**
 * ucs_mpool_init() of a pool of @a elem_size elements aligned to
 * @a alignment, no private area; 1.14 takes a parameter struct.
 */
static inline ucs_status_t
psel_ucs_mpool_init(ucs_mpool_t *mp, size_t elem_size, size_t alignment,
                    unsigned elems_per_chunk, unsigned max_elems,
                    ucs_mpool_ops_t *ops, const char *name)
{
#if PSEL_UCX_AT_LEAST(1, 14)
    ucs_mpool_params_t params;

    ucs_mpool_params_reset(&params);
    params.elem_size       = elem_size;
    params.alignment       = alignment;
    params.elems_per_chunk = elems_per_chunk;
    params.max_elems       = max_elems;
    params.ops             = ops;
    params.name            = name;
    return ucs_mpool_init(&params, mp);
#else
    return ucs_mpool_init(mp, 0, elem_size, 0, alignment, elems_per_chunk,
                          max_elems, ops, name);
#endif
}


/** @a n rounded up to a multiple of @a alignment (ucs_align_up() left the
 *  installed headers in 1.22's ucs/sys/ptr_arith.h). */
#define psel_align_up(_n, _alignment) \
    (ucs_div_round_up(_n, _alignment) * (_alignment))

#endif
