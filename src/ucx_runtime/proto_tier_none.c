/*
 * The protocol tier when protosel was configured without --with-ucx-src,
 * or with the tree of a UCX release it has no adapter for
 * (docs/runtime-library.md): never available, quietly unless the user asked
 * for it (the config tier acts).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_tier.h"

#include <stdio.h>

int psel_proto_tier_available(void *libucp, char *why, size_t max, int *quiet)
{
#ifdef PSEL_PROTO_TIER_UNPORTED
    snprintf(why, max, "it has no adapter for UCX " PSEL_PROTO_TIER_UNPORTED
             "'s protocols (UCX 1.13 to 1.16 and 1.18 on have one)");
#else
    snprintf(why, max, "libprotosel_ucx.so was built without UCX's internal "
             "headers (configure --with-ucx-src=DIR)");
#endif
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
