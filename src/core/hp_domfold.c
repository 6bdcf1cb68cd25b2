/* The dominator tree folded by key (hp_domfold.h). */
#include "hp_domfold.h"

#include <string.h>

typedef struct folder {
    hp_domfold *f;
    uint32_t cap;          /* nodes the arrays hold */
    uint32_t *table;       /* open addressing: node + 1, 0 for free */
    uint32_t table_size;   /* a power of two, at least twice the nodes */
} folder;

static uint32_t slot_of(uint32_t parent, uint32_t key, uint32_t size)
{
    uint64_t h = ((uint64_t)parent << 32 | key) * 0x9E3779B97F4A7C15ULL;
    return (uint32_t)(h >> 32) & (size - 1);
}

/* Grows every per-node array to `cap`; 0, or -1 out of memory. */
static int grow_nodes(folder *w, uint32_t cap)
{
    hp_domfold *f = w->f;
    void **arrays[] = { (void **)&f->parent, (void **)&f->key, (void **)&f->objects, (void **)&f->shallow,
                        (void **)&f->retained, (void **)&f->tops };
    size_t sizes[] = { 4, 4, 8, 8, 8, (size_t)f->top * 4 + 1 }, k;
    for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        void *bigger = f->alloc.realloc_fn(*arrays[k], (size_t)cap * sizes[k]);
        if (!bigger)
            return -1;
        *arrays[k] = bigger;
    }
    w->cap = cap;
    return 0;
}

/* Doubles the table and puts every node but the root back. */
static int grow_table(folder *w)
{
    uint32_t size = w->table_size * 2, k;
    uint32_t *table = hp_array_new(&w->f->alloc, size, 4);
    if (!table)
        return -1;
    memset(table, 0, (size_t)size * 4);
    for (k = 1; k < w->f->count; k++) {
        uint32_t at = slot_of(w->f->parent[k], w->f->key[k], size);
        while (table[at])
            at = (at + 1) & (size - 1);
        table[at] = k + 1;
    }
    w->f->alloc.free_fn(w->table);
    w->table = table;
    w->table_size = size;
    return 0;
}

/* The node (parent, key), made if new; HP_NONE when out of memory or of
 * node numbers. */
static uint32_t node_of_key(folder *w, uint32_t parent, uint32_t key)
{
    hp_domfold *f = w->f;
    uint32_t at = slot_of(parent, key, w->table_size), node, at2;
    while (w->table[at]) {
        node = w->table[at] - 1;
        if (f->parent[node] == parent && f->key[node] == key)
            return node;
        at = (at + 1) & (w->table_size - 1);
    }
    if (f->count == HP_NONE - 1 ||
        (f->count == w->cap && grow_nodes(w, w->cap > HP_NONE / 2 ? HP_NONE - 1 : w->cap * 2) < 0))
        return HP_NONE;
    node = f->count++;
    f->parent[node] = parent;
    f->key[node] = key;
    f->objects[node] = f->shallow[node] = f->retained[node] = 0;
    for (at2 = 0; at2 < f->top; at2++)
        f->tops[(size_t)node * f->top + at2] = HP_NONE;
    w->table[at] = node + 1;
    if ((uint64_t)f->count * 2 > w->table_size && grow_table(w) < 0)
        return HP_NONE;
    return node;
}

/* Puts v among its node's tops if it ranks there. */
static void keep_top(hp_domfold *f, const hp_domfold_keys *keys, uint32_t node, uint32_t v)
{
    uint32_t *tops = f->tops + (size_t)node * f->top, at = f->top;
    uint64_t rank = keys->rank(keys->ctx, v);
    while (at > 0) {
        uint32_t u = tops[at - 1];
        uint64_t above;
        if (u != HP_NONE) {
            above = keys->rank(keys->ctx, u);
            if (above > rank || (above == rank && u < v))
                break;
        }
        if (at < f->top)
            tops[at] = u;
        at--;
    }
    if (at < f->top)
        tops[at] = v;
}

/* Breadth first from the virtual root: queue[k]'s node is nodes[k], made
 * from its dominator's node when it is queued, so parents come first. */
static hp_code fold(folder *w, const hp_domtree *t, const hp_domfold_keys *keys, uint32_t *queue, uint32_t *nodes,
                    const hp_checkpoint *cp, hp_error *err)
{
    hp_domfold *f = w->f;
    hp_pacer pacer = { cp, 0 };
    uint32_t head = 0, tail = 0, from = HP_DOM_VIRTUAL, from_node = 0;
    for (;;) {
        uint32_t count, k;
        const uint32_t *kids = hp_domtree_children(t, from, &count);
        for (k = 0; k < count; k++) {
            uint32_t v = kids[k], key = keys->key(keys->ctx, v), node;
            if (key == HP_NONE)
                return hp_vertex_fail(err, HP_E_USAGE, v, "a vertex keyed HP_NONE");
            node = node_of_key(w, from_node, key);
            if (node == HP_NONE)
                return f->count == HP_NONE - 1 ? hp_vertex_fail(err, HP_E_USAGE, v, "more than 2^32 - 2 nodes")
                                               : hp_graph_stop(err, HP_E_NOMEM);
            f->objects[node]++;
            f->shallow[node] += keys->size(keys->ctx, v);
            if (f->top)
                keep_top(f, keys, node, v);
            queue[tail] = v;
            nodes[tail++] = node;
        }
        if (hp_pace(&pacer, count + 1))
            return hp_graph_stop(err, HP_E_ABORTED);
        if (head == tail)
            break;
        from = queue[head];
        from_node = nodes[head++];
    }
    /* Children after parents: adding backwards sums each subtree once. */
    for (from = f->count; from-- > 0;) {
        f->retained[from] += f->shallow[from];
        if (from > 0)
            f->retained[f->parent[from]] += f->retained[from];
    }
    return HP_OK;
}

hp_code hp_domfold_build(hp_domfold *out, const hp_domtree *t, const hp_domfold_keys *keys, uint32_t top,
                         const hp_alloc *alloc, const hp_checkpoint *cp, hp_error *err)
{
    folder w = { out, 0, NULL, 16 };
    uint32_t *queue, *nodes, k;
    hp_code rc = HP_E_NOMEM;
    memset(out, 0, sizeof *out);
    out->alloc = *alloc;
    if (top > HP_DOMFOLD_TOPS)
        return hp_vertex_fail(err, HP_E_USAGE, top, "too many top vertices a node");
    out->top = keys->rank ? top : 0;
    queue = hp_array_new(alloc, t->n, 4);
    nodes = hp_array_new(alloc, t->n, 4);
    w.table = hp_array_new(alloc, w.table_size, 4);
    if (queue && nodes && w.table && grow_nodes(&w, 16) == 0) {
        memset(w.table, 0, (size_t)w.table_size * 4);
        out->count = 1;
        out->parent[0] = out->key[0] = HP_NONE;
        for (k = 0; k < out->top; k++)
            out->tops[k] = HP_NONE;
        out->objects[0] = out->shallow[0] = out->retained[0] = 0;
        rc = fold(&w, t, keys, queue, nodes, cp, err);
    } else {
        hp_graph_stop(err, HP_E_NOMEM);
    }
    if (queue)
        alloc->free_fn(queue);
    if (nodes)
        alloc->free_fn(nodes);
    if (w.table)
        alloc->free_fn(w.table);
    if (rc != HP_OK)
        hp_domfold_free(out);
    return rc;
}

void hp_domfold_free(hp_domfold *f)
{
    if (!f->alloc.free_fn)
        return;
    f->alloc.free_fn(f->parent);
    f->alloc.free_fn(f->key);
    f->alloc.free_fn(f->objects);
    f->alloc.free_fn(f->shallow);
    f->alloc.free_fn(f->retained);
    f->alloc.free_fn(f->tops);
    f->parent = f->key = f->tops = NULL;
    f->objects = f->shallow = f->retained = NULL;
    f->count = 0;
}

/* A growable list of vertices. */
typedef struct list {
    uint32_t *v;
    uint32_t count, cap;
} list;

static int list_push(const hp_alloc *a, list *l, uint32_t v)
{
    if (l->count == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 64;
        uint32_t *bigger = a->realloc_fn(l->v, (size_t)cap * 4);
        if (!bigger)
            return -1;
        l->v = bigger;
        l->cap = cap;
    }
    l->v[l->count++] = v;
    return 0;
}

hp_code hp_domfold_members(const hp_domfold *f, const hp_domtree *t, const hp_domfold_keys *keys, uint32_t node,
                           uint32_t **out, uint32_t *count, const hp_checkpoint *cp, hp_error *err)
{
    const hp_alloc *a = &f->alloc;
    hp_pacer pacer = { cp, 0 };
    list level = { NULL, 0, 0 }, next = { NULL, 0, 0 };
    uint32_t *path, depth = 0, k, j, n;
    hp_code rc = HP_OK;
    *out = NULL;
    *count = 0;
    if (node >= f->count)
        return hp_vertex_fail(err, HP_E_USAGE, node, "no such node");
    for (n = node; n != 0; n = f->parent[n])
        depth++;
    if (!(path = hp_array_new(a, depth, 4)))
        return hp_graph_stop(err, HP_E_NOMEM);
    for (n = node, k = depth; n != 0; n = f->parent[n])
        path[--k] = f->key[n];
    if (list_push(a, &level, HP_DOM_VIRTUAL) < 0)
        rc = hp_graph_stop(err, HP_E_NOMEM);
    /* One level at a time: the children of the last level's vertices
     * keyed as the path's next step. */
    for (k = 0; rc == HP_OK && k < depth; k++) {
        next.count = 0;
        for (j = 0; rc == HP_OK && j < level.count; j++) {
            uint32_t width, i;
            const uint32_t *kids = hp_domtree_children(t, level.v[j], &width);
            for (i = 0; i < width; i++)
                if (keys->key(keys->ctx, kids[i]) == path[k] && list_push(a, &next, kids[i]) < 0) {
                    rc = hp_graph_stop(err, HP_E_NOMEM);
                    break;
                }
            if (rc == HP_OK && hp_pace(&pacer, width + 1))
                rc = hp_graph_stop(err, HP_E_ABORTED);
        }
        {
            list swap = level;
            level = next;
            next = swap;
        }
    }
    a->free_fn(path);
    if (next.v)
        a->free_fn(next.v);
    if (rc != HP_OK || depth == 0) {
        if (level.v)
            a->free_fn(level.v);
        return rc;
    }
    *out = level.v;
    *count = level.count;
    return HP_OK;
}
