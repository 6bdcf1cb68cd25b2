/* The exact dominator tree of everything reachable from a root set, with
 * retained sizes and counts, by Semi-NCA (Georgiadis 2005): iterative
 * throughout, so a 10^7-long linked list needs no deep C stack.
 *
 * The flow graph is `g` plus a virtual root whose successors are the roots,
 * in the order given, plus the spec's extra edges (hp_reach: a thread
 * object to the objects its stack holds, which are then no roots).  Vertex
 * v is dominated by d when every path from the virtual root to v passes
 * through d; idom(v) is the closest such d; the retained set of v is what
 * becomes unreachable when v is removed, i.e. v's subtree in the dominator
 * tree.
 *
 * Phases, in DFS-preorder space (numbers 1..N-1 for the reachable
 * vertices, 0 for the virtual root): a DFS numbers the vertices; the
 * predecessor graph is built in preorder numbers, after which the vertex ->
 * preorder map is dropped; semidominators, last vertex first, with path
 * compression over one (ancestor, best) pair per vertex; each vertex's DFS
 * parent and semidominator then go into its own predecessor row, which is
 * no longer read, for the NCA pass that computes idom in place of the
 * pairs; results are moved to vertex space and the retained sizes summed,
 * every vertex before its dominator.
 *
 * Memory, for n vertices of which N are reachable, with M edges out of
 * them (g not counted; N ~ n and M ~ 2.1 N on a heap):
 *   result        16 B per vertex: idom 4, count 4, retained 8 (8 B without sizes)
 *   peak          16 B per reachable vertex + 4 B per reachable edge:
 *                 predecessors (4 + 4), the pairs (8), preorder -> vertex (4)
 *                 = 24.4 B per vertex at M = 2.1 N
 *   peak, lean    max(12 N + 4 M, 4 N + 16 n) B: the preorder -> vertex map is
 *                 rebuilt by a second DFS instead of kept through the peak
 *                 = 20.4 B per vertex at M = 2.1 N
 *   DFS stack     at most 4 B per reachable edge while a DFS runs, which is
 *                 never at the peak (a DFS runs with 8 B per vertex besides).
 * Time: O(M log N) worst case for the path compression, near-linear on
 * heaps; the NCA walk is O(N * depth) in theory, a few steps per vertex in
 * practice.  The predecessor graph is built by two workers when asked. */
#ifndef HP_DOMINATORS_H
#define HP_DOMINATORS_H

#include "hp_graph.h"

/* idom of a vertex whose only dominator is the virtual root (every root,
 * and whatever two roots reach by disjoint paths). */
#define HP_DOM_VIRTUAL HP_MARK

/* Shallow sizes of vertices [first, first + count) into sizes[0..count).
 * Called in increasing order of `first`.  Nonzero stops (HP_E_ABORTED). */
typedef int (*hp_size_source)(void *ctx, uint32_t first, uint32_t count, uint64_t *sizes);

typedef struct hp_dominators {
    uint32_t n;
    uint32_t reachable;   /* vertices reachable from the roots */
    uint32_t *idom;       /* n: immediate dominator, HP_DOM_VIRTUAL, or HP_NONE if unreachable */
    uint64_t *retained;   /* n: retained size (0 if unreachable); NULL without a size source */
    uint32_t *count;      /* n: vertices retained, itself included (0 if unreachable) */
    uint64_t total;       /* sum of the sizes of reachable vertices (saturates at UINT64_MAX) */
    hp_alloc alloc;
} hp_dominators;

typedef struct hp_dominators_spec {
    const uint32_t *roots;   /* the virtual root's successors, in order: each < n, or HP_NONE
                              * (skipped); duplicates are harmless */
    size_t nroots;
    hp_size_source sizes;    /* NULL: no retained sizes */
    void *sizes_ctx;
    int lean;                /* 1: 4 B/vertex less at the peak for a second DFS (see above) */
    int threads;             /* 1 or 2 for the passes that split (the result is the same) */
    hp_extra_edges extra;    /* edges of the flow graph besides g's, sorted by source (zeroed: none);
                              * n / 8 B more while it runs when there are some */
} hp_dominators_spec;

/* Computes the dominators of `g` from spec->roots.  Retained sizes
 * saturate at UINT64_MAX.  On failure `d` holds nothing (hp_dominators_free
 * is still safe) and `err` says why: HP_E_USAGE (a root out of range:
 * err->offset is its index in roots; an extra edge out of range or out of
 * order: err->offset is the pair's index), HP_E_LIMIT (a vertex with 2^32
 * reachable in-edges or more), HP_E_NOMEM, HP_E_ABORTED (the checkpoint or
 * the size source). */
hp_code hp_dominators_build(hp_dominators *d, const hp_graph *g, const hp_dominators_spec *spec,
                            const hp_checkpoint *cp, hp_error *err);

void hp_dominators_free(hp_dominators *d);

/* The (at most) k vertices with the largest values[v] among vertices with
 * keep[v] != HP_NONE (all of them when keep is NULL), largest first, ties by
 * increasing vertex, into out[0..k).  Returns how many were written.
 * For the biggest retainers: values = d->retained, keep = d->idom.
 * Memory: out only.  Time: O(n log k). */
size_t hp_top_values(const uint64_t *values, const uint32_t *keep, uint32_t n, size_t k, uint32_t *out);

#endif
