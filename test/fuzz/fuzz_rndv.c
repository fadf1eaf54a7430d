/*
 * Fuzz harness for the rendezvous wire headers (ucp_proto_sel/
 * proto_rndv_wire.c) and their dispatch (psel_rndv_am_input). The first
 * input byte is the active message id, the rest the message:
 *  - the message goes through psel_rndv_am_input() on a worker view whose
 *    core callbacks know no request (every reply ends at "unknown
 *    request"; an RTS is counted, not matched; a CANCEL's answer finds no
 *    memory);
 *  - the parser of that id must accept it or reject it; an accepted
 *    message must re-pack to exactly the same bytes (the format is
 *    canonical: a field the parser fails to check or keep shows up as a
 *    mismatch).
 * Runs under test/fuzz/replay_main.c in `make check`, or under libFuzzer by
 * hand (test/fuzz/README.md).
 *
 * Built with -DPSEL_FUZZ_GEN_MAIN instead, it writes the seed corpus:
 *   fuzz_rndv_gen DIR
 */
#include <ucp_proto_sel/proto_rndv_int.h>

#include <ucs/debug/log_def.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ucs_log_func_rc_t
fuzz_rndv_log_silence(const char *file, unsigned line, const char *function,
                      ucs_log_level_t level,
                      const ucs_log_component_config_t *comp_conf,
                      const char *message, va_list ap)
{
    return (level <= UCS_LOG_LEVEL_ERROR) ? UCS_LOG_FUNC_RC_STOP :
                                            UCS_LOG_FUNC_RC_CONTINUE;
}

/* ---- a worker view whose core knows nothing ---- */

static unsigned fuzz_rts_count;

static psel_proto_req_t *fuzz_send_find(psel_proto_worker_t *w, uint64_t id)
{
    return NULL;
}

static psel_proto_rreq_t *fuzz_rreq_find(psel_proto_worker_t *w, uint64_t id)
{
    return NULL;
}

/* a CANCEL's answer would be tracked: refuse, so nothing accumulates */
static ucs_status_t fuzz_rreq_track(psel_proto_worker_t *w,
                                    psel_proto_rreq_t *rreq)
{
    return UCS_ERR_NO_MEMORY;
}

static ucs_status_t fuzz_rts_arrived(psel_proto_worker_t *w,
                                     uint64_t sender_id, uint64_t msg_id,
                                     uint64_t tag, size_t length,
                                     const void *desc, size_t desc_len)
{
    ++fuzz_rts_count;
    return UCS_OK;
}

static psel_proto_worker_t *fuzz_worker(void)
{
    static psel_proto_worker_t worker;
    static int ready;

    if (!ready) {
        psel_rndv_worker_init(&worker);
        worker.num_ifaces   = 4; /* an RTS may name ifaces 0..3 */
        worker.send_find    = fuzz_send_find;
        worker.rreq_find    = fuzz_rreq_find;
        worker.rreq_track   = fuzz_rreq_track;
        worker.rts_arrived  = fuzz_rts_arrived;
        ready               = 1;
    }
    return &worker;
}

/* ---- re-pack what a parser accepted ---- */

static size_t fuzz_pack_lanes(uint8_t *p, unsigned num_lanes,
                              const psel_rndv_lane_in_t *lanes)
{
    uint8_t *start = p;
    unsigned i;

    for (i = 0; i < num_lanes; ++i) {
        psel_rndv_lane_rec_pack(p, &lanes[i].rec);
        p += sizeof(psel_rndv_lane_rec_t);
        memcpy(p, lanes[i].rkey, lanes[i].rec.rkey_size);
        p += lanes[i].rec.rkey_size;
    }
    return p - start;
}

/* @return the bytes of the packed message in @a out */
static size_t fuzz_repack(uint8_t am_id, const psel_rndv_msg_t *msg,
                          uint8_t *out)
{
    switch (am_id) {
    case PSEL_AM_ID_RNDV_RTS:
        psel_rndv_rts_hdr_pack(out, &msg->rts.hdr);
        return sizeof(psel_rndv_rts_hdr_t) +
               fuzz_pack_lanes(out + sizeof(psel_rndv_rts_hdr_t),
                               msg->rts.hdr.num_lanes, msg->rts.lanes);
    case PSEL_AM_ID_RNDV_RTR:
        psel_rndv_rtr_hdr_pack(out, &msg->rtr.hdr);
        return sizeof(psel_rndv_rtr_hdr_t) +
               fuzz_pack_lanes(out + sizeof(psel_rndv_rtr_hdr_t),
                               msg->rtr.hdr.num_lanes, msg->rtr.lanes);
    case PSEL_AM_ID_RNDV_ATS:
    case PSEL_AM_ID_RNDV_FIN:
    case PSEL_AM_ID_RNDV_CANCEL_ACK:
        psel_rndv_ack_hdr_pack(out, msg->ack.status, msg->ack.req_id);
        return sizeof(psel_rndv_ack_hdr_t);
    case PSEL_AM_ID_RNDV_CANCEL:
        psel_rndv_cancel_pack(out, msg->cancel.sender_id, msg->cancel.msg_id,
                              msg->cancel.sreq_id);
        return sizeof(psel_rndv_cancel_hdr_t);
    case PSEL_AM_ID_RNDV_DATA:
        psel_rndv_data_hdr_pack(out, msg->data.hdr.rreq_id,
                                msg->data.hdr.offset);
        memcpy(out + sizeof(psel_rndv_data_hdr_t), msg->data.payload,
               msg->data.length);
        return sizeof(psel_rndv_data_hdr_t) + msg->data.length;
    default:
        abort();
    }
}

static psel_rndv_parse_func_t *fuzz_parser(uint8_t am_id)
{
    switch (am_id) {
    case PSEL_AM_ID_RNDV_RTS:        return psel_rndv_parse_rts;
    case PSEL_AM_ID_RNDV_RTR:        return psel_rndv_parse_rtr;
    case PSEL_AM_ID_RNDV_ATS:        return psel_rndv_parse_ats;
    case PSEL_AM_ID_RNDV_FIN:        return psel_rndv_parse_fin;
    case PSEL_AM_ID_RNDV_DATA:       return psel_rndv_parse_data;
    case PSEL_AM_ID_RNDV_CANCEL:     return psel_rndv_parse_cancel;
    case PSEL_AM_ID_RNDV_CANCEL_ACK: return psel_rndv_parse_cancel_ack;
    default:                         return NULL;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int silenced;
    psel_proto_worker_t *worker = fuzz_worker();
    psel_rndv_parse_func_t *parse;
    unsigned rts_before;
    psel_rndv_msg_t msg;
    ucs_status_t status;
    uint8_t *out, am_id;
    uint64_t id = 0;
    size_t len;

    if (!silenced) {
        ucs_log_push_handler(fuzz_rndv_log_silence);
        silenced = 1;
    }
    if (size == 0) {
        return 0;
    }
    am_id = data[0];
    ++data;
    --size;

    /* dispatch: a reply finds no request; an RTS goes to tag matching */
    rts_before = fuzz_rts_count;
    status     = psel_rndv_am_input(worker, am_id, data, size);
    parse      = fuzz_parser(am_id);
    if (parse == NULL) {
        if (status != UCS_ERR_INVALID_PARAM) {
            fprintf(stderr, "fuzz_rndv: am id %u is not rendezvous, yet "
                    "%s\n", am_id, ucs_status_string(status));
            abort();
        }
        return 0;
    }

    if (parse(worker, data, size, &msg, &id) != UCS_OK) {
        return 0;
    }
    if ((am_id == PSEL_AM_ID_RNDV_RTS) ?
        ((status != UCS_OK) || (fuzz_rts_count != rts_before + 1)) :
        (am_id == PSEL_AM_ID_RNDV_CANCEL) ? (status != UCS_ERR_NO_MEMORY) :
        (status != UCS_ERR_NO_ELEM)) {
        fprintf(stderr, "fuzz_rndv: am id %u parsed, dispatch said %s\n",
                am_id, ucs_status_string(status));
        abort();
    }
    out = malloc(size + 1);
    if (out == NULL) {
        abort();
    }
    len = fuzz_repack(am_id, &msg, out);
    if ((len != size) || memcmp(out, data, size)) {
        fprintf(stderr, "fuzz_rndv: am id %u: re-packed %zu bytes differ "
                "from the %zu accepted\n", am_id, len, size);
        abort();
    }
    free(out);
    return 0;
}

#ifdef PSEL_FUZZ_GEN_MAIN
/* One seed per message kind, as a sender of this build writes them. */
static void fuzz_write(const char *dir, const char *name, uint8_t am_id,
                       const uint8_t *msg, size_t len)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "wb");
    if ((f == NULL) || (fputc(am_id, f) == EOF) ||
        (fwrite(msg, 1, len, f) != len) || fclose(f)) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    uint8_t msg[256], *p;
    psel_rndv_rts_hdr_t rts  = {0};
    psel_rndv_rtr_hdr_t rtr  = {0};
    psel_rndv_lane_rec_t rec = {0};
    unsigned i;

    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 1;
    }
    rts.mode      = PSEL_RNDV_MODE_GET;
    rts.num_lanes = 2;
    rts.tag       = 0x1122334455667788ull;
    rts.length    = 5 << 20;
    rts.sender_id = 0xabcdef0000000001ull;
    rts.msg_id    = 7;
    rts.sreq_id   = 3;
    rts.address   = 0x7f0012345000ull;
    psel_rndv_rts_hdr_pack(msg, &rts);
    p = msg + sizeof(rts);
    for (i = 0; i < 2; ++i) {
        rec.entry     = i + 1;
        rec.weight    = 30000 + i;
        rec.rkey_size = 8;
        psel_rndv_lane_rec_pack(p, &rec);
        p += sizeof(rec);
        memset(p, 0x40 + i, 8);
        p += 8;
    }
    fuzz_write(argv[1], "rts-get", PSEL_AM_ID_RNDV_RTS, msg, p - msg);

    rts.mode      = PSEL_RNDV_MODE_PUT;
    rts.num_lanes = 1;
    rts.address   = 0;
    psel_rndv_rts_hdr_pack(msg, &rts);
    rec.entry     = 2;
    rec.weight    = 65535;
    rec.rkey_size = 0;
    psel_rndv_lane_rec_pack(msg + sizeof(rts), &rec);
    fuzz_write(argv[1], "rts-put", PSEL_AM_ID_RNDV_RTS, msg,
               sizeof(rts) + sizeof(rec));

    rts.mode      = PSEL_RNDV_MODE_AM;
    rts.num_lanes = 0;
    psel_rndv_rts_hdr_pack(msg, &rts);
    fuzz_write(argv[1], "rts-am", PSEL_AM_ID_RNDV_RTS, msg, sizeof(rts));

    rtr.mode      = PSEL_RNDV_MODE_PUT;
    rtr.num_lanes = 1;
    rtr.sreq_id   = 3;
    rtr.rreq_id   = 9;
    rtr.address   = 0x7f0000001000ull;
    rtr.length    = 5 << 20;
    psel_rndv_rtr_hdr_pack(msg, &rtr);
    rec.entry     = 2;
    rec.weight    = 65535;
    rec.rkey_size = 16;
    psel_rndv_lane_rec_pack(msg + sizeof(rtr), &rec);
    memset(msg + sizeof(rtr) + sizeof(rec), 0x5a, 16);
    fuzz_write(argv[1], "rtr-put", PSEL_AM_ID_RNDV_RTR, msg,
               sizeof(rtr) + sizeof(rec) + 16);

    psel_rndv_ack_hdr_pack(msg, UCS_OK, 3);
    fuzz_write(argv[1], "ats", PSEL_AM_ID_RNDV_ATS, msg,
               sizeof(psel_rndv_ack_hdr_t));
    psel_rndv_ack_hdr_pack(msg, UCS_ERR_IO_ERROR, 9);
    fuzz_write(argv[1], "fin-error", PSEL_AM_ID_RNDV_FIN, msg,
               sizeof(psel_rndv_ack_hdr_t));
    psel_rndv_ack_hdr_pack(msg, UCS_ERR_BUSY, 3);
    fuzz_write(argv[1], "cancel-ack", PSEL_AM_ID_RNDV_CANCEL_ACK, msg,
               sizeof(psel_rndv_ack_hdr_t));
    psel_rndv_cancel_pack(msg, rts.sender_id, 7, 3);
    fuzz_write(argv[1], "cancel", PSEL_AM_ID_RNDV_CANCEL, msg,
               sizeof(psel_rndv_cancel_hdr_t));
    psel_rndv_data_hdr_pack(msg, 9, 65536);
    memcpy(msg + sizeof(psel_rndv_data_hdr_t), "payload", 7);
    fuzz_write(argv[1], "data", PSEL_AM_ID_RNDV_DATA, msg,
               sizeof(psel_rndv_data_hdr_t) + 7);
    return 0;
}
#endif
