/* Classes of the heap index: look-ups, declared and inherited fields,
 * statics, and the STRING table their names come from. */
#include "hp_heap_impl.h"

#include <string.h>

/* The entry of key `key` in a table of n entries of `stride` bytes sorted
 * by their first field, a uint64_t key: its index, or n when absent. */
static size_t find_key(const void *table, size_t n, size_t stride, uint64_t key)
{
    const unsigned char *t = table;
    size_t lo = 0, hi = n;
    uint64_t k;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        memcpy(&k, t + mid * stride, sizeof k);
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < n)
        memcpy(&k, t + lo * stride, sizeof k);
    return lo < n && k == key ? lo : n;
}

const sid_entry *heap_sid_find(const sid_entry *t, size_t n, uint64_t id)
{
    size_t i = find_key(t, n, sizeof *t, id);
    return i < n ? &t[i] : NULL;
}

/* The clear names' look-ups (hp_heap_names.c writes them). */
int heap_names_text(const hp_heap *h, uint64_t sid, const uint8_t **text, size_t *len)
{
    const heap_names *n = &h->names;
    size_t i = find_key(n->strings, n->n_strings, sizeof *n->strings, sid);
    if (i == n->n_strings)
        return 0;
    *text = n->text + n->strings[i].off;
    *len = (size_t)n->strings[i].len;
    return 1;
}

const hp_frame *heap_renamed_frame(const hp_heap *h, uint64_t frame_id)
{
    const heap_names *n = &h->names;
    size_t i = find_key(n->frames, n->n_frames, sizeof *n->frames, frame_id);
    return i < n->n_frames ? &n->frames[i].frame : NULL;
}

int hp_heap_utf8(const hp_heap *h, uint64_t sid, const uint8_t **text, size_t *len)
{
    const sid_entry *e;
    uint64_t length;
    if (h->names.n_strings && sid >= h->names.strings[0].sid)
        return heap_names_text(h, sid, text, len);
    e = heap_sid_find(h->strings, h->n_strings, sid);
    if (!e)
        return 0;
    /* The record was bounds-checked when it was listed. */
    length = hp_be32(h->buf + e->offset + 5);
    *text = h->buf + e->offset + 9 + h->id_size;
    *len = (size_t)(length - (uint64_t)h->id_size);
    return 1;
}

uint32_t hp_heap_class_count(const hp_heap *h) { return h->n_classes; }
uint32_t hp_heap_class_class(const hp_heap *h) { return h->class_class; }


uint32_t hp_heap_find_class_id(const hp_heap *h, uint64_t class_id)
{
    uint32_t lo = 0, hi = h->n_classes;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (h->classes[mid].id < class_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < h->n_classes && h->classes[lo].id == class_id ? lo : HP_NONE;
}

uint32_t hp_heap_find_class_name(const hp_heap *h, const char *name, size_t len, uint32_t start)
{
    uint32_t i;
    for (i = start; i < h->n_classes; i++) {
        const uint8_t *text;
        size_t text_len;
        char unnamed[HP_UNNAMED_MAX];
        if (hp_heap_utf8(h, h->classes[i].name_sid, &text, &text_len) ? hp_java_name_equals(text, text_len, name, len)
            : hp_unnamed(unnamed, HP_UNNAMED_CLASS, h->classes[i].id) == len && memcmp(unnamed, name, len) == 0)
            return i;
    }
    return HP_NONE;
}

uint32_t hp_heap_class_by_serial(const hp_heap *h, uint32_t serial)
{
    size_t i;
    for (i = 0; i < h->n_loads; i++)
        if (h->loads[i].serial == serial)
            return hp_heap_find_class_id(h, h->loads[i].class_id);
    return HP_NONE;
}

void hp_heap_class(const hp_heap *h, uint32_t ord, hp_class_info *out)
{
    const heap_class *c = &h->classes[ord];
    out->id = c->id;
    out->super_id = c->super_id;
    out->loader_id = c->loader_id;
    out->super_ord = c->super_ord;
    out->object_index = c->object_index;
    if (!hp_heap_utf8(h, c->name_sid, &out->name, &out->name_len)) {
        out->name = NULL;
        out->name_len = 0;
    }
    out->raw_size = c->raw_size;
    out->data_size = c->data_size;
    out->instance_size = c->instance_size;
    out->instances = c->instances;
    out->offset = c->offset;
    out->n_fields = c->n_fields;
    out->n_statics = c->n_statics;
    out->n_refs = c->n_refs;
    out->elem_type = c->elem_type;
    if (!out->elem_type && out->name_len > 0 && (out->name[0] == '[' ||
        (out->name_len > 2 && out->name[out->name_len - 1] == ']' && out->name[out->name_len - 2] == '[')))
        out->elem_type = HP_T_OBJECT;
}

void hp_static_iter_init(hp_static_iter *it, const hp_heap *h, uint32_t ord)
{
    const heap_class *c = &h->classes[ord];
    it->h = h;
    it->cls = ord;
    it->k = 0;
    it->p = h->buf + c->offset + c->statics_off + 2;
}

int hp_static_next(hp_static_iter *it, hp_field *out)
{
    const hp_heap *h = it->h;
    const uint8_t *p = it->p;
    if (it->k >= h->classes[it->cls].n_statics)
        return 0;
    /* Entries are (id name, u1 type, value); the CLASS_DUMP was checked whole. */
    out->name_sid = out->dump_name_sid = hp_read_id(p, h->id_size);
    if (heap_renamed_field(h, it->cls, it->k))
        out->name_sid = heap_renamed_field(h, it->cls, it->k);
    out->type = p[h->id_size];
    out->is_static = 1;
    out->declaring = it->cls;
    out->number = it->k;
    out->offset = it->k++;
    out->value = p + h->id_size + 1;
    it->p = p + h->id_size + 1 + hp_type_size(out->type, h->id_size);
    return 1;
}

void hp_field_iter_init(hp_field_iter *it, const hp_heap *h, uint32_t ord)
{
    it->h = h;
    it->cls = ord;
    it->k = 0;
    it->base = 0;
    it->own = 0;
}

int hp_field_next(hp_field_iter *it, hp_field *out)
{
    const hp_heap *h = it->h;
    const uint8_t *q;
    while (it->cls != HP_NONE && it->k >= h->classes[it->cls].n_fields) {
        it->base += h->classes[it->cls].own_size;
        it->cls = h->classes[it->cls].super_ord;
        it->k = 0;
        it->own = 0;
    }
    if (it->cls == HP_NONE)
        return 0;
    q = h->buf + h->classes[it->cls].offset + h->classes[it->cls].fields_off + 2 + (size_t)it->k * (h->id_size + 1);
    out->name_sid = out->dump_name_sid = hp_read_id(q, h->id_size);
    if (heap_renamed_field(h, it->cls, h->classes[it->cls].n_statics + it->k))
        out->name_sid = heap_renamed_field(h, it->cls, h->classes[it->cls].n_statics + it->k);
    out->type = q[h->id_size];
    out->is_static = 0;
    out->declaring = it->cls;
    out->offset = it->base + it->own;
    out->number = it->k;
    out->value = NULL;
    it->own += (uint32_t)hp_type_size(out->type, h->id_size);
    it->k++;
    return 1;
}

void hp_heap_ref_field(const hp_heap *h, uint32_t ord, uint32_t slot, hp_field *out)
{
    hp_field_iter it;
    uint32_t seen = 0;
    hp_field_iter_init(&it, h, ord);
    while (hp_field_next(&it, out))
        if (out->type == HP_T_OBJECT && seen++ == slot)
            return;
    memset(out, 0, sizeof *out);
    out->declaring = HP_NONE;
}

int hp_heap_field_name(const hp_heap *h, const hp_field *f, char *buf, const uint8_t **name, size_t *len)
{
    if (hp_heap_utf8(h, f->name_sid, name, len))
        return 1;
    *len = hp_unnamed(buf, f->is_static ? HP_UNNAMED_STATIC : HP_UNNAMED_FIELD, f->number);
    *name = (const uint8_t *)buf;
    return 0;
}

int hp_heap_field_is(const hp_heap *h, const hp_field *f, const char *name, size_t len)
{
    char buf[HP_UNNAMED_MAX];
    const uint8_t *text;
    size_t n;
    hp_heap_field_name(h, f, buf, &text, &n);
    return n == len && memcmp(text, name, len) == 0;
}

int heap_sid_is(const hp_heap *h, uint64_t sid, const char *want)
{
    const uint8_t *text;
    size_t len;
    return hp_heap_utf8(h, sid, &text, &len) && len == strlen(want) && memcmp(text, want, len) == 0;
}

int heap_field_named(const hp_heap *h, uint32_t ord, const char *name, hp_field *out)
{
    hp_field_iter it;
    hp_field_iter_init(&it, h, ord);
    while (hp_field_next(&it, out))
        if (hp_heap_field_is(h, out, name, strlen(name)))
            return 1;
    return 0;
}

int heap_classes_supers_first(hp_heap *h, void (*fn)(hp_heap *h, uint32_t ord, void *ctx), void *ctx)
{
    uint32_t C = h->n_classes, i;
    uint8_t *state = h->alloc.malloc_fn(C ? C : 1);
    uint32_t *stack = h->alloc.malloc_fn((C ? C : 1) * sizeof *stack);
    int rc = 0;
    if (!state || !stack) {
        h->alloc.free_fn(state);
        h->alloc.free_fn(stack);
        return -1;
    }
    memset(state, 0, C);
    for (i = 0; i < C && rc == 0; i++) {
        uint32_t top = 0, cur = i;
        while (cur != HP_NONE && state[cur] == 0) {
            state[cur] = 1;
            stack[top++] = cur;
            cur = h->classes[cur].super_ord;
        }
        if (cur != HP_NONE && state[cur] == 1) {
            rc = (int)cur + 1; /* a cycle through class cur */
            break;
        }
        while (top > 0) {
            uint32_t c = stack[--top];
            fn(h, c, ctx);
            state[c] = 2;
        }
    }
    h->alloc.free_fn(state);
    h->alloc.free_fn(stack);
    return rc;
}
