/* The exact dominator tree of everything reachable from a root set, with
 * retained sizes and counts, by Semi-NCA (Georgiadis 2005): iterative
 * throughout, so a 10^7-long linked list needs no deep C stack.
 *
 * The flow graph is `g` plus a virtual root whose successors are the roots,
 * in the order given.  Vertex v is dominated by d when every path from the
 * virtual root to v passes through d; idom(v) is the closest such d; the
 * retained set of v is what becomes unreachable when v is removed, i.e. v's
 * subtree in the dominator tree.
 *
 * Memory, n vertices and m edges of which the reachable part is N vertices
 * and M edges (g itself not counted):
 *   result            16 B/vertex (idom 4, retained 8, count 4; 8 without sizes)
 *   peak while built  max(12 B/N + 4 B/M, 20 B/n) + a DFS stack of 8 B per
 *                     level of depth while a DFS runs (one of 4 B/N arrays
 *                     is live then: far below the peak unless the graph is one
 *                     long chain, where it reaches 16 B/vertex).
 * i.e. about 12 + 4 M/N B/vertex for heap-like graphs (20.4 at M = 2.1 N).
 * Phases: DFS numbering (vertex -> preorder, 4 B/n); predecessors in
 * preorder space (4 B/N + 4 B/M; the numbering is dropped); semidominators
 * (+ 8 B/N; each vertex's DFS parent and semidominator are then kept in its
 * own predecessor row, which is no longer read); NCA (idom in place of the
 * path-compression links); a second DFS gives preorder -> vertex (4 B/N);
 * results in vertex space.
 * Time: O(M log N) worst case for the path compression, near-linear on heaps;
 * the NCA walk is O(N * depth) in theory, a few steps per vertex in practice. */
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
} hp_dominators_spec;

/* Computes the dominators of `g` from spec->roots.  Retained sizes
 * saturate at UINT64_MAX.  On failure `d` holds nothing (hp_dominators_free
 * is still safe) and `err` says why: HP_E_USAGE (a root out of range:
 * err->offset is its index in roots), HP_E_LIMIT (a vertex with 2^32
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
