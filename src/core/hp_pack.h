/* hprofkit's compact format ("pack"): the modelling half, as two push filters.
 *
 *   encoder:  HPROF bytes (any chunking)  ->  blocks of raw streams
 *   decoder:  blocks of raw streams        ->  HPROF bytes (through an hp_sink)
 *
 * A block is a fixed set of HP_PACK_NSTREAMS byte streams, one per kind of
 * field (record ops, lengths, object ids, class references, instance field
 * bytes, primitive array bytes by type...; docs/format.md specifies them), so
 * that a general-purpose compressor sees similar bytes together.  Ids are
 * coded as deltas against a model; UTF8 and LOAD_CLASS records, which come in
 * hash order, are coded sorted plus a permutation.  The container
 * (python/hprofkit/_pack.py) compresses, checksums and frames the streams of
 * each block; nothing here compresses.
 *
 * Blocks are cut at record or sub-record boundaries once their streams hold
 * `block_size` bytes, or inside a large payload (an array, a record body
 * streamed in pieces) so that a block never holds much more than that.
 * Model state (delta bases, the class table) carries from block to block:
 * blocks must be decoded in order, but each one can be compressed on its own.
 *
 * What the policy keeps is restored exactly: with the default-constructed
 * policy (keep everything) decode(encode(x)) is byte-identical to x for any
 * dump the parser accepts.
 *
 * Errors are sticky hp_errors.  Encoder errors carry the offset and tag in
 * the source dump; decoder errors carry the offset in the restored dump and
 * the tag of the record or sub-record being restored. */
#ifndef HP_PACK_H
#define HP_PACK_H

#include "hp_common.h"
#include "hp_dumps.h"
#include "hp_header.h"
#include "hp_sink.h"

/* The streams of a block, in their fixed order (docs/format.md §4). */
enum {
    HP_PS_OP,       /* record and sub-record ops, u1 each */
    HP_PS_TIME,     /* record times: zigzag deltas */
    HP_PS_LEN,      /* record lengths, text lengths, trace frame counts */
    HP_PS_RAW,      /* bodies of records kept as opaque bytes */
    HP_PS_STRINGS,  /* the block's UTF8 records sorted by id: ids, text lengths, permutation */
    HP_PS_TEXT,     /* their texts in that order, NUL-terminated */
    HP_PS_NAME,     /* string ids used as names (class, field, method, heap names) */
    HP_PS_SERIAL,   /* class, trace and thread serials, line numbers */
    HP_PS_STACK,    /* stack-trace serials of classes and objects */
    HP_PS_CLASSES,  /* the block's LOAD_CLASS records sorted by serial */
    HP_PS_RANK,     /* the permutations of both groups: each record's rank once sorted */
    HP_PS_FRAME,    /* STACK_FRAME ids and the frame ids of STACK_TRACEs */
    HP_PS_LOW,      /* low 3 bits of id deltas coded aligned */
    HP_PS_ROOT,     /* GC root object ids */
    HP_PS_ROOTX,    /* root thread serials, frame numbers, JNI ref ids, heap ids */
    HP_PS_OBJID,    /* ids of class, instance and array dumps */
    HP_PS_CLASS,    /* class references, as class table indexes */
    HP_PS_CLASSRAW, /* class ids new to the class table */
    HP_PS_CDUMP,    /* CLASS_DUMP sizes, table counts, constant pool indexes */
    HP_PS_CDREF,    /* CLASS_DUMP loader, signers, protection domain, reserved ids */
    HP_PS_CDTYPE,   /* CLASS_DUMP field types */
    HP_PS_CDVAL,    /* CLASS_DUMP primitive constant and static values */
    HP_PS_CDSREF,   /* CLASS_DUMP object constant and static values */
    HP_PS_ISIZE,    /* INSTANCE_DUMP byte counts that do not follow from the class */
    HP_PS_IREF,     /* INSTANCE_DUMP reference fields */
    HP_PS_IPRIM,    /* INSTANCE_DUMP primitive fields */
    HP_PS_IRAW,     /* INSTANCE_DUMP field bytes without a known layout */
    HP_PS_COUNT,    /* array element counts */
    HP_PS_ATYPE,    /* primitive array element types */
    HP_PS_AREF,     /* object array elements */
    HP_PS_NOISE,    /* elements of primitive arrays that look random, as they are */
    HP_PS_SHARED,   /* text arrays: bytes shared with the previous one */
    HP_PS_ROWS,     /* instances per class and block whose IPRIM bytes are planes */
    HP_PS_PRIM,     /* primitive array elements: 8 streams, boolean .. long (type 4 .. 11) */
    HP_PACK_NSTREAMS = HP_PS_PRIM + 8
};

/* Short name of stream i ("op", "iref", "prim.int"...), or NULL. */
const char *hp_pack_stream_name(int i);

/* What the encoder drops.  All zero: keep everything. */
typedef struct hp_pack_policy {
    /* Bit t (4..11) set: the elements of primitive arrays of type t are not
     * stored; they are restored as zeros (lengths stay).  Tailor strips
     * char and byte: HP_PACK_STRIP_TAILOR. */
    unsigned strip_types;
    /* Android dumps (1.0.3): drop INSTANCE, OBJ_ARRAY, PRIM_ARRAY and
     * PRIMITIVE_ARRAY_NODATA dumps of the zygote ('Z') and image ('I')
     * heaps, keep classes and roots, as `hprof-conv -z`; heap switches that
     * no kept sub-record follows and heap records left empty are not
     * written (what hp_converter does with to_standard = 0).  No effect on
     * other versions, which have no heaps to drop. */
    int app_only;
    /* Drop STACK_TRACE and STACK_FRAME records (serials that name them stay). */
    int drop_traces;
} hp_pack_policy;

#define HP_PACK_STRIP_TAILOR ((1u << HP_T_CHAR) | (1u << HP_T_BYTE))
#define HP_PACK_STRIP_ALL 0xFF0u /* types 4..11 */

/* The encoder cuts a block once its streams hold this many bytes. */
#define HP_PACK_BLOCK_DEFAULT ((size_t)4 << 20)
#define HP_PACK_BLOCK_MIN ((size_t)4 << 10)
/* Larger blocks would not fit HP_PACK_BLOCK_LIMIT (hp_packer.h) once the
 * sorted groups are coded: their records are counted below their size. */
#define HP_PACK_BLOCK_MAX ((size_t)8 << 20)

/* One block, valid during the callback only. */
typedef struct hp_pack_block {
    const uint8_t *data[HP_PACK_NSTREAMS];
    size_t len[HP_PACK_NSTREAMS];
    uint64_t index;    /* 0, 1, 2... */
    uint64_t in_len;   /* source bytes consumed since the previous block */
    uint64_t out_len;  /* restored bytes this block decodes to */
} hp_pack_block;

/* Returns 0, or -1 to stop the encoder (it then fails with HP_E_NOMEM). */
typedef int (*hp_pack_block_fn)(void *ctx, const hp_pack_block *block);

/* ---- encoder ------------------------------------------------------------ */

typedef struct hp_pack_encoder hp_pack_encoder;

/* `alloc` and `policy` may be NULL (libc, keep everything); block_size 0
 * means HP_PACK_BLOCK_DEFAULT (smaller values are raised to HP_PACK_BLOCK_MIN).
 * NULL when memory runs out. */
hp_pack_encoder *hp_pack_encoder_new(const hp_alloc *alloc, const hp_pack_policy *policy, size_t block_size);
void hp_pack_encoder_free(hp_pack_encoder *e);

/* Consumes `len` bytes of the dump; calls `fn` for every block completed. */
hp_code hp_pack_encoder_feed(hp_pack_encoder *e, const uint8_t *data, size_t len, hp_pack_block_fn fn, void *ctx,
                             hp_error *err);

/* Ends the dump: reports truncation, and emits the last block (if any). */
hp_code hp_pack_encoder_finish(hp_pack_encoder *e, hp_pack_block_fn fn, void *ctx, hp_error *err);

/* The dump's header once it has been read, else NULL. */
const hp_header *hp_pack_encoder_header(const hp_pack_encoder *e);
uint64_t hp_pack_encoder_bytes_in(const hp_pack_encoder *e);  /* source bytes consumed */
uint64_t hp_pack_encoder_bytes_out(const hp_pack_encoder *e); /* restored bytes, header included */
uint64_t hp_pack_encoder_blocks(const hp_pack_encoder *e);
/* The dump's heap dumps that stopped without their HEAP_DUMP_END, once
 * finish succeeded (hp_dumps.h). */
void hp_pack_encoder_unfinished(const hp_pack_encoder *e, hp_unfinished *out);

/* ---- decoder ------------------------------------------------------------ */

typedef struct hp_pack_decoder hp_pack_decoder;

/* `header` gives the version (0..3), id size and timestamp of the dump to
 * restore; `policy` the one it was encoded with (NULL: keep everything). */
hp_pack_decoder *hp_pack_decoder_new(const hp_alloc *alloc, const hp_header *header, const hp_pack_policy *policy);
void hp_pack_decoder_free(hp_pack_decoder *d);

/* What the decoder holds of one heap record whose length comes at its end
 * (0: HP_HOLD_DEFAULT); longer ones are streamed (hp_heaprec.h).  Call
 * before the first block. */
void hp_pack_decoder_hold_limit(hp_pack_decoder *d, size_t max_record);

/* Restores the next block from its raw streams and writes the HPROF bytes
 * (the header first) to `out`.  `expected_out` is the block's out_len as
 * the encoder reported it, checked at the end (UINT64_MAX: not checked).
 * Every stream must be used up exactly; anything else is HP_E_CORRUPT. */
hp_code hp_pack_decoder_block(hp_pack_decoder *d, const uint8_t *const data[HP_PACK_NSTREAMS],
                              const size_t len[HP_PACK_NSTREAMS], uint64_t expected_out, const hp_sink *out,
                              hp_error *err);

/* Ends the input: HP_E_TRUNCATED if it stopped inside a record. */
hp_code hp_pack_decoder_finish(hp_pack_decoder *d, const hp_sink *out, hp_error *err);

uint64_t hp_pack_decoder_bytes_out(const hp_pack_decoder *d); /* restored bytes, header included */
uint64_t hp_pack_decoder_blocks(const hp_pack_decoder *d);
/* The heap dumps of the restored dump that stop without their
 * HEAP_DUMP_END (restored offsets), once finish succeeded: a pack of a dump
 * that was cut short restores it cut short. */
void hp_pack_decoder_unfinished(const hp_pack_decoder *d, hp_unfinished *out);

#endif
