/* hp_heap_tables: the columns hold, row for row, what the heap API answers,
 * on the crafted dumps of heapkit.h (every quirk, both id sizes) and on the
 * shared dumps (names decoded from their dictionaries, array hashes,
 * String lengths, field values); the reachability columns match hp_reach
 * and its search; a dump rewritten after the bound never writes past it. */
#include <zlib.h>

#include "check.h"
#include "heapkit.h"
#include "hp_xxh64.h"
#include "tableskit.h"

/* Name code `code` of dictionary `d` equals `want` (len bytes). */
static int entry_is(const hp_strdict *d, int32_t code, const void *want, size_t len)
{
    size_t n;
    const uint8_t *text;
    if (code < 0 || (uint32_t)code >= d->count)
        return 0;
    text = tk_entry(d, code, &n);
    return n == len && memcmp(text, want, len) == 0;
}

/* The field behind reference `r` of an object whose tables are class `ord`'s. */
static int slot_field(const hp_heap *h, uint32_t ord, const hp_ref *r, hp_field *out)
{
    uint32_t k = 0;
    if (r->kind == HP_REF_STATIC) {
        hp_static_iter si;
        hp_static_iter_init(&si, h, ord);
        while (hp_static_next(&si, out))
            if (k++ == r->slot)
                return 1;
    } else {
        hp_field_iter fi;
        hp_field_iter_init(&fi, h, ord);
        while (hp_field_next(&fi, out))
            if (out->type == HP_T_OBJECT && k++ == r->slot)
                return 1;
    }
    return 0;
}

/* Reference row `row` against reference `r` of object `i`: ids, and the
 * name decoded from its dictionary (the placeholder of a nameless field, as
 * the API names it). */
static int ref_row_differs(const tk_tables *t, const hp_heap *h, uint32_t i, uint32_t ord, const hp_ref *r,
                           uint64_t row)
{
    char want[64];
    const uint8_t *name;
    size_t len;
    hp_field f;
    int bad = t->refs.source_id[row] != (int64_t)hp_heap_object_id(h, i) ||
              t->refs.target_id[row] != (int64_t)r->target_id;
    bad |= !tk_bit(t->refs.name_valid, row) || !tk_bit(t->refs.qualified_valid, row);
    switch (r->kind) {
    case HP_REF_ELEMENT:
        len = (size_t)snprintf(want, sizeof want, "[%u]", r->slot);
        return bad | !entry_is(&t->names.names, t->refs.name[row], want, len) |
               (t->refs.qualified[row] != t->refs.name[row]);
    case HP_REF_LOADER:
        return bad | !entry_is(&t->names.names, t->refs.name[row], "<loader>", 8) |
               (t->refs.qualified[row] != t->refs.name[row]);
    default:
        if (!slot_field(h, ord, r, &f))
            return 1;
        hp_heap_field_name(h, &f, want, &name, &len);
        bad |= !entry_is(&t->names.names, t->refs.name[row], name, len);
        {   /* "Declaring.name": the declaring class's entry in the classes dictionary, a dot, the name */
            size_t cls_len, q_len;
            const uint8_t *cls = tk_entry(&t->names.classes, t->names.class_codes[f.declaring], &cls_len);
            const uint8_t *q = tk_entry(&t->names.names, t->refs.qualified[row], &q_len);
            bad |= q_len != cls_len + 1 + len || memcmp(q, cls, cls_len) != 0 || q[cls_len] != '.' ||
                   memcmp(q + cls_len + 1, name, len) != 0;
        }
        return bad;
    }
}

/* Every row against the API: objects, references in source order, String
 * values, field values, roots and classes. */
static void check_tables(const hp_heap *h, const char *what)
{
    tk_tables t;
    uint32_t i, k;
    uint64_t row = 0, counted = 0, fields = 0;
    int bad = 0;
    tk_tables_fill(&t, h);
    CHECK(t.names_ok && t.refs_ok);
    for (k = 0; k < t.names.element_count && t.names_ok && !bad; k++) { /* every "[k]", counted on from "[0]" */
        char want[16];
        bad |= !entry_is(&t.names.names, t.names.element_codes[k], want, (size_t)snprintf(want, sizeof want, "[%u]", k));
    }
    CHECK(!bad);
    CHECK(t.names.element_count == t.max_elements);
    for (i = 0; i < t.n_objects && !bad && t.names_ok; i++) {
        hp_object o;
        hp_ref_iter it;
        hp_ref r;
        hp_text text;
        int heap_code, is_string;
        hp_heap_object(h, i, &o);
        heap_code = t.heap_codes[o.heap + 1];
        bad |= t.objects.id[i] != (int64_t)o.id || t.objects.kind[i] != (int8_t)o.kind;
        bad |= tk_bit(t.objects.class_valid, i) != (o.class_ord != HP_NONE);
        bad |= o.class_ord != HP_NONE && t.objects.class_id[i] != t.class_ids[o.class_ord];
        bad |= t.objects.shallow_size[i] != (int64_t)hp_heap_shallow_size(h, i);
        bad |= tk_bit(t.objects.heap_valid, i) != (heap_code >= 0);
        bad |= heap_code >= 0 && t.objects.heap[i] != heap_code;
        bad |= tk_bit(t.objects.array_valid, i) != (o.kind == HP_KIND_OBJ_ARRAY || o.kind == HP_KIND_PRIM_ARRAY);
        bad |= tk_bit(t.objects.array_valid, i) && t.objects.array_length[i] != o.length;
        bad |= tk_bit(t.objects.hash_valid, i) != (o.kind == HP_KIND_PRIM_ARRAY);
        bad |= o.kind == HP_KIND_PRIM_ARRAY && t.objects.array_hash[i] != (int64_t)hp_xxh64(o.data, o.data_len, 0);
        bad |= tk_bit(t.objects.nulls_valid, i) != (o.kind == HP_KIND_OBJ_ARRAY);
        bad |= o.kind == HP_KIND_OBJ_ARRAY && t.objects.array_refs_hash[i] != (int64_t)hp_xxh64(o.data, o.data_len, 0);
        bad |= tk_bit(t.objects.zeros_valid, i) != (o.kind == HP_KIND_PRIM_ARRAY);
        if (o.kind == HP_KIND_OBJ_ARRAY || o.kind == HP_KIND_PRIM_ARRAY) { /* counted again, element by element */
            uint32_t size = (uint32_t)hp_type_size(o.elem_type, hp_heap_id_size(h)), k, j, zeros = 0, nulls = 0;
            for (k = 0; size && k < o.length; k++) {
                for (j = 0; j < size && o.data[(uint64_t)k * size + j] == 0; j++)
                    ;
                nulls += j == size;
                zeros = j == size ? zeros + 1 : 0;
            }
            bad |= o.kind == HP_KIND_OBJ_ARRAY && t.objects.array_nulls[i] != nulls;
            bad |= o.kind == HP_KIND_PRIM_ARRAY && t.objects.array_trailing_zeros[i] != zeros;
        }
        counted += hp_heap_instance_class(h, i) != HP_NONE;
        is_string = o.kind == HP_KIND_INSTANCE && hp_heap_string(h, i, &text) == 1;
        bad |= tk_bit(t.strings.valid, i) != is_string;
        bad |= is_string && (t.strings.length[i] != (int64_t)text.units ||
                             t.strings.offsets[i + 1] < t.strings.offsets[i] ||
                             (text.units > 0 && t.strings.offsets[i + 1] == t.strings.offsets[i]));
        hp_ref_iter_init(&it, h, i);
        while (hp_ref_next(&it, &r) && !bad) {
            bad |= row >= t.n_refs || ref_row_differs(&t, h, i, it.cls, &r, row);
            row++;
        }
        if (bad)
            fprintf(stderr, "%s: object %u (reference row %llu) differs\n", what, i, (unsigned long long)row);
    }
    CHECK(!bad);
    CHECK_EQ_U64(row, t.n_refs);
    for (k = 0; k < t.n_classes; k++)
        counted -= (uint64_t)t.objects.class_objects[k];
    CHECK_EQ_U64(counted, 0);
    /* Field values: one row per primitive field value, of objects in index order, each type's column. */
    for (row = 0; row < t.n_fields && t.names_ok; row++) {
        uint32_t at = hp_heap_find(h, (uint64_t)t.fields.object_id[row]);
        int type = t.fields.type[row] + HP_T_BOOLEAN, is_double = type == HP_T_FLOAT || type == HP_T_DOUBLE;
        bad |= at == HP_NONE || (row > 0 && at < hp_heap_find(h, (uint64_t)t.fields.object_id[row - 1]));
        bad |= type < HP_T_BOOLEAN || type > HP_T_LONG;
        bad |= tk_bit(t.fields.double_valid, row) != is_double || tk_bit(t.fields.int_valid, row) == is_double;
        bad |= t.fields.name[row] < 0 || t.fields.qualified[row] < 0;
        fields++;
    }
    CHECK(!bad);
    CHECK_EQ_U64(fields, hp_tables_count_fields(h, 0, t.n_objects));
    for (k = 0; k < t.n_roots; k++) {
        hp_root r;
        hp_heap_root(h, k, &r);
        CHECK(t.roots.object_id[k] == (int64_t)r.id && t.roots.kind[k] == t.root_codes[r.kind & 0xFF]);
    }
    for (k = 0; k < t.n_classes; k++) {
        hp_class_info c;
        hp_heap_class(h, k, &c);
        CHECK(t.classes.id[k] == (int64_t)c.id && tk_bit(t.classes.super_valid, k) == (c.super_ord != HP_NONE));
        CHECK(tk_bit(t.classes.size_valid, k) == !c.elem_type);
        CHECK(t.names.class_kinds[k] >= 0 && t.names.class_kinds[k] < HP_CK_COUNT);
    }
    tk_tables_free(&t);
}

/* The reachability columns against hp_reach and the search they come from. */
static void check_reach(const hp_heap *h, int semantics)
{
    uint32_t n = hp_heap_object_count(h), i;
    hp_reach_columns c;
    hp_reach *r = NULL;
    hp_bfs b;
    hp_error err;
    uint32_t *stack;
    int bad = 0;
    CHECK(hp_reach_build(h, semantics, NULL, NULL, &r, &err) == HP_OK);
    CHECK(r && hp_reach_dominators(r, 1, NULL, &err) == HP_OK);
    if (!r)
        return;
    CHECK(hp_reach_paths(r, NULL, NULL, 0, 0, NULL, &b, &err) == HP_OK);
    c.retained_size = tk_alloc(n, 8);
    c.dominator_id = tk_alloc(n, 8);
    c.dominator_valid = tk_alloc((n + 7) / 8, 1);
    c.reachable = tk_alloc((n + 7) / 8, 1);
    c.root_distance = tk_alloc(n, 4);
    stack = tk_alloc(n, 4);
    for (i = 0; i < n; i += 8)
        hp_tables_reach(r, &b, h, i, n - i > 8 ? i + 8 : n, &c);
    hp_tables_root_distances(&b, c.root_distance, stack);
    for (i = 0; i < n; i++) {
        uint32_t d = hp_reach_idom(r, i), p = b.parent[i];
        int reached = (int)((b.visited[i >> 6] >> (i & 63)) & 1);
        bad |= c.retained_size[i] != hp_reach_retained(r, i) || tk_bit(c.dominator_valid, i) != (d != HP_NONE);
        bad |= d != HP_NONE && c.dominator_id[i] != (int64_t)hp_heap_object_id(h, d);
        bad |= tk_bit(c.reachable, i) != reached || (c.root_distance[i] < 0) != !reached;
        /* one reference more than the object it was reached from; 0 for a root */
        bad |= reached && c.root_distance[i] != (p == HP_MARK ? 0 : c.root_distance[p] + 1);
    }
    CHECK(!bad);
    free(c.retained_size);
    free(c.dominator_id);
    free(c.dominator_valid);
    free(c.reachable);
    free(c.root_distance);
    free(stack);
    hp_bfs_free(&b);
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
                check_reach(h, HP_REACH_HPROFKIT);
                check_reach(h, HP_REACH_VISUALVM);
                hp_heap_free(h);
            } else {
                CHECK(flags & HK_CYCLE); /* the one quirk that refuses to build */
            }
            free(b.d);
        }
}

/* A dump rewritten after the bound was taken: an object array's null
 * element turned into a reference (one row more than before) or a reference
 * into null (one fewer).  The fill writes inside the bound only (ASan
 * watches columns of exactly that size): one more row at a bound of the
 * rows found before is -1, one fewer is fewer rows. */
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
            hp_ref_columns c;
            uint32_t n, element = more ? 1 : 0;
            hk_dump(&b, id, 0);
            memset(&opt, 0, sizeof opt);
            CHECK(hp_heap_build(b.d, b.len, &opt, &h, &err) == HP_OK);
            if (!h) {
                free(b.d);
                continue;
            }
            tk_tables_fill(&t, h);
            CHECK(t.names_ok && t.refs_ok);
            n = hp_heap_object_count(h);
            hp_heap_object(h, hp_heap_find(h, HK_ARR1), &arr);
            /* ARR1 is {A1, null, B1}: fill the null, or empty the first. */
            memset((uint8_t *)arr.data + (size_t)element * (size_t)id, 0, (size_t)id);
            if (more)
                ((uint8_t *)arr.data)[(size_t)element * (size_t)id + (size_t)id - 1] = (uint8_t)HK_A1;
            tk_ref_columns_alloc(&c, t.n_refs);
            CHECK(hp_tables_refs(h, 0, n, &t.names, t.n_refs, &c) == (more ? -1 : (int64_t)t.n_refs - 1));
            tk_ref_columns_free(&c);
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
            check_reach(h, HP_REACH_HPROFKIT);
            hp_heap_free(h);
        }
        free(buf);
    }
}

/* hp_strdict_append_indices: "[0]".."[n-1]" after what the dictionary
 * held, across every change of width, and from an empty dictionary (added
 * last: appended entries are not findable, hp_strdict.h). */
static void test_element_names(void)
{
    static const uint32_t counts[] = { 0, 1, 10, 11, 100, 1001, 100001 };
    size_t c;
    for (c = 0; c < sizeof counts / sizeof *counts; c++) {
        hp_strdict d;
        uint32_t i;
        int32_t first;
        int bad = 0;
        CHECK(hp_strdict_init(&d, NULL) == HP_OK);
        if (c % 2)
            CHECK(hp_strdict_add(&d, (const uint8_t *)"mField", 6) == 0);
        first = hp_strdict_append_indices(&d, counts[c]);
        CHECK(first == (int32_t)(c % 2));
        CHECK_EQ_U64(d.count, (uint64_t)first + counts[c]);
        for (i = 0; i < counts[c] && !bad; i++) {
            char want[16];
            bad |= !entry_is(&d, first + (int32_t)i, want, (size_t)snprintf(want, sizeof want, "[%u]", i));
        }
        CHECK(!bad);
        CHECK_EQ_U64(d.len, (uint64_t)d.offsets[d.count]);
        hp_strdict_free(&d);
    }
}

int main(void)
{
    test_element_names();
    test_crafted();
    test_validity();
    test_changed_mapping();
    test_shared_dumps();
    return check_report("test_tables");
}
