/* The collection layouts hp_coll walks: the one table of them.
 *
 * Variants of one class come in order, the most specific first: the first
 * whose collection fields the class has is its layout.  Subclasses follow
 * their nearest known superclass (Properties is a Hashtable before JDK 9,
 * a wrapper of its ConcurrentHashMap `map` after; Stack is a Vector).
 * Iteration orders are the JDK's and Android's own: HashMap's buckets
 * forward, Hashtable's and WeakHashMap's backward, JDK 5's HashMap
 * backward, the segments of a JDK 5-7 ConcurrentHashMap and each of their
 * tables backward; Android's HashMap gives its null key first. */
#include "hp_coll_layouts.h"

#include "hp_coll.h"

#define LIST HP_COLL_LIST
#define SET HP_COLL_SET
#define MAP HP_COLL_MAP
#define AS_INNER 0

const coll_spec coll_specs[] = {
    /* ---- maps ---- */
    /* JDK 5: the null key is the static NULL_KEY; buckets from the last. */
    { "java.util.HashMap", COLL_HASH, MAP, COLL_REVERSE | COLL_NEEDS_MARKER, .storage = "table", .size = "size",
      .key = "key", .value = "value", .next = "next", .marker = "NULL_KEY" },
    /* Android before N: the null key's entry out of the table, given first. */
    { "java.util.HashMap", COLL_HASH, MAP, 0, .storage = "table", .size = "size", .key = "key", .value = "value",
      .next = "next", .null_entry = "entryForNullKey" },
    /* JDK 6+ and Android N+ (tree bins stay linked by next). */
    { "java.util.HashMap", COLL_HASH, MAP, 0, .storage = "table", .size = "size", .key = "key", .value = "value",
      .next = "next" },
    /* JDK 8+, Android N+: head and after; JDK 5-7 and Android before N: a sentinel header. */
    { "java.util.LinkedHashMap", COLL_LINKED, MAP, 0, .storage = "head", .size = "size", .key = "key",
      .value = "value", .next = "after", .capacity = "table" },
    { "java.util.LinkedHashMap", COLL_LINKED, MAP, COLL_SENTINEL, .storage = "header", .size = "size", .key = "key",
      .value = "value", .next = "after|nxt", .capacity = "table" },
    { "java.util.Hashtable", COLL_HASH, MAP, COLL_REVERSE, .storage = "table", .size = "count", .key = "key",
      .value = "value", .next = "next" },
    /* Android before N: its own Hashtable, buckets forward. */
    { "java.util.Hashtable", COLL_HASH, MAP, 0, .storage = "table", .size = "size", .key = "key", .value = "value",
      .next = "next" },
    /* JDK 9+: a ConcurrentHashMap holds the entries (the Hashtable's own table stays empty). */
    { "java.util.Properties", COLL_WRAPPER, AS_INNER, COLL_OWNS, .storage = "map" },
    { "java.util.WeakHashMap", COLL_HASH, MAP, COLL_REVERSE | COLL_WEAK, .storage = "table", .size = "size",
      .key = "referent", .value = "value", .next = "next", .marker = "NULL_KEY" },
    /* Android before N (Apache Harmony's): isNull marks the null key. */
    { "java.util.WeakHashMap", COLL_HASH, MAP, COLL_WEAK, .storage = "elementData", .size = "elementCount",
      .key = "referent", .value = "value", .next = "next", .null_flag = "isNull" },
    { "java.util.IdentityHashMap", COLL_ARRAY, MAP, COLL_OPEN, .storage = "table|elementData", .size = "size",
      .marker = "NULL_KEY|NULL_OBJECT" },
    { "java.util.TreeMap", COLL_TREE, MAP, 0, .storage = "root", .size = "size", .key = "key", .value = "value",
      .left = "left", .right = "right" },
    /* JDK 8+ (and Android N+): baseCount plus the counter cells. */
    { "java.util.concurrent.ConcurrentHashMap", COLL_HASH, MAP, COLL_TREEBINS | COLL_SIZE_CELLS, .storage = "table",
      .size = "baseCount", .key = "key", .value = "val", .next = "next" },
    /* JDK 5-7, Android before N: segments, each a table of HashEntry. */
    { "java.util.concurrent.ConcurrentHashMap", COLL_SEGMENTS, MAP, COLL_REVERSE, .storage = "segments",
      .storage2 = "table", .size = "count", .key = "key", .value = "value", .next = "next" },
    { "java.util.concurrent.ConcurrentSkipListMap", COLL_LINKED, MAP, COLL_SKIP_NULL | COLL_SKIPLIST,
      .storage = "head", .storage2 = "node", .key = "key", .value = "val|value", .next = "next" },
    { "java.util.Collections$EmptyMap", COLL_EMPTY, MAP, 0, .storage = NULL },
    { "java.util.Collections$SingletonMap", COLL_FIELDS, MAP, 0, .storage = "k", .storage2 = "v" },
    { "java.util.Collections$UnmodifiableMap", COLL_WRAPPER, AS_INNER, 0, .storage = "m" },
    { "java.util.Collections$SynchronizedMap", COLL_WRAPPER, AS_INNER, 0, .storage = "m" },
    { "java.util.Collections$CheckedMap", COLL_WRAPPER, AS_INNER, 0, .storage = "m" },
    { "java.util.ImmutableCollections$Map1", COLL_FIELDS, MAP, 0, .storage = "k0", .storage2 = "v0" },
    { "java.util.ImmutableCollections$MapN", COLL_ARRAY, MAP, COLL_OPEN, .storage = "table", .size = "size" },
    { "java.util.ImmutableCollections$Map0", COLL_EMPTY, MAP, 0, .storage = NULL },
    { "android.util.ArrayMap", COLL_ARRAY, MAP, 0, .storage = "mArray", .storage2 = "mHashes", .size = "mSize" },
    { "androidx.collection.SimpleArrayMap", COLL_ARRAY, MAP, 0, .storage = "mArray|keysAndValues|array",
      .storage2 = "mHashes|hashes", .size = "mSize|_size|size" },
    { "android.support.v4.util.SimpleArrayMap", COLL_ARRAY, MAP, 0, .storage = "mArray", .storage2 = "mHashes",
      .size = "mSize" },
    { "android.util.SparseArray", COLL_PARALLEL, MAP, 0, .storage = "mKeys", .storage2 = "mValues", .size = "mSize",
      .marker = "DELETED" },
    { "android.util.LongSparseArray", COLL_PARALLEL, MAP, 0, .storage = "mKeys", .storage2 = "mValues",
      .size = "mSize", .marker = "DELETED" },
    { "android.util.SparseIntArray", COLL_PARALLEL, MAP, 0, .storage = "mKeys", .storage2 = "mValues",
      .size = "mSize" },
    { "android.util.SparseBooleanArray", COLL_PARALLEL, MAP, 0, .storage = "mKeys", .storage2 = "mValues",
      .size = "mSize" },
    { "android.util.SparseLongArray", COLL_PARALLEL, MAP, 0, .storage = "mKeys", .storage2 = "mValues",
      .size = "mSize" },
    { "android.util.LongSparseLongArray", COLL_PARALLEL, MAP, 0, .storage = "mKeys", .storage2 = "mValues",
      .size = "mSize" },
    { "androidx.collection.SparseArrayCompat", COLL_PARALLEL, MAP, 0, .storage = "mKeys|keys",
      .storage2 = "mValues|values", .size = "mSize|size", .marker = "DELETED",
      .marker_class = "androidx.collection.SparseArrayCompat|androidx.collection.SparseArrayCompatKt" },
    { "androidx.collection.LongSparseArray", COLL_PARALLEL, MAP, 0, .storage = "mKeys|keys",
      .storage2 = "mValues|values", .size = "mSize|size", .marker = "DELETED",
      .marker_class = "androidx.collection.LongSparseArray|androidx.collection.LongSparseArrayKt" },
    { "android.support.v4.util.SparseArrayCompat", COLL_PARALLEL, MAP, 0, .storage = "mKeys", .storage2 = "mValues",
      .size = "mSize", .marker = "DELETED" },
    { "android.support.v4.util.LongSparseArray", COLL_PARALLEL, MAP, 0, .storage = "mKeys", .storage2 = "mValues",
      .size = "mSize", .marker = "DELETED" },

    /* ---- sets ---- */
    { "java.util.HashSet", COLL_WRAPPER, SET, COLL_KEYS | COLL_OWNS, .storage = "map|backingMap" },
    { "java.util.TreeSet", COLL_WRAPPER, SET, COLL_KEYS | COLL_OWNS, .storage = "m|backingMap" },
    { "java.util.concurrent.ConcurrentSkipListSet", COLL_WRAPPER, SET, COLL_KEYS | COLL_OWNS, .storage = "m" },
    { "java.util.concurrent.CopyOnWriteArraySet", COLL_WRAPPER, SET, COLL_OWNS, .storage = "al" },
    { "java.util.Collections$SetFromMap", COLL_WRAPPER, SET, COLL_KEYS | COLL_OWNS, .storage = "m" },
    { "java.util.Collections$EmptySet", COLL_EMPTY, SET, 0, .storage = NULL },
    { "java.util.Collections$SingletonSet", COLL_FIELDS, SET, 0, .storage = "element" },
    { "java.util.ImmutableCollections$Set12", COLL_FIELDS, SET, 0, .storage = "e0", .storage2 = "e1",
      .marker = "EMPTY", .marker_class = "java.util.ImmutableCollections" },
    { "java.util.ImmutableCollections$SetN", COLL_ARRAY, SET, COLL_OPEN, .storage = "elements", .size = "size" },
    { "java.util.ImmutableCollections$Set0", COLL_EMPTY, SET, 0, .storage = NULL },
    { "android.util.ArraySet", COLL_ARRAY, SET, 0, .storage = "mArray", .storage2 = "mHashes", .size = "mSize" },
    { "androidx.collection.ArraySet", COLL_ARRAY, SET, 0, .storage = "mArray|array", .storage2 = "mHashes|hashes",
      .size = "mSize|_size" },

    /* ---- lists and queues ---- */
    { "java.util.ArrayList", COLL_ARRAY, LIST, 0, .storage = "elementData|array", .size = "size" },
    { "java.util.Vector", COLL_ARRAY, LIST, 0, .storage = "elementData", .size = "elementCount" },
    /* JDK 7+: first, Node.item; JDK 5-6 and Android before N: a sentinel (header, voidLink). */
    { "java.util.LinkedList", COLL_LINKED, LIST, 0, .storage = "first", .size = "size", .key = "item",
      .next = "next" },
    { "java.util.LinkedList", COLL_LINKED, LIST, COLL_SENTINEL, .storage = "header|voidLink", .size = "size",
      .key = "element|data", .next = "next" },
    { "java.util.ArrayDeque", COLL_CIRCULAR, LIST, 0, .storage = "elements", .head = "head", .size = "tail" },
    { "java.util.concurrent.ArrayBlockingQueue", COLL_CIRCULAR, LIST, COLL_COUNTED, .storage = "items",
      .head = "takeIndex", .size = "count" },
    { "java.util.concurrent.CopyOnWriteArrayList", COLL_ARRAY, LIST, 0, .storage = "array|elements" },
    { "java.util.PriorityQueue", COLL_ARRAY, LIST, 0, .storage = "queue", .size = "size" },
    { "java.util.concurrent.PriorityBlockingQueue", COLL_ARRAY, LIST, 0, .storage = "queue", .size = "size" },
    { "java.util.concurrent.PriorityBlockingQueue", COLL_WRAPPER, LIST, COLL_OWNS, .storage = "q" },
    { "java.util.concurrent.LinkedBlockingQueue", COLL_LINKED, LIST, COLL_DUMMY_HEAD, .storage = "head",
      .key = "item", .next = "next" },
    { "java.util.concurrent.LinkedBlockingDeque", COLL_LINKED, LIST, 0, .storage = "first", .size = "count",
      .key = "item", .next = "next" },
    { "java.util.concurrent.ConcurrentLinkedQueue", COLL_LINKED, LIST, COLL_SKIP_NULL, .storage = "head",
      .key = "item", .next = "next" },
    { "java.util.concurrent.ConcurrentLinkedDeque", COLL_LINKED, LIST, COLL_SKIP_NULL, .storage = "head",
      .key = "item", .next = "next" },
    { "java.util.Collections$EmptyList", COLL_EMPTY, LIST, 0, .storage = NULL },
    { "java.util.Collections$SingletonList", COLL_FIELDS, LIST, 0, .storage = "element" },
    { "java.util.ImmutableCollections$List12", COLL_FIELDS, LIST, 0, .storage = "e0", .storage2 = "e1",
      .marker = "EMPTY", .marker_class = "java.util.ImmutableCollections" },
    { "java.util.ImmutableCollections$ListN", COLL_ARRAY, LIST, 0, .storage = "elements" },
    { "java.util.ImmutableCollections$List0", COLL_EMPTY, LIST, 0, .storage = NULL },
    { "java.util.Arrays$ArrayList", COLL_ARRAY, LIST, 0, .storage = "a" },

    /* ---- views over another collection (Collections.unmodifiableList...) ---- */
    { "java.util.Collections$UnmodifiableCollection", COLL_WRAPPER, AS_INNER, 0, .storage = "c" },
    { "java.util.Collections$SynchronizedCollection", COLL_WRAPPER, AS_INNER, 0, .storage = "c" },
    { "java.util.Collections$CheckedCollection", COLL_WRAPPER, AS_INNER, 0, .storage = "c" },
};

const size_t coll_spec_count = sizeof coll_specs / sizeof coll_specs[0];
