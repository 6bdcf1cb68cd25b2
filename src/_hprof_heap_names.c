/* A heap of an obfuscated dump read through its mapping: Heap(...,
 * mapping=) gives the index the clear names at construction
 * (core/hp_heap_names.c), and every name read through it is clear from
 * then on: classes, fields, statics, references, paths, tables.  What the
 * dump itself calls a class stays available (HeapClass.obfuscated_name).
 * Stack frames are retraced by the package (R8 line ranges:
 * hprofkit.Mapping.frames), which lists them with _frames and hands the
 * clear ones back with _rename_frames before the heap is shared. */
#include "_hprof_heap.h"
#include "_hprof_mapping.h"

typedef struct {
    hp_heap *index;
    const hp_mapping *mapping;
    hp_heap_renames renames;
    hp_error err;
    hp_code rc;
} apply_call;

static void apply(void *ctx)
{
    apply_call *c = ctx;
    c->rc = hp_heap_apply_mapping(c->index, c->mapping, &c->renames, &c->err);
}

int heap_apply_mapping(HeapIndex *heap, PyObject *mapping)
{
    apply_call call;
    memset(&call, 0, sizeof call);
    call.index = heap->index;
    if (!(call.mapping = hprof_mapping_core(heap->st, mapping)))
        return -1;
    if (heap_guard(heap, apply, &call) < 0)
        return -1;
    if (call.rc != HP_OK) {
        hprof_raise(heap->st, &call.err);
        return -1;
    }
    heap->renames = call.renames;
    Py_XSETREF(heap->mapping, Py_NewRef(mapping));
    return 0;
}

PyObject *heap_get_mapping(HeapIndex *heap, void *closure)
{
    (void)closure;
    return Py_NewRef(heap->mapping ? heap->mapping : Py_None);
}

/* ---- the dump's own names ---- */

typedef struct {
    const hp_heap *h;
    uint32_t ord;
    heap_copy name;
    int found;
} dump_name_call;

static void read_dump_name(void *ctx)
{
    dump_name_call *c = ctx;
    c->found = hp_heap_class_dump_name(c->h, c->ord, &c->name.data, &c->name.len);
    heap_copy_small(&c->name);
}

PyObject *heap_class_dump_name(HeapIndex *heap, uint32_t ord)
{
    dump_name_call call;
    PyObject *out;
    memset(&call, 0, sizeof call);
    if (!(call.h = heap_index(heap)))
        return NULL;
    call.ord = ord;
    if (heap_guard(heap, read_dump_name, &call) < 0 || heap_copy_finish(heap, &call.name) < 0)
        return NULL;
    out = call.found ? hprof_java_name(call.name.data, call.name.len) : Py_NewRef(heap_class_name(heap, ord));
    heap_copy_free(&call.name);
    return out;
}

/* heap._renames(): what the mapping did, for the package's warnings. */
PyObject *heap_renames(HeapIndex *heap, PyObject *unused)
{
    const hp_heap_renames *r = &heap->renames;
    PyObject *cls = Py_None, *field = Py_None;
    (void)unused;
    if (!heap_index(heap))
        return NULL;
    if (r->mismatch_class != HP_NONE) {
        if (!(cls = heap_class_dump_name(heap, r->mismatch_class)))
            return NULL;
        if (!(field = heap_utf8(heap, r->mismatch_sid))) {
            Py_DECREF(cls);
            return NULL;
        }
    } else {
        Py_INCREF(cls);
        Py_INCREF(field);
    }
    return Py_BuildValue("(kkKNN)", (unsigned long)r->classes_listed, (unsigned long)r->classes_renamed,
                         (unsigned long long)r->fields_renamed, cls, field);
}

/* ---- stack frames ---- */

typedef struct {
    const hp_heap *h;
    uint64_t *ids;
    hp_frame *frames;
    size_t n;
} frames_call;

static void read_frames(void *ctx)
{
    frames_call *c = ctx;
    size_t i;
    for (i = 0; i < c->n; i++)
        hp_heap_frame_at(c->h, i, &c->ids[i], &c->frames[i]);
}

/* heap._frames(): every STACK_FRAME as the dump has it. */
PyObject *heap_dump_frames(HeapIndex *heap, PyObject *unused)
{
    frames_call call;
    PyObject *out = NULL;
    size_t i;
    (void)unused;
    memset(&call, 0, sizeof call);
    if (!(call.h = heap_index(heap)))
        return NULL;
    call.n = hp_heap_frame_count(call.h);
    call.ids = PyMem_Calloc(call.n + 1, sizeof *call.ids);
    call.frames = PyMem_Calloc(call.n + 1, sizeof *call.frames);
    if (!call.ids || !call.frames) {
        PyErr_NoMemory();
        goto done;
    }
    if (heap_guard(heap, read_frames, &call) < 0)
        goto done;
    out = PyList_New((Py_ssize_t)call.n);
    for (i = 0; out && i < call.n; i++) {
        const hp_frame *f = &call.frames[i];
        uint32_t cls = hp_heap_class_by_serial(call.h, f->class_serial);
        PyObject *item = Py_BuildValue("(KNNNNi)", (unsigned long long)call.ids[i],
                                       cls == HP_NONE ? Py_NewRef(Py_None) : heap_class_dump_name(heap, cls),
                                       heap_utf8(heap, f->method_sid), heap_utf8(heap, f->signature_sid),
                                       heap_utf8(heap, f->source_sid), (int)f->line);
        if (!item)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, (Py_ssize_t)i, item);
    }
done:
    PyMem_Free(call.ids);
    PyMem_Free(call.frames);
    return out;
}

/* Bytes of an optional str argument: 0, or -1 with an exception set. */
static int text_of(PyObject *value, const char **text, Py_ssize_t *len)
{
    *text = NULL;
    *len = 0;
    if (value == Py_None)
        return 0;
    if (!PyUnicode_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "a frame's names are str or None");
        return -1;
    }
    *text = PyUnicode_AsUTF8AndSize(value, len);
    return *text ? 0 : -1;
}

/* One frame of heap._rename_frames: (frame_id, method, signature, source, line). */
static int rename_frame(HeapIndex *heap, hp_heap *index, PyObject *item)
{
    unsigned long long frame_id;
    PyObject *method, *signature, *source;
    const char *m, *sig, *src;
    Py_ssize_t m_len, sig_len, src_len;
    int line;
    hp_error err;
    if (!PyArg_ParseTuple(item, "KOOOi:_rename_frames", &frame_id, &method, &signature, &source, &line) ||
        text_of(method, &m, &m_len) < 0 || text_of(signature, &sig, &sig_len) < 0 ||
        text_of(source, &src, &src_len) < 0)
        return -1;
    if (hp_heap_rename_frame(index, frame_id, m, (size_t)m_len, sig, (size_t)sig_len, src, (size_t)src_len, line,
                             &err) != HP_OK) {
        if (err.code == HP_E_USAGE)
            PyErr_Format(PyExc_KeyError, "no STACK_FRAME 0x%llx in the dump", frame_id);
        else
            hprof_raise(heap->st, &err);
        return -1;
    }
    return 0;
}

/* Calls one() for each item of a sequence (heap._rename_frames and
 * _rename_fields): the names grow, so no other call may read them
 * meanwhile: none runs without the GIL (busy), and this one holds it. */
static PyObject *rename_each(HeapIndex *heap, PyObject *items, const char *what, const char *not_a_sequence,
                             int (*one)(HeapIndex *heap, hp_heap *index, PyObject *item))
{
    const hp_heap *index = heap_index(heap);
    PyObject *seq;
    Py_ssize_t i;
    if (!index)
        return NULL;
    if (heap->busy) {
        PyErr_Format(PyExc_RuntimeError, "%s: the heap is in use by another call", what);
        return NULL;
    }
    if (!(seq = PySequence_Fast(items, not_a_sequence)))
        return NULL;
    for (i = 0; i < PySequence_Fast_GET_SIZE(seq); i++)
        if (one(heap, (hp_heap *)index, PySequence_Fast_GET_ITEM(seq, i)) < 0) {
            Py_DECREF(seq);
            return NULL;
        }
    Py_DECREF(seq);
    Py_RETURN_NONE;
}

PyObject *heap_rename_frames(HeapIndex *heap, PyObject *frames)
{
    return rename_each(heap, frames, "_rename_frames", "_rename_frames takes a sequence of frames", rename_frame);
}

/* ---- fields of one obfuscated name (hprofkit/_overloads.py) ---- */

/* (name, type code) of each item, by its name in the dump. */
static PyObject *dump_field_list(HeapIndex *heap, const heap_field *items, size_t n)
{
    PyObject *list = PyList_New((Py_ssize_t)n);
    size_t k;
    for (k = 0; list && k < n; k++) {
        PyObject *item = Py_BuildValue("(Ni)", heap_utf8(heap, items[k].f.dump_name_sid), items[k].f.type);
        if (!item)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)k, item);
    }
    return list;
}

/* heap._dump_fields(ordinal): a class's statics and own fields as the dump names them. */
PyObject *heap_dump_fields(HeapIndex *heap, PyObject *arg)
{
    const hp_heap *index = heap_index(heap);
    unsigned long ord;
    heap_field *statics = NULL, *fields = NULL;
    size_t n_statics = 0, n_fields = 0;
    PyObject *out = NULL;
    if (!index)
        return NULL;
    ord = PyLong_AsUnsignedLong(arg);
    if (PyErr_Occurred())
        return NULL;
    if (ord >= hp_heap_class_count(index)) {
        PyErr_SetString(PyExc_IndexError, "_dump_fields: no class of that ordinal");
        return NULL;
    }
    if (heap_fields(heap, FIELDS_STATIC, (uint32_t)ord, HP_NONE, &statics, &n_statics) == 0 &&
        heap_fields(heap, FIELDS_DECLARED, (uint32_t)ord, HP_NONE, &fields, &n_fields) == 0)
        out = Py_BuildValue("(NN)", dump_field_list(heap, statics, n_statics), dump_field_list(heap, fields, n_fields));
    PyMem_RawFree(statics);
    PyMem_RawFree(fields);
    return out;
}

/* One field of heap._rename_fields: (class ordinal, k, name). */
static int rename_one_field(HeapIndex *heap, hp_heap *index, PyObject *item)
{
    unsigned int ord, k;
    const char *name;
    Py_ssize_t len;
    int renamed_before = 0;
    hp_error err;
    if (!PyArg_ParseTuple(item, "IIs#:_rename_fields", &ord, &k, &name, &len))
        return -1;
    if (hp_heap_rename_field(index, ord, k, name, (size_t)len, &renamed_before, &err) != HP_OK) {
        if (err.code == HP_E_USAGE)
            PyErr_Format(PyExc_KeyError, "no field %u of class %u", k, ord);
        else
            hprof_raise(heap->st, &err);
        return -1;
    }
    heap->renames.fields_renamed += !renamed_before;
    return 0;
}

PyObject *heap_rename_fields(HeapIndex *heap, PyObject *fields)
{
    return rename_each(heap, fields, "_rename_fields", "_rename_fields takes a sequence of fields", rename_one_field);
}
