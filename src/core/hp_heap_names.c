/* Clear names in the heap index: an obfuscated dump read through its
 * ProGuard/R8 mapping (hp_heap.h, hp_heap_apply_mapping).
 *
 * The dump's STRINGs are never changed: one string is often the name of a
 * class and of fields of several classes, which map to different clear
 * names.  Each clear name gets a STRING of the index's own (heap_names),
 * with an id no STRING of the dump has: above 2^32 for 4-byte ids, above
 * the highest for 8-byte ids.  A renamed class points its name_sid at its
 * clear name (keeping the dump's in dump_name_sid); a class whose statics or
 * fields are renamed gets a row of new name ids the field iterators read
 * instead of the CLASS_DUMP's; renamed STACK_FRAMEs are kept by frame id.
 * Everything that reads names through the index (hp_heap_utf8, the
 * iterators, look-ups by name, the reachability matchers) sees them. */
#include <string.h>

#include "hp_heap_impl.h"
#include "hp_mapping.h"

static int reserve(const hp_alloc *a, void **data, size_t *cap, size_t need, size_t item)
{
    size_t want;
    void *bigger;
    if (need <= *cap)
        return 0;
    want = *cap ? *cap : 64;
    while (want < need)
        want *= 2;
    bigger = a->realloc_fn(*data, want * item);
    if (!bigger)
        return -1;
    *data = bigger;
    *cap = want;
    return 0;
}

/* Readies the ids of the index's own STRINGs: above the dump's (hp_heap_utf8
 * tells them apart by that).  HP_E_LIMIT when a dump of 8-byte ids uses the
 * very last one, so that none is left above it. */
static hp_code ready_sids(hp_heap *h, hp_error *err)
{
    uint64_t top = h->n_strings ? h->strings[h->n_strings - 1].sid : 0;
    if (h->names.next_sid)
        return HP_OK;
    if (h->id_size != 4 && top >= UINT64_MAX - ((uint64_t)1 << 32))
        return hp_fail(err, HP_E_LIMIT, 0, -1, 0, 0, 0,
                       "the dump's string ids reach the largest 8-byte ids: none is left for the clear names");
    h->names.next_sid = h->id_size == 4 ? (uint64_t)1 << 32 : top + 1;
    return HP_OK;
}

/* A new STRING of the index holding text[0:len] (ready_sids ran): its id, or 0 when memory ran out. */
static uint64_t new_text(hp_heap *h, const void *text, size_t len)
{
    heap_names *n = &h->names;
    heap_text *e;
    if (reserve(&h->alloc, (void **)&n->text, &n->text_cap, n->text_len + len, 1) < 0 ||
        reserve(&h->alloc, (void **)&n->strings, &n->cap_strings, n->n_strings + 1, sizeof *n->strings) < 0)
        return 0;
    if (len)
        memcpy(n->text + n->text_len, text, len);
    e = &n->strings[n->n_strings++];
    e->sid = n->next_sid++;
    e->off = n->text_len;
    e->len = len;
    n->text_len += len;
    return e->sid;
}

void heap_names_free(hp_heap *h)
{
    h->alloc.free_fn(h->names.text);
    h->alloc.free_fn(h->names.strings);
    h->alloc.free_fn(h->names.fields);
    h->alloc.free_fn(h->names.frames);
    memset(&h->names, 0, sizeof h->names);
}

/* ---- applying a mapping ---- */

#define TEXT_CACHE 1024 /* obfuscated field names repeat (a, b, c...): their texts, by id */

typedef struct apply {
    hp_heap *h;
    const hp_mapping *m;
    hp_heap_renames *out;
    char *buf, *scratch;       /* a clear class name; a dotted copy of a dump name */
    size_t buf_cap, scratch_cap;
    uint64_t *row;             /* the new name ids of one class's statics and fields */
    size_t row_cap;
    struct { uint64_t sid; const uint8_t *text; size_t len; } cache[TEXT_CACHE];
} apply;

/* hp_heap_utf8 through the cache (a binary search of the dump's strings saved per hit). */
static int text_of(apply *a, uint64_t sid, const uint8_t **text, size_t *len)
{
    size_t slot = (size_t)((sid * 0x9E3779B97F4A7C15ULL) >> 54) & (TEXT_CACHE - 1);
    if (a->cache[slot].text && a->cache[slot].sid == sid) {
        *text = a->cache[slot].text;
        *len = a->cache[slot].len;
        return 1;
    }
    if (!hp_heap_utf8(a->h, sid, text, len))
        return 0;
    a->cache[slot].sid = sid;
    a->cache[slot].text = *text;
    a->cache[slot].len = *len;
    return 1;
}

static int mapping_lists_fields(const hp_mapping *m, uint32_t mc)
{
    const hp_map_class *c = hp_mapping_class(m, mc);
    uint32_t i;
    for (i = c->first_member; i < c->first_member + c->n_members; i++)
        if (hp_mapping_member(m, i)->kind == HP_MAP_FIELD)
            return 1;
    return 0;
}

/* The new name id of one static or field into *out (0: kept); 0, or -1 out of memory. */
static int rename_field(apply *a, uint32_t ord, uint32_t mc, int knows_fields, uint64_t sid, int type,
                        uint64_t *out)
{
    const uint8_t *name;
    size_t len;
    uint32_t f;
    const hp_map_member *mb;
    *out = 0;
    if (!text_of(a, sid, &name, &len) || (len && name[0] == '<')) /* HotSpot's <resolved_references> */
        return 0;
    f = hp_mapping_clear_field(a->m, mc, (const char *)name, len, type);
    if (f == HP_MAP_NONE) {
        /* Listed several times (overloaded): no mismatch; the package tells them apart (_overloads.py). */
        if (knows_fields && a->out->mismatch_class == HP_NONE &&
            !hp_mapping_lists_field(a->m, mc, (const char *)name, len)) {
            a->out->mismatch_class = ord;
            a->out->mismatch_sid = sid;
        }
        return 0;
    }
    mb = hp_mapping_member(a->m, f);
    if (mb->name.len == len && memcmp(hp_mapping_text(a->m) + mb->name.off, name, len) == 0)
        return 0;
    if (!(*out = new_text(a->h, hp_mapping_text(a->m) + mb->name.off, mb->name.len)))
        return -1;
    a->out->fields_renamed++;
    return 0;
}

/* The statics and fields of class `ord`, which is class `mc` of the mapping. */
static int rename_fields(apply *a, uint32_t ord, uint32_t mc)
{
    hp_heap *h = a->h;
    heap_class *c = &h->classes[ord];
    size_t n = (size_t)c->n_statics + c->n_fields, k, renamed = 0;
    int knows_fields;
    hp_static_iter statics;
    hp_field_iter fields;
    hp_field f;
    if (!n)
        return 0;
    knows_fields = mapping_lists_fields(a->m, mc);
    if (reserve(&h->alloc, (void **)&a->row, &a->row_cap, n, sizeof *a->row) < 0)
        return -1;
    k = 0;
    for (hp_static_iter_init(&statics, h, ord); hp_static_next(&statics, &f); k++)
        if (rename_field(a, ord, mc, knows_fields, f.name_sid, f.type, &a->row[k]) < 0)
            return -1;
    hp_field_iter_init(&fields, h, ord);
    for (; k < n && hp_field_next(&fields, &f); k++) /* its own fields come first */
        if (rename_field(a, ord, mc, knows_fields, f.name_sid, f.type, &a->row[k]) < 0)
            return -1;
    for (k = 0; k < n; k++)
        renamed += a->row[k] != 0;
    if (!renamed)
        return 0;
    if (reserve(&h->alloc, (void **)&h->names.fields, &h->names.cap_fields, h->names.n_fields + n, 8) < 0)
        return -1;
    memcpy(h->names.fields + h->names.n_fields, a->row, n * sizeof *a->row);
    c->names_at = (uint32_t)(h->names.n_fields + 1);
    h->names.n_fields += n;
    return 0;
}

/* The mapping's class of a dump name that is no array's (found with dots), or HP_MAP_NONE. */
static uint32_t mapped_class(apply *a, const uint8_t *name, size_t len, int *slashed)
{
    size_t k;
    *slashed = 0;
    if (name[0] == '[' || (len >= 2 && name[len - 1] == ']'))
        return HP_MAP_NONE;
    for (k = 0; k < len; k++) {
        *slashed |= name[k] == '/';
        a->scratch[k] = name[k] == '/' ? '.' : (char)name[k];
    }
    return hp_mapping_find_class(a->m, a->scratch, len);
}

/* Class `ord`: its name, then its statics and fields. */
static int rename_class(apply *a, uint32_t ord)
{
    hp_heap *h = a->h;
    heap_class *c = &h->classes[ord];
    const uint8_t *name;
    size_t len, n, k;
    uint64_t sid;
    uint32_t mc;
    int slashed;
    if (!hp_heap_utf8(h, c->name_sid, &name, &len) || !len)
        return 0;
    if (reserve(&h->alloc, (void **)&a->scratch, &a->scratch_cap, len, 1) < 0)
        return -1;
    mc = mapped_class(a, name, len, &slashed);
    if (mc != HP_MAP_NONE) { /* the common case: the clear name is the original, spelled as the dump spells */
        hp_span original = hp_mapping_class(a->m, mc)->original;
        n = original.len;
        if (reserve(&h->alloc, (void **)&a->buf, &a->buf_cap, n, 1) < 0)
            return -1;
        for (k = 0; k < n; k++) {
            char ch = hp_mapping_text(a->m)[original.off + k];
            a->buf[k] = slashed && ch == '.' ? '/' : ch;
        }
    } else { /* arrays, hidden lambda classes */
        n = hp_mapping_clear_class(a->m, (const char *)name, len, a->buf, a->buf_cap, a->scratch);
        if (n > a->buf_cap) { /* again, with room for it */
            if (reserve(&h->alloc, (void **)&a->buf, &a->buf_cap, n, 1) < 0)
                return -1;
            n = hp_mapping_clear_class(a->m, (const char *)name, len, a->buf, a->buf_cap, a->scratch);
        }
    }
    if (n) {
        a->out->classes_listed++;
        if (n != len || memcmp(a->buf, name, n) != 0) {
            if (!(sid = new_text(h, a->buf, n)))
                return -1;
            c->dump_name_sid = c->name_sid;
            c->name_sid = sid;
            a->out->classes_renamed++;
        }
    }
    return mc == HP_MAP_NONE ? 0 : rename_fields(a, ord, mc);
}

hp_code hp_heap_apply_mapping(hp_heap *h, const hp_mapping *m, hp_heap_renames *out, hp_error *err)
{
    apply *a = h->alloc.malloc_fn(sizeof *a); /* its text cache is too large for the stack */
    uint32_t ord;
    int rc = 0;
    memset(out, 0, sizeof *out);
    out->mismatch_class = HP_NONE;
    if (!a)
        return hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the clear names");
    if (ready_sids(h, err) != HP_OK) {
        h->alloc.free_fn(a);
        return err->code;
    }
    memset(a, 0, sizeof *a);
    a->h = h;
    a->m = m;
    a->out = out;
    if (reserve(&h->alloc, (void **)&a->buf, &a->buf_cap, 256, 1) < 0)
        rc = -1;
    for (ord = 0; rc == 0 && ord < h->n_classes; ord++)
        rc = rename_class(a, ord);
    h->alloc.free_fn(a->buf);
    h->alloc.free_fn(a->scratch);
    h->alloc.free_fn(a->row);
    h->alloc.free_fn(a);
    if (rc < 0)
        return hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the clear names");
    return HP_OK;
}

hp_code hp_heap_rename_field(hp_heap *h, uint32_t ord, uint32_t k, const char *text, size_t len,
                             int *renamed_before, hp_error *err)
{
    heap_class *c = ord < h->n_classes ? &h->classes[ord] : NULL;
    size_t n = c ? (size_t)c->n_statics + c->n_fields : 0;
    uint64_t sid;
    if (k >= n)
        return hp_fail(err, HP_E_USAGE, 0, -1, 0, 0, 0, "no such field of that class");
    if (ready_sids(h, err) != HP_OK)
        return err->code;
    *renamed_before = heap_renamed_field(h, ord, k) != 0;
    if (!c->names_at) { /* a row of its own, every name kept (0) but this one */
        if (reserve(&h->alloc, (void **)&h->names.fields, &h->names.cap_fields, h->names.n_fields + n, 8) < 0)
            return hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the clear names");
        memset(h->names.fields + h->names.n_fields, 0, n * sizeof *h->names.fields);
        c->names_at = (uint32_t)(h->names.n_fields + 1);
        h->names.n_fields += n;
    }
    if (!(sid = new_text(h, text, len)))
        return hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the clear names");
    h->names.fields[c->names_at - 1 + k] = sid;
    return HP_OK;
}

int hp_heap_class_dump_name(const hp_heap *h, uint32_t ord, const uint8_t **name, size_t *len)
{
    const heap_class *c = &h->classes[ord];
    return hp_heap_utf8(h, c->dump_name_sid ? c->dump_name_sid : c->name_sid, name, len);
}

/* ---- stack frames ---- */

size_t hp_heap_frame_count(const hp_heap *h) { return h->n_frames; }

/* STACK_FRAME body at `offset` (the record was bounds-checked when listed). */
static void read_frame(const hp_heap *h, uint64_t offset, hp_frame *out)
{
    const int id = h->id_size;
    const uint8_t *body = h->buf + offset + 9;
    out->method_sid = hp_read_id(body + id, id);
    out->signature_sid = hp_read_id(body + 2 * id, id);
    out->source_sid = hp_read_id(body + 3 * id, id);
    out->class_serial = hp_be32(body + 4 * id);
    out->line = (int32_t)hp_be32(body + 4 * id + 4);
}

void hp_heap_frame_at(const hp_heap *h, size_t i, uint64_t *frame_id, hp_frame *out)
{
    *frame_id = h->frames[i].sid;
    read_frame(h, h->frames[i].offset, out);
}

hp_code hp_heap_rename_frame(hp_heap *h, uint64_t frame_id, const char *method, size_t method_len,
                             const char *signature, size_t signature_len, const char *source, size_t source_len,
                             int32_t line, hp_error *err)
{
    const sid_entry *e = heap_sid_find(h->frames, h->n_frames, frame_id);
    heap_names *n = &h->names;
    hp_frame f;
    size_t at;
    if (!e)
        return hp_fail(err, HP_E_USAGE, 0, -1, 0, 0, 0, "no STACK_FRAME of that id in the dump");
    if (ready_sids(h, err) != HP_OK)
        return err->code;
    read_frame(h, e->offset, &f);
    f.line = line;
    if ((method && !(f.method_sid = new_text(h, method, method_len))) ||
        (signature && !(f.signature_sid = new_text(h, signature, signature_len))) ||
        (source && !(f.source_sid = new_text(h, source, source_len))) ||
        reserve(&h->alloc, (void **)&n->frames, &n->cap_frames, n->n_frames + 1, sizeof *n->frames) < 0)
        return hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the clear names");
    for (at = n->n_frames; at > 0 && n->frames[at - 1].frame_id >= frame_id; at--)
        ;
    if (at < n->n_frames && n->frames[at].frame_id == frame_id) {
        n->frames[at].frame = f; /* renamed again */
        return HP_OK;
    }
    memmove(n->frames + at + 1, n->frames + at, (n->n_frames - at) * sizeof *n->frames);
    n->frames[at].frame_id = frame_id;
    n->frames[at].frame = f;
    n->n_frames++;
    return HP_OK;
}
