/* Internals of the pack encoder, shared by hp_pack_encode.c (records and
 * sub-records, field by field) and hp_pack_encode_block.c (the block: held
 * sorted groups, cuts, payloads).  Not a public header. */
#ifndef HP_PACK_ENC_H
#define HP_PACK_ENC_H

#include "hp_pack.h"
#include "hp_pack_model.h"
#include "hp_parser.h"

#include <string.h>

typedef struct pk_stream {
    uint8_t *data;
    size_t len, cap;
} pk_stream;

/* A UTF8 record of the block, held until the block is cut. */
typedef struct pk_str {
    uint64_t sid;
    uint32_t idx, off, len;
    int nul; /* the text holds a NUL: its length is stored, no terminator */
} pk_str;

/* A LOAD_CLASS record of the block, held likewise. */
typedef struct pk_lc {
    uint64_t cls, name;
    uint32_t serial, stack, idx;
} pk_lc;

/* The primitive field bytes of one class's instances in the block, one
 * row per instance; they go to IPRIM as byte planes when the block is cut. */
typedef struct pk_rows {
    uint32_t width, count;
    pk_stream bytes;
} pk_rows;

/* What the bytes of the current payload (or record body) become. */
enum { PAY_NONE, PAY_SKIP, PAY_ZERO, PAY_RAW, PAY_IRAW, PAY_PRIM, PAY_AREF };

/* What the current top-level record is. */
enum { REC_NONE, REC_WAIT, REC_RAW, REC_SKIP, REC_HEAP };

struct hp_pack_encoder {
    hp_alloc alloc;
    hp_pack_policy pol;
    size_t block_size;
    hp_parser *parser;
    hp_error error;
    int failed, finished, oom;
    int id_size;
    int app_only; /* policy.app_only on an Android dump */

    pk_stream s[HP_PACK_NSTREAMS];
    size_t total; /* bytes in all streams */
    pk_model m;

    /* the block's sorted groups (docs/format.md §5.3) */
    pk_str *strs;
    size_t nstrs, strs_cap;
    pk_stream texts;
    pk_stream scratch;
    pk_lc *lcs;
    size_t nlcs, lcs_cap;
    pk_rows *rows; /* the block's row groups, in order of first use */
    size_t nrows, rows_cap;
    uint32_t *ranks;
    size_t ranks_cap;

    hp_pack_block_fn fn;
    void *ctx;
    uint64_t blocks, bytes_in, bytes_out, block_out, cut_at;

    int rec_mode;
    hp_record rec;
    /* heap records under app_only: the head is written with the first kept
     * sub-record and its length at the end, unless a block was cut after the
     * head (then 0 = "deferred" and an END op closes the record) */
    int heap_pending, heap_head_out, heap_deferred;
    uint64_t heap_body;
    uint8_t info[32];
    size_t info_len;

    int pay_kind, pay_stream;
    size_t pay_elem;
    uint64_t pay_left, pay_done, pay_block_start, aref_base;
    uint8_t part[8];
    size_t part_len;
};

/* ---- streams: each writer checks room; out of memory sets e->oom, which
 * the driver turns into HP_E_NOMEM after the event ---- */

/* Grows stream s for n more bytes: where to write them, or NULL. */
uint8_t *pk_enc_grow(hp_pack_encoder *e, pk_stream *s, size_t n);
/* Grows an array of `size`-byte items to hold `want`; 0 or -1 (e->oom). */
int pk_enc_grow_array(hp_pack_encoder *e, void **data, size_t *cap, size_t want, size_t size);

/* Room for n more bytes in stream si: a pointer to write them at, or NULL
 * when memory ran out (e->oom is then set and checked after each event). */
static inline uint8_t *room(hp_pack_encoder *e, int si, size_t n)
{
    pk_stream *s = &e->s[si];
    if (s->cap - s->len >= n)
        return s->data + s->len;
    return pk_enc_grow(e, s, n);
}

static inline void commit(hp_pack_encoder *e, int si, size_t n)
{
    e->s[si].len += n;
    e->total += n;
}

static inline void put_u8(hp_pack_encoder *e, int si, unsigned v)
{
    uint8_t *p = room(e, si, 1);
    if (p) {
        *p = (uint8_t)v;
        commit(e, si, 1);
    }
}

static inline void put_var(hp_pack_encoder *e, int si, uint64_t v)
{
    uint8_t *p = room(e, si, HP_VARINT_MAX);
    if (p)
        commit(e, si, hp_put_varint(p, v));
}

static inline void put_bytes(hp_pack_encoder *e, int si, const uint8_t *data, size_t n)
{
    uint8_t *p = room(e, si, n);
    if (p && n) {
        memcpy(p, data, n);
        commit(e, si, n);
    }
}

/* An id delta in alignment context `a` (hp_pack_model.h). */
static inline void put_delta(hp_pack_encoder *e, int si, pk_align *a, int64_t d)
{
    if (pk_aligned(a)) {
        put_var(e, si, pk_delta_code(d));
        put_u8(e, HP_PS_LOW, (unsigned)d & 7u);
    } else {
        put_var(e, si, pk_zigzag(d));
    }
    pk_align_learn(a, (uint64_t)d);
}

/* An id coded as a delta against the last one of its context. */
static inline void put_id(hp_pack_encoder *e, int si, int ctx, uint64_t v)
{
    int64_t d = pk_id_diff(v, e->m.prev[ctx], e->id_size);
    e->m.prev[ctx] = v;
    put_delta(e, si, &e->m.align[ctx], d);
}

/* An object's id: zigzag of its difference from the id predicted by the
 * step learnt after the previous object (almost always 0, so no LOW byte);
 * the caller then sets e->m.steps.last to the object's shape. */
static inline void put_obj_id(hp_pack_encoder *e, uint64_t v)
{
    put_var(e, HP_PS_OBJID, pk_zigzag(pk_id_diff(v, pk_obj_predict(&e->m), e->id_size)));
    pk_obj_seen(&e->m, v, pk_id_mask(e->id_size));
}

/* A HEAP_DUMP_INFO after its op: the heap id in OP too (it says which
 * objects follow, like an op), the name against that heap's last name. */
static inline void put_heap_info(hp_pack_encoder *e, uint32_t heap, uint64_t name)
{
    put_var(e, HP_PS_OP, heap);
    put_var(e, HP_PS_NAME, pk_zigzag(pk_id_diff(name, pk_heap_name_base(&e->m, heap), e->id_size)));
    pk_heap_name_seen(&e->m, heap, name);
}

/* A reference: 0 for null, else a delta against `base` (hp_pack_model.h). */
static inline void put_ref(hp_pack_encoder *e, int si, pk_align *a, uint64_t v, uint64_t base)
{
    int64_t d;
    uint64_t z;
    if (v == 0) {
        put_u8(e, si, 0);
        return;
    }
    d = pk_id_diff(v, base, e->id_size);
    z = pk_zigzag(d);
    if (pk_aligned(a)) {
        put_var(e, si, pk_delta_code(d) + 1);
        put_u8(e, HP_PS_LOW, (unsigned)d & 7u);
    } else if (z < UINT64_MAX - 1) {
        put_var(e, si, z + 2);
    } else {
        put_u8(e, si, 1);
        put_var(e, si, pk_delta_code(d));
        put_u8(e, HP_PS_LOW, (unsigned)d & 7u);
    }
    pk_align_learn(a, (uint64_t)d);
}

/* A u4 coded as the zigzag of its (wrapping) difference from the last one. */
static inline void put_ser(hp_pack_encoder *e, int si, int ctx, uint32_t v)
{
    put_var(e, si, pk_zigzag((int32_t)(v - e->m.ser[ctx])));
    e->m.ser[ctx] = v;
}

/* Counts restored bytes: the block's out_len and the total. */
static inline void out(hp_pack_encoder *e, uint64_t n)
{
    e->block_out += n;
    e->bytes_out += n;
}

/* ---- blocks and payloads (hp_pack_encode_block.c) ---- */

hp_code pk_enc_nomem(hp_pack_encoder *e, uint64_t offset);

/* Cuts the block: sorted groups and 2-byte planes go into their streams,
 * the callback gets them, everything is emptied.  `at` is the source offset
 * where the next block starts.  0, -1 out of memory, -2 callback refused. */
int pk_enc_cut(hp_pack_encoder *e, uint64_t at);
hp_code pk_enc_cut_failed(hp_pack_encoder *e, int rc, uint64_t at);

/* Before each unit: cuts when the block is full. */
hp_code pk_enc_boundary(hp_pack_encoder *e, uint64_t at);

/* The current unit's payload: `len` bytes of `elem`-byte elements to store
 * as `kind` in `stream`; then pk_enc_payload with its pieces, in order. */
void pk_enc_start_payload(hp_pack_encoder *e, int kind, int stream, size_t elem, uint64_t len);
hp_code pk_enc_payload(hp_pack_encoder *e, const uint8_t *p, size_t n, uint64_t off);

#endif
