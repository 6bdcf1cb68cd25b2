/* The size model of a heap: VisualVM's guess of the reference size on
 * 64-bit dumps, then every class's instance size.
 *
 * VisualVM guesses compressed oops on 64-bit HotSpot dumps from, in order:
 *  1. java.lang.Class$Atomic's Unsafe offsets annotationDataOffset and
 *     annotationTypeOffset (JDK 8): their difference is the reference size;
 *  2. java.util.concurrent.FutureTask's runnerOffset and waitersOffset;
 *  3. the system property java.vm.compressedOopsMode (JDK 9+ sets it only
 *     with compressed oops): present means 4;
 *  4. else the id size.
 * Android dumps carry whole object sizes and need no guess (hp_size.c). */
#include "hp_heap_impl.h"

#include <string.h>

/* The difference of two long statics of a class, if it is 4 or 8. */
static int statics_diff(const hp_heap *h, const char *cls, const char *first, const char *second)
{
    uint32_t c = hp_heap_find_class_name(h, cls, strlen(cls), 0);
    hp_field a, b;
    int64_t diff;
    if (c == HP_NONE || !heap_static_named(h, c, first, &a) || !heap_static_named(h, c, second, &b) ||
        a.type != HP_T_LONG || b.type != HP_T_LONG)
        return 0;
    diff = (int64_t)(hp_be64(b.value) - hp_be64(a.value));
    return diff == 4 || diff == 8 ? (int)diff : 0;
}

/* The object a reference field of instance `index` points to, or HP_NONE. */
static uint32_t follow(const hp_heap *h, uint32_t index, const char *field)
{
    hp_object o;
    hp_field f;
    const uint8_t *v;
    if (index == HP_NONE || hp_heap_object_kind(h, index) != HP_KIND_INSTANCE)
        return HP_NONE;
    hp_heap_object(h, index, &o);
    if (o.class_ord == HP_NONE || !heap_field_named(h, o.class_ord, field, &f) || f.type != HP_T_OBJECT)
        return HP_NONE;
    v = hp_field_value(&f, o.data, o.data_len, h->id_size);
    return v ? hp_heap_find(h, hp_read_id(v, h->id_size)) : HP_NONE;
}

static int string_is(const hp_heap *h, uint32_t index, const char *want)
{
    hp_text t;
    size_t i, n = strlen(want);
    if (index == HP_NONE || hp_heap_string(h, index, &t) != 1 || t.units != n)
        return 0;
    for (i = 0; i < n; i++) {
        unsigned c = t.encoding == HP_TEXT_LATIN1 ? t.data[i]
                     : t.encoding == HP_TEXT_UTF16BE ? hp_be16(t.data + 2 * i)
                                                     : (unsigned)(t.data[2 * i] | t.data[2 * i + 1] << 8);
        if (c != (unsigned char)want[i])
            return 0;
    }
    return 1;
}

/* Whether a hash table (an Object[] of entries chained by `next`) has the
 * key `want`; the walk is bounded by the heap's size. */
static int table_has_key(const hp_heap *h, uint32_t table, const char *want)
{
    hp_object arr;
    uint32_t k, steps = 0;
    if (table == HP_NONE || hp_heap_object_kind(h, table) != HP_KIND_OBJ_ARRAY)
        return 0;
    hp_heap_object(h, table, &arr);
    for (k = 0; k < arr.length; k++) {
        uint32_t entry = hp_heap_find(h, hp_read_id(arr.data + (size_t)k * h->id_size, h->id_size));
        while (entry != HP_NONE && steps++ < h->n) {
            if (string_is(h, follow(h, entry, "key"), want))
                return 1;
            entry = follow(h, entry, "next");
        }
    }
    return 0;
}

/* VisualVM's reading of a java.util.Properties: its own table (Hashtable,
 * JDK 8), or its ConcurrentHashMap's (JDK 9+), then its defaults. */
static int properties_have(const hp_heap *h, uint32_t props, const char *want, int depth)
{
    uint32_t map;
    if (props == HP_NONE || depth > 8)
        return 0;
    if (table_has_key(h, follow(h, props, "table"), want))
        return 1;
    map = follow(h, props, "map");
    if (map != HP_NONE && table_has_key(h, follow(h, map, "table"), want))
        return 1;
    return properties_have(h, follow(h, props, "defaults"), want, depth + 1);
}

static int has_system_property(const hp_heap *h, const char *want)
{
    uint32_t sys = hp_heap_find_class_name(h, "java.lang.System", 16, 0);
    hp_field f;
    if (sys == HP_NONE)
        return 0;
    if (!heap_static_named(h, sys, "props", &f) && !heap_static_named(h, sys, "systemProperties", &f))
        return 0;
    if (f.type != HP_T_OBJECT)
        return 0;
    return properties_have(h, hp_heap_find(h, hp_read_id(f.value, h->id_size)), want, 0);
}

static int guess_oop_size(const hp_heap *h)
{
    int size = statics_diff(h, "java.lang.Class$Atomic", "annotationDataOffset", "annotationTypeOffset");
    if (size)
        return size;
    size = statics_diff(h, "java.util.concurrent.FutureTask", "runnerOffset", "waitersOffset");
    if (size)
        return size;
    return has_system_property(h, "java.vm.compressedOopsMode") ? 4 : h->id_size;
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
