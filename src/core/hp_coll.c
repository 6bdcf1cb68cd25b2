/* Collections of a heap: the reads the walks (hp_coll_walk.c) and measures
 * (hp_coll_measure.c) share, over the layouts hp_coll_resolve.c resolves.
 * Reads go through the heap index's public API only. */
#include "hp_coll_impl.h"

#include <string.h>

void hp_coll_free(hp_coll *c)
{
    if (!c)
        return;
    c->alloc.free_fn(c->layout_of);
    c->alloc.free_fn(c->layouts);
    c->alloc.free_fn(c);
}

/* ---- reads ---- */

/* The layout of object `index`, or NULL when it is no collection instance. */
const coll_layout *coll_layout_of(const hp_coll *c, uint32_t index)
{
    uint32_t ord;
    if (hp_heap_object_kind(c->h, index) != HP_KIND_INSTANCE)
        return NULL;
    ord = hp_heap_object_class(c->h, index);
    if (ord == HP_NONE || c->layout_of[ord] == HP_NONE)
        return NULL;
    return &c->layouts[c->layout_of[ord]];
}

/* The bytes of field f in instance o, or NULL when o's data lacks them. */
const uint8_t *coll_field_at(const hp_heap *h, const hp_object *o, const coll_field *f)
{
    int size;
    if (f->offset < 0 || !o->data)
        return NULL;
    size = hp_type_size(f->type, hp_heap_id_size(h));
    return (uint64_t)f->offset + (uint64_t)size <= o->data_len ? o->data + f->offset : NULL;
}

uint64_t coll_ref_at(const hp_heap *h, const hp_object *o, const coll_field *f)
{
    const uint8_t *p = f->type == HP_T_OBJECT ? coll_field_at(h, o, f) : NULL;
    return p ? hp_read_id(p, hp_heap_id_size(h)) : 0;
}

/* An int or long field; `missing` when o has none. */
int64_t coll_int_at(const hp_heap *h, const hp_object *o, const coll_field *f, int64_t missing)
{
    const uint8_t *p = coll_field_at(h, o, f);
    if (!p)
        return missing;
    return f->type == HP_T_LONG ? (int64_t)hp_be64(p) : (int64_t)(int32_t)hp_be32(p);
}

/* Object `id` described into *o: 1, or 0 for null or an id absent from the dump. */
int coll_object_of(const hp_heap *h, uint64_t id, uint32_t *index, hp_object *o)
{
    uint32_t i = id ? hp_heap_find(h, id) : HP_NONE;
    if (i == HP_NONE)
        return 0;
    hp_heap_object(h, i, o);
    if (index)
        *index = i;
    return 1;
}

int coll_is_array(const hp_object *o) { return o->kind == HP_KIND_OBJ_ARRAY || o->kind == HP_KIND_PRIM_ARRAY; }

/* An array the collection refers to by field f, described into *arr; 0
 * when the field is null, dangling or not an array. */
int coll_array_at(const hp_heap *h, const hp_object *o, const coll_field *f, hp_object *arr)
{
    return coll_object_of(h, coll_ref_at(h, o, f), NULL, arr) && coll_is_array(arr);
}

void coll_value_ref(const hp_heap *h, uint64_t id, uint64_t marker, hp_coll_value *v)
{
    memset(v, 0, sizeof *v);
    v->type = HP_T_OBJECT;
    v->id = marker && id == marker ? 0 : id;
    v->index = v->id ? hp_heap_find(h, v->id) : HP_NONE;
}

void coll_value_element(const hp_heap *h, const hp_object *arr, uint64_t i, uint64_t marker, hp_coll_value *v)
{
    int size = hp_type_size(arr->elem_type, hp_heap_id_size(h));
    const uint8_t *p = arr->data + i * (uint64_t)size;
    if (arr->elem_type == HP_T_OBJECT) {
        coll_value_ref(h, hp_read_id(p, size), marker, v);
        return;
    }
    memset(v, 0, sizeof *v);
    v->type = arr->elem_type;
    v->index = HP_NONE;
    memcpy(v->bytes, p, (size_t)size);
}

int coll_is_null(const hp_coll_value *v) { return v->type == HP_T_OBJECT && v->id == 0; }

int64_t coll_circular_count(const coll_layout *L, int64_t head, int64_t end, int64_t length)
{
    if (head < 0 || head > length || end < 0 || end > length)
        return -1;
    if (L->spec->flags & COLL_COUNTED)
        return end;
    return head <= end ? end - head : length - head + end;
}

int hp_coll_shape(const hp_coll *c, uint32_t index, const char **known)
{
    int depth;
    for (depth = 0; depth < WRAP_DEPTH; depth++) {
        const coll_layout *L = coll_layout_of(c, index);
        hp_object o;
        uint64_t inner;
        if (!L)
            return HP_COLL_NONE;
        if (known && depth == 0)
            *known = L->spec->name;
        if (L->spec->shape)
            return L->spec->shape;
        hp_heap_object(c->h, index, &o);
        inner = coll_ref_at(c->h, &o, &L->f[F_STORAGE]);
        if (!inner || (index = hp_heap_find(c->h, inner)) == HP_NONE)
            return HP_COLL_LIST; /* a view of nothing: an empty list */
    }
    return HP_COLL_NONE;
}

