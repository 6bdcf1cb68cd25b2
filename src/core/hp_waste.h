/* Memory waste as JXRay reports it: every kind of waste of a heap, each a
 * list of the objects that waste memory and how many bytes each wastes.
 * docs/waste.md defines every kind and compares them with JXRay's, MAT's
 * and HeapDumpStarDiver's. */
#ifndef HP_WASTE_H
#define HP_WASTE_H

#include "hp_coll.h"
#include "hp_heap.h"

/* The kinds, in the order hprofkit._waste.KINDS names them. */
enum {
    HP_WASTE_DUPLICATE_STRINGS = 0, /* Strings of a text but the kept one: String + array only they hold */
    HP_WASTE_DUPLICATE_ARRAYS,      /* primitive arrays (not a String's) equal to a kept one: shallow */
    HP_WASTE_ZERO_ARRAYS,           /* primitive arrays of length >= 1, every byte zero: shallow */
    HP_WASTE_EMPTY_ARRAYS,          /* object arrays of length >= 1, every element null: shallow */
    HP_WASTE_SPARSE_ARRAYS,         /* object arrays of length >= 1, at least half null: the null slots */
    HP_WASTE_BOXED_NUMBERS,         /* instances of the 8 box classes: shallow - the value's size */
    HP_WASTE_EMPTY_COLLECTIONS,     /* collections of size 0: hp_coll_measure.wasted */
    HP_WASTE_SMALL_COLLECTIONS,     /* size 1: hp_coll_measure.wasted */
    HP_WASTE_SPARSE_COLLECTIONS,    /* size >= 2, size / capacity < 1/2: hp_coll_measure.wasted */
    HP_WASTE_DIRECT_BUFFERS,        /* java.nio.DirectByteBuffer (and subclasses): capacity (native bytes);
                                       0 for a view (att not null), whose memory its att's counts */
    HP_WASTE_DUPLICATE_OBJECT_ARRAYS, /* object arrays of a class and elements equal to a kept one: shallow */
    HP_WASTE_TRAILING_ZERO_ARRAYS,  /* primitive arrays not all zero ending in a long zero run: its bytes */
    HP_WASTE_LONG_STRINGS,          /* Strings of more than long_string_chars characters: their array */
    HP_WASTE_KINDS
};

/* A trailing zero run is long when it holds at least half the array's
 * elements and at least this many. */
#define HP_WASTE_TRAILING_MIN 8

typedef struct hp_waste_item {
    uint32_t index;   /* the object */
    uint64_t wasted;  /* its bytes of this kind's waste */
} hp_waste_item;

typedef struct hp_waste_list {
    hp_waste_item *items; /* largest waste first, ties by index */
    size_t n, cap;
    uint64_t wasted;      /* the items' sum */
} hp_waste_list;

typedef struct hp_waste {
    hp_waste_list kinds[HP_WASTE_KINDS];
    uint64_t total;              /* heap bytes, each object once: its largest waste of any kind but
                                    direct_buffers (whose bytes are native, not the heap's) */
    uint64_t duplicate_boxes;    /* boxes equal (class and value bits) to a kept one (the lowest index) */
    uint64_t duplicate_box_bytes;/* their shallow sizes */
} hp_waste;

/* Finds every kind over the objects whose `keep` bit is set (NULL: all),
 * in one pass over the index (plus hp_coll_measure_each's and
 * hp_duplicate_string_copies' walks; duplicates grouped by 32-bit hashes
 * radix-sorted with their index, a run of one hash told apart by sorting
 * it by contents).  Memory beyond the index: 16 bytes an item (lists
 * grown by half, the boxes' sized at once), 16 a primitive or object array
 * while its duplicates are grouped (its key, then its place in a run), 40 a
 * String with text while the duplicate Strings are, 4 bits an object
 * (String arrays; the collection walk's 3).  `coll` (NULL: no collection
 * kinds) gives the layouts.
 * interrupt (may be NULL) is called every few thousand objects; non-zero
 * stops with HP_E_ABORTED.  *out is the caller's to free with
 * hp_waste_free (also after a failure). */
hp_code hp_waste_find(const hp_heap *h, const hp_coll *coll, const uint64_t *keep, uint64_t long_string_chars,
                      const hp_alloc *alloc, hp_waste *out, int (*interrupt)(void *ctx), void *ctx, hp_error *err);
void hp_waste_free(hp_waste *w, const hp_alloc *alloc);

#endif
