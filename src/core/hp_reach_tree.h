/* The dominator tree of an hp_reach, navigable: each object's children
 * (hp_domtree, largest retained first) and the retained size of groups of
 * objects by the union rule (hp_domtree.h), as MAT's and AHAT's dominator
 * views show them.
 *
 * Everything here needs hp_reach_dominators first.  The tree is built
 * once, by hp_reach_tree (serialised by the caller, as the other lazy
 * parts); the read functions may then run from any thread. */
#ifndef HP_REACH_TREE_H
#define HP_REACH_TREE_H

#include "hp_domtree.h"
#include "hp_reach.h"

/* The children of every object, each row largest retained first (ties by
 * lower index), the virtual root's row holding the objects only it
 * dominates.  Built once (8 B an object, kept by r); *out stays owned by
 * r.  Errors: HP_E_USAGE (no dominators yet), HP_E_NOMEM, HP_E_ABORTED. */
hp_code hp_reach_tree(hp_reach *r, const hp_checkpoint *cp, const hp_domtree **out, hp_error *err);

/* v's place in the dominator tree: its immediate dominator, HP_DOM_VIRTUAL
 * when only the virtual root dominates it (every root; under visualvm also
 * every object its search did not reach), HP_NONE when it is unreachable. */
uint32_t hp_reach_tree_parent(const hp_reach *r, uint32_t v);

/* v's shallow size, read off `tree` (hp_reach_tree's) under hprofkit for
 * a reachable v, else off the dump. */
uint64_t hp_reach_tree_shallow(const hp_reach *r, const hp_domtree *tree, uint32_t v);

/* Totals of groups of objects: for each group g < ngroups (group[v] as
 * hp_domtree_group_tops: v's group, HP_NONE, or a shadow member),
 * objects[g] its members, shallow[g] their shallow sizes and retained[g]
 * the retained size of the union of their retained sets (the union rule;
 * under visualvm, the sum of VisualVM's retained sizes of the members no
 * other member dominates).  A shadow member counts for nothing: it only
 * hides the members it dominates, as VisualVM's class objects do in its
 * retained size by class (java.lang.Class's).  The arrays are the
 * caller's, ngroups each.  Builds the tree if needed.  Under hprofkit a
 * reachable object's shallow size is read off the tree (its retained size
 * less its children's), not the dump.  Errors: as hp_reach_tree and
 * hp_domtree_group_tops. */
hp_code hp_reach_group_totals(hp_reach *r, const uint32_t *group, uint32_t ngroups, uint64_t *objects,
                              uint64_t *shallow, uint64_t *retained, const hp_checkpoint *cp, hp_error *err);

#endif
