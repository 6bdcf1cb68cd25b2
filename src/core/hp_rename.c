/* The renamer: parser events in, the same bytes out but where the plan
 * says otherwise (hp_rename.h).
 *
 * A record the plan may replace (LOAD_CLASS, STACK_FRAME, STACK_TRACE) is
 * held back until its key has been read: its 9-byte head and the first
 * bytes of its body, at most 4 + 8.  Then it is either written on as it is,
 * or dropped and its replacement written at its end.  A CLASS_DUMP the plan
 * names is copied (its head is always whole: hp_parser.h), its name ids
 * rewritten, and written.  Everything else goes to the writer as the parser
 * hands it over. */
#include "hp_rename.h"

#include <string.h>

#include "hp_idmap.h"
#include "hp_parser.h"
#include "hp_subrecord.h"

#define OUT_CAP ((size_t)1 << 20) /* the writer's batch */
#define HELD_MAX (9 + 4 + 8)      /* a record head and the bytes up to the end of its key */

enum { RUNNING, FINISHED, FAILED };
enum { PASS, DECIDE, SKIP }; /* what happens to the current record's bytes */
enum { KIND_LOAD, KIND_FRAME, KIND_TRACE, KINDS };

struct hp_renamer {
    hp_alloc alloc;
    hp_parser *parser;
    hp_writer out;
    int state;
    hp_error error;
    int id_size;
    uint64_t rewritten;

    /* the plan, copied */
    uint8_t *prelude, *blob;
    size_t prelude_len;
    hp_rename_record *records;
    hp_rename_class *classes;
    uint64_t *names;
    hp_idmap by_key[KINDS]; /* key -> record index */
    hp_idmap by_class;      /* class id -> class index */

    /* the current top-level record */
    int mode;
    int kind;
    uint8_t held[HELD_MAX];
    size_t held_len, key_end; /* bytes held; where the key ends (head included) */
    uint32_t replacement;     /* SKIP: the record written instead */

    hp_buf scratch; /* a CLASS_DUMP head being rewritten */
};

static const uint8_t no_bytes[1];

static void *copy_of(const hp_alloc *alloc, const void *src, size_t n)
{
    void *p = alloc->malloc_fn(n ? n : 1);
    if (p && n)
        memcpy(p, src, n);
    return p;
}

static int kind_of(uint8_t tag)
{
    return tag == HP_TAG_LOAD_CLASS ? KIND_LOAD : tag == HP_TAG_FRAME ? KIND_FRAME : tag == HP_TAG_TRACE ? KIND_TRACE
                                                                                                          : -1;
}

static int plan_is_sound(const hp_rename_plan *p)
{
    size_t i;
    for (i = 0; i < p->n_records; i++)
        if (kind_of(p->records[i].tag) < 0 || p->records[i].offset > p->blob_len ||
            p->records[i].len > p->blob_len - p->records[i].offset)
            return 0;
    for (i = 0; i < p->n_classes; i++) {
        uint64_t n = (uint64_t)p->classes[i].n_statics + p->classes[i].n_fields;
        if (p->classes[i].first > p->n_names || n > p->n_names - p->classes[i].first)
            return 0;
    }
    return 1;
}

static int copy_plan(hp_renamer *r, const hp_rename_plan *p)
{
    size_t i;
    int inserted;
    if (!(r->prelude = copy_of(&r->alloc, p->prelude, p->prelude_len)) ||
        !(r->blob = copy_of(&r->alloc, p->blob, p->blob_len)) ||
        !(r->records = copy_of(&r->alloc, p->records, p->n_records * sizeof *p->records)) ||
        !(r->classes = copy_of(&r->alloc, p->classes, p->n_classes * sizeof *p->classes)) ||
        !(r->names = copy_of(&r->alloc, p->names, p->n_names * sizeof *p->names)))
        return -1;
    r->prelude_len = p->prelude_len;
    for (i = 0; i < p->n_records; i++) { /* a later entry for the same key wins */
        uint32_t *slot = hp_idmap_put(&r->by_key[kind_of(p->records[i].tag)], p->records[i].key, (uint32_t)i,
                                      &inserted);
        if (!slot)
            return -1;
        *slot = (uint32_t)i;
    }
    for (i = 0; i < p->n_classes; i++) {
        uint32_t *slot = hp_idmap_put(&r->by_class, p->classes[i].class_id, (uint32_t)i, &inserted);
        if (!slot)
            return -1;
        *slot = (uint32_t)i;
    }
    return 0;
}

hp_renamer *hp_renamer_new(const hp_alloc *alloc, const hp_rename_plan *plan)
{
    hp_renamer *r;
    int k;
    if (!alloc)
        alloc = &hp_default_alloc;
    if (!plan_is_sound(plan) || plan->n_records >= UINT32_MAX || plan->n_classes >= UINT32_MAX)
        return NULL;
    r = alloc->malloc_fn(sizeof *r);
    if (!r)
        return NULL;
    memset(r, 0, sizeof *r);
    r->alloc = *alloc;
    for (k = 0; k < KINDS; k++)
        hp_idmap_init(&r->by_key[k], alloc);
    hp_idmap_init(&r->by_class, alloc);
    hp_buf_init(&r->scratch, alloc);
    r->parser = hp_parser_new(alloc, HP_PARSE_SUBRECORDS);
    if (!r->parser || hp_writer_init(&r->out, alloc, OUT_CAP) < 0 || copy_plan(r, plan) < 0) {
        hp_renamer_free(r);
        return NULL;
    }
    r->state = RUNNING;
    return r;
}

void hp_renamer_free(hp_renamer *r)
{
    int k;
    if (!r)
        return;
    hp_parser_free(r->parser);
    hp_writer_free(&r->out, &r->alloc);
    for (k = 0; k < KINDS; k++)
        hp_idmap_clear(&r->by_key[k]);
    hp_idmap_clear(&r->by_class);
    hp_buf_free(&r->scratch);
    r->alloc.free_fn(r->prelude);
    r->alloc.free_fn(r->blob);
    r->alloc.free_fn(r->records);
    r->alloc.free_fn(r->classes);
    r->alloc.free_fn(r->names);
    r->alloc.free_fn(r);
}

/* ---- top-level records ---- */

static void open_record(hp_renamer *r, const hp_event *ev)
{
    r->kind = kind_of(ev->rec->tag);
    r->mode = PASS;
    if (r->kind >= 0 && r->by_key[r->kind].count) {
        r->mode = DECIDE;
        r->key_end = 9 + (r->kind == KIND_LOAD ? 4 + (size_t)r->id_size : r->kind == KIND_FRAME ? (size_t)r->id_size : 4);
        memcpy(r->held, ev->data, 9);
        r->held_len = 9;
    }
}

/* Body bytes of a record being decided: held until its key is known. */
static int decide(hp_renamer *r, const uint8_t *data, size_t len)
{
    size_t take = r->key_end - r->held_len;
    uint64_t key;
    uint32_t *found;
    if (take > len)
        take = len;
    memcpy(r->held + r->held_len, data, take);
    r->held_len += take;
    if (r->held_len < r->key_end)
        return 0;
    key = r->kind == KIND_TRACE ? hp_be32(r->held + 9)
                                : hp_read_id(r->held + 9 + (r->kind == KIND_LOAD ? 4 : 0), r->id_size);
    found = hp_idmap_get(&r->by_key[r->kind], key);
    if (found) {
        r->mode = SKIP;
        r->replacement = *found;
        return 0;
    }
    r->mode = PASS;
    return hp_writer_put(&r->out, r->held, r->held_len) < 0 ||
           hp_writer_put(&r->out, data + take, len - take) < 0 ? -1 : 0;
}

static int close_record(hp_renamer *r)
{
    int rc = 0;
    if (r->mode == DECIDE) { /* a body too short to hold its key: written as it came */
        rc = hp_writer_put(&r->out, r->held, r->held_len);
    } else if (r->mode == SKIP) {
        const hp_rename_record *rec = &r->records[r->replacement];
        rc = hp_writer_put(&r->out, r->blob + rec->offset, rec->len);
        r->rewritten++;
    }
    r->mode = PASS;
    return rc;
}

/* ---- CLASS_DUMP ---- */

/* Writes the CLASS_DUMP of `ev` with the plan's name ids in its static and
 * instance field tables (as it is when the plan does not name its class, or
 * its counts differ from the plan's). */
static int rename_class_dump(hp_renamer *r, const hp_event *ev)
{
    const hp_rename_class *plan;
    hp_class_layout layout;
    uint32_t *found = hp_idmap_get(&r->by_class, ev->sub->id);
    uint8_t *head, *p;
    const uint64_t *names;
    uint32_t i;
    if (!found || ev->len < ev->sub->head_len)
        return hp_writer_put(&r->out, ev->data, ev->len);
    plan = &r->classes[*found];
    if (hp_class_layout_decode(ev->data, ev->sub->head_len, r->id_size, &layout) != HP_OK ||
        layout.n_statics != plan->n_statics || layout.n_fields != plan->n_fields)
        return hp_writer_put(&r->out, ev->data, ev->len);
    r->scratch.len = 0;
    if (hp_buf_append(&r->scratch, ev->data, ev->len) < 0)
        return -1;
    head = r->scratch.data;
    names = r->names + plan->first;
    p = head + layout.statics_off + 2;
    for (i = 0; i < plan->n_statics; i++) {
        int type = p[r->id_size];
        if (names[i])
            r->id_size == 8 ? hp_put64(p, names[i]) : hp_put32(p, (uint32_t)names[i]);
        p += r->id_size + 1 + hp_type_size(type, r->id_size);
    }
    p = head + layout.fields_off + 2;
    names += plan->n_statics;
    for (i = 0; i < plan->n_fields; i++, p += r->id_size + 1)
        if (names[i])
            r->id_size == 8 ? hp_put64(p, names[i]) : hp_put32(p, (uint32_t)names[i]);
    r->rewritten++;
    return hp_writer_put(&r->out, head, ev->len);
}

/* ---- driving the parser ---- */

static hp_code run(hp_renamer *r, hp_error *err)
{
    hp_event ev;
    for (;;) {
        hp_code rc = hp_parser_next(r->parser, &ev, err);
        int w = 0;
        if (rc != HP_OK)
            return rc;
        switch (ev.kind) {
        case HP_EV_NEED_INPUT:
        case HP_EV_END:
            return HP_OK;
        case HP_EV_HEADER:
            r->id_size = hp_parser_header(r->parser)->id_size;
            w = hp_writer_put(&r->out, ev.data, ev.len) < 0 || hp_writer_put(&r->out, r->prelude, r->prelude_len) < 0;
            break;
        case HP_EV_RECORD:
            open_record(r, &ev);
            if (r->mode == PASS)
                w = hp_writer_put(&r->out, ev.data, ev.len);
            break;
        case HP_EV_DATA:
            if (r->mode == DECIDE)
                w = decide(r, ev.data, ev.len);
            else if (r->mode == PASS)
                w = hp_writer_put(&r->out, ev.data, ev.len);
            break;
        case HP_EV_RECORD_END:
            w = close_record(r);
            break;
        case HP_EV_SUBRECORD:
            w = ev.sub->tag == HP_SUB_CLASS_DUMP && r->by_class.count ? rename_class_dump(r, &ev)
                                                                       : hp_writer_put(&r->out, ev.data, ev.len);
            break;
        case HP_EV_PAYLOAD:
            w = hp_writer_put(&r->out, ev.data, ev.len);
            break;
        }
        if (w) {
            int is_sub = ev.kind == HP_EV_SUBRECORD || ev.kind == HP_EV_PAYLOAD;
            int tag = ev.kind == HP_EV_HEADER ? -1 : is_sub ? ev.sub->tag : ev.rec->tag;
            return hp_fail(err, HP_E_NOMEM, is_sub ? ev.sub->offset : ev.offset, tag, is_sub, 0, 0,
                           "out of memory, or the output sink refused the bytes");
        }
    }
}

static hp_code drive(hp_renamer *r, const uint8_t *data, size_t len, int is_last, const hp_sink *out, hp_error *err)
{
    hp_code rc;
    if (r->state == FAILED) {
        *err = r->error;
        return err->code;
    }
    if (r->state == FINISHED)
        return hp_fail(err, HP_E_USAGE, hp_parser_offset(r->parser), -1, 0, 0, 0, "the renamer is finished");
    r->out.sink = out;
    hp_parser_feed(r->parser, data ? data : no_bytes, len, is_last);
    rc = run(r, err);
    /* What was complete before an error still goes out, whatever the chunking. */
    if (hp_writer_flush(&r->out) < 0 && rc == HP_OK)
        rc = hp_fail(err, HP_E_NOMEM, hp_parser_offset(r->parser), -1, 0, 0, 0,
                     "out of memory, or the output sink refused the bytes");
    if (rc != HP_OK) {
        r->state = FAILED;
        r->error = *err;
        return rc;
    }
    if (is_last)
        r->state = FINISHED;
    return HP_OK;
}

hp_code hp_renamer_feed(hp_renamer *r, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    return drive(r, data, len, 0, out, err);
}

hp_code hp_renamer_finish(hp_renamer *r, const hp_sink *out, hp_error *err)
{
    return drive(r, NULL, 0, 1, out, err);
}

void hp_renamer_unfinished(const hp_renamer *r, hp_unfinished *out) { hp_parser_unfinished(r->parser, out); }

uint64_t hp_renamer_rewritten(const hp_renamer *r) { return r->rewritten; }
