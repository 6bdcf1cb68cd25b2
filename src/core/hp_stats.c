/* Statistics accumulator. */
#include "hp_stats.h"

#include <string.h>

#include "hp_idmap.h"

/* Array lengths by remainder modulo 8, and their total: enough to add up
 * the sizes of all arrays of one type under any size model, since the
 * padding of an array depends on its length only modulo 8. */
typedef struct array_tally {
    uint64_t by_rem[8];
    uint64_t elements;
} array_tally;

typedef struct class_entry {
    uint64_t class_id;
    uint64_t name_sid;
    uint64_t super_id;
    uint64_t instances;
    array_tally arrays;     /* object arrays of this class */
    uint32_t instance_size; /* from CLASS_DUMP */
    uint32_t own_refs;      /* its own reference fields */
    uint32_t own_bytes;     /* its own primitive field bytes */
    uint8_t has_name;
    uint8_t has_dump;
    uint8_t is_array;
} class_entry;

struct hp_stats {
    hp_alloc alloc;
    hp_tally records[256];
    hp_tally subrecords[256];
    hp_tally prims[16]; /* primitive arrays by element type */
    array_tally prim_arrays[16];
    hp_size_model model; /* set by hp_stats_set_model */
    int model_set;
    hp_idmap class_index; /* class id -> index into classes */
    class_entry *classes;
    size_t n_classes, cap_classes;
    hp_idmap string_index; /* string id -> index into string_offsets */
    uint64_t *string_offsets;
    size_t n_strings, cap_strings;
    int id_size; /* from the events, for reading names back */
    int version; /* from the header: sets the object header model */
    uint32_t heap_dumps; /* heap dumps begun so far: a 0x0C, or a run of 0x1C */
    int in_segments;     /* inside a run of HEAP_DUMP_SEGMENTs */
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
    hp_idmap_init(&s->string_index, alloc);
    return s;
}

void hp_stats_free(hp_stats *s)
{
    if (!s)
        return;
    hp_idmap_clear(&s->class_index);
    hp_idmap_clear(&s->string_index);
    s->alloc.free_fn(s->classes);
    s->alloc.free_fn(s->string_offsets);
    s->alloc.free_fn(s);
}

/* Grows an array of `size`-byte items to hold one more; -1 on failure. */
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

static class_entry *class_of(hp_stats *s, uint64_t class_id)
{
    int inserted;
    uint32_t *slot = hp_idmap_put(&s->class_index, class_id, (uint32_t)s->n_classes, &inserted);
    class_entry *e;
    if (!slot)
        return NULL;
    if (!inserted)
        return &s->classes[*slot];
    if (reserve(&s->alloc, (void **)&s->classes, &s->cap_classes, s->n_classes, sizeof *e) < 0)
        return NULL;
    e = &s->classes[s->n_classes++];
    memset(e, 0, sizeof *e);
    e->class_id = class_id;
    return e;
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

static hp_code nomem(hp_error *err, const hp_event *ev)
{
    return hp_fail(err, HP_E_NOMEM, ev->offset, -1, 0, 0, 0, "out of memory for statistics");
}

static hp_code add_data(hp_stats *s, const hp_event *ev, int id_size, hp_error *err)
{
    const hp_record *rec = ev->rec;
    if (ev->offset != rec->offset + 9)
        return HP_OK; /* only a record's first piece holds the fields we read */
    if (rec->tag == HP_TAG_UTF8 && ev->len >= (size_t)id_size) {
        int inserted;
        uint32_t *slot = hp_idmap_put(&s->string_index, hp_read_id(ev->data, id_size), (uint32_t)s->n_strings,
                                      &inserted);
        if (!slot)
            return nomem(err, ev);
        if (inserted) {
            if (reserve(&s->alloc, (void **)&s->string_offsets, &s->cap_strings, s->n_strings,
                        sizeof *s->string_offsets) < 0)
                return nomem(err, ev);
            s->string_offsets[s->n_strings++] = rec->offset;
        }
    } else if (rec->tag == HP_TAG_LOAD_CLASS && ev->len >= (size_t)(8 + 2 * id_size)) {
        class_entry *e = class_of(s, hp_read_id(ev->data + 4, id_size));
        if (!e)
            return nomem(err, ev);
        e->name_sid = hp_read_id(ev->data + 8 + id_size, id_size);
        e->has_name = 1;
    }
    return HP_OK;
}

static hp_code add_subrecord(hp_stats *s, const hp_event *ev, int id_size, hp_error *err)
{
    const hp_subrecord *sub = ev->sub;
    class_entry *e;
    s->subrecords[sub->tag].count++;
    s->subrecords[sub->tag].bytes += sub->length;
    if (s->heap_dumps > 1 && sub->tag != HP_SUB_CLASS_DUMP)
        return HP_OK;
    switch (sub->tag) {
    case HP_SUB_INSTANCE_DUMP:
        if (!(e = class_of(s, sub->class_id)))
            return nomem(err, ev);
        e->instances++;
        break;
    case HP_SUB_OBJ_ARRAY_DUMP:
        if (!(e = class_of(s, sub->class_id)))
            return nomem(err, ev);
        e->instances++;
        e->is_array = 1;
        tally_array(&e->arrays, sub->count);
        break;
    case HP_SUB_PRIM_ARRAY_DUMP: case HP_SUB_PRIM_ARRAY_NODATA:
        s->prims[sub->elem_type].count++;
        tally_array(&s->prim_arrays[sub->elem_type], sub->count);
        break;
    case HP_SUB_CLASS_DUMP:
        if (!(e = class_of(s, sub->id)))
            return nomem(err, ev);
        e->instance_size = sub->aux;
        e->super_id = sub->class_id;
        e->has_dump = 1;
        if (ev->len >= sub->head_len) {
            /* The field table: own reference fields and primitive bytes. */
            hp_class_layout lay;
            const uint8_t *p;
            uint16_t k;
            hp_class_layout_decode(ev->data, id_size, &lay);
            p = ev->data + lay.fields_off + 2;
            e->own_refs = e->own_bytes = 0;
            for (k = 0; k < lay.n_fields; k++) {
                int type = p[(size_t)k * (id_size + 1) + id_size];
                if (type == HP_T_OBJECT)
                    e->own_refs++;
                else
                    e->own_bytes += (uint32_t)hp_type_size(type, id_size);
            }
        }
        break;
    default:
        break;
    }
    return HP_OK;
}

/* A file may hold several heap dumps (the old hprof agent wrote two): the
 * histogram describes the first, as analyzers show it. */
static void count_heap_dumps(hp_stats *s, int tag)
{
    if (tag == HP_TAG_HEAP_DUMP) {
        s->heap_dumps++;
        s->in_segments = 0;
    } else if (tag == HP_TAG_HEAP_DUMP_SEGMENT && !s->in_segments) {
        s->heap_dumps++;
        s->in_segments = 1;
    } else if (tag == HP_TAG_HEAP_DUMP_END) {
        s->in_segments = 0;
    }
}

uint32_t hp_stats_heap_dumps(const hp_stats *s) { return s->heap_dumps; }

hp_code hp_stats_add(hp_stats *s, const hp_event *ev, int id_size, hp_error *err)
{
    s->id_size = id_size;
    switch (ev->kind) {
    case HP_EV_RECORD:
        s->records[ev->rec->tag].count++;
        s->records[ev->rec->tag].bytes += 9 + (uint64_t)ev->rec->length;
        count_heap_dumps(s, ev->rec->tag);
        return HP_OK;
    case HP_EV_DATA:
        return add_data(s, ev, id_size, err);
    case HP_EV_SUBRECORD:
        return add_subrecord(s, ev, id_size, err);
    default:
        return HP_OK;
    }
}

void hp_stats_set_header(hp_stats *s, const hp_header *h)
{
    s->version = h->version;
    s->id_size = h->id_size;
}

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
        if (e->has_dump && hp_stats_class_name(s, buf, buf_len, e->class_id, &name, &len) && len == 16 &&
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
    while (c && depth++ <= s->n_classes) {
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

/* Rows are the classes with instances, in first-seen order, then one row per
 * primitive array type present. */
size_t hp_stats_row_count(const hp_stats *s)
{
    size_t n = 0, i;
    for (i = 0; i < s->n_classes; i++)
        n += s->classes[i].instances != 0;
    for (i = 0; i < 16; i++)
        n += s->prims[i].count != 0;
    return n;
}

void hp_stats_row(const hp_stats *s, size_t index, hp_class_row *out)
{
    hp_size_model m;
    size_t i;
    memset(out, 0, sizeof *out);
    hp_stats_model(s, NULL, 0, &m);
    for (i = 0; i < s->n_classes; i++) {
        const class_entry *e = &s->classes[i];
        if (e->instances == 0)
            continue;
        if (index-- == 0) {
            out->class_id = e->class_id;
            out->elem_type = e->is_array ? HP_T_OBJECT : 0;
            out->instances = e->instances;
            out->shallow_bytes = e->is_array ? array_bytes(&m, HP_T_OBJECT, &e->arrays)
                                             : e->instances * instance_shallow_size(s, &m, e);
            return;
        }
    }
    for (i = 0; i < 16; i++) {
        if (s->prims[i].count == 0)
            continue;
        if (index-- == 0) {
            out->elem_type = (int)i;
            out->instances = s->prims[i].count;
            out->shallow_bytes = array_bytes(&m, (int)i, &s->prim_arrays[i]);
            return;
        }
    }
}

int hp_stats_class_name(const hp_stats *s, const uint8_t *buf, uint64_t buf_len, uint64_t class_id,
                        const uint8_t **name, size_t *len)
{
    const uint32_t *ci = hp_idmap_get(&s->class_index, class_id), *si;
    uint64_t off, rec_len;
    const class_entry *e;
    if (!ci)
        return 0;
    e = &s->classes[*ci];
    if (!e->has_name || !(si = hp_idmap_get(&s->string_index, e->name_sid)))
        return 0;
    off = s->string_offsets[*si];
    if (off + 9 > buf_len)
        return 0;
    rec_len = hp_be32(buf + off + 5);
    if (off + 9 + rec_len > buf_len || rec_len < (uint64_t)s->id_size)
        return 0;
    *name = buf + off + 9 + s->id_size;
    *len = (size_t)(rec_len - (uint64_t)s->id_size);
    return 1;
}
