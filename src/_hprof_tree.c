/* The Heap's dominator tree, navigable (core/hp_reach_tree.h): the
 * children of an object or of the virtual root, an object's place in the
 * tree, and group totals by the union rule.  Heap.dominator_roots and
 * HeapObject.dominated are here; hprofkit.Heap's dominator_of and
 * retained_by (hprofkit/_tree.py) stand on the private methods.
 *
 * The tree is built once, on first use, without the GIL and under the
 * heap's lock (as the dominators it stands on); reads of a built tree hold
 * the GIL only. */
#include "_hprof_heap.h"

#include "core/hp_reach_merged.h"
#include "core/hp_reach_tree.h"

#include <string.h>

/* One guarded stretch of core work. */
typedef struct {
    HeapIndex *heap;
    hp_reach *reach;
    const hp_domtree *tree;
    /* group totals: */
    int how;                  /* GROUP_* */
    const uint32_t *table;
    const uint32_t *group;    /* one per object: the table, or filled */
    uint32_t *filled;
    const uint64_t *keep;     /* the objects counted (NULL: all) */
    uint32_t ngroups;
    uint64_t *objects, *shallow, *retained;
    /* merged paths: */
    const hp_reach_rule *rules;
    size_t nrules;
    const uint32_t *targets;
    size_t ntargets;
    hp_merged *merged;
    hp_error err;
    hp_code rc;
} tree_call;

/* How _retained_by's table gives an object's group. */
enum { GROUP_BY_CLASS, GROUP_BY_OBJECT, GROUP_BY_HEAP };
static const char *const group_kinds[] = { "class", "object", "heap" };

static void build_tree(void *ctx)
{
    tree_call *c = ctx;
    hp_checkpoint cp = { heap_interrupted, NULL };
    c->rc = hp_reach_tree(c->reach, &cp, &c->tree, &c->err);
}

/* Runs fn(call) without the GIL under the heap's lock and the SIGBUS guard,
 * after the dominators; 0, or -1 with an exception set. */
static int run(HeapIndex *heap, void (*fn)(void *ctx), tree_call *call)
{
    call->heap = heap;
    if (!(call->reach = heap_reach(heap, REACH_DOMINATORS)))
        return -1;
    return heap_run(heap, fn, call, &call->rc, &call->err);
}

/* The heap's dominator tree, built on first use; NULL with an exception set. */
static const hp_domtree *heap_tree(HeapIndex *heap)
{
    tree_call call;
    memset(&call, 0, sizeof call);
    return run(heap, build_tree, &call) < 0 ? NULL : call.tree;
}

/* The n first children of `index` (HP_DOM_VIRTUAL: the virtual root's) as
 * a list of handles; n from the keyword argument n (None: all). */
static PyObject *children(HeapIndex *heap, uint32_t index, PyObject *args, PyObject *kwargs, const char *format)
{
    static char *keywords[] = { "n", NULL };
    PyObject *limit = Py_None, *list;
    uint32_t count, k;
    const uint32_t *kids;
    const hp_domtree *tree;
    Py_ssize_t n = PY_SSIZE_T_MAX;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, keywords, &limit))
        return NULL;
    if (limit != Py_None) {
        n = PyNumber_AsSsize_t(limit, PyExc_OverflowError);
        if (n == -1 && PyErr_Occurred())
            return NULL;
        if (n < 0) {
            PyErr_SetString(PyExc_ValueError, "n must be >= 0 (or None for all)");
            return NULL;
        }
    }
    if (!(tree = heap_tree(heap)))
        return NULL;
    kids = hp_domtree_children(tree, index, &count);
    if ((Py_ssize_t)count > n)
        count = (uint32_t)n;
    if (!(list = PyList_New(count)))
        return NULL;
    for (k = 0; k < count; k++) {
        PyObject *item = heap_handle(heap, kids[k]);
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, k, item);
    }
    return list;
}

PyObject *tree_dominator_roots(HeapIndex *heap, PyObject *args, PyObject *kwargs)
{
    return children(heap, HP_DOM_VIRTUAL, args, kwargs, "|O:dominator_roots");
}

PyObject *tree_dominated(HeapHandle *o, PyObject *args, PyObject *kwargs)
{
    return children(o->heap, o->index, args, kwargs, "|O:dominated");
}

/* heap._tree_parent(obj): obj's immediate dominator, True when only the
 * virtual root dominates it, False when it is unreachable. */
PyObject *tree_parent(HeapIndex *heap, PyObject *obj)
{
    uint32_t index, parent;
    hp_reach *r;
    if (heap_object_index(heap, obj, &index) < 0 || !(r = heap_reach(heap, REACH_DOMINATORS)))
        return NULL;
    parent = hp_reach_tree_parent(r, index);
    if (parent == HP_DOM_VIRTUAL)
        Py_RETURN_TRUE;
    if (parent == HP_NONE)
        Py_RETURN_FALSE;
    return heap_handle(heap, parent);
}

/* ---- group totals ---- */

/* Fills c->filled (one per object) from the table of mode c->how. */
static void fill_groups(tree_call *c)
{
    const hp_heap *h = c->heap->index;
    uint32_t n = hp_heap_object_count(h), nc = hp_heap_class_count(h), v;
    for (v = 0; v < n; v++) {
        hp_object o;
        uint32_t cls;
        if (c->keep && !hp_bit(c->keep, v)) {
            c->filled[v] = HP_NONE;
        } else if (c->how == GROUP_BY_OBJECT) {
            c->filled[v] = c->table[v];
        } else if (c->how == GROUP_BY_HEAP) {
            hp_heap_object(h, v, &o);
            c->filled[v] = c->table[o.heap >= 0 && o.heap < 256 ? o.heap : 256];
        } else if (hp_heap_object_kind(h, v) == HP_KIND_CLASS) {
            hp_heap_object(h, v, &o);
            c->filled[v] = o.self_ord == HP_NONE ? HP_NONE : c->table[nc + o.self_ord];
        } else {
            cls = hp_heap_object_class(h, v);
            c->filled[v] = cls == HP_NONE ? HP_NONE : c->table[cls];
        }
    }
}

static void group_totals(void *ctx)
{
    tree_call *c = ctx;
    hp_checkpoint cp = { heap_interrupted, NULL };
    if (c->filled)
        fill_groups(c);
    c->rc = hp_reach_group_totals(c->reach, c->group, c->ngroups, c->objects, c->shallow, c->retained, &cp,
                                  &c->err);
}

/* The number of table entries mode `how` needs. */
static Py_ssize_t table_entries(const hp_heap *h, int how)
{
    switch (how) {
    case GROUP_BY_OBJECT: return (Py_ssize_t)hp_heap_object_count(h);
    case GROUP_BY_HEAP: return 257;
    default: return 2 * (Py_ssize_t)hp_heap_class_count(h);
    }
}

/* heap._retained_by(how, table, ngroups, members): (objects, shallow sizes,
 * retained sizes) of groups 0..ngroups-1, each as ngroups native uint64 in
 * bytes, over the objects `members` ('all', 'live', 'garbage') counts.
 * `table` (a buffer of native uint32: a group, HP_NONE for none, or'ed
 * with HP_GROUP_SHADOW for a member that only hides what it dominates)
 * gives the group of an object: how "class": entries [0, C) by the class
 * ordinal of instances and arrays, [C, 2C) by the ordinal of the class a
 * class object is; "object": one per object, by index; "heap": one per
 * Android heap number (0..255), then one for objects without a heap.
 * Memory: 4 B an object while it runs (but for "object" of all members). */
PyObject *tree_retained_by(HeapIndex *heap, PyObject *args)
{
    PyObject *how_name, *table, *members, *out = NULL, *parts[3] = { NULL, NULL, NULL };
    unsigned int ngroups;
    Py_buffer view;
    tree_call call;
    const hp_heap *h;
    uint64_t *keep = NULL;
    int k, ok;
    if (!PyArg_ParseTuple(args, "UOIU:_retained_by", &how_name, &table, &ngroups, &members))
        return NULL;
    memset(&call, 0, sizeof call);
    call.how = -1;
    for (k = 0; k < 3; k++)
        if (PyUnicode_CompareWithASCIIString(how_name, group_kinds[k]) == 0)
            call.how = k;
    if (call.how < 0) {
        PyErr_SetString(PyExc_ValueError, "how must be 'class', 'object' or 'heap'");
        return NULL;
    }
    if (ngroups >= HP_GROUP_SHADOW) {
        PyErr_SetString(PyExc_ValueError, "too many groups");
        return NULL;
    }
    if (!(h = heap_index(heap)) || (!(keep = heap_keep(heap, members, &ok)) && !ok))
        return NULL;
    if (PyObject_GetBuffer(table, &view, PyBUF_SIMPLE) < 0) {
        PyMem_RawFree(keep);
        return NULL;
    }
    if (view.len != table_entries(h, call.how) * 4) {
        PyErr_Format(PyExc_ValueError, "a %s table holds %zd uint32 entries, not %zd bytes", group_kinds[call.how],
                     table_entries(h, call.how), view.len);
        goto done;
    }
    for (k = 0; k < 3; k++)
        if (!(parts[k] = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)ngroups * 8)))
            goto done;
    call.table = call.group = view.buf;
    call.keep = keep;
    if (call.how != GROUP_BY_OBJECT || keep) {
        if (!(call.filled = PyMem_RawMalloc(((size_t)hp_heap_object_count(h) + 1) * 4))) {
            PyErr_NoMemory();
            goto done;
        }
        call.group = call.filled;
    }
    call.ngroups = ngroups;
    call.objects = (uint64_t *)PyBytes_AS_STRING(parts[0]);
    call.shallow = (uint64_t *)PyBytes_AS_STRING(parts[1]);
    call.retained = (uint64_t *)PyBytes_AS_STRING(parts[2]);
    if (run(heap, group_totals, &call) == 0)
        out = PyTuple_Pack(3, parts[0], parts[1], parts[2]);
    PyMem_RawFree(call.filled);
done:
    for (k = 0; k < 3; k++)
        Py_XDECREF(parts[k]);
    PyBuffer_Release(&view);
    PyMem_RawFree(keep);
    return out;
}

/* heap._heap_names(): the names of Android heaps 0..255 (None where the
 * dump names none), the keys of retained_by("heap"). */
PyObject *tree_heap_names(HeapIndex *heap, PyObject *unused)
{
    PyObject *list;
    int k;
    (void)unused;
    if (!heap_index(heap) || !(list = PyList_New(256)))
        return NULL;
    for (k = 0; k < 256; k++) {
        PyObject *name = heap_android_name(heap, k);
        if (!name) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, k, name);
    }
    return list;
}

/* ---- merged paths ---- */

static void merge_paths(void *ctx)
{
    tree_call *c = ctx;
    hp_checkpoint cp = { heap_interrupted, NULL };
    hp_reach_matcher *m = NULL;
    hp_bfs bfs;
    memset(&bfs, 0, sizeof bfs);
    c->rc = hp_reach_matcher_new(c->reach, c->rules, c->nrules, &cp, &m, &c->err);
    /* One full search: each target gets the path a search for it alone
     * gives, and every vertex on the way its parent for the folding. */
    if (c->rc == HP_OK)
        c->rc = hp_reach_paths(c->reach, m, NULL, 0, 0, &cp, &bfs, &c->err);
    if (c->rc == HP_OK)
        c->rc = hp_reach_merged(c->reach, &bfs, c->targets, c->ntargets, &cp, c->merged, &c->err);
    if (bfs.alloc.free_fn)
        hp_bfs_free(&bfs);
    hp_reach_matcher_free(m);
}

/* A node's reference: (ref_type, name) as a Hop names it, "[]" for the
 * elements of an array folded into one. */
static int node_reference(HeapIndex *heap, const hp_merged *m, uint32_t k, PyObject **type, PyObject **name)
{
    hp_ref ref;
    switch (m->kind[k]) {
    case HP_MERGED_ROOT:
        *type = PyUnicode_FromString("ROOT");
        *name = heap_root_kind((int)m->slot[k]);
        break;
    case HP_REF_ELEMENT:
        *type = PyUnicode_FromString("ARRAY_ENTRY");
        *name = PyUnicode_FromString("[]");
        break;
    case HP_REF_CLASS:
        *type = PyUnicode_FromString("INSTANCE_FIELD");
        *name = PyUnicode_FromString("<class>");
        break;
    default:
        memset(&ref, 0, sizeof ref);
        ref.kind = m->kind[k];
        ref.slot = m->slot[k];
        *type = PyUnicode_FromString(ref.kind == HP_REF_FIELD ? "INSTANCE_FIELD" : "STATIC_FIELD");
        *name = heap_ref_name(heap, m->holder[k], &ref);
    }
    return *type && *name ? 0 : -1;
}

/* The nodes as tuples (parent, ref_type, name, class ordinal or None, is a
 * class object, objects, shallow, retained, targets, target shallow). */
static PyObject *merged_nodes(HeapIndex *heap, const hp_merged *m)
{
    PyObject *list = PyList_New(m->count);
    uint32_t k;
    for (k = 0; list && k < m->count; k++) {
        PyObject *type = NULL, *name = NULL, *node = NULL;
        if (node_reference(heap, m, k, &type, &name) == 0)
            node = Py_BuildValue("(NNNNNKKKKK)",
                                 m->parent[k] == HP_NONE ? Py_NewRef(Py_None) : PyLong_FromUnsignedLong(m->parent[k]),
                                 type, name,
                                 m->cls[k] == HP_NONE ? Py_NewRef(Py_None) : PyLong_FromUnsignedLong(m->cls[k]),
                                 PyBool_FromLong(m->class_object[k]), (unsigned long long)m->objects[k],
                                 (unsigned long long)m->shallow[k], (unsigned long long)m->retained[k],
                                 (unsigned long long)m->targets[k], (unsigned long long)m->target_shallow[k]);
        else {
            Py_XDECREF(type);
            Py_XDECREF(name);
        }
        if (!node)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, node);
    }
    return list;
}

/* heap._merged_paths(objs, rules): ([node tuples, parents first], targets
 * reached, targets not reached); one search, the dominators for the
 * retained sizes.  hprofkit/_tree.py makes the MergedPaths tree. */
PyObject *tree_merged_paths(HeapIndex *heap, PyObject *args)
{
    PyObject *targets_list, *rules_list, *nodes = NULL, *out = NULL;
    hp_reach_rule *rules = NULL;
    uint32_t *targets = NULL;
    Py_ssize_t ntargets = 0, nrules = 0;
    hp_merged merged;
    tree_call call;
    memset(&merged, 0, sizeof merged);
    if (!PyArg_ParseTuple(args, "O!O!:_merged_paths", &PyList_Type, &targets_list, &PyList_Type, &rules_list))
        return NULL;
    if (!(rules = reach_parse_rules(rules_list, &nrules)) ||
        !(targets = heap_object_indices(heap, targets_list, &ntargets)))
        goto done;
    memset(&call, 0, sizeof call);
    call.rules = rules;
    call.nrules = (size_t)nrules;
    call.targets = targets;
    call.ntargets = (size_t)ntargets;
    call.merged = &merged;
    if (run(heap, merge_paths, &call) < 0 || !(nodes = merged_nodes(heap, &merged)))
        goto done;
    out = Py_BuildValue("(NII)", nodes, merged.reached, merged.unreached);
done:
    hp_merged_free(&merged);
    PyMem_Free(targets);
    PyMem_Free(rules);
    return out;
}
