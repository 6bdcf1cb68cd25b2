/* How a stream type's feed() or flush() runs its core filter (see
 * _hprof_stream.h). */
#include "_hprof_stream.h"

int hprof_stream_setup(hprof_stream *s, const char *name)
{
    s->name = name;
    s->out_fd = -2;
    hp_buf_init(&s->out, &hprof_raw_alloc);
    s->lock = PyThread_allocate_lock();
    if (!s->lock) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

void hprof_stream_free(hprof_stream *s)
{
    if (s->lock)
        PyThread_free_lock(s->lock);
    s->lock = NULL;
    hp_buf_free(&s->out);
    hprof_fd_out_free(&s->to_fd);
}

int hprof_arg_bool(PyObject *value, const char *name, int *out)
{
    if (value == NULL)
        return 0;
    if (!PyBool_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s must be True or False, not %.100s", name, Py_TYPE(value)->tp_name);
        return -1;
    }
    *out = value == Py_True;
    return 0;
}

int hprof_arg_range(Py_ssize_t value, const char *name, Py_ssize_t low, Py_ssize_t high)
{
    if (value < low || value > high) {
        PyErr_Format(PyExc_ValueError, "%s must be in %zd..%zd, not %zd", name, low, high, value);
        return -1;
    }
    return 0;
}

void hprof_stream_lock(hprof_stream *s)
{
    if (!PyThread_acquire_lock(s->lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(s->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
}

void hprof_stream_unlock(hprof_stream *s) { PyThread_release_lock(s->lock); }

/* ---- the sink the core gets: the real one, and a look at Python's signals
 * every HPROF_STREAM_CHECK bytes (the GIL is released meanwhile) ---- */

typedef struct watch {
    hp_sink sink;        /* what the core writes to */
    const hp_sink *next; /* the bytes buffer or the descriptor */
    uint64_t since;      /* bytes since the last look */
    int interrupted;     /* a handler raised: its exception is set */
} watch;

static int watch_write(void *ctx, const uint8_t *data, size_t len)
{
    watch *w = ctx;
    w->since += len;
    if (w->since >= HPROF_STREAM_CHECK) {
        PyGILState_STATE gil = PyGILState_Ensure();
        int rc = PyErr_CheckSignals();
        PyGILState_Release(gil);
        w->since = 0;
        if (rc < 0) {
            w->interrupted = 1;
            return -1;
        }
    }
    return w->next->write(w->next->ctx, data, len);
}

static int watch_patch(void *ctx, uint64_t back, const uint8_t *data, size_t len)
{
    watch *w = ctx;
    return w->next->patch(w->next->ctx, back, data, len);
}

/* ---- one call ---- */

/* One core call, then what is batched for the descriptor: the output up to
 * an error is written too (as the core wrote it, whole units). */
static hp_code run_slice(hprof_stream *s, hprof_stream_fn fn, void *core, const uint8_t *data, size_t n, watch *w,
                         int to_fd, hp_error *err)
{
    hp_code rc = fn(core, data, n, &w->sink, err);
    if (to_fd && !hprof_fd_out_failed(&s->to_fd) && hprof_fd_out_flush(&s->to_fd) < 0 && rc == HP_OK)
        rc = HP_E_NOMEM; /* hprof_fd_out_failed() tells it apart */
    return rc;
}

typedef struct {
    hprof_stream *s;
    hprof_stream_fn fn;
    void *core;
    const uint8_t *data;
    size_t n;
    watch *w;
    int to_fd;
    hp_error *err;
    hp_code rc;
} slice_call;

static void call_slice(void *ctx)
{
    slice_call *c = ctx;
    c->rc = run_slice(c->s, c->fn, c->core, c->data, c->n, c->w, c->to_fd, c->err);
}

/* Runs the core over the input in slices (finish when view is NULL),
 * without the GIL; it is held on entry and on return.  The input may be a
 * mapping whose file shrinks: its reads run under the SIGBUS guard.  HP_OK,
 * or the core's error (or HP_E_NOMEM with an exception set when a signal
 * handler raised between slices, or FileChangedError). */
static hp_code run(hprof_stream *s, hprof_state *st, hprof_stream_fn fn, void *core, const Py_buffer *view,
                   watch *w, int to_fd, hp_error *err)
{
    slice_call call = { s, fn, core, view ? view->buf : NULL, 0, w, to_fd, err, HP_OK };
    size_t left = view ? (size_t)view->len : 0;
    do {
        uint64_t fault;
        int faulted = 0;
        call.n = left < HPROF_STREAM_SLICE ? left : HPROF_STREAM_SLICE;
        /* Always without the GIL, small input too: the pack codec's workers
         * may need it to allocate (PyMem_Raw* takes it while tracemalloc runs). */
        Py_BEGIN_ALLOW_THREADS
        if (view)
            faulted = hprof_guard_call(view->buf, (size_t)view->len, call_slice, &call, &fault) < 0;
        else
            call_slice(&call);
        Py_END_ALLOW_THREADS
        if (faulted) { /* the core's state is half updated: the stream ends here */
            w->interrupted = 1;
            hprof_raise_changed(st, fault);
            return HP_E_NOMEM;
        }
        if (call.data)
            call.data += call.n;
        left -= call.n;
        if (call.rc == HP_OK && left && PyErr_CheckSignals() < 0) {
            w->interrupted = 1;
            return HP_E_NOMEM;
        }
    } while (call.rc == HP_OK && left);
    return call.rc;
}

PyObject *hprof_stream_call(hprof_stream *s, hprof_state *st, hprof_stream_fn fn, void *core, PyObject *data,
                            int fd)
{
    Py_buffer view;
    hp_sink to_bytes = hp_buf_sink(&s->out);
    watch w;
    hp_error err;
    hp_code rc;
    PyObject *result = NULL;

    if (data && PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    hprof_stream_lock(s);
    if (s->finished) {
        PyErr_Format(PyExc_ValueError, "%s: %s after flush() or an error", s->name, data ? "feed()" : "flush()");
        goto done;
    }
    /* The core may patch what it wrote only if all of it went to this one descriptor. */
    s->out_fd = s->out_fd == -2 || s->out_fd == fd ? fd : -1;
    memset(&w, 0, sizeof w);
    w.next = &to_bytes;
    if (fd >= 0 && !(w.next = hprof_fd_out_start(&s->to_fd, fd, s->out_fd == fd)))
        goto done;
    w.sink.write = watch_write;
    w.sink.ctx = &w;
    w.sink.patch = w.next->patch ? watch_patch : NULL;
    s->out.len = 0;
    rc = run(s, st, fn, core, data ? &view : NULL, &w, fd >= 0, &err);
    if (rc != HP_OK) {
        s->finished = 1; /* core errors are sticky, and an interrupted call left the stream cut */
        if (!w.interrupted) { /* else the handler's exception is set */
            if (fd >= 0 && hprof_fd_out_failed(&s->to_fd))
                hprof_fd_out_raise(&s->to_fd);
            else
                hprof_raise(st, &err);
        }
        goto done;
    }
    if (!data)
        s->finished = !(s->again && s->again(core));
    else
        s->bytes_in += (unsigned long long)view.len;
    if (fd >= 0) {
        s->bytes_out += hprof_fd_out_written(&s->to_fd);
        result = PyLong_FromUnsignedLongLong(hprof_fd_out_written(&s->to_fd));
    } else {
        s->bytes_out += s->out.len;
        result = PyBytes_FromStringAndSize((const char *)s->out.data, (Py_ssize_t)s->out.len);
    }
    /* Keep the buffer for the next call unless one call produced a lot. */
    if (s->out.cap > ((size_t)16 << 20))
        hp_buf_free(&s->out);
done:
    hprof_stream_unlock(s);
    if (data)
        PyBuffer_Release(&view);
    return result;
}

PyObject *hprof_stream_unfinished(hprof_stream *s, hprof_unfinished_fn fn, const void *core)
{
    hp_unfinished u;
    int finished;
    hprof_stream_lock(s);
    fn(core, &u);
    finished = s->finished;
    hprof_stream_unlock(s);
    if (!finished || u.count == 0)
        Py_RETURN_NONE;
    return Py_BuildValue("(IKKI)", (unsigned int)u.index, (unsigned long long)u.offset, (unsigned long long)u.end,
                         (unsigned int)u.count);
}
