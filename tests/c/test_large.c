/* Inputs over 4 GiB: a synthetic Android dump of about 5 GiB, generated on
 * the fly and fed in 1 MiB chunks (nothing that large is ever in memory),
 * through the parser, the statistics, the converter, the Tailor encoder and
 * a pack round trip.
 * Offsets past 4 GiB must come out exact: every size is 64-bit. */
#include "check.h"
#include "hp_convert.h"
#include "hp_pack.h"
#include "hp_parser.h"
#include "hp_stats.h"
#include "hp_tailor.h"

#include <zlib.h>

#define CHUNK ((size_t)1 << 20)
#define SEGMENTS 40
#define ARRAY_BYTES ((uint32_t)128 << 20) /* one 128 MiB byte[] per segment */

/* The dump, as a sequence of byte ranges produced on demand. */
typedef struct {
    uint8_t head[64];  /* header, or a segment's record head + sub-record heads */
    size_t head_len, head_pos;
    uint64_t zeros_left; /* array payload still to produce */
    int segment;         /* next segment to produce; SEGMENTS: the end record */
    int done;
    uint64_t total;
} gen;

static void put32(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v; }

static void next_unit(gen *g)
{
    uint8_t *h = g->head;
    g->head_pos = 0;
    if (g->segment < SEGMENTS) {
        /* 0x1C record: HEAP_DUMP_INFO 'A', then a PRIM_ARRAY_DUMP of bytes. */
        uint32_t body = 9 + (1 + 4 + 4 + 4 + 1) + ARRAY_BYTES;
        h[0] = 0x1C; put32(h + 1, 0); put32(h + 5, body);
        h[9] = 0xFE; put32(h + 10, 0x41); put32(h + 14, 0x400000);
        h[18] = 0x23; put32(h + 19, 0x10000 + (uint32_t)g->segment); put32(h + 23, 0); put32(h + 27, ARRAY_BYTES);
        h[31] = 8;
        g->head_len = 32;
        g->zeros_left = ARRAY_BYTES;
        g->segment++;
    } else if (g->segment == SEGMENTS) {
        h[0] = 0x2C; put32(h + 1, 0); put32(h + 5, 0);
        g->head_len = 9;
        g->zeros_left = 0;
        g->segment++;
    } else {
        g->done = 1;
    }
}

static void gen_init(gen *g)
{
    static const char magic[] = "JAVA PROFILE 1.0.3";
    memset(g, 0, sizeof *g);
    memcpy(g->head, magic, sizeof magic); /* with its NUL */
    put32(g->head + 19, 4);
    g->head_len = 31;
    /* one STRING: the heap name the HEAP_DUMP_INFO records point at */
    g->head[31] = 0x01; put32(g->head + 32, 0); put32(g->head + 36, 7);
    put32(g->head + 40, 0x400000); memcpy(g->head + 44, "app", 3);
    g->head_len = 47;
}

/* Fills buf with the next bytes of the dump; returns how many (0 at the end). */
static size_t gen_read(gen *g, uint8_t *buf, size_t cap)
{
    size_t n = 0;
    while (n < cap && !g->done) {
        if (g->head_pos < g->head_len) {
            size_t k = g->head_len - g->head_pos < cap - n ? g->head_len - g->head_pos : cap - n;
            memcpy(buf + n, g->head + g->head_pos, k);
            g->head_pos += k;
            n += k;
        } else if (g->zeros_left) {
            size_t k = g->zeros_left < cap - n ? (size_t)g->zeros_left : cap - n;
            memset(buf + n, 0x5A, k);
            g->zeros_left -= k;
            n += k;
        } else {
            next_unit(g);
        }
    }
    g->total += n;
    return n;
}

static int count_sink(void *ctx, const uint8_t *data, size_t len)
{
    (void)data;
    *(uint64_t *)ctx += len;
    return 0;
}

static void test_parser_and_stats(uint8_t *buf)
{
    gen g;
    hp_parser *p = hp_parser_new(NULL, HP_PARSE_SUBRECORDS);
    hp_stats *s = hp_stats_new(NULL);
    uint64_t last_record = 0, last_array = 0, payload = 0;
    int records = 0, arrays = 0, done = 0;
    hp_code rc = HP_OK;
    hp_error err;
    gen_init(&g);
    while (!done) {
        size_t n = gen_read(&g, buf, CHUNK);
        hp_event ev;
        hp_parser_feed(p, buf, n, n == 0);
        for (;;) {
            rc = hp_parser_next(p, &ev, &err);
            CHECK(rc == HP_OK);
            if (rc != HP_OK || ev.kind == HP_EV_NEED_INPUT)
                break;
            if (ev.kind == HP_EV_END) {
                done = 1;
                break;
            }
            if (ev.kind == HP_EV_HEADER)
                hp_stats_set_header(s, hp_parser_header(p));
            else
                CHECK(hp_stats_add(s, &ev, 4, &err) == HP_OK);
            if (ev.kind == HP_EV_RECORD) {
                records++;
                last_record = ev.rec->offset;
            } else if (ev.kind == HP_EV_SUBRECORD && ev.sub->tag == HP_SUB_PRIM_ARRAY_DUMP) {
                arrays++;
                last_array = ev.sub->offset;
                payload += ev.len - ev.sub->head_len;
            } else if (ev.kind == HP_EV_PAYLOAD) {
                payload += ev.len;
            }
        }
        if (rc != HP_OK)
            break;
    }
    CHECK(done);
    CHECK_EQ_U64(records, 1 + SEGMENTS + 1);
    CHECK_EQ_U64(arrays, SEGMENTS);
    CHECK(g.total > ((uint64_t)5 << 30));
    CHECK_EQ_U64(payload, (uint64_t)SEGMENTS * ARRAY_BYTES);
    CHECK_EQ_U64(last_record, g.total - 9); /* HEAP_DUMP_END, past 4 GiB */
    CHECK_EQ_U64(last_array, g.total - 9 - ARRAY_BYTES - 14);
    CHECK_EQ_U64(hp_parser_offset(p), g.total);
    CHECK_EQ_U64(hp_stats_records(s)[HP_TAG_HEAP_DUMP_SEGMENT].bytes, (uint64_t)SEGMENTS * (9 + 9 + 14 + ARRAY_BYTES));
    CHECK_EQ_U64(hp_stats_subrecords(s)[HP_SUB_PRIM_ARRAY_DUMP].bytes, (uint64_t)SEGMENTS * (14 + ARRAY_BYTES));
    hp_stats_free(s);
    hp_parser_free(p);
}

static void test_filters(uint8_t *buf)
{
    hp_convert_options copts = { 1, 0, 0, 0 };
    hp_converter *c = hp_converter_new(NULL, &copts);
    hp_tailor_encoder *e = hp_tailor_encoder_new(NULL, NULL);
    uint64_t conv_out = 0, mini_out = 0;
    hp_sink conv_sink = { count_sink, &conv_out, NULL }, mini_sink = { count_sink, &mini_out, NULL };
    hp_error err;
    gen g;
    size_t n;
    gen_init(&g);
    while ((n = gen_read(&g, buf, CHUNK)) > 0) {
        CHECK(hp_converter_feed(c, buf, n, &conv_sink, &err) == HP_OK);
        CHECK(hp_tailor_encoder_feed(e, buf, n, &mini_sink, &err) == HP_OK);
    }
    CHECK(hp_converter_finish(c, &conv_sink, &err) == HP_OK);
    CHECK(hp_tailor_encoder_finish(e, &mini_sink, &err) == HP_OK);
    /* The converter drops the 9-byte HEAP_DUMP_INFO of each segment. */
    CHECK_EQ_U64(conv_out, g.total - (uint64_t)SEGMENTS * 9);
    /* The mini keeps no byte[] contents: under a kilobyte in all. */
    CHECK(mini_out < 2000);
    CHECK_EQ_U64(hp_tailor_encoder_bytes_in(e), g.total);
    hp_converter_free(c);
    hp_tailor_encoder_free(e);
}

/* What came out of a decoder: its length and CRC-32. */
typedef struct {
    uint64_t len;
    uLong crc;
} digest;

static int digest_sink(void *ctx, const uint8_t *data, size_t len)
{
    digest *d = ctx;
    d->crc = crc32(d->crc, data, (uInt)len);
    d->len += len;
    return 0;
}

typedef struct {
    hp_pack_decoder *dec;
    hp_sink sink;
    uint64_t blocks;
} relay;

/* Each block the encoder cuts goes straight into the decoder. */
static int decode_block(void *ctx, const hp_pack_block *b)
{
    relay *r = ctx;
    hp_error err;
    r->blocks++;
    return hp_pack_decoder_block(r->dec, b->data, b->len, b->out_len, &r->sink, &err) == HP_OK ? 0 : -1;
}

/* keep-all: the 5 GiB come back byte for byte (same length and CRC-32). */
static void test_pack_round_trip(uint8_t *buf)
{
    hp_pack_encoder *e = hp_pack_encoder_new(NULL, NULL, 0);
    digest in = { 0, crc32(0, NULL, 0) }, out = { 0, crc32(0, NULL, 0) };
    relay r = { NULL, { digest_sink, &out, NULL }, 0 };
    hp_header header = { 3, 4, 0, 0, "" };
    hp_error err;
    gen g;
    size_t n;
    r.dec = hp_pack_decoder_new(NULL, &header, NULL);
    gen_init(&g);
    while ((n = gen_read(&g, buf, CHUNK)) > 0) {
        in.crc = crc32(in.crc, buf, (uInt)n);
        in.len += n;
        CHECK(hp_pack_encoder_feed(e, buf, n, decode_block, &r, &err) == HP_OK);
    }
    CHECK(hp_pack_encoder_finish(e, decode_block, &r, &err) == HP_OK);
    CHECK(hp_pack_decoder_finish(r.dec, &r.sink, &err) == HP_OK);
    CHECK(r.blocks > 1000);
    CHECK_EQ_U64(hp_pack_encoder_bytes_in(e), g.total);
    CHECK_EQ_U64(hp_pack_encoder_bytes_out(e), g.total);
    CHECK_EQ_U64(out.len, in.len);
    CHECK(out.crc == in.crc);
    hp_pack_encoder_free(e);
    hp_pack_decoder_free(r.dec);
}

int main(void)
{
    uint8_t *buf = malloc(CHUNK);
    test_parser_and_stats(buf);
    test_filters(buf);
    test_pack_round_trip(buf);
    free(buf);
    return check_report("test_large");
}
