/* A dictionary of distinct byte strings, numbered 0, 1, ... in the order
 * first added: the dictionary of a dictionary-encoded column (Arrow's
 * large_string layout: int64 offsets, then the bytes).  Open addressing on
 * XXH64 of the bytes; memory 4 bytes a slot (at most half full), 16 an
 * entry, and the bytes. */
#ifndef HP_STRDICT_H
#define HP_STRDICT_H

#include "hp_common.h"

typedef struct hp_strdict {
    const hp_alloc *alloc;
    uint32_t *slots;    /* entry + 1, 0 for an empty slot */
    uint64_t *hashes;   /* of each entry */
    int64_t *offsets;   /* count + 1 */
    uint8_t *data;
    uint32_t count, mask, cap;
    size_t len, data_cap;
} hp_strdict;

/* NULL alloc: libc.  Returns HP_OK or HP_E_NOMEM (then free is still safe). */
hp_code hp_strdict_init(hp_strdict *d, const hp_alloc *alloc);
void hp_strdict_free(hp_strdict *d);

/* The number of `s`, adding it if new: >= 0, or -1 when memory runs out or
 * the dictionary would pass 2^31 - 1 entries or bytes (Arrow's limits for
 * 32-bit dictionary codes). */
int32_t hp_strdict_add(hp_strdict *d, const uint8_t *s, size_t len);

/* Appends "[0]" .. "[n-1]" (the names of array elements) as
 * hp_strdict_append would, one after another, into memory reserved once:
 * the number of "[0]", or -1 as hp_strdict_add. */
int32_t hp_strdict_append_indices(hp_strdict *d, uint32_t n);

/* Appends `s` as a new entry without looking it up or making it findable
 * (for many strings the caller knows are new, such as "[0]" .. "[n-1]",
 * added last); the number, or -1 as hp_strdict_add. */
int32_t hp_strdict_append(hp_strdict *d, const uint8_t *s, size_t len);

#endif
