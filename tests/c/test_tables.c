/* hp_heap_tables: the columns hold, row for row, what the heap API answers,
 * on the crafted dumps of heapkit.h (every quirk, both id sizes) and on the
 * shared dumps; retained columns match hp_reach; name validity. */
#include <zlib.h>

#include "check.h"
#include "heapkit.h"
#include "tableskit.h"

/* Every row against the API: objects, then references in source order
 * (each name code decoded back to its slot), then roots. */
static void check_tables(const hp_heap *h, const char *what)
{
    tk_tables t;
    uint32_t i, k;
    uint64_t row = 0;
    int bad = 0;
    tk_tables_fill(&t, h);
    for (i = 0; i < t.n_objects && !bad; i++) {
        hp_object o;
        hp_ref_iter it;
        hp_ref r;
        uint32_t ord;
        int heap_code;
        hp_heap_object(h, i, &o);
        heap_code = o.heap >= 0 ? t.heap_codes[o.heap] : -1;
        bad |= t.objects.id[i] != o.id || t.objects.kind[i] != (int8_t)o.kind;
        bad |= tk_bit(t.objects.class_valid, i) != (o.class_ord != HP_NONE);
        bad |= o.class_ord != HP_NONE && t.objects.class_id[i] != t.class_ids[o.class_ord];
        bad |= t.objects.shallow_size[i] != hp_heap_shallow_size(h, i);
        bad |= tk_bit(t.objects.heap_valid, i) != (heap_code >= 0);
        bad |= heap_code >= 0 && t.objects.heap[i] != heap_code;
        ord = o.kind == HP_KIND_CLASS ? o.self_ord : o.class_ord;
        hp_ref_iter_init(&it, h, i);
        while (hp_ref_next(&it, &r) && !bad) {
            uint32_t code = (uint32_t)t.refs.name[row];
            bad |= row >= t.n_refs || t.refs.source_id[row] != o.id || t.refs.target_id[row] != r.target_id;
            switch (r.kind) {
            case HP_REF_FIELD: bad |= code != t.field_base[ord] + r.slot || code >= t.field_base[ord + 1]; break;
            case HP_REF_STATIC:
                bad |= code != t.nf + t.static_base[ord] + r.slot || code >= t.nf + t.static_base[ord + 1];
                break;
            case HP_REF_LOADER: bad |= code != t.names.loader_code; break;
            default: bad |= code != t.names.element_base + r.slot || r.slot >= t.max_element; break;
            }
            row++;
        }
        if (bad)
            fprintf(stderr, "%s: object %u (row %llu) differs\n", what, i, (unsigned long long)row);
    }
    CHECK(!bad);
    CHECK_EQ_U64(row, t.n_refs);
    for (k = 0; k < t.n_roots; k++) {
        hp_root r;
        hp_heap_root(h, k, &r);
        CHECK(t.roots.object_id[k] == r.id && t.roots.kind[k] == t.kind_codes[r.kind & 0xFF]);
    }
    tk_tables_free(&t);
}

static void check_retained(const hp_heap *h, int semantics)
{
    uint32_t n = hp_heap_object_count(h), i;
    hp_retained_columns c;
    hp_reach *r = NULL;
    hp_error err;
    int bad = 0;
    CHECK(hp_reach_build(h, semantics, NULL, NULL, &r, &err) == HP_OK);
    CHECK(r && hp_reach_dominators(r, 1, NULL, &err) == HP_OK);
    if (!r)
        return;
    c.retained_size = tk_alloc(n, 8);
    c.dominator_id = tk_alloc(n, 8);
    c.dominator_valid = tk_alloc((n + 7) / 8, 1);
    for (i = 0; i < n; i += 8)
        hp_tables_retained(r, h, i, n - i > 8 ? i + 8 : n, &c);
    for (i = 0; i < n; i++) {
        uint32_t d = hp_reach_idom(r, i);
        bad |= c.retained_size[i] != hp_reach_retained(r, i) || tk_bit(c.dominator_valid, i) != (d != HP_NONE);
        bad |= d != HP_NONE && c.dominator_id[i] != hp_heap_object_id(h, d);
    }
    CHECK(!bad);
    free(c.retained_size);
    free(c.dominator_id);
    free(c.dominator_valid);
    hp_reach_free(r);
}

static void test_crafted(void)
{
    int id, flags;
    for (id = 4; id <= 8; id += 4)
        for (flags = 0; flags < 32; flags++) {
            bb b;
            hp_heap_options opt;
            hp_heap *h = NULL;
            hp_error err;
            hk_dump(&b, id, flags);
            memset(&opt, 0, sizeof opt);
            if (hp_heap_build(b.d, b.len, &opt, &h, &err) == HP_OK) {
                char what[64];
                snprintf(what, sizeof what, "crafted id %d flags %d", id, flags);
                check_tables(h, what);
                check_retained(h, HP_REACH_HPROFKIT);
                check_retained(h, HP_REACH_VISUALVM);
                hp_heap_free(h);
            } else {
                CHECK(flags & HK_CYCLE); /* the one quirk that refuses to build */
            }
            free(b.d);
        }
}

/* A dump rewritten between the passes: an object array's null element
 * turned into a reference (one row more than counted) or a reference into
 * null (one fewer); the fill reports it and writes inside its rows only
 * (ASan watches the exact-size columns). */
static void test_changed_mapping(void)
{
    int id, more;
    for (id = 4; id <= 8; id += 4)
        for (more = 0; more <= 1; more++) {
            bb b;
            hp_heap_options opt;
            hp_heap *h = NULL;
            hp_error err;
            hp_object arr;
            tk_tables t;
            uint32_t n, element = more ? 1 : 0;
            uint64_t count, row = 0;
            hk_dump(&b, id, 0);
            memset(&opt, 0, sizeof opt);
            CHECK(hp_heap_build(b.d, b.len, &opt, &h, &err) == HP_OK);
            if (!h) {
                free(b.d);
                continue;
            }
            tk_tables_fill(&t, h);
            n = hp_heap_object_count(h);
            hp_heap_object(h, hp_heap_find(h, HK_ARR1), &arr);
            /* ARR1 is {A1, null, B1}: fill the null, or empty the first. */
            memset((uint8_t *)arr.data + (size_t)element * (size_t)id, 0, (size_t)id);
            if (more)
                ((uint8_t *)arr.data)[(size_t)element * (size_t)id + (size_t)id - 1] = (uint8_t)HK_A1;
            count = t.n_refs;
            CHECK(hp_tables_refs(h, 0, n, &t.names, row, row + count, &t.refs) == 0);
            tk_tables_free(&t);
            hp_heap_free(h);
            free(b.d);
        }
}

static void test_validity(void)
{
    int32_t codes[19];
    uint8_t valid[3] = { 0xFF, 0xFF, 0xFF };
    int k;
    for (k = 0; k < 19; k++)
        codes[k] = k % 4 == 1 ? -1 : k;
    CHECK_EQ_U64(hp_tables_code_validity(codes, 19, valid), 5);
    for (k = 0; k < 19; k++)
        CHECK(tk_bit(valid, (uint64_t)k) == (k % 4 != 1) && codes[k] == (k % 4 == 1 ? 0 : k));
}

/* The shared dumps (gzip or plain; zlib reads both). */
static void test_shared_dumps(void)
{
    static const char *const files[] = {
        "mat__oracle_jdk8_05_x64.hprof", "leakcanary__leak_service_binder.hprof",
        "platform_tools_base__dialer.android-hprof", "mat__sun_jdk5_13_x32.hprof", "mat__openjdk_jdk11_04_x64.hprof.gz",
    };
    size_t k;
    for (k = 0; k < sizeof files / sizeof *files; k++) {
        char path[4352];
        gzFile gz;
        size_t cap = 64u << 20, len = 0;
        uint8_t *buf = tk_alloc(cap, 1);
        hp_heap_options opt;
        hp_heap *h = NULL;
        hp_error err;
        snprintf(path, sizeof path, "%s%s", check_data_path("hprof/"), files[k]);
        gz = gzopen(path, "rb");
        CHECK(gz != NULL);
        if (gz) {
            len = (size_t)gzread(gz, buf, (unsigned)cap);
            gzclose(gz);
        }
        memset(&opt, 0, sizeof opt);
        CHECK(len > 0 && len < cap && hp_heap_build(buf, len, &opt, &h, &err) == HP_OK);
        if (h) {
            check_tables(h, files[k]);
            check_retained(h, HP_REACH_HPROFKIT);
            hp_heap_free(h);
        }
        free(buf);
    }
}

int main(void)
{
    test_crafted();
    test_validity();
    test_changed_mapping();
    test_shared_dumps();
    return check_report("test_tables");
}
