/* The bottom of the CPython glue: what every glue file shares.  Implemented
 * in _hprof_glue.c, which calls nothing but CPython and the core; each glue
 * file above it adds its functions and types to the module (_hprof_parts.h),
 * and _hprof.c assembles the module from them. */
#ifndef HPROF_GLUE_H
#define HPROF_GLUE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include "core/hp_common.h"
#include "core/hp_parser.h"
#include "core/hp_sink.h"

/* Per-module state: the module's types, and the package's classes that the
 * package hands down once at import (hprofkit._hprof._register, in
 * _hprof_register.c): the module never imports the package. */
typedef struct {
    PyTypeObject *event_iter_type;
    PyTypeObject *record_type;
    PyTypeObject *subrecord_type;
    PyTypeObject *heap_type, *heap_object_type, *heap_class_type, *heap_iter_type;
    PyTypeObject *reference_type, *referrer_type, *field_type, *gc_root_type, *stack_frame_type;
    PyTypeObject *routes_type, *route_type;
    /* The handle classes C instantiates: hprofkit.HeapObject and
     * hprofkit.HeapClass once registered, until then the base types above. */
    PyTypeObject *object_handle_type, *class_handle_type;
    PyTypeObject *mapping_type;       /* MappingIndex (_hprof_mapping.c): the heap reads names through one */
    PyObject *errors[HP_E_COUNT]; /* hprofkit._errors' classes, indexed by hp_code */
    PyObject *changed_error;          /* FileChangedError: a mapping faulted (hprof_guard) */
    PyObject *event_types[4];         /* the Parser's events, hprofkit._events' (_hprof_parser.c) */
    PyObject *event_kinds[4];         /* their first field: "header", "record", "subrecord", "end" */
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
/* The module (borrowed) and its state, from one of its types or a Python
 * subclass of one. */
PyObject *hprof_module_of_type(PyTypeObject *type);
hprof_state *hprof_state_of_type(PyTypeObject *type);

/* Java's modified UTF-8 (names, STRING records) as a str, never failing:
 * what is invalid becomes U+FFFD, unpaired surrogates too. */
PyObject *hprof_decode_mutf8(const uint8_t *text, size_t len);
/* A class name as a dump writes it, as a Java name (hp_java_name), decoded. */
PyObject *hprof_java_name(const uint8_t *name, size_t len);

/* Raises the hprofkit exception for `err`; always returns NULL. */
PyObject *hprof_raise(hprof_state *st, const hp_error *err);

/* A memoryview of base[start:start+len] (base: a memoryview); it holds base's export. */
PyObject *hprof_slice(PyObject *base, uint64_t start, uint64_t len);

/* Creates the heap type of each spec and adds it to the module under the
 * matching name; -1 with an exception set on failure. */
int hprof_add_types(PyObject *module, PyType_Spec *specs, const char *const *names, size_t n);

/* ---- mapped files that shrink under a walk ----
 *
 * A read of a mapped page past the end of a file that was truncated after it
 * was mapped raises SIGBUS, which would kill the interpreter.  A guard turns
 * such a fault into an error: the extension's SIGBUS handler (installed on
 * first use, chaining to the previous handler for every fault that is not
 * ours) jumps back to the innermost guard of the faulting thread whose range
 * holds the faulting address.  A guard costs one sigsetjmp without the signal
 * mask (SA_NODEFER keeps SIGBUS unblocked after the jump), so short calls can
 * be wrapped too.
 *
 * Wrap C code only (core calls), never a call that may run Python code, and
 * in the GIL state the code runs in (inside Py_BEGIN/END_ALLOW_THREADS if it
 * runs there):
 *
 *     typedef struct { hp_walker *w; hp_code rc; hp_error err; } walk_call;
 *     static void walk(void *ctx) { walk_call *c = ctx; c->rc = hp_walk(c->w, &c->err); }
 *     ...
 *     walk_call call = { w };
 *     if (hprof_guard_call(buf, len, walk, &call, &fault) < 0)
 *         return hprof_raise_changed(st, fault);   (with the GIL held)
 *
 * What a fault interrupts (a parser, a table being filled) is left half
 * updated and must be thrown away; memory the interrupted code had not linked
 * anywhere yet leaks: a fault ends the walk for good.  Pointers that fn
 * stores in ctx are seen by the caller, so it can free them. */

/* Runs fn(ctx) with faults on buf[0:len] turned into a return of -1 (*fault
 * then holds the faulting byte's offset from buf); 0 when fn returned.
 * Needs no GIL; guards nest. */
int hprof_guard_call(const void *buf, size_t len, void (*fn)(void *ctx), void *ctx, uint64_t *fault);

/* Runs the Python signal handlers from C code, taking the GIL if the caller
 * released it, with this thread's guards off meanwhile (the handlers are
 * Python code): the way for a guarded core call's interrupt callback to
 * honour Ctrl-C.  -1 when one raised (its exception is then set). */
int hprof_run_signal_handlers(void);

/* Runs fn(ctx) as hprof_run_signal_handlers runs the handlers (the GIL
 * taken, this thread's guards off): for callbacks into Python code, such as
 * a progress display, from a guarded core call.  Returns fn's result. */
int hprof_with_python(int (*fn)(void *ctx), void *ctx);

/* Raises FileChangedError for a fault at `offset` of the file; returns NULL. */
PyObject *hprof_raise_changed(hprof_state *st, uint64_t offset);

/* A bytes object copied from src[0:n], which lies in the buffer buf[0:len]
 * (a mapping, maybe): NULL with FileChangedError set when it faulted (or
 * MemoryError).  GIL held. */
PyObject *hprof_guarded_bytes(hprof_state *st, const void *buf, size_t len, const void *src, size_t n);

/* hp_parser_next under a guard of buf[0:len], the input fed to the parser:
 * 0 with the core's code in *rc, or -1 when the input faulted (*fault set;
 * the parser must then be freed). */
int hprof_parser_next(hp_parser *parser, const void *buf, size_t len, hp_event *ev, hp_error *err,
                      hp_code *rc, uint64_t *fault);

/* ---- one caller at a time ----
 *
 * Objects with state (a parser, an iterator) take this lock in every method
 * that uses the state.  A second thread waits for the first, with the GIL
 * released; a call that re-enters the object on the thread already inside
 * it (from a finalizer or a callback) gets RuntimeError instead of a
 * deadlock or a corrupt state. */
typedef struct hprof_lock {
    PyThread_type_lock lock;
    unsigned long owner; /* thread inside, 0 when none; changed with the GIL held */
} hprof_lock;

/* 0, or -1 with MemoryError set. */
int hprof_lock_alloc(hprof_lock *lock);
void hprof_lock_free(hprof_lock *lock);

/* Enters `lock` for the object `self`; 0, or -1 with RuntimeError set. */
int hprof_lock_enter(hprof_lock *lock, PyObject *self);
void hprof_lock_leave(hprof_lock *lock);

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
