/* HeapObject and HeapClass: light handles (a heap and an object index) on
 * the heap index, with field, reference and string access in C, and the
 * iterators over objects and instances. */
#include "_hprof_heap.h"
#include "_hprof_parts.h"

#include <stdio.h>
#include <string.h>

static const char *const type_names[12] = { NULL, NULL, "object", NULL, "boolean", "char",
                                            "float", "double", "byte", "short", "int", "long" };
static const char *const kind_names[4] = { "instance", "class", "object_array", "primitive_array" };

PyObject *heap_handle(HeapIndex *heap, uint32_t index)
{
    const hp_heap *h = heap->index;
    HeapHandle *o;
    if (hp_heap_object_kind(h, index) == HP_KIND_CLASS) {
        uint32_t ord = hp_heap_find_class_id(h, hp_heap_object_id(h, index));
        if (ord != HP_NONE)
            return heap_class_handle(heap, ord);
    }
    o = PyObject_New(HeapHandle, heap->st->heap_object_type);
    if (!o)
        return NULL;
    o->heap = (HeapIndex *)Py_NewRef(heap);
    o->index = index;
    o->ord = HP_NONE;
    return (PyObject *)o;
}

static PyObject *handle_or_none(HeapIndex *heap, uint64_t id)
{
    uint32_t i;
    if (id == 0 || (i = hp_heap_find(heap->index, id)) == HP_NONE)
        Py_RETURN_NONE;
    return heap_handle(heap, i);
}

PyObject *heap_value(HeapIndex *heap, int type, const uint8_t *v)
{
    const int id = hp_heap_id_size(heap->index);
    switch (type) {
    case HP_T_OBJECT: return handle_or_none(heap, hp_read_id(v, id));
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

/* The index of a live handle, or NULL with ValueError when closed. */
static const hp_heap *live(HeapHandle *o) { return heap_index(o->heap); }

/* ---- names of reference slots -------------------------------------------- */

/* Names of the reference fields of class `ord` in slot order (the order of
 * the instance data: the class's own first). */
static PyObject *ref_field_names(const hp_heap *h, uint32_t ord)
{
    hp_field_iter it;
    hp_field f;
    PyObject *list = PyList_New(0);
    hp_field_iter_init(&it, h, ord);
    while (list && hp_field_next(&it, &f)) {
        PyObject *name;
        if (f.type != HP_T_OBJECT)
            continue;
        name = heap_utf8(h, f.name_sid);
        if (!name || PyList_Append(list, name) < 0)
            Py_CLEAR(list);
        Py_XDECREF(name);
    }
    return list;
}

static PyObject *static_names(const hp_heap *h, uint32_t ord)
{
    hp_static_iter it;
    hp_field f;
    PyObject *list = PyList_New(0);
    hp_static_iter_init(&it, h, ord);
    while (list && hp_static_next(&it, &f)) {
        PyObject *name = heap_utf8(h, f.name_sid);
        if (!name || PyList_Append(list, name) < 0)
            Py_CLEAR(list);
        Py_XDECREF(name);
    }
    return list;
}

/* The name of one reference, given the slot names of its source. */
static PyObject *ref_name(const hp_ref *r, PyObject *names)
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

/* Slot names for the references of object `index` (NULL + no error for arrays). */
static PyObject *slot_names(const hp_heap *h, uint32_t index)
{
    hp_kind kind = hp_heap_object_kind(h, index);
    uint32_t ord;
    if (kind == HP_KIND_INSTANCE) {
        ord = hp_heap_object_class(h, index);
        return ord == HP_NONE ? PyList_New(0) : ref_field_names(h, ord);
    }
    if (kind == HP_KIND_CLASS) {
        ord = hp_heap_find_class_id(h, hp_heap_object_id(h, index));
        return ord == HP_NONE ? PyList_New(0) : static_names(h, ord);
    }
    return PyList_New(0);
}

/* ---- HeapObject ------------------------------------------------------------ */

static PyObject *obj_references(HeapHandle *o, PyObject *unused)
{
    const hp_heap *h = live(o);
    PyObject *list, *names;
    hp_ref_iter it;
    hp_ref r;
    (void)unused;
    if (!h || !(names = slot_names(h, o->index)))
        return NULL;
    list = PyList_New(0);
    hp_ref_iter_init(&it, h, o->index);
    while (list && hp_ref_next(&it, &r)) {
        PyObject *item = PyStructSequence_New(o->heap->st->reference_type);
        PyObject *name = ref_name(&r, names), *id = PyLong_FromUnsignedLongLong(r.target_id);
        PyObject *target = r.target == HP_NONE ? Py_NewRef(Py_None) : heap_handle(o->heap, r.target);
        if (!item || !name || !id || !target) {
            Py_XDECREF(item);
            Py_XDECREF(name);
            Py_XDECREF(id);
            Py_XDECREF(target);
            Py_CLEAR(list);
            break;
        }
        PyStructSequence_SET_ITEM(item, 0, name);
        PyStructSequence_SET_ITEM(item, 1, id);
        PyStructSequence_SET_ITEM(item, 2, target);
        if (PyList_Append(list, item) < 0)
            Py_CLEAR(list);
        Py_DECREF(item);
    }
    Py_DECREF(names);
    return list;
}

static PyObject *obj_referrers(HeapHandle *o, PyObject *unused)
{
    const hp_heap *h;
    const uint32_t *src;
    uint32_t n, k;
    PyObject *list;
    (void)unused;
    if (!live(o) || heap_ensure_referrers(o->heap) < 0)
        return NULL;
    h = o->heap->index;
    src = hp_heap_referrers(h, o->index, &n);
    list = PyList_New(0);
    for (k = 0; list && k < n; k++) {
        PyObject *names, *source;
        hp_ref_iter it;
        hp_ref r;
        if (k > 0 && src[k] == src[k - 1])
            continue; /* one source, several fields: all named below */
        names = slot_names(h, src[k]);
        source = heap_handle(o->heap, src[k]);
        if (!names || !source) {
            Py_XDECREF(names);
            Py_XDECREF(source);
            Py_CLEAR(list);
            break;
        }
        hp_ref_iter_init(&it, h, src[k]);
        while (list && hp_ref_next(&it, &r)) {
            PyObject *item, *name, *id;
            if (r.target != o->index)
                continue;
            item = PyStructSequence_New(o->heap->st->referrer_type);
            name = ref_name(&r, names);
            id = PyLong_FromUnsignedLongLong(hp_heap_object_id(h, src[k]));
            if (!item || !name || !id) {
                Py_XDECREF(item);
                Py_XDECREF(name);
                Py_XDECREF(id);
                Py_CLEAR(list);
                break;
            }
            PyStructSequence_SET_ITEM(item, 0, name);
            PyStructSequence_SET_ITEM(item, 1, id);
            PyStructSequence_SET_ITEM(item, 2, Py_NewRef(source));
            if (PyList_Append(list, item) < 0)
                Py_CLEAR(list);
            Py_DECREF(item);
        }
        Py_DECREF(names);
        Py_DECREF(source);
    }
    return list;
}

static PyObject *make_field(HeapHandle *o, const hp_field *f, const uint8_t *value)
{
    PyObject *item = PyStructSequence_New(o->heap->st->field_type);
    PyObject *cls = heap_class_handle(o->heap, f->declaring);
    PyObject *name = heap_utf8(o->heap->index, f->name_sid);
    PyObject *type = PyUnicode_FromString(f->type >= 0 && f->type < 12 && type_names[f->type] ? type_names[f->type] : "?");
    PyObject *v = value ? heap_value(o->heap, f->type, value) : Py_NewRef(Py_None);
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

static PyObject *statics_of(HeapHandle *o, const hp_heap *h, uint32_t ord)
{
    hp_static_iter it;
    hp_field f;
    PyObject *list = PyList_New(0);
    hp_static_iter_init(&it, h, ord);
    while (list && hp_static_next(&it, &f)) {
        PyObject *item = make_field(o, &f, f.value);
        if (!item || PyList_Append(list, item) < 0)
            Py_CLEAR(list);
        Py_XDECREF(item);
    }
    return list;
}

static PyObject *obj_fields(HeapHandle *o, PyObject *unused)
{
    const hp_heap *h = live(o);
    hp_object obj;
    hp_field_iter it;
    hp_field f;
    PyObject *list;
    (void)unused;
    if (!h)
        return NULL;
    hp_heap_object(h, o->index, &obj);
    if (obj.kind == HP_KIND_CLASS && obj.self_ord != HP_NONE)
        return statics_of(o, h, obj.self_ord);
    if (obj.kind != HP_KIND_INSTANCE) {
        PyErr_SetString(PyExc_TypeError, "arrays have elements, not fields");
        return NULL;
    }
    list = PyList_New(0);
    if (obj.class_ord == HP_NONE)
        return list;
    hp_field_iter_init(&it, h, obj.class_ord);
    while (list && hp_field_next(&it, &f)) {
        PyObject *item = make_field(o, &f, hp_field_value(&f, obj.data, obj.data_len, hp_heap_id_size(h)));
        if (!item || PyList_Append(list, item) < 0)
            Py_CLEAR(list);
        Py_XDECREF(item);
    }
    return list;
}

/* The field map of class `ord`, built on first use and kept by the heap:
 * name -> (type, offset) of the nearest declaration (the class's own
 * first), and (declaring class name, name) -> the same. */
static PyObject *field_map(HeapHandle *o, const hp_heap *h, uint32_t ord)
{
    HeapIndex *heap = o->heap;
    PyObject *map;
    hp_field_iter it;
    hp_field f;
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
    if (!(map = PyDict_New()))
        return NULL;
    hp_field_iter_init(&it, h, ord);
    while (hp_field_next(&it, &f)) {
        PyObject *name = heap_utf8(h, f.name_sid), *cls = heap_class_name(heap, f.declaring);
        PyObject *where = Py_BuildValue("iI", f.type, f.offset), *pair = NULL;
        int rc = -1;
        if (name && cls && where && (pair = PyTuple_Pack(2, cls, name))) {
            rc = PyDict_SetDefault(map, name, where) && PyDict_SetDefault(map, pair, where) ? 0 : -1;
        }
        Py_XDECREF(name);
        Py_XDECREF(where);
        Py_XDECREF(pair);
        if (rc < 0) {
            Py_DECREF(map);
            return NULL;
        }
    }
    PyList_SetItem(heap->field_maps, ord, map); /* steals map */
    return map;
}

/* inst["name"] / inst["a.Class", "name"]: the nearest declaration. */
static PyObject *field_item(HeapHandle *o, const hp_heap *h, const hp_object *obj, PyObject *key)
{
    PyObject *map, *where;
    hp_field f;
    const uint8_t *value;
    if (!PyUnicode_Check(key) && !(PyTuple_Check(key) && PyTuple_GET_SIZE(key) == 2 &&
                                   PyUnicode_Check(PyTuple_GET_ITEM(key, 0)) &&
                                   PyUnicode_Check(PyTuple_GET_ITEM(key, 1)))) {
        PyErr_SetString(PyExc_TypeError, "fields are indexed by name or by (class name, field name)");
        return NULL;
    }
    if (obj->class_ord == HP_NONE || !(map = field_map(o, h, obj->class_ord))) {
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
    value = hp_field_value(&f, obj->data, obj->data_len, hp_heap_id_size(h));
    return value ? heap_value(o->heap, f.type, value) : Py_NewRef(Py_None);
}

static PyObject *element(HeapHandle *o, const hp_object *obj, PyObject *key)
{
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    int size;
    if (i == -1 && PyErr_Occurred())
        return NULL;
    if (i < 0)
        i += obj->length;
    if (i < 0 || (uint64_t)i >= obj->length) {
        PyErr_SetString(PyExc_IndexError, "array index out of range");
        return NULL;
    }
    size = hp_type_size(obj->elem_type, hp_heap_id_size(o->heap->index));
    return heap_value(o->heap, obj->elem_type, obj->data + (size_t)i * size);
}

static PyObject *obj_getitem(HeapHandle *o, PyObject *key)
{
    const hp_heap *h = live(o);
    hp_object obj;
    if (!h)
        return NULL;
    hp_heap_object(h, o->index, &obj);
    if (obj.kind == HP_KIND_OBJ_ARRAY || obj.kind == HP_KIND_PRIM_ARRAY) {
        if (PyIndex_Check(key))
            return element(o, &obj, key);
        PyErr_SetString(PyExc_TypeError, "array indices must be integers");
        return NULL;
    }
    if (obj.kind == HP_KIND_CLASS) {
        /* A class object's "fields" are its statics. */
        hp_static_iter it;
        hp_field f;
        const char *want;
        Py_ssize_t want_len;
        if (!PyUnicode_Check(key) || !(want = PyUnicode_AsUTF8AndSize(key, &want_len))) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "statics are indexed by name");
            return NULL;
        }
        if (obj.self_ord != HP_NONE) {
            hp_static_iter_init(&it, h, obj.self_ord);
            while (hp_static_next(&it, &f)) {
                const uint8_t *text;
                size_t len;
                if (hp_heap_utf8(h, f.name_sid, &text, &len) && len == (size_t)want_len && !memcmp(text, want, len))
                    return heap_value(o->heap, f.type, f.value);
            }
        }
        PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    return field_item(o, h, &obj, key);
}

static Py_ssize_t obj_length(HeapHandle *o)
{
    const hp_heap *h = live(o);
    hp_object obj;
    if (!h)
        return -1;
    hp_heap_object(h, o->index, &obj);
    if (obj.kind != HP_KIND_OBJ_ARRAY && obj.kind != HP_KIND_PRIM_ARRAY) {
        PyErr_SetString(PyExc_TypeError, "only arrays have a length");
        return -1;
    }
    return (Py_ssize_t)obj.length;
}

static PyObject *obj_as_str(HeapHandle *o, PyObject *unused)
{
    const hp_heap *h = live(o);
    hp_text t;
    int rc, order;
    (void)unused;
    if (!h)
        return NULL;
    rc = hp_heap_string(h, o->index, &t);
    if (rc == 0) {
        PyErr_SetString(PyExc_TypeError, "not a java.lang.String");
        return NULL;
    }
    if (rc < 0)
        Py_RETURN_NONE;
    if (t.encoding == HP_TEXT_LATIN1)
        return PyUnicode_DecodeLatin1((const char *)t.data, (Py_ssize_t)t.units, NULL);
    order = t.encoding == HP_TEXT_UTF16LE ? -1 : 1;
    return PyUnicode_DecodeUTF16((const char *)t.data, (Py_ssize_t)t.units * 2, "surrogatepass", &order);
}

static PyObject *obj_tolist(HeapHandle *o, PyObject *unused)
{
    const hp_heap *h = live(o);
    hp_object obj;
    PyObject *list;
    uint32_t i;
    int size;
    (void)unused;
    if (!h)
        return NULL;
    hp_heap_object(h, o->index, &obj);
    if (obj.kind != HP_KIND_OBJ_ARRAY && obj.kind != HP_KIND_PRIM_ARRAY) {
        PyErr_SetString(PyExc_TypeError, "only arrays have elements");
        return NULL;
    }
    size = hp_type_size(obj.elem_type, hp_heap_id_size(h));
    list = PyList_New(obj.length);
    for (i = 0; list && i < obj.length; i++) {
        PyObject *v = heap_value(o->heap, obj.elem_type, obj.data + (size_t)i * size);
        if (!v) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, v);
    }
    return list;
}

/* Primitive arrays export their payload as a read-only buffer in its file
 * form: big-endian items ('>i', '>d'...), so numpy.asarray reads it right. */
static int obj_getbuffer(HeapHandle *o, Py_buffer *view, int flags)
{
    static const char *const formats[12] = { NULL, NULL, NULL, NULL, "?", ">H", ">f", ">d", "b", ">h", ">i", ">q" };
    const hp_heap *h = live(o);
    hp_object obj;
    int size;
    if (!h)
        return -1;
    hp_heap_object(h, o->index, &obj);
    if (obj.kind != HP_KIND_PRIM_ARRAY) {
        PyErr_SetString(PyExc_BufferError, "only primitive arrays export their values");
        return -1;
    }
    if (flags & PyBUF_WRITABLE) {
        PyErr_SetString(PyExc_BufferError, "heap values are read-only");
        return -1;
    }
    size = hp_type_size(obj.elem_type, hp_heap_id_size(h));
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

enum { O_ID, O_KIND, O_CLASS, O_CLASS_NAME, O_SIZE, O_HEAP_NAME, O_ROOTS, O_INDEX };

static PyObject *obj_get(HeapHandle *o, void *closure)
{
    const hp_heap *h = live(o);
    uint32_t ord, n, first, k;
    hp_object obj;
    if (!h)
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
        hp_heap_object(h, o->index, &obj);
        if (obj.kind == HP_KIND_PRIM_ARRAY)
            return PyUnicode_FromFormat("%s[]", type_names[obj.elem_type]);
        return PyUnicode_FromString(obj.kind == HP_KIND_CLASS ? "java.lang.Class" : "<unknown class>");
    case O_SIZE: return PyLong_FromUnsignedLongLong(hp_heap_shallow_size(h, o->index));
    case O_HEAP_NAME: {
        const uint8_t *name;
        size_t len;
        hp_heap_object(h, o->index, &obj);
        if (!hp_heap_heap_name(h, obj.heap, &name, &len))
            Py_RETURN_NONE;
        return PyUnicode_DecodeUTF8((const char *)name, (Py_ssize_t)len, "replace");
    }
    case O_ROOTS: {
        PyObject *tuple;
        n = hp_heap_object_roots(h, o->index, &first);
        tuple = PyTuple_New(n);
        for (k = 0; tuple && k < n; k++) {
            hp_root r;
            PyObject *kind;
            hp_heap_root(h, hp_heap_root_by_object(h, first + k), &r);
            if (!(kind = heap_root_kind(r.kind))) {
                Py_CLEAR(tuple);
                break;
            }
            PyTuple_SET_ITEM(tuple, k, kind);
        }
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
    if (!h || o->heap->closing)
        return PyUnicode_FromString("<HeapObject of a closed heap>");
    name = obj_get(o, (void *)(intptr_t)O_CLASS_NAME);
    if (!name)
        return NULL;
    dot = PyUnicode_FindChar(name, '.', 0, PyUnicode_GET_LENGTH(name), -1);
    simple = dot >= 0 ? PyUnicode_Substring(name, dot + 1, PyUnicode_GET_LENGTH(name)) : Py_NewRef(name);
    Py_DECREF(name);
    if (!simple)
        return NULL;
    {
        char tail[64];
        snprintf(tail, sizeof tail, "@0x%llx %llu B>", (unsigned long long)hp_heap_object_id(h, o->index),
                 (unsigned long long)hp_heap_shallow_size(h, o->index));
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
    hp_heap_class(h, c->ord, info);
    return 0;
}

static int is_array_class(const hp_class_info *info) { return info->elem_type != 0; }

enum { C_NAME, C_SUPER, C_LOADER, C_INSTANCE_SIZE, C_COUNT, C_FIELDS, C_ID, C_ORD };

static PyObject *class_get(HeapHandle *c, void *closure)
{
    hp_class_info info;
    const hp_heap *h;
    if (class_info(c, &info) < 0)
        return NULL;
    h = c->heap->index;
    switch ((int)(intptr_t)closure) {
    case C_NAME: return Py_XNewRef(heap_class_name(c->heap, c->ord));
    case C_ID: return PyLong_FromUnsignedLongLong(info.id);
    case C_ORD: return PyLong_FromUnsignedLong(c->ord);
    case C_SUPER: return heap_class_handle(c->heap, info.super_ord);
    case C_LOADER: return handle_or_none(c->heap, info.loader_id);
    case C_INSTANCE_SIZE:
        if (is_array_class(&info))
            Py_RETURN_NONE;
        return PyLong_FromUnsignedLongLong(info.instance_size);
    case C_COUNT: return PyLong_FromUnsignedLongLong(info.instances);
    case C_FIELDS: {
        hp_field_iter it;
        hp_field f;
        PyObject *list = PyList_New(0);
        /* Declared fields only: the iterator starts with the class's own. */
        hp_field_iter_init(&it, h, c->ord);
        while (list && hp_field_next(&it, &f) && f.declaring == c->ord) {
            PyObject *item = make_field(c, &f, NULL);
            if (!item || PyList_Append(list, item) < 0)
                Py_CLEAR(list);
            Py_XDECREF(item);
        }
        return list;
    }
    default: Py_RETURN_NONE;
    }
}

static PyObject *class_statics(HeapHandle *c, PyObject *unused)
{
    const hp_heap *h = live(c);
    (void)unused;
    return h ? statics_of(c, h, c->ord) : NULL;
}

/* 1 at ord and at every class below it. */
static uint8_t *descendants(const hp_heap *h, uint32_t ord, int with_self)
{
    uint32_t n = hp_heap_class_count(h), i;
    uint8_t *mark = PyMem_Calloc(n ? n : 1, 1);
    if (!mark)
        return NULL;
    mark[ord] = 2; /* 2: known to descend, 1: known not to, 0: unknown */
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
    for (i = 0; i < n; i++)
        mark[i] = mark[i] == 2 && (with_self || i != ord);
    return mark;
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
    if (!(mark = descendants(h, c->ord, 0)))
        return PyErr_NoMemory();
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

/* ---- iterators -------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    HeapIndex *heap;
    uint32_t pos;
    uint32_t ord;       /* one class, or HP_NONE for a set or everything */
    uint8_t *classes;   /* a set of classes (PyMem), or NULL */
} HeapIter;

static PyObject *iter_new(HeapIndex *heap, uint32_t ord, uint8_t *classes)
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

PyObject *heap_objects_iter(HeapIndex *heap, PyObject *unused)
{
    (void)unused;
    if (!heap_index(heap))
        return NULL;
    return iter_new(heap, HP_NONE, NULL);
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

static PyObject *class_instances(HeapHandle *c, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "subclasses", NULL };
    int subclasses = 0;
    const hp_heap *h = live(c);
    uint8_t *mark;
    if (!h || !PyArg_ParseTupleAndKeywords(args, kwargs, "|p:instances", keywords, &subclasses))
        return NULL;
    if (!subclasses)
        return iter_new(c->heap, c->ord, NULL);
    if (!(mark = descendants(h, c->ord, 1)))
        return PyErr_NoMemory();
    return iter_new(c->heap, HP_NONE, mark);
}

static PyObject *class_repr(HeapHandle *c)
{
    hp_class_info info;
    if (!c->heap->index || c->heap->closing)
        return PyUnicode_FromString("<HeapClass of a closed heap>");
    char tail[64];
    PyObject *name = heap_class_name(c->heap, c->ord);
    if (!name)
        return NULL;
    hp_heap_class(c->heap->index, c->ord, &info);
    snprintf(tail, sizeof tail, "@0x%llx %llu instances>", (unsigned long long)info.id,
             (unsigned long long)info.instances);
    return PyUnicode_FromFormat("<class %U%s", name, tail);
}

static PyObject *class_repr_html(HeapHandle *c, PyObject *unused)
{
    PyObject *mod, *out;
    (void)unused;
    mod = PyImport_ImportModule("hprofkit._heap");
    if (!mod)
        return NULL;
    out = PyObject_CallMethod(mod, "class_html", "O", (PyObject *)c);
    Py_DECREF(mod);
    return out;
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
    OGET("root_kinds", O_ROOTS, "Kinds of the GC roots holding the object, e.g. ('JNI_GLOBAL',); () if none."),
    { NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef obj_methods[] = {
    { "references", (PyCFunction)obj_references, METH_NOARGS,
      "references($self, /)\n--\n\nOutbound non-null references as Reference(name, target_id, target)." },
    { "referrers", (PyCFunction)obj_referrers, METH_NOARGS,
      "referrers($self, /)\n--\n\nReferences to this object as Referrer(name, source_id, source)\n"
      "(the first call builds the heap's referrer index)." },
    { "fields", (PyCFunction)obj_fields, METH_NOARGS,
      "fields($self, /)\n--\n\nEvery field of an instance, its class's first, as Field(declaring_class,\n"
      "name, type, value); for a class object, its statics." },
    { "as_str", (PyCFunction)obj_as_str, METH_NOARGS,
      "as_str($self, /)\n--\n\nThe text of a java.lang.String (None when its characters are not in the\n"
      "dump); TypeError for other objects." },
    { "values", (PyCFunction)obj_values, METH_NOARGS,
      "values($self, /)\n--\n\nA primitive array's payload: a read-only memoryview into the dump, items\n"
      "big-endian as written ('>i'...), so numpy.asarray(arr.values()) reads it without a copy." },
    { "tolist", (PyCFunction)obj_tolist, METH_NOARGS,
      "tolist($self, /)\n--\n\nAn array's elements as a list of Python values." },
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
    { Py_bf_getbuffer, obj_getbuffer },
    { Py_bf_releasebuffer, obj_releasebuffer },
    { Py_tp_dealloc, obj_dealloc },
    { 0, NULL },
};

static PyType_Spec obj_spec = {
    "hprofkit.HeapObject", sizeof(HeapHandle), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    obj_slots,
};

static PyGetSetDef class_getset[] = {
    CGET("name", C_NAME, "Java name: 'java.lang.String', 'int[]', 'a.B$C'."),
    CGET("class_id", C_ID, "The class id (the id of its class object)."),
    CGET("ordinal", C_ORD, "Position of the class in the heap's class list."),
    CGET("superclass", C_SUPER, "The superclass's HeapClass, or None."),
    CGET("loader", C_LOADER, "The class loader object, or None for the boot loader."),
    CGET("instance_size", C_INSTANCE_SIZE, "Shallow size of an instance under the size model (None for arrays)."),
    CGET("instance_count", C_COUNT, "Objects whose class this is."),
    CGET("fields", C_FIELDS, "Declared instance fields as Field(declaring_class, name, type, None)."),
    { NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef class_methods[] = {
    { "statics", (PyCFunction)class_statics, METH_NOARGS,
      "statics($self, /)\n--\n\nStatic fields with their values, as Field items." },
    { "subclasses", (PyCFunction)class_subclasses, METH_NOARGS,
      "subclasses($self, /)\n--\n\nEvery class below this one (direct and indirect)." },
    { "instances", (PyCFunction)(void (*)(void))class_instances, METH_VARARGS | METH_KEYWORDS,
      "instances($self, /, subclasses=False)\n--\n\nIterate over the objects of this class (and of its\n"
      "subclasses), in id order." },
    { "_repr_html_", (PyCFunction)class_repr_html, METH_NOARGS, NULL },
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
    "hprofkit.HeapClass", sizeof(HeapHandle), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    class_slots,
};

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

int hprof_heap_object_init(PyObject *module, hprof_state *st)
{
    st->heap_object_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &obj_spec, NULL);
    if (!st->heap_object_type)
        return -1;
    st->heap_class_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &class_spec,
                                                                    (PyObject *)st->heap_object_type);
    st->heap_iter_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &iter_spec, NULL);
    if (!st->heap_class_type || !st->heap_iter_type)
        return -1;
    if (PyModule_AddObjectRef(module, "HeapObject", (PyObject *)st->heap_object_type) < 0 ||
        PyModule_AddObjectRef(module, "HeapClass", (PyObject *)st->heap_class_type) < 0)
        return -1;
    return 0;
}
