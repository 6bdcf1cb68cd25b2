/* Java Strings for the BMD codec: the JVM's UTF-8 decoding, hashCode and
 * re-encoded length (hp_bmd_strings.h), and the names table. */
#include "hp_bmd_strings.h"

#include <string.h>

#define REPLACEMENT 0xFFFD

static int is_continuation(uint8_t b) { return (b & 0xC0) == 0x80; }

/* Whether b2 cannot follow lead byte b1 of a 3-byte sequence (E0 needs A0..BF). */
static int bad_second_of_3(uint8_t b1, uint8_t b2)
{
    return (b1 == 0xE0 && (b2 & 0xE0) == 0x80) || !is_continuation(b2);
}

/* Whether b2 cannot follow lead byte b1 of a 4-byte sequence (F0 needs
 * 90..BF, F4 needs 80..8F). */
static int bad_second_of_4(uint8_t b1, uint8_t b2)
{
    return (b1 == 0xF0 && (b2 < 0x90 || b2 > 0xBF)) || (b1 == 0xF4 && (b2 & 0xF0) != 0x80) || !is_continuation(b2);
}

/* One step of java.lang.String's UTF-8 decoder at p[i] (i < n): returns
 * the bytes it takes, with units[] set to the UTF-16 units it makes (one
 * U+FFFD for a malformed sequence; *bad then set).  *stop: the decoder
 * drops everything after this step (a sequence cut by the end of the input). */
static size_t java_step(const uint8_t *p, size_t n, size_t i, uint16_t units[2], int *n_units, int *bad, int *stop)
{
    uint8_t b1 = p[i];
    size_t left = n - i - 1; /* bytes after b1 */
    *n_units = 1;
    *bad = 1;
    *stop = 0;
    units[0] = REPLACEMENT;
    if (b1 < 0x80) {
        units[0] = b1;
        *bad = 0;
        return 1;
    }
    if (b1 >= 0xC2 && b1 <= 0xDF) {
        if (left == 0) {
            *stop = 1;
            return 1;
        }
        if (!is_continuation(p[i + 1]))
            return 1;
        units[0] = (uint16_t)(((b1 & 0x1F) << 6) | (p[i + 1] & 0x3F));
        *bad = 0;
        return 2;
    }
    if ((b1 & 0xF0) == 0xE0) {
        uint16_t c;
        if (left < 2) {
            if (left == 1 && bad_second_of_3(b1, p[i + 1]))
                return 1;
            *stop = 1;
            return 1 + left;
        }
        if (bad_second_of_3(b1, p[i + 1]))
            return 1;
        if (!is_continuation(p[i + 2]))
            return 2;
        c = (uint16_t)(((b1 & 0x0F) << 12) | ((p[i + 1] & 0x3F) << 6) | (p[i + 2] & 0x3F));
        if (c >= 0xD800 && c <= 0xDFFF) /* a surrogate: one replacement for the three bytes */
            return 3;
        units[0] = c;
        *bad = 0;
        return 3;
    }
    if ((b1 & 0xF8) == 0xF0) {
        uint32_t cp;
        if (left < 3) {
            if (b1 > 0xF4 || (left >= 1 && bad_second_of_4(b1, p[i + 1])))
                return 1;
            if (left == 2 && !is_continuation(p[i + 2]))
                return 2; /* b1 and b2 replaced; b3 starts the next step */
            *stop = 1;
            return 1 + left;
        }
        if (b1 > 0xF4 || bad_second_of_4(b1, p[i + 1]))
            return 1;
        if (!is_continuation(p[i + 2]))
            return 2;
        if (!is_continuation(p[i + 3]))
            return 3;
        cp = ((uint32_t)(b1 & 0x07) << 18) | ((uint32_t)(p[i + 1] & 0x3F) << 12) | ((uint32_t)(p[i + 2] & 0x3F) << 6) |
             (p[i + 3] & 0x3F);
        cp -= 0x10000;
        units[0] = (uint16_t)(0xD800 + (cp >> 10));
        units[1] = (uint16_t)(0xDC00 + (cp & 0x3FF));
        *n_units = 2;
        *bad = 0;
        return 4;
    }
    return 1; /* a continuation byte, C0, C1 or F8..FF */
}

void hp_jstring_measure(const uint8_t *p, size_t n, hp_jstring *out)
{
    uint32_t hash = 0;
    uint64_t len = 0;
    size_t i = 0;
    int changed = 0;
    while (i < n && p[i] < 0x80) /* ASCII: the bytes are the String */
        hash = 31 * hash + p[i++];
    len = i;
    while (i < n) {
        uint16_t units[2];
        int n_units, bad, stop, k;
        size_t took = java_step(p, n, i, units, &n_units, &bad, &stop);
        for (k = 0; k < n_units; k++)
            hash = 31 * hash + units[k];
        len += bad ? 3 : took;
        changed |= bad;
        if (stop)
            break;
        i += took;
    }
    out->hash = (int32_t)hash;
    out->utf8_len = len;
    out->changed = changed;
}

size_t hp_jstring_reencode(const uint8_t *p, size_t n, uint8_t *dst)
{
    static const uint8_t replacement[3] = { 0xEF, 0xBF, 0xBD };
    size_t i = 0, len = 0;
    while (i < n) {
        uint16_t units[2];
        int n_units, bad, stop;
        size_t took = java_step(p, n, i, units, &n_units, &bad, &stop);
        if (bad) {
            memcpy(dst + len, replacement, 3);
            len += 3;
        } else {
            memcpy(dst + len, p + i, took);
            len += took;
        }
        if (stop)
            break;
        i += took;
    }
    return len;
}

const uint8_t *hp_jstring_bytes(const uint8_t *p, size_t n, const hp_jstring *js, hp_buf *fixed)
{
    if (!js->changed)
        return p;
    fixed->len = 0;
    if (hp_buf_reserve(fixed, (size_t)js->utf8_len) < 0)
        return NULL;
    fixed->len = hp_jstring_reencode(p, n, fixed->data);
    return fixed->data;
}

/* ---- the names table: open addressing on (hash, length) ---- */

typedef struct name_entry {
    int32_t hash;
    uint64_t len;
    size_t at; /* in the arena */
} name_entry;

struct hp_bmd_names {
    hp_alloc alloc;
    hp_buf arena;    /* the strings */
    hp_buf entries;  /* name_entry */
    size_t count, collisions;
    uint32_t *slots; /* entry index + 1, 0 empty */
    size_t slot_cap; /* a power of two, at least twice count */
};

/* A BMD chooses the hashes it looks up: mix them so that no choice of
 * hashes makes long probe runs. */
static size_t slot_of(int32_t hash, uint64_t len, size_t cap)
{
    uint64_t k = ((uint64_t)(uint32_t)hash << 32 | (len & 0xFFFFFFFFu)) ^ (len >> 32);
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

hp_bmd_names *hp_bmd_names_new(const hp_alloc *alloc)
{
    hp_bmd_names *t;
    if (!alloc)
        alloc = &hp_default_alloc;
    t = alloc->malloc_fn(sizeof *t);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    t->alloc = *alloc;
    hp_buf_init(&t->arena, alloc);
    hp_buf_init(&t->entries, alloc);
    return t;
}

void hp_bmd_names_free(hp_bmd_names *t)
{
    if (!t)
        return;
    hp_buf_free(&t->arena);
    hp_buf_free(&t->entries);
    t->alloc.free_fn(t->slots);
    t->alloc.free_fn(t);
}

static name_entry *entry(const hp_bmd_names *t, size_t i) { return (name_entry *)(void *)t->entries.data + i; }

static int grow_slots(hp_bmd_names *t)
{
    size_t cap = t->slot_cap ? t->slot_cap * 2 : 1024, i;
    uint32_t *slots = t->alloc.malloc_fn(cap * sizeof *slots);
    if (!slots)
        return -1;
    memset(slots, 0, cap * sizeof *slots);
    for (i = 0; i < t->count; i++) {
        size_t s = slot_of(entry(t, i)->hash, entry(t, i)->len, cap);
        while (slots[s])
            s = (s + 1) & (cap - 1);
        slots[s] = (uint32_t)i + 1;
    }
    t->alloc.free_fn(t->slots);
    t->slots = slots;
    t->slot_cap = cap;
    return 0;
}

int hp_bmd_names_add(hp_bmd_names *t, const uint8_t *s, size_t len)
{
    hp_jstring js;
    size_t slot;
    name_entry *e;
    hp_jstring_measure(s, len, &js);
    if (t->count >= 0xFFFFFFFEu || js.utf8_len > SIZE_MAX / 2)
        return -1;
    if ((t->count + 1) * 2 > t->slot_cap && grow_slots(t) < 0)
        return -1;
    if (hp_buf_reserve(&t->arena, (size_t)js.utf8_len) < 0 || hp_buf_reserve(&t->entries, sizeof *e) < 0)
        return -1;
    for (slot = slot_of(js.hash, js.utf8_len, t->slot_cap); t->slots[slot]; slot = (slot + 1) & (t->slot_cap - 1)) {
        e = entry(t, t->slots[slot] - 1);
        if (e->hash == js.hash && e->len == js.utf8_len)
            break;
    }
    if (t->slots[slot]) { /* the same hash and length: the later string wins */
        t->collisions++;
    } else {
        t->slots[slot] = (uint32_t)++t->count;
        t->entries.len += sizeof *e;
    }
    e = entry(t, t->slots[slot] - 1);
    e->hash = js.hash;
    e->len = js.utf8_len;
    e->at = t->arena.len;
    t->arena.len += hp_jstring_reencode(s, len, t->arena.data + t->arena.len);
    return 0;
}

const uint8_t *hp_bmd_names_find(const hp_bmd_names *t, int32_t hash, uint64_t len)
{
    size_t slot;
    if (!t || t->count == 0)
        return NULL;
    for (slot = slot_of(hash, len, t->slot_cap); t->slots[slot]; slot = (slot + 1) & (t->slot_cap - 1)) {
        const name_entry *e = entry(t, t->slots[slot] - 1);
        if (e->hash == hash && e->len == len)
            return t->arena.data + e->at;
    }
    return NULL;
}

size_t hp_bmd_names_count(const hp_bmd_names *t) { return t->count; }
size_t hp_bmd_names_collisions(const hp_bmd_names *t) { return t->collisions; }
