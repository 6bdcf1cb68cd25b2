/* The class tree of an hp_reach: its dominator tree (hp_reach_tree.h)
 * folded by class path (hp_domfold.h), as Perfetto's and AHAT's class
 * views show a heap.  An object's key is its class ordinal c (< C, the
 * class count) for an instance or an array, C + c for the class object of
 * class c, and 2C when the dump gives no class.  Each object's shallow
 * size counts once, in its own node; a node's retained size is its shallow
 * size plus its children's (the union of its objects' retained sets).
 *
 * The tree holds what the dominator tree holds: under hprofkit the
 * strongly reachable objects; under visualvm every object. */
#ifndef HP_REACH_CLASSTREE_H
#define HP_REACH_CLASSTREE_H

#include "hp_domfold.h"
#include "hp_reach_tree.h"

/* Folds r's dominator tree (built if needed) into `out` (hp_domfold_free
 * frees it), keeping the `top` objects of largest retained size of each
 * node.  Errors: as hp_reach_tree and hp_domfold_build. */
hp_code hp_reach_class_tree(hp_reach *r, uint32_t top, const hp_checkpoint *cp, hp_domfold *out, hp_error *err);

/* The objects of node `node` of `f` (made by hp_reach_class_tree over the
 * same r) as hp_domfold_members gives them. */
hp_code hp_reach_class_tree_members(hp_reach *r, const hp_domfold *f, uint32_t node, uint32_t **out,
                                    uint32_t *count, const hp_checkpoint *cp, hp_error *err);

#endif
