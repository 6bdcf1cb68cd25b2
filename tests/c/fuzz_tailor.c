/* libFuzzer harness for the Tailor decoder (hp_tailor_decoder): mini stream
 * in, HPROF out.
 *
 * Input: a control byte, then the mini bytes.  The control byte:
 *   bits 0-3   log2 of the largest chunk of the chunked runs (1 .. 32768)
 *   bits 4-5   the seed of the chunk sizes
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

#include "hp_common.h"
#include "hp_heaprec.h"
#include "hp_tailor.h"
#include "testkit.h"

#ifndef HP_FUZZ_SEEDGEN

#include "fuzzkit.h"

#define SMALL_HOLD ((size_t)4 << 10)

/* One decode: chunked (max > 0) or in one piece; the output kept in *o. */
static hp_code decode(const uint8_t *mini, size_t len, size_t max, unsigned seed, size_t hold, int patch,
                      fuzz_out *o)
{
    hp_tailor_options opts = { 0, hold };
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
    fuzz_out a = { 0, 1, NULL, 0, 0 }, b = { 0, 1, NULL, 0, 0 }, c = { 0, 1, NULL, 0, 0 };
    hp_code ra, rb, rc;
    size_t max;
    unsigned seed;
    if (size < 1)
        return 0;
    max = (size_t)1 << (data[0] & 15);
    seed = (data[0] >> 4) & 3;
    ra = decode(data + 1, size - 1, 0, 0, (size_t)1 << 30, 0, &a);
    rb = decode(data + 1, size - 1, max, seed, SMALL_HOLD, 1, &b);
    rc = decode(data + 1, size - 1, max, seed + 1, SMALL_HOLD, 0, &c);
    fuzz_check_freed();
    if ((ra == HP_OK) != (rb == HP_OK) || (ra == HP_OK) != (rc == HP_OK)) {
        /* only the output cap may tell them apart: the cut output is longer */
        if (ra != HP_E_NOMEM && rb != HP_E_NOMEM && rc != HP_E_NOMEM)
            abort();
    } else if (ra == HP_OK) {
        hp_buf heap_a, other_a, heap_c, other_c;
        size_t longest_a, longest_c;
        if (b.len != a.len || memcmp(a.d, b.d, a.len) != 0)
            abort(); /* patched: the very bytes of holding */
        split_records(a.d, a.len, 31, &heap_a, &other_a, &longest_a);
        split_records(c.d, c.len, 31, &heap_c, &other_c, &longest_c);
        if (heap_a.len != heap_c.len || memcmp(heap_a.data, heap_c.data, heap_a.len) != 0 ||
            other_a.len != other_c.len || memcmp(other_a.data, other_c.data, other_a.len) != 0)
            abort(); /* cut: the same records and sub-records */
        hp_buf_free(&heap_a);
        hp_buf_free(&other_a);
        hp_buf_free(&heap_c);
        hp_buf_free(&other_c);
    }
    free(a.d);
    free(b.d);
    free(c.d);
    return 0;
}

#else /* HP_FUZZ_SEEDGEN */

#include <dirent.h>
#include <zlib.h>

#include "seedgen.h"

static int keep(void *ctx, const uint8_t *data, size_t len)
{
    hp_buf *b = ctx;
    return hp_buf_append(b, data, len);
}

/* The mini of `dump` (cut to `len`; the encoder stops at the last whole
 * unit, and a HEAP_DUMP_END closes it), behind a control byte. */
static int write_seed(const char *dir, const char *name, unsigned c0, const uint8_t *dump, size_t len, size_t max)
{
    hp_tailor_encoder *e = hp_tailor_encoder_new(NULL, NULL);
    hp_buf out;
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
    ok = out.len > 1 + HP_TAILOR_MAGIC_LEN && out.len <= max;
    if (ok) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        ok = (f = fopen(path, "wb")) != NULL;
        if (ok) {
            ok = fwrite(out.data, 1, out.len, f) == out.len;
            ok = (fclose(f) == 0) && ok;
        }
    }
    hp_buf_free(&out);
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
        gzFile f;
        int got;
        if (!seedgen_is_dump(de->d_name) || !(buf = malloc(1u << 18)))
            continue;
        snprintf(path, sizeof path, "%s/%s", data_dir, de->d_name);
        f = gzopen(path, "rb");
        got = f ? gzread(f, buf, 1u << 18) : -1;
        if (f)
            gzclose(f);
        for (k = 0; got > 0 && k < sizeof cuts / sizeof cuts[0]; k++) {
            snprintf(name, sizeof name, "%s-%zu", de->d_name, cuts[k]);
            n_seeds += write_seed(out, name, controls[k], buf, cuts[k] < (size_t)got ? cuts[k] : (size_t)got, max) == 0;
        }
        free(buf);
    }
    closedir(d);
    printf("seedgen: %zu seeds in %s\n", n_seeds, out);
    return n_seeds ? 0 : 1;
}

#endif
