/* MappingIndex: the core's mapping parser (core/hp_mapping.h) for Python.
 *
 * It owns the text (a bytes object, never changed) and the parsed index;
 * both are read-only once built, so lookups need no lock and may run in
 * any number of threads.  hprofkit.Mapping (python/hprofkit/_mapping.py)
 * gives these lookups their meaning: fields per declaring class, frames
 * with line ranges, inline and outline frames. */
#include "_hprof_mapping.h"
#include "_hprof_parts.h"

typedef struct {
    PyObject_HEAD
    PyObject *text; /* bytes */
    hp_mapping *mapping;
} MappingIndex;

const hp_mapping *hprof_mapping_core(hprof_state *st, PyObject *obj)
{
    if (!st->mapping_type || !PyObject_TypeCheck(obj, st->mapping_type)) {
        PyErr_Format(PyExc_TypeError, "mapping must be a hprofkit.Mapping, not %.100s", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return ((MappingIndex *)obj)->mapping;
}

static PyObject *span_str(const MappingIndex *self, hp_span span)
{
    return PyUnicode_DecodeUTF8(hp_mapping_text(self->mapping) + span.off, span.len, "replace");
}

/* The span's text, or None when it is empty. */
static PyObject *span_or_none(const MappingIndex *self, hp_span span)
{
    if (!span.len)
        Py_RETURN_NONE;
    return span_str(self, span);
}

static PyObject *line_or_none(int32_t line)
{
    if (line == HP_MAP_NO_LINE)
        Py_RETURN_NONE;
    return PyLong_FromLong(line);
}

static PyObject *mapping_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "", NULL };
    PyObject *source, *text;
    MappingIndex *self;
    hp_mapping_error err;
    hp_code rc;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:MappingIndex", keywords, &source))
        return NULL;
    text = PyBytes_Check(source) ? Py_NewRef(source) : PyBytes_FromObject(source);
    if (!text)
        return NULL;
    self = (MappingIndex *)type->tp_alloc(type, 0);
    if (!self) {
        Py_DECREF(text);
        return NULL;
    }
    self->text = text;
    Py_BEGIN_ALLOW_THREADS
    rc = hp_mapping_parse(&hprof_raw_alloc, PyBytes_AS_STRING(text), (size_t)PyBytes_GET_SIZE(text), &self->mapping,
                          &err);
    Py_END_ALLOW_THREADS
    if (rc != HP_OK) {
        Py_DECREF(self);
        if (rc == HP_E_NOMEM)
            return PyErr_NoMemory();
        /* (message, line): hprofkit.Mapping turns it into MappingError. */
        args = Py_BuildValue("(sK)", err.text, (unsigned long long)err.line);
        if (args) {
            PyErr_SetObject(PyExc_ValueError, args);
            Py_DECREF(args);
        }
        return NULL;
    }
    return (PyObject *)self;
}

static void mapping_dealloc(MappingIndex *self)
{
    PyTypeObject *type = Py_TYPE(self);
    hp_mapping_free(self->mapping);
    Py_XDECREF(self->text);
    type->tp_free(self);
    Py_DECREF(type);
}

static PyObject *index_or_none(uint32_t index)
{
    if (index == HP_MAP_NONE)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLong(index);
}

/* find_class / find_original: the class index of a name, or None. */
static PyObject *find(MappingIndex *self, PyObject *name, int original)
{
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(name, &n);
    if (!p)
        return NULL;
    return index_or_none(original ? hp_mapping_find_original(self->mapping, p, (size_t)n)
                                  : hp_mapping_find_class(self->mapping, p, (size_t)n));
}

PyDoc_STRVAR(find_class_doc,
"_find_class($self, name, /)\n--\n\n"
"The index of the class whose obfuscated name is `name` (dotted, as the\n"
"mapping writes it), or None.");

static PyObject *mapping_find_class(MappingIndex *self, PyObject *name) { return find(self, name, 0); }

PyDoc_STRVAR(find_original_doc,
"_find_original($self, name, /)\n--\n\n"
"The index of the class whose original (clear) name is `name`, or None.");

static PyObject *mapping_find_original(MappingIndex *self, PyObject *name) { return find(self, name, 1); }

/* The class numbered by `arg`, or NULL with IndexError (or the int's error) set. */
static const hp_map_class *class_at(MappingIndex *self, PyObject *arg)
{
    unsigned long index = PyLong_AsUnsignedLong(arg);
    const hp_map_class *cls;
    if (index == (unsigned long)-1 && PyErr_Occurred())
        return NULL;
    cls = index <= UINT32_MAX ? hp_mapping_class(self->mapping, (uint32_t)index) : NULL;
    if (!cls)
        PyErr_SetString(PyExc_IndexError, "no such class in the mapping");
    return cls;
}

PyDoc_STRVAR(clear_class_doc,
"_clear_class($self, name, /)\n--\n\n"
"A class name as a dump writes it (HotSpot's a/b, [La/b;, ART's a.b, a.b[]),\n"
"deobfuscated and spelled the same way; None when the mapping does not name it.");

static PyObject *mapping_clear_class(MappingIndex *self, PyObject *name)
{
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(name, &n);
    char small[512], *out = small, *scratch;
    size_t len, cap = sizeof small;
    PyObject *result;
    if (!p)
        return NULL;
    if (!(scratch = PyMem_Malloc((size_t)n + 1)))
        return PyErr_NoMemory();
    len = hp_mapping_clear_class(self->mapping, p, (size_t)n, out, cap, scratch);
    if (len > cap) { /* a long name: again with room for it */
        if (!(out = PyMem_Malloc(len))) {
            PyMem_Free(scratch);
            return PyErr_NoMemory();
        }
        hp_mapping_clear_class(self->mapping, p, (size_t)n, out, len, scratch);
    }
    result = len ? PyUnicode_DecodeUTF8(out, (Py_ssize_t)len, "replace") : Py_NewRef(Py_None);
    if (out != small)
        PyMem_Free(out);
    PyMem_Free(scratch);
    return result;
}

PyDoc_STRVAR(clear_field_doc,
"_clear_field($self, class_index, name, type, /)\n--\n\n"
"The clear name of field `name` of class number class_index, told apart by\n"
"the HPROF basic type code `type` (0: unknown) when the class has several of\n"
"that name; None when the mapping does not give one name.");

static PyObject *mapping_clear_field(MappingIndex *self, PyObject *args)
{
    unsigned long class_index;
    const char *name;
    Py_ssize_t n;
    int type;
    uint32_t i;
    if (!PyArg_ParseTuple(args, "ks#i:clear_field", &class_index, &name, &n, &type))
        return NULL;
    i = class_index > UINT32_MAX ? HP_MAP_NONE
                                 : hp_mapping_clear_field(self->mapping, (uint32_t)class_index, name, (size_t)n, type);
    if (i == HP_MAP_NONE)
        Py_RETURN_NONE;
    return span_str(self, hp_mapping_member(self->mapping, i)->name);
}

PyDoc_STRVAR(class_info_doc,
"_class_info($self, index, /)\n--\n\n"
"(original, obfuscated, source_file or None, synthesized, line) of class\n"
"number `index`.");

static PyObject *mapping_class_info(MappingIndex *self, PyObject *arg)
{
    const hp_map_class *cls = class_at(self, arg);
    if (!cls)
        return NULL;
    return Py_BuildValue("(NNNOk)", span_str(self, cls->original), span_str(self, cls->obfuscated),
                         span_or_none(self, cls->source_file), (cls->flags & HP_MAP_SYNTHESIZED) ? Py_True : Py_False,
                         (unsigned long)cls->line);
}

/* A member as the tuple hprofkit.Mapping reads (see members()). */
static PyObject *member_tuple(MappingIndex *self, uint32_t index)
{
    const hp_map_member *mb = hp_mapping_member(self->mapping, index);
    const int32_t *pos = hp_mapping_positions(self->mapping, mb);
    PyObject *positions = PyDict_New();
    uint32_t i;
    if (!positions)
        return NULL;
    for (i = 0; i < mb->n_positions; i++) {
        PyObject *k = PyLong_FromLong(pos[2 * i]), *v = PyLong_FromLong(pos[2 * i + 1]);
        int bad = !k || !v || PyDict_SetItem(positions, k, v) < 0;
        Py_XDECREF(k);
        Py_XDECREF(v);
        if (bad) {
            Py_DECREF(positions);
            return NULL;
        }
    }
    return Py_BuildValue("(sNNNNNNNNNNkkNkk)", mb->kind == HP_MAP_FIELD ? "field" : "method",
                         span_str(self, mb->type), span_or_none(self, mb->owner), span_str(self, mb->name),
                         mb->kind == HP_MAP_METHOD ? span_str(self, mb->args) : Py_NewRef(Py_None),
                         span_str(self, mb->obfuscated), span_or_none(self, mb->residual), line_or_none(mb->min_lo),
                         line_or_none(mb->min_hi), line_or_none(mb->orig_lo), line_or_none(mb->orig_hi),
                         (unsigned long)(mb->flags & HP_MAP_SYNTHESIZED), (unsigned long)(mb->flags & HP_MAP_OUTLINE),
                         positions, (unsigned long)mb->line, (unsigned long)index);
}

PyDoc_STRVAR(members_doc,
"_members($self, class_index, name, /)\n--\n\n"
"The members of class number class_index whose obfuscated name is `name`,\n"
"in file order: tuples (kind, type, owner, name, args, obfuscated, residual,\n"
"min_lo, min_hi, orig_lo, orig_hi, synthesized, outline, positions, line,\n"
"index).\n"
"kind is 'field' or 'method'; owner the qualifying holder or None; args\n"
"the parameter text (None for fields); residual R8's residual signature or\n"
"None; line numbers None when absent; positions the outline call site's\n"
"{outline line: call-site line}; line the member's line in the text, index\n"
"its number among all members (inline frames are consecutive members).");

static PyObject *mapping_members(MappingIndex *self, PyObject *args)
{
    unsigned long class_index;
    const char *name;
    Py_ssize_t n;
    PyObject *out;
    uint32_t i;
    if (!PyArg_ParseTuple(args, "ks#:members", &class_index, &name, &n))
        return NULL;
    out = PyList_New(0);
    if (!out || class_index > UINT32_MAX)
        return out;
    for (i = hp_mapping_find_member(self->mapping, (uint32_t)class_index, name, (size_t)n); i != HP_MAP_NONE;
         i = hp_mapping_next_member(self->mapping, i)) {
        PyObject *item = member_tuple(self, i);
        if (!item || PyList_Append(out, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(item);
    }
    return out;
}

PyDoc_STRVAR(class_fields_doc,
"_class_fields($self, index, /)\n--\n\n"
"The fields class number `index` lists, in file order: (obfuscated, name,\n"
"type).");

static PyObject *mapping_class_fields(MappingIndex *self, PyObject *arg)
{
    const hp_map_class *cls = class_at(self, arg);
    PyObject *out;
    uint32_t i;
    if (!cls)
        return NULL;
    out = PyList_New(0);
    for (i = cls->first_member; out && i < cls->first_member + cls->n_members; i++) {
        const hp_map_member *mb = hp_mapping_member(self->mapping, i);
        PyObject *item;
        if (mb->kind != HP_MAP_FIELD)
            continue;
        item = Py_BuildValue("(NNN)", span_str(self, mb->obfuscated), span_str(self, mb->name),
                             span_str(self, mb->type));
        if (!item || PyList_Append(out, item) < 0)
            Py_CLEAR(out);
        Py_XDECREF(item);
    }
    return out;
}

PyDoc_STRVAR(class_names_doc,
"_class_names($self, /)\n--\n\n"
"Every class as (original, obfuscated), in file order.");

static PyObject *mapping_class_names(MappingIndex *self, PyObject *unused)
{
    uint32_t i, n = hp_mapping_class_count(self->mapping);
    PyObject *out = PyList_New(n);
    (void)unused;
    for (i = 0; out && i < n; i++) {
        const hp_map_class *cls = hp_mapping_class(self->mapping, i);
        PyObject *pair = Py_BuildValue("(NN)", span_str(self, cls->original), span_str(self, cls->obfuscated));
        if (!pair) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, pair);
    }
    return out;
}

static PyObject *mapping_get(MappingIndex *self, void *closure)
{
    switch ((int)(intptr_t)closure) {
    case 0: return PyLong_FromUnsignedLong(hp_mapping_class_count(self->mapping));
    case 1: return PyLong_FromUnsignedLong(hp_mapping_member_count(self->mapping));
    case 2: return PyLong_FromUnsignedLong(hp_mapping_version(self->mapping));
    case 4: return Py_NewRef(self->text);
    default: return PyLong_FromSsize_t(PyBytes_GET_SIZE(self->text));
    }
}

static PyMethodDef mapping_methods[] = {
    { "_find_class", (PyCFunction)mapping_find_class, METH_O, find_class_doc },
    { "_find_original", (PyCFunction)mapping_find_original, METH_O, find_original_doc },
    { "_clear_class", (PyCFunction)mapping_clear_class, METH_O, clear_class_doc },
    { "_clear_field", (PyCFunction)mapping_clear_field, METH_VARARGS, clear_field_doc },
    { "_class_info", (PyCFunction)mapping_class_info, METH_O, class_info_doc },
    { "_members", (PyCFunction)mapping_members, METH_VARARGS, members_doc },
    { "_class_fields", (PyCFunction)mapping_class_fields, METH_O, class_fields_doc },
    { "_class_names", (PyCFunction)mapping_class_names, METH_NOARGS, class_names_doc },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef mapping_getset[] = {
    { "_class_count", (getter)mapping_get, NULL, "Classes in the mapping.", (void *)0 },
    { "_member_count", (getter)mapping_get, NULL, "Field and method lines in the mapping.", (void *)1 },
    { "_version", (getter)mapping_get, NULL,
      "R8's map version (com.android.tools.r8.mapping) as major * 1000 + minor; 0 for none.", (void *)2 },
    { "_size", (getter)mapping_get, NULL, "Bytes of the mapping text.", (void *)3 },
    { "_text", (getter)mapping_get, NULL, "The mapping text (bytes).", (void *)4 },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot mapping_slots[] = {
    { Py_tp_doc, "MappingIndex(text, /)\n--\n\n"
                 "A ProGuard or R8 mapping.txt, parsed and indexed by obfuscated name: the base of\n"
                 "hprofkit.Mapping, whose methods give its look-ups their meaning.  A malformed line\n"
                 "raises ValueError(message, line)." },
    { Py_tp_new, mapping_new },
    { Py_tp_dealloc, mapping_dealloc },
    { Py_tp_methods, mapping_methods },
    { Py_tp_getset, mapping_getset },
    { 0, NULL },
};

static PyType_Spec mapping_spec = {
    "hprofkit._hprof.MappingIndex", sizeof(MappingIndex), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_IMMUTABLETYPE, mapping_slots,
};

int hprof_mapping_init(PyObject *module, hprof_state *st)
{
    static const char *const names[] = { "MappingIndex" };
    if (hprof_add_types(module, &mapping_spec, names, 1) < 0)
        return -1;
    st->mapping_type = (PyTypeObject *)PyObject_GetAttrString(module, "MappingIndex");
    return st->mapping_type ? 0 : -1;
}
