/*
 * The protocol tier: protosel's cost lines inside UCP's protocols v2.
 *
 * UCP selects a protocol for every (endpoint configuration, selection
 * parameter) by asking each protocol for its performance and intersecting
 * the answers. The tier makes UCP ask through an adapter of the era of
 * UCP's protocol API (proto_tier_int.h): UCP's own protocol runs as
 * always (it sets the private configuration: lanes, fragment sizes,
 * remote keys), then its lines are replaced by protosel's for the same
 * operation and buffer type over UCP's own lanes, as the era mapping
 * (ucp_map.h) says. UCP's engine then intersects protosel's lines, so its
 * thresholds are protosel's and UCX_PROTO_INFO prints them.
 *
 * This file is the part every era shares: protosel's view of UCP's
 * endpoint configurations and the lines a UCP protocol gets. Built against
 * the internal headers of the installed UCX (configure --with-ucx-src),
 * with that tree's config.h; used only when the loaded libucp is that very
 * build.
 */
/* UCX's config.h of that tree comes first, by -include (Makefile.inc);
 * it defines _GNU_SOURCE (RTLD_DEFAULT) */

#include "proto_tier.h"
#include "proto_tier_int.h"
#include "ucx_settings.h"
#include "ucp_build_id.h"  /* generated: the libucp this build is for */

#include <lane_select/lane_engine.h>
#include <lane_select/resource_table.h>
#include <ucp_proto_sel/dump.h>
#include <ucp_proto_sel/select.h>

#include <ucp/core/ucp_context.h>
#include <ucp/core/ucp_worker.inl>
#include <uct/api/version.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>
#include <ucs/sys/string.h>
#if __has_include(<ucs/sys/ptr_arith.h>)
#include <ucs/sys/ptr_arith.h>  /* ucs_align_up, out of math.h after 1.13 */
#endif

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A protocol protosel rules out for a size keeps its UCP line plus this: UCP
 * takes it only where nothing else covers the size, so an endpoint never
 * loses a size protosel did not foresee */
#define PSEL_PT_PENALTY        1.0   /* [s] */

#define PSEL_PT_CACHE_SIZE     32    /* endpoint configurations remembered */
#define PSEL_PT_RSC_CACHE_SIZE 16    /* resources remembered */

/* Added to a protocol's lines where protosel's table selects another (with
 * half a byte of the steeper line, psel_rt_lines_own): UCP rounds crossings
 * to the nearest byte and breaks exact ties by protocol id; 1 ps more makes
 * it draw each boundary at protosel's byte */
#define PSEL_PT_OWN_DELTA      1e-12 /* [s] */

/* The protosel selections the lines come from, by the protocols they
 * weigh: every protocol (at the sender), every rendezvous (at the
 * receiver: fetch or RTR), those that send after an RTR */
typedef enum {
    PSEL_PT_SEL_ALL,
    PSEL_PT_SEL_RNDV,
    PSEL_PT_SEL_RTR,
    PSEL_PT_SEL_LAST
} psel_pt_sel_t;

/* UCP's settings of a rendezvous threshold: where the user set one, UCP's
 * configured thresholds of tag/rndv stay */
static const char *psel_pt_rndv_thresh_names[] = {
    "RNDV_THRESH", "RNDV_SEND_NBR_THRESH", "RNDV_INTRA_THRESH",
    "RNDV_INTER_THRESH"
};

/* The rendezvous protocols of each envelope, by protosel name */
static const char *psel_pt_rndv_all[] = {"rndv/am", "rndv/get", "rndv/put"};
static const char *psel_pt_rndv_rtr[] = {"rndv/am", "rndv/put"};

/* protosel's view of one of UCP's resources, as an iface had it open */
typedef struct psel_pt_rsc {
    ucp_context_h         context;
    ucp_rsc_index_t       rsc_index;
    uct_iface_attr_t      attr;
    psel_resource_t       resource;
} psel_pt_rsc_t;

/* Protosel's view of one UCP endpoint configuration */
typedef struct psel_pt_ep {
    int                   used;
    unsigned              num_rscs;
    psel_resource_t       rscs[PSEL_MAX_LANES];  /* of UCP's lanes */
    psel_lane_layout_t    layout;                /* UCP's lanes and roles */
    psel_resource_table_t table;                 /* over rscs */
    psel_ep_lanes_t       lanes;
    char                  lanes_str[256];        /* for the dumps */
    int                   prefer_offload;        /* UCP's UCX_PREFER_OFFLOAD */
    unsigned              max_rma_lanes;         /* UCP's UCX_MAX_RMA_RAILS,
                                                    0 where it has none */
    psel_config_t         config[PSEL_PERF_LAST];/* select_perf per flavour */
    int                   inited[PSEL_PERF_LAST];
    psel_select_t         sel[PSEL_PERF_LAST][PSEL_PT_SEL_LAST];
    uint64_t              printed[PSEL_PERF_LAST][4]; /* buffer types dumped:
                                                         a small set of keys */
    unsigned              num_printed[PSEL_PERF_LAST];
} psel_pt_ep_t;

static struct {
    pthread_mutex_t       lock;
    const psel_config_t  *config;
    const psel_calib_t   *calib;
    const psel_proto_t   *rndv_all[3];
    unsigned              num_rndv_all;
    const psel_proto_t   *rndv_rtr[2];
    unsigned              num_rndv_rtr;
    /* UCP's protocols, in the order of ucp_protocols (their ids) */
    psel_pt_proto_t       protos[64];
    unsigned              num_protos;
    /* the last lookup: UCP inits a configuration's protocols one after the
     * other, so most lookups are of the configuration before */
    ucp_worker_h          last_worker;
    ucp_context_h         last_context;
    ucp_ep_config_key_t   last_key;
    psel_pt_ep_t         *last_ep;
    psel_pt_rsc_t         rscs[PSEL_PT_RSC_CACHE_SIZE];
    unsigned              next_rsc;
    psel_pt_ep_t         *cache[PSEL_PT_CACHE_SIZE]; /* allocated on first
                                                       use: a lookup reads
                                                       only the entries used,
                                                       not a page of each */
    unsigned              next_evict;
    psel_pt_ep_t          probe;     /* a lookup's key, under the lock */
    /* psel_pt_new_lines()'s working lines, used under the lock. Not on the
     * stack: 12 KB there took UCP's nested selections (rendezvous asks the
     * remote protocols) as much deeper, whose first touch cost page faults
     * in the first endpoint configuration */
    struct {
        psel_rt_line_t    lines[4 * PSEL_PT_MAX_RANGES];
        psel_rt_owner_t   owners[PSEL_SELECT_MAX_PROTOS * 4];
        psel_rt_line_t    owned[4 * PSEL_PT_MAX_RANGES];
    } scratch;
    int                   warned;
    int                   user_rndv_thresh; /* the user set a rendezvous
                                               threshold of UCP's */
    const char * const   *op_names;  /* UCP's, by dlsym: an undefined
                                        data symbol would make loading fail
                                        where libucp is RTLD_LOCAL */
} psel_pt = {
    .lock = PTHREAD_MUTEX_INITIALIZER
};


const char *psel_proto_tier_built_for(void)
{
    return UCT_VERNO_STRING;
}

/*
 * Which of @a count addresses are writable, per /proc/self/maps, read once
 * for all of them: UCP's protocol objects are plain data, but a build with
 * them in read-only memory must not crash the host. @a writable[i] is
 * nonzero for a writable @a addrs[i]; all zero if the maps cannot be read.
 */
static void psel_pt_writable(const void *const *addrs, unsigned count,
                             int *writable)
{
    unsigned long start, end, a;
    char perms[8], line[512];
    unsigned i;
    FILE *f;

    memset(writable, 0, sizeof(*writable) * count);
    f = fopen("/proc/self/maps", "r");
    if (f == NULL) {
        return;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if ((sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3) ||
            (perms[1] != 'w')) {
            continue;
        }
        for (i = 0; i < count; ++i) {
            a            = (unsigned long)addrs[i];
            writable[i] |= (a >= start) && (a < end);
        }
    }
    fclose(f);
}

/* The GNU build id of a loaded object, as lowercase hex */
typedef struct {
    const char *path;     /* the object's name, as the loader has it */
    char        id[2 * 64 + 1];
    int         found;
} psel_pt_build_id_t;

static int psel_pt_build_id_cb(struct dl_phdr_info *info, size_t size,
                               void *arg)
{
    psel_pt_build_id_t *bid = arg;
    const ElfW(Nhdr) *note;
    const char *p, *end;
    unsigned i, j;

    if ((info->dlpi_name == NULL) || strcmp(info->dlpi_name, bid->path)) {
        return 0;
    }
    bid->found = 1;
    for (i = 0; i < info->dlpi_phnum; ++i) {
        if (info->dlpi_phdr[i].p_type != PT_NOTE) {
            continue;
        }
        p   = (const char*)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        end = p + info->dlpi_phdr[i].p_memsz;
        while (p + sizeof(*note) <= end) {
            note = (const ElfW(Nhdr)*)p;
            p   += sizeof(*note) + ucs_align_up(note->n_namesz, 4);
            if ((note->n_type == NT_GNU_BUILD_ID) && (note->n_namesz == 4) &&
                !memcmp((const char*)(note + 1), "GNU", 4) &&
                (p + note->n_descsz <= end) &&
                (note->n_descsz <= sizeof(bid->id) / 2)) {
                for (j = 0; j < note->n_descsz; ++j) {
                    snprintf(bid->id + 2 * j, 3, "%02x", (unsigned char)p[j]);
                }
                return 1;
            }
            p += ucs_align_up(note->n_descsz, 4);
        }
    }
    return 1;
}

/*
 * Is the loaded libucp (the object of @a libucp_symbol) the very build
 * the internal headers came from? Same version is not enough: another
 * build of it (other configure options, a distribution rebuild) may lay
 * its structures out otherwise. Compares GNU build ids; a build that could
 * not read its libucp's (PSEL_UCP_BUILD_ID empty) checks the version only.
 */
static int psel_pt_same_build(const void *libucp_symbol, char *why, size_t max)
{
    psel_pt_build_id_t bid = {0};
    Dl_info info;

    if (PSEL_UCP_BUILD_ID[0] == '\0') {
        return 1;
    }
    if (!dladdr(libucp_symbol, &info) || (info.dli_fname == NULL)) {
        snprintf(why, max, "cannot tell which libucp is loaded");
        return 0;
    }
    bid.path = info.dli_fname;
    dl_iterate_phdr(psel_pt_build_id_cb, &bid);
    if (!strcmp(bid.id, PSEL_UCP_BUILD_ID)) {
        return 1;
    }
    snprintf(why, max, "the loaded %s (build id %s) is not the libucp "
             "libprotosel_ucx.so was built against (" PSEL_UCP_BUILD_PATH
             ", build id " PSEL_UCP_BUILD_ID "), whose internal structures "
             "it uses (rebuild protosel with --with-ucx-src of the UCX "
             "in use)", info.dli_fname, (bid.id[0] != '\0') ? bid.id : "none");
    return 0;
}

psel_pt_proto_t *psel_pt_proto_by_id(unsigned proto_id)
{
    return (proto_id < psel_pt.num_protos) ? &psel_pt.protos[proto_id] : NULL;
}

psel_pt_proto_t *psel_pt_proto_by_name(const char *name)
{
    unsigned i;

    for (i = 0; i < psel_pt.num_protos; ++i) {
        if (psel_pt.protos[i].proto->name == name) {
            return &psel_pt.protos[i];
        }
    }
    for (i = 0; i < psel_pt.num_protos; ++i) {
        if (!strcmp(psel_pt.protos[i].proto->name, name)) {
            return &psel_pt.protos[i];
        }
    }
    return NULL;
}

int psel_proto_tier_available(void *libucp, char *why, size_t max, int *quiet)
{
    void (*get_version)(unsigned*, unsigned*, unsigned*);
    unsigned (*protocols_count)(void);
    unsigned major, minor, release, i, count, mapped;
    unsigned want_major, want_minor, want_release;
    int writable[ucs_static_array_size(psel_pt.protos)];
    ucp_proto_t **protocols;

    *quiet          = 0;
    /* the version UCP reports to the application: an interposer of
     * ucp_get_version (a preloaded wrapper) is part of its UCP */
    get_version     = dlsym(RTLD_DEFAULT, "ucp_get_version");
    if (get_version == NULL) {
        get_version = dlsym(libucp, "ucp_get_version");
    }
    protocols       = dlsym(libucp, "ucp_protocols");
    protocols_count = dlsym(libucp, "ucp_protocols_count");
    if ((get_version == NULL) || (protocols == NULL) ||
        (protocols_count == NULL)) {
        snprintf(why, max, "the loaded libucp has no ucp_get_version, "
                 "ucp_protocols or ucp_protocols_count");
        return 0;
    }

    get_version(&major, &minor, &release);
    if ((sscanf(UCT_VERNO_STRING, "%u.%u.%u", &want_major, &want_minor,
                &want_release) != 3) ||
        (major != want_major) || (minor != want_minor) ||
        (release != want_release)) {
        snprintf(why, max, "UCX %u.%u.%u is loaded, and libprotosel_ucx.so "
                 "was built for UCX " UCT_VERNO_STRING "'s internal structures "
                 "(rebuild protosel against UCX %u.%u.%u: ./dev.sh ucx "
                 "%u.%u.%u, or configure --with-ucx-src of it)",
                 major, minor, release, major, minor, release, major, minor,
                 release);
        return 0;
    }
    if (!psel_pt_same_build(protocols, why, max)) {
        return 0;
    }

    count = protocols_count();
    if (count > ucs_static_array_size(psel_pt.protos)) {
        snprintf(why, max, "UCP has %u protocols, more than the %zu the tier "
                 "keeps", count, ucs_static_array_size(psel_pt.protos));
        return 0;
    }
    psel_pt_writable((const void *const*)protocols, count, writable);
    for (i = 0, mapped = 0; i < count; ++i) {
        if (psel_ucp_map_find(protocols[i]->name) == NULL) {
            continue;
        }
        if (!writable[i]) {
            snprintf(why, max, "UCP's protocol %s is in read-only memory",
                     protocols[i]->name);
            return 0;
        }
        ++mapped;
    }
    if (mapped == 0) {
        snprintf(why, max, "UCP has none of the protocols protosel maps for "
                 "UCX %s", psel_ucp_map_era());
        return 0;
    }
    return psel_pt_era_resolve(libucp, why, max);
}

/* ------------------------------------------------------------------------
 * Protosel's view of a UCP endpoint configuration
 */

/*
 * protosel's view of UCP's resource @a rsc_index as @a wiface has it open.
 * The per-operation costs come from the rules of the installed UCX
 * (docs/lane-selection.md, "Per-operation costs"), not from asking the
 * iface (uct_iface_estimate_perf): this tier runs only in the UCX version
 * it was built for, whose rules those are (test_resource checks them
 * against the live estimate of every transport here), and the question
 * costs 80-100 us for tcp (its iface query reads the device's speed), for
 * every new endpoint configuration. The view is kept per (context,
 * resource) too, and reused while the iface's attributes are the same:
 * the ifaces of a context's workers are alike.
 */
/* UCP's attributes of a memory domain as protosel's resources read them
 * (uct_md_attr_t); UCX 1.16 keeps them in the v2 form */
static void psel_pt_md_attr(const ucp_tl_md_t *md, uct_md_attr_t *attr)
{
#if PSEL_UCX_AT_LEAST(1, 16)
    memset(attr, 0, sizeof(*attr));
    attr->cap.max_alloc        = md->attr.max_alloc;
    attr->cap.max_reg          = md->attr.max_reg;
    attr->cap.flags            = md->attr.flags;
    attr->cap.reg_mem_types    = md->attr.reg_mem_types;
    attr->cap.detect_mem_types = md->attr.detect_mem_types;
    attr->cap.alloc_mem_types  = md->attr.alloc_mem_types;
    attr->cap.access_mem_types = md->attr.access_mem_types;
    attr->reg_cost             = md->attr.reg_cost;
    attr->rkey_packed_size     = md->attr.rkey_packed_size;
    ucs_strncpy_zero(attr->component_name, md->attr.component_name,
                     sizeof(attr->component_name));
#else
    *attr = md->attr;
#endif
}

static void psel_pt_resource(ucp_context_h context, ucp_rsc_index_t rsc_index,
                             const ucp_worker_iface_t *wiface,
                             psel_resource_t *resource)
{
    const ucp_tl_resource_desc_t *tl = &context->tl_rscs[rsc_index];
    const ucp_tl_md_t *md            = &context->tl_mds[tl->md_index];
    psel_resource_table_t one;
    uct_md_attr_t md_attr;
    psel_pt_rsc_t *entry;
    unsigned i;

    for (i = 0; i < PSEL_PT_RSC_CACHE_SIZE; ++i) {
        entry = &psel_pt.rscs[i];
        if ((entry->context == context) && (entry->rsc_index == rsc_index) &&
            !memcmp(&entry->attr, &wiface->attr, sizeof(entry->attr))) {
            *resource = entry->resource;
            return;
        }
    }

    psel_pt_md_attr(md, &md_attr);
    psel_resource_from_uct(resource, context->tl_cmpts[md->cmpt_index].attr.name,
                           md->rsc.md_name, &tl->tl_rsc, &md_attr,
                           &wiface->attr, NULL);
    one.count     = 1;
    one.resources = resource;
    psel_config_apply_copies(psel_pt.config, &one);
    entry            = &psel_pt.rscs[psel_pt.next_rsc++ % PSEL_PT_RSC_CACHE_SIZE];
    entry->context   = context;
    entry->rsc_index = rsc_index;
    entry->attr      = wiface->attr;
    entry->resource  = *resource;
}

/* The resources of UCP's lanes and their roles, from the endpoint
 * configuration key; lanes without a resource (a CM lane) are left out */
static ucs_status_t psel_pt_ep_key(ucp_worker_h worker,
                                   const ucp_ep_config_key_t *key,
                                   psel_pt_ep_t *ep)
{
    ucp_context_h context = worker->context;
    unsigned lane_map[UCP_MAX_LANES];
    ucp_lane_index_t lanes[UCP_MAX_LANES];
    ucp_rsc_index_t rsc_index, rscs[UCP_MAX_LANES];
    const ucp_lane_index_t *list;
    ucp_worker_iface_t *wiface;
    ucp_lane_index_t lane;
    unsigned i, role, r, count;

    UCS_STATIC_ASSERT(sizeof(ucp_lane_index_t) == 1); /* memchr */
    memset(&ep->layout, 0, sizeof(ep->layout));
    /* UCP selected the lanes for its estimate of endpoints (UCX_NUM_EPS,
     * ucp_params.estimated_num_eps): the lane facts are taken at it too */
    ep->layout.num_eps = ucs_max(context->config.est_num_eps, 1);
#if PSEL_UCX_AT_LEAST(1, 16)
    /* put and get zero-copy run on as many rma_bw lanes as UCP allows */
    ep->max_rma_lanes  = context->config.ext.max_rma_lanes;
    /* UCP's put and get by active messages are its last resort unless
     * UCX_PREFER_OFFLOAD=n (their cfg_thresh "inf"), which the tier keeps */
    ep->prefer_offload = (context->config.ext.prefer_offload == UCS_YES);
#else
    ep->max_rma_lanes  = 0;
    ep->prefer_offload = 1; /* UCP's put and get keep its own lines */
#endif
    ep->num_rscs       = 0;
    for (lane = 0; lane < key->num_lanes; ++lane) {
        lane_map[lane] = UINT_MAX;
        rsc_index      = key->lanes[lane].rsc_index;
        if ((rsc_index == UCP_NULL_RESOURCE) ||
            (ep->layout.num_lanes == PSEL_MAX_LANES)) {
            continue;
        }
        for (r = 0; (r < ep->num_rscs) && (rscs[r] != rsc_index); ++r) {
        }
        if (r == ep->num_rscs) {
            wiface = ucp_worker_iface(worker, rsc_index);
            if ((rsc_index >= context->num_tls) || (wiface == NULL)) {
                return UCS_ERR_NO_ELEM;
            }
            psel_pt_resource(context, rsc_index, wiface, &ep->rscs[r]);
            /* it stands for the peer's resource too (remote = local), and
             * an ep configuration serves every peer with these lanes: no
             * peer is known, so only rails that name none apply */
            ep->rscs[r].dev_addr[0] = '\0';
            rscs[r] = rsc_index;
            ++ep->num_rscs;
        }
        lane_map[lane]                             = ep->layout.num_lanes;
        ep->layout.path[ep->layout.num_lanes]      = key->lanes[lane].path_index;
        ep->layout.local[ep->layout.num_lanes]     = r;
        ep->layout.remote[ep->layout.num_lanes++]  = r;
    }

    for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
        switch (role) {
        case PSEL_LANE_ROLE_AM:     list = &key->am_lane;     break;
        case PSEL_LANE_ROLE_AM_BW:  list = key->am_bw_lanes;  break;
        case PSEL_LANE_ROLE_RMA_BW: list = key->rma_bw_lanes; break;
        case PSEL_LANE_ROLE_RMA:    list = key->rma_lanes;    break;
        default:                    list = key->amo_lanes;    break;
        }
        count = 0;
        for (i = 0; (i < ((role == PSEL_LANE_ROLE_AM) ? 1 : UCP_MAX_LANES)) &&
                    (list[i] != UCP_NULL_LANE); ++i) {
            lanes[count++] = list[i];
        }
        /* UCP's eager and rendezvous copies send the first fragment on the
         * AM lane, the others on the AM_BW lanes. UCX 1.13 lists the AM
         * lane as the first AM_BW lane; later releases list it there only
         * beside other AM_BW lanes (shared memory: am, no am_bw#0).
         * protosel's AM_BW lanes are all the lanes that carry that data */
        if ((role == PSEL_LANE_ROLE_AM_BW) && (key->am_lane != UCP_NULL_LANE) &&
            (memchr(lanes, key->am_lane, count) == NULL) &&
            (count < UCP_MAX_LANES)) {
            memmove(&lanes[1], &lanes[0], count++);
            lanes[0] = key->am_lane;
        }
        for (i = 0; i < count; ++i) {
            if ((lanes[i] >= key->num_lanes) || (lane_map[lanes[i]] == UINT_MAX)) {
                continue;
            }
            ep->layout.role_lanes[role][ep->layout.role_count[role]++] =
                    lane_map[lanes[i]];
        }
    }
    return UCS_OK;
}

static void psel_pt_ep_release(psel_pt_ep_t *ep)
{
    unsigned perf, kind;

    for (perf = 0; perf < PSEL_PERF_LAST; ++perf) {
        if (ep->inited[perf]) {
            for (kind = 0; kind < PSEL_PT_SEL_LAST; ++kind) {
                psel_select_cleanup(&ep->sel[perf][kind]);
            }
            ep->inited[perf] = 0;
        }
    }
    ep->used = 0;
}

static ucs_status_t psel_pt_ep_init(psel_pt_ep_t *ep)
{
    psel_lane_select_params_t lane_params;
    ucs_string_buffer_t strb;
    unsigned i, role;

    ep->table.count     = ep->num_rscs;
    ep->table.resources = ep->rscs;
    ucs_strncpy_zero(ep->table.origin, "UCP", sizeof(ep->table.origin));
    /* lanes a calibration measured (its rails) take their measured
     * latency and bandwidth, as in protosel's own endpoints */
    memset(&lane_params, 0, sizeof(lane_params));
    lane_params.num_eps      = ep->layout.num_eps;
    lane_params.measured     = (psel_pt.calib != NULL) ? psel_calib_rail_measured :
                                                         NULL;
    lane_params.measured_arg = (void*)psel_pt.calib;
    if (psel_lanes_from_layout(&ep->table, &ep->table, &ep->layout,
                               &lane_params, &ep->lanes) != UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }

    ucs_string_buffer_init_fixed(&strb, ep->lanes_str, sizeof(ep->lanes_str));
    for (i = 0; i < ep->lanes.num_lanes; ++i) {
        ucs_string_buffer_appendf(&strb, "%s%s(", (i == 0) ? "" : " ",
                                  ep->lanes.lanes[i].name);
        for (role = 0; role < PSEL_LANE_ROLE_LAST; ++role) {
            if (ep->lanes.info[i].roles & UCS_BIT(role)) {
                ucs_string_buffer_appendf(&strb, "%s,",
                                          psel_lane_role_name(role));
            }
        }
        ucs_string_buffer_rtrim(&strb, ",");
        ucs_string_buffer_appendf(&strb, ")");
    }
    memset(ep->inited, 0, sizeof(ep->inited));
    memset(ep->num_printed, 0, sizeof(ep->num_printed));
    ep->used = 1;
    return UCS_OK;
}

/* The three selections of flavour @a perf, all or none */
static ucs_status_t psel_pt_select_init(psel_pt_ep_t *ep, psel_perf_type_t perf)
{
    const psel_proto_t *const *protos[] = {psel_builtin_protos,
                                           psel_pt.rndv_all, psel_pt.rndv_rtr};
    unsigned num_protos[] = {psel_num_builtin_protos, psel_pt.num_rndv_all,
                             psel_pt.num_rndv_rtr};
    psel_select_t *sel;
    unsigned i;

    UCS_STATIC_ASSERT(ucs_static_array_size(protos) == PSEL_PT_SEL_LAST);
    ep->config[perf]             = *psel_pt.config;
    ep->config[perf].select_perf = perf;
    ep->config[perf].prefer_offload = ep->prefer_offload;
    if (ep->max_rma_lanes > 0) {
        ep->config[perf].max_rma_lanes = ucs_min(ep->max_rma_lanes,
                                                 PSEL_MAX_LANES);
    }
    /* the tables are printed here, once, not by every build */
    ep->config[perf].proto_info  = PSEL_PROTO_INFO_NO;
    for (i = 0; i < PSEL_PT_SEL_LAST; ++i) {
        sel = &ep->sel[perf][i];
        if (psel_select_init(sel, protos[i], num_protos[i], &ep->lanes.sets,
                             &ep->config[perf]) != UCS_OK) {
            while (i-- > 0) {
                psel_select_cleanup(&ep->sel[perf][i]);
            }
            return UCS_ERR_NO_MEMORY;
        }
        sel->calib         = psel_pt.calib;
        /* UCP runs these: the lines measured through UCP first, and only
         * lines of the work UCP's protocols do */
        sel->calib_for_ucp = 1;
        sel->ucp_filter    = psel_ucp_map_stand_in;
        /* a protocol's caps are the same in all six selections (the same
         * lanes, settings but select_perf, calibration): the single
         * flavour's full selection runs the inits, the others copy */
        if (sel != &ep->sel[PSEL_PERF_SINGLE][PSEL_PT_SEL_ALL]) {
            sel->caps_from = &ep->sel[PSEL_PERF_SINGLE][PSEL_PT_SEL_ALL];
        }
    }
    ep->inited[perf] = 1;
    return UCS_OK;
}

static psel_select_t *psel_pt_select(psel_pt_ep_t *ep, psel_pt_sel_t kind,
                                     psel_perf_type_t perf)
{
    /* both flavours at once: the multi one's caps come from the single's */
    if (!ep->inited[PSEL_PERF_SINGLE] &&
        (psel_pt_select_init(ep, PSEL_PERF_SINGLE) != UCS_OK)) {
        return NULL;
    }
    if (!ep->inited[PSEL_PERF_MULTI] &&
        (psel_pt_select_init(ep, PSEL_PERF_MULTI) != UCS_OK)) {
        return NULL;
    }
    return &ep->sel[perf][kind];
}

/* Is @a key of @a worker the configuration of the last lookup? The same
 * worker and context, the same key, the same transports on its lanes */
static int psel_pt_ep_is_last(ucp_worker_h worker,
                              const ucp_ep_config_key_t *key)
{
    const psel_pt_ep_t *ep = psel_pt.last_ep;
    const uct_tl_resource_desc_t *tl;
    ucp_rsc_index_t rsc_index;
    ucp_lane_index_t lane;
    unsigned r;

    if ((ep == NULL) || (worker != psel_pt.last_worker) ||
        (worker->context != psel_pt.last_context) ||
        memcmp(key, &psel_pt.last_key, sizeof(*key))) {
        return 0;
    }
    for (lane = 0, r = 0; lane < key->num_lanes; ++lane) {
        rsc_index = key->lanes[lane].rsc_index;
        if (rsc_index == UCP_NULL_RESOURCE) {
            continue;
        }
        if (rsc_index >= worker->context->num_tls) {
            return 0;
        }
        tl = &worker->context->tl_rscs[rsc_index].tl_rsc;
        for (r = 0; (r < ep->num_rscs) &&
                    (strcmp(ep->rscs[r].tl_name, tl->tl_name) ||
                     strcmp(ep->rscs[r].dev_name, tl->dev_name)); ++r) {
        }
        if (r == ep->num_rscs) {
            return 0;
        }
    }
    return 1;
}

static psel_pt_ep_t *psel_pt_ep_find(ucp_worker_h worker,
                                     const ucp_ep_config_key_t *key);

/* The configuration's view in the cache, or a new one in it */
static psel_pt_ep_t *psel_pt_ep_get(ucp_worker_h worker,
                                    const ucp_ep_config_key_t *key)
{
    if (!psel_pt_ep_is_last(worker, key)) {
        psel_pt.last_ep      = psel_pt_ep_find(worker, key);
        psel_pt.last_worker  = worker;
        psel_pt.last_context = worker->context;
        memcpy(&psel_pt.last_key, key, sizeof(*key));
    }
    return psel_pt.last_ep;
}

static psel_pt_ep_t *psel_pt_ep_find(ucp_worker_h worker,
                                     const ucp_ep_config_key_t *key)
{
    psel_pt_ep_t *probe = &psel_pt.probe;
    psel_pt_ep_t *ep;
    unsigned i;

    if (psel_pt_ep_key(worker, key, probe) != UCS_OK) {
        return NULL;
    }
    for (i = 0; i < PSEL_PT_CACHE_SIZE; ++i) {
        ep = psel_pt.cache[i];
        if ((ep != NULL) && ep->used && (ep->num_rscs == probe->num_rscs) &&
            !memcmp(ep->rscs, probe->rscs, sizeof(*ep->rscs) * ep->num_rscs) &&
            !memcmp(&ep->layout, &probe->layout, sizeof(ep->layout)) &&
            (ep->max_rma_lanes == probe->max_rma_lanes) &&
            (ep->prefer_offload == probe->prefer_offload)) {
            return ep;
        }
    }
    for (i = 0; i < PSEL_PT_CACHE_SIZE; ++i) {
        if ((psel_pt.cache[i] == NULL) || !psel_pt.cache[i]->used) {
            break;
        }
    }
    if (i == PSEL_PT_CACHE_SIZE) {
        i = psel_pt.next_evict++ % PSEL_PT_CACHE_SIZE;
        psel_pt_ep_release(psel_pt.cache[i]);
        if (psel_pt.last_ep == psel_pt.cache[i]) {
            psel_pt.last_ep = NULL;
        }
    } else if (psel_pt.cache[i] == NULL) {
        psel_pt.cache[i] = calloc(1, sizeof(*psel_pt.cache[i]));
        if (psel_pt.cache[i] == NULL) {
            return NULL;
        }
    }
    ep           = psel_pt.cache[i];
    ep->num_rscs = probe->num_rscs;
    memcpy(ep->rscs, probe->rscs, sizeof(*ep->rscs) * probe->num_rscs);
    ep->layout   = probe->layout;
    /* UCP's settings that the selection follows: part of the identity */
    ep->max_rma_lanes  = probe->max_rma_lanes;
    ep->prefer_offload = probe->prefer_offload;
    return (psel_pt_ep_init(ep) == UCS_OK) ? ep : NULL;
}

/* Where a protocol's line in @a table came from, for UCX_PSEL_PROTO_INFO */
static const char *psel_pt_line_source(const psel_select_table_t *table,
                                       unsigned i)
{
    if (table->status[i] != UCS_OK) {
        return NULL;
    } else if (table->caps[i].flags & PSEL_SELECT_CAP_MEASURED_UCP) {
        return "measured through UCP";
    } else if (table->caps[i].flags & PSEL_PROTO_CAP_CALIBRATED) {
        return "measured through protosel's data path";
    }
    return "from the transports' attributes";
}

static const psel_proto_caps_t *
psel_pt_table_caps(const psel_select_table_t *table, const char *name,
                   unsigned *index_p)
{
    unsigned i;

    for (i = 0; i < table->num_protos; ++i) {
        if (!strcmp(table->protos[i]->name, name)) {
            *index_p = i;
            return &table->caps[i];
        }
    }
    return NULL;
}

/* The protosel table whose lines UCP's protocol @a e takes: the
 * active-message, put or get one, or tag send's (with the rendezvous) */
static psel_op_t psel_pt_map_op(const psel_ucp_map_entry_t *e)
{
    return !strcmp(e->op_name, "am_send") ? PSEL_OP_AM_SEND :
           !strcmp(e->op_name, "put")     ? PSEL_OP_PUT :
           !strcmp(e->op_name, "get")     ? PSEL_OP_GET :
                                            PSEL_OP_TAG_SEND;
}

/* UCX_PSEL_PROTO_INFO=y: where the lines of each of UCP's mapped protocols
 * of @a table's operation come from, over this configuration's lanes */
static void psel_pt_dump_sources(FILE *f, const psel_select_table_t *table)
{
    const psel_ucp_map_entry_t *entries, *e;
    const psel_proto_caps_t *caps;
    const char *source;
    unsigned count, index;

    entries = psel_ucp_map_entries(&count);
    fprintf(f, "# UCP's protocols (mapping of UCX %s):\n", psel_ucp_map_era());
    for (e = entries; e < entries + count; ++e) {
        if (psel_pt_map_op(e) != table->buf_type.op) {
            continue; /* another operation's */
        } else if (psel_pt_proto_by_name(e->ucp_name) == NULL) {
            fprintf(f, "#   %-17s not in this UCP\n", e->ucp_name);
            continue;
        }
        switch (e->kind) {
        case PSEL_UCP_MAP_RNDV_ALL:
            fprintf(f, "#   %-17s the envelope of the rendezvous protocols "
                    "below\n", e->ucp_name);
            continue;
        case PSEL_UCP_MAP_RNDV_RTR:
            fprintf(f, "#   %-17s the envelope of rndv/am and rndv/put below\n",
                    e->ucp_name);
            continue;
        case PSEL_UCP_MAP_REMOTE:
            fprintf(f, "#   %-17s per instance, the line of the data protocol "
                    "its peer runs\n", e->ucp_name);
            continue;
        default:
            break;
        }
        caps   = psel_pt_table_caps(table, e->psel_name, &index);
        source = (caps != NULL) ? psel_pt_line_source(table, index) : NULL;
        if ((source != NULL) &&
            !(caps->flags & PSEL_SELECT_CAP_MEASURED_UCP) &&
            !psel_ucp_map_same_work(e, caps)) {
            fprintf(f, "#   %-17s UCP's own line, last resort: protosel's %s "
                    "here %s\n", e->ucp_name, e->psel_name,
                    (caps->flags & PSEL_PROTO_CAP_COPY) ? "copies the data" :
                    "sends from the user's buffer");
        } else if (source != NULL) {
            fprintf(f, "#   %-17s protosel's %s, %s\n", e->ucp_name,
                    e->psel_name, source);
        } else {
            fprintf(f, "#   %-17s UCP's own line, last resort: %s\n",
                    e->ucp_name, (caps != NULL) ? caps->desc :
                    "protosel does not weigh it here");
        }
    }
}

/* UCX_PSEL_PROTO_INFO=y: protosel's own table for this endpoint
 * configuration and buffer type, once, beside the one UCP prints */
static void psel_pt_dump(psel_pt_ep_t *ep, ucp_worker_h worker,
                         ucp_worker_cfg_index_t ep_cfg_index,
                         psel_perf_type_t perf, psel_buffer_type_t bt,
                         const psel_select_table_t *table)
{
    char title[64], *buf = NULL, *line, *end;
    size_t size = 0;
    unsigned i;
    FILE *f;

    for (i = 0; i < ep->num_printed[perf]; ++i) {
        if (ep->printed[perf][i] == bt.key) {
            return;
        }
    }
    if (ep->num_printed[perf] < ucs_static_array_size(ep->printed[perf])) {
        ep->printed[perf][ep->num_printed[perf]++] = bt.key;
    }

    f = open_memstream(&buf, &size);
    if (f == NULL) {
        return;
    }
    fprintf(f, "protosel: worker %p ep_cfg[%u]: UCP's lanes %s; %s cost "
            "lines for UCP's %s protocols\n", worker, ep_cfg_index,
            ep->lanes_str, (perf == PSEL_PERF_MULTI) ? "multi" : "single",
            psel_op_name(bt.op));
    psel_select_dump_cost_source(f, &ep->sel[perf][PSEL_PT_SEL_ALL], table);
    psel_pt_dump_sources(f, table);
    snprintf(title, sizeof(title), "protosel ep_cfg[%u]%s", ep_cfg_index,
             (perf == PSEL_PERF_MULTI) ? " multi" : "");
    psel_select_dump(f, &ep->sel[perf][PSEL_PT_SEL_ALL], table, title, 0);
    fclose(f);
    for (line = buf; (line != NULL) && (*line != '\0'); line = end + 1) {
        end = strchr(line, '\n');
        if (end == NULL) {
            break;
        }
        *end = '\0';
        ucs_log_print_compact(line);
    }
    free(buf);
}


/* ------------------------------------------------------------------------
 * The lines of a UCP protocol
 */

/* The buffer type protosel knows for a UCP selection parameter, or 0: an
 * active message's, a put's, a get's, or else a tag send's (the
 * rendezvous selections serve tag send and active messages, on the same
 * lines) */
static int psel_pt_buffer_type(const ucp_proto_select_param_t *param,
                               psel_buffer_type_t *bt)
{
    psel_dt_class_t dt_class;
    psel_op_t op;

    switch (psel_pt_param_op_id(param)) {
    case UCP_OP_ID_AM_SEND: op = PSEL_OP_AM_SEND;  break;
    case UCP_OP_ID_PUT:     op = PSEL_OP_PUT;      break;
    case UCP_OP_ID_GET:     op = PSEL_OP_GET;      break;
    default:                op = PSEL_OP_TAG_SEND; break;
    }

    switch (param->dt_class) {
    case UCP_DATATYPE_CONTIG:  dt_class = PSEL_DT_CONTIG;  break;
    case UCP_DATATYPE_IOV:     dt_class = PSEL_DT_IOV;     break;
    case UCP_DATATYPE_GENERIC: dt_class = PSEL_DT_GENERIC; break;
    default:                   return 0;
    }
    *bt = psel_buffer_type(op, dt_class, param->mem_type,
                           ucs_max(param->sg_count, 1));
    return 1;
}

int psel_pt_op_modelled(const ucp_proto_select_param_t *param)
{
    switch (psel_pt_param_op_id(param)) {
    case UCP_OP_ID_TAG_SEND:
    case UCP_OP_ID_AM_SEND:
    case UCP_OP_ID_PUT:
    case UCP_OP_ID_GET:
    case UCP_OP_ID_RNDV_SEND:
    case UCP_OP_ID_RNDV_RECV:
        return 1;
    default:
        return 0;
    }
}

void psel_pt_report_unmapped(psel_pt_proto_t *pt,
                             const ucp_proto_select_param_t *param)
{
    unsigned op_id = psel_pt_param_op_id(param);
    char line[256];

    /* a placeholder (reconfig, while an endpoint is being reconfigured)
     * sends nothing */
    if (pt->reported || (pt->proto->flags & UCP_PROTO_FLAG_INVALID) ||
        (psel_pt.config->proto_info != PSEL_PROTO_INFO_YES)) {
        return;
    }
    pt->reported = 1;
    snprintf(line, sizeof(line), "protosel: UCP's protocol %s serves %s and "
             "is not in protosel's mapping of UCX %s: it keeps UCP's lines",
             pt->proto->name, (psel_pt.op_names != NULL) ?
             psel_pt.op_names[op_id] : "an operation protosel models",
             psel_ucp_map_era());
    ucs_log_print_compact(line);
}

/* The protosel selection whose protocols compete at UCP's operation
 * @a op_id: the whole one at the sender (tag send), the rendezvous ones at
 * the receiver (get against an RTR) and at the sender after an RTR (put
 * against am) */
static psel_pt_sel_t psel_pt_rival_sel(int op_id)
{
    switch (op_id) {
    case UCP_OP_ID_RNDV_RECV: return PSEL_PT_SEL_RNDV;
    case UCP_OP_ID_RNDV_SEND: return PSEL_PT_SEL_RTR;
    default:                  return PSEL_PT_SEL_ALL;
    }
}

/* Does protosel's row @a proto stand for lines of @a data? */
static int psel_pt_owns(const psel_ucp_map_entry_t *data,
                        const psel_proto_t *proto)
{
    /* an active message's rendezvous rows are their tag twins' */
    const char *name = !strncmp(proto->name, "am/rndv/", 8) ?
                       psel_proto_lines_name(proto) : proto->name;

    switch (data->kind) {
    case PSEL_UCP_MAP_RNDV_ALL:
        return !strncmp(name, "rndv/", 5);
    case PSEL_UCP_MAP_RNDV_RTR:
        return !strcmp(proto->name, "rndv/am") ||
               !strcmp(proto->name, "rndv/put");
    default:
        return !strcmp(name, data->psel_name);
    }
}

/* protosel's lines for @a data, unscaled, from *pmin_p; none where
 * protosel rules it out, or where its line does another work than UCP's
 * protocol and was not measured through UCP */
static unsigned psel_pt_lines(const psel_ucp_map_entry_t *data,
                              psel_pt_ep_t *ep, psel_perf_type_t perf,
                              psel_buffer_type_t bt, psel_rt_line_t *lines,
                              unsigned max, size_t *pmin_p,
                              size_t *cfg_thresh_p)
{
    const psel_select_table_t *table;
    const psel_proto_caps_t *pcaps;
    psel_pt_sel_t kind;
    unsigned count = 0, row, index;
    size_t start;

    *pmin_p       = 0;
    *cfg_thresh_p = PSEL_THRESH_AUTO;
    kind          = (data->kind == PSEL_UCP_MAP_RNDV_ALL) ? PSEL_PT_SEL_RNDV :
                    (data->kind == PSEL_UCP_MAP_RNDV_RTR) ? PSEL_PT_SEL_RTR :
                    PSEL_PT_SEL_ALL;
    if ((kind != PSEL_PT_SEL_ALL) ||
        ((data->psel_name != NULL) && !strncmp(data->psel_name, "rndv/", 5))) {
        bt.op = PSEL_OP_TAG_SEND; /* the rendezvous lines of every send */
    }
    if (psel_select_build(psel_pt_select(ep, kind, perf), bt, &table) !=
        UCS_OK) {
        return 0;
    }
    if (data->kind == PSEL_UCP_MAP_LINE) {
        pcaps = psel_pt_table_caps(table, data->psel_name, &index);
        if ((pcaps == NULL) || (table->status[index] != UCS_OK) ||
            (!(pcaps->flags & PSEL_SELECT_CAP_MEASURED_UCP) &&
             !psel_ucp_map_same_work(data, pcaps))) {
            return 0;
        }
        *pmin_p       = pcaps->min_length;
        *cfg_thresh_p = pcaps->cfg_thresh;
        return psel_rt_lines_add(lines, 0, max, pcaps->ranges,
                                 pcaps->num_ranges, pcaps->min_length,
                                 SIZE_MAX);
    }

    /* the envelope of protosel's rendezvous protocols, each on its own
     * lines in the rows its sub-table gives it */
    for (row = 0, start = 0; row < table->count; ++row) {
        pcaps = &table->caps[table->elems[row].proto_index];
        count = psel_rt_lines_add(lines, count, max, pcaps->ranges,
                                  pcaps->num_ranges, start,
                                  table->elems[row].max_length);
        start = table->elems[row].max_length + 1;
    }
    *cfg_thresh_p = table->caps[table->elems[0].proto_index].cfg_thresh;
    return count;
}

/* The steepest slope of @a caps's lines over sizes @a lo..@a hi, per
 * flavour */
static void psel_pt_slopes(const psel_proto_caps_t *caps, size_t lo,
                           size_t hi, double *slope)
{
    size_t start = 0;
    unsigned r, t;

    for (t = 0; t < PSEL_PERF_LAST; ++t) {
        slope[t] = 0;
    }
    for (r = 0; (r < caps->num_ranges) && (start <= hi); ++r) {
        if (caps->ranges[r].max_length >= lo) {
            for (t = 0; t < PSEL_PERF_LAST; ++t) {
                slope[t] = ucs_max(slope[t], caps->ranges[r].perf[t].m);
            }
        }
        if (caps->ranges[r].max_length == SIZE_MAX) {
            break;
        }
        start = caps->ranges[r].max_length + 1;
    }
}

/*
 * protosel's lines for @a data at UCP's operation @a op_id over @a ep's
 * lanes, for @a perf and @a bt, marked where protosel's table gives the
 * protocol the sizes (lines.h): @a owned from *pmin_p on (none: protosel
 * rules it out), and the threshold protosel forces on it.
 * UCS_ERR_EXCEEDS_LIMIT when they do not fit UCP's ranges (UCP's lines
 * stay).
 */
static ucs_status_t psel_pt_owned(const psel_ucp_map_entry_t *data, int op_id,
                                  psel_pt_ep_t *ep, psel_perf_type_t perf,
                                  psel_buffer_type_t bt, psel_rt_line_t *owned,
                                  unsigned max, unsigned *num_owned_p,
                                  size_t *pmin_p, size_t *cfg_thresh_p)
{
    psel_rt_line_t *lines    = psel_pt.scratch.lines;
    psel_rt_owner_t *owners  = psel_pt.scratch.owners;
    const psel_select_table_t *rivals;
    unsigned num_lines, num_owned, row;
    psel_select_t *rival;
    size_t start;
    double scale;

    *num_owned_p = 0;
    rival        = psel_pt_select(ep, psel_pt_rival_sel(op_id), perf);
    if (rival == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    num_lines = psel_pt_lines(data, ep, perf, bt, lines,
                              ucs_static_array_size(psel_pt.scratch.lines),
                              pmin_p, cfg_thresh_p);
    if (num_lines > ucs_static_array_size(psel_pt.scratch.lines)) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    if (num_lines == 0) {
        return UCS_OK;
    }

    /* where protosel's table gives the sizes to this protocol; there
     * rendezvous competes with eager through the bias d, which protosel
     * lets move a boundary by at most x2 (select.h), so the bias too
     * applies only where protosel took it */
    if ((psel_select_build(rival, bt, &rivals) != UCS_OK) ||
        (rivals->count > ucs_static_array_size(psel_pt.scratch.owners))) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    for (row = 0, start = 0; row < rivals->count; ++row) {
        owners[row].max_length = rivals->elems[row].max_length;
        owners[row].owned      = psel_pt_owns(data, rivals->elems[row].proto);
        psel_pt_slopes(&rivals->caps[rivals->elems[row].proto_index], start,
                       owners[row].max_length, owners[row].slope);
        start = owners[row].max_length + 1;
    }
    /* a rendezvous against eager: at the sender */
    scale     = (((op_id == UCP_OP_ID_TAG_SEND) ||
                  (op_id == UCP_OP_ID_AM_SEND)) &&
                 ((data->kind == PSEL_UCP_MAP_RNDV_ALL) ||
                  !strncmp(data->psel_name, "rndv/", 5))) ?
                psel_config_rndv_bias(psel_pt.config) : 1.0;
    num_owned = psel_rt_lines_own(lines, num_lines, *pmin_p, owners,
                                  rivals->count, scale,
                                  1.0 / (1.0 - psel_select_switch_margin(rival)),
                                  PSEL_PT_OWN_DELTA, owned, max);
    if (num_owned > max) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    *num_owned_p = num_owned;
    return UCS_OK;
}

/* UCX_LOG_LEVEL=debug: the lines a protocol now has */
static void psel_pt_debug_lines(const psel_pt_proto_t *pt,
                                const psel_pt_select_ctx_t *sel,
                                size_t min_length, const psel_rt_line_t *out,
                                unsigned count)
{
    UCS_STRING_BUFFER_ONSTACK(strb, 1024);
    size_t start = min_length;
    psel_perf_type_t perf;
    unsigned i;

    for (i = 0; i < count; ++i) {
        ucs_string_buffer_appendf(&strb, " %zu..", start);
        psel_size_str(out[i].max_length, &strb);
        for (perf = 0; perf < PSEL_PERF_LAST; ++perf) {
            ucs_string_buffer_appendf(&strb, " %s ", (perf == 0) ? "single" :
                                      "multi");
            psel_perf_func_str(out[i].perf[perf], &strb);
        }
        start = out[i].max_length + 1;
    }
    ucs_debug("protosel: ep_cfg[%u] %s %s:%s", sel->ep_cfg_index,
              (psel_pt.op_names != NULL) ?
              psel_pt.op_names[psel_pt_param_op_id(sel->select_param)] : "?",
              pt->proto->name, ucs_string_buffer_cstr(&strb));
}

/*
 * Whether UCP's configured threshold @a ucp_thresh of an instance is
 * protosel's to set: none is configured (auto), or it is UCP's own
 * default for a send that completes at once (UCX_RNDV_SEND_NBR_THRESH,
 * 256 KB, from UCX 1.16 on tag/rndv's threshold for MPI_Send's
 * UCP_OP_ATTR_FLAG_FAST_CMPL), which no user setting asked for. A user's
 * setting wins (psel_pt.user_rndv_thresh).
 */
static int psel_pt_thresh_free(const psel_pt_proto_t *pt,
                               const psel_ucp_map_entry_t *data,
                               const psel_pt_select_ctx_t *sel,
                               size_t ucp_thresh)
{
    if (ucp_thresh == UCS_MEMUNITS_AUTO) {
        return 1;
    }
    return (pt->op_id == UCP_OP_ID_TAG_SEND) && !psel_pt.user_rndv_thresh &&
           ((data->kind == PSEL_UCP_MAP_RNDV_ALL) ||
            ((data->psel_name != NULL) &&
             !strncmp(data->psel_name, "rndv/", 5))) &&
           (psel_pt_param_op_attr(sel->select_param) &
            UCP_OP_ATTR_FLAG_FAST_CMPL) &&
           (ucp_thresh ==
            sel->worker->context->config.ext.rndv_send_nbr_thresh);
}

unsigned psel_pt_new_lines(const psel_pt_proto_t *pt,
                           const psel_ucp_map_entry_t *data,
                           const psel_pt_select_ctx_t *sel,
                           const psel_rt_line_t *orig, unsigned num_orig,
                           size_t min_length, psel_rt_line_t *out,
                           unsigned *orig_index, size_t *cfg_thresh_p)
{
    psel_rt_line_t *owned                 = psel_pt.scratch.owned;
    const ucp_proto_select_param_t *param = sel->select_param;
    const psel_select_table_t *full;
    unsigned num_owned, count = 0, row;
    size_t pmin, psel_thresh;
    psel_buffer_type_t bt;
    psel_perf_type_t perf;
    ucs_status_t status;
    psel_pt_ep_t *ep;

    if ((pt->map == NULL) || ((int)psel_pt_param_op_id(param) != pt->op_id) ||
        !psel_pt_buffer_type(param, &bt)) {
        return 0; /* not modelled: UCP's lines stay */
    }
    perf = (psel_pt_param_op_attr(param) & UCP_OP_ATTR_FLAG_MULTI_SEND) ?
           PSEL_PERF_MULTI : PSEL_PERF_SINGLE;

    pthread_mutex_lock(&psel_pt.lock);
    ep = psel_pt_ep_get(sel->worker, sel->ep_config_key);
    if (ep == NULL) {
        goto out_warn;
    }
    status = psel_pt_owned(data, pt->op_id, ep, perf, bt, owned,
                           ucs_static_array_size(psel_pt.scratch.owned),
                           &num_owned, &pmin, &psel_thresh);
    if (status == UCS_ERR_NO_MEMORY) {
        goto out_warn;
    } else if (status != UCS_OK) {
        ucs_debug("protosel: %s: too many ranges, UCP's lines stay",
                  pt->proto->name);
        goto out_dump;
    }
    for (row = 0; row < num_owned; ++row) {
        owned[row].perf[PSEL_PERF_SINGLE].c += pt->map->extra;
        owned[row].perf[PSEL_PERF_MULTI].c  += pt->map->extra;
    }

    /* no line at all: protosel rules the protocol out, the penalty
     * everywhere keeps it as a last resort */
    count = psel_rt_lines_replace(orig, num_orig, min_length, pmin, owned,
                                  num_owned, PSEL_PT_PENALTY, out,
                                  PSEL_PT_MAX_RANGES, orig_index);
    if ((count > 0) && psel_pt_thresh_free(pt, data, sel, *cfg_thresh_p)) {
        *cfg_thresh_p = (psel_thresh != PSEL_THRESH_AUTO) ? psel_thresh :
                        UCS_MEMUNITS_AUTO;
    }
    if ((count > 0) && ucs_log_is_enabled(UCS_LOG_LEVEL_DEBUG)) {
        psel_pt_debug_lines(pt, sel, min_length, out, count);
    }

out_dump:
    if ((psel_pt.config->proto_info == PSEL_PROTO_INFO_YES) &&
        (psel_select_build(psel_pt_select(ep, PSEL_PT_SEL_ALL, perf), bt,
                           &full) == UCS_OK)) {
        psel_pt_dump(ep, sel->worker, sel->ep_cfg_index, perf, bt, full);
    }
    pthread_mutex_unlock(&psel_pt.lock);
    return count;

out_warn:
    if (!psel_pt.warned) {
        psel_pt.warned = 1;
        ucs_warn("protosel: cannot model UCP's endpoint configuration %u "
                 "(%s): its protocols keep UCP's cost lines",
                 sel->ep_cfg_index, pt->proto->name);
    }
    pthread_mutex_unlock(&psel_pt.lock);
    return 0;
}

/* Fault in the pages of zeroed memory @a p now. A memset would not do:
 * the compiler turns malloc + memset into calloc, which does not write
 * memory it knows to be zero (fresh from the kernel), so the pages stayed
 * untouched until the first endpoint */
static void psel_pt_touch(void *p, size_t size)
{
    volatile char *c = p;
    size_t offset;

    for (offset = 0; offset < size; offset += 4096) {
        c[offset] = 0;
    }
    c[size - 1] = 0;
}

void psel_proto_tier_install(void *libucp, const psel_config_t *config,
                             const psel_calib_t *calib)
{
    unsigned (*protocols_count)(void) = dlsym(libucp, "ucp_protocols_count");
    ucp_proto_t **protocols           = dlsym(libucp, "ucp_protocols");
    int writable[ucs_static_array_size(psel_pt.protos)];
    const psel_ucp_map_entry_t *entries;
    const psel_proto_t *proto;
    psel_pt_proto_t *pt;
    unsigned i, op, count;
    char why[256];

    pthread_mutex_lock(&psel_pt.lock);
    if (!psel_pt_era_resolve(libucp, why, sizeof(why))) {
        pthread_mutex_unlock(&psel_pt.lock);
        return; /* psel_proto_tier_available() said so first */
    }
    /* the memory of the resource cache, of the first endpoint
     * configuration and of the lookup's key (28 KB each), and the scratch,
     * touched here, in ucp_init(), rather than by the first endpoint's
     * creation: their page faults were a third of what the library added
     * to it (bench/ucp_ep_cost: first_ep_config_minflt) */
    psel_pt_touch(psel_pt.rscs, sizeof(psel_pt.rscs));
    psel_pt_touch(&psel_pt.scratch, sizeof(psel_pt.scratch));
    psel_pt_touch(&psel_pt.probe, sizeof(psel_pt.probe));
    if (psel_pt.cache[0] == NULL) {
        psel_pt.cache[0] = calloc(1, sizeof(*psel_pt.cache[0]));
        if (psel_pt.cache[0] != NULL) {
            psel_pt_touch(psel_pt.cache[0], sizeof(*psel_pt.cache[0]));
        }
    }
    psel_pt.config   = config;
    psel_pt.calib    = calib;
    psel_pt_rails_init(calib, config->proto_info == PSEL_PROTO_INFO_YES);
    psel_pt.user_rndv_thresh = 0;
    for (i = 0; i < ucs_static_array_size(psel_pt_rndv_thresh_names); ++i) {
        psel_pt.user_rndv_thresh |=
                psel_ucx_setting_user_set(psel_pt_rndv_thresh_names[i], NULL,
                                          NULL, 0);
    }
    psel_pt.op_names = dlsym(libucp, "ucp_operation_names");
    if (psel_pt.num_rndv_all == 0) {
        for (i = 0; i < ucs_static_array_size(psel_pt_rndv_all); ++i) {
            if ((proto = psel_proto_by_name(psel_pt_rndv_all[i])) != NULL) {
                psel_pt.rndv_all[psel_pt.num_rndv_all++] = proto;
            }
        }
        for (i = 0; i < ucs_static_array_size(psel_pt_rndv_rtr); ++i) {
            if ((proto = psel_proto_by_name(psel_pt_rndv_rtr[i])) != NULL) {
                psel_pt.rndv_rtr[psel_pt.num_rndv_rtr++] = proto;
            }
        }
    }

    /* every protocol: the mapped get protosel's lines, the others are
     * watched to say once that they keep UCP's */
    count = ucs_min(protocols_count(), ucs_static_array_size(psel_pt.protos));
    for (i = psel_pt.num_protos; i < count; ++i) {
        pt        = &psel_pt.protos[i];
        pt->proto = protocols[i];
        pt->map   = psel_ucp_map_find(pt->proto->name);
        pt->op_id = -1;
        for (op = 0; (pt->map != NULL) && (psel_pt.op_names != NULL) &&
                     (op < UCP_OP_ID_LAST); ++op) {
            if ((psel_pt.op_names[op] != NULL) &&
                !strcmp(psel_pt.op_names[op], pt->map->op_name)) {
                pt->op_id = op;
            }
        }
    }
    psel_pt.num_protos = count;
    psel_pt_writable((const void *const*)protocols, count, writable);
    for (i = 0; i < count; ++i) {
        pt = &psel_pt.protos[i];
        if (!psel_pt_era_wrapped(pt) && writable[i]) {
            psel_pt_era_wrap(pt);
        }
    }

    if (config->proto_info == PSEL_PROTO_INFO_YES) {
        entries = psel_ucp_map_entries(&count);
        for (i = 0; i < count; ++i) {
            if (psel_pt_proto_by_name(entries[i].ucp_name) == NULL) {
                snprintf(why, sizeof(why), "protosel: UCP has no protocol %s "
                         "of protosel's mapping of UCX %s",
                         entries[i].ucp_name, psel_ucp_map_era());
                ucs_log_print_compact(why);
            }
        }
    }
    pthread_mutex_unlock(&psel_pt.lock);
}
