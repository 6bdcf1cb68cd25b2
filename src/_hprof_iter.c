/* Zero-copy iteration: EventIter walks a buffer with the core parser and
 * yields Record or SubRecord objects that point into that buffer.
 *
 * Lifetimes: the iterator takes one memoryview of the buffer (the export) and
 * shares it with everything it yields, so the buffer (an mmap) cannot be
 * closed under a live record: mmap.close() raises BufferError instead.
 *
 * Every read of the buffer runs under a SIGBUS guard (a mapped file may
 * shrink under us) and within the buffer's bounds, whatever its bytes say
 * now: a Record or SubRecord re-reads the buffer later, when it may have
 * changed. */
#include "_hprof_parts.h"

#include <stdio.h>
#include <string.h>

#include "core/hp_subrecord.h"

enum { MODE_RECORDS, MODE_SUBRECORDS };

typedef struct {
    PyObject_HEAD
    PyObject *base;    /* memoryview of the whole file; NULL once exhausted */
    hp_parser *parser; /* NULL once exhausted */
    hprof_lock lock;   /* one next() at a time */
    int mode;
    uint32_t heap_dump; /* sub-records of this heap dump only; HP_NO_DUMP: of all */
    int tag;            /* sub-records of this tag only; -1: of every tag */
    hp_record record;  /* the record being read: yielded (MODE_RECORDS) once its body is all there */
} EventIter;

typedef struct {
    PyObject_HEAD
    PyObject *base;
    hp_header header;  /* to walk this record's sub-records */
    hp_record rec;
} Record;

typedef struct {
    PyObject_HEAD
    PyObject *base;
    hp_subrecord sub;
    uint32_t heap;     /* heap in effect (HEAP_DUMP_INFO), 0 = default */
    int id_size;
} SubRecord;

static const uint8_t *base_bytes(PyObject *base) { return PyMemoryView_GET_BUFFER(base)->buf; }
static size_t base_len(PyObject *base) { return (size_t)PyMemoryView_GET_BUFFER(base)->len; }

/* ---- EventIter ------------------------------------------------------- */

/* Creates an iterator over base[start:end]; `header` is NULL when the span
 * is a whole file, else the header of the file the record span belongs to.
 * Returns a new reference, or NULL with an exception set. */
static PyObject *event_iter_new(hprof_state *st, PyObject *base, int mode, const hp_header *header,
                                uint64_t start, uint64_t end)
{
    EventIter *it = PyObject_GC_New(EventIter, st->event_iter_type);
    if (!it)
        return NULL;
    it->base = Py_NewRef(base);
    it->mode = mode;
    it->heap_dump = HP_NO_DUMP;
    it->tag = -1;
    it->parser = NULL;
    if (hprof_lock_alloc(&it->lock) < 0) {
        PyObject_GC_Track(it);
        Py_DECREF(it);
        return NULL;
    }
    it->parser = hp_parser_new(&hprof_raw_alloc, mode == MODE_SUBRECORDS ? HP_PARSE_SUBRECORDS : 0);
    if (!it->parser) {
        PyObject_GC_Track(it);
        Py_DECREF(it);
        return PyErr_NoMemory();
    }
    if (header)
        hp_parser_resume(it->parser, header, start);
    hp_parser_feed(it->parser, base_bytes(base) + start, (size_t)(end - start), 1);
    PyObject_GC_Track(it);
    return (PyObject *)it;
}

static void event_iter_finish(EventIter *it)
{
    Py_CLEAR(it->base);
    hp_parser_free(it->parser);
    it->parser = NULL;
}

static PyObject *new_record(hprof_state *st, PyObject *base, const hp_header *header, const hp_record *rec)
{
    Record *r = PyObject_New(Record, st->record_type);
    if (!r)
        return NULL;
    r->base = Py_NewRef(base);
    r->header = *header;
    r->rec = *rec;
    return (PyObject *)r;
}

static PyObject *new_subrecord(hprof_state *st, PyObject *base, const hp_event *ev, int id_size)
{
    SubRecord *s = PyObject_New(SubRecord, st->subrecord_type);
    if (!s)
        return NULL;
    s->base = Py_NewRef(base);
    s->sub = *ev->sub;
    s->heap = ev->heap_id;
    s->id_size = id_size;
    return (PyObject *)s;
}

/* The next Record or SubRecord; NULL at the end (no exception set) or on
 * an error (set).  The iterator's lock is held. */
static PyObject *next_item(EventIter *it, hprof_state *st)
{
    for (;;) {
        hp_event ev;
        hp_error err;
        hp_code rc;
        uint64_t fault;
        if (hprof_parser_next(it->parser, base_bytes(it->base), base_len(it->base), &ev, &err, &rc, &fault) < 0) {
            event_iter_finish(it);
            return hprof_raise_changed(st, fault);
        }
        if (rc != HP_OK) {
            event_iter_finish(it);
            return hprof_raise(st, &err);
        }
        switch (ev.kind) {
        case HP_EV_RECORD:
            it->record = *ev.rec;
            break;
        case HP_EV_RECORD_END: /* the body is all there: its views and sub-records stay in the buffer */
            if (it->mode == MODE_RECORDS)
                return new_record(st, it->base, hp_parser_header(it->parser), &it->record);
            break;
        case HP_EV_SUBRECORD:
            if ((it->heap_dump != HP_NO_DUMP && ev.heap_dump != it->heap_dump) || (it->tag >= 0 && ev.sub->tag != it->tag))
                break;
            return new_subrecord(st, it->base, &ev, hp_parser_header(it->parser)->id_size);
        case HP_EV_END:
        case HP_EV_NEED_INPUT: /* the input was final: cannot happen, but ends cleanly */
            event_iter_finish(it);
            return NULL;
        default:
            break;
        }
    }
}

static PyObject *event_iter_next(EventIter *it)
{
    hprof_state *st = hprof_state_of_type(Py_TYPE(it));
    PyObject *item;
    if (!st || hprof_lock_enter(&it->lock, (PyObject *)it) < 0)
        return NULL;
    item = it->parser ? next_item(it, st) : NULL;
    hprof_lock_leave(&it->lock);
    return item;
}

static int event_iter_traverse(EventIter *it, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(it));
    Py_VISIT(it->base);
    return 0;
}

/* The parser points into base's buffer: both go together. */
static int event_iter_clear(EventIter *it)
{
    event_iter_finish(it);
    return 0;
}

static void event_iter_dealloc(EventIter *it)
{
    PyTypeObject *type = Py_TYPE(it);
    PyObject_GC_UnTrack(it);
    event_iter_finish(it);
    hprof_lock_free(&it->lock);
    PyObject_GC_Del(it);
    Py_DECREF(type);
}

static PyType_Slot event_iter_slots[] = {
    { Py_tp_doc, "Iterator over the records or sub-records of an HPROF buffer." },
    { Py_tp_iter, PyObject_SelfIter },
    { Py_tp_iternext, event_iter_next },
    { Py_tp_traverse, event_iter_traverse },
    { Py_tp_clear, event_iter_clear },
    { Py_tp_dealloc, event_iter_dealloc },
    { 0, NULL },
};

static PyType_Spec event_iter_spec = {
    "hprofkit._hprof.EventIter", sizeof(EventIter), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    event_iter_slots,
};

/* records(buffer) / subrecords(buffer): iterators over a whole file. */
static PyObject *file_iter(PyObject *module, PyObject *buffer, int mode, uint32_t heap_dump, int tag)
{
    PyObject *base, *it;
    base = PyMemoryView_FromObject(buffer);
    if (!base)
        return NULL;
    if (!PyBuffer_IsContiguous(PyMemoryView_GET_BUFFER(base), 'C') || PyMemoryView_GET_BUFFER(base)->itemsize != 1) {
        Py_DECREF(base);
        PyErr_SetString(PyExc_TypeError, "expected a contiguous bytes-like object");
        return NULL;
    }
    it = event_iter_new(hprof_get_state(module), base, mode, NULL, 0, base_len(base));
    Py_DECREF(base);
    if (it) {
        ((EventIter *)it)->heap_dump = heap_dump;
        ((EventIter *)it)->tag = tag;
    }
    return it;
}

PyDoc_STRVAR(records_doc,
"records($module, buffer, /)\n--\n\n"
"Iterate over the top-level records of a whole HPROF file in buffer.\n"
"Records point into buffer (nothing is copied) and hold its export.");

static PyObject *hprof_records(PyObject *module, PyObject *buffer)
{
    return file_iter(module, buffer, MODE_RECORDS, HP_NO_DUMP, -1);
}

PyDoc_STRVAR(subrecords_doc,
"subrecords($module, buffer, /, *, heap_dump=None, tag=None)\n--\n\n"
"Iterate over the heap sub-records of a whole HPROF file in buffer: of\n"
"every heap dump, or of heap dump number heap_dump (from 0) only; of every\n"
"tag, or of sub-tag `tag` only (the others are skipped in C).");

static PyObject *hprof_subrecords(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "", "heap_dump", "tag", NULL };
    PyObject *buffer, *heap_dump = Py_None, *tag_arg = Py_None;
    unsigned long long index = HP_NO_DUMP;
    long tag = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OO:subrecords", keywords, &buffer, &heap_dump, &tag_arg))
        return NULL;
    if (tag_arg != Py_None) {
        tag = PyLong_AsLong(tag_arg);
        if (tag == -1 && PyErr_Occurred())
            return NULL;
        if (tag < 0 || tag > 0xFF) {
            PyErr_SetString(PyExc_ValueError, "tag must be a sub-record tag (0..255)");
            return NULL;
        }
    }
    if (heap_dump != Py_None) {
        index = PyLong_AsUnsignedLongLong(heap_dump);
        if (index == (unsigned long long)-1 && PyErr_Occurred()) {
            if (PyErr_ExceptionMatches(PyExc_OverflowError))
                PyErr_SetString(PyExc_ValueError, "heap_dump must be a heap dump's index (0 or more)");
            return NULL;
        }
        if (index >= HP_NO_DUMP)
            index = HP_NO_DUMP - 1; /* no such dump: nothing to yield */
    }
    return file_iter(module, buffer, MODE_SUBRECORDS, (uint32_t)index, (int)tag);
}

static PyMethodDef iter_functions[] = {
    { "records", (PyCFunction)hprof_records, METH_O, records_doc },
    { "subrecords", (PyCFunction)(void (*)(void))hprof_subrecords, METH_VARARGS | METH_KEYWORDS, subrecords_doc },
    { NULL, NULL, 0, NULL },
};

/* ---- Record ------------------------------------------------------------ */

enum { R_TAG, R_NAME, R_TIME, R_OFFSET, R_LENGTH, R_BODY };

static PyObject *record_get(Record *r, void *closure)
{
    const char *name;
    switch ((int)(intptr_t)closure) {
    case R_TAG: return PyLong_FromLong(r->rec.tag);
    case R_NAME:
        name = hp_tag_name(r->rec.tag);
        if (name)
            return PyUnicode_FromString(name);
        return PyUnicode_FromFormat("UNKNOWN_0x%02X", r->rec.tag);
    case R_TIME: return PyLong_FromUnsignedLong(r->rec.time);
    case R_OFFSET: return PyLong_FromUnsignedLongLong(r->rec.offset);
    case R_LENGTH: return PyLong_FromUnsignedLong(r->rec.length);
    case R_BODY: return hprof_slice(r->base, r->rec.offset + 9, r->rec.length);
    default: Py_RETURN_NONE;
    }
}

#define GETTER(type, fn, name, code, doc) { name, (getter)fn, NULL, doc, (void *)(intptr_t)code }

static PyGetSetDef record_getset[] = {
    GETTER(Record, record_get, "tag", R_TAG, "The record tag (u1)."),
    GETTER(Record, record_get, "name", R_NAME, "The tag's name, e.g. 'HEAP_DUMP_SEGMENT'; UNKNOWN_0xNN for others."),
    GETTER(Record, record_get, "time", R_TIME, "Microseconds since the header timestamp."),
    GETTER(Record, record_get, "offset", R_OFFSET, "Absolute offset of the tag byte."),
    GETTER(Record, record_get, "length", R_LENGTH, "Body length in bytes (the 9-byte record head excluded)."),
    GETTER(Record, record_get, "body", R_BODY, "The body, a memoryview into the dump (zero-copy)."),
    { NULL, NULL, NULL, NULL, NULL },
};

PyDoc_STRVAR(record_subrecords_doc,
"subrecords($self, /)\n--\n\n"
"Iterate over the heap sub-records of this HEAP_DUMP / HEAP_DUMP_SEGMENT.");

static PyObject *record_subrecords(Record *r, PyObject *unused)
{
    uint64_t len = base_len(r->base), start = r->rec.offset, end = start + 9 + (uint64_t)r->rec.length;
    (void)unused;
    if (!hp_is_heap_tag(r->rec.tag)) {
        PyErr_Format(PyExc_TypeError, "%s records hold no heap sub-records",
                     hp_tag_name(r->rec.tag) ? hp_tag_name(r->rec.tag) : "unknown");
        return NULL;
    }
    /* Never past the buffer, whatever the record says: the parser reports
     * a record cut short as truncated. */
    if (end > len)
        end = len;
    if (start > end)
        start = end;
    return event_iter_new(hprof_state_of_type(Py_TYPE(r)), r->base, MODE_SUBRECORDS, &r->header, start, end);
}

static PyMethodDef record_methods[] = {
    { "subrecords", (PyCFunction)record_subrecords, METH_NOARGS, record_subrecords_doc },
    { NULL, NULL, 0, NULL },
};

static PyObject *record_repr(Record *r)
{
    const char *name = hp_tag_name(r->rec.tag);
    return PyUnicode_FromFormat("<Record %s at %llu, %lu bytes>", name ? name : "UNKNOWN",
                                (unsigned long long)r->rec.offset, (unsigned long)r->rec.length);
}

static void record_dealloc(Record *r)
{
    PyTypeObject *type = Py_TYPE(r);
    Py_XDECREF(r->base);
    PyObject_Free(r);
    Py_DECREF(type);
}

static PyType_Slot record_slots[] = {
    { Py_tp_doc, "A top-level HPROF record; its body is a view into the dump." },
    { Py_tp_getset, record_getset },
    { Py_tp_methods, record_methods },
    { Py_tp_repr, record_repr },
    { Py_tp_dealloc, record_dealloc },
    { 0, NULL },
};

static PyType_Spec record_spec = {
    "hprofkit.Record", sizeof(Record), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    record_slots,
};

/* ---- SubRecord ----------------------------------------------------------- */

enum {
    S_TAG, S_NAME, S_OFFSET, S_LENGTH, S_RAW, S_DATA, S_ID, S_CLASS_ID, S_SUPER_ID, S_LOADER_ID,
    S_SIGNERS_ID, S_PROTECTION_DOMAIN_ID, S_REF, S_THREAD_SERIAL, S_FRAME, S_STACK_SERIAL, S_HEAP,
    S_HEAP_ID, S_NAME_ID, S_COUNT, S_ELEM_TYPE, S_INSTANCE_SIZE, S_CONSTANTS, S_STATICS, S_FIELDS
};

static int is_object(int tag) { return hp_subrecord_has_payload(tag) || tag == HP_SUB_PRIM_ARRAY_NODATA; }

static int has_thread(int tag)
{
    switch (tag) {
    case HP_SUB_ROOT_JNI_LOCAL: case HP_SUB_ROOT_JAVA_FRAME: case HP_SUB_ROOT_NATIVE_STACK:
    case HP_SUB_ROOT_THREAD_BLOCK: case HP_SUB_ROOT_THREAD_OBJECT: case HP_SUB_ROOT_JNI_MONITOR:
        return 1;
    default:
        return 0;
    }
}

/* A field value of basic type `type`, read as `bits` (big-endian), as a Python object. */
static PyObject *value_of(uint64_t bits, int type)
{
    union { uint32_t u; float f; } f32;
    union { uint64_t u; double d; } f64;
    switch (type) {
    case HP_T_OBJECT: return PyLong_FromUnsignedLongLong(bits);
    case HP_T_BOOLEAN: return PyBool_FromLong(bits != 0);
    case HP_T_CHAR: return PyUnicode_FromOrdinal((int)bits);
    case HP_T_FLOAT: f32.u = (uint32_t)bits; return PyFloat_FromDouble(f32.f);
    case HP_T_DOUBLE: f64.u = bits; return PyFloat_FromDouble(f64.d);
    case HP_T_BYTE: return PyLong_FromLong((int8_t)bits);
    case HP_T_SHORT: return PyLong_FromLong((int16_t)bits);
    case HP_T_INT: return PyLong_FromLong((int32_t)bits);
    case HP_T_LONG: return PyLong_FromLongLong((int64_t)bits);
    default: Py_RETURN_NONE;
    }
}

/* One entry of a CLASS_DUMP table: (key, type[, value]). */
typedef struct {
    uint64_t key, bits;
    int type;
} table_entry;

/* A CLASS_DUMP read from the buffer: its layout, and one of its tables. */
typedef struct {
    const uint8_t *head;  /* the CLASS_DUMP's tag byte */
    size_t len;           /* its length: nothing past it is read */
    int id_size;
    int which;            /* S_CONSTANTS, S_STATICS or S_FIELDS: the table to read; else none */
    hp_class_layout layout;
    table_entry *entries; /* PyMem_Raw, `count` of them */
    uint16_t count;
    hp_code rc;           /* HP_E_CORRUPT: the tables no longer fit (the buffer changed) */
} class_read;

/* Reads what `ctx` (a class_read) asks for; runs under the SIGBUS guard. */
static void read_class(void *ctx)
{
    class_read *c = ctx;
    const uint8_t *p, *end = c->head + c->len;
    int key_size = c->which == S_CONSTANTS ? 2 : c->id_size, has_value = c->which != S_FIELDS;
    uint16_t i, n;

    c->rc = hp_class_layout_decode(c->head, c->len, c->id_size, &c->layout);
    if (c->rc != HP_OK)
        return;
    if (c->which == S_CONSTANTS)
        p = c->head + c->layout.const_off, n = c->layout.n_const;
    else if (c->which == S_STATICS)
        p = c->head + c->layout.statics_off, n = c->layout.n_statics;
    else if (c->which == S_FIELDS)
        p = c->head + c->layout.fields_off, n = c->layout.n_fields;
    else
        return;
    c->entries = PyMem_RawMalloc(n ? n * sizeof *c->entries : 1);
    if (!c->entries) {
        c->rc = HP_E_NOMEM;
        return;
    }
    p += 2;
    /* The layout fitted a moment ago; every entry is checked again all the
     * same, for a buffer that another thread is changing. */
    for (i = 0; i < n; i++) {
        table_entry *e = &c->entries[i];
        int size;
        if (end - p < key_size + 1)
            goto changed;
        e->key = key_size == 2 ? hp_be16(p) : hp_read_id(p, c->id_size);
        e->type = p[key_size];
        e->bits = 0;
        p += key_size + 1;
        if (has_value) {
            size = hp_type_size(e->type, c->id_size);
            if (size == 0 || end - p < size)
                goto changed;
            e->bits = hp_be_bytes(p, (unsigned)size);
            p += size;
        }
    }
    c->count = n;
    return;
changed:
    c->rc = HP_E_CORRUPT;
}

/* Reads the CLASS_DUMP `s` (and its table `which`) into *c; 0, or -1 with
 * an exception set.  c->entries is the caller's to free. */
static int class_read_of(SubRecord *s, int which, class_read *c)
{
    hprof_state *st = hprof_state_of_type(Py_TYPE(s));
    size_t room = base_len(s->base) - (size_t)s->sub.offset;
    uint64_t fault;
    hp_error err;

    memset(c, 0, sizeof *c);
    c->head = base_bytes(s->base) + s->sub.offset;
    c->len = s->sub.length < room ? (size_t)s->sub.length : room;
    c->id_size = s->id_size;
    c->which = which;
    if (hprof_guard_call(base_bytes(s->base), base_len(s->base), read_class, c, &fault) < 0) {
        PyMem_RawFree(c->entries);
        hprof_raise_changed(st, fault);
        return -1;
    }
    if (c->rc == HP_OK)
        return 0;
    PyMem_RawFree(c->entries);
    c->entries = NULL;
    if (c->rc == HP_E_NOMEM) {
        PyErr_NoMemory();
        return -1;
    }
    hp_fail(&err, HP_E_CORRUPT, s->sub.offset, HP_SUB_CLASS_DUMP, 1, 0, 0,
            "its tables no longer fit its length: the buffer changed after it was read");
    hprof_raise(st, &err);
    return -1;
}

/* One CLASS_DUMP table as a list of tuples: (key, type[, value]). */
static PyObject *class_table(SubRecord *s, int which)
{
    class_read c;
    PyObject *list;
    uint16_t i;
    if (class_read_of(s, which, &c) < 0)
        return NULL;
    list = PyList_New(c.count);
    for (i = 0; list && i < c.count; i++) {
        const table_entry *e = &c.entries[i];
        PyObject *item;
        if (which == S_FIELDS)
            item = Py_BuildValue("Ki", (unsigned long long)e->key, e->type);
        else
            item = Py_BuildValue("KiN", (unsigned long long)e->key, e->type, value_of(e->bits, e->type));
        if (!item) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, item);
    }
    PyMem_RawFree(c.entries);
    return list;
}

static PyObject *subrecord_get(SubRecord *s, void *closure)
{
    const hp_subrecord *sub = &s->sub;
    int tag = sub->tag;
    int is_class = tag == HP_SUB_CLASS_DUMP;
    class_read c;
    const char *name;

    switch ((int)(intptr_t)closure) {
    case S_TAG: return PyLong_FromLong(tag);
    case S_NAME:
        name = hp_subtag_name(tag);
        return PyUnicode_FromString(name ? name : "UNKNOWN");
    case S_OFFSET: return PyLong_FromUnsignedLongLong(sub->offset);
    case S_LENGTH: return PyLong_FromUnsignedLongLong(sub->length);
    case S_RAW: return hprof_slice(s->base, sub->offset, sub->length);
    case S_DATA:
        if (hp_subrecord_has_payload(tag))
            return hprof_slice(s->base, sub->offset + sub->head_len, sub->payload_len);
        break;
    case S_ID:
        if (hp_subrecord_has_id(tag))
            return PyLong_FromUnsignedLongLong(sub->id);
        break;
    case S_CLASS_ID:
        if (hp_subrecord_has_class(tag))
            return PyLong_FromUnsignedLongLong(sub->class_id);
        break;
    case S_SUPER_ID:
        if (is_class)
            return PyLong_FromUnsignedLongLong(sub->class_id);
        break;
    case S_LOADER_ID:
        if (is_class)
            return PyLong_FromUnsignedLongLong(sub->ref);
        break;
    case S_SIGNERS_ID: case S_PROTECTION_DOMAIN_ID:
        if (!is_class)
            break;
        if (class_read_of(s, -1, &c) < 0)
            return NULL;
        return PyLong_FromUnsignedLongLong((intptr_t)closure == S_SIGNERS_ID ? c.layout.signers
                                                                              : c.layout.protection_domain);
    case S_REF:
        if (tag == HP_SUB_ROOT_JNI_GLOBAL)
            return PyLong_FromUnsignedLongLong(sub->ref);
        break;
    case S_THREAD_SERIAL:
        if (has_thread(tag))
            return PyLong_FromUnsignedLong(sub->serial);
        break;
    case S_FRAME:
        if (tag == HP_SUB_ROOT_JNI_LOCAL || tag == HP_SUB_ROOT_JAVA_FRAME || tag == HP_SUB_ROOT_JNI_MONITOR)
            return PyLong_FromLong((int32_t)sub->aux);
        break;
    case S_STACK_SERIAL:
        if (is_object(tag) || is_class)
            return PyLong_FromUnsignedLong(sub->serial);
        if (tag == HP_SUB_ROOT_THREAD_OBJECT)
            return PyLong_FromUnsignedLong(sub->aux);
        break;
    case S_HEAP: return PyLong_FromUnsignedLong(s->heap);
    case S_HEAP_ID:
        if (tag == HP_SUB_HEAP_DUMP_INFO)
            return PyLong_FromUnsignedLong(sub->aux);
        break;
    case S_NAME_ID:
        if (tag == HP_SUB_HEAP_DUMP_INFO)
            return PyLong_FromUnsignedLongLong(sub->ref);
        break;
    case S_COUNT:
        if (is_object(tag))
            return PyLong_FromUnsignedLong(sub->count);
        break;
    case S_ELEM_TYPE:
        if (is_object(tag) && tag != HP_SUB_INSTANCE_DUMP)
            return PyLong_FromLong(sub->elem_type);
        break;
    case S_INSTANCE_SIZE:
        if (is_class)
            return PyLong_FromUnsignedLong(sub->aux);
        break;
    case S_CONSTANTS: case S_STATICS: case S_FIELDS:
        if (!is_class)
            break;
        return class_table(s, (int)(intptr_t)closure);
    default:
        break;
    }
    Py_RETURN_NONE;
}

static PyGetSetDef subrecord_getset[] = {
    GETTER(SubRecord, subrecord_get, "tag", S_TAG, "The sub-record tag (u1)."),
    GETTER(SubRecord, subrecord_get, "name", S_NAME, "The tag's name, e.g. 'INSTANCE_DUMP'."),
    GETTER(SubRecord, subrecord_get, "offset", S_OFFSET, "Absolute offset of the tag byte."),
    GETTER(SubRecord, subrecord_get, "length", S_LENGTH, "Total length, tag included."),
    GETTER(SubRecord, subrecord_get, "raw", S_RAW, "The whole sub-record, a memoryview into the dump."),
    GETTER(SubRecord, subrecord_get, "data", S_DATA, "Instance field bytes or array elements (memoryview), else None."),
    GETTER(SubRecord, subrecord_get, "id", S_ID, "Object, class, array or root object id."),
    GETTER(SubRecord, subrecord_get, "class_id", S_CLASS_ID, "INSTANCE_DUMP: its class; OBJECT_ARRAY_DUMP: the array class."),
    GETTER(SubRecord, subrecord_get, "super_id", S_SUPER_ID, "CLASS_DUMP: super class id."),
    GETTER(SubRecord, subrecord_get, "loader_id", S_LOADER_ID, "CLASS_DUMP: class loader id."),
    GETTER(SubRecord, subrecord_get, "signers_id", S_SIGNERS_ID, "CLASS_DUMP: signers id."),
    GETTER(SubRecord, subrecord_get, "protection_domain_id", S_PROTECTION_DOMAIN_ID, "CLASS_DUMP: protection domain id."),
    GETTER(SubRecord, subrecord_get, "ref", S_REF, "ROOT_JNI_GLOBAL: the JNI global reference id."),
    GETTER(SubRecord, subrecord_get, "thread_serial", S_THREAD_SERIAL, "Roots tied to a thread: its serial."),
    GETTER(SubRecord, subrecord_get, "frame", S_FRAME, "JNI_LOCAL / JAVA_FRAME: frame number; JNI_MONITOR: stack depth (-1 = none)."),
    GETTER(SubRecord, subrecord_get, "stack_serial", S_STACK_SERIAL, "Stack-trace serial of objects, classes and thread objects."),
    GETTER(SubRecord, subrecord_get, "heap", S_HEAP, "Heap id in effect (Android HEAP_DUMP_INFO; 0 = default)."),
    GETTER(SubRecord, subrecord_get, "heap_id", S_HEAP_ID, "HEAP_DUMP_INFO: the heap it switches to."),
    GETTER(SubRecord, subrecord_get, "name_id", S_NAME_ID, "HEAP_DUMP_INFO: string id of the heap name."),
    GETTER(SubRecord, subrecord_get, "count", S_COUNT, "Arrays: element count; INSTANCE_DUMP: field bytes."),
    GETTER(SubRecord, subrecord_get, "elem_type", S_ELEM_TYPE, "Arrays: element type code (2 = object)."),
    GETTER(SubRecord, subrecord_get, "instance_size", S_INSTANCE_SIZE, "CLASS_DUMP: instance size in bytes."),
    GETTER(SubRecord, subrecord_get, "constants", S_CONSTANTS, "CLASS_DUMP: [(pool index, type, value)]."),
    GETTER(SubRecord, subrecord_get, "statics", S_STATICS, "CLASS_DUMP: [(name id, type, value)]."),
    GETTER(SubRecord, subrecord_get, "fields", S_FIELDS, "CLASS_DUMP: instance fields [(name id, type)]."),
    { NULL, NULL, NULL, NULL, NULL },
};

static PyObject *subrecord_repr(SubRecord *s)
{
    const char *name = hp_subtag_name(s->sub.tag);
    char text[160]; /* PyUnicode_FromFormat has no %llx */
    snprintf(text, sizeof text, "<SubRecord %s at %llu, %llu bytes, id=0x%llx>", name ? name : "UNKNOWN",
             (unsigned long long)s->sub.offset, (unsigned long long)s->sub.length, (unsigned long long)s->sub.id);
    return PyUnicode_FromString(text);
}

static void subrecord_dealloc(SubRecord *s)
{
    PyTypeObject *type = Py_TYPE(s);
    Py_XDECREF(s->base);
    PyObject_Free(s);
    Py_DECREF(type);
}

static PyType_Slot subrecord_slots[] = {
    { Py_tp_doc, "A heap sub-record with its decoded fixed fields; raw/data are views into the dump." },
    { Py_tp_getset, subrecord_getset },
    { Py_tp_repr, subrecord_repr },
    { Py_tp_dealloc, subrecord_dealloc },
    { 0, NULL },
};

static PyType_Spec subrecord_spec = {
    "hprofkit.SubRecord", sizeof(SubRecord), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    subrecord_slots,
};

int hprof_iter_init(PyObject *module, hprof_state *st)
{
    st->event_iter_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &event_iter_spec, NULL);
    st->record_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &record_spec, NULL);
    st->subrecord_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &subrecord_spec, NULL);
    if (!st->event_iter_type || !st->record_type || !st->subrecord_type)
        return -1;
    if (PyModule_AddObjectRef(module, "Record", (PyObject *)st->record_type) < 0 ||
        PyModule_AddObjectRef(module, "SubRecord", (PyObject *)st->subrecord_type) < 0)
        return -1;
    return PyModule_AddFunctions(module, iter_functions);
}
