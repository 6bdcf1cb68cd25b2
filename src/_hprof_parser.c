/* hprofkit.Parser: the core push parser for Python callers, shaped like
 * zlib's decompressobj.  feed() takes chunks of any size and returns the
 * structure they completed, so a dump can be followed while it is written or
 * read from a pipe. */
#include "_hprof_parts.h"

typedef struct {
    PyObject_HEAD
    hp_parser *parser;
    hprof_lock lock; /* one feed() or finish() at a time */
    int subrecords;
    int finished;
} Parser;

/* Appends one tuple per structural event of the current chunk, `view`, to
 * `out`: ("header", magic, id_size, timestamp), ("record", tag, offset,
 * length), ("subrecord", tag, offset, length, id), ("end",).  0, or -1 with
 * an exception. */
static int drain(Parser *self, hprof_state *st, const Py_buffer *view, PyObject *out)
{
    for (;;) {
        hp_event ev;
        hp_error err;
        PyObject *item = NULL;
        const hp_header *h;
        hp_code rc;
        uint64_t fault;
        if (hprof_parser_next(self->parser, view->buf, (size_t)view->len, &ev, &err, &rc, &fault) < 0) {
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
        case HP_EV_HEADER:
            h = hp_parser_header(self->parser);
            item = Py_BuildValue("(ssiK)", "header", h->magic, h->id_size, (unsigned long long)h->timestamp);
            break;
        case HP_EV_RECORD:
            item = Py_BuildValue("(siKk)", "record", ev.rec->tag, (unsigned long long)ev.rec->offset,
                                 (unsigned long)ev.rec->length);
            break;
        case HP_EV_SUBRECORD:
            item = Py_BuildValue("(siKKK)", "subrecord", ev.sub->tag, (unsigned long long)ev.sub->offset,
                                 (unsigned long long)ev.sub->length, (unsigned long long)ev.sub->id);
            break;
        case HP_EV_END:
            item = Py_BuildValue("(s)", "end");
            if (item && PyList_Append(out, item) < 0) {
                Py_DECREF(item);
                return -1;
            }
            Py_XDECREF(item);
            return item ? 0 : -1;
        default:
            continue;
        }
        if (!item || PyList_Append(out, item) < 0) {
            Py_XDECREF(item);
            return -1;
        }
        Py_DECREF(item);
    }
}

/* The parser's lock is held. */
static PyObject *parser_push_locked(Parser *self, hprof_state *st, PyObject *data, int last)
{
    Py_buffer view;
    PyObject *out;
    if (self->finished) {
        PyErr_SetString(PyExc_ValueError, "the parser was already finished");
        return NULL;
    }
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    out = PyList_New(0);
    if (out) {
        hp_parser_feed(self->parser, view.buf, (size_t)view.len, last);
        if (drain(self, st, &view, out) < 0)
            Py_CLEAR(out);
    }
    PyBuffer_Release(&view);
    if (last || !out)
        self->finished = 1; /* errors are sticky in the core too */
    return out;
}

static PyObject *parser_push(Parser *self, PyObject *data, int last)
{
    hprof_state *st = hprof_state_of_type(Py_TYPE(self));
    PyObject *out;
    if (!st || hprof_lock_enter(&self->lock, (PyObject *)self) < 0)
        return NULL;
    out = parser_push_locked(self, st, data, last);
    hprof_lock_leave(&self->lock);
    return out;
}

PyDoc_STRVAR(parser_feed_doc,
"feed($self, data, /)\n--\n\n"
"Parse the next chunk; return the list of structures it completed.");

static PyObject *parser_feed(Parser *self, PyObject *data) { return parser_push(self, data, 0); }

PyDoc_STRVAR(parser_finish_doc,
"finish($self, /)\n--\n\n"
"Declare the end of the input: TruncatedError unless it ended on a record\n"
"boundary; returns the last structures (ending with ('end',)).");

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
    { Py_tp_dealloc, parser_dealloc },
    { 0, NULL },
};

static PyType_Spec parser_spec = {
    "hprofkit.Parser", sizeof(Parser), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE, parser_slots,
};

int hprof_parser_init(PyObject *module, hprof_state *st)
{
    static const char *const names[] = { "Parser" };
    (void)st;
    return hprof_add_types(module, &parser_spec, names, 1);
}
