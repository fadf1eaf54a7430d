/*
 * UCP's protocols and protosel's lines, one table per era of UCP's
 * protocol API (see ucp_map.h). The era is the UCX this build compiles
 * against; the protocol tier acts only in that very libucp.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "ucp_map.h"

#include <lane_select/ucs_compat.h>

#include <stdio.h>
#include <string.h>

/* Half the protocol tier's ownership delta (proto_tier.c): egr/multi/bcopy
 * and egr/single/bcopy (and the zcopy pair) take protosel's one line, and
 * UCP would give their tie to the lower protocol id, the multi-fragment
 * one, which pays a fragment header for every message */
#define PSEL_UCP_MULTI_FRAG_DELTA 0.5e-12 /* [s] */

#define PSEL_UCP_MAP_EAGER \
    {"egr/short",        "tag_send", PSEL_UCP_MAP_LINE, "egr/short", \
     PSEL_UCP_WORK_SAME, 0}, \
    {"egr/single/bcopy", "tag_send", PSEL_UCP_MAP_LINE, "egr/bcopy", \
     PSEL_UCP_WORK_SAME, 0}, \
    {"egr/multi/bcopy",  "tag_send", PSEL_UCP_MAP_LINE, "egr/bcopy", \
     PSEL_UCP_WORK_SAME, PSEL_UCP_MULTI_FRAG_DELTA}, \
    {"egr/single/zcopy", "tag_send", PSEL_UCP_MAP_LINE, "egr/zcopy", \
     PSEL_UCP_WORK_SAME, 0}, \
    {"egr/multi/zcopy",  "tag_send", PSEL_UCP_MAP_LINE, "egr/zcopy", \
     PSEL_UCP_WORK_SAME, PSEL_UCP_MULTI_FRAG_DELTA}

/* Active messages, on protosel's active-message lines: eager up to one
 * fragment (beyond it UCP assembles the message in a buffer it allocates,
 * which protosel does not model, so its lines stop there and rendezvous
 * takes over), and the rendezvous lines of tag send */
#define PSEL_UCP_MAP_AM_EAGER \
    {"am/egr/short",        "am_send", PSEL_UCP_MAP_LINE, "am/egr/short", \
     PSEL_UCP_WORK_SAME, 0}, \
    {"am/egr/single/bcopy", "am_send", PSEL_UCP_MAP_LINE, "am/egr/bcopy", \
     PSEL_UCP_WORK_SAME, 0}, \
    {"am/egr/multi/bcopy",  "am_send", PSEL_UCP_MAP_LINE, "am/egr/bcopy", \
     PSEL_UCP_WORK_SAME, PSEL_UCP_MULTI_FRAG_DELTA}, \
    {"am/egr/single/zcopy", "am_send", PSEL_UCP_MAP_LINE, "am/egr/zcopy", \
     PSEL_UCP_WORK_SAME, 0}, \
    {"am/egr/multi/zcopy",  "am_send", PSEL_UCP_MAP_LINE, "am/egr/zcopy", \
     PSEL_UCP_WORK_SAME, PSEL_UCP_MULTI_FRAG_DELTA}

/* Put and get, on protosel's put and get lines: UCP's names in every
 * release from 1.13 */
#define PSEL_UCP_MAP_RMA \
    {"put/offload/short", "put", PSEL_UCP_MAP_LINE, "put/offload/short", \
     PSEL_UCP_WORK_SAME, 0}, \
    {"put/offload/bcopy", "put", PSEL_UCP_MAP_LINE, "put/offload/bcopy", \
     PSEL_UCP_WORK_SAME, 0}, \
    {"put/offload/zcopy", "put", PSEL_UCP_MAP_LINE, "put/offload/zcopy", \
     PSEL_UCP_WORK_SAME, 0}, \
    {"put/am/bcopy",      "put", PSEL_UCP_MAP_LINE, "put/am/bcopy", \
     PSEL_UCP_WORK_SAME, 0}, \
    {"get/bcopy",         "get", PSEL_UCP_MAP_LINE, "get/bcopy", \
     PSEL_UCP_WORK_SAME, 0}, \
    {"get/zcopy",         "get", PSEL_UCP_MAP_LINE, "get/zcopy", \
     PSEL_UCP_WORK_SAME, 0}, \
    {"get/am/bcopy",      "get", PSEL_UCP_MAP_LINE, "get/am/bcopy", \
     PSEL_UCP_WORK_SAME, 0}

/* The rendezvous data protocols: the receiver's fetch, the sender's send
 * after an RTR */
#define PSEL_UCP_MAP_RNDV_DATA \
    {"rndv/get/zcopy",   "rndv_recv", PSEL_UCP_MAP_LINE, "rndv/get", \
     PSEL_UCP_WORK_SAME, 0}, \
    {"rndv/put/zcopy",   "rndv_send", PSEL_UCP_MAP_LINE, "rndv/put", \
     PSEL_UCP_WORK_SAME, 0}, \
    {"rndv/am/bcopy",    "rndv_send", PSEL_UCP_MAP_LINE, "rndv/am", \
     PSEL_UCP_WORK_COPY, 0}

#if !PSEL_UCX_AT_LEAST(1, 14)
/* UCX 1.13: init() fills one caps per protocol and selection; tag/rndv
 * and rndv/rtr are one instance each, costed on the peer's whole table */
static const psel_ucp_map_entry_t psel_ucp_map[] = {
    PSEL_UCP_MAP_EAGER,
    {"tag/rndv", "tag_send",  PSEL_UCP_MAP_RNDV_ALL, NULL, PSEL_UCP_WORK_SAME, 0},
    {"rndv/rtr", "rndv_recv", PSEL_UCP_MAP_RNDV_RTR, NULL, PSEL_UCP_WORK_SAME, 0},
    PSEL_UCP_MAP_RNDV_DATA,
    PSEL_UCP_MAP_AM_EAGER,
    {"am/rndv",  "am_send",   PSEL_UCP_MAP_RNDV_ALL, NULL, PSEL_UCP_WORK_SAME, 0}
};
static const char psel_ucp_map_era_name[] = "1.13";
#elif !PSEL_UCX_AT_LEAST(1, 18)
/* UCX 1.14-1.17: the same init(), ranges with a CPU time; rendezvous by
 * active messages also zero-copy */
static const psel_ucp_map_entry_t psel_ucp_map[] = {
    PSEL_UCP_MAP_EAGER,
    {"tag/rndv", "tag_send",  PSEL_UCP_MAP_RNDV_ALL, NULL, PSEL_UCP_WORK_SAME, 0},
    {"rndv/rtr", "rndv_recv", PSEL_UCP_MAP_RNDV_RTR, NULL, PSEL_UCP_WORK_SAME, 0},
    PSEL_UCP_MAP_RNDV_DATA,
    {"rndv/am/zcopy", "rndv_send", PSEL_UCP_MAP_LINE, "rndv/am",
     PSEL_UCP_WORK_ZCOPY, 0},
    PSEL_UCP_MAP_AM_EAGER,
    {"am/rndv",  "am_send",   PSEL_UCP_MAP_RNDV_ALL, NULL, PSEL_UCP_WORK_SAME, 0},
    PSEL_UCP_MAP_RMA
};
static const char psel_ucp_map_era_name[] = "1.14-1.17";
#else
/* UCX 1.18 on: probe() adds instances; tag/rndv and rndv/rtr add one per
 * protocol the peer may run, each costed on that protocol */
static const psel_ucp_map_entry_t psel_ucp_map[] = {
    PSEL_UCP_MAP_EAGER,
    {"tag/rndv", "tag_send",  PSEL_UCP_MAP_REMOTE, NULL, PSEL_UCP_WORK_SAME, 0},
    {"rndv/rtr", "rndv_recv", PSEL_UCP_MAP_REMOTE, NULL, PSEL_UCP_WORK_SAME, 0},
    PSEL_UCP_MAP_RNDV_DATA,
    {"rndv/am/zcopy", "rndv_send", PSEL_UCP_MAP_LINE, "rndv/am",
     PSEL_UCP_WORK_ZCOPY, 0},
    PSEL_UCP_MAP_AM_EAGER,
    /* 1.22: multi-fragment zero-copy with packet sequence numbers, the
     * same work; it gives the tie to the plain one */
    {"am/egr/multi/zcopy/psn", "am_send", PSEL_UCP_MAP_LINE, "am/egr/zcopy",
     PSEL_UCP_WORK_SAME, 2 * PSEL_UCP_MULTI_FRAG_DELTA},
    {"am/rndv",  "am_send",   PSEL_UCP_MAP_REMOTE, NULL, PSEL_UCP_WORK_SAME, 0},
    PSEL_UCP_MAP_RMA
};
static const char psel_ucp_map_era_name[] = "1.18 and later";
#endif

#define PSEL_UCP_MAP_COUNT (sizeof(psel_ucp_map) / sizeof(psel_ucp_map[0]))

const char *psel_ucp_map_era(void)
{
    return psel_ucp_map_era_name;
}

const psel_ucp_map_entry_t *psel_ucp_map_entries(unsigned *count)
{
    *count = PSEL_UCP_MAP_COUNT;
    return psel_ucp_map;
}

const psel_ucp_map_entry_t *psel_ucp_map_find(const char *ucp_name)
{
    unsigned i;

    for (i = 0; i < PSEL_UCP_MAP_COUNT; ++i) {
        if (!strcmp(psel_ucp_map[i].ucp_name, ucp_name)) {
            return &psel_ucp_map[i];
        }
    }
    return NULL;
}

int psel_ucp_map_same_work(const psel_ucp_map_entry_t *entry,
                           const psel_proto_caps_t *caps)
{
    int copies = !!(caps->flags & PSEL_PROTO_CAP_COPY);

    switch (entry->work) {
    case PSEL_UCP_WORK_COPY:  return copies;
    case PSEL_UCP_WORK_ZCOPY: return !copies;
    default:                  return 1;
    }
}

int psel_ucp_map_stand_in(const psel_proto_t *proto,
                          const psel_proto_caps_t *caps, char *why,
                          size_t max)
{
    /* an active message's rendezvous runs UCP's rendezvous data
     * protocols, as tag send's does: "am/rndv/get" stands where its twin
     * "rndv/get" does */
    const char *name   = !strncmp(proto->name, "am/rndv/", 8) ?
                         psel_proto_lines_name(proto) : proto->name;
    const char *others = NULL;
    unsigned i;

    for (i = 0; i < PSEL_UCP_MAP_COUNT; ++i) {
        if ((psel_ucp_map[i].kind != PSEL_UCP_MAP_LINE) ||
            strcmp(psel_ucp_map[i].psel_name, name)) {
            continue;
        }
        if (psel_ucp_map_same_work(&psel_ucp_map[i], caps)) {
            return 1;
        }
        others = psel_ucp_map[i].ucp_name;
    }
    if (others == NULL) {
        snprintf(why, max, "UCX %s has no protocol that does what "
                 "protosel's %s does", psel_ucp_map_era_name, proto->name);
    } else {
        snprintf(why, max, "UCP's %s %s, protosel's %s over these lanes "
                 "does not: it keeps UCP's own line unless measured through "
                 "UCP (psel_calibrate --ucp)", others,
                 (caps->flags & PSEL_PROTO_CAP_COPY) ?
                 "sends from the user's buffer" : "copies the data", proto->name);
    }
    return 0;
}
