/* Shared by the fuzzers' seed generators (fuzz_*.c built with
 * -DHP_FUZZ_SEEDGEN): their command line and which files are dumps. */
#ifndef SEEDGEN_H
#define SEEDGEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#endif
