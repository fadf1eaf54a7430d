/*
 * Rendezvous active messages (proto_rndv.h): one path for every id -
 * parse and validate the header (proto_rndv_wire.c), find the request or
 * receive it names through core's maps, check that it waits for that
 * message, act (proto_rndv_send.c, proto_rndv_recv.c) - and the UCT
 * handlers core registers.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proto_common.h"
#include "proto_rndv_int.h"

#include <ucs/debug/log_def.h>
#include <inttypes.h>

/* Whom a message names. */
typedef enum {
    PSEL_RNDV_NAMES_NONE,  /* nobody: RTS, CANCEL */
    PSEL_RNDV_NAMES_SEND,  /* our send request (sreq id) */
    PSEL_RNDV_NAMES_RECV   /* our receive (rreq id) */
} psel_rndv_names_t;

/* How one message id is handled. */
typedef struct psel_rndv_handler {
    const char           *name;
    psel_rndv_names_t     names;
    psel_rndv_parse_func_t *parse;
    psel_rndv_act_func_t   *act;
} psel_rndv_handler_t;

static const psel_rndv_handler_t psel_rndv_handlers[PSEL_AM_ID_LAST] = {
    [PSEL_AM_ID_RNDV_RTS]  = {"RTS", PSEL_RNDV_NAMES_NONE,
                              psel_rndv_parse_rts, psel_rndv_recv_on_rts},
    [PSEL_AM_ID_RNDV_RTR]  = {"RTR", PSEL_RNDV_NAMES_SEND,
                              psel_rndv_parse_rtr, psel_rndv_send_on_rtr},
    [PSEL_AM_ID_RNDV_ATS]  = {"ATS", PSEL_RNDV_NAMES_SEND,
                              psel_rndv_parse_ats, psel_rndv_send_on_ats},
    [PSEL_AM_ID_RNDV_FIN]  = {"FIN", PSEL_RNDV_NAMES_RECV,
                              psel_rndv_parse_fin, psel_rndv_recv_on_fin},
    [PSEL_AM_ID_RNDV_DATA] = {"DATA", PSEL_RNDV_NAMES_RECV,
                              psel_rndv_parse_data, psel_rndv_recv_on_data},
    [PSEL_AM_ID_RNDV_CANCEL] = {"CANCEL", PSEL_RNDV_NAMES_NONE,
                                psel_rndv_parse_cancel,
                                psel_rndv_recv_on_cancel},
    [PSEL_AM_ID_RNDV_CANCEL_ACK] = {"CANCEL-ACK", PSEL_RNDV_NAMES_SEND,
                                    psel_rndv_parse_cancel_ack,
                                    psel_rndv_send_on_cancel_ack}
};

/* The send a reply names, if it waits for one: RTR and ATS in stage WAIT,
 * CANCEL-ACK after its CANCEL went out. */
static ucs_status_t psel_rndv_find_send(psel_proto_worker_t *worker,
                                        uint8_t am_id, const char *what,
                                        uint64_t id, void **target_p)
{
    psel_proto_req_t *req = worker->send_find(worker, id);
    const psel_proto_rndv_t *rndv;
    int waits;

    if (req == NULL) {
        ucs_error("rendezvous %s: unknown request %" PRIx64 "; dropped", what,
                  id);
        return UCS_ERR_NO_ELEM;
    }
    rndv  = req->rndv;
    waits = (rndv != NULL) &&
            ((am_id == PSEL_AM_ID_RNDV_CANCEL_ACK) ?
             (rndv->cancel == PSEL_RNDV_CANCEL_SENT) :
             (rndv->stage == PSEL_RNDV_STAGE_WAIT));
    if (!waits) {
        ucs_error("rendezvous %s: request %" PRIx64 " %s (stage %d); dropped",
                  what, id, (am_id == PSEL_AM_ID_RNDV_CANCEL_ACK) ?
                  "sent no CANCEL" : "is not waiting for one",
                  (rndv == NULL) ? -1 : (int)rndv->stage);
        return UCS_ERR_INVALID_PARAM;
    }
    *target_p = req;
    return UCS_OK;
}

/* The receive a FIN or DATA names, waiting for it. */
static ucs_status_t psel_rndv_find_recv(psel_proto_worker_t *worker,
                                        const char *what, uint64_t id,
                                        void **target_p)
{
    psel_proto_rreq_t *rreq = worker->rreq_find(worker, id);
    psel_rndv_recv_t *op;

    if (rreq == NULL) {
        ucs_error("rendezvous %s: unknown receive %" PRIx64 "; dropped", what,
                  id);
        return UCS_ERR_NO_ELEM;
    }
    op = ucs_derived_of(rreq, psel_rndv_recv_t);
    if ((op->ops == NULL) || (op->stage != PSEL_RNDV_RECV_WAIT)) {
        ucs_error("rendezvous %s: receive %" PRIx64 " is not waiting for it "
                  "(stage %d); dropped", what, id, op->stage);
        return UCS_ERR_INVALID_PARAM;
    }
    *target_p = op;
    return UCS_OK;
}

ucs_status_t psel_rndv_am_input(psel_proto_worker_t *worker, uint8_t am_id,
                                const void *data, size_t length)
{
    const psel_rndv_handler_t *handler;
    void *target = NULL;
    psel_rndv_msg_t msg;
    ucs_status_t status;
    uint64_t id = 0;

    handler = (am_id < PSEL_AM_ID_LAST) ? &psel_rndv_handlers[am_id] : NULL;
    if ((handler == NULL) || (handler->parse == NULL)) {
        ucs_error("rendezvous: active message id %u is not one of ours; "
                  "dropped", am_id);
        return UCS_ERR_INVALID_PARAM;
    }
    status = handler->parse(worker, data, length, &msg, &id);
    if (status != UCS_OK) {
        return status;
    }
    if (handler->names == PSEL_RNDV_NAMES_SEND) {
        status = psel_rndv_find_send(worker, am_id, handler->name, id, &target);
    } else if (handler->names == PSEL_RNDV_NAMES_RECV) {
        status = psel_rndv_find_recv(worker, handler->name, id, &target);
    }
    if (status != UCS_OK) {
        return status;
    }
    return handler->act(worker, target, &msg, data, length);
}

/* The UCT handler of the rendezvous AM ids: all feed psel_rndv_am_input() */
#define PSEL_RNDV_AM_HANDLER(_name, _am_id) \
    static ucs_status_t psel_rndv_am_##_name(void *arg, void *data, \
                                             size_t length, unsigned flags) \
    { \
        psel_rndv_am_input(arg, _am_id, data, length); \
        return UCS_OK; \
    }

PSEL_RNDV_AM_HANDLER(rts, PSEL_AM_ID_RNDV_RTS)
PSEL_RNDV_AM_HANDLER(rtr, PSEL_AM_ID_RNDV_RTR)
PSEL_RNDV_AM_HANDLER(ats, PSEL_AM_ID_RNDV_ATS)
PSEL_RNDV_AM_HANDLER(fin, PSEL_AM_ID_RNDV_FIN)
PSEL_RNDV_AM_HANDLER(data, PSEL_AM_ID_RNDV_DATA)
PSEL_RNDV_AM_HANDLER(cancel, PSEL_AM_ID_RNDV_CANCEL)
PSEL_RNDV_AM_HANDLER(cancel_ack, PSEL_AM_ID_RNDV_CANCEL_ACK)

const psel_rndv_am_handler_t psel_rndv_am_handlers[] = {
    {PSEL_AM_ID_RNDV_RTS,        psel_rndv_am_rts},
    {PSEL_AM_ID_RNDV_RTR,        psel_rndv_am_rtr},
    {PSEL_AM_ID_RNDV_ATS,        psel_rndv_am_ats},
    {PSEL_AM_ID_RNDV_FIN,        psel_rndv_am_fin},
    {PSEL_AM_ID_RNDV_DATA,       psel_rndv_am_data},
    {PSEL_AM_ID_RNDV_CANCEL,     psel_rndv_am_cancel},
    {PSEL_AM_ID_RNDV_CANCEL_ACK, psel_rndv_am_cancel_ack}
};

const unsigned psel_rndv_num_am_handlers =
        sizeof(psel_rndv_am_handlers) / sizeof(psel_rndv_am_handlers[0]);
