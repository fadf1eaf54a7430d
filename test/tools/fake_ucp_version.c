/*
 * For test_ucx_runtime_safe.sh: preloaded before libprotosel_ucx.so, it
 * makes UCP report another version, as another UCX would:
 * PSEL_FAKE_UCP_VERSION_IS=MAJOR.MINOR.RELEASE (default 1.99.0), so that
 * the version checks can be seen to refuse: another major.minor before
 * anything of protosel is loaded, another release in the protocol tier.
 */
#include <ucp/api/ucp.h>

#include <stdio.h>
#include <stdlib.h>

static const char *fake_version(void)
{
    const char *v = getenv("PSEL_FAKE_UCP_VERSION_IS");

    return (v != NULL) ? v : "1.99.0";
}

void ucp_get_version(unsigned *major_version, unsigned *minor_version,
                     unsigned *release_number)
{
    if (sscanf(fake_version(), "%u.%u.%u", major_version, minor_version,
               release_number) != 3) {
        abort(); /* a mistake in the test */
    }
}

const char *ucp_get_version_string(void)
{
    return fake_version();
}
