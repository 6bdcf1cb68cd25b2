/* The pack writer: HPROF in, pack bytes out (hp_packer.h).
 *
 * The caller's thread runs the modelling encoder (hp_pack_encode.c); each
 * block it cuts is copied into a job, whose streams a worker deflates and
 * frames; finished jobs are written in order.  Each stream is compressed on
 * its own, by a deflater reset for it, so a block's bytes depend on nothing
 * but the block: the same for any number of workers. */
#include "hp_pack_frame.h"

#include <string.h>
#include <zlib.h>

#include "hp_jobs.h"
#include "hp_zlib.h"

enum { DEFLATE_PLAIN, DEFLATE_TEXT }; /* the job's two deflaters */

typedef struct pack_job {
    hp_buf raw;                      /* the block's streams, back to back */
    size_t len[HP_PACK_NSTREAMS];
    uint64_t in_len, out_len;
    int level;
    const hp_alloc *alloc;
    z_stream z[2];
    int z_ready[2];
    hp_buf payload;                  /* what is stored of each stream, back to back */
    uint8_t frame[PF_FRAME_MAX];
    size_t frame_len;
    int failed;                      /* out of memory */
} pack_job;

struct hp_packer {
    hp_alloc alloc;
    hp_packer_options opt;
    hp_pack_encoder *enc;
    hp_jobs *jobs;
    pack_job *slots;
    unsigned nslots, next_slot;
    const hp_sink *sink; /* during a call */
    hp_error error;
    int failed, finished, header_done;
    int nomem;           /* a block or its job ran out of memory */
    int sink_failed;     /* the sink refused bytes */
    uint64_t bytes_out, blocks;
};

/* ---- compressing a block (on a worker) ---- */

/* Deflates n bytes into dst when that makes them smaller: the compressed
 * size, or 0 (store them). */
static size_t deflate_smaller(pack_job *job, int which, const uint8_t *src, size_t n, uint8_t *dst)
{
    z_stream *z = &job->z[which];
    int rc;
    if (n < 2)
        return 0;
    if (!job->z_ready[which]) {
        hp_zlib_init(z, job->alloc);
        if (deflateInit2(z, job->level, Z_DEFLATED, -15, 9, which == DEFLATE_TEXT ? Z_FILTERED : Z_DEFAULT_STRATEGY) !=
            Z_OK) {
            job->failed = 1;
            return 0;
        }
        job->z_ready[which] = 1;
    } else if (deflateReset(z) != Z_OK) {
        job->failed = 1;
        return 0;
    }
    z->next_in = (Bytef *)(uintptr_t)src;
    z->avail_in = (uInt)n;
    z->next_out = dst;
    z->avail_out = (uInt)n; /* deflate stops short of Z_STREAM_END when the output fills it exactly */
    rc = deflate(z, Z_FINISH);
    return rc == Z_STREAM_END && z->avail_out > 0 ? n - z->avail_out : 0; /* kept only when smaller */
}

/* Streams that look random are stored; text (prim.byte) is Huffman-heavy. */
static void compress_job(void *arg)
{
    pack_job *job = arg;
    const uint8_t *src = job->raw.data;
    pf_entry entry[HP_PACK_NSTREAMS];
    size_t at = 0;
    int i;
    job->payload.len = 0;
    if (hp_buf_reserve(&job->payload, job->raw.len) < 0) {
        job->failed = 1;
        return;
    }
    for (i = 0; i < HP_PACK_NSTREAMS; i++) {
        const size_t n = job->len[i];
        uint8_t *dst = job->payload.data + at;
        pf_entry *e = &entry[i];
        size_t comp = 0;
        e->method = PF_EMPTY;
        e->raw_len = e->comp_len = n;
        e->crc = 0;
        if (n == 0)
            continue;
        if (job->level > 0 && i != HP_PS_NOISE)
            comp = deflate_smaller(job, i == HP_PS_PRIM + HP_T_BYTE - HP_T_BOOLEAN ? DEFLATE_TEXT : DEFLATE_PLAIN, src, n, dst);
        if (comp) {
            e->method = PF_DEFLATE;
            e->comp_len = comp;
        } else {
            e->method = PF_STORED;
            memcpy(dst, src, n);
        }
        e->crc = pf_crc(0, dst, (size_t)e->comp_len);
        at += (size_t)e->comp_len;
        src += n;
    }
    job->payload.len = at;
    job->frame_len = pf_frame_write(job->frame, job->in_len, job->out_len, entry);
}

/* ---- the caller's side ---- */

static int emit(hp_packer *p, const uint8_t *data, size_t len)
{
    if (len && p->sink->write(p->sink->ctx, data, len) < 0) {
        p->sink_failed = 1;
        return -1;
    }
    p->bytes_out += len;
    return 0;
}

/* The pack header, once the dump's header is known. */
static int write_header(hp_packer *p)
{
    const hp_header *h = hp_pack_encoder_header(p->enc);
    uint8_t head[PF_HEADER_SIZE];
    hp_pack_info info;
    if (p->header_done || !h)
        return 0;
    memset(&info, 0, sizeof info);
    info.version = h->version;
    info.id_size = h->id_size;
    info.timestamp = h->timestamp;
    info.policy = p->opt.policy;
    info.level = p->opt.level;
    pf_header_write(head, &info);
    p->header_done = 1;
    return emit(p, head, sizeof head);
}

static int write_job(hp_packer *p, pack_job *job)
{
    if (job->failed) {
        p->nomem = 1;
        return -1;
    }
    if (emit(p, job->frame, job->frame_len) < 0 || emit(p, job->payload.data, job->payload.len) < 0)
        return -1;
    p->blocks++;
    return 0;
}

/* Writes the finished jobs in order (waiting for all of them when `all`). */
static int write_ready(hp_packer *p, int all)
{
    pack_job *job;
    while ((job = hp_jobs_collect(p->jobs, all)) != NULL)
        if (write_job(p, job) < 0)
            return -1;
    return 0;
}

/* The encoder's block callback: copy the block into a job and queue it. */
static int on_block(void *ctx, const hp_pack_block *b)
{
    hp_packer *p = ctx;
    pack_job *job;
    size_t total = 0;
    int i;
    if (write_header(p) < 0)
        return -1;
    if (hp_jobs_full(p->jobs) && write_job(p, hp_jobs_collect(p->jobs, 1)) < 0)
        return -1;
    job = &p->slots[p->next_slot];
    p->next_slot = (p->next_slot + 1) % p->nslots;
    for (i = 0; i < HP_PACK_NSTREAMS; i++)
        total += b->len[i];
    job->raw.len = 0;
    if (hp_buf_reserve(&job->raw, total) < 0) {
        p->nomem = 1;
        return -1;
    }
    for (i = 0; i < HP_PACK_NSTREAMS; i++) {
        if (b->len[i])
            memcpy(job->raw.data + job->raw.len, b->data[i], b->len[i]);
        job->raw.len += b->len[i];
        job->len[i] = b->len[i];
    }
    job->in_len = b->in_len;
    job->out_len = b->out_len;
    job->failed = 0;
    hp_jobs_submit(p->jobs, compress_job, job);
    return 0;
}

/* The error for a failed call: the encoder's own, or why a block was refused. */
static hp_code fail(hp_packer *p, hp_code rc, const hp_error *enc_err, hp_error *err)
{
    if (p->sink_failed)
        hp_fail(&p->error, HP_E_NOMEM, hp_pack_encoder_bytes_in(p->enc), -1, 0, 0, 0,
                "the output sink refused the bytes");
    else if (p->nomem)
        hp_fail(&p->error, HP_E_NOMEM, hp_pack_encoder_bytes_in(p->enc), -1, 0, 0, 0, "out of memory");
    else if (rc != HP_OK)
        p->error = *enc_err;
    p->failed = 1;
    *err = p->error;
    return p->error.code;
}

static hp_code start_call(hp_packer *p, const hp_sink *out, hp_error *err)
{
    if (p->failed) {
        *err = p->error;
        return p->error.code;
    }
    if (p->finished)
        return hp_fail(err, HP_E_USAGE, hp_pack_encoder_bytes_in(p->enc), -1, 0, 0, 0, "feed or finish after finish");
    p->sink = out;
    return HP_OK;
}

hp_code hp_packer_feed(hp_packer *p, const uint8_t *data, size_t len, const hp_sink *out, hp_error *err)
{
    hp_error enc_err;
    hp_code rc = start_call(p, out, err);
    if (rc != HP_OK)
        return rc;
    rc = hp_pack_encoder_feed(p->enc, data, len, on_block, p, &enc_err);
    if (rc != HP_OK || write_header(p) < 0 || write_ready(p, 0) < 0)
        return fail(p, rc, &enc_err, err);
    return HP_OK;
}

hp_code hp_packer_finish(hp_packer *p, const hp_sink *out, hp_error *err)
{
    uint8_t end[PF_END_MAX];
    hp_error enc_err;
    hp_code rc = start_call(p, out, err);
    if (rc != HP_OK)
        return rc;
    rc = hp_pack_encoder_finish(p->enc, on_block, p, &enc_err);
    if (rc != HP_OK || write_header(p) < 0 || write_ready(p, 1) < 0)
        return fail(p, rc, &enc_err, err);
    if (emit(p, end, pf_end_write(end, p->blocks, hp_pack_encoder_bytes_in(p->enc),
                                  hp_pack_encoder_bytes_out(p->enc))) < 0)
        return fail(p, HP_OK, NULL, err);
    p->finished = 1;
    return HP_OK;
}

/* ---- life cycle ---- */

hp_packer *hp_packer_new(const hp_alloc *alloc, const hp_packer_options *opts)
{
    static const hp_packer_options defaults = { { 0, 0, 0 }, HP_PACK_LEVEL_DEFAULT, 0, 0 };
    hp_packer *p;
    unsigned i;
    if (!alloc)
        alloc = &hp_default_alloc;
    if (!opts)
        opts = &defaults;
    if (opts->level < 0 || opts->level > 9)
        return NULL;
    p = alloc->malloc_fn(sizeof *p);
    if (!p)
        return NULL;
    memset(p, 0, sizeof *p);
    p->alloc = *alloc;
    p->opt = *opts;
    p->opt.policy.strip_types &= HP_PACK_STRIP_ALL;
    p->nslots = opts->workers ? 2 * opts->workers : 1;
    p->enc = hp_pack_encoder_new(alloc, &p->opt.policy, opts->block_size);
    p->jobs = hp_jobs_new(alloc, opts->workers, p->nslots);
    p->slots = alloc->malloc_fn(p->nslots * sizeof *p->slots);
    if (!p->enc || !p->jobs || !p->slots) {
        hp_packer_free(p);
        return NULL;
    }
    memset(p->slots, 0, p->nslots * sizeof *p->slots);
    for (i = 0; i < p->nslots; i++) {
        hp_buf_init(&p->slots[i].raw, alloc);
        hp_buf_init(&p->slots[i].payload, alloc);
        p->slots[i].level = p->opt.level;
        p->slots[i].alloc = &p->alloc;
    }
    return p;
}

void hp_packer_free(hp_packer *p)
{
    unsigned i;
    if (!p)
        return;
    hp_jobs_free(p->jobs); /* first: no worker may still use a slot */
    for (i = 0; p->slots && i < p->nslots; i++) {
        pack_job *job = &p->slots[i];
        hp_buf_free(&job->raw);
        hp_buf_free(&job->payload);
        if (job->z_ready[DEFLATE_PLAIN])
            deflateEnd(&job->z[DEFLATE_PLAIN]);
        if (job->z_ready[DEFLATE_TEXT])
            deflateEnd(&job->z[DEFLATE_TEXT]);
    }
    p->alloc.free_fn(p->slots);
    hp_pack_encoder_free(p->enc);
    p->alloc.free_fn(p);
}

uint64_t hp_packer_bytes_in(const hp_packer *p) { return hp_pack_encoder_bytes_in(p->enc); }
uint64_t hp_packer_bytes_out(const hp_packer *p) { return p->bytes_out; }
uint64_t hp_packer_restored_bytes(const hp_packer *p) { return hp_pack_encoder_bytes_out(p->enc); }
uint64_t hp_packer_blocks(const hp_packer *p) { return p->blocks; }
void hp_packer_unfinished(const hp_packer *p, hp_unfinished *out) { hp_pack_encoder_unfinished(p->enc, out); }
