/* The JVM's own object layout, read off a HotSpot dump's addresses.
 *
 * HotSpot writes an object's address as its id and places objects one after
 * another, so where the next object in address order follows in the same
 * stretch of heap, the gap to it is the object's size.  HPROF records no
 * header size; these gaps say it.  hp_layout scores every layout a HotSpot
 * JVM can have by how many gaps it predicts exactly, and picks the one that
 * predicts most:
 *  - the object header: 8 bytes (32-bit JVMs; 64-bit ones with compact
 *    headers, JEP 519), 12 (compressed class pointers) or 16;
 *  - references of 4 bytes (compressed oops) or 8 (not more than the id size);
 *  - arrays: a 4-byte length right after the header, then the elements; 1-
 *    to 4-byte elements at once (JDK 22 on) or at the next multiple of 8
 *    (before), 8-byte ones (long, double, references of 8) always there;
 *  - objects aligned to 8 (the default of ObjectAlignmentInBytes) to 256.
 * An instance weighs its header and its fields (own and inherited), rounded
 * up to the alignment: JDK 15 on packs fields densely, so that sum is the
 * JVM's size but where the JVM injects fields HPROF does not list (a few
 * java.lang.invoke classes); older JDKs lay each class's fields out on
 * their own and may leave gaps between them, which the sum misses.
 * Class objects are HotSpot's java.lang.Class instances ("mirrors"): the
 * fields HPROF lists for java.lang.Class, others it does not (the JVM
 * injects them), then the class's statics (rounded up to 8).  Their base,
 * before the statics, is then read off the gaps after class objects as the
 * commonest gap less the statics (hp_layout_mirror_*).
 * A gap counts as evidence when it is positive and at most
 * HP_LAYOUT_MAX_GAP: a larger one ends a region or covers free space.  The
 * caller says what each object is (hp_layout_object); this file only counts
 * and decides, so it needs no heap. */
#ifndef HP_LAYOUT_H
#define HP_LAYOUT_H

#include "hp_size.h"

#define HP_LAYOUT_MAX_GAP 4096
/* The fewest gaps the winner must predict, and the least share of all gaps
 * (one in HP_LAYOUT_MIN_SHARE): below, the addresses are not a HotSpot
 * heap's (a writer's sequential ids, an agent's tags) or too few to tell. */
#define HP_LAYOUT_MIN_FITS 256
#define HP_LAYOUT_MIN_SHARE 2

enum { HP_LAYOUT_INSTANCE = 0, HP_LAYOUT_PRIM_ARRAY, HP_LAYOUT_OBJ_ARRAY };

/* What decides an object's size under every layout. */
typedef struct hp_layout_object {
    int kind;       /* HP_LAYOUT_* */
    uint64_t refs;  /* an instance's reference fields (own and inherited); an object array's length */
    uint64_t bytes; /* an instance's primitive fields' bytes; a primitive array's elements' bytes */
    int wide;       /* a primitive array of 8-byte elements */
} hp_layout_object;

/* Offsets 8, 12 ... 24 (headers and array bases) and alignments 8 ... 256. */
#define HP_LAYOUT_OFFSETS 5
#define HP_LAYOUT_ALIGNS 6

/* Gaps predicted, by kind of object and by the parameters its size depends
 * on: [reference size 4/8 or narrow/wide elements][offset][alignment]. */
typedef struct hp_layout_tally {
    int id_size;
    uint64_t gaps;
    uint32_t instances[2][HP_LAYOUT_OFFSETS][HP_LAYOUT_ALIGNS];
    uint32_t prim_arrays[2][HP_LAYOUT_OFFSETS][HP_LAYOUT_ALIGNS];
    uint32_t obj_arrays[2][HP_LAYOUT_OFFSETS][HP_LAYOUT_ALIGNS];
} hp_layout_tally;

/* What the choice rests on. */
typedef struct hp_layout_evidence {
    uint64_t gaps;          /* gaps counted */
    uint64_t fits;          /* of them, predicted by the layout taken (the best one when none is) */
    uint64_t fallback_fits; /* ... by the fallback's (VisualVM's guess) */
    int inferred;           /* 1: the layout is the gaps' best; 0: the fallback stays */
    uint64_t mirror_gaps;   /* gaps after class objects counted */
    uint64_t mirror_fits;   /* of them, predicted by the mirror base taken (the best one when none is) */
} hp_layout_evidence;

/* Mirror bases 8, 16 ... 8 * HP_LAYOUT_MIRROR_BASES bytes; the fewest class
 * objects the commonest must explain (and half of those counted). */
#define HP_LAYOUT_MIRROR_BASES 128
#define HP_LAYOUT_MIN_MIRRORS 16

typedef struct hp_layout_mirrors {
    uint64_t gaps;
    uint32_t bases[HP_LAYOUT_MIRROR_BASES];
} hp_layout_mirrors;

void hp_layout_tally_init(hp_layout_tally *t, int id_size);

/* Counts one object whose successor in address order starts `gap` bytes
 * after it. */
void hp_layout_observe(hp_layout_tally *t, const hp_layout_object *o, uint64_t gap);

/* Sets *m to the layout that predicts most gaps, when it predicts enough of
 * them (above); else leaves *m, the fallback (a non-raw model of the dump's
 * id size, VisualVM's guess), which also wins a tie.  *ev says why. */
void hp_layout_pick(const hp_layout_tally *t, hp_size_model *m, hp_layout_evidence *ev);

void hp_layout_mirrors_init(hp_layout_mirrors *t);

/* Counts one class object, whose class's statics are `refs` references and
 * `bytes` of primitives, followed `gap` bytes on by the next object; `m` is
 * the layout picked (its reference size). */
void hp_layout_mirror_observe(hp_layout_mirrors *t, const hp_size_model *m, uint64_t refs, uint64_t bytes,
                              uint64_t gap);

/* Sets m->mirror_base to the commonest base when it explains enough class
 * objects (above), else leaves it; fills ev's mirror fields. */
void hp_layout_mirror_pick(const hp_layout_mirrors *t, hp_size_model *m, hp_layout_evidence *ev);

#endif
