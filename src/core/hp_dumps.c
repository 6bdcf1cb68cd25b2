/* Heap-dump tracking over record heads (hp_dumps.h). */
#include "hp_dumps.h"

/* The open run stops where its last segment ends, without its HEAP_DUMP_END. */
static void add_unfinished(hp_unfinished *u, const hp_dump_track *t, uint64_t end)
{
    if (u->count++ == 0) {
        u->index = t->dumps - 1;
        u->offset = t->run_offset;
        u->end = end;
    }
}

uint32_t hp_dump_track_record(hp_dump_track *t, int tag, uint64_t offset)
{
    if (t->last_in_run)
        t->run_end = offset; /* the run's last record so far ends here */
    t->last_in_run = 0;
    if (tag == HP_TAG_HEAP_DUMP || (tag == HP_TAG_HEAP_DUMP_SEGMENT && !t->open)) {
        if (t->open)
            add_unfinished(&t->done, t, t->run_end); /* a HEAP_DUMP cut the run short */
        t->open = tag == HP_TAG_HEAP_DUMP_SEGMENT;
        t->last_in_run = t->open;
        t->run_offset = offset;
        return t->dumps++;
    }
    if (tag == HP_TAG_HEAP_DUMP_SEGMENT) {
        t->last_in_run = 1;
        return t->dumps - 1;
    }
    if (tag == HP_TAG_HEAP_DUMP_END && t->open) {
        t->open = 0;
        return t->dumps - 1;
    }
    return HP_NO_DUMP;
}

void hp_dump_track_unfinished(const hp_dump_track *t, uint64_t end, hp_unfinished *out)
{
    *out = t->done;
    if (t->open)
        add_unfinished(out, t, t->last_in_run ? end : t->run_end);
}
