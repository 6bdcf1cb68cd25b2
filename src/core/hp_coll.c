/* Collections of a heap: layouts resolved per class, one walker over them
 * (hp_coll.h; the layouts are in hp_coll_layouts.c).  Reads go through the
 * heap index's public API only. */
#include "hp_coll.h"

#include <string.h>

#include "hp_coll_layouts.h"

/* A field of a collection or node class: its offset in the instance data
 * and its type; offset -1 when the class has none. */
typedef struct coll_field {
    int64_t offset;
    int type;
} coll_field;

/* The collection fields a layout reads, resolved on one class. */
enum { F_STORAGE, F_STORAGE2, F_SIZE, F_HEAD, F_NULL_ENTRY, F_CAPACITY, F_COUNT };

typedef struct coll_layout {
    const coll_spec *spec;
    coll_field f[F_COUNT];
    uint64_t marker;        /* id of the marker object, 0 for none */
} coll_layout;

struct hp_coll {
    const hp_heap *h;
    hp_alloc alloc;
    uint32_t *layout_of;    /* per class ordinal: its layout, or HP_NONE */
    coll_layout *layouts;
    uint32_t n_layouts;
};

/* Wrappers of wrappers are followed this deep, no deeper (a view of a view
 * of a list is three; a cycle of views would be endless). */
#define WRAP_DEPTH 16

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
static int find_field(const hp_heap *h, uint32_t ord, const char *names, coll_field *out)
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
        if (!find_field(h, ord, names[k], &out->f[k]) && names[k])
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
        uint32_t holder = named;
        if (spec->marker_class)
            holder = hp_heap_find_class_name(h, spec->marker_class, strlen(spec->marker_class), 0);
        out->marker = static_ref(h, holder, spec->marker);
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
static const coll_layout *layout_of(const hp_coll *c, uint32_t index)
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
static const uint8_t *field_at(const hp_heap *h, const hp_object *o, const coll_field *f)
{
    int size;
    if (f->offset < 0 || !o->data)
        return NULL;
    size = hp_type_size(f->type, hp_heap_id_size(h));
    return (uint64_t)f->offset + (uint64_t)size <= o->data_len ? o->data + f->offset : NULL;
}

static uint64_t ref_at(const hp_heap *h, const hp_object *o, const coll_field *f)
{
    const uint8_t *p = f->type == HP_T_OBJECT ? field_at(h, o, f) : NULL;
    return p ? hp_read_id(p, hp_heap_id_size(h)) : 0;
}

/* An int or long field; `missing` when o has none. */
static int64_t int_at(const hp_heap *h, const hp_object *o, const coll_field *f, int64_t missing)
{
    const uint8_t *p = field_at(h, o, f);
    if (!p)
        return missing;
    return f->type == HP_T_LONG ? (int64_t)hp_be64(p) : (int64_t)(int32_t)hp_be32(p);
}

/* Object `id` described into *o: 1, or 0 for null or an id absent from the dump. */
static int object_of(const hp_heap *h, uint64_t id, uint32_t *index, hp_object *o)
{
    uint32_t i = id ? hp_heap_find(h, id) : HP_NONE;
    if (i == HP_NONE)
        return 0;
    hp_heap_object(h, i, o);
    if (index)
        *index = i;
    return 1;
}

static int is_array(const hp_object *o) { return o->kind == HP_KIND_OBJ_ARRAY || o->kind == HP_KIND_PRIM_ARRAY; }

/* An array the collection refers to by field f, described into *arr; 0
 * when the field is null, dangling or not an array. */
static int array_at(const hp_heap *h, const hp_object *o, const coll_field *f, hp_object *arr)
{
    return object_of(h, ref_at(h, o, f), NULL, arr) && is_array(arr);
}

static void value_ref(const hp_heap *h, uint64_t id, uint64_t marker, hp_coll_value *v)
{
    memset(v, 0, sizeof *v);
    v->type = HP_T_OBJECT;
    v->id = marker && id == marker ? 0 : id;
    v->index = v->id ? hp_heap_find(h, v->id) : HP_NONE;
}

static void value_element(const hp_heap *h, const hp_object *arr, uint64_t i, uint64_t marker, hp_coll_value *v)
{
    int size = hp_type_size(arr->elem_type, hp_heap_id_size(h));
    const uint8_t *p = arr->data + i * (uint64_t)size;
    if (arr->elem_type == HP_T_OBJECT) {
        value_ref(h, hp_read_id(p, size), marker, v);
        return;
    }
    memset(v, 0, sizeof *v);
    v->type = arr->elem_type;
    v->index = HP_NONE;
    memcpy(v->bytes, p, (size_t)size);
}

static int is_null(const hp_coll_value *v) { return v->type == HP_T_OBJECT && v->id == 0; }

/* ---- walks ---- */

/* A node class's fields, resolved once per walk. */
typedef struct node_fields {
    uint32_t cls;
    const coll_spec *spec;
    coll_field key, value, next, left, right, null_flag, first, forward;
    int ok;
} node_fields;

typedef struct walk {
    const hp_coll *c;
    const hp_heap *h;
    hp_coll_emit emit;
    void *ctx;
    hp_error *err;
    uint64_t budget;          /* nodes it may still visit */
    uint64_t offset;          /* the collection's sub-record, for errors */
    int keys_only;            /* a set over a map: elements are its keys */
    node_fields cache[4];
    unsigned n_cache;
    uint32_t *stack;          /* TREE: the in-order stack */
    size_t stack_cap;
} walk;

static hp_code corrupt(walk *w, const char *why)
{
    return hp_fail(w->err, HP_E_CORRUPT, w->offset, HP_SUB_INSTANCE_DUMP, 1, 0, 0, why);
}

/* One more node visited: a walk visits each node once, so more nodes than
 * the heap has objects means they loop. */
static hp_code step(walk *w)
{
    if (w->budget == 0)
        return corrupt(w, "a collection's nodes loop (more of them than objects in the heap)");
    w->budget--;
    return HP_OK;
}

static hp_code put(walk *w, const hp_coll_value *key, const hp_coll_value *value)
{
    static const hp_coll_value none;
    if (w->keys_only)
        value = &none;
    if (w->emit(w->ctx, key, value ? value : &none))
        return hp_fail(w->err, HP_E_ABORTED, w->offset, HP_SUB_INSTANCE_DUMP, 1, 0, 0, "the walk was stopped");
    return HP_OK;
}

static const node_fields *node_of(walk *w, const coll_spec *spec, uint32_t cls)
{
    node_fields *n;
    unsigned k;
    for (k = 0; k < w->n_cache; k++)
        if (w->cache[k].cls == cls && w->cache[k].spec == spec)
            return &w->cache[k];
    n = &w->cache[w->n_cache < 4 ? w->n_cache++ : cls % 4];
    memset(n, 0, sizeof *n);
    n->cls = cls;
    n->spec = spec;
    find_field(w->h, cls, spec->key, &n->key);
    find_field(w->h, cls, spec->value, &n->value);
    find_field(w->h, cls, spec->next, &n->next);
    find_field(w->h, cls, spec->left, &n->left);
    find_field(w->h, cls, spec->right, &n->right);
    find_field(w->h, cls, spec->null_flag, &n->null_flag);
    if (spec->flags & COLL_TREEBINS) {
        find_field(w->h, cls, "first", &n->first);
        find_field(w->h, cls, "nextTable", &n->forward);
    }
    n->ok = (!spec->key || n->key.type == HP_T_OBJECT) && (!spec->value || n->value.type == HP_T_OBJECT) &&
            (!spec->next || n->next.type == HP_T_OBJECT) && (!spec->left || n->left.type == HP_T_OBJECT) &&
            (!spec->right || n->right.type == HP_T_OBJECT);
    return n;
}

/* Node `id` described, with its class's fields; NULL at the end of a
 * chain (null, or a node absent from the dump: the chain is cut there, as
 * the heap index keeps dangling references). */
static const node_fields *node(walk *w, const coll_spec *spec, uint64_t id, hp_object *o, hp_code *rc)
{
    const node_fields *n;
    *rc = HP_OK;
    if (!object_of(w->h, id, NULL, o))
        return NULL;
    if ((*rc = step(w)) != HP_OK)
        return NULL;
    if (o->kind != HP_KIND_INSTANCE || o->class_ord == HP_NONE) {
        *rc = corrupt(w, "a collection's node is not an instance of a known class");
        return NULL;
    }
    n = node_of(w, spec, o->class_ord);
    if (!n->ok)
        *rc = corrupt(w, "a collection's node lacks the fields of its layout");
    return n->ok ? n : NULL;
}

/* Whether a hash node's key is one its map's iterators skip: a weak key
 * the GC cleared (null in the dump, unless null_flag says the key is null;
 * the JDK's null key is the marker object, never cleared). */
static int cleared(walk *w, const coll_spec *spec, const hp_object *o, const node_fields *n, uint64_t key)
{
    const uint8_t *flag;
    if (!(spec->flags & COLL_WEAK) || key != 0)
        return 0;
    flag = field_at(w->h, o, &n->null_flag);
    return !flag || !*flag;
}

/* One chain of a hash bucket, from node `id`. */
static hp_code walk_chain(walk *w, const coll_layout *L, uint64_t id)
{
    const coll_spec *spec = L->spec;
    hp_code rc;
    hp_object o;
    const node_fields *n;
    while ((n = node(w, spec, id, &o, &rc)) != NULL) {
        hp_coll_value k, v;
        uint64_t key;
        if (n->first.type == HP_T_OBJECT) { /* a tree bin: its nodes, linked from first */
            id = ref_at(w->h, &o, &n->first);
            continue;
        }
        if (n->forward.type == HP_T_OBJECT) /* a bin moved to the next table by a resize in progress */
            break;
        key = ref_at(w->h, &o, &n->key);
        value_ref(w->h, key, L->marker, &k);
        value_ref(w->h, ref_at(w->h, &o, &n->value), 0, &v);
        if (!cleared(w, spec, &o, n, key) && (rc = put(w, &k, &v)) != HP_OK)
            return rc;
        id = ref_at(w->h, &o, &n->next);
    }
    return rc;
}

static hp_code walk_table(walk *w, const coll_layout *L, const hp_object *table)
{
    uint32_t k;
    int id_size = hp_heap_id_size(w->h);
    hp_code rc;
    if (table->elem_type != HP_T_OBJECT)
        return corrupt(w, "a hash table is not an object array");
    for (k = 0; k < table->length; k++) {
        uint32_t slot = (L->spec->flags & COLL_REVERSE) ? table->length - 1 - k : k;
        uint64_t id = hp_read_id(table->data + (uint64_t)slot * id_size, id_size);
        if (id && (rc = walk_chain(w, L, id)) != HP_OK)
            return rc;
    }
    return HP_OK;
}

static hp_code walk_hash(walk *w, const coll_layout *L, const hp_object *o)
{
    hp_object table;
    hp_code rc;
    uint64_t null_entry = ref_at(w->h, o, &L->f[F_NULL_ENTRY]);
    if (null_entry && (rc = walk_chain(w, L, null_entry)) != HP_OK)
        return rc;
    return array_at(w->h, o, &L->f[F_STORAGE], &table) ? walk_table(w, L, &table) : HP_OK;
}

static hp_code walk_segments(walk *w, const coll_layout *L, const hp_object *o)
{
    hp_object segs, seg, table;
    uint32_t k;
    int id_size = hp_heap_id_size(w->h);
    hp_code rc;
    if (!array_at(w->h, o, &L->f[F_STORAGE], &segs) || segs.elem_type != HP_T_OBJECT)
        return HP_OK;
    for (k = 0; k < segs.length; k++) {
        uint32_t slot = (L->spec->flags & COLL_REVERSE) ? segs.length - 1 - k : k;
        coll_field f;
        if (!object_of(w->h, hp_read_id(segs.data + (uint64_t)slot * id_size, id_size), NULL, &seg) ||
            seg.kind != HP_KIND_INSTANCE || !find_field(w->h, seg.class_ord, L->spec->storage2, &f))
            continue; /* JDK 7 creates segments lazily */
        if (array_at(w->h, &seg, &f, &table) && (rc = walk_table(w, L, &table)) != HP_OK)
            return rc;
    }
    return HP_OK;
}

static hp_code walk_array(walk *w, const coll_layout *L, const hp_object *o)
{
    const coll_spec *spec = L->spec;
    uint64_t stride = spec->shape == HP_COLL_MAP ? 2 : 1, n, i;
    hp_object arr;
    hp_code rc;
    if (!array_at(w->h, o, &L->f[F_STORAGE], &arr))
        return HP_OK;
    n = arr.length;
    if (!(spec->flags & COLL_OPEN) && L->f[F_SIZE].offset >= 0) {
        int64_t size = int_at(w->h, o, &L->f[F_SIZE], 0);
        uint64_t want = size > 0 ? (uint64_t)size * stride : 0;
        n = want < n ? want : n;
    }
    for (i = 0; i + stride <= n; i += stride) {
        hp_coll_value k, v;
        value_element(w->h, &arr, i, L->marker, &k);
        if ((spec->flags & COLL_OPEN) && arr.elem_type == HP_T_OBJECT &&
            hp_read_id(arr.data + i * hp_heap_id_size(w->h), hp_heap_id_size(w->h)) == 0)
            continue; /* an empty slot (the marker stands for a null key) */
        if (stride == 2)
            value_element(w->h, &arr, i + 1, 0, &v);
        if ((rc = put(w, &k, stride == 2 ? &v : NULL)) != HP_OK)
            return rc;
    }
    return HP_OK;
}

static hp_code walk_parallel(walk *w, const coll_layout *L, const hp_object *o)
{
    hp_object keys, values;
    int64_t size = int_at(w->h, o, &L->f[F_SIZE], 0);
    uint64_t n, i;
    hp_code rc;
    if (!array_at(w->h, o, &L->f[F_STORAGE], &keys) || !array_at(w->h, o, &L->f[F_STORAGE2], &values))
        return HP_OK;
    n = size > 0 ? (uint64_t)size : 0;
    n = n < keys.length ? n : keys.length;
    n = n < values.length ? n : values.length;
    for (i = 0; i < n; i++) {
        hp_coll_value k, v;
        value_element(w->h, &keys, i, 0, &k);
        value_element(w->h, &values, i, 0, &v);
        if (L->marker && v.type == HP_T_OBJECT && v.id == L->marker)
            continue; /* DELETED: removed, not yet compacted (mGarbage) */
        if ((rc = put(w, &k, &v)) != HP_OK)
            return rc;
    }
    return HP_OK;
}

/* Elements of a circular buffer from `head`: up to the tail index (or
 * `count` of them, COUNTED); -1 when the indexes lie outside the array.
 * The hprof agent trims an object array's trailing nulls, so a tail may
 * equal the length written. */
static int64_t circular_count(const coll_layout *L, int64_t head, int64_t end, int64_t length)
{
    if (head < 0 || head > length || end < 0 || end > length)
        return -1;
    if (L->spec->flags & COLL_COUNTED)
        return end;
    return head <= end ? end - head : length - head + end;
}

static hp_code walk_circular(walk *w, const coll_layout *L, const hp_object *o)
{
    hp_object arr;
    int64_t head = int_at(w->h, o, &L->f[F_HEAD], -1), end = int_at(w->h, o, &L->f[F_SIZE], -1), count, k;
    hp_code rc;
    if (!array_at(w->h, o, &L->f[F_STORAGE], &arr) || arr.length == 0)
        return HP_OK;
    if ((count = circular_count(L, head, end, arr.length)) < 0)
        return corrupt(w, "a circular buffer's indexes lie outside its array");
    for (k = 0; k < count; k++) {
        hp_coll_value v;
        value_element(w->h, &arr, (uint64_t)((head + k) % arr.length), 0, &v);
        if ((rc = put(w, &v, NULL)) != HP_OK)
            return rc;
    }
    return HP_OK;
}

static hp_code walk_linked(walk *w, const coll_layout *L, const hp_object *o)
{
    const coll_spec *spec = L->spec;
    uint64_t start = ref_at(w->h, o, &L->f[F_STORAGE]), id;
    hp_object n_obj;
    const node_fields *n;
    hp_code rc = HP_OK;
    if (spec->storage2) { /* the start object holds the first node (a skip list's head index) */
        coll_field f;
        if (!object_of(w->h, start, NULL, &n_obj) || n_obj.kind != HP_KIND_INSTANCE ||
            !find_field(w->h, n_obj.class_ord, spec->storage2, &f))
            return HP_OK;
        start = ref_at(w->h, &n_obj, &f);
    }
    id = start;
    if (spec->flags & (COLL_SENTINEL | COLL_DUMMY_HEAD)) {
        if (!(n = node(w, spec, start, &n_obj, &rc)))
            return rc;
        id = ref_at(w->h, &n_obj, &n->next);
    }
    while (id && !((spec->flags & COLL_SENTINEL) && id == start)) {
        hp_coll_value k, v;
        if (!(n = node(w, spec, id, &n_obj, &rc)))
            return rc;
        value_ref(w->h, ref_at(w->h, &n_obj, &n->key), 0, &k);
        value_ref(w->h, ref_at(w->h, &n_obj, &n->value), 0, &v);
        if (!((spec->flags & COLL_SKIP_NULL) && is_null(&k)) &&
            !((spec->flags & COLL_SKIPLIST) && (is_null(&v) || v.id == id)) &&
            (rc = put(w, &k, spec->shape == HP_COLL_MAP ? &v : NULL)) != HP_OK)
            return rc;
        id = ref_at(w->h, &n_obj, &n->next);
    }
    return HP_OK;
}

static hp_code push(walk *w, size_t *top, uint32_t index)
{
    if (*top == w->stack_cap) {
        size_t want = w->stack_cap ? 2 * w->stack_cap : 64;
        uint32_t *more = w->c->alloc.realloc_fn(w->stack, want * sizeof *more);
        if (!more)
            return hp_fail(w->err, HP_E_NOMEM, w->offset, HP_SUB_INSTANCE_DUMP, 1, 0, 0,
                           "out of memory for a tree walk");
        w->stack = more;
        w->stack_cap = want;
    }
    w->stack[(*top)++] = index;
    return HP_OK;
}

/* In order, without recursion: a tree may be as deep as it has nodes. */
static hp_code walk_tree(walk *w, const coll_layout *L, const hp_object *o)
{
    const coll_spec *spec = L->spec;
    uint64_t id = ref_at(w->h, o, &L->f[F_STORAGE]);
    size_t top = 0;
    hp_object n_obj;
    const node_fields *n;
    hp_code rc = HP_OK;
    for (;;) {
        while (id) {
            uint32_t index;
            if (!(n = node(w, spec, id, &n_obj, &rc))) {
                if (rc != HP_OK)
                    return rc;
                break;
            }
            index = hp_heap_find(w->h, id);
            if ((rc = push(w, &top, index)) != HP_OK)
                return rc;
            id = ref_at(w->h, &n_obj, &n->left);
        }
        if (top == 0)
            return HP_OK;
        hp_heap_object(w->h, w->stack[--top], &n_obj);
        n = node_of(w, spec, n_obj.class_ord);
        {
            hp_coll_value k, v;
            value_ref(w->h, ref_at(w->h, &n_obj, &n->key), 0, &k);
            value_ref(w->h, ref_at(w->h, &n_obj, &n->value), 0, &v);
            if ((rc = put(w, &k, &v)) != HP_OK)
                return rc;
        }
        id = ref_at(w->h, &n_obj, &n->right);
    }
}

static hp_code walk_fields(walk *w, const coll_layout *L, const hp_object *o)
{
    hp_coll_value a, b;
    hp_code rc;
    value_ref(w->h, ref_at(w->h, o, &L->f[F_STORAGE]), 0, &a);
    value_ref(w->h, ref_at(w->h, o, &L->f[F_STORAGE2]), 0, &b);
    if (L->spec->shape == HP_COLL_MAP)
        return put(w, &a, &b);
    if (L->f[F_STORAGE].offset >= 0 && !is_null(&a) && a.id != L->marker && (rc = put(w, &a, NULL)) != HP_OK)
        return rc;
    if (L->f[F_STORAGE2].offset >= 0 && !is_null(&b) && b.id != L->marker)
        return put(w, &b, NULL);
    return HP_OK;
}

static hp_code walk_one(walk *w, uint32_t index, int depth)
{
    const coll_layout *L = layout_of(w->c, index);
    hp_object o;
    if (!L)
        return hp_fail(w->err, HP_E_USAGE, w->offset, HP_SUB_INSTANCE_DUMP, 1, 0, 0, "not a collection");
    hp_heap_object(w->h, index, &o);
    switch (L->spec->kind) {
    case COLL_ARRAY: return walk_array(w, L, &o);
    case COLL_PARALLEL: return walk_parallel(w, L, &o);
    case COLL_CIRCULAR: return walk_circular(w, L, &o);
    case COLL_HASH: return walk_hash(w, L, &o);
    case COLL_SEGMENTS: return walk_segments(w, L, &o);
    case COLL_LINKED: return walk_linked(w, L, &o);
    case COLL_TREE: return walk_tree(w, L, &o);
    case COLL_FIELDS: return walk_fields(w, L, &o);
    case COLL_WRAPPER: {
        uint64_t inner = ref_at(w->h, &o, &L->f[F_STORAGE]);
        uint32_t i = inner ? hp_heap_find(w->h, inner) : HP_NONE;
        if (i == HP_NONE)
            return HP_OK;
        if (depth >= WRAP_DEPTH)
            return corrupt(w, "collections wrap each other in a loop");
        if (L->spec->flags & COLL_KEYS) {
            if (hp_coll_shape(w->c, i, NULL) != HP_COLL_MAP)
                return corrupt(w, "a set's backing map is not a map");
            w->keys_only = 1;
        }
        return walk_one(w, i, depth + 1);
    }
    default: return HP_OK;
    }
}

int hp_coll_shape(const hp_coll *c, uint32_t index, const char **known)
{
    int depth;
    for (depth = 0; depth < WRAP_DEPTH; depth++) {
        const coll_layout *L = layout_of(c, index);
        hp_object o;
        uint64_t inner;
        if (!L)
            return HP_COLL_NONE;
        if (known && depth == 0)
            *known = L->spec->name;
        if (L->spec->shape)
            return L->spec->shape;
        hp_heap_object(c->h, index, &o);
        inner = ref_at(c->h, &o, &L->f[F_STORAGE]);
        if (!inner || (index = hp_heap_find(c->h, inner)) == HP_NONE)
            return HP_COLL_LIST; /* a view of nothing: an empty list */
    }
    return HP_COLL_NONE;
}

hp_code hp_coll_walk(const hp_coll *c, uint32_t index, hp_coll_emit emit, void *ctx, hp_error *err)
{
    walk w;
    hp_code rc;
    memset(&w, 0, sizeof w);
    w.c = c;
    w.h = c->h;
    w.emit = emit;
    w.ctx = ctx;
    w.err = err;
    w.budget = (uint64_t)hp_heap_object_count(c->h) + 1;
    if (index >= hp_heap_object_count(c->h))
        return hp_fail(err, HP_E_USAGE, 0, -1, 0, 0, 0, "no such object");
    {
        hp_object o;
        hp_heap_object(c->h, index, &o);
        w.offset = o.offset;
    }
    rc = walk_one(&w, index, 0);
    c->alloc.free_fn(w.stack);
    return rc;
}

/* ---- measures ---- */

typedef struct backing {
    uint32_t index[64];
    uint64_t stride[64];
    unsigned n;
} backing;

static void add_backing(const hp_heap *h, backing *b, const hp_object *owner, const coll_field *f, uint64_t stride)
{
    uint64_t id = ref_at(h, owner, f);
    uint32_t i = id ? hp_heap_find(h, id) : HP_NONE;
    if (i != HP_NONE && b->n < 64) {
        hp_kind kind = hp_heap_object_kind(h, i);
        if (kind == HP_KIND_OBJ_ARRAY || kind == HP_KIND_PRIM_ARRAY) {
            b->index[b->n] = i;
            b->stride[b->n++] = stride;
        }
    }
}

/* wasted bytes of the backing arrays: hp_coll.h states the rule. */
static uint64_t wasted_of(const hp_heap *h, const backing *b, int64_t size)
{
    uint64_t total = 0;
    unsigned k;
    if (size < 0)
        return 0;
    for (k = 0; k < b->n; k++) {
        hp_object arr;
        uint64_t used, elem;
        hp_heap_object(h, b->index[k], &arr);
        if (size == 0) {
            total += hp_heap_shallow_size(h, b->index[k]);
            continue;
        }
        used = (uint64_t)size * b->stride[k];
        elem = arr.elem_type == HP_T_OBJECT ? (uint64_t)hp_heap_size_model(h)->oop_size
                                            : (uint64_t)hp_type_size(arr.elem_type, hp_heap_id_size(h));
        if (used < arr.length)
            total += (arr.length - used) * elem;
    }
    return total;
}

/* baseCount plus the values of counterCells (ConcurrentHashMap's sumCount). */
static int64_t counted_size(const hp_heap *h, const hp_object *o, int64_t base)
{
    coll_field f, value;
    hp_object cells, cell;
    int id_size = hp_heap_id_size(h);
    uint32_t k;
    if (!find_field(h, o->class_ord, "counterCells", &f) || !array_at(h, o, &f, &cells) ||
        cells.elem_type != HP_T_OBJECT)
        return base;
    for (k = 0; k < cells.length; k++)
        if (object_of(h, hp_read_id(cells.data + (uint64_t)k * id_size, id_size), NULL, &cell) &&
            cell.kind == HP_KIND_INSTANCE && find_field(h, cell.class_ord, "value", &value))
            base += int_at(h, &cell, &value, 0);
    return base;
}

static void measure(const hp_coll *c, uint32_t index, hp_coll_measure *out, int depth)
{
    const hp_heap *h = c->h;
    const coll_layout *L = layout_of(c, index);
    const coll_spec *spec;
    hp_object o, arr;
    backing b;
    memset(out, 0, sizeof *out);
    out->size = out->capacity = -1;
    out->inner = HP_NONE;
    if (!L || depth >= WRAP_DEPTH)
        return;
    spec = L->spec;
    out->shape = spec->shape;
    b.n = 0;
    hp_heap_object(h, index, &o);
    switch (spec->kind) {
    case COLL_EMPTY: out->size = 0; break;
    case COLL_ARRAY: {
        uint64_t stride = spec->shape == HP_COLL_MAP ? 2 : 1;
        int has = array_at(h, &o, &L->f[F_STORAGE], &arr);
        out->capacity = has ? (int64_t)(arr.length / stride) : 0;
        out->size = L->f[F_SIZE].offset >= 0 ? int_at(h, &o, &L->f[F_SIZE], -1) : out->capacity;
        add_backing(h, &b, &o, &L->f[F_STORAGE], stride);
        add_backing(h, &b, &o, &L->f[F_STORAGE2], 1);
        break;
    }
    case COLL_PARALLEL:
        out->capacity = array_at(h, &o, &L->f[F_STORAGE], &arr) ? (int64_t)arr.length : 0;
        out->size = int_at(h, &o, &L->f[F_SIZE], -1);
        add_backing(h, &b, &o, &L->f[F_STORAGE], 1);
        add_backing(h, &b, &o, &L->f[F_STORAGE2], 1);
        break;
    case COLL_CIRCULAR: {
        int64_t head = int_at(h, &o, &L->f[F_HEAD], -1), end = int_at(h, &o, &L->f[F_SIZE], -1);
        out->capacity = array_at(h, &o, &L->f[F_STORAGE], &arr) ? (int64_t)arr.length : 0;
        out->size = out->capacity ? circular_count(L, head, end, out->capacity) : 0;
        add_backing(h, &b, &o, &L->f[F_STORAGE], 1);
        break;
    }
    case COLL_HASH:
        out->capacity = array_at(h, &o, &L->f[F_STORAGE], &arr) ? (int64_t)arr.length : 0;
        out->size = int_at(h, &o, &L->f[F_SIZE], -1);
        if ((spec->flags & COLL_SIZE_CELLS) && out->size >= 0)
            out->size = counted_size(h, &o, out->size);
        add_backing(h, &b, &o, &L->f[F_STORAGE], 1);
        break;
    case COLL_SEGMENTS: {
        hp_object segs, seg;
        uint32_t k;
        int id_size = hp_heap_id_size(h);
        out->size = out->capacity = 0;
        if (!array_at(h, &o, &L->f[F_STORAGE], &segs) || segs.elem_type != HP_T_OBJECT)
            break;
        for (k = 0; k < segs.length; k++) {
            coll_field table, count;
            if (!object_of(h, hp_read_id(segs.data + (uint64_t)k * id_size, id_size), NULL, &seg) ||
                seg.kind != HP_KIND_INSTANCE)
                continue;
            if (find_field(h, seg.class_ord, spec->size, &count))
                out->size += int_at(h, &seg, &count, 0);
            if (find_field(h, seg.class_ord, spec->storage2, &table) && array_at(h, &seg, &table, &arr)) {
                out->capacity += arr.length;
                add_backing(h, &b, &seg, &table, 1);
            }
        }
        break;
    }
    case COLL_LINKED:
    case COLL_TREE:
        out->size = int_at(h, &o, &L->f[F_SIZE], -1);
        if (L->f[F_CAPACITY].offset >= 0) { /* a LinkedHashMap's table */
            out->capacity = array_at(h, &o, &L->f[F_CAPACITY], &arr) ? (int64_t)arr.length : 0;
            add_backing(h, &b, &o, &L->f[F_CAPACITY], 1);
        }
        break;
    case COLL_FIELDS: {
        uint64_t first = ref_at(h, &o, &L->f[F_STORAGE]), second = ref_at(h, &o, &L->f[F_STORAGE2]);
        if (spec->shape == HP_COLL_MAP)
            out->size = 1;
        else
            out->size = (first && first != L->marker) + (second && second != L->marker);
        break;
    }
    case COLL_WRAPPER: {
        uint64_t inner = ref_at(h, &o, &L->f[F_STORAGE]);
        uint32_t i = inner ? hp_heap_find(h, inner) : HP_NONE;
        int owns = (spec->flags & COLL_OWNS) != 0;
        if (i == HP_NONE) {
            out->size = 0;
            out->shape = spec->shape ? spec->shape : HP_COLL_LIST;
            return;
        }
        measure(c, i, out, depth + 1);
        if (spec->shape)
            out->shape = spec->shape;
        out->inner = i;
        out->owns_inner = owns;
        if (!owns) { /* a view: the storage is its inner collection's */
            out->capacity = -1;
            out->wasted = 0;
        }
        return;
    }
    default: break;
    }
    out->wasted = out->capacity >= 0 ? wasted_of(h, &b, out->size) : 0;
}

void hp_coll_measure_of(const hp_coll *c, uint32_t index, hp_coll_measure *out)
{
    measure(c, index, out, 0);
    if (out->shape == 0 && layout_of(c, index))
        out->shape = hp_coll_shape(c, index, NULL);
}

hp_code hp_coll_waste(const hp_coll *c, hp_coll_class_waste *rows, int (*interrupt)(void *ctx), void *ctx,
                      hp_error *err)
{
    const hp_heap *h = c->h;
    uint32_t n = hp_heap_object_count(h), i;
    uint8_t *owned = c->alloc.malloc_fn((size_t)n / 8 + 1);
    if (!owned)
        return hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the collection measures");
    memset(owned, 0, (size_t)n / 8 + 1);
    /* First the collections wrappers own (a HashSet's map): they count under the wrapper. */
    for (i = 0; i < n; i++) {
        const coll_layout *L = layout_of(c, i);
        if ((i & 4095) == 0 && interrupt && interrupt(ctx)) {
            c->alloc.free_fn(owned);
            return hp_fail(err, HP_E_ABORTED, 0, -1, 0, 0, 0, "interrupted");
        }
        if (L && L->spec->kind == COLL_WRAPPER && (L->spec->flags & COLL_OWNS)) {
            hp_object o;
            uint64_t inner;
            uint32_t k;
            hp_heap_object(h, i, &o);
            inner = ref_at(h, &o, &L->f[F_STORAGE]);
            k = inner ? hp_heap_find(h, inner) : HP_NONE;
            if (k != HP_NONE)
                owned[k >> 3] |= (uint8_t)(1u << (k & 7));
        }
    }
    for (i = 0; i < n; i++) {
        hp_coll_measure m;
        hp_coll_class_waste *row;
        if ((i & 4095) == 0 && interrupt && interrupt(ctx)) {
            c->alloc.free_fn(owned);
            return hp_fail(err, HP_E_ABORTED, 0, -1, 0, 0, 0, "interrupted");
        }
        if (!layout_of(c, i) || (owned[i >> 3] & (1u << (i & 7))))
            continue;
        measure(c, i, &m, 0);
        if (m.shape == HP_COLL_NONE)
            continue; /* a view of something that is no collection (a map's key set) */
        row = &rows[hp_heap_object_class(h, i)];
        row->instances++;
        row->empty += m.size == 0;
        if (m.capacity > 0 && m.size >= 0) {
            row->filled++;
            row->fill_sum += (double)m.size / (double)m.capacity;
        }
        row->wasted += m.wasted;
    }
    c->alloc.free_fn(owned);
    return HP_OK;
}
