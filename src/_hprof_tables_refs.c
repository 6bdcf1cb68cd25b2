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
    uint32_t max_element;
    const hp_table_names *names;
    void *columns;       /* hp_ref_columns or hp_field_columns */
    uint32_t changed;    /* a slice whose rows changed between the passes: its first object + 1 */
} long_pass;

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

static int changed(HeapIndex *heap, const long_pass *p, const char *what)
{
    hp_object obj;
    if (!heap_index(heap))
        return -1;
    if (heap_describe(heap, p->changed - 1, &obj) == 0)
        tables_rewritten(heap, obj.offset, what);
    return -1;
}

/* ---- references ---------------------------------------------------------------- */

static void count_refs(const hp_heap *h, uint32_t start, uint32_t end, void *ctx)
{
    long_pass *p = ctx;
    p->slice_rows[start / SLICE_ROWS] = hp_tables_count_refs(h, start, end, &p->max_element);
}

int tables_count_refs(HeapIndex *heap, uint32_t *max_element, uint64_t **slice_rows)
{
    long_pass p;
    memset(&p, 0, sizeof p);
    if (!heap_index(heap))
        return -1;
    *slice_rows = p.slice_rows = PyMem_Calloc((size_t)slice_count(heap) + 1, sizeof(uint64_t));
    if (!p.slice_rows) {
        PyErr_NoMemory();
        return -1;
    }
    if (tables_slices(heap, hp_heap_object_count(heap->index), count_refs, NULL, &p) < 0)
        return -1;
    *max_element = p.max_element;
    return 0;
}

static void fill_refs(const hp_heap *h, uint32_t start, uint32_t end, void *ctx)
{
    long_pass *p = ctx;
    uint64_t row = p->slice_rows[start / SLICE_ROWS], row_end = p->slice_rows[start / SLICE_ROWS + 1];
    if (!hp_tables_refs(h, start, end, p->names, row, row_end, p->columns) && !p->changed)
        p->changed = start + 1;
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

int tables_references(HeapIndex *heap, const hp_table_names *names, uint64_t *slice_rows, PyObject *out)
{
    hp_ref_columns c;
    long_pass p;
    uint64_t rows;
    memset(&p, 0, sizeof p);
    if (!heap_index(heap))
        return -1;
    p.slice_rows = slice_rows;
    p.names = names;
    p.columns = &c;
    rows = starts_of(slice_rows, slice_count(heap));
    if (tables_put(out, "source_id", tables_column(rows * 8, 0, &c.source_id)) < 0 ||
        tables_put(out, "target_id", tables_column(rows * 8, 0, &c.target_id)) < 0 ||
        tables_put(out, "name", tables_column(rows * 4, 0, &c.name)) < 0 ||
        tables_put(out, "qualified", tables_column(rows * 4, 0, &c.qualified)) < 0 ||
        tables_put(out, "target_class", tables_column(rows * 4, 0, &c.target_class)) < 0 ||
        tables_slices(heap, hp_heap_object_count(heap->index), fill_refs, NULL, &p) < 0)
        return -1;
    if (p.changed)
        return changed(heap, &p, "the references of the objects");
    return put_validity(out, "name_valid", c.name, rows) < 0 ||
                   put_validity(out, "qualified_valid", c.qualified, rows) < 0 ||
                   put_validity(out, "target_class_valid", c.target_class, rows) < 0
               ? -1 : 0;
}

/* ---- primitive field values ------------------------------------------------------- */

static void count_fields(const hp_heap *h, uint32_t start, uint32_t end, void *ctx)
{
    long_pass *p = ctx;
    p->slice_rows[start / SLICE_ROWS] = hp_tables_count_fields(h, start, end);
}

static void fill_fields(const hp_heap *h, uint32_t start, uint32_t end, void *ctx)
{
    long_pass *p = ctx;
    uint64_t row = p->slice_rows[start / SLICE_ROWS], row_end = p->slice_rows[start / SLICE_ROWS + 1];
    if (!hp_tables_fields(h, start, end, p->names, row, row_end, p->columns) && !p->changed)
        p->changed = start + 1;
}

int tables_fields(HeapIndex *heap, const hp_table_names *names, PyObject *out)
{
    hp_field_columns c;
    long_pass p;
    uint64_t rows, bits;
    uint32_t n;
    int rc = -1;
    memset(&p, 0, sizeof p);
    if (!heap_index(heap))
        return -1;
    n = hp_heap_object_count(heap->index);
    p.names = names;
    p.columns = &c;
    p.slice_rows = PyMem_Calloc((size_t)slice_count(heap) + 1, sizeof(uint64_t));
    if (!p.slice_rows) {
        PyErr_NoMemory();
        return -1;
    }
    if (tables_slices(heap, n, count_fields, NULL, &p) < 0)
        goto done;
    rows = starts_of(p.slice_rows, slice_count(heap));
    bits = tables_bitmap_size(rows);
    if (tables_put(out, "object_id", tables_column(rows * 8, 0, &c.object_id)) < 0 ||
        tables_put(out, "name", tables_column(rows * 4, 0, &c.name)) < 0 ||
        tables_put(out, "qualified", tables_column(rows * 4, 0, &c.qualified)) < 0 ||
        tables_put(out, "type", tables_column(rows, 0, &c.type)) < 0 ||
        tables_put(out, "int_value", tables_column(rows * 8, 0, &c.int_value)) < 0 ||
        tables_put(out, "int_valid", tables_column(bits, 1, &c.int_valid)) < 0 ||
        tables_put(out, "double_value", tables_column(rows * 8, 0, &c.double_value)) < 0 ||
        tables_put(out, "double_valid", tables_column(bits, 1, &c.double_valid)) < 0 ||
        tables_slices(heap, n, fill_fields, NULL, &p) < 0)
        goto done;
    if (p.changed) {
        changed(heap, &p, "the field values of the objects");
        goto done;
    }
    rc = put_validity(out, "name_valid", c.name, rows) < 0 || put_validity(out, "qualified_valid", c.qualified, rows) < 0
             ? -1 : 0;
done:
    PyMem_Free(p.slice_rows);
    return rc;
}
