/* Badoo's BMD heap-dump format (github badoo/hprof-tools; docs/bmd.md) as
 * two push filters that read their input more than once.
 *
 *   encoder:  HPROF 1.0.x, 4- or 8-byte ids  ->  BMD: what Badoo's cruncher
 *             (HprofCruncher) writes from the same dump, byte for byte
 *   decoder:  BMD  ->  HPROF 1.0.3, 4-byte ids: what Badoo's decruncher
 *             (BmdDecruncher) writes, placeholder fields and zeroed arrays
 *             included, byte for byte
 *
 * Neither order fits one pass: a BMD holds every class before any instance
 * (an HPROF need not), and the decruncher's HPROF holds the heap grouped by
 * kind after the strings.  So each filter asks for its whole input again
 * as often as it needs (the encoder two or three times, the decoder up to
 * five), and writes as it goes:
 *
 *     do {
 *         for each chunk of the input, from its first byte:  feed(chunk)
 *         finish()
 *     } while (again())
 *
 * Chunks may have any size in every pass; a later pass that is not fed the
 * very length of the first fails (the input changed).  Errors name the
 * absolute input offset of the record (and of the item in it) that failed,
 * and are sticky.
 *
 * Memory, whatever the input:
 *  - encoder: a map from each identifier to its BMD number (24 to 48 bytes
 *    per object and per string, as the renumbering needs), the classes'
 *    field types, the GC roots' ids (8 bytes each), and a STRING record
 *    while it is hashed (at most max_string bytes);
 *  - decoder: the class dumps it writes (at most max_classes bytes) and
 *    about 64 bytes per class; nothing per object. */
#ifndef HP_BMD_H
#define HP_BMD_H

#include "hp_bmd_strings.h"
#include "hp_common.h"
#include "hp_sink.h"

typedef struct hp_bmd_options {
    /* Encoder: the longest STRING record held to be hashed (0: 64 MiB);
     * decoder: the most bytes a HASHED_STRING may claim, written back as
     * its placeholder (0: 1 MiB; no name a VM writes comes near). */
    size_t max_string;
    /* Decoder: bytes of class dumps held, from the first pass to the heap
     * (0: 64 MiB). */
    size_t max_classes;
    /* Decoder: the longest heap record written (0: 4 GiB - 1).  A heap
     * that fits is one HEAP_DUMP, as the decruncher writes; a longer one
     * (which the decruncher cannot write) goes in HEAP_DUMP_SEGMENTs of at
     * most this, cut between sub-records, then HEAP_DUMP_END. */
    uint64_t max_heap_record;
    /* Decoder: strings to give back in place of their hash (NULL: none):
     * a HASHED_STRING becomes the string with its hash and length. */
    const hp_bmd_names *names;
    /* Decoder: the most bytes the restored dump may hold (0: the larger of
     * 4 GiB and 1,000 times the BMD, hp_restore_limit): the first pass
     * refuses a BMD declaring more, before the heap is written. */
    uint64_t max_output;
} hp_bmd_options;

/* The name of BMD record tag 1..8 ("STRING", "HASHED_STRING", ...), else NULL. */
const char *hp_bmd_tag_name(int tag);

/* ---- encoder: HPROF in, BMD out ---- */

typedef struct hp_bmd_encoder hp_bmd_encoder;

/* NULL when memory runs out.  `alloc` and `opts` may be NULL. */
hp_bmd_encoder *hp_bmd_encoder_new(const hp_alloc *alloc, const hp_bmd_options *opts);
void hp_bmd_encoder_free(hp_bmd_encoder *e);
hp_code hp_bmd_encoder_feed(hp_bmd_encoder *e, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err);
/* Ends the pass: reports a truncated dump, writes what the pass completes. */
hp_code hp_bmd_encoder_finish(hp_bmd_encoder *e, const hp_sink *out, hp_error *err);
/* After finish: 1 when the dump must be fed again from its first byte. */
int hp_bmd_encoder_again(const hp_bmd_encoder *e);
/* The passes it takes in all: 2 until the first ends, then exactly. */
int hp_bmd_encoder_passes(const hp_bmd_encoder *e);
uint64_t hp_bmd_encoder_bytes_in(const hp_bmd_encoder *e);  /* dump bytes (one pass) */
uint64_t hp_bmd_encoder_bytes_out(const hp_bmd_encoder *e); /* BMD bytes written */
/* BMD records written, by tag (index 1..8). */
const uint64_t *hp_bmd_encoder_counts(const hp_bmd_encoder *e);

/* ---- decoder: BMD in, HPROF out ---- */

typedef struct hp_bmd_decoder hp_bmd_decoder;

hp_bmd_decoder *hp_bmd_decoder_new(const hp_alloc *alloc, const hp_bmd_options *opts);
void hp_bmd_decoder_free(hp_bmd_decoder *d);
hp_code hp_bmd_decoder_feed(hp_bmd_decoder *d, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err);
hp_code hp_bmd_decoder_finish(hp_bmd_decoder *d, const hp_sink *out, hp_error *err);
int hp_bmd_decoder_again(const hp_bmd_decoder *d);
int hp_bmd_decoder_passes(const hp_bmd_decoder *d);
uint64_t hp_bmd_decoder_bytes_in(const hp_bmd_decoder *d);  /* BMD bytes (one pass) */
uint64_t hp_bmd_decoder_bytes_out(const hp_bmd_decoder *d); /* HPROF bytes written */
/* BMD records read, by tag (index 1..8), and of the hashed strings how
 * many were given back from the names. */
const uint64_t *hp_bmd_decoder_counts(const hp_bmd_decoder *d);
uint64_t hp_bmd_decoder_restored(const hp_bmd_decoder *d);

#endif
