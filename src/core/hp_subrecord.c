/* Sub-record decoding: sizes from layouts, fixed fields into hp_subrecord. */
#include "hp_subrecord.h"

#include <string.h>

/* Reports that the head needs `n` bytes when fewer are available. */
#define NEED(n)                                   \
    do {                                          \
        if ((uint64_t)(n) > avail) {              \
            *need = (uint64_t)(n);                \
            return HP_E_TRUNCATED;                \
        }                                         \
    } while (0)

size_t hp_class_table_size(const uint8_t *p, size_t avail, uint16_t n, int key_size, int has_value,
                           int id_size, int *truncated, int *bad_type)
{
    size_t pos = 0;
    uint16_t i;
    *truncated = 0;
    *bad_type = 0;
    for (i = 0; i < n; i++) {
        int size;
        if (pos + (size_t)key_size + 1 > avail) {
            /* Claim every entry left at its smallest size: still a lower
             * bound, but a parser fed tiny chunks then gathers the table in
             * a few steps instead of re-walking it once per entry. */
            *truncated = 1;
            return pos + (size_t)(n - i) * ((size_t)key_size + 1 + (has_value ? 1 : 0));
        }
        size = hp_type_size(p[pos + (size_t)key_size], id_size);
        if (size == 0) {
            *bad_type = 1;
            return pos + (size_t)key_size;
        }
        pos += (size_t)key_size + 1 + (has_value ? (size_t)size : 0);
    }
    if (pos > avail)
        *truncated = 1;
    return pos;
}

hp_code hp_class_layout_decode(const uint8_t *head, size_t len, int id_size, hp_class_layout *out)
{
    const uint8_t *q = head + 1 + 3 * id_size + 4; /* past the tag, id, serial, super and loader */
    size_t pos = (size_t)(1 + 7 * id_size + 8);
    int truncated, bad_type;

    if (len < pos + 2)
        return HP_E_CORRUPT;
    out->signers = hp_read_id(q, id_size);
    out->protection_domain = hp_read_id(q + id_size, id_size);
    out->reserved1 = hp_read_id(q + 2 * id_size, id_size);
    out->reserved2 = hp_read_id(q + 3 * id_size, id_size);
    out->const_off = (uint32_t)pos;
    out->n_const = hp_be16(head + pos);
    pos += 2;
    pos += hp_class_table_size(head + pos, len - pos, out->n_const, 2, 1, id_size, &truncated, &bad_type);
    if (truncated || bad_type || len < pos + 2)
        return HP_E_CORRUPT;
    out->statics_off = (uint32_t)pos;
    out->n_statics = hp_be16(head + pos);
    pos += 2;
    pos += hp_class_table_size(head + pos, len - pos, out->n_statics, id_size, 1, id_size, &truncated, &bad_type);
    if (truncated || bad_type || len < pos + 2)
        return HP_E_CORRUPT;
    out->fields_off = (uint32_t)pos;
    out->n_fields = hp_be16(head + pos);
    pos += 2;
    hp_class_table_size(head + pos, len - pos, out->n_fields, id_size, 0, id_size, &truncated, &bad_type);
    return truncated || bad_type ? HP_E_CORRUPT : HP_OK;
}

/* CLASS_DUMP: the head is the whole sub-record, tables included. */
static hp_code decode_class_dump(const uint8_t *p, size_t avail, int id_size, hp_subrecord *out,
                                 uint64_t *need, hp_error *err)
{
    size_t pos = (size_t)(1 + 7 * id_size + 8);
    int table;

    NEED(pos);
    out->id = hp_read_id(p + 1, id_size);
    out->serial = hp_be32(p + 1 + id_size);
    out->class_id = hp_read_id(p + 1 + id_size + 4, id_size);
    out->ref = hp_read_id(p + 1 + 2 * id_size + 4, id_size);
    out->aux = hp_be32(p + 1 + 7 * id_size + 4);
    for (table = 0; table < 3; table++) {
        int key_size = table == 0 ? 2 : id_size; /* constant pool keys are u2 indexes */
        int truncated, bad_type;
        uint16_t n;
        size_t size;
        NEED(pos + 2);
        n = hp_be16(p + pos);
        pos += 2;
        size = hp_class_table_size(p + pos, avail - pos, n, key_size, table < 2, id_size, &truncated, &bad_type);
        if (bad_type)
            return hp_fail(err, HP_E_CORRUPT, 0, HP_SUB_CLASS_DUMP, 1, 0, 0,
                           "invalid basic type in class field table");
        (void)truncated; /* a short table reports the size it needs */
        NEED(pos + size);
        pos += size;
    }
    out->head_len = (uint32_t)pos;
    out->length = pos;
    return HP_OK;
}

hp_code hp_subrecord_decode(const uint8_t *p, size_t avail, int id_size, hp_subrecord *out,
                            uint64_t *need, hp_error *err)
{
    const uint64_t id = (uint64_t)id_size;
    uint64_t head;

    /* Clear only what a kind may leave unset (this runs once per sub-record). */
    out->id = out->class_id = out->ref = out->payload_len = 0;
    out->serial = out->aux = out->count = 0;
    out->elem_type = 0;
    out->tag = p[0];
    switch (p[0]) {
    case HP_SUB_ROOT_UNKNOWN: case HP_SUB_ROOT_STICKY_CLASS: case HP_SUB_ROOT_MONITOR_USED:
    case HP_SUB_ROOT_INTERNED_STRING: case HP_SUB_ROOT_FINALIZING: case HP_SUB_ROOT_DEBUGGER:
    case HP_SUB_ROOT_REFERENCE_CLEANUP: case HP_SUB_ROOT_VM_INTERNAL: case HP_SUB_UNREACHABLE:
        head = 1 + id;
        NEED(head);
        out->id = hp_read_id(p + 1, id_size);
        break;
    case HP_SUB_ROOT_JNI_GLOBAL:
        head = 1 + 2 * id;
        NEED(head);
        out->id = hp_read_id(p + 1, id_size);
        out->ref = hp_read_id(p + 1 + id, id_size);
        break;
    case HP_SUB_ROOT_JNI_LOCAL: case HP_SUB_ROOT_JAVA_FRAME: case HP_SUB_ROOT_JNI_MONITOR:
    case HP_SUB_ROOT_THREAD_OBJECT:
        head = 1 + id + 8;
        NEED(head);
        out->id = hp_read_id(p + 1, id_size);
        out->serial = hp_be32(p + 1 + id);
        out->aux = hp_be32(p + 1 + id + 4);
        break;
    case HP_SUB_ROOT_NATIVE_STACK: case HP_SUB_ROOT_THREAD_BLOCK:
        head = 1 + id + 4;
        NEED(head);
        out->id = hp_read_id(p + 1, id_size);
        out->serial = hp_be32(p + 1 + id);
        break;
    case HP_SUB_HEAP_DUMP_INFO:
        head = 1 + 4 + id;
        NEED(head);
        out->aux = hp_be32(p + 1);
        out->ref = hp_read_id(p + 5, id_size);
        break;
    case HP_SUB_CLASS_DUMP:
        return decode_class_dump(p, avail, id_size, out, need, err);
    case HP_SUB_INSTANCE_DUMP:
        head = 1 + 2 * id + 8;
        NEED(head);
        out->id = hp_read_id(p + 1, id_size);
        out->serial = hp_be32(p + 1 + id);
        out->class_id = hp_read_id(p + 1 + id + 4, id_size);
        out->count = hp_be32(p + 1 + 2 * id + 4);
        out->payload_len = out->count;
        break;
    case HP_SUB_OBJ_ARRAY_DUMP:
        head = 1 + 2 * id + 8;
        NEED(head);
        out->id = hp_read_id(p + 1, id_size);
        out->serial = hp_be32(p + 1 + id);
        out->count = hp_be32(p + 1 + id + 4);
        out->class_id = hp_read_id(p + 1 + id + 8, id_size);
        out->elem_type = HP_T_OBJECT;
        out->payload_len = (uint64_t)out->count * id;
        break;
    case HP_SUB_PRIM_ARRAY_DUMP: case HP_SUB_PRIM_ARRAY_NODATA: {
        int size;
        head = 1 + id + 9;
        NEED(head);
        out->id = hp_read_id(p + 1, id_size);
        out->serial = hp_be32(p + 1 + id);
        out->count = hp_be32(p + 1 + id + 4);
        out->elem_type = p[1 + id + 8];
        size = out->elem_type == HP_T_OBJECT ? 0 : hp_type_size(out->elem_type, id_size);
        if (size == 0)
            return hp_fail(err, HP_E_CORRUPT, 0, p[0], 1, 0, 0, "invalid primitive array element type");
        if (p[0] == HP_SUB_PRIM_ARRAY_DUMP)
            out->payload_len = (uint64_t)out->count * (uint64_t)size;
        break;
    }
    default:
        return hp_fail(err, HP_E_CORRUPT, 0, p[0], 1, 0, 0, "unknown heap sub-record tag");
    }
    out->head_len = (uint32_t)head;
    out->length = head + out->payload_len;
    return HP_OK;
}
