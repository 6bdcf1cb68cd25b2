/* The size model of a heap: VisualVM's guess of the reference size on
 * 64-bit dumps (hp_oops.c, here looking classes and objects up in the
 * index), then every class's instance size.  Android dumps carry whole
 * object sizes and need no guess (hp_size.c). */
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

int heap_size_classes(hp_heap *h, int size_model)
{
    uint32_t object_size = h->object_class != HP_NONE ? h->classes[h->object_class].raw_size : 0;
    hp_size_model_init(&h->model, h->id_size, object_size);
    heap_string_layout(h);
    if (size_model == HP_SIZES_VISUALVM && h->id_size == 8 && !h->model.raw)
        hp_size_model_set_oop(&h->model, guess_oop_size(h));
    /* Cycles were refused when layouts were resolved: only memory can fail. */
    return heap_classes_supers_first(h, size_class, NULL) == 0 ? 0 : -1;
}
