/* Pack decoder, the bottom layer: reading streams (the slow paths of the
 * inline readers in hp_pack_dec.h), buffered output to the writer or the
 * held record, and errors.  Calls nothing above it. */
#include "hp_pack_dec.h"

#define PK_RAN_OUT(n) "stream '" n "' ended early",
#define PK_BAD_VARINT(n) "invalid varint in stream '" n "'",
#define PK_LEFT_OVER(n) "stream '" n "' has bytes left over at the end of the block",
const char *const pk_ran_out[HP_PACK_NSTREAMS] = { PK_STREAM_LIST(PK_RAN_OUT) };
const char *const pk_bad_varint[HP_PACK_NSTREAMS] = { PK_STREAM_LIST(PK_BAD_VARINT) };
const char *const pk_left_over[HP_PACK_NSTREAMS] = { PK_STREAM_LIST(PK_LEFT_OVER) };
const uint8_t pk_zeros[64 << 10];

/* ---- reading streams ---- */

void pk_dec_set_bad(hp_pack_decoder *d, int kind, int si, const char *why)
{
    if (d->bad)
        return;
    d->bad = kind;
    d->bad_stream = si;
    d->bad_why = why;
}

uint64_t pk_dec_var_slow(hp_pack_decoder *d, int si)
{
    pk_in *s = &d->in[si];
    uint64_t v = 0;
    unsigned shift;
    for (shift = 0; shift < 64; shift += 7) {
        uint8_t b;
        if (s->p >= s->end) {
            pk_dec_set_bad(d, BAD_SHORT, si, pk_ran_out[si]);
            return 0;
        }
        b = *s->p++;
        if (shift == 63 && b > 1)
            break;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80))
            return v;
    }
    pk_dec_set_bad(d, BAD_VARINT, si, pk_bad_varint[si]);
    return 0;
}

/* ---- output ---- */

static int write_out(hp_pack_decoder *d, const uint8_t *p, size_t n)
{
    if (n == 0)
        return 0;
    return d->holding ? hp_heaprec_put(&d->held, p, n, &d->out) : hp_writer_put(&d->out, p, n);
}

/* Buffered output to the writer (or the held record); -1 when it refused. */
int pk_dec_flush(hp_pack_decoder *d)
{
    int rc;
    if (d->pending) { /* the held record takes what it was told of before the batch's announcement */
        uint64_t batch = d->pending;
        d->pending = 0;
        rc = write_out(d, d->buf, d->pending_from) < 0 || hp_heaprec_sub(&d->held, batch, &d->out) < 0 ||
                     write_out(d, d->buf + d->pending_from, d->len - d->pending_from) < 0
                 ? -1
                 : 0;
    } else {
        rc = write_out(d, d->buf, d->len);
    }
    d->len = 0;
    return rc;
}

/* Writes n payload bytes (zeros when p is NULL): large runs go out directly. */
int pk_dec_payload_out(hp_pack_decoder *d, const uint8_t *p, uint64_t n)
{
    if (n < DIRECT_MIN) {
        uint8_t *q = wroom(d, (size_t)n);
        if (!q)
            return -1;
        if (p)
            memcpy(q, p, (size_t)n);
        else
            memset(q, 0, (size_t)n);
        wdone(d, (size_t)n);
        return 0;
    }
    if (pk_dec_flush(d) < 0)
        return -1;
    counted(d, n);
    if (p)
        return write_out(d, p, (size_t)n);
    return d->holding ? hp_heaprec_zeros(&d->held, n, &d->out) : hp_writer_zeros(&d->out, n);
}

/* ---- errors ---- */

hp_code pk_dec_fail(hp_pack_decoder *d, hp_error *err)
{
    d->failed = 1;
    *err = d->error;
    return d->error.code;
}

hp_code pk_dec_corrupt(hp_pack_decoder *d, const char *why)
{
    return hp_fail(&d->error, HP_E_CORRUPT, d->unit_off, d->unit_tag, d->unit_sub, 0, 0, why);
}

hp_code pk_dec_nomem(hp_pack_decoder *d)
{
    return hp_fail(&d->error, HP_E_NOMEM, d->unit_off, d->unit_tag, d->unit_sub, 0, 0,
                   "out of memory, or the output sink refused the bytes");
}

/* The unit's status after reading its streams. */
hp_code pk_dec_checked(hp_pack_decoder *d)
{
    if (!d->bad)
        return HP_OK;
    if (!d->bad_why)
        return pk_dec_nomem(d);
    return pk_dec_corrupt(d, d->bad_why);
}
