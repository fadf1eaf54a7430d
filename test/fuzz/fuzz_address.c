/*
 * Fuzz harness for the worker address unpacker. Every input is unpacked; one
 * that is accepted must re-pack to exactly the same bytes (the format is
 * canonical), so a field the unpacker fails to check or keep shows up as a
 * mismatch. Runs under test/fuzz/replay_main.c in `make check`, or under
 * libFuzzer by hand (see test/fuzz/README.md).
 *
 * Built with -DPSEL_FUZZ_ADDRESS_GEN_MAIN instead, it writes the seed corpus:
 *   fuzz_address_gen DIR
 */
#include <lane_select/address.h>

#include <ucs/debug/log_def.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Rejections are expected by the thousand: keep them off the terminal */
static ucs_log_func_rc_t
fuzz_address_log_silence(const char *file, unsigned line, const char *function,
                         ucs_log_level_t level,
                         const ucs_log_component_config_t *comp_conf,
                         const char *message, va_list ap)
{
    return (level <= UCS_LOG_LEVEL_ERROR) ? UCS_LOG_FUNC_RC_STOP :
                                            UCS_LOG_FUNC_RC_CONTINUE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int     silenced;
    psel_address_t addr;
    void          *buf;
    size_t         len;

    if (!silenced) {
        ucs_log_push_handler(fuzz_address_log_silence);
        silenced = 1;
    }

    if (psel_address_unpack(data, size, &addr) != UCS_OK) {
        return 0;
    }

    if (psel_address_pack(addr.entries, addr.count, &buf, &len) != UCS_OK) {
        fprintf(stderr, "fuzz_address: accepted address does not re-pack\n");
        abort();
    }
    if ((len != size) || memcmp(buf, data, size)) {
        fprintf(stderr, "fuzz_address: re-packed %zu bytes differ from the "
                "%zu accepted\n", len, size);
        abort();
    }

    free(buf);
    psel_address_release(&addr);
    return 0;
}

#ifdef PSEL_FUZZ_ADDRESS_GEN_MAIN
static void gen_entry(psel_address_entry_t *e, const char *tl, const char *dev,
                      psel_address_dev_type_t type, unsigned dev_len,
                      unsigned iface_len, double lat, double bw)
{
    unsigned i;

    memset(e, 0, sizeof(*e));
    snprintf(e->tl_name, sizeof(e->tl_name), "%s", tl);
    snprintf(e->dev_name, sizeof(e->dev_name), "%s", dev);
    e->dev_type       = type;
    e->caps           = PSEL_ADDRESS_CAP_CONNECT_TO_IFACE |
                        PSEL_ADDRESS_CAP_AM_SHORT | PSEL_ADDRESS_CAP_AM_BCOPY;
    e->rkey_size      = 18;
    e->latency        = lat;
    e->bw_dedicated   = bw;
    e->bw_shared      = bw / 2;
    e->overhead       = 1e-8;
    e->reg_cost_c     = 1.6e-5;
    e->reg_cost_m     = 6e-11;
    e->dev_addr_len   = dev_len;
    e->iface_addr_len = iface_len;
    for (i = 0; i < dev_len; ++i) {
        e->dev_addr[i] = 0x10 + i;
    }
    for (i = 0; i < iface_len; ++i) {
        e->iface_addr[i] = 0xf0 - i;
    }
}

static void gen_write(const char *dir, const char *name,
                      const psel_address_entry_t *e, unsigned n)
{
    char   path[512];
    void  *buf;
    size_t len;
    FILE  *f;

    if (psel_address_pack(e, n, &buf, &len) != UCS_OK) {
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "wb");
    if ((f == NULL) || (fwrite(buf, 1, len, f) != len)) {
        perror(path);
        exit(1);
    }
    fclose(f);
    free(buf);
}

int main(int argc, char **argv)
{
    psel_address_entry_t e[4];

    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    gen_write(argv[1], "empty", NULL, 0);
    gen_entry(&e[0], "self", "memory0", PSEL_ADDRESS_DEV_SELF, 8, 8, 0, 6.9e9);
    gen_write(argv[1], "self", e, 1);
    gen_entry(&e[1], "posix", "memory", PSEL_ADDRESS_DEV_SHM, 8, 8, 8e-8, 1.2e10);
    gen_entry(&e[2], "tcp", "lo", PSEL_ADDRESS_DEV_NET, 18, 2, 1.1e-5, 1.2e7);
    gen_write(argv[1], "self-posix-tcp", e, 3);
    gen_entry(&e[3], "rc_mlx5", "mlx5_0:1", PSEL_ADDRESS_DEV_NET, 18, 3, 6e-7,
              2.5e10);
    e[3].caps |= PSEL_ADDRESS_CAP_GET_ZCOPY | PSEL_ADDRESS_CAP_PUT_ZCOPY;
    e[3].priority = 30;
    gen_write(argv[1], "four", e, 4);
    return 0;
}
#endif
