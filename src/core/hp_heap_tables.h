/* The heap index as columns: fixed-width arrays that a columnar library
 * (Apache Arrow) wraps without copying, one row per object, reference, GC
 * root, class or primitive field value.  The caller allocates every column
 * for the whole table and fills it in slices of rows (so it can check for
 * interrupts between them); slices of objects start at multiples of 8, so
 * two slices never share a byte of a validity bitmap.  Bitmaps are Arrow's:
 * bit i (LSB first) set when row i has a value.  Integers are in host
 * order; ids and sizes are int64 (an id past 2^63, which no real dump has,
 * reads as its two's complement).  Text is valid UTF-8 (hp_utf8.h) in
 * dictionaries of distinct strings (hp_strdict.h) or, for String values,
 * per slice. */
#ifndef HP_HEAP_TABLES_H
#define HP_HEAP_TABLES_H

#include "hp_heap.h"
#include "hp_paths.h"
#include "hp_reach.h"
#include "hp_strdict.h"

/* The fills ask for records this many objects ahead
 * (hp_heap_prefetch_record): an array's length and elements, an instance's
 * fields, are each read once, and without the hint every such read waited
 * on memory (reading the instances in hp_ref_iter_init was the references'
 * hottest spot). */
enum { HP_TABLES_AHEAD = 16 };

/* Sets (on) or clears bit i of an Arrow validity bitmap. */
static inline void hp_tables_set_bit(uint8_t *bitmap, uint64_t i, int on)
{
    uint8_t mask = (uint8_t)(1u << (i & 7));
    if (on)
        bitmap[i >> 3] |= mask;
    else
        bitmap[i >> 3] &= (uint8_t)~mask;
}

/* ---- names: the dictionaries every table shares ---- */

/* Class kinds as Perfetto's heap graphs name them (its HeapGraphType.Kind:
 * ART's class flags), in dictionary-code order. */
enum { HP_CK_NORMAL, HP_CK_NOREFERENCES, HP_CK_STRING, HP_CK_ARRAY, HP_CK_CLASS, HP_CK_CLASSLOADER,
       HP_CK_DEXCACHE, HP_CK_SOFT_REFERENCE, HP_CK_WEAK_REFERENCE, HP_CK_FINALIZER_REFERENCE,
       HP_CK_PHANTOM_REFERENCE, HP_CK_COUNT };
extern const char *const hp_class_kind_names[HP_CK_COUNT];

/* Per class ordinal: its name's code in `classes` (the Java name, as the
 * API gives it: the clear one with a mapping), the code of the name the
 * dump gives it (dump_codes: HeapClass.obfuscated_name), its kind, and the codes of its fields' names in `names`:
 * for reference field slot k (hp_ref.slot), ref_codes[ref_base[c] + k] is
 * the name and ref_qualified[...] "Declaring.name"; statics likewise
 * (static_base, static_codes, static_qualified, static number = slot);
 * primitive instance fields in layout order (prim_base, prim_codes,
 * prim_qualified).  A field whose name the dump lacks has code -1.
 * element_codes[i] names array element i ("[i]", i < element_count);
 * loader_code names a class object's loader reference ("<loader>"). */
typedef struct hp_table_names {
    hp_strdict classes, names;
    int32_t *class_codes, *dump_codes;
    int8_t *class_kinds;
    uint32_t *ref_base, *static_base, *prim_base;
    int32_t *ref_codes, *ref_qualified, *static_codes, *static_qualified, *prim_codes, *prim_qualified;
    int32_t *element_codes;
    uint32_t element_count;
    int32_t loader_code;
    const hp_alloc *alloc;
    uint8_t *work[2];           /* room for one name, owned here so a fault mid-build leaks nothing */
    size_t work_cap[2];
} hp_table_names;

/* Builds the dictionaries for `elements` array element names; reads the
 * mapping (names and field types) twice.  HP_OK, HP_E_NOMEM, HP_E_LIMIT
 * (past 2^31 - 1 names or bytes) or HP_E_CORRUPT (the class dumps read
 * differently the second time: the file changed while read).  Free with hp_table_names_free (also after a
 * failure, or a fault in the middle: everything is owned by `t`). */
hp_code hp_table_names_build(hp_table_names *t, const hp_heap *h, uint32_t elements, const hp_alloc *alloc);
void hp_table_names_free(hp_table_names *t);

/* ---- objects: one row per object index ---- */
typedef struct hp_object_columns {
    const int64_t *class_ids;   /* in: the id of every class by ordinal */
    const int16_t *heap_codes;  /* in: [h + 1] the code of Android heap h, [0] of objects in none */
    const int8_t *root_codes;   /* in: root sub-record tag -> code */
    int64_t *id;
    int64_t *class_id;
    uint8_t *class_valid;       /* bitmap: the object has a class in the dump */
    int8_t *kind;               /* hp_kind */
    int64_t *shallow_size;
    int16_t *heap;
    uint8_t *heap_valid;        /* bitmap: heap_codes gave a code (>= 0) */
    int8_t *root_type;          /* the kind of its GC root (hp_tables_root_rank picks one) */
    uint8_t *root_valid;
    int64_t *array_length;      /* arrays: elements */
    uint8_t *array_valid;
    int64_t *array_hash;        /* primitive arrays: XXH64 of the elements as the dump holds them */
    uint8_t *hash_valid;
    int64_t *array_nulls;       /* object arrays: null elements (the waste kinds' empty and sparse arrays) */
    uint8_t *nulls_valid;
    int64_t *array_refs_hash;   /* object arrays: XXH64 of the element ids as the dump holds them */
    int64_t *array_trailing_zeros; /* primitive arrays: zero elements at the end (= length: all zero) */
    uint8_t *zeros_valid;
    uint32_t *max_elements;     /* raised to the length of the longest object array */
    int64_t *class_objects;     /* per class ordinal, added to: instances and arrays */
    int64_t *class_shallow;     /* per class ordinal, added to: their shallow sizes */
} hp_object_columns;

/* Fills rows [start, end) of the object columns; start % 8 == 0. */
void hp_tables_objects(const hp_heap *h, uint32_t start, uint32_t end, const hp_object_columns *c);

/* Which of an object's GC roots names its root_type: the lowest rank wins,
 * then the first in file order (Perfetto's precedence: sticky class, JNI
 * global, JNI local, then any). */
int hp_tables_root_rank(int tag);

/* ---- String values (java.lang.String instances), per slice ---- */
typedef struct hp_string_columns {
    uint32_t max_units;         /* characters (UTF-16 units) of text kept */
    int64_t *length;            /* object rows: String.length() */
    uint8_t *valid;             /* object rows: a String whose characters are in the dump */
    int32_t *offsets;           /* slice rows + 1, from 0: the text in `data` */
    uint8_t *data;              /* grown by hp_tables_strings (alloc) */
    size_t data_len, data_cap;
} hp_string_columns;

/* Fills rows [start, end) (start % 8 == 0): length and valid at the
 * object rows, offsets from 0 for the slice, the text from data_len = 0.
 * HP_OK, HP_E_NOMEM, or HP_E_LIMIT when the slice's text passes 2^31 - 1
 * bytes (32-bit offsets; never with 8,192 rows * 3 * max_units below it). */
hp_code hp_tables_strings(const hp_heap *h, uint32_t start, uint32_t end, hp_string_columns *c,
                          const hp_alloc *alloc);

/* ---- reachability: after hp_reach_dominators and a full hp_reach_paths ---- */
typedef struct hp_reach_columns {
    int64_t *retained_size;     /* hp_reach_retained */
    int64_t *dominator_id;
    uint8_t *dominator_valid;   /* bitmap: the object has an immediate dominator */
    uint8_t *reachable;         /* bitmap: the search from the GC roots reached it */
    int32_t *root_distance;     /* hp_tables_root_distances */
} hp_reach_columns;

/* Fills rows [start, end); start % 8 == 0. */
void hp_tables_reach(const hp_reach *r, const hp_bfs *b, const hp_heap *h, uint32_t start, uint32_t end,
                     const hp_reach_columns *c);

/* References from a root to each vertex on its search path (0 for a root),
 * -1 for one the search did not reach; `stack` holds n entries.  Linear. */
void hp_tables_root_distances(const hp_bfs *b, int32_t *distance, uint32_t *stack);

/* ---- references: one row per outbound reference, in source index order,
 * filled slice by slice into rows of the slice's own (Arrow: a chunk) ---- */
typedef struct hp_ref_columns {
    int64_t *source_id;
    int64_t *target_id;
    int32_t *name;              /* code in names.names (0 where name_valid is clear) */
    int32_t *qualified;         /* likewise, "Declaring.field" */
    uint8_t *name_valid, *qualified_valid;
} hp_ref_columns;
/* (The target's class is a join on target_id: finding each target would
 * cost the fill a look-up per reference.) */

/* An upper bound of the references of objects [start, end), from their
 * object columns (kind, array_length) and the names' field counts, without
 * reading the dump: their reference slots (reference fields, elements,
 * statics and a loader). */
uint64_t hp_tables_max_refs(const hp_heap *h, const hp_table_names *names, const int8_t *kind,
                            const int64_t *array_length, uint32_t start, uint32_t end);
/* Fills the references of objects [start, end) into rows 0.. of `c`, at
 * most `cap` (hp_tables_max_refs): the rows written, or -1 when there are
 * more or a slot the names do not have (a dump rewritten since the bound
 * or the names were made); nothing is written past `cap`. */
int64_t hp_tables_refs(const hp_heap *h, uint32_t start, uint32_t end, const hp_table_names *names, uint64_t cap,
                       const hp_ref_columns *c);

/* ---- primitive field values: one row per primitive instance field of an
 * instance and per primitive static of a class object ---- */
typedef struct hp_field_columns {
    int64_t *object_id;
    int32_t *name, *qualified;  /* codes in names.names, -1 for none */
    int8_t *type;               /* HP_T_* - HP_T_BOOLEAN: boolean, char, float, double, byte, short, int, long */
    int64_t *int_value;         /* boolean (0/1), byte, char (its UTF-16 unit), short, int, long */
    uint8_t *int_valid;
    double *double_value;       /* float (exactly widened), double */
    uint8_t *double_valid;
} hp_field_columns;

uint64_t hp_tables_count_fields(const hp_heap *h, uint32_t start, uint32_t end);
/* As hp_tables_refs, for the field values; bitmaps are indexed by row and
 * must be zeroed by the caller (slices of rows may share their bytes, so
 * the fill only sets bits: slices must run one after another). */
int hp_tables_fields(const hp_heap *h, uint32_t start, uint32_t end, const hp_table_names *names, uint64_t row,
                     uint64_t row_end, const hp_field_columns *c);

/* Sets bit i of `valid` when codes[i] >= 0 and turns the others into 0;
 * returns how many those were. */
uint64_t hp_tables_code_validity(int32_t *codes, uint64_t n, uint8_t *valid);

/* ---- GC roots: one row per root, in file order ---- */
typedef struct hp_root_columns {
    const int8_t *kind_codes;   /* in: sub-record tag -> dictionary code */
    int64_t *object_id;
    int8_t *kind;
} hp_root_columns;

void hp_tables_roots(const hp_heap *h, const hp_root_columns *c);

/* ---- classes: one row per class ordinal ---- */
typedef struct hp_class_columns {
    int64_t *id;
    int64_t *super_id, *loader_id, *instance_size;
    uint8_t *super_valid, *loader_valid, *size_valid; /* instance_size: null for array classes */
} hp_class_columns;

void hp_tables_classes(const hp_heap *h, const hp_class_columns *c);

#endif
