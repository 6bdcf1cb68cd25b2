/* Collection layouts resolved per class (the table is in
 * hp_coll_layouts.c): fields found by name, each class's layout after its
 * superclass's.  Reads go through the heap index's public API only. */
#include "hp_coll_impl.h"

#include <string.h>

/* ---- fields by name ---- */

static int sid_is(const hp_heap *h, uint64_t sid, const char *name, size_t len)
{
    const uint8_t *text;
    size_t text_len;
    return hp_heap_utf8(h, sid, &text, &text_len) && text_len == len && memcmp(text, name, len) == 0;
}

/* Calls back for each '|'-separated alternative of `names` until one returns 1. */
static int each_name(const char *names, int (*try_name)(void *ctx, const char *name, size_t len), void *ctx)
{
    const char *p = names;
    for (;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (try_name(ctx, p, len))
            return 1;
        if (!bar)
            return 0;
        p = bar + 1;
    }
}

typedef struct {
    const hp_heap *h;
    uint32_t ord;
    hp_field found;
    int64_t offset;     /* of an instance field found, in an instance of ord */
    int statics;
} field_search;

/* Instance fields are looked for in the class and at most FIELD_DEPTH
 * classes above it: the fields a layout reads are declared within a few
 * classes of the one whose name it carries, and a hostile chain of a
 * million classes must cost no more than a few. */
#define FIELD_DEPTH 64

/* The bytes of the instance fields class `ord` declares itself: an
 * instance holds them before its superclass's fields, so they are how far
 * the superclass's fields move in it. */
static int64_t own_field_bytes(const hp_heap *h, uint32_t ord)
{
    hp_class_info info;
    hp_field_iter it;
    hp_field f;
    uint32_t k;
    int64_t bytes = 0;
    hp_heap_class(h, ord, &info);
    hp_field_iter_init(&it, h, ord);
    for (k = 0; k < info.n_fields && hp_field_next(&it, &f); k++)
        bytes += hp_type_size(f.type, hp_heap_id_size(h));
    return bytes;
}

/* Whether class `cls` itself declares instance field `name` (into s->found). */
static int declares(field_search *s, uint32_t cls, const char *name, size_t len)
{
    hp_class_info info;
    hp_field_iter it;
    uint32_t k;
    hp_heap_class(s->h, cls, &info);
    hp_field_iter_init(&it, s->h, cls);
    for (k = 0; k < info.n_fields && hp_field_next(&it, &s->found); k++)
        if (sid_is(s->h, s->found.name_sid, name, len))
            return 1;
    return 0;
}

static int try_field(void *ctx, const char *name, size_t len)
{
    field_search *s = ctx;
    uint32_t cls = s->ord;
    int64_t base = 0;
    int depth;
    if (s->statics) {
        hp_static_iter it;
        for (hp_static_iter_init(&it, s->h, s->ord); hp_static_next(&it, &s->found);)
            if (sid_is(s->h, s->found.name_sid, name, len))
                return 1;
        return 0;
    }
    for (depth = 0; cls != HP_NONE && depth <= FIELD_DEPTH; depth++) {
        hp_class_info info;
        if (declares(s, cls, name, len)) {
            s->offset = base + s->found.offset;
            return 1;
        }
        base += own_field_bytes(s->h, cls);
        hp_heap_class(s->h, cls, &info);
        cls = info.super_ord;
    }
    return 0;
}

/* The instance field of class `ord` named by `names` (the nearest
 * declaration, up to FIELD_DEPTH classes above it, of the first
 * alternative it has); 0 when it has none. */
int coll_find_field(const hp_heap *h, uint32_t ord, const char *names, coll_field *out)
{
    field_search s;
    s.h = h;
    s.ord = ord;
    s.statics = 0;
    out->offset = -1;
    out->type = 0;
    if (!names || ord == HP_NONE || !each_name(names, try_field, &s))
        return 0;
    out->offset = s.offset;
    out->type = s.found.type;
    return 1;
}

/* The object a static reference field of class `ord` holds, or 0. */
static uint64_t static_ref(const hp_heap *h, uint32_t ord, const char *names)
{
    field_search s;
    s.h = h;
    s.ord = ord;
    s.statics = 1;
    if (!names || ord == HP_NONE || !each_name(names, try_field, &s) || s.found.type != HP_T_OBJECT)
        return 0;
    return hp_read_id(s.found.value, hp_heap_id_size(h));
}

typedef struct {
    const hp_heap *h;
    const char *statics;
    uint64_t marker;
} marker_search;

static int try_marker_class(void *ctx, const char *name, size_t len)
{
    marker_search *s = ctx;
    s->marker = static_ref(s->h, hp_heap_find_class_name(s->h, name, len, 0), s->statics);
    return s->marker != 0;
}

/* The object static `statics` holds in the first of `classes` ('|'
 * alternatives: androidx's Java classes keep DELETED in the class, its
 * Kotlin ones in the file's class, SparseArrayCompatKt) that has it, or 0. */
static uint64_t marker_of(const hp_heap *h, const char *classes, const char *statics)
{
    marker_search s;
    s.h = h;
    s.statics = statics;
    s.marker = 0;
    each_name(classes, try_marker_class, &s);
    return s.marker;
}

/* ---- resolving the layouts ---- */

static int is_int(int type) { return type == HP_T_INT || type == HP_T_LONG; }

/* Which spec fields are fields of the collection itself, by kind (the
 * others belong to nodes or segments and are resolved while walking). */
static int own_storage2(int kind) { return kind == COLL_ARRAY || kind == COLL_PARALLEL || kind == COLL_FIELDS; }

/* Resolves `spec` on class `ord`, which carries the spec's name, into
 * *out; 0 when the class lacks one of its fields. */
static int resolve(const hp_heap *h, const coll_spec *spec, uint32_t ord, coll_layout *out)
{
    const char *names[F_COUNT];
    int k;
    names[F_STORAGE] = spec->storage;
    names[F_STORAGE2] = own_storage2(spec->kind) ? spec->storage2 : NULL;
    names[F_SIZE] = spec->kind == COLL_SEGMENTS ? NULL : spec->size;
    names[F_HEAD] = spec->head;
    names[F_NULL_ENTRY] = spec->null_entry;
    names[F_CAPACITY] = spec->capacity;
    names[F_CELLS] = NULL; /* optional: resolved below */
    out->spec = spec;
    for (k = 0; k < F_COUNT; k++) {
        if (!coll_find_field(h, ord, names[k], &out->f[k]) && names[k])
            return 0;
    }
    if ((out->f[F_STORAGE].offset >= 0 && out->f[F_STORAGE].type != HP_T_OBJECT) ||
        (out->f[F_STORAGE2].offset >= 0 && out->f[F_STORAGE2].type != HP_T_OBJECT) ||
        (out->f[F_NULL_ENTRY].offset >= 0 && out->f[F_NULL_ENTRY].type != HP_T_OBJECT) ||
        (out->f[F_CAPACITY].offset >= 0 && out->f[F_CAPACITY].type != HP_T_OBJECT) ||
        (out->f[F_SIZE].offset >= 0 && !is_int(out->f[F_SIZE].type)) ||
        (out->f[F_HEAD].offset >= 0 && !is_int(out->f[F_HEAD].type)))
        return 0;
    if ((spec->flags & COLL_SIZE_CELLS) &&
        (!coll_find_field(h, ord, "counterCells", &out->f[F_CELLS]) || out->f[F_CELLS].type != HP_T_OBJECT))
        out->f[F_CELLS].offset = -1;
    out->marker = 0;
    if (spec->marker) {
        out->marker = spec->marker_class ? marker_of(h, spec->marker_class, spec->marker)
                                         : static_ref(h, ord, spec->marker);
        if (!out->marker && (spec->flags & COLL_NEEDS_MARKER))
            return 0;
    }
    return 1;
}

/* The first spec named like class `ord`, or coll_spec_count. */
static size_t spec_named(const hp_heap *h, uint32_t ord)
{
    hp_class_info info;
    size_t k;
    hp_heap_class(h, ord, &info);
    if (!info.name || info.elem_type)
        return coll_spec_count;
    for (k = 0; k < coll_spec_count; k++)
        if (hp_java_name_equals(info.name, info.name_len, coll_specs[k].name, strlen(coll_specs[k].name)))
            return k;
    return coll_spec_count;
}

/* The resolution under way: the layouts so far, and each class's. */
typedef struct {
    const hp_heap *h;
    hp_coll *c;
    const size_t *named;
    uint32_t layouts_cap;
} resolving;

static int add_layout(resolving *r, const coll_layout *layout, uint32_t *index)
{
    hp_coll *c = r->c;
    if (c->n_layouts == r->layouts_cap) {
        uint32_t cap = r->layouts_cap ? r->layouts_cap * 2 : 16;
        coll_layout *more = c->alloc.realloc_fn(c->layouts, (size_t)cap * sizeof *more);
        if (!more)
            return 0;
        c->layouts = more;
        r->layouts_cap = cap;
    }
    c->layouts[c->n_layouts] = *layout;
    *index = c->n_layouts++;
    return 1;
}

/* The layout of class `ord`, its superclass's already resolved: the first
 * variant of its own name whose fields it has; else its superclass's,
 * moved by the fields `ord` declares.  0 when out of memory. */
static int resolve_class(resolving *r, uint32_t ord)
{
    const hp_heap *h = r->h;
    hp_coll *c = r->c;
    size_t first = r->named[ord], k;
    hp_class_info info;
    coll_layout layout;
    uint32_t inherited;
    int64_t shift;
    int f;
    c->layout_of[ord] = HP_NONE;
    for (k = first; k < coll_spec_count; k++) {
        if (k > first && strcmp(coll_specs[k].name, coll_specs[first].name) != 0)
            break;
        if (resolve(h, &coll_specs[k], ord, &layout))
            return add_layout(r, &layout, &c->layout_of[ord]);
    }
    hp_heap_class(h, ord, &info);
    inherited = info.super_ord == HP_NONE ? HP_NONE : c->layout_of[info.super_ord];
    if (inherited == HP_NONE)
        return 1;
    shift = own_field_bytes(h, ord);
    if (shift == 0) {
        c->layout_of[ord] = inherited; /* the same offsets: shared */
        return 1;
    }
    layout = c->layouts[inherited];
    for (f = 0; f < F_COUNT; f++)
        if (layout.f[f].offset >= 0)
            layout.f[f].offset += shift;
    return add_layout(r, &layout, &c->layout_of[ord]);
}

/* Resolves every class after its superclass (a chain of a million classes
 * is walked once, not once per class).  HP_OK, HP_E_NOMEM or HP_E_ABORTED. */
static hp_code resolve_all(resolving *r, int (*interrupt)(void *ctx), void *ctx, hp_error *err)
{
    uint32_t n = hp_heap_class_count(r->h), ord, done = 0;
    uint8_t *state = r->c->alloc.malloc_fn(n ? n : 1); /* 0 to do, 1 on the stack, 2 resolved */
    uint32_t *stack = r->c->alloc.malloc_fn((n ? n : 1) * sizeof *stack);
    hp_code rc = HP_OK;
    if (!state || !stack)
        rc = hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the collection layouts");
    else
        memset(state, 0, n);
    for (ord = 0; ord < n && rc == HP_OK; ord++) {
        uint32_t top = 0, cur = ord;
        while (cur != HP_NONE && state[cur] == 0) {
            hp_class_info info;
            state[cur] = 1;
            stack[top++] = cur;
            hp_heap_class(r->h, cur, &info);
            cur = info.super_ord;
        }
        while (top > 0 && rc == HP_OK) {
            uint32_t at = stack[--top];
            /* A class on a loop of superclasses (the index refuses them) would see its own slot unset. */
            if (!resolve_class(r, at))
                rc = hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the collection layouts");
            state[at] = 2;
            if ((++done & 1023) == 0 && interrupt && interrupt(ctx))
                rc = hp_fail(err, HP_E_ABORTED, 0, -1, 0, 0, 0, "interrupted");
        }
    }
    r->c->alloc.free_fn(state);
    r->c->alloc.free_fn(stack);
    return rc;
}

hp_code hp_coll_new(const hp_heap *h, const hp_alloc *alloc, int (*interrupt)(void *ctx), void *ctx, hp_coll **out,
                    hp_error *err)
{
    const hp_alloc *a = alloc ? alloc : &hp_default_alloc;
    uint32_t n = hp_heap_class_count(h), ord;
    hp_coll *c = a->malloc_fn(sizeof *c);
    size_t *named = NULL;
    resolving r;
    hp_code rc;
    *out = NULL;
    if (c) {
        memset(c, 0, sizeof *c);
        c->h = h;
        c->alloc = *a;
        c->layout_of = a->malloc_fn((n ? n : 1) * sizeof *c->layout_of);
        named = a->malloc_fn((n ? n : 1) * sizeof *named);
    }
    if (!c || !c->layout_of || !named) {
        a->free_fn(named);
        hp_coll_free(c);
        return hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the collection layouts");
    }
    rc = HP_OK;
    for (ord = 0; ord < n && rc == HP_OK; ord++) {
        named[ord] = spec_named(h, ord);
        c->layout_of[ord] = HP_NONE;
        if ((ord & 1023) == 1023 && interrupt && interrupt(ctx))
            rc = hp_fail(err, HP_E_ABORTED, 0, -1, 0, 0, 0, "interrupted");
    }
    r.h = h;
    r.c = c;
    r.named = named;
    r.layouts_cap = 0;
    if (rc == HP_OK)
        rc = resolve_all(&r, interrupt, ctx, err);
    a->free_fn(named);
    if (rc != HP_OK) {
        hp_coll_free(c);
        return rc;
    }
    *out = c;
    return HP_OK;
}
