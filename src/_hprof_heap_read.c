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

/* ---- text ---- */

/* Text of the mapping found by find(call) under the guard, by STRING id or
 * Android heap number. */
typedef struct {
    const hp_heap *h;
    uint64_t key;
    heap_copy text;
} text_call;

static void find_utf8(void *ctx)
{
    text_call *c = ctx;
    if (!hp_heap_utf8(c->h, c->key, &c->text.data, &c->text.len))
        c->text.data = NULL;
    heap_copy_small(&c->text);
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
static PyObject *text_of(HeapIndex *heap, void (*find)(void *ctx), uint64_t key,
                         PyObject *(*decode)(const uint8_t *text, size_t len))
{
    text_call call;
    PyObject *out;
    call.h = heap->index;
    call.key = key;
    if (heap_guard(heap, find, &call) < 0 || heap_copy_finish(heap, &call.text) < 0)
        return NULL;
    if (!call.text.data)
        Py_RETURN_NONE;
    out = decode(call.text.data, call.text.len);
    heap_copy_free(&call.text);
    return out;
}

PyObject *heap_utf8(HeapIndex *heap, uint64_t sid) { return text_of(heap, find_utf8, sid, heap_decode_mutf8); }

PyObject *heap_android_name(HeapIndex *heap, int number)
{
    return text_of(heap, find_android_name, (uint64_t)number, decode_replace);
}
