/* BMD encoder: HPROF -> BMD as Badoo's cruncher writes it (hp_bmd.h,
 * docs/bmd.md), driven by hp_parser events over two or three passes.
 *
 *  1. strings, legacy records and class definitions, in dump order; a
 *     CLASS_DUMP that comes before its LOAD_CLASS (which the cruncher
 *     refuses) waits for
 *  1b. the late class definitions, in dump order;
 *  2. instances and arrays in dump order, then the GC roots.
 * Identifiers are numbered from 1 in the order this writes them, strings
 * and objects apart (0 stays 0): so the class definitions' numbers come
 * first, as in the cruncher's output. */
#include "hp_bmd.h"

#include <string.h>

#include "hp_bmd_format.h"
#include "hp_idmap.h"
#include "hp_parser.h"

#define OUT_CAP ((size_t)64 << 10)
#define MAX_STRING_DEFAULT ((size_t)64 << 20)
#define PRESERVED 0x80000000u /* string map: the string is written in clear */
#define LAST_NUMBER 0x7FFFFFFFu /* BMD numbers are Java ints */

enum { PASS_DEFS = 1, PASS_LATE_DEFS, PASS_OBJECTS, PASS_DONE };

/* klass.flags */
enum { K_LOADED = 1, K_DUMPED = 2, K_PRESERVED = 4, K_CHAIN = 8, K_BUSY = 16 };

/* A class of the dump (from its LOAD_CLASS and CLASS_DUMP), by HPROF id. */
typedef struct klass {
    uint64_t id, name, super;
    size_t types;      /* its instance fields' HPROF types, at e->types.data + types */
    uint32_t n_types;
    uint32_t own;      /* bytes of its own instance fields */
    uint32_t flags;
    /* The chain, once resolved (K_CHAIN): an instance's fields are those of
     * `first` (index + 1: this class or the nearest superclass with fields,
     * 0 none), then of its `after`, and so on; `chain` bytes in all. */
    uint32_t first, after;
    uint64_t chain;
} klass;

struct hp_bmd_encoder {
    hp_alloc alloc;
    size_t max_string;
    hp_parser *parser;
    hp_error error;
    int failed, finished, again, pass;
    int id_size;
    hp_writer out;
    uint64_t bytes_in, total; /* this pass; the first pass's */
    uint64_t counts[BMD_TAGS];

    hp_idmap strings, objects; /* HPROF id -> BMD number (strings: | PRESERVED) */
    uint32_t next_string, next_object;

    /* Growable arrays are hp_bufs of their items. */
    hp_idmap class_index; /* class id -> index into classes */
    hp_buf classes;       /* klass */
    hp_buf types;
    hp_buf late;          /* uint64_t, pass 1: CLASS_DUMPs (their order among all) that wait for pass 1b */
    size_t late_next;
    uint64_t class_dumps; /* CLASS_DUMPs seen this pass */
    uint64_t objects_seen; /* pass 1: instances, arrays and roots (none: no pass 2) */
    hp_buf roots;         /* uint64_t */
    hp_buf chain_path;    /* uint64_t */

    /* the record or sub-record being read */
    int record;          /* its tag, -1 when it is skipped */
    hp_buf held;         /* a STRING's body or an instance's fields, when they come in pieces */
    const klass *instance_class;
    uint64_t payload_left;
    uint8_t id_carry[8]; /* an object array's element cut between two pieces */
    int id_carry_len;
};

/* ---- output ---- */

static hp_code no_memory(hp_bmd_encoder *e, uint64_t offset, int tag, int is_sub)
{
    return hp_fail(&e->error, HP_E_NOMEM, offset, tag, is_sub, 0, 0, "out of memory");
}

static hp_code sink_fail(hp_bmd_encoder *e)
{
    return hp_fail(&e->error, HP_E_NOMEM, e->bytes_in, -1, 0, 0, 0, "the output sink refused the bytes");
}

static int put_varint(hp_bmd_encoder *e, uint64_t v)
{
    uint8_t b[HP_VARINT_MAX];
    return hp_writer_put(&e->out, b, hp_put_varint(b, v));
}

static int put_int32(hp_bmd_encoder *e, int32_t v)
{
    uint8_t b[HP_VARINT_MAX];
    return hp_writer_put(&e->out, b, bmd_put_int32(b, v));
}

static int put_tag(hp_bmd_encoder *e, int tag)
{
    e->counts[tag]++;
    return put_varint(e, (uint64_t)tag);
}

/* ---- numbering ---- */

/* The BMD number of HPROF id `id` in `map` (with its flags), the next one
 * if it has none yet; 0 stays 0.  Sets *code when there are no numbers
 * left or memory ran out. */
static uint32_t number(hp_idmap *map, uint32_t *next, uint64_t id, hp_code *code)
{
    int inserted;
    uint32_t *slot;
    if (id == 0)
        return 0;
    if (!(slot = hp_idmap_put(map, id, *next, &inserted))) {
        *code = HP_E_NOMEM;
        return 0;
    }
    if (inserted && (*next)++ > LAST_NUMBER) {
        *code = HP_E_LIMIT;
        return 0;
    }
    return *slot;
}

static hp_code number_fail(hp_bmd_encoder *e, hp_code code, uint64_t offset, int tag, int is_sub)
{
    if (code == HP_E_NOMEM)
        return hp_fail(&e->error, HP_E_NOMEM, offset, tag, is_sub, 0, 0, "out of memory numbering identifiers");
    return hp_fail(&e->error, HP_E_LIMIT, offset, tag, is_sub, 0, 0,
                   "more than 2^31 - 1 identifiers: BMD numbers them as Java ints");
}

/* Puts the BMD number of an object / a string id; 0 or -1 (e->error set). */
static int put_number(hp_bmd_encoder *e, int is_string, uint64_t id, uint64_t offset, int tag, int is_sub)
{
    hp_code code = HP_OK;
    uint32_t n = is_string ? number(&e->strings, &e->next_string, id, &code) & ~PRESERVED
                           : number(&e->objects, &e->next_object, id, &code);
    if (code != HP_OK)
        return number_fail(e, code, offset, tag, is_sub), -1;
    return put_varint(e, n) < 0 ? (sink_fail(e), -1) : 0;
}

static int put_object(hp_bmd_encoder *e, uint64_t id, uint64_t offset, int tag, int is_sub)
{
    return put_number(e, 0, id, offset, tag, is_sub);
}

static int put_string(hp_bmd_encoder *e, uint64_t id, uint64_t offset, int tag, int is_sub)
{
    return put_number(e, 1, id, offset, tag, is_sub);
}

/* ---- values ---- */

/* Puts an HPROF value of type `type` at p as the cruncher does: numbers as
 * varints, floating point raw little-endian, booleans, bytes and chars as
 * their bytes.  0 or -1 (e->error set). */
static int put_value(hp_bmd_encoder *e, int type, const uint8_t *p, uint64_t offset, int tag)
{
    uint8_t b[8];
    int i, rc;
    switch (type) {
    case HP_T_OBJECT:
        return put_object(e, hp_read_id(p, e->id_size), offset, tag, 1);
    case HP_T_SHORT:
        rc = put_int32(e, (int16_t)hp_be16(p));
        break;
    case HP_T_INT:
        rc = put_int32(e, (int32_t)hp_be32(p));
        break;
    case HP_T_LONG:
        rc = put_varint(e, hp_be64(p));
        break;
    case HP_T_FLOAT: case HP_T_DOUBLE: {
        int n = type == HP_T_FLOAT ? 4 : 8;
        for (i = 0; i < n; i++)
            b[i] = p[n - 1 - i];
        rc = hp_writer_put(&e->out, b, (size_t)n);
        break;
    }
    case HP_T_CHAR:
        rc = hp_writer_put(&e->out, p, 2);
        break;
    default: /* boolean, byte */
        rc = hp_writer_put(&e->out, p, 1);
        break;
    }
    return rc < 0 ? (sink_fail(e), -1) : 0;
}

/* ---- the class table ---- */

static klass *class_at(const hp_bmd_encoder *e, size_t i) { return (klass *)(void *)e->classes.data + i; }
static size_t class_count(const hp_bmd_encoder *e) { return e->classes.len / sizeof(klass); }
static uint64_t *u64s(const hp_buf *b) { return (uint64_t *)(void *)b->data; }
static size_t u64_count(const hp_buf *b) { return b->len / sizeof(uint64_t); }
static int push_u64(hp_buf *b, uint64_t v) { return hp_buf_append(b, &v, sizeof v); }

static klass *class_of(hp_bmd_encoder *e, uint64_t id)
{
    uint32_t *slot = hp_idmap_get(&e->class_index, id);
    return slot ? class_at(e, *slot) : NULL;
}

static klass *class_add(hp_bmd_encoder *e, uint64_t id)
{
    int inserted;
    uint32_t *slot;
    klass k;
    if (class_count(e) >= 0xFFFFFFFEu ||
        !(slot = hp_idmap_put(&e->class_index, id, (uint32_t)class_count(e), &inserted)))
        return NULL;
    if (!inserted)
        return class_at(e, *slot);
    memset(&k, 0, sizeof k);
    k.id = id;
    return hp_buf_append(&e->classes, &k, sizeof k) < 0 ? NULL : class_at(e, class_count(e) - 1);
}

/* Resolves the chain of class k (and of the superclasses on the way, each
 * once): HP_OK, or HP_E_CORRUPT when it loops. */
static hp_code resolve_chain(hp_bmd_encoder *e, klass *k, uint64_t offset)
{
    klass *x = k;
    uint32_t first = 0;
    uint64_t chain = 0;
    e->chain_path.len = 0;
    while (x && !(x->flags & K_CHAIN)) {
        if (x->flags & K_BUSY)
            return hp_failf(&e->error, HP_E_CORRUPT, offset, HP_SUB_INSTANCE_DUMP, 1,
                            "the superclass chain of class 0x%llx loops (INSTANCE_DUMP at offset %llu)",
                            (unsigned long long)k->id, (unsigned long long)offset);
        x->flags |= K_BUSY;
        if (push_u64(&e->chain_path, (uint64_t)(x - class_at(e, 0))) < 0)
            return no_memory(e, offset, HP_SUB_INSTANCE_DUMP, 1);
        x = (x->flags & K_DUMPED) && x->super ? class_of(e, x->super) : NULL;
    }
    if (x) {
        first = x->first;
        chain = x->chain;
    }
    while (e->chain_path.len) {
        e->chain_path.len -= sizeof(uint64_t);
        x = class_at(e, u64s(&e->chain_path)[u64_count(&e->chain_path)]);
        x->after = first;
        x->chain = chain + x->own;
        x->first = x->n_types ? (uint32_t)(x - class_at(e, 0)) + 1 : first;
        x->flags = (x->flags & ~(uint32_t)K_BUSY) | K_CHAIN;
        first = x->first;
        chain = x->chain;
    }
    return HP_OK;
}

/* ---- records of the first pass ---- */

static hp_code on_header(hp_bmd_encoder *e, const hp_header *h)
{
    size_t n = strlen(h->magic);
    e->id_size = h->id_size;
    if (e->pass != PASS_DEFS)
        return HP_OK;
    if (put_varint(e, BMD_VERSION) < 0 || put_varint(e, n) < 0 || hp_writer_put(&e->out, h->magic, n) < 0)
        return sink_fail(e);
    return HP_OK;
}

/* Whether the cruncher keeps a string in clear: java.lang names, and the
 * primitive types' (its list of preserved classes is empty). */
static int kept_in_clear(const uint8_t *s, size_t n)
{
    static const char *const names[] = { "V", "boolean", "byte", "short", "char", "int", "long", "float", "double" };
    size_t i;
    if (n >= 9 && memcmp(s, "java.lang", 9) == 0)
        return 1;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == n && memcmp(s, names[i], n) == 0)
            return 1;
    return 0;
}

static hp_code on_string(hp_bmd_encoder *e, const uint8_t *body, size_t len, uint64_t offset)
{
    hp_code code = HP_OK;
    const uint8_t *text = body + e->id_size;
    size_t n = len - (size_t)e->id_size;
    uint32_t id = number(&e->strings, &e->next_string, hp_read_id(body, e->id_size), &code);
    hp_jstring js;
    hp_buf fixed;
    const uint8_t *bytes;
    uint32_t *slot;
    hp_code rc;
    if (code != HP_OK)
        return number_fail(e, code, offset, HP_TAG_UTF8, 0);
    id &= ~PRESERVED;
    hp_jstring_measure(text, n, &js);
    if (!kept_in_clear(text, n)) {
        if (put_tag(e, BMD_HASHED_STRING) < 0 || put_varint(e, id) < 0 || put_varint(e, (uint32_t)js.utf8_len) < 0 ||
            put_int32(e, js.hash) < 0)
            return sink_fail(e);
        return HP_OK;
    }
    if (id && (slot = hp_idmap_get(&e->strings, hp_read_id(body, e->id_size))) != NULL)
        *slot |= PRESERVED;
    if (put_tag(e, BMD_STRING) < 0 || put_varint(e, id) < 0 || put_varint(e, (uint32_t)js.utf8_len) < 0)
        return sink_fail(e);
    hp_buf_init(&fixed, &e->alloc); /* a kept string is written as Java re-encodes it */
    bytes = hp_jstring_bytes(text, n, &js, &fixed);
    rc = !bytes ? no_memory(e, offset, HP_TAG_UTF8, 0)
                : hp_writer_put(&e->out, bytes, (size_t)js.utf8_len) < 0 ? sink_fail(e) : HP_OK;
    hp_buf_free(&fixed);
    return rc;
}

static hp_code on_load_class(hp_bmd_encoder *e, const uint8_t *body, size_t len, uint64_t offset)
{
    klass *k;
    if (len != (size_t)(8 + 2 * e->id_size))
        return hp_fail(&e->error, HP_E_CORRUPT, offset, HP_TAG_LOAD_CLASS, 0, 0, 0,
                       "LOAD_CLASS body is not 8 bytes and two ids");
    if (!(k = class_add(e, hp_read_id(body + 4, e->id_size))))
        return no_memory(e, offset, HP_TAG_LOAD_CLASS, 0);
    k->name = hp_read_id(body + 8 + e->id_size, e->id_size);
    k->flags |= K_LOADED;
    return HP_OK;
}

/* Records a CLASS_DUMP's superclass and instance field types in its class
 * (a dump with no fields keeps those of an earlier one, as the cruncher's
 * class model does). */
static hp_code remember_class(hp_bmd_encoder *e, const hp_event *ev, const hp_class_layout *lay, klass *k)
{
    const uint8_t *f = ev->data + lay->fields_off + 2;
    uint32_t i, own = 0;
    k->super = ev->sub->class_id;
    k->flags |= K_DUMPED;
    if (lay->n_fields == 0)
        return HP_OK;
    k->types = e->types.len;
    k->n_types = lay->n_fields;
    for (i = 0; i < lay->n_fields; i++) {
        uint8_t t = f[(size_t)i * (size_t)(e->id_size + 1) + (size_t)e->id_size];
        own += (uint32_t)hp_type_size(t, e->id_size);
        if (hp_buf_append(&e->types, &t, 1) < 0)
            return no_memory(e, ev->sub->offset, HP_SUB_CLASS_DUMP, 1);
    }
    k->own = own;
    return HP_OK;
}

/* Writes the CLASS_DEFINITION of a CLASS_DUMP (head = the whole sub-record). */
static hp_code write_class(hp_bmd_encoder *e, const hp_event *ev, const hp_class_layout *lay, klass *k)
{
    const hp_subrecord *s = ev->sub;
    const uint8_t *p;
    const int id = e->id_size;
    uint64_t at = s->offset;
    uint32_t i, kept = 0, skipped = 0, name;
    hp_code code = HP_OK;
    int preserved;

    if (put_tag(e, BMD_CLASS) < 0)
        return sink_fail(e);
    if (put_object(e, s->id, at, s->tag, 1) < 0 || put_object(e, s->class_id, at, s->tag, 1) < 0 ||
        put_string(e, k->name, at, s->tag, 1) < 0)
        return e->error.code;
    p = ev->data + lay->const_off + 2;
    if (put_varint(e, lay->n_const) < 0)
        return sink_fail(e);
    for (i = 0; i < lay->n_const; i++) {
        if (put_int32(e, (int16_t)hp_be16(p)) < 0 || put_varint(e, (uint64_t)bmd_from_hprof_type(p[2])) < 0)
            return sink_fail(e);
        if (put_value(e, p[2], p + 3, at, s->tag) < 0)
            return e->error.code;
        p += 3 + hp_type_size(p[2], id);
    }
    p = ev->data + lay->statics_off + 2;
    if (put_varint(e, lay->n_statics) < 0)
        return sink_fail(e);
    for (i = 0; i < lay->n_statics; i++) {
        if (put_string(e, hp_read_id(p, id), at, s->tag, 1) < 0)
            return e->error.code;
        if (put_varint(e, (uint64_t)bmd_from_hprof_type(p[id])) < 0)
            return sink_fail(e);
        if (put_value(e, p[id], p + id + 1, at, s->tag) < 0)
            return e->error.code;
        p += id + 1 + hp_type_size(p[id], id);
    }
    /* All instance fields of a class whose name is kept in clear, else only
     * its references, and the bytes of the others. */
    name = number(&e->strings, &e->next_string, k->name, &code);
    if (code != HP_OK)
        return number_fail(e, code, at, s->tag, 1);
    preserved = (name & PRESERVED) != 0;
    k->flags = preserved ? k->flags | K_PRESERVED : k->flags & ~(uint32_t)K_PRESERVED;
    p = ev->data + lay->fields_off + 2;
    for (i = 0; i < lay->n_fields; i++) {
        int t = p[(size_t)i * (size_t)(id + 1) + (size_t)id];
        if (preserved || t == HP_T_OBJECT)
            kept++;
        else
            skipped += (uint32_t)hp_type_size(t, id);
    }
    if (put_varint(e, kept) < 0)
        return sink_fail(e);
    for (i = 0; i < lay->n_fields; i++, p += id + 1) {
        if (!preserved && p[id] != HP_T_OBJECT)
            continue;
        if (put_string(e, hp_read_id(p, id), at, s->tag, 1) < 0)
            return e->error.code;
        if (put_varint(e, (uint64_t)bmd_from_hprof_type(p[id])) < 0)
            return sink_fail(e);
    }
    return put_int32(e, (int32_t)skipped) < 0 ? sink_fail(e) : HP_OK;
}

static hp_code on_class_dump(hp_bmd_encoder *e, const hp_event *ev)
{
    hp_class_layout lay;
    klass *k;
    uint64_t nth = e->class_dumps++;
    if (hp_class_layout_decode(ev->data, ev->len, e->id_size, &lay) != HP_OK)
        return hp_fail(&e->error, HP_E_CORRUPT, ev->sub->offset, HP_SUB_CLASS_DUMP, 1, 0, 0, "malformed CLASS_DUMP");
    if (e->pass == PASS_LATE_DEFS) {
        if (e->late_next == u64_count(&e->late) || u64s(&e->late)[e->late_next] != nth)
            return HP_OK;
        e->late_next++;
        return write_class(e, ev, &lay, class_of(e, ev->sub->id));
    }
    if (!(k = class_add(e, ev->sub->id)))
        return no_memory(e, ev->sub->offset, HP_SUB_CLASS_DUMP, 1);
    if (remember_class(e, ev, &lay, k) != HP_OK)
        return e->error.code;
    if (k->flags & K_LOADED)
        return write_class(e, ev, &lay, k);
    /* Its name comes later (or never): write it in pass 1b. */
    return push_u64(&e->late, nth) < 0
               ? no_memory(e, ev->sub->offset, HP_SUB_CLASS_DUMP, 1)
               : HP_OK;
}

/* ---- objects (pass 2) ---- */

/* An instance's fields p[0..chain): references renumbered, the primitive
 * values of classes kept in clear, the others dropped. */
static hp_code put_fields(hp_bmd_encoder *e, const klass *k, const uint8_t *p, uint64_t offset)
{
    uint32_t x = k ? k->first : 0;
    while (x) {
        const klass *c = class_at(e, x - 1);
        const uint8_t *t = e->types.data + c->types;
        uint32_t i;
        for (i = 0; i < c->n_types; i++) {
            int size = hp_type_size(t[i], e->id_size);
            int kept = t[i] == HP_T_OBJECT || (c->flags & K_PRESERVED);
            if (kept && put_value(e, t[i], p, offset, HP_SUB_INSTANCE_DUMP) < 0)
                return e->error.code;
            p += size;
        }
        x = c->after;
    }
    return HP_OK;
}

static hp_code on_instance(hp_bmd_encoder *e, const hp_event *ev)
{
    const hp_subrecord *s = ev->sub;
    klass *k = class_of(e, s->class_id);
    size_t here = ev->len - s->head_len;
    if (k && resolve_chain(e, k, s->offset) != HP_OK)
        return e->error.code;
    if ((k ? k->chain : 0) != s->count)
        return hp_failf(&e->error, HP_E_CORRUPT, s->offset, s->tag, 1,
                        "INSTANCE_DUMP at offset %llu has %u bytes of fields, its class chain %llu",
                        (unsigned long long)s->offset, (unsigned)s->count, (unsigned long long)(k ? k->chain : 0));
    if (put_tag(e, BMD_INSTANCE) < 0)
        return sink_fail(e);
    if (put_object(e, s->id, s->offset, s->tag, 1) < 0 || put_object(e, s->class_id, s->offset, s->tag, 1) < 0)
        return e->error.code;
    if (here == s->count)
        return put_fields(e, k, ev->data + s->head_len, s->offset);
    /* The fields come in pieces: gather them (no more than the chain's bytes). */
    e->held.len = 0;
    e->instance_class = k;
    e->payload_left = s->count - here;
    return hp_buf_append(&e->held, ev->data + s->head_len, here) < 0
               ? no_memory(e, s->offset, s->tag, 1)
               : HP_OK;
}

/* Object array elements p[0..n), of which an id may be cut at either end. */
static hp_code put_elements(hp_bmd_encoder *e, const uint8_t *p, size_t n, uint64_t offset)
{
    const size_t id = (size_t)e->id_size;
    if (e->id_carry_len) {
        size_t take = id - (size_t)e->id_carry_len < n ? id - (size_t)e->id_carry_len : n;
        memcpy(e->id_carry + e->id_carry_len, p, take);
        e->id_carry_len += (int)take;
        p += take;
        n -= take;
        if ((size_t)e->id_carry_len < id)
            return HP_OK;
        e->id_carry_len = 0;
        if (put_object(e, hp_read_id(e->id_carry, e->id_size), offset, HP_SUB_OBJ_ARRAY_DUMP, 1) < 0)
            return e->error.code;
    }
    for (; n >= id; p += id, n -= id)
        if (put_object(e, hp_read_id(p, e->id_size), offset, HP_SUB_OBJ_ARRAY_DUMP, 1) < 0)
            return e->error.code;
    memcpy(e->id_carry, p, n);
    e->id_carry_len = (int)n;
    return HP_OK;
}

static hp_code array_count(hp_bmd_encoder *e, const hp_subrecord *s)
{
    if (s->count > LAST_NUMBER)
        return hp_fail(&e->error, HP_E_LIMIT, s->offset, s->tag, 1, 0, 0,
                       "array of 2^31 elements or more: BMD counts them in a Java int");
    return put_int32(e, (int32_t)s->count) < 0 ? sink_fail(e) : HP_OK;
}

static hp_code on_object(hp_bmd_encoder *e, const hp_event *ev)
{
    const hp_subrecord *s = ev->sub;
    switch (s->tag) {
    case HP_SUB_INSTANCE_DUMP:
        e->record = s->tag;
        return on_instance(e, ev);
    case HP_SUB_OBJ_ARRAY_DUMP:
        e->record = s->tag;
        e->id_carry_len = 0;
        if (put_tag(e, BMD_OBJECT_ARRAY) < 0)
            return sink_fail(e);
        if (put_object(e, s->id, s->offset, s->tag, 1) < 0 || put_object(e, s->class_id, s->offset, s->tag, 1) < 0)
            return e->error.code;
        if (array_count(e, s) != HP_OK)
            return e->error.code;
        return put_elements(e, ev->data + s->head_len, ev->len - s->head_len, s->offset);
    case HP_SUB_PRIM_ARRAY_DUMP:
        if (put_tag(e, BMD_PRIMITIVE_ARRAY) < 0)
            return sink_fail(e);
        if (put_object(e, s->id, s->offset, s->tag, 1) < 0)
            return e->error.code;
        if (put_varint(e, (uint64_t)bmd_from_hprof_type(s->elem_type)) < 0)
            return sink_fail(e);
        return array_count(e, s);
    case HP_SUB_CLASS_DUMP: case HP_SUB_HEAP_DUMP_INFO: case HP_SUB_UNREACHABLE: case HP_SUB_PRIM_ARRAY_NODATA:
        return HP_OK; /* not objects the cruncher writes */
    default: /* a GC root: its kind is lost */
        return push_u64(&e->roots, s->id) < 0
                   ? no_memory(e, s->offset, s->tag, 1)
                   : HP_OK;
    }
}

static hp_code on_payload(hp_bmd_encoder *e, const hp_event *ev)
{
    if (e->record == HP_SUB_OBJ_ARRAY_DUMP)
        return put_elements(e, ev->data, ev->len, ev->sub->offset);
    if (e->record != HP_SUB_INSTANCE_DUMP)
        return HP_OK;
    if (hp_buf_append(&e->held, ev->data, ev->len) < 0)
        return no_memory(e, ev->sub->offset, HP_SUB_INSTANCE_DUMP, 1);
    e->payload_left -= ev->len;
    return e->payload_left ? HP_OK : put_fields(e, e->instance_class, e->held.data, ev->sub->offset);
}

static hp_code write_roots(hp_bmd_encoder *e)
{
    size_t i;
    size_t n = u64_count(&e->roots);
    if (n > LAST_NUMBER)
        return hp_fail(&e->error, HP_E_LIMIT, e->bytes_in, -1, 0, 0, 0, "more than 2^31 - 1 GC roots");
    if (put_tag(e, BMD_ROOTS) < 0 || put_int32(e, (int32_t)n) < 0)
        return sink_fail(e);
    for (i = 0; i < n; i++)
        if (put_object(e, u64s(&e->roots)[i], e->bytes_in, -1, 0) < 0)
            return e->error.code;
    return HP_OK;
}

/* ---- events ---- */

/* Records the cruncher copies as LEGACY_HPROF_RECORD.  With 8-byte ids,
 * those holding ids are dropped: BMD keeps them raw, and the decoded dump
 * has 4-byte ids. */
static int is_legacy(const hp_bmd_encoder *e, int tag)
{
    switch (tag) {
    case HP_TAG_UTF8: case HP_TAG_LOAD_CLASS: case HP_TAG_UNLOAD_CLASS: case HP_TAG_HEAP_DUMP:
    case HP_TAG_HEAP_DUMP_SEGMENT: case HP_TAG_HEAP_DUMP_END:
        return 0;
    case HP_TAG_FRAME: case HP_TAG_TRACE: case HP_TAG_START_THREAD:
        return e->id_size == 4;
    default:
        return 1;
    }
}

static hp_code on_record(hp_bmd_encoder *e, const hp_event *ev)
{
    const hp_record *r = ev->rec;
    e->record = -1;
    if (e->pass != PASS_DEFS)
        return HP_OK;
    if (r->tag == HP_TAG_UTF8) {
        if (r->length < (uint32_t)e->id_size)
            return hp_fail(&e->error, HP_E_CORRUPT, r->offset, r->tag, 0, 0, 0, "STRING shorter than its id");
        if (r->length > e->max_string)
            return hp_failf(&e->error, HP_E_LIMIT, r->offset, r->tag, 0,
                            "STRING at offset %llu holds %u bytes, more than the %zu held to hash one",
                            (unsigned long long)r->offset, (unsigned)r->length, e->max_string);
        e->held.len = 0;
    } else if (is_legacy(e, r->tag)) {
        if (r->length > LAST_NUMBER)
            return hp_fail(&e->error, HP_E_LIMIT, r->offset, r->tag, 0, 0, 0,
                           "record of 2 GiB or more: BMD gives its length as a Java int");
        if (put_tag(e, BMD_LEGACY) < 0 || put_varint(e, r->tag) < 0 || put_varint(e, r->length) < 0)
            return sink_fail(e);
    } else if (r->tag != HP_TAG_LOAD_CLASS) {
        return HP_OK;
    }
    e->record = r->tag;
    return HP_OK;
}

static hp_code on_data(hp_bmd_encoder *e, const hp_event *ev)
{
    const hp_record *r = ev->rec;
    if (e->record == HP_TAG_UTF8) {
        if (ev->len == r->length) /* whole: no copy */
            return on_string(e, ev->data, ev->len, r->offset);
        if (hp_buf_append(&e->held, ev->data, ev->len) < 0)
            return no_memory(e, r->offset, r->tag, 0);
        return e->held.len == r->length ? on_string(e, e->held.data, e->held.len, r->offset) : HP_OK;
    }
    if (e->record == HP_TAG_LOAD_CLASS)
        return on_load_class(e, ev->data, ev->len, r->offset);
    if (e->record >= 0)
        return hp_writer_put(&e->out, ev->data, ev->len) < 0 ? sink_fail(e) : HP_OK;
    return HP_OK;
}

static hp_code on_subrecord(hp_bmd_encoder *e, const hp_event *ev)
{
    int tag = ev->sub->tag;
    e->record = -1;
    if (e->pass == PASS_OBJECTS)
        return on_object(e, ev);
    if (tag == HP_SUB_CLASS_DUMP)
        return on_class_dump(e, ev);
    if (tag != HP_SUB_HEAP_DUMP_INFO && tag != HP_SUB_UNREACHABLE && tag != HP_SUB_PRIM_ARRAY_NODATA)
        e->objects_seen++;
    return HP_OK;
}

/* Runs the parser over its current input until it needs more (or ends). */
static hp_code run(hp_bmd_encoder *e)
{
    hp_event ev;
    hp_code rc;
    for (;;) {
        rc = hp_parser_next(e->parser, &ev, &e->error);
        if (rc != HP_OK)
            return rc;
        switch (ev.kind) {
        case HP_EV_NEED_INPUT:
        case HP_EV_END:
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
            rc = on_payload(e, &ev);
            break;
        case HP_EV_RECORD_END:
            e->record = -1;
            break;
        }
        if (rc != HP_OK)
            return rc;
    }
}

/* Sets up the next pass (or writes the roots and ends). */
static hp_code next_pass(hp_bmd_encoder *e)
{
    if (e->pass == PASS_DEFS && e->late.len)
        e->pass = PASS_LATE_DEFS;
    else if (e->pass != PASS_OBJECTS && e->objects_seen)
        e->pass = PASS_OBJECTS;
    else
        e->pass = PASS_DONE;
    if (e->pass == PASS_DONE)
        return write_roots(e);
    hp_parser_free(e->parser);
    if (!(e->parser = hp_parser_new(&e->alloc, HP_PARSE_SUBRECORDS)))
        return no_memory(e, 0, -1, 0);
    e->again = 1;
    e->bytes_in = 0;
    e->class_dumps = 0;
    return HP_OK;
}

static hp_code drive(hp_bmd_encoder *e, const uint8_t *data, size_t len, int is_last, const hp_sink *out,
                     hp_error *err)
{
    hp_code rc;
    if (e->failed) {
        *err = e->error;
        return e->error.code;
    }
    if (e->finished)
        return hp_fail(err, HP_E_USAGE, e->bytes_in, -1, 0, 0, 0, "feed or finish after the last pass");
    e->again = 0;
    e->out.sink = out;
    hp_parser_feed(e->parser, data, len, is_last);
    rc = run(e);
    e->bytes_in += len;
    if (rc == HP_OK && is_last) {
        if (e->pass == PASS_DEFS)
            e->total = e->bytes_in;
        else if (e->bytes_in != e->total)
            rc = hp_failf(&e->error, HP_E_CORRUPT, e->bytes_in, -1, 0,
                          "the dump changed between passes: %llu bytes, then %llu",
                          (unsigned long long)e->total, (unsigned long long)e->bytes_in);
        if (rc == HP_OK)
            rc = next_pass(e);
    }
    if (rc == HP_OK && hp_writer_flush(&e->out) < 0)
        rc = sink_fail(e);
    if (rc != HP_OK) {
        e->failed = 1;
        *err = e->error;
        return rc;
    }
    if (is_last && e->pass == PASS_DONE)
        e->finished = 1;
    return HP_OK;
}

hp_code hp_bmd_encoder_feed(hp_bmd_encoder *e, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    return drive(e, data, len, 0, out, err);
}

hp_code hp_bmd_encoder_finish(hp_bmd_encoder *e, const hp_sink *out, hp_error *err)
{
    static const uint8_t none[1];
    return drive(e, none, 0, 1, out, err);
}

hp_bmd_encoder *hp_bmd_encoder_new(const hp_alloc *alloc, const hp_bmd_options *opts)
{
    hp_bmd_encoder *e;
    if (!alloc)
        alloc = &hp_default_alloc;
    e = alloc->malloc_fn(sizeof *e);
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    e->alloc = *alloc;
    e->max_string = opts && opts->max_string ? opts->max_string : MAX_STRING_DEFAULT;
    e->pass = PASS_DEFS;
    e->next_string = e->next_object = 1;
    e->record = -1;
    hp_idmap_init(&e->strings, alloc);
    hp_idmap_init(&e->objects, alloc);
    hp_idmap_init(&e->class_index, alloc);
    hp_buf_init(&e->classes, alloc);
    hp_buf_init(&e->types, alloc);
    hp_buf_init(&e->late, alloc);
    hp_buf_init(&e->roots, alloc);
    hp_buf_init(&e->chain_path, alloc);
    hp_buf_init(&e->held, alloc);
    e->parser = hp_parser_new(alloc, HP_PARSE_SUBRECORDS);
    if (hp_writer_init(&e->out, alloc, OUT_CAP) < 0 || !e->parser) {
        hp_bmd_encoder_free(e);
        return NULL;
    }
    return e;
}

void hp_bmd_encoder_free(hp_bmd_encoder *e)
{
    if (!e)
        return;
    hp_parser_free(e->parser);
    hp_writer_free(&e->out, &e->alloc);
    hp_idmap_clear(&e->strings);
    hp_idmap_clear(&e->objects);
    hp_idmap_clear(&e->class_index);
    hp_buf_free(&e->types);
    hp_buf_free(&e->held);
    hp_buf_free(&e->classes);
    hp_buf_free(&e->late);
    hp_buf_free(&e->roots);
    hp_buf_free(&e->chain_path);
    e->alloc.free_fn(e);
}

int hp_bmd_encoder_again(const hp_bmd_encoder *e) { return e->again; }

int hp_bmd_encoder_passes(const hp_bmd_encoder *e)
{
    return e->pass == PASS_DEFS && !e->finished ? 2 : 1 + (e->late.len != 0) + (e->objects_seen != 0);
}
uint64_t hp_bmd_encoder_bytes_in(const hp_bmd_encoder *e) { return e->total ? e->total : e->bytes_in; }
uint64_t hp_bmd_encoder_bytes_out(const hp_bmd_encoder *e) { return e->out.written; }
const uint64_t *hp_bmd_encoder_counts(const hp_bmd_encoder *e) { return e->counts; }
