/**
 * @file address.c
 * Worker address: choice of bootable resources, deduplication, and the
 * versioned wire format (see address.h for the layout).
 */
#include "address.h"
#include "resource_table.h"

#include <ucs/sys/string.h>
#include <ucs/debug/log_def.h>
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* Byte offsets of the fixed part of an entry (see address.h) */
enum {
    PSEL_ADDR_OFF_TL_LEN     = 0,
    PSEL_ADDR_OFF_DEV_LEN    = 1,
    PSEL_ADDR_OFF_DADDR_LEN  = 2,
    PSEL_ADDR_OFF_IADDR_LEN  = 3,
    PSEL_ADDR_OFF_DEV_TYPE   = 4,
    PSEL_ADDR_OFF_PRIORITY   = 5,
    PSEL_ADDR_OFF_CAPS       = 6,
    PSEL_ADDR_OFF_RKEY_SIZE  = 8,
    PSEL_ADDR_OFF_PERF       = 10,
    PSEL_ADDR_NUM_PERF       = 6
};

static const char *psel_address_perf_names[PSEL_ADDR_NUM_PERF] = {
    "latency", "bw_dedicated", "bw_shared", "overhead", "reg_cost_c",
    "reg_cost_m"
};


static double *psel_address_perf_field(psel_address_entry_t *e, unsigned i)
{
    double *fields[PSEL_ADDR_NUM_PERF] = {
        &e->latency, &e->bw_dedicated, &e->bw_shared, &e->overhead,
        &e->reg_cost_c, &e->reg_cost_m
    };

    return fields[i];
}

static double psel_address_perf_get(const psel_address_entry_t *e, unsigned i)
{
    const double values[PSEL_ADDR_NUM_PERF] = {
        e->latency, e->bw_dedicated, e->bw_shared, e->overhead,
        e->reg_cost_c, e->reg_cost_m
    };

    return values[i];
}

static int psel_address_name_char_ok(unsigned char c)
{
    return (c > 0x20) && (c < 0x7f);
}

static void psel_address_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = v & 0xff;
    p[1] = v >> 8;
}

static uint16_t psel_address_get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static void psel_address_put_f32(uint8_t *p, double v)
{
    float    f = (float)v;
    uint32_t u;

    memcpy(&u, &f, sizeof(u));
    p[0] = u & 0xff;
    p[1] = (u >> 8) & 0xff;
    p[2] = (u >> 16) & 0xff;
    p[3] = u >> 24;
}

static float psel_address_get_f32(const uint8_t *p)
{
    uint32_t u = (uint32_t)p[0] | ((uint32_t)p[1] << 8) |
                 ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
    float    f;

    memcpy(&f, &u, sizeof(f));
    return f;
}

static const struct {
    uint64_t uct;
    uint16_t cap;
} psel_address_caps_map[] = {
    {UCT_IFACE_FLAG_CONNECT_TO_IFACE, PSEL_ADDRESS_CAP_CONNECT_TO_IFACE},
    {UCT_IFACE_FLAG_CONNECT_TO_EP,    PSEL_ADDRESS_CAP_CONNECT_TO_EP},
    {UCT_IFACE_FLAG_AM_SHORT,         PSEL_ADDRESS_CAP_AM_SHORT},
    {UCT_IFACE_FLAG_AM_BCOPY,         PSEL_ADDRESS_CAP_AM_BCOPY},
    {UCT_IFACE_FLAG_AM_ZCOPY,         PSEL_ADDRESS_CAP_AM_ZCOPY},
    {UCT_IFACE_FLAG_PUT_SHORT,        PSEL_ADDRESS_CAP_PUT_SHORT},
    {UCT_IFACE_FLAG_PUT_BCOPY,        PSEL_ADDRESS_CAP_PUT_BCOPY},
    {UCT_IFACE_FLAG_PUT_ZCOPY,        PSEL_ADDRESS_CAP_PUT_ZCOPY},
    {UCT_IFACE_FLAG_GET_BCOPY,        PSEL_ADDRESS_CAP_GET_BCOPY},
    {UCT_IFACE_FLAG_GET_ZCOPY,        PSEL_ADDRESS_CAP_GET_ZCOPY},
    {UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE,
                                      PSEL_ADDRESS_CAP_ERRH_PEER_FAILURE}
};

uint16_t psel_address_caps_from_uct(uint64_t uct_flags, int atomic32,
                                    int atomic64)
{
    uint16_t caps = 0;
    unsigned i;

    for (i = 0; i < ucs_static_array_size(psel_address_caps_map); ++i) {
        if (uct_flags & psel_address_caps_map[i].uct) {
            caps |= psel_address_caps_map[i].cap;
        }
    }
    if (atomic32) {
        caps |= PSEL_ADDRESS_CAP_ATOMIC32;
    }
    if (atomic64) {
        caps |= PSEL_ADDRESS_CAP_ATOMIC64;
    }
    return caps;
}

static uint64_t psel_address_caps_to_uct(uint16_t caps)
{
    uint64_t flags = 0;
    unsigned i;

    for (i = 0; i < ucs_static_array_size(psel_address_caps_map); ++i) {
        if (caps & psel_address_caps_map[i].cap) {
            flags |= psel_address_caps_map[i].uct;
        }
    }
    return flags;
}

static int psel_address_dev_type_from_uct(uct_device_type_t type,
                                          psel_address_dev_type_t *out)
{
    switch (type) {
    case UCT_DEVICE_TYPE_NET:  *out = PSEL_ADDRESS_DEV_NET;  return 1;
    case UCT_DEVICE_TYPE_SHM:  *out = PSEL_ADDRESS_DEV_SHM;  return 1;
    case UCT_DEVICE_TYPE_ACC:  *out = PSEL_ADDRESS_DEV_ACC;  return 1;
    case UCT_DEVICE_TYPE_SELF: *out = PSEL_ADDRESS_DEV_SELF; return 1;
    default:                   return 0;
    }
}


/* ---- bootable selection ------------------------------------------------- */

static int psel_address_is_bootable(const psel_resource_t *rsc)
{
    uint64_t need = UCT_IFACE_FLAG_CONNECT_TO_IFACE | UCT_IFACE_FLAG_AM_SHORT;

    return (rsc->cap_flags & need) == need;
}

/*
 * <0 if a is better than b: lower latency, higher priority, then names and
 * index for a deterministic order. Picks the best transport of a device (the
 * devices are equal there) and orders the output best first, so that dedup
 * keeps the best of each network.
 */
static int psel_address_cmp(const psel_resource_table_t *t, unsigned a,
                            unsigned b)
{
    const psel_resource_t *ra = &t->resources[a];
    const psel_resource_t *rb = &t->resources[b];
    int                    cmp;

    if (ra->latency.c != rb->latency.c) {
        return (ra->latency.c < rb->latency.c) ? -1 : 1;
    }
    if (ra->priority != rb->priority) {
        return (ra->priority > rb->priority) ? -1 : 1;
    }
    cmp = strcmp(ra->tl_name, rb->tl_name);
    if (cmp == 0) {
        cmp = strcmp(ra->dev_name, rb->dev_name);
    }
    if (cmp == 0) {
        cmp = strcmp(ra->md_name, rb->md_name);
    }
    return (cmp != 0) ? cmp : ((a < b) ? -1 : (a > b));
}

ucs_status_t psel_address_select_bootable(const psel_resource_table_t *t,
                                          unsigned *idx_out, unsigned *count)
{
    unsigned *chosen;
    unsigned  num_chosen = 0;
    unsigned  i, j, tmp;

    if ((t == NULL) || (count == NULL) ||
        ((t->count > 0) && (t->resources == NULL))) {
        return UCS_ERR_INVALID_PARAM;
    }

    chosen = malloc((t->count ? t->count : 1) * sizeof(*chosen));
    if (chosen == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    for (i = 0; i < t->count; ++i) {
        if (!psel_address_is_bootable(&t->resources[i])) {
            continue;
        }

        for (j = 0; j < num_chosen; ++j) {
            if (!strcmp(t->resources[chosen[j]].dev_name,
                        t->resources[i].dev_name)) {
                break;
            }
        }

        if (j == num_chosen) {
            chosen[num_chosen++] = i;
        } else if (psel_address_cmp(t, i, chosen[j]) < 0) {
            chosen[j] = i;
        }
    }

    /* insertion sort: n is small, and the comparator needs the table */
    for (i = 1; i < num_chosen; ++i) {
        for (j = i; (j > 0) &&
                    (psel_address_cmp(t, chosen[j], chosen[j - 1]) < 0);
             --j) {
            tmp           = chosen[j];
            chosen[j]     = chosen[j - 1];
            chosen[j - 1] = tmp;
        }
    }

    if (num_chosen > *count) {
        free(chosen);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    if ((num_chosen > 0) && (idx_out == NULL)) {
        free(chosen);
        return UCS_ERR_INVALID_PARAM;
    }

    if (num_chosen > 0) {
        memcpy(idx_out, chosen, num_chosen * sizeof(*chosen));
    }
    *count = num_chosen;
    free(chosen);
    return UCS_OK;
}


/* ---- entries ------------------------------------------------------------ */

/* Check that a name fits the wire: 1..PSEL_NAME_MAX-1 printable chars */
static int psel_address_name_ok(const char *name, size_t *len_p)
{
    size_t len = strnlen(name, PSEL_NAME_MAX);
    size_t i;

    if ((len == 0) || (len >= PSEL_NAME_MAX)) {
        return 0;
    }
    for (i = 0; i < len; ++i) {
        if (!psel_address_name_char_ok((unsigned char)name[i])) {
            return 0;
        }
    }
    *len_p = len;
    return 1;
}

static int psel_address_perf_ok(double v)
{
    return isfinite(v) && !signbit(v) && (v <= FLT_MAX);
}

/* Validate an entry to be packed; logs what is wrong */
static ucs_status_t psel_address_entry_check(const psel_address_entry_t *e,
                                             unsigned index)
{
    size_t   len;
    unsigned i;

    if (!psel_address_name_ok(e->tl_name, &len)) {
        ucs_error("worker address: entry %u: transport name is empty, too "
                  "long or not printable", index);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!psel_address_name_ok(e->dev_name, &len)) {
        ucs_error("worker address: entry %u: device name is empty, too long "
                  "or not printable", index);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((unsigned)e->dev_type >= PSEL_ADDRESS_DEV_LAST) {
        ucs_error("worker address: entry %u: invalid device type %d", index,
                  (int)e->dev_type);
        return UCS_ERR_INVALID_PARAM;
    }
    if (e->caps & ~PSEL_ADDRESS_CAP_ALL) {
        ucs_error("worker address: entry %u: unknown capability bits 0x%x",
                  index, (unsigned)(e->caps & ~PSEL_ADDRESS_CAP_ALL));
        return UCS_ERR_INVALID_PARAM;
    }
    for (i = 0; i < PSEL_ADDR_NUM_PERF; ++i) {
        if (!psel_address_perf_ok(psel_address_perf_get(e, i))) {
            ucs_error("worker address: entry %u: %s %g is not a finite "
                      "non-negative float", index, psel_address_perf_names[i],
                      psel_address_perf_get(e, i));
            return UCS_ERR_INVALID_PARAM;
        }
    }
    return UCS_OK;
}

ucs_status_t psel_address_entry_from_resource(const psel_resource_t *rsc,
                                              const void *dev_addr,
                                              size_t dev_len,
                                              const void *iface_addr,
                                              size_t iface_len,
                                              psel_address_entry_t *entry)
{
    psel_address_entry_t e;
    ucs_status_t         status;
    size_t               len;

    if ((rsc == NULL) || (entry == NULL) ||
        ((dev_len > 0) && (dev_addr == NULL)) ||
        ((iface_len > 0) && (iface_addr == NULL))) {
        return UCS_ERR_INVALID_PARAM;
    }

    if ((dev_len > PSEL_ADDRESS_ADDR_MAX) ||
        (iface_len > PSEL_ADDRESS_ADDR_MAX)) {
        ucs_error("worker address: %s/%s: address of %zu+%zu bytes is above "
                  "the maximum of %u", rsc->tl_name, rsc->dev_name, dev_len,
                  iface_len, PSEL_ADDRESS_ADDR_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((rsc->priority > UINT8_MAX) || (rsc->rkey_size > UINT16_MAX)) {
        ucs_error("worker address: %s/%s: priority %u or rkey size %zu out "
                  "of range", rsc->tl_name, rsc->dev_name, rsc->priority,
                  rsc->rkey_size);
        return UCS_ERR_INVALID_PARAM;
    }

    memset(&e, 0, sizeof(e));
    if (!psel_address_dev_type_from_uct(rsc->dev_type, &e.dev_type)) {
        ucs_error("worker address: %s/%s: unknown device type %d",
                  rsc->tl_name, rsc->dev_name, (int)rsc->dev_type);
        return UCS_ERR_INVALID_PARAM;
    }

    /* names are checked by psel_address_entry_check() below */
    len = strnlen(rsc->tl_name, PSEL_NAME_MAX - 1);
    memcpy(e.tl_name, rsc->tl_name, len);
    len = strnlen(rsc->dev_name, PSEL_NAME_MAX - 1);
    memcpy(e.dev_name, rsc->dev_name, len);

    e.priority       = rsc->priority;
    e.caps           = psel_address_caps_from_uct(rsc->cap_flags,
                                                  (rsc->atomic32_ops |
                                                   rsc->atomic32_fops) != 0,
                                                  (rsc->atomic64_ops |
                                                   rsc->atomic64_fops) != 0);
    e.rkey_size      = rsc->rkey_size;
    e.latency        = rsc->latency.c;
    e.bw_dedicated   = rsc->bw_dedicated;
    e.bw_shared      = rsc->bw_shared;
    e.overhead       = rsc->overhead;
    e.reg_cost_c     = rsc->reg_cost.c;
    e.reg_cost_m     = rsc->reg_cost.m;
    e.dev_addr_len   = dev_len;
    e.iface_addr_len = iface_len;
    if (dev_len > 0) {
        memcpy(e.dev_addr, dev_addr, dev_len);
    }
    if (iface_len > 0) {
        memcpy(e.iface_addr, iface_addr, iface_len);
    }

    status = psel_address_entry_check(&e, 0);
    if (status != UCS_OK) {
        return status;
    }

    *entry = e;
    return UCS_OK;
}

ucs_status_t psel_address_dedup(psel_address_entry_t *entries, unsigned *n,
                                psel_address_is_reachable_cb_t cb, void *arg)
{
    unsigned kept = 0;
    unsigned i, j;

    if ((n == NULL) || (cb == NULL) || ((*n > 0) && (entries == NULL))) {
        return UCS_ERR_INVALID_PARAM;
    }

    for (i = 0; i < *n; ++i) {
        for (j = 0; j < kept; ++j) {
            if (!strcmp(entries[j].tl_name, entries[i].tl_name) &&
                cb(&entries[j], &entries[i], arg)) {
                ucs_debug("worker address: %s/%s is reachable through %s/%s, "
                          "dropped", entries[i].tl_name, entries[i].dev_name,
                          entries[j].tl_name, entries[j].dev_name);
                break;
            }
        }
        if (j < kept) {
            continue;
        }
        if (kept != i) {
            entries[kept] = entries[i];
        }
        ++kept;
    }

    *n = kept;
    return UCS_OK;
}


/* ---- pack --------------------------------------------------------------- */

ucs_status_t psel_address_pack(const psel_address_entry_t *entries,
                               unsigned n, void **buf, size_t *len)
{
    const psel_address_entry_t *e;
    size_t                      total, tl_len, dev_len;
    uint8_t                     *p, *data;
    ucs_status_t                status;
    unsigned                    i, k;

    if ((buf == NULL) || (len == NULL) || ((n > 0) && (entries == NULL))) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (n > PSEL_ADDRESS_MAX_ENTRIES) {
        ucs_error("worker address: %u entries, the maximum is %u", n,
                  PSEL_ADDRESS_MAX_ENTRIES);
        return UCS_ERR_INVALID_PARAM;
    }

    total = PSEL_ADDRESS_HDR_SIZE;
    for (i = 0; i < n; ++i) {
        e      = &entries[i];
        status = psel_address_entry_check(e, i);
        if (status != UCS_OK) {
            return status;
        }
        total += PSEL_ADDRESS_ENTRY_FIXED + strlen(e->tl_name) +
                 strlen(e->dev_name) + e->dev_addr_len + e->iface_addr_len;
    }

    data = malloc(total);
    if (data == NULL) {
        ucs_error("worker address: failed to allocate %zu bytes", total);
        return UCS_ERR_NO_MEMORY;
    }

    p    = data;
    *p++ = PSEL_ADDRESS_MAGIC;
    *p++ = PSEL_ADDRESS_VERSION;
    *p++ = n;
    for (i = 0; i < n; ++i) {
        e       = &entries[i];
        tl_len  = strlen(e->tl_name);
        dev_len = strlen(e->dev_name);

        p[PSEL_ADDR_OFF_TL_LEN]    = tl_len;
        p[PSEL_ADDR_OFF_DEV_LEN]   = dev_len;
        p[PSEL_ADDR_OFF_DADDR_LEN] = e->dev_addr_len;
        p[PSEL_ADDR_OFF_IADDR_LEN] = e->iface_addr_len;
        p[PSEL_ADDR_OFF_DEV_TYPE]  = e->dev_type;
        p[PSEL_ADDR_OFF_PRIORITY]  = e->priority;
        psel_address_put_u16(p + PSEL_ADDR_OFF_CAPS, e->caps);
        psel_address_put_u16(p + PSEL_ADDR_OFF_RKEY_SIZE, e->rkey_size);
        for (k = 0; k < PSEL_ADDR_NUM_PERF; ++k) {
            psel_address_put_f32(p + PSEL_ADDR_OFF_PERF + 4 * k,
                                 psel_address_perf_get(e, k));
        }
        p += PSEL_ADDRESS_ENTRY_FIXED;

        memcpy(p, e->tl_name, tl_len);
        p += tl_len;
        memcpy(p, e->dev_name, dev_len);
        p += dev_len;
        memcpy(p, e->dev_addr, e->dev_addr_len);
        p += e->dev_addr_len;
        memcpy(p, e->iface_addr, e->iface_addr_len);
        p += e->iface_addr_len;
    }

    assert(p == data + total);
    *buf = data;
    *len = total;
    return UCS_OK;
}


/* ---- unpack ------------------------------------------------------------- */

/* Copy and validate a name of @a len bytes at @a off */
static ucs_status_t psel_address_unpack_name(const uint8_t *data, size_t off,
                                             size_t len, unsigned index,
                                             const char *what, char *name)
{
    size_t i;

    for (i = 0; i < len; ++i) {
        if (!psel_address_name_char_ok(data[off + i])) {
            ucs_error("worker address: entry %u: %s has non-printable byte "
                      "0x%02x at offset %zu", index, what, data[off + i],
                      off + i);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    memcpy(name, data + off, len);
    name[len] = '\0';
    return UCS_OK;
}

static ucs_status_t psel_address_unpack_entry(const uint8_t *data, size_t len,
                                              size_t *off_p, unsigned index,
                                              psel_address_entry_t *e)
{
    size_t       off = *off_p;
    const uint8_t *p = data + off;
    size_t       tl_len, dev_len, var_len;
    ucs_status_t status;
    float        f;
    unsigned     k;

    if (len - off < PSEL_ADDRESS_ENTRY_FIXED) {
        ucs_error("worker address: entry %u: truncated header at offset %zu "
                  "(need %u bytes, %zu left)", index, off,
                  PSEL_ADDRESS_ENTRY_FIXED, len - off);
        return UCS_ERR_INVALID_PARAM;
    }

    tl_len  = p[PSEL_ADDR_OFF_TL_LEN];
    dev_len = p[PSEL_ADDR_OFF_DEV_LEN];
    if ((tl_len == 0) || (tl_len >= PSEL_NAME_MAX)) {
        ucs_error("worker address: entry %u: transport name length %zu not "
                  "in 1..%u at offset %zu", index, tl_len, PSEL_NAME_MAX - 1,
                  off + PSEL_ADDR_OFF_TL_LEN);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((dev_len == 0) || (dev_len >= PSEL_NAME_MAX)) {
        ucs_error("worker address: entry %u: device name length %zu not in "
                  "1..%u at offset %zu", index, dev_len, PSEL_NAME_MAX - 1,
                  off + PSEL_ADDR_OFF_DEV_LEN);
        return UCS_ERR_INVALID_PARAM;
    }
    e->dev_addr_len   = p[PSEL_ADDR_OFF_DADDR_LEN];
    e->iface_addr_len = p[PSEL_ADDR_OFF_IADDR_LEN];

    if (p[PSEL_ADDR_OFF_DEV_TYPE] >= PSEL_ADDRESS_DEV_LAST) {
        ucs_error("worker address: entry %u: unknown device type %u at "
                  "offset %zu", index, p[PSEL_ADDR_OFF_DEV_TYPE],
                  off + PSEL_ADDR_OFF_DEV_TYPE);
        return UCS_ERR_INVALID_PARAM;
    }
    e->dev_type = (psel_address_dev_type_t)p[PSEL_ADDR_OFF_DEV_TYPE];
    e->priority = p[PSEL_ADDR_OFF_PRIORITY];

    e->caps = psel_address_get_u16(p + PSEL_ADDR_OFF_CAPS);
    if (e->caps & ~PSEL_ADDRESS_CAP_ALL) {
        ucs_error("worker address: entry %u: unknown capability bits 0x%x at "
                  "offset %zu", index, (unsigned)(e->caps & ~PSEL_ADDRESS_CAP_ALL),
                  off + PSEL_ADDR_OFF_CAPS);
        return UCS_ERR_INVALID_PARAM;
    }
    e->rkey_size = psel_address_get_u16(p + PSEL_ADDR_OFF_RKEY_SIZE);

    for (k = 0; k < PSEL_ADDR_NUM_PERF; ++k) {
        f = psel_address_get_f32(p + PSEL_ADDR_OFF_PERF + 4 * k);
        if (!isfinite(f) || signbit(f)) {
            ucs_error("worker address: entry %u: %s %g is not a finite "
                      "non-negative number at offset %zu", index,
                      psel_address_perf_names[k], (double)f,
                      off + PSEL_ADDR_OFF_PERF + 4 * k);
            return UCS_ERR_INVALID_PARAM;
        }
        *psel_address_perf_field(e, k) = f;
    }

    off    += PSEL_ADDRESS_ENTRY_FIXED;
    var_len = tl_len + dev_len + e->dev_addr_len + e->iface_addr_len;
    if (var_len > len - off) {
        ucs_error("worker address: entry %u: names and addresses need %zu "
                  "bytes but %zu are left at offset %zu", index, var_len,
                  len - off, off);
        return UCS_ERR_INVALID_PARAM;
    }

    status = psel_address_unpack_name(data, off, tl_len, index,
                                      "transport name", e->tl_name);
    if (status != UCS_OK) {
        return status;
    }
    off += tl_len;

    status = psel_address_unpack_name(data, off, dev_len, index,
                                      "device name", e->dev_name);
    if (status != UCS_OK) {
        return status;
    }
    off += dev_len;

    memcpy(e->dev_addr, data + off, e->dev_addr_len);
    off += e->dev_addr_len;
    memcpy(e->iface_addr, data + off, e->iface_addr_len);
    off += e->iface_addr_len;

    *off_p = off;
    return UCS_OK;
}

ucs_status_t psel_address_unpack(const void *buf, size_t len,
                                 psel_address_t *out)
{
    const uint8_t        *data = buf;
    psel_address_entry_t *entries;
    ucs_status_t          status;
    unsigned              count, i;
    size_t                off;

    if ((out == NULL) || ((buf == NULL) && (len > 0))) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (len < PSEL_ADDRESS_HDR_SIZE) {
        ucs_error("worker address: truncated header at offset %zu (need %u "
                  "bytes, have %zu)", len, PSEL_ADDRESS_HDR_SIZE, len);
        return UCS_ERR_INVALID_PARAM;
    }
    if (data[0] != PSEL_ADDRESS_MAGIC) {
        ucs_error("worker address: bad magic 0x%02x at offset %zu (expected "
                  "0x%02x)", data[0], (size_t)0, PSEL_ADDRESS_MAGIC);
        return UCS_ERR_INVALID_PARAM;
    }
    if (data[1] != PSEL_ADDRESS_VERSION) {
        ucs_error("worker address: unsupported version %u at offset %zu "
                  "(this build reads version %u): the peer runs another "
                  "protosel; run the same build on both sides", data[1],
                  (size_t)1, PSEL_ADDRESS_VERSION);
        return UCS_ERR_INVALID_PARAM;
    }

    count = data[2];
    if (count > PSEL_ADDRESS_MAX_ENTRIES) {
        ucs_error("worker address: entry count %u above the maximum %u at "
                  "offset %zu", count, PSEL_ADDRESS_MAX_ENTRIES, (size_t)2);
        return UCS_ERR_INVALID_PARAM;
    }
    /* every entry has a fixed part; reject before allocating anything */
    if ((size_t)count * PSEL_ADDRESS_ENTRY_FIXED > len - PSEL_ADDRESS_HDR_SIZE) {
        ucs_error("worker address: entry count %u needs at least %zu bytes "
                  "but %zu follow the header at offset %zu", count,
                  (size_t)count * PSEL_ADDRESS_ENTRY_FIXED,
                  len - PSEL_ADDRESS_HDR_SIZE, (size_t)2);
        return UCS_ERR_INVALID_PARAM;
    }

    entries = NULL;
    if (count > 0) {
        entries = calloc(count, sizeof(*entries));
        if (entries == NULL) {
            ucs_error("worker address: failed to allocate %u entries", count);
            return UCS_ERR_NO_MEMORY;
        }
    }

    off = PSEL_ADDRESS_HDR_SIZE;
    for (i = 0; i < count; ++i) {
        status = psel_address_unpack_entry(data, len, &off, i, &entries[i]);
        if (status != UCS_OK) {
            goto err_free_entries;
        }
    }

    if (off != len) {
        ucs_error("worker address: %zu trailing bytes at offset %zu after %u "
                  "entries", len - off, off, count);
        status = UCS_ERR_INVALID_PARAM;
        goto err_free_entries;
    }

    out->count   = count;
    out->entries = entries;
    return UCS_OK;

err_free_entries:
    free(entries);
    return status;
}

void psel_address_release(psel_address_t *addr)
{
    if (addr == NULL) {
        return;
    }
    free(addr->entries);
    addr->entries = NULL;
    addr->count   = 0;
}

static const uct_device_type_t psel_address_dev_types[] = {
    [PSEL_ADDRESS_DEV_NET]  = UCT_DEVICE_TYPE_NET,
    [PSEL_ADDRESS_DEV_SHM]  = UCT_DEVICE_TYPE_SHM,
    [PSEL_ADDRESS_DEV_ACC]  = UCT_DEVICE_TYPE_ACC,
    [PSEL_ADDRESS_DEV_SELF] = UCT_DEVICE_TYPE_SELF
};

void psel_address_entry_to_resource(const psel_address_entry_t *entry,
                                    psel_resource_t *rsc)
{
    memset(rsc, 0, sizeof(*rsc));
    ucs_strncpy_zero(rsc->tl_name, entry->tl_name, sizeof(rsc->tl_name));
    ucs_strncpy_zero(rsc->dev_name, entry->dev_name, sizeof(rsc->dev_name));
    rsc->dev_type      = psel_address_dev_types[entry->dev_type];
    rsc->latency       = ucs_linear_func_make(entry->latency, 0);
    rsc->bw_dedicated  = entry->bw_dedicated;
    rsc->bw_shared     = entry->bw_shared;
    rsc->overhead      = entry->overhead;
    rsc->priority      = entry->priority;
    rsc->dev_num_paths = 1;
    rsc->max_num_eps   = PSEL_SIZE_UNLIMITED;
    rsc->cap_flags     = psel_address_caps_to_uct(entry->caps);
    if (entry->caps & PSEL_ADDRESS_CAP_ATOMIC64) {
        rsc->atomic64_ops = UCS_BIT(UCT_ATOMIC_OP_ADD);
    }
    rsc->reg_cost      = ucs_linear_func_make(entry->reg_cost_c,
                                              entry->reg_cost_m);
    rsc->rkey_size     = entry->rkey_size;
    /* a peer that offers zero-copy RMA registers its memory */
    if (entry->caps & (PSEL_ADDRESS_CAP_PUT_ZCOPY | PSEL_ADDRESS_CAP_GET_ZCOPY)) {
        rsc->md_flags = UCT_MD_FLAG_REG;
    }
    rsc->device_addr_len = entry->dev_addr_len;
    rsc->iface_addr_len  = entry->iface_addr_len;
    psel_resource_dev_addr_set(rsc, entry->dev_addr, entry->dev_addr_len);
}
