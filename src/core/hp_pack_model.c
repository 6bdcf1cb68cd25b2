/* The class table of the pack model (see hp_pack_model.h). */
#include "hp_pack_model.h"

#include <string.h>

#include "hp_pack.h"

#define PK_NAME(n) n,
static const char *const stream_names[] = { PK_STREAM_LIST(PK_NAME) };
typedef char pk_names_match_streams[sizeof stream_names / sizeof stream_names[0] == HP_PACK_NSTREAMS ? 1 : -1];

const char *hp_pack_stream_name(int i)
{
    return i >= 0 && i < HP_PACK_NSTREAMS ? stream_names[i] : NULL;
}

void pk_classes_init(pk_classes *t, const hp_alloc *alloc)
{
    memset(t, 0, sizeof *t);
    t->alloc = alloc ? *alloc : hp_default_alloc;
    hp_idmap_init(&t->map, &t->alloc);
}

void pk_classes_free(pk_classes *t)
{
    hp_idmap_clear(&t->map);
    t->alloc.free_fn(t->v);
    t->alloc.free_fn(t->types);
    t->alloc.free_fn(t->steps);
    memset(t, 0, sizeof *t);
}

/* Makes room for `more` elements of `size` bytes in *data; 0 or -1. */
static int grow(const hp_alloc *a, void **data, size_t *cap, size_t len, size_t more, size_t size)
{
    size_t want = len + more, c = *cap ? *cap : 64;
    void *p;
    if (want <= *cap)
        return 0;
    while (c < want)
        c *= 2;
    p = a->realloc_fn(*data, c * size);
    if (!p)
        return -1;
    *data = p;
    *cap = c;
    return 0;
}

int64_t pk_class_add(pk_classes *t, uint64_t id)
{
    int inserted;
    uint32_t *slot;
    pk_class *c;
    int64_t found = pk_class_find(t, id);
    if (found >= 0)
        return found;
    if (t->n >= PK_MAX_CLASSES)
        return -2;
    if (grow(&t->alloc, (void **)&t->v, &t->cap, t->n, 1, sizeof *t->v) < 0)
        return -1;
    slot = hp_idmap_put(&t->map, id, (uint32_t)t->n, &inserted);
    if (!slot)
        return -1;
    c = &t->v[t->n];
    memset(c, 0, sizeof *c);
    c->id = id;
    return (int64_t)t->n++;
}

int pk_class_define(pk_classes *t, size_t idx, uint64_t super_id, const uint8_t *types, size_t n, size_t stride)
{
    pk_class *c = &t->v[idx];
    size_t i;
    t->epoch++;
    if (c->dumped) {
        /* A class dumped twice (a file with two heap dumps): programs built
         * on its old fields may be stale, so all are rebuilt on demand (a
         * program is current while no class was dumped again since it was
         * built: one counter, not a pass over every class). */
        t->redumps++;
        t->nsteps = 0;
    }
    c->dumped = 0;
    c->prog_state = PK_PROG_NONE;
    if (t->ntypes + n > PK_MAX_TYPES)
        return 0;
    if (grow(&t->alloc, (void **)&t->types, &t->types_cap, t->ntypes, n ? n : 1, 1) < 0)
        return -1;
    for (i = 0; i < n; i++)
        t->types[t->ntypes + i] = types[i * stride];
    c->own_off = (uint32_t)t->ntypes;
    c->own_n = (uint32_t)n;
    c->super_id = super_id;
    c->dumped = 1;
    t->ntypes += n;
    return 0;
}

/* Appends the steps of `idx`'s own fields, then its supers'.  0, -1 out of
 * memory, -2 layout unknown. */
static int build(pk_classes *t, size_t idx, int id_size, uint64_t *size)
{
    size_t depth, i;
    int64_t k = (int64_t)idx;
    *size = 0;
    for (depth = 0; k >= 0; depth++) {
        const pk_class *c = &t->v[k];
        if (!c->dumped || depth >= PK_MAX_DEPTH)
            return -2;
        for (i = 0; i < c->own_n; i++) {
            int type = t->types[c->own_off + i];
            uint32_t *last = t->nsteps ? &t->steps[t->nsteps - 1] : NULL;
            int fresh = t->nsteps == t->v[idx].prog_off; /* no step of this program yet */
            if (t->nsteps >= PK_MAX_STEPS)
                return -2;
            if (type == HP_T_OBJECT) {
                if (grow(&t->alloc, (void **)&t->steps, &t->steps_cap, t->nsteps, 1, sizeof *t->steps) < 0)
                    return -1;
                t->steps[t->nsteps++] = PK_STEP_REF;
                *size += (uint64_t)id_size;
            } else {
                int s = hp_type_size(type, id_size);
                if (!fresh && !(*last & PK_STEP_REF)) {
                    *last += (uint32_t)s; /* merge with the run before */
                } else {
                    if (grow(&t->alloc, (void **)&t->steps, &t->steps_cap, t->nsteps, 1, sizeof *t->steps) < 0)
                        return -1;
                    t->steps[t->nsteps++] = (uint32_t)s;
                }
                *size += (uint64_t)s;
            }
        }
        if (c->super_id == 0)
            return *size > 0xFFFFFFFFu ? -2 : 0;
        k = pk_class_find(t, c->super_id);
    }
    return -2;
}

const uint32_t *pk_class_program(pk_classes *t, size_t idx, int id_size, size_t *n, uint32_t *size, int *nomem)
{
    pk_class *c = &t->v[idx];
    *nomem = 0;
    if (c->prog_state == PK_PROG_FAILED && c->fail_epoch == t->epoch)
        return NULL;
    if (c->prog_state != PK_PROG_BUILT || c->built_redumps != t->redumps) {
        uint64_t total;
        size_t start = t->nsteps, i;
        int rc;
        c->prog_off = (uint32_t)start;
        rc = build(t, idx, id_size, &total);
        if (rc < 0) {
            t->nsteps = start;
            if (rc == -1) {
                *nomem = 1;
                return NULL;
            }
            c->prog_state = PK_PROG_FAILED;
            c->fail_epoch = t->epoch;
            return NULL;
        }
        c->prog_n = (uint32_t)(t->nsteps - start);
        c->size = (uint32_t)total;
        c->prim = c->size;
        for (i = start; i < t->nsteps; i++)
            if (t->steps[i] == PK_STEP_REF)
                c->prim -= (uint32_t)id_size;
        c->prog_state = PK_PROG_BUILT;
        c->built_redumps = t->redumps;
    }
    *n = c->prog_n;
    *size = c->size;
    return t->steps + c->prog_off;
}
