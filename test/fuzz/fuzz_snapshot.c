/*
 * Fuzz harness for the snapshot loader: any input must be either rejected
 * with UCS_ERR_INVALID_PARAM or loaded into a table that saves and loads back
 * to the same table. Built with replay_main.c for `make check`, or with
 * libFuzzer (see test/fuzz/README.md).
 */
#include <lane_select/snapshot.h>
#include <lane_select/resource_table.h>

#include <ucs/debug/log_def.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ucs_log_func_rc_t
fuzz_quiet_log(const char *file, unsigned line, const char *function,
               ucs_log_level_t level,
               const ucs_log_component_config_t *comp_conf,
               const char *message, va_list ap)
{
    /* rejections are expected: keep the output readable */
    return UCS_LOG_FUNC_RC_STOP;
}

static ucs_status_t fuzz_load(const void *data, size_t size,
                              psel_resource_table_t *table)
{
    ucs_status_t status;
    FILE *stream;

    if (size == 0) {
        /* fmemopen rejects empty buffers */
        stream = fopen("/dev/null", "r");
    } else {
        stream = fmemopen((void*)data, size, "r");
    }
    if (stream == NULL) {
        abort();
    }
    status = psel_snapshot_load(stream, "fuzz", table);
    fclose(stream);
    return status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int initialized;
    psel_resource_table_t table, again;
    ucs_status_t status;
    char *text  = NULL;
    size_t len  = 0;
    FILE *stream;

    if (!initialized) {
        ucs_log_push_handler(fuzz_quiet_log);
        initialized = 1;
    }

    status = fuzz_load(data, size, &table);
    if (status != UCS_OK) {
        if (status != UCS_ERR_INVALID_PARAM) {
            abort();
        }
        return 0;
    }

    /* whatever loads must survive a save/load round trip unchanged */
    stream = open_memstream(&text, &len);
    if ((stream == NULL) || (psel_snapshot_save(&table, stream) != UCS_OK)) {
        abort();
    }
    fclose(stream);

    if ((fuzz_load(text, len, &again) != UCS_OK) ||
        (again.count != table.count) ||
        ((table.count > 0) &&
         (strcmp(again.resources[table.count - 1].dev_name,
                 table.resources[table.count - 1].dev_name) ||
          (again.resources[0].cap_flags != table.resources[0].cap_flags) ||
          (memcmp(&again.resources[0].latency, &table.resources[0].latency,
                  sizeof(table.resources[0].latency)) != 0)))) {
        abort();
    }

    psel_resource_table_cleanup(&again);
    psel_resource_table_cleanup(&table);
    free(text);
    return 0;
}
