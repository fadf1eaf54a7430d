/*
 * For test_ucx_runtime_safe.sh: preloaded before libprotosel_ucx.so, it
 * makes UCP report version 1.99.0, as another UCX would, so that the
 * protocol tier's version check can be seen to refuse.
 */
#include <ucp/api/ucp.h>

void ucp_get_version(unsigned *major_version, unsigned *minor_version,
                     unsigned *release_number)
{
    *major_version  = 1;
    *minor_version  = 99;
    *release_number = 0;
}

const char *ucp_get_version_string(void)
{
    return "1.99.0";
}
