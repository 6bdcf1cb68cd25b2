/* Heap records written before their length is known (hp_heaprec.h).
 *
 * A record is written as one or more parts, each a whole HPROF record with
 * the record's tag and time.  A part is held until it ends, streamed with
 * its length patched (sinks that can), or streamed at a length known up
 * front (one sub-record longer than the limit, on a sink that cannot). */
#include "hp_heaprec.h"

#include <string.h>

#define U4_MAX 0xFFFFFFFFu
#define KEEP_MAX ((size_t)16 << 20) /* hold memory kept from one record to the next */

enum {
    HR_CLOSED,  /* no record open */
    HR_HELD,    /* the part being written is held */
    HR_PATCHED, /* ...is streamed; its length is patched when it ends */
    HR_EXACT,   /* ...is streamed at the length announced for its one sub-record */
    HR_BETWEEN  /* the record is open, between parts */
};

void hp_heaprec_init(hp_heaprec *r, const hp_alloc *alloc, size_t limit, int drop_empty)
{
    memset(r, 0, sizeof *r);
    hp_buf_init(&r->held, alloc);
    r->limit = limit == 0 ? HP_HOLD_DEFAULT : limit < HP_HOLD_MIN ? HP_HOLD_MIN : limit;
    r->drop_empty = drop_empty;
}

void hp_heaprec_free(hp_heaprec *r) { hp_buf_free(&r->held); }

static void start_part(hp_heaprec *r)
{
    r->mode = HR_HELD;
    r->body = r->announced = 0;
    r->held.len = 0;
}

void hp_heaprec_open(hp_heaprec *r, uint8_t tag, uint32_t time)
{
    r->head[0] = tag;
    hp_put32(r->head + 1, time);
    r->total = 0;
    r->parts = 0;
    start_part(r);
}

/* Writes the held part whole, its length known. */
static int write_held(hp_heaprec *r, hp_writer *w)
{
    hp_put32(r->head + 5, (uint32_t)r->body);
    r->parts++;
    if (hp_writer_put(w, r->head, 9) < 0 || (r->held.len && hp_writer_put(w, r->held.data, r->held.len) < 0))
        return -1;
    if (r->held.cap > KEEP_MAX) /* a large part does not keep its memory */
        hp_buf_free(&r->held);
    r->held.len = 0;
    return 0;
}

/* Ends the part being written. */
static int end_part(hp_heaprec *r, hp_writer *w)
{
    uint8_t length[4];
    int rc = 0;
    switch (r->mode) {
    case HR_HELD:
        if (r->body > 0 || (!r->drop_empty && r->parts == 0))
            rc = write_held(r, w);
        break;
    case HR_PATCHED:
        hp_put32(length, (uint32_t)r->body);
        rc = hp_writer_patch(w, r->length_at, length, 4);
        break;
    case HR_EXACT:
        rc = r->body == r->announced ? 0 : -1; /* the caller wrote less than it announced */
        break;
    }
    r->mode = HR_BETWEEN;
    return rc;
}

/* Streams the held part from now on: its head, a length to patch later. */
static int stream_held(hp_heaprec *r, hp_writer *w)
{
    hp_put32(r->head + 5, 0);
    r->length_at = hp_writer_pos(w) + 5;
    r->parts++;
    r->mode = HR_PATCHED;
    if (hp_writer_put(w, r->head, 9) < 0 || (r->held.len && hp_writer_put(w, r->held.data, r->held.len) < 0))
        return -1;
    r->held.len = 0;
    return 0;
}

int hp_heaprec_sub(hp_heaprec *r, uint64_t len, hp_writer *w)
{
    if (len > U4_MAX)
        return -2;
    if (r->mode == HR_EXACT && r->body == r->announced && end_part(r, w) < 0)
        return -1;
    if (r->body != r->announced) /* the previous sub-record is not all there */
        return -1;
    if (r->mode == HR_BETWEEN)
        start_part(r);
    if (r->mode == HR_PATCHED && len > U4_MAX - r->body) { /* a part's length is a u4 */
        if (end_part(r, w) < 0)
            return -1;
        start_part(r);
    }
    if (r->mode == HR_HELD && (len > r->limit - r->held.len || len > U4_MAX - r->body)) {
        /* too long to hold */
        if (hp_writer_can_patch(w) && len <= U4_MAX - r->body) {
            if (stream_held(r, w) < 0)
                return -1;
        } else {
            if (r->body && end_part(r, w) < 0) /* close the part before this sub-record */
                return -1;
            start_part(r);
            if (len > r->limit) { /* one sub-record, a part of its own */
                r->mode = HR_EXACT;
                hp_put32(r->head + 5, (uint32_t)len);
                r->parts++;
                if (hp_writer_put(w, r->head, 9) < 0)
                    return -1;
            }
        }
    }
    r->announced += len;
    return 0;
}

uint64_t hp_heaprec_room(const hp_heaprec *r)
{
    uint64_t cap;
    if (r->mode == HR_HELD) /* holding: within the limit and a u4 */
        cap = r->limit < U4_MAX ? r->limit : U4_MAX;
    else if (r->mode == HR_PATCHED) /* streaming: within a u4 */
        cap = U4_MAX;
    else
        return 0;
    /* in both modes `body` equals what the part took; announced bytes not
     * yet put will take their room */
    return cap > r->announced ? cap - r->announced : 0;
}

int hp_heaprec_put(hp_heaprec *r, const uint8_t *p, size_t n, hp_writer *w)
{
    if (n > r->announced - r->body)
        return -1; /* more than announced */
    r->body += n;
    r->total += n;
    if (r->mode == HR_HELD)
        return hp_buf_append(&r->held, p, n);
    return hp_writer_put(w, p, n);
}

int hp_heaprec_zeros(hp_heaprec *r, uint64_t n, hp_writer *w)
{
    static const uint8_t zeros[4096];
    if (n > r->announced - r->body)
        return -1;
    if (r->mode != HR_HELD) { /* streamed: the writer makes its own zeros */
        r->body += n;
        r->total += n;
        return hp_writer_zeros(w, n);
    }
    while (n) {
        size_t k = n < sizeof zeros ? (size_t)n : sizeof zeros;
        if (hp_heaprec_put(r, zeros, k, w) < 0)
            return -1;
        n -= k;
    }
    return 0;
}

int hp_heaprec_close(hp_heaprec *r, hp_writer *w)
{
    int rc = r->body == r->announced ? end_part(r, w) : -1;
    r->mode = HR_CLOSED;
    return rc;
}
