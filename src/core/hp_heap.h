/* The heap index: an object graph over a mapped HPROF dump.
 *
 * hp_heap_build reads one heap dump of a whole file held in memory (an mmap)
 * in two sequential passes over its sub-records and keeps compact arrays:
 *  - every object (instances, arrays, class objects) gets an *index*
 *    0..n-1 in id order; per object only its id key (4 bytes, 8 when the ids
 *    span more than 2^32 steps), the file offset of its sub-record (4 bytes,
 *    5 for files of 4 GiB and more), a class ordinal from which the kind
 *    follows (2 bytes, 4 with more than 32,762 classes) and, for Android
 *    dumps, its heap (1 byte): about 10 bytes an object;
 *  - the classes (ordinal 0..C-1, in id order) with their resolved
 *    instance-field layouts and reference-field offsets;
 *  - GC roots, the STRING, LOAD_CLASS, STACK_TRACE and STACK_FRAME tables.
 * Object bodies are never copied: every value is read from the mapping,
 * which must stay mapped (and unchanged) while the index lives.
 *
 * Reads are bounded everywhere: a dump that lies (cyclic superclasses, field
 * layouts longer than the instance data, references to absent objects,
 * duplicate ids) gives an error at build time or a documented tolerance:
 *  - duplicate object ids: the first in file order is kept (duplicate_count);
 *  - references to ids absent from the dump are kept as missing targets;
 *  - fields that lie beyond an instance's data read as absent;
 *  - an instance or object array whose class is absent keeps no class.
 *
 * An index is immutable once built, except for the lazy referrer index
 * (hp_heap_build_referrers), which its caller must serialise. */
#ifndef HP_HEAP_H
#define HP_HEAP_H

#include "hp_common.h"
#include "hp_layout.h"

#define HP_NONE 0xFFFFFFFFu

typedef enum hp_kind { HP_KIND_INSTANCE = 0, HP_KIND_CLASS, HP_KIND_OBJ_ARRAY, HP_KIND_PRIM_ARRAY } hp_kind;

/* Size models (hp_size.h): VisualVM's (compressed oops guessed on 64-bit
 * dumps), every reference at id size, or the JVM's layout as the dump's
 * addresses show it (hp_layout.h; VisualVM's when they show none). */
enum { HP_SIZES_VISUALVM = 0, HP_SIZES_UNCOMPRESSED = 1, HP_SIZES_JVM = 2 };

typedef struct hp_heap hp_heap;

typedef struct hp_heap_options {
    const hp_alloc *alloc;  /* NULL for libc */
    uint32_t heap_dump;     /* which heap dump of the file (0 = the first, as VisualVM) */
    int size_model;         /* HP_SIZES_* */
    /* Called every few megabytes of input; a non-zero return stops the build
     * with HP_E_USAGE ("interrupted").  NULL for none. */
    int (*interrupt)(void *ctx);
    void *interrupt_ctx;
    /* Where the build is, for a progress display: when not NULL, the byte
     * offset the walk over the file's records has reached is stored here
     * before each interrupt call (it only grows, and stays <= len). */
    uint64_t *position;
} hp_heap_options;

/* Builds the index of buf[0..len) (a whole HPROF file).  On success *out
 * owns the index (free with hp_heap_free); else err says why.  A file
 * without the requested heap dump fails with HP_E_USAGE. */
hp_code hp_heap_build(const uint8_t *buf, uint64_t len, const hp_heap_options *opt, hp_heap **out,
                      hp_error *err);
void hp_heap_free(hp_heap *h);

/* ---- the dump ---- */
int hp_heap_id_size(const hp_heap *h);
uint32_t hp_heap_dump_count(const hp_heap *h);  /* heap dumps in the file */
uint32_t hp_heap_object_count(const hp_heap *h);
uint32_t hp_heap_class_count(const hp_heap *h);
uint64_t hp_heap_duplicate_count(const hp_heap *h);
const hp_size_model *hp_heap_size_model(const hp_heap *h);
/* The size model asked for (HP_SIZES_*), and under HP_SIZES_JVM what the
 * layout rests on (hp_layout.h; zeros under the others and for raw sizes). */
int hp_heap_size_model_kind(const hp_heap *h);
const hp_layout_evidence *hp_heap_layout_evidence(const hp_heap *h);
/* Bytes of anonymous memory the index holds (arrays, tables). */
uint64_t hp_heap_memory(const hp_heap *h);

/* ---- objects ---- */

/* The index of the object `id`, or HP_NONE. */
uint32_t hp_heap_find(const hp_heap *h, uint64_t id);

typedef struct hp_object {
    uint64_t id;
    uint64_t offset;       /* of its sub-record in the file */
    hp_kind kind;
    uint32_t class_ord;    /* its class (java.lang.Class for class objects), or HP_NONE */
    uint32_t self_ord;     /* class objects: the class it is; else HP_NONE */
    int elem_type;         /* arrays: HP_T_OBJECT or the primitive type; else 0 */
    uint32_t length;       /* arrays: elements */
    const uint8_t *data;   /* instances: field bytes; arrays: elements; class objects: NULL */
    uint64_t data_len;     /* bytes at data */
    int heap;              /* Android heap (index for hp_heap_heap_name), -1 if none */
} hp_object;

/* Describes object `index` (< object count). */
void hp_heap_object(const hp_heap *h, uint32_t index, hp_object *out);
/* What a row of the objects table holds of object `index`, from one look
 * at its index entry and, for arrays, one read of its record (the single
 * calls below each look again): as hp_heap_object_kind, _class,
 * _instance_class (counted_ord), _shallow_size and _heap; arrays' length,
 * and a primitive array's elements as hp_object.data/data_len. */
typedef struct hp_object_row {
    uint64_t id, shallow_size;
    hp_kind kind;
    uint32_t class_ord, counted_ord, length;
    int heap;
    const uint8_t *elements;
    uint64_t elements_len;
} hp_object_row;
void hp_heap_object_row(const hp_heap *h, uint32_t index, hp_object_row *out);
/* Hints that object `index` will be described soon: a walk that knows its
 * next objects asks for their index entries a few steps ahead, then for
 * their records (which needs the entries), so the memory reads overlap. */
void hp_heap_prefetch_entry(const hp_heap *h, uint32_t index);
void hp_heap_prefetch_record(const hp_heap *h, uint32_t index);
uint64_t hp_heap_object_id(const hp_heap *h, uint32_t index);
hp_kind hp_heap_object_kind(const hp_heap *h, uint32_t index);
/* The class ordinal of object `index` as hp_object.class_ord, cheaply. */
uint32_t hp_heap_object_class(const hp_heap *h, uint32_t index);
/* The class whose instance count object `index` adds to (as VisualVM
 * counts: class objects count for no class), or HP_NONE. */
uint32_t hp_heap_instance_class(const hp_heap *h, uint32_t index);
uint64_t hp_heap_shallow_size(const hp_heap *h, uint32_t index);
/* hp_object.heap of object `index`, cheaply. */
int hp_heap_object_heap(const hp_heap *h, uint32_t index);

/* Name of Android heap `heap` ("app", "zygote", "image"...) as UTF-8 bytes
 * in the mapping; 0 when unknown. */
int hp_heap_heap_name(const hp_heap *h, int heap, const uint8_t **name, size_t *len);

/* ---- classes ---- */

typedef struct hp_class_info {
    uint64_t id, super_id, loader_id;
    uint32_t super_ord;      /* HP_NONE for none (or a super absent from the dump) */
    uint32_t object_index;   /* the class object's index */
    const uint8_t *name;     /* as written (JVM "java/lang/String" or ART "java.lang.String"); NULL if unknown */
    size_t name_len;
    uint32_t raw_size;       /* CLASS_DUMP instance size */
    uint32_t data_size;      /* bytes of instance data its layout reads (own + inherited fields) */
    uint64_t instance_size;  /* shallow size of an instance under the model (0 for array classes) */
    uint64_t instances;      /* objects whose class this is */
    uint64_t offset;         /* of its CLASS_DUMP */
    uint16_t n_fields, n_statics;
    uint32_t n_refs;         /* reference slots of its layout (own and inherited reference fields) */
    int elem_type;           /* array classes: HP_T_OBJECT or the primitive type (by name); else 0 */
} hp_class_info;

void hp_heap_class(const hp_heap *h, uint32_t ord, hp_class_info *out);
/* The class of the given id, or HP_NONE. */
uint32_t hp_heap_find_class_id(const hp_heap *h, uint64_t class_id);
/* The first class whose Java name ("java.lang.String", "byte[]", "a.B$C",
 * or the placeholder of a class without one, hp_unnamed) equals `name`,
 * from `start` on; HP_NONE if none. */
uint32_t hp_heap_find_class_name(const hp_heap *h, const char *name, size_t len, uint32_t start);
/* java.lang.Class, or HP_NONE. */
uint32_t hp_heap_class_class(const hp_heap *h);

/* A field: an instance field (with the offset of its value in the instance
 * data) or a static (with its value in the mapping). */
typedef struct hp_field {
    uint64_t name_sid;
    uint64_t dump_name_sid; /* its name in the dump, before a mapping renamed it */
    int type;               /* HP_T_* */
    int is_static;
    uint32_t declaring;     /* class ordinal */
    uint32_t offset;        /* instance fields: offset of the value in the instance data */
    uint32_t number;        /* its place among the declaring class's own instance fields, or statics */
    const uint8_t *value;   /* statics: the value in the mapping; instance fields via hp_field_value */
} hp_field;

/* The name of field f (from the iterators below): 1 and its STRING's text
 * (in the mapping); 0 when the dump lacks that STRING, and the placeholder
 * every reader shows for it (hp_unnamed), written into buf (HP_UNNAMED_MAX
 * bytes).  Look-ups by name find a field by its placeholder too. */
int hp_heap_field_name(const hp_heap *h, const hp_field *f, char *buf, const uint8_t **name, size_t *len);
int hp_heap_field_is(const hp_heap *h, const hp_field *f, const char *name, size_t len);

/* All instance fields of an instance of class `ord`, the class's own first,
 * then its superclass's (the order of the instance data), with offsets in
 * that data. */
typedef struct hp_field_iter {
    const hp_heap *h;
    uint32_t cls, k, base, own;
} hp_field_iter;
void hp_field_iter_init(hp_field_iter *it, const hp_heap *h, uint32_t ord);
int hp_field_next(hp_field_iter *it, hp_field *out); /* 1, or 0 at the end */

/* The static fields of class `ord` (offset = the static's number). */
typedef struct hp_static_iter {
    const hp_heap *h;
    const uint8_t *p;
    uint32_t cls, k;
} hp_static_iter;
void hp_static_iter_init(hp_static_iter *it, const hp_heap *h, uint32_t ord);
int hp_static_next(hp_static_iter *it, hp_field *out); /* 1, or 0 at the end */

/* The value bytes of field `f` in an instance's data, or NULL when the
 * field lies beyond the data (a layout longer than the instance). */
static inline const uint8_t *hp_field_value(const hp_field *f, const uint8_t *data, uint64_t data_len,
                                            int id_size)
{
    uint64_t size = (uint64_t)hp_type_size(f->type, id_size);
    return (uint64_t)f->offset + size <= data_len ? data + f->offset : NULL;
}

/* The UTF-8 (modified) bytes of STRING `sid`; 0 when absent. */
int hp_heap_utf8(const hp_heap *h, uint64_t sid, const uint8_t **text, size_t *len);

/* ---- references ---- */

enum { HP_REF_FIELD = 0, HP_REF_ELEMENT, HP_REF_STATIC, HP_REF_LOADER };

typedef struct hp_ref {
    int kind;            /* HP_REF_* */
    uint32_t slot;       /* FIELD: the class's k-th reference field; ELEMENT: the array index;
                            STATIC: the static's index; LOADER: 0 */
    uint64_t target_id;  /* never 0 */
    uint32_t target;     /* index, or HP_NONE for an id absent from the dump */
} hp_ref;

/* Outbound references of one object: non-null reference fields of an
 * instance (its class's and superclasses'), elements of an object array,
 * static reference fields and the class loader of a class object. */
typedef struct hp_ref_iter {
    const hp_heap *h;
    const uint8_t *data;
    uint64_t data_len;
    const uint32_t *offsets; /* instance: reference-field offsets */
    uint32_t pos, count;
    int kind;
    uint32_t cls;
    int lazy; /* set after init: hp_ref_next leaves hp_ref.target HP_NONE (no look-up by id) */
} hp_ref_iter;

void hp_ref_iter_init(hp_ref_iter *it, const hp_heap *h, uint32_t index);
int hp_ref_next(hp_ref_iter *it, hp_ref *out); /* 1, or 0 at the end */

/* The instance field behind reference slot `slot` of class `ord`. */
void hp_heap_ref_field(const hp_heap *h, uint32_t ord, uint32_t slot, hp_field *out);

/* References to ids absent from the dump, over all objects (a full walk). */
uint64_t hp_heap_count_dangling(const hp_heap *h, int (*interrupt)(void *), void *ctx, int *stopped);

/* The referrer index: for every object, the objects referencing it, one
 * entry per reference (a source with two fields to it appears twice, next
 * to each other), sources in index order.  Built on first call (4 bytes per reference plus 4
 * per object); later calls return at once.  Not thread-safe. */
hp_code hp_heap_build_referrers(hp_heap *h, int (*interrupt)(void *), void *ctx, hp_error *err);
int hp_heap_has_referrers(const hp_heap *h);
/* Objects referencing `index` (after hp_heap_build_referrers). */
const uint32_t *hp_heap_referrers(const hp_heap *h, uint32_t index, uint32_t *count);

/* ---- GC roots ---- */

typedef struct hp_root {
    int kind;               /* the sub-record tag, e.g. HP_SUB_ROOT_JNI_GLOBAL */
    uint64_t id;
    uint32_t index;         /* HP_NONE when the object is absent */
    uint32_t thread_serial; /* 0 when the record has none */
    int32_t frame;          /* JAVA_FRAME / JNI_LOCAL: frame depth; -1 when none */
} hp_root;

uint32_t hp_heap_root_count(const hp_heap *h);
void hp_heap_root(const hp_heap *h, uint32_t i, hp_root *out);
/* The roots naming object `index`: *first is the first root number of a
 * run of *count in hp_heap_root_by_object order. */
uint32_t hp_heap_object_roots(const hp_heap *h, uint32_t index, uint32_t *first);
uint32_t hp_heap_root_by_object(const hp_heap *h, uint32_t k);

/* The stack frame at `depth` of thread `thread_serial`'s trace, if the dump
 * has it: method, signature and source file as STRING ids, the class serial
 * and the line number (>0, or -1 unknown, -2 compiled, -3 native). */
typedef struct hp_frame {
    uint64_t method_sid, signature_sid, source_sid;
    uint32_t class_serial;
    int32_t line;
} hp_frame;
int hp_heap_thread_frame(const hp_heap *h, uint32_t thread_serial, int32_t depth, hp_frame *out);
/* The class named by LOAD_CLASS serial `serial`, or HP_NONE. */
uint32_t hp_heap_class_by_serial(const hp_heap *h, uint32_t serial);

/* ---- stack traces and allocation sites (hp_heap_trace.c) ---- */

/* The STACK_TRACE records, in serial order: hp_heap_trace_count of them,
 * the k-th of serial hp_heap_trace_serial(h, k). */
size_t hp_heap_trace_count(const hp_heap *h);
uint32_t hp_heap_trace_serial(const hp_heap *h, size_t k);
/* STACK_TRACE `serial`: 1 with its thread serial and frame count (those
 * the record holds whole), or 0 when the dump has none of that serial. */
int hp_heap_trace(const hp_heap *h, uint32_t serial, uint32_t *thread_serial, uint32_t *frames);
/* Frame `depth` of trace `serial` (0 = top): 1, or 0 when there is none or
 * its STACK_FRAME record is missing. */
int hp_heap_trace_frame(const hp_heap *h, uint32_t serial, uint32_t depth, hp_frame *out);
/* The trace serial of thread `thread_serial`'s ROOT_THREAD_OBJECT, or 0. */
uint32_t hp_heap_thread_trace(const hp_heap *h, uint32_t thread_serial);

/* The stack trace serial an object's record carries (the allocation site
 * the old hprof agent wrote; 0 when there is none, and for class objects). */
uint32_t hp_heap_object_trace(const hp_heap *h, uint32_t index);
/* Objects and bytes (shallow sizes) by allocation trace: for k <
 * hp_heap_trace_count, objects[k] and bytes[k] are those of the instances
 * and arrays whose record names the k-th trace; objects[count] and
 * bytes[count] those naming no trace of the dump (serial 0 or unknown).
 * The arrays hold count + 1 entries, zeroed by the caller.  interrupt (may
 * be NULL) is called every few thousand objects: non-zero stops with
 * HP_E_ABORTED. */
hp_code hp_heap_site_counts(const hp_heap *h, uint64_t *objects, uint64_t *bytes, int (*interrupt)(void *ctx),
                            void *ctx, hp_error *err);

/* One ALLOC_SITES record (the hprof agent's allocation sites), its head... */
typedef struct hp_alloc_sites {
    uint64_t offset;           /* of the record */
    uint16_t flags;            /* 0x1 incremental, 0x2 sorted by allocation, 0x4 forced GC */
    uint32_t cutoff_bits;      /* the cutoff ratio, a float's bits */
    uint32_t live_bytes, live_instances;
    uint64_t bytes_allocated, instances_allocated;
    uint32_t count;            /* sites */
} hp_alloc_sites;
/* ...and each of its sites. */
typedef struct hp_alloc_site {
    uint8_t array_type;        /* 0 an instance, 2 an object array, 4..11 a primitive array of that type */
    uint32_t class_serial, trace_serial;
    uint32_t live_bytes, live_instances, bytes_allocated, instances_allocated;
} hp_alloc_site;
/* Calls fn for each site of each ALLOC_SITES record of the file (with the
 * record's head), in file order; a non-zero return stops with HP_E_ABORTED.
 * A record shorter than its sites gives HP_E_TRUNCATED at its offset. */
hp_code hp_heap_alloc_sites(const hp_heap *h, int (*fn)(void *ctx, const hp_alloc_sites *record,
                                                        const hp_alloc_site *site), void *ctx, hp_error *err);

/* ---- clear names: an obfuscated dump read through its mapping (hp_heap_names.c) ---- */

struct hp_mapping;

typedef struct hp_heap_renames {
    uint32_t classes_listed;  /* classes of the dump the mapping names (array and lambda classes too) */
    uint32_t classes_renamed;
    uint64_t fields_renamed;  /* statics and instance fields */
    uint32_t mismatch_class;  /* the first class with a field the mapping misses while it lists the */
    uint64_t mismatch_sid;    /*   class's fields: its ordinal (HP_NONE: none) and the field's name id */
} hp_heap_renames;

/* Gives the index the clear names of mapping `m` (hp_mapping.h): class
 * names (hp_heap_class, hp_heap_find_class_name) and the names of statics
 * and instance fields (the iterators, look-ups by name, hp_heap_utf8 of
 * their ids) become the original ones, in the dump's own spelling; the
 * names come from STRINGs of the index's own, with ids no STRING of the
 * dump has.  Call once, right after hp_heap_build and before the index is
 * shared: it changes the index.  Reads the dump's names; the mapping is not
 * kept.  *out says what it did. */
hp_code hp_heap_apply_mapping(hp_heap *h, const struct hp_mapping *m, hp_heap_renames *out, hp_error *err);

/* Gives static or instance field `k` of class `ord` (its statics first,
 * then its own instance fields, as the CLASS_DUMP lists them) the clear
 * name text[0:len], replacing what hp_heap_apply_mapping gave it: the
 * package tells apart fields of one obfuscated name by their values
 * (hprofkit/_overloads.py); *renamed_before says whether it had a clear
 * name already.  HP_E_USAGE for no such field.  Same contract as
 * hp_heap_apply_mapping: before the index is shared. */
hp_code hp_heap_rename_field(hp_heap *h, uint32_t ord, uint32_t k, const char *text, size_t len,
                             int *renamed_before, hp_error *err);

/* The name class `ord` has in the dump (before a mapping renamed it), as
 * hp_class_info.name; 0 when unknown. */
int hp_heap_class_dump_name(const hp_heap *h, uint32_t ord, const uint8_t **name, size_t *len);

/* The STACK_FRAMEs of the dump, by frame id: hp_heap_frame_at fills frame
 * number i (< hp_heap_frame_count) as the dump has it. */
size_t hp_heap_frame_count(const hp_heap *h);
void hp_heap_frame_at(const hp_heap *h, size_t i, uint64_t *frame_id, hp_frame *out);

/* Gives STACK_FRAME `frame_id` a clear method name, signature, source file
 * (NULL: keep the dump's) and line, as hp_heap_thread_frame then reads it.
 * Same contract as hp_heap_apply_mapping: before the index is shared. */
hp_code hp_heap_rename_frame(hp_heap *h, uint64_t frame_id, const char *method, size_t method_len,
                             const char *signature, size_t signature_len, const char *source, size_t source_len,
                             int32_t line, hp_error *err);

/* ---- strings ---- */

enum { HP_TEXT_LATIN1 = 1, HP_TEXT_UTF16BE, HP_TEXT_UTF16LE };

typedef struct hp_text {
    const uint8_t *data;
    size_t units;   /* characters: bytes for LATIN1, 2-byte units for UTF-16 */
    int encoding;   /* HP_TEXT_* */
} hp_text;

/* The text of java.lang.String object `index`: 1 and *out filled; 0 when
 * the object is not a String; -1 when its characters are not in the dump.
 * Reads every layout: char[] value with offset/count (JDK 6-8, Android before
 * O), byte[] value with coder (JDK 9+: LATIN1, or UTF-16 little-endian as
 * x86 HotSpot writes it) and Android O+ compressed byte[] values. */
int hp_heap_string(const hp_heap *h, uint32_t index, hp_text *out);
/* The array holding String `index`'s characters, or HP_NONE (not a String,
 * or its characters are not in the dump). */
uint32_t hp_heap_string_array(const hp_heap *h, uint32_t index);

#endif
