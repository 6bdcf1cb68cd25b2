/* Shared by test_heap.c and fuzz_heap.c: a small heap dump written with
 * the test kit's byte builder, with the quirks a heap index must survive
 * switched on by flags. */
#ifndef HEAPKIT_H
#define HEAPKIT_H

#include "testkit.h"

#include "hp_header.h"

enum {
    HK_DUPLICATE = 1,  /* a second object with an id already used */
    HK_DANGLING = 2,   /* a reference to an id absent from the dump */
    HK_CYCLE = 4,      /* class A's superclass is its own subclass B */
    HK_SHORT = 8,      /* an instance whose data is shorter than its layout */
    HK_ANDROID = 16    /* 1.0.3 with HEAP_DUMP_INFO records and whole object sizes */
};

/* Ids of the dump's objects (multiplied by 8, as addresses are). */
enum {
    HK_OBJECT = 0x100, HK_STRING = 0x108, HK_A = 0x110, HK_B = 0x118, HK_CHARS = 0x120, HK_OBJARR = 0x128,
    HK_LOADER = 0x130, HK_STR1 = 0x200, HK_STR1_VALUE = 0x208, HK_A1 = 0x210, HK_B1 = 0x218, HK_ARR1 = 0x220,
    HK_BYTES1 = 0x228, HK_MISSING = 0x9990, HK_SHORT1 = 0x230
};

static inline void hk_string(bb *b, uint64_t sid, const char *text)
{
    bb_rec_begin(b, HP_TAG_UTF8);
    bb_id(b, sid);
    bb_raw(b, text, strlen(text));
    bb_rec_end(b);
}

static inline void hk_load(bb *b, uint32_t serial, uint64_t class_id, uint64_t name_sid)
{
    bb_rec_begin(b, HP_TAG_LOAD_CLASS);
    bb_u4(b, serial);
    bb_id(b, class_id);
    bb_u4(b, 0);
    bb_id(b, name_sid);
    bb_rec_end(b);
}

/* A CLASS_DUMP with instance fields (name sid, type) and one static. */
static inline void hk_class(bb *b, uint64_t id, uint64_t super, uint64_t loader, uint32_t size, int n_fields,
                            const uint64_t *names, const int *types, uint64_t static_value)
{
    int i;
    bb_u1(b, HP_SUB_CLASS_DUMP);
    bb_id(b, id);
    bb_u4(b, 1);
    bb_id(b, super);
    bb_id(b, loader);
    for (i = 0; i < 4; i++)
        bb_id(b, 0);
    bb_u4(b, size);
    bb_u2(b, 0);
    bb_u2(b, 1);       /* one static: an object reference named by sid 9 */
    bb_id(b, 9);
    bb_u1(b, HP_T_OBJECT);
    bb_id(b, static_value);
    bb_u2(b, (unsigned)n_fields);
    for (i = 0; i < n_fields; i++) {
        bb_id(b, names[i]);
        bb_u1(b, (unsigned)types[i]);
    }
}

static inline void hk_instance_head(bb *b, uint64_t id, uint64_t class_id, uint32_t bytes)
{
    bb_u1(b, HP_SUB_INSTANCE_DUMP);
    bb_id(b, id);
    bb_u4(b, 1);
    bb_id(b, class_id);
    bb_u4(b, bytes);
}

/* Writes the dump into *b (fresh).  Layout: A(int x, Object ref, long l)
 * extends Object; B(Object other) extends A; String(char[] value, int
 * hash).  Objects are written out of id order, classes last. */
static inline void hk_dump(bb *b, int id_size, int flags)
{
    uint8_t header[HP_HEADER_MAX];
    const int id = id_size;
    static const uint64_t a_names[3] = { 3, 4, 5 }, b_names[1] = { 6 }, s_names[2] = { 7, 8 };
    static const int a_types[3] = { HP_T_INT, HP_T_OBJECT, HP_T_LONG }, b_types[1] = { HP_T_OBJECT };
    static const int s_types[2] = { HP_T_OBJECT, HP_T_INT };
    const int android = (flags & HK_ANDROID) != 0;
    uint32_t a_size = android ? 8 + 4 + 4 + 8 : 4 + (uint32_t)id + 8;
    memset(b, 0, sizeof *b);
    b->id = id;
    bb_raw(b, header, hp_header_write(header, android ? 3 : 2, id, 1700000000000ULL));
    hk_string(b, 1, android ? "java.lang.Object" : "java/lang/Object");
    hk_string(b, 2, android ? "java.lang.String" : "java/lang/String");
    hk_string(b, 3, "x");
    hk_string(b, 4, "ref");
    hk_string(b, 5, "l");
    hk_string(b, 6, "other");
    hk_string(b, 7, "value");
    hk_string(b, 8, "hash");
    hk_string(b, 9, "INSTANCE");
    hk_string(b, 10, "a.A");
    hk_string(b, 11, "a.B");
    hk_string(b, 12, android ? "char[]" : "[C");
    hk_string(b, 13, android ? "java.lang.Object[]" : "[Ljava/lang/Object;");
    hk_string(b, 14, "app");
    hk_load(b, 1, HK_OBJECT, 1);
    hk_load(b, 2, HK_STRING, 2);
    hk_load(b, 3, HK_A, 10);
    hk_load(b, 4, HK_B, 11);
    hk_load(b, 5, HK_CHARS, 12);
    hk_load(b, 6, HK_OBJARR, 13);

    bb_rec_begin(b, HP_TAG_HEAP_DUMP_SEGMENT);
    if (android) {
        bb_u1(b, HP_SUB_HEAP_DUMP_INFO);
        bb_u4(b, 'A');
        bb_id(b, 14);
    }
    bb_u1(b, HP_SUB_ROOT_STICKY_CLASS);
    bb_id(b, HK_A);
    bb_u1(b, HP_SUB_ROOT_JNI_GLOBAL);
    bb_id(b, HK_B1);
    bb_id(b, 0x77);
    /* Instances first, out of id order. */
    hk_instance_head(b, HK_B1, HK_B, 2 * (uint32_t)id + 12);
    bb_id(b, HK_A1);                                   /* B.other */
    bb_u4(b, 7);                                       /* A.x */
    bb_id(b, (flags & HK_DANGLING) ? HK_MISSING : HK_STR1); /* A.ref */
    bb_u8(b, 0x0102030405060708ULL);                   /* A.l */
    hk_instance_head(b, HK_A1, HK_A, 4 + (uint32_t)id + 8);
    bb_u4(b, (uint32_t)-3);
    bb_id(b, HK_B1);
    bb_u8(b, 42);
    hk_instance_head(b, HK_STR1, HK_STRING, (uint32_t)id + 4);
    bb_id(b, HK_STR1_VALUE);
    bb_u4(b, 0);
    bb_u1(b, HP_SUB_PRIM_ARRAY_DUMP);                  /* "hi" */
    bb_id(b, HK_STR1_VALUE);
    bb_u4(b, 1);
    bb_u4(b, 2);
    bb_u1(b, HP_T_CHAR);
    bb_u2(b, 'h');
    bb_u2(b, 'i');
    bb_u1(b, HP_SUB_OBJ_ARRAY_DUMP);
    bb_id(b, HK_ARR1);
    bb_u4(b, 1);
    bb_u4(b, 3);
    bb_id(b, HK_OBJARR);
    bb_id(b, HK_A1);
    bb_id(b, 0);
    bb_id(b, HK_B1);
    bb_u1(b, HP_SUB_PRIM_ARRAY_DUMP);
    bb_id(b, HK_BYTES1);
    bb_u4(b, 1);
    bb_u4(b, 5);
    bb_u1(b, HP_T_BYTE);
    bb_raw(b, "\1\2\3\4\5", 5);
    if (flags & HK_SHORT) {
        hk_instance_head(b, HK_SHORT1, HK_B, 2); /* a layout of 20+ bytes over 2 */
        bb_u2(b, 0xFFFF);
    }
    if (flags & HK_DUPLICATE) {
        hk_instance_head(b, HK_A1, HK_A, 4 + (uint32_t)id + 8); /* a second HK_A1, dropped */
        bb_u4(b, 99);
        bb_id(b, 0);
        bb_u8(b, 0);
    }
    hk_class(b, HK_OBJECT, 0, 0, android ? 8 : 0, 0, NULL, NULL, 0);
    hk_class(b, HK_STRING, HK_OBJECT, 0, android ? 16 : (uint32_t)id + 4, 2, s_names, s_types, 0);
    hk_class(b, HK_A, (flags & HK_CYCLE) ? HK_B : HK_OBJECT, HK_LOADER, a_size, 3, a_names, a_types, HK_A1);
    hk_class(b, HK_B, HK_A, HK_LOADER, a_size + (uint32_t)id, 1, b_names, b_types, 0);
    hk_class(b, HK_CHARS, HK_OBJECT, 0, 0, 0, NULL, NULL, 0);
    hk_class(b, HK_OBJARR, HK_OBJECT, 0, 0, 0, NULL, NULL, 0);
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_END);
    bb_rec_end(b);
}

#endif
