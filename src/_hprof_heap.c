/* Heap: the heap index of a dump (hp_heap) as a Python object, with the
 * look-ups of the heap graph API: classes by name, objects by id, GC roots.
 * It is the base type of hprofkit.Heap, whose methods written in Python
 * (paths, leaks, tables) call the private ones here (_paths, _columns).
 *
 * Long core calls (the build, the referrer index, the dangling count) run
 * without the GIL and check for Ctrl-C every few megabytes; a lock makes
 * the lazy ones build once when several threads ask at the same time. */
#include "_hprof_heap.h"
#include "_hprof_parts.h"

#include <string.h>

/* The long walks over the dump run under the SIGBUS guard (_hprof.h): the
 * buffer is a mapping, and the file may shrink under them. */
typedef struct {
    const HeapIndex *heap;
    const hp_heap_options *opt;
    hp_heap *index;
    uint64_t dangling;
    int stopped;
    hp_error err;
    hp_code rc;
} heap_call;

static void build_index(void *ctx)
{
    heap_call *c = ctx;
    c->rc = hp_heap_build(c->heap->view.buf, (uint64_t)c->heap->view.len, c->opt, &c->index, &c->err);
}

static void count_dangling(void *ctx)
{
    heap_call *c = ctx;
    c->dangling = hp_heap_count_dangling(c->heap->index, heap_interrupted, NULL, &c->stopped);
}

/* The index build's interrupt callback when a progress callable was given:
 * it tells the callable how far the walk over the records is (bytes of the
 * file), then checks for Ctrl-C.  An exception in either stops the build. */
typedef struct {
    PyObject *progress;
    uint64_t position, total, told;
} build_progress;

static int tell_progress(void *ctx)
{
    build_progress *p = ctx;
    PyObject *res;
    if (p->position > p->told) {
        p->told = p->position;
        res = PyObject_CallFunction(p->progress, "KK", (unsigned long long)p->told, (unsigned long long)p->total);
        if (!res)
            return -1;
        Py_DECREF(res);
    }
    return PyErr_CheckSignals();
}

static int build_interrupted(void *ctx)
{
    return hprof_with_python(tell_progress, ctx) < 0;
}

/* The size models by HP_SIZES_* number. */
static const char *const size_model_names[] = { "visualvm", "uncompressed", "jvm" };

/* The size model named `name`; None (or none given) is the semantics' own:
 * the JVM's layout under hprofkit's, VisualVM's under VisualVM's. */
static int size_model_of(PyObject *name, int semantics)
{
    int k;
    if (name == NULL || name == Py_None)
        return semantics == HP_REACH_VISUALVM ? HP_SIZES_VISUALVM : HP_SIZES_JVM;
    for (k = 0; k < 3; k++)
        if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, size_model_names[k]) == 0)
            return k;
    PyErr_SetString(PyExc_ValueError, "size_model must be None, 'jvm', 'visualvm' or 'uncompressed'");
    return -1;
}

static PyObject *heap_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "", "heap_dump", "size_model", "semantics", "mapping", "progress", NULL };
    PyObject *buffer, *model_name = NULL, *semantics_name = NULL, *mapping = Py_None, *progress = Py_None;
    build_progress told;
    Py_ssize_t heap_dump = 0;
    hprof_state *st = hprof_state_of_type(type);
    hp_heap_options opt;
    heap_call call;
    HeapIndex *heap;
    int model, semantics;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$nOUOO:Heap", keywords, &buffer, &heap_dump, &model_name,
                                     &semantics_name, &mapping, &progress))
        return NULL;
    if (progress != Py_None && !PyCallable_Check(progress)) {
        PyErr_SetString(PyExc_TypeError, "progress must be a callable progress(done, total) or None");
        return NULL;
    }
    if ((semantics = heap_semantics_of(semantics_name)) < 0 || (model = size_model_of(model_name, semantics)) < 0)
        return NULL;
    if (heap_dump < 0 || heap_dump > 0xFFFFFFFF) {
        PyErr_SetString(PyExc_ValueError, "heap_dump must be a heap dump number (0 for the first)");
        return NULL;
    }
    heap = (HeapIndex *)type->tp_alloc(type, 0);
    if (!heap)
        return NULL;
    heap->dangling = -1;
    heap->semantics = semantics;
    heap->st = st;
    heap->module = Py_NewRef(hprof_module_of_type(type));
    heap->lock = PyThread_allocate_lock();
    if (!heap->lock) {
        Py_DECREF(heap);
        return PyErr_NoMemory();
    }
    heap_live_add(heap);
    if (PyObject_GetBuffer(buffer, &heap->view, PyBUF_SIMPLE) < 0) {
        Py_DECREF(heap);
        return NULL;
    }
    heap->has_view = 1;
    memset(&opt, 0, sizeof opt);
    opt.alloc = &hprof_raw_alloc;
    opt.heap_dump = (uint32_t)heap_dump;
    opt.size_model = model;
    opt.interrupt = heap_interrupted;
    if (progress != Py_None) {
        memset(&told, 0, sizeof told);
        told.progress = progress;
        told.total = (uint64_t)heap->view.len;
        opt.interrupt = build_interrupted;
        opt.interrupt_ctx = &told;
        opt.position = &told.position;
    }
    memset(&call, 0, sizeof call);
    call.heap = heap;
    call.opt = &opt;
    if (heap_walk(heap, build_index, &call, 0) < 0) {
        Py_DECREF(heap);
        return NULL;
    }
    if (call.rc != HP_OK) {
        if (!PyErr_Occurred())
            hprof_raise(st, &call.err); /* NoHeapDumpError for a heap dump the file lacks */
        Py_DECREF(heap);
        return NULL;
    }
    heap->index = call.index;
    if (mapping != Py_None && heap_apply_mapping(heap, mapping) < 0) {
        Py_DECREF(heap);
        return NULL;
    }
    return (PyObject *)heap;
}

static int heap_traverse(HeapIndex *heap, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(heap));
    Py_VISIT(heap->names);
    Py_VISIT(heap->by_name);
    Py_VISIT(heap->classes);
    Py_VISIT(heap->field_maps);
    Py_VISIT(heap->slot_names);
    Py_VISIT(heap->module);
    Py_VISIT(heap->mapping);
    return 0;
}

static int heap_clear(HeapIndex *heap)
{
    Py_CLEAR(heap->names);
    Py_CLEAR(heap->by_name);
    Py_CLEAR(heap->classes);
    Py_CLEAR(heap->field_maps);
    Py_CLEAR(heap->slot_names);
    Py_CLEAR(heap->module);
    Py_CLEAR(heap->mapping);
    return 0;
}

static void heap_dealloc(HeapIndex *heap)
{
    PyTypeObject *type = Py_TYPE(heap);
    PyObject_GC_UnTrack(heap);
    heap_clear(heap);
    heap_release(heap);
    heap_live_remove(heap);
    if (heap->lock)
        PyThread_free_lock(heap->lock);
    type->tp_free((PyObject *)heap);
    Py_DECREF(type);
}

/* ---- classes by name ------------------------------------------------------ */

static int load_by_name(HeapIndex *heap, const hp_heap *index)
{
    uint32_t i, n = hp_heap_class_count(index);
    PyObject *d, *names;
    if (heap->by_name)
        return 0;
    if (!(names = heap_class_names(heap)) || !(d = PyDict_New()))
        return -1;
    for (i = 0; i < n; i++) {
        PyObject *name = PyList_GET_ITEM(names, i), *list = PyDict_GetItemWithError(d, name), *ord;
        if ((i & 4095) == 4095 && PyErr_CheckSignals() < 0) {
            Py_DECREF(d);
            return -1;
        }
        if (!list) {
            if (PyErr_Occurred() || !(list = PyList_New(0)) || PyDict_SetItem(d, name, list) < 0) {
                Py_XDECREF(list);
                Py_DECREF(d);
                return -1;
            }
            Py_DECREF(list); /* the dict holds it */
        }
        ord = PyLong_FromUnsignedLong(i);
        if (!ord || PyList_Append(list, ord) < 0) {
            Py_XDECREF(ord);
            Py_DECREF(d);
            return -1;
        }
        Py_DECREF(ord);
    }
    heap->by_name = d;
    return 0;
}

/* ---- API ---------------------------------------------------------------- */

static PyObject *heap_find_class(HeapIndex *heap, PyObject *name)
{
    const hp_heap *index = heap_index(heap);
    PyObject *list;
    if (!index)
        return NULL;
    if (!PyUnicode_Check(name)) {
        PyErr_SetString(PyExc_TypeError, "a class name must be a str");
        return NULL;
    }
    if (load_by_name(heap, index) < 0)
        return NULL;
    list = PyDict_GetItemWithError(heap->by_name, name);
    if (!list)
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    return heap_class_handle(heap, (uint32_t)PyLong_AsUnsignedLong(PyList_GET_ITEM(list, 0)));
}

static PyObject *heap_classes_named(HeapIndex *heap, PyObject *name)
{
    const hp_heap *index = heap_index(heap);
    PyObject *list, *out;
    Py_ssize_t i;
    if (!index)
        return NULL;
    if (!PyUnicode_Check(name)) {
        PyErr_SetString(PyExc_TypeError, "a class name must be a str");
        return NULL;
    }
    if (load_by_name(heap, index) < 0)
        return NULL;
    list = PyDict_GetItemWithError(heap->by_name, name);
    if (!list)
        return PyErr_Occurred() ? NULL : PyList_New(0);
    out = PyList_New(PyList_GET_SIZE(list));
    for (i = 0; out && i < PyList_GET_SIZE(list); i++) {
        PyObject *c = heap_class_handle(heap, (uint32_t)PyLong_AsUnsignedLong(PyList_GET_ITEM(list, i)));
        if (!c) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, c);
    }
    return out;
}

static PyObject *heap_get_classes(HeapIndex *heap, void *closure)
{
    const hp_heap *index = heap_index(heap);
    PyObject *first;
    (void)closure;
    if (!index)
        return NULL;
    if (hp_heap_class_count(index) == 0)
        return PyList_New(0);
    first = heap_class_handle(heap, 0); /* fills the cache */
    if (!first)
        return NULL;
    Py_DECREF(first);
    return PyList_GetSlice(heap->classes, 0, PY_SSIZE_T_MAX);
}

static PyObject *heap_object(HeapIndex *heap, PyObject *arg)
{
    const hp_heap *index = heap_index(heap);
    unsigned long long id;
    uint32_t i;
    if (!index)
        return NULL;
    id = PyLong_AsUnsignedLongLong(arg);
    if (id == (unsigned long long)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError) || PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            if (!PyLong_Check(arg)) {
                PyErr_SetString(PyExc_TypeError, "an object id must be an int");
                return NULL;
            }
            PyErr_SetObject(PyExc_KeyError, arg);
        }
        return NULL;
    }
    i = hp_heap_find(index, id);
    if (i == HP_NONE) {
        PyErr_SetObject(PyExc_KeyError, arg);
        return NULL;
    }
    return heap_handle(heap, i);
}

static PyObject *heap_objects(HeapIndex *heap, PyObject *unused)
{
    (void)unused;
    return heap_index(heap) ? heap_iter_new(heap, HP_NONE, NULL) : NULL;
}

/* Ensures the lazy dangling count exists. */
static PyObject *heap_get_dangling(HeapIndex *heap, void *closure)
{
    heap_call call;
    int rc;
    (void)closure;
    if (!heap_index(heap))
        return NULL;
    if (heap->dangling >= 0)
        return PyLong_FromLongLong(heap->dangling);
    memset(&call, 0, sizeof call);
    call.heap = heap;
    heap_enter(heap);
    rc = heap_walk(heap, count_dangling, &call, 1);
    heap_leave(heap);
    if (rc < 0 || call.stopped)
        return NULL;
    heap->dangling = (long long)call.dangling;
    return PyLong_FromLongLong(heap->dangling);
}

static PyObject *heap_gc_root(HeapIndex *heap, const hp_heap *index, uint32_t i)
{
    hp_root r;
    PyObject *item = PyStructSequence_New(heap->st->gc_root_type);
    PyObject *values[5];
    int k;
    if (!item)
        return NULL;
    hp_heap_root(index, i, &r);
    values[0] = heap_root_kind(r.kind);
    values[1] = PyLong_FromUnsignedLongLong(r.id);
    values[2] = r.index == HP_NONE ? Py_NewRef(Py_None) : heap_handle(heap, r.index);
    values[3] = r.thread_serial || r.kind == HP_SUB_ROOT_THREAD_OBJECT || r.frame >= 0 ||
                        r.kind == HP_SUB_ROOT_NATIVE_STACK || r.kind == HP_SUB_ROOT_THREAD_BLOCK ||
                        r.kind == HP_SUB_ROOT_JNI_MONITOR
                    ? PyLong_FromUnsignedLong(r.thread_serial) : Py_NewRef(Py_None);
    values[4] = heap_stack_frame(heap, &r);
    for (k = 0; k < 5; k++) {
        if (!values[k]) {
            for (; k < 5; k++)
                Py_XDECREF(values[k]);
            Py_DECREF(item);
            return NULL;
        }
        PyStructSequence_SET_ITEM(item, k, values[k]);
    }
    return item;
}

/* heap._gc_roots(start, stop, kind=None): GcRoots [start, stop) in file
 * order, only those of `kind` when given; hprofkit.Heap.gc_roots is a
 * sequence over it, so five million roots are not five million tuples. */
static PyObject *heap_gc_roots(HeapIndex *heap, PyObject *args)
{
    const hp_heap *index = heap_index(heap);
    Py_ssize_t start, stop;
    const char *kind = NULL;
    uint32_t n, i;
    PyObject *list;
    if (!index || !PyArg_ParseTuple(args, "nn|z:_gc_roots", &start, &stop, &kind))
        return NULL;
    n = hp_heap_root_count(index);
    start = start < 0 ? 0 : start > (Py_ssize_t)n ? (Py_ssize_t)n : start;
    stop = stop < start ? start : stop > (Py_ssize_t)n ? (Py_ssize_t)n : stop;
    list = PyList_New(0);
    for (i = (uint32_t)start; list && i < (uint32_t)stop; i++) {
        PyObject *item;
        if (kind) {
            hp_root r;
            hp_heap_root(index, i, &r);
            if (strcmp(heap_root_kind_name(r.kind), kind) != 0)
                continue;
        }
        item = heap_gc_root(heap, index, i);
        if (!item || PyList_Append(list, item) < 0)
            Py_CLEAR(list);
        Py_XDECREF(item);
    }
    return list;
}

enum { G_ROOTS, G_OBJECTS, G_CLASSES_N, G_DUPLICATES, G_DUMPS, G_ID_SIZE, G_MEMORY, G_OOP, G_MODEL, G_CLOSED, G_SEMANTICS };

static PyObject *heap_get(HeapIndex *heap, void *closure)
{
    int what = (int)(intptr_t)closure;
    const hp_heap *index;
    if (what == G_CLOSED)
        return PyBool_FromLong(!heap->index || heap->closing);
    if (what == G_SEMANTICS)
        return heap_semantics_name(heap);
    if (!(index = heap_index(heap)))
        return NULL;
    switch (what) {
    case G_OBJECTS: return PyLong_FromUnsignedLong(hp_heap_object_count(index));
    case G_ROOTS: return PyLong_FromUnsignedLong(hp_heap_root_count(index));
    case G_CLASSES_N: return PyLong_FromUnsignedLong(hp_heap_class_count(index));
    case G_DUPLICATES: return PyLong_FromUnsignedLongLong(hp_heap_duplicate_count(index));
    case G_DUMPS: return PyLong_FromUnsignedLong(hp_heap_dump_count(index));
    case G_ID_SIZE: return PyLong_FromLong(hp_heap_id_size(index));
    case G_MEMORY: return PyLong_FromUnsignedLongLong(hp_heap_memory(index));
    case G_OOP: return PyLong_FromLong(hp_heap_size_model(index)->oop_size);
    default: Py_RETURN_NONE;
    }
}

/* What heap.layout shows (hprofkit._heap.Layout): the model's name, its
 * parameters, and what they rest on. */
static PyObject *heap_layout(HeapIndex *heap, PyObject *unused)
{
    const hp_heap *index = heap_index(heap);
    const hp_size_model *m;
    const hp_layout_evidence *ev;
    (void)unused;
    if (!index)
        return NULL;
    m = hp_heap_size_model(index);
    ev = hp_heap_layout_evidence(index);
    return Py_BuildValue("siiiiiiiiiKKKKK", size_model_names[hp_heap_size_model_kind(index)], hp_heap_id_size(index),
                         m->min_instance, m->oop_size, m->array_base, m->array_base_wide, m->align, m->mirror_base,
                         m->raw, ev->inferred, (unsigned long long)ev->gaps, (unsigned long long)ev->fits,
                         (unsigned long long)ev->fallback_fits, (unsigned long long)ev->mirror_gaps,
                         (unsigned long long)ev->mirror_fits);
}

static PyObject *heap_close(HeapIndex *heap, PyObject *unused)
{
    (void)unused;
    if (heap->busy > 0)
        heap->closing = 1; /* freed when the last user leaves */
    else
        heap_release(heap);
    Py_CLEAR(heap->classes);
    Py_CLEAR(heap->field_maps);
    Py_CLEAR(heap->slot_names);
    Py_RETURN_NONE;
}

static PyObject *heap_enter_ctx(HeapIndex *heap, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(heap);
}

static PyObject *heap_exit_ctx(HeapIndex *heap, PyObject *args)
{
    (void)args;
    return heap_close(heap, NULL);
}

static PyObject *heap_repr(HeapIndex *heap)
{
    if (!heap->index || heap->closing)
        return PyUnicode_FromString("<hprofkit.Heap closed>");
    return PyUnicode_FromFormat("<hprofkit.Heap %u objects, %u classes>", hp_heap_object_count(heap->index),
                                hp_heap_class_count(heap->index));
}

#define GET(name, code, doc) { name, (getter)heap_get, NULL, doc, (void *)(intptr_t)code }

static PyGetSetDef heap_getset[] = {
    GET("object_count", G_OBJECTS, "Objects in the heap dump: instances, arrays and class objects."),
    GET("class_count", G_CLASSES_N, "Classes (CLASS_DUMP records) in the heap dump."),
    GET("duplicate_count", G_DUPLICATES, "Objects dropped because an earlier one had the same id."),
    GET("heap_dump_count", G_DUMPS, "Heap dumps in the file (heap_dump= picks one)."),
    GET("id_size", G_ID_SIZE, "Identifier size of the dump (4 or 8)."),
    GET("memory", G_MEMORY, "Bytes of memory the index holds."),
    GET("reference_size", G_OOP, "Bytes of a reference under the size model (4 with compressed oops)."),
    GET("closed", G_CLOSED, "Whether close() was called."),
    GET("gc_root_count", G_ROOTS, "GC root records of the heap dump: len(heap.gc_roots)."),
    GET("semantics", G_SEMANTICS, "The reference graph of paths and retained sizes: 'hprofkit' or 'visualvm'."),
    { "dangling_count", (getter)heap_get_dangling, NULL,
      "References to ids absent from the dump (counted on first use).", NULL },
    { "classes", (getter)heap_get_classes, NULL, "Every HeapClass, in id order.", NULL },
    HEAP_NAMES_GETSET
    { NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef heap_methods[] = {
    { "_gc_roots", (PyCFunction)heap_gc_roots, METH_VARARGS,
      "_gc_roots($self, start, stop, kind=None, /)\n--\n\nGcRoots start..stop (of one kind): behind heap.gc_roots." },
    { "find_class", (PyCFunction)heap_find_class, METH_O,
      "find_class($self, name, /)\n--\n\nThe HeapClass named `name` ('java.lang.String', 'int[]'), or None.\n"
      "With several classes of that name (class loaders), the one of lowest id." },
    { "classes_named", (PyCFunction)heap_classes_named, METH_O,
      "classes_named($self, name, /)\n--\n\nEvery HeapClass named `name` (a list)." },
    { "object", (PyCFunction)heap_object, METH_O,
      "object($self, id, /)\n--\n\nThe HeapObject of that id; KeyError if the dump has none." },
    { "objects", (PyCFunction)heap_objects, METH_NOARGS,
      "objects($self, /)\n--\n\nIterate over every object, in id order." },
    HEAP_REACH_METHODS
    HEAP_TREE_METHODS
    HEAP_CLASSTREE_METHODS
    HEAP_TABLE_METHODS
    HEAP_VALUES_METHODS
    HEAP_NAMES_METHODS
    { "_layout", (PyCFunction)heap_layout, METH_NOARGS,
      "_layout($self, /)\n--\n\n(size model, id size, header, reference size, array base, wide array base,\n"
      "alignment, mirror base, raw, inferred, gaps, gaps fitting, gaps VisualVM's guess fits, gaps after\n"
      "class objects, of them fitting): behind heap.layout." },
    { "close", (PyCFunction)heap_close, METH_NOARGS,
      "close($self, /)\n--\n\nFrees the index; handles on it raise ValueError afterwards." },
    { "__enter__", (PyCFunction)heap_enter_ctx, METH_NOARGS, NULL },
    { "__exit__", (PyCFunction)heap_exit_ctx, METH_VARARGS, NULL },
    { NULL, NULL, 0, NULL },
};

static PyType_Slot heap_slots[] = {
    { Py_tp_doc, "Heap(buffer, /, *, heap_dump=0, size_model=None, semantics='hprofkit', mapping=None, "
                 "progress=None)\n--\n\n"
                 "The object graph of one heap dump of the HPROF file in buffer; with a mapping (a\n"
                 "hprofkit.Mapping), read with its clear names; progress(done, total) is told how many\n"
                 "bytes of it the index build has walked." },
    { Py_tp_new, heap_new },
    { Py_tp_getset, heap_getset },
    { Py_tp_methods, heap_methods },
    { Py_tp_repr, heap_repr },
    { Py_tp_traverse, heap_traverse },
    { Py_tp_clear, heap_clear },
    { Py_tp_dealloc, heap_dealloc },
    { 0, NULL },
};

static PyType_Spec heap_spec = {
    "hprofkit._hprof.Heap", sizeof(HeapIndex), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE, heap_slots,
};

/* ---- record types --------------------------------------------------------- */

static PyStructSequence_Field reference_fields[] = {
    { "name", "field name, '[i]' for an array element, the static's name, or '<loader>'" },
    { "target_id", "id of the object referenced" },
    { "target", "its HeapObject, or None when the dump lacks it" },
    { NULL, NULL },
};
static PyStructSequence_Desc reference_desc = { "hprofkit.Reference", "An outbound reference.", reference_fields, 3 };

static PyStructSequence_Field referrer_fields[] = {
    { "name", "the referencing field, '[i]', static name or '<loader>'" },
    { "source_id", "id of the referencing object" },
    { "source", "its HeapObject" },
    { NULL, NULL },
};
static PyStructSequence_Desc referrer_desc = { "hprofkit.Referrer", "An inbound reference.", referrer_fields, 3 };

static PyStructSequence_Field field_fields[] = {
    { "declaring_class", "the HeapClass declaring the field" },
    { "name", "field name" },
    { "type", "'object', 'boolean', 'char', 'float', 'double', 'byte', 'short', 'int' or 'long'" },
    { "value", "bool, int, float, 1-char str, HeapObject or None" },
    { NULL, NULL },
};
static PyStructSequence_Desc field_desc = { "hprofkit.Field", "A field and its value.", field_fields, 4 };

static PyStructSequence_Field gc_root_fields[] = {
    { "kind", "'JNI_GLOBAL', 'JAVA_FRAME', 'STICKY_CLASS', 'THREAD_OBJECT'..." },
    { "object_id", "id of the object held" },
    { "object", "its HeapObject, or None when the dump lacks it" },
    { "thread_serial", "the thread's serial number, or None" },
    { "frame", "StackFrame for JAVA_FRAME and JNI_LOCAL roots, else None" },
    { NULL, NULL },
};
static PyStructSequence_Desc gc_root_desc = { "hprofkit.GcRoot", "A GC root.", gc_root_fields, 5 };

static PyStructSequence_Field stack_frame_fields[] = {
    { "depth", "frame number in the thread's stack trace (0 = top)" },
    { "class_name", "the method's class, or None" },
    { "method", "method name, or None" },
    { "signature", "method signature, or None" },
    { "source", "source file, or None" },
    { "line", "line number (> 0), -1 unknown, -2 compiled, -3 native; None if unknown" },
    { NULL, NULL },
};
static PyStructSequence_Desc stack_frame_desc = { "hprofkit.StackFrame", "A stack frame of a GC root.",
                                                  stack_frame_fields, 6 };

/* Registers heap_after_fork with os.register_at_fork (where there is one). */
static int register_after_fork(PyObject *module)
{
    static PyMethodDef def = { "_heaps_after_fork", heap_after_fork, METH_NOARGS, NULL };
    PyObject *os = PyImport_ImportModule("os"), *reg = NULL, *fn = NULL, *kwargs = NULL, *empty = NULL, *done = NULL;
    if (os && !PyObject_HasAttrString(os, "register_at_fork")) {
        Py_DECREF(os);
        return 0;
    }
    if (os && (reg = PyObject_GetAttrString(os, "register_at_fork")) && (fn = PyCFunction_NewEx(&def, module, NULL)) &&
        (kwargs = Py_BuildValue("{s:O}", "after_in_child", fn)) && (empty = PyTuple_New(0)))
        done = PyObject_Call(reg, empty, kwargs);
    Py_XDECREF(os);
    Py_XDECREF(reg);
    Py_XDECREF(fn);
    Py_XDECREF(kwargs);
    Py_XDECREF(empty);
    Py_XDECREF(done);
    return done ? 0 : -1;
}

int hprof_heap_init(PyObject *module, hprof_state *st)
{
    PyObject *type;
    if (register_after_fork(module) < 0 || !(type = PyType_FromModuleAndSpec(module, &heap_spec, NULL)))
        return -1;
    st->heap_type = (PyTypeObject *)type;
    if (PyModule_AddObjectRef(module, "Heap", type) < 0)
        return -1;
    st->reference_type = PyStructSequence_NewType(&reference_desc);
    st->referrer_type = PyStructSequence_NewType(&referrer_desc);
    st->field_type = PyStructSequence_NewType(&field_desc);
    st->gc_root_type = PyStructSequence_NewType(&gc_root_desc);
    st->stack_frame_type = PyStructSequence_NewType(&stack_frame_desc);
    if (!st->reference_type || !st->referrer_type || !st->field_type || !st->gc_root_type || !st->stack_frame_type)
        return -1;
    if (PyModule_AddObjectRef(module, "Reference", (PyObject *)st->reference_type) < 0 ||
        PyModule_AddObjectRef(module, "Referrer", (PyObject *)st->referrer_type) < 0 ||
        PyModule_AddObjectRef(module, "Field", (PyObject *)st->field_type) < 0 ||
        PyModule_AddObjectRef(module, "GcRoot", (PyObject *)st->gc_root_type) < 0 ||
        PyModule_AddObjectRef(module, "StackFrame", (PyObject *)st->stack_frame_type) < 0)
        return -1;
    return 0;
}
