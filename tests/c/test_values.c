/* Tests of the heap's values (hp_coll, hp_strdup, hp_heap_trace):
 *  - a crafted dump in both id sizes: a HashMap with a chain and a null
 *    key, an ArrayList and a subclass of it, an ArrayDeque wrapped around,
 *    Strings of one text in LATIN1 and UTF-16 (one sharing another's
 *    array), stack traces, objects naming them, an ALLOC_SITES record;
 *  - dumps that lie: a HashMap whose node is its own next (HP_E_CORRUPT,
 *    not a hang), a deque whose head lies outside its array, an
 *    ALLOC_SITES record shorter than its sites (HP_E_TRUNCATED);
 *  - 300,000 distinct texts, each twice: hash collisions are told apart;
 *    300,000 distinct byte[]s and Object[]s, each twice, likewise;
 *  - JDK 6 substrings sharing one char[] with a String of another text;
 *  - every dump of the shared data: every collection walked and measured,
 *    the waste per class, duplicate strings, allocation counts adding up;
 *    every waste kind (hp_waste.h): each item re-read here (all zero, all
 *    null, half null, a trailing zero run), lists largest waste first, sums
 *    agreeing with the duplicate strings and the empty collections, the total
 *    each object once, an interrupt stopping it (ASan sees leaks). */
#include "valueskit.h"

#include "hp_coll.h"
#include "hp_heap.h"
#include "hp_strdup.h"
#include "hp_waste.h"

/* ---- walks collected ---- */

typedef struct {
    uint64_t keys[64], values[64];
    int types[64];
    int n;
} items;

static int collect(void *ctx, const hp_coll_value *key, const hp_coll_value *value)
{
    items *it = ctx;
    if (it->n == 64)
        return 1;
    it->keys[it->n] = key->id;
    it->values[it->n] = value->type == HP_T_OBJECT ? value->id : (uint64_t)-1;
    it->types[it->n++] = value->type;
    return 0;
}

static hp_code walk(const hp_coll *c, const hp_heap *h, uint64_t id, items *it, hp_error *err)
{
    memset(it, 0, sizeof *it);
    return hp_coll_walk(c, hp_heap_find(h, id), collect, it, err);
}

static int count_only(void *ctx, const hp_coll_value *key, const hp_coll_value *value)
{
    (void)key;
    (void)value;
    ++*(uint64_t *)ctx;
    return 0;
}

typedef struct {
    int sites;
    uint32_t trace, live;
} sites_seen;

static int site(void *ctx, const hp_alloc_sites *record, const hp_alloc_site *s)
{
    sites_seen *seen = ctx;
    CHECK(record->count == 2 && record->cutoff_bits == 0x3f000000 && record->bytes_allocated == 1000);
    seen->trace = s->trace_serial;
    seen->live += s->live_bytes;
    seen->sites++;
    return 0;
}

static void test_crafted(int id_size)
{
    bb b;
    hp_heap_options opt;
    hp_heap *h = NULL;
    hp_coll *c = NULL;
    hp_error err;
    items it;
    hp_coll_measure m;
    const char *known = NULL;
    uint64_t oop;
    vk_dump(&b, id_size, 0);
    memset(&opt, 0, sizeof opt);
    CHECK(hp_heap_build(b.d, b.len, &opt, &h, &err) == HP_OK);
    CHECK(hp_coll_new(h, NULL, NULL, NULL, &c, &err) == HP_OK);
    oop = (uint64_t)hp_heap_size_model(h)->oop_size;

    CHECK(hp_coll_shape(c, hp_heap_find(h, MAP), &known) == HP_COLL_MAP && strcmp(known, "java.util.HashMap") == 0);
    CHECK(walk(c, h, MAP, &it, &err) == HP_OK && it.n == 3);
    CHECK(it.keys[0] == K1 && it.values[0] == V1 && it.keys[1] == K2 && it.values[1] == 0);
    CHECK(it.keys[2] == 0 && it.values[2] == V3);
    hp_coll_measure_of(c, hp_heap_find(h, MAP), &m);
    CHECK(m.size == 3 && m.capacity == 4 && m.wasted == oop);

    CHECK(walk(c, h, LOOP, &it, &err) == HP_E_CORRUPT && err.tag == HP_SUB_INSTANCE_DUMP);
    CHECK(err.detail && strstr(err.detail, "loop"));

    CHECK(walk(c, h, LIST, &it, &err) == HP_OK && it.n == 3);
    CHECK(it.keys[0] == K1 && it.keys[1] == 0 && it.keys[2] == K2 && it.types[0] == 0);
    hp_coll_measure_of(c, hp_heap_find(h, LIST), &m);
    CHECK(m.shape == HP_COLL_LIST && m.size == 3 && m.capacity == 5 && m.wasted == 2 * oop);
    CHECK(hp_coll_shape(c, hp_heap_find(h, MYLIST), &known) == HP_COLL_LIST);
    CHECK(strcmp(known, "java.util.ArrayList") == 0); /* a subclass, walked as its superclass */
    CHECK(walk(c, h, MYLIST, &it, &err) == HP_OK && it.n == 2);
    hp_coll_measure_of(c, hp_heap_find(h, EMPTY), &m);
    CHECK(m.size == 0 && m.wasted == hp_heap_shallow_size(h, hp_heap_find(h, EMPTY_ELEMS)));

    CHECK(walk(c, h, DEQUE, &it, &err) == HP_OK && it.n == 2 && it.keys[0] == V1 && it.keys[1] == K1);
    CHECK(walk(c, h, BAD_DEQUE, &it, &err) == HP_E_CORRUPT);
    CHECK(walk(c, h, S1, &it, &err) == HP_E_USAGE && hp_coll_shape(c, hp_heap_find(h, S1), NULL) == HP_COLL_NONE);

    {
        hp_coll_class_waste *rows = calloc(hp_heap_class_count(h), sizeof *rows);
        uint32_t list_class = hp_heap_find_class_id(h, C_LIST), mylist_class = hp_heap_find_class_id(h, C_MYLIST);
        CHECK(rows && hp_coll_waste(c, NULL, rows, NULL, NULL, &err) == HP_OK);
        CHECK(rows[list_class].instances == 2 && rows[list_class].empty == 1);
        /* ELEMS, which MYLIST holds too, is nobody's waste (#31); LIST's own measure counts it. */
        CHECK(rows[list_class].wasted == hp_heap_shallow_size(h, hp_heap_find(h, EMPTY_ELEMS)));
        CHECK(rows[mylist_class].instances == 1 && rows[mylist_class].wasted == 0);
        CHECK(rows[hp_heap_find_class_id(h, C_MAP)].instances == 2);
        free(rows);
    }
    {
        hp_dup_string *dups = NULL;
        size_t n = 0;
        uint64_t want = hp_heap_shallow_size(h, hp_heap_find(h, S2)) + hp_heap_shallow_size(h, hp_heap_find(h, S3)) +
                        hp_heap_shallow_size(h, hp_heap_find(h, S2_V));
        CHECK(hp_duplicate_strings(h, NULL, NULL, 2, &dups, &n, NULL, NULL, &err) == HP_OK && n == 1);
        CHECK(dups[0].first == hp_heap_find(h, S1) && dups[0].count == 3 && dups[0].wasted == want);
        free(dups);
        CHECK(hp_duplicate_strings(h, NULL, NULL, 1, &dups, &n, NULL, NULL, &err) == HP_OK && n == 2);
        free(dups);
    }
    {
        size_t traces = hp_heap_trace_count(h), k;
        uint64_t *objects = calloc(traces + 1, 8), *sizes = calloc(traces + 1, 8), total = 0;
        uint32_t thread, frames;
        hp_frame f;
        CHECK(traces == 1 && hp_heap_trace_serial(h, 0) == 100);
        CHECK(hp_heap_trace(h, 100, &thread, &frames) == 1 && thread == 1 && frames == 2);
        CHECK(hp_heap_trace_frame(h, 100, 1, &f) == 1 && f.line == 20 && f.class_serial == 4);
        CHECK(hp_heap_trace_frame(h, 100, 2, &f) == 0 && hp_heap_trace(h, 7, &thread, &frames) == 0);
        CHECK(hp_heap_object_trace(h, hp_heap_find(h, K1)) == 100);
        CHECK(hp_heap_site_counts(h, objects, sizes, NULL, NULL, &err) == HP_OK);
        CHECK(objects[0] == 2 && sizes[0] == hp_heap_shallow_size(h, hp_heap_find(h, K1)) * 2);
        for (k = 0; k <= traces; k++)
            total += objects[k];
        CHECK_EQ_U64(total, hp_heap_object_count(h) - hp_heap_class_count(h)); /* every instance and array once */
        free(objects);
        free(sizes);
    }
    {
        sites_seen seen = { 0, 0, 0 };
        CHECK(hp_heap_alloc_sites(h, site, &seen, &err) == HP_OK);
        CHECK(seen.sites == 2 && seen.trace == 100 && seen.live == 81);
    }
    hp_coll_free(c);
    hp_heap_free(h);
    free(b.d);

    vk_dump(&b, id_size, 1); /* ALLOC_SITES claims two sites, holds one */
    h = NULL;
    CHECK(hp_heap_build(b.d, b.len, &opt, &h, &err) == HP_OK);
    {
        sites_seen seen = { 0, 0, 0 };
        CHECK(hp_heap_alloc_sites(h, site, &seen, &err) == HP_E_TRUNCATED && err.tag == HP_TAG_ALLOC_SITES);
    }
    hp_heap_free(h);
    free(b.d);
}

/* 300,000 texts, each held by two Strings: with 32-bit hashes some texts
 * collide, and must stay apart. */
static void test_many_texts(void)
{
    enum { N = 300000 };
    static const int str_f[2] = { N_VALUE, N_CODER };
    bb b;
    hp_heap_options opt;
    hp_heap *h = NULL;
    hp_error err;
    hp_dup_string *dups = NULL;
    size_t n = 0, k;
    uint32_t i;
    vk_head(&b, 4);
    vk_load(&b, 1, C_STRING, N_STRING);
    bb_rec_begin(&b, HP_TAG_HEAP_DUMP_SEGMENT);
    vk_class(&b, C_STRING, 0, 2, str_f, T_STR);
    for (i = 0; i < N; i++) {
        char text[16];
        uint32_t len = (uint32_t)snprintf(text, sizeof text, "t%u", i);
        uint64_t base = 0x100000 + (uint64_t)i * 32;
        const uint64_t one[2] = { base + 8, 0 }, two[2] = { base + 24, 0 };
        vk_instance(&b, base, 0, C_STRING, 2, one, T_STR);
        vk_bytes(&b, base + 8, text, len);
        vk_instance(&b, base + 16, 0, C_STRING, 2, two, T_STR);
        vk_bytes(&b, base + 24, text, len);
    }
    bb_rec_end(&b);
    bb_rec_begin(&b, HP_TAG_HEAP_DUMP_END);
    bb_rec_end(&b);
    memset(&opt, 0, sizeof opt);
    CHECK(hp_heap_build(b.d, b.len, &opt, &h, &err) == HP_OK);
    CHECK(hp_duplicate_strings(h, NULL, NULL, 2, &dups, &n, NULL, NULL, &err) == HP_OK);
    CHECK_EQ_U64(n, N);
    for (k = 0; k < n; k++) {
        hp_text a, c;
        CHECK(dups[k].count == 2);
        CHECK(hp_heap_string(h, dups[k].first, &a) == 1 && hp_heap_string(h, dups[k].first + 2, &c) == 1);
        CHECK(a.units == c.units && memcmp(a.data, c.data, a.units) == 0); /* its pair: the same text */
    }
    free(dups);
    CHECK(hp_duplicate_strings(h, NULL, NULL, 3, &dups, &n, NULL, NULL, &err) == HP_OK && n == 0);
    free(dups);
    hp_heap_free(h);
    free(b.d);
}

/* A char[] of JDK 6 (or old Android) Strings, written UTF-16 big-endian. */
static void chars(bb *b, uint64_t id, const char *text)
{
    size_t k, n = strlen(text);
    bb_u1(b, HP_SUB_PRIM_ARRAY_DUMP);
    bb_id(b, id);
    bb_u4(b, 0);
    bb_u4(b, (uint32_t)n);
    bb_u1(b, HP_T_CHAR);
    for (k = 0; k < n; k++)
        bb_u2(b, (unsigned char)text[k]);
}

/* JDK 6 substrings share one char[]: an array a String of another text
 * also holds is not freed with the duplicates, and does not count as
 * wasted; one only the duplicates hold counts once. */
/* 300,000 distinct byte[]s and Object[]s, each twice: among 600,000 arrays 32-bit hashes
 * collide (some tens of pairs), and each copy must still be told from the arrays of
 * another contents sharing its hash: exactly N copies of each kind, each its pair's. */
static void test_many_arrays(void)
{
    enum { N = 300000 };
    bb b;
    hp_heap_options opt;
    hp_heap *h = NULL;
    hp_error err;
    hp_waste w;
    size_t k;
    uint32_t i;
    vk_head(&b, 4);
    bb_rec_begin(&b, HP_TAG_HEAP_DUMP_SEGMENT);
    for (i = 0; i < N; i++) {
        char text[16];
        uint32_t len = (uint32_t)snprintf(text, sizeof text, "a%u", i);
        uint64_t base = 0x100000 + (uint64_t)i * 32;
        const uint64_t elements[2] = { 0x100000 + (uint64_t)i * 32, 0x100000 + (uint64_t)(N - 1 - i) * 32 };
        vk_bytes(&b, base, text, len);
        vk_bytes(&b, base + 8, text, len);
        vk_objects(&b, base + 16, 2, elements);
        vk_objects(&b, base + 24, 2, elements);
    }
    bb_rec_end(&b);
    bb_rec_begin(&b, HP_TAG_HEAP_DUMP_END);
    bb_rec_end(&b);
    memset(&opt, 0, sizeof opt);
    CHECK(hp_heap_build(b.d, b.len, &opt, &h, &err) == HP_OK);
    CHECK(hp_waste_find(h, NULL, NULL, 1024, NULL, &w, NULL, NULL, &err) == HP_OK);
    CHECK_EQ_U64(w.kinds[HP_WASTE_DUPLICATE_ARRAYS].n, N);
    CHECK_EQ_U64(w.kinds[HP_WASTE_DUPLICATE_OBJECT_ARRAYS].n, N);
    for (k = 0; k < w.kinds[HP_WASTE_DUPLICATE_ARRAYS].n; k++) /* the second of a pair (ids base, base + 8) */
        CHECK(hp_heap_object_id(h, w.kinds[HP_WASTE_DUPLICATE_ARRAYS].items[k].index) % 32 == 8);
    for (k = 0; k < w.kinds[HP_WASTE_DUPLICATE_OBJECT_ARRAYS].n; k++)
        CHECK(hp_heap_object_id(h, w.kinds[HP_WASTE_DUPLICATE_OBJECT_ARRAYS].items[k].index) % 32 == 24);
    hp_waste_free(&w, NULL);
    hp_heap_free(h);
    free(b.d);
}

static void test_substrings_share_arrays(void)
{
    enum { N_OFFSET = 100, N_COUNT };
    enum { KEPT = 0x100, KEPT_V = 0x108, DUP_BIG = 0x110, WHOLE = 0x118, BIG = 0x120, DUP1 = 0x128, DUP2 = 0x130,
           OWN = 0x138 };
    static const int str_f[3] = { N_VALUE, N_OFFSET, N_COUNT }, str_t[3] = { HP_T_OBJECT, HP_T_INT, HP_T_INT };
    static const uint64_t kept[3] = { KEPT_V, 0, 2 }, dup_big[3] = { BIG, 3, 2 }, whole[3] = { BIG, 0, 5 },
                          dup[3] = { OWN, 0, 2 };
    bb b;
    hp_heap_options opt;
    hp_heap *h = NULL;
    hp_error err;
    hp_dup_string *dups = NULL;
    size_t n = 0;
    uint64_t want = 0;
    vk_head(&b, 4);
    bb_rec_begin(&b, HP_TAG_UTF8);
    bb_id(&b, N_OFFSET);
    bb_raw(&b, "offset", 6);
    bb_rec_end(&b);
    bb_rec_begin(&b, HP_TAG_UTF8);
    bb_id(&b, N_COUNT);
    bb_raw(&b, "count", 5);
    bb_rec_end(&b);
    vk_load(&b, 1, C_STRING, N_STRING);
    bb_rec_begin(&b, HP_TAG_HEAP_DUMP_SEGMENT);
    vk_class(&b, C_STRING, 0, 3, str_f, str_t);
    vk_instance(&b, KEPT, 0, C_STRING, 3, kept, str_t);
    chars(&b, KEPT_V, "ab");
    vk_instance(&b, DUP_BIG, 0, C_STRING, 3, dup_big, str_t); /* "ab" out of "abcab" */
    vk_instance(&b, WHOLE, 0, C_STRING, 3, whole, str_t);     /* "abcab": holds BIG too */
    chars(&b, BIG, "abcab");
    vk_instance(&b, DUP1, 0, C_STRING, 3, dup, str_t);
    vk_instance(&b, DUP2, 0, C_STRING, 3, dup, str_t);
    chars(&b, OWN, "ab");
    bb_rec_end(&b);
    bb_rec_begin(&b, HP_TAG_HEAP_DUMP_END);
    bb_rec_end(&b);
    memset(&opt, 0, sizeof opt);
    CHECK(hp_heap_build(b.d, b.len, &opt, &h, &err) == HP_OK);
    CHECK(hp_duplicate_strings(h, NULL, NULL, 2, &dups, &n, NULL, NULL, &err) == HP_OK);
    CHECK_EQ_U64(n, 1);
    want = hp_heap_shallow_size(h, hp_heap_find(h, DUP_BIG)) + hp_heap_shallow_size(h, hp_heap_find(h, DUP1)) +
           hp_heap_shallow_size(h, hp_heap_find(h, DUP2)) + hp_heap_shallow_size(h, hp_heap_find(h, OWN));
    if (n == 1) {
        CHECK(dups[0].first == hp_heap_find(h, KEPT) && dups[0].count == 4);
        CHECK_EQ_U64(dups[0].wasted, want); /* not BIG's: WHOLE keeps it */
    }
    free(dups);
    hp_heap_free(h);
    free(b.d);
}

static int stop_now(void *ctx)
{
    (void)ctx;
    return 1;
}

/* Counts an array's zero elements (primitive) or nulls (object), and its trailing zero elements. */
static void zeros_of(const hp_heap *h, uint32_t i, uint64_t *zeros, uint64_t *trailing, uint32_t *length)
{
    hp_object o;
    uint32_t size, k, j;
    hp_heap_object(h, i, &o);
    size = (uint32_t)hp_type_size(o.elem_type, hp_heap_id_size(h));
    *zeros = *trailing = 0;
    *length = o.length;
    for (k = 0; k < o.length; k++) {
        for (j = 0; j < size && o.data[(uint64_t)k * size + j] == 0; j++)
            ;
        *zeros += j == size;
        *trailing = j == size ? *trailing + 1 : 0;
    }
}

static void check_items(const hp_heap *h, const hp_waste *w)
{
    int kind;
    size_t k;
    for (kind = 0; kind < HP_WASTE_KINDS; kind++) {
        const hp_waste_list *l = &w->kinds[kind];
        uint64_t sum = 0;
        for (k = 0; k < l->n; k++) {
            uint32_t i = l->items[k].index, length;
            uint64_t zeros, trailing;
            sum += l->items[k].wasted;
            CHECK(k == 0 || l->items[k - 1].wasted >= l->items[k].wasted);
            if (kind == HP_WASTE_ZERO_ARRAYS || kind == HP_WASTE_EMPTY_ARRAYS || kind == HP_WASTE_SPARSE_ARRAYS ||
                kind == HP_WASTE_TRAILING_ZERO_ARRAYS) {
                zeros_of(h, i, &zeros, &trailing, &length);
                CHECK(length >= 1);
                if (kind == HP_WASTE_ZERO_ARRAYS || kind == HP_WASTE_EMPTY_ARRAYS) {
                    CHECK_EQ_U64(zeros, length);
                    CHECK_EQ_U64(l->items[k].wasted, hp_heap_shallow_size(h, i));
                } else if (kind == HP_WASTE_SPARSE_ARRAYS) {
                    CHECK(2 * zeros >= length);
                } else {
                    CHECK(zeros < length && 2 * trailing >= length && trailing >= HP_WASTE_TRAILING_MIN);
                }
            }
        }
        CHECK_EQ_U64(sum, l->wasted);
    }
}

/* The waste kinds of one dump of the shared data (see check_items), against hp_duplicate_strings
 * and hp_coll_waste; dup_wasted: the duplicate strings' bytes, empty: the empty collections. */
static void check_waste(const hp_heap *h, const hp_coll *c, uint64_t dup_wasted, uint64_t empty)
{
    hp_waste w;
    hp_error err;
    uint64_t sum = 0, most = 0;
    int kind;
    CHECK(hp_waste_find(h, c, NULL, 1024, NULL, &w, NULL, NULL, &err) == HP_OK);
    check_items(h, &w);
    CHECK_EQ_U64(w.kinds[HP_WASTE_DUPLICATE_STRINGS].wasted, dup_wasted);
    CHECK_EQ_U64(w.kinds[HP_WASTE_EMPTY_COLLECTIONS].n, empty);
    for (kind = 0; kind < HP_WASTE_KINDS; kind++)
        if (kind != HP_WASTE_DIRECT_BUFFERS) {
            sum += w.kinds[kind].wasted;
            most = w.kinds[kind].wasted > most ? w.kinds[kind].wasted : most;
        }
    CHECK(w.total <= sum && w.total >= most);
    hp_waste_free(&w, NULL);
    CHECK(hp_waste_find(h, c, NULL, 1024, NULL, &w, stop_now, NULL, &err) == HP_E_ABORTED);
    hp_waste_free(&w, NULL);
}

static void test_shared_dumps(void)
{
    size_t n_inv = 0, k, walked_total = 0;
    inv_entry *inv = read_inventory(&n_inv);
    CHECK(inv != NULL && n_inv > 10);
    for (k = 0; k < n_inv; k++) {
        const inv_entry *e = &inv[k];
        char rel[4352];
        uint8_t *buf;
        size_t len = 0, walked = 0;
        hp_heap_options opt;
        hp_heap *h = NULL;
        hp_coll *c = NULL;
        hp_error err;
        hp_coll_class_waste *rows;
        hp_dup_string *dups = NULL;
        size_t n_dups = 0, traces;
        uint64_t *objects, *sizes, total = 0, instances = 0, dup_wasted = 0, empty = 0;
        uint32_t i, n;
        size_t k2;
        if (strstr(e->file, ".bz2") || e->subs[HP_SUB_INSTANCE_DUMP] == 0)
            continue;
        snprintf(rel, sizeof rel, "hprof/%s", e->file);
        buf = load_dump(rel, &len);
        CHECK(buf != NULL);
        if (!buf)
            continue;
        memset(&opt, 0, sizeof opt);
        CHECK(hp_heap_build(buf, len, &opt, &h, &err) == HP_OK);
        CHECK(hp_coll_new(h, NULL, NULL, NULL, &c, &err) == HP_OK);
        n = hp_heap_object_count(h);
        for (i = 0; i < n; i++) {
            hp_coll_measure m;
            uint64_t count = 0;
            hp_code rc;
            hp_coll_measure_of(c, i, &m);
            if (m.shape == HP_COLL_NONE)
                continue;
            rc = hp_coll_walk(c, i, count_only, &count, &err);
            show_error(e->file, rc, &err);
            CHECK(rc == HP_OK);
            walked++;
        }
        walked_total += walked;
        rows = calloc(hp_heap_class_count(h) + 1, sizeof *rows);
        CHECK(rows && hp_coll_waste(c, NULL, rows, NULL, NULL, &err) == HP_OK);
        for (i = 0; rows && i < hp_heap_class_count(h); i++)
            empty += rows[i].empty;
        free(rows);
        CHECK(hp_duplicate_strings(h, NULL, NULL, 2, &dups, &n_dups, NULL, NULL, &err) == HP_OK);
        for (k2 = 0; k2 < n_dups; k2++)
            dup_wasted += dups[k2].wasted;
        free(dups);
        check_waste(h, c, dup_wasted, empty);
        traces = hp_heap_trace_count(h);
        objects = calloc(traces + 1, 8);
        sizes = calloc(traces + 1, 8);
        CHECK(hp_heap_site_counts(h, objects, sizes, NULL, NULL, &err) == HP_OK);
        for (i = 0; i <= traces; i++)
            total += objects[i];
        for (i = 0; i < n; i++)
            instances += hp_heap_object_kind(h, i) != HP_KIND_CLASS;
        CHECK_EQ_U64(total, instances);
        free(objects);
        free(sizes);
        hp_coll_free(c);
        hp_heap_free(h);
        free(buf);
    }
    CHECK(walked_total > 5000);
    free(inv);
}

/* #30: an ArrayList subclassed DEPTH times, every other subclass declaring
 * an int `size` of its own (which hides nothing from ArrayList's code);
 * one instance of the deepest holds two elements in three slots.  The
 * layouts are resolved once per class (this would take DEPTH^2 steps
 * otherwise), ArrayList's fields read where it declares them; an interrupt
 * stops the layouts and the heap index's per-class passes. */
enum { DEPTH = 20000, CHAIN0 = 0x100000 };

static int stop_at_once(void *ctx)
{
    ++*(int *)ctx;
    return 1;
}

static void chain_dump(bb *b)
{
    static const int list_f[2] = { N_ELEMENTDATA, N_SIZE }, own_f[1] = { N_SIZE }, int_t[1] = { HP_T_INT };
    uint64_t values[DEPTH / 2 + 2];
    int types[DEPTH / 2 + 2];
    const uint64_t elements[3] = { 0x10, 0x18, 0 };
    uint32_t k, n = 0;
    vk_head(b, 4);
    vk_load(b, 1, C_OBJECT, N_NAME);
    vk_load(b, 2, C_LIST, N_LIST);
    vk_load(b, 3, C_OBJARR, N_OBJARR);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_SEGMENT);
    vk_class(b, C_OBJECT, 0, 0, NULL, NULL);
    vk_class(b, C_OBJARR, C_OBJECT, 0, NULL, NULL);
    vk_class(b, C_LIST, C_OBJECT, 2, list_f, T_OO);
    for (k = 0; k < DEPTH; k++)
        vk_class(b, CHAIN0 + 8 * (uint64_t)k, k ? CHAIN0 + 8 * (uint64_t)(k - 1) : C_LIST, k % 2 ? 0 : 1, own_f, int_t);
    for (k = DEPTH; k-- > 0;) /* the deepest class's own fields first */
        if (k % 2 == 0) {
            values[n] = 0x7FFFFFFF; /* read as ArrayList's size, it would be past its slots */
            types[n++] = HP_T_INT;
        }
    values[n] = 0x20;
    types[n++] = HP_T_OBJECT;
    values[n] = 2;
    types[n++] = HP_T_INT;
    vk_instance(b, 0x08, 0, CHAIN0 + 8 * (uint64_t)(DEPTH - 1), (int)n, values, types);
    vk_objects(b, 0x20, 3, elements);
    vk_instance(b, 0x10, 0, C_OBJECT, 0, NULL, NULL);
    vk_instance(b, 0x18, 0, C_OBJECT, 0, NULL, NULL);
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_END);
    bb_rec_end(b);
}

static void test_deep_hierarchy(void)
{
    bb b;
    hp_heap_options opt;
    hp_heap *h = NULL;
    hp_coll *c = NULL;
    hp_error err;
    hp_coll_measure m;
    items it;
    int calls = 0;
    chain_dump(&b);
    memset(&opt, 0, sizeof opt);
    opt.interrupt = stop_at_once;
    opt.interrupt_ctx = &calls;
    CHECK(hp_heap_build(b.d, b.len, &opt, &h, &err) == HP_E_USAGE && calls == 1 && h == NULL);
    CHECK(err.detail && strcmp(err.detail, "interrupted") == 0);
    memset(&opt, 0, sizeof opt);
    CHECK(hp_heap_build(b.d, b.len, &opt, &h, &err) == HP_OK);
    calls = 0;
    CHECK(hp_coll_new(h, NULL, stop_at_once, &calls, &c, &err) == HP_E_ABORTED && calls == 1 && c == NULL);
    CHECK(hp_coll_new(h, NULL, NULL, NULL, &c, &err) == HP_OK);
    CHECK(walk(c, h, 0x08, &it, &err) == HP_OK && it.n == 2 && it.keys[0] == 0x10 && it.keys[1] == 0x18);
    hp_coll_measure_of(c, hp_heap_find(h, 0x08), &m);
    CHECK(m.shape == HP_COLL_LIST && m.size == 2 && m.capacity == 3 && !m.size_corrupt);
    hp_coll_free(c);
    hp_heap_free(h);
    free(b.d);
}

int main(void)
{
    test_deep_hierarchy();
    test_crafted(4);
    test_crafted(8);
    test_many_texts();
    test_many_arrays();
    test_substrings_share_arrays();
    test_shared_dumps();
    return check_report("test_values");
}
