/* A dictionary of distinct byte strings (hp_strdict.h). */
#include "hp_strdict.h"

#include <string.h>

#include "hp_xxh64.h"

#define LIMIT 0x7FFFFFFFu

hp_code hp_strdict_init(hp_strdict *d, const hp_alloc *alloc)
{
    memset(d, 0, sizeof *d);
    d->alloc = alloc ? alloc : &hp_default_alloc;
    d->mask = 63;
    d->cap = 16;
    d->data_cap = 256;
    d->slots = d->alloc->malloc_fn((d->mask + 1) * sizeof *d->slots);
    d->hashes = d->alloc->malloc_fn(d->cap * sizeof *d->hashes);
    d->offsets = d->alloc->malloc_fn((d->cap + 1) * sizeof *d->offsets);
    d->data = d->alloc->malloc_fn(d->data_cap);
    if (!d->slots || !d->hashes || !d->offsets || !d->data)
        return HP_E_NOMEM;
    memset(d->slots, 0, (d->mask + 1) * sizeof *d->slots);
    d->offsets[0] = 0;
    return HP_OK;
}

void hp_strdict_free(hp_strdict *d)
{
    if (!d->alloc)
        return;
    d->alloc->free_fn(d->slots);
    d->alloc->free_fn(d->hashes);
    d->alloc->free_fn(d->offsets);
    d->alloc->free_fn(d->data);
    memset(d, 0, sizeof *d);
}

static int grow(void **p, const hp_alloc *alloc, size_t size)
{
    void *q = alloc->realloc_fn(*p, size);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

/* Room for `entries` more entries of `bytes` more bytes: each array at
 * least doubled (appends one by one stay linear), else exactly what is
 * asked.  0, or -1 past the limits or without memory. */
static int reserve(hp_strdict *d, uint64_t entries, uint64_t bytes)
{
    if (entries > LIMIT - 1 - d->count || bytes > LIMIT - d->len)
        return -1;
    if (d->count + entries > d->cap) {
        size_t cap = (size_t)d->cap * 2 > d->count + entries ? (size_t)d->cap * 2 : (size_t)(d->count + entries);
        if (grow((void **)&d->hashes, d->alloc, cap * sizeof *d->hashes) < 0 ||
            grow((void **)&d->offsets, d->alloc, (cap + 1) * sizeof *d->offsets) < 0)
            return -1;
        d->cap = (uint32_t)cap;
    }
    if (d->len + bytes > d->data_cap) {
        size_t cap = d->data_cap * 2 > d->len + bytes ? d->data_cap * 2 : (size_t)(d->len + bytes);
        if (grow((void **)&d->data, d->alloc, cap) < 0)
            return -1;
        d->data_cap = cap;
    }
    return 0;
}

int32_t hp_strdict_append(hp_strdict *d, const uint8_t *s, size_t len)
{
    if (reserve(d, 1, len) < 0)
        return -1;
    if (len)
        memcpy(d->data + d->len, s, len);
    d->len += len;
    d->hashes[d->count] = 0; /* hp_strdict_add sets it; appended entries come last, never rehashed */
    d->offsets[d->count + 1] = (int64_t)d->len;
    return (int32_t)d->count++;
}

/* Doubles the slots, placing every entry again. */
static int rehash(hp_strdict *d)
{
    uint32_t mask = d->mask * 2 + 1, k;
    uint32_t *slots = d->alloc->malloc_fn(((size_t)mask + 1) * sizeof *slots);
    if (!slots)
        return -1;
    memset(slots, 0, ((size_t)mask + 1) * sizeof *slots);
    for (k = 0; k < d->count; k++) {
        uint32_t at = (uint32_t)d->hashes[k] & mask;
        while (slots[at])
            at = (at + 1) & mask;
        slots[at] = k + 1;
    }
    d->alloc->free_fn(d->slots);
    d->slots = slots;
    d->mask = mask;
    return 0;
}

int32_t hp_strdict_add(hp_strdict *d, const uint8_t *s, size_t len)
{
    uint64_t hash = hp_xxh64(s, len, 0);
    uint32_t at = (uint32_t)hash & d->mask, entry;
    while ((entry = d->slots[at]) != 0) {
        uint32_t k = entry - 1;
        size_t start = (size_t)d->offsets[k];
        if (d->hashes[k] == hash && (size_t)d->offsets[k + 1] - start == len &&
            (len == 0 || memcmp(d->data + start, s, len) == 0))
            return (int32_t)k;
        at = (at + 1) & d->mask;
    }
    if (hp_strdict_append(d, s, len) < 0)
        return -1;
    d->hashes[d->count - 1] = hash;
    d->slots[at] = d->count;
    if ((uint64_t)d->count * 2 > d->mask && rehash(d) < 0)
        return -1; /* the entry is in; only its slots could not grow */
    return (int32_t)(d->count - 1);
}

/* The bytes of "[0]" .. "[n-1]". */
static uint64_t indices_bytes(uint32_t n)
{
    uint64_t total = 0, low = 0, high = 10;
    int digits;
    for (digits = 1; low < n; digits++, low = high, high *= 10)
        total += ((high < n ? high : n) - low) * (uint64_t)(digits + 2);
    return total;
}

int32_t hp_strdict_append_indices(hp_strdict *d, uint32_t n)
{
    uint64_t bytes = indices_bytes(n);
    char digits[11]; /* i + 1 < 2^32: at most 10 digits, and one spare */
    int32_t first = (int32_t)d->count;
    uint32_t i;
    int width = 1, k;
    if (reserve(d, n, bytes) < 0)
        return -1;
    memset(d->hashes + d->count, 0, (size_t)n * sizeof *d->hashes); /* as hp_strdict_append */
    digits[0] = '0';
    for (i = 0; i < n; i++) {
        uint8_t *out = d->data + d->len;
        *out++ = '[';
        for (k = 0; k < width; k++)
            *out++ = (uint8_t)digits[k];
        *out++ = ']';
        d->len += (size_t)width + 2;
        d->offsets[++d->count] = (int64_t)d->len;
        /* The decimal digits of i + 1, counted on in place. */
        for (k = width - 1; k >= 0 && digits[k] == '9'; k--)
            digits[k] = '0';
        if (k >= 0) {
            digits[k]++;
        } else { /* 9..9 + 1 = 10..0 */
            digits[0] = '1';
            digits[width++] = '0';
        }
    }
    return first;
}
