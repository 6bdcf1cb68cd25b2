/* MAT's "merge shortest paths to GC roots": the shortest paths of many
 * objects, as one search (hp_reach_paths) found them, folded from the roots
 * down into one tree.
 *
 * A node of the tree is the objects that sit at one place of those paths:
 * the objects reached from its parent node's objects by one reference
 * (the same field, the same static, the loader, or any element of an
 * array: "[]") whose class is the same (class objects apart, by the class
 * they are).  A root node is the roots of one kind whose objects have one
 * class.  Each search path lies in the tree, so each object of a path is
 * in exactly one node.
 *
 * Per node: its objects and their shallow sizes, their retained size by
 * the union rule (hp_reach_tree.h: no byte counted twice), and the
 * targets whose paths run through it (MAT's "Ref. Objects") with their
 * shallow sizes.  Nodes are numbered parents first.
 *
 * Memory while it runs: 4 B per object (its node) and a bit per object,
 * the longest new stretch of a path (4 B a vertex), and the nodes (44 B
 * each, a table of 8 B each).  Time: linear in the objects and the path
 * lengths, and one naming of each distinct edge a path takes out of an
 * instance or a class object (an array's elements fold into one). */
#ifndef HP_REACH_MERGED_H
#define HP_REACH_MERGED_H

#include "hp_reach_tree.h"

/* hp_merged.kind of a root node (the others: HP_REF_*, HP_REF_CLASS). */
#define HP_MERGED_ROOT 0xFF

typedef struct hp_merged {
    uint32_t count;          /* nodes */
    uint32_t *parent;        /* node -> its parent node, HP_NONE for a root node */
    uint8_t *kind;           /* node -> HP_MERGED_ROOT, or the kind of the reference from the parent */
    uint32_t *slot;          /* node -> the root kind (HP_SUB_ROOT_*), or the reference's slot (0 for "[]") */
    uint32_t *holder;        /* node -> an object of the parent node holding that reference (HP_NONE: root) */
    uint32_t *cls;           /* node -> the class of its objects (for class objects: the class they are), or
                              * HP_NONE when unknown */
    uint8_t *class_object;   /* node -> 1 when its objects are class objects */
    uint64_t *objects, *shallow, *retained;   /* node -> its objects: count, shallow sizes, union retained */
    uint64_t *targets, *target_shallow;       /* node -> targets at or below it: count, shallow sizes */
    uint32_t reached;        /* distinct targets with a path */
    uint32_t unreached;      /* distinct targets without one */
    hp_alloc alloc;
} hp_merged;

/* Folds the paths of `targets` (duplicates count once; entries >= the
 * object count are skipped) that the search `b` over r's graph found.
 * Needs hp_reach_dominators (retained sizes).  On failure `out` holds
 * nothing (hp_merged_free is still safe): HP_E_NOMEM, HP_E_ABORTED,
 * HP_E_USAGE (no dominators; a search edge missing from the graph). */
hp_code hp_reach_merged(hp_reach *r, const hp_bfs *b, const uint32_t *targets, size_t ntargets,
                        const hp_checkpoint *cp, hp_merged *out, hp_error *err);
void hp_merged_free(hp_merged *m);

#endif
