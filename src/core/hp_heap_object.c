/* Objects of the heap index: id look-up, description, shallow size, GC
 * roots. */
#include "hp_heap_impl.h"

#include <string.h>

int hp_heap_id_size(const hp_heap *h) { return h->id_size; }
uint32_t hp_heap_dump_count(const hp_heap *h) { return h->n_dumps; }
uint32_t hp_heap_object_count(const hp_heap *h) { return h->n; }
uint64_t hp_heap_duplicate_count(const hp_heap *h) { return h->duplicates; }
const hp_size_model *hp_heap_size_model(const hp_heap *h) { return &h->model; }
int hp_heap_size_model_kind(const hp_heap *h) { return h->size_model; }
const hp_layout_evidence *hp_heap_layout_evidence(const hp_heap *h) { return &h->layout; }

uint64_t hp_heap_memory(const hp_heap *h)
{
    uint64_t n = h->n, total = sizeof *h;
    total += n * (h->keys4 ? 4 : 8) + n * 4 + (h->off_hi ? n : 0) + n * (h->ord2 ? 2 : 4) + (h->heap_of ? n : 0);
    total += h->dir_size * 4 + (uint64_t)h->n_classes * sizeof *h->classes + h->n_ref_offsets * 4;
    total += h->n_strings * sizeof *h->strings + h->n_loads * sizeof *h->loads + h->n_frames * sizeof *h->frames;
    total += h->n_traces * sizeof *h->traces + h->n_threads * sizeof *h->threads;
    total += (uint64_t)h->n_roots * (sizeof *h->roots + 4);
    if (h->rev_start)
        total += (n + 1) * 4 + (uint64_t)h->rev_start[n] * 4;
    total += h->names.text_cap + h->names.cap_strings * sizeof *h->names.strings +
             h->names.cap_fields * 8 + h->names.cap_frames * sizeof *h->names.frames;
    return total;
}

uint32_t hp_heap_find(const hp_heap *h, uint64_t id)
{
    uint64_t key, bucket;
    uint32_t lo, hi;
    if (h->n == 0 || id < h->min_id)
        return HP_NONE;
    key = id - h->min_id;
    if (key & (((uint64_t)1 << h->shift) - 1))
        return HP_NONE;
    key >>= h->shift;
    bucket = heap_bucket(h, key);
    if (bucket + 1 >= h->dir_size)
        return HP_NONE;
    lo = h->dir[bucket];
    hi = h->dir[bucket + 1];
    if (h->keys4) {
        const uint32_t *keys = h->keys4;
        if (key > 0xFFFFFFFFull)
            return HP_NONE;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (keys[mid] < key)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo < h->n && keys[lo] == key ? lo : HP_NONE;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (h->keys8[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < h->n && h->keys8[lo] == key ? lo : HP_NONE;
}

uint64_t hp_heap_object_id(const hp_heap *h, uint32_t index) { return obj_id(h, index); }

hp_kind hp_heap_object_kind(const hp_heap *h, uint32_t index)
{
    uint32_t ord = obj_ord(h, index), C = h->n_classes;
    if (ord < C)
        return HP_KIND_INSTANCE;
    if (ord < 2 * C)
        return HP_KIND_OBJ_ARRAY;
    ord -= 2 * C;
    if (ord < 8)
        return HP_KIND_PRIM_ARRAY;
    if (ord == ORD_CLASS_OBJECT)
        return HP_KIND_CLASS;
    return ord == ORD_LOST_ARRAY ? HP_KIND_OBJ_ARRAY : HP_KIND_INSTANCE;
}

uint32_t hp_heap_object_class(const hp_heap *h, uint32_t index)
{
    uint32_t ord = obj_ord(h, index), C = h->n_classes;
    if (ord < C)
        return ord;
    if (ord < 2 * C)
        return ord - C;
    ord -= 2 * C;
    if (ord < 8)
        return h->prim_class[ord];
    return ord == ORD_CLASS_OBJECT ? h->class_class : HP_NONE;
}

uint32_t hp_heap_instance_class(const hp_heap *h, uint32_t index)
{
    uint32_t ord = obj_ord(h, index), C = h->n_classes;
    if (ord < C)
        return ord;
    if (ord < 2 * C)
        return ord - C;
    ord -= 2 * C;
    return ord < 8 ? h->prim_class[ord] : HP_NONE;
}

int hp_heap_object_heap(const hp_heap *h, uint32_t index)
{
    return h->heap_of && h->heap_of[index] != 255 ? h->heap_of[index] : -1;
}

void hp_heap_object(const hp_heap *h, uint32_t index, hp_object *out)
{
    const int id = h->id_size;
    const uint8_t *p;
    uint32_t ord = obj_ord(h, index), C = h->n_classes;
    out->id = obj_id(h, index);
    out->offset = obj_offset(h, index);
    out->kind = hp_heap_object_kind(h, index);
    out->class_ord = hp_heap_object_class(h, index);
    out->self_ord = HP_NONE;
    out->elem_type = 0;
    out->length = 0;
    out->data = NULL;
    out->data_len = 0;
    out->heap = hp_heap_object_heap(h, index);
    p = h->buf + out->offset;
    /* Sub-records were decoded whole at build time: these reads are in bounds. */
    switch (out->kind) {
    case HP_KIND_INSTANCE:
        out->data_len = hp_be32(p + 1 + 2 * id + 4);
        out->data = p + 1 + 2 * id + 8;
        break;
    case HP_KIND_OBJ_ARRAY:
        out->elem_type = HP_T_OBJECT;
        out->length = hp_be32(p + 1 + id + 4);
        out->data = p + 1 + 2 * id + 8;
        out->data_len = (uint64_t)out->length * id;
        break;
    case HP_KIND_PRIM_ARRAY:
        out->elem_type = (int)(ord - 2 * C) + 4;
        out->length = hp_be32(p + 1 + id + 4);
        out->data = p + 1 + id + 9;
        out->data_len = (uint64_t)out->length * hp_type_size(out->elem_type, id);
        break;
    case HP_KIND_CLASS:
        out->self_ord = hp_heap_find_class_id(h, out->id);
        break;
    }
}

/* A class object's size: its class's (a mirror's statics), looked up only
 * when the model sizes mirrors (else every one weighs a java.lang.Class). */
static uint64_t class_object_size(const hp_heap *h, uint32_t index)
{
    uint32_t self = h->model.mirror_base ? hp_heap_find_class_id(h, obj_id(h, index)) : HP_NONE;
    if (self != HP_NONE)
        return h->classes[self].object_size;
    return h->class_class != HP_NONE ? h->classes[h->class_class].instance_size : 0;
}

void hp_heap_object_row(const hp_heap *h, uint32_t index, hp_object_row *out)
{
    const int id = h->id_size;
    uint32_t ord = obj_ord(h, index), C = h->n_classes, prim;
    const uint8_t *p;
    out->id = obj_id(h, index);
    out->heap = hp_heap_object_heap(h, index);
    out->length = 0;
    out->elements = NULL;
    out->elements_len = 0;
    if (ord < C) { /* most objects: no read of the record */
        out->kind = HP_KIND_INSTANCE;
        out->class_ord = out->counted_ord = ord;
        out->shallow_size = h->classes[ord].instance_size;
        return;
    }
    p = h->buf + obj_offset(h, index);
    if (ord < 2 * C || ord == 2 * C + ORD_LOST_ARRAY) {
        out->kind = HP_KIND_OBJ_ARRAY;
        out->class_ord = out->counted_ord = ord < 2 * C ? ord - C : HP_NONE;
        out->length = hp_be32(p + 1 + id + 4);
        out->shallow_size = hp_size_array(&h->model, HP_T_OBJECT, out->length);
        return;
    }
    prim = ord - 2 * C;
    if (prim < 8) {
        out->kind = HP_KIND_PRIM_ARRAY;
        out->class_ord = out->counted_ord = h->prim_class[prim];
        out->length = hp_be32(p + 1 + id + 4);
        out->shallow_size = hp_size_array(&h->model, (int)prim + 4, out->length);
        out->elements = p + 1 + id + 9;
        out->elements_len = (uint64_t)out->length * hp_type_size((int)prim + 4, id);
        return;
    }
    out->counted_ord = HP_NONE;
    if (prim == ORD_CLASS_OBJECT) {
        out->kind = HP_KIND_CLASS;
        out->class_ord = h->class_class;
        out->shallow_size = class_object_size(h, index);
        return;
    }
    out->kind = HP_KIND_INSTANCE; /* of an absent class */
    out->class_ord = HP_NONE;
    out->shallow_size = hp_size_instance(&h->model, hp_be32(p + 1 + 2 * id + 4), hp_be32(p + 1 + 2 * id + 4));
}

void hp_heap_prefetch_entry(const hp_heap *h, uint32_t index)
{
    HP_PREFETCH(&h->off_lo[index]);
    if (h->ord2)
        HP_PREFETCH(&h->ord2[index]);
    else
        HP_PREFETCH(&h->ord4[index]);
}

void hp_heap_prefetch_record(const hp_heap *h, uint32_t index) { HP_PREFETCH(h->buf + obj_offset(h, index)); }

uint64_t hp_heap_shallow_size(const hp_heap *h, uint32_t index)
{
    const int id = h->id_size;
    uint32_t ord = obj_ord(h, index), C = h->n_classes;
    const uint8_t *p;
    if (ord < C)
        return h->classes[ord].instance_size;
    p = h->buf + obj_offset(h, index);
    if (ord < 2 * C || ord == 2 * C + ORD_LOST_ARRAY)
        return hp_size_array(&h->model, HP_T_OBJECT, hp_be32(p + 1 + id + 4));
    ord -= 2 * C;
    if (ord < 8)
        return hp_size_array(&h->model, (int)ord + 4, hp_be32(p + 1 + id + 4));
    if (ord == ORD_CLASS_OBJECT)
        return class_object_size(h, index);
    /* An instance of an absent class: its data at id-size references. */
    return hp_size_instance(&h->model, hp_be32(p + 1 + 2 * id + 4), hp_be32(p + 1 + 2 * id + 4));
}

int hp_heap_heap_name(const hp_heap *h, int heap, const uint8_t **name, size_t *len)
{
    if (heap < 0 || heap >= h->n_heaps)
        return 0;
    return hp_heap_utf8(h, h->heap_name_sid[heap], name, len);
}

/* ---- GC roots ---- */

uint32_t hp_heap_root_count(const hp_heap *h) { return h->n_roots; }

void hp_heap_root(const hp_heap *h, uint32_t i, hp_root *out) { *out = h->roots[i]; }

uint32_t hp_heap_root_by_object(const hp_heap *h, uint32_t k) { return h->roots_by_object[k]; }

uint32_t hp_heap_object_roots(const hp_heap *h, uint32_t index, uint32_t *first)
{
    uint32_t lo = 0, hi = h->n_roots, start;
    /* roots_by_object: roots with an object, by index; then HP_NONE. */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2, r = h->roots_by_object[mid];
        if (r != HP_NONE && h->roots[r].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    start = lo;
    while (lo < h->n_roots && h->roots_by_object[lo] != HP_NONE && h->roots[h->roots_by_object[lo]].index == index)
        lo++;
    *first = start;
    return lo - start;
}
