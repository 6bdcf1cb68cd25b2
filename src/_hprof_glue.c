/* Helpers every glue file shares: the raw allocator, state lookup, error
 * translation, type registration and output to a file descriptor.
 *
 * The glue never parses HPROF itself: it hands buffers to the core, turns
 * core events into Python objects and core errors into hprofkit exceptions. */
#include "_hprof.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static void *raw_malloc(size_t n) { return PyMem_RawMalloc(n); }
static void *raw_realloc(void *p, size_t n) { return PyMem_RawRealloc(p, n); }
static void raw_free(void *p) { PyMem_RawFree(p); }
const hp_alloc hprof_raw_alloc = { raw_malloc, raw_realloc, raw_free };

/* Our types are not subclassable, so the defining module is the type's own. */
hprof_state *hprof_state_of_type(PyTypeObject *type)
{
    PyObject *module = PyType_GetModule(type);
    return module ? hprof_get_state(module) : NULL;
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
    cls = st->errors[err->code <= HP_E_LIMIT ? err->code : HP_E_CORRUPT];
    /* A tag of -1 (the file header) becomes None on the Python side. */
    exc = PyObject_CallFunction(cls, "sKiz", message, (unsigned long long)err->offset, err->tag, record);
    if (exc) {
        PyErr_SetObject(cls, exc);
        Py_DECREF(exc);
    }
    return NULL;
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

/* ---- output to a file descriptor ---- */

/* Runs the Python signal handlers, taking the GIL if the caller released it;
 * -1 when one raised (its exception is then set). */
static int run_signal_handlers(void)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    int rc = PyErr_CheckSignals();
    PyGILState_Release(gil);
    return rc;
}

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
        if ((size_t)n != want && run_signal_handlers() < 0) {
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
