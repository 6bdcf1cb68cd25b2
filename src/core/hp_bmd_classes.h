/* The BMD decoder's classes: each CLASS_DEFINITION as the CLASS_DUMP the
 * decruncher writes for it (held until the heap is written), the layout its
 * instances are read and written with, and the order the decruncher writes
 * the class dumps in (its HashMap<Integer, ...>'s). */
#ifndef HP_BMD_CLASSES_H
#define HP_BMD_CLASSES_H

#include "hp_common.h"
#include "hp_idmap.h"
#include "hp_sink.h"

typedef struct bmd_class {
    uint32_t id, super;
    size_t dump;         /* its CLASS_DUMP, at arena + dump */
    uint32_t dump_len;
    size_t types;        /* its kept instance fields' BMD types, at arena + types */
    uint32_t n_types;
    uint32_t own;        /* bytes of its instance data in HPROF: kept fields, then zeros */
    uint32_t zeros;      /* ...of which the zeros that stand for the dropped fields */
    uint32_t rank;       /* when its id was first defined */
    /* The chain, once resolved: an instance reads the fields of `first_kept`
     * (index + 1 of this class or the nearest superclass with kept fields;
     * 0 none), then of its `after_kept`...; it is written class by class
     * through `first` / `after` (the classes with kept fields or zeros).
     * `chain`: its HPROF data bytes. */
    uint32_t first_kept, after_kept, first, after;
    uint64_t chain;
    int state;           /* 0, BUSY while resolving, DONE */
} bmd_class;

typedef struct bmd_classes {
    hp_alloc alloc;
    size_t limit;        /* bytes held at most */
    hp_buf arena;
    bmd_class *v;        /* the classes: n of them, in `table` */
    size_t n;
    hp_buf table;
    hp_idmap index;      /* class id -> index */
    hp_buf path;         /* uint32_t: scratch for resolving */
} bmd_classes;

void bmd_classes_init(bmd_classes *c, const hp_alloc *alloc, size_t limit);
void bmd_classes_free(bmd_classes *c);

/* Holds a definition: its CLASS_DUMP dump[0..dump_len) and its kept fields'
 * types.  A later definition of the same id replaces the earlier one (and
 * keeps its rank).  HP_OK, HP_E_LIMIT past the limit, HP_E_NOMEM. */
hp_code bmd_classes_put(bmd_classes *c, uint32_t id, uint32_t super, const uint8_t *dump, uint32_t dump_len,
                        const uint8_t *types, uint32_t n_types, uint32_t own, uint32_t zeros);

/* The class with this id, or NULL. */
bmd_class *bmd_classes_get(const bmd_classes *c, uint32_t id);

/* Resolves the chain of class k (each class once: the table must not change
 * afterwards).  HP_OK, HP_E_CORRUPT when it loops (*looping: the id of a
 * class in the loop), HP_E_NOMEM. */
hp_code bmd_classes_resolve(bmd_classes *c, bmd_class *k, uint32_t *looping);

/* The classes' indexes in the order Java's HashMap<Integer, ...> iterates
 * them, having been put in rank order: by bucket, then rank.  NULL when
 * memory runs out; free with c->alloc. */
uint32_t *bmd_classes_hash_order(const bmd_classes *c);

#endif
