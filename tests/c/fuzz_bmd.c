/* libFuzzer harness for the BMD reader (hp_bmd_decoder), and the BMD
 * encoder's round trip.
 *
 * Input: a control byte, then the bytes.  The control byte:
 *   bits 0-3   log2 of the largest chunk of the chunked runs (1 .. 32768)
 *   bits 4-5   the seed of the chunk sizes
 *   bit 7      0: the bytes are a BMD; 1: an HPROF to encode
 * A BMD is decoded
 *   A  in one piece, its heap in one record;
 *   B  in chunks (every pass cut differently), its heap in one record;
 *   C  in chunks, its heap in records of at most 4 KiB.
 * All three must succeed or fail alike, with an error that says why; B
 * must be A's very bytes, C A's records with the heap cut elsewhere.
 * An HPROF is encoded in one piece and in chunks (the same outcome and
 * bytes); a BMD the encoder writes must decode.
 * Allocations have a 256 MiB budget and each output a 16 MiB cap (a few
 * bytes asking for gigabytes of zeroed arrays end quickly).
 *
 * Built with -DHP_FUZZ_SEEDGEN (and a C compiler, no libFuzzer) this file is
 * instead the seed generator the `fuzz` target of the Makefile runs:
 *     seedgen OUTDIR DATADIR MAXLEN
 * writes small BMDs and HPROFs of every record kind, the BMD of the small
 * ART dump beside DATADIR, and the beginnings of the BMDs beside it. */
#ifdef HP_FUZZ_SEEDGEN
#define _POSIX_C_SOURCE 200809L /* opendir */
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bmdkit.h"
#include "hp_bmd.h"
#include "testkit.h"

#define ENCODE 0x80

/* Runs a filter over all its passes: chunked (max > 0, sizes from `seed`,
 * different in each pass) or in one piece; the output into *o. */
static hp_code run_passes(int encode, const uint8_t *data, size_t len, size_t max, unsigned seed,
                          uint64_t max_heap_record, const hp_alloc *alloc, hp_sink *sink, hp_error *err)
{
    hp_bmd_options opts = { 0, 0, max_heap_record, NULL, 0 };
    hp_bmd_encoder *e = encode ? hp_bmd_encoder_new(alloc, &opts) : NULL;
    hp_bmd_decoder *d = encode ? NULL : hp_bmd_decoder_new(alloc, &opts);
    uint32_t state = seed * 2654435761u + 1;
    hp_code rc = HP_OK;
    int again;
    if (!e && !d)
        return HP_E_NOMEM;
    do {
        size_t pos = 0;
        while (rc == HP_OK && pos < len) {
            size_t n = max ? 1 + xorshift(&state) % max : len;
            if (n > len - pos)
                n = len - pos;
            rc = encode ? hp_bmd_encoder_feed(e, data + pos, n, sink, err)
                        : hp_bmd_decoder_feed(d, data + pos, n, sink, err);
            pos += n;
        }
        if (rc == HP_OK)
            rc = encode ? hp_bmd_encoder_finish(e, sink, err) : hp_bmd_decoder_finish(d, sink, err);
        again = rc == HP_OK && (encode ? hp_bmd_encoder_again(e) : hp_bmd_decoder_again(d));
    } while (again);
    hp_bmd_encoder_free(e);
    hp_bmd_decoder_free(d);
    return rc;
}

#ifndef HP_FUZZ_SEEDGEN

#include "fuzzkit.h"

/* Outputs are kept whole to be compared: at most OUT_MAX bytes each (a
 * BMD of a few bytes can ask for gigabytes of zeroed arrays). */
#define OUT_MAX ((uint64_t)16 << 20)

static int capped_write(void *ctx, const uint8_t *data, size_t len)
{
    fuzz_out *o = ctx;
    return len > OUT_MAX - o->total ? -1 : fuzz_write(ctx, data, len);
}

static hp_code decode(const uint8_t *bmd, size_t len, size_t max, unsigned seed, uint64_t max_heap_record,
                      fuzz_out *o)
{
    hp_sink sink = { capped_write, o, NULL };
    hp_error err;
    hp_code rc = run_passes(0, bmd, len, max, seed, max_heap_record, fuzz_budget(), &sink, &err);
    fuzz_check_error(rc, &err);
    return rc;
}

/* A and B the same bytes, C the same records, its heap cut elsewhere (or
 * all failing alike; the output cap may tell cut output apart). */
static void check_three(hp_code ra, fuzz_out *a, hp_code rb, fuzz_out *b, hp_code rc, fuzz_out *c)
{
    if (ra != rb && ra != HP_E_NOMEM && rb != HP_E_NOMEM)
        abort();
    if ((ra == HP_OK) != (rc == HP_OK) && ra != HP_E_NOMEM && rc != HP_E_NOMEM)
        abort();
    if (ra == HP_OK && rb == HP_OK && !fuzz_same(a->kept.d, a->kept.len, b->kept.d, b->kept.len))
        abort();
    if (ra == HP_OK && rc == HP_OK) {
        /* the header: the magic, its NUL, the id size and the timestamp */
        const uint8_t *nul = memchr(a->kept.d, 0, a->kept.len);
        size_t header = nul ? (size_t)(nul - a->kept.d) + 13 : 0, longest_a, longest_c;
        (void)longest_a;
        (void)longest_c;
        hp_buf heap_a, other_a, heap_c, other_c;
        split_records(a->kept.d, a->kept.len, header, &heap_a, &other_a, &longest_a);
        split_records(c->kept.d, c->kept.len, header, &heap_c, &other_c, &longest_c);
        if (check_failures || !fuzz_same(heap_a.data, heap_a.len, heap_c.data, heap_c.len))
            abort();
        /* the other records as they were, and a HEAP_DUMP_END after segments */
        if (!fuzz_same(other_a.data, other_a.len, other_c.data, other_c.len) &&
            !(other_c.len == other_a.len + 9 && memcmp(other_a.data, other_c.data, other_a.len) == 0 &&
              other_c.data[other_a.len] == HP_TAG_HEAP_DUMP_END))
            abort();
        hp_buf_free(&heap_a);
        hp_buf_free(&other_a);
        hp_buf_free(&heap_c);
        hp_buf_free(&other_c);
    }
    free(a->kept.d);
    free(b->kept.d);
    free(c->kept.d);
}

static void encode_round_trip(const uint8_t *hprof, size_t len, size_t max, unsigned seed)
{
    fuzz_out a = { 0, 1, { NULL, 0, 0, 0 } }, b = { 0, 1, { NULL, 0, 0, 0 } }, back = { 0, 0, { NULL, 0, 0, 0 } };
    hp_sink sa = { capped_write, &a, NULL }, sb = { capped_write, &b, NULL };
    hp_error err;
    hp_code ra = run_passes(1, hprof, len, 0, 0, 0, fuzz_budget(), &sa, &err), rb;
    fuzz_check_error(ra, &err);
    rb = run_passes(1, hprof, len, max, seed, 0, fuzz_budget(), &sb, &err);
    fuzz_check_error(rb, &err);
    if (ra != rb && ra != HP_E_NOMEM && rb != HP_E_NOMEM)
        abort();
    if (ra == HP_OK && rb == HP_OK && !fuzz_same(a.kept.d, a.kept.len, b.kept.d, b.kept.len))
        abort();
    if (ra == HP_OK) { /* what the encoder writes, the decoder reads */
        hp_code rd = decode(a.kept.d, a.kept.len, max, seed, 0, &back);
        if (rd != HP_OK && rd != HP_E_NOMEM && rd != HP_E_LIMIT)
            abort();
    }
    free(a.kept.d);
    free(b.kept.d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_out a = { 0, 1, { NULL, 0, 0, 0 } }, b = { 0, 1, { NULL, 0, 0, 0 } }, c = { 0, 1, { NULL, 0, 0, 0 } };
    hp_code ra, rb, rc;
    size_t max;
    unsigned seed;
    if (size < 1)
        return 0;
    max = (size_t)1 << (data[0] & 15);
    seed = (data[0] >> 4) & 3;
    if (data[0] & ENCODE) {
        encode_round_trip(data + 1, size - 1, max, seed);
        fuzz_check_freed();
        return 0;
    }
    ra = decode(data + 1, size - 1, 0, 0, 0, &a);
    rb = decode(data + 1, size - 1, max, seed, 0, &b);
    rc = decode(data + 1, size - 1, max, seed + 1, 4096, &c);
    fuzz_check_freed();
    check_three(ra, &a, rb, &b, rc, &c);
    return 0;
}

#else /* HP_FUZZ_SEEDGEN */

#include <dirent.h>

#include "seedgen.h"

static int keep(void *ctx, const uint8_t *data, size_t len)
{
    return hp_buf_append(ctx, data, len);
}

/* Writes control byte c0 and data[0..len) as seed `name`; 0 or -1. */
static int write_seed(const char *dir, const char *name, unsigned c0, const uint8_t *data, size_t len, size_t max)
{
    char path[4096];
    uint8_t c = (uint8_t)c0;
    FILE *f;
    int ok;
    if (len + 1 > max)
        len = max - 1;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!(f = fopen(path, "wb")))
        return -1;
    ok = fwrite(&c, 1, 1, f) == 1 && fwrite(data, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    return ok ? 0 : -1;
}

/* The BMD of a whole HPROF, or NULL. */
static uint8_t *bmd_of(const uint8_t *hprof, size_t len, size_t *out_len)
{
    hp_buf out;
    hp_sink sink = { keep, &out, NULL };
    hp_error err;
    hp_buf_init(&out, NULL);
    if (run_passes(1, hprof, len, 0, 0, 0, NULL, &sink, &err) != HP_OK) {
        hp_buf_free(&out);
        return NULL;
    }
    *out_len = out.len;
    return out.data;
}

int main(int argc, char **argv)
{
    static const unsigned controls[] = { 0x00, 0x13, 0x2C };
    const char *out, *data_dir;
    char path[4096], name[300];
    size_t max, n_seeds = 0, k, len;
    uint8_t *buf, *bmd;
    bb small = { 0 }, hprof4 = { 0 }, hprof8 = { 0 }, late = { 0 };
    DIR *d;
    struct dirent *de;

    if (seedgen_args(argc, argv, &out, &data_dir, &max) != 0)
        return 2;
    bmd_small(&small);
    hprof_small(&hprof4, 4, 0, 0);
    hprof_small(&hprof8, 8, 0, 0);
    hprof_small(&late, 4, LOADS_LAST | OBJECTS_FIRST, 0);
    for (k = 0; k < sizeof controls / sizeof controls[0]; k++) {
        snprintf(name, sizeof name, "small-%zu", k);
        n_seeds += write_seed(out, name, controls[k], small.d, small.len, max) == 0;
        snprintf(name, sizeof name, "hprof4-%zu", k);
        n_seeds += write_seed(out, name, controls[k] | ENCODE, hprof4.d, hprof4.len, max) == 0;
        if ((bmd = bmd_of(hprof4.d, hprof4.len, &len)) != NULL) {
            snprintf(name, sizeof name, "hprof4-bmd-%zu", k);
            n_seeds += write_seed(out, name, controls[k], bmd, len, max) == 0;
            free(bmd);
        }
    }
    n_seeds += write_seed(out, "hprof8", 0x25 | ENCODE, hprof8.d, hprof8.len, max) == 0;
    n_seeds += write_seed(out, "late", 0x25 | ENCODE, late.d, late.len, max) == 0;
    /* the small ART dump beside DATADIR, as it is and as BMD */
    snprintf(path, sizeof path, "%s/../tailor/art_like.hprof", data_dir);
    if ((buf = seedgen_read_head(path, 1u << 20, &len)) != NULL) {
        size_t blen;
        n_seeds += write_seed(out, "art_like", 0x13 | ENCODE, buf, len, max) == 0;
        if ((bmd = bmd_of(buf, len, &blen)) != NULL) {
            n_seeds += write_seed(out, "art_like-bmd", 0x13, bmd, blen, max) == 0;
            free(bmd);
        }
        free(buf);
    }
    /* the beginnings of the BMDs beside DATADIR */
    snprintf(path, sizeof path, "%s/../bmd", data_dir);
    if ((d = opendir(path)) != NULL) {
        while ((de = readdir(d)) != NULL) {
            size_t n = strlen(de->d_name);
            if (n < 5 || strcmp(de->d_name + n - 4, ".bmd") != 0)
                continue;
            snprintf(path, sizeof path, "%s/../bmd/%s", data_dir, de->d_name);
            if (!(buf = seedgen_read_head(path, max, &len)))
                continue;
            snprintf(name, sizeof name, "%s-head", de->d_name);
            n_seeds += write_seed(out, name, 0x2C, buf, len, max) == 0;
            free(buf);
        }
        closedir(d);
    }
    free(small.d);
    free(hprof4.d);
    free(hprof8.d);
    free(late.d);
    printf("seedgen: %zu seeds in %s\n", n_seeds, out);
    return n_seeds ? 0 : 1;
}

#endif
