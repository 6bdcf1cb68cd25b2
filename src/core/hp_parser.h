/* The push parser: HPROF bytes in, in chunks of any size; events out.
 *
 * It is the one parser of the core.  A whole file (an mmap) is simply one
 * final chunk, and then every event points into it: nothing is copied.  When
 * a unit straddles two chunks, the parser keeps its prefix in a carry buffer
 * whose size is bounded (see HP_WHOLE_MAX), never by the size of the input:
 *  - a record head, a sub-record head and a file header are always whole;
 *  - a non-heap record body or a sub-record of at most HP_WHOLE_MAX bytes is
 *    delivered whole (one DATA event / one SUBRECORD event);
 *  - a larger one that is not contiguous in the input arrives as its head
 *    plus DATA / PAYLOAD pieces.
 *
 * Usage:
 *     hp_parser_feed(p, chunk, n, is_last);
 *     while ((rc = hp_parser_next(p, &ev, &err)) == HP_OK && ev.kind != HP_EV_NEED_INPUT) ...
 * Event pointers stay valid until the next call to hp_parser_next or feed. */
#ifndef HP_PARSER_H
#define HP_PARSER_H

#include "hp_common.h"
#include "hp_dumps.h"
#include "hp_header.h"
#include "hp_subrecord.h"

#define HP_WHOLE_MAX ((size_t)1 << 20)

/* Flags for hp_parser_new. */
#define HP_PARSE_SUBRECORDS 1 /* split HEAP_DUMP / HEAP_DUMP_SEGMENT bodies into sub-records */

typedef enum hp_event_kind {
    HP_EV_NEED_INPUT = 0, /* the chunk is used up; feed the next one */
    HP_EV_HEADER,         /* data = the header bytes; see hp_parser_header() */
    HP_EV_RECORD,         /* data = the 9-byte record head; ev.rec describes it */
    HP_EV_DATA,           /* data = body bytes of a record not split into sub-records */
    HP_EV_SUBRECORD,      /* data = the sub-record head and as much of its payload as is here */
    HP_EV_PAYLOAD,        /* data = a later piece of the current sub-record's payload */
    HP_EV_RECORD_END,     /* the current record is complete */
    HP_EV_END             /* clean end of input after the last record */
} hp_event_kind;

typedef struct hp_record {
    uint64_t offset; /* absolute offset of the tag byte */
    uint32_t time;
    uint32_t length; /* body bytes */
    uint8_t tag;
} hp_record;

typedef struct hp_event {
    hp_event_kind kind;
    const uint8_t *data;
    size_t len;
    uint64_t offset;          /* absolute offset of data[0] */
    const hp_record *rec;     /* the current record, from RECORD to RECORD_END */
    const hp_subrecord *sub;  /* SUBRECORD and PAYLOAD */
    uint32_t heap_id;         /* the heap set by the last HEAP_DUMP_INFO of this record (0 = default) */
    uint32_t heap_dump;       /* the heap dump the current record belongs to (see below), else HP_NO_DUMP */
} hp_event;

/* Heap dumps: a file may hold several (the old hprof agent wrote two); the
 * rule is hp_dumps.h's.  Each gets an index from 0 in file order; its
 * records (the closing HEAP_DUMP_END included) and their sub-records carry
 * it in ev->heap_dump, every other record HP_NO_DUMP. */

typedef struct hp_parser hp_parser;

/* Returns NULL when memory runs out.  `alloc` may be NULL for libc. */
hp_parser *hp_parser_new(const hp_alloc *alloc, int flags);
void hp_parser_free(hp_parser *p);

/* Hands the parser its next chunk.  Call only after hp_parser_next asked for
 * input (or before the first call).  `is_last` marks the end of the input:
 * the parser then reports truncation instead of asking for more. */
void hp_parser_feed(hp_parser *p, const uint8_t *data, size_t len, int is_last);

/* Produces the next event.  Returns HP_OK (the event is in *ev) or an error
 * code with *err filled; errors are sticky. */
hp_code hp_parser_next(hp_parser *p, hp_event *ev, hp_error *err);

/* Starts the parser at a record boundary of a stream whose header is `h`:
 * the next byte fed is the record at absolute offset `offset`.  Used to walk
 * one record of a mapped file without its header. */
void hp_parser_resume(hp_parser *p, const hp_header *h, uint64_t offset);

/* The header, once the HEADER event has been produced (else NULL). */
const hp_header *hp_parser_header(const hp_parser *p);

/* Absolute offset of the first byte not yet delivered in an event. */
uint64_t hp_parser_offset(const hp_parser *p);

/* The heap dumps that stopped without their HEAP_DUMP_END, had the input
 * ended here (once the END event came: they did). */
void hp_parser_unfinished(const hp_parser *p, hp_unfinished *out);

#endif
