/* Private layout of the heap index, shared by the hp_heap_*.c files only. */
#ifndef HP_HEAP_IMPL_H
#define HP_HEAP_IMPL_H

#include "hp_heap.h"

#if defined(__GNUC__) || defined(__clang__)
#define HP_PREFETCH(p) __builtin_prefetch(p)
#else
#define HP_PREFETCH(p) ((void)(p))
#endif

/* Object class ordinals: o < C an instance of class o; C <= o < 2C an object
 * array of array class o - C; 2C + t (t < 8) a primitive array of type t + 4;
 * then a class object, an instance of an absent class, an object array of an
 * absent class.  The kind is thus derived, never stored. */
enum { ORD_PRIM = 0, ORD_CLASS_OBJECT = 8, ORD_LOST_INSTANCE = 9, ORD_LOST_ARRAY = 10, ORD_SPECIALS = 11 };

typedef struct heap_class {
    uint64_t id, super_id, loader_id;
    uint64_t name_sid;
    uint64_t offset;           /* CLASS_DUMP */
    uint64_t instances;
    uint64_t field_bytes;      /* model bytes of own + inherited fields */
    uint64_t instance_size;
    uint64_t object_size;      /* its class object's shallow size */
    uint32_t object_index;
    uint32_t super_ord;
    uint32_t raw_size;
    uint32_t serial;           /* LOAD_CLASS serial, 0 if none */
    uint32_t statics_off, fields_off; /* from offset, at the u2 counts */
    uint32_t own_size;         /* bytes of its own fields in instance data (id-size refs) */
    uint32_t data_size;        /* own + inherited */
    uint32_t refs_start, n_refs;
    uint32_t depth;            /* superclasses above it */
    uint32_t names_at;         /* clear names of its statics and fields: heap_names.fields[names_at - 1 ...]; 0 none */
    uint64_t dump_name_sid;    /* its name in the dump when a mapping renamed it (name_sid is then the clear one) */
    uint16_t n_fields, n_statics;
    uint8_t elem_type;
} heap_class;

typedef struct sid_entry { uint64_t sid, offset; } sid_entry; /* STRING / STACK_FRAME by id */
typedef struct serial_entry { uint32_t serial; uint32_t pad; uint64_t offset; } serial_entry;
typedef struct load_entry { uint64_t class_id, name_sid; uint32_t serial; uint32_t pad; } load_entry;
typedef struct thread_entry { uint32_t thread_serial, trace_serial; } thread_entry;

/* Clear names from a mapping (hp_heap_names.c): STRINGs of their own, with
 * ids above the dump's (next_sid on), the names of renamed classes' statics
 * and fields, and renamed STACK_FRAMEs.  Empty for a dump read as it is. */
typedef struct heap_text { uint64_t sid, off, len; } heap_text;
typedef struct heap_frame_name { uint64_t frame_id; hp_frame frame; } heap_frame_name;
typedef struct heap_names {
    uint8_t *text;
    size_t text_len, text_cap;
    heap_text *strings;        /* by sid, ascending */
    size_t n_strings, cap_strings;
    uint64_t next_sid;
    uint64_t *fields;          /* per renamed class: its statics' then its fields' new sids (0: kept) */
    size_t n_fields, cap_fields;
    heap_frame_name *frames;   /* by frame id */
    size_t n_frames, cap_frames;
} heap_names;

struct hp_heap {
    hp_alloc alloc;
    const uint8_t *buf;
    uint64_t len;
    int id_size, version;
    uint32_t n_dumps;

    /* objects, in id order */
    uint32_t n;
    uint64_t min_id;
    int shift;                 /* key = (id - min_id) >> shift */
    uint32_t *keys4;           /* one of keys4 / keys8 */
    uint64_t *keys8;
    uint32_t *off_lo;
    uint8_t *off_hi;           /* files of 4 GiB and more */
    uint16_t *ord2;            /* one of ord2 / ord4 */
    uint32_t *ord4;
    uint8_t *heap_of;          /* Android dumps only */
    uint64_t duplicates;
    /* id look-up: dir[b] is the first index whose key >> dir_shift >= b */
    uint32_t *dir;
    int dir_shift;
    uint64_t dir_size;

    /* classes, in id order */
    uint32_t n_classes;
    heap_class *classes;
    uint32_t class_class, string_class, object_class;
    uint32_t prim_class[8];
    uint32_t *ref_offsets;     /* per class: reference-field offsets in instance data */
    uint64_t n_ref_offsets;

    sid_entry *strings;        /* by sid */
    size_t n_strings;
    load_entry *loads;         /* by class id */
    size_t n_loads;
    sid_entry *frames;         /* STACK_FRAME by frame id */
    size_t n_frames;
    serial_entry *traces;      /* STACK_TRACE by serial */
    size_t n_traces;
    thread_entry *threads;     /* THREAD_OBJECT roots: thread serial -> trace serial */
    size_t n_threads;

    hp_root *roots;
    uint32_t n_roots;
    uint32_t *roots_by_object; /* root numbers sorted by object index */

    uint64_t heap_name_sid[256];
    int n_heaps;

    hp_size_model model;
    int size_model;            /* HP_SIZES_* asked for */
    hp_layout_evidence layout; /* HP_SIZES_JVM: what the model rests on */

    /* java.lang.String's fields: offsets in its instance data, or -1 */
    int64_t str_value, str_offset, str_count, str_coder;

    /* lazy referrer index (CSR) */
    uint32_t *rev_start;       /* n + 1 */
    uint32_t *rev_src;

    heap_names names;
};

static inline uint64_t obj_offset(const hp_heap *h, uint32_t i)
{
    return h->off_hi ? ((uint64_t)h->off_hi[i] << 32 | h->off_lo[i]) : h->off_lo[i];
}

static inline uint32_t obj_ord(const hp_heap *h, uint32_t i) { return h->ord2 ? h->ord2[i] : h->ord4[i]; }

static inline uint64_t obj_id(const hp_heap *h, uint32_t i)
{
    return h->min_id + ((h->keys4 ? (uint64_t)h->keys4[i] : h->keys8[i]) << h->shift);
}

/* The id-directory bucket of a key (dir_shift reaches 64 for 64-bit keys). */
static inline uint64_t heap_bucket(const hp_heap *h, uint64_t key)
{
    return h->dir_shift >= 64 ? 0 : key >> h->dir_shift;
}

/* ---- hp_heap_class.c: the look-ups the other hp_heap_*.c files share ----
 * (kept out of hp_heap_build.c, so that the build calls the look-ups and
 * never the other way round: tests/test_layout.py checks the calls). */

/* Binary searches over the sorted side tables; NULL when absent. */
const sid_entry *heap_sid_find(const sid_entry *t, size_t n, uint64_t id);

/* The clear names' STRING `sid`: 1 and the text, or 0. */
int heap_names_text(const hp_heap *h, uint64_t sid, const uint8_t **text, size_t *len);
/* The new name id of static or field `k` (statics first) of class `ord`, or 0. */
static inline uint64_t heap_renamed_field(const hp_heap *h, uint32_t ord, uint32_t k)
{
    uint32_t at = h->classes[ord].names_at;
    return at ? h->names.fields[at - 1 + k] : 0;
}
/* A renamed STACK_FRAME, or NULL. */
const hp_frame *heap_renamed_frame(const hp_heap *h, uint64_t frame_id);
/* Frees the clear names (hp_heap_names.c, which writes them). */
void heap_names_free(hp_heap *h);

/* Whether STRING `sid` reads `want` (ASCII). */
int heap_sid_is(const hp_heap *h, uint64_t sid, const char *want);

/* The nearest instance field (own, then inherited) of class `ord` named
 * `name` (ASCII); 1 and *out filled, or 0. */
int heap_field_named(const hp_heap *h, uint32_t ord, const char *name, hp_field *out);

/* Calls fn for every class, each after its superclasses.  0; -1 when out of
 * memory; 1 + a class ordinal on a cyclic chain through it. */
int heap_classes_supers_first(hp_heap *h, void (*fn)(hp_heap *h, uint32_t ord, void *ctx), void *ctx);

/* ---- above them: hp_heap_object.c, hp_heap_string.c, hp_heap_size.c, then hp_heap_build.c ---- */

/* Finds java.lang.String's field layout (hp_heap_string.c). */
void heap_string_layout(hp_heap *h);

/* Sets the size model (hp_heap_size.c): VisualVM's guess of the reference
 * size, under HP_SIZES_JVM then the layout the addresses show, and sizes
 * every class; -1 when out of memory. */
int heap_size_classes(hp_heap *h, int size_model);

#endif
