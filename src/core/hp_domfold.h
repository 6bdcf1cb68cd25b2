/* The dominator tree folded by a key per vertex (Perfetto's and AHAT's
 * "class tree" when the key is the class): a node is a path of keys from
 * the virtual root down the dominator tree, and holds every vertex whose
 * own key ends that path.  Node 0 is the virtual root (no key, no vertex);
 * a vertex v sits in the child of its immediate dominator's node keyed by
 * key(v) (the root's child for a vertex only the virtual root dominates).
 *
 * The rule of the sizes: each vertex's size counts once, in its own node;
 * a node's retained size is its shallow size plus its children's retained
 * sizes.  So it is the size of the union of its vertices' subtrees -- not
 * the sum of their retained sizes, which counts a subtree twice when one
 * vertex of the node dominates another (a chain of one class). Node 0's
 * retained size is every vertex's size in the tree.
 *
 * Memory: the nodes (32 B each, 4 B per top vertex kept, and a table of
 * 4 B per slot, at least two slots a node) and, while it runs, 8 B per vertex (a breadth-first queue
 * and each queued vertex's node).  Time: linear in the vertices.  Nothing
 * recurses: a 10^7-deep chain folds like any other tree. */
#ifndef HP_DOMFOLD_H
#define HP_DOMFOLD_H

#include "hp_domtree.h"

/* What the fold asks of each vertex of the tree. */
typedef struct hp_domfold_keys {
    uint32_t (*key)(void *ctx, uint32_t v);  /* v's key: any value but HP_NONE */
    uint64_t (*size)(void *ctx, uint32_t v); /* v's shallow size */
    uint64_t (*rank)(void *ctx, uint32_t v); /* the order of a node's top vertices (NULL: no tops kept) */
    void *ctx;
} hp_domfold_keys;

typedef struct hp_domfold {
    uint32_t count;       /* nodes, parents before children */
    uint32_t *parent;     /* node -> its parent node; HP_NONE for node 0 */
    uint32_t *key;        /* node -> the key of its vertices; HP_NONE for node 0 */
    uint64_t *objects;    /* node -> its vertices */
    uint64_t *shallow;    /* node -> their sizes */
    uint64_t *retained;   /* node -> its shallow size and its children's retained sizes */
    uint32_t top;         /* vertices kept per node in tops */
    uint32_t *tops;       /* node k -> tops[k * top ..]: its `top` vertices of largest rank, largest first
                           * (ties by lower index), HP_NONE after the last */
    hp_alloc alloc;
} hp_domfold;

/* Folds `t`, keeping the `top` (<= HP_DOMFOLD_TOPS; 0 without keys->rank)
 * vertices of largest rank of each node.  On failure `out` holds nothing (hp_domfold_free is still
 * safe): HP_E_NOMEM, HP_E_USAGE (a key of HP_NONE: err->offset is the
 * vertex; more than 2^32 - 2 nodes; top too large), HP_E_ABORTED. */
#define HP_DOMFOLD_TOPS 64
hp_code hp_domfold_build(hp_domfold *out, const hp_domtree *t, const hp_domfold_keys *keys, uint32_t top,
                         const hp_alloc *alloc, const hp_checkpoint *cp, hp_error *err);
void hp_domfold_free(hp_domfold *f);

/* The vertices of `node` (< f->count), found again from the root down its
 * path of keys (no per-vertex memory kept between calls): *out (from
 * f->alloc, the caller frees it) holds *count vertices, each row's order
 * kept, shallower rows first.  Time: linear in the vertices of the nodes
 * on its path and their children.  Errors: HP_E_USAGE (node out of range),
 * HP_E_NOMEM, HP_E_ABORTED. */
hp_code hp_domfold_members(const hp_domfold *f, const hp_domtree *t, const hp_domfold_keys *keys, uint32_t node,
                           uint32_t **out, uint32_t *count, const hp_checkpoint *cp, hp_error *err);

#endif
