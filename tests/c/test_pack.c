/* The pack format's core: byte-identical round trips of every dump in the
 * shared data (keep-all), policy round trips against what each policy must
 * restore, block cuts inside huge payloads, chunking invariance of the
 * encoder, and corrupt or truncated streams -> clean errors. */
#include <string.h>

#include "testkit.h"
#include "hp_convert.h"
#include "hp_pack.h"
#include "hp_pack_frame.h"
#include "hp_packer.h"
#include "hp_parser.h"
#include "hp_sink.h"

/* ---- helpers ---- */

static uint32_t rng_state = 2024;
static unsigned rng(void) { return xorshift(&rng_state); }

/* Blocks kept in memory: every stream of every block, plus out_len. */
typedef struct packed {
    hp_buf streams[HP_PACK_NSTREAMS]; /* all blocks' streams back to back */
    size_t *lens;                     /* nblocks x NSTREAMS */
    uint64_t *outs;
    size_t nblocks, cap;
    hp_header header;
    hp_code rc;
    hp_error err;
    uint64_t bytes_out;
} packed;

static int keep_block(void *ctx, const hp_pack_block *b)
{
    packed *p = ctx;
    int i;
    if (p->nblocks == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 16;
        p->lens = realloc(p->lens, p->cap * HP_PACK_NSTREAMS * sizeof *p->lens);
        p->outs = realloc(p->outs, p->cap * sizeof *p->outs);
    }
    for (i = 0; i < HP_PACK_NSTREAMS; i++) {
        hp_buf_append(&p->streams[i], b->data[i], b->len[i]);
        p->lens[p->nblocks * HP_PACK_NSTREAMS + i] = b->len[i];
    }
    p->outs[p->nblocks] = b->out_len;
    CHECK_EQ_U64(b->index, p->nblocks);
    p->nblocks++;
    return 0;
}

static void packed_free(packed *p)
{
    int i;
    for (i = 0; i < HP_PACK_NSTREAMS; i++)
        hp_buf_free(&p->streams[i]);
    free(p->lens);
    free(p->outs);
    memset(p, 0, sizeof *p);
}

/* Encodes data in chunks: step 0 = one shot, else `step` bytes, or 1..step
 * random bytes when `random` is set. */
static void pack(const uint8_t *data, size_t len, const hp_pack_policy *pol, size_t block, size_t step, int random,
                 packed *p)
{
    hp_pack_encoder *e = hp_pack_encoder_new(NULL, pol, block);
    size_t pos = 0;
    int i;
    memset(p, 0, sizeof *p);
    for (i = 0; i < HP_PACK_NSTREAMS; i++)
        hp_buf_init(&p->streams[i], NULL);
    do {
        size_t n = step == 0 ? len - pos : (random ? 1 + rng() % step : step);
        if (n > len - pos)
            n = len - pos;
        p->rc = hp_pack_encoder_feed(e, data + pos, n, keep_block, p, &p->err);
        pos += n;
    } while (p->rc == HP_OK && pos < len);
    if (p->rc == HP_OK)
        p->rc = hp_pack_encoder_finish(e, keep_block, p, &p->err);
    if (hp_pack_encoder_header(e))
        p->header = *hp_pack_encoder_header(e);
    p->bytes_out = hp_pack_encoder_bytes_out(e);
    if (p->rc == HP_OK) {
        CHECK_EQ_U64(hp_pack_encoder_bytes_in(e), len);
        CHECK_EQ_U64(hp_pack_encoder_blocks(e), p->nblocks);
    }
    hp_pack_encoder_free(e);
}

static size_t packed_size(const packed *p)
{
    size_t n = 0;
    int i;
    for (i = 0; i < HP_PACK_NSTREAMS; i++)
        n += p->streams[i].len;
    return n;
}

/* A sink that refuses to grow past out_cap bytes (0 = no cap). */
static size_t out_cap;
static int capped_write(void *ctx, const uint8_t *data, size_t len)
{
    hp_buf *b = ctx;
    if (out_cap && b->len + len > out_cap)
        return -1;
    return hp_buf_append(b, data, len);
}

/* The allocator unpack() decodes with (NULL: libc). */
static const hp_alloc *unpack_alloc;

/* Decodes p; the restored dump goes to out. */
static hp_code unpack(const packed *p, const hp_pack_policy *pol, hp_buf *out, hp_error *err)
{
    hp_pack_decoder *d = hp_pack_decoder_new(unpack_alloc, &p->header, pol);
    hp_sink sink = { capped_write, out, NULL };
    size_t offs[HP_PACK_NSTREAMS] = { 0 }, b;
    hp_code rc = HP_OK;
    hp_buf_init(out, NULL);
    if (!d)
        return HP_E_NOMEM;
    for (b = 0; b < p->nblocks && rc == HP_OK; b++) {
        const uint8_t *data[HP_PACK_NSTREAMS];
        size_t lens[HP_PACK_NSTREAMS];
        int i;
        for (i = 0; i < HP_PACK_NSTREAMS; i++) {
            lens[i] = p->lens[b * HP_PACK_NSTREAMS + i];
            data[i] = p->streams[i].data + offs[i];
            offs[i] += lens[i];
        }
        rc = hp_pack_decoder_block(d, data, lens, p->outs[b], &sink, err);
    }
    if (rc == HP_OK)
        rc = hp_pack_decoder_finish(d, &sink, err);
    if (rc == HP_OK)
        CHECK_EQ_U64(hp_pack_decoder_bytes_out(d), out->len);
    hp_pack_decoder_free(d);
    return rc;
}



static int same_packed(const packed *a, const packed *b)
{
    int i;
    if (a->nblocks != b->nblocks)
        return 0;
    if (a->nblocks == 0)
        return 1;
    if (memcmp(a->lens, b->lens, a->nblocks * HP_PACK_NSTREAMS * sizeof *a->lens) != 0 ||
        memcmp(a->outs, b->outs, a->nblocks * sizeof *a->outs) != 0)
        return 0;
    for (i = 0; i < HP_PACK_NSTREAMS; i++)
        if (a->streams[i].len != b->streams[i].len ||
            (a->streams[i].len && memcmp(a->streams[i].data, b->streams[i].data, a->streams[i].len) != 0))
            return 0;
    return 1;
}

/* Round trip with a keep-all policy must give back the very bytes. */
static void check_roundtrip(const char *name, const uint8_t *src, size_t len, size_t block)
{
    packed p;
    hp_buf out;
    hp_error err;
    hp_code rc;
    pack(src, len, NULL, block, 0, 0, &p);
    show_error(name, p.rc, &p.err);
    CHECK(p.rc == HP_OK);
    CHECK_EQ_U64(p.bytes_out, len);
    rc = unpack(&p, NULL, &out, &err);
    show_error(name, rc, &err);
    CHECK(rc == HP_OK);
    CHECK(same_bytes(name, out.data, out.len, src, len));
    hp_buf_free(&out);
    packed_free(&p);
}

/* ---- the real dumps ---- */

static const char *const dumps[] = {
    "hprof/heapdump__small_heap.bin",
    "hprof/hprof-slurp__hprof-64.bin",
    "hprof/leakcanary__leak_service_binder.hprof",
    "hprof/mat__HeapDumpSample.hprof",
    "hprof/mat__HeapDumpSample_N20080530.hprof",
    "hprof/mat__openjdk_jdk11_04_x64.hprof.gz",
    "hprof/mat__oracle_jdk7_21_hprofagent.hprof",
    "hprof/mat__oracle_jdk7_21_x64.hprof",
    "hprof/mat__oracle_jdk8_05_x64.hprof",
    "hprof/mat__sun_jdk5_13_x32.hprof",
    "hprof/mat__sun_jdk5_64bit.hprof",
    "hprof/mat__sun_jdk6_18_x32.hprof",
    "hprof/mat__sun_jdk6_18_x64.hprof",
    "hprof/mat__sun_jdk6_30_x64_compressedOops.hprof",
    "hprof/mat__sun_jdk6_30_x64_nocompressedOops.hprof",
    "hprof/mat__sun_jdk6_31_hprofagent_compressedOops.hprof",
    "hprof/mat__sun_jdk6_31_hprofagent_nocompressedOops.hprof",
    "hprof/mat__sun_jdk6_32bit.hprof",
    "hprof/platform_art__RI.hprof",
    "hprof/platform_tools_base__dialer.android-hprof",
    "hprof/py-hprof__basic_reads.hprof",
    "tailor/art_like.hprof",
};
#define N_DUMPS (sizeof dumps / sizeof dumps[0])

static void test_real_dumps(void)
{
    size_t i;
    for (i = 0; i < N_DUMPS; i++) {
        size_t len;
        uint8_t *src = load_dump(dumps[i], &len);
        CHECK(src != NULL);
        if (!src)
            continue;
        check_roundtrip(dumps[i], src, len, 0);
        check_roundtrip(dumps[i], src, len, HP_PACK_BLOCK_MIN); /* many blocks, cuts inside payloads */
        free(src);
    }
}

/* The blocks must not depend on how the dump was cut into chunks. */
static void test_chunking(void)
{
    static const char *const names[] = { "hprof/leakcanary__leak_service_binder.hprof",
                                         "hprof/mat__sun_jdk6_18_x64.hprof", "tailor/art_like.hprof" };
    static const size_t steps[] = { 1, 7, 4096, 3000, 70000 };
    size_t i, s;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t len;
        uint8_t *src = load_dump(names[i], &len);
        packed whole;
        CHECK(src != NULL);
        if (!src)
            continue;
        pack(src, len, NULL, HP_PACK_BLOCK_MIN, 0, 0, &whole);
        CHECK(whole.rc == HP_OK);
        for (s = 0; s < sizeof steps / sizeof steps[0]; s++) {
            packed p;
            size_t n = steps[s] == 1 && len > 300000 ? 300000 : len; /* one byte at a time: a prefix */
            int random = steps[s] == 3000 || steps[s] == 70000;
            if (n < len) {
                packed a;
                pack(src, n, NULL, HP_PACK_BLOCK_MIN, 0, 0, &a);
                pack(src, n, NULL, HP_PACK_BLOCK_MIN, 1, 0, &p);
                CHECK(p.rc == a.rc);
                CHECK(same_packed(&a, &p));
                packed_free(&a);
            } else {
                pack(src, len, NULL, HP_PACK_BLOCK_MIN, steps[s], random, &p);
                CHECK(p.rc == HP_OK);
                CHECK(same_packed(&whole, &p));
            }
            packed_free(&p);
        }
        printf("  %s: %zu bytes -> %zu in %zu blocks\n", names[i], len, packed_size(&whole), whole.nblocks);
        packed_free(&whole);
        free(src);
    }
}

/* ---- what a policy must restore (reference, from the parser) ---- */

static int non_app_heap(uint32_t heap) { return heap == 'Z' || heap == 'I'; }

/* The dump as a pack made with `pol` restores it: stripped arrays zeroed,
 * trace records dropped, and for app_only on 1.0.3 what hp_converter keeps. */
static void reference(const uint8_t *src, size_t len, const hp_pack_policy *pol, hp_buf *out)
{
    hp_parser *p = hp_parser_new(NULL, HP_PARSE_SUBRECORDS);
    hp_buf copy;
    hp_event ev;
    hp_error err;
    uint64_t rec_start = 0;
    int drop = 0;
    hp_buf_init(out, NULL);
    hp_buf_init(&copy, NULL);
    hp_buf_append(&copy, src, len);
    hp_parser_feed(p, src, len, 1);
    while (hp_parser_next(p, &ev, &err) == HP_OK && ev.kind != HP_EV_END) {
        if (ev.kind == HP_EV_HEADER) {
            hp_buf_append(out, src, ev.len);
        } else if (ev.kind == HP_EV_RECORD) {
            rec_start = ev.offset;
            drop = pol->drop_traces && (ev.rec->tag == HP_TAG_TRACE || ev.rec->tag == HP_TAG_FRAME);
        } else if (ev.kind == HP_EV_SUBRECORD && ev.sub->tag == HP_SUB_PRIM_ARRAY_DUMP &&
                   (pol->strip_types >> ev.sub->elem_type & 1u)) {
            memset(copy.data + ev.sub->offset + ev.sub->head_len, 0, (size_t)ev.sub->payload_len);
        } else if (ev.kind == HP_EV_RECORD_END && !drop) {
            hp_buf_append(out, copy.data + rec_start, (size_t)(hp_parser_offset(p) - rec_start));
        }
    }
    hp_parser_free(p);
    hp_buf_free(&copy);
    if (pol->app_only && len > 18 && memcmp(src, "JAVA PROFILE 1.0.3", 18) == 0) {
        hp_convert_options opts = { 0, 1, 0, 0 };
        hp_converter *c = hp_converter_new(NULL, &opts);
        hp_buf conv;
        hp_sink sink;
        hp_buf_init(&conv, NULL);
        sink = hp_buf_sink(&conv);
        CHECK(hp_converter_feed(c, out->data, out->len, &sink, &err) == HP_OK);
        CHECK(hp_converter_finish(c, &sink, &err) == HP_OK);
        hp_converter_free(c);
        hp_buf_free(out);
        *out = conv;
    }
    (void)non_app_heap;
}

static const hp_pack_policy policies[] = {
    { 0, 0, 0 },
    { HP_PACK_STRIP_TAILOR, 0, 0 },
    { HP_PACK_STRIP_ALL, 0, 1 },
    { 0, 1, 0 },
    { HP_PACK_STRIP_TAILOR, 1, 1 },
};
#define N_POLICIES (sizeof policies / sizeof policies[0])

/* Encodes `src` with every policy, block size and chunking, and checks the
 * restored dump against the reference; chunking must not change a block. */
static void check_all_ways(const char *name, const uint8_t *src, size_t len)
{
    static const size_t blocks[] = { 0, HP_PACK_BLOCK_MIN, 100000 };
    static const size_t steps[] = { 7, 4093, 3000, 70000 };
    size_t k, b, s;
    for (k = 0; k < N_POLICIES; k++) {
        hp_buf want;
        reference(src, len, &policies[k], &want);
        for (b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
            packed whole;
            hp_buf out;
            hp_error err;
            hp_code rc;
            pack(src, len, &policies[k], blocks[b], 0, 0, &whole);
            show_error(name, whole.rc, &whole.err);
            CHECK(whole.rc == HP_OK);
            CHECK_EQ_U64(whole.bytes_out, want.len);
            rc = unpack(&whole, &policies[k], &out, &err);
            show_error(name, rc, &err);
            CHECK(rc == HP_OK);
            if (!same_bytes(name, out.data, out.len, want.data, want.len))
                fprintf(stderr, "    policy %zu, block size %zu\n", k, blocks[b]);
            hp_buf_free(&out);
            for (s = 0; s < sizeof steps / sizeof steps[0] && b == 1; s++) {
                packed p;
                pack(src, len, &policies[k], blocks[b], steps[s], steps[s] == 3000 || steps[s] == 70000, &p);
                CHECK(p.rc == HP_OK);
                CHECK(same_packed(&whole, &p));
                packed_free(&p);
            }
            packed_free(&whole);
        }
        hp_buf_free(&want);
    }
}

/* ---- crafted dumps ---- */

typedef struct builder {
    hp_buf b;
    int ids;
    size_t rec;    /* where the open record starts */
} builder;

static void u1(builder *d, unsigned v) { uint8_t x = (uint8_t)v; hp_buf_append(&d->b, &x, 1); }
static void u2(builder *d, unsigned v) { uint8_t x[2]; hp_put16(x, (uint16_t)v); hp_buf_append(&d->b, x, 2); }
static void u4(builder *d, uint32_t v) { uint8_t x[4]; hp_put32(x, v); hp_buf_append(&d->b, x, 4); }
static void id(builder *d, uint64_t v)
{
    uint8_t x[8];
    if (d->ids == 8)
        hp_put64(x, v);
    else
        hp_put32(x, (uint32_t)v);
    hp_buf_append(&d->b, x, (size_t)d->ids);
}
static void bytes(builder *d, size_t n, unsigned seed, int random)
{
    size_t i;
    hp_buf_reserve(&d->b, n);
    for (i = 0; i < n; i++)
        d->b.data[d->b.len + i] = (uint8_t)(random ? rng() >> 7 : seed + i % 13);
    d->b.len += n;
}

static void start(builder *d, int version, int ids)
{
    uint8_t h[HP_HEADER_MAX];
    hp_buf_init(&d->b, NULL);
    d->ids = ids;
    hp_buf_append(&d->b, h, hp_header_write(h, version, ids, 0x123456789ULL));
}
static void rec(builder *d, unsigned tag, uint32_t time)
{
    d->rec = d->b.len;
    u1(d, tag);
    u4(d, time);
    u4(d, 0);
}
static void end(builder *d) { hp_put32(d->b.data + d->rec + 5, (uint32_t)(d->b.len - d->rec - 9)); }

static void string(builder *d, uint64_t sid, const char *text, size_t n)
{
    rec(d, HP_TAG_UTF8, 0);
    id(d, sid);
    hp_buf_append(&d->b, text, n);
    end(d);
}

/* CLASS_DUMP with the given instance field types and a few statics. */
static void class_dump(builder *d, uint64_t cls, uint64_t super, const uint8_t *types, unsigned n)
{
    unsigned i;
    u1(d, HP_SUB_CLASS_DUMP);
    id(d, cls);
    u4(d, 7);
    id(d, super);
    id(d, 0x1000);
    id(d, 0);
    id(d, 0);
    id(d, 0);
    id(d, 0);
    u4(d, 24);
    u2(d, 1); /* constant pool */
    u2(d, 9);
    u1(d, HP_T_OBJECT);
    id(d, cls + 0x40);
    u2(d, 2); /* statics */
    id(d, 0x500);
    u1(d, HP_T_LONG);
    u4(d, 1);
    u4(d, 2);
    id(d, 0x501);
    u1(d, HP_T_OBJECT);
    id(d, 0);
    u2(d, (uint16_t)n);
    for (i = 0; i < n; i++) {
        id(d, 0x600 + i);
        u1(d, types[i]);
    }
}

static size_t fields_size(const builder *d, const uint8_t *types, unsigned n)
{
    size_t size = 0;
    unsigned i;
    for (i = 0; i < n; i++)
        size += (size_t)hp_type_size(types[i], d->ids);
    return size;
}

static void instance(builder *d, uint64_t obj, uint64_t cls, size_t n, const uint64_t *refs, size_t nrefs)
{
    size_t i;
    u1(d, HP_SUB_INSTANCE_DUMP);
    id(d, obj);
    u4(d, 1);
    id(d, cls);
    u4(d, (uint32_t)n);
    /* the references first (the test classes put them first), then bytes */
    for (i = 0; i < nrefs; i++)
        id(d, refs[i]);
    bytes(d, n - nrefs * (size_t)d->ids, (unsigned)obj, 0);
}

static void prim_array(builder *d, uint64_t obj, int type, uint32_t count, int fill)
{
    size_t size = (size_t)hp_type_size(type, d->ids) * count;
    u1(d, HP_SUB_PRIM_ARRAY_DUMP);
    id(d, obj);
    u4(d, 0);
    u4(d, count);
    u1(d, (unsigned)type);
    if (fill == 0) {
        hp_buf_reserve(&d->b, size);
        memset(d->b.data + d->b.len, 0, size);
        d->b.len += size;
    } else {
        bytes(d, size, (unsigned)obj, fill == 2);
    }
}

static void obj_array(builder *d, uint64_t obj, uint64_t cls, uint32_t count, uint64_t step)
{
    uint32_t i;
    u1(d, HP_SUB_OBJ_ARRAY_DUMP);
    id(d, obj);
    u4(d, 0);
    u4(d, count);
    id(d, cls);
    for (i = 0; i < count; i++)
        id(d, i % 5 == 0 ? 0 : obj + 0x10 + i * step);
}

/* Every record and sub-record kind, odd layouts included, with payloads
 * over HP_WHOLE_MAX that arrive in pieces. */
static void build_everything(builder *d, int version, int ids)
{
    static const uint8_t base_types[] = { HP_T_OBJECT, HP_T_INT, HP_T_BYTE };
    static const uint8_t sub_types[] = { HP_T_OBJECT, HP_T_LONG, HP_T_CHAR, HP_T_BOOLEAN };
    static const uint8_t redefined[] = { HP_T_SHORT };
    const uint64_t top = ids == 8 ? 0x8000000000000000ULL : 0x80000000u;
    const unsigned heap = version < 2 ? HP_TAG_HEAP_DUMP : HP_TAG_HEAP_DUMP_SEGMENT;
    char big[3000];
    uint64_t refs[2];
    int i;
    start(d, version, ids);
    string(d, 0x400010, "java.lang.Object", 16);
    string(d, 0x400008, "with\0nul", 8);
    string(d, 0x400018, "", 0);
    memset(big, 'x', sizeof big);
    for (i = 0; i < 400; i++) /* > HP_WHOLE_MAX in all: a block cut among strings */
        string(d, 0x500000 + (uint64_t)rng() % 100000 * 8, big, sizeof big);
    rec(d, HP_TAG_UTF8, 5); /* shorter than an id: kept raw */
    u1(d, 1);
    end(d);
    rec(d, HP_TAG_UTF8, 0); /* over HP_WHOLE_MAX: kept raw, streamed */
    id(d, 0x400020);
    bytes(d, HP_WHOLE_MAX + 100, 3, 0);
    end(d);
    rec(d, HP_TAG_LOAD_CLASS, 0);
    u4(d, 2);
    id(d, 0x2000);
    u4(d, 0);
    id(d, 0x400010);
    end(d);
    rec(d, HP_TAG_LOAD_CLASS, 0);
    u4(d, 1);
    id(d, 0x3000);
    u4(d, 0);
    id(d, 0x400018);
    end(d);
    rec(d, HP_TAG_LOAD_CLASS, 0); /* wrong length: raw */
    u4(d, 3);
    end(d);
    rec(d, HP_TAG_FRAME, 9);
    id(d, 0x700);
    id(d, 0x400010);
    id(d, 0x400018);
    id(d, 0);
    u4(d, 1);
    u4(d, 0xFFFFFFFEu);
    end(d);
    rec(d, HP_TAG_TRACE, 10);
    u4(d, 1);
    u4(d, 2);
    u4(d, 2);
    id(d, 0x700);
    id(d, 0x708);
    end(d);
    rec(d, HP_TAG_TRACE, 11); /* frame count disagrees with the length: raw */
    u4(d, 1);
    u4(d, 2);
    u4(d, 5);
    id(d, 0x700);
    end(d);
    rec(d, 0x42, 12); /* unknown record */
    bytes(d, 33, 1, 0);
    end(d);
    rec(d, heap, 0); /* empty */
    end(d);
    rec(d, heap, 13);
    u1(d, HP_SUB_ROOT_UNKNOWN);
    id(d, 0x2000);
    u1(d, HP_SUB_ROOT_JNI_GLOBAL);
    id(d, 0x2008);
    id(d, 0x9999);
    u1(d, HP_SUB_ROOT_JAVA_FRAME);
    id(d, 0x2010);
    u4(d, 1);
    u4(d, 0xFFFFFFFFu);
    u1(d, HP_SUB_ROOT_THREAD_BLOCK);
    id(d, 0x2018);
    u4(d, 4);
    if (version == 3) {
        u1(d, HP_SUB_HEAP_DUMP_INFO);
        u4(d, 'Z');
        id(d, 0x400010);
        u1(d, HP_SUB_ROOT_JNI_MONITOR);
        id(d, 0x2020);
        u4(d, 1);
        u4(d, 5);
        u1(d, HP_SUB_ROOT_INTERNED_STRING);
        id(d, 0x2028);
        u1(d, HP_SUB_UNREACHABLE);
        id(d, 0x2030);
    }
    class_dump(d, 0x2000, 0, base_types, 3);
    class_dump(d, 0x3000, 0x2000, sub_types, 4);
    refs[0] = 0x10000;
    refs[1] = 0x10008;
    for (i = 0; i < 300; i++) /* by layout: refs first (sub's own object field, then base's) */
        instance(d, 0x10000 + (uint64_t)i * 48, 0x3000,
                 fields_size(d, sub_types, 4) + fields_size(d, base_types, 3), refs, 2);
    for (i = 0; i < 50; i++) { /* references that need the escape: 2^63 (2^31) away */
        refs[0] = 0x20000 + (uint64_t)i * 16 + top + (i % 3 ? 5 : 0);
        refs[1] = (0x20000 + (uint64_t)i * 16) ^ 1;
        instance(d, 0x20000 + (uint64_t)i * 16, 0x3000,
                 fields_size(d, sub_types, 4) + fields_size(d, base_types, 3), refs, 2);
    }
    instance(d, 0x30000, 0x3000, 5, NULL, 0);         /* size that does not fit the class */
    instance(d, 0x30100, 0x4444, 12, NULL, 0);        /* a class never dumped */
    instance(d, 0x30200, 0x2000, HP_WHOLE_MAX + 9, NULL, 0); /* over HP_WHOLE_MAX: raw */
    prim_array(d, 0x40000, HP_T_BYTE, 100000, 0);
    prim_array(d, 0x50000, HP_T_LONG, 7, 1);
    prim_array(d, 0x50100, HP_T_INT, 3000, 2); /* noise */
    prim_array(d, 0x50200, HP_T_CHAR, 1, 1);
    prim_array(d, 0x50300, HP_T_SHORT, 0, 1);
    prim_array(d, 0x60000, HP_T_CHAR, 700000, 1); /* over HP_WHOLE_MAX: pieces, block cuts */
    prim_array(d, 0x70000, HP_T_LONG, 200000, 1);
    prim_array(d, 0x80000, HP_T_DOUBLE, 5000, 1);
    prim_array(d, 0x80100, HP_T_FLOAT, 3, 1);
    prim_array(d, 0x80200, HP_T_BOOLEAN, 9, 1);
    obj_array(d, 0x90000, 0x3000, 1000, 8);
    obj_array(d, 0xA0000, 0x5555, (uint32_t)(HP_WHOLE_MAX / (size_t)ids + 77), 24); /* pieces */
    obj_array(d, 0xB0000, 0x2000, 0, 8);
    u1(d, HP_SUB_PRIM_ARRAY_NODATA);
    id(d, 0xC0000);
    u4(d, 0);
    u4(d, 12);
    u1(d, HP_T_INT);
    if (version == 3) {
        u1(d, HP_SUB_HEAP_DUMP_INFO);
        u4(d, 'A');
        id(d, 0x400018);
    }
    class_dump(d, 0x2000, 0, redefined, 1); /* dumped again, other fields */
    instance(d, 0xD0000, 0x3000, fields_size(d, sub_types, 4) + 2, refs, 1);
    instance(d, 0xD0100, 0x2000, 2, NULL, 0);
    end(d);
    rec(d, HP_TAG_HEAP_DUMP_END, 0);
    end(d);
    rec(d, HP_TAG_HEAP_DUMP_END, 0); /* with a body: raw */
    bytes(d, 3, 0, 0);
    end(d);
}

/* An Android-style dump: many small segments switching between heaps. */
static void build_android(builder *d)
{
    static const uint8_t types[] = { HP_T_OBJECT, HP_T_INT };
    static const unsigned heaps[] = { 'A', 'Z', 'I', 'A' };
    int seg, i;
    start(d, 3, 4);
    string(d, 0x400000, "app", 3);
    rec(d, HP_TAG_HEAP_DUMP_SEGMENT, 0);
    class_dump(d, 0x1000, 0, types, 2);
    end(d);
    for (seg = 0; seg < 400; seg++) {
        rec(d, HP_TAG_HEAP_DUMP_SEGMENT, 0);
        for (i = 0; i < 12; i++) {
            uint64_t refs[1];
            uint64_t obj = 0x100000 + (uint64_t)(seg * 12 + i) * 32;
            if (i % 4 == 0) {
                u1(d, HP_SUB_HEAP_DUMP_INFO);
                u4(d, heaps[(seg + i / 4) % 4]);
                id(d, 0x400000);
            }
            refs[0] = obj - 32;
            if (i % 3 == 0)
                prim_array(d, obj, HP_T_CHAR, 20 + (uint32_t)i, 1);
            else
                instance(d, obj, 0x1000, 8, refs, 1);
            if (i == 5) {
                u1(d, HP_SUB_ROOT_STICKY_CLASS);
                id(d, 0x1000);
            }
        }
        if (seg % 50 == 7) { /* heap switch followed by nothing kept, then a segment of dropped objects only */
            u1(d, HP_SUB_HEAP_DUMP_INFO);
            u4(d, 'Z');
            id(d, 0x400000);
            prim_array(d, 0x900000 + (uint64_t)seg * 64, HP_T_BYTE, 3, 1);
            end(d);
            rec(d, HP_TAG_HEAP_DUMP_SEGMENT, 0);
            u1(d, HP_SUB_HEAP_DUMP_INFO);
            u4(d, 'I');
            id(d, 0x400000);
            prim_array(d, 0x980000 + (uint64_t)seg * 64, HP_T_BYTE, 3, 1);
        }
        end(d);
    }
    rec(d, HP_TAG_HEAP_DUMP_END, 0);
    end(d);
}

/* Heap records whose length the encoder cannot know when a block is cut
 * inside them (app_only) are restored by holding them until their END op. */
static void test_deferred_heap_records(void)
{
    builder d;
    packed p;
    hp_buf out, want;
    hp_error err;
    size_t i, deferred = 0;
    build_android(&d);
    pack(d.b.data, d.b.len, &policies[3], HP_PACK_BLOCK_MIN, 0, 0, &p);
    CHECK(p.rc == HP_OK);
    for (i = 0; i < p.streams[HP_PS_LEN].len; i++)
        deferred += p.streams[HP_PS_LEN].data[i] == 0;
    CHECK(deferred > 10);
    reference(d.b.data, d.b.len, &policies[3], &want);
    CHECK(unpack(&p, &policies[3], &out, &err) == HP_OK);
    CHECK(same_bytes("deferred", out.data, out.len, want.data, want.len));
    hp_buf_free(&out);
    hp_buf_free(&want);
    packed_free(&p);
    hp_buf_free(&d.b);
}

/* Streams that lie: shortened, lengthened or flipped streams, and a wrong
 * out_len.  Shortened, lengthened and mis-sized blocks must fail; a flipped
 * value byte may still decode (the container's CRCs catch that), but
 * nothing may crash, read out of bounds or allocate without bound. */
static void corrupt_one(const packed *good, size_t block, int stream, int how, size_t *fails, size_t *runs)
{
    packed p = *good;
    hp_buf copy, out;
    hp_error err;
    hp_code rc;
    size_t at = block * HP_PACK_NSTREAMS + (size_t)stream, off = 0, b, len = good->lens[at];
    int i;
    uint64_t *outs = malloc(good->nblocks * sizeof *outs);
    size_t *lens = malloc(good->nblocks * HP_PACK_NSTREAMS * sizeof *lens);
    memcpy(outs, good->outs, good->nblocks * sizeof *outs);
    memcpy(lens, good->lens, good->nblocks * HP_PACK_NSTREAMS * sizeof *lens);
    for (b = 0; b < block; b++)
        off += good->lens[b * HP_PACK_NSTREAMS + (size_t)stream];
    hp_buf_init(&copy, NULL);
    hp_buf_append(&copy, good->streams[stream].data, good->streams[stream].len);
    switch (how) {
    case 0: /* shortened by one byte */
        memmove(copy.data + off + len - 1, copy.data + off + len, copy.len - off - len);
        copy.len--;
        lens[at]--;
        break;
    case 1: /* one byte more */
        hp_buf_append(&copy, "", 1);
        memmove(copy.data + off + len + 1, copy.data + off + len, copy.len - 1 - off - len);
        copy.data[off + len] = (uint8_t)rng();
        lens[at]++;
        break;
    case 2: /* a flipped bit */
        copy.data[off + rng() % len] ^= (uint8_t)(1u << rng() % 8);
        break;
    default: /* the block claims one byte more */
        outs[block]++;
        break;
    }
    for (i = 0; i < HP_PACK_NSTREAMS; i++)
        p.streams[i] = good->streams[i];
    p.streams[stream] = copy;
    p.lens = lens;
    p.outs = outs;
    out_cap = (size_t)64 << 20;
    rc = unpack(&p, NULL, &out, &err);
    out_cap = 0;
    *fails += rc != HP_OK;
    *runs += 1;
    if (how != 2)
        CHECK(rc != HP_OK);
    hp_buf_free(&out);
    hp_buf_free(&copy);
    free(outs);
    free(lens);
}

static void test_corrupt_streams(void)
{
    builder d;
    packed good;
    size_t fails = 0, runs = 0, block, trial;
    int stream;
    build_everything(&d, 3, 4);
    pack(d.b.data, d.b.len, NULL, 64 << 10, 0, 0, &good);
    CHECK(good.rc == HP_OK);
    for (block = 0; block < good.nblocks; block++)
        for (stream = 0; stream < HP_PACK_NSTREAMS; stream++) {
            if (good.lens[block * HP_PACK_NSTREAMS + (size_t)stream] == 0)
                continue;
            for (trial = 0; trial < 4; trial++)
                corrupt_one(&good, block, stream, (int)trial, &fails, &runs);
        }
    printf("  corrupt streams: %zu of %zu decodes failed cleanly\n", fails, runs);
    CHECK(fails * 10 > runs * 8);
    packed_free(&good);
    hp_buf_free(&d.b);
}

static void test_crafted(void)
{
    builder d;
    build_everything(&d, 2, 8);
    check_all_ways("crafted 1.0.2 id 8", d.b.data, d.b.len);
    hp_buf_free(&d.b);
    build_everything(&d, 3, 4);
    check_all_ways("crafted 1.0.3 id 4", d.b.data, d.b.len);
    hp_buf_free(&d.b);
    build_everything(&d, 1, 4);
    check_all_ways("crafted 1.0.1 id 4", d.b.data, d.b.len);
    hp_buf_free(&d.b);
    build_android(&d);
    check_all_ways("crafted android heaps", d.b.data, d.b.len);
    hp_buf_free(&d.b);
    start(&d, 0, 4); /* a header and nothing else */
    check_all_ways("header only", d.b.data, d.b.len);
    hp_buf_free(&d.b);
}

/* An allocator that counts calls and fails the one numbered fail_at (from 1). */
static long alloc_calls, fail_at;
static void *counted_malloc(size_t n) { return ++alloc_calls == fail_at ? NULL : malloc(n); }
static void *counted_realloc(void *p, size_t n) { return ++alloc_calls == fail_at ? NULL : realloc(p, n); }
static const hp_alloc counted = { counted_malloc, counted_realloc, free };

/* The decoder out of memory at any one allocation: HP_E_NOMEM, and nothing
 * leaks (LeakSanitizer checks at exit), tables that grow from block to block
 * (64 KiB blocks) included. */
static void test_decoder_out_of_memory(void)
{
    size_t len;
    long total, k;
    uint8_t *src = load_dump("hprof/mat__sun_jdk6_32bit.hprof", &len);
    packed p;
    hp_buf out;
    hp_error err;
    CHECK(src != NULL);
    if (!src)
        return;
    pack(src, len, NULL, (size_t)64 << 10, 0, 0, &p);
    CHECK(p.rc == HP_OK && p.nblocks > 4);
    unpack_alloc = &counted;
    alloc_calls = 0;
    fail_at = 0;
    CHECK(unpack(&p, NULL, &out, &err) == HP_OK);
    hp_buf_free(&out);
    total = alloc_calls;
    printf("  pack decoder out of memory at each of its %ld allocations\n", total);
    for (k = 1; k <= total; k++) {
        hp_code rc;
        alloc_calls = 0;
        fail_at = k;
        rc = unpack(&p, NULL, &out, &err);
        CHECK(rc == HP_E_NOMEM);
        hp_buf_free(&out);
    }
    unpack_alloc = NULL;
    packed_free(&p);
    free(src);
}

/* #30: the restore limit, and a pack's end record read before anything is
 * restored: found at any length of its varints, refused over the limit. */
static void test_declared_size_before_restoring(void)
{
    uint8_t pack[64];
    size_t end, n;
    hp_error err;
    CHECK(hp_restore_limit(0, 1000) == HP_RESTORE_FLOOR);
    CHECK(hp_restore_limit(0, (uint64_t)10 << 30) == ((uint64_t)10 << 30) * HP_RESTORE_RATIO);
    CHECK(hp_restore_limit(0, UINT64_MAX / 10) == UINT64_MAX);
    CHECK(hp_restore_limit(12345, (uint64_t)1 << 40) == 12345);
    memset(pack, 0xAA, sizeof pack);
    for (end = 0; end < 20; end += 7) {
        uint64_t total = end == 0 ? 100 : end == 7 ? HP_RESTORE_FLOOR + 1 : UINT64_MAX;
        n = end + pf_end_write(pack + end, 3, 1 << 20, total);
        memset(&err, 0, sizeof err);
        CHECK(hp_pack_check_end(pack, n, 1 << 20, 0, &err) == (total > HP_RESTORE_FLOOR ? HP_E_TOO_LARGE : HP_OK));
        if (total > HP_RESTORE_FLOOR)
            CHECK(err.offset == (1 << 20) - (n - end) && strstr(err.text, "the pack's end record at offset") != NULL);
        CHECK(hp_pack_check_end(pack, n, 1 << 20, UINT64_MAX, &err) == HP_OK);
        pack[n - 1] ^= 1; /* a bad checksum: no end record there, the restore tells what is wrong */
        CHECK(hp_pack_check_end(pack, n, 1 << 20, 0, &err) == HP_OK);
    }
    CHECK(hp_pack_check_end(pack, 0, 0, 0, &err) == HP_OK);
}

int main(void)
{
    test_declared_size_before_restoring();
    test_crafted();
    test_deferred_heap_records();
    test_corrupt_streams();
    test_real_dumps();
    test_chunking();
    test_decoder_out_of_memory();
    return check_report("test_pack");
}
