/* Shared by test_reach.c and fuzz_reach.c: a HotSpot dump (4-byte ids)
 * shaped as a given graph.  Nodes are instances of class Node(next, other,
 * int value); a WeakReference holds one node as its referent; an Object[]
 * holds some nodes; GC roots name nodes or ids absent from the dump. */
#ifndef REACHKIT_H
#define REACHKIT_H

#include "heapkit.h"

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

/* A random graph of up to RK_SPEC_MAX nodes, with the arrays it points to. */
enum { RK_SPEC_MAX = 48 };

typedef struct rk_spec {
    int next[RK_SPEC_MAX], other[RK_SPEC_MAX], items[8];
    rk_root roots[8];
    rk_graph g;
} rk_spec;

static inline void rk_random_spec(rk_spec *s, uint32_t *seed)
{
    int k, n = 1 + (int)(xorshift(seed) % (RK_SPEC_MAX - 1));
    memset(s, 0, sizeof *s);
    for (k = 0; k < n; k++) {
        uint32_t r = xorshift(seed);
        /* Mostly forward edges (a heap's shape), some back edges, self
         * references, nulls and missing targets. */
        s->next[k] = r % 7 == 0 ? RK_NULL : r % 13 == 0 ? k : (int)((k + 1 + r % 3) % (uint32_t)n);
        r = xorshift(seed);
        s->other[k] = r % 3 == 0 ? RK_NULL : r % 17 == 0 ? RK_MISSING : (int)(r % (uint32_t)n);
    }
    for (k = 0; k < 8; k++)
        s->items[k] = xorshift(seed) % 3 == 0 ? RK_NULL : (int)(xorshift(seed) % (uint32_t)n);
    s->g.nroots = 1 + (int)(xorshift(seed) % 6);
    for (k = 0; k < s->g.nroots; k++) {
        uint32_t r = xorshift(seed);
        s->roots[k].kind = r % 5 == 0 ? HP_SUB_ROOT_MONITOR_USED : HP_SUB_ROOT_JNI_GLOBAL;
        s->roots[k].node = r % 11 == 0 ? RK_MISSING : r % 7 == 0 ? RK_ROOT_ARRAY : r % 9 == 0 ? RK_ROOT_WEAK
                                                                                            : (int)(r % (uint32_t)n);
    }
    s->g.n = n;
    s->g.next = s->next;
    s->g.other = s->other;
    s->g.referent = (int)(xorshift(seed) % (uint32_t)n);
    s->g.items = s->items;
    s->g.nitems = 8;
    s->g.roots = s->roots;
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
    hk_string(b, 1, "java/lang/Object");
    hk_string(b, 2, "java/lang/ref/Reference");
    hk_string(b, 3, "java/lang/ref/WeakReference");
    hk_string(b, 4, "Node");
    hk_string(b, 5, "[Ljava/lang/Object;");
    hk_string(b, 6, "referent");
    hk_string(b, 7, "next");
    hk_string(b, 8, "other");
    hk_string(b, 9, "value");
    hk_load(b, 1, RK_C_OBJECT, 1);
    hk_load(b, 2, RK_C_REF, 2);
    hk_load(b, 3, RK_C_WEAK, 3);
    hk_load(b, 4, RK_C_NODE, 4);
    hk_load(b, 5, RK_C_ARRAY, 5);
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
    hk_instance_head(b, RK_WEAK, RK_C_WEAK, 4);
    bb_id(b, rk_node_id(g->referent));
    bb_u1(b, HP_SUB_OBJ_ARRAY_DUMP);
    bb_id(b, RK_ARRAY);
    bb_u4(b, 1);
    bb_u4(b, (uint32_t)g->nitems);
    bb_id(b, RK_C_ARRAY);
    for (k = 0; k < g->nitems; k++)
        bb_id(b, rk_node_id(g->items[k]));
    for (k = 0; k < g->n; k++) {
        hk_instance_head(b, rk_node_id(k), RK_C_NODE, 12);
        bb_id(b, rk_node_id(g->next[k]));
        bb_id(b, rk_node_id(g->other[k]));
        bb_u4(b, (uint32_t)k);
    }
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_END);
    bb_rec_end(b);
}

#endif
