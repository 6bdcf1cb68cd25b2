/* In-place sorts used to put heap objects in id order (no extra buffers:
 * the index must stay within its memory budget while it sorts). */
#ifndef HP_HEAP_SORT_H
#define HP_HEAP_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Sorts a[0..n) ascending; only the low `bits` bits of the values may be
 * non-zero (it skips the digits above them). */
void hp_sort_u64(uint64_t *a, size_t n, int bits);

/* Sorts the permutation perm[0..n) by keys[perm[i]], ties by perm value. */
void hp_sort_perm_by_keys(uint32_t *perm, size_t n, const uint64_t *keys);

#endif
