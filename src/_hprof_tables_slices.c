/* The slices both table files fill (_hprof_heap_tables.c, _hprof_tables_refs.c):
 * rows cut into slices filled at once by up to WORKERS threads without the
 * GIL, each under its own SIGBUS guard, with Ctrl-C checked between rounds;
 * and the column buffers and errors they share.  Kept below both files, so
 * neither calls the other back. */
#include "_hprof_tables.h"

#include <string.h>

#include "core/hp_parallel.h"

/* ---- slices and columns ------------------------------------------------------ */

/* One round: up to WORKERS slices, filled at once. */
typedef struct {
    slice_fn fn;
    const hp_heap *h;
    void *ctx;
    const void *buf;
    size_t len;
    int count;
    uint32_t start[WORKERS], end[WORKERS];
    int failed[WORKERS];
    uint64_t fault[WORKERS];
} slice_round;

typedef struct {
    slice_round *round;
    int slot;
} slice_share;

static void run_slice(void *ctx)
{
    slice_share *s = ctx;
    slice_round *r = s->round;
    r->fn(r->h, r->start[s->slot], r->end[s->slot], s->slot, r->ctx);
}

/* Worker `slot`'s slice, under its thread's own guard. */
static void run_share(void *ctx, int slot)
{
    slice_round *r = ctx;
    slice_share s = { r, slot };
    r->failed[slot] = hprof_guard_call(r->buf, r->len, run_slice, &s, &r->fault[slot]) < 0;
}

int tables_slices(HeapIndex *heap, uint32_t n, int workers, slice_gil_fn before, slice_fn fn, slice_gil_fn after,
                  void *ctx)
{
    uint32_t next = 0;
    int k;
    do { /* once at least: an empty table still has its (empty) slice */
        slice_round r;
        memset(&r, 0, sizeof r);
        r.fn = fn;
        r.ctx = ctx;
        if (!(r.h = heap_index(heap)))
            return -1;
        r.buf = heap->view.buf;
        r.len = (size_t)heap->view.len;
        for (k = 0; k < workers && (k == 0 || next < n); k++) {
            r.start[k] = next;
            r.end[k] = next = n - next > SLICE_ROWS ? next + SLICE_ROWS : n;
            r.count = k + 1;
            if (before && before(ctx, k, r.start[k], r.end[k]) < 0)
                return -1;
        }
        heap_enter(heap);
        heap->running++;
        Py_BEGIN_ALLOW_THREADS
        hp_parallel(r.count, run_share, &r);
        Py_END_ALLOW_THREADS
        heap->running--;
        heap_leave(heap);
        for (k = 0; k < r.count; k++)
            if (r.failed[k]) {
                hprof_raise_changed(heap->st, r.fault[k]);
                return -1;
            }
        for (k = 0; k < r.count; k++)
            if (after && after(ctx, k, r.start[k], r.end[k]) < 0)
                return -1;
        if (PyErr_CheckSignals() < 0)
            return -1;
    } while (next < n);
    return 0;
}

PyObject *tables_column(uint64_t size, int zero, void *data)
{
    PyObject *b;
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

int tables_put(PyObject *out, const char *name, PyObject *value)
{
    int rc;
    if (!value)
        return -1;
    rc = PyDict_SetItemString(out, name, value);
    Py_DECREF(value);
    return rc;
}

int tables_fail(HeapIndex *heap, hp_code rc, const char *what)
{
    hp_error err;
    memset(&err, 0, sizeof err);
    err.code = rc;
    err.tag = -1;
    err.detail = what;
    if (rc == HP_E_CORRUPT)
        return tables_rewritten(heap, 0, what);
    hprof_raise(heap->st, &err);
    return -1;
}

int tables_rewritten(HeapIndex *heap, uint64_t offset, const char *what)
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
    return -1;
}

