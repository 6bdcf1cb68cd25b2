/* Tests of the renamer (hp_rename.h), on dumps written here whose output is
 * known byte for byte, for identifier sizes 4 and 8, fed whole and a byte
 * at a time:
 *  - the prelude goes right after the header;
 *  - a LOAD_CLASS, a STACK_FRAME and a STACK_TRACE named by the plan are
 *    replaced (a trace by two records), the others copied;
 *  - a CLASS_DUMP's static and field name ids are rewritten where the plan
 *    gives one (0 keeps the name), a CLASS_DUMP whose counts differ from the
 *    plan's is copied as it is, and heap records keep their lengths;
 *  - an empty plan copies any dump of the shared data byte for byte;
 *  - a truncated input is an error; a plan that points outside its arrays
 *    is refused; out of memory at every allocation is an error, never a
 *    crash or a leak (ASan). */
#include "testkit.h"

#include "countalloc.h"
#include "hp_rename.h"

#define NEW_NAME 0x70000001u

/* A dump with one class (2 statics, 2 fields), a second class whose
 * CLASS_DUMP the plan gets wrong, frames and traces.  With `renamed`, the
 * output the plan below must give. */
static void build(bb *b, int id_size, int renamed)
{
    memset(b, 0, sizeof *b);
    b->id = id_size;
    bb_raw(b, "JAVA PROFILE 1.0.2", 19);
    bb_u4(b, (uint32_t)id_size);
    bb_u8(b, 1234);
    if (renamed) { /* the prelude */
        bb_rec_begin(b, HP_TAG_UTF8);
        bb_id(b, NEW_NAME);
        bb_raw(b, "Clear", 5);
        bb_rec_end(b);
    }
    bb_rec_begin(b, HP_TAG_UTF8); /* "a", id 1 */
    bb_id(b, 1);
    bb_raw(b, "a", 1);
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_LOAD_CLASS); /* class 0x100, name 1: replaced */
    bb_u4(b, 7);
    bb_id(b, 0x100);
    bb_u4(b, 0);
    bb_id(b, renamed ? NEW_NAME : 1);
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_LOAD_CLASS); /* class 0x200: kept */
    bb_u4(b, 8);
    bb_id(b, 0x200);
    bb_u4(b, 0);
    bb_id(b, 1);
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_FRAME); /* frame 0x55: replaced */
    bb_id(b, 0x55);
    bb_id(b, renamed ? NEW_NAME : 1);
    bb_id(b, 0);
    bb_id(b, 0);
    bb_u4(b, 7);
    bb_u4(b, renamed ? 42 : 3);
    bb_rec_end(b);
    if (renamed) { /* trace 9 becomes a new frame and the trace */
        bb_rec_begin(b, HP_TAG_FRAME);
        bb_id(b, 0x56);
        bb_id(b, NEW_NAME);
        bb_id(b, 0);
        bb_id(b, 0);
        bb_u4(b, 7);
        bb_u4(b, 41);
        bb_rec_end(b);
    }
    bb_rec_begin(b, HP_TAG_TRACE);
    bb_u4(b, 9);
    bb_u4(b, 1);
    bb_u4(b, renamed ? 2 : 1);
    if (renamed)
        bb_id(b, 0x56);
    bb_id(b, 0x55);
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_SEGMENT);
    bb_u1(b, HP_SUB_CLASS_DUMP); /* class 0x100 */
    bb_id(b, 0x100);
    bb_u4(b, 0);
    bb_id(b, 0); bb_id(b, 0); bb_id(b, 0); bb_id(b, 0); bb_id(b, 0); bb_id(b, 0);
    bb_u4(b, 12);
    bb_u2(b, 0);  /* constant pool */
    bb_u2(b, 2);  /* statics: a long, an object */
    bb_id(b, renamed ? NEW_NAME : 1);
    bb_u1(b, HP_T_LONG);
    bb_u8(b, 0x1122334455667788ULL);
    bb_id(b, 1);  /* kept (0 in the plan) */
    bb_u1(b, HP_T_OBJECT);
    bb_id(b, 0x300);
    bb_u2(b, 2);  /* fields */
    bb_id(b, 1);  /* kept */
    bb_u1(b, HP_T_INT);
    bb_id(b, renamed ? NEW_NAME : 1);
    bb_u1(b, HP_T_OBJECT);
    bb_u1(b, HP_SUB_INSTANCE_DUMP);
    bb_id(b, 0x400);
    bb_u4(b, 0);
    bb_id(b, 0x100);
    bb_u4(b, 4 + (uint32_t)id_size);
    bb_u4(b, 5);
    bb_id(b, 0);
    bb_u1(b, HP_SUB_CLASS_DUMP); /* class 0x200: one field, the plan says two */
    bb_id(b, 0x200);
    bb_u4(b, 0);
    bb_id(b, 0); bb_id(b, 0); bb_id(b, 0); bb_id(b, 0); bb_id(b, 0); bb_id(b, 0);
    bb_u4(b, 4);
    bb_u2(b, 0);
    bb_u2(b, 0);
    bb_u2(b, 1);
    bb_id(b, 1);
    bb_u1(b, HP_T_INT);
    bb_rec_end(b);
    bb_rec_begin(b, HP_TAG_HEAP_DUMP_END);
    bb_rec_end(b);
}

typedef struct plan_bytes {
    bb prelude, blob;
    hp_rename_record records[3];
    hp_rename_class classes[2];
    uint64_t names[6];
    hp_rename_plan plan;
} plan_bytes;

static void make_plan(plan_bytes *p, int id_size)
{
    bb *blob = &p->blob;
    memset(p, 0, sizeof *p);
    p->prelude.id = blob->id = id_size;
    bb_rec_begin(&p->prelude, HP_TAG_UTF8);
    bb_id(&p->prelude, NEW_NAME);
    bb_raw(&p->prelude, "Clear", 5);
    bb_rec_end(&p->prelude);
    p->records[0].tag = HP_TAG_LOAD_CLASS;
    p->records[0].key = 0x100;
    bb_rec_begin(blob, HP_TAG_LOAD_CLASS);
    bb_u4(blob, 7);
    bb_id(blob, 0x100);
    bb_u4(blob, 0);
    bb_id(blob, NEW_NAME);
    bb_rec_end(blob);
    p->records[0].len = blob->len;
    p->records[1].tag = HP_TAG_FRAME;
    p->records[1].key = 0x55;
    p->records[1].offset = blob->len;
    bb_rec_begin(blob, HP_TAG_FRAME);
    bb_id(blob, 0x55);
    bb_id(blob, NEW_NAME);
    bb_id(blob, 0);
    bb_id(blob, 0);
    bb_u4(blob, 7);
    bb_u4(blob, 42);
    bb_rec_end(blob);
    p->records[1].len = blob->len - p->records[1].offset;
    p->records[2].tag = HP_TAG_TRACE;
    p->records[2].key = 9;
    p->records[2].offset = blob->len;
    bb_rec_begin(blob, HP_TAG_FRAME);
    bb_id(blob, 0x56);
    bb_id(blob, NEW_NAME);
    bb_id(blob, 0);
    bb_id(blob, 0);
    bb_u4(blob, 7);
    bb_u4(blob, 41);
    bb_rec_end(blob);
    bb_rec_begin(blob, HP_TAG_TRACE);
    bb_u4(blob, 9);
    bb_u4(blob, 1);
    bb_u4(blob, 2);
    bb_id(blob, 0x56);
    bb_id(blob, 0x55);
    bb_rec_end(blob);
    p->records[2].len = blob->len - p->records[2].offset;
    p->names[0] = NEW_NAME; /* statics: the long renamed, the object kept */
    p->names[1] = 0;
    p->names[2] = 0;        /* fields: the int kept, the object renamed */
    p->names[3] = NEW_NAME;
    p->names[4] = NEW_NAME; /* class 0x200: two fields, where its CLASS_DUMP has one */
    p->names[5] = NEW_NAME;
    p->classes[0].class_id = 0x100;
    p->classes[0].n_statics = 2;
    p->classes[0].n_fields = 2;
    p->classes[0].first = 0;
    p->classes[1].class_id = 0x200;
    p->classes[1].n_fields = 2;
    p->classes[1].first = 4;
    p->plan.prelude = p->prelude.d;
    p->plan.prelude_len = p->prelude.len;
    p->plan.records = p->records;
    p->plan.n_records = 3;
    p->plan.blob = blob->d;
    p->plan.blob_len = blob->len;
    p->plan.classes = p->classes;
    p->plan.n_classes = 2;
    p->plan.names = p->names;
    p->plan.n_names = 6;
}

/* Runs the renamer over data in chunks of `chunk` bytes (0: whole). */
static hp_code run(const hp_alloc *alloc, const hp_rename_plan *plan, const uint8_t *data, size_t len, size_t chunk,
                   mem_sink *out, hp_error *err)
{
    hp_sink sink = { mem_write, out, NULL };
    hp_renamer *r = hp_renamer_new(alloc, plan);
    hp_code rc = HP_OK;
    size_t pos = 0;
    if (!r)
        return HP_E_NOMEM;
    while (rc == HP_OK && pos < len) {
        size_t n = chunk && chunk < len - pos ? chunk : len - pos;
        rc = hp_renamer_feed(r, data + pos, n, &sink, err);
        pos += n;
    }
    if (rc == HP_OK)
        rc = hp_renamer_finish(r, &sink, err);
    hp_renamer_free(r);
    return rc;
}

static void test_plan(int id_size)
{
    bb in, want;
    plan_bytes p;
    size_t chunks[] = { 0, 1, 3, 17 };
    size_t k;
    build(&in, id_size, 0);
    build(&want, id_size, 1);
    make_plan(&p, id_size);
    for (k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        mem_sink out = { 0 };
        hp_error err;
        hp_code rc = run(NULL, &p.plan, in.d, in.len, chunks[k], &out, &err);
        show_error("rename", rc, &err);
        CHECK(rc == HP_OK);
        CHECK(same_bytes("renamed", out.d, out.len, want.d, want.len));
        free(out.d);
    }
    /* Cut short: an error, at any cut inside the last record's head. */
    {
        mem_sink out = { 0 };
        hp_error err;
        hp_code rc = run(NULL, &p.plan, in.d, in.len - 3, 0, &out, &err);
        CHECK(rc == HP_E_TRUNCATED);
        free(out.d);
    }
    /* Out of memory at every allocation: an error (or done), never a crash or a leak. */
    {
        size_t fail;
        int ok = 0;
        for (fail = 0; fail < 64 && !ok; fail++) {
            mem_sink out = { 0 };
            hp_error err;
            hp_code rc;
            countalloc_calls = 0;
            countalloc_fail_call = fail;
            rc = run(&countalloc, &p.plan, in.d, in.len, 5, &out, &err);
            countalloc_fail_call = (size_t)-1;
            ok = rc == HP_OK;
            CHECK(rc == HP_OK || rc == HP_E_NOMEM);
            CHECK(countalloc_live == 0);
            free(out.d);
        }
        CHECK(ok && fail > 1);
    }
    /* A plan that points past its own arrays is refused. */
    p.records[2].len = p.blob.len;
    CHECK(hp_renamer_new(NULL, &p.plan) == NULL);
    p.records[2].len = 0;
    p.classes[1].first = 5;
    CHECK(hp_renamer_new(NULL, &p.plan) == NULL);
    free(in.d);
    free(want.d);
    free(p.prelude.d);
    free(p.blob.d);
}

/* An empty plan copies every shared dump as it is. */
static void test_copies(void)
{
    static const char *const dumps[] = { "hprof/leakcanary__leak_service_binder.hprof",
                                         "hprof/mat__oracle_jdk8_05_x64.hprof",
                                         "obfuscated/heapgen_s5_16mb_obf_android.hprof.gz" };
    hp_rename_plan empty;
    size_t k;
    memset(&empty, 0, sizeof empty);
    for (k = 0; k < sizeof dumps / sizeof dumps[0]; k++) {
        size_t len;
        uint8_t *data = load_dump(dumps[k], &len);
        mem_sink out = { 0 };
        hp_error err;
        hp_code rc;
        CHECK(data != NULL);
        if (!data)
            continue;
        rc = run(NULL, &empty, data, len, 65521, &out, &err);
        show_error(dumps[k], rc, &err);
        CHECK(rc == HP_OK && same_bytes(dumps[k], out.d, out.len, data, len));
        free(out.d);
        free(data);
    }
}

int main(void)
{
    test_plan(4);
    test_plan(8);
    test_copies();
    return check_report("test_rename");
}
