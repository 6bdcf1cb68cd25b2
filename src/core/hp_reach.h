/* Reachability over a heap index: the strong-reference graph of a dump, its
 * GC roots, shortest paths from them, dominators and retained sizes.
 *
 * Vertex v is the object of heap index v (id order).  The graph is built
 * once (hp_graph, 4 bytes an edge) under one of two semantics:
 *
 * HP_REACH_HPROFKIT (the default of the Python API)
 *   - an instance holds its non-null reference fields, an object array its
 *     elements, a class object its reference statics and its class loader;
 *   - the field `referent` declared by java.lang.ref.Reference is not a
 *     strong reference (weak, soft, phantom and final referents, as Shark
 *     and LeakCanary read them), so only weakly reachable objects are
 *     unreachable and retain nothing;
 *   - no instance -> class edge and no class -> superclass edge: a class
 *     is held by its loader's class table, its GC root or a static, as in
 *     the running VM; Shark's paths never go through them either, so leak
 *     traces name real fields (MAT adds both; the retained sizes of class
 *     objects are the ones that move);
 *   - roots: every GC root record naming an object of the dump, thread
 *     objects first (so a frame's locals hang from their thread), then in
 *     VisualVM's order of kinds, each kind in file order; ROOT_UNREACHABLE
 *     is not a root; roots naming missing objects are skipped;
 *   - dominators (MAT's model): a thread's roots (its frames' locals, JNI
 *     locals, native stack, thread block, JNI monitors: the roots naming
 *     its serial) hang from its thread object when the dump has it, as
 *     edges thread -> object the reference graph does not have, so a
 *     thread retains what only its stack holds; paths still start at them.
 *
 * HP_REACH_VISUALVM: VisualVM's heap library exactly (docs/heap-model.md):
 *   its nearest-GC-root search (which skips the referents of the four
 *   reference kinds and adds an instance -> class edge for the first
 *   object of each class), its dominator graph (every reference, referents
 *   included, the claimed class edges, and the virtual root holding every
 *   GC root and every object the search did not reach), its "tree object"
 *   shortcut and its accumulation of retained sizes, and its retained size
 *   by class.  Paths under it follow the search's edges, so a path's length
 *   is the search depth.
 *
 * An hp_reach is built from one thread; afterwards the lazy parts
 * (dominators, retained by class) must be serialised by the caller, and
 * the read functions may run from any thread once they are built. */
#ifndef HP_REACH_H
#define HP_REACH_H

#include "hp_dominators.h"
#include "hp_graph.h"
#include "hp_heap.h"
#include "hp_paths.h"

enum { HP_REACH_HPROFKIT = 0, HP_REACH_VISUALVM = 1 };
/* Or'ed into hp_reach_build's semantics: read the heap on the calling
 * thread only (the graph build otherwise splits over two).  For a heap over
 * a mapping that may shrink, where only the caller's reads can be guarded. */
enum { HP_REACH_ONE_THREAD = 0x100 };

/* hp_ref.kind of VisualVM's instance -> class edge (HP_REACH_VISUALVM). */
#define HP_REF_CLASS (HP_REF_LOADER + 1)

typedef struct hp_reach hp_reach;

/* Builds the graph and the roots (under HP_REACH_VISUALVM, after its
 * search).  `h` must outlive the result.  Errors: HP_E_NOMEM,
 * HP_E_ABORTED (the checkpoint), HP_E_USAGE (a bad semantics). */
hp_code hp_reach_build(const hp_heap *h, int semantics, const hp_alloc *alloc, const hp_checkpoint *cp,
                       hp_reach **out, hp_error *err);
void hp_reach_free(hp_reach *r);

/* The roots in search order: vertices, and the hp_heap_root number each
 * comes from. */
size_t hp_reach_root_count(const hp_reach *r);
const uint32_t *hp_reach_roots(const hp_reach *r);
uint32_t hp_reach_root_record(const hp_reach *r, size_t i);

/* The object of the ROOT_THREAD_OBJECT record of thread `serial`, or HP_NONE. */
uint32_t hp_reach_thread_object(const hp_reach *r, uint32_t serial);

/* The reference behind edge `pos` of v's row: 1 and *out filled (kind
 * HP_REF_* or HP_REF_CLASS), or 0 when v has no such edge. */
int hp_reach_edge(const hp_reach *r, uint32_t v, uint32_t pos, hp_ref *out);

/* ---- paths ---- */

enum { HP_RULE_FIELD, HP_RULE_STATIC, HP_RULE_THREAD, HP_RULE_ROOT_CLASS };

/* A reference pattern (hprofkit.match, resolved to the dump's classes). */
typedef struct hp_reach_rule {
    int pattern;            /* HP_RULE_* */
    int edge;               /* HP_EDGE_LOW ("library") or HP_EDGE_IGNORE */
    uint32_t cls;           /* FIELD: the declaring class; STATIC: the class; ROOT_CLASS: the class
                             * (its subclasses match too) */
    uint32_t thread_serial; /* THREAD: Java-frame and JNI-local roots of this thread */
    const char *name;       /* FIELD, STATIC: the field's name (modified UTF-8) */
    size_t name_len;
} hp_reach_rule;

/* Rules compiled against one hp_reach.  Not thread-safe (it caches the
 * reference it last named); one per search.  Compiling is linear in the
 * classes, roots, objects and rules, however deep the class hierarchy. */
typedef struct hp_reach_matcher hp_reach_matcher;

/* Errors: HP_E_NOMEM, HP_E_ABORTED, HP_E_USAGE (a rule naming no class of
 * the dump). */
hp_code hp_reach_matcher_new(const hp_reach *r, const hp_reach_rule *rules, size_t nrules,
                             const hp_checkpoint *cp, hp_reach_matcher **out, hp_error *err);
void hp_reach_matcher_free(hp_reach_matcher *m);
/* The rule matching edge `pos` of v (v = HP_MARK: root number pos), or -1. */
int hp_reach_matcher_rule(hp_reach_matcher *m, uint32_t v, uint32_t pos);

/* How a search treats its targets: LEAVES, as leaves (a path to one never
 * passes another: LeakCanary's leaks); EXPLAIN, going on across ignored
 * references and weak referents for the targets left (hp_paths.h), so that
 * each gets its tier. */
enum { HP_PATHS_LEAVES = 1, HP_PATHS_EXPLAIN = 2 };

/* One breadth-first search (hp_paths.h) from the roots over the graph,
 * with the matcher's rules (NULL: none) as edge classes; it stops once
 * every target has its path (ntargets = 0: a full search).  Referents
 * are WEAK edges (hprofkit: outside the graph, HP_EDGE_OUTSIDE). */
hp_code hp_reach_paths(const hp_reach *r, hp_reach_matcher *m, const uint32_t *targets, size_t ntargets, int flags,
                       const hp_checkpoint *cp, hp_bfs *out, hp_error *err);

/* ---- routes: the paths of a search, kept for naming ---- */

/* The tree of the targets' paths (hp_bfs_tree) and, per target, its tier
 * (HP_TIER_*, or HP_ROUTE_NONE: no path even across ignored and weak
 * references) and the rule that gave it that tier (the library rule its
 * path crosses first for HP_TIER_LOW, the rule excluding the reference it
 * needs for HP_TIER_IGNORED; else -1). */
#define HP_ROUTE_NONE 4
typedef struct hp_reach_routes {
    hp_bfs_tree tree;
    uint8_t *tier;
    int32_t *rule;
} hp_reach_routes;

/* Compiles the rules, searches (hp_reach_paths with HP_PATHS_EXPLAIN and
 * `flags`) and keeps the targets' paths.  Memory while it runs: the
 * search's; kept: the tree (13 B a node) and 5 B a target. */
hp_code hp_reach_routes_find(const hp_reach *r, const hp_reach_rule *rules, size_t nrules, const uint32_t *targets,
                             size_t ntargets, int flags, const hp_checkpoint *cp, hp_reach_routes *out, hp_error *err);
void hp_reach_routes_free(hp_reach_routes *rt);

/* Names the edges of paths: which reference (field slot, array index,
 * static) edge `pos` of v's row is.  O(1) amortised: a holder of more than
 * HP_NAMER_SMALL reference slots named a second time gets a table of its
 * row (5 B a slot, kept with the namer).  Not thread-safe; reads the dump. */
#define HP_NAMER_SMALL 64
typedef struct hp_reach_namer hp_reach_namer;
hp_reach_namer *hp_reach_namer_new(const hp_reach *r); /* NULL: out of memory */
void hp_reach_namer_free(hp_reach_namer *nm);
/* The reference behind edge `pos` of v (pos = HP_EDGE_OUTSIDE: v's weak
 * referent, hprofkit): 1 and *out (kind HP_REF_* or HP_REF_CLASS, target
 * the row's); 0 when v has no such edge; -1 when memory runs out. */
int hp_reach_namer_edge(hp_reach_namer *nm, uint32_t v, uint32_t pos, hp_ref *out);
/* Bytes the namer's tables hold. */
uint64_t hp_reach_namer_bytes(const hp_reach_namer *nm);

/* ---- dominators and retained sizes ---- */

/* Computes the dominator tree and retained sizes once (later calls return
 * HP_OK at once).  lean: the dominators' lean option. */
hp_code hp_reach_dominators(hp_reach *r, int lean, const hp_checkpoint *cp, hp_error *err);

/* After hp_reach_dominators: v's immediate dominator, or HP_NONE for a
 * root (but a thread's, under hprofkit), an object only the virtual root
 * dominates, or an unreachable one. */
uint32_t hp_reach_idom(const hp_reach *r, uint32_t v);
/* Retained size (0 when unreachable; under HP_REACH_VISUALVM VisualVM's
 * value, -1 included) and count of objects retained, itself included. */
int64_t hp_reach_retained(const hp_reach *r, uint32_t v);
uint32_t hp_reach_retained_count(const hp_reach *r, uint32_t v);
/* The k largest retainers, largest first, ties by lower index. */
size_t hp_reach_top(const hp_reach *r, size_t k, uint32_t *out);

/* Retained size by class: for each class ordinal, the retained sizes of
 * its instances and arrays that no object of the same class dominates
 * (VisualVM's getRetainedSizeByClass; class objects count for none).
 * Computed once, after hp_reach_dominators; *out stays owned by r. */
hp_code hp_reach_class_retained(hp_reach *r, const hp_checkpoint *cp, const uint64_t **out, hp_error *err);
/* The objects those instances retain, by class ordinal (the sum of their
 * retained counts); NULL until hp_reach_class_retained has succeeded. */
const uint64_t *hp_reach_class_retained_counts(const hp_reach *r);

#endif
