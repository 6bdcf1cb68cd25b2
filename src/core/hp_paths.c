/* Two-queue breadth-first search from the roots (see hp_paths.h). */
#include "hp_paths.h"

#include <string.h>

/* A FIFO of vertices in a ring that doubles when full. */
typedef struct fifo {
    uint32_t *ring;
    size_t cap, head, len;
} fifo;

static int fifo_push(fifo *q, uint32_t v, const hp_alloc *alloc)
{
    if (q->len == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 4096, tail = q->cap - q->head;
        uint32_t *ring = hp_array_new(alloc, cap, 4);
        if (!ring)
            return -1;
        if (q->len) {
            memcpy(ring, q->ring + q->head, tail * 4);
            memcpy(ring + tail, q->ring, q->head * 4);
        }
        alloc->free_fn(q->ring);
        q->ring = ring;
        q->cap = cap;
        q->head = 0;
    }
    q->ring[q->head + q->len < q->cap ? q->head + q->len : q->head + q->len - q->cap] = v;
    q->len++;
    return 0;
}

/* The entry `ahead` places after the next one (ahead < q->len). */
static uint32_t fifo_peek(const fifo *q, size_t ahead)
{
    size_t i = q->head + ahead;
    return q->ring[i < q->cap ? i : i - q->cap];
}

static uint32_t fifo_pop(fifo *q)
{
    uint32_t v = q->ring[q->head];
    q->head = q->head + 1 == q->cap ? 0 : q->head + 1;
    q->len--;
    return v;
}

typedef struct search {
    hp_bfs *b;
    const hp_graph *g;
    const hp_bfs_spec *spec;
    fifo normal, parked;
    uint64_t *targets; /* bit set of the targets not yet final, or NULL */
    uint32_t targets_left;
} search;

/* Reaches t from `from` (HP_MARK for a root) through edge or root number
 * `index` of class `kind` (NORMAL or LOW): visits it, or promotes it when it
 * was parked and this is NORMAL.  -1 when memory runs out. */
static int reach(search *s, uint32_t t, uint32_t from, uint32_t index, int kind)
{
    hp_bfs *b = s->b;
    if (!hp_bit(b->visited, t)) {
        hp_bit_set(b->visited, t);
        b->visited_count++;
    } else if (kind == HP_EDGE_LOW || !hp_bit(b->low, t)) {
        return 0;
    }
    /* New, or parked and now promoted: its parked entry stays queued and is
     * skipped when popped, as its LOW bit is then clear. */
    b->parent[t] = from;
    b->edge[t] = index;
    if (kind == HP_EDGE_LOW) {
        hp_bit_set(b->low, t);
        return fifo_push(&s->parked, t, &b->alloc);
    }
    hp_bit_clear(b->low, t);
    return fifo_push(&s->normal, t, &b->alloc);
}

#ifndef BFS_AHEAD
#define BFS_AHEAD 12
#endif

static void prefetch_ahead(const search *s, const fifo *q)
{
    const hp_rows *rows = &s->g->rows;
    if (!BFS_AHEAD)
        return;
    if (q->len > BFS_AHEAD)
        __builtin_prefetch(&rows->rel[fifo_peek(q, BFS_AHEAD)]);
    if (q->len > BFS_AHEAD / 2)
        __builtin_prefetch(&s->g->edges[hp_row_start(rows, fifo_peek(q, BFS_AHEAD / 2))]);
#if BFS3
    if (q->len > BFS_AHEAD / 4) {
        uint32_t degree, k;
        const uint32_t *row = hp_graph_row(s->g, fifo_peek(q, BFS_AHEAD / 4), &degree);
        for (k = 0; k < degree && k < 8; k++)
            __builtin_prefetch(&s->b->visited[row[k] >> 6]);
    }
#endif
}

/* Takes u off its queue: counts it as a target, then expands it unless it
 * is a leaf.  In the parked phase every edge counts as LOW.  Returns 1 when
 * the last target is final, -1 when memory runs out, else 0. */
static int expand(search *s, uint32_t u, int parked_phase, uint64_t *work)
{
    const hp_bfs_spec *spec = s->spec;
    uint32_t degree, k;
    const uint32_t *row;
    int ask;

    if (s->targets_left && hp_bit(s->targets, u)) {
        hp_bit_clear(s->targets, u);
        s->b->targets_found++;
        if (--s->targets_left == 0)
            return 1;
    }
    if (spec->leaves && hp_bit(spec->leaves, u))
        return 0;
    row = hp_graph_row(s->g, u, &degree);
    ask = spec->classify && (!spec->special || hp_bit(spec->special, u));
    *work += (uint64_t)degree + 1;
    for (k = 0; k < degree; k++) {
        int kind = ask ? spec->classify(spec->classify_ctx, u, k, row[k]) : HP_EDGE_NORMAL;
        if (kind != HP_EDGE_NORMAL && kind != HP_EDGE_LOW)
            continue;
        if (reach(s, row[k], u, k, parked_phase ? HP_EDGE_LOW : kind) < 0)
            return -1;
    }
    return 0;
}

static hp_code setup(search *s, const hp_graph *g, const hp_bfs_spec *spec, hp_error *err)
{
    hp_bfs *b = s->b;
    size_t i;

    if (spec->nroots > UINT32_MAX)
        return hp_vertex_fail(err, HP_E_USAGE, spec->nroots, "more roots than a path can number");
    for (i = 0; i < spec->nroots; i++)
        if (spec->roots[i] != HP_NONE && spec->roots[i] >= g->n)
            return hp_vertex_fail(err, HP_E_USAGE, i, "root out of range (offset = its index)");
    b->visited = hp_bits_new(&b->alloc, g->n);
    b->low = hp_bits_new(&b->alloc, g->n);
    b->parent = hp_array_new(&b->alloc, g->n, 4);
    b->edge = hp_array_new(&b->alloc, g->n, 4);
    if (!b->visited || !b->low || !b->parent || !b->edge)
        return hp_graph_stop(err, HP_E_NOMEM);
    if (spec->targets && spec->ntargets) {
        if (!(s->targets = hp_bits_new(&b->alloc, g->n)))
            return hp_graph_stop(err, HP_E_NOMEM);
        for (i = 0; i < spec->ntargets; i++) {
            uint32_t t = spec->targets[i];
            if (t == HP_NONE)
                continue;
            if (t >= g->n)
                return hp_vertex_fail(err, HP_E_USAGE, i, "target out of range (offset = its index)");
            if (!hp_bit(s->targets, t)) {
                hp_bit_set(s->targets, t);
                s->targets_left++;
            }
        }
    }
    return HP_OK;
}

hp_code hp_bfs_run(hp_bfs *b, const hp_graph *g, const hp_bfs_spec *spec, const hp_checkpoint *cp, hp_error *err)
{
    hp_pacer pacer = { cp, 0 };
    search s;
    hp_code rc;
    size_t i;
    int phase, stop = 0;

    memset(b, 0, sizeof *b);
    b->alloc = g->alloc;
    b->n = g->n;
    memset(&s, 0, sizeof s);
    s.b = b;
    s.g = g;
    s.spec = spec;
    if ((rc = setup(&s, g, spec, err)) != HP_OK)
        goto done;

    for (i = 0; i < spec->nroots; i++) {
        int kind;
        if (spec->roots[i] == HP_NONE)
            continue;
        kind = spec->classify ? spec->classify(spec->classify_ctx, HP_MARK, (uint32_t)i, spec->roots[i])
                              : HP_EDGE_NORMAL;
        if (kind != HP_EDGE_NORMAL && kind != HP_EDGE_LOW)
            continue;
        if (reach(&s, spec->roots[i], HP_MARK, (uint32_t)i, kind) < 0)
            goto nomem;
    }
    for (phase = 0; phase < 2 && !stop; phase++) {
        fifo *q = phase == 0 ? &s.normal : &s.parked;
        while (q->len && !stop) {
            uint32_t u = fifo_pop(q);
            uint64_t work = 0;
            if (phase == 1 && !hp_bit(b->low, u))
                continue; /* promoted, and expanded in the first phase */
            prefetch_ahead(&s, q);
            stop = expand(&s, u, phase, &work);
            if (stop < 0)
                goto nomem;
            if (hp_pace(&pacer, work)) {
                rc = hp_graph_stop(err, HP_E_ABORTED);
                goto done;
            }
        }
    }
    b->complete = !stop;
    goto done;
nomem:
    rc = hp_graph_stop(err, HP_E_NOMEM);
done:
    b->alloc.free_fn(s.normal.ring);
    b->alloc.free_fn(s.parked.ring);
    b->alloc.free_fn(s.targets);
    if (rc != HP_OK)
        hp_bfs_free(b);
    return rc;
}

void hp_bfs_free(hp_bfs *b)
{
    b->alloc.free_fn(b->visited);
    b->alloc.free_fn(b->low);
    b->alloc.free_fn(b->parent);
    b->alloc.free_fn(b->edge);
    b->visited = b->low = NULL;
    b->parent = b->edge = NULL;
}

uint32_t hp_bfs_path(const hp_bfs *b, uint32_t target, uint32_t *vertices, uint32_t *edges, uint32_t cap)
{
    uint32_t len = 1, v, i;
    if (target >= b->n || !b->visited || !hp_bit(b->visited, target))
        return 0;
    for (v = target; b->parent[v] != HP_MARK; v = b->parent[v])
        len++;
    if (len > cap)
        return len;
    for (v = target, i = len; i-- > 0; v = b->parent[v]) {
        vertices[i] = v;
        edges[i] = b->edge[v];
    }
    return len;
}
