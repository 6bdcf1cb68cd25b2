/* The vocabulary of Badoo's BMD format (docs/bmd.md) that its encoder and
 * decoder share: record tags, type codes, and the protobuf-style varints
 * every number is written in (hp_put_varint writes them). */
#ifndef HP_BMD_FORMAT_H
#define HP_BMD_FORMAT_H

#include "hp_common.h"

#define BMD_VERSION 1

/* Record tags. */
enum {
    BMD_STRING = 1, BMD_HASHED_STRING = 2, BMD_CLASS = 3, BMD_INSTANCE = 4, BMD_ROOTS = 5,
    BMD_OBJECT_ARRAY = 6, BMD_PRIMITIVE_ARRAY = 7, BMD_LEGACY = 8, BMD_TAGS = 9
};

/* Basic types: BMD numbers them in its own order. */
enum {
    BMD_T_OBJECT, BMD_T_INT, BMD_T_BOOLEAN, BMD_T_BYTE, BMD_T_CHAR, BMD_T_FLOAT, BMD_T_DOUBLE, BMD_T_LONG,
    BMD_T_SHORT, BMD_TYPES
};

/* The HPROF type of a BMD type (0..8). */
static inline int bmd_to_hprof_type(int t)
{
    static const unsigned char map[BMD_TYPES] = { HP_T_OBJECT, HP_T_INT, HP_T_BOOLEAN, HP_T_BYTE, HP_T_CHAR,
                                                  HP_T_FLOAT, HP_T_DOUBLE, HP_T_LONG, HP_T_SHORT };
    return map[t];
}

/* The BMD type of a valid HPROF type. */
static inline int bmd_from_hprof_type(int t)
{
    static const signed char map[12] = { -1, -1, BMD_T_OBJECT, -1, BMD_T_BOOLEAN, BMD_T_CHAR, BMD_T_FLOAT,
                                         BMD_T_DOUBLE, BMD_T_BYTE, BMD_T_SHORT, BMD_T_INT, BMD_T_LONG };
    return map[t];
}

/* An int32 as Badoo's writer puts it (hp_put_varint): a negative one
 * sign-extended to 64 bits, so always 10 bytes. */
static inline size_t bmd_put_int32(uint8_t *p, int32_t v)
{
    return hp_put_varint(p, (uint64_t)(int64_t)v);
}

/* Reads a varint from p[0..avail): its length (1..10) with *v set; 0 when
 * the input ends inside it; -1 when it runs on past 10 bytes.  Bits beyond
 * the 64th are dropped, as Badoo's reader does; an int32 is the low 32 bits. */
static inline int bmd_get_varint(const uint8_t *p, size_t avail, uint64_t *v)
{
    uint64_t r = 0;
    size_t i;
    for (i = 0; i < HP_VARINT_MAX; i++) {
        if (i == avail)
            return 0;
        r |= (uint64_t)(p[i] & 0x7F) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = r;
            return (int)i + 1;
        }
    }
    return -1;
}

#endif
