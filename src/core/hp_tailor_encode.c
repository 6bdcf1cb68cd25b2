/* Tailor encoder: HPROF 1.0.3 (4-byte ids) -> uncompressed mini stream,
 * driven by hp_parser events.
 *
 * Every mini record or sub-record is a few ranges of its source bytes (see
 * docs/tailor-format.md §3-4), so the encoder only decides which ranges to
 * keep.  Kept ranges that lie back to back in the caller's chunk are merged
 * into one run and written with one copy; everything goes out through a
 * 64 KiB buffer, and large runs go straight to the sink. */
#include "hp_tailor.h"

#include <stdio.h>
#include <string.h>

#include "hp_parser.h"
#include "hp_tailor_layout.h"

#define OUT_CAP ((size_t)64 << 10)

enum { HEAP_ZYGOTE = 0x5A, HEAP_IMAGE = 0x49 };

struct hp_tailor_encoder {
    hp_alloc alloc;
    hp_tailor_options opt;
    hp_parser *parser;
    hp_error error;
    int failed, finished;

    hp_writer out;
    uintptr_t chunk_lo, chunk_hi; /* the chunk being fed: runs may point into it */
    const uint8_t *run;           /* kept bytes not yet copied, inside the chunk */
    size_t run_len;

    uint64_t bytes_in, dropped;
    hp_tailor_counter counter;

    int last_out;       /* tag of the last record written to the mini, or -1 */
    int seen_end;       /* a HEAP_DUMP_END was written */
    int keep_body;      /* DATA of the current record is copied (STRING) */
    int seg_open;       /* the current heap record's 0x1C has been written */
    int keep_payload;   /* PAYLOAD pieces of the current sub-record are copied */
    int pending_info;   /* app_only: a HEAP_DUMP_INFO waits for something to switch */
    uint8_t info[TL_HEAP_DUMP_INFO];
};

/* ---- the tag counter (shared with the decoder) ---- */

const char *hp_tailor_counter_entry(const hp_tailor_counter *c, size_t i, uint64_t *count)
{
    unsigned key = c->order[i];
    *count = c->counts[key];
    return key >= 256 ? hp_subtag_name((int)key - 256) : hp_tag_name((int)key);
}

/* Appends text to buf[size], truncating; *len counts the full length. */
static void append(char *buf, size_t size, size_t *len, const char *text)
{
    size_t n = strlen(text);
    if (*len + 1 < size)
        memcpy(buf + *len, text, n < size - 1 - *len ? n : size - 1 - *len);
    *len += n;
}

size_t hp_tailor_counter_format(const hp_tailor_counter *c, char *buf, size_t size)
{
    size_t len = 0, i;
    char item[96];
    append(buf, size, &len, "{");
    for (i = 0; i < c->n; i++) {
        uint64_t n;
        const char *name = hp_tailor_counter_entry(c, i, &n);
        snprintf(item, sizeof item, "%s'%s': %llu", i ? ", " : "", name ? name : "?", (unsigned long long)n);
        append(buf, size, &len, item);
    }
    append(buf, size, &len, "}");
    if (size)
        buf[len < size ? len : size - 1] = 0;
    return len;
}

/* ---- output ---- */

static hp_code sink_fail(hp_tailor_encoder *e)
{
    return hp_fail(&e->error, HP_E_NOMEM, e->bytes_in, -1, 0, 0, 0, "the output sink refused the bytes");
}

/* Copies bytes into the output buffer; large ones go straight to the sink. */
static inline int copy_out(hp_tailor_encoder *e, const uint8_t *p, size_t n)
{
    return hp_writer_put(&e->out, p, n);
}

static inline int flush_run(hp_tailor_encoder *e)
{
    int rc = e->run_len ? copy_out(e, e->run, e->run_len) : 0;
    e->run_len = 0;
    return rc;
}

/* Writes bytes that do not live in the chunk, after everything kept so far. */
static int put(hp_tailor_encoder *e, const uint8_t *p, size_t n)
{
    if (flush_run(e) < 0)
        return -1;
    return copy_out(e, p, n);
}

/* Keeps n source bytes at p.  Bytes in the caller's chunk stay valid for the
 * whole feed call, so they are only remembered and merged with their
 * neighbours; bytes in the parser's carry are copied at once. */
static inline int keep(hp_tailor_encoder *e, const uint8_t *p, size_t n)
{
    uintptr_t a = (uintptr_t)p;
    if (n == 0)
        return 0;
    if (e->run_len && a == (uintptr_t)(e->run + e->run_len) && a + n <= e->chunk_hi) {
        e->run_len += n;
        return 0;
    }
    if (flush_run(e) < 0)
        return -1;
    if (a >= e->chunk_lo && a + n <= e->chunk_hi) {
        e->run = p;
        e->run_len = n;
        return 0;
    }
    return copy_out(e, p, n);
}

static int flush_all(hp_tailor_encoder *e)
{
    if (flush_run(e) < 0)
        return -1;
    return hp_writer_flush(&e->out);
}

/* ---- records ---- */

static hp_code refuse(hp_tailor_encoder *e, hp_code code, uint64_t offset, int tag, int is_sub, const char *why)
{
    return hp_fail(&e->error, code, offset, tag, is_sub, 0, 0, why);
}

static hp_code on_header(hp_tailor_encoder *e, const hp_header *h)
{
    static const uint8_t magic[] = HP_TAILOR_MAGIC;
    if (h->version != 3)
        return refuse(e, HP_E_LIMIT, 0, -1, 0,
                      "Tailor's mini format holds only 'JAVA PROFILE 1.0.3' (Android) dumps");
    if (h->id_size != 4)
        return refuse(e, HP_E_LIMIT, h->length - 4 - 8, -1, 0, /* at the u4 id size, before the u8 timestamp */
                      "Tailor's mini format holds only 4-byte identifiers, not 8");
    return put(e, magic, HP_TAILOR_MAGIC_LEN) < 0 ? sink_fail(e) : HP_OK;
}

/* Opens the mini segment (0x1C) and releases a waiting heap switch. */
static int open_segment(hp_tailor_encoder *e)
{
    static const uint8_t seg = HP_TAG_HEAP_DUMP_SEGMENT;
    if (!e->seg_open) {
        e->seg_open = 1;
        e->last_out = HP_TAG_HEAP_DUMP_SEGMENT;
        hp_tailor_count(&e->counter, HP_TAG_HEAP_DUMP_SEGMENT);
        if (put(e, &seg, 1) < 0)
            return -1;
    }
    if (e->pending_info) {
        e->pending_info = 0;
        hp_tailor_count(&e->counter, 256 + HP_SUB_HEAP_DUMP_INFO);
        if (put(e, e->info, sizeof e->info) < 0)
            return -1;
    }
    return 0;
}

static hp_code on_record(hp_tailor_encoder *e, const hp_event *ev)
{
    const hp_record *r = ev->rec;

    e->keep_body = 0;
    switch (r->tag) {
    case HP_TAG_UTF8:
    case HP_TAG_LOAD_CLASS:
        if (e->last_out == HP_TAG_HEAP_DUMP_SEGMENT)
            return refuse(e, HP_E_LIMIT, r->offset, r->tag, 0,
                          "record directly after a heap segment cannot be represented in a Tailor mini "
                          "(a decoder would read its tag as a ROOT_JNI_GLOBAL/LOCAL sub-record)");
        if (r->tag == HP_TAG_LOAD_CLASS) {
            if (r->length != TL_SRC_LOAD_CLASS_BODY)
                return refuse(e, HP_E_CORRUPT, r->offset, r->tag, 0, "LOAD_CLASS body is not 16 bytes");
            hp_tailor_count(&e->counter, HP_TAG_LOAD_CLASS);
            e->last_out = HP_TAG_LOAD_CLASS;
            return keep(e, ev->data, 1) < 0 ? sink_fail(e) : HP_OK; /* ids follow from DATA */
        }
        if (r->length > 0xFFFF)
            return refuse(e, HP_E_LIMIT, r->offset, r->tag, 0,
                          "STRING body longer than 65535 bytes (the mini keeps a u2 length)");
        hp_tailor_count(&e->counter, HP_TAG_UTF8);
        e->last_out = HP_TAG_UTF8;
        e->keep_body = 1;
        /* tag, then the low u2 of the length, which the body follows */
        return keep(e, ev->data, 1) == 0 && keep(e, ev->data + TL_SRC_LENGTH_LOW, 2) == 0 ? HP_OK : sink_fail(e);
    case HP_TAG_TRACE:
        hp_tailor_count(&e->counter, HP_TAG_TRACE); /* dropped, as encode.py does */
        break;
    case HP_TAG_HEAP_DUMP:
    case HP_TAG_HEAP_DUMP_SEGMENT:
        e->seg_open = 0;
        e->pending_info = 0;
        /* encode.py writes every segment, even an empty one; app_only writes
         * it with its first kept sub-record. */
        if (!e->opt.app_only && open_segment(e) < 0)
            return sink_fail(e);
        break;
    case HP_TAG_HEAP_DUMP_END:
        if (r->length != 0)
            return refuse(e, HP_E_CORRUPT, r->offset, r->tag, 0, "HEAP_DUMP_END with a non-empty body");
        e->last_out = HP_TAG_HEAP_DUMP_END;
        e->seen_end = 1;
        return keep(e, ev->data, 1) < 0 ? sink_fail(e) : HP_OK;
    default:
        return refuse(e, HP_E_LIMIT, r->offset, r->tag, 0, "record type not representable in a Tailor mini");
    }
    return HP_OK;
}

static hp_code on_data(hp_tailor_encoder *e, const hp_event *ev)
{
    if (ev->rec->tag == HP_TAG_LOAD_CLASS) /* whole: keep the class id and the name id */
        return keep(e, ev->data + TL_LOAD_CLASS_CLASS_ID, TL_ID) == 0 &&
               keep(e, ev->data + TL_LOAD_CLASS_NAME_ID, TL_ID) == 0 ? HP_OK : sink_fail(e);
    if (e->keep_body && keep(e, ev->data, ev->len) < 0)
        return sink_fail(e);
    return HP_OK;
}

static int is_object_dump(int tag)
{
    return tag == HP_SUB_INSTANCE_DUMP || tag == HP_SUB_OBJ_ARRAY_DUMP || tag == HP_SUB_PRIM_ARRAY_DUMP;
}

/* One sub-record: `d` holds its whole head and ev->len - head bytes of payload. */
static hp_code on_subrecord(hp_tailor_encoder *e, const hp_event *ev)
{
    const hp_subrecord *s = ev->sub;
    const uint8_t *d = ev->data;
    int ok;

    e->keep_payload = 0;
    if (e->opt.app_only) {
        if (is_object_dump(s->tag) && (ev->heap_id == HEAP_ZYGOTE || ev->heap_id == HEAP_IMAGE)) {
            e->dropped++;
            return HP_OK;
        }
        if (s->tag == HP_SUB_HEAP_DUMP_INFO) {
            /* Written only if something kept follows it in this segment. */
            memcpy(e->info, d, sizeof e->info);
            e->pending_info = 1;
            return HP_OK;
        }
        if (open_segment(e) < 0)
            return sink_fail(e);
    }
    switch (s->tag) {
    case HP_SUB_ROOT_JNI_GLOBAL: case HP_SUB_HEAP_DUMP_INFO: /* kept whole */
        ok = keep(e, d, s->tag == HP_SUB_ROOT_JNI_GLOBAL ? TL_ROOT_JNI_GLOBAL : TL_HEAP_DUMP_INFO);
        break;
    case HP_SUB_ROOT_UNKNOWN: case HP_SUB_ROOT_STICKY_CLASS: case HP_SUB_ROOT_MONITOR_USED:
    case HP_SUB_ROOT_INTERNED_STRING: case HP_SUB_ROOT_FINALIZING: case HP_SUB_ROOT_DEBUGGER:
    case HP_SUB_ROOT_REFERENCE_CLEANUP: case HP_SUB_ROOT_VM_INTERNAL:
    case HP_SUB_ROOT_JNI_LOCAL: case HP_SUB_ROOT_JAVA_FRAME: case HP_SUB_ROOT_NATIVE_STACK:
    case HP_SUB_ROOT_THREAD_BLOCK: case HP_SUB_ROOT_THREAD_OBJECT: case HP_SUB_ROOT_JNI_MONITOR:
        ok = keep(e, d, TL_TAG_ID); /* thread serials and frame numbers are dropped */
        break;
    case HP_SUB_CLASS_DUMP:
        if (s->aux > 0xFFFF)
            return refuse(e, HP_E_LIMIT, s->offset, s->tag, 1,
                          "CLASS_DUMP instance size of 65536 or more (the mini keeps a u2)");
        /* tag+id | super..protection domain | low u2 of instance size + tables */
        ok = keep(e, d, TL_TAG_ID) == 0 && keep(e, d + TL_SRC_AFTER_SERIAL, TL_CLASS_REFS) == 0 &&
             keep(e, d + TL_SRC_CLASS_SIZE_LOW, ev->len - TL_SRC_CLASS_SIZE_LOW) == 0 ? 0 : -1;
        break;
    case HP_SUB_INSTANCE_DUMP: case HP_SUB_OBJ_ARRAY_DUMP:
        /* Only the stack-trace serial goes. */
        ok = keep(e, d, TL_TAG_ID) == 0 &&
             keep(e, d + TL_SRC_AFTER_SERIAL, ev->len - TL_SRC_AFTER_SERIAL) == 0 ? 0 : -1;
        e->keep_payload = 1;
        break;
    case HP_SUB_PRIM_ARRAY_DUMP:
        e->keep_payload = s->elem_type != HP_T_CHAR && s->elem_type != HP_T_BYTE;
        ok = keep(e, d, TL_TAG_ID) == 0 && keep(e, d + TL_SRC_AFTER_SERIAL, TL_PRIM_COUNT_AND_TYPE) == 0 &&
             (!e->keep_payload || keep(e, d + TL_SRC_PRIM_HEAD, ev->len - TL_SRC_PRIM_HEAD) == 0) ? 0 : -1;
        break;
    default: /* 0x90, 0xC3 */
        return refuse(e, HP_E_LIMIT, s->offset, s->tag, 1, "sub-record type not representable in a Tailor mini");
    }
    if (ok < 0)
        return sink_fail(e);
    hp_tailor_count(&e->counter, 256u + s->tag);
    return HP_OK;
}

static hp_code on_record_end(hp_tailor_encoder *e, const hp_event *ev)
{
    (void)ev;
    e->keep_body = 0;
    e->pending_info = 0; /* a switch with nothing after it in its segment */
    return HP_OK;
}

static hp_code on_end(hp_tailor_encoder *e)
{
    uint64_t end = hp_parser_offset(e->parser);
    /* A mini can only end after HEAP_DUMP_END: a decoder cannot tell the end
     * of a segment from end of file, and decode.py misreads it. */
    if (!e->seen_end || e->last_out == HP_TAG_HEAP_DUMP_SEGMENT)
        return hp_fail(&e->error, HP_E_TRUNCATED, end, HP_TAG_HEAP_DUMP_END, 0, 9, 0, NULL);
    return HP_OK;
}

/* Runs the parser over its current input until it needs more (or ends). */
static hp_code run(hp_tailor_encoder *e, int *ended)
{
    hp_event ev;
    hp_code rc;
    *ended = 0;
    for (;;) {
        rc = hp_parser_next(e->parser, &ev, &e->error);
        if (rc != HP_OK)
            return rc;
        switch (ev.kind) {
        case HP_EV_NEED_INPUT:
            return HP_OK;
        case HP_EV_HEADER:
            rc = on_header(e, hp_parser_header(e->parser));
            break;
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
            if (e->keep_payload && keep(e, ev.data, ev.len) < 0)
                rc = sink_fail(e);
            break;
        case HP_EV_RECORD_END:
            rc = on_record_end(e, &ev);
            if (rc == HP_OK && hp_is_heap_tag(ev.rec->tag) && e->seg_open)
                e->last_out = HP_TAG_HEAP_DUMP_SEGMENT;
            break;
        case HP_EV_END:
            *ended = 1;
            return on_end(e);
        }
        if (rc != HP_OK)
            return rc;
    }
}

static hp_code drive(hp_tailor_encoder *e, const uint8_t *data, size_t len, int is_last, const hp_sink *out,
                     hp_error *err)
{
    hp_code rc;
    int ended;
    if (e->failed) {
        *err = e->error;
        return e->error.code;
    }
    if (e->finished) {
        rc = hp_fail(err, HP_E_USAGE, e->bytes_in, -1, 0, 0, 0, "feed or finish after finish");
        return rc;
    }
    e->out.sink = out;
    e->chunk_lo = (uintptr_t)data;
    e->chunk_hi = (uintptr_t)data + len;
    hp_parser_feed(e->parser, data, len, is_last);
    rc = run(e, &ended);
    e->bytes_in += len;
    if (rc == HP_OK && flush_all(e) < 0)
        rc = sink_fail(e);
    e->run_len = 0;
    e->chunk_lo = e->chunk_hi = 0;
    if (rc != HP_OK) {
        e->failed = 1;
        *err = e->error;
        return rc;
    }
    if (is_last)
        e->finished = 1;
    return HP_OK;
}

hp_code hp_tailor_encoder_feed(hp_tailor_encoder *e, const uint8_t *data, size_t len, const hp_sink *out,
                               hp_error *err)
{
    return drive(e, data, len, 0, out, err);
}

hp_code hp_tailor_encoder_finish(hp_tailor_encoder *e, const hp_sink *out, hp_error *err)
{
    static const uint8_t none[1];
    return drive(e, none, 0, 1, out, err); /* not NULL: the parser may memcpy from it */
}

hp_tailor_encoder *hp_tailor_encoder_new(const hp_alloc *alloc, const hp_tailor_options *opts)
{
    hp_tailor_encoder *e;
    if (!alloc)
        alloc = &hp_default_alloc;
    e = alloc->malloc_fn(sizeof *e);
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    e->alloc = *alloc;
    if (opts)
        e->opt = *opts;
    e->last_out = -1;
    e->parser = hp_parser_new(alloc, HP_PARSE_SUBRECORDS);
    if (hp_writer_init(&e->out, alloc, OUT_CAP) < 0 || !e->parser) {
        hp_tailor_encoder_free(e);
        return NULL;
    }
    return e;
}

void hp_tailor_encoder_free(hp_tailor_encoder *e)
{
    if (!e)
        return;
    hp_parser_free(e->parser);
    hp_writer_free(&e->out, &e->alloc);
    e->alloc.free_fn(e);
}

const hp_tailor_counter *hp_tailor_encoder_counter(const hp_tailor_encoder *e) { return &e->counter; }
uint64_t hp_tailor_encoder_bytes_in(const hp_tailor_encoder *e) { return e->bytes_in; }
uint64_t hp_tailor_encoder_bytes_out(const hp_tailor_encoder *e) { return e->out.written; }
uint64_t hp_tailor_encoder_dropped(const hp_tailor_encoder *e) { return e->dropped; }
