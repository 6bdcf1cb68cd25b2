/* The whole pack format in C, no Python: hp_packer and hp_unpacker.
 *
 * A whole file packed and unpacked through stdio (the way a C program on a
 * device would use them), byte-identical keep-all round trips of the shared
 * dumps whatever the number of workers and the chunking, a pack that does
 * not depend on either, and hostile containers -> errors naming the block
 * and offset, never output or unbounded allocation.  Also the ordered
 * worker pool on its own. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <time.h>

#include "testkit.h"
#include "hp_convert.h"
#include "hp_heaprec.h"
#include "hp_jobs.h"
#include "hp_packer.h"
#include "hp_sink.h"

static uint32_t rng_state = 99;
static unsigned rng(void) { return xorshift(&rng_state); }

/* ---- a whole file through stdio, as a C program would do it ---- */

static int file_write(void *ctx, const uint8_t *data, size_t len)
{
    return fwrite(data, 1, len, ctx) == len ? 0 : -1;
}

/* Packs (or unpacks) the file `in` into `out`; HP_OK or the error. */
static hp_code pack_file(const char *in, const char *out, const hp_packer_options *opts, int unpack,
                         hp_error *err)
{
    FILE *src = fopen(in, "rb"), *dst = fopen(out, "wb");
    hp_packer *p = unpack ? NULL : hp_packer_new(NULL, opts);
    hp_unpacker *u = unpack ? hp_unpacker_new(NULL, NULL) : NULL;
    hp_sink sink = { file_write, dst, NULL };
    uint8_t chunk[1 << 16];
    hp_code rc = HP_OK;
    size_t n;
    CHECK(src && dst && (p || u));
    while (rc == HP_OK && (n = fread(chunk, 1, sizeof chunk, src)) > 0)
        rc = unpack ? hp_unpacker_feed(u, chunk, n, &sink, err) : hp_packer_feed(p, chunk, n, &sink, err);
    if (rc == HP_OK)
        rc = unpack ? hp_unpacker_finish(u, &sink, err) : hp_packer_finish(p, &sink, err);
    hp_packer_free(p);
    hp_unpacker_free(u);
    fclose(src);
    fclose(dst);
    return rc;
}

static void test_file_round_trip(void)
{
    const char *name = "hprof/leakcanary__leak_service_binder.hprof";
    char source[4096];
    hp_packer_options opts = { { 0, 0, 0 }, 6, 0, 2 };
    size_t a_len, b_len;
    uint8_t *a, *b;
    hp_error err;
    hp_code rc;
    snprintf(source, sizeof source, "%s", check_data_path(name));
    rc = pack_file(source, "build/packer-test.hpk", &opts, 0, &err);
    show_error("pack_file", rc, &err);
    CHECK(rc == HP_OK);
    rc = pack_file("build/packer-test.hpk", "build/packer-test.hprof", NULL, 1, &err);
    show_error("unpack_file", rc, &err);
    CHECK(rc == HP_OK);
    a = check_read_file(source, &a_len);
    b = check_read_file("build/packer-test.hprof", &b_len);
    CHECK(a && b && same_bytes(name, a, a_len, b, b_len));
    free(a);
    free(b);
    remove("build/packer-test.hpk");
    remove("build/packer-test.hprof");
}

/* ---- in memory ---- */

/* Feeds data in random pieces of 1..max bytes (one piece when max is 0). */
static hp_code pack_mem(const uint8_t *data, size_t len, const hp_packer_options *opts, size_t max, hp_buf *out,
                        hp_error *err)
{
    hp_packer *p = hp_packer_new(NULL, opts);
    hp_sink sink = hp_buf_sink(out);
    hp_code rc = HP_OK;
    size_t at = 0;
    hp_buf_init(out, NULL);
    CHECK(p != NULL);
    while (rc == HP_OK && at < len) {
        size_t n = max ? 1 + rng() % max : len;
        if (n > len - at)
            n = len - at;
        rc = hp_packer_feed(p, data + at, n, &sink, err);
        at += n;
    }
    if (rc == HP_OK)
        rc = hp_packer_finish(p, &sink, err);
    CHECK(rc != HP_OK || hp_packer_bytes_out(p) == out->len);
    hp_packer_free(p);
    return rc;
}

static hp_code unpack_mem(const uint8_t *data, size_t len, unsigned workers, size_t max, hp_buf *out, hp_error *err)
{
    hp_unpacker_options opts = { workers, 0, 0, 0 };
    hp_unpacker *u = hp_unpacker_new(NULL, &opts);
    hp_sink sink = hp_buf_sink(out);
    hp_code rc = HP_OK;
    size_t at = 0;
    hp_buf_init(out, NULL);
    CHECK(u != NULL);
    while (rc == HP_OK && at < len) {
        size_t n = max ? 1 + rng() % max : len;
        if (n > len - at)
            n = len - at;
        rc = hp_unpacker_feed(u, data + at, n, &sink, err);
        at += n;
    }
    if (rc == HP_OK)
        rc = hp_unpacker_finish(u, &sink, err);
    CHECK(rc != HP_OK || hp_unpacker_bytes_out(u) == out->len);
    hp_unpacker_free(u);
    return rc;
}

static const char *const dumps[] = {
    "hprof/heapdump__small_heap.bin",
    "hprof/leakcanary__leak_service_binder.hprof",
    "hprof/mat__openjdk_jdk11_04_x64.hprof.gz",
    "hprof/mat__oracle_jdk7_21_hprofagent.hprof",
    "hprof/mat__sun_jdk6_18_x64.hprof",
    "hprof/platform_art__RI.hprof",
    "tailor/art_like.hprof",
};

/* Keep-all round trips; the pack is the same for 0, 1 or 3 workers and any
 * chunking, and restores the same whatever the unpacker's workers. */
static void test_round_trips(void)
{
    size_t i;
    for (i = 0; i < sizeof dumps / sizeof dumps[0]; i++) {
        hp_packer_options opts = { { 0, 0, 0 }, 6, HP_PACK_BLOCK_MIN * 4, 0 };
        hp_buf one, other, back;
        hp_error err;
        hp_code rc;
        size_t len;
        unsigned w;
        uint8_t *src = load_dump(dumps[i], &len);
        CHECK(src != NULL);
        if (!src)
            continue;
        rc = pack_mem(src, len, &opts, 0, &one, &err);
        show_error(dumps[i], rc, &err);
        CHECK(rc == HP_OK);
        for (w = 1; w <= 3; w += 2) {
            opts.workers = w;
            rc = pack_mem(src, len, &opts, 50000, &other, &err);
            CHECK(rc == HP_OK && same_bytes(dumps[i], one.data, one.len, other.data, other.len));
            hp_buf_free(&other);
        }
        for (w = 0; w <= 2; w++) {
            rc = unpack_mem(one.data, one.len, w, w == 1 ? 3000 : 0, &back, &err);
            show_error(dumps[i], rc, &err);
            CHECK(rc == HP_OK && same_bytes(dumps[i], back.data, back.len, src, len));
            hp_buf_free(&back);
        }
        hp_buf_free(&one);
        free(src);
    }
}

/* A policy is recorded in the header and applied on the way back. */
static void test_info(void)
{
    size_t len;
    uint8_t *src = load_dump("hprof/leakcanary__leak_service_binder.hprof", &len);
    hp_packer_options opts = { { HP_PACK_STRIP_TAILOR, 1, 1 }, 9, 0, 1 };
    hp_unpacker *u = hp_unpacker_new(NULL, NULL);
    hp_buf blob, out;
    hp_sink sink = hp_buf_sink(&out);
    const hp_pack_info *info;
    hp_error err;
    CHECK(src && u);
    CHECK(pack_mem(src, len, &opts, 0, &blob, &err) == HP_OK);
    hp_buf_init(&out, NULL);
    CHECK(hp_unpacker_info(u) == NULL);
    CHECK(hp_unpacker_feed(u, blob.data, 30, &sink, &err) == HP_OK);
    info = hp_unpacker_info(u);
    CHECK(info && info->version == 3 && info->id_size == 4 && info->level == 9);
    CHECK(info && info->policy.strip_types == HP_PACK_STRIP_TAILOR && info->policy.app_only &&
          info->policy.drop_traces);
    CHECK(hp_is_pack(blob.data, 3) && hp_is_pack(blob.data, blob.len) && !hp_is_pack(src, len) &&
          !hp_is_pack(blob.data, 0));
    hp_unpacker_free(u);
    hp_buf_free(&blob);
    hp_buf_free(&out);
    free(src);
}

/* ---- hostile containers ---- */

static void expect_failure(const char *what, const uint8_t *data, size_t len, hp_code want, const char *text)
{
    hp_buf out;
    hp_error err;
    hp_code rc = unpack_mem(data, len, 1, 0, &out, &err);
    char message[256];
    hp_error_format(&err, message, sizeof message);
    if (rc != want || (text && !strstr(message, text)))
        fprintf(stderr, "%s: got %d (%s)\n", what, rc, rc == HP_OK ? "ok" : message);
    CHECK(rc == want);
    CHECK(!text || strstr(message, text) != NULL);
    hp_buf_free(&out);
}

/* A pack of one block whose stream `op` claims `raw` bytes (stored: the
 * bytes follow), all CRCs right: what a hostile writer can make. */
static size_t craft(uint8_t *out, uint64_t raw, uint64_t out_len)
{
    uint8_t frame[64];
    size_t n = 0, f = 0;
    /* header: version 1.0.2, 4-byte ids, keep everything */
    memcpy(out, "\x89HPK\r\n\x1a\n", 8);
    out[8] = 2;
    out[9] = HP_PACK_NSTREAMS;
    out[10] = 2;
    out[11] = 4;
    memset(out + 12, 0, 12);
    hp_put32(out + 24, (uint32_t)crc32(0, out, 24));
    n = 28;
    /* frame: 'B', in_len, out_len, op stored with `raw` bytes, others empty */
    frame[f++] = 'B';
    frame[f++] = 0;
    while (out_len >= 0x80) {
        frame[f++] = (uint8_t)(out_len | 0x80);
        out_len >>= 7;
    }
    frame[f++] = (uint8_t)out_len;
    frame[f++] = 1;
    while (raw >= 0x80) {
        frame[f++] = (uint8_t)(raw | 0x80);
        raw >>= 7;
    }
    frame[f++] = (uint8_t)raw;
    hp_put32(frame + f, (uint32_t)crc32(0, (const uint8_t *)"", 0));
    f += 4;
    memset(frame + f, 0, HP_PACK_NSTREAMS - 1);
    f += HP_PACK_NSTREAMS - 1;
    hp_put32(frame + f, (uint32_t)crc32(0, frame, (uInt)f));
    f += 4;
    memcpy(out + n, frame, f);
    return n + f;
}

static void test_hostile(void)
{
    size_t len, blob_len;
    uint8_t *src = load_dump("hprof/mat__sun_jdk6_18_x64.hprof", &len), *bad;
    hp_packer_options opts = { { 0, 0, 0 }, 6, HP_PACK_BLOCK_MIN, 0 };
    uint8_t crafted[256];
    hp_buf blob;
    hp_error err;
    size_t i, n;
    CHECK(src && pack_mem(src, len, &opts, 0, &blob, &err) == HP_OK);
    blob_len = blob.len;
    bad = xmalloc(blob_len + 1);

    expect_failure("empty", blob.data, 0, HP_E_FORMAT, "empty input");
    expect_failure("foreign", src, 100, HP_E_FORMAT, "bad magic");
    expect_failure("short header", blob.data, 20, HP_E_TRUNCATED, "truncated pack header");
    expect_failure("no end", blob.data, blob_len - 9, HP_E_TRUNCATED, "truncated pack");
    memcpy(bad, blob.data, blob_len);
    bad[blob_len] = 0;
    expect_failure("trailing", bad, blob_len + 1, HP_E_CORRUPT, "after the end");
    for (i = 0; i < 200; i++) { /* cuts: truncations; flipped bits: corruption named with the block */
        n = 1 + rng() % (blob_len - 1);
        expect_failure("cut", blob.data, n, HP_E_TRUNCATED, "truncated");
        memcpy(bad, blob.data, blob_len);
        n = 28 + rng() % (blob_len - 28 - 16);
        bad[n] ^= (uint8_t)(1u << (rng() % 8));
        {
            hp_buf out;
            hp_code rc = unpack_mem(bad, blob_len, 2, 0, &out, &err);
            char message[256];
            hp_error_format(&err, message, sizeof message);
            CHECK(rc == HP_E_CORRUPT || rc == HP_E_TRUNCATED);
            CHECK(rc != HP_E_CORRUPT || strstr(message, "block ") != NULL);
            hp_buf_free(&out);
        }
    }
    /* declared lengths beyond the limit fail before anything is inflated or held */
    n = craft(crafted, (uint64_t)1 << 40, 9);
    expect_failure("huge stream", crafted, n, HP_E_CORRUPT, "more than the");
    n = craft(crafted, (uint64_t)1 << 63, 9);
    expect_failure("2^63", crafted, n, HP_E_CORRUPT, "more than the");
    n = craft(crafted, UINT64_MAX, 9);
    expect_failure("2^64-1", crafted, n, HP_E_CORRUPT, "more than the");
    free(bad);
    hp_buf_free(&blob);
    free(src);
}

/* ---- held records: app_only packs restore records whose length comes at
 * their end; past max_record they are streamed ---- */

/* An Android dump: one segment of app objects (HEAP_DUMP_INFO 'A', a root,
 * `n` byte[] of varied bytes and lengths), then HEAP_DUMP_END. */
static void app_dump(bb *b, int n)
{
    int i, k;
    memset(b, 0, sizeof *b);
    b->id = 4;
    bb_raw(b, "JAVA PROFILE 1.0.3", 19);
    bb_u4(b, 4);
    bb_u8(b, 0);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_SEGMENT);
    bb_u1(b, HP_SUB_HEAP_DUMP_INFO);
    bb_u4(b, 'A');
    bb_id(b, 0x50);
    bb_u1(b, HP_SUB_ROOT_UNKNOWN);
    bb_id(b, 0x1000);
    for (i = 0; i < n; i++) {
        unsigned count = 1000 + rng() % 9000;
        bb_u1(b, HP_SUB_PRIM_ARRAY_DUMP);
        bb_id(b, 0x1000 + 16 * (unsigned)i);
        bb_u4(b, 0);
        bb_u4(b, count);
        bb_u1(b, HP_T_BYTE);
        for (k = 0; k < (int)count; k++)
            bb_u1(b, (unsigned)(k * i / 7) & 0x3F);
    }
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_END);
    bb_rec_end(b);
}

static void test_held_records(void)
{
    hp_packer_options opts = { { 0, 1, 0 }, 1, HP_PACK_BLOCK_MIN, 0 };
    hp_convert_options conv = { 0, 1, 0, 0 };
    hp_converter *c = hp_converter_new(NULL, &conv);
    hp_buf blob, want;
    hp_sink to_want = hp_buf_sink(&want);
    hp_error err;
    int patch;
    bb dump;
    app_dump(&dump, 300); /* 1.6 MB in one segment, cut across many blocks: held */
    hp_buf_init(&want, NULL);
    CHECK(hp_converter_feed(c, dump.d, dump.len, &to_want, &err) == HP_OK);
    CHECK(hp_converter_finish(c, &to_want, &err) == HP_OK);
    hp_converter_free(c);
    CHECK(pack_mem(dump.d, dump.len, &opts, 0, &blob, &err) == HP_OK);
    for (patch = 0; patch <= 1; patch++) {
        hp_unpacker_options uopts = { 1, 0, 64 << 10, 0 };
        hp_unpacker *u = hp_unpacker_new(NULL, &uopts);
        mem_sink m = { 0 };
        hp_sink sink = { mem_write, &m, patch ? mem_patch : NULL };
        hp_buf heap_a, other_a, heap_b, other_b;
        size_t longest_a, longest_b;
        size_t at;
        hp_code rc = HP_OK;
        for (at = 0; rc == HP_OK && at < blob.len; at += 5000)
            rc = hp_unpacker_feed(u, blob.data + at, blob.len - at < 5000 ? blob.len - at : 5000, &sink, &err);
        if (rc == HP_OK)
            rc = hp_unpacker_finish(u, &sink, &err);
        show_error("held records", rc, &err);
        CHECK(rc == HP_OK);
        hp_unpacker_free(u);
        split_records(want.data, want.len, 31, &heap_a, &other_a, &longest_a);
        split_records(m.d, m.len, 31, &heap_b, &other_b, &longest_b);
        CHECK(longest_a > 1000000);
        if (patch) { /* streamed and its length patched: the very bytes */
            CHECK(m.patches == 1);
            CHECK(same_bytes("held, patched", m.d, m.len, want.data, want.len));
        } else { /* cut in records of at most the limit: the same sub-records */
            CHECK(longest_b <= 64 << 10);
            CHECK(same_bytes("held, cut", heap_b.data, heap_b.len, heap_a.data, heap_a.len));
            CHECK(same_bytes("held, cut", other_b.data, other_b.len, other_a.data, other_a.len));
        }
        hp_buf_free(&heap_a);
        hp_buf_free(&other_a);
        hp_buf_free(&heap_b);
        hp_buf_free(&other_b);
        free(m.d);
    }
    hp_buf_free(&blob);
    hp_buf_free(&want);
    free(dump.d);
}

/* ---- the ordered pool ---- */

typedef struct job {
    unsigned value, result;
} job;

static void run_job(void *arg)
{
    job *j = arg;
    struct timespec t = { 0, (long)(j->value % 7) * 100000 }; /* finish out of order */
    nanosleep(&t, NULL);
    j->result = j->value * 3 + 1;
}

static void test_jobs(void)
{
    unsigned workers;
    for (workers = 0; workers <= 4; workers++) {
        hp_jobs *pool = hp_jobs_new(NULL, workers, 5);
        job jobs[5];
        unsigned submitted = 0, collected = 0;
        CHECK(pool != NULL);
        while (collected < 200) {
            job *done;
            if (submitted < 200 && !hp_jobs_full(pool)) {
                job *j = &jobs[submitted % 5];
                j->value = submitted++;
                CHECK(hp_jobs_submit(pool, run_job, j) == 0);
                continue;
            }
            done = hp_jobs_collect(pool, 1);
            CHECK(done && done->result == collected * 3 + 1);
            collected++;
        }
        CHECK(hp_jobs_collect(pool, 1) == NULL && hp_jobs_in_flight(pool) == 0);
        hp_jobs_free(pool);
    }
}

/* ---- a dump cut short ---- */

/* Packs `len` bytes of `data` (keep everything) and restores them, byte for
 * byte; what the packer and the unpacker report unfinished. */
static void unfinished_both_ways(const uint8_t *data, size_t len, hp_unfinished *packed, hp_unfinished *restored)
{
    hp_packer_options opts = { { 0, 0, 0 }, 1, 0, 0 };
    hp_packer *p = hp_packer_new(NULL, &opts);
    hp_unpacker *u = hp_unpacker_new(NULL, NULL);
    hp_buf pk, out;
    hp_sink to_pack = hp_buf_sink(&pk), to_out = hp_buf_sink(&out);
    hp_error err;
    hp_buf_init(&pk, NULL);
    hp_buf_init(&out, NULL);
    memset(packed, 0xFF, sizeof *packed);
    memset(restored, 0xFF, sizeof *restored);
    CHECK(p && u);
    CHECK(hp_packer_feed(p, data, len, &to_pack, &err) == HP_OK && hp_packer_finish(p, &to_pack, &err) == HP_OK);
    hp_packer_unfinished(p, packed);
    CHECK(hp_unpacker_feed(u, pk.data, pk.len, &to_out, &err) == HP_OK &&
          hp_unpacker_finish(u, &to_out, &err) == HP_OK);
    hp_unpacker_unfinished(u, restored);
    CHECK(same_bytes("restored", data, len, out.data, out.len));
    hp_packer_free(p);
    hp_unpacker_free(u);
    hp_buf_free(&pk);
    hp_buf_free(&out);
}

static void check_unfinished(const hp_unfinished *u, uint32_t count, uint64_t offset, uint64_t end)
{
    CHECK_EQ_U64(u->count, count);
    if (count) {
        CHECK_EQ_U64(u->index, 0);
        CHECK_EQ_U64(u->offset, offset);
        CHECK_EQ_U64(u->end, end);
    }
}

/* A HotSpot dump without its HEAP_DUMP_END (one 14 MB segment: a record
 * whose length the pack gives up front), and a crafted one with small
 * segments (held by the decoder): a run that a HEAP_DUMP interrupts after a
 * STRING record, then a run the input ends.  The packer reports input
 * offsets, the unpacker restored ones: the same here. */
static void test_unfinished(void)
{
    hp_unfinished packed, restored;
    size_t len, at, first = 0, run_end, end;
    uint8_t *data = load_dump("hprof/mat__openjdk_jdk11_04_x64.hprof.gz", &len);
    bb b;
    CHECK(data && len > 9 && data[len - 9] == HP_TAG_HEAP_DUMP_END);
    if (data) {
        for (at = strlen((const char *)data) + 1 + 12; at + 9 <= len && !first; at += 9 + hp_be32(data + at + 5))
            if (data[at] == HP_TAG_HEAP_DUMP_SEGMENT)
                first = at;
        CHECK(first > 0);
        unfinished_both_ways(data, len, &packed, &restored);
        check_unfinished(&packed, 0, 0, 0);
        check_unfinished(&restored, 0, 0, 0);
        unfinished_both_ways(data, len - 9, &packed, &restored);
        check_unfinished(&packed, 1, first, len - 9);
        check_unfinished(&restored, 1, first, len - 9);
        free(data);
    }

    memset(&b, 0, sizeof b);
    b.id = 4;
    bb_raw(&b, "JAVA PROFILE 1.0.2", 19);
    bb_u4(&b, 4);
    bb_u8(&b, 0);
    first = b.len;
    for (at = 0; at < 2; at++) {
        bb_rec_begin(&b, HP_TAG_HEAP_DUMP_SEGMENT);
        bb_u1(&b, HP_SUB_ROOT_UNKNOWN);
        bb_id(&b, 0x1000 + at);
        bb_rec_end(&b);
    }
    run_end = b.len;
    bb_rec_begin(&b, HP_TAG_UTF8);
    bb_id(&b, 0x50);
    bb_raw(&b, "text", 4);
    bb_rec_end(&b);
    bb_rec_begin(&b, HP_TAG_HEAP_DUMP);
    bb_u1(&b, HP_SUB_ROOT_UNKNOWN);
    bb_id(&b, 0x2000);
    bb_rec_end(&b);
    bb_rec_begin(&b, HP_TAG_HEAP_DUMP_SEGMENT);
    bb_u1(&b, HP_SUB_ROOT_UNKNOWN);
    bb_id(&b, 0x3000);
    bb_rec_end(&b);
    end = b.len;
    unfinished_both_ways(b.d, end, &packed, &restored);
    check_unfinished(&packed, 2, first, run_end);
    check_unfinished(&restored, 2, first, run_end);
    bb_rec_begin(&b, HP_TAG_HEAP_DUMP_END); /* closes the last run: the first stays unfinished */
    bb_rec_end(&b);
    unfinished_both_ways(b.d, b.len, &packed, &restored);
    check_unfinished(&packed, 1, first, run_end);
    check_unfinished(&restored, 1, first, run_end);
    free(b.d);
}

int main(void)
{
    test_jobs();
    test_file_round_trip();
    test_round_trips();
    test_info();
    test_hostile();
    test_held_records();
    test_unfinished();
    return check_report("test_packer");
}
