/* The live set: every object a GC root reaches through any reference, as
 * Eclipse MAT keeps it when it drops garbage at parse time.  "Any
 * reference" is wider than the graph's strong edges (hp_reach.h): it also
 * follows a Reference's referent (weak, soft, phantom and final referents
 * are live until a collection clears them), an instance or array to its
 * class object, and a class object to its superclass's.  Whatever the
 * semantics, the set is the same: it decides which objects an analysis
 * counts, not which hold which.
 *
 * The live set of a dump written with `jmap -dump:live` is (almost) every
 * object; a dump written without it (`jcmd GC.heap_dump -all`, the
 * default of `jmap -dump`) may hold more garbage than live objects. */
#ifndef HP_REACH_LIVE_H
#define HP_REACH_LIVE_H

#include "hp_reach.h"

/* Marks the live set once (later calls return HP_OK at once).  Memory
 * while it runs: 4 B an object (the stack); kept: 1 bit an object.
 * Linear in the objects and references.  Errors: HP_E_NOMEM,
 * HP_E_ABORTED (the checkpoint). */
hp_code hp_reach_live(hp_reach *r, const hp_checkpoint *cp, hp_error *err);

/* After hp_reach_live: a bit per object (index order), set for the live;
 * NULL before. */
const uint64_t *hp_reach_live_bits(const hp_reach *r);

/* After hp_reach_live: how many objects are live. */
uint32_t hp_reach_live_count(const hp_reach *r);

/* Which objects an analysis counts: every one, the live, or the garbage. */
typedef enum { HP_MEMBERS_ALL = 0, HP_MEMBERS_LIVE = 1, HP_MEMBERS_GARBAGE = 2 } hp_members;

/* Whether object v is counted by `members` over `live` (NULL: no live set
 * was asked for, so only HP_MEMBERS_ALL is meant). */
static inline int hp_members_has(hp_members members, const uint64_t *live, uint32_t v)
{
    if (members == HP_MEMBERS_ALL || !live)
        return 1;
    return hp_bit(live, v) == (members == HP_MEMBERS_LIVE);
}

#endif
