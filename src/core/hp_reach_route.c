/* The paths of a search kept as a tree, and the names of their edges
 * (hp_reach.h: routes, the namer). */
#include "hp_reach_impl.h"

#include <string.h>

/* ---- naming an edge ---- */

/* The references of v in row order, matched to its graph row: a reference
 * is in the row unless its target is missing (a hole) or it is the referent
 * hprofkit leaves out, so walking both in step pairs each row entry with its
 * reference by comparing ids, without looking any up.  Calls
 * fn(ctx, position, ref) for positions first..last (inclusive, or to the
 * row's end) and returns the next position. */
static uint32_t walk_row(const hp_reach *r, uint32_t v, uint32_t first, uint32_t last,
                         void (*fn)(void *ctx, uint32_t pos, const hp_ref *ref), void *ctx)
{
    uint32_t degree, k = 0;
    const uint32_t *row = hp_graph_row(&r->graph, v, &degree);
    hp_ref_iter it;
    hp_ref ref;
    hp_ref_iter_init(&it, r->heap, v);
    it.lazy = 1;
    while (k < degree && k <= last && hp_ref_next(&it, &ref)) {
        if (r->semantics == HP_REACH_HPROFKIT && reach_is_referent(r, it.cls, &ref))
            continue;
        if (ref.target_id != hp_heap_object_id(r->heap, row[k]))
            continue; /* a hole */
        ref.target = row[k];
        if (k >= first)
            fn(ctx, k, &ref);
        k++;
    }
    /* VisualVM's instance -> class edge comes last. */
    if (k + 1 == degree && k <= last && r->claims && hp_bit(r->claims, v) &&
        r->class_object[hp_heap_object_class(r->heap, v)] == row[k]) {
        ref.kind = HP_REF_CLASS;
        ref.slot = 0;
        ref.target = row[k];
        ref.target_id = hp_heap_object_id(r->heap, row[k]);
        if (k >= first)
            fn(ctx, k, &ref);
        k++;
    }
    return k;
}

static void keep_one(void *ctx, uint32_t pos, const hp_ref *ref)
{
    (void)pos;
    *(hp_ref *)ctx = *ref;
}

int hp_reach_edge(const hp_reach *r, uint32_t v, uint32_t pos, hp_ref *out)
{
    if (v >= r->n)
        return 0;
    if (pos == HP_EDGE_OUTSIDE)
        return reach_weak_edge(r, v, out);
    return walk_row(r, v, pos, pos, keep_one, out) > pos;
}

/* A holder's row as (kind, slot) per position. */
typedef struct row_table {
    uint32_t vertex;
    uint32_t degree;     /* 0: seen once, no table yet */
    uint32_t *slot;
    uint8_t *kind;
} row_table;

struct hp_reach_namer {
    const hp_reach *r;
    hp_alloc alloc;      /* r's, copied: a namer may be freed after r (a path outliving its heap) */
    row_table *tables;   /* open addressing by vertex; vertex HP_NONE: free */
    size_t cap, used;
    uint64_t bytes;
};

hp_reach_namer *hp_reach_namer_new(const hp_reach *r)
{
    hp_reach_namer *nm = r->alloc.malloc_fn(sizeof *nm);
    if (!nm)
        return NULL;
    memset(nm, 0, sizeof *nm);
    nm->r = r;
    nm->alloc = r->alloc;
    return nm;
}

void hp_reach_namer_free(hp_reach_namer *nm)
{
    size_t k;
    if (!nm)
        return;
    for (k = 0; k < nm->cap; k++) {
        nm->alloc.free_fn(nm->tables[k].slot);
        nm->alloc.free_fn(nm->tables[k].kind);
    }
    nm->alloc.free_fn(nm->tables);
    nm->alloc.free_fn(nm);
}

uint64_t hp_reach_namer_bytes(const hp_reach_namer *nm) { return nm->bytes + nm->cap * sizeof *nm->tables; }

/* Reference slots walking v's references visits: how long a scan of its
 * row may take. */
static uint64_t slot_count(const hp_reach *r, uint32_t v)
{
    hp_ref_iter it;
    hp_ref_iter_init(&it, r->heap, v);
    return it.count;
}

static size_t home(uint32_t v, size_t cap) { return (size_t)(v * 2654435761u) & (cap - 1); }

/* The table entry of v, added (degree 0) if absent; NULL: out of memory. */
static row_table *table_of(hp_reach_namer *nm, uint32_t v)
{
    size_t k;
    if (2 * (nm->used + 1) > nm->cap) {
        size_t cap = nm->cap ? nm->cap * 2 : 64, j;
        row_table *grown = hp_array_new(&nm->alloc, cap, sizeof *grown);
        if (!grown)
            return NULL;
        memset(grown, 0, cap * sizeof *grown);
        for (j = 0; j < cap; j++)
            grown[j].vertex = HP_NONE;
        for (j = 0; j < nm->cap; j++)
            if (nm->tables[j].vertex != HP_NONE) {
                for (k = home(nm->tables[j].vertex, cap); grown[k].vertex != HP_NONE; k = (k + 1) & (cap - 1))
                    ;
                grown[k] = nm->tables[j];
            }
        nm->alloc.free_fn(nm->tables);
        nm->tables = grown;
        nm->cap = cap;
    }
    for (k = home(v, nm->cap); nm->tables[k].vertex != HP_NONE; k = (k + 1) & (nm->cap - 1))
        if (nm->tables[k].vertex == v)
            return &nm->tables[k];
    memset(&nm->tables[k], 0, sizeof nm->tables[k]);
    nm->tables[k].vertex = v;
    nm->used++;
    return &nm->tables[k];
}

static void fill_table(void *ctx, uint32_t pos, const hp_ref *ref)
{
    row_table *t = ctx;
    t->slot[pos] = ref->slot;
    t->kind[pos] = (uint8_t)ref->kind;
}

int hp_reach_namer_edge(hp_reach_namer *nm, uint32_t v, uint32_t pos, hp_ref *out)
{
    const hp_reach *r = nm->r;
    uint32_t degree, got;
    const uint32_t *row;
    row_table *t;
    if (v >= r->n)
        return 0;
    if (pos == HP_EDGE_OUTSIDE)
        return reach_weak_edge(r, v, out);
    row = hp_graph_row(&r->graph, v, &degree);
    if (pos >= degree)
        return 0;
    if (slot_count(r, v) <= HP_NAMER_SMALL)
        return walk_row(r, v, pos, pos, keep_one, out) > pos;
    /* A large holder: scanned the first time, tabled the second. */
    if (!(t = table_of(nm, v)))
        return -1;
    if (!t->slot) {
        if (!t->degree) {
            t->degree = 1;
            return walk_row(r, v, pos, pos, keep_one, out) > pos;
        }
        t->slot = hp_array_new(&r->alloc, degree, 4);
        t->kind = hp_array_new(&r->alloc, degree, 1);
        if (!t->slot || !t->kind) {
            r->alloc.free_fn(t->slot);
            r->alloc.free_fn(t->kind);
            t->slot = NULL;
            t->kind = NULL;
            return -1;
        }
        memset(t->kind, 0xFF, degree);
        t->degree = degree;
        got = walk_row(r, v, 0, HP_NONE, fill_table, t);
        (void)got;
        nm->bytes += (uint64_t)degree * 5;
    }
    if (t->kind[pos] == 0xFF)
        return 0;
    out->kind = t->kind[pos];
    out->slot = t->slot[pos];
    out->target = row[pos];
    out->target_id = hp_heap_object_id(r->heap, row[pos]);
    return 1;
}

/* ---- routes ---- */

/* Per target, the rule that set its tier: going down the tree (parents
 * first), a node whose tier is above its parent's crossed the rule's
 * reference (or root) there; the others inherit their parent's. */
static hp_code route_rules(const hp_reach *r, hp_reach_matcher *m, hp_reach_routes *rt, const hp_checkpoint *cp,
                           hp_error *err)
{
    const hp_bfs_tree *t = &rt->tree;
    int32_t *rule = hp_array_new(&r->alloc, t->count, 4);
    hp_pacer pacer = { cp, 0 };
    uint32_t k;
    size_t i;
    if (!rule)
        return hp_graph_stop(err, HP_E_NOMEM);
    for (k = 0; k < t->count; k++) {
        uint32_t p = t->parent[k];
        int above = p == HP_NONE ? HP_TIER_NORMAL : t->tier[p];
        if (t->tier[k] > above && t->tier[k] < HP_TIER_WEAK)
            rule[k] = hp_reach_matcher_rule(m, p == HP_NONE ? HP_MARK : t->vertex[p], t->edge[k]);
        else
            rule[k] = t->tier[k] > above || p == HP_NONE ? -1 : rule[p];
        if (hp_pace(&pacer, 1)) {
            r->alloc.free_fn(rule);
            return hp_graph_stop(err, HP_E_ABORTED);
        }
    }
    for (i = 0; i < t->ntargets; i++) {
        uint32_t node = t->node[i];
        rt->tier[i] = node == HP_NONE ? HP_ROUTE_NONE : t->tier[node];
        rt->rule[i] = node == HP_NONE ? -1 : rule[node];
    }
    r->alloc.free_fn(rule);
    return HP_OK;
}

hp_code hp_reach_routes_find(const hp_reach *r, const hp_reach_rule *rules, size_t nrules, const uint32_t *targets,
                             size_t ntargets, int flags, const hp_checkpoint *cp, hp_reach_routes *out, hp_error *err)
{
    hp_reach_matcher *m = NULL;
    hp_bfs bfs;
    hp_code rc;
    memset(out, 0, sizeof *out);
    memset(&bfs, 0, sizeof bfs);
    bfs.alloc = r->alloc;
    rc = hp_reach_matcher_new(r, rules, nrules, cp, &m, err);
    if (rc == HP_OK)
        rc = hp_reach_paths(r, m, targets, ntargets, flags | HP_PATHS_EXPLAIN, cp, &bfs, err);
    if (rc == HP_OK)
        rc = hp_bfs_tree_build(&out->tree, &bfs, targets, ntargets, cp, err);
    hp_bfs_free(&bfs);
    if (rc == HP_OK) {
        out->tier = hp_array_new(&r->alloc, ntargets, 1);
        out->rule = hp_array_new(&r->alloc, ntargets, 4);
        rc = out->tier && out->rule ? route_rules(r, m, out, cp, err) : hp_graph_stop(err, HP_E_NOMEM);
    }
    hp_reach_matcher_free(m);
    if (rc != HP_OK)
        hp_reach_routes_free(out);
    return rc;
}

void hp_reach_routes_free(hp_reach_routes *rt)
{
    hp_alloc alloc = rt->tree.alloc;
    hp_bfs_tree_free(&rt->tree);
    if (alloc.free_fn) {
        alloc.free_fn(rt->tier);
        alloc.free_fn(rt->rule);
    }
    rt->tier = NULL;
    rt->rule = NULL;
}
