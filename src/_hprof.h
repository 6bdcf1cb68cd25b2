/* Shared declarations of the glue between CPython and the C core. */
#ifndef HPROF_GLUE_H
#define HPROF_GLUE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "core/hp_common.h"
#include "core/hp_parser.h"

/* Per-module state: the heap types and the exception classes of hprofkit._errors. */
typedef struct {
    PyTypeObject *event_iter_type;
    PyTypeObject *record_type;
    PyTypeObject *subrecord_type;
    PyObject *errors[HP_E_LIMIT + 1]; /* indexed by hp_code */
} hprof_state;

extern PyModuleDef hprof_module;

/* Core allocations go through PyMem_Raw*: legal without the GIL, seen by tracemalloc. */
extern const hp_alloc hprof_raw_alloc;

/* Inputs at least this large are processed with the GIL released. */
#define HPROF_GIL_MINSIZE ((size_t)64 << 10)
/* Long walks drop back into Python this often to honour Ctrl-C. */
#define HPROF_SLICE ((size_t)64 << 20)

static inline hprof_state *hprof_get_state(PyObject *module)
{
    return (hprof_state *)PyModule_GetState(module);
}
hprof_state *hprof_state_of_type(PyTypeObject *type);

/* Raises the hprofkit exception for `err`; always returns NULL. */
PyObject *hprof_raise(hprof_state *st, const hp_error *err);

/* Creates the heap type of each spec and adds it to the module under the
 * matching name; -1 with an exception set on failure. */
int hprof_add_types(PyObject *module, PyType_Spec *specs, const char *const *names, size_t n);

/* Type registration, one per glue file; -1 with an exception set on failure. */
int hprof_iter_init(PyObject *module, hprof_state *st);
int hprof_parser_init(PyObject *module, hprof_state *st);
int hprof_filter_init(PyObject *module, hprof_state *st);
int hprof_pack_init(PyObject *module, hprof_state *st);

/* Module-level functions defined in other glue files. */
PyObject *hprof_records(PyObject *module, PyObject *buffer);
PyObject *hprof_subrecords(PyObject *module, PyObject *buffer);
PyObject *hprof_stats(PyObject *module, PyObject *args, PyObject *kwargs);
PyObject *hprof_walk(PyObject *module, PyObject *buffer);

#endif
