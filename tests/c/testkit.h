/* Shared by the C tests: a byte builder to write dumps with, a reader for
 * ../shared/data/hprof/INVENTORY.json (just enough JSON for it), and a
 * small pseudo-random generator. */
#ifndef TESTKIT_H
#define TESTKIT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "check.h"
#include "hp_common.h"
#include "hp_sink.h"

/* xorshift32: the next pseudo-random number of the sequence in *s. */
static inline uint32_t xorshift(uint32_t *s)
{
    uint32_t x = *s ? *s : 0x9e3779b9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

static inline void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* A growable byte buffer with big-endian writers.  `id` is the identifier
 * size bb_id writes; `rec` where the open record's length goes. */
typedef struct bb {
    uint8_t *d;
    size_t len, cap;
    int id;
    size_t rec;
} bb;

static inline void bb_room(bb *b, size_t n)
{
    if (b->len + n > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        uint8_t *g;
        while (c < b->len + n)
            c *= 2;
        g = realloc(b->d, c);
        if (!g) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        b->d = g;
        b->cap = c;
    }
}

static inline void bb_raw(bb *b, const void *p, size_t n)
{
    bb_room(b, n);
    if (n)
        memcpy(b->d + b->len, p, n);
    b->len += n;
}

static inline void bb_u1(bb *b, unsigned v)
{
    uint8_t c = (uint8_t)v;
    bb_raw(b, &c, 1);
}

static inline void bb_u2(bb *b, unsigned v)
{
    bb_room(b, 2);
    hp_put16(b->d + b->len, (uint16_t)v);
    b->len += 2;
}

static inline void bb_u4(bb *b, uint32_t v)
{
    bb_room(b, 4);
    hp_put32(b->d + b->len, v);
    b->len += 4;
}

static inline void bb_u8(bb *b, uint64_t v)
{
    bb_room(b, 8);
    hp_put64(b->d + b->len, v);
    b->len += 8;
}

static inline void bb_idn(bb *b, int id_size, uint64_t v)
{
    if (id_size == 8)
        bb_u8(b, v);
    else
        bb_u4(b, (uint32_t)v);
}

static inline void bb_id(bb *b, uint64_t v) { bb_idn(b, b->id, v); }

/* Opens a top-level record (time 0); bb_rec_end fills in its length. */
static inline void bb_rec_begin(bb *b, int tag)
{
    bb_u1(b, (unsigned)tag);
    bb_u4(b, 0);
    b->rec = b->len;
    bb_u4(b, 0);
}

static inline void bb_rec_end(bb *b) { hp_put32(b->d + b->rec, (uint32_t)(b->len - b->rec - 4)); }

/* Prints a failed core call's error under `what` (nothing for HP_OK). */
static inline void show_error(const char *what, hp_code rc, const hp_error *err)
{
    char msg[256];
    if (rc == HP_OK)
        return;
    hp_error_format(err, msg, sizeof msg);
    fprintf(stderr, "  %s: %s\n", what, msg);
}

/* 1 when the two byte strings are equal; else says where they part. */
static inline int same_bytes(const char *what, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    size_t i, n = alen < blen ? alen : blen;
    if (alen == blen && memcmp(a, b, n) == 0)
        return 1;
    for (i = 0; i < n && a[i] == b[i]; i++)
        ;
    fprintf(stderr, "  %s: %zu vs %zu bytes, first difference at %zu\n", what, alen, blen, i);
    return 0;
}

/* A dump of the shared data, whole, inflating .gz files (caller frees);
 * NULL when it cannot be read.  `rel` is relative to the data folder. */
static inline uint8_t *load_dump(const char *rel, size_t *len)
{
    uint8_t tmp[1 << 16], *data = NULL;
    size_t cap = 0;
    gzFile f;
    int n;
    *len = 0;
    if (strcmp(rel + strlen(rel) - 3, ".gz") != 0)
        return check_read_file(check_data_path(rel), len);
    f = gzopen(check_data_path(rel), "rb");
    if (!f)
        return NULL;
    while ((n = gzread(f, tmp, sizeof tmp)) > 0) {
        if (*len + (size_t)n > cap) {
            cap = 2 * (*len + (size_t)n);
            data = realloc(data, cap);
            if (!data) {
                fprintf(stderr, "out of memory\n");
                exit(2);
            }
        }
        memcpy(data + *len, tmp, (size_t)n);
        *len += (size_t)n;
    }
    gzclose(f);
    return data;
}

/* A memory sink that can patch (hp_sink.patch), or not: `patches` counts
 * the patches made. */
typedef struct mem_sink {
    uint8_t *d;
    size_t len, cap;
    int patches;
} mem_sink;

static inline int mem_write(void *ctx, const uint8_t *data, size_t len)
{
    mem_sink *m = ctx;
    if (m->len + len > m->cap) {
        m->cap = 2 * (m->len + len) + 4096;
        m->d = realloc(m->d, m->cap);
        if (!m->d) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
    }
    if (len)
        memcpy(m->d + m->len, data, len);
    m->len += len;
    return 0;
}

static inline int mem_patch(void *ctx, uint64_t back, const uint8_t *data, size_t len)
{
    mem_sink *m = ctx;
    if (back > m->len || len > back)
        return -1;
    memcpy(m->d + m->len - back, data, len);
    m->patches++;
    return 0;
}

/* Appends `len` bytes at `in` deflated at `level` to *out; window_bits as
 * deflateInit2 takes it: -15 raw deflate, 15 zlib, 31 gzip. */
static inline void deflate_append(mem_sink *out, const void *in, size_t len, int level, int window_bits)
{
    z_stream z;
    uLong bound;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        abort();
    bound = deflateBound(&z, (uLong)len) + 32; /* + the gzip header deflateBound may not count */
    mem_write(out, NULL, 0);
    if (out->len + bound > out->cap) {
        out->cap = out->len + bound;
        if (!(out->d = realloc(out->d, out->cap)))
            abort();
    }
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)len;
    z.next_out = out->d + out->len;
    z.avail_out = (uInt)bound;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        abort();
    out->len += z.total_out;
    deflateEnd(&z);
}

/* The records of an HPROF byte string whose header is `header` bytes: the
 * bodies of heap records joined, and the other records whole; *longest is
 * the longest heap record.  Two outputs that cut heap records differently
 * have the same of both. */
static inline void split_records(const uint8_t *p, size_t len, size_t header, hp_buf *heap, hp_buf *other,
                                 size_t *longest)
{
    const uint8_t *end = p + len;
    hp_buf_init(heap, NULL);
    hp_buf_init(other, NULL);
    *longest = 0;
    p += header;
    while (end - p >= 9) {
        uint32_t n = hp_be32(p + 5);
        CHECK(n <= (size_t)(end - p - 9));
        if (n > (size_t)(end - p - 9))
            return;
        if (hp_is_heap_tag(p[0])) {
            hp_buf_append(heap, p + 9, n);
            *longest = n > *longest ? n : *longest;
        } else {
            hp_buf_append(other, p, 9 + (size_t)n);
        }
        p += 9 + n;
    }
    CHECK(p == end);
}

/* ---- INVENTORY.json ---- */

typedef struct inv_entry {
    char file[160];
    char compression[16];
    char version[32];
    uint64_t size, dsize, timestamp;
    int id_size;
    uint64_t recs[256], subs[256];
} inv_entry;

/* Pointer just past `"key":` (and spaces) inside [p, end), or NULL. */
static inline const char *json_key(const char *p, const char *end, const char *key)
{
    size_t kl = strlen(key);
    for (; p + kl + 2 < end; p++)
        if (p[0] == '"' && strncmp(p + 1, key, kl) == 0 && p[1 + kl] == '"') {
            const char *q = p + kl + 2;
            while (q < end && (*q == ' ' || *q == '\n'))
                q++;
            if (q < end && *q == ':') {
                q++;
                while (q < end && (*q == ' ' || *q == '\n'))
                    q++;
                return q;
            }
        }
    return NULL;
}

static inline void json_string(const char *v, char *out, size_t size)
{
    size_t n = 0;
    out[0] = 0;
    if (!v || *v != '"')
        return;
    for (v++; *v && *v != '"' && n + 1 < size; v++)
        out[n++] = *v;
    out[n] = 0;
}

static inline uint64_t json_u64(const char *v) { return v && *v >= '0' && *v <= '9' ? strtoull(v, NULL, 10) : 0; }

/* {"0x01": 48714, ...} into counts[tag]; the number of entries, or -1. */
static inline int json_counts(const char *v, const char *end, uint64_t *counts)
{
    int n = 0;
    if (!v || *v != '{')
        return -1;
    for (v++; v < end && *v != '}'; v++)
        if (v[0] == '"' && v[1] == '0' && v[2] == 'x') {
            char *e;
            unsigned long tag = strtoul(v + 3, &e, 16);
            const char *q = e;
            if (tag > 255 || *q != '"')
                return -1;
            q++;
            while (*q == ' ' || *q == ':')
                q++;
            counts[tag] = strtoull(q, &e, 10);
            v = e - 1;
            n++;
        }
    return n;
}

/* Every entry of INVENTORY.json (caller frees); NULL when it cannot be read. */
static inline inv_entry *read_inventory(size_t *count)
{
    size_t len, n = 0;
    unsigned char *text = check_read_file(check_data_path("hprof/INVENTORY.json"), &len);
    const char *p, *end;
    inv_entry *out;
    *count = 0;
    if (!text)
        return NULL;
    text = realloc(text, len + 1);
    text[len] = 0;
    end = (const char *)text + len;
    out = xmalloc(64 * sizeof *out);
    for (p = json_key((const char *)text, end, "file"); p && n < 64;) {
        const char *next = json_key(p, end, "file");
        const char *stop = next ? next : end;
        inv_entry *e = &out[n++];
        memset(e, 0, sizeof *e);
        json_string(p, e->file, sizeof e->file);
        json_string(json_key(p, stop, "compression"), e->compression, sizeof e->compression);
        json_string(json_key(p, stop, "version"), e->version, sizeof e->version);
        e->size = json_u64(json_key(p, stop, "size"));
        e->dsize = json_u64(json_key(p, stop, "decompressed_size"));
        e->timestamp = json_u64(json_key(p, stop, "timestamp_ms"));
        e->id_size = (int)json_u64(json_key(p, stop, "id_size"));
        CHECK(json_counts(json_key(p, stop, "top_level_records"), stop, e->recs) > 0);
        CHECK(json_counts(json_key(p, stop, "heap_subrecords"), stop, e->subs) >= 0);
        p = next;
    }
    free(text);
    *count = n;
    return out;
}

#endif
