/* hprofkit's compact format ("pack"), whole: the container of
 * docs/format.md §2 (header, block frames, raw-deflate streams, CRC-32 of
 * every stored byte, end record) around the modelling of hp_pack.h.
 *
 *   hp_packer:    HPROF bytes (any chunking)  ->  pack bytes, through a sink
 *   hp_unpacker:  pack bytes (any chunking)   ->  HPROF bytes, through a sink
 *
 * Both are push filters usable from any C program (no Python):
 *
 *     hp_packer *p = hp_packer_new(NULL, &opts);
 *     while (more input)  rc = hp_packer_feed(p, chunk, n, &sink, &err);
 *     rc = hp_packer_finish(p, &sink, &err);
 *     hp_packer_free(p);
 *
 * Blocks are compressed (packer) or inflated (unpacker) by `workers` POSIX
 * threads while the caller's thread models or restores them; the sink is
 * only ever called from the caller's thread, inside feed and finish.  The
 * pack does not depend on the number of workers nor on the chunking.
 *
 * Memory is bounded whatever the input: the unpacker checks each block's
 * declared stream lengths against `max_block` before inflating anything,
 * holds at most a window of blocks, restores them as they are consumed, and
 * holds at most `max_record` bytes of a heap record whose length comes at
 * its end (app_only packs), streaming longer ones (hp_heaprec.h).
 *
 * Errors are sticky hp_errors; a corrupt pack is reported with the block
 * index and the file offset of the frame or stream, never restored. */
#ifndef HP_PACKER_H
#define HP_PACKER_H

#include "hp_pack.h"

#define HP_PACK_LEVEL_DEFAULT 6

/* What a block's streams may hold, in all, before or after inflation.  The
 * reference encoder's blocks (block_size <= HP_PACK_BLOCK_MAX) stay below it
 * whatever the dump; another writer's larger blocks need a larger limit. */
#define HP_PACK_BLOCK_LIMIT ((size_t)64 << 20)

typedef struct hp_packer_options {
    hp_pack_policy policy; /* what is dropped; all zero keeps everything */
    int level;             /* zlib level 0..9 (0 stores every stream) */
    size_t block_size;     /* 0: HP_PACK_BLOCK_DEFAULT */
    unsigned workers;      /* compression threads; 0 compresses in the caller's thread */
} hp_packer_options;

typedef struct hp_unpacker_options {
    unsigned workers;      /* inflating threads; 0 inflates in the caller's thread */
    size_t max_block;      /* what a block's streams may hold; 0: HP_PACK_BLOCK_LIMIT */
    size_t max_record;     /* what is held of a heap record; 0: HP_HOLD_DEFAULT (hp_heaprec.h) */
    uint64_t max_output;   /* what the restored dump may hold; 0: hp_restore_limit's default.  A block
                              whose out_len takes it past that is refused before it is inflated */
} hp_unpacker_options;

/* A pack's header fields. */
typedef struct hp_pack_info {
    int version;           /* of the dump: 0..3 for "JAVA PROFILE 1.0" .. "1.0.3" */
    int id_size;           /* 4 or 8 */
    uint64_t timestamp;    /* the dump header's */
    hp_pack_policy policy;
    int level;             /* the zlib level the writer used (informational) */
} hp_pack_info;

/* ---- HPROF in, pack out ---------------------------------------------------- */

typedef struct hp_packer hp_packer;

/* `alloc` may be NULL (libc), `opts` NULL for the defaults (keep everything,
 * level 6, default blocks, no worker).  NULL when memory runs out or
 * opts->level is not 0..9. */
hp_packer *hp_packer_new(const hp_alloc *alloc, const hp_packer_options *opts);
void hp_packer_free(hp_packer *p);

/* Consumes `len` bytes of the dump; writes the pack bytes ready so far. */
hp_code hp_packer_feed(hp_packer *p, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err);

/* Ends the dump (HP_E_TRUNCATED if it stopped inside a record) and writes
 * the rest of the pack, its end record included. */
hp_code hp_packer_finish(hp_packer *p, const hp_sink *out, hp_error *err);

uint64_t hp_packer_bytes_in(const hp_packer *p);       /* dump bytes consumed */
uint64_t hp_packer_bytes_out(const hp_packer *p);      /* pack bytes written */
uint64_t hp_packer_restored_bytes(const hp_packer *p); /* what the pack restores to, header included */
uint64_t hp_packer_blocks(const hp_packer *p);         /* blocks written */
/* The dump's heap dumps that stopped without their HEAP_DUMP_END, once
 * finish succeeded (hp_dumps.h): the pack restores them cut short. */
void hp_packer_unfinished(const hp_packer *p, hp_unfinished *out);

/* ---- pack in, HPROF out ---------------------------------------------------- */

typedef struct hp_unpacker hp_unpacker;

/* `alloc` and `opts` may be NULL.  NULL when memory runs out. */
hp_unpacker *hp_unpacker_new(const hp_alloc *alloc, const hp_unpacker_options *opts);
void hp_unpacker_free(hp_unpacker *u);

/* Consumes `len` bytes of the pack; writes the HPROF bytes of the blocks
 * restored so far (the dump's header first). */
hp_code hp_unpacker_feed(hp_unpacker *u, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err);

/* Ends the pack: restores what is left, then HP_E_TRUNCATED unless the pack
 * was complete (end record included) and HP_E_CORRUPT unless it restored to
 * the length its end record gives. */
hp_code hp_unpacker_finish(hp_unpacker *u, const hp_sink *out, hp_error *err);

/* The heap dumps of the restored dump that stop without their HEAP_DUMP_END
 * (restored offsets), once finish succeeded. */
void hp_unpacker_unfinished(const hp_unpacker *u, hp_unfinished *out);

/* The pack's header once read, else NULL. */
const hp_pack_info *hp_unpacker_info(const hp_unpacker *u);
uint64_t hp_unpacker_bytes_in(const hp_unpacker *u);  /* pack bytes consumed */
uint64_t hp_unpacker_bytes_out(const hp_unpacker *u); /* HPROF bytes written */
uint64_t hp_unpacker_blocks(const hp_unpacker *u);    /* blocks restored */

/* Whether `head` (the first `len` bytes of a file) starts a pack; a head
 * shorter than the magic answers whether it could. */
int hp_is_pack(const uint8_t *head, size_t len);

/* A pack of `pack_size` bytes whose last bytes are tail[0..n) (n up to
 * HP_PACK_END_MAX; a file or a buffer, known whole before it is restored):
 * HP_E_TOO_LARGE when its end record declares more restored bytes than
 * hp_restore_limit(max_output, pack_size), so that a bomb is refused
 * before any block is inflated; HP_OK otherwise (also when the tail holds
 * no end record: the restore itself then finds what is wrong). */
#define HP_PACK_END_MAX 35
hp_code hp_pack_check_end(const uint8_t *tail, size_t n, uint64_t pack_size, uint64_t max_output, hp_error *err);

#endif
