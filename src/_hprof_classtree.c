/* The Heap's class tree (core/hp_reach_classtree.h): its dominator tree
 * folded by class path.  hprofkit.ClassTree (hprofkit/_classtree.py)
 * stands on the two private methods here: the nodes as columns, and the
 * objects of one node found again from the root down its path (nothing
 * per object is kept between calls). */
#include "_hprof_heap.h"

#include "core/hp_reach_classtree.h"

#include <stdlib.h>
#include <string.h>

typedef struct classtree_call {
    hp_reach *reach;
    hp_domfold fold;
    uint32_t node, top;
    uint32_t *members, count;
    hp_error err;
    hp_code rc;
} classtree_call;

static void fold(void *ctx)
{
    classtree_call *c = ctx;
    hp_checkpoint cp = { heap_interrupted, NULL };
    c->rc = hp_reach_class_tree(c->reach, c->top, &cp, &c->fold, &c->err);
}

static void members(void *ctx)
{
    classtree_call *c = ctx;
    hp_checkpoint cp = { heap_interrupted, NULL };
    c->rc = hp_reach_class_tree_members(c->reach, &c->fold, c->node, &c->members, &c->count, &cp, &c->err);
}

/* heap._class_tree(top): the nodes, parents first, as six bytes objects
 * of native integers: parent and key (uint32; HP_NONE for node 0),
 * objects, shallow and retained sizes (uint64), and each node's `top`
 * objects of largest retained size (uint32 indices, HP_NONE after the
 * last).  A key is a class ordinal c, C + c for the class object of class
 * c, 2C for objects of no known class. */
PyObject *classtree_nodes(HeapIndex *heap, PyObject *args)
{
    classtree_call call;
    PyObject *out = NULL;
    memset(&call, 0, sizeof call);
    if (!PyArg_ParseTuple(args, "I:_class_tree", &call.top))
        return NULL;
    if (call.top > HP_DOMFOLD_TOPS) {
        PyErr_Format(PyExc_ValueError, "top must be at most %d", HP_DOMFOLD_TOPS);
        return NULL;
    }
    if (!(call.reach = heap_reach(heap, REACH_DOMINATORS)))
        return NULL;
    if (heap_run(heap, fold, &call, &call.rc, &call.err) == 0) {
        Py_ssize_t n = call.fold.count;
        out = Py_BuildValue("(y#y#y#y#y#y#)", (const char *)call.fold.parent, n * 4, (const char *)call.fold.key,
                            n * 4, (const char *)call.fold.objects, n * 8, (const char *)call.fold.shallow, n * 8,
                            (const char *)call.fold.retained, n * 8, (const char *)call.fold.tops,
                            n * (Py_ssize_t)call.fold.top * 4);
    }
    hp_domfold_free(&call.fold);
    return out;
}

/* An object and its retained size, as the members are sorted. */
typedef struct ranked {
    int64_t retained;
    uint32_t v;
} ranked;

/* Largest retained first, ties by lower index. */
static int by_retained(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    return x->retained != y->retained ? (x->retained < y->retained ? 1 : -1) : (x->v > y->v) - (x->v < y->v);
}

/* heap._handles(indices): the objects of those indices (native uint32;
 * HP_NONE ends the list). */
PyObject *classtree_handles(HeapIndex *heap, PyObject *arg)
{
    Py_buffer view;
    PyObject *list;
    Py_ssize_t k, n;
    uint32_t count = 0;
    const uint32_t *index;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    index = view.buf;
    n = view.len / 4;
    if (!heap_index(heap)) {
        PyBuffer_Release(&view);
        return NULL;
    }
    count = hp_heap_object_count(heap_index(heap));
    for (k = 0; k < n && index[k] != HP_NONE; k++)
        if (index[k] >= count) {
            PyBuffer_Release(&view);
            return PyErr_Format(PyExc_ValueError, "no object of index %u", index[k]);
        }
    n = k;
    if ((list = PyList_New(n)))
        for (k = 0; k < n; k++) {
            PyObject *item = heap_handle(heap, index[k]);
            if (!item) {
                Py_CLEAR(list);
                break;
            }
            PyList_SET_ITEM(list, k, item);
        }
    PyBuffer_Release(&view);
    return list;
}

/* heap._class_tree_members(parents, keys, node, n): the objects of `node`
 * of the tree whose parent and key columns are given, largest retained
 * first, the n first. */
PyObject *classtree_members(HeapIndex *heap, PyObject *args)
{
    Py_buffer parents, keys;
    unsigned int node;
    Py_ssize_t n, k;
    classtree_call call;
    ranked *order = NULL;
    PyObject *list = NULL;
    if (!PyArg_ParseTuple(args, "y*y*In:_class_tree_members", &parents, &keys, &node, &n))
        return NULL;
    memset(&call, 0, sizeof call);
    if (parents.len != keys.len || parents.len % 4 || n < 0) {
        PyErr_SetString(PyExc_ValueError, "parents and keys must be as long, n >= 0");
        goto done;
    }
    for (k = 1; k < parents.len / 4; k++)
        if (((const uint32_t *)parents.buf)[k] >= (uint32_t)k) {
            PyErr_SetString(PyExc_ValueError, "a node's parent must come before it");
            goto done;
        }
    if (!(call.reach = heap_reach(heap, REACH_DOMINATORS)))
        goto done;
    call.fold.count = (uint32_t)(parents.len / 4);
    call.fold.parent = parents.buf;
    call.fold.key = keys.buf;
    call.fold.alloc = (hp_alloc){ malloc, realloc, free };
    call.node = node;
    if (heap_run(heap, members, &call, &call.rc, &call.err) < 0)
        goto done;
    if (!(order = PyMem_RawMalloc(((size_t)call.count + 1) * sizeof *order))) {
        PyErr_NoMemory();
        goto done;
    }
    for (k = 0; k < (Py_ssize_t)call.count; k++) {
        order[k].v = call.members[k];
        order[k].retained = hp_reach_retained(call.reach, call.members[k]);
    }
    if (call.count > 1)
        qsort(order, call.count, sizeof *order, by_retained);
    if (n > (Py_ssize_t)call.count)
        n = call.count;
    if (!(list = PyList_New(n)))
        goto done;
    for (k = 0; k < n; k++) {
        PyObject *item = heap_handle(heap, order[k].v);
        if (!item) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, k, item);
    }
done:
    PyMem_RawFree(order);
    free(call.members);
    PyBuffer_Release(&parents);
    PyBuffer_Release(&keys);
    return list;
}
