/* The pack encoder's blocks: growing streams, the sorted groups (UTF8 and
 * LOAD_CLASS records, held until the block is cut), the cut itself, and
 * payloads, which may be cut across blocks at element boundaries.
 *
 * Cut points depend only on the bytes coded, never on how the input was
 * chunked: a block is cut before the first unit that starts once it holds
 * block_size bytes, or inside a payload at the first element boundary where
 * it holds block_size bytes. */
#include "hp_pack_enc.h"

#include <stdlib.h>

uint8_t *pk_enc_grow(hp_pack_encoder *e, pk_stream *s, size_t n)
{
    size_t cap = s->cap ? s->cap : 4096;
    uint8_t *p;
    if (e->oom)
        return NULL;
    while (cap - s->len < n)
        cap *= 2;
    p = e->alloc.realloc_fn(s->data, cap);
    if (!p) {
        e->oom = 1;
        return NULL;
    }
    s->data = p;
    s->cap = cap;
    return p + s->len;
}

int pk_enc_grow_array(hp_pack_encoder *e, void **data, size_t *cap, size_t want, size_t size)
{
    size_t c = *cap ? *cap : 256;
    void *p;
    if (want <= *cap)
        return 0;
    while (c < want)
        c *= 2;
    p = e->alloc.realloc_fn(*data, c * size);
    if (!p) {
        e->oom = 1;
        return -1;
    }
    *data = p;
    *cap = c;
    return 0;
}

/* ---- sorted groups ---- */

static int cmp_str(const void *a, const void *b)
{
    const pk_str *x = a, *y = b;
    if (x->sid != y->sid)
        return x->sid < y->sid ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_lc(const void *a, const void *b)
{
    const pk_lc *x = a, *y = b;
    if (x->serial != y->serial)
        return x->serial < y->serial ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The rank of each record (by original index) once sorted, as byte planes,
 * most significant first. */
static void put_ranks(hp_pack_encoder *e, int si, size_t n)
{
    const int w = pk_rank_width(n);
    int plane;
    size_t i;
    uint8_t *p = room(e, si, n * (size_t)w);
    if (!p)
        return;
    for (plane = w - 1; plane >= 0; plane--)
        for (i = 0; i < n; i++)
            *p++ = (uint8_t)(e->ranks[i] >> (8 * plane));
    commit(e, si, n * (size_t)w);
}

static void emit_strings(hp_pack_encoder *e)
{
    const size_t n = e->nstrs;
    size_t i;
    uint64_t prev = 0;
    uint8_t *low;
    if (n == 0 || pk_enc_grow_array(e, (void **)&e->ranks, &e->ranks_cap, n, sizeof *e->ranks) < 0)
        return;
    qsort(e->strs, n, sizeof *e->strs, cmp_str);
    put_var(e, HP_PS_STRINGS, n);
    for (i = 0; i < n; i++) {
        put_var(e, HP_PS_STRINGS, (e->strs[i].sid - prev) >> 3);
        prev = e->strs[i].sid;
    }
    if (!(low = room(e, HP_PS_STRINGS, n)))
        return;
    for (i = 0, prev = 0; i < n; i++) {
        low[i] = (uint8_t)((e->strs[i].sid - prev) & 7);
        prev = e->strs[i].sid;
    }
    commit(e, HP_PS_STRINGS, n);
    for (i = 0; i < n; i++) {
        const pk_str *t = &e->strs[i];
        put_var(e, HP_PS_STRINGS, t->nul ? (uint64_t)t->len + 1 : 0);
        put_bytes(e, HP_PS_TEXT, e->texts.data + t->off, t->len);
        if (!t->nul)
            put_u8(e, HP_PS_TEXT, 0);
        e->ranks[t->idx] = (uint32_t)i;
    }
    put_ranks(e, HP_PS_RANK, n);
}

static void emit_classes(hp_pack_encoder *e)
{
    const size_t n = e->nlcs;
    const int ids = e->id_size;
    size_t i;
    uint64_t prev = 0;
    uint32_t prev_serial = 0;
    uint8_t *low;
    if (n == 0 || pk_enc_grow_array(e, (void **)&e->ranks, &e->ranks_cap, n, sizeof *e->ranks) < 0)
        return;
    qsort(e->lcs, n, sizeof *e->lcs, cmp_lc);
    put_var(e, HP_PS_CLASSES, n);
    for (i = 0; i < n; i++) {
        put_var(e, HP_PS_CLASSES, e->lcs[i].serial - prev_serial);
        prev_serial = e->lcs[i].serial;
        e->ranks[e->lcs[i].idx] = (uint32_t)i;
    }
    for (i = 0; i < n; i++) {
        put_var(e, HP_PS_CLASSES, pk_delta_code(pk_id_diff(e->lcs[i].cls, prev, ids)));
        prev = e->lcs[i].cls;
    }
    for (i = 0; i < n; i++)
        put_var(e, HP_PS_CLASSES, e->lcs[i].stack);
    for (i = 0, prev = 0; i < n; i++) {
        put_var(e, HP_PS_CLASSES, pk_delta_code(pk_id_diff(e->lcs[i].name, prev, ids)));
        prev = e->lcs[i].name;
    }
    if (!(low = room(e, HP_PS_CLASSES, 2 * n)))
        return;
    for (i = 0, prev = 0; i < n; i++) {
        low[i] = (uint8_t)(pk_id_diff(e->lcs[i].cls, prev, ids) & 7);
        prev = e->lcs[i].cls;
    }
    for (i = 0, prev = 0; i < n; i++) {
        low[n + i] = (uint8_t)(pk_id_diff(e->lcs[i].name, prev, ids) & 7);
        prev = e->lcs[i].name;
    }
    commit(e, HP_PS_CLASSES, 2 * n);
    put_ranks(e, HP_PS_RANK, n);
}

/* ---- blocks ---- */

/* Splits a stream of 2-byte elements into its high and low byte planes. */
static void shuffle2(hp_pack_encoder *e, pk_stream *s)
{
    size_t n = s->len / 2, i;
    uint8_t *t;
    if (e->scratch.cap < s->len && !pk_enc_grow(e, &e->scratch, s->len))
        return;
    t = e->scratch.data;
    for (i = 0; i < n; i++) {
        t[i] = s->data[2 * i];
        t[n + i] = s->data[2 * i + 1];
    }
    memcpy(s->data, t, 2 * n);
}

/* The block's row groups: their row counts in ROWS, then each group's
 * bytes in IPRIM as planes (byte 0 of every row, then byte 1...): a field
 * of one class lines up with itself, so small numbers, flags and repeated
 * values compress. */
static void emit_rows(hp_pack_encoder *e)
{
    size_t g, b, r;
    for (g = 0; g < e->nrows; g++) {
        const pk_rows *rows = &e->rows[g];
        const size_t w = rows->width, n = rows->count;
        uint8_t *q = room(e, HP_PS_IPRIM, w * n);
        put_var(e, HP_PS_ROWS, n);
        if (!q)
            return;
        for (b = 0; b < w; b++)
            for (r = 0; r < n; r++)
                *q++ = rows->bytes.data[r * w + b];
        commit(e, HP_PS_IPRIM, w * n);
    }
    e->nrows = 0;
}

hp_code pk_enc_nomem(hp_pack_encoder *e, uint64_t offset)
{
    return hp_fail(&e->error, HP_E_NOMEM, offset, -1, 0, 0, 0, "out of memory for the pack streams");
}

/* Hands the streams to the callback as one block and empties them.
 * `at` is the source offset where the next block starts. */
int pk_enc_cut(hp_pack_encoder *e, uint64_t at)
{
    hp_pack_block b;
    int i;
    if (e->heap_pending && e->heap_head_out && !e->heap_deferred) {
        /* the open heap record's length cannot be known in this block */
        put_var(e, HP_PS_LEN, 0);
        e->heap_deferred = 1;
    }
    emit_strings(e);
    emit_classes(e);
    emit_rows(e);
    for (i = 0; i < HP_PACK_NSTREAMS; i++)
        if (pk_shuffled(i) && e->s[i].len)
            shuffle2(e, &e->s[i]);
    if (e->oom)
        return -1;
    for (i = 0; i < HP_PACK_NSTREAMS; i++) {
        b.data[i] = e->s[i].data;
        b.len[i] = e->s[i].len;
    }
    b.index = e->blocks;
    b.in_len = at - e->cut_at;
    b.out_len = e->block_out;
    if (e->fn(e->ctx, &b) < 0)
        return -2;
    for (i = 0; i < HP_PACK_NSTREAMS; i++)
        e->s[i].len = 0;
    e->total = 0;
    e->nstrs = e->nlcs = 0;
    e->texts.len = 0;
    e->blocks++;
    e->block_out = 0;
    e->cut_at = at;
    e->pay_block_start = e->pay_done;
    return 0;
}

hp_code pk_enc_cut_failed(hp_pack_encoder *e, int rc, uint64_t at)
{
    if (rc == -1)
        return pk_enc_nomem(e, at);
    return hp_fail(&e->error, HP_E_NOMEM, at, -1, 0, 0, 0, "the block callback refused the block");
}

/* Before each unit: cut when the block is full. */
hp_code pk_enc_boundary(hp_pack_encoder *e, uint64_t at)
{
    int rc;
    if (e->total < e->block_size)
        return HP_OK;
    rc = pk_enc_cut(e, at);
    return rc < 0 ? pk_enc_cut_failed(e, rc, at) : HP_OK;
}

/* ---- payloads ---- */

void pk_enc_start_payload(hp_pack_encoder *e, int kind, int stream, size_t elem, uint64_t len)
{
    e->pay_kind = kind;
    e->pay_stream = stream;
    e->pay_elem = elem;
    e->pay_left = len;
    e->pay_done = 0;
    e->pay_block_start = 0;
    e->part_len = 0;
}

/* Codes n whole object array elements (put_ref, unrolled for arrays). */
static void code_elements(hp_pack_encoder *e, const uint8_t *p, size_t n)
{
    const int ids = e->id_size;
    uint8_t *q = room(e, HP_PS_AREF, n * (HP_VARINT_MAX + 1)), *low = room(e, HP_PS_LOW, n);
    uint64_t base = e->aref_base;
    pk_align *a = &e->m.align[PK_ALIGN_AREF];
    size_t i, w = 0, l = 0;
    if (!q || !low)
        return;
    for (i = 0; i < n; i++, p += ids) {
        uint64_t v = hp_read_id(p, ids), z;
        int64_t d;
        if (v == 0) {
            q[w++] = 0;
            continue;
        }
        d = pk_id_diff(v, base, ids);
        z = pk_zigzag(d);
        if (pk_aligned(a)) {
            w += hp_put_varint(q + w, pk_delta_code(d) + 1);
            low[l++] = (uint8_t)(d & 7);
        } else if (z < UINT64_MAX - 1) {
            w += hp_put_varint(q + w, z + 2);
        } else {
            q[w++] = 1;
            w += hp_put_varint(q + w, pk_delta_code(d));
            low[l++] = (uint8_t)(d & 7);
        }
        pk_align_learn(a, (uint64_t)d);
        base = v;
    }
    e->aref_base = base;
    commit(e, HP_PS_AREF, w);
    commit(e, HP_PS_LOW, l);
}

/* Stores `take` payload bytes (whole elements for AREF). */
static void store(hp_pack_encoder *e, const uint8_t *p, size_t take)
{
    if (e->pay_kind == PAY_AREF)
        code_elements(e, p, take / (size_t)e->id_size);
    else
        put_bytes(e, e->pay_stream, p, take);
    out(e, take);
}

/* Bytes to store before the next possible cut point: up to the first
 * element boundary where the block is full.  At least one element. */
static size_t until_cut(const hp_pack_encoder *e)
{
    uint64_t elem = e->pay_elem, target, room_left;
    if (e->pay_kind == PAY_AREF) {
        /* an element codes to at most 12 bytes: never overshoot the limit */
        room_left = e->total < e->block_size ? (uint64_t)(e->block_size - e->total) : 0;
        target = room_left / (HP_VARINT_MAX + 2);
        return (size_t)((target ? target : 1) * elem);
    }
    room_left = e->total < e->block_size ? (uint64_t)(e->block_size - e->total) : 0;
    target = e->pay_done + room_left;
    target = (target + elem - 1) / elem * elem;
    if (target <= e->pay_done)
        target = e->pay_done + elem;
    return (size_t)(target - e->pay_done);
}

/* Stores n more payload bytes (any split), cutting blocks on the way. */
hp_code pk_enc_payload(hp_pack_encoder *e, const uint8_t *p, size_t n, uint64_t off)
{
    const size_t elem = e->pay_elem;
    if (e->pay_kind == PAY_SKIP || e->pay_kind == PAY_ZERO || e->pay_kind == PAY_NONE) {
        e->pay_left -= n;
        return HP_OK;
    }
    if (e->part_len) { /* complete the element split by the previous piece */
        size_t k = elem - e->part_len;
        if (k > n)
            k = n;
        memcpy(e->part + e->part_len, p, k);
        e->part_len += k;
        p += k;
        n -= k;
        off += k;
        if (e->part_len < elem)
            return HP_OK;
        e->part_len = 0;
        store(e, e->part, elem);
        e->pay_done += elem;
        e->pay_left -= elem;
    }
    while (n > 0) {
        size_t take;
        if (e->total >= e->block_size && e->pay_done % elem == 0 && e->pay_done > e->pay_block_start &&
            e->pay_left > 0) {
            int rc = pk_enc_cut(e, off);
            if (rc < 0)
                return pk_enc_cut_failed(e, rc, off);
        }
        take = until_cut(e);
        if (take > n)
            take = n - n % elem;
        if (take == 0) { /* less than an element left in this piece */
            memcpy(e->part, p, n);
            e->part_len = n;
            return HP_OK;
        }
        store(e, p, take);
        p += take;
        n -= take;
        off += take;
        e->pay_done += take;
        e->pay_left -= take;
    }
    return HP_OK;
}
