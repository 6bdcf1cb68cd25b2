/* libFuzzer harness for the renamer (hp_renamer): deobfuscate's writer.
 *
 * Input: a control byte, then the dump.  The control byte:
 *   bit  0     rename every name id of the first CLASS_DUMPs (up to 64)
 *   bit  1     replace the first LOAD_CLASS records (up to 64) by other bytes
 *   bit  2     a prelude after the header
 *   bits 3-6   log2 of the largest chunk of the chunked run (1 .. 32768)
 * The plan is made from the dump itself by a first parse.  The dump is
 * renamed in one piece and in pseudo-random chunks; both must succeed or
 * fail alike, with an error that says why, and give the same bytes.  On
 * success: with no plan the output is the input; with CLASS_DUMP renames
 * only, it is as long as the input and the prelude.  Allocations have a
 * 256 MiB budget and the output a 64 MiB cap.
 *
 * Built with -DHP_FUZZ_SEEDGEN this file is the seed generator instead:
 *     seedgen OUTDIR DATADIR MAXLEN
 * writes the beginnings of the dumps in DATADIR under each control. */
#ifdef HP_FUZZ_SEEDGEN
#define _POSIX_C_SOURCE 200809L /* opendir */
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp_common.h"
#include "hp_rename.h"
#include "testkit.h"

#ifndef HP_FUZZ_SEEDGEN

#include "fuzzkit.h"
#include "hp_parser.h"
#include "hp_subrecord.h"

#define MAX_PLANNED 64

typedef struct planned {
    hp_rename_record records[MAX_PLANNED];
    hp_rename_class classes[MAX_PLANNED];
    uint64_t names[MAX_PLANNED * 2 * 8];
    size_t n_names;
    uint8_t blob[16];
    hp_rename_plan plan;
} planned;

/* The plan the control byte asks for, from a first parse of the dump. */
static void make_plan(const uint8_t *dump, size_t len, unsigned control, planned *p)
{
    static const uint8_t prelude[] = { HP_TAG_UTF8, 0, 0, 0, 0, 0, 0, 0, 5, 0x7F, 0xFF, 0xFF, 0xF0, 'x' };
    hp_parser *parser = hp_parser_new(NULL, HP_PARSE_SUBRECORDS);
    hp_event ev;
    hp_error err;
    int id_size = 4, in_load = 0;
    memset(p, 0, sizeof *p);
    p->blob[0] = HP_TAG_UNLOAD_CLASS; /* a replacement: an UNLOAD_CLASS of serial 0 */
    p->blob[8] = 4;
    if (!parser)
        abort();
    hp_parser_feed(parser, dump, len, 1);
    while (hp_parser_next(parser, &ev, &err) == HP_OK && ev.kind != HP_EV_END && ev.kind != HP_EV_NEED_INPUT) {
        if (ev.kind == HP_EV_HEADER) {
            id_size = hp_parser_header(parser)->id_size;
        } else if (ev.kind == HP_EV_RECORD) {
            in_load = ev.rec->tag == HP_TAG_LOAD_CLASS;
        } else if (ev.kind == HP_EV_DATA && in_load && (control & 2) && p->plan.n_records < MAX_PLANNED &&
                   ev.len >= 4 + (size_t)id_size) {
            hp_rename_record *r = &p->records[p->plan.n_records++];
            r->tag = HP_TAG_LOAD_CLASS;
            r->key = hp_read_id(ev.data + 4, id_size);
            r->len = sizeof p->blob;
            in_load = 0;
        } else if (ev.kind == HP_EV_SUBRECORD && ev.sub->tag == HP_SUB_CLASS_DUMP && (control & 1) &&
                   p->plan.n_classes < MAX_PLANNED) {
            hp_class_layout layout;
            size_t i, n;
            if (hp_class_layout_decode(ev.data, ev.sub->head_len, id_size, &layout) != HP_OK)
                continue;
            n = (size_t)layout.n_statics + layout.n_fields;
            if (n > 16 || p->n_names + n > sizeof p->names / sizeof p->names[0])
                continue;
            p->classes[p->plan.n_classes].class_id = ev.sub->id;
            p->classes[p->plan.n_classes].n_statics = layout.n_statics;
            p->classes[p->plan.n_classes].n_fields = layout.n_fields;
            p->classes[p->plan.n_classes].first = p->n_names;
            for (i = 0; i < n; i++)
                p->names[p->n_names++] = i % 3 ? 0x7FFFFFF0 : 0;
            p->plan.n_classes++;
        }
    }
    hp_parser_free(parser);
    p->plan.records = p->records;
    p->plan.blob = p->blob;
    p->plan.blob_len = sizeof p->blob;
    p->plan.classes = p->classes;
    p->plan.names = p->names;
    p->plan.n_names = p->n_names;
    if (control & 4) {
        p->plan.prelude = prelude;
        p->plan.prelude_len = sizeof prelude;
    }
}

static hp_code feed(void *r, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    return hp_renamer_feed(r, data, len, out, err);
}
static hp_code finish(void *r, const hp_sink *out, hp_error *err) { return hp_renamer_finish(r, out, err); }
static void unfinished(const void *r, hp_unfinished *out) { hp_renamer_unfinished(r, out); }

static hp_code rename_all(const uint8_t *dump, size_t len, const hp_rename_plan *plan, size_t max, fuzz_out *o)
{
    hp_sink sink = fuzz_sink(o, 0);
    fuzz_rewriter w = { hp_renamer_new(fuzz_budget(), plan), feed, finish, unfinished };
    hp_code rc;
    if (!w.writer)
        return HP_E_NOMEM;
    rc = fuzz_rewrite(&w, dump, len, max, (uint32_t)len * 2654435761u + 1, &sink);
    hp_renamer_free(w.writer);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_out a = { 0, 1, { NULL, 0, 0, 0 } }, b = { 0, 1, { NULL, 0, 0, 0 } };
    planned p;
    hp_code ra, rb;
    if (size < 1)
        return 0;
    make_plan(data + 1, size - 1, data[0], &p);
    ra = rename_all(data + 1, size - 1, &p.plan, 0, &a);
    rb = rename_all(data + 1, size - 1, &p.plan, (size_t)1 << ((data[0] >> 3) & 15), &b);
    fuzz_check_freed();
    if ((ra == HP_OK) != (rb == HP_OK) && ra != HP_E_NOMEM && rb != HP_E_NOMEM)
        abort();
    if (ra == HP_OK && rb == HP_OK) {
        if (!fuzz_same(a.kept.d, a.kept.len, b.kept.d, b.kept.len))
            abort(); /* the output does not depend on the chunks */
        if (!p.plan.n_records && !p.plan.n_classes && !p.plan.prelude_len &&
            !fuzz_same(a.kept.d, a.kept.len, data + 1, size - 1))
            abort(); /* no plan: a copy */
        if (!p.plan.n_records && a.kept.len != size - 1 + p.plan.prelude_len)
            abort(); /* names for names: the same length */
    }
    free(a.kept.d);
    free(b.kept.d);
    return 0;
}

#else /* HP_FUZZ_SEEDGEN */

#include <dirent.h>

#include "seedgen.h"

int main(int argc, char **argv)
{
    static const unsigned controls[] = { 0x00, 0x3F, 0x51, 0x2A, 0x7B };
    const char *out, *data_dir;
    size_t max, n_seeds = 0, k;
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
        char path[4096];
        size_t len = 0;
        uint8_t *buf;
        if (!seedgen_is_dump(de->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", data_dir, de->d_name);
        if (!(buf = seedgen_read_head(path, 1u << 20, &len)))
            continue;
        for (k = 0; k < sizeof controls / sizeof controls[0]; k++) {
            char name[400];
            FILE *f;
            uint8_t ctl = (uint8_t)controls[k];
            size_t take = len < max ? len : max;
            snprintf(name, sizeof name, "%s/%s-%zu", out, de->d_name, k);
            if (!(f = fopen(name, "wb")))
                continue;
            n_seeds += fwrite(&ctl, 1, 1, f) == 1 && fwrite(buf, 1, take, f) == take;
            fclose(f);
        }
        free(buf);
    }
    closedir(d);
    printf("seedgen: %zu seeds\n", n_seeds);
    return n_seeds ? 0 : 1;
}

#endif
