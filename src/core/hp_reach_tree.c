/* The dominator tree of an hp_reach and group totals (hp_reach_tree.h). */
#include "hp_reach_tree.h"

#include "hp_reach_impl.h"

#include <string.h>

/* The order of a row: the retained sizes top_retainers ranks by. */
static const uint64_t *retained_keys(const hp_reach *r)
{
    return r->semantics == HP_REACH_VISUALVM ? r->retained : r->dom.retained;
}

hp_code hp_reach_tree(hp_reach *r, const hp_checkpoint *cp, const hp_domtree **out, hp_error *err)
{
    hp_code rc;
    *out = NULL;
    if (!r->has_dominators)
        return hp_vertex_fail(err, HP_E_USAGE, UINT64_MAX, "dominators not computed");
    if (!r->children.first) {
        rc = hp_domtree_build(&r->children, r->dom.idom, r->n, retained_keys(r), &r->alloc, cp, err);
        if (rc != HP_OK)
            return rc;
    }
    *out = &r->children;
    return HP_OK;
}

uint32_t hp_reach_tree_parent(const hp_reach *r, uint32_t v) { return r->dom.idom[v]; }

typedef struct totals {
    const hp_reach *r;
    hp_group_of group;
    void *ctx;
    uint64_t *retained;
} totals;

/* v's group, a shadow member's included. */
static uint32_t group_of(void *ctx, uint32_t v)
{
    totals *t = ctx;
    uint32_t g = t->group(t->ctx, v);
    return g == HP_NONE ? g : g & ~HP_GROUP_SHADOW;
}

static void add_top(void *ctx, uint32_t v, uint32_t g)
{
    totals *t = ctx;
    int64_t size;
    if (t->group(t->ctx, v) & HP_GROUP_SHADOW)
        return;
    size = hp_reach_retained(t->r, v); /* -1 (visualvm) adds nothing */
    if (size > 0)
        t->retained[g] += (uint64_t)size;
}

hp_code hp_reach_group_totals(hp_reach *r, uint32_t ngroups, hp_group_of group, void *ctx, uint64_t *objects,
                              uint64_t *shallow, uint64_t *retained, const hp_checkpoint *cp, hp_error *err)
{
    const hp_domtree *tree;
    hp_pacer pacer = { cp, 0 };
    totals t;
    uint32_t v;
    hp_code rc = hp_reach_tree(r, cp, &tree, err);
    if (rc != HP_OK)
        return rc;
    memset(objects, 0, (size_t)ngroups * 8);
    memset(shallow, 0, (size_t)ngroups * 8);
    memset(retained, 0, (size_t)ngroups * 8);
    /* Members and shallow sizes: every object, reachable or not. */
    for (v = 0; v < r->n; v++) {
        uint32_t g = group(ctx, v);
        if (hp_pace(&pacer, 1))
            return hp_graph_stop(err, HP_E_ABORTED);
        if (g == HP_NONE)
            continue;
        if ((g & ~HP_GROUP_SHADOW) >= ngroups)
            return hp_vertex_fail(err, HP_E_USAGE, v, "group out of range");
        if (g & HP_GROUP_SHADOW)
            continue;
        objects[g]++;
        shallow[g] += hp_heap_shallow_size(r->heap, v);
    }
    t.r = r;
    t.group = group;
    t.ctx = ctx;
    t.retained = retained;
    return hp_domtree_group_tops(tree, ngroups, group_of, add_top, &t, cp, err);
}
