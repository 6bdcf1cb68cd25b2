/* Duplicate strings (hp_strdup.h): every String's text hashed, the
 * (hash, index) keys radix-sorted, then each run of one hash split into
 * texts. */
#include "hp_strdup.h"

#include <stdlib.h>
#include <string.h>

#include "hp_graph.h"
#include "hp_heap_sort.h"

/* UTF-16 unit k of a text, whatever its encoding. */
static uint32_t unit_at(const hp_text *t, size_t k)
{
    const uint8_t *p = t->data;
    switch (t->encoding) {
    case HP_TEXT_LATIN1: return p[k];
    case HP_TEXT_UTF16BE: return (uint32_t)p[2 * k] << 8 | p[2 * k + 1];
    default: return p[2 * k] | (uint32_t)p[2 * k + 1] << 8;
    }
}

static uint32_t text_hash(const hp_text *t)
{
    uint64_t x = 0x9E3779B97F4A7C15ull ^ t->units;
    size_t k;
    for (k = 0; k < t->units; k++) {
        x = (x ^ unit_at(t, k)) * 0xBF58476D1CE4E5B9ull;
        x ^= x >> 31;
    }
    x ^= x >> 29;
    return (uint32_t)(x ^ (x >> 32));
}

static int text_compare(const hp_text *a, const hp_text *b)
{
    size_t n = a->units < b->units ? a->units : b->units, k;
    if (a->encoding == b->encoding && a->encoding == HP_TEXT_LATIN1) {
        int c = memcmp(a->data, b->data, n);
        if (c)
            return c;
    } else {
        for (k = 0; k < n; k++) {
            uint32_t x = unit_at(a, k), y = unit_at(b, k);
            if (x != y)
                return x < y ? -1 : 1;
        }
    }
    return a->units < b->units ? -1 : a->units > b->units;
}

/* Compares the texts of Strings i and j (both with text), then their indexes. */
static int string_compare(const void *heap, uint32_t i, uint32_t j)
{
    hp_text a, b;
    int c;
    hp_heap_string(heap, i, &a);
    hp_heap_string(heap, j, &b);
    c = text_compare(&a, &b);
    return c ? c : (i < j ? -1 : i > j);
}

typedef struct dup_state {
    const hp_heap *h;
    const hp_alloc *a;
    uint32_t min_count;
    const uint64_t *users;  /* the value array of every String with text, sorted: an array's users */
    size_t n_users;
    uint64_t *scratch;      /* a group's arrays, each with its member's place (array << 32 | k) */
    uint64_t *share;        /* a group's members' wasted bytes (copies only) */
    hp_dup_copy_fn copy;    /* receives each copy (NULL: groups only) */
    void *copy_ctx;
    int copy_failed;        /* copy returned non-zero */
    hp_dup_string *out;
    size_t n, cap;
} dup_state;

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* How many Strings (of any text) hold array `arr`. */
static size_t users_of(const dup_state *s, uint32_t arr)
{
    size_t lo = 0, hi = s->n_users, first;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->users[mid] < arr)
            lo = mid + 1;
        else
            hi = mid;
    }
    first = lo;
    for (hi = s->n_users; lo < hi;) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->users[mid] <= arr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - first;
}

/* One group, members[0..count) in index order: kept when min_count or more.
 * Its wasted bytes: the Strings but the first, and the arrays only they
 * hold (an array a String of another text, or the kept one, also holds
 * stays). */
static int add_group(dup_state *s, const uint32_t *members, uint32_t count)
{
    const hp_heap *h = s->h;
    uint32_t first_array = hp_heap_string_array(h, members[0]), k, m = 0, run;
    uint64_t wasted = 0;
    if (count < s->min_count)
        return 0;
    for (k = 1; k < count; k++) {
        uint32_t arr = hp_heap_string_array(h, members[k]);
        if (s->share)
            s->share[k] = hp_heap_shallow_size(h, members[k]);
        wasted += hp_heap_shallow_size(h, members[k]);
        if (arr != first_array)
            s->scratch[m++] = (uint64_t)arr << 32 | k;
    }
    if (m)
        qsort(s->scratch, m, sizeof *s->scratch, cmp_u64);
    for (k = 0; k < m; k += run) {
        uint32_t arr = (uint32_t)(s->scratch[k] >> 32);
        for (run = 1; k + run < m && (uint32_t)(s->scratch[k + run] >> 32) == arr; run++)
            ;
        if (users_of(s, arr) == run) {
            wasted += hp_heap_shallow_size(h, arr);
            if (s->share) /* the freed array counts for the first copy holding it */
                s->share[(uint32_t)s->scratch[k]] += hp_heap_shallow_size(h, arr);
        }
    }
    for (k = 1; s->copy && k < count; k++)
        if (s->copy(s->copy_ctx, members[k], s->share[k]) != 0) {
            s->copy_failed = 1;
            return -1;
        }
    if (s->n == s->cap) {
        size_t want = s->cap ? 2 * s->cap : 256;
        hp_dup_string *more = s->a->realloc_fn(s->out, want * sizeof *more);
        if (!more)
            return -1;
        s->out = more;
        s->cap = want;
    }
    s->out[s->n].first = members[0];
    s->out[s->n].count = count;
    s->out[s->n].wasted = wasted;
    s->n++;
    return 0;
}

/* The groups of one run of equal hashes, run[0..n) in index order. */
static int split_run(dup_state *s, uint32_t *run, uint32_t *tmp, size_t n)
{
    size_t i = 0, j;
    hp_text a, b;
    hp_heap_string(s->h, run[0], &a);
    for (j = 1; j < n; j++) {
        hp_heap_string(s->h, run[j], &b);
        if (text_compare(&a, &b) != 0)
            break;
    }
    if (j < n) /* several texts share the hash: sorted by text (then index), each text is a stretch */
        hp_sort_u32_by(run, tmp, n, string_compare, s->h);
    while (i < n) {
        hp_heap_string(s->h, run[i], &a);
        for (j = i + 1; j < n; j++) {
            hp_heap_string(s->h, run[j], &b);
            if (text_compare(&a, &b) != 0)
                break;
        }
        if (add_group(s, run + i, (uint32_t)(j - i)) < 0)
            return -1;
        i = j;
    }
    return 0;
}

static hp_code duplicates(const hp_heap *h, const uint64_t *keep, const hp_alloc *alloc, uint32_t min_count,
                          hp_dup_copy_fn copy, void *copy_ctx, hp_dup_string **out, size_t *n_out,
                          int (*interrupt)(void *ctx), void *ctx, hp_error *err)
{
    const hp_alloc *a = alloc ? alloc : &hp_default_alloc;
    uint32_t n = hp_heap_object_count(h), i;
    uint64_t *keys = NULL, *users = NULL;
    uint32_t *run = NULL, *tmp = NULL;
    uint64_t *scratch = NULL, *share = NULL;
    size_t count = 0, cap = 0, k, runs = 0;
    dup_state s;
    hp_code rc = HP_OK;
    memset(&s, 0, sizeof s);
    s.h = h;
    s.a = a;
    s.min_count = min_count ? min_count : 1;
    s.copy = copy;
    s.copy_ctx = copy_ctx;
    *out = NULL;
    *n_out = 0;
    for (i = 0; i < n; i++) {
        hp_text t;
        uint32_t arr;
        if ((i & 4095) == 0 && interrupt && interrupt(ctx)) {
            rc = hp_fail(err, HP_E_ABORTED, 0, -1, 0, 0, 0, "interrupted");
            goto done;
        }
        if ((keep && !hp_bit(keep, i)) || hp_heap_object_kind(h, i) != HP_KIND_INSTANCE ||
            (arr = hp_heap_string_array(h, i)) == HP_NONE || hp_heap_string(h, i, &t) != 1)
            continue;
        if (count == cap) {
            size_t want = cap ? 2 * cap : 4096;
            uint64_t *more = a->realloc_fn(keys, want * sizeof *more), *more_users;
            if (!more)
                goto nomem;
            keys = more;
            if (!(more_users = a->realloc_fn(users, want * sizeof *more_users)))
                goto nomem;
            users = more_users;
            cap = want;
        }
        users[count] = arr; /* in id order, where the String's record is at hand */
        keys[count++] = (uint64_t)text_hash(&t) << 32 | i;
    }
    hp_sort_u64(keys, count, 64);
    hp_sort_u64(users, count, 32);
    run = a->malloc_fn((count ? count : 1) * sizeof *run);
    tmp = a->malloc_fn((count ? count : 1) * sizeof *tmp);
    scratch = a->malloc_fn((count ? count : 1) * sizeof *scratch);
    share = copy ? a->malloc_fn((count ? count : 1) * sizeof *share) : NULL;
    if (!run || !tmp || !scratch || (copy && !share))
        goto nomem;
    s.share = share;
    s.users = users;
    s.n_users = count;
    s.scratch = scratch;
    for (k = 0; k < count;) {
        size_t j = k, m = 0;
        if (interrupt && ++runs % 4096 == 0 && interrupt(ctx)) {
            rc = hp_fail(err, HP_E_ABORTED, 0, -1, 0, 0, 0, "interrupted");
            goto done;
        }
        while (j < count && keys[j] >> 32 == keys[k] >> 32)
            run[m++] = (uint32_t)keys[j++];
        if (m >= s.min_count && split_run(&s, run, tmp, m) < 0) {
            if (s.copy_failed)
                rc = hp_fail(err, HP_E_ABORTED, 0, -1, 0, 0, 0, "stopped");
            else
                goto nomem;
            goto done;
        }
        k = j;
    }
    *out = s.out;
    *n_out = s.n;
    s.out = NULL;
    goto done;
nomem:
    rc = hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the duplicate strings");
done:
    a->free_fn(keys);
    a->free_fn(run);
    a->free_fn(tmp);
    a->free_fn(scratch);
    a->free_fn(share);
    a->free_fn(users);
    a->free_fn(s.out);
    return rc;
}

hp_code hp_duplicate_strings(const hp_heap *h, const uint64_t *keep, const hp_alloc *alloc, uint32_t min_count,
                             hp_dup_string **out, size_t *n_out, int (*interrupt)(void *ctx), void *ctx, hp_error *err)
{
    return duplicates(h, keep, alloc, min_count, NULL, NULL, out, n_out, interrupt, ctx, err);
}

hp_code hp_duplicate_string_copies(const hp_heap *h, const uint64_t *keep, const hp_alloc *alloc, hp_dup_copy_fn copy,
                                   void *copy_ctx, int (*interrupt)(void *ctx), void *ctx, hp_error *err)
{
    hp_dup_string *groups = NULL;
    size_t n = 0;
    hp_code rc = duplicates(h, keep, alloc, 2, copy, copy_ctx, &groups, &n, interrupt, ctx, err);
    (alloc ? alloc : &hp_default_alloc)->free_fn(groups);
    return rc;
}
