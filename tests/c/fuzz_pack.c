/* libFuzzer harness for the pack decoder (hp_pack_decoder) fed streams that
 * carry no checksum: what a buggy or hostile writer could hand it once the
 * container's CRCs pass.
 *
 * Input: a control byte, then blocks.  The control byte:
 *   bit 0      id size 8 (else 4)
 *   bits 1-2   the HPROF version (0..3)
 *   bit 3      app_only
 *   bit 4      drop_traces
 *   bits 5-7   which strip mask (none, Tailor's, all, one type...)
 * Each block: HP_PACK_NSTREAMS little-endian u16 stream lengths, then the
 * streams back to back (lengths cut to what is left).  Every block and the
 * finish must return HP_OK or an error with a message; nothing may crash or
 * trip a sanitizer.  Allocations go through an allocator with a 256 MiB
 * budget (beyond it they fail: the decoder must report HP_E_NOMEM) and the
 * output sink refuses more than 64 MiB, so a few bytes asking for gigabytes
 * of zeros end quickly.
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

#include "hp_common.h"
#include "hp_header.h"
#include "hp_pack.h"
#include "countalloc.h"

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

/* ---- an allocator with a budget (countalloc.h) ---- */

#define BUDGET ((size_t)256 << 20)
#define SINK_MAX ((uint64_t)64 << 20)

static int count_sink(void *ctx, const uint8_t *data, size_t len)
{
    uint64_t *total = ctx;
    (void)data;
    if (len > SINK_MAX - *total)
        return -1;
    *total += len;
    return 0;
}

static void check_error(hp_code rc, const hp_error *err)
{
    if (rc != HP_OK && (err->code != rc || err->detail == NULL))
        abort(); /* an error must say what went wrong */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hp_header header;
    hp_pack_policy pol;
    hp_pack_decoder *d;
    uint64_t written = 0;
    hp_sink sink = { count_sink, &written };
    hp_error err;
    hp_code rc = HP_OK;
    size_t pos = 1;
    if (size < 1)
        return 0;
    memset(&header, 0, sizeof header);
    header.id_size = data[0] & 1 ? 8 : 4;
    header.version = (data[0] >> 1) & 3;
    header.timestamp = 0x0123456789ABCDEFu;
    pol = control_policy(data[0]);
    countalloc_budget = BUDGET;
    d = hp_pack_decoder_new(&countalloc, &header, &pol);
    if (!d)
        return 0;
    while (rc == HP_OK && pos + 2 * HP_PACK_NSTREAMS <= size) {
        const uint8_t *streams[HP_PACK_NSTREAMS];
        size_t lens[HP_PACK_NSTREAMS], at = pos + 2 * HP_PACK_NSTREAMS;
        int i;
        for (i = 0; i < HP_PACK_NSTREAMS; i++) {
            size_t want = (size_t)data[pos + 2 * i] | (size_t)data[pos + 2 * i + 1] << 8;
            lens[i] = want < size - at ? want : size - at;
            streams[i] = data + at;
            at += lens[i];
        }
        pos = at;
        rc = hp_pack_decoder_block(d, streams, lens, UINT64_MAX, &sink, &err);
        check_error(rc, &err);
    }
    if (rc == HP_OK) {
        rc = hp_pack_decoder_finish(d, &sink, &err);
        check_error(rc, &err);
    }
    hp_pack_decoder_free(d);
    if (countalloc_live != 0)
        abort(); /* everything the decoder took is given back */
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

/* Packs `dump` (possibly cut short) under control byte c0's policy and
 * writes its first blocks as a seed; 0 when written. */
static int write_seed(const char *dir, const char *name, unsigned c0, const uint8_t *dump, size_t len, size_t max)
{
    hp_pack_policy pol = control_policy(c0);
    hp_pack_encoder *e = hp_pack_encoder_new(NULL, &pol, HP_PACK_BLOCK_MIN);
    const hp_header *h;
    seed s = { 0 };
    hp_error err;
    char path[4096];
    FILE *f;
    int ok;
    if (!e || !(s.data = malloc(max))) {
        hp_pack_encoder_free(e);
        return -1;
    }
    s.data[s.len++] = 0; /* the control byte, once the header is known */
    s.max = max;
    hp_pack_encoder_feed(e, dump, len, add_block, &s, &err);
    hp_pack_encoder_finish(e, add_block, &s, &err); /* a cut dump fails here, after its blocks */
    h = hp_pack_encoder_header(e);
    ok = h && s.blocks > 0;
    if (ok) {
        s.data[0] = (uint8_t)((c0 & 0xF8u) | (unsigned)(h->version & 3) << 1 | (h->id_size == 8));
        snprintf(path, sizeof path, "%s/%s", dir, name);
        ok = (f = fopen(path, "wb")) != NULL;
        if (ok) {
            ok = fwrite(s.data, 1, s.len, f) == s.len;
            ok = (fclose(f) == 0) && ok;
        }
    }
    free(s.data);
    hp_pack_encoder_free(e);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    /* keep-all, Tailor's policy, all + drop traces, app_only + keep-all */
    static const unsigned policies[] = { 0x00, 0x20, 0x50, 0x08 };
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
        free(buf);
    }
    closedir(d);
    printf("seedgen: %zu seeds in %s\n", n_seeds, out);
    return n_seeds ? 0 : 1;
}

#endif
