/* The model the pack encoder and decoder share: varints, zigzag, id deltas,
 * delta contexts, the class table, object steps, heap names and the text
 * history (pk_model holds all of it).  Both sides update it with exactly the
 * same calls in the same order, so a value is coded against the same base on
 * both; anything that would make them diverge is a format bug. */
#ifndef HP_PACK_MODEL_H
#define HP_PACK_MODEL_H

#include "hp_common.h"
#include "hp_idmap.h"
#include "hp_pack.h"

#include <string.h>

/* The streams' names, in hp_pack.h order, for messages and the spec. */
#define PK_STREAM_LIST(X)                                                                                 \
    X("op") X("time") X("len") X("raw") X("strings") X("text") X("name") X("serial") X("stack") X("classes") X("rank") \
    X("frame") X("low") X("root") X("rootx") X("objid") X("class") X("classraw") X("cdump") X("cdref")    \
    X("cdtype") X("cdval") X("cdsref") X("isize") X("iref") X("iprim") X("iraw") X("count") X("atype")    \
    X("aref") X("noise") X("shared") X("rows") X("prim.boolean") X("prim.char") X("prim.float") X("prim.double") X("prim.byte")           \
    X("prim.short") X("prim.int") X("prim.long")

/* Delta contexts: each keeps the last value coded in it (docs/format.md §5). */
enum {
    PK_CTX_FRAME_ID,   /* STACK_FRAME ids */
    PK_CTX_FRAME_NAME, /* STACK_FRAME method names */
    PK_CTX_FRAME_SIG,  /* STACK_FRAME signatures */
    PK_CTX_FRAME_SRC,  /* STACK_FRAME source files */
    PK_CTX_TRACE_FRAME,/* frame ids in STACK_TRACEs */
    PK_CTX_ROOT,       /* GC root objects */
    PK_CTX_JNI,        /* JNI global ref ids */
    PK_CTX_HEAP_NAME,  /* HEAP_DUMP_INFO names */
    PK_CTX_OBJ,        /* class, instance and array dump ids */
    PK_CTX_CLASSRAW,   /* class ids new to the class table */
    PK_CTX_FIELD_NAME, /* CLASS_DUMP static and instance field names */
    PK_CTX_CD_REF,     /* CLASS_DUMP loader .. reserved2: 5 contexts */
    PK_NCTX = PK_CTX_CD_REF + 5
};

/* Alignment contexts: one per id context, plus the reference streams. */
enum { PK_ALIGN_IREF = PK_NCTX, PK_ALIGN_AREF, PK_ALIGN_CDSREF, PK_NALIGN };

/* Whether a context's deltas are multiples of 8 is learnt as it goes, on
 * both sides alike: `score` rises by 64 for each delta with low bits set and
 * decays by 1/16 per delta, so it settles near 1024 x the misaligned share.
 * Below PK_ALIGN_LIMIT (about 1 in 4 misaligned) deltas are coded shifted. */
typedef struct pk_align {
    uint32_t score;
} pk_align;

#define PK_ALIGN_LIMIT 256u
static inline int pk_aligned(const pk_align *a) { return a->score < PK_ALIGN_LIMIT; }
static inline void pk_align_learn(pk_align *a, uint64_t d)
{
    a->score = a->score - (a->score >> 4) + ((d & 7) ? 64u : 0u);
}

/* 32-bit delta contexts (serials and times). */
enum {
    PK_SER_TIME,        /* record times */
    PK_SER_FRAME_CLASS, /* STACK_FRAME class serials */
    PK_SER_FRAME_LINE,  /* STACK_FRAME line numbers */
    PK_SER_TRACE,       /* STACK_TRACE serials */
    PK_SER_TRACE_THREAD,/* STACK_TRACE thread serials */
    PK_NSER
};

static inline uint64_t pk_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t pk_unzigzag(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

static inline uint64_t pk_id_mask(int id_size) { return id_size == 8 ? ~(uint64_t)0 : 0xFFFFFFFFu; }

/* The difference v - base as a signed number of id_size bytes. */
static inline int64_t pk_id_diff(uint64_t v, uint64_t base, int id_size)
{
    uint64_t d = v - base;
    return id_size == 8 ? (int64_t)d : (int64_t)(int32_t)(uint32_t)d;
}

/* An id delta d is coded, in an aligned context, as zigzag(d >> 3) (a
 * varint) plus d & 7 (a byte of the LOW stream), else as zigzag(d).  A
 * reference adds 0 for null; in an unaligned context 1 escapes to the
 * aligned form (for the two deltas whose zigzag + 2 would overflow). */
static inline uint64_t pk_delta_code(int64_t d) { return pk_zigzag(d >> 3); }
static inline uint64_t pk_delta_value(uint64_t code, unsigned low)
{
    return ((uint64_t)pk_unzigzag(code) << 3) | (low & 7u);
}

/* Streams of 2-byte elements (char[], short[]) are stored as two byte
 * planes, high bytes first: ASCII text and small numbers then compress well. */
static inline int pk_shuffled(int si)
{
    return si == HP_PS_PRIM + HP_T_CHAR - HP_T_BOOLEAN || si == HP_PS_PRIM + HP_T_SHORT - HP_T_BOOLEAN;
}

/* An ATYPE byte with this bit: every element equals the one stored. */
#define PK_ATYPE_CONSTANT 0x80
/* With this bit: the elements are in the NOISE stream (they look random). */
#define PK_ATYPE_NOISE 0x40
#define PK_NOISE_MIN 64 /* smaller arrays are never taken for noise */

/* With this bit: a byte[], or a char[] whose chars are all below 256, coded
 * as text: the longest prefix it shares with one of the last text arrays
 * in SHARED, the rest of its bytes (low bytes of chars) in prim.byte. */
#define PK_ATYPE_TEXT 0x20
#define PK_TEXT_HISTORY 16  /* text arrays remembered */
#define PK_TEXT_MEMORY 1024 /* bytes remembered of each */

/* ---- learnt object steps --------------------------------------------------
 * Dumps list objects in address order, mostly back to back, so the next id
 * is usually the previous id plus the previous object's size.  Sizes are
 * not in the dump (they depend on the VM's headers and alignment), so they
 * are learnt: the step that followed the last object of the same shape
 * (class; element type or class and length for arrays) is predicted after
 * the next one.  Ids are coded against that prediction.  Collisions in the
 * table only cost a worse prediction; both sides see the same ones. */
#define PK_STEP_SLOTS 4096

typedef struct pk_steps {
    uint64_t key[PK_STEP_SLOTS];
    uint64_t step[PK_STEP_SLOTS];
    uint64_t last; /* shape of the previous object, 0 before the first */
} pk_steps;

/* The shape of an object: its sub-record tag and what fixes its size. */
static inline uint64_t pk_shape(unsigned tag, uint64_t what, uint64_t count)
{
    uint64_t h = (what + 0x9E3779B97F4A7C15u * (count + 1)) ^ ((uint64_t)tag << 56);
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9u;
    return (h ^ h >> 29) | 1; /* never 0 */
}

static inline size_t pk_step_slot(uint64_t shape) { return (size_t)(shape >> 20) & (PK_STEP_SLOTS - 1); }

/* The step predicted after the previous object. */
static inline uint64_t pk_step_predict(const pk_steps *s)
{
    size_t k = pk_step_slot(s->last);
    return s->last && s->key[k] == s->last ? s->step[k] : 0;
}

/* The step actually taken after the previous object. */
static inline void pk_step_learn(pk_steps *s, uint64_t step)
{
    size_t k = pk_step_slot(s->last);
    if (s->last) {
        s->key[k] = s->last;
        s->step[k] = step;
    }
}

/* ---- heap names -----------------------------------------------------------
 * Android dumps switch heaps (app, zygote, image...) every few objects; a
 * heap's name is coded against the name that heap had last time. */
#define PK_HEAPS 8

typedef struct pk_heaps {
    uint32_t heap[PK_HEAPS];
    uint64_t name[PK_HEAPS];
    unsigned n, next;
} pk_heaps;

/* The base for heap `heap`'s name: its last name, else `fallback`. */
static inline uint64_t pk_heap_base(const pk_heaps *h, uint32_t heap, uint64_t fallback)
{
    unsigned i;
    for (i = 0; i < h->n; i++)
        if (h->heap[i] == heap)
            return h->name[i];
    return fallback;
}

static inline void pk_heap_learn(pk_heaps *h, uint32_t heap, uint64_t name)
{
    unsigned i;
    for (i = 0; i < h->n && h->heap[i] != heap; i++)
        ;
    if (i == h->n) {
        if (h->n < PK_HEAPS)
            h->n++;
        else
            i = h->next++ % PK_HEAPS; /* round robin: dumps have a handful of heaps */
    }
    h->heap[i] = heap;
    h->name[i] = name;
}

/* ---- text prefixes ------------------------------------------------------
 * Strings in heap order often start alike (a list's "item3:..." beside
 * "item2:...", URLs, resource and class names), in ways deflate codes at
 * the price of a match each.  A text array is coded as the longest prefix
 * it shares with one of the last PK_TEXT_HISTORY ones ("back" 0 is the
 * previous one), then its other bytes. */
typedef struct pk_text {
    uint8_t text[PK_TEXT_HISTORY][PK_TEXT_MEMORY];
    size_t len[PK_TEXT_HISTORY];
    unsigned newest, n;
} pk_text;

static inline unsigned pk_text_slot(const pk_text *t, unsigned back)
{
    return (t->newest + PK_TEXT_HISTORY - back) % PK_TEXT_HISTORY;
}

/* The longest prefix of `p` (n bytes) that a remembered text array starts
 * with: its length, and in *back which one (the newest on ties). */
static inline size_t pk_text_shared(const pk_text *t, const uint8_t *p, size_t n, unsigned *back)
{
    size_t best = 0;
    unsigned b;
    *back = 0;
    for (b = 0; b < t->n && best < n; b++) {
        const unsigned slot = pk_text_slot(t, b);
        const uint8_t *q = t->text[slot];
        size_t k = 0, max = n < t->len[slot] ? n : t->len[slot];
        while (k < max && p[k] == q[k])
            k++;
        if (k > best) {
            best = k;
            *back = b;
        }
    }
    return best;
}

/* Remembers a text array of n bytes: `shared` bytes of remembered array
 * `back`, then `rest`. */
static inline void pk_text_learn(pk_text *t, unsigned back, size_t shared, const uint8_t *rest, size_t n)
{
    const size_t keep = n < PK_TEXT_MEMORY ? n : PK_TEXT_MEMORY;
    const unsigned from = pk_text_slot(t, back), to = (t->newest + 1) % PK_TEXT_HISTORY;
    if (shared && from != to) /* the oldest is overwritten: its prefix is in place */
        memcpy(t->text[to], t->text[from], shared);
    if (keep > shared)
        memcpy(t->text[to] + shared, rest, keep - shared);
    t->len[to] = keep;
    t->newest = to;
    t->n += t->n < PK_TEXT_HISTORY;
}

/* Heap records up to this long are coded without their length, closed by
 * an END op: the decoder holds them and counts. */
#define PK_HELD_MAX HP_WHOLE_MAX

/* Width in bytes of the ranks of a permutation of n items. */
static inline int pk_rank_width(uint64_t n) { return n <= 0x100 ? 1 : n <= 0x10000 ? 2 : n <= 0x1000000 ? 3 : 4; }

/* ---- the class table ------------------------------------------------------
 * Every class id seen (LOAD_CLASS, CLASS_DUMP, or a reference to a class not
 * seen before) gets the next index; class references are coded as indexes.
 * A CLASS_DUMP also records the class's own instance field types, from which
 * the field layout of its instances ("program") is derived when the whole
 * superclass chain has been dumped. */

/* A program step: PK_STEP_REF is one reference field; otherwise a run of
 * that many bytes of primitive fields. */
#define PK_STEP_REF 0x80000000u

/* Limits that keep the model's memory bounded whatever the input: beyond
 * them classes get no index / no layout (both sides decide alike). */
#define PK_MAX_CLASSES ((size_t)1 << 22)
#define PK_MAX_TYPES ((size_t)1 << 24)
#define PK_MAX_STEPS ((size_t)1 << 24)
#define PK_MAX_DEPTH 1024

typedef struct pk_class {
    uint64_t id;
    uint64_t super_id;
    uint32_t own_off, own_n; /* own instance field types in the pool */
    uint32_t prog_off, prog_n;
    uint32_t size;           /* field bytes of an instance, once the program is built */
    uint32_t prim;           /* of which primitive fields */
    uint32_t rows;           /* its row group in the current block ... */
    uint32_t rows_width;     /* ... opened for rows of this many bytes ... */
    uint64_t rows_block;     /* ... if this is that block's index + 1 */
    uint32_t fail_epoch;     /* dumps seen when building last failed */
    uint32_t built_redumps;  /* classes dumped again when its program was built */
    uint8_t dumped;
    uint8_t prog_state;      /* PK_PROG_* */
} pk_class;

enum { PK_PROG_NONE, PK_PROG_BUILT, PK_PROG_FAILED };

typedef struct pk_classes {
    hp_alloc alloc;
    hp_idmap map; /* id -> index */
    pk_class *v;
    size_t n, cap;
    uint8_t *types;
    size_t ntypes, types_cap;
    uint32_t *steps;
    size_t nsteps, steps_cap;
    uint32_t epoch;   /* CLASS_DUMPs recorded */
    uint32_t redumps; /* of which dumps of a class dumped before: each makes every program stale */
} pk_classes;

void pk_classes_init(pk_classes *t, const hp_alloc *alloc);
void pk_classes_free(pk_classes *t);

/* Index of class `id`, or -1. */
static inline int64_t pk_class_find(const pk_classes *t, uint64_t id)
{
    const uint32_t *v = hp_idmap_get(&t->map, id);
    return v ? (int64_t)*v : -1;
}

/* Index of class `id`, added when new.  -1 out of memory, -2 table full. */
int64_t pk_class_add(pk_classes *t, uint64_t id);

/* Records a CLASS_DUMP of class index `idx`: its super and own field types
 * (n entries, read from `types` with the given stride).  0, or -1 out of
 * memory.  Over PK_MAX_TYPES the class is left without layout. */
int pk_class_define(pk_classes *t, size_t idx, uint64_t super_id, const uint8_t *types, size_t n, size_t stride);

/* The instance program of class `idx`: steps and field byte size, or NULL
 * when the layout is unknown.  *nomem is set when memory ran out. */
const uint32_t *pk_class_program(pk_classes *t, size_t idx, int id_size, size_t *n, uint32_t *size, int *nomem);

/* Row groups (docs/format.md §7.2): whether class c's instances in block
 * `block` go on in its current group (one opened in this block for rows of
 * the width its layout has now), and opening group `group` for them. */
static inline int pk_rows_open(const pk_class *c, uint64_t block)
{
    return c->rows_block == block + 1 && c->rows_width == c->prim;
}

static inline void pk_rows_start(pk_class *c, uint64_t block, size_t group)
{
    c->rows = (uint32_t)group;
    c->rows_width = c->prim;
    c->rows_block = block + 1;
}

/* ---- the model, as each side holds it ---- */

typedef struct pk_model {
    uint64_t prev[PK_NCTX];
    pk_align align[PK_NALIGN];
    uint32_t ser[PK_NSER];
    pk_classes classes;
    pk_steps steps;
    pk_heaps heaps;
    pk_text text;
} pk_model;

/* The model before the first block (alloc NULL: libc). */
static inline void pk_model_init(pk_model *m, const hp_alloc *alloc)
{
    memset(m, 0, sizeof *m);
    pk_classes_init(&m->classes, alloc);
}

static inline void pk_model_free(pk_model *m) { pk_classes_free(&m->classes); }

/* The id the next object is predicted to have (§5.5 of docs/format.md). */
static inline uint64_t pk_obj_predict(const pk_model *m) { return m->prev[PK_CTX_OBJ] + pk_step_predict(&m->steps); }

/* An object id coded: learns the step that led to it.  The caller then
 * sets m->steps.last to the object's shape. */
static inline void pk_obj_seen(pk_model *m, uint64_t v, uint64_t mask)
{
    pk_step_learn(&m->steps, (v - m->prev[PK_CTX_OBJ]) & mask);
    m->prev[PK_CTX_OBJ] = v;
}

/* The base of heap `heap`'s name (§5.6), and the name once coded. */
static inline uint64_t pk_heap_name_base(const pk_model *m, uint32_t heap)
{
    return pk_heap_base(&m->heaps, heap, m->prev[PK_CTX_HEAP_NAME]);
}

static inline void pk_heap_name_seen(pk_model *m, uint32_t heap, uint64_t name)
{
    m->prev[PK_CTX_HEAP_NAME] = name;
    pk_heap_learn(&m->heaps, heap, name);
}

#endif
