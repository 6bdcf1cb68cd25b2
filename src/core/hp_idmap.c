#include "hp_idmap.h"

#include <string.h>

void hp_idmap_init(hp_idmap *m, const hp_alloc *alloc)
{
    memset(m, 0, sizeof *m);
    m->alloc = alloc ? *alloc : hp_default_alloc;
}

void hp_idmap_clear(hp_idmap *m)
{
    m->alloc.free_fn(m->keys);
    m->alloc.free_fn(m->values);
    m->keys = NULL;
    m->values = NULL;
    m->cap = m->count = 0;
    m->has_zero = 0;
}

/* Ids are addresses aligned to 8 or serial numbers: mix the bits so that
 * neither clusters in the low slots. */
static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

uint32_t *hp_idmap_get(const hp_idmap *m, uint64_t key)
{
    size_t i;
    if (key == 0)
        return m->has_zero ? (uint32_t *)&m->zero_value : NULL;
    if (m->cap == 0)
        return NULL;
    for (i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return &m->values[i];
        if (m->keys[i] == 0)
            return NULL;
    }
}

static int grow(hp_idmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024, i;
    uint64_t *keys = m->alloc.malloc_fn(cap * sizeof *keys);
    uint32_t *values = m->alloc.malloc_fn(cap * sizeof *values);
    if (!keys || !values) {
        m->alloc.free_fn(keys);
        m->alloc.free_fn(values);
        return -1;
    }
    memset(keys, 0, cap * sizeof *keys);
    for (i = 0; i < m->cap; i++) {
        size_t j;
        if (m->keys[i] == 0)
            continue;
        for (j = slot_of(m->keys[i], cap); keys[j] != 0; j = (j + 1) & (cap - 1))
            ;
        keys[j] = m->keys[i];
        values[j] = m->values[i];
    }
    m->alloc.free_fn(m->keys);
    m->alloc.free_fn(m->values);
    m->keys = keys;
    m->values = values;
    m->cap = cap;
    return 0;
}

uint32_t *hp_idmap_put(hp_idmap *m, uint64_t key, uint32_t initial, int *inserted)
{
    size_t i;
    *inserted = 0;
    if (key == 0) {
        if (!m->has_zero) {
            m->has_zero = 1;
            m->zero_value = initial;
            *inserted = 1;
        }
        return &m->zero_value;
    }
    if ((m->count + 1) * 2 > m->cap && grow(m) < 0) /* keep the load under 1/2 */
        return NULL;
    for (i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return &m->values[i];
        if (m->keys[i] == 0)
            break;
    }
    m->keys[i] = key;
    m->values[i] = initial;
    m->count++;
    *inserted = 1;
    return &m->values[i];
}
