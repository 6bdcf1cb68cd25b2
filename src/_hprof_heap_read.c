/* Reads of a heap's mapping by its handles, under the SIGBUS guard
 * (_hprof.h): a dump truncated after open_heap raises FileChangedError on
 * the next field read instead of killing the interpreter.
 *
 * Handles read the mapping in two steps: a guarded C call copies what it
 * needs out of the mapping (values, names, the text of a String), then the
 * Python objects are built from the copy, unguarded: the guard's jump must
 * never leave Python code or a Python allocation half done. */
#include "_hprof_heap.h"

#include <string.h>

int heap_guard(HeapIndex *heap, void (*fn)(void *ctx), void *ctx)
{
    uint64_t fault;
    if (hprof_guard_call(heap->view.buf, (size_t)heap->view.len, fn, ctx, &fault) == 0)
        return 0;
    hprof_raise_changed(heap->st, fault);
    return -1;
}

/* ---- bytes copied out ---- */

void heap_copy_small(heap_copy *c)
{
    c->big = NULL;
    if (c->data && c->len <= sizeof c->small) {
        memcpy(c->small, c->data, c->len);
        c->data = c->small;
    }
}

typedef struct {
    heap_copy *c;
} copy_big_call;

static void copy_big(void *ctx)
{
    heap_copy *c = ((copy_big_call *)ctx)->c;
    memcpy(c->big, c->data, c->len);
}

int heap_copy_finish(HeapIndex *heap, heap_copy *c)
{
    copy_big_call call = { c };
    if (!c->data || c->data == c->small)
        return 0;
    if (!(c->big = PyMem_RawMalloc(c->len ? c->len : 1))) {
        PyErr_NoMemory();
        return -1;
    }
    if (heap_guard(heap, copy_big, &call) < 0) {
        heap_copy_free(c);
        return -1;
    }
    c->data = c->big;
    return 0;
}

void heap_copy_free(heap_copy *c)
{
    PyMem_RawFree(c->big);
    c->big = NULL;
}

/* ---- objects and classes ---- */

typedef struct {
    const hp_heap *h;
    uint32_t index;
    hp_object *obj;
} describe_call;

static void describe(void *ctx)
{
    describe_call *c = ctx;
    hp_heap_object(c->h, c->index, c->obj);
}

int heap_describe(HeapIndex *heap, uint32_t index, hp_object *out)
{
    describe_call call = { heap->index, index, out };
    return heap_guard(heap, describe, &call);
}

typedef struct {
    const hp_heap *h;
    uint32_t index;
    uint64_t size;
} size_call;

static void shallow_size(void *ctx)
{
    size_call *c = ctx;
    c->size = hp_heap_shallow_size(c->h, c->index);
}

int heap_shallow_size(HeapIndex *heap, uint32_t index, uint64_t *size)
{
    size_call call = { heap->index, index, 0 };
    if (heap_guard(heap, shallow_size, &call) < 0)
        return -1;
    *size = call.size;
    return 0;
}

typedef struct {
    const hp_heap *h;
    uint32_t ord;
    hp_class_info *info;
    heap_copy *name;
} class_call;

static void class_info(void *ctx)
{
    class_call *c = ctx;
    hp_heap_class(c->h, c->ord, c->info);
    if (c->name) {
        c->name->data = c->info->name;
        c->name->len = c->info->name_len;
        heap_copy_small(c->name);
    }
}

int heap_class_info(HeapIndex *heap, uint32_t ord, hp_class_info *info, heap_copy *name)
{
    class_call call = { heap->index, ord, info, name };
    if (heap_guard(heap, class_info, &call) < 0)
        return -1;
    info->name = NULL; /* in the mapping: read name instead */
    return name ? heap_copy_finish(heap, name) : 0;
}

/* ---- fields and references, into raw arrays ---- */

/* Appends one zeroed item to a raw array; NULL when out of memory. */
static void *grow(void **items, size_t *n, size_t *cap, size_t size)
{
    if (*n == *cap) {
        size_t want = *cap ? 2 * *cap : 16;
        void *more = want <= PY_SSIZE_T_MAX / size ? PyMem_RawRealloc(*items, want * size) : NULL;
        if (!more)
            return NULL;
        *items = more;
        *cap = want;
    }
    return memset((char *)*items + (*n)++ * size, 0, size);
}

/* Copies one value (1, 2, 4 or 8 bytes) out of the mapping: fixed-size
 * copies the compiler inlines, no memcpy call on the field-read path. */
static void copy_value_bytes(uint8_t out[8], const uint8_t *v, int size)
{
    switch (size) {
    case 1: memcpy(out, v, 1); break;
    case 2: memcpy(out, v, 2); break;
    case 4: memcpy(out, v, 4); break;
    default: memcpy(out, v, 8); break;
    }
}

typedef struct {
    const hp_heap *h;
    int what;           /* FIELDS_* */
    uint32_t ord;       /* the class */
    uint32_t index;     /* FIELDS_ALL: an instance of it whose values are copied, or HP_NONE */
    heap_field *items;  /* PyMem_Raw, freed by the caller */
    size_t n, cap;
    int nomem;
} fields_call;

static void copy_value(heap_field *item, const uint8_t *value, int id_size)
{
    item->has_value = value != NULL;
    if (value)
        copy_value_bytes(item->value, value, hp_type_size(item->f.type, id_size));
}

static void collect_fields(void *ctx)
{
    fields_call *c = ctx;
    const int id = hp_heap_id_size(c->h);
    hp_field f;
    if (c->what == FIELDS_STATIC) {
        hp_static_iter it;
        hp_static_iter_init(&it, c->h, c->ord);
        while (hp_static_next(&it, &f)) {
            heap_field *item = grow((void **)&c->items, &c->n, &c->cap, sizeof *item);
            if (!item) {
                c->nomem = 1;
                return;
            }
            item->f = f;
            copy_value(item, f.value, id);
        }
    } else {
        hp_object obj;
        hp_field_iter it;
        if (c->index != HP_NONE)
            hp_heap_object(c->h, c->index, &obj);
        hp_field_iter_init(&it, c->h, c->ord);
        /* Declared fields only: the iterator starts with the class's own. */
        while (hp_field_next(&it, &f) && (c->what == FIELDS_ALL || f.declaring == c->ord)) {
            heap_field *item = grow((void **)&c->items, &c->n, &c->cap, sizeof *item);
            if (!item) {
                c->nomem = 1;
                return;
            }
            item->f = f;
            if (c->index != HP_NONE)
                copy_value(item, hp_field_value(&f, obj.data, obj.data_len, id), id);
        }
    }
}

int heap_fields(HeapIndex *heap, int what, uint32_t ord, uint32_t index, heap_field **items, size_t *n)
{
    fields_call call;
    call.h = heap->index;
    call.what = what;
    call.ord = ord;
    call.index = index;
    call.items = NULL;
    call.n = call.cap = 0;
    call.nomem = 0;
    if (heap_guard(heap, collect_fields, &call) < 0 || call.nomem) {
        PyMem_RawFree(call.items);
        if (call.nomem && !PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    *items = call.items;
    *n = call.n;
    return 0;
}

typedef struct {
    const hp_heap *h;
    uint32_t index;
    size_t max_refs;
    uint32_t only;
    heap_refs *out;
    uint64_t count;
    int nomem;
} refs_call;

static int add_slot(refs_call *c, const hp_field *f)
{
    hp_field *slot = grow((void **)&c->out->slots, &c->out->n_slots, &c->out->cap_slots, sizeof *slot);
    if (!slot)
        return c->nomem = 1, -1;
    *slot = *f;
    slot->value = NULL; /* a pointer into the mapping, not to be read unguarded */
    return 0;
}

static void collect_refs(void *ctx)
{
    refs_call *c = ctx;
    hp_kind kind = hp_heap_object_kind(c->h, c->index);
    hp_field f;
    hp_ref r;
    if (kind == HP_KIND_INSTANCE && hp_heap_object_class(c->h, c->index) != HP_NONE) {
        hp_field_iter it;
        hp_field_iter_init(&it, c->h, hp_heap_object_class(c->h, c->index));
        while (hp_field_next(&it, &f))
            if (f.type == HP_T_OBJECT && add_slot(c, &f) < 0)
                return;
    } else if (kind == HP_KIND_CLASS) {
        uint32_t ord = hp_heap_find_class_id(c->h, hp_heap_object_id(c->h, c->index));
        hp_static_iter it;
        if (ord != HP_NONE)
            for (hp_static_iter_init(&it, c->h, ord); hp_static_next(&it, &f);)
                if (add_slot(c, &f) < 0)
                    return;
    }
    if (c->max_refs) {
        hp_ref_iter it;
        uint64_t only_id = 0;
        if (c->only != HP_NONE) {
            only_id = hp_heap_object_id(c->h, c->only);
            if (hp_heap_find(c->h, only_id) != c->only)
                return; /* a later duplicate of an id: references resolve to the first */
        }
        hp_ref_iter_init(&it, c->h, c->index);
        it.lazy = c->only != HP_NONE; /* compared by id: no look-up of the others */
        while (c->out->n < c->max_refs && hp_ref_next(&it, &r)) {
            hp_ref *item;
            if (c->only != HP_NONE) {
                if (r.target_id != only_id)
                    continue;
                r.target = c->only;
            }
            item = grow((void **)&c->out->refs, &c->out->n, &c->out->cap, sizeof *item);
            if (!item) {
                c->nomem = 1;
                return;
            }
            *item = r;
        }
    }
}

void heap_refs_free(heap_refs *r)
{
    PyMem_RawFree(r->refs);
    PyMem_RawFree(r->slots);
}

static void count_refs(void *ctx)
{
    refs_call *c = ctx;
    hp_ref_iter it;
    hp_ref r;
    hp_ref_iter_init(&it, c->h, c->index);
    it.lazy = 1;
    while (hp_ref_next(&it, &r))
        c->count++;
}

int heap_ref_count(HeapIndex *heap, uint32_t index, uint64_t *count)
{
    refs_call call = { heap->index, index, 0, HP_NONE, NULL, 0, 0 };
    if (heap_guard(heap, count_refs, &call) < 0)
        return -1;
    *count = call.count;
    return 0;
}

int heap_refs_of(HeapIndex *heap, uint32_t index, size_t max_refs, uint32_t only, heap_refs *out)
{
    refs_call call = { heap->index, index, max_refs, only, out, 0, 0 };
    memset(out, 0, sizeof *out);
    if (heap_guard(heap, collect_refs, &call) < 0 || call.nomem) {
        heap_refs_free(out);
        if (call.nomem && !PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* ---- one value ---- */

static void read_value(void *ctx)
{
    heap_value_read *c = ctx;
    const int id = hp_heap_id_size(c->h);
    const uint8_t *v = NULL;
    if (c->name) {
        hp_static_iter it;
        hp_field f;
        for (hp_static_iter_init(&it, c->h, c->ord); !v && hp_static_next(&it, &f);)
            if (hp_heap_field_is(c->h, &f, c->name, c->name_len)) {
                c->type = f.type;
                v = f.value;
            }
    } else {
        hp_object obj;
        hp_heap_object(c->h, c->index, &obj);
        if (c->field) {
            c->type = c->field->type;
            v = hp_field_value(c->field, obj.data, obj.data_len, id);
        } else {
            Py_ssize_t i = c->element < 0 ? c->element + (Py_ssize_t)obj.length : c->element;
            c->type = obj.elem_type;
            if (i >= 0 && (uint64_t)i < obj.length)
                v = obj.data + (size_t)i * hp_type_size(obj.elem_type, id);
        }
    }
    c->found = v != NULL;
    if (v)
        copy_value_bytes(c->value, v, hp_type_size(c->type, id));
}

int heap_read_value(HeapIndex *heap, uint32_t index, heap_value_read *call)
{
    call->h = heap->index;
    call->index = index;
    call->found = 0;
    return heap_guard(heap, read_value, call);
}

/* ---- a String's text ---- */

typedef struct {
    const hp_heap *h;
    uint32_t index;
    int rc;
    int *encoding;
    heap_copy *text;
} string_call;

static void read_string(void *ctx)
{
    string_call *c = ctx;
    hp_text t;
    c->text->data = NULL;
    c->rc = hp_heap_string(c->h, c->index, &t);
    if (c->rc == 1) {
        *c->encoding = t.encoding;
        c->text->data = t.data;
        c->text->len = t.encoding == HP_TEXT_LATIN1 ? t.units : t.units * 2;
    }
    heap_copy_small(c->text);
}

int heap_string_text(HeapIndex *heap, uint32_t index, int *encoding, heap_copy *text)
{
    string_call call = { heap->index, index, 0, encoding, text };
    if (heap_guard(heap, read_string, &call) < 0 || heap_copy_finish(heap, text) < 0)
        return -2;
    return call.rc;
}


/* ---- an array's elements ---- */

typedef struct {
    const hp_heap *h;
    uint32_t index;
    hp_object *obj;
    heap_copy *data;
} elements_call;

static void read_elements(void *ctx)
{
    elements_call *c = ctx;
    hp_heap_object(c->h, c->index, c->obj);
    c->data->data = c->obj->data;
    c->data->len = (size_t)c->obj->data_len;
    heap_copy_small(c->data);
}

int heap_elements(HeapIndex *heap, uint32_t index, hp_object *obj, heap_copy *data)
{
    elements_call call = { heap->index, index, obj, data };
    if (heap_guard(heap, read_elements, &call) < 0)
        return -1;
    return heap_copy_finish(heap, data);
}


/* ---- subclasses ---- */

typedef struct {
    const hp_heap *h;
    uint32_t ord;
    uint8_t *mark;
} descendants_call;

static void mark_descendants(void *ctx)
{
    descendants_call *c = ctx;
    const hp_heap *h = c->h;
    uint8_t *mark = c->mark;
    uint32_t n = hp_heap_class_count(h), i;
    mark[c->ord] = 2; /* 2: known to descend, 1: known not to, 0: unknown */
    for (i = 0; i < n; i++) {
        uint32_t cur = i, depth = 0, verdict;
        hp_class_info info;
        while (mark[cur] == 0 && depth++ <= n) {
            hp_heap_class(h, cur, &info);
            if (info.super_ord == HP_NONE) {
                mark[cur] = 1;
                break;
            }
            cur = info.super_ord;
        }
        verdict = mark[cur] ? mark[cur] : 1;
        for (cur = i; mark[cur] == 0;) {
            mark[cur] = (uint8_t)verdict;
            hp_heap_class(h, cur, &info);
            cur = info.super_ord;
        }
    }
}

uint8_t *heap_descendants(HeapIndex *heap, uint32_t ord, int with_self)
{
    uint32_t n = hp_heap_class_count(heap->index), i;
    descendants_call call = { heap->index, ord, PyMem_Calloc(n ? n : 1, 1) };
    if (!call.mark)
        return (uint8_t *)PyErr_NoMemory();
    if (heap_guard(heap, mark_descendants, &call) < 0) {
        PyMem_Free(call.mark);
        return NULL;
    }
    for (i = 0; i < n; i++)
        call.mark[i] = call.mark[i] == 2 && (with_self || i != ord);
    return call.mark;
}

/* ---- text ---- */

/* Text of the mapping found by find(call) under the guard, by STRING id or
 * Android heap number. */
typedef struct {
    const hp_heap *h;
    uint64_t key;
    const hp_field *field; /* find_field_name */
    heap_copy text;
} text_call;

static void find_utf8(void *ctx)
{
    text_call *c = ctx;
    if (!hp_heap_utf8(c->h, c->key, &c->text.data, &c->text.len))
        c->text.data = NULL;
    heap_copy_small(&c->text);
}

static void find_field_name(void *ctx)
{
    text_call *c = ctx;
    char unnamed[HP_UNNAMED_MAX];
    hp_heap_field_name(c->h, c->field, unnamed, &c->text.data, &c->text.len);
    heap_copy_small(&c->text); /* the placeholder fits: it is copied before `unnamed` goes */
}

static void find_android_name(void *ctx)
{
    text_call *c = ctx;
    if (!hp_heap_heap_name(c->h, (int)c->key, &c->text.data, &c->text.len))
        c->text.data = NULL;
    heap_copy_small(&c->text);
}

static PyObject *decode_replace(const uint8_t *text, size_t len)
{
    return PyUnicode_DecodeUTF8((const char *)text, (Py_ssize_t)len, "replace");
}

/* The text find() copies out, decoded; None when there is none. */
static PyObject *text_of(HeapIndex *heap, void (*find)(void *ctx), uint64_t key, const hp_field *field,
                         PyObject *(*decode)(const uint8_t *text, size_t len))
{
    text_call call;
    PyObject *out;
    call.h = heap->index;
    call.key = key;
    call.field = field;
    if (heap_guard(heap, find, &call) < 0 || heap_copy_finish(heap, &call.text) < 0)
        return NULL;
    if (!call.text.data)
        Py_RETURN_NONE;
    out = decode(call.text.data, call.text.len);
    heap_copy_free(&call.text);
    return out;
}

PyObject *heap_utf8(HeapIndex *heap, uint64_t sid) { return text_of(heap, find_utf8, sid, NULL, hprof_decode_mutf8); }

PyObject *heap_field_name(HeapIndex *heap, const hp_field *f)
{
    return text_of(heap, find_field_name, 0, f, hprof_decode_mutf8);
}

PyObject *heap_android_name(HeapIndex *heap, int number)
{
    return text_of(heap, find_android_name, (uint64_t)number, NULL, decode_replace);
}
