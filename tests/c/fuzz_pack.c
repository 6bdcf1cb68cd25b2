/* libFuzzer harness for the pack decoder, end to end: the modelling decoder
 * (hp_pack_decoder) fed streams that carry no checksum -- what a buggy or
 * hostile writer could hand it once the container's CRCs pass -- and the
 * whole reader (hp_unpacker) fed a real pack made of the same streams, or
 * the input's bytes themselves.
 *
 * Input: two control bytes, then blocks.  The first control byte:
 *   bit 0      id size 8 (else 4)
 *   bits 1-2   the HPROF version (0..3)
 *   bit 3      app_only
 *   bit 4      drop_traces
 *   bits 5-7   which strip mask (none, Tailor's, all, one type...)
 * The second:
 *   bits 0-1   0: streams stored, 1: deflated, 2: deflated and the pack
 *              damaged at the position the next byte gives, 3: the bytes
 *              after the control bytes are the pack itself
 *   bits 2-7   the pack is fed in pieces of 1 + 97 * this many bytes
 * Each block: HP_PACK_NSTREAMS little-endian u16 stream lengths, then the
 * streams back to back (lengths cut to what is left).
 *
 * The blocks go to the modelling decoder directly, then, framed with their
 * CRCs and the lengths that decoder restored, through hp_unpacker: both must
 * accept exactly the same packs and restore the same number of bytes (a
 * damaged pack must fail).  Every error must carry a message; nothing may
 * crash or trip a sanitizer.  Allocations go through an allocator with a
 * 256 MiB budget (beyond it they fail: the decoders must report HP_E_NOMEM)
 * and the output sink refuses more than 64 MiB, so a few bytes asking for
 * gigabytes of zeros end quickly.
 *
 * Built with -DHP_FUZZ_SEEDGEN (and a C compiler, no libFuzzer) this file is
 * instead the seed generator the `fuzz` target of the Makefile runs:
 *     seedgen OUTDIR DATADIR MAXLEN
 * packs the beginning of every dump in DATADIR with small blocks and writes
 * its first blocks in the input format above. */
#ifdef HP_FUZZ_SEEDGEN
#define _POSIX_C_SOURCE 200809L /* opendir */
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "hp_common.h"
#include "hp_header.h"
#include "hp_pack.h"
#include "hp_pack_frame.h"
#include "hp_packer.h"

static const unsigned strip_masks[8] = {
    0, HP_PACK_STRIP_TAILOR, HP_PACK_STRIP_ALL, 1u << HP_T_INT, 1u << HP_T_CHAR, 1u << HP_T_BYTE, 1u << HP_T_LONG, 0,
};

static hp_pack_policy control_policy(unsigned c0)
{
    hp_pack_policy pol;
    pol.strip_types = strip_masks[c0 >> 5];
    pol.app_only = (c0 >> 3) & 1;
    pol.drop_traces = (c0 >> 4) & 1;
    return pol;
}

#ifndef HP_FUZZ_SEEDGEN

#include "fuzzkit.h"


/* Appends block k's frame and payloads (stored, or raw-deflated at level 1). */
static void frame_block(mem_sink *pack, const uint8_t *const *streams, const size_t *lens, uint64_t out_len,
                        int deflated)
{
    pf_entry entry[HP_PACK_NSTREAMS];
    uint8_t frame[PF_FRAME_MAX];
    mem_sink payload = { NULL, 0, 0, 0 };
    int i;
    for (i = 0; i < HP_PACK_NSTREAMS; i++) {
        pf_entry *e = &entry[i];
        size_t at = payload.len;
        e->method = lens[i] ? PF_STORED : PF_EMPTY;
        e->raw_len = e->comp_len = lens[i];
        if (lens[i] && deflated) {
            deflate_append(&payload, streams[i], lens[i], 1, -15);
            e->method = PF_DEFLATE;
            e->comp_len = payload.len - at;
        } else {
            mem_write(&payload, streams[i], lens[i]);
        }
        e->crc = (uint32_t)crc32(0, payload.d ? payload.d + at : NULL, (uInt)e->comp_len);
    }
    mem_write(pack, frame, pf_frame_write(frame, 0, out_len, entry));
    mem_write(pack, payload.d, payload.len);
    free(payload.d);
}

/* The whole reader over `pack`, fed in pieces of `step` bytes. */
static hp_code unpack(const uint8_t *pack, size_t len, size_t step, uint64_t *out)
{
    hp_unpacker *u = hp_unpacker_new(fuzz_budget(), NULL);
    fuzz_out o = { 0, 0, { NULL, 0, 0, 0 } };
    hp_sink sink = fuzz_sink(&o, 0);
    hp_error err;
    hp_code rc = HP_OK;
    size_t at = 0;
    if (!u)
        return HP_E_NOMEM;
    while (rc == HP_OK && at < len) {
        size_t n = len - at < step ? len - at : step;
        rc = hp_unpacker_feed(u, pack + at, n, &sink, &err);
        fuzz_check_error(rc, &err);
        at += n;
    }
    if (rc == HP_OK) {
        rc = hp_unpacker_finish(u, &sink, &err);
        fuzz_check_error(rc, &err);
    }
    if (rc == HP_OK) {
        hp_unfinished unfinished;
        hp_unpacker_unfinished(u, &unfinished);
        fuzz_check_unfinished(&unfinished, hp_unpacker_bytes_out(u));
    }
    hp_unpacker_free(u);
    *out = o.total;
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hp_header header;
    hp_pack_policy pol;
    hp_pack_info info;
    hp_pack_decoder *d;
    uint64_t unpacked = 0, restored;
    fuzz_out o = { 0, 0, { NULL, 0, 0, 0 } };
    hp_sink sink = fuzz_sink(&o, 0);
    hp_error err;
    hp_code rc = HP_OK, urc;
    mem_sink pack = { NULL, 0, 0, 0 };
    uint8_t head[PF_HEADER_SIZE], end[PF_END_MAX], dump_head[HP_HEADER_MAX];
    size_t pos = 2, step, blocks = 0, damage = 0, dump_head_len;
    int mode;
    if (size < 2)
        return 0;
    mode = data[1] & 3;
    step = 1 + 97 * (size_t)(data[1] >> 2);
    if (mode == 3) { /* arbitrary bytes as a pack */
        unpack(data + 2, size - 2, step, &unpacked);
        fuzz_check_freed();
        return 0;
    }
    if (mode == 2 && size > 2) {
        damage = data[2];
        pos = 3;
    }
    memset(&header, 0, sizeof header);
    header.id_size = data[0] & 1 ? 8 : 4;
    header.version = (data[0] >> 1) & 3;
    header.timestamp = 0x0123456789ABCDEFu;
    pol = control_policy(data[0]);
    memset(&info, 0, sizeof info);
    info.version = header.version;
    info.id_size = header.id_size;
    info.timestamp = header.timestamp;
    info.policy = pol;
    pf_header_write(head, &info);
    dump_head_len = hp_header_write(dump_head, header.version, header.id_size, header.timestamp);
    mem_write(&pack, head, sizeof head);
    d = hp_pack_decoder_new(fuzz_budget(), &header, &pol);
    if (!d)
        return 0;
    while (rc == HP_OK && pos + 2 * HP_PACK_NSTREAMS <= size) {
        const uint8_t *streams[HP_PACK_NSTREAMS];
        size_t lens[HP_PACK_NSTREAMS], at = pos + 2 * HP_PACK_NSTREAMS;
        uint64_t before = hp_pack_decoder_bytes_out(d);
        int i;
        for (i = 0; i < HP_PACK_NSTREAMS; i++) {
            size_t want = (size_t)data[pos + 2 * i] | (size_t)data[pos + 2 * i + 1] << 8;
            lens[i] = want < size - at ? want : size - at;
            streams[i] = data + at;
            at += lens[i];
        }
        pos = at;
        rc = hp_pack_decoder_block(d, streams, lens, UINT64_MAX, &sink, &err);
        fuzz_check_error(rc, &err);
        /* out_len as the decoder restored it (the header is in no block) */
        frame_block(&pack, streams, lens, hp_pack_decoder_bytes_out(d) - (blocks ? before : dump_head_len),
                    mode != 0);
        blocks++;
    }
    if (rc == HP_OK) {
        rc = hp_pack_decoder_finish(d, &sink, &err);
        fuzz_check_error(rc, &err);
    }
    restored = hp_pack_decoder_bytes_out(d);
    hp_pack_decoder_free(d);
    mem_write(&pack, end, pf_end_write(end, blocks, 0, restored));
    if (mode == 2 && pack.len > PF_HEADER_SIZE)
        pack.d[PF_HEADER_SIZE + damage * (pack.len - PF_HEADER_SIZE) / 256] ^= 0x20;
    urc = unpack(pack.d, pack.len, step, &unpacked);
    free(pack.d);
    if (mode == 2 ? urc == HP_OK : (urc == HP_OK) != (rc == HP_OK))
        abort(); /* the reader accepts what the modelling decoder does, and no damaged pack */
    if (urc == HP_OK && unpacked != o.total)
        abort();
    fuzz_check_freed(); /* everything the decoders took is given back */
    return 0;
}

#else /* HP_FUZZ_SEEDGEN */

#include <dirent.h>
#include <zlib.h>

#include "seedgen.h"

typedef struct seed {
    uint8_t *data;
    size_t len, cap, max;
    int blocks, full;
} seed;

/* Appends one block in the input format, unless the seed is full. */
static int add_block(void *ctx, const hp_pack_block *b)
{
    seed *s = ctx;
    size_t need = 2 * HP_PACK_NSTREAMS, i;
    for (i = 0; i < HP_PACK_NSTREAMS; i++)
        need += b->len[i] < 0xFFFF ? b->len[i] : 0xFFFF;
    if (s->full || s->blocks == 3 || s->len + need > s->max) {
        s->full = 1;
        return 0;
    }
    for (i = 0; i < HP_PACK_NSTREAMS; i++) {
        size_t n = b->len[i] < 0xFFFF ? b->len[i] : 0xFFFF;
        s->data[s->len++] = (uint8_t)n;
        s->data[s->len++] = (uint8_t)(n >> 8);
    }
    for (i = 0; i < HP_PACK_NSTREAMS; i++) {
        size_t n = b->len[i] < 0xFFFF ? b->len[i] : 0xFFFF;
        if (n)
            memcpy(s->data + s->len, b->data[i], n);
        s->len += n;
    }
    s->blocks++;
    return 0;
}

static int save(const char *dir, const char *name, const uint8_t *data, size_t len)
{
    char path[4096];
    FILE *f;
    int ok;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ok = (f = fopen(path, "wb")) != NULL;
    if (ok) {
        ok = fwrite(data, 1, len, f) == len;
        ok = (fclose(f) == 0) && ok;
    }
    return ok ? 0 : -1;
}

static int keep_bytes(void *ctx, const uint8_t *data, size_t len)
{
    seed *s = ctx;
    if (s->len + len > s->max) {
        s->full = 1;
        return -1;
    }
    memcpy(s->data + s->len, data, len);
    s->len += len;
    return 0;
}

/* A whole pack of `dump` (mode 3), when it fits in `max` bytes. */
static int write_pack_seed(const char *dir, const char *name, unsigned c0, const uint8_t *dump, size_t len,
                           size_t max)
{
    hp_packer_options opts = { { 0, 0, 0 }, 1, HP_PACK_BLOCK_MIN, 0 };
    hp_packer *p;
    seed s = { 0 };
    hp_sink sink = { keep_bytes, &s, NULL };
    hp_error err;
    int ok;
    opts.policy = control_policy(c0);
    if (!(p = hp_packer_new(NULL, &opts)) || !(s.data = malloc(max))) {
        hp_packer_free(p);
        return -1;
    }
    s.max = max;
    s.data[s.len++] = (uint8_t)c0;
    s.data[s.len++] = 3 | 40u << 2; /* the pack itself, fed in pieces of 3881 bytes */
    ok = hp_packer_feed(p, dump, len, &sink, &err) == HP_OK && hp_packer_finish(p, &sink, &err) == HP_OK;
    ok = ok && save(dir, name, s.data, s.len) == 0;
    free(s.data);
    hp_packer_free(p);
    return ok ? 0 : -1;
}

/* Packs `dump` (possibly cut short) under control byte c0's policy and
 * writes its first blocks as a seed; 0 when written. */
static int write_seed(const char *dir, const char *name, unsigned c0, const uint8_t *dump, size_t len, size_t max)
{
    hp_pack_policy pol = control_policy(c0);
    hp_pack_encoder *e = hp_pack_encoder_new(NULL, &pol, HP_PACK_BLOCK_MIN);
    const hp_header *h;
    seed s = { 0 };
    hp_error err;
    int ok;
    if (!e || !(s.data = malloc(max))) {
        hp_pack_encoder_free(e);
        return -1;
    }
    s.data[s.len++] = 0;                   /* the first control byte, once the header is known */
    s.data[s.len++] = (uint8_t)((c0 & 1u) | 1u << 2); /* stored or deflated, fed in pieces of 98 bytes */
    s.max = max;
    hp_pack_encoder_feed(e, dump, len, add_block, &s, &err);
    hp_pack_encoder_finish(e, add_block, &s, &err); /* a cut dump fails here, after its blocks */
    h = hp_pack_encoder_header(e);
    ok = h && s.blocks > 0;
    if (ok) {
        s.data[0] = (uint8_t)((c0 & 0xF8u) | (unsigned)(h->version & 3) << 1 | (h->id_size == 8));
        ok = save(dir, name, s.data, s.len) == 0;
    }
    free(s.data);
    hp_pack_encoder_free(e);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    /* keep-all, Tailor's policy, all + drop traces, app_only + keep-all; odd ones deflated */
    static const unsigned policies[] = { 0x00, 0x21, 0x50, 0x09 };
    const char *out, *data_dir;
    size_t max, n_seeds = 0, k;
    DIR *d;
    struct dirent *de;

    if (seedgen_args(argc, argv, &out, &data_dir, &max) != 0)
        return 2;
    d = opendir(data_dir);
    if (!d) {
        fprintf(stderr, "seedgen: no data folder %s\n", data_dir);
        return 1;
    }
    while ((de = readdir(d)) != NULL) {
        char path[4096], name[300];
        uint8_t *buf;
        gzFile f;
        int got;
        if (!seedgen_is_dump(de->d_name) || !(buf = malloc(1u << 20)))
            continue;
        snprintf(path, sizeof path, "%s/%s", data_dir, de->d_name);
        f = gzopen(path, "rb");
        got = f ? gzread(f, buf, 1u << 20) : -1;
        if (f)
            gzclose(f);
        for (k = 0; got > 0 && k < sizeof policies / sizeof policies[0]; k++) {
            snprintf(name, sizeof name, "%s-%02x", de->d_name, policies[k]);
            n_seeds += write_seed(out, name, policies[k], buf, (size_t)got, max) == 0;
        }
        if (got > 0) { /* and a real pack of its first 16 KiB */
            snprintf(name, sizeof name, "%s-pack", de->d_name);
            n_seeds += write_pack_seed(out, name, 0x20, buf, got < 16384 ? (size_t)got : 16384, max) == 0;
        }
        free(buf);
    }
    closedir(d);
    printf("seedgen: %zu seeds in %s\n", n_seeds, out);
    return n_seeds ? 0 : 1;
}

#endif
