/* Helpers every glue file shares: the raw allocator, state lookup, error
 * translation, type registration, text decoding, the SIGBUS guard of mapped
 * reads, the per-object lock and output to a file descriptor.
 *
 * The glue never parses HPROF itself: it hands buffers to the core, turns
 * core events into Python objects and core errors into hprofkit exceptions. */
#include "_hprof.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void *raw_malloc(size_t n) { return PyMem_RawMalloc(n); }
static void *raw_realloc(void *p, size_t n) { return PyMem_RawRealloc(p, n); }
static void raw_free(void *p) { PyMem_RawFree(p); }
const hp_alloc hprof_raw_alloc = { raw_malloc, raw_realloc, raw_free };

PyObject *hprof_module_of_type(PyTypeObject *type)
{
    /* A Python subclass (hprofkit.Heap) has no module of its own: the
     * nearest base the module made has. */
    while (type->tp_base &&
           !(PyType_HasFeature(type, Py_TPFLAGS_HEAPTYPE) && ((PyHeapTypeObject *)type)->ht_module))
        type = type->tp_base;
    return PyType_GetModule(type);
}

hprof_state *hprof_state_of_type(PyTypeObject *type)
{
    PyObject *module = hprof_module_of_type(type);
    return module ? hprof_get_state(module) : NULL;
}

/* An exception class the package has not handed down yet (hprofkit/__init__
 * registers them at import): a RuntimeError saying so. */
static PyObject *unregistered(const char *what)
{
    PyErr_Format(PyExc_RuntimeError, "hprofkit._hprof: %s, but the package did not register its exception "
                 "classes (import hprofkit first)", what);
    return NULL;
}

/* The one place where core errors become Python exceptions. */
PyObject *hprof_raise(hprof_state *st, const hp_error *err)
{
    char message[256];
    const char *record = NULL;
    PyObject *cls, *exc;

    if (err->code == HP_E_NOMEM)
        return PyErr_NoMemory();
    hp_error_format(err, message, sizeof message);
    if (err->tag >= 0)
        record = err->is_sub ? hp_subtag_name(err->tag) : hp_tag_name(err->tag);
    cls = st->errors[err->code < HP_E_COUNT ? err->code : HP_E_CORRUPT];
    if (!cls)
        return unregistered(message);
    /* A tag of -1 (the file header) becomes None on the Python side. */
    exc = PyObject_CallFunction(cls, "sKiz", message, (unsigned long long)err->offset, err->tag, record);
    if (exc) {
        PyErr_SetObject(cls, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

PyObject *hprof_decode_mutf8(const uint8_t *text, size_t len)
{
    uint8_t small[256], *buf;
    PyObject *out = PyUnicode_DecodeUTF8((const char *)text, (Py_ssize_t)len, NULL);
    if (out || !PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
        return out; /* the common case: plain UTF-8 */
    PyErr_Clear();
    buf = len <= sizeof small ? small : PyMem_Malloc(len);
    if (!buf)
        return PyErr_NoMemory();
    out = PyUnicode_DecodeUTF8((const char *)buf, (Py_ssize_t)hp_mutf8_to_utf8(text, len, buf), "replace");
    if (buf != small)
        PyMem_Free(buf);
    return out;
}

PyObject *hprof_java_name(const uint8_t *name, size_t len)
{
    uint8_t small[256], *java;
    size_t cap = HP_JAVA_NAME_MAX(len);
    PyObject *out;
    java = cap <= sizeof small ? small : PyMem_Malloc(cap);
    if (!java)
        return PyErr_NoMemory();
    out = hprof_decode_mutf8(java, hp_java_name(name, len, java));
    if (java != small)
        PyMem_Free(java);
    return out;
}

PyObject *hprof_slice(PyObject *base, uint64_t start, uint64_t len)
{
    if (start > (uint64_t)PY_SSIZE_T_MAX || len > (uint64_t)PY_SSIZE_T_MAX - start) {
        PyErr_SetString(PyExc_OverflowError, "slice past the largest buffer size");
        return NULL;
    }
    return PySequence_GetSlice(base, (Py_ssize_t)start, (Py_ssize_t)(start + len));
}

int hprof_add_types(PyObject *module, PyType_Spec *specs, const char *const *names, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        PyObject *type = PyType_FromModuleAndSpec(module, &specs[i], NULL);
        int rc;
        if (!type)
            return -1;
        rc = PyModule_AddObjectRef(module, names[i], type);
        Py_DECREF(type);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* ---- the SIGBUS guard ---- */

typedef struct guard {
    sigjmp_buf env;
    uintptr_t lo, hi;     /* the guarded bytes: [lo, hi) */
    struct guard *outer;  /* the guard this one nests in, on the same thread */
} guard;

/* The innermost guard of each thread.  Initial-exec TLS: the handler may be
 * the first to touch it on a thread, and dynamic TLS may allocate. */
static __thread guard *guard_top __attribute__((tls_model("initial-exec")));
/* Where the last fault of the thread was, from the start of its guard (not
 * in the guard itself: locals of hprof_guard_call are indeterminate after
 * the jump back into it). */
static __thread uint64_t fault_offset __attribute__((tls_model("initial-exec")));

static struct sigaction previous_sigbus;
static pthread_once_t sigbus_once = PTHREAD_ONCE_INIT;

/* A SIGBUS that is not ours goes where it would have gone without us. */
static void chain_sigbus(int sig, siginfo_t *info, void *context)
{
    if (previous_sigbus.sa_flags & SA_SIGINFO) {
        previous_sigbus.sa_sigaction(sig, info, context);
        return;
    }
    if (previous_sigbus.sa_handler == SIG_IGN && info->si_code <= 0)
        return; /* sent by kill(), and the process ignored it before us */
    if (previous_sigbus.sa_handler == SIG_DFL || previous_sigbus.sa_handler == SIG_IGN) {
        /* The default action (a fault cannot be ignored): die of SIGBUS. */
        signal(SIGBUS, SIG_DFL);
        raise(sig);
        return;
    }
    previous_sigbus.sa_handler(sig);
}

static void on_sigbus(int sig, siginfo_t *info, void *context)
{
    uintptr_t addr = (uintptr_t)info->si_addr;
    guard *g;
    if (info->si_code > 0) /* a fault of this thread (si_addr is meaningful), not a kill() */
        for (g = guard_top; g; g = g->outer)
            if (addr >= g->lo && addr < g->hi) {
                fault_offset = addr - g->lo;
                guard_top = g->outer;
                siglongjmp(g->env, 1);
            }
    chain_sigbus(sig, info, context);
}

/* Installed on first use rather than at import, so that a handler set up
 * before (faulthandler, a JVM) is chained to rather than chaining to us. */
static void install_sigbus_handler(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_NODEFER; /* NODEFER: the jump does not restore the mask */
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &previous_sigbus);
}

int hprof_guard_call(const void *buf, size_t len, void (*fn)(void *ctx), void *ctx, uint64_t *fault)
{
    guard g;
    pthread_once(&sigbus_once, install_sigbus_handler);
    if (sigsetjmp(g.env, 0) != 0) {
        *fault = fault_offset; /* the handler took the guard off */
        return -1;
    }
    g.lo = (uintptr_t)buf;
    g.hi = g.lo + len;
    g.outer = guard_top;
    guard_top = &g;
    /* The compiler sees fn when it is in this file (call_copy): without the
     * fences it may inline it, find that memcpy cannot read guard_top and
     * drop the store above as dead, leaving the copy unguarded. */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    fn(ctx);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    guard_top = g.outer;
    return 0;
}

int hprof_with_python(int (*fn)(void *ctx), void *ctx)
{
    guard *walk = guard_top;
    PyGILState_STATE gil;
    int rc;
    guard_top = NULL; /* Python code runs here: a fault in it is not the walk's to catch */
    gil = PyGILState_Ensure();
    rc = fn(ctx);
    PyGILState_Release(gil);
    guard_top = walk;
    return rc;
}

static int check_signals(void *ctx)
{
    (void)ctx;
    return PyErr_CheckSignals();
}

int hprof_run_signal_handlers(void)
{
    return hprof_with_python(check_signals, NULL);
}

PyObject *hprof_raise_changed(hprof_state *st, uint64_t offset)
{
    char message[200];
    PyObject *exc;
    PyOS_snprintf(message, sizeof message,
                  "the file changed while it was read: the byte at offset %llu (0x%llx) is no longer "
                  "in it (truncated by another program?)", (unsigned long long)offset,
                  (unsigned long long)offset);
    if (!st->changed_error)
        return unregistered(message);
    exc = PyObject_CallFunction(st->changed_error, "sK", message, (unsigned long long)offset);
    if (exc) {
        PyErr_SetObject(st->changed_error, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

typedef struct {
    void *dst;
    const void *src;
    size_t n;
} copy_call;

static void call_copy(void *ctx)
{
    copy_call *c = ctx;
    memcpy(c->dst, c->src, c->n);
}

PyObject *hprof_guarded_bytes(hprof_state *st, const void *buf, size_t len, const void *src, size_t n)
{
    PyObject *bytes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
    copy_call call;
    uint64_t fault;
    if (!bytes)
        return NULL;
    call.dst = PyBytes_AS_STRING(bytes);
    call.src = src;
    call.n = n;
    if (hprof_guard_call(buf, len, call_copy, &call, &fault) < 0) {
        Py_DECREF(bytes);
        return hprof_raise_changed(st, fault);
    }
    return bytes;
}

typedef struct {
    hp_parser *parser;
    hp_event *ev;
    hp_error *err;
    hp_code rc;
} next_call;

static void call_parser_next(void *ctx)
{
    next_call *c = ctx;
    c->rc = hp_parser_next(c->parser, c->ev, c->err);
}

int hprof_parser_next(hp_parser *parser, const void *buf, size_t len, hp_event *ev, hp_error *err,
                      hp_code *rc, uint64_t *fault)
{
    next_call call = { parser, ev, err, HP_OK };
    if (hprof_guard_call(buf, len, call_parser_next, &call, fault) < 0)
        return -1;
    *rc = call.rc;
    return 0;
}

/* ---- the per-object lock ---- */

int hprof_lock_alloc(hprof_lock *lock)
{
    lock->owner = 0;
    lock->lock = PyThread_allocate_lock();
    if (!lock->lock) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

void hprof_lock_free(hprof_lock *lock)
{
    if (lock->lock)
        PyThread_free_lock(lock->lock);
    lock->lock = NULL;
}

int hprof_lock_enter(hprof_lock *lock, PyObject *self)
{
    unsigned long me = PyThread_get_thread_ident();
    if (!PyThread_acquire_lock(lock->lock, NOWAIT_LOCK)) {
        if (lock->owner == me) {
            PyErr_Format(PyExc_RuntimeError,
                         "%s re-entered: this thread is already inside one of its methods "
                         "(called from a finalizer or a callback?)", Py_TYPE(self)->tp_name);
            return -1;
        }
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(lock->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
    lock->owner = me;
    return 0;
}

void hprof_lock_leave(hprof_lock *lock)
{
    lock->owner = 0;
    PyThread_release_lock(lock->lock);
}

/* ---- output to a file descriptor ---- */

/* A signal that arrives while write(2) waits on a full pipe makes it return:
 * with EINTR if nothing was written yet, else with a short count.  Either
 * way the Python handlers get their turn (the GIL may have been released),
 * and the write stops if one raised, e.g. KeyboardInterrupt. */
static int fd_write_all(void *ctx, const uint8_t *data, size_t len)
{
    hprof_fd_out *out = ctx;
    while (len) {
        size_t want = len < ((size_t)1 << 30) ? len : ((size_t)1 << 30);
        ssize_t n = write(out->fd, data, want);
        if (n < 0 && errno != EINTR) {
            out->error = errno;
            return -1;
        }
        if ((size_t)n != want && hprof_run_signal_handlers() < 0) {
            out->interrupted = 1;
            return -1;
        }
        if (n > 0) {
            data += n;
            len -= (size_t)n;
        }
    }
    return 0;
}

static int batched_write(void *ctx, const uint8_t *data, size_t len)
{
    return hp_writer_put(&((hprof_fd_out *)ctx)->batch, data, len);
}

/* Rewrites `len` bytes written `back` bytes before the end of the output:
 * in the batch while they are there, else in the file (pwrite). */
static int batched_patch(void *ctx, uint64_t back, const uint8_t *data, size_t len)
{
    hprof_fd_out *out = ctx;
    off_t end;
    if (back <= out->batch.len) {
        memcpy(out->batch.buf + out->batch.len - back, data, len);
        return 0;
    }
    if (hp_writer_flush(&out->batch) < 0)
        return -1;
    end = lseek(out->fd, 0, SEEK_CUR);
    if (end < 0 || back > (uint64_t)end) {
        out->error = end < 0 ? errno : ESPIPE;
        return -1;
    }
    while (len) {
        ssize_t n = pwrite(out->fd, data, len, (off_t)(end - (off_t)back));
        if (n < 0 && errno != EINTR) {
            out->error = errno;
            return -1;
        }
        if (n > 0) {
            data += n;
            len -= (size_t)n;
            back -= (uint64_t)n;
        }
    }
    return 0;
}

/* Whether bytes written to fd can be rewritten in place: a regular file
 * written at its offset (not O_APPEND). */
static int can_patch(int fd)
{
    struct stat st;
    int flags = fcntl(fd, F_GETFL);
    return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flags >= 0 && !(flags & O_APPEND) &&
           lseek(fd, 0, SEEK_CUR) >= 0;
}

const hp_sink *hprof_fd_out_start(hprof_fd_out *out, int fd, int patch)
{
    if (!out->batch.buf && hp_writer_init(&out->batch, &hprof_raw_alloc, HPROF_FD_BATCH) < 0) {
        PyErr_NoMemory();
        return NULL;
    }
    out->fd = fd;
    out->error = 0;
    out->interrupted = 0;
    out->to_fd.write = fd_write_all;
    out->to_fd.ctx = out;
    out->to_fd.patch = NULL;
    out->to_batch.write = batched_write;
    out->to_batch.ctx = out;
    out->to_batch.patch = patch && can_patch(fd) ? batched_patch : NULL;
    out->batch.sink = &out->to_fd;
    out->batch.len = 0;
    out->batch.written = 0;
    out->batch.failed = 0;
    return &out->to_batch;
}

int hprof_fd_out_flush(hprof_fd_out *out) { return hp_writer_flush(&out->batch); }

PyObject *hprof_fd_out_raise(const hprof_fd_out *out)
{
    if (out->interrupted)
        return NULL; /* the handler's exception is set */
    errno = out->error;
    return PyErr_SetFromErrno(PyExc_OSError);
}

void hprof_fd_out_free(hprof_fd_out *out) { hp_writer_free(&out->batch, &hprof_raw_alloc); }
