/* The long tables behind heap._columns (_hprof_tables.h): references and
 * primitive field values.  Each is filled in two passes over the objects,
 * without the GIL: the first counts each slice's rows (so every column is
 * allocated once, at its final size), the second fills them; a file that
 * changes between the passes is a FileChangedError, never a write outside
 * the rows. */
#include "_hprof_tables.h"

#include <string.h>

/* Rows per slice, counted by the first pass; then where each slice starts
 * and, at [slices], the end. */
typedef struct {
    uint64_t *slice_rows;
    const hp_table_names *names;
    hp_field_columns c;
    uint32_t changed;    /* a slice whose rows changed between the passes: its first object + 1 */
} field_pass;

/* Counts -> first rows of each slice; returns the total. */
static uint64_t starts_of(uint64_t *slice_rows, uint32_t slices)
{
    uint64_t rows = 0, count;
    uint32_t s;
    for (s = 0; s < slices; s++) {
        count = slice_rows[s];
        slice_rows[s] = rows;
        rows += count;
    }
    slice_rows[slices] = rows;
    return rows;
}

static uint32_t slice_count(HeapIndex *heap) { return hp_heap_object_count(heap->index) / SLICE_ROWS + 1; }

/* FileChangedError naming the first object of the slice from `first`. */
static int changed(HeapIndex *heap, uint32_t first, const char *what)
{
    hp_object obj;
    if (!heap_index(heap))
        return -1;
    if (heap_describe(heap, first, &obj) == 0)
        tables_rewritten(heap, obj.offset, what);
    return -1;
}

/* ---- references: a chunk of rows per slice ------------------------------------------ */

enum { REF_COLUMNS = 6 };
static const char *const ref_column_names[REF_COLUMNS] = {
    "source_id", "target_id", "name", "qualified", "name_valid", "qualified_valid" };
static const int ref_column_sizes[REF_COLUMNS] = { 8, 8, 4, 4, 0, 0 }; /* 0: a bitmap */

/* A slice's columns, allocated at its bound (hp_tables_max_refs). */
typedef struct {
    uint64_t cap;
    hp_ref_columns c;
    PyObject *column[REF_COLUMNS];
    int64_t rows;
} ref_chunk;

typedef struct {
    HeapIndex *heap;
    const int8_t *kind;             /* the objects' columns */
    const int64_t *array_length;
    const hp_table_names *names;
    uint64_t *bounds;               /* per slice: hp_tables_max_refs */
    ref_chunk chunk[WORKERS];
    PyObject *lists[REF_COLUMNS];   /* every slice's columns */
} ref_pass;

static uint64_t ref_column_size(int k, uint64_t rows)
{
    return ref_column_sizes[k] ? rows * (uint64_t)ref_column_sizes[k] : tables_bitmap_size(rows);
}

/* The bounds come first, on every worker: computed in start_refs, with the
 * GIL, they made a tenth of the references' time serial. */
static void bound_refs(const hp_heap *h, uint32_t start, uint32_t end, int slot, void *ctx)
{
    ref_pass *p = ctx;
    (void)slot;
    p->bounds[start / SLICE_ROWS] = hp_tables_max_refs(h, p->names, p->kind, p->array_length, start, end);
}

static int start_refs(void *ctx, int slot, uint32_t start, uint32_t end)
{
    ref_pass *p = ctx;
    ref_chunk *ch = &p->chunk[slot];
    void *data[REF_COLUMNS];
    int k;
    (void)end;
    ch->cap = p->bounds[start / SLICE_ROWS];
    for (k = 0; k < REF_COLUMNS; k++)
        if (!(ch->column[k] = tables_column(ref_column_size(k, ch->cap), ref_column_sizes[k] == 0, &data[k])))
            return -1;
    ch->c.source_id = data[0];
    ch->c.target_id = data[1];
    ch->c.name = data[2];
    ch->c.qualified = data[3];
    ch->c.name_valid = data[4];
    ch->c.qualified_valid = data[5];
    return 0;
}

static void fill_refs(const hp_heap *h, uint32_t start, uint32_t end, int slot, void *ctx)
{
    ref_pass *p = ctx;
    ref_chunk *ch = &p->chunk[slot];
    ch->rows = hp_tables_refs(h, start, end, p->names, ch->cap, &ch->c);
}

/* Shrinks the slice's columns to its rows (in place: the allocator keeps
 * the pages it touched) and adds them to the lists. */
static int keep_refs(void *ctx, int slot, uint32_t start, uint32_t end)
{
    ref_pass *p = ctx;
    ref_chunk *ch = &p->chunk[slot];
    int k, rc = 0;
    (void)end;
    for (k = 0; k < REF_COLUMNS; k++) {
        if (rc == 0 && ch->rows >= 0 &&
            (_PyBytes_Resize(&ch->column[k], (Py_ssize_t)ref_column_size(k, (uint64_t)ch->rows)) < 0 ||
             PyList_Append(p->lists[k], ch->column[k]) < 0))
            rc = -1;
        Py_CLEAR(ch->column[k]);
    }
    if (ch->rows < 0 && rc == 0)
        return changed(p->heap, start, "the references of the objects");
    return rc;
}

int tables_references(HeapIndex *heap, const hp_table_names *names, PyObject *objects, PyObject *out)
{
    PyObject *kind = objects ? PyDict_GetItemString(objects, "kind") : NULL;
    PyObject *lengths = objects ? PyDict_GetItemString(objects, "array_length") : NULL;
    ref_pass p;
    int k, w, rc;
    memset(&p, 0, sizeof p);
    if (!heap_index(heap))
        return -1;
    if (!kind || !lengths || !PyBytes_Check(kind) || !PyBytes_Check(lengths)) {
        PyErr_SetString(PyExc_SystemError, "the references need the objects' columns first");
        return -1;
    }
    p.heap = heap;
    p.kind = (const int8_t *)PyBytes_AS_STRING(kind);
    p.array_length = (const int64_t *)PyBytes_AS_STRING(lengths);
    p.names = names;
    for (k = 0; k < REF_COLUMNS; k++)
        if (tables_put(out, ref_column_names[k], p.lists[k] = PyList_New(0)) < 0)
            return -1;
    if (!(p.bounds = PyMem_Calloc(slice_count(heap), sizeof *p.bounds))) {
        PyErr_NoMemory();
        return -1;
    }
    rc = tables_slices(heap, hp_heap_object_count(heap->index), WORKERS, NULL, bound_refs, NULL, &p);
    if (rc == 0)
        rc = tables_slices(heap, hp_heap_object_count(heap->index), WORKERS, start_refs, fill_refs, keep_refs, &p);
    PyMem_Free(p.bounds);
    for (w = 0; w < WORKERS; w++)
        for (k = 0; k < REF_COLUMNS; k++)
            Py_CLEAR(p.chunk[w].column[k]);
    return rc;
}

/* A validity bitmap for codes that may be -1 (None when none is), put in
 * `out` under `name`; the codes of the others become 0. */
static int put_validity(PyObject *out, const char *name, int32_t *codes, uint64_t rows)
{
    uint8_t *valid;
    PyObject *bitmap = tables_column(tables_bitmap_size(rows), 1, &valid);
    uint64_t nulls;
    if (!bitmap)
        return -1;
    Py_BEGIN_ALLOW_THREADS
    nulls = hp_tables_code_validity(codes, rows, valid);
    Py_END_ALLOW_THREADS
    if (nulls == 0) {
        Py_DECREF(bitmap);
        bitmap = Py_NewRef(Py_None);
    }
    return tables_put(out, name, bitmap);
}

/* ---- primitive field values ------------------------------------------------------- */

static void count_fields(const hp_heap *h, uint32_t start, uint32_t end, int slot, void *ctx)
{
    field_pass *p = ctx;
    (void)slot;
    p->slice_rows[start / SLICE_ROWS] = hp_tables_count_fields(h, start, end);
}

static void fill_fields(const hp_heap *h, uint32_t start, uint32_t end, int slot, void *ctx)
{
    field_pass *p = ctx;
    (void)slot;
    uint64_t row = p->slice_rows[start / SLICE_ROWS], row_end = p->slice_rows[start / SLICE_ROWS + 1];
    if (!hp_tables_fields(h, start, end, p->names, row, row_end, &p->c) && !p->changed)
        p->changed = start + 1;
}

int tables_fields(HeapIndex *heap, const hp_table_names *names, PyObject *out)
{
    field_pass p;
    hp_field_columns *c = &p.c;
    uint64_t rows, bits;
    uint32_t n;
    int rc = -1;
    memset(&p, 0, sizeof p);
    if (!heap_index(heap))
        return -1;
    n = hp_heap_object_count(heap->index);
    p.names = names;
    p.slice_rows = PyMem_Calloc((size_t)slice_count(heap) + 1, sizeof(uint64_t));
    if (!p.slice_rows) {
        PyErr_NoMemory();
        return -1;
    }
    if (tables_slices(heap, n, WORKERS, NULL, count_fields, NULL, &p) < 0)
        goto done;
    rows = starts_of(p.slice_rows, slice_count(heap));
    bits = tables_bitmap_size(rows);
    if (tables_put(out, "object_id", tables_column(rows * 8, 0, &c->object_id)) < 0 ||
        tables_put(out, "name", tables_column(rows * 4, 0, &c->name)) < 0 ||
        tables_put(out, "qualified", tables_column(rows * 4, 0, &c->qualified)) < 0 ||
        tables_put(out, "type", tables_column(rows, 0, &c->type)) < 0 ||
        tables_put(out, "int_value", tables_column(rows * 8, 0, &c->int_value)) < 0 ||
        tables_put(out, "int_valid", tables_column(bits, 1, &c->int_valid)) < 0 ||
        tables_put(out, "double_value", tables_column(rows * 8, 0, &c->double_value)) < 0 ||
        tables_put(out, "double_valid", tables_column(bits, 1, &c->double_valid)) < 0 ||
        tables_slices(heap, n, 1, NULL, fill_fields, NULL, &p) /* one worker: slices share bitmap bytes */ < 0)
        goto done;
    if (p.changed) {
        changed(heap, p.changed - 1, "the field values of the objects");
        goto done;
    }
    rc = put_validity(out, "name_valid", c->name, rows) < 0 || put_validity(out, "qualified_valid", c->qualified, rows) < 0
             ? -1 : 0;
done:
    PyMem_Free(p.slice_rows);
    return rc;
}
