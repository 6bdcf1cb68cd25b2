/* The renamer: HPROF in, the same HPROF out with some names replaced, as a
 * push stream filter (hprofkit's deobfuscate writes through it).
 *
 *     hp_renamer *r = hp_renamer_new(NULL, &plan);
 *     while (more input)  rc = hp_renamer_feed(r, chunk, n, &sink, &err);
 *     rc = hp_renamer_finish(r, &sink, &err);
 *     hp_renamer_free(r);
 *
 * What changes is given by a plan, made by a caller that has read the dump
 * once already and knows its names:
 *  - `prelude`: bytes written right after the file header (the new STRING
 *    records that hold the clear names, before any record that uses them);
 *  - `records`: top-level records replaced whole by other bytes (one
 *    record, several, or none): a LOAD_CLASS picked by its class object id,
 *    a STACK_FRAME by its frame id, a STACK_TRACE by its serial;
 *  - `classes`: per class object id, new name ids for the static and
 *    instance fields of its CLASS_DUMP, in the order the CLASS_DUMP lists
 *    them (0: keep the name).  A CLASS_DUMP whose counts differ from the
 *    plan's is left as it is.
 * An id replaces an id, so heap records keep their lengths and stream
 * through; everything the plan does not name is copied byte for byte.
 * Output goes to the sink during each call and does not depend on how the
 * input was cut into chunks.  Memory: the plan, and one record head and
 * CLASS_DUMP head at a time. */
#ifndef HP_RENAME_H
#define HP_RENAME_H

#include "hp_common.h"
#include "hp_dumps.h"
#include "hp_sink.h"

typedef struct hp_rename_record {
    uint8_t tag;        /* HP_TAG_LOAD_CLASS, HP_TAG_FRAME or HP_TAG_TRACE */
    uint64_t key;       /* the class object id, the frame id or the trace serial */
    size_t offset, len; /* its replacement: blob[offset : offset + len] */
} hp_rename_record;

typedef struct hp_rename_class {
    uint64_t class_id;
    uint32_t n_statics, n_fields;
    size_t first;       /* names[first ...]: the statics' new name ids, then the fields' */
} hp_rename_class;

typedef struct hp_rename_plan {
    const uint8_t *prelude;
    size_t prelude_len;
    const hp_rename_record *records;
    size_t n_records;
    const uint8_t *blob;
    size_t blob_len;
    const hp_rename_class *classes;
    size_t n_classes;
    const uint64_t *names;
    size_t n_names;
} hp_rename_plan;

typedef struct hp_renamer hp_renamer;

/* Copies the plan (the caller's may go away).  `alloc` may be NULL for
 * libc.  NULL when memory runs out, or when the plan points outside its
 * own arrays. */
hp_renamer *hp_renamer_new(const hp_alloc *alloc, const hp_rename_plan *plan);
void hp_renamer_free(hp_renamer *r);

/* The next `len` bytes of input; output to `out`.  HP_OK or an error with
 * *err filled (offset and tag of the unit at fault); errors are sticky. */
hp_code hp_renamer_feed(hp_renamer *r, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err);

/* Ends the input (truncation is reported) and writes the rest. */
hp_code hp_renamer_finish(hp_renamer *r, const hp_sink *out, hp_error *err);

/* The heap dumps that stopped without their HEAP_DUMP_END, once finished. */
void hp_renamer_unfinished(const hp_renamer *r, hp_unfinished *out);

/* Records and CLASS_DUMPs rewritten so far. */
uint64_t hp_renamer_rewritten(const hp_renamer *r);

#endif
