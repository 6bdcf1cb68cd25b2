/* Shared by test_values.c and fuzz_heap.c: a small dump of collections,
 * Strings, stack traces and an ALLOC_SITES record, written with the test
 * kit's byte builder (see test_values.c for what it holds and why). */
#ifndef VALUESKIT_H
#define VALUESKIT_H

#include "testkit.h"

#include "hp_header.h"

enum {
    C_OBJECT = 0x1000, C_MAP = 0x1008, C_NODE = 0x1010, C_LIST = 0x1018, C_STRING = 0x1020, C_OBJARR = 0x1028,
    C_BYTES = 0x1030, C_MYLIST = 0x1038, C_DEQUE = 0x1040,
    K1 = 0x2000, K2 = 0x2008, V1 = 0x2010, V3 = 0x2018, X = 0x2020,
    MAP = 0x3000, TABLE = 0x3008, N1 = 0x3010, N2 = 0x3018, N3 = 0x3020,
    LOOP = 0x3100, LOOP_TABLE = 0x3108, L1 = 0x3110,
    LIST = 0x3200, ELEMS = 0x3208, MYLIST = 0x3210, EMPTY = 0x3218, EMPTY_ELEMS = 0x3220,
    DEQUE = 0x3300, DEQUE_ELEMS = 0x3308, BAD_DEQUE = 0x3310,
    S1 = 0x4000, S1_V = 0x4008, S2 = 0x4010, S2_V = 0x4018, S3 = 0x4020, S4 = 0x4028, S4_V = 0x4030,
    F1 = 0x5000, F2 = 0x5008, NO_TRACE_OBJECT = 0x2028
};

enum { N_NAME = 1, N_MAP, N_NODE, N_LIST, N_STRING, N_OBJARR, N_BYTES, N_MYLIST, N_DEQUE, N_TABLE, N_SIZE, N_KEY,
       N_VALUE, N_NEXT, N_ELEMENTDATA, N_CODER, N_ELEMENTS, N_HEAD, N_TAIL, N_METHOD, N_SIG, N_FILE };

static const char *const vk_names[] = { NULL, "java/lang/Object", "java/util/HashMap", "java/util/HashMap$Node",
                                     "java/util/ArrayList", "java/lang/String", "[Ljava/lang/Object;", "[B",
                                     "my/List", "java/util/ArrayDeque", "table", "size", "key", "value", "next",
                                     "elementData", "coder", "elements", "head", "tail", "run", "()V", "A.java" };

static inline void vk_class(bb *b, uint64_t id, uint64_t super, int n, const int *field_names, const int *types)
{
    int i;
    bb_u1(b, HP_SUB_CLASS_DUMP);
    bb_id(b, id);
    bb_u4(b, 0);
    bb_id(b, super);
    for (i = 0; i < 5; i++)
        bb_id(b, 0);
    bb_u4(b, 0);
    bb_u2(b, 0);
    bb_u2(b, 0);
    bb_u2(b, (unsigned)n);
    for (i = 0; i < n; i++) {
        bb_id(b, (uint64_t)field_names[i]);
        bb_u1(b, (unsigned)types[i]);
    }
}

/* An instance of `class_id` whose fields are ids (objects) and u4s (ints). */
static inline void vk_instance(bb *b, uint64_t id, uint32_t trace, uint64_t class_id, int n, const uint64_t *values,
                 const int *types)
{
    uint32_t bytes = 0;
    int i;
    for (i = 0; i < n; i++)
        bytes += types[i] == HP_T_OBJECT ? (uint32_t)b->id : types[i] == HP_T_BYTE ? 1 : 4;
    bb_u1(b, HP_SUB_INSTANCE_DUMP);
    bb_id(b, id);
    bb_u4(b, trace);
    bb_id(b, class_id);
    bb_u4(b, bytes);
    for (i = 0; i < n; i++) {
        if (types[i] == HP_T_OBJECT)
            bb_id(b, values[i]);
        else if (types[i] == HP_T_BYTE)
            bb_u1(b, (unsigned)values[i]);
        else
            bb_u4(b, (uint32_t)values[i]);
    }
}

static inline void vk_objects(bb *b, uint64_t id, int n, const uint64_t *elements)
{
    int i;
    bb_u1(b, HP_SUB_OBJ_ARRAY_DUMP);
    bb_id(b, id);
    bb_u4(b, 0);
    bb_u4(b, (uint32_t)n);
    bb_id(b, C_OBJARR);
    for (i = 0; i < n; i++)
        bb_id(b, elements[i]);
}

static inline void vk_bytes(bb *b, uint64_t id, const char *data, uint32_t n)
{
    bb_u1(b, HP_SUB_PRIM_ARRAY_DUMP);
    bb_id(b, id);
    bb_u4(b, 0);
    bb_u4(b, n);
    bb_u1(b, HP_T_BYTE);
    bb_raw(b, data, n);
}

static const int T_OO[2] = { HP_T_OBJECT, HP_T_INT }, T_NODE[3] = { HP_T_OBJECT, HP_T_OBJECT, HP_T_OBJECT };
static const int T_STR[2] = { HP_T_OBJECT, HP_T_BYTE }, T_DEQUE[3] = { HP_T_OBJECT, HP_T_INT, HP_T_INT };

/* A fresh dump in *b: the header (identifiers of id_size bytes) and a
 * STRING for each of vk_names. */
static inline void vk_head(bb *b, int id_size)
{
    uint8_t header[HP_HEADER_MAX];
    size_t k;
    memset(b, 0, sizeof *b);
    b->id = id_size;
    bb_raw(b, header, hp_header_write(header, 2, id_size, 0));
    for (k = 1; k < sizeof vk_names / sizeof vk_names[0]; k++) {
        bb_rec_begin(b, HP_TAG_UTF8);
        bb_id(b, k);
        bb_raw(b, vk_names[k], strlen(vk_names[k]));
        bb_rec_end(b);
    }
}

/* A LOAD_CLASS record: class `id`, named by string `name`. */
static inline void vk_load(bb *b, uint32_t serial, uint64_t id, uint64_t name)
{
    bb_rec_begin(b, HP_TAG_LOAD_CLASS);
    bb_u4(b, serial);
    bb_id(b, id);
    bb_u4(b, 0);
    bb_id(b, name);
    bb_rec_end(b);
}

/* The crafted dump (see the file's head); `sites_short` cuts the ALLOC_SITES record. */
static inline void vk_dump(bb *b, int id_size, int sites_short)
{
    static const int map_f[2] = { N_TABLE, N_SIZE }, node_f[3] = { N_KEY, N_VALUE, N_NEXT };
    static const int list_f[2] = { N_ELEMENTDATA, N_SIZE }, str_f[2] = { N_VALUE, N_CODER };
    static const int deque_f[3] = { N_ELEMENTS, N_HEAD, N_TAIL };
    static const uint64_t ids[] = { C_OBJECT, C_MAP, C_NODE, C_LIST, C_STRING, C_OBJARR, C_BYTES, C_MYLIST,
                                    C_DEQUE };
    size_t k;
    vk_head(b, id_size);
    for (k = 0; k < sizeof ids / sizeof ids[0]; k++)
        vk_load(b, (uint32_t)k + 1, ids[k], k + 1);
    for (k = 0; k < 2; k++) { /* two frames of ArrayList (class serial 4): run()V at A.java:10 and :20 */
        bb_rec_begin(b, HP_TAG_FRAME);
        bb_id(b, k ? F2 : F1);
        bb_id(b, N_METHOD);
        bb_id(b, N_SIG);
        bb_id(b, N_FILE);
        bb_u4(b, 4);
        bb_u4(b, k ? 20 : 10);
        bb_rec_end(b);
    }
    bb_rec_begin(b, HP_TAG_TRACE);
    bb_u4(b, 100);
    bb_u4(b, 1);
    bb_u4(b, 2);
    bb_id(b, F1);
    bb_id(b, F2);
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_ALLOC_SITES);
    bb_u2(b, 2);
    bb_u4(b, 0x3f000000); /* 0.5f */
    bb_u4(b, 100);
    bb_u4(b, 3);
    bb_u8(b, 1000);
    bb_u8(b, 30);
    bb_u4(b, 2);
    for (k = 0; k < (sites_short ? 1u : 2u); k++) {
        bb_u1(b, k ? 4 : 0);
        bb_u4(b, (uint32_t)k + 4);
        bb_u4(b, 100);
        bb_u4(b, 40 + (uint32_t)k);
        bb_u4(b, 2);
        bb_u4(b, 400);
        bb_u4(b, 20);
    }
    bb_rec_end(b);

    bb_rec_begin(b, HP_TAG_HEAP_DUMP_SEGMENT);
    vk_class(b, C_OBJECT, 0, 0, NULL, NULL);
    vk_class(b, C_MAP, C_OBJECT, 2, map_f, T_OO);
    vk_class(b, C_NODE, C_OBJECT, 3, node_f, T_NODE);
    vk_class(b, C_LIST, C_OBJECT, 2, list_f, T_OO);
    vk_class(b, C_MYLIST, C_LIST, 0, NULL, NULL);
    vk_class(b, C_STRING, C_OBJECT, 2, str_f, T_STR);
    vk_class(b, C_OBJARR, C_OBJECT, 0, NULL, NULL);
    vk_class(b, C_BYTES, C_OBJECT, 0, NULL, NULL);
    vk_class(b, C_DEQUE, C_OBJECT, 3, deque_f, T_DEQUE);
    {
        const uint64_t keys[] = { K1, K2, V1, V3, X };
        for (k = 0; k < 5; k++)
            vk_instance(b, keys[k], k < 2 ? 100 : 0, C_OBJECT, 0, NULL, NULL);
        vk_instance(b, NO_TRACE_OBJECT, 999, C_OBJECT, 0, NULL, NULL);
    }
    {
        const uint64_t map[2] = { TABLE, 3 }, table[4] = { N1, 0, N3, 0 };
        const uint64_t n1[3] = { K1, V1, N2 }, n2[3] = { K2, 0, 0 }, n3[3] = { 0, V3, 0 };
        const uint64_t loop[2] = { LOOP_TABLE, 1 }, loop_table[1] = { L1 }, l1[3] = { K1, V1, L1 };
        vk_instance(b, MAP, 0, C_MAP, 2, map, T_OO);
        vk_objects(b, TABLE, 4, table);
        vk_instance(b, N1, 0, C_NODE, 3, n1, T_NODE);
        vk_instance(b, N2, 0, C_NODE, 3, n2, T_NODE);
        vk_instance(b, N3, 0, C_NODE, 3, n3, T_NODE);
        vk_instance(b, LOOP, 0, C_MAP, 2, loop, T_OO);
        vk_objects(b, LOOP_TABLE, 1, loop_table);
        vk_instance(b, L1, 0, C_NODE, 3, l1, T_NODE);
    }
    {
        const uint64_t list[2] = { ELEMS, 3 }, elems[5] = { K1, 0, K2, X, X }, mine[2] = { ELEMS, 2 };
        const uint64_t empty[2] = { EMPTY_ELEMS, 0 }, none[10] = { 0 };
        vk_instance(b, LIST, 0, C_LIST, 2, list, T_OO);
        vk_objects(b, ELEMS, 5, elems);
        vk_instance(b, MYLIST, 0, C_MYLIST, 2, mine, T_OO);
        vk_instance(b, EMPTY, 0, C_LIST, 2, empty, T_OO);
        vk_objects(b, EMPTY_ELEMS, 10, none);
    }
    {
        const uint64_t deque[3] = { DEQUE_ELEMS, 3, 1 }, ring[4] = { K1, K2, 0, V1 }, bad[3] = { DEQUE_ELEMS, 7, 1 };
        vk_instance(b, DEQUE, 0, C_DEQUE, 3, deque, T_DEQUE);
        vk_objects(b, DEQUE_ELEMS, 4, ring);
        vk_instance(b, BAD_DEQUE, 0, C_DEQUE, 3, bad, T_DEQUE);
    }
    {
        const uint64_t s1[2] = { S1_V, 0 }, s2[2] = { S2_V, 1 }, s3[2] = { S1_V, 0 }, s4[2] = { S4_V, 0 };
        vk_instance(b, S1, 0, C_STRING, 2, s1, T_STR);
        vk_bytes(b, S1_V, "ab", 2);
        vk_instance(b, S2, 0, C_STRING, 2, s2, T_STR);
        vk_bytes(b, S2_V, "a\0b\0", 4);  /* UTF-16, little-endian as HotSpot writes it */
        vk_instance(b, S3, 0, C_STRING, 2, s3, T_STR);
        vk_instance(b, S4, 0, C_STRING, 2, s4, T_STR);
        vk_bytes(b, S4_V, "cd", 2);
    }
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_END);
    bb_rec_end(b);
}

#endif
