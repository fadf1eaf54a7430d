/**
 * @file address.h
 * The worker address: what a peer needs to know about our transports to
 * select lanes towards us and to connect.
 *
 * Building an address from a resource table:
 *  1. psel_address_select_bootable() keeps, per device, the bootable transport
 *     with the lowest latency.
 *  2. psel_address_entry_from_resource() fills one entry per kept resource,
 *     with the device/iface address bytes the caller got from UCT.
 *  3. psel_address_dedup() drops entries reachable through an entry kept
 *     before them (the caller wraps uct_iface_is_reachable()).
 *  4. psel_address_pack() serialises the entries.
 * The peer calls psel_address_unpack(), which validates every byte, and
 * psel_address_release() when done.
 *
 * @section wire Wire format, version 2
 *
 * All integers are little-endian; floats are IEEE-754 binary32, little-endian.
 * There is no padding.
 *
 * @code
 *   offset  size  field
 *   0       1     magic   = PSEL_ADDRESS_MAGIC (0xa5)
 *   1       1     version = PSEL_ADDRESS_VERSION (2)
 *   2       1     count   = number of entries, 0..PSEL_ADDRESS_MAX_ENTRIES
 *   3       ...   count entries, back to back, then nothing (no trailing bytes)
 *
 *   entry:
 *   0       1     tl_name_len     1..PSEL_NAME_MAX-1
 *   1       1     dev_name_len    1..PSEL_NAME_MAX-1
 *   2       1     dev_addr_len    0..PSEL_ADDRESS_ADDR_MAX
 *   3       1     iface_addr_len  0..PSEL_ADDRESS_ADDR_MAX
 *   4       1     dev_type        psel_address_dev_type_t (0..3)
 *   5       1     priority        device priority, 0..255
 *   6       2     caps            PSEL_ADDRESS_CAP_* bits; unknown bits = 0
 *   8       2     rkey_size       packed rkey size of the MD, bytes
 *   10      4     latency         f32, seconds
 *   14      4     bw_dedicated    f32, bytes/second
 *   18      4     bw_shared       f32, bytes/second
 *   22      4     overhead        f32, seconds
 *   26      4     reg_cost_c      f32, seconds
 *   30      4     reg_cost_m      f32, seconds/byte
 *   34      ...   tl_name bytes, dev_name bytes (no NUL), dev_addr, iface_addr
 * @endcode
 *
 * So an entry costs 34 bytes plus its names and addresses; "tcp" on "lo"
 * with UCX 1.13 takes about 60 bytes.
 *
 * Precision: perf values travel as binary32, a relative error of at most
 * 2^-24 (about 6e-8), far below what any cost model can tell apart; they
 * must be finite and non-negative (sign bit clear) and, when packed, not
 * above FLT_MAX. Names are printable ASCII without blanks (0x21..0x7e).
 * The encoding is canonical: every buffer that unpacks re-packs to the same
 * bytes.
 *
 * Capability flags and device types use their own wire values, not UCT's
 * enums, because those differ between UCX releases.
 */
#ifndef PSEL_LANE_SELECT_ADDRESS_H_
#define PSEL_LANE_SELECT_ADDRESS_H_

#include "resource.h"

#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

#define PSEL_ADDRESS_MAGIC        0xa5u /**< First byte of every address */
/** Wire format version. It also versions every data-path message format
 *  tied to a connection (eager short has no version byte of its own, see
 *  ucp_proto_sel/proto_egr.h): a change to any of them bumps it, so peers
 *  of different builds refuse each other's address at endpoint create
 *  instead of misreading messages. 2: eager headers with a version byte,
 *  rendezvous and wireup little-endian. */
#define PSEL_ADDRESS_VERSION      2u
#define PSEL_ADDRESS_MAX_ENTRIES  128u  /**< Max entries in one address */
#define PSEL_ADDRESS_ADDR_MAX     255u  /**< Max device/iface address bytes */
#define PSEL_ADDRESS_HDR_SIZE     3u    /**< Bytes before the first entry */
#define PSEL_ADDRESS_ENTRY_FIXED  34u   /**< Fixed bytes of one entry */


/** Capability bits carried in an entry (wire values, stable). */
enum {
    PSEL_ADDRESS_CAP_CONNECT_TO_IFACE = 1u << 0,  /**< UCT_IFACE_FLAG_CONNECT_TO_IFACE */
    PSEL_ADDRESS_CAP_CONNECT_TO_EP    = 1u << 1,  /**< UCT_IFACE_FLAG_CONNECT_TO_EP */
    PSEL_ADDRESS_CAP_AM_SHORT         = 1u << 2,  /**< UCT_IFACE_FLAG_AM_SHORT */
    PSEL_ADDRESS_CAP_AM_BCOPY         = 1u << 3,  /**< UCT_IFACE_FLAG_AM_BCOPY */
    PSEL_ADDRESS_CAP_AM_ZCOPY         = 1u << 4,  /**< UCT_IFACE_FLAG_AM_ZCOPY */
    PSEL_ADDRESS_CAP_PUT_SHORT        = 1u << 5,  /**< UCT_IFACE_FLAG_PUT_SHORT */
    PSEL_ADDRESS_CAP_PUT_BCOPY        = 1u << 6,  /**< UCT_IFACE_FLAG_PUT_BCOPY */
    PSEL_ADDRESS_CAP_PUT_ZCOPY        = 1u << 7,  /**< UCT_IFACE_FLAG_PUT_ZCOPY */
    PSEL_ADDRESS_CAP_GET_BCOPY        = 1u << 8,  /**< UCT_IFACE_FLAG_GET_BCOPY */
    PSEL_ADDRESS_CAP_GET_ZCOPY        = 1u << 9,  /**< UCT_IFACE_FLAG_GET_ZCOPY */
    PSEL_ADDRESS_CAP_ERRH_PEER_FAILURE= 1u << 10, /**< UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE */
    PSEL_ADDRESS_CAP_ATOMIC32         = 1u << 11, /**< Any 32-bit device atomic */
    PSEL_ADDRESS_CAP_ATOMIC64         = 1u << 12, /**< Any 64-bit device atomic */
    PSEL_ADDRESS_CAP_ALL              = (1u << 13) - 1 /**< All known bits */
};


/** Device type on the wire (stable values, unlike uct_device_type_t). */
typedef enum psel_address_dev_type {
    PSEL_ADDRESS_DEV_NET  = 0, /**< UCT_DEVICE_TYPE_NET */
    PSEL_ADDRESS_DEV_SHM  = 1, /**< UCT_DEVICE_TYPE_SHM */
    PSEL_ADDRESS_DEV_ACC  = 2, /**< UCT_DEVICE_TYPE_ACC */
    PSEL_ADDRESS_DEV_SELF = 3, /**< UCT_DEVICE_TYPE_SELF */
    PSEL_ADDRESS_DEV_LAST
} psel_address_dev_type_t;


/**
 * One entry of a worker address: a transport on a device, with what the peer
 * needs for lane selection and rndv cost, and the bytes it connects to.
 * Bandwidth is sent as both parts (dedicated, shared) so that the peer applies
 * its own processes-per-node when it computes the effective value.
 */
typedef struct psel_address_entry {
    char                    tl_name[PSEL_NAME_MAX];  /**< Transport, e.g. "tcp" */
    char                    dev_name[PSEL_NAME_MAX]; /**< Device, e.g. "lo" */
    psel_address_dev_type_t dev_type;     /**< Device type */
    uint8_t                 priority;     /**< Device priority (higher wins ties) */
    uint16_t                caps;         /**< PSEL_ADDRESS_CAP_* bits */
    uint16_t                rkey_size;    /**< Packed rkey size of the MD [B] */
    double                  latency;      /**< Latency constant part c [s] */
    double                  bw_dedicated; /**< Dedicated bandwidth [B/s] */
    double                  bw_shared;    /**< Shared bandwidth [B/s] */
    double                  overhead;     /**< Send overhead [s] */
    double                  reg_cost_c;   /**< MD registration cost, fixed [s] */
    double                  reg_cost_m;   /**< MD registration cost, per byte [s/B] */
    uint8_t                 dev_addr_len; /**< Valid bytes in @a dev_addr */
    uint8_t                 iface_addr_len; /**< Valid bytes in @a iface_addr */
    uint8_t                 dev_addr[PSEL_ADDRESS_ADDR_MAX];   /**< uct_device_addr_t bytes */
    uint8_t                 iface_addr[PSEL_ADDRESS_ADDR_MAX]; /**< uct_iface_addr_t bytes */
} psel_address_entry_t;


/** An unpacked worker address. Release with psel_address_release(). */
typedef struct psel_address {
    unsigned              count;   /**< Number of entries */
    psel_address_entry_t *entries; /**< Array of @a count entries, NULL if 0 */
} psel_address_t;


/**
 * Tell whether @a candidate is reachable through @a kept, i.e. whether a peer
 * that connects to @a kept has no use for @a candidate. A live worker wraps
 * uct_iface_is_reachable(iface of kept, candidate->dev_addr,
 * candidate->iface_addr).
 *
 * @param [in] kept       Entry already kept in the address.
 * @param [in] candidate  Entry being considered (same transport name).
 * @param [in] arg        User argument given to psel_address_dedup().
 *
 * @return Nonzero if @a candidate is reachable through @a kept.
 */
typedef int (*psel_address_is_reachable_cb_t)(const psel_address_entry_t *kept,
                                              const psel_address_entry_t *candidate,
                                              void *arg);


/**
 * Convert UCT iface capability flags to PSEL_ADDRESS_CAP_* bits.
 *
 * @param [in] uct_flags    UCT_IFACE_FLAG_* of the iface.
 * @param [in] atomic32     Nonzero if the iface has any 32-bit atomic.
 * @param [in] atomic64     Nonzero if the iface has any 64-bit atomic.
 *
 * @return The wire capability bits.
 */
uint16_t psel_address_caps_from_uct(uint64_t uct_flags, int atomic32,
                                    int atomic64);


/**
 * Choose the resources that go into the worker address: for each device
 * (by device name), the bootable transport with the lowest latency.
 *
 * Bootable means UCT_IFACE_FLAG_CONNECT_TO_IFACE and UCT_IFACE_FLAG_AM_SHORT:
 * a peer can then connect with nothing but this address and send the wireup
 * messages as short AMs. Latency compares latency.c only (the per-ep part m
 * is the same order for all candidates of a device). Ties go to the higher
 * device priority, then the smaller transport name, then the smaller MD name,
 * then the lower table index, so the result is deterministic.
 *
 * The chosen indices are returned sorted by (latency, priority descending,
 * transport name, device name, index), best first, which is the order
 * psel_address_dedup() expects.
 *
 * @param [in]     t        Resource table.
 * @param [out]    idx_out  Indices into @a t->resources, @a *count capacity.
 * @param [in,out] count    In: capacity of @a idx_out. Out: number written
 *                          (0 if no resource is bootable).
 *
 * @return UCS_OK, UCS_ERR_INVALID_PARAM on NULL arguments, or
 *         UCS_ERR_EXCEEDS_LIMIT if the capacity is too small (needs at most
 *         @a t->count). Outputs are untouched on error.
 */
ucs_status_t psel_address_select_bootable(const psel_resource_table_t *t,
                                          unsigned *idx_out, unsigned *count);


/**
 * Fill an address entry from a resource and the address bytes UCT returned
 * for its iface.
 *
 * @param [in]  rsc         Resource.
 * @param [in]  dev_addr    Device address bytes (may be NULL if len is 0).
 * @param [in]  dev_len     Bytes of @a dev_addr, at most PSEL_ADDRESS_ADDR_MAX.
 * @param [in]  iface_addr  Iface address bytes (may be NULL if len is 0).
 * @param [in]  iface_len   Bytes of @a iface_addr, at most PSEL_ADDRESS_ADDR_MAX.
 * @param [out] entry       Filled on success.
 *
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM if a name, length or perf value
 *         cannot be carried on the wire (the entry is then untouched).
 */
ucs_status_t psel_address_entry_from_resource(const psel_resource_t *rsc,
                                              const void *dev_addr,
                                              size_t dev_len,
                                              const void *iface_addr,
                                              size_t iface_len,
                                              psel_address_entry_t *entry);


/**
 * Drop every entry that is reachable through an entry kept before it.
 *
 * Entries are walked in array order; entry i is kept unless the callback says
 * it is reachable through some kept entry j < i with the same transport name
 * (different transports never replace each other, since their addresses are
 * not comparable). Pass the entries best first (the order of
 * psel_address_select_bootable()) so the best one of each network survives.
 * Kept entries stay in their relative order, compacted at the front.
 *
 * @param [in,out] entries  Entries; compacted in place.
 * @param [in,out] n        In: number of entries. Out: number kept.
 * @param [in]     cb       Reachability callback.
 * @param [in]     arg      Passed to @a cb.
 *
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM on NULL arguments.
 */
ucs_status_t psel_address_dedup(psel_address_entry_t *entries, unsigned *n,
                                psel_address_is_reachable_cb_t cb, void *arg);


/**
 * Serialise entries into the wire format described above.
 *
 * @param [in]  entries  Entries to pack.
 * @param [in]  n        Number of entries, at most PSEL_ADDRESS_MAX_ENTRIES.
 * @param [out] buf      Allocated buffer; free it with free().
 * @param [out] len      Bytes in @a buf.
 *
 * @return UCS_OK, UCS_ERR_INVALID_PARAM if an entry cannot be represented
 *         (bad name, length, caps, device type, or perf value), or
 *         UCS_ERR_NO_MEMORY. Outputs are untouched on error.
 */
ucs_status_t psel_address_pack(const psel_address_entry_t *entries,
                               unsigned n, void **buf, size_t *len);


/**
 * Parse and validate a packed worker address from outside. Every count,
 * length, name, enum and perf value is checked; anything inconsistent is
 * logged as "worker address: <what> at offset <n>" and rejected.
 *
 * @param [in]  buf  Packed address (may be NULL only if @a len is 0).
 * @param [in]  len  Bytes in @a buf.
 * @param [out] out  Filled on success; release with psel_address_release().
 *
 * @return UCS_OK, UCS_ERR_INVALID_PARAM on malformed input (output
 *         untouched), or UCS_ERR_NO_MEMORY.
 */
ucs_status_t psel_address_unpack(const void *buf, size_t len,
                                 psel_address_t *out);


/**
 * Free what psel_address_unpack() allocated and zero @a addr. Safe on a
 * zeroed struct and on NULL.
 *
 * @param [in,out] addr  Address to release.
 */
void psel_address_release(psel_address_t *addr);

/**
 * The resource a peer's address entry describes, for lane selection: the
 * names, device type, perf attributes and capabilities it carries; what the
 * address does not carry (size limits, memory types) is left zero.
 *
 * @param [in]  entry  A validated entry (from psel_address_unpack()).
 * @param [out] rsc    The remote resource.
 */
void psel_address_entry_to_resource(const psel_address_entry_t *entry,
                                    psel_resource_t *rsc);

#endif
