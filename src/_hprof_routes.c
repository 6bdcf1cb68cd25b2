/* The paths of one search (heap._routes), kept as the core's tree of their
 * vertices (hp_reach_routes) and named only when asked: a Routes object per
 * search, a Route per target, a sequence of raw hops whose items are made
 * on access.  hprofkit.Path (hprofkit/_reach.py) wraps them.  So a path of
 * ten million hops costs its tree's 13 B a hop, not ten million tuples, and
 * naming a hop is O(1) amortised (the core's namer tables a large holder:
 * an array many paths cross is scanned once, not once per path). */
#include "_hprof_heap.h"
#include "_hprof_parts.h"

#include <string.h>

typedef struct {
    PyObject_HEAD
    HeapIndex *heap;
    hp_reach_routes rt;
    hp_reach_namer *namer;   /* made on the first hop named */
} RoutesObject;

typedef struct {
    PyObject_HEAD
    RoutesObject *routes;
    uint32_t *nodes;         /* the path's nodes in the tree, root first (PyMem) */
    uint32_t len;            /* nodes */
    uint32_t thread;         /* the thread object a LOCAL hop leads from, or HP_NONE */
    uint32_t record;         /* the root's GC root record */
} RouteObject;

PyObject *routes_new(HeapIndex *heap, hp_reach_routes *rt)
{
    RoutesObject *self = PyObject_GC_New(RoutesObject, heap->st->routes_type);
    if (!self) {
        hp_reach_routes_free(rt);
        return NULL;
    }
    self->heap = (HeapIndex *)Py_NewRef(heap);
    self->rt = *rt;
    self->namer = NULL;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

/* The reach of a heap still open, or NULL with ValueError. */
static const hp_reach *live_reach(RoutesObject *self)
{
    if (!heap_index(self->heap))
        return NULL;
    return self->heap->reach;
}

/* ---- naming hops ---- */

static const char *const ref_types[] = { "INSTANCE_FIELD", "ARRAY_ENTRY", "STATIC_FIELD", "STATIC_FIELD",
                                         "INSTANCE_FIELD" };

/* One hop (ref_type, holder, name, target) as a tuple; steals the references. */
static PyObject *make_hop(const char *type, PyObject *holder, PyObject *name, PyObject *target)
{
    PyObject *kind = PyUnicode_InternFromString(type), *t = NULL;
    if (kind && holder && name && target)
        t = PyTuple_Pack(4, kind, holder, name, target);
    Py_XDECREF(kind);
    Py_XDECREF(holder);
    Py_XDECREF(name);
    Py_XDECREF(target);
    return t;
}

typedef struct {
    hp_reach_namer *namer;
    uint32_t v, pos;
    hp_ref ref;
    int found;
} name_call;

static void name_edge(void *ctx)
{
    name_call *c = ctx;
    c->found = hp_reach_namer_edge(c->namer, c->v, c->pos, &c->ref);
}

/* The name of the reference from holder v at edge `pos`, as
 * HeapObject.references() names it; *type its hop's ref_type. */
static PyObject *edge_name(RoutesObject *routes, const hp_reach *r, uint32_t v, uint32_t pos, const char **type)
{
    name_call call;
    if (!routes->namer && !(routes->namer = hp_reach_namer_new(r)))
        return PyErr_NoMemory();
    call.namer = routes->namer;
    call.v = v;
    call.pos = pos;
    call.found = 0;
    if (heap_guard(routes->heap, name_edge, &call) < 0)
        return NULL;
    if (call.found < 0)
        return PyErr_NoMemory();
    if (call.found == 0) {
        PyErr_SetString(PyExc_SystemError, "a path edge is missing from the graph");
        return NULL;
    }
    *type = ref_types[call.ref.kind];
    if (call.ref.kind == HP_REF_CLASS)
        return PyUnicode_FromString("<class>");
    if (call.ref.kind == HP_REF_FIELD)
        return heap_field_slot_name(routes->heap, hp_heap_object_class(routes->heap->index, v), call.ref.slot);
    return heap_ref_name(routes->heap, v, &call.ref);
}

/* The hop into tree node k (not a root) from its parent. */
static PyObject *edge_hop(RoutesObject *routes, const hp_reach *r, uint32_t k)
{
    const hp_bfs_tree *t = &routes->rt.tree;
    uint32_t holder = t->vertex[t->parent[k]];
    const char *type = NULL;
    PyObject *name = edge_name(routes, r, holder, t->edge[k], &type);
    if (!name)
        return NULL;
    return make_hop(type, heap_handle(routes->heap, holder), name, heap_handle(routes->heap, t->vertex[k]));
}

/* The ROOT hop of root node `first` (local = 0), or the LOCAL hop from its
 * thread (local = 1); thread and record as root_thread gives them. */
static PyObject *root_hop(RoutesObject *routes, uint32_t first, uint32_t thread, uint32_t record, int local)
{
    HeapIndex *heap = routes->heap;
    uint32_t v = routes->rt.tree.vertex[first];
    hp_root root;
    hp_heap_root(heap->index, record, &root);
    if (!local)
        return make_hop("ROOT", Py_NewRef(Py_None), heap_root_kind(root.kind),
                        heap_handle(heap, thread != HP_NONE ? thread : v));
    /* A local: the thread holds it, as LeakCanary prints it. */
    return make_hop("LOCAL", heap_handle(heap, thread), heap_stack_frame(heap, &root), heap_handle(heap, v));
}

/* The thread object a LOCAL hop leads from, for the root of tree node
 * `first` (HP_NONE: the root's object hangs from no thread); *record: the
 * root's GC root record. */
static uint32_t root_thread(RoutesObject *self, const hp_reach *r, uint32_t first, uint32_t *record)
{
    const hp_bfs_tree *t = &self->rt.tree;
    uint32_t thread;
    hp_root root;
    *record = hp_reach_root_record(r, t->edge[first]);
    hp_heap_root(self->heap->index, *record, &root);
    thread = root.kind == HP_SUB_ROOT_JAVA_FRAME || root.kind == HP_SUB_ROOT_JNI_LOCAL
                 ? hp_reach_thread_object(r, root.thread_serial) : HP_NONE;
    return thread == t->vertex[first] ? HP_NONE : thread; /* a thread's own frame holds it: no LOCAL hop */
}

static Py_ssize_t routes_len(RoutesObject *self) { return (Py_ssize_t)self->rt.tree.ntargets; }

/* Target number `i` (negative: from the end), or -1 with IndexError. */
static Py_ssize_t target_number(RoutesObject *self, Py_ssize_t i)
{
    if (i < 0)
        i += routes_len(self);
    if (i < 0 || i >= routes_len(self)) {
        PyErr_SetString(PyExc_IndexError, "target number out of range");
        return -1;
    }
    return i;
}

static PyObject *routes_status(RoutesObject *self, PyObject *arg)
{
    Py_ssize_t i = PyLong_AsSsize_t(arg);
    if ((i == -1 && PyErr_Occurred()) || (i = target_number(self, i)) < 0)
        return NULL;
    return Py_BuildValue("(ii)", self->rt.tier[i], self->rt.rule[i]);
}

static PyObject *routes_route(RoutesObject *self, PyObject *arg)
{
    const hp_reach *r = live_reach(self);
    Py_ssize_t i = PyLong_AsSsize_t(arg);
    const hp_bfs_tree *t = &self->rt.tree;
    RouteObject *route;
    uint32_t node, len;
    if (!r || (i == -1 && PyErr_Occurred()) || (i = target_number(self, i)) < 0)
        return NULL;
    node = t->node[i];
    if (node == HP_NONE)
        Py_RETURN_NONE;
    len = hp_bfs_tree_path(t, node, NULL, 0);
    route = PyObject_GC_New(RouteObject, self->heap->st->route_type);
    if (!route)
        return NULL;
    route->routes = (RoutesObject *)Py_NewRef(self);
    route->nodes = PyMem_Malloc((size_t)len * 4);
    route->len = len;
    PyObject_GC_Track(route);
    if (!route->nodes) {
        Py_DECREF(route);
        return PyErr_NoMemory();
    }
    hp_bfs_tree_path(t, node, route->nodes, len);
    route->thread = root_thread(self, r, route->nodes[0], &route->record);
    return (PyObject *)route;
}

/* A copy of a uint32 array as bytes (memoryview(...).cast("I") reads it). */
static PyObject *u32_bytes(const uint32_t *data, size_t n)
{
    return PyBytes_FromStringAndSize((const char *)data, (Py_ssize_t)(n * 4));
}

static PyObject *routes_parents(RoutesObject *self, PyObject *unused)
{
    (void)unused;
    return u32_bytes(self->rt.tree.parent, self->rt.tree.count);
}

static PyObject *routes_target_nodes(RoutesObject *self, PyObject *unused)
{
    (void)unused;
    return u32_bytes(self->rt.tree.node, self->rt.tree.ntargets);
}

/* ---- hop groups: the nodes whose paths are named alike ---- */

/* A group: the nodes under one parent group whose hop from their parent
 * has the same kind and slot of reference and the same holder's and
 * target's classes, so the same name (a million elements of one array: one
 * group).  A root node is a group of its own. */
typedef struct {
    uint64_t k0, k1;   /* kind << 32 | slot; holder's class key << 32 | target's */
    uint32_t parent;   /* the parent node's group */
    uint32_t group;    /* HP_NONE: an empty slot */
} group_slot;

typedef struct {
    RoutesObject *routes;
    group_slot *slots;
    size_t cap;                  /* a power of two, at most half used */
    uint32_t *node_group;        /* per node */
    uint32_t *group_parent;      /* per group: its parent group, HP_NONE for a root's */
    uint32_t *group_node;        /* per group: one of its nodes */
    uint32_t ngroups, groups_cap;
    int found;                   /* 1; as hp_reach_namer_edge: -1 no memory, 0 a missing edge */
} grouping;

/* What names an object in a hop: its class, or for a class object the
 * class it is (tagged by the high bit). */
static uint32_t class_key(const hp_heap *h, uint32_t v)
{
    hp_object o;
    if (hp_heap_object_kind(h, v) != HP_KIND_CLASS)
        return hp_heap_object_class(h, v);
    hp_heap_object(h, v, &o);
    return o.self_ord | 0x80000000u;
}

static size_t slot_hash(uint32_t parent, uint64_t k0, uint64_t k1)
{
    uint64_t x = k0 * 0x9E3779B97F4A7C15u ^ k1 * 0xC2B2AE3D27D4EB4Fu ^ (uint64_t)parent * 0x165667B19E3779F9u;
    return (size_t)(x ^ x >> 31);
}

/* A new group (parent group, one node); 0 when out of memory. */
static int new_group(grouping *g, uint32_t parent, uint32_t node)
{
    if (g->ngroups == g->groups_cap) {
        uint32_t cap = g->groups_cap ? g->groups_cap * 2 : 1024;
        uint32_t *p = PyMem_RawRealloc(g->group_parent, (size_t)cap * 4);
        uint32_t *n = p ? PyMem_RawRealloc(g->group_node, (size_t)cap * 4) : NULL;
        if (p)
            g->group_parent = p;
        if (!n)
            return 0;
        g->group_node = n;
        g->groups_cap = cap;
    }
    g->group_parent[g->ngroups] = parent;
    g->group_node[g->ngroups++] = node;
    return 1;
}

/* Doubles the table; 0 when out of memory. */
static int grow_slots(grouping *g)
{
    size_t cap = g->cap ? g->cap * 2 : 4096, k;
    group_slot *slots = PyMem_RawMalloc(cap * sizeof *slots);
    if (!slots)
        return 0;
    for (k = 0; k < cap; k++)
        slots[k].group = HP_NONE;
    for (k = 0; k < g->cap; k++) {
        size_t at;
        if (g->slots[k].group == HP_NONE)
            continue;
        at = slot_hash(g->slots[k].parent, g->slots[k].k0, g->slots[k].k1) & (cap - 1);
        while (slots[at].group != HP_NONE)
            at = (at + 1) & (cap - 1);
        slots[at] = g->slots[k];
    }
    PyMem_RawFree(g->slots);
    g->slots = slots;
    g->cap = cap;
    return 1;
}

/* The group of (parent group, hop keys), made with `node` when new; HP_NONE when out of memory. */
static uint32_t group_of(grouping *g, uint32_t parent, uint64_t k0, uint64_t k1, uint32_t node)
{
    size_t at;
    if ((g->ngroups + 1) * 2 > g->cap && !grow_slots(g))
        return HP_NONE;
    at = slot_hash(parent, k0, k1) & (g->cap - 1);
    for (; g->slots[at].group != HP_NONE; at = (at + 1) & (g->cap - 1))
        if (g->slots[at].parent == parent && g->slots[at].k0 == k0 && g->slots[at].k1 == k1)
            return g->slots[at].group;
    if (!new_group(g, parent, node))
        return HP_NONE;
    g->slots[at].parent = parent;
    g->slots[at].k0 = k0;
    g->slots[at].k1 = k1;
    g->slots[at].group = g->ngroups - 1;
    return g->ngroups - 1;
}

/* Groups every node, parents first (the tree lists a parent before its children). */
static void group_nodes(void *ctx)
{
    grouping *g = ctx;
    const hp_bfs_tree *t = &g->routes->rt.tree;
    const hp_heap *h = g->routes->heap->index;
    uint32_t k;
    for (k = 0; k < t->count && g->found == 1; k++) {
        uint32_t holder, group;
        hp_ref ref;
        if (t->parent[k] == HP_NONE) {
            group = new_group(g, HP_NONE, k) ? g->ngroups - 1 : HP_NONE;
        } else {
            holder = t->vertex[t->parent[k]];
            g->found = hp_reach_namer_edge(g->routes->namer, holder, t->edge[k], &ref);
            /* An array element's hop is named "[x]" whatever its index. */
            group = group_of(g, g->node_group[t->parent[k]],
                             (uint64_t)(uint32_t)ref.kind << 32 | (ref.kind == HP_REF_ELEMENT ? 0 : ref.slot),
                             (uint64_t)class_key(h, holder) << 32 | class_key(h, t->vertex[k]), k);
        }
        if (group == HP_NONE && g->found == 1)
            g->found = -1;
        g->node_group[k] = group;
    }
}

/* routes.hop_groups(max_tier): (parents, nodes, counts, others): per group
 * of nodes named alike, its parent group (0xFFFFFFFF for a root's) and one
 * of its nodes, as native uint32 bytes, and the targets of tier <= max_tier
 * whose node is in it, as native uint64 bytes; others, the targets of a
 * higher tier.  A parent group comes before its children.  Naming each
 * group once names every target's path (hprofkit.heapdiff folds them). */
static PyObject *routes_hop_groups(RoutesObject *self, PyObject *arg)
{
    const hp_reach *r = live_reach(self);
    const hp_bfs_tree *t = &self->rt.tree;
    long max_tier = PyLong_AsLong(arg);
    PyObject *counts = NULL, *out = NULL;
    unsigned long long others = 0;
    grouping g;
    size_t i;
    if (!r || (max_tier == -1 && PyErr_Occurred()))
        return NULL;
    if (!self->namer && !(self->namer = hp_reach_namer_new(r)))
        return PyErr_NoMemory();
    memset(&g, 0, sizeof g);
    g.routes = self;
    g.found = 1;
    if (!(g.node_group = PyMem_RawMalloc((size_t)(t->count ? t->count : 1) * 4)))
        return PyErr_NoMemory();
    if (heap_guard(self->heap, group_nodes, &g) < 0)
        goto done;
    if (g.found != 1) {
        if (g.found < 0)
            PyErr_NoMemory();
        else
            PyErr_SetString(PyExc_SystemError, "a path edge is missing from the graph");
        goto done;
    }
    if (!(counts = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)g.ngroups * 8)))
        goto done;
    memset(PyBytes_AS_STRING(counts), 0, (size_t)g.ngroups * 8);
    for (i = 0; i < t->ntargets; i++) {
        if (self->rt.tier[i] > max_tier || t->node[i] == HP_NONE)
            others++;
        else
            ((uint64_t *)(void *)PyBytes_AS_STRING(counts))[g.node_group[t->node[i]]]++;
    }
    out = Py_BuildValue("(NNOK)", u32_bytes(g.group_parent, g.ngroups), u32_bytes(g.group_node, g.ngroups), counts,
                        others);
done:
    Py_XDECREF(counts);
    PyMem_RawFree(g.slots);
    PyMem_RawFree(g.node_group);
    PyMem_RawFree(g.group_parent);
    PyMem_RawFree(g.group_node);
    return out;
}

/* ---- last hops: the targets by the reference their path ends with ---- */

/* Keys of a root node's last hop (k0's kind half): a GC root of that record kind, or a
 * thread's local (LOCAL: the hop from the thread). */
#define LAST_ROOT 0xFFFFFFF0u
#define LAST_LOCAL 0xFFFFFFF1u

typedef struct {
    grouping g;
    const uint64_t *weights;     /* per target, or NULL (each weighs 0) */
    uint32_t *target_group;      /* per target: its group, HP_NONE for a tier above max_tier */
    long max_tier;
} last_hops_call;

static void group_last_hops(void *ctx)
{
    last_hops_call *c = ctx;
    grouping *g = &c->g;
    RoutesObject *self = g->routes;
    const hp_bfs_tree *t = &self->rt.tree;
    const hp_reach *r = self->heap->reach;
    const hp_heap *h = self->heap->index;
    size_t i;
    for (i = 0; i < t->ntargets && g->found == 1; i++) {
        uint32_t k = t->node[i], record, group;
        uint64_t k0, k1 = 0;
        hp_ref ref;
        c->target_group[i] = HP_NONE;
        if (self->rt.tier[i] > c->max_tier || k == HP_NONE)
            continue;
        if (t->parent[k] != HP_NONE) {
            uint32_t holder = t->vertex[t->parent[k]];
            g->found = hp_reach_namer_edge(self->namer, holder, t->edge[k], &ref);
            k0 = (uint64_t)(uint32_t)ref.kind << 32 | (ref.kind == HP_REF_ELEMENT ? 0 : ref.slot);
            k1 = class_key(h, holder);
        } else if (root_thread(self, r, k, &record) != HP_NONE) {
            k0 = (uint64_t)LAST_LOCAL << 32;
        } else {
            hp_root root;
            hp_heap_root(h, record, &root);
            k0 = (uint64_t)LAST_ROOT << 32 | (uint32_t)root.kind;
        }
        if (g->found != 1)
            break;
        if ((group = group_of(g, HP_NONE, k0, k1, k)) == HP_NONE) {
            g->found = -1;
            break;
        }
        c->target_group[i] = group;
    }
}

/* routes.last_hops(weights, max_tier): (nodes, counts, sums, others): the targets of tier
 * <= max_tier grouped by the hop their path ends with (the same kind and slot of reference
 * from a holder of the same class, any array element alike; for a target that is a GC
 * root, its root's kind, or its thread's LOCAL hop): per group one of its nodes (native
 * uint32 bytes, routes.node_hops names it), its targets and the sum of their weights (a
 * buffer of native uint64, one per target, or None: 0 each; native uint64 bytes); others:
 * [(targets, weight sum)] of each tier.  Linear in the targets; memory: 4 B a target and
 * the groups.  hprofkit._waste folds heap.waste()'s holders from it. */
static PyObject *routes_last_hops(RoutesObject *self, PyObject *args)
{
    const hp_reach *r = live_reach(self);
    const hp_bfs_tree *t = &self->rt.tree;
    PyObject *weights_obj, *counts = NULL, *sums = NULL, *others = NULL, *out = NULL;
    Py_buffer view = { 0 };
    uint64_t other_count[5] = { 0 }, other_sum[5] = { 0 };
    last_hops_call c;
    size_t i;
    int tier;
    memset(&c, 0, sizeof c);
    if (!PyArg_ParseTuple(args, "Ol:last_hops", &weights_obj, &c.max_tier) || !r)
        return NULL;
    if (weights_obj != Py_None) {
        if (PyObject_GetBuffer(weights_obj, &view, PyBUF_SIMPLE) < 0)
            return NULL;
        if ((size_t)view.len != t->ntargets * 8) {
            PyErr_SetString(PyExc_ValueError, "weights: one native uint64 a target");
            goto done;
        }
        c.weights = view.buf;
    }
    if (!self->namer && !(self->namer = hp_reach_namer_new(r))) {
        PyErr_NoMemory();
        goto done;
    }
    c.g.routes = self;
    c.g.found = 1;
    if (!(c.target_group = PyMem_RawMalloc((t->ntargets ? t->ntargets : 1) * 4))) {
        PyErr_NoMemory();
        goto done;
    }
    if (heap_guard(self->heap, group_last_hops, &c) < 0)
        goto done;
    if (c.g.found != 1) {
        if (c.g.found < 0)
            PyErr_NoMemory();
        else
            PyErr_SetString(PyExc_SystemError, "a path edge is missing from the graph");
        goto done;
    }
    if (!(counts = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)c.g.ngroups * 8)) ||
        !(sums = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)c.g.ngroups * 8)))
        goto done;
    memset(PyBytes_AS_STRING(counts), 0, (size_t)c.g.ngroups * 8);
    memset(PyBytes_AS_STRING(sums), 0, (size_t)c.g.ngroups * 8);
    for (i = 0; i < t->ntargets; i++) {
        uint64_t w = c.weights ? c.weights[i] : 0;
        uint32_t group = c.target_group[i];
        if (group == HP_NONE) {
            tier = t->node[i] == HP_NONE ? 4 : self->rt.tier[i];
            other_count[tier]++;
            other_sum[tier] += w;
        } else {
            ((uint64_t *)(void *)PyBytes_AS_STRING(counts))[group]++;
            ((uint64_t *)(void *)PyBytes_AS_STRING(sums))[group] += w;
        }
    }
    if (!(others = PyList_New(5)))
        goto done;
    for (tier = 0; tier < 5; tier++) {
        PyObject *pair = Py_BuildValue("(KK)", (unsigned long long)other_count[tier],
                                       (unsigned long long)other_sum[tier]);
        if (!pair)
            goto done;
        PyList_SET_ITEM(others, tier, pair);
    }
    out = Py_BuildValue("(NOOO)", u32_bytes(c.g.group_node, c.g.ngroups), counts, sums, others);
done:
    Py_XDECREF(counts);
    Py_XDECREF(sums);
    Py_XDECREF(others);
    PyMem_RawFree(c.g.slots);
    PyMem_RawFree(c.g.group_parent);
    PyMem_RawFree(c.g.group_node);
    PyMem_RawFree(c.target_group);
    if (view.obj)
        PyBuffer_Release(&view);
    return out;
}

static PyObject *routes_node_hops(RoutesObject *self, PyObject *arg)
{
    const hp_reach *r = live_reach(self);
    const hp_bfs_tree *t = &self->rt.tree;
    Py_ssize_t k = PyLong_AsSsize_t(arg);
    uint32_t thread, record;
    PyObject *hops;
    if (!r || (k == -1 && PyErr_Occurred()))
        return NULL;
    if (k < 0 || k >= (Py_ssize_t)t->count) {
        PyErr_SetString(PyExc_IndexError, "node out of range");
        return NULL;
    }
    if (t->parent[k] != HP_NONE) {
        PyObject *hop = edge_hop(self, r, (uint32_t)k);
        if (!hop)
            return NULL;
        hops = PyTuple_Pack(1, hop);
        Py_DECREF(hop);
        return hops;
    }
    thread = root_thread(self, r, (uint32_t)k, &record);
    hops = PyTuple_New(thread != HP_NONE ? 2 : 1);
    if (!hops)
        return NULL;
    PyTuple_SET_ITEM(hops, 0, root_hop(self, (uint32_t)k, thread, record, 0));
    if (thread != HP_NONE)
        PyTuple_SET_ITEM(hops, 1, root_hop(self, (uint32_t)k, thread, record, 1));
    if (!PyTuple_GET_ITEM(hops, 0) || (thread != HP_NONE && !PyTuple_GET_ITEM(hops, 1)))
        Py_CLEAR(hops);
    return hops;
}

static PyObject *routes_get_nodes(RoutesObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLong(self->rt.tree.count);
}

static int routes_traverse(RoutesObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->heap);
    return 0;
}

static int routes_clear(RoutesObject *self)
{
    Py_CLEAR(self->heap);
    return 0;
}

static void routes_dealloc(RoutesObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    hp_reach_routes_free(&self->rt);
    hp_reach_namer_free(self->namer);
    routes_clear(self);
    PyObject_GC_Del(self);
    Py_DECREF(type);
}

static PyMethodDef routes_methods[] = {
    { "status", (PyCFunction)routes_status, METH_O,
      "status($self, i, /)\n--\n\n(tier, rule) of target i: tier 0 a strong path, 1 one crossing a library\n"
      "rule, 2 one crossing an excluded reference, 3 one crossing a weak referent, 4 none at all; rule\n"
      "the index of the rule that gave the tier, or -1." },
    { "route", (PyCFunction)routes_route, METH_O,
      "route($self, i, /)\n--\n\nThe hops of target i's path as a Route, or None when it has none." },
    { "parents", (PyCFunction)routes_parents, METH_NOARGS,
      "parents($self, /)\n--\n\nThe tree of the paths: each node's parent node (0xFFFFFFFF for a root), as\n"
      "native uint32 bytes; a parent comes before its children." },
    { "target_nodes", (PyCFunction)routes_target_nodes, METH_NOARGS,
      "target_nodes($self, /)\n--\n\nEach target's node (0xFFFFFFFF: none), as native uint32 bytes." },
    { "hop_groups", (PyCFunction)routes_hop_groups, METH_O,
      "hop_groups($self, max_tier, /)\n--\n\n(parents, nodes, counts, others): the groups of nodes whose\n"
      "hops are named alike, parents first: each one's parent group (0xFFFFFFFF for a root's) and one of\n"
      "its nodes (native uint32 bytes), its targets of tier <= max_tier (native uint64 bytes); others:\n"
      "the targets of a higher tier." },
    { "last_hops", (PyCFunction)routes_last_hops, METH_VARARGS,
      "last_hops($self, weights, max_tier, /)\n--\n\n(nodes, counts, sums, others): the targets of tier <=\n"
      "max_tier grouped by the hop their path ends with: per group one of its nodes (native uint32 bytes),\n"
      "its targets and the sum of their weights (one native uint64 a target, or None; native uint64\n"
      "bytes); others: [(targets, weight sum)] per tier of the rest." },
    { "node_hops", (PyCFunction)routes_node_hops, METH_O,
      "node_hops($self, k, /)\n--\n\nThe raw hops into node k: the hop from its parent, or for a root its\n"
      "ROOT hop (and LOCAL hop when a thread holds it)." },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef routes_getset[] = {
    { "nodes", (getter)routes_get_nodes, NULL, "Vertices kept: the union of the targets' paths.", NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot routes_slots[] = {
    { Py_tp_doc, "The paths of one search for many targets (heap._routes); internal." },
    { Py_sq_length, routes_len },
    { Py_tp_methods, routes_methods },
    { Py_tp_getset, routes_getset },
    { Py_tp_traverse, routes_traverse },
    { Py_tp_clear, routes_clear },
    { Py_tp_dealloc, routes_dealloc },
    { 0, NULL },
};

static PyType_Spec routes_spec = {
    "hprofkit._hprof.Routes", sizeof(RoutesObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    routes_slots,
};

/* ---- one path ---- */

static Py_ssize_t route_len(RouteObject *self) { return (Py_ssize_t)self->len + (self->thread != HP_NONE); }

static PyObject *route_item(RouteObject *self, Py_ssize_t i)
{
    const hp_reach *r = live_reach(self->routes);
    int local = self->thread != HP_NONE;
    if (!r)
        return NULL;
    if (i < 0 || i >= route_len(self)) {
        PyErr_SetString(PyExc_IndexError, "hop index out of range");
        return NULL;
    }
    if (i <= local)
        return root_hop(self->routes, self->nodes[0], self->thread, self->record, (int)i);
    return edge_hop(self->routes, r, self->nodes[i - local]);
}

static PyObject *route_subscript(RouteObject *self, PyObject *key)
{
    Py_ssize_t start, stop, step, count, k;
    PyObject *list;
    if (!PySlice_Check(key)) {
        Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
        if (i == -1 && PyErr_Occurred())
            return NULL;
        return route_item(self, i < 0 ? i + route_len(self) : i);
    }
    if (PySlice_Unpack(key, &start, &stop, &step) < 0)
        return NULL;
    count = PySlice_AdjustIndices(route_len(self), &start, &stop, step);
    if (!(list = PyList_New(count)))
        return NULL;
    for (k = 0; k < count; k++) {
        PyObject *hop = route_item(self, start + k * step);
        if (!hop) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, k, hop);
    }
    return list;
}

/* The vertex of hop i's target (no naming): for the leak inspectors. */
static PyObject *route_target(RouteObject *self, PyObject *arg)
{
    const hp_bfs_tree *t = &self->routes->rt.tree;
    Py_ssize_t i = PyLong_AsSsize_t(arg);
    if ((i == -1 && PyErr_Occurred()) || !live_reach(self->routes))
        return NULL;
    if (i < 0)
        i += route_len(self);
    if (i < 0 || i >= route_len(self)) {
        PyErr_SetString(PyExc_IndexError, "hop index out of range");
        return NULL;
    }
    if (self->thread != HP_NONE) {
        if (i == 0)
            return heap_handle(self->routes->heap, self->thread);
        i--;
    }
    return heap_handle(self->routes->heap, t->vertex[self->nodes[i]]);
}

static int route_traverse(RouteObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->routes);
    return 0;
}

static int route_clear(RouteObject *self)
{
    Py_CLEAR(self->routes);
    return 0;
}

static void route_dealloc(RouteObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    route_clear(self);
    PyMem_Free(self->nodes);
    PyObject_GC_Del(self);
    Py_DECREF(type);
}

static PyMethodDef route_methods[] = {
    { "target", (PyCFunction)route_target, METH_O,
      "target($self, i, /)\n--\n\nThe object hop i reaches, without naming the hop." },
    { NULL, NULL, 0, NULL },
};

static PyType_Slot route_slots[] = {
    { Py_tp_doc, "The raw hops (ref_type, holder, name, target) of one path, made on access; internal." },
    { Py_sq_length, route_len },
    { Py_sq_item, route_item },
    { Py_mp_length, route_len },
    { Py_mp_subscript, route_subscript },
    { Py_tp_methods, route_methods },
    { Py_tp_traverse, route_traverse },
    { Py_tp_clear, route_clear },
    { Py_tp_dealloc, route_dealloc },
    { 0, NULL },
};

static PyType_Spec route_spec = {
    "hprofkit._hprof.Route", sizeof(RouteObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    route_slots,
};

int hprof_routes_init(PyObject *module, hprof_state *st)
{
    st->routes_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &routes_spec, NULL);
    st->route_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &route_spec, NULL);
    if (!st->routes_type || !st->route_type)
        return -1;
    return PyModule_AddObjectRef(module, "Routes", (PyObject *)st->routes_type) < 0 ||
                   PyModule_AddObjectRef(module, "Route", (PyObject *)st->route_type) < 0
               ? -1 : 0;
}
