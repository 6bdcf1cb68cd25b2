/* Collections of a heap: layouts resolved per class (the table is in
 * hp_coll_layouts.c) and the reads the walks (hp_coll_walk.c) and measures
 * (hp_coll_measure.c) share.  Reads go through the heap index's public API
 * only. */
#include "hp_coll_impl.h"

#include <string.h>

/* ---- fields by name ---- */

static int sid_is(const hp_heap *h, uint64_t sid, const char *name, size_t len)
{
    const uint8_t *text;
    size_t text_len;
    return hp_heap_utf8(h, sid, &text, &text_len) && text_len == len && memcmp(text, name, len) == 0;
}

/* Calls back for each '|'-separated alternative of `names` until one returns 1. */
static int each_name(const char *names, int (*try_name)(void *ctx, const char *name, size_t len), void *ctx)
{
    const char *p = names;
    for (;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (try_name(ctx, p, len))
            return 1;
        if (!bar)
            return 0;
        p = bar + 1;
    }
}

typedef struct {
    const hp_heap *h;
    uint32_t ord;
    hp_field found;
    int statics;
} field_search;

static int try_field(void *ctx, const char *name, size_t len)
{
    field_search *s = ctx;
    if (s->statics) {
        hp_static_iter it;
        for (hp_static_iter_init(&it, s->h, s->ord); hp_static_next(&it, &s->found);)
            if (sid_is(s->h, s->found.name_sid, name, len))
                return 1;
        return 0;
    }
    {
        hp_field_iter it;
        for (hp_field_iter_init(&it, s->h, s->ord); hp_field_next(&it, &s->found);)
            if (sid_is(s->h, s->found.name_sid, name, len))
                return 1;
    }
    return 0;
}

/* The instance field of class `ord` named by `names` (the nearest
 * declaration of the first alternative it has); 0 when it has none. */
int coll_find_field(const hp_heap *h, uint32_t ord, const char *names, coll_field *out)
{
    field_search s;
    s.h = h;
    s.ord = ord;
    s.statics = 0;
    out->offset = -1;
    out->type = 0;
    if (!names || ord == HP_NONE || !each_name(names, try_field, &s))
        return 0;
    out->offset = s.found.offset;
    out->type = s.found.type;
    return 1;
}

/* The object a static reference field of class `ord` holds, or 0. */
static uint64_t static_ref(const hp_heap *h, uint32_t ord, const char *names)
{
    field_search s;
    s.h = h;
    s.ord = ord;
    s.statics = 1;
    if (!names || ord == HP_NONE || !each_name(names, try_field, &s) || s.found.type != HP_T_OBJECT)
        return 0;
    return hp_read_id(s.found.value, hp_heap_id_size(h));
}

typedef struct {
    const hp_heap *h;
    const char *statics;
    uint64_t marker;
} marker_search;

static int try_marker_class(void *ctx, const char *name, size_t len)
{
    marker_search *s = ctx;
    s->marker = static_ref(s->h, hp_heap_find_class_name(s->h, name, len, 0), s->statics);
    return s->marker != 0;
}

/* The object static `statics` holds in the first of `classes` ('|'
 * alternatives: androidx's Java classes keep DELETED in the class, its
 * Kotlin ones in the file's class, SparseArrayCompatKt) that has it, or 0. */
static uint64_t marker_of(const hp_heap *h, const char *classes, const char *statics)
{
    marker_search s;
    s.h = h;
    s.statics = statics;
    s.marker = 0;
    each_name(classes, try_marker_class, &s);
    return s.marker;
}

/* ---- resolving the layouts ---- */

static int is_int(int type) { return type == HP_T_INT || type == HP_T_LONG; }

/* Which spec fields are fields of the collection itself, by kind (the
 * others belong to nodes or segments and are resolved while walking). */
static int own_storage2(int kind) { return kind == COLL_ARRAY || kind == COLL_PARALLEL || kind == COLL_FIELDS; }

/* Resolves `spec` on class `ord` (whose ancestor `named` carries the
 * spec's name) into *out; 0 when the class lacks one of its fields. */
static int resolve(const hp_heap *h, const coll_spec *spec, uint32_t ord, uint32_t named, coll_layout *out)
{
    const char *names[F_COUNT];
    int k;
    names[F_STORAGE] = spec->storage;
    names[F_STORAGE2] = own_storage2(spec->kind) ? spec->storage2 : NULL;
    names[F_SIZE] = spec->kind == COLL_SEGMENTS ? NULL : spec->size;
    names[F_HEAD] = spec->head;
    names[F_NULL_ENTRY] = spec->null_entry;
    names[F_CAPACITY] = spec->capacity;
    out->spec = spec;
    for (k = 0; k < F_COUNT; k++) {
        if (!coll_find_field(h, ord, names[k], &out->f[k]) && names[k])
            return 0;
    }
    if ((out->f[F_STORAGE].offset >= 0 && out->f[F_STORAGE].type != HP_T_OBJECT) ||
        (out->f[F_STORAGE2].offset >= 0 && out->f[F_STORAGE2].type != HP_T_OBJECT) ||
        (out->f[F_NULL_ENTRY].offset >= 0 && out->f[F_NULL_ENTRY].type != HP_T_OBJECT) ||
        (out->f[F_CAPACITY].offset >= 0 && out->f[F_CAPACITY].type != HP_T_OBJECT) ||
        (out->f[F_SIZE].offset >= 0 && !is_int(out->f[F_SIZE].type)) ||
        (out->f[F_HEAD].offset >= 0 && !is_int(out->f[F_HEAD].type)))
        return 0;
    out->marker = 0;
    if (spec->marker) {
        out->marker = spec->marker_class ? marker_of(h, spec->marker_class, spec->marker)
                                         : static_ref(h, named, spec->marker);
        if (!out->marker && (spec->flags & COLL_NEEDS_MARKER))
            return 0;
    }
    return 1;
}

/* The first spec named like class `ord`, or coll_spec_count. */
static size_t spec_named(const hp_heap *h, uint32_t ord)
{
    hp_class_info info;
    size_t k;
    hp_heap_class(h, ord, &info);
    if (!info.name || info.elem_type)
        return coll_spec_count;
    for (k = 0; k < coll_spec_count; k++)
        if (hp_java_name_equals(info.name, info.name_len, coll_specs[k].name, strlen(coll_specs[k].name)))
            return k;
    return coll_spec_count;
}

hp_code hp_coll_new(const hp_heap *h, const hp_alloc *alloc, hp_coll **out, hp_error *err)
{
    const hp_alloc *a = alloc ? alloc : &hp_default_alloc;
    uint32_t n = hp_heap_class_count(h), ord;
    hp_coll *c = a->malloc_fn(sizeof *c);
    size_t *named = NULL;
    *out = NULL;
    if (c) {
        memset(c, 0, sizeof *c);
        c->h = h;
        c->alloc = *a;
        c->layout_of = a->malloc_fn((n ? n : 1) * sizeof *c->layout_of);
        named = a->malloc_fn((n ? n : 1) * sizeof *named);
    }
    if (!c || !c->layout_of || !named) {
        a->free_fn(named);
        hp_coll_free(c);
        return hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the collection layouts");
    }
    for (ord = 0; ord < n; ord++)
        named[ord] = spec_named(h, ord);
    for (ord = 0; ord < n; ord++) {
        uint32_t anc = ord, depth = 0;
        coll_layout layout;
        int found = 0;
        c->layout_of[ord] = HP_NONE;
        for (; anc != HP_NONE && depth <= n && !found; depth++) {
            hp_class_info info;
            size_t k = named[anc];
            for (; k < coll_spec_count && !found; k++) {
                if (k > named[anc] && strcmp(coll_specs[k].name, coll_specs[named[anc]].name) != 0)
                    break;
                found = resolve(h, &coll_specs[k], ord, anc, &layout);
            }
            hp_heap_class(h, anc, &info);
            anc = info.super_ord;
        }
        if (found) {
            coll_layout *more = a->realloc_fn(c->layouts, (c->n_layouts + 1) * sizeof *more);
            if (!more) {
                a->free_fn(named);
                hp_coll_free(c);
                return hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the collection layouts");
            }
            c->layouts = more;
            c->layouts[c->n_layouts] = layout;
            c->layout_of[ord] = c->n_layouts++;
        }
    }
    a->free_fn(named);
    *out = c;
    return HP_OK;
}

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

