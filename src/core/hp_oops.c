/* VisualVM's compressed-oops guess over an hp_oops_source (hp_oops.h).
 * Objects are read from their sub-records in the dump, so any reader that
 * can say where a class or an object is written can ask. */
#include "hp_oops.h"

#include <string.h>

#include "hp_subrecord.h"

/* Superclass chains longer than this are taken as cycles. */
#define MAX_DEPTH 256

typedef struct guess {
    const hp_oops_source *src;
    uint64_t string_class; /* java.lang.String's id, or 0 */
    uint64_t steps;        /* hash-chain links followed, bounded by max_steps */
} guess;

/* The sub-record at `off`, decoded; 0 unless it lies whole in the dump. */
static int subrecord_at(const hp_oops_source *src, uint64_t off, hp_subrecord *sub)
{
    uint64_t need;
    hp_error err;
    if (off == 0 || off >= src->buf_len ||
        hp_subrecord_decode(src->buf + off, (size_t)(src->buf_len - off), src->id_size, sub, &need, &err) != HP_OK)
        return 0;
    return sub->length <= src->buf_len - off;
}

/* The static `name` of class `class_id`: its type and value. */
static int static_named(const hp_oops_source *src, uint64_t class_id, const char *name, int *type,
                        const uint8_t **value)
{
    uint64_t off = class_id ? src->class_dump(src->ctx, class_id) : 0;
    hp_subrecord sub;
    hp_class_layout lay;
    const uint8_t *p;
    uint16_t k;
    if (!subrecord_at(src, off, &sub) || sub.tag != HP_SUB_CLASS_DUMP ||
        hp_class_layout_decode(src->buf + off, (size_t)sub.head_len, src->id_size, &lay) != HP_OK)
        return 0;
    p = src->buf + off + lay.statics_off + 2;
    for (k = 0; k < lay.n_statics; k++) {
        /* Entries are (id name, u1 type, value); the decoder checked the table. */
        int t = p[src->id_size];
        if (src->sid_is(src->ctx, hp_read_id(p, src->id_size), name)) {
            *type = t;
            *value = p + src->id_size + 1;
            return 1;
        }
        p += src->id_size + 1 + hp_type_size(t, src->id_size);
    }
    return 0;
}

/* The instance field `name` (its own class's, then inherited) of the
 * instance whose sub-record is `sub` at `off`: its type and value, when the
 * instance's data holds it. */
static int field_named(const hp_oops_source *src, uint64_t off, const hp_subrecord *sub, const char *name, int *type,
                       const uint8_t **value)
{
    uint64_t cls = sub->class_id, base = 0;
    int depth;
    for (depth = 0; cls && depth < MAX_DEPTH; depth++) {
        uint64_t coff = src->class_dump(src->ctx, cls), own = 0;
        hp_subrecord csub;
        hp_class_layout lay;
        const uint8_t *p;
        uint16_t k;
        if (!subrecord_at(src, coff, &csub) || csub.tag != HP_SUB_CLASS_DUMP ||
            hp_class_layout_decode(src->buf + coff, (size_t)csub.head_len, src->id_size, &lay) != HP_OK)
            return 0;
        p = src->buf + coff + lay.fields_off + 2;
        for (k = 0; k < lay.n_fields; k++, p += src->id_size + 1) {
            int t = p[src->id_size], size = hp_type_size(t, src->id_size);
            if (src->sid_is(src->ctx, hp_read_id(p, src->id_size), name)) {
                if (base + own + (uint64_t)size > sub->count)
                    return 0;
                *type = t;
                *value = src->buf + off + sub->head_len + base + own;
                return 1;
            }
            own += (uint64_t)size;
        }
        base += own;
        cls = csub.class_id;
    }
    return 0;
}

/* The object a reference field of the instance at `off` points to: the
 * offset of its sub-record, or 0. */
static uint64_t follow(const hp_oops_source *src, uint64_t off, const char *field)
{
    hp_subrecord sub;
    const uint8_t *value;
    int type;
    if (!subrecord_at(src, off, &sub) || sub.tag != HP_SUB_INSTANCE_DUMP ||
        !field_named(src, off, &sub, field, &type, &value) || type != HP_T_OBJECT)
        return 0;
    return src->object(src->ctx, hp_read_id(value, src->id_size));
}

/* Whether the object at `off` is a java.lang.String reading `want`, in
 * every layout hp_heap_string reads. */
static int string_is(const guess *g, uint64_t off, const char *want)
{
    const hp_oops_source *src = g->src;
    hp_subrecord s, v;
    const uint8_t *value, *coder, *first, *count, *data;
    int type;
    uint64_t varr, units, i, n = strlen(want);
    enum { LATIN1, UTF16BE, UTF16LE } encoding;
    if (!subrecord_at(src, off, &s) || s.tag != HP_SUB_INSTANCE_DUMP || !g->string_class ||
        s.class_id != g->string_class)
        return 0;
    if (!field_named(src, off, &s, "value", &type, &value) || type != HP_T_OBJECT)
        return 0;
    varr = src->object(src->ctx, hp_read_id(value, src->id_size));
    if (!subrecord_at(src, varr, &v) || v.tag != HP_SUB_PRIM_ARRAY_DUMP)
        return 0;
    data = src->buf + varr + v.head_len;
    units = v.count;
    if (v.elem_type == HP_T_CHAR) {
        encoding = UTF16BE; /* as HPROF writes chars; a slice when offset and count say so */
        if (field_named(src, off, &s, "offset", &type, &first) && type == HP_T_INT &&
            field_named(src, off, &s, "count", &type, &count) && type == HP_T_INT) {
            int32_t o = (int32_t)hp_be32(first), c = (int32_t)hp_be32(count);
            if (o >= 0 && c >= 0 && (uint64_t)o + (uint64_t)c <= v.count) {
                data += (size_t)o * 2;
                units = (uint64_t)c;
            }
        }
    } else if (v.elem_type == HP_T_BYTE) {
        int utf16 = field_named(src, off, &s, "coder", &type, &coder) && type == HP_T_BYTE && *coder == 1;
        encoding = utf16 ? UTF16LE : LATIN1; /* JDK 9+: the coder's, UTF-16 in x86 order */
        units = utf16 ? v.count / 2 : v.count;
    } else {
        return 0;
    }
    if (units != n)
        return 0;
    for (i = 0; i < n; i++) {
        unsigned c = encoding == LATIN1    ? data[i]
                     : encoding == UTF16BE ? hp_be16(data + 2 * i)
                                           : (unsigned)(data[2 * i] | data[2 * i + 1] << 8);
        if (c != (unsigned char)want[i])
            return 0;
    }
    return 1;
}

/* Whether a hash table (an Object[] of entries chained by `next`) has the
 * key `want`. */
static int table_has_key(guess *g, uint64_t table, const char *want)
{
    const hp_oops_source *src = g->src;
    hp_subrecord arr;
    uint32_t k;
    if (!subrecord_at(src, table, &arr) || arr.tag != HP_SUB_OBJ_ARRAY_DUMP)
        return 0;
    for (k = 0; k < arr.count; k++) {
        const uint8_t *slot = src->buf + table + arr.head_len + (size_t)k * (size_t)src->id_size;
        uint64_t entry = src->object(src->ctx, hp_read_id(slot, src->id_size));
        while (entry && g->steps++ < src->max_steps) {
            if (string_is(g, follow(src, entry, "key"), want))
                return 1;
            entry = follow(src, entry, "next");
        }
    }
    return 0;
}

/* VisualVM's reading of a java.util.Properties: its own table (Hashtable,
 * JDK 8), or its ConcurrentHashMap's (JDK 9+), then its defaults. */
static int properties_have(guess *g, uint64_t props, const char *want, int depth)
{
    uint64_t map;
    if (!props || depth > 8)
        return 0;
    if (table_has_key(g, follow(g->src, props, "table"), want))
        return 1;
    map = follow(g->src, props, "map");
    if (map && table_has_key(g, follow(g->src, map, "table"), want))
        return 1;
    return properties_have(g, follow(g->src, props, "defaults"), want, depth + 1);
}

static int has_system_property(guess *g, const char *want)
{
    const hp_oops_source *src = g->src;
    uint64_t sys = src->class_named(src->ctx, "java.lang.System");
    const uint8_t *value;
    int type;
    if (!sys || (!static_named(src, sys, "props", &type, &value) &&
                 !static_named(src, sys, "systemProperties", &type, &value)) || type != HP_T_OBJECT)
        return 0;
    return properties_have(g, src->object(src->ctx, hp_read_id(value, src->id_size)), want, 0);
}

/* The difference of two long statics of a class, if it is 4 or 8. */
static int statics_diff(const hp_oops_source *src, const char *cls, const char *first, const char *second)
{
    uint64_t c = src->class_named(src->ctx, cls);
    const uint8_t *a, *b;
    int ta, tb;
    int64_t diff;
    if (!c || !static_named(src, c, first, &ta, &a) || !static_named(src, c, second, &tb, &b) ||
        ta != HP_T_LONG || tb != HP_T_LONG)
        return 0;
    diff = (int64_t)(hp_be64(b) - hp_be64(a));
    return diff == 4 || diff == 8 ? (int)diff : 0;
}

int hp_oops_guess(const hp_oops_source *src)
{
    guess g;
    int size = statics_diff(src, "java.lang.Class$Atomic", "annotationDataOffset", "annotationTypeOffset");
    if (size)
        return size;
    size = statics_diff(src, "java.util.concurrent.FutureTask", "runnerOffset", "waitersOffset");
    if (size)
        return size;
    g.src = src;
    g.string_class = src->class_named(src->ctx, "java.lang.String");
    g.steps = 0;
    return has_system_property(&g, "java.vm.compressedOopsMode") ? 4 : src->id_size;
}
