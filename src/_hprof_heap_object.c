/* HeapObject and HeapClass: light handles (a heap and an object index) on
 * the heap index, with field, reference and string access in C.  They are
 * the base types of hprofkit.HeapObject and hprofkit.HeapClass (Python
 * subclasses adding methods, no storage), which C instantiates once the
 * package registered them (_hprof_register.c). */
#include "_hprof_heap.h"
#include "_hprof_parts.h"

#include <stdio.h>
#include <string.h>

static const char *const type_names[12] = { NULL, NULL, "object", NULL, "boolean", "char",
                                            "float", "double", "byte", "short", "int", "long" };
static const char *const kind_names[4] = { "instance", "class", "object_array", "primitive_array" };

/* The index of a live handle, or NULL with ValueError when closed. */
static const hp_heap *live(HeapHandle *o) { return heap_index(o->heap); }

/* ---- HeapObject ------------------------------------------------------------ */

/* A `limit` argument: None (every item) or an int >= 0; -1 with an exception. */
static int parse_limit(PyObject *args, PyObject *kwargs, const char *format, size_t *limit)
{
    static char *keywords[] = { "limit", NULL };
    PyObject *arg = Py_None;
    Py_ssize_t n;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, keywords, &arg))
        return -1;
    *limit = SIZE_MAX;
    if (arg == Py_None)
        return 0;
    n = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
    if (n == -1 && PyErr_Occurred())
        return -1;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "limit must be >= 0 or None");
        return -1;
    }
    *limit = (size_t)n;
    return 0;
}

/* Appends Reference or Referrer(name, id, object) to list; -1 on failure. */
static int append_ref_item(PyObject *list, PyTypeObject *type, PyObject *name, uint64_t id, PyObject *object)
{
    PyObject *item = PyStructSequence_New(type), *pid = PyLong_FromUnsignedLongLong(id);
    int rc = -1;
    if (item && name && pid && object) {
        PyStructSequence_SET_ITEM(item, 0, name);
        PyStructSequence_SET_ITEM(item, 1, pid);
        PyStructSequence_SET_ITEM(item, 2, object);
        rc = PyList_Append(list, item);
        Py_DECREF(item);
        return rc;
    }
    Py_XDECREF(item);
    Py_XDECREF(name);
    Py_XDECREF(pid);
    Py_XDECREF(object);
    return rc;
}

static PyObject *obj_references(HeapHandle *o, PyObject *args, PyObject *kwargs)
{
    PyObject *list, *names;
    heap_refs call;
    size_t k, limit;
    if (parse_limit(args, kwargs, "|O:references", &limit) < 0 || !live(o) ||
        heap_refs_named(o->heap, o->index, limit, HP_NONE, &call, &names) < 0)
        return NULL;
    list = PyList_New(0);
    for (k = 0; list && k < call.n; k++) {
        const hp_ref *r = &call.refs[k];
        if (append_ref_item(list, o->heap->st->reference_type, heap_slot_name(r, names), r->target_id,
                            r->target == HP_NONE ? Py_NewRef(Py_None) : heap_handle(o->heap, r->target)) < 0)
            Py_CLEAR(list);
    }
    heap_refs_free(&call);
    Py_DECREF(names);
    return list;
}

static PyObject *obj_referrers(HeapHandle *o, PyObject *args, PyObject *kwargs)
{
    const hp_heap *h;
    const uint32_t *src;
    uint32_t n, k;
    size_t limit;
    PyObject *list;
    if (parse_limit(args, kwargs, "|O:referrers", &limit) < 0 || !live(o) || heap_ensure_referrers(o->heap) < 0)
        return NULL;
    if (!(h = live(o))) /* closed by another thread while the index was built */
        return NULL;
    src = hp_heap_referrers(h, o->index, &n);
    list = PyList_New(0);
    for (k = 0; list && k < n && (size_t)PyList_GET_SIZE(list) < limit; k++) {
        PyObject *names, *source;
        heap_refs call;
        size_t j;
        if (k > 0 && src[k] == src[k - 1])
            continue; /* one source, several fields: all named below */
        /* Only this source's references to the object, and no more than are wanted. */
        if (heap_refs_named(o->heap, src[k], limit - (size_t)PyList_GET_SIZE(list), o->index, &call, &names) < 0) {
            Py_CLEAR(list);
            break;
        }
        source = heap_handle(o->heap, src[k]);
        for (j = 0; list && source && j < call.n; j++)
            if (append_ref_item(list, o->heap->st->referrer_type, heap_slot_name(&call.refs[j], names),
                                hp_heap_object_id(h, src[k]), Py_NewRef(source)) < 0)
                Py_CLEAR(list);
        if (!source)
            Py_CLEAR(list);
        heap_refs_free(&call);
        Py_DECREF(names);
        Py_XDECREF(source);
    }
    return list;
}

static PyObject *make_field(HeapHandle *o, const heap_field *c)
{
    const hp_field *f = &c->f;
    PyObject *item = PyStructSequence_New(o->heap->st->field_type);
    PyObject *cls = heap_class_handle(o->heap, f->declaring);
    PyObject *name = heap_field_name(o->heap, f);
    PyObject *type = PyUnicode_FromString(f->type >= 0 && f->type < 12 && type_names[f->type] ? type_names[f->type] : "?");
    PyObject *v = c->has_value ? heap_value(o->heap, f->type, c->value) : Py_NewRef(Py_None);
    if (!item || !cls || !name || !type || !v) {
        Py_XDECREF(item);
        Py_XDECREF(cls);
        Py_XDECREF(name);
        Py_XDECREF(type);
        Py_XDECREF(v);
        return NULL;
    }
    PyStructSequence_SET_ITEM(item, 0, cls);
    PyStructSequence_SET_ITEM(item, 1, name);
    PyStructSequence_SET_ITEM(item, 2, type);
    PyStructSequence_SET_ITEM(item, 3, v);
    return item;
}

/* The Field list of one FIELDS_* walk over class `ord` (and instance `index`). */
static PyObject *field_list(HeapHandle *o, int what, uint32_t ord, uint32_t index)
{
    heap_field *items;
    PyObject *list;
    size_t n, k;
    if (heap_fields(o->heap, what, ord, index, &items, &n) < 0)
        return NULL;
    list = PyList_New((Py_ssize_t)n);
    for (k = 0; list && k < n; k++) {
        PyObject *item = make_field(o, &items[k]);
        if (!item)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, item);
    }
    PyMem_RawFree(items);
    return list;
}

/* The class a class object is, or HP_NONE. */
static uint32_t self_class(const hp_heap *h, uint32_t index)
{
    return hp_heap_find_class_id(h, hp_heap_object_id(h, index));
}

static PyObject *obj_fields(HeapHandle *o, PyObject *unused)
{
    const hp_heap *h = live(o);
    hp_kind kind;
    uint32_t ord;
    (void)unused;
    if (!h)
        return NULL;
    kind = hp_heap_object_kind(h, o->index);
    if (kind == HP_KIND_CLASS && (ord = self_class(h, o->index)) != HP_NONE)
        return field_list(o, FIELDS_STATIC, ord, HP_NONE);
    if (kind != HP_KIND_INSTANCE) {
        PyErr_SetString(PyExc_TypeError, "arrays have elements, not fields");
        return NULL;
    }
    ord = hp_heap_object_class(h, o->index);
    return ord == HP_NONE ? PyList_New(0) : field_list(o, FIELDS_ALL, ord, o->index);
}

/* The field map of class `ord`, built on first use and kept by the heap:
 * name -> (type, offset) of the nearest declaration (the class's own
 * first), and (declaring class name, name) -> the same. */
static PyObject *field_map(HeapHandle *o, const hp_heap *h, uint32_t ord)
{
    HeapIndex *heap = o->heap;
    PyObject *map;
    heap_field *items;
    size_t n, k;
    if (!heap->field_maps) {
        Py_ssize_t i, n = hp_heap_class_count(h);
        if (!(heap->field_maps = PyList_New(n)))
            return NULL;
        for (i = 0; i < n; i++)
            PyList_SET_ITEM(heap->field_maps, i, Py_NewRef(Py_None));
    }
    map = PyList_GET_ITEM(heap->field_maps, ord);
    if (map != Py_None)
        return map;
    if (heap_fields(heap, FIELDS_ALL, ord, HP_NONE, &items, &n) < 0)
        return NULL;
    if (!(map = PyDict_New())) {
        PyMem_RawFree(items);
        return NULL;
    }
    for (k = 0; k < n; k++) {
        const hp_field *f = &items[k].f;
        PyObject *name = heap_field_name(heap, f), *cls = heap_class_name(heap, f->declaring);
        PyObject *where = Py_BuildValue("iI", f->type, f->offset), *pair = NULL;
        int rc = -1;
        if (name && PyUnicode_CheckExact(name))
            PyUnicode_InternInPlace(&name); /* obj["value"]: found by identity */
        if (name && cls && where && (pair = PyTuple_Pack(2, cls, name)))
            rc = PyDict_SetDefault(map, name, where) && PyDict_SetDefault(map, pair, where) ? 0 : -1;
        Py_XDECREF(name);
        Py_XDECREF(where);
        Py_XDECREF(pair);
        if (rc < 0) {
            Py_CLEAR(map);
            break;
        }
    }
    PyMem_RawFree(items);
    if (map)
        PyList_SetItem(heap->field_maps, ord, map); /* steals map */
    return map;
}

/* inst["name"] / inst["a.Class", "name"]: the nearest declaration. */
static PyObject *field_item(HeapHandle *o, const hp_heap *h, PyObject *key)
{
    uint32_t ord = hp_heap_object_class(h, o->index);
    PyObject *map, *where;
    heap_value_read call;
    hp_field f;
    if (!PyUnicode_Check(key) && !(PyTuple_Check(key) && PyTuple_GET_SIZE(key) == 2 &&
                                   PyUnicode_Check(PyTuple_GET_ITEM(key, 0)) &&
                                   PyUnicode_Check(PyTuple_GET_ITEM(key, 1)))) {
        PyErr_SetString(PyExc_TypeError, "fields are indexed by name or by (class name, field name)");
        return NULL;
    }
    if (ord == HP_NONE || !(map = field_map(o, h, ord))) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    where = PyDict_GetItemWithError(map, key);
    if (!where) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    f.type = (int)PyLong_AsLong(PyTuple_GET_ITEM(where, 0));
    f.offset = (uint32_t)PyLong_AsUnsignedLong(PyTuple_GET_ITEM(where, 1));
    call.field = &f;
    call.name = NULL;
    if (heap_read_value(o->heap, o->index, &call) < 0)
        return NULL;
    return call.found ? heap_value(o->heap, call.type, call.value) : Py_NewRef(Py_None);
}

static PyObject *element(HeapHandle *o, PyObject *key)
{
    heap_value_read call;
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    call.field = NULL;
    call.name = NULL;
    call.element = i;
    if (heap_read_value(o->heap, o->index, &call) < 0)
        return NULL;
    if (!call.found) {
        PyErr_SetString(PyExc_IndexError, "array index out of range");
        return NULL;
    }
    return heap_value(o->heap, call.type, call.value);
}

/* A class object's "fields" are its statics. */
static PyObject *static_item(HeapHandle *o, const hp_heap *h, PyObject *key)
{
    heap_value_read call;
    Py_ssize_t want_len;
    if (!PyUnicode_Check(key) || !(call.name = PyUnicode_AsUTF8AndSize(key, &want_len))) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "statics are indexed by name");
        return NULL;
    }
    call.name_len = (size_t)want_len;
    call.field = NULL;
    call.ord = self_class(h, o->index);
    if (call.ord != HP_NONE && heap_read_value(o->heap, o->index, &call) < 0)
        return NULL;
    if (call.ord == HP_NONE || !call.found) {
        PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    return heap_value(o->heap, call.type, call.value);
}

static int is_array(hp_kind kind) { return kind == HP_KIND_OBJ_ARRAY || kind == HP_KIND_PRIM_ARRAY; }

static PyObject *obj_getitem(HeapHandle *o, PyObject *key)
{
    const hp_heap *h = live(o);
    hp_kind kind;
    if (!h)
        return NULL;
    kind = hp_heap_object_kind(h, o->index);
    if (is_array(kind)) {
        if (PyIndex_Check(key))
            return element(o, key);
        PyErr_SetString(PyExc_TypeError, "array indices must be integers");
        return NULL;
    }
    if (kind == HP_KIND_CLASS)
        return static_item(o, h, key);
    return field_item(o, h, key);
}

/* The array `o` described (under the guard); -1 with TypeError (`what`
 * the message) when it is not one, or FileChangedError. */
static int array_of(HeapHandle *o, hp_object *obj, const char *what, int primitive_only)
{
    const hp_heap *h = live(o);
    hp_kind kind;
    if (!h)
        return -1;
    kind = hp_heap_object_kind(h, o->index);
    if (primitive_only ? kind != HP_KIND_PRIM_ARRAY : !is_array(kind)) {
        PyErr_SetString(primitive_only ? PyExc_BufferError : PyExc_TypeError, what);
        return -1;
    }
    return heap_describe(o->heap, o->index, obj);
}

static Py_ssize_t obj_length(HeapHandle *o)
{
    hp_object obj;
    if (array_of(o, &obj, "only arrays have a length (a collection's: len(obj.elements()) or len(obj.entries()))",
                 0) < 0)
        return -1;
    return (Py_ssize_t)obj.length;
}

/* A handle is an object, not a container: always true, even an empty
 * array's (test `is None` for a null reference). */
static int obj_bool(HeapHandle *o)
{
    (void)o;
    return 1;
}

static PyObject *obj_as_str(HeapHandle *o, PyObject *unused)
{
    heap_copy text;
    PyObject *out;
    int rc, encoding, order;
    (void)unused;
    if (!live(o) || (rc = heap_string_text(o->heap, o->index, &encoding, &text)) == -2)
        return NULL;
    if (rc == 0) {
        PyErr_SetString(PyExc_TypeError, "not a java.lang.String");
        return NULL;
    }
    if (rc < 0)
        Py_RETURN_NONE;
    order = encoding == HP_TEXT_UTF16LE ? -1 : 1;
    out = encoding == HP_TEXT_LATIN1
              ? PyUnicode_DecodeLatin1((const char *)text.data, (Py_ssize_t)text.len, NULL)
              : PyUnicode_DecodeUTF16((const char *)text.data, (Py_ssize_t)text.len, "surrogatepass", &order);
    heap_copy_free(&text);
    return out;
}

static PyObject *obj_tolist(HeapHandle *o, PyObject *unused)
{
    hp_object obj;
    heap_copy data;
    PyObject *list;
    uint32_t i;
    int size;
    (void)unused;
    if (array_of(o, &obj, "only arrays have elements", 0) < 0 || heap_elements(o->heap, o->index, &obj, &data) < 0)
        return NULL;
    size = hp_type_size(obj.elem_type, hp_heap_id_size(o->heap->index));
    list = PyList_New(obj.length);
    for (i = 0; list && i < obj.length; i++) {
        PyObject *v = heap_value(o->heap, obj.elem_type, data.data + (size_t)i * size);
        if (!v) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, v);
    }
    heap_copy_free(&data);
    return list;
}

/* Primitive arrays export their payload as a read-only buffer in its file
 * form: big-endian items ('>i', '>d'...), so numpy.asarray reads it right.
 * The buffer is the mapping itself: reads through it are not guarded. */
static int obj_getbuffer(HeapHandle *o, Py_buffer *view, int flags)
{
    static const char *const formats[12] = { NULL, NULL, NULL, NULL, "?", ">H", ">f", ">d", "b", ">h", ">i", ">q" };
    hp_object obj;
    int size;
    if (array_of(o, &obj, "only primitive arrays export their values", 1) < 0)
        return -1;
    if (flags & PyBUF_WRITABLE) {
        PyErr_SetString(PyExc_BufferError, "heap values are read-only");
        return -1;
    }
    size = hp_type_size(obj.elem_type, hp_heap_id_size(o->heap->index));
    view->internal = PyMem_Malloc(sizeof(Py_ssize_t)); /* the shape */
    if (!view->internal) {
        PyErr_NoMemory();
        return -1;
    }
    *(Py_ssize_t *)view->internal = (Py_ssize_t)obj.length;
    view->obj = Py_NewRef(o);
    view->buf = (void *)obj.data;
    view->len = (Py_ssize_t)obj.data_len;
    view->readonly = 1;
    view->itemsize = size;
    view->format = (flags & PyBUF_FORMAT) ? (char *)formats[obj.elem_type] : NULL;
    view->ndim = 1;
    view->shape = (flags & PyBUF_ND) ? (Py_ssize_t *)view->internal : NULL;
    view->strides = (flags & PyBUF_STRIDES) ? &view->itemsize : NULL;
    view->suboffsets = NULL;
    heap_enter(o->heap); /* the mapping stays while the view lives */
    return 0;
}

static void obj_releasebuffer(HeapHandle *o, Py_buffer *view)
{
    PyMem_Free(view->internal);
    heap_leave(o->heap);
}

static PyObject *obj_values(HeapHandle *o, PyObject *unused)
{
    (void)unused;
    return PyMemoryView_FromObject((PyObject *)o);
}

enum { O_ID, O_KIND, O_CLASS, O_CLASS_NAME, O_SIZE, O_HEAP_NAME, O_ROOTS, O_INDEX, O_RETAINED, O_RETAINED_COUNT,
       O_REFERENCE_COUNT, O_REFERRER_COUNT, O_HEAP };

static PyObject *obj_get(HeapHandle *o, void *closure)
{
    const hp_heap *h;
    uint32_t ord, n, first, k;
    uint64_t size;
    hp_object obj;
    if ((int)(intptr_t)closure == O_HEAP) /* a closed heap's objects still name it */
        return Py_NewRef((PyObject *)o->heap);
    if (!(h = live(o)))
        return NULL;
    switch ((int)(intptr_t)closure) {
    case O_ID: return PyLong_FromUnsignedLongLong(hp_heap_object_id(h, o->index));
    case O_INDEX: return PyLong_FromUnsignedLong(o->index);
    case O_KIND: return PyUnicode_FromString(kind_names[hp_heap_object_kind(h, o->index)]);
    case O_CLASS: return heap_class_handle(o->heap, hp_heap_object_class(h, o->index));
    case O_CLASS_NAME:
        ord = hp_heap_object_class(h, o->index);
        if (ord != HP_NONE)
            return Py_XNewRef(heap_class_name(o->heap, ord));
        if (heap_describe(o->heap, o->index, &obj) < 0)
            return NULL;
        if (obj.kind == HP_KIND_PRIM_ARRAY)
            return PyUnicode_FromFormat("%s[]", type_names[obj.elem_type]);
        return PyUnicode_FromString(obj.kind == HP_KIND_CLASS ? "java.lang.Class" : "<unknown class>");
    case O_SIZE: return heap_shallow_size(o->heap, o->index, &size) < 0 ? NULL : PyLong_FromUnsignedLongLong(size);
    case O_RETAINED: return reach_object_retained(o, 0);
    case O_RETAINED_COUNT: return reach_object_retained(o, 1);
    case O_HEAP_NAME:
        if (heap_describe(o->heap, o->index, &obj) < 0)
            return NULL;
        return heap_android_name(o->heap, obj.heap);
    case O_REFERENCE_COUNT: {
        uint64_t count;
        return heap_ref_count(o->heap, o->index, &count) < 0 ? NULL : PyLong_FromUnsignedLongLong(count);
    }
    case O_REFERRER_COUNT:
        if (heap_ensure_referrers(o->heap) < 0 || !(h = live(o)))
            return NULL;
        hp_heap_referrers(h, o->index, &n);
        return PyLong_FromUnsignedLong(n);
    case O_ROOTS: {
        PyObject *tuple, *kinds[256]; /* one string per kind (a sub-record tag), however many roots */
        memset(kinds, 0, sizeof kinds);
        n = hp_heap_object_roots(h, o->index, &first);
        tuple = PyTuple_New(n);
        for (k = 0; tuple && k < n; k++) {
            hp_root r;
            hp_heap_root(h, hp_heap_root_by_object(h, first + k), &r);
            if (!kinds[r.kind & 0xFF] && !(kinds[r.kind & 0xFF] = heap_root_kind(r.kind))) {
                Py_CLEAR(tuple);
                break;
            }
            PyTuple_SET_ITEM(tuple, k, Py_NewRef(kinds[r.kind & 0xFF]));
        }
        for (k = 0; k < 256; k++)
            Py_XDECREF(kinds[k]);
        return tuple;
    }
    default: Py_RETURN_NONE;
    }
}

static PyObject *obj_repr(HeapHandle *o)
{
    const hp_heap *h = o->heap->index;
    PyObject *name, *simple, *out;
    Py_ssize_t dot;
    uint64_t size;
    if (!h || o->heap->closing)
        return PyUnicode_FromString("<HeapObject of a closed heap>");
    if (heap_shallow_size(o->heap, o->index, &size) < 0 || !(name = obj_get(o, (void *)(intptr_t)O_CLASS_NAME)))
        return NULL;
    dot = PyUnicode_FindChar(name, '.', 0, PyUnicode_GET_LENGTH(name), -1);
    simple = dot >= 0 ? PyUnicode_Substring(name, dot + 1, PyUnicode_GET_LENGTH(name)) : Py_NewRef(name);
    Py_DECREF(name);
    if (!simple)
        return NULL;
    {
        char tail[64];
        snprintf(tail, sizeof tail, "@0x%llx %llu B>", (unsigned long long)hp_heap_object_id(h, o->index),
                 (unsigned long long)size);
        out = PyUnicode_FromFormat("<%U%s", simple, tail);
    }
    Py_DECREF(simple);
    return out;
}

static Py_hash_t obj_hash(HeapHandle *o)
{
    Py_hash_t v = (Py_hash_t)(o->index * 2654435761u) ^ (Py_hash_t)((uintptr_t)o->heap >> 4);
    return v == -1 ? -2 : v;
}

static PyObject *obj_richcompare(HeapHandle *a, PyObject *other, int op)
{
    int same;
    if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(other, a->heap->st->heap_object_type))
        Py_RETURN_NOTIMPLEMENTED;
    same = a->heap == ((HeapHandle *)other)->heap && a->index == ((HeapHandle *)other)->index;
    return PyBool_FromLong(op == Py_EQ ? same : !same);
}

static void obj_dealloc(HeapHandle *o)
{
    PyTypeObject *type = Py_TYPE(o);
    Py_CLEAR(o->heap);
    type->tp_free((PyObject *)o);
    Py_DECREF(type);
}

/* HeapClass handles are cached by their heap (a cycle): they take part in GC. */
static int class_traverse(HeapHandle *c, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(c));
    Py_VISIT(c->heap);
    return 0;
}

static int class_clear(HeapHandle *c)
{
    Py_CLEAR(c->heap);
    return 0;
}

static void class_dealloc(HeapHandle *c)
{
    PyTypeObject *type = Py_TYPE(c);
    PyObject_GC_UnTrack(c);
    class_clear(c);
    type->tp_free((PyObject *)c);
    Py_DECREF(type);
}

/* ---- HeapClass --------------------------------------------------------------- */

static int class_info(HeapHandle *c, hp_class_info *info)
{
    const hp_heap *h = live(c);
    if (!h)
        return -1;
    return heap_class_info(c->heap, c->ord, info, NULL);
}

static int is_array_class(const hp_class_info *info) { return info->elem_type != 0; }

enum { C_NAME, C_SUPER, C_LOADER, C_INSTANCE_SIZE, C_COUNT, C_ID, C_ORD, C_RETAINED, C_RETAINED_COUNT, C_DUMP_NAME };

static PyObject *class_get(HeapHandle *c, void *closure)
{
    hp_class_info info;
    if (class_info(c, &info) < 0)
        return NULL;
    switch ((int)(intptr_t)closure) {
    case C_NAME: return Py_XNewRef(heap_class_name(c->heap, c->ord));
    case C_ID: return PyLong_FromUnsignedLongLong(info.id);
    case C_ORD: return PyLong_FromUnsignedLong(c->ord);
    case C_SUPER: return heap_class_handle(c->heap, info.super_ord);
    case C_LOADER: return heap_handle_of_id(c->heap, info.loader_id);
    case C_INSTANCE_SIZE:
        if (is_array_class(&info))
            Py_RETURN_NONE;
        return PyLong_FromUnsignedLongLong(info.instance_size);
    case C_COUNT: return PyLong_FromUnsignedLongLong(info.instances);
    case C_RETAINED: return reach_class_retained(c, 0);
    case C_RETAINED_COUNT: return reach_class_retained(c, 1);
    case C_DUMP_NAME: return heap_class_dump_name(c->heap, c->ord);
    default: Py_RETURN_NONE;
    }
}

static PyObject *class_fields(HeapHandle *c, PyObject *unused)
{
    (void)unused;
    return live(c) ? field_list(c, FIELDS_DECLARED, c->ord, HP_NONE) : NULL;
}

static PyObject *class_statics(HeapHandle *c, PyObject *unused)
{
    (void)unused;
    return live(c) ? field_list(c, FIELDS_STATIC, c->ord, HP_NONE) : NULL;
}

static PyObject *class_subclasses(HeapHandle *c, PyObject *unused)
{
    const hp_heap *h = live(c);
    uint8_t *mark;
    uint32_t i, n;
    PyObject *list;
    (void)unused;
    if (!h)
        return NULL;
    if (!(mark = heap_descendants(c->heap, c->ord, 0)))
        return NULL;
    n = hp_heap_class_count(h);
    list = PyList_New(0);
    for (i = 0; list && i < n; i++) {
        PyObject *sub;
        if (!mark[i])
            continue;
        sub = heap_class_handle(c->heap, i);
        if (!sub || PyList_Append(list, sub) < 0)
            Py_CLEAR(list);
        Py_XDECREF(sub);
    }
    PyMem_Free(mark);
    return list;
}

static PyObject *class_instances(HeapHandle *c, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "subclasses", NULL };
    int subclasses = 0;
    const hp_heap *h = live(c);
    uint8_t *mark;
    if (!h || !PyArg_ParseTupleAndKeywords(args, kwargs, "|p:instances", keywords, &subclasses))
        return NULL;
    if (!subclasses)
        return heap_iter_new(c->heap, c->ord, NULL);
    if (!(mark = heap_descendants(c->heap, c->ord, 1)))
        return NULL;
    return heap_iter_new(c->heap, HP_NONE, mark);
}

static PyObject *class_repr(HeapHandle *c)
{
    hp_class_info info;
    if (!c->heap->index || c->heap->closing)
        return PyUnicode_FromString("<HeapClass of a closed heap>");
    char tail[64];
    PyObject *name = heap_class_name(c->heap, c->ord);
    if (!name || heap_class_info(c->heap, c->ord, &info, NULL) < 0)
        return NULL;
    snprintf(tail, sizeof tail, "@0x%llx %llu instances>", (unsigned long long)info.id,
             (unsigned long long)info.instances);
    return PyUnicode_FromFormat("<class %U%s", name, tail);
}

/* ---- type specs ------------------------------------------------------------- */

#define OGET(name, code, doc) { name, (getter)obj_get, NULL, doc, (void *)(intptr_t)code }
#define CGET(name, code, doc) { name, (getter)class_get, NULL, doc, (void *)(intptr_t)code }

static PyGetSetDef obj_getset[] = {
    OGET("id", O_ID, "The object id (its address in the dumped VM)."),
    OGET("index", O_INDEX, "Position of the object in the heap's id order (0 .. object_count - 1)."),
    OGET("kind", O_KIND, "'instance', 'class', 'object_array' or 'primitive_array'."),
    OGET("class_", O_CLASS, "The HeapClass of the object (java.lang.Class for a class), or None."),
    OGET("class_name", O_CLASS_NAME, "Java name of the object's class: 'java.lang.String', 'byte[]'..."),
    OGET("shallow_size", O_SIZE, "Bytes of the object itself under the heap's size model."),
    OGET("heap_name", O_HEAP_NAME, "Android heap ('app', 'zygote', 'image'...), or None."),
    OGET("retained_size", O_RETAINED, "Bytes freed with the object: heap.retained_size(obj)."),
    OGET("retained_count", O_RETAINED_COUNT, "Objects freed with the object, itself included: heap.retained_count(obj)."),
    OGET("heap", O_HEAP, "The Heap the object belongs to."),
    OGET("root_kinds", O_ROOTS, "Kinds of the GC roots holding the object, e.g. ('JNI_GLOBAL',); () if none."),
    OGET("reference_count", O_REFERENCE_COUNT, "Outbound non-null references: len(obj.references())."),
    OGET("referrer_count", O_REFERRER_COUNT, "References to the object: len(obj.referrers()) (builds the referrer index)."),
    { NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef obj_methods[] = {
    OBJECT_TREE_METHODS
    { "references", (PyCFunction)(void (*)(void))obj_references, METH_VARARGS | METH_KEYWORDS,
      "references($self, /, limit=None)\n--\n\nOutbound non-null references as Reference(name, target_id, target);\n"
      "the first `limit` only, when given (reference_count counts them all)." },
    { "referrers", (PyCFunction)(void (*)(void))obj_referrers, METH_VARARGS | METH_KEYWORDS,
      "referrers($self, /, limit=None)\n--\n\nReferences to this object as Referrer(name, source_id, source);\n"
      "the first `limit` only, when given (referrer_count counts them all).  The first call builds\n"
      "the heap's referrer index." },
    { "fields", (PyCFunction)obj_fields, METH_NOARGS,
      "fields($self, /)\n--\n\nEvery field of an instance, its class's first, as Field(declaring_class,\n"
      "name, type, value).  A HeapClass's fields() are its declared fields; statics() its statics." },
    { "as_str", (PyCFunction)obj_as_str, METH_NOARGS,
      "as_str($self, /)\n--\n\nThe text of a java.lang.String (None when its characters are not in the\n"
      "dump); TypeError for other objects." },
    { "values", (PyCFunction)obj_values, METH_NOARGS,
      "values($self, /)\n--\n\nA primitive array's payload: a read-only memoryview into the dump, items\n"
      "big-endian as written ('>i'...), so numpy.asarray(arr.values()) reads it without a copy.\n"
      "Python reads it unguarded: a file shrunk under it kills the process (tolist() copies guarded)." },
    { "tolist", (PyCFunction)obj_tolist, METH_NOARGS,
      "tolist($self, /)\n--\n\nAn array's elements as a list of Python values." },
    OBJ_VALUES_METHODS
    HEAP_PIXEL_METHODS
    { NULL, NULL, 0, NULL },
};

static PyType_Slot obj_slots[] = {
    { Py_tp_doc, "A handle on one object of a Heap (light: the heap and an index)." },
    { Py_tp_getset, obj_getset },
    { Py_tp_methods, obj_methods },
    { Py_tp_repr, obj_repr },
    { Py_tp_hash, obj_hash },
    { Py_tp_richcompare, obj_richcompare },
    { Py_mp_subscript, obj_getitem },
    { Py_mp_length, obj_length },
    { Py_nb_bool, obj_bool },
    { Py_bf_getbuffer, obj_getbuffer },
    { Py_bf_releasebuffer, obj_releasebuffer },
    { Py_tp_dealloc, obj_dealloc },
    { 0, NULL },
};

static PyType_Spec obj_spec = {
    "hprofkit._hprof.HeapObject", sizeof(HeapHandle), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    obj_slots,
};

static PyGetSetDef class_getset[] = {
    CGET("name", C_NAME, "Java name: 'java.lang.String', 'int[]', 'a.B$C' (the clear one with a mapping)."),
    CGET("obfuscated_name", C_DUMP_NAME, "The Java name the dump gives the class: name, unless a mapping renamed it."),
    CGET("class_id", C_ID, "The class id (the id of its class object)."),
    CGET("ordinal", C_ORD, "Position of the class in the heap's class list."),
    CGET("superclass", C_SUPER, "The superclass's HeapClass, or None."),
    CGET("loader", C_LOADER, "The class loader object, or None for the boot loader."),
    CGET("instance_size", C_INSTANCE_SIZE, "Shallow size of an instance under the size model (None for arrays)."),
    CGET("instance_count", C_COUNT, "Objects whose class this is."),
    CGET("instances_retained_size", C_RETAINED,
         "Bytes retained by the class's instances and arrays, summed over those that no object\n"
         "of the same class dominates (VisualVM's retained size by class).  retained_size is the\n"
         "class object's own, as for any object."),
    CGET("instances_retained_count", C_RETAINED_COUNT,
         "Objects retained by the same instances as instances_retained_size (the sum of their\n"
         "retained counts).  retained_count is the class object's own, as for any object."),
    { NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef class_methods[] = {
    { "fields", (PyCFunction)class_fields, METH_NOARGS,
      "fields($self, /)\n--\n\nDeclared instance fields as Field(declaring_class, name, type, None)." },
    { "statics", (PyCFunction)class_statics, METH_NOARGS,
      "statics($self, /)\n--\n\nStatic fields with their values, as Field items." },
    { "subclasses", (PyCFunction)class_subclasses, METH_NOARGS,
      "subclasses($self, /)\n--\n\nEvery class below this one (direct and indirect)." },
    { "instances", (PyCFunction)(void (*)(void))class_instances, METH_VARARGS | METH_KEYWORDS,
      "instances($self, /, subclasses=False)\n--\n\nIterate over the objects of this class (and of its\n"
      "subclasses), in id order." },
    { NULL, NULL, 0, NULL },
};

static PyType_Slot class_slots[] = {
    { Py_tp_doc, "A class of a Heap; it is also the handle of the class object." },
    { Py_tp_getset, class_getset },
    { Py_tp_methods, class_methods },
    { Py_tp_repr, class_repr },
    { Py_tp_traverse, class_traverse },
    { Py_tp_clear, class_clear },
    { Py_tp_dealloc, class_dealloc },
    { 0, NULL },
};

static PyType_Spec class_spec = {
    "hprofkit._hprof.HeapClass", sizeof(HeapHandle), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION |
        Py_TPFLAGS_IMMUTABLETYPE,
    class_slots,
};

int hprof_heap_object_init(PyObject *module, hprof_state *st)
{
    st->heap_object_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &obj_spec, NULL);
    if (!st->heap_object_type)
        return -1;
    st->heap_class_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &class_spec,
                                                                    (PyObject *)st->heap_object_type);
    if (!st->heap_class_type)
        return -1;
    /* C instantiates these until the package registers its subclasses. */
    st->object_handle_type = (PyTypeObject *)Py_NewRef(st->heap_object_type);
    st->class_handle_type = (PyTypeObject *)Py_NewRef(st->heap_class_type);
    if (PyModule_AddObjectRef(module, "HeapObject", (PyObject *)st->heap_object_type) < 0 ||
        PyModule_AddObjectRef(module, "HeapClass", (PyObject *)st->heap_class_type) < 0)
        return -1;
    return 0;
}
