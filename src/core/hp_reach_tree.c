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
    uint64_t *retained;
} totals;

static void add_top(void *ctx, uint32_t v, uint32_t g)
{
    totals *t = ctx;
    int64_t size = hp_reach_retained(t->r, v); /* -1 (visualvm) adds nothing */
    if (size > 0)
        t->retained[g] += (uint64_t)size;
}

/* Under hprofkit, for a reachable v, its retained size less its
 * children's: the array in memory rather than an array length in the
 * dump, which is a page fault away on a big dump. */
uint64_t hp_reach_tree_shallow(const hp_reach *r, const hp_domtree *tree, uint32_t v)
{
    const uint64_t *retained = r->dom.retained;
    uint64_t size;
    uint32_t count, k;
    const uint32_t *kids;
    if (r->semantics != HP_REACH_HPROFKIT || r->dom.idom[v] == HP_NONE || retained[v] == UINT64_MAX)
        return hp_heap_shallow_size(r->heap, v);
    kids = hp_domtree_children(tree, v, &count);
    size = retained[v];
    for (k = 0; k < count; k++)
        size -= retained[kids[k]];
    return size;
}

hp_code hp_reach_group_totals(hp_reach *r, const uint32_t *group, uint32_t ngroups, uint64_t *objects,
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
    t.r = r;
    t.retained = retained;
    /* The walk checks the groups first: no count runs past the arrays. */
    rc = hp_domtree_group_tops(tree, group, ngroups, add_top, &t, cp, err);
    if (rc != HP_OK)
        return rc;
    /* Members and shallow sizes: every object, reachable or not. */
    for (v = 0; v < r->n; v++) {
        uint32_t g = group[v];
        if (hp_pace(&pacer, 1))
            return hp_graph_stop(err, HP_E_ABORTED);
        if (g == HP_NONE || (g & HP_GROUP_SHADOW))
            continue;
        objects[g]++;
        shallow[g] += hp_reach_tree_shallow(r, tree, v);
    }
    return HP_OK;
}
