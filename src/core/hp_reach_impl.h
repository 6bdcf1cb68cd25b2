/* Private to hp_reach*.c: the reachability state and the helpers its
 * files share. */
#ifndef HP_REACH_IMPL_H
#define HP_REACH_IMPL_H

#include "hp_domtree.h"
#include "hp_reach.h"

struct hp_reach {
    const hp_heap *heap;
    int semantics;
    hp_alloc alloc;
    uint32_t n, nclasses;
    hp_graph graph;
    uint32_t *roots;          /* vertices, in search order */
    uint32_t *root_records;   /* the hp_heap_root number of each */
    size_t nroots;
    uint32_t *threads;        /* (serial, vertex) pairs of thread objects, by serial */
    size_t nthreads;
    uint32_t *class_object;   /* per class: its class object's vertex */
    /* The class forest (hp_reach.c, class_forest): every class after its
     * superclass, and depth-first numbers for subclass tests. */
    uint32_t *class_order;
    uint32_t *class_enter, *class_leave;
    uint32_t *class_refs;     /* per class: reference slots of its layout (own and inherited) */
    uint32_t *class_super;    /* per class: its superclass, or HP_NONE */
    /* Per class: the reference slot of Reference.referent that is not
     * strong, or HP_NONE.  hprofkit: every subclass of Reference, and the
     * slot is left out of the graph; visualvm: the four reference kinds,
     * and the slot is in the graph but not searched. */
    uint32_t *referent_slot;

    /* visualvm: its nearest-GC-root search (hp_reach_visualvm.c) */
    uint64_t *is_root;        /* bit set: named by a GC root */
    uint64_t *claims;         /* bit set: the vertex holds its class by VisualVM's class edge */
    uint32_t *parent;         /* search parent, HP_NONE for roots and unreached (freed after use) */
    uint32_t *leaves;         /* leaves in the order the search met them (freed after use) */
    size_t nleaves;

    /* results */
    int has_dominators;
    hp_dominators dom;
    uint64_t *retained;       /* visualvm: VisualVM's retained sizes (dom.retained otherwise) */
    uint64_t *minus_one;      /* visualvm: bit set: VisualVM reports -1 */
    uint64_t *tree;           /* visualvm: bit set: tree objects (retained final before dominators) */
    uint64_t *class_retained; /* per class, once computed: sizes, then counts */
    hp_domtree children;      /* the dominator tree's rows, once asked (hp_reach_tree.c) */
    uint64_t *live;           /* the live set, once asked (hp_reach_live.c) */
    uint32_t live_count;
};

/* Walks the strong edges of one vertex in row order: the references the
 * semantics keeps, then VisualVM's class edge. */
typedef struct reach_cursor {
    uint32_t v;
    uint32_t next;      /* number of the edge the next step gives */
    int class_done;
    int holes;          /* references to missing objects are given too (target HP_NONE) */
    hp_ref_iter it;
    hp_ref last;        /* the edge number next - 1 */
} reach_cursor;

void reach_cursor_init(const hp_reach *r, reach_cursor *c, uint32_t v);
/* The next edge of the row: 1 and *out, or 0 at the end. */
int reach_cursor_step(const hp_reach *r, reach_cursor *c, hp_ref *out);

/* Whether reference `ref` of an instance of class `cls` is the referent
 * of a reference kind (the slot a search skips). */
static inline int reach_is_referent(const hp_reach *r, uint32_t cls, const hp_ref *ref)
{
    return ref->kind == HP_REF_FIELD && cls != HP_NONE && ref->slot == r->referent_slot[cls];
}

/* hprofkit: v's referent, if v is a Reference holding one (the weak edge
 * the graph leaves out): 1 and *out, else 0. */
int reach_weak_edge(const hp_reach *r, uint32_t v, hp_ref *out);

/* Whether class `cls` is `base` or a subclass of it.  O(1). */
int reach_extends(const hp_reach *r, uint32_t cls, uint32_t base);

/* The position of field `name` among the reference fields class
 * `declaring` declares itself, or HP_NONE.  In the layout of a class
 * extending it, the field's slot is class_refs[cls] - class_refs[declaring]
 * + that position (a layout's own fields come first). */
uint32_t reach_own_ref_slot(const hp_heap *h, uint32_t declaring, const char *name, size_t len);

/* visualvm: the search (before the graph), then the tree objects (after
 * it); hp_reach_visualvm.c. */
hp_code reach_vv_search(hp_reach *r, const hp_checkpoint *cp, hp_error *err);
hp_code reach_vv_tree_objects(hp_reach *r, const hp_checkpoint *cp, hp_error *err);
/* Adds v's own weight to its retained size and hands the result to its
 * dominator: VisualVM's accumulation, one vertex after all it dominates. */
void reach_vv_accumulate(hp_reach *r, uint32_t v);

#endif
