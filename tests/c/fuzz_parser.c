/* libFuzzer harness for the reader (hp_parser with HP_PARSE_SUBRECORDS, and
 * hp_stats over it).
 *
 * Input: two control bytes, then the HPROF bytes.  The control bytes choose
 * how the second parse is chunked:
 *   c0 & 0x0F  log2 of the largest chunk (1 .. 32768 bytes)
 *   c0 & 0x40  fixed chunks of 1 + c1 % max bytes, else pseudo-random sizes
 *   c0 & 0x80  all data non-final, then an empty final feed
 *   c1         the seed of the sizes
 * The dump is parsed in one piece and in those chunks (each chunk its own
 * exact-size allocation); both must give the same outcome: the same error
 * code, offset, tag and unit, and the same structural events (kind, offset,
 * tag, every sub-record field, heap id).  Event bytes must continue the input
 * exactly; errors must be sticky.  Then hp_stats runs over it and its figures
 * are checked against the parse.  Any mismatch aborts (a crash for libFuzzer).
 *
 * Built with -DHP_FUZZ_SEEDGEN (and a C compiler, no libFuzzer) this file is
 * instead the seed generator the `fuzz` target of the Makefile runs:
 *     seedgen OUTDIR DATADIR MAXLEN
 * writes small synthetic dumps and the first bytes of the dumps in DATADIR
 * (and a slice at their first heap record), each behind control bytes. */
#ifdef HP_FUZZ_SEEDGEN
#define _POSIX_C_SOURCE 200809L /* opendir */
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp_common.h"
#include "hp_header.h"
#include "hp_parser.h"
#include "hp_stats.h"
#include "hp_subrecord.h"
#include "testkit.h"

#define CONTROL 2

typedef struct outcome {
    hp_code rc;
    hp_error err;
    uint64_t events;   /* structural events: HEADER RECORD SUBRECORD RECORD_END END */
    uint64_t digest;   /* of their fields */
    uint64_t delivered;
    uint64_t records, subrecords;
    int ended;
} outcome;

static void die(const char *what, const outcome *a, const outcome *b)
{
    fprintf(stderr, "fuzz_parser: %s\n", what);
    if (a)
        fprintf(stderr, "  one piece: rc %d offset %llu tag %d sub %d events %llu\n", (int)a->rc,
                (unsigned long long)a->err.offset, a->err.tag, a->err.is_sub, (unsigned long long)a->events);
    if (b)
        fprintf(stderr, "  chunked:   rc %d offset %llu tag %d sub %d events %llu\n", (int)b->rc,
                (unsigned long long)b->err.offset, b->err.tag, b->err.is_sub, (unsigned long long)b->events);
    abort();
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}


/* Parses buf[0..len): in one piece when c0 < 0, else chunked as the control
 * bytes say. */
static void parse(const uint8_t *buf, size_t len, int flags, int c0, int c1, outcome *o)
{
    hp_parser *p = hp_parser_new(NULL, flags);
    size_t pos = 0, max = c0 < 0 ? 0 : (size_t)1 << (c0 & 15), steps = 0;
    uint32_t seed = (uint32_t)(c1 + 1) * 2654435761u;
    uint8_t *chunk = NULL;
    int last = 0;
    hp_event ev;
    hp_error err;

    memset(o, 0, sizeof *o);
    if (!p)
        die("no memory for the parser", NULL, NULL);
    if (c0 < 0) {
        hp_parser_feed(p, buf, len, 1);
        last = 1;
    }
    for (;;) {
        hp_code rc;
        if (++steps > 4 * (uint64_t)len + 64)
            die("no progress", o, NULL);
        if (!last && (pos < len || (c0 & 0x80))) {
            /* Feed the next chunk, the first time and after NEED_INPUT. */
            size_t n = (c0 & 0x40) ? 1 + (size_t)c1 % max : 1 + xorshift(&seed) % max;
            if (n > len - pos)
                n = len - pos;
            free(chunk);
            chunk = n ? malloc(n) : NULL;
            if (n && !chunk)
                die("no memory", NULL, NULL);
            if (n)
                memcpy(chunk, buf + pos, n);
            pos += n;
            last = pos == len && (!(c0 & 0x80) || n == 0);
            hp_parser_feed(p, chunk, n, last);
        } else if (!last) {
            hp_parser_feed(p, NULL, 0, 1);
            last = 1;
        }
        for (;;) {
            rc = hp_parser_next(p, &ev, &err);
            if (rc != HP_OK || ev.kind == HP_EV_NEED_INPUT || ev.kind == HP_EV_END)
                break;
            if (++steps > 4 * (uint64_t)len + 64)
                die("no progress", o, NULL);
            if (ev.kind != HP_EV_RECORD_END) {
                if (ev.offset != o->delivered || ev.offset + ev.len > len ||
                    (ev.len && memcmp(ev.data, buf + ev.offset, ev.len) != 0))
                    die("event bytes do not continue the input", o, NULL);
                o->delivered += ev.len;
            }
            if (ev.kind == HP_EV_DATA || ev.kind == HP_EV_PAYLOAD)
                continue;
            o->events++;
            o->digest = mix(o->digest, (uint64_t)ev.kind << 56 ^ ev.offset);
            o->digest = mix(o->digest, ev.heap_id);
            if (ev.kind == HP_EV_RECORD) {
                o->records++;
                o->digest = mix(o->digest, (uint64_t)ev.rec->tag << 32 ^ ev.rec->length);
            } else if (ev.kind == HP_EV_SUBRECORD) {
                const hp_subrecord *s = ev.sub;
                o->subrecords++;
                if (s->offset != ev.offset || ev.len < s->head_len || ev.len > s->length ||
                    (s->length <= HP_WHOLE_MAX && ev.len != s->length))
                    die("sub-record event does not match its sub-record", o, NULL);
                o->digest = mix(o->digest, s->length);
                o->digest = mix(o->digest, (uint64_t)s->head_len << 16 ^ (uint64_t)s->tag << 8 ^ s->elem_type);
                o->digest = mix(o->digest, s->id);
                o->digest = mix(o->digest, s->class_id);
                o->digest = mix(o->digest, s->ref);
                o->digest = mix(o->digest, (uint64_t)s->serial << 32 ^ s->aux);
                o->digest = mix(o->digest, (uint64_t)s->count << 32 ^ s->payload_len);
            }
        }
        if (rc != HP_OK) {
            hp_error again;
            o->rc = rc;
            o->err = err;
            if (hp_parser_next(p, &ev, &again) != rc || again.offset != err.offset || again.tag != err.tag)
                die("the error is not sticky", o, NULL);
            if (rc == HP_E_TRUNCATED && !(err.need > err.have))
                die("a truncation that needs no more bytes", o, NULL);
            break;
        }
        if (ev.kind == HP_EV_END) {
            o->events++;
            o->ended = 1;
            if (o->delivered != len || hp_parser_offset(p) != len)
                die("END before the end of the input", o, NULL);
            break;
        }
        if (last)
            die("NEED_INPUT after the last chunk", o, NULL);
    }
    free(chunk);
    hp_parser_free(p);
}

/* hp_stats over the dump in one piece, checked against the parse. */
static void stats(const uint8_t *buf, size_t len, const outcome *a)
{
    hp_stats *s = hp_stats_new(NULL);
    hp_parser *p = hp_parser_new(NULL, HP_PARSE_SUBRECORDS);
    hp_error err;
    int done = 0, t;
    hp_code rc;
    uint64_t records = 0, subrecords = 0, selected = 0, objects, instances = 0;
    uint32_t d;
    size_t i, rows;
    const hp_tally *rt, *st;

    if (!s || !p)
        die("no memory for stats", NULL, NULL);
    hp_parser_feed(p, buf, len, 1);
    rc = hp_stats_run(s, p, &done, &err);
    if (rc != a->rc || (rc == HP_OK && !done) || (rc != HP_OK && err.offset != a->err.offset))
        die("hp_stats_run disagrees with the parser", a, NULL);
    rt = hp_stats_records(s);
    st = hp_stats_subrecords(s);
    for (t = 0; t < 256; t++) {
        records += rt[t].count;
        selected += st[t].count;
    }
    for (d = 0; d < hp_stats_heap_dumps(s); d++)
        subrecords += hp_stats_heap_dump(s, d)->subrecords;
    if (records != a->records || subrecords != a->subrecords ||
        (hp_stats_heap_dumps(s) ? selected != hp_stats_heap_dump(s, 0)->subrecords : selected != 0))
        die("stats tallies differ from the parser's counts", a, NULL);
    objects = st[HP_SUB_INSTANCE_DUMP].count + st[HP_SUB_OBJ_ARRAY_DUMP].count + st[HP_SUB_PRIM_ARRAY_DUMP].count +
              st[HP_SUB_PRIM_ARRAY_NODATA].count;
    rows = hp_stats_row_count(s);
    for (i = 0; i < rows; i++) {
        hp_class_row row;
        const uint8_t *name;
        size_t name_len;
        hp_stats_row(s, i, &row);
        if (row.instances == 0)
            die("an empty histogram row", a, NULL);
        instances += row.instances;
        if (hp_stats_class_name(s, buf, len, row.class_id, &name, &name_len) &&
            (name < buf || name_len > len || name + name_len > buf + len))
            die("a class name outside the buffer", a, NULL);
    }
    if (instances != objects)
        die("histogram rows do not add up to the object sub-records", a, NULL);
    for (i = 0; i < hp_stats_heap_count(s); i++) {
        const uint8_t *name;
        size_t name_len;
        uint32_t heap_id;
        if (hp_stats_heap(s, i, buf, len, &heap_id, &name, &name_len) &&
            (name < buf || name_len > len || name + name_len > buf + len))
            die("a heap name outside the buffer", a, NULL);
    }
    if (rc == HP_OK) {
        /* The size guess reads objects back from the buffer where the pass saw them. */
        hp_size_model m;
        hp_stats_guess_model(s, buf, len, &m);
        if (m.oop_size != 4 && m.oop_size != 8)
            die("a reference size neither 4 nor 8", a, NULL);
    }
    hp_stats_free(s);
    hp_parser_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *buf;
    size_t len;
    outcome a, b, c;
    if (size < CONTROL)
        return 0;
    buf = data + CONTROL;
    len = size - CONTROL;

    parse(buf, len, HP_PARSE_SUBRECORDS, -1, 0, &a);
    parse(buf, len, HP_PARSE_SUBRECORDS, data[0], data[1], &b);
    if (a.rc != b.rc)
        die("one piece and chunks end differently", &a, &b);
    if (a.rc != HP_OK && (a.err.offset != b.err.offset || a.err.tag != b.err.tag || a.err.is_sub != b.err.is_sub ||
                          ((a.rc == HP_E_TRUNCATED || a.rc == HP_E_OVERRUN) && a.err.have != b.err.have)))
        die("one piece and chunks fail at different places", &a, &b);
    if (a.events != b.events || a.digest != b.digest)
        die("one piece and chunks give different events", &a, &b);
    stats(buf, len, &a);

    /* Records only: every dump the sub-record parse accepts is accepted. */
    parse(buf, len, 0, -1, 0, &c);
    if (a.rc == HP_OK && (c.rc != HP_OK || c.records != a.records))
        die("the records-only parse disagrees", &a, &c);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Seed generator                                                       */

#ifdef HP_FUZZ_SEEDGEN
#include <dirent.h>

#include "seedgen.h"


/* A small dump with every record and sub-record kind. */
static void synthetic(bb *b, int id_size, int version)
{
    static const int roots[] = { 0xFF, 0x05, 0x07, 0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x90 };
    uint8_t h[HP_HEADER_MAX];
    int i, t;
    memset(b, 0, sizeof *b);
    b->id = id_size;
    bb_raw(b, h, hp_header_write(h, version, id_size, 0x18BCFE56800ULL));
    bb_rec_begin(b, HP_TAG_UTF8);
    bb_id(b, 0x10);
    bb_raw(b, "java/lang/String", 16);
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_LOAD_CLASS);
    bb_u4(b, 1);
    bb_id(b, 0x100);
    bb_u4(b, 0);
    bb_id(b, 0x10);
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_FRAME);
    for (i = 0; i < 4; i++)
        bb_id(b, 0x10);
    bb_u4(b, 1);
    bb_u4(b, (uint32_t)-1);
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_TRACE);
    bb_u4(b, 1);
    bb_u4(b, 1);
    bb_u4(b, 1);
    bb_id(b, 0x10);
    bb_rec_end(b);
    bb_rec_begin(b, 0x99);
    bb_u4(b, 0x0C0C0C0C);
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_SEGMENT);
    for (i = 0; i < (int)(sizeof roots / sizeof roots[0]); i++) {
        bb_u1(b, (unsigned)roots[i]);
        bb_id(b, 0x200 + (uint64_t)i);
    }
    bb_u1(b, 0x01), bb_id(b, 0x210), bb_id(b, 0x211);
    bb_u1(b, 0x02), bb_id(b, 0x212), bb_u4(b, 1), bb_u4(b, (uint32_t)-1);
    bb_u1(b, 0x03), bb_id(b, 0x213), bb_u4(b, 1), bb_u4(b, 2);
    bb_u1(b, 0x04), bb_id(b, 0x214), bb_u4(b, 1);
    bb_u1(b, 0x06), bb_id(b, 0x216), bb_u4(b, 1);
    bb_u1(b, 0x08), bb_id(b, 0x218), bb_u4(b, 1), bb_u4(b, 1);
    bb_u1(b, 0x8E), bb_id(b, 0x21E), bb_u4(b, 1), bb_u4(b, (uint32_t)-1);
    bb_u1(b, 0xFE), bb_u4(b, 0x5A), bb_id(b, 0x10);
    /* CLASS_DUMP with one entry of each type in each table. */
    bb_u1(b, 0x20);
    bb_id(b, 0x100);
    bb_u4(b, 1);
    for (i = 0; i < 6; i++)
        bb_id(b, i == 0 ? 0x101 : 0);
    bb_u4(b, 24);
    bb_u2(b, 9);
    for (t = 2; t <= 11; t++)
        if (t != 3) {
            bb_u2(b, (unsigned)t);
            bb_u1(b, (unsigned)t);
            for (i = 0; i < hp_type_size(t, id_size); i++)
                bb_u1(b, 0xA0 + (unsigned)i);
        }
    bb_u2(b, 9);
    for (t = 2; t <= 11; t++)
        if (t != 3) {
            bb_id(b, 0x10);
            bb_u1(b, (unsigned)t);
            for (i = 0; i < hp_type_size(t, id_size); i++)
                bb_u1(b, 0xB0 + (unsigned)i);
        }
    bb_u2(b, 9);
    for (t = 2; t <= 11; t++)
        if (t != 3) {
            bb_id(b, 0x10);
            bb_u1(b, (unsigned)t);
        }
    bb_u1(b, 0x21), bb_id(b, 0x300), bb_u4(b, 1), bb_id(b, 0x100), bb_u4(b, 6), bb_u4(b, 0x11223344), bb_u2(b, 0x5566);
    bb_u1(b, 0x22), bb_id(b, 0x400), bb_u4(b, 1), bb_u4(b, 2), bb_id(b, 0x102), bb_id(b, 0x300), bb_id(b, 0);
    for (t = 4; t <= 11; t++) {
        bb_u1(b, 0x23), bb_id(b, 0x500 + (uint64_t)t), bb_u4(b, 1), bb_u4(b, 2), bb_u1(b, (unsigned)t);
        for (i = 0; i < 2 * hp_type_size(t, id_size); i++)
            bb_u1(b, (unsigned)i);
    }
    bb_u1(b, 0xC3), bb_id(b, 0x600), bb_u4(b, 1), bb_u4(b, 1000), bb_u1(b, 10);
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP);
    bb_u1(b, 0xFE), bb_u4(b, 0x41), bb_id(b, 0x10);
    bb_u1(b, 0x21), bb_id(b, 0x301), bb_u4(b, 1), bb_id(b, 0x100), bb_u4(b, 0);
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_END);
    bb_rec_end(b);
}

static int write_seed(const char *dir, const char *name, int c0, int c1, const uint8_t *data, size_t len)
{
    char path[4096];
    FILE *f;
    uint8_t ctl[CONTROL];
    ctl[0] = (uint8_t)c0;
    ctl[1] = (uint8_t)c1;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (!f || fwrite(ctl, 1, CONTROL, f) != CONTROL || (len && fwrite(data, 1, len, f) != len)) {
        fprintf(stderr, "seedgen: cannot write %s\n", path);
        if (f)
            fclose(f);
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *out, *data_dir;
    size_t max, n_seeds = 0;
    DIR *d;
    struct dirent *de;
    int idsz, v, k = 0;

    if (seedgen_args(argc, argv, &out, &data_dir, &max) != 0 || max <= CONTROL)
        return 2;
    max -= CONTROL;

    /* Synthetic dumps, each whole and cut short, under a few chunkings. */
    for (idsz = 4; idsz <= 8; idsz += 4)
        for (v = 1; v <= 3; v += 2) {
            bb b;
            char name[64];
            synthetic(&b, idsz, v);
            snprintf(name, sizeof name, "synthetic-id%d-v%d", idsz, v);
            n_seeds += write_seed(out, name, 0x03 + k, 0x11 * k, b.d, b.len) == 0;
            snprintf(name, sizeof name, "synthetic-id%d-v%d-bytes", idsz, v);
            n_seeds += write_seed(out, name, 0x40, 0, b.d, b.len) == 0; /* one byte at a time */
            snprintf(name, sizeof name, "synthetic-id%d-v%d-cut", idsz, v);
            n_seeds += write_seed(out, name, 0x85, 7, b.d, b.len - 11) == 0;
            free(b.d);
            k++;
        }
    {
        static const uint8_t tiny[] = "JAVA PROFILE 1.0.2\0\0\0\0\x04\0\0\0\0\0\0\0\0";
        n_seeds += write_seed(out, "header-only", 0x01, 0, tiny, sizeof tiny - 1) == 0;
    }

    /* The shared dumps: their first bytes, and a slice from their first heap
     * record on, both of which parse until they run out. */
    d = opendir(data_dir);
    if (!d)
        fprintf(stderr, "seedgen: no data folder %s; synthetic seeds only\n", data_dir);
    while (d && (de = readdir(d)) != NULL) {
        char path[4096], name[300];
        size_t len = 0, hlen = 0;
        uint8_t *buf;
        uint64_t heap;
        if (!seedgen_is_dump(de->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", data_dir, de->d_name);
        buf = seedgen_read_head(path, 8u << 20, &len);
        if (!buf)
            continue;
        snprintf(name, sizeof name, "head-%s", de->d_name);
        n_seeds += write_seed(out, name, 0x0C + (k % 4), 0x2B * k, buf, len < max ? len : max) == 0;
        heap = seedgen_first_heap_record(buf, len, &hlen);
        if (heap > hlen && hlen) {
            /* The header, then the heap record and what follows. */
            size_t take = len - (size_t)heap < max - hlen ? len - (size_t)heap : max - hlen;
            uint8_t *slice = malloc(hlen + take);
            if (slice) {
                memcpy(slice, buf, hlen);
                memcpy(slice + hlen, buf + heap, take);
                snprintf(name, sizeof name, "heap-%s", de->d_name);
                n_seeds += write_seed(out, name, 0x08 + (k % 8), 0x35 * k, slice, hlen + take) == 0;
                free(slice);
            }
        }
        free(buf);
        k++;
    }
    if (d)
        closedir(d);
    printf("seedgen: %zu seeds in %s\n", n_seeds, out);
    return n_seeds ? 0 : 1;
}
#endif
