/* The live set (hp_reach_live.h): one depth-first marking from the roots. */
#include "hp_reach_live.h"

#include "hp_reach_impl.h"

#include <string.h>

/* Marks `target` and pushes it when it is new. */
static inline void reach(uint64_t *live, uint32_t *stack, uint32_t *top, uint32_t *count, uint32_t target)
{
    if (target == HP_NONE || target == HP_EDGE_HOLE || hp_bit(live, target))
        return;
    hp_bit_set(live, target);
    stack[(*top)++] = target;
    (*count)++;
}

/* The class object v points at beyond the graph: an instance's or array's
 * class, a class object's superclass. */
static uint32_t class_edge(const hp_reach *r, uint32_t v)
{
    hp_object o;
    uint32_t cls;
    if (hp_heap_object_kind(r->heap, v) != HP_KIND_CLASS) {
        cls = hp_heap_object_class(r->heap, v);
        return cls == HP_NONE ? HP_NONE : r->class_object[cls];
    }
    hp_heap_object(r->heap, v, &o);
    if (o.self_ord == HP_NONE || r->class_super[o.self_ord] == HP_NONE)
        return HP_NONE;
    return r->class_object[r->class_super[o.self_ord]];
}

hp_code hp_reach_live(hp_reach *r, const hp_checkpoint *cp, hp_error *err)
{
    hp_pacer pacer = { cp, 0 };
    uint32_t *stack, top = 0, count = 0;
    uint64_t *live;
    size_t k;
    if (r->live)
        return HP_OK;
    live = hp_array_new(&r->alloc, hp_bits_bytes(r->n), 1);
    stack = hp_array_new(&r->alloc, (uint64_t)r->n + 1, 4);
    if (!live || !stack) {
        r->alloc.free_fn(live);
        r->alloc.free_fn(stack);
        return hp_graph_stop(err, HP_E_NOMEM);
    }
    memset(live, 0, hp_bits_bytes(r->n));
    for (k = 0; k < r->nroots; k++)
        reach(live, stack, &top, &count, r->roots[k]);
    while (top) {
        uint32_t v = stack[--top], degree, e;
        const uint32_t *row = hp_graph_row(&r->graph, v, &degree);
        hp_ref weak;
        for (e = 0; e < degree; e++)
            reach(live, stack, &top, &count, row[e]);
        if (reach_weak_edge(r, v, &weak))
            reach(live, stack, &top, &count, weak.target);
        reach(live, stack, &top, &count, class_edge(r, v));
        if (hp_pace(&pacer, (uint64_t)degree + 1)) {
            r->alloc.free_fn(live);
            r->alloc.free_fn(stack);
            return hp_graph_stop(err, HP_E_ABORTED);
        }
    }
    r->alloc.free_fn(stack);
    r->live = live;
    r->live_count = count;
    return HP_OK;
}

const uint64_t *hp_reach_live_bits(const hp_reach *r) { return r->live; }

uint32_t hp_reach_live_count(const hp_reach *r) { return r->live_count; }
