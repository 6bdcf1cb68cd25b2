/* The class histogram (hp_histogram.h): one pass over the index. */
#include "hp_histogram.h"

#include "hp_graph.h"

hp_code hp_heap_class_histogram(const hp_heap *h, const uint64_t *keep, const uint8_t *slot_of_heap, uint32_t nslots,
                                uint64_t *counts, uint64_t *bytes, int (*interrupt)(void *ctx), void *ctx,
                                hp_error *err)
{
    uint32_t n = hp_heap_object_count(h), i;
    for (i = 0; i < n; i++) {
        uint32_t row;
        uint64_t at;
        int heap;
        if ((i & 0xFFFF) == 0 && interrupt && interrupt(ctx))
            return hp_fail(err, HP_E_ABORTED, 0, -1, 0, 0, 0, "interrupted");
        if (keep && !hp_bit(keep, i))
            continue;
        if ((row = hp_heap_instance_class(h, i)) == HP_NONE) {
            hp_object o;
            if (hp_heap_object_kind(h, i) != HP_KIND_PRIM_ARRAY)
                continue; /* a class object, or an instance of a class the dump lacks */
            hp_heap_object(h, i, &o);
            if (o.elem_type < HP_T_BOOLEAN || o.elem_type > HP_T_LONG)
                continue;
            row = hp_heap_class_count(h) + (uint32_t)(o.elem_type - HP_T_BOOLEAN);
        }
        at = (uint64_t)row * nslots;
        if (slot_of_heap) {
            heap = hp_heap_object_heap(h, i);
            at += slot_of_heap[heap >= 0 && heap < 256 ? heap : 256];
        }
        counts[at]++;
        bytes[at] += hp_heap_shallow_size(h, i);
    }
    return HP_OK;
}
