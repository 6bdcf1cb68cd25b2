/* References: outbound ones read from the mapping through class layouts,
 * inbound ones from a reverse index (CSR) built on first use. */
#include "hp_heap_impl.h"

#include <string.h>

enum { IT_DONE, IT_FIELDS, IT_ELEMENTS, IT_STATICS, IT_LOADER };

void hp_ref_iter_init(hp_ref_iter *it, const hp_heap *h, uint32_t index)
{
    const int id = h->id_size;
    uint32_t ord = obj_ord(h, index), C = h->n_classes;
    const uint8_t *p = h->buf + obj_offset(h, index);
    it->h = h;
    it->lazy = 0;
    it->pos = 0;
    it->count = 0;
    it->offsets = NULL;
    it->data = NULL;
    it->data_len = 0;
    it->kind = IT_DONE;
    it->cls = HP_NONE;
    if (ord < C) {
        const heap_class *c = &h->classes[ord];
        it->kind = IT_FIELDS;
        it->data = p + 1 + 2 * id + 8;
        it->data_len = hp_be32(p + 1 + 2 * id + 4);
        it->offsets = h->ref_offsets + c->refs_start;
        it->count = c->n_refs;
        it->cls = ord;
    } else if (ord < 2 * C || ord == 2 * C + ORD_LOST_ARRAY) {
        it->kind = IT_ELEMENTS;
        it->count = hp_be32(p + 1 + id + 4);
        it->data = p + 1 + 2 * id + 8;
        it->data_len = (uint64_t)it->count * id;
    } else if (ord == 2 * C + ORD_CLASS_OBJECT) {
        it->cls = hp_heap_find_class_id(h, obj_id(h, index));
        if (it->cls != HP_NONE) {
            const heap_class *c = &h->classes[it->cls];
            it->kind = IT_STATICS;
            it->count = c->n_statics;
            it->data = h->buf + c->offset + c->statics_off + 2;
        }
    }
}

static int emit(hp_ref_iter *it, hp_ref *out, int kind, uint32_t slot, uint64_t target)
{
    out->kind = kind;
    out->slot = slot;
    out->target_id = target;
    out->target = it->lazy ? HP_NONE : hp_heap_find(it->h, target);
    return 1;
}

int hp_ref_next(hp_ref_iter *it, hp_ref *out)
{
    const hp_heap *h = it->h;
    const int id = h->id_size;
    switch (it->kind) {
    case IT_FIELDS:
        while (it->pos < it->count) {
            uint32_t slot = it->pos++, off = it->offsets[slot];
            uint64_t target;
            if ((uint64_t)off + id > it->data_len) /* a layout longer than the instance */
                continue;
            target = hp_read_id(it->data + off, id);
            if (target)
                return emit(it, out, HP_REF_FIELD, slot, target);
        }
        break;
    case IT_ELEMENTS:
        while (it->pos < it->count) {
            uint32_t slot = it->pos++;
            uint64_t target = hp_read_id(it->data + (size_t)slot * id, id);
            if (target)
                return emit(it, out, HP_REF_ELEMENT, slot, target);
        }
        break;
    case IT_STATICS:
        while (it->pos < it->count) {
            uint32_t slot = it->pos++;
            int type = it->data[id];
            const uint8_t *value = it->data + id + 1;
            it->data = value + hp_type_size(type, id);
            if (type == HP_T_OBJECT) {
                uint64_t target = hp_read_id(value, id);
                if (target)
                    return emit(it, out, HP_REF_STATIC, slot, target);
            }
        }
        it->kind = IT_LOADER;
        /* fall through */
    case IT_LOADER:
        it->kind = IT_DONE;
        if (h->classes[it->cls].loader_id)
            return emit(it, out, HP_REF_LOADER, 0, h->classes[it->cls].loader_id);
        break;
    default:
        break;
    }
    it->kind = IT_DONE;
    return 0;
}

uint64_t hp_heap_count_dangling(const hp_heap *h, int (*interrupt)(void *), void *ctx, int *stopped)
{
    uint64_t dangling = 0;
    uint32_t i;
    *stopped = 0;
    for (i = 0; i < h->n; i++) {
        hp_ref_iter it;
        hp_ref ref;
        if ((i & 0xFFFFF) == 0xFFFFF && interrupt && interrupt(ctx)) {
            *stopped = 1;
            return 0;
        }
        hp_ref_iter_init(&it, h, i);
        while (hp_ref_next(&it, &ref))
            dangling += ref.target == HP_NONE;
    }
    return dangling;
}

int hp_heap_has_referrers(const hp_heap *h) { return h->rev_src != NULL; }

const uint32_t *hp_heap_referrers(const hp_heap *h, uint32_t index, uint32_t *count)
{
    *count = h->rev_start[index + 1] - h->rev_start[index];
    return h->rev_src + h->rev_start[index];
}

/* Counts one unit of work; asks `interrupt` every 2^22 of them. */
static int stop_now(uint32_t *work, int (*interrupt)(void *), void *ctx)
{
    if (++*work >> 22 == 0 || !interrupt)
        return 0;
    *work = 0;
    return interrupt(ctx) != 0;
}

/* Walks every reference between present objects: counts them per target
 * into start[t + 1] (src NULL), or writes each source at its target's
 * cursor start[t].  Objects and references count as work: an array of 50 M
 * references is interrupted too. */
static int each_edge(const hp_heap *h, uint32_t *start, uint32_t *src, int (*interrupt)(void *), void *ctx)
{
    uint32_t i, work = 0;
    for (i = 0; i < h->n; i++) {
        hp_ref_iter it;
        hp_ref ref;
        hp_ref_iter_init(&it, h, i);
        while (hp_ref_next(&it, &ref)) {
            if (stop_now(&work, interrupt, ctx))
                return -1;
            if (ref.target == HP_NONE)
                continue;
            if (src)
                src[start[ref.target]++] = i;
            else
                start[ref.target + 1]++;
        }
        if (stop_now(&work, interrupt, ctx))
            return -1;
    }
    return 0;
}

hp_code hp_heap_build_referrers(hp_heap *h, int (*interrupt)(void *), void *ctx, hp_error *err)
{
    uint32_t *start, *src = NULL, i;
    uint64_t total = 0;
    if (h->rev_src)
        return HP_OK;
    start = h->alloc.malloc_fn(((size_t)h->n + 1) * sizeof *start);
    if (!start)
        return hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the referrer index");
    memset(start, 0, ((size_t)h->n + 1) * sizeof *start);
    if (each_edge(h, start, NULL, interrupt, ctx) < 0)
        goto interrupted;
    for (i = 0; i < h->n; i++) {
        total += start[i + 1];
        if (total > 0xFFFFFFFFull) {
            h->alloc.free_fn(start);
            return hp_fail(err, HP_E_LIMIT, 0, -1, 0, 0, 0, "more than 2^32 references");
        }
        start[i + 1] = (uint32_t)total;
    }
    src = h->alloc.malloc_fn((size_t)(total ? total : 1) * sizeof *src);
    if (!src) {
        h->alloc.free_fn(start);
        return hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the referrer index");
    }
    /* start[t] is now t's fill cursor; it ends where t + 1's slot begins. */
    if (each_edge(h, start, src, interrupt, ctx) < 0)
        goto interrupted;
    for (i = h->n; i > 0; i--)
        start[i] = start[i - 1];
    start[0] = 0;
    h->rev_start = start;
    h->rev_src = src;
    return HP_OK;
interrupted:
    h->alloc.free_fn(start);
    h->alloc.free_fn(src);
    return hp_fail(err, HP_E_USAGE, 0, -1, 0, 0, 0, "interrupted");
}
