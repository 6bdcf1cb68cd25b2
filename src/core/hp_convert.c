/* The converter: parser events in, HPROF bytes out.
 *
 * Deliberate differences from AOSP hprof-conv (checked against Debian's
 * 29.0.6; on the Android dumps we have, the output is otherwise identical):
 *  1. 0xC3 PRIMITIVE_ARRAY_NODATA becomes a PRIM_ARRAY_DUMP with count 0 and
 *     its serial kept.  hprof-conv zeroes bytes 5..8, the stack-trace serial,
 *     and keeps the count: its array claims elements that do not follow.
 *  2. app_only drops the 0xC3 of zygote/image heaps too (-z keeps them).
 *  3. A heap record whose converted body is empty (or that came empty) is
 *     not written; hprof-conv writes it with length 0 (-z leaves many), and
 *     VisualVM rejects those.
 *  4. Identifier size 8 works (hprof-conv hard-codes 4: "unexpected
 *     subtype"), so do heap records of 2 GiB and more (its ints go negative).
 *  5. Truncated or corrupt input is an hp_error with offset and tag;
 *     hprof-conv reads past a sub-record that overruns its record.
 *  6. to_standard = 0 keeps 1.0.3 (no hprof-conv equivalent); with app_only
 *     it also drops the HEAP_DUMP_INFOs that no kept sub-record follows.
 *  7. A heap record longer than max_record is streamed (hp_heaprec.h): the
 *     same bytes to a sink that can patch; to one that cannot, cut into
 *     records of at most max_record bytes (a longer sub-record in a record
 *     of its own), where hprof-conv holds it whole in memory.
 *  8. strip_types zeroes the elements of primitive arrays of those types,
 *     lengths kept (what Shark's strip-hprof does), so a dump can be shared.
 * Like hprof-conv, input that is not 1.0.3 is refused: a 1.0.2 file has
 * nothing to convert, a silent copy would hide a wrong input, and a caller
 * that wants "standard, whatever the input" can read the header and skip
 * the copy altogether.
 *
 * No per-byte work outside heap records: their output is a queue of pieces,
 * each a run of the caller's current chunk (adjacent records merge) or a
 * run of `lit`, our buffer for rewritten or carried bytes, and the queue
 * goes to the writer before each call returns.  A heap record's length is
 * known only at its end: its sub-records go to an hp_heaprec, which holds
 * it (copied once) up to max_record bytes, else streams it. */
#include "hp_convert.h"

#include <string.h>

#include "hp_heaprec.h"
#include "hp_parser.h"

#define QUEUE_MAX 4096            /* pieces before the queue is written out */
#define LIT_MAX ((size_t)1 << 18) /* literal bytes before the queue is written out */
#define OUT_CAP ((size_t)1 << 20) /* the writer's batch */

enum { PC_EXT, PC_LIT };

typedef struct piece {
    const uint8_t *ext; /* PC_EXT: bytes of the current chunk */
    size_t off;         /* PC_LIT: offset in lit */
    size_t len;
    int kind;
} piece;

enum { RUNNING, FINISHED, FAILED };

struct hp_converter {
    hp_alloc alloc;
    hp_convert_options opt;
    hp_parser *parser;
    int id_size;
    int state;
    hp_error error;

    uintptr_t in_lo, in_hi; /* the caller's current chunk */

    piece *q;
    size_t qn, qcap;
    hp_buf lit;
    hp_writer out;

    int in_heap;        /* inside a heap record: output goes to `heap` */
    hp_heaprec heap;
    int keep_payload;   /* PAYLOAD pieces of the current sub-record are kept */
    uint8_t info[16];   /* a HEAP_DUMP_INFO held until a kept sub-record needs it */
    size_t info_len;
};

static const uint8_t no_bytes[1];

hp_converter *hp_converter_new(const hp_alloc *alloc, const hp_convert_options *opts)
{
    hp_converter *c;
    if (!alloc)
        alloc = &hp_default_alloc;
    c = alloc->malloc_fn(sizeof *c);
    if (!c)
        return NULL;
    memset(c, 0, sizeof *c);
    c->alloc = *alloc;
    if (opts) {
        c->opt = *opts;
    } else {
        c->opt.to_standard = 1;
    }
    c->opt.strip_types &= 0xFF0u; /* types 4..11 */
    hp_buf_init(&c->lit, alloc);
    hp_heaprec_init(&c->heap, alloc, c->opt.max_record, 1);
    c->parser = hp_parser_new(alloc, HP_PARSE_SUBRECORDS);
    if (!c->parser || hp_writer_init(&c->out, alloc, OUT_CAP) < 0) {
        hp_converter_free(c);
        return NULL;
    }
    c->state = RUNNING;
    return c;
}

void hp_converter_free(hp_converter *c)
{
    if (!c)
        return;
    hp_parser_free(c->parser);
    hp_buf_free(&c->lit);
    hp_heaprec_free(&c->heap);
    hp_writer_free(&c->out, &c->alloc);
    c->alloc.free_fn(c->q);
    c->alloc.free_fn(c);
}

/* ---- the output queue, outside heap records: every function returns 0,
 * or -1 out of memory ---- */

static int push(hp_converter *c, int kind, const uint8_t *ext, size_t off, size_t len)
{
    piece *pc;
    if (c->qn == c->qcap) {
        size_t cap = c->qcap ? c->qcap * 2 : 256;
        piece *grown = c->alloc.realloc_fn(c->q, cap * sizeof *grown);
        if (!grown)
            return -1;
        c->q = grown;
        c->qcap = cap;
    }
    pc = &c->q[c->qn++];
    pc->kind = kind;
    pc->ext = ext;
    pc->off = off;
    pc->len = len;
    return 0;
}

/* Appends a copy of n bytes. */
static int put_lit(hp_converter *c, const uint8_t *d, size_t n)
{
    size_t off = c->lit.len;
    if (hp_buf_append(&c->lit, d, n) < 0)
        return -1;
    if (c->qn) {
        piece *last = &c->q[c->qn - 1];
        if (last->kind == PC_LIT && last->off + last->len == off) {
            last->len += n;
            return 0;
        }
    }
    return push(c, PC_LIT, NULL, off, n);
}

/* Appends n input bytes (n > 0): by reference when they lie in the caller's
 * chunk, else (the parser's carry, valid only until its next event) by copy. */
static inline int put_in(hp_converter *c, const uint8_t *d, size_t n)
{
    if ((uintptr_t)d - c->in_lo >= c->in_hi - c->in_lo)
        return put_lit(c, d, n);
    if (c->qn) {
        piece *last = &c->q[c->qn - 1];
        if (last->kind == PC_EXT && last->ext + last->len == d) {
            last->len += n;
            return 0;
        }
    }
    return push(c, PC_EXT, d, 0, n);
}

/* Empties the queue into the writer: after this no piece refers to the
 * chunk or to lit.  0, or -2 when the sink refused. */
static int settle(hp_converter *c)
{
    size_t i;
    for (i = 0; i < c->qn; i++) {
        const piece *pc = &c->q[i];
        if (hp_writer_put(&c->out, pc->kind == PC_EXT ? pc->ext : c->lit.data + pc->off, pc->len) < 0)
            return -2;
    }
    c->qn = 0;
    c->lit.len = 0;
    return 0;
}

/* ---- heap records: each output sub-record is announced, then written ----
 * (0, -1 out of memory, -2 the sink refused; hp_heaprec tells no apart) */

static int heap_sub(hp_converter *c, uint64_t len) { return hp_heaprec_sub(&c->heap, len, &c->out) < 0 ? -2 : 0; }
static int heap_put(hp_converter *c, const uint8_t *p, size_t n) { return hp_heaprec_put(&c->heap, p, n, &c->out) < 0 ? -2 : 0; }

/* One whole output sub-record. */
static int heap_unit(hp_converter *c, const uint8_t *p, size_t n) { return heap_sub(c, n) < 0 ? -2 : heap_put(c, p, n); }

static int open_heap(hp_converter *c, const hp_record *rec)
{
    if (settle(c) < 0) /* what came before goes first */
        return -2;
    hp_heaprec_open(&c->heap, rec->tag, rec->time);
    c->in_heap = 1;
    c->keep_payload = 0;
    c->info_len = 0;
    return 0;
}

/* The record is written (or its length patched); an empty one is not. */
static int close_heap(hp_converter *c)
{
    c->in_heap = 0;
    c->info_len = 0;
    return hp_heaprec_close(&c->heap, &c->out) < 0 ? -2 : 0;
}

static int non_app_heap(uint32_t heap_id) { return heap_id == 'Z' || heap_id == 'I'; }

/* One SUBRECORD event: its head is whole (sub-records without payload are
 * whole), payload pieces may follow as PAYLOAD events. */
static int on_subrecord(hp_converter *c, const hp_event *ev)
{
    const hp_subrecord *s = ev->sub;
    const int ids = c->id_size;
    uint8_t b[32];

    c->keep_payload = 0;
    switch (s->tag) {
    case HP_SUB_INSTANCE_DUMP: case HP_SUB_OBJ_ARRAY_DUMP: case HP_SUB_PRIM_ARRAY_DUMP:
        if (c->opt.app_only && non_app_heap(ev->heap_id))
            return 0;
        break;
    case HP_SUB_PRIM_ARRAY_NODATA:
        if (c->opt.app_only && non_app_heap(ev->heap_id))
            return 0;
        if (c->opt.to_standard) { /* an empty PRIM_ARRAY_DUMP: count 0, serial kept */
            memcpy(b, ev->data, s->head_len);
            b[0] = HP_SUB_PRIM_ARRAY_DUMP;
            hp_put32(b + 1 + ids + 4, 0);
            return heap_unit(c, b, s->head_len);
        }
        break;
    case HP_SUB_HEAP_DUMP_INFO:
        if (c->opt.to_standard)
            return 0;
        if (c->opt.app_only) { /* written only if a kept sub-record follows */
            memcpy(c->info, ev->data, s->head_len);
            c->info_len = s->head_len;
            return 0;
        }
        break;
    case HP_SUB_ROOT_INTERNED_STRING: case HP_SUB_ROOT_FINALIZING: case HP_SUB_ROOT_DEBUGGER:
    case HP_SUB_ROOT_REFERENCE_CLEANUP: case HP_SUB_ROOT_VM_INTERNAL: case HP_SUB_UNREACHABLE:
    case HP_SUB_ROOT_JNI_MONITOR:
        if (c->opt.to_standard) { /* ROOT_UNKNOWN with the same object; JNI_MONITOR loses 8 bytes */
            b[0] = HP_SUB_ROOT_UNKNOWN;
            memcpy(b + 1, ev->data + 1, (size_t)ids);
            return heap_unit(c, b, 1 + (size_t)ids);
        }
        break;
    default:
        break;
    }
    if (c->info_len) {
        size_t n = c->info_len;
        c->info_len = 0;
        if (heap_unit(c, c->info, n) < 0)
            return -2;
    }
    if (heap_sub(c, s->length) < 0)
        return -2;
    if (s->tag == HP_SUB_PRIM_ARRAY_DUMP && c->opt.strip_types >> s->elem_type & 1u) /* contents zeroed */
        return heap_put(c, ev->data, s->head_len) < 0 || hp_heaprec_zeros(&c->heap, s->payload_len, &c->out) < 0
                   ? -2
                   : 0;
    c->keep_payload = 1;
    return heap_put(c, ev->data, ev->len);
}

/* ---- driving the parser ---- */

static hp_code fail(hp_converter *c, hp_error *err)
{
    c->state = FAILED;
    c->error = *err;
    c->qn = 0; /* drop references into the chunk */
    return err->code;
}

static hp_code check_header(hp_converter *c, hp_error *err)
{
    const hp_header *h = hp_parser_header(c->parser);
    if (h->version != 3)
        return hp_fail(err, HP_E_FORMAT, 0, -1, 0, 0, 0,
                       h->version == 2 ? "HPROF file already in 1.0.2 format (nothing to convert)"
                                       : "expecting HPROF file format 1.0.3 (Android)");
    c->id_size = h->id_size;
    return HP_OK;
}

/* Runs the parser over the current chunk.  Returns HP_OK when it needs
 * input or the input ended. */
static hp_code run(hp_converter *c, hp_error *err)
{
    hp_event ev;
    for (;;) {
        hp_code rc = hp_parser_next(c->parser, &ev, err);
        int r = 0;
        if (rc != HP_OK)
            return rc;
        switch (ev.kind) {
        case HP_EV_NEED_INPUT:
        case HP_EV_END:
            return HP_OK;
        case HP_EV_SUBRECORD:
            r = on_subrecord(c, &ev);
            break;
        case HP_EV_PAYLOAD:
            if (c->keep_payload)
                r = heap_put(c, ev.data, ev.len);
            break;
        case HP_EV_DATA:
            r = put_in(c, ev.data, ev.len);
            break;
        case HP_EV_RECORD:
            if (hp_is_heap_tag(ev.rec->tag))
                r = open_heap(c, ev.rec);
            else
                r = put_in(c, ev.data, ev.len);
            break;
        case HP_EV_RECORD_END:
            if (c->in_heap)
                r = close_heap(c);
            break;
        case HP_EV_HEADER: {
            uint8_t h[HP_HEADER_MAX];
            const hp_header *hd;
            if ((rc = check_header(c, err)) != HP_OK)
                return rc;
            hd = hp_parser_header(c->parser);
            r = put_lit(c, h, hp_header_write(h, c->opt.to_standard ? 2 : 3, hd->id_size, hd->timestamp));
            break;
        }
        }
        if (r == 0 && (c->qn >= QUEUE_MAX || c->lit.len >= LIT_MAX))
            r = settle(c);
        if (r < 0) {
            int is_sub = ev.kind == HP_EV_SUBRECORD || ev.kind == HP_EV_PAYLOAD;
            int tag = ev.kind == HP_EV_HEADER ? -1 : is_sub ? ev.sub->tag : ev.rec->tag;
            return hp_fail(err, HP_E_NOMEM, is_sub ? ev.sub->offset : ev.offset, tag, is_sub, 0, 0,
                           r == -1 ? "out of memory for the converted output"
                                   : "out of memory, or the output sink refused the bytes");
        }
    }
}

static hp_code drive(hp_converter *c, const uint8_t *data, size_t len, int is_last, const hp_sink *out,
                     hp_error *err)
{
    hp_code rc;
    if (c->state == FAILED) {
        *err = c->error;
        return err->code;
    }
    if (c->state == FINISHED)
        return hp_fail(err, HP_E_USAGE, hp_parser_offset(c->parser), -1, 0, 0, 0,
                       "the converter is finished");
    if (!data)
        data = no_bytes;
    c->out.sink = out;
    c->in_lo = (uintptr_t)data;
    c->in_hi = (uintptr_t)data + len;
    hp_parser_feed(c->parser, data, len, is_last);
    rc = run(c, err);
    /* The complete records before an error still go out, so the output up
     * to an error does not depend on the chunking either. */
    if ((settle(c) < 0 || hp_writer_flush(&c->out) < 0) && rc == HP_OK)
        rc = hp_fail(err, HP_E_NOMEM, hp_parser_offset(c->parser), -1, 0, 0, 0,
                     "out of memory, or the output sink refused the bytes");
    c->in_lo = c->in_hi = 0;
    if (rc != HP_OK)
        return fail(c, err);
    if (is_last)
        c->state = FINISHED;
    return HP_OK;
}

hp_code hp_converter_feed(hp_converter *c, const uint8_t *data, size_t len, const hp_sink *out,
                          hp_error *err)
{
    return drive(c, data, len, 0, out, err);
}

hp_code hp_converter_finish(hp_converter *c, const hp_sink *out, hp_error *err)
{
    return drive(c, NULL, 0, 1, out, err);
}

void hp_converter_unfinished(const hp_converter *c, hp_unfinished *out) { hp_parser_unfinished(c->parser, out); }
