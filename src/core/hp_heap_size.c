/* The size model of a heap: VisualVM's guess of the reference size on
 * 64-bit dumps (hp_oops.c, here looking classes and objects up in the
 * index); under HP_SIZES_JVM then the layout the addresses show
 * (hp_layout.h), from a sample of the index, which is in id order and so in
 * address order; then every class's instance size.  Android dumps carry
 * whole object sizes and need neither (hp_size.c). */
#include "hp_heap_impl.h"

#include <string.h>

#include "hp_oops.h"

static uint64_t class_named(void *ctx, const char *name)
{
    const hp_heap *h = ctx;
    uint32_t c = hp_heap_find_class_name(h, name, strlen(name), 0);
    return c == HP_NONE ? 0 : h->classes[c].id;
}

static uint64_t class_dump(void *ctx, uint64_t class_id)
{
    const hp_heap *h = ctx;
    uint32_t c = hp_heap_find_class_id(h, class_id);
    return c == HP_NONE ? 0 : h->classes[c].offset;
}

static uint64_t object(void *ctx, uint64_t id)
{
    const hp_heap *h = ctx;
    uint32_t i = id ? hp_heap_find(h, id) : HP_NONE;
    return i == HP_NONE ? 0 : obj_offset(h, i);
}

static int sid_is(void *ctx, uint64_t sid, const char *want) { return heap_sid_is(ctx, sid, want); }

static int guess_oop_size(hp_heap *h)
{
    hp_oops_source src;
    src.buf = h->buf;
    src.buf_len = h->len;
    src.id_size = h->id_size;
    src.ctx = h;
    src.class_named = class_named;
    src.class_dump = class_dump;
    src.object = object;
    src.sid_is = sid_is;
    src.max_steps = h->n;
    return hp_oops_guess(&src);
}

/* The sample: up to WINDOWS runs of WINDOW consecutive objects, spread
 * evenly over the index (young and old regions alike), so that the cost
 * stays the same for any dump. */
#define WINDOWS 64
#define WINDOW 1024

/* Describes object i for hp_layout; 0 for a class object (a mirror, which
 * holds the class's statics) or an instance of an absent class. */
static int layout_object(const hp_heap *h, uint32_t i, hp_layout_object *o)
{
    uint32_t ord = obj_ord(h, i), C = h->n_classes, length;
    if (ord < C) {
        const heap_class *c = &h->classes[ord];
        o->kind = HP_LAYOUT_INSTANCE;
        o->refs = c->n_refs;
        o->bytes = c->data_size - (uint64_t)c->n_refs * (uint64_t)h->id_size;
        o->wide = 0;
        return 1;
    }
    if (ord >= 2 * C + 8 && ord != 2 * C + ORD_LOST_ARRAY)
        return 0;
    length = hp_be32(h->buf + obj_offset(h, i) + 1 + h->id_size + 4); /* the build decoded it whole */
    if (ord < 2 * C || ord == 2 * C + ORD_LOST_ARRAY) {
        o->kind = HP_LAYOUT_OBJ_ARRAY;
        o->refs = length;
        o->bytes = 0;
        o->wide = 0;
    } else {
        int size = hp_type_size((int)(ord - 2 * C) + 4, h->id_size);
        o->kind = HP_LAYOUT_PRIM_ARRAY;
        o->refs = 0;
        o->bytes = (uint64_t)length * (uint64_t)size;
        o->wide = size == 8;
    }
    return 1;
}

/* Class `ord`'s statics: references and bytes of primitives, less the
 * two HotSpot's dumper adds that the mirror does not hold (the constant
 * pool's resolved references and the initialisation lock). */
static void class_statics(const hp_heap *h, uint32_t ord, uint64_t *refs, uint64_t *bytes)
{
    hp_static_iter it;
    hp_field f;
    *refs = *bytes = 0;
    hp_static_iter_init(&it, h, ord);
    while (hp_static_next(&it, &f)) {
        if (f.type != HP_T_OBJECT)
            *bytes += (uint64_t)hp_type_size(f.type, h->id_size);
        else if (!heap_sid_is(h, f.name_sid, "<resolved_references>") && !heap_sid_is(h, f.name_sid, "<init_lock>"))
            ++*refs;
    }
}

/* The mirror base from the gap after every class object. */
static void infer_mirrors(hp_heap *h)
{
    hp_layout_mirrors t;
    uint32_t c;
    hp_layout_mirrors_init(&t);
    for (c = 0; c < h->n_classes; c++) {
        uint32_t i = h->classes[c].object_index;
        uint64_t refs, bytes;
        if (i + 1 >= h->n)
            continue;
        class_statics(h, c, &refs, &bytes);
        hp_layout_mirror_observe(&t, &h->model, refs, bytes, obj_id(h, i + 1) - obj_id(h, i));
    }
    hp_layout_mirror_pick(&t, &h->model, &h->layout);
}

static void infer_layout(hp_heap *h)
{
    hp_layout_tally t;
    uint32_t w, windows = h->n / WINDOW >= WINDOWS ? WINDOWS : 1;
    hp_layout_tally_init(&t, h->id_size);
    for (w = 0; w < windows; w++) {
        /* Window w starts at w/(windows-1) of the way to the last full window. */
        uint64_t start = windows == 1 ? 0 : (uint64_t)(h->n - WINDOW) * w / (windows - 1);
        uint64_t end = windows == 1 ? h->n : start + WINDOW, i;
        for (i = start; i + 1 < end; i++) {
            hp_layout_object o;
            if (layout_object(h, (uint32_t)i, &o))
                hp_layout_observe(&t, &o, obj_id(h, (uint32_t)i + 1) - obj_id(h, (uint32_t)i));
        }
    }
    hp_layout_pick(&t, &h->model, &h->layout);
    if (h->layout.inferred)
        infer_mirrors(h);
}

static void size_class(hp_heap *h, uint32_t ord, void *ctx)
{
    heap_class *c = &h->classes[ord];
    const uint8_t *p = h->buf + c->offset + c->fields_off + 2;
    uint64_t own = 0;
    uint32_t k;
    (void)ctx;
    for (k = 0; k < c->n_fields; k++)
        own += (uint64_t)hp_size_elem(&h->model, p[(size_t)k * (h->id_size + 1) + h->id_size]);
    c->field_bytes = own + (c->super_ord != HP_NONE ? h->classes[c->super_ord].field_bytes : 0);
    c->instance_size = c->elem_type ? 0 : hp_size_instance(&h->model, c->field_bytes, c->raw_size);
}

/* Class objects: a java.lang.Class instance, or a mirror of the class's statics. */
static void size_class_object(hp_heap *h, uint32_t ord)
{
    uint64_t refs, bytes;
    if (!h->model.mirror_base) {
        h->classes[ord].object_size = h->class_class != HP_NONE ? h->classes[h->class_class].instance_size : 0;
        return;
    }
    class_statics(h, ord, &refs, &bytes);
    h->classes[ord].object_size = hp_size_mirror(&h->model, refs, bytes);
}

int heap_size_classes(hp_heap *h, int size_model)
{
    uint32_t object_size = h->object_class != HP_NONE ? h->classes[h->object_class].raw_size : 0, c;
    hp_size_model_init(&h->model, h->id_size, object_size);
    heap_string_layout(h);
    h->size_model = size_model;
    if (size_model != HP_SIZES_UNCOMPRESSED && h->id_size == 8 && !h->model.raw)
        hp_size_model_set_oop(&h->model, guess_oop_size(h));
    if (size_model == HP_SIZES_JVM && !h->model.raw)
        infer_layout(h);
    /* Cycles were refused when layouts were resolved: only memory can fail. */
    if (heap_classes_supers_first(h, size_class, NULL) != 0)
        return -1;
    for (c = 0; c < h->n_classes; c++)
        size_class_object(h, c);
    return 0;
}
