/* Tests of the layout inference (hp_layout):
 *  - heaps simulated under each layout a HotSpot JVM has (32-bit, compressed
 *    class pointers, compact headers, neither, uncompressed oops, JDK 22's
 *    packed arrays, 16-byte alignment): objects placed one after another at
 *    sizes computed here from the layout's definition (not by hp_size.h),
 *    with dead space and region ends in between; the layout is found again
 *    and the model then sizes every object as placed;
 *  - the fallback: too few gaps, gaps no layout fits (sequential ids), and
 *    a tie with VisualVM's guess leave the model as it was;
 *  - class objects (mirrors) placed at a base plus their statics, rounded to
 *    8 or 16: the base found again; too few of them leave none. */
#include "check.h"

#include "hp_layout.h"

typedef struct truth {
    int header, oop_size, packed, align;
} truth;

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* An object's size as the JVM lays it out, from the layout's definition. */
static uint64_t jvm_size(const truth *t, const hp_layout_object *o)
{
    uint64_t length_end = (uint64_t)t->header + 4, elem_start;
    if (o->kind == HP_LAYOUT_INSTANCE)
        return round_up((uint64_t)t->header + o->refs * (uint64_t)t->oop_size + o->bytes, (uint64_t)t->align);
    if (o->kind == HP_LAYOUT_PRIM_ARRAY)
        elem_start = o->wide || !t->packed ? round_up(length_end, 8) : length_end;
    else
        elem_start = t->oop_size == 8 || !t->packed ? round_up(length_end, 8) : length_end;
    return round_up(elem_start + o->refs * (uint64_t)t->oop_size + o->bytes, (uint64_t)t->align);
}

static uint32_t rng_state = 12345;
static uint32_t rng(uint32_t n)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (rng_state >> 8) % n;
}

static void random_object(hp_layout_object *o)
{
    static const int elem_sizes[] = { 1, 2, 4, 8 };
    int e;
    memset(o, 0, sizeof *o);
    o->kind = (int)rng(3);
    switch (o->kind) {
    case HP_LAYOUT_INSTANCE:
        o->refs = rng(6);
        o->bytes = rng(4) ? rng(24) : 0;
        break;
    case HP_LAYOUT_PRIM_ARRAY:
        e = elem_sizes[rng(4)];
        o->bytes = (uint64_t)rng(40) * (uint64_t)e;
        o->wide = e == 8;
        break;
    default:
        o->refs = rng(20);
    }
}

enum { OBJECTS = 5000 };

/* Objects placed as the JVM would, tallied; one in 20 followed by dead
 * space, one in 500 by a region end. */
static void simulate(const truth *t, int id_size, hp_layout_tally *tally, hp_layout_object *objs, uint64_t *gaps)
{
    int i;
    hp_layout_tally_init(tally, id_size);
    for (i = 0; i < OBJECTS; i++) {
        random_object(&objs[i]);
        gaps[i] = jvm_size(t, &objs[i]);
        if (rng(20) == 0)
            gaps[i] += (uint64_t)t->align * (1 + rng(4));
        else if (rng(500) == 0)
            gaps[i] += 1 << 20;
        hp_layout_observe(tally, &objs[i], gaps[i]);
    }
}

static void visualvm_guess(hp_size_model *m, int id_size, int oop_size)
{
    hp_size_model_init(m, id_size, 0);
    hp_size_model_set_oop(m, oop_size);
}

static void test_finds(const truth *t, int id_size)
{
    static hp_layout_object objs[OBJECTS];
    static uint64_t gaps[OBJECTS];
    hp_layout_tally tally;
    hp_layout_evidence ev;
    hp_size_model m;
    int i;
    uint64_t wrong = 0;
    simulate(t, id_size, &tally, objs, gaps);
    visualvm_guess(&m, id_size, id_size); /* a wrong guess on 64-bit dumps with compressed oops */
    hp_layout_pick(&tally, &m, &ev);
    CHECK(ev.inferred);
    CHECK(ev.gaps > OBJECTS * 9 / 10 && ev.gaps < OBJECTS);
    CHECK_EQ_U64(m.min_instance, t->header);
    CHECK_EQ_U64(m.oop_size, t->oop_size);
    CHECK_EQ_U64(m.align, t->align);
    CHECK_EQ_U64(m.array_base_wide, round_up((uint64_t)t->header + 4, 8));
    CHECK_EQ_U64(m.array_base, t->packed ? (uint64_t)t->header + 4 : round_up((uint64_t)t->header + 4, 8));
    /* The model then sizes each object as the JVM did. */
    for (i = 0; i < OBJECTS; i++) {
        const hp_layout_object *o = &objs[i];
        uint64_t size;
        if (o->kind == HP_LAYOUT_INSTANCE)
            size = hp_size_instance(&m, o->refs * (uint64_t)m.oop_size + o->bytes, 0);
        else if (o->kind == HP_LAYOUT_OBJ_ARRAY)
            size = hp_size_array(&m, HP_T_OBJECT, o->refs);
        else
            size = hp_size_array(&m, o->wide ? HP_T_LONG : HP_T_BYTE, o->bytes / (o->wide ? 8 : 1));
        wrong += size != jvm_size(t, o);
        if (o->kind == HP_LAYOUT_PRIM_ARRAY && !o->wide && o->bytes % 4 == 0) /* as ints too */
            wrong += hp_size_array(&m, HP_T_INT, o->bytes / 4) != jvm_size(t, o);
    }
    CHECK_EQ_U64(wrong, 0);
    /* Each gap counted once: those a layout predicts are at most all. */
    CHECK(ev.fits <= ev.gaps && ev.fallback_fits <= ev.fits);
}

static void test_fallbacks(void)
{
    static hp_layout_object objs[OBJECTS];
    static uint64_t gaps[OBJECTS];
    const truth jdk17 = { 12, 4, 0, 8 };
    hp_layout_tally tally;
    hp_layout_evidence ev;
    hp_size_model m, before;
    hp_layout_object o;
    int i;

    /* Too few objects: a handful of gaps, all fitting. */
    hp_layout_tally_init(&tally, 8);
    for (i = 0; i < 100; i++) {
        random_object(&o);
        hp_layout_observe(&tally, &o, jvm_size(&jdk17, &o));
    }
    visualvm_guess(&m, 8, 8);
    before = m;
    hp_layout_pick(&tally, &m, &ev);
    CHECK(!ev.inferred && ev.gaps == 100 && ev.fits == 100);
    CHECK(memcmp(&m, &before, sizeof m) == 0);

    /* Sequential ids (a writer's, an agent's tags): every gap 1. */
    hp_layout_tally_init(&tally, 8);
    for (i = 0; i < OBJECTS; i++) {
        random_object(&o);
        hp_layout_observe(&tally, &o, 1);
    }
    hp_layout_pick(&tally, &m, &ev);
    CHECK(!ev.inferred && ev.gaps == OBJECTS && ev.fits == 0);
    CHECK(memcmp(&m, &before, sizeof m) == 0);

    /* Gaps beyond HP_LAYOUT_MAX_GAP and zero gaps are no evidence. */
    hp_layout_tally_init(&tally, 8);
    hp_layout_observe(&tally, &objs[0], HP_LAYOUT_MAX_GAP + 8);
    hp_layout_observe(&tally, &objs[0], 0);
    CHECK_EQ_U64(tally.gaps, 0);

    /* Fewer than half the gaps fit: the fallback stays. */
    simulate(&jdk17, 8, &tally, objs, gaps);
    for (i = 0; i < 2 * OBJECTS; i++)
        hp_layout_observe(&tally, &objs[i % OBJECTS], 3);
    hp_layout_pick(&tally, &m, &ev);
    CHECK(!ev.inferred && ev.fits > HP_LAYOUT_MIN_FITS);
    CHECK(memcmp(&m, &before, sizeof m) == 0);

    /* A tie: instances of 4 bytes of fields in 16-byte gaps fit a header of
     * 8 and one of 12 alike; VisualVM's guess (12) keeps it. */
    hp_layout_tally_init(&tally, 8);
    memset(&o, 0, sizeof o);
    o.bytes = 4;
    for (i = 0; i < OBJECTS; i++)
        hp_layout_observe(&tally, &o, 16);
    visualvm_guess(&m, 8, 4);
    hp_layout_pick(&tally, &m, &ev);
    CHECK(ev.inferred && ev.fits == OBJECTS && ev.fallback_fits == OBJECTS);
    CHECK_EQ_U64(m.min_instance, 12);
}

/* Class objects of random statics, each placed at `base` + its statics
 * (rounded up to 8) rounded up to the alignment, one in 10 followed by dead
 * space: the base is found again, and then sizes each as placed. */
static void test_mirrors(int base, int align, int count)
{
    hp_layout_mirrors t;
    hp_layout_evidence ev;
    hp_size_model m;
    uint64_t wrong = 0;
    int i;
    hp_size_model_init(&m, 8, 0);
    hp_size_model_set_oop(&m, 4);
    m.align = align;
    hp_layout_mirrors_init(&t);
    for (i = 0; i < count; i++) {
        uint64_t refs = rng(5), bytes = rng(3) ? rng(40) : 0;
        uint64_t size = round_up((uint64_t)base + round_up(refs * 4 + bytes, 8), (uint64_t)align);
        hp_layout_mirror_observe(&t, &m, refs, bytes, size + (rng(10) ? 0 : (uint64_t)align * (1 + rng(3))));
    }
    memset(&ev, 0, sizeof ev);
    hp_layout_mirror_pick(&t, &m, &ev);
    CHECK_EQ_U64(ev.mirror_gaps, count);
    if (count < HP_LAYOUT_MIN_MIRRORS) {
        CHECK_EQ_U64(m.mirror_base, 0);
        return;
    }
    CHECK_EQ_U64(m.mirror_base, base);
    CHECK(ev.mirror_fits >= (uint64_t)count * 8 / 10 && ev.mirror_fits <= (uint64_t)count);
    for (i = 0; i < 64; i++) {
        uint64_t refs = (uint64_t)i % 5, bytes = (uint64_t)i * 3 % 41;
        wrong += hp_size_mirror(&m, refs, bytes) != round_up((uint64_t)base + round_up(refs * 4 + bytes, 8), align);
    }
    CHECK_EQ_U64(wrong, 0);
}

int main(void)
{
    /* header, reference size, packed arrays (JDK 22 on), alignment */
    static const truth layouts64[] = {
        { 12, 4, 0, 8 },  /* JDK 8-21: compressed oops and class pointers */
        { 12, 4, 1, 8 },  /* JDK 22 on: the same bases */
        { 8, 4, 1, 8 },   /* JDK 24 on, compact headers */
        { 8, 8, 1, 8 },   /* compact headers, uncompressed oops */
        { 12, 8, 0, 8 },  /* uncompressed oops, compressed class pointers */
        { 16, 8, 0, 8 },  /* neither (JDK 6-21) */
        { 16, 8, 1, 8 },  /* neither, JDK 22 on: ints at 20 */
        { 12, 4, 0, 16 }, /* ObjectAlignmentInBytes=16 */
    };
    static const truth layout32 = { 8, 4, 1, 8 }; /* length at 8, ints at 12, longs at 16 */
    size_t k;
    for (k = 0; k < sizeof layouts64 / sizeof layouts64[0]; k++)
        test_finds(&layouts64[k], 8);
    test_finds(&layout32, 4);
    test_fallbacks();
    test_mirrors(112, 8, 1000);  /* JDK 17, JDK 25 compact */
    test_mirrors(176, 8, 1000);  /* JDK 17, uncompressed oops */
    test_mirrors(112, 16, 1000); /* ObjectAlignmentInBytes=16 */
    test_mirrors(96, 8, 10);     /* too few class objects */
    return check_report("test_layout");
}
