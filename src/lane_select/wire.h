/**
 * @file wire.h
 * Byte order of everything protosel puts on a wire: little-endian, for
 * every format (worker address, wireup, eager and rendezvous headers, the
 * psel_perftest settings exchange). Store and load unaligned little-endian
 * integers at a byte pointer; on a little-endian host they compile to
 * plain copies. Internal: not installed.
 */
#ifndef PSEL_LANE_SELECT_WIRE_H_
#define PSEL_LANE_SELECT_WIRE_H_

#include <endian.h>
#include <stdint.h>
#include <string.h>

/** Store @a v at @a p as 2 little-endian bytes. */
static inline void psel_wire_put16(void *p, uint16_t v)
{
    v = htole16(v);
    memcpy(p, &v, sizeof(v));
}

/** Store @a v at @a p as 4 little-endian bytes. */
static inline void psel_wire_put32(void *p, uint32_t v)
{
    v = htole32(v);
    memcpy(p, &v, sizeof(v));
}

/** Store @a v at @a p as 8 little-endian bytes. */
static inline void psel_wire_put64(void *p, uint64_t v)
{
    v = htole64(v);
    memcpy(p, &v, sizeof(v));
}

/** Load 2 little-endian bytes at @a p. */
static inline uint16_t psel_wire_get16(const void *p)
{
    uint16_t v;

    memcpy(&v, p, sizeof(v));
    return le16toh(v);
}

/** Load 4 little-endian bytes at @a p. */
static inline uint32_t psel_wire_get32(const void *p)
{
    uint32_t v;

    memcpy(&v, p, sizeof(v));
    return le32toh(v);
}

/** Load 8 little-endian bytes at @a p. */
static inline uint64_t psel_wire_get64(const void *p)
{
    uint64_t v;

    memcpy(&v, p, sizeof(v));
    return le64toh(v);
}

#endif
