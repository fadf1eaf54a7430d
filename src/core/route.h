/**
 * @file route.h
 * Kernel routes for live tcp reachability. UCT tcp 1.13 reports every peer
 * address as reachable from every device; the kernel sends a connection out
 * of the device its route for the destination names, whatever iface UCT
 * opened. These helpers tell whether a local device is the one the kernel
 * would use (as UCX 1.17's UCX_TCP_REACHABILITY_MODE=route). Not installed.
 */
#ifndef PSEL_CORE_ROUTE_H_
#define PSEL_CORE_ROUTE_H_

#include <ucs/type/status.h>
#include <sys/socket.h>
#include <stddef.h>

/**
 * The IP address of a UCT tcp device address (UCX 1.13 layout: u8 flags,
 * u8 address family, then the in_addr or in6_addr; with the loopback flag
 * a network-namespace id follows instead of an address).
 *
 * @param [in]  dev_addr  Device address bytes, as the peer's worker address
 *                        carries them.
 * @param [in]  length    Valid bytes in @a dev_addr.
 * @param [out] dest      The address, port 0; set only on success.
 *
 * @return UCS_OK; UCS_ERR_UNSUPPORTED for a loopback device address (it
 *         holds no IP address); UCS_ERR_INVALID_PARAM for a length or
 *         address family that does not match the layout.
 */
ucs_status_t psel_route_tcp_dev_addr(const void *dev_addr, size_t length,
                                     struct sockaddr_storage *dest);


/**
 * Whether the kernel sends to @a dest from device @a dev_name: a UDP socket
 * is connect()ed to @a dest (no packet leaves) and the source address the
 * kernel chose for it must be an address of @a dev_name. A destination on
 * this host is reached from the device that holds it (the kernel picks
 * that address as the source), although the packets go through lo.
 *
 * @param [in]  dev_name   Network interface name (an IPv4 label
 *                         "dev_name:N" counts as the device).
 * @param [in]  dest       IPv4 or IPv6 destination (the port is ignored).
 * @param [out] via_dev_p  1 if the route leaves from @a dev_name, 0 if not
 *                         (the source is another device's, or there is no
 *                         route: ENETUNREACH, EHOSTUNREACH).
 * @param [out] source     The source address the kernel chose; its family
 *                         is AF_UNSPEC when there is no route. May be NULL.
 *
 * @return UCS_OK, or an error when it cannot be told (socket(),
 *         getsockname() or getifaddrs() failed, an unsupported address
 *         family, or a source address no device holds); outputs are then
 *         untouched.
 */
ucs_status_t psel_route_is_via_device(const char *dev_name,
                                      const struct sockaddr *dest,
                                      int *via_dev_p,
                                      struct sockaddr_storage *source);

#endif
