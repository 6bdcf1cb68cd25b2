/* In-place sorting for the heap index: a most-significant-digit radix sort
 * of 64-bit keys (American flag sort: no buffer, 8 bits a level, recursion
 * at most 8 deep) and a heapsort of an index permutation by 64-bit keys for
 * the rare dumps whose ids do not fit the packed form. */
#include "hp_heap_sort.h"

#include <string.h>

static void insertion_sort(uint64_t *a, size_t n)
{
    size_t i, j;
    for (i = 1; i < n; i++) {
        uint64_t v = a[i];
        for (j = i; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

static void flag_sort(uint64_t *a, size_t n, int shift)
{
    size_t count[256] = { 0 }, next[256], end[256], pos = 0;
    int b;
    if (n <= 48) {
        insertion_sort(a, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        count[(a[i] >> shift) & 0xFF]++;
    for (b = 0; b < 256; b++) {
        next[b] = pos;
        pos += count[b];
        end[b] = pos;
    }
    for (b = 0; b < 256; b++) {
        while (next[b] < end[b]) {
            uint64_t v = a[next[b]];
            int d = (int)((v >> shift) & 0xFF);
            /* Swap v into its bucket until one that belongs here comes back. */
            while (d != b) {
                uint64_t w = a[next[d]];
                a[next[d]++] = v;
                v = w;
                d = (int)((v >> shift) & 0xFF);
            }
            a[next[b]++] = v;
        }
    }
    if (shift == 0)
        return;
    pos = 0;
    for (b = 0; b < 256; b++) {
        if (count[b] > 1)
            flag_sort(a + pos, count[b], shift - 8);
        pos += count[b];
    }
}

void hp_sort_u64(uint64_t *a, size_t n, int bits)
{
    int top = bits <= 8 ? 0 : ((bits - 1) / 8) * 8;
    if (n > 1)
        flag_sort(a, n, top);
}

int hp_sort_u64_nearly(uint64_t *a, size_t n, int bits, const hp_alloc *alloc)
{
    size_t best_start = 0, best_len = 0, start = 0, i, n_strays, k, si, li, out;
    uint64_t *strays;
    /* The longest ascending run in place. */
    for (i = 1; i <= n; i++)
        if (i == n || a[i] < a[i - 1]) {
            if (i - start > best_len) {
                best_len = i - start;
                best_start = start;
            }
            start = i;
        }
    n_strays = n - best_len;
    if (n_strays > n / 8 + 64) {
        hp_sort_u64(a, n, bits);
        return 0;
    }
    strays = alloc->malloc_fn((n_strays ? n_strays : 1) * sizeof *strays);
    if (!strays)
        return -1;
    for (i = 0, k = 0; i < n; i++)
        if (i < best_start || i >= best_start + best_len)
            strays[k++] = a[i];
    hp_sort_u64(strays, n_strays, bits);
    /* The run moves to the end; a forward merge then never overtakes it. */
    memmove(a + n_strays, a + best_start, best_len * sizeof *a);
    for (out = 0, si = 0, li = n_strays; out < n; out++) {
        if (li >= n || (si < n_strays && strays[si] <= a[li]))
            a[out] = strays[si++];
        else
            a[out] = a[li++];
    }
    alloc->free_fn(strays);
    return 0;
}

/* Heapsorts of perm by (keys[perm], perm), keys ascending or descending;
 * ties by increasing perm value (file order). */
static int before(const uint64_t *keys, uint32_t x, uint32_t y, int descending)
{
    if (keys[x] != keys[y])
        return descending ? keys[x] > keys[y] : keys[x] < keys[y];
    return x < y;
}

static void sift(uint32_t *perm, const uint64_t *keys, size_t root, size_t n, int descending)
{
    for (;;) {
        size_t child = 2 * root + 1;
        uint32_t t;
        if (child >= n)
            return;
        if (child + 1 < n && before(keys, perm[child], perm[child + 1], descending))
            child++;
        if (!before(keys, perm[root], perm[child], descending))
            return;
        t = perm[root];
        perm[root] = perm[child];
        perm[child] = t;
        root = child;
    }
}

static void sort_perm(uint32_t *perm, size_t n, const uint64_t *keys, int descending)
{
    size_t i;
    if (n < 2)
        return;
    if (n <= 16) { /* most rows of a tree are short: insertion */
        for (i = 1; i < n; i++) {
            uint32_t x = perm[i];
            size_t j = i;
            for (; j > 0 && before(keys, x, perm[j - 1], descending); j--)
                perm[j] = perm[j - 1];
            perm[j] = x;
        }
        return;
    }
    for (i = n / 2; i-- > 0;)
        sift(perm, keys, i, n, descending);
    for (i = n - 1; i > 0; i--) {
        uint32_t t = perm[0];
        perm[0] = perm[i];
        perm[i] = t;
        sift(perm, keys, 0, i, descending);
    }
}

void hp_sort_perm_by_keys(uint32_t *perm, size_t n, const uint64_t *keys) { sort_perm(perm, n, keys, 0); }

void hp_sort_perm_by_keys_desc(uint32_t *perm, size_t n, const uint64_t *keys) { sort_perm(perm, n, keys, 1); }

void hp_sort_u32_by(uint32_t *a, uint32_t *tmp, size_t n, int (*cmp)(const void *ctx, uint32_t x, uint32_t y),
                    const void *ctx)
{
    size_t width, i;
    for (width = 1; width < n; width *= 2) {
        for (i = 0; i < n; i += 2 * width) {
            size_t mid = i + width < n ? i + width : n, end = i + 2 * width < n ? i + 2 * width : n;
            size_t x = i, y = mid, k = i;
            while (x < mid && y < end)
                tmp[k++] = cmp(ctx, a[x], a[y]) <= 0 ? a[x++] : a[y++];
            while (x < mid)
                tmp[k++] = a[x++];
            while (y < end)
                tmp[k++] = a[y++];
        }
        memcpy(a, tmp, n * sizeof *a);
    }
}
