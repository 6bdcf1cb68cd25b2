/* ByteDance Tailor's "mini" format as two push stream filters.
 *
 *   encoder (trimmer):  HPROF 1.0.3, id size 4  ->  mini stream
 *   decoder (restorer): mini stream              ->  HPROF 1.0.3, id size 4
 *
 * Both write the *uncompressed* mini stream ("JAVA PROFILE 6.0.1" + records);
 * the zlib framing of .mini files is done by the caller.  Output is
 * byte-identical to Tailor's encode.py / decode.py on every input they handle
 * correctly, for any chunking of the input (docs/tailor-format.md).
 *
 * Where Tailor silently corrupts, these refuse instead:
 *  - the encoder refuses input the mini format cannot represent with
 *    HP_E_LIMIT (header other than "JAVA PROFILE 1.0.3" with 4-byte ids,
 *    STRING body > 65535 bytes, CLASS_DUMP instance size >= 65536, record tags
 *    other than STRING / LOAD_CLASS / STACK_TRACE (dropped) / HEAP_DUMP /
 *    HEAP_DUMP_SEGMENT / HEAP_DUMP_END, sub-tags 0x90 and 0xC3, and a STRING or
 *    LOAD_CLASS that would directly follow a heap segment in the mini: a
 *    decoder ends a segment at the first byte that is not a sub-tag, and 0x01 /
 *    0x02 are sub-tags too);
 *  - both report HP_E_TRUNCATED for a stream that does not end after a
 *    HEAP_DUMP_END at a record boundary, since a mini has no other way to
 *    mark its end (every Tailor encoder writes it; ART always ends with it):
 *    records after the last HEAP_DUMP_END are a truncated mini, not a
 *    complete one with data after its end.
 *
 * Errors carry the absolute byte offset in the filter's *input* (source dump
 * for the encoder, mini stream for the decoder) and the record or sub-record
 * tag.  Errors are sticky.  Memory is bounded whatever the input: the
 * decoder holds at most max_record bytes of a segment (then streams it) and
 * a sub-record head; the encoder, the parser's bounded carry. */
#ifndef HP_TAILOR_H
#define HP_TAILOR_H

#include "hp_common.h"
#include "hp_sink.h"

#define HP_TAILOR_MAGIC "JAVA PROFILE 6.0.1"
#define HP_TAILOR_MAGIC_LEN 18

typedef struct hp_tailor_options {
    /* Drop INSTANCE / OBJ_ARRAY / PRIM_ARRAY dumps after a HEAP_DUMP_INFO
     * naming heap 'Z' (zygote) or 'I' (image), the heap resetting to default
     * at each segment as in `hprof-conv -z`.  Classes and roots are kept;
     * heap switches followed by nothing kept, and segments left empty, are not
     * written.  Ignored by the decoder. */
    int app_only;
    /* Decoder: what it holds of a restored heap segment (0: HP_HOLD_DEFAULT,
     * 64 MiB); a longer one is streamed, its length patched or the segment
     * cut in several (hp_heaprec.h).  Ignored by the encoder. */
    size_t max_record;
    /* Decoder: what the restored heap's sub-records may hold in all (0:
     * hp_restore_limit's default over the mini stream read so far): a
     * sub-record taking them past that is refused before it is written
     * (a 20-byte mini can claim a 4 GB array).  Ignored by the encoder. */
    uint64_t max_output;
} hp_tailor_options;

/* The tag counter Tailor's scripts print: counts keyed by name, in the order
 * the names were first seen.  Keys are record tags (0..255) and 256 + sub-tag;
 * HEAP_DUMP is counted as HEAP_DUMP_SEGMENT and HEAP_DUMP_END is not counted,
 * as in encode.py.  In app_only mode it counts what was written. */
#define HP_TAILOR_KEYS 512
typedef struct hp_tailor_counter {
    uint64_t counts[HP_TAILOR_KEYS];
    uint16_t order[HP_TAILOR_KEYS];
    size_t n;
} hp_tailor_counter;

static inline void hp_tailor_count(hp_tailor_counter *c, unsigned key)
{
    if (c->counts[key]++ == 0)
        c->order[c->n++] = (uint16_t)key;
}

/* Entry i (0 <= i < c->n) in first-seen order: its name, and *count. */
const char *hp_tailor_counter_entry(const hp_tailor_counter *c, size_t i, uint64_t *count);

/* Writes the counter as Python prints the dict, e.g. "{'STRING': 5, 'LOAD_CLASS': 1}",
 * NUL-terminated; returns the full length (as snprintf does). */
size_t hp_tailor_counter_format(const hp_tailor_counter *c, char *buf, size_t size);

/* ---- encoder: HPROF in, mini stream out --------------------------------- */

typedef struct hp_tailor_encoder hp_tailor_encoder;

/* NULL when memory runs out.  `alloc` and `opts` may be NULL (libc, defaults). */
hp_tailor_encoder *hp_tailor_encoder_new(const hp_alloc *alloc, const hp_tailor_options *opts);
void hp_tailor_encoder_free(hp_tailor_encoder *e);

/* Consumes `len` bytes of the dump (any chunking) and writes the mini bytes
 * they complete to `out` before returning. */
hp_code hp_tailor_encoder_feed(hp_tailor_encoder *e, const uint8_t *data, size_t len, const hp_sink *out,
                               hp_error *err);

/* Marks the end of the dump: reports a truncated dump, or one that does not
 * end with HEAP_DUMP_END, and writes any remaining output. */
hp_code hp_tailor_encoder_finish(hp_tailor_encoder *e, const hp_sink *out, hp_error *err);

const hp_tailor_counter *hp_tailor_encoder_counter(const hp_tailor_encoder *e);
uint64_t hp_tailor_encoder_bytes_in(const hp_tailor_encoder *e);  /* dump bytes consumed */
uint64_t hp_tailor_encoder_bytes_out(const hp_tailor_encoder *e); /* mini bytes written */
uint64_t hp_tailor_encoder_dropped(const hp_tailor_encoder *e);   /* app_only: object dumps dropped */

/* ---- decoder: mini stream in, HPROF out --------------------------------- */

typedef struct hp_tailor_decoder hp_tailor_decoder;

hp_tailor_decoder *hp_tailor_decoder_new(const hp_alloc *alloc, const hp_tailor_options *opts);
void hp_tailor_decoder_free(hp_tailor_decoder *d);

/* Consumes `len` bytes of the uncompressed mini stream (any chunking, down to
 * one byte).  A heap segment is written when it ends, since its length is
 * only known then; everything else is written before returning. */
hp_code hp_tailor_decoder_feed(hp_tailor_decoder *d, const uint8_t *data, size_t len, const hp_sink *out,
                               hp_error *err);
hp_code hp_tailor_decoder_finish(hp_tailor_decoder *d, const hp_sink *out, hp_error *err);

const hp_tailor_counter *hp_tailor_decoder_counter(const hp_tailor_decoder *d);
uint64_t hp_tailor_decoder_bytes_in(const hp_tailor_decoder *d);  /* mini bytes consumed */
uint64_t hp_tailor_decoder_bytes_out(const hp_tailor_decoder *d); /* HPROF bytes written */

#endif
