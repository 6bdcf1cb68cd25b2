/* What the stream types (TailorEncoder, TailorDecoder, Converter,
 * PackEncoder, PackDecoder) share: how one feed() or flush() runs its core
 * filter.  Implemented in _hprof_stream.c, on top of _hprof_glue.c.
 *
 *  - One call at a time per object: a lock, as CPython's zlib objects have;
 *    a second thread waits (with the GIL released) instead of racing.
 *  - Bytes-like input only (TypeError otherwise, nothing allocated).
 *  - Output as bytes, or straight to a file descriptor; a regular file lets
 *    the core patch a record's length instead of holding or cutting it.
 *  - The GIL is released around the core's work (always: the pack codec's
 *    worker threads may need it to allocate while tracemalloc runs), which
 *    runs in slices of HPROF_STREAM_SLICE input bytes; Python's signal handlers run between
 *    slices and every HPROF_STREAM_CHECK output bytes, so Ctrl-C stops even
 *    a small input that restores to gigabytes. */
#ifndef HPROF_STREAM_H
#define HPROF_STREAM_H

#include "_hprof.h"
#include "core/hp_dumps.h"

#include <pythread.h>

#define HPROF_STREAM_SLICE ((size_t)4 << 20)
#define HPROF_STREAM_CHECK ((uint64_t)32 << 20)

/* A core filter's feed (data != NULL) or finish (data == NULL). */
typedef hp_code (*hprof_stream_fn)(void *core, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err);

typedef struct hprof_stream {
    const char *name;      /* the type's, for messages */
    PyThread_type_lock lock;
    hp_buf out;            /* output of the current call, handed over as bytes */
    hprof_fd_out to_fd;    /* output of the current call, on its way to a file descriptor */
    int out_fd;            /* the one descriptor all output went to, -2 before any, -1 when not one */
    unsigned long long bytes_in, bytes_out;
    int finished;          /* flush() ran, or a call failed */
    /* NULL, or for a filter that reads its input more than once: whether
     * the flush() that just ran ended a pass after which the whole input
     * is fed again (the stream is then not finished). */
    int (*again)(const void *core);
} hprof_stream;

/* 0, or -1 with an exception set. */
int hprof_stream_setup(hprof_stream *s, const char *name);
void hprof_stream_free(hprof_stream *s);

/* feed(data, fd) when data is not NULL, else flush(fd): bytes, or the count
 * written to fd >= 0.  `st` raises core errors. */
PyObject *hprof_stream_call(hprof_stream *s, hprof_state *st, hprof_stream_fn fn, void *core, PyObject *data,
                            int fd);

/* Constructor arguments, accepted as documented and nothing looser: a
 * bool must be True or False (TypeError otherwise; NULL leaves *out as it
 * is), a number within low..high (ValueError).  0, or -1 with the error set. */
int hprof_arg_bool(PyObject *value, const char *name, int *out);
int hprof_arg_range(Py_ssize_t value, const char *name, Py_ssize_t low, Py_ssize_t high);

/* Holds the object's lock (waiting with the GIL released) / gives it back:
 * for getters that read the core while a call may run in another thread. */
void hprof_stream_lock(hprof_stream *s);
void hprof_stream_unlock(hprof_stream *s);

/* The `unfinished` attribute, read from `core` by `fn` under the lock: None
 * until flush() ran, or when every heap dump is whole; else (index, offset,
 * end, count) of the first heap dump that stops without its HEAP_DUMP_END,
 * and how many do. */
#define HPROF_UNFINISHED_DOC                                                                           \
    "None, or once flush() ran on a dump whose heap dump stops without its HEAP_DUMP_END (the dump "  \
    "was cut short): (index, offset, end, count) of the first such heap dump (its first record, just " \
    "past its last) and how many there are."
typedef void (*hprof_unfinished_fn)(const void *core, hp_unfinished *out);
PyObject *hprof_stream_unfinished(hprof_stream *s, hprof_unfinished_fn fn, const void *core);

#endif
