/* Memory waste (hp_waste.h): one pass over the objects sorts each into the
 * kinds its record shows (arrays' contents, boxes, direct buffers, long
 * Strings) and keys the arrays for the duplicate kinds; collections and
 * duplicate Strings come from their own walks (hp_coll_measure_each,
 * hp_duplicate_string_copies). */
#include "hp_waste.h"

#include <stdlib.h>
#include <string.h>

#include "hp_graph.h"
#include "hp_heap_sort.h"
#include "hp_strdup.h"
#include "hp_xxh64.h"

/* What a class is to the waste kinds. */
enum { TAG_NONE = 0, TAG_BOX, TAG_DIRECT, TAG_STRING };

static const char *const box_names[] = { "java.lang.Boolean", "java.lang.Byte", "java.lang.Character",
                                         "java.lang.Short", "java.lang.Integer", "java.lang.Long",
                                         "java.lang.Float", "java.lang.Double" };
static const int box_types[] = { HP_T_BOOLEAN, HP_T_BYTE, HP_T_CHAR, HP_T_SHORT, HP_T_INT, HP_T_LONG, HP_T_FLOAT,
                                 HP_T_DOUBLE };

typedef struct class_tag {
    uint8_t tag;
    uint8_t size;     /* bytes of the value field read */
    uint32_t offset;  /* of that field (box: value; direct buffer: capacity) in the instance data */
    uint32_t att;     /* direct buffers: offset of `att` (the buffer whose memory a view shares), or HP_NONE */
} class_tag;

typedef struct waste_state {
    const hp_heap *h;
    const hp_alloc *a;
    hp_waste *out;
    class_tag *tags;          /* by class ordinal */
    uint64_t *string_arrays;  /* a bit per object: arrays a String holds */
    uint64_t *keys[2];        /* primitive, object arrays: hash32 << 32 | index */
    size_t n_keys[2], cap_keys[2];
    int nomem;
} waste_state;

static int push(waste_state *s, int kind, uint32_t index, uint64_t wasted)
{
    hp_waste_list *l = &s->out->kinds[kind];
    if (l->n == l->cap) {
        size_t want = l->cap ? l->cap + l->cap / 2 : 256; /* 1.5x: the lists are most of the memory */
        hp_waste_item *more = s->a->realloc_fn(l->items, want * sizeof *more);
        if (!more) {
            s->nomem = 1;
            return -1;
        }
        l->items = more;
        l->cap = want;
    }
    l->items[l->n].index = index;
    l->items[l->n++].wasted = wasted;
    l->wasted += wasted;
    return 0;
}

static int push_u64(waste_state *s, uint64_t **a, size_t *n, size_t *cap, uint64_t v)
{
    if (*n == *cap) {
        size_t want = *cap ? 2 * *cap : 1024;
        uint64_t *more = s->a->realloc_fn(*a, want * sizeof *more);
        if (!more) {
            s->nomem = 1;
            return -1;
        }
        *a = more;
        *cap = want;
    }
    (*a)[(*n)++] = v;
    return 0;
}

/* The instance field `name` of class `ord` (its own or inherited) of `type`: 1 and *tag's offset and size set. */
static int find_field(const hp_heap *h, uint32_t ord, const char *name, int type, class_tag *tag)
{
    hp_field_iter it;
    hp_field f;
    hp_field_iter_init(&it, h, ord);
    while (hp_field_next(&it, &f))
        if (f.type == type && hp_heap_field_is(h, &f, name, strlen(name))) {
            tag->offset = f.offset;
            tag->size = (uint8_t)hp_type_size(type, hp_heap_id_size(h));
            return 1;
        }
    return 0;
}

static int is_named(const hp_heap *h, uint32_t ord, const char *name)
{
    hp_class_info info;
    hp_heap_class(h, ord, &info);
    return info.name && hp_java_name_equals(info.name, info.name_len, name, strlen(name));
}

/* Tags class `ord` and its unresolved superclasses as direct buffers or not, each after its
 * superclass: a climb to a class resolved before (or the root, or one of this climb: a loop,
 * none of which is a buffer), then down again.  A subclass's capacity and att lie where its
 * superclass's do, after its own fields (instance data: the class's own fields first), so a
 * chain of a million subclasses costs a million steps, not a million field lists.
 * state: 0 not seen, 1 resolved, 2 on this climb. */
static void tag_direct(const hp_heap *h, class_tag *tags, uint8_t *state, uint32_t *path, uint32_t ord)
{
    size_t depth = 0;
    uint32_t up = ord;
    int loop;
    hp_class_info info, super;
    while (up != HP_NONE && state[up] == 0) {
        state[up] = 2;
        path[depth++] = up;
        hp_heap_class(h, up, &info);
        up = info.super_ord;
    }
    loop = up != HP_NONE && state[up] == 2;
    while (depth > 0) {
        uint32_t c = path[--depth];
        class_tag *t = &tags[c];
        state[c] = 1;
        if (loop || t->tag != TAG_NONE)
            continue;
        hp_heap_class(h, c, &info);
        if (is_named(h, c, "java.nio.DirectByteBuffer")) {
            class_tag att;
            if (find_field(h, c, "capacity", HP_T_INT, t)) {
                t->tag = TAG_DIRECT;
                t->att = find_field(h, c, "att", HP_T_OBJECT, &att) ? att.offset : HP_NONE;
            }
        } else if (info.super_ord != HP_NONE && tags[info.super_ord].tag == TAG_DIRECT) {
            hp_heap_class(h, info.super_ord, &super);
            if (info.data_size >= super.data_size) {
                uint32_t own = info.data_size - super.data_size;
                *t = tags[info.super_ord];
                t->offset += own;
                if (t->att != HP_NONE)
                    t->att += own;
            }
        }
    }
}

/* Tags the box classes, java.lang.String and java.nio.DirectByteBuffer and its subclasses
 * (DirectByteBufferR).  state and path: room for a byte and an ordinal a class. */
static void tag_classes(const hp_heap *h, class_tag *tags, uint8_t *state, uint32_t *path)
{
    uint32_t n = hp_heap_class_count(h), ord, k;
    for (ord = 0; ord < n; ord++) {
        if (is_named(h, ord, "java.lang.String")) {
            tags[ord].tag = TAG_STRING;
            continue;
        }
        for (k = 0; k < 8; k++)
            if (is_named(h, ord, box_names[k]) && find_field(h, ord, "value", box_types[k], &tags[ord])) {
                tags[ord].tag = TAG_BOX;
                break;
            }
    }
    for (ord = 0; ord < n; ord++)
        if (state[ord] == 0)
            tag_direct(h, tags, state, path, ord);
}

/* Room made at once for the lists whose size the classes tell (the arrays' keys, the boxes):
 * grown by doubling they would take up to twice it.  Arrays of no class grow them later. */
static void reserve(waste_state *s)
{
    uint32_t n = hp_heap_class_count(s->h), ord;
    uint64_t want[3] = { 0, 0, 0 }; /* primitive arrays, object arrays, boxes */
    hp_waste_list *boxes = &s->out->kinds[HP_WASTE_BOXED_NUMBERS];
    int k;
    for (ord = 0; ord < n; ord++) {
        hp_class_info info;
        hp_heap_class(s->h, ord, &info);
        want[info.elem_type == HP_T_OBJECT ? 1 : info.elem_type ? 0 : 2] +=
            info.elem_type || s->tags[ord].tag == TAG_BOX ? info.instances : 0;
    }
    for (k = 0; k < 2; k++)
        if (want[k] && (s->keys[k] = s->a->malloc_fn((size_t)want[k] * sizeof *s->keys[k])) != NULL)
            s->cap_keys[k] = (size_t)want[k];
    if (want[2] && (boxes->items = s->a->malloc_fn((size_t)want[2] * sizeof *boxes->items)) != NULL)
        boxes->cap = (size_t)want[2];
}

static uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t load32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The bytes of data[0..len) up to its last non-zero one (0: all zero), read a word at a time:
 * arrays are most of a heap's bytes. */
static uint64_t zero_tail(uint64_t len, const uint8_t *data)
{
    while (len >= 8 && load64(data + len - 8) == 0)
        len -= 8;
    while (len > 0 && data[len - 1] == 0)
        len--;
    return len;
}

static uint32_t hash32(const hp_object *o)
{
    uint64_t x = hp_xxh64(o->data, (size_t)o->data_len, (uint64_t)o->elem_type << 32 | o->length);
    return (uint32_t)(x ^ (x >> 32));
}

static void instance(waste_state *s, uint32_t i, uint32_t cls, uint64_t long_chars)
{
    const hp_heap *h = s->h;
    const class_tag *t = &s->tags[cls];
    hp_object o;
    hp_text text;
    if (t->tag == TAG_STRING) {
        uint32_t arr;
        if (hp_heap_string(h, i, &text) == 1 && text.units > long_chars && (arr = hp_heap_string_array(h, i)) != HP_NONE)
            push(s, HP_WASTE_LONG_STRINGS, i, hp_heap_shallow_size(h, arr));
        return;
    }
    hp_heap_object(h, i, &o);
    if ((uint64_t)t->offset + t->size > o.data_len)
        return; /* a record shorter than its class's layout: no value to read */
    if (t->tag == TAG_BOX) {
        uint64_t size = hp_heap_shallow_size(h, i);
        push(s, HP_WASTE_BOXED_NUMBERS, i, size > t->size ? size - t->size : 0);
    } else { /* a view (slice, duplicate, read-only copy) shares its `att`'s memory: counted there */
        int32_t capacity = (int32_t)hp_be32(o.data + t->offset);
        int id_size = hp_heap_id_size(h);
        int view = t->att != HP_NONE && (uint64_t)t->att + (uint64_t)id_size <= o.data_len &&
                   hp_read_id(o.data + t->att, id_size) != 0;
        push(s, HP_WASTE_DIRECT_BUFFERS, i, capacity > 0 && !view ? (uint64_t)capacity : 0);
    }
}

static void primitive_array(waste_state *s, uint32_t i)
{
    const hp_heap *h = s->h;
    hp_object o;
    uint64_t last;
    uint32_t esize;
    hp_heap_object(h, i, &o);
    esize = (uint32_t)hp_type_size(o.elem_type, hp_heap_id_size(h));
    if (!hp_bit(s->string_arrays, i))
        push_u64(s, &s->keys[0], &s->n_keys[0], &s->cap_keys[0], (uint64_t)hash32(&o) << 32 | i);
    if (o.length == 0 || esize == 0 || o.data_len < (uint64_t)o.length * esize)
        return;
    last = zero_tail((uint64_t)o.length * esize, o.data);
    if (last == 0) {
        push(s, HP_WASTE_ZERO_ARRAYS, i, hp_heap_shallow_size(h, i));
    } else {
        uint64_t zeros = o.length - 1 - (last - 1) / esize; /* elements after the last non-zero byte's */
        if (zeros >= HP_WASTE_TRAILING_MIN && 2 * zeros >= o.length)
            push(s, HP_WASTE_TRAILING_ZERO_ARRAYS, i, zeros * esize);
    }
}

static void object_array(waste_state *s, uint32_t i)
{
    const hp_heap *h = s->h;
    int id_size = hp_heap_id_size(h);
    hp_object o;
    uint64_t nulls = 0, k;
    hp_heap_object(h, i, &o);
    o.elem_type = (int)o.class_ord; /* equal object arrays are of one class */
    push_u64(s, &s->keys[1], &s->n_keys[1], &s->cap_keys[1], (uint64_t)hash32(&o) << 32 | i);
    if (o.length == 0 || o.data_len < (uint64_t)o.length * (uint64_t)id_size)
        return;
    for (k = 0; k < o.length; k++) /* an id is 4 or 8 bytes (hp_heap_build refuses others) */
        nulls += id_size == 8 ? load64(o.data + 8 * k) == 0 : load32(o.data + 4 * k) == 0;
    if (nulls == o.length)
        push(s, HP_WASTE_EMPTY_ARRAYS, i, hp_heap_shallow_size(h, i));
    if (2 * nulls >= o.length)
        push(s, HP_WASTE_SPARSE_ARRAYS, i, nulls * (uint64_t)hp_heap_size_model(h)->oop_size);
}

/* -1 / 0 / 1 as arrays i and j compare by type (class), length and contents, then index. */
/* -1 / 0 / 1 as arrays a and b (described) compare by kind, type (class), length and contents. */
static int contents_compare(const hp_object *a, const hp_object *b)
{
    int c;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->elem_type != b->elem_type)
        return a->elem_type < b->elem_type ? -1 : 1;
    if (a->class_ord != b->class_ord)
        return a->class_ord < b->class_ord ? -1 : 1;
    if (a->length != b->length || a->data_len != b->data_len)
        return a->length != b->length ? (a->length < b->length ? -1 : 1) : (a->data_len < b->data_len ? -1 : 1);
    c = a->data_len ? memcmp(a->data, b->data, (size_t)a->data_len) : 0;
    return c < 0 ? -1 : c > 0;
}

/* Arrays i and j by contents, then index (hp_sort_u32_by's comparison). */
static int array_compare(const void *heap, uint32_t i, uint32_t j)
{
    hp_object a, b;
    int c;
    hp_heap_object(heap, i, &a);
    hp_heap_object(heap, j, &b);
    c = contents_compare(&a, &b);
    return c ? c : (i < j ? -1 : i > j);
}

/* Whether array j holds what `first` (described once for its whole run) holds. */
static int same_as(const hp_heap *h, const hp_object *first, uint32_t j)
{
    hp_object b;
    hp_heap_object(h, j, &b);
    return contents_compare(first, &b) == 0;
}

/* The copies among arrays keyed hash32 << 32 | index: every member of a
 * group of equal arrays but its first (lowest index), at its shallow size. */
static int duplicates(waste_state *s, uint64_t *keys, size_t count, int kind, int (*interrupt)(void *ctx), void *ctx)
{
    uint32_t *run = s->a->malloc_fn((count ? count : 1) * sizeof *run);
    uint32_t *tmp = s->a->malloc_fn((count ? count : 1) * sizeof *tmp);
    size_t k, m, j, g, runs = 0;
    hp_object kept;
    int rc = 0, one;
    if (!run || !tmp) {
        s->nomem = 1;
        rc = -1;
    }
    hp_sort_u64(keys, count, 64);
    for (k = 0; rc == 0 && k < count; k = j) {
        if (++runs % 4096 == 0 && interrupt && interrupt(ctx)) {
            rc = -2;
            break;
        }
        for (j = k, m = 0; j < count && keys[j] >> 32 == keys[k] >> 32; j++)
            run[m++] = (uint32_t)keys[j];
        if (m < 2)
            continue;
        hp_heap_object(s->h, run[0], &kept);
        for (g = 1; g < m && same_as(s->h, &kept, run[g]); g++)
            ;
        one = g == m; /* the usual run: one contents, each member compared once */
        if (!one) { /* several contents share the hash: sorted by contents, each a stretch */
            hp_sort_u32_by(run, tmp, m, array_compare, s->h);
            hp_heap_object(s->h, run[0], &kept);
        }
        for (g = 1; g < m && rc == 0; g++) {
            if (!one && !same_as(s->h, &kept, run[g]))
                hp_heap_object(s->h, run[g], &kept); /* a stretch begins: its first is kept */
            else if (push(s, kind, run[g], hp_heap_shallow_size(s->h, run[g])) < 0)
                rc = -1;
        }
    }
    s->a->free_fn(run);
    s->a->free_fn(tmp);
    return rc;
}

/* A box's value (boxed_numbers' items have one: the scan checked its record). */
static uint64_t box_value(const waste_state *s, uint32_t i, const class_tag *t)
{
    hp_object o;
    hp_heap_object(s->h, i, &o);
    return hp_be_bytes(o.data + t->offset, t->size);
}

/* The duplicate boxes: per box class, the values (read again: keeping them would cost 8 bytes a
 * box for the whole scan) sorted; every repeat is a copy. */
static void duplicate_boxes(waste_state *s)
{
    const hp_waste_list *l = &s->out->kinds[HP_WASTE_BOXED_NUMBERS];
    uint32_t n = hp_heap_class_count(s->h), ord;
    uint64_t *vals = s->a->malloc_fn((l->n ? l->n : 1) * sizeof *vals);
    size_t k, m;
    if (!vals) {
        s->nomem = 1;
        return;
    }
    for (ord = 0; ord < n; ord++) {
        uint64_t size = 0;
        if (s->tags[ord].tag != TAG_BOX)
            continue;
        for (k = m = 0; k < l->n; k++)
            if (hp_heap_object_class(s->h, l->items[k].index) == ord) {
                size = hp_heap_shallow_size(s->h, l->items[k].index);
                vals[m++] = box_value(s, l->items[k].index, &s->tags[ord]);
            }
        hp_sort_u64(vals, m, 64);
        for (k = 1; k < m; k++)
            if (vals[k] == vals[k - 1]) {
                s->out->duplicate_boxes++;
                s->out->duplicate_box_bytes += size; /* every instance of a class has its shallow size */
            }
    }
    s->a->free_fn(vals);
}

static int collection(void *ctx, uint32_t index, const hp_coll_measure *m)
{
    waste_state *s = ctx;
    int kind = m->size == 0 ? HP_WASTE_EMPTY_COLLECTIONS : m->size == 1 ? HP_WASTE_SMALL_COLLECTIONS
             : m->size >= 2 && m->capacity > 0 && 2 * m->size < m->capacity ? HP_WASTE_SPARSE_COLLECTIONS : -1;
    if (m->size_corrupt || kind < 0)
        return 0;
    return push(s, kind, index, m->wasted);
}

static int string_copy(void *ctx, uint32_t index, uint64_t wasted)
{
    return push(ctx, HP_WASTE_DUPLICATE_STRINGS, index, wasted);
}

/* Whether a list is in index order already (the one pass's lists are). */
static int in_index_order(const hp_waste_list *l)
{
    size_t k;
    for (k = 1; k < l->n; k++)
        if (l->items[k - 1].index > l->items[k].index)
            return 0;
    return 1;
}

static int by_index(const void *x, const void *y)
{
    const hp_waste_item *a = x, *b = y;
    return a->index < b->index ? -1 : a->index > b->index;
}

static int by_waste(const void *x, const void *y)
{
    const hp_waste_item *a = x, *b = y;
    if (a->wasted != b->wasted)
        return a->wasted > b->wasted ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Every list in index order, merged: each object's largest waste of the heap's kinds, summed. */
static uint64_t total_of(hp_waste *w)
{
    size_t at[HP_WASTE_KINDS] = { 0 };
    uint64_t total = 0;
    int k;
    for (k = 0; k < HP_WASTE_KINDS; k++)
        if (!in_index_order(&w->kinds[k]))
            qsort(w->kinds[k].items, w->kinds[k].n, sizeof *w->kinds[k].items, by_index);
    for (;;) {
        uint32_t next = HP_NONE;
        uint64_t most = 0;
        int any = 0;
        for (k = 0; k < HP_WASTE_KINDS; k++)
            if (k != HP_WASTE_DIRECT_BUFFERS && at[k] < w->kinds[k].n && (!any || w->kinds[k].items[at[k]].index < next)) {
                next = w->kinds[k].items[at[k]].index;
                any = 1;
            }
        if (!any)
            return total;
        for (k = 0; k < HP_WASTE_KINDS; k++)
            while (k != HP_WASTE_DIRECT_BUFFERS && at[k] < w->kinds[k].n && w->kinds[k].items[at[k]].index == next) {
                if (w->kinds[k].items[at[k]].wasted > most)
                    most = w->kinds[k].items[at[k]].wasted;
                at[k]++;
            }
        total += most;
    }
}

static hp_code scan(waste_state *s, const uint64_t *keep, uint64_t long_chars, int (*interrupt)(void *ctx), void *ctx,
                    hp_error *err)
{
    const hp_heap *h = s->h;
    uint32_t n = hp_heap_object_count(h), i, arr, cls;
    for (i = 0; i < n; i++) /* the String backing arrays, which duplicate_arrays leaves to duplicate_strings */
        if ((i & 4095) == 0 && interrupt && interrupt(ctx))
            return hp_fail(err, HP_E_ABORTED, 0, -1, 0, 0, 0, "interrupted");
        else if (hp_heap_object_kind(h, i) == HP_KIND_INSTANCE && (cls = hp_heap_object_class(h, i)) != HP_NONE &&
                 s->tags[cls].tag == TAG_STRING && (arr = hp_heap_string_array(h, i)) != HP_NONE)
            s->string_arrays[arr >> 6] |= 1ull << (arr & 63);
    for (i = 0; i < n && !s->nomem; i++) {
        hp_kind kind;
        uint32_t cls;
        if ((i & 4095) == 0 && interrupt && interrupt(ctx))
            return hp_fail(err, HP_E_ABORTED, 0, -1, 0, 0, 0, "interrupted");
        if (keep && !hp_bit(keep, i))
            continue;
        kind = hp_heap_object_kind(h, i);
        if (kind == HP_KIND_PRIM_ARRAY)
            primitive_array(s, i);
        else if (kind == HP_KIND_OBJ_ARRAY)
            object_array(s, i);
        else if (kind == HP_KIND_INSTANCE && (cls = hp_heap_object_class(h, i)) != HP_NONE && s->tags[cls].tag)
            instance(s, i, cls, long_chars);
    }
    return HP_OK;
}

hp_code hp_waste_find(const hp_heap *h, const hp_coll *coll, const uint64_t *keep, uint64_t long_string_chars,
                      const hp_alloc *alloc, hp_waste *out, int (*interrupt)(void *ctx), void *ctx, hp_error *err)
{
    waste_state s;
    hp_code rc = HP_OK;
    uint32_t classes = hp_heap_class_count(h), *path;
    uint8_t *state;
    int k, r;
    memset(out, 0, sizeof *out);
    memset(&s, 0, sizeof s);
    s.h = h;
    s.a = alloc ? alloc : &hp_default_alloc;
    s.out = out;
    s.tags = s.a->malloc_fn((classes ? classes : 1) * sizeof *s.tags);
    s.string_arrays = s.a->malloc_fn(hp_bits_bytes(hp_heap_object_count(h)) + 8);
    if (!s.tags || !s.string_arrays)
        goto nomem;
    memset(s.tags, 0, (classes ? classes : 1) * sizeof *s.tags);
    memset(s.string_arrays, 0, hp_bits_bytes(hp_heap_object_count(h)) + 8);
    state = s.a->malloc_fn(classes ? classes : 1);
    path = s.a->malloc_fn((classes ? classes : 1) * sizeof *path);
    if (!state || !path) {
        s.a->free_fn(state);
        s.a->free_fn(path);
        goto nomem;
    }
    memset(state, 0, classes ? classes : 1);
    tag_classes(h, s.tags, state, path);
    s.a->free_fn(state);
    s.a->free_fn(path);
    reserve(&s);
    if ((rc = scan(&s, keep, long_string_chars, interrupt, ctx, err)) != HP_OK)
        goto done;
    if (s.nomem)
        goto nomem;
    for (k = 0; k < 2 && !s.nomem; k++) {
        r = duplicates(&s, s.keys[k], s.n_keys[k], k ? HP_WASTE_DUPLICATE_OBJECT_ARRAYS : HP_WASTE_DUPLICATE_ARRAYS,
                       interrupt, ctx);
        s.a->free_fn(s.keys[k]);
        s.keys[k] = NULL;
        if (r == -2) {
            rc = hp_fail(err, HP_E_ABORTED, 0, -1, 0, 0, 0, "interrupted");
            goto done;
        }
    }
    if (!s.nomem) /* after the arrays' keys are freed */
        duplicate_boxes(&s);
    if (s.nomem)
        goto nomem;
    if (coll)
        rc = hp_coll_measure_each(coll, keep, collection, &s, interrupt, ctx, err);
    if (rc == HP_OK)
        rc = hp_duplicate_string_copies(h, keep, s.a, string_copy, &s, interrupt, ctx, err);
    if (s.nomem) /* a push failed: the walk stopped for it */
        goto nomem;
    if (rc != HP_OK)
        goto done;
    out->total = total_of(out);
    for (k = 0; k < HP_WASTE_KINDS; k++)
        if (out->kinds[k].n)
            qsort(out->kinds[k].items, out->kinds[k].n, sizeof *out->kinds[k].items, by_waste);
    goto done;
nomem:
    rc = hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the waste kinds");
done:
    s.a->free_fn(s.tags);
    s.a->free_fn(s.string_arrays);
    s.a->free_fn(s.keys[0]);
    s.a->free_fn(s.keys[1]);
    return rc;
}

void hp_waste_free(hp_waste *w, const hp_alloc *alloc)
{
    const hp_alloc *a = alloc ? alloc : &hp_default_alloc;
    int k;
    for (k = 0; k < HP_WASTE_KINDS; k++) {
        a->free_fn(w->kinds[k].items);
        w->kinds[k].items = NULL;
        w->kinds[k].n = w->kinds[k].cap = 0;
    }
}
