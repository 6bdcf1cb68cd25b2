/* The HPROF file header: magic string, identifier size, timestamp. */
#ifndef HP_HEADER_H
#define HP_HEADER_H

#include "hp_common.h"

#define HP_HEADER_MAX 31 /* the longest standard header: 18-char magic + NUL + u4 + u8 */

typedef struct hp_header {
    int version;        /* 0 = "1.0", 1 = "1.0.1", 2 = "1.0.2", 3 = "1.0.3" */
    int id_size;        /* 4 or 8 */
    uint64_t timestamp; /* ms since the epoch */
    size_t length;      /* header bytes, where the first record starts */
    char magic[20];     /* e.g. "JAVA PROFILE 1.0.2" */
} hp_header;

/* Parses the header at the start of buf.  Returns HP_OK, HP_E_TRUNCATED with
 * err->need set when more bytes could complete it, or HP_E_FORMAT. */
hp_code hp_header_parse(const uint8_t *buf, size_t len, hp_header *out, hp_error *err);

/* Writes a standard header for `version` (0..3) into out[HP_HEADER_MAX];
 * returns its length. */
size_t hp_header_write(uint8_t *out, int version, int id_size, uint64_t timestamp);

#endif
