/* XXH64 (hp_xxh64.h). */
#include "hp_xxh64.h"

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static uint64_t rotl(uint64_t x, int r) { return x << r | x >> (64 - r); }

/* Little-endian loads, whatever the host (compilers make them one move). */
static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

static uint64_t le32(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
}

static uint64_t round64(uint64_t acc, uint64_t lane) { return rotl(acc + lane * P2, 31) * P1; }

static uint64_t merge(uint64_t acc, uint64_t v) { return (acc ^ round64(0, v)) * P1 + P4; }

uint64_t hp_xxh64(const uint8_t *data, size_t len, uint64_t seed)
{
    const uint8_t *p = data, *end = data + len;
    uint64_t acc;
    if (len >= 32) {
        uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        const uint8_t *last = end - 32;
        do {
            v1 = round64(v1, le64(p));
            v2 = round64(v2, le64(p + 8));
            v3 = round64(v3, le64(p + 16));
            v4 = round64(v4, le64(p + 24));
            p += 32;
        } while (p <= last);
        acc = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
        acc = merge(merge(merge(merge(acc, v1), v2), v3), v4);
    } else {
        acc = seed + P5;
    }
    acc += (uint64_t)len;
    for (; end - p >= 8; p += 8)
        acc = rotl(acc ^ round64(0, le64(p)), 27) * P1 + P4;
    if (end - p >= 4) {
        acc = rotl(acc ^ le32(p) * P1, 23) * P2 + P3;
        p += 4;
    }
    for (; p < end; p++)
        acc = rotl(acc ^ *p * P5, 11) * P1;
    acc ^= acc >> 33;
    acc *= P2;
    acc ^= acc >> 29;
    acc *= P3;
    return acc ^ acc >> 32;
}
