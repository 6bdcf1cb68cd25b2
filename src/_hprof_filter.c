/* Stream filters for Python: the core's push filters (Tailor encoder and
 * decoder, Android converter, BMD encoder and decoder, renamer) behind one
 * type shaped like zlib's compressobj: feed(data) -> bytes, flush() -> bytes,
 * eof.
 *
 * The core filters share one shape (new / feed / finish / free with an
 * output sink); one glue type holds any of them and calls the core functions
 * of its kind by name.  The BMD filters read their input more than once: a
 * flush() that ends a pass leaves `again` set, and the input is fed anew. */
#include "_hprof_parts.h"
#include "_hprof_stream.h"

#include "core/hp_bmd.h"
#include "core/hp_convert.h"
#include "core/hp_rename.h"
#include "core/hp_sink.h"
#include "core/hp_tailor.h"

typedef enum { TAILOR_ENCODER, TAILOR_DECODER, CONVERTER, BMD_ENCODER, BMD_DECODER, RENAMER } filter_kind;

static const char *const kind_names[] = { "TailorEncoder", "TailorDecoder", "Converter", "BmdEncoder", "BmdDecoder",
                                          "Renamer" };

typedef struct {
    PyObject_HEAD
    filter_kind kind;
    union {
        hp_tailor_encoder *encoder;
        hp_tailor_decoder *decoder;
        hp_converter *converter;
        hp_bmd_encoder *bmd_encoder;
        hp_bmd_decoder *bmd_decoder;
        hp_renamer *renamer;
        void *any; /* NULL when creation failed */
    } core;
    hp_bmd_names *names; /* the BMD decoder's, which it reads */
    hprof_stream s;
} Filter;

/* The core calls of each kind: feed `data`, or finish when it is NULL. */
static hp_code tailor_encoder_call(void *core, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    return data ? hp_tailor_encoder_feed(core, data, len, out, err) : hp_tailor_encoder_finish(core, out, err);
}

static hp_code tailor_decoder_call(void *core, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    return data ? hp_tailor_decoder_feed(core, data, len, out, err) : hp_tailor_decoder_finish(core, out, err);
}

static hp_code converter_call(void *core, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    return data ? hp_converter_feed(core, data, len, out, err) : hp_converter_finish(core, out, err);
}

static hp_code bmd_encoder_call(void *core, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    return data ? hp_bmd_encoder_feed(core, data, len, out, err) : hp_bmd_encoder_finish(core, out, err);
}

static hp_code bmd_decoder_call(void *core, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    return data ? hp_bmd_decoder_feed(core, data, len, out, err) : hp_bmd_decoder_finish(core, out, err);
}

static int bmd_encoder_again(const void *core) { return hp_bmd_encoder_again(core); }
static int bmd_decoder_again(const void *core) { return hp_bmd_decoder_again(core); }

static hp_code renamer_call(void *core, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    return data ? hp_renamer_feed(core, data, len, out, err) : hp_renamer_finish(core, out, err);
}

static const hprof_stream_fn kind_calls[] = { tailor_encoder_call, tailor_decoder_call, converter_call,
                                              bmd_encoder_call, bmd_decoder_call, renamer_call };

static PyObject *filter_call(Filter *self, PyObject *data, int fd)
{
    return hprof_stream_call(&self->s, hprof_state_of_type(Py_TYPE(self)), kind_calls[self->kind], self->core.any,
                             data, fd);
}

PyDoc_STRVAR(filter_feed_doc,
"feed($self, data, /, fd=-1)\n--\n\n"
"Process the next chunk of input (any size, any bytes-like object); return\n"
"the output it completed.  With fd >= 0 the output is written to that file\n"
"descriptor instead, and the number of bytes written is returned.");

static PyObject *filter_feed(Filter *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "", "fd", NULL };
    PyObject *data;
    int fd = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|i:feed", keywords, &data, &fd))
        return NULL;
    return filter_call(self, data, fd);
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
    return filter_call(self, NULL, fd);
}

PyDoc_STRVAR(filter_counter_doc,
"counter($self, /)\n--\n\n"
"The tag counter Tailor's scripts print, as a dict in first-seen order; for\n"
"the BMD filters, the BMD records written or read by kind, in tag order.");

/* Adds name: count to d; 0 or -1. */
static int count_into(PyObject *d, const char *name, uint64_t count)
{
    PyObject *value = PyLong_FromUnsignedLongLong(count);
    int rc = value ? PyDict_SetItemString(d, name, value) : -1;
    Py_XDECREF(value);
    return rc;
}

static PyObject *bmd_counter(Filter *self, PyObject *d)
{
    uint64_t counts[9];
    int tag;
    hprof_stream_lock(&self->s);
    memcpy(counts, self->kind == BMD_ENCODER ? hp_bmd_encoder_counts(self->core.bmd_encoder)
                                             : hp_bmd_decoder_counts(self->core.bmd_decoder), sizeof counts);
    hprof_stream_unlock(&self->s);
    for (tag = 1; tag < 9; tag++)
        if (counts[tag] && count_into(d, hp_bmd_tag_name(tag), counts[tag]) < 0)
            Py_CLEAR(d);
    return d;
}

static PyObject *filter_counter(Filter *self, PyObject *unused)
{
    const hp_tailor_counter *c;
    PyObject *d;
    size_t i;
    (void)unused;
    d = PyDict_New();
    if (!d || self->kind == CONVERTER || self->kind == RENAMER) /* the converter and the renamer keep no counter */
        return d;
    if (self->kind == BMD_ENCODER || self->kind == BMD_DECODER)
        return bmd_counter(self, d);
    hprof_stream_lock(&self->s);
    c = self->kind == TAILOR_ENCODER ? hp_tailor_encoder_counter(self->core.encoder)
                                     : hp_tailor_decoder_counter(self->core.decoder);
    for (i = 0; i < c->n; i++) {
        uint64_t count;
        const char *name = hp_tailor_counter_entry(c, i, &count);
        if (count_into(d, name, count) < 0) {
            Py_CLEAR(d);
            break;
        }
    }
    hprof_stream_unlock(&self->s);
    return d;
}

static PyObject *filter_get(Filter *self, void *closure)
{
    switch ((int)(intptr_t)closure) {
    case 0: return PyBool_FromLong(self->s.finished);
    case 1: return PyLong_FromUnsignedLongLong(self->s.bytes_in);
    default: return PyLong_FromUnsignedLongLong(self->s.bytes_out);
    }
}

/* The BMD filters' own attributes, read under the lock: again, passes,
 * input_size, restored. */
static PyObject *bmd_get(Filter *self, void *closure)
{
    const void *core = self->core.any;
    int which = (int)(intptr_t)closure, encoder = self->kind == BMD_ENCODER;
    unsigned long long v;
    hprof_stream_lock(&self->s);
    switch (which) {
    case 0:
        v = !self->s.finished && (encoder ? hp_bmd_encoder_again(core) : hp_bmd_decoder_again(core));
        break;
    case 1:
        v = (unsigned)(encoder ? hp_bmd_encoder_passes(core) : hp_bmd_decoder_passes(core));
        break;
    case 2:
        v = encoder ? hp_bmd_encoder_bytes_in(core) : hp_bmd_decoder_bytes_in(core);
        break;
    default:
        v = encoder ? 0 : hp_bmd_decoder_restored(core);
        break;
    }
    hprof_stream_unlock(&self->s);
    return which == 0 ? PyBool_FromLong((long)v) : PyLong_FromUnsignedLongLong(v);
}

/* Only the converter and the renamer can finish on a dump that was cut
 * short: a Tailor mini must end with HEAP_DUMP_END, so the Tailor encoder
 * and decoder refuse one (HP_E_TRUNCATED). */
static void converter_unfinished(const void *core, hp_unfinished *out) { hp_converter_unfinished(core, out); }
static void renamer_unfinished(const void *core, hp_unfinished *out) { hp_renamer_unfinished(core, out); }

static PyObject *filter_unfinished(Filter *self, void *unused)
{
    (void)unused;
    if (self->kind == CONVERTER)
        return hprof_stream_unfinished(&self->s, converter_unfinished, self->core.converter);
    if (self->kind == RENAMER)
        return hprof_stream_unfinished(&self->s, renamer_unfinished, self->core.renamer);
    Py_RETURN_NONE;
}

/* As the Python codecs print themselves: <hprofkit.Converter 1,024 bytes in, 1,200 out>. */
static PyObject *filter_repr(Filter *self)
{
    PyObject *in = PyLong_FromUnsignedLongLong(self->s.bytes_in), *out = PyLong_FromUnsignedLongLong(self->s.bytes_out);
    PyObject *spec = PyUnicode_FromString(","), *in_text = NULL, *out_text = NULL, *repr = NULL;
    if (in && out && spec && (in_text = PyObject_Format(in, spec)) && (out_text = PyObject_Format(out, spec)))
        repr = PyUnicode_FromFormat("<hprofkit.%s %U bytes in, %U out%s>", kind_names[self->kind], in_text, out_text,
                                    self->s.finished ? ", finished" : "");
    Py_XDECREF(in);
    Py_XDECREF(out);
    Py_XDECREF(spec);
    Py_XDECREF(in_text);
    Py_XDECREF(out_text);
    return repr;
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
    { "unfinished", (getter)filter_unfinished, NULL, HPROF_UNFINISHED_DOC, NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyGetSetDef bmd_getset[] = {
    { "eof", (getter)filter_get, NULL, "True once the last pass was flushed (or an error was raised).", (void *)0 },
    { "bytes_in", (getter)filter_get, NULL, "Input bytes consumed, every pass counted.", (void *)1 },
    { "bytes_out", (getter)filter_get, NULL, "Output bytes produced.", (void *)2 },
    { "again", (getter)bmd_get, NULL,
      "True when flush() ended a pass and the whole input must be fed again, from its first byte.", (void *)0 },
    { "passes", (getter)bmd_get, NULL, "The passes it takes: 2 until the first ends, then exactly.", (void *)1 },
    { "input_size", (getter)bmd_get, NULL, "Bytes of the input (one pass).", (void *)2 },
    { "restored", (getter)bmd_get, NULL, "Decoder: hashed strings given back from the names.", (void *)3 },
    { "unfinished", (getter)filter_unfinished, NULL, "None: a BMD has no HEAP_DUMP_END to miss.", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

/* A new filter of `kind`: its core is made by the constructor below. */
static Filter *filter_alloc(PyTypeObject *type, filter_kind kind)
{
    Filter *self = (Filter *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->kind = kind;
    if (hprof_stream_setup(&self->s, kind_names[kind]) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return self;
}

static PyObject *filter_ready(Filter *self)
{
    if (!self->core.any) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static PyObject *tailor_encoder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "app_only", NULL };
    hp_tailor_options opts = { 0, 0, 0 };
    PyObject *app_only = NULL;
    Filter *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$O:TailorEncoder", keywords, &app_only) ||
        hprof_arg_bool(app_only, "app_only", &opts.app_only) < 0 || !(self = filter_alloc(type, TAILOR_ENCODER)))
        return NULL;
    self->core.encoder = hp_tailor_encoder_new(&hprof_raw_alloc, &opts);
    return filter_ready(self);
}

static PyObject *tailor_decoder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "max_record", "max_output", NULL };
    hp_tailor_options opts = { 0, 0, 0 };
    Py_ssize_t max_record = 0;
    unsigned long long max_output = 0;
    Filter *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$nK:TailorDecoder", keywords, &max_record, &max_output) ||
        hprof_arg_range(max_record, "max_record", 0, PY_SSIZE_T_MAX) < 0 ||
        !(self = filter_alloc(type, TAILOR_DECODER)))
        return NULL;
    opts.max_record = (size_t)max_record;
    opts.max_output = max_output;
    self->core.decoder = hp_tailor_decoder_new(&hprof_raw_alloc, &opts);
    return filter_ready(self);
}

static PyObject *bmd_encoder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "max_string", NULL };
    hp_bmd_options opts = { 0, 0, 0, NULL, 0 };
    Py_ssize_t max_string = 0;
    Filter *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$n:BmdEncoder", keywords, &max_string) ||
        hprof_arg_range(max_string, "max_string", 0, PY_SSIZE_T_MAX) < 0 || !(self = filter_alloc(type, BMD_ENCODER)))
        return NULL;
    opts.max_string = (size_t)max_string;
    self->s.again = bmd_encoder_again;
    self->core.bmd_encoder = hp_bmd_encoder_new(&hprof_raw_alloc, &opts);
    return filter_ready(self);
}

/* The names a BMD decoder restores hashed strings from: bytes-like objects. */
static hp_bmd_names *names_of(PyObject *names)
{
    hp_bmd_names *t = hp_bmd_names_new(&hprof_raw_alloc);
    PyObject *seq = PySequence_Fast(names, "names must be a sequence of bytes");
    Py_ssize_t i;
    if (!t || !seq) {
        hp_bmd_names_free(t);
        Py_XDECREF(seq);
        return t ? NULL : (hp_bmd_names *)PyErr_NoMemory();
    }
    for (i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        Py_buffer view;
        int rc;
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seq, i), &view, PyBUF_SIMPLE) < 0)
            break;
        rc = hp_bmd_names_add(t, view.buf, (size_t)view.len);
        PyBuffer_Release(&view);
        if (rc < 0) {
            PyErr_NoMemory();
            break;
        }
    }
    Py_DECREF(seq);
    if (PyErr_Occurred()) {
        hp_bmd_names_free(t);
        return NULL;
    }
    return t;
}

static PyObject *bmd_decoder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "names", "max_string", "max_classes", "max_heap_record", "max_output", NULL };
    hp_bmd_options opts = { 0, 0, 0, NULL, 0 };
    PyObject *names = NULL;
    Py_ssize_t max_string = 0, max_classes = 0;
    unsigned long long max_heap_record = 0, max_output = 0;
    Filter *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OnnKK:BmdDecoder", keywords, &names, &max_string, &max_classes,
                                     &max_heap_record, &max_output) ||
        hprof_arg_range(max_string, "max_string", 0, PY_SSIZE_T_MAX) < 0 ||
        hprof_arg_range(max_classes, "max_classes", 0, PY_SSIZE_T_MAX) < 0 ||
        !(self = filter_alloc(type, BMD_DECODER)))
        return NULL;
    if (names && names != Py_None && !(self->names = names_of(names))) {
        Py_DECREF(self);
        return NULL;
    }
    opts.max_string = (size_t)max_string;
    opts.max_classes = (size_t)max_classes;
    opts.max_heap_record = max_heap_record;
    opts.max_output = max_output;
    opts.names = self->names;
    self->s.again = bmd_decoder_again;
    self->core.bmd_decoder = hp_bmd_decoder_new(&hprof_raw_alloc, &opts);
    return filter_ready(self);
}

static PyObject *converter_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "to_standard", "app_only", "strip_types", "max_record", NULL };
    hp_convert_options opts = { 1, 0, 0, 0 };
    PyObject *to_standard = NULL, *app_only = NULL;
    unsigned int strip = 0;
    Py_ssize_t max_record = 0;
    Filter *self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOIn:Converter", keywords, &to_standard, &app_only, &strip,
                                     &max_record) ||
        hprof_arg_bool(to_standard, "to_standard", &opts.to_standard) < 0 ||
        hprof_arg_bool(app_only, "app_only", &opts.app_only) < 0 ||
        hprof_arg_range(max_record, "max_record", 0, PY_SSIZE_T_MAX) < 0)
        return NULL;
    if (strip & ~0xFF0u) {
        PyErr_SetString(PyExc_ValueError, "strip_types may only hold bits 4..11 (the primitive types)");
        return NULL;
    }
    opts.strip_types = strip;
    opts.max_record = (size_t)max_record;
    if (!(self = filter_alloc(type, CONVERTER)))
        return NULL;
    self->core.converter = hp_converter_new(&hprof_raw_alloc, &opts);
    return filter_ready(self);
}

/* The renamer's plan, from Python: records [(tag, key, bytes)], classes
 * [(class_id, (static name ids), (field name ids))]; 0 keeps a name. */
typedef struct {
    hp_rename_plan plan;
    hp_buf blob;
    hp_rename_record *records;
    hp_rename_class *classes;
    uint64_t *names;
} plan_build;

static int plan_records(plan_build *b, PyObject *records)
{
    Py_ssize_t i, n = PySequence_Fast_GET_SIZE(records);
    b->records = PyMem_RawCalloc((size_t)n + 1, sizeof *b->records);
    if (!b->records)
        return PyErr_NoMemory(), -1;
    for (i = 0; i < n; i++) {
        unsigned char tag;
        unsigned long long key;
        Py_buffer bytes;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(records, i), "bKy*:records", &tag, &key, &bytes))
            return -1;
        b->records[i].tag = tag;
        b->records[i].key = key;
        b->records[i].offset = b->blob.len;
        b->records[i].len = (size_t)bytes.len;
        if (hp_buf_append(&b->blob, bytes.buf, (size_t)bytes.len) < 0) {
            PyBuffer_Release(&bytes);
            return PyErr_NoMemory(), -1;
        }
        PyBuffer_Release(&bytes);
    }
    b->plan.records = b->records;
    b->plan.n_records = (size_t)n;
    b->plan.blob = b->blob.data;
    b->plan.blob_len = b->blob.len;
    return 0;
}

/* The ids of a tuple of ints into names[at ...]. */
static int plan_ids(PyObject *ids, uint64_t *names, size_t at)
{
    Py_ssize_t i;
    for (i = 0; i < PyTuple_GET_SIZE(ids); i++) {
        unsigned long long v = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(ids, i));
        if (v == (unsigned long long)-1 && PyErr_Occurred())
            return -1;
        names[at + (size_t)i] = v;
    }
    return 0;
}

static int plan_classes(plan_build *b, PyObject *classes)
{
    Py_ssize_t i, n = PySequence_Fast_GET_SIZE(classes);
    size_t total = 0, at = 0;
    for (i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(classes, i), *statics, *fields;
        unsigned long long class_id;
        if (!PyArg_ParseTuple(item, "KO!O!:classes", &class_id, &PyTuple_Type, &statics, &PyTuple_Type, &fields))
            return -1;
        total += (size_t)PyTuple_GET_SIZE(statics) + (size_t)PyTuple_GET_SIZE(fields);
    }
    b->classes = PyMem_RawCalloc((size_t)n + 1, sizeof *b->classes);
    b->names = PyMem_RawCalloc(total + 1, sizeof *b->names);
    if (!b->classes || !b->names)
        return PyErr_NoMemory(), -1;
    for (i = 0; i < n; i++) {
        PyObject *statics, *fields;
        unsigned long long class_id;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(classes, i), "KO!O!", &class_id, &PyTuple_Type, &statics,
                              &PyTuple_Type, &fields))
            return -1;
        if (PyTuple_GET_SIZE(statics) > 0xFFFF || PyTuple_GET_SIZE(fields) > 0xFFFF) {
            PyErr_SetString(PyExc_ValueError, "a CLASS_DUMP has at most 65535 statics and fields");
            return -1;
        }
        b->classes[i].class_id = class_id;
        b->classes[i].first = at;
        b->classes[i].n_statics = (uint32_t)PyTuple_GET_SIZE(statics);
        b->classes[i].n_fields = (uint32_t)PyTuple_GET_SIZE(fields);
        if (plan_ids(statics, b->names, at) < 0 || plan_ids(fields, b->names, at + b->classes[i].n_statics) < 0)
            return -1;
        at += b->classes[i].n_statics + b->classes[i].n_fields;
    }
    b->plan.classes = b->classes;
    b->plan.n_classes = (size_t)n;
    b->plan.names = b->names;
    b->plan.n_names = total;
    return 0;
}

static PyObject *renamer_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "prelude", "records", "classes", NULL };
    Py_buffer prelude = { 0 };
    PyObject *records = NULL, *classes = NULL, *records_seq = NULL, *classes_seq = NULL, *empty;
    Filter *self = NULL;
    plan_build b;
    memset(&b, 0, sizeof b);
    hp_buf_init(&b.blob, &hprof_raw_alloc);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$y*OO:Renamer", keywords, &prelude, &records, &classes))
        return NULL;
    empty = PyTuple_New(0);
    records_seq = empty ? PySequence_Fast(records ? records : empty, "records must be a sequence") : NULL;
    classes_seq = records_seq ? PySequence_Fast(classes ? classes : empty, "classes must be a sequence") : NULL;
    Py_XDECREF(empty);
    if (records_seq && classes_seq && plan_records(&b, records_seq) == 0 && plan_classes(&b, classes_seq) == 0 &&
        (self = filter_alloc(type, RENAMER)) != NULL) {
        b.plan.prelude = prelude.buf;
        b.plan.prelude_len = prelude.buf ? (size_t)prelude.len : 0;
        self->core.renamer = hp_renamer_new(&hprof_raw_alloc, &b.plan);
    }
    Py_XDECREF(records_seq);
    Py_XDECREF(classes_seq);
    if (prelude.obj)
        PyBuffer_Release(&prelude);
    hp_buf_free(&b.blob);
    PyMem_RawFree(b.records);
    PyMem_RawFree(b.classes);
    PyMem_RawFree(b.names);
    return self ? filter_ready(self) : NULL;
}

static void filter_dealloc(Filter *self)
{
    PyTypeObject *type = Py_TYPE(self);
    switch (self->kind) {
    case TAILOR_ENCODER: hp_tailor_encoder_free(self->core.encoder); break;
    case TAILOR_DECODER: hp_tailor_decoder_free(self->core.decoder); break;
    case BMD_ENCODER: hp_bmd_encoder_free(self->core.bmd_encoder); break;
    case BMD_DECODER: hp_bmd_decoder_free(self->core.bmd_decoder); break;
    case RENAMER: hp_renamer_free(self->core.renamer); break;
    default: hp_converter_free(self->core.converter); break;
    }
    hp_bmd_names_free(self->names);
    hprof_stream_free(&self->s);
    type->tp_free(self);
    Py_DECREF(type);
}

#define FILTER_SLOTS(new_fn, doc) FILTER_SLOTS_WITH(new_fn, doc, filter_getset)
#define FILTER_SLOTS_WITH(new_fn, doc, getset)                           \
    {                                                                    \
        { Py_tp_doc, doc }, { Py_tp_new, new_fn }, { Py_tp_methods, filter_methods }, \
        { Py_tp_getset, getset }, { Py_tp_dealloc, filter_dealloc },                     \
        { Py_tp_repr, filter_repr }, { 0, NULL }                                         \
    }

static PyType_Slot tailor_encoder_slots[] = FILTER_SLOTS(
    tailor_encoder_new,
    "TailorEncoder(*, app_only=False)\n--\n\n"
    "HPROF in, Tailor's uncompressed mini stream out (byte-identical to encode.py).");
static PyType_Slot tailor_decoder_slots[] = FILTER_SLOTS(
    tailor_decoder_new,
    "TailorDecoder(*, max_record=0, max_output=0)\n--\n\n"
    "Tailor's uncompressed mini stream in, HPROF out (byte-identical to decode.py).  A restored\n"
    "segment longer than max_record (0: 64 MiB) is streamed: its length patched in a file given\n"
    "by fd, else cut in several segments.  max_output: what the restored heap may hold (0: the\n"
    "larger of 4 GiB and 1,000 times the stream read; a sub-record past it raises\n"
    "RestoreLimitError before it is written).");
static PyType_Slot converter_slots[] = FILTER_SLOTS(
    converter_new,
    "Converter(*, to_standard=True, app_only=False, strip_types=0, max_record=0)\n--\n\n"
    "Android HPROF in, standard HPROF out (what hprof-conv does; -z is app_only).  strip_types:\n"
    "bit t set writes the elements of primitive arrays of type t as zeros.  A heap record longer\n"
    "than max_record (0: 64 MiB) is streamed: its length patched in a file given by fd, else cut.");

static PyType_Slot bmd_encoder_slots[] = FILTER_SLOTS_WITH(
    bmd_encoder_new,
    "BmdEncoder(*, max_string=0)\n--\n\n"
    "HPROF in, Badoo's BMD out (byte-identical to its cruncher's).  It reads the dump two or three\n"
    "times: after a flush() that leaves `again` set, feed the whole dump again.  A STRING record\n"
    "longer than max_string (0: 64 MiB) is refused (it is held to be hashed).",
    bmd_getset);
static PyType_Slot bmd_decoder_slots[] = FILTER_SLOTS_WITH(
    bmd_decoder_new,
    "BmdDecoder(*, names=None, max_string=0, max_classes=0, max_heap_record=0, max_output=0)\n--\n\n"
    "Badoo's BMD in, the HPROF its decruncher writes out (byte for byte).  It reads the BMD up to\n"
    "five times: after a flush() that leaves `again` set, feed the whole BMD again.  names: bytes\n"
    "objects a hashed string is given back from (the one with its hash and length).  max_string:\n"
    "the most bytes a hashed string may claim (0: 1 MiB); max_classes: bytes of class dumps held\n"
    "(0: 64 MiB); max_heap_record: the longest heap record (0: 4 GiB - 1; a bigger heap goes in\n"
    "segments); max_output: what the restored dump may hold (0: the larger of 4 GiB and 1,000\n"
    "times the BMD; the first pass raises RestoreLimitError for more, before the heap is written).",
    bmd_getset);

static PyType_Slot renamer_slots[] = FILTER_SLOTS(
    renamer_new,
    "Renamer(*, prelude=b'', records=(), classes=())\n--\n\n"
    "HPROF in, the same HPROF out with names replaced (hprofkit.deobfuscate's writer): prelude\n"
    "written after the header; records [(tag, key, bytes)] replace the LOAD_CLASS of class id key,\n"
    "the STACK_FRAME of frame id key or the STACK_TRACE of serial key (tag 2, 4, 5) by bytes;\n"
    "classes [(class_id, static_name_ids, field_name_ids)] give a CLASS_DUMP new name ids (0 keeps one).");

static PyType_Spec filter_specs[] = {
    { "hprofkit._hprof.TailorEncoder", sizeof(Filter), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
      tailor_encoder_slots },
    { "hprofkit._hprof.TailorDecoder", sizeof(Filter), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
      tailor_decoder_slots },
    { "hprofkit._hprof.Converter", sizeof(Filter), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
      converter_slots },
    { "hprofkit._hprof.BmdEncoder", sizeof(Filter), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
      bmd_encoder_slots },
    { "hprofkit._hprof.BmdDecoder", sizeof(Filter), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
      bmd_decoder_slots },
    { "hprofkit._hprof.Renamer", sizeof(Filter), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE, renamer_slots },
};

int hprof_filter_init(PyObject *module, hprof_state *st)
{
    static const char *const names[] = { "TailorEncoder", "TailorDecoder", "Converter", "BmdEncoder", "BmdDecoder",
                                         "Renamer" };
    (void)st;
    return hprof_add_types(module, filter_specs, names, sizeof filter_specs / sizeof filter_specs[0]);
}
