/* hp_parallel: POSIX threads, or the calling thread alone. */
#if defined(__unix__) || defined(__APPLE__)
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#define HP_HAVE_THREADS 1
#endif

#include "hp_parallel.h"

typedef struct share {
    void (*job)(void *ctx, int worker);
    void *ctx;
    int worker;
} share;

#ifdef HP_HAVE_THREADS
static void *run_share(void *arg)
{
    share *s = arg;
    s->job(s->ctx, s->worker);
    return NULL;
}
#endif

void hp_parallel(int workers, void (*job)(void *ctx, int worker), void *ctx)
{
    share shares[HP_MAX_WORKERS];
    int started[HP_MAX_WORKERS] = { 0 }, i;
#ifdef HP_HAVE_THREADS
    pthread_t threads[HP_MAX_WORKERS];
#endif

    if (workers < 1)
        workers = 1;
    if (workers > HP_MAX_WORKERS)
        workers = HP_MAX_WORKERS;
    for (i = 1; i < workers; i++) {
        shares[i].job = job;
        shares[i].ctx = ctx;
        shares[i].worker = i;
#ifdef HP_HAVE_THREADS
        started[i] = pthread_create(&threads[i], NULL, run_share, &shares[i]) == 0;
#endif
    }
    job(ctx, 0);
    for (i = 1; i < workers; i++) {
#ifdef HP_HAVE_THREADS
        if (started[i]) {
            pthread_join(threads[i], NULL);
            continue;
        }
#endif
        job(ctx, i);
    }
}
