/* Which heap dump each record belongs to, and which heap dumps stopped
 * without their HEAP_DUMP_END: one rule for every reader of a record
 * stream (the parser on its input, the pack decoder on what it restores).
 *
 * A HEAP_DUMP record is one heap dump; a run of HEAP_DUMP_SEGMENTs is one,
 * closed by the HEAP_DUMP_END that follows it.  A run that the input ends
 * (or a HEAP_DUMP interrupts) before its HEAP_DUMP_END is unfinished: the
 * dump was cut short.  The tracker sees record heads only, in order: a
 * record ends where the next begins, the last one where the input ends. */
#ifndef HP_DUMPS_H
#define HP_DUMPS_H

#include "hp_common.h"

/* No heap dump: the number of a record outside any. */
#define HP_NO_DUMP UINT32_MAX

/* The heap dumps that stopped without their HEAP_DUMP_END. */
typedef struct hp_unfinished {
    uint32_t count;  /* how many (0: every heap dump is whole) */
    uint32_t index;  /* the first of them, numbered from 0 in file order */
    uint64_t offset; /* its first record */
    uint64_t end;    /* just past its last record: where it stops */
} hp_unfinished;

typedef struct hp_dump_track {
    uint32_t dumps;     /* heap dumps begun so far */
    int open;           /* the last one is a run of segments still waiting for its HEAP_DUMP_END */
    int last_in_run;    /* the last record seen is a segment of that run */
    uint64_t run_offset, run_end;
    hp_unfinished done; /* runs a HEAP_DUMP interrupted, the first of them */
} hp_dump_track;

/* A record with `tag` begins at `offset`: returns the heap dump it belongs
 * to (its closing HEAP_DUMP_END included), or HP_NO_DUMP.  Every record
 * must be told, heap dump or not.  Start from a zeroed tracker. */
uint32_t hp_dump_track_record(hp_dump_track *t, int tag, uint64_t offset);

/* The unfinished heap dumps, had the input ended at `end` (just past the
 * last record told). */
void hp_dump_track_unfinished(const hp_dump_track *t, uint64_t end, hp_unfinished *out);

#endif
