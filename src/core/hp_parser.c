/* The push parser: a state machine over chunks, with a bounded carry buffer. */
#include "hp_parser.h"

#include <string.h>

enum state {
    ST_HEADER,      /* before the file header */
    ST_RECORD_HEAD, /* at a record boundary */
    ST_BODY,        /* inside a body delivered as DATA */
    ST_HEAP_BODY,   /* inside a heap dump, at a sub-record boundary */
    ST_PAYLOAD,     /* inside the payload of a streamed sub-record */
    ST_DONE,        /* END was delivered */
    ST_FAILED       /* an error was reported; it is repeated */
};

struct hp_parser {
    hp_alloc alloc;
    int flags;
    enum state state;
    int is_last;
    int have_header;
    hp_header header;
    hp_error error;

    const uint8_t *in; /* the current chunk */
    size_t in_len, in_pos;

    uint8_t *carry;    /* prefix of the current unit when it straddles chunks */
    size_t carry_len, carry_cap;
    size_t want;       /* bytes the unit in the carry needs before it is worth decoding again */

    uint64_t pos;      /* absolute offset of the current unit */
    hp_record rec;
    uint64_t rec_left; /* body bytes of the current record not yet delivered */
    hp_subrecord sub;
    uint64_t sub_left; /* payload bytes of the current sub-record not yet delivered */
    uint32_t heap_id;
    uint32_t heap_dump;  /* of the current record, or HP_NO_DUMP */
    hp_dump_track dumps;
};

hp_parser *hp_parser_new(const hp_alloc *alloc, int flags)
{
    hp_parser *p;
    if (!alloc)
        alloc = &hp_default_alloc;
    p = alloc->malloc_fn(sizeof *p);
    if (!p)
        return NULL;
    memset(p, 0, sizeof *p);
    p->alloc = *alloc;
    p->flags = flags;
    p->state = ST_HEADER;
    p->heap_dump = HP_NO_DUMP;
    return p;
}

void hp_parser_free(hp_parser *p)
{
    if (!p)
        return;
    p->alloc.free_fn(p->carry);
    p->alloc.free_fn(p);
}

void hp_parser_feed(hp_parser *p, const uint8_t *data, size_t len, int is_last)
{
    static const uint8_t no_bytes[1];
    p->in = data ? data : no_bytes; /* NULL + 0 is undefined behaviour */
    p->in_len = len;
    p->in_pos = 0;
    p->is_last = is_last;
}

void hp_parser_resume(hp_parser *p, const hp_header *h, uint64_t offset)
{
    p->header = *h;
    p->have_header = 1;
    p->pos = offset;
    p->state = ST_RECORD_HEAD;
}

const hp_header *hp_parser_header(const hp_parser *p) { return p->have_header ? &p->header : NULL; }
uint64_t hp_parser_offset(const hp_parser *p) { return p->pos; }
void hp_parser_unfinished(const hp_parser *p, hp_unfinished *out) { hp_dump_track_unfinished(&p->dumps, p->pos, out); }

static size_t in_avail(const hp_parser *p) { return p->in_len - p->in_pos; }

/* Bytes of the current unit we can see: the carry if it holds a prefix,
 * otherwise the rest of the chunk. */
static const uint8_t *view(const hp_parser *p, size_t *len)
{
    if (p->carry_len) {
        *len = p->carry_len;
        return p->carry;
    }
    *len = in_avail(p);
    return p->in + p->in_pos;
}

static hp_code fail(hp_parser *p, hp_error *err)
{
    p->state = ST_FAILED;
    *err = p->error;
    return p->error.code;
}

/* Makes `want` bytes of the current unit contiguous.  Returns 1 and sets *out
 * when they are; returns 0 when the chunk ran out first (its bytes are kept
 * in the carry).  -1 when the carry cannot grow (p->error set). */
static int take(hp_parser *p, size_t want, const uint8_t **out)
{
    size_t copy;
    if (p->carry_len == 0 && in_avail(p) >= want) {
        *out = p->in + p->in_pos;
        return 1;
    }
    if (want > p->carry_cap) {
        size_t cap = p->carry_cap ? p->carry_cap : 4096;
        uint8_t *grown;
        while (cap < want)
            cap *= 2;
        grown = p->alloc.realloc_fn(p->carry, cap);
        if (!grown) {
            hp_fail(&p->error, HP_E_NOMEM, p->pos, -1, 0, want, 0, "out of memory for the carry buffer");
            return -1;
        }
        p->carry = grown;
        p->carry_cap = cap;
    }
    copy = want - p->carry_len;
    if (copy > in_avail(p))
        copy = in_avail(p);
    memcpy(p->carry + p->carry_len, p->in + p->in_pos, copy);
    p->carry_len += copy;
    p->in_pos += copy;
    if (p->carry_len < want)
        return 0;
    *out = p->carry;
    return 1;
}

/* Marks `n` bytes of the current unit as delivered. */
static void consume(hp_parser *p, size_t n)
{
    p->want = 0;
    if (p->carry_len) {
        /* A unit in the carry is delivered whole or as its whole prefix. */
        p->carry_len = 0;
    } else {
        p->in_pos += n;
    }
    p->pos += n;
}

static void emit(hp_parser *p, hp_event *ev, hp_event_kind kind, const uint8_t *data, size_t len)
{
    ev->kind = kind;
    ev->data = data;
    ev->len = len;
    ev->offset = p->pos;
    ev->rec = &p->rec;
    ev->sub = &p->sub;
    ev->heap_id = p->heap_id;
    ev->heap_dump = p->heap_dump;
}

static size_t remaining(const hp_parser *p) { return p->carry_len + in_avail(p); }

/* The chunk ran out inside the current unit, which started at `offset`
 * (`tag`, `is_sub` name it; it needs `need` bytes, `have` are there).
 * Mid-stream that only means: feed the next chunk.  At the end of the input
 * it is a truncation, reported as such. */
static hp_code need_more_or_truncated(hp_parser *p, hp_event *ev, hp_error *err, uint64_t offset, int tag,
                                      int is_sub, uint64_t need, uint64_t have)
{
    if (!p->is_last) {
        ev->kind = HP_EV_NEED_INPUT;
        return HP_OK;
    }
    hp_fail(&p->error, HP_E_TRUNCATED, offset, tag, is_sub, need, have, NULL);
    return fail(p, err);
}

/* The same, inside the body of the current record: a truncation names the record. */
static hp_code need_more_in_record(hp_parser *p, hp_event *ev, hp_error *err)
{
    uint64_t done = p->pos - p->rec.offset;
    return need_more_or_truncated(p, ev, err, p->rec.offset, p->rec.tag, 0, 9 + (uint64_t)p->rec.length,
                                  done + remaining(p));
}

static hp_code step_header(hp_parser *p, hp_event *ev, hp_error *err)
{
    size_t len;
    const uint8_t *v = view(p, &len);
    for (;;) {
        hp_error e;
        hp_code rc = len ? hp_header_parse(v, len, &p->header, &e) : HP_E_TRUNCATED;
        size_t need = len ? (size_t)e.need : HP_HEADER_MAX;
        int ready;
        if (rc == HP_OK)
            break;
        if (rc != HP_E_TRUNCATED) {
            p->error = e;
            return fail(p, err);
        }
        ready = take(p, need, &v);
        if (ready < 0)
            return fail(p, err);
        if (!ready) {
            /* `need` is a guess made before the NUL was seen: at the end of
             * the input, judge every byte there is, as one piece would. */
            if (p->is_last && p->carry_len > len) {
                v = p->carry;
                len = p->carry_len;
                continue;
            }
            return need_more_or_truncated(p, ev, err, 0, -1, 0, need, remaining(p));
        }
        len = need;
    }
    p->have_header = 1;
    emit(p, ev, HP_EV_HEADER, v, p->header.length);
    consume(p, p->header.length);
    p->state = ST_RECORD_HEAD;
    return HP_OK;
}

static hp_code step_record_head(hp_parser *p, hp_event *ev, hp_error *err)
{
    const uint8_t *v;
    int ready;
    if (remaining(p) == 0 && p->is_last) {
        emit(p, ev, HP_EV_END, NULL, 0);
        p->state = ST_DONE;
        return HP_OK;
    }
    ready = take(p, 9, &v);
    if (ready < 0)
        return fail(p, err);
    if (!ready) {
        int tag = p->carry_len ? p->carry[0] : -1;
        return need_more_or_truncated(p, ev, err, p->pos, tag < 0 ? 0 : tag, 0, 9, remaining(p));
    }
    p->rec.offset = p->pos;
    p->rec.tag = v[0];
    p->rec.time = hp_be32(v + 1);
    p->rec.length = hp_be32(v + 5);
    p->rec_left = p->rec.length;
    p->heap_id = 0; /* ART re-announces the heap in every segment */
    p->heap_dump = hp_dump_track_record(&p->dumps, p->rec.tag, p->rec.offset);
    emit(p, ev, HP_EV_RECORD, v, 9);
    consume(p, 9);
    p->state = (hp_is_heap_tag(p->rec.tag) && (p->flags & HP_PARSE_SUBRECORDS)) ? ST_HEAP_BODY : ST_BODY;
    return HP_OK;
}

static hp_code end_record(hp_parser *p, hp_event *ev)
{
    emit(p, ev, HP_EV_RECORD_END, NULL, 0);
    p->state = ST_RECORD_HEAD;
    return HP_OK;
}

static hp_code step_body(hp_parser *p, hp_event *ev, hp_error *err)
{
    const uint8_t *v;
    size_t n;
    if (p->rec_left == 0)
        return end_record(p, ev);
    if (p->rec.length <= HP_WHOLE_MAX) {
        int ready = take(p, p->rec.length, &v);
        if (ready < 0)
            return fail(p, err);
        if (!ready)
            return need_more_in_record(p, ev, err);
        n = p->rec.length;
    } else {
        if (in_avail(p) == 0)
            return need_more_in_record(p, ev, err);
        v = p->in + p->in_pos;
        n = in_avail(p) < p->rec_left ? in_avail(p) : (size_t)p->rec_left;
    }
    emit(p, ev, HP_EV_DATA, v, n);
    consume(p, n);
    p->rec_left -= n;
    return HP_OK;
}

static hp_code sub_error(hp_parser *p, hp_error *err, const hp_error *e)
{
    p->error = *e;
    p->error.offset += p->pos;
    return fail(p, err);
}

static hp_code step_heap_body(hp_parser *p, hp_event *ev, hp_error *err)
{
    const uint8_t *v;
    size_t len, n;
    hp_error e;

    if (p->rec_left == 0)
        return end_record(p, ev);
    if (p->carry_len && p->want > p->carry_len) {
        /* Top up to what the last attempt asked for before decoding again:
         * re-decoding a long class dump at every tiny chunk is quadratic.
         * At the end of the input, decode what there is (as one piece would). */
        int ready = take(p, p->want, &v);
        if (ready < 0)
            return fail(p, err);
        if (!ready && !p->is_last) {
            ev->kind = HP_EV_NEED_INPUT;
            return HP_OK;
        }
    }
    v = view(p, &len);
    if (len == 0)
        return need_more_in_record(p, ev, err);
    if (len > p->rec_left)
        len = (size_t)p->rec_left;
    for (;;) {
        uint64_t need = 0;
        int ready;
        hp_code rc = hp_subrecord_decode(v, len, p->header.id_size, &p->sub, &need, &e);
        if (rc == HP_OK)
            break;
        if (rc != HP_E_TRUNCATED)
            return sub_error(p, err, &e);
        if (need > p->rec_left) {
            /* A CLASS_DUMP's need is a lower bound guessed from a prefix:
             * look at the rest of the record before calling it an overrun. */
            if (len >= p->rec_left) {
                hp_fail(&p->error, HP_E_OVERRUN, p->pos, v[0], 1, need, p->rec_left, NULL);
                return fail(p, err);
            }
            need = p->rec_left;
        }
        ready = take(p, (size_t)need, &v);
        if (ready < 0)
            return fail(p, err);
        if (!ready) {
            if (p->is_last && p->carry_len > len) { /* the input ended: judge every byte there is */
                v = p->carry;
                len = p->carry_len;
                continue;
            }
            p->want = (size_t)need;
            return need_more_or_truncated(p, ev, err, p->pos, p->carry[0], 1, need, remaining(p));
        }
        len = (size_t)need;
    }
    p->sub.offset = p->pos;
    if (p->sub.length > p->rec_left) {
        hp_fail(&p->error, HP_E_OVERRUN, p->pos, p->sub.tag, 1, p->sub.length, p->rec_left, NULL);
        return fail(p, err);
    }
    if (p->sub.tag == HP_SUB_HEAP_DUMP_INFO)
        p->heap_id = p->sub.aux;
    if (len < p->sub.length && p->sub.length <= HP_WHOLE_MAX) {
        int ready = take(p, (size_t)p->sub.length, &v);
        if (ready < 0)
            return fail(p, err);
        if (!ready) {
            p->want = (size_t)p->sub.length;
            return need_more_or_truncated(p, ev, err, p->pos, p->sub.tag, 1, p->sub.length, remaining(p));
        }
        len = (size_t)p->sub.length;
    }
    /* Deliver the head with whatever payload is contiguous behind it. */
    n = len < p->sub.length ? len : (size_t)p->sub.length;
    emit(p, ev, HP_EV_SUBRECORD, v, n);
    consume(p, n);
    p->rec_left -= n;
    p->sub_left = p->sub.length - n;
    if (p->sub_left)
        p->state = ST_PAYLOAD;
    return HP_OK;
}

static hp_code step_payload(hp_parser *p, hp_event *ev, hp_error *err)
{
    size_t n;
    if (p->sub_left == 0) {
        p->state = ST_HEAP_BODY;
        return step_heap_body(p, ev, err);
    }
    if (in_avail(p) == 0)
        return need_more_or_truncated(p, ev, err, p->sub.offset, p->sub.tag, 1, p->sub.length,
                                      p->sub.length - p->sub_left);
    n = in_avail(p) < p->sub_left ? in_avail(p) : (size_t)p->sub_left;
    emit(p, ev, HP_EV_PAYLOAD, p->in + p->in_pos, n);
    consume(p, n);
    p->rec_left -= n;
    p->sub_left -= n;
    return HP_OK;
}

hp_code hp_parser_next(hp_parser *p, hp_event *ev, hp_error *err)
{
    switch (p->state) {
    case ST_HEADER: return step_header(p, ev, err);
    case ST_RECORD_HEAD: return step_record_head(p, ev, err);
    case ST_BODY: return step_body(p, ev, err);
    case ST_HEAP_BODY: return step_heap_body(p, ev, err);
    case ST_PAYLOAD: return step_payload(p, ev, err);
    case ST_DONE:
        if (in_avail(p))
            return hp_fail(err, HP_E_USAGE, p->pos, -1, 0, 0, 0, "data after the end of the input");
        emit(p, ev, HP_EV_END, NULL, 0);
        return HP_OK;
    case ST_FAILED:
    default:
        *err = p->error;
        return p->error.code;
    }
}
