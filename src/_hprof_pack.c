/* The pack format's modelling half for Python: PackEncoder (HPROF in,
 * blocks of raw streams out) and PackDecoder (blocks in, HPROF out).  The
 * container -- compression, checksums, framing, threads -- is Python's
 * (hprofkit/_pack.py); these types only move bytes between it and the core.
 *
 * Both release the GIL around core calls on large inputs.  The encoder's
 * block callback runs inside such a call: it takes the GIL back just long
 * enough to turn the block into bytes objects. */
#include "_hprof_parts.h"

#include "core/hp_pack.h"
#include "core/hp_sink.h"

/* ---- PackEncoder ---- */

typedef struct {
    PyObject_HEAD
    hp_pack_encoder *enc;
    PyObject *blocks;     /* list collecting the blocks of the current call */
    PyThreadState *saved; /* while the GIL is released, else NULL */
    int py_failed;        /* the callback could not build a block */
    int finished;
} PackEncoder;

/* One block as (streams, in_len, out_len), streams a tuple of bytes. */
static PyObject *block_tuple(const hp_pack_block *b)
{
    PyObject *streams = PyTuple_New(HP_PACK_NSTREAMS), *item;
    int i;
    if (!streams)
        return NULL;
    for (i = 0; i < HP_PACK_NSTREAMS; i++) {
        PyObject *s = PyBytes_FromStringAndSize((const char *)b->data[i], (Py_ssize_t)b->len[i]);
        if (!s) {
            Py_DECREF(streams);
            return NULL;
        }
        PyTuple_SET_ITEM(streams, i, s);
    }
    item = Py_BuildValue("(NKK)", streams, (unsigned long long)b->in_len, (unsigned long long)b->out_len);
    return item;
}

static int collect_block(void *ctx, const hp_pack_block *b)
{
    PackEncoder *self = ctx;
    PyObject *item;
    int rc = 0;
    if (self->saved)
        PyEval_RestoreThread(self->saved);
    item = block_tuple(b);
    if (!item || PyList_Append(self->blocks, item) < 0) {
        self->py_failed = 1;
        rc = -1;
    }
    Py_XDECREF(item);
    if (self->saved)
        self->saved = PyEval_SaveThread();
    return rc;
}

/* Runs one core call (finish when view is NULL); returns the list of blocks. */
static PyObject *encoder_run(PackEncoder *self, const Py_buffer *view)
{
    hprof_state *st = hprof_state_of_type(Py_TYPE(self));
    hp_error err;
    hp_code rc;
    PyObject *blocks;

    if (self->finished) {
        PyErr_SetString(PyExc_ValueError, "PackEncoder: flush() was already called");
        return NULL;
    }
    blocks = PyList_New(0);
    if (!blocks)
        return NULL;
    self->blocks = blocks;
    self->py_failed = 0;
    if (!view || (size_t)view->len >= HPROF_GIL_MINSIZE) {
        self->saved = PyEval_SaveThread();
        rc = view ? hp_pack_encoder_feed(self->enc, view->buf, (size_t)view->len, collect_block, self, &err)
                  : hp_pack_encoder_finish(self->enc, collect_block, self, &err);
        PyEval_RestoreThread(self->saved);
        self->saved = NULL;
    } else {
        rc = hp_pack_encoder_feed(self->enc, view->buf, (size_t)view->len, collect_block, self, &err);
    }
    self->blocks = NULL;
    if (!view)
        self->finished = 1;
    if (rc != HP_OK) {
        self->finished = 1;
        Py_DECREF(blocks);
        if (self->py_failed && PyErr_Occurred())
            return NULL;
        return hprof_raise(st, &err);
    }
    return blocks;
}

PyDoc_STRVAR(encoder_feed_doc,
"feed($self, data, /)\n--\n\n"
"Model the next chunk of the dump (any size).  Returns the blocks it\n"
"completed, each (streams, in_len, out_len): a tuple of one bytes object\n"
"per stream, the source bytes it covers and the bytes it restores to.");

static PyObject *encoder_feed(PackEncoder *self, PyObject *data)
{
    Py_buffer view;
    PyObject *result;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    result = encoder_run(self, &view);
    PyBuffer_Release(&view);
    return result;
}

PyDoc_STRVAR(encoder_flush_doc,
"flush($self, /)\n--\n\n"
"End the dump: return the last blocks, or raise TruncatedError if the dump\n"
"stopped inside a record.");

static PyObject *encoder_flush(PackEncoder *self, PyObject *unused)
{
    (void)unused;
    return encoder_run(self, NULL);
}

static PyObject *encoder_get(PackEncoder *self, void *closure)
{
    const hp_header *h;
    switch ((int)(intptr_t)closure) {
    case 0:
        return PyBool_FromLong(self->finished);
    case 1:
        return PyLong_FromUnsignedLongLong(hp_pack_encoder_bytes_in(self->enc));
    case 2:
        return PyLong_FromUnsignedLongLong(hp_pack_encoder_bytes_out(self->enc));
    case 3:
        return PyLong_FromUnsignedLongLong(hp_pack_encoder_blocks(self->enc));
    default:
        h = hp_pack_encoder_header(self->enc);
        if (!h)
            Py_RETURN_NONE;
        return Py_BuildValue("(iiKn)", h->version, h->id_size, (unsigned long long)h->timestamp,
                             (Py_ssize_t)h->length);
    }
}

static PyMethodDef encoder_methods[] = {
    { "feed", (PyCFunction)encoder_feed, METH_O, encoder_feed_doc },
    { "flush", (PyCFunction)encoder_flush, METH_NOARGS, encoder_flush_doc },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef encoder_getset[] = {
    { "eof", (getter)encoder_get, NULL, "True once flush() was called (or an error was raised).", (void *)0 },
    { "bytes_in", (getter)encoder_get, NULL, "Dump bytes consumed.", (void *)1 },
    { "bytes_out", (getter)encoder_get, NULL, "Bytes the blocks so far restore to, header included.", (void *)2 },
    { "blocks", (getter)encoder_get, NULL, "Blocks produced so far.", (void *)3 },
    { "header", (getter)encoder_get, NULL,
      "(version, id_size, timestamp, header_length) of the dump once read, else None.", (void *)4 },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyObject *encoder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "strip_types", "app_only", "drop_traces", "block_size", NULL };
    hp_pack_policy pol = { 0, 0, 0 };
    unsigned int strip = 0;
    Py_ssize_t block = 0;
    PackEncoder *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$Ippn:PackEncoder", keywords, &strip, &pol.app_only,
                                     &pol.drop_traces, &block))
        return NULL;
    if (block < 0) {
        PyErr_SetString(PyExc_ValueError, "block_size must not be negative");
        return NULL;
    }
    pol.strip_types = strip;
    self = (PackEncoder *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->enc = hp_pack_encoder_new(&hprof_raw_alloc, &pol, (size_t)block);
    if (!self->enc) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static void encoder_dealloc(PackEncoder *self)
{
    PyTypeObject *type = Py_TYPE(self);
    hp_pack_encoder_free(self->enc);
    type->tp_free(self);
    Py_DECREF(type);
}

/* ---- PackDecoder ---- */

typedef struct {
    PyObject_HEAD
    hp_pack_decoder *dec;
    hp_buf out;          /* output of the current call, handed over as bytes */
    hprof_fd_out to_fd;  /* output of the current call, on its way to a file descriptor */
    int finished;
} PackDecoder;

/* The core call (finish when data is NULL), then the output still batched
 * for fd (when `to_fd`). */
static hp_code decoder_core_run(PackDecoder *self, const uint8_t *const *data, const size_t *lens,
                                uint64_t expected, const hp_sink *sink, int to_fd, hp_error *err)
{
    hp_code rc = data ? hp_pack_decoder_block(self->dec, data, lens, expected, sink, err)
                      : hp_pack_decoder_finish(self->dec, sink, err);
    if (rc == HP_OK && to_fd && hprof_fd_out_flush(&self->to_fd) < 0)
        rc = HP_E_NOMEM; /* hprof_fd_out_failed() tells it apart */
    return rc;
}

/* Restores one block (streams != NULL) or finishes; bytes, or the count
 * written to fd. */
static PyObject *decoder_run(PackDecoder *self, PyObject *streams, uint64_t expected, int fd)
{
    hprof_state *st = hprof_state_of_type(Py_TYPE(self));
    Py_buffer views[HP_PACK_NSTREAMS];
    const uint8_t *data[HP_PACK_NSTREAMS];
    size_t lens[HP_PACK_NSTREAMS], total = 0;
    hp_sink to_bytes = hp_buf_sink(&self->out);
    const hp_sink *sink = &to_bytes;
    PyObject *seq = NULL, *result = NULL;
    hp_error err;
    hp_code rc;
    int i, got = 0;

    if (self->finished) {
        PyErr_SetString(PyExc_ValueError, "PackDecoder: flush() was already called");
        return NULL;
    }
    if (streams) {
        seq = PySequence_Fast(streams, "streams must be a sequence of bytes-like objects");
        if (!seq)
            return NULL;
        if (PySequence_Fast_GET_SIZE(seq) != HP_PACK_NSTREAMS) {
            PyErr_Format(PyExc_ValueError, "a block has %d streams, not %zd", HP_PACK_NSTREAMS,
                         PySequence_Fast_GET_SIZE(seq));
            goto done;
        }
        for (got = 0; got < HP_PACK_NSTREAMS; got++) {
            if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seq, got), &views[got], PyBUF_SIMPLE) < 0)
                goto done;
            data[got] = views[got].buf;
            lens[got] = (size_t)views[got].len;
            total += lens[got];
        }
    }
    if (fd >= 0 && !(sink = hprof_fd_out_start(&self->to_fd, fd)))
        goto done;
    self->out.len = 0;
    if (!streams || total >= HPROF_GIL_MINSIZE) {
        Py_BEGIN_ALLOW_THREADS
        rc = decoder_core_run(self, streams ? data : NULL, lens, expected, sink, fd >= 0, &err);
        Py_END_ALLOW_THREADS
    } else {
        rc = decoder_core_run(self, data, lens, expected, sink, fd >= 0, &err);
    }
    if (!streams)
        self->finished = 1;
    if (rc != HP_OK) {
        self->finished = 1;
        if (fd >= 0 && hprof_fd_out_failed(&self->to_fd))
            hprof_fd_out_raise(&self->to_fd);
        else
            hprof_raise(st, &err);
        goto done;
    }
    if (fd >= 0)
        result = PyLong_FromUnsignedLongLong(hprof_fd_out_written(&self->to_fd));
    else
        result = PyBytes_FromStringAndSize((const char *)self->out.data, (Py_ssize_t)self->out.len);
    if (self->out.cap > ((size_t)16 << 20))
        hp_buf_free(&self->out);
done:
    for (i = 0; i < got; i++)
        PyBuffer_Release(&views[i]);
    Py_XDECREF(seq);
    return result;
}

PyDoc_STRVAR(decoder_feed_block_doc,
"feed_block($self, streams, /, out_len=-1, fd=-1)\n--\n\n"
"Restore the next block from its raw streams (a sequence of bytes-like\n"
"objects, one per stream).  out_len >= 0 is checked against what the block\n"
"restores to.  Returns the HPROF bytes, or with fd >= 0 writes them there\n"
"and returns their number.");

static PyObject *decoder_feed_block(PackDecoder *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "", "out_len", "fd", NULL };
    PyObject *streams;
    long long out_len = -1;
    int fd = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|Li:feed_block", keywords, &streams, &out_len, &fd))
        return NULL;
    return decoder_run(self, streams, out_len < 0 ? UINT64_MAX : (uint64_t)out_len, fd);
}

PyDoc_STRVAR(decoder_flush_doc,
"flush($self, /, fd=-1)\n--\n\n"
"End the input: raise TruncatedError if it stopped inside a record; return\n"
"what is left to write (the header of an empty dump), or its length with fd.");

static PyObject *decoder_flush(PackDecoder *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "fd", NULL };
    int fd = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|i:flush", keywords, &fd))
        return NULL;
    return decoder_run(self, NULL, UINT64_MAX, fd);
}

static PyObject *decoder_get(PackDecoder *self, void *closure)
{
    switch ((int)(intptr_t)closure) {
    case 0: return PyBool_FromLong(self->finished);
    case 1: return PyLong_FromUnsignedLongLong(hp_pack_decoder_bytes_out(self->dec));
    default: return PyLong_FromUnsignedLongLong(hp_pack_decoder_blocks(self->dec));
    }
}

static PyMethodDef decoder_methods[] = {
    { "feed_block", (PyCFunction)(void (*)(void))decoder_feed_block, METH_VARARGS | METH_KEYWORDS,
      decoder_feed_block_doc },
    { "flush", (PyCFunction)(void (*)(void))decoder_flush, METH_VARARGS | METH_KEYWORDS, decoder_flush_doc },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef decoder_getset[] = {
    { "eof", (getter)decoder_get, NULL, "True once flush() was called (or an error was raised).", (void *)0 },
    { "bytes_out", (getter)decoder_get, NULL, "HPROF bytes restored, header included.", (void *)1 },
    { "blocks", (getter)decoder_get, NULL, "Blocks restored.", (void *)2 },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyObject *decoder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "version", "id_size", "timestamp", "strip_types", "app_only", "drop_traces", NULL };
    hp_pack_policy pol = { 0, 0, 0 };
    hp_header h;
    unsigned long long timestamp;
    unsigned int strip = 0;
    PackDecoder *self;
    memset(&h, 0, sizeof h);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iiK|$Ipp:PackDecoder", keywords, &h.version, &h.id_size,
                                     &timestamp, &strip, &pol.app_only, &pol.drop_traces))
        return NULL;
    if (h.version < 0 || h.version > 3 || (h.id_size != 4 && h.id_size != 8)) {
        PyErr_SetString(PyExc_ValueError, "version must be 0..3 and id_size 4 or 8");
        return NULL;
    }
    h.timestamp = timestamp;
    pol.strip_types = strip;
    self = (PackDecoder *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    hp_buf_init(&self->out, &hprof_raw_alloc);
    self->dec = hp_pack_decoder_new(&hprof_raw_alloc, &h, &pol);
    if (!self->dec) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static void decoder_dealloc(PackDecoder *self)
{
    PyTypeObject *type = Py_TYPE(self);
    hp_pack_decoder_free(self->dec);
    hp_buf_free(&self->out);
    hprof_fd_out_free(&self->to_fd);
    type->tp_free(self);
    Py_DECREF(type);
}

/* ---- registration ---- */

static PyType_Slot encoder_slots[] = {
    { Py_tp_doc, "PackEncoder(*, strip_types=0, app_only=False, drop_traces=False, block_size=0)\n--\n\n"
                 "HPROF in, blocks of raw pack streams out (the modelling half of the pack format)." },
    { Py_tp_new, encoder_new }, { Py_tp_methods, encoder_methods }, { Py_tp_getset, encoder_getset },
    { Py_tp_dealloc, encoder_dealloc }, { 0, NULL },
};

static PyType_Slot decoder_slots[] = {
    { Py_tp_doc, "PackDecoder(version, id_size, timestamp, *, strip_types=0, app_only=False, drop_traces=False)\n"
                 "--\n\nBlocks of raw pack streams in, HPROF out." },
    { Py_tp_new, decoder_new }, { Py_tp_methods, decoder_methods }, { Py_tp_getset, decoder_getset },
    { Py_tp_dealloc, decoder_dealloc }, { 0, NULL },
};

static PyType_Spec pack_specs[] = {
    { "hprofkit._hprof.PackEncoder", sizeof(PackEncoder), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
      encoder_slots },
    { "hprofkit._hprof.PackDecoder", sizeof(PackDecoder), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
      decoder_slots },
};

int hprof_pack_init(PyObject *module, hprof_state *st)
{
    static const char *const names[] = { "PackEncoder", "PackDecoder" };
    PyObject *stream_names;
    size_t i;
    int rc;
    (void)st;
    if (hprof_add_types(module, pack_specs, names, sizeof pack_specs / sizeof pack_specs[0]) < 0)
        return -1;
    stream_names = PyTuple_New(HP_PACK_NSTREAMS);
    if (!stream_names)
        return -1;
    for (i = 0; i < HP_PACK_NSTREAMS; i++) {
        PyObject *s = PyUnicode_FromString(hp_pack_stream_name((int)i));
        if (!s) {
            Py_DECREF(stream_names);
            return -1;
        }
        PyTuple_SET_ITEM(stream_names, i, s);
    }
    rc = PyModule_AddObjectRef(module, "PACK_STREAMS", stream_names);
    Py_DECREF(stream_names);
    if (rc < 0)
        return -1;
    if (PyModule_AddIntConstant(module, "PACK_BLOCK_DEFAULT", (long)HP_PACK_BLOCK_DEFAULT) < 0)
        return -1;
    return 0;
}
