/* The heap index as columns (hp_heap_tables.h). */
#include "hp_heap_tables.h"

static void set_bit(uint8_t *bitmap, uint32_t i, int on)
{
    uint8_t mask = (uint8_t)(1u << (i & 7));
    if (on)
        bitmap[i >> 3] |= mask;
    else
        bitmap[i >> 3] &= (uint8_t)~mask;
}

void hp_tables_objects(const hp_heap *h, uint32_t start, uint32_t end, const hp_object_columns *c)
{
    uint32_t i;
    for (i = start; i < end; i++) {
        hp_object obj;
        int16_t heap = -1;
        hp_heap_object(h, i, &obj);
        c->id[i] = obj.id;
        c->class_id[i] = obj.class_ord == HP_NONE ? 0 : c->class_ids[obj.class_ord];
        set_bit(c->class_valid, i, obj.class_ord != HP_NONE);
        c->kind[i] = (int8_t)obj.kind;
        c->shallow_size[i] = hp_heap_shallow_size(h, i);
        if (obj.heap >= 0 && obj.heap < 256)
            heap = c->heap_codes[obj.heap];
        c->heap[i] = heap < 0 ? 0 : heap;
        set_bit(c->heap_valid, i, heap >= 0);
    }
}

void hp_tables_retained(const hp_reach *r, const hp_heap *h, uint32_t start, uint32_t end,
                        const hp_retained_columns *c)
{
    uint32_t i;
    for (i = start; i < end; i++) {
        uint32_t d = hp_reach_idom(r, i);
        c->retained_size[i] = hp_reach_retained(r, i);
        c->dominator_id[i] = d == HP_NONE ? 0 : hp_heap_object_id(h, d);
        set_bit(c->dominator_valid, i, d != HP_NONE);
    }
}

uint64_t hp_tables_count_refs(const hp_heap *h, uint32_t start, uint32_t end, uint32_t *max_element)
{
    uint64_t count = 0;
    uint32_t i;
    for (i = start; i < end; i++) {
        hp_ref_iter it;
        hp_ref r;
        hp_ref_iter_init(&it, h, i);
        while (hp_ref_next(&it, &r)) {
            count++;
            if (r.kind == HP_REF_ELEMENT && r.slot >= *max_element)
                *max_element = r.slot + 1;
        }
    }
    return count;
}

/* The class ordinal whose name tables name the references of `obj`. */
static uint32_t naming_class(const hp_object *obj)
{
    return obj->kind == HP_KIND_CLASS ? obj->self_ord : obj->class_ord;
}

/* The dictionary code of reference `r` of an object whose names are those
 * of class `ord`; -1 for a slot the name tables do not have. */
static int64_t ref_code(const hp_ref_names *names, uint32_t ord, const hp_ref *r)
{
    if (r->kind == HP_REF_ELEMENT)
        return r->slot < names->element_count ? (int64_t)names->element_base + r->slot : -1;
    if (r->kind == HP_REF_LOADER)
        return names->loader_code;
    if (ord == HP_NONE)
        return -1;
    if (r->kind == HP_REF_STATIC)
        return r->slot < names->static_base[ord + 1] - names->static_base[ord]
                   ? (int64_t)names->static_codes[names->static_base[ord] + r->slot] : -1;
    return r->slot < names->field_base[ord + 1] - names->field_base[ord]
               ? (int64_t)names->field_codes[names->field_base[ord] + r->slot] : -1;
}

int hp_tables_refs(const hp_heap *h, uint32_t start, uint32_t end, const hp_ref_names *names, uint64_t row,
                   uint64_t row_end, const hp_ref_columns *c)
{
    uint32_t i;
    for (i = start; i < end; i++) {
        hp_object obj;
        hp_ref_iter it;
        hp_ref r;
        uint32_t ord;
        hp_heap_object(h, i, &obj);
        ord = naming_class(&obj);
        hp_ref_iter_init(&it, h, i);
        while (hp_ref_next(&it, &r)) {
            int64_t code = ref_code(names, ord, &r);
            if (row >= row_end || code < 0)
                return 0;
            c->source_id[row] = obj.id;
            c->target_id[row] = r.target_id;
            c->name[row] = (int32_t)code;
            row++;
        }
    }
    return row == row_end;
}

uint64_t hp_tables_code_validity(int32_t *codes, uint64_t n, uint8_t *valid)
{
    uint64_t i, nulls = 0;
    for (i = 0; i < n; i++) {
        uint8_t mask = (uint8_t)(1u << (i & 7));
        if (codes[i] >= 0) {
            valid[i >> 3] |= mask;
        } else {
            valid[i >> 3] &= (uint8_t)~mask;
            codes[i] = 0;
            nulls++;
        }
    }
    return nulls;
}

void hp_tables_roots(const hp_heap *h, const hp_root_columns *c)
{
    uint32_t i, n = hp_heap_root_count(h);
    for (i = 0; i < n; i++) {
        hp_root r;
        hp_heap_root(h, i, &r);
        c->object_id[i] = r.id;
        c->kind[i] = c->kind_codes[r.kind & 0xFF];
    }
}
