/* The layouts of the collections hp_coll knows: private to the hp_coll*.c
 * files and the table in hp_coll_layouts.c.
 *
 * A layout names the fields a walk reads, by role.  A name may list
 * alternatives separated by '|' ("elementData|array"): the first one the
 * class (or node) has is read.  Fields of the collection itself are
 * resolved once per class; a class whose instances lack one of them does
 * not follow the layout, and the next layout of the same class name (a
 * variant for another JDK) is tried.  Node fields are resolved per node
 * class during the walk (a HashMap holds Node and TreeNode objects). */
#ifndef HP_COLL_LAYOUTS_H
#define HP_COLL_LAYOUTS_H

#include <stddef.h>
#include <stdint.h>

/* How a layout is walked. */
enum coll_kind {
    COLL_EMPTY = 1, /* holds nothing (Collections.EMPTY_LIST...) */
    COLL_ARRAY,     /* slots of one array: `storage`, the first `size` (all without one); maps 2 slots an entry */
    COLL_PARALLEL,  /* entry i: (`storage`[i], `storage2`[i]) for i < `size` (SparseArray) */
    COLL_CIRCULAR,  /* `storage` from index `head` up to index `size` (exclusive), wrapping; or `size` of them */
    COLL_HASH,      /* buckets of `storage`, each a chain of nodes (`key`, `value`, linked by `next`) */
    COLL_SEGMENTS,  /* `storage`: segments, each a hash table `storage2` of nodes, `size` entries each */
    COLL_LINKED,    /* nodes from `storage` (then `storage2` of it), linked by `next` */
    COLL_TREE,      /* a binary search tree from `storage`: nodes with `left`, `right`, `key`, `value` */
    COLL_WRAPPER,   /* the collection in `storage` (HashSet's map, Collections.unmodifiableList's list) */
    COLL_FIELDS     /* one or two elements, `storage` and `storage2`; maps one entry (key, value) */
};

enum coll_flag {
    COLL_REVERSE = 1 << 0,      /* buckets or segments from the last (Hashtable, JDK 5 HashMap) */
    COLL_OPEN = 1 << 1,         /* ARRAY: open addressing, every slot, the empty ones (null key) skipped */
    COLL_TREEBINS = 1 << 2,     /* HASH: a node with a `first` field is a tree bin: its nodes from `first` */
    COLL_WEAK = 1 << 3,         /* HASH: the key is a weak referent: cleared ones are skipped, as iterators do */
    COLL_SIZE_CELLS = 1 << 4,   /* size = `size` (baseCount) + the values of `counterCells` */
    COLL_SENTINEL = 1 << 5,     /* LINKED: the start node is a sentinel: from its next, back to it */
    COLL_DUMMY_HEAD = 1 << 6,   /* LINKED: the start node holds no item: from its next, to null */
    COLL_SKIP_NULL = 1 << 7,    /* LINKED: nodes of null item (or key) are not entries */
    COLL_SKIPLIST = 1 << 8,     /* LINKED: nor nodes of null value or whose value is the node (deleted) */
    COLL_COUNTED = 1 << 9,      /* CIRCULAR: `size` counts the elements from `head` */
    COLL_KEYS = 1 << 10,        /* WRAPPER: the keys of the inner map (a set) */
    COLL_OWNS = 1 << 11,        /* WRAPPER: the inner collection is the wrapper's storage, not a view's */
    COLL_NEEDS_MARKER = 1 << 12 /* the layout applies only when the marker static exists */
};

typedef struct coll_spec {
    const char *name;        /* the Java class */
    uint8_t kind;            /* enum coll_kind */
    uint8_t shape;           /* HP_COLL_LIST/SET/MAP; 0 for a wrapper: its inner's shape */
    uint16_t flags;          /* enum coll_flag */
    const char *storage;     /* the array, first node, root, inner collection or first element */
    const char *storage2;    /* PARALLEL values; ARRAY the second array (hashes: measured only); LINKED the
                                field of the start object that holds the first node; SEGMENTS a segment's
                                table; FIELDS the second element or the value */
    const char *size;        /* size field (SEGMENTS: a segment's count; CIRCULAR: the tail index or count) */
    const char *head;        /* CIRCULAR: the head index */
    const char *key, *value, *next; /* node fields (LINKED lists: `key` is the item) */
    const char *left, *right;       /* TREE node fields */
    const char *null_entry;  /* HASH: the entry of the null key, out of the table (Android's entryForNullKey) */
    const char *null_flag;   /* HASH: a boolean node field set when the key is null (Android's WeakHashMap) */
    const char *capacity;    /* LINKED: an array measured for fill ratio and waste, not walked (LinkedHashMap's
                                table) */
    const char *marker;      /* a static whose object stands for null (NULL_KEY), a deleted entry (DELETED)
                                or no element (EMPTY) */
    const char *marker_class; /* the class declaring `marker`, '|' alternatives (NULL: this one) */
} coll_spec;

extern const coll_spec coll_specs[];
extern const size_t coll_spec_count;

#endif
