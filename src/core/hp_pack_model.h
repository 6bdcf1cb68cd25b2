/* The model the pack encoder and decoder share: varints, zigzag, id deltas,
 * delta contexts and the class table.  Both sides update it with exactly the
 * same calls in the same order, so a value is coded against the same base on
 * both; anything that would make them diverge is a format bug. */
#ifndef HP_PACK_MODEL_H
#define HP_PACK_MODEL_H

#include "hp_common.h"
#include "hp_idmap.h"
#include "hp_pack.h"

/* Longest varint: 10 bytes hold 64 bits. */
#define PK_VARINT_MAX 10

/* The streams' names, in hp_pack.h order, for messages and the spec. */
#define PK_STREAM_LIST(X)                                                                                 \
    X("op") X("time") X("len") X("raw") X("strings") X("text") X("name") X("serial") X("stack") X("classes") X("rank") \
    X("frame") X("low") X("root") X("rootx") X("objid") X("class") X("classraw") X("cdump") X("cdref")    \
    X("cdtype") X("cdval") X("cdsref") X("isize") X("iref") X("iprim") X("iraw") X("count") X("atype")    \
    X("aref") X("noise") X("prim.boolean") X("prim.char") X("prim.float") X("prim.double") X("prim.byte")           \
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
    uint32_t fail_epoch;     /* dumps seen when building last failed */
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
    uint32_t epoch; /* CLASS_DUMPs recorded */
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

#endif
