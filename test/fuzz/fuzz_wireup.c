/*
 * Fuzz harness for the wireup messages (core/wireup.c), on a real worker
 * with the self transport (no network, no shared memory of other
 * processes). The first input byte says how to build the message:
 *  0: the rest is the message as it arrives;
 *  1: the rest is a header and lane records; the harness inserts this
 *     worker's own packed address after the header (and sets its length),
 *     so a REQUEST from "a peer at our own address" reaches endpoint
 *     creation, lane pairing and the REPLY.
 * Each message goes to psel_wireup_process(); its status must be one a
 * wire message can cause, a version other than ours must give
 * UCS_ERR_UNSUPPORTED, and the worker must keep working: after each
 * input the endpoints wireup created are destroyed and the worker is
 * progressed. Runs under test/fuzz/replay_main.c in `make check`, or
 * under libFuzzer by hand (test/fuzz/README.md).
 *
 * Built with -DPSEL_FUZZ_GEN_MAIN instead, it writes the seed corpus:
 *   fuzz_wireup_gen DIR
 */
#include <core/core_int.h>

#include <ucs/debug/log_def.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ucs_log_func_rc_t
fuzz_wireup_log_silence(const char *file, unsigned line, const char *function,
                        ucs_log_level_t level,
                        const ucs_log_component_config_t *comp_conf,
                        const char *message, va_list ap)
{
    return (level <= UCS_LOG_LEVEL_ERROR) ? UCS_LOG_FUNC_RC_STOP :
                                            UCS_LOG_FUNC_RC_CONTINUE;
}

static psel_context_h fuzz_context;
static psel_worker_h  fuzz_worker;
static void          *fuzz_address;
static size_t         fuzz_address_length;

static void fuzz_cleanup(void)
{
    free(fuzz_address);
    psel_worker_destroy(fuzz_worker);
    psel_context_destroy(fuzz_context);
}

static void fuzz_init(void)
{
    setenv("UCX_PSEL_TLS", "self", 1);
    setenv("UCX_PSEL_CALIBRATION", "none", 1);
    if ((psel_context_create(&fuzz_context) != UCS_OK) ||
        (psel_worker_create(fuzz_context, &fuzz_worker) != UCS_OK) ||
        (psel_worker_get_address(fuzz_worker, &fuzz_address,
                                 &fuzz_address_length) != UCS_OK)) {
        fprintf(stderr, "fuzz_wireup: no worker over self\n");
        abort();
    }
    ucs_log_push_handler(fuzz_wireup_log_silence);
    atexit(fuzz_cleanup);
}

static int fuzz_status_ok(ucs_status_t status)
{
    return (status == UCS_OK) || (status == UCS_ERR_INVALID_PARAM) ||
           (status == UCS_ERR_UNSUPPORTED) || (status == UCS_ERR_NO_ELEM) ||
           (status == UCS_ERR_UNREACHABLE) || (status == UCS_ERR_NO_DEVICE) ||
           (status == UCS_ERR_EXCEEDS_LIMIT);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    psel_wireup_hdr_t hdr;
    psel_ep_h ep, tmp;
    ucs_status_t status;
    uint8_t *msg;
    size_t len;
    unsigned i;

    if (fuzz_worker == NULL) {
        fuzz_init();
    }
    if (size == 0) {
        return 0;
    }
    msg = malloc(size + fuzz_address_length);
    if (msg == NULL) {
        abort();
    }
    if ((data[0] == 1) && (size - 1 >= sizeof(hdr))) {
        memcpy(&hdr, data + 1, sizeof(hdr));
        hdr.address_length = htole32(fuzz_address_length);
        memcpy(msg, &hdr, sizeof(hdr));
        memcpy(msg + sizeof(hdr), fuzz_address, fuzz_address_length);
        memcpy(msg + sizeof(hdr) + fuzz_address_length,
               data + 1 + sizeof(hdr), size - 1 - sizeof(hdr));
        len = size - 1 + fuzz_address_length;
    } else {
        memcpy(msg, data + 1, size - 1);
        len = size - 1;
    }

    status = psel_wireup_process(fuzz_worker, msg, len);
    if (!fuzz_status_ok(status) ||
        ((len > 0) && (msg[0] != PSEL_WIREUP_VERSION) &&
         (len >= sizeof(hdr)) && (status != UCS_ERR_UNSUPPORTED))) {
        fprintf(stderr, "fuzz_wireup: %zu-byte message, version %u: %s\n",
                len, (len > 0) ? msg[0] : 0, ucs_status_string(status));
        abort();
    }
    free(msg);

    /* the worker keeps working: answer what it sent itself, then drop the
     * endpoints wireup made */
    for (i = 0; i < 16; ++i) {
        psel_worker_progress(fuzz_worker);
    }
    ucs_list_for_each_safe(ep, tmp, &fuzz_worker->eps, list) {
        psel_ep_destroy(ep);
    }
    return 0;
}

#ifdef PSEL_FUZZ_GEN_MAIN
static void fuzz_write(const char *dir, const char *name, uint8_t mode,
                       const void *msg, size_t len)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "wb");
    if ((f == NULL) || (fputc(mode, f) == EOF) ||
        (fwrite(msg, 1, len, f) != len) || fclose(f)) {
        perror(path);
        exit(1);
    }
}

static void fuzz_hdr(psel_wireup_hdr_t *hdr, uint8_t type, unsigned lanes,
                     uint32_t address_length)
{
    memset(hdr, 0, sizeof(*hdr));
    hdr->version        = PSEL_WIREUP_VERSION;
    hdr->type           = type;
    hdr->num_lanes      = lanes;
    hdr->address_length = htole32(address_length);
    hdr->sender_uuid    = htole64(0x1234);
    hdr->sender_ep_id   = htole64(0x5678);
    hdr->dest_ep_id     = htole64((type == PSEL_WIREUP_REPLY) ? 0x9abc : 0);
}

int main(int argc, char **argv)
{
    uint8_t msg[sizeof(psel_wireup_hdr_t) + 2 * (4 + 16)];
    psel_wireup_lane_t rec = {0};
    psel_wireup_hdr_t hdr;
    unsigned i;

    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 1;
    }
    /* a request from our own address, no lane records (an announce) */
    fuzz_hdr(&hdr, PSEL_WIREUP_REQUEST, 0, 1);
    fuzz_write(argv[1], "request-announce", 1, &hdr, sizeof(hdr));

    /* with two lane records naming iface 0 */
    fuzz_hdr(&hdr, PSEL_WIREUP_REQUEST, 2, 1);
    memcpy(msg, &hdr, sizeof(hdr));
    for (i = 0; i < 2; ++i) {
        rec.sender_iface   = i;
        rec.dest_iface     = 0;
        rec.path           = 0;
        rec.ep_addr_length = 16;
        memcpy(msg + sizeof(hdr) + i * 20, &rec, sizeof(rec));
        memset(msg + sizeof(hdr) + i * 20 + sizeof(rec), 0x11 * (i + 1), 16);
    }
    fuzz_write(argv[1], "request-lanes", 1, msg, sizeof(msg));

    /* a reply for an endpoint this worker does not have */
    fuzz_hdr(&hdr, PSEL_WIREUP_REPLY, 0, 0);
    fuzz_write(argv[1], "reply", 0, &hdr, sizeof(hdr));
    return 0;
}
#endif
