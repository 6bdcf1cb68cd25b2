/* Where stream filters put their output: a callback and its context.
 * The glue collects into a Python bytes buffer; C tests into memory. */
#ifndef HP_SINK_H
#define HP_SINK_H

#include "hp_common.h"

typedef struct hp_sink {
    /* Returns 0, or -1 when the bytes could not be taken (out of memory). */
    int (*write)(void *ctx, const uint8_t *data, size_t len);
    void *ctx;
} hp_sink;

/* A growable byte buffer, also usable as a sink (hp_buf_sink). */
typedef struct hp_buf {
    uint8_t *data;
    size_t len, cap;
    hp_alloc alloc;
} hp_buf;

void hp_buf_init(hp_buf *b, const hp_alloc *alloc);
void hp_buf_free(hp_buf *b);
int hp_buf_append(hp_buf *b, const void *data, size_t len); /* 0, or -1 out of memory */
int hp_buf_reserve(hp_buf *b, size_t extra);                 /* room for `extra` more bytes */
hp_sink hp_buf_sink(hp_buf *b);

#endif
