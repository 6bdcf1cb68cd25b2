/* The bottom of the CPython glue: what every glue file shares.  Implemented
 * in _hprof_glue.c, which calls nothing but CPython and the core; each glue
 * file above it adds its functions and types to the module (_hprof_parts.h),
 * and _hprof.c assembles the module from them. */
#ifndef HPROF_GLUE_H
#define HPROF_GLUE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "core/hp_common.h"
#include "core/hp_parser.h"
#include "core/hp_sink.h"

/* Per-module state: the heap types and the exception classes of hprofkit._errors. */
typedef struct {
    PyTypeObject *event_iter_type;
    PyTypeObject *record_type;
    PyTypeObject *subrecord_type;
    PyTypeObject *heap_type, *heap_object_type, *heap_class_type, *heap_iter_type;
    PyTypeObject *reference_type, *referrer_type, *field_type, *gc_root_type, *stack_frame_type;
    PyObject *errors[HP_E_LIMIT + 1]; /* indexed by hp_code */
} hprof_state;

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

/* ---- output straight to a file descriptor ----
 *
 * The stream types' feed(..., fd=N) write their output from C, so that it
 * never becomes a Python object.  The core hands over many small runs (kept
 * sub-records), so they are gathered into HPROF_FD_BATCH-byte writes; a run
 * of half that or more goes from its buffer to the kernel directly.  A write
 * interrupted by a signal runs the Python signal handlers and stops if one
 * raised (Ctrl-C ends a write blocked on a pipe nobody reads). */
#define HPROF_FD_BATCH ((size_t)1 << 20)

typedef struct hprof_fd_out {
    hp_writer batch;   /* allocated on first use, kept between calls */
    hp_sink to_batch;  /* what the core writes to */
    hp_sink to_fd;     /* where the batch goes */
    int fd;
    int error;         /* errno of the write that failed, else 0 */
    int interrupted;   /* a signal handler raised while a write waited */
} hprof_fd_out;

/* Readies `out` (zeroed, or used before) for one call writing to fd >= 0 and
 * returns the sink to hand the core; NULL with MemoryError set.  GIL held.
 * With `patch`, when fd is a regular file written at its offset, the sink
 * can also rewrite bytes written before (hp_sink.patch): the caller vouches
 * that everything the core wrote so far went to this descriptor. */
const hp_sink *hprof_fd_out_start(hprof_fd_out *out, int fd, int patch);

/* Writes what is still batched; 0, or -1 when a write failed.  Needs no GIL. */
int hprof_fd_out_flush(hprof_fd_out *out);

/* Bytes handed to the descriptor since hprof_fd_out_start. */
static inline uint64_t hprof_fd_out_written(const hprof_fd_out *out) { return out->batch.written; }

/* Whether a write failed (the core then reports that its sink refused). */
static inline int hprof_fd_out_failed(const hprof_fd_out *out) { return out->error || out->interrupted; }

/* Raises what made a write fail (OSError, or the signal handler's exception,
 * which is already set); returns NULL.  GIL held. */
PyObject *hprof_fd_out_raise(const hprof_fd_out *out);

void hprof_fd_out_free(hprof_fd_out *out);

#endif
