/* Measures of collections: size, capacity and wasted bytes of one
 * (hp_coll_measure_of), and per class over the heap (hp_coll_waste). */
#include "hp_coll_impl.h"

#include "hp_graph.h"

#include <string.h>


typedef struct backing {
    uint32_t index[64];
    uint64_t stride[64];
    unsigned n;
} backing;

static void add_backing(const hp_heap *h, backing *b, const hp_object *owner, const coll_field *f, uint64_t stride)
{
    uint64_t id = coll_ref_at(h, owner, f);
    uint32_t i = id ? hp_heap_find(h, id) : HP_NONE;
    if (i != HP_NONE && b->n < 64) {
        hp_kind kind = hp_heap_object_kind(h, i);
        if (kind == HP_KIND_OBJ_ARRAY || kind == HP_KIND_PRIM_ARRAY) {
            b->index[b->n] = i;
            b->stride[b->n++] = stride;
        }
    }
}

static int has_bit(const uint8_t *bits, uint32_t i) { return bits && (bits[i >> 3] & (1u << (i & 7))); }
static void set_bit(uint8_t *bits, uint32_t i) { bits[i >> 3] |= (uint8_t)(1u << (i & 7)); }

/* What a heap-wide measure passes down: the arrays more than one collection
 * holds (a bit per object; NULL: none known), and where to note the arrays
 * this collection holds (NULL: nowhere). */
typedef struct measuring {
    const uint8_t *shared;
    backing *held;
} measuring;

/* wasted bytes of the backing arrays: hp_coll.h states the rule.  An
 * array several collections hold (Android's static EMPTY_TABLE) is
 * nobody's waste. */
static uint64_t wasted_of(const hp_heap *h, const backing *b, int64_t size, const uint8_t *shared)
{
    uint64_t total = 0;
    unsigned k;
    if (size < 0)
        return 0;
    for (k = 0; k < b->n; k++) {
        hp_object arr;
        uint64_t used, elem;
        if (has_bit(shared, b->index[k]))
            continue;
        hp_heap_object(h, b->index[k], &arr);
        if (size == 0) {
            total += hp_heap_shallow_size(h, b->index[k]);
            continue;
        }
        used = (uint64_t)size * b->stride[k];
        elem = arr.elem_type == HP_T_OBJECT ? (uint64_t)hp_heap_size_model(h)->oop_size
                                            : (uint64_t)hp_type_size(arr.elem_type, hp_heap_id_size(h));
        if (used < arr.length)
            total += (arr.length - used) * elem;
    }
    return total;
}

/* baseCount plus the values of counterCells (ConcurrentHashMap's sumCount).
 * The cells' `value` is looked up once per cell class met in a row. */
static int64_t counted_size(const hp_heap *h, const coll_layout *L, const hp_object *o, int64_t base)
{
    coll_field value = { -1, 0 };
    hp_object cells, cell;
    int id_size = hp_heap_id_size(h);
    uint32_t k, value_of = HP_NONE;
    if (!coll_array_at(h, o, &L->f[F_CELLS], &cells) || cells.elem_type != HP_T_OBJECT)
        return base;
    for (k = 0; k < cells.length; k++) {
        if (!coll_object_of(h, hp_read_id(cells.data + (uint64_t)k * id_size, id_size), NULL, &cell) ||
            cell.kind != HP_KIND_INSTANCE)
            continue;
        if (cell.class_ord != value_of) {
            value_of = cell.class_ord;
            coll_find_field(h, value_of, "value", &value);
        }
        if (value.offset >= 0)
            base += coll_int_at(h, &cell, &value, 0);
    }
    return base;
}

/* Whether a declared size is one the collection can hold: -1 (unknown)
 * or more; no more than an array-backed one's slots; no more than the
 * heap's objects when each entry is a node. */
static int size_fits(const hp_heap *h, int kind, int64_t size, int64_t capacity)
{
    if (size < -1)
        return 0;
    if (kind == COLL_ARRAY || kind == COLL_PARALLEL || kind == COLL_CIRCULAR)
        return capacity < 0 || size <= capacity;
    return size <= (int64_t)hp_heap_object_count(h);
}

static void measure(const hp_coll *c, uint32_t index, hp_coll_measure *out, int depth, const measuring *how)
{
    const hp_heap *h = c->h;
    const coll_layout *L = coll_layout_of(c, index);
    const coll_spec *spec;
    hp_object o, arr;
    backing b;
    memset(out, 0, sizeof *out);
    out->size = out->capacity = -1;
    out->inner = HP_NONE;
    if (!L || depth >= WRAP_DEPTH)
        return;
    spec = L->spec;
    out->shape = spec->shape;
    b.n = 0;
    hp_heap_object(h, index, &o);
    switch (spec->kind) {
    case COLL_EMPTY: out->size = 0; break;
    case COLL_ARRAY: {
        uint64_t stride = spec->shape == HP_COLL_MAP ? 2 : 1;
        int has = coll_array_at(h, &o, &L->f[F_STORAGE], &arr);
        out->capacity = has ? (int64_t)(arr.length / stride) : 0;
        out->size = L->f[F_SIZE].offset >= 0 ? coll_int_at(h, &o, &L->f[F_SIZE], -1) : out->capacity;
        add_backing(h, &b, &o, &L->f[F_STORAGE], stride);
        add_backing(h, &b, &o, &L->f[F_STORAGE2], 1);
        break;
    }
    case COLL_PARALLEL:
        out->capacity = coll_array_at(h, &o, &L->f[F_STORAGE], &arr) ? (int64_t)arr.length : 0;
        out->size = coll_int_at(h, &o, &L->f[F_SIZE], -1);
        add_backing(h, &b, &o, &L->f[F_STORAGE], 1);
        add_backing(h, &b, &o, &L->f[F_STORAGE2], 1);
        break;
    case COLL_CIRCULAR: {
        int64_t head = coll_int_at(h, &o, &L->f[F_HEAD], -1), end = coll_int_at(h, &o, &L->f[F_SIZE], -1);
        out->capacity = coll_array_at(h, &o, &L->f[F_STORAGE], &arr) ? (int64_t)arr.length : 0;
        out->size = out->capacity ? coll_circular_count(L, head, end, out->capacity) : 0;
        add_backing(h, &b, &o, &L->f[F_STORAGE], 1);
        break;
    }
    case COLL_HASH:
        out->capacity = coll_array_at(h, &o, &L->f[F_STORAGE], &arr) ? (int64_t)arr.length : 0;
        out->size = coll_int_at(h, &o, &L->f[F_SIZE], -1);
        if ((spec->flags & COLL_SIZE_CELLS) && out->size >= 0)
            out->size = counted_size(h, L, &o, out->size);
        add_backing(h, &b, &o, &L->f[F_STORAGE], 1);
        break;
    case COLL_SEGMENTS: {
        hp_object segs, seg;
        uint32_t k;
        int id_size = hp_heap_id_size(h);
        out->size = out->capacity = 0;
        if (!coll_array_at(h, &o, &L->f[F_STORAGE], &segs) || segs.elem_type != HP_T_OBJECT)
            break;
        uint32_t fields_of = HP_NONE; /* the segments' fields, looked up once per class met in a row */
        coll_field table = { -1, 0 }, count = { -1, 0 };
        for (k = 0; k < segs.length; k++) {
            if (!coll_object_of(h, hp_read_id(segs.data + (uint64_t)k * id_size, id_size), NULL, &seg) ||
                seg.kind != HP_KIND_INSTANCE)
                continue;
            if (seg.class_ord != fields_of) {
                fields_of = seg.class_ord;
                coll_find_field(h, fields_of, spec->size, &count);
                coll_find_field(h, fields_of, spec->storage2, &table);
            }
            if (count.offset >= 0)
                out->size += coll_int_at(h, &seg, &count, 0);
            if (table.offset >= 0 && coll_array_at(h, &seg, &table, &arr)) {
                out->capacity += arr.length;
                add_backing(h, &b, &seg, &table, 1);
            }
        }
        break;
    }
    case COLL_LINKED:
    case COLL_TREE:
        out->size = coll_int_at(h, &o, &L->f[F_SIZE], -1);
        if (L->f[F_CAPACITY].offset >= 0) { /* a LinkedHashMap's table */
            out->capacity = coll_array_at(h, &o, &L->f[F_CAPACITY], &arr) ? (int64_t)arr.length : 0;
            add_backing(h, &b, &o, &L->f[F_CAPACITY], 1);
        }
        break;
    case COLL_FIELDS: {
        uint64_t first = coll_ref_at(h, &o, &L->f[F_STORAGE]), second = coll_ref_at(h, &o, &L->f[F_STORAGE2]);
        if (spec->shape == HP_COLL_MAP)
            out->size = 1;
        else
            out->size = (first && first != L->marker) + (second && second != L->marker);
        break;
    }
    case COLL_WRAPPER: {
        uint64_t inner = coll_ref_at(h, &o, &L->f[F_STORAGE]);
        uint32_t i = inner ? hp_heap_find(h, inner) : HP_NONE;
        int owns = (spec->flags & COLL_OWNS) != 0;
        if (i == HP_NONE) {
            out->size = 0;
            out->shape = spec->shape ? spec->shape : HP_COLL_LIST;
            return;
        }
        if (owns) {
            measure(c, i, out, depth + 1, how); /* its inner collection's arrays are its own */
        } else {
            measuring through = { how ? how->shared : NULL, NULL }; /* a view holds nothing itself */
            measure(c, i, out, depth + 1, &through);
        }
        if (spec->shape)
            out->shape = spec->shape;
        out->inner = i;
        out->owns_inner = owns;
        if (!owns) { /* a view: the storage is its inner collection's */
            out->capacity = -1;
            out->wasted = 0;
        }
        return;
    }
    default: break;
    }
    out->size_corrupt = !size_fits(h, spec->kind, out->size, out->capacity);
    out->wasted = out->capacity >= 0 && !out->size_corrupt ? wasted_of(h, &b, out->size, how ? how->shared : NULL)
                                                           : 0;
    if (how && how->held)
        *how->held = b;
}

void hp_coll_measure_of(const hp_coll *c, uint32_t index, hp_coll_measure *out)
{
    measure(c, index, out, 0, NULL);
    if (out->shape == 0 && coll_layout_of(c, index))
        out->shape = hp_coll_shape(c, index, NULL);
}

/* A pass over every object that checks for an interrupt now and then. */
static int interrupted(uint32_t i, int (*interrupt)(void *ctx), void *ctx)
{
    return (i & 4095) == 0 && interrupt && interrupt(ctx);
}

/* The collections wrappers own (a HashSet's map): they count under the wrapper.  0, or -1 interrupted. */
static int mark_owned(const hp_coll *c, uint8_t *owned, int (*interrupt)(void *ctx), void *ctx)
{
    const hp_heap *h = c->h;
    uint32_t n = hp_heap_object_count(h), i;
    for (i = 0; i < n; i++) {
        const coll_layout *L = coll_layout_of(c, i);
        if (interrupted(i, interrupt, ctx))
            return -1;
        if (L && L->spec->kind == COLL_WRAPPER && (L->spec->flags & COLL_OWNS)) {
            hp_object o;
            uint64_t inner;
            uint32_t k;
            hp_heap_object(h, i, &o);
            inner = coll_ref_at(h, &o, &L->f[F_STORAGE]);
            k = inner ? hp_heap_find(h, inner) : HP_NONE;
            if (k != HP_NONE)
                set_bit(owned, k);
        }
    }
    return 0;
}

/* The arrays more than one of the measured collections (the owned ones
 * apart) holds, into `shared` (`seen`: those one holds).  0, or -1 interrupted. */
static int mark_shared(const hp_coll *c, const uint8_t *owned, uint8_t *seen, uint8_t *shared,
                       int (*interrupt)(void *ctx), void *ctx)
{
    uint32_t n = hp_heap_object_count(c->h), i;
    for (i = 0; i < n; i++) {
        hp_coll_measure m;
        backing held;
        measuring how;
        unsigned k, j;
        if (interrupted(i, interrupt, ctx))
            return -1;
        if (!coll_layout_of(c, i) || has_bit(owned, i))
            continue;
        held.n = 0;
        how.shared = NULL;
        how.held = &held;
        measure(c, i, &m, 0, &how);
        for (k = 0; k < held.n; k++) {
            for (j = 0; j < k && held.index[j] != held.index[k]; j++)
                ;
            if (j < k)
                continue; /* one collection holding an array twice does not share it */
            if (has_bit(seen, held.index[k]))
                set_bit(shared, held.index[k]);
            set_bit(seen, held.index[k]);
        }
    }
    return 0;
}

hp_code hp_coll_measure_each(const hp_coll *c, const uint64_t *keep, hp_coll_measured_fn fn, void *fn_ctx,
                             int (*interrupt)(void *ctx), void *ctx, hp_error *err)
{
    const hp_heap *h = c->h;
    uint32_t n = hp_heap_object_count(h), i;
    size_t bytes = (size_t)n / 8 + 1;
    uint8_t *bits = c->alloc.malloc_fn(3 * bytes); /* owned, seen, shared */
    uint8_t *owned = bits, *seen = bits + bytes, *shared = bits + 2 * bytes;
    measuring how;
    int stopped;
    if (!bits)
        return hp_fail(err, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory for the collection measures");
    memset(bits, 0, 3 * bytes);
    stopped = mark_owned(c, owned, interrupt, ctx) < 0 || mark_shared(c, owned, seen, shared, interrupt, ctx) < 0;
    how.shared = shared;
    how.held = NULL;
    for (i = 0; i < n && !stopped; i++) {
        hp_coll_measure m;
        if (interrupted(i, interrupt, ctx)) {
            stopped = 1;
            break;
        }
        if (!coll_layout_of(c, i) || has_bit(owned, i) || (keep && !hp_bit(keep, i)))
            continue;
        measure(c, i, &m, 0, &how);
        if (m.shape == HP_COLL_NONE)
            continue; /* a view of something that is no collection (a map's key set) */
        if (fn(fn_ctx, i, &m) != 0)
            stopped = 1;
    }
    c->alloc.free_fn(bits);
    return stopped ? hp_fail(err, HP_E_ABORTED, 0, -1, 0, 0, 0, "interrupted") : HP_OK;
}

typedef struct class_rows {
    const hp_heap *h;
    hp_coll_class_waste *rows;
} class_rows;

static int add_to_class(void *ctx, uint32_t index, const hp_coll_measure *m)
{
    class_rows *r = ctx;
    hp_coll_class_waste *row = &r->rows[hp_heap_object_class(r->h, index)];
    row->instances++;
    if (m->size_corrupt) {
        row->corrupt++;
        return 0;
    }
    row->empty += m->size == 0;
    if (m->capacity > 0 && m->size >= 0) {
        row->filled++;
        row->fill_sum += (double)m->size / (double)m->capacity;
    }
    row->wasted += m->wasted;
    return 0;
}

hp_code hp_coll_waste(const hp_coll *c, const uint64_t *keep, hp_coll_class_waste *rows, int (*interrupt)(void *ctx), void *ctx,
                      hp_error *err)
{
    class_rows r;
    r.h = c->h;
    r.rows = rows;
    return hp_coll_measure_each(c, keep, add_to_class, &r, interrupt, ctx, err);
}
