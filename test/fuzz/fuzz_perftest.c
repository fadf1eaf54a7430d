/*
 * Fuzz harness for what a psel_perftest server takes from the network before
 * it runs anything: the test parameters (40 bytes, pt_params_unpack) and the
 * settings of a calibration session (pt_settings_parse), which end in
 * setenv() on the server. The first input byte chooses the message (even:
 * settings text, odd: parameters), the rest is the message.
 *
 * Settings must be refused with a printable reason, or accepted with only
 * allow-listed keys whose values follow their grammar (re-checked here
 * independently: no whitespace, no '=', UCX_PSEL_CALIBRATION only "none");
 * the canonical text must parse back to the same settings and format to the
 * same bytes. Parameters must be refused with a reason, or pass
 * pt_params_check() and pack back to exactly the same 40 bytes. Anything
 * else aborts. Built with replay_main.c for `make check`.
 */
#include <tools/perftest_run.h>
#include <tools/perftest_settings.h>

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_perftest: %s\n", what);
        abort();
    }
}

static void fuzz_check_reason(const char *err)
{
    size_t i;

    fuzz_check(err[0] != '\0', "refused without a reason");
    for (i = 0; err[i] != '\0'; ++i) {
        fuzz_check(isprint((unsigned char)err[i]), "unprintable reason");
    }
}

static void fuzz_settings(const char *text, size_t len)
{
    char err[256] = "", canon[PT_SETTINGS_MAX_TEXT + 1];
    char canon2[PT_SETTINGS_MAX_TEXT + 1];
    pt_settings_t settings, again;
    size_t clen, clen2;
    const char *v;
    unsigned i;

    memset(&settings, 0x5a, sizeof(settings));
    if (pt_settings_parse(text, len, &settings, err, sizeof(err)) != 0) {
        fuzz_check_reason(err);
        return;
    }

    for (i = 0; i < PT_SETTINGS_MAX_KEYS; ++i) {
        v = settings.value[i];
        fuzz_check(strlen(v) <= PT_SETTINGS_MAX_VALUE, "value too long");
        fuzz_check(strpbrk(v, " \t\r\n\v\f=\"'$`\\;") == NULL,
                   "value with a forbidden character");
        if (!strcmp(pt_settings_key(i), "UCX_PSEL_CALIBRATION")) {
            fuzz_check((v[0] == '\0') || !strcmp(v, "none"),
                       "a calibration file name was accepted");
        }
    }

    clen = pt_settings_format(&settings, canon, sizeof(canon));
    fuzz_check(clen <= PT_SETTINGS_MAX_TEXT, "canonical text too long");
    fuzz_check(pt_settings_parse(canon, clen, &again, err, sizeof(err)) == 0,
               "canonical text refused");
    for (i = 0; i < PT_SETTINGS_MAX_KEYS; ++i) {
        fuzz_check(!strcmp(settings.value[i], again.value[i]),
                   "canonical text parsed to other settings");
    }
    clen2 = pt_settings_format(&again, canon2, sizeof(canon2));
    fuzz_check((clen == clen2) && !memcmp(canon, canon2, clen),
               "canonical text not stable");
}

static void fuzz_params(const uint8_t *data, size_t size)
{
    uint8_t wire[PT_WIRE_PARAMS_SIZE] = {0}, packed[PT_WIRE_PARAMS_SIZE];
    char err[256] = "";
    pt_params_t params;

    memcpy(wire, data, (size < sizeof(wire)) ? size : sizeof(wire));
    if (pt_params_unpack(wire, &params, err, sizeof(err)) != 0) {
        fuzz_check_reason(err);
        return;
    }
    fuzz_check(pt_params_check(&params, err, sizeof(err)) == 0,
               "unpacked parameters fail the check");
    pt_params_pack(&params, packed);
    fuzz_check(!memcmp(wire, packed, sizeof(wire)),
               "parameters do not pack back to the same bytes");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    if (data[0] & 1) {
        fuzz_params(data + 1, size - 1);
    } else {
        fuzz_settings((const char*)data + 1, size - 1);
    }
    return 0;
}
