/* The ordered worker pool (hp_jobs.h): a ring of `window` slots, filled in
 * submission order.  Workers take the oldest queued slot; the caller
 * collects slots from the oldest, so results come back in order. */
#define _POSIX_C_SOURCE 200809L

#include "hp_jobs.h"

#include <pthread.h>
#include <string.h>

#define MAX_WORKERS 64

enum { SLOT_QUEUED, SLOT_RUNNING, SLOT_DONE };

typedef struct slot {
    hp_job_run run;
    void *job;
    int state;
} slot;

struct hp_jobs {
    hp_alloc alloc;
    pthread_mutex_t lock;
    pthread_cond_t work; /* a slot was queued, or stop */
    pthread_cond_t done; /* a slot finished */
    pthread_t threads[MAX_WORKERS];
    unsigned workers, window;
    slot *slots;
    unsigned oldest;   /* ring index of the oldest slot in flight */
    unsigned count;    /* slots in flight */
    unsigned queued;   /* ring index of the next slot a worker takes... */
    unsigned nqueued;  /* ...and how many are waiting for one */
    int stop;
};

static void *worker(void *arg)
{
    hp_jobs *j = arg;
    pthread_mutex_lock(&j->lock);
    for (;;) {
        slot *s;
        while (!j->nqueued && !j->stop)
            pthread_cond_wait(&j->work, &j->lock);
        if (j->stop)
            break;
        s = &j->slots[j->queued];
        j->queued = (j->queued + 1) % j->window;
        j->nqueued--;
        s->state = SLOT_RUNNING;
        pthread_mutex_unlock(&j->lock);
        s->run(s->job);
        pthread_mutex_lock(&j->lock);
        s->state = SLOT_DONE;
        pthread_cond_broadcast(&j->done);
    }
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

hp_jobs *hp_jobs_new(const hp_alloc *alloc, unsigned workers, unsigned window)
{
    hp_jobs *j;
    unsigned i;
    if (!alloc)
        alloc = &hp_default_alloc;
    if (window == 0)
        window = 1;
    if (workers > MAX_WORKERS)
        workers = MAX_WORKERS;
    j = alloc->malloc_fn(sizeof *j);
    if (!j)
        return NULL;
    memset(j, 0, sizeof *j);
    j->alloc = *alloc;
    j->window = window;
    j->slots = alloc->malloc_fn(window * sizeof *j->slots);
    if (!j->slots) {
        alloc->free_fn(j);
        return NULL;
    }
    memset(j->slots, 0, window * sizeof *j->slots);
    if (pthread_mutex_init(&j->lock, NULL) != 0) {
        alloc->free_fn(j->slots);
        alloc->free_fn(j);
        return NULL;
    }
    pthread_cond_init(&j->work, NULL);
    pthread_cond_init(&j->done, NULL);
    for (i = 0; i < workers; i++) /* fewer threads than asked is still a pool; none runs jobs inline */
        if (pthread_create(&j->threads[j->workers], NULL, worker, j) == 0)
            j->workers++;
    return j;
}

void hp_jobs_free(hp_jobs *j)
{
    unsigned i;
    if (!j)
        return;
    pthread_mutex_lock(&j->lock);
    j->stop = 1;
    pthread_cond_broadcast(&j->work);
    pthread_mutex_unlock(&j->lock);
    for (i = 0; i < j->workers; i++)
        pthread_join(j->threads[i], NULL);
    pthread_cond_destroy(&j->work);
    pthread_cond_destroy(&j->done);
    pthread_mutex_destroy(&j->lock);
    j->alloc.free_fn(j->slots);
    j->alloc.free_fn(j);
}

unsigned hp_jobs_in_flight(const hp_jobs *j) { return j->count; }
int hp_jobs_full(const hp_jobs *j) { return j->count == j->window; }

int hp_jobs_submit(hp_jobs *j, hp_job_run run, void *job)
{
    slot *s;
    if (j->count == j->window)
        return -1;
    s = &j->slots[(j->oldest + j->count) % j->window];
    s->run = run;
    s->job = job;
    if (j->workers == 0) {
        run(job);
        s->state = SLOT_DONE;
        j->count++;
        return 0;
    }
    pthread_mutex_lock(&j->lock);
    s->state = SLOT_QUEUED;
    if (j->nqueued == 0)
        j->queued = (j->oldest + j->count) % j->window;
    j->nqueued++;
    j->count++;
    pthread_cond_signal(&j->work);
    pthread_mutex_unlock(&j->lock);
    return 0;
}

void *hp_jobs_collect(hp_jobs *j, int wait)
{
    slot *s;
    void *job = NULL;
    if (j->count == 0)
        return NULL;
    s = &j->slots[j->oldest];
    if (j->workers)
        pthread_mutex_lock(&j->lock);
    while (s->state != SLOT_DONE && wait)
        pthread_cond_wait(&j->done, &j->lock);
    if (s->state == SLOT_DONE) {
        job = s->job;
        j->oldest = (j->oldest + 1) % j->window;
        j->count--;
    }
    if (j->workers)
        pthread_mutex_unlock(&j->lock);
    return job;
}
