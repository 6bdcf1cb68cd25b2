/* Stack traces of the heap index: threads' stacks (STACK_TRACE and
 * STACK_FRAME records, the ROOT_THREAD_OBJECT that names each thread's),
 * the allocation trace every object record carries, and the hprof agent's
 * ALLOC_SITES records. */
#include "hp_heap_impl.h"

#include <string.h>

#include "hp_header.h"

size_t hp_heap_trace_count(const hp_heap *h) { return h->n_traces; }

uint32_t hp_heap_trace_serial(const hp_heap *h, size_t k) { return h->traces[k].serial; }

/* The first STACK_TRACE of that serial (the table is sorted by serial), or NULL. */
static const serial_entry *trace_of(const hp_heap *h, uint32_t serial)
{
    size_t lo = 0, hi = h->n_traces;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->traces[mid].serial < serial)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < h->n_traces && h->traces[lo].serial == serial ? &h->traces[lo] : NULL;
}

/* The frames a STACK_TRACE record holds whole (its count, if the record is that long). */
static uint32_t frames_held(const hp_heap *h, const uint8_t *body)
{
    uint64_t length = hp_be32(body - 4), n = hp_be32(body + 8), room = (length - 12) / (uint64_t)h->id_size;
    return (uint32_t)(n < room ? n : room);
}

int hp_heap_trace(const hp_heap *h, uint32_t serial, uint32_t *thread_serial, uint32_t *frames)
{
    const serial_entry *t = trace_of(h, serial);
    const uint8_t *body;
    if (!t)
        return 0;
    /* Listed only when at least 12 bytes long (hp_heap_build). */
    body = h->buf + t->offset + 9;
    *thread_serial = hp_be32(body + 4);
    *frames = frames_held(h, body);
    return 1;
}

int hp_heap_trace_frame(const hp_heap *h, uint32_t serial, uint32_t depth, hp_frame *out)
{
    const int id = h->id_size;
    const serial_entry *t = trace_of(h, serial);
    const sid_entry *frame;
    const hp_frame *renamed;
    const uint8_t *body;
    uint64_t frame_id;
    if (!t)
        return 0;
    body = h->buf + t->offset + 9;
    if (depth >= frames_held(h, body))
        return 0;
    frame_id = hp_read_id(body + 12 + (size_t)depth * id, id);
    if ((renamed = heap_renamed_frame(h, frame_id)) != NULL) { /* a mapping gave it clear names */
        *out = *renamed;
        return 1;
    }
    frame = heap_sid_find(h->frames, h->n_frames, frame_id);
    if (!frame)
        return 0;
    /* STACK_FRAME records were listed only when 4 ids + 8 bytes long. */
    body = h->buf + frame->offset + 9;
    out->method_sid = hp_read_id(body + id, id);
    out->signature_sid = hp_read_id(body + 2 * id, id);
    out->source_sid = hp_read_id(body + 3 * id, id);
    out->class_serial = hp_be32(body + 4 * id);
    out->line = (int32_t)hp_be32(body + 4 * id + 4);
    return 1;
}

uint32_t hp_heap_thread_trace(const hp_heap *h, uint32_t thread_serial)
{
    size_t i;
    for (i = 0; i < h->n_threads; i++)
        if (h->threads[i].thread_serial == thread_serial)
            return h->threads[i].trace_serial;
    return 0;
}

int hp_heap_thread_frame(const hp_heap *h, uint32_t thread_serial, int32_t depth, hp_frame *out)
{
    size_t i;
    if (depth < 0)
        return 0;
    for (i = 0; i < h->n_threads; i++)
        if (h->threads[i].thread_serial == thread_serial)
            return hp_heap_trace_frame(h, h->threads[i].trace_serial, (uint32_t)depth, out);
    return 0;
}

/* ---- allocation sites ---- */

uint32_t hp_heap_object_trace(const hp_heap *h, uint32_t index)
{
    /* Instance and array records: tag, id, then the u4 trace serial (the
     * record was decoded whole at build time). */
    if (hp_heap_object_kind(h, index) == HP_KIND_CLASS)
        return 0;
    return hp_be32(h->buf + obj_offset(h, index) + 1 + h->id_size);
}

hp_code hp_heap_site_counts(const hp_heap *h, uint64_t *objects, uint64_t *bytes, int (*interrupt)(void *ctx),
                            void *ctx, hp_error *err)
{
    uint32_t i, last_serial = 0;
    size_t last = h->n_traces; /* the trace of the previous object: runs share one */
    for (i = 0; i < h->n; i++) {
        uint32_t serial;
        size_t k;
        if ((i & 4095) == 0 && interrupt && interrupt(ctx))
            return hp_fail(err, HP_E_ABORTED, 0, -1, 0, 0, 0, "interrupted");
        if (hp_heap_object_kind(h, i) == HP_KIND_CLASS)
            continue;
        serial = hp_heap_object_trace(h, i);
        if (i == 0 || serial != last_serial) {
            const serial_entry *t = serial ? trace_of(h, serial) : NULL;
            last = t ? (size_t)(t - h->traces) : h->n_traces;
            last_serial = serial;
        }
        k = last;
        objects[k]++;
        bytes[k] += hp_heap_shallow_size(h, i);
    }
    return HP_OK;
}

hp_code hp_heap_alloc_sites(const hp_heap *h, int (*fn)(void *ctx, const hp_alloc_sites *record,
                                                        const hp_alloc_site *site), void *ctx, hp_error *err)
{
    hp_header header;
    uint64_t pos;
    if (hp_header_parse(h->buf, (size_t)(h->len < HP_HEADER_MAX ? h->len : HP_HEADER_MAX), &header, err) != HP_OK)
        return err->code;
    /* The build walked every record head: they are in bounds. */
    for (pos = header.length; pos + 9 <= h->len; pos += 9 + (uint64_t)hp_be32(h->buf + pos + 5)) {
        const uint8_t *p = h->buf + pos + 9;
        uint64_t length = hp_be32(h->buf + pos + 5), k;
        hp_alloc_sites rec;
        if (h->buf[pos] != HP_TAG_ALLOC_SITES)
            continue;
        if (length < 34)
            return hp_fail(err, HP_E_TRUNCATED, pos, HP_TAG_ALLOC_SITES, 0, 9 + 34, 9 + length, NULL);
        rec.offset = pos;
        rec.flags = hp_be16(p);
        rec.cutoff_bits = hp_be32(p + 2);
        rec.live_bytes = hp_be32(p + 6);
        rec.live_instances = hp_be32(p + 10);
        rec.bytes_allocated = hp_be64(p + 14);
        rec.instances_allocated = hp_be64(p + 22);
        rec.count = hp_be32(p + 30);
        if ((uint64_t)rec.count * 25 > length - 34)
            return hp_fail(err, HP_E_TRUNCATED, pos, HP_TAG_ALLOC_SITES, 0, 9 + 34 + (uint64_t)rec.count * 25,
                           9 + length, NULL);
        for (k = 0; k < rec.count; k++) {
            const uint8_t *s = p + 34 + k * 25;
            hp_alloc_site site;
            site.array_type = s[0];
            site.class_serial = hp_be32(s + 1);
            site.trace_serial = hp_be32(s + 5);
            site.live_bytes = hp_be32(s + 9);
            site.live_instances = hp_be32(s + 13);
            site.bytes_allocated = hp_be32(s + 17);
            site.instances_allocated = hp_be32(s + 21);
            if (fn(ctx, &rec, &site))
                return hp_fail(err, HP_E_ABORTED, pos, HP_TAG_ALLOC_SITES, 0, 0, 0, "stopped");
        }
    }
    return HP_OK;
}
