/* What the heap glue files share, below the type files (Heap, HeapObject,
 * HeapClass, the iterators, reachability, tables), which call it and never
 * each other's helpers: the life of a heap's index (heap_index, busy
 * counting, release), the handles (heap_handle, heap_class_handle), class
 * names, field values, reference names, GC root kinds and stack frames, and
 * the referrer index.  It calls only the guarded reads (_hprof_heap_read.c),
 * the shared glue and the core. */
#include "_hprof_heap.h"

#include <string.h>

/* ---- the index's life ---------------------------------------------------- */

const hp_heap *heap_index(HeapIndex *heap)
{
    if (!heap->index || heap->closing) {
        PyErr_SetString(PyExc_ValueError, "the heap is closed");
        return NULL;
    }
    return heap->index;
}

void heap_release(HeapIndex *heap)
{
    hp_reach_free(heap->reach);
    heap->reach = NULL;
    heap->reach_level = 0;
    hp_heap_free(heap->index);
    heap->index = NULL;
    if (heap->has_view) {
        PyBuffer_Release(&heap->view);
        heap->has_view = 0;
    }
}

void heap_leave(HeapIndex *heap)
{
    if (--heap->busy == 0 && heap->closing)
        heap_release(heap);
}

/* The heaps of the process (GIL held when changed). */
static HeapIndex *live_heaps;

void heap_live_add(HeapIndex *heap)
{
    heap->live_prev = NULL;
    heap->live_next = live_heaps;
    if (live_heaps)
        live_heaps->live_prev = heap;
    live_heaps = heap;
}

void heap_live_remove(HeapIndex *heap)
{
    if (heap->live_prev)
        heap->live_prev->live_next = heap->live_next;
    else if (live_heaps == heap)
        live_heaps = heap->live_next;
    if (heap->live_next)
        heap->live_next->live_prev = heap->live_prev;
    heap->live_prev = heap->live_next = NULL;
}

PyObject *heap_after_fork(PyObject *module, PyObject *unused)
{
    HeapIndex *heap, *next;
    (void)module;
    (void)unused;
    for (heap = live_heaps; heap; heap = next) {
        next = heap->live_next;
        if (PyThread_acquire_lock(heap->lock, NOWAIT_LOCK)) {
            PyThread_release_lock(heap->lock);
        } else {
            /* Held by a thread this process does not have, which was
             * computing: the lock and what it computed stay as they were
             * (leaked); the reachability is computed again when asked. */
            PyThread_type_lock fresh = PyThread_allocate_lock();
            heap->reach = NULL;
            heap->reach_level = 0;
            if (fresh)
                heap->lock = fresh;
            else
                heap->closing = 1;
        }
        heap->busy -= heap->running;
        heap->running = 0;
        if (heap->busy == 0 && heap->closing)
            heap_release(heap);
    }
    Py_RETURN_NONE;
}

int heap_interrupted(void *ctx)
{
    (void)ctx;
    return hprof_run_signal_handlers() < 0;
}

int heap_walk(HeapIndex *heap, void (*fn)(void *ctx), void *ctx, int locked)
{
    uint64_t fault;
    int rc;
    heap->running++;
    Py_BEGIN_ALLOW_THREADS
    if (locked)
        PyThread_acquire_lock(heap->lock, WAIT_LOCK);
    rc = hprof_guard_call(heap->view.buf, (size_t)heap->view.len, fn, ctx, &fault);
    if (locked)
        PyThread_release_lock(heap->lock);
    Py_END_ALLOW_THREADS
    heap->running--;
    if (rc < 0)
        hprof_raise_changed(heap->st, fault);
    return rc;
}

int heap_run(HeapIndex *heap, void (*fn)(void *ctx), void *ctx, const hp_code *rc, const hp_error *err)
{
    int walked;
    heap_enter(heap);
    walked = heap_walk(heap, fn, ctx, 1);
    heap_leave(heap);
    if (walked < 0)
        return -1;
    if (*rc != HP_OK) {
        if (!PyErr_Occurred())
            hprof_raise(heap->st, err);
        return -1;
    }
    return heap_index(heap) ? 0 : -1;
}

/* ---- handles -------------------------------------------------------------- */

/* A new handle of `type` (hprofkit.HeapObject once the package registered
 * it: a Python subclass of the base type that adds no storage). */
static HeapHandle *new_handle(HeapIndex *heap, PyTypeObject *type, uint32_t index, uint32_t ord)
{
    HeapHandle *o = PyType_IS_GC(type) ? PyObject_GC_New(HeapHandle, type) : PyObject_New(HeapHandle, type);
    if (!o)
        return NULL;
    o->heap = (HeapIndex *)Py_NewRef(heap);
    o->index = index;
    o->ord = ord;
    return o;
}

PyObject *heap_handle(HeapIndex *heap, uint32_t index)
{
    const hp_heap *h = heap->index;
    if (hp_heap_object_kind(h, index) == HP_KIND_CLASS) {
        uint32_t ord = hp_heap_find_class_id(h, hp_heap_object_id(h, index));
        if (ord != HP_NONE)
            return heap_class_handle(heap, ord);
    }
    /* Not tracked by the collector even when the type is a GC one: a handle
     * refers to its heap and type only, never to anything that refers back. */
    return (PyObject *)new_handle(heap, heap->st->object_handle_type, index, HP_NONE);
}

PyObject *heap_handle_of_id(HeapIndex *heap, uint64_t id)
{
    uint32_t i;
    if (id == 0 || (i = hp_heap_find(heap->index, id)) == HP_NONE)
        Py_RETURN_NONE;
    return heap_handle(heap, i);
}

PyObject *heap_class_handle(HeapIndex *heap, uint32_t ord)
{
    const hp_heap *index;
    if (ord == HP_NONE)
        Py_RETURN_NONE;
    if (!(index = heap_index(heap)))
        return NULL;
    if (!heap->classes) {
        /* Made once and kept by the heap (a cycle: they take part in GC). */
        uint32_t n = hp_heap_class_count(index), i;
        PyObject *list = PyList_New(n);
        for (i = 0; list && i < n; i++) {
            HeapHandle *c;
            hp_class_info info;
            if (heap_class_info(heap, i, &info, NULL) < 0 ||
                !(c = new_handle(heap, heap->st->class_handle_type, info.object_index, i))) {
                Py_CLEAR(list);
                break;
            }
            PyObject_GC_Track(c);
            PyList_SET_ITEM(list, i, (PyObject *)c);
        }
        if (!list)
            return NULL;
        heap->classes = list;
    }
    return Py_NewRef(PyList_GET_ITEM(heap->classes, ord));
}

/* ---- class names ---------------------------------------------------------- */

/* The Java name of class `ord` ("java.lang.String", "int[]"), decoded in C:
 * the module asks the package for nothing. */
static PyObject *java_name_of(HeapIndex *heap, uint32_t ord)
{
    hp_class_info info;
    heap_copy name;
    PyObject *out;
    if (heap_class_info(heap, ord, &info, &name) < 0)
        return NULL;
    if (!name.data) { /* no LOAD_CLASS, or one naming a STRING the dump lacks */
        char unnamed[HP_UNNAMED_MAX];
        return PyUnicode_FromStringAndSize(unnamed, (Py_ssize_t)hp_unnamed(unnamed, HP_UNNAMED_CLASS, info.id));
    }
    out = hprof_java_name(name.data, name.len);
    heap_copy_free(&name);
    return out;
}

PyObject *heap_class_names(HeapIndex *heap)
{
    const hp_heap *index = heap_index(heap);
    uint32_t n, i;
    PyObject *list;
    if (!index)
        return NULL;
    if (heap->names)
        return heap->names;
    n = hp_heap_class_count(index);
    list = PyList_New(n);
    for (i = 0; list && i < n; i++) {
        /* A million classes take seconds: Ctrl-C stops it (names stay unset). */
        PyObject *name = (i & 4095) == 4095 && PyErr_CheckSignals() < 0 ? NULL : java_name_of(heap, i);
        if (!name) {
            Py_CLEAR(list);
            break;
        }
        PyUnicode_InternInPlace(&name); /* obj["a.Class", "f"] and find_class: found by identity */
        PyList_SET_ITEM(list, i, name);
    }
    heap->names = list;
    return list;
}

PyObject *heap_class_name(HeapIndex *heap, uint32_t ord)
{
    PyObject *names = heap_class_names(heap);
    return names ? PyList_GET_ITEM(names, ord) : NULL;
}

/* ---- values --------------------------------------------------------------- */

PyObject *heap_value(HeapIndex *heap, int type, const uint8_t *v) /* v: a copy */
{
    const int id = hp_heap_id_size(heap->index);
    switch (type) {
    case HP_T_OBJECT: return heap_handle_of_id(heap, hp_read_id(v, id));
    case HP_T_BOOLEAN: return PyBool_FromLong(v[0] != 0);
    case HP_T_CHAR: {
        Py_UCS4 c = hp_be16(v);
        return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, &c, 1);
    }
    case HP_T_FLOAT: {
        uint32_t bits = hp_be32(v);
        float f;
        memcpy(&f, &bits, 4);
        return PyFloat_FromDouble(f);
    }
    case HP_T_DOUBLE: {
        uint64_t bits = hp_be64(v);
        double d;
        memcpy(&d, &bits, 8);
        return PyFloat_FromDouble(d);
    }
    case HP_T_BYTE: return PyLong_FromLong((int8_t)v[0]);
    case HP_T_SHORT: return PyLong_FromLong((int16_t)hp_be16(v));
    case HP_T_INT: return PyLong_FromLong((int32_t)hp_be32(v));
    case HP_T_LONG: return PyLong_FromLongLong((long long)hp_be64(v));
    default: Py_RETURN_NONE;
    }
}

/* ---- reference names ------------------------------------------------------ */

/* The names of an object's reference slots (heap_refs.slots) as a list. */
static PyObject *slot_names(HeapIndex *heap, const heap_refs *r)
{
    PyObject *names = PyList_New((Py_ssize_t)r->n_slots);
    size_t k;
    for (k = 0; names && k < r->n_slots; k++) {
        PyObject *name = heap_field_name(heap, &r->slots[k]);
        if (!name)
            Py_CLEAR(names);
        else
            PyList_SET_ITEM(names, k, name);
    }
    return names;
}

int heap_refs_named(HeapIndex *heap, uint32_t index, size_t max_refs, uint32_t only, heap_refs *refs,
                    PyObject **names)
{
    if (heap_refs_of(heap, index, max_refs, only, refs) < 0)
        return -1;
    if (!(*names = slot_names(heap, refs))) {
        heap_refs_free(refs);
        return -1;
    }
    return 0;
}

PyObject *heap_slot_name(const hp_ref *r, PyObject *names)
{
    switch (r->kind) {
    case HP_REF_ELEMENT: return PyUnicode_FromFormat("[%u]", r->slot);
    case HP_REF_LOADER: return PyUnicode_FromString("<loader>");
    default:
        if (names && (Py_ssize_t)r->slot < PyList_GET_SIZE(names))
            return Py_NewRef(PyList_GET_ITEM(names, r->slot));
        return PyUnicode_FromFormat("<field %u>", r->slot);
    }
}

/* A class's reference-field names in slot order: its own, then its
 * superclass's tuple (a new reference). */
static PyObject *own_then_super(HeapIndex *heap, uint32_t ord, PyObject *above)
{
    heap_field *items;
    size_t n, k;
    Py_ssize_t own = 0, j;
    PyObject *tuple;
    if (heap_fields(heap, FIELDS_DECLARED, ord, HP_NONE, &items, &n) < 0)
        return NULL;
    for (k = 0; k < n; k++)
        own += items[k].f.type == HP_T_OBJECT;
    tuple = PyTuple_New(own + PyTuple_GET_SIZE(above));
    for (k = 0, j = 0; tuple && k < n; k++) {
        PyObject *name;
        if (items[k].f.type != HP_T_OBJECT)
            continue;
        if (!(name = heap_field_name(heap, &items[k].f))) {
            Py_CLEAR(tuple);
            break;
        }
        PyTuple_SET_ITEM(tuple, j++, name);
    }
    for (k = 0; tuple && (Py_ssize_t)k < PyTuple_GET_SIZE(above); k++)
        PyTuple_SET_ITEM(tuple, own + (Py_ssize_t)k, Py_NewRef(PyTuple_GET_ITEM(above, k)));
    PyMem_RawFree(items);
    return tuple;
}

/* The slot names of class `ord` (borrowed), made once per class from its
 * superclass's: O(own fields) a class, however deep the hierarchy. */
static PyObject *slot_names_of(HeapIndex *heap, uint32_t ord)
{
    const hp_heap *h = heap->index;
    uint32_t C = hp_heap_class_count(h), c, top = 0, *stack;
    PyObject *list, *empty = NULL;
    if (!heap->slot_names) {
        if (!(heap->slot_names = PyList_New(C)))
            return NULL;
        for (c = 0; c < C; c++)
            PyList_SET_ITEM(heap->slot_names, c, Py_NewRef(Py_None));
    }
    list = heap->slot_names;
    if (PyList_GET_ITEM(list, ord) != Py_None)
        return PyList_GET_ITEM(list, ord);
    if (!(stack = PyMem_Malloc((size_t)C * 4)))
        return PyErr_NoMemory();
    /* Up to a class whose names are known, or whose layout has no reference. */
    for (c = ord; c < C && top < C && PyList_GET_ITEM(list, c) == Py_None;) {
        hp_class_info ci;
        hp_heap_class(h, c, &ci);
        if (ci.n_refs == 0) {
            if (!empty && !(empty = PyTuple_New(0)))
                break;
            PyList_SetItem(list, c, Py_NewRef(empty));
            break;
        }
        stack[top++] = c;
        c = ci.super_ord;
    }
    Py_XDECREF(empty);
    while (top > 0 && !PyErr_Occurred()) {
        hp_class_info ci;
        PyObject *above, *names;
        c = stack[--top];
        hp_heap_class(h, c, &ci);
        above = ci.super_ord < C && PyList_GET_ITEM(list, ci.super_ord) != Py_None ? PyList_GET_ITEM(list, ci.super_ord)
                                                                                   : NULL;
        if (!above && !(above = empty = PyTuple_New(0)))
            break;
        names = own_then_super(heap, c, above);
        Py_CLEAR(empty);
        if (!names)
            break;
        PyList_SetItem(list, c, names); /* steals names */
    }
    PyMem_Free(stack);
    return PyErr_Occurred() ? NULL : PyList_GET_ITEM(list, ord);
}

PyObject *heap_field_slot_name(HeapIndex *heap, uint32_t ord, uint32_t slot)
{
    PyObject *names;
    if (ord == HP_NONE)
        return PyUnicode_FromFormat("<field %u>", slot);
    if (!(names = slot_names_of(heap, ord)))
        return NULL;
    if ((Py_ssize_t)slot < PyTuple_GET_SIZE(names))
        return Py_NewRef(PyTuple_GET_ITEM(names, slot));
    return PyUnicode_FromFormat("<field %u>", slot);
}

PyObject *heap_ref_name(HeapIndex *heap, uint32_t source, const hp_ref *ref)
{
    heap_refs refs;
    PyObject *names, *name;
    if (heap_refs_named(heap, source, 0, HP_NONE, &refs, &names) < 0)
        return NULL;
    heap_refs_free(&refs);
    name = heap_slot_name(ref, names);
    Py_DECREF(names);
    return name;
}

/* ---- the referrer index --------------------------------------------------- */

typedef struct {
    hp_heap *index;
    hp_error err;
    hp_code rc;
} referrers_call;

static void build_referrers(void *ctx)
{
    referrers_call *c = ctx;
    c->rc = hp_heap_build_referrers(c->index, heap_interrupted, NULL, &c->err);
}

/* Whether the referrer index is built.  The read is made under the lock (not
 * waiting for it: a thread holding it is building) so that it is ordered
 * after the building thread's writes. */
static int referrers_ready(HeapIndex *heap, const hp_heap *index)
{
    int ready = 0;
    if (PyThread_acquire_lock(heap->lock, NOWAIT_LOCK)) {
        ready = hp_heap_has_referrers(index);
        PyThread_release_lock(heap->lock);
    }
    return ready;
}

int heap_ensure_referrers(HeapIndex *heap)
{
    const hp_heap *index = heap_index(heap);
    referrers_call call;
    if (!index)
        return -1;
    if (referrers_ready(heap, index))
        return 0;
    memset(&call, 0, sizeof call);
    call.index = (hp_heap *)index;
    call.rc = HP_OK;
    return heap_run(heap, build_referrers, &call, &call.rc, &call.err); /* a second caller finds them built */
}

/* ---- GC roots and stack frames -------------------------------------------- */

const char *heap_root_kind_name(int tag)
{
    const char *name = hp_subtag_name(tag);
    if (!name)
        return "UNKNOWN";
    return strncmp(name, "ROOT_", 5) == 0 ? name + 5 : name;
}

PyObject *heap_root_kind(int tag) { return PyUnicode_FromString(heap_root_kind_name(tag)); }

typedef struct {
    const hp_heap *h;
    const hp_root *root;
    hp_frame frame;
    int found;
} frame_call;

static void find_frame(void *ctx)
{
    frame_call *c = ctx;
    c->found = hp_heap_thread_frame(c->h, c->root->thread_serial, c->root->frame, &c->frame);
}

/* A frame's method: the dump's name, or the placeholder of one it lacks. */
static PyObject *heap_method_name(HeapIndex *heap, uint64_t sid)
{
    char unnamed[HP_UNNAMED_MAX];
    PyObject *name = heap_utf8(heap, sid);
    if (name != Py_None)
        return name;
    Py_DECREF(name);
    return PyUnicode_FromStringAndSize(unnamed, (Py_ssize_t)hp_unnamed(unnamed, HP_UNNAMED_METHOD, 0));
}

PyObject *heap_stack_frame(HeapIndex *heap, const hp_root *r)
{
    const hp_heap *index = heap->index;
    frame_call call = { index, r, { 0, 0, 0, 0, 0 }, 0 };
    hp_frame f;
    PyObject *item;
    uint32_t cls;
    int k;
    if (r->frame < 0)
        Py_RETURN_NONE;
    if (heap_guard(heap, find_frame, &call) < 0)
        return NULL;
    f = call.frame;
    item = PyStructSequence_New(heap->st->stack_frame_type);
    if (!item)
        return NULL;
    PyStructSequence_SET_ITEM(item, 0, PyLong_FromLong(r->frame));
    if (!call.found) {
        for (k = 1; k < 6; k++)
            PyStructSequence_SET_ITEM(item, k, Py_NewRef(Py_None));
        return item;
    }
    cls = hp_heap_class_by_serial(index, f.class_serial);
    PyStructSequence_SET_ITEM(item, 1, cls != HP_NONE ? Py_XNewRef(heap_class_name(heap, cls)) : Py_NewRef(Py_None));
    PyStructSequence_SET_ITEM(item, 2, heap_method_name(heap, f.method_sid));
    PyStructSequence_SET_ITEM(item, 3, heap_utf8(heap, f.signature_sid));
    PyStructSequence_SET_ITEM(item, 4, heap_utf8(heap, f.source_sid));
    PyStructSequence_SET_ITEM(item, 5, PyLong_FromLong(f.line));
    for (k = 0; k < 6; k++)
        if (!PyStructSequence_GET_ITEM(item, k)) {
            Py_DECREF(item);
            return NULL;
        }
    return item;
}
