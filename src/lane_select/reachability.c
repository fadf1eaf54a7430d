/**
 * @file reachability.c
 * The documented reachability rules for imported and snapshot peers.
 */
#include "reachability.h"

#include <string.h>


int psel_resource_is_tcp_loopback(const psel_resource_t *resource)
{
    return !strcmp(resource->tl_name, "tcp") && !strcmp(resource->dev_name, "lo");
}

int psel_resource_tl_is_ib(const char *tl_name)
{
    static const char *ib_tls[] = {"rc", "rc_verbs", "rc_mlx5", "dc",
                                   "dc_mlx5", "ud", "ud_verbs", "ud_mlx5"};
    unsigned i;

    for (i = 0; i < sizeof(ib_tls) / sizeof(ib_tls[0]); ++i) {
        if (!strcmp(tl_name, ib_tls[i])) {
            return 1;
        }
    }
    return 0;
}

int psel_resource_rule_reachable(const psel_resource_t *local,
                                 const psel_resource_t *remote, int same_host)
{
    if (strcmp(local->tl_name, remote->tl_name) ||
        (local->dev_type != remote->dev_type)) {
        return 0;
    }

    switch (local->dev_type) {
    case UCT_DEVICE_TYPE_SELF:
    case UCT_DEVICE_TYPE_ACC:
        /* accelerator copy transports (cuda_copy, gdr_copy, rocm_copy) copy
         * within one process: UCX uses them for its memory-type endpoint,
         * connected to the worker itself, never as a lane to a peer */
        return same_host == PSEL_PEER_SAME_PROCESS;
    case UCT_DEVICE_TYPE_SHM:
        return same_host != PSEL_PEER_REMOTE_HOST;
    default:
        break;
    }

    if (psel_resource_tl_is_ib(local->tl_name)) {
        /* one fabric: any port of any HCA reaches any other */
        return 1;
    }
    if (psel_resource_is_tcp_loopback(local) ||
        psel_resource_is_tcp_loopback(remote)) {
        /* 127.0.0.1 never leaves the host */
        return same_host != PSEL_PEER_REMOTE_HOST;
    }
    return 1;
}
