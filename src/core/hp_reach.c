/* Reachability: the graph of a heap index, its roots, dominators and
 * retained sizes (hp_reach.h).  Paths are in hp_reach_match.c, VisualVM's
 * search and tree objects in hp_reach_visualvm.c. */
#include "hp_reach_impl.h"

#include <stdlib.h>
#include <string.h>

/* ---- edges ---- */

void reach_cursor_init(const hp_reach *r, reach_cursor *c, uint32_t v)
{
    c->v = v;
    c->next = 0;
    c->class_done = 0;
    c->holes = 0;
    hp_ref_iter_init(&c->it, r->heap, v);
}

int reach_cursor_step(const hp_reach *r, reach_cursor *c, hp_ref *out)
{
    uint32_t cls = c->it.cls;
    while (hp_ref_next(&c->it, out)) {
        if (out->target == HP_NONE && !c->holes)
            continue;
        if (r->semantics == HP_REACH_HPROFKIT && reach_is_referent(r, cls, out))
            continue;
        c->last = *out;
        c->next++;
        return 1;
    }
    if (r->claims && !c->class_done && hp_bit(r->claims, c->v)) {
        uint32_t own = hp_heap_object_class(r->heap, c->v);
        c->class_done = 1;
        out->kind = HP_REF_CLASS;
        out->slot = 0;
        out->target = r->class_object[own];
        out->target_id = hp_heap_object_id(r->heap, out->target);
        c->last = *out;
        c->next++;
        return 1;
    }
    return 0;
}

int reach_weak_edge(const hp_reach *r, uint32_t v, hp_ref *out)
{
    uint32_t cls = hp_heap_object_class(r->heap, v);
    hp_ref_iter it;
    if (r->semantics != HP_REACH_HPROFKIT || cls == HP_NONE || r->referent_slot[cls] == HP_NONE ||
        hp_heap_object_kind(r->heap, v) != HP_KIND_INSTANCE)
        return 0;
    hp_ref_iter_init(&it, r->heap, v);
    while (hp_ref_next(&it, out))
        if (out->slot == r->referent_slot[cls])
            return out->target != HP_NONE;
    return 0;
}

static int put_edges(void *ctx, uint32_t first, uint32_t count, hp_edge_sink *sink)
{
    const hp_reach *r = ctx;
    uint32_t v;
    for (v = first; v < first + count; v++) {
        reach_cursor c;
        hp_ref ref;
        reach_cursor_init(r, &c, v);
        /* Targets are looked up once, when filling: counting takes every
         * reference, and one to a missing object is then a hole. */
        c.holes = 1;
        c.it.lazy = hp_edge_counting(sink);
        while (reach_cursor_step(r, &c, &ref))
            hp_edge_put(sink, ref.target == HP_NONE ? HP_EDGE_HOLE : ref.target);
        hp_edge_end_vertex(sink);
    }
    return 0;
}

static int put_sizes(void *ctx, uint32_t first, uint32_t count, uint64_t *sizes)
{
    const hp_reach *r = ctx;
    uint32_t k;
    for (k = 0; k < count; k++)
        sizes[k] = hp_heap_shallow_size(r->heap, first + k);
    return 0;
}

/* ---- classes ---- */

/* The class forest: each class under its superclass, numbered depth
 * first, so that a subclass test is two comparisons and a pass in
 * class_order sees every superclass before its subclasses.  Linear in the
 * classes, however deep the hierarchy (a chain of a million classes). */
static hp_code class_forest(hp_reach *r, hp_error *err)
{
    const uint32_t C = r->nclasses;
    uint32_t *first = hp_array_new(&r->alloc, (uint64_t)C + 1, 4), *kids = hp_array_new(&r->alloc, C, 4);
    uint32_t *next = hp_array_new(&r->alloc, C, 4), *stack = hp_array_new(&r->alloc, C, 4);
    uint32_t c, order = 0, clock = 0, top = 0;
    hp_code rc = HP_OK;
    r->class_order = hp_array_new(&r->alloc, C, 4);
    r->class_enter = hp_array_new(&r->alloc, C, 4);
    r->class_leave = hp_array_new(&r->alloc, C, 4);
    r->class_refs = hp_array_new(&r->alloc, C, 4);
    r->class_super = hp_array_new(&r->alloc, C, 4);
    if (!first || !kids || !next || !stack || !r->class_order || !r->class_enter || !r->class_leave ||
        !r->class_refs || !r->class_super) {
        rc = hp_graph_stop(err, HP_E_NOMEM);
        goto done;
    }
    /* Children as CSR: first[c]..first[c + 1] in kids. */
    memset(first, 0, ((size_t)C + 1) * 4);
    for (c = 0; c < C; c++) {
        hp_class_info ci;
        hp_heap_class(r->heap, c, &ci);
        r->class_super[c] = ci.super_ord < C && ci.super_ord != c ? ci.super_ord : HP_NONE;
        r->class_refs[c] = ci.n_refs;
        r->class_enter[c] = r->class_leave[c] = HP_NONE;
        if (r->class_super[c] != HP_NONE)
            first[r->class_super[c] + 1]++;
    }
    for (c = 0; c < C; c++)
        first[c + 1] += first[c];
    for (c = 0; c < C; c++)
        next[c] = first[c];
    for (c = 0; c < C; c++)
        if (r->class_super[c] != HP_NONE)
            kids[next[r->class_super[c]]++] = c;
    for (c = 0; c < C; c++)
        next[c] = first[c];
    /* Depth first from each class without a superclass. */
    for (c = 0; c < C; c++) {
        if (r->class_super[c] != HP_NONE)
            continue;
        stack[top++] = c;
        r->class_enter[c] = clock++;
        r->class_order[order++] = c;
        while (top) {
            uint32_t x = stack[top - 1];
            if (next[x] < first[x + 1]) {
                uint32_t kid = kids[next[x]++];
                r->class_enter[kid] = clock++;
                r->class_order[order++] = kid;
                stack[top++] = kid;
            } else {
                r->class_leave[x] = clock++;
                top--;
            }
        }
    }
    /* A cycle the heap let through (it refuses them) is left out of the
     * forest: each of its classes extends only itself. */
    for (c = 0; c < C; c++)
        if (r->class_enter[c] == HP_NONE)
            r->class_order[order++] = c;
done:
    r->alloc.free_fn(first);
    r->alloc.free_fn(kids);
    r->alloc.free_fn(next);
    r->alloc.free_fn(stack);
    return rc;
}

int reach_extends(const hp_reach *r, uint32_t cls, uint32_t base)
{
    if (cls >= r->nclasses || base >= r->nclasses)
        return 0;
    if (cls == base)
        return 1;
    return r->class_enter[base] != HP_NONE && r->class_enter[cls] != HP_NONE &&
           r->class_enter[base] <= r->class_enter[cls] && r->class_leave[cls] <= r->class_leave[base];
}

uint32_t reach_own_ref_slot(const hp_heap *h, uint32_t declaring, const char *name, size_t len)
{
    hp_field_iter it;
    hp_field f;
    uint32_t slot = 0;
    hp_field_iter_init(&it, h, declaring);
    while (hp_field_next(&it, &f) && f.declaring == declaring) {
        if (f.type != HP_T_OBJECT)
            continue;
        if (hp_heap_field_is(h, &f, name, len))
            return slot;
        slot++;
    }
    return HP_NONE;
}

static uint32_t find_class(const hp_heap *h, const char *name)
{
    return hp_heap_find_class_name(h, name, strlen(name), 0);
}

/* Per class, the slot of Reference.referent (not strong), or HP_NONE. */
static void find_referents(hp_reach *r)
{
    static const char *const kinds[4] = { "java.lang.ref.WeakReference", "java.lang.ref.SoftReference",
                                         "java.lang.ref.FinalReference", "java.lang.ref.PhantomReference" };
    const hp_heap *h = r->heap;
    uint32_t reference = find_class(h, "java.lang.ref.Reference"), bases[4], c, own;
    size_t nbases = 0, k;
    for (c = 0; c < r->nclasses; c++)
        r->referent_slot[c] = HP_NONE;
    if (reference == HP_NONE)
        return;
    own = reach_own_ref_slot(h, reference, "referent", 8);
    if (own == HP_NONE)
        return;
    if (r->semantics == HP_REACH_HPROFKIT)
        bases[nbases++] = reference;
    else
        for (k = 0; k < 4; k++)
            if ((bases[nbases] = find_class(h, kinds[k])) != HP_NONE)
                nbases++;
    /* Slots number a layout's own fields first: Reference's own begin
     * after the fields its subclasses between add. */
    for (c = 0; c < r->nclasses; c++)
        for (k = 0; k < nbases; k++)
            if (reach_extends(r, c, bases[k]) && reach_extends(r, c, reference)) {
                r->referent_slot[c] = r->class_refs[c] - r->class_refs[reference] + own;
                break;
            }
}

/* ---- roots ---- */

/* Position of a root kind in the search order, or -1: not a root. */
static int root_rank(int kind, int semantics)
{
    static const uint8_t order[] = { 0xFF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                     0x08, 0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E };
    int k;
    if (semantics == HP_REACH_HPROFKIT && kind == HP_SUB_ROOT_THREAD_OBJECT)
        return 0;
    for (k = 0; k < (int)sizeof order; k++)
        if (order[k] == kind)
            return k + 1;
    return -1;
}

/* Pairs of uint32_t, by the first then the second. */
static int by_pair(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] > y[1]) - (x[1] < y[1]);
}

static hp_code collect_roots(hp_reach *r, hp_error *err)
{
    const hp_heap *h = r->heap;
    uint32_t total = hp_heap_root_count(h), i;
    int rank;
    size_t k = 0;
    r->roots = hp_array_new(&r->alloc, total, 4);
    r->root_records = hp_array_new(&r->alloc, total, 4);
    r->threads = hp_array_new(&r->alloc, (uint64_t)total * 2, 4);
    if (!r->roots || !r->root_records || !r->threads)
        return hp_graph_stop(err, HP_E_NOMEM);
    /* A stable bucket pass per rank: a handful of ranks, so no sort. */
    for (rank = 0; rank <= 16; rank++)
        for (i = 0; i < total; i++) {
            hp_root root;
            hp_heap_root(h, i, &root);
            if (root.index == HP_NONE || root_rank(root.kind, r->semantics) != rank)
                continue;
            r->roots[k] = root.index;
            r->root_records[k++] = i;
        }
    r->nroots = k;
    for (i = 0; i < total; i++) {
        hp_root root;
        hp_heap_root(h, i, &root);
        if (root.kind == HP_SUB_ROOT_THREAD_OBJECT && root.index != HP_NONE) {
            r->threads[2 * r->nthreads] = root.thread_serial;
            r->threads[2 * r->nthreads++ + 1] = root.index;
        }
    }
    qsort(r->threads, r->nthreads, 8, by_pair);
    return HP_OK;
}

uint32_t hp_reach_thread_object(const hp_reach *r, uint32_t serial)
{
    size_t lo = 0, hi = r->nthreads;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->threads[2 * mid] < serial)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nthreads && r->threads[2 * lo] == serial ? r->threads[2 * lo + 1] : HP_NONE;
}

/* ---- build ---- */

hp_code hp_reach_build(const hp_heap *h, int semantics, const hp_alloc *alloc, const hp_checkpoint *cp,
                       hp_reach **out, hp_error *err)
{
    hp_alloc a = alloc ? *alloc : hp_default_alloc;
    hp_graph_source source;
    hp_reach *r;
    hp_code rc;
    uint32_t c;
    int threads = semantics & HP_REACH_ONE_THREAD ? 1 : 2;
    *out = NULL;
    semantics &= ~HP_REACH_ONE_THREAD;
    if (semantics != HP_REACH_HPROFKIT && semantics != HP_REACH_VISUALVM)
        return hp_vertex_fail(err, HP_E_USAGE, UINT64_MAX, "unknown reachability semantics");
    r = a.malloc_fn(sizeof *r);
    if (!r)
        return hp_graph_stop(err, HP_E_NOMEM);
    memset(r, 0, sizeof *r);
    r->heap = h;
    r->semantics = semantics;
    r->alloc = a;
    r->n = hp_heap_object_count(h);
    r->nclasses = hp_heap_class_count(h);
    r->class_object = hp_array_new(&a, r->nclasses, 4);
    r->referent_slot = hp_array_new(&a, r->nclasses, 4);
    if (!r->class_object || !r->referent_slot) {
        hp_reach_free(r);
        return hp_graph_stop(err, HP_E_NOMEM);
    }
    for (c = 0; c < r->nclasses; c++) {
        hp_class_info ci;
        hp_heap_class(h, c, &ci);
        r->class_object[c] = ci.object_index;
    }
    rc = class_forest(r, err);
    if (rc == HP_OK) {
        find_referents(r);
        rc = collect_roots(r, err);
    }
    if (rc == HP_OK && semantics == HP_REACH_VISUALVM)
        rc = reach_vv_search(r, cp, err);
    if (rc == HP_OK) {
        source.edges = put_edges;
        source.ctx = r;
        source.threads = threads;
        rc = hp_graph_build(&r->graph, r->n, &source, &a, cp, err);
    }
    if (rc != HP_OK) {
        hp_reach_free(r);
        return rc;
    }
    *out = r;
    return HP_OK;
}

void hp_reach_free(hp_reach *r)
{
    if (!r)
        return;
    if (r->graph.alloc.free_fn) /* built, or failed after starting */
        hp_graph_free(&r->graph);
    if (r->dom.alloc.free_fn)
        hp_dominators_free(&r->dom);
    hp_domtree_free(&r->children);
    r->alloc.free_fn(r->roots);
    r->alloc.free_fn(r->root_records);
    r->alloc.free_fn(r->threads);
    r->alloc.free_fn(r->class_object);
    r->alloc.free_fn(r->referent_slot);
    r->alloc.free_fn(r->class_order);
    r->alloc.free_fn(r->class_enter);
    r->alloc.free_fn(r->class_leave);
    r->alloc.free_fn(r->class_refs);
    r->alloc.free_fn(r->class_super);
    r->alloc.free_fn(r->is_root);
    r->alloc.free_fn(r->claims);
    r->alloc.free_fn(r->parent);
    r->alloc.free_fn(r->leaves);
    r->alloc.free_fn(r->retained);
    r->alloc.free_fn(r->minus_one);
    r->alloc.free_fn(r->tree);
    r->alloc.free_fn(r->class_retained);
    r->alloc.free_fn(r->live);
    r->alloc.free_fn(r);
}

size_t hp_reach_root_count(const hp_reach *r) { return r->nroots; }
const uint32_t *hp_reach_roots(const hp_reach *r) { return r->roots; }
uint32_t hp_reach_root_record(const hp_reach *r, size_t i) { return r->root_records[i]; }

/* ---- dominators ---- */

/* Whether a root of this kind is one of a thread's, naming it by serial:
 * a local of its stack frames or JNI frames, an object its native stack
 * holds, blocks or (ART) locks by JNI. */
static int names_thread(int kind)
{
    return kind == HP_SUB_ROOT_JAVA_FRAME || kind == HP_SUB_ROOT_JNI_LOCAL || kind == HP_SUB_ROOT_NATIVE_STACK ||
           kind == HP_SUB_ROOT_THREAD_BLOCK || kind == HP_SUB_ROOT_JNI_MONITOR;
}

/* hprofkit: the thread object that holds the object of root number i (a
 * root of its thread's, the thread object in the dump), or HP_NONE. */
static uint32_t holding_thread(const hp_reach *r, size_t i)
{
    hp_root root;
    hp_heap_root(r->heap, r->root_records[i], &root);
    return names_thread(root.kind) ? hp_reach_thread_object(r, root.thread_serial) : HP_NONE;
}

/* The flow graph of the dominators besides r->graph: the virtual root's
 * successors (*roots, *nroots) and the extra edges (*pairs, *npairs,
 * sorted).  The search roots, and under visualvm every object its search
 * did not reach too.  Under hprofkit a thread's roots hang from its
 * thread object instead (MAT's model), so a thread retains what only its
 * stack holds. */
static hp_code dominator_flow(hp_reach *r, uint32_t **roots, size_t *nroots, uint32_t **pairs, size_t *npairs,
                              hp_error *err)
{
    size_t extra = 0, k = 0, i;
    uint32_t v;
    *npairs = 0;
    if (r->semantics == HP_REACH_VISUALVM)
        for (v = 0; v < r->n; v++)
            extra += r->parent[v] == HP_NONE && !hp_bit(r->is_root, v);
    *roots = hp_array_new(&r->alloc, r->nroots + extra, 4);
    *pairs = r->semantics == HP_REACH_HPROFKIT ? hp_array_new(&r->alloc, (uint64_t)r->nroots * 2, 4) : NULL;
    if (!*roots || (r->semantics == HP_REACH_HPROFKIT && !*pairs)) {
        r->alloc.free_fn(*roots);
        r->alloc.free_fn(*pairs);
        return hp_graph_stop(err, HP_E_NOMEM);
    }
    for (i = 0; i < r->nroots; i++) {
        uint32_t thread = *pairs ? holding_thread(r, i) : HP_NONE;
        if (thread == HP_NONE) {
            (*roots)[k++] = r->roots[i];
        } else {
            (*pairs)[2 * *npairs] = thread;
            (*pairs)[2 * (*npairs)++ + 1] = r->roots[i];
        }
    }
    if (r->semantics == HP_REACH_VISUALVM)
        for (v = 0; v < r->n; v++)
            if (r->parent[v] == HP_NONE && !hp_bit(r->is_root, v))
                (*roots)[k++] = v;
    *nroots = k;
    if (*npairs)
        qsort(*pairs, *npairs, 8, by_pair);
    return HP_OK;
}

/* Walks the dominator tree depth first.  On leaving a vertex (after all it
 * dominates): visualvm accumulation when `accumulate`; retained by class
 * into `by_class` when non-NULL. */
static hp_code walk_dominator_tree(hp_reach *r, int accumulate, uint64_t *by_class, const hp_checkpoint *cp,
                                   hp_error *err);

hp_code hp_reach_dominators(hp_reach *r, int lean, const hp_checkpoint *cp, hp_error *err)
{
    hp_dominators_spec spec;
    uint32_t *roots, *pairs;
    size_t nroots = 0, npairs = 0;
    hp_code rc;
    if (r->has_dominators)
        return HP_OK;
    if (r->semantics == HP_REACH_VISUALVM && (rc = reach_vv_tree_objects(r, cp, err)) != HP_OK)
        return rc;
    if ((rc = dominator_flow(r, &roots, &nroots, &pairs, &npairs, err)) != HP_OK)
        return rc;
    memset(&spec, 0, sizeof spec);
    spec.roots = roots;
    spec.nroots = nroots;
    spec.extra.pairs = pairs;
    spec.extra.count = npairs;
    spec.sizes = r->semantics == HP_REACH_HPROFKIT ? put_sizes : NULL;
    spec.sizes_ctx = r;
    spec.lean = lean;
    spec.threads = 2;
    rc = hp_dominators_build(&r->dom, &r->graph, &spec, cp, err);
    r->alloc.free_fn(roots);
    r->alloc.free_fn(pairs);
    if (rc == HP_OK && r->semantics == HP_REACH_VISUALVM) {
        r->class_retained = hp_array_new(&r->alloc, (uint64_t)r->nclasses * 2, 8);
        rc = r->class_retained ? walk_dominator_tree(r, 1, r->class_retained, cp, err)
                               : hp_graph_stop(err, HP_E_NOMEM);
        if (rc == HP_OK) {
            r->alloc.free_fn(r->parent);
            r->alloc.free_fn(r->leaves);
            r->parent = r->leaves = NULL;
        }
    }
    if (rc != HP_OK) {
        hp_dominators_free(&r->dom);
        r->alloc.free_fn(r->class_retained);
        r->class_retained = NULL;
        return rc;
    }
    r->has_dominators = 1;
    return HP_OK;
}

uint32_t hp_reach_idom(const hp_reach *r, uint32_t v)
{
    uint32_t d = r->dom.idom[v];
    return d == HP_DOM_VIRTUAL ? HP_NONE : d;
}

int64_t hp_reach_retained(const hp_reach *r, uint32_t v)
{
    uint64_t size;
    if (r->semantics == HP_REACH_VISUALVM) {
        if (hp_bit(r->minus_one, v))
            return -1;
        size = r->retained[v];
    } else {
        size = r->dom.retained[v];
    }
    return size > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)size;
}

uint32_t hp_reach_retained_count(const hp_reach *r, uint32_t v) { return r->dom.count[v]; }

size_t hp_reach_top(const hp_reach *r, size_t k, uint32_t *out)
{
    if (r->semantics == HP_REACH_VISUALVM)
        return hp_top_values(r->retained, NULL, r->n, k, out);
    return hp_top_values(r->dom.retained, r->dom.idom, r->n, k, out);
}

hp_code hp_reach_class_retained(hp_reach *r, const hp_checkpoint *cp, const uint64_t **out, hp_error *err)
{
    hp_code rc;
    *out = NULL;
    if (!r->has_dominators)
        return hp_vertex_fail(err, HP_E_USAGE, UINT64_MAX, "dominators not computed");
    if (!r->class_retained) {
        uint64_t *by_class = hp_array_new(&r->alloc, (uint64_t)r->nclasses * 2, 8);
        if (!by_class)
            return hp_graph_stop(err, HP_E_NOMEM);
        rc = walk_dominator_tree(r, 0, by_class, cp, err);
        if (rc != HP_OK) {
            r->alloc.free_fn(by_class);
            return rc;
        }
        r->class_retained = by_class;
    }
    *out = r->class_retained;
    return HP_OK;
}

const uint64_t *hp_reach_class_retained_counts(const hp_reach *r)
{
    return r->class_retained ? r->class_retained + r->nclasses : NULL;
}

/* VisualVM's test (getRetainedSizeByClass) for the classes whose instances
 * it checks for a dominator of their own class: classes with two instances
 * or more and an object field somewhere in their chain, except the four it
 * names. */
static int can_contain_itself(const hp_heap *h, uint32_t cls)
{
    static const char *const never[] = { "java.lang.String", "java.lang.StringBuffer", "java.lang.StringBuilder",
                                         "java.io.File" };
    hp_class_info ci;
    hp_field_iter it;
    hp_field f;
    size_t k;
    hp_heap_class(h, cls, &ci);
    if (ci.instances < 2)
        return 0;
    for (k = 0; k < 4; k++)
        if (hp_heap_find_class_name(h, never[k], strlen(never[k]), cls) == cls)
            return 0;
    hp_field_iter_init(&it, h, cls);
    while (hp_field_next(&it, &f))
        if (f.type == HP_T_OBJECT)
            return 1;
    return 0;
}

/* Adds v's retained size (and count, at by_class[nclasses + cls]) to its
 * class unless an object of that class dominates it; `on_path` counts the
 * classes of v and its dominators. */
static void add_by_class(hp_reach *r, uint32_t v, uint32_t cls, const uint32_t *on_path, const uint8_t *checked,
                         uint64_t *by_class)
{
    hp_kind kind = hp_heap_object_kind(r->heap, v);
    int64_t size;
    if (kind == HP_KIND_CLASS || cls == HP_NONE)
        return;
    if (on_path[cls] > 1 && (r->semantics == HP_REACH_HPROFKIT || kind == HP_KIND_OBJ_ARRAY ||
                             (kind == HP_KIND_INSTANCE && checked[cls])))
        return;
    size = hp_reach_retained(r, v);
    by_class[cls] += size > 0 ? (uint64_t)size : 0;
    by_class[r->nclasses + cls] += hp_reach_retained_count(r, v);
}

/* The walk's state: on_path counts the classes of the vertex entered last
 * and its dominators. */
typedef struct class_walk {
    hp_reach *r;
    int accumulate;
    uint64_t *by_class;
    uint32_t *on_path;
    const uint8_t *checked;
} class_walk;

static void class_enter(void *ctx, uint32_t v)
{
    class_walk *w = ctx;
    uint32_t cls = hp_heap_object_class(w->r->heap, v);
    if (cls != HP_NONE)
        w->on_path[cls]++;
}

static void class_leave(void *ctx, uint32_t v)
{
    class_walk *w = ctx;
    uint32_t cls = hp_heap_object_class(w->r->heap, v);
    if (w->accumulate)
        reach_vv_accumulate(w->r, v);
    if (w->by_class)
        add_by_class(w->r, v, cls, w->on_path, w->checked, w->by_class);
    if (cls != HP_NONE)
        w->on_path[cls]--;
}

static hp_code walk_dominator_tree(hp_reach *r, int accumulate, uint64_t *by_class, const hp_checkpoint *cp,
                                   hp_error *err)
{
    uint32_t *on_path = hp_array_new(&r->alloc, r->nclasses + 1, 4), c;
    uint8_t *checked = hp_array_new(&r->alloc, r->nclasses + 1, 1);
    class_walk w = { r, accumulate, by_class, on_path, checked };
    hp_domtree_visitor visitor = { class_enter, class_leave, &w };
    hp_domtree tree;
    hp_code rc;
    if (!on_path || !checked) {
        r->alloc.free_fn(on_path);
        r->alloc.free_fn(checked);
        return hp_graph_stop(err, HP_E_NOMEM);
    }
    memset(on_path, 0, ((size_t)r->nclasses + 1) * 4);
    if (by_class)
        memset(by_class, 0, (size_t)r->nclasses * 16);
    for (c = 0; c < r->nclasses; c++)
        checked[c] = (uint8_t)(r->semantics == HP_REACH_VISUALVM && can_contain_itself(r->heap, c));
    /* Children in any order: every vertex is left after all it dominates. */
    rc = hp_domtree_build(&tree, r->dom.idom, r->n, NULL, &r->alloc, cp, err);
    if (rc == HP_OK)
        rc = hp_domtree_walk(&tree, &visitor, cp, err);
    hp_domtree_free(&tree);
    r->alloc.free_fn(on_path);
    r->alloc.free_fn(checked);
    return rc;
}
