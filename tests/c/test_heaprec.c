/* hp_heaprec: heap records written before their length is known.  The same
 * sub-records go through a record held whole, streamed with its length
 * patched, and cut for a sink that cannot patch; the first two must give
 * the very same bytes, the third valid records that hold exactly the same
 * sub-records, none longer than the limit unless one sub-record is. */
#include "testkit.h"
#include "hp_heaprec.h"
#include "hp_parser.h"

static uint32_t rng_state = 4242;
static unsigned rng(void) { return xorshift(&rng_state); }

/* Sub-record sizes: small ones, and now and then one above the limit. */
#define LIMIT ((size_t)64 << 10)
#define NSUBS 400

static size_t sizes[NSUBS];

/* Writes two records of the sub-records (bytes: the index, repeated) through
 * a fresh hp_heaprec into m; `batch` is the writer's capacity.  `grouped`:
 * runs of sub-records are announced in one call while hp_heaprec_room says
 * that changes nothing (as the pack decoder does). */
static void write_records(mem_sink *m, int patch, size_t batch, int drop_empty, int grouped)
{
    hp_sink sink = { mem_write, m, patch ? mem_patch : NULL };
    hp_writer w;
    hp_heaprec r;
    uint8_t piece[4096];
    int rec, i, first;
    memset(m, 0, sizeof *m);
    CHECK(hp_writer_init(&w, &hp_default_alloc, batch) == 0);
    w.sink = &sink;
    hp_heaprec_init(&r, NULL, LIMIT, drop_empty);
    for (rec = 0; rec < 2; rec++) {
        hp_heaprec_open(&r, HP_TAG_HEAP_DUMP_SEGMENT, 0x01020304u + (uint32_t)rec);
        for (first = 0; first < NSUBS; first = i) {
            uint64_t group = sizes[first], room = hp_heaprec_room(&r);
            for (i = first + 1; grouped && group <= room && i < NSUBS && sizes[i] <= room - group; i++)
                group += sizes[i];
            CHECK(hp_heaprec_sub(&r, group, &w) == 0);
            if (group <= room)
                CHECK_EQ_U64(hp_heaprec_room(&r), room - group);
            for (; first < i; first++) {
                size_t left = sizes[first];
                memset(piece, first, sizeof piece);
                while (left) {
                    size_t n = 1 + rng() % sizeof piece;
                    n = n < left ? n : left;
                    if (first % 5 == 0)
                        CHECK(hp_heaprec_zeros(&r, n, &w) == 0);
                    else
                        CHECK(hp_heaprec_put(&r, piece, n, &w) == 0);
                    left -= n;
                }
            }
        }
        CHECK(hp_heaprec_put(&r, piece, 1, &w) == -1); /* more than announced */
        CHECK(hp_heaprec_close(&r, &w) == 0);
        hp_heaprec_open(&r, HP_TAG_HEAP_DUMP, 7); /* an empty record */
        CHECK(hp_heaprec_close(&r, &w) == 0);
    }
    CHECK(hp_writer_flush(&w) == 0);
    hp_heaprec_free(&r);
    hp_writer_free(&w, &hp_default_alloc);
}

/* Walks the records of `m`: their count and bodies' bytes; each record's
 * body must be whole sub-records in order (checked by their fill byte). */
static void check_records(const mem_sink *m, int empty_kept, size_t *records, size_t *longest)
{
    const uint8_t *p = m->d, *end = p + m->len;
    int sub = 0, rec = 0;
    size_t left = 0;
    *records = *longest = 0;
    while (p < end) {
        uint32_t len;
        CHECK(end - p >= 9);
        if (end - p < 9)
            return;
        len = hp_be32(p + 5);
        CHECK(p[0] == HP_TAG_HEAP_DUMP_SEGMENT || p[0] == HP_TAG_HEAP_DUMP);
        CHECK((size_t)(end - p - 9) >= len);
        (*records)++;
        *longest = len > *longest ? len : *longest;
        if (p[0] == HP_TAG_HEAP_DUMP) {
            CHECK(len == 0 && empty_kept && sub == 0 && hp_be32(p + 1) == 7);
            p += 9;
            continue;
        }
        CHECK(hp_be32(p + 1) == 0x01020304u + (uint32_t)rec);
        p += 9;
        while (len) { /* whole sub-records only */
            if (left == 0) {
                CHECK(sub < NSUBS);
                left = sizes[sub];
            }
            CHECK(left <= len);
            CHECK(*p == (sub % 5 == 0 ? 0 : (uint8_t)sub) && p[left - 1] == *p);
            len -= (uint32_t)left;
            p += left;
            left = 0;
            if (++sub == NSUBS) {
                sub = 0;
                rec++;
            }
        }
    }
    CHECK(sub == 0);
}

static void test_heaprec(void)
{
    static const size_t batches[] = { 64, 4096, 1 << 20 };
    mem_sink held, patched, cut;
    size_t i, b, records, longest, body = 0;
    for (i = 0; i < NSUBS; i++) {
        sizes[i] = 1 + rng() % 2000;
        if (i % 97 == 13)
            sizes[i] = LIMIT + rng() % (3 * LIMIT); /* longer than the limit by itself */
        body += sizes[i];
    }
    CHECK(body > 4 * LIMIT);
    for (b = 0; b < sizeof batches / sizeof batches[0]; b++) {
        hp_heaprec big;
        int patch;
        /* a limit above the whole record: held, written as one */
        write_records(&held, 0, batches[b], 0, 0);
        hp_heaprec_init(&big, NULL, 0, 0);
        CHECK(big.limit == HP_HOLD_DEFAULT);
        hp_heaprec_free(&big);
        check_records(&held, 1, &records, &longest);
        CHECK(records >= 4);
        write_records(&patched, 1, batches[b], 0, 0);
        check_records(&patched, 1, &records, &longest);
        CHECK_EQ_U64(records, 4); /* streamed and patched: one record each */
        CHECK(patched.patches > 0 || batches[b] == (1 << 20));
        write_records(&cut, 0, batches[b], 1, 0);
        check_records(&cut, 0, &records, &longest);
        CHECK(records > 4); /* cut before the long sub-records */
        CHECK(longest <= 3 * LIMIT + LIMIT);
        for (patch = 0; patch < 2; patch++) { /* announcing runs at once changes no byte */
            mem_sink grouped;
            write_records(&grouped, patch, batches[b], !patch, 1);
            CHECK(same_bytes("grouped announcements", grouped.d, grouped.len, patch ? patched.d : cut.d,
                             patch ? patched.len : cut.len));
            free(grouped.d);
        }
        free(held.d);
        free(patched.d);
        free(cut.d);
    }
}

/* Writes one record of the sub-records (bytes: the index, repeated) into a
 * fresh m that can patch, holding at most `limit` bytes of it. */
static void write_one_record(mem_sink *m, size_t limit)
{
    hp_sink sink = { mem_write, m, mem_patch };
    hp_heaprec r;
    hp_writer w;
    size_t i;
    memset(m, 0, sizeof *m);
    CHECK(hp_writer_init(&w, &hp_default_alloc, 4096) == 0);
    w.sink = &sink;
    hp_heaprec_init(&r, NULL, limit, 0);
    hp_heaprec_open(&r, HP_TAG_HEAP_DUMP_SEGMENT, 1);
    for (i = 0; i < NSUBS; i++) {
        uint8_t fill[3000];
        memset(fill, (int)i, sizes[i]);
        CHECK(hp_heaprec_sub(&r, sizes[i], &w) == 0 && hp_heaprec_put(&r, fill, sizes[i], &w) == 0);
    }
    CHECK(hp_heaprec_close(&r, &w) == 0 && hp_writer_flush(&w) == 0);
    CHECK(hp_heaprec_sub(&r, (uint64_t)1 << 32, &w) == -2);
    hp_heaprec_free(&r);
    hp_writer_free(&w, &hp_default_alloc);
}

/* A held record (everything under the limit) and a patched one are the same bytes. */
static void test_patched_is_held(void)
{
    size_t i;
    mem_sink a, b;
    for (i = 0; i < NSUBS; i++)
        sizes[i] = 1 + rng() % 300; /* 60 KiB in all: under the limit */
    write_records(&a, 0, 4096, 0, 0);
    write_records(&b, 1, 4096, 0, 0);
    CHECK(same_bytes("held vs patched", a.d, a.len, b.d, b.len));
    CHECK(b.patches == 0);
    free(a.d);
    free(b.d);
    for (i = 0; i < NSUBS; i++)
        sizes[i] = 1 + rng() % 3000; /* 600 KiB: over it */
    write_one_record(&a, (size_t)1 << 30); /* the bytes a held record would have, whatever the limit */
    write_one_record(&b, LIMIT);
    CHECK(a.patches == 0 && b.patches == 1);
    CHECK(same_bytes("held vs patched, long", a.d, a.len, b.d, b.len));
    free(a.d);
    free(b.d);
}

/* A sink that takes `room` bytes, then refuses. */
typedef struct refusing {
    mem_sink kept;
    size_t room;
    int calls;
} refusing;

static int refusing_write(void *ctx, const uint8_t *data, size_t len)
{
    refusing *r = ctx;
    r->calls++;
    if (len > r->room)
        return -1;
    r->room -= len;
    return mem_write(&r->kept, data, len);
}

/* Once its sink refused, a writer refuses too, and hands it nothing more:
 * a filter that puts out what came before an error must neither repeat
 * bytes nor wait again on a sink that blocks. */
static void test_writer_stops_at_refusal(void)
{
    static const uint8_t big[(size_t)100 << 10];
    refusing r;
    hp_sink sink = { refusing_write, &r, NULL };
    hp_writer w;
    int calls;
    memset(&r, 0, sizeof r);
    r.room = 1000;
    CHECK(hp_writer_init(&w, &hp_default_alloc, 4096) == 0);
    w.sink = &sink;
    CHECK(hp_writer_put(&w, "head", 4) == 0);
    CHECK(hp_writer_put(&w, big, sizeof big) == -1); /* the head goes out, the big piece is refused */
    CHECK_EQ_U64(r.kept.len, 4);
    calls = r.calls;
    CHECK(hp_writer_put(&w, "more", 4) == 0); /* batched... */
    CHECK(hp_writer_flush(&w) == -1);          /* ...and never sent */
    CHECK(hp_writer_put(&w, big, sizeof big) == -1);
    CHECK(hp_writer_zeros(&w, 10000) == -1);
    CHECK(r.calls == calls && r.kept.len == 4);
    hp_writer_free(&w, &hp_default_alloc);
    free(r.kept.d);
}

int main(void)
{
    test_writer_stops_at_refusal();
    test_heaprec();
    test_patched_is_held();
    return check_report("test_heaprec");
}
