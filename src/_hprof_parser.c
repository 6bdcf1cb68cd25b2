/* hprofkit.Parser: the core push parser for Python callers, shaped like
 * zlib's decompressobj.  feed() takes chunks of any size and returns the
 * structure they completed, so a dump can be followed while it is written or
 * read from a pipe. */
#include "_hprof_parts.h"

#include <stdio.h>

typedef struct {
    PyObject_HEAD
    hp_parser *parser;
    hprof_lock lock; /* one feed() or finish() at a time */
    int subrecords;
    int finished;
} Parser;

enum { EV_HEADER, EV_RECORD, EV_SUBRECORD, EV_END }; /* index into hprof_state.event_types */

/* A new event of type `kind` (a named tuple of hprofkit._events, handed
 * down by the package: _hprof_register.c checks its shape) with `n`
 * fields after `kind`, all stolen (NULL ones make it fail).  The tuple is
 * allocated as its type and filled in place, as a struct sequence is: no
 * Python-level constructor runs per event. */
static PyObject *make_event(hprof_state *st, int kind, Py_ssize_t n, PyObject *const *fields)
{
    PyTypeObject *type = (PyTypeObject *)st->event_types[kind];
    PyObject *event = NULL;
    Py_ssize_t i;
    for (i = 0; i < n && fields[i]; i++)
        ;
    if (i == n)
        event = type->tp_alloc(type, n + 1);
    if (!event) {
        for (i = 0; i < n; i++)
            Py_XDECREF(fields[i]);
        return NULL;
    }
    PyTuple_SET_ITEM(event, 0, Py_NewRef(st->event_kinds[kind]));
    for (i = 0; i < n; i++)
        PyTuple_SET_ITEM(event, i + 1, fields[i]);
    /* Its fields are numbers, strings, None and views of bytes: none can
     * refer back to it, so no cycle passes through it and the collector need
     * not scan the thousands of events a chunk makes (it stops scanning
     * tuples of atoms too, but only once they have survived a collection). */
    PyObject_GC_UnTrack(event);
    return event;
}

/* The chunk being fed: its bytes, and a read-only memoryview of them for
 * payload views, made on first need (a copy unless the chunk is bytes,
 * so a buffer the caller reuses cannot change a payload already given;
 * copied under the SIGBUS guard, as the chunk may be a mapping). */
typedef struct {
    PyObject *data;
    Py_buffer *view;
    PyObject *base;
} chunk;

static PyObject *chunk_base(hprof_state *st, chunk *c)
{
    if (!c->base) {
        if (PyBytes_CheckExact(c->data)) {
            c->base = PyMemoryView_FromObject(c->data);
        } else {
            size_t len = (size_t)c->view->len;
            PyObject *copy = hprof_guarded_bytes(st, c->view->buf, len, c->view->buf, len);
            c->base = copy ? PyMemoryView_FromObject(copy) : NULL;
            Py_XDECREF(copy);
        }
    }
    return c->base;
}

/* A sub-record's payload as a read-only memoryview, or None when it has
 * none or when only part of it is here (a long sub-record split across
 * chunks streams its payload instead). */
static PyObject *payload_of(hprof_state *st, chunk *c, const hp_event *ev)
{
    const hp_subrecord *sub = ev->sub;
    const uint8_t *start = (const uint8_t *)c->view->buf;
    PyObject *base, *copy, *view;
    if (!hp_subrecord_has_payload(sub->tag) || ev->len < sub->length)
        Py_RETURN_NONE;
    if (ev->data >= start && ev->data < start + c->view->len) {
        base = chunk_base(st, c);
        return base ? hprof_slice(base, (uint64_t)(ev->data - start) + sub->head_len, sub->payload_len) : NULL;
    }
    /* Delivered from the parser's carry buffer: at most HP_WHOLE_MAX bytes. */
    copy = PyBytes_FromStringAndSize((const char *)ev->data + sub->head_len, (Py_ssize_t)sub->payload_len);
    view = copy ? PyMemoryView_FromObject(copy) : NULL;
    Py_XDECREF(copy);
    return view;
}

static PyObject *optional_id(int present, uint64_t id)
{
    if (!present)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(id);
}

/* Appends the event named tuple of each structural event of the current
 * chunk to `out` (hprofkit._events).  0, or -1 with an exception. */
static int drain(Parser *self, hprof_state *st, chunk *c, PyObject *out)
{
    for (;;) {
        hp_event ev;
        hp_error err;
        PyObject *item = NULL;
        const hp_header *h;
        hp_code rc;
        uint64_t fault;
        if (hprof_parser_next(self->parser, c->view->buf, (size_t)c->view->len, &ev, &err, &rc, &fault) < 0) {
            hprof_raise_changed(st, fault);
            return -1;
        }
        if (rc != HP_OK) {
            hprof_raise(st, &err);
            return -1;
        }
        switch (ev.kind) {
        case HP_EV_NEED_INPUT:
            return 0;
        case HP_EV_HEADER: {
            PyObject *f[3];
            h = hp_parser_header(self->parser);
            f[0] = PyUnicode_FromString(h->magic);
            f[1] = PyLong_FromLong(h->id_size);
            f[2] = PyLong_FromUnsignedLongLong(h->timestamp);
            item = make_event(st, EV_HEADER, 3, f);
            break;
        }
        case HP_EV_RECORD: {
            PyObject *f[3];
            f[0] = PyLong_FromLong(ev.rec->tag);
            f[1] = PyLong_FromUnsignedLongLong(ev.rec->offset);
            f[2] = PyLong_FromUnsignedLong(ev.rec->length);
            item = make_event(st, EV_RECORD, 3, f);
            break;
        }
        case HP_EV_SUBRECORD: {
            PyObject *f[7];
            f[0] = PyLong_FromLong(ev.sub->tag);
            f[1] = PyLong_FromUnsignedLongLong(ev.sub->offset);
            f[2] = PyLong_FromUnsignedLongLong(ev.sub->length);
            f[3] = optional_id(hp_subrecord_has_id(ev.sub->tag), ev.sub->id);
            f[4] = optional_id(hp_subrecord_has_class(ev.sub->tag), ev.sub->class_id);
            f[5] = PyLong_FromUnsignedLong(ev.heap_id);
            f[6] = payload_of(st, c, &ev);
            item = make_event(st, EV_SUBRECORD, 7, f);
            break;
        }
        case HP_EV_END:
            item = make_event(st, EV_END, 0, NULL);
            break;
        default:
            continue;
        }
        if (!item || PyList_Append(out, item) < 0) {
            Py_XDECREF(item);
            return -1;
        }
        Py_DECREF(item);
        if (ev.kind == HP_EV_END)
            return 0;
    }
}

/* The parser's lock is held. */
static PyObject *parser_push_locked(Parser *self, hprof_state *st, PyObject *data, int last)
{
    Py_buffer view;
    PyObject *out;
    chunk c;
    if (self->finished) {
        PyErr_SetString(PyExc_ValueError, "the parser was already finished");
        return NULL;
    }
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    c.data = data;
    c.view = &view;
    c.base = NULL;
    out = PyList_New(0);
    if (out) {
        hp_parser_feed(self->parser, view.buf, (size_t)view.len, last);
        if (drain(self, st, &c, out) < 0)
            Py_CLEAR(out);
    }
    Py_XDECREF(c.base);
    PyBuffer_Release(&view);
    if (last || !out)
        self->finished = 1; /* errors are sticky in the core too */
    return out;
}

static PyObject *parser_push(Parser *self, PyObject *data, int last)
{
    hprof_state *st = hprof_state_of_type(Py_TYPE(self));
    PyObject *out;
    if (!st)
        return NULL;
    if (!st->event_types[EV_END]) {
        PyErr_SetString(PyExc_RuntimeError, "hprofkit._hprof.Parser: the package did not register its event "
                        "types (import hprofkit first)");
        return NULL;
    }
    if (hprof_lock_enter(&self->lock, (PyObject *)self) < 0)
        return NULL;
    out = parser_push_locked(self, st, data, last);
    hprof_lock_leave(&self->lock);
    return out;
}

PyDoc_STRVAR(parser_feed_doc,
"feed($self, data, /)\n--\n\n"
"Parse the next chunk; return the list of events it completed\n"
"(HeaderEvent, RecordEvent, SubrecordEvent: see hprofkit._events).");

static PyObject *parser_feed(Parser *self, PyObject *data) { return parser_push(self, data, 0); }

PyDoc_STRVAR(parser_finish_doc,
"finish($self, /)\n--\n\n"
"Declare the end of the input: TruncatedError unless it ended on a record\n"
"boundary; returns the last events (ending with EndEvent('end')).");

static PyObject *parser_finish(Parser *self, PyObject *unused)
{
    PyObject *empty = PyBytes_FromStringAndSize(NULL, 0), *out;
    (void)unused;
    if (!empty)
        return NULL;
    out = parser_push(self, empty, 1);
    Py_DECREF(empty);
    return out;
}

static PyObject *parser_get_offset(Parser *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(hp_parser_offset(self->parser));
}

static PyObject *parser_get_eof(Parser *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->finished);
}

static PyObject *parser_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "subrecords", NULL };
    int subrecords = 1;
    Parser *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$p:Parser", keywords, &subrecords))
        return NULL;
    self = (Parser *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    if (hprof_lock_alloc(&self->lock) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->subrecords = subrecords;
    self->parser = hp_parser_new(&hprof_raw_alloc, subrecords ? HP_PARSE_SUBRECORDS : 0);
    if (!self->parser) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static PyObject *parser_repr(Parser *self)
{
    const hp_header *h = hp_parser_header(self->parser);
    char text[200]; /* PyUnicode_FromFormat has no %llu */
    snprintf(text, sizeof text, "<hprofkit.Parser %s%s%s, %llu bytes parsed, subrecords=%s%s>",
             h ? h->magic : "(no header yet)", h ? " id_size=" : "", h ? (h->id_size == 8 ? "8" : "4") : "",
             (unsigned long long)hp_parser_offset(self->parser), self->subrecords ? "True" : "False",
             self->finished ? ", finished" : "");
    return PyUnicode_FromString(text);
}

static void parser_dealloc(Parser *self)
{
    PyTypeObject *type = Py_TYPE(self);
    hp_parser_free(self->parser);
    hprof_lock_free(&self->lock);
    type->tp_free(self);
    Py_DECREF(type);
}

static PyMethodDef parser_methods[] = {
    { "feed", (PyCFunction)parser_feed, METH_O, parser_feed_doc },
    { "finish", (PyCFunction)parser_finish, METH_NOARGS, parser_finish_doc },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef parser_getset[] = {
    { "offset", (getter)parser_get_offset, NULL, "Bytes delivered in complete structures so far.", NULL },
    { "eof", (getter)parser_get_eof, NULL, "True once finish() was called (or an error was raised).", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot parser_slots[] = {
    { Py_tp_doc, "Parser(*, subrecords=True)\n--\n\n"
                 "Push parser: feed HPROF chunks of any size, get the records and\n"
                 "sub-records they complete.  Calls from several threads take turns." },
    { Py_tp_new, parser_new },
    { Py_tp_methods, parser_methods },
    { Py_tp_getset, parser_getset },
    { Py_tp_repr, parser_repr },
    { Py_tp_dealloc, parser_dealloc },
    { 0, NULL },
};

static PyType_Spec parser_spec = {
    "hprofkit.Parser", sizeof(Parser), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE, parser_slots,
};

int hprof_parser_init(PyObject *module, hprof_state *st)
{
    static const char *const names[] = { "Parser" };
    static const char *const kinds[] = { "header", "record", "subrecord", "end" };
    size_t i;
    for (i = 0; i < 4; i++)
        if (!(st->event_kinds[i] = PyUnicode_InternFromString(kinds[i])))
            return -1;
    return hprof_add_types(module, &parser_spec, names, 1);
}
