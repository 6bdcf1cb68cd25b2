/* The pack reader: pack bytes in, HPROF out (hp_packer.h).
 *
 * The caller's thread parses the container: header, then block frames
 * (checked against their CRC and against max_block before anything of the
 * block is kept), then the end record.  A whole block goes to a job: a
 * worker checks each stored stream's CRC and inflates it to exactly its
 * declared length.  Finished jobs are restored in order by the modelling
 * decoder (hp_pack_decode.c), which writes to the sink.
 *
 * Memory: the input is kept only while a unit (header, block, end record)
 * is incomplete, and then only that unit; at most a window of blocks is in
 * flight, and no more than max_block bytes of them unless a single block
 * is that large. */
#include "hp_pack_frame.h"

#include <stdio.h>
#include <string.h>

#include "hp_jobs.h"
#include "hp_zlib.h"

static const uint8_t no_bytes[1];

typedef struct unpack_job {
    uint64_t index;        /* block index */
    uint64_t offset;       /* file offset of its frame */
    uint64_t stored_at;    /* file offset of its first stored byte */
    pf_frame frame;
    hp_buf bytes;          /* the block's stored bytes (from `stored` on) */
    const uint8_t *stored;
    hp_buf raw;            /* the inflated streams, back to back */
    const uint8_t *data[HP_PACK_NSTREAMS];
    size_t len[HP_PACK_NSTREAMS];
    const hp_alloc *alloc;
    z_stream z;
    int z_ready;
    hp_error error;
    int failed;
} unpack_job;

struct hp_unpacker {
    hp_alloc alloc;
    hp_unpacker_options opt;
    hp_pack_info info;
    int have_info;
    hp_pack_decoder *dec;
    const hp_sink *sink;      /* during a call */
    hp_error error;
    int failed, finished;

    hp_buf pending;           /* an incomplete unit, from its first byte */
    uint64_t base;            /* file offset of the next byte not parsed */
    uint64_t bytes_in;

    hp_jobs *jobs;
    unpack_job *slots;
    unsigned nslots, next_slot;
    uint64_t in_flight;       /* bytes held by the jobs in flight */
    uint64_t blocks_seen;     /* frames parsed */
    uint64_t declared_out;    /* restored bytes the blocks parsed declare */

    int ended;                /* the end record was read */
    uint64_t end_blocks, total_in, total_out;
};

/* ---- inflating a block (on a worker) ---- */

static int job_fail(unpack_job *job, int i, uint64_t at, const char *what, const char *why)
{
    hp_failf(&job->error, HP_E_CORRUPT, at, -1, 0, "block %llu: stream '%s' at offset %llu %s%s%s%s",
             (unsigned long long)job->index, hp_pack_stream_name(i), (unsigned long long)at, what,
             why ? " (" : "", why ? why : "", why ? ")" : "");
    job->failed = 1;
    return -1;
}

/* Inflates stream i (n stored bytes at src) into exactly its raw length at dst. */
static int inflate_stream(unpack_job *job, int i, uint64_t at, const uint8_t *src, size_t n, uint8_t *dst,
                          size_t raw_len)
{
    z_stream *z = &job->z;
    int rc;
    if (!job->z_ready) {
        hp_zlib_init(z, job->alloc);
        if (inflateInit2(z, -15) != Z_OK) {
            hp_fail(&job->error, HP_E_NOMEM, at, -1, 0, 0, 0, "out of memory");
            job->failed = 1;
            return -1;
        }
        job->z_ready = 1;
    } else {
        inflateReset(z);
    }
    z->next_in = (Bytef *)(uintptr_t)src;
    z->avail_in = (uInt)n;
    z->next_out = dst;
    z->avail_out = (uInt)raw_len;
    rc = inflate(z, Z_FINISH);
    if (rc == Z_STREAM_END && z->avail_in == 0 && z->avail_out == 0)
        return 0;
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT)
        return job_fail(job, i, at, "does not inflate", z->msg ? z->msg : "invalid deflate data");
    if (rc == Z_MEM_ERROR) {
        hp_fail(&job->error, HP_E_NOMEM, at, -1, 0, 0, 0, "out of memory");
        job->failed = 1;
        return -1;
    }
    return job_fail(job, i, at, "does not inflate to its recorded length", NULL);
}

static void inflate_job(void *arg)
{
    unpack_job *job = arg;
    const pf_frame *f = &job->frame;
    size_t at = 0, out = 0;
    int i;
    job->raw.len = 0;
    if (hp_buf_reserve(&job->raw, (size_t)f->raw) < 0) {
        hp_fail(&job->error, HP_E_NOMEM, job->offset, -1, 0, 0, 0, "out of memory");
        job->failed = 1;
        return;
    }
    for (i = 0; i < HP_PACK_NSTREAMS; i++) {
        const pf_entry *e = &f->entry[i];
        const uint8_t *src = job->stored + at;
        const uint64_t where = job->stored_at + at;
        job->data[i] = NULL;
        job->len[i] = (size_t)e->raw_len;
        if (e->method == PF_EMPTY)
            continue;
        if (pf_crc(0, src, (size_t)e->comp_len) != e->crc) {
            job_fail(job, i, where, "fails its checksum", NULL);
            return;
        }
        if (e->method == PF_STORED) {
            job->data[i] = src;
        } else {
            if (inflate_stream(job, i, where, src, (size_t)e->comp_len, job->raw.data + out, (size_t)e->raw_len) < 0)
                return;
            job->data[i] = job->raw.data + out;
            out += (size_t)e->raw_len;
        }
        at += (size_t)e->comp_len;
    }
}

/* ---- restoring, in order (the caller's thread) ---- */

static hp_code fail(hp_unpacker *u, hp_error *err)
{
    u->failed = 1;
    *err = u->error;
    return u->error.code;
}

/* Restores the oldest job in flight (waiting for it when `wait`): 1 when one
 * was restored, 0 when none was ready, -1 on error (u->error). */
static int restore_next(hp_unpacker *u, int wait)
{
    unpack_job *job = hp_jobs_collect(u->jobs, wait);
    hp_error e;
    if (!job)
        return 0;
    u->in_flight -= job->frame.stored + job->frame.raw;
    if (job->failed) {
        u->error = job->error;
        return -1;
    }
    if (hp_pack_decoder_block(u->dec, job->data, job->len, job->frame.out_len, u->sink, &e) != HP_OK) {
        char message[sizeof e.text];
        if (e.code == HP_E_NOMEM) {
            u->error = e;
            return -1;
        }
        hp_error_format(&e, message, sizeof message);
        hp_failf(&u->error, e.code, job->offset, e.tag, e.is_sub, "block %llu (offset %llu): %s",
                 (unsigned long long)job->index, (unsigned long long)job->offset, message);
        return -1;
    }
    return 1;
}

/* A whole block (frame parsed, `stored` bytes following it in `unit`) goes
 * to a job once there is room; `take` is the pending buffer when the unit
 * sits there, which the job then takes over instead of copying it. */
static hp_code start_block(hp_unpacker *u, const pf_frame *f, const uint8_t *unit, hp_buf *take)
{
    const uint64_t size = f->stored + f->raw;
    unpack_job *job;
    int rc;
    while (hp_jobs_full(u->jobs) || (hp_jobs_in_flight(u->jobs) && u->in_flight + size > u->opt.max_block))
        if ((rc = restore_next(u, 1)) < 0)
            return u->error.code;
    job = &u->slots[u->next_slot];
    u->next_slot = (u->next_slot + 1) % u->nslots;
    job->index = u->blocks_seen;
    job->offset = u->base;
    job->stored_at = u->base + f->size;
    job->frame = *f;
    job->failed = 0;
    if (take) { /* the unit is the whole pending buffer */
        hp_buf held = job->bytes;
        job->bytes = *take;
        *take = held;
        take->len = 0;
        job->stored = job->bytes.data + f->size;
    } else {
        job->bytes.len = 0;
        if (hp_buf_append(&job->bytes, unit + f->size, (size_t)f->stored) < 0)
            return hp_fail(&u->error, HP_E_NOMEM, u->base, -1, 0, 0, 0, "out of memory");
        job->stored = f->stored ? job->bytes.data : no_bytes;
    }
    u->in_flight += size;
    hp_jobs_submit(u->jobs, inflate_job, job);
    return HP_OK;
}

/* ---- parsing the container ---- */

static hp_code open_pack(hp_unpacker *u, const uint8_t *h)
{
    hp_header header;
    if (pf_header_read(h, &u->info, &u->error) != HP_OK)
        return u->error.code;
    memset(&header, 0, sizeof header);
    header.version = u->info.version;
    header.id_size = u->info.id_size;
    header.timestamp = u->info.timestamp;
    u->dec = hp_pack_decoder_new(&u->alloc, &header, &u->info.policy);
    if (!u->dec)
        return hp_fail(&u->error, HP_E_NOMEM, 0, -1, 0, 0, 0, "out of memory");
    hp_pack_decoder_hold_limit(u->dec, u->opt.max_record);
    u->have_info = 1;
    return HP_OK;
}

/* The size of the unit starting at p, or when `have` bytes do not hold all
 * of it the most it can be (more than `have`); 0 on error (u->error).  A
 * whole block frame is parsed into *f (f->size is 0 otherwise). */
static uint64_t unit_size(hp_unpacker *u, const uint8_t *p, size_t have, pf_frame *f)
{
    uint64_t blocks, total_in, total_out;
    size_t size;
    int rc;
    f->size = 0;
    if (!u->have_info) {
        if (!hp_is_pack(p, have)) {
            hp_failf(&u->error, HP_E_FORMAT, 0, -1, 0, "not an hprofkit pack (bad magic)");
            return 0;
        }
        return PF_HEADER_SIZE;
    }
    if (u->ended) {
        hp_failf(&u->error, HP_E_CORRUPT, u->base, -1, 0, "data after the end of the pack at offset %llu",
                 (unsigned long long)u->base);
        return 0;
    }
    if (p[0] == PF_END_MARK) {
        rc = pf_end_read(p, have, u->base, &blocks, &total_in, &total_out, &size, &u->error);
        return rc < 0 ? 0 : rc > 0 ? size : PF_END_MAX;
    }
    if (p[0] != PF_BLOCK_MARK) {
        hp_failf(&u->error, HP_E_CORRUPT, u->base, -1, 0, "block %llu: no block or end marker at offset %llu (0x%02x)",
                 (unsigned long long)u->blocks_seen, (unsigned long long)u->base, p[0]);
        return 0;
    }
    rc = pf_frame_read(p, have, f, u->blocks_seen, u->base, &u->error);
    if (rc <= 0)
        return rc < 0 ? 0 : PF_FRAME_MAX;
    if (f->raw > u->opt.max_block || f->stored > u->opt.max_block) {
        hp_failf(&u->error, HP_E_CORRUPT, u->base, -1, 0,
                 "block %llu at offset %llu declares %llu bytes of streams, more than the %llu a block may hold",
                 (unsigned long long)u->blocks_seen, (unsigned long long)u->base,
                 (unsigned long long)(f->raw > f->stored ? f->raw : f->stored),
                 (unsigned long long)u->opt.max_block);
        return 0;
    }
    return f->size + f->stored;
}

/* A block whose out_len takes the restored dump past what it may hold
 * (`input`: the pack's bytes up to the block's end) is refused. */
static hp_code refuse_bomb(hp_unpacker *u, const pf_frame *f, uint64_t input)
{
    char what[48];
    uint64_t declared = u->declared_out + f->out_len, limit = hp_restore_limit(u->opt.max_output, input);
    if (declared < u->declared_out)
        declared = UINT64_MAX;
    if (declared <= limit) {
        u->declared_out = declared;
        return HP_OK;
    }
    snprintf(what, sizeof what, "pack block %llu", (unsigned long long)u->blocks_seen);
    return hp_restore_refuse(&u->error, declared, limit, what, u->base, -1, 0);
}

static hp_code end_pack(hp_unpacker *u, const uint8_t *p, size_t have)
{
    size_t size;
    if (pf_end_read(p, have, u->base, &u->end_blocks, &u->total_in, &u->total_out, &size, &u->error) < 0)
        return u->error.code;
    if (u->end_blocks != u->blocks_seen)
        return hp_failf(&u->error, HP_E_CORRUPT, u->base, -1, 0,
                        "end record at offset %llu counts %llu blocks, the pack holds %llu",
                        (unsigned long long)u->base, (unsigned long long)u->end_blocks,
                        (unsigned long long)u->blocks_seen);
    u->ended = 1;
    return HP_OK;
}

/* Parses the whole units at the start of p (n bytes): *used is set to the
 * bytes they take.  When p is the pending buffer and holds exactly one
 * block, the block's job takes the buffer over (pending is then empty). */
static hp_code parse(hp_unpacker *u, const uint8_t *p, size_t n, int is_pending, size_t *used)
{
    size_t at = 0;
    *used = 0;
    while (at < n) {
        pf_frame f;
        uint64_t size = unit_size(u, p + at, n - at, &f);
        hp_code rc;
        if (size == 0)
            return u->error.code;
        if (size > n - at)
            break;
        if (!u->have_info) {
            rc = open_pack(u, p + at);
        } else if (f.size) {
            rc = refuse_bomb(u, &f, u->base + size);
            if (rc == HP_OK)
                rc = start_block(u, &f, p + at, is_pending && size == n ? &u->pending : NULL);
            u->blocks_seen++;
        } else {
            rc = end_pack(u, p + at, n - at);
        }
        if (rc != HP_OK)
            return rc;
        at += (size_t)size;
        u->base += size;
        *used = at;
    }
    return HP_OK;
}

/* Completes the pending unit from the input, and parses it. */
static hp_code top_up(hp_unpacker *u, const uint8_t **data, size_t *len)
{
    while (u->pending.len) {
        pf_frame f;
        size_t used, take;
        uint64_t size = unit_size(u, u->pending.data, u->pending.len, &f);
        hp_code rc;
        if (size == 0)
            return u->error.code;
        if (size > u->pending.len) {
            if (*len == 0)
                return HP_OK;
            take = size - u->pending.len < *len ? (size_t)(size - u->pending.len) : *len;
            if (hp_buf_append(&u->pending, *data, take) < 0)
                return hp_fail(&u->error, HP_E_NOMEM, u->base, -1, 0, 0, 0, "out of memory");
            *data += take;
            *len -= take;
            continue;
        }
        if ((rc = parse(u, u->pending.data, u->pending.len, 1, &used)) != HP_OK)
            return rc;
        if (u->pending.len) { /* not taken over by a job: drop what was parsed */
            memmove(u->pending.data, u->pending.data + used, u->pending.len - used);
            u->pending.len -= used;
        }
    }
    return HP_OK;
}

static hp_code start_call(hp_unpacker *u, const hp_sink *out, hp_error *err)
{
    if (u->failed) {
        *err = u->error;
        return u->error.code;
    }
    if (u->finished)
        return hp_fail(err, HP_E_USAGE, u->bytes_in, -1, 0, 0, 0, "feed or finish after finish");
    u->sink = out;
    return HP_OK;
}

hp_code hp_unpacker_feed(hp_unpacker *u, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    size_t used;
    int rc;
    if (start_call(u, out, err) != HP_OK)
        return err->code;
    u->bytes_in += len;
    if (top_up(u, &data, &len) != HP_OK)
        return fail(u, err);
    if (len) {
        if (parse(u, data, len, 0, &used) != HP_OK)
            return fail(u, err);
        if (hp_buf_append(&u->pending, data + used, len - used) < 0) { /* less than one unit */
            hp_fail(&u->error, HP_E_NOMEM, u->base, -1, 0, 0, 0, "out of memory");
            return fail(u, err);
        }
    }
    while ((rc = restore_next(u, 0)) > 0)
        ;
    return rc < 0 ? fail(u, err) : HP_OK;
}

hp_code hp_unpacker_finish(hp_unpacker *u, const hp_sink *out, hp_error *err)
{
    int rc;
    if (start_call(u, out, err) != HP_OK)
        return err->code;
    while ((rc = restore_next(u, 1)) > 0)
        ;
    if (rc < 0)
        return fail(u, err);
    if (!u->have_info) {
        if (u->bytes_in == 0)
            hp_failf(&u->error, HP_E_FORMAT, 0, -1, 0, "empty input: not an hprofkit pack");
        else
            hp_failf(&u->error, HP_E_TRUNCATED, 0, -1, 0,
                     "truncated pack header at offset 0: needs %d bytes, %llu remain", PF_HEADER_SIZE,
                     (unsigned long long)u->pending.len);
        return fail(u, err);
    }
    if (!u->ended) {
        if (u->pending.len && u->pending.data[0] != PF_END_MARK)
            hp_failf(&u->error, HP_E_TRUNCATED, u->base, -1, 0,
                     "truncated pack: block %llu at offset %llu is incomplete (%llu bytes remain)",
                     (unsigned long long)u->blocks_seen, (unsigned long long)u->base,
                     (unsigned long long)u->pending.len);
        else
            hp_failf(&u->error, HP_E_TRUNCATED, u->base, -1, 0,
                     "truncated pack: the end record at offset %llu is incomplete (%llu bytes remain)",
                     (unsigned long long)u->base, (unsigned long long)u->pending.len);
        return fail(u, err);
    }
    if (hp_pack_decoder_finish(u->dec, out, &u->error) != HP_OK)
        return fail(u, err);
    if (hp_pack_decoder_bytes_out(u->dec) != u->total_out) {
        hp_failf(&u->error, HP_E_CORRUPT, u->base, -1, 0, "the pack restored %llu bytes, its end record says %llu",
                 (unsigned long long)hp_pack_decoder_bytes_out(u->dec), (unsigned long long)u->total_out);
        return fail(u, err);
    }
    u->finished = 1;
    return HP_OK;
}

/* ---- life cycle ---- */

hp_unpacker *hp_unpacker_new(const hp_alloc *alloc, const hp_unpacker_options *opts)
{
    hp_unpacker *u;
    unsigned i;
    if (!alloc)
        alloc = &hp_default_alloc;
    u = alloc->malloc_fn(sizeof *u);
    if (!u)
        return NULL;
    memset(u, 0, sizeof *u);
    u->alloc = *alloc;
    if (opts)
        u->opt = *opts;
    if (u->opt.max_block == 0)
        u->opt.max_block = HP_PACK_BLOCK_LIMIT;
    hp_buf_init(&u->pending, alloc);
    u->nslots = u->opt.workers ? 2 * u->opt.workers : 1;
    u->jobs = hp_jobs_new(alloc, u->opt.workers, u->nslots);
    u->slots = alloc->malloc_fn(u->nslots * sizeof *u->slots);
    if (!u->jobs || !u->slots) {
        hp_unpacker_free(u);
        return NULL;
    }
    memset(u->slots, 0, u->nslots * sizeof *u->slots);
    for (i = 0; i < u->nslots; i++) {
        hp_buf_init(&u->slots[i].bytes, alloc);
        hp_buf_init(&u->slots[i].raw, alloc);
        u->slots[i].alloc = &u->alloc;
    }
    return u;
}

void hp_unpacker_free(hp_unpacker *u)
{
    unsigned i;
    if (!u)
        return;
    hp_jobs_free(u->jobs); /* first: no worker may still use a slot */
    for (i = 0; u->slots && i < u->nslots; i++) {
        hp_buf_free(&u->slots[i].bytes);
        hp_buf_free(&u->slots[i].raw);
        if (u->slots[i].z_ready)
            inflateEnd(&u->slots[i].z);
    }
    u->alloc.free_fn(u->slots);
    hp_pack_decoder_free(u->dec);
    hp_buf_free(&u->pending);
    u->alloc.free_fn(u);
}

const hp_pack_info *hp_unpacker_info(const hp_unpacker *u) { return u->have_info ? &u->info : NULL; }
uint64_t hp_unpacker_bytes_in(const hp_unpacker *u) { return u->bytes_in; }
uint64_t hp_unpacker_bytes_out(const hp_unpacker *u) { return u->dec ? hp_pack_decoder_bytes_out(u->dec) : 0; }
uint64_t hp_unpacker_blocks(const hp_unpacker *u) { return u->dec ? hp_pack_decoder_blocks(u->dec) : 0; }

void hp_unpacker_unfinished(const hp_unpacker *u, hp_unfinished *out)
{
    if (u->dec)
        hp_pack_decoder_unfinished(u->dec, out);
    else
        memset(out, 0, sizeof *out);
}

int hp_is_pack(const uint8_t *head, size_t len)
{
    if (len > PF_MAGIC_LEN)
        len = PF_MAGIC_LEN;
    return len > 0 && memcmp(head, PF_MAGIC, len) == 0;
}

/* hp_packer.h names the end record's largest size without the frame's header. */
typedef char end_max_is_pf_end_max[HP_PACK_END_MAX == PF_END_MAX ? 1 : -1];

hp_code hp_pack_check_end(const uint8_t *tail, size_t n, uint64_t pack_size, uint64_t max_output, hp_error *err)
{
    uint64_t limit = hp_restore_limit(max_output, pack_size);
    size_t at;
    /* The end record's length depends on its varints: try each start that
     * parses, with a right checksum, exactly up to the end. */
    for (at = n > PF_END_MAX ? n - PF_END_MAX : 0; at + 6 <= n; at++) {
        uint64_t blocks, total_in, total_out;
        size_t size;
        hp_error ignored;
        if (tail[at] == PF_END_MARK &&
            pf_end_read(tail + at, n - at, 0, &blocks, &total_in, &total_out, &size, &ignored) == 1 && size == n - at)
            return total_out > limit ? hp_restore_refuse(err, total_out, limit, "the pack's end record",
                                                         pack_size - (n - at), -1, 0)
                                     : HP_OK;
    }
    return HP_OK;
}
