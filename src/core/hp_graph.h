/* A directed graph in compressed sparse row (CSR) form, for heaps of 10^7 to
 * 10^9 objects.  Vertices are uint32_t 0..n-1; the out-edges of a vertex
 * are one contiguous row of 4-byte targets, in the order the edge source
 * gave them (field order: it makes paths stable).  Knows nothing of HPROF.
 *
 * Memory: 4 bytes per edge, and 4 + 8 / 2^shift bytes per vertex for the
 * row offsets (shift is 16 unless some 65,536 consecutive vertices hold
 * 2^32 edges or more between them), i.e. ~4 B/vertex + 4 B/edge.
 *
 * Vocabulary shared with hp_dominators.h and hp_paths.h: HP_NONE, the
 * checkpoint callback, and vertex errors (hp_error.tag == HP_TAG_VERTEX,
 * hp_error.offset = the vertex). */
#ifndef HP_GRAPH_H
#define HP_GRAPH_H

#include "hp_common.h"

/* "No vertex".  Vertex ids are below HP_MARK, which callers and the graph
 * algorithms use as a second marker (a root, the virtual root). */
#define HP_NONE 0xFFFFFFFFu
#define HP_MARK 0xFFFFFFFEu
#define HP_MAX_VERTICES HP_MARK /* n <= HP_MAX_VERTICES, so ids are < HP_MARK */

/* Lets a caller stop a long computation (Ctrl-C).  `fn` is called from the
 * calling thread about every HP_CHECKPOINT_WORK vertices + edges of work;
 * a nonzero return stops the computation, which frees everything it
 * allocated and returns HP_E_ABORTED. */
typedef struct hp_checkpoint {
    int (*fn)(void *ctx);
    void *ctx;
} hp_checkpoint;

#define HP_CHECKPOINT_WORK (1u << 22)

/* Counts work and calls the checkpoint when enough was done. */
typedef struct hp_pacer {
    const hp_checkpoint *cp; /* may be NULL */
    uint64_t work;
} hp_pacer;

/* Adds `units` of work; nonzero when the checkpoint asked to stop. */
static inline int hp_pace(hp_pacer *p, uint64_t units)
{
    p->work += units;
    if (p->work < HP_CHECKPOINT_WORK)
        return 0;
    p->work = 0;
    return p->cp && p->cp->fn && p->cp->fn(p->cp->ctx) != 0;
}

/* Fill `err` and return `code`: a failure about vertex `v`; or, for
 * HP_E_NOMEM and HP_E_ABORTED, one about no vertex in particular
 * (err->offset = UINT64_MAX). */
hp_code hp_vertex_fail(hp_error *err, hp_code code, uint64_t v, const char *detail);
hp_code hp_graph_stop(hp_error *err, hp_code code);

/* count * size bytes from `alloc` (at least 1), or NULL (also when the
 * product overflows size_t). */
void *hp_array_new(const hp_alloc *alloc, uint64_t count, size_t size);

/* Row offsets: row v starts at base[v >> shift] + rel[v] and ends where row
 * v + 1 starts (rel has n + 1 entries).  Each block of 2^shift vertices
 * holds fewer than 2^32 edges, so rel fits 4 bytes while the edge count
 * needs 8. */
typedef struct hp_rows {
    uint32_t *rel;  /* n + 1 */
    uint64_t *base; /* (n >> shift) + 1 */
    unsigned shift;
} hp_rows;

static inline uint64_t hp_row_start(const hp_rows *r, uint32_t v) { return r->base[v >> r->shift] + r->rel[v]; }

typedef struct hp_graph {
    uint32_t n;      /* vertices */
    uint64_t m;      /* edges */
    hp_rows rows;
    uint32_t *edges; /* m targets, row after row */
    hp_alloc alloc;
} hp_graph;

/* The out-edges of v (< n): *degree targets at the returned pointer. */
static inline const uint32_t *hp_graph_row(const hp_graph *g, uint32_t v, uint32_t *degree)
{
    uint64_t start = hp_row_start(&g->rows, v);
    *degree = (uint32_t)(hp_row_start(&g->rows, v + 1) - start);
    return g->edges + start;
}

/* ---- Building from an edge source ----
 *
 * The source is called with ranges of vertices [first, first + count) (in
 * increasing order on each thread), twice over the whole graph (a counting
 * pass, then a filling pass), and must give the same edges both times.  For each vertex
 * of the range, in order, it calls hp_edge_put() once per out-edge and then
 * hp_edge_end_vertex().  It returns 0, or nonzero to stop the build
 * (HP_E_ABORTED, keeping its own reason).  Targets must be < n, or
 * HP_EDGE_HOLE: an edge the source puts without a target (one whose target
 * turned out to be missing), dropped from the rows.  So a source need not
 * look its targets up twice: while hp_edge_counting() it may put any target
 * for an edge it has not resolved, and put a hole for it in the filling pass
 * if it is missing.  An edge's position in its row is its rank among the
 * edges the source put for that vertex, holes left out. */
enum { HP_SINK_OK, HP_SINK_TARGET, HP_SINK_MISMATCH, HP_SINK_TOO_MANY };

#define HP_EDGE_HOLE UINT32_MAX

typedef struct hp_edge_sink {
    /* Private to hp_graph.c and hp_edge_put. */
    uint32_t *dst;       /* filling: the range's slice of the edge array; NULL when counting */
    uint64_t len, cap;   /* edges put so far in this range; room in dst */
    uint64_t origin;     /* filling: offset of dst in the edge array */
    uint64_t row_begin;  /* len when the current vertex began */
    uint32_t n;          /* targets must be below */
    uint32_t vertex;     /* the vertex the next hp_edge_end_vertex() closes */
    uint32_t end;        /* first vertex after the range */
    uint32_t bad_vertex; /* where `bad` was found */
    int bad;             /* HP_SINK_* */
    uint64_t holes;      /* filling: HP_EDGE_HOLE edges put */
    hp_rows *rows;
} hp_edge_sink;

/* Whether this is the counting pass, whose targets are not kept. */
static inline int hp_edge_counting(const hp_edge_sink *s) { return s->dst == NULL; }

static inline void hp_edge_put(hp_edge_sink *s, uint32_t target)
{
    if (s->len < s->cap)
        s->dst[s->len] = target;
    if (target >= s->n) {
        if (target == HP_EDGE_HOLE)
            s->holes++;
        else if (!s->bad) {
            s->bad = HP_SINK_TARGET;
            s->bad_vertex = s->vertex;
        }
    }
    s->len++;
}

void hp_edge_end_vertex(hp_edge_sink *s);

typedef int (*hp_edge_source)(void *ctx, uint32_t first, uint32_t count, hp_edge_sink *sink);

typedef struct hp_graph_source {
    hp_edge_source edges;
    void *ctx;
    int threads; /* 2: `edges` may run on two threads at once (for disjoint
                  * ranges, each range still whole on one thread): for a
                  * source that is thread-safe.  0 or 1: one thread. */
} hp_graph_source;

/* Builds `g` over vertices 0..n-1 (n <= HP_MAX_VERTICES) from `source`.
 * The result does not depend on source->threads.  On failure `g` holds
 * nothing (hp_graph_free is still safe) and `err` says why: HP_E_USAGE for
 * a target >= n or a source whose passes disagree (the vertex is
 * err->offset), HP_E_LIMIT for a vertex with 2^32 edges or more,
 * HP_E_NOMEM, HP_E_ABORTED.
 * Memory: the graph itself; nothing else.  Time: two calls of the source
 * per vertex range, O(n + m) besides. */
hp_code hp_graph_build(hp_graph *g, uint32_t n, const hp_graph_source *source, const hp_alloc *alloc,
                       const hp_checkpoint *cp, hp_error *err);

/* Edges a computation takes besides a graph's own, a few of them: pairs
 * (from, to) of vertices, pairs[2k] -> pairs[2k + 1] for k < count, sorted
 * by `from` (a thread object to the objects its stack holds, for the
 * dominators of hp_reach).  count 0: none. */
typedef struct hp_extra_edges {
    const uint32_t *pairs;
    size_t count;
} hp_extra_edges;

/* The transpose of `g` (an edge u -> t becomes t -> u), optionally
 * renumbered: `map` (NULL for the identity, and then t_n is ignored) gives
 * each vertex of g its vertex in `t` (< t_n), or HP_NONE to drop it with
 * its edges.  Each row of `t` lists its predecessors by increasing vertex
 * of g, each as often as the edge occurs, then those of the `extra` edges
 * (NULL: none) in their order, as if g had them too.  `threads` (1 or 2)
 * split the work by halves of the vertices, without changing the result.
 * HP_E_USAGE if map sends a vertex to t_n or beyond, or an extra edge
 * names a vertex of g's n or beyond (err->offset is the vertex),
 * HP_E_LIMIT if a vertex gets 2^32 predecessors or more.
 * Memory: `t` (4 B/vertex + 4 B/edge kept), and with a map 4 B per vertex
 * of g while counting.  Time: two passes over g's edges and the extra
 * ones, O(n + m + extra). */
hp_code hp_graph_transpose(hp_graph *t, const hp_graph *g, const hp_extra_edges *extra, const uint32_t *map,
                           uint32_t t_n, int threads, const hp_checkpoint *cp, hp_error *err);

/* Bytes held by g's arrays. */
uint64_t hp_graph_bytes(const hp_graph *g);

void hp_graph_free(hp_graph *g);

/* ---- Bit sets over vertices (one bit each) ---- */

static inline int hp_bit(const uint64_t *bits, uint32_t i) { return (int)(bits[i >> 6] >> (i & 63)) & 1; }
static inline void hp_bit_set(uint64_t *bits, uint32_t i) { bits[i >> 6] |= (uint64_t)1 << (i & 63); }
static inline void hp_bit_clear(uint64_t *bits, uint32_t i) { bits[i >> 6] &= ~((uint64_t)1 << (i & 63)); }

/* A zeroed bit set for n bits, or NULL. */
uint64_t *hp_bits_new(const hp_alloc *alloc, uint64_t n);

/* Bytes of a bit set for n bits. */
static inline uint64_t hp_bits_bytes(uint64_t n) { return ((n + 63) >> 6) * 8; }

#endif
