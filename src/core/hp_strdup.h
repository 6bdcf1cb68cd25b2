/* Duplicate strings: java.lang.String objects grouped by their text, as
 * MAT's "Duplicate Strings" query finds them. */
#ifndef HP_STRDUP_H
#define HP_STRDUP_H

#include "hp_heap.h"

typedef struct hp_dup_string {
    uint32_t first;    /* the group's first String (lowest id): the one kept */
    uint32_t count;    /* Strings of that text */
    uint64_t wasted;   /* bytes: see hp_duplicate_strings */
} hp_dup_string;

/* The texts `min_count` or more Strings hold (Strings whose characters the
 * dump lacks count for none).  Texts are equal when their UTF-16 units
 * are, whatever their encoding (LATIN1 bytes, UTF-16 either way).
 *
 * wasted = the shallow sizes of the group's Strings but the first (the
 * one kept, lowest id), plus those of the value arrays only they hold:
 * what keeping one String for the text would free.  An array the kept
 * String holds, or a String of another text (JDK 6 and old Android
 * substrings share one big char[]), is not freed and does not count.
 *
 * *out (allocated with `alloc`, the caller's to free) holds *n groups in
 * no particular order.  Linear in the Strings' count and text (radix sorts
 * of 32-bit hashes and of the arrays' users; texts of one hash are told
 * apart by sorting them by text, so even crafted collisions stay
 * O(n log n)); 28 bytes a String with text of memory.  interrupt (may be
 * NULL) is called every few thousand Strings; non-zero stops with
 * HP_E_ABORTED.  `keep` (NULL: every String) is a bit per object: only
 * the Strings whose bit is set count (the live ones, hp_reach_live.h). */
hp_code hp_duplicate_strings(const hp_heap *h, const uint64_t *keep, const hp_alloc *alloc, uint32_t min_count,
                             hp_dup_string **out, size_t *n, int (*interrupt)(void *ctx), void *ctx, hp_error *err);

/* Receives one copy: a String of a duplicated text but the group's kept
 * (first) one, and its share of the group's wasted bytes: its shallow size,
 * plus each freed array's for the first copy holding it (so the shares sum
 * to the group's wasted).  Non-zero stops the walk with HP_E_ABORTED. */
typedef int (*hp_dup_copy_fn)(void *ctx, uint32_t index, uint64_t wasted);

/* hp_duplicate_strings' groups of 2 or more, given as their copies (in no
 * particular order) instead of groups; 8 more bytes a String of memory. */
hp_code hp_duplicate_string_copies(const hp_heap *h, const uint64_t *keep, const hp_alloc *alloc, hp_dup_copy_fn copy,
                                   void *copy_ctx, int (*interrupt)(void *ctx), void *ctx, hp_error *err);

#endif
