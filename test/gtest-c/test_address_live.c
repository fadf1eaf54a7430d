/*
 * Integration test of the worker address over real UCT transports on this
 * machine (self, tcp on lo, posix, sysv, cma): the addresses UCT gives us are
 * packed, unpacked, and must still be reachable from the matching local iface;
 * dedup runs with a callback over uct_iface_is_reachable().
 */
#include "test_util.h"

#include <lane_select/address.h>

#include <ucs/async/async_fwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define LIVE_MAX_MDS    16
#define LIVE_MAX_IFACES 32

typedef struct live_iface {
    uct_iface_h          iface;
    psel_resource_t      rsc;
    psel_address_entry_t entry;
} live_iface_t;

typedef struct live_ctx {
    ucs_async_context_t *async;
    uct_worker_h         worker;
    uct_component_h     *components;
    unsigned             num_components;
    uct_md_h             mds[LIVE_MAX_MDS];
    unsigned             num_mds;
    live_iface_t         ifaces[LIVE_MAX_IFACES];
    unsigned             num_ifaces;
} live_ctx_t;

/* transports this test opens, and how many ifaces of each */
static int live_wanted(const char *tl, const char *dev, unsigned *copies)
{
    if (!strcmp(tl, "self") || !strcmp(tl, "posix")) {
        *copies = 2; /* two ifaces of one transport, for dedup */
        return 1;
    }
    *copies = 1;
    return !strcmp(tl, "sysv") || !strcmp(tl, "cma") ||
           (!strcmp(tl, "tcp") && !strcmp(dev, "lo"));
}

static ucs_status_t live_open_iface(live_ctx_t *ctx, uct_md_h md,
                                    const uct_md_attr_t *md_attr,
                                    const uct_tl_resource_desc_t *tl)
{
    live_iface_t      *li = &ctx->ifaces[ctx->num_ifaces];
    uct_iface_config_t *config;
    uct_iface_params_t params;
    uct_iface_attr_t   attr;
    uint8_t            *dev_addr, *iface_addr;
    ucs_status_t       status;

    status = uct_md_iface_config_read(md, tl->tl_name, NULL, NULL, &config);
    if (status != UCS_OK) {
        return status;
    }

    memset(&params, 0, sizeof(params));
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE |
                                  UCT_IFACE_PARAM_FIELD_STATS_ROOT |
                                  UCT_IFACE_PARAM_FIELD_RX_HEADROOM;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = tl->tl_name;
    params.mode.device.dev_name = tl->dev_name;
    params.stats_root           = NULL;
    params.rx_headroom          = 0;

    status = uct_iface_open(md, ctx->worker, &params, config, &li->iface);
    uct_config_release(config);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_iface_query(li->iface, &attr);
    if (status != UCS_OK) {
        goto err_close_iface;
    }

    memset(&li->rsc, 0, sizeof(li->rsc));
    snprintf(li->rsc.tl_name, PSEL_NAME_MAX, "%s", tl->tl_name);
    snprintf(li->rsc.dev_name, PSEL_NAME_MAX, "%s", tl->dev_name);
    li->rsc.dev_type      = tl->dev_type;
    li->rsc.latency       = attr.latency;
    li->rsc.bw_dedicated  = attr.bandwidth.dedicated;
    li->rsc.bw_shared     = attr.bandwidth.shared;
    li->rsc.overhead      = attr.overhead;
    li->rsc.priority      = attr.priority;
    li->rsc.cap_flags     = attr.cap.flags;
    li->rsc.atomic64_ops  = attr.cap.atomic64.op_flags;
    li->rsc.atomic64_fops = attr.cap.atomic64.fop_flags;
    li->rsc.reg_cost      = md_attr->reg_cost;
    li->rsc.rkey_size     = md_attr->rkey_packed_size;

    dev_addr   = calloc(1, attr.device_addr_len + 1);
    iface_addr = calloc(1, attr.iface_addr_len + 1);
    assert_non_null(dev_addr);
    assert_non_null(iface_addr);
    status = uct_iface_get_device_address(li->iface,
                                          (uct_device_addr_t*)dev_addr);
    assert_int_equal(status, UCS_OK);
    if (attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) {
        status = uct_iface_get_address(li->iface, (uct_iface_addr_t*)iface_addr);
        assert_int_equal(status, UCS_OK);
    }
    status = psel_address_entry_from_resource(&li->rsc, dev_addr,
                                              attr.device_addr_len, iface_addr,
                                              attr.iface_addr_len, &li->entry);
    free(iface_addr);
    free(dev_addr);
    assert_int_equal(status, UCS_OK);

    print_message("opened %s/%s: lat %.3g s, dev addr %zu B, iface addr %zu B"
                  "%s\n", tl->tl_name, tl->dev_name, attr.latency.c,
                  attr.device_addr_len, attr.iface_addr_len,
                  (attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) ?
                  "" : ", not connect-to-iface");
    ++ctx->num_ifaces;
    return UCS_OK;

err_close_iface:
    uct_iface_close(li->iface);
    return status;
}

static void live_open_md(live_ctx_t *ctx, uct_component_h comp,
                         const char *md_name)
{
    uct_tl_resource_desc_t *tls;
    uct_md_config_t        *md_config;
    uct_md_attr_t           md_attr;
    unsigned                num_tls, i, copies, c;
    uct_md_h                md;
    ucs_status_t            status;

    if (ctx->num_mds >= LIVE_MAX_MDS) {
        return;
    }
    status = uct_md_config_read(comp, NULL, NULL, &md_config);
    if (status != UCS_OK) {
        return;
    }
    status = uct_md_open(comp, md_name, md_config, &md);
    uct_config_release(md_config);
    if (status != UCS_OK) {
        return;
    }
    ctx->mds[ctx->num_mds++] = md;

    if ((uct_md_query(md, &md_attr) != UCS_OK) ||
        (uct_md_query_tl_resources(md, &tls, &num_tls) != UCS_OK)) {
        return;
    }
    for (i = 0; i < num_tls; ++i) {
        if (!live_wanted(tls[i].tl_name, tls[i].dev_name, &copies)) {
            continue;
        }
        for (c = 0; (c < copies) && (ctx->num_ifaces < LIVE_MAX_IFACES); ++c) {
            status = live_open_iface(ctx, md, &md_attr, &tls[i]);
            if (status != UCS_OK) {
                print_message("cannot open %s/%s: %s\n", tls[i].tl_name,
                              tls[i].dev_name, ucs_status_string(status));
                break;
            }
        }
    }
    uct_release_tl_resource_list(tls);
}

static int live_setup(void **state)
{
    live_ctx_t          *ctx = calloc(1, sizeof(*ctx));
    uct_component_attr_t cattr;
    uct_md_resource_desc_t *mds;
    unsigned             i, j;
    ucs_status_t         status;

    assert_non_null(ctx);
    status = ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                      &ctx->async);
    assert_int_equal(status, UCS_OK);
    status = uct_worker_create(ctx->async, UCS_THREAD_MODE_SINGLE,
                               &ctx->worker);
    assert_int_equal(status, UCS_OK);
    status = uct_query_components(&ctx->components, &ctx->num_components);
    assert_int_equal(status, UCS_OK);

    for (i = 0; i < ctx->num_components; ++i) {
        memset(&cattr, 0, sizeof(cattr));
        cattr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                           UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if (uct_component_query(ctx->components[i], &cattr) != UCS_OK) {
            continue;
        }
        mds = calloc(cattr.md_resource_count + 1, sizeof(*mds));
        assert_non_null(mds);
        cattr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        cattr.md_resources = mds;
        if (uct_component_query(ctx->components[i], &cattr) == UCS_OK) {
            for (j = 0; j < cattr.md_resource_count; ++j) {
                live_open_md(ctx, ctx->components[i], mds[j].md_name);
            }
        }
        free(mds);
    }

    *state = ctx;
    return 0;
}

static int live_teardown(void **state)
{
    live_ctx_t *ctx = *state;
    unsigned    i;

    for (i = 0; i < ctx->num_ifaces; ++i) {
        uct_iface_close(ctx->ifaces[i].iface);
    }
    for (i = 0; i < ctx->num_mds; ++i) {
        uct_md_close(ctx->mds[i]);
    }
    uct_release_component_list(ctx->components);
    uct_worker_destroy(ctx->worker);
    ucs_async_context_destroy(ctx->async);
    free(ctx);
    return 0;
}

static live_iface_t *live_find(live_ctx_t *ctx, const char *tl)
{
    unsigned i;

    for (i = 0; i < ctx->num_ifaces; ++i) {
        if (!strcmp(ctx->ifaces[i].entry.tl_name, tl)) {
            return &ctx->ifaces[i];
        }
    }
    return NULL;
}

/* The local iface an entry was made from: same transport, device and bytes */
static live_iface_t *live_iface_of(live_ctx_t *ctx,
                                   const psel_address_entry_t *e)
{
    const psel_address_entry_t *l;
    unsigned                    i;

    for (i = 0; i < ctx->num_ifaces; ++i) {
        l = &ctx->ifaces[i].entry;
        if (!strcmp(l->tl_name, e->tl_name) &&
            !strcmp(l->dev_name, e->dev_name) &&
            (l->iface_addr_len == e->iface_addr_len) &&
            !memcmp(l->iface_addr, e->iface_addr, e->iface_addr_len)) {
            return &ctx->ifaces[i];
        }
    }
    return NULL;
}

static int live_is_reachable(const psel_address_entry_t *kept,
                             const psel_address_entry_t *cand, void *arg)
{
    live_iface_t *li = live_iface_of(arg, kept);

    assert_non_null(li);
    return uct_iface_is_reachable(li->iface,
                                  (const uct_device_addr_t*)cand->dev_addr,
                                  (const uct_iface_addr_t*)cand->iface_addr);
}

static void test_live_opened_expected_transports(void **state)
{
    live_ctx_t *ctx = *state;

    /* self and tcp over lo exist on any Linux machine with UCX */
    assert_non_null(live_find(ctx, "self"));
    assert_non_null(live_find(ctx, "tcp"));
    print_message("%u ifaces open\n", ctx->num_ifaces);
}

static void test_live_pack_unpack_addresses_stay_reachable(void **state)
{
    live_ctx_t           *ctx = *state;
    psel_address_entry_t *entries;
    psel_address_t        addr;
    const psel_address_entry_t *e, *l;
    void                 *buf;
    size_t                len;
    unsigned              i, checked = 0;

    entries = calloc(ctx->num_ifaces, sizeof(*entries));
    assert_non_null(entries);
    for (i = 0; i < ctx->num_ifaces; ++i) {
        entries[i] = ctx->ifaces[i].entry;
    }

    assert_int_equal(psel_address_pack(entries, ctx->num_ifaces, &buf, &len),
                     UCS_OK);
    assert_int_equal(psel_address_unpack(buf, len, &addr), UCS_OK);
    assert_int_equal(addr.count, ctx->num_ifaces);
    print_message("%u entries packed into %zu bytes\n", addr.count, len);

    for (i = 0; i < addr.count; ++i) {
        e = &addr.entries[i];
        l = &ctx->ifaces[i].entry;
        assert_string_equal(e->tl_name, l->tl_name);
        assert_string_equal(e->dev_name, l->dev_name);
        assert_int_equal(e->caps, l->caps);
        assert_int_equal(e->dev_addr_len, l->dev_addr_len);
        assert_int_equal(e->iface_addr_len, l->iface_addr_len);
        assert_memory_equal(e->dev_addr, l->dev_addr, l->dev_addr_len);
        assert_memory_equal(e->iface_addr, l->iface_addr, l->iface_addr_len);
        assert_true(e->latency == (double)(float)l->latency);

        if (!(e->caps & PSEL_ADDRESS_CAP_CONNECT_TO_IFACE)) {
            continue; /* cma: no iface address to reach */
        }
        if (!uct_iface_is_reachable(ctx->ifaces[i].iface,
                                    (const uct_device_addr_t*)e->dev_addr,
                                    (const uct_iface_addr_t*)e->iface_addr)) {
            fail_msg("%s/%s: unpacked address not reachable from its own "
                     "iface", e->tl_name, e->dev_name);
        }
        ++checked;
    }
    assert_true(checked >= 2);

    psel_address_release(&addr);
    free(buf);
    free(entries);
}

static void test_live_bootable_one_per_device(void **state)
{
    live_ctx_t           *ctx = *state;
    psel_resource_table_t t   = {0};
    psel_resource_t      *r;
    unsigned             *idx, n = ctx->num_ifaces, i, j;

    r   = calloc(ctx->num_ifaces, sizeof(*r));
    idx = calloc(ctx->num_ifaces, sizeof(*idx));
    for (i = 0; i < ctx->num_ifaces; ++i) {
        r[i] = ctx->ifaces[i].rsc;
    }
    t.count     = ctx->num_ifaces;
    t.resources = r;

    assert_int_equal(psel_address_select_bootable(&t, idx, &n), UCS_OK);
    assert_true(n >= 2);
    for (i = 0; i < n; ++i) {
        print_message("bootable: %s/%s\n", r[idx[i]].tl_name,
                      r[idx[i]].dev_name);
        assert_true(r[idx[i]].cap_flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE);
        assert_true(r[idx[i]].cap_flags & UCT_IFACE_FLAG_AM_SHORT);
        assert_string_not_equal(r[idx[i]].tl_name, "cma");
        for (j = 0; j < i; ++j) {
            assert_string_not_equal(r[idx[i]].dev_name, r[idx[j]].dev_name);
        }
        /* nothing bootable on the same device has lower latency */
        for (j = 0; j < t.count; ++j) {
            if (!strcmp(r[j].dev_name, r[idx[i]].dev_name) &&
                (r[j].cap_flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) &&
                (r[j].cap_flags & UCT_IFACE_FLAG_AM_SHORT)) {
                assert_true(r[j].latency.c >= r[idx[i]].latency.c);
            }
        }
    }
    free(idx);
    free(r);
}

static void test_live_dedup_with_uct_is_reachable(void **state)
{
    live_ctx_t          *ctx = *state;
    psel_address_entry_t e[LIVE_MAX_IFACES];
    unsigned             i, n = 0, n_posix = 0, n_self = 0, kept_posix = 0;
    unsigned             kept_self = 0;

    /* every iface that connects to iface, in open order: both posix copies
     * share the host's shared-memory namespace, so the second is dropped;
     * self ifaces reach only themselves, so both stay */
    for (i = 0; i < ctx->num_ifaces; ++i) {
        if (ctx->ifaces[i].entry.caps & PSEL_ADDRESS_CAP_CONNECT_TO_IFACE) {
            e[n++]   = ctx->ifaces[i].entry;
            n_posix += !strcmp(e[n - 1].tl_name, "posix");
            n_self  += !strcmp(e[n - 1].tl_name, "self");
        }
    }

    assert_int_equal(psel_address_dedup(e, &n, live_is_reachable, ctx),
                     UCS_OK);
    for (i = 0; i < n; ++i) {
        print_message("kept: %s/%s\n", e[i].tl_name, e[i].dev_name);
        kept_posix += !strcmp(e[i].tl_name, "posix");
        kept_self  += !strcmp(e[i].tl_name, "self");
    }
    assert_int_equal(kept_self, n_self);
    if (n_posix > 0) {
        assert_int_equal(kept_posix, 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_opened_expected_transports),
        cmocka_unit_test(test_live_pack_unpack_addresses_stay_reachable),
        cmocka_unit_test(test_live_bootable_one_per_device),
        cmocka_unit_test(test_live_dedup_with_uct_is_reachable),
    };

    return cmocka_run_group_tests(tests, live_setup, live_teardown);
}
