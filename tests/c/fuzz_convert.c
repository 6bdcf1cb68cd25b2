/* libFuzzer harness for the converter (hp_converter): Android HPROF 1.0.3
 * in, standard (or filtered 1.0.3) HPROF out.
 *
 * Input: a control byte, then the dump.  The control byte:
 *   bits 0-3   log2 of the largest chunk of the chunked runs (1 .. 32768)
 *   bit  4     to_standard
 *   bit  5     app_only
 *   bits 6-7   strip_types: none, char[], byte[], or every primitive type
 * The dump is converted
 *   A  in one piece, holding every heap record (max_record 1 GiB), no patching;
 *   B  in chunks, max_record 4 KiB, to a sink that can patch;
 *   C  in chunks, max_record 4 KiB, to a sink that cannot.
 * All three must succeed or fail alike, with an error that says why; when
 * they succeed, B must be A's very bytes (a streamed record, its length
 * patched), and C must hold A's records, heap records cut into pieces but
 * with the same bodies.  Allocations have a 256 MiB budget and the output a
 * 64 MiB cap.
 *
 * Built with -DHP_FUZZ_SEEDGEN (and a C compiler, no libFuzzer) this file is
 * instead the seed generator the `fuzz` target of the Makefile runs:
 *     seedgen OUTDIR DATADIR MAXLEN
 * writes the beginnings of the 1.0.3 dumps in DATADIR, and their header
 * followed by their first heap record on. */
#ifdef HP_FUZZ_SEEDGEN
#define _POSIX_C_SOURCE 200809L /* opendir */
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp_common.h"
#include "hp_convert.h"
#include "testkit.h"

#ifndef HP_FUZZ_SEEDGEN

#include "fuzzkit.h"

#define SMALL_HOLD ((size_t)4 << 10)

static const unsigned strip_choices[4] = { 0, 1u << HP_T_CHAR, 1u << HP_T_BYTE, 0xFF0u };

static hp_code feed(void *c, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    return hp_converter_feed(c, data, len, out, err);
}
static hp_code finish(void *c, const hp_sink *out, hp_error *err) { return hp_converter_finish(c, out, err); }
static void unfinished(const void *c, hp_unfinished *out) { hp_converter_unfinished(c, out); }

/* One conversion: chunked (max > 0) or in one piece; the output kept in *o. */
static hp_code convert(const uint8_t *dump, size_t len, const hp_convert_options *base, size_t max, unsigned seed,
                       size_t hold, int patch, fuzz_out *o)
{
    hp_convert_options opts = *base;
    hp_sink sink = fuzz_sink(o, patch);
    fuzz_rewriter w = { NULL, feed, finish, unfinished };
    hp_code rc;
    opts.max_record = hold;
    if (!(w.writer = hp_converter_new(fuzz_budget(), &opts)))
        return HP_E_NOMEM;
    rc = fuzz_rewrite(&w, dump, len, max, seed * 2654435761u + 1, &sink);
    hp_converter_free(w.writer);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_out a = { 0, 1, { NULL, 0, 0, 0 } }, b = { 0, 1, { NULL, 0, 0, 0 } }, c = { 0, 1, { NULL, 0, 0, 0 } };
    hp_convert_options opts;
    hp_code ra, rb, rc;
    size_t max;
    if (size < 1)
        return 0;
    memset(&opts, 0, sizeof opts);
    max = (size_t)1 << (data[0] & 15);
    opts.to_standard = (data[0] >> 4) & 1;
    opts.app_only = (data[0] >> 5) & 1;
    opts.strip_types = strip_choices[data[0] >> 6];
    ra = convert(data + 1, size - 1, &opts, 0, 0, (size_t)1 << 30, 0, &a);
    rb = convert(data + 1, size - 1, &opts, max, 1, SMALL_HOLD, 1, &b);
    rc = convert(data + 1, size - 1, &opts, max, 2, SMALL_HOLD, 0, &c);
    fuzz_check_freed();
    fuzz_check_three(ra, &a, rb, &b, rc, &c);
    return 0;
}

#else /* HP_FUZZ_SEEDGEN */

#include <dirent.h>

#include "seedgen.h"

static int write_seed(const char *dir, const char *name, unsigned c0, const uint8_t *head, size_t head_len,
                      const uint8_t *body, size_t body_len)
{
    char path[4096];
    uint8_t ctl = (uint8_t)c0;
    FILE *f;
    int ok;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!(f = fopen(path, "wb")))
        return -1;
    ok = fwrite(&ctl, 1, 1, f) == 1 && fwrite(head, 1, head_len, f) == head_len &&
         (body_len == 0 || fwrite(body, 1, body_len, f) == body_len);
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

int main(int argc, char **argv)
{
    static const unsigned controls[] = { 0x1C, 0x3A, 0x0F, 0x96, 0xD4 };
    const char *out, *data_dir;
    size_t max, n_seeds = 0, k = 0;
    DIR *d;
    struct dirent *de;

    if (seedgen_args(argc, argv, &out, &data_dir, &max) != 0 || max < 2)
        return 2;
    max -= 1;
    if (!(d = opendir(data_dir))) {
        fprintf(stderr, "seedgen: no data folder %s\n", data_dir);
        return 1;
    }
    while ((de = readdir(d)) != NULL) {
        char path[4096], name[300];
        size_t len = 0, hlen = 0;
        uint64_t heap;
        uint8_t *buf;
        if (!seedgen_is_dump(de->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", data_dir, de->d_name);
        if (!(buf = seedgen_read_head(path, 8u << 20, &len)))
            continue;
        if (len > 18 && memcmp(buf, "JAVA PROFILE 1.0.3", 18) == 0) {
            snprintf(name, sizeof name, "head-%s", de->d_name);
            n_seeds += write_seed(out, name, controls[k % 5], buf, len < max ? len : max, NULL, 0) == 0;
            heap = seedgen_first_heap_record(buf, len, &hlen);
            if (heap > hlen && hlen) {
                size_t take = len - (size_t)heap < max - hlen ? len - (size_t)heap : max - hlen;
                snprintf(name, sizeof name, "heap-%s", de->d_name);
                n_seeds += write_seed(out, name, controls[(k + 2) % 5], buf, hlen, buf + heap, take) == 0;
            }
            k++;
        }
        free(buf);
    }
    closedir(d);
    {
        /* A whole small ART dump (the Tailor vectors beside DATADIR), under each option. */
        char path[4096], name[64];
        size_t len = 0;
        uint8_t *buf;
        snprintf(path, sizeof path, "%s/../tailor/art_like.hprof", data_dir);
        if ((buf = seedgen_read_head(path, 1u << 20, &len)) != NULL) {
            for (k = 0; k < 5; k++) {
                snprintf(name, sizeof name, "art_like-%zu", k);
                n_seeds += write_seed(out, name, controls[k], buf, len, NULL, 0) == 0;
            }
            free(buf);
        }
    }
    printf("seedgen: %zu seeds in %s\n", n_seeds, out);
    return n_seeds ? 0 : 1;
}

#endif
