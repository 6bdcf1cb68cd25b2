/* CSR graph: build from an edge source in two passes, transpose. */
#include "hp_graph.h"

#include <string.h>

#include "hp_parallel.h"

/* Vertices per call of the edge source: big enough to amortise the call,
 * small enough that the checkpoint gets a turn often. */
#define SOURCE_RANGE (1u << 16)

/* Edges one block of rows may hold: offsets inside a block take 4 bytes.
 * The C tests lower it to run every graph through narrow blocks. */
#ifndef HP_ROW_BLOCK_EDGES
#define HP_ROW_BLOCK_EDGES UINT32_MAX
#endif

hp_code hp_vertex_fail(hp_error *err, hp_code code, uint64_t v, const char *detail)
{
    return hp_fail(err, code, v, HP_TAG_VERTEX, 0, 0, 0, detail);
}

hp_code hp_graph_stop(hp_error *err, hp_code code)
{
    return hp_fail(err, code, UINT64_MAX, HP_TAG_VERTEX, 0, 0, 0,
                   code == HP_E_NOMEM ? "out of memory" : "stopped by the caller");
}

void *hp_array_new(const hp_alloc *alloc, uint64_t count, size_t size)
{
    if (count > SIZE_MAX / size)
        return NULL;
    return alloc->malloc_fn(count ? (size_t)count * size : 1);
}

uint64_t *hp_bits_new(const hp_alloc *alloc, uint64_t n)
{
    uint64_t *bits = hp_array_new(alloc, (n + 63) >> 6, 8);
    if (bits)
        memset(bits, 0, (size_t)hp_bits_bytes(n));
    return bits;
}

/* The largest shift <= 16 for which every block of 2^shift vertices has
 * at most HP_ROW_BLOCK_EDGES edges.  Shift 0 always fits: a block is then
 * one vertex, whose offset in it is 0 and whose degree is < 2^32. */
static unsigned pick_shift(const uint32_t *degree, uint32_t n)
{
    unsigned shift;
    for (shift = 16; shift > 0; shift--) {
        uint32_t mask = (1u << shift) - 1, v;
        uint64_t sum = 0;
        for (v = 0; v < n; v++) {
            if ((v & mask) == 0)
                sum = 0;
            sum += degree[v];
            if (sum > HP_ROW_BLOCK_EDGES)
                break;
        }
        if (v == n)
            return shift;
    }
    return 0;
}

/* Turns the degrees in r->rel[0..n) into row offsets: starts, or with
 * `ends` the end of each row (a cursor to fill rows backwards, which leaves
 * the starts).  Allocates r->base.  The edge count, or UINT64_MAX when
 * memory runs out. */
static uint64_t rows_from_degrees(hp_rows *r, uint32_t n, const hp_alloc *alloc, int ends)
{
    unsigned shift = pick_shift(r->rel, n);
    uint32_t mask = (1u << shift) - 1, v;
    uint64_t total = 0;

    r->shift = shift;
    r->base = hp_array_new(alloc, ((uint64_t)n >> shift) + 1, 8);
    if (!r->base)
        return UINT64_MAX;
    for (v = 0; v < n; v++) {
        uint32_t degree = r->rel[v];
        if ((v & mask) == 0)
            r->base[v >> shift] = total;
        total += degree;
        r->rel[v] = (uint32_t)((ends ? total : total - degree) - r->base[v >> shift]);
    }
    if ((n & mask) == 0)
        r->base[n >> shift] = total;
    r->rel[n] = (uint32_t)(total - r->base[n >> shift]);
    return total;
}

void hp_edge_end_vertex(hp_edge_sink *s)
{
    uint64_t degree = s->len - s->row_begin;
    if (s->bad)
        return;
    if (s->vertex >= s->end) {
        s->bad = HP_SINK_MISMATCH;
        s->bad_vertex = s->end;
        return;
    }
    if (!s->dst) {
        if (degree > UINT32_MAX) {
            s->bad = HP_SINK_TOO_MANY;
            s->bad_vertex = s->vertex;
            return;
        }
        s->rows->rel[s->vertex] = (uint32_t)degree;
    } else if (s->origin + s->len != hp_row_start(s->rows, s->vertex + 1)) {
        s->bad = HP_SINK_MISMATCH;
        s->bad_vertex = s->vertex;
        return;
    }
    s->row_begin = s->len;
    s->vertex++;
}

/* One call of the source for [first, first + count): counting degrees into
 * g->rows.rel, or (g->edges set) filling rows. */
static hp_code run_source(hp_graph *g, const hp_graph_source *source, uint32_t first, uint32_t count,
                          hp_pacer *pacer, uint64_t *holes, hp_error *err)
{
    hp_edge_sink s;
    memset(&s, 0, sizeof s);
    s.n = g->n;
    s.vertex = first;
    s.end = first + count;
    s.rows = &g->rows;
    if (g->edges) {
        s.origin = hp_row_start(&g->rows, first);
        s.dst = g->edges + s.origin;
        s.cap = hp_row_start(&g->rows, first + count) - s.origin;
    }
    if (source->edges(source->ctx, first, count, &s) != 0)
        return hp_graph_stop(err, HP_E_ABORTED);
    if (!s.bad && (s.vertex != s.end || (s.dst && s.len != s.cap))) {
        s.bad = HP_SINK_MISMATCH;
        s.bad_vertex = s.vertex;
    }
    switch (s.bad) {
    case HP_SINK_TARGET:
        return hp_vertex_fail(err, HP_E_USAGE, s.bad_vertex, "edge target out of range");
    case HP_SINK_TOO_MANY:
        return hp_vertex_fail(err, HP_E_LIMIT, s.bad_vertex, "2^32 out-edges or more");
    case HP_SINK_MISMATCH:
        return hp_vertex_fail(err, HP_E_USAGE, s.bad_vertex,
                              "edge source did not end each vertex once, or changed between passes");
    default:
        break;
    }
    if (hp_pace(pacer, count + s.len))
        return hp_graph_stop(err, HP_E_ABORTED);
    *holes += s.holes;
    return HP_OK;
}

/* What the workers of one parallel pass share.  Worker 0 (the calling
 * thread) alone calls the checkpoint; a worker that fails raises `stop`
 * and keeps its error; the error reported is that of the lowest worker
 * that failed (each worker's first failure is fixed by the input). */
typedef struct pass {
    hp_graph *g;             /* the graph being built, or the transpose */
    const hp_graph *from;    /* the transpose: the graph it comes from */
    const hp_extra_edges *extra; /* the transpose: edges it takes besides from's, or NULL */
    const hp_graph_source *source;
    const uint32_t *map;
    uint32_t *count;         /* the transpose: in-degrees in from's numbering */
    hp_pacer pacer;          /* worker 0's, over every pass of the call */
    int workers, stop;
    uint64_t holes[HP_MAX_WORKERS]; /* building: HP_EDGE_HOLE edges each worker filled */
    hp_code rc[HP_MAX_WORKERS];
    hp_error err[HP_MAX_WORKERS];
} pass;

static void pass_init(pass *p, int workers, const hp_checkpoint *cp)
{
    memset(p, 0, sizeof *p);
    p->workers = workers < 1 ? 1 : workers > HP_MAX_WORKERS ? HP_MAX_WORKERS : workers;
    p->pacer.cp = cp;
}

static void pass_fail(pass *p, int worker, hp_code rc)
{
    p->rc[worker] = rc;
    hp_flag_raise(&p->stop);
}

static hp_code pass_result(const pass *p, hp_error *err)
{
    int w;
    for (w = 0; w < p->workers; w++)
        if (p->rc[w] != HP_OK) {
            *err = p->err[w];
            return p->rc[w];
        }
    return HP_OK;
}

/* Worker 0 paces the call; the others only watch p->stop. */
static hp_pacer *pacer_of(pass *p, int worker, hp_pacer *none)
{
    none->cp = NULL;
    none->work = 0;
    return worker == 0 ? &p->pacer : none;
}

/* Runs `share` on p's workers; the pass's result. */
static hp_code run_pass(pass *p, void (*share)(void *ctx, int worker), hp_error *err)
{
    hp_parallel(p->workers, share, p);
    return pass_result(p, err);
}

/* With the degrees in g->rows.rel: the row offsets (ends: see
 * rows_from_degrees), the edge array, then the rows filled by `share`. */
static hp_code fill_rows(pass *p, hp_graph *g, int ends, void (*share)(void *ctx, int worker), hp_error *err)
{
    g->m = rows_from_degrees(&g->rows, g->n, &g->alloc, ends);
    if (g->m == UINT64_MAX || !(g->edges = hp_array_new(&g->alloc, g->m, 4)))
        return hp_graph_stop(err, HP_E_NOMEM);
    return run_pass(p, share, err);
}

/* The first vertex of `worker`'s share of 0..n-1 cut in p->workers parts. */
static uint32_t share_start(const pass *p, uint32_t n, int worker)
{
    return (uint32_t)((uint64_t)n * (uint32_t)worker / (uint32_t)p->workers);
}

/* Building: the worker takes every workers-th range of vertices. */
static void build_share(void *ctx, int worker)
{
    pass *p = ctx;
    hp_pacer none, *pacer = pacer_of(p, worker, &none);
    uint64_t first;
    for (first = (uint64_t)worker * SOURCE_RANGE; first < p->g->n && !hp_flag_get(&p->stop);
         first += (uint64_t)p->workers * SOURCE_RANGE) {
        uint32_t count = p->g->n - first < SOURCE_RANGE ? (uint32_t)(p->g->n - first) : SOURCE_RANGE;
        hp_code rc = run_source(p->g, p->source, (uint32_t)first, count, pacer, &p->holes[worker], &p->err[worker]);
        if (rc != HP_OK) {
            pass_fail(p, worker, rc);
            return;
        }
    }
}

/* Drops the HP_EDGE_HOLE edges from the filled rows: compacted in place,
 * their offsets rebuilt from the degrees left. */
static hp_code drop_holes(hp_graph *g, hp_error *err)
{
    uint64_t *old_base = g->rows.base, kept = 0, start = hp_row_start(&g->rows, 0), end, e;
    uint32_t v;
    for (v = 0; v < g->n; v++, start = end) {
        uint32_t degree = 0;
        end = hp_row_start(&g->rows, v + 1); /* rel[v + 1] is still the old offset */
        for (e = start; e < end; e++)
            if (g->edges[e] != HP_EDGE_HOLE) {
                g->edges[kept++] = g->edges[e];
                degree++;
            }
        g->rows.rel[v] = degree;
    }
    g->m = rows_from_degrees(&g->rows, g->n, &g->alloc, 0);
    g->alloc.free_fn(old_base);
    if (g->m == UINT64_MAX)
        return hp_graph_stop(err, HP_E_NOMEM);
    if (kept <= SIZE_MAX / 4) { /* the room of the holes back (a failed shrink keeps the old array) */
        uint32_t *edges = g->alloc.realloc_fn(g->edges, kept ? (size_t)kept * 4 : 1);
        if (edges)
            g->edges = edges;
    }
    return HP_OK;
}

hp_code hp_graph_build(hp_graph *g, uint32_t n, const hp_graph_source *source, const hp_alloc *alloc,
                       const hp_checkpoint *cp, hp_error *err)
{
    hp_code rc = HP_OK;
    uint64_t holes = 0;
    int w;
    pass p;

    memset(g, 0, sizeof *g);
    g->alloc = alloc ? *alloc : hp_default_alloc;
    g->n = n;
    if (n > HP_MAX_VERTICES)
        return hp_vertex_fail(err, HP_E_USAGE, n, "more vertices than a graph can number");
    g->rows.rel = hp_array_new(&g->alloc, (uint64_t)n + 1, 4);
    if (!g->rows.rel)
        goto nomem;
    pass_init(&p, source->threads, cp);
    p.g = g;
    p.source = source;
    /* Degrees into rows.rel, then rows, now that g->edges is set. */
    if ((rc = run_pass(&p, build_share, err)) != HP_OK)
        goto fail;
    memset(p.holes, 0, sizeof p.holes); /* the counting pass's are no holes */
    if ((rc = fill_rows(&p, g, 0, build_share, err)) != HP_OK)
        goto fail;
    for (w = 0; w < p.workers; w++)
        holes += p.holes[w];
    if (holes && (rc = drop_holes(g, err)) != HP_OK)
        goto fail;
    return HP_OK;
nomem:
    rc = hp_graph_stop(err, HP_E_NOMEM);
fail:
    hp_graph_free(g);
    return rc;
}

/* One more in-edge of v; 0, or -1 (the pass failed) at 2^32 of them. */
static int count_in_edge(pass *p, int worker, uint32_t v)
{
    if (p->count[v] == UINT32_MAX) {
        pass_fail(p, worker, hp_vertex_fail(&p->err[worker], HP_E_LIMIT, v, "2^32 in-edges or more"));
        return -1;
    }
    p->count[v]++;
    return 0;
}

/* Transposing, first pass: the in-degree of each vertex of p->from, counted
 * into p->count (the extra edges too), leaving out the edges of sources
 * that p->map drops.  The worker counts the targets of its share of the
 * vertices, over all rows: a sequential pass whose increments mostly stay
 * near the source, as heap edges do. */
static void count_share(void *ctx, int worker)
{
    pass *p = ctx;
    const hp_graph *g = p->from;
    hp_pacer none, *pacer = pacer_of(p, worker, &none);
    uint32_t lo = share_start(p, g->n, worker), hi = share_start(p, g->n, worker + 1), u;
    size_t e;
    for (u = 0; u < g->n; u++) {
        uint32_t degree, k;
        const uint32_t *row = hp_graph_row(g, u, &degree);
        if (p->map && p->map[u] == HP_NONE)
            continue;
        for (k = 0; k < degree; k++) {
            uint32_t v = row[k];
            if (v >= lo && v < hi && count_in_edge(p, worker, v) < 0)
                return;
        }
        if (hp_pace(pacer, (uint64_t)degree + 1)) {
            pass_fail(p, worker, hp_graph_stop(&p->err[worker], HP_E_ABORTED));
            return;
        }
        if ((u & 1023) == 0 && hp_flag_get(&p->stop))
            return;
    }
    for (e = 0; p->extra && e < p->extra->count; e++) {
        uint32_t from = p->extra->pairs[2 * e], to = p->extra->pairs[2 * e + 1];
        if (to >= lo && to < hi && !(p->map && p->map[from] == HP_NONE) && count_in_edge(p, worker, to) < 0)
            return;
    }
}

/* The rows a fill writes to are scattered: their cursors are fetched this
 * many edges ahead (a quarter less time for a heap-like graph). */
#define FILL_AHEAD 16

/* Transposing, second pass: rows filled backwards from their ends, the
 * extra edges first, then sources in decreasing order, so that each row
 * lists its predecessors in increasing order and then its extra ones.  The
 * worker fills the rows of its share of p->g. */
static void fill_share(void *ctx, int worker)
{
    pass *p = ctx;
    const hp_graph *g = p->from;
    const uint32_t *map = p->map, *targets = g->edges;
    uint32_t *edges = p->g->edges, *cursor = p->g->rows.rel;
    const uint64_t *base = p->g->rows.base;
    unsigned shift = p->g->rows.shift;
    hp_pacer none, *pacer = pacer_of(p, worker, &none);
    uint32_t lo = share_start(p, p->g->n, worker), hi = share_start(p, p->g->n, worker + 1), u;
    size_t k;
    for (k = p->extra ? p->extra->count : 0; k-- > 0;) {
        uint32_t from = p->extra->pairs[2 * k], to = p->extra->pairs[2 * k + 1];
        uint32_t pu = map ? map[from] : from, q = map ? map[to] : to;
        if (pu != HP_NONE && q >= lo && q < hi) /* HP_NONE excluded */
            edges[base[q >> shift] + --cursor[q]] = pu;
    }
    for (u = g->n; u-- > 0;) {
        uint64_t start = hp_row_start(&g->rows, u), end = hp_row_start(&g->rows, u + 1), e;
        uint32_t pu = map ? map[u] : u;
        if (pu == HP_NONE)
            continue;
        for (e = end; e-- > start;) {
            uint32_t q = map ? map[targets[e]] : targets[e];
            if (e >= FILL_AHEAD) {
                uint32_t ahead = map ? map[targets[e - FILL_AHEAD]] : targets[e - FILL_AHEAD];
                if (ahead - lo < hi - lo)
                    __builtin_prefetch(&cursor[ahead], 1);
            }
            if (q < lo || q >= hi) /* HP_NONE included */
                continue;
            edges[base[q >> shift] + --cursor[q]] = pu;
        }
        if (hp_pace(pacer, end - start + 1)) {
            pass_fail(p, worker, hp_graph_stop(&p->err[worker], HP_E_ABORTED));
            return;
        }
        if ((u & 1023) == 0 && hp_flag_get(&p->stop))
            return;
    }
}

hp_code hp_graph_transpose(hp_graph *t, const hp_graph *g, const hp_extra_edges *extra, const uint32_t *map,
                           uint32_t t_n, int threads, const hp_checkpoint *cp, hp_error *err)
{
    hp_code rc;
    uint32_t u, *rel;
    size_t k;
    pass p;

    memset(t, 0, sizeof *t);
    t->alloc = g->alloc;
    t->n = map ? t_n : g->n;
    if (t->n > HP_MAX_VERTICES)
        return hp_vertex_fail(err, HP_E_USAGE, t->n, "more vertices than a graph can number");
    pass_init(&p, threads, cp);
    p.g = t;
    p.from = g;
    p.extra = extra && extra->count ? extra : NULL;
    p.map = map;
    rel = t->rows.rel = hp_array_new(&t->alloc, (uint64_t)t->n + 1, 4);
    if (!rel)
        goto nomem;
    memset(rel, 0, ((size_t)t->n + 1) * 4);
    for (u = 0; map && u < g->n; u++)
        if (map[u] != HP_NONE && map[u] >= t->n) {
            rc = hp_vertex_fail(err, HP_E_USAGE, u, "map sends a vertex out of range");
            goto fail;
        }
    for (k = 0; p.extra && k < 2 * p.extra->count; k++)
        if (p.extra->pairs[k] >= g->n) {
            rc = hp_vertex_fail(err, HP_E_USAGE, p.extra->pairs[k], "an extra edge names no vertex of the graph");
            goto fail;
        }

    /* In-degrees, counted in g's numbering, then moved to t's. */
    p.count = map ? hp_array_new(&t->alloc, g->n, 4) : rel;
    if (!p.count)
        goto nomem;
    if (map)
        memset(p.count, 0, (size_t)g->n * 4);
    if ((rc = run_pass(&p, count_share, err)) != HP_OK)
        goto fail;
    for (u = 0; map && u < g->n; u++) {
        if (map[u] == HP_NONE)
            continue;
        rel[map[u]] += p.count[u]; /* several vertices may share one */
        if (rel[map[u]] < p.count[u]) {
            rc = hp_vertex_fail(err, HP_E_LIMIT, u, "2^32 in-edges or more");
            goto fail;
        }
    }
    if (map)
        t->alloc.free_fn(p.count);
    p.count = NULL;

    if ((rc = fill_rows(&p, t, 1, fill_share, err)) != HP_OK)
        goto fail;
    return HP_OK;
nomem:
    rc = hp_graph_stop(err, HP_E_NOMEM);
fail:
    if (map)
        t->alloc.free_fn(p.count);
    hp_graph_free(t);
    return rc;
}

uint64_t hp_graph_bytes(const hp_graph *g)
{
    if (!g->rows.rel)
        return 0;
    return ((uint64_t)g->n + 1) * 4 + (((uint64_t)g->n >> g->rows.shift) + 1) * 8 + g->m * 4;
}

void hp_graph_free(hp_graph *g)
{
    g->alloc.free_fn(g->rows.rel);
    g->alloc.free_fn(g->rows.base);
    g->alloc.free_fn(g->edges);
    g->rows.rel = NULL;
    g->rows.base = NULL;
    g->edges = NULL;
    g->m = 0;
}
