/* Shared by test_tables.c and fuzz_heap.c: every table of hp_heap_tables.h
 * filled for a heap as the glue fills them (the names first, objects in
 * slices of 8 rows, the smallest the bitmaps allow, references slice by
 * slice into columns allocated at exactly the slice's bound so ASan sees a
 * write past it, field values slice after slice), then gathered into
 * whole-table columns. */
#ifndef TABLESKIT_H
#define TABLESKIT_H

#include <stdlib.h>
#include <string.h>

#include "hp_heap_tables.h"

typedef struct tk_tables {
    uint32_t n_objects, n_roots, n_classes, max_elements;
    uint64_t n_refs, n_fields;
    hp_table_names names;
    int names_ok;               /* hp_table_names_build gave HP_OK */
    int refs_ok;                /* every slice's references fitted its bound */
    int64_t *class_ids;
    int16_t heap_codes[257];    /* [k + 1]: heap k, some without a code; [0]: none */
    int8_t root_codes[256];
    hp_object_columns objects;
    hp_string_columns strings;
    hp_ref_columns refs;
    hp_field_columns fields;
    hp_root_columns roots;
    hp_class_columns classes;
} tk_tables;

static inline void *tk_alloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        abort();
    return p;
}

static inline int tk_bit(const uint8_t *bitmap, uint64_t i) { return (bitmap[i >> 3] >> (i & 7)) & 1; }

static inline void tk_set_bit(uint8_t *bitmap, uint64_t i, int on)
{
    if (on)
        bitmap[i >> 3] |= (uint8_t)(1u << (i & 7));
}

static inline void tk_ref_columns_alloc(hp_ref_columns *c, uint64_t rows)
{
    c->source_id = tk_alloc(rows, 8);
    c->target_id = tk_alloc(rows, 8);
    c->name = tk_alloc(rows, 4);
    c->qualified = tk_alloc(rows, 4);
    c->name_valid = tk_alloc((rows + 7) / 8, 1);
    c->qualified_valid = tk_alloc((rows + 7) / 8, 1);
}

static inline void tk_ref_columns_free(hp_ref_columns *c)
{
    free(c->source_id);
    free(c->target_id);
    free(c->name);
    free(c->qualified);
    free(c->name_valid);
    free(c->qualified_valid);
}

/* Appends `rows` rows of slice columns `s` at row `at` of `c`. */
static inline void tk_ref_columns_append(hp_ref_columns *c, uint64_t at, const hp_ref_columns *s, uint64_t rows)
{
    uint64_t k;
    memcpy(c->source_id + at, s->source_id, rows * 8);
    memcpy(c->target_id + at, s->target_id, rows * 8);
    memcpy(c->name + at, s->name, rows * 4);
    memcpy(c->qualified + at, s->qualified, rows * 4);
    for (k = 0; k < rows; k++) {
        tk_set_bit(c->name_valid, at + k, tk_bit(s->name_valid, k));
        tk_set_bit(c->qualified_valid, at + k, tk_bit(s->qualified_valid, k));
    }
}

static inline void tk_objects(tk_tables *t, const hp_heap *h)
{
    hp_object_columns *o = &t->objects;
    uint32_t n = t->n_objects, i;
    o->class_ids = t->class_ids;
    o->heap_codes = t->heap_codes;
    o->root_codes = t->root_codes;
    o->id = tk_alloc(n, 8);
    o->class_id = tk_alloc(n, 8);
    o->class_valid = tk_alloc((n + 7) / 8, 1);
    o->kind = tk_alloc(n, 1);
    o->shallow_size = tk_alloc(n, 8);
    o->heap = tk_alloc(n, 2);
    o->heap_valid = tk_alloc((n + 7) / 8, 1);
    o->root_type = tk_alloc(n, 1);
    o->root_valid = tk_alloc((n + 7) / 8, 1);
    o->array_length = tk_alloc(n, 8);
    o->array_valid = tk_alloc((n + 7) / 8, 1);
    o->array_hash = tk_alloc(n, 8);
    o->hash_valid = tk_alloc((n + 7) / 8, 1);
    o->array_nulls = tk_alloc(n, 8);
    o->nulls_valid = tk_alloc((n + 7) / 8, 1);
    o->array_refs_hash = tk_alloc(n, 8);
    o->array_trailing_zeros = tk_alloc(n, 8);
    o->zeros_valid = tk_alloc((n + 7) / 8, 1);
    o->max_elements = &t->max_elements;
    o->class_objects = tk_alloc(t->n_classes, 8);
    o->class_shallow = tk_alloc(t->n_classes, 8);
    for (i = 0; i < n; i += 8)
        hp_tables_objects(h, i, n - i > 8 ? i + 8 : n, o);
}

static inline void tk_references(tk_tables *t, const hp_heap *h)
{
    uint32_t n = t->n_objects, i;
    uint64_t cap = hp_tables_max_refs(h, &t->names, t->objects.kind, t->objects.array_length, 0, n);
    t->refs_ok = 1;
    tk_ref_columns_alloc(&t->refs, cap);
    for (i = 0; i < n; i += 8) {
        uint32_t end = n - i > 8 ? i + 8 : n;
        uint64_t slice_cap = hp_tables_max_refs(h, &t->names, t->objects.kind, t->objects.array_length, i, end);
        hp_ref_columns s;
        int64_t rows;
        tk_ref_columns_alloc(&s, slice_cap);
        rows = hp_tables_refs(h, i, end, &t->names, slice_cap, &s);
        if (rows < 0)
            t->refs_ok = 0;
        else
            tk_ref_columns_append(&t->refs, t->n_refs, &s, (uint64_t)rows);
        t->n_refs += rows < 0 ? 0 : (uint64_t)rows;
        tk_ref_columns_free(&s);
    }
}

static inline void tk_fields(tk_tables *t, const hp_heap *h)
{
    hp_field_columns *f = &t->fields;
    uint32_t n = t->n_objects, i;
    uint64_t rows = hp_tables_count_fields(h, 0, n), row = 0;
    f->object_id = tk_alloc(rows, 8);
    f->name = tk_alloc(rows, 4);
    f->qualified = tk_alloc(rows, 4);
    f->type = tk_alloc(rows, 1);
    f->int_value = tk_alloc(rows, 8);
    f->int_valid = tk_alloc((rows + 7) / 8, 1);
    f->double_value = tk_alloc(rows, 8);
    f->double_valid = tk_alloc((rows + 7) / 8, 1);
    for (i = 0; i < n; i += 8) {
        uint32_t end = n - i > 8 ? i + 8 : n;
        uint64_t count = hp_tables_count_fields(h, i, end);
        if (!hp_tables_fields(h, i, end, &t->names, row, row + count, f))
            abort(); /* the input did not change between the passes */
        row += count;
    }
    t->n_fields = rows;
}

static inline void tk_tables_fill(tk_tables *t, const hp_heap *h)
{
    uint32_t c, k;
    memset(t, 0, sizeof *t);
    t->n_objects = hp_heap_object_count(h);
    t->n_roots = hp_heap_root_count(h);
    t->n_classes = hp_heap_class_count(h);
    t->class_ids = tk_alloc(t->n_classes, 8);
    for (c = 0; c < t->n_classes; c++) {
        hp_class_info info;
        hp_heap_class(h, c, &info);
        t->class_ids[c] = (int64_t)info.id;
    }
    for (k = 0; k < 257; k++)
        t->heap_codes[k] = (int16_t)(k % 3 == 1 ? -1 : (int)k); /* none, and some heaps, without a code */
    for (k = 0; k < 256; k++)
        t->root_codes[k] = (int8_t)(k & 0x7F);
    tk_objects(t, h);
    t->names_ok = hp_table_names_build(&t->names, h, t->max_elements, NULL) == HP_OK;
    if (t->names_ok) {
        tk_references(t, h);
        tk_fields(t, h);
    }
    t->strings.max_units = 7;
    t->strings.length = tk_alloc(t->n_objects, 8);
    t->strings.valid = tk_alloc((t->n_objects + 7) / 8, 1);
    t->strings.offsets = tk_alloc((size_t)t->n_objects + 1, 4);
    if (hp_tables_strings(h, 0, t->n_objects, &t->strings, &hp_default_alloc) != HP_OK)
        abort();
    t->roots.kind_codes = t->root_codes;
    t->roots.object_id = tk_alloc(t->n_roots, 8);
    t->roots.kind = tk_alloc(t->n_roots, 1);
    hp_tables_roots(h, &t->roots);
    t->classes.id = tk_alloc(t->n_classes, 8);
    t->classes.super_id = tk_alloc(t->n_classes, 8);
    t->classes.loader_id = tk_alloc(t->n_classes, 8);
    t->classes.instance_size = tk_alloc(t->n_classes, 8);
    t->classes.super_valid = tk_alloc((t->n_classes + 7) / 8, 1);
    t->classes.loader_valid = tk_alloc((t->n_classes + 7) / 8, 1);
    t->classes.size_valid = tk_alloc((t->n_classes + 7) / 8, 1);
    hp_tables_classes(h, &t->classes);
}

/* Entry `code` of dictionary `d`: its bytes and *len. */
static inline const uint8_t *tk_entry(const hp_strdict *d, int32_t code, size_t *len)
{
    *len = (size_t)(d->offsets[code + 1] - d->offsets[code]);
    return d->data + d->offsets[code];
}

static inline void tk_tables_free(tk_tables *t)
{
    hp_object_columns *o = &t->objects;
    hp_field_columns *f = &t->fields;
    void *owned[] = {
        t->class_ids, o->id, o->class_id, o->class_valid, o->kind, o->shallow_size, o->heap, o->heap_valid,
        o->root_type, o->root_valid, o->array_length, o->array_valid, o->array_hash, o->hash_valid,
        o->array_nulls, o->nulls_valid, o->array_refs_hash, o->array_trailing_zeros, o->zeros_valid,
        o->class_objects, o->class_shallow, t->strings.length, t->strings.valid, t->strings.offsets, t->strings.data,
        f->object_id, f->name, f->qualified, f->type, f->int_value, f->int_valid, f->double_value, f->double_valid,
        t->roots.object_id, t->roots.kind, t->classes.id, t->classes.super_id, t->classes.loader_id,
        t->classes.instance_size, t->classes.super_valid, t->classes.loader_valid, t->classes.size_valid,
    };
    size_t k;
    for (k = 0; k < sizeof owned / sizeof *owned; k++)
        free(owned[k]);
    if (t->names_ok)
        tk_ref_columns_free(&t->refs);
    hp_table_names_free(&t->names);
}

#endif
