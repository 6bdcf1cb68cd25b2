/* Tailor decoder: uncompressed mini stream -> HPROF 1.0.3 (4-byte ids),
 * byte-identical to decode.py, as a push state machine.
 *
 * A mini segment has no length and a restored one must carry its length up
 * front: the restored segment goes through an hp_heaprec, which holds it
 * until it ends (up to the limit), else streams it (hp_heaprec.h).  Each
 * sub-record is restored as soon as its head is here: a small one whole, an
 * object or array as its head, its elements then passing straight through
 * (char[] and byte[] contents come back as zeros: a 20-byte mini can claim
 * 8 GiB of them, which are written, never held past the limit).  Only a
 * sub-record head or a class dump straddling chunks, and a top-level record
 * (at most 65538 bytes), are carried. */
#include "hp_tailor.h"

#include <string.h>

#include "hp_heaprec.h"
#include "hp_subrecord.h"
#include "hp_tailor_layout.h"

#define OUT_CAP ((size_t)64 << 10)

enum state { D_MAGIC, D_TOP, D_SEG };

struct hp_tailor_decoder {
    hp_alloc alloc;
    enum state state;
    hp_error error;
    int failed, finished;

    const hp_sink *sink;
    hp_writer out;

    uint64_t pos; /* mini offset of the next byte not yet consumed */
    uint64_t bytes_in;
    uint64_t max_output, declared; /* the sub-records' restored bytes: at most, so far */
    hp_tailor_counter counter;
    int seen_end; /* the last record decoded is a HEAP_DUMP_END: the mini may end here */

    hp_buf carry;      /* the magic, or a top-level record straddling chunks */
    uint64_t unit_off; /* mini offset of carry[0] */

    hp_heaprec seg;         /* the restored segment */
    hp_buf sub;             /* a sub-record's head (or a small one) straddling chunks */
    uint64_t sub_off;       /* mini offset of the current sub-record's tag... */
    int sub_tag;            /* ...its tag */
    uint64_t sub_size;      /* ...its mini size */
    uint64_t payload_left;  /* its elements still to pass through */
};

/* ---- output ---- */

static hp_code sink_fail(hp_tailor_decoder *d)
{
    return hp_fail(&d->error, HP_E_NOMEM, d->pos, -1, 0, 0, 0, "the output sink refused the bytes");
}

static int put(hp_tailor_decoder *d, const uint8_t *p, size_t n) { return hp_writer_put(&d->out, p, n); }

/* ---- mini layouts (docs/tailor-format.md §4, ids are 4 bytes) ---- */

/* Mini size -> restored size of the sub-records with a fixed layout; 0 for
 * the variable ones and for bytes that are not mini sub-tags. */
static uint8_t fixed_mini(int tag)
{
    switch (tag) {
    case HP_SUB_ROOT_JNI_GLOBAL:
        return TL_ROOT_JNI_GLOBAL;
    case HP_SUB_HEAP_DUMP_INFO:
        return TL_HEAP_DUMP_INFO;
    case HP_SUB_ROOT_UNKNOWN: case HP_SUB_ROOT_STICKY_CLASS: case HP_SUB_ROOT_MONITOR_USED:
    case HP_SUB_ROOT_INTERNED_STRING: case HP_SUB_ROOT_FINALIZING: case HP_SUB_ROOT_DEBUGGER:
    case HP_SUB_ROOT_REFERENCE_CLEANUP: case HP_SUB_ROOT_VM_INTERNAL:
    case HP_SUB_ROOT_JNI_LOCAL: case HP_SUB_ROOT_JAVA_FRAME: case HP_SUB_ROOT_THREAD_OBJECT:
    case HP_SUB_ROOT_JNI_MONITOR: case HP_SUB_ROOT_NATIVE_STACK: case HP_SUB_ROOT_THREAD_BLOCK:
        return TL_TAG_ID;
    default:
        return 0;
    }
}

static uint8_t fixed_dropped(int tag)
{
    switch (tag) {
    case HP_SUB_ROOT_JNI_LOCAL: case HP_SUB_ROOT_JAVA_FRAME: case HP_SUB_ROOT_THREAD_OBJECT:
    case HP_SUB_ROOT_JNI_MONITOR:
        return 2 * TL_SERIAL; /* thread serial + frame number / stack serial */
    case HP_SUB_ROOT_NATIVE_STACK: case HP_SUB_ROOT_THREAD_BLOCK:
        return TL_SERIAL; /* thread serial */
    default:
        return 0;
    }
}

/* Does the mini byte start a sub-record?  (Anything else ends the segment.) */
static int is_sub(int tag)
{
    return fixed_mini(tag) || (tag >= HP_SUB_CLASS_DUMP && tag <= HP_SUB_PRIM_ARRAY_DUMP) ||
           tag == HP_SUB_UNREACHABLE || tag == HP_SUB_PRIM_ARRAY_NODATA;
}

/* Element size of a mini primitive array (decode.py takes type 2 as 4 bytes). */
static int elem_size(int type) { return hp_type_size(type, TL_ID); }

/* Sizes the sub-record at u from `have` bytes (have >= 1).  Returns NULL and
 * sets *size: the whole mini size when `have` tells it, else a lower bound
 * larger than `have` to gather first.  *restored is set (non-zero) once *size
 * is final, which may be before all of it is here.  Returns the reason when
 * the sub-record is corrupt. */
static const char *sub_size(const uint8_t *u, size_t have, uint64_t *size, uint64_t *restored)
{
    int fixed = fixed_mini(u[0]), bad, truncated, table, type;
    uint64_t pos, count;
    *restored = 0;
    if (fixed) {
        *size = fixed;
        *restored = (uint64_t)fixed + fixed_dropped(u[0]);
        return NULL;
    }
    switch (u[0]) {
    case HP_SUB_CLASS_DUMP:
        /* tag, id, 4 ids, u2 instance size, then three tables as in HPROF */
        pos = TL_MINI_CLASS_TABLES;
        for (table = 0; table < 3; table++) {
            uint16_t n;
            if (have < pos + 2) {
                *size = pos + 2;
                return NULL;
            }
            n = hp_be16(u + pos);
            pos += 2;
            pos += hp_class_table_size(u + pos, have - (size_t)pos, n, table == 0 ? 2 : TL_ID, table < 2, TL_ID,
                                       &truncated, &bad);
            if (bad)
                return "invalid basic type in class field table";
            if (truncated) {
                *size = pos;
                return NULL;
            }
        }
        *size = pos;
        *restored = pos + TL_CLASS_DROPPED;
        return NULL;
    case HP_SUB_INSTANCE_DUMP: case HP_SUB_OBJ_ARRAY_DUMP:
        if (have < TL_MINI_OBJECT_HEAD) {
            *size = TL_MINI_OBJECT_HEAD;
            return NULL;
        }
        count = hp_be32(u + (u[0] == HP_SUB_INSTANCE_DUMP ? TL_MINI_INSTANCE_COUNT : TL_MINI_ARRAY_COUNT));
        *size = TL_MINI_OBJECT_HEAD + (u[0] == HP_SUB_INSTANCE_DUMP ? count : TL_ID * count);
        *restored = *size + TL_SERIAL;
        return NULL;
    case HP_SUB_PRIM_ARRAY_DUMP:
        if (have < TL_MINI_PRIM_HEAD) {
            *size = TL_MINI_PRIM_HEAD;
            return NULL;
        }
        type = u[TL_MINI_PRIM_TYPE];
        if (elem_size(type) == 0)
            return "invalid primitive array element type";
        count = (uint64_t)hp_be32(u + TL_MINI_ARRAY_COUNT) * (uint64_t)elem_size(type);
        *size = TL_MINI_PRIM_HEAD + (type == HP_T_CHAR || type == HP_T_BYTE ? 0 : count);
        *restored = TL_SRC_PRIM_HEAD + count;
        return NULL;
    default: /* 0x90, 0xC3 */
        return "sub-record type that a Tailor mini never holds";
    }
}

/* What of a sub-record (mini size `size`) is gathered before it is
 * restored: all of it, or for objects and arrays their head (the elements
 * then pass through). */
static uint64_t gathered(const uint8_t *u, uint64_t size)
{
    switch (u[0]) {
    case HP_SUB_INSTANCE_DUMP: case HP_SUB_OBJ_ARRAY_DUMP: return TL_MINI_OBJECT_HEAD;
    case HP_SUB_PRIM_ARRAY_DUMP: return TL_MINI_PRIM_HEAD;
    default: return size;
    }
}

/* Output inside the segment; zeros are the fields decode.py fills with zero bytes. */
static int seg_put(hp_tailor_decoder *d, const uint8_t *p, size_t n) { return hp_heaprec_put(&d->seg, p, n, &d->out); }
static int seg_zeros(hp_tailor_decoder *d, uint64_t n) { return hp_heaprec_zeros(&d->seg, n, &d->out); }

/* Writes the restored form of the gathered part u[0..n) of a validated
 * sub-record: the mini bytes, with zeros where the mini dropped a field
 * (and for char[] and byte[], their elements). */
static int restore_sub(hp_tailor_decoder *d, const uint8_t *u, size_t n)
{
    int fixed = fixed_mini(u[0]);
    if (fixed)
        return seg_put(d, u, (size_t)fixed) < 0 || seg_zeros(d, fixed_dropped(u[0])) < 0 ? -1 : 0;
    if (seg_put(d, u, TL_TAG_ID) < 0 || seg_zeros(d, TL_SERIAL) < 0) /* tag + id, stack serial */
        return -1;
    switch (u[0]) {
    case HP_SUB_CLASS_DUMP:
        if (seg_put(d, u + TL_TAG_ID, TL_CLASS_REFS) < 0 || seg_zeros(d, TL_CLASS_RESERVED_AND_SIZE_HIGH) < 0)
            return -1;
        return seg_put(d, u + TL_MINI_CLASS_SIZE_LOW, n - TL_MINI_CLASS_SIZE_LOW);
    case HP_SUB_PRIM_ARRAY_DUMP: {
        int type = u[TL_MINI_PRIM_TYPE];
        if (seg_put(d, u + TL_TAG_ID, n - TL_TAG_ID) < 0)
            return -1;
        if (type == HP_T_CHAR || type == HP_T_BYTE) /* the elements the mini dropped */
            return seg_zeros(d, (uint64_t)hp_be32(u + TL_MINI_ARRAY_COUNT) * (uint64_t)elem_size(type));
        return 0;
    }
    default: /* INSTANCE, OBJ_ARRAY: the head */
        return seg_put(d, u + TL_TAG_ID, n - TL_TAG_ID);
    }
}

/* ---- states ---- */

static hp_code fail_unit(hp_tailor_decoder *d, hp_code code, uint64_t off, int tag, int is_sub_rec,
                         const char *why)
{
    return hp_fail(&d->error, code, off, tag, is_sub_rec, 0, 0, why);
}

static hp_code step_magic(hp_tailor_decoder *d, const uint8_t **p, size_t *n)
{
    static const uint8_t header[TL_SRC_HEADER] = "JAVA PROFILE 1.0.3\0\0\0\0\4"; /* rest: timestamp 0 */
    static const char magic[] = HP_TAILOR_MAGIC;
    while (*n && d->carry.len < HP_TAILOR_MAGIC_LEN) {
        size_t i = d->carry.len;
        uint8_t c = **p;
        if (c != (uint8_t)magic[i]) {
            const char *why = "not a Tailor mini stream (no 'JAVA PROFILE 6.0.1' magic)";
            if (i == 0 && c == 0x78)
                why = "zlib data, not a mini stream: inflate the .mini file first";
            else if (i == 13 && c == '1')
                why = "a standard HPROF dump, not a Tailor mini stream";
            return fail_unit(d, HP_E_FORMAT, 0, -1, 0, why);
        }
        d->carry.data[d->carry.len++] = c;
        (*p)++;
        (*n)--;
        d->pos++;
    }
    if (d->carry.len < HP_TAILOR_MAGIC_LEN)
        return HP_OK;
    d->carry.len = 0;
    d->state = D_TOP;
    return put(d, header, sizeof header) < 0 ? sink_fail(d) : HP_OK;
}

/* Size of the top-level mini record at u as far as `have` bytes tell, or 0
 * for a tag that is no mini record. */
static size_t top_size(const uint8_t *u, size_t have)
{
    switch (u[0]) {
    case HP_TAG_UTF8:
        return have < TL_MINI_STRING_HEAD ? TL_MINI_STRING_HEAD : TL_MINI_STRING_HEAD + (size_t)hp_be16(u + 1);
    case HP_TAG_LOAD_CLASS: return TL_MINI_LOAD_CLASS;
    case HP_TAG_HEAP_DUMP: case HP_TAG_HEAP_DUMP_SEGMENT: case HP_TAG_HEAP_DUMP_END: return 1;
    default: return 0;
    }
}

/* Restores one complete top-level record (not a segment). */
static int restore_top(hp_tailor_decoder *d, const uint8_t *u, size_t size)
{
    /* up to the low u2 of the length (time 0, high u2 0), which the mini holds */
    static const uint8_t string_head[TL_SRC_LENGTH_LOW] = { HP_TAG_UTF8 };
    /* up to the class id: time 0, body length, class serial 0 */
    static const uint8_t class_head[TL_SRC_RECORD_HEAD + TL_LOAD_CLASS_CLASS_ID] = {
        HP_TAG_LOAD_CLASS, 0, 0, 0, 0, 0, 0, 0, TL_SRC_LOAD_CLASS_BODY,
    };
    static const uint8_t end[TL_SRC_RECORD_HEAD] = { HP_TAG_HEAP_DUMP_END };
    static const uint8_t stack_serial[TL_SERIAL] = { 0 };
    const uint8_t *class_id = u + 1, *name_id = u + 1 + TL_ID;
    switch (u[0]) {
    case HP_TAG_UTF8:
        hp_tailor_count(&d->counter, HP_TAG_UTF8);
        return put(d, string_head, sizeof string_head) < 0 || put(d, u + 1, size - 1) < 0 ? -1 : 0;
    case HP_TAG_LOAD_CLASS:
        hp_tailor_count(&d->counter, HP_TAG_LOAD_CLASS);
        if (put(d, class_head, sizeof class_head) < 0 || put(d, class_id, TL_ID) < 0)
            return -1;
        return put(d, stack_serial, TL_SERIAL) < 0 || put(d, name_id, TL_ID) < 0 ? -1 : 0;
    default:
        d->seen_end = 1;
        return put(d, end, sizeof end);
    }
}

static hp_code top_unit(hp_tailor_decoder *d, const uint8_t *u, size_t size)
{
    d->seen_end = 0; /* until this record is a HEAP_DUMP_END: the mini must end with one */
    if (u[0] == HP_TAG_HEAP_DUMP || u[0] == HP_TAG_HEAP_DUMP_SEGMENT) {
        hp_tailor_count(&d->counter, HP_TAG_HEAP_DUMP_SEGMENT);
        d->state = D_SEG;
        hp_heaprec_open(&d->seg, HP_TAG_HEAP_DUMP_SEGMENT, 0);
        return HP_OK;
    }
    return restore_top(d, u, size) < 0 ? sink_fail(d) : HP_OK;
}

static hp_code step_top(hp_tailor_decoder *d, const uint8_t **p, size_t *n)
{
    size_t size, take;
    if (d->carry.len == 0) {
        if (top_size(*p, *n) == 0)
            return fail_unit(d, HP_E_CORRUPT, d->pos, **p, 0,
                             hp_tag_name(**p) ? "record type that a Tailor mini never holds"
                                              : "unknown record tag in mini stream");
        size = top_size(*p, *n);
        if (size <= *n) { /* whole in the chunk */
            const uint8_t *u = *p;
            *p += size;
            *n -= size;
            d->pos += size;
            return top_unit(d, u, size);
        }
        d->unit_off = d->pos;
    }
    /* Gather the record in the carry; a STRING's size is known after 3 bytes. */
    for (;;) {
        size = d->carry.len ? top_size(d->carry.data, d->carry.len) : top_size(*p, *n);
        if (d->carry.len >= size)
            break;
        if (*n == 0)
            return HP_OK;
        take = size - d->carry.len < *n ? size - d->carry.len : *n;
        if (hp_buf_append(&d->carry, *p, take) < 0)
            return hp_fail(&d->error, HP_E_NOMEM, d->unit_off, d->carry.data[0], 0, size, 0,
                           "out of memory for the carry buffer");
        *p += take;
        *n -= take;
        d->pos += take;
    }
    d->carry.len = 0;
    return top_unit(d, d->carry.data, size);
}

static hp_code end_segment(hp_tailor_decoder *d)
{
    d->state = D_TOP;
    return hp_heaprec_close(&d->seg, &d->out) < 0 ? sink_fail(d) : HP_OK; /* an empty one is dropped, as decode.py does */
}

/* Restores the gathered part of the sub-record at u (mini size `size`,
 * restored size `restored`); its elements, if any, pass through next. */
static hp_code begin_sub(hp_tailor_decoder *d, const uint8_t *u, uint64_t size, uint64_t restored)
{
    uint64_t head = gathered(u, size), limit = hp_restore_limit(d->max_output, d->pos);
    int rc;
    /* One past what a heap record holds is refused as such (HP_E_LIMIT) just below. */
    if (restored <= UINT32_MAX && d->declared + restored > limit)
        return hp_restore_refuse(&d->error, d->declared + restored, limit, "the mini's sub-record", d->sub_off, u[0],
                                 1);
    d->declared += restored;
    rc = hp_heaprec_sub(&d->seg, restored, &d->out);
    if (rc == -2)
        return hp_fail(&d->error, HP_E_LIMIT, d->sub_off, u[0], 1, 0, 0,
                       "restored sub-record longer than a heap record can hold (4 GiB - 1)");
    hp_tailor_count(&d->counter, 256u + u[0]);
    d->sub_tag = u[0];
    if (rc < 0 || restore_sub(d, u, (size_t)head) < 0)
        return sink_fail(d);
    d->sub_size = size;
    d->payload_left = u[0] == HP_SUB_PRIM_ARRAY_DUMP || u[0] == HP_SUB_INSTANCE_DUMP || u[0] == HP_SUB_OBJ_ARRAY_DUMP
                          ? size - head
                          : 0;
    return HP_OK;
}

/* A sub-record head straddling chunks: gather it in `sub`. */
static hp_code gather_sub(hp_tailor_decoder *d, const uint8_t **p, size_t *n)
{
    for (;;) {
        uint64_t size, restored, want;
        const char *why = sub_size(d->sub.data, d->sub.len, &size, &restored);
        size_t take;
        hp_code rc;
        if (why)
            return fail_unit(d, HP_E_CORRUPT, d->sub_off, d->sub.data[0], 1, why);
        want = restored ? gathered(d->sub.data, size) : size;
        if (d->sub.len >= want) {
            rc = begin_sub(d, d->sub.data, size, restored);
            d->sub.len = 0;
            return rc;
        }
        if (*n == 0)
            return HP_OK;
        take = want - d->sub.len < *n ? (size_t)(want - d->sub.len) : *n;
        if (hp_buf_append(&d->sub, *p, take) < 0)
            return hp_fail(&d->error, HP_E_NOMEM, d->sub_off, d->sub.data[0], 1, 0, 0,
                           "out of memory for a sub-record head");
        *p += take;
        *n -= take;
        d->pos += take;
    }
}

static hp_code step_seg(hp_tailor_decoder *d, const uint8_t **p, size_t *n)
{
    while (*n) {
        const uint8_t *u = *p;
        uint64_t size, restored;
        const char *why;
        hp_code rc;
        if (d->payload_left) { /* elements pass straight through */
            size_t take = d->payload_left < *n ? (size_t)d->payload_left : *n;
            if (seg_put(d, *p, take) < 0)
                return sink_fail(d);
            *p += take;
            *n -= take;
            d->pos += take;
            d->payload_left -= take;
            continue;
        }
        if (d->sub.len) {
            if ((rc = gather_sub(d, p, n)) != HP_OK)
                return rc;
            continue;
        }
        if (!is_sub(*u))
            return end_segment(d); /* that byte is the next record's tag */
        d->sub_off = d->pos;
        why = sub_size(u, *n, &size, &restored);
        if (why)
            return fail_unit(d, HP_E_CORRUPT, d->pos, *u, 1, why);
        if (restored && gathered(u, size) <= *n) { /* its head is here: no copy */
            uint64_t head = gathered(u, size);
            if ((rc = begin_sub(d, u, size, restored)) != HP_OK)
                return rc;
            *p += head;
            *n -= (size_t)head;
            d->pos += head;
            continue;
        }
        if (hp_buf_append(&d->sub, u, 1) < 0) /* gather it from its tag on */
            return hp_fail(&d->error, HP_E_NOMEM, d->pos, *u, 1, 0, 0, "out of memory for a sub-record head");
        *p += 1;
        *n -= 1;
        d->pos += 1;
    }
    return HP_OK;
}

/* ---- driver ---- */

static hp_code drive(hp_tailor_decoder *d, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    hp_code rc = HP_OK;
    d->out.sink = out;
    while (len && rc == HP_OK) {
        switch (d->state) {
        case D_MAGIC: rc = step_magic(d, &data, &len); break;
        case D_TOP: rc = step_top(d, &data, &len); break;
        case D_SEG: rc = step_seg(d, &data, &len); break;
        }
    }
    if (rc == HP_OK && hp_writer_flush(&d->out) < 0)
        rc = sink_fail(d);
    if (rc != HP_OK) {
        d->failed = 1;
        *err = d->error;
    }
    return rc;
}

hp_code hp_tailor_decoder_feed(hp_tailor_decoder *d, const uint8_t *data, size_t len, const hp_sink *out,
                               hp_error *err)
{
    if (d->failed) {
        *err = d->error;
        return d->error.code;
    }
    if (d->finished)
        return hp_fail(err, HP_E_USAGE, d->pos, -1, 0, 0, 0, "feed after finish");
    d->bytes_in += len;
    return drive(d, data, len, out, err);
}

hp_code hp_tailor_decoder_finish(hp_tailor_decoder *d, const hp_sink *out, hp_error *err)
{
    uint64_t size, restored;
    hp_code rc = HP_OK;
    if (d->failed) {
        *err = d->error;
        return d->error.code;
    }
    if (d->finished)
        return hp_fail(err, HP_E_USAGE, d->pos, -1, 0, 0, 0, "finish after finish");
    d->finished = 1;
    switch (d->state) {
    case D_MAGIC:
        rc = hp_fail(&d->error, HP_E_TRUNCATED, 0, -1, 0, HP_TAILOR_MAGIC_LEN, d->carry.len, NULL);
        break;
    case D_TOP:
        if (d->carry.len)
            rc = hp_fail(&d->error, HP_E_TRUNCATED, d->unit_off, d->carry.data[0], 0,
                         top_size(d->carry.data, d->carry.len), d->carry.len, NULL);
        else if (!d->seen_end)
            rc = hp_fail(&d->error, HP_E_TRUNCATED, d->pos, HP_TAG_HEAP_DUMP_END, 0, 1, 0, NULL);
        break;
    case D_SEG:
        if (d->sub.len) {
            sub_size(d->sub.data, d->sub.len, &size, &restored);
            rc = hp_fail(&d->error, HP_E_TRUNCATED, d->sub_off, d->sub.data[0], 1, size, d->sub.len, NULL);
        } else if (d->payload_left) {
            rc = hp_fail(&d->error, HP_E_TRUNCATED, d->sub_off, d->sub_tag, 1, d->sub_size,
                         d->sub_size - d->payload_left, NULL);
        } else {
            /* Ended inside a segment: no HEAP_DUMP_END closed it. */
            rc = hp_fail(&d->error, HP_E_TRUNCATED, d->pos, HP_TAG_HEAP_DUMP_END, 0, 1, 0, NULL);
        }
        break;
    }
    if (rc == HP_OK)
        return drive(d, NULL, 0, out, err);
    d->failed = 1;
    *err = d->error;
    return rc;
}

hp_tailor_decoder *hp_tailor_decoder_new(const hp_alloc *alloc, const hp_tailor_options *opts)
{
    hp_tailor_decoder *d;
    if (!alloc)
        alloc = &hp_default_alloc;
    d = alloc->malloc_fn(sizeof *d);
    if (!d)
        return NULL;
    memset(d, 0, sizeof *d);
    d->alloc = *alloc;
    d->state = D_MAGIC;
    hp_buf_init(&d->carry, alloc);
    hp_buf_init(&d->sub, alloc);
    hp_heaprec_init(&d->seg, alloc, opts ? opts->max_record : 0, 1);
    d->max_output = opts ? opts->max_output : 0;
    if (hp_writer_init(&d->out, alloc, OUT_CAP) < 0 || hp_buf_reserve(&d->carry, HP_TAILOR_MAGIC_LEN) < 0) {
        hp_tailor_decoder_free(d);
        return NULL;
    }
    return d;
}

void hp_tailor_decoder_free(hp_tailor_decoder *d)
{
    if (!d)
        return;
    hp_buf_free(&d->carry);
    hp_buf_free(&d->sub);
    hp_heaprec_free(&d->seg);
    hp_writer_free(&d->out, &d->alloc);
    d->alloc.free_fn(d);
}

const hp_tailor_counter *hp_tailor_decoder_counter(const hp_tailor_decoder *d) { return &d->counter; }
uint64_t hp_tailor_decoder_bytes_in(const hp_tailor_decoder *d) { return d->bytes_in; }
uint64_t hp_tailor_decoder_bytes_out(const hp_tailor_decoder *d) { return d->out.written; }
