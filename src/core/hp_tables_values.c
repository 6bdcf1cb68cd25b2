/* The values in the tables (hp_heap_tables.h): String texts and primitive
 * field values. */
#include <string.h>

#include "hp_heap_tables.h"
#include "hp_utf8.h"

/* ---- String values ---- */

static int reserve(hp_string_columns *c, size_t more, const hp_alloc *alloc)
{
    if (c->data_cap - c->data_len < more) {
        size_t cap = c->data_cap * 2 > c->data_len + more ? c->data_cap * 2 : c->data_len + more;
        uint8_t *p = alloc->realloc_fn(c->data, cap);
        if (!p)
            return -1;
        c->data = p;
        c->data_cap = cap;
    }
    return 0;
}

hp_code hp_tables_strings(const hp_heap *h, uint32_t start, uint32_t end, hp_string_columns *c,
                          const hp_alloc *alloc)
{
    uint32_t i;
    c->data_len = 0;
    c->offsets[0] = 0;
    for (i = start; i < end; i++) {
        hp_text t;
        int rc;
        if (i + HP_TABLES_AHEAD < end)
            hp_heap_prefetch_record(h, i + HP_TABLES_AHEAD);
        rc = hp_heap_object_kind(h, i) == HP_KIND_INSTANCE ? hp_heap_string(h, i, &t) : 0;
        c->length[i] = rc == 1 ? (int64_t)t.units : 0;
        hp_tables_set_bit(c->valid, i, rc == 1);
        if (rc == 1) {
            size_t units = t.units < c->max_units ? t.units : c->max_units;
            if (reserve(c, HP_TEXT_UTF8_MAX(units), alloc) < 0)
                return HP_E_NOMEM;
            c->data_len += hp_text_utf8(&t, c->max_units, c->data + c->data_len);
            if (c->data_len > 0x7FFFFFFF)
                return HP_E_LIMIT; /* past 32-bit offsets: only when max_units * 3 * rows passes 2^31 */
        }
        c->offsets[i - start + 1] = (int32_t)c->data_len;
    }
    return HP_OK;
}

/* ---- primitive field values ---- */

/* The primitive fields of object `i`, in the order of its class's tables:
 * an instance's primitive instance fields (prim), a class object's
 * primitive statics (static); *ord the class whose tables name them. */
typedef struct {
    const hp_heap *h;
    hp_object obj;
    hp_field_iter fields;
    hp_static_iter statics;
    uint32_t ord, k;  /* k: the position among the class's fields or statics */
    int is_class;
} prim_iter;

static void prim_init(prim_iter *it, const hp_heap *h, uint32_t i)
{
    it->h = h;
    it->k = 0;
    hp_heap_object(h, i, &it->obj);
    it->is_class = it->obj.kind == HP_KIND_CLASS;
    it->ord = it->is_class ? it->obj.self_ord : it->obj.kind == HP_KIND_INSTANCE ? it->obj.class_ord : HP_NONE;
    if (it->ord == HP_NONE)
        return;
    if (it->is_class)
        hp_static_iter_init(&it->statics, h, it->ord);
    else
        hp_field_iter_init(&it->fields, h, it->ord);
}

/* The next primitive field with a value: 1, its value in *value and its
 * position in the class's tables in *at (prim or static numbering); 0 at
 * the end. */
static int prim_next(prim_iter *it, hp_field *f, const uint8_t **value, uint32_t *at)
{
    if (it->ord == HP_NONE)
        return 0;
    for (;;) {
        uint32_t k;
        if (it->is_class ? !hp_static_next(&it->statics, f) : !hp_field_next(&it->fields, f))
            return 0;
        k = it->is_class ? it->k++ : it->k;
        if (f->type == HP_T_OBJECT)
            continue;
        if (!it->is_class)
            it->k++; /* instance tables number the primitive fields only */
        *value = it->is_class ? f->value
                              : hp_field_value(f, it->obj.data, it->obj.data_len, hp_heap_id_size(it->h));
        if (*value) {
            *at = k;
            return 1;
        }
    }
}

uint64_t hp_tables_count_fields(const hp_heap *h, uint32_t start, uint32_t end)
{
    uint64_t count = 0;
    uint32_t i, at;
    for (i = start; i < end; i++) {
        prim_iter it;
        hp_field f;
        const uint8_t *value;
        prim_init(&it, h, i);
        while (prim_next(&it, &f, &value, &at))
            count++;
    }
    return count;
}

static void put_value(const hp_field_columns *c, uint64_t row, int type, const uint8_t *v)
{
    int64_t n = 0;
    double d = 0;
    int is_double = type == HP_T_FLOAT || type == HP_T_DOUBLE;
    switch (type) {
    case HP_T_BOOLEAN: n = v[0] != 0; break;
    case HP_T_BYTE: n = (int8_t)v[0]; break;
    case HP_T_CHAR: n = hp_be16(v); break;
    case HP_T_SHORT: n = (int16_t)hp_be16(v); break;
    case HP_T_INT: n = (int32_t)hp_be32(v); break;
    case HP_T_LONG: n = (int64_t)hp_be64(v); break;
    case HP_T_FLOAT: {
        uint32_t bits = hp_be32(v);
        float f;
        memcpy(&f, &bits, 4);
        d = f;
        break;
    }
    case HP_T_DOUBLE: {
        uint64_t bits = hp_be64(v);
        memcpy(&d, &bits, 8);
        break;
    }
    default: break;
    }
    c->int_value[row] = n;
    c->double_value[row] = d;
    hp_tables_set_bit(c->int_valid, row, !is_double);
    hp_tables_set_bit(c->double_valid, row, is_double);
}

int hp_tables_fields(const hp_heap *h, uint32_t start, uint32_t end, const hp_table_names *names, uint64_t row,
                     uint64_t row_end, const hp_field_columns *c)
{
    uint32_t i, at;
    for (i = start; i < end; i++) {
        prim_iter it;
        hp_field f;
        const uint8_t *value;
        prim_init(&it, h, i);
        while (prim_next(&it, &f, &value, &at)) {
            const uint32_t *base = it.is_class ? names->static_base : names->prim_base;
            const int32_t *codes = it.is_class ? names->static_codes : names->prim_codes;
            const int32_t *qualified = it.is_class ? names->static_qualified : names->prim_qualified;
            if (row >= row_end || at >= base[it.ord + 1] - base[it.ord])
                return 0;
            c->object_id[row] = (int64_t)it.obj.id;
            c->name[row] = codes[base[it.ord] + at];
            c->qualified[row] = qualified[base[it.ord] + at];
            c->type[row] = (int8_t)(f.type - HP_T_BOOLEAN);
            put_value(c, row, f.type, value);
            row++;
        }
    }
    return row == row_end;
}
