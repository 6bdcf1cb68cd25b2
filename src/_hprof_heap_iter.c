/* The iterators over a heap's objects: heap.objects(), cls.instances()
 * (with or without subclasses).  Each step makes one handle. */
#include "_hprof_heap.h"
#include "_hprof_parts.h"

typedef struct {
    PyObject_HEAD
    HeapIndex *heap;
    uint32_t pos;
    uint32_t ord;       /* one class, or HP_NONE for a set or everything */
    uint8_t *classes;   /* a set of classes (PyMem), or NULL */
} HeapIter;

PyObject *heap_iter_new(HeapIndex *heap, uint32_t ord, uint8_t *classes)
{
    HeapIter *it = PyObject_GC_New(HeapIter, heap->st->heap_iter_type);
    if (!it) {
        PyMem_Free(classes);
        return NULL;
    }
    it->heap = (HeapIndex *)Py_NewRef(heap);
    it->pos = 0;
    it->ord = ord;
    it->classes = classes;
    PyObject_GC_Track(it);
    return (PyObject *)it;
}

static PyObject *iter_next(HeapIter *it)
{
    const hp_heap *h = heap_index(it->heap);
    uint32_t n;
    if (!h)
        return NULL;
    n = hp_heap_object_count(h);
    if (it->ord != HP_NONE) {
        while (it->pos < n && hp_heap_instance_class(h, it->pos) != it->ord)
            it->pos++;
    } else if (it->classes) {
        while (it->pos < n) {
            uint32_t c = hp_heap_instance_class(h, it->pos);
            if (c != HP_NONE && it->classes[c])
                break;
            it->pos++;
        }
    }
    if (it->pos >= n)
        return NULL;
    return heap_handle(it->heap, it->pos++);
}

static int iter_traverse(HeapIter *it, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(it));
    Py_VISIT(it->heap);
    return 0;
}

static int iter_clear(HeapIter *it)
{
    Py_CLEAR(it->heap);
    return 0;
}

static void iter_dealloc(HeapIter *it)
{
    PyTypeObject *type = Py_TYPE(it);
    PyObject_GC_UnTrack(it);
    iter_clear(it);
    PyMem_Free(it->classes);
    PyObject_GC_Del(it);
    Py_DECREF(type);
}

static PyType_Slot iter_slots[] = {
    { Py_tp_doc, "Iterator over heap objects." },
    { Py_tp_iter, PyObject_SelfIter },
    { Py_tp_iternext, iter_next },
    { Py_tp_traverse, iter_traverse },
    { Py_tp_clear, iter_clear },
    { Py_tp_dealloc, iter_dealloc },
    { 0, NULL },
};

static PyType_Spec iter_spec = {
    "hprofkit._hprof.HeapIter", sizeof(HeapIter), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    iter_slots,
};

int hprof_heap_iter_init(PyObject *module, hprof_state *st)
{
    st->heap_iter_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &iter_spec, NULL);
    return st->heap_iter_type ? 0 : -1;
}
