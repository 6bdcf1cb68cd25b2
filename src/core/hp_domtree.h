/* The dominator tree made navigable: the children of every vertex (the
 * vertices it immediately dominates) as one CSR built from an idom array
 * (hp_dominators.h), an iterative depth-first walk over it, and the union
 * rule for groups of vertices.
 *
 * The union rule.  The retained set of v is its subtree; for a group G of
 * vertices, the union of their retained sets is the union of the subtrees
 * of the members that have no other member among their dominators (every
 * other member's subtree lies inside one of theirs, and two such subtrees
 * are disjoint).  So the retained size of a group is the sum of the
 * retained sizes of those "top" members: no byte counted twice.  One walk
 * finds the top members of every group at once, keeping per group the
 * number of its members on the walk's current branch.
 *
 * Memory: 8 B per vertex kept (4 for the row starts, 4 for the children);
 * while building, 12 B per entry of the widest row (its sort); while a
 * walk runs, 8 B per level of the deepest branch.  Nothing
 * recurses: a 10^7-deep chain walks like any other tree. */
#ifndef HP_DOMTREE_H
#define HP_DOMTREE_H

#include "hp_dominators.h"

typedef struct hp_domtree {
    uint32_t n;
    uint32_t *first;  /* n + 2: v's children are kids[first[v] .. first[v + 1]); v = n: the virtual root's */
    uint32_t *kids;   /* every vertex whose idom is not HP_NONE, grouped by parent */
    hp_alloc alloc;
} hp_domtree;

/* Builds `t` from idom[0..n) (a vertex, HP_DOM_VIRTUAL, or HP_NONE for an
 * unreachable vertex, which is in no row).  With `order`, each row is
 * sorted by order[v] descending, ties by increasing v (order = retained
 * sizes: largest first); without, rows list vertices increasingly.  On
 * failure `t` holds nothing (hp_domtree_free is still safe): HP_E_USAGE
 * (an idom >= n: err->offset is the vertex), HP_E_NOMEM, HP_E_ABORTED.
 * Time: O(n) and the sorts: a radix sort for rows of more than 16 (its
 * passes: the bits of the row's largest key and of its width, by 8). */
hp_code hp_domtree_build(hp_domtree *t, const uint32_t *idom, uint32_t n, const uint64_t *order, const hp_alloc *alloc,
                         const hp_checkpoint *cp, hp_error *err);
void hp_domtree_free(hp_domtree *t);

/* The children of v (< n), or of the virtual root for v = HP_DOM_VIRTUAL:
 * *count vertices at the returned pointer. */
static inline const uint32_t *hp_domtree_children(const hp_domtree *t, uint32_t v, uint32_t *count)
{
    uint32_t row = v == HP_DOM_VIRTUAL ? t->n : v;
    *count = t->first[row + 1] - t->first[row];
    return t->kids + t->first[row];
}

/* A depth-first walk from the virtual root (not visited itself): enter(v)
 * before v's children, leave(v) after them, children in row order.  Either
 * may be NULL. */
typedef struct hp_domtree_visitor {
    void (*enter)(void *ctx, uint32_t v);
    void (*leave)(void *ctx, uint32_t v);
    void *ctx;
} hp_domtree_visitor;

/* Errors: HP_E_NOMEM (the walk's stack), HP_E_ABORTED. */
hp_code hp_domtree_walk(const hp_domtree *t, const hp_domtree_visitor *visitor, const hp_checkpoint *cp,
                        hp_error *err);

/* The union rule for a partition of (some of) the vertices into groups
 * 0..ngroups-1 (ngroups < HP_GROUP_SHADOW): group[v] is v's group, or
 * HP_NONE for none.  top(ctx, v, g) is called once for each member v of
 * group g none of whose dominators is in g, in walk order.  A group or'ed
 * with HP_GROUP_SHADOW makes v a member that is never a top itself but
 * still hides the members it dominates (VisualVM's class objects in
 * java.lang.Class's dominance test, hp_reach_tree.h).  Memory: 4 B per
 * group and the walk.  Errors: HP_E_USAGE (a group >= ngroups: err->offset
 * is the vertex), HP_E_NOMEM, HP_E_ABORTED. */
#define HP_GROUP_SHADOW 0x80000000u
typedef void (*hp_group_top)(void *ctx, uint32_t v, uint32_t group);
hp_code hp_domtree_group_tops(const hp_domtree *t, const uint32_t *group, uint32_t ngroups, hp_group_top top,
                              void *ctx, const hp_checkpoint *cp, hp_error *err);

#endif
