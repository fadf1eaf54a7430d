/*
 * The settings a calibration session applies to a process's environment
 * (src/tools/perftest_settings.h): each configuration starts from the
 * environment the operator started the process with, whatever earlier
 * configurations set.
 */
#include <tools/perftest_settings.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void apply_text(const char *text)
{
    pt_settings_t settings;
    char err[256] = "";

    if (pt_settings_parse(text, strlen(text), &settings, err,
                          sizeof(err)) != 0) {
        fail_msg("'%s' refused: %s", text, err);
    }
    pt_settings_apply(&settings);
}

static void assert_env(const char *name, const char *expected)
{
    const char *value = getenv(name);

    if (expected == NULL) {
        if (value != NULL) {
            fail_msg("%s is '%s', expected it unset", name, value);
        }
        return;
    }
    if ((value == NULL) || strcmp(value, expected)) {
        fail_msg("%s is %s%s%s, expected '%s'", name, value ? "'" : "",
                 value ? value : "unset", value ? "'" : "", expected);
    }
}

/* The operator started the server with UCX_PSEL_TLS=tcp: a setup that
 * sets it changes it for that setup only; the next setup that omits the
 * key runs with the operator's value again, not without any (which would
 * open every transport) */
static void test_omitted_key_gets_the_operators_value_back(void **state)
{
    (void)state;
    setenv("UCX_PSEL_TLS", "tcp", 1);
    setenv("UCX_PSEL_NET_DEVICES", "eth0", 1);

    apply_text("UCX_PSEL_TLS=posix,sysv\nUCX_PSEL_NET_DEVICES=lo");
    assert_env("UCX_PSEL_TLS", "posix,sysv");
    assert_env("UCX_PSEL_NET_DEVICES", "lo");

    apply_text("UCX_PSEL_CALIBRATION=none");
    assert_env("UCX_PSEL_TLS", "tcp");
    assert_env("UCX_PSEL_NET_DEVICES", "eth0");
    assert_env("UCX_PSEL_CALIBRATION", "none");

    /* twice over the same key: the value from before the session stays
     * the one restored */
    apply_text("UCX_PSEL_TLS=cma");
    apply_text("UCX_PSEL_TLS=sysv");
    apply_text("UCX_PSEL_MAX_RNDV_LANES=2");
    assert_env("UCX_PSEL_TLS", "tcp");
    assert_env("UCX_PSEL_CALIBRATION", NULL);
    assert_env("UCX_PSEL_MAX_RNDV_LANES", "2");

    pt_env_restore();
    assert_env("UCX_PSEL_MAX_RNDV_LANES", NULL);
    unsetenv("UCX_PSEL_TLS");
    unsetenv("UCX_PSEL_NET_DEVICES");
}

/* A key that was not set before the session is unset again when a later
 * configuration omits it */
static void test_key_unset_before_is_unset_again(void **state)
{
    (void)state;
    unsetenv("UCX_PSEL_PROTOS");
    apply_text("UCX_PSEL_PROTOS=egr/*");
    assert_env("UCX_PSEL_PROTOS", "egr/*");
    apply_text("UCX_PSEL_TLS=tcp");
    assert_env("UCX_PSEL_PROTOS", NULL);
    pt_env_restore();
    assert_env("UCX_PSEL_TLS", NULL);
}

/* The client's own settings (pt_env_set, its rails file and devices) go
 * back too, also when they name a key the settings set as well */
static void test_local_settings_are_restored(void **state)
{
    (void)state;
    setenv("UCX_PSEL_NET_DEVICES", "eth1", 1);
    setenv("UCX_PSEL_CALIBRATION", "/operator/file", 1);

    apply_text("UCX_PSEL_CALIBRATION=none");
    pt_env_set("UCX_PSEL_CALIBRATION", "/tmp/rails");
    pt_env_set("UCX_PSEL_NET_DEVICES", "eth0");
    assert_env("UCX_PSEL_CALIBRATION", "/tmp/rails");
    assert_env("UCX_PSEL_NET_DEVICES", "eth0");

    apply_text("UCX_PSEL_TLS=tcp");
    assert_env("UCX_PSEL_CALIBRATION", "/operator/file");
    assert_env("UCX_PSEL_NET_DEVICES", "eth1");

    pt_env_restore();
    assert_env("UCX_PSEL_TLS", NULL);
    unsetenv("UCX_PSEL_NET_DEVICES");
    unsetenv("UCX_PSEL_CALIBRATION");
}

/* Start from an environment without any of the keys (the suite sets
 * UCX_PSEL_CALIBRATION=none for every test) */
static int unset_keys(void **state)
{
    unsigned i;

    (void)state;
    for (i = 0; pt_settings_key(i) != NULL; ++i) {
        unsetenv(pt_settings_key(i));
    }
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_omitted_key_gets_the_operators_value_back,
                               unset_keys),
        cmocka_unit_test_setup(test_key_unset_before_is_unset_again,
                               unset_keys),
        cmocka_unit_test_setup(test_local_settings_are_restored, unset_keys),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
