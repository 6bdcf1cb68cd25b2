/* heap._columns(table): the columns behind hprofkit.Heap.tables() (hprofkit._tables)
 * as bytes objects the core fills (hp_heap_tables.h) and pyarrow wraps
 * without copying.  No Python object is made per row: only per class, per
 * distinct name and per column.
 *
 * The fills run without the GIL in slices of rows, checking for Ctrl-C
 * between them; the heap is marked busy meanwhile, so close() from another
 * thread frees it only after the slice (and the next slice then raises).  A
 * file that shrinks or changes under them is a FileChangedError. */
#include "_hprof_heap.h"

#include <stdio.h>
#include <string.h>

#include "core/hp_heap_tables.h"

#define SLICE_ROWS (1u << 18) /* a multiple of 8: slices never share a bitmap byte */

typedef void (*slice_fn)(const hp_heap *h, uint32_t start, uint32_t end, void *ctx);

typedef struct {
    slice_fn fn;
    const hp_heap *h;
    uint32_t start, end;
    void *ctx;
} slice_call;

static void run_slice(void *ctx)
{
    slice_call *c = ctx;
    c->fn(c->h, c->start, c->end, c->ctx);
}

/* Runs fn over objects [0, n) in slices without the GIL and under the
 * SIGBUS guard (the dump is a mapping whose file may shrink); 0, or -1 with
 * an exception: KeyboardInterrupt, FileChangedError, or ValueError when the
 * heap was closed.  The fills allocate nothing, so a fault leaks nothing. */
static int run_slices(HeapIndex *heap, uint32_t n, slice_fn fn, void *ctx)
{
    slice_call call = { fn, NULL, 0, 0, ctx };
    do {
        uint64_t fault;
        int rc;
        if (!(call.h = heap_index(heap)))
            return -1;
        call.end = n - call.start > SLICE_ROWS ? call.start + SLICE_ROWS : n;
        heap_enter(heap);
        heap->running++;
        Py_BEGIN_ALLOW_THREADS
        rc = hprof_guard_call(heap->view.buf, (size_t)heap->view.len, run_slice, &call, &fault);
        Py_END_ALLOW_THREADS
        heap->running--;
        heap_leave(heap);
        if (rc < 0) {
            hprof_raise_changed(heap->st, fault);
            return -1;
        }
        if (PyErr_CheckSignals() < 0)
            return -1;
        call.start = call.end;
    } while (call.start < n);
    return 0;
}

/* A new bytes object of `size` bytes for the core to fill (zeroed when
 * `zero`: bitmaps, whose padding bits must be defined); its data in *data.
 * NULL at once if an earlier column failed, so callers allocate them all
 * and check once (making their dict only if no exception is set). */
static PyObject *new_column(uint64_t size, int zero, void *data)
{
    PyObject *b;
    if (PyErr_Occurred())
        return NULL;
    if (size > (uint64_t)PY_SSIZE_T_MAX)
        return PyErr_NoMemory();
    b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (!b)
        return NULL;
    if (zero)
        memset(PyBytes_AS_STRING(b), 0, (size_t)size);
    *(void **)data = PyBytes_AS_STRING(b);
    return b;
}

static uint64_t bitmap_size(uint64_t rows) { return (rows + 7) / 8; }

/* Adds columns[k] under names[k] to dict `out` (stealing them all). */
static int put_all(PyObject *out, const char *const *names, PyObject **columns, int n)
{
    int k, rc = 0;
    for (k = 0; k < n; k++) {
        if (rc == 0 && (!out || !columns[k] || PyDict_SetItemString(out, names[k], columns[k]) < 0))
            rc = -1;
        Py_XDECREF(columns[k]);
    }
    return rc;
}

/* A dictionary of distinct texts: `codes` maps a text to its code, `texts`
 * lists them by code. */
typedef struct {
    PyObject *codes, *texts;
} text_dict;

static int text_dict_init(text_dict *d)
{
    d->codes = PyDict_New();
    d->texts = PyList_New(0);
    return d->codes && d->texts ? 0 : -1;
}

static void text_dict_clear(text_dict *d)
{
    Py_CLEAR(d->codes);
    Py_CLEAR(d->texts);
}

/* The code of `text` (a new one if unseen); -1 for None; -2 on error.
 * Steals `text`. */
static long text_code(text_dict *d, PyObject *text)
{
    PyObject *code;
    long out;
    if (!text)
        return -2;
    if (text == Py_None) {
        Py_DECREF(text);
        return -1;
    }
    code = PyDict_GetItemWithError(d->codes, text);
    if (code) {
        Py_DECREF(text);
        return PyLong_AsLong(code);
    }
    out = (long)PyList_GET_SIZE(d->texts);
    code = PyErr_Occurred() ? NULL : PyLong_FromLong(out);
    if (!code || PyDict_SetItem(d->codes, text, code) < 0 || PyList_Append(d->texts, text) < 0)
        out = -2;
    Py_XDECREF(code);
    Py_DECREF(text);
    return out;
}

/* ---- objects --------------------------------------------------------------- */

static void fill_objects(const hp_heap *h, uint32_t start, uint32_t end, void *ctx)
{
    hp_tables_objects(h, start, end, ctx);
}

static PyObject *object_columns(HeapIndex *heap, const hp_heap *h)
{
    static const char *const names[] = { "id", "class_id", "class_valid", "kind", "shallow_size", "heap",
                                         "heap_valid" };
    uint32_t n = hp_heap_object_count(h), nc = hp_heap_class_count(h), k;
    uint64_t *class_ids;
    int16_t heap_codes[256];
    hp_object_columns c;
    PyObject *columns[7], *out = NULL;
    text_dict heaps = { NULL, NULL };

    if (text_dict_init(&heaps) < 0)
        goto done;
    for (k = 0; k < 256; k++) {
        long code = text_code(&heaps, heap_android_name(heap, (int)k));
        if (code < -1)
            goto done;
        heap_codes[k] = (int16_t)code;
    }
    class_ids = PyMem_Malloc(((size_t)nc + 1) * sizeof *class_ids);
    if (!class_ids) {
        PyErr_NoMemory();
        goto done;
    }
    for (k = 0; k < nc; k++) {
        hp_class_info info;
        if (heap_class_info(heap, k, &info, NULL) < 0) {
            PyMem_Free(class_ids);
            goto done;
        }
        class_ids[k] = info.id;
    }
    memset(&c, 0, sizeof c);
    c.class_ids = class_ids;
    c.heap_codes = heap_codes;
    columns[0] = new_column((uint64_t)n * 8, 0, &c.id);
    columns[1] = new_column((uint64_t)n * 8, 0, &c.class_id);
    columns[2] = new_column(bitmap_size(n), 1, &c.class_valid);
    columns[3] = new_column(n, 0, &c.kind);
    columns[4] = new_column((uint64_t)n * 8, 0, &c.shallow_size);
    columns[5] = new_column((uint64_t)n * 2, 0, &c.heap);
    columns[6] = new_column(bitmap_size(n), 1, &c.heap_valid);
    out = PyErr_Occurred() ? NULL : PyDict_New();
    if (put_all(out, names, columns, 7) < 0 || run_slices(heap, n, fill_objects, &c) < 0 ||
        PyDict_SetItemString(out, "heap_names", heaps.texts) < 0)
        Py_CLEAR(out);
    PyMem_Free(class_ids);
done:
    text_dict_clear(&heaps);
    return out;
}

/* ---- retained sizes and dominators ------------------------------------------ */

typedef struct {
    const hp_reach *reach;
    hp_retained_columns columns;
} retained_pass;

static void fill_retained(const hp_heap *h, uint32_t start, uint32_t end, void *ctx)
{
    retained_pass *p = ctx;
    hp_tables_retained(p->reach, h, start, end, &p->columns);
}

static PyObject *retained_columns(HeapIndex *heap, const hp_heap *h)
{
    static const char *const names[] = { "retained_size", "dominator_id", "dominator_valid" };
    uint32_t n = hp_heap_object_count(h);
    retained_pass pass;
    PyObject *columns[3], *out;
    if (!(pass.reach = heap_reach(heap, REACH_DOMINATORS)))
        return NULL;
    columns[0] = new_column((uint64_t)n * 8, 0, &pass.columns.retained_size);
    columns[1] = new_column((uint64_t)n * 8, 0, &pass.columns.dominator_id);
    columns[2] = new_column(bitmap_size(n), 1, &pass.columns.dominator_valid);
    out = PyErr_Occurred() ? NULL : PyDict_New();
    if (put_all(out, names, columns, 3) < 0 || run_slices(heap, n, fill_retained, &pass) < 0)
        Py_CLEAR(out);
    return out;
}

/* ---- references -------------------------------------------------------------- */

/* FileChangedError for bytes from `offset` on that two passes read differently. */
static void raise_rewritten(HeapIndex *heap, uint64_t offset, const char *what)
{
    char message[200];
    PyObject *exc;
    PyOS_snprintf(message, sizeof message,
                  "the file changed while it was read: %s from offset %llu (0x%llx) on differ between two passes",
                  what, (unsigned long long)offset, (unsigned long long)offset);
    exc = PyObject_CallFunction(heap->st->changed_error, "sK", message, (unsigned long long)offset);
    if (exc) {
        PyErr_SetObject(heap->st->changed_error, exc);
        Py_DECREF(exc);
    }
}

/* Dictionary codes of every reference name (hp_ref_names), by class. */
typedef struct {
    hp_ref_names names;
    uint32_t *field_base, *field_codes, *static_base, *static_codes;
    int has_null;
} ref_name_tables;

static void ref_name_tables_free(ref_name_tables *t)
{
    PyMem_Free(t->field_base);
    PyMem_Free(t->field_codes);
    PyMem_Free(t->static_base);
    PyMem_Free(t->static_codes);
}

/* Every class's reference fields (slot order) and statics, counted (while
 * the field arrays are NULL) or listed, under the guard. */
typedef struct {
    const hp_heap *h;
    uint32_t *field_base, *static_base;
    hp_field *fields, *statics;          /* listing: the counts of the first pass are their sizes */
    uint32_t changed;                    /* listing: a class whose count differs from the first pass + 1 */
} slot_fields_call;

static void slot_fields(void *ctx)
{
    slot_fields_call *c = ctx;
    uint32_t nc = hp_heap_class_count(c->h), k, nf = 0, ns = 0;
    for (k = 0; k < nc && !c->changed; k++) {
        hp_field_iter fi;
        hp_static_iter si;
        hp_field f;
        hp_field_iter_init(&fi, c->h, k);
        while (hp_field_next(&fi, &f))
            if (f.type == HP_T_OBJECT) {
                if (c->fields && nf < c->field_base[k + 1])
                    c->fields[nf] = f;
                nf++;
            }
        hp_static_iter_init(&si, c->h, k);
        while (hp_static_next(&si, &f)) {
            if (c->statics && ns < c->static_base[k + 1])
                c->statics[ns] = f;
            ns++;
        }
        if (!c->fields) {
            c->field_base[k + 1] = nf;
            c->static_base[k + 1] = ns;
        } else if (c->field_base[k + 1] != nf || c->static_base[k + 1] != ns) {
            c->changed = k + 1; /* the types in its CLASS_DUMP were rewritten */
        }
    }
}

/* Dictionary codes of the names of `fields[0:n]` into codes; 0, or -1. */
static int name_codes(HeapIndex *heap, text_dict *d, const hp_field *fields, uint32_t n, uint32_t *codes,
                      int *has_null)
{
    uint32_t k;
    for (k = 0; k < n; k++) {
        long code = text_code(d, heap_field_name(heap, &fields[k]));
        if (code < -1)
            return -1;
        *has_null |= code < 0;
        codes[k] = (uint32_t)code;
    }
    return 0;
}

/* Names each class's reference fields (slot order) and statics as the
 * Python API does (HeapObject.references: a name the dump lacks is its
 * placeholder, hp_unnamed). */
static int ref_name_tables_build(ref_name_tables *t, HeapIndex *heap, const hp_heap *h, text_dict *d)
{
    uint32_t nc = hp_heap_class_count(h), nf, ns;
    slot_fields_call call = { h, NULL, NULL, NULL, NULL, 0 };
    long code;
    int rc = -1;
    memset(t, 0, sizeof *t);
    t->field_base = call.field_base = PyMem_Calloc((size_t)nc + 1, sizeof(uint32_t));
    t->static_base = call.static_base = PyMem_Calloc((size_t)nc + 1, sizeof(uint32_t));
    if (!t->field_base || !t->static_base)
        goto nomem;
    if (heap_guard(heap, slot_fields, &call) < 0) /* the sizes */
        return -1;
    nf = t->field_base[nc];
    ns = t->static_base[nc];
    t->field_codes = PyMem_Malloc(((size_t)nf + 1) * sizeof(uint32_t));
    t->static_codes = PyMem_Malloc(((size_t)ns + 1) * sizeof(uint32_t));
    call.fields = PyMem_Malloc(((size_t)nf + 1) * sizeof(hp_field));
    call.statics = PyMem_Malloc(((size_t)ns + 1) * sizeof(hp_field));
    if (!t->field_codes || !t->static_codes || !call.fields || !call.statics) {
        PyErr_NoMemory();
        goto done;
    }
    if (heap_guard(heap, slot_fields, &call) < 0)
        goto done;
    if (call.changed) {
        hp_class_info info;
        if (heap_class_info(heap, call.changed - 1, &info, NULL) == 0)
            raise_rewritten(heap, info.offset, "the field types of the class dump");
        goto done;
    }
    if (name_codes(heap, d, call.fields, nf, t->field_codes, &t->has_null) < 0 ||
        name_codes(heap, d, call.statics, ns, t->static_codes, &t->has_null) < 0 ||
        (code = text_code(d, PyUnicode_FromString("<loader>"))) < 0)
        goto done;
    t->names.field_base = t->field_base;
    t->names.field_codes = t->field_codes;
    t->names.static_base = t->static_base;
    t->names.static_codes = t->static_codes;
    t->names.loader_code = (uint32_t)code;
    t->names.element_base = (uint32_t)PyList_GET_SIZE(d->texts);
    rc = 0;
done:
    PyMem_Free(call.fields);
    PyMem_Free(call.statics);
    return rc;
nomem:
    PyErr_NoMemory();
    return -1;
}

/* The dictionary as Arrow large_string buffers: the distinct texts, then
 * "[0]" .. "[elements - 1]" for array elements. */
static int dictionary_buffers(PyObject *out, PyObject *texts, uint32_t elements)
{
    Py_ssize_t n = PyList_GET_SIZE(texts), k;
    uint64_t size = 0, i, count = (uint64_t)n + elements;
    int64_t *offsets = NULL;
    char *data = NULL, digits[16];
    PyObject *columns[2];
    static const char *const names[] = { "name_offsets", "name_data" };
    for (k = 0; k < n; k++) {
        Py_ssize_t len;
        if (!PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(texts, k), &len))
            return -1;
        size += (uint64_t)len;
    }
    for (i = 0; i < elements; i++)
        size += (uint64_t)snprintf(digits, sizeof digits, "[%u]", (unsigned)i);
    columns[0] = new_column((count + 1) * 8, 0, &offsets);
    columns[1] = new_column(size, 0, &data);
    if (columns[0] && columns[1]) {
        uint64_t at = 0;
        for (k = 0; k < n; k++) {
            Py_ssize_t len;
            const char *text = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(texts, k), &len);
            offsets[k] = (int64_t)at;
            memcpy(data + at, text, (size_t)len);
            at += (uint64_t)len;
        }
        for (i = 0; i < elements; i++) {
            int len = snprintf(digits, sizeof digits, "[%u]", (unsigned)i);
            offsets[n + i] = (int64_t)at;
            memcpy(data + at, digits, (size_t)len);
            at += (uint64_t)len;
        }
        offsets[count] = (int64_t)at;
    }
    return put_all(out, names, columns, 2);
}

typedef struct {
    uint64_t *slice_rows;  /* rows of each slice; then where each slice starts (and the end) */
    uint32_t max_element;
    const hp_ref_names *names;
    hp_ref_columns columns;
    uint32_t changed;      /* a slice whose references changed between the passes: its first object + 1 */
} ref_pass;

static void count_refs(const hp_heap *h, uint32_t start, uint32_t end, void *ctx)
{
    ref_pass *p = ctx;
    p->slice_rows[start / SLICE_ROWS] = hp_tables_count_refs(h, start, end, &p->max_element);
}

static void fill_refs(const hp_heap *h, uint32_t start, uint32_t end, void *ctx)
{
    ref_pass *p = ctx;
    uint64_t row = p->slice_rows[start / SLICE_ROWS], row_end = p->slice_rows[start / SLICE_ROWS + 1];
    if (!hp_tables_refs(h, start, end, p->names, row, row_end, &p->columns) && !p->changed)
        p->changed = start + 1;
}

/* The references of the slice from object `first` changed between the two
 * passes over the mapping: the file was rewritten while read. */
static void raise_changed(HeapIndex *heap, uint32_t first)
{
    hp_object obj;
    if (heap_describe(heap, first, &obj) == 0)
        raise_rewritten(heap, obj.offset, "the references of the objects");
}

static PyObject *reference_columns(HeapIndex *heap, const hp_heap *h)
{
    static const char *const names[] = { "source_id", "target_id", "name", "name_valid" };
    uint32_t n = hp_heap_object_count(h), slices = n / SLICE_ROWS + 1, s;
    /* slices + 1 entries: each slice's rows (then its first row) and the end */
    uint64_t rows = 0;
    ref_pass pass;
    ref_name_tables tables;
    text_dict dict = { NULL, NULL };
    PyObject *columns[4] = { NULL, NULL, NULL, NULL }, *out = NULL;
    uint8_t *valid = NULL;

    memset(&pass, 0, sizeof pass);
    memset(&tables, 0, sizeof tables);
    pass.slice_rows = PyMem_Calloc((size_t)slices + 1, sizeof(uint64_t));
    if (!pass.slice_rows) {
        PyErr_NoMemory();
        return NULL;
    }
    if (run_slices(heap, n, count_refs, &pass) < 0 || !(h = heap_index(heap)) || text_dict_init(&dict) < 0 ||
        ref_name_tables_build(&tables, heap, h, &dict) < 0)
        goto done;
    for (s = 0; s < slices; s++) { /* counts -> first rows */
        uint64_t count = pass.slice_rows[s];
        pass.slice_rows[s] = rows;
        rows += count;
    }
    pass.slice_rows[slices] = rows;
    tables.names.element_count = pass.max_element;
    pass.names = &tables.names;
    columns[0] = new_column(rows * 8, 0, &pass.columns.source_id);
    columns[1] = new_column(rows * 8, 0, &pass.columns.target_id);
    columns[2] = new_column(rows * 4, 0, &pass.columns.name);
    columns[3] = tables.has_null ? new_column(bitmap_size(rows), 1, &valid) : Py_NewRef(Py_None);
    out = PyErr_Occurred() ? NULL : PyDict_New();
    if (put_all(out, names, columns, 4) < 0 || run_slices(heap, n, fill_refs, &pass) < 0)
        goto fail;
    if (pass.changed) {
        if ((h = heap_index(heap)))
            raise_changed(heap, pass.changed - 1);
        goto fail;
    }
    if (dictionary_buffers(out, dict.texts, pass.max_element) < 0)
        goto fail;
    if (valid) {
        Py_BEGIN_ALLOW_THREADS
        hp_tables_code_validity(pass.columns.name, rows, valid);
        Py_END_ALLOW_THREADS
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    PyMem_Free(pass.slice_rows);
    ref_name_tables_free(&tables);
    text_dict_clear(&dict);
    return out;
}

/* ---- GC roots ------------------------------------------------------------------ */

static PyObject *root_columns(const hp_heap *h)
{
    static const char *const names[] = { "object_id", "kind" };
    uint32_t n = hp_heap_root_count(h), i;
    int8_t kind_codes[256];
    uint8_t seen[256];
    hp_root_columns c;
    PyObject *columns[2], *kinds = PyList_New(0), *out = NULL;
    int tag;

    if (!kinds)
        return NULL;
    memset(seen, 0, sizeof seen);
    for (i = 0; i < n; i++) {
        hp_root r;
        hp_heap_root(h, i, &r);
        seen[r.kind & 0xFF] = 1;
    }
    for (tag = 0; tag < 256; tag++) { /* codes in tag order: the same on every dump */
        PyObject *name;
        kind_codes[tag] = (int8_t)PyList_GET_SIZE(kinds);
        if (!seen[tag])
            continue;
        name = heap_root_kind(tag);
        if (!name || PyList_Append(kinds, name) < 0) {
            Py_XDECREF(name);
            Py_DECREF(kinds);
            return NULL;
        }
        Py_DECREF(name);
    }
    c.kind_codes = kind_codes;
    columns[0] = new_column((uint64_t)n * 8, 0, &c.object_id);
    columns[1] = new_column(n, 0, &c.kind);
    out = PyErr_Occurred() ? NULL : PyDict_New();
    if (put_all(out, names, columns, 2) < 0 || PyDict_SetItemString(out, "kind_names", kinds) < 0)
        Py_CLEAR(out);
    else
        hp_tables_roots(h, &c); /* as many rows as GC roots: no slices */
    Py_DECREF(kinds);
    return out;
}

PyObject *heap_columns(HeapIndex *heap, PyObject *table)
{
    const hp_heap *h = heap_index(heap);
    PyObject *out;
    if (!h)
        return NULL;
    if (!PyUnicode_Check(table)) {
        PyErr_SetString(PyExc_TypeError, "a table name must be a str");
        return NULL;
    }
    if (PyUnicode_CompareWithASCIIString(table, "objects") == 0)
        out = object_columns(heap, h);
    else if (PyUnicode_CompareWithASCIIString(table, "retained") == 0)
        out = retained_columns(heap, h);
    else if (PyUnicode_CompareWithASCIIString(table, "references") == 0)
        out = reference_columns(heap, h);
    else if (PyUnicode_CompareWithASCIIString(table, "roots") == 0)
        out = root_columns(h);
    else {
        PyErr_Format(PyExc_ValueError, "no table %R: 'objects', 'retained', 'references' or 'roots'", table);
        return NULL;
    }
    return out;
}
