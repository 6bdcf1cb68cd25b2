/* Small functions about the HPROF format itself: parse_header(), tag_name(),
 * type_size(), and the decoding of its names: decode_mutf8(), java_name(). */
#include "_hprof_parts.h"

#include "core/hp_header.h"

PyDoc_STRVAR(parse_header_doc,
"parse_header($module, buffer, /)\n--\n\n"
"Parse the HPROF header at the start of buffer.\n\n"
"Returns (magic, version, id_size, timestamp_ms, header_length); raises\n"
"FormatError or TruncatedError.");

typedef struct {
    const Py_buffer *view;
    hp_header header;
    hp_error err;
    hp_code rc;
} header_call;

static void read_header(void *ctx)
{
    header_call *c = ctx;
    c->rc = hp_header_parse(c->view->buf, (size_t)c->view->len, &c->header, &c->err);
}

static PyObject *parse_header(PyObject *module, PyObject *arg)
{
    Py_buffer view;
    header_call call;
    uint64_t fault;
    int faulted;

    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    call.view = &view;
    faulted = hprof_guard_call(view.buf, (size_t)view.len, read_header, &call, &fault) < 0;
    PyBuffer_Release(&view);
    if (faulted)
        return hprof_raise_changed(hprof_get_state(module), fault);
    if (call.rc != HP_OK)
        return hprof_raise(hprof_get_state(module), &call.err);
    return Py_BuildValue("siiKn", call.header.magic, call.header.version, call.header.id_size,
                         (unsigned long long)call.header.timestamp, (Py_ssize_t)call.header.length);
}

PyDoc_STRVAR(tag_name_doc,
"tag_name($module, tag, /, sub=False)\n--\n\n"
"Name of a top-level record tag (or heap sub-record tag when sub is true), as\n"
"Tailor's scripts print it, or None for a tag the format does not define.");

static PyObject *tag_name(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "", "sub", NULL };
    int tag, sub = 0;
    const char *name;
    (void)module;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "i|p:tag_name", keywords, &tag, &sub))
        return NULL;
    if (tag < 0 || tag > 255)
        Py_RETURN_NONE;
    name = sub ? hp_subtag_name(tag) : hp_tag_name(tag);
    if (!name)
        Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}

PyDoc_STRVAR(type_size_doc,
"type_size($module, type, id_size, /)\n--\n\n"
"Size in bytes of a value of HPROF basic type `type`, or 0 for an invalid code.");

static PyObject *type_size(PyObject *module, PyObject *args)
{
    int type, id_size;
    (void)module;
    if (!PyArg_ParseTuple(args, "ii:type_size", &type, &id_size))
        return NULL;
    return PyLong_FromLong(hp_type_size(type, id_size));
}

/* fn(bytes of the buffer `arg`) */
static PyObject *decode_buffer(PyObject *arg, PyObject *(*fn)(const uint8_t *text, size_t len))
{
    Py_buffer view;
    PyObject *out;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    out = fn(view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return out;
}

PyDoc_STRVAR(decode_mutf8_doc,
"decode_mutf8($module, data, /)\n--\n\n"
"Java's modified UTF-8 (HPROF's names and strings) as a str, never failing: bytes\n"
"that are not valid become U+FFFD, as do unpaired surrogates.");

static PyObject *decode_mutf8(PyObject *module, PyObject *arg)
{
    (void)module;
    return decode_buffer(arg, hprof_decode_mutf8);
}

PyDoc_STRVAR(java_name_doc,
"java_name($module, data, /)\n--\n\n"
"The Java name of a class name as a dump writes it (modified UTF-8 bytes), as\n"
"VisualVM and MAT show it: b'java/lang/String' -> 'java.lang.String', b'[[I' ->\n"
"'int[][]', b'[Ljava/lang/Object;' -> 'java.lang.Object[]'; ART's names stay.");

static PyObject *java_name(PyObject *module, PyObject *arg)
{
    (void)module;
    return decode_buffer(arg, hprof_java_name);
}

PyDoc_STRVAR(unnamed_class_doc,
"unnamed_class($module, class_id, /)\n--\n\n"
"The name every reader gives a class the dump does not name (no LOAD_CLASS, or\n"
"one naming a missing STRING): '<unnamed class 0x1a2b>'.");

static PyObject *unnamed_class(PyObject *module, PyObject *arg)
{
    char unnamed[HP_UNNAMED_MAX];
    unsigned long long id = PyLong_AsUnsignedLongLong(arg);
    (void)module;
    if (id == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    return PyUnicode_FromStringAndSize(unnamed, (Py_ssize_t)hp_unnamed(unnamed, HP_UNNAMED_CLASS, id));
}

static PyMethodDef header_functions[] = {
    { "decode_mutf8", (PyCFunction)decode_mutf8, METH_O, decode_mutf8_doc },
    { "java_name", (PyCFunction)java_name, METH_O, java_name_doc },
    { "parse_header", (PyCFunction)parse_header, METH_O, parse_header_doc },
    { "tag_name", (PyCFunction)(void (*)(void))tag_name, METH_VARARGS | METH_KEYWORDS, tag_name_doc },
    { "type_size", (PyCFunction)type_size, METH_VARARGS, type_size_doc },
    { "unnamed_class", (PyCFunction)unnamed_class, METH_O, unnamed_class_doc },
    { NULL, NULL, 0, NULL },
};

int hprof_header_init(PyObject *module, hprof_state *st)
{
    (void)st;
    return PyModule_AddFunctions(module, header_functions);
}
