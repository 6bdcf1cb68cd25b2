/* Semi-NCA dominators in DFS-preorder space, then retained sizes.
 *
 * Preorder numbers: 0 is the virtual root, 1..N-1 the reachable vertices.
 * Two facts about a DFS keep memory down:
 *  - a predecessor p < w of w is an ancestor of w, so w's DFS parent is its
 *    largest predecessor below w and needs no array;
 *  - a dominator is an ancestor, so idom(w) < w, and running through the
 *    preorder backwards visits every vertex before its dominator. */
#include "hp_dominators.h"

#include <string.h>

/* Vertices per call of the size source. */
#define SIZE_RANGE (1u << 16)

/* Room for `more` entries on the stack; -1 when memory runs out. */
static int stack_room(uint32_t **stack, size_t *cap, size_t used, uint64_t more, const hp_alloc *alloc)
{
    size_t grown;
    uint32_t *s;
    if (used + more <= *cap)
        return 0;
    grown = *cap ? *cap * 2 : 4096;
    if (grown < used + more)
        grown = used + more;
    if (grown > SIZE_MAX / 4)
        return -1;
    s = alloc->realloc_fn(*stack, grown * 4);
    if (!s)
        return -1;
    *stack = s;
    *cap = grown;
    return 0;
}

/* The extra edges of the flow graph (hp_dominators_spec.extra), and which
 * vertices have some: a bit each, so that the DFS looks for them only
 * there. */
typedef struct extra_index {
    const hp_extra_edges *edges;
    uint64_t *has; /* NULL: no extra edges */
} extra_index;

/* The extra edges out of v: *count pairs from the returned index. */
static size_t extra_out(const extra_index *x, uint32_t v, uint32_t *count)
{
    const uint32_t *pairs = x->edges->pairs;
    size_t lo = 0, hi = x->edges->count, end;
    *count = 0;
    if (!x->has || !hp_bit(x->has, v))
        return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pairs[2 * mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (end = lo; end < x->edges->count && pairs[2 * end] == v; end++)
        ;
    *count = (uint32_t)(end - lo);
    return lo;
}

/* Numbers the vertices reachable from `roots` in DFS preorder 1, 2, ...:
 * pre[v] (n entries, preset to HP_NONE) and/or vert[number] (vert[0] =
 * HP_NONE).  *count gets the number of preorder numbers used, the virtual
 * root's included.  The roots are taken in order, each row in order and
 * then the vertex's extra edges.  The stack holds each visited vertex's
 * unseen successors, pushed in reverse order when it is visited and
 * checked again when popped: the preorder of a recursive DFS, with no row
 * read twice.
 * Memory: a bit set over n and a stack of at most one entry (4 B) per edge. */
static hp_code preorder(const hp_graph *g, const uint32_t *roots, size_t nroots, const extra_index *x,
                        uint32_t *pre, uint32_t *vert, uint32_t *count, hp_pacer *pacer, hp_error *err)
{
    const hp_alloc *alloc = &g->alloc;
    uint64_t *seen = hp_bits_new(alloc, g->n);
    uint32_t *stack = NULL, next = 1;
    size_t cap = 0, top = 0, i;
    hp_code rc = HP_OK;

    if (!seen)
        return hp_graph_stop(err, HP_E_NOMEM);
    if (vert)
        vert[0] = HP_NONE;
    if (stack_room(&stack, &cap, 0, nroots, alloc) < 0)
        goto nomem;
    for (i = nroots; i-- > 0;)
        if (roots[i] != HP_NONE)
            stack[top++] = roots[i];
    while (top > 0) {
        uint32_t t = stack[--top], degree, nextra, k;
        const uint32_t *row;
        size_t first;
        if (hp_bit(seen, t))
            continue;
        hp_bit_set(seen, t);
        if (pre)
            pre[t] = next;
        if (vert)
            vert[next] = t;
        next++;
        row = hp_graph_row(g, t, &degree);
        first = extra_out(x, t, &nextra);
        if (stack_room(&stack, &cap, top, (uint64_t)degree + nextra, alloc) < 0)
            goto nomem;
        for (k = nextra; k-- > 0;)
            if (!hp_bit(seen, x->edges->pairs[2 * (first + k) + 1]))
                stack[top++] = x->edges->pairs[2 * (first + k) + 1];
        for (k = degree; k-- > 0;)
            if (!hp_bit(seen, row[k]))
                stack[top++] = row[k];
        if (top > 0)
            __builtin_prefetch(&g->rows.rel[stack[top - 1]]);
        if (hp_pace(pacer, (uint64_t)degree + nextra + 1)) {
            rc = hp_graph_stop(err, HP_E_ABORTED);
            goto done;
        }
    }
    *count = next;
    goto done;
nomem:
    rc = hp_graph_stop(err, HP_E_NOMEM);
done:
    alloc->free_fn(seen);
    alloc->free_fn(stack);
    return rc;
}

/* The path-compression forest of Semi-NCA, one pair per vertex so that a
 * step touches one cache line: `ancestor` (the vertex's parent in the
 * forest once linked) and `best`, the smallest semidominator on the
 * compressed path from the vertex up to, excluding, its ancestor. */
typedef struct link {
    uint32_t ancestor, best;
} link;

/* The smallest semidominator on the linked path from v (> w, so linked) up
 * to its last linked ancestor, compressing the path onto that ancestor's
 * parent.  `linked` = w + 1: vertices >= it are linked.  No stack: the
 * climb reverses the ancestor links and the way down restores them. */
static uint32_t eval(link *links, uint32_t v, uint32_t linked)
{
    uint32_t x = v, below = HP_NONE, top_parent, b;
    if (links[v].ancestor < linked)
        return links[v].best;
    while (links[x].ancestor >= linked) {
        uint32_t up = links[x].ancestor;
        links[x].ancestor = below;
        below = x;
        x = up;
    }
    top_parent = links[x].ancestor;
    b = links[x].best;
    while (below != HP_NONE) {
        link *l = &links[below];
        below = l->ancestor;
        if (l->best > b)
            l->best = b;
        else
            b = l->best;
        l->ancestor = top_parent;
    }
    return b;
}

/* How far ahead the semidominator loop prefetches predecessors' links. */
#define PREFETCH_AHEAD 8

/* The depth in the dominator tree of a vertex the NCA pass has placed: 0
 * for the virtual root, 1 for a root (whose row may be empty), else in the
 * first slot of its predecessor row. */
static uint32_t tree_depth(const hp_graph *pred, const uint64_t *is_root, uint32_t v)
{
    if (v == 0)
        return 0;
    if (hp_bit(is_root, v))
        return 1;
    return pred->edges[hp_row_start(&pred->rows, v)];
}

/* Immediate dominators in preorder space into links[0..N).ancestor
 * (allocated here), given the predecessor rows `pred` (consumed: each row
 * ends up holding the vertex's DFS parent and semidominator) and which
 * vertices are roots. */
static hp_code semi_nca(hp_graph *pred, const uint64_t *is_root, link **links_out, hp_pacer *pacer, hp_error *err)
{
    uint32_t N = pred->n, w;
    link *links = hp_array_new(&pred->alloc, N, sizeof(link));

    if (!links)
        return hp_graph_stop(err, HP_E_NOMEM);
    /* Semidominators, last vertex first: the predecessors below w are its
     * ancestors (candidates themselves); those above w have been linked.
     * A root has the virtual root 0 among its predecessors, so semi 0 (and
     * idom 0: the NCA pass skips it). */
    for (w = N - 1; w >= 1; w--) {
        uint64_t start = hp_row_start(&pred->rows, w);
        uint32_t degree = (uint32_t)(hp_row_start(&pred->rows, w + 1) - start), k;
        uint32_t *row = pred->edges + start;
        uint32_t semi = hp_bit(is_root, w) ? 0 : w, parent = 0;
        if (w > PREFETCH_AHEAD) {
            uint32_t ahead = w - PREFETCH_AHEAD, ahead_degree;
            const uint32_t *ahead_row = hp_graph_row(pred, ahead, &ahead_degree);
            for (k = 0; k < ahead_degree; k++)
                if (ahead_row[k] > ahead)
                    __builtin_prefetch(&links[ahead_row[k]]);
        }
        for (k = 0; k < degree; k++) {
            uint32_t v = row[k];
            if (v < w) {
                if (v < semi)
                    semi = v;
                if (v > parent)
                    parent = v;
            } else if (v > w) {
                uint32_t b = eval(links, v, w + 1);
                if (b < semi)
                    semi = b;
            }
        }
        links[w].ancestor = parent;
        links[w].best = semi;
        /* A non-root with one predecessor has it as parent and semi. */
        if (degree >= 1)
            row[0] = parent;
        if (degree >= 2)
            row[1] = semi;
        if (hp_pace(pacer, (uint64_t)degree + 1)) {
            pred->alloc.free_fn(links);
            return hp_graph_stop(err, HP_E_ABORTED);
        }
    }

    /* NCA: idom(w) is the nearest common ancestor, in the dominator tree
     * built so far, of parent(w) and semi(w): the first ancestor of
     * parent(w), itself included, numbered semi(w) or less, since numbers
     * fall towards the root.  A plain climb would make a list whose items
     * hang elsewhere quadratic (each item climbing the whole list), so the
     * tree keeps Myers's skew-binary jump pointers, which find it in
     * O(log depth) steps: idom(w) goes in links[w].ancestor, the jump
     * pointer in links[w].best (free now), w's depth in the first slot of
     * its predecessor row once read. */
    links[0].ancestor = links[0].best = 0;
    for (w = 1; w < N; w++) {
        uint64_t start = hp_row_start(&pred->rows, w);
        uint32_t degree = (uint32_t)(hp_row_start(&pred->rows, w + 1) - start), x = 0, semi, jump, up;
        if (!hp_bit(is_root, w)) {
            x = pred->edges[start];
            semi = degree >= 2 ? pred->edges[start + 1] : x;
            while (x > semi)
                x = links[x].best > semi ? links[x].best : links[x].ancestor;
        }
        links[w].ancestor = x;
        jump = links[x].best;
        up = tree_depth(pred, is_root, x);
        if (up - tree_depth(pred, is_root, jump) == tree_depth(pred, is_root, jump) - tree_depth(pred, is_root, links[jump].best))
            links[w].best = links[jump].best;
        else
            links[w].best = x;
        if (!hp_bit(is_root, w))
            pred->edges[start] = up + 1;
        if (hp_pace(pacer, 1)) {
            pred->alloc.free_fn(links);
            return hp_graph_stop(err, HP_E_ABORTED);
        }
    }
    *links_out = links;
    return HP_OK;
}

/* Immediate dominators in preorder space: *idom_out (N entries, allocated
 * here), N, and unless spec->lean the map preorder -> vertex *vert_out. */
static hp_code dominators_in_preorder(const hp_graph *g, const hp_dominators_spec *spec, const extra_index *x,
                                      uint32_t **idom_out, uint32_t **vert_out, uint32_t *N_out, hp_pacer *pacer,
                                      hp_error *err)
{
    const hp_alloc *alloc = &g->alloc;
    uint32_t *pre = hp_array_new(alloc, g->n, 4), *vert = NULL, *idom, N = 0, w;
    uint64_t *is_root = NULL;
    link *links = NULL;
    hp_graph pred;
    hp_code rc = HP_OK;
    size_t i;

    memset(&pred, 0, sizeof pred);
    pred.alloc = *alloc;
    if (!pre || (!spec->lean && !(vert = hp_array_new(alloc, (uint64_t)g->n + 1, 4))))
        rc = hp_graph_stop(err, HP_E_NOMEM);
    if (rc == HP_OK) {
        memset(pre, 0xFF, (size_t)g->n * 4);
        rc = preorder(g, spec->roots, spec->nroots, x, pre, vert, &N, pacer, err);
    }
    if (rc == HP_OK && vert && N < g->n + 1) {
        uint32_t *fit = alloc->realloc_fn(vert, (size_t)N * 4);
        vert = fit ? fit : vert;
    }
    if (rc == HP_OK)
        rc = hp_graph_transpose(&pred, g, &spec->extra, pre, N, spec->threads, pacer->cp, err);
    if (rc == HP_OK && !(is_root = hp_bits_new(alloc, N)))
        rc = hp_graph_stop(err, HP_E_NOMEM);
    if (rc == HP_OK)
        for (i = 0; i < spec->nroots; i++)
            if (spec->roots[i] != HP_NONE)
                hp_bit_set(is_root, pre[spec->roots[i]]);
    alloc->free_fn(pre);
    if (rc == HP_OK)
        rc = semi_nca(&pred, is_root, &links, pacer, err);
    hp_graph_free(&pred);
    alloc->free_fn(is_root);
    if (rc != HP_OK) {
        alloc->free_fn(vert);
        return rc;
    }
    /* Keep idom alone, in place, and give the rest back. */
    idom = (uint32_t *)links;
    for (w = 0; w < N; w++)
        idom[w] = links[w].ancestor;
    *idom_out = alloc->realloc_fn(idom, (size_t)N * 4);
    if (!*idom_out)
        *idom_out = idom; /* the block stays as it was */
    *vert_out = vert;
    *N_out = N;
    return HP_OK;
}

/* Checks the extra edges (in range, sorted by source) and marks their
 * sources in x->has (left NULL when there are none). */
static hp_code index_extra(const hp_graph *g, const hp_extra_edges *edges, extra_index *x, hp_error *err)
{
    size_t k;
    for (k = 0; k < edges->count; k++)
        if (edges->pairs[2 * k] >= g->n || edges->pairs[2 * k + 1] >= g->n ||
            (k > 0 && edges->pairs[2 * k] < edges->pairs[2 * k - 2]))
            return hp_vertex_fail(err, HP_E_USAGE, k, "extra edge out of range or out of order (offset = its index)");
    if (edges->count == 0)
        return HP_OK;
    if (!(x->has = hp_bits_new(&g->alloc, g->n)))
        return hp_graph_stop(err, HP_E_NOMEM);
    for (k = 0; k < edges->count; k++)
        hp_bit_set(x->has, edges->pairs[2 * k]);
    return HP_OK;
}

static uint64_t add_saturating(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

/* Shallow sizes into d->retained (0 for unreachable vertices) and d->total. */
static hp_code load_sizes(hp_dominators *d, hp_size_source sizes, void *ctx, hp_pacer *pacer, hp_error *err)
{
    uint32_t first, count, v;
    for (first = 0; first < d->n; first += count) {
        count = d->n - first < SIZE_RANGE ? d->n - first : SIZE_RANGE;
        if (sizes(ctx, first, count, d->retained + first) != 0 || hp_pace(pacer, count))
            return hp_graph_stop(err, HP_E_ABORTED);
        for (v = first; v < first + count; v++) {
            if (d->idom[v] == HP_NONE)
                d->retained[v] = 0;
            d->total = add_saturating(d->total, d->retained[v]);
        }
    }
    return HP_OK;
}

hp_code hp_dominators_build(hp_dominators *d, const hp_graph *g, const hp_dominators_spec *spec,
                            const hp_checkpoint *cp, hp_error *err)
{
    const hp_alloc *alloc = &g->alloc;
    hp_pacer pacer = { cp, 0 };
    uint32_t *idom_pre = NULL, *vert = NULL, N = 0, w, v;
    extra_index x = { &spec->extra, NULL };
    hp_code rc;
    size_t i;

    memset(d, 0, sizeof *d);
    d->alloc = *alloc;
    d->n = g->n;
    for (i = 0; i < spec->nroots; i++)
        if (spec->roots[i] != HP_NONE && spec->roots[i] >= g->n)
            return hp_vertex_fail(err, HP_E_USAGE, i, "root out of range (offset = its index)");

    if ((rc = index_extra(g, &spec->extra, &x, err)) != HP_OK)
        return rc;
    rc = dominators_in_preorder(g, spec, &x, &idom_pre, &vert, &N, &pacer, err);
    if (rc != HP_OK) {
        alloc->free_fn(x.has);
        return rc;
    }
    d->reachable = N - 1;

    /* Lean: preorder -> vertex again, by the same DFS, rather than keeping
     * the map through the peak above. */
    if (!vert) {
        if (!(vert = hp_array_new(alloc, N, 4)))
            goto nomem;
        if ((rc = preorder(g, spec->roots, spec->nroots, &x, NULL, vert, &N, &pacer, err)) != HP_OK)
            goto done;
    }

    /* idom in vertex space. */
    if (!(d->idom = hp_array_new(alloc, d->n, 4)))
        goto nomem;
    memset(d->idom, 0xFF, (size_t)d->n * 4);
    for (w = 1; w < N; w++)
        d->idom[vert[w]] = idom_pre[w] ? vert[idom_pre[w]] : HP_DOM_VIRTUAL;
    alloc->free_fn(idom_pre);
    idom_pre = NULL;

    if (!(d->count = hp_array_new(alloc, d->n, 4)))
        goto nomem;
    for (v = 0; v < d->n; v++)
        d->count[v] = d->idom[v] != HP_NONE;
    if (spec->sizes) {
        if (!(d->retained = hp_array_new(alloc, d->n, 8)))
            goto nomem;
        if ((rc = load_sizes(d, spec->sizes, spec->sizes_ctx, &pacer, err)) != HP_OK)
            goto done;
    }

    /* Each vertex before its dominator: add what it retains to it. */
    for (w = N - 1; w >= 1; w--) {
        uint32_t u = vert[w], up = d->idom[u];
        if (up == HP_DOM_VIRTUAL)
            continue;
        d->count[up] += d->count[u];
        if (d->retained)
            d->retained[up] = add_saturating(d->retained[up], d->retained[u]);
    }
    goto done;
nomem:
    rc = hp_graph_stop(err, HP_E_NOMEM);
done:
    alloc->free_fn(x.has);
    alloc->free_fn(idom_pre);
    alloc->free_fn(vert);
    if (rc != HP_OK)
        hp_dominators_free(d);
    return rc;
}

void hp_dominators_free(hp_dominators *d)
{
    d->alloc.free_fn(d->idom);
    d->alloc.free_fn(d->retained);
    d->alloc.free_fn(d->count);
    d->idom = NULL;
    d->retained = NULL;
    d->count = NULL;
}

/* ---- top values ---- */

/* a ranks before b: larger value, then smaller vertex. */
static int ranks_before(const uint64_t *values, uint32_t a, uint32_t b)
{
    return values[a] > values[b] || (values[a] == values[b] && a < b);
}

/* Sifts heap[i] down a heap of `size` whose root ranks last. */
static void sift_down(const uint64_t *values, uint32_t *heap, size_t size, size_t i)
{
    for (;;) {
        size_t c = 2 * i + 1;
        uint32_t tmp;
        if (c >= size)
            return;
        if (c + 1 < size && ranks_before(values, heap[c], heap[c + 1]))
            c++;
        if (!ranks_before(values, heap[i], heap[c]))
            return;
        tmp = heap[i];
        heap[i] = heap[c];
        heap[c] = tmp;
        i = c;
    }
}

size_t hp_top_values(const uint64_t *values, const uint32_t *keep, uint32_t n, size_t k, uint32_t *out)
{
    size_t size = 0, i;
    uint32_t v;

    if (k == 0)
        return 0;
    for (v = 0; v < n; v++) {
        if (keep && keep[v] == HP_NONE)
            continue;
        if (size < k) {
            /* Sift up: the root is the one that ranks last. */
            i = size++;
            out[i] = v;
            while (i > 0 && ranks_before(values, out[(i - 1) / 2], out[i])) {
                uint32_t tmp = out[i];
                out[i] = out[(i - 1) / 2];
                out[(i - 1) / 2] = tmp;
                i = (i - 1) / 2;
            }
        } else if (ranks_before(values, v, out[0])) {
            out[0] = v;
            sift_down(values, out, size, 0);
        }
    }
    /* Heap sort: move the last-ranking to the end, repeatedly. */
    for (i = size; i > 1; i--) {
        uint32_t tmp = out[0];
        out[0] = out[i - 1];
        out[i - 1] = tmp;
        sift_down(values, out, i - 1, 0);
    }
    return size;
}
