/*
 * Fuzz harness of the `ucx_info -d` importer: any input must give either a
 * table whose values are sane or UCS_ERR_INVALID_PARAM, never a crash or a
 * leak.
 */
#include <lane_select/ucx_info_import.h>

#include <ucs/debug/log_def.h>

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ucs_log_func_rc_t
fuzz_ucx_info_silence(const char *file, unsigned line, const char *function,
                      ucs_log_level_t level,
                      const ucs_log_component_config_t *comp_conf,
                      const char *message, va_list ap)
{
    /* rejected inputs are the common case: keep the output readable */
    (void)file; (void)line; (void)function; (void)level; (void)comp_conf;
    (void)message; (void)ap;
    return UCS_LOG_FUNC_RC_STOP;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int silenced = 0;
    psel_resource_table_t table;
    ucs_status_t status;
    unsigned i;
    FILE *in;

    if (!silenced) {
        ucs_log_push_handler(fuzz_ucx_info_silence);
        silenced = 1;
    }
    if (size == 0) {
        return 0;
    }

    in = fmemopen((void*)data, size, "r");
    if (in == NULL) {
        return 0;
    }
    memset(&table, 0, sizeof(table));
    status = psel_ucx_info_import(in, "fuzz", &table);
    fclose(in);
    if (status != UCS_OK) {
        assert(table.resources == NULL);
        return 0;
    }

    assert(table.count > 0);
    for (i = 0; i < table.count; ++i) {
        const psel_resource_t *res = &table.resources[i];
        assert(res->tl_name[0] != '\0');
        assert(res->dev_name[0] != '\0');
        assert(res->bw_shared >= 0 && res->bw_dedicated >= 0);
        assert(res->latency.c >= 0 && res->overhead >= 0);
        assert(res->dev_type < UCT_DEVICE_TYPE_LAST);
        assert(res->am.min_zcopy <= res->am.max_zcopy);
    }
    free(table.resources);
    return 0;
}
