/* Statistics over parser events: count and bytes per record tag and per
 * heap sub-tag, and a class histogram (instances and shallow bytes).
 *
 * Class names are not copied while walking: the accumulator remembers where
 * each STRING record starts and which string names each class, and resolves
 * names afterwards against the same buffer (hp_stats_class_name). */
#ifndef HP_STATS_H
#define HP_STATS_H

#include "hp_common.h"
#include "hp_parser.h"
#include "hp_size.h"

typedef struct hp_tally {
    uint64_t count;
    uint64_t bytes;
} hp_tally;

/* One histogram row (shallow bytes under the model, see below). */
typedef struct hp_class_row {
    uint64_t class_id;   /* 0 for primitive arrays */
    int elem_type;       /* 0 for instance classes, HP_T_OBJECT for object arrays, else the primitive type */
    uint64_t instances;
    uint64_t shallow_bytes;
} hp_class_row;

typedef struct hp_stats hp_stats;

hp_stats *hp_stats_new(const hp_alloc *alloc);
void hp_stats_free(hp_stats *s);

/* Tells the accumulator which header the events come from (hp_stats_run
 * does it on the HEADER event); it picks the object-header size model. */
void hp_stats_set_header(hp_stats *s, const hp_header *h);

/* Accounts one event.  `id_size` comes from the header. */
hp_code hp_stats_add(hp_stats *s, const hp_event *ev, int id_size, hp_error *err);

/* Runs `p` over its current chunk into `s` until it needs input (returns
 * HP_OK, *done = 0) or the input ends (HP_OK, *done = 1). */
hp_code hp_stats_run(hp_stats *s, hp_parser *p, int *done, hp_error *err);

const hp_tally *hp_stats_records(const hp_stats *s);    /* indexed by tag, 256 entries */
const hp_tally *hp_stats_subrecords(const hp_stats *s); /* indexed by sub-tag, 256 entries */

/* Heap dumps in the input: a HEAP_DUMP record, or a run of segments up to
 * HEAP_DUMP_END.  The histogram describes the first one. */
uint32_t hp_stats_heap_dumps(const hp_stats *s);

/* The histogram: rows for every class that has instances or arrays, and one
 * per primitive array type present.  Row order is first-seen. */
size_t hp_stats_row_count(const hp_stats *s);
void hp_stats_row(const hp_stats *s, size_t i, hp_class_row *out);

/* The UTF-8 name of class `class_id` as written in its LOAD_CLASS record,
 * read from `buf` (the dump the events came from).  Returns 1 and sets
 * name and len, or 0 when the class or its string is unknown. */
int hp_stats_class_name(const hp_stats *s, const uint8_t *buf, uint64_t buf_len, uint64_t class_id,
                        const uint8_t **name, size_t *len);

/* Histogram sizes follow a size model (hp_size.h): the one set with
 * hp_stats_set_model, else references at id size.  hp_stats_model gives the
 * one in force or, with `buf` (the dump the events came from), what the dump
 * tells without its object graph: whole object sizes when java.lang.Object's
 * CLASS_DUMP size is not zero (Android).  A caller that wants VisualVM's
 * guess of compressed oops on 64-bit dumps sets the model of the dump's heap
 * index (hp_heap_size_model). */
void hp_stats_model(const hp_stats *s, const uint8_t *buf, uint64_t buf_len, hp_size_model *out);
void hp_stats_set_model(hp_stats *s, const hp_size_model *m);

#endif
