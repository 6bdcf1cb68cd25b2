/* The dominator tree's children as a CSR, its walk, and the union rule by
 * group (hp_domtree.h). */
#include "hp_domtree.h"

#include "hp_heap_sort.h"

#include <string.h>

/* Bits needed for values up to x. */
static int bit_width(uint64_t x)
{
    int bits = 0;
    while (x) {
        bits++;
        x >>= 1;
    }
    return bits;
}

/* Sorts one row by order[] descending, ties by position (the row comes in
 * increasing vertex order, so ties stay by increasing vertex).  A long row
 * is sorted as packed ((max - key) << position bits | position) words by
 * the radix sort, in `scratch` (12 B an entry): a heapsort jumping between
 * the keys of a 2-million-entry row is 40 times slower. */
static void sort_row(uint32_t *kids, uint32_t width, const uint64_t *order, uint64_t *scratch)
{
    uint64_t max = 0, mask;
    uint32_t k, *copy;
    int position_bits, bits;
    if (width <= 16 || !scratch) {
        hp_sort_perm_by_keys_desc(kids, width, order);
        return;
    }
    for (k = 0; k < width; k++)
        if (order[kids[k]] > max)
            max = order[kids[k]];
    position_bits = bit_width(width - 1);
    bits = bit_width(max) + position_bits;
    if (bits > 64) {
        hp_sort_perm_by_keys_desc(kids, width, order);
        return;
    }
    mask = ((uint64_t)1 << position_bits) - 1;
    copy = (uint32_t *)(scratch + width);
    for (k = 0; k < width; k++) {
        scratch[k] = (max - order[kids[k]]) << position_bits | k;
        copy[k] = kids[k];
    }
    hp_sort_u64(scratch, width, bits);
    for (k = 0; k < width; k++)
        kids[k] = copy[scratch[k] & mask];
}

hp_code hp_domtree_build(hp_domtree *t, const uint32_t *idom, uint32_t n, const uint64_t *order, const hp_alloc *alloc,
                         const hp_checkpoint *cp, hp_error *err)
{
    hp_pacer pacer = { cp, 0 };
    uint32_t v, *first, *kids;
    memset(t, 0, sizeof *t);
    t->alloc = alloc ? *alloc : hp_default_alloc;
    t->n = n;
    t->first = first = hp_array_new(&t->alloc, (uint64_t)n + 2, 4);
    t->kids = kids = hp_array_new(&t->alloc, n, 4);
    if (!first || !kids) {
        hp_domtree_free(t);
        return hp_graph_stop(err, HP_E_NOMEM);
    }
    /* Count each row (slot n: the virtual root's) one place to the right,
     * sum, then fill moving each row's start to its end, and shift back. */
    memset(first, 0, ((size_t)n + 2) * 4);
    for (v = 0; v < n; v++) {
        uint32_t d = idom[v];
        if (d == HP_NONE)
            continue;
        if (d != HP_DOM_VIRTUAL && d >= n) {
            hp_domtree_free(t);
            return hp_vertex_fail(err, HP_E_USAGE, v, "immediate dominator out of range");
        }
        first[(d == HP_DOM_VIRTUAL ? n : d) + 1]++;
    }
    for (v = 0; v <= n; v++)
        first[v + 1] += first[v];
    for (v = 0; v < n; v++)
        if (idom[v] != HP_NONE)
            kids[first[idom[v] == HP_DOM_VIRTUAL ? n : idom[v]]++] = v;
    memmove(first + 1, first, ((size_t)n + 1) * 4);
    first[0] = 0;
    if (hp_pace(&pacer, (uint64_t)n * 3)) {
        hp_domtree_free(t);
        return hp_graph_stop(err, HP_E_ABORTED);
    }
    if (order) {
        uint32_t widest = 0;
        uint64_t *scratch = NULL;
        for (v = 0; v <= n; v++)
            if (first[v + 1] - first[v] > widest)
                widest = first[v + 1] - first[v];
        if (widest > 16 && !(scratch = hp_array_new(&t->alloc, (uint64_t)widest + widest / 2 + 1, 8))) {
            hp_domtree_free(t);
            return hp_graph_stop(err, HP_E_NOMEM);
        }
        for (v = 0; v <= n; v++) {
            uint32_t width = first[v + 1] - first[v];
            if (width < 2) /* most objects: a leaf, or one child */
                continue;
            sort_row(kids + first[v], width, order, scratch);
            if (hp_pace(&pacer, (uint64_t)width * 2)) {
                t->alloc.free_fn(scratch);
                hp_domtree_free(t);
                return hp_graph_stop(err, HP_E_ABORTED);
            }
        }
        t->alloc.free_fn(scratch);
    }
    return HP_OK;
}

void hp_domtree_free(hp_domtree *t)
{
    if (!t->alloc.free_fn)
        return;
    t->alloc.free_fn(t->first);
    t->alloc.free_fn(t->kids);
    t->first = t->kids = NULL;
}

/* One level of the walk: a vertex and the position of its next child. */
typedef struct walk_frame {
    uint32_t v;
    uint32_t next;
} walk_frame;

hp_code hp_domtree_walk(const hp_domtree *t, const hp_domtree_visitor *visitor, const hp_checkpoint *cp,
                        hp_error *err)
{
    const hp_alloc *a = &t->alloc;
    size_t top = 0, cap = 1024;
    hp_pacer pacer = { cp, 0 };
    walk_frame *stack = hp_array_new(a, cap, sizeof *stack);
    if (!stack)
        return hp_graph_stop(err, HP_E_NOMEM);
    stack[top].v = t->n; /* the virtual root's row */
    stack[top++].next = t->first[t->n];
    while (top > 0) {
        walk_frame *f = &stack[top - 1];
        uint32_t child;
        if (f->next == t->first[f->v + 1]) {
            if (f->v != t->n && visitor->leave)
                visitor->leave(visitor->ctx, f->v);
            top--;
            continue;
        }
        child = t->kids[f->next++];
        if (visitor->enter)
            visitor->enter(visitor->ctx, child);
        if (top == cap) {
            walk_frame *bigger = a->realloc_fn(stack, cap * 2 * sizeof *stack);
            if (!bigger) {
                a->free_fn(stack);
                return hp_graph_stop(err, HP_E_NOMEM);
            }
            stack = bigger;
            cap *= 2;
        }
        stack[top].v = child;
        stack[top++].next = t->first[child];
        if (hp_pace(&pacer, 2)) {
            a->free_fn(stack);
            return hp_graph_stop(err, HP_E_ABORTED);
        }
    }
    a->free_fn(stack);
    return HP_OK;
}

/* The union rule's walk: open[g] counts the members of g on the branch. */
typedef struct group_walk {
    const uint32_t *group;
    uint32_t *open;
    hp_group_top top;
    void *ctx;
} group_walk;

static void group_enter(void *ctx, uint32_t v)
{
    group_walk *w = ctx;
    uint32_t g = w->group[v];
    if (g == HP_NONE)
        return;
    if (w->open[g & ~HP_GROUP_SHADOW]++ == 0 && !(g & HP_GROUP_SHADOW))
        w->top(w->ctx, v, g);
}

static void group_leave(void *ctx, uint32_t v)
{
    group_walk *w = ctx;
    uint32_t g = w->group[v];
    if (g != HP_NONE)
        w->open[g & ~HP_GROUP_SHADOW]--;
}

hp_code hp_domtree_group_tops(const hp_domtree *t, const uint32_t *group, uint32_t ngroups, hp_group_top top,
                              void *ctx, const hp_checkpoint *cp, hp_error *err)
{
    hp_domtree_visitor visitor;
    group_walk w;
    hp_code rc;
    uint32_t v;
    for (v = 0; v < t->n; v++)
        if (group[v] != HP_NONE && (group[v] & ~HP_GROUP_SHADOW) >= ngroups)
            return hp_vertex_fail(err, HP_E_USAGE, v, "group out of range");
    w.group = group;
    w.open = hp_array_new(&t->alloc, ngroups, 4);
    w.top = top;
    w.ctx = ctx;
    if (!w.open)
        return hp_graph_stop(err, HP_E_NOMEM);
    memset(w.open, 0, (size_t)ngroups * 4);
    visitor.enter = group_enter;
    visitor.leave = group_leave;
    visitor.ctx = &w;
    rc = hp_domtree_walk(t, &visitor, cp, err);
    t->alloc.free_fn(w.open);
    return rc;
}
