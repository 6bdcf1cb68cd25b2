/* hprofkit._hprof: module definition, state, error translation, small helpers.
 *
 * The glue never parses HPROF itself: it hands buffers to the core, turns
 * core events into Python objects and core errors into hprofkit exceptions. */
#include "_hprof.h"

#include "core/hp_header.h"

static void *raw_malloc(size_t n) { return PyMem_RawMalloc(n); }
static void *raw_realloc(void *p, size_t n) { return PyMem_RawRealloc(p, n); }
static void raw_free(void *p) { PyMem_RawFree(p); }
const hp_alloc hprof_raw_alloc = { raw_malloc, raw_realloc, raw_free };

/* Our types are not subclassable, so the defining module is the type's own. */
hprof_state *hprof_state_of_type(PyTypeObject *type)
{
    PyObject *module = PyType_GetModule(type);
    return module ? hprof_get_state(module) : NULL;
}

/* The one place where core errors become Python exceptions. */
PyObject *hprof_raise(hprof_state *st, const hp_error *err)
{
    char message[256];
    const char *record = NULL;
    PyObject *cls, *exc;

    if (err->code == HP_E_NOMEM)
        return PyErr_NoMemory();
    hp_error_format(err, message, sizeof message);
    if (err->tag >= 0)
        record = err->is_sub ? hp_subtag_name(err->tag) : hp_tag_name(err->tag);
    cls = st->errors[err->code <= HP_E_LIMIT ? err->code : HP_E_CORRUPT];
    /* A tag of -1 (the file header) becomes None on the Python side. */
    exc = PyObject_CallFunction(cls, "sKiz", message, (unsigned long long)err->offset, err->tag, record);
    if (exc) {
        PyErr_SetObject(cls, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

int hprof_add_types(PyObject *module, PyType_Spec *specs, const char *const *names, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        PyObject *type = PyType_FromModuleAndSpec(module, &specs[i], NULL);
        int rc;
        if (!type)
            return -1;
        rc = PyModule_AddObjectRef(module, names[i], type);
        Py_DECREF(type);
        if (rc < 0)
            return -1;
    }
    return 0;
}

PyDoc_STRVAR(parse_header_doc,
"parse_header($module, buffer, /)\n--\n\n"
"Parse the HPROF header at the start of buffer.\n\n"
"Returns (magic, version, id_size, timestamp_ms, header_length); raises\n"
"FormatError or TruncatedError.");

static PyObject *parse_header(PyObject *module, PyObject *arg)
{
    Py_buffer view;
    hp_header header;
    hp_error err;
    hp_code rc;

    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    rc = hp_header_parse(view.buf, (size_t)view.len, &header, &err);
    PyBuffer_Release(&view);
    if (rc != HP_OK)
        return hprof_raise(hprof_get_state(module), &err);
    return Py_BuildValue("siiKn", header.magic, header.version, header.id_size,
                         (unsigned long long)header.timestamp, (Py_ssize_t)header.length);
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

PyDoc_STRVAR(records_doc,
"records($module, buffer, /)\n--\n\n"
"Iterate over the top-level records of a whole HPROF file in buffer.\n"
"Records point into buffer (nothing is copied) and hold its export.");

PyDoc_STRVAR(subrecords_doc,
"subrecords($module, buffer, /)\n--\n\n"
"Iterate over every heap sub-record of a whole HPROF file in buffer.");

PyDoc_STRVAR(stats_doc,
"stats($module, buffer, /, progress=None)\n--\n\n"
"Count records and sub-records per tag and build the class histogram of a\n"
"whole HPROF file in buffer.  progress(done, total) is called between\n"
"slices.  Returns a dict of plain values (see hprofkit.Stats).");

PyDoc_STRVAR(walk_doc,
"walk($module, buffer, /)\n--\n\n"
"Walk every record (and sub-record) in C with the GIL released and return\n"
"the number of events; a speed probe for benchmarks.");

static PyMethodDef module_methods[] = {
    { "parse_header", (PyCFunction)parse_header, METH_O, parse_header_doc },
    { "tag_name", (PyCFunction)(void (*)(void))tag_name, METH_VARARGS | METH_KEYWORDS, tag_name_doc },
    { "type_size", (PyCFunction)type_size, METH_VARARGS, type_size_doc },
    { "records", (PyCFunction)hprof_records, METH_O, records_doc },
    { "subrecords", (PyCFunction)hprof_subrecords, METH_O, subrecords_doc },
    { "stats", (PyCFunction)(void (*)(void))hprof_stats, METH_VARARGS | METH_KEYWORDS, stats_doc },
    { "walk", (PyCFunction)hprof_walk, METH_O, walk_doc },
    { NULL, NULL, 0, NULL },
};

/* Exceptions live in Python (hprofkit/_errors.py) so they pickle and document
 * themselves; the module caches them by core error code. */
static int load_errors(hprof_state *st)
{
    static const struct { hp_code code; const char *name; } map[] = {
        { HP_E_TRUNCATED, "TruncatedError" }, { HP_E_FORMAT, "FormatError" },
        { HP_E_CORRUPT, "CorruptError" },     { HP_E_OVERRUN, "OverrunError" },
        { HP_E_NOMEM, "HprofError" },         { HP_E_USAGE, "HprofError" },
        { HP_E_LIMIT, "UnsupportedError" },   { HP_OK, "HprofError" },
    };
    PyObject *errors = PyImport_ImportModule("hprofkit._errors");
    size_t i;
    if (!errors)
        return -1;
    for (i = 0; i < sizeof map / sizeof map[0]; i++) {
        st->errors[map[i].code] = PyObject_GetAttrString(errors, map[i].name);
        if (!st->errors[map[i].code]) {
            Py_DECREF(errors);
            return -1;
        }
    }
    Py_DECREF(errors);
    return 0;
}

static int module_exec(PyObject *module)
{
    hprof_state *st = hprof_get_state(module);
    if (load_errors(st) < 0 || hprof_iter_init(module, st) < 0 || hprof_parser_init(module, st) < 0 ||
        hprof_filter_init(module, st) < 0 || hprof_pack_init(module, st) < 0)
        return -1;
    if (PyModule_AddIntConstant(module, "GIL_MINSIZE", (long)HPROF_GIL_MINSIZE) < 0 ||
        PyModule_AddIntConstant(module, "WHOLE_MAX", (long)HP_WHOLE_MAX) < 0)
        return -1;
    return 0;
}

static int module_traverse(PyObject *module, visitproc visit, void *arg)
{
    hprof_state *st = hprof_get_state(module);
    size_t i;
    Py_VISIT(st->event_iter_type);
    Py_VISIT(st->record_type);
    Py_VISIT(st->subrecord_type);
    for (i = 0; i <= HP_E_LIMIT; i++)
        Py_VISIT(st->errors[i]);
    return 0;
}

static int module_clear(PyObject *module)
{
    hprof_state *st = hprof_get_state(module);
    size_t i;
    Py_CLEAR(st->event_iter_type);
    Py_CLEAR(st->record_type);
    Py_CLEAR(st->subrecord_type);
    for (i = 0; i <= HP_E_LIMIT; i++)
        Py_CLEAR(st->errors[i]);
    return 0;
}

static void module_free(void *module) { module_clear((PyObject *)module); }

static PyModuleDef_Slot module_slots[] = {
    { Py_mod_exec, module_exec },
    { 0, NULL },
};

PyModuleDef hprof_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "hprofkit._hprof",
    .m_doc = "C core of hprofkit: zero-copy HPROF parsing, statistics and stream filters.",
    .m_size = sizeof(hprof_state),
    .m_methods = module_methods,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__hprof(void) { return PyModuleDef_Init(&hprof_module); }
