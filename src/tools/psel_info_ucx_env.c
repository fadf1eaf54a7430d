/*
 * psel_info --ucx-env and --ucx-conf: the UCX_* settings that bring a stock
 * UCP application closest to protosel's selection (derived in
 * ucx_runtime/ucx_settings.c, the same settings libprotosel_ucx.so's config
 * tier applies), each checked with the installed UCP first, printed for
 * `env $(psel_info --ucx-env) app` or written as a ucx.conf.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "psel_info.h"

#include <ucx_runtime/ucx_settings.h>
#include <ucp/api/ucp.h>
#include <ucs/sys/math.h>

#include <stdio.h>
#include <string.h>

static void print_notes(const psel_ucx_settings_t *s)
{
    const char *notes = ucs_string_buffer_cstr(&s->notes), *end;

    for (; (end = strchr(notes, '\n')) != NULL; notes = end + 1) {
        fprintf(stderr, "# %.*s\n", (int)(end - notes), notes);
    }
}

/* Keep the settings the installed UCP knows and accepts: a name its
 * context table lacks would land, unnoticed, among the transport settings
 * ucp_config_modify() caches */
static int check_settings(psel_ucx_settings_t *s)
{
    char current[PSEL_UCX_VALUE_MAX];
    psel_ucx_setting_t *setting;
    unsigned i, kept = 0;
    ucp_config_t *config;
    ucs_status_t status;

    status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        fprintf(stderr, "psel_info: cannot read the UCP configuration: %s; "
                "check the UCX_* variables above\n", ucs_status_string(status));
        return 1;
    }
    for (i = 0; i < s->count; ++i) {
        setting = &s->settings[i];
        if (psel_ucx_config_get(config, setting->name, current,
                                sizeof(current)) != UCS_OK) {
            psel_ucx_settings_note(s, "UCX %s has no UCX_%s: left out",
                                   ucp_get_version_string(), setting->name);
            continue;
        }
        status = ucp_config_modify(config, setting->name, setting->value);
        if (status != UCS_OK) {
            fprintf(stderr, "psel_info: UCX rejects UCX_%s=%s (%s): left "
                    "out\n", setting->name, setting->value,
                    ucs_status_string(status));
            continue;
        }
        s->settings[kept++] = *setting;
    }
    s->count = kept;
    ucp_config_release(config);
    return 0;
}

int psel_info_ucx_env(const psel_resource_table_t *local,
                      const psel_ep_lanes_t *lanes,
                      const psel_info_table_t *tables, unsigned count,
                      int locality, const char *conf_dir, int quiet)
{
    const psel_select_table_t *selected[3];
    psel_ucx_settings_t s;
    unsigned i;
    int ret;

    for (i = 0; i < ucs_min(count, ucs_static_array_size(selected)); ++i) {
        selected[i] = tables[i].table;
    }
    psel_ucx_settings_init(&s);
    psel_ucx_settings_derive(&s, local, lanes, selected, i, locality,
                             tables[0].select->calib != NULL);
    psel_ucx_settings_note(&s, "UCX's settings are global, one value for "
                           "every peer of a process: these serve the peer "
                           "this selection is for (--same-host, "
                           "--remote-host); for a job with peers of both "
                           "kinds keep only what both print (the config "
                           "tier of libprotosel_ucx.so does)");
    ret = check_settings(&s);
    if (ret == 0) {
        if (conf_dir != NULL) {
            if (psel_ucx_settings_write_conf(&s, conf_dir,
                                             local->origin) != UCS_OK) {
                ret = 1;
            } else if (!quiet) {
                fprintf(stderr, "psel_info: wrote %u settings to %s/ucx.conf; "
                        "UCX_CONFIG_DIR=%s makes UCX read them\n", s.count,
                        conf_dir, conf_dir);
            }
        } else {
            for (i = 0; i < s.count; ++i) {
                printf("UCX_%s=%s\n", s.settings[i].name, s.settings[i].value);
            }
        }
    }
    if (!quiet) {
        print_notes(&s);
    }
    psel_ucx_settings_cleanup(&s);
    return ret;
}
