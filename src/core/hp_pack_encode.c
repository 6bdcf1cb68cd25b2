/* Pack encoder: hp_parser events in, blocks of streams out.
 *
 * Every record and sub-record is taken apart field by field into the
 * streams of hp_pack.h (docs/format.md §6-7 give the layout of each kind);
 * hp_pack_decode.c puts them back together in the same order.  Payloads
 * (array elements, opaque bodies) are appended as they arrive, so a 2 GB
 * array never sits in memory (hp_pack_encode_block.c cuts blocks). */
#include "hp_pack_enc.h"

/* A class reference: its table index + 1, or 0 and the id when new.
 * Returns the index, or -1 when the table is full. */
static int64_t put_class(hp_pack_encoder *e, uint64_t id)
{
    int64_t k = pk_class_find(&e->m.classes, id);
    if (k >= 0) {
        put_var(e, HP_PS_CLASS, (uint64_t)k + 1);
        return k;
    }
    put_var(e, HP_PS_CLASS, 0);
    put_id(e, HP_PS_CLASSRAW, PK_CTX_CLASSRAW, id);
    k = pk_class_add(&e->m.classes, id);
    if (k == -1)
        e->oom = 1;
    return k < 0 ? -1 : k;
}

/* ---- top-level records ---- */

static void put_head(hp_pack_encoder *e, unsigned op)
{
    put_u8(e, HP_PS_OP, op);
    put_ser(e, HP_PS_TIME, PK_SER_TIME, e->rec.time);
}

/* A record kept as opaque bytes: op 0, its tag, time, length, body. */
static void put_raw_head(hp_pack_encoder *e)
{
    put_u8(e, HP_PS_OP, 0);
    put_u8(e, HP_PS_OP, e->rec.tag);
    put_ser(e, HP_PS_TIME, PK_SER_TIME, e->rec.time);
    put_var(e, HP_PS_LEN, e->rec.length);
    out(e, 9);
    pk_enc_start_payload(e, PAY_RAW, HP_PS_RAW, 1, e->rec.length);
}

/* UTF8 and LOAD_CLASS records come in hash order: they are held and coded
 * sorted when the block is cut, with the permutation that restores their
 * order.  `total` counts them as if coded (a fixed formula, so cut points
 * stay independent of the input's chunking). */
static void code_utf8(hp_pack_encoder *e, const uint8_t *b, size_t len)
{
    const size_t text = len - (size_t)e->id_size;
    const uint8_t *t = b + e->id_size;
    pk_str *s;
    put_head(e, HP_TAG_UTF8);
    if (pk_enc_grow_array(e, (void **)&e->strs, &e->strs_cap, e->nstrs + 1, sizeof *e->strs) < 0)
        return;
    if (e->texts.cap - e->texts.len < text && !pk_enc_grow(e, &e->texts, text))
        return;
    s = &e->strs[e->nstrs];
    s->sid = hp_read_id(b, e->id_size);
    s->idx = (uint32_t)e->nstrs++;
    s->off = (uint32_t)e->texts.len;
    s->len = (uint32_t)text;
    s->nul = text && memchr(t, 0, text) != NULL;
    if (text)
        memcpy(e->texts.data + e->texts.len, t, text);
    e->texts.len += text;
    e->total += text + 1 + (size_t)e->id_size;
}

static void code_load_class(hp_pack_encoder *e, const uint8_t *b)
{
    const int ids = e->id_size;
    uint64_t cls = hp_read_id(b + 4, ids);
    pk_lc *c;
    put_head(e, HP_TAG_LOAD_CLASS);
    if (pk_enc_grow_array(e, (void **)&e->lcs, &e->lcs_cap, e->nlcs + 1, sizeof *e->lcs) < 0)
        return;
    c = &e->lcs[e->nlcs];
    c->serial = hp_be32(b);
    c->cls = cls;
    c->stack = hp_be32(b + 4 + ids);
    c->name = hp_read_id(b + 8 + ids, ids);
    c->idx = (uint32_t)e->nlcs++;
    e->total += 8 + 2 * (size_t)ids;
    if (pk_class_add(&e->m.classes, cls) == -1)
        e->oom = 1;
}

static void code_frame(hp_pack_encoder *e, const uint8_t *b)
{
    const int ids = e->id_size;
    put_head(e, HP_TAG_FRAME);
    put_id(e, HP_PS_FRAME, PK_CTX_FRAME_ID, hp_read_id(b, ids));
    put_id(e, HP_PS_NAME, PK_CTX_FRAME_NAME, hp_read_id(b + ids, ids));
    put_id(e, HP_PS_NAME, PK_CTX_FRAME_SIG, hp_read_id(b + 2 * ids, ids));
    put_id(e, HP_PS_NAME, PK_CTX_FRAME_SRC, hp_read_id(b + 3 * ids, ids));
    put_ser(e, HP_PS_SERIAL, PK_SER_FRAME_CLASS, hp_be32(b + 4 * ids));
    put_ser(e, HP_PS_SERIAL, PK_SER_FRAME_LINE, hp_be32(b + 4 * ids + 4));
}

static void code_trace(hp_pack_encoder *e, const uint8_t *b, uint32_t n)
{
    const int ids = e->id_size;
    uint32_t i;
    put_head(e, HP_TAG_TRACE);
    put_ser(e, HP_PS_SERIAL, PK_SER_TRACE, hp_be32(b));
    put_ser(e, HP_PS_SERIAL, PK_SER_TRACE_THREAD, hp_be32(b + 4));
    put_var(e, HP_PS_LEN, n);
    for (i = 0; i < n; i++)
        put_id(e, HP_PS_FRAME, PK_CTX_TRACE_FRAME, hp_read_id(b + 12 + (size_t)i * ids, ids));
}

/* A whole record body of at most HP_WHOLE_MAX bytes (NULL when empty):
 * coded field by field when it has the layout its tag promises, else raw. */
static hp_code code_record(hp_pack_encoder *e, const uint8_t *b, uint64_t off)
{
    const uint32_t len = e->rec.length;
    const size_t ids = (size_t)e->id_size;
    int done = 1;
    switch (e->rec.tag) {
    case HP_TAG_UTF8:
        if (len >= ids)
            code_utf8(e, b, len);
        else
            done = 0;
        break;
    case HP_TAG_LOAD_CLASS:
        if (len == 8 + 2 * ids)
            code_load_class(e, b);
        else
            done = 0;
        break;
    case HP_TAG_FRAME:
        if (len == 8 + 4 * ids)
            code_frame(e, b);
        else
            done = 0;
        break;
    case HP_TAG_TRACE:
        if (len >= 12 && (len - 12) % ids == 0 && hp_be32(b + 8) == (len - 12) / ids)
            code_trace(e, b, hp_be32(b + 8));
        else
            done = 0;
        break;
    case HP_TAG_HEAP_DUMP_END:
        if (len == 0)
            put_head(e, HP_TAG_HEAP_DUMP_END);
        else
            done = 0;
        break;
    default:
        done = 0;
    }
    if (done) {
        out(e, 9 + (uint64_t)len);
        return HP_OK;
    }
    put_raw_head(e);
    return len ? pk_enc_payload(e, b, len, off) : HP_OK;
}

/* The head of the current heap record (op, time, and unless app_only
 * defers it, its length). */
static void open_heap_head(hp_pack_encoder *e)
{
    put_head(e, e->rec.tag);
    out(e, 9);
    e->heap_head_out = 1;
    if (e->heap_pending)
        return; /* app_only: the length is known at the end */
    if (e->rec.length <= PK_HELD_MAX) {
        /* Android's many small segments: an END op costs less than a
         * length, and the decoder holding 1 MiB is cheap */
        put_var(e, HP_PS_LEN, 0);
        e->heap_deferred = 1;
    } else {
        put_var(e, HP_PS_LEN, (uint64_t)e->rec.length + 1);
    }
}

static hp_code on_record(hp_pack_encoder *e, const hp_event *ev)
{
    hp_code rc = pk_enc_boundary(e, ev->offset);
    if (rc != HP_OK)
        return rc;
    e->rec = *ev->rec;
    e->pay_kind = PAY_NONE;
    if (hp_is_heap_tag(e->rec.tag)) {
        e->rec_mode = REC_HEAP;
        e->heap_pending = e->app_only;
        e->heap_head_out = e->heap_deferred = 0;
        e->heap_body = 0;
        e->info_len = 0;
        if (!e->heap_pending)
            open_heap_head(e);
        return HP_OK;
    }
    if (e->pol.drop_traces && (e->rec.tag == HP_TAG_TRACE || e->rec.tag == HP_TAG_FRAME)) {
        e->rec_mode = REC_SKIP;
        return HP_OK;
    }
    /* Only bodies the parser always delivers whole are coded by fields, so
     * the coding does not depend on how the input was chunked. */
    if (e->rec.length > HP_WHOLE_MAX) {
        e->rec_mode = REC_RAW;
        put_raw_head(e);
        return HP_OK;
    }
    e->rec_mode = REC_WAIT;
    if (e->rec.length == 0)
        return code_record(e, NULL, ev->offset + 9);
    return HP_OK;
}

static hp_code on_data(hp_pack_encoder *e, const hp_event *ev)
{
    switch (e->rec_mode) {
    case REC_WAIT:
        e->rec_mode = REC_RAW; /* the body was whole: nothing follows */
        return code_record(e, ev->data, ev->offset);
    case REC_RAW:
        return pk_enc_payload(e, ev->data, ev->len, ev->offset);
    default:
        return HP_OK;
    }
}

static hp_code on_record_end(hp_pack_encoder *e)
{
    if (e->rec_mode == REC_HEAP && e->heap_head_out) {
        if (e->heap_deferred)
            put_u8(e, HP_PS_OP, 0); /* END: the decoder held the record */
        else if (e->heap_pending)
            put_var(e, HP_PS_LEN, e->heap_body + 1);
    }
    e->rec_mode = REC_NONE;
    e->heap_pending = 0;
    e->pay_kind = PAY_NONE;
    return HP_OK;
}

/* ---- heap sub-records ---- */

static void code_root(hp_pack_encoder *e, const hp_subrecord *s)
{
    put_id(e, HP_PS_ROOT, PK_CTX_ROOT, s->id);
    switch (s->tag) {
    case HP_SUB_ROOT_JNI_GLOBAL:
        put_id(e, HP_PS_ROOTX, PK_CTX_JNI, s->ref);
        break;
    case HP_SUB_ROOT_JNI_LOCAL: case HP_SUB_ROOT_JAVA_FRAME: case HP_SUB_ROOT_THREAD_OBJECT:
    case HP_SUB_ROOT_JNI_MONITOR:
        put_var(e, HP_PS_ROOTX, s->serial);
        put_var(e, HP_PS_ROOTX, (uint32_t)(s->aux + 1)); /* frame -1 -> 0 */
        break;
    case HP_SUB_ROOT_NATIVE_STACK: case HP_SUB_ROOT_THREAD_BLOCK:
        put_var(e, HP_PS_ROOTX, s->serial);
        break;
    default:
        break;
    }
}

/* One (type, value) entry of a class dump table; returns its value size. */
static size_t code_value(hp_pack_encoder *e, int type, const uint8_t *v, uint64_t class_id)
{
    const int ids = e->id_size;
    put_u8(e, HP_PS_CDTYPE, (unsigned)type);
    if (type == HP_T_OBJECT) {
        put_ref(e, HP_PS_CDSREF, &e->m.align[PK_ALIGN_CDSREF], hp_read_id(v, ids), class_id);
        return (size_t)ids;
    }
    put_bytes(e, HP_PS_CDVAL, v, (size_t)hp_type_size(type, ids));
    return (size_t)hp_type_size(type, ids);
}

static void code_class_dump(hp_pack_encoder *e, const hp_subrecord *s, const uint8_t *d)
{
    const size_t ids = (size_t)e->id_size;
    hp_class_layout lay;
    const uint8_t *p;
    int64_t idx;
    size_t i, k;

    (void)hp_class_layout_decode(d, s->head_len, e->id_size, &lay); /* the parser checked the head */
    put_obj_id(e, s->id);
    e->m.steps.last = pk_shape(HP_SUB_CLASS_DUMP, 0, 0);
    idx = pk_class_add(&e->m.classes, s->id);
    if (idx == -1)
        e->oom = 1;
    put_var(e, HP_PS_STACK, s->serial);
    put_class(e, s->class_id);
    for (k = 0; k < 5; k++) /* loader, signers, protection domain, reserved x2 */
        put_id(e, HP_PS_CDREF, PK_CTX_CD_REF + (int)k, hp_read_id(d + 1 + (2 + k) * ids + 4, e->id_size));
    put_var(e, HP_PS_CDUMP, s->aux);
    p = d + lay.const_off + 2;
    put_var(e, HP_PS_CDUMP, lay.n_const);
    for (i = 0; i < lay.n_const; i++) {
        put_var(e, HP_PS_CDUMP, hp_be16(p));
        p += 3 + code_value(e, p[2], p + 3, s->id);
    }
    p = d + lay.statics_off + 2;
    put_var(e, HP_PS_CDUMP, lay.n_statics);
    for (i = 0; i < lay.n_statics; i++) {
        put_id(e, HP_PS_NAME, PK_CTX_FIELD_NAME, hp_read_id(p, e->id_size));
        p += ids + 1 + code_value(e, p[ids], p + ids + 1, s->id);
    }
    p = d + lay.fields_off + 2;
    put_var(e, HP_PS_CDUMP, lay.n_fields);
    for (i = 0; i < lay.n_fields; i++, p += ids + 1) {
        put_id(e, HP_PS_NAME, PK_CTX_FIELD_NAME, hp_read_id(p, e->id_size));
        put_u8(e, HP_PS_CDTYPE, p[ids]);
    }
    if (idx >= 0 && pk_class_define(&e->m.classes, (size_t)idx, s->class_id, d + lay.fields_off + 2 + ids,
                                    lay.n_fields, ids + 1) < 0)
        e->oom = 1;
}

/* Room for one more row in the block's row group of class c (a new group
 * when the class has none yet in this block, or rows of another width). */
static uint8_t *new_row(hp_pack_encoder *e, pk_class *c)
{
    pk_rows *r;
    if (!pk_rows_open(c, e->blocks)) {
        size_t old = e->rows_cap;
        if (pk_enc_grow_array(e, (void **)&e->rows, &e->rows_cap, e->nrows + 1, sizeof *e->rows) < 0)
            return NULL;
        if (e->rows_cap > old) /* the groups' buffers are reused from block to block */
            memset(e->rows + old, 0, (e->rows_cap - old) * sizeof *e->rows);
        pk_rows_start(c, e->blocks, e->nrows++);
        r = &e->rows[c->rows];
        r->width = c->prim;
        r->count = 0;
        r->bytes.len = 0;
    }
    r = &e->rows[c->rows];
    if (r->bytes.cap - r->bytes.len < c->prim && !pk_enc_grow(e, &r->bytes, c->prim))
        return NULL;
    r->count++;
    r->bytes.len += c->prim;
    e->total += c->prim;
    return r->bytes.data + r->bytes.len - c->prim;
}

/* Instance fields by the class's program: references to IREF (against the
 * instance's own id), primitive runs to a row of the class's row group. */
static void code_fields(hp_pack_encoder *e, size_t k, const uint32_t *prog, size_t n, const uint8_t *f,
                        uint64_t self)
{
    const int ids = e->id_size;
    uint8_t *row = NULL;
    size_t i;
    if (e->m.classes.v[k].prim && !(row = new_row(e, &e->m.classes.v[k])))
        return;
    for (i = 0; i < n; i++) {
        if (prog[i] == PK_STEP_REF) {
            put_ref(e, HP_PS_IREF, &e->m.align[PK_ALIGN_IREF], hp_read_id(f, ids), self);
            f += ids;
        } else {
            memcpy(row, f, prog[i]);
            row += prog[i];
            f += prog[i];
        }
    }
}

static int non_app_heap(uint32_t heap) { return heap == 'Z' || heap == 'I'; }

/* Whether a whole primitive array's bytes look random (compressed images,
 * encrypted or random buffers, random numbers): about as many distinct byte
 * values as uniform noise would show, and none much more frequent.  Such
 * bytes go to the NOISE stream, which is stored: no time is spent failing to
 * compress them, on either side. */
static int noise(const hp_subrecord *s, const uint8_t *d)
{
    uint32_t count[256] = { 0 }, most = 0, distinct = 0;
    const uint8_t *p = d + s->head_len;
    size_t n = (size_t)s->payload_len, i;
    double miss = 1.0, f = 255.0 / 256.0; /* (255/256)^n: a value never drawn */
    if (n < PK_NOISE_MIN || s->length > HP_WHOLE_MAX)
        return 0;
    for (i = 0; i < n; i++)
        count[p[i]]++;
    for (i = 0; i < 256; i++) {
        most = count[i] > most ? count[i] : most;
        distinct += count[i] != 0;
    }
    for (i = n; i; i >>= 1, f *= f)
        if (i & 1)
            miss *= f;
    return (uint64_t)most * 256 <= 2 * (uint64_t)n + 2048 && distinct >= 0.85 * 256.0 * (1.0 - miss);
}

/* Whether a primitive array has at least two elements, all equal.  Only
 * arrays the parser always delivers whole qualify (chunking invariance). */
static int constant(const hp_subrecord *s, const uint8_t *d, int id_size)
{
    size_t size = (size_t)hp_type_size(s->elem_type, id_size);
    const uint8_t *p = d + s->head_len;
    if (s->count < 2 || s->length > HP_WHOLE_MAX)
        return 0;
    return memcmp(p, p + size, (size_t)s->payload_len - size) == 0;
}

/* Whether a primitive array is coded as text: a byte[], or a char[] with
 * every char below 256 (Latin-1 strings: their low bytes then sit beside
 * the byte[] values of compact strings).  Only whole arrays qualify. */
static int text(const hp_subrecord *s, const uint8_t *d)
{
    const uint8_t *p = d + s->head_len;
    size_t i;
    if (s->count == 0 || s->length > HP_WHOLE_MAX)
        return 0;
    if (s->elem_type == HP_T_BYTE)
        return 1;
    if (s->elem_type != HP_T_CHAR)
        return 0;
    for (i = 0; i < (size_t)s->count; i++)
        if (p[2 * i])
            return 0;
    return 1;
}

/* A text array: the prefix it shares with a recent one (its length, and
 * if not 0 which one), then its other bytes in prim.byte. */
static void code_text(hp_pack_encoder *e, const hp_subrecord *s, const uint8_t *d)
{
    const int si = HP_PS_PRIM + HP_T_BYTE - HP_T_BOOLEAN;
    const uint8_t *p = d + s->head_len;
    const size_t n = (size_t)s->count;
    size_t shared, i;
    unsigned back;
    uint8_t *q = room(e, si, n);
    if (!q)
        return;
    if (s->elem_type == HP_T_CHAR)
        for (i = 0; i < n; i++)
            q[i] = p[2 * i + 1];
    else
        memcpy(q, p, n);
    shared = pk_text_shared(&e->m.text, q, n, &back);
    pk_text_learn(&e->m.text, back, shared, q + shared, n);
    put_var(e, HP_PS_SHARED, shared);
    if (shared)
        put_u8(e, HP_PS_SHARED, back);
    memmove(q, q + shared, n - shared);
    commit(e, si, n - shared);
}

static hp_code on_subrecord(hp_pack_encoder *e, const hp_event *ev)
{
    const hp_subrecord *s = ev->sub;
    const uint8_t *d = ev->data;
    const size_t ids = (size_t)e->id_size;
    hp_code rc = pk_enc_boundary(e, ev->offset);
    if (rc != HP_OK)
        return rc;

    e->pay_kind = PAY_NONE;
    if (e->app_only) {
        switch (s->tag) {
        case HP_SUB_INSTANCE_DUMP: case HP_SUB_OBJ_ARRAY_DUMP: case HP_SUB_PRIM_ARRAY_DUMP:
        case HP_SUB_PRIM_ARRAY_NODATA:
            if (non_app_heap(ev->heap_id)) {
                pk_enc_start_payload(e, PAY_SKIP, 0, 1, s->payload_len - (ev->len - s->head_len));
                return HP_OK;
            }
            break;
        case HP_SUB_HEAP_DUMP_INFO: /* written only if a kept sub-record follows */
            memcpy(e->info, d, s->head_len);
            e->info_len = s->head_len;
            return HP_OK;
        }
        if (!e->heap_head_out)
            open_heap_head(e);
        if (e->info_len) {
            put_u8(e, HP_PS_OP, HP_SUB_HEAP_DUMP_INFO);
            put_heap_info(e, hp_be32(e->info + 1), hp_read_id(e->info + 5, e->id_size));
            out(e, e->info_len);
            e->heap_body += e->info_len;
            e->info_len = 0;
        }
    }
    e->heap_body += s->length;
    put_u8(e, HP_PS_OP, s->tag);
    switch (s->tag) {
    case HP_SUB_HEAP_DUMP_INFO:
        put_heap_info(e, (uint32_t)s->aux, s->ref);
        break;
    case HP_SUB_CLASS_DUMP:
        code_class_dump(e, s, d);
        break;
    case HP_SUB_INSTANCE_DUMP: {
        int64_t k;
        const uint32_t *prog = NULL;
        size_t nsteps = 0;
        uint32_t size = 0;
        put_obj_id(e, s->id);
        put_var(e, HP_PS_STACK, s->serial);
        k = put_class(e, s->class_id);
        e->m.steps.last = pk_shape(HP_SUB_INSTANCE_DUMP, s->class_id, 0);
        if (k >= 0 && s->length <= HP_WHOLE_MAX) {
            int oom;
            prog = pk_class_program(&e->m.classes, (size_t)k, e->id_size, &nsteps, &size, &oom);
            if (oom)
                e->oom = 1;
        }
        if (prog && size == s->count) {
            put_var(e, HP_PS_ISIZE, 0);
            code_fields(e, (size_t)k, prog, nsteps, d + s->head_len, s->id);
            out(e, s->length);
            return HP_OK;
        }
        put_var(e, HP_PS_ISIZE, (uint64_t)s->count + 1);
        out(e, s->head_len);
        pk_enc_start_payload(e, PAY_IRAW, HP_PS_IRAW, 1, s->payload_len);
        break;
    }
    case HP_SUB_OBJ_ARRAY_DUMP:
        put_obj_id(e, s->id);
        put_var(e, HP_PS_STACK, s->serial);
        put_var(e, HP_PS_COUNT, s->count);
        put_class(e, s->class_id);
        e->m.steps.last = pk_shape(HP_SUB_OBJ_ARRAY_DUMP, s->class_id, s->count);
        out(e, s->head_len);
        e->aref_base = s->id;
        pk_enc_start_payload(e, PAY_AREF, HP_PS_AREF, ids, s->payload_len);
        break;
    case HP_SUB_PRIM_ARRAY_DUMP: case HP_SUB_PRIM_ARRAY_NODATA:
        put_obj_id(e, s->id);
        put_var(e, HP_PS_STACK, s->serial);
        put_var(e, HP_PS_COUNT, s->count);
        e->m.steps.last = pk_shape(s->tag, (uint64_t)s->elem_type, s->count);
        if (s->tag == HP_SUB_PRIM_ARRAY_DUMP && (e->pol.strip_types >> s->elem_type & 1u)) {
            put_u8(e, HP_PS_ATYPE, s->elem_type);
            out(e, s->length); /* restored as zeros */
            pk_enc_start_payload(e, PAY_ZERO, 0, 1, s->payload_len);
        } else if (s->tag == HP_SUB_PRIM_ARRAY_DUMP && constant(s, d, e->id_size)) {
            /* one element stands for all (zero-filled buffers, Arrays.fill) */
            size_t size = (size_t)hp_type_size(s->elem_type, e->id_size);
            put_u8(e, HP_PS_ATYPE, s->elem_type | PK_ATYPE_CONSTANT);
            put_bytes(e, HP_PS_PRIM + s->elem_type - HP_T_BOOLEAN, d + s->head_len, size);
            out(e, s->length);
            return HP_OK;
        } else if (s->tag == HP_SUB_PRIM_ARRAY_DUMP && noise(s, d)) {
            put_u8(e, HP_PS_ATYPE, s->elem_type | PK_ATYPE_NOISE);
            out(e, s->head_len);
            pk_enc_start_payload(e, PAY_PRIM, HP_PS_NOISE, (size_t)hp_type_size(s->elem_type, e->id_size), s->payload_len);
        } else if (s->tag == HP_SUB_PRIM_ARRAY_DUMP && text(s, d)) {
            put_u8(e, HP_PS_ATYPE, s->elem_type | PK_ATYPE_TEXT);
            code_text(e, s, d);
            out(e, s->length);
            return HP_OK;
        } else {
            put_u8(e, HP_PS_ATYPE, s->elem_type);
            out(e, s->head_len);
            pk_enc_start_payload(e, PAY_PRIM, HP_PS_PRIM + s->elem_type - HP_T_BOOLEAN,
                          (size_t)hp_type_size(s->elem_type, e->id_size), s->payload_len);
        }
        break;
    default:
        code_root(e, s);
        break;
    }
    if (s->tag != HP_SUB_INSTANCE_DUMP && s->tag != HP_SUB_OBJ_ARRAY_DUMP && s->tag != HP_SUB_PRIM_ARRAY_DUMP &&
        s->tag != HP_SUB_PRIM_ARRAY_NODATA)
        out(e, s->length);
    if (ev->len > s->head_len)
        return pk_enc_payload(e, d + s->head_len, ev->len - s->head_len, ev->offset + s->head_len);
    return HP_OK;
}

/* ---- driving the parser ---- */

static hp_code run(hp_pack_encoder *e)
{
    hp_event ev;
    hp_code rc;
    for (;;) {
        rc = hp_parser_next(e->parser, &ev, &e->error);
        if (rc != HP_OK)
            return rc;
        switch (ev.kind) {
        case HP_EV_NEED_INPUT:
            return HP_OK;
        case HP_EV_HEADER: {
            const hp_header *h = hp_parser_header(e->parser);
            e->id_size = h->id_size;
            e->app_only = e->pol.app_only && h->version == 3;
            e->bytes_out += h->length;
            e->cut_at = h->length;
            break;
        }
        case HP_EV_RECORD:
            rc = on_record(e, &ev);
            break;
        case HP_EV_DATA:
            rc = on_data(e, &ev);
            break;
        case HP_EV_SUBRECORD:
            rc = on_subrecord(e, &ev);
            break;
        case HP_EV_PAYLOAD:
            rc = pk_enc_payload(e, ev.data, ev.len, ev.offset);
            break;
        case HP_EV_RECORD_END:
            rc = on_record_end(e);
            break;
        case HP_EV_END: {
            uint64_t end = hp_parser_offset(e->parser);
            if (e->total > 0) {
                int r = pk_enc_cut(e, end);
                if (r < 0)
                    return pk_enc_cut_failed(e, r, end);
            }
            return HP_OK;
        }
        }
        if (rc == HP_OK && e->oom)
            rc = pk_enc_nomem(e, ev.offset);
        if (rc != HP_OK)
            return rc;
    }
}

static hp_code drive(hp_pack_encoder *e, const uint8_t *data, size_t len, int is_last, hp_pack_block_fn fn,
                     void *ctx, hp_error *err)
{
    hp_code rc;
    if (e->failed) {
        *err = e->error;
        return e->error.code;
    }
    if (e->finished)
        return hp_fail(err, HP_E_USAGE, e->bytes_in, -1, 0, 0, 0, "feed or finish after finish");
    e->fn = fn;
    e->ctx = ctx;
    hp_parser_feed(e->parser, data, len, is_last);
    rc = run(e);
    e->bytes_in += len;
    if (rc != HP_OK) {
        e->failed = 1;
        *err = e->error;
        return rc;
    }
    if (is_last)
        e->finished = 1;
    return HP_OK;
}

hp_code hp_pack_encoder_feed(hp_pack_encoder *e, const uint8_t *data, size_t len, hp_pack_block_fn fn, void *ctx,
                             hp_error *err)
{
    return drive(e, data, len, 0, fn, ctx, err);
}

hp_code hp_pack_encoder_finish(hp_pack_encoder *e, hp_pack_block_fn fn, void *ctx, hp_error *err)
{
    return drive(e, NULL, 0, 1, fn, ctx, err);
}

hp_pack_encoder *hp_pack_encoder_new(const hp_alloc *alloc, const hp_pack_policy *policy, size_t block_size)
{
    hp_pack_encoder *e;
    if (!alloc)
        alloc = &hp_default_alloc;
    e = alloc->malloc_fn(sizeof *e);
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    e->alloc = *alloc;
    if (policy)
        e->pol = *policy;
    e->pol.strip_types &= HP_PACK_STRIP_ALL;
    e->block_size = block_size == 0 ? HP_PACK_BLOCK_DEFAULT : block_size;
    if (e->block_size < HP_PACK_BLOCK_MIN)
        e->block_size = HP_PACK_BLOCK_MIN;
    if (e->block_size > HP_PACK_BLOCK_MAX)
        e->block_size = HP_PACK_BLOCK_MAX;
    pk_model_init(&e->m, alloc);
    e->parser = hp_parser_new(alloc, HP_PARSE_SUBRECORDS);
    if (!e->parser) {
        hp_pack_encoder_free(e);
        return NULL;
    }
    return e;
}

void hp_pack_encoder_free(hp_pack_encoder *e)
{
    size_t g;
    int i;
    if (!e)
        return;
    hp_parser_free(e->parser);
    for (i = 0; i < HP_PACK_NSTREAMS; i++)
        e->alloc.free_fn(e->s[i].data);
    e->alloc.free_fn(e->texts.data);
    e->alloc.free_fn(e->scratch.data);
    e->alloc.free_fn(e->strs);
    e->alloc.free_fn(e->lcs);
    e->alloc.free_fn(e->ranks);
    for (g = 0; g < e->rows_cap; g++)
        e->alloc.free_fn(e->rows[g].bytes.data);
    e->alloc.free_fn(e->rows);
    pk_model_free(&e->m);
    e->alloc.free_fn(e);
}

const hp_header *hp_pack_encoder_header(const hp_pack_encoder *e) { return hp_parser_header(e->parser); }
uint64_t hp_pack_encoder_bytes_in(const hp_pack_encoder *e) { return e->bytes_in; }
uint64_t hp_pack_encoder_bytes_out(const hp_pack_encoder *e) { return e->bytes_out; }
uint64_t hp_pack_encoder_blocks(const hp_pack_encoder *e) { return e->blocks; }
void hp_pack_encoder_unfinished(const hp_pack_encoder *e, hp_unfinished *out) { hp_parser_unfinished(e->parser, out); }
