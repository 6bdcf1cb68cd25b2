/* The converter: Android HPROF 1.0.3 in, standard 1.0.2 (or filtered 1.0.3)
 * out, as a push stream filter -- what AOSP's hprof-conv does, in chunks.
 *
 *     hp_converter *c = hp_converter_new(NULL, &opts);
 *     while (more input)  rc = hp_converter_feed(c, chunk, n, &sink, &err);
 *     rc = hp_converter_finish(c, &sink, &err);
 *     hp_converter_free(c);
 *
 * Output goes to `sink` during each call; the bytes written across all calls
 * do not depend on how the input was cut into chunks.  Non-heap records
 * stream straight through; the output of a heap record is held back until
 * its end (its length is known only then) up to max_record bytes, and
 * streamed past that (hp_heaprec.h), so memory is bounded whatever the
 * input.  Chunk pointers are not kept after a call returns.
 *
 * The input must be "JAVA PROFILE 1.0.3" (any identifier size): a 1.0.2 file
 * is refused with HP_E_FORMAT ("already in 1.0.2 format"), like hprof-conv,
 * since there is nothing to convert and the caller can skip the copy.
 * hp_convert.c lists every deliberate difference from hprof-conv. */
#ifndef HP_CONVERT_H
#define HP_CONVERT_H

#include "hp_common.h"
#include "hp_dumps.h"
#include "hp_sink.h"

typedef struct hp_convert_options {
    /* 1: hprof-conv: header 1.0.2, HEAP_DUMP_INFO dropped, Android roots
     * become ROOT_UNKNOWN, PRIMITIVE_ARRAY_NODATA becomes an empty
     * PRIMITIVE_ARRAY_DUMP.  0: the output stays 1.0.3. */
    int to_standard;
    /* 1: hprof-conv -z: drop INSTANCE, OBJ_ARRAY, PRIM_ARRAY and
     * PRIMITIVE_ARRAY_NODATA dumps of the zygote ('Z') and image ('I') heaps;
     * roots and CLASS_DUMPs stay.  The heap is set by HEAP_DUMP_INFO and
     * resets to the default at every heap record.  In 1.0.3 output a
     * HEAP_DUMP_INFO that no kept sub-record follows is dropped too. */
    int app_only;
    /* Bit t (4..11) set: the elements of primitive arrays of type t are
     * written as zeros, lengths kept (a dump that can be shared). */
    unsigned strip_types;
    /* What is held of a heap record whose converted length is not known yet
     * (0: HP_HOLD_DEFAULT, 64 MiB); longer ones are streamed (hp_heaprec.h). */
    size_t max_record;
} hp_convert_options;

typedef struct hp_converter hp_converter;

/* `alloc` may be NULL for libc; `opts` NULL means { to_standard = 1,
 * app_only = 0 }, plain hprof-conv.  Returns NULL when memory runs out. */
hp_converter *hp_converter_new(const hp_alloc *alloc, const hp_convert_options *opts);
void hp_converter_free(hp_converter *c);

/* Converts the next `len` bytes of input, writing what output is ready to
 * `out`.  Returns HP_OK, or an error with *err filled (offset and tag of the
 * unit at fault); errors are sticky.  `data` may be NULL when len is 0. */
hp_code hp_converter_feed(hp_converter *c, const uint8_t *data, size_t len, const hp_sink *out,
                          hp_error *err);

/* Ends the input: reports truncation if it stopped inside a unit, and
 * writes the rest of the output.  Feeding after this is HP_E_USAGE. */
hp_code hp_converter_finish(hp_converter *c, const hp_sink *out, hp_error *err);

/* The input's heap dumps that stopped without their HEAP_DUMP_END (input
 * offsets), once finish succeeded: the output was written, but what it
 * holds of the dump was cut short. */
void hp_converter_unfinished(const hp_converter *c, hp_unfinished *out);

#endif
