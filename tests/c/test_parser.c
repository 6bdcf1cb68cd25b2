/* Tests of the reader: header, sub-record decoder and push parser.
 *
 *  1. headers: the four magics, id sizes, timestamp, foreign magics, bad id
 *     sizes, a header cut at every length;
 *  2. a synthetic dump holding every sub-record kind (standard and Android),
 *     built here byte by byte for id size 4 and 8, decoded field by field;
 *  3. every dump of the shared data folder: counts against INVENTORY.json,
 *     one-shot against chunked feeding, byte-exact event data;
 *  4. truncation at every boundary class and at every early offset;
 *  5. corruption: bad tags, absurd counts, bad types, short segments;
 *     sticky errors and hp_error_format.
 *
 * Chunked feeding copies every chunk into its own exact-size allocation and
 * frees it when the next one is fed, so ASan sees any read past a chunk or
 * any use of a chunk the parser should have let go of. */
#include "testkit.h"

#include <stdint.h>
#include <time.h>
#include <zlib.h>

#include "hp_common.h"
#include "hp_header.h"
#include "hp_parser.h"
#include "hp_subrecord.h"

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */


/* An allocator that remembers the largest single request, so the tests can
 * prove that absurd counts never turn into big allocations. */
static size_t track_max;
static void *track_malloc(size_t n)
{
    if (n > track_max)
        track_max = n;
    return malloc(n);
}
static void *track_realloc(void *p, size_t n)
{
    if (n > track_max)
        track_max = n;
    return realloc(p, n);
}
static const hp_alloc track_alloc = { track_malloc, track_realloc, free };

/* ------------------------------------------------------------------ */
/* Synthetic dumps with the expected decoding of every unit            */

#define TS_MS 0x0000018BCFE56800ULL

typedef struct xrec {
    uint64_t offset;
    uint32_t time, length;
    uint8_t tag;
} xrec;

typedef struct synth {
    bb b;
    int id;
    size_t hlen;
    xrec recs[32];
    size_t nrec;
    hp_subrecord subs[128];
    uint32_t sub_heap[128];
    size_t nsub;
    hp_class_layout lay[8]; /* expected layouts of the CLASS_DUMPs, in order */
    size_t nlay;
    uint32_t heap;
    int table; /* CLASS_DUMP table being written */
} synth;

/* Identifiers with their high bit set, to catch sign and width slips. */
static uint64_t X(const synth *S, uint64_t n)
{
    return S->id == 8 ? 0xF00DBEEF00000000ULL | n : (0xF0000000u | n);
}

static void s_id(synth *S, uint64_t v) { bb_idn(&S->b, S->id, v); }

static void synth_init(synth *S, int id_size, int version)
{
    uint8_t h[HP_HEADER_MAX];
    memset(S, 0, sizeof *S);
    S->id = id_size;
    S->hlen = hp_header_write(h, version, id_size, TS_MS);
    bb_raw(&S->b, h, S->hlen);
}

static void rec_begin(synth *S, int tag, uint32_t time)
{
    xrec *r = &S->recs[S->nrec++];
    r->offset = S->b.len;
    r->tag = (uint8_t)tag;
    r->time = time;
    bb_u1(&S->b, (unsigned)tag);
    bb_u4(&S->b, time);
    bb_u4(&S->b, 0);
    S->heap = 0;
}

static void rec_end(synth *S)
{
    xrec *r = &S->recs[S->nrec - 1];
    r->length = (uint32_t)(S->b.len - r->offset - 9);
    hp_put32(S->b.d + r->offset + 5, r->length);
}

static void rec_utf8(synth *S, uint64_t sid, const char *s)
{
    rec_begin(S, HP_TAG_UTF8, 0x10);
    s_id(S, sid);
    bb_raw(&S->b, s, strlen(s));
    rec_end(S);
}

static hp_subrecord *sub_begin(synth *S, int tag)
{
    hp_subrecord *e = &S->subs[S->nsub];
    memset(e, 0, sizeof *e);
    e->offset = S->b.len;
    e->tag = (uint8_t)tag;
    bb_u1(&S->b, (unsigned)tag);
    return e;
}

static void sub_end(synth *S, hp_subrecord *e, uint32_t head_len)
{
    e->length = S->b.len - e->offset;
    e->head_len = head_len ? head_len : (uint32_t)e->length;
    e->payload_len = e->length - e->head_len;
    S->sub_heap[S->nsub++] = S->heap;
}

/* A value of basic type `type`, with recognisable bytes. */
static void put_value(synth *S, int type, unsigned seed)
{
    int n = hp_type_size(type, S->id), i;
    for (i = 0; i < n; i++)
        bb_u1(&S->b, (seed * 31u + (unsigned)i * 7u + 0x80u) & 0xFF);
}

static void s_root_id(synth *S, int tag, uint64_t obj)
{
    hp_subrecord *e = sub_begin(S, tag);
    e->id = obj;
    s_id(S, obj);
    sub_end(S, e, (uint32_t)(1 + S->id));
}

static void s_jni_global(synth *S, uint64_t obj, uint64_t ref)
{
    hp_subrecord *e = sub_begin(S, HP_SUB_ROOT_JNI_GLOBAL);
    e->id = obj;
    e->ref = ref;
    s_id(S, obj);
    s_id(S, ref);
    sub_end(S, e, (uint32_t)(1 + 2 * S->id));
}

/* 0x02, 0x03, 0x08, 0x8E: ID, u4 serial, u4 frame/trace. */
static void s_root_id_u4_u4(synth *S, int tag, uint64_t obj, uint32_t serial, uint32_t aux)
{
    hp_subrecord *e = sub_begin(S, tag);
    e->id = obj;
    e->serial = serial;
    e->aux = aux;
    s_id(S, obj);
    bb_u4(&S->b, serial);
    bb_u4(&S->b, aux);
    sub_end(S, e, (uint32_t)(1 + S->id + 8));
}

/* 0x04, 0x06: ID, u4 serial. */
static void s_root_id_u4(synth *S, int tag, uint64_t obj, uint32_t serial)
{
    hp_subrecord *e = sub_begin(S, tag);
    e->id = obj;
    e->serial = serial;
    s_id(S, obj);
    bb_u4(&S->b, serial);
    sub_end(S, e, (uint32_t)(1 + S->id + 4));
}

static void s_heap_info(synth *S, uint32_t heap, uint64_t sid)
{
    hp_subrecord *e = sub_begin(S, HP_SUB_HEAP_DUMP_INFO);
    e->aux = heap;
    e->ref = sid;
    bb_u4(&S->b, heap);
    s_id(S, sid);
    S->heap = heap;
    sub_end(S, e, (uint32_t)(5 + S->id));
}

static void s_instance(synth *S, uint64_t obj, uint32_t serial, uint64_t cls, uint32_t n)
{
    hp_subrecord *e = sub_begin(S, HP_SUB_INSTANCE_DUMP);
    uint32_t i;
    e->id = obj;
    e->serial = serial;
    e->class_id = cls;
    e->count = n;
    s_id(S, obj);
    bb_u4(&S->b, serial);
    s_id(S, cls);
    bb_u4(&S->b, n);
    for (i = 0; i < n; i++)
        bb_u1(&S->b, (i * 13u + 5u) & 0xFF);
    sub_end(S, e, (uint32_t)(1 + 2 * S->id + 8));
}

static void s_obj_array(synth *S, uint64_t arr, uint32_t serial, uint64_t cls, uint32_t n)
{
    hp_subrecord *e = sub_begin(S, HP_SUB_OBJ_ARRAY_DUMP);
    uint32_t i;
    e->id = arr;
    e->serial = serial;
    e->class_id = cls;
    e->count = n;
    e->elem_type = HP_T_OBJECT;
    s_id(S, arr);
    bb_u4(&S->b, serial);
    bb_u4(&S->b, n);
    s_id(S, cls);
    for (i = 0; i < n; i++)
        s_id(S, i % 3 == 1 ? 0 : X(S, 0x500 + i));
    sub_end(S, e, (uint32_t)(1 + 2 * S->id + 8));
}

static void s_prim_array(synth *S, int tag, uint64_t arr, uint32_t serial, int type, uint32_t n)
{
    hp_subrecord *e = sub_begin(S, tag);
    uint32_t i;
    e->id = arr;
    e->serial = serial;
    e->count = n;
    e->elem_type = (uint8_t)type;
    s_id(S, arr);
    bb_u4(&S->b, serial);
    bb_u4(&S->b, n);
    bb_u1(&S->b, (unsigned)type);
    if (tag == HP_SUB_PRIM_ARRAY_DUMP)
        for (i = 0; i < n; i++)
            put_value(S, type, i);
    sub_end(S, e, (uint32_t)(1 + S->id + 9));
}

static hp_subrecord *class_begin(synth *S, uint64_t cls, uint32_t serial, uint64_t super, uint64_t loader,
                                 const uint64_t extra[4], uint32_t inst_size)
{
    hp_subrecord *e = sub_begin(S, HP_SUB_CLASS_DUMP);
    hp_class_layout *l = &S->lay[S->nlay];
    int i;
    memset(l, 0, sizeof *l);
    e->id = cls;
    e->serial = serial;
    e->class_id = super;
    e->ref = loader;
    e->aux = inst_size;
    s_id(S, cls);
    bb_u4(&S->b, serial);
    s_id(S, super);
    s_id(S, loader);
    for (i = 0; i < 4; i++)
        s_id(S, extra[i]);
    l->signers = extra[0];
    l->protection_domain = extra[1];
    l->reserved1 = extra[2];
    l->reserved2 = extra[3];
    bb_u4(&S->b, inst_size);
    S->table = 0;
    return e;
}

/* Starts CLASS_DUMP table S->table (0 constants, 1 statics, 2 fields). */
static void class_table(synth *S, const hp_subrecord *e, uint16_t n)
{
    hp_class_layout *l = &S->lay[S->nlay];
    uint32_t off = (uint32_t)(S->b.len - e->offset);
    if (S->table == 0) {
        l->const_off = off;
        l->n_const = n;
    } else if (S->table == 1) {
        l->statics_off = off;
        l->n_statics = n;
    } else {
        l->fields_off = off;
        l->n_fields = n;
    }
    S->table++;
    bb_u2(&S->b, n);
}

static void class_end(synth *S, hp_subrecord *e)
{
    S->nlay++;
    sub_end(S, e, 0);
}

/* The small dump: every record kind the parser distinguishes, every
 * sub-record kind, several heap records and heap switches. */
static void synth_build(synth *S, int id_size)
{
    static const int cp_types[] = { HP_T_BOOLEAN, HP_T_CHAR, HP_T_INT, HP_T_LONG, HP_T_OBJECT, HP_T_DOUBLE,
                                    HP_T_FLOAT, HP_T_SHORT, HP_T_BYTE };
    static const int st_types[] = { HP_T_FLOAT, HP_T_SHORT, HP_T_BYTE, HP_T_OBJECT, HP_T_LONG, HP_T_BOOLEAN };
    static const int fd_types[] = { HP_T_INT, HP_T_OBJECT, HP_T_CHAR, HP_T_DOUBLE, HP_T_BOOLEAN, HP_T_LONG,
                                    HP_T_BYTE };
    uint64_t extra[4];
    hp_subrecord *e;
    unsigned i;
    int t;

    synth_init(S, id_size, 3);
    rec_utf8(S, X(S, 0x10), "java/lang/String");
    rec_utf8(S, X(S, 0x11), "Main$Holder");
    rec_utf8(S, X(S, 0x12), "count");
    rec_utf8(S, X(S, 0x13), "zygote");
    rec_begin(S, HP_TAG_LOAD_CLASS, 0);
    bb_u4(&S->b, 1);
    s_id(S, X(S, 0x100));
    bb_u4(&S->b, 0x80000001u);
    s_id(S, X(S, 0x10));
    rec_end(S);
    rec_begin(S, HP_TAG_LOAD_CLASS, 0);
    bb_u4(&S->b, 2);
    s_id(S, X(S, 0x101));
    bb_u4(&S->b, 0);
    s_id(S, X(S, 0x11));
    rec_end(S);
    /* Unknown tags are skipped by their length, even when the body looks
     * like sub-records. */
    rec_begin(S, 0x99, 0xFFFFFFFFu);
    for (i = 0; i < 13; i++)
        bb_u1(&S->b, HP_TAG_HEAP_DUMP);
    rec_end(S);
    rec_begin(S, 0x42, 7);
    rec_end(S);

    rec_begin(S, HP_TAG_HEAP_DUMP, 0x01020304u);
    s_root_id(S, HP_SUB_ROOT_UNKNOWN, X(S, 0x200));
    s_jni_global(S, X(S, 0x201), X(S, 0x301));
    s_root_id_u4_u4(S, HP_SUB_ROOT_JNI_LOCAL, X(S, 0x202), 7, 0xFFFFFFFFu);
    s_root_id_u4_u4(S, HP_SUB_ROOT_JAVA_FRAME, X(S, 0x203), 8, 3);
    s_root_id_u4(S, HP_SUB_ROOT_NATIVE_STACK, X(S, 0x204), 9);
    s_root_id(S, HP_SUB_ROOT_STICKY_CLASS, X(S, 0x100));
    s_root_id_u4(S, HP_SUB_ROOT_THREAD_BLOCK, X(S, 0x206), 0x80000000u);
    s_root_id(S, HP_SUB_ROOT_MONITOR_USED, X(S, 0x207));
    s_root_id_u4_u4(S, HP_SUB_ROOT_THREAD_OBJECT, 0, 11, 0x80000002u);
    s_root_id(S, HP_SUB_ROOT_INTERNED_STRING, X(S, 0x209));
    s_root_id(S, HP_SUB_ROOT_FINALIZING, X(S, 0x20A));
    s_root_id(S, HP_SUB_ROOT_DEBUGGER, X(S, 0x20B));
    s_root_id(S, HP_SUB_ROOT_REFERENCE_CLEANUP, X(S, 0x20C));
    s_root_id(S, HP_SUB_ROOT_VM_INTERNAL, X(S, 0x20D));
    s_root_id_u4_u4(S, HP_SUB_ROOT_JNI_MONITOR, X(S, 0x20E), 12, 0xFFFFFFFFu);
    s_root_id(S, HP_SUB_UNREACHABLE, X(S, 0x210));

    /* java/lang/String: no constants, no statics, two fields. */
    memset(extra, 0, sizeof extra);
    e = class_begin(S, X(S, 0x100), 0x80000001u, X(S, 0x102), 0, extra, 24);
    class_table(S, e, 0);
    class_table(S, e, 0);
    class_table(S, e, 2);
    s_id(S, X(S, 0x12));
    bb_u1(&S->b, HP_T_INT);
    s_id(S, X(S, 0x13));
    bb_u1(&S->b, HP_T_OBJECT);
    class_end(S, e);

    /* Main$Holder: every type in every table. */
    for (i = 0; i < 4; i++)
        extra[i] = X(S, 0x401 + i);
    e = class_begin(S, X(S, 0x101), 2, X(S, 0x100), X(S, 0x400), extra, 0x12345678u);
    class_table(S, e, (uint16_t)(sizeof cp_types / sizeof cp_types[0]));
    for (i = 0; i < sizeof cp_types / sizeof cp_types[0]; i++) {
        bb_u2(&S->b, i == 3 ? 0xFFFFu : i + 1);
        bb_u1(&S->b, (unsigned)cp_types[i]);
        put_value(S, cp_types[i], i);
    }
    class_table(S, e, (uint16_t)(sizeof st_types / sizeof st_types[0]));
    for (i = 0; i < sizeof st_types / sizeof st_types[0]; i++) {
        s_id(S, X(S, 0x10 + i));
        bb_u1(&S->b, (unsigned)st_types[i]);
        put_value(S, st_types[i], i + 100);
    }
    class_table(S, e, (uint16_t)(sizeof fd_types / sizeof fd_types[0]));
    for (i = 0; i < sizeof fd_types / sizeof fd_types[0]; i++) {
        s_id(S, X(S, 0x20 + i));
        bb_u1(&S->b, (unsigned)fd_types[i]);
    }
    class_end(S, e);

    s_instance(S, X(S, 0x500), 0x80000003u, X(S, 0x101), (uint32_t)(4 + S->id + 2 + 8 + 1 + 8 + 1));
    s_obj_array(S, X(S, 0x600), 5, X(S, 0x103), 3);
    for (t = HP_T_BOOLEAN; t <= HP_T_LONG; t++)
        s_prim_array(S, HP_SUB_PRIM_ARRAY_DUMP, X(S, 0x700 + (unsigned)t), (uint32_t)t, t, (uint32_t)(t - 3));
    s_prim_array(S, HP_SUB_PRIM_ARRAY_DUMP, X(S, 0x710), 0, HP_T_BYTE, 0);
    s_prim_array(S, HP_SUB_PRIM_ARRAY_NODATA, X(S, 0x711), 6, HP_T_INT, 1000);
    s_prim_array(S, HP_SUB_PRIM_ARRAY_NODATA, X(S, 0x712), 6, HP_T_DOUBLE, 0);
    rec_end(S);

    /* Segments and heap switches: the heap resets at every record. */
    rec_begin(S, HP_TAG_HEAP_DUMP_SEGMENT, 0);
    s_instance(S, X(S, 0x501), 1, X(S, 0x100), 4);
    s_heap_info(S, 0x5A, X(S, 0x13));
    s_instance(S, X(S, 0x502), 1, X(S, 0x100), 0);
    s_prim_array(S, HP_SUB_PRIM_ARRAY_DUMP, X(S, 0x720), 1, HP_T_CHAR, 4);
    s_heap_info(S, 0x41, X(S, 0x14));
    s_instance(S, X(S, 0x503), 1, X(S, 0x100), 24);
    s_obj_array(S, X(S, 0x601), 1, X(S, 0x104), 0);
    rec_end(S);
    rec_begin(S, HP_TAG_HEAP_DUMP_SEGMENT, 0);
    s_instance(S, X(S, 0x504), 1, X(S, 0x100), 24);
    s_heap_info(S, 0x49, X(S, 0x15));
    s_instance(S, X(S, 0x505), 1, X(S, 0x100), 24);
    rec_end(S);
    rec_begin(S, HP_TAG_HEAP_DUMP_SEGMENT, 0);
    rec_end(S);
    rec_begin(S, HP_TAG_HEAP_DUMP_END, 0);
    rec_end(S);
    rec_utf8(S, X(S, 0x14), "app");
}

/* The big dump: units above HP_WHOLE_MAX (streamed as DATA / PAYLOAD pieces)
 * and a CLASS_DUMP whose tables need a large carry. */
static void synth_build_big(synth *S)
{
    uint64_t extra[4] = { 0, 0, 0, 0 };
    hp_subrecord *e;
    uint32_t i;

    synth_init(S, 8, 2);
    rec_begin(S, HP_TAG_UTF8, 0);
    s_id(S, X(S, 0x10));
    for (i = 0; i < (3u << 19); i++)
        bb_u1(&S->b, 'a' + i % 26);
    rec_end(S);
    rec_begin(S, HP_TAG_HEAP_DUMP_SEGMENT, 0);
    e = class_begin(S, X(S, 0x100), 1, 0, 0, extra, 16);
    class_table(S, e, 0);
    class_table(S, e, 3000);
    for (i = 0; i < 3000; i++) {
        s_id(S, X(S, 0x1000 + i));
        bb_u1(&S->b, i % 2 ? HP_T_LONG : HP_T_OBJECT);
        put_value(S, i % 2 ? HP_T_LONG : HP_T_OBJECT, i);
    }
    class_table(S, e, 1);
    s_id(S, X(S, 0x11));
    bb_u1(&S->b, HP_T_LONG);
    class_end(S, e);
    s_prim_array(S, HP_SUB_PRIM_ARRAY_DUMP, X(S, 0x700), 1, HP_T_BYTE, 1300000);
    s_instance(S, X(S, 0x500), 1, X(S, 0x100), 1100000);
    s_heap_info(S, 0x41, X(S, 0x10));
    s_obj_array(S, X(S, 0x600), 1, X(S, 0x101), 150000);
    s_instance(S, X(S, 0x501), 1, X(S, 0x100), 16);
    rec_end(S);
    rec_begin(S, HP_TAG_HEAP_DUMP, 0);
    s_prim_array(S, HP_SUB_PRIM_ARRAY_DUMP, X(S, 0x701), 1, HP_T_LONG, 140000);
    rec_end(S);
    rec_begin(S, HP_TAG_HEAP_DUMP_END, 0);
    rec_end(S);
}

/* ------------------------------------------------------------------ */
/* Running the parser and recording what it says                       */

typedef struct sev {
    int kind;
    uint64_t offset;
    uint32_t heap_id;
    int tag;
    uint32_t rec_len, rec_time;
    hp_subrecord sub;
} sev;

typedef struct feed_mode {
    size_t fixed;   /* chunk size; 0 with seed 0 = one chunk */
    uint32_t seed;  /* pseudo-random chunk sizes when fixed is 0 */
    int empty_last; /* all data non-final, then an empty final chunk (NULL, 0) */
    const hp_header *resume; /* start at record offset `start` with this header */
    uint64_t start;
} feed_mode;

static const feed_mode ONE_SHOT = { 0, 0, 0, NULL, 0 };

typedef struct run {
    sev *ev;
    size_t n, cap;
    hp_code rc;
    hp_error err;
    int ended;
    uint64_t delivered; /* event bytes, checked in order against the input */
    int data_bad;       /* event data did not continue the input */
    int shape_bad;      /* a delivery guarantee of hp_parser.h was broken */
    int sticky_bad;     /* the error changed on the next call */
    uint64_t rec_count[256], sub_count[256];
    uint64_t records;
    hp_header hdr;
    int have_hdr;
    size_t pieces;
    size_t chunks;
    size_t max_carry_alloc;
} run;

static int diag_budget = 40; /* failure details printed, in all */

static void diag(const char *fmt, const char *what, unsigned long long a, unsigned long long b)
{
    if (diag_budget-- > 0) {
        fprintf(stderr, "  [%s] ", what);
        fprintf(stderr, fmt, a, b);
        fputc('\n', stderr);
    }
}

static void run_free(run *r)
{
    free(r->ev);
    r->ev = NULL;
    r->n = r->cap = 0;
}

/* Cleared while running the many truncation cuts, which only need counts. */
static int keep_events = 1;

static void run_push(run *r, const hp_event *ev)
{
    sev *s;
    if (!keep_events) {
        r->n++;
        return;
    }
    if (r->n == r->cap) {
        size_t c = r->cap ? r->cap * 2 : 1024;
        sev *g = realloc(r->ev, c * sizeof *g);
        if (!g) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        r->ev = g;
        r->cap = c;
    }
    s = &r->ev[r->n++];
    memset(s, 0, sizeof *s);
    s->kind = (int)ev->kind;
    s->offset = ev->offset;
    s->heap_id = ev->heap_id;
    if (ev->kind == HP_EV_RECORD || ev->kind == HP_EV_RECORD_END) {
        s->tag = ev->rec->tag;
        s->rec_len = ev->rec->length;
        s->rec_time = ev->rec->time;
    } else if (ev->kind == HP_EV_SUBRECORD) {
        s->tag = ev->sub->tag;
        s->sub = *ev->sub;
    }
}

static size_t random_size(uint32_t *seed)
{
    uint32_t r = xorshift(seed);
    switch (r & 3) {
    case 0: return 1 + (r >> 4) % 4;
    case 1: return 1 + (r >> 4) % 64;
    case 2: return 1 + (r >> 4) % 1024;
    default: return 1 + (r >> 4) % 65536;
    }
}

/* Feeds the next chunk as a fresh exact-size copy; returns is_last. */
static int feed_next(hp_parser *p, const uint8_t *buf, size_t len, size_t *pos, const feed_mode *m,
                     uint32_t *seed, uint8_t **chunk)
{
    size_t n;
    int last;
    free(*chunk);
    n = m->fixed ? m->fixed : random_size(seed);
    if (n > len - *pos)
        n = len - *pos;
    *chunk = n ? xmalloc(n) : NULL; /* an empty chunk is fed as NULL, 0 */
    if (n)
        memcpy(*chunk, buf + *pos, n);
    *pos += n;
    last = *pos == len && (!m->empty_last || n == 0);
    hp_parser_feed(p, *chunk, n, last);
    return last;
}

static void check_data(run *r, const hp_event *ev, const uint8_t *buf, size_t len, int one_shot)
{
    if (ev->offset != r->delivered) {
        r->data_bad++;
        diag("event at offset %llu, expected %llu", "data", ev->offset, r->delivered);
    } else if (ev->offset + ev->len > len || (ev->len && memcmp(ev->data, buf + ev->offset, ev->len) != 0)) {
        r->data_bad++;
        diag("event bytes at offset %llu (len %llu) differ from the input", "data", ev->offset, ev->len);
    } else if (one_shot && ev->data != buf + ev->offset) {
        r->shape_bad++;
        diag("one-shot event at %llu copied (len %llu)", "zero-copy", ev->offset, ev->len);
    }
    r->delivered = ev->offset + ev->len;
}

/* Parses buf[0..len) fed as `m` says, recording structural events and
 * checking every event's bytes against the input. */
static void run_parse(run *r, const uint8_t *buf, size_t len, int flags, const feed_mode *m,
                      const hp_alloc *alloc)
{
    hp_parser *p = hp_parser_new(alloc, flags);
    int one_shot = m->fixed == 0 && m->seed == 0 && !m->empty_last;
    uint8_t *chunk = NULL;
    size_t pos = 0;
    uint32_t seed = m->seed;
    int last;
    hp_event ev;

    memset(r, 0, sizeof *r);
    if (!p) {
        r->rc = HP_E_NOMEM;
        return;
    }
    CHECK(hp_parser_header(p) == NULL);
    if (m->resume) {
        hp_parser_resume(p, m->resume, m->start);
        pos = (size_t)m->start;
        r->delivered = m->start;
    }
    if (one_shot) {
        hp_parser_feed(p, buf + pos, len - pos, 1);
        last = 1;
    } else {
        last = feed_next(p, buf, len, &pos, m, &seed, &chunk);
    }
    r->chunks = 1;
    for (;;) {
        hp_error err;
        hp_code rc = hp_parser_next(p, &ev, &err);
        if (rc != HP_OK) {
            hp_error again;
            hp_event ev2;
            r->rc = rc;
            r->err = err;
            /* Errors are sticky, even after more input is fed. */
            if (hp_parser_next(p, &ev2, &again) != rc || again.offset != err.offset || again.tag != err.tag ||
                again.is_sub != err.is_sub || again.need != err.need || again.have != err.have)
                r->sticky_bad++;
            hp_parser_feed(p, buf, len, 1);
            if (hp_parser_next(p, &ev2, &again) != rc || again.offset != err.offset)
                r->sticky_bad++;
            break;
        }
        if (ev.kind == HP_EV_NEED_INPUT) {
            if (last) {
                r->shape_bad++;
                diag("asked for input after the last chunk (offset %llu of %llu)", "need", pos, len);
                break;
            }
            last = feed_next(p, buf, len, &pos, m, &seed, &chunk);
            r->chunks++;
            continue;
        }
        switch (ev.kind) {
        case HP_EV_HEADER:
            r->have_hdr = 1;
            r->hdr = *hp_parser_header(p);
            if (ev.offset != 0 || ev.len != r->hdr.length)
                r->shape_bad++;
            check_data(r, &ev, buf, len, one_shot);
            run_push(r, &ev);
            break;
        case HP_EV_RECORD:
            if (ev.len != 9 || ev.rec->offset != ev.offset || ev.heap_id != 0)
                r->shape_bad++;
            r->rec_count[ev.rec->tag]++;
            r->records++;
            check_data(r, &ev, buf, len, one_shot);
            run_push(r, &ev);
            break;
        case HP_EV_DATA:
            if (ev.rec->length <= HP_WHOLE_MAX && (ev.len != ev.rec->length || ev.offset != ev.rec->offset + 9)) {
                r->shape_bad++;
                diag("DATA of a small record not whole (offset %llu, len %llu)", "whole", ev.offset, ev.len);
            }
            if (ev.len == 0 || ev.offset + ev.len > ev.rec->offset + 9 + ev.rec->length)
                r->shape_bad++;
            r->pieces++;
            check_data(r, &ev, buf, len, one_shot);
            break;
        case HP_EV_SUBRECORD:
            if (ev.offset != ev.sub->offset || ev.len < ev.sub->head_len || ev.len > ev.sub->length ||
                ev.sub->length != ev.sub->head_len + ev.sub->payload_len ||
                (ev.sub->length <= HP_WHOLE_MAX && ev.len != ev.sub->length)) {
                r->shape_bad++;
                diag("SUBRECORD event at %llu has len %llu", "whole", ev.offset, ev.len);
            }
            r->sub_count[ev.sub->tag]++;
            check_data(r, &ev, buf, len, one_shot);
            run_push(r, &ev);
            break;
        case HP_EV_PAYLOAD:
            if (ev.len == 0 || ev.offset <= ev.sub->offset || ev.offset + ev.len > ev.sub->offset + ev.sub->length)
                r->shape_bad++;
            r->pieces++;
            check_data(r, &ev, buf, len, one_shot);
            break;
        case HP_EV_RECORD_END:
            if (r->delivered != ev.rec->offset + 9 + (uint64_t)ev.rec->length)
                r->shape_bad++;
            run_push(r, &ev);
            break;
        case HP_EV_END:
            r->ended = 1;
            if (r->delivered != len || hp_parser_offset(p) != len) {
                r->shape_bad++;
                diag("END after %llu bytes of %llu", "end", r->delivered, len);
            }
            run_push(r, &ev);
            break;
        default:
            r->shape_bad++;
            break;
        }
        if (r->ended)
            break;
    }
    hp_parser_free(p);
    free(chunk);
}

static int sev_eq(const sev *a, const sev *b)
{
    return a->kind == b->kind && a->offset == b->offset && a->heap_id == b->heap_id && a->tag == b->tag &&
           a->rec_len == b->rec_len && a->rec_time == b->rec_time && a->sub.offset == b->sub.offset &&
           a->sub.length == b->sub.length && a->sub.head_len == b->sub.head_len && a->sub.tag == b->sub.tag &&
           a->sub.elem_type == b->sub.elem_type && a->sub.id == b->sub.id && a->sub.class_id == b->sub.class_id &&
           a->sub.ref == b->sub.ref && a->sub.serial == b->sub.serial && a->sub.aux == b->sub.aux &&
           a->sub.count == b->sub.count && a->sub.payload_len == b->sub.payload_len;
}

/* Same outcome and same structural events (kind, offset, tag, sub fields). */
static int runs_same(const run *a, const run *b, const char *what)
{
    size_t i, n = a->n < b->n ? a->n : b->n;
    for (i = 0; i < n; i++)
        if (!sev_eq(&a->ev[i], &b->ev[i])) {
            diag("event %llu differs (offset %llu)", what, i, a->ev[i].offset);
            return 0;
        }
    if (a->n != b->n) {
        diag("%llu events vs %llu", what, a->n, b->n);
        return 0;
    }
    if (a->rc != b->rc || (a->rc && (a->err.offset != b->err.offset || a->err.tag != b->err.tag ||
                                     a->err.is_sub != b->err.is_sub ||
                                     ((a->rc == HP_E_TRUNCATED || a->rc == HP_E_OVERRUN) && a->err.have != b->err.have)))) {
        diag("outcome %llu vs %llu", what, a->rc, b->rc);
        return 0;
    }
    return 1;
}

static int run_clean(const run *r, size_t len)
{
    return r->rc == HP_OK && r->ended && r->delivered == len && !r->data_bad && !r->shape_bad;
}

/* ------------------------------------------------------------------ */
/* 1. Header                                                           */

static hp_code parse_all(const uint8_t *buf, size_t len, const feed_mode *m, hp_error *err, run *r)
{
    run_parse(r, buf, len, HP_PARSE_SUBRECORDS, m, NULL);
    *err = r->err;
    return r->rc;
}

static void test_header(void)
{
    static const char *const magic[] = { "JAVA PROFILE 1.0", "JAVA PROFILE 1.0.1", "JAVA PROFILE 1.0.2",
                                         "JAVA PROFILE 1.0.3" };
    static const feed_mode one_byte = { 1, 0, 0, NULL, 0 };
    uint8_t h[64];
    int v, idsz;

    for (v = 0; v < 4; v++)
        for (idsz = 4; idsz <= 8; idsz += 4) {
            size_t mlen = strlen(magic[v]), n, k;
            uint64_t ts = 0x0123456789ABCDEFULL + (uint64_t)v;
            hp_header hd;
            hp_error err;
            run r;
            /* Written by hand, not by hp_header_write. */
            memcpy(h, magic[v], mlen + 1);
            h[mlen + 1] = 0;
            h[mlen + 2] = 0;
            h[mlen + 3] = 0;
            h[mlen + 4] = (uint8_t)idsz;
            for (k = 0; k < 8; k++)
                h[mlen + 5 + k] = (uint8_t)(ts >> (56 - 8 * k));
            n = mlen + 13;
            memset(&hd, 0, sizeof hd);
            CHECK(hp_header_parse(h, n, &hd, &err) == HP_OK);
            CHECK_EQ_U64(hd.version, v);
            CHECK_EQ_U64(hd.id_size, idsz);
            CHECK_EQ_U64(hd.timestamp, ts);
            CHECK_EQ_U64(hd.length, n);
            CHECK(strcmp(hd.magic, magic[v]) == 0);
            /* hp_header_write produces the same bytes. */
            {
                uint8_t w[HP_HEADER_MAX];
                CHECK_EQ_U64(hp_header_write(w, v, idsz, ts), n);
                CHECK(memcmp(w, h, n) == 0);
            }
            /* The parser: a HEADER event then END; one chunk and byte by byte. */
            CHECK(parse_all(h, n, &ONE_SHOT, &err, &r) == HP_OK);
            CHECK(run_clean(&r, n) && r.have_hdr && r.hdr.id_size == idsz && r.hdr.timestamp == ts &&
                  r.hdr.version == v && r.n == 2 && r.ev[0].kind == HP_EV_HEADER && r.ev[1].kind == HP_EV_END);
            run_free(&r);
            CHECK(parse_all(h, n, &one_byte, &err, &r) == HP_OK);
            CHECK(run_clean(&r, n) && r.hdr.timestamp == ts && r.n == 2);
            run_free(&r);
            /* Cut at every length: TRUNCATED naming the header, fed as final
             * input in one piece or byte by byte. */
            for (k = 0; k < n; k++) {
                hp_header unused;
                uint8_t *cut = xmalloc(k);
                hp_code rc;
                memcpy(cut, h, k);
                rc = hp_header_parse(cut, k, &unused, &err);
                CHECK(rc == HP_E_TRUNCATED && err.need > k && err.need <= HP_HEADER_MAX);
                rc = parse_all(cut, k, &ONE_SHOT, &err, &r);
                CHECK(rc == HP_E_TRUNCATED && err.offset == 0 && err.tag == -1 && err.is_sub == 0 &&
                      err.have == k && err.need > k && err.need <= HP_HEADER_MAX && !r.sticky_bad);
                run_free(&r);
                rc = parse_all(cut, k, &one_byte, &err, &r);
                CHECK(rc == HP_E_TRUNCATED && err.offset == 0 && err.tag == -1 && err.have == k && err.need > k);
                run_free(&r);
                free(cut);
            }
        }

    /* Not HPROF: FORMAT, whatever the length, never TRUNCATED. */
    {
        static const uint8_t gzip[] = { 0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x4b, 0x4c,
                                        0x4a, 0x06, 0x00, 0xc2, 0x41, 0x24, 0x35, 0x03, 0x00, 0x00, 0x00, 0x00,
                                        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 };
        static const char tailor[] = "JAVA PROFILE 6.0.1\0\0\0\0\x08\0\0\0\0\0\0\0\0";
        static const char text[] = "Hello, this is plain text and not a heap dump at all, sorry.";
        static const char v104[] = "JAVA PROFILE 1.0.4\0\0\0\0\x04\0\0\0\0\0\0\0\0";
        static const char v1021[] = "JAVA PROFILE 1.0.21\0\0\0\x04\0\0\0\0\0\0\0\0";
        static const char v10x[] = "JAVA PROFILE 1.0X\0\0\0\0\x04\0\0\0\0\0\0\0\0";
        static const char lower[] = "java profile 1.0.2\0\0\0\0\x04\0\0\0\0\0\0\0\0";
        struct { const uint8_t *p; size_t n; size_t min_len; } bad[] = {
            { gzip, sizeof gzip, 1 },
            { (const uint8_t *)tailor, sizeof tailor - 1, 14 },
            { (const uint8_t *)text, sizeof text - 1, 1 },
            { (const uint8_t *)v104, sizeof v104 - 1, 19 },
            { (const uint8_t *)v1021, sizeof v1021 - 1, 19 },
            { (const uint8_t *)v10x, sizeof v10x - 1, 18 },
            { (const uint8_t *)lower, sizeof lower - 1, 1 },
        };
        size_t i, k;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            hp_header hd;
            hp_error err;
            run r;
            CHECK(hp_header_parse(bad[i].p, bad[i].n, &hd, &err) == HP_E_FORMAT);
            CHECK(err.code == HP_E_FORMAT && err.tag == -1 && err.detail != NULL);
            CHECK(parse_all(bad[i].p, bad[i].n, &ONE_SHOT, &err, &r) == HP_E_FORMAT && r.n == 0 && !r.sticky_bad);
            run_free(&r);
            CHECK(parse_all(bad[i].p, bad[i].n, &one_byte, &err, &r) == HP_E_FORMAT && r.n == 0);
            run_free(&r);
            /* Every prefix long enough to show the difference is FORMAT too,
             * in one piece or in chunks (the input ending before the guessed
             * header length must not turn it into TRUNCATED). */
            for (k = bad[i].min_len; k <= bad[i].n; k++) {
                static const feed_mode seventeen = { 17, 0, 0, NULL, 0 };
                static const feed_mode tail_empty = { 5, 0, 1, NULL, 0 };
                uint8_t *cut = xmalloc(k);
                memcpy(cut, bad[i].p, k);
                CHECK(hp_header_parse(cut, k, &hd, &err) == HP_E_FORMAT);
                CHECK(parse_all(cut, k, &ONE_SHOT, &err, &r) == HP_E_FORMAT);
                run_free(&r);
                CHECK(parse_all(cut, k, &one_byte, &err, &r) == HP_E_FORMAT);
                run_free(&r);
                CHECK(parse_all(cut, k, &seventeen, &err, &r) == HP_E_FORMAT);
                run_free(&r);
                CHECK(parse_all(cut, k, &tail_empty, &err, &r) == HP_E_FORMAT);
                run_free(&r);
                free(cut);
            }
        }
    }

    /* Identifier sizes other than 4 and 8. */
    {
        static const uint32_t sizes[] = { 0, 1, 2, 5, 7, 16, 0x04000000u, 0xFFFFFFFFu };
        size_t i;
        for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            hp_header hd;
            hp_error err;
            run r;
            size_t n = hp_header_write(h, 2, 4, TS_MS);
            hp_put32(h + 19, sizes[i]);
            CHECK(hp_header_parse(h, n, &hd, &err) == HP_E_FORMAT);
            CHECK(parse_all(h, n, &ONE_SHOT, &err, &r) == HP_E_FORMAT && err.tag == -1);
            run_free(&r);
            CHECK(parse_all(h, n, &one_byte, &err, &r) == HP_E_FORMAT);
            run_free(&r);
        }
    }
}

/* ------------------------------------------------------------------ */
/* 2. The synthetic dumps                                              */

/* The events of a run against what the builder wrote. */
static void check_against_synth(const synth *S, const run *r)
{
    size_t i, ri = 0, si = 0, ends = 0;
    int in_rec = 0;
    for (i = 0; i < r->n; i++) {
        const sev *e = &r->ev[i];
        switch (e->kind) {
        case HP_EV_HEADER:
            CHECK_EQ_U64(e->offset, 0);
            break;
        case HP_EV_RECORD:
            CHECK(!in_rec);
            in_rec = 1;
            if (ri >= S->nrec) {
                CHECK(ri < S->nrec);
                return;
            }
            CHECK_EQ_U64(e->offset, S->recs[ri].offset);
            CHECK_EQ_U64(e->tag, S->recs[ri].tag);
            CHECK_EQ_U64(e->rec_len, S->recs[ri].length);
            CHECK_EQ_U64(e->rec_time, S->recs[ri].time);
            CHECK_EQ_U64(e->heap_id, 0);
            ri++;
            break;
        case HP_EV_SUBRECORD: {
            const hp_subrecord *x, *a = &e->sub;
            if (si >= S->nsub) {
                CHECK(si < S->nsub);
                return;
            }
            x = &S->subs[si];
            CHECK_EQ_U64(e->offset, x->offset);
            CHECK_EQ_U64(a->offset, x->offset);
            CHECK_EQ_U64(a->tag, x->tag);
            CHECK_EQ_U64(a->id, x->id);
            CHECK_EQ_U64(a->class_id, x->class_id);
            CHECK_EQ_U64(a->ref, x->ref);
            CHECK_EQ_U64(a->serial, x->serial);
            CHECK_EQ_U64(a->aux, x->aux);
            CHECK_EQ_U64(a->count, x->count);
            CHECK_EQ_U64(a->elem_type, x->elem_type);
            CHECK_EQ_U64(a->head_len, x->head_len);
            CHECK_EQ_U64(a->length, x->length);
            CHECK_EQ_U64(a->payload_len, x->payload_len);
            CHECK_EQ_U64(e->heap_id, S->sub_heap[si]);
            si++;
            break;
        }
        case HP_EV_RECORD_END:
            CHECK(in_rec);
            in_rec = 0;
            ends++;
            CHECK_EQ_U64(e->offset, S->recs[ri - 1].offset + 9 + S->recs[ri - 1].length);
            break;
        case HP_EV_END:
            CHECK_EQ_U64(e->offset, S->b.len);
            break;
        default:
            CHECK(0);
        }
    }
    CHECK_EQ_U64(ri, S->nrec);
    CHECK_EQ_U64(si, S->nsub);
    CHECK_EQ_U64(ends, S->nrec);
}

/* The decoder on its own: every sub-record from exactly its bytes, and from
 * every shorter prefix of its head (TRUNCATED with a growing `need`). */
static void check_decoder(const synth *S)
{
    size_t i, li = 0;
    for (i = 0; i < S->nsub; i++) {
        const hp_subrecord *x = &S->subs[i];
        const uint8_t *p = S->b.d + x->offset;
        hp_subrecord out;
        hp_error err;
        uint64_t need = 0, last_need = 0;
        size_t avail;
        int ok = 1;
        /* Byte by byte, then in strides through a big CLASS_DUMP head. */
        for (avail = 1; avail < x->head_len; avail += avail < 600 ? 1 : 4099) {
            uint8_t *cut = xmalloc(avail);
            memcpy(cut, p, avail);
            need = 0;
            if (hp_subrecord_decode(cut, avail, S->id, &out, &need, &err) != HP_E_TRUNCATED || need <= avail ||
                need > x->head_len || need < last_need)
                ok = 0;
            last_need = need;
            free(cut);
        }
        CHECK(ok);
        /* Exactly the head: decoded, payload not needed. */
        {
            uint8_t *head = xmalloc(x->head_len);
            memcpy(head, p, x->head_len);
            CHECK(hp_subrecord_decode(head, x->head_len, S->id, &out, &need, &err) == HP_OK);
            CHECK(out.tag == x->tag && out.id == x->id && out.class_id == x->class_id && out.ref == x->ref &&
                  out.serial == x->serial && out.aux == x->aux && out.count == x->count &&
                  out.elem_type == x->elem_type && out.head_len == x->head_len && out.length == x->length &&
                  out.payload_len == x->payload_len);
            if (x->tag == HP_SUB_CLASS_DUMP) {
                hp_class_layout l;
                const hp_class_layout *w = &S->lay[li++];
                CHECK(hp_class_layout_decode(head, x->head_len, S->id, &l) == HP_OK);
                CHECK(hp_class_layout_decode(head, x->head_len - 1, S->id, &l) == HP_E_CORRUPT);
                CHECK_EQ_U64(l.const_off, w->const_off);
                CHECK_EQ_U64(l.const_off, 1 + 7 * S->id + 8);
                CHECK_EQ_U64(l.statics_off, w->statics_off);
                CHECK_EQ_U64(l.fields_off, w->fields_off);
                CHECK_EQ_U64(l.n_const, w->n_const);
                CHECK_EQ_U64(l.n_statics, w->n_statics);
                CHECK_EQ_U64(l.n_fields, w->n_fields);
                CHECK_EQ_U64(l.signers, w->signers);
                CHECK_EQ_U64(l.protection_domain, w->protection_domain);
                CHECK_EQ_U64(l.reserved1, w->reserved1);
                CHECK_EQ_U64(l.reserved2, w->reserved2);
                /* The fields table runs to the end of the head. */
                CHECK_EQ_U64(l.fields_off + 2 + (uint64_t)l.n_fields * (S->id + 1), x->head_len);
            }
            free(head);
        }
    }
    CHECK_EQ_U64(li, S->nlay);
}

static void test_synthetic(int id_size)
{
    static const size_t fixed[] = { 1, 2, 3, 7, 64, 4096 };
    synth S;
    run ref, r;
    size_t i;
    char what[64];

    synth_build(&S, id_size);
    check_decoder(&S);
    run_parse(&ref, S.b.d, S.b.len, HP_PARSE_SUBRECORDS, &ONE_SHOT, NULL);
    CHECK(run_clean(&ref, S.b.len));
    check_against_synth(&S, &ref);
    CHECK_EQ_U64(ref.hdr.id_size, id_size);
    CHECK_EQ_U64(ref.hdr.timestamp, TS_MS);
    CHECK_EQ_U64(ref.rec_count[0x99], 1);
    CHECK_EQ_U64(ref.rec_count[0x42], 1);
    for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        feed_mode m = { fixed[i], 0, i == 1, NULL, 0 };
        run_parse(&r, S.b.d, S.b.len, HP_PARSE_SUBRECORDS, &m, NULL);
        snprintf(what, sizeof what, "synth id%d chunk %zu", id_size, fixed[i]);
        CHECK(run_clean(&r, S.b.len) && runs_same(&ref, &r, what));
        run_free(&r);
    }
    for (i = 1; i <= 20; i++) {
        feed_mode m = { 0, (uint32_t)(i * 7919u), i % 2 == 0, NULL, 0 };
        run_parse(&r, S.b.d, S.b.len, HP_PARSE_SUBRECORDS, &m, NULL);
        CHECK(run_clean(&r, S.b.len) && runs_same(&ref, &r, "synth random"));
        run_free(&r);
    }
    /* hp_parser_resume: starting at any record boundary with the header
     * known gives the reference events from that record on. */
    for (i = 0; i < S.nrec; i++) {
        feed_mode m = { (i % 3) * 5, 0, 0, NULL, 0 };
        size_t j = 0, k;
        int same = 1;
        m.resume = &ref.hdr;
        m.start = S.recs[i].offset;
        run_parse(&r, S.b.d, S.b.len, HP_PARSE_SUBRECORDS, &m, NULL);
        while (j < ref.n && !(ref.ev[j].kind == HP_EV_RECORD && ref.ev[j].offset == S.recs[i].offset))
            j++;
        CHECK(run_clean(&r, S.b.len) && !r.have_hdr && j < ref.n && r.n == ref.n - j);
        for (k = 0; k < r.n && j + k < ref.n; k++)
            same = same && sev_eq(&r.ev[k], &ref.ev[j + k]);
        CHECK(same);
        run_free(&r);
    }
    /* An empty final feed as NULL, 0: TRUNCATED header, no undefined behaviour. */
    {
        hp_parser *p = hp_parser_new(NULL, HP_PARSE_SUBRECORDS);
        hp_event ev;
        hp_error err;
        hp_parser_feed(p, NULL, 0, 0);
        CHECK(hp_parser_next(p, &ev, &err) == HP_OK && ev.kind == HP_EV_NEED_INPUT);
        hp_parser_feed(p, NULL, 0, 1);
        CHECK(hp_parser_next(p, &ev, &err) == HP_E_TRUNCATED && err.tag == -1 && err.have == 0);
        hp_parser_free(p);
    }
    /* Without HP_PARSE_SUBRECORDS heap records are plain DATA. */
    run_parse(&r, S.b.d, S.b.len, 0, &ONE_SHOT, NULL);
    CHECK(run_clean(&r, S.b.len));
    CHECK_EQ_U64(r.records, S.nrec);
    for (i = 0; i < 256; i++)
        CHECK_EQ_U64(r.sub_count[i], 0);
    run_free(&r);
    run_free(&ref);
    free(S.b.d);
}

static void test_synthetic_big(void)
{
    static const size_t fixed[] = { 3, 4096, 65536 };
    synth S;
    run ref, r;
    size_t i;

    synth_build_big(&S);
    check_decoder(&S);
    run_parse(&ref, S.b.d, S.b.len, HP_PARSE_SUBRECORDS, &ONE_SHOT, NULL);
    CHECK(run_clean(&ref, S.b.len));
    check_against_synth(&S, &ref);
    for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        feed_mode m = { fixed[i], 0, 0, NULL, 0 };
        track_max = 0;
        run_parse(&r, S.b.d, S.b.len, HP_PARSE_SUBRECORDS, &m, &track_alloc);
        CHECK(run_clean(&r, S.b.len) && runs_same(&ref, &r, "big chunked"));
        CHECK(r.pieces > 0); /* the big units came in pieces */
        /* The carry holds at most the CLASS_DUMP head or HP_WHOLE_MAX. */
        CHECK(track_max <= 2 * HP_WHOLE_MAX);
        run_free(&r);
    }
    {
        feed_mode m = { 0, 12345, 0, NULL, 0 };
        run_parse(&r, S.b.d, S.b.len, HP_PARSE_SUBRECORDS, &m, NULL);
        CHECK(run_clean(&r, S.b.len) && runs_same(&ref, &r, "big random"));
        run_free(&r);
    }
    {
        feed_mode m = { 4096, 0, 0, NULL, 0 };
        run_parse(&r, S.b.d, S.b.len, 0, &m, NULL);
        CHECK(run_clean(&r, S.b.len) && r.records == S.nrec && r.pieces > 3);
        run_free(&r);
    }
    run_free(&ref);
    free(S.b.d);
}

/* ------------------------------------------------------------------ */
/* 4. Truncation: what a cut at byte k must report                     */

typedef struct unit {
    uint64_t off, end;
    uint32_t head_len;
    int tag;
    int heap; /* records: body split into sub-records */
} unit;

typedef struct layout {
    uint64_t hlen, len;
    unit *recs, *subs;
    size_t nrec, nsub;
} layout;

static void layout_build(layout *L, const run *ref, size_t len)
{
    size_t i;
    memset(L, 0, sizeof *L);
    L->hlen = ref->hdr.length;
    L->len = len;
    L->recs = xmalloc(ref->n * sizeof *L->recs);
    L->subs = xmalloc(ref->n * sizeof *L->subs);
    for (i = 0; i < ref->n; i++) {
        const sev *e = &ref->ev[i];
        if (e->kind == HP_EV_RECORD) {
            unit *u = &L->recs[L->nrec++];
            u->off = e->offset;
            u->end = e->offset + 9 + e->rec_len;
            u->head_len = 9;
            u->tag = e->tag;
            u->heap = hp_is_heap_tag(e->tag);
        } else if (e->kind == HP_EV_SUBRECORD) {
            unit *u = &L->subs[L->nsub++];
            u->off = e->offset;
            u->end = e->offset + e->sub.length;
            u->head_len = e->sub.head_len;
            u->tag = e->tag;
            u->heap = 0;
        }
    }
}

static void layout_free(layout *L)
{
    free(L->recs);
    free(L->subs);
}

/* Index of the last unit starting at or before k, or (size_t)-1. */
static size_t unit_at(const unit *u, size_t n, uint64_t k)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u[mid].off <= k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : (size_t)-1;
}

typedef struct expect {
    int clean;      /* a cut at a record boundary is a valid, shorter dump */
    size_t records; /* then: how many records it holds */
    uint64_t off;
    int tag, is_sub;
    uint64_t need;  /* exact, or 0 when only need > have is promised */
    uint64_t need_max;
    uint64_t have;
} expect;

static expect expect_cut(const layout *L, uint64_t k)
{
    expect x;
    size_t ri, si;
    const unit *r;
    memset(&x, 0, sizeof x);
    if (k < L->hlen) {
        x.tag = -1;
        x.have = k;
        x.need_max = HP_HEADER_MAX;
        return x;
    }
    ri = unit_at(L->recs, L->nrec, k);
    if (ri == (size_t)-1 || L->recs[ri].off == k || k >= L->len) {
        x.clean = 1;
        x.records = ri == (size_t)-1 ? 0 : (L->recs[ri].off == k ? ri : ri + 1);
        return x;
    }
    r = &L->recs[ri];
    x.off = r->off;
    x.tag = r->tag;
    x.have = k - r->off;
    x.need = r->end - r->off;
    if (k < r->off + 9) {
        x.need = 9;
        return x;
    }
    if (!r->heap)
        return x;
    si = unit_at(L->subs, L->nsub, k);
    if (si == (size_t)-1 || L->subs[si].off < r->off + 9 || L->subs[si].off == k || k >= L->subs[si].end)
        return x; /* at a sub-record boundary: the record is what was cut */
    x.off = L->subs[si].off;
    x.tag = L->subs[si].tag;
    x.is_sub = 1;
    x.have = k - L->subs[si].off;
    if (x.have >= L->subs[si].head_len) {
        x.need = L->subs[si].end - L->subs[si].off; /* inside the payload: the whole sub-record */
    } else {
        x.need = L->subs[si].tag == HP_SUB_CLASS_DUMP ? 0 : L->subs[si].head_len;
        x.need_max = L->subs[si].end - L->subs[si].off;
    }
    return x;
}

static int cut_failures;

/* Feeds buf[0..k) as the whole input; checks the outcome against the layout. */
static int check_cut(const uint8_t *buf, uint64_t k, const layout *L, const feed_mode *m, const char *name)
{
    uint8_t *cut = xmalloc((size_t)k);
    expect x = expect_cut(L, k);
    run r;
    int ok;
    memcpy(cut, buf, (size_t)k);
    keep_events = 0;
    run_parse(&r, cut, (size_t)k, HP_PARSE_SUBRECORDS, m, NULL);
    keep_events = 1;
    if (x.clean) {
        ok = run_clean(&r, (size_t)k) && r.records == x.records;
    } else {
        ok = r.rc == HP_E_TRUNCATED && r.err.code == HP_E_TRUNCATED && r.err.offset == x.off &&
             r.err.tag == x.tag && r.err.is_sub == x.is_sub && r.err.have == x.have && r.err.need > r.err.have &&
             !r.sticky_bad && !r.data_bad && !r.shape_bad && r.delivered <= x.off + x.have;
        /* One chunk knows the exact need; pieces may know less of a head. */
        if (x.need && (m->fixed == 0 && m->seed == 0 && !m->empty_last) && r.err.need != x.need)
            ok = 0;
        if (x.need_max && r.err.need > x.need_max)
            ok = 0;
    }
    if (!ok && cut_failures++ < 10) {
        char msg[160];
        hp_error_format(&r.err, msg, sizeof msg);
        fprintf(stderr, "  %s cut at %llu (chunk %zu seed %u): rc %d [%s]; expected %s off %llu tag %d sub %d "
                        "need %llu have %llu\n",
                name, (unsigned long long)k, m->fixed, m->seed, (int)r.rc, r.rc ? msg : "ok",
                x.clean ? "clean end" : "truncated", (unsigned long long)x.off, x.tag, x.is_sub,
                (unsigned long long)x.need, (unsigned long long)x.have);
    }
    run_free(&r);
    free(cut);
    return ok;
}

/* Cut points covering every boundary class, plus every early offset. */
static void test_cuts(const uint8_t *buf, size_t len, const run *ref, int id_size, const char *name,
                      uint64_t exhaustive)
{
    static const feed_mode seven = { 7, 0, 0, NULL, 0 };
    layout L;
    uint64_t *pts;
    size_t np = 0, cap = 1 << 16, i;
    uint32_t seed = 99;
    int seen_sub[256], seen_rec[256];
    size_t classes[8] = { 0 };

    layout_build(&L, ref, len);
    pts = xmalloc(cap * sizeof *pts);
#define ADD(v) ((uint64_t)(v) < len && np < cap ? (void)(pts[np++] = (uint64_t)(v)) : (void)0)
    memset(seen_sub, 0, sizeof seen_sub);
    memset(seen_rec, 0, sizeof seen_rec);
    for (i = 0; i < L.hlen; i++)
        ADD(i), classes[0]++;
    /* Records: the first, the last and the first two of each tag. */
    for (i = 0; i < L.nrec; i++) {
        const unit *u = &L.recs[i];
        int j;
        if (!(i == 0 || i + 1 == L.nrec || seen_rec[u->tag]++ < 2 || i % (L.nrec / 5 + 1) == 0))
            continue;
        ADD(u->off), classes[1]++;
        for (j = 1; j < 9; j++)
            ADD(u->off + j), classes[2]++;
        if (!u->heap && u->end > u->off + 9) {
            ADD(u->off + 9), ADD(u->off + 9 + (u->end - u->off - 9) / 2), ADD(u->end - 1);
            classes[3] += 3;
        }
        if (u->heap)
            ADD(u->off + 9), ADD(u->end - 1);
    }
    /* Sub-records: boundaries, heads byte by byte, payloads, class tables. */
    for (i = 0; i < L.nsub; i++) {
        const unit *u = &L.subs[i];
        uint64_t j;
        if (!(seen_sub[u->tag]++ < 2 || i % (L.nsub / 5 + 1) == 0 || i + 1 == L.nsub))
            continue;
        ADD(u->off), classes[4]++;
        for (j = 1; j < u->head_len && j < 64; j++)
            ADD(u->off + j), classes[5]++;
        if (u->end > u->off + u->head_len) {
            ADD(u->off + u->head_len), ADD(u->off + u->head_len + (u->end - u->off - u->head_len) / 2),
                ADD(u->end - 1);
            classes[6] += 3;
        }
        if (u->tag == HP_SUB_CLASS_DUMP) {
            hp_class_layout cl;
            CHECK(hp_class_layout_decode(buf + u->off, u->head_len, id_size, &cl) == HP_OK);
            ADD(u->off + cl.const_off + 1), ADD(u->off + cl.const_off + 2), ADD(u->off + cl.const_off + 3);
            ADD(u->off + cl.statics_off), ADD(u->off + cl.statics_off + 1), ADD(u->off + cl.statics_off + 2);
            ADD(u->off + cl.statics_off + 2 + (uint64_t)id_size), ADD(u->off + cl.statics_off + 3 + (uint64_t)id_size);
            ADD(u->off + cl.fields_off), ADD(u->off + cl.fields_off + 1), ADD(u->off + cl.fields_off + 2);
            ADD(u->off + cl.fields_off + 2 + (uint64_t)id_size), ADD(u->end - 1);
            ADD(u->off + (cl.statics_off + cl.fields_off) / 2);
            classes[7] += 14;
        }
    }
    for (i = 0; i < 64; i++)
        ADD(xorshift(&seed) % len);
#undef ADD
    /* Every class must have been reached for a dump with heap records. */
    for (i = 0; i < 8; i++)
        if (i != 3 && i != 7)
            CHECK(classes[i] > 0);
    if (L.nsub)
        CHECK(classes[6] > 0);

    cut_failures = 0;
    for (i = 0; i < np; i++) {
        feed_mode m = { 0, (uint32_t)(i + 1), (int)(i % 5 == 0), NULL, 0 };
        CHECK(check_cut(buf, pts[i], &L, &ONE_SHOT, name));
        CHECK(check_cut(buf, pts[i], &L, &m, name));
    }
    for (i = 0; i < exhaustive && i < len; i++) {
        CHECK(check_cut(buf, i, &L, &ONE_SHOT, name));
        if (i < exhaustive / 2)
            CHECK(check_cut(buf, i, &L, &seven, name));
    }
    printf("  %s: %zu sampled cuts, %llu exhaustive\n", name, np,
           (unsigned long long)(exhaustive < len ? exhaustive : len));
    free(pts);
    layout_free(&L);
}

/* ------------------------------------------------------------------ */
/* 5. Corruption                                                        */

static hp_code parse_copy(const uint8_t *buf, size_t len, const feed_mode *m, run *r)
{
    uint8_t *copy = xmalloc(len);
    memcpy(copy, buf, len);
    track_max = 0;
    run_parse(r, copy, len, HP_PARSE_SUBRECORDS, m, &track_alloc);
    free(copy);
    return r->rc;
}

static const hp_subrecord *find_sub(const synth *S, int tag, int nth)
{
    size_t i;
    for (i = 0; i < S->nsub; i++)
        if (S->subs[i].tag == tag && nth-- == 0)
            return &S->subs[i];
    return NULL;
}

/* Index of the record holding offset `off`. */
static const xrec *rec_of(const synth *S, uint64_t off)
{
    size_t i;
    for (i = S->nrec; i-- > 0;)
        if (S->recs[i].offset <= off)
            return &S->recs[i];
    return NULL;
}

/* Parses a mutated copy one-shot and in 5-byte chunks; both must fail with
 * `code` at `off` (a sub-record when is_sub) and agree. */
static void expect_error(const uint8_t *buf, size_t len, hp_code code, uint64_t off, int tag, int is_sub,
                         const char *what)
{
    static const feed_mode five = { 5, 0, 0, NULL, 0 };
    run a, b;
    int ok;
    parse_copy(buf, len, &ONE_SHOT, &a);
    ok = a.rc == code && a.err.code == code && a.err.offset == off && a.err.tag == tag && a.err.is_sub == is_sub &&
         !a.sticky_bad && !a.data_bad && track_max < (1u << 16);
    parse_copy(buf, len, &five, &b);
    ok = ok && b.rc == code && b.err.offset == off && b.err.tag == tag && b.err.is_sub == is_sub && !b.sticky_bad &&
         !b.data_bad && track_max < (1u << 16) && runs_same(&a, &b, what);
    if (!ok && diag_budget-- > 0)
        fprintf(stderr, "  [%s] got rc %d/%d at %llu tag %d sub %d; expected rc %d at %llu tag %d sub %d "
                        "(largest allocation %zu)\n",
                what, (int)a.rc, (int)b.rc, (unsigned long long)a.err.offset, a.err.tag, a.err.is_sub, (int)code,
                (unsigned long long)off, tag, is_sub, track_max);
    CHECK(ok);
    run_free(&a);
    run_free(&b);
}

static void test_corruption(int id_size)
{
    static const uint8_t bad_tags[] = { 0x00, 0x09, 0x0A, 0x1F, 0x24, 0x42, 0x88, 0x8F, 0x91, 0xC2, 0xC4, 0xFD };
    static const uint8_t bad_types[] = { 0, 1, 3, 12, 0x80, 0xFF };
    synth S;
    uint8_t *m;
    size_t len, i, j;
    const hp_subrecord *s;
    run r;

    synth_build(&S, id_size);
    len = S.b.len;
    m = xmalloc(len);

    /* An unknown sub-tag in place of each kind of sub-record. */
    for (i = 0; i < S.nsub; i += 3)
        for (j = 0; j < sizeof bad_tags; j++) {
            memcpy(m, S.b.d, len);
            m[S.subs[i].offset] = bad_tags[j];
            expect_error(m, len, HP_E_CORRUPT, S.subs[i].offset, bad_tags[j], 1, "bad sub-tag");
        }
    /* ... and the events before it were all delivered. */
    s = find_sub(&S, HP_SUB_INSTANCE_DUMP, 2); /* right after a HEAP_DUMP_INFO */
    memcpy(m, S.b.d, len);
    m[s->offset] = 0x42;
    parse_copy(m, len, &ONE_SHOT, &r);
    CHECK(r.rc == HP_E_CORRUPT && r.n > 0 && r.ev[r.n - 1].kind == HP_EV_SUBRECORD &&
          r.ev[r.n - 1].offset + r.ev[r.n - 1].sub.length == s->offset && r.delivered == s->offset);
    run_free(&r);

    /* Absurd counts: OVERRUN, and no allocation of that size. */
    s = find_sub(&S, HP_SUB_OBJ_ARRAY_DUMP, 0);
    memcpy(m, S.b.d, len);
    hp_put32(m + s->offset + 1 + id_size + 4, 0x7fffffffu);
    expect_error(m, len, HP_E_OVERRUN, s->offset, HP_SUB_OBJ_ARRAY_DUMP, 1, "obj array count");
    parse_copy(m, len, &ONE_SHOT, &r);
    {
        const xrec *rec = rec_of(&S, s->offset);
        CHECK_EQ_U64(r.err.need, s->head_len + 0x7fffffffULL * (uint64_t)id_size);
        CHECK_EQ_U64(r.err.have, rec->offset + 9 + rec->length - s->offset);
    }
    run_free(&r);
    for (i = 0; i < 3; i++) {
        s = find_sub(&S, HP_SUB_PRIM_ARRAY_DUMP, (int)i);
        memcpy(m, S.b.d, len);
        hp_put32(m + s->offset + 1 + id_size + 4, i == 2 ? 0xFFFFFFFFu : 0x7fffffffu);
        expect_error(m, len, HP_E_OVERRUN, s->offset, HP_SUB_PRIM_ARRAY_DUMP, 1, "prim array count");
    }
    s = find_sub(&S, HP_SUB_INSTANCE_DUMP, 0);
    memcpy(m, S.b.d, len);
    hp_put32(m + s->offset + 1 + 2 * id_size + 4, 0xFFFFFFFFu);
    expect_error(m, len, HP_E_OVERRUN, s->offset, HP_SUB_INSTANCE_DUMP, 1, "instance count");
    parse_copy(m, len, &ONE_SHOT, &r);
    CHECK_EQ_U64(r.err.need, s->head_len + 0xFFFFFFFFULL);
    run_free(&r);
    /* A count only just too big is OVERRUN too, not a read past the record. */
    memcpy(m, S.b.d, len);
    {
        const xrec *rec = rec_of(&S, s->offset);
        uint64_t room = rec->offset + 9 + rec->length - s->offset - s->head_len;
        hp_put32(m + s->offset + 1 + 2 * id_size + 4, (uint32_t)room + 1);
        expect_error(m, len, HP_E_OVERRUN, s->offset, HP_SUB_INSTANCE_DUMP, 1, "instance count + 1");
        hp_put32(m + s->offset + 1 + 2 * id_size + 4, (uint32_t)room);
        parse_copy(m, len, &ONE_SHOT, &r);
        CHECK(r.rc == HP_OK); /* it swallows the rest of its record, which is legal */
        CHECK(!r.data_bad);
        run_free(&r);
    }

    /* Bad element and field types. */
    for (j = 0; j < sizeof bad_types; j++) {
        for (i = 0; i < 2; i++) {
            s = find_sub(&S, i ? HP_SUB_PRIM_ARRAY_NODATA : HP_SUB_PRIM_ARRAY_DUMP, 1);
            memcpy(m, S.b.d, len);
            m[s->offset + 1 + id_size + 8] = bad_types[j];
            expect_error(m, len, HP_E_CORRUPT, s->offset, s->tag, 1, "bad element type");
        }
        /* Object is not a primitive element type either. */
        memcpy(m, S.b.d, len);
        m[s->offset + 1 + id_size + 8] = HP_T_OBJECT;
        expect_error(m, len, HP_E_CORRUPT, s->offset, s->tag, 1, "object element type");
        /* Each table of the big CLASS_DUMP, first and last entry. */
        s = find_sub(&S, HP_SUB_CLASS_DUMP, 1);
        {
            const hp_class_layout *l = &S.lay[1];
            size_t at[4];
            at[0] = s->offset + l->const_off + 2 + 2;                   /* first constant's type */
            at[1] = s->offset + l->statics_off + 2 + (size_t)id_size;   /* first static's type */
            at[2] = s->offset + l->fields_off + 2 + (size_t)id_size;    /* first field's type */
            at[3] = s->offset + s->length - 1;                          /* last field's type */
            for (i = 0; i < 4; i++) {
                memcpy(m, S.b.d, len);
                m[at[i]] = bad_types[j];
                expect_error(m, len, HP_E_CORRUPT, s->offset, HP_SUB_CLASS_DUMP, 1, "bad field type");
            }
        }
    }

    /* A bad type early in a table that claims more entries than the record
     * can hold: the bad type is what one piece sees first, so it is CORRUPT
     * in chunks too (a size guessed from a prefix must not say OVERRUN). */
    {
        const hp_class_layout *l = &S.lay[1];
        s = find_sub(&S, HP_SUB_CLASS_DUMP, 1);
        for (i = 0; i < 3; i++) {
            size_t table = s->offset + (i == 0 ? l->const_off : i == 1 ? l->statics_off : l->fields_off);
            size_t key = i == 0 ? 2 : (size_t)id_size;
            memcpy(m, S.b.d, len);
            hp_put16(m + table, 0xFFFF);
            m[table + 2 + key] = 0x77;
            expect_error(m, len, HP_E_CORRUPT, s->offset, HP_SUB_CLASS_DUMP, 1, "bad type, huge table");
            /* The second entry's type, so that the first one is a prefix. */
            memcpy(m, S.b.d, len);
            hp_put16(m + table, 0xFFFF);
            if (i == 2)
                m[table + 2 + 2 * (key + 1) - 1] = 0x77;
            else
                m[table + 2 + key + 1 + (size_t)hp_type_size(m[table + 2 + key], id_size) + key] = 0x77;
            expect_error(m, len, HP_E_CORRUPT, s->offset, HP_SUB_CLASS_DUMP, 1, "bad 2nd type, huge table");
        }
    }

    /* A segment shorter than its content: OVERRUN at the sub-record that
     * crosses its end, however much is missing. */
    {
        size_t ri;
        CHECK(S.recs[8].tag == HP_TAG_HEAP_DUMP && S.recs[9].tag == HP_TAG_HEAP_DUMP_SEGMENT &&
              S.recs[10].tag == HP_TAG_HEAP_DUMP_SEGMENT);
        for (ri = 8; ri <= 10; ri++) {
            const xrec *rec = &S.recs[ri];
            const hp_subrecord *last = NULL;
            for (i = 0; i < S.nsub; i++)
                if (S.subs[i].offset > rec->offset && S.subs[i].offset < rec->offset + 9 + rec->length)
                    last = &S.subs[i];
            for (j = 1; j < last->length; j++) {
                memcpy(m, S.b.d, len);
                hp_put32(m + rec->offset + 5, rec->length - (uint32_t)j);
                expect_error(m, len, HP_E_OVERRUN, last->offset, last->tag, 1, "short heap record");
            }
        }
    }

    /* A record length running past the end of the file. */
    {
        const xrec *rec = &S.recs[S.nrec - 1];
        uint32_t extra[] = { 1, 100, 0x7fffffffu, 0xFFFFFFFFu - rec->length };
        for (i = 0; i < sizeof extra / sizeof extra[0]; i++) {
            memcpy(m, S.b.d, len);
            hp_put32(m + rec->offset + 5, rec->length + extra[i]);
            expect_error(m, len, HP_E_TRUNCATED, rec->offset, rec->tag, 0, "record past EOF");
            parse_copy(m, len, &ONE_SHOT, &r);
            CHECK_EQ_U64(r.err.need, 9 + (uint64_t)rec->length + extra[i]);
            CHECK_EQ_U64(r.err.have, 9 + (uint64_t)rec->length);
            run_free(&r);
        }
        /* A heap segment that is the last record, cut between sub-records. */
        rec = &S.recs[10];
        CHECK(rec->tag == HP_TAG_HEAP_DUMP_SEGMENT);
        memcpy(m, S.b.d, len);
        hp_put32(m + rec->offset + 5, rec->length + 1000);
        expect_error(m, rec->offset + 9 + rec->length, HP_E_TRUNCATED, rec->offset, rec->tag, 0, "segment past EOF");
        /* A HEAP_DUMP that claims 4 GiB. */
        rec = &S.recs[8];
        memcpy(m, S.b.d, len);
        hp_put32(m + rec->offset + 5, 0xFFFFFFFFu);
        parse_copy(m, len, &ONE_SHOT, &r);
        CHECK(r.rc != HP_OK && r.rc != HP_E_NOMEM && track_max < (1u << 16));
        run_free(&r);
    }

    /* Data after the end of a complete parse is a usage error. */
    {
        hp_parser *p = hp_parser_new(NULL, HP_PARSE_SUBRECORDS);
        hp_event ev;
        hp_error err;
        hp_code rc;
        hp_parser_feed(p, S.b.d, len, 1);
        while ((rc = hp_parser_next(p, &ev, &err)) == HP_OK && ev.kind != HP_EV_END)
            ;
        CHECK(rc == HP_OK && ev.kind == HP_EV_END);
        CHECK(hp_parser_next(p, &ev, &err) == HP_OK && ev.kind == HP_EV_END);
        hp_parser_feed(p, S.b.d, 10, 1);
        CHECK(hp_parser_next(p, &ev, &err) == HP_E_USAGE);
        hp_parser_free(p);
    }
    free(m);
    free(S.b.d);
}

static void test_synthetic_cuts(int id_size)
{
    synth S;
    run ref;
    char name[32];
    synth_build(&S, id_size);
    run_parse(&ref, S.b.d, S.b.len, HP_PARSE_SUBRECORDS, &ONE_SHOT, NULL);
    snprintf(name, sizeof name, "synthetic id %d", id_size);
    test_cuts(S.b.d, S.b.len, &ref, id_size, name, S.b.len); /* every offset */
    run_free(&ref);
    free(S.b.d);
}

static void test_big_cuts(void)
{
    synth S;
    run ref;
    size_t i;
    layout L;
    synth_build_big(&S);
    run_parse(&ref, S.b.d, S.b.len, HP_PARSE_SUBRECORDS, &ONE_SHOT, NULL);
    layout_build(&L, &ref, S.b.len);
    /* Inside the streamed sub-records: the sub-record is named, with all it needs. */
    for (i = 0; i < S.nsub; i++) {
        const hp_subrecord *s = &S.subs[i];
        static const feed_mode big = { 65536, 0, 0, NULL, 0 };
        CHECK(check_cut(S.b.d, s->offset + s->head_len / 2 + 1, &L, &ONE_SHOT, "big"));
        CHECK(check_cut(S.b.d, s->offset + s->length / 2, &L, &ONE_SHOT, "big"));
        CHECK(check_cut(S.b.d, s->offset + s->length / 2, &L, &big, "big"));
        CHECK(check_cut(S.b.d, s->offset + s->length - 1, &L, &big, "big"));
    }
    /* Inside the big STRING record. */
    CHECK(check_cut(S.b.d, S.recs[0].offset + 2000000 / 2, &L, &ONE_SHOT, "big"));
    {
        static const feed_mode big = { 4096, 0, 0, NULL, 0 };
        CHECK(check_cut(S.b.d, S.recs[0].offset + 1000001, &L, &big, "big"));
    }
    layout_free(&L);
    run_free(&ref);
    free(S.b.d);
}

static void test_error_format(void)
{
    char buf[256];
    hp_error e;
    size_t n;

    hp_fail(&e, HP_E_TRUNCATED, 1234, HP_SUB_INSTANCE_DUMP, 1, 36, 8, NULL);
    n = hp_error_format(&e, buf, sizeof buf);
    CHECK(strcmp(buf, "truncated INSTANCE_DUMP at offset 1234 (0x4d2): needs 36 bytes, 8 remain") == 0);
    CHECK_EQ_U64(n, strlen(buf));
    hp_fail(&e, HP_E_TRUNCATED, 0, -1, 0, 31, 5, NULL);
    hp_error_format(&e, buf, sizeof buf);
    CHECK(strcmp(buf, "truncated header at offset 0 (0x0): needs 31 bytes, 5 remain") == 0);
    hp_fail(&e, HP_E_TRUNCATED, 0x10000000000ULL, HP_TAG_HEAP_DUMP_SEGMENT, 0, 4294967304ULL, 9, NULL);
    hp_error_format(&e, buf, sizeof buf);
    CHECK(strcmp(buf, "truncated HEAP_DUMP_SEGMENT at offset 1099511627776 (0x10000000000): needs 4294967304 "
                      "bytes, 9 remain") == 0);
    hp_fail(&e, HP_E_CORRUPT, 100, 0x42, 1, 0, 0, "unknown heap sub-record tag");
    hp_error_format(&e, buf, sizeof buf);
    CHECK(strcmp(buf, "unknown heap sub-record tag in sub-record 0x42 at offset 100 (0x64)") == 0);
    hp_fail(&e, HP_E_TRUNCATED, 31, 0x99, 0, 20, 12, NULL);
    hp_error_format(&e, buf, sizeof buf);
    CHECK(strcmp(buf, "truncated record 0x99 at offset 31 (0x1f): needs 20 bytes, 12 remain") == 0);
    hp_fail(&e, HP_E_OVERRUN, 4096, HP_SUB_OBJ_ARRAY_DUMP, 1, 100, 50, NULL);
    hp_error_format(&e, buf, sizeof buf);
    CHECK(strcmp(buf, "OBJECT_ARRAY_DUMP at offset 4096 (0x1000) runs past the end of its heap-dump record: "
                      "needs 100 bytes, 50 remain") == 0);
    hp_fail(&e, HP_E_FORMAT, 0, -1, 0, 0, 3, NULL);
    hp_error_format(&e, buf, sizeof buf);
    CHECK(strcmp(buf, "error in header at offset 0 (0x0)") == 0);
    /* Small buffers: cut and NUL-terminated; size 0 writes nothing. */
    hp_fail(&e, HP_E_TRUNCATED, 1234, HP_SUB_INSTANCE_DUMP, 1, 36, 8, NULL);
    memset(buf, 'x', sizeof buf);
    n = hp_error_format(&e, buf, 10);
    CHECK(n == 9 && memcmp(buf, "truncated", 9) == 0 && buf[9] == 0 && buf[10] == 'x');
    buf[0] = 'y';
    CHECK(hp_error_format(&e, buf, 0) == 0 && buf[0] == 'y');

    /* A real one: an INSTANCE_DUMP cut inside its fields. */
    {
        synth S;
        run r;
        const hp_subrecord *s;
        char want[160];
        synth_build(&S, 4);
        s = find_sub(&S, HP_SUB_INSTANCE_DUMP, 0);
        parse_copy(S.b.d, s->offset + s->head_len + 8, &ONE_SHOT, &r);
        hp_error_format(&r.err, buf, sizeof buf);
        snprintf(want, sizeof want, "truncated INSTANCE_DUMP at offset %llu (0x%llx): needs %llu bytes, %u remain",
                 (unsigned long long)s->offset, (unsigned long long)s->offset, (unsigned long long)s->length,
                 s->head_len + 8);
        CHECK(strcmp(buf, want) == 0);
        if (strcmp(buf, want) != 0)
            fprintf(stderr, "  got  '%s'\n  want '%s'\n", buf, want);
        run_free(&r);
        free(S.b.d);
    }
}

/* Prints the CPU time since the previous call. */
static clock_t phase_start;
static void phase(const char *name)
{
    clock_t now = clock();
    if (name)
        printf("  %-24s %6.2f s\n", name, (double)(now - phase_start) / CLOCKS_PER_SEC);
    phase_start = now;
}

/* ------------------------------------------------------------------ */
/* 3. The real dumps                                                    */


/* The whole decompressed content of a .gz, in an exact-size allocation. */
static uint8_t *read_gz(const char *path, size_t *len)
{
    gzFile f = gzopen(path, "rb");
    size_t cap = 1 << 20, n = 0;
    uint8_t *buf, *exact;
    int got;
    if (!f)
        return NULL;
    buf = xmalloc(cap);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            if (!buf)
                exit(2);
        }
        got = gzread(f, buf + n, (unsigned)(cap - n));
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    gzclose(f);
    if (got < 0) {
        free(buf);
        return NULL;
    }
    exact = xmalloc(n);
    memcpy(exact, buf, n);
    free(buf);
    *len = n;
    return exact;
}

static uint8_t *load_entry(const inv_entry *e, size_t *len)
{
    char rel[256];
    snprintf(rel, sizeof rel, "hprof/%s", e->file);
    if (strcmp(e->compression, "gzip") == 0)
        return read_gz(check_data_path(rel), len);
    return check_read_file(check_data_path(rel), len);
}

static int is_small(const inv_entry *e) { return e->compression[0] == 0 && e->size < 600000; }

static void test_real_dumps(void)
{
    static const size_t fixed[] = { 7, 64, 4096 };
    static const size_t tiny[] = { 1, 2, 3 };
    size_t n_inv, i, j, done = 0;
    inv_entry *inv = read_inventory(&n_inv);
    clock_t t0 = clock();

    CHECK(inv != NULL && n_inv >= 20);
    for (i = 0; i < n_inv; i++) {
        const inv_entry *e = &inv[i];
        uint8_t *buf;
        size_t len = 0;
        run ref, r;
        int t;
        if (strcmp(e->compression, "bz2") == 0)
            continue; /* the Python tests read it */
        buf = load_entry(e, &len);
        CHECK(buf != NULL);
        if (!buf) {
            fprintf(stderr, "  cannot read %s\n", e->file);
            continue;
        }
        CHECK_EQ_U64(len, e->compression[0] ? e->dsize : e->size);
        run_parse(&ref, buf, len, HP_PARSE_SUBRECORDS, &ONE_SHOT, NULL);
        CHECK(run_clean(&ref, len));
        CHECK(strcmp(ref.hdr.magic, e->version) == 0);
        CHECK_EQ_U64(ref.hdr.id_size, e->id_size);
        CHECK_EQ_U64(ref.hdr.timestamp, e->timestamp);
        for (t = 0; t < 256; t++) {
            if (ref.rec_count[t] != e->recs[t] || ref.sub_count[t] != e->subs[t])
                fprintf(stderr, "  %s tag 0x%02X: records %llu/%llu, sub-records %llu/%llu\n", e->file, t,
                        (unsigned long long)ref.rec_count[t], (unsigned long long)e->recs[t],
                        (unsigned long long)ref.sub_count[t], (unsigned long long)e->subs[t]);
            CHECK_EQ_U64(ref.rec_count[t], e->recs[t]);
            CHECK_EQ_U64(ref.sub_count[t], e->subs[t]);
        }
        for (j = 0; j < sizeof fixed / sizeof fixed[0]; j++) {
            feed_mode m = { fixed[j], 0, j == 2, NULL, 0 };
            run_parse(&r, buf, len, HP_PARSE_SUBRECORDS, &m, NULL);
            CHECK(run_clean(&r, len) && runs_same(&ref, &r, e->file));
            run_free(&r);
        }
        for (j = 0; j < 2; j++) {
            feed_mode m = { 0, (uint32_t)(i * 131 + j + 1), (int)j, NULL, 0 };
            run_parse(&r, buf, len, HP_PARSE_SUBRECORDS, &m, NULL);
            CHECK(run_clean(&r, len) && runs_same(&ref, &r, e->file));
            run_free(&r);
        }
        if (is_small(e))
            for (j = 0; j < sizeof tiny / sizeof tiny[0]; j++) {
                feed_mode m = { tiny[j], 0, 0, NULL, 0 };
                run_parse(&r, buf, len, HP_PARSE_SUBRECORDS, &m, NULL);
                CHECK(run_clean(&r, len) && runs_same(&ref, &r, e->file));
                CHECK(r.chunks >= len / tiny[j]);
                run_free(&r);
            }
        /* Records only: the same records, heap bodies as DATA. */
        run_parse(&r, buf, len, 0, &ONE_SHOT, NULL);
        CHECK(run_clean(&r, len));
        for (t = 0; t < 256; t++) {
            CHECK_EQ_U64(r.rec_count[t], e->recs[t]);
            CHECK_EQ_U64(r.sub_count[t], 0);
        }
        run_free(&r);

        /* 4. Truncation on three kinds of dump. */
        if (strcmp(e->file, "heapdump__small_heap.bin") == 0 ||
            strcmp(e->file, "leakcanary__leak_service_binder.hprof") == 0 ||
            strcmp(e->file, "hprof-slurp__hprof-64.bin") == 0)
            test_cuts(buf, len, &ref, ref.hdr.id_size, e->file, 3000);

        /* 5. On real bytes: one unknown sub-tag in the middle of the heap. */
        if (ref.sub_count[HP_SUB_INSTANCE_DUMP] > 0) {
            size_t k, nth = 0;
            for (k = 0; k < ref.n; k++)
                if (ref.ev[k].kind == HP_EV_SUBRECORD && ++nth == ref.sub_count[HP_SUB_INSTANCE_DUMP] / 2 + 1)
                    break;
            if (k < ref.n) {
                uint8_t saved = buf[ref.ev[k].offset];
                buf[ref.ev[k].offset] = 0x42;
                run_parse(&r, buf, len, HP_PARSE_SUBRECORDS, &ONE_SHOT, NULL);
                CHECK(r.rc == HP_E_CORRUPT && r.err.offset == ref.ev[k].offset && r.err.is_sub == 1 &&
                      r.err.tag == 0x42 && r.n == k && !r.data_bad && !r.sticky_bad);
                run_free(&r);
                buf[ref.ev[k].offset] = saved;
            }
        }
        run_free(&ref);
        free(buf);
        done++;
    }
    CHECK(done + 1 >= n_inv); /* every file but the .bz2 */
    printf("  %zu real dumps in %.1f s\n", done, (double)(clock() - t0) / CLOCKS_PER_SEC);
    free(inv);
}

int main(void)
{
    phase(NULL);
    test_header();
    test_error_format();
    phase("header, error format");
    test_synthetic(4);
    test_synthetic(8);
    phase("synthetic");
    test_synthetic_big();
    phase("synthetic big");
    test_corruption(4);
    test_corruption(8);
    phase("corruption");
    test_synthetic_cuts(4);
    test_synthetic_cuts(8);
    test_big_cuts();
    phase("synthetic cuts");
    test_real_dumps();
    phase("real dumps, cuts");
    return check_report("test_parser");
}
