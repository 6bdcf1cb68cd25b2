/* VisualVM's retained sizes, step by step as docs/heap-model.md states
 * them (§7 the nearest-GC-root search, §8.2 tree objects, §8.3 the
 * accumulation); the dominator tree in between is hp_dominators'. */
#include "hp_reach_impl.h"

#include <string.h>

static int claimable(const hp_reach *r, uint32_t v)
{
    return r->parent[v] == HP_NONE && !hp_bit(r->is_root, v);
}

static int reached(const hp_reach *r, uint32_t v)
{
    return r->parent[v] != HP_NONE || hp_bit(r->is_root, v);
}

/* §7: breadth first from the roots in their order, following the strong
 * slots (referents of the reference kinds skipped); the first object of
 * each class processed (arrays never) claims the class object if nobody
 * has.  Notes the parents, the class edges and the leaves in order. */
hp_code reach_vv_search(hp_reach *r, const hp_checkpoint *cp, hp_error *err)
{
    const hp_heap *h = r->heap;
    const uint32_t n = r->n;
    uint32_t *queue = hp_array_new(&r->alloc, n ? n : 1, 4);
    uint8_t *tried = hp_array_new(&r->alloc, r->nclasses ? r->nclasses : 1, 1);
    size_t head = 0, tail = 0, k;
    hp_pacer pacer = { cp, 0 };
    hp_code rc = HP_OK;
    r->is_root = hp_bits_new(&r->alloc, n);
    r->claims = hp_bits_new(&r->alloc, n);
    r->parent = hp_array_new(&r->alloc, n ? n : 1, 4);
    r->leaves = hp_array_new(&r->alloc, n ? n : 1, 4);
    if (!queue || !tried || !r->is_root || !r->claims || !r->parent || !r->leaves) {
        rc = hp_graph_stop(err, HP_E_NOMEM);
        goto done;
    }
    memset(r->parent, 0xFF, (size_t)n * 4);
    memset(tried, 0, r->nclasses);
    /* A root listed twice is processed once: the second time changes nothing. */
    for (k = 0; k < r->nroots; k++)
        if (!hp_bit(r->is_root, r->roots[k])) {
            hp_bit_set(r->is_root, r->roots[k]);
            queue[tail++] = r->roots[k];
        }
    while (head < tail) {
        uint32_t v = queue[head++], cls = hp_heap_object_class(h, v);
        hp_kind kind = hp_heap_object_kind(h, v);
        int has_values = 0;
        hp_ref_iter it;
        hp_ref ref;
        if (cls == HP_NONE) /* an instance of an unknown class: VisualVM cannot build it */
            continue;
        if (kind != HP_KIND_PRIM_ARRAY) {
            hp_ref_iter_init(&it, h, v);
            while (hp_ref_next(&it, &ref)) {
                if (ref.target == HP_NONE || (kind == HP_KIND_INSTANCE && reach_is_referent(r, cls, &ref)))
                    continue;
                has_values = 1;
                if (claimable(r, ref.target)) {
                    r->parent[ref.target] = v;
                    queue[tail++] = ref.target;
                }
            }
            if (kind != HP_KIND_OBJ_ARRAY && !tried[cls]) {
                uint32_t class_object = r->class_object[cls];
                tried[cls] = 1;
                if (class_object != HP_NONE && claimable(r, class_object)) {
                    r->parent[class_object] = v;
                    queue[tail++] = class_object;
                    hp_bit_set(r->claims, v);
                    has_values = 1;
                }
            }
        }
        if (!has_values)
            r->leaves[r->nleaves++] = v;
        if (hp_pace(&pacer, 1)) {
            rc = hp_graph_stop(err, HP_E_ABORTED);
            goto done;
        }
    }
done:
    r->alloc.free_fn(queue);
    r->alloc.free_fn(tried);
    return rc;
}

/* Marks in `multi` the vertices with two distinct referrers or more. */
static uint64_t *several_referrers(hp_reach *r)
{
    const hp_graph *g = &r->graph;
    uint32_t *first = hp_array_new(&r->alloc, r->n ? r->n : 1, 4), u;
    uint64_t *multi = hp_bits_new(&r->alloc, r->n);
    if (!first || !multi) {
        r->alloc.free_fn(first);
        r->alloc.free_fn(multi);
        return NULL;
    }
    memset(first, 0xFF, (size_t)r->n * 4);
    for (u = 0; u < r->n; u++) {
        uint32_t degree, e;
        const uint32_t *row = hp_graph_row(g, u, &degree);
        for (e = 0; e < degree; e++) {
            uint32_t t = row[e];
            if (first[t] == HP_NONE)
                first[t] = u;
            else if (first[t] != u)
                hp_bit_set(multi, t);
        }
    }
    r->alloc.free_fn(first);
    return multi;
}

/* Whether candidate p is a tree object: all its children (distinct, in
 * the table; for fields and statics, objects VisualVM can build) have one
 * referrer and are tree objects.  *total: the sum of their sizes.  The
 * children are p's row of the graph, less the class edge it ends with when
 * p claims its class (reach_cursor_step): no reference is looked up again. */
static int all_children_tree(hp_reach *r, uint32_t p, hp_kind kind, const uint64_t *multi, uint64_t *counted,
                             uint64_t *total)
{
    const hp_heap *h = r->heap;
    uint32_t degree, e;
    const uint32_t *row = hp_graph_row(&r->graph, p, &degree);
    int ok = 1;
    if (hp_bit(r->claims, p))
        degree--;
    *total = 0;
    for (e = 0; e < degree; e++) {
        uint32_t t = row[e];
        if (hp_bit(counted, t))
            continue;
        if (kind != HP_KIND_OBJ_ARRAY && hp_heap_object_class(h, t) == HP_NONE)
            continue;
        if (hp_bit(multi, t) || !hp_bit(r->tree, t)) {
            ok = 0;
            break;
        }
        hp_bit_set(counted, t);
        *total += r->retained[t];
    }
    for (e = 0; e < degree; e++)
        hp_bit_clear(counted, row[e]);
    return ok;
}

/* §8.2: leaves are tree objects of their own size; level by level from
 * their single-referrer parents, an object whose children are all
 * single-referrer tree objects is one too.  Candidates that never become
 * one keep VisualVM's -1 mark unless something is added to them later. */
hp_code reach_vv_tree_objects(hp_reach *r, const hp_checkpoint *cp, hp_error *err)
{
    const hp_heap *h = r->heap;
    uint64_t *multi = several_referrers(r), *queued = hp_bits_new(&r->alloc, r->n);
    uint64_t *counted = hp_bits_new(&r->alloc, r->n);
    uint32_t *level = r->leaves;
    size_t size = 0, k, i;
    hp_pacer pacer = { cp, 0 };
    hp_code rc = HP_OK;
    r->retained = hp_array_new(&r->alloc, r->n ? r->n : 1, 8);
    r->tree = hp_bits_new(&r->alloc, r->n);
    r->minus_one = hp_bits_new(&r->alloc, r->n);
    if (!multi || !queued || !counted || !r->retained || !r->tree || !r->minus_one) {
        rc = hp_graph_stop(err, HP_E_NOMEM);
        goto done;
    }
    memset(r->retained, 0, (size_t)r->n * 8);
    /* The leaves; their parents, compacted in place, are the first level. */
    for (i = 0; i < r->nleaves; i++) {
        uint32_t v = r->leaves[i], p = r->parent[v];
        hp_bit_set(r->tree, v);
        r->retained[v] = hp_heap_shallow_size(h, v);
        if (!hp_bit(multi, v) && p != HP_NONE && !hp_bit(r->minus_one, p)) {
            hp_bit_set(r->minus_one, p);
            level[size++] = p;
        }
    }
    for (;;) {
        int changed = 0;
        size_t next = 0;
        for (k = 0; k < size; k++) {
            uint32_t p = level[k], cls = hp_heap_object_class(h, p), q;
            hp_kind kind = hp_heap_object_kind(h, p);
            uint64_t total;
            if (cls == HP_NONE || kind == HP_KIND_PRIM_ARRAY || !all_children_tree(r, p, kind, multi, counted, &total))
                continue;
            hp_bit_set(r->tree, p);
            r->retained[p] = hp_heap_shallow_size(h, p) + total;
            changed = 1;
            q = r->parent[p];
            if (!hp_bit(multi, p) && q != HP_NONE && !hp_bit(queued, q)) {
                hp_bit_set(queued, q);
                level[next++] = q; /* next <= k: the level is rewritten in place */
            }
            if (hp_pace(&pacer, 1)) {
                rc = hp_graph_stop(err, HP_E_ABORTED);
                goto done;
            }
        }
        for (k = 0; k < next; k++)
            hp_bit_clear(queued, level[k]);
        if (!changed)
            break;
        size = next;
    }
done:
    r->alloc.free_fn(multi);
    r->alloc.free_fn(queued);
    r->alloc.free_fn(counted);
    return rc;
}

/* §8.3, one vertex after all it dominates: a tree object keeps its size
 * and hands it on (a class object hands nothing); any other reached
 * object record adds its own size (the header for an unknown class) to
 * what it was handed.  Nothing passes a tree object. */
void reach_vv_accumulate(hp_reach *r, uint32_t v)
{
    const hp_heap *h = r->heap;
    uint32_t d = r->dom.idom[v];
    int is_class = hp_heap_object_kind(h, v) == HP_KIND_CLASS;
    uint64_t handed;
    if (hp_bit(r->tree, v)) {
        handed = is_class ? 0 : r->retained[v];
    } else {
        if (!is_class && reached(r, v))
            r->retained[v] += hp_heap_object_class(h, v) != HP_NONE
                                  ? hp_heap_shallow_size(h, v)
                                  : (uint64_t)hp_heap_size_model(h)->min_instance;
        handed = r->retained[v];
    }
    if (hp_bit(r->tree, v) || r->retained[v] > 0)
        hp_bit_clear(r->minus_one, v);
    if (d != HP_NONE && d != HP_DOM_VIRTUAL && !hp_bit(r->tree, d))
        r->retained[d] += handed;
}
