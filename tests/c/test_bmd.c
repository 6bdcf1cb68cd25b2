/* Badoo's BMD format: the encoder and decoder against the golden vectors
 * Badoo's own cruncher and decruncher wrote (../shared/data/bmd), for any
 * chunking; Java's String rules and HashMap order as the JVM has them;
 * identifier size 8, a class dumped before its LOAD_CLASS, heaps cut in
 * segments; every refusal of a hostile BMD or HPROF (one error naming the
 * offset, memory bounded), and truncation / corruption sweeps. */
#include "testkit.h"
#include "bmdkit.h"
#include "countalloc.h"
#include "hp_bmd.h"
#include "hp_bmd_classes.h"
#include "hp_parser.h"

static uint32_t rng_state = 4242;

/* ---- running a filter over all its passes ---- */

typedef struct run {
    hp_code rc;
    hp_error err;
    mem_sink out;
    int passes;
    uint64_t counts[BMD_TAGS];
} run;

/* Feeds `data` as often as the filter asks, in chunks of `step` bytes (0:
 * whole; random 1..step when `random`). */
static void run_filter(int encode, const uint8_t *data, size_t len, const hp_bmd_options *opts, size_t step,
                       int random, const hp_alloc *alloc, run *r)
{
    hp_bmd_encoder *e = encode ? hp_bmd_encoder_new(alloc, opts) : NULL;
    hp_bmd_decoder *d = encode ? NULL : hp_bmd_decoder_new(alloc, opts);
    hp_sink sink = { mem_write, &r->out, NULL };
    int again;
    memset(r, 0, sizeof *r);
    sink.ctx = &r->out;
    if (!e && !d) {
        r->rc = HP_E_NOMEM;
        return;
    }
    do {
        size_t pos = 0;
        r->passes++;
        while (r->rc == HP_OK && pos < len) {
            size_t n = step == 0 ? len - pos : (random ? 1 + xorshift(&rng_state) % step : step);
            if (n > len - pos)
                n = len - pos;
            r->rc = encode ? hp_bmd_encoder_feed(e, data + pos, n, &sink, &r->err)
                           : hp_bmd_decoder_feed(d, data + pos, n, &sink, &r->err);
            pos += n;
        }
        if (r->rc == HP_OK)
            r->rc = encode ? hp_bmd_encoder_finish(e, &sink, &r->err) : hp_bmd_decoder_finish(d, &sink, &r->err);
        again = r->rc == HP_OK && (encode ? hp_bmd_encoder_again(e) : hp_bmd_decoder_again(d));
    } while (again);
    if (r->rc == HP_OK)
        memcpy(r->counts, encode ? hp_bmd_encoder_counts(e) : hp_bmd_decoder_counts(d), sizeof r->counts);
    hp_bmd_encoder_free(e);
    hp_bmd_decoder_free(d);
}

static void run_free(run *r) { free(r->out.d); }

/* The error message of a failed run. */
static const char *message(const run *r)
{
    static char msg[256];
    hp_error_format(&r->err, msg, sizeof msg);
    return msg;
}

/* ---- golden vectors ---- */

static const char *const vectors[][2] = {
    { "hprof/leakcanary__leak_service_binder.hprof", "leakcanary__leak_service_binder" },
    { "hprof/platform_tools_base__dialer.android-hprof", "platform_tools_base__dialer" },
    { "obfuscated/heapgen_s5_16mb_obf_android.hprof.gz", "heapgen_s5_16mb_obf_android" },
};

static void test_golden(void)
{
    size_t v;
    for (v = 0; v < sizeof vectors / sizeof vectors[0]; v++) {
        char rel[256];
        size_t hlen, blen, dlen;
        uint8_t *hprof = load_dump(vectors[v][0], &hlen), *bmd, *dec;
        run r;
        snprintf(rel, sizeof rel, "bmd/%s.bmd", vectors[v][1]);
        bmd = load_dump(rel, &blen);
        snprintf(rel, sizeof rel, "bmd/%s.decrunched.hprof.gz", vectors[v][1]);
        dec = load_dump(rel, &dlen);
        CHECK(hprof && bmd && dec);
        if (!hprof || !bmd || !dec)
            continue;
        /* whole, then in random chunks */
        run_filter(1, hprof, hlen, NULL, 0, 0, NULL, &r);
        CHECK(r.rc == HP_OK && r.passes == 2);
        CHECK(same_bytes(vectors[v][1], r.out.d, r.out.len, bmd, blen));
        run_free(&r);
        run_filter(1, hprof, hlen, NULL, 5000, 1, NULL, &r);
        CHECK(r.rc == HP_OK && same_bytes("encoded in chunks", r.out.d, r.out.len, bmd, blen));
        run_free(&r);
        run_filter(0, bmd, blen, NULL, 0, 0, NULL, &r);
        CHECK(r.rc == HP_OK && r.passes == 5);
        CHECK(same_bytes("decrunched", r.out.d, r.out.len, dec, dlen));
        CHECK(r.counts[BMD_INSTANCE] > 1000 && r.counts[BMD_ROOTS] == 1);
        run_free(&r);
        run_filter(0, bmd, blen, NULL, 40, 1, NULL, &r); /* units cut everywhere */
        CHECK(r.rc == HP_OK && same_bytes("decoded in chunks", r.out.d, r.out.len, dec, dlen));
        run_free(&r);
        free(hprof);
        free(bmd);
        free(dec);
    }
}

/* The jar's class names give back the four classes Badoo's decruncher
 * restores from it, byte for byte. */
static void test_golden_names(void)
{
    static const char *const names[] = { "a", "b", "c", "HeapGen" };
    size_t blen, dlen, i;
    uint8_t *bmd = load_dump("bmd/heapgen_s5_16mb_obf_android.bmd", &blen);
    uint8_t *dec = load_dump("bmd/heapgen_s5_16mb_obf_android.decrunched_jar.hprof.gz", &dlen);
    hp_bmd_names *t = hp_bmd_names_new(NULL);
    hp_bmd_options opts = { 0, 0, 0, NULL, 0 };
    run r;
    CHECK(bmd && dec && t);
    if (!bmd || !dec || !t)
        return;
    for (i = 0; i < 4; i++)
        CHECK(hp_bmd_names_add(t, (const uint8_t *)names[i], strlen(names[i])) == 0);
    opts.names = t;
    run_filter(0, bmd, blen, &opts, 0, 0, NULL, &r);
    CHECK(r.rc == HP_OK && same_bytes("decrunched with the jar", r.out.d, r.out.len, dec, dlen));
    run_free(&r);
    hp_bmd_names_free(t);
    free(bmd);
    free(dec);
}

/* ---- Java's rules ---- */

/* Hashes and lengths as java 17 gives them for new String(bytes).hashCode()
 * and .getBytes().length (tests/test_bmd.py checks thousands more against a JVM). */
static void test_java_strings(void)
{
    static const struct { const char *bytes; size_t n; int32_t hash; uint64_t len; } cases[] = {
        { "", 0, 0, 0 },
        { "java.lang.String", 16, 1195259493, 16 },
        { "\xc0\x80", 2, 2097056, 6 },         /* modified UTF-8's NUL: two U+FFFD */
        { "\xed\xa0\x80", 3, 65533, 3 },        /* a surrogate: one U+FFFD for three bytes */
        { "\xf0\x9f\x98\x80", 4, 1772899, 4 },  /* U+1F600: a surrogate pair */
        { "\xe2\x82", 2, 65533, 3 },            /* cut at the end: one U+FFFD */
        { "\xf0\x9f\x41", 3, 2031588, 4 },      /* cut by 'A': one U+FFFD, then 'A' */
        { "\xe0\x80\x80", 3, 65074269, 9 },     /* overlong: three */
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hp_jstring js;
        uint8_t out[32];
        hp_jstring_measure((const uint8_t *)cases[i].bytes, cases[i].n, &js);
        CHECK_EQ_U64((uint32_t)js.hash, (uint32_t)cases[i].hash);
        CHECK_EQ_U64(js.utf8_len, cases[i].len);
        CHECK_EQ_U64(hp_jstring_reencode((const uint8_t *)cases[i].bytes, cases[i].n, out), cases[i].len);
    }
}

/* Class dumps come in the order java 17's HashMap<Integer, ...> iterates
 * the ids put into it (these orders printed by a JVM). */
static void test_hash_order(void)
{
    static const struct { int32_t ids[20]; size_t n; int32_t order[20]; } cases[] = {
        { { 5, 3, 17, 1, 33, 2 }, 6, { 17, 1, 33, 2, 3, 5 } },
        { { 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 1 }, 11, /* a 9th key in a bucket of a small table */
          { 32, 64, 96, 128, 160, 1, 16, 48, 80, 112, 144 } },
        { { 65536, 1, 65537, 131072, 7, 70000, 100000, 3 }, 8, { 65537, 65536, 1, 70000, 100000, 131072, 3, 7 } },
        { { -1, -65536, 2147483647, (-2147483647 - 1), 0, 12345678 }, 6,
          { -1, 2147483647, (-2147483647 - 1), 0, 12345678, -65536 } },
    };
    size_t i, k;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bmd_classes c;
        uint32_t *order;
        bmd_classes_init(&c, NULL, (size_t)1 << 20);
        for (k = 0; k < cases[i].n; k++)
            CHECK(bmd_classes_put(&c, (uint32_t)cases[i].ids[k], 0, (const uint8_t *)"x", 1, NULL, 0, 0, 0) == HP_OK);
        order = bmd_classes_hash_order(&c);
        CHECK(order != NULL);
        for (k = 0; order && k < cases[i].n; k++)
            CHECK_EQ_U64(c.v[order[k]].id, (uint32_t)cases[i].order[k]);
        free(order);
        bmd_classes_free(&c);
    }
    /* 20 keys: the table grows to 32 buckets */
    {
        bmd_classes c;
        uint32_t *order;
        bmd_classes_init(&c, NULL, (size_t)1 << 20);
        for (k = 1; k <= 20; k++)
            bmd_classes_put(&c, (uint32_t)k, 0, (const uint8_t *)"x", 1, NULL, 0, 0, 0);
        order = bmd_classes_hash_order(&c);
        for (k = 0; order && k < 20; k++)
            CHECK_EQ_U64(c.v[order[k]].id, k + 1);
        free(order);
        bmd_classes_free(&c);
    }
}

static void test_names(void)
{
    hp_bmd_names *t = hp_bmd_names_new(NULL);
    hp_jstring a, b;
    const uint8_t *found;
    /* "Aa" and "BB" share Java's hash and length: the later one wins */
    hp_jstring_measure((const uint8_t *)"Aa", 2, &a);
    hp_jstring_measure((const uint8_t *)"BB", 2, &b);
    CHECK(a.hash == b.hash);
    CHECK(hp_bmd_names_add(t, (const uint8_t *)"Aa", 2) == 0 && hp_bmd_names_add(t, (const uint8_t *)"BB", 2) == 0);
    found = hp_bmd_names_find(t, a.hash, 2);
    CHECK(found && memcmp(found, "BB", 2) == 0);
    CHECK(hp_bmd_names_find(t, a.hash, 3) == NULL); /* the length must match too */
    CHECK_EQ_U64(hp_bmd_names_count(t), 1);
    CHECK_EQ_U64(hp_bmd_names_collisions(t), 1);
    hp_bmd_names_free(t);
}

/* Where `what` (n bytes) first is in p[0..len), or len. */
static size_t find(const uint8_t *p, size_t len, const void *what, size_t n)
{
    size_t i;
    for (i = 0; i + n <= len; i++)
        if (memcmp(p + i, what, n) == 0)
            return i;
    return len;
}

/* What a hostile BMD must give: its error, whose message holds `says`. */
static void expect(const char *what, const bb *b, hp_code code, const char *says)
{
    run r;
    run_filter(0, b->d, b->len, NULL, 0, 0, NULL, &r);
    if (r.rc != code || !strstr(message(&r), says))
        fprintf(stderr, "  %s: code %d, '%s'\n", what, (int)r.rc, r.rc ? message(&r) : "");
    CHECK(r.rc == code && strstr(message(&r), says) != NULL);
    CHECK(r.out.len < ((size_t)1 << 20));
    run_free(&r);
    /* the same in one-byte pieces */
    run_filter(0, b->d, b->len, NULL, 1, 0, NULL, &r);
    CHECK(r.rc == code);
    run_free(&r);
}

static void test_small_bmd(void)
{
    bb b = { 0 };
    run r;
    hp_parser *p;
    hp_event ev;
    hp_error err;
    hp_code rc;
    int subs[256] = { 0 }, records[256] = { 0 };
    bmd_small(&b);
    run_filter(0, b.d, b.len, NULL, 0, 0, NULL, &r);
    show_error("small BMD", r.rc, &r.err);
    CHECK(r.rc == HP_OK);
    /* a valid HPROF: walk it */
    p = hp_parser_new(NULL, HP_PARSE_SUBRECORDS);
    hp_parser_feed(p, r.out.d, r.out.len, 1);
    while ((rc = hp_parser_next(p, &ev, &err)) == HP_OK && ev.kind != HP_EV_END) {
        if (ev.kind == HP_EV_RECORD)
            records[ev.rec->tag]++;
        if (ev.kind == HP_EV_SUBRECORD)
            subs[ev.sub->tag]++;
    }
    show_error("walking the decoded small BMD", rc, &err);
    CHECK(rc == HP_OK);
    CHECK(records[HP_TAG_UTF8] == 3 && records[HP_TAG_LOAD_CLASS] == 2 && records[HP_TAG_TRACE] == 1);
    CHECK(records[HP_TAG_HEAP_DUMP] == 1);
    CHECK(subs[HP_SUB_CLASS_DUMP] == 2 && subs[HP_SUB_INSTANCE_DUMP] == 1 && subs[HP_SUB_OBJ_ARRAY_DUMP] == 1);
    CHECK(subs[HP_SUB_PRIM_ARRAY_DUMP] == 1 && subs[HP_SUB_ROOT_UNKNOWN] == 2);
    /* the hashed string's placeholder, padded to its length: "Hash$99" is longer than 5, so as it is */
    CHECK(find(r.out.d, r.out.len, "Hash$99", 7) < r.out.len);
    hp_parser_free(p);
    run_free(&r);
    free(b.d);
}

/* Records in another order than the cruncher's (roots first, strings
 * last; only a class must come before its instances): the same heap. */
static void test_any_record_order(void)
{
    bb usual = { 0 }, other = { 0 };
    run a, b;
    hp_buf heap_a, other_a, heap_b, other_b;
    size_t longest;
    bmd_small(&usual);
    bmd_head(&other);
    bv(&other, BMD_ROOTS); bv(&other, 2); bv(&other, 20); bv(&other, 21);
    bv(&other, BMD_PRIMITIVE_ARRAY); bv(&other, 22); bv(&other, BMD_T_CHAR); bv(&other, 5);
    bv(&other, BMD_OBJECT_ARRAY); bv(&other, 21); bv(&other, 10); bv(&other, 2); bv(&other, 20); bv(&other, 0);
    bmd_class_def(&other, 10, 0, 4);
    bmd_class_def(&other, 11, 10, 3);
    bv(&other, BMD_INSTANCE); bv(&other, 20); bv(&other, 11); bv(&other, 21); bv(&other, 0);
    bv(&other, BMD_LEGACY); bv(&other, HP_TAG_TRACE); bv(&other, 12); bb_raw(&other, "\0\0\0\1\0\0\0\0\0\0\0\0", 12);
    bv(&other, BMD_STRING); bv(&other, 1); bv(&other, 3); bb_raw(&other, "int", 3);
    bv(&other, BMD_HASHED_STRING); bv(&other, 2); bv(&other, 5); bv(&other, 99);
    run_filter(0, usual.d, usual.len, NULL, 0, 0, NULL, &a);
    run_filter(0, other.d, other.len, NULL, 3, 0, NULL, &b);
    CHECK(a.rc == HP_OK && b.rc == HP_OK);
    split_records(a.out.d, a.out.len, 31, &heap_a, &other_a, &longest);
    split_records(b.out.d, b.out.len, 31, &heap_b, &other_b, &longest);
    CHECK(same_bytes("heap in any record order", heap_a.data, heap_a.len, heap_b.data, heap_b.len));
    CHECK(other_a.len == other_b.len); /* the same records before the heap, in BMD order */
    hp_buf_free(&heap_a);
    hp_buf_free(&other_a);
    hp_buf_free(&heap_b);
    hp_buf_free(&other_b);
    run_free(&a);
    run_free(&b);
    free(usual.d);
    free(other.d);
}

/* Every prefix of a BMD: a clean decode (it ends between records) or one
 * truncation error; every byte changed: anything but a crash. */
static void test_sweeps(void)
{
    bb b = { 0 };
    size_t cut, i, ok = 0;
    bmd_small(&b);
    for (cut = 0; cut < b.len; cut++) {
        run r;
        run_filter(0, b.d, cut, NULL, 0, 0, NULL, &r);
        CHECK(r.rc == HP_OK || r.rc == HP_E_TRUNCATED || (cut == 0 && r.rc == HP_E_FORMAT));
        ok += r.rc == HP_OK;
        run_free(&r);
    }
    CHECK(ok >= 8); /* at each record boundary after the header */
    for (i = 0; i < b.len; i++) {
        static const uint8_t flips[] = { 0x01, 0x80, 0xFF };
        size_t f;
        for (f = 0; f < sizeof flips; f++) {
            run r;
            b.d[i] ^= flips[f];
            run_filter(0, b.d, b.len, NULL, 7, 0, NULL, &r);
            CHECK(r.rc == HP_OK || r.rc == HP_E_TRUNCATED || r.rc == HP_E_CORRUPT || r.rc == HP_E_FORMAT ||
                  r.rc == HP_E_LIMIT);
            b.d[i] ^= flips[f];
            run_free(&r);
        }
    }
    free(b.d);
}

static void test_hostile(void)
{
    bb b = { 0 };
    size_t i;

    /* not a BMD, an empty input, a cut header */
    bb_raw(&b, "\x02\x12JAVA PROFILE 1.0.3", 20);
    expect("version 2", &b, HP_E_FORMAT, "not a BMD of version 1");
    b.len = 0;
    expect("empty", &b, HP_E_FORMAT, "empty input");
    bmd_head(&b);
    b.len = 10;
    expect("cut header", &b, HP_E_TRUNCATED, "truncated BMD header");

    /* a varint without end */
    b.len = 0;
    bmd_head(&b);
    bv(&b, BMD_HASHED_STRING);
    for (i = 0; i < 11; i++)
        bb_u1(&b, 0xFF);
    bb_u1(&b, 0);
    expect("endless varint", &b, HP_E_CORRUPT, "a varint that does not end within 10 bytes at offset 21");

    /* counts past the input: an array of 2^31 - 1 elements, three there */
    b.len = 0;
    bmd_head(&b);
    bv(&b, BMD_OBJECT_ARRAY); bv(&b, 1); bv(&b, 2); bv(&b, 0x3FFFFF00); bv(&b, 1); bv(&b, 2); bv(&b, 3);
    expect("counts past the input", &b, HP_E_TRUNCATED, "truncated BMD OBJECT_ARRAY record at offset 20");
    b.len = 0;
    bmd_head(&b);
    bv(&b, BMD_ROOTS); bv(&b, 0x7FFFFFFF); bv(&b, 1);
    expect("roots past the input", &b, HP_E_TRUNCATED, "ROOT_OBJECTS record at offset 20");
    b.len = 0;
    bmd_head(&b);
    bv(&b, BMD_OBJECT_ARRAY); bv(&b, 1); bv(&b, 2); bv(&b, (uint64_t)(int64_t)-5);
    expect("negative count", &b, HP_E_CORRUPT, "a negative array length");

    /* the string-hash bomb: a 12-byte record claiming 2 GiB of name */
    b.len = 0;
    bmd_head(&b);
    bv(&b, BMD_HASHED_STRING); bv(&b, 1); bv(&b, 0x7FFFFFFF); bv(&b, 12345);
    expect("hashed string bomb", &b, HP_E_CORRUPT,
           "claiming more bytes than max_string at offset 21 (in the BMD HASHED_STRING record at offset 20)");
    b.len = 0;
    bmd_head(&b);
    bv(&b, BMD_STRING); bv(&b, 1); bv(&b, 0x7FFFFFFF);
    expect("clear string bomb", &b, HP_E_CORRUPT, "a string longer than max_string");

    /* records that cannot be */
    b.len = 0;
    bmd_head(&b);
    bv(&b, 9);
    expect("unknown tag", &b, HP_E_CORRUPT, "an unknown record tag");
    b.len = 0;
    bmd_head(&b);
    bv(&b, BMD_PRIMITIVE_ARRAY); bv(&b, 1); bv(&b, BMD_T_OBJECT); bv(&b, 3);
    expect("primitive array of objects", &b, HP_E_CORRUPT, "a primitive array of objects");
    b.len = 0;
    bmd_head(&b);
    bv(&b, BMD_PRIMITIVE_ARRAY); bv(&b, 1); bv(&b, 9); bv(&b, 3);
    expect("bad type", &b, HP_E_CORRUPT, "an invalid type code");
    b.len = 0;
    bmd_head(&b);
    bv(&b, BMD_PRIMITIVE_ARRAY); bv(&b, 1); bv(&b, BMD_T_LONG); bv(&b, 0x7FFFFFFF);
    expect("array past 4 GiB", &b, HP_E_LIMIT, "an array of more than 4 GiB");
    b.len = 0;
    bmd_head(&b);
    bv(&b, BMD_LEGACY); bv(&b, HP_TAG_HEAP_DUMP); bv(&b, 0);
    expect("legacy heap dump", &b, HP_E_CORRUPT, "a legacy record of a kind BMD itself holds");
    b.len = 0;
    bmd_head(&b);
    bv(&b, BMD_INSTANCE); bv(&b, 1); bv(&b, 2);
    expect("instance of no class", &b, HP_E_CORRUPT, "an instance of a class no CLASS_DEFINITION before it");
    b.len = 0;
    bmd_head(&b);
    bmd_class_def(&b, 5, 0, 0);
    bv(&b, BMD_INSTANCE); bv(&b, 1); bv(&b, 5); bv(&b, 0);
    bmd_class_def(&b, 6, 0, 0);
    expect("class after instance", &b, HP_E_CORRUPT, "a class definition after an instance");
    b.len = 0;
    bmd_head(&b);
    bmd_class_def(&b, 5, 6, 0);
    bmd_class_def(&b, 6, 5, 0);
    bv(&b, BMD_INSTANCE); bv(&b, 1); bv(&b, 5);
    expect("superclass loop", &b, HP_E_CORRUPT, "an instance whose superclass chain loops");
    b.len = 0;
    bmd_head(&b);
    bmd_class_def(&b, 5, 0, 0x40000);
    expect("too many fillers", &b, HP_E_LIMIT, "more than 65535 instance fields");
    free(b.d);
}

/* A BMD whose bytes change between passes (its length kept): a primitive
 * array made longer after the first pass measured the heap is refused,
 * never written past the length of its heap record. */
static void test_changed_between_passes(void)
{
    bb b = { 0 };
    size_t at;
    hp_bmd_decoder *d = hp_bmd_decoder_new(NULL, NULL);
    mem_sink out = { NULL, 0, 0, 0 };
    hp_sink sink = { mem_write, &out, NULL };
    hp_error err;
    hp_code rc = HP_OK;
    int pass;
    bmd_small(&b);
    at = find(b.d, b.len, "\x07\x16\x04\x05", 4); /* PRIMITIVE_ARRAY 22 of 5 chars */
    CHECK(at < b.len);
    for (pass = 0; rc == HP_OK && pass < 5; pass++) {
        if (pass == 1)
            b.d[at + 3] = 6;
        rc = hp_bmd_decoder_feed(d, b.d, b.len, &sink, &err);
        if (rc == HP_OK)
            rc = hp_bmd_decoder_finish(d, &sink, &err);
        if (rc == HP_OK && !hp_bmd_decoder_again(d))
            break;
    }
    CHECK(rc == HP_E_CORRUPT && strstr(err.text, "the BMD changed between passes") != NULL);
    hp_bmd_decoder_free(d);
    free(out.d);
    free(b.d);
}

/* A BMD of n instances (and n roots): the decoder's memory does not grow with n. */
static size_t decode_peak(uint32_t n)
{
    bb b = { 0 };
    uint32_t i;
    hp_alloc counting = { countalloc_malloc, countalloc_realloc, countalloc_free };
    run r;
    bmd_head(&b);
    bmd_class_def(&b, 1, 0, 8);
    for (i = 0; i < n; i++) {
        bv(&b, BMD_INSTANCE); bv(&b, 100 + i); bv(&b, 1); bv(&b, 100 + i / 2);
    }
    bv(&b, BMD_ROOTS);
    bv(&b, n);
    for (i = 0; i < n; i++)
        bv(&b, 100 + i);
    countalloc_peak = countalloc_live;
    run_filter(0, b.d, b.len, NULL, 65536, 0, &counting, &r);
    CHECK(r.rc == HP_OK);
    CHECK_EQ_U64(r.counts[BMD_INSTANCE], n);
    run_free(&r);
    free(b.d);
    return countalloc_peak;
}

static void test_memory(void)
{
    size_t small = decode_peak(1000), big = decode_peak(200000);
    CHECK(big == small);
    CHECK(big < ((size_t)1 << 20));
}

/* Heaps longer than max_heap_record: segments of at most it, then
 * HEAP_DUMP_END, with the very sub-records of the one HEAP_DUMP. */
static void test_segments(void)
{
    size_t blen;
    uint8_t *bmd = load_dump("bmd/platform_tools_base__dialer.bmd", &blen);
    hp_bmd_options opts = { 0, 0, 100000, NULL, 0 };
    hp_buf heap_a, other_a, heap_b, other_b;
    size_t longest_a, longest_b;
    run a, b;
    CHECK(bmd != NULL);
    if (!bmd)
        return;
    run_filter(0, bmd, blen, NULL, 0, 0, NULL, &a);
    run_filter(0, bmd, blen, &opts, 3000, 1, NULL, &b);
    CHECK(a.rc == HP_OK && b.rc == HP_OK);
    split_records(a.out.d, a.out.len, 31, &heap_a, &other_a, &longest_a);
    split_records(b.out.d, b.out.len, 31, &heap_b, &other_b, &longest_b);
    CHECK(same_bytes("heap bodies", heap_a.data, heap_a.len, heap_b.data, heap_b.len));
    CHECK(longest_a > 1000000 && longest_b <= 100000);
    /* the other records: the same, and a HEAP_DUMP_END at the end */
    CHECK(other_b.len == other_a.len + 9 && memcmp(other_a.data, other_b.data, other_a.len) == 0);
    CHECK(other_b.data[other_a.len] == HP_TAG_HEAP_DUMP_END);
    hp_buf_free(&heap_a);
    hp_buf_free(&other_a);
    hp_buf_free(&heap_b);
    hp_buf_free(&other_b);
    run_free(&a);
    run_free(&b);
    free(bmd);
}

/* ---- the encoder beyond the cruncher ---- */

static void test_encoder_beyond(void)
{
    bb four = { 0 }, eight = { 0 }, late = { 0 }, first = { 0 };
    run r4, r8, rl, d8, rf;
    hprof_small(&four, 4, 0, 0);
    hprof_small(&eight, 8, 0, 0);
    hprof_small(&late, 4, LOADS_LAST, 0);
    hprof_small(&first, 4, OBJECTS_FIRST, 0);
    /* objects before their classes' dumps: the same BMD (classes are numbered first anyway) */
    run_filter(1, first.d, first.len, NULL, 0, 0, NULL, &rf);
    run_filter(1, four.d, four.len, NULL, 0, 0, NULL, &r4);
    run_filter(1, eight.d, eight.len, NULL, 3, 0, NULL, &r8);
    run_filter(1, late.d, late.len, NULL, 0, 0, NULL, &rl);
    show_error("8-byte ids", r8.rc, &r8.err);
    /* identifier size 8: the same BMD as with 4 (ids are renumbered) */
    CHECK(r4.rc == HP_OK && r8.rc == HP_OK);
    CHECK(same_bytes("8-byte ids", r8.out.d, r8.out.len, r4.out.d, r4.out.len));
    CHECK(r4.counts[BMD_CLASS] == 2 && r4.counts[BMD_INSTANCE] == 2 && r4.counts[BMD_ROOTS] == 1);
    run_filter(0, r8.out.d, r8.out.len, NULL, 0, 0, NULL, &d8);
    CHECK(d8.rc == HP_OK);
    /* a CLASS_DUMP before its LOAD_CLASS (the cruncher refuses it): a third
     * pass writes its definition, with its name */
    show_error("late LOAD_CLASS", rl.rc, &rl.err);
    CHECK(rl.rc == HP_OK && rl.passes == 3 && rl.counts[BMD_CLASS] == 2);
    CHECK(rf.rc == HP_OK && same_bytes("objects first", rf.out.d, rf.out.len, r4.out.d, r4.out.len));
    run_free(&rf);
    free(first.d);
    run_free(&r4);
    run_free(&r8);
    run_free(&rl);
    run_free(&d8);
    free(four.d);
    free(eight.d);
    free(late.d);
}

static void test_encoder_refusals(void)
{
    static const uint8_t node_dump[] = { HP_SUB_CLASS_DUMP, 0, 0, 0x91, 0, 0, 0, 0, 0 };
    bb b = { 0 }, extra = { 0 };
    hp_bmd_options opts = { 8, 0, 0, NULL, 0 };
    run r;
    size_t at;
    /* a STRING longer than max_string */
    hprof_small(&b, 4, 0, 0);
    run_filter(1, b.d, b.len, &opts, 0, 0, NULL, &r);
    CHECK(r.rc == HP_E_LIMIT && strstr(message(&r), "STRING at offset 31 holds 20 bytes"));
    run_free(&r);
    /* Node's superclass made Node itself: the chain loops */
    at = find(b.d, b.len, node_dump, sizeof node_dump) + sizeof node_dump;
    CHECK(at < b.len && hp_be32(b.d + at) == 0x9000);
    hp_put32(b.d + at, 0x9100);
    run_filter(1, b.d, b.len, NULL, 0, 0, NULL, &r);
    CHECK(r.rc == HP_E_CORRUPT && strstr(message(&r), "superclass chain of class 0x9100 loops"));
    run_free(&r);
    /* an instance with more bytes than its class chain's fields */
    hprof_small(&extra, 4, 0, 3);
    run_filter(1, extra.d, extra.len, NULL, 0, 0, NULL, &r);
    CHECK(r.rc == HP_E_CORRUPT && strstr(message(&r), "has 11 bytes of fields, its class chain 8"));
    run_free(&r);
    free(b.d);
    free(extra.d);
}

int main(void)
{
    test_java_strings();
    test_hash_order();
    test_names();
    test_golden();
    test_golden_names();
    test_small_bmd();
    test_any_record_order();
    test_sweeps();
    test_hostile();
    test_memory();
    test_changed_between_passes();
    test_segments();
    test_encoder_beyond();
    test_encoder_refusals();
    return check_report("test_bmd");
}
