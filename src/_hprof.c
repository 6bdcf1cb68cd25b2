/* hprofkit._hprof: the module, assembled from the glue files.
 *
 * This file only defines the module and its state: each glue file adds its
 * own functions and types (_hprof_parts.h), and the helpers they share live
 * in _hprof_glue.c.  The module imports nothing from the package: the
 * package hands its classes down at import (_hprof_register.c). */
#include "_hprof_parts.h"

static int module_exec(PyObject *module)
{
    static int (*const parts[])(PyObject *, hprof_state *) = {
        hprof_header_init, hprof_iter_init, hprof_stats_init,
        hprof_parser_init, hprof_filter_init, hprof_pack_init, hprof_heap_iter_init, hprof_routes_init,
        hprof_heap_object_init,
        hprof_heap_init, hprof_mapping_init, hprof_register_init,
    };
    hprof_state *st = hprof_get_state(module);
    size_t i;
    for (i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i](module, st) < 0)
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
    Py_VISIT(st->heap_type);
    Py_VISIT(st->heap_object_type);
    Py_VISIT(st->heap_class_type);
    Py_VISIT(st->heap_iter_type);
    Py_VISIT(st->object_handle_type);
    Py_VISIT(st->class_handle_type);
    Py_VISIT(st->reference_type);
    Py_VISIT(st->referrer_type);
    Py_VISIT(st->field_type);
    Py_VISIT(st->gc_root_type);
    Py_VISIT(st->stack_frame_type);
    Py_VISIT(st->mapping_type);
    Py_VISIT(st->routes_type);
    Py_VISIT(st->route_type);
    for (i = 0; i < HP_E_COUNT; i++)
        Py_VISIT(st->errors[i]);
    for (i = 0; i < 4; i++)
        Py_VISIT(st->event_types[i]);
    for (i = 0; i < 4; i++)
        Py_VISIT(st->event_kinds[i]);
    Py_VISIT(st->changed_error);
    return 0;
}

static int module_clear(PyObject *module)
{
    hprof_state *st = hprof_get_state(module);
    size_t i;
    Py_CLEAR(st->event_iter_type);
    Py_CLEAR(st->record_type);
    Py_CLEAR(st->subrecord_type);
    Py_CLEAR(st->heap_type);
    Py_CLEAR(st->heap_object_type);
    Py_CLEAR(st->heap_class_type);
    Py_CLEAR(st->heap_iter_type);
    Py_CLEAR(st->object_handle_type);
    Py_CLEAR(st->class_handle_type);
    Py_CLEAR(st->reference_type);
    Py_CLEAR(st->referrer_type);
    Py_CLEAR(st->field_type);
    Py_CLEAR(st->gc_root_type);
    Py_CLEAR(st->stack_frame_type);
    Py_CLEAR(st->mapping_type);
    Py_CLEAR(st->routes_type);
    Py_CLEAR(st->route_type);
    for (i = 0; i < HP_E_COUNT; i++)
        Py_CLEAR(st->errors[i]);
    for (i = 0; i < 4; i++)
        Py_CLEAR(st->event_types[i]);
    for (i = 0; i < 4; i++)
        Py_CLEAR(st->event_kinds[i]);
    Py_CLEAR(st->changed_error);
    return 0;
}

static void module_free(void *module) { module_clear((PyObject *)module); }

static PyModuleDef_Slot module_slots[] = {
    { Py_mod_exec, module_exec },
#ifdef Py_mod_multiple_interpreters
    /* Every interpreter gets its own module, types and state; they share the
     * main GIL, not one each yet: the glue takes the GIL back from core
     * callbacks with PyGILState_Ensure, which knows only the main
     * interpreter's thread states (docs/architecture.md). */
    { Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_SUPPORTED },
#endif
    { 0, NULL },
};

static PyModuleDef hprof_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "hprofkit._hprof",
    .m_doc = "C core of hprofkit: zero-copy HPROF parsing, statistics and stream filters.",
    .m_size = sizeof(hprof_state),
    .m_methods = NULL, /* each glue file adds its own functions in module_exec */
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__hprof(void) { return PyModuleDef_Init(&hprof_module); }
