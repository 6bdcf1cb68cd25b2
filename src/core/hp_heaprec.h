/* Heap records written before their length is known: the one mechanism the
 * restoring filters share (the Tailor decoder's segments, the converter's
 * rewritten heap records, a pack's held records).
 *
 * An HPROF record carries its length up front, but these filters learn a
 * heap record's length only at its end.  The record is held while it is at
 * most `limit` bytes long (then written whole, exactly as before); past
 * that it is streamed, whatever the input:
 *  - to a sink that can patch (a seekable file, hp_sink.patch): the head is
 *    written with a length to come, the body as it arrives, and the length
 *    patched at the end: the same bytes as holding would give;
 *  - else (a pipe): the record is closed before the sub-record that would
 *    make it too long, and continued in a new record with the same tag and
 *    time.  A sub-record longer than the limit by itself gets a record of
 *    its own, written at once: its length is in its head.
 * Either way the output is valid HPROF, records are cut only between
 * sub-records, and none is longer than HPROF's u4 lengths allow.
 *
 * Usage, for each heap record:
 *     hp_heaprec_open(r, tag, time);
 *     for each sub-record:  hp_heaprec_sub(r, its length, w);  hp_heaprec_put(r, its bytes..., w);
 *     hp_heaprec_close(r, w);
 * Output goes to the writer `w` (its sink may change between calls, not
 * while a streamed record is open unless the new sink continues the old
 * one's output). */
#ifndef HP_HEAPREC_H
#define HP_HEAPREC_H

#include "hp_sink.h"

/* The default of what a restoring filter holds of one record. */
#define HP_HOLD_DEFAULT ((size_t)64 << 20)
#define HP_HOLD_MIN ((size_t)4 << 10)

typedef struct hp_heaprec {
    hp_buf held;          /* the body of the part being held */
    size_t limit;
    int drop_empty;       /* a record with no sub-record is not written */
    int mode;             /* HR_* (hp_heaprec.c); 0 when no record is open */
    uint8_t head[9];      /* tag, time, then the length of the part */
    uint64_t body;        /* body bytes of the part being written */
    uint64_t announced;   /* ...and what hp_heaprec_sub announced of it */
    uint64_t total;       /* body bytes of the whole record, all parts */
    uint64_t length_at;   /* streamed part: writer position of its length */
    int parts;            /* parts written so far */
} hp_heaprec;

/* limit 0: HP_HOLD_DEFAULT (below HP_HOLD_MIN: HP_HOLD_MIN). */
void hp_heaprec_init(hp_heaprec *r, const hp_alloc *alloc, size_t limit, int drop_empty);
void hp_heaprec_free(hp_heaprec *r);

/* Whether a record is open. */
static inline int hp_heaprec_is_open(const hp_heaprec *r) { return r->mode != 0; }

/* Opens a record; nothing is written yet. */
void hp_heaprec_open(hp_heaprec *r, uint8_t tag, uint32_t time);

/* Announces the next sub-record, `len` bytes, all of which follow through
 * hp_heaprec_put.  0; -1 when the writer refused or memory ran out (or the
 * previous sub-record is not all there); -2 when `len` is more than any
 * record can hold (4 GiB - 1). */
int hp_heaprec_sub(hp_heaprec *r, uint64_t len, hp_writer *w);

/* Bytes of announced sub-records, in pieces of any size; -1 for more than
 * announced, or when the writer refused or memory ran out. */
int hp_heaprec_put(hp_heaprec *r, const uint8_t *p, size_t n, hp_writer *w);
int hp_heaprec_zeros(hp_heaprec *r, uint64_t n, hp_writer *w);

/* Ends the record: writes it (or patches its length).  0 or -1. */
int hp_heaprec_close(hp_heaprec *r, hp_writer *w);

/* How many more bytes hp_heaprec_sub would take without deciding anything
 * (no part ended, held or streamed differently): announcing them in one
 * call or in many then gives the same output.  0 when the next call may
 * decide. */
uint64_t hp_heaprec_room(const hp_heaprec *r);

/* Body bytes of the open record so far (of all its parts when cut). */
static inline uint64_t hp_heaprec_total(const hp_heaprec *r) { return r->total; }

#endif
