/* stats() and walk(): whole-buffer passes of the core with the GIL released,
 * in slices so that Ctrl-C and progress reports get a turn, and under the
 * SIGBUS guard: the buffer may be a mapped file that shrinks meanwhile. */
#include "_hprof_parts.h"

#include <string.h>

#include "core/hp_heap.h"
#include "core/hp_stats.h"

/* Holds the buffer and the parser of one pass. */
typedef struct {
    Py_buffer view;
    hp_parser *parser;
    size_t pos;
} pass;

static int pass_open(pass *ps, PyObject *buffer)
{
    ps->parser = NULL;
    ps->pos = 0;
    if (PyObject_GetBuffer(buffer, &ps->view, PyBUF_SIMPLE) < 0)
        return -1;
    ps->parser = hp_parser_new(&hprof_raw_alloc, HP_PARSE_SUBRECORDS);
    if (!ps->parser) {
        PyBuffer_Release(&ps->view);
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void pass_close(pass *ps)
{
    hp_parser_free(ps->parser);
    PyBuffer_Release(&ps->view);
}

/* Feeds the next slice; returns its size. */
static size_t pass_feed(pass *ps)
{
    size_t len = (size_t)ps->view.len, n = len - ps->pos < HPROF_SLICE ? len - ps->pos : HPROF_SLICE;
    hp_parser_feed(ps->parser, (const uint8_t *)ps->view.buf + ps->pos, n, ps->pos + n == len);
    ps->pos += n;
    return n;
}

/* Runs fn(ctx), a core call over the pass's buffer, guarded, with the GIL
 * released for a slice of HPROF_GIL_MINSIZE bytes or more.  0, or -1 with
 * FileChangedError set. */
static int pass_run(pass *ps, hprof_state *st, size_t slice, void (*fn)(void *ctx), void *ctx)
{
    uint64_t fault;
    int rc;
    if (slice >= HPROF_GIL_MINSIZE) {
        Py_BEGIN_ALLOW_THREADS
        rc = hprof_guard_call(ps->view.buf, (size_t)ps->view.len, fn, ctx, &fault);
        Py_END_ALLOW_THREADS
    } else {
        rc = hprof_guard_call(ps->view.buf, (size_t)ps->view.len, fn, ctx, &fault);
    }
    if (rc < 0)
        hprof_raise_changed(st, fault);
    return rc;
}

/* Between slices: Ctrl-C and the progress callback.  -1 if either raised. */
static int pass_checkpoint(pass *ps, PyObject *progress)
{
    PyObject *r;
    if (PyErr_CheckSignals() < 0)
        return -1;
    if (progress == NULL || progress == Py_None)
        return 0;
    r = PyObject_CallFunction(progress, "nn", (Py_ssize_t)ps->pos, ps->view.len);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static PyObject *tallies(const hp_tally *t)
{
    PyObject *d = PyDict_New();
    int tag;
    for (tag = 0; d && tag < 256; tag++) {
        PyObject *key, *value;
        int rc;
        if (t[tag].count == 0)
            continue;
        key = PyLong_FromLong(tag);
        value = Py_BuildValue("KK", (unsigned long long)t[tag].count, (unsigned long long)t[tag].bytes);
        rc = (key && value) ? PyDict_SetItem(d, key, value) : -1;
        Py_XDECREF(key);
        Py_XDECREF(value);
        if (rc < 0)
            Py_CLEAR(d);
    }
    return d;
}

/* Rows build Python objects, so they need the GIL: Ctrl-C is checked this often. */
#define ROWS_PER_CHECK ((size_t)1 << 16)

/* A name found in the buffer (a class's, or a heap's), under the guard. */
typedef struct {
    const hp_stats *stats;
    const pass *ps;
    uint64_t class_id; /* find_class_name: the class */
    size_t heap;       /* find_heap_name: the heap's index */
    uint32_t heap_id;  /* find_heap_name: its id */
    const uint8_t *name;
    size_t len;
    int found;
} name_call;

static void find_class_name(void *ctx)
{
    name_call *c = ctx;
    c->found = hp_stats_class_name(c->stats, c->ps->view.buf, (uint64_t)c->ps->view.len, c->class_id, &c->name,
                                   &c->len);
}

static void find_heap_name(void *ctx)
{
    name_call *c = ctx;
    c->found = hp_stats_heap(c->stats, c->heap, c->ps->view.buf, (uint64_t)c->ps->view.len, &c->heap_id, &c->name,
                             &c->len);
}

/* Runs `find` (a name_call's), then gives the name as bytes, or None when
 * there is none; NULL with an exception set. */
static PyObject *name_bytes(name_call *call, hprof_state *st, void (*find)(void *ctx))
{
    const pass *ps = call->ps;
    uint64_t fault;
    if (hprof_guard_call(ps->view.buf, (size_t)ps->view.len, find, call, &fault) < 0)
        return hprof_raise_changed(st, fault);
    if (!call->found)
        Py_RETURN_NONE;
    return hprof_guarded_bytes(st, ps->view.buf, (size_t)ps->view.len, call->name, call->len);
}

/* The histogram: [(class_id, elem_type, instances, shallow_bytes, name bytes or None, heap_id)]. */
static PyObject *histogram(const hp_stats *s, const pass *ps, hprof_state *st)
{
    size_t n = hp_stats_row_count(s), i;
    PyObject *rows = PyList_New((Py_ssize_t)n);
    for (i = 0; rows && i < n; i++) {
        hp_class_row row;
        PyObject *name, *item;
        hp_stats_row(s, i, &row);
        /* Primitive arrays are named by their type (on the Python side). */
        if (row.elem_type == 0 || row.elem_type == HP_T_OBJECT) {
            name_call call = { s, ps, row.class_id, 0, 0, NULL, 0, 0 };
            name = name_bytes(&call, st, find_class_name);
        } else {
            name = Py_NewRef(Py_None);
        }
        item = name ? Py_BuildValue("KiKKNk", (unsigned long long)row.class_id, row.elem_type,
                                    (unsigned long long)row.instances, (unsigned long long)row.shallow_bytes, name,
                                    (unsigned long)row.heap_id)
                    : NULL;
        if (!item || (i % ROWS_PER_CHECK == ROWS_PER_CHECK - 1 && PyErr_CheckSignals() < 0)) {
            Py_XDECREF(item);
            Py_CLEAR(rows);
            break;
        }
        PyList_SET_ITEM(rows, (Py_ssize_t)i, item);
    }
    return rows;
}

typedef struct {
    hp_stats *stats;
    hp_parser *parser;
    int *done;
    hp_error *err;
    hp_code rc;
} stats_call;

static void run_stats(void *ctx)
{
    stats_call *c = ctx;
    c->rc = hp_stats_run(c->stats, c->parser, c->done, c->err);
}

typedef struct {
    hp_stats *stats;
    const pass *ps;
    hp_size_model model;
} model_call;

/* The histogram's size model: VisualVM's, compressed oops guessed on 64-bit
 * HotSpot dumps from the few classes and objects the guess reads, found
 * again in the buffer (hp_stats_guess_model).  Only when that search runs
 * out of its budget is the dump indexed (hp_heap) for the guess; a dump the
 * index refuses keeps references at id size.  Reads the buffer: run it
 * guarded. */
static void find_model(void *ctx)
{
    model_call *c = ctx;
    const uint8_t *buf = c->ps->view.buf;
    uint64_t len = (uint64_t)c->ps->view.len;
    if (!hp_stats_guess_model(c->stats, buf, len, &c->model)) {
        hp_heap_options opt;
        hp_heap *heap = NULL;
        hp_error err;
        memset(&opt, 0, sizeof opt);
        opt.alloc = &hprof_raw_alloc;
        opt.size_model = HP_SIZES_VISUALVM;
        if (hp_heap_build(buf, len, &opt, &heap, &err) == HP_OK)
            c->model = *hp_heap_size_model(heap);
        hp_heap_free(heap);
    }
}

/* Sets the histogram's size model; -1 with an exception (Ctrl-C,
 * FileChangedError) on failure. */
static int size_histogram(hp_stats *stats, pass *ps, hprof_state *st)
{
    model_call call;
    if (!hp_parser_header(ps->parser))
        return 0;
    memset(&call, 0, sizeof call);
    call.stats = stats;
    call.ps = ps;
    if (pass_run(ps, st, (size_t)ps->view.len, find_model, &call) < 0 || PyErr_CheckSignals() < 0)
        return -1;
    hp_stats_set_model(stats, &call.model);
    return 0;
}

/* The heaps the rows name: [(heap_id, name bytes or None)]. */
static PyObject *heaps(const hp_stats *s, const pass *ps, hprof_state *st)
{
    size_t n = hp_stats_heap_count(s), i;
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (i = 0; list && i < n; i++) {
        name_call call = { s, ps, 0, i, 0, NULL, 0, 0 };
        PyObject *name = name_bytes(&call, st, find_heap_name);
        PyObject *item = name ? Py_BuildValue("kN", (unsigned long)call.heap_id, name) : NULL;
        if (!item) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

/* The heap dumps: [(offset, end, records, bytes, subrecords, instances,
 * object_arrays, primitive_arrays, classes, gc_roots, complete)]. */
static PyObject *heap_dumps(const hp_stats *s)
{
    uint32_t n = hp_stats_heap_dumps(s), i;
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (i = 0; list && i < n; i++) {
        const hp_heap_dump_info *d = hp_stats_heap_dump(s, i);
        PyObject *item = Py_BuildValue("KKKKKKKKKKO", (unsigned long long)d->offset, (unsigned long long)d->end,
                                       (unsigned long long)d->records, (unsigned long long)d->bytes,
                                       (unsigned long long)d->subrecords, (unsigned long long)d->instances,
                                       (unsigned long long)d->object_arrays,
                                       (unsigned long long)d->primitive_arrays, (unsigned long long)d->classes,
                                       (unsigned long long)d->gc_roots, d->complete ? Py_True : Py_False);
        if (!item) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

PyDoc_STRVAR(stats_doc,
"stats($module, buffer, /, *, progress=None, heap_dump=0)\n--\n\n"
"Count records and sub-records per tag and build the class histogram of a\n"
"whole HPROF file in buffer.  heap_dump selects the heap dump whose\n"
"sub-records are tallied and histogrammed (-1: none).  progress(done, total)\n"
"is called between slices.  Returns a dict of plain values (see\n"
"hprofkit.Stats).");

static PyObject *hprof_stats(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "", "progress", "heap_dump", NULL };
    PyObject *buffer, *progress = Py_None, *result = NULL;
    hprof_state *st = hprof_get_state(module);
    hp_stats *stats = NULL;
    long long heap_dump = 0;
    hp_error err;
    pass ps;
    int done = 0;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OL:stats", keywords, &buffer, &progress, &heap_dump))
        return NULL;
    if (heap_dump < -1 || heap_dump >= (long long)HP_NO_DUMP) {
        PyErr_SetString(PyExc_ValueError, "heap_dump must be a heap dump's index, or -1 for none");
        return NULL;
    }
    if (pass_open(&ps, buffer) < 0)
        return NULL;
    stats = hp_stats_new(&hprof_raw_alloc);
    if (!stats) {
        PyErr_NoMemory();
        goto done;
    }
    hp_stats_select(stats, heap_dump < 0 ? HP_NO_DUMP : (uint32_t)heap_dump);
    while (!done) {
        stats_call call = { stats, ps.parser, &done, &err, HP_OK };
        if (pass_run(&ps, st, pass_feed(&ps), run_stats, &call) < 0)
            goto done;
        if (call.rc != HP_OK) {
            hprof_raise(st, &err);
            goto done;
        }
        if (pass_checkpoint(&ps, progress) < 0)
            goto done;
    }
    if (size_histogram(stats, &ps, st) < 0)
        goto done;
    {
        const hp_header *h = hp_parser_header(ps.parser);
        PyObject *records = tallies(hp_stats_records(stats));
        PyObject *subrecords = tallies(hp_stats_subrecords(stats));
        PyObject *dumps = heap_dumps(stats);
        PyObject *heap_list = dumps ? heaps(stats, &ps, st) : NULL;
        PyObject *rows = heap_list ? histogram(stats, &ps, st) : NULL;
        if (records && subrecords && rows)
            result = Py_BuildValue("{s:s,s:i,s:i,s:K,s:n,s:O,s:O,s:O,s:O,s:O,s:O}", "magic", h->magic,
                                   "version", h->version, "id_size", h->id_size,
                                   "timestamp", (unsigned long long)h->timestamp, "size", ps.view.len,
                                   "complete", hp_stats_complete(stats) ? Py_True : Py_False,
                                   "heap_dumps", dumps, "heaps", heap_list, "records", records,
                                   "subrecords", subrecords, "histogram", rows);
        Py_XDECREF(records);
        Py_XDECREF(subrecords);
        Py_XDECREF(dumps);
        Py_XDECREF(heap_list);
        Py_XDECREF(rows);
    }
done:
    hp_stats_free(stats);
    pass_close(&ps);
    return result;
}

typedef struct {
    hp_parser *parser;
    unsigned long long events;
    int done;
    hp_error err;
    hp_code rc;
} walk_call;

/* Walks the parser's current slice, counting events. */
static void run_walk(void *ctx)
{
    walk_call *c = ctx;
    for (;;) {
        hp_event ev;
        c->rc = hp_parser_next(c->parser, &ev, &c->err);
        if (c->rc != HP_OK || ev.kind == HP_EV_NEED_INPUT)
            return;
        if (ev.kind == HP_EV_END) {
            c->done = 1;
            return;
        }
        c->events++;
    }
}

PyDoc_STRVAR(walk_doc,
"walk($module, buffer, /)\n--\n\n"
"Walk every record (and sub-record) in C with the GIL released and return\n"
"the number of events; a speed probe for benchmarks.");

static PyObject *hprof_walk(PyObject *module, PyObject *buffer)
{
    hprof_state *st = hprof_get_state(module);
    walk_call call;
    pass ps;

    if (pass_open(&ps, buffer) < 0)
        return NULL;
    memset(&call, 0, sizeof call);
    call.parser = ps.parser;
    while (!call.done && call.rc == HP_OK) {
        if (pass_run(&ps, st, pass_feed(&ps), run_walk, &call) < 0 ||
            (call.rc == HP_OK && pass_checkpoint(&ps, NULL) < 0)) {
            pass_close(&ps);
            return NULL;
        }
    }
    pass_close(&ps);
    if (call.rc != HP_OK)
        return hprof_raise(st, &call.err);
    return PyLong_FromUnsignedLongLong(call.events);
}

static PyMethodDef stats_functions[] = {
    { "stats", (PyCFunction)(void (*)(void))hprof_stats, METH_VARARGS | METH_KEYWORDS, stats_doc },
    { "walk", (PyCFunction)hprof_walk, METH_O, walk_doc },
    { NULL, NULL, 0, NULL },
};

int hprof_stats_init(PyObject *module, hprof_state *st)
{
    (void)st;
    return PyModule_AddFunctions(module, stats_functions);
}
