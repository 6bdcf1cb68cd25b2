/* The BMD decoder's class table (hp_bmd_classes.h). */
#include "hp_bmd_classes.h"

#include <string.h>

enum { BUSY = 1, DONE = 2 };

void bmd_classes_init(bmd_classes *c, const hp_alloc *alloc, size_t limit)
{
    memset(c, 0, sizeof *c);
    c->alloc = alloc ? *alloc : hp_default_alloc;
    c->limit = limit;
    hp_buf_init(&c->arena, &c->alloc);
    hp_buf_init(&c->table, &c->alloc);
    hp_buf_init(&c->path, &c->alloc);
    hp_idmap_init(&c->index, &c->alloc);
}

void bmd_classes_free(bmd_classes *c)
{
    hp_buf_free(&c->arena);
    hp_buf_free(&c->table);
    hp_buf_free(&c->path);
    hp_idmap_clear(&c->index);
    c->v = NULL;
    c->n = 0;
}

/* Bytes held: the arena, the table and its index. */
static size_t held(const bmd_classes *c, size_t more)
{
    return c->arena.len + more + c->table.cap + c->path.cap + c->index.cap * 12;
}

hp_code bmd_classes_put(bmd_classes *c, uint32_t id, uint32_t super, const uint8_t *dump, uint32_t dump_len,
                        const uint8_t *types, uint32_t n_types, uint32_t own, uint32_t zeros)
{
    uint32_t *slot;
    bmd_class *k;
    int inserted;
    if (held(c, (size_t)dump_len + n_types + sizeof *k + 24) > c->limit)
        return HP_E_LIMIT;
    if (hp_buf_reserve(&c->table, sizeof *k) < 0 || !(slot = hp_idmap_put(&c->index, id, (uint32_t)c->n, &inserted)))
        return HP_E_NOMEM;
    c->v = (bmd_class *)(void *)c->table.data;
    if (inserted) {
        k = &c->v[c->n];
        k->rank = (uint32_t)c->n++;
        c->table.len += sizeof *k;
    } else {
        k = &c->v[*slot];
    }
    k->id = id;
    k->super = super;
    k->dump = c->arena.len;
    k->dump_len = dump_len;
    k->types = c->arena.len + dump_len;
    k->n_types = n_types;
    k->own = own;
    k->zeros = zeros;
    k->state = 0;
    if (hp_buf_append(&c->arena, dump, dump_len) < 0 || hp_buf_append(&c->arena, types, n_types) < 0)
        return HP_E_NOMEM;
    return HP_OK;
}

bmd_class *bmd_classes_get(const bmd_classes *c, uint32_t id)
{
    uint32_t *slot = hp_idmap_get(&c->index, id);
    return slot ? &c->v[*slot] : NULL;
}

hp_code bmd_classes_resolve(bmd_classes *c, bmd_class *k, uint32_t *looping)
{
    const uint32_t *path;
    bmd_class *x = k;
    size_t n = 0;
    uint32_t first_kept = 0, first = 0;
    uint64_t chain = 0;
    /* Up to the first resolved class, or the end of the chain: a superclass
     * without a definition ends it (the decruncher stops there too). */
    c->path.len = 0;
    while (x && x->state != DONE) {
        if (x->state == BUSY) {
            *looping = x->id;
            while (n) /* leave the table as it was */
                c->v[((const uint32_t *)(const void *)c->path.data)[--n]].state = 0;
            return HP_E_CORRUPT;
        }
        if (hp_buf_reserve(&c->path, sizeof(uint32_t)) < 0)
            return HP_E_NOMEM;
        x->state = BUSY;
        ((uint32_t *)(void *)c->path.data)[n++] = (uint32_t)(x - c->v);
        c->path.len += sizeof(uint32_t);
        x = x->super ? bmd_classes_get(c, x->super) : NULL;
    }
    if (x) {
        first_kept = x->first_kept;
        first = x->first;
        chain = x->chain;
    }
    path = (const uint32_t *)(const void *)c->path.data;
    while (n) {
        x = &c->v[path[--n]];
        x->after_kept = first_kept;
        x->after = first;
        x->chain = chain + x->own;
        if (x->n_types)
            first_kept = (uint32_t)(x - c->v) + 1;
        if (x->own)
            first = (uint32_t)(x - c->v) + 1;
        x->first_kept = first_kept;
        x->first = first;
        x->state = DONE;
        chain = x->chain;
    }
    return HP_OK;
}

/* Java's HashMap spreads an Integer key's hash: h ^ (h >>> 16). */
static uint32_t spread(uint32_t key) { return key ^ (key >> 16); }

/* counts[b]: keys of the first n (in rank order) in bucket b of a table of cap. */
static void count_buckets(const bmd_classes *c, const uint32_t *by_rank, size_t n, size_t *counts, size_t cap)
{
    size_t i;
    memset(counts, 0, cap * sizeof *counts);
    for (i = 0; i < n; i++)
        counts[spread(c->v[by_rank[i]].id) & (cap - 1)]++;
}

uint32_t *bmd_classes_hash_order(const bmd_classes *c)
{
    /* The table as the map grew it: 16 buckets at the first put, doubled
     * when it holds more than 3/4 of its size, and when a bucket of a table
     * under 64 buckets reaches 9 keys (a bigger table makes such a bucket a
     * tree, whose order this does not model: it keeps rank order there). */
    size_t cap = 16, i, n = c->n ? c->n : 1;
    size_t *counts = NULL, *starts = NULL;
    uint32_t *by_rank = c->alloc.malloc_fn(n * sizeof *by_rank), *order = NULL;
    if (!by_rank || !(counts = c->alloc.malloc_fn(cap * sizeof *counts)))
        goto done;
    for (i = 0; i < c->n; i++)
        by_rank[c->v[i].rank] = (uint32_t)i;
    memset(counts, 0, cap * sizeof *counts);
    for (i = 0; i < c->n; i++) {
        int grow = ++counts[spread(c->v[by_rank[i]].id) & (cap - 1)] >= 9 && cap < 64;
        grow += i + 1 > cap / 4 * 3;
        while (grow--) {
            size_t *g = c->alloc.realloc_fn(counts, cap * 2 * sizeof *g);
            if (!g)
                goto done;
            counts = g;
            cap *= 2;
            count_buckets(c, by_rank, i + 1, counts, cap);
        }
    }
    if (!(order = c->alloc.malloc_fn(n * sizeof *order)) || !(starts = c->alloc.malloc_fn((cap + 1) * sizeof *starts)))
        goto done;
    memset(starts, 0, (cap + 1) * sizeof *starts);
    for (i = 0; i < c->n; i++)
        starts[(spread(c->v[i].id) & (cap - 1)) + 1]++;
    for (i = 0; i < cap; i++)
        starts[i + 1] += starts[i];
    for (i = 0; i < c->n; i++) /* in rank order: a bucket lists its keys as they came */
        order[starts[spread(c->v[by_rank[i]].id) & (cap - 1)]++] = by_rank[i];
    c->alloc.free_fn(starts);
    c->alloc.free_fn(counts);
    c->alloc.free_fn(by_rank);
    return order;
done:
    c->alloc.free_fn(order);
    c->alloc.free_fn(starts);
    c->alloc.free_fn(counts);
    c->alloc.free_fn(by_rank);
    return NULL;
}
