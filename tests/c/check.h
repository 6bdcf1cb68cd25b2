/* A tiny assertion kit for the C core tests: CHECK prints the failing
 * expression with its line and counts failures; main returns check_report(). */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures, check_total;

#define CHECK(cond)                                                              \
    do {                                                                         \
        check_total++;                                                           \
        if (!(cond)) {                                                           \
            check_failures++;                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                        \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                       \
    do {                                                                         \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
        check_total++;                                                           \
        if (a_ != b_) {                                                          \
            check_failures++;                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%llu != %llu)\n",    \
                    __FILE__, __LINE__, #a, #b, a_, b_);                         \
        }                                                                        \
    } while (0)

static inline int check_report(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, check_total - check_failures, check_failures);
    return check_failures ? 1 : 0;
}

/* Reads a whole file into memory (caller frees); NULL if it cannot. */
static inline unsigned char *check_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf;
    long n;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Path of a file under the shared data folder ($HPROFKIT_DATA). */
static inline const char *check_data_path(const char *rel)
{
    static char path[4096];
    const char *root = getenv("HPROFKIT_DATA");
    snprintf(path, sizeof path, "%s/%s", root ? root : "../../../shared/data", rel);
    return path;
}

#endif
