/* The heap index as columns: fixed-width arrays that a columnar library
 * (Apache Arrow) wraps without copying, one row per object, reference or GC
 * root.  The caller allocates every column for the whole table and fills it
 * in slices of rows (so it can check for interrupts between them); slices
 * of objects start at multiples of 8, so two slices never share a byte of a
 * validity bitmap.  Bitmaps are Arrow's: bit i (LSB first) set when row i
 * has a value.  Integers are in host order. */
#ifndef HP_HEAP_TABLES_H
#define HP_HEAP_TABLES_H

#include "hp_heap.h"
#include "hp_reach.h"

/* ---- objects: one row per object index ---- */
typedef struct hp_object_columns {
    const uint64_t *class_ids;  /* in: the id of every class by ordinal */
    const int16_t *heap_codes;  /* in: Android heap number -> dictionary code, -1 for none */
    uint64_t *id;
    uint64_t *class_id;
    uint8_t *class_valid;       /* bitmap: the object has a class in the dump */
    int8_t *kind;               /* hp_kind */
    uint64_t *shallow_size;
    int16_t *heap;              /* heap_codes[heap] */
    uint8_t *heap_valid;        /* bitmap: the object's heap is known */
} hp_object_columns;

/* Fills rows [start, end) of the object columns; start % 8 == 0. */
void hp_tables_objects(const hp_heap *h, uint32_t start, uint32_t end, const hp_object_columns *c);

/* ---- objects' retained sizes and dominators (after hp_reach_dominators) ---- */
typedef struct hp_retained_columns {
    int64_t *retained_size;     /* hp_reach_retained */
    uint64_t *dominator_id;
    uint8_t *dominator_valid;   /* bitmap: the object has an immediate dominator */
} hp_retained_columns;

/* Fills rows [start, end); start % 8 == 0. */
void hp_tables_retained(const hp_reach *r, const hp_heap *h, uint32_t start, uint32_t end,
                        const hp_retained_columns *c);

/* ---- references: one row per outbound reference, in source index order ---- */

/* Dictionary codes of reference names: for class ordinal c, its k-th
 * reference field is field_codes[field_base[c] + k] (k < field_base[c + 1]
 * - field_base[c]; the bases have one entry per class and one more), its
 * k-th static static_codes[static_base[c] + k]; a class loader reference is
 * loader_code, array element i < element_count element_base + i. */
typedef struct hp_ref_names {
    const uint32_t *field_base, *field_codes, *static_base, *static_codes;
    uint32_t loader_code, element_base, element_count;
} hp_ref_names;

typedef struct hp_ref_columns {
    uint64_t *source_id;
    uint64_t *target_id;
    int32_t *name;              /* dictionary code (hp_ref_names) */
} hp_ref_columns;

/* References of objects [start, end); *max_element is raised to one past
 * the largest array index among them (so the caller can size the element
 * names of the dictionary). */
uint64_t hp_tables_count_refs(const hp_heap *h, uint32_t start, uint32_t end, uint32_t *max_element);
/* Fills the references of objects [start, end) into rows [row, row_end),
 * the rows hp_tables_count_refs counted for them: 1.  0 when the mapping
 * changed since that count or since the name tables were made (a dump
 * rewritten while read): more or fewer references, or a slot the names do
 * not have; nothing is written outside the rows, and the caller must not
 * use them. */
int hp_tables_refs(const hp_heap *h, uint32_t start, uint32_t end, const hp_ref_names *names, uint64_t row,
                   uint64_t row_end, const hp_ref_columns *c);
/* Name codes may be -1 (a field whose name the dump lacks): sets bit i of
 * `valid` when codes[i] >= 0, turns the others into 0, and returns how many
 * there were. */
uint64_t hp_tables_code_validity(int32_t *codes, uint64_t n, uint8_t *valid);

/* ---- GC roots: one row per root, in file order ---- */
typedef struct hp_root_columns {
    const int8_t *kind_codes;   /* in: sub-record tag -> dictionary code */
    uint64_t *object_id;
    int8_t *kind;
} hp_root_columns;

void hp_tables_roots(const hp_heap *h, const hp_root_columns *c);

#endif
