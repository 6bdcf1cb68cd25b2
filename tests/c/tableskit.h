/* Shared by test_tables.c and fuzz_heap.c: every table of hp_heap_tables.h
 * filled for a heap, in slices of 8 rows (the smallest the bitmaps allow),
 * with reference names coded one code per class slot, so a name code tells
 * which slot it came from: fields [0, nf), statics [nf, nf + ns), the loader
 * nf + ns, elements from nf + ns + 1. */
#ifndef TABLESKIT_H
#define TABLESKIT_H

#include <stdlib.h>
#include <string.h>

#include "hp_heap_tables.h"

typedef struct tk_tables {
    uint32_t n_objects, n_roots;
    uint64_t n_refs;
    uint32_t *field_base, *static_base, *codes; /* codes: the identity, nf + ns of them */
    uint32_t nf, ns, max_element;
    hp_ref_names names;
    uint64_t *class_ids;
    int16_t heap_codes[256];
    int8_t kind_codes[256];
    hp_object_columns objects;
    hp_ref_columns refs;
    hp_root_columns roots;
} tk_tables;

static inline void *tk_alloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        abort();
    return p;
}

static inline void tk_tables_fill(tk_tables *t, const hp_heap *h)
{
    uint32_t nc = hp_heap_class_count(h), c, i, k;
    uint64_t row = 0;
    memset(t, 0, sizeof *t);
    t->n_objects = hp_heap_object_count(h);
    t->n_roots = hp_heap_root_count(h);
    t->field_base = tk_alloc((size_t)nc + 1, 4);
    t->static_base = tk_alloc((size_t)nc + 1, 4);
    t->class_ids = tk_alloc(nc, 8);
    for (c = 0; c < nc; c++) {
        hp_class_info info;
        hp_field_iter fi;
        hp_static_iter si;
        hp_field f;
        hp_heap_class(h, c, &info);
        t->class_ids[c] = info.id;
        t->field_base[c] = t->nf;
        t->static_base[c] = t->ns;
        hp_field_iter_init(&fi, h, c);
        while (hp_field_next(&fi, &f))
            t->nf += f.type == HP_T_OBJECT;
        hp_static_iter_init(&si, h, c);
        while (hp_static_next(&si, &f))
            t->ns++;
    }
    t->field_base[nc] = t->nf;
    t->static_base[nc] = t->ns;
    t->codes = tk_alloc((size_t)t->nf + t->ns, 4);
    for (k = 0; k < t->nf + t->ns; k++)
        t->codes[k] = k;
    t->names.field_base = t->field_base;
    t->names.field_codes = t->codes;
    t->names.static_base = t->static_base;
    t->names.static_codes = t->codes + t->nf;
    t->names.loader_code = t->nf + t->ns;
    t->names.element_base = t->nf + t->ns + 1;
    for (k = 0; k < 256; k++) {
        t->heap_codes[k] = (int16_t)(k % 3 == 0 ? -1 : (int)k); /* some heaps without a name */
        t->kind_codes[k] = (int8_t)(k & 0x7F);
    }

    t->objects.class_ids = t->class_ids;
    t->objects.heap_codes = t->heap_codes;
    t->objects.id = tk_alloc(t->n_objects, 8);
    t->objects.class_id = tk_alloc(t->n_objects, 8);
    t->objects.class_valid = tk_alloc((t->n_objects + 7) / 8, 1);
    t->objects.kind = tk_alloc(t->n_objects, 1);
    t->objects.shallow_size = tk_alloc(t->n_objects, 8);
    t->objects.heap = tk_alloc(t->n_objects, 2);
    t->objects.heap_valid = tk_alloc((t->n_objects + 7) / 8, 1);
    for (i = 0; i < t->n_objects; i += 8) {
        uint32_t end = t->n_objects - i > 8 ? i + 8 : t->n_objects;
        hp_tables_objects(h, i, end, &t->objects);
        t->n_refs += hp_tables_count_refs(h, i, end, &t->max_element);
    }
    t->names.element_count = t->max_element;
    t->refs.source_id = tk_alloc(t->n_refs, 8);
    t->refs.target_id = tk_alloc(t->n_refs, 8);
    t->refs.name = tk_alloc(t->n_refs, 4);
    for (i = 0; i < t->n_objects; i += 8) {
        uint32_t end = t->n_objects - i > 8 ? i + 8 : t->n_objects, ignored = 0;
        uint64_t count = hp_tables_count_refs(h, i, end, &ignored);
        if (!hp_tables_refs(h, i, end, &t->names, row, row + count, &t->refs))
            abort(); /* the input did not change between the passes */
        row += count;
    }
    t->roots.kind_codes = t->kind_codes;
    t->roots.object_id = tk_alloc(t->n_roots, 8);
    t->roots.kind = tk_alloc(t->n_roots, 1);
    hp_tables_roots(h, &t->roots);
}

static inline int tk_bit(const uint8_t *bitmap, uint64_t i) { return (bitmap[i >> 3] >> (i & 7)) & 1; }

static inline void tk_tables_free(tk_tables *t)
{
    free(t->field_base);
    free(t->static_base);
    free(t->codes);
    free(t->class_ids);
    free(t->objects.id);
    free(t->objects.class_id);
    free(t->objects.class_valid);
    free(t->objects.kind);
    free(t->objects.shallow_size);
    free(t->objects.heap);
    free(t->objects.heap_valid);
    free(t->refs.source_id);
    free(t->refs.target_id);
    free(t->refs.name);
    free(t->roots.object_id);
    free(t->roots.kind);
}

#endif
