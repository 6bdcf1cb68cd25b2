/* Scoring the layouts a HotSpot JVM can have against a dump's address gaps
 * (hp_layout.h).  An object's size under a layout is some offset (its
 * header, or its array's first element) plus a payload, rounded up to the
 * alignment: the tally counts, for each reference size, offset and
 * alignment, the objects whose gap that size equals; a layout's score is
 * then a sum over the few entries it names. */
#include "hp_layout.h"

#include <string.h>

/* Offset number k is 8 + 4k bytes; alignment number a is 8 << a bytes. */
static int offset_of(int k) { return 8 + 4 * k; }
static int offset_number(int offset) { return (offset - 8) / 4; }

void hp_layout_tally_init(hp_layout_tally *t, int id_size)
{
    memset(t, 0, sizeof *t);
    t->id_size = id_size;
}

/* Counts, for every offset from `first` on, the alignments under which
 * offset + payload rounds up to `gap`: those that divide the gap and exceed
 * what is left of it.  row: [offset][alignment]. */
static void fit(uint32_t row[HP_LAYOUT_OFFSETS][HP_LAYOUT_ALIGNS], int first, uint64_t payload, uint64_t gap)
{
    int k, a;
    for (k = first; k < HP_LAYOUT_OFFSETS; k++) {
        uint64_t size = (uint64_t)offset_of(k) + payload, left;
        if (size > gap)
            return; /* larger offsets leave even less */
        left = gap - size;
        for (a = 0; a < HP_LAYOUT_ALIGNS; a++) {
            uint64_t align = (uint64_t)8 << a;
            if (gap % align)
                break; /* nor any larger power of two */
            if (left < align)
                row[k][a]++;
        }
    }
}

void hp_layout_observe(hp_layout_tally *t, const hp_layout_object *o, uint64_t gap)
{
    int r;
    if (gap == 0 || gap > HP_LAYOUT_MAX_GAP)
        return;
    t->gaps++;
    if (o->kind == HP_LAYOUT_PRIM_ARRAY) {
        fit(t->prim_arrays[o->wide ? 1 : 0], offset_number(12), o->bytes, gap);
        return;
    }
    for (r = 0; r < (t->id_size == 8 ? 2 : 1); r++) {
        uint64_t refs = o->refs * (uint64_t)(r ? 8 : 4);
        if (o->kind == HP_LAYOUT_INSTANCE)
            fit(t->instances[r], 0, refs + o->bytes, gap);
        else
            fit(t->obj_arrays[r], offset_number(12), refs, gap);
    }
}

/* One layout: header, reference size, 1- to 4-byte elements right after
 * the length (packed) or at the next 8, alignment. */
typedef struct layout {
    int header, oop_size, packed, align_number;
} layout;

static int base_small(const layout *l) { return l->packed ? l->header + 4 : (l->header + 4 + 7) & ~7; }
static int base_wide(const layout *l) { return (l->header + 4 + 7) & ~7; }

static uint64_t score(const hp_layout_tally *t, const layout *l)
{
    int r = l->oop_size == 8, a = l->align_number;
    int obj_base = l->oop_size == 8 ? base_wide(l) : base_small(l);
    return (uint64_t)t->instances[r][offset_number(l->header)][a] +
           t->prim_arrays[0][offset_number(base_small(l))][a] + t->prim_arrays[1][offset_number(base_wide(l))][a] +
           t->obj_arrays[r][offset_number(obj_base)][a];
}

void hp_layout_pick(const hp_layout_tally *t, hp_size_model *m, hp_layout_evidence *ev)
{
    static const int headers[] = { 8, 12, 16 };
    /* VisualVM's, as a layout: its header (id size + reference size: 8, 12
     * or 16) and arrays at header + 4, aligned to 8, which is the same
     * sizes (with a header of 12 that is the next 8 as well; with 16,
     * 8-byte elements land on 24 either way). */
    layout fallback = { m->min_instance, m->oop_size, 1, 0 }, best = fallback, l;
    uint64_t best_score, s;
    int h;
    ev->gaps = t->gaps;
    ev->fallback_fits = best_score = score(t, &fallback);
    for (l.align_number = 0; l.align_number < HP_LAYOUT_ALIGNS; l.align_number++)
        for (l.oop_size = 4; l.oop_size <= t->id_size; l.oop_size += 4)
            for (h = 0; h < 3; h++)
                for (l.packed = 1; l.packed >= 0; l.packed--) {
                    l.header = headers[h];
                    if ((s = score(t, &l)) > best_score) { /* the fallback, then the first, wins a tie */
                        best = l;
                        best_score = s;
                    }
                }
    ev->fits = best_score;
    ev->inferred = best_score >= HP_LAYOUT_MIN_FITS && best_score * HP_LAYOUT_MIN_SHARE >= t->gaps;
    if (!ev->inferred)
        return;
    m->min_instance = best.header;
    m->oop_size = best.oop_size;
    m->array_base = base_small(&best);
    m->array_base_wide = base_wide(&best);
    m->align = 8 << best.align_number;
}

void hp_layout_mirrors_init(hp_layout_mirrors *t) { memset(t, 0, sizeof *t); }

void hp_layout_mirror_observe(hp_layout_mirrors *t, const hp_size_model *m, uint64_t refs, uint64_t bytes,
                              uint64_t gap)
{
    uint64_t statics = hp_size_align(refs * (uint64_t)m->oop_size + bytes), align = (uint64_t)m->align, base;
    if (gap == 0 || gap > HP_LAYOUT_MAX_GAP)
        return;
    t->gaps++;
    if (gap % align || gap % 8 || gap < statics + 8)
        return;
    /* The bases that base + statics rounds up to the gap from. */
    for (base = gap - statics; base >= 8 && base + align > gap - statics; base -= 8)
        if (base / 8 <= HP_LAYOUT_MIRROR_BASES)
            t->bases[base / 8 - 1]++;
}

void hp_layout_mirror_pick(const hp_layout_mirrors *t, hp_size_model *m, hp_layout_evidence *ev)
{
    uint32_t k, best = 0;
    for (k = 1; k < HP_LAYOUT_MIRROR_BASES; k++)
        if (t->bases[k] > t->bases[best])
            best = k;
    ev->mirror_gaps = t->gaps;
    ev->mirror_fits = t->bases[best];
    if (t->bases[best] >= HP_LAYOUT_MIN_MIRRORS && (uint64_t)t->bases[best] * 2 >= t->gaps)
        m->mirror_base = (int)(best + 1) * 8;
}
