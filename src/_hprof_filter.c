/* Stream filters for Python: the core's push filters (Tailor encoder and
 * decoder, Android converter) behind one type shaped like zlib's
 * compressobj: feed(data) -> bytes, flush() -> bytes, eof.
 *
 * The three core filters share one shape (new / feed / finish / free with an
 * output sink); one glue type holds any of them and calls the core functions
 * of its kind by name. */
#include "_hprof_parts.h"

#include "core/hp_convert.h"
#include "core/hp_sink.h"
#include "core/hp_tailor.h"

typedef enum { TAILOR_ENCODER, TAILOR_DECODER, CONVERTER } filter_kind;

static const char *const kind_names[] = { "TailorEncoder", "TailorDecoder", "Converter" };

typedef struct {
    PyObject_HEAD
    filter_kind kind;
    union {
        hp_tailor_encoder *encoder;
        hp_tailor_decoder *decoder;
        hp_converter *converter;
        void *any; /* NULL when creation failed */
    } core;
    hp_buf out;          /* output of the current call, handed over as bytes */
    hprof_fd_out to_fd;  /* output of the current call, on its way to a file descriptor */
    unsigned long long bytes_in, bytes_out;
    int finished;
} Filter;

/* One core call: feed `view`, or finish when it is NULL. */
static hp_code core_run(Filter *self, const Py_buffer *view, const hp_sink *sink, hp_error *err)
{
    const uint8_t *data = view ? view->buf : NULL;
    size_t len = view ? (size_t)view->len : 0;
    switch (self->kind) {
    case TAILOR_ENCODER:
        return view ? hp_tailor_encoder_feed(self->core.encoder, data, len, sink, err)
                    : hp_tailor_encoder_finish(self->core.encoder, sink, err);
    case TAILOR_DECODER:
        return view ? hp_tailor_decoder_feed(self->core.decoder, data, len, sink, err)
                    : hp_tailor_decoder_finish(self->core.decoder, sink, err);
    default:
        return view ? hp_converter_feed(self->core.converter, data, len, sink, err)
                    : hp_converter_finish(self->core.converter, sink, err);
    }
}

/* The core call, then the output still batched for fd (when `to_fd`). */
static hp_code run_and_flush(Filter *self, const Py_buffer *view, const hp_sink *sink, int to_fd, hp_error *err)
{
    hp_code rc = core_run(self, view, sink, err);
    if (rc == HP_OK && to_fd && hprof_fd_out_flush(&self->to_fd) < 0)
        rc = HP_E_NOMEM; /* hprof_fd_out_failed() tells it apart */
    return rc;
}

/* Runs one core call on `view` (NULL for finish) with the GIL released when
 * the input is large.  Returns the output as bytes, or, when `fd` >= 0,
 * writes it to fd and returns the number of bytes written. */
static PyObject *filter_run(Filter *self, const Py_buffer *view, int fd)
{
    hprof_state *st = hprof_state_of_type(Py_TYPE(self));
    hp_sink to_bytes = hp_buf_sink(&self->out);
    const hp_sink *sink = &to_bytes;
    hp_error err;
    hp_code rc;
    PyObject *result;

    if (fd >= 0 && !(sink = hprof_fd_out_start(&self->to_fd, fd)))
        return NULL;
    if (self->finished) {
        PyErr_Format(PyExc_ValueError, "%s: flush() was already called", kind_names[self->kind]);
        return NULL;
    }
    self->out.len = 0;
    if (!view || (size_t)view->len >= HPROF_GIL_MINSIZE) {
        Py_BEGIN_ALLOW_THREADS
        rc = run_and_flush(self, view, sink, fd >= 0, &err);
        Py_END_ALLOW_THREADS
    } else {
        rc = run_and_flush(self, view, sink, fd >= 0, &err);
    }
    if (!view)
        self->finished = 1;
    if (rc != HP_OK) {
        self->finished = 1; /* core errors are sticky: no further use */
        if (fd >= 0 && hprof_fd_out_failed(&self->to_fd))
            return hprof_fd_out_raise(&self->to_fd);
        return hprof_raise(st, &err);
    }
    if (view)
        self->bytes_in += (unsigned long long)view->len;
    if (fd >= 0) {
        self->bytes_out += hprof_fd_out_written(&self->to_fd);
        return PyLong_FromUnsignedLongLong(hprof_fd_out_written(&self->to_fd));
    }
    self->bytes_out += self->out.len;
    result = PyBytes_FromStringAndSize((const char *)self->out.data, (Py_ssize_t)self->out.len);
    /* Keep the buffer for the next call unless one call produced a lot. */
    if (self->out.cap > ((size_t)16 << 20))
        hp_buf_free(&self->out);
    return result;
}

PyDoc_STRVAR(filter_feed_doc,
"feed($self, data, /, fd=-1)\n--\n\n"
"Process the next chunk of input (any size); return the output it completed.\n"
"With fd >= 0 the output is written to that file descriptor instead, and the\n"
"number of bytes written is returned.");

static PyObject *filter_feed(Filter *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "", "fd", NULL };
    Py_buffer view;
    PyObject *result;
    int fd = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*|i:feed", keywords, &view, &fd))
        return NULL;
    result = filter_run(self, &view, fd);
    PyBuffer_Release(&view);
    return result;
}

PyDoc_STRVAR(filter_flush_doc,
"flush($self, /, fd=-1)\n--\n\n"
"End the input: return the rest of the output (or write it to fd), or raise\n"
"TruncatedError if the input stopped inside a record.  The filter cannot be\n"
"fed afterwards.");

static PyObject *filter_flush(Filter *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "fd", NULL };
    int fd = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|i:flush", keywords, &fd))
        return NULL;
    return filter_run(self, NULL, fd);
}

PyDoc_STRVAR(filter_counter_doc,
"counter($self, /)\n--\n\n"
"The tag counter Tailor's scripts print, as a dict in first-seen order.");

static PyObject *filter_counter(Filter *self, PyObject *unused)
{
    const hp_tailor_counter *c;
    PyObject *d;
    size_t i;
    (void)unused;
    d = PyDict_New();
    if (!d || self->kind == CONVERTER) /* the converter keeps no counter */
        return d;
    c = self->kind == TAILOR_ENCODER ? hp_tailor_encoder_counter(self->core.encoder)
                                     : hp_tailor_decoder_counter(self->core.decoder);
    for (i = 0; i < c->n; i++) {
        uint64_t count;
        const char *name = hp_tailor_counter_entry(c, i, &count);
        PyObject *value = PyLong_FromUnsignedLongLong(count);
        if (!value || PyDict_SetItemString(d, name, value) < 0) {
            Py_XDECREF(value);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(value);
    }
    return d;
}

static PyObject *filter_get(Filter *self, void *closure)
{
    switch ((int)(intptr_t)closure) {
    case 0: return PyBool_FromLong(self->finished);
    case 1: return PyLong_FromUnsignedLongLong(self->bytes_in);
    default: return PyLong_FromUnsignedLongLong(self->bytes_out);
    }
}

static PyMethodDef filter_methods[] = {
    { "feed", (PyCFunction)(void (*)(void))filter_feed, METH_VARARGS | METH_KEYWORDS, filter_feed_doc },
    { "flush", (PyCFunction)(void (*)(void))filter_flush, METH_VARARGS | METH_KEYWORDS, filter_flush_doc },
    { "counter", (PyCFunction)filter_counter, METH_NOARGS, filter_counter_doc },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef filter_getset[] = {
    { "eof", (getter)filter_get, NULL, "True once flush() was called (or an error was raised).", (void *)0 },
    { "bytes_in", (getter)filter_get, NULL, "Input bytes consumed.", (void *)1 },
    { "bytes_out", (getter)filter_get, NULL, "Output bytes produced.", (void *)2 },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyObject *filter_new(PyTypeObject *type, filter_kind kind, int app_only, int to_standard)
{
    Filter *self = (Filter *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->kind = kind;
    hp_buf_init(&self->out, &hprof_raw_alloc);
    if (kind == TAILOR_ENCODER) {
        hp_tailor_options opts = { app_only };
        self->core.encoder = hp_tailor_encoder_new(&hprof_raw_alloc, &opts);
    } else if (kind == TAILOR_DECODER) {
        self->core.decoder = hp_tailor_decoder_new(&hprof_raw_alloc, NULL);
    } else {
        hp_convert_options opts = { to_standard, app_only };
        self->core.converter = hp_converter_new(&hprof_raw_alloc, &opts);
    }
    if (!self->core.any) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static PyObject *tailor_encoder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "app_only", NULL };
    int app_only = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$p:TailorEncoder", keywords, &app_only))
        return NULL;
    return filter_new(type, TAILOR_ENCODER, app_only, 0);
}

static PyObject *tailor_decoder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { NULL };
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, ":TailorDecoder", keywords))
        return NULL;
    return filter_new(type, TAILOR_DECODER, 0, 0);
}

static PyObject *converter_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "to_standard", "app_only", NULL };
    int to_standard = 1, app_only = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$pp:Converter", keywords, &to_standard, &app_only))
        return NULL;
    return filter_new(type, CONVERTER, app_only, to_standard);
}

static void filter_dealloc(Filter *self)
{
    PyTypeObject *type = Py_TYPE(self);
    switch (self->kind) {
    case TAILOR_ENCODER: hp_tailor_encoder_free(self->core.encoder); break;
    case TAILOR_DECODER: hp_tailor_decoder_free(self->core.decoder); break;
    default: hp_converter_free(self->core.converter); break;
    }
    hp_buf_free(&self->out);
    hprof_fd_out_free(&self->to_fd);
    type->tp_free(self);
    Py_DECREF(type);
}

#define FILTER_SLOTS(new_fn, doc)                                        \
    {                                                                    \
        { Py_tp_doc, doc }, { Py_tp_new, new_fn }, { Py_tp_methods, filter_methods }, \
        { Py_tp_getset, filter_getset }, { Py_tp_dealloc, filter_dealloc }, { 0, NULL } \
    }

static PyType_Slot tailor_encoder_slots[] = FILTER_SLOTS(
    tailor_encoder_new,
    "TailorEncoder(*, app_only=False)\n--\n\n"
    "HPROF in, Tailor's uncompressed mini stream out (byte-identical to encode.py).");
static PyType_Slot tailor_decoder_slots[] = FILTER_SLOTS(
    tailor_decoder_new,
    "TailorDecoder()\n--\n\n"
    "Tailor's uncompressed mini stream in, HPROF out (byte-identical to decode.py).");
static PyType_Slot converter_slots[] = FILTER_SLOTS(
    converter_new,
    "Converter(*, to_standard=True, app_only=False)\n--\n\n"
    "Android HPROF in, standard HPROF out (what hprof-conv does; -z is app_only).");

static PyType_Spec filter_specs[] = {
    { "hprofkit._hprof.TailorEncoder", sizeof(Filter), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
      tailor_encoder_slots },
    { "hprofkit._hprof.TailorDecoder", sizeof(Filter), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
      tailor_decoder_slots },
    { "hprofkit._hprof.Converter", sizeof(Filter), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
      converter_slots },
};

int hprof_filter_init(PyObject *module, hprof_state *st)
{
    static const char *const names[] = { "TailorEncoder", "TailorDecoder", "Converter" };
    (void)st;
    return hprof_add_types(module, filter_specs, names, sizeof filter_specs / sizeof filter_specs[0]);
}
