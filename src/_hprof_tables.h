/* What the files behind heap._columns share (_hprof_tables_slices.c: the
 * slices, the columns and their errors; _hprof_heap_tables.c: objects,
 * reachability, roots and classes; _hprof_tables_refs.c: references and
 * primitive field values). */
#ifndef HPROF_TABLES_H
#define HPROF_TABLES_H

#include "_hprof_heap.h"
#include "core/hp_heap_tables.h"

#define SLICE_ROWS (1u << 18) /* a multiple of 8: slices never share a bitmap byte */
#define WORKERS 2             /* slices filled at once, one per thread (hp_parallel) */

/* Fills the rows of objects [start, end); `slot` (< WORKERS) tells the
 * slices that run at the same time apart, for state of their own. */
typedef void (*slice_fn)(const hp_heap *h, uint32_t start, uint32_t end, int slot, void *ctx);
/* Called with the GIL before or after a slice: 0, or -1 with an exception set. */
typedef int (*slice_gil_fn)(void *ctx, int slot, uint32_t start, uint32_t end);

/* _hprof_tables_slices.c.  Runs fn over objects [0, n) in slices, `workers` (1 or WORKERS) at a
 * time on as many threads, without the GIL and each under its own SIGBUS
 * guard, each between `before` and `after` (if not NULL) with the GIL;
 * Ctrl-C is checked between rounds.  0, or -1 with an exception:
 * KeyboardInterrupt, FileChangedError, or ValueError when the heap was
 * closed. */
int tables_slices(HeapIndex *heap, uint32_t n, int workers, slice_gil_fn before, slice_fn fn, slice_gil_fn after,
                  void *ctx);

/* A new bytes object of `size` bytes for the core to fill (zeroed when
 * `zero`), its data in *data; NULL with an exception set. */
PyObject *tables_column(uint64_t size, int zero, void *data);
/* Bytes of a bitmap of `rows` bits. */
static inline uint64_t tables_bitmap_size(uint64_t rows) { return (rows + 7) / 8; }
/* Adds `value` (stolen; NULL: an error already set) to dict `out` under
 * `name`: 0, or -1 with an exception set. */
int tables_put(PyObject *out, const char *name, PyObject *value);

/* Raises the exception of a core code (NOMEM, LIMIT...); returns -1. */
int tables_fail(HeapIndex *heap, hp_code rc, const char *what);
/* FileChangedError for bytes from `offset` on that two passes read
 * differently; returns -1. */
int tables_rewritten(HeapIndex *heap, uint64_t offset, const char *what);

/* references / fields (_hprof_tables_refs.c): the columns into dict `out`,
 * names from `names`.  References come in chunks, one per slice (each
 * column a list of bytes objects), each allocated at the slice's bound
 * from `objects` (its kind and array_length columns) and trimmed. */
int tables_references(HeapIndex *heap, const hp_table_names *names, PyObject *objects, PyObject *out);
int tables_fields(HeapIndex *heap, const hp_table_names *names, PyObject *out);

#endif
