/* Pack decoder, unit by unit (the middle layer, called by hp_pack_decode.c):
 * the mirror of hp_pack_encode.c.  Each op names a record or sub-record kind,
 * whose fields are read from their streams in the order the encoder wrote
 * them, against the same model; the unit is built whole in d->buf, so
 * nothing half-built reaches the sink.  Payloads may continue in the next
 * block (docs/format.md §8). */
#include "hp_pack_dec.h"

/* At least the longest root or heap info sub-record (1 + 2 ids + 8). */
#define SHORT_SUBRECORD_MAX 64

/* A class reference: its id (added to the table when new). */
static uint64_t get_class(hp_pack_decoder *d, int64_t *index)
{
    uint64_t k = get_var(d, HP_PS_CLASS);
    uint64_t id;
    if (k > 0) {
        if (k > d->m.classes.n) {
            pk_dec_set_bad(d, BAD_VALUE, HP_PS_CLASS, "class index beyond the class table");
            *index = -1;
            return 0;
        }
        *index = (int64_t)k - 1;
        return d->m.classes.v[k - 1].id;
    }
    id = get_id(d, HP_PS_CLASSRAW, PK_CTX_CLASSRAW);
    if (pk_class_find(&d->m.classes, id) >= 0) /* the encoder would have used its index */
        pk_dec_set_bad(d, BAD_VALUE, HP_PS_CLASSRAW, "class id already in the class table");
    *index = pk_class_add(&d->m.classes, id);
    if (*index == -1)
        pk_dec_set_bad(d, BAD_VALUE, -1, NULL); /* out of memory, reported as such */
    return id;
}

/* ---- payloads: they may continue in the next block ---- */

/* Copies up to `left` bytes from stream si; what is missing continues in
 * the next block (the block must end here). */
static hp_code copy_payload(hp_pack_decoder *d, int kind, int si, uint64_t left)
{
    size_t have = avail(d, si);
    size_t take = (uint64_t)have < left ? have : (size_t)left;
    if (pk_dec_payload_out(d, d->in[si].p, take) < 0)
        return pk_dec_nomem(d);
    d->in[si].p += take;
    left -= take;
    d->cont = left ? kind : CONT_NONE;
    d->cont_stream = si;
    d->cont_left = left;
    return HP_OK;
}

/* Decodes up to `left` object array elements; the rest continues. */
static hp_code aref_payload(hp_pack_decoder *d, uint64_t left)
{
    const int ids = d->id_size;
    uint64_t base = d->aref_base;
    pk_in *s = &d->in[HP_PS_AREF];
    while (left && s->p < s->end) {
        size_t n = (size_t)(left < 4096 ? left : 4096), i;
        uint8_t *q = wroom(d, n * (size_t)ids);
        if (!q)
            return pk_dec_nomem(d);
        for (i = 0; i < n && s->p < s->end; i++, q += ids) {
            uint64_t v = get_ref(d, HP_PS_AREF, &d->m.align[PK_ALIGN_AREF], base);
            put_idb(q, v, ids);
            if (v)
                base = v;
        }
        if (d->bad)
            return pk_dec_checked(d);
        wdone(d, i * (size_t)ids);
        left -= i;
        if (d->len >= FLUSH_AT && pk_dec_flush(d) < 0)
            return pk_dec_nomem(d);
    }
    d->aref_base = base;
    d->cont = left ? CONT_AREF : CONT_NONE;
    d->cont_left = left;
    return HP_OK;
}

hp_code pk_dec_resume(hp_pack_decoder *d)
{
    if (d->cont == CONT_AREF)
        return aref_payload(d, d->cont_left);
    return copy_payload(d, d->cont, d->cont_stream, d->cont_left);
}

/* ---- top-level records ---- */

/* Writes a record head; returns where its body goes (room for `body` bytes). */
static uint8_t *record_head(hp_pack_decoder *d, unsigned tag, uint32_t time, uint32_t length, size_t body)
{
    uint8_t *q = wroom(d, 9 + body);
    if (!q)
        return NULL;
    q[0] = (uint8_t)tag;
    hp_put32(q + 1, time);
    hp_put32(q + 5, length);
    return q + 9;
}

static hp_code raw_record(hp_pack_decoder *d)
{
    unsigned tag = get_u8(d, HP_PS_OP);
    uint32_t time = get_ser(d, HP_PS_TIME, PK_SER_TIME);
    uint32_t len = get_u32(d, HP_PS_LEN);
    hp_code rc;
    d->unit_tag = (int)tag;
    if ((rc = pk_dec_checked(d)) != HP_OK)
        return rc;
    if (!record_head(d, tag, time, len, 0))
        return pk_dec_nomem(d);
    wdone(d, 9);
    return copy_payload(d, CONT_RAW, HP_PS_RAW, len);
}

static hp_code utf8_record(hp_pack_decoder *d, uint32_t time)
{
    const int ids = d->id_size;
    pk_group *g = &d->strs;
    uint32_t r, tlen;
    uint8_t *q;
    if (g->next >= g->n)
        return pk_dec_corrupt(d, "more STRING records than stream 'strings' holds");
    r = g->rank[g->next++];
    tlen = g->u[r];
    if (tlen > 0xFFFFFFFFu - (uint32_t)ids)
        return pk_dec_corrupt(d, "STRING longer than a record can be");
    q = record_head(d, HP_TAG_UTF8, time, (uint32_t)ids + tlen, (size_t)ids + tlen);
    if (!q)
        return pk_dec_nomem(d);
    put_idb(q, g->id[r], ids);
    memcpy(q + ids, g->text[r], tlen);
    wdone(d, 9 + (size_t)ids + tlen);
    return HP_OK;
}

static hp_code load_class_record(hp_pack_decoder *d, uint32_t time)
{
    const int ids = d->id_size;
    pk_group *g = &d->lcs;
    uint8_t *q = record_head(d, HP_TAG_LOAD_CLASS, time, 8 + 2 * (uint32_t)ids, 8 + 2 * (size_t)ids);
    uint32_t r;
    if (!q)
        return pk_dec_nomem(d);
    if (g->next >= g->n)
        return pk_dec_corrupt(d, "more LOAD_CLASS records than stream 'classes' holds");
    r = g->rank[g->next++];
    hp_put32(q, g->u[r]);
    put_idb(q + 4, g->id[r], ids);
    hp_put32(q + 4 + ids, g->u2[r]);
    put_idb(q + 8 + ids, g->id2[r], ids);
    if (pk_class_add(&d->m.classes, g->id[r]) == -1)
        return pk_dec_nomem(d);
    wdone(d, 9 + 8 + 2 * (size_t)ids);
    return HP_OK;
}

static hp_code frame_record(hp_pack_decoder *d, uint32_t time)
{
    const int ids = d->id_size;
    uint8_t *q = record_head(d, HP_TAG_FRAME, time, 8 + 4 * (uint32_t)ids, 8 + 4 * (size_t)ids);
    if (!q)
        return pk_dec_nomem(d);
    put_idb(q, get_id(d, HP_PS_FRAME, PK_CTX_FRAME_ID), ids);
    put_idb(q + ids, get_id(d, HP_PS_NAME, PK_CTX_FRAME_NAME), ids);
    put_idb(q + 2 * ids, get_id(d, HP_PS_NAME, PK_CTX_FRAME_SIG), ids);
    put_idb(q + 3 * ids, get_id(d, HP_PS_NAME, PK_CTX_FRAME_SRC), ids);
    hp_put32(q + 4 * ids, get_ser(d, HP_PS_SERIAL, PK_SER_FRAME_CLASS));
    hp_put32(q + 4 * ids + 4, get_ser(d, HP_PS_SERIAL, PK_SER_FRAME_LINE));
    wdone(d, 9 + 8 + 4 * (size_t)ids);
    return pk_dec_checked(d);
}

static hp_code trace_record(hp_pack_decoder *d, uint32_t time)
{
    const int ids = d->id_size;
    uint32_t serial = get_ser(d, HP_PS_SERIAL, PK_SER_TRACE);
    uint32_t thread = get_ser(d, HP_PS_SERIAL, PK_SER_TRACE_THREAD);
    uint64_t n = get_var(d, HP_PS_LEN), i;
    uint8_t *q;
    hp_code rc;
    if ((rc = pk_dec_checked(d)) != HP_OK)
        return rc;
    if (n > avail(d, HP_PS_FRAME) || 12 + n * (uint64_t)ids > HP_WHOLE_MAX)
        return pk_dec_corrupt(d, "STACK_TRACE frame count beyond its stream");
    q = record_head(d, HP_TAG_TRACE, time, (uint32_t)(12 + n * (uint64_t)ids), (size_t)(12 + n * (uint64_t)ids));
    if (!q)
        return pk_dec_nomem(d);
    hp_put32(q, serial);
    hp_put32(q + 4, thread);
    hp_put32(q + 8, (uint32_t)n);
    for (i = 0; i < n; i++)
        put_idb(q + 12 + i * (uint64_t)ids, get_id(d, HP_PS_FRAME, PK_CTX_TRACE_FRAME), ids);
    wdone(d, 9 + 12 + (size_t)n * (size_t)ids);
    return pk_dec_checked(d);
}

static hp_code open_heap(hp_pack_decoder *d, unsigned tag, uint32_t time)
{
    uint64_t v = get_var(d, HP_PS_LEN);
    hp_code rc;
    if ((rc = pk_dec_checked(d)) != HP_OK)
        return rc;
    if (v > 0x100000000u)
        return pk_dec_corrupt(d, "heap record length out of range");
    if (v == 0) { /* deferred: held until its END op */
        if (pk_dec_flush(d) < 0)
            return pk_dec_nomem(d);
        hp_heaprec_open(&d->held, (uint8_t)tag, time);
        d->holding = 1;
        d->held_body = 0;
        d->heap_deferred = 1;
        counted(d, 9);
    } else {
        d->heap_deferred = 0;
        d->heap_left = v - 1;
        if (!record_head(d, tag, time, (uint32_t)(v - 1), 0))
            return pk_dec_nomem(d);
        wdone(d, 9);
    }
    d->in_heap = 1;
    return HP_OK;
}

hp_code pk_dec_close_held(hp_pack_decoder *d)
{
    int rc = pk_dec_flush(d);
    d->holding = 0;
    d->in_heap = 0;
    if (rc < 0 || hp_heaprec_close(&d->held, &d->out) < 0)
        return pk_dec_nomem(d);
    return HP_OK;
}

hp_code pk_dec_record(hp_pack_decoder *d, unsigned op)
{
    uint32_t time;
    begin_unit(d, (int)op, 0);
    if (op == 0)
        return raw_record(d);
    time = get_ser(d, HP_PS_TIME, PK_SER_TIME);
    switch (op) {
    case HP_TAG_UTF8: return utf8_record(d, time);
    case HP_TAG_LOAD_CLASS: return load_class_record(d, time);
    case HP_TAG_FRAME: return frame_record(d, time);
    case HP_TAG_TRACE: return trace_record(d, time);
    case HP_TAG_HEAP_DUMP: case HP_TAG_HEAP_DUMP_SEGMENT: return open_heap(d, op, time);
    case HP_TAG_HEAP_DUMP_END:
        if (!record_head(d, op, time, 0, 0))
            return pk_dec_nomem(d);
        wdone(d, 9);
        return pk_dec_checked(d);
    default:
        return pk_dec_corrupt(d, "unknown record op");
    }
}

/* ---- heap sub-records ---- */

/* Whether the held record's batch of sub-records can take `n` more bytes. */
static int batch_takes(hp_pack_decoder *d, uint64_t n)
{
    if (!d->pending)
        d->batch_room = hp_heaprec_room(&d->held);
    return n <= d->batch_room - d->pending;
}

/* Accounts a sub-record of `n` bytes against its heap record, or announces
 * it to the held record. */
static inline hp_code fits(hp_pack_decoder *d, uint64_t n)
{
    if (d->heap_deferred) {
        int rc;
        /* the encoder holds only records shorter than a u4, and those of
         * at most PK_HELD_MAX bytes unless the pack is app_only */
        if (n > (d->pol.app_only ? 0xFFFFFFFFu : PK_HELD_MAX) - d->held_body)
            return pk_dec_corrupt(d, d->pol.app_only ? "held heap record longer than 4 GiB"
                                                     : "held heap record longer than 1 MiB (only app_only packs hold "
                                                       "more)");
        d->held_body += n;
        if (batch_takes(d, n)) {
            if (!d->pending)
                d->pending_from = d->len;
            d->pending += n;
            return HP_OK;
        }
        /* nothing of this sub-record is in buf yet (pk_dec_subrecord saw to it) */
        rc = pk_dec_flush(d) < 0 ? -1 : hp_heaprec_sub(&d->held, n, &d->out);
        return rc < 0 ? pk_dec_nomem(d) : HP_OK;
    }
    if (n > d->heap_left)
        return hp_fail(&d->error, HP_E_CORRUPT, d->unit_off, d->unit_tag, 1, n, d->heap_left,
                       "sub-record runs past the end of its heap record");
    d->heap_left -= n;
    return HP_OK;
}

static hp_code root(hp_pack_decoder *d, unsigned tag)
{
    const int ids = d->id_size;
    size_t n = 1 + (size_t)ids;
    uint8_t *q = wroom(d, 1 + 2 * (size_t)ids + 8);
    hp_code rc;
    if (!q)
        return pk_dec_nomem(d);
    q[0] = (uint8_t)tag;
    put_idb(q + 1, get_id(d, HP_PS_ROOT, PK_CTX_ROOT), ids);
    switch (tag) {
    case HP_SUB_ROOT_JNI_GLOBAL:
        put_idb(q + n, get_id(d, HP_PS_ROOTX, PK_CTX_JNI), ids);
        n += (size_t)ids;
        break;
    case HP_SUB_ROOT_JNI_LOCAL: case HP_SUB_ROOT_JAVA_FRAME: case HP_SUB_ROOT_THREAD_OBJECT:
    case HP_SUB_ROOT_JNI_MONITOR:
        hp_put32(q + n, get_u32(d, HP_PS_ROOTX));
        hp_put32(q + n + 4, get_u32(d, HP_PS_ROOTX) - 1);
        n += 8;
        break;
    case HP_SUB_ROOT_NATIVE_STACK: case HP_SUB_ROOT_THREAD_BLOCK:
        hp_put32(q + n, get_u32(d, HP_PS_ROOTX));
        n += 4;
        break;
    default:
        break;
    }
    if ((rc = pk_dec_checked(d)) != HP_OK || (rc = fits(d, n)) != HP_OK)
        return rc;
    wdone(d, n);
    return HP_OK;
}

static hp_code heap_info(hp_pack_decoder *d)
{
    const int ids = d->id_size;
    uint8_t *q = wroom(d, 5 + (size_t)ids);
    uint32_t heap;
    uint64_t name;
    hp_code rc;
    if (!q)
        return pk_dec_nomem(d);
    heap = get_u32(d, HP_PS_OP);
    name = (pk_heap_name_base(&d->m, heap) + (uint64_t)pk_unzigzag(get_var(d, HP_PS_NAME))) & d->mask;
    if ((rc = pk_dec_checked(d)) != HP_OK || (rc = fits(d, 5 + (size_t)ids)) != HP_OK)
        return rc;
    pk_heap_name_seen(&d->m, heap, name);
    q[0] = HP_SUB_HEAP_DUMP_INFO;
    hp_put32(q + 1, heap);
    put_idb(q + 5, name, ids);
    wdone(d, 5 + (size_t)ids);
    return HP_OK;
}

/* One (type, value) of a class dump table at q; returns bytes written, or 0. */
static size_t class_value(hp_pack_decoder *d, uint8_t *q, uint64_t class_id)
{
    const int ids = d->id_size;
    unsigned type = get_u8(d, HP_PS_CDTYPE);
    int size = hp_type_size((int)type, ids);
    q[0] = (uint8_t)type;
    if (size == 0) {
        pk_dec_set_bad(d, BAD_VALUE, HP_PS_CDTYPE, "invalid basic type in stream 'cdtype'");
        return 0;
    }
    if (type == HP_T_OBJECT)
        put_idb(q + 1, get_ref(d, HP_PS_CDSREF, &d->m.align[PK_ALIGN_CDSREF], class_id), ids);
    else {
        const uint8_t *v = get_bytes(d, HP_PS_CDVAL, (size_t)size);
        memcpy(q + 1, v ? v : pk_zeros, (size_t)size);
    }
    return 1 + (size_t)size;
}

static hp_code class_dump(hp_pack_decoder *d)
{
    const int ids = d->id_size;
    const size_t fixed = 1 + 7 * (size_t)ids + 8;
    size_t start = d->len, n, i, k, fields_at;
    uint64_t id, super;
    int64_t idx, super_idx;
    uint8_t *q;
    hp_code rc;

    if (!(q = wroom(d, fixed + 2)))
        return pk_dec_nomem(d);
    id = get_obj_id(d);
    d->m.steps.last = pk_shape(HP_SUB_CLASS_DUMP, 0, 0);
    idx = pk_class_add(&d->m.classes, id);
    if (idx == -1)
        return pk_dec_nomem(d);
    q[0] = HP_SUB_CLASS_DUMP;
    put_idb(q + 1, id, ids);
    hp_put32(q + 1 + ids, get_u32(d, HP_PS_STACK));
    super = get_class(d, &super_idx);
    put_idb(q + 5 + ids, super, ids);
    for (k = 0; k < 5; k++)
        put_idb(q + 5 + (2 + k) * (size_t)ids, get_id(d, HP_PS_CDREF, PK_CTX_CD_REF + (int)k), ids);
    hp_put32(q + 5 + 7 * (size_t)ids, get_u32(d, HP_PS_CDUMP));
    n = get_var(d, HP_PS_CDUMP);
    if (n > 0xFFFF || n > avail(d, HP_PS_CDTYPE))
        return (rc = pk_dec_checked(d)) != HP_OK ? rc : pk_dec_corrupt(d, "class dump table longer than its streams");
    hp_put16(q + fixed, (uint16_t)n);
    k = fixed + 2;
    if (!(q = wroom(d, k + n * (3 + 8) + 2)))
        return pk_dec_nomem(d);
    q = d->buf + start; /* wroom may move buf */
    for (i = 0; i < n && !d->bad; i++) {
        hp_put16(q + k, (uint16_t)get_u32(d, HP_PS_CDUMP));
        k += 2 + class_value(d, q + k + 2, id);
    }
    n = get_var(d, HP_PS_CDUMP);
    if (n > 0xFFFF || n > avail(d, HP_PS_CDTYPE))
        return (rc = pk_dec_checked(d)) != HP_OK ? rc : pk_dec_corrupt(d, "class dump table longer than its streams");
    if (!wroom(d, k + 2 + n * ((size_t)ids + 9) + 2))
        return pk_dec_nomem(d);
    q = d->buf + start;
    hp_put16(q + k, (uint16_t)n);
    k += 2;
    for (i = 0; i < n && !d->bad; i++) {
        put_idb(q + k, get_id(d, HP_PS_NAME, PK_CTX_FIELD_NAME), ids);
        k += (size_t)ids + class_value(d, q + k + ids, id);
    }
    n = get_var(d, HP_PS_CDUMP);
    if (n > 0xFFFF || n > avail(d, HP_PS_CDTYPE))
        return (rc = pk_dec_checked(d)) != HP_OK ? rc : pk_dec_corrupt(d, "class dump table longer than its streams");
    if (!wroom(d, k + 2 + n * ((size_t)ids + 1)))
        return pk_dec_nomem(d);
    q = d->buf + start;
    hp_put16(q + k, (uint16_t)n);
    k += 2;
    fields_at = k;
    for (i = 0; i < n && !d->bad; i++) {
        unsigned type;
        put_idb(q + k, get_id(d, HP_PS_NAME, PK_CTX_FIELD_NAME), ids);
        type = get_u8(d, HP_PS_CDTYPE);
        if (hp_type_size((int)type, ids) == 0)
            pk_dec_set_bad(d, BAD_VALUE, HP_PS_CDTYPE, "invalid basic type in stream 'cdtype'");
        q[k + ids] = (uint8_t)type;
        k += (size_t)ids + 1;
    }
    if ((rc = pk_dec_checked(d)) != HP_OK || (rc = fits(d, k)) != HP_OK)
        return rc;
    if (idx >= 0 && pk_class_define(&d->m.classes, (size_t)idx, super, q + fields_at + ids, n, (size_t)ids + 1) < 0)
        return pk_dec_nomem(d);
    (void)super_idx;
    wdone(d, k);
    return HP_OK;
}

/* The row group instance fields of class `c` come from: the current one,
 * or the next of the block (its row count from ROWS, its planes from IPRIM).
 * NULL when the streams say otherwise (d->bad) or memory runs out. */
static pk_row_group *row_group(hp_pack_decoder *d, pk_class *c, int *nomem)
{
    pk_row_group *g;
    uint32_t count;
    *nomem = 0;
    if (pk_rows_open(c, d->blocks))
        return &d->rows[c->rows];
    count = get_u32(d, HP_PS_ROWS);
    if (d->bad)
        return NULL;
    if (count == 0 || (uint64_t)count * c->prim > avail(d, HP_PS_IPRIM)) {
        pk_dec_set_bad(d, BAD_VALUE, HP_PS_ROWS, "row group larger than stream 'iprim'");
        return NULL;
    }
    if (d->nrows == d->rows_cap) {
        size_t cap = d->rows_cap ? 2 * d->rows_cap : 64;
        void *p = d->alloc.realloc_fn(d->rows, cap * sizeof *d->rows);
        if (!p) {
            *nomem = 1;
            return NULL;
        }
        d->rows = p;
        d->rows_cap = cap;
    }
    pk_rows_start(c, d->blocks, d->nrows++);
    g = &d->rows[c->rows];
    g->width = c->prim;
    g->count = count;
    g->next = 0;
    g->planes = get_bytes(d, HP_PS_IPRIM, (size_t)count * c->prim);
    return g;
}

static hp_code instance(hp_pack_decoder *d)
{
    const int ids = d->id_size;
    const size_t head = 1 + 2 * (size_t)ids + 8;
    uint64_t id = get_obj_id(d), cls, isize;
    uint32_t stack = get_u32(d, HP_PS_STACK), size = 0;
    int64_t k;
    const uint32_t *prog = NULL;
    size_t nsteps = 0, i;
    pk_row_group *group = NULL;
    const uint8_t *row = NULL;
    uint8_t *q;
    hp_code rc;

    cls = get_class(d, &k);
    d->m.steps.last = pk_shape(HP_SUB_INSTANCE_DUMP, cls, 0);
    isize = get_var(d, HP_PS_ISIZE);
    if ((rc = pk_dec_checked(d)) != HP_OK)
        return rc;
    if (isize == 0) {
        int oom = 0;
        if (k >= 0)
            prog = pk_class_program(&d->m.classes, (size_t)k, ids, &nsteps, &size, &oom);
        if (oom)
            return pk_dec_nomem(d);
        if (!prog || head + size > HP_WHOLE_MAX)
            return pk_dec_corrupt(d, "INSTANCE_DUMP coded by a class layout that is not known");
    } else if (isize - 1 > 0xFFFFFFFFu) {
        return pk_dec_corrupt(d, "INSTANCE_DUMP byte count out of range");
    } else {
        size = (uint32_t)(isize - 1);
    }
    if ((rc = fits(d, head + size)) != HP_OK)
        return rc;
    if (!(q = wroom(d, head + (prog ? size : 0))))
        return pk_dec_nomem(d);
    q[0] = HP_SUB_INSTANCE_DUMP;
    put_idb(q + 1, id, ids);
    hp_put32(q + 1 + ids, stack);
    put_idb(q + 5 + ids, cls, ids);
    hp_put32(q + 5 + 2 * ids, size);
    if (!prog) {
        wdone(d, head);
        return copy_payload(d, CONT_IRAW, HP_PS_IRAW, size);
    }
    if (d->m.classes.v[k].prim) {
        int oom;
        group = row_group(d, &d->m.classes.v[k], &oom);
        if (oom)
            return pk_dec_nomem(d);
        if (group && group->next == group->count)
            return pk_dec_corrupt(d, "more instances of a class than its row group holds");
        if ((rc = pk_dec_checked(d)) != HP_OK)
            return rc;
        row = group->planes + group->next++;
    }
    q += head;
    for (i = 0; i < nsteps; i++) {
        uint32_t step = prog[i], b;
        if (step == PK_STEP_REF) {
            put_idb(q, get_ref(d, HP_PS_IREF, &d->m.align[PK_ALIGN_IREF], id), ids);
            q += ids;
        } else {
            for (b = 0; b < step; b++, row += group->count)
                *q++ = *row;
        }
    }
    if ((rc = pk_dec_checked(d)) != HP_OK)
        return rc;
    wdone(d, head + size);
    return HP_OK;
}

/* A constant array: its one stored element, repeated. */
static hp_code fill(hp_pack_decoder *d, int si, size_t size, uint64_t total)
{
    const uint8_t *one = get_bytes(d, si, size);
    uint8_t pattern[4096];
    size_t i, chunk;
    if (!one)
        return pk_dec_checked(d);
    if (total > HP_WHOLE_MAX)
        return pk_dec_corrupt(d, "constant array longer than the encoder makes them");
    for (i = 0; i < size && one[i] == 0; i++)
        ;
    if (i == size) /* pk_zeros: the fast path */
        return pk_dec_payload_out(d, NULL, total) < 0 ? pk_dec_nomem(d) : HP_OK;
    for (i = 0; i < sizeof pattern; i += size)
        memcpy(pattern + i, one, size);
    for (chunk = sizeof pattern; total; total -= chunk) {
        uint8_t *q;
        if (chunk > total)
            chunk = (size_t)total;
        if (!(q = wroom(d, chunk)))
            return pk_dec_nomem(d);
        memcpy(q, pattern, chunk);
        wdone(d, chunk);
    }
    return HP_OK;
}

/* A text array (PK_ATYPE_TEXT): the prefix it shares with a recent one,
 * then its other bytes from prim.byte (the low bytes of chars). */
static hp_code text_array(hp_pack_decoder *d, unsigned type, size_t n)
{
    const size_t width = type == HP_T_CHAR ? 2 : 1;
    uint64_t shared = get_var(d, HP_PS_SHARED);
    unsigned back = shared ? get_u8(d, HP_PS_SHARED) : 0, slot = pk_text_slot(&d->m.text, back);
    const uint8_t *rest, *prefix = d->m.text.text[slot];
    uint8_t *q;
    size_t i;
    hp_code rc;
    if (!d->bad && shared && (back >= d->m.text.n || shared > n || shared > d->m.text.len[slot]))
        pk_dec_set_bad(d, BAD_VALUE, HP_PS_SHARED, "text prefix longer than the text array it names");
    rest = d->bad ? NULL : get_bytes(d, HP_PS_PRIM + HP_T_BYTE - HP_T_BOOLEAN, n - (size_t)shared);
    if ((rc = pk_dec_checked(d)) != HP_OK)
        return rc;
    if (!(q = wroom(d, n * width)))
        return pk_dec_nomem(d);
    if (width == 1) {
        memcpy(q, prefix, (size_t)shared);
        if (n > shared)
            memcpy(q + shared, rest, n - (size_t)shared);
    } else {
        for (i = 0; i < shared; i++) {
            q[2 * i] = 0;
            q[2 * i + 1] = prefix[i];
        }
        for (; i < n; i++) {
            q[2 * i] = 0;
            q[2 * i + 1] = rest[i - shared];
        }
    }
    pk_text_learn(&d->m.text, back, (size_t)shared, rest, n);
    wdone(d, n * width);
    return HP_OK;
}

static hp_code array(hp_pack_decoder *d, unsigned tag)
{
    const int ids = d->id_size;
    uint64_t id = get_obj_id(d), cls = 0;
    uint32_t stack = get_u32(d, HP_PS_STACK);
    uint32_t count = get_u32(d, HP_PS_COUNT);
    unsigned type = HP_T_OBJECT;
    int constant = 0, is_text = 0, stream = -1;
    size_t head;
    uint64_t payload;
    int64_t k;
    uint8_t *q;
    hp_code rc;

    if (tag == HP_SUB_OBJ_ARRAY_DUMP) {
        cls = get_class(d, &k);
        d->m.steps.last = pk_shape(HP_SUB_OBJ_ARRAY_DUMP, cls, count);
        head = 1 + 2 * (size_t)ids + 8;
        payload = (uint64_t)count * (uint64_t)ids;
    } else {
        type = get_u8(d, HP_PS_ATYPE);
        if (type & PK_ATYPE_CONSTANT && tag == HP_SUB_PRIM_ARRAY_DUMP && count >= 2) {
            type &= ~(unsigned)PK_ATYPE_CONSTANT;
            constant = 1;
        } else if (type & PK_ATYPE_NOISE && tag == HP_SUB_PRIM_ARRAY_DUMP) {
            type &= ~(unsigned)PK_ATYPE_NOISE;
            stream = HP_PS_NOISE;
        } else if (type & PK_ATYPE_TEXT && tag == HP_SUB_PRIM_ARRAY_DUMP && count >= 1) {
            type &= ~(unsigned)PK_ATYPE_TEXT;
            is_text = 1;
            if (type != HP_T_BYTE && type != HP_T_CHAR)
                pk_dec_set_bad(d, BAD_VALUE, HP_PS_ATYPE, "text flag on an array that is not byte[] or char[]");
        }
        if (type < HP_T_BOOLEAN || type > HP_T_LONG)
            pk_dec_set_bad(d, BAD_VALUE, HP_PS_ATYPE, "invalid element type in stream 'atype'");
        d->m.steps.last = pk_shape(tag, type, count);
        head = 1 + (size_t)ids + 9;
        payload = tag == HP_SUB_PRIM_ARRAY_DUMP ? (uint64_t)count * (uint64_t)hp_type_size((int)type, ids) : 0;
    }
    if (is_text && head + payload > HP_WHOLE_MAX && !d->bad)
        pk_dec_set_bad(d, BAD_VALUE, HP_PS_ATYPE, "text array longer than the encoder makes them");
    if ((rc = pk_dec_checked(d)) != HP_OK || (rc = fits(d, head + payload)) != HP_OK)
        return rc;
    if (!(q = wroom(d, head)))
        return pk_dec_nomem(d);
    q[0] = (uint8_t)tag;
    put_idb(q + 1, id, ids);
    hp_put32(q + 1 + ids, stack);
    hp_put32(q + 5 + ids, count);
    if (tag == HP_SUB_OBJ_ARRAY_DUMP)
        put_idb(q + 9 + ids, cls, ids);
    else
        q[9 + ids] = (uint8_t)type;
    wdone(d, head);
    if (tag == HP_SUB_OBJ_ARRAY_DUMP) {
        d->aref_base = id;
        return aref_payload(d, count);
    }
    if (is_text)
        return text_array(d, type, count);
    if (constant)
        return fill(d, HP_PS_PRIM + (int)type - HP_T_BOOLEAN, (size_t)hp_type_size((int)type, ids), payload);
    if (stream < 0 && d->pol.strip_types >> type & 1u && tag == HP_SUB_PRIM_ARRAY_DUMP)
        return pk_dec_payload_out(d, NULL, payload) < 0 ? pk_dec_nomem(d) : HP_OK;
    return copy_payload(d, CONT_PRIM, stream >= 0 ? stream : HP_PS_PRIM + (int)type - HP_T_BOOLEAN, payload);
}

hp_code pk_dec_subrecord(hp_pack_decoder *d, unsigned op)
{
    begin_unit(d, (int)op, 1);
    /* Roots, heap info and class dumps are built in buf before fits()
     * accounts them, so a flush there would lose them: flush now unless the
     * batch surely takes them (a class dump may be long: always). */
    if (d->holding && op != HP_SUB_INSTANCE_DUMP && op != HP_SUB_OBJ_ARRAY_DUMP && op != HP_SUB_PRIM_ARRAY_DUMP &&
        op != HP_SUB_PRIM_ARRAY_NODATA && (op == HP_SUB_CLASS_DUMP || !batch_takes(d, SHORT_SUBRECORD_MAX)) &&
        pk_dec_flush(d) < 0)
        return pk_dec_nomem(d);
    switch (op) {
    case HP_SUB_ROOT_UNKNOWN: case HP_SUB_ROOT_JNI_GLOBAL: case HP_SUB_ROOT_JNI_LOCAL: case HP_SUB_ROOT_JAVA_FRAME:
    case HP_SUB_ROOT_NATIVE_STACK: case HP_SUB_ROOT_STICKY_CLASS: case HP_SUB_ROOT_THREAD_BLOCK:
    case HP_SUB_ROOT_MONITOR_USED: case HP_SUB_ROOT_THREAD_OBJECT: case HP_SUB_ROOT_INTERNED_STRING:
    case HP_SUB_ROOT_FINALIZING: case HP_SUB_ROOT_DEBUGGER: case HP_SUB_ROOT_REFERENCE_CLEANUP:
    case HP_SUB_ROOT_VM_INTERNAL: case HP_SUB_ROOT_JNI_MONITOR: case HP_SUB_UNREACHABLE:
        return root(d, op);
    case HP_SUB_HEAP_DUMP_INFO:
        return heap_info(d);
    case HP_SUB_CLASS_DUMP:
        return class_dump(d);
    case HP_SUB_INSTANCE_DUMP:
        return instance(d);
    case HP_SUB_OBJ_ARRAY_DUMP: case HP_SUB_PRIM_ARRAY_DUMP: case HP_SUB_PRIM_ARRAY_NODATA:
        return array(d, op);
    default:
        return pk_dec_corrupt(d, "unknown sub-record op");
    }
}
