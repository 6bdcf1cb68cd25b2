/* What the two files behind heap._columns share (_hprof_heap_tables.c:
 * the slices, the columns, objects, reachability, roots and classes;
 * _hprof_tables_refs.c: references and primitive field values). */
#ifndef HPROF_TABLES_H
#define HPROF_TABLES_H

#include "_hprof_heap.h"
#include "core/hp_heap_tables.h"

#define SLICE_ROWS (1u << 18) /* a multiple of 8: slices never share a bitmap byte */

typedef void (*slice_fn)(const hp_heap *h, uint32_t start, uint32_t end, void *ctx);
/* Called with the GIL after each slice: 0, or -1 with an exception set. */
typedef int (*slice_done_fn)(void *ctx, uint32_t start, uint32_t end);

/* Runs fn over objects [0, n) in slices without the GIL and under the SIGBUS
 * guard, then `done` (if not NULL) with the GIL; Ctrl-C is checked between
 * slices.  0, or -1 with an exception: KeyboardInterrupt, FileChangedError,
 * or ValueError when the heap was closed. */
int tables_slices(HeapIndex *heap, uint32_t n, slice_fn fn, slice_done_fn done, void *ctx);

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
 * names from `names` (built for max_element element names: see
 * tables_count_refs). */
int tables_count_refs(HeapIndex *heap, uint32_t *max_element, uint64_t **slice_rows);
int tables_references(HeapIndex *heap, const hp_table_names *names, uint64_t *slice_rows, PyObject *out);
int tables_fields(HeapIndex *heap, const hp_table_names *names, PyObject *out);

#endif
