/* Building the heap index: a pass over the top-level records, then two
 * passes over the sub-records of the chosen heap dump (count, then fill),
 * an in-place sort into id order when the file order is not already that,
 * and the class layouts. */
#include "hp_heap_impl.h"

#include <stdlib.h>
#include <string.h>

#include "hp_dumps.h"
#include "hp_header.h"
#include "hp_heap_sort.h"
#include "hp_idmap.h"
#include "hp_subrecord.h"

#define CHECK_EVERY ((uint64_t)16 << 20) /* bytes between interrupt checks */
#define MAX_REF_OFFSETS ((uint64_t)1 << 26) /* resolved reference fields over all classes */

typedef struct span { uint64_t offset, length; } span;

typedef struct builder {
    hp_heap *h;
    const hp_heap_options *opt;
    hp_error *err;
    uint64_t next_check;

    span *records;          /* heap records of the chosen dump */
    size_t n_records, cap_records;

    /* pass 1 */
    uint64_t n_objects;
    uint64_t first_id, max_id, min_id, low_diff; /* low_diff: OR of id ^ first_id */
    uint64_t prev_id;
    int sorted;
    int has_heap_info;
    heap_class *classes;
    size_t n_classes, cap_classes;
    hp_root *roots;
    size_t n_roots, cap_roots;
    thread_entry *threads;
    size_t n_threads, cap_threads;
    uint32_t heap_ids[256];

    uint64_t *ids;          /* object ids in file order (pass 1), then sort records */
    size_t cap_ids;
    uint32_t *offs;         /* their offsets, for files under 4 GiB (pass 1) */
    size_t cap_offs;
    int by_offset;          /* pass 2 reads objects at offsets instead of walking */

    /* pass 2 */
    hp_idmap class_index;   /* class id -> ordinal */
    uint32_t *rank;         /* file order -> id order, when they differ */
    uint32_t filled;
    uint64_t last_class_id;
    uint32_t last_class_ord;
} builder;

static hp_code nomem(builder *b, const char *what)
{
    return hp_fail(b->err, HP_E_NOMEM, 0, -1, 0, 0, 0, what);
}

/* Grows *items (of `size` bytes each) to hold one more; -1 on failure. */
static int reserve(const hp_alloc *a, void **items, size_t *cap, size_t count, size_t size)
{
    void *grown;
    size_t want;
    if (count < *cap)
        return 0;
    want = *cap ? *cap * 2 : 64;
    grown = a->realloc_fn(*items, want * size);
    if (!grown)
        return -1;
    *items = grown;
    *cap = want;
    return 0;
}

static hp_code checkpoint(builder *b, uint64_t pos)
{
    if (pos < b->next_check)
        return HP_OK;
    b->next_check = pos + CHECK_EVERY;
    if (b->opt->position && pos <= b->h->len && pos > *b->opt->position)
        *b->opt->position = pos;
    if (b->opt->interrupt && b->opt->interrupt(b->opt->interrupt_ctx))
        return hp_fail(b->err, HP_E_USAGE, pos, -1, 0, 0, 0, "interrupted");
    return HP_OK;
}

/* ------------------------------------------------------------------ */
/* Top-level records                                                    */

static int cmp_sid(const void *x, const void *y)
{
    const sid_entry *a = x, *b = y;
    return a->sid < b->sid ? -1 : a->sid > b->sid;
}

static int cmp_serial(const void *x, const void *y)
{
    const serial_entry *a = x, *b = y;
    return a->serial < b->serial ? -1 : a->serial > b->serial;
}

static int cmp_load(const void *x, const void *y)
{
    const load_entry *a = x, *b = y;
    return a->class_id < b->class_id ? -1 : a->class_id > b->class_id;
}

static hp_code add_record_span(builder *b, uint64_t offset, uint64_t length)
{
    if (reserve(&b->h->alloc, (void **)&b->records, &b->cap_records, b->n_records, sizeof *b->records) < 0)
        return nomem(b, "out of memory for the heap record list");
    b->records[b->n_records].offset = offset;
    b->records[b->n_records].length = length;
    b->n_records++;
    return HP_OK;
}

/* Pass over the records: side tables and the records of the chosen dump. */
static hp_code scan_records(builder *b, uint64_t start)
{
    hp_heap *h = b->h;
    const uint8_t *buf = h->buf;
    const int id = h->id_size;
    size_t cap_strings = 0, cap_loads = 0, cap_frames = 0, cap_traces = 0;
    hp_dump_track dumps;
    uint64_t pos;

    /* Which heap dump a record belongs to is hp_dumps.h's one rule, as for
     * the parser (stats, dump.heap_dumps) and the pack decoder: a HEAP_DUMP
     * is one, so is a run of segments up to its HEAP_DUMP_END (or up to a
     * HEAP_DUMP that cuts it short). */
    memset(&dumps, 0, sizeof dumps);
    for (pos = start; pos < h->len;) {
        uint8_t tag;
        uint64_t length;
        const uint8_t *body;
        uint32_t dump;
        hp_code rc;
        if (h->len - pos < 9)
            return hp_fail(b->err, HP_E_TRUNCATED, pos, buf[pos], 0, 9, h->len - pos, NULL);
        tag = buf[pos];
        length = hp_be32(buf + pos + 5);
        if (length > h->len - pos - 9)
            return hp_fail(b->err, HP_E_TRUNCATED, pos, tag, 0, 9 + length, h->len - pos, NULL);
        body = buf + pos + 9;
        if ((rc = checkpoint(b, pos)) != HP_OK)
            return rc;
        dump = hp_dump_track_record(&dumps, tag, pos); /* every record is told: an END closes its run */
        switch (tag) {
        case HP_TAG_UTF8:
            if (length >= (uint64_t)id) {
                if (reserve(&h->alloc, (void **)&h->strings, &cap_strings, h->n_strings, sizeof *h->strings) < 0)
                    return nomem(b, "out of memory for the STRING table");
                h->strings[h->n_strings].sid = hp_read_id(body, id);
                h->strings[h->n_strings].offset = pos;
                h->n_strings++;
            }
            break;
        case HP_TAG_LOAD_CLASS:
            if (length >= 8 + 2 * (uint64_t)id) {
                load_entry *e;
                if (reserve(&h->alloc, (void **)&h->loads, &cap_loads, h->n_loads, sizeof *h->loads) < 0)
                    return nomem(b, "out of memory for the LOAD_CLASS table");
                e = &h->loads[h->n_loads++];
                e->serial = hp_be32(body);
                e->class_id = hp_read_id(body + 4, id);
                e->name_sid = hp_read_id(body + 8 + id, id);
                e->pad = 0;
            }
            break;
        case HP_TAG_FRAME:
            if (length >= 4 * (uint64_t)id + 8) {
                if (reserve(&h->alloc, (void **)&h->frames, &cap_frames, h->n_frames, sizeof *h->frames) < 0)
                    return nomem(b, "out of memory for the STACK_FRAME table");
                h->frames[h->n_frames].sid = hp_read_id(body, id);
                h->frames[h->n_frames].offset = pos;
                h->n_frames++;
            }
            break;
        case HP_TAG_TRACE:
            if (length >= 12) {
                if (reserve(&h->alloc, (void **)&h->traces, &cap_traces, h->n_traces, sizeof *h->traces) < 0)
                    return nomem(b, "out of memory for the STACK_TRACE table");
                h->traces[h->n_traces].serial = hp_be32(body);
                h->traces[h->n_traces].pad = 0;
                h->traces[h->n_traces].offset = pos;
                h->n_traces++;
            }
            break;
        case HP_TAG_HEAP_DUMP:
        case HP_TAG_HEAP_DUMP_SEGMENT:
            if (dump == b->opt->heap_dump && (rc = add_record_span(b, pos, length)) != HP_OK)
                return rc;
            break;
        default:
            break;
        }
        pos += 9 + length;
    }
    h->n_dumps = dumps.dumps;
    if (h->n_dumps == 0)
        return hp_failf(b->err, HP_E_NO_DUMP, start, -1, 0, "the file holds no heap dump");
    if (b->opt->heap_dump >= h->n_dumps)
        return hp_failf(b->err, HP_E_NO_DUMP, start, -1, 0, "no heap dump %lu: the file holds %lu",
                        (unsigned long)b->opt->heap_dump, (unsigned long)h->n_dumps);
    if (h->n_strings)
        qsort(h->strings, h->n_strings, sizeof *h->strings, cmp_sid);
    if (h->n_frames)
        qsort(h->frames, h->n_frames, sizeof *h->frames, cmp_sid);
    if (h->n_traces)
        qsort(h->traces, h->n_traces, sizeof *h->traces, cmp_serial);
    if (h->n_loads)
        qsort(h->loads, h->n_loads, sizeof *h->loads, cmp_load);
    return HP_OK;
}

/* ------------------------------------------------------------------ */
/* Sub-record walks                                                     */

typedef hp_code (*visit_fn)(builder *b, const hp_subrecord *sub, const uint8_t *p, int heap);

/* Calls visit for every sub-record of the chosen dump, in file order.
 * `heap` is the Android heap in effect (its small index), or -1. */
static hp_code walk_dump(builder *b, visit_fn visit)
{
    hp_heap *h = b->h;
    size_t r;
    for (r = 0; r < b->n_records; r++) {
        uint64_t pos = b->records[r].offset + 9, end = pos + b->records[r].length;
        int heap = -1;
        while (pos < end) {
            hp_subrecord sub;
            uint64_t need = 0;
            hp_code rc = hp_subrecord_decode(h->buf + pos, (size_t)(end - pos), h->id_size, &sub, &need, b->err);
            if (rc == HP_E_TRUNCATED)
                return hp_fail(b->err, HP_E_OVERRUN, pos, h->buf[pos], 1, need, end - pos, NULL);
            if (rc != HP_OK) {
                b->err->offset += pos;
                return rc;
            }
            if (sub.length > end - pos)
                return hp_fail(b->err, HP_E_OVERRUN, pos, sub.tag, 1, sub.length, end - pos, NULL);
            sub.offset = pos;
            if (sub.tag == HP_SUB_HEAP_DUMP_INFO) {
                int k;
                for (k = 0; k < h->n_heaps && b->heap_ids[k] != sub.aux; k++)
                    ;
                if (k == h->n_heaps) {
                    if (h->n_heaps == 255)
                        return hp_fail(b->err, HP_E_LIMIT, pos, sub.tag, 1, 0, 0, "more than 255 Android heaps");
                    b->heap_ids[k] = sub.aux;
                    h->heap_name_sid[k] = sub.ref;
                    h->n_heaps++;
                }
                heap = k;
            }
            if ((rc = visit(b, &sub, h->buf + pos, heap)) != HP_OK)
                return rc;
            pos += sub.length;
            if ((rc = checkpoint(b, pos)) != HP_OK)
                return rc;
        }
    }
    return HP_OK;
}

static int is_object(int tag)
{
    return tag == HP_SUB_INSTANCE_DUMP || tag == HP_SUB_OBJ_ARRAY_DUMP || tag == HP_SUB_PRIM_ARRAY_DUMP ||
           tag == HP_SUB_CLASS_DUMP;
}

static hp_code count_visit(builder *b, const hp_subrecord *sub, const uint8_t *p, int heap)
{
    hp_heap *h = b->h;
    (void)heap;
    if (sub->tag == HP_SUB_HEAP_DUMP_INFO) {
        b->has_heap_info = 1;
        return HP_OK;
    }
    if (is_object(sub->tag)) {
        if (b->n_objects == 0) {
            b->first_id = b->min_id = b->max_id = sub->id;
        } else {
            if (sub->id <= b->prev_id)
                b->sorted = 0;
            if (sub->id < b->min_id)
                b->min_id = sub->id;
            if (sub->id > b->max_id)
                b->max_id = sub->id;
            b->low_diff |= sub->id ^ b->first_id;
        }
        b->prev_id = sub->id;
        if (reserve(&h->alloc, (void **)&b->ids, &b->cap_ids, (size_t)b->n_objects, sizeof *b->ids) < 0)
            return nomem(b, "out of memory for object ids");
        if (h->len <= 0xFFFFFFFFull) {
            if (reserve(&h->alloc, (void **)&b->offs, &b->cap_offs, (size_t)b->n_objects, sizeof *b->offs) < 0)
                return nomem(b, "out of memory for object offsets");
            b->offs[b->n_objects] = (uint32_t)sub->offset;
        }
        b->ids[b->n_objects++] = sub->id;
        if (sub->tag == HP_SUB_CLASS_DUMP) {
            heap_class *c;
            hp_class_layout lay;
            if (reserve(&h->alloc, (void **)&b->classes, &b->cap_classes, b->n_classes, sizeof *b->classes) < 0)
                return nomem(b, "out of memory for the class table");
            c = &b->classes[b->n_classes++];
            memset(c, 0, sizeof *c);
            if (hp_class_layout_decode(p, sub->head_len, h->id_size, &lay) != HP_OK)
                return hp_fail(b->err, HP_E_CORRUPT, sub->offset, sub->tag, 1, 0, 0,
                               "CLASS_DUMP tables do not fit in the sub-record");
            c->id = sub->id;
            c->super_id = sub->class_id;
            c->loader_id = sub->ref;
            c->raw_size = sub->aux;
            c->offset = sub->offset;
            c->statics_off = lay.statics_off;
            c->fields_off = lay.fields_off;
            c->n_statics = lay.n_statics;
            c->n_fields = lay.n_fields;
            c->object_index = HP_NONE;
        }
        return HP_OK;
    }
    if (sub->tag == HP_SUB_PRIM_ARRAY_NODATA)
        return hp_fail(b->err, HP_E_CORRUPT, sub->offset, sub->tag, 1, 0, 0,
                       "PRIMITIVE_ARRAY_NODATA holds no array to index");
    if (sub->tag != HP_SUB_HEAP_DUMP_INFO && sub->tag != HP_SUB_CLASS_DUMP) {
        /* A GC root (every other tag). */
        hp_root *r;
        if (reserve(&h->alloc, (void **)&b->roots, &b->cap_roots, b->n_roots, sizeof *b->roots) < 0)
            return nomem(b, "out of memory for the GC roots");
        r = &b->roots[b->n_roots++];
        r->kind = sub->tag;
        r->id = sub->id;
        r->index = HP_NONE;
        r->thread_serial = sub->serial;
        r->frame = (sub->tag == HP_SUB_ROOT_JAVA_FRAME || sub->tag == HP_SUB_ROOT_JNI_LOCAL) ? (int32_t)sub->aux : -1;
        if (sub->tag == HP_SUB_ROOT_THREAD_OBJECT) {
            if (reserve(&h->alloc, (void **)&b->threads, &b->cap_threads, b->n_threads, sizeof *b->threads) < 0)
                return nomem(b, "out of memory for the thread table");
            b->threads[b->n_threads].thread_serial = sub->serial;
            b->threads[b->n_threads].trace_serial = sub->aux;
            b->n_threads++;
        }
    }
    return HP_OK;
}

/* ------------------------------------------------------------------ */
/* Classes                                                              */

static int cmp_class(const void *x, const void *y)
{
    const heap_class *a = x, *b = y;
    if (a->id != b->id)
        return a->id < b->id ? -1 : 1;
    return a->offset < b->offset ? -1 : a->offset > b->offset;
}


static int name_is(const uint8_t *name, size_t len, const char *want)
{
    return name && hp_java_name_equals(name, len, want, strlen(want));
}

/* Every CLASS_CHECK classes, the per-class passes of a build check for an
 * interrupt (a million classes take a second or more). */
#define CLASS_CHECK 4096u

static hp_code class_checkpoint(builder *b, size_t i)
{
    if ((i + 1) % CLASS_CHECK == 0 && b->opt->interrupt && b->opt->interrupt(b->opt->interrupt_ctx))
        return hp_fail(b->err, HP_E_USAGE, 0, -1, 0, 0, 0, "interrupted");
    return HP_OK;
}

/* Sorts and de-duplicates the class table, names it, finds superclasses. */
static hp_code settle_classes(builder *b)
{
    hp_heap *h = b->h;
    static const char *const prim_names[8] = { "boolean[]", "char[]", "float[]", "double[]",
                                               "byte[]", "short[]", "int[]", "long[]" };
    size_t i, kept = 0;
    if (b->n_classes)
        qsort(b->classes, b->n_classes, sizeof *b->classes, cmp_class);
    for (i = 0; i < b->n_classes; i++)
        if (kept == 0 || b->classes[kept - 1].id != b->classes[i].id)
            b->classes[kept++] = b->classes[i];
    if (kept > (HP_NONE - ORD_SPECIALS) / 2)
        return hp_fail(b->err, HP_E_LIMIT, 0, -1, 0, 0, 0, "too many classes");
    h->classes = b->classes;
    h->n_classes = (uint32_t)kept;
    b->classes = NULL;
    h->class_class = h->string_class = h->object_class = HP_NONE;
    for (i = 0; i < 8; i++)
        h->prim_class[i] = HP_NONE;
    for (i = 0; i < h->n_classes; i++) {
        heap_class *c = &h->classes[i];
        load_entry key, *load;
        const uint8_t *name;
        size_t len;
        int t;
        hp_code rc = class_checkpoint(b, i);
        if (rc != HP_OK)
            return rc;
        key.class_id = c->id;
        load = h->n_loads ? bsearch(&key, h->loads, h->n_loads, sizeof *h->loads, cmp_load) : NULL;
        if (load) {
            c->name_sid = load->name_sid;
            c->serial = load->serial;
        }
        c->super_ord = c->super_id ? hp_heap_find_class_id(h, c->super_id) : HP_NONE;
        if (c->super_ord == i)
            c->super_ord = HP_NONE; /* a class its own super: treated as a root class */
        if (!hp_heap_utf8(h, c->name_sid, &name, &len)) /* looked up once, compared with each */
            name = NULL;
        if (h->class_class == HP_NONE && name_is(name, len, "java.lang.Class"))
            h->class_class = (uint32_t)i;
        else if (h->string_class == HP_NONE && name_is(name, len, "java.lang.String"))
            h->string_class = (uint32_t)i;
        else if (h->object_class == HP_NONE && name_is(name, len, "java.lang.Object"))
            h->object_class = (uint32_t)i;
        for (t = 0; t < 8; t++)
            if (h->prim_class[t] == HP_NONE && name_is(name, len, prim_names[t])) {
                h->prim_class[t] = (uint32_t)i;
                c->elem_type = (uint8_t)(t + 4);
            }
    }
    return HP_OK;
}

/* Own fields of class c: bytes in the instance data, and its reference
 * fields' offsets appended to out (when out is not NULL). */
static void own_layout(const hp_heap *h, heap_class *c, uint32_t *out, uint32_t *n_refs)
{
    const uint8_t *p = h->buf + c->offset + c->fields_off + 2;
    uint64_t size = 0;
    uint32_t k, refs = 0;
    for (k = 0; k < c->n_fields; k++) {
        int type = p[(size_t)k * (h->id_size + 1) + h->id_size];
        if (type == HP_T_OBJECT) {
            if (out)
                out[refs] = (uint32_t)size;
            refs++;
        }
        size += (uint64_t)hp_type_size(type, h->id_size);
    }
    c->own_size = (uint32_t)size; /* at most 65535 * 8 */
    *n_refs = refs;
}

typedef struct layout_ctx { uint64_t total; uint64_t pos; int fill; uint64_t too_large; } layout_ctx;

static void layout_class(hp_heap *h, uint32_t ord, void *ctx)
{
    layout_ctx *lc = ctx;
    heap_class *c = &h->classes[ord];
    const heap_class *s = c->super_ord != HP_NONE ? &h->classes[c->super_ord] : NULL;
    uint32_t own_refs, k;
    if (!lc->fill) {
        own_layout(h, c, NULL, &own_refs);
        c->depth = s ? s->depth + 1 : 0;
        if (s && (uint64_t)c->own_size + s->data_size > 0xFFFFFFFFu && !lc->too_large)
            lc->too_large = c->offset + 1;
        c->data_size = c->own_size + (s ? s->data_size : 0);
        c->n_refs = own_refs + (s ? s->n_refs : 0);
        lc->total += c->n_refs;
        if (lc->total > MAX_REF_OFFSETS && !lc->too_large)
            lc->too_large = c->offset + 1;
        return;
    }
    c->refs_start = (uint32_t)lc->pos;
    lc->pos += c->n_refs;
    own_layout(h, c, h->ref_offsets + c->refs_start, &own_refs);
    if (s)
        for (k = 0; k < s->n_refs; k++)
            h->ref_offsets[c->refs_start + own_refs + k] = h->ref_offsets[s->refs_start + k] + c->own_size;
}

/* Resolves every class's inherited layout, superclasses first. */
static hp_code resolve_layouts(builder *b)
{
    hp_heap *h = b->h;
    layout_ctx lc = { 0, 0, 0, 0 };
    int rc = heap_classes_supers_first(h, layout_class, &lc);
    if (rc < 0)
        return nomem(b, "out of memory for class layouts");
    if (rc > 0)
        return hp_fail(b->err, HP_E_CORRUPT, h->classes[rc - 1].offset, HP_SUB_CLASS_DUMP, 1, 0, 0,
                       "cyclic superclass chain");
    if (lc.too_large)
        return hp_fail(b->err, HP_E_LIMIT, lc.too_large - 1, HP_SUB_CLASS_DUMP, 1, 0, 0,
                       "class layouts resolve to too many fields");
    h->ref_offsets = h->alloc.malloc_fn((size_t)(lc.total ? lc.total : 1) * sizeof *h->ref_offsets);
    if (!h->ref_offsets)
        return nomem(b, "out of memory for reference-field offsets");
    h->n_ref_offsets = lc.total;
    lc.fill = 1;
    if (heap_classes_supers_first(h, layout_class, &lc) < 0)
        return nomem(b, "out of memory for class layouts");
    return HP_OK;
}

/* ------------------------------------------------------------------ */
/* Objects                                                              */

static uint32_t class_ord_of(builder *b, uint64_t class_id)
{
    const uint32_t *slot;
    if (class_id == b->last_class_id && b->last_class_ord != HP_NONE)
        return b->last_class_ord;
    slot = hp_idmap_get(&b->class_index, class_id);
    b->last_class_id = class_id;
    b->last_class_ord = slot ? *slot : HP_NONE;
    return b->last_class_ord;
}

/* The class ordinal of an object sub-record (see ORD_* in hp_heap_impl.h). */
static uint32_t ordinal_of(builder *b, int tag, uint64_t class_id, int elem_type)
{
    uint32_t ord, C = b->h->n_classes;
    switch (tag) {
    case HP_SUB_INSTANCE_DUMP:
        ord = class_ord_of(b, class_id);
        return ord == HP_NONE ? 2 * C + ORD_LOST_INSTANCE : ord;
    case HP_SUB_OBJ_ARRAY_DUMP:
        ord = class_ord_of(b, class_id);
        return ord == HP_NONE ? 2 * C + ORD_LOST_ARRAY : C + ord;
    case HP_SUB_PRIM_ARRAY_DUMP:
        return 2 * C + ORD_PRIM + (uint32_t)(elem_type - 4);
    default:
        return 2 * C + ORD_CLASS_OBJECT;
    }
}

static void set_ord(hp_heap *h, uint32_t i, uint32_t ord)
{
    if (h->ord2)
        h->ord2[i] = (uint16_t)ord;
    else
        h->ord4[i] = ord;
}

static hp_code fill_visit(builder *b, const hp_subrecord *sub, const uint8_t *p, int heap)
{
    hp_heap *h = b->h;
    uint32_t i;
    (void)p;
    if (!is_object(sub->tag))
        return HP_OK;
    i = b->rank ? b->rank[b->filled] : b->filled;
    b->filled++;
    set_ord(h, i, ordinal_of(b, sub->tag, sub->class_id, sub->elem_type));
    h->off_lo[i] = (uint32_t)sub->offset;
    if (h->off_hi)
        h->off_hi[i] = (uint8_t)(sub->offset >> 32);
    if (h->heap_of)
        h->heap_of[i] = (uint8_t)(heap < 0 ? 255 : heap);
    return HP_OK;
}

/* Pass 2 for files under 4 GiB without Android heaps: the objects'
 * offsets are known and sorted, so each record is read where it lies (in
 * near file order, the next ones prefetched) instead of walking the file. */
static hp_code fill_by_offset(builder *b)
{
    hp_heap *h = b->h;
    const uint8_t *buf = h->buf;
    const int id = h->id_size;
    uint32_t i, n = h->n;
    hp_code rc;
    for (i = 0; i < n; i++) {
        const uint8_t *p = buf + h->off_lo[i];
        uint64_t class_id = 0;
        int elem = 0;
        if (i + 16 < n)
            HP_PREFETCH(buf + h->off_lo[i + 16]);
        /* Pass 1 decoded these sub-records whole: their heads are in bounds. */
        if (p[0] == HP_SUB_INSTANCE_DUMP)
            class_id = hp_read_id(p + 1 + id + 4, id);
        else if (p[0] == HP_SUB_OBJ_ARRAY_DUMP)
            class_id = hp_read_id(p + 1 + id + 8, id);
        else if (p[0] == HP_SUB_PRIM_ARRAY_DUMP)
            elem = p[1 + id + 8];
        set_ord(h, i, ordinal_of(b, p[0], class_id, elem));
        if ((i & 0xFFFFF) == 0 && (rc = checkpoint(b, b->next_check)) != HP_OK)
            return rc;
    }
    return HP_OK;
}

static int tz64(uint64_t v)
{
    int n = 0;
    if (v == 0)
        return 0;
    while (!(v & 1)) {
        v >>= 1;
        n++;
    }
    return n;
}

static int bits_of(uint64_t v)
{
    int n = 0;
    while (v) {
        v >>= 1;
        n++;
    }
    return n;
}

/* Turns the ids of pass 1 into sorted keys, and, when the file order is
 * not the id order, the rank of every object (pass 2 writes it there).
 * Packed form: key << 32 | file index, radix-sorted in place (ties keep
 * file order); the keys then move into the front half of the buffer. */
static hp_code order_objects(builder *b, int wide)
{
    hp_heap *h = b->h;
    uint32_t n = h->n, i;
    uint64_t *ids = b->ids;
    if (b->by_offset) {
        /* key << 32 | offset: sorting orders by id, then by file position. */
        uint32_t *keys;
        for (i = 0; i < n; i++)
            ids[i] = ((ids[i] - h->min_id) >> h->shift) << 32 | b->offs[i];
        h->alloc.free_fn(b->offs);
        b->offs = NULL;
        if (!b->sorted && hp_sort_u64_nearly(ids, n, 64, &h->alloc) < 0)
            return nomem(b, "out of memory for sorting objects");
        h->off_lo = h->alloc.malloc_fn((size_t)(n ? n : 1) * sizeof *h->off_lo);
        if (!h->off_lo)
            return nomem(b, "out of memory for object offsets");
        keys = (uint32_t *)ids;
        for (i = 0; i < n; i++) {
            h->off_lo[i] = (uint32_t)ids[i];
            keys[i] = (uint32_t)(ids[i] >> 32);
        }
        h->keys4 = keys;
    } else if (b->sorted && !wide) {
        uint32_t *keys = (uint32_t *)ids;
        for (i = 0; i < n; i++)
            keys[i] = (uint32_t)((ids[i] - h->min_id) >> h->shift);
        h->keys4 = keys;
    } else if (b->sorted) {
        for (i = 0; i < n; i++)
            ids[i] = (ids[i] - h->min_id) >> h->shift;
        h->keys8 = ids;
    } else if (!wide) {
        uint32_t *keys;
        for (i = 0; i < n; i++)
            ids[i] = ((ids[i] - h->min_id) >> h->shift) << 32 | i;
        if (hp_sort_u64_nearly(ids, n, 64, &h->alloc) < 0)
            return nomem(b, "out of memory for sorting objects");
        b->rank = h->alloc.malloc_fn((size_t)(n ? n : 1) * sizeof *b->rank);
        if (!b->rank)
            return nomem(b, "out of memory for sorting objects");
        for (i = 0; i < n; i++)
            b->rank[(uint32_t)ids[i]] = i;
        keys = (uint32_t *)ids;
        for (i = 0; i < n; i++)
            keys[i] = (uint32_t)(ids[i] >> 32);
        h->keys4 = keys;
    } else {
        /* Keys of more than 32 bits (ids spanning beyond 2^32 steps): a
         * permutation sort, slower and with a larger peak, for rare dumps. */
        uint64_t *sorted = h->alloc.malloc_fn((size_t)(n ? n : 1) * sizeof *sorted);
        uint32_t *perm = h->alloc.malloc_fn((size_t)(n ? n : 1) * sizeof *perm);
        if (!sorted || !perm) {
            h->alloc.free_fn(sorted);
            h->alloc.free_fn(perm);
            return nomem(b, "out of memory for sorting objects");
        }
        for (i = 0; i < n; i++) {
            ids[i] = (ids[i] - h->min_id) >> h->shift;
            perm[i] = i;
        }
        hp_sort_perm_by_keys(perm, n, ids);
        for (i = 0; i < n; i++)
            sorted[i] = ids[perm[i]];
        /* The rank is the inverse permutation: ids' buffer holds it. */
        b->rank = (uint32_t *)ids;
        for (i = 0; i < n; i++)
            b->rank[perm[i]] = i;
        h->alloc.free_fn(perm);
        h->keys8 = sorted;
        b->ids = NULL;
        return HP_OK;
    }
    b->ids = NULL;
    if (h->keys4) {
        uint32_t *shrunk = h->alloc.realloc_fn(h->keys4, (size_t)(n ? n : 1) * sizeof *h->keys4);
        if (shrunk)
            h->keys4 = shrunk;
    }
    return HP_OK;
}

static uint64_t key_at(const hp_heap *h, uint32_t i) { return h->keys4 ? h->keys4[i] : h->keys8[i]; }

/* Drops all but the first (in file order) of objects sharing an id. */
static void drop_duplicates(hp_heap *h)
{
    uint32_t i, kept = 0;
    for (i = 0; i < h->n; i++) {
        if (kept > 0 && key_at(h, kept - 1) == key_at(h, i)) {
            h->duplicates++;
            continue;
        }
        if (kept != i) {
            if (h->keys4)
                h->keys4[kept] = h->keys4[i];
            else
                h->keys8[kept] = h->keys8[i];
            h->off_lo[kept] = h->off_lo[i];
            if (h->off_hi)
                h->off_hi[kept] = h->off_hi[i];
            if (h->ord2)
                h->ord2[kept] = h->ord2[i];
            else
                h->ord4[kept] = h->ord4[i];
            if (h->heap_of)
                h->heap_of[kept] = h->heap_of[i];
        }
        kept++;
    }
    h->n = kept;
}

static hp_code build_directory(builder *b)
{
    hp_heap *h = b->h;
    uint64_t max_key = h->n ? key_at(h, h->n - 1) : 0, bucket;
    int key_bits = bits_of(max_key), dir_bits = 0;
    uint32_t i;
    /* About 32 objects a bucket. */
    while (dir_bits < key_bits && ((uint64_t)1 << dir_bits) < (uint64_t)h->n / 32 + 1)
        dir_bits++;
    h->dir_shift = key_bits - dir_bits;
    h->dir_size = ((uint64_t)1 << dir_bits) + 1;
    h->dir = h->alloc.malloc_fn((size_t)h->dir_size * sizeof *h->dir);
    if (!h->dir)
        return nomem(b, "out of memory for the id directory");
    bucket = 0;
    for (i = 0; i < h->n; i++) {
        uint64_t bk = heap_bucket(h, key_at(h, i));
        while (bucket <= bk)
            h->dir[bucket++] = i;
    }
    while (bucket < h->dir_size)
        h->dir[bucket++] = h->n;
    return HP_OK;
}

static hp_code alloc_objects(builder *b)
{
    hp_heap *h = b->h;
    uint32_t C = h->n_classes;
    uint64_t span = b->max_id - b->min_id;
    size_t n = (size_t)h->n ? (size_t)h->n : 1;
    const hp_alloc *a = &h->alloc;
    hp_code rc;
    int wide;

    h->min_id = b->min_id;
    h->shift = tz64(b->low_diff);
    if (h->shift > 32)
        h->shift = 32;
    wide = (span >> h->shift) > 0xFFFFFFFFull;
    b->by_offset = b->offs && !wide && !b->has_heap_info;
    if (!b->by_offset) {
        a->free_fn(b->offs);
        b->offs = NULL;
    }
    /* Sort first: its buffers are gone before the per-object arrays come. */
    if ((rc = order_objects(b, wide)) != HP_OK)
        return rc;
    if (!h->off_lo)
        h->off_lo = a->malloc_fn(n * sizeof *h->off_lo);
    if (h->len > 0xFFFFFFFFull) {
        if ((h->len - 1) >> 40)
            return hp_fail(b->err, HP_E_LIMIT, 0, -1, 0, 0, 0, "files of 1 TiB and more are not indexed");
        h->off_hi = a->malloc_fn(n);
        if (!h->off_hi)
            return nomem(b, "out of memory for object offsets");
    }
    if (2 * (uint64_t)C + ORD_SPECIALS <= 0xFFFF)
        h->ord2 = a->malloc_fn(n * sizeof *h->ord2);
    else
        h->ord4 = a->malloc_fn(n * sizeof *h->ord4);
    if (b->has_heap_info && !(h->heap_of = a->malloc_fn(n)))
        return nomem(b, "out of memory for object heaps");
    if (!h->off_lo || (!h->ord2 && !h->ord4))
        return nomem(b, "out of memory for the object index");
    return HP_OK;
}

/* Class objects, instance counts, roots' objects. */
static hp_code link_objects(builder *b)
{
    hp_heap *h = b->h;
    uint32_t i, C = h->n_classes;
    for (i = 0; i < h->n; i++) {
        uint32_t ord = obj_ord(h, i), c;
        if (ord < 2 * C) {
            h->classes[ord < C ? ord : ord - C].instances++;
            continue;
        }
        ord -= 2 * C;
        if (ord < 8) {
            c = h->prim_class[ord];
            if (c != HP_NONE)
                h->classes[c].instances++;
        } else if (ord == ORD_CLASS_OBJECT) {
            c = hp_heap_find_class_id(h, obj_id(h, i));
            if (c != HP_NONE && h->classes[c].object_index == HP_NONE)
                h->classes[c].object_index = i;
        }
    }
    h->roots = b->roots;
    h->n_roots = (uint32_t)b->n_roots;
    b->roots = NULL;
    for (i = 0; i < h->n_roots; i++)
        h->roots[i].index = hp_heap_find(h, h->roots[i].id);
    h->threads = b->threads;
    h->n_threads = b->n_threads;
    b->threads = NULL;
    /* Roots by object: root numbers sorted by (object index, number). */
    h->roots_by_object = h->alloc.malloc_fn((h->n_roots ? h->n_roots : 1) * sizeof *h->roots_by_object);
    if (!h->roots_by_object)
        return nomem(b, "out of memory for the GC roots");
    {
        uint64_t *order = h->alloc.malloc_fn((h->n_roots ? h->n_roots : 1) * sizeof *order);
        uint32_t k = 0, r;
        if (!order)
            return nomem(b, "out of memory for the GC roots");
        for (r = 0; r < h->n_roots; r++)
            if (h->roots[r].index != HP_NONE)
                order[k++] = (uint64_t)h->roots[r].index << 32 | r;
        hp_sort_u64(order, k, 64);
        for (r = 0; r < k; r++)
            h->roots_by_object[r] = (uint32_t)order[r];
        for (r = k; r < h->n_roots; r++)
            h->roots_by_object[r] = HP_NONE;
        h->alloc.free_fn(order);
    }
    return HP_OK;
}

static void builder_clear(builder *b)
{
    const hp_alloc *a = &b->h->alloc;
    a->free_fn(b->records);
    a->free_fn(b->classes);
    a->free_fn(b->roots);
    a->free_fn(b->threads);
    a->free_fn(b->ids);
    a->free_fn(b->offs);
    a->free_fn(b->rank);
    hp_idmap_clear(&b->class_index);
}

hp_code hp_heap_build(const uint8_t *buf, uint64_t len, const hp_heap_options *opt, hp_heap **out, hp_error *err)
{
    const hp_alloc *alloc = opt->alloc ? opt->alloc : &hp_default_alloc;
    hp_header header;
    builder b;
    hp_heap *h;
    hp_code rc;
    uint32_t i;

    *out = NULL;
    if ((rc = hp_header_parse(buf, (size_t)(len < HP_HEADER_MAX ? len : HP_HEADER_MAX), &header, err)) != HP_OK)
        return rc;
    h = alloc->malloc_fn(sizeof *h);
    if (!h)
        return hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the heap index");
    memset(h, 0, sizeof *h);
    h->alloc = *alloc;
    h->buf = buf;
    h->len = len;
    h->id_size = header.id_size;
    h->version = header.version;

    memset(&b, 0, sizeof b);
    b.h = h;
    b.opt = opt;
    b.err = err;
    b.sorted = 1;
    b.next_check = CHECK_EVERY;
    hp_idmap_init(&b.class_index, alloc);

    rc = scan_records(&b, header.length);
    if (rc == HP_OK)
        rc = walk_dump(&b, count_visit);
    if (rc == HP_OK && b.n_objects > (uint64_t)HP_NONE - 1)
        rc = hp_fail(err, HP_E_LIMIT, 0, -1, 0, 0, 0, "more than 2^32 - 2 objects");
    if (rc == HP_OK)
        rc = settle_classes(&b);
    if (rc == HP_OK)
        rc = resolve_layouts(&b);
    if (rc == HP_OK) {
        h->n = (uint32_t)b.n_objects;
        for (i = 0; i < h->n_classes && rc == HP_OK; i++) {
            int inserted;
            if (!hp_idmap_put(&b.class_index, h->classes[i].id, i, &inserted))
                rc = nomem(&b, "out of memory for the class index");
            else
                rc = class_checkpoint(&b, i);
        }
        b.last_class_ord = HP_NONE;
    }
    if (rc == HP_OK)
        rc = alloc_objects(&b);
    if (rc == HP_OK) {
        h->n_heaps = 0; /* the walk numbers the heaps again, in the same order */
        b.next_check = CHECK_EVERY;
        rc = b.by_offset ? fill_by_offset(&b) : walk_dump(&b, fill_visit);
    }
    if (rc == HP_OK) {
        drop_duplicates(h);
        rc = build_directory(&b);
    }
    if (rc == HP_OK)
        rc = link_objects(&b);
    if (rc == HP_OK && heap_size_classes(h, opt->size_model) < 0)
        rc = nomem(&b, "out of memory for class sizes");
    builder_clear(&b);
    if (rc != HP_OK) {
        hp_heap_free(h);
        return rc;
    }
    *out = h;
    return HP_OK;
}

void hp_heap_free(hp_heap *h)
{
    const hp_alloc *a;
    if (!h)
        return;
    a = &h->alloc;
    a->free_fn(h->keys4);
    a->free_fn(h->keys8);
    a->free_fn(h->off_lo);
    a->free_fn(h->off_hi);
    a->free_fn(h->ord2);
    a->free_fn(h->ord4);
    a->free_fn(h->heap_of);
    a->free_fn(h->dir);
    a->free_fn(h->classes);
    a->free_fn(h->ref_offsets);
    a->free_fn(h->strings);
    a->free_fn(h->loads);
    a->free_fn(h->frames);
    a->free_fn(h->traces);
    a->free_fn(h->threads);
    a->free_fn(h->roots);
    a->free_fn(h->roots_by_object);
    a->free_fn(h->rev_start);
    a->free_fn(h->rev_src);
    heap_names_free(h);
    a->free_fn(h);
}
