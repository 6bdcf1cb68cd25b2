/* Pack decoder, block by block: the public entry points.  A block's
 * 2-byte element streams are unshuffled and its sorted groups (UTF8 and
 * LOAD_CLASS records) read up front, then its ops are restored one unit at
 * a time (hp_pack_decode_units.c), then the block is checked to have used
 * every stream and group exactly.
 *
 * Streams are untrusted: every read is bounded, a stream that runs out or
 * holds a bad value fails the block with HP_E_CORRUPT, and output is bounded
 * by the lengths HPROF itself allows (u4 records). */
#include "hp_pack_dec.h"

/* ---- the sorted groups, read when a block starts ---- */

static int group_alloc(hp_pack_decoder *d, pk_group *g, size_t n, int strings)
{
    const hp_alloc *a = &d->alloc;
    if (n > g->cap) {
        size_t c = g->cap ? g->cap : 256;
        while (c < n)
            c *= 2;
/* On failure the old block stays in g (freed with the group), not leaked. */
#define GROW(f)                                                    \
        do {                                                       \
            void *grown = a->realloc_fn(g->f, c * sizeof *g->f);   \
            if (!grown)                                            \
                return -1;                                         \
            g->f = grown;                                          \
        } while (0)
        GROW(rank);
        GROW(seen);
        GROW(id);
        GROW(u);
        if (strings) {
            GROW(text);
        } else {
            GROW(id2);
            GROW(u2);
        }
#undef GROW
        g->cap = c;
    }
    g->n = n;
    g->next = 0;
    if (n)
        memset(g->seen, 0, n);
    return 0;
}

/* The permutation: the rank of each record, as byte planes.  0 or -1. */
static int read_ranks(hp_pack_decoder *d, int si, pk_group *g)
{
    const size_t n = g->n;
    const int w = pk_rank_width(n);
    const uint8_t *p = get_bytes(d, si, n * (size_t)w);
    size_t i;
    int plane;
    if (!p)
        return -1;
    for (i = 0; i < n; i++)
        g->rank[i] = 0;
    for (plane = 0; plane < w; plane++, p += n)
        for (i = 0; i < n; i++)
            g->rank[i] = g->rank[i] << 8 | p[i];
    for (i = 0; i < n; i++) {
        if (g->rank[i] >= n || g->seen[g->rank[i]]) {
            pk_dec_set_bad(d, BAD_VALUE, si, "the permutation of a sorted group is not one");
            return -1;
        }
        g->seen[g->rank[i]] = 1;
    }
    return 0;
}

/* How many records a group stream holds (0 when empty). */
static size_t group_size(hp_pack_decoder *d, int si)
{
    uint64_t n;
    if (avail(d, si) == 0)
        return 0;
    n = get_var(d, si);
    if (n == 0 || n > avail(d, si) || n > 0xFFFFFFFFu) {
        pk_dec_set_bad(d, BAD_VALUE, si, "sorted group size beyond its stream");
        return 0;
    }
    return (size_t)n;
}

static hp_code read_strings(hp_pack_decoder *d)
{
    pk_group *g = &d->strs;
    pk_in *t = &d->in[HP_PS_TEXT];
    size_t n = group_size(d, HP_PS_STRINGS), i;
    uint64_t prev = 0;
    const uint8_t *low;
    if (group_alloc(d, g, n, 1) < 0)
        return pk_dec_nomem(d);
    for (i = 0; i < n; i++)
        g->id[i] = get_var(d, HP_PS_STRINGS);
    low = get_bytes(d, HP_PS_STRINGS, n);
    for (i = 0; i < n && low; i++) {
        prev = (prev + (g->id[i] << 3 | (low[i] & 7u))) & d->mask;
        g->id[i] = prev;
    }
    for (i = 0; i < n && !d->bad; i++) {
        uint64_t esc = get_var(d, HP_PS_STRINGS);
        size_t left = (size_t)(t->end - t->p);
        g->text[i] = t->p;
        if (esc == 0) {
            const uint8_t *nul = memchr(t->p, 0, left);
            if (!nul) {
                pk_dec_set_bad(d, BAD_SHORT, HP_PS_TEXT, pk_ran_out[HP_PS_TEXT]);
                break;
            }
            g->u[i] = (uint32_t)(nul - t->p);
            t->p = nul + 1;
        } else if (esc - 1 > left || esc - 1 > 0xFFFFFFFFu) {
            pk_dec_set_bad(d, BAD_SHORT, HP_PS_TEXT, pk_ran_out[HP_PS_TEXT]);
        } else {
            g->u[i] = (uint32_t)(esc - 1);
            t->p += esc - 1;
        }
    }
    if (!d->bad)
        read_ranks(d, HP_PS_RANK, g);
    return pk_dec_checked(d);
}

static hp_code read_classes(hp_pack_decoder *d)
{
    pk_group *g = &d->lcs;
    const int si = HP_PS_CLASSES;
    size_t n = group_size(d, si), i;
    uint64_t prev = 0;
    uint32_t serial = 0;
    const uint8_t *low;
    if (group_alloc(d, g, n, 0) < 0)
        return pk_dec_nomem(d);
    for (i = 0; i < n; i++)
        g->u[i] = serial += get_u32(d, si);
    for (i = 0; i < n; i++)
        g->id[i] = get_var(d, si);
    for (i = 0; i < n; i++)
        g->u2[i] = get_u32(d, si);
    for (i = 0; i < n; i++)
        g->id2[i] = get_var(d, si);
    low = get_bytes(d, si, 2 * n);
    for (i = 0; i < n && low; i++)
        g->id[i] = prev = (prev + pk_delta_value(g->id[i], low[i])) & d->mask;
    for (i = 0, prev = 0; i < n && low; i++)
        g->id2[i] = prev = (prev + pk_delta_value(g->id2[i], low[n + i])) & d->mask;
    if (!d->bad)
        read_ranks(d, HP_PS_RANK, g);
    return pk_dec_checked(d);
}

static void group_free(const hp_alloc *a, pk_group *g)
{
    a->free_fn(g->rank);
    a->free_fn(g->seen);
    a->free_fn(g->id);
    a->free_fn(g->id2);
    a->free_fn(g->u);
    a->free_fn(g->u2);
    a->free_fn((void *)g->text);
}

/* ---- blocks ---- */

/* Restores a stream of 2-byte elements from its two byte planes. */
static hp_code unshuffle(hp_pack_decoder *d, int si)
{
    hp_buf *b = &d->planes[si == HP_PS_PRIM + HP_T_CHAR - HP_T_BOOLEAN ? 0 : 1];
    const uint8_t *p = d->in[si].p;
    size_t len = (size_t)(d->in[si].end - p), n = len / 2, i;
    if (len % 2)
        return pk_dec_corrupt(d, "a 2-byte element stream of odd length");
    b->len = 0;
    if (hp_buf_reserve(b, len) < 0)
        return pk_dec_nomem(d);
    for (i = 0; i < n; i++) {
        b->data[2 * i] = p[i];
        b->data[2 * i + 1] = p[n + i];
    }
    d->in[si].p = b->data;
    d->in[si].end = b->data + len;
    return HP_OK;
}

static hp_code write_header(hp_pack_decoder *d)
{
    uint8_t h[HP_HEADER_MAX];
    size_t n = hp_header_write(h, d->header.version, d->id_size, d->header.timestamp);
    d->header_done = 1;
    d->pos += n;
    return hp_writer_put(&d->out, h, n) < 0 ? pk_dec_nomem(d) : HP_OK;
}

static hp_code run_block(hp_pack_decoder *d)
{
    pk_in *ops = &d->in[HP_PS_OP];
    hp_code rc = HP_OK;
    if (d->cont && (rc = pk_dec_resume(d)) != HP_OK)
        return rc;
    while (!d->cont) {
        if (d->in_heap && !d->heap_deferred && d->heap_left == 0) {
            d->in_heap = 0; /* the record is complete */
            continue;
        }
        if (ops->p >= ops->end)
            break;
        if (d->in_heap) {
            unsigned op = *ops->p++;
            if (op == 0 && d->heap_deferred)
                rc = pk_dec_close_held(d);
            else
                rc = pk_dec_subrecord(d, op);
        } else {
            rc = pk_dec_record(d, *ops->p++);
        }
        if (rc != HP_OK)
            return rc;
        if (d->len >= FLUSH_AT && pk_dec_flush(d) < 0)
            return pk_dec_nomem(d);
    }
    return HP_OK;
}

hp_code hp_pack_decoder_block(hp_pack_decoder *d, const uint8_t *const data[HP_PACK_NSTREAMS],
                              const size_t len[HP_PACK_NSTREAMS], uint64_t expected_out, const hp_sink *out,
                              hp_error *err)
{
    hp_code rc;
    int i;
    if (d->failed) {
        *err = d->error;
        return d->error.code;
    }
    if (d->finished)
        return hp_fail(err, HP_E_USAGE, d->pos, -1, 0, 0, 0, "block after finish");
    d->out.sink = out;
    for (i = 0; i < HP_PACK_NSTREAMS; i++) {
        d->in[i].p = len[i] ? data[i] : pk_zeros;
        d->in[i].end = d->in[i].p + len[i];
    }
    d->block_out = 0;
    begin_unit(d, -1, 0);
    for (i = 0; i < HP_PACK_NSTREAMS; i++)
        if (pk_shuffled(i) && len[i] && (rc = unshuffle(d, i)) != HP_OK)
            return pk_dec_fail(d, err);
    if (!d->header_done && (rc = write_header(d)) != HP_OK)
        return pk_dec_fail(d, err);
    rc = read_strings(d);
    if (rc == HP_OK)
        rc = read_classes(d);
    if (rc == HP_OK)
        rc = run_block(d);
    if (rc == HP_OK && (d->strs.next != d->strs.n || d->lcs.next != d->lcs.n))
        rc = pk_dec_corrupt(d, "a sorted group holds more records than the block");
    for (i = 0; rc == HP_OK && (size_t)i < d->nrows; i++)
        if (d->rows[i].next != d->rows[i].count)
            rc = pk_dec_corrupt(d, "a row group holds more rows than the block has instances");
    d->nrows = 0;
    if (rc == HP_OK) {
        for (i = 0; i < HP_PACK_NSTREAMS; i++)
            if (d->in[i].p != d->in[i].end) {
                begin_unit(d, -1, 0);
                rc = pk_dec_corrupt(d, pk_left_over[i]);
                break;
            }
    }
    if (rc == HP_OK && expected_out != UINT64_MAX && d->block_out != expected_out)
        rc = hp_fail(&d->error, HP_E_CORRUPT, d->pos, -1, 0, expected_out, d->block_out,
                     "block restored to a different length than recorded");
    if (rc == HP_OK && (pk_dec_flush(d) < 0 || hp_writer_flush(&d->out) < 0))
        rc = pk_dec_nomem(d);
    for (i = 0; i < HP_PACK_NSTREAMS; i++)
        d->in[i].p = d->in[i].end = NULL;
    if (rc != HP_OK)
        return pk_dec_fail(d, err);
    d->blocks++;
    return HP_OK;
}

hp_code hp_pack_decoder_finish(hp_pack_decoder *d, const hp_sink *out, hp_error *err)
{
    if (d->failed) {
        *err = d->error;
        return d->error.code;
    }
    if (d->finished)
        return hp_fail(err, HP_E_USAGE, d->pos, -1, 0, 0, 0, "finish after finish");
    d->out.sink = out;
    if (!d->header_done && write_header(d) != HP_OK)
        return pk_dec_fail(d, err);
    if (hp_writer_flush(&d->out) < 0) {
        pk_dec_nomem(d);
        return pk_dec_fail(d, err);
    }
    if (d->in_heap && !d->heap_deferred && d->heap_left == 0)
        d->in_heap = 0;
    if (d->cont || d->in_heap) {
        hp_fail(&d->error, HP_E_TRUNCATED, d->unit_off, d->unit_tag, d->cont && d->unit_sub, 0, 0,
                "the pack ends inside a record");
        return pk_dec_fail(d, err);
    }
    d->finished = 1;
    return HP_OK;
}

hp_pack_decoder *hp_pack_decoder_new(const hp_alloc *alloc, const hp_header *header, const hp_pack_policy *policy)
{
    hp_pack_decoder *d;
    if (!alloc)
        alloc = &hp_default_alloc;
    if (!header || header->version < 0 || header->version > 3 || (header->id_size != 4 && header->id_size != 8))
        return NULL;
    d = alloc->malloc_fn(sizeof *d);
    if (!d)
        return NULL;
    memset(d, 0, sizeof *d);
    d->alloc = *alloc;
    d->header = *header;
    d->id_size = header->id_size;
    d->mask = pk_id_mask(header->id_size);
    if (policy)
        d->pol = *policy;
    pk_model_init(&d->m, alloc);
    hp_heaprec_init(&d->held, alloc, 0, 0);
    hp_buf_init(&d->planes[0], alloc);
    hp_buf_init(&d->planes[1], alloc);
    if (hp_writer_init(&d->out, alloc, FLUSH_AT) < 0) {
        hp_pack_decoder_free(d);
        return NULL;
    }
    return d;
}

void hp_pack_decoder_free(hp_pack_decoder *d)
{
    if (!d)
        return;
    pk_model_free(&d->m);
    d->alloc.free_fn(d->rows);
    group_free(&d->alloc, &d->strs);
    group_free(&d->alloc, &d->lcs);
    hp_buf_free(&d->planes[0]);
    hp_buf_free(&d->planes[1]);
    hp_heaprec_free(&d->held);
    hp_writer_free(&d->out, &d->alloc);
    d->alloc.free_fn(d->buf);
    d->alloc.free_fn(d);
}

void hp_pack_decoder_hold_limit(hp_pack_decoder *d, size_t max_record)
{
    hp_heaprec_free(&d->held);
    hp_heaprec_init(&d->held, &d->alloc, max_record, 0);
}

uint64_t hp_pack_decoder_bytes_out(const hp_pack_decoder *d) { return d->pos; }
uint64_t hp_pack_decoder_blocks(const hp_pack_decoder *d) { return d->blocks; }
void hp_pack_decoder_unfinished(const hp_pack_decoder *d, hp_unfinished *out) { hp_dump_track_unfinished(&d->dumps, d->pos, out); }
