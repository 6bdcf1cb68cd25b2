/* The text of java.lang.String objects, for every layout met in practice. */
#include "hp_heap_impl.h"

static int64_t field_offset(const hp_heap *h, uint32_t cls, const char *name, int type)
{
    hp_field f;
    return heap_field_named(h, cls, name, &f) && f.type == type ? (int64_t)f.offset : -1;
}

void heap_string_layout(hp_heap *h)
{
    uint32_t c = h->string_class;
    h->str_value = h->str_offset = h->str_count = h->str_coder = -1;
    if (c == HP_NONE)
        return;
    h->str_value = field_offset(h, c, "value", HP_T_OBJECT);
    h->str_offset = field_offset(h, c, "offset", HP_T_INT);
    h->str_count = field_offset(h, c, "count", HP_T_INT);
    h->str_coder = field_offset(h, c, "coder", HP_T_BYTE);
}

/* The field at `off` of an instance's data, if the data holds it. */
static const uint8_t *at(const hp_object *o, int64_t off, int size)
{
    return off >= 0 && (uint64_t)off + (uint64_t)size <= o->data_len ? o->data + off : NULL;
}

uint32_t hp_heap_string_array(const hp_heap *h, uint32_t index)
{
    hp_object s;
    const uint8_t *value;
    uint32_t target;
    if (h->string_class == HP_NONE || obj_ord(h, index) != h->string_class)
        return HP_NONE;
    hp_heap_object(h, index, &s);
    value = at(&s, h->str_value, h->id_size);
    if (!value)
        return HP_NONE;
    target = hp_heap_find(h, hp_read_id(value, h->id_size));
    return target != HP_NONE && hp_heap_object_kind(h, target) == HP_KIND_PRIM_ARRAY ? target : HP_NONE;
}

int hp_heap_string(const hp_heap *h, uint32_t index, hp_text *out)
{
    hp_object s, v;
    const uint8_t *p;
    uint32_t target;
    if (h->string_class == HP_NONE || obj_ord(h, index) != h->string_class)
        return 0;
    target = hp_heap_string_array(h, index);
    if (target == HP_NONE)
        return -1;
    hp_heap_object(h, index, &s);
    hp_heap_object(h, target, &v);
    out->data = v.data;
    if (v.elem_type == HP_T_CHAR) {
        /* JDK 6-8 and Android before O: UTF-16 chars, as HPROF writes them
         * (big-endian), a slice when offset and count say so. */
        const uint8_t *off = at(&s, h->str_offset, 4), *count = at(&s, h->str_count, 4);
        out->encoding = HP_TEXT_UTF16BE;
        out->units = v.length;
        if (off && count) {
            int32_t o = (int32_t)hp_be32(off), n = (int32_t)hp_be32(count);
            if (o >= 0 && n >= 0 && (uint64_t)o + (uint64_t)n <= v.length) {
                out->data += (size_t)o * 2;
                out->units = (size_t)n;
            }
        }
        return 1;
    }
    if (v.elem_type != HP_T_BYTE)
        return -1;
    /* JDK 9+: bytes in the coder's encoding, UTF-16 in the machine's order
     * (little-endian on x86); Android O+ compressed strings: ASCII bytes. */
    p = at(&s, h->str_coder, 1);
    if (p && *p == 1) {
        out->encoding = HP_TEXT_UTF16LE;
        out->units = v.length / 2;
    } else {
        out->encoding = HP_TEXT_LATIN1;
        out->units = v.length;
    }
    return 1;
}
