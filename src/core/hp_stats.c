/* Statistics accumulator. */
#include "hp_stats.h"

#include <string.h>

#include "hp_idmap.h"
#include "hp_oops.h"

/* Array lengths by remainder modulo 8, and their total: enough to add up
 * the sizes of all arrays of one type under any size model, since the
 * padding of an array depends on its length only modulo 8. */
typedef struct array_tally {
    uint64_t by_rem[8];
    uint64_t elements;
} array_tally;

/* A class as its CLASS_DUMP describes it: what sizing its instances under
 * any model takes (the model is chosen after the pass). */
typedef struct class_entry {
    uint64_t class_id;
    uint64_t name_sid;
    uint64_t super_id;
    uint64_t dump_offset;   /* of its CLASS_DUMP (0: none seen) */
    uint32_t instance_size; /* from CLASS_DUMP */
    uint32_t own_refs;      /* its own reference fields */
    uint32_t own_bytes;     /* its own primitive field bytes */
    uint8_t has_name;
    uint8_t has_dump;       /* a CLASS_DUMP of the selected heap dump gave the fields above */
} class_entry;

#define NO_CLASS UINT32_MAX

/* A histogram row: the objects of one class (or primitive array type) in one heap. */
typedef struct row_entry {
    uint32_t cls;           /* index into classes; NO_CLASS for primitive arrays */
    uint8_t elem_type;      /* 0 for instances, HP_T_OBJECT for object arrays, else the primitive type */
    uint8_t heap;           /* index into heaps */
    uint64_t count;
    array_tally arrays;     /* arrays: their lengths */
} row_entry;

/* A run of the selected heap dump's sub-records in one record, at most
 * SPAN_BYTES long, and the range of the object ids in it: where the size
 * guess (hp_oops.h) looks for an object by id without an index.  HotSpot
 * writes objects in address order, so one span usually holds an id. */
typedef struct span {
    uint64_t start, end, record;
    uint64_t min_id, max_id;
} span;
#define SPAN_BYTES ((uint64_t)64 << 10)

typedef struct heap_entry {
    uint32_t heap_id;
    uint64_t name_sid;
    int has_name;
} heap_entry;

/* A growable array: items, count, capacity. */
#define ARRAY(type, name) type *name; size_t n_##name, cap_##name

struct hp_stats {
    hp_alloc alloc;
    hp_tally records[256];
    hp_tally subrecords[256]; /* of the selected heap dump */
    uint32_t selected;        /* heap dump to tally and histogram, or HP_NO_DUMP */
    hp_idmap class_index;     /* class id -> index into classes */
    ARRAY(class_entry, classes);
    hp_idmap row_index;       /* row_key() -> index into rows */
    ARRAY(row_entry, rows);
    heap_entry heaps[HP_STATS_MAX_HEAPS];
    size_t n_heaps;
    uint32_t last_heap_id;    /* heap_slot's one-entry cache: heaps change rarely */
    size_t last_heap;
    hp_idmap string_index;    /* string id -> index into strings */
    ARRAY(uint64_t, strings); /* offsets of STRING records */
    ARRAY(hp_heap_dump_info, dumps);
    ARRAY(span, spans);       /* of the selected heap dump */
    hp_size_model model;      /* set by hp_stats_set_model */
    int model_set;
    int id_size; /* from the events, for reading names back */
};

hp_stats *hp_stats_new(const hp_alloc *alloc)
{
    hp_stats *s;
    if (!alloc)
        alloc = &hp_default_alloc;
    s = alloc->malloc_fn(sizeof *s);
    if (!s)
        return NULL;
    memset(s, 0, sizeof *s);
    s->alloc = *alloc;
    hp_idmap_init(&s->class_index, alloc);
    hp_idmap_init(&s->row_index, alloc);
    hp_idmap_init(&s->string_index, alloc);
    return s;
}

void hp_stats_free(hp_stats *s)
{
    if (!s)
        return;
    hp_idmap_clear(&s->class_index);
    hp_idmap_clear(&s->row_index);
    hp_idmap_clear(&s->string_index);
    s->alloc.free_fn(s->classes);
    s->alloc.free_fn(s->rows);
    s->alloc.free_fn(s->strings);
    s->alloc.free_fn(s->dumps);
    s->alloc.free_fn(s->spans);
    s->alloc.free_fn(s);
}

void hp_stats_select(hp_stats *s, uint32_t heap_dump) { s->selected = heap_dump; }

/* Makes room for one more item in an array of `size`-byte items; -1 when
 * memory runs out (the array is unchanged). */
static int reserve(const hp_alloc *alloc, void **items, size_t *cap, size_t count, size_t size)
{
    void *grown;
    size_t new_cap;
    if (count < *cap)
        return 0;
    new_cap = *cap ? *cap * 2 : 256;
    grown = alloc->realloc_fn(*items, new_cap * size);
    if (!grown)
        return -1;
    *items = grown;
    *cap = new_cap;
    return 0;
}
#define RESERVE(s, name) reserve(&(s)->alloc, (void **)&(s)->name, &(s)->cap_##name, (s)->n_##name, sizeof *(s)->name)

/* The index of class `class_id`'s entry, created on first sight; NO_CLASS
 * when memory runs out.  Room is made before the id map learns the index. */
static uint32_t class_of(hp_stats *s, uint64_t class_id)
{
    const uint32_t *known = hp_idmap_get(&s->class_index, class_id);
    class_entry *e;
    int inserted;
    if (known)
        return *known;
    if (s->n_classes >= NO_CLASS || RESERVE(s, classes) < 0 ||
        !hp_idmap_put(&s->class_index, class_id, (uint32_t)s->n_classes, &inserted))
        return NO_CLASS;
    e = &s->classes[s->n_classes];
    memset(e, 0, sizeof *e);
    e->class_id = class_id;
    return (uint32_t)s->n_classes++;
}

static void tally_array(array_tally *t, uint64_t count)
{
    t->by_rem[count & 7]++;
    t->elements += count;
}

/* Bytes of the arrays of `t` under the model (hp_size_array for each). */
static uint64_t array_bytes(const hp_size_model *m, int elem_type, const array_tally *t)
{
    uint64_t head = (uint64_t)m->min_instance + 4, elem = (uint64_t)hp_size_elem(m, elem_type), total = 0, r;
    for (r = 0; r < 8; r++)
        total += t->by_rem[r] * (head + hp_size_array(m, elem_type, r) - head - r * elem);
    return total + t->elements * elem;
}

static hp_code nomem(hp_error *err, uint64_t offset)
{
    return hp_fail(err, HP_E_NOMEM, offset, -1, 0, 0, 0, "out of memory for statistics");
}

/* The slot of heap `heap_id` in s->heaps, created on first sight; -1 when
 * there are too many heaps. */
static int heap_slot(hp_stats *s, uint32_t heap_id)
{
    size_t i;
    if (s->n_heaps && s->last_heap_id == heap_id)
        return (int)s->last_heap;
    for (i = 0; i < s->n_heaps && s->heaps[i].heap_id != heap_id; i++)
        ;
    if (i == s->n_heaps) {
        if (i == HP_STATS_MAX_HEAPS)
            return -1;
        memset(&s->heaps[i], 0, sizeof s->heaps[i]);
        s->heaps[i].heap_id = heap_id;
        s->n_heaps++;
    }
    s->last_heap_id = heap_id;
    s->last_heap = i;
    return (int)i;
}

/* The row of (class index `cls` or NO_CLASS, `elem_type`) in heap `heap_id`,
 * created on first sight; NULL with *err filled on failure. */
static row_entry *row_of(hp_stats *s, uint32_t cls, int elem_type, const hp_event *ev, hp_error *err)
{
    int heap = heap_slot(s, ev->heap_id), inserted;
    uint64_t key;
    uint32_t *slot;
    row_entry *r;
    if (heap < 0) {
        hp_fail(err, HP_E_CORRUPT, ev->sub->offset, ev->sub->tag, 1, 0, 0, "more than 256 heap ids");
        return NULL;
    }
    /* Primitive arrays: (type, heap); classes: (class + 16, is-array, heap). */
    key = cls == NO_CLASS ? (uint64_t)elem_type << 9 | (uint64_t)heap
                          : ((uint64_t)cls + 16) << 9 | (uint64_t)(elem_type == HP_T_OBJECT) << 8 | (uint64_t)heap;
    slot = (uint32_t *)hp_idmap_get(&s->row_index, key);
    if (slot)
        return &s->rows[*slot];
    if (s->n_rows >= UINT32_MAX || RESERVE(s, rows) < 0 ||
        !hp_idmap_put(&s->row_index, key, (uint32_t)s->n_rows, &inserted)) {
        nomem(err, ev->sub->offset);
        return NULL;
    }
    r = &s->rows[s->n_rows++];
    memset(r, 0, sizeof *r);
    r->cls = cls;
    r->elem_type = (uint8_t)elem_type;
    r->heap = (uint8_t)heap;
    return r;
}

static hp_code add_data(hp_stats *s, const hp_event *ev, int id_size, hp_error *err)
{
    const hp_record *rec = ev->rec;
    if (ev->offset != rec->offset + 9)
        return HP_OK; /* only a record's first piece holds the fields we read */
    if (rec->tag == HP_TAG_UTF8 && ev->len >= (size_t)id_size) {
        int inserted;
        uint64_t sid = hp_read_id(ev->data, id_size);
        if (hp_idmap_get(&s->string_index, sid))
            return HP_OK;
        if (RESERVE(s, strings) < 0 || !hp_idmap_put(&s->string_index, sid, (uint32_t)s->n_strings, &inserted))
            return nomem(err, ev->offset);
        s->strings[s->n_strings++] = rec->offset;
    } else if (rec->tag == HP_TAG_LOAD_CLASS && ev->len >= (size_t)(8 + 2 * id_size)) {
        uint32_t cls = class_of(s, hp_read_id(ev->data + 4, id_size));
        if (cls == NO_CLASS)
            return nomem(err, ev->offset);
        s->classes[cls].name_sid = hp_read_id(ev->data + 8 + id_size, id_size);
        s->classes[cls].has_name = 1;
    }
    return HP_OK;
}

/* A sub-record's share of its heap dump's summary. */
static void count_in_dump(hp_heap_dump_info *d, int tag)
{
    d->subrecords++;
    switch (tag) {
    case HP_SUB_INSTANCE_DUMP: d->instances++; break;
    case HP_SUB_OBJ_ARRAY_DUMP: d->object_arrays++; break;
    case HP_SUB_PRIM_ARRAY_DUMP: case HP_SUB_PRIM_ARRAY_NODATA: d->primitive_arrays++; break;
    case HP_SUB_CLASS_DUMP: d->classes++; break;
    default: d->gc_roots += hp_is_root_subtag(tag); break;
    }
}

/* A class's CLASS_DUMP: its instance size, superclass and own field shapes
 * (reference fields and primitive bytes), which size instances under any model. */
static void describe_class(class_entry *e, const hp_event *ev, int id_size)
{
    const hp_subrecord *sub = ev->sub;
    e->dump_offset = sub->offset;
    e->instance_size = sub->aux;
    e->super_id = sub->class_id;
    e->own_refs = e->own_bytes = 0;
    if (ev->len >= sub->head_len) {
        hp_class_layout lay;
        const uint8_t *p;
        uint16_t k;
        (void)hp_class_layout_decode(ev->data, sub->head_len, id_size, &lay); /* the parser checked the head */
        p = ev->data + lay.fields_off + 2;
        for (k = 0; k < lay.n_fields; k++) {
            int type = p[(size_t)k * (id_size + 1) + id_size];
            if (type == HP_T_OBJECT)
                e->own_refs++;
            else
                e->own_bytes += (uint32_t)hp_type_size(type, id_size);
        }
    }
}

/* Notes where object `sub` lies (see span). */
static hp_code note_object(hp_stats *s, const hp_event *ev)
{
    const hp_subrecord *sub = ev->sub;
    span *last = s->n_spans ? &s->spans[s->n_spans - 1] : NULL;
    if (!last || last->record != ev->rec->offset || sub->offset - last->start >= SPAN_BYTES) {
        if (RESERVE(s, spans) < 0)
            return HP_E_NOMEM;
        last = &s->spans[s->n_spans++];
        last->start = sub->offset;
        last->record = ev->rec->offset;
        last->min_id = last->max_id = sub->id;
    }
    last->end = sub->offset + sub->length;
    last->min_id = sub->id < last->min_id ? sub->id : last->min_id;
    last->max_id = sub->id > last->max_id ? sub->id : last->max_id;
    return HP_OK;
}

static hp_code add_subrecord(hp_stats *s, const hp_event *ev, int id_size, hp_error *err)
{
    const hp_subrecord *sub = ev->sub;
    int selected = ev->heap_dump == s->selected;
    uint32_t cls;
    row_entry *r;
    if (ev->heap_dump < s->n_dumps)
        count_in_dump(&s->dumps[ev->heap_dump], sub->tag);
    if (sub->tag == HP_SUB_CLASS_DUMP) {
        /* Any heap dump's class dump describes the class; the selected one's wins. */
        if ((cls = class_of(s, sub->id)) == NO_CLASS)
            return nomem(err, sub->offset);
        if (selected || !s->classes[cls].has_dump)
            describe_class(&s->classes[cls], ev, id_size);
        s->classes[cls].has_dump |= (uint8_t)selected;
    }
    if (!selected)
        return HP_OK;
    s->subrecords[sub->tag].count++;
    s->subrecords[sub->tag].bytes += sub->length;
    if (hp_subrecord_has_payload(sub->tag) && note_object(s, ev) != HP_OK)
        return nomem(err, sub->offset);
    switch (sub->tag) {
    case HP_SUB_INSTANCE_DUMP:
    case HP_SUB_OBJ_ARRAY_DUMP:
        if ((cls = class_of(s, sub->class_id)) == NO_CLASS)
            return nomem(err, sub->offset);
        if (!(r = row_of(s, cls, sub->tag == HP_SUB_INSTANCE_DUMP ? 0 : HP_T_OBJECT, ev, err)))
            return err->code;
        r->count++;
        if (sub->tag == HP_SUB_OBJ_ARRAY_DUMP)
            tally_array(&r->arrays, sub->count);
        break;
    case HP_SUB_PRIM_ARRAY_DUMP: case HP_SUB_PRIM_ARRAY_NODATA:
        if (!(r = row_of(s, NO_CLASS, sub->elem_type, ev, err)))
            return err->code;
        r->count++;
        tally_array(&r->arrays, sub->count);
        break;
    case HP_SUB_HEAP_DUMP_INFO:
        if (heap_slot(s, sub->aux) < 0)
            return hp_fail(err, HP_E_CORRUPT, sub->offset, sub->tag, 1, 0, 0, "more than 256 heap ids");
        s->heaps[s->last_heap].name_sid = sub->ref;
        s->heaps[s->last_heap].has_name = 1;
        break;
    default:
        break;
    }
    return HP_OK;
}

/* A record of a heap dump: the dump's summary begins with its first record. */
static hp_code add_heap_record(hp_stats *s, const hp_event *ev, hp_error *err)
{
    const hp_record *rec = ev->rec;
    hp_heap_dump_info *d;
    if (ev->heap_dump == s->n_dumps) {
        if (s->n_dumps >= HP_STATS_MAX_DUMPS)
            return hp_fail(err, HP_E_LIMIT, rec->offset, rec->tag, 0, 0, 0, "more than 65,536 heap dumps");
        if (RESERVE(s, dumps) < 0)
            return nomem(err, rec->offset);
        d = &s->dumps[s->n_dumps++];
        memset(d, 0, sizeof *d);
        d->offset = rec->offset;
        d->complete = rec->tag == HP_TAG_HEAP_DUMP;
    } else if (ev->heap_dump < s->n_dumps) {
        d = &s->dumps[ev->heap_dump];
    } else {
        return HP_OK; /* past the limit: reported when that dump began */
    }
    d->records++;
    d->bytes += 9 + (uint64_t)rec->length;
    d->end = rec->offset + 9 + (uint64_t)rec->length;
    if (rec->tag == HP_TAG_HEAP_DUMP_END)
        d->complete = 1;
    return HP_OK;
}

hp_code hp_stats_add(hp_stats *s, const hp_event *ev, int id_size, hp_error *err)
{
    s->id_size = id_size;
    switch (ev->kind) {
    case HP_EV_RECORD:
        s->records[ev->rec->tag].count++;
        s->records[ev->rec->tag].bytes += 9 + (uint64_t)ev->rec->length;
        return ev->heap_dump == HP_NO_DUMP ? HP_OK : add_heap_record(s, ev, err);
    case HP_EV_DATA:
        return add_data(s, ev, id_size, err);
    case HP_EV_SUBRECORD:
        return add_subrecord(s, ev, id_size, err);
    default:
        return HP_OK;
    }
}

void hp_stats_set_header(hp_stats *s, const hp_header *h) { s->id_size = h->id_size; }

void hp_stats_set_model(hp_stats *s, const hp_size_model *m)
{
    s->model = *m;
    s->model_set = 1;
}

void hp_stats_model(const hp_stats *s, const uint8_t *buf, uint64_t buf_len, hp_size_model *out)
{
    size_t i;
    uint32_t object_size = 0;
    if (s->model_set) {
        *out = s->model;
        return;
    }
    for (i = 0; buf && i < s->n_classes; i++) {
        const class_entry *e = &s->classes[i];
        const uint8_t *name;
        size_t len;
        if (hp_stats_class_name(s, buf, buf_len, e->class_id, &name, &len) && len == 16 &&
            (memcmp(name, "java/lang/Object", 16) == 0 || memcmp(name, "java.lang.Object", 16) == 0)) {
            object_size = e->instance_size;
            break;
        }
    }
    hp_size_model_init(out, s->id_size ? s->id_size : 4, object_size);
}

/* An instance's size under the model: its fields and its superclasses'
 * (the chain bounded by the number of classes: a cyclic one stops). */
static uint64_t instance_shallow_size(const hp_stats *s, const hp_size_model *m, const class_entry *e)
{
    uint64_t bytes = 0;
    size_t depth = 0;
    const class_entry *c = e;
    if (m->raw)
        return e->instance_size;
    while (depth++ <= s->n_classes) {
        const uint32_t *slot;
        bytes += (uint64_t)c->own_refs * (uint64_t)m->oop_size + c->own_bytes;
        if (!c->super_id || !(slot = hp_idmap_get(&s->class_index, c->super_id)))
            break;
        c = &s->classes[*slot];
    }
    return hp_size_instance(m, bytes, e->instance_size);
}

hp_code hp_stats_run(hp_stats *s, hp_parser *p, int *done, hp_error *err)
{
    hp_event ev;
    *done = 0;
    for (;;) {
        hp_code rc = hp_parser_next(p, &ev, err);
        if (rc != HP_OK)
            return rc;
        if (ev.kind == HP_EV_NEED_INPUT)
            return HP_OK;
        if (ev.kind == HP_EV_END) {
            *done = 1;
            return HP_OK;
        }
        if (ev.kind == HP_EV_HEADER) {
            hp_stats_set_header(s, hp_parser_header(p));
            continue;
        }
        rc = hp_stats_add(s, &ev, hp_parser_header(p)->id_size, err);
        if (rc != HP_OK)
            return rc;
    }
}

const hp_tally *hp_stats_records(const hp_stats *s) { return s->records; }
const hp_tally *hp_stats_subrecords(const hp_stats *s) { return s->subrecords; }
uint32_t hp_stats_heap_dumps(const hp_stats *s) { return (uint32_t)s->n_dumps; }

const hp_heap_dump_info *hp_stats_heap_dump(const hp_stats *s, uint32_t i)
{
    return i < s->n_dumps ? &s->dumps[i] : NULL;
}

int hp_stats_complete(const hp_stats *s)
{
    size_t i;
    for (i = 0; i < s->n_dumps; i++)
        if (!s->dumps[i].complete)
            return 0;
    return 1;
}

size_t hp_stats_row_count(const hp_stats *s) { return s->n_rows; }

void hp_stats_row(const hp_stats *s, size_t index, hp_class_row *out)
{
    const row_entry *r = &s->rows[index];
    hp_size_model m;
    hp_stats_model(s, NULL, 0, &m);
    memset(out, 0, sizeof *out);
    out->elem_type = r->elem_type;
    out->heap_id = s->heaps[r->heap].heap_id;
    out->instances = r->count;
    if (r->cls != NO_CLASS)
        out->class_id = s->classes[r->cls].class_id;
    out->shallow_bytes = r->elem_type ? array_bytes(&m, r->elem_type, &r->arrays)
                                      : r->count * instance_shallow_size(s, &m, &s->classes[r->cls]);
}

/* The text of STRING `sid`, read back from `buf`; 1, or 0 when unknown. */
static int string_text(const hp_stats *s, const uint8_t *buf, uint64_t buf_len, uint64_t sid, const uint8_t **text,
                       size_t *len)
{
    const uint32_t *si = hp_idmap_get(&s->string_index, sid);
    uint64_t off, rec_len;
    if (!si)
        return 0;
    off = s->strings[*si];
    if (off + 9 > buf_len)
        return 0;
    rec_len = hp_be32(buf + off + 5);
    if (off + 9 + rec_len > buf_len || rec_len < (uint64_t)s->id_size)
        return 0;
    *text = buf + off + 9 + s->id_size;
    *len = (size_t)(rec_len - (uint64_t)s->id_size);
    return 1;
}

size_t hp_stats_heap_count(const hp_stats *s) { return s->n_heaps; }

int hp_stats_heap(const hp_stats *s, size_t i, const uint8_t *buf, uint64_t buf_len, uint32_t *heap_id,
                  const uint8_t **name, size_t *len)
{
    *heap_id = s->heaps[i].heap_id;
    return s->heaps[i].has_name && string_text(s, buf, buf_len, s->heaps[i].name_sid, name, len);
}

int hp_stats_class_name(const hp_stats *s, const uint8_t *buf, uint64_t buf_len, uint64_t class_id,
                        const uint8_t **name, size_t *len)
{
    const uint32_t *ci = hp_idmap_get(&s->class_index, class_id);
    const class_entry *e;
    if (!ci)
        return 0;
    e = &s->classes[*ci];
    return e->has_name && string_text(s, buf, buf_len, e->name_sid, name, len);
}

/* ---- the size guess's look-ups (hp_oops.h) ---- */

typedef struct guess_ctx {
    const hp_stats *s;
    const uint8_t *buf;
    uint64_t buf_len;
    uint64_t scanned, budget; /* bytes of spans searched, and the most allowed */
} guess_ctx;

static uint64_t guess_class_named(void *ctx, const char *name)
{
    const guess_ctx *g = ctx;
    uint64_t best = 0;
    size_t i, want_len = strlen(name);
    for (i = 0; i < g->s->n_classes; i++) {
        const class_entry *e = &g->s->classes[i];
        const uint8_t *text;
        size_t len;
        if (e->dump_offset && (!best || e->class_id < best) &&
            hp_stats_class_name(g->s, g->buf, g->buf_len, e->class_id, &text, &len) &&
            hp_java_name_equals(text, len, name, want_len))
            best = e->class_id;
    }
    return best;
}

static uint64_t guess_class_dump(void *ctx, uint64_t class_id)
{
    const guess_ctx *g = ctx;
    const uint32_t *ci = hp_idmap_get(&g->s->class_index, class_id);
    return ci ? g->s->classes[*ci].dump_offset : 0;
}

/* Object `id`'s sub-record, searched in the spans whose ids may hold it. */
static uint64_t guess_object(void *ctx, uint64_t id)
{
    guess_ctx *g = ctx;
    const hp_stats *s = g->s;
    size_t i;
    for (i = 0; id && i < s->n_spans; i++) {
        const span *sp = &s->spans[i];
        uint64_t off = sp->start;
        if (id < sp->min_id || id > sp->max_id || sp->end > g->buf_len)
            continue;
        g->scanned += sp->end - sp->start;
        if (g->scanned > g->budget)
            return 0;
        while (off < sp->end) {
            hp_subrecord sub;
            uint64_t need;
            hp_error err;
            if (hp_subrecord_decode(g->buf + off, (size_t)(sp->end - off), s->id_size, &sub, &need, &err) != HP_OK ||
                sub.length == 0)
                break;
            if (sub.id == id && hp_subrecord_has_payload(sub.tag))
                return off;
            off += sub.length;
        }
    }
    return 0;
}

static int guess_sid_is(void *ctx, uint64_t sid, const char *want)
{
    const guess_ctx *g = ctx;
    const uint8_t *text;
    size_t len;
    return string_text(g->s, g->buf, g->buf_len, sid, &text, &len) && len == strlen(want) &&
           memcmp(text, want, len) == 0;
}

int hp_stats_guess_model(const hp_stats *s, const uint8_t *buf, uint64_t buf_len, hp_size_model *out)
{
    hp_oops_source src;
    guess_ctx g;
    const hp_heap_dump_info *d = s->selected < s->n_dumps ? &s->dumps[s->selected] : NULL;
    hp_stats_model(s, buf, buf_len, out);
    if (s->model_set || out->raw || s->id_size != 8 || !buf)
        return 1;
    g.s = s;
    g.buf = buf;
    g.buf_len = buf_len;
    g.scanned = 0;
    /* A guess reads a few hundred objects; ids out of address order could
     * make each a search of the whole dump. */
    g.budget = 4 * (d ? d->bytes : buf_len) + (SPAN_BYTES << 10);
    src.buf = buf;
    src.buf_len = buf_len;
    src.id_size = s->id_size;
    src.ctx = &g;
    src.class_named = guess_class_named;
    src.class_dump = guess_class_dump;
    src.object = guess_object;
    src.sid_is = guess_sid_is;
    src.max_steps = d ? d->subrecords : 0;
    hp_size_model_set_oop(out, hp_oops_guess(&src));
    if (g.scanned > g.budget) {
        hp_size_model_init(out, s->id_size, 0);
        return 0;
    }
    return 1;
}
