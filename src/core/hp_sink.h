/* Where stream filters put their output: a callback and its context.
 * The glue collects into a Python bytes buffer; C tests into memory. */
#ifndef HP_SINK_H
#define HP_SINK_H

#include <string.h>

#include "hp_common.h"

typedef struct hp_sink {
    /* Returns 0, or -1 when the bytes could not be taken (out of memory). */
    int (*write)(void *ctx, const uint8_t *data, size_t len);
    void *ctx;
    /* NULL, or for a sink whose output can be rewritten (a seekable file):
     * overwrites `len` bytes it was given earlier, the first of them `back`
     * bytes before the end of all it was given.  0 or -1.  Records whose
     * length is known only at their end are then streamed and patched
     * (hp_heaprec.h) instead of held or cut. */
    int (*patch)(void *ctx, uint64_t back, const uint8_t *data, size_t len);
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

/* Batches a filter's many small writes into pieces of `cap` bytes before
 * they reach a sink (one sink call per piece, not per record); a write of at
 * least cap/2 bytes goes through directly.  `sink` may change between calls
 * (filters get theirs with each feed). */
typedef struct hp_writer {
    const hp_sink *sink;
    uint8_t *buf;
    size_t len, cap;
    uint64_t written; /* bytes handed to the sink */
} hp_writer;

int hp_writer_init(hp_writer *w, const hp_alloc *alloc, size_t cap); /* 0, or -1 out of memory */
void hp_writer_free(hp_writer *w, const hp_alloc *alloc);
int hp_writer_flush(hp_writer *w);                                     /* 0, or -1 the sink refused */
int hp_writer_put_slow(hp_writer *w, const void *data, size_t len);
int hp_writer_zeros(hp_writer *w, uint64_t count);

/* The position of the next byte put: bytes handed to the sink and batched. */
static inline uint64_t hp_writer_pos(const hp_writer *w) { return w->written + w->len; }

/* Whether bytes put earlier can be rewritten (the sink can patch). */
static inline int hp_writer_can_patch(const hp_writer *w) { return w->sink->patch != NULL; }

/* Rewrites n bytes put earlier at position `pos`: in the batch if they are
 * still there, else through the sink's patch.  0 or -1. */
int hp_writer_patch(hp_writer *w, uint64_t pos, const void *data, size_t n);

/* Pieces at least this long go to the sink as they are: copying them into
 * the batch would cost more than the call it saves. */
#define HP_WRITER_DIRECT ((size_t)64 << 10)

static inline int hp_writer_put(hp_writer *w, const void *data, size_t len)
{
    if (len > w->cap - w->len || len >= HP_WRITER_DIRECT)
        return hp_writer_put_slow(w, data, len);
    memcpy(w->buf + w->len, data, len);
    w->len += len;
    return 0;
}

#endif
