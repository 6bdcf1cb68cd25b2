/* The heap index as columns (hp_heap_tables.h): objects, reachability,
 * references, GC roots and classes. */
#include "hp_heap_tables.h"

#include "hp_xxh64.h"

/* ---- objects ---- */

int hp_tables_root_rank(int tag)
{
    switch (tag) {
    case HP_SUB_ROOT_STICKY_CLASS: return 0;
    case HP_SUB_ROOT_JNI_GLOBAL: return 1;
    case HP_SUB_ROOT_JNI_LOCAL: return 2;
    default: return 3;
    }
}

/* The first position in hp_heap_root_by_object order of a root naming an
 * object at or after index `start`. */
static uint32_t roots_from(const hp_heap *h, uint32_t start)
{
    uint32_t first = 0;
    hp_heap_object_roots(h, start, &first);
    return first;
}

/* The waste kinds' columns of an array: an object array's nulls and elements' hash (its
 * record read again: the row gives a primitive array's elements only), a primitive
 * array's trailing zero elements. */
static void array_contents(const hp_heap *h, uint32_t i, const hp_object_row *row, const hp_object_columns *c)
{
    int is_obj = row->kind == HP_KIND_OBJ_ARRAY, is_prim = row->kind == HP_KIND_PRIM_ARRAY;
    c->array_nulls[i] = c->array_refs_hash[i] = c->array_trailing_zeros[i] = 0;
    if (is_obj) {
        hp_object o;
        uint32_t size = (uint32_t)hp_heap_id_size(h), k, j;
        hp_heap_object(h, i, &o);
        c->array_refs_hash[i] = (int64_t)hp_xxh64(o.data, (size_t)o.data_len, 0);
        for (k = 0; k < o.length && (uint64_t)(k + 1) * size <= o.data_len; k++) {
            for (j = 0; j < size && o.data[(uint64_t)k * size + j] == 0; j++)
                ;
            c->array_nulls[i] += j == size;
        }
    } else if (is_prim && row->length > 0) {
        uint64_t size = row->elements_len / row->length, last;
        for (last = row->elements_len; last > 0 && row->elements[last - 1] == 0; last--)
            ;
        c->array_trailing_zeros[i] = size == 0 ? 0 : last == 0 ? (int64_t)row->length
                                   : (int64_t)(row->length - 1 - (last - 1) / size);
    }
    hp_tables_set_bit(c->nulls_valid, i, is_obj);
    hp_tables_set_bit(c->zeros_valid, i, is_prim);
}

void hp_tables_objects(const hp_heap *h, uint32_t start, uint32_t end, const hp_object_columns *c)
{
    uint32_t i, k = roots_from(h, start), nroots = hp_heap_root_count(h);
    for (i = start; i < end; i++) {
        hp_object_row o;
        int is_array, rank = 4, tag = 0;
        int16_t heap;
        if (i + HP_TABLES_AHEAD < end)
            hp_heap_prefetch_record(h, i + HP_TABLES_AHEAD);
        hp_heap_object_row(h, i, &o);
        is_array = o.kind == HP_KIND_OBJ_ARRAY || o.kind == HP_KIND_PRIM_ARRAY;
        c->id[i] = (int64_t)o.id;
        c->class_id[i] = o.class_ord == HP_NONE ? 0 : c->class_ids[o.class_ord];
        hp_tables_set_bit(c->class_valid, i, o.class_ord != HP_NONE);
        c->kind[i] = (int8_t)o.kind;
        c->shallow_size[i] = (int64_t)o.shallow_size;
        if (o.counted_ord != HP_NONE) {
            c->class_objects[o.counted_ord]++;
            c->class_shallow[o.counted_ord] += (int64_t)o.shallow_size;
        }
        /* Roots by object run in index order, each object's in file order. */
        for (; k < nroots; k++) {
            hp_root r;
            uint32_t at = hp_heap_root_by_object(h, k);
            if (at == HP_NONE)
                break;
            hp_heap_root(h, at, &r);
            if (r.index != i)
                break;
            if (hp_tables_root_rank(r.kind) < rank) {
                rank = hp_tables_root_rank(r.kind);
                tag = r.kind;
            }
        }
        c->root_type[i] = rank < 4 ? c->root_codes[tag & 0xFF] : 0;
        hp_tables_set_bit(c->root_valid, i, rank < 4);
        heap = c->heap_codes[o.heap + 1];
        c->heap[i] = heap < 0 ? 0 : heap;
        hp_tables_set_bit(c->heap_valid, i, heap >= 0);
        c->array_length[i] = o.length;
        c->array_hash[i] = o.kind == HP_KIND_PRIM_ARRAY ? (int64_t)hp_xxh64(o.elements, (size_t)o.elements_len, 0) : 0;
        if (o.kind == HP_KIND_OBJ_ARRAY && o.length > *c->max_elements)
            *c->max_elements = o.length;
        hp_tables_set_bit(c->array_valid, i, is_array);
        hp_tables_set_bit(c->hash_valid, i, o.kind == HP_KIND_PRIM_ARRAY);
        array_contents(h, i, &o, c);
    }
}

/* ---- reachability ---- */

void hp_tables_reach(const hp_reach *r, const hp_bfs *b, const hp_heap *h, uint32_t start, uint32_t end,
                     const hp_reach_columns *c)
{
    uint32_t i;
    for (i = start; i < end; i++) {
        uint32_t d = hp_reach_idom(r, i);
        c->retained_size[i] = hp_reach_retained(r, i);
        c->dominator_id[i] = d == HP_NONE ? 0 : (int64_t)hp_heap_object_id(h, d);
        hp_tables_set_bit(c->dominator_valid, i, d != HP_NONE);
        hp_tables_set_bit(c->reachable, i, (b->visited[i >> 6] >> (i & 63)) & 1);
    }
}

void hp_tables_root_distances(const hp_bfs *b, int32_t *distance, uint32_t *stack)
{
    uint32_t v;
    for (v = 0; v < b->n; v++)
        distance[v] = (b->visited[v >> 6] >> (v & 63)) & 1 ? -2 : -1; /* -2: not known yet */
    for (v = 0; v < b->n; v++) {
        uint32_t top = 0, at = v;
        int32_t d;
        /* Up the search's parents to a vertex whose distance is known, then down again. */
        while (distance[at] == -2 && b->parent[at] != HP_MARK) {
            stack[top++] = at;
            at = b->parent[at];
        }
        if (distance[at] == -2)
            distance[at] = 0; /* a root */
        d = distance[at];
        while (top > 0)
            distance[stack[--top]] = ++d;
    }
}

/* ---- references ---- */

uint64_t hp_tables_max_refs(const hp_heap *h, const hp_table_names *names, const int8_t *kind,
                            const int64_t *array_length, uint32_t start, uint32_t end)
{
    uint64_t count = 0;
    uint32_t i;
    for (i = start; i < end; i++) {
        uint32_t ord = hp_heap_object_class(h, i);
        switch (kind[i]) {
        case HP_KIND_INSTANCE:
            count += ord == HP_NONE ? 0 : names->ref_base[ord + 1] - names->ref_base[ord];
            break;
        case HP_KIND_OBJ_ARRAY:
            count += (uint64_t)array_length[i];
            break;
        case HP_KIND_CLASS:
            ord = hp_heap_find_class_id(h, hp_heap_object_id(h, i));
            count += 1 + (ord == HP_NONE ? 0 : names->static_base[ord + 1] - names->static_base[ord]);
            break;
        default:
            break;
        }
    }
    return count;
}

/* Reference `r`'s names in the tables of class `ord` into *code and
 * *qualified (-1: none); 0 for a slot the tables do not have. */
static int ref_names(const hp_table_names *t, uint32_t ord, const hp_ref *r, int32_t *code, int32_t *qualified)
{
    const uint32_t *base = r->kind == HP_REF_STATIC ? t->static_base : t->ref_base;
    uint32_t at;
    if (r->kind == HP_REF_ELEMENT) {
        if (r->slot >= t->element_count)
            return 0;
        *code = *qualified = t->element_codes[r->slot];
        return 1;
    }
    if (r->kind == HP_REF_LOADER) {
        *code = *qualified = t->loader_code;
        return 1;
    }
    if (ord == HP_NONE || r->slot >= base[ord + 1] - base[ord])
        return 0;
    at = base[ord] + r->slot;
    *code = r->kind == HP_REF_STATIC ? t->static_codes[at] : t->ref_codes[at];
    *qualified = r->kind == HP_REF_STATIC ? t->static_qualified[at] : t->ref_qualified[at];
    return 1;
}

int64_t hp_tables_refs(const hp_heap *h, uint32_t start, uint32_t end, const hp_table_names *names, uint64_t cap,
                       const hp_ref_columns *c)
{
    uint64_t row = 0;
    uint32_t i;
    for (i = start; i < end; i++) {
        hp_ref_iter it;
        hp_ref r;
        int64_t id;
        if (i + HP_TABLES_AHEAD < end)
            hp_heap_prefetch_record(h, i + HP_TABLES_AHEAD);
        if (hp_heap_object_kind(h, i) == HP_KIND_PRIM_ARRAY)
            continue;
        id = (int64_t)hp_heap_object_id(h, i);
        hp_ref_iter_init(&it, h, i); /* it.cls: the class whose fields and statics name the references */
        it.lazy = 1;                 /* the target's index is not needed: no look-up per reference */
        while (hp_ref_next(&it, &r)) {
            int32_t name, qualified;
            if (row >= cap || !ref_names(names, it.cls, &r, &name, &qualified))
                return -1;
            c->source_id[row] = id;
            c->target_id[row] = (int64_t)r.target_id;
            c->name[row] = name < 0 ? 0 : name;
            c->qualified[row] = qualified < 0 ? 0 : qualified;
            hp_tables_set_bit(c->name_valid, row, name >= 0);
            hp_tables_set_bit(c->qualified_valid, row, qualified >= 0);
            row++;
        }
    }
    return (int64_t)row;
}

uint64_t hp_tables_code_validity(int32_t *codes, uint64_t n, uint8_t *valid)
{
    uint64_t i, nulls = 0;
    for (i = 0; i < n; i++) {
        hp_tables_set_bit(valid, i, codes[i] >= 0);
        if (codes[i] < 0) {
            codes[i] = 0;
            nulls++;
        }
    }
    return nulls;
}

/* ---- GC roots ---- */

void hp_tables_roots(const hp_heap *h, const hp_root_columns *c)
{
    uint32_t i, n = hp_heap_root_count(h);
    for (i = 0; i < n; i++) {
        hp_root r;
        hp_heap_root(h, i, &r);
        c->object_id[i] = (int64_t)r.id;
        c->kind[i] = c->kind_codes[r.kind & 0xFF];
    }
}

/* ---- classes ---- */

void hp_tables_classes(const hp_heap *h, const hp_class_columns *c)
{
    uint32_t i, n = hp_heap_class_count(h);
    for (i = 0; i < n; i++) {
        hp_class_info ci;
        hp_heap_class(h, i, &ci);
        c->id[i] = (int64_t)ci.id;
        c->super_id[i] = ci.super_ord == HP_NONE ? 0 : (int64_t)ci.super_id;
        hp_tables_set_bit(c->super_valid, i, ci.super_ord != HP_NONE);
        c->loader_id[i] = (int64_t)ci.loader_id;
        hp_tables_set_bit(c->loader_valid, i, ci.loader_id != 0);
        c->instance_size[i] = ci.elem_type ? 0 : (int64_t)ci.instance_size;
        hp_tables_set_bit(c->size_valid, i, !ci.elem_type);
    }
}
