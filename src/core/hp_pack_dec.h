/* Internals of the pack decoder, in three layers that call downwards only:
 * hp_pack_decode.c (the public entry points: blocks, sorted groups, the op
 * loop), hp_pack_decode_units.c (records and sub-records) and
 * hp_pack_decode_io.c (reading streams, output, errors).  Not a public
 * header. */
#ifndef HP_PACK_DEC_H
#define HP_PACK_DEC_H

#include "hp_heaprec.h"
#include "hp_pack.h"
#include "hp_pack_model.h"
#include "hp_parser.h"

#include <string.h>

#define FLUSH_AT ((size_t)1 << 20)   /* buffered output written out beyond this */
#define DIRECT_MIN ((size_t)64 << 10) /* payload runs at least this long skip the buffer */

typedef struct pk_in {
    const uint8_t *p, *end;
} pk_in;

enum { CONT_NONE, CONT_RAW, CONT_IRAW, CONT_PRIM, CONT_AREF };

/* A block's sorted group, decoded up front: record i (in original order)
 * is entry rank[i] of the sorted arrays. */
typedef struct pk_group {
    size_t n, next, cap;
    uint32_t *rank;
    uint8_t *seen;
    uint64_t *id, *id2;    /* strings: sid; classes: class id, name id */
    uint32_t *u, *u2;      /* strings: text length; classes: serial, stack serial */
    const uint8_t **text;  /* strings only */
} pk_group;

/* A row group of the block (the encoder's pk_rows): `count` rows of
 * `width` bytes, stored as planes at `planes`; `next` rows restored. */
typedef struct pk_row_group {
    const uint8_t *planes;
    uint32_t width, count, next;
} pk_row_group;

/* Why the current unit failed (d->bad). */
enum { BAD_NONE, BAD_SHORT, BAD_VARINT, BAD_VALUE };

struct hp_pack_decoder {
    hp_alloc alloc;
    hp_pack_policy pol;
    hp_header header;
    int id_size;
    uint64_t mask;
    hp_error error;
    int failed, finished, header_done;

    pk_in in[HP_PACK_NSTREAMS];
    pk_model m;
    pk_group strs, lcs;
    pk_row_group *rows;
    size_t nrows, rows_cap;
    hp_buf planes[2]; /* the 2-byte element streams, unshuffled */

    /* output: units are built in buf, which goes to `out` or, inside a held
     * heap record, to `held`, which writes it as it can (hp_heaprec.h) */
    uint8_t *buf;
    size_t len, cap;
    hp_writer out;
    hp_heaprec held;
    int holding;
    uint64_t held_body; /* bytes announced in the held record (its length check) */
    /* Sub-records of the held record not yet announced to it: while it has
     * room (hp_heaprec_room) they are announced together at the next flush,
     * rather than each with a flush of its own.  They begin at
     * buf[pending_from]; the room is the held record's when the batch began
     * (it changes only when told of the batch). */
    uint64_t pending, batch_room;
    size_t pending_from;
    uint64_t pos, block_out, blocks;

    /* what went wrong in the current unit */
    int bad, bad_stream;
    const char *bad_why;

    /* the unit being restored, for errors */
    uint64_t unit_off;
    int unit_tag, unit_sub;

    int in_heap, heap_deferred;
    uint64_t heap_left;

    int cont, cont_stream;
    uint64_t cont_left, aref_base;
};

/* Static messages, per stream. */
extern const char *const pk_ran_out[HP_PACK_NSTREAMS];
extern const char *const pk_bad_varint[HP_PACK_NSTREAMS];
extern const char *const pk_left_over[HP_PACK_NSTREAMS];
extern const uint8_t pk_zeros[64 << 10];

/* ---- reading streams: a failed read records why in d->bad and returns 0;
 * units check it once (pk_dec_checked) before writing their output ---- */

void pk_dec_set_bad(hp_pack_decoder *d, int kind, int si, const char *why);
uint64_t pk_dec_var_slow(hp_pack_decoder *d, int si);

static inline size_t avail(const hp_pack_decoder *d, int si) { return (size_t)(d->in[si].end - d->in[si].p); }

static inline unsigned get_u8(hp_pack_decoder *d, int si)
{
    pk_in *s = &d->in[si];
    if (s->p < s->end)
        return *s->p++;
    pk_dec_set_bad(d, BAD_SHORT, si, pk_ran_out[si]);
    return 0;
}

static inline uint64_t get_var(hp_pack_decoder *d, int si)
{
    pk_in *s = &d->in[si];
    if (s->p < s->end && *s->p < 0x80)
        return *s->p++;
    if (s->end - s->p >= 2 && s->p[1] < 0x80) {
        uint64_t v = (uint64_t)(s->p[0] & 0x7F) | (uint64_t)s->p[1] << 7;
        s->p += 2;
        return v;
    }
    return pk_dec_var_slow(d, si);
}

/* A varint that must fit a u4. */
static inline uint32_t get_u32(hp_pack_decoder *d, int si)
{
    uint64_t v = get_var(d, si);
    if (v > 0xFFFFFFFFu) {
        pk_dec_set_bad(d, BAD_VALUE, si, "value out of range for a u4 field");
        return 0;
    }
    return (uint32_t)v;
}

static inline const uint8_t *get_bytes(hp_pack_decoder *d, int si, size_t n)
{
    pk_in *s = &d->in[si];
    const uint8_t *p = s->p;
    if ((size_t)(s->end - s->p) >= n) {
        s->p += n;
        return p;
    }
    pk_dec_set_bad(d, BAD_SHORT, si, pk_ran_out[si]);
    s->p = s->end;
    return NULL;
}

/* An id delta in alignment context `a` (hp_pack_model.h). */
static inline uint64_t get_delta(hp_pack_decoder *d, int si, pk_align *a)
{
    uint64_t code = get_var(d, si), delta;
    if (pk_aligned(a))
        delta = pk_delta_value(code, get_u8(d, HP_PS_LOW));
    else
        delta = (uint64_t)pk_unzigzag(code);
    pk_align_learn(a, delta);
    return delta;
}

static inline uint64_t get_id(hp_pack_decoder *d, int si, int ctx)
{
    uint64_t v = (d->m.prev[ctx] + get_delta(d, si, &d->m.align[ctx])) & d->mask;
    d->m.prev[ctx] = v;
    return v;
}

/* An object's id (put_obj_id); the caller then sets d->m.steps.last. */
static inline uint64_t get_obj_id(hp_pack_decoder *d)
{
    uint64_t v = (pk_obj_predict(&d->m) + (uint64_t)pk_unzigzag(get_var(d, HP_PS_OBJID))) & d->mask;
    pk_obj_seen(&d->m, v, d->mask);
    return v;
}

static inline uint64_t get_ref(hp_pack_decoder *d, int si, pk_align *a, uint64_t base)
{
    uint64_t code = get_var(d, si), delta;
    if (code == 0)
        return 0;
    if (pk_aligned(a))
        delta = pk_delta_value(code - 1, get_u8(d, HP_PS_LOW));
    else if (code == 1)
        delta = pk_delta_value(get_var(d, si), get_u8(d, HP_PS_LOW));
    else
        delta = (uint64_t)pk_unzigzag(code - 2);
    pk_align_learn(a, delta);
    return (base + delta) & d->mask;
}

static inline uint32_t get_ser(hp_pack_decoder *d, int si, int ctx)
{
    uint64_t code = get_var(d, si);
    uint32_t v = d->m.ser[ctx] + (uint32_t)pk_unzigzag(code);
    if (code > 0xFFFFFFFFu)
        pk_dec_set_bad(d, BAD_VALUE, si, "serial delta out of range");
    d->m.ser[ctx] = v;
    return v;
}

/* ---- output: units are built in d->buf, which goes to the writer (or,
 * inside a held heap record, to the held record) between units ---- */

int pk_dec_flush(hp_pack_decoder *d);
int pk_dec_payload_out(hp_pack_decoder *d, const uint8_t *p, uint64_t n);

/* Restored bytes written elsewhere than d->buf (a held record's head). */
static inline void counted(hp_pack_decoder *d, uint64_t n)
{
    d->pos += n;
    d->block_out += n;
}

/* Room for n more bytes of the current unit in buf; NULL out of memory. */
static inline uint8_t *wroom(hp_pack_decoder *d, size_t n)
{
    if (d->cap - d->len < n) {
        size_t cap = d->cap ? d->cap : FLUSH_AT + (64 << 10);
        uint8_t *p;
        while (cap - d->len < n)
            cap *= 2;
        p = d->alloc.realloc_fn(d->buf, cap);
        if (!p)
            return NULL;
        d->buf = p;
        d->cap = cap;
    }
    return d->buf + d->len;
}

static inline void wdone(hp_pack_decoder *d, size_t n)
{
    d->len += n;
    d->pos += n;
    d->block_out += n;
}

static inline void put_idb(uint8_t *p, uint64_t v, int ids)
{
    if (ids == 8)
        hp_put64(p, v);
    else
        hp_put32(p, (uint32_t)v);
}

/* ---- errors: each returns the code after filling d->error ---- */

hp_code pk_dec_fail(hp_pack_decoder *d, hp_error *err);
hp_code pk_dec_corrupt(hp_pack_decoder *d, const char *why);
hp_code pk_dec_nomem(hp_pack_decoder *d);
hp_code pk_dec_checked(hp_pack_decoder *d);

static inline void begin_unit(hp_pack_decoder *d, int tag, int sub)
{
    d->unit_off = d->pos;
    d->unit_tag = tag;
    d->unit_sub = sub;
}

/* ---- units (hp_pack_decode_units.c) ---- */

hp_code pk_dec_record(hp_pack_decoder *d, unsigned op);
hp_code pk_dec_subrecord(hp_pack_decoder *d, unsigned op);
hp_code pk_dec_close_held(hp_pack_decoder *d);
hp_code pk_dec_resume(hp_pack_decoder *d); /* a payload continued from the last block */

#endif
