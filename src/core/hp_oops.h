/* VisualVM's guess of the reference size of a 64-bit HotSpot dump
 * (compressed oops or not), written once for every reader of a dump.
 *
 * The guess reads a few classes and objects, in order:
 *  1. java.lang.Class$Atomic's Unsafe offsets annotationDataOffset and
 *     annotationTypeOffset (JDK 8): their difference is the reference size;
 *  2. java.util.concurrent.FutureTask's runnerOffset and waitersOffset;
 *  3. the system property java.vm.compressedOopsMode (JDK 9+ sets it only
 *     with compressed oops): present means 4;
 *  4. else the id size.
 * It finds them through an hp_oops_source: the heap index looks them up in
 * its tables (hp_heap_size.c); the statistics pass, which has no index,
 * finds them in the dump by a bounded search (hp_stats_oops.c). */
#ifndef HP_OOPS_H
#define HP_OOPS_H

#include "hp_common.h"

/* How the guess finds what it reads, as offsets of sub-records in `buf`
 * (the whole dump).  Each function returns 0 for "none". */
typedef struct hp_oops_source {
    const uint8_t *buf;
    uint64_t buf_len;
    int id_size;
    void *ctx;
    /* The id of the class of this Java name ("java.lang.System"); with
     * several, the lowest id. */
    uint64_t (*class_named)(void *ctx, const char *name);
    /* The offset of the CLASS_DUMP of class `class_id`. */
    uint64_t (*class_dump)(void *ctx, uint64_t class_id);
    /* The offset of the sub-record of object `id` (an instance or array). */
    uint64_t (*object)(void *ctx, uint64_t id);
    /* Whether STRING `sid` reads `want` (ASCII). */
    int (*sid_is)(void *ctx, uint64_t sid, const char *want);
    /* Hash-chain links followed at most (the dump's object count): a cycle ends. */
    uint64_t max_steps;
} hp_oops_source;

/* The reference size, 4 or 8, VisualVM would take for the dump. */
int hp_oops_guess(const hp_oops_source *src);

#endif
