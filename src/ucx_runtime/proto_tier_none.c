/*
 * The protocol tier when protosel was configured without --with-ucx-src:
 * never available, quietly (the config tier acts).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_tier.h"

#include <stdio.h>

int psel_proto_tier_available(void *libucp, char *why, size_t max, int *quiet)
{
    snprintf(why, max, "libprotosel_ucx.so was built without UCX's internal "
             "headers (configure --with-ucx-src=DIR)");
    *quiet = 1;
    return 0;
}

void psel_proto_tier_install(void *libucp, const psel_config_t *config,
                             const psel_calib_t *calib)
{
}

const char *psel_proto_tier_built_for(void)
{
    return "";
}
