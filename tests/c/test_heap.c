/* Tests of the heap index (hp_heap):
 *  - a crafted dump in both id sizes, HotSpot and Android style: objects in
 *    id order whatever the file order, kinds and classes, inherited field
 *    layouts, references (and a dangling one), referrers, strings, sizes
 *    under both models, GC roots;
 *  - dumps that lie: duplicate ids (first kept), cyclic superclasses (an
 *    error), an instance shorter than its layout (fields read as absent);
 *  - offsets beyond 4 GiB, from a sparse file;
 *  - placeholders of names the dump lacks (classes, fields, statics);
 *  - heap dumps numbered by the parser's rule (hp_dumps.h) in files that
 *    mix HEAP_DUMP records and runs of segments, with or without END;
 *  - every dump of the shared data: each object found again by its id,
 *    references and referrers consistent, sizes present; a build stopped at
 *    each of its interrupt checks fails cleanly (nothing leaked). */
#define _POSIX_C_SOURCE 200809L /* mkstemp, ftruncate, mmap */
#include "heapkit.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "hp_heap.h"

static hp_heap *build(const uint8_t *buf, size_t len, int model, hp_code *rc, hp_error *err)
{
    hp_heap_options opt;
    hp_heap *h = NULL;
    memset(&opt, 0, sizeof opt);
    opt.size_model = model;
    *rc = hp_heap_build(buf, len, &opt, &h, err);
    return h;
}

/* An interrupt callback that asks to stop at its `stop_at`-th call (never
 * when 0), counting its calls; it checks the position the build reports
 * (opt.position): it only grows, within the file (tests/test_progress.py
 * sees it grow over a 40 MB dump: it moves every 16 MB). */
typedef struct {
    unsigned calls, stop_at;
    uint64_t position, last, len;
} interrupter;

static int interrupt_at(void *ctx)
{
    interrupter *in = ctx;
    CHECK(in->position >= in->last && in->position <= in->len);
    in->last = in->position;
    return ++in->calls == in->stop_at;
}

/* Builds `buf` once counting the interrupt checks (a small dump may have
 * none), then once stopped at each of them: every stopped build fails with
 * "interrupted" and holds nothing.  Returns the number of checks. */
static unsigned check_interrupted_builds(const uint8_t *buf, size_t len)
{
    interrupter in;
    hp_heap_options opt;
    hp_heap *h = NULL;
    hp_error err;
    unsigned k, checks;
    memset(&in, 0, sizeof in);
    in.len = len;
    memset(&opt, 0, sizeof opt);
    opt.interrupt = interrupt_at;
    opt.interrupt_ctx = &in;
    opt.position = &in.position;
    CHECK(hp_heap_build(buf, len, &opt, &h, &err) == HP_OK && h != NULL);
    hp_heap_free(h);
    checks = in.calls;
    for (k = 1; k <= checks; k++) {
        in.calls = 0;
        in.position = in.last = 0;
        in.stop_at = k;
        h = NULL;
        CHECK(hp_heap_build(buf, len, &opt, &h, &err) == HP_E_USAGE);
        CHECK(h == NULL && err.detail != NULL && strcmp(err.detail, "interrupted") == 0);
    }
    return checks;
}

static uint32_t find(const hp_heap *h, uint64_t id)
{
    uint32_t i = hp_heap_find(h, id);
    CHECK(i != HP_NONE);
    return i;
}

static int field_named(const hp_heap *h, uint32_t cls, const char *name, hp_field *out)
{
    hp_field_iter it;
    hp_field_iter_init(&it, h, cls);
    while (hp_field_next(&it, out)) {
        const uint8_t *text;
        size_t len;
        if (hp_heap_utf8(h, out->name_sid, &text, &len) && len == strlen(name) && !memcmp(text, name, len))
            return 1;
    }
    return 0;
}

static void test_crafted(int id_size, int flags)
{
    bb b;
    hp_error err;
    hp_code rc;
    hp_heap *h;
    hp_object o;
    hp_ref_iter it;
    hp_ref r;
    hp_field f;
    hp_text t;
    uint32_t i, a1, b1, n, count, first;
    const uint32_t *src;
    uint64_t prev = 0;
    int android = (flags & HK_ANDROID) != 0;

    hk_dump(&b, id_size, flags);
    h = build(b.d, b.len, HP_SIZES_UNCOMPRESSED, &rc, &err);
    show_error("crafted", rc, &err);
    CHECK(rc == HP_OK && h);
    if (!h) {
        free(b.d);
        return;
    }
    /* 6 classes, 6 objects (7 with the short one). */
    n = hp_heap_object_count(h);
    CHECK_EQ_U64(hp_heap_class_count(h), 6);
    CHECK_EQ_U64(n, 12 + ((flags & HK_SHORT) ? 1 : 0));
    CHECK_EQ_U64(hp_heap_duplicate_count(h), (flags & HK_DUPLICATE) ? 1 : 0);
    for (i = 0; i < n; i++) {
        CHECK(hp_heap_object_id(h, i) > prev);
        prev = hp_heap_object_id(h, i);
        CHECK_EQ_U64(hp_heap_find(h, prev), i);
    }
    CHECK(hp_heap_find(h, HK_MISSING) == HP_NONE && hp_heap_find(h, HK_A1 + 1) == HP_NONE);
    CHECK(hp_heap_find(h, 0) == HP_NONE && hp_heap_find(h, ~0ULL) == HP_NONE);

    a1 = find(h, HK_A1);
    b1 = find(h, HK_B1);
    hp_heap_object(h, a1, &o);
    CHECK(o.kind == HP_KIND_INSTANCE && o.class_ord == hp_heap_find_class_id(h, HK_A));
    CHECK(field_named(h, o.class_ord, "x", &f) && f.type == HP_T_INT);
    CHECK(hp_field_value(&f, o.data, o.data_len, id_size) && (int32_t)hp_be32(o.data + f.offset) == -3);
    /* The duplicate (x = 99) was dropped: the first in file order stays. */
    hp_heap_object(h, b1, &o);
    CHECK(field_named(h, o.class_ord, "l", &f) && f.declaring == hp_heap_find_class_id(h, HK_A));
    CHECK_EQ_U64(f.offset, (uint64_t)id_size + 4 + id_size); /* B.other, A.x, A.ref, then A.l */
    CHECK_EQ_U64(hp_be64(o.data + f.offset), 0x0102030405060708ULL);

    /* References of B1: other -> A1, ref -> "hi" or a missing id. */
    hp_ref_iter_init(&it, h, b1);
    CHECK(hp_ref_next(&it, &r) && r.kind == HP_REF_FIELD && r.slot == 0 && r.target == a1);
    CHECK(hp_ref_next(&it, &r) && r.slot == 1);
    if (flags & HK_DANGLING)
        CHECK(r.target_id == HK_MISSING && r.target == HP_NONE);
    else
        CHECK(r.target == find(h, HK_STR1));
    CHECK(!hp_ref_next(&it, &r));
    hp_heap_ref_field(h, hp_heap_object_class(h, b1), 1, &f);
    CHECK(f.declaring == hp_heap_find_class_id(h, HK_A));
    /* Dangling: A's and B's class loader (absent), and the missing id. */
    CHECK_EQ_U64(hp_heap_count_dangling(h, NULL, NULL, (int *)&count), 2 + ((flags & HK_DANGLING) ? 1 : 0));

    /* The object array skips its null; the class object holds its static and loader. */
    hp_ref_iter_init(&it, h, find(h, HK_ARR1));
    CHECK(hp_ref_next(&it, &r) && r.kind == HP_REF_ELEMENT && r.slot == 0 && r.target == a1);
    CHECK(hp_ref_next(&it, &r) && r.slot == 2 && r.target == b1);
    CHECK(!hp_ref_next(&it, &r));
    hp_ref_iter_init(&it, h, find(h, HK_A));
    CHECK(hp_ref_next(&it, &r) && r.kind == HP_REF_STATIC && r.target == a1);
    CHECK(hp_ref_next(&it, &r) && r.kind == HP_REF_LOADER && r.target_id == HK_LOADER && r.target == HP_NONE);
    CHECK(!hp_ref_next(&it, &r));

    /* Referrers of A1: B1.other, the array, A's static. */
    CHECK(hp_heap_build_referrers(h, NULL, NULL, &err) == HP_OK);
    src = hp_heap_referrers(h, a1, &count);
    CHECK_EQ_U64(count, 3);
    for (i = 0; i + 1 < count; i++)
        CHECK(src[i] <= src[i + 1]);

    /* Strings and kinds. */
    CHECK(hp_heap_string(h, find(h, HK_STR1), &t) == 1 && t.units == 2 && t.encoding == HP_TEXT_UTF16BE &&
          t.data[1] == 'h' && t.data[3] == 'i');
    CHECK(hp_heap_string(h, a1, &t) == 0);
    CHECK(hp_heap_object_kind(h, find(h, HK_BYTES1)) == HP_KIND_PRIM_ARRAY);
    CHECK(hp_heap_object_kind(h, find(h, HK_STRING)) == HP_KIND_CLASS);
    CHECK(hp_heap_object_class(h, find(h, HK_CHARS + 0)) == hp_heap_class_class(h) ||
          hp_heap_class_class(h) == HP_NONE);
    CHECK(hp_heap_object_class(h, find(h, HK_STR1_VALUE)) == hp_heap_find_class_id(h, HK_CHARS));

    /* Sizes, uncompressed: header of two ids, 8-byte alignment; Android: as written. */
    if (android) {
        CHECK_EQ_U64(hp_heap_shallow_size(h, a1), 24);
        CHECK_EQ_U64(hp_heap_shallow_size(h, find(h, HK_BYTES1)), 8 * ((8 + 4 + 5 + 7) / 8));
    } else {
        CHECK_EQ_U64(hp_heap_shallow_size(h, a1), hp_size_align(2 * (uint64_t)id_size + 4 + id_size + 8));
        CHECK_EQ_U64(hp_heap_shallow_size(h, find(h, HK_ARR1)), hp_size_align(2 * (uint64_t)id_size + 4 + 3 * id_size));
    }
    {
        /* The JVM's layout from a dozen gaps: too few, VisualVM's guess stays
         * (references at id size: the dump has none of its clues). */
        hp_heap *jvm = build(b.d, b.len, HP_SIZES_JVM, &rc, &err);
        const hp_layout_evidence *ev = jvm ? hp_heap_layout_evidence(jvm) : NULL;
        CHECK(rc == HP_OK && jvm && hp_heap_size_model_kind(jvm) == HP_SIZES_JVM);
        CHECK(ev && !ev->inferred && ev->gaps < 16 && (!android || ev->gaps == 0)); /* Android: no inference */
        for (i = 0; jvm && i < n; i++)
            CHECK_EQ_U64(hp_heap_shallow_size(jvm, i), hp_heap_shallow_size(h, i));
        hp_heap_free(jvm);
    }

    /* Roots. */
    CHECK_EQ_U64(hp_heap_root_count(h), 2);
    CHECK_EQ_U64(hp_heap_object_roots(h, b1, &first), 1);
    CHECK_EQ_U64(hp_heap_object_roots(h, a1, &first), 0);
    if (android) {
        const uint8_t *name;
        size_t len;
        hp_heap_object(h, a1, &o);
        CHECK(hp_heap_heap_name(h, o.heap, &name, &len) && len == 3 && !memcmp(name, "app", 3));
    }
    if (flags & HK_SHORT) {
        /* A B instance of 2 bytes: no field is readable, no reference read. */
        uint32_t s = find(h, HK_SHORT1);
        hp_heap_object(h, s, &o);
        CHECK(field_named(h, o.class_ord, "other", &f) && !hp_field_value(&f, o.data, o.data_len, id_size));
        hp_ref_iter_init(&it, h, s);
        CHECK(!hp_ref_next(&it, &r));
    }
    hp_heap_free(h);
    free(b.d);
}

static void test_cycle(int id_size)
{
    bb b;
    hp_error err;
    hp_code rc;
    hk_dump(&b, id_size, HK_CYCLE);
    CHECK(build(b.d, b.len, HP_SIZES_VISUALVM, &rc, &err) == NULL);
    CHECK(rc == HP_E_CORRUPT && err.tag == HP_SUB_CLASS_DUMP && err.offset > 0 && err.offset < b.len);
    free(b.d);
}

static void test_truncations(void)
{
    bb b;
    size_t cut;
    hk_dump(&b, 8, HK_DANGLING | HK_SHORT);
    /* Every prefix fails cleanly (or, when it ends on a record boundary, builds). */
    for (cut = 0; cut < b.len; cut += 7) {
        hp_error err;
        hp_code rc;
        hp_heap *h = build(b.d, cut, HP_SIZES_VISUALVM, &rc, &err);
        CHECK((rc == HP_OK) == (h != NULL));
        hp_heap_free(h);
    }
    free(b.d);
}

/* The head of a HEAP_DUMP_SEGMENT holding one byte array of `big` bytes
 * (4-byte ids), whose payload a sparse file leaves as a hole. */
static void big_segment(bb *b, uint32_t big, uint32_t id)
{
    bb_u1(b, HP_TAG_HEAP_DUMP_SEGMENT);
    bb_u4(b, 0);
    bb_u4(b, 1 + 4 + 4 + 4 + 1 + big);
    bb_u1(b, HP_SUB_PRIM_ARRAY_DUMP);
    bb_u4(b, id);
    bb_u4(b, 1);
    bb_u4(b, big);
    bb_u1(b, HP_T_BYTE);
}

/* A file of more than 4 GiB, sparse: two segments of a 2.5 GB byte array
 * each, then the crafted heap segment, whose objects lie beyond 4 GiB. */
static void test_large_offsets(void)
{
    char path[] = "/tmp/hprofkit-heap-XXXXXX";
    const uint32_t big = 2500000000u;
    int fd = mkstemp(path);
    bb dump, seg1, seg2;
    uint64_t total, at2, at3;
    size_t pos, heap_at = 0;
    uint8_t *map;
    hp_error err;
    hp_code rc;
    hp_heap *h;
    if (fd < 0) {
        fprintf(stderr, "  (no temporary file: large offsets skipped)\n");
        return;
    }
    unlink(path);
    hk_dump(&dump, 4, 0);
    for (pos = 31; pos < dump.len; pos += 9 + hp_be32(dump.d + pos + 5)) /* JAVA PROFILE 1.0.2 header: 31 bytes */
        if (dump.d[pos] == HP_TAG_HEAP_DUMP_SEGMENT) {
            heap_at = pos;
            break;
        }
    memset(&seg1, 0, sizeof seg1);
    memset(&seg2, 0, sizeof seg2);
    bb_raw(&seg1, dump.d, heap_at);
    big_segment(&seg1, big, 0x40);
    big_segment(&seg2, big, 0x48);
    at2 = seg1.len + (uint64_t)big;
    at3 = at2 + seg2.len + big;
    total = at3 + (dump.len - heap_at);
    CHECK(heap_at > 0);
    if (ftruncate(fd, (off_t)total) != 0 || pwrite(fd, seg1.d, seg1.len, 0) != (ssize_t)seg1.len ||
        pwrite(fd, seg2.d, seg2.len, (off_t)at2) != (ssize_t)seg2.len ||
        pwrite(fd, dump.d + heap_at, dump.len - heap_at, (off_t)at3) != (ssize_t)(dump.len - heap_at)) {
        fprintf(stderr, "  (cannot write the sparse file: large offsets skipped)\n");
        total = 0;
    }
    map = total ? mmap(NULL, (size_t)total, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (map != MAP_FAILED) {
        h = build(map, (size_t)total, HP_SIZES_VISUALVM, &rc, &err);
        show_error("large", rc, &err);
        CHECK(rc == HP_OK);
        if (h) {
            hp_object o;
            uint32_t a1 = hp_heap_find(h, HK_A1);
            CHECK(a1 != HP_NONE);
            hp_heap_object(h, a1, &o);
            CHECK(o.offset > 0xFFFFFFFFull);
            CHECK(o.kind == HP_KIND_INSTANCE);
            CHECK_EQ_U64(hp_be32(o.data), (uint32_t)-3);
            CHECK_EQ_U64(hp_heap_object_count(h), 14);
            hp_heap_object(h, hp_heap_find(h, 0x48), &o);
            CHECK(o.kind == HP_KIND_PRIM_ARRAY && o.length == big && o.offset == at2 + 9);
            hp_heap_free(h);
        }
        munmap(map, (size_t)total);
    }
    close(fd);
    free(dump.d);
    free(seg1.d);
    free(seg2.d);
}

/* Every shared dump (decompressed when gzip): consistency of the index. */
/* hp_heap_object_row says what the single look-ups and hp_heap_object say. */
static int row_agrees(const hp_heap *h, uint32_t i)
{
    hp_object_row row;
    hp_object obj;
    int prim;
    hp_heap_object_row(h, i, &row);
    hp_heap_object(h, i, &obj);
    prim = obj.kind == HP_KIND_PRIM_ARRAY;
    return row.id == obj.id && row.kind == obj.kind && row.kind == hp_heap_object_kind(h, i) &&
           row.class_ord == obj.class_ord && row.counted_ord == hp_heap_instance_class(h, i) &&
           row.shallow_size == hp_heap_shallow_size(h, i) && row.heap == obj.heap && row.length == obj.length &&
           row.elements == (prim ? obj.data : NULL) && row.elements_len == (prim ? obj.data_len : 0);
}

static void test_shared_dumps(void)
{
    size_t n_inv = 0, k;
    unsigned interrupt_checks = 0;
    inv_entry *inv = read_inventory(&n_inv);
    CHECK(inv != NULL && n_inv > 10);
    for (k = 0; k < n_inv; k++) {
        const inv_entry *e = &inv[k];
        char path[4352];
        gzFile gz;
        uint8_t *buf;
        size_t len = 0, cap = e->dsize ? e->dsize : e->size;
        hp_error err;
        hp_code rc;
        hp_heap *h;
        uint64_t refs = 0, back = 0;
        uint32_t i, n;
        if (strstr(e->file, ".bz2"))
            continue; /* zlib reads gzip only */
        snprintf(path, sizeof path, "%s%s", check_data_path("hprof/"), e->file);
        gz = gzopen(path, "rb");
        buf = xmalloc(cap + 1);
        if (gz)
            len = (size_t)gzread(gz, buf, (unsigned)cap + 1);
        if (gz)
            gzclose(gz);
        CHECK(len == cap);
        h = build(buf, len, HP_SIZES_VISUALVM, &rc, &err);
        if (e->subs[HP_SUB_INSTANCE_DUMP] == 0) {
            CHECK(rc == HP_E_NO_DUMP && h == NULL); /* no heap dump */
            free(buf);
            continue;
        }
        show_error(e->file, rc, &err);
        CHECK(rc == HP_OK);
        if (!h) {
            free(buf);
            continue;
        }
        n = hp_heap_object_count(h);
        for (i = 0; i < n; i++) {
            hp_ref_iter it;
            hp_ref r;
            if (hp_heap_find(h, hp_heap_object_id(h, i)) != i || !row_agrees(h, i))
                break;
            hp_ref_iter_init(&it, h, i);
            while (hp_ref_next(&it, &r))
                refs += r.target != HP_NONE;
        }
        CHECK_EQ_U64(i, n);
        CHECK(hp_heap_build_referrers(h, NULL, NULL, &err) == HP_OK);
        for (i = 0; i < n; i++) {
            uint32_t count;
            hp_heap_referrers(h, i, &count);
            back += count;
        }
        CHECK_EQ_U64(back, refs);
        hp_heap_free(h);
        interrupt_checks += check_interrupted_builds(buf, len);
        free(buf);
    }
    CHECK(interrupt_checks > 0); /* some builds were stopped */
    free(inv);
}

/* Heap dumps are numbered by hp_dumps.h's one rule, as the parser numbers
 * them (stats, dump.heap_dumps): a HEAP_DUMP is one heap dump; a run of
 * segments is one, closed by its HEAP_DUMP_END or cut short by a HEAP_DUMP.
 * Each pattern below ('S' segment, 'D' HEAP_DUMP, 'E' HEAP_DUMP_END, 'L' a
 * LOAD_CLASS between them) is written with one byte[] per heap record; the
 * heap of dump N must hold exactly the arrays of the records numbered N by
 * the rule, modelled here on its own.  VisualVM's rule (HEAP_DUMP records
 * only, when a file has any) saw "SSD" as 1 heap dump and "SDSD" as 2. */
static void test_dump_numbering(void)
{
    static const char *const patterns[] = { "SSD", "SDSD", "SSE", "SESE", "SSESD", "DD", "DSSE", "DSS",
                                            "SLSE", "SELSE", "DEDE", "ESSE", "SSDSSE", "D", "S", "E", "L", "" };
    size_t p;
    for (p = 0; p < sizeof patterns / sizeof *patterns; p++) {
        const char *pattern = patterns[p];
        uint8_t header[HP_HEADER_MAX];
        uint32_t of_record[16], expected = 0, n, k;
        int open = 0;
        size_t i, len = strlen(pattern);
        bb b;
        memset(&b, 0, sizeof b);
        b.id = 4;
        bb_raw(&b, header, hp_header_write(header, 2, 4, 1700000000000ULL));
        for (i = 0; i < len; i++) {
            char c = pattern[i];
            of_record[i] = UINT32_MAX;
            if (c == 'D' || (c == 'S' && !open)) {
                of_record[i] = expected++;
                open = c == 'S';
            } else if (c == 'S') {
                of_record[i] = expected - 1;
            } else if (c == 'E') {
                open = 0;
            }
            if (c == 'L') {
                hk_load(&b, (uint32_t)i, 0x50, 1);
                continue;
            }
            bb_rec_begin(&b, c == 'D' ? HP_TAG_HEAP_DUMP : c == 'S' ? HP_TAG_HEAP_DUMP_SEGMENT : HP_TAG_HEAP_DUMP_END);
            if (c != 'E') {
                bb_u1(&b, HP_SUB_PRIM_ARRAY_DUMP); /* byte[1], its id telling its record */
                bb_id(&b, 0x1000 + 8 * i);
                bb_u4(&b, 1);
                bb_u4(&b, 1);
                bb_u1(&b, HP_T_BYTE);
                bb_u1(&b, (unsigned)i);
            }
            bb_rec_end(&b);
        }
        for (n = 0; n <= expected; n++) {
            hp_heap_options opt;
            hp_heap *h = NULL;
            hp_error err;
            hp_code rc;
            uint32_t held = 0;
            memset(&opt, 0, sizeof opt);
            opt.heap_dump = n;
            rc = hp_heap_build(b.d, b.len, &opt, &h, &err);
            if (n == expected) { /* one past the last: no such heap dump */
                CHECK(rc == HP_E_NO_DUMP && h == NULL);
                CHECK(strstr(err.text, expected ? "no heap dump" : "holds no heap dump") != NULL);
                continue;
            }
            CHECK(rc == HP_OK && h != NULL);
            if (!h)
                continue;
            CHECK(hp_heap_dump_count(h) == expected);
            for (i = 0; i < len; i++) {
                int here = hp_heap_find(h, 0x1000 + 8 * i) != HP_NONE;
                CHECK(here == (of_record[i] == n));
                held += (uint32_t)here;
            }
            for (k = 0; k < hp_heap_object_count(h); k++)
                CHECK(hp_heap_object_id(h, k) >= 0x1000); /* nothing but the arrays */
            CHECK(hp_heap_object_count(h) == held);
            hp_heap_free(h);
        }
        free(b.d);
    }
}

/* Names the dump lacks get hp_unnamed's placeholders: class HK_A (its
 * LOAD_CLASS dropped) is "<unnamed class 0x110>", and a class whose static
 * and second field are named by a STRING the dump lacks has "<unnamed static
 * #0>" and "<unnamed field #1>"; look-ups by name find them by those. */
static void test_unnamed(void)
{
    static const uint64_t names[2] = { 3, 0x4242 };
    static const int types[2] = { HP_T_INT, HP_T_OBJECT };
    uint8_t header[HP_HEADER_MAX];
    char buf[HP_UNNAMED_MAX];
    const uint8_t *text;
    size_t len;
    hp_static_iter si;
    hp_field_iter fi;
    hp_field f;
    hp_error err;
    hp_code rc;
    hp_heap *h;
    uint32_t ord;
    bb b;
    CHECK(hp_unnamed(buf, HP_UNNAMED_CLASS, 0x1a2b) == 22 && strcmp(buf, "<unnamed class 0x1a2b>") == 0);
    CHECK(hp_unnamed(buf, HP_UNNAMED_FIELD, 3) == 18 && strcmp(buf, "<unnamed field #3>") == 0);
    CHECK(hp_unnamed(buf, HP_UNNAMED_STATIC, 0) == 19 && strcmp(buf, "<unnamed static #0>") == 0);
    CHECK(hp_unnamed(buf, HP_UNNAMED_METHOD, 0) == 16 && strcmp(buf, "<unnamed method>") == 0);
    CHECK(hp_unnamed(buf, HP_UNNAMED_CLASS, UINT64_MAX) < HP_UNNAMED_MAX);
    memset(&b, 0, sizeof b);
    b.id = 4;
    bb_raw(&b, header, hp_header_write(header, 2, 4, 1700000000000ULL));
    hk_string(&b, 1, "java/lang/Object");
    hk_string(&b, 3, "x");
    hk_load(&b, 1, HK_OBJECT, 1);
    hk_load(&b, 2, HK_B, 0x4343); /* a STRING the dump lacks */
    bb_rec_begin(&b, HP_TAG_HEAP_DUMP_SEGMENT);
    hk_class(&b, HK_OBJECT, 0, 0, 0, 0, NULL, NULL, 0);
    hk_class(&b, HK_A, HK_OBJECT, 0, 8, 2, names, types, 0); /* its static: sid 9, missing too */
    hk_class(&b, HK_B, HK_OBJECT, 0, 0, 0, NULL, NULL, 0);
    bb_rec_end(&b);
    h = build(b.d, b.len, HP_SIZES_VISUALVM, &rc, &err);
    CHECK(rc == HP_OK && h != NULL);
    if (h) {
        ord = hp_heap_find_class_name(h, "<unnamed class 0x110>", 21, 0);
        CHECK(ord != HP_NONE && ord == hp_heap_find_class_id(h, HK_A));
        CHECK(hp_heap_find_class_name(h, "<unnamed class 0x118>", 21, 0) == hp_heap_find_class_id(h, HK_B));
        hp_static_iter_init(&si, h, ord);
        CHECK(hp_static_next(&si, &f) && f.is_static && f.number == 0);
        CHECK(hp_heap_field_name(h, &f, buf, &text, &len) == 0 && len == 19 && !memcmp(text, "<unnamed static #0>", 19));
        CHECK(hp_heap_field_is(h, &f, "<unnamed static #0>", 19) && !hp_heap_field_is(h, &f, "<unnamed field #0>", 18));
        hp_field_iter_init(&fi, h, ord);
        CHECK(hp_field_next(&fi, &f) && !f.is_static && f.number == 0);
        CHECK(hp_heap_field_name(h, &f, buf, &text, &len) == 1 && len == 1 && text[0] == 'x');
        CHECK(hp_field_next(&fi, &f) && f.number == 1 && f.type == HP_T_OBJECT);
        CHECK(hp_heap_field_name(h, &f, buf, &text, &len) == 0 && len == 18 && !memcmp(text, "<unnamed field #1>", 18));
        CHECK(hp_heap_field_is(h, &f, "<unnamed field #1>", 18));
        hp_heap_free(h);
    }
    free(b.d);
}

int main(void)
{
    int id, flags;
    for (id = 4; id <= 8; id += 4)
        for (flags = 0; flags < 32; flags++)
            if (!(flags & HK_CYCLE))
                test_crafted(id, flags);
    test_cycle(4);
    test_cycle(8);
    test_truncations();
    test_large_offsets();
    test_dump_numbering();
    test_unnamed();
    test_shared_dumps();
    return check_report("test_heap");
}
