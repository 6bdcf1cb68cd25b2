/* libFuzzer harness for the Tailor decoder (hp_tailor_decoder): mini stream
 * in, HPROF out.
 *
 * Input: a control byte, then the mini bytes.  The control byte:
 *   bits 0-3   log2 of the largest chunk of the chunked runs (1 .. 32768)
 *   bits 4-5   the seed of the chunk sizes
 *   bits 6-7   the mini's framing: 1 zlib, 2 gzip, else bare.  A zlib or
 *              gzip mini is inflated first (as hprofkit.Decoder does, at
 *              most 16 MiB); a stream zlib refuses ends the run.
 * The mini is decoded
 *   A  in one piece, holding every segment (max_record 1 GiB), no patching;
 *   B  in chunks, max_record 4 KiB, to a sink that can patch;
 *   C  in chunks, max_record 4 KiB, to a sink that cannot.
 * All three must succeed or fail alike, with an error that says why; when
 * they succeed, B must be A's very bytes (a streamed segment, its length
 * patched), and C must hold A's records, heap segments cut into pieces of
 * at most the limit (or one sub-record each) but with the same bodies.
 * Allocations have a 256 MiB budget and the output a 64 MiB cap (a few
 * bytes asking for gigabytes of zeros end quickly).
 *
 * Built with -DHP_FUZZ_SEEDGEN (and a C compiler, no libFuzzer) this file is
 * instead the seed generator the `fuzz` target of the Makefile runs:
 *     seedgen OUTDIR DATADIR MAXLEN
 * writes the minis of the beginnings of the Android dumps in DATADIR. */
#ifdef HP_FUZZ_SEEDGEN
#define _POSIX_C_SOURCE 200809L /* opendir */
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "hp_common.h"
#include "hp_heaprec.h"
#include "hp_tailor.h"
#include "testkit.h"

enum { FRAME_ZLIB = 1, FRAME_GZIP = 2 };

#ifndef HP_FUZZ_SEEDGEN

#include "fuzzkit.h"

#define SMALL_HOLD ((size_t)4 << 10)
#define INFLATED_MAX ((size_t)16 << 20)

/* The mini inside a zlib (15) or gzip (31) stream into *out (libc memory):
 * 0, or -1 when zlib refuses it, it is cut short, or it inflates past
 * INFLATED_MAX. */
static int inflate_mini(const uint8_t *in, size_t len, int window_bits, fuzz_out *out)
{
    z_stream z;
    uint8_t piece[65536];
    int zrc = Z_OK;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, window_bits) != Z_OK)
        abort();
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)len;
    while (zrc == Z_OK && out->kept.len <= INFLATED_MAX) {
        z.next_out = piece;
        z.avail_out = sizeof piece;
        zrc = inflate(&z, Z_NO_FLUSH);
        if (zrc == Z_BUF_ERROR && z.avail_in == 0)
            break; /* cut short */
        if (zrc == Z_OK || zrc == Z_STREAM_END)
            fuzz_write(out, piece, sizeof piece - z.avail_out);
    }
    inflateEnd(&z);
    return zrc == Z_STREAM_END && z.avail_in == 0 && out->kept.len <= INFLATED_MAX ? 0 : -1;
}

/* One decode: chunked (max > 0) or in one piece; the output kept in *o. */
static hp_code decode(const uint8_t *mini, size_t len, size_t max, unsigned seed, size_t hold, int patch,
                      fuzz_out *o)
{
    hp_tailor_options opts = { 0, hold, 0 };
    hp_tailor_decoder *d = hp_tailor_decoder_new(fuzz_budget(), &opts);
    hp_sink sink = fuzz_sink(o, patch);
    uint32_t state = seed * 2654435761u + 1;
    hp_error err;
    hp_code rc = HP_OK;
    size_t pos = 0;
    if (!d)
        return HP_E_NOMEM;
    while (rc == HP_OK && pos < len) {
        size_t n = max ? 1 + xorshift(&state) % max : len;
        if (n > len - pos)
            n = len - pos;
        rc = hp_tailor_decoder_feed(d, mini + pos, n, &sink, &err);
        fuzz_check_error(rc, &err);
        pos += n;
    }
    if (rc == HP_OK) {
        rc = hp_tailor_decoder_finish(d, &sink, &err);
        fuzz_check_error(rc, &err);
    }
    hp_tailor_decoder_free(d);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_out a = { 0, 1, { NULL, 0, 0, 0 } }, b = { 0, 1, { NULL, 0, 0, 0 } }, c = { 0, 1, { NULL, 0, 0, 0 } };
    fuzz_out inflated = { 0, 1, { NULL, 0, 0, 0 } };
    const uint8_t *mini;
    hp_code ra, rb, rc;
    size_t max, len;
    unsigned seed, framing;
    if (size < 1)
        return 0;
    max = (size_t)1 << (data[0] & 15);
    seed = (data[0] >> 4) & 3;
    framing = data[0] >> 6;
    mini = data + 1;
    len = size - 1;
    if (framing == FRAME_ZLIB || framing == FRAME_GZIP) {
        if (inflate_mini(mini, len, framing == FRAME_ZLIB ? 15 : 31, &inflated) != 0) {
            free(inflated.kept.d);
            return 0;
        }
        mini = inflated.kept.d ? inflated.kept.d : (const uint8_t *)"";
        len = inflated.kept.len;
    }
    ra = decode(mini, len, 0, 0, (size_t)1 << 30, 0, &a);
    rb = decode(mini, len, max, seed, SMALL_HOLD, 1, &b);
    rc = decode(mini, len, max, seed + 1, SMALL_HOLD, 0, &c);
    free(inflated.kept.d);
    fuzz_check_freed();
    fuzz_check_three(ra, &a, rb, &b, rc, &c);
    return 0;
}

#else /* HP_FUZZ_SEEDGEN */

#include <dirent.h>

#include "seedgen.h"

static int keep(void *ctx, const uint8_t *data, size_t len)
{
    hp_buf *b = ctx;
    return hp_buf_append(b, data, len);
}

/* The mini of `dump` (cut to `len`; the encoder stops at the last whole
 * unit, and a HEAP_DUMP_END closes it), behind a control byte, in the
 * framing its bits 6-7 say. */
static int write_seed(const char *dir, const char *name, unsigned c0, const uint8_t *dump, size_t len, size_t max)
{
    hp_tailor_encoder *e = hp_tailor_encoder_new(NULL, NULL);
    hp_buf out;
    mem_sink seed = { NULL, 0, 0, 0 };
    hp_sink sink = { keep, &out, NULL };
    hp_error err;
    char path[4096];
    FILE *f;
    int ok;
    hp_buf_init(&out, NULL);
    hp_buf_append(&out, &c0, 1);
    hp_tailor_encoder_feed(e, dump, len, &sink, &err); /* a cut dump stops where its mini does */
    hp_tailor_encoder_finish(e, &sink, &err);
    hp_tailor_encoder_free(e);
    hp_buf_append(&out, "\x2c", 1);
    ok = out.len > 1 + HP_TAILOR_MAGIC_LEN;
    mem_write(&seed, out.data, 1);
    if ((c0 >> 6) == FRAME_ZLIB || (c0 >> 6) == FRAME_GZIP)
        deflate_append(&seed, out.data + 1, out.len - 1, 6, (c0 >> 6) == FRAME_ZLIB ? 15 : 31);
    else
        mem_write(&seed, out.data + 1, out.len - 1);
    ok = ok && seed.len <= max;
    if (ok) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        ok = (f = fopen(path, "wb")) != NULL;
        if (ok) {
            ok = fwrite(seed.d, 1, seed.len, f) == seed.len;
            ok = (fclose(f) == 0) && ok;
        }
    }
    hp_buf_free(&out);
    free(seed.d);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    static const unsigned controls[] = { 0x00, 0x13, 0x2C };
    static const size_t cuts[] = { 4096, 16384, 60000 };
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
        size_t got = 0;
        if (!seedgen_is_dump(de->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", data_dir, de->d_name);
        if (!(buf = seedgen_read_head(path, 1u << 18, &got)))
            continue;
        for (k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
            unsigned framing;
            for (framing = 0; framing < 3; framing++) {
                snprintf(name, sizeof name, "%s-%zu-%u", de->d_name, cuts[k], framing);
                n_seeds += write_seed(out, name, controls[k] | framing << 6, buf,
                                      cuts[k] < got ? cuts[k] : got, max) == 0;
            }
        }
        free(buf);
    }
    closedir(d);
    {
        /* A whole small ART dump (the Tailor vectors beside DATADIR), in each framing. */
        char path[4096], name[64];
        size_t len = 0;
        uint8_t *buf;
        unsigned framing;
        snprintf(path, sizeof path, "%s/../tailor/art_like.hprof", data_dir);
        if ((buf = seedgen_read_head(path, 1u << 20, &len)) != NULL) {
            for (framing = 0; framing < 3; framing++) {
                snprintf(name, sizeof name, "art_like-%u", framing);
                n_seeds += write_seed(out, name, 0x25 | framing << 6, buf, len, max) == 0;
            }
            free(buf);
        }
    }
    printf("seedgen: %zu seeds in %s\n", n_seeds, out);
    return n_seeds ? 0 : 1;
}

#endif
