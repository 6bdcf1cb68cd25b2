/* BMD and HPROF inputs built by hand, for the BMD tests and the BMD
 * fuzzer's seeds: a varint writer, and small inputs of every record kind. */
#ifndef BMDKIT_H
#define BMDKIT_H

#include "hp_bmd_format.h"
#include "testkit.h"

static inline void bv(bb *b, uint64_t v)
{
    uint8_t tmp[HP_VARINT_MAX];
    bb_raw(b, tmp, hp_put_varint(tmp, v));
}

static inline void bmd_head(bb *b)
{
    bv(b, 1);
    bv(b, 18);
    bb_raw(b, "JAVA PROFILE 1.0.3", 18);
}

/* A class `id` (super, name) with one object field and `dropped` bytes of dropped fields. */
static inline void bmd_class_def(bb *b, uint32_t id, uint32_t super, uint32_t dropped)
{
    bv(b, BMD_CLASS);
    bv(b, id);
    bv(b, super);
    bv(b, 1);
    bv(b, 0); /* constants */
    bv(b, 1); /* one static int */
    bv(b, 2);
    bv(b, BMD_T_INT);
    bv(b, 7);
    bv(b, 1); /* one object field */
    bv(b, 3);
    bv(b, BMD_T_OBJECT);
    bv(b, dropped);
}

/* A small BMD of each record kind (what the sweeps cut and corrupt). */
static inline void bmd_small(bb *b)
{
    bmd_head(b);
    bv(b, BMD_STRING); bv(b, 1); bv(b, 3); bb_raw(b, "int", 3);
    bv(b, BMD_HASHED_STRING); bv(b, 2); bv(b, 5); bv(b, 99);
    bv(b, BMD_LEGACY); bv(b, HP_TAG_TRACE); bv(b, 12); bb_raw(b, "\0\0\0\1\0\0\0\0\0\0\0\0", 12);
    bmd_class_def(b, 10, 0, 4);
    bmd_class_def(b, 11, 10, 3);
    bv(b, BMD_INSTANCE); bv(b, 20); bv(b, 11); bv(b, 21); bv(b, 0);
    bv(b, BMD_OBJECT_ARRAY); bv(b, 21); bv(b, 10); bv(b, 2); bv(b, 20); bv(b, 0);
    bv(b, BMD_PRIMITIVE_ARRAY); bv(b, 22); bv(b, BMD_T_CHAR); bv(b, 5);
    bv(b, BMD_ROOTS); bv(b, 2); bv(b, 20); bv(b, 21);
}

/* Record orders hprof_small writes besides the usual one. */
enum { LOADS_LAST = 1, OBJECTS_FIRST = 2 };

/* Node extends Object (Node: next (object), count (int); Object: a static int). */
static inline void hprof_small_classes(bb *b, int id)
{
    bb_u1(b, HP_SUB_CLASS_DUMP); bb_id(b, 0x9100); bb_u4(b, 0); bb_id(b, 0x9000);
    bb_id(b, 0); bb_id(b, 0); bb_id(b, 0); bb_id(b, 0); bb_id(b, 0); bb_u4(b, (uint32_t)id + 4);
    bb_u2(b, 0); bb_u2(b, 0); bb_u2(b, 2);
    bb_id(b, 0x102); bb_u1(b, HP_T_OBJECT); bb_id(b, 0x103); bb_u1(b, HP_T_INT);
    bb_u1(b, HP_SUB_CLASS_DUMP); bb_id(b, 0x9000); bb_u4(b, 0); bb_id(b, 0);
    bb_id(b, 0); bb_id(b, 0); bb_id(b, 0); bb_id(b, 0); bb_id(b, 0); bb_u4(b, 0);
    bb_u2(b, 0); bb_u2(b, 1); bb_id(b, 0x103); bb_u1(b, HP_T_INT); bb_u4(b, 42); bb_u2(b, 0);
}

/* Two Nodes (the first with `extra` bytes more than its fields), an array, roots. */
static inline void hprof_small_objects(bb *b, int id, uint32_t extra)
{
    bb_u1(b, HP_SUB_INSTANCE_DUMP); bb_id(b, 0x7000); bb_u4(b, 0); bb_id(b, 0x9100);
    bb_u4(b, (uint32_t)id + 4 + extra);
    bb_id(b, 0x7010); bb_u4(b, 5);
    while (extra--)
        bb_u1(b, 0);
    bb_u1(b, HP_SUB_INSTANCE_DUMP); bb_id(b, 0x7010); bb_u4(b, 0); bb_id(b, 0x9100); bb_u4(b, (uint32_t)id + 4);
    bb_id(b, 0); bb_u4(b, 6);
    bb_u1(b, HP_SUB_OBJ_ARRAY_DUMP); bb_id(b, 0x7020); bb_u4(b, 0); bb_u4(b, 2); bb_id(b, 0x9000);
    bb_id(b, 0x7000); bb_id(b, 0x7010);
    bb_u1(b, HP_SUB_ROOT_STICKY_CLASS); bb_id(b, 0x9100);
    bb_u1(b, HP_SUB_ROOT_JAVA_FRAME); bb_id(b, 0x7020); bb_u4(b, 1); bb_u4(b, 2);
}

static inline void hprof_small_loads(bb *b)
{
    bb_rec_begin(b, HP_TAG_LOAD_CLASS); bb_u4(b, 1); bb_id(b, 0x9000); bb_u4(b, 0); bb_id(b, 0x100); bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_LOAD_CLASS); bb_u4(b, 2); bb_id(b, 0x9100); bb_u4(b, 0); bb_id(b, 0x101); bb_rec_end(b);
}

/* An HPROF of id size `id`: strings, the LOAD_CLASSes (after the heap with
 * LOADS_LAST: the CLASS_DUMPs come first, which Badoo's cruncher refuses),
 * and one heap segment of the classes and objects (objects first with
 * OBJECTS_FIRST). */
static inline void hprof_small(bb *b, int id, int order, uint32_t extra)
{
    b->id = id;
    bb_raw(b, "JAVA PROFILE 1.0.2", 19);
    bb_u4(b, (uint32_t)id);
    bb_u8(b, 0);
    bb_rec_begin(b, HP_TAG_UTF8); bb_id(b, 0x100); bb_raw(b, "java.lang.Object", 16); bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_UTF8); bb_id(b, 0x101); bb_raw(b, "com.x.Node", 10); bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_UTF8); bb_id(b, 0x102); bb_raw(b, "next", 4); bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_UTF8); bb_id(b, 0x103); bb_raw(b, "count", 5); bb_rec_end(b);
    if (!(order & LOADS_LAST))
        hprof_small_loads(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_SEGMENT);
    if (order & OBJECTS_FIRST)
        hprof_small_objects(b, id, extra);
    hprof_small_classes(b, id);
    if (!(order & OBJECTS_FIRST))
        hprof_small_objects(b, id, extra);
    bb_rec_end(b);
    if (order & LOADS_LAST)
        hprof_small_loads(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_END); bb_rec_end(b);
}

#endif
