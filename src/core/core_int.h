/**
 * @file core_int.h
 * Internal structures of the data path, shared by context.c, worker.c,
 * ep.c and request.c. Not installed.
 */
#ifndef PSEL_CORE_CORE_INT_H_
#define PSEL_CORE_CORE_INT_H_

#include "psel_core.h"
#include "tag_match.h"
#include "wireup.h"
#include "rndv.h"

#include <ucp_proto_sel/proto_egr.h>
#include <ucp_proto_sel/proto_rndv.h>
#include <lane_select/address.h>
#include <lane_select/resource_table.h>
#include <ucp_proto_sel/ep_config.h>
#include <ucs/datastruct/list.h>
#include <ucs/datastruct/mpool.h>
#include <uct/api/uct.h>
#include <lane_select/clock.h>

#define PSEL_WORKER_MAX_IFACES  PSEL_PROTO_MAX_IFACES /**< Ifaces one
                                                           worker opens */
#define PSEL_WORKER_MAX_MDS     16  /**< Memory domains one worker opens */
#define PSEL_PENDING_PER_PROGRESS 64 /**< Pending sends retried per call */
#define PSEL_WORKER_MAX_USED    64  /**< Rows of protocol usage kept */
#define PSEL_KEEPALIVE_PERIOD   4096 /**< Progress calls per look at the
                                          clock for keepalive */
#define PSEL_IDLE_POLL_PERIOD   64  /**< Progress calls per poll of an idle
                                         iface that has no event fd */


/** How often a protocol ran for one row of a selection table. */
typedef struct psel_used_row {
    const psel_proto_t *proto;      /**< The protocol */
    size_t              row_start;  /**< The table row it was selected for */
    size_t              row_end;
    size_t              min_size;   /**< Smallest and largest size sent */
    size_t              max_size;
    uint64_t            count;      /**< Messages */
} psel_used_row_t;


struct psel_context {
    psel_config_t         config;     /**< UCX_PSEL_* */
    struct psel_calib    *calib;      /**< Measured cost lines, or NULL */
    psel_resource_table_t resources;  /**< This machine, filtered */
    size_t                est_num_eps; /**< The application's estimate of
                                            endpoints per process (0: none) */
};


/** One opened iface: a resource of the context. */
typedef struct psel_worker_iface {
    psel_worker_h    worker;      /**< Owner */
    unsigned         rsc_index;   /**< Index in the context's resources */
    unsigned         md_index;    /**< Index in the worker's mds */
    uct_iface_h      iface;       /**< The iface */
    uct_iface_attr_t attr;        /**< Its attributes */
    int              active;      /**< Polled on every progress call (a
                                       lane uses it, or a message came in) */
    unsigned         num_eps;     /**< UCT endpoints of ours on it (lanes,
                                       extra and bootstrap endpoints) */
    int              event_fd;    /**< While idle: watched by the async
                                       thread for arrivals; -1 if the iface
                                       has no event fd (then it is polled
                                       every PSEL_IDLE_POLL_PERIOD calls) */
    volatile int     woken;       /**< Set by the async thread: a message
                                       arrived on this idle iface */
    uint8_t          dev_addr[255];   /**< Device address */
    uint8_t          iface_addr[255]; /**< Iface address */
} psel_worker_iface_t;


/**
 * Temporal slip of a streaming receiver (UCX_PSEL_RX_SLIP). A receiver that
 * polls the slot its sender is writing makes the two CPUs trade that cache
 * line on every message; the sender, which does more per message, slows
 * down. Once messages arrive with no send of ours between them, the first
 * progress call that finds nothing waits @a duration, so the sender fills
 * the next slots undisturbed and the receiver takes them in a burst. A
 * worker that sends between its receives never waits (ping-pong latency is
 * untouched); a burst from many peers does arm it (no sender id in the
 * short header). docs/data-path.md, "A streaming receiver slips".
 */
typedef struct psel_rx_slip {
    double   duration;      /**< Seconds; 0: off */
    uint64_t arrivals;      /**< Whole eager messages that arrived */
    uint64_t sends;         /**< Tag sends the user posted */
    uint64_t seen_arrivals; /**< @a arrivals and @a sends at the last */
    uint64_t seen_sends;    /**< progress call that found arrivals */
    int      armed;         /**< Those arrivals streamed: wait at the next
                                 call that finds nothing */
    uint64_t count;         /**< Waits so far */
} psel_rx_slip_t;


struct psel_worker {
    psel_context_h        context;
    ucs_async_context_t  *async;
    uct_worker_h          uct_worker;
    uct_component_h      *components;
    unsigned              num_components;
    unsigned              num_mds;
    uct_md_h              mds[PSEL_WORKER_MAX_MDS];
    char                  md_names[PSEL_WORKER_MAX_MDS][PSEL_NAME_MAX];
    uct_component_h       md_components[PSEL_WORKER_MAX_MDS]; /**< Of each
                                                 memory domain */
    unsigned              num_ifaces;
    psel_worker_iface_t   ifaces[PSEL_WORKER_MAX_IFACES];
    unsigned              num_polled_idle; /**< Idle ifaces without an
                                                event fd */
    unsigned              progress_calls;  /**< For polling those */
    volatile int          idle_woken;      /**< Some iface->woken is set */
    psel_resource_table_t local;      /**< Resources of the opened ifaces,
                                           in iface order: lane selection's
                                           local table */
    uint64_t              uuid;       /**< Random; sender ids derive from it */
    uint64_t              next_ep_id;
    psel_tm_t             tm;         /**< Receive-side tag matching */
    int                   count_used; /**< UCX_PSEL_PROTO_INFO=used: count
                                           what each send ran */
    unsigned              num_used;   /**< Rows in @a used */
    psel_used_row_t       used[PSEL_WORKER_MAX_USED]; /**< Protocols that ran */
    const psel_select_elem_t *used_last_elem; /**< The last send's row... */
    psel_used_row_t      *used_last_row;  /**< ... and its count */
    ucs_list_link_t       pending_eps; /**< Endpoints with sends waiting
                                            (psel_ep::pending), served
                                            round robin */
    ucs_mpool_t           request_mp;   /**< Requests (libucs memory pool) */
    ucs_list_link_t       eps;          /**< Every endpoint, the user's and
                                             those wireup created */
    ucs_list_link_t       wireup_in;    /**< Wireup messages to process */
    psel_rndv_worker_t    rndv;         /**< Rendezvous requests (rndv.c) */
    psel_proto_worker_t   proto;        /**< What protocols see of it, with
                                             core's callbacks (rndv.c) */
    unsigned              wireup_out;   /**< Wireup messages waiting for a
                                             lane: endpoints' and farewells */
    ucs_list_link_t       farewells;    /**< psel_wireup_farewell_t */
    unsigned              num_flushing; /**< Flush requests not complete */
    unsigned              num_failed_eps; /**< Failed, not handled yet */
    unsigned              num_lingering_eps; /**< Internal ones waiting for
                                                  their linger_until */
    unsigned              keepalive_calls; /**< Progress calls, for keepalive */
    psel_rx_slip_t        rx_slip;         /**< UCX_PSEL_RX_SLIP */
    double                keepalive_next;  /**< When to check peers next */
};


/** A wireup CLOSE that found its endpoint's bootstrap lane busy when the
 *  endpoint went: sent over a UCT endpoint of its own, which carries
 *  nothing else and goes once the message is out (wireup.c). */
typedef struct psel_wireup_farewell {
    ucs_list_link_t list;       /**< In worker->farewells */
    uct_ep_h        uct_ep;     /**< To the peer's bootstrap iface */
    unsigned        iface;      /**< Our iface of @a uct_ep */
    int             sent;       /**< The message is out; flushing */
    double          deadline;   /**< Give up then (psel_time_sec) */
    size_t          length;
    uint8_t         msg[];
} psel_wireup_farewell_t;

/** A wireup message received, processed at the next progress call. */
typedef struct psel_wireup_msg {
    ucs_list_link_t list;
    size_t          length;
    uint8_t         data[];
} psel_wireup_msg_t;


/**
 * Sends that egr/short takes without a lookup, as UCP's
 * ucp_tag_send_inline() below max_eager_short: filled from the first row
 * of the endpoint's table by its first send of the flavour.
 */
typedef struct {
    size_t                    limit; /**< Sizes below it; 0: no such row */
    const psel_select_elem_t *elem;  /**< The row (counted as used) */
    uint8_t                   lane;  /**< Where egr/short sends */
    uint8_t                   known; /**< The table was looked at */
} psel_ep_short_path_t;


struct psel_ep {
    /* what every send reads, first: one or two cache lines */
    psel_worker_h         worker;
    uint64_t              next_msg_id;
    ucs_list_link_t       pending;      /**< Its sends waiting for the
                                             transport or for wireup, in
                                             send order */
    ucs_status_t          status;       /**< UCS_OK, or why the peer failed:
                                             every request fails with it */
    uint32_t              p2p_lanes;    /**< Lanes connected ep to ep */
    uint32_t              p2p_connected;/**< Of those, connected */
    unsigned              cfg_index;    /**< Bumped when the config changes */
    unsigned              num_sends;    /**< Send requests not complete */
    uint64_t              id;           /**< Sender id in our messages */
    psel_ep_short_path_t  short_path[2];/**< Per send flavour
                                             (PSEL_SEND_FLAG_STREAM) */
    psel_proto_ep_t       proto;        /**< What protocols see of it:
                                             its UCT endpoints and lanes */
    psel_ep_config_t      config;       /**< Lanes and selection tables */
    psel_resource_table_t remote;       /**< The peer's entries, as resources */
    psel_address_t        address;      /**< The peer's unpacked address */
    ucs_list_link_t       list;         /**< In worker->eps */
    ucs_list_link_t       pending_link; /**< In worker->pending_eps */
    int                   pending_scheduled; /**< In worker->pending_eps */
    int                   failure_handled; /**< Requests failed already */
    int                   destroying;   /**< psel_ep_destroy() ran: out of
                                             worker->eps, its requests
                                             failed; nothing queues on it */
    unsigned              holds;        /**< Loops of the worker that run
                                             callbacks on it: its memory
                                             stays until the last lets go
                                             (psel_ep_hold()) */
    ucs_list_link_t       flushes;      /**< Flush requests, in order */
    int                   internal;     /**< Created by wireup for a peer
                                             that connected to us; becomes
                                             the user's on psel_ep_create() */
    double                linger_until; /**< Internal, its peer force-closed:
                                             destroyed then, not at once
                                             (wireup.c: why); else 0 */
    int                   close_forced; /**< psel_ep_close_nb(FORCE): its
                                             CLOSE says so */
    void                 *peer_address; /**< The peer's packed address */
    size_t                peer_address_length;
    uint64_t              peer_uuid;    /**< Peer worker, 0 until wireup */
    uint64_t              remote_id;    /**< Peer's endpoint id: messages
                                             that need a reply go to it;
                                             0 until wireup */
    uct_ep_h              bootstrap;    /**< Carries wireup messages */
    uct_ep_h              aux_ep;       /**< Bootstrap of our own when no
                                             lane connects to an iface */
    unsigned              aux_iface;    /**< Our iface of @a aux_ep */
    uint8_t               bootstrap_local;  /**< Our iface and the peer's
                                             address entry of @a bootstrap */
    uint8_t               bootstrap_remote;
    unsigned              num_extra;    /**< Peer's ep-to-ep lanes that no
                                             lane of ours pairs with */
    uct_ep_h              extra_eps[PSEL_MAX_LANES];
    uint8_t               extra_key[PSEL_MAX_LANES][3]; /**< Their (peer
                                             iface, our iface, path) */
    void                 *wireup_msg;   /**< Waiting for the bootstrap lane */
    size_t                wireup_msg_length;
    int                   rndv_announced; /**< A lane-less wireup REQUEST
                                             told the peer our id (rndv.c) */
};

/** Every ep-to-ep lane is connected: the endpoint can send. */
static inline int psel_ep_is_ready(psel_ep_h ep)
{
    return ep->p2p_connected == ep->p2p_lanes;
}

/** The selection a send of PSEL_SEND_FLAG_* @a flags looks its protocol up
 *  in: the streaming one (multi cost) for streamed sends. */
static inline psel_select_t *psel_ep_send_selection(psel_ep_h ep,
                                                    unsigned flags)
{
    return (flags & PSEL_SEND_FLAG_STREAM) ? &ep->config.stream :
                                             &ep->config.select;
}

/** Do lanes on this iface connect endpoint to endpoint (the transport
 *  cannot connect to an iface, or UCX_PSEL_WIREUP_P2P_TLS names it)? */
int psel_worker_iface_is_p2p(psel_worker_h worker, unsigned iface_index);

/**
 * Live reachability, the lane engine's callback: the same transport, UCT
 * says our iface @a local reaches the peer's entry @a remote, and for tcp
 * the kernel's route to the entry's address leaves from our device (route.h;
 * where the route cannot be looked up, UCT's answer stands).
 *
 * @param [in] arg     The endpoint (@a worker and @a address are used).
 * @param [in] local   Index of our iface (and of its resource).
 * @param [in] remote  Index of the peer's address entry.
 *
 * @return Nonzero if the pair can be a lane.
 */
int psel_ep_is_reachable(void *arg, unsigned local, unsigned remote);

/** A UCT endpoint from our iface @a local to the peer's iface of entry
 *  @a remote of @a ep's address (the iface counts it). */
ucs_status_t psel_ep_connect_to_iface(psel_ep_h ep, unsigned local,
                                      unsigned remote, uct_ep_h *uct_ep_p);

/** A UCT endpoint on our iface @a local, for wireup to connect ep to ep. */
ucs_status_t psel_ep_create_unconnected(psel_ep_h ep, unsigned local,
                                        uct_ep_h *uct_ep_p);

/** Create an endpoint; @a internal for those wireup creates. */
ucs_status_t psel_ep_create_common(psel_worker_h worker, const void *address,
                                   size_t length, int internal,
                                   psel_ep_h *ep_p);


typedef enum {
    PSEL_REQUEST_SEND,
    PSEL_REQUEST_RECV,
    PSEL_REQUEST_FLUSH   /**< Endpoint flush, or close when @a close */
} psel_request_type_t;


/** State of a flush (or close) request. */
typedef struct psel_flush {
    int               close;      /**< Destroy the endpoint when flushed */
    unsigned          next_lane;  /**< First lane not flushed yet */
    uct_completion_t  comp;       /**< Lane flushes in progress, plus one
                                       while lanes remain to be flushed */
} psel_flush_t;


struct psel_request {
    psel_worker_h              worker;     /**< Owner, for the request pool */
    psel_request_type_t        type;
    ucs_status_t               status;     /**< UCS_INPROGRESS until done */
    int                        released;   /**< psel_request_free() called */
    union {
        psel_request_cb_t      cb;         /**< Sends and flushes */
        psel_tag_recv_cb_t     recv_cb;    /**< Receives */
    };
    void                      *arg;
    ucs_list_link_t            list;       /**< In ep->pending, or in the
                                                pool once released */
    /* send */
    psel_ep_h                  ep;
    unsigned                   cfg_index;  /**< ep->cfg_index at lookup */
    unsigned                   send_flags; /**< PSEL_SEND_FLAG_* */
    const psel_select_elem_t  *elem;       /**< The protocol running it */
    psel_proto_req_t           proto;      /**< The protocol's view */
    int                        queued;     /**< In ep->pending */
    /* receive */
    psel_tm_recv_t             recv;
    /* flush */
    psel_flush_t               flush;
};


/** Complete a request: record the status, call back, free if released. */
void psel_request_complete(psel_request_t *req, ucs_status_t status);

/** Get a request from the worker's pool (status UCS_INPROGRESS); the
 *  caller fills its type's part (proto, recv or flush), and a receive its
 *  recv_cb (@a cb NULL). */
psel_request_t *psel_request_alloc(psel_worker_h worker,
                                   psel_request_type_t type,
                                   psel_request_cb_t cb, void *arg);

/** Set up the worker's pool of requests. */
ucs_status_t psel_request_pool_init(psel_worker_h worker);

/** Free the worker's pool of requests. */
void psel_request_pool_cleanup(psel_worker_h worker);

/** Count a message sent with @a elem of @a table (UCX_PSEL_PROTO_INFO=used). */
void psel_worker_count_used(psel_worker_h worker,
                            const psel_select_table_t *table,
                            const psel_select_elem_t *elem, size_t length);

/** Poll @a wif on every progress call from now on. */
void psel_worker_iface_activate(psel_worker_h worker, psel_worker_iface_t *wif);

/** A UCT endpoint of ours on iface @a iface_index was created: poll it. */
void psel_worker_iface_get(psel_worker_h worker, unsigned iface_index);

/** ... and destroyed: the last one makes the iface idle again (until a
 *  peer's message arrives on it). */
void psel_worker_iface_put(psel_worker_h worker, unsigned iface_index);

/** Is @a uct_ep one of @a ep's (lane, extra or bootstrap endpoint)? */
int psel_ep_owns_uct_ep(psel_ep_h ep, uct_ep_h uct_ep);

/** The peer failed: complete every request of @a ep with ep->status. */
void psel_ep_handle_failure(psel_ep_h ep);

/**
 * @a ep failed with @a status (@a why: what happened, for the log): mark
 * it; psel_worker_progress() fails its requests, outside any UCT callback.
 * Once: a second failure changes nothing.
 */
void psel_ep_set_failed(psel_ep_h ep, ucs_status_t status, const char *why);

/**
 * Keep @a ep's memory while a loop of the worker runs something on it that
 * may call the user back: a callback may destroy it (or others), and the
 * loop still reads it afterwards. A destroyed endpoint leaves
 * worker->eps at once; its memory goes when the last hold is released.
 */
void psel_ep_hold(psel_ep_h ep);

/** Let go of @a ep: frees it if it was destroyed meanwhile. */
void psel_ep_release(psel_ep_h ep);

/**
 * Call @a func on every endpoint of @a worker that @a want selects, where
 * @a func may run user callbacks that destroy endpoints (that one or
 * others). Each endpoint is held while @a func runs; if it was destroyed,
 * the walk starts again from the first endpoint (every restart follows a
 * destroy, so it ends).
 *
 * @return The sum of what @a func returned.
 */
unsigned psel_worker_eps_apply(psel_worker_h worker, int (*want)(psel_ep_h ep),
                               unsigned (*func)(psel_ep_h ep));

/** Ask UCT to check the peer of each lane that supports it. */
void psel_ep_keepalive(psel_ep_h ep);

/** Move the endpoint's flush requests on (from worker progress). */
unsigned psel_ep_progress_flushes(psel_ep_h ep);

/** Queue a send on its endpoint's pending queue (@a at_head: a send that
 *  found the transport busy keeps its place), and the endpoint on the
 *  worker's list of endpoints to serve. */
void psel_send_queue(psel_request_t *req, int at_head);

/** Retry the sends of the endpoints that have some waiting (bounded). */
unsigned psel_worker_progress_pending(psel_worker_h worker);

/** Run a send's protocol until it is done, blocked or failed. */
void psel_send_progress(psel_request_t *req);

/** Fail a send with @a status (peer failure, close): its protocol releases
 *  what it holds; the request completes now, or when its operations in
 *  flight end (@a flags: PSEL_PROTO_ABORT_FORCE, they never will). */
void psel_send_abort(psel_request_t *req, ucs_status_t status,
                     unsigned flags);

/** Run a send's protocol again from the worker's progress (the protocols'
 *  send_resume callback). */
void psel_send_resume(psel_proto_req_t *proto);

#endif
