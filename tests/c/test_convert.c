/* Tests of the converter (hp_convert): parity with Debian's hprof-conv on
 * the Android dumps, a simple whole-buffer reference model for every option
 * combination, chunking invariance, 8-byte identifiers, 0xC3, app_only,
 * truncation and other errors.
 *
 * Environment: HPROFKIT_DATA (the shared data folder), HPROF_CONV (the
 * hprof-conv binary; parity tests are skipped when it is missing, and fail
 * when CI=true),
 * HPROFKIT_EXTRA_DUMP (one more Android dump to check, e.g. a big
 * androidized HeapGen dump) and HPROFKIT_SLOW=1 (the > 2 GiB heap record). */
#define _XOPEN_SOURCE 700
#include "testkit.h"

#include <sys/stat.h>
#include <unistd.h>

#include "hp_convert.h"
#include "hp_parser.h"

static const char *const android_dumps[] = {
    "hprof/leakcanary__leak_service_binder.hprof",
    "hprof/platform_tools_base__dialer.android-hprof",
    "hprof/py-hprof__basic_reads.hprof",
    "tailor/art_like.hprof",
};
#define N_DUMPS (sizeof android_dumps / sizeof android_dumps[0])

static const hp_convert_options all_opts[4] = { { 1, 0, 0, 0 }, { 1, 1, 0, 0 }, { 0, 1, 0, 0 }, { 0, 0, 0, 0 } };

/* ---- running the converter ---- */

static unsigned rng_state;
static unsigned rng(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 8;
}

/* Converts `in` fed in chunks: `chunk` 0 = one call, else chunks of that
 * size; `seed` != 0 = random sizes (mostly small, some up to 64 KiB). */
static hp_code convert(const uint8_t *in, size_t len, const hp_convert_options *o, size_t chunk,
                       unsigned seed, hp_buf *out, hp_error *err)
{
    hp_converter *c = hp_converter_new(NULL, o);
    hp_sink sink = hp_buf_sink(out);
    size_t pos = 0;
    hp_code rc = HP_OK;
    rng_state = seed;
    while (pos < len && rc == HP_OK) {
        size_t n = len - pos;
        if (seed) {
            unsigned r = rng();
            size_t want = (r & 3) == 0 ? (r >> 4) % 65536 : (r >> 4) % 17;
            if (want < n)
                n = want;
        } else if (chunk && chunk < n) {
            n = chunk;
        }
        rc = hp_converter_feed(c, in + pos, n, &sink, err);
        pos += n;
    }
    if (rc == HP_OK)
        rc = hp_converter_finish(c, &sink, err);
    hp_converter_free(c);
    return rc;
}

static int buf_equals(const hp_buf *a, const uint8_t *b, size_t blen)
{
    return a->len == blen && (blen == 0 || memcmp(a->data, b, blen) == 0);
}

/* Prints where two outputs first differ. */
static void report_diff(const char *what, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    size_t i = 0;
    while (i < alen && i < blen && a[i] == b[i])
        i++;
    fprintf(stderr, "  %s: lengths %zu vs %zu, first difference at byte %zu\n", what, alen, blen, i);
}

/* ---- a reference model: the rules applied sub-record by sub-record over a
 * whole buffer, without chunks, pieces or settling ---- */

static int model_non_app(uint32_t heap) { return heap == 'Z' || heap == 'I'; }

static hp_code model_convert(const uint8_t *in, size_t len, const hp_convert_options *o, hp_buf *out)
{
    hp_parser *p = hp_parser_new(NULL, HP_PARSE_SUBRECORDS);
    hp_event ev;
    hp_error err;
    hp_code rc;
    hp_buf seg;
    uint8_t info[16];
    size_t info_len = 0, seg_start = 0;
    int ids = 4;

    hp_buf_init(&seg, NULL);
    hp_parser_feed(p, in, len, 1);
    while ((rc = hp_parser_next(p, &ev, &err)) == HP_OK && ev.kind != HP_EV_END) {
        const hp_subrecord *s = ev.sub;
        if (ev.kind == HP_EV_HEADER) {
            uint8_t h[HP_HEADER_MAX];
            const hp_header *hd = hp_parser_header(p);
            ids = hd->id_size;
            hp_buf_append(out, h, hp_header_write(h, o->to_standard ? 2 : 3, ids, hd->timestamp));
        } else if (ev.kind == HP_EV_RECORD && hp_is_heap_tag(ev.rec->tag)) {
            seg.len = 0;
            seg_start = out->len;
            info_len = 0;
        } else if (ev.kind == HP_EV_RECORD) {
            hp_buf_append(out, ev.data, ev.len);
        } else if (ev.kind == HP_EV_DATA) {
            hp_buf_append(out, ev.data, ev.len);
        } else if (ev.kind == HP_EV_RECORD_END && hp_is_heap_tag(ev.rec->tag)) {
            if (seg.len) {
                uint8_t head[9];
                memcpy(head, in + ev.rec->offset, 9);
                hp_put32(head + 5, (uint32_t)seg.len);
                hp_buf_append(out, head, 9);
                hp_buf_append(out, seg.data, seg.len);
            }
            (void)seg_start;
        } else if (ev.kind == HP_EV_SUBRECORD) {
            uint8_t b[64];
            int tag = s->tag;
            int is_object = tag == 0x21 || tag == 0x22 || tag == 0x23 || tag == 0xC3;
            int android_root = tag == 0x89 || tag == 0x8A || tag == 0x8B || tag == 0x8C || tag == 0x8D ||
                               tag == 0x8E || tag == 0x90;
            if (ev.len != s->length)
                abort(); /* a whole buffer gives whole sub-records */
            if (is_object && o->app_only && model_non_app(ev.heap_id))
                continue;
            if (tag == 0xFE) {
                if (!o->to_standard && o->app_only) {
                    memcpy(info, ev.data, ev.len);
                    info_len = ev.len;
                } else if (!o->to_standard) {
                    hp_buf_append(&seg, ev.data, ev.len);
                }
                continue;
            }
            if (info_len) {
                hp_buf_append(&seg, info, info_len);
                info_len = 0;
            }
            if (o->to_standard && android_root) {
                b[0] = 0xFF;
                memcpy(b + 1, ev.data + 1, (size_t)ids);
                hp_buf_append(&seg, b, 1 + (size_t)ids);
            } else if (o->to_standard && tag == 0xC3) {
                memcpy(b, ev.data, ev.len);
                b[0] = 0x23;
                memset(b + 1 + ids + 4, 0, 4);
                hp_buf_append(&seg, b, ev.len);
            } else {
                hp_buf_append(&seg, ev.data, ev.len);
            }
        }
    }
    hp_buf_free(&seg);
    hp_parser_free(p);
    return rc;
}

/* Drops heap records of length 0 from a converted file (how we differ from
 * hprof-conv -z). */
static void strip_empty_heap_records(hp_buf *b)
{
    size_t r = 0, w = 0;
    while (r < b->len && b->data[r])
        r++;
    r += 13;
    w = r;
    while (r + 9 <= b->len) {
        size_t n = 9 + hp_be32(b->data + r + 5);
        if (!(hp_is_heap_tag(b->data[r]) && n == 9)) {
            memmove(b->data + w, b->data + r, n);
            w += n;
        }
        r += n;
    }
    b->len = w;
}

/* Walks a converted file: no heap record may be empty; returns the number
 * of heap sub-records of each tag in tally[256], -1 if it does not parse. */
static int walk_output(const uint8_t *buf, size_t len, uint64_t tally[256], int *empty_heap_records)
{
    hp_parser *p = hp_parser_new(NULL, HP_PARSE_SUBRECORDS);
    hp_event ev;
    hp_error err;
    hp_code rc;
    memset(tally, 0, 256 * sizeof tally[0]);
    *empty_heap_records = 0;
    hp_parser_feed(p, buf, len, 1);
    while ((rc = hp_parser_next(p, &ev, &err)) == HP_OK && ev.kind != HP_EV_END) {
        if (ev.kind == HP_EV_RECORD && hp_is_heap_tag(ev.rec->tag) && ev.rec->length == 0)
            ++*empty_heap_records;
        if (ev.kind == HP_EV_SUBRECORD)
            tally[ev.sub->tag]++;
    }
    hp_parser_free(p);
    return rc == HP_OK ? 0 : -1;
}

/* ---- hprof-conv ---- */

static char tmpdir[256];

static const char *hprof_conv_path(void)
{
    const char *p = getenv("HPROF_CONV");
    if (!p)
        p = "/usr/lib/android-sdk/platform-tools/hprof-conv";
    return access(p, X_OK) == 0 ? p : NULL;
}

/* Runs hprof-conv [-z] on `in` (bytes); returns its output or NULL. */
static uint8_t *run_hprof_conv(const uint8_t *in, size_t len, int z, size_t *out_len)
{
    char src[300], dst[300], cmd[1024];
    const char *tool = hprof_conv_path();
    FILE *f;
    uint8_t *out;
    if (!tool || !tmpdir[0])
        return NULL;
    snprintf(src, sizeof src, "%s/in.hprof", tmpdir);
    snprintf(dst, sizeof dst, "%s/out.hprof", tmpdir);
    f = fopen(src, "wb");
    if (!f || fwrite(in, 1, len, f) != len) {
        if (f)
            fclose(f);
        return NULL;
    }
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' %s '%s' '%s' >/dev/null 2>&1", tool, z ? "-z" : "", src, dst);
    if (system(cmd) != 0)
        return NULL;
    out = check_read_file(dst, out_len);
    remove(src);
    remove(dst);
    return out;
}

/* ---- crafted dumps ---- */

typedef struct unit {
    uint8_t b[256];
    size_t n;
} unit;

static void u1(unit *u, unsigned v) { u->b[u->n++] = (uint8_t)v; }
static void u2(unit *u, unsigned v) { hp_put16(u->b + u->n, (uint16_t)v); u->n += 2; }
static void u4(unit *u, uint32_t v) { hp_put32(u->b + u->n, v); u->n += 4; }
static void uid(unit *u, int ids, uint64_t v)
{
    if (ids == 8) {
        hp_put64(u->b + u->n, v);
        u->n += 8;
    } else {
        u4(u, (uint32_t)v);
    }
}
static void ubytes(unit *u, const char *s, size_t n) { memcpy(u->b + u->n, s, n); u->n += n; }

/* Ids with high bits set when ids == 8, so a 4-byte reading would be wrong. */
static uint64_t I(int ids, uint64_t v) { return ids == 8 ? 0x7F00000000000000ull | v : v; }

static unit sub_root(int ids, int tag, uint64_t obj)
{
    unit u = { { 0 }, 0 };
    u1(&u, (unsigned)tag);
    uid(&u, ids, I(ids, obj));
    switch (tag) {
    case 0x01: uid(&u, ids, I(ids, obj + 1)); break;
    case 0x02: case 0x03: case 0x08: case 0x8E: u4(&u, 7); u4(&u, 0xFFFFFFFFu); break;
    case 0x04: case 0x06: u4(&u, 7); break;
    default: break;
    }
    return u;
}

static unit sub_info(int ids, uint32_t heap)
{
    unit u = { { 0 }, 0 };
    u1(&u, 0xFE);
    u4(&u, heap);
    uid(&u, ids, 0x400000 + heap);
    return u;
}

static unit sub_class(int ids, uint64_t id)
{
    unit u = { { 0 }, 0 };
    int i;
    u1(&u, 0x20);
    uid(&u, ids, I(ids, id));
    u4(&u, 1);
    for (i = 0; i < 6; i++)
        uid(&u, ids, i == 0 ? I(ids, 0x10) : 0); /* super, loader, signers, domain, 2 reserved */
    u4(&u, 12);
    u2(&u, 1); /* constant pool: one int */
    u2(&u, 3); u1(&u, HP_T_INT); u4(&u, 0xCAFEBABE);
    u2(&u, 2); /* statics: an object and a long */
    uid(&u, ids, 0x400001); u1(&u, HP_T_OBJECT); uid(&u, ids, I(ids, 0x99));
    uid(&u, ids, 0x400002); u1(&u, HP_T_LONG); ubytes(&u, "LONGLONG", 8);
    u2(&u, 2); /* instance fields */
    uid(&u, ids, 0x400003); u1(&u, HP_T_INT);
    uid(&u, ids, 0x400004); u1(&u, HP_T_OBJECT);
    return u;
}

static unit sub_instance(int ids, uint64_t id)
{
    unit u = { { 0 }, 0 };
    u1(&u, 0x21);
    uid(&u, ids, I(ids, id));
    u4(&u, 1);
    uid(&u, ids, I(ids, 0x30));
    u4(&u, 4 + (uint32_t)ids);
    u4(&u, 0x01020304);
    uid(&u, ids, I(ids, 0x31));
    return u;
}

static unit sub_obj_array(int ids, uint64_t id)
{
    unit u = { { 0 }, 0 };
    u1(&u, 0x22);
    uid(&u, ids, I(ids, id));
    u4(&u, 1);
    u4(&u, 2);
    uid(&u, ids, I(ids, 0x32));
    uid(&u, ids, I(ids, 0x33));
    uid(&u, ids, 0);
    return u;
}

static unit sub_prim_array(int ids, uint64_t id)
{
    unit u = { { 0 }, 0 };
    u1(&u, 0x23);
    uid(&u, ids, I(ids, id));
    u4(&u, 1);
    u4(&u, 3);
    u1(&u, HP_T_SHORT);
    ubytes(&u, "abcdef", 6);
    return u;
}

/* 0xC3 and its conversions: ours (count 0) and hprof-conv's (serial 0). */
static unit sub_nodata(int ids, uint64_t id, int variant)
{
    unit u = { { 0 }, 0 };
    u1(&u, variant ? 0x23 : 0xC3);
    uid(&u, ids, I(ids, id));
    u4(&u, variant == 2 ? 0 : 0x77); /* stack-trace serial */
    u4(&u, variant == 1 ? 0 : 5);    /* element count */
    u1(&u, HP_T_INT);
    return u;
}

/* ROOT_UNKNOWN carrying the object of an Android root. */
static unit root_unknown_of(int ids, uint64_t obj)
{
    unit u = { { 0 }, 0 };
    u1(&u, 0xFF);
    uid(&u, ids, I(ids, obj));
    return u;
}

static void put_unit(hp_buf *b, const unit *u) { hp_buf_append(b, u->b, u->n); }

static size_t rec_begin(hp_buf *b, int tag)
{
    uint8_t h[9] = { (uint8_t)tag, 0, 0, 0, 0x2A, 0, 0, 0, 0 };
    hp_buf_append(b, h, 9);
    return b->len - 9;
}

/* Sets the record's length; drops it when `drop_empty` and it is empty. */
static void rec_end(hp_buf *b, size_t at, int drop_empty)
{
    size_t n = b->len - at - 9;
    if (n == 0 && drop_empty)
        b->len = at;
    else
        hp_put32(b->data + at + 5, (uint32_t)n);
}

/* The outputs a crafted dump is checked against. */
enum { X_INPUT, X_STD, X_STD_APP, X_3_APP, X_CONV, X_CONV_Z, X_COUNT };

/* Builds one crafted Android dump with identifier size `ids` and what each
 * conversion must give, in x[X_COUNT] (x[X_INPUT] is the input itself;
 * X_CONV / X_CONV_Z are what hprof-conv gives, bugs included). */
static void craft(int ids, hp_buf x[X_COUNT])
{
    static const int android_roots[] = { 0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E, 0x90 };
    static const int std_roots[] = { 0xFF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 };
    size_t at[X_COUNT];
    int k, i;
    for (k = 0; k < X_COUNT; k++) {
        uint8_t h[HP_HEADER_MAX];
        unit s = { { 0 }, 0 };
        hp_buf_init(&x[k], NULL);
        int version = k == X_INPUT || k == X_3_APP ? 3 : 2;
        hp_buf_append(&x[k], h, hp_header_write(h, version, ids, 0x0102030405060708ull));
        /* a STRING and a LOAD_CLASS, verbatim everywhere */
        at[k] = rec_begin(&x[k], HP_TAG_UTF8);
        uid(&s, ids, 0x400000);
        ubytes(&s, "app", 3);
        put_unit(&x[k], &s);
        rec_end(&x[k], at[k], 0);
        s.n = 0;
        at[k] = rec_begin(&x[k], HP_TAG_LOAD_CLASS);
        u4(&s, 1);
        uid(&s, ids, I(ids, 0x30));
        u4(&s, 1);
        uid(&s, ids, 0x400000);
        put_unit(&x[k], &s);
        rec_end(&x[k], at[k], 0);
    }

    /* Segment 1: every root, then objects in the zygote, app and image heaps. */
    for (k = 0; k < X_COUNT; k++)
        at[k] = rec_begin(&x[k], HP_TAG_HEAP_DUMP_SEGMENT);
    for (i = 0; i < (int)(sizeof std_roots / sizeof std_roots[0]); i++) {
        unit u = sub_root(ids, std_roots[i], 0x100 + (uint64_t)i);
        for (k = 0; k < X_COUNT; k++)
            put_unit(&x[k], &u);
    }
    for (i = 0; i < (int)(sizeof android_roots / sizeof android_roots[0]); i++) {
        unit u = sub_root(ids, android_roots[i], 0x200 + (uint64_t)i);
        unit v = root_unknown_of(ids, 0x200 + (uint64_t)i);
        for (k = 0; k < X_COUNT; k++)
            put_unit(&x[k], k == X_INPUT || k == X_3_APP ? &u : &v);
    }
    {
        unit z = sub_info(ids, 'Z'), a = sub_info(ids, 'A'), im = sub_info(ids, 'I');
        unit cls = sub_class(ids, 0x30), in1 = sub_instance(ids, 0x301), oa = sub_obj_array(ids, 0x302);
        unit pa = sub_prim_array(ids, 0x303), in2 = sub_instance(ids, 0x305), pa2 = sub_prim_array(ids, 0x307);
        unit nd = sub_nodata(ids, 0x304, 0), nd_ours = sub_nodata(ids, 0x304, 1);
        unit nd_conv = sub_nodata(ids, 0x304, 2);
        unit nd2 = sub_nodata(ids, 0x306, 0), nd2_ours = sub_nodata(ids, 0x306, 1);
        unit nd2_conv = sub_nodata(ids, 0x306, 2);
        /* FE 'Z': the class stays, its objects go under app_only */
        put_unit(&x[X_INPUT], &z);
        put_unit(&x[X_3_APP], &z);
        for (k = 0; k < X_COUNT; k++)
            put_unit(&x[k], &cls);
        for (k = 0; k < X_COUNT; k++) {
            if (k == X_STD_APP || k == X_3_APP)
                continue;
            if (k != X_CONV_Z) {
                put_unit(&x[k], &in1);
                put_unit(&x[k], &oa);
                put_unit(&x[k], &pa);
            }
            put_unit(&x[k], k == X_INPUT ? &nd : k == X_STD ? &nd_ours : &nd_conv); /* -z keeps 0xC3 */
        }
        /* FE 'A': kept */
        put_unit(&x[X_INPUT], &a);
        put_unit(&x[X_3_APP], &a);
        for (k = 0; k < X_COUNT; k++) {
            put_unit(&x[k], &in2);
            put_unit(&x[k], k == X_INPUT || k == X_3_APP ? &nd2
                            : k == X_CONV || k == X_CONV_Z ? &nd2_conv : &nd2_ours);
        }
        /* FE 'I' then FE 'A' at the end of the segment: with app_only
         * nothing follows either switch in 1.0.3 output */
        put_unit(&x[X_INPUT], &im);
        for (k = 0; k < X_COUNT; k++)
            if (k != X_STD_APP && k != X_3_APP && k != X_CONV_Z && k != X_INPUT)
                put_unit(&x[k], &pa2);
        put_unit(&x[X_INPUT], &pa2);
        put_unit(&x[X_INPUT], &a);
    }
    for (k = 0; k < X_COUNT; k++)
        rec_end(&x[k], at[k], 0);

    /* Segment 2: only zygote objects, empty under app_only. */
    {
        unit z = sub_info(ids, 'Z'), in = sub_instance(ids, 0x401), pa = sub_prim_array(ids, 0x402);
        for (k = 0; k < X_COUNT; k++) {
            at[k] = rec_begin(&x[k], HP_TAG_HEAP_DUMP_SEGMENT);
            if (k == X_INPUT)
                put_unit(&x[k], &z);
            if (k != X_STD_APP && k != X_3_APP && k != X_CONV_Z) {
                put_unit(&x[k], &in);
                put_unit(&x[k], &pa);
            }
            rec_end(&x[k], at[k], k != X_CONV_Z); /* hprof-conv -z leaves it empty */
        }
    }
    /* A HEAP_DUMP record: the heap resets to the default, so its instance stays. */
    {
        unit in = sub_instance(ids, 0x501);
        for (k = 0; k < X_COUNT; k++) {
            at[k] = rec_begin(&x[k], HP_TAG_HEAP_DUMP);
            put_unit(&x[k], &in);
            rec_end(&x[k], at[k], 0);
        }
    }
    /* Segment 3: FE 'I', FE 'Z', a root: only the second switch is needed. */
    {
        unit im = sub_info(ids, 'I'), z = sub_info(ids, 'Z'), r = sub_root(ids, 0x89, 0x601);
        unit ru = root_unknown_of(ids, 0x601);
        for (k = 0; k < X_COUNT; k++) {
            at[k] = rec_begin(&x[k], HP_TAG_HEAP_DUMP_SEGMENT);
            if (k == X_INPUT)
                put_unit(&x[k], &im);
            if (k == X_INPUT || k == X_3_APP)
                put_unit(&x[k], &z);
            put_unit(&x[k], k == X_INPUT || k == X_3_APP ? &r : &ru);
            rec_end(&x[k], at[k], 0);
        }
    }
    /* Segment 4: only a HEAP_DUMP_INFO, which empties it in 1.0.2 output. */
    {
        unit a = sub_info(ids, 'A');
        for (k = 0; k < X_COUNT; k++) {
            at[k] = rec_begin(&x[k], HP_TAG_HEAP_DUMP_SEGMENT);
            if (k == X_INPUT)
                put_unit(&x[k], &a);
            rec_end(&x[k], at[k], k != X_CONV && k != X_CONV_Z);
        }
    }
    for (k = 0; k < X_COUNT; k++)
        rec_end(&x[k], rec_begin(&x[k], HP_TAG_HEAP_DUMP_END), 0);
}

/* ---- the tests ---- */

static void test_crafted(int ids)
{
    hp_buf x[X_COUNT], out;
    static const struct { hp_convert_options o; int expect; const char *name; } cases[] = {
        { { 1, 0, 0, 0 }, X_STD, "to_standard" },
        { { 1, 1, 0, 0 }, X_STD_APP, "to_standard+app_only" },
        { { 0, 1, 0, 0 }, X_3_APP, "app_only (1.0.3)" },
        { { 0, 0, 0, 0 }, X_INPUT, "identity" },
    };
    size_t i, k;
    hp_error err;
    static const size_t chunks[] = { 0, 1, 2, 7, 13, 4096 };

    craft(ids, x);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const hp_buf *want = &x[cases[i].expect];
        for (k = 0; k < sizeof chunks / sizeof chunks[0] + 3; k++) {
            hp_code rc;
            size_t chunk = k < sizeof chunks / sizeof chunks[0] ? chunks[k] : 0;
            unsigned seed = k < sizeof chunks / sizeof chunks[0] ? 0 : (unsigned)(k * 7919);
            hp_buf_init(&out, NULL);
            rc = convert(x[X_INPUT].data, x[X_INPUT].len, &cases[i].o, chunk, seed, &out, &err);
            CHECK(rc == HP_OK);
            CHECK(buf_equals(&out, want->data, want->len));
            if (!buf_equals(&out, want->data, want->len))
                report_diff(cases[i].name, out.data, out.len, want->data, want->len);
            hp_buf_free(&out);
        }
        /* the model agrees too */
        hp_buf_init(&out, NULL);
        CHECK(model_convert(x[X_INPUT].data, x[X_INPUT].len, &cases[i].o, &out) == HP_OK);
        CHECK(buf_equals(&out, want->data, want->len));
        hp_buf_free(&out);
    }

    /* hprof-conv does what our X_CONV / X_CONV_Z say, bugs included (4-byte ids only). */
    if (ids == 4 && hprof_conv_path()) {
        int z;
        for (z = 0; z < 2; z++) {
            size_t n;
            uint8_t *conv = run_hprof_conv(x[X_INPUT].data, x[X_INPUT].len, z, &n);
            const hp_buf *want = &x[z ? X_CONV_Z : X_CONV];
            CHECK(conv != NULL);
            if (conv) {
                CHECK(n == want->len && memcmp(conv, want->data, n) == 0);
                if (!(n == want->len && memcmp(conv, want->data, n) == 0))
                    report_diff(z ? "hprof-conv -z model" : "hprof-conv model", conv, n, want->data,
                                want->len);
            }
            free(conv);
        }
    }
    if (ids == 8 && hprof_conv_path()) { /* hprof-conv cannot read 8-byte ids */
        size_t n;
        uint8_t *conv = run_hprof_conv(x[X_INPUT].data, x[X_INPUT].len, 0, &n);
        CHECK(conv == NULL);
        free(conv);
    }
    for (i = 0; i < X_COUNT; i++)
        hp_buf_free(&x[i]);
}

/* Every Android dump: parity with hprof-conv (after stripping the empty
 * segments -z leaves; none of them has 0xC3), the model for every option
 * combination, chunking invariance, and app_only's bookkeeping. */
static void test_dumps(void)
{
    size_t d;
    int have_conv = hprof_conv_path() != NULL;
    const char *ci = getenv("CI");
    if (!have_conv && ci && strcmp(ci, "true") == 0)
        CHECK(!"hprof-conv is missing, and CI=true: .ci/run installs it (or set HPROF_CONV)");
    else if (!have_conv)
        printf("  hprof-conv not found: parity checks skipped\n");
    for (d = 0; d < N_DUMPS; d++) {
        size_t len, o;
        uint8_t *in = check_read_file(check_data_path(android_dumps[d]), &len);
        CHECK(in != NULL);
        if (!in)
            continue;
        for (o = 0; o < 4; o++) {
            const hp_convert_options *opt = &all_opts[o];
            hp_buf one, model, other;
            hp_error err;
            static const size_t chunks[] = { 1, 7, 4096 };
            size_t k;
            hp_buf_init(&one, NULL);
            CHECK(convert(in, len, opt, 0, 0, &one, &err) == HP_OK);

            hp_buf_init(&model, NULL);
            CHECK(model_convert(in, len, opt, &model) == HP_OK);
            CHECK(buf_equals(&one, model.data, model.len));
            if (!buf_equals(&one, model.data, model.len))
                report_diff(android_dumps[d], one.data, one.len, model.data, model.len);
            hp_buf_free(&model);

            if (opt->to_standard && have_conv) {
                size_t n;
                uint8_t *conv = run_hprof_conv(in, len, opt->app_only, &n);
                CHECK(conv != NULL);
                if (conv) {
                    hp_buf cb = { conv, n, n, hp_default_alloc };
                    strip_empty_heap_records(&cb);
                    CHECK(buf_equals(&one, cb.data, cb.len));
                    if (!buf_equals(&one, cb.data, cb.len))
                        report_diff(android_dumps[d], one.data, one.len, cb.data, cb.len);
                    if (opt->app_only == 0)
                        CHECK(cb.len == n); /* without -z hprof-conv leaves no empty segment here */
                }
                free(conv);
            }

            for (k = 0; k < sizeof chunks / sizeof chunks[0] + 2; k++) {
                size_t chunk = k < 3 ? chunks[k] : 0;
                unsigned seed = k < 3 ? 0 : (unsigned)(d * 31 + o * 7 + k);
                if (chunk == 1 && len > 4000000)
                    continue;
                hp_buf_init(&other, NULL);
                CHECK(convert(in, len, opt, chunk, seed, &other, &err) == HP_OK);
                CHECK(buf_equals(&other, one.data, one.len));
                if (!buf_equals(&other, one.data, one.len))
                    report_diff("chunked", other.data, other.len, one.data, one.len);
                hp_buf_free(&other);
            }

            /* The output parses, has no empty heap record, and app_only
             * leaves no object of the zygote/image heaps. */
            {
                uint64_t tin[256], tout[256];
                int empty_in, empty_out;
                CHECK(walk_output(in, len, tin, &empty_in) == 0);
                CHECK(walk_output(one.data, one.len, tout, &empty_out) == 0);
                CHECK(empty_out == 0);
                CHECK(tout[0x20] == tin[0x20]); /* CLASS_DUMPs all stay */
                if (opt->to_standard) {
                    CHECK(tout[0xFE] == 0 && tout[0x89] == 0 && tout[0x8D] == 0 && tout[0x8E] == 0);
                    CHECK(tout[0xFF] == tin[0xFF] + tin[0x89] + tin[0x8A] + tin[0x8B] + tin[0x8C] +
                                            tin[0x8D] + tin[0x8E] + tin[0x90]);
                }
                if (!opt->app_only)
                    CHECK(tout[0x21] == tin[0x21] && tout[0x22] == tin[0x22] && tout[0x23] == tin[0x23]);
            }
            hp_buf_free(&one);
        }
        free(in);
    }
}

/* Units that stress the output queue: a segment of alternating rewritten and
 * verbatim roots (thousands of pieces), one of 60000 rewritten roots (a big
 * literal run), sub-records over HP_WHOLE_MAX (PAYLOAD pieces, kept in the
 * app heap, dropped in the zygote heap) and a 2 MiB non-heap record. */
static void test_big_units(void)
{
    hp_buf in, want, out;
    uint8_t h[HP_HEADER_MAX];
    size_t at, i, o, k;
    hp_error err;
    const uint32_t big = (3u << 20) + 5;

    hp_buf_init(&in, NULL);
    hp_buf_append(&in, h, hp_header_write(h, 3, 4, 7));
    at = rec_begin(&in, HP_TAG_UTF8);
    hp_buf_reserve(&in, 2u << 20);
    memset(in.data + in.len, 'u', 2u << 20);
    in.len += 2u << 20;
    rec_end(&in, at, 0);

    at = rec_begin(&in, HP_TAG_HEAP_DUMP_SEGMENT);
    for (i = 0; i < 6000; i++) {
        unit a = sub_root(4, 0x89, i), b = sub_root(4, 0x05, i);
        put_unit(&in, &a);
        put_unit(&in, &b);
    }
    rec_end(&in, at, 0);
    at = rec_begin(&in, HP_TAG_HEAP_DUMP_SEGMENT);
    for (i = 0; i < 60000; i++) {
        unit a = sub_root(4, 0x8D, i);
        put_unit(&in, &a);
    }
    rec_end(&in, at, 0);

    at = rec_begin(&in, HP_TAG_HEAP_DUMP_SEGMENT);
    for (k = 0; k < 2; k++) {
        unit info = sub_info(4, k ? 'A' : 'Z'), inst = sub_instance(4, 0x700 + k), arr = { { 0 }, 0 };
        put_unit(&in, &info);
        u1(&arr, 0x23); u4(&arr, 0x800 + (uint32_t)k); u4(&arr, 1); u4(&arr, big); u1(&arr, HP_T_BYTE);
        put_unit(&in, &arr);
        hp_buf_reserve(&in, big);
        for (i = 0; i < big; i++)
            in.data[in.len + i] = (uint8_t)(i * 31 + k);
        in.len += big;
        put_unit(&in, &inst);
    }
    rec_end(&in, at, 0);
    rec_end(&in, rec_begin(&in, HP_TAG_HEAP_DUMP_END), 0);

    for (o = 0; o < 4; o++) {
        static const size_t chunks[] = { 0, 4096, 65537, (size_t)1 << 20 };
        hp_buf_init(&want, NULL);
        CHECK(model_convert(in.data, in.len, &all_opts[o], &want) == HP_OK);
        for (k = 0; k < sizeof chunks / sizeof chunks[0] + 2; k++) {
            size_t chunk = k < 4 ? chunks[k] : 0;
            unsigned seed = k < 4 ? 0 : (unsigned)(k + 17 * o);
            hp_buf_init(&out, NULL);
            CHECK(convert(in.data, in.len, &all_opts[o], chunk, seed, &out, &err) == HP_OK);
            CHECK(buf_equals(&out, want.data, want.len));
            if (!buf_equals(&out, want.data, want.len))
                report_diff("big units", out.data, out.len, want.data, want.len);
            hp_buf_free(&out);
        }
        if (all_opts[o].app_only) /* the zygote array is gone, the app one stays */
            CHECK(want.len < in.len - big && want.len > big);
        hp_buf_free(&want);
    }
    hp_buf_free(&in);
}

/* An extra dump named by HPROFKIT_EXTRA_DUMP: the model, hprof-conv parity
 * and random chunking. */
static void test_extra_dump(const char *path)
{
    size_t len, o;
    uint8_t *in = check_read_file(path, &len);
    CHECK(in != NULL);
    if (!in)
        return;
    for (o = 0; o < 4; o++) {
        hp_buf one, other;
        hp_error err;
        hp_buf_init(&one, NULL);
        CHECK(convert(in, len, &all_opts[o], 0, 0, &one, &err) == HP_OK);
        hp_buf_init(&other, NULL);
        CHECK(model_convert(in, len, &all_opts[o], &other) == HP_OK);
        CHECK(buf_equals(&one, other.data, other.len));
        hp_buf_free(&other);
        hp_buf_init(&other, NULL);
        CHECK(convert(in, len, &all_opts[o], 0, 12345, &other, &err) == HP_OK);
        CHECK(buf_equals(&one, other.data, other.len));
        hp_buf_free(&other);
        if (all_opts[o].to_standard && hprof_conv_path()) {
            size_t n;
            uint8_t *conv = run_hprof_conv(in, len, all_opts[o].app_only, &n);
            CHECK(conv != NULL);
            if (conv) {
                hp_buf cb = { conv, n, n, hp_default_alloc };
                strip_empty_heap_records(&cb);
                CHECK(buf_equals(&one, cb.data, cb.len));
                if (!buf_equals(&one, cb.data, cb.len))
                    report_diff(path, one.data, one.len, cb.data, cb.len);
            }
            free(conv);
        }
        hp_buf_free(&one);
    }
    free(in);
}

/* Truncated input: a clean HP_E_TRUNCATED naming the unit, the same for any
 * chunking; the error is sticky and feeding after it fails. */
static void test_truncation(void)
{
    hp_buf x[X_COUNT], out;
    hp_error err, err2;
    hp_convert_options opt = { 1, 0, 0, 0 };
    size_t cut, full;
    int i;
    craft(4, x);
    full = x[X_INPUT].len;
    for (cut = 0; cut < full; cut++) {
        hp_code rc;
        int is_boundary = 0;
        size_t r = 31;
        /* a cut at a record boundary is a valid (shorter) file */
        while (r < full) {
            if (r == cut)
                is_boundary = 1;
            r += 9 + hp_be32(x[X_INPUT].data + r + 5);
        }
        hp_buf_init(&out, NULL);
        rc = convert(x[X_INPUT].data, cut, &opt, 0, 0, &out, &err);
        hp_buf_free(&out);
        if (is_boundary) {
            CHECK(rc == HP_OK);
            continue;
        }
        CHECK(rc == HP_E_TRUNCATED);
        CHECK(err.offset <= cut);
        for (i = 1; i <= 3; i++) {
            hp_buf_init(&out, NULL);
            rc = convert(x[X_INPUT].data, cut, &opt, i == 3 ? 0 : (size_t)i * 5, i == 3 ? 99 : 0, &out,
                         &err2);
            hp_buf_free(&out);
            CHECK(rc == HP_E_TRUNCATED && err2.offset == err.offset && err2.tag == err.tag &&
                  err2.is_sub == err.is_sub);
        }
    }
    /* Specific offsets: inside the header, a record head, a sub-record. */
    {
        hp_converter *c = hp_converter_new(NULL, &opt);
        hp_sink sink;
        char msg[200];
        size_t seg1 = 31 + 9 + 7 + 9 + 16; /* header, STRING, LOAD_CLASS */
        hp_buf_init(&out, NULL);
        sink = hp_buf_sink(&out);
        CHECK(hp_converter_feed(c, x[X_INPUT].data, seg1 + 9 + 3, &sink, &err) == HP_OK);
        CHECK(x[X_INPUT].data[seg1] == 0x1C);
        CHECK(hp_converter_finish(c, &sink, &err) == HP_E_TRUNCATED);
        CHECK(err.offset == seg1 + 9 && err.is_sub == 1 && err.tag == 0xFF);
        hp_error_format(&err, msg, sizeof msg);
        printf("  e.g. %s\n", msg);
        /* sticky, and feeding after finish is refused */
        CHECK(hp_converter_feed(c, x[X_INPUT].data, 1, &sink, &err2) == HP_E_TRUNCATED);
        CHECK(err2.offset == err.offset);
        hp_converter_free(c);
        hp_buf_free(&out);

        hp_buf_init(&out, NULL);
        CHECK(convert(x[X_INPUT].data, seg1 + 4, &opt, 0, 0, &out, &err) == HP_E_TRUNCATED);
        CHECK(err.offset == seg1 && err.is_sub == 0);
        CHECK(out.len == seg1); /* the complete records before it were written */
        hp_buf_free(&out);

        hp_buf_init(&out, NULL);
        CHECK(convert(x[X_INPUT].data, 20, &opt, 0, 0, &out, &err) == HP_E_TRUNCATED);
        CHECK(err.offset == 0 && err.tag == -1);
        CHECK(out.len == 0);
        hp_buf_free(&out);
    }
    for (i = 0; i < X_COUNT; i++)
        hp_buf_free(&x[i]);
}

static int refusing_write(void *ctx, const uint8_t *data, size_t len)
{
    (void)ctx; (void)data; (void)len;
    return -1;
}

/* Wrong versions, a corrupt sub-record, API misuse, a refusing sink. */
static void test_errors(void)
{
    hp_buf x[X_COUNT], out, in;
    hp_error err;
    hp_convert_options opt = { 1, 0, 0, 0 }, app = { 0, 1, 0, 0 };
    hp_converter *c;
    hp_sink sink;
    size_t seg1 = 31 + 9 + 7 + 9 + 16;
    int i;
    craft(4, x);

    /* 1.0.2 input: refused like hprof-conv, whatever the options */
    hp_buf_init(&in, NULL);
    hp_buf_append(&in, x[X_STD].data, x[X_STD].len);
    hp_buf_init(&out, NULL);
    CHECK(convert(in.data, in.len, &opt, 0, 0, &out, &err) == HP_E_FORMAT);
    CHECK(err.offset == 0 && err.tag == -1 && err.detail && strstr(err.detail, "already in 1.0.2"));
    CHECK(out.len == 0);
    CHECK(convert(in.data, in.len, &app, 3, 0, &out, &err) == HP_E_FORMAT);
    /* 1.0.1 */
    in.data[17] = '1';
    CHECK(convert(in.data, in.len, &opt, 0, 0, &out, &err) == HP_E_FORMAT);
    CHECK(err.detail && strstr(err.detail, "1.0.3"));
    hp_buf_free(&in);
    hp_buf_free(&out);

    /* an unknown sub-tag: CORRUPT at its offset */
    hp_buf_init(&in, NULL);
    hp_buf_append(&in, x[X_INPUT].data, x[X_INPUT].len);
    in.data[seg1 + 9] = 0x77;
    for (i = 0; i < 2; i++) {
        hp_buf_init(&out, NULL);
        CHECK(convert(in.data, in.len, &opt, i ? 1 : 0, 0, &out, &err) == HP_E_CORRUPT);
        CHECK(err.offset == seg1 + 9 && err.tag == 0x77 && err.is_sub);
        CHECK(out.len == seg1);
        hp_buf_free(&out);
    }
    hp_buf_free(&in);

    /* a sub-record running past its segment: OVERRUN */
    hp_buf_init(&in, NULL);
    hp_buf_append(&in, x[X_INPUT].data, x[X_INPUT].len);
    hp_put32(in.data + seg1 + 5, 3);
    hp_buf_init(&out, NULL);
    CHECK(convert(in.data, in.len, &opt, 0, 0, &out, &err) == HP_E_OVERRUN);
    CHECK(err.offset == seg1 + 9);
    hp_buf_free(&out);
    hp_buf_free(&in);

    /* empty input */
    hp_buf_init(&out, NULL);
    CHECK(convert(NULL, 0, &opt, 0, 0, &out, &err) == HP_E_TRUNCATED);
    hp_buf_free(&out);

    /* finish twice, feed after finish */
    hp_buf_init(&out, NULL);
    sink = hp_buf_sink(&out);
    c = hp_converter_new(NULL, NULL); /* NULL options: plain hprof-conv */
    CHECK(c != NULL);
    CHECK(hp_converter_feed(c, x[X_INPUT].data, x[X_INPUT].len, &sink, &err) == HP_OK);
    CHECK(hp_converter_feed(c, NULL, 0, &sink, &err) == HP_OK);
    CHECK(hp_converter_finish(c, &sink, &err) == HP_OK);
    CHECK(buf_equals(&out, x[X_STD].data, x[X_STD].len));
    CHECK(hp_converter_finish(c, &sink, &err) == HP_E_USAGE);
    CHECK(hp_converter_feed(c, x[X_INPUT].data, 1, &sink, &err) == HP_E_USAGE);
    hp_converter_free(c);
    hp_buf_free(&out);
    hp_converter_free(NULL);

    /* a sink that refuses: NOMEM, sticky */
    {
        hp_sink bad = { refusing_write, NULL, NULL };
        c = hp_converter_new(NULL, &opt);
        CHECK(hp_converter_feed(c, x[X_INPUT].data, x[X_INPUT].len, &bad, &err) == HP_E_NOMEM);
        CHECK(hp_converter_finish(c, &bad, &err) == HP_E_NOMEM);
        hp_converter_free(c);
    }
    for (i = 0; i < X_COUNT; i++)
        hp_buf_free(&x[i]);
}

/* Allocation failure at every point: a clean NOMEM, never a crash or leak. */
static long alloc_budget;
static void *tight_malloc(size_t n) { return alloc_budget-- > 0 ? malloc(n) : NULL; }
static void *tight_realloc(void *p, size_t n) { return alloc_budget-- > 0 ? realloc(p, n) : NULL; }

static void test_out_of_memory(void)
{
    static const hp_alloc tight = { tight_malloc, tight_realloc, free };
    hp_buf x[X_COUNT];
    long budget;
    int i, succeeded = 0;
    craft(4, x);
    for (budget = 0; budget < 64 && !succeeded; budget++) {
        hp_converter *c;
        hp_buf out;
        hp_sink sink;
        hp_error err;
        hp_code rc = HP_OK;
        size_t pos;
        alloc_budget = budget;
        c = hp_converter_new(&tight, NULL);
        if (!c)
            continue;
        hp_buf_init(&out, NULL);
        sink = hp_buf_sink(&out);
        for (pos = 0; pos < x[X_INPUT].len && rc == HP_OK; pos += 50) {
            size_t n = x[X_INPUT].len - pos < 50 ? x[X_INPUT].len - pos : 50;
            rc = hp_converter_feed(c, x[X_INPUT].data + pos, n, &sink, &err);
        }
        if (rc == HP_OK)
            rc = hp_converter_finish(c, &sink, &err);
        CHECK(rc == HP_OK || rc == HP_E_NOMEM);
        if (rc == HP_OK) {
            succeeded = 1;
            CHECK(buf_equals(&out, x[X_STD].data, x[X_STD].len));
        }
        hp_converter_free(c);
        hp_buf_free(&out);
    }
    CHECK(succeeded);
    for (i = 0; i < X_COUNT; i++)
        hp_buf_free(&x[i]);
}

/* Output is bounded: with a segment far larger than the chunks, each feed
 * call writes the records before it, and big payloads stream through. */
static int count_write(void *ctx, const uint8_t *data, size_t len)
{
    (void)data;
    *(uint64_t *)ctx += len;
    return 0;
}

/* A > 2 GiB heap record (one 2.25 GiB byte array, fed in 1 MiB chunks):
 * the length fields come out right.  Slow; only with HPROFKIT_SLOW=1. */
static uint8_t big_head[64];
static size_t big_head_len;
static int head_write(void *ctx, const uint8_t *data, size_t len)
{
    size_t n = len < sizeof big_head - big_head_len ? len : sizeof big_head - big_head_len;
    memcpy(big_head + big_head_len, data, n);
    big_head_len += n;
    *(uint64_t *)ctx += len;
    return 0;
}

static void test_huge_record(void)
{
    const uint64_t elems = (uint64_t)9 << 28; /* 2.25 GiB */
    uint8_t *chunk = calloc(1, (size_t)1 << 20);
    unit hdr = { { 0 }, 0 }, seg = { { 0 }, 0 };
    uint64_t written = 0, fed = 0, body = 9 + 14 + elems; /* HEAP_DUMP_INFO, array head, elements */
    hp_convert_options opt = { 1, 0, 0, 0 };
    hp_converter *c = hp_converter_new(NULL, &opt);
    hp_sink sink = { head_write, &written, NULL };
    hp_error err;
    hp_code rc;
    uint8_t h[HP_HEADER_MAX];

    hdr.n = hp_header_write(h, 3, 4, 0);
    memcpy(hdr.b, h, hdr.n);
    u1(&seg, 0x1C); u4(&seg, 0); u4(&seg, (uint32_t)body);
    u1(&seg, 0xFE); u4(&seg, 'A'); u4(&seg, 0x400000);         /* dropped: 9 bytes less */
    u1(&seg, 0x23); u4(&seg, 1); u4(&seg, 0); u4(&seg, (uint32_t)elems); u1(&seg, HP_T_BYTE);
    rc = hp_converter_feed(c, hdr.b, hdr.n, &sink, &err);
    if (rc == HP_OK)
        rc = hp_converter_feed(c, seg.b, seg.n, &sink, &err);
    while (rc == HP_OK && fed < elems) {
        size_t n = elems - fed < ((size_t)1 << 20) ? (size_t)(elems - fed) : (size_t)1 << 20;
        rc = hp_converter_feed(c, chunk, n, &sink, &err);
        fed += n;
    }
    if (rc == HP_OK)
        rc = hp_converter_finish(c, &sink, &err);
    CHECK(rc == HP_OK);
    CHECK_EQ_U64(written, 31 + 9 + body - 9);
    CHECK(big_head_len == sizeof big_head && big_head[31] == 0x1C);
    CHECK_EQ_U64(hp_be32(big_head + 31 + 5), body - 9);
    CHECK(big_head[40] == 0x23);
    hp_converter_free(c);
    free(chunk);
}

/* The input's big payloads do not pile up: feeding the crafted dump with a
 * long non-heap record keeps writing as it goes. */
static void test_streaming(void)
{
    hp_buf in;
    uint8_t h[HP_HEADER_MAX], rec[9] = { 0x01, 0, 0, 0, 0, 0, 0, 0, 0 };
    size_t body = (size_t)3 << 20, pos;
    uint64_t written = 0, last = 0;
    hp_converter *c = hp_converter_new(NULL, NULL);
    hp_sink sink = { count_write, &written, NULL };
    hp_error err;
    int grew_every_time = 1;

    hp_buf_init(&in, NULL);
    hp_buf_append(&in, h, hp_header_write(h, 3, 4, 0));
    hp_put32(rec + 5, (uint32_t)body);
    hp_buf_append(&in, rec, 9);
    hp_buf_reserve(&in, body);
    memset(in.data + in.len, 'x', body);
    in.len += body;
    for (pos = 0; pos < in.len; pos += 65536) {
        size_t n = in.len - pos < 65536 ? in.len - pos : 65536;
        CHECK(hp_converter_feed(c, in.data + pos, n, &sink, &err) == HP_OK);
        if (pos > 0 && written <= last)
            grew_every_time = 0;
        last = written;
    }
    CHECK(grew_every_time);
    CHECK(hp_converter_finish(c, &sink, &err) == HP_OK);
    CHECK_EQ_U64(written, in.len);
    hp_converter_free(c);
    hp_buf_free(&in);
}

/* An Android dump: a STRING, then one segment of `n` byte[] and int[] of
 * varied contents, one of them `big` bytes long, then HEAP_DUMP_END. */
static void android_arrays(bb *b, int n, uint32_t big)
{
    int i;
    uint32_t k;
    memset(b, 0, sizeof *b);
    b->id = 4;
    bb_raw(b, "JAVA PROFILE 1.0.3", 19);
    bb_u4(b, 4);
    bb_u8(b, 0);
    bb_rec_begin(b, HP_TAG_UTF8);
    bb_id(b, 0x400000);
    bb_raw(b, "secret", 6);
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_SEGMENT);
    for (i = 0; i < n; i++) {
        uint32_t count = i == n / 2 ? big : 100 + (uint32_t)(rng() % 2000);
        int type = i % 3 ? HP_T_BYTE : HP_T_INT;
        bb_u1(b, HP_SUB_PRIM_ARRAY_DUMP);
        bb_id(b, 0x1000 + 16 * (unsigned)i);
        bb_u4(b, 0);
        bb_u4(b, type == HP_T_INT ? count / 4 : count);
        bb_u1(b, (unsigned)type);
        for (k = 0; k < (type == HP_T_INT ? count / 4 * 4 : count); k++)
            bb_u1(b, 1 + (k * (unsigned)i) % 250);
    }
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_END);
    bb_rec_end(b);
}

/* A heap record longer than max_record: streamed, its length patched (the
 * very bytes) or, for a sink that cannot patch, cut into records of at most
 * the limit (the one longer sub-record in a record of its own). */
static void test_long_records(void)
{
    hp_convert_options opt = { 1, 0, 0, 64 << 10 };
    hp_buf want;
    hp_error err;
    bb dump;
    int patch;
    android_arrays(&dump, 400, 300000);
    hp_buf_init(&want, NULL);
    CHECK(convert(dump.d, dump.len, &all_opts[0], 0, 0, &want, &err) == HP_OK);
    for (patch = 0; patch <= 1; patch++) {
        hp_converter *c = hp_converter_new(NULL, &opt);
        mem_sink m = { 0 };
        hp_sink sink = { mem_write, &m, patch ? mem_patch : NULL };
        hp_buf heap_a, other_a, heap_b, other_b;
        size_t longest_a, longest_b, pos;
        for (pos = 0; pos < dump.len; pos += 7000)
            CHECK(hp_converter_feed(c, dump.d + pos, dump.len - pos < 7000 ? dump.len - pos : 7000, &sink, &err) ==
                  HP_OK);
        CHECK(hp_converter_finish(c, &sink, &err) == HP_OK);
        hp_converter_free(c);
        split_records(want.data, want.len, 31, &heap_a, &other_a, &longest_a);
        split_records(m.d, m.len, 31, &heap_b, &other_b, &longest_b);
        CHECK(longest_a > (size_t)4 << 16); /* one record, four times the limit */
        if (patch) {
            CHECK(m.patches == 1);
            CHECK(same_bytes("long record, patched", m.d, m.len, want.data, want.len));
        } else {
            CHECK(longest_b == 14 + 300000); /* the long array, alone; the others under the limit */
            CHECK(same_bytes("long record, cut", heap_b.data, heap_b.len, heap_a.data, heap_a.len));
            CHECK(same_bytes("long record, cut", other_b.data, other_b.len, other_a.data, other_a.len));
        }
        hp_buf_free(&heap_a);
        hp_buf_free(&other_a);
        hp_buf_free(&heap_b);
        hp_buf_free(&other_b);
        free(m.d);
    }
    hp_buf_free(&want);
    free(dump.d);
}

/* strip_types: the elements of those primitive arrays come out as zeros,
 * everything else (lengths included) as it was. */
static void test_strip(void)
{
    hp_convert_options opt = { 0, 0, 1u << HP_T_BYTE, 0 };
    hp_buf out, subs;
    hp_error err;
    hp_parser *p = hp_parser_new(NULL, HP_PARSE_SUBRECORDS);
    hp_event ev;
    bb dump;
    size_t zeroed = 0, kept = 0;
    android_arrays(&dump, 60, 5000);
    hp_buf_init(&out, NULL);
    hp_buf_init(&subs, NULL);
    CHECK(convert(dump.d, dump.len, &opt, 1000, 0, &out, &err) == HP_OK);
    CHECK_EQ_U64(out.len, dump.len);
    hp_parser_feed(p, out.data, out.len, 1);
    while (hp_parser_next(p, &ev, &err) == HP_OK && ev.kind != HP_EV_END) {
        const uint8_t *in = dump.d + ev.offset, *q;
        if (ev.kind != HP_EV_SUBRECORD)
            continue;
        if (ev.sub->tag == HP_SUB_PRIM_ARRAY_DUMP && ev.sub->elem_type == HP_T_BYTE) {
            for (q = ev.data + ev.sub->head_len; q < ev.data + ev.len; q++)
                CHECK(*q == 0);
            zeroed++;
        } else {
            CHECK(memcmp(ev.data, in, ev.len) == 0);
            kept++;
        }
        CHECK(memcmp(ev.data, in, ev.sub->head_len) == 0);
    }
    CHECK(zeroed == 40 && kept == 20);
    CHECK(memcmp(out.data, dump.d, 31 + 9 + 4 + 6) == 0); /* STRINGs are not arrays */
    hp_parser_free(p);
    hp_buf_free(&out);
    hp_buf_free(&subs);
    free(dump.d);
}

/* Converts `len` bytes of `in` in chunks of `chunk`; returns the heap dumps
 * the converter reports unfinished (count 0xFFFFFFFF when it failed). */
static hp_unfinished converted_unfinished(const uint8_t *in, size_t len, size_t chunk)
{
    hp_converter *c = hp_converter_new(NULL, NULL);
    hp_buf out;
    hp_sink sink = hp_buf_sink(&out);
    hp_unfinished u = { UINT32_MAX, 0, 0, 0 };
    hp_error err;
    size_t pos = 0;
    hp_code rc = HP_OK;
    hp_buf_init(&out, NULL);
    for (; pos < len && rc == HP_OK; pos += chunk < len - pos ? chunk : len - pos)
        rc = hp_converter_feed(c, in + pos, chunk < len - pos ? chunk : len - pos, &sink, &err);
    if (rc == HP_OK && hp_converter_finish(c, &sink, &err) == HP_OK)
        hp_converter_unfinished(c, &u);
    hp_converter_free(c);
    hp_buf_free(&out);
    return u;
}

/* A real dump cut short: without its final HEAP_DUMP_END, and cut right
 * after a segment in the middle, whatever the chunking; the whole dump
 * reports nothing. */
static void test_unfinished(void)
{
    static const size_t chunks[] = { 7, 4096, (size_t)-1 };
    size_t len, at, first = 0, middle = 0, k, segments = 0;
    uint8_t *in = check_read_file(check_data_path(android_dumps[0]), &len);
    CHECK(in != NULL && len > 9 && in[len - 9] == HP_TAG_HEAP_DUMP_END);
    if (!in)
        return;
    for (at = strlen((const char *)in) + 1 + 12; at + 9 <= len; at += 9 + hp_be32(in + at + 5)) {
        if (in[at] != HP_TAG_HEAP_DUMP_SEGMENT)
            continue;
        if (segments++ == 0)
            first = at;
        if (segments == 300)
            middle = at + 9 + hp_be32(in + at + 5);
    }
    CHECK(first > 0 && middle > first);
    for (k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        hp_unfinished whole = converted_unfinished(in, len, chunks[k]);
        hp_unfinished cut = converted_unfinished(in, len - 9, chunks[k]);
        hp_unfinished mid = converted_unfinished(in, middle, chunks[k]);
        CHECK_EQ_U64(whole.count, 0);
        CHECK_EQ_U64(cut.count, 1);
        CHECK_EQ_U64(cut.index, 0);
        CHECK_EQ_U64(cut.offset, first);
        CHECK_EQ_U64(cut.end, len - 9);
        CHECK_EQ_U64(mid.count, 1);
        CHECK_EQ_U64(mid.offset, first);
        CHECK_EQ_U64(mid.end, middle);
    }
    free(in);
}

int main(void)
{
    char tmpl[] = "/tmp/hprofkit-convert-XXXXXX";
    if (mkdtemp(tmpl))
        snprintf(tmpdir, sizeof tmpdir, "%s", tmpl);

    test_crafted(4);
    test_crafted(8);
    test_dumps();
    test_big_units();
    if (getenv("HPROFKIT_EXTRA_DUMP"))
        test_extra_dump(getenv("HPROFKIT_EXTRA_DUMP"));
    test_truncation();
    test_errors();
    test_out_of_memory();
    test_streaming();
    test_long_records();
    test_strip();
    test_unfinished();
    if (getenv("HPROFKIT_SLOW"))
        test_huge_record();
    else
        printf("  > 2 GiB heap record: set HPROFKIT_SLOW=1 to run\n");

    if (tmpdir[0])
        rmdir(tmpdir);
    return check_report("test_convert");
}
