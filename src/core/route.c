/**
 * @file route.c
 * Kernel routes for live tcp reachability (see route.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "route.h"

#include <ucs/debug/log_def.h>
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#define PSEL_ROUTE_TCP_DEV_ADDR_HDR   2  /* u8 flags, u8 sa_family */
#define PSEL_ROUTE_TCP_FLAG_LOOPBACK  0x1

/* Any port: a connected UDP socket only looks up the route */
#define PSEL_ROUTE_PROBE_PORT         9

ucs_status_t psel_route_tcp_dev_addr(const void *dev_addr, size_t length,
                                     struct sockaddr_storage *dest)
{
    const uint8_t *p = dev_addr;
    struct sockaddr_in6 sin6;
    struct sockaddr_in sin;

    if (length < PSEL_ROUTE_TCP_DEV_ADDR_HDR) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (p[0] & PSEL_ROUTE_TCP_FLAG_LOOPBACK) {
        return UCS_ERR_UNSUPPORTED;
    }

    if ((p[1] == AF_INET) &&
        (length == PSEL_ROUTE_TCP_DEV_ADDR_HDR + sizeof(sin.sin_addr))) {
        memset(&sin, 0, sizeof(sin));
        sin.sin_family = AF_INET;
        memcpy(&sin.sin_addr, p + PSEL_ROUTE_TCP_DEV_ADDR_HDR,
               sizeof(sin.sin_addr));
        memset(dest, 0, sizeof(*dest));
        memcpy(dest, &sin, sizeof(sin));
        return UCS_OK;
    }
    if ((p[1] == AF_INET6) &&
        (length == PSEL_ROUTE_TCP_DEV_ADDR_HDR + sizeof(sin6.sin6_addr))) {
        memset(&sin6, 0, sizeof(sin6));
        sin6.sin6_family = AF_INET6;
        memcpy(&sin6.sin6_addr, p + PSEL_ROUTE_TCP_DEV_ADDR_HDR,
               sizeof(sin6.sin6_addr));
        memset(dest, 0, sizeof(*dest));
        memcpy(dest, &sin6, sizeof(sin6));
        return UCS_OK;
    }
    return UCS_ERR_INVALID_PARAM;
}

/* Whether @a a and @a b hold the same IP address (ports and scopes aside) */
static int psel_route_same_ip(const struct sockaddr *a,
                              const struct sockaddr *b)
{
    if (a->sa_family != b->sa_family) {
        return 0;
    }
    if (a->sa_family == AF_INET) {
        return ((const struct sockaddr_in*)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in*)b)->sin_addr.s_addr;
    }
    return (a->sa_family == AF_INET6) &&
           !memcmp(&((const struct sockaddr_in6*)a)->sin6_addr,
                   &((const struct sockaddr_in6*)b)->sin6_addr,
                   sizeof(struct in6_addr));
}

/* getifaddrs() names an IPv4 address with a label "eth0:1" by the label */
static int psel_route_name_is_device(const char *name, const char *dev_name)
{
    size_t len = strlen(dev_name);

    return !strncmp(name, dev_name, len) &&
           ((name[len] == '\0') || (name[len] == ':'));
}

/* Which device holds @a addr: 1 @a dev_name, 0 another one; error: none */
static ucs_status_t psel_route_owner_is(const struct sockaddr *addr,
                                        const char *dev_name, int *is_dev_p)
{
    struct ifaddrs *ifaddrs, *ifa;
    int found = 0, is_dev = 0;

    if (getifaddrs(&ifaddrs) < 0) {
        ucs_debug("route: getifaddrs() failed: %m");
        return UCS_ERR_IO_ERROR;
    }
    for (ifa = ifaddrs; ifa != NULL; ifa = ifa->ifa_next) {
        if ((ifa->ifa_addr != NULL) && (ifa->ifa_name != NULL) &&
            psel_route_same_ip(ifa->ifa_addr, addr)) {
            found   = 1;
            is_dev |= psel_route_name_is_device(ifa->ifa_name, dev_name);
        }
    }
    freeifaddrs(ifaddrs);
    if (!found) {
        return UCS_ERR_NO_ELEM;
    }
    *is_dev_p = is_dev;
    return UCS_OK;
}

ucs_status_t psel_route_is_via_device(const char *dev_name,
                                      const struct sockaddr *dest,
                                      int *via_dev_p,
                                      struct sockaddr_storage *source)
{
    struct sockaddr_storage probe, src;
    socklen_t len, src_len;
    ucs_status_t status;
    int fd, is_dev;

    memset(&probe, 0, sizeof(probe));
    if (dest->sa_family == AF_INET) {
        len = sizeof(struct sockaddr_in);
        memcpy(&probe, dest, len);
        ((struct sockaddr_in*)&probe)->sin_port = htons(PSEL_ROUTE_PROBE_PORT);
    } else if (dest->sa_family == AF_INET6) {
        len = sizeof(struct sockaddr_in6);
        memcpy(&probe, dest, len);
        ((struct sockaddr_in6*)&probe)->sin6_port =
                htons(PSEL_ROUTE_PROBE_PORT);
    } else {
        return UCS_ERR_UNSUPPORTED;
    }

    fd = socket(dest->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        ucs_debug("route: socket(%s, SOCK_DGRAM) failed: %m",
                  (dest->sa_family == AF_INET) ? "AF_INET" : "AF_INET6");
        return UCS_ERR_IO_ERROR;
    }
    if (connect(fd, (struct sockaddr*)&probe, len) < 0) {
        if ((errno == ENETUNREACH) || (errno == EHOSTUNREACH)) {
            /* the kernel knows no way there, from any device */
            status     = UCS_OK;
            *via_dev_p = 0;
            if (source != NULL) {
                memset(source, 0, sizeof(*source));
                source->ss_family = AF_UNSPEC;
            }
        } else {
            ucs_debug("route: connect() of a UDP probe failed: %m");
            status = UCS_ERR_IO_ERROR;
        }
        goto out_close;
    }
    src_len = sizeof(src);
    if (getsockname(fd, (struct sockaddr*)&src, &src_len) < 0) {
        ucs_debug("route: getsockname() of a UDP probe failed: %m");
        status = UCS_ERR_IO_ERROR;
        goto out_close;
    }
    status = psel_route_owner_is((struct sockaddr*)&src, dev_name, &is_dev);
    if (status != UCS_OK) {
        goto out_close;
    }
    *via_dev_p = is_dev;
    if (source != NULL) {
        *source = src;
    }

out_close:
    close(fd);
    return status;
}
