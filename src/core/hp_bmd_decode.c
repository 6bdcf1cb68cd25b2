/* BMD decoder: BMD -> the HPROF Badoo's decruncher writes (hp_bmd.h,
 * docs/bmd.md).
 *
 * The decruncher writes, in this order: the header; the strings, legacy
 * records and a LOAD_CLASS per class definition, in BMD order; a STRING
 * "field_removed"; then one HEAP_DUMP holding the class dumps (in its
 * HashMap's order), the instances, the object arrays, the primitive arrays
 * (zeroed) and the roots (ROOT_UNKNOWN), each kind in BMD order.  The first
 * pass reads the whole BMD, writes all but the heap, holds the class dumps
 * and measures the heap; then one pass per kind of heap object writes it,
 * reading only the part of the input its records lie in.
 *
 * The reader takes the BMD in units of at most a few dozen bytes (a record
 * head, one field, one array element), so a unit cut by the end of a chunk
 * waits in a small carry; string and legacy bytes stream through. */
#include "hp_bmd.h"

#include <stdio.h>
#include <string.h>

#include "hp_bmd_classes.h"
#include "hp_bmd_format.h"

#define OUT_CAP ((size_t)64 << 10)
#define CARRY 96
#define MAX_STRING_DEFAULT ((size_t)1 << 20)
#define MAX_CLASSES_DEFAULT ((size_t)64 << 20)
#define RECORD_MAX 0xFFFFFFFFu
#define FIELD_REMOVED 0x7FFFFFFFu /* the name of the fields put back for dropped ones */
#define MAGIC_MAX 32
#define CLASS_SIZE_AT 33 /* in a CLASS_DUMP: tag, 8 ids and the stack serial, then the instance size */

/* Passes: the first reads everything; then one per section of the heap. */
enum { PASS_READ, SEC_INSTANCES, SEC_OBJECT_ARRAYS, SEC_PRIMITIVE_ARRAYS, SEC_ROOTS, PASS_DONE };
#define SEC_CLASSES 0
#define SECTIONS 5

/* Where the reader is. */
enum {
    R_HEADER, R_TAG,
    R_STRING_HEAD, R_STRING_BYTES, R_HASHED,
    R_CLASS_HEAD, R_CONSTANT, R_STATIC_COUNT, R_STATIC, R_FIELD_COUNT, R_FIELD, R_DROPPED,
    R_INSTANCE_HEAD, R_VALUE,
    R_ARRAY_HEAD, R_ELEMENT, R_PRIMITIVE,
    R_ROOT_COUNT, R_ROOT,
    R_LEGACY_HEAD, R_LEGACY_BYTES
};

typedef struct section {
    uint64_t bytes;            /* its sub-records' HPROF bytes */
    uint64_t first_at, end_at; /* the input its BMD records lie in */
    hp_buf cuts;               /* uint64_t: lengths of its heap records, when cut */
    uint64_t open;             /* bytes of the record being cut */
    int seen;
} section;

struct hp_bmd_decoder {
    hp_alloc alloc;
    size_t max_string;
    uint64_t max_record, max_output;
    const hp_bmd_names *names;
    hp_writer out;
    hp_error error;
    int failed, finished, again, pass;
    uint64_t pos, total; /* input bytes taken this pass; the input's length */
    uint64_t counts[BMD_TAGS], restored;
    uint64_t heap_bytes; /* the heap's sub-records measured by the first pass */

    /* the reader */
    int state, tag;
    uint8_t carry[CARRY];
    size_t carry_len;
    uint64_t rec_at;   /* where the current record starts */
    uint64_t left;     /* items or bytes left in its current part */
    uint32_t id;       /* the record's id (class or string) */
    int writing;       /* the record's sub-records are written in this pass */
    hp_buf held;       /* a STRING's bytes; the CLASS_DUMP being built */
    hp_buf types;      /* ...and its kept fields' types */
    uint32_t super, name, kept_bytes;
    size_t fields_at;  /* where its field count goes */
    uint32_t cls, field; /* an instance's walk: class (index + 1), field in it */

    bmd_classes classes;
    int instances_seen, segmented;
    section sec[SECTIONS];
    size_t cut;        /* a writing pass: its next heap record, */
    uint64_t cut_left; /* ...the bytes left in the open one, */
    uint64_t written;  /* ...and the bytes of its section written */
};

/* The heap section each record tag's sub-records go to, or -1. */
static const signed char section_of[BMD_TAGS] = { -1, -1, -1, -1, SEC_INSTANCES, SEC_ROOTS, SEC_OBJECT_ARRAYS,
                                                  SEC_PRIMITIVE_ARRAYS, -1 };

static const char *const tag_names[BMD_TAGS] = {
    NULL, "STRING", "HASHED_STRING", "CLASS_DEFINITION", "INSTANCE_DUMP", "ROOT_OBJECTS", "OBJECT_ARRAY",
    "PRIMITIVE_ARRAY_PLACEHOLDER", "LEGACY_HPROF_RECORD"
};

const char *hp_bmd_tag_name(int tag) { return tag > 0 && tag < BMD_TAGS ? tag_names[tag] : NULL; }

static const char *const magics[] = { "JAVA PROFILE 1.0", "JAVA PROFILE 1.0.1", "JAVA PROFILE 1.0.2",
                                      "JAVA PROFILE 1.0.3" };

/* ---- errors and output ---- */

/* Fails with `what`, at input offset `at`, in the current record. */
static int bad(hp_bmd_decoder *d, hp_code code, uint64_t at, const char *what)
{
    if (d->state == R_HEADER || d->state == R_TAG)
        hp_failf(&d->error, code, at, -1, 0, "%s at offset %llu (%s)", what, (unsigned long long)at,
                 d->state == R_HEADER ? "in the BMD header" : "where a BMD record starts");
    else
        hp_failf(&d->error, code, at, -1, 0, "%s at offset %llu (in the BMD %s record at offset %llu)", what,
                 (unsigned long long)at, tag_names[d->tag], (unsigned long long)d->rec_at);
    return -1;
}

static int no_memory(hp_bmd_decoder *d, uint64_t at)
{
    hp_fail(&d->error, HP_E_NOMEM, at, -1, 0, 0, 0, "out of memory");
    return -1;
}

static int sink_fail(hp_bmd_decoder *d)
{
    hp_fail(&d->error, HP_E_NOMEM, d->pos, -1, 0, 0, 0, "the output sink refused the bytes");
    return -1;
}

static int put(hp_bmd_decoder *d, const void *p, size_t n)
{
    return n && hp_writer_put(&d->out, p, n) < 0 ? sink_fail(d) : 0; /* p may be NULL (an empty string) */
}

static int put_zeros(hp_bmd_decoder *d, uint64_t n)
{
    return hp_writer_zeros(&d->out, n) < 0 ? sink_fail(d) : 0;
}

/* An HPROF record head: tag, time 0, length. */
static int put_record(hp_bmd_decoder *d, int tag, uint64_t length)
{
    uint8_t h[9];
    h[0] = (uint8_t)tag;
    hp_put32(h + 1, 0);
    hp_put32(h + 5, (uint32_t)length);
    return put(d, h, 9);
}

static int put_string(hp_bmd_decoder *d, uint32_t id, const uint8_t *s, size_t n, uint64_t pad)
{
    uint8_t h[4];
    static const uint8_t plus[64] = "++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++";
    hp_put32(h, id);
    if (put_record(d, HP_TAG_UTF8, 4 + n + pad) < 0 || put(d, h, 4) < 0 || put(d, s, n) < 0)
        return -1;
    for (; pad; pad -= pad < sizeof plus ? pad : sizeof plus)
        if (put(d, plus, pad < sizeof plus ? (size_t)pad : sizeof plus) < 0)
            return -1;
    return 0;
}

/* ---- the heap's records, possibly cut ---- */

static int cut_push(hp_bmd_decoder *d, section *s)
{
    if (hp_buf_append(&s->cuts, &s->open, sizeof s->open) < 0)
        return no_memory(d, d->pos);
    s->open = 0;
    return 0;
}

/* Counts a sub-record of `size` HPROF bytes of section s (first pass),
 * which may take the restored dump past what it may hold. */
static int measure(hp_bmd_decoder *d, int sec, uint64_t size)
{
    section *s = &d->sec[sec];
    uint64_t declared = (d->heap_bytes += size) + hp_writer_pos(&d->out);
    uint64_t limit = hp_restore_limit(d->max_output, d->pos);
    if (declared > limit) {
        char what[64];
        snprintf(what, sizeof what, "the BMD %s record", sec == SEC_CLASSES ? "CLASS_DEFINITION" : tag_names[d->tag]);
        hp_restore_refuse(&d->error, declared, limit, what, d->rec_at, -1, 0);
        return -1;
    }
    s->bytes += size;
    if (s->open && s->open + size > d->max_record && cut_push(d, s) < 0)
        return -1;
    s->open += size;
    return 0;
}

/* Before writing a sub-record of `size` bytes of section `sec`: the head
 * of its heap record when it starts one.  A later pass writes what the
 * first measured, unless the input changed in between. */
static int reserve(hp_bmd_decoder *d, int sec, uint64_t size)
{
    const section *s = &d->sec[sec];
    d->written += size;
    if (d->written > s->bytes)
        return bad(d, HP_E_CORRUPT, d->pos, "the BMD changed between passes");
    if (!d->segmented)
        return 0;
    if (d->cut_left == 0) {
        d->cut_left = ((const uint64_t *)(const void *)s->cuts.data)[d->cut++];
        if (put_record(d, HP_TAG_HEAP_DUMP_SEGMENT, d->cut_left) < 0)
            return -1;
    }
    if (size > d->cut_left)
        return bad(d, HP_E_CORRUPT, d->pos, "the BMD changed between passes");
    d->cut_left -= size;
    return 0;
}

/* ---- units ---- */

/* The bytes a unit is read from: p[0..avail), p[0] at input offset `pos`;
 * `at` of them read so far. */
typedef struct cursor {
    const uint8_t *p;
    size_t avail, at;
    uint64_t pos;
} cursor;

/* The readers below return 1 with the value read, 0 when the input ends
 * inside it (the unit is read again with more), -1 on error; and so do the
 * units, which act only once all they need is read. */

static int get_varint(hp_bmd_decoder *d, cursor *c, uint64_t *v)
{
    int n = bmd_get_varint(c->p + c->at, c->avail - c->at, v);
    if (n > 0)
        c->at += (size_t)n;
    else if (n < 0)
        return bad(d, HP_E_CORRUPT, c->pos + c->at, "a varint that does not end within 10 bytes");
    return n > 0;
}

#define VARINT(v)                                  \
    do {                                           \
        int got_ = get_varint(d, c, &(v));         \
        if (got_ <= 0)                             \
            return got_;                           \
    } while (0)

#define RAW(n, out)                                \
    do {                                           \
        if (c->avail - c->at < (n))                \
            return 0;                              \
        (out) = c->p + c->at;                      \
        c->at += (n);                              \
    } while (0)

/* A count or length: a Java int that must not be negative. */
#define COUNT(v, what)                                                                     \
    do {                                                                                   \
        size_t at_ = c->at;                                                                \
        VARINT(v);                                                                         \
        if ((v) & 0x80000000u)                                                             \
            return bad(d, HP_E_CORRUPT, c->pos + at_, "a negative " what);                 \
        (v) &= 0x7FFFFFFFu;                                                                \
    } while (0)

/* A type code, 0..8. */
#define TYPE(t)                                                                  \
    do {                                                                         \
        size_t at_ = c->at;                                                      \
        VARINT(t);                                                               \
        if ((t) >= BMD_TYPES)                                                    \
            return bad(d, HP_E_CORRUPT, c->pos + at_, "an invalid type code");  \
    } while (0)

/* A value of BMD type t, as its HPROF bytes into out[8] (*n of them). */
static int get_value(hp_bmd_decoder *d, cursor *c, int t, uint8_t out[8], int *n)
{
    uint64_t v = 0;
    const uint8_t *raw;
    int i;
    switch (t) {
    case BMD_T_OBJECT: case BMD_T_INT:
        VARINT(v);
        hp_put32(out, (uint32_t)v);
        *n = 4;
        break;
    case BMD_T_SHORT:
        VARINT(v);
        hp_put16(out, (uint16_t)v);
        *n = 2;
        break;
    case BMD_T_LONG:
        VARINT(v);
        hp_put64(out, v);
        *n = 8;
        break;
    case BMD_T_FLOAT: case BMD_T_DOUBLE:
        *n = t == BMD_T_FLOAT ? 4 : 8;
        RAW((size_t)*n, raw);
        for (i = 0; i < *n; i++) /* little-endian in BMD */
            out[i] = raw[*n - 1 - i];
        break;
    case BMD_T_BOOLEAN:
        RAW(1, raw);
        out[0] = raw[0] != 0;
        *n = 1;
        break;
    case BMD_T_BYTE:
        RAW(1, raw);
        out[0] = raw[0];
        *n = 1;
        break;
    default: /* char */
        RAW(2, raw);
        memcpy(out, raw, 2);
        *n = 2;
        break;
    }
    return 1;
}

#define VALUE(t, out, n)                                        \
    do {                                                        \
        int got_ = get_value(d, c, (int)(t), (out), &(n));      \
        if (got_ <= 0)                                          \
            return got_;                                        \
    } while (0)

static int held_put(hp_bmd_decoder *d, const void *p, size_t n)
{
    return hp_buf_append(&d->held, p, n) < 0 ? no_memory(d, d->pos) : 0;
}

static int held_u4(hp_bmd_decoder *d, uint32_t v)
{
    uint8_t b[4];
    hp_put32(b, v);
    return held_put(d, b, 4);
}

/* ---- records ---- */

/* The end of a record that ends at input offset `end`. */
static void record_done(hp_bmd_decoder *d, uint64_t end)
{
    int s = section_of[d->tag];
    if (d->pass == PASS_READ && s >= 0) {
        if (!d->sec[s].seen)
            d->sec[s].first_at = d->rec_at;
        d->sec[s].seen = 1;
        d->sec[s].end_at = end;
    }
    d->state = R_TAG;
}

/* A STRING: its bytes as Java makes them (malformed UTF-8 replaced). */
static int write_clear_string(hp_bmd_decoder *d)
{
    hp_jstring js;
    hp_buf fixed;
    const uint8_t *bytes;
    int rc;
    hp_jstring_measure(d->held.data, d->held.len, &js);
    hp_buf_init(&fixed, &d->alloc);
    bytes = hp_jstring_bytes(d->held.data, d->held.len, &js, &fixed);
    /* An empty string held no bytes: NULL then is its (empty) text, not a failure. */
    rc = bytes || js.utf8_len == 0 ? put_string(d, d->id, bytes, (size_t)js.utf8_len, 0) : no_memory(d, d->pos);
    hp_buf_free(&fixed);
    return rc;
}

static int write_hashed_string(hp_bmd_decoder *d, uint32_t id, uint32_t length, int32_t hash)
{
    char text[24];
    int n;
    const uint8_t *name = hp_bmd_names_find(d->names, hash, length);
    if (name) {
        d->restored++;
        return put_string(d, id, name, length, 0);
    }
    n = snprintf(text, sizeof text, "Hash$%d", (int)hash);
    return put_string(d, id, (const uint8_t *)text, (size_t)n, length > (uint32_t)n ? length - (uint32_t)n : 0);
}

/* A class definition's last unit: the filler fields, then the class is held
 * and its LOAD_CLASS written. */
static int end_class(hp_bmd_decoder *d, uint32_t dropped, uint64_t at)
{
    uint32_t ints = dropped / 4, bytes = dropped % 4, i, n_fields;
    uint8_t field[5], load[16];
    hp_code rc;
    n_fields = (uint32_t)d->types.len + ints + bytes;
    if (n_fields > 0xFFFF)
        return bad(d, HP_E_LIMIT, at, "more than 65535 instance fields with the dropped ones' fillers");
    hp_put32(field, FIELD_REMOVED);
    for (i = 0; i < ints + bytes; i++) {
        field[4] = i < ints ? HP_T_INT : HP_T_BYTE;
        if (held_put(d, field, 5) < 0)
            return -1;
    }
    hp_put16(d->held.data + d->fields_at, (uint16_t)n_fields);
    hp_put32(d->held.data + CLASS_SIZE_AT, d->kept_bytes + dropped); /* its own fields only, as the decruncher */
    rc = bmd_classes_put(&d->classes, d->id, d->super, d->held.data, (uint32_t)d->held.len, d->types.data,
                         (uint32_t)d->types.len, d->kept_bytes + dropped, dropped);
    if (rc == HP_E_LIMIT)
        return bad(d, HP_E_LIMIT, at, "more class definitions than max_classes bytes hold");
    if (rc != HP_OK)
        return no_memory(d, at);
    /* LOAD_CLASS: serial 0, the class, stack serial 0, its name */
    hp_put32(load, 0);
    hp_put32(load + 4, d->id);
    hp_put32(load + 8, 0);
    hp_put32(load + 12, d->name);
    return put_record(d, HP_TAG_LOAD_CLASS, 16) < 0 || put(d, load, 16) < 0 ? -1 : 0;
}

/* The next field an instance reads: 1 (its type is the walk's), or 0 at its
 * end.  Writing, classes with zeros only are walked too, their zeros put. */
static int next_field(hp_bmd_decoder *d)
{
    while (d->cls) {
        const bmd_class *k = &d->classes.v[d->cls - 1];
        if (d->field < k->n_types)
            return 1;
        if (d->writing && k->zeros && put_zeros(d, k->zeros) < 0)
            return -1;
        d->cls = d->writing ? k->after : k->after_kept;
        d->field = 0;
    }
    return 0;
}

static int field_type(const hp_bmd_decoder *d)
{
    const bmd_class *k = &d->classes.v[d->cls - 1];
    return d->classes.arena.data[k->types + d->field];
}

/* After an instance's head or field: on to the next field, or the end. */
static int instance_step(hp_bmd_decoder *d, uint64_t end)
{
    int more = next_field(d);
    if (more < 0)
        return -1;
    if (more)
        d->state = R_VALUE;
    else
        record_done(d, end);
    return 0;
}

static int on_instance_head(hp_bmd_decoder *d, uint32_t id, uint32_t class_id, uint64_t at, uint64_t end)
{
    bmd_class *k = bmd_classes_get(&d->classes, class_id);
    uint32_t looping;
    hp_code rc;
    uint64_t size;
    uint8_t h[17];
    if (!k)
        return bad(d, HP_E_CORRUPT, at, "an instance of a class no CLASS_DEFINITION before it defines");
    if ((rc = bmd_classes_resolve(&d->classes, k, &looping)) != HP_OK) {
        if (rc != HP_E_CORRUPT)
            return no_memory(d, at);
        return bad(d, HP_E_CORRUPT, at, "an instance whose superclass chain loops");
    }
    size = 17 + k->chain;
    if (size > RECORD_MAX)
        return bad(d, HP_E_LIMIT, at, "an instance of more than 4 GiB");
    d->instances_seen = 1;
    if (d->pass == PASS_READ && measure(d, SEC_INSTANCES, size) < 0)
        return -1;
    if (d->writing) {
        h[0] = HP_SUB_INSTANCE_DUMP;
        hp_put32(h + 1, id);
        hp_put32(h + 5, 0);
        hp_put32(h + 9, class_id);
        hp_put32(h + 13, (uint32_t)k->chain);
        if (reserve(d, SEC_INSTANCES, size) < 0 || put(d, h, 17) < 0)
            return -1;
    }
    d->cls = d->writing ? k->first : k->first_kept;
    d->field = 0;
    return instance_step(d, end);
}

/* Starts the record of tag `tag` (its tag read). */
static int on_tag(hp_bmd_decoder *d, uint64_t tag, uint64_t at)
{
    static const unsigned char first_state[BMD_TAGS] = { 0, R_STRING_HEAD, R_HASHED, R_CLASS_HEAD, R_INSTANCE_HEAD,
                                                         R_ROOT_COUNT, R_ARRAY_HEAD, R_PRIMITIVE, R_LEGACY_HEAD };
    if (tag == 0 || tag >= BMD_TAGS)
        return bad(d, HP_E_CORRUPT, at, "an unknown record tag");
    d->tag = (int)tag;
    d->rec_at = at;
    d->state = first_state[tag];
    d->writing = d->pass != PASS_READ && section_of[tag] == d->pass;
    if (d->pass == PASS_READ) {
        d->counts[tag]++;
        if (tag == BMD_CLASS && d->instances_seen)
            return bad(d, HP_E_CORRUPT, at,
                       "a class definition after an instance (Badoo's tools need every class first)");
    }
    return 0;
}

/* The BMD header: its version and the HPROF magic; the HPROF header. */
static int header_unit(hp_bmd_decoder *d, cursor *c)
{
    uint64_t version = 0, n = 0;
    const uint8_t *magic;
    uint8_t h[MAGIC_MAX + 1 + 12];
    size_t i;
    VARINT(version);
    VARINT(n);
    if (version != BMD_VERSION)
        return bad(d, HP_E_FORMAT, c->pos, "not a BMD of version 1");
    if (n > MAGIC_MAX)
        return bad(d, HP_E_FORMAT, c->pos, "not a BMD: its header is no HPROF version");
    RAW((size_t)n, magic);
    for (i = 0; i < sizeof magics / sizeof magics[0]; i++)
        if (strlen(magics[i]) == n && memcmp(magic, magics[i], (size_t)n) == 0)
            break;
    if (i == sizeof magics / sizeof magics[0])
        return bad(d, HP_E_FORMAT, c->pos, "not a BMD: its header is no HPROF version");
    if (d->pass == PASS_READ) { /* the magic, its NUL, id size 4, timestamp 0 */
        memcpy(h, magic, (size_t)n);
        memset(h + n, 0, 13);
        h[n + 4] = 4;
        if (put(d, h, (size_t)n + 13) < 0)
            return -1;
    }
    d->state = R_TAG;
    return 1;
}

static int string_unit(hp_bmd_decoder *d, cursor *c)
{
    uint64_t id = 0, length = 0, hash = 0;
    int first = d->pass == PASS_READ;
    VARINT(id);
    COUNT(length, "string length");
    if (d->state == R_HASHED)
        VARINT(hash);
    if (length > d->max_string) /* a name no VM writes: a few bytes that would be gigabytes */
        return bad(d, HP_E_CORRUPT, c->pos, d->state == R_HASHED ? "a hashed string claiming more bytes than max_string"
                                                                 : "a string longer than max_string");
    if (d->state == R_HASHED) {
        if (first && write_hashed_string(d, (uint32_t)id, (uint32_t)length, (int32_t)(uint32_t)hash) < 0)
            return -1;
        record_done(d, c->pos + c->at);
        return 1;
    }
    d->id = (uint32_t)id;
    d->left = length;
    d->held.len = 0;
    d->state = R_STRING_BYTES; /* its bytes stream through */
    if (length == 0) {
        if (first && write_clear_string(d) < 0)
            return -1;
        record_done(d, c->pos + c->at);
    }
    return 1;
}

/* A CLASS_DEFINITION's head: the CLASS_DUMP begins (first pass). */
static int class_head_unit(hp_bmd_decoder *d, cursor *c)
{
    static const uint8_t zeros[6 * 4] = { 0 }; /* loader, signers, protection domain, 2 reserved, the size */
    uint64_t id = 0, super = 0, name = 0, constants = 0;
    uint8_t count[2];
    VARINT(id);
    VARINT(super);
    VARINT(name);
    COUNT(constants, "constant count");
    if (constants > 0xFFFF)
        return bad(d, HP_E_LIMIT, c->pos, "more than 65535 constants");
    if (d->pass == PASS_READ) {
        d->id = (uint32_t)id;
        d->super = (uint32_t)super;
        d->name = (uint32_t)name;
        d->held.len = 0;
        d->types.len = 0;
        d->kept_bytes = 0;
        hp_put16(count, (uint16_t)constants);
        if (held_put(d, "\x20", 1) < 0 || held_u4(d, d->id) < 0 || held_u4(d, 0) < 0 || held_u4(d, d->super) < 0 ||
            held_put(d, zeros, sizeof zeros) < 0 || held_put(d, count, 2) < 0)
            return -1;
    }
    d->field = (uint32_t)constants; /* items left in the table */
    d->state = constants ? R_CONSTANT : R_STATIC_COUNT;
    return 1;
}

/* The rest of a CLASS_DEFINITION: a table's count, one of its items, or
 * the dropped fields' bytes that end it. */
static int class_item_unit(hp_bmd_decoder *d, cursor *c)
{
    static const unsigned char next[] = { [R_CONSTANT] = R_STATIC_COUNT, [R_STATIC] = R_FIELD_COUNT,
                                          [R_FIELD] = R_DROPPED };
    int first = d->pass == PASS_READ, n = 0;
    uint64_t key = 0, t = 0;
    uint8_t item[5 + 8];
    if (d->state == R_DROPPED) {
        COUNT(key, "size of dropped fields");
        if (first && end_class(d, (uint32_t)key, c->pos) < 0)
            return -1;
        record_done(d, c->pos + c->at);
        return 1;
    }
    if (d->state == R_STATIC_COUNT || d->state == R_FIELD_COUNT) {
        COUNT(key, "field count");
        if (key > 0xFFFF)
            return bad(d, HP_E_LIMIT, c->pos, "more than 65535 fields");
        if (first) {
            if (d->state == R_FIELD_COUNT)
                d->fields_at = d->held.len;
            hp_put16(item, (uint16_t)key);
            if (held_put(d, item, 2) < 0)
                return -1;
        }
        d->field = (uint32_t)key;
        d->state = d->state == R_STATIC_COUNT ? (key ? R_STATIC : R_FIELD_COUNT) : (key ? R_FIELD : R_DROPPED);
        return 1;
    }
    /* constant: pool index, type, value; static: name, type, value; field: name, type */
    VARINT(key);
    TYPE(t);
    if (d->state != R_FIELD)
        VALUE(t, item + 5, n);
    if (first) {
        int keylen = d->state == R_CONSTANT ? 2 : 4;
        uint8_t bt = (uint8_t)t;
        if (keylen == 2)
            hp_put16(item, (uint16_t)key);
        else
            hp_put32(item, (uint32_t)key);
        item[keylen] = (uint8_t)bmd_to_hprof_type((int)t);
        if (held_put(d, item, (size_t)keylen + 1) < 0 || held_put(d, item + 5, (size_t)n) < 0)
            return -1;
        if (d->state == R_FIELD) {
            d->kept_bytes += (uint32_t)hp_type_size(item[keylen], 4);
            if (hp_buf_append(&d->types, &bt, 1) < 0)
                return no_memory(d, c->pos);
        }
    }
    if (--d->field == 0)
        d->state = next[d->state];
    return 1;
}

static int instance_unit(hp_bmd_decoder *d, cursor *c)
{
    uint64_t id = 0, class_id = 0;
    uint8_t v[8];
    int n = 0;
    if (d->state == R_INSTANCE_HEAD) {
        VARINT(id);
        VARINT(class_id);
        return on_instance_head(d, (uint32_t)id, (uint32_t)class_id, c->pos, c->pos + c->at) < 0 ? -1 : 1;
    }
    VALUE(field_type(d), v, n);
    if (d->writing && put(d, v, (size_t)n) < 0)
        return -1;
    d->field++;
    return instance_step(d, c->pos + c->at) < 0 ? -1 : 1;
}

/* An object array's head or one of its elements, or a primitive array. */
static int array_unit(hp_bmd_decoder *d, cursor *c)
{
    uint64_t id = 0, class_or_type = 0, count = 0, size;
    uint8_t h[17];
    int sec = d->state == R_PRIMITIVE ? SEC_PRIMITIVE_ARRAYS : SEC_OBJECT_ARRAYS, type = HP_T_OBJECT;
    if (d->state == R_ELEMENT) {
        VARINT(id);
        hp_put32(h, (uint32_t)id);
        if (d->writing && put(d, h, 4) < 0)
            return -1;
        if (--d->left == 0)
            record_done(d, c->pos + c->at);
        return 1;
    }
    VARINT(id);
    if (d->state == R_PRIMITIVE)
        TYPE(class_or_type);
    else
        VARINT(class_or_type);
    COUNT(count, "array length");
    if (d->state == R_PRIMITIVE) {
        if (class_or_type == BMD_T_OBJECT)
            return bad(d, HP_E_CORRUPT, c->pos, "a primitive array of objects");
        type = bmd_to_hprof_type((int)class_or_type);
    }
    size = (type == HP_T_OBJECT ? 17 : 14) + count * (uint64_t)hp_type_size(type, 4);
    if (size > RECORD_MAX)
        return bad(d, HP_E_LIMIT, c->pos, "an array of more than 4 GiB");
    if (d->pass == PASS_READ && measure(d, sec, size) < 0)
        return -1;
    if (d->writing) { /* tag, id, stack serial 0, count, then the element class or the type */
        h[0] = type == HP_T_OBJECT ? HP_SUB_OBJ_ARRAY_DUMP : HP_SUB_PRIM_ARRAY_DUMP;
        hp_put32(h + 1, (uint32_t)id);
        hp_put32(h + 5, 0);
        hp_put32(h + 9, (uint32_t)count);
        if (type == HP_T_OBJECT)
            hp_put32(h + 13, (uint32_t)class_or_type);
        else
            h[13] = (uint8_t)type;
        if (reserve(d, sec, size) < 0 || put(d, h, type == HP_T_OBJECT ? 17 : 14) < 0)
            return -1;
        if (type != HP_T_OBJECT && put_zeros(d, size - 14) < 0)
            return -1;
    }
    d->left = count;
    if (type == HP_T_OBJECT && count)
        d->state = R_ELEMENT;
    else
        record_done(d, c->pos + c->at);
    return 1;
}

static int root_unit(hp_bmd_decoder *d, cursor *c)
{
    uint64_t v = 0;
    uint8_t h[5];
    if (d->state == R_ROOT_COUNT) {
        COUNT(v, "root count");
        d->left = v;
        if (v == 0)
            record_done(d, c->pos + c->at);
        else
            d->state = R_ROOT;
        return 1;
    }
    VARINT(v);
    if (d->pass == PASS_READ && measure(d, SEC_ROOTS, 5) < 0)
        return -1;
    if (d->writing) {
        h[0] = HP_SUB_ROOT_UNKNOWN;
        hp_put32(h + 1, (uint32_t)v);
        if (reserve(d, SEC_ROOTS, 5) < 0 || put(d, h, 5) < 0)
            return -1;
    }
    if (--d->left == 0)
        record_done(d, c->pos + c->at);
    return 1;
}

/* A LEGACY_HPROF_RECORD's head: its HPROF record's head (its body streams through). */
static int legacy_unit(hp_bmd_decoder *d, cursor *c)
{
    uint64_t tag = 0, length = 0;
    VARINT(tag);
    COUNT(length, "record length");
    if (tag > 0xFF || tag == HP_TAG_UTF8 || tag == HP_TAG_LOAD_CLASS || hp_is_heap_tag((int)tag) ||
        tag == HP_TAG_HEAP_DUMP_END)
        return bad(d, HP_E_CORRUPT, c->pos, "a legacy record of a kind BMD itself holds");
    if (d->pass == PASS_READ && put_record(d, (int)tag, length) < 0)
        return -1;
    d->left = length;
    if (length == 0)
        record_done(d, c->pos + c->at);
    else
        d->state = R_LEGACY_BYTES;
    return 1;
}

/* Reads one unit from p[0..avail) (p[0] at d->pos) and acts on it: the
 * bytes it took, 0 when the input ends inside it, -1 on error. */
static int unit(hp_bmd_decoder *d, const uint8_t *p, size_t avail)
{
    cursor c = { p, avail, 0, 0 };
    uint64_t tag = 0;
    int rc;
    c.pos = d->pos;
    switch (d->state) {
    case R_HEADER:
        rc = header_unit(d, &c);
        break;
    case R_TAG:
        rc = get_varint(d, &c, &tag);
        if (rc > 0 && on_tag(d, tag, c.pos) < 0)
            rc = -1;
        break;
    case R_STRING_HEAD: case R_HASHED:
        rc = string_unit(d, &c);
        break;
    case R_CLASS_HEAD:
        rc = class_head_unit(d, &c);
        break;
    case R_CONSTANT: case R_STATIC_COUNT: case R_STATIC: case R_FIELD_COUNT: case R_FIELD: case R_DROPPED:
        rc = class_item_unit(d, &c);
        break;
    case R_INSTANCE_HEAD: case R_VALUE:
        rc = instance_unit(d, &c);
        break;
    case R_ARRAY_HEAD: case R_ELEMENT: case R_PRIMITIVE:
        rc = array_unit(d, &c);
        break;
    case R_ROOT_COUNT: case R_ROOT:
        rc = root_unit(d, &c);
        break;
    case R_LEGACY_HEAD:
        rc = legacy_unit(d, &c);
        break;
    default:
        return bad(d, HP_E_USAGE, d->pos, "reader out of step");
    }
    return rc > 0 ? (int)c.at : rc;
}

/* String or legacy bytes: taken as they come. */
static int raw_bytes(hp_bmd_decoder *d, const uint8_t *p, size_t n)
{
    if (d->pass == PASS_READ) {
        if (d->state == R_LEGACY_BYTES && put(d, p, n) < 0)
            return -1;
        if (d->state == R_STRING_BYTES && held_put(d, p, n) < 0)
            return -1;
    }
    d->left -= n;
    d->pos += n;
    if (d->left == 0) {
        if (d->state == R_STRING_BYTES && d->pass == PASS_READ && write_clear_string(d) < 0)
            return -1;
        record_done(d, d->pos);
    }
    return 0;
}

static int process(hp_bmd_decoder *d, const uint8_t *data, size_t len)
{
    while (len) {
        int r;
        if (d->pass != PASS_READ) { /* outside its section's records, a pass skips */
            const section *s = &d->sec[d->pass];
            uint64_t skip = d->pos < s->first_at ? s->first_at - d->pos : d->pos >= s->end_at ? len : 0;
            if (skip) {
                size_t n = skip < len ? (size_t)skip : len;
                d->pos += n;
                data += n;
                len -= n;
                continue;
            }
        }
        if (d->state == R_STRING_BYTES || d->state == R_LEGACY_BYTES) {
            size_t n = d->left < len ? (size_t)d->left : len;
            if (raw_bytes(d, data, n) < 0)
                return -1;
            data += n;
            len -= n;
            continue;
        }
        if (d->carry_len) {
            size_t had = d->carry_len, take = CARRY - had < len ? CARRY - had : len;
            memcpy(d->carry + had, data, take);
            r = unit(d, d->carry, had + take);
            if (r < 0)
                return -1;
            if (r == 0) {
                if (had + take == CARRY)
                    return bad(d, HP_E_USAGE, d->pos, "a unit longer than the reader's carry");
                d->carry_len += take;
                return 0;
            }
            d->pos += (size_t)r;
            data += (size_t)r - had;
            len -= (size_t)r - had;
            d->carry_len = 0;
            continue;
        }
        r = unit(d, data, len);
        if (r < 0)
            return -1;
        if (r == 0) {
            if (len >= CARRY)
                return bad(d, HP_E_USAGE, d->pos, "a unit longer than the reader's carry");
            memcpy(d->carry, data, len);
            d->carry_len = len;
            return 0;
        }
        d->pos += (size_t)r;
        data += r;
        len -= (size_t)r;
    }
    return 0;
}

/* ---- passes ---- */

/* End of the first pass: the rest of what precedes the heap, the heap's
 * head and its class dumps. */
static int write_classes(hp_bmd_decoder *d)
{
    static const uint8_t removed[] = "field_removed";
    uint64_t total = 0;
    uint32_t *order;
    size_t i;
    int s, rc = 0;
    if (put_string(d, FIELD_REMOVED, removed, sizeof removed - 1, 0) < 0)
        return -1;
    if (!(order = bmd_classes_hash_order(&d->classes)))
        return no_memory(d, d->pos);
    for (i = 0; rc == 0 && i < d->classes.n; i++)
        rc = measure(d, SEC_CLASSES, d->classes.v[order[i]].dump_len);
    for (s = 0; rc == 0 && s < SECTIONS; s++) {
        if (d->sec[s].open)
            rc = cut_push(d, &d->sec[s]);
        total += d->sec[s].bytes;
    }
    d->segmented = total > d->max_record;
    if (rc == 0 && !d->segmented)
        rc = put_record(d, HP_TAG_HEAP_DUMP, total);
    for (i = 0; rc == 0 && i < d->classes.n; i++) {
        const bmd_class *k = &d->classes.v[order[i]];
        rc = reserve(d, SEC_CLASSES, k->dump_len) < 0 ? -1 : put(d, d->classes.arena.data + k->dump, k->dump_len);
    }
    d->alloc.free_fn(order);
    return rc;
}

static int next_pass(hp_bmd_decoder *d)
{
    int s = d->pass + 1;
    while (s < PASS_DONE && d->sec[s].bytes == 0)
        s++;
    d->pass = s;
    d->pos = 0;
    d->cut = 0;
    d->cut_left = 0;
    d->written = 0;
    d->state = R_TAG; /* later passes start at a record of their section */
    if (s != PASS_DONE) {
        d->again = 1;
        return 0;
    }
    return d->segmented ? put_record(d, HP_TAG_HEAP_DUMP_END, 0) : 0;
}

static hp_code end_pass(hp_bmd_decoder *d)
{
    uint64_t end = d->pos + d->carry_len;
    if (d->state == R_HEADER)
        return end ? hp_failf(&d->error, HP_E_TRUNCATED, 0, -1, 0,
                              "truncated BMD header: the input ends at offset %llu", (unsigned long long)end)
                   : hp_fail(&d->error, HP_E_FORMAT, 0, -1, 0, 0, 0, "empty input");
    if (d->state != R_TAG || d->carry_len) {
        uint64_t at = d->state == R_TAG ? d->pos : d->rec_at;
        return hp_failf(&d->error, HP_E_TRUNCATED, at, -1, 0,
                        "truncated BMD %s record at offset %llu: the input ends at offset %llu inside it",
                        d->state == R_TAG ? "next" : tag_names[d->tag], (unsigned long long)at,
                        (unsigned long long)end);
    }
    if (d->pass == PASS_READ) {
        d->total = d->pos;
        if (write_classes(d) < 0)
            return d->error.code;
    } else if (d->pos != d->total || d->written != d->sec[d->pass].bytes) {
        return hp_failf(&d->error, HP_E_CORRUPT, d->pos, -1, 0,
                        "the BMD changed between passes: %llu bytes, then %llu "
                        "(heap section %d: %llu bytes, then %llu)",
                        (unsigned long long)d->total, (unsigned long long)d->pos, d->pass,
                        (unsigned long long)d->sec[d->pass].bytes, (unsigned long long)d->written);
    }
    return next_pass(d) < 0 ? d->error.code : HP_OK;
}

static hp_code drive(hp_bmd_decoder *d, const uint8_t *data, size_t len, int is_last, const hp_sink *out,
                     hp_error *err)
{
    hp_code rc = HP_OK;
    if (d->failed) {
        *err = d->error;
        return d->error.code;
    }
    if (d->finished)
        return hp_fail(err, HP_E_USAGE, d->pos, -1, 0, 0, 0, "feed or finish after the last pass");
    d->again = 0;
    d->out.sink = out;
    if (process(d, data, len) < 0)
        rc = d->error.code;
    if (rc == HP_OK && is_last)
        rc = end_pass(d);
    if (rc == HP_OK && hp_writer_flush(&d->out) < 0) {
        sink_fail(d);
        rc = HP_E_NOMEM;
    }
    if (rc != HP_OK) {
        d->failed = 1;
        *err = d->error;
        return rc;
    }
    if (is_last && d->pass == PASS_DONE)
        d->finished = 1;
    return HP_OK;
}

hp_code hp_bmd_decoder_feed(hp_bmd_decoder *d, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    return drive(d, data, len, 0, out, err);
}

hp_code hp_bmd_decoder_finish(hp_bmd_decoder *d, const hp_sink *out, hp_error *err)
{
    return drive(d, NULL, 0, 1, out, err);
}

hp_bmd_decoder *hp_bmd_decoder_new(const hp_alloc *alloc, const hp_bmd_options *opts)
{
    hp_bmd_decoder *d;
    int s;
    if (!alloc)
        alloc = &hp_default_alloc;
    d = alloc->malloc_fn(sizeof *d);
    if (!d)
        return NULL;
    memset(d, 0, sizeof *d);
    d->alloc = *alloc;
    d->max_string = opts && opts->max_string ? opts->max_string : MAX_STRING_DEFAULT;
    d->max_output = opts ? opts->max_output : 0;
    d->max_record = opts && opts->max_heap_record && opts->max_heap_record < RECORD_MAX ? opts->max_heap_record
                                                                                       : RECORD_MAX;
    d->names = opts ? opts->names : NULL;
    d->state = R_HEADER;
    bmd_classes_init(&d->classes, alloc, opts && opts->max_classes ? opts->max_classes : MAX_CLASSES_DEFAULT);
    hp_buf_init(&d->held, alloc);
    hp_buf_init(&d->types, alloc);
    for (s = 0; s < SECTIONS; s++)
        hp_buf_init(&d->sec[s].cuts, alloc);
    if (hp_writer_init(&d->out, alloc, OUT_CAP) < 0) {
        hp_bmd_decoder_free(d);
        return NULL;
    }
    return d;
}

void hp_bmd_decoder_free(hp_bmd_decoder *d)
{
    int s;
    if (!d)
        return;
    hp_writer_free(&d->out, &d->alloc);
    bmd_classes_free(&d->classes);
    hp_buf_free(&d->held);
    hp_buf_free(&d->types);
    for (s = 0; s < SECTIONS; s++)
        hp_buf_free(&d->sec[s].cuts);
    d->alloc.free_fn(d);
}

int hp_bmd_decoder_again(const hp_bmd_decoder *d) { return d->again; }

int hp_bmd_decoder_passes(const hp_bmd_decoder *d)
{
    int s, n = 1;
    if (d->pass == PASS_READ)
        return 2;
    for (s = SEC_INSTANCES; s < SECTIONS; s++)
        n += d->sec[s].bytes != 0;
    return n;
}
uint64_t hp_bmd_decoder_bytes_in(const hp_bmd_decoder *d) { return d->pass == PASS_READ ? d->pos : d->total; }
uint64_t hp_bmd_decoder_bytes_out(const hp_bmd_decoder *d) { return d->out.written; }
const uint64_t *hp_bmd_decoder_counts(const hp_bmd_decoder *d) { return d->counts; }
uint64_t hp_bmd_decoder_restored(const hp_bmd_decoder *d) { return d->restored; }
