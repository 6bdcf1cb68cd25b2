/* The pack container's byte layouts (see hp_pack_frame.h). */
#include "hp_pack_frame.h"
#include "hp_pack_model.h"

#include <string.h>
#include <zlib.h>

uint32_t pf_crc(uint32_t crc, const uint8_t *p, size_t n)
{
    while (n) { /* zlib takes uInt lengths */
        uInt k = n > 0x40000000u ? 0x40000000u : (uInt)n;
        crc = (uint32_t)crc32(crc, p, k);
        p += k;
        n -= k;
    }
    return crc;
}

/* Reads a varint at *p (at most end): 1 and the value, 0 when the bytes end
 * first, -1 when it is invalid (over 10 bytes, or over 64 bits). */
static int pf_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    const uint8_t *q = *p;
    uint64_t value = 0;
    unsigned shift;
    for (shift = 0; shift < 64; shift += 7) {
        uint8_t b;
        if (q >= end)
            return 0;
        b = *q++;
        if (shift == 63 && b > 1)
            return -1; /* the 10th byte holds bit 63 only */
        value |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *p = q;
            *v = value;
            return 1;
        }
    }
    return -1;
}

void pf_header_write(uint8_t out[PF_HEADER_SIZE], const hp_pack_info *info)
{
    unsigned flags = (info->policy.app_only ? PF_FLAG_APP_ONLY : 0) | (info->policy.drop_traces ? PF_FLAG_DROP_TRACES : 0);
    memcpy(out, PF_MAGIC, PF_MAGIC_LEN);
    out[8] = PF_VERSION;
    out[9] = HP_PACK_NSTREAMS;
    out[10] = (uint8_t)info->version;
    out[11] = (uint8_t)info->id_size;
    hp_put64(out + 12, info->timestamp);
    hp_put16(out + 20, (uint16_t)info->policy.strip_types);
    out[22] = (uint8_t)flags;
    out[23] = (uint8_t)info->level;
    hp_put32(out + 24, pf_crc(0, out, 24));
}

hp_code pf_header_read(const uint8_t *h, hp_pack_info *info, hp_error *err)
{
    unsigned strip = hp_be16(h + 20), flags = h[22];
    if (memcmp(h, PF_MAGIC, PF_MAGIC_LEN) != 0)
        return hp_failf(err, HP_E_FORMAT, 0, -1, 0, "not an hprofkit pack (bad magic)");
    if (pf_crc(0, h, 24) != hp_be32(h + 24))
        return hp_failf(err, HP_E_CORRUPT, 0, -1, 0, "pack header at offset 0 fails its checksum");
    if (h[8] != PF_VERSION)
        return hp_failf(err, HP_E_FORMAT, 8, -1, 0,
                        "pack format version %u is not supported (this hprofkit reads %d)", h[8], PF_VERSION);
    if (h[9] != HP_PACK_NSTREAMS || h[10] > 3 || (h[11] != 4 && h[11] != 8) || flags & ~3u ||
        strip & ~HP_PACK_STRIP_ALL)
        return hp_failf(err, HP_E_CORRUPT, 0, -1, 0, "pack header at offset 0 has impossible fields");
    memset(info, 0, sizeof *info);
    info->version = h[10];
    info->id_size = h[11];
    info->timestamp = hp_be64(h + 12);
    info->policy.strip_types = strip;
    info->policy.app_only = (flags & PF_FLAG_APP_ONLY) != 0;
    info->policy.drop_traces = (flags & PF_FLAG_DROP_TRACES) != 0;
    info->level = h[23];
    return HP_OK;
}

size_t pf_frame_write(uint8_t *out, uint64_t in_len, uint64_t out_len, const pf_entry entry[HP_PACK_NSTREAMS])
{
    size_t n = 0;
    int i;
    out[n++] = PF_BLOCK_MARK;
    n += hp_put_varint(out + n, in_len);
    n += hp_put_varint(out + n, out_len);
    for (i = 0; i < HP_PACK_NSTREAMS; i++) {
        const pf_entry *e = &entry[i];
        out[n++] = (uint8_t)e->method;
        if (e->method == PF_EMPTY)
            continue;
        n += hp_put_varint(out + n, e->raw_len);
        if (e->method == PF_DEFLATE)
            n += hp_put_varint(out + n, e->comp_len);
        hp_put32(out + n, e->crc);
        n += 4;
    }
    hp_put32(out + n, pf_crc(0, out, n));
    return n + 4;
}

/* A varint of the frame: 1, 0 for more bytes, -1 with the error set. */
static int frame_varint(const uint8_t **q, const uint8_t *end, uint64_t *v, uint64_t index, uint64_t offset,
                        hp_error *err)
{
    int rc = pf_get_varint(q, end, v);
    if (rc < 0)
        hp_failf(err, HP_E_CORRUPT, offset, -1, 0, "block %llu: bad frame at offset %llu (varint too long)",
                 (unsigned long long)index, (unsigned long long)offset);
    return rc;
}

int pf_frame_read(const uint8_t *p, size_t have, pf_frame *f, uint64_t index, uint64_t offset, hp_error *err)
{
    const uint8_t *q = p + 1, *end = p + have;
    int i, rc;
    f->stored = f->raw = 0;
    if ((rc = frame_varint(&q, end, &f->in_len, index, offset, err)) <= 0 ||
        (rc = frame_varint(&q, end, &f->out_len, index, offset, err)) <= 0)
        return rc;
    for (i = 0; i < HP_PACK_NSTREAMS; i++) {
        pf_entry *e = &f->entry[i];
        if (q >= end)
            return 0;
        memset(e, 0, sizeof *e);
        e->method = *q++;
        if (e->method > PF_DEFLATE) {
            hp_failf(err, HP_E_CORRUPT, offset, -1, 0, "block %llu: bad frame at offset %llu (unknown stream method %d)",
                     (unsigned long long)index, (unsigned long long)offset, e->method);
            return -1;
        }
        if (e->method == PF_EMPTY)
            continue;
        if ((rc = frame_varint(&q, end, &e->raw_len, index, offset, err)) <= 0)
            return rc;
        e->comp_len = e->raw_len;
        if (e->method == PF_DEFLATE && (rc = frame_varint(&q, end, &e->comp_len, index, offset, err)) <= 0)
            return rc;
        if (end - q < 4)
            return 0;
        e->crc = hp_be32(q);
        q += 4;
        /* sums of at most 41 values below 2^64 each could wrap: saturate */
        f->stored = e->comp_len > UINT64_MAX - f->stored ? UINT64_MAX : f->stored + e->comp_len;
        f->raw = e->raw_len > UINT64_MAX - f->raw ? UINT64_MAX : f->raw + e->raw_len;
    }
    if (end - q < 4)
        return 0;
    if (pf_crc(0, p, (size_t)(q - p)) != hp_be32(q)) {
        hp_failf(err, HP_E_CORRUPT, offset, -1, 0, "block %llu: frame at offset %llu fails its checksum",
                 (unsigned long long)index, (unsigned long long)offset);
        return -1;
    }
    f->size = (size_t)(q - p) + 4;
    return 1;
}

size_t pf_end_write(uint8_t *out, uint64_t blocks, uint64_t total_in, uint64_t total_out)
{
    size_t n = 0;
    out[n++] = PF_END_MARK;
    n += hp_put_varint(out + n, blocks);
    n += hp_put_varint(out + n, total_in);
    n += hp_put_varint(out + n, total_out);
    hp_put32(out + n, pf_crc(0, out, n));
    return n + 4;
}

int pf_end_read(const uint8_t *p, size_t have, uint64_t offset, uint64_t *blocks, uint64_t *total_in,
                uint64_t *total_out, size_t *size, hp_error *err)
{
    const uint8_t *q = p + 1, *end = p + have;
    uint64_t *values[3];
    int i, rc;
    values[0] = blocks;
    values[1] = total_in;
    values[2] = total_out;
    for (i = 0; i < 3; i++) {
        rc = pf_get_varint(&q, end, values[i]);
        if (rc < 0) {
            hp_failf(err, HP_E_CORRUPT, offset, -1, 0, "bad end record at offset %llu (varint too long)",
                     (unsigned long long)offset);
            return -1;
        }
        if (rc == 0)
            return 0;
    }
    if (end - q < 4)
        return 0;
    if (pf_crc(0, p, (size_t)(q - p)) != hp_be32(q)) {
        hp_failf(err, HP_E_CORRUPT, offset, -1, 0, "end record at offset %llu fails its checksum",
                 (unsigned long long)offset);
        return -1;
    }
    *size = (size_t)(q - p) + 4;
    return 1;
}
