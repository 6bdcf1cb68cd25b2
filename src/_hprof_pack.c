/* hprofkit's compact format for Python: PackEncoder (HPROF in, pack out)
 * and PackDecoder (pack in, HPROF out), the core's hp_packer and
 * hp_unpacker behind the stream types' feed/flush (_hprof_stream.h).  The
 * whole format -- modelling, container, compression threads -- is the
 * core's; these types only parse arguments and expose counters. */
#include "_hprof_parts.h"
#include "_hprof_stream.h"

#include "core/hp_heaprec.h"
#include "core/hp_packer.h"

#define MAX_THREADS 64

/* ---- PackEncoder ---- */

typedef struct {
    PyObject_HEAD
    hprof_stream s;
    hp_packer *packer;
} PackEncoder;

static hp_code packer_call(void *core, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    return data ? hp_packer_feed(core, data, len, out, err) : hp_packer_finish(core, out, err);
}

PyDoc_STRVAR(encoder_feed_doc,
"feed($self, data, /, fd=-1)\n--\n\n"
"Pack the next chunk of the dump (any size, any bytes-like object); return\n"
"the pack bytes it completed, or with fd >= 0 write them there and return\n"
"their number.");

static PyObject *encoder_feed(PackEncoder *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "", "fd", NULL };
    PyObject *data;
    int fd = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|i:feed", keywords, &data, &fd))
        return NULL;
    return hprof_stream_call(&self->s, hprof_state_of_type(Py_TYPE(self)), packer_call, self->packer, data, fd);
}

PyDoc_STRVAR(encoder_flush_doc,
"flush($self, /, fd=-1)\n--\n\n"
"End the dump: return the rest of the pack, its end record included (or\n"
"write it to fd), or raise TruncatedError if the dump stopped inside a record.");

static PyObject *encoder_flush(PackEncoder *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "fd", NULL };
    int fd = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|i:flush", keywords, &fd))
        return NULL;
    return hprof_stream_call(&self->s, hprof_state_of_type(Py_TYPE(self)), packer_call, self->packer, NULL, fd);
}

static PyObject *encoder_get(PackEncoder *self, void *closure)
{
    unsigned long long v;
    hprof_stream_lock(&self->s);
    switch ((int)(intptr_t)closure) {
    case 0: v = (unsigned long long)self->s.finished; break;
    case 1: v = hp_packer_bytes_in(self->packer); break;
    case 2: v = hp_packer_bytes_out(self->packer); break;
    case 3: v = hp_packer_restored_bytes(self->packer); break;
    default: v = hp_packer_blocks(self->packer); break;
    }
    hprof_stream_unlock(&self->s);
    return closure == (void *)0 ? PyBool_FromLong((long)v) : PyLong_FromUnsignedLongLong(v);
}

static void packer_unfinished(const void *core, hp_unfinished *out) { hp_packer_unfinished(core, out); }

static PyObject *encoder_unfinished(PackEncoder *self, void *unused)
{
    (void)unused;
    return hprof_stream_unfinished(&self->s, packer_unfinished, self->packer);
}

static PyMethodDef encoder_methods[] = {
    { "feed", (PyCFunction)(void (*)(void))encoder_feed, METH_VARARGS | METH_KEYWORDS, encoder_feed_doc },
    { "flush", (PyCFunction)(void (*)(void))encoder_flush, METH_VARARGS | METH_KEYWORDS, encoder_flush_doc },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef encoder_getset[] = {
    { "eof", (getter)encoder_get, NULL, "True once flush() was called (or an error was raised).", (void *)0 },
    { "bytes_in", (getter)encoder_get, NULL, "Dump bytes consumed.", (void *)1 },
    { "bytes_out", (getter)encoder_get, NULL, "Pack bytes produced.", (void *)2 },
    { "restored_bytes", (getter)encoder_get, NULL,
      "Bytes the pack restores to (the dump minus what the policy drops).", (void *)3 },
    { "blocks", (getter)encoder_get, NULL, "Blocks written.", (void *)4 },
    { "unfinished", (getter)encoder_unfinished, NULL, HPROF_UNFINISHED_DOC, NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyObject *encoder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "strip_types", "app_only", "drop_traces", "level", "threads", "block_size", NULL };
    hp_packer_options opts;
    PyObject *app_only = NULL, *drop_traces = NULL;
    unsigned int strip = 0;
    int level = HP_PACK_LEVEL_DEFAULT, threads = 1;
    Py_ssize_t block = 0;
    PackEncoder *self;
    memset(&opts, 0, sizeof opts);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$IOOiin:PackEncoder", keywords, &strip, &app_only,
                                     &drop_traces, &level, &threads, &block) ||
        hprof_arg_bool(app_only, "app_only", &opts.policy.app_only) < 0 ||
        hprof_arg_bool(drop_traces, "drop_traces", &opts.policy.drop_traces) < 0 ||
        hprof_arg_range(level, "level", 0, 9) < 0 || hprof_arg_range(threads, "threads", 1, MAX_THREADS) < 0 ||
        hprof_arg_range(block, "block_size", 0, (Py_ssize_t)HP_PACK_BLOCK_MAX) < 0)
        return NULL;
    if (strip & ~HP_PACK_STRIP_ALL) {
        PyErr_SetString(PyExc_ValueError, "strip_types may only hold bits 4..11 (the primitive types)");
        return NULL;
    }
    opts.policy.strip_types = strip;
    opts.level = level;
    opts.workers = (unsigned)threads;
    opts.block_size = (size_t)block;
    self = (PackEncoder *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    if (hprof_stream_setup(&self->s, "PackEncoder") < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->packer = hp_packer_new(&hprof_raw_alloc, &opts);
    if (!self->packer) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static void encoder_dealloc(PackEncoder *self)
{
    PyTypeObject *type = Py_TYPE(self);
    hp_packer_free(self->packer);
    hprof_stream_free(&self->s);
    type->tp_free(self);
    Py_DECREF(type);
}

/* ---- PackDecoder ---- */

typedef struct {
    PyObject_HEAD
    hprof_stream s;
    hp_unpacker *unpacker;
} PackDecoder;

static hp_code unpacker_call(void *core, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    return data ? hp_unpacker_feed(core, data, len, out, err) : hp_unpacker_finish(core, out, err);
}

PyDoc_STRVAR(decoder_feed_doc,
"feed($self, data, /, fd=-1)\n--\n\n"
"Restore from the next chunk of the pack (any size, any bytes-like object);\n"
"return the HPROF bytes it completed, or with fd >= 0 write them there and\n"
"return their number.  A file descriptor of a regular file lets records too\n"
"long to hold be written at once and their length patched.");

static PyObject *decoder_feed(PackDecoder *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "", "fd", NULL };
    PyObject *data;
    int fd = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|i:feed", keywords, &data, &fd))
        return NULL;
    return hprof_stream_call(&self->s, hprof_state_of_type(Py_TYPE(self)), unpacker_call, self->unpacker, data, fd);
}

PyDoc_STRVAR(decoder_flush_doc,
"flush($self, /, fd=-1)\n--\n\n"
"End the pack: return the rest of the dump (or write it to fd); raise\n"
"TruncatedError unless the pack was complete, CorruptError unless it\n"
"restored to the length its end record gives.");

static PyObject *decoder_flush(PackDecoder *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "fd", NULL };
    int fd = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|i:flush", keywords, &fd))
        return NULL;
    return hprof_stream_call(&self->s, hprof_state_of_type(Py_TYPE(self)), unpacker_call, self->unpacker, NULL, fd);
}

/* The header fields once read, as a dict; None before. */
static PyObject *decoder_info(PackDecoder *self, void *closure)
{
    const hp_pack_info *info;
    PyObject *result;
    (void)closure;
    hprof_stream_lock(&self->s);
    info = hp_unpacker_info(self->unpacker);
    if (!info)
        result = Py_NewRef(Py_None);
    else
        result = Py_BuildValue("{s:i,s:i,s:K,s:I,s:O,s:O,s:i}", "version", info->version, "id_size", info->id_size,
                               "timestamp", (unsigned long long)info->timestamp, "strip_types",
                               info->policy.strip_types, "app_only", info->policy.app_only ? Py_True : Py_False,
                               "drop_traces", info->policy.drop_traces ? Py_True : Py_False, "level", info->level);
    hprof_stream_unlock(&self->s);
    return result;
}

static PyObject *decoder_get(PackDecoder *self, void *closure)
{
    unsigned long long v;
    hprof_stream_lock(&self->s);
    switch ((int)(intptr_t)closure) {
    case 0: v = (unsigned long long)self->s.finished; break;
    case 1: v = hp_unpacker_bytes_in(self->unpacker); break;
    case 2: v = self->s.bytes_out; break;
    default: v = hp_unpacker_blocks(self->unpacker); break;
    }
    hprof_stream_unlock(&self->s);
    return closure == (void *)0 ? PyBool_FromLong((long)v) : PyLong_FromUnsignedLongLong(v);
}

static void unpacker_unfinished(const void *core, hp_unfinished *out) { hp_unpacker_unfinished(core, out); }

static PyObject *decoder_unfinished(PackDecoder *self, void *unused)
{
    (void)unused;
    return hprof_stream_unfinished(&self->s, unpacker_unfinished, self->unpacker);
}

static PyMethodDef decoder_methods[] = {
    { "feed", (PyCFunction)(void (*)(void))decoder_feed, METH_VARARGS | METH_KEYWORDS, decoder_feed_doc },
    { "flush", (PyCFunction)(void (*)(void))decoder_flush, METH_VARARGS | METH_KEYWORDS, decoder_flush_doc },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef decoder_getset[] = {
    { "eof", (getter)decoder_get, NULL, "True once flush() was called (or an error was raised).", (void *)0 },
    { "bytes_in", (getter)decoder_get, NULL, "Pack bytes consumed.", (void *)1 },
    { "bytes_out", (getter)decoder_get, NULL, "HPROF bytes produced.", (void *)2 },
    { "blocks", (getter)decoder_get, NULL, "Blocks restored.", (void *)3 },
    { "unfinished", (getter)decoder_unfinished, NULL, HPROF_UNFINISHED_DOC " Offsets are the restored dump's.",
      NULL },
    { "info", (getter)decoder_info, NULL,
      "The pack's header once read (version, id_size, timestamp, strip_types, app_only, drop_traces, level), "
      "else None.", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyObject *decoder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "threads", "max_block", "max_record", "max_output", NULL };
    hp_unpacker_options opts;
    int threads = 1;
    Py_ssize_t max_block = 0, max_record = 0;
    unsigned long long max_output = 0;
    PackDecoder *self;
    memset(&opts, 0, sizeof opts);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$innK:PackDecoder", keywords, &threads, &max_block, &max_record,
                                     &max_output) ||
        hprof_arg_range(threads, "threads", 1, MAX_THREADS) < 0 ||
        hprof_arg_range(max_block, "max_block", 0, PY_SSIZE_T_MAX) < 0 ||
        hprof_arg_range(max_record, "max_record", 0, PY_SSIZE_T_MAX) < 0)
        return NULL;
    opts.workers = (unsigned)threads;
    opts.max_block = (size_t)max_block;
    opts.max_record = (size_t)max_record;
    opts.max_output = max_output;
    self = (PackDecoder *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    if (hprof_stream_setup(&self->s, "PackDecoder") < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->unpacker = hp_unpacker_new(&hprof_raw_alloc, &opts);
    if (!self->unpacker) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static void decoder_dealloc(PackDecoder *self)
{
    PyTypeObject *type = Py_TYPE(self);
    hp_unpacker_free(self->unpacker);
    hprof_stream_free(&self->s);
    type->tp_free(self);
    Py_DECREF(type);
}

/* ---- registration ---- */

static PyType_Slot encoder_slots[] = {
    { Py_tp_doc, "PackEncoder(*, strip_types=0, app_only=False, drop_traces=False, level=6, threads=1, "
                 "block_size=0)\n--\n\n"
                 "HPROF in, hprofkit pack out (docs/format.md).  strip_types: bit t set drops the elements of\n"
                 "primitive arrays of type t (4..11); threads compress blocks in parallel, the pack is the\n"
                 "same for any number." },
    { Py_tp_new, encoder_new }, { Py_tp_methods, encoder_methods }, { Py_tp_getset, encoder_getset },
    { Py_tp_dealloc, encoder_dealloc }, { 0, NULL },
};

static PyType_Slot decoder_slots[] = {
    { Py_tp_doc, "PackDecoder(*, threads=1, max_block=0, max_record=0, max_output=0)\n--\n\n"
                 "hprofkit pack in, HPROF out.  max_block: what one block's streams may hold (0: 64 MiB;\n"
                 "a pack declaring more is refused before anything is inflated); max_record: what is held\n"
                 "of a heap record whose length comes at its end (0: 64 MiB; longer ones are streamed);\n"
                 "max_output: what the restored dump may hold (0: the larger of 4 GiB and 1,000 times the\n"
                 "pack read; a block past it raises RestoreLimitError before it is inflated)." },
    { Py_tp_new, decoder_new }, { Py_tp_methods, decoder_methods }, { Py_tp_getset, decoder_getset },
    { Py_tp_dealloc, decoder_dealloc }, { 0, NULL },
};

/* ---- a pack's declared size, before restoring it ---- */

PyDoc_STRVAR(pack_check_end_doc,
"pack_check_end($module, tail, pack_size, max_output=0, /)\n--\n\n"
"Raises RestoreLimitError when `tail`, the last bytes (up to PACK_END_MAX) of a\n"
"pack of pack_size bytes, is an end record declaring a restored dump larger than\n"
"max_output (0: the larger of 4 GiB and 1,000 times the pack); else None.");

static PyObject *pack_check_end(PyObject *module, PyObject *args)
{
    Py_buffer tail;
    unsigned long long pack_size, max_output = 0;
    hp_error err;
    hp_code rc;
    if (!PyArg_ParseTuple(args, "y*K|K:pack_check_end", &tail, &pack_size, &max_output))
        return NULL;
    memset(&err, 0, sizeof err);
    rc = hp_pack_check_end(tail.buf, (size_t)tail.len, pack_size, max_output, &err);
    PyBuffer_Release(&tail);
    if (rc != HP_OK)
        return hprof_raise(hprof_get_state(module), &err);
    Py_RETURN_NONE;
}

static PyMethodDef pack_functions[] = {
    { "pack_check_end", (PyCFunction)pack_check_end, METH_VARARGS, pack_check_end_doc },
    { NULL, NULL, 0, NULL },
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
    if (hprof_add_types(module, pack_specs, names, sizeof pack_specs / sizeof pack_specs[0]) < 0 ||
        PyModule_AddFunctions(module, pack_functions) < 0)
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
    if (PyModule_AddIntConstant(module, "PACK_BLOCK_DEFAULT", (long)HP_PACK_BLOCK_DEFAULT) < 0 ||
        PyModule_AddIntConstant(module, "PACK_BLOCK_MAX", (long)HP_PACK_BLOCK_MAX) < 0 ||
        PyModule_AddIntConstant(module, "PACK_BLOCK_LIMIT", (long)HP_PACK_BLOCK_LIMIT) < 0 ||
        PyModule_AddIntConstant(module, "HOLD_DEFAULT", (long)HP_HOLD_DEFAULT) < 0 ||
        PyModule_AddIntConstant(module, "PACK_END_MAX", (long)HP_PACK_END_MAX) < 0)
        return -1;
    return 0;
}
