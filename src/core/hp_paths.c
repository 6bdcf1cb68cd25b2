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

#define QUEUES 4

typedef struct search {
    hp_bfs *b;
    const hp_graph *g;
    const hp_bfs_spec *spec;
    fifo queue[QUEUES];      /* one per tier */
    int tiers;               /* queues the search drains: 2, or 4 when explaining */
    uint64_t *targets;       /* bit set of the targets not yet final, or NULL */
    uint32_t targets_left;
} search;

static void set_tier(hp_bfs *b, uint32_t v, int tier)
{
    if (tier & 1)
        hp_bit_set(b->low, v);
    else
        hp_bit_clear(b->low, v);
    if (tier & 2)
        hp_bit_set(b->high, v);
    else
        hp_bit_clear(b->high, v);
}

/* Reaches t from `from` (HP_MARK for a root) through edge or root number
 * `index`, so on a path of tier `tier`: visits it, or promotes it when it
 * waits in a later queue (not expanded yet).  -1 when memory runs out. */
static int reach(search *s, uint32_t t, uint32_t from, uint32_t index, int tier)
{
    hp_bfs *b = s->b;
    if (!hp_bit(b->visited, t)) {
        hp_bit_set(b->visited, t);
        b->visited_count++;
    } else if (tier >= hp_bfs_tier(b, t)) {
        return 0;
    }
    /* New, or promoted: its entry in the later queue stays and is skipped
     * when popped, as its tier is then lower. */
    b->parent[t] = from;
    b->edge[t] = index;
    set_tier(b, t, tier);
    return fifo_push(&s->queue[tier], t, &b->alloc);
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

/* The tier of a path of tier `phase` extended by an edge or root of class
 * `kind`, or -1 when the search does not cross it. */
static int tier_across(const search *s, int phase, int kind)
{
    if (kind < HP_EDGE_NORMAL || kind > HP_EDGE_WEAK || kind >= s->tiers)
        return -1;
    return kind > phase ? kind : phase;
}

/* Takes u off the queue of tier `phase`: counts it as a target, then
 * expands it unless it is a leaf.  Returns 1 when the last target is
 * final, -1 when memory runs out, else 0. */
static int expand(search *s, uint32_t u, int phase, uint64_t *work)
{
    const hp_bfs_spec *spec = s->spec;
    uint32_t degree, k, weak;
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
        int tier = tier_across(s, phase, ask ? spec->classify(spec->classify_ctx, u, k, row[k]) : HP_EDGE_NORMAL);
        if (tier >= 0 && reach(s, row[k], u, k, tier) < 0)
            return -1;
    }
    if (s->tiers > HP_TIER_WEAK && spec->weak && spec->weak(spec->weak_ctx, u, &weak) && weak < s->g->n &&
        reach(s, weak, u, HP_EDGE_OUTSIDE, HP_TIER_WEAK) < 0)
        return -1;
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
    b->high = hp_bits_new(&b->alloc, g->n);
    b->parent = hp_array_new(&b->alloc, g->n, 4);
    b->edge = hp_array_new(&b->alloc, g->n, 4);
    if (!b->visited || !b->low || !b->high || !b->parent || !b->edge)
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
    s.tiers = spec->explain ? QUEUES : 2;
    if ((rc = setup(&s, g, spec, err)) != HP_OK)
        goto done;

    for (i = 0; i < spec->nroots; i++) {
        int tier;
        if (spec->roots[i] == HP_NONE)
            continue;
        tier = tier_across(&s, HP_TIER_NORMAL, spec->classify ? spec->classify(spec->classify_ctx, HP_MARK, (uint32_t)i,
                                                                               spec->roots[i]) : HP_EDGE_NORMAL);
        if (tier >= 0 && reach(&s, spec->roots[i], HP_MARK, (uint32_t)i, tier) < 0)
            goto nomem;
    }
    for (phase = 0; phase < s.tiers && !stop; phase++) {
        fifo *q = &s.queue[phase];
        while (q->len && !stop) {
            uint32_t u = fifo_pop(q);
            uint64_t work = 0;
            if (hp_bfs_tier(b, u) != phase)
                continue; /* promoted, and expanded in an earlier phase */
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
    for (i = 0; i < QUEUES; i++)
        b->alloc.free_fn(s.queue[i].ring);
    b->alloc.free_fn(s.targets);
    if (rc != HP_OK)
        hp_bfs_free(b);
    return rc;
}

void hp_bfs_free(hp_bfs *b)
{
    b->alloc.free_fn(b->visited);
    b->alloc.free_fn(b->low);
    b->alloc.free_fn(b->high);
    b->alloc.free_fn(b->parent);
    b->alloc.free_fn(b->edge);
    b->visited = b->low = b->high = NULL;
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

/* ---- the tree of the targets' paths ---- */

/* Room for `want` nodes in t's arrays (doubling). */
static int tree_room(hp_bfs_tree *t, uint32_t *cap, uint64_t want)
{
    uint32_t *vertex, *parent, *edge;
    uint8_t *tier;
    uint64_t bigger;
    if (want <= *cap)
        return 0;
    bigger = *cap ? (uint64_t)*cap * 2 : 1024;
    if (bigger < want)
        bigger = want;
    if (bigger > HP_MARK)
        bigger = HP_MARK;
    if (bigger < want || bigger > SIZE_MAX / 4)
        return -1;
    vertex = t->alloc.realloc_fn(t->vertex, (size_t)bigger * 4);
    if (vertex)
        t->vertex = vertex;
    parent = t->alloc.realloc_fn(t->parent, (size_t)bigger * 4);
    if (parent)
        t->parent = parent;
    edge = t->alloc.realloc_fn(t->edge, (size_t)bigger * 4);
    if (edge)
        t->edge = edge;
    tier = t->alloc.realloc_fn(t->tier, (size_t)bigger);
    if (tier)
        t->tier = tier;
    if (!vertex || !parent || !edge || !tier)
        return -1;
    *cap = (uint32_t)bigger;
    return 0;
}

hp_code hp_bfs_tree_build(hp_bfs_tree *t, hp_bfs *b, const uint32_t *targets, size_t ntargets,
                          const hp_checkpoint *cp, hp_error *err)
{
    hp_pacer pacer = { cp, 0 };
    uint64_t *in_tree = NULL;
    uint32_t cap = 0;
    hp_code rc = HP_OK;
    size_t i;

    memset(t, 0, sizeof *t);
    t->alloc = b->alloc;
    t->ntargets = ntargets;
    for (i = 0; i < ntargets; i++)
        if (targets[i] != HP_NONE && targets[i] >= b->n)
            return hp_vertex_fail(err, HP_E_USAGE, i, "target out of range (offset = its index)");
    t->node = hp_array_new(&t->alloc, ntargets, 4);
    in_tree = hp_bits_new(&t->alloc, b->n);
    if (!t->node || !in_tree || tree_room(t, &cap, 1) < 0)
        goto nomem;
    /* A vertex in the tree keeps its node in b->edge (its edge is in the node). */
    for (i = 0; i < ntargets; i++) {
        uint32_t v = targets[i], len = 0, above, w, k;
        t->node[i] = HP_NONE;
        if (v == HP_NONE || !b->visited || !hp_bit(b->visited, v))
            continue;
        /* The new stretch of its path: up to a vertex in the tree, or a root;
         * numbered top down (the parent first), walking up twice. */
        for (w = v; w != HP_MARK && !hp_bit(in_tree, w); w = b->parent[w])
            len++;
        above = w == HP_MARK ? HP_NONE : b->edge[w];
        if (tree_room(t, &cap, (uint64_t)t->count + len) < 0)
            goto nomem;
        for (w = v, k = t->count + len; k-- > t->count; w = b->parent[w]) {
            t->vertex[k] = w;
            t->parent[k] = k > t->count ? k - 1 : above;
            t->edge[k] = b->edge[w];
            t->tier[k] = (uint8_t)hp_bfs_tier(b, w);
            hp_bit_set(in_tree, w);
            b->edge[w] = k;
        }
        t->count += len;
        t->node[i] = b->edge[v];
        if (hp_pace(&pacer, 1 + (uint64_t)len)) {
            rc = hp_graph_stop(err, HP_E_ABORTED);
            goto done;
        }
    }
    goto done;
nomem:
    rc = hp_graph_stop(err, HP_E_NOMEM);
done:
    t->alloc.free_fn(in_tree);
    if (rc != HP_OK)
        hp_bfs_tree_free(t);
    return rc;
}

void hp_bfs_tree_free(hp_bfs_tree *t)
{
    if (!t->alloc.free_fn)
        return;
    t->alloc.free_fn(t->vertex);
    t->alloc.free_fn(t->parent);
    t->alloc.free_fn(t->edge);
    t->alloc.free_fn(t->tier);
    t->alloc.free_fn(t->node);
    t->vertex = t->parent = t->edge = t->node = NULL;
    t->tier = NULL;
    t->count = 0;
}

uint32_t hp_bfs_tree_path(const hp_bfs_tree *t, uint32_t k, uint32_t *nodes, uint32_t cap)
{
    uint32_t len = 0, v, i;
    if (k >= t->count)
        return 0;
    for (v = k; v != HP_NONE; v = t->parent[v])
        len++;
    if (len > cap)
        return len;
    for (v = k, i = len; i-- > 0; v = t->parent[v])
        nodes[i] = v;
    return len;
}
