/*
 * Driver for the fuzz harnesses without libFuzzer: replays every file given on
 * the command line (a seed corpus), then feeds a bounded number of
 * deterministic mutations of those seeds. Any crash, sanitizer report or
 * assertion failure fails the test. With clang, the same harness links against
 * libFuzzer instead (see test/fuzz/README.md).
 *
 * Usage: fuzz_X [-n MUTATIONS] [-s SEED] FILE...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_INPUT (1u << 20)

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    /* xorshift64*: small, deterministic, good enough for mutations */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static size_t mutate(uint8_t *buf, size_t size, size_t max)
{
    unsigned n = 1 + rng_next() % 4, i;
    size_t pos;

    for (i = 0; i < n; ++i) {
        pos = size ? rng_next() % size : 0;
        switch (rng_next() % 6) {
        case 0: /* flip a bit */
            if (size) buf[pos] ^= 1u << (rng_next() % 8);
            break;
        case 1: /* random byte */
            if (size) buf[pos] = rng_next();
            break;
        case 2: /* truncate */
            size = pos;
            break;
        case 3: /* interesting value */
            if (size) buf[pos] = (uint8_t[]){0, 1, 0x7f, 0x80, 0xff, '\n', ' ', '9'}[rng_next() % 8];
            break;
        case 4: /* duplicate a chunk */
            if (size && size < max) {
                size_t len = 1 + rng_next() % (size - pos);
                if (size + len > max) len = max - size;
                memmove(buf + pos + len, buf + pos, size - pos);
                size += len;
            }
            break;
        case 5: /* delete a chunk */
            if (size) {
                size_t len = 1 + rng_next() % (size - pos);
                memmove(buf + pos, buf + pos + len, size - pos - len);
                size -= len;
            }
            break;
        }
    }
    return size;
}

static size_t read_file(const char *path, uint8_t *buf, size_t max)
{
    FILE *f = fopen(path, "rb");
    size_t n;

    if (f == NULL) {
        fprintf(stderr, "fuzz replay: cannot open %s: %m\n", path);
        exit(1);
    }
    n = fread(buf, 1, max, f);
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    unsigned long mutations = 2000, done = 0;
    uint8_t *seed, *work;
    size_t seed_len, len;
    int opt, i, nfiles;

    rng_state = 0x9e3779b97f4a7c15ull;
    while ((opt = getopt(argc, argv, "n:s:")) != -1) {
        switch (opt) {
        case 'n': mutations = strtoul(optarg, NULL, 0); break;
        case 's': rng_state = strtoull(optarg, NULL, 0) | 1; break;
        default:
            fprintf(stderr, "usage: %s [-n MUTATIONS] [-s SEED] FILE...\n", argv[0]);
            return 2;
        }
    }

    nfiles = argc - optind;
    if (nfiles <= 0) {
        fprintf(stderr, "fuzz replay: no seed files given\n");
        return 2;
    }

    seed = malloc(REPLAY_MAX_INPUT);
    work = malloc(REPLAY_MAX_INPUT);
    for (i = optind; i < argc; ++i) {
        seed_len = read_file(argv[i], seed, REPLAY_MAX_INPUT);
        /* exact-size copies, so ASan sees reads past the end */
        uint8_t *exact = malloc(seed_len ? seed_len : 1);
        memcpy(exact, seed, seed_len);
        LLVMFuzzerTestOneInput(exact, seed_len);
        free(exact);
    }

    for (done = 0; done < mutations; ++done) {
        seed_len = read_file(argv[optind + rng_next() % nfiles], seed,
                             REPLAY_MAX_INPUT / 2);
        memcpy(work, seed, seed_len);
        len = mutate(work, seed_len, REPLAY_MAX_INPUT);
        uint8_t *exact = malloc(len ? len : 1);
        memcpy(exact, work, len);
        LLVMFuzzerTestOneInput(exact, len);
        free(exact);
    }

    printf("fuzz replay: %d seed file(s), %lu mutation(s), no crash\n",
           nfiles, done);
    free(seed);
    free(work);
    return 0;
}
