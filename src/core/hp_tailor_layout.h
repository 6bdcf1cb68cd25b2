/* Byte layouts of what Tailor's mini format keeps and drops, shared by its
 * encoder and decoder (docs/tailor-format.md §2-4).  Offsets count from the
 * tag byte of a record or sub-record; identifiers are always 4 bytes.
 * SRC_ names the HPROF 1.0.3 form (what the encoder reads and the decoder
 * restores), MINI_ the mini form; names without either hold for both. */
#ifndef HP_TAILOR_LAYOUT_H
#define HP_TAILOR_LAYOUT_H

enum {
    TL_ID = 4,              /* every identifier */
    TL_SERIAL = 4,          /* a stack-trace or thread serial (u4): dropped everywhere */
    TL_TAG_ID = 1 + TL_ID,  /* tag + object id: every sub-record starts so, and keeps it */

    /* The file header: "JAVA PROFILE 1.0.3", NUL, u4 id size, u8 timestamp. */
    TL_SRC_HEADER = 31,

    /* Record head: tag, u4 time, u4 length.  A mini STRING keeps the low u2
     * of the length; other mini records keep only the tag. */
    TL_SRC_RECORD_HEAD = 9,
    TL_SRC_RECORD_LENGTH = 5, /* the u4 length */
    TL_SRC_LENGTH_LOW = TL_SRC_RECORD_LENGTH + 2, /* its low u2 */
    TL_MINI_STRING_HEAD = 3, /* tag, u2 length; the body (id + text) follows */

    /* LOAD_CLASS body: u4 class serial, class id, u4 stack serial, name id.
     * The mini keeps tag, class id, name id. */
    TL_SRC_LOAD_CLASS_BODY = 16,
    TL_LOAD_CLASS_CLASS_ID = 4, /* in the source body */
    TL_LOAD_CLASS_NAME_ID = 12, /* in the source body */
    TL_MINI_LOAD_CLASS = 1 + 2 * TL_ID,

    /* Roots kept whole: ROOT_JNI_GLOBAL (tag, id, global-ref id) and
     * HEAP_DUMP_INFO (tag, u4 heap id, name id). */
    TL_ROOT_JNI_GLOBAL = 1 + 2 * TL_ID,
    TL_HEAP_DUMP_INFO = 1 + 4 + TL_ID,

    /* Object dumps and CLASS_DUMP: tag, id, u4 stack serial, then the rest;
     * the mini drops the serial. */
    TL_SRC_AFTER_SERIAL = TL_TAG_ID + TL_SERIAL,

    /* CLASS_DUMP after the serial: super, loader, signers and protection
     * domain ids (kept), two reserved ids and the high u2 of the u4 instance
     * size (dropped), its low u2 (kept), then the three tables (kept). */
    TL_CLASS_REFS = 4 * TL_ID,
    TL_CLASS_RESERVED_AND_SIZE_HIGH = 2 * TL_ID + 2,
    TL_SRC_CLASS_SIZE_LOW = TL_SRC_AFTER_SERIAL + TL_CLASS_REFS + TL_CLASS_RESERVED_AND_SIZE_HIGH,
    TL_MINI_CLASS_SIZE_LOW = TL_TAG_ID + TL_CLASS_REFS,
    TL_MINI_CLASS_TABLES = TL_MINI_CLASS_SIZE_LOW + 2,
    TL_CLASS_DROPPED = TL_SERIAL + TL_CLASS_RESERVED_AND_SIZE_HIGH,

    /* Mini INSTANCE_DUMP: tag, id, class id, u4 field bytes, fields.
     * Mini OBJECT_ARRAY_DUMP: tag, id, u4 count, class id, elements. */
    TL_MINI_OBJECT_HEAD = 1 + 2 * TL_ID + 4,
    TL_MINI_INSTANCE_COUNT = 1 + 2 * TL_ID,
    TL_MINI_ARRAY_COUNT = TL_TAG_ID, /* object and primitive arrays */

    /* PRIMITIVE_ARRAY_DUMP: tag, id, u4 stack serial, u4 count, u1 type,
     * elements (dropped in the mini for char[] and byte[]). */
    TL_PRIM_COUNT_AND_TYPE = 4 + 1,
    TL_SRC_PRIM_HEAD = TL_SRC_AFTER_SERIAL + TL_PRIM_COUNT_AND_TYPE,
    TL_MINI_PRIM_TYPE = TL_MINI_ARRAY_COUNT + 4,
    TL_MINI_PRIM_HEAD = TL_TAG_ID + TL_PRIM_COUNT_AND_TYPE
};

#endif
