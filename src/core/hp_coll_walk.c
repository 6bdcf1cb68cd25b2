/* Walks of collections (hp_coll_walk): one walker per kind of layout,
 * each bounded by the heap's object count. */
#include "hp_coll_impl.h"

#include <string.h>


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
    coll_find_field(w->h, cls, spec->key, &n->key);
    coll_find_field(w->h, cls, spec->value, &n->value);
    coll_find_field(w->h, cls, spec->next, &n->next);
    coll_find_field(w->h, cls, spec->left, &n->left);
    coll_find_field(w->h, cls, spec->right, &n->right);
    coll_find_field(w->h, cls, spec->null_flag, &n->null_flag);
    if (spec->flags & COLL_TREEBINS) {
        coll_find_field(w->h, cls, "first", &n->first);
        coll_find_field(w->h, cls, "nextTable", &n->forward);
    }
    n->ok = (!spec->key || n->key.type == HP_T_OBJECT) && (!spec->value || n->value.type == HP_T_OBJECT) &&
            (!spec->next || n->next.type == HP_T_OBJECT) && (!spec->left || n->left.type == HP_T_OBJECT) &&
            (!spec->right || n->right.type == HP_T_OBJECT);
    return n;
}

/* Node `index` (HP_NONE: the end of a chain: null, or a node absent from
 * the dump, where the chain is cut, as the heap index keeps dangling
 * references) described, with its class's fields; NULL at the end or on
 * an error (*rc). */
static const node_fields *node_at(walk *w, const coll_spec *spec, uint32_t index, hp_object *o, hp_code *rc)
{
    const node_fields *n;
    *rc = HP_OK;
    if (index == HP_NONE)
        return NULL;
    hp_heap_object(w->h, index, o);
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

static const node_fields *node(walk *w, const coll_spec *spec, uint64_t id, hp_object *o, hp_code *rc)
{
    return node_at(w, spec, id ? hp_heap_find(w->h, id) : HP_NONE, o, rc);
}

/* Whether a hash node's key is one its map's iterators skip: a weak key
 * the GC cleared (null in the dump, unless null_flag says the key is null;
 * the JDK's null key is the marker object, never cleared). */
static int cleared(walk *w, const coll_spec *spec, const hp_object *o, const node_fields *n, uint64_t key)
{
    const uint8_t *flag;
    if (!(spec->flags & COLL_WEAK) || key != 0)
        return 0;
    flag = coll_field_at(w->h, o, &n->null_flag);
    return !flag || !*flag;
}

/* One chain of a hash bucket, from node `index`. */
static hp_code walk_chain(walk *w, const coll_layout *L, uint32_t index)
{
    const coll_spec *spec = L->spec;
    hp_code rc;
    hp_object o;
    const node_fields *n;
    uint64_t id;
    while ((n = node_at(w, spec, index, &o, &rc)) != NULL) {
        hp_coll_value k, v;
        uint64_t key;
        if (n->first.type == HP_T_OBJECT) { /* a tree bin: its nodes, linked from first */
            id = coll_ref_at(w->h, &o, &n->first);
            index = id ? hp_heap_find(w->h, id) : HP_NONE;
            continue;
        }
        if (n->forward.type == HP_T_OBJECT) /* a bin moved to the next table by a resize in progress */
            break;
        key = coll_ref_at(w->h, &o, &n->key);
        coll_value_ref(w->h, key, L->marker, &k);
        coll_value_ref(w->h, coll_ref_at(w->h, &o, &n->value), 0, &v);
        if (!cleared(w, spec, &o, n, key) && (rc = put(w, &k, &v)) != HP_OK)
            return rc;
        id = coll_ref_at(w->h, &o, &n->next);
        index = id ? hp_heap_find(w->h, id) : HP_NONE;
    }
    return rc;
}

/* Prefetch distance: buckets whose first node's index entry is asked for
 * this many buckets ahead, its record half as many (a big table's nodes lie
 * anywhere in the dump: the reads overlap instead of waiting in turn). */
#define AHEAD 16

static hp_code walk_table(walk *w, const coll_layout *L, const hp_object *table)
{
    uint32_t k, ahead[AHEAD];
    int id_size = hp_heap_id_size(w->h);
    hp_code rc;
    if (table->elem_type != HP_T_OBJECT)
        return corrupt(w, "a hash table is not an object array");
    for (k = 0; k < table->length + AHEAD; k++) {
        if (k >= AHEAD && ahead[k % AHEAD] != HP_NONE && (rc = walk_chain(w, L, ahead[k % AHEAD])) != HP_OK)
            return rc; /* bucket k - AHEAD, its slot then reused for bucket k */
        if (k >= AHEAD / 2 && k - AHEAD / 2 < table->length && ahead[(k - AHEAD / 2) % AHEAD] != HP_NONE)
            hp_heap_prefetch_record(w->h, ahead[(k - AHEAD / 2) % AHEAD]);
        if (k < table->length) {
            uint32_t slot = (L->spec->flags & COLL_REVERSE) ? table->length - 1 - k : k;
            uint64_t id = hp_read_id(table->data + (uint64_t)slot * id_size, id_size);
            uint32_t index = id ? hp_heap_find(w->h, id) : HP_NONE;
            ahead[k % AHEAD] = index;
            if (index != HP_NONE)
                hp_heap_prefetch_entry(w->h, index);
        } else {
            ahead[k % AHEAD] = HP_NONE;
        }
    }
    return HP_OK;
}

static hp_code walk_hash(walk *w, const coll_layout *L, const hp_object *o)
{
    hp_object table;
    hp_code rc;
    uint64_t null_entry = coll_ref_at(w->h, o, &L->f[F_NULL_ENTRY]);
    if (null_entry && (rc = walk_chain(w, L, hp_heap_find(w->h, null_entry))) != HP_OK)
        return rc;
    return coll_array_at(w->h, o, &L->f[F_STORAGE], &table) ? walk_table(w, L, &table) : HP_OK;
}

static hp_code walk_segments(walk *w, const coll_layout *L, const hp_object *o)
{
    hp_object segs, seg, table;
    uint32_t k;
    int id_size = hp_heap_id_size(w->h);
    hp_code rc;
    if (!coll_array_at(w->h, o, &L->f[F_STORAGE], &segs) || segs.elem_type != HP_T_OBJECT)
        return HP_OK;
    for (k = 0; k < segs.length; k++) {
        uint32_t slot = (L->spec->flags & COLL_REVERSE) ? segs.length - 1 - k : k;
        coll_field f;
        if (!coll_object_of(w->h, hp_read_id(segs.data + (uint64_t)slot * id_size, id_size), NULL, &seg) ||
            seg.kind != HP_KIND_INSTANCE || !coll_find_field(w->h, seg.class_ord, L->spec->storage2, &f))
            continue; /* JDK 7 creates segments lazily */
        if (coll_array_at(w->h, &seg, &f, &table) && (rc = walk_table(w, L, &table)) != HP_OK)
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
    if (!coll_array_at(w->h, o, &L->f[F_STORAGE], &arr))
        return HP_OK;
    n = arr.length;
    if (!(spec->flags & COLL_OPEN) && L->f[F_SIZE].offset >= 0) {
        int64_t size = coll_int_at(w->h, o, &L->f[F_SIZE], 0);
        uint64_t want = size > 0 ? (uint64_t)size * stride : 0;
        n = want < n ? want : n;
    }
    for (i = 0; i + stride <= n; i += stride) {
        hp_coll_value k, v;
        coll_value_element(w->h, &arr, i, L->marker, &k);
        if ((spec->flags & COLL_OPEN) && arr.elem_type == HP_T_OBJECT &&
            hp_read_id(arr.data + i * hp_heap_id_size(w->h), hp_heap_id_size(w->h)) == 0)
            continue; /* an empty slot (the marker stands for a null key) */
        if (stride == 2)
            coll_value_element(w->h, &arr, i + 1, 0, &v);
        if ((rc = put(w, &k, stride == 2 ? &v : NULL)) != HP_OK)
            return rc;
    }
    return HP_OK;
}

static hp_code walk_parallel(walk *w, const coll_layout *L, const hp_object *o)
{
    hp_object keys, values;
    int64_t size = coll_int_at(w->h, o, &L->f[F_SIZE], 0);
    uint64_t n, i;
    hp_code rc;
    if (!coll_array_at(w->h, o, &L->f[F_STORAGE], &keys) || !coll_array_at(w->h, o, &L->f[F_STORAGE2], &values))
        return HP_OK;
    n = size > 0 ? (uint64_t)size : 0;
    n = n < keys.length ? n : keys.length;
    n = n < values.length ? n : values.length;
    for (i = 0; i < n; i++) {
        hp_coll_value k, v;
        coll_value_element(w->h, &keys, i, 0, &k);
        coll_value_element(w->h, &values, i, 0, &v);
        if (L->marker && v.type == HP_T_OBJECT && v.id == L->marker)
            continue; /* DELETED: removed, not yet compacted (mGarbage) */
        if ((rc = put(w, &k, &v)) != HP_OK)
            return rc;
    }
    return HP_OK;
}

static hp_code walk_circular(walk *w, const coll_layout *L, const hp_object *o)
{
    hp_object arr;
    int64_t head = coll_int_at(w->h, o, &L->f[F_HEAD], -1), end = coll_int_at(w->h, o, &L->f[F_SIZE], -1), count, k;
    hp_code rc;
    if (!coll_array_at(w->h, o, &L->f[F_STORAGE], &arr) || arr.length == 0)
        return HP_OK;
    if ((count = coll_circular_count(L, head, end, arr.length)) < 0)
        return corrupt(w, "a circular buffer's indexes lie outside its array");
    for (k = 0; k < count; k++) {
        hp_coll_value v;
        coll_value_element(w->h, &arr, (uint64_t)((head + k) % arr.length), 0, &v);
        if ((rc = put(w, &v, NULL)) != HP_OK)
            return rc;
    }
    return HP_OK;
}

static hp_code walk_linked(walk *w, const coll_layout *L, const hp_object *o)
{
    const coll_spec *spec = L->spec;
    uint64_t start = coll_ref_at(w->h, o, &L->f[F_STORAGE]), id;
    hp_object n_obj;
    const node_fields *n;
    hp_code rc = HP_OK;
    if (spec->storage2) { /* the start object holds the first node (a skip list's head index) */
        coll_field f;
        if (!coll_object_of(w->h, start, NULL, &n_obj) || n_obj.kind != HP_KIND_INSTANCE ||
            !coll_find_field(w->h, n_obj.class_ord, spec->storage2, &f))
            return HP_OK;
        start = coll_ref_at(w->h, &n_obj, &f);
    }
    id = start;
    if (spec->flags & (COLL_SENTINEL | COLL_DUMMY_HEAD)) {
        if (!(n = node(w, spec, start, &n_obj, &rc)))
            return rc;
        id = coll_ref_at(w->h, &n_obj, &n->next);
    }
    while (id && !((spec->flags & COLL_SENTINEL) && id == start)) {
        hp_coll_value k, v;
        if (!(n = node(w, spec, id, &n_obj, &rc)))
            return rc;
        coll_value_ref(w->h, coll_ref_at(w->h, &n_obj, &n->key), 0, &k);
        coll_value_ref(w->h, coll_ref_at(w->h, &n_obj, &n->value), 0, &v);
        if (!((spec->flags & COLL_SKIP_NULL) && coll_is_null(&k)) &&
            !((spec->flags & COLL_SKIPLIST) && (coll_is_null(&v) || v.id == id)) &&
            (rc = put(w, &k, spec->shape == HP_COLL_MAP ? &v : NULL)) != HP_OK)
            return rc;
        id = coll_ref_at(w->h, &n_obj, &n->next);
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
    uint64_t id = coll_ref_at(w->h, o, &L->f[F_STORAGE]);
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
            id = coll_ref_at(w->h, &n_obj, &n->left);
        }
        if (top == 0)
            return HP_OK;
        hp_heap_object(w->h, w->stack[--top], &n_obj);
        n = node_of(w, spec, n_obj.class_ord);
        {
            hp_coll_value k, v;
            coll_value_ref(w->h, coll_ref_at(w->h, &n_obj, &n->key), 0, &k);
            coll_value_ref(w->h, coll_ref_at(w->h, &n_obj, &n->value), 0, &v);
            if ((rc = put(w, &k, &v)) != HP_OK)
                return rc;
        }
        id = coll_ref_at(w->h, &n_obj, &n->right);
    }
}

static hp_code walk_fields(walk *w, const coll_layout *L, const hp_object *o)
{
    hp_coll_value a, b;
    hp_code rc;
    coll_value_ref(w->h, coll_ref_at(w->h, o, &L->f[F_STORAGE]), 0, &a);
    coll_value_ref(w->h, coll_ref_at(w->h, o, &L->f[F_STORAGE2]), 0, &b);
    if (L->spec->shape == HP_COLL_MAP)
        return put(w, &a, &b);
    if (L->f[F_STORAGE].offset >= 0 && !coll_is_null(&a) && a.id != L->marker && (rc = put(w, &a, NULL)) != HP_OK)
        return rc;
    if (L->f[F_STORAGE2].offset >= 0 && !coll_is_null(&b) && b.id != L->marker)
        return put(w, &b, NULL);
    return HP_OK;
}

static hp_code walk_one(walk *w, uint32_t index, int depth)
{
    const coll_layout *L = coll_layout_of(w->c, index);
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
        uint64_t inner = coll_ref_at(w->h, &o, &L->f[F_STORAGE]);
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

