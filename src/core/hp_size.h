/* Shallow sizes: the object-size model of hprofkit.
 *
 * HPROF records no object sizes for HotSpot (a CLASS_DUMP gives the bytes of
 * its instance fields as written in the dump, references at id size), so a
 * size is a model, one formula with a few parameters:
 *  - an object header of `min_instance` bytes;
 *  - an instance: raw dumps take the CLASS_DUMP instance size as written;
 *    others add up the header and every field of the class and its
 *    superclasses (references at `oop_size`), rounded up to `align`;
 *  - an array: its first element at `array_base` (`array_base_wide` for
 *    8-byte elements), then the elements (references at `oop_size`),
 *    rounded up to `align`;
 *  - a class object weighs an instance of java.lang.Class; or, with a
 *    `mirror_base`, that many bytes and its class's statics (references at
 *    `oop_size`) rounded up to 8, rounded up to `align`: HotSpot's
 *    java.lang.Class instance (a "mirror") holds fields HPROF does not list,
 *    then the statics.
 * VisualVM's parameters (hp_size_model_init, hp_size_model_set_oop), which
 * the histogram of hp_stats keeps: a header of id size + reference size (12
 * or 16 bytes on 64-bit JVMs, 8 on 32-bit ones; Android dumps, "raw" sizes,
 * whose java.lang.Object CLASS_DUMP gives a non-zero size, take that size),
 * arrays at header + 4 whatever their elements, alignment 8.  `oop_size` is
 * 4 or 8: 32-bit dumps have 4; 64-bit dumps guess compressed oops
 * (hp_heap_size_model says how); "uncompressed" keeps the id size.  The JVM's
 * own parameters, read off a dump's addresses, come from hp_layout.h. */
#ifndef HP_SIZE_H
#define HP_SIZE_H

#include "hp_common.h"

typedef struct hp_size_model {
    int id_size;
    int oop_size;     /* bytes of a reference field or array element */
    int min_instance; /* object header (VisualVM's "minimum instance size") */
    int array_base;   /* offset of an array's first element of 1 to 4 bytes */
    int array_base_wide; /* of an 8-byte one (long, double, a reference of 8) */
    int align;        /* objects start at multiples of this (a power of two) */
    int mirror_base;  /* a class object before its statics; 0: it weighs a java.lang.Class instance */
    int raw;          /* 1: instance sizes are the CLASS_DUMP sizes as written (Android) */
} hp_size_model;

/* The model before any guess: references at id size.  `object_raw_size` is
 * java.lang.Object's CLASS_DUMP instance size (0 when absent or zero). */
void hp_size_model_init(hp_size_model *m, int id_size, uint32_t object_raw_size);

/* Sets the reference size (4 or 8) and VisualVM's header and array bases
 * that follow from it. */
void hp_size_model_set_oop(hp_size_model *m, int oop_size);

static inline uint64_t hp_size_align(uint64_t size) { return (size + 7) & ~(uint64_t)7; }

/* `size` rounded up to the model's alignment. */
static inline uint64_t hp_size_round(const hp_size_model *m, uint64_t size)
{
    return (size + (uint64_t)m->align - 1) & ~((uint64_t)m->align - 1);
}

/* Bytes of one field or element of basic type `type` under the model. */
static inline int hp_size_elem(const hp_size_model *m, int type)
{
    return type == HP_T_OBJECT ? m->oop_size : hp_type_size(type, m->id_size);
}

/* Shallow size of an array of `count` elements of `elem_type`. */
static inline uint64_t hp_size_array(const hp_size_model *m, int elem_type, uint64_t count)
{
    int elem = hp_size_elem(m, elem_type);
    return hp_size_round(m, (uint64_t)(elem == 8 ? m->array_base_wide : m->array_base) + count * (uint64_t)elem);
}

/* Shallow size of an instance of a class whose fields (its own and its
 * superclasses') add up to `field_bytes` under the model, and whose
 * CLASS_DUMP says `raw_size`. */
static inline uint64_t hp_size_instance(const hp_size_model *m, uint64_t field_bytes, uint32_t raw_size)
{
    return m->raw ? raw_size : hp_size_round(m, (uint64_t)m->min_instance + field_bytes);
}

/* Shallow size of a class object whose class's statics are `refs` references
 * and `bytes` of primitives, under a model with a mirror base. */
static inline uint64_t hp_size_mirror(const hp_size_model *m, uint64_t refs, uint64_t bytes)
{
    return hp_size_round(m, (uint64_t)m->mirror_base + hp_size_align(refs * (uint64_t)m->oop_size + bytes));
}

#endif
