/*
 * Kernel routes for live tcp reachability (src/core/route.c): decoding UCT
 * tcp 1.13 device addresses (synthetic bytes, and the real addresses of
 * this machine's tcp ifaces), the route check on loopback and on this
 * machine's own addresses (only what the kernel answers the same way on
 * every Linux box), and the endpoint's reachability callback pruning a pair
 * UCT calls reachable.
 */
#include "test_util.h"

#include <core/core_int.h>
#include <core/route.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static struct sockaddr *sa(struct sockaddr_storage *ss)
{
    return (struct sockaddr*)ss;
}

static void make_in(struct sockaddr_storage *ss, const char *ip)
{
    struct sockaddr_in *sin = (struct sockaddr_in*)ss;

    memset(ss, 0, sizeof(*ss));
    sin->sin_family = AF_INET;
    assert_int_equal(inet_pton(AF_INET, ip, &sin->sin_addr), 1);
}

static void make_in6(struct sockaddr_storage *ss, const char *ip)
{
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6*)ss;

    memset(ss, 0, sizeof(*ss));
    sin6->sin6_family = AF_INET6;
    assert_int_equal(inet_pton(AF_INET6, ip, &sin6->sin6_addr), 1);
}

static int same_ip(const struct sockaddr_storage *a,
                   const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family) {
        return 0;
    }
    if (a->ss_family == AF_INET) {
        return ((const struct sockaddr_in*)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in*)b)->sin_addr.s_addr;
    }
    return !memcmp(&((const struct sockaddr_in6*)a)->sin6_addr,
                   &((const struct sockaddr_in6*)b)->sin6_addr,
                   sizeof(struct in6_addr));
}

/* An up, non-loopback interface with an IPv4 address: its name and
 * address; 0 if this machine has none */
static int other_ipv4_device(char *name, size_t max,
                             struct sockaddr_storage *addr)
{
    struct ifaddrs *ifaddrs, *ifa;
    int found = 0;

    assert_int_equal(getifaddrs(&ifaddrs), 0);
    for (ifa = ifaddrs; (ifa != NULL) && !found; ifa = ifa->ifa_next) {
        if ((ifa->ifa_addr != NULL) && (ifa->ifa_addr->sa_family == AF_INET) &&
            (ifa->ifa_flags & IFF_UP) && !(ifa->ifa_flags & IFF_LOOPBACK) &&
            (strchr(ifa->ifa_name, ':') == NULL) &&
            (strlen(ifa->ifa_name) < max)) {
            strcpy(name, ifa->ifa_name);
            memset(addr, 0, sizeof(*addr));
            memcpy(addr, ifa->ifa_addr, sizeof(struct sockaddr_in));
            found = 1;
        }
    }
    freeifaddrs(ifaddrs);
    return found;
}

static void test_dev_addr_decodes_ipv4_and_ipv6(void **state)
{
    const uint8_t v4[] = {0, AF_INET, 10, 1, 2, 3};
    uint8_t v6[18]     = {0, AF_INET6};
    struct sockaddr_storage out, expect;

    (void)state;
    assert_int_equal(psel_route_tcp_dev_addr(v4, sizeof(v4), &out), UCS_OK);
    make_in(&expect, "10.1.2.3");
    assert_true(same_ip(&out, &expect));
    assert_int_equal(((struct sockaddr_in*)&out)->sin_port, 0);

    make_in6(&expect, "fd00::1:2");
    memcpy(v6 + 2, &((struct sockaddr_in6*)&expect)->sin6_addr, 16);
    assert_int_equal(psel_route_tcp_dev_addr(v6, sizeof(v6), &out), UCS_OK);
    assert_true(same_ip(&out, &expect));
}

static void test_dev_addr_rejects_loopback_and_bad_layouts(void **state)
{
    /* loopback: flag 1, then a namespace id, no IP address */
    const uint8_t lo[]       = {1, AF_INET, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    const uint8_t short4[]   = {0, AF_INET, 10, 1, 2};
    const uint8_t long4[]    = {0, AF_INET, 10, 1, 2, 3, 4};
    const uint8_t v6_as_4[]  = {0, AF_INET6, 10, 1, 2, 3};
    const uint8_t unknown[]  = {0, 77, 10, 1, 2, 3};
    struct sockaddr_storage out;

    (void)state;
    memset(&out, 0x5a, sizeof(out));
    assert_int_equal(psel_route_tcp_dev_addr(lo, sizeof(lo), &out),
                     UCS_ERR_UNSUPPORTED);
    assert_int_equal(psel_route_tcp_dev_addr(lo, 1, &out),
                     UCS_ERR_INVALID_PARAM);
    assert_int_equal(psel_route_tcp_dev_addr(short4, sizeof(short4), &out),
                     UCS_ERR_INVALID_PARAM);
    assert_int_equal(psel_route_tcp_dev_addr(long4, sizeof(long4), &out),
                     UCS_ERR_INVALID_PARAM);
    assert_int_equal(psel_route_tcp_dev_addr(v6_as_4, sizeof(v6_as_4), &out),
                     UCS_ERR_INVALID_PARAM);
    assert_int_equal(psel_route_tcp_dev_addr(unknown, sizeof(unknown), &out),
                     UCS_ERR_INVALID_PARAM);
    assert_int_equal(out.ss_family, 0x5a5a); /* untouched */
}

static void test_loopback_reached_from_lo_only(void **state)
{
    struct sockaddr_storage dest, src;
    int via;

    (void)state;
    make_in(&dest, "127.0.0.1");
    via = -1;
    assert_int_equal(psel_route_is_via_device("lo", sa(&dest), &via, &src),
                     UCS_OK);
    assert_int_equal(via, 1);
    assert_true(same_ip(&src, &dest));

    /* 127.0.0.1 is lo's: no other device (existing or not) sends there */
    via = -1;
    assert_int_equal(psel_route_is_via_device("psel_nodev0", sa(&dest), &via,
                                              NULL), UCS_OK);
    assert_int_equal(via, 0);
    /* a device whose name starts like lo's is another device */
    via = -1;
    assert_int_equal(psel_route_is_via_device("l", sa(&dest), &via, NULL),
                     UCS_OK);
    assert_int_equal(via, 0);
}

static void test_ipv6_loopback_reached_from_lo(void **state)
{
    struct sockaddr_storage dest;
    ucs_status_t status;
    int via = -1;

    (void)state;
    make_in6(&dest, "::1");
    status = psel_route_is_via_device("lo", sa(&dest), &via, NULL);
    if (status != UCS_OK) {
        skip(); /* IPv6 disabled on this machine */
    }
    assert_int_equal(via, 1);
    via = -1;
    assert_int_equal(psel_route_is_via_device("psel_nodev0", sa(&dest), &via,
                                              NULL), UCS_OK);
    assert_int_equal(via, 0);
}

/* An address of this host is sent to through lo, from the source address
 * that is the destination itself: reached from its own device, not from lo
 * (this keeps same-host eth0 <-> eth0 lanes) */
static void test_own_address_reached_from_its_device_not_lo(void **state)
{
    struct sockaddr_storage dest, src;
    char dev[IF_NAMESIZE + 1];
    int via;

    (void)state;
    if (!other_ipv4_device(dev, sizeof(dev), &dest)) {
        skip();
    }
    via = -1;
    assert_int_equal(psel_route_is_via_device(dev, sa(&dest), &via, &src),
                     UCS_OK);
    assert_int_equal(via, 1);
    assert_true(same_ip(&src, &dest));
    via = -1;
    assert_int_equal(psel_route_is_via_device("lo", sa(&dest), &via, NULL),
                     UCS_OK);
    assert_int_equal(via, 0);

    /* and lo's address is not reached from that device */
    make_in(&dest, "127.0.0.1");
    via = -1;
    assert_int_equal(psel_route_is_via_device(dev, sa(&dest), &via, NULL),
                     UCS_OK);
    assert_int_equal(via, 0);
}

static void test_unsupported_family_cannot_tell(void **state)
{
    struct sockaddr_storage dest;
    int via = -1;

    (void)state;
    memset(&dest, 0, sizeof(dest));
    dest.ss_family = AF_UNIX;
    assert_int_equal(psel_route_is_via_device("lo", sa(&dest), &via, NULL),
                     UCS_ERR_UNSUPPORTED);
    assert_int_equal(via, -1);
}

typedef struct {
    psel_context_h context;
    psel_worker_h  worker;
    psel_address_t address;
} route_worker_t;

/* A worker with tcp on every device, and its own address unpacked */
static void route_worker_open(route_worker_t *t)
{
    void *buf;
    size_t len;

    setenv("UCX_PSEL_TLS", "tcp", 1);
    unsetenv("UCX_PSEL_NET_DEVICES");
    assert_int_equal(psel_context_create(&t->context), UCS_OK);
    assert_int_equal(psel_worker_create(t->context, &t->worker), UCS_OK);
    assert_int_equal(psel_worker_get_address(t->worker, &buf, &len), UCS_OK);
    assert_int_equal(psel_address_unpack(buf, len, &t->address), UCS_OK);
    free(buf);
}

static void route_worker_close(route_worker_t *t)
{
    psel_address_release(&t->address);
    psel_worker_destroy(t->worker);
    psel_context_destroy(t->context);
}

/* The real tcp device addresses of UCT on this machine decode: lo's has the
 * loopback flag, every other one holds an address of its own device, and
 * the route to it is from that device */
static void test_live_tcp_dev_addrs_decode(void **state)
{
    route_worker_t t;
    struct sockaddr_storage dest;
    const psel_address_entry_t *e;
    unsigned i, num_tcp = 0, num_ip = 0;
    ucs_status_t status;
    int via;

    (void)state;
    route_worker_open(&t);
    for (i = 0; i < t.address.count; ++i) {
        e = &t.address.entries[i];
        if (strcmp(e->tl_name, "tcp")) {
            continue;
        }
        ++num_tcp;
        status = psel_route_tcp_dev_addr(e->dev_addr, e->dev_addr_len, &dest);
        if (!strcmp(e->dev_name, "lo")) {
            assert_int_equal(status, UCS_ERR_UNSUPPORTED);
            continue;
        }
        print_message("tcp/%s: device address of %u bytes\n", e->dev_name,
                      e->dev_addr_len);
        assert_int_equal(status, UCS_OK);
        via = -1;
        assert_int_equal(psel_route_is_via_device(e->dev_name, sa(&dest),
                                                  &via, NULL), UCS_OK);
        assert_int_equal(via, 1);
        ++num_ip;
    }
    assert_true(num_tcp > 0); /* at least tcp/lo */
    route_worker_close(&t);
    if (num_ip == 0) {
        skip(); /* only lo here: the IP layout was not seen */
    }
}

/* Index of our iface of transport @a tl on device @a dev */
static int local_iface(psel_worker_h worker, const char *tl, const char *dev)
{
    unsigned i;

    for (i = 0; i < worker->num_ifaces; ++i) {
        if (!strcmp(worker->local.resources[i].tl_name, tl) &&
            !strcmp(worker->local.resources[i].dev_name, dev)) {
            return i;
        }
    }
    return -1;
}

/* The endpoint's reachability callback on this host's own tcp entries:
 * lo <-> lo and D <-> D stay (the same-host pairs of today), lo <-> D does
 * not (UCT); a peer entry of device D whose address the kernel reaches
 * through lo (127.0.0.2, no loopback flag), which UCT before 1.20 calls
 * reachable from every non-loopback tcp iface, is pruned by the route */
static void test_ep_callback_prunes_pair_the_route_does_not_take(void **state)
{
    const uint8_t lo_route_addr[] = {0, AF_INET, 127, 0, 0, 2};
    psel_address_entry_t entries[3];
    struct psel_ep ep;
    route_worker_t t;
    int lo = -1, dev = -1;
    unsigned i, lo_entry = 0, dev_entry = 0;
    int found_lo = 0, found_dev = 0;

    (void)state;
    route_worker_open(&t);
    for (i = 0; i < t.address.count; ++i) {
        const psel_address_entry_t *e = &t.address.entries[i];

        if (strcmp(e->tl_name, "tcp")) {
            continue;
        }
        if (!strcmp(e->dev_name, "lo")) {
            lo_entry = i;
            found_lo = 1;
        } else if (!found_dev && (e->dev_addr_len == sizeof(lo_route_addr))) {
            dev_entry = i;
            found_dev = 1;
        }
    }
    if (!found_lo || !found_dev) {
        route_worker_close(&t);
        skip(); /* needs tcp on lo and on an IPv4 device */
    }
    entries[0] = t.address.entries[lo_entry];
    entries[1] = t.address.entries[dev_entry];
    entries[2] = t.address.entries[dev_entry];
    memcpy(entries[2].dev_addr, lo_route_addr, sizeof(lo_route_addr));
    lo  = local_iface(t.worker, "tcp", "lo");
    dev = local_iface(t.worker, "tcp", entries[1].dev_name);
    assert_true((lo >= 0) && (dev >= 0));

    memset(&ep, 0, sizeof(ep));
    ep.worker          = t.worker;
    ep.address.count   = 3;
    ep.address.entries = entries;
    assert_true(psel_ep_is_reachable(&ep, lo, 0));
    assert_true(psel_ep_is_reachable(&ep, dev, 1));
    assert_false(psel_ep_is_reachable(&ep, lo, 1));
    assert_false(psel_ep_is_reachable(&ep, dev, 0));
    /* the route goes out of lo: UCT before 1.20 alone calls it reachable from
     * dev (1.20 on asks the route too); protosel prunes it either way */
    assert_false(psel_ep_is_reachable(&ep, dev, 2));
    assert_false(psel_ep_is_reachable(&ep, lo, 2));
    route_worker_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dev_addr_decodes_ipv4_and_ipv6),
        cmocka_unit_test(test_dev_addr_rejects_loopback_and_bad_layouts),
        cmocka_unit_test(test_loopback_reached_from_lo_only),
        cmocka_unit_test(test_ipv6_loopback_reached_from_lo),
        cmocka_unit_test(test_own_address_reached_from_its_device_not_lo),
        cmocka_unit_test(test_unsupported_family_cannot_tell),
        cmocka_unit_test(test_live_tcp_dev_addrs_decode),
        cmocka_unit_test(test_ep_callback_prunes_pair_the_route_does_not_take),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
