/* Shortest paths merged into one tree (hp_reach_merged.h). */
#include "hp_reach_merged.h"

#include "hp_reach_impl.h"

#include <string.h>

/* Where a node sits: its parent, the reference from it, its objects' class. */
typedef struct node_key {
    uint32_t parent;
    uint8_t kind;
    uint32_t slot;
    uint32_t cls;
    uint8_t class_object;
} node_key;

typedef struct folder {
    hp_reach *r;
    hp_merged *m;
    uint32_t cap;          /* nodes the arrays hold */
    uint32_t *table;       /* open addressing: node + 1, 0 for free */
    uint32_t table_size;   /* a power of two, at least twice the nodes */
} folder;

static uint32_t key_hash(const node_key *k)
{
    uint64_t h = ((uint64_t)k->parent * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)k->slot << 8 | k->kind);
    h ^= ((uint64_t)k->cls << 1 | k->class_object) * 0xC2B2AE3D27D4EB4FULL;
    h ^= h >> 29;
    return (uint32_t)(h * 0x165667B19E3779F9ULL >> 32);
}

static int key_is(const hp_merged *m, uint32_t node, const node_key *k)
{
    return m->parent[node] == k->parent && m->kind[node] == k->kind && m->slot[node] == k->slot &&
           m->cls[node] == k->cls && m->class_object[node] == k->class_object;
}

/* Grows every per-node array to `cap`; 0, or -1 out of memory. */
static int grow_nodes(folder *f, uint32_t cap)
{
    hp_merged *m = f->m;
    void **arrays[] = { (void **)&m->parent, (void **)&m->slot, (void **)&m->holder, (void **)&m->cls,
                        (void **)&m->kind, (void **)&m->class_object };
    size_t sizes[] = { 4, 4, 4, 4, 1, 1 }, k;
    for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        void *bigger = m->alloc.realloc_fn(*arrays[k], (size_t)cap * sizes[k]);
        if (!bigger)
            return -1;
        *arrays[k] = bigger;
    }
    f->cap = cap;
    return 0;
}

/* Doubles the table and puts every node back. */
static int grow_table(folder *f)
{
    uint32_t size = f->table_size * 2, k;
    uint32_t *table = hp_array_new(&f->m->alloc, size, 4);
    if (!table)
        return -1;
    memset(table, 0, (size_t)size * 4);
    for (k = 0; k < f->m->count; k++) {
        node_key key = { f->m->parent[k], f->m->kind[k], f->m->slot[k], f->m->cls[k], f->m->class_object[k] };
        uint32_t at = key_hash(&key) & (size - 1);
        while (table[at])
            at = (at + 1) & (size - 1);
        table[at] = k + 1;
    }
    f->m->alloc.free_fn(f->table);
    f->table = table;
    f->table_size = size;
    return 0;
}

/* The node of `key`, made if new (holder: a vertex holding its reference);
 * HP_NONE when out of memory. */
static uint32_t node_of_key(folder *f, const node_key *key, uint32_t holder)
{
    hp_merged *m = f->m;
    uint32_t at = key_hash(key) & (f->table_size - 1), node;
    while (f->table[at]) {
        if (key_is(m, f->table[at] - 1, key))
            return f->table[at] - 1;
        at = (at + 1) & (f->table_size - 1);
    }
    if (m->count == HP_MARK - 1 ||
        (m->count == f->cap && grow_nodes(f, f->cap > HP_MARK / 2 ? HP_MARK : f->cap * 2) < 0))
        return HP_NONE;
    node = m->count++;
    m->parent[node] = key->parent;
    m->kind[node] = key->kind;
    m->slot[node] = key->slot;
    m->cls[node] = key->cls;
    m->class_object[node] = key->class_object;
    m->holder[node] = holder;
    f->table[at] = node + 1;
    if ((uint64_t)m->count * 2 > f->table_size && grow_table(f) < 0)
        return HP_NONE;
    return node;
}

/* The class part of v's key. */
static void class_key(const hp_heap *h, uint32_t v, node_key *key)
{
    key->class_object = hp_heap_object_kind(h, v) == HP_KIND_CLASS;
    if (key->class_object) {
        hp_object o;
        hp_heap_object(h, v, &o);
        key->cls = o.self_ord;
    } else {
        key->cls = hp_heap_object_class(h, v);
    }
}

/* The reference part of the key of edge `pos` of `holder`: an array's
 * elements fold into one ("[]").  0, or -1 when the graph lacks the edge. */
static int reference_key(const hp_reach *r, uint32_t holder, uint32_t pos, node_key *key)
{
    hp_ref ref;
    uint32_t degree;
    hp_graph_row(&r->graph, holder, &degree);
    if (hp_heap_object_kind(r->heap, holder) == HP_KIND_OBJ_ARRAY &&
        !(r->claims && hp_bit(r->claims, holder) && pos + 1 == degree)) {
        key->kind = HP_REF_ELEMENT;
        key->slot = 0;
        return 0;
    }
    if (!hp_reach_edge(r, holder, pos, &ref))
        return -1;
    key->kind = (uint8_t)ref.kind;
    key->slot = ref.kind == HP_REF_ELEMENT ? 0 : ref.slot;
    return 0;
}

/* Places v (whose parent, if any, has its node) in the tree. */
static hp_code place(folder *f, const hp_bfs *b, uint32_t v, uint32_t *node_of, hp_error *err)
{
    const hp_reach *r = f->r;
    uint32_t parent = b->parent[v], holder = HP_NONE;
    node_key key;
    class_key(r->heap, v, &key);
    if (parent == HP_MARK) {
        hp_root root;
        hp_heap_root(r->heap, hp_reach_root_record(r, b->edge[v]), &root);
        key.parent = HP_NONE;
        key.kind = HP_MERGED_ROOT;
        key.slot = (uint32_t)root.kind;
    } else {
        key.parent = node_of[parent];
        holder = parent;
        if (reference_key(r, parent, b->edge[v], &key) < 0)
            return hp_vertex_fail(err, HP_E_USAGE, v, "a search edge is missing from the graph");
    }
    node_of[v] = node_of_key(f, &key, holder);
    return node_of[v] == HP_NONE ? hp_graph_stop(err, HP_E_NOMEM) : HP_OK;
}

/* Gives every vertex on the targets' paths its node, marking each target
 * in `counted` once (duplicates count once). */
static hp_code fold(folder *f, const hp_bfs *b, const uint32_t *targets, size_t ntargets, uint32_t *node_of,
                    uint64_t *counted, const hp_checkpoint *cp, hp_error *err)
{
    hp_reach *r = f->r;
    hp_merged *m = f->m;
    hp_pacer pacer = { cp, 0 };
    uint32_t *chain = hp_array_new(&m->alloc, 64, 4), cap = 64;
    hp_code rc = HP_OK;
    size_t k;
    if (!chain)
        return hp_graph_stop(err, HP_E_NOMEM);
    for (k = 0; k < ntargets && rc == HP_OK; k++) {
        uint32_t t = targets[k], v, len = 0;
        if (t >= r->n || hp_bit(counted, t))
            continue;
        hp_bit_set(counted, t);
        if (!hp_bit(b->visited, t)) {
            m->unreached++;
            continue;
        }
        m->reached++;
        /* Up to the first vertex placed already (or a root), then down. */
        for (v = t; node_of[v] == HP_NONE; v = b->parent[v]) {
            if (len == cap) {
                uint32_t *bigger = m->alloc.realloc_fn(chain, (size_t)cap * 2 * 4);
                if (!bigger) {
                    rc = hp_graph_stop(err, HP_E_NOMEM);
                    break;
                }
                chain = bigger;
                cap *= 2;
            }
            chain[len++] = v;
            if (b->parent[v] == HP_MARK)
                break;
        }
        if (rc == HP_OK && hp_pace(&pacer, 1 + (uint64_t)len))
            rc = hp_graph_stop(err, HP_E_ABORTED);
        while (len > 0 && rc == HP_OK)
            rc = place(f, b, chain[--len], node_of, err);
    }
    m->alloc.free_fn(chain);
    return rc;
}

/* The targets at or below each node, and their shallow sizes. */
static void count_targets(hp_merged *m, const hp_heap *h, const uint32_t *targets, size_t ntargets,
                          const uint32_t *node_of, uint64_t *counted)
{
    uint32_t k;
    size_t i;
    for (i = 0; i < ntargets; i++) {
        uint32_t t = targets[i];
        if (t == HP_NONE || !hp_bit(counted, t) || node_of[t] == HP_NONE)
            continue;
        hp_bit_clear(counted, t); /* once */
        m->targets[node_of[t]]++;
        m->target_shallow[node_of[t]] += hp_heap_shallow_size(h, t);
    }
    for (k = m->count; k-- > 0;) /* parents come first: children add up before them */
        if (m->parent[k] != HP_NONE) {
            m->targets[m->parent[k]] += m->targets[k];
            m->target_shallow[m->parent[k]] += m->target_shallow[k];
        }
}

hp_code hp_reach_merged(hp_reach *r, const hp_bfs *b, const uint32_t *targets, size_t ntargets,
                        const hp_checkpoint *cp, hp_merged *out, hp_error *err)
{
    folder f;
    uint32_t *node_of;
    uint64_t *counted, **totals[] = { &out->objects, &out->shallow, &out->retained, &out->targets,
                                      &out->target_shallow };
    hp_code rc = HP_OK;
    size_t k;
    memset(out, 0, sizeof *out);
    out->alloc = r->alloc;
    memset(&f, 0, sizeof f);
    f.r = r;
    f.m = out;
    f.table_size = 64;
    f.table = hp_array_new(&out->alloc, f.table_size, 4);
    node_of = hp_array_new(&out->alloc, r->n, 4);
    counted = hp_bits_new(&out->alloc, r->n);
    if (!f.table || !node_of || !counted || grow_nodes(&f, 16) < 0)
        rc = hp_graph_stop(err, HP_E_NOMEM);
    if (rc == HP_OK) {
        memset(f.table, 0, (size_t)f.table_size * 4);
        memset(node_of, 0xFF, (size_t)r->n * 4);
        rc = fold(&f, b, targets, ntargets, node_of, counted, cp, err);
    }
    for (k = 0; rc == HP_OK && k < sizeof totals / sizeof totals[0]; k++)
        if (!(*totals[k] = hp_array_new(&out->alloc, out->count, 8)))
            rc = hp_graph_stop(err, HP_E_NOMEM);
        else
            memset(*totals[k], 0, (size_t)out->count * 8);
    if (rc == HP_OK) {
        count_targets(out, r->heap, targets, ntargets, node_of, counted);
        /* Objects, shallow sizes and the union of retained sets, per node. */
        rc = hp_reach_group_totals(r, node_of, out->count, out->objects, out->shallow, out->retained, cp, err);
    }
    out->alloc.free_fn(f.table);
    out->alloc.free_fn(node_of);
    out->alloc.free_fn(counted);
    if (rc != HP_OK)
        hp_merged_free(out);
    return rc;
}

void hp_merged_free(hp_merged *m)
{
    if (!m->alloc.free_fn)
        return;
    m->alloc.free_fn(m->parent);
    m->alloc.free_fn(m->kind);
    m->alloc.free_fn(m->slot);
    m->alloc.free_fn(m->holder);
    m->alloc.free_fn(m->cls);
    m->alloc.free_fn(m->class_object);
    m->alloc.free_fn(m->objects);
    m->alloc.free_fn(m->shallow);
    m->alloc.free_fn(m->retained);
    m->alloc.free_fn(m->targets);
    m->alloc.free_fn(m->target_shallow);
    memset(m, 0, sizeof *m);
}
