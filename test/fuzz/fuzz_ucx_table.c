/*
 * Fuzz harness of the readers of UCX's tables (psel_info --compare-ucx's
 * first tag-send table, psel_calibrate --ucp's table of each kind): any
 * input gives either rows that cover 0..inf in order, or a refusal; never a
 * crash or a leak.
 */
#include "../../src/tools/psel_ucx_table.h"

#include <ucs/debug/log_def.h>

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ucs_log_func_rc_t
fuzz_ucx_table_silence(const char *file, unsigned line, const char *function,
                       ucs_log_level_t level,
                       const ucs_log_component_config_t *comp_conf,
                       const char *message, va_list ap)
{
    (void)file; (void)line; (void)function; (void)level; (void)comp_conf;
    (void)message; (void)ap;
    return UCS_LOG_FUNC_RC_STOP;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int silenced = 0;
    psel_cmp_ucx_t *ucx;
    unsigned i;
    int kind, ret;
    FILE *in;

    if (!silenced) {
        ucs_log_push_handler(fuzz_ucx_table_silence);
        silenced = 1;
    }
    if (size == 0) {
        return 0;
    }
    ucx = calloc(1, sizeof(*ucx));
    assert(ucx != NULL);
    /* kind -1: the first tag-send table; then each kind of table; then
     * the table of each operation (PSEL_UCX_TABLE_LAST + op) */
    for (kind = -1; kind < PSEL_UCX_TABLE_LAST + PSEL_OP_LAST; ++kind) {
        in = fmemopen((void*)data, size, "r");
        assert(in != NULL);
        ret = (kind < 0) ? psel_ucx_table_read(in, "fuzz", ucx) :
              (kind < PSEL_UCX_TABLE_LAST) ?
              psel_ucx_table_read_kind(in, "fuzz", kind, ucx) :
              psel_ucx_table_read_op(in, "fuzz", kind - PSEL_UCX_TABLE_LAST,
                                     ucx);
        fclose(in);
        if (ret != 0) {
            continue;
        }
        assert((ucx->num_rows > 0) && (ucx->rows[0].start == 0));
        for (i = 0; i < ucx->num_rows; ++i) {
            assert(ucx->rows[i].end >= ucx->rows[i].start);
            assert((i == 0) || (ucx->rows[i].start ==
                                ucx->rows[i - 1].end + 1));
            assert(memchr(ucx->rows[i].proto, '\0',
                          sizeof(ucx->rows[i].proto)) != NULL);
        }
        assert(ucx->rows[ucx->num_rows - 1].end == SIZE_MAX);
        assert(ucx->num_lanes <= PSEL_CMP_MAX_LANES);
    }
    free(ucx);
    return 0;
}
