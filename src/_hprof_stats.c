/* stats() and walk(): whole-buffer passes of the core with the GIL released,
 * in slices so that Ctrl-C and progress reports get a turn. */
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

static PyObject *histogram(const hp_stats *s, const pass *ps)
{
    size_t n = hp_stats_row_count(s), i;
    PyObject *rows = PyList_New((Py_ssize_t)n);
    for (i = 0; rows && i < n; i++) {
        hp_class_row row;
        const uint8_t *name;
        size_t name_len;
        PyObject *item;
        hp_stats_row(s, i, &row);
        if (row.elem_type != 0 && row.elem_type != HP_T_OBJECT)
            item = Py_BuildValue("KiKKO", 0ULL, row.elem_type, (unsigned long long)row.instances,
                                 (unsigned long long)row.shallow_bytes, Py_None);
        else if (hp_stats_class_name(s, ps->view.buf, (uint64_t)ps->view.len, row.class_id, &name, &name_len))
            item = Py_BuildValue("KiKKy#", (unsigned long long)row.class_id, row.elem_type,
                                 (unsigned long long)row.instances, (unsigned long long)row.shallow_bytes,
                                 (const char *)name, (Py_ssize_t)name_len);
        else
            item = Py_BuildValue("KiKKO", (unsigned long long)row.class_id, row.elem_type,
                                 (unsigned long long)row.instances, (unsigned long long)row.shallow_bytes, Py_None);
        if (!item) {
            Py_CLEAR(rows);
            break;
        }
        PyList_SET_ITEM(rows, (Py_ssize_t)i, item);
    }
    return rows;
}

/* The histogram's size model: VisualVM's, whose guess of compressed oops on
 * 64-bit HotSpot dumps needs the object graph (system properties), so those
 * dumps are indexed (hp_heap) for it.  A dump the index refuses keeps
 * references at id size.  -1 with an exception (Ctrl-C) on failure. */
static int size_histogram(hp_stats *stats, pass *ps)
{
    const hp_header *h = hp_parser_header(ps->parser);
    hp_size_model model;
    if (!h)
        return 0;
    hp_stats_model(stats, ps->view.buf, (uint64_t)ps->view.len, &model);
    if (h->id_size == 8 && !model.raw) {
        hp_heap_options opt;
        hp_heap *heap = NULL;
        hp_error err;
        hp_code rc;
        memset(&opt, 0, sizeof opt);
        opt.alloc = &hprof_raw_alloc;
        opt.size_model = HP_SIZES_VISUALVM;
        Py_BEGIN_ALLOW_THREADS
        rc = hp_heap_build(ps->view.buf, (uint64_t)ps->view.len, &opt, &heap, &err);
        Py_END_ALLOW_THREADS
        if (rc == HP_OK)
            model = *hp_heap_size_model(heap);
        hp_heap_free(heap);
        if (PyErr_CheckSignals() < 0)
            return -1;
    }
    hp_stats_set_model(stats, &model);
    return 0;
}

PyDoc_STRVAR(stats_doc,
"stats($module, buffer, /, progress=None)\n--\n\n"
"Count records and sub-records per tag and build the class histogram of a\n"
"whole HPROF file in buffer.  progress(done, total) is called between\n"
"slices.  Returns a dict of plain values (see hprofkit.Stats).");

static PyObject *hprof_stats(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "", "progress", NULL };
    PyObject *buffer, *progress = Py_None, *result = NULL;
    hprof_state *st = hprof_get_state(module);
    hp_stats *stats = NULL;
    hp_error err;
    pass ps;
    int done = 0;

    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$O:stats", keywords, &buffer, &progress))
        return NULL;
    if (pass_open(&ps, buffer) < 0)
        return NULL;
    stats = hp_stats_new(&hprof_raw_alloc);
    if (!stats) {
        PyErr_NoMemory();
        goto done;
    }
    while (!done) {
        size_t n = pass_feed(&ps);
        hp_code rc;
        if (n >= HPROF_GIL_MINSIZE) {
            Py_BEGIN_ALLOW_THREADS
            rc = hp_stats_run(stats, ps.parser, &done, &err);
            Py_END_ALLOW_THREADS
        } else {
            rc = hp_stats_run(stats, ps.parser, &done, &err);
        }
        if (rc != HP_OK) {
            hprof_raise(st, &err);
            goto done;
        }
        if (pass_checkpoint(&ps, progress) < 0)
            goto done;
    }
    if (size_histogram(stats, &ps) < 0)
        goto done;
    {
        const hp_header *h = hp_parser_header(ps.parser);
        PyObject *records = tallies(hp_stats_records(stats));
        PyObject *subrecords = tallies(hp_stats_subrecords(stats));
        PyObject *rows = histogram(stats, &ps);
        if (records && subrecords && rows)
            result = Py_BuildValue("{s:s,s:i,s:i,s:K,s:n,s:I,s:O,s:O,s:O}", "magic", h->magic,
                                   "version", h->version, "id_size", h->id_size,
                                   "timestamp", (unsigned long long)h->timestamp, "size", ps.view.len,
                                   "heap_dumps", hp_stats_heap_dumps(stats), "records", records,
                                   "subrecords", subrecords, "histogram", rows);
        Py_XDECREF(records);
        Py_XDECREF(subrecords);
        Py_XDECREF(rows);
    }
done:
    hp_stats_free(stats);
    pass_close(&ps);
    return result;
}

PyDoc_STRVAR(walk_doc,
"walk($module, buffer, /)\n--\n\n"
"Walk every record (and sub-record) in C with the GIL released and return\n"
"the number of events; a speed probe for benchmarks.");

static PyObject *hprof_walk(PyObject *module, PyObject *buffer)
{
    hprof_state *st = hprof_get_state(module);
    unsigned long long events = 0;
    hp_code rc = HP_OK;
    hp_error err;
    pass ps;
    int done = 0;

    if (pass_open(&ps, buffer) < 0)
        return NULL;
    while (!done && rc == HP_OK) {
        pass_feed(&ps);
        Py_BEGIN_ALLOW_THREADS
        for (;;) {
            hp_event ev;
            rc = hp_parser_next(ps.parser, &ev, &err);
            if (rc != HP_OK || ev.kind == HP_EV_NEED_INPUT)
                break;
            if (ev.kind == HP_EV_END) {
                done = 1;
                break;
            }
            events++;
        }
        Py_END_ALLOW_THREADS
        if (rc == HP_OK && pass_checkpoint(&ps, NULL) < 0) {
            pass_close(&ps);
            return NULL;
        }
    }
    pass_close(&ps);
    if (rc != HP_OK)
        return hprof_raise(st, &err);
    return PyLong_FromUnsignedLongLong(events);
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
