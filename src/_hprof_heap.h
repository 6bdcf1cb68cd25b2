/* Shared by the heap glue files: the Heap object, the handles on it, and
 * the functions the files offer each other, bottom layer first.  Calls run
 * one way (tests/test_layout.py checks them; docs/architecture.md):
 *
 *   the types: _hprof_heap.c (Heap), _hprof_heap_object.c (HeapObject, HeapClass)
 *     -> _hprof_values.c -> _hprof_heap_pixels.c -> _hprof_heap_tables.c
 *     -> _hprof_tree.c -> _hprof_reach.c -> _hprof_routes.c -> _hprof_heap_iter.c
 *     -> _hprof_heap_base.c -> _hprof_heap_read.c -> _hprof_glue.c
 *
 * each file calling only files to its right (the two type files never call
 * each other).  What is written in Python (paths, leaks, tables, HTML) is a
 * method of the package's subclasses (hprofkit/_heap.py) calling the
 * private methods here (_paths, _columns). */
#ifndef HPROF_HEAP_GLUE_H
#define HPROF_HEAP_GLUE_H

#include "_hprof.h"

#include <pythread.h>

#include "core/hp_coll.h"
#include "core/hp_heap.h"
#include "core/hp_reach.h"
#include "core/hp_reach_live.h"

/* A heap index over a buffer export (the dump's mmap).  Handles hold a
 * strong reference to it; close() frees the index at once, or, while a
 * call runs without the GIL or a primitive array is exported, when the
 * last of those ends. */
typedef struct HeapIndex_ {
    PyObject_HEAD
    hp_heap *index;           /* NULL once closed */
    Py_buffer view;
    int has_view;
    int closing;
    Py_ssize_t busy;          /* calls running without the GIL, exported arrays */
    Py_ssize_t running;       /* of those, the calls running without the GIL (gone in a forked child) */
    PyThread_type_lock lock;  /* serialises the lazy builds */
    long long dangling;       /* -1 until counted */
    PyObject *names;          /* list of Java class names by ordinal (None until asked) */
    PyObject *by_name;        /* dict: name -> list of ordinals */
    PyObject *classes;        /* list of HeapClass handles by ordinal */
    PyObject *field_maps;     /* list of per-class field maps by ordinal (None until asked) */
    PyObject *slot_names;     /* list of per-class tuples of reference-field names (None until asked) */
    int semantics;            /* HP_REACH_*: the graph behind paths and retained sizes */
    hp_reach *reach;          /* built on first use, under the lock (_hprof_reach.c) */
    int reach_level;          /* how far `reach` is computed (written under the lock) */
    hp_coll *coll;            /* collection layouts, resolved on first use under the lock (_hprof_values.c) */
    hprof_state *st;
    PyObject *module;
    PyObject *mapping;        /* the hprofkit.Mapping whose clear names the index has, or NULL */
    hp_heap_renames renames;  /* what it renamed (_hprof_heap_names.c) */
    struct HeapIndex_ *live_prev, *live_next; /* every heap of the process, for a forked child */
} HeapIndex;

/* A handle: the heap and an object's index.  HeapClass adds the ordinal. */
typedef struct {
    PyObject_HEAD
    HeapIndex *heap;
    uint32_t index;
    uint32_t ord;             /* HeapClass: the class; else HP_NONE */
} HeapHandle;

/* ---- reads of the mapping (_hprof_heap_read.c) ----
 *
 * Every read of the dump's bytes through the index runs under the SIGBUS
 * guard of the heap's buffer: a C call copies out under the guard, Python
 * objects are built from the copy afterwards.  Each function below returns
 * -1 (or NULL) with FileChangedError set when the file shrank. */

/* Runs fn(ctx) under the guard of the heap's buffer (with the GIL held). */
int heap_guard(HeapIndex *heap, void (*fn)(void *ctx), void *ctx);

/* Bytes of the mapping copied out: a guarded call points data/len at them
 * (data NULL for none) and calls heap_copy_small, which copies them into
 * `small` when they fit; heap_copy_finish copies larger ones into a raw
 * allocation, under a second guard; heap_copy_free frees it. */
typedef struct heap_copy {
    const uint8_t *data;
    size_t len;
    uint8_t *big;
    uint8_t small[200];
} heap_copy;
void heap_copy_small(heap_copy *c);
int heap_copy_finish(HeapIndex *heap, heap_copy *c);
void heap_copy_free(heap_copy *c);

/* hp_heap_object, hp_heap_shallow_size and hp_heap_class under the guard.
 * Pointers they return still point into the mapping (info->name is
 * cleared: with `name`, the class's name is copied there). */
int heap_describe(HeapIndex *heap, uint32_t index, hp_object *out);
int heap_shallow_size(HeapIndex *heap, uint32_t index, uint64_t *size);
int heap_class_info(HeapIndex *heap, uint32_t ord, hp_class_info *info, heap_copy *name);

/* A field and a copy of its value (none: beyond the instance's data, or not asked). */
typedef struct heap_field {
    hp_field f;
    int has_value;
    uint8_t value[8];
} heap_field;
enum { FIELDS_ALL, FIELDS_STATIC, FIELDS_DECLARED };
/* The fields of class `ord`: FIELDS_ALL its own then its superclasses'
 * (the order of instance data), with the values of instance `index` unless
 * that is HP_NONE; FIELDS_STATIC its statics and their values;
 * FIELDS_DECLARED its own.  *items: a PyMem_Raw array of *n, the caller's
 * to free. */
int heap_fields(HeapIndex *heap, int what, uint32_t ord, uint32_t index, heap_field **items, size_t *n);

/* The outbound references of an object (at most max_refs of them, only
 * those to object `only` unless that is HP_NONE) and the fields its
 * reference slots are (named by heap_field_name): an instance's reference
 * fields in slot order, a class object's statics.  Free with heap_refs_free. */
typedef struct heap_refs {
    hp_ref *refs;
    size_t n, cap;
    hp_field *slots;
    size_t n_slots, cap_slots;
} heap_refs;
int heap_refs_of(HeapIndex *heap, uint32_t index, size_t max_refs, uint32_t only, heap_refs *out);
void heap_refs_free(heap_refs *r);
/* The object's outbound non-null references, counted; -1 with an exception. */
int heap_ref_count(HeapIndex *heap, uint32_t index, uint64_t *count);

/* One value of object `index`, copied out: its instance field `field`;
 * else, with `name`, the static of that name of class `ord`; else its
 * element `element` (negative: from the end).  `found` is 0 when there is
 * none (beyond the data, out of range, no such static). */
typedef struct heap_value_read {
    const hp_heap *h;        /* set by heap_read_value */
    uint32_t index;          /* set by heap_read_value */
    const hp_field *field;
    const char *name;
    size_t name_len;
    uint32_t ord;
    Py_ssize_t element;
    int type;                /* out: the value's type */
    int found;               /* out */
    uint8_t value[8];        /* out */
} heap_value_read;
int heap_read_value(HeapIndex *heap, uint32_t index, heap_value_read *call);

/* The text of String `index` copied into *text, its encoding (HP_TEXT_*)
 * in *encoding: as hp_heap_string, 1, 0 when not a String, -1 when its
 * characters are not in the dump; -2 with an exception set. */
int heap_string_text(HeapIndex *heap, uint32_t index, int *encoding, heap_copy *text);
/* Array `index` described into *obj and its elements copied into *data. */
int heap_elements(HeapIndex *heap, uint32_t index, hp_object *obj, heap_copy *data);
/* A PyMem array of the class count: 1 at `ord` (with_self) and at every
 * class below it; NULL with an exception set. */
uint8_t *heap_descendants(HeapIndex *heap, uint32_t ord, int with_self);

/* STACK_TRACE `serial` read under the guard: found, its thread serial and
 * frame count (hp_heap_trace). */
typedef struct heap_trace_read {
    uint32_t serial;
    int found;
    uint32_t thread_serial, frames;
} heap_trace_read;
int heap_read_trace(HeapIndex *heap, heap_trace_read *call);

/* A STRING record's text, decoded with replacement, or None (a new reference). */
PyObject *heap_utf8(HeapIndex *heap, uint64_t sid);
/* The name of field f, or the placeholder of a name the dump lacks
 * (hp_heap_field_name): never None (a new reference). */
PyObject *heap_field_name(HeapIndex *heap, const hp_field *f);
/* The name of Android heap `number` ("app", "zygote"...), or None (a new reference). */
PyObject *heap_android_name(HeapIndex *heap, int number);

/* ---- shared helpers (_hprof_heap_base.c) ---- */

/* The index, or NULL with ValueError set when the heap is closed. */
const hp_heap *heap_index(HeapIndex *heap);
/* Frees the index and the buffer now (close(), or the last user leaving). */
void heap_release(HeapIndex *heap);
/* Enters / leaves a stretch that may run without the GIL. */
static inline void heap_enter(HeapIndex *heap) { heap->busy++; }
void heap_leave(HeapIndex *heap);
/* Every heap of the process is listed from creation to deallocation, so
 * that a child forked while other threads were inside a heap's
 * computations gets heaps that work: heap_after_fork (registered with
 * os.register_at_fork) gives each a lock no thread holds, forgets the calls
 * of the threads the child lacks, and drops the reachability a thread was
 * computing (computed again on demand). */
void heap_live_add(HeapIndex *heap);
void heap_live_remove(HeapIndex *heap);
PyObject *heap_after_fork(PyObject *module, PyObject *unused);
/* Ctrl-C between slices of a core call running without the GIL. */
int heap_interrupted(void *ctx);
/* Runs fn(ctx) over the heap's buffer with the GIL released, under the
 * SIGBUS guard (and the heap's lock when `locked`); 0, or -1 when the file
 * shrank under it (FileChangedError set). */
int heap_walk(HeapIndex *heap, void (*fn)(void *ctx), void *ctx, int locked);
/* A core call on the heap: fn(ctx) as heap_walk runs it (locked), between
 * heap_enter and heap_leave; fn sets *rc and *err.  0, or -1 with an
 * exception set (the core's error, the file shrinking, the heap closed). */
int heap_run(HeapIndex *heap, void (*fn)(void *ctx), void *ctx, const hp_code *rc, const hp_error *err);

/* A new handle for object `index` (a HeapClass for class objects), of the
 * class the package registered (hprofkit.HeapObject / hprofkit.HeapClass). */
PyObject *heap_handle(HeapIndex *heap, uint32_t index);
/* The handle of object `id`, or None for 0 or an id absent from the dump. */
PyObject *heap_handle_of_id(HeapIndex *heap, uint64_t id);
/* The HeapClass of ordinal `ord`, or None for HP_NONE (a new reference). */
PyObject *heap_class_handle(HeapIndex *heap, uint32_t ord);
/* The Java names of every class by ordinal (a list, borrowed; made once). */
PyObject *heap_class_names(HeapIndex *heap);
/* The Java name of class `ord` ("java.lang.String", "int[]"), borrowed. */
PyObject *heap_class_name(HeapIndex *heap, uint32_t ord);
/* A field value as Python (bool, int, float, 1-char str, handle or None)
 * from a copy of its bytes, never from the mapping. */
PyObject *heap_value(HeapIndex *heap, int type, const uint8_t *copy);

/* The references of object `index` (as heap_refs_of) and its slot names
 * in *names; 0, or -1 with an exception set (nothing to free). */
int heap_refs_named(HeapIndex *heap, uint32_t index, size_t max_refs, uint32_t only, heap_refs *refs,
                    PyObject **names);
/* The name of reference field `slot` of an instance of class `ord`, from
 * a per-class tuple of slot names made once (from the superclass's). */
PyObject *heap_field_slot_name(HeapIndex *heap, uint32_t ord, uint32_t slot);
/* The name of one reference, given the slot names of its source. */
PyObject *heap_slot_name(const hp_ref *r, PyObject *names);
/* The name of reference `ref` of object `source`: the field or static's
 * name, "[i]" or "<loader>" (as HeapObject.references() names it). */
PyObject *heap_ref_name(HeapIndex *heap, uint32_t source, const hp_ref *ref);

/* Builds the referrer index on first use (without the GIL, under the
 * heap's lock); 0, or -1 with an exception set. */
int heap_ensure_referrers(HeapIndex *heap);
/* A GC root kind's name without its ROOT_ prefix ("JNI_GLOBAL"). */
const char *heap_root_kind_name(int tag);
PyObject *heap_root_kind(int tag);
/* The StackFrame of a JAVA_FRAME / JNI_LOCAL root, or None. */
PyObject *heap_stack_frame(HeapIndex *heap, const hp_root *r);
/* The StackFrame at `depth` of STACK_TRACE `serial` (its fields None when
 * the dump lacks the frame). */
PyObject *heap_trace_frame(HeapIndex *heap, uint32_t serial, uint32_t depth);

/* ---- clear names through a mapping (_hprof_heap_names.c) ---- */

/* Gives the new heap the clear names of `mapping` (a hprofkit.Mapping);
 * 0, or -1 with an exception set. */
int heap_apply_mapping(HeapIndex *heap, PyObject *mapping);
/* The Java name class `ord` has in the dump (new reference). */
PyObject *heap_class_dump_name(HeapIndex *heap, uint32_t ord);
PyObject *heap_get_mapping(HeapIndex *heap, void *closure);
PyObject *heap_renames(HeapIndex *heap, PyObject *unused);
PyObject *heap_dump_frames(HeapIndex *heap, PyObject *unused);
PyObject *heap_rename_frames(HeapIndex *heap, PyObject *frames);
PyObject *heap_dump_fields(HeapIndex *heap, PyObject *ord);
PyObject *heap_rename_fields(HeapIndex *heap, PyObject *fields);
#define HEAP_NAMES_METHODS \
    { "_renames", (PyCFunction)heap_renames, METH_NOARGS, \
      "_renames($self, /)\n--\n\n(classes listed, classes renamed, fields renamed, class, field): what the\n" \
      "mapping did, and the first field it misses in a class whose fields it lists (the dump's names),\n" \
      "or None, None." }, \
    { "_frames", (PyCFunction)heap_dump_frames, METH_NOARGS, \
      "_frames($self, /)\n--\n\nEvery STACK_FRAME as the dump has it: (frame id, class (the dump's name) or\n" \
      "None, method, signature, source file, line)." }, \
    { "_rename_frames", (PyCFunction)heap_rename_frames, METH_O, \
      "_rename_frames($self, frames, /)\n--\n\nGives STACK_FRAMEs clear names: (frame id, method, signature,\n" \
      "source, line) each, None keeping the dump's; while no other call uses the heap (hprofkit.Heap)." }, \
    { "_dump_fields", (PyCFunction)heap_dump_fields, METH_O, \
      "_dump_fields($self, ordinal, /)\n--\n\nThe statics and own instance fields of class number `ordinal` as\n" \
      "the dump names them: ([(name, type code)], [(name, type code)])." }, \
    { "_rename_fields", (PyCFunction)heap_rename_fields, METH_O, \
      "_rename_fields($self, fields, /)\n--\n\nGives fields clear names: (class ordinal, k, name) each, k counting\n" \
      "the class's statics then its own instance fields; while no other call uses the heap (hprofkit.Heap)." },
#define HEAP_NAMES_GETSET \
    { "mapping", (getter)heap_get_mapping, NULL, \
      "The hprofkit.Mapping whose clear names the heap shows, or None.", NULL },

/* ---- the paths of a search (_hprof_routes.c) ---- */

/* A Routes object taking `rt` (freed, even on failure). */
PyObject *routes_new(HeapIndex *heap, hp_reach_routes *rt);

/* ---- iterators (_hprof_heap_iter.c) ---- */

/* An iterator over the objects of class `ord`; with HP_NONE, over those of
 * the classes marked in `classes` (a PyMem array it takes), or over every
 * object when that is NULL. */
PyObject *heap_iter_new(HeapIndex *heap, uint32_t ord, uint8_t *classes);

/* ---- reachability (_hprof_reach.c) ---- */

/* How far the heap's reachability is computed (HeapIndex.reach_level). */
enum { REACH_GRAPH = 1, REACH_DOMINATORS, REACH_CLASSES };
/* The heap's hp_reach computed up to `level` on first use, without the GIL
 * and under the lock; NULL with an exception set. */
hp_reach *heap_reach(HeapIndex *heap, int level);
/* One search from the GC roots reaching everything reachable (hp_reach_paths
 * without rules or targets), without the GIL; 0, or -1 with an exception
 * set.  The caller frees `out` with hp_bfs_free once the search ran (its
 * alloc is set). */
int heap_full_search(HeapIndex *heap, hp_bfs *out);
/* The heap's live set (core/hp_reach_live.h), marked on first use without
 * the GIL; NULL with an exception set. */
const uint64_t *heap_live(HeapIndex *heap);
/* Which objects an analysis counts, from its name: 'all', 'live' or
 * 'garbage'; 0, or -1 with ValueError. */
int heap_members_of(PyObject *name, hp_members *out);
/* The objects `name` ('all', 'live', 'garbage') counts, as a bit per
 * object for the core's `keep` arguments: NULL for 'all' (*ok 1), else
 * a PyMem_Raw copy the caller frees; *ok 0 with an exception set. */
uint64_t *heap_keep(HeapIndex *heap, PyObject *name, int *ok);
/* The index of a HeapObject / HeapClass of this heap; -1 with TypeError
 * (not a handle) or ValueError (another heap's). */
int heap_object_index(HeapIndex *heap, PyObject *obj, uint32_t *out);
/* The indices of a list of handles, as heap_object_index: a PyMem array of
 * *count; NULL with an exception set. */
uint32_t *heap_object_indices(HeapIndex *heap, PyObject *list, Py_ssize_t *count);
/* Reference rules from heap._paths's list of tuples (pattern, edge, class
 * ordinal, thread serial, name bytes or None): a PyMem array whose names
 * stay owned by the list; NULL with an exception set. */
hp_reach_rule *reach_parse_rules(PyObject *spec, Py_ssize_t *count);
PyObject *heap_semantics_name(HeapIndex *heap);
int heap_semantics_of(PyObject *name);
PyObject *reach_retained_size(HeapIndex *heap, PyObject *obj);
PyObject *reach_retained_count(HeapIndex *heap, PyObject *obj);
PyObject *reach_dominator(HeapIndex *heap, PyObject *obj);
PyObject *reach_top_retainers(HeapIndex *heap, PyObject *args, PyObject *kwargs);
PyObject *reach_routes(HeapIndex *heap, PyObject *args);
PyObject *reach_compute(HeapIndex *heap, PyObject *unused);
/* The Heap's methods in C; path_to_root, paths_to_root and find_leaks are
 * hprofkit.Heap's, in Python, over _paths. */
#define HEAP_REACH_METHODS \
    { "retained_size", (PyCFunction)reach_retained_size, METH_O, \
      "retained_size($self, obj, /)\n--\n\nBytes that would be freed with obj: the shallow sizes of everything it\n" \
      "dominates, itself included (0 if unreachable).  The first call computes the dominator tree." }, \
    { "retained_count", (PyCFunction)reach_retained_count, METH_O, \
      "retained_count($self, obj, /)\n--\n\nObjects obj dominates, itself included (0 if unreachable)." }, \
    { "dominator", (PyCFunction)reach_dominator, METH_O, \
      "dominator($self, obj, /)\n--\n\nobj's immediate dominator, or None for a GC root, an object no single\n" \
      "object dominates, or an unreachable one." }, \
    { "top_retainers", (PyCFunction)(void (*)(void))reach_top_retainers, METH_VARARGS | METH_KEYWORDS, \
      "top_retainers($self, /, n=20)\n--\n\nThe n objects of largest retained size as (obj, retained_size),\n" \
      "largest first, ties by id." }, \
    { "compute_retained", (PyCFunction)reach_compute, METH_NOARGS, \
      "compute_retained($self, /)\n--\n\nComputes the dominator tree now (otherwise on first use)." }, \
    { "_routes", (PyCFunction)reach_routes, METH_VARARGS, \
      "_routes($self, objs, rules, leaves=False, /)\n--\n\nThe shortest paths behind paths_to_root, as a Routes\n" \
      "object (internal)." },
/* obj.retained_size (count = 0) or obj.retained_count (count = 1). */
PyObject *reach_object_retained(HeapHandle *o, int count);
/* cls.instances_retained_size (count = 0) or cls.instances_retained_count (count = 1). */
PyObject *reach_class_retained(HeapHandle *c, int count);

/* ---- values (_hprof_values.c): collections, strings, arrays, threads, sites ---- */

PyObject *values_walk(HeapHandle *o, PyObject *entries);
PyObject *values_measure(HeapHandle *o, PyObject *unused);
PyObject *values_corrupt(HeapHandle *o, PyObject *message);
#define OBJ_VALUES_METHODS \
    { "_walk", (PyCFunction)values_walk, METH_O, \
      "_walk($self, entries, /)\n--\n\nA collection's entries or elements, raw (internal: entries(), elements())." }, \
    { "_measure", (PyCFunction)values_measure, METH_NOARGS, \
      "_measure($self, /)\n--\n\nA collection's shape, size, capacity, wasted bytes and inner collection\n" \
      "(internal: fill_ratio)." }, \
    { "_corrupt", (PyCFunction)values_corrupt, METH_O, \
      "_corrupt($self, message, /)\n--\n\nRaises CorruptError(message) at this object's sub-record (internal:\n" \
      "the checks of value)." },

PyObject *values_collection_waste(HeapIndex *heap, PyObject *members);
PyObject *values_duplicate_strings(HeapIndex *heap, PyObject *args);
PyObject *values_large_arrays(HeapIndex *heap, PyObject *args);
PyObject *values_waste(HeapIndex *heap, PyObject *args);
PyObject *values_class_histogram(HeapIndex *heap, PyObject *args);
PyObject *values_threads(HeapIndex *heap, PyObject *unused);
PyObject *values_trace(HeapIndex *heap, PyObject *serial);
PyObject *values_site_counts(HeapIndex *heap, PyObject *unused);
PyObject *values_alloc_sites(HeapIndex *heap, PyObject *unused);
#define HEAP_VALUES_METHODS \
    { "_collection_waste", (PyCFunction)values_collection_waste, METH_O, \
      "_collection_waste($self, members, /)\n--\n\nPer collection class, raw (internal: collection_waste()).\n" \
      "members: 'all', 'live' or 'garbage'." }, \
    { "_duplicate_strings", (PyCFunction)values_duplicate_strings, METH_VARARGS, \
      "_duplicate_strings($self, min_count, members, /)\n--\n\nRaw groups (internal: duplicate_strings())." }, \
    { "_large_arrays", (PyCFunction)values_large_arrays, METH_VARARGS, \
      "_large_arrays($self, min_bytes, members, /)\n--\n\nRaw rows in id order (internal: large_arrays())." }, \
    { "_waste", (PyCFunction)values_waste, METH_VARARGS, \
      "_waste($self, members, long_string_chars, /)\n--\n\nThe waste kinds, raw (internal: waste())." }, \
    { "_class_histogram", (PyCFunction)values_class_histogram, METH_VARARGS, \
      "_class_histogram($self, members, slots, /)\n--\n\nInstances and shallow bytes per class ordinal and heap slot,\n" \
      "as native uint64 (internal: class_histogram())." }, \
    { "_threads", (PyCFunction)values_threads, METH_NOARGS, \
      "_threads($self, /)\n--\n\nRaw thread rows (internal: threads())." }, \
    { "_trace", (PyCFunction)values_trace, METH_O, \
      "_trace($self, serial, /)\n--\n\nA STACK_TRACE's thread serial and frames, or None (internal)." }, \
    { "_site_counts", (PyCFunction)values_site_counts, METH_NOARGS, \
      "_site_counts($self, /)\n--\n\nObjects and bytes by allocation trace (internal: allocation_sites())." }, \
    { "_alloc_sites", (PyCFunction)values_alloc_sites, METH_NOARGS, \
      "_alloc_sites($self, /)\n--\n\nThe sites of the ALLOC_SITES records (internal: alloc_sites())." },

/* ---- the dominator tree (_hprof_tree.c) ---- */

PyObject *tree_dominator_roots(HeapIndex *heap, PyObject *args, PyObject *kwargs);
PyObject *tree_dominated(HeapHandle *o, PyObject *args, PyObject *kwargs);
PyObject *tree_parent(HeapIndex *heap, PyObject *obj);
PyObject *tree_retained_by(HeapIndex *heap, PyObject *args);
PyObject *tree_heap_names(HeapIndex *heap, PyObject *unused);
PyObject *tree_merged_paths(HeapIndex *heap, PyObject *args);
/* The Heap's; hprofkit.Heap's dominator_of, retained_by and merged_paths
 * (Python) call the private ones. */
#define HEAP_TREE_METHODS \
    { "dominator_roots", (PyCFunction)(void (*)(void))tree_dominator_roots, METH_VARARGS | METH_KEYWORDS, \
      "dominator_roots($self, /, n=None)\n--\n\nThe objects no other object dominates (the children of the\n" \
      "dominator tree's virtual root: GC roots, and what several roots hold), largest retained first,\n" \
      "ties by id; the n first (None: all).  The first call builds the tree's rows (8 B an object)." }, \
    { "_tree_parent", (PyCFunction)tree_parent, METH_O, \
      "_tree_parent($self, obj, /)\n--\n\nobj's immediate dominator, True for the virtual root, False when\n" \
      "unreachable (internal)." }, \
    { "_retained_by", (PyCFunction)tree_retained_by, METH_VARARGS, \
      "_retained_by($self, how, table, ngroups, members, /)\n--\n\nGroup totals by the union rule (internal)." }, \
    { "_heap_names", (PyCFunction)tree_heap_names, METH_NOARGS, \
      "_heap_names($self, /)\n--\n\nThe names of Android heaps 0..255 (internal)." }, \
    { "_merged_paths", (PyCFunction)tree_merged_paths, METH_VARARGS, \
      "_merged_paths($self, objs, rules, /)\n--\n\nThe raw nodes behind merged_paths (internal)." },
/* ---- the class tree (_hprof_classtree.c) ---- */

PyObject *classtree_nodes(HeapIndex *heap, PyObject *args);
PyObject *classtree_handles(HeapIndex *heap, PyObject *arg);
PyObject *classtree_members(HeapIndex *heap, PyObject *args);
/* hprofkit.Heap.class_tree (Python) calls them. */
#define HEAP_CLASSTREE_METHODS \
    { "_class_tree", (PyCFunction)classtree_nodes, METH_VARARGS, \
      "_class_tree($self, top, /)\n--\n\nThe class tree's nodes as columns (internal: class_tree())." }, \
    { "_handles", (PyCFunction)classtree_handles, METH_O, \
      "_handles($self, indices, /)\n--\n\nThe objects of native uint32 indices (internal)." }, \
    { "_class_tree_members", (PyCFunction)classtree_members, METH_VARARGS, \
      "_class_tree_members($self, parents, keys, node, n, /)\n--\n\nThe objects of a class tree node, " \
      "largest retained first (internal)." },
/* HeapObject's. */
#define OBJECT_TREE_METHODS \
    { "dominated", (PyCFunction)(void (*)(void))tree_dominated, METH_VARARGS | METH_KEYWORDS, \
      "dominated($self, /, n=None)\n--\n\nThe objects this one immediately dominates (its children in the\n" \
      "dominator tree, MAT's tree one level down), largest retained first, ties by id; the n first\n" \
      "(None: all)." },

/* ---- tables (_hprof_heap_tables.c) ---- */

/* heap._columns(tables, max_chars): the column buffers behind hprofkit.Heap.tables(). */
PyObject *heap_columns(HeapIndex *heap, PyObject *args, PyObject *kwargs);
#define HEAP_TABLE_METHODS \
    { "_columns", (PyCFunction)(void (*)(void))heap_columns, METH_VARARGS | METH_KEYWORDS, \
      "_columns($self, tables, /, max_chars=1024)\n--\n\nThe column buffers of heap.tables() (internal)." },

/* ---- a primitive array's bytes and bitmap pixels (_hprof_heap_pixels.c) ---- */

PyObject *pixels_payload(HeapHandle *o, PyObject *args);
PyObject *pixels_png_rows(HeapHandle *o, PyObject *args, PyObject *kwargs);
/* HeapObject's private methods behind hprofkit/_bitmaps.py. */
#define HEAP_PIXEL_METHODS \
    { "_payload", (PyCFunction)pixels_payload, METH_VARARGS, \
      "_payload($self, offset, length, /)\n--\n\nBytes [offset, offset + length) of a primitive array's\n" \
      "payload as the file holds them, copied under the guard (internal)." }, \
    { "_png_rows", (PyCFunction)(void (*)(void))pixels_png_rows, METH_VARARGS | METH_KEYWORDS, \
      "_png_rows($self, config, width, rows, /, *, offset=0, stride=0, step=1, unpremultiply=False)\n--\n\n" \
      "PNG scanlines (RGBA) of bitmap pixels in a byte array's payload (internal; core/hp_pixels.h)." },

#endif
