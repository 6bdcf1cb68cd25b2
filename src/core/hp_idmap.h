/* A hash map from 64-bit HPROF identifiers to 32-bit values (open addressing,
 * linear probing).  Used for class and string look-ups while walking a dump. */
#ifndef HP_IDMAP_H
#define HP_IDMAP_H

#include "hp_common.h"

typedef struct hp_idmap {
    uint64_t *keys;
    uint32_t *values;
    size_t cap;   /* a power of two, or 0 */
    size_t count;
    int has_zero; /* key 0 marks empty slots, so it is kept aside */
    uint32_t zero_value;
    hp_alloc alloc;
} hp_idmap;

void hp_idmap_init(hp_idmap *m, const hp_alloc *alloc);
void hp_idmap_clear(hp_idmap *m);

/* Returns a pointer to the value of `key`, or NULL. */
uint32_t *hp_idmap_get(const hp_idmap *m, uint64_t key);

/* Returns the value slot of `key`, inserting it with `initial` when absent;
 * *inserted tells which.  NULL when memory runs out. */
uint32_t *hp_idmap_put(hp_idmap *m, uint64_t key, uint32_t initial, int *inserted);

#endif
