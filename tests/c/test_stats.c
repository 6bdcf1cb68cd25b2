/* Tests of the statistics accumulator and the id map.
 *
 *  - hp_idmap: insert and look-up, key 0, growth, allocation failure;
 *  - hp_stats on a small synthetic dump whose histogram is known exactly;
 *  - hp_stats over every dump of the shared data folder: tallies equal the
 *    parser's own counts and INVENTORY.json, record bytes add up to the file
 *    size minus the header, histogram rows add up to the object counts and
 *    agree with an independent count, class names resolve; the same figures
 *    whether the dump is fed in one piece or in chunks. */
#include "testkit.h"

#include <stdint.h>
#include <zlib.h>

#include "hp_common.h"
#include "hp_idmap.h"
#include "hp_parser.h"
#include "hp_stats.h"



/* An allocator that fails after a budget of calls. */
static long fail_budget = -1;
static void *fail_malloc(size_t n)
{
    if (fail_budget == 0)
        return NULL;
    if (fail_budget > 0)
        fail_budget--;
    return malloc(n);
}
static void *fail_realloc(void *p, size_t n)
{
    if (fail_budget == 0)
        return NULL;
    if (fail_budget > 0)
        fail_budget--;
    return realloc(p, n);
}
static const hp_alloc fail_alloc = { fail_malloc, fail_realloc, free };

/* ------------------------------------------------------------------ */
/* hp_idmap                                                             */

static void test_idmap(void)
{
    hp_idmap m;
    uint32_t *v;
    int ins;
    size_t i, n = 200000, bad = 0;

    hp_idmap_init(&m, NULL);
    CHECK(hp_idmap_get(&m, 0) == NULL);
    CHECK(hp_idmap_get(&m, 42) == NULL);

    /* Key 0 is legal (a null class loader, a thread object of 0). */
    v = hp_idmap_put(&m, 0, 7, &ins);
    CHECK(v != NULL && ins == 1 && *v == 7);
    v = hp_idmap_put(&m, 0, 99, &ins);
    CHECK(v != NULL && ins == 0 && *v == 7);
    *v = 8;
    CHECK(hp_idmap_get(&m, 0) != NULL && *hp_idmap_get(&m, 0) == 8);
    CHECK(hp_idmap_get(&m, 1) == NULL);

    /* Many keys shaped like real ids: aligned addresses with high bits,
     * serial numbers, and values that collide in the low bits. */
    for (i = 1; i <= n; i++) {
        uint64_t k = i % 3 == 0 ? 0xFFFF800000000000ULL + i * 8 : i % 3 == 1 ? i : (uint64_t)i << 32;
        v = hp_idmap_put(&m, k, (uint32_t)i, &ins);
        if (!v || !ins || *v != (uint32_t)i)
            bad++;
    }
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(m.count, n); /* key 0 is kept aside */
    CHECK(m.cap >= 2 * m.count && (m.cap & (m.cap - 1)) == 0);
    for (i = 1; i <= n; i++) {
        uint64_t k = i % 3 == 0 ? 0xFFFF800000000000ULL + i * 8 : i % 3 == 1 ? i : (uint64_t)i << 32;
        v = hp_idmap_get(&m, k);
        if (!v || *v != (uint32_t)i)
            bad++;
        v = hp_idmap_put(&m, k, 0, &ins);
        if (!v || ins || *v != (uint32_t)i)
            bad++;
    }
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(m.count, n);
    CHECK(hp_idmap_get(&m, 0xFFFF800000000000ULL + 1) == NULL);
    CHECK(hp_idmap_get(&m, (uint64_t)(n + 1) << 32) == NULL);
    CHECK(*hp_idmap_get(&m, 0) == 8);
    hp_idmap_clear(&m);
    CHECK(hp_idmap_get(&m, 1) == NULL && hp_idmap_get(&m, 0) == NULL && m.count == 0);
    /* Reusable after clear. */
    v = hp_idmap_put(&m, 5, 55, &ins);
    CHECK(v && ins && *hp_idmap_get(&m, 5) == 55);
    hp_idmap_clear(&m);

    /* Allocation failure: NULL, and the map stays usable. */
    hp_idmap_init(&m, &fail_alloc);
    fail_budget = 0;
    CHECK(hp_idmap_put(&m, 1, 1, &ins) == NULL);
    v = hp_idmap_put(&m, 0, 3, &ins); /* key 0 needs no table */
    CHECK(v && ins && *v == 3);
    fail_budget = -1;
    for (i = 1; i <= 512; i++) /* fills the first table (1024 slots) to half */
        hp_idmap_put(&m, i, (uint32_t)i, &ins);
    CHECK_EQ_U64(m.cap, 1024);
    fail_budget = 1; /* the next growth gets its keys but not its values */
    CHECK(hp_idmap_put(&m, 1000, 1, &ins) == NULL);
    fail_budget = -1;
    CHECK_EQ_U64(m.cap, 1024);
    for (i = 1; i <= 512; i++)
        if (!hp_idmap_get(&m, i) || *hp_idmap_get(&m, i) != (uint32_t)i)
            bad++;
    CHECK_EQ_U64(bad, 0);
    CHECK(hp_idmap_put(&m, 1000, 1, &ins) != NULL && ins);
    hp_idmap_clear(&m);
}

/* ------------------------------------------------------------------ */
/* A synthetic dump with a known histogram                              */



static void utf8(bb *b, uint64_t sid, const char *s)
{
    bb_rec_begin(b, HP_TAG_UTF8);
    bb_id(b, sid);
    bb_raw(b, s, strlen(s));
    bb_rec_end(b);
}
static void load_class(bb *b, uint32_t serial, uint64_t cls, uint64_t sid)
{
    bb_rec_begin(b, HP_TAG_LOAD_CLASS);
    bb_u4(b, serial);
    bb_id(b, cls);
    bb_u4(b, 0);
    bb_id(b, sid);
    bb_rec_end(b);
}
static void class_dump(bb *b, uint64_t cls, uint32_t inst_size)
{
    int i;
    bb_u1(b, HP_SUB_CLASS_DUMP);
    bb_id(b, cls);
    bb_u4(b, 0);
    for (i = 0; i < 6; i++)
        bb_id(b, 0);
    bb_u4(b, inst_size);
    bb_u1(b, 0), bb_u1(b, 0); /* constants */
    bb_u1(b, 0), bb_u1(b, 1); /* one static int */
    bb_id(b, 0x77);
    bb_u1(b, HP_T_INT);
    bb_u4(b, 5);
    bb_u1(b, 0), bb_u1(b, 0); /* fields */
}
static void instance(bb *b, uint64_t obj, uint64_t cls, uint32_t n)
{
    uint32_t i;
    bb_u1(b, HP_SUB_INSTANCE_DUMP);
    bb_id(b, obj);
    bb_u4(b, 0);
    bb_id(b, cls);
    bb_u4(b, n);
    for (i = 0; i < n; i++)
        bb_u1(b, i);
}
static void obj_array(bb *b, uint64_t arr, uint64_t cls, uint32_t n)
{
    uint32_t i;
    bb_u1(b, HP_SUB_OBJ_ARRAY_DUMP);
    bb_id(b, arr);
    bb_u4(b, 0);
    bb_u4(b, n);
    bb_id(b, cls);
    for (i = 0; i < n; i++)
        bb_id(b, 0);
}
static void prim_array(bb *b, int tag, uint64_t arr, int type, uint32_t n)
{
    uint32_t i;
    int j;
    bb_u1(b, (unsigned)tag);
    bb_id(b, arr);
    bb_u4(b, 0);
    bb_u4(b, n);
    bb_u1(b, (unsigned)type);
    if (tag == HP_SUB_PRIM_ARRAY_DUMP)
        for (i = 0; i < n; i++)
            for (j = 0; j < hp_type_size(type, b->id); j++)
                bb_u1(b, 0);
}

/* Expected shallow sizes, written out independently of hp_stats.c, after
 * VisualVM: an array is a header, a u4 length and its elements, padded to
 * 8; the header is two ids, or java.lang.Object's CLASS_DUMP size when that
 * is not zero (and then instances weigh the size written). */
static uint64_t pad8(uint64_t n) { return n % 8 ? n + 8 - n % 8 : n; }
static uint64_t array_size(uint32_t header, int elem, uint64_t n) { return pad8(header + 4 + n * (uint64_t)elem); }

static void test_synthetic(int id_size, int version)
{
    const uint64_t HI = id_size == 8 ? 0xABCD000000000000ULL : 0x80000000u;
    const uint64_t STR = HI | 0x100, OBJ = HI | 0x108, NONAME = HI | 0x110, ARRCLS = HI | 0x118;
    bb b;
    uint8_t h[HP_HEADER_MAX];
    size_t hlen;
    hp_stats *s;
    hp_parser *p;
    hp_error err;
    int done = 0, k;
    hp_class_row row;
    const uint8_t *name;
    size_t name_len;

    memset(&b, 0, sizeof b);
    b.id = id_size;
    hlen = hp_header_write(h, version, id_size, 1);
    bb_raw(&b, h, hlen);
    utf8(&b, HI | 1, "java/lang/String");
    utf8(&b, HI | 2, "java/lang/Object");
    utf8(&b, HI | 3, "[Ljava/lang/Object;");
    load_class(&b, 1, STR, HI | 1);
    load_class(&b, 2, OBJ, HI | 2);
    load_class(&b, 3, ARRCLS, HI | 3);
    load_class(&b, 4, HI | 0x120, HI | 9); /* its name string is missing */
    bb_rec_begin(&b, HP_TAG_HEAP_DUMP_SEGMENT);
    class_dump(&b, STR, 24);
    class_dump(&b, OBJ, id_size == 8 ? 16 : 8);
    instance(&b, HI | 0x1000, STR, 12);
    instance(&b, HI | 0x1008, OBJ, 0);
    instance(&b, HI | 0x1010, STR, 12);
    obj_array(&b, HI | 0x2000, ARRCLS, 3);
    obj_array(&b, HI | 0x2008, ARRCLS, 0);
    prim_array(&b, HP_SUB_PRIM_ARRAY_DUMP, HI | 0x3000, HP_T_CHAR, 5);
    prim_array(&b, HP_SUB_PRIM_ARRAY_DUMP, HI | 0x3008, HP_T_LONG, 3);
    bb_rec_end(&b);
    bb_rec_begin(&b, HP_TAG_HEAP_DUMP_SEGMENT);
    bb_u1(&b, HP_SUB_HEAP_DUMP_INFO);
    bb_u4(&b, 0x5A);
    bb_id(&b, 0);
    instance(&b, HI | 0x1018, STR, 12);
    instance(&b, HI | 0x1020, NONAME, 4); /* a class with no LOAD_CLASS nor CLASS_DUMP */
    prim_array(&b, HP_SUB_PRIM_ARRAY_DUMP, HI | 0x3010, HP_T_CHAR, 1);
    prim_array(&b, HP_SUB_PRIM_ARRAY_NODATA, HI | 0x3018, HP_T_INT, 100);
    bb_rec_end(&b);
    bb_rec_begin(&b, HP_TAG_HEAP_DUMP_END);
    bb_rec_end(&b);

    s = hp_stats_new(NULL);
    p = hp_parser_new(NULL, HP_PARSE_SUBRECORDS);
    hp_parser_feed(p, b.d, b.len, 1);
    CHECK(hp_stats_run(s, p, &done, &err) == HP_OK && done);
    {
        /* java.lang.Object has a size here: the model takes sizes as written. */
        hp_size_model m;
        hp_stats_model(s, b.d, b.len, &m);
        CHECK(m.raw && m.min_instance == 2 * id_size);
        hp_stats_set_model(s, &m);
    }
    CHECK_EQ_U64(hp_stats_records(s)[HP_TAG_UTF8].count, 3);
    CHECK_EQ_U64(hp_stats_records(s)[HP_TAG_LOAD_CLASS].count, 4);
    CHECK_EQ_U64(hp_stats_records(s)[HP_TAG_LOAD_CLASS].bytes, 4 * (9 + 8 + 2 * id_size));
    CHECK_EQ_U64(hp_stats_records(s)[HP_TAG_HEAP_DUMP_SEGMENT].count, 2);
    CHECK_EQ_U64(hp_stats_records(s)[HP_TAG_HEAP_DUMP_END].count, 1);
    CHECK_EQ_U64(hp_stats_heap_dumps(s), 1); /* two segments, one dump */
    CHECK_EQ_U64(hp_stats_subrecords(s)[HP_SUB_INSTANCE_DUMP].count, 5);
    CHECK_EQ_U64(hp_stats_subrecords(s)[HP_SUB_INSTANCE_DUMP].bytes, 5 * (1 + 2 * id_size + 8) + 12 * 3 + 4);
    CHECK_EQ_U64(hp_stats_subrecords(s)[HP_SUB_CLASS_DUMP].count, 2);
    CHECK_EQ_U64(hp_stats_subrecords(s)[HP_SUB_HEAP_DUMP_INFO].count, 1);
    CHECK_EQ_U64(hp_stats_subrecords(s)[HP_SUB_PRIM_ARRAY_NODATA].count, 1);
    CHECK_EQ_U64(hp_stats_subrecords(s)[HP_SUB_PRIM_ARRAY_NODATA].bytes, 1 + id_size + 9);

    /* Rows: classes in first-seen order (String, Object, the array class,
     * the nameless class), then primitive arrays by type. */
    CHECK_EQ_U64(hp_stats_row_count(s), 7);
    hp_stats_row(s, 0, &row);
    CHECK(row.class_id == STR && row.elem_type == 0 && row.instances == 3);
    CHECK_EQ_U64(row.shallow_bytes, 3 * 24);
    CHECK(hp_stats_class_name(s, b.d, b.len, STR, &name, &name_len) == 1 && name_len == 16 &&
          memcmp(name, "java/lang/String", 16) == 0);
    hp_stats_row(s, 1, &row);
    CHECK(row.class_id == OBJ && row.instances == 1);
    CHECK_EQ_U64(row.shallow_bytes, id_size == 8 ? 16 : 8);
    CHECK(hp_stats_class_name(s, b.d, b.len, OBJ, &name, &name_len) == 1 && name_len == 16 &&
          memcmp(name, "java/lang/Object", 16) == 0);
    hp_stats_row(s, 2, &row);
    CHECK(row.class_id == ARRCLS && row.elem_type == HP_T_OBJECT && row.instances == 2);
    CHECK_EQ_U64(row.shallow_bytes, array_size(2 * (uint32_t)id_size, id_size, 3) + array_size(2 * (uint32_t)id_size, id_size, 0));
    CHECK(hp_stats_class_name(s, b.d, b.len, ARRCLS, &name, &name_len) == 1 && name_len == 19 &&
          memcmp(name, "[Ljava/lang/Object;", 19) == 0);
    hp_stats_row(s, 3, &row);
    CHECK(row.class_id == NONAME && row.instances == 1);
    CHECK_EQ_U64(row.shallow_bytes, 0); /* no CLASS_DUMP: size 0 */
    CHECK(hp_stats_class_name(s, b.d, b.len, NONAME, &name, &name_len) == 0);
    CHECK(hp_stats_class_name(s, b.d, b.len, HI | 0x120, &name, &name_len) == 0); /* string missing */
    CHECK(hp_stats_class_name(s, b.d, b.len, HI | 0x999, &name, &name_len) == 0); /* unknown class */
    /* A buffer too short for the name record: no read past it. */
    CHECK(hp_stats_class_name(s, b.d, hlen + 10, STR, &name, &name_len) == 0);
    hp_stats_row(s, 4, &row);
    CHECK(row.class_id == 0 && row.elem_type == HP_T_CHAR && row.instances == 2);
    CHECK_EQ_U64(row.shallow_bytes, array_size(2 * (uint32_t)id_size, 2, 5) + array_size(2 * (uint32_t)id_size, 2, 1));
    hp_stats_row(s, 5, &row);
    CHECK(row.elem_type == HP_T_INT && row.instances == 1 && row.shallow_bytes == array_size(2 * (uint32_t)id_size, 4, 100));
    hp_stats_row(s, 6, &row);
    CHECK(row.elem_type == HP_T_LONG && row.instances == 1 && row.shallow_bytes == array_size(2 * (uint32_t)id_size, 8, 3));
    hp_stats_free(s);
    hp_parser_free(p);

    /* Out of memory at every allocation: HP_E_NOMEM (or success), never a crash. */
    for (k = 0; k < 12; k++) {
        hp_code rc;
        fail_budget = k;
        s = hp_stats_new(&fail_alloc);
        p = hp_parser_new(&fail_alloc, HP_PARSE_SUBRECORDS);
        if (s && p) {
            hp_parser_feed(p, b.d, b.len, 1);
            rc = hp_stats_run(s, p, &done, &err);
            CHECK(rc == HP_OK || rc == HP_E_NOMEM);
            if (rc == HP_OK)
                CHECK(done && hp_stats_row_count(s) == 7);
        }
        fail_budget = -1;
        hp_stats_free(s);
        hp_parser_free(p);
    }
    free(b.d);
}

/* Two heap dumps in one file (a HEAP_DUMP, then a run of segments): every
 * sub-record is tallied, the histogram describes the first dump only. */
static void test_second_dump(void)
{
    bb b;
    uint8_t h[HP_HEADER_MAX];
    hp_stats *s;
    hp_parser *p;
    hp_error err;
    hp_class_row row;
    int done = 0, round;

    memset(&b, 0, sizeof b);
    b.id = 4;
    bb_raw(&b, h, hp_header_write(h, 1, 4, 1));
    for (round = 0; round < 3; round++) {
        if (round == 0)
            bb_rec_begin(&b, HP_TAG_HEAP_DUMP);
        else
            bb_rec_begin(&b, HP_TAG_HEAP_DUMP_SEGMENT);
        class_dump(&b, 0x100, 12);
        instance(&b, 0x1000 + (uint64_t)round, 0x100, 12);
        prim_array(&b, HP_SUB_PRIM_ARRAY_DUMP, 0x2000 + (uint64_t)round, HP_T_BYTE, 3);
        bb_rec_end(&b);
    }
    bb_rec_begin(&b, HP_TAG_HEAP_DUMP_END);
    bb_rec_end(&b);
    s = hp_stats_new(NULL);
    p = hp_parser_new(NULL, HP_PARSE_SUBRECORDS);
    hp_parser_feed(p, b.d, b.len, 1);
    CHECK(hp_stats_run(s, p, &done, &err) == HP_OK && done);
    CHECK_EQ_U64(hp_stats_heap_dumps(s), 2);
    CHECK_EQ_U64(hp_stats_subrecords(s)[HP_SUB_INSTANCE_DUMP].count, 3);
    CHECK_EQ_U64(hp_stats_subrecords(s)[HP_SUB_CLASS_DUMP].count, 3);
    CHECK_EQ_U64(hp_stats_row_count(s), 2);
    hp_stats_row(s, 0, &row);
    /* No java.lang.Object, no model set: references at id size, a two-id
     * header, and instance sizes from the (empty) field tables. */
    CHECK(row.class_id == 0x100 && row.instances == 1 && row.shallow_bytes == 8);
    hp_stats_row(s, 1, &row);
    CHECK(row.elem_type == HP_T_BYTE && row.instances == 1 && row.shallow_bytes == array_size(8, 1, 3));
    hp_stats_free(s);
    hp_parser_free(p);
    free(b.d);
}

/* ------------------------------------------------------------------ */
/* The real dumps                                                       */






static uint8_t *load_entry(const inv_entry *e, size_t *len)
{
    char rel[256];
    snprintf(rel, sizeof rel, "hprof/%s", e->file);
    if (strcmp(e->compression, "gzip") == 0) {
        gzFile f = gzopen(check_data_path(rel), "rb");
        uint8_t *buf;
        int got;
        if (!f || e->dsize == 0)
            return NULL;
        buf = xmalloc((size_t)e->dsize);
        got = gzread(f, buf, (unsigned)e->dsize);
        gzclose(f);
        if (got < 0 || (uint64_t)got != e->dsize) {
            free(buf);
            return NULL;
        }
        *len = (size_t)got;
        return buf;
    }
    return check_read_file(check_data_path(rel), len);
}

/* What the parser alone says about a dump: counts, and an independent
 * histogram for the figures hp_stats must agree with. */
typedef struct facts {
    uint64_t rec[256], sub[256];
    uint64_t heap_body_bytes;
    size_t header_len;
    int id_size;
    uint32_t heap_dumps;       /* a HEAP_DUMP, or a run of segments up to HEAP_DUMP_END */
    uint64_t first_objects;    /* objects and arrays of the first heap dump */
    uint64_t first_obj_arrays; /* object arrays of the first heap dump */
    uint64_t prim_count[16], prim_bytes[16];
    uint64_t obj_array_bytes;
} facts;

static int parser_facts(const uint8_t *buf, size_t len, facts *f)
{
    hp_parser *p = hp_parser_new(NULL, HP_PARSE_SUBRECORDS);
    hp_event ev;
    hp_error err;
    hp_code rc;
    int in_segments = 0;
    memset(f, 0, sizeof *f);
    hp_parser_feed(p, buf, len, 1);
    while ((rc = hp_parser_next(p, &ev, &err)) == HP_OK && ev.kind != HP_EV_END) {
        if (ev.kind == HP_EV_HEADER) {
            f->header_len = ev.len;
            f->id_size = hp_parser_header(p)->id_size;
        } else if (ev.kind == HP_EV_RECORD) {
            int tag = ev.rec->tag;
            f->rec[tag]++;
            if (hp_is_heap_tag(tag))
                f->heap_body_bytes += ev.rec->length;
            if (tag == HP_TAG_HEAP_DUMP || (tag == HP_TAG_HEAP_DUMP_SEGMENT && !in_segments))
                f->heap_dumps++;
            if (tag == HP_TAG_HEAP_DUMP_SEGMENT)
                in_segments = 1;
            else if (tag == HP_TAG_HEAP_DUMP || tag == HP_TAG_HEAP_DUMP_END)
                in_segments = 0;
        } else if (ev.kind == HP_EV_SUBRECORD) {
            const hp_subrecord *s = ev.sub;
            f->sub[s->tag]++;
            if (f->heap_dumps != 1)
                continue;
            if (s->tag == HP_SUB_INSTANCE_DUMP || s->tag == HP_SUB_OBJ_ARRAY_DUMP || s->tag == HP_SUB_PRIM_ARRAY_DUMP ||
                s->tag == HP_SUB_PRIM_ARRAY_NODATA)
                f->first_objects++;
            if (s->tag == HP_SUB_OBJ_ARRAY_DUMP)
                f->first_obj_arrays++;
            if (s->tag == HP_SUB_PRIM_ARRAY_DUMP || s->tag == HP_SUB_PRIM_ARRAY_NODATA) {
                f->prim_count[s->elem_type]++;
                f->prim_bytes[s->elem_type] += array_size(2 * (uint32_t)f->id_size, hp_type_size(s->elem_type, f->id_size), s->count);
            } else if (s->tag == HP_SUB_OBJ_ARRAY_DUMP) {
                f->obj_array_bytes += array_size(2 * (uint32_t)f->id_size, f->id_size, s->count);
            }
        }
    }
    hp_parser_free(p);
    return rc == HP_OK;
}

/* Runs hp_stats over buf fed in chunks of `chunk` bytes (0: one piece,
 * (size_t)-1: pseudo-random sizes). */
static hp_stats *stats_of(const uint8_t *buf, size_t len, size_t chunk, hp_code *rc_out)
{
    hp_stats *s = hp_stats_new(NULL);
    hp_parser *p = hp_parser_new(NULL, HP_PARSE_SUBRECORDS);
    size_t pos = 0;
    uint32_t seed = (uint32_t)len;
    uint8_t *piece = NULL;
    hp_error err;
    hp_code rc = HP_OK;
    int done = 0;
    while (!done) {
        size_t n = chunk == 0 ? len : chunk == (size_t)-1 ? 1 + xorshift(&seed) % 20000 : chunk;
        if (n > len - pos)
            n = len - pos;
        free(piece);
        piece = xmalloc(n);
        if (n)
            memcpy(piece, buf + pos, n);
        pos += n;
        hp_parser_feed(p, piece, n, pos == len);
        rc = hp_stats_run(s, p, &done, &err);
        if (rc != HP_OK)
            break;
        if (!done && pos == len) {
            rc = HP_E_USAGE;
            break;
        }
    }
    free(piece);
    hp_parser_free(p);
    *rc_out = rc;
    return s;
}

static int same_stats(const hp_stats *a, const hp_stats *b)
{
    size_t i, n = hp_stats_row_count(a);
    if (memcmp(hp_stats_records(a), hp_stats_records(b), 256 * sizeof(hp_tally)) != 0 ||
        memcmp(hp_stats_subrecords(a), hp_stats_subrecords(b), 256 * sizeof(hp_tally)) != 0 ||
        n != hp_stats_row_count(b))
        return 0;
    for (i = 0; i < n; i++) {
        hp_class_row x, y;
        hp_stats_row(a, i, &x);
        hp_stats_row(b, i, &y);
        if (x.class_id != y.class_id || x.elem_type != y.elem_type || x.instances != y.instances ||
            x.shallow_bytes != y.shallow_bytes)
            return 0;
    }
    return 1;
}

static int name_is(const uint8_t *name, size_t len, const char *want)
{
    return len == strlen(want) && memcmp(name, want, len) == 0;
}

static void test_real_dumps(void)
{
    size_t n_inv, i, done = 0, multi = 0;
    inv_entry *inv = read_inventory(&n_inv);

    CHECK(inv != NULL && n_inv >= 20);
    for (i = 0; i < n_inv; i++) {
        const inv_entry *e = &inv[i];
        size_t len = 0, r, rows;
        uint8_t *buf;
        facts f;
        hp_stats *s, *s2;
        hp_code rc;
        const hp_tally *rt, *st;
        uint64_t rec_bytes = 0, sub_bytes = 0, row_instances = 0, obj_rows = 0, obj_bytes = 0;
        int t, string_rows = 0, named = 0;

        if (strcmp(e->compression, "bz2") == 0)
            continue;
        buf = load_entry(e, &len);
        CHECK(buf != NULL);
        if (!buf)
            continue;
        CHECK(parser_facts(buf, len, &f));
        s = stats_of(buf, len, 0, &rc);
        CHECK(rc == HP_OK);
        rt = hp_stats_records(s);
        st = hp_stats_subrecords(s);
        for (t = 0; t < 256; t++) {
            CHECK_EQ_U64(rt[t].count, f.rec[t]);
            CHECK_EQ_U64(st[t].count, f.sub[t]);
            CHECK_EQ_U64(rt[t].count, e->recs[t]);
            CHECK_EQ_U64(st[t].count, e->subs[t]);
            rec_bytes += rt[t].bytes;
            sub_bytes += st[t].bytes;
        }
        CHECK_EQ_U64(rec_bytes, len - f.header_len);
        CHECK_EQ_U64(sub_bytes, f.heap_body_bytes);

        /* The histogram. */
        rows = hp_stats_row_count(s);
        for (r = 0; r < rows; r++) {
            hp_class_row row;
            const uint8_t *name;
            size_t name_len;
            hp_stats_row(s, r, &row);
            CHECK(row.instances > 0);
            row_instances += row.instances;
            if (row.class_id == 0 && row.elem_type != HP_T_OBJECT) {
                CHECK(row.elem_type >= HP_T_BOOLEAN && row.elem_type <= HP_T_LONG);
                CHECK_EQ_U64(row.instances, f.prim_count[row.elem_type]);
                CHECK_EQ_U64(row.shallow_bytes, f.prim_bytes[row.elem_type]);
                continue;
            }
            if (row.elem_type == HP_T_OBJECT) {
                obj_rows += row.instances;
                obj_bytes += row.shallow_bytes;
            }
            if (hp_stats_class_name(s, buf, len, row.class_id, &name, &name_len)) {
                named++;
                CHECK(name_len < 4096 && name >= buf && name + name_len <= buf + len);
                if (name_is(name, name_len, "java/lang/String") || name_is(name, name_len, "java.lang.String")) {
                    string_rows++;
                    CHECK(row.elem_type == 0 && row.shallow_bytes > 0 && row.shallow_bytes % row.instances == 0);
                }
            }
        }
        /* The histogram describes the first heap dump (the old hprof agent
         * wrote two); with one dump that is every object of the file. */
        CHECK_EQ_U64(hp_stats_heap_dumps(s), f.heap_dumps);
        CHECK_EQ_U64(row_instances, f.first_objects);
        if (f.heap_dumps == 1)
            CHECK_EQ_U64(row_instances, f.sub[HP_SUB_INSTANCE_DUMP] + f.sub[HP_SUB_OBJ_ARRAY_DUMP] +
                                            f.sub[HP_SUB_PRIM_ARRAY_DUMP] + f.sub[HP_SUB_PRIM_ARRAY_NODATA]);
        else
            multi++;
        CHECK_EQ_U64(obj_rows, f.first_obj_arrays);
        CHECK_EQ_U64(obj_bytes, f.obj_array_bytes);
        if (f.sub[HP_SUB_INSTANCE_DUMP] > 0) {
            CHECK_EQ_U64(string_rows, 1);
            CHECK(named > 0);
            if (string_rows != 1)
                fprintf(stderr, "  %s: %d String rows\n", e->file, string_rows);
        }

        /* The same figures when the dump comes in pieces. */
        s2 = stats_of(buf, len, (size_t)-1, &rc);
        CHECK(rc == HP_OK && same_stats(s, s2));
        hp_stats_free(s2);
        if (len < 1000000) {
            s2 = stats_of(buf, len, 3, &rc);
            CHECK(rc == HP_OK && same_stats(s, s2));
            hp_stats_free(s2);
        }
        hp_stats_free(s);
        free(buf);
        done++;
    }
    CHECK(done + 1 >= n_inv);
    CHECK(multi >= 1); /* the hprof-agent dumps hold two heap dumps */
    printf("  %zu real dumps, %zu with more than one heap dump\n", done, multi);
    free(inv);
}

int main(void)
{
    test_idmap();
    test_synthetic(4, 3);
    test_synthetic(8, 3);
    test_synthetic(4, 2);
    test_synthetic(8, 1);
    test_second_dump();
    test_real_dumps();
    return check_report("test_stats");
}
