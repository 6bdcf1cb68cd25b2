/* Shared by the fuzzers' seed generators (fuzz_*.c built with
 * -DHP_FUZZ_SEEDGEN): their command line, which files are dumps, and
 * reading the first bytes of one. */
#ifndef SEEDGEN_H
#define SEEDGEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "hp_parser.h"

/* Reads `seedgen OUTDIR DATADIR MAXLEN`: 0, or 2 (the exit status) after
 * printing the usage. */
static inline int seedgen_args(int argc, char **argv, const char **out, const char **data_dir, size_t *max)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s OUTDIR DATADIR MAXLEN\n", argv[0]);
        return 2;
    }
    *out = argv[1];
    *data_dir = argv[2];
    *max = (size_t)strtoul(argv[3], NULL, 10);
    return 0;
}

/* Whether a file of the data folder is a dump (the seeds read gzip but not
 * bzip2; the folder's notes are not dumps). */
static inline int seedgen_is_dump(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && n >= 4 && strcmp(name + n - 4, ".bz2") != 0 && strcmp(name + n - 3, ".md") != 0 &&
           !(n >= 5 && strcmp(name + n - 5, ".json") == 0);
}

/* Up to `max` bytes from the start of a file, gzip or plain (gzread reads both). */
static inline uint8_t *seedgen_read_head(const char *path, size_t max, size_t *len)
{
    gzFile f = gzopen(path, "rb");
    uint8_t *buf = malloc(max ? max : 1);
    int got;
    if (!f || !buf) {
        if (f)
            gzclose(f);
        free(buf);
        return NULL;
    }
    got = gzread(f, buf, (unsigned)max);
    gzclose(f);
    if (got <= 0) {
        free(buf);
        return NULL;
    }
    *len = (size_t)got;
    return buf;
}

/* Offset of the first heap-dump record among the first `len` bytes, or 0. */
static inline uint64_t seedgen_first_heap_record(const uint8_t *buf, size_t len, size_t *hlen)
{
    hp_parser *p = hp_parser_new(NULL, 0);
    hp_event ev;
    hp_error err;
    uint64_t off = 0;
    hp_parser_feed(p, buf, len, 1);
    while (hp_parser_next(p, &ev, &err) == HP_OK && ev.kind != HP_EV_END) {
        if (ev.kind == HP_EV_HEADER)
            *hlen = ev.len;
        if (ev.kind == HP_EV_RECORD && hp_is_heap_tag(ev.rec->tag)) {
            off = ev.offset;
            break;
        }
    }
    hp_parser_free(p);
    return off;
}

#endif
