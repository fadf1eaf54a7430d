/**
 * @file proto_common.h
 * Building blocks shared by the protocol definitions: lane-set sums, the
 * eager and rendezvous cost formulas of the design seed, and the checks of
 * which buffer types a protocol can serve.
 *
 * The seed formulas, with bw = sum of the lanes' bandwidths, cost/gro = sum
 * over the lanes' memory domains of the registration cost and per-byte
 * growth, L = latency and o = o_send + o_recv (of the eager lane for eager,
 * of the control (am) lane for rendezvous):
 *   eager zcopy: ecost + x·egro + x/ebw + (L + o)
 *                where egro also holds the receiver's copy-out, 1/bcopy_bw:
 *                an eager message lands in a transport buffer and is copied
 *                to the user's (UCX calls it "zero-copy copy-out")
 *   rendezvous:  d·((1+rrc)·(rcost + x·rgro) + 4·L + 3·o + x/rbw)
 *                where 4·L is 3 latencies of the control lane and one of
 *                the data lanes (the same when one lane does both)
 *                rrc = 0 for rndv/am, 1 for rndv/get and rndv/put (the
 *                receiver registers too); d is applied by the engine.
 *                plus the send overhead of the first data operation.
 *                For rndv/am, rgro also holds the receiver's copy-out, as
 *                for eager: AM data always lands in a transport buffer.
 * These are the single lines. The same terms, each on the host that
 * spends it, make the stages whose envelope is the multi line
 * (psel_proto_stages_t); the latencies are in single only.
 */
#ifndef PSEL_UCP_PROTO_SEL_PROTO_COMMON_H_
#define PSEL_UCP_PROTO_SEL_PROTO_COMMON_H_

#include "proto.h"
#include "proto_egr.h"
#include "proto_rndv_int.h"

#define PSEL_EAGER_HDR        PSEL_EAGER_FIRST_HDR /**< The first
                                       fragment's header, the largest */
#define PSEL_RNDV_DATA_HDR    sizeof(psel_rndv_data_hdr_t) /**< Header of
                                       an rndv/am data fragment */
#define PSEL_FRAG_UNLIMITED   (SIZE_MAX / 2) /**< Larger fragments: no split */

/** Private config of every built-in protocol: its lanes and fragment size. */
typedef struct psel_proto_lanes_priv {
    unsigned num_lanes;                 /**< Data lanes */
    uint8_t  lanes[PSEL_MAX_LANES];     /**< Lane indices */
    double   shares[PSEL_MAX_LANES];    /**< Byte share of each data lane */
    size_t   frag_size;                 /**< Max payload per operation */
    uint8_t  ctrl_lane;                 /**< Lane of control messages */
    uint8_t  zcopy;                     /**< rndv/am: zcopy (1) or bcopy (0) */
    const struct psel_rndv_mode_ops *rndv; /**< Rendezvous: the mode */
} psel_proto_lanes_priv_t;

/** Lane-set facts that costs are built from. */
typedef struct psel_lane_set_perf {
    double            bandwidth;   /**< Summed bandwidth [B/s] */
    ucs_linear_func_t reg_cost;    /**< Summed registration cost */
    psel_op_cost_t    op[PSEL_OP_CLASS_LAST]; /**< Per operation class, the
                                        largest latency, send_pre, send_post
                                        and recv of the lanes (UCX's
                                        uct_iface_estimate_perf; a lane
                                        without them: its latency and
                                        overheads for every class) */
} psel_lane_set_perf_t;


/**
 * One message of a protocol in UCX 1.13's three stages
 * (ucp_proto_common_init_caps, proto_init.c): the sender's CPU, the wire,
 * the receiver's CPU; and the latencies, which only a message alone waits
 * for.
 *  - single (one message alone) = latency + send + wire + recv, plus, when
 *    messages are cut in fragments, frag_send + frag_recv per fragment;
 *  - multi (per message when they stream) = the envelope of the stages as
 *    the stream sees them: send + send_post + frag_send per fragment,
 *    wire, recv + recv_post + frag_recv per fragment. A stream overlaps
 *    the latency and each host's stage with the other's; the CPU after a
 *    post (doorbell, completion) delays the next message, not this one.
 * Each host's CPU goes to its own stage: a rendezvous receiver's
 * registration and copy-out are in recv, the sender's in send.
 */
typedef struct psel_proto_stages {
    double            latency;   /**< Wire latencies [s]: single only */
    ucs_linear_func_t send;      /**< The sender's CPU: copy-in or
                                      registration, CPU before its posts
                                      and of the messages it handles */
    double            send_post; /**< The sender's CPU after its posts [s]:
                                      multi only */
    ucs_linear_func_t wire;      /**< x / bandwidth */
    ucs_linear_func_t recv;      /**< The receiver's CPU: copy-out or
                                      registration, receive overhead, CPU
                                      before its own posts */
    double            recv_post; /**< The receiver's CPU after its posts [s]:
                                      multi only */
    double            frag_send; /**< Each fragment after the first: the
                                      sender's CPU (send_pre + send_post of
                                      its data operation), when it posts
                                      the data [s] */
    double            frag_recv; /**< The same for the receiver, when it
                                      posts the data (rndv/get's reads) [s] */
} psel_proto_stages_t;

/**
 * Registration cost of one lane's memory domain as protocols pay it: nothing
 * if the MD does not register memory; else the registration-cache lookup
 * (UCX_PSEL_RCACHE_OVERHEAD), or the MD's full cost when that is "inf".
 */
ucs_linear_func_t psel_proto_reg_cost(const psel_config_t *config,
                                      const psel_lane_t *lane);

/**
 * Take the lanes of a role that have @a lane_caps (best first, at most
 * @a max_lanes) and sum them: bandwidth summed, registration summed per
 * memory domain, each latency and CPU time the largest of the lanes (lanes
 * run in parallel, each with a byte share in proportion to its bandwidth).
 *
 * @param [out] subset    The lanes taken, with their shares.
 * @param [out] perf      Their sums.
 *
 * @return UCS_OK, or UCS_ERR_UNSUPPORTED with the reason in caps_out->desc.
 */
ucs_status_t psel_proto_lane_set(const psel_proto_init_params_t *params,
                                 psel_lane_role_t role, uint32_t lane_caps,
                                 unsigned max_lanes, psel_lane_set_t *subset,
                                 psel_lane_set_perf_t *perf,
                                 psel_proto_caps_t *caps_out);

/**
 * The lane of a short protocol (the payload written into the transport as
 * the operation is posted): one contiguous host buffer only, and the best
 * lane of @a role with @a lane_cap, as psel_proto_lane_set().
 */
ucs_status_t psel_proto_short_lane(const psel_proto_init_params_t *params,
                                   psel_lane_role_t role, uint32_t lane_cap,
                                   psel_lane_set_t *set,
                                   psel_lane_set_perf_t *perf,
                                   psel_proto_caps_t *caps_out);

/** Fill caps->desc with the lanes and shares of @a set and caps->priv with
 *  their indices; flag PSEL_PROTO_CAP_COPY unless @a zcopy. */
void psel_proto_set_lanes(const psel_lane_set_t *set, const psel_lane_t *ctrl,
                          size_t frag_size, int zcopy, psel_proto_caps_t *caps);

/** Say why a protocol does not apply; returns UCS_ERR_UNSUPPORTED. */
ucs_status_t psel_proto_unsupported(psel_proto_caps_t *caps, const char *fmt,
                                    ...) UCS_F_PRINTF(2, 3);

/** Does the buffer type allow copying by the CPU (pack/unpack)? Host
 *  memory and what the installed UCX counts as CPU-accessible
 *  (UCS_MEMORY_TYPES_CPU_ACCESSIBLE). */
int psel_proto_buffer_is_host(const psel_proto_init_params_t *params);

/**
 * The time to copy x bytes of the buffer between its memory and host
 * memory (pack or unpack): memcpy at UCX_PSEL_BCOPY_BW for host memory, the
 * memory-type copy engine of the lanes (lane.h) for the others.
 *
 * @param [in]  params   Buffer type and lanes.
 * @param [in]  staging  Nonzero: a rendezvous staging copy (the engine with
 *                       the best bandwidth); zero: a pack/unpack (the one
 *                       with the lowest latency).
 * @param [out] copy     c [s] + m [s/B].
 * @param [out] engine   The engine's name ("memcpy", "gdr_copy/cuda"), or
 *                       NULL if not wanted.
 * @param [out] caps     On failure: the reason.
 *
 * @return UCS_OK, or UCS_ERR_UNSUPPORTED when no transport copies that
 *         memory type.
 */
ucs_status_t psel_proto_copy_time(const psel_proto_init_params_t *params,
                                  int staging, ucs_linear_func_t *copy,
                                  const char **engine, psel_proto_caps_t *caps);

/**
 * Can every lane of @a set register the buffer for zero-copy (memory type
 * and, for iov, sg_count within the max_iov of the operation @a lane_cap
 * names: PSEL_LANE_CAP_AM_ZCOPY, _GET_ZCOPY or _PUT_ZCOPY)? Generic
 * datatypes never can.
 */
ucs_status_t psel_proto_check_zcopy(const psel_proto_init_params_t *params,
                                    const psel_lane_set_t *set,
                                    uint32_t lane_cap, psel_proto_caps_t *caps);

/**
 * The sizes every lane of @a set takes by the operation @a lane_cap names
 * (PSEL_LANE_CAP_AM_BCOPY, _AM_ZCOPY, _GET_ZCOPY or _PUT_ZCOPY), each
 * operation carrying @a hdr bytes of protocol header besides the payload.
 *
 * @param [out] min_length  The largest min_zcopy of the lanes (0 for
 *                          bcopy): a smaller message cannot go on them all.
 * @param [out] frag_size   The smallest max_zcopy (max_bcopy) less
 *                          @a hdr: the fragment every lane takes.
 *
 * @return UCS_OK, or UCS_ERR_UNSUPPORTED when a lane's largest operation
 *         holds no payload after the header.
 */
ucs_status_t psel_proto_frag_sizes(const psel_lane_set_t *set,
                                   uint32_t lane_cap, size_t hdr,
                                   size_t *min_length, size_t *frag_size,
                                   psel_proto_caps_t *caps);

/**
 * Apply a forced threshold from the config to caps: "auto" leaves it to the
 * cost model, "inf" makes the protocol not apply.
 */
ucs_status_t psel_proto_apply_thresh(size_t thresh, const char *var_name,
                                     unsigned priority, psel_proto_caps_t *caps);

/**
 * Add the perf ranges of one size range to @a caps from a message's stages
 * (psel_proto_stages_t): single their sum, multi their envelope, one range
 * per stage that paces the stream (psel_perf_envelope).
 *
 * @param [in]  max_length   Last size of the range; it starts after the
 *                           previous range (or at caps->min_length).
 * @param [in]  stages       One message.
 * @param [in]  frag_size    Fragment payload: messages of the range are
 *                           cut in fragments of that size, each after the
 *                           first costing frag_send + frag_recv; at least
 *                           PSEL_FRAG_UNLIMITED: one fragment.
 */
void psel_proto_add_range(psel_proto_caps_t *caps, size_t max_length,
                          const psel_proto_stages_t *stages, size_t frag_size);

/**
 * One active message of an operation class, in UCX's stages: the latency
 * (single only), the sender's CPU before its post (then what it spends on
 * each byte: @a send) and after it, the wire, the receiver's CPU (then its
 * per-byte work: @a recv); each fragment after the first costs the sender
 * its send_pre + send_post again.
 */
void psel_proto_am_stages(const psel_lane_set_perf_t *perf, psel_op_class_t op,
                          ucs_linear_func_t send, ucs_linear_func_t recv,
                          psel_proto_stages_t *stages);

/**
 * What a copy-in copy-out protocol over active-message bcopy works with:
 * the copy's line (memcpy, or the buffer's memory-type copy engine), the
 * am_bw lane with its costs, and the payload of a fragment after a header
 * of @a hdr_len bytes. UCS_ERR_UNSUPPORTED with the reason in @a caps.
 */
ucs_status_t psel_proto_am_bcopy_setup(const psel_proto_init_params_t *params,
                                       size_t hdr_len, ucs_linear_func_t *copy,
                                       psel_lane_set_t *set,
                                       psel_lane_set_perf_t *perf,
                                       size_t *frag_size,
                                       psel_proto_caps_t *caps);

/**
 * The ranges of a protocol that sends in fragments of @a frag_size, up to
 * every size: one operation up to @a frag_size (no fragment charge), then
 * each fragment after the first costing its CPU again
 * (psel_proto_add_range).
 */
void psel_proto_add_frag_ranges(psel_proto_caps_t *caps,
                                const psel_proto_stages_t *stages,
                                size_t frag_size);

/**
 * The stages of a rendezvous message apart from its data's registration,
 * copies and wire time: the latencies (3 control messages, then the data),
 * each host's CPU for the control messages (they go sender -> receiver ->
 * sender -> receiver), and the data operations' CPU on the host that posts
 * them (the first one's send_pre in the message, every further fragment's
 * send_pre + send_post as frag_send or frag_recv).
 *
 * @param [in]  ctrl            The control (am) lane's costs; bcopy class.
 * @param [in]  data            The data lanes' costs of the class the data
 *                              goes by.
 * @param [in]  receiver_posts  Nonzero if the receiver posts the data
 *                              operations (rndv/get), else the sender.
 * @param [out] stages          Filled; the caller adds registration,
 *                              copies and the wire.
 */
void psel_proto_rndv_stages(const psel_lane_set_perf_t *ctrl,
                            const psel_op_cost_t *data, int receiver_posts,
                            psel_proto_stages_t *stages);

/**
 * Rendezvous caps of the seed formula: RTS/RTR/ATS-FIN on the am lane, data
 * over the lanes of @a role.
 *
 * @param [in]  params     Init params.
 * @param [in]  role       Data lane role (AM_BW or RMA_BW).
 * @param [in]  lane_caps  Capability every data lane needs.
 * @param [in]  rrc        0 if only the sender registers, 1 if both do.
 * @param [in]  zcopy      Nonzero if the data lanes send from registered
 *                         memory (registration cost), zero for bcopy.
 * @param [in]  copies     CPU copies of each byte (UCX_PSEL_BCOPY_BW each):
 *                         1 for AM zcopy (the receiver's copy-out), 2 for
 *                         AM bcopy, 0 for RMA.
 * @param [in]  ops        The mode, kept in the private config.
 * @param [out] caps       Filled.
 */
ucs_status_t psel_proto_rndv_init(const psel_proto_init_params_t *params,
                                  psel_lane_role_t role, uint32_t lane_caps,
                                  unsigned rrc, int zcopy, unsigned copies,
                                  const struct psel_rndv_mode_ops *ops,
                                  psel_proto_caps_t *caps);

#endif
