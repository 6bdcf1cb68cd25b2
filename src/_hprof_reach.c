/* The Heap's reachability: paths from GC roots, dominators and retained
 * sizes (core/hp_reach.h), computed on first use without the GIL, under
 * the heap's lock so that concurrent first calls compute once, with Ctrl-C
 * checked between slices.  Path objects are made in Python (hprofkit.Heap.
 * path_to_root, hprofkit._reach) from the Routes heap._routes() gives. */
#include "_hprof_heap.h"

#include <string.h>

static const char *const semantics_names[] = { "hprofkit", "visualvm" };

int heap_semantics_of(PyObject *name)
{
    int k;
    if (name == NULL)
        return HP_REACH_HPROFKIT;
    for (k = 0; k < 2; k++)
        if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, semantics_names[k]) == 0)
            return k;
    PyErr_SetString(PyExc_ValueError, "semantics must be 'hprofkit' or 'visualvm'");
    return -1;
}

PyObject *heap_semantics_name(HeapIndex *heap) { return PyUnicode_FromString(semantics_names[heap->semantics]); }

/* Whether `level` is reached; read under the lock, not waiting for it (a
 * thread holding it is computing). */
static int reach_ready(HeapIndex *heap, int level)
{
    int ready = 0;
    if (PyThread_acquire_lock(heap->lock, NOWAIT_LOCK)) {
        ready = heap->reach_level >= level;
        PyThread_release_lock(heap->lock);
    }
    return ready;
}

/* One guarded stretch of core work (the dump is a mapping that may shrink). */
typedef struct {
    HeapIndex *heap;
    int level;
    const hp_reach_rule *rules;   /* routes: */
    size_t nrules;
    const uint32_t *targets;
    size_t ntargets;
    int flags;
    hp_reach_routes *routes;
    hp_bfs *bfs;                  /* full_search: */
    hp_error err;
    hp_code rc;
} reach_call;

static void compute(void *ctx)
{
    reach_call *c = ctx;
    HeapIndex *heap = c->heap;
    hp_checkpoint cp = { heap_interrupted, NULL };
    const uint64_t *by_class;
    c->rc = HP_OK;
    if (!heap->reach)
        /* One thread: the SIGBUS guard covers the calling thread's reads only. */
        c->rc = hp_reach_build(heap->index, heap->semantics | HP_REACH_ONE_THREAD, &hprof_raw_alloc, &cp,
                               &heap->reach, &c->err);
    if (c->rc == HP_OK && c->level >= REACH_DOMINATORS)
        c->rc = hp_reach_dominators(heap->reach, 1, &cp, &c->err);
    if (c->rc == HP_OK && c->level >= REACH_CLASSES)
        c->rc = hp_reach_class_retained(heap->reach, &cp, &by_class, &c->err);
    if (c->rc == HP_OK && heap->reach_level < c->level)
        heap->reach_level = c->level;
}

static void search(void *ctx)
{
    reach_call *c = ctx;
    hp_checkpoint cp = { heap_interrupted, NULL };
    c->rc = hp_reach_routes_find(c->heap->reach, c->rules, c->nrules, c->targets, c->ntargets, c->flags, &cp,
                                 c->routes, &c->err);
}

/* One search from the GC roots reaching everything reachable, no rules. */
static void full_search(void *ctx)
{
    reach_call *c = ctx;
    hp_checkpoint cp = { heap_interrupted, NULL };
    c->rc = hp_reach_paths(c->heap->reach, NULL, NULL, 0, 0, &cp, c->bfs, &c->err);
}

/* Runs fn(call) without the GIL under the SIGBUS guard (and the heap's lock
 * when `locked`); 0, or -1 with an exception set. */
static int run(HeapIndex *heap, void (*fn)(void *ctx), reach_call *call, int locked)
{
    uint64_t fault;
    int guard;
    call->heap = heap;
    heap_enter(heap);
    heap->running++;
    Py_BEGIN_ALLOW_THREADS
    if (locked)
        PyThread_acquire_lock(heap->lock, WAIT_LOCK);
    guard = hprof_guard_call(heap->view.buf, (size_t)heap->view.len, fn, call, &fault);
    if (locked)
        PyThread_release_lock(heap->lock);
    Py_END_ALLOW_THREADS
    heap->running--;
    heap_leave(heap);
    if (guard < 0) {
        hprof_raise_changed(heap->st, fault);
        return -1;
    }
    if (call->rc != HP_OK) {
        if (!PyErr_Occurred())
            hprof_raise(heap->st, &call->err);
        return -1;
    }
    return heap_index(heap) ? 0 : -1;
}

/* The heap's hp_reach computed up to `level` on first use, without the GIL
 * and under the lock; NULL with an exception set. */
hp_reach *heap_reach(HeapIndex *heap, int level)
{
    reach_call call;
    if (!heap_index(heap))
        return NULL;
    if (reach_ready(heap, level))
        return heap->reach;
    memset(&call, 0, sizeof call);
    call.level = level;
    return run(heap, compute, &call, 1) < 0 ? NULL : heap->reach;
}

static void mark_live(void *ctx)
{
    reach_call *c = ctx;
    hp_checkpoint cp = { heap_interrupted, NULL };
    c->rc = hp_reach_live(c->heap->reach, &cp, &c->err);
}

const uint64_t *heap_live(HeapIndex *heap)
{
    reach_call call;
    if (!heap_reach(heap, REACH_GRAPH))
        return NULL;
    memset(&call, 0, sizeof call);
    return run(heap, mark_live, &call, 1) < 0 ? NULL : hp_reach_live_bits(heap->reach);
}

int heap_members_of(PyObject *name, hp_members *out)
{
    static const char *const names[] = { "all", "live", "garbage" };
    int k;
    for (k = 0; k < 3; k++)
        if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, names[k]) == 0) {
            *out = (hp_members)k;
            return 0;
        }
    PyErr_SetString(PyExc_ValueError, "members must be 'all', 'live' or 'garbage'");
    return -1;
}

uint64_t *heap_keep(HeapIndex *heap, PyObject *name, int *ok)
{
    hp_members members;
    const uint64_t *live;
    uint64_t *keep, words, k;
    *ok = 0;
    if (heap_members_of(name, &members) < 0)
        return NULL;
    if (members == HP_MEMBERS_ALL) {
        *ok = 1;
        return NULL;
    }
    if (!(live = heap_live(heap)))
        return NULL;
    words = hp_bits_bytes(hp_heap_object_count(heap->index)) / 8;
    if (!(keep = PyMem_RawMalloc(words ? words * 8 : 8))) {
        PyErr_NoMemory();
        return NULL;
    }
    for (k = 0; k < words; k++)
        keep[k] = members == HP_MEMBERS_LIVE ? live[k] : ~live[k];
    *ok = 1;
    return keep;
}

int heap_full_search(HeapIndex *heap, hp_bfs *out)
{
    reach_call call;
    if (!heap_reach(heap, REACH_GRAPH))
        return -1;
    memset(&call, 0, sizeof call);
    call.bfs = out;
    return run(heap, full_search, &call, 0);
}

/* The index of a HeapObject / HeapClass of this heap; -1 with TypeError or
 * ValueError. */
static int object_index(HeapIndex *heap, PyObject *obj, uint32_t *out)
{
    hprof_state *st = heap->st;
    if (!PyObject_TypeCheck(obj, st->heap_object_type) && !PyObject_TypeCheck(obj, st->heap_class_type)) {
        PyErr_Format(PyExc_TypeError, "expected a HeapObject, not %.100s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (((HeapHandle *)obj)->heap != heap) {
        PyErr_SetString(PyExc_ValueError, "the object belongs to another heap");
        return -1;
    }
    *out = ((HeapHandle *)obj)->index;
    return 0;
}

int heap_object_index(HeapIndex *heap, PyObject *obj, uint32_t *out) { return object_index(heap, obj, out); }

uint32_t *heap_object_indices(HeapIndex *heap, PyObject *list, Py_ssize_t *count)
{
    Py_ssize_t n = PyList_GET_SIZE(list), k;
    uint32_t *indices = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *indices);
    if (!indices)
        return (uint32_t *)PyErr_NoMemory();
    for (k = 0; k < n; k++)
        if (object_index(heap, PyList_GET_ITEM(list, k), &indices[k]) < 0) {
            PyMem_Free(indices);
            return NULL;
        }
    *count = n;
    return indices;
}

static PyObject *retained(HeapIndex *heap, uint32_t index, int count)
{
    hp_reach *r = heap_reach(heap, REACH_DOMINATORS);
    if (!r)
        return NULL;
    if (count)
        return PyLong_FromUnsignedLong(hp_reach_retained_count(r, index));
    return PyLong_FromLongLong(hp_reach_retained(r, index));
}

PyObject *reach_retained_size(HeapIndex *heap, PyObject *obj)
{
    uint32_t index;
    return object_index(heap, obj, &index) < 0 ? NULL : retained(heap, index, 0);
}

PyObject *reach_retained_count(HeapIndex *heap, PyObject *obj)
{
    uint32_t index;
    return object_index(heap, obj, &index) < 0 ? NULL : retained(heap, index, 1);
}

PyObject *reach_object_retained(HeapHandle *o, int count) { return retained(o->heap, o->index, count); }

PyObject *reach_dominator(HeapIndex *heap, PyObject *obj)
{
    uint32_t index, d;
    hp_reach *r;
    if (object_index(heap, obj, &index) < 0 || !(r = heap_reach(heap, REACH_DOMINATORS)))
        return NULL;
    d = hp_reach_idom(r, index);
    return d == HP_NONE ? Py_NewRef(Py_None) : heap_handle(heap, d);
}

PyObject *reach_compute(HeapIndex *heap, PyObject *unused)
{
    (void)unused;
    if (!heap_reach(heap, REACH_DOMINATORS))
        return NULL;
    Py_RETURN_NONE;
}

PyObject *reach_top_retainers(HeapIndex *heap, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = { "n", NULL };
    Py_ssize_t n = 20, k, got;
    uint32_t *top;
    PyObject *list;
    hp_reach *r;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|n:top_retainers", keywords, &n))
        return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "n must be >= 0");
        return NULL;
    }
    if (!(r = heap_reach(heap, REACH_DOMINATORS)))
        return NULL;
    if ((uint64_t)n > hp_heap_object_count(heap->index))
        n = (Py_ssize_t)hp_heap_object_count(heap->index);
    top = PyMem_Malloc((size_t)(n ? n : 1) * 4);
    if (!top)
        return PyErr_NoMemory();
    got = (Py_ssize_t)hp_reach_top(r, (size_t)n, top);
    list = PyList_New(got);
    for (k = 0; list && k < got; k++) {
        PyObject *item = Py_BuildValue("(NL)", heap_handle(heap, top[k]), (long long)hp_reach_retained(r, top[k]));
        if (!item)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, item);
    }
    PyMem_Free(top);
    return list;
}

PyObject *reach_class_retained(HeapHandle *c, int count)
{
    const uint64_t *by_class;
    hp_error err;
    hp_reach *r = heap_reach(c->heap, REACH_CLASSES);
    if (!r)
        return NULL;
    hp_reach_class_retained(r, NULL, &by_class, &err); /* computed: returns it at once */
    return PyLong_FromUnsignedLongLong(count ? hp_reach_class_retained_counts(r)[c->ord] : by_class[c->ord]);
}

/* ---- paths ---- */

/* Rules from tuples (pattern, edge, class ordinal, thread serial, name
 * bytes or None); the names stay owned by `spec`. */
hp_reach_rule *reach_parse_rules(PyObject *spec, Py_ssize_t *count)
{
    Py_ssize_t n = PyList_GET_SIZE(spec), k;
    hp_reach_rule *rules = PyMem_Calloc((size_t)(n ? n : 1), sizeof *rules);
    if (!rules) {
        PyErr_NoMemory();
        return NULL;
    }
    for (k = 0; k < n; k++) {
        PyObject *name = NULL;
        unsigned int cls = 0, serial = 0;
        char *text = NULL;
        Py_ssize_t len = 0;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(spec, k), "iiIIO:rule", &rules[k].pattern, &rules[k].edge, &cls,
                              &serial, &name) ||
            (name != Py_None && PyBytes_AsStringAndSize(name, &text, &len) < 0)) {
            PyMem_Free(rules);
            return NULL;
        }
        rules[k].cls = cls;
        rules[k].thread_serial = serial;
        rules[k].name = text;
        rules[k].name_len = (size_t)len;
    }
    *count = n;
    return rules;
}

/* heap._routes(objects, rules, leaves): the paths of the objects, by one
 * search (hprofkit/_reach.py makes Path objects of them). */
PyObject *reach_routes(HeapIndex *heap, PyObject *args)
{
    PyObject *targets_list, *rules_list, *out = NULL;
    hp_reach_rule *rules = NULL;
    uint32_t *targets = NULL;
    Py_ssize_t ntargets = 0, nrules = 0;
    hp_reach_routes routes;
    int leaves = 0;
    reach_call call;
    memset(&routes, 0, sizeof routes);
    if (!PyArg_ParseTuple(args, "O!O!|p:_routes", &PyList_Type, &targets_list, &PyList_Type, &rules_list, &leaves))
        return NULL;
    if (!heap_reach(heap, REACH_GRAPH) || !(rules = reach_parse_rules(rules_list, &nrules)) ||
        !(targets = heap_object_indices(heap, targets_list, &ntargets)))
        goto done;
    memset(&call, 0, sizeof call);
    call.rules = rules;
    call.nrules = (size_t)nrules;
    call.targets = targets;
    call.ntargets = (size_t)ntargets;
    call.flags = leaves ? HP_PATHS_LEAVES : 0;
    call.routes = &routes;
    if (run(heap, search, &call, 0) < 0)
        goto done;
    out = routes_new(heap, &routes); /* takes the routes, even when it fails */
done:
    PyMem_Free(rules);
    PyMem_Free(targets);
    return out;
}
