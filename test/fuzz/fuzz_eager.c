/*
 * Fuzz harness for the eager wire headers (ucp_proto_sel/proto_egr.h) and
 * the receive path they feed (tag matching and reassembly,
 * core/tag_match.c), as core's AM handlers run them. An input is a list of
 * messages, each: kind (1 short, 2 first fragment, 3 later fragment), a
 * 2-byte little-endian length, the bytes. Before them, receives of several
 * sizes and tags are posted; after them the matcher is cleaned up.
 * Checks: an accepted header re-packs to the same bytes; every posted
 * receive completes exactly once; a receive that completed with UCS_OK
 * holds no more than its buffer. Runs under test/fuzz/replay_main.c in
 * `make check`, or under libFuzzer by hand (test/fuzz/README.md).
 *
 * Built with -DPSEL_FUZZ_GEN_MAIN instead, it writes the seed corpus:
 *   fuzz_eager_gen DIR
 */
#include <core/tag_match.h>
#include <ucp_proto_sel/proto_egr.h>

#include <ucs/debug/log_def.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_RECVS 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    psel_tm_recv_t recv;
    unsigned       completions;
    uint8_t        buf[512];
} fuzz_recv_t;

static ucs_log_func_rc_t
fuzz_eager_log_silence(const char *file, unsigned line, const char *function,
                       ucs_log_level_t level,
                       const ucs_log_component_config_t *comp_conf,
                       const char *message, va_list ap)
{
    return (level <= UCS_LOG_LEVEL_ERROR) ? UCS_LOG_FUNC_RC_STOP :
                                            UCS_LOG_FUNC_RC_CONTINUE;
}

static void fuzz_completed(psel_tm_recv_t *recv)
{
    ++ucs_container_of(recv, fuzz_recv_t, recv)->completions;
}

/* An accepted header must write back to the same bytes. */
static void fuzz_check_repack(const void *data, const void *repacked,
                              size_t len)
{
    if (memcmp(data, repacked, len)) {
        fprintf(stderr, "fuzz_eager: an accepted %zu-byte header re-packs "
                "differently\n", len);
        abort();
    }
}

static void fuzz_message(psel_tm_t *tm, uint8_t kind, const uint8_t *msg,
                         size_t len)
{
    uint8_t repacked[PSEL_EAGER_FIRST_HDR];
    psel_eager_middle_t middle;
    psel_eager_first_t first;

    switch (kind) {
    case 1:
        if (psel_eager_short_parse(msg, len, &first) == UCS_OK) {
            psel_tm_eager_first(tm, first.sender_id, first.msg_id, first.tag,
                                first.total_length, first.payload,
                                first.length);
        }
        break;
    case 2:
        if (psel_eager_first_parse(msg, len, &first) == UCS_OK) {
            psel_eager_first_pack(repacked, first.tag, first.sender_id,
                                  first.msg_id, first.total_length);
            fuzz_check_repack(msg, repacked, PSEL_EAGER_FIRST_HDR);
            psel_tm_eager_first(tm, first.sender_id, first.msg_id, first.tag,
                                first.total_length, first.payload,
                                first.length);
        }
        break;
    case 3:
        if (psel_eager_middle_parse(msg, len, &middle) == UCS_OK) {
            psel_eager_middle_pack(repacked, middle.sender_id, middle.msg_id,
                                   middle.offset);
            fuzz_check_repack(msg, repacked, PSEL_EAGER_MIDDLE_HDR);
            psel_tm_eager_middle(tm, middle.sender_id, middle.msg_id,
                                 middle.offset, middle.payload, middle.length);
        }
        break;
    default:
        break; /* not an eager id: core registers no such handler */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t lengths[FUZZ_RECVS] = {0, 8, 100, 512};
    static int silenced;
    fuzz_recv_t recvs[FUZZ_RECVS];
    psel_tm_t tm;
    size_t len;
    unsigned i;

    if (!silenced) {
        ucs_log_push_handler(fuzz_eager_log_silence);
        silenced = 1;
    }
    if (psel_tm_init(&tm) != UCS_OK) {
        abort();
    }
    tm.max_length = 1 << 20; /* as a worker bounds unexpected buffers */
    memset(recvs, 0, sizeof(recvs));
    for (i = 0; i < FUZZ_RECVS; ++i) {
        recvs[i].recv.tag      = i;
        recvs[i].recv.tag_mask = (i == FUZZ_RECVS - 1) ? 0 : 0xff;
        recvs[i].recv.buffer   = recvs[i].buf;
        recvs[i].recv.length   = lengths[i];
        recvs[i].recv.complete = fuzz_completed;
        psel_tm_post(&tm, &recvs[i].recv);
    }

    while (size >= 3) {
        len = data[1] | ((size_t)data[2] << 8);
        if (len > size - 3) {
            len = size - 3;
        }
        fuzz_message(&tm, data[0], data + 3, len);
        data += 3 + len;
        size -= 3 + len;
    }

    psel_tm_cleanup(&tm);
    for (i = 0; i < FUZZ_RECVS; ++i) {
        if ((recvs[i].completions != 1) ||
            ((recvs[i].recv.status == UCS_OK) &&
             (recvs[i].recv.info.length > lengths[i]))) {
            fprintf(stderr, "fuzz_eager: receive %u completed %u times, "
                    "status %s, %zu bytes into %zu\n", i,
                    recvs[i].completions,
                    ucs_status_string(recvs[i].recv.status),
                    recvs[i].recv.info.length, lengths[i]);
            abort();
        }
    }
    return 0;
}

#ifdef PSEL_FUZZ_GEN_MAIN
static uint8_t *fuzz_put(uint8_t *p, uint8_t kind, const void *msg,
                         size_t len)
{
    p[0] = kind;
    p[1] = len & 0xff;
    p[2] = len >> 8;
    memcpy(p + 3, msg, len);
    return p + 3 + len;
}

static void fuzz_write(const char *dir, const char *name, const uint8_t *buf,
                       size_t len)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "wb");
    if ((f == NULL) || (fwrite(buf, 1, len, f) != len) || fclose(f)) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    uint8_t buf[1024], msg[300], *p;

    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 1;
    }
    /* a short message for receive 1, and one nobody expects */
    p = buf;
    psel_wire_put64(msg, 1);
    memcpy(msg + 8, "8 bytes!", 8);
    p = fuzz_put(p, 1, msg, 16);
    psel_wire_put64(msg, 77);
    p = fuzz_put(p, 1, msg, 8 + 5);
    fuzz_write(argv[1], "short", buf, p - buf);

    /* a 250-byte message in three fragments, middles out of order */
    p = buf;
    psel_eager_first_pack(msg, 2, 0xaa, 5, 250);
    memset(msg + PSEL_EAGER_FIRST_HDR, 'a', 100);
    p = fuzz_put(p, 2, msg, PSEL_EAGER_FIRST_HDR + 100);
    psel_eager_middle_pack(msg, 0xaa, 5, 200);
    memset(msg + PSEL_EAGER_MIDDLE_HDR, 'c', 50);
    p = fuzz_put(p, 3, msg, PSEL_EAGER_MIDDLE_HDR + 50);
    psel_eager_middle_pack(msg, 0xaa, 5, 100);
    memset(msg + PSEL_EAGER_MIDDLE_HDR, 'b', 100);
    p = fuzz_put(p, 3, msg, PSEL_EAGER_MIDDLE_HDR + 100);
    fuzz_write(argv[1], "fragments", buf, p - buf);

    /* a whole message in one first fragment, larger than receive 1 */
    p = buf;
    psel_eager_first_pack(msg, 1, 0xbb, 1, 40);
    memset(msg + PSEL_EAGER_FIRST_HDR, 'x', 40);
    p = fuzz_put(p, 2, msg, PSEL_EAGER_FIRST_HDR + 40);
    fuzz_write(argv[1], "truncated", buf, p - buf);
    return 0;
}
#endif
