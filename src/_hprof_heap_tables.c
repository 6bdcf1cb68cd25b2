/* heap._columns(tables, max_chars): the columns behind hprofkit.Heap.tables()
 * (hprofkit._tables) as bytes objects the core fills (hp_heap_tables.h) and
 * pyarrow wraps without copying.  No Python object is made per row, per
 * class or per name: only per column, per slice of String values and per
 * dictionary (whose texts the core collects, hp_strdict.h).
 *
 * The fills run without the GIL in slices of rows, checking for Ctrl-C
 * between them; the heap is marked busy meanwhile, so close() from another
 * thread frees it only after the slice (and the next slice then raises).  A
 * file that shrinks or changes under them is a FileChangedError.  This file
 * holds the objects, String values, reachability, roots and classes;
 * _hprof_tables_refs.c the references and field values; both stand on
 * _hprof_tables_slices.c. */
#include "_hprof_tables.h"

#include <string.h>

#include "core/hp_utf8.h"

/* A copy of `n` items of `size` bytes. */
static PyObject *copy_column(const void *data, uint64_t n, size_t size)
{
    void *out = NULL;
    PyObject *b = tables_column(n * size, 0, &out);
    if (b && n)
        memcpy(out, data, (size_t)(n * size));
    return b;
}

/* ---- memory the core filled, handed over ---------------------------------- */

static const char owned_name[] = "hprofkit._hprof.owned";

static void free_owned(PyObject *capsule) { hprof_raw_alloc.free_fn(PyCapsule_GetPointer(capsule, owned_name)); }

/* (address, size, owner) of `data` (raw memory; NULL only when `size` is
 * 0), for pyarrow.foreign_buffer: the owner frees it when it goes.  The
 * memory is the tuple's from this call on (freed here if it fails). */
static PyObject *owned_chunk(void *data, size_t size)
{
    PyObject *owner;
    if (!data)
        return Py_BuildValue("(KnO)", 0ull, (Py_ssize_t)0, Py_None);
    if (!(owner = PyCapsule_New(data, owned_name, free_owned))) {
        hprof_raw_alloc.free_fn(data);
        return NULL;
    }
    return Py_BuildValue("(KnN)", (unsigned long long)(uintptr_t)data, (Py_ssize_t)size, owner);
}

static int append_owned(PyObject *list, void **data, size_t size)
{
    PyObject *chunk = owned_chunk(*data, size);
    int rc = chunk ? PyList_Append(list, chunk) : -1;
    *data = NULL;
    Py_XDECREF(chunk);
    return rc;
}

/* dictionaries[name] = (offsets, data, count): the texts of `d` as Arrow's
 * large_string buffers, handed over (millions of element names, for a long
 * array: a copy of them was serial time). */
static int put_strdict(PyObject *out, const char *name, hp_strdict *d)
{
    PyObject *offsets = owned_chunk(d->offsets, ((size_t)d->count + 1) * sizeof *d->offsets);
    PyObject *data;
    d->offsets = NULL;
    data = owned_chunk(d->data, d->len);
    d->data = NULL;
    return tables_put(out, name, offsets && data ? Py_BuildValue("(NNI)", offsets, data, d->count)
                                                  : (Py_XDECREF(offsets), Py_XDECREF(data), NULL));
}

/* ---- the small dictionaries: heaps and GC root kinds ----------------------- */

typedef struct {
    const hp_heap *h;
    hp_strdict heaps, roots;
    int16_t heap_codes[256];   /* [k + 1]: heap k; [0]: none */
    int8_t root_codes[256];    /* by sub-record tag */
    hp_code rc;
} small_dicts;

static int32_t add_text(small_dicts *s, hp_strdict *d, const char *text)
{
    int32_t code = hp_strdict_add(d, (const uint8_t *)text, strlen(text));
    if (code < 0)
        s->rc = HP_E_NOMEM;
    return code;
}

static void build_small_dicts(void *ctx)
{
    small_dicts *s = ctx;
    uint32_t i, n = hp_heap_root_count(s->h);
    uint8_t seen[256], utf8[3 * 255];
    int k;
    s->heap_codes[0] = (int16_t)add_text(s, &s->heaps, "default"); /* HotSpot's one heap, as stats() names it */
    for (k = 0; k < 255 && s->rc == HP_OK; k++) {
        const uint8_t *name;
        size_t len;
        int32_t code = -1;
        if (hp_heap_heap_name(s->h, k, &name, &len) && len <= 255) {
            code = hp_strdict_add(&s->heaps, utf8, hp_name_utf8(name, len, utf8));
            if (code < 0)
                s->rc = HP_E_NOMEM;
        }
        s->heap_codes[k + 1] = (int16_t)code;
    }
    memset(seen, 0, sizeof seen);
    for (i = 0; i < n; i++) {
        hp_root r;
        hp_heap_root(s->h, i, &r);
        seen[r.kind & 0xFF] = 1;
    }
    for (k = 0; k < 256 && s->rc == HP_OK; k++) { /* codes in tag order: the same on every dump */
        const char *name = hp_subtag_name(k);
        s->root_codes[k] = 0;
        if (seen[k])
            s->root_codes[k] = (int8_t)add_text(s, &s->roots, !name ? "UNKNOWN"
                                                              : strncmp(name, "ROOT_", 5) == 0 ? name + 5 : name);
    }
}

/* ---- objects ----------------------------------------------------------------- */

/* Each slot adds to class totals of its own (merged afterwards). */
typedef struct {
    hp_object_columns c[WORKERS];
    uint32_t max_elements[WORKERS];
} object_pass;

static void fill_objects(const hp_heap *h, uint32_t start, uint32_t end, int slot, void *ctx)
{
    object_pass *p = ctx;
    hp_tables_objects(h, start, end, &p->c[slot]);
}

static int object_columns(HeapIndex *heap, const hp_heap *h, const small_dicts *s, uint32_t *max_elements,
                          PyObject *out)
{
    uint32_t n = hp_heap_object_count(h), nc = hp_heap_class_count(h), k;
    uint64_t bits = tables_bitmap_size(n);
    object_pass p;
    hp_object_columns *c = &p.c[0];
    int64_t *class_ids = PyMem_Malloc(((size_t)nc + 1) * sizeof *class_ids);
    int64_t *totals = PyMem_Calloc(((size_t)nc + 1) * 2 * (WORKERS - 1), sizeof *totals);
    int rc = -1, w;
    memset(&p, 0, sizeof p);
    if (!class_ids || !totals) {
        PyErr_NoMemory();
        goto done;
    }
    for (k = 0; k < nc; k++) {
        hp_class_info info;
        hp_heap_class(h, k, &info);
        class_ids[k] = (int64_t)info.id;
    }
    c->class_ids = class_ids;
    c->heap_codes = s->heap_codes;
    c->root_codes = s->root_codes;
    if (tables_put(out, "id", tables_column((uint64_t)n * 8, 0, &c->id)) < 0 ||
        tables_put(out, "class_id", tables_column((uint64_t)n * 8, 0, &c->class_id)) < 0 ||
        tables_put(out, "class_valid", tables_column(bits, 1, &c->class_valid)) < 0 ||
        tables_put(out, "kind", tables_column(n, 0, &c->kind)) < 0 ||
        tables_put(out, "shallow_size", tables_column((uint64_t)n * 8, 0, &c->shallow_size)) < 0 ||
        tables_put(out, "heap", tables_column((uint64_t)n * 2, 0, &c->heap)) < 0 ||
        tables_put(out, "heap_valid", tables_column(bits, 1, &c->heap_valid)) < 0 ||
        tables_put(out, "root_type", tables_column(n, 0, &c->root_type)) < 0 ||
        tables_put(out, "root_valid", tables_column(bits, 1, &c->root_valid)) < 0 ||
        tables_put(out, "array_length", tables_column((uint64_t)n * 8, 0, &c->array_length)) < 0 ||
        tables_put(out, "array_valid", tables_column(bits, 1, &c->array_valid)) < 0 ||
        tables_put(out, "array_hash", tables_column((uint64_t)n * 8, 0, &c->array_hash)) < 0 ||
        tables_put(out, "hash_valid", tables_column(bits, 1, &c->hash_valid)) < 0 ||
        tables_put(out, "array_nulls", tables_column((uint64_t)n * 8, 0, &c->array_nulls)) < 0 ||
        tables_put(out, "nulls_valid", tables_column(bits, 1, &c->nulls_valid)) < 0 ||
        tables_put(out, "array_refs_hash", tables_column((uint64_t)n * 8, 0, &c->array_refs_hash)) < 0 ||
        tables_put(out, "array_trailing_zeros", tables_column((uint64_t)n * 8, 0, &c->array_trailing_zeros)) < 0 ||
        tables_put(out, "zeros_valid", tables_column(bits, 1, &c->zeros_valid)) < 0 ||
        tables_put(out, "class_objects", tables_column((uint64_t)nc * 8, 1, &c->class_objects)) < 0 ||
        tables_put(out, "class_shallow", tables_column((uint64_t)nc * 8, 1, &c->class_shallow)) < 0)
        goto done;
    for (w = 0; w < WORKERS; w++) {
        if (w > 0) {
            p.c[w] = *c;
            p.c[w].class_objects = totals + ((size_t)nc + 1) * 2 * (w - 1);
            p.c[w].class_shallow = p.c[w].class_objects + nc + 1;
        }
        p.c[w].max_elements = &p.max_elements[w];
    }
    if (tables_slices(heap, n, WORKERS, NULL, fill_objects, NULL, &p) < 0)
        goto done;
    for (w = 1; w < WORKERS; w++) {
        for (k = 0; k < nc; k++) {
            c->class_objects[k] += p.c[w].class_objects[k];
            c->class_shallow[k] += p.c[w].class_shallow[k];
        }
    }
    for (w = 0; w < WORKERS; w++)
        if (p.max_elements[w] > *max_elements)
            *max_elements = p.max_elements[w];
    rc = 0;
done:
    PyMem_Free(class_ids);
    PyMem_Free(totals);
    return rc;
}

/* ---- String values: one chunk of text per slice ------------------------------- */

/* Each slice's offsets and text are filled into memory of their own, handed
 * over whole (copied afterwards, with the GIL, they made a fifth of the
 * String values' time serial). */
typedef struct {
    hp_string_columns c[WORKERS];   /* each slot's offsets and text; the length columns are shared */
    hp_code rc[WORKERS];
    size_t last_len[WORKERS];       /* the text of the slot's previous slice: room reserved for the next */
    PyObject *offsets, *data;       /* lists: an owned_chunk per slice */
} string_pass;

static void fill_strings(const hp_heap *h, uint32_t start, uint32_t end, int slot, void *ctx)
{
    string_pass *p = ctx;
    hp_string_columns *c = &p->c[slot];
    c->offsets = hprof_raw_alloc.malloc_fn(((size_t)(end - start) + 1) * sizeof *c->offsets);
    c->data_cap = p->last_len[slot] + p->last_len[slot] / 4 + 1;
    c->data = hprof_raw_alloc.malloc_fn(c->data_cap);
    p->rc[slot] = c->offsets && c->data ? hp_tables_strings(h, start, end, c, &hprof_raw_alloc) : HP_E_NOMEM;
}

static int keep_strings(void *ctx, int slot, uint32_t start, uint32_t end)
{
    string_pass *p = ctx;
    hp_string_columns *c = &p->c[slot];
    if (p->rc[slot] == HP_E_LIMIT) {
        PyErr_SetString(PyExc_ValueError, "the String values of 262144 objects pass 2 GiB: lower max_chars");
        return -1;
    }
    if (p->rc[slot] != HP_OK) {
        PyErr_NoMemory();
        return -1;
    }
    p->last_len[slot] = c->data_len;
    return append_owned(p->offsets, (void **)&c->offsets, ((size_t)(end - start) + 1) * sizeof *c->offsets) < 0 ||
                   append_owned(p->data, (void **)&c->data, c->data_len) < 0 ? -1 : 0;
}

static int string_columns(HeapIndex *heap, const hp_heap *h, uint32_t max_chars, PyObject *out)
{
    uint32_t n = hp_heap_object_count(h);
    string_pass p;
    int rc, w;
    memset(&p, 0, sizeof p);
    if (tables_put(out, "string_length", tables_column((uint64_t)n * 8, 0, &p.c[0].length)) < 0 ||
        tables_put(out, "string_valid", tables_column(tables_bitmap_size(n), 1, &p.c[0].valid)) < 0 ||
        tables_put(out, "value_offsets", p.offsets = PyList_New(0)) < 0 ||
        tables_put(out, "value_data", p.data = PyList_New(0)) < 0 ||
        tables_put(out, "slice_rows", PyLong_FromUnsignedLong(SLICE_ROWS)) < 0)
        return -1;
    for (w = 0; w < WORKERS; w++) {
        p.c[w].length = p.c[0].length;
        p.c[w].valid = p.c[0].valid;
        p.c[w].max_units = max_chars;
    }
    rc = tables_slices(heap, n, WORKERS, NULL, fill_strings, keep_strings, &p);
    for (w = 0; w < WORKERS; w++) { /* a slice not handed over: an error */
        hprof_raw_alloc.free_fn(p.c[w].offsets);
        hprof_raw_alloc.free_fn(p.c[w].data);
    }
    return rc;
}

/* ---- reachability: retained sizes, dominators, the search from the roots ------- */

typedef struct {
    const hp_reach *reach;
    const hp_bfs *bfs;
    hp_reach_columns c;
} reach_pass;

static void fill_reach(const hp_heap *h, uint32_t start, uint32_t end, int slot, void *ctx)
{
    reach_pass *p = ctx;
    (void)slot;
    hp_tables_reach(p->reach, p->bfs, h, start, end, &p->c);
}

static int reach_columns(HeapIndex *heap, const hp_heap *h, PyObject *out)
{
    uint32_t n = hp_heap_object_count(h), nc = hp_heap_class_count(h);
    uint64_t bits = tables_bitmap_size(n);
    const uint64_t *by_class;
    hp_error err;
    reach_pass p;
    hp_bfs bfs;
    uint32_t *stack = NULL;
    int rc = -1;
    memset(&p, 0, sizeof p);
    memset(&bfs, 0, sizeof bfs);
    if (!(p.reach = heap_reach(heap, REACH_CLASSES)) || heap_full_search(heap, &bfs) < 0)
        goto done;
    if (hp_reach_class_retained(heap->reach, NULL, &by_class, &err) != HP_OK) { /* computed by heap_reach */
        hprof_raise(heap->st, &err);
        goto done;
    }
    p.bfs = &bfs;
    if (!(stack = PyMem_Malloc(((size_t)n + 1) * sizeof *stack))) {
        PyErr_NoMemory();
        goto done;
    }
    if (tables_put(out, "retained_size", tables_column((uint64_t)n * 8, 0, &p.c.retained_size)) < 0 ||
        tables_put(out, "dominator_id", tables_column((uint64_t)n * 8, 0, &p.c.dominator_id)) < 0 ||
        tables_put(out, "dominator_valid", tables_column(bits, 1, &p.c.dominator_valid)) < 0 ||
        tables_put(out, "reachable", tables_column(bits, 1, &p.c.reachable)) < 0 ||
        tables_put(out, "root_distance", tables_column((uint64_t)n * 4, 0, &p.c.root_distance)) < 0 ||
        tables_put(out, "class_retained", copy_column(by_class, nc, 8)) < 0 ||
        tables_put(out, "class_retained_count", copy_column(by_class + nc, nc, 8)) < 0)
        goto done;
    Py_BEGIN_ALLOW_THREADS
    hp_tables_root_distances(&bfs, p.c.root_distance, stack);
    Py_END_ALLOW_THREADS
    rc = tables_slices(heap, n, WORKERS, NULL, fill_reach, NULL, &p);
done:
    PyMem_Free(stack);
    if (bfs.alloc.free_fn) /* the search ran */
        hp_bfs_free(&bfs);
    return rc;
}

/* ---- GC roots and classes ---------------------------------------------------- */

static int root_columns(const hp_heap *h, const small_dicts *s, PyObject *out)
{
    uint32_t n = hp_heap_root_count(h);
    hp_root_columns c;
    c.kind_codes = s->root_codes;
    if (tables_put(out, "object_id", tables_column((uint64_t)n * 8, 0, &c.object_id)) < 0 ||
        tables_put(out, "kind", tables_column(n, 0, &c.kind)) < 0)
        return -1;
    hp_tables_roots(h, &c); /* as many rows as GC roots, no mapping read: no slices */
    return 0;
}

static int class_columns(const hp_heap *h, const hp_table_names *names, PyObject *out)
{
    uint32_t n = hp_heap_class_count(h);
    uint64_t bits = tables_bitmap_size(n);
    hp_class_columns c;
    if (tables_put(out, "id", tables_column((uint64_t)n * 8, 0, &c.id)) < 0 ||
        tables_put(out, "super_id", tables_column((uint64_t)n * 8, 0, &c.super_id)) < 0 ||
        tables_put(out, "super_valid", tables_column(bits, 1, &c.super_valid)) < 0 ||
        tables_put(out, "loader_id", tables_column((uint64_t)n * 8, 0, &c.loader_id)) < 0 ||
        tables_put(out, "loader_valid", tables_column(bits, 1, &c.loader_valid)) < 0 ||
        tables_put(out, "instance_size", tables_column((uint64_t)n * 8, 0, &c.instance_size)) < 0 ||
        tables_put(out, "size_valid", tables_column(bits, 1, &c.size_valid)) < 0 ||
        tables_put(out, "name", copy_column(names->class_codes, n, 4)) < 0 ||
        tables_put(out, "dump_name", copy_column(names->dump_codes, n, 4)) < 0 ||
        tables_put(out, "kind", copy_column(names->class_kinds, n, 1)) < 0)
        return -1;
    hp_tables_classes(h, &c); /* index data only: no slices */
    return 0;
}

/* ---- heap._columns ------------------------------------------------------------ */

enum { T_OBJECTS = 1, T_STRINGS = 2, T_REACH = 4, T_REFERENCES = 8, T_CLASSES = 16, T_ROOTS = 32, T_FIELDS = 64 };
static const char *const table_names[] = { "objects", "strings", "reach", "references", "classes", "roots",
                                           "fields" };

static int wanted_tables(PyObject *tables)
{
    PyObject *seq = PySequence_Fast(tables, "tables must be a sequence of table names");
    Py_ssize_t i, k;
    int want = 0;
    if (!seq)
        return -1;
    for (i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *name = PySequence_Fast_GET_ITEM(seq, i);
        for (k = 0; k < 7; k++)
            if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, table_names[k]) == 0)
                break;
        if (k == 7) {
            PyErr_Format(PyExc_ValueError, "no table %R: 'objects', 'strings', 'reach', 'references', 'classes', "
                                           "'roots' or 'fields'", name);
            Py_DECREF(seq);
            return -1;
        }
        want |= 1 << k;
    }
    Py_DECREF(seq);
    return want;
}

/* result[name of `table`] = a new dict, which it returns (borrowed); NULL
 * with an exception set. */
static PyObject *new_table(PyObject *result, int table)
{
    PyObject *t = PyDict_New();
    int k = 0, rc;
    while (!(table & 1 << k))
        k++;
    if (!t)
        return NULL;
    rc = PyDict_SetItemString(result, table_names[k], t);
    Py_DECREF(t); /* the result holds it */
    return rc < 0 ? NULL : t;
}

typedef struct {
    hp_table_names *names;
    const hp_heap *h;
    uint32_t elements;
    hp_code rc;
} names_call;

static void build_names(void *ctx)
{
    names_call *c = ctx;
    c->rc = hp_table_names_build(c->names, c->h, c->elements, &hprof_raw_alloc);
}

/* The tables' columns into `result`, the dictionaries into `dicts`. */
static int fill_tables(HeapIndex *heap, int want, uint32_t max_chars, PyObject *result, PyObject *dicts)
{
    small_dicts s;
    hp_table_names names;
    names_call nc;
    const hp_heap *h;
    uint32_t max_element = 0;
    PyObject *t;
    int rc = -1;
    memset(&s, 0, sizeof s);
    memset(&names, 0, sizeof names);
    memset(&nc, 0, sizeof nc);
    if (!(h = heap_index(heap)))
        return -1;
    s.h = h;
    if (hp_strdict_init(&s.heaps, &hprof_raw_alloc) != HP_OK || hp_strdict_init(&s.roots, &hprof_raw_alloc) != HP_OK) {
        PyErr_NoMemory();
        goto done;
    }
    if (heap_guard(heap, build_small_dicts, &s) < 0 || (s.rc != HP_OK && tables_fail(heap, s.rc, "names") < 0) ||
        put_strdict(dicts, "heaps", &s.heaps) < 0 || put_strdict(dicts, "root_kinds", &s.roots) < 0)
        goto done;
    if (want & T_REFERENCES)
        want |= T_OBJECTS; /* the bounds of the references come from the objects' columns */
    if ((want & T_OBJECTS &&
         (!(t = new_table(result, T_OBJECTS)) || object_columns(heap, h, &s, &max_element, t) < 0)) ||
        (want & T_STRINGS && (!(t = new_table(result, T_STRINGS)) || string_columns(heap, h, max_chars, t) < 0)) ||
        (want & T_REACH && (!(t = new_table(result, T_REACH)) || reach_columns(heap, h, t) < 0)) ||
        (want & T_ROOTS && (!(t = new_table(result, T_ROOTS)) || root_columns(h, &s, t) < 0)))
        goto done;
    if (want & (T_REFERENCES | T_CLASSES | T_FIELDS)) {
        PyObject *kinds;
        int k;
        nc.names = &names;
        nc.elements = max_element;
        if (!(nc.h = heap_index(heap)) || heap_walk(heap, build_names, &nc, 0) < 0 ||
            (nc.rc != HP_OK && tables_fail(heap, nc.rc, "the names of the classes and fields") < 0) ||
            put_strdict(dicts, "classes", &names.classes) < 0 || put_strdict(dicts, "names", &names.names) < 0 ||
            tables_put(dicts, "class_kinds", kinds = PyList_New(HP_CK_COUNT)) < 0)
            goto done;
        for (k = 0; k < HP_CK_COUNT; k++) {
            PyObject *name = PyUnicode_FromString(hp_class_kind_names[k]);
            if (!name)
                goto done;
            PyList_SET_ITEM(kinds, k, name);
        }
    }
    if (!(h = heap_index(heap)) ||
        (want & T_CLASSES && (!(t = new_table(result, T_CLASSES)) || class_columns(h, &names, t) < 0)) ||
        (want & T_REFERENCES &&
         (!(t = new_table(result, T_REFERENCES)) ||
          tables_references(heap, &names, PyDict_GetItemString(result, "objects"), t) < 0)) ||
        (want & T_FIELDS && (!(t = new_table(result, T_FIELDS)) || tables_fields(heap, &names, t) < 0)))
        goto done;
    rc = 0;
done:
    hp_table_names_free(&names);
    hp_strdict_free(&s.heaps);
    hp_strdict_free(&s.roots);
    return rc;
}

PyObject *heap_columns(HeapIndex *heap, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "tables", "max_chars", NULL };
    PyObject *tables, *result, *dicts;
    unsigned int max_chars = 1024;
    int want;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|I:_columns", kwlist, &tables, &max_chars))
        return NULL;
    if (!heap_index(heap) || (want = wanted_tables(tables)) < 0)
        return NULL;
    if (max_chars > 1u << 20) {
        PyErr_SetString(PyExc_ValueError, "max_chars must be at most 1048576");
        return NULL;
    }
    result = PyDict_New();
    dicts = PyDict_New();
    if (!result || !dicts || fill_tables(heap, want, max_chars, result, dicts) < 0 ||
        PyDict_SetItemString(result, "dictionaries", dicts) < 0) {
        Py_XDECREF(result);
        Py_XDECREF(dicts);
        return NULL;
    }
    Py_DECREF(dicts);
    return result;
}
