#include "hp_sink.h"

#include <string.h>

void hp_buf_init(hp_buf *b, const hp_alloc *alloc)
{
    memset(b, 0, sizeof *b);
    b->alloc = alloc ? *alloc : hp_default_alloc;
}

void hp_buf_free(hp_buf *b)
{
    b->alloc.free_fn(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int hp_buf_reserve(hp_buf *b, size_t extra)
{
    size_t cap;
    uint8_t *grown;
    if (extra > SIZE_MAX - b->len)
        return -1;
    if (b->len + extra <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra)
        cap = cap > SIZE_MAX / 2 ? b->len + extra : cap * 2;
    grown = b->alloc.realloc_fn(b->data, cap);
    if (!grown)
        return -1;
    b->data = grown;
    b->cap = cap;
    return 0;
}

int hp_buf_append(hp_buf *b, const void *data, size_t len)
{
    if (len == 0)
        return 0;
    if (hp_buf_reserve(b, len) < 0)
        return -1;
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

static int buf_write(void *ctx, const uint8_t *data, size_t len) { return hp_buf_append(ctx, data, len); }

hp_sink hp_buf_sink(hp_buf *b)
{
    hp_sink s = { buf_write, b, NULL };
    return s;
}

int hp_writer_init(hp_writer *w, const hp_alloc *alloc, size_t cap)
{
    memset(w, 0, sizeof *w);
    w->buf = alloc->malloc_fn(cap);
    w->cap = cap;
    return w->buf ? 0 : -1;
}

void hp_writer_free(hp_writer *w, const hp_alloc *alloc)
{
    alloc->free_fn(w->buf);
    w->buf = NULL;
}

static int writer_emit(hp_writer *w, const uint8_t *data, size_t len)
{
    if (len == 0)
        return 0;
    if (w->sink->write(w->sink->ctx, data, len) < 0)
        return -1;
    w->written += len;
    return 0;
}

int hp_writer_flush(hp_writer *w)
{
    int rc = writer_emit(w, w->buf, w->len);
    w->len = 0;
    return rc;
}

int hp_writer_put_slow(hp_writer *w, const void *data, size_t len)
{
    if (hp_writer_flush(w) < 0)
        return -1;
    if (len >= w->cap / 2 || len >= HP_WRITER_DIRECT)
        return writer_emit(w, data, len);
    memcpy(w->buf, data, len);
    w->len = len;
    return 0;
}

int hp_writer_zeros(hp_writer *w, uint64_t count)
{
    while (count) {
        size_t k;
        if (w->len == w->cap && hp_writer_flush(w) < 0)
            return -1;
        k = w->cap - w->len;
        if (k > count)
            k = (size_t)count;
        memset(w->buf + w->len, 0, k);
        w->len += k;
        count -= k;
    }
    return 0;
}

int hp_writer_patch(hp_writer *w, uint64_t pos, const void *data, size_t n)
{
    if (pos + n > hp_writer_pos(w))
        return -1;
    if (pos < w->written && pos + n > w->written && hp_writer_flush(w) < 0) /* straddles: all to the sink */
        return -1;
    if (pos >= w->written) {
        memcpy(w->buf + (pos - w->written), data, n);
        return 0;
    }
    if (!w->sink->patch)
        return -1;
    return w->sink->patch(w->sink->ctx, w->written - pos, data, n);
}
