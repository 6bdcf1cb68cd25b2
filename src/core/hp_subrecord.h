/* Heap sub-records (the contents of HEAP_DUMP and HEAP_DUMP_SEGMENT).
 *
 * Sub-records carry no length: the size follows from the layout.  Every
 * sub-record is split into a *head* (the fixed fields, and for CLASS_DUMP its
 * whole tables) and a *payload* (instance field bytes, array elements) so a
 * streaming consumer can hold the head and let a 500 MB array flow through. */
#ifndef HP_SUBRECORD_H
#define HP_SUBRECORD_H

#include "hp_common.h"

typedef struct hp_subrecord {
    uint64_t offset;      /* absolute offset of the tag byte */
    uint64_t length;      /* total bytes, tag included */
    uint32_t head_len;    /* bytes before the payload (tag included) */
    uint8_t tag;
    uint8_t elem_type;    /* arrays: element type (HP_T_OBJECT for object arrays) */
    uint64_t id;          /* the object, class, array or root object */
    uint64_t class_id;    /* INSTANCE: its class; OBJ_ARRAY: the array class; CLASS_DUMP: super class */
    uint64_t ref;         /* JNI_GLOBAL: global-ref id; HEAP_DUMP_INFO: heap-name sid; CLASS_DUMP: loader */
    uint32_t serial;      /* thread serial for roots; stack-trace serial for objects and classes */
    uint32_t aux;         /* frame number / stack depth (roots); heap id (HEAP_DUMP_INFO); instance size (CLASS_DUMP) */
    uint32_t count;       /* INSTANCE: field bytes; arrays: elements */
    uint64_t payload_len; /* length - head_len */
} hp_subrecord;

/* Layout of a CLASS_DUMP head, as offsets from its tag byte. */
typedef struct hp_class_layout {
    uint64_t signers, protection_domain, reserved1, reserved2;
    uint32_t const_off, statics_off, fields_off; /* each points at its u2 count */
    uint16_t n_const, n_statics, n_fields;
} hp_class_layout;

/* Decodes the sub-record starting at p[0] from `avail` contiguous bytes.
 *  - HP_OK: `out` is filled (head complete; the payload may lie beyond avail).
 *  - HP_E_TRUNCATED: the head needs at least *need bytes; give more and retry.
 *  - HP_E_CORRUPT: an unknown sub-tag or basic type (err filled, offset relative to p).
 * `avail` must be at least 1. */
hp_code hp_subrecord_decode(const uint8_t *p, size_t avail, int id_size, hp_subrecord *out,
                            uint64_t *need, hp_error *err);

/* Decodes the table positions of the CLASS_DUMP head[0:len], reading
 * nothing past len: HP_OK, or HP_E_CORRUPT when its tables do not fit in
 * len bytes or hold an invalid type (a buffer changed since it was parsed). */
hp_code hp_class_layout_decode(const uint8_t *head, size_t len, int id_size, hp_class_layout *out);

/* Walks `n` (type, value) entries of a CLASS_DUMP table starting at p.
 * `key_size` is the size of the key before the type byte (2 for the constant
 * pool, id_size for statics); `has_value` is 0 for instance fields.
 * Returns the byte size, or 0 with *bad_type set for an invalid type code. */
size_t hp_class_table_size(const uint8_t *p, size_t avail, uint16_t n, int key_size, int has_value,
                           int id_size, int *truncated, int *bad_type);

#endif
