/* hprofkit._hprof._register: the package hands its Python classes down to
 * the module once, at import (hprofkit/__init__.py), so that C raises the
 * package's exceptions, makes its events and instantiates its handle
 * classes without ever importing the package: Python stands on C, never
 * the other way round (docs/architecture.md). */
#include "_hprof_parts.h"

#include <string.h>

/* Exceptions live in Python (hprofkit/_errors.py) so they pickle and
 * document themselves; the module keeps them by core error code. */
static int register_errors(hprof_state *st, PyObject *errors)
{
    enum { N = 12 };
    static const struct { hp_code code; const char *name; } map[N] = {
        { HP_E_TRUNCATED, "TruncatedError" }, { HP_E_FORMAT, "FormatError" },
        { HP_E_CORRUPT, "CorruptError" },     { HP_E_OVERRUN, "OverrunError" },
        { HP_E_NOMEM, "HprofError" },         { HP_E_USAGE, "HprofError" },
        { HP_E_LIMIT, "UnsupportedError" },   { HP_E_ABORTED, "CorruptError" },
        { HP_E_NO_DUMP, "NoHeapDumpError" },  { HP_E_TOO_LARGE, "RestoreLimitError" },
        { HP_OK, "HprofError" },
        { HP_OK, "FileChangedError" },        /* the last: st->changed_error */
    };
    PyObject *found[N] = { NULL };
    int i;
    for (i = 0; i < N; i++) {
        found[i] = PyObject_GetAttrString(errors, map[i].name);
        if (!found[i])
            goto fail;
        if (!PyExceptionClass_Check(found[i])) {
            PyErr_Format(PyExc_TypeError, "errors.%s must be an exception class", map[i].name);
            goto fail;
        }
    }
    for (i = 0; i < N - 1; i++)
        Py_XSETREF(st->errors[map[i].code], found[i]);
    Py_XSETREF(st->changed_error, found[N - 1]);
    return 0;
fail:
    for (i = 0; i < N; i++)
        Py_XDECREF(found[i]);
    return -1;
}

/* The Parser's events (hprofkit/_events.py): make_event (_hprof_parser.c)
 * fills them in place as plain tuples, so each must be a tuple subtype
 * without instance attributes (a NamedTuple: __slots__ = ()). */
static int register_events(hprof_state *st, PyObject *events)
{
    static const char *const names[4] = { "HeaderEvent", "RecordEvent", "SubrecordEvent", "EndEvent" };
    PyObject *found[4] = { NULL };
    int i;
    for (i = 0; i < 4; i++) {
        PyTypeObject *type;
        found[i] = PyObject_GetAttrString(events, names[i]);
        if (!found[i])
            goto fail;
        type = (PyTypeObject *)found[i];
        if (!PyType_Check(found[i]) || !PyType_IsSubtype(type, &PyTuple_Type) ||
            type->tp_basicsize != PyTuple_Type.tp_basicsize || type->tp_itemsize != PyTuple_Type.tp_itemsize ||
            type->tp_dictoffset != 0) {
            PyErr_Format(PyExc_TypeError, "events.%s must be a tuple type without instance attributes", names[i]);
            goto fail;
        }
    }
    for (i = 0; i < 4; i++)
        Py_XSETREF(st->event_types[i], found[i]);
    return 0;
fail:
    for (i = 0; i < 4; i++)
        Py_XDECREF(found[i]);
    return -1;
}

/* A handle class C may instantiate in place of `base`: a subclass of it
 * that adds no storage (__slots__ = ()), no __new__ and no finalizer, so a
 * handle is the base's struct and the base's deallocator frees it. */
static int check_handle_class(PyObject *cls, PyTypeObject *base, const char *what)
{
    PyTypeObject *type = (PyTypeObject *)cls;
    if (!PyType_Check(cls) || !PyType_IsSubtype(type, base)) {
        PyErr_Format(PyExc_TypeError, "%s must be a subclass of %s", what, base->tp_name);
        return -1;
    }
    if (type->tp_basicsize != base->tp_basicsize || type->tp_itemsize != 0 || type->tp_dictoffset != 0 ||
        type->tp_weaklistoffset != base->tp_weaklistoffset || type->tp_new != base->tp_new ||
        type->tp_finalize != NULL || type->tp_del != NULL) {
        PyErr_Format(PyExc_TypeError, "%s must add no storage (__slots__ = ()), __new__ or __del__", what);
        return -1;
    }
    return 0;
}

/* Python makes every class it defines collectable (Py_TPFLAGS_HAVE_GC, as an
 * instance could be stored on its own class), which would give each
 * HeapObject handle a 16-byte collector header and the generic subclass
 * deallocator: 35% slower iteration over heap.objects().  A handle refers to
 * its heap and its class only, and nothing reachable from those holds a
 * HeapObject handle, so it needs no collector: the class is made what a
 * subclass of a non-collectable C type adding nothing would be if CPython
 * allowed it, with the base's deallocator.  Done before C made any instance
 * of it (none can be made in Python: it has no __new__). */
static void make_plain_handle_class(PyTypeObject *type, PyTypeObject *base)
{
    if (PyType_IS_GC(base) || !PyType_IS_GC(type))
        return;
    type->tp_flags &= ~Py_TPFLAGS_HAVE_GC;
    type->tp_free = base->tp_free;
    type->tp_dealloc = base->tp_dealloc;
    type->tp_traverse = NULL;
    type->tp_clear = NULL;
    PyType_Modified(type);
}

static PyObject *register_classes(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "errors", "events", "heap_object", "heap_class", NULL };
    hprof_state *st = hprof_get_state(module);
    PyObject *errors, *events, *heap_object, *heap_class;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$OOOO:_register", keywords, &errors, &events, &heap_object,
                                     &heap_class))
        return NULL;
    if (check_handle_class(heap_object, st->heap_object_type, "heap_object") < 0 ||
        check_handle_class(heap_class, st->heap_class_type, "heap_class") < 0)
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)heap_class, (PyTypeObject *)heap_object)) {
        PyErr_SetString(PyExc_TypeError, "heap_class must be a subclass of heap_object");
        return NULL;
    }
    if (register_errors(st, errors) < 0 || register_events(st, events) < 0)
        return NULL;
    make_plain_handle_class((PyTypeObject *)heap_object, st->heap_object_type);
    Py_XSETREF(st->object_handle_type, (PyTypeObject *)Py_NewRef(heap_object));
    Py_XSETREF(st->class_handle_type, (PyTypeObject *)Py_NewRef(heap_class));
    Py_RETURN_NONE;
}

static PyMethodDef register_methods[] = {
    { "_register", (PyCFunction)(void (*)(void))register_classes, METH_VARARGS | METH_KEYWORDS,
      "_register($module, /, *, errors, events, heap_object, heap_class)\n--\n\n"
      "Hands the package's classes down to the module (hprofkit/__init__.py calls it once):\n"
      "errors and events are the modules hprofkit._errors and hprofkit._events; heap_object and\n"
      "heap_class the handle classes that C instantiates (subclasses of HeapObject and HeapClass)." },
    { NULL, NULL, 0, NULL },
};

int hprof_register_init(PyObject *module, hprof_state *st)
{
    (void)st;
    return PyModule_AddFunctions(module, register_methods);
}
