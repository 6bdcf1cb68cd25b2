/* Shared by test_reach.c and fuzz_reach.c: a HotSpot dump (4-byte ids)
 * shaped as a given graph.  Nodes are instances of class Node(next, other,
 * int value); a WeakReference holds one node as its referent; an Object[]
 * holds some nodes; GC roots name nodes or ids absent from the dump. */
#ifndef REACHKIT_H
#define REACHKIT_H

#include "testkit.h"

#include "hp_header.h"

#define RK_NULL (-1)
#define RK_MISSING (-2) /* an id absent from the dump */

enum {
    RK_C_OBJECT = 0x1000, RK_C_REF = 0x1008, RK_C_WEAK = 0x1010, RK_C_NODE = 0x1018, RK_C_ARRAY = 0x1020,
    RK_WEAK = 0x2000, RK_ARRAY = 0x2008, RK_MISSING_ID = 0x7770, RK_NODES = 0x10000
};

typedef struct rk_root {
    int kind;       /* HP_SUB_ROOT_* */
    int node;       /* a node, RK_MISSING, or (for the weak reference / array) -3 / -4 */
    uint32_t serial; /* thread serial (THREAD_OBJECT, JAVA_FRAME) */
} rk_root;

#define RK_ROOT_WEAK (-3)
#define RK_ROOT_ARRAY (-4)

typedef struct rk_graph {
    int n;
    const int *next, *other; /* per node: a node, RK_NULL or RK_MISSING */
    int referent;            /* the weak reference's referent: a node or RK_NULL */
    const int *items;        /* the array's elements (nodes or RK_NULL) */
    int nitems;
    const rk_root *roots;
    int nroots;
} rk_graph;

static inline uint64_t rk_node_id(int node)
{
    return node == RK_NULL ? 0 : node == RK_MISSING ? RK_MISSING_ID : RK_NODES + 8 * (uint64_t)node;
}

static inline void rk_string(bb *b, uint64_t sid, const char *text)
{
    bb_rec_begin(b, HP_TAG_UTF8);
    bb_id(b, sid);
    bb_raw(b, text, strlen(text));
    bb_rec_end(b);
}

static inline void rk_load_class(bb *b, uint32_t serial, uint64_t id, uint64_t name_sid)
{
    bb_rec_begin(b, HP_TAG_LOAD_CLASS);
    bb_u4(b, serial);
    bb_id(b, id);
    bb_u4(b, 0);
    bb_id(b, name_sid);
    bb_rec_end(b);
}

static inline void rk_class_dump(bb *b, uint64_t id, uint64_t super, uint32_t size, int nfields, const uint64_t *names,
                                 const int *types)
{
    int k;
    bb_u1(b, HP_SUB_CLASS_DUMP);
    bb_id(b, id);
    bb_u4(b, 1);
    bb_id(b, super);
    for (k = 0; k < 5; k++)
        bb_id(b, 0); /* loader, signers, protection domain, reserved x2 */
    bb_u4(b, size);
    bb_u2(b, 0);     /* constant pool */
    bb_u2(b, 0);     /* statics */
    bb_u2(b, (unsigned)nfields);
    for (k = 0; k < nfields; k++) {
        bb_id(b, names[k]);
        bb_u1(b, (unsigned)types[k]);
    }
}

static inline void rk_instance(bb *b, uint64_t id, uint64_t class_id, uint32_t bytes)
{
    bb_u1(b, HP_SUB_INSTANCE_DUMP);
    bb_id(b, id);
    bb_u4(b, 1);
    bb_id(b, class_id);
    bb_u4(b, bytes);
}

static inline uint64_t rk_root_id(int node)
{
    return node == RK_ROOT_WEAK ? RK_WEAK : node == RK_ROOT_ARRAY ? RK_ARRAY : rk_node_id(node);
}

/* Writes the dump of `g` into *b (fresh). */
static inline void rk_dump(bb *b, const rk_graph *g)
{
    static const uint64_t ref_names[1] = { 6 }, node_names[3] = { 7, 8, 9 };
    static const int ref_types[1] = { HP_T_OBJECT }, node_types[3] = { HP_T_OBJECT, HP_T_OBJECT, HP_T_INT };
    uint8_t header[HP_HEADER_MAX];
    int k;
    memset(b, 0, sizeof *b);
    b->id = 4;
    bb_raw(b, header, hp_header_write(header, 2, 4, 1700000000000ULL));
    rk_string(b, 1, "java/lang/Object");
    rk_string(b, 2, "java/lang/ref/Reference");
    rk_string(b, 3, "java/lang/ref/WeakReference");
    rk_string(b, 4, "Node");
    rk_string(b, 5, "[Ljava/lang/Object;");
    rk_string(b, 6, "referent");
    rk_string(b, 7, "next");
    rk_string(b, 8, "other");
    rk_string(b, 9, "value");
    rk_load_class(b, 1, RK_C_OBJECT, 1);
    rk_load_class(b, 2, RK_C_REF, 2);
    rk_load_class(b, 3, RK_C_WEAK, 3);
    rk_load_class(b, 4, RK_C_NODE, 4);
    rk_load_class(b, 5, RK_C_ARRAY, 5);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_SEGMENT);
    for (k = 0; k < g->nroots; k++) {
        const rk_root *r = &g->roots[k];
        bb_u1(b, (unsigned)r->kind);
        bb_id(b, rk_root_id(r->node));
        switch (r->kind) {
        case HP_SUB_ROOT_JNI_GLOBAL: bb_id(b, 0x99); break;
        case HP_SUB_ROOT_JNI_LOCAL: case HP_SUB_ROOT_JAVA_FRAME: bb_u4(b, r->serial); bb_u4(b, 0); break;
        case HP_SUB_ROOT_NATIVE_STACK: case HP_SUB_ROOT_THREAD_BLOCK: bb_u4(b, r->serial); break;
        case HP_SUB_ROOT_THREAD_OBJECT: bb_u4(b, r->serial); bb_u4(b, 0); break;
        default: break;
        }
    }
    rk_class_dump(b, RK_C_OBJECT, 0, 0, 0, NULL, NULL);
    rk_class_dump(b, RK_C_REF, RK_C_OBJECT, 4, 1, ref_names, ref_types);
    rk_class_dump(b, RK_C_WEAK, RK_C_REF, 4, 0, NULL, NULL);
    rk_class_dump(b, RK_C_NODE, RK_C_OBJECT, 12, 3, node_names, node_types);
    rk_class_dump(b, RK_C_ARRAY, RK_C_OBJECT, 0, 0, NULL, NULL);
    rk_instance(b, RK_WEAK, RK_C_WEAK, 4);
    bb_id(b, rk_node_id(g->referent));
    bb_u1(b, HP_SUB_OBJ_ARRAY_DUMP);
    bb_id(b, RK_ARRAY);
    bb_u4(b, 1);
    bb_u4(b, (uint32_t)g->nitems);
    bb_id(b, RK_C_ARRAY);
    for (k = 0; k < g->nitems; k++)
        bb_id(b, rk_node_id(g->items[k]));
    for (k = 0; k < g->n; k++) {
        rk_instance(b, rk_node_id(k), RK_C_NODE, 12);
        bb_id(b, rk_node_id(g->next[k]));
        bb_id(b, rk_node_id(g->other[k]));
        bb_u4(b, (uint32_t)k);
    }
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_END);
    bb_rec_end(b);
}

#endif
