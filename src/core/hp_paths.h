/* Shortest paths from GC roots: a breadth-first search with Shark's two
 * queues (PrioritizingShortestPathFinder), and two more to say why an
 * object has no strong path.
 *
 * Every root and every edge is NORMAL, LOW, IGNORE or WEAK.  The search
 * first runs as a plain BFS over NORMAL roots and edges, in root order and
 * row order, parking what it reaches through LOW ones in a second queue;
 * only when the normal queue is empty does it go on from the parked
 * vertices, and from then on everything it reaches counts as reached
 * through LOW.  A vertex parked through LOW and reached later through
 * NORMAL (in the first phase) is promoted: it takes the NORMAL parent and
 * the normal queue.  So a vertex gets a path crossing a LOW edge or root
 * ("library leak", "Java local") only when no NORMAL path reaches it, and
 * the shortest such.  IGNORE and WEAK edges and roots are not traversed,
 * unless the spec asks to `explain`: then, once no path of the first two
 * kinds is left to find, the search goes on the same way across IGNORE
 * edges (a third queue), then WEAK ones (a fourth), so that each vertex's
 * tier (HP_TIER_*) says which is the best kind of path reaching it: one
 * crossing only NORMAL edges, a LOW one, an IGNORE one (a reference a
 * matcher excludes), a WEAK one (a weak referent); or none.  Explaining
 * changes no path of the first two tiers.
 *
 * Per vertex the search keeps one visited bit, two tier bits, the parent
 * and the position of the edge in the parent's row, so a caller re-derives
 * the names of a path (field, array index) only for the paths it reports.
 * Memory: 8.375 B per vertex kept (three bits, parent and edge), 0.125
 * more with targets, and while it runs four queues of 4 B per waiting
 * vertex (rings that double when full: at worst 8 B per vertex of the
 * graph each).  Time: O(n + m), and one classify call per root and per
 * edge of a `special` vertex (of every vertex when special is NULL), one
 * weak call per vertex expanded when explaining. */
#ifndef HP_PATHS_H
#define HP_PATHS_H

#include "hp_graph.h"

enum { HP_EDGE_NORMAL = 0, HP_EDGE_LOW = 1, HP_EDGE_IGNORE = 2, HP_EDGE_WEAK = 3 };

/* A visited vertex's tier: the worst class of edge or root its path
 * crosses (HP_TIER_LOW: a LOW one, and no IGNORE or WEAK one...). */
enum { HP_TIER_NORMAL = 0, HP_TIER_LOW = 1, HP_TIER_IGNORED = 2, HP_TIER_WEAK = 3 };

/* The class of edge number `index` of vertex v, to `target`: HP_EDGE_*
 * (any other value counts as IGNORE).  The roots are the edges of a
 * virtual root: for root number `index` of the spec, v is HP_MARK. */
typedef int (*hp_classify_edge)(void *ctx, uint32_t v, uint32_t index, uint32_t target);

/* Explaining: v's weak edge that is not in the graph (a Reference's
 * referent), as 1 and *target (< n), or 0 for none.  Its position in the
 * path's edges is HP_EDGE_OUTSIDE. */
typedef int (*hp_weak_edge)(void *ctx, uint32_t v, uint32_t *target);
#define HP_EDGE_OUTSIDE 0xFFFFFFFFu

typedef struct hp_bfs_spec {
    const uint32_t *roots;          /* in the order to search them; HP_NONE entries are skipped */
    size_t nroots;                  /* < 2^32 */
    hp_classify_edge classify;      /* NULL: every root and edge is NORMAL */
    void *classify_ctx;
    const uint64_t *special;        /* bit set over vertices: classify is asked about the roots
                                     * and the edges of these vertices only (the others are
                                     * NORMAL); NULL: about every edge */
    const uint64_t *leaves;         /* bit set: vertices reached but never expanded (watched
                                     * objects, so no path goes through another); NULL: none */
    const uint32_t *targets;        /* stop once each of these (< n, or HP_NONE: skipped) has
                                     * left its queue, i.e. has its final path; NULL: never */
    size_t ntargets;
    int explain;                    /* also traverse IGNORE, then WEAK edges and roots (see above) */
    hp_weak_edge weak;              /* explaining: weak edges outside the graph; NULL: none */
    void *weak_ctx;
} hp_bfs_spec;

typedef struct hp_bfs {
    uint32_t n;
    uint32_t visited_count;
    uint32_t targets_found; /* distinct targets whose path is final */
    int complete;           /* 1: ran to the end; 0: stopped once the targets were final */
    uint64_t *visited;      /* bit set */
    uint64_t *low, *high;   /* bit sets: a visited vertex's tier is low + 2 * high */
    uint32_t *parent;       /* visited v: the vertex it was reached from, HP_MARK for a root */
    uint32_t *edge;         /* visited v: position of the edge in parent's row, or of the root in roots */
    hp_alloc alloc;
} hp_bfs;

/* Runs the search over `g`.  Entries of parent/edge are meaningful only for
 * visited vertices.  After an early stop, the paths of the targets are those
 * a full search gives; other visited vertices have a real path, maybe not
 * that one.  On failure `b` holds nothing (hp_bfs_free is still safe):
 * HP_E_USAGE (a root or target out of range: err->offset is its index),
 * HP_E_NOMEM, HP_E_ABORTED. */
hp_code hp_bfs_run(hp_bfs *b, const hp_graph *g, const hp_bfs_spec *spec, const hp_checkpoint *cp, hp_error *err);

void hp_bfs_free(hp_bfs *b);

/* A visited vertex's tier (HP_TIER_*). */
static inline int hp_bfs_tier(const hp_bfs *b, uint32_t v) { return hp_bit(b->low, v) | hp_bit(b->high, v) << 1; }

/* The path to `target`, root first: vertices[0] is the root, vertices[len-1]
 * the target; edges[0] the root's position in roots, edges[i] the position
 * of the edge vertices[i-1] -> vertices[i] in its row (HP_EDGE_OUTSIDE: a
 * weak edge).  Returns len (0 when target was not visited); writes only
 * when len <= cap.  Time: O(len). */
uint32_t hp_bfs_path(const hp_bfs *b, uint32_t target, uint32_t *vertices, uint32_t *edges, uint32_t cap);

/* The paths of some targets, kept after the search: the tree their union
 * makes, each node a vertex on one of them.  Nodes are numbered so that a
 * parent comes before its children; a root's parent is HP_NONE. */
typedef struct hp_bfs_tree {
    uint32_t count;      /* nodes */
    uint32_t *vertex;    /* node -> its vertex */
    uint32_t *parent;    /* node -> its parent's node, or HP_NONE */
    uint32_t *edge;      /* node -> as hp_bfs.edge */
    uint8_t *tier;       /* node -> its vertex's tier */
    uint32_t *node;      /* target number -> its node, HP_NONE when not visited */
    size_t ntargets;
    hp_alloc alloc;
} hp_bfs_tree;

/* Moves the paths of `targets` (< n, or HP_NONE) out of the search `b`
 * into `t`, consuming b (its edge array is reused: only hp_bfs_free may
 * follow).  Memory: 13 B per node kept, and n / 8 bytes while it runs.
 * Time: O(n / 64 + nodes + ntargets).
 * On failure `t` holds nothing (hp_bfs_tree_free is still safe):
 * HP_E_USAGE (a target out of range), HP_E_NOMEM, HP_E_ABORTED. */
hp_code hp_bfs_tree_build(hp_bfs_tree *t, hp_bfs *b, const uint32_t *targets, size_t ntargets,
                          const hp_checkpoint *cp, hp_error *err);
void hp_bfs_tree_free(hp_bfs_tree *t);

/* The path of node k, root first, into nodes[0..len) (len <= cap); its
 * length, whatever cap.  Time: O(len). */
uint32_t hp_bfs_tree_path(const hp_bfs_tree *t, uint32_t k, uint32_t *nodes, uint32_t cap);

#endif
