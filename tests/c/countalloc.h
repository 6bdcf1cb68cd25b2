/* An hp_alloc for the C tests, fuzzers and benchmarks: it counts the bytes
 * live and their peak, and refuses on request the allocation numbered
 * countalloc_fail_call (0-based, counted in countalloc_calls) and any that
 * would take the bytes live past countalloc_budget.  Not thread-safe: the
 * core allocates on the calling thread only. */
#ifndef COUNTALLOC_H
#define COUNTALLOC_H

#include <stdlib.h>

#include "hp_common.h"

typedef union countalloc_head {
    size_t size;
    long double align_ld; /* keeps the block after it aligned (no max_align_t in C99) */
    void *align_p;
} countalloc_head;

static size_t countalloc_live, countalloc_peak, countalloc_calls;
static size_t countalloc_fail_call = (size_t)-1, countalloc_budget = (size_t)-1;

/* May `more` bytes be added now?  Counts the call. */
static int countalloc_allows(size_t more)
{
    return countalloc_calls++ != countalloc_fail_call && more <= countalloc_budget - countalloc_live;
}

static void countalloc_add(size_t more, size_t less)
{
    countalloc_live = countalloc_live + more - less;
    if (countalloc_live > countalloc_peak)
        countalloc_peak = countalloc_live;
}

static void *countalloc_malloc(size_t size)
{
    countalloc_head *h;
    if (!countalloc_allows(size) || !(h = malloc(sizeof *h + size)))
        return NULL;
    h->size = size;
    countalloc_add(size, 0);
    return h + 1;
}

static void countalloc_free(void *p)
{
    countalloc_head *h;
    if (!p)
        return;
    h = (countalloc_head *)p - 1;
    countalloc_add(0, h->size);
    free(h);
}

static void *countalloc_realloc(void *p, size_t size)
{
    countalloc_head *h, *grown;
    size_t old;
    if (!p)
        return countalloc_malloc(size);
    h = (countalloc_head *)p - 1;
    old = h->size;
    if (!countalloc_allows(size > old ? size - old : 0) || !(grown = realloc(h, sizeof *grown + size)))
        return NULL;
    grown->size = size;
    countalloc_add(size, old);
    return grown + 1;
}

static const hp_alloc countalloc = { countalloc_malloc, countalloc_realloc, countalloc_free };

#endif
