/**
 * @file ucp_map.h
 * Which of protosel's cost lines each of stock UCP's protocols takes: one
 * table per era of UCP's protocol API, the era of the UCX this build
 * compiles against (docs/runtime-library.md). Free of UCP's internal types,
 * so that psel_info --ucp and the config tier apply the same rule as the
 * protocol tier: a line measured on one mechanism never stands in for a
 * UCP protocol that works another way.
 */
#ifndef PSEL_UCX_RUNTIME_UCP_MAP_H_
#define PSEL_UCX_RUNTIME_UCP_MAP_H_

#include <ucp_proto_sel/proto.h>

#include <stddef.h>


/** What a UCP protocol's new lines are made of. */
typedef enum {
    /** One protosel protocol's lines (psel_ucp_map_entry_t::psel_name). */
    PSEL_UCP_MAP_LINE,
    /** The envelope of every protosel rendezvous, with the rendezvous
     *  bias: tag/rndv where UCP makes one instance of it per selection
     *  (UCX 1.13-1.17). */
    PSEL_UCP_MAP_RNDV_ALL,
    /** The envelope of the rendezvous that send after an RTR (am, put):
     *  rndv/rtr where UCP makes one instance of it (UCX 1.13-1.17). */
    PSEL_UCP_MAP_RNDV_RTR,
    /** The lines of the rendezvous scheme its remote protocol runs:
     *  tag/rndv and rndv/rtr from UCX 1.18 on, where UCP adds one instance
     *  per protocol the peer may select. */
    PSEL_UCP_MAP_REMOTE
} psel_ucp_map_kind_t;


/** How a UCP protocol moves the data, for the lines that may stand in for
 *  it when none was measured through UCP (psel_calibrate --ucp). */
typedef enum {
    /** As protosel's protocol of that name does, whatever the lanes. */
    PSEL_UCP_WORK_SAME,
    /** The CPU copies it through transport buffers: protosel's line only
     *  where protosel's protocol copies too (PSEL_PROTO_CAP_COPY). */
    PSEL_UCP_WORK_COPY,
    /** From the user's registered buffer: protosel's line only where
     *  protosel's protocol does not copy. */
    PSEL_UCP_WORK_ZCOPY
} psel_ucp_work_t;


/** One UCP protocol of the era. */
typedef struct psel_ucp_map_entry {
    const char          *ucp_name;  /**< UCP's protocol name */
    const char          *op_name;   /**< UCP's name of the operation it
                                         serves (ucp_operation_names) */
    psel_ucp_map_kind_t  kind;      /**< What its lines are made of */
    const char          *psel_name; /**< protosel's protocol, for
                                         PSEL_UCP_MAP_LINE */
    psel_ucp_work_t      work;      /**< How it moves the data */
    double               extra;     /**< [s] added to its lines (a
                                         multi-fragment variant's tie) */
} psel_ucp_map_entry_t;


/** @return The era of UCP's protocol API this build maps ("1.13"). */
const char *psel_ucp_map_era(void);

/**
 * The mapping of this build's era.
 *
 * @param [out] count  Number of entries.
 *
 * @return The entries.
 */
const psel_ucp_map_entry_t *psel_ucp_map_entries(unsigned *count);

/** @return The entry of UCP's protocol @a ucp_name, or NULL: not mapped. */
const psel_ucp_map_entry_t *psel_ucp_map_find(const char *ucp_name);

/**
 * Whether protosel's line of @a proto (its own data path's or its
 * attributes', not measured through UCP) describes the work of the UCP
 * protocol @a entry maps it to.
 *
 * @param [in] entry  A PSEL_UCP_MAP_LINE entry naming @a caps' protocol.
 * @param [in] caps   protosel's caps of it over the lanes in question.
 *
 * @return Nonzero if it does.
 */
int psel_ucp_map_same_work(const psel_ucp_map_entry_t *entry,
                           const psel_proto_caps_t *caps);

/**
 * The filter of a selection for stock UCP (psel_select_t::ucp_filter):
 * protosel's line of @a proto stands in for UCP only where a UCP protocol
 * of this era is mapped to it and does the same work.
 *
 * @param [in]  proto  protosel's protocol.
 * @param [in]  caps   Its caps over the lanes in question.
 * @param [out] why    Why not, when not.
 * @param [in]  max    Size of @a why.
 *
 * @return Nonzero if it stands in.
 */
int psel_ucp_map_stand_in(const psel_proto_t *proto,
                          const psel_proto_caps_t *caps, char *why,
                          size_t max);

#endif
