/* The class histogram of a heap index: per class, the instances (or
 * arrays) and their shallow bytes, as MAT's and VisualVM's histograms
 * count them (a class object is not an instance of java.lang.Class here),
 * over the objects an analysis keeps (the live set, the garbage, or all). */
#ifndef HP_HISTOGRAM_H
#define HP_HISTOGRAM_H

#include "hp_heap.h"

/* Rows past the classes: the primitive arrays of a type the dump declares
 * no class for (dumps written by tools: HPROF needs no such class), one row
 * per type, row hp_heap_class_count(h) + type - HP_T_BOOLEAN. */
#define HP_HISTOGRAM_TYPE_ROWS 8

/* Adds each kept object to counts[row * nslots + slot] and its shallow
 * size to bytes[same], where row is its class ordinal (or the row of its
 * primitive type, above) and slot = slot_of_heap[its Android heap number,
 * or 256 for none] (< nslots; NULL: slot 0 for every object).  counts and
 * bytes hold (hp_heap_class_count(h) + HP_HISTOGRAM_TYPE_ROWS) * nslots
 * entries, zeroed by the caller.  keep: a bit per object (NULL: every object).  interrupt (may be
 * NULL) is called every 65,536 objects; non-zero stops with HP_E_ABORTED. */
hp_code hp_heap_class_histogram(const hp_heap *h, const uint64_t *keep, const uint8_t *slot_of_heap, uint32_t nslots,
                                uint64_t *counts, uint64_t *bytes, int (*interrupt)(void *ctx), void *ctx,
                                hp_error *err);

#endif
