/* Statistics over parser events: count and bytes per record tag and per
 * heap sub-tag, the file's heap dumps, and a class histogram (instances and
 * shallow bytes per class and heap).
 *
 * A file may hold several heap dumps (hp_parser.h says how they are told
 * apart).  One of them is *selected* (the first by default, as analyzers
 * show it): the sub-record tallies and the histogram describe it, so their
 * figures agree; every heap dump gets its own summary (hp_heap_dump_info).
 *
 * Class and heap names are not copied while walking: the accumulator
 * remembers where each STRING record starts and which string names each
 * class or heap, and resolves names afterwards against the same buffer
 * (hp_stats_class_name, hp_stats_heap). */
#ifndef HP_STATS_H
#define HP_STATS_H

#include "hp_common.h"
#include "hp_parser.h"
#include "hp_size.h"

typedef struct hp_tally {
    uint64_t count;
    uint64_t bytes;
} hp_tally;

/* One histogram row: the objects of one class in one heap (shallow bytes
 * under the size model, see below). */
typedef struct hp_class_row {
    uint64_t class_id;   /* 0 for primitive arrays */
    int elem_type;       /* 0 for instance classes, HP_T_OBJECT for object arrays, else the primitive type */
    uint32_t heap_id;    /* the heap (Android's HEAP_DUMP_INFO; 0 = default) */
    uint64_t instances;
    uint64_t shallow_bytes;
} hp_class_row;

/* One heap dump of the file. */
typedef struct hp_heap_dump_info {
    uint64_t offset;     /* its first record */
    uint64_t end;        /* just past its last record */
    uint64_t records;    /* its HEAP_DUMP, HEAP_DUMP_SEGMENT and closing HEAP_DUMP_END records */
    uint64_t bytes;      /* their bytes, record heads included */
    uint64_t subrecords;
    uint64_t instances, object_arrays, primitive_arrays, classes, gc_roots;
    int complete;        /* a HEAP_DUMP record, or segments closed by HEAP_DUMP_END */
} hp_heap_dump_info;

/* At most this many heap dumps per file (real files hold one or two): past
 * it a crafted run of empty records could make the list outgrow the input. */
#define HP_STATS_MAX_DUMPS ((uint32_t)1 << 16)
/* At most this many distinct heap ids (ART writes four). */
#define HP_STATS_MAX_HEAPS 256

typedef struct hp_stats hp_stats;

hp_stats *hp_stats_new(const hp_alloc *alloc);
void hp_stats_free(hp_stats *s);

/* Selects the heap dump to tally and histogram (0 by default; HP_NO_DUMP
 * for none: only the records and the heap-dump summaries).  Before the run. */
void hp_stats_select(hp_stats *s, uint32_t heap_dump);

/* Tells the accumulator which header the events come from (hp_stats_run
 * does it on the HEADER event): its id size sizes references. */
void hp_stats_set_header(hp_stats *s, const hp_header *h);

/* Accounts one event.  `id_size` comes from the header. */
hp_code hp_stats_add(hp_stats *s, const hp_event *ev, int id_size, hp_error *err);

/* Runs `p` over its current chunk into `s` until it needs input (returns
 * HP_OK, *done = 0) or the input ends (HP_OK, *done = 1). */
hp_code hp_stats_run(hp_stats *s, hp_parser *p, int *done, hp_error *err);

const hp_tally *hp_stats_records(const hp_stats *s);    /* every record, by tag, 256 entries */
const hp_tally *hp_stats_subrecords(const hp_stats *s); /* the selected heap dump's, by sub-tag, 256 entries */

/* The heap dumps seen, in file order. */
uint32_t hp_stats_heap_dumps(const hp_stats *s);
const hp_heap_dump_info *hp_stats_heap_dump(const hp_stats *s, uint32_t i);

/* Whether every heap dump is whole: a run of segments that the input ends
 * (or a HEAP_DUMP interrupts) before its HEAP_DUMP_END means a dump that
 * stopped early. */
int hp_stats_complete(const hp_stats *s);

/* The histogram of the selected heap dump: a row per class and heap that has
 * instances or arrays, and per primitive array type and heap present.  Row
 * order is first-seen; hp_stats_row costs O(1). */
size_t hp_stats_row_count(const hp_stats *s);
void hp_stats_row(const hp_stats *s, size_t i, hp_class_row *out);

/* The heaps the histogram's rows name, in first-seen order: heap i's id, and
 * its name (UTF-8, from the HEAP_DUMP_INFO's string, read from `buf`) when
 * known (returns 1), else 0. */
size_t hp_stats_heap_count(const hp_stats *s);
int hp_stats_heap(const hp_stats *s, size_t i, const uint8_t *buf, uint64_t buf_len, uint32_t *heap_id,
                  const uint8_t **name, size_t *len);

/* The UTF-8 name of class `class_id` as written in its LOAD_CLASS record,
 * read from `buf` (the dump the events came from).  Returns 1 and sets
 * name and len, or 0 when the class or its string is unknown. */
int hp_stats_class_name(const hp_stats *s, const uint8_t *buf, uint64_t buf_len, uint64_t class_id,
                        const uint8_t **name, size_t *len);

/* Histogram sizes follow a size model (hp_size.h): the one set with
 * hp_stats_set_model, else references at id size.  hp_stats_model gives the
 * one in force or, with `buf` (the dump the events came from), what the dump
 * tells without its object graph: whole object sizes when java.lang.Object's
 * CLASS_DUMP size is not zero (Android). */
void hp_stats_model(const hp_stats *s, const uint8_t *buf, uint64_t buf_len, hp_size_model *out);
void hp_stats_set_model(hp_stats *s, const hp_size_model *m);

/* VisualVM's model for the selected heap dump of `buf`: hp_stats_model's,
 * with compressed oops guessed on 64-bit HotSpot dumps (hp_oops.h) from the
 * classes and objects the pass saw, found again in `buf` by a bounded search
 * (no index).  Returns 1; 0 when the search ran out of its budget (ids far
 * from address order), the model then keeping references at id size: the
 * caller may index the heap to guess (hp_heap_size_model). */
int hp_stats_guess_model(const hp_stats *s, const uint8_t *buf, uint64_t buf_len, hp_size_model *out);

#endif
