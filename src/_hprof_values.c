/* The heap's values beyond single fields: collections walked by their
 * layouts (core/hp_coll.h), duplicate strings (core/hp_strdup.h), large
 * arrays, threads' stacks and allocation sites (core/hp_heap_trace.c).
 *
 * The private methods here give raw rows; hprofkit.HeapObject's entries(),
 * elements(), fill_ratio and value, and hprofkit.Heap's threads(),
 * allocation_sites(), duplicate_strings(), collection_waste() and
 * large_arrays() shape them in Python (hprofkit/_values.py).  Core walks
 * over one collection run with the GIL held under the SIGBUS guard; walks
 * over the whole heap release the GIL and check Ctrl-C. */
#include "_hprof_heap.h"

#include <string.h>

#include "core/hp_coll.h"
#include "core/hp_histogram.h"
#include "core/hp_strdup.h"
#include "core/hp_waste.h"

/* ---- the heap's collection layouts, resolved on first use ---- */

typedef struct {
    HeapIndex *heap;
    hp_error err;
    hp_code rc;
} coll_call;

static void build_layouts(void *ctx)
{
    coll_call *c = ctx;
    c->rc = c->heap->coll ? HP_OK
                          : hp_coll_new(c->heap->index, &hprof_raw_alloc, heap_interrupted, NULL, &c->heap->coll,
                                        &c->err);
}

/* Whether the layouts are built, read under the lock (not waiting: a thread
 * holding it is building them). */
static int layouts_ready(HeapIndex *heap)
{
    int ready = 0;
    if (PyThread_acquire_lock(heap->lock, NOWAIT_LOCK)) {
        ready = heap->coll != NULL;
        PyThread_release_lock(heap->lock);
    }
    return ready;
}

static const hp_coll *layouts(HeapIndex *heap)
{
    coll_call call;
    int rc;
    if (!heap_index(heap))
        return NULL;
    if (layouts_ready(heap))
        return heap->coll;
    memset(&call, 0, sizeof call);
    call.heap = heap;
    heap_enter(heap);
    rc = heap_walk(heap, build_layouts, &call, 1);
    heap_leave(heap);
    if (rc < 0)
        return NULL;
    if (call.rc != HP_OK) /* interrupted: the signal handler's exception (KeyboardInterrupt) is set */
        return PyErr_Occurred() ? NULL : (const hp_coll *)hprof_raise(heap->st, &call.err);
    return heap_index(heap) ? heap->coll : NULL;
}

/* A core failure as an exception; NULL. */
static PyObject *raise_core(HeapIndex *heap, const hp_error *err)
{
    if (!PyErr_Occurred())
        hprof_raise(heap->st, err);
    return NULL;
}

/* ---- one collection: entries and elements ---- */

typedef struct {
    hp_coll_value key, value;
} coll_pair;

typedef struct {
    const hp_coll *coll;
    uint32_t index;
    int shape;
    coll_pair *items;   /* PyMem_Raw, the caller's to free */
    size_t n, cap;
    int nomem;
    hp_error err;
    hp_code rc;
} walk_call;

static int collect(void *ctx, const hp_coll_value *key, const hp_coll_value *value)
{
    walk_call *c = ctx;
    if (c->n == c->cap) {
        size_t want = c->cap ? 2 * c->cap : 16;
        coll_pair *more = want <= PY_SSIZE_T_MAX / sizeof *more ? PyMem_RawRealloc(c->items, want * sizeof *more)
                                                                  : NULL;
        if (!more)
            return c->nomem = 1;
        c->items = more;
        c->cap = want;
    }
    c->items[c->n].key = *key;
    c->items[c->n].value = *value;
    c->n++;
    return 0;
}

static void walk_collection(void *ctx)
{
    walk_call *c = ctx;
    c->shape = hp_coll_shape(c->coll, c->index, NULL);
    c->rc = c->shape == HP_COLL_NONE ? HP_OK : hp_coll_walk(c->coll, c->index, collect, c, &c->err);
}

/* A key, element or value as Python: a handle, None, or a primitive. */
static PyObject *coll_value(HeapIndex *heap, const hp_coll_value *v)
{
    if (v->type == HP_T_OBJECT)
        return v->index == HP_NONE ? Py_NewRef(Py_None) : heap_handle(heap, v->index);
    return heap_value(heap, v->type, v->bytes);
}

static const char *const shape_names[] = { "no collection", "a list", "a set", "a map" };

/* obj._walk(entries): the entries of a map as [(key, value)], or the
 * elements of a list or set; TypeError for anything else. */
PyObject *values_walk(HeapHandle *o, PyObject *arg)
{
    HeapIndex *heap = o->heap;
    int entries = PyObject_IsTrue(arg);
    walk_call call;
    PyObject *list;
    size_t k;
    memset(&call, 0, sizeof call);
    if (entries < 0 || !(call.coll = layouts(heap)))
        return NULL;
    call.index = o->index;
    if (heap_guard(heap, walk_collection, &call) < 0) {
        PyMem_RawFree(call.items);
        return NULL;
    }
    if (call.nomem || call.rc != HP_OK) {
        PyMem_RawFree(call.items);
        if (call.nomem)
            return PyErr_NoMemory();
        return raise_core(heap, &call.err);
    }
    if (call.shape == HP_COLL_NONE || (call.shape == HP_COLL_MAP) != entries) {
        uint32_t ord = hp_heap_object_class(heap->index, o->index);
        PyObject *name = ord == HP_NONE ? NULL : heap_class_name(heap, ord);
        PyMem_RawFree(call.items);
        if (call.shape == HP_COLL_NONE)
            PyErr_Format(PyExc_TypeError, "%S is not a collection hprofkit knows", name ? name : Py_None);
        else
            PyErr_Format(PyExc_TypeError, "%S is %s: %s", name ? name : Py_None, shape_names[call.shape],
                         entries ? "use elements()" : "use entries()");
        return NULL;
    }
    list = PyList_New((Py_ssize_t)call.n);
    for (k = 0; list && k < call.n; k++) {
        PyObject *item, *key;
        if (k + 16 < call.n) { /* the index entries the handles read, some items ahead */
            const coll_pair *ahead = &call.items[k + 16];
            if (ahead->key.type == HP_T_OBJECT && ahead->key.index != HP_NONE)
                hp_heap_prefetch_entry(heap->index, ahead->key.index);
            if (ahead->value.type == HP_T_OBJECT && ahead->value.index != HP_NONE)
                hp_heap_prefetch_entry(heap->index, ahead->value.index);
        }
        key = coll_value(heap, &call.items[k].key);
        if (!key) {
            Py_CLEAR(list);
            break;
        }
        if (entries) {
            PyObject *value = coll_value(heap, &call.items[k].value);
            item = value ? PyTuple_Pack(2, key, value) : NULL;
            Py_DECREF(key);
            Py_XDECREF(value);
        } else {
            item = key;
        }
        if (!item) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, k, item);
    }
    PyMem_RawFree(call.items);
    return list;
}

typedef struct {
    const hp_heap *h;
    const hp_coll *coll;
    uint32_t index;
    hp_coll_measure m;
    int array;          /* an object array: its elements counted instead */
    uint64_t used, length;
    hp_error err;       /* set when m.size_corrupt */
} measure_call;

static void measure(void *ctx)
{
    measure_call *c = ctx;
    const hp_heap *h = c->h;
    hp_object arr;
    int id_size;
    uint32_t k;
    hp_coll_measure_of(c->coll, c->index, &c->m);
    if (c->m.size_corrupt) {
        hp_heap_object(h, c->index, &arr);
        hp_failf(&c->err, HP_E_CORRUPT, arr.offset, HP_SUB_INSTANCE_DUMP, 1,
                 "collection 0x%llx declares size %lld, which its storage cannot hold (capacity %lld; "
                 "INSTANCE_DUMP at offset %llu)",
                 (unsigned long long)arr.id, (long long)c->m.size, (long long)c->m.capacity,
                 (unsigned long long)arr.offset);
    }
    if (c->m.shape != HP_COLL_NONE)
        return;
    if (hp_heap_object_kind(h, c->index) != HP_KIND_OBJ_ARRAY)
        return;
    hp_heap_object(h, c->index, &arr);
    id_size = hp_heap_id_size(h);
    c->array = 1;
    c->length = arr.length;
    for (k = 0; k < arr.length; k++)
        c->used += hp_read_id(arr.data + (uint64_t)k * id_size, id_size) != 0;
}

/* obj._measure(): (shape, size, capacity, wasted, inner) of a collection
 * (shape "list", "set" or "map"; size and capacity None when unknown), of
 * an object array ("array", non-null elements, length, 0, None), else None;
 * CorruptError for a size its storage cannot hold. */
PyObject *values_measure(HeapHandle *o, PyObject *unused)
{
    static const char *const shapes[] = { NULL, "list", "set", "map" };
    HeapIndex *heap = o->heap;
    measure_call call;
    PyObject *size, *capacity, *inner;
    (void)unused;
    memset(&call, 0, sizeof call);
    if (!(call.coll = layouts(heap)))
        return NULL;
    call.h = heap->index;
    call.index = o->index;
    if (heap_guard(heap, measure, &call) < 0)
        return NULL;
    if (call.array)
        return Py_BuildValue("sKKiO", "array", (unsigned long long)call.used, (unsigned long long)call.length, 0,
                             Py_None);
    if (call.m.size_corrupt)
        return hprof_raise(heap->st, &call.err);
    if (call.m.shape == HP_COLL_NONE)
        Py_RETURN_NONE;
    size = call.m.size >= 0 ? PyLong_FromLongLong(call.m.size) : Py_NewRef(Py_None);
    capacity = call.m.capacity >= 0 ? PyLong_FromLongLong(call.m.capacity) : Py_NewRef(Py_None);
    inner = call.m.inner == HP_NONE ? Py_NewRef(Py_None) : heap_handle(heap, call.m.inner);
    if (!size || !capacity || !inner) {
        Py_XDECREF(size);
        Py_XDECREF(capacity);
        Py_XDECREF(inner);
        return NULL;
    }
    return Py_BuildValue("sNNKN", shapes[call.m.shape], size, capacity, (unsigned long long)call.m.wasted, inner);
}

/* obj._corrupt(message): CorruptError(message) at the object's sub-record. */
PyObject *values_corrupt(HeapHandle *o, PyObject *message)
{
    static const int tags[] = { [HP_KIND_INSTANCE] = HP_SUB_INSTANCE_DUMP, [HP_KIND_CLASS] = HP_SUB_CLASS_DUMP,
                                [HP_KIND_OBJ_ARRAY] = HP_SUB_OBJ_ARRAY_DUMP,
                                [HP_KIND_PRIM_ARRAY] = HP_SUB_PRIM_ARRAY_DUMP };
    hp_object obj;
    hp_error err;
    const char *text = PyUnicode_AsUTF8(message);
    if (!text || !heap_index(o->heap) || heap_describe(o->heap, o->index, &obj) < 0)
        return NULL;
    hp_failf(&err, HP_E_CORRUPT, obj.offset, tags[obj.kind], 1, "%s (%s at offset %llu)", text,
             hp_subtag_name(tags[obj.kind]), (unsigned long long)obj.offset);
    return hprof_raise(o->heap->st, &err);
}

/* ---- walks over the whole heap, without the GIL ---- */

typedef struct {
    HeapIndex *heap;
    const hp_coll *coll;
    hp_coll_class_waste *rows;
    uint32_t min_count;
    hp_dup_string *dups;
    size_t n_dups;
    uint64_t min_bytes;
    uint32_t *found;        /* large arrays and their sizes */
    uint64_t *sizes;
    size_t n_found, cap_found;
    uint64_t *objects, *bytes;    /* site counts; the class histogram */
    const uint8_t *slots;         /* the class histogram: slot per heap number */
    uint32_t nslots;
    const uint64_t *keep;   /* the objects counted (NULL: all) */
    hp_waste *waste;        /* the waste kinds */
    uint64_t long_chars;
    int nomem;
    hp_error err;
    hp_code rc;
} heap_call;

/* Runs fn over the heap without the GIL (and under the heap's lock, which
 * orders it after the lazy builds); 0, or -1 with an exception set. */
static int run(HeapIndex *heap, void (*fn)(void *ctx), heap_call *call)
{
    int rc;
    call->heap = heap;
    heap_enter(heap);
    rc = heap_walk(heap, fn, call, 1);
    heap_leave(heap);
    if (rc < 0)
        return -1;
    if (call->nomem) {
        PyErr_NoMemory();
        return -1;
    }
    if (call->rc != HP_OK) {
        raise_core(heap, &call->err);
        return -1;
    }
    return heap_index(heap) ? 0 : -1;
}

static void waste(void *ctx)
{
    heap_call *c = ctx;
    c->rc = hp_coll_waste(c->coll, c->keep, c->rows, heap_interrupted, NULL, &c->err);
}

/* heap._collection_waste(): [(HeapClass, instances, empty, filled, fill sum, wasted bytes, corrupt)]
 * for every collection class with instances (hp_coll_waste). */
PyObject *values_collection_waste(HeapIndex *heap, PyObject *members)
{
    heap_call call;
    PyObject *list = NULL;
    uint32_t n, ord;
    uint64_t *keep;
    int ok;
    memset(&call, 0, sizeof call);
    if (!(call.coll = layouts(heap)))
        return NULL;
    if (!(keep = heap_keep(heap, members, &ok)) && !ok)
        return NULL;
    n = hp_heap_class_count(heap->index);
    if (!(call.rows = PyMem_RawCalloc(n ? n : 1, sizeof *call.rows))) {
        PyMem_RawFree(keep);
        return PyErr_NoMemory();
    }
    call.keep = keep;
    if (run(heap, waste, &call) == 0)
        list = PyList_New(0);
    for (ord = 0; list && ord < n; ord++) {
        const hp_coll_class_waste *r = &call.rows[ord];
        PyObject *cls, *row;
        if (r->instances == 0)
            continue;
        cls = heap_class_handle(heap, ord);
        row = cls ? Py_BuildValue("NKKKdKK", cls, (unsigned long long)r->instances, (unsigned long long)r->empty,
                                  (unsigned long long)r->filled, r->fill_sum, (unsigned long long)r->wasted,
                                  (unsigned long long)r->corrupt)
                  : NULL;
        if (!row || PyList_Append(list, row) < 0)
            Py_CLEAR(list);
        Py_XDECREF(row);
    }
    PyMem_RawFree(call.rows);
    PyMem_RawFree(keep);
    return list;
}

static void duplicates(void *ctx)
{
    heap_call *c = ctx;
    c->rc = hp_duplicate_strings(c->heap->index, c->keep, &hprof_raw_alloc, c->min_count, &c->dups, &c->n_dups,
                                 heap_interrupted, NULL, &c->err);
}

/* heap._duplicate_strings(min_count, members): [(first String, count, wasted bytes)] (hp_duplicate_strings). */
PyObject *values_duplicate_strings(HeapIndex *heap, PyObject *args)
{
    heap_call call;
    PyObject *list = NULL, *members;
    unsigned long min_count;
    size_t k;
    int ok;
    if (!PyArg_ParseTuple(args, "kU:_duplicate_strings", &min_count, &members) || !heap_index(heap))
        return NULL;
    memset(&call, 0, sizeof call);
    if (!(call.keep = heap_keep(heap, members, &ok)) && !ok)
        return NULL;
    call.min_count = min_count > 0xFFFFFFFFul ? 0xFFFFFFFFu : (uint32_t)min_count;
    if (run(heap, duplicates, &call) == 0)
        list = PyList_New((Py_ssize_t)call.n_dups);
    for (k = 0; list && k < call.n_dups; k++) {
        PyObject *first = heap_handle(heap, call.dups[k].first);
        PyObject *row = first ? Py_BuildValue("NIK", first, call.dups[k].count,
                                              (unsigned long long)call.dups[k].wasted) : NULL;
        if (!row)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, row);
    }
    PyMem_RawFree(call.dups);
    PyMem_RawFree((void *)call.keep);
    return list;
}

static void large_arrays(void *ctx)
{
    heap_call *c = ctx;
    const hp_heap *h = c->heap->index;
    uint32_t n = hp_heap_object_count(h), i;
    for (i = 0; i < n; i++) {
        if ((i & 0xFFFF) == 0 && heap_interrupted(NULL)) {
            c->rc = hp_fail(&c->err, HP_E_ABORTED, 0, -1, 0, 0, 0, "interrupted");
            return;
        }
        uint64_t size;
        if ((c->keep && !hp_bit(c->keep, i)) || hp_heap_object_kind(h, i) != HP_KIND_PRIM_ARRAY || (size = hp_heap_shallow_size(h, i)) < c->min_bytes)
            continue;
        if (c->n_found == c->cap_found) {
            size_t want = c->cap_found ? 2 * c->cap_found : 64;
            uint32_t *more = PyMem_RawRealloc(c->found, want * sizeof *more);
            uint64_t *sizes = more ? PyMem_RawRealloc(c->sizes, want * sizeof *sizes) : NULL;
            if (more)
                c->found = more;
            if (!more || !sizes) {
                c->nomem = 1;
                return;
            }
            c->sizes = sizes;
            c->cap_found = want;
        }
        c->sizes[c->n_found] = size;
        c->found[c->n_found++] = i;
    }
}

/* heap._large_arrays(min_bytes, members): [(primitive array, shallow size)] in id order. */
PyObject *values_large_arrays(HeapIndex *heap, PyObject *args)
{
    heap_call call;
    PyObject *list = NULL, *members;
    unsigned long long min_bytes;
    size_t k;
    int ok;
    if (!PyArg_ParseTuple(args, "KU:_large_arrays", &min_bytes, &members) || !heap_index(heap))
        return NULL;
    memset(&call, 0, sizeof call);
    if (!(call.keep = heap_keep(heap, members, &ok)) && !ok)
        return NULL;
    call.min_bytes = min_bytes;
    if (run(heap, large_arrays, &call) == 0)
        list = PyList_New((Py_ssize_t)call.n_found);
    for (k = 0; list && k < call.n_found; k++) {
        PyObject *arr = heap_handle(heap, call.found[k]);
        PyObject *row = arr ? Py_BuildValue("NK", arr, (unsigned long long)call.sizes[k]) : NULL;
        if (!row)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, row);
    }
    PyMem_RawFree(call.found);
    PyMem_RawFree(call.sizes);
    PyMem_RawFree((void *)call.keep);
    return list;
}

static void waste_kinds(void *ctx)
{
    heap_call *c = ctx;
    c->rc = hp_waste_find(c->heap->index, c->coll, c->keep, c->long_chars, &hprof_raw_alloc, c->waste,
                          heap_interrupted, NULL, &c->err);
}

/* One kind's items as (ids, wasted bytes): native uint64 each, largest waste first.  The
 * kind's list is freed as soon as it is copied: the copies of all the kinds and all the
 * lists are never held at once. */
static PyObject *waste_list(HeapIndex *heap, hp_waste_list *l)
{
    PyObject *ids = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(l->n * 8));
    PyObject *bytes = ids ? PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(l->n * 8)) : NULL;
    size_t k;
    if (!bytes) {
        Py_XDECREF(ids);
        return NULL;
    }
    for (k = 0; k < l->n; k++) {
        uint64_t id = hp_heap_object_id(heap->index, l->items[k].index);
        memcpy(PyBytes_AS_STRING(ids) + 8 * k, &id, 8);
        memcpy(PyBytes_AS_STRING(bytes) + 8 * k, &l->items[k].wasted, 8);
    }
    PyMem_RawFree(l->items);
    l->items = NULL;
    l->n = l->cap = 0;
    return Py_BuildValue("NN", ids, bytes);
}

/* heap._waste(members, long_string_chars): (total, duplicate boxes, their bytes, [(ids, wasted)] per
 * kind in hp_waste.h's order) (hp_waste_find). */
PyObject *values_waste(HeapIndex *heap, PyObject *args)
{
    heap_call call;
    hp_waste w;
    PyObject *members, *kinds = NULL, *out = NULL;
    unsigned long long long_chars;
    int ok, k;
    if (!PyArg_ParseTuple(args, "UK:_waste", &members, &long_chars) || !heap_index(heap))
        return NULL;
    memset(&call, 0, sizeof call);
    memset(&w, 0, sizeof w);
    if (!(call.coll = layouts(heap)))
        return NULL;
    if (!(call.keep = heap_keep(heap, members, &ok)) && !ok)
        return NULL;
    call.waste = &w;
    call.long_chars = long_chars;
    if (run(heap, waste_kinds, &call) == 0 && (kinds = PyList_New(HP_WASTE_KINDS)))
        for (k = 0; k < HP_WASTE_KINDS; k++) {
            PyObject *row = waste_list(heap, &w.kinds[k]);
            if (!row) {
                Py_CLEAR(kinds);
                break;
            }
            PyList_SET_ITEM(kinds, k, row);
        }
    if (kinds)
        out = Py_BuildValue("KKKN", (unsigned long long)w.total, (unsigned long long)w.duplicate_boxes,
                            (unsigned long long)w.duplicate_box_bytes, kinds);
    hp_waste_free(&w, &hprof_raw_alloc);
    PyMem_RawFree((void *)call.keep);
    return out;
}

static void class_histogram(void *ctx)
{
    heap_call *c = ctx;
    c->rc = hp_heap_class_histogram(c->heap->index, c->keep, c->slots, c->nslots, c->objects, c->bytes,
                                    heap_interrupted, NULL, &c->err);
}

/* heap._class_histogram(members, slots): (instances, shallow bytes) as native uint64 per class
 * ordinal (then per primitive type without a class: hp_histogram.h) and heap slot
 * (row * nslots + slot), over the objects `members` counts.  slots: None
 * (one slot), or 257 bytes giving the slot of each Android heap number and, last, of no heap. */
PyObject *values_class_histogram(HeapIndex *heap, PyObject *args)
{
    heap_call call;
    PyObject *members, *slots, *parts[2] = { NULL, NULL }, *out = NULL;
    Py_buffer view = { 0 };
    Py_ssize_t entries, k;
    int ok;
    if (!PyArg_ParseTuple(args, "UO:_class_histogram", &members, &slots) || !heap_index(heap))
        return NULL;
    memset(&call, 0, sizeof call);
    call.nslots = 1;
    if (slots != Py_None) {
        if (PyObject_GetBuffer(slots, &view, PyBUF_SIMPLE) < 0)
            return NULL;
        if (view.len != 257) {
            PyErr_SetString(PyExc_ValueError, "slots must be 257 bytes");
            goto done;
        }
        call.slots = view.buf;
        for (k = 0; k < 257; k++)
            if (call.slots[k] >= call.nslots)
                call.nslots = call.slots[k] + 1u;
    }
    if (!(call.keep = heap_keep(heap, members, &ok)) && !ok)
        goto done;
    entries = ((Py_ssize_t)hp_heap_class_count(heap->index) + HP_HISTOGRAM_TYPE_ROWS) * call.nslots;
    for (k = 0; k < 2; k++) {
        if (!(parts[k] = PyBytes_FromStringAndSize(NULL, entries * 8)))
            goto done;
        memset(PyBytes_AS_STRING(parts[k]), 0, (size_t)entries * 8);
    }
    call.objects = (uint64_t *)PyBytes_AS_STRING(parts[0]);
    call.bytes = (uint64_t *)PyBytes_AS_STRING(parts[1]);
    if (run(heap, class_histogram, &call) == 0)
        out = PyTuple_Pack(2, parts[0], parts[1]);
done:
    Py_XDECREF(parts[0]);
    Py_XDECREF(parts[1]);
    PyMem_RawFree((void *)call.keep);
    if (view.obj)
        PyBuffer_Release(&view);
    return out;
}

/* ---- stack traces and allocation sites ---- */

/* The frames of trace `serial` as a list of StackFrame (class, method,
 * signature, source, line), the way GcRoot.frame gives one. */
static PyObject *trace_frames(HeapIndex *heap, uint32_t serial)
{
    uint32_t frames, k;
    PyObject *list;
    heap_trace_read call;
    call.serial = serial;
    if (heap_read_trace(heap, &call) < 0)
        return NULL;
    frames = call.found ? call.frames : 0;
    list = PyList_New(frames);
    for (k = 0; list && k < frames; k++) {
        PyObject *frame = heap_trace_frame(heap, serial, k);
        if (!frame)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, frame);
    }
    return list;
}

/* heap._threads(): [(thread serial, thread object or None, object id, trace serial, [StackFrame])]
 * for every ROOT_THREAD_OBJECT, in file order. */
PyObject *values_threads(HeapIndex *heap, PyObject *unused)
{
    const hp_heap *h = heap_index(heap);
    uint32_t n, i;
    PyObject *list;
    (void)unused;
    if (!h)
        return NULL;
    n = hp_heap_root_count(h);
    list = PyList_New(0);
    for (i = 0; list && i < n; i++) {
        hp_root r;
        uint32_t trace;
        PyObject *obj, *frames, *row;
        hp_heap_root(h, i, &r);
        if (r.kind != HP_SUB_ROOT_THREAD_OBJECT)
            continue;
        trace = hp_heap_thread_trace(h, r.thread_serial);
        obj = r.index == HP_NONE ? Py_NewRef(Py_None) : heap_handle(heap, r.index);
        frames = trace_frames(heap, trace);
        row = obj && frames ? Py_BuildValue("INKIN", r.thread_serial, obj, (unsigned long long)r.id, trace, frames)
                            : NULL;
        if (!row) {
            Py_XDECREF(obj);
            Py_XDECREF(frames);
        }
        if (!row || PyList_Append(list, row) < 0)
            Py_CLEAR(list);
        Py_XDECREF(row);
    }
    return list;
}

/* heap._trace(serial): (thread serial, [StackFrame]) of STACK_TRACE `serial`, or None. */
PyObject *values_trace(HeapIndex *heap, PyObject *arg)
{
    unsigned long serial = PyLong_AsUnsignedLong(arg);
    heap_trace_read call;
    if (serial == (unsigned long)-1 && PyErr_Occurred())
        return NULL;
    if (!heap_index(heap))
        return NULL;
    call.serial = serial > 0xFFFFFFFFul ? 0 : (uint32_t)serial;
    if (heap_read_trace(heap, &call) < 0)
        return NULL;
    if (!call.found)
        Py_RETURN_NONE;
    return Py_BuildValue("IN", call.thread_serial, trace_frames(heap, call.serial));
}

static void site_counts(void *ctx)
{
    heap_call *c = ctx;
    c->rc = hp_heap_site_counts(c->heap->index, c->objects, c->bytes, heap_interrupted, NULL, &c->err);
}

/* heap._site_counts(): [(trace serial, objects, bytes)] of the traces objects were allocated
 * at (serial 0: objects naming no trace of the dump). */
PyObject *values_site_counts(HeapIndex *heap, PyObject *unused)
{
    heap_call call;
    PyObject *list = NULL;
    size_t n, k;
    (void)unused;
    if (!heap_index(heap))
        return NULL;
    memset(&call, 0, sizeof call);
    n = hp_heap_trace_count(heap->index);
    call.objects = PyMem_RawCalloc(n + 1, sizeof *call.objects);
    call.bytes = PyMem_RawCalloc(n + 1, sizeof *call.bytes);
    if (!call.objects || !call.bytes) {
        PyMem_RawFree(call.objects);
        PyMem_RawFree(call.bytes);
        return PyErr_NoMemory();
    }
    if (run(heap, site_counts, &call) == 0)
        list = PyList_New(0);
    for (k = 0; list && k <= n; k++) {
        PyObject *row;
        if (call.objects[k] == 0)
            continue;
        row = Py_BuildValue("IKK", k < n ? hp_heap_trace_serial(heap->index, k) : 0,
                            (unsigned long long)call.objects[k], (unsigned long long)call.bytes[k]);
        if (!row || PyList_Append(list, row) < 0)
            Py_CLEAR(list);
        Py_XDECREF(row);
    }
    PyMem_RawFree(call.objects);
    PyMem_RawFree(call.bytes);
    return list;
}

typedef struct {
    hp_alloc_sites *records;
    hp_alloc_site *sites;
    size_t n, cap;
    int nomem;
    const hp_heap *h;
    hp_error err;
    hp_code rc;
} sites_call;

static int add_site(void *ctx, const hp_alloc_sites *record, const hp_alloc_site *site)
{
    sites_call *c = ctx;
    if (c->n == c->cap) {
        size_t want = c->cap ? 2 * c->cap : 64;
        hp_alloc_sites *r = PyMem_RawRealloc(c->records, want * sizeof *r);
        hp_alloc_site *s = r ? PyMem_RawRealloc(c->sites, want * sizeof *s) : NULL;
        if (r)
            c->records = r;
        if (!r || !s)
            return c->nomem = 1;
        c->sites = s;
        c->cap = want;
    }
    c->records[c->n] = *record;
    c->sites[c->n++] = *site;
    return 0;
}

static void alloc_sites(void *ctx)
{
    sites_call *c = ctx;
    c->rc = hp_heap_alloc_sites(c->h, add_site, c, &c->err);
}

/* heap._alloc_sites(): one tuple per site of every ALLOC_SITES record: (record offset, flags,
 * cutoff, live bytes, live instances, bytes allocated, instances allocated, array type, class
 * serial, trace serial, site live bytes, site live instances, site bytes allocated, site
 * instances allocated, class name or None). */
PyObject *values_alloc_sites(HeapIndex *heap, PyObject *unused)
{
    sites_call call;
    PyObject *list = NULL;
    size_t k;
    (void)unused;
    if (!heap_index(heap))
        return NULL;
    memset(&call, 0, sizeof call);
    call.h = heap->index;
    if (heap_guard(heap, alloc_sites, &call) == 0) {
        if (call.nomem)
            PyErr_NoMemory();
        else if (call.rc != HP_OK)
            raise_core(heap, &call.err);
        else
            list = PyList_New((Py_ssize_t)call.n);
    }
    for (k = 0; list && k < call.n; k++) {
        const hp_alloc_sites *r = &call.records[k];
        const hp_alloc_site *s = &call.sites[k];
        uint32_t ord = hp_heap_class_by_serial(heap->index, s->class_serial);
        PyObject *name = ord == HP_NONE ? Py_None : heap_class_name(heap, ord);
        float cutoff;
        PyObject *row;
        memcpy(&cutoff, &r->cutoff_bits, 4);
        row = name ? Py_BuildValue("KHdIIKKBIIIIIIO", (unsigned long long)r->offset, r->flags, (double)cutoff,
                                   r->live_bytes, r->live_instances, (unsigned long long)r->bytes_allocated,
                                   (unsigned long long)r->instances_allocated, s->array_type, s->class_serial,
                                   s->trace_serial, s->live_bytes, s->live_instances, s->bytes_allocated,
                                   s->instances_allocated, name)
                   : NULL;
        if (!row)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, row);
    }
    PyMem_RawFree(call.records);
    PyMem_RawFree(call.sites);
    return list;
}
