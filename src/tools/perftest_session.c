/*
 * The calibration session of psel_calibrate with a psel_perftest server or
 * a forked peer, see perftest_session.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "perftest_session.h"

#include <ucs/sys/math.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Calibration session                                                    */
/* ---------------------------------------------------------------------- */

#define PT_SESSION_MAX_REPEATS      1000u

enum {
    PT_CMD_CONFIGURE = 1, /* blob: settings; reply: verdict + reason blob */
    PT_CMD_MEASURE   = 2, /* params + repeats; then warm-up and phases */
    PT_CMD_END       = 3
};

static ucs_status_t pt_send_cmd(pt_run_t *run, uint32_t cmd)
{
    uint8_t wire[4];

    psel_oob_put_le(wire, cmd, sizeof(wire));
    return psel_oob_send(&run->oob, wire, sizeof(wire));
}

static void pt_no_report(void *arg)
{
}

/*
 * Warm-up, then @a repeats phases between barriers; the client times them.
 * Both sides time each iteration too, as psel_perftest's and
 * ucx_perftest's measured loops do (the figures are not kept): a clock
 * read per message is part of what those tools see, and streaming small
 * messages is paced by it (egr/short over shared memory streamed 32 B in
 * 38 ns per message without it, 56 ns with it, against egr/bcopy's 48 and
 * 45: the order turns).
 */
static ucs_status_t pt_measure_phases(pt_run_t *run, int is_client,
                                      unsigned repeats, double *times)
{
    ucs_status_t status;
    unsigned factor = pt_tests[run->params.test].pingpong ? 2 : 1;
    pt_timing_t *timing;
    double start;
    unsigned i;

    timing = calloc(1, sizeof(*timing));
    if (timing == NULL) {
        PT_ERR("out of memory for a phase's timing\n");
        return UCS_ERR_NO_MEMORY;
    }
    timing->report    = pt_no_report;
    timing->report_at = INFINITY;
    timing->last      = psel_time_sec();

    status = pt_prepare(run);
    if ((status == UCS_OK) && pt_tests[run->params.test].rma) {
        status = pt_ucp_rma_exchange(run, is_client);
    }
    if (status == UCS_OK) {
        status = pt_warmup(run, is_client);
    }
    for (i = 0; (status == UCS_OK) && (i < repeats); ++i) {
        /* the barrier leaves the peer blocked in poll(); one untimed
         * iteration gets both sides spinning before the clock starts, so
         * the peer's wake-up is not counted */
        status = psel_oob_barrier(&run->oob);
        if (status == UCS_OK) {
            status = pt_run_phase(run, is_client, 1, 0);
        }
        if (status != UCS_OK) {
            break;
        }
        start       = psel_oob_time();
        run->timing = timing;
        status      = pt_run_phase(run, is_client, run->params.iters, 1);
        run->timing = NULL;
        if (is_client) {
            times[i] = (psel_oob_time() - start) /
                       ((double)run->params.iters * factor);
        }
    }
    if (status == UCS_OK) {
        status = psel_oob_barrier(&run->oob);
    }
    free(timing);
    return status;
}

static ucs_status_t pt_serve_configure(pt_run_t *run)
{
    char err[256] = "", *text = NULL;
    pt_settings_t settings;
    uint32_t verdict;
    uint8_t wire[4];
    size_t len;
    ucs_status_t status;

    status = psel_oob_recv_blob(&run->oob, "settings", PT_SETTINGS_MAX_TEXT,
                                (void**)&text, &len);
    if (status != UCS_OK) {
        return status;
    }

    verdict = (pt_settings_parse(text, len, &settings, err, sizeof(err)) != 0);
    if (!verdict && (run->path != PT_PATH_UCP) &&
        pt_settings_has_ucp(&settings)) {
        snprintf(err, sizeof(err), "this server measures protosel's data "
                 "path, not stock UCP (UCX_* settings are for the peer "
                 "psel_calibrate --ucp forks)");
        verdict = 1;
    }
    if (verdict) {
        PT_ERR("rejected the client's settings: %s\n", err);
    } else {
        pt_settings_apply(&settings);
    }
    free(text);

    psel_oob_put_le(wire, verdict, sizeof(wire));
    status = psel_oob_send(&run->oob, wire, sizeof(wire));
    if (status == UCS_OK) {
        status = psel_oob_send_blob(&run->oob, err, strlen(err));
    }
    if ((status != UCS_OK) || verdict) {
        return (status != UCS_OK) ? status : UCS_ERR_INVALID_PARAM;
    }

    pt_disconnect(run);
    return pt_connect(run, 0);
}

static ucs_status_t pt_serve_measure(pt_run_t *run)
{
    uint8_t wire[PT_WIRE_PARAMS_SIZE + 4];
    char err[256];
    unsigned repeats;
    ucs_status_t status;
    int connected;

    status = psel_oob_recv(&run->oob, wire, sizeof(wire));
    if (status != UCS_OK) {
        return status;
    }
    if (pt_params_unpack(wire, &run->params, err, sizeof(err)) != 0) {
        PT_ERR("rejected a measurement: %s\n", err);
        return UCS_ERR_INVALID_PARAM;
    }
    repeats   = psel_oob_get_le(wire + PT_WIRE_PARAMS_SIZE, 4);
    connected = (run->path == PT_PATH_UCP) ? (run->ucp_ep != NULL) :
                                             (run->ep != NULL);
    if ((run->params.test == PT_TEST_CALIBRATE) ||
        (pt_tests[run->params.test].rma && (run->path != PT_PATH_UCP)) ||
        (repeats == 0) ||
        (repeats > PT_SESSION_MAX_REPEATS) || !connected) {
        PT_ERR("rejected a measurement: test %u, %u repeats%s\n",
               run->params.test, repeats,
               !connected ? ", before any configuration" : "");
        return UCS_ERR_INVALID_PARAM;
    }
    return pt_measure_phases(run, 0, repeats, NULL);
}

ucs_status_t pt_session_serve(pt_run_t *run)
{
    ucs_status_t status;
    uint8_t wire[4];
    uint32_t cmd;

    for (;;) {
        status = psel_oob_recv(&run->oob, wire, sizeof(wire));
        if (status != UCS_OK) {
            return status;
        }
        cmd = psel_oob_get_le(wire, sizeof(wire));
        switch (cmd) {
        case PT_CMD_CONFIGURE:
            status = pt_serve_configure(run);
            break;
        case PT_CMD_MEASURE:
            status = pt_serve_measure(run);
            break;
        case PT_CMD_END:
            pt_disconnect(run); /* with the client, which does the same */
            return UCS_OK;
        default:
            PT_ERR("unknown calibration command %u from the client\n", cmd);
            return UCS_ERR_INVALID_PARAM;
        }
        if (status != UCS_OK) {
            return status;
        }
    }
}

/* Set this side's own settings ("NAME=VALUE" lines) for this configuration,
 * after pt_settings_apply() brought back the environment the process
 * started with */
static void pt_local_apply(const char *local)
{
    char buf[PT_SETTINGS_MAX_TEXT + 1];
    char *line, *save, *eq;

    if (local == NULL) {
        return;
    }
    snprintf(buf, sizeof(buf), "%s", local);
    for (line = strtok_r(buf, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        eq = strchr(line, '=');
        if (eq == NULL) {
            continue;
        }
        *eq = '\0';
        pt_env_set(line, eq + 1);
    }
}

ucs_status_t pt_session_configure(pt_run_t *run, const char *text,
                                  const char *local)
{
    size_t len  = strlen(text);
    pt_settings_t settings;
    void *reason = NULL;
    size_t reason_len;
    char err[256];
    uint8_t wire[4];
    ucs_status_t status;

    if (pt_settings_parse(text, len, &settings, err, sizeof(err)) != 0) {
        PT_ERR("bad settings: %s\n", err);
        return UCS_ERR_INVALID_PARAM;
    }

    status = pt_send_cmd(run, PT_CMD_CONFIGURE);
    if (status == UCS_OK) {
        status = psel_oob_send_blob(&run->oob, text, len);
    }
    if (status == UCS_OK) {
        status = psel_oob_recv(&run->oob, wire, sizeof(wire));
    }
    if (status == UCS_OK) {
        status = psel_oob_recv_blob(&run->oob, "reply", PT_MAX_REPLY_LEN,
                                    &reason, &reason_len);
    }
    if (status != UCS_OK) {
        return status;
    }
    if (psel_oob_get_le(wire, sizeof(wire)) != 0) {
        PT_ERR("the server rejected the settings: %.*s\n", (int)reason_len,
               (char*)reason);
        free(reason);
        return UCS_ERR_INVALID_PARAM;
    }
    free(reason);

    pt_settings_apply(&settings);
    pt_local_apply(local);
    pt_disconnect(run);
    return pt_connect(run, 1);
}

ucs_status_t pt_session_measure(pt_run_t *run, pt_test_id_t test, size_t size,
                                uint32_t flags, uint64_t iters,
                                unsigned repeats, double *times)
{
    uint8_t wire[PT_WIRE_PARAMS_SIZE + 4];
    pt_params_t params = {
        .test   = test,
        .flags  = flags,
        .size   = size,
        .iters  = iters,
        .warmup = ucs_max(iters / 4, 1)
    };
    char err[256];
    ucs_status_t status;

    if ((pt_params_check(&params, err, sizeof(err)) != 0) || (repeats == 0) ||
        (repeats > PT_SESSION_MAX_REPEATS)) {
        PT_ERR("bad measurement (%u repeats): %s\n", repeats, err);
        return UCS_ERR_INVALID_PARAM;
    }

    pt_params_pack(&params, wire);
    psel_oob_put_le(wire + PT_WIRE_PARAMS_SIZE, repeats, 4);
    status = pt_send_cmd(run, PT_CMD_MEASURE);
    if (status == UCS_OK) {
        status = psel_oob_send(&run->oob, wire, sizeof(wire));
    }
    if (status != UCS_OK) {
        return status;
    }

    run->params = params;
    return pt_measure_phases(run, 1, repeats, times);
}

ucs_status_t pt_session_end(pt_run_t *run)
{
    ucs_status_t status = pt_send_cmd(run, PT_CMD_END);

    if (status == UCS_OK) {
        pt_disconnect(run); /* with the server, which does the same */
    }
    return status;
}
