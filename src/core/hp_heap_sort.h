/* In-place sorts used to put heap objects in id order (no extra buffers:
 * the index must stay within its memory budget while it sorts), and the
 * rows of the dominator tree by retained size. */
#ifndef HP_HEAP_SORT_H
#define HP_HEAP_SORT_H

#include "hp_common.h"

/* Sorts a[0..n) ascending; only the low `bits` bits of the values may be
 * non-zero (it skips the digits above them). */
void hp_sort_u64(uint64_t *a, size_t n, int bits);

/* The same for values mostly in order already (a heap dump's objects:
 * HotSpot writes its class objects first, then the heap in address
 * order): the longest ascending run stays, the others are sorted aside
 * and merged in.  Falls back to hp_sort_u64 when the run is not most of
 * the array.  -1 when out of memory. */
int hp_sort_u64_nearly(uint64_t *a, size_t n, int bits, const hp_alloc *alloc);

/* Sorts the permutation perm[0..n) by keys[perm[i]], ties by perm value;
 * _desc: largest key first, ties still by increasing perm value.  In place,
 * O(n log n). */
void hp_sort_perm_by_keys(uint32_t *perm, size_t n, const uint64_t *keys);
void hp_sort_perm_by_keys_desc(uint32_t *perm, size_t n, const uint64_t *keys);

/* Sorts a[0..n) by cmp(ctx, x, y) (< 0, 0, > 0), stably, with tmp (n more
 * entries): a merge sort, for comparisons that need a context qsort cannot
 * pass (the heap, to compare two objects' contents). */
void hp_sort_u32_by(uint32_t *a, uint32_t *tmp, size_t n, int (*cmp)(const void *ctx, uint32_t x, uint32_t y),
                    const void *ctx);

#endif
