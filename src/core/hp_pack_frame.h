/* The pack container's byte layouts (docs/format.md §1-2), shared by the
 * packer and the unpacker: header, block frame, end record, varints and
 * CRC-32.  Not a public header. */
#ifndef HP_PACK_FRAME_H
#define HP_PACK_FRAME_H

#include "hp_packer.h"

#define PF_MAGIC "\x89HPK\r\n\x1a\n"
#define PF_MAGIC_LEN 8
#define PF_VERSION 2
#define PF_HEADER_SIZE 28 /* 24 bytes of fields, then their CRC-32 */
#define PF_BLOCK_MARK 'B'
#define PF_END_MARK 'E'
#define PF_VARINT_MAX 10
#define PF_FLAG_APP_ONLY 1
#define PF_FLAG_DROP_TRACES 2

enum { PF_EMPTY = 0, PF_STORED = 1, PF_DEFLATE = 2 };

/* Longest block frame: mark, two varints, then per stream a method, two
 * varints and a CRC; then the frame's CRC. */
#define PF_FRAME_MAX (1 + 2 * PF_VARINT_MAX + HP_PACK_NSTREAMS * (1 + 2 * PF_VARINT_MAX + 4) + 4)
#define PF_END_MAX (1 + 3 * PF_VARINT_MAX + 4)

/* One stream's entry in a block frame. */
typedef struct pf_entry {
    int method;
    uint64_t raw_len;  /* 0 when empty */
    uint64_t comp_len; /* bytes stored in the pack (raw_len unless deflated) */
    uint32_t crc;      /* of the stored bytes */
} pf_entry;

typedef struct pf_frame {
    uint64_t in_len, out_len;
    pf_entry entry[HP_PACK_NSTREAMS];
    size_t size;       /* frame bytes, its CRC included */
    uint64_t stored;   /* payload bytes that follow it: sum of comp_len */
    uint64_t raw;      /* sum of raw_len */
} pf_frame;

uint32_t pf_crc(uint32_t crc, const uint8_t *p, size_t n); /* crc 0 to start */

/* The 28 header bytes of a pack. */
void pf_header_write(uint8_t out[PF_HEADER_SIZE], const hp_pack_info *info);

/* Parses the header at h (PF_HEADER_SIZE bytes): HP_OK, or an error. */
hp_code pf_header_read(const uint8_t *h, hp_pack_info *info, hp_error *err);

/* Writes the frame of a block (mark through frame CRC) into out (at least
 * PF_FRAME_MAX bytes); returns its size. */
size_t pf_frame_write(uint8_t *out, uint64_t in_len, uint64_t out_len, const pf_entry entry[HP_PACK_NSTREAMS]);

/* Parses the frame at p (its mark included, `have` bytes available): 1 when
 * whole (*f filled, its CRC checked), 0 when more bytes are needed, or -1
 * with *err filled.  `index` and `offset` name the block in errors. */
int pf_frame_read(const uint8_t *p, size_t have, pf_frame *f, uint64_t index, uint64_t offset, hp_error *err);

/* The end record: its bytes (at least PF_END_MAX), and its size. */
size_t pf_end_write(uint8_t *out, uint64_t blocks, uint64_t total_in, uint64_t total_out);

/* Parses the end record at p: 1 when whole (values filled, CRC checked,
 * *size set), 0 when more bytes are needed, or -1 with *err filled. */
int pf_end_read(const uint8_t *p, size_t have, uint64_t offset, uint64_t *blocks, uint64_t *total_in,
                uint64_t *total_out, size_t *size, hp_error *err);

#endif
