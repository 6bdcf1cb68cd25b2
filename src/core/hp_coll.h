/* Collections of a heap: the entries of java.util and Android collections,
 * read from the dump by one walker over a table of layouts.
 *
 * Every known collection class has one or more layouts in
 * hp_coll_layouts.c (JDK 5 to 25 and Android variants: which fields hold
 * the table, the size, the nodes' key, value and next...).  hp_coll_new
 * resolves, once per heap, which layout each class follows: its own or that
 * of its nearest known superclass (a LinkedHashMap subclass is walked as a
 * LinkedHashMap), the first variant whose fields the class has.  After
 * that the hp_coll is immutable: walks from several threads may share it.
 *
 * A walk is bounded: it visits at most as many nodes as the heap has
 * objects, so a dump whose nodes loop gives HP_E_CORRUPT, never a hang. */
#ifndef HP_COLL_H
#define HP_COLL_H

#include "hp_heap.h"

/* What a collection holds: elements (lists and queues, sets) or entries. */
enum { HP_COLL_NONE = 0, HP_COLL_LIST, HP_COLL_SET, HP_COLL_MAP };

typedef struct hp_coll hp_coll;

/* Resolves the layouts of every class of `h` (which must outlive it), each
 * class after its superclass, in time linear in the number of classes
 * (a class named by no layout takes its superclass's, moved by its own
 * fields: Java reads a field where it is declared).  interrupt (may be
 * NULL) is called every 1,024 classes: nonzero stops with HP_E_ABORTED. */
hp_code hp_coll_new(const hp_heap *h, const hp_alloc *alloc, int (*interrupt)(void *ctx), void *ctx, hp_coll **out,
                    hp_error *err);
void hp_coll_free(hp_coll *c);

/* The shape (HP_COLL_*) of object `index`: HP_COLL_NONE when it is not an
 * instance of a known collection.  *known (may be NULL) is set to the Java
 * name of the class whose layout it follows ("java.util.HashMap"). */
int hp_coll_shape(const hp_coll *c, uint32_t index, const char **known);

/* A key, an element or a value: a reference (type HP_T_OBJECT: id 0 for
 * null; index HP_NONE for null or an id absent from the dump) or a
 * primitive (the bytes as the dump writes them, big-endian). */
typedef struct hp_coll_value {
    int type;          /* 0 when there is none (the value of a list element) */
    uint32_t index;
    uint64_t id;
    uint8_t bytes[8];
} hp_coll_value;

/* Receives one element (value->type 0) or one entry; non-zero stops the walk. */
typedef int (*hp_coll_emit)(void *ctx, const hp_coll_value *key, const hp_coll_value *value);

/* Walks collection `index` in its iteration order (as Java iterates it,
 * except where the JDK randomises the order: ImmutableCollections' SetN and
 * MapN come in table order).  HP_OK; HP_E_USAGE when it is no collection;
 * HP_E_CORRUPT (err at the collection's sub-record) when its nodes loop or
 * break its layout; HP_E_ABORTED when emit stopped it; HP_E_NOMEM. */
hp_code hp_coll_walk(const hp_coll *c, uint32_t index, hp_coll_emit emit, void *ctx, hp_error *err);

/* What a collection declares and costs, without walking its nodes. */
typedef struct hp_coll_measure {
    int shape;          /* HP_COLL_* (HP_COLL_NONE: not a collection; the rest is unset) */
    int64_t size;       /* its size as its fields say (size, count, mSize, baseCount + cells...), -1 unknown */
    int64_t capacity;   /* slots of its backing array(s); -1 when not array-backed */
    uint64_t wasted;    /* bytes of backing arrays it does not use (hp_coll_measure_of) */
    uint32_t inner;     /* a wrapper's collection (a HashSet's HashMap), else HP_NONE */
    int owns_inner;     /* the inner collection is the wrapper's own storage (HashSet), not a view's */
    int size_corrupt;   /* size is one its storage cannot hold (below -1; above an array's slots; above
                           the heap's objects for nodes): no fill ratio, and the waste rows skip its fill */
} hp_coll_measure;

/* Measures collection `index`.  capacity counts a map's entries (an
 * ArrayMap's mArray holds 2 slots an entry); fill ratio = size / capacity.
 * wasted: for an empty collection (size 0) the whole shallow size of its
 * backing arrays, else their unused slots (capacity - size) at the
 * element size (the model's reference size for object arrays); a wrapper
 * measures as its inner collection. */
void hp_coll_measure_of(const hp_coll *c, uint32_t index, hp_coll_measure *out);

/* Per class, what collection_waste reports. */
typedef struct hp_coll_class_waste {
    uint64_t instances, empty;   /* instances measured; those of size 0 */
    uint64_t corrupt;            /* instances whose size cannot be (hp_coll_measure.size_corrupt): no fill */
    uint64_t filled;             /* instances with a capacity > 0 (the fill ratios summed) */
    double fill_sum;
    uint64_t wasted;
} hp_coll_class_waste;

/* Measures every collection of the heap into rows[class ordinal] (zeroed
 * by the caller, hp_heap_class_count entries).  The collection a wrapper
 * owns (a HashSet's HashMap, a TreeSet's TreeMap) counts under the
 * wrapper, not under its own class.  A backing array that more than one
 * of the collections measured holds (Android's static HashMap.EMPTY_TABLE
 * behind every empty map) is nobody's waste: a first pass finds them,
 * costing a second measure of every collection.  interrupt (may be NULL)
 * is called every few thousand objects; non-zero stops with HP_E_ABORTED.
 * `keep` (NULL: every collection) is a bit per object: only the
 * collections whose bit is set are measured (the live ones). */
hp_code hp_coll_waste(const hp_coll *c, const uint64_t *keep, hp_coll_class_waste *rows, int (*interrupt)(void *ctx), void *ctx,
                      hp_error *err);

/* Receives one measured collection (its index, its measure); non-zero stops
 * the walk with HP_E_ABORTED. */
typedef int (*hp_coll_measured_fn)(void *ctx, uint32_t index, const hp_coll_measure *m);

/* hp_coll_waste's walk, each collection it counts given to fn (in index
 * order) with its measure as hp_coll_waste adds it up: owned collections
 * under their wrapper, shared backing arrays nobody's waste. */
hp_code hp_coll_measure_each(const hp_coll *c, const uint64_t *keep, hp_coll_measured_fn fn, void *fn_ctx,
                             int (*interrupt)(void *ctx), void *ctx, hp_error *err);

#endif
