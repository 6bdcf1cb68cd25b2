/* libFuzzer harness for the heap index (hp_heap_build) and every read it
 * serves: the input is a whole HPROF file; when it builds, each object is
 * described, found again by its id, sized, its fields, statics, references
 * and string read; the referrer index must account for every present
 * reference, and so must the references table (hp_heap_tables.h, filled by
 * tableskit.h).  On every other input the index is first given clear names
 * (hp_heap_apply_mapping) by a mapping made from the dump's own names, and
 * the renamed classes must be found by their new names.  Every collection is
 * walked and measured (hp_coll.h), the waste per class, duplicate strings,
 * allocation counts (which must add up to the instances and arrays), stack
 * traces and ALLOC_SITES records read.  Any inconsistency aborts (a crash for
 * libFuzzer); sanitizers catch reads outside the input.
 *
 * Built with -DHP_FUZZ_SEEDGEN (a C compiler, no libFuzzer) it is the seed
 * generator instead: `seedgen OUTDIR DATADIR MAXLEN` writes the crafted
 * dumps of heapkit.h in both id sizes with each quirk. */
#ifdef HP_FUZZ_SEEDGEN
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapkit.h"
#include "valueskit.h"
#include "hp_coll.h"
#include "hp_heap.h"
#include "hp_strdup.h"
#include "hp_waste.h"
#include "hp_mapping.h"
#include "tableskit.h"

static void die(const char *what)
{
    fprintf(stderr, "fuzz_heap: %s\n", what);
    abort();
}

static void read_object(const hp_heap *h, uint32_t i, uint64_t *present_refs)
{
    hp_object o;
    hp_ref_iter it;
    hp_ref r;
    hp_text t;
    hp_field f;
    hp_heap_object(h, i, &o);
    if (hp_heap_find(h, o.id) != i)
        die("an object is not found by its id");
    (void)hp_heap_shallow_size(h, i);
    (void)hp_heap_instance_class(h, i);
    if (o.class_ord != HP_NONE) {
        hp_field_iter fi;
        hp_static_iter si;
        volatile uint8_t sink = 0;
        hp_field_iter_init(&fi, h, o.class_ord);
        while (hp_field_next(&fi, &f)) {
            const uint8_t *v = o.kind == HP_KIND_INSTANCE ? hp_field_value(&f, o.data, o.data_len, hp_heap_id_size(h)) : NULL;
            if (v)
                sink ^= v[0];
        }
        hp_static_iter_init(&si, h, o.class_ord);
        while (hp_static_next(&si, &f))
            sink ^= f.value[0];
        (void)sink;
    }
    hp_ref_iter_init(&it, h, i);
    while (hp_ref_next(&it, &r)) {
        if (r.target_id == 0)
            die("a null reference was reported");
        if (r.target != HP_NONE) {
            if (hp_heap_object_id(h, r.target) != r.target_id)
                die("a reference resolves to another object");
            ++*present_refs;
        }
        if (r.kind == HP_REF_FIELD && o.class_ord != HP_NONE)
            hp_heap_ref_field(h, o.class_ord, r.slot, &f);
    }
    if (hp_heap_string(h, i, &t) == 1) {
        size_t bytes = t.encoding == HP_TEXT_LATIN1 ? t.units : 2 * t.units;
        volatile uint8_t sink = bytes ? t.data[bytes - 1] : 0;
        (void)sink;
    }
}

typedef struct {
    const hp_heap *h;
    uint64_t items;
} item_count;

/* A key or value: a type, and for an object the index of its id (or none). */
static void check_value(const hp_heap *h, const hp_coll_value *v)
{
    if (v->type != 0 && v->type != HP_T_OBJECT && (v->type < HP_T_BOOLEAN || v->type > HP_T_LONG))
        die("a collection gave a value of no type");
    if (v->type == HP_T_OBJECT && v->index != HP_NONE && hp_heap_object_id(h, v->index) != v->id)
        die("a collection's value resolves to another object");
}

static int count_item(void *ctx, const hp_coll_value *key, const hp_coll_value *value)
{
    item_count *c = ctx;
    check_value(c->h, key);
    check_value(c->h, value);
    c->items++;
    return 0;
}

static int count_site(void *ctx, const hp_alloc_sites *record, const hp_alloc_site *site)
{
    (void)site;
    if (record->count == 0)
        die("a site of a record of no sites");
    ++*(uint64_t *)ctx;
    return 0;
}

/* Collections, strings, allocation sites and traces: each call must hold to
 * its promises on whatever the input is. */
static void read_values(const hp_heap *h)
{
    hp_coll *c = NULL;
    hp_error err;
    uint32_t n = hp_heap_object_count(h), i;
    size_t traces = hp_heap_trace_count(h), k;
    uint64_t *objects, *bytes, total = 0, instances = 0, sites = 0;
    hp_dup_string *dups = NULL;
    size_t n_dups = 0;
    if (hp_coll_new(h, NULL, NULL, NULL, &c, &err) != HP_OK)
        die("the collection layouts failed to resolve");
    for (i = 0; i < n; i++) {
        hp_coll_measure m;
        item_count items = { h, 0 };
        hp_code rc;
        hp_coll_measure_of(c, i, &m);
        rc = hp_coll_walk(c, i, count_item, &items, &err);
        if (m.shape == HP_COLL_NONE ? rc != HP_E_USAGE : rc != HP_OK && rc != HP_E_CORRUPT)
            die("a collection walk failed otherwise than as corrupt");
    }
    {
        hp_coll_class_waste *rows = calloc(hp_heap_class_count(h) + 1, sizeof *rows);
        if (!rows || hp_coll_waste(c, NULL, rows, NULL, NULL, &err) != HP_OK)
            die("the waste per class failed");
        free(rows);
    }
    { /* every waste kind over any heap: no crash, the lists' sums and the total hold */
        hp_waste w;
        uint64_t most = 0, sum = 0;
        int kind;
        if (hp_waste_find(h, c, NULL, 4, NULL, &w, NULL, NULL, &err) != HP_OK)
            die("the waste kinds failed");
        for (kind = 0; kind < HP_WASTE_KINDS; kind++) {
            uint64_t listed = 0;
            for (k = 0; k < w.kinds[kind].n; k++) {
                if (w.kinds[kind].items[k].index >= n)
                    die("a waste item names no object");
                listed += w.kinds[kind].items[k].wasted;
            }
            if (listed != w.kinds[kind].wasted)
                die("a waste kind's sum is wrong");
            if (kind != HP_WASTE_DIRECT_BUFFERS) {
                sum += listed;
                most = listed > most ? listed : most;
            }
        }
        if (w.total > sum || w.total < most)
            die("the waste total is not each object once");
        hp_waste_free(&w, NULL);
    }
    hp_coll_free(c);
    if (hp_duplicate_strings(h, NULL, NULL, 2, &dups, &n_dups, NULL, NULL, &err) != HP_OK)
        die("duplicate strings failed");
    for (k = 0; k < n_dups; k++)
        if (dups[k].count < 2 || hp_heap_string_array(h, dups[k].first) == HP_NONE)
            die("a duplicate string group is wrong");
    free(dups);
    objects = calloc(traces + 1, 8);
    bytes = calloc(traces + 1, 8);
    if (!objects || !bytes || hp_heap_site_counts(h, objects, bytes, NULL, NULL, &err) != HP_OK)
        die("the allocation counts failed");
    for (k = 0; k <= traces; k++)
        total += objects[k];
    for (i = 0; i < n; i++)
        instances += hp_heap_object_kind(h, i) != HP_KIND_CLASS;
    if (total != instances)
        die("the allocation counts do not add up to the instances and arrays");
    free(objects);
    free(bytes);
    for (k = 0; k < traces; k++) {
        uint32_t serial = hp_heap_trace_serial(h, k), thread, frames, d;
        hp_frame f;
        if (!hp_heap_trace(h, serial, &thread, &frames))
            die("a listed trace is not found");
        for (d = 0; d <= frames && d < 64; d++)
            (void)hp_heap_trace_frame(h, serial, d, &f);
    }
    (void)hp_heap_alloc_sites(h, count_site, &sites, &err);
}

/* Whether a dump's name can stand in a mapping line as it is. */
static int plain_name(const uint8_t *p, size_t n)
{
    size_t i;
    if (!n || n > 200 || p[0] == '[' || p[0] == '#')
        return 0;
    for (i = 0; i < n; i++)
        if (p[i] <= ' ' || p[i] == ':' || p[i] == '(' || p[i] == ')' || p[i] == '-' || p[i] >= 0x7F)
            return 0;
    return !(n >= 2 && p[n - 2] == '[' && p[n - 1] == ']');
}

static void put(char **text, size_t *len, size_t *cap, const void *p, size_t n)
{
    if (*len + n + 1 > *cap) {
        *cap = 2 * (*len + n + 1) + 1024;
        if (!(*text = realloc(*text, *cap)))
            die("out of memory");
    }
    memcpy(*text + *len, p, n);
    *len += n;
    (*text)[*len] = 0;
}

/* Renames the first classes of the dump Clear<k> and their fields f<j>
 * through a mapping made from their names; checks the renamed classes are
 * found by their new names. */
static void apply_own_mapping(hp_heap *h)
{
    char *text = NULL, line[64];
    size_t len = 0, cap = 0;
    uint32_t k, n = hp_heap_class_count(h) < 32 ? hp_heap_class_count(h) : 32;
    hp_mapping *m = NULL;
    hp_mapping_error merr;
    hp_heap_renames r;
    hp_error err;
    put(&text, &len, &cap, "", 0);
    for (k = 0; k < n; k++) {
        hp_class_info c;
        hp_field_iter it;
        hp_field f;
        uint32_t j = 0;
        size_t i, at;
        hp_heap_class(h, k, &c);
        if (!c.name || !plain_name(c.name, c.name_len))
            continue;
        snprintf(line, sizeof line, "Clear%u -> ", k);
        put(&text, &len, &cap, line, strlen(line));
        at = len;
        put(&text, &len, &cap, c.name, c.name_len);
        for (i = at; i < len; i++)
            text[i] = text[i] == '/' ? '.' : text[i];
        put(&text, &len, &cap, ":\n", 2);
        for (hp_field_iter_init(&it, h, k); hp_field_next(&it, &f) && f.declaring == k;) {
            const uint8_t *name;
            size_t name_len;
            if (hp_heap_utf8(h, f.name_sid, &name, &name_len) && plain_name(name, name_len) && !memchr(name, '.', name_len)) {
                snprintf(line, sizeof line, "    int f%u -> ", j++);
                put(&text, &len, &cap, line, strlen(line));
                put(&text, &len, &cap, name, name_len);
                put(&text, &len, &cap, "\n", 1);
            }
        }
    }
    if (hp_mapping_parse(NULL, text, len, &m, &merr) != HP_OK)
        die("the mapping made from the dump is malformed");
    if (hp_heap_apply_mapping(h, m, &r, &err) != HP_OK) {
        if (err.code != HP_E_LIMIT) /* a dump whose string ids reach the last 8-byte ones */
            die("hp_heap_apply_mapping failed");
        hp_mapping_free(m);
        free(text);
        return;
    }
    for (k = 0; k < n; k++) {
        hp_class_info c;
        const uint8_t *dump_name;
        size_t dump_len;
        hp_heap_class(h, k, &c);
        if (!hp_heap_class_dump_name(h, k, &dump_name, &dump_len))
            continue;
        if (c.name && c.name_len > 5 && memcmp(c.name, "Clear", 5) == 0 && plain_name(dump_name, dump_len)) {
            uint32_t found = hp_heap_find_class_name(h, (const char *)c.name, c.name_len, 0);
            if (found == HP_NONE)
                die("a renamed class is not found by its clear name");
        }
    }
    hp_mapping_free(m);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hp_heap_options opt;
    hp_heap *h = NULL;
    hp_error err;
    uint64_t present = 0, back = 0;
    uint32_t i, n, k;
    memset(&opt, 0, sizeof opt);
    opt.size_model = size % 3 == 0 ? HP_SIZES_VISUALVM : size % 3 == 1 ? HP_SIZES_UNCOMPRESSED : HP_SIZES_JVM;
    if (hp_heap_build(data, size, &opt, &h, &err) != HP_OK) {
        if (h)
            die("a failed build returned an index");
        if (err.code == HP_OK)
            die("a failed build without an error code");
        return 0;
    }
    if (size & 2)
        apply_own_mapping(h);
    n = hp_heap_object_count(h);
    for (i = 0; i < n; i++) {
        if (i > 0 && hp_heap_object_id(h, i) <= hp_heap_object_id(h, i - 1))
            die("objects out of id order");
        read_object(h, i, &present);
    }
    read_values(h);
    for (k = 0; k < hp_heap_class_count(h); k++) {
        hp_class_info c;
        hp_heap_class(h, k, &c);
        if (hp_heap_find_class_id(h, c.id) != k)
            die("a class is not found by its id");
    }
    for (k = 0; k < hp_heap_root_count(h); k++) {
        hp_root r;
        hp_frame f;
        hp_heap_root(h, k, &r);
        (void)hp_heap_thread_frame(h, r.thread_serial, r.frame, &f);
    }
    {
        tk_tables t;
        tk_tables_fill(&t, h);
        if (t.n_refs < present)
            die("the references table misses references");
        tk_tables_free(&t);
    }
    if (hp_heap_build_referrers(h, NULL, NULL, &err) == HP_OK) {
        for (i = 0; i < n; i++) {
            uint32_t count;
            hp_heap_referrers(h, i, &count);
            back += count;
        }
        if (back != present)
            die("the referrer index does not match the references");
    }
    hp_heap_free(h);
    return 0;
}

#ifdef HP_FUZZ_SEEDGEN
#include "seedgen.h"

int main(int argc, char **argv)
{
    const char *out, *data_dir;
    size_t max, n_seeds = 0;
    int id, flags;
    if (seedgen_args(argc, argv, &out, &data_dir, &max) != 0)
        return 2;
    for (id = 4; id <= 8; id += 4)
        for (flags = 0; flags < 32; flags++) {
            bb b;
            char path[4096];
            FILE *f;
            hk_dump(&b, id, flags);
            snprintf(path, sizeof path, "%s/heap-id%d-flags%d", out, id, flags);
            f = fopen(path, "wb");
            if (f && fwrite(b.d, 1, b.len < max ? b.len : max, f) > 0)
                n_seeds++;
            if (f)
                fclose(f);
            free(b.d);
        }
    for (id = 4; id <= 8; id += 4) { /* collections, Strings, traces, ALLOC_SITES (valueskit.h) */
        bb b;
        char path[4096];
        FILE *f;
        vk_dump(&b, id, 0);
        snprintf(path, sizeof path, "%s/values-id%d", out, id);
        f = fopen(path, "wb");
        if (f && fwrite(b.d, 1, b.len < max ? b.len : max, f) > 0)
            n_seeds++;
        if (f)
            fclose(f);
        free(b.d);
    }
    printf("seedgen: %zu seeds in %s\n", n_seeds, out);
    return n_seeds ? 0 : 1;
}
#endif
