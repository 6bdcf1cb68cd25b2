/* Shared by the libFuzzer harnesses: the counting allocator with a budget
 * (beyond it allocations fail, and the code under test must say so, not
 * crash), and an output sink that refuses more than a cap (a few bytes asking
 * for gigabytes of zeros end quickly), can patch or not, and keeps the bytes
 * when asked; and the check the heap-record writers' harnesses share. */
#ifndef FUZZKIT_H
#define FUZZKIT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "countalloc.h"
#include "hp_common.h"
#include "hp_dumps.h"
#include "hp_sink.h"
#include "testkit.h"

#define FUZZ_BUDGET ((size_t)256 << 20)
#define FUZZ_SINK_MAX ((uint64_t)64 << 20)

/* The budget allocator (countalloc.h), its budget set for one run. */
static inline const hp_alloc *fuzz_budget(void)
{
    countalloc_budget = FUZZ_BUDGET;
    return &countalloc;
}

/* What a sink was given: its count, and its bytes when `keep` (libc memory). */
typedef struct fuzz_out {
    uint64_t total;
    int keep;
    mem_sink kept;
} fuzz_out;

static inline int fuzz_write(void *ctx, const uint8_t *data, size_t len)
{
    fuzz_out *o = ctx;
    if (len > FUZZ_SINK_MAX - o->total)
        return -1;
    o->total += len;
    return o->keep ? mem_write(&o->kept, data, len) : 0;
}

static inline int fuzz_patch(void *ctx, uint64_t back, const uint8_t *data, size_t len)
{
    fuzz_out *o = ctx;
    if (back > o->total || len > back)
        abort(); /* a patch must land on bytes written before */
    return o->keep ? mem_patch(&o->kept, back, data, len) : 0;
}

/* A sink over `o`, patching when asked. */
static inline hp_sink fuzz_sink(fuzz_out *o, int patch)
{
    hp_sink s;
    s.write = fuzz_write;
    s.ctx = o;
    s.patch = patch ? fuzz_patch : NULL;
    return s;
}

/* Aborts unless a failed call's error says what went wrong (truncations
 * and overruns say it with their sizes). */
static inline void fuzz_check_error(hp_code rc, const hp_error *err)
{
    if (rc == HP_OK)
        return;
    if (err->code != rc)
        abort();
    if (rc != HP_E_TRUNCATED && rc != HP_E_OVERRUN && err->detail == NULL && err->text[0] == 0)
        abort();
}

static inline int fuzz_same(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len)
{
    return a_len == b_len && (a_len == 0 || memcmp(a, b, a_len) == 0);
}

/* The three runs of a heap-record writer (hp_heaprec.h) over one input:
 * `a` holding every record, `b` streaming and patching past a small hold,
 * `c` cutting past it.  Aborts unless all three succeed or fail alike (only
 * the output cap may tell them apart: cut output is longer), b is a's very
 * bytes, and c has a's records with heap records cut elsewhere (same
 * bodies, header of 31 bytes).  Frees the three outputs. */
static inline void fuzz_check_three(hp_code ra, fuzz_out *a, hp_code rb, fuzz_out *b, hp_code rc, fuzz_out *c)
{
    if ((ra == HP_OK) != (rb == HP_OK) || (ra == HP_OK) != (rc == HP_OK)) {
        if (ra != HP_E_NOMEM && rb != HP_E_NOMEM && rc != HP_E_NOMEM)
            abort();
    } else if (ra == HP_OK) {
        hp_buf heap_a, other_a, heap_c, other_c;
        size_t longest_a, longest_c;
        if (!fuzz_same(a->kept.d, a->kept.len, b->kept.d, b->kept.len))
            abort(); /* patched: the very bytes of holding */
        split_records(a->kept.d, a->kept.len, 31, &heap_a, &other_a, &longest_a);
        split_records(c->kept.d, c->kept.len, 31, &heap_c, &other_c, &longest_c);
        if (check_failures || !fuzz_same(heap_a.data, heap_a.len, heap_c.data, heap_c.len) ||
            !fuzz_same(other_a.data, other_a.len, other_c.data, other_c.len))
            abort(); /* cut: the same records and sub-records */
        hp_buf_free(&heap_a);
        hp_buf_free(&other_a);
        hp_buf_free(&heap_c);
        hp_buf_free(&other_c);
    }
    free(a->kept.d);
    free(b->kept.d);
    free(c->kept.d);
}

/* Aborts unless the heap dump reported cut short lies within the `len`
 * bytes of the dump it was read from (or restored into). */
static inline void fuzz_check_unfinished(const hp_unfinished *u, uint64_t len)
{
    if (u->count && !(u->offset < u->end && u->end <= len))
        abort();
}

/* A streaming rewriter of dumps (hp_converter, hp_renamer) as the
 * harnesses drive it: its three calls, through one-line wrappers that take
 * the writer as a void pointer. */
typedef struct fuzz_rewriter {
    void *writer;
    hp_code (*feed)(void *writer, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err);
    hp_code (*finish)(void *writer, const hp_sink *out, hp_error *err);
    void (*unfinished)(const void *writer, hp_unfinished *out);
} fuzz_rewriter;

/* Feeds `dump` to the rewriter in pieces of 1..max bytes drawn from
 * `state` (max 0: in one piece), then finishes it.  Aborts unless every
 * failure says why and a heap dump it reports unfinished lies within the
 * input. */
static inline hp_code fuzz_rewrite(const fuzz_rewriter *w, const uint8_t *dump, size_t len, size_t max,
                                   uint32_t state, const hp_sink *sink)
{
    hp_error err;
    hp_code rc = HP_OK;
    size_t pos = 0;
    while (rc == HP_OK && pos < len) {
        size_t n = max ? 1 + xorshift(&state) % max : len;
        if (n > len - pos)
            n = len - pos;
        rc = w->feed(w->writer, dump + pos, n, sink, &err);
        fuzz_check_error(rc, &err);
        pos += n;
    }
    if (rc == HP_OK) {
        rc = w->finish(w->writer, sink, &err);
        fuzz_check_error(rc, &err);
    }
    if (rc == HP_OK) {
        hp_unfinished u;
        w->unfinished(w->writer, &u);
        fuzz_check_unfinished(&u, len);
    }
    return rc;
}

/* Aborts unless every allocation was given back. */
static inline void fuzz_check_freed(void)
{
    if (countalloc_live != 0)
        abort();
}

#endif
