/* Stream filters for Python: the core's push filters (Tailor encoder and
 * decoder, Android converter) behind one type shaped like zlib's
 * compressobj: feed(data) -> bytes, flush() -> bytes, eof.
 *
 * The three core filters share one shape (new / feed / finish / free with an
 * output sink), so one glue type drives them through a small table. */
#include "_hprof.h"

#include <errno.h>
#include <unistd.h>

#include "core/hp_convert.h"
#include "core/hp_sink.h"
#include "core/hp_tailor.h"

typedef struct filter_ops {
    const char *name;
    void *(*create)(const hp_alloc *alloc, int app_only, int to_standard);
    void (*destroy)(void *f);
    hp_code (*feed)(void *f, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err);
    hp_code (*finish)(void *f, const hp_sink *out, hp_error *err);
    const hp_tailor_counter *(*counter)(const void *f); /* NULL when the filter keeps none */
} filter_ops;

static void *tailor_encoder_create(const hp_alloc *alloc, int app_only, int to_standard)
{
    hp_tailor_options opts = { app_only };
    (void)to_standard;
    return hp_tailor_encoder_new(alloc, &opts);
}

static void *tailor_decoder_create(const hp_alloc *alloc, int app_only, int to_standard)
{
    (void)app_only;
    (void)to_standard;
    return hp_tailor_decoder_new(alloc, NULL);
}

static void *converter_create(const hp_alloc *alloc, int app_only, int to_standard)
{
    hp_convert_options opts = { to_standard, app_only };
    return hp_converter_new(alloc, &opts);
}

static const hp_tailor_counter *encoder_counter(const void *f) { return hp_tailor_encoder_counter(f); }
static const hp_tailor_counter *decoder_counter(const void *f) { return hp_tailor_decoder_counter(f); }

/* Typed wrappers: calling a function through a pointer of another type is undefined. */
#define FILTER_WRAPPERS(prefix, core)                                                           \
    static void prefix##_destroy(void *f) { core##_free(f); }                                   \
    static hp_code prefix##_feed(void *f, const uint8_t *data, size_t len, const hp_sink *out,  \
                                 hp_error *err)                                                 \
    {                                                                                           \
        return core##_feed(f, data, len, out, err);                                             \
    }                                                                                           \
    static hp_code prefix##_finish(void *f, const hp_sink *out, hp_error *err)                  \
    {                                                                                           \
        return core##_finish(f, out, err);                                                      \
    }

FILTER_WRAPPERS(encoder, hp_tailor_encoder)
FILTER_WRAPPERS(decoder, hp_tailor_decoder)
FILTER_WRAPPERS(converter, hp_converter)

static const filter_ops tailor_encoder_ops = {
    "TailorEncoder", tailor_encoder_create, encoder_destroy, encoder_feed, encoder_finish, encoder_counter,
};
static const filter_ops tailor_decoder_ops = {
    "TailorDecoder", tailor_decoder_create, decoder_destroy, decoder_feed, decoder_finish, decoder_counter,
};
static const filter_ops converter_ops = {
    "Converter", converter_create, converter_destroy, converter_feed, converter_finish, NULL,
};

typedef struct {
    PyObject_HEAD
    const filter_ops *ops;
    void *filter;
    hp_buf out;             /* output of the current call, handed over as bytes */
    hp_writer batch;        /* output of the current call, on its way to a file descriptor */
    unsigned long long bytes_in, bytes_out;
    int finished;
} Filter;

/* A sink that writes straight to a file descriptor: output never becomes a
 * Python object.  Filters hand over many small runs (kept sub-records), so an
 * hp_writer gathers them into 1 MiB writes; a large run goes from the input
 * buffer to the kernel directly. */
#define FD_BATCH ((size_t)1 << 20)

typedef struct {
    int fd;
    int error; /* errno of a failed write, else 0 */
} fd_target;

static int fd_write_all(void *ctx, const uint8_t *data, size_t len)
{
    fd_target *t = ctx;
    while (len) {
        ssize_t n = write(t->fd, data, len < ((size_t)1 << 30) ? len : ((size_t)1 << 30));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            t->error = errno;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static int batched_write(void *ctx, const uint8_t *data, size_t len) { return hp_writer_put(ctx, data, len); }

/* Runs one core call on `view` (NULL for finish) with the GIL released when
 * the input is large.  Returns the output as bytes, or, when `fd` >= 0,
 * writes it to fd and returns the number of bytes written. */
static PyObject *filter_run(Filter *self, const Py_buffer *view, int fd)
{
    hprof_state *st = hprof_state_of_type(Py_TYPE(self));
    fd_target target = { fd, 0 };
    hp_sink to_fd = { fd_write_all, &target };
    hp_sink sink = hp_buf_sink(&self->out);
    hp_error err;
    hp_code rc;
    PyObject *result;

    if (fd >= 0) {
        if (!self->batch.buf && hp_writer_init(&self->batch, &hprof_raw_alloc, FD_BATCH) < 0)
            return PyErr_NoMemory();
        self->batch.sink = &to_fd;
        self->batch.written = 0;
        self->batch.len = 0;
        sink.write = batched_write;
        sink.ctx = &self->batch;
    }
    if (self->finished) {
        PyErr_Format(PyExc_ValueError, "%s: flush() was already called", self->ops->name);
        return NULL;
    }
    self->out.len = 0;
    if (view && (size_t)view->len >= HPROF_GIL_MINSIZE) {
        Py_BEGIN_ALLOW_THREADS
        rc = self->ops->feed(self->filter, view->buf, (size_t)view->len, &sink, &err);
        if (rc == HP_OK && fd >= 0 && hp_writer_flush(&self->batch) < 0)
            rc = HP_E_NOMEM;
        Py_END_ALLOW_THREADS
    } else if (view) {
        rc = self->ops->feed(self->filter, view->buf, (size_t)view->len, &sink, &err);
        if (rc == HP_OK && fd >= 0 && hp_writer_flush(&self->batch) < 0)
            rc = HP_E_NOMEM;
    } else {
        Py_BEGIN_ALLOW_THREADS
        rc = self->ops->finish(self->filter, &sink, &err);
        if (rc == HP_OK && fd >= 0 && hp_writer_flush(&self->batch) < 0)
            rc = HP_E_NOMEM;
        Py_END_ALLOW_THREADS
        self->finished = 1;
    }
    if (rc != HP_OK) {
        self->finished = 1; /* core errors are sticky: no further use */
        if (target.error) {
            errno = target.error;
            return PyErr_SetFromErrno(PyExc_OSError);
        }
        return hprof_raise(st, &err);
    }
    if (view)
        self->bytes_in += (unsigned long long)view->len;
    if (fd >= 0) {
        self->bytes_out += self->batch.written;
        return PyLong_FromUnsignedLongLong(self->batch.written);
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
    if (!d || !self->ops->counter)
        return d;
    c = self->ops->counter(self->filter);
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

static PyObject *filter_new(PyTypeObject *type, const filter_ops *ops, int app_only, int to_standard)
{
    Filter *self = (Filter *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->ops = ops;
    hp_buf_init(&self->out, &hprof_raw_alloc);
    self->filter = ops->create(&hprof_raw_alloc, app_only, to_standard);
    if (!self->filter) {
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
    return filter_new(type, &tailor_encoder_ops, app_only, 0);
}

static PyObject *tailor_decoder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { NULL };
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, ":TailorDecoder", keywords))
        return NULL;
    return filter_new(type, &tailor_decoder_ops, 0, 0);
}

static PyObject *converter_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "to_standard", "app_only", NULL };
    int to_standard = 1, app_only = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$pp:Converter", keywords, &to_standard, &app_only))
        return NULL;
    return filter_new(type, &converter_ops, app_only, to_standard);
}

static void filter_dealloc(Filter *self)
{
    PyTypeObject *type = Py_TYPE(self);
    if (self->filter)
        self->ops->destroy(self->filter);
    hp_buf_free(&self->out);
    hp_writer_free(&self->batch, &hprof_raw_alloc);
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
