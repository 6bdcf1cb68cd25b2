/* Tailor mini format: the encoder and decoder against the golden vectors made
 * by Tailor's own scripts, chunking invariance, app_only, every refusal on
 * crafted dumps, and truncation / corruption sweeps of mini streams. */
#include <time.h>
#include <zlib.h>

#include "testkit.h"
#include "hp_parser.h"
#include "hp_sink.h"
#include "hp_tailor.h"

/* ---- helpers ---- */

static uint32_t rng_state = 12345;
static unsigned rng(void) { return xorshift(&rng_state); }

static int inflate_all(const uint8_t *z, size_t n, hp_buf *out)
{
    z_stream s;
    uint8_t tmp[65536];
    int rc;
    memset(&s, 0, sizeof s);
    if (inflateInit(&s) != Z_OK)
        return -1;
    s.next_in = (Bytef *)z;
    s.avail_in = (uInt)n;
    do {
        s.next_out = tmp;
        s.avail_out = sizeof tmp;
        rc = inflate(&s, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END)
            break;
        hp_buf_append(out, tmp, sizeof tmp - s.avail_out);
    } while (rc != Z_STREAM_END);
    inflateEnd(&s);
    return rc == Z_STREAM_END ? 0 : -1;
}

/* Runs a filter over data in chunks: step 0 = one shot, else chunks of
 * `step` bytes, or of 1..step random bytes when `random` is set. */
typedef struct run {
    hp_code rc;
    hp_error err;
    hp_buf out;
    char counter[2048];
    uint64_t bytes_in, bytes_out, dropped;
} run;

/* A sink that refuses to grow past out_cap bytes (0 = no cap), so a corrupt
 * mini asking for gigabytes of zero fill ends quickly. */
static size_t out_cap;
static int capped_write(void *ctx, const uint8_t *data, size_t len)
{
    hp_buf *b = ctx;
    if (out_cap && b->len + len > out_cap)
        return -1;
    return hp_buf_append(b, data, len);
}

static void run_filter(int decode, const uint8_t *data, size_t len, const hp_tailor_options *opt, size_t step,
                       int random, run *r)
{
    hp_tailor_encoder *e = decode ? NULL : hp_tailor_encoder_new(NULL, opt);
    hp_tailor_decoder *d = decode ? hp_tailor_decoder_new(NULL, opt) : NULL;
    hp_sink sink;
    size_t pos = 0;

    memset(r, 0, sizeof *r);
    hp_buf_init(&r->out, NULL);
    sink.patch = NULL;
    sink.write = capped_write;
    sink.ctx = &r->out;
    do {
        size_t n = step == 0 ? len - pos : (random ? 1 + rng() % step : step);
        if (n > len - pos)
            n = len - pos;
        r->rc = decode ? hp_tailor_decoder_feed(d, data + pos, n, &sink, &r->err)
                       : hp_tailor_encoder_feed(e, data + pos, n, &sink, &r->err);
        pos += n;
    } while (r->rc == HP_OK && pos < len);
    if (r->rc == HP_OK)
        r->rc = decode ? hp_tailor_decoder_finish(d, &sink, &r->err) : hp_tailor_encoder_finish(e, &sink, &r->err);
    hp_tailor_counter_format(decode ? hp_tailor_decoder_counter(d) : hp_tailor_encoder_counter(e), r->counter,
                             sizeof r->counter);
    r->bytes_in = decode ? hp_tailor_decoder_bytes_in(d) : hp_tailor_encoder_bytes_in(e);
    r->bytes_out = decode ? hp_tailor_decoder_bytes_out(d) : hp_tailor_encoder_bytes_out(e);
    r->dropped = decode ? 0 : hp_tailor_encoder_dropped(e);
    hp_tailor_encoder_free(e);
    hp_tailor_decoder_free(d);
}



/* First line of a Tailor log (the counter dict), into buf. */
static int log_line(const char *rel, int line, char *buf, size_t size)
{
    size_t n, i, start = 0;
    unsigned char *t = check_read_file(check_data_path(rel), &n);
    int at = 0;
    if (!t)
        return -1;
    for (i = 0; i <= n; i++) {
        if (i == n || t[i] == '\n') {
            if (at++ == line) {
                size_t k = i - start < size - 1 ? i - start : size - 1;
                memcpy(buf, t + start, k);
                buf[k] = 0;
                free(t);
                return 0;
            }
            start = i + 1;
        }
    }
    free(t);
    return -1;
}

/* ---- the golden vectors ---- */

typedef struct golden {
    const char *name, *source, *mini, *restored, *encode_log, *decode_log;
    uint8_t *src, *restored_bytes;
    size_t src_len, restored_len;
    hp_buf mini_bytes; /* inflated */
} golden;

static golden goldens[] = {
    { "art_like", "tailor/art_like.hprof", "tailor/art_like.mini", "tailor/art_like.restored.hprof", NULL, NULL,
      NULL, NULL, 0, 0, { 0 } },
    { "leak_service_binder", "hprof/leakcanary__leak_service_binder.hprof", "tailor/leak_service_binder.mini",
      "tailor/leak_service_binder.restored.hprof", "tailor/leak_service_binder.encode.log",
      "tailor/leak_service_binder.decode.log", NULL, NULL, 0, 0, { 0 } },
    { "dialer", "hprof/platform_tools_base__dialer.android-hprof", "tailor/dialer.mini",
      "tailor/dialer.restored.hprof", "tailor/dialer.encode.log", "tailor/dialer.decode.log", NULL, NULL, 0, 0,
      { 0 } },
};
#define N_GOLDENS (sizeof goldens / sizeof goldens[0])

static int load_goldens(void)
{
    size_t i;
    for (i = 0; i < N_GOLDENS; i++) {
        golden *g = &goldens[i];
        size_t zlen;
        uint8_t *z = check_read_file(check_data_path(g->mini), &zlen);
        g->src = check_read_file(check_data_path(g->source), &g->src_len);
        g->restored_bytes = check_read_file(check_data_path(g->restored), &g->restored_len);
        hp_buf_init(&g->mini_bytes, NULL);
        if (!z || !g->src || !g->restored_bytes || inflate_all(z, zlen, &g->mini_bytes) < 0) {
            fprintf(stderr, "cannot load golden %s\n", g->name);
            free(z);
            return -1;
        }
        free(z);
    }
    return 0;
}

static void test_goldens(void)
{
    size_t i;
    for (i = 0; i < N_GOLDENS; i++) {
        golden *g = &goldens[i];
        run r;
        char want[2048], line[256];

        run_filter(0, g->src, g->src_len, NULL, 0, 0, &r);
        show_error(g->name, r.rc, &r.err);
        CHECK(r.rc == HP_OK);
        CHECK(same_bytes(g->name, r.out.data, r.out.len, g->mini_bytes.data, g->mini_bytes.len));
        CHECK_EQ_U64(r.bytes_in, g->src_len);
        CHECK_EQ_U64(r.bytes_out, g->mini_bytes.len);
        if (g->encode_log) {
            unsigned long long a, b, c;
            CHECK(log_line(g->encode_log, 0, want, sizeof want) == 0);
            CHECK(strcmp(r.counter, want) == 0);
            CHECK(log_line(g->encode_log, 1, line, sizeof line) == 0);
            CHECK(sscanf(line, "COMPLETE: %llu/%llu -> %llu", &a, &b, &c) == 3);
            CHECK_EQ_U64(r.bytes_in, a);
            CHECK_EQ_U64(r.bytes_out, c);
        }
        hp_buf_free(&r.out);

        run_filter(1, g->mini_bytes.data, g->mini_bytes.len, NULL, 0, 0, &r);
        show_error(g->name, r.rc, &r.err);
        CHECK(r.rc == HP_OK);
        CHECK(same_bytes(g->name, r.out.data, r.out.len, g->restored_bytes, g->restored_len));
        CHECK_EQ_U64(r.bytes_in, g->mini_bytes.len);
        CHECK_EQ_U64(r.bytes_out, g->restored_len);
        if (g->decode_log) {
            CHECK(log_line(g->decode_log, 0, want, sizeof want) == 0);
            CHECK(strcmp(r.counter, want) == 0);
        }
        hp_buf_free(&r.out);
    }
}

/* Output must not depend on how the input is cut. */
static void test_chunking(void)
{
    static const size_t steps[] = { 1, 7, 4096, 3000, 70000 };
    size_t i, s;
    for (i = 0; i < N_GOLDENS; i++) {
        golden *g = &goldens[i];
        for (s = 0; s < sizeof steps / sizeof steps[0]; s++) {
            int random = steps[s] == 3000 || steps[s] == 70000;
            run r;
            run_filter(0, g->src, g->src_len, NULL, steps[s], random, &r);
            CHECK(r.rc == HP_OK);
            CHECK(same_bytes("encode chunked", r.out.data, r.out.len, g->mini_bytes.data, g->mini_bytes.len));
            hp_buf_free(&r.out);
            run_filter(1, g->mini_bytes.data, g->mini_bytes.len, NULL, steps[s], random, &r);
            CHECK(r.rc == HP_OK);
            CHECK(same_bytes("decode chunked", r.out.data, r.out.len, g->restored_bytes, g->restored_len));
            hp_buf_free(&r.out);
        }
    }
}

/* ---- crafted dumps: the source, and what restore(encode(source)) must be ---- */

typedef struct dump {
    hp_buf src, exp;
    size_t src_seg, exp_seg; /* where the open segment's record starts */
} dump;

static void put_u1(hp_buf *b, unsigned v)
{
    uint8_t x = (uint8_t)v;
    hp_buf_append(b, &x, 1);
}
static void put_u2(hp_buf *b, unsigned v)
{
    uint8_t x[2];
    hp_put16(x, (uint16_t)v);
    hp_buf_append(b, x, 2);
}
static void put_u4(hp_buf *b, uint32_t v)
{
    uint8_t x[4];
    hp_put32(x, v);
    hp_buf_append(b, x, 4);
}
static void put_zeros(hp_buf *b, size_t n)
{
    while (n--)
        put_u1(b, 0);
}
static void put_pattern(hp_buf *b, size_t n, unsigned seed)
{
    size_t i;
    hp_buf_reserve(b, n);
    for (i = 0; i < n; i++)
        b->data[b->len + i] = (uint8_t)(seed + i * 7 + (i >> 8));
    b->len += n;
}
/* Both: the same bytes in the source and in the restored dump. */
static void both_u1(dump *d, unsigned v) { put_u1(&d->src, v); put_u1(&d->exp, v); }
static void both_u2(dump *d, unsigned v) { put_u2(&d->src, v); put_u2(&d->exp, v); }
static void both_u4(dump *d, uint32_t v) { put_u4(&d->src, v); put_u4(&d->exp, v); }
/* A field Tailor drops: `v` in the source, zero once restored. */
static void lost_u4(dump *d, uint32_t v) { put_u4(&d->src, v); put_u4(&d->exp, 0); }

static void d_init_as(dump *d, const char *magic, uint32_t id_size)
{
    hp_buf_init(&d->src, NULL);
    hp_buf_init(&d->exp, NULL);
    hp_buf_append(&d->src, magic, strlen(magic) + 1);
    put_u4(&d->src, id_size);
    put_u4(&d->src, 0x17F);
    put_u4(&d->src, 0x12345678);
    hp_buf_append(&d->exp, "JAVA PROFILE 1.0.3", 19);
    put_u4(&d->exp, 4);
    put_zeros(&d->exp, 8);
}
static void d_init(dump *d) { d_init_as(d, "JAVA PROFILE 1.0.3", 4); }
static void d_free(dump *d)
{
    hp_buf_free(&d->src);
    hp_buf_free(&d->exp);
}

static void d_head(dump *d, unsigned tag, uint32_t len)
{
    both_u1(d, tag);
    lost_u4(d, 0x01020304); /* time */
    both_u4(d, len);
}
static void d_string(dump *d, uint32_t sid, size_t text_len)
{
    d_head(d, HP_TAG_UTF8, (uint32_t)(4 + text_len));
    both_u4(d, sid);
    put_pattern(&d->src, text_len, sid);
    put_pattern(&d->exp, text_len, sid);
}
static void d_load_class(dump *d, uint32_t cid, uint32_t sid)
{
    d_head(d, HP_TAG_LOAD_CLASS, 16);
    lost_u4(d, 77); /* class serial */
    both_u4(d, cid);
    lost_u4(d, 5); /* stack-trace serial */
    both_u4(d, sid);
}
static void d_trace(dump *d, uint32_t frames) /* source only: Tailor drops it */
{
    uint32_t i;
    put_u1(&d->src, HP_TAG_TRACE);
    put_u4(&d->src, 0);
    put_u4(&d->src, 12 + 4 * frames);
    put_u4(&d->src, 1);
    put_u4(&d->src, 2);
    put_u4(&d->src, frames);
    for (i = 0; i < frames; i++)
        put_u4(&d->src, 0x100 + i);
}
static void d_seg(dump *d, unsigned tag)
{
    d->src_seg = d->src.len;
    d->exp_seg = d->exp.len;
    put_u1(&d->src, tag);
    put_u1(&d->exp, HP_TAG_HEAP_DUMP_SEGMENT);
    lost_u4(d, 0x0A0B0C0D);
    both_u4(d, 0);
}
static void d_seg_end(dump *d)
{
    hp_put32(d->src.data + d->src_seg + 5, (uint32_t)(d->src.len - d->src_seg - 9));
    if (d->exp.len == d->exp_seg + 9)
        d->exp.len = d->exp_seg; /* an empty segment is not restored */
    else
        hp_put32(d->exp.data + d->exp_seg + 5, (uint32_t)(d->exp.len - d->exp_seg - 9));
}
static void d_heap_end(dump *d) { d_head(d, HP_TAG_HEAP_DUMP_END, 0); }

static void s_root(dump *d, unsigned tag, uint32_t id)
{
    both_u1(d, tag);
    both_u4(d, id);
    switch (tag) {
    case HP_SUB_ROOT_JNI_GLOBAL:
        both_u4(d, id + 1); /* global-ref id is kept */
        break;
    case HP_SUB_ROOT_JNI_LOCAL: case HP_SUB_ROOT_JAVA_FRAME: case HP_SUB_ROOT_THREAD_OBJECT:
    case HP_SUB_ROOT_JNI_MONITOR:
        lost_u4(d, 3);
        lost_u4(d, 0xFFFFFFFF);
        break;
    case HP_SUB_ROOT_NATIVE_STACK: case HP_SUB_ROOT_THREAD_BLOCK:
        lost_u4(d, 3);
        break;
    }
}
static void s_info(dump *d, unsigned heap, uint32_t sid)
{
    both_u1(d, HP_SUB_HEAP_DUMP_INFO);
    both_u4(d, heap);
    both_u4(d, sid);
}
static void s_class(dump *d, uint32_t cid, uint32_t instance_size)
{
    both_u1(d, HP_SUB_CLASS_DUMP);
    both_u4(d, cid);
    lost_u4(d, 9);            /* stack serial */
    both_u4(d, 0x1000);       /* super */
    both_u4(d, 0x2000);       /* loader */
    both_u4(d, 0x3000);       /* signers */
    both_u4(d, 0x4000);       /* protection domain */
    lost_u4(d, 0x55);         /* reserved */
    lost_u4(d, 0x66);         /* reserved */
    put_u4(&d->src, instance_size);
    put_u2(&d->exp, 0);
    put_u2(&d->exp, instance_size & 0xFFFF);
    both_u2(d, 1);            /* constant pool */
    both_u2(d, 3);
    both_u1(d, HP_T_LONG);
    both_u4(d, 1);
    both_u4(d, 2);
    both_u2(d, 3);            /* statics: byte, char (kept verbatim), object */
    both_u4(d, 0x400001);
    both_u1(d, HP_T_BYTE);
    both_u1(d, 0x7F);
    both_u4(d, 0x400002);
    both_u1(d, HP_T_CHAR);
    both_u2(d, 0x4142);
    both_u4(d, 0x400003);
    both_u1(d, HP_T_OBJECT);
    both_u4(d, 0x5000);
    both_u2(d, 2);            /* instance fields */
    both_u4(d, 0x400004);
    both_u1(d, HP_T_INT);
    both_u4(d, 0x400005);
    both_u1(d, HP_T_OBJECT);
}
static void s_instance(dump *d, uint32_t id, uint32_t cid, uint32_t n)
{
    both_u1(d, HP_SUB_INSTANCE_DUMP);
    both_u4(d, id);
    lost_u4(d, 1);
    both_u4(d, cid);
    both_u4(d, n);
    put_pattern(&d->src, n, id);
    put_pattern(&d->exp, n, id);
}
static void s_obj_array(dump *d, uint32_t id, uint32_t n)
{
    both_u1(d, HP_SUB_OBJ_ARRAY_DUMP);
    both_u4(d, id);
    lost_u4(d, 1);
    both_u4(d, n);
    both_u4(d, 0x7000);
    put_pattern(&d->src, 4 * (size_t)n, id);
    put_pattern(&d->exp, 4 * (size_t)n, id);
}
static void s_prim_array(dump *d, uint32_t id, unsigned type, uint32_t n)
{
    size_t bytes = (size_t)n * (size_t)hp_type_size((int)type, 4);
    both_u1(d, HP_SUB_PRIM_ARRAY_DUMP);
    both_u4(d, id);
    lost_u4(d, 1);
    both_u4(d, n);
    both_u1(d, type);
    put_pattern(&d->src, bytes, id);
    if (type == HP_T_CHAR || type == HP_T_BYTE)
        put_zeros(&d->exp, bytes); /* contents erased */
    else
        put_pattern(&d->exp, bytes, id);
}

/* A dump touching every record and sub-record Tailor keeps. */
static void d_everything(dump *d, size_t big)
{
    static const unsigned roots[] = { 0xFF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                      0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E };
    static const unsigned types[] = { 4, 5, 6, 7, 8, 9, 10, 11 };
    size_t i;
    d_init(d);
    d_string(d, 0x400000, 10);
    d_string(d, 0x400001, 65531); /* the longest STRING the mini can hold */
    d_load_class(d, 0x10, 0x400000);
    d_trace(d, 3);
    d_seg(d, HP_TAG_HEAP_DUMP_SEGMENT);
    for (i = 0; i < sizeof roots / sizeof roots[0]; i++)
        s_root(d, roots[i], (uint32_t)(0x100 + i));
    s_info(d, 'A', 0x400000);
    s_class(d, 0x10, 12);
    s_class(d, 0x11, 0xFFFF);
    d_seg_end(d);
    d_seg(d, HP_TAG_HEAP_DUMP_SEGMENT); /* empty: encode.py writes it, decode.py deletes it */
    d_seg_end(d);
    d_seg(d, HP_TAG_HEAP_DUMP); /* 0x0C comes back as 0x1C */
    s_instance(d, 0x20, 0x10, 12);
    s_instance(d, 0x21, 0x10, 0);
    s_obj_array(d, 0x22, 3);
    for (i = 0; i < sizeof types / sizeof types[0]; i++)
        s_prim_array(d, (uint32_t)(0x30 + i), types[i], (uint32_t)(i + 2));
    d_seg_end(d);
    if (big) { /* payloads far beyond HP_WHOLE_MAX, streamed as pieces */
        d_seg(d, HP_TAG_HEAP_DUMP_SEGMENT);
        s_prim_array(d, 0x40, HP_T_INT, (uint32_t)(big / 4));
        s_prim_array(d, 0x41, HP_T_BYTE, (uint32_t)big);
        s_prim_array(d, 0x42, HP_T_CHAR, (uint32_t)(big / 2));
        s_instance(d, 0x43, 0x10, (uint32_t)big);
        s_obj_array(d, 0x44, (uint32_t)(big / 4));
        s_root(d, 0x05, 0x45);
        d_seg_end(d);
    }
    d_heap_end(d);
}

static void check_round_trip(const char *what, const dump *d, const hp_tailor_options *opt)
{
    static const size_t steps[] = { 0, 1, 7, 4096, 5000 };
    run ref, r, back;
    size_t s;
    run_filter(0, d->src.data, d->src.len, opt, 0, 0, &ref);
    show_error(what, ref.rc, &ref.err);
    CHECK(ref.rc == HP_OK);
    for (s = 1; s < sizeof steps / sizeof steps[0]; s++) {
        if (steps[s] == 1 && d->src.len > ((size_t)1 << 20))
            continue;
        run_filter(0, d->src.data, d->src.len, opt, steps[s], steps[s] == 5000, &r);
        CHECK(r.rc == HP_OK);
        CHECK(same_bytes(what, r.out.data, r.out.len, ref.out.data, ref.out.len));
        CHECK(strcmp(r.counter, ref.counter) == 0);
        hp_buf_free(&r.out);
    }
    for (s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        if (steps[s] == 1 && ref.out.len > ((size_t)1 << 20))
            continue;
        run_filter(1, ref.out.data, ref.out.len, NULL, steps[s], steps[s] == 5000, &back);
        show_error(what, back.rc, &back.err);
        CHECK(back.rc == HP_OK);
        CHECK(same_bytes(what, back.out.data, back.out.len, d->exp.data, d->exp.len));
        hp_buf_free(&back.out);
    }
    hp_buf_free(&ref.out);
}

static void test_crafted_round_trip(void)
{
    dump d;
    run r;
    d_everything(&d, 0);
    check_round_trip("everything", &d, NULL);
    run_filter(0, d.src.data, d.src.len, NULL, 0, 0, &r);
    CHECK(strcmp(r.counter, "{'STRING': 2, 'LOAD_CLASS': 1, 'STACK_TRACE': 1, 'HEAP_DUMP_SEGMENT': 3, "
                            "'ROOT_UNKNOWN': 1, 'ROOT_JNI_GLOBAL': 1, 'ROOT_JNI_LOCAL': 1, 'ROOT_JAVA_FRAME': 1, "
                            "'ROOT_NATIVE_STACK': 1, 'ROOT_STICKY_CLASS': 1, 'ROOT_THREAD_BLOCK': 1, "
                            "'ROOT_MONITOR_USED': 1, 'ROOT_THREAD_OBJECT': 1, 'ROOT_INTERNED_STRING': 1, "
                            "'ROOT_FINALIZING': 1, 'ROOT_DEBUGGER': 1, 'ROOT_REFERENCE_CLEANUP': 1, "
                            "'ROOT_VM_INTERNAL': 1, 'ROOT_JNI_MONITOR': 1, 'HEAP_DUMP_INFO': 1, 'CLASS_DUMP': 2, "
                            "'INSTANCE_DUMP': 2, 'OBJECT_ARRAY_DUMP': 1, 'PRIMITIVE_ARRAY_DUMP': 8}") == 0);
    hp_buf_free(&r.out);
    d_free(&d);

    d_everything(&d, (size_t)3 << 20);
    check_round_trip("big payloads", &d, NULL);
    d_free(&d);
}

/* ---- app_only ---- */

/* What the decoded dump holds, by walking it with the core parser. */
typedef struct census {
    uint64_t objects_zi, objects_app, classes, roots, segments, empty_segments, idle_switches;
} census;

static hp_code take_census(const uint8_t *data, size_t len, census *c)
{
    hp_parser *p = hp_parser_new(NULL, HP_PARSE_SUBRECORDS);
    hp_event ev;
    hp_error err;
    hp_code rc;
    int pending_switch = 0;
    memset(c, 0, sizeof *c);
    hp_parser_feed(p, data, len, 1);
    while ((rc = hp_parser_next(p, &ev, &err)) == HP_OK && ev.kind != HP_EV_END) {
        if (ev.kind == HP_EV_RECORD && hp_is_heap_tag(ev.rec->tag)) {
            c->segments++;
            c->empty_segments += ev.rec->length == 0;
        } else if (ev.kind == HP_EV_RECORD_END && hp_is_heap_tag(ev.rec->tag)) {
            c->idle_switches += pending_switch;
            pending_switch = 0;
        } else if (ev.kind == HP_EV_SUBRECORD) {
            int tag = ev.sub->tag;
            c->idle_switches += pending_switch && tag == HP_SUB_HEAP_DUMP_INFO;
            pending_switch = tag == HP_SUB_HEAP_DUMP_INFO;
            if (tag == HP_SUB_INSTANCE_DUMP || tag == HP_SUB_OBJ_ARRAY_DUMP || tag == HP_SUB_PRIM_ARRAY_DUMP) {
                if (ev.heap_id == 'Z' || ev.heap_id == 'I')
                    c->objects_zi++;
                else
                    c->objects_app++;
            } else if (tag == HP_SUB_CLASS_DUMP) {
                c->classes++;
            } else if (tag != HP_SUB_HEAP_DUMP_INFO) {
                c->roots++;
            }
        }
    }
    hp_parser_free(p);
    return rc;
}

static void test_app_only_golden(void)
{
    hp_tailor_options app = { 1, 0, 0 };
    size_t i;
    for (i = 1; i < N_GOLDENS; i++) {
        golden *g = &goldens[i];
        run enc, dec, chunked;
        census full, kept;
        run_filter(0, g->src, g->src_len, &app, 0, 0, &enc);
        show_error(g->name, enc.rc, &enc.err);
        CHECK(enc.rc == HP_OK);
        CHECK(enc.out.len < g->mini_bytes.len);
        run_filter(0, g->src, g->src_len, &app, 4096, 1, &chunked);
        CHECK(same_bytes("app_only chunked", chunked.out.data, chunked.out.len, enc.out.data, enc.out.len));
        CHECK(strcmp(chunked.counter, enc.counter) == 0);
        hp_buf_free(&chunked.out);
        run_filter(1, enc.out.data, enc.out.len, NULL, 0, 0, &dec);
        show_error(g->name, dec.rc, &dec.err);
        CHECK(dec.rc == HP_OK);
        CHECK(take_census(g->restored_bytes, g->restored_len, &full) == HP_OK);
        CHECK(take_census(dec.out.data, dec.out.len, &kept) == HP_OK);
        CHECK(full.objects_zi > 0);
        CHECK_EQ_U64(kept.objects_zi, 0);
        CHECK_EQ_U64(enc.dropped, full.objects_zi);
        CHECK_EQ_U64(kept.objects_app, full.objects_app);
        CHECK_EQ_U64(kept.classes, full.classes);
        CHECK_EQ_U64(kept.roots, full.roots);
        CHECK_EQ_U64(kept.empty_segments, 0);
        CHECK_EQ_U64(kept.idle_switches, 0);
        CHECK(kept.segments < full.segments);
        /* The encoder's counter counts what it wrote, so it matches the decoder's. */
        CHECK(strstr(enc.counter, "'STACK_TRACE': 1, ") != NULL);
        {
            char without[2048];
            const char *st = strstr(enc.counter, "'STACK_TRACE': 1, ");
            size_t k = (size_t)(st - enc.counter);
            memcpy(without, enc.counter, k);
            strcpy(without + k, st + strlen("'STACK_TRACE': 1, "));
            CHECK(strcmp(without, dec.counter) == 0);
        }
        hp_buf_free(&enc.out);
        hp_buf_free(&dec.out);
    }
}

/* app_only on crafted segments, against a dump that never had the dropped parts. */
static void test_app_only_crafted(void)
{
    hp_tailor_options app = { 1, 0, 0 };
    dump full, want;
    run a, b, ra, rb;
    int k;
    for (k = 0; k < 2; k++) {
        dump *d = k ? &want : &full;
        d_init(d);
        d_string(d, 0x400000, 3);
        if (!k) {
            d_seg(d, HP_TAG_HEAP_DUMP_SEGMENT); /* all zygote: vanishes */
            s_info(d, 'Z', 0x400000);
            s_instance(d, 0x20, 0x10, 4);
            s_prim_array(d, 0x21, HP_T_BYTE, 4);
            d_seg_end(d);
        }
        d_seg(d, HP_TAG_HEAP_DUMP_SEGMENT); /* roots kept; idle 'I' switch dropped */
        s_root(d, 0x05, 0x30);
        if (!k) {
            s_info(d, 'I', 0x400000);
            s_obj_array(d, 0x31, 2);
        }
        s_info(d, 'A', 0x400000);
        s_instance(d, 0x32, 0x10, 4);
        d_seg_end(d);
        d_seg(d, HP_TAG_HEAP_DUMP_SEGMENT); /* the class stays under its 'Z' switch */
        s_info(d, 'Z', 0x400000);
        s_class(d, 0x10, 4);
        if (!k)
            s_instance(d, 0x33, 0x10, 4);
        d_seg_end(d);
        d_seg(d, HP_TAG_HEAP_DUMP_SEGMENT); /* the heap resets to default: kept */
        s_instance(d, 0x34, 0x10, 4);
        if (!k)
            s_info(d, 'Z', 0x400000); /* trailing switch with nothing after it */
        d_seg_end(d);
        if (!k) {
            d_seg(d, HP_TAG_HEAP_DUMP_SEGMENT); /* empty in the source: not written either */
            d_seg_end(d);
        }
        d_heap_end(d);
        if (k == 0) { /* a zygote-only segment after the end may precede a STRING */
            d_seg(d, HP_TAG_HEAP_DUMP_SEGMENT);
            s_info(d, 'Z', 0x400000);
            s_instance(d, 0x35, 0x10, 4);
            d_seg_end(d);
        }
        d_string(d, 0x400001, 3);
        d_heap_end(d);
    }
    run_filter(0, full.src.data, full.src.len, &app, 0, 0, &a);
    run_filter(0, want.src.data, want.src.len, NULL, 0, 0, &b);
    show_error("app_only crafted", a.rc, &a.err);
    show_error("app_only want", b.rc, &b.err);
    CHECK(a.rc == HP_OK && b.rc == HP_OK);
    CHECK(same_bytes("app_only mini", a.out.data, a.out.len, b.out.data, b.out.len));
    CHECK(strcmp(a.counter, b.counter) == 0);
    if (getenv("TAILOR_VERBOSE")) {
        size_t i;
        for (i = 0; i < a.out.len; i++) printf("%02x%s", a.out.data[i], i % 32 == 31 ? "\n" : " ");
        printf("\n");
        for (i = 0; i < b.out.len; i++) printf("%02x%s", b.out.data[i], i % 32 == 31 ? "\n" : " ");
        printf("\n%s\n%s\n", a.counter, b.counter);
    }
    CHECK_EQ_U64(a.dropped, 5);
    run_filter(1, a.out.data, a.out.len, NULL, 0, 0, &ra);
    run_filter(1, b.out.data, b.out.len, NULL, 0, 0, &rb);
    CHECK(ra.rc == HP_OK && rb.rc == HP_OK);
    CHECK(same_bytes("app_only restored", ra.out.data, ra.out.len, want.exp.data, want.exp.len));
    /* Without app_only the trailing zygote segment makes the STRING unrepresentable. */
    hp_buf_free(&rb.out);
    run_filter(0, full.src.data, full.src.len, NULL, 0, 0, &rb);
    CHECK(rb.rc == HP_E_LIMIT);
    CHECK(rb.err.tag == HP_TAG_UTF8 && !rb.err.is_sub);
    hp_buf_free(&a.out);
    hp_buf_free(&b.out);
    hp_buf_free(&ra.out);
    hp_buf_free(&rb.out);
    d_free(&full);
    d_free(&want);
}

/* ---- refusals ---- */

/* Runs the encoder (decode 0) or decoder (1) over src in chunks of each of
 * the steps (0: in one piece), and checks every run fails with `code` at
 * `offset` in record or sub-record `tag`. */
static void expect_failure(const char *what, int decode, const uint8_t *src, size_t len, const size_t steps[3],
                           hp_code code, uint64_t offset, int tag, int is_sub)
{
    size_t s;
    for (s = 0; s < 3; s++) {
        run r;
        char msg[256];
        run_filter(decode, src, len, NULL, steps[s], 0, &r);
        if (r.rc != code || r.err.offset != offset || r.err.tag != tag || r.err.is_sub != is_sub) {
            hp_error_format(&r.err, msg, sizeof msg);
            fprintf(stderr, "  %s: got code %d: %s\n", what, (int)r.rc, msg);
        }
        CHECK(r.rc == code);
        CHECK_EQ_U64(r.err.offset, offset);
        CHECK(r.err.tag == tag);
        CHECK(r.err.is_sub == is_sub);
        if (steps[s] == 0 && getenv("TAILOR_VERBOSE")) {
            hp_error_format(&r.err, msg, sizeof msg);
            printf("  %s -> %s\n", what, msg);
        }
        hp_buf_free(&r.out);
    }
}

static void expect_refusal(const char *what, const dump *d, hp_code code, uint64_t offset, int tag, int is_sub)
{
    static const size_t steps[3] = { 0, 1, 4096 };
    expect_failure(what, 0, d->src.data, d->src.len, steps, code, offset, tag, is_sub);
}

static void test_refusals(void)
{
    static const unsigned bad_tags[] = { HP_TAG_UNLOAD_CLASS, HP_TAG_FRAME, HP_TAG_ALLOC_SITES,
                                         HP_TAG_HEAP_SUMMARY, HP_TAG_START_THREAD, HP_TAG_END_THREAD,
                                         HP_TAG_CPU_SAMPLES, HP_TAG_CONTROL_SETTINGS, 0x99 };
    dump d;
    size_t at, i;

    d_init_as(&d, "JAVA PROFILE 1.0.3", 8);
    d_heap_end(&d);
    expect_refusal("id size 8", &d, HP_E_LIMIT, 19, -1, 0);
    d_free(&d);

    d_init_as(&d, "JAVA PROFILE 1.0.2", 4);
    d_heap_end(&d);
    expect_refusal("version 1.0.2", &d, HP_E_LIMIT, 0, -1, 0);
    d_free(&d);

    d_init(&d);
    at = d.src.len;
    d_string(&d, 0x400000, 65532); /* body 65536 */
    d_heap_end(&d);
    expect_refusal("long STRING", &d, HP_E_LIMIT, at, HP_TAG_UTF8, 0);
    d_free(&d);

    d_init(&d);
    d_seg(&d, HP_TAG_HEAP_DUMP_SEGMENT);
    s_class(&d, 0x10, 0x1000);
    at = d.src.len;
    s_class(&d, 0x11, 0x10000);
    d_seg_end(&d);
    d_heap_end(&d);
    expect_refusal("instance size", &d, HP_E_LIMIT, at, HP_SUB_CLASS_DUMP, 1);
    d_free(&d);

    for (i = 0; i < sizeof bad_tags / sizeof bad_tags[0]; i++) {
        d_init(&d);
        d_string(&d, 0x400000, 3);
        at = d.src.len;
        d_head(&d, bad_tags[i], 8);
        put_zeros(&d.src, 8);
        d_heap_end(&d);
        expect_refusal("record tag", &d, HP_E_LIMIT, at, (int)bad_tags[i], 0);
        d_free(&d);
    }

    for (i = 0; i < 2; i++) {
        unsigned tag = i ? HP_SUB_PRIM_ARRAY_NODATA : HP_SUB_UNREACHABLE;
        d_init(&d);
        d_seg(&d, HP_TAG_HEAP_DUMP_SEGMENT);
        s_root(&d, 0x05, 1);
        at = d.src.len;
        put_u1(&d.src, tag);
        put_u4(&d.src, 2);
        if (i) { /* serial, count, type */
            put_u4(&d.src, 0);
            put_u4(&d.src, 4);
            put_u1(&d.src, HP_T_INT);
        }
        d_seg_end(&d);
        d_heap_end(&d);
        expect_refusal("sub-tag", &d, HP_E_LIMIT, at, (int)tag, 1);
        d_free(&d);
    }

    /* STRING / LOAD_CLASS right after a segment (a dropped STACK_TRACE between changes nothing) */
    for (i = 0; i < 4; i++) {
        d_init(&d);
        d_seg(&d, HP_TAG_HEAP_DUMP_SEGMENT);
        if (i != 3)
            s_root(&d, 0x05, 1); /* i == 3: an empty segment, which encode.py still writes */
        d_seg_end(&d);
        if (i == 2)
            d_trace(&d, 2);
        at = d.src.len;
        if (i == 1)
            d_load_class(&d, 0x10, 0x400000);
        else
            d_string(&d, 0x400000, 3);
        d_heap_end(&d);
        expect_refusal("after segment", &d, HP_E_LIMIT, at, i == 1 ? HP_TAG_LOAD_CLASS : HP_TAG_UTF8, 0);
        d_free(&d);
    }

    /* ... but after HEAP_DUMP_END it is fine */
    d_init(&d);
    d_seg(&d, HP_TAG_HEAP_DUMP_SEGMENT);
    s_root(&d, 0x05, 1);
    d_seg_end(&d);
    d_heap_end(&d);
    d_string(&d, 0x400000, 3);
    d_load_class(&d, 0x10, 0x400000);
    d_heap_end(&d);
    check_round_trip("string after end", &d, NULL);
    d_free(&d);

    /* A dump that does not end with HEAP_DUMP_END cannot be marked as complete. */
    d_init(&d);
    d_string(&d, 0x400000, 3);
    d_seg(&d, HP_TAG_HEAP_DUMP_SEGMENT);
    s_root(&d, 0x05, 1);
    d_seg_end(&d);
    expect_refusal("no HEAP_DUMP_END", &d, HP_E_TRUNCATED, d.src.len, HP_TAG_HEAP_DUMP_END, 0);
    d_heap_end(&d);
    d_seg(&d, HP_TAG_HEAP_DUMP_SEGMENT);
    s_root(&d, 0x05, 1);
    d_seg_end(&d);
    expect_refusal("segment after the end", &d, HP_E_TRUNCATED, d.src.len, HP_TAG_HEAP_DUMP_END, 0);
    d_free(&d);

    d_init(&d);
    at = d.src.len;
    d_head(&d, HP_TAG_LOAD_CLASS, 12);
    put_zeros(&d.src, 12);
    d_heap_end(&d);
    expect_refusal("short LOAD_CLASS", &d, HP_E_CORRUPT, at, HP_TAG_LOAD_CLASS, 0);
    d_free(&d);

    d_init(&d);
    at = d.src.len;
    d_head(&d, HP_TAG_HEAP_DUMP_END, 2);
    put_zeros(&d.src, 2);
    expect_refusal("HEAP_DUMP_END body", &d, HP_E_CORRUPT, at, HP_TAG_HEAP_DUMP_END, 0);
    d_free(&d);

    d_init(&d);
    hp_buf_free(&d.src);
    hp_buf_append(&d.src, "\x78\x9c\x03\x00", 4);
    expect_refusal("not HPROF", &d, HP_E_FORMAT, 0, -1, 0);
    d_free(&d);
}

/* Feeding after finish, or after an error, is refused and repeats the error. */
static void test_api_misuse(void)
{
    hp_tailor_encoder *e = hp_tailor_encoder_new(NULL, NULL);
    hp_tailor_decoder *d = hp_tailor_decoder_new(NULL, NULL);
    golden *g = &goldens[0];
    hp_buf out;
    hp_sink sink;
    hp_error err;
    hp_buf_init(&out, NULL);
    sink = hp_buf_sink(&out);
    CHECK(hp_tailor_encoder_feed(e, g->src, g->src_len, &sink, &err) == HP_OK);
    CHECK(hp_tailor_encoder_feed(e, g->src, 0, &sink, &err) == HP_OK);
    CHECK(hp_tailor_encoder_finish(e, &sink, &err) == HP_OK);
    CHECK(hp_tailor_encoder_feed(e, g->src, 1, &sink, &err) == HP_E_USAGE);
    CHECK(hp_tailor_decoder_feed(d, (const uint8_t *)"JAVA PROFILE 1.0.3", 18, &sink, &err) == HP_E_FORMAT);
    CHECK(err.detail && strstr(err.detail, "standard HPROF"));
    CHECK(hp_tailor_decoder_feed(d, g->mini_bytes.data, g->mini_bytes.len, &sink, &err) == HP_E_FORMAT);
    CHECK(hp_tailor_decoder_finish(d, &sink, &err) == HP_E_FORMAT);
    hp_tailor_encoder_free(e);
    hp_tailor_decoder_free(d);
    hp_buf_free(&out);
}

/* ---- decoder errors ---- */

static void expect_decode_error(const char *what, const uint8_t *mini, size_t len, hp_code code, uint64_t offset,
                                int tag, int is_sub)
{
    static const size_t steps[3] = { 0, 1, 5 };
    expect_failure(what, 1, mini, len, steps, code, offset, tag, is_sub);
}

static void mini_init(hp_buf *m)
{
    hp_buf_init(m, NULL);
    hp_buf_append(m, HP_TAILOR_MAGIC, HP_TAILOR_MAGIC_LEN);
}

static void test_decode_errors(void)
{
    hp_buf m;
    golden *g = &goldens[0];
    size_t at;

    expect_decode_error("zlib", (const uint8_t *)"\x78\x9c\x03\x00", 4, HP_E_FORMAT, 0, -1, 0);
    expect_decode_error("empty", (const uint8_t *)"", 0, HP_E_TRUNCATED, 0, -1, 0);

    mini_init(&m);
    put_u1(&m, HP_TAG_HEAP_DUMP_SEGMENT);
    put_u1(&m, 0x05);
    put_u4(&m, 1);
    at = m.len;
    put_u1(&m, 0); /* decode.py: "Not supported tag: 0" */
    expect_decode_error("tag 0", m.data, m.len, HP_E_CORRUPT, at, 0, 0);
    m.data[at] = HP_TAG_START_THREAD; /* (most HPROF record tags are sub-tags too) */
    expect_decode_error("START_THREAD", m.data, m.len, HP_E_CORRUPT, at, HP_TAG_START_THREAD, 0);
    m.data[at] = HP_SUB_UNREACHABLE;
    put_u4(&m, 1);
    expect_decode_error("0x90", m.data, m.len, HP_E_CORRUPT, at, HP_SUB_UNREACHABLE, 1);
    hp_buf_free(&m);

    /* A primitive array with a bad element type. */
    mini_init(&m);
    put_u1(&m, HP_TAG_HEAP_DUMP_SEGMENT);
    at = m.len;
    put_u1(&m, HP_SUB_PRIM_ARRAY_DUMP);
    put_u4(&m, 1);
    put_u4(&m, 1);
    put_u1(&m, 3);
    put_u1(&m, HP_TAG_HEAP_DUMP_END);
    expect_decode_error("bad array type", m.data, m.len, HP_E_CORRUPT, at, HP_SUB_PRIM_ARRAY_DUMP, 1);
    /* An int[] claiming 4 GiB: no HPROF record can hold it, refused before anything is buffered. */
    m.data[at + 9] = HP_T_INT;
    hp_put32(m.data + at + 5, 0x3FFFFFFF);
    expect_decode_error("huge sub-record", m.data, m.len, HP_E_LIMIT, at, HP_SUB_PRIM_ARRAY_DUMP, 1);
    hp_buf_free(&m);

    /* A class dump with a bad field type, found while gathering it. */
    mini_init(&m);
    put_u1(&m, HP_TAG_HEAP_DUMP_SEGMENT);
    at = m.len;
    put_u1(&m, HP_SUB_CLASS_DUMP);
    put_zeros(&m, 22);
    put_u2(&m, 0);
    put_u2(&m, 1);
    put_u4(&m, 1);
    put_u1(&m, 12);
    put_u1(&m, HP_TAG_HEAP_DUMP_END);
    expect_decode_error("bad class type", m.data, m.len, HP_E_CORRUPT, at, HP_SUB_CLASS_DUMP, 1);
    hp_buf_free(&m);

    /* A mini with no HEAP_DUMP_END, and one whose last segment is never closed. */
    mini_init(&m);
    put_u1(&m, HP_TAG_LOAD_CLASS);
    put_zeros(&m, 8);
    expect_decode_error("no end", m.data, m.len, HP_E_TRUNCATED, m.len, HP_TAG_HEAP_DUMP_END, 0);
    put_u1(&m, HP_TAG_HEAP_DUMP_SEGMENT);
    put_u1(&m, 0x05);
    put_u4(&m, 1);
    expect_decode_error("open segment", m.data, m.len, HP_E_TRUNCATED, m.len, HP_TAG_HEAP_DUMP_END, 0);
    hp_buf_free(&m);

    /* Truncation sweep: every cut of art_like's mini is a clean TRUNCATED
     * error naming a unit at or before the cut. */
    {
        size_t cut;
        int bad = 0;
        for (cut = 0; cut < g->mini_bytes.len; cut++) {
            run r;
            run_filter(1, g->mini_bytes.data, cut, NULL, cut % 3 ? 0 : 7, 0, &r);
            if (r.rc != HP_E_TRUNCATED || r.err.offset > cut || r.err.have > r.err.need)
                bad++;
            if (cut == 0x1d0 && getenv("TAILOR_VERBOSE"))
                show_error("cut", r.rc, &r.err);
            hp_buf_free(&r.out);
        }
        CHECK_EQ_U64(bad, 0);
    }
    /* ... and a sample of cuts of the big ones. */
    {
        size_t i, k;
        int bad = 0;
        for (i = 1; i < N_GOLDENS; i++) {
            golden *b = &goldens[i];
            for (k = 0; k < 24; k++) {
                size_t cut = k < 12 ? 18 + rng() % 4096 : rng() % b->mini_bytes.len;
                run r;
                run_filter(1, b->mini_bytes.data, cut, NULL, k % 2 ? 0 : 65536, 1, &r);
                if (r.rc != HP_E_TRUNCATED || r.err.offset > cut)
                    bad++;
                hp_buf_free(&r.out);
            }
        }
        CHECK_EQ_U64(bad, 0);
    }
}

/* Every cut of art_like's source, and random corruption of its mini: errors
 * or output, never a crash, a hang or a sanitizer report. */
static void test_source_cuts_and_corruption(void)
{
    golden *g = &goldens[0];
    size_t cut, k;
    int bad = 0;
    for (cut = 0; cut < g->src_len; cut++) {
        run r;
        run_filter(0, g->src, cut, NULL, cut % 2 ? 0 : 3, 0, &r);
        if (r.rc != HP_E_TRUNCATED || r.err.offset > cut)
            bad++;
        hp_buf_free(&r.out);
    }
    CHECK_EQ_U64(bad, 0);
    for (k = 0; k < 3000; k++) {
        hp_buf m;
        run r;
        int flips = 1 + (int)(rng() % 3), f;
        hp_buf_init(&m, NULL);
        hp_buf_append(&m, g->mini_bytes.data, g->mini_bytes.len);
        for (f = 0; f < flips; f++)
            m.data[rng() % m.len] = (uint8_t)rng();
        out_cap = (size_t)4 << 20;
        run_filter(1, m.data, m.len, NULL, k % 2 ? 0 : 1 + rng() % 64, 1, &r);
        out_cap = 0;
        CHECK(r.rc == HP_OK || r.rc == HP_E_TRUNCATED || r.rc == HP_E_CORRUPT || r.rc == HP_E_FORMAT ||
              r.rc == HP_E_LIMIT || r.rc == HP_E_NOMEM || r.rc == HP_E_TOO_LARGE);
        hp_buf_free(&r.out);
        hp_buf_free(&m);
    }
}

/* ---- memory: the decoder holds one segment, the encoder the parser's carry ---- */

static size_t live_bytes, peak_bytes;
static void *count_malloc(size_t n)
{
    size_t *p = malloc(n + sizeof(size_t) * 2);
    if (!p)
        return NULL;
    p[0] = n;
    live_bytes += n;
    if (live_bytes > peak_bytes)
        peak_bytes = live_bytes;
    return p + 2;
}
static void count_free(void *q)
{
    size_t *p = q;
    if (!p)
        return;
    live_bytes -= p[-2];
    free(p - 2);
}
static void *count_realloc(void *q, size_t n)
{
    void *r = count_malloc(n);
    if (r && q) {
        size_t old = ((size_t *)q)[-2];
        memcpy(r, q, old < n ? old : n);
        count_free(q);
    }
    return r;
}

static void test_memory_bound(void)
{
    static const hp_alloc counting = { count_malloc, count_realloc, count_free };
    golden *g = &goldens[2];
    hp_tailor_decoder *d;
    hp_tailor_encoder *e;
    hp_buf out;
    hp_sink sink;
    hp_error err;
    size_t pos;
    hp_buf_init(&out, NULL);
    sink = hp_buf_sink(&out);
    peak_bytes = live_bytes = 0;
    d = hp_tailor_decoder_new(&counting, NULL);
    for (pos = 0; pos < g->mini_bytes.len; pos += 65536) {
        size_t n = g->mini_bytes.len - pos < 65536 ? g->mini_bytes.len - pos : 65536;
        CHECK(hp_tailor_decoder_feed(d, g->mini_bytes.data + pos, n, &sink, &err) == HP_OK);
    }
    CHECK(hp_tailor_decoder_finish(d, &sink, &err) == HP_OK);
    CHECK(peak_bytes < (size_t)512 << 10); /* ART segments are ~4 KiB */
    hp_tailor_decoder_free(d);
    CHECK_EQ_U64(live_bytes, 0);
    out.len = 0;
    peak_bytes = live_bytes = 0;
    e = hp_tailor_encoder_new(&counting, NULL);
    for (pos = 0; pos < g->src_len; pos += 65536) {
        size_t n = g->src_len - pos < 65536 ? g->src_len - pos : 65536;
        CHECK(hp_tailor_encoder_feed(e, g->src + pos, n, &sink, &err) == HP_OK);
    }
    CHECK(hp_tailor_encoder_finish(e, &sink, &err) == HP_OK);
    CHECK(peak_bytes < (size_t)512 << 10);
    hp_tailor_encoder_free(e);
    CHECK_EQ_U64(live_bytes, 0);
    hp_buf_free(&out);
}

/* A mini of one segment of `roots` empty roots (the hostile input of issue
 * 9, small): restored with a small max_record to a sink that can patch it is
 * the very bytes of a held decode, to one that cannot it is records of at
 * most the limit holding the same roots; memory stays bounded either way. */
static void test_long_segments_stream(void)
{
    static const hp_alloc counting = { count_malloc, count_realloc, count_free };
    const uint32_t roots = 200000;
    hp_tailor_options limited = { 0, 64 << 10, 0 };
    hp_buf m, held;
    hp_error err;
    uint32_t i;
    int patch;
    mini_init(&m);
    put_u1(&m, HP_TAG_HEAP_DUMP_SEGMENT);
    for (i = 0; i < roots; i++) {
        put_u1(&m, HP_SUB_ROOT_UNKNOWN);
        put_u4(&m, i);
    }
    put_u1(&m, HP_TAG_HEAP_DUMP_END);
    {
        run r;
        run_filter(1, m.data, m.len, NULL, 4096, 1, &r);
        CHECK(r.rc == HP_OK);
        held = r.out;
        CHECK_EQ_U64(hp_be32(held.data + 31 + 5), 5 * (uint64_t)roots); /* one segment */
    }
    for (patch = 0; patch <= 1; patch++) {
        mem_sink out = { 0 };
        hp_sink sink = { mem_write, &out, patch ? mem_patch : NULL };
        hp_tailor_decoder *d;
        size_t pos, records = 0;
        const uint8_t *p, *end;
        peak_bytes = live_bytes = 0;
        d = hp_tailor_decoder_new(&counting, &limited);
        for (pos = 0; pos < m.len; pos += 10000)
            CHECK(hp_tailor_decoder_feed(d, m.data + pos, m.len - pos < 10000 ? m.len - pos : 10000, &sink, &err) ==
                  HP_OK);
        CHECK(hp_tailor_decoder_finish(d, &sink, &err) == HP_OK);
        hp_tailor_decoder_free(d);
        CHECK(peak_bytes < (size_t)512 << 10); /* not the 1 MB segment */
        if (patch) {
            CHECK(out.patches == 1);
            CHECK(same_bytes("patched segment", out.d, out.len, held.data, held.len));
        } else { /* cut between roots: the same roots, in records of at most 64 KiB */
            CHECK(out.len > held.len);
            for (p = out.d + 31, end = out.d + out.len; p < end && p[0] == HP_TAG_HEAP_DUMP_SEGMENT; records++) {
                uint32_t len = hp_be32(p + 5);
                CHECK(len <= 64 << 10 && len % 5 == 0);
                CHECK(p[9] == HP_SUB_ROOT_UNKNOWN);
                p += 9 + len;
            }
            CHECK(records > 10 && p + 9 == end && *p == HP_TAG_HEAP_DUMP_END);
        }
        free(out.d);
    }
    /* Records after the last HEAP_DUMP_END make a mini that did not end:
     * trailing bytes are not restored as if the mini were complete. */
    put_u1(&m, HP_TAG_UTF8);
    put_u2(&m, 4);
    put_u4(&m, 7);
    expect_decode_error("record after the end", m.data, m.len, HP_E_TRUNCATED, m.len, HP_TAG_HEAP_DUMP_END, 0);
    hp_buf_free(&held);
    hp_buf_free(&m);
}

/* Runs a test; TAILOR_VERBOSE=1 shows its CPU time. */
#define TIMED(fn)                                                                        \
    do {                                                                                 \
        clock_t t0 = clock();                                                            \
        fn();                                                                            \
        if (getenv("TAILOR_VERBOSE"))                                                    \
            printf("  %s: %.2f s\n", #fn, (double)(clock() - t0) / CLOCKS_PER_SEC);     \
    } while (0)

int main(void)
{
    size_t i;
    if (load_goldens() < 0) {
        check_total++;
        check_failures++;
        return check_report("test_tailor");
    }
    TIMED(test_goldens);
    TIMED(test_chunking);
    TIMED(test_crafted_round_trip);
    TIMED(test_app_only_golden);
    TIMED(test_app_only_crafted);
    TIMED(test_refusals);
    TIMED(test_api_misuse);
    TIMED(test_decode_errors);
    TIMED(test_source_cuts_and_corruption);
    TIMED(test_memory_bound);
    TIMED(test_long_segments_stream);
    for (i = 0; i < N_GOLDENS; i++) {
        free(goldens[i].src);
        free(goldens[i].restored_bytes);
        hp_buf_free(&goldens[i].mini_bytes);
    }
    return check_report("test_tailor");
}
