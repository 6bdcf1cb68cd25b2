/* An ordered pool of worker threads (POSIX threads): jobs are submitted in
 * order and collected in that same order, whichever worker finished first.
 * The pack codec compresses (or inflates) its blocks this way while the
 * caller's thread models (or restores) them, so the output never depends on
 * the number of workers.
 *
 *     hp_jobs *j = hp_jobs_new(alloc, workers, window);
 *     if (hp_jobs_full(j)) job = hp_jobs_collect(j, 1);  ...use job...
 *     hp_jobs_submit(j, run, job);
 *     while ((job = hp_jobs_collect(j, 0)))  ...use finished jobs...
 *
 * At most `window` jobs are in flight (submitted, not collected): the caller
 * owns the job structures and can keep `window` of them, reused in turn.
 * With no workers (0, or when threads cannot be started) a job runs inside
 * hp_jobs_submit, in the caller's thread.  Workers never call back into the
 * caller: a job's `run` must touch only its own job. */
#ifndef HP_JOBS_H
#define HP_JOBS_H

#include "hp_common.h"

typedef struct hp_jobs hp_jobs;
typedef void (*hp_job_run)(void *job);

/* NULL when memory runs out.  `window` is raised to 1 at least. */
hp_jobs *hp_jobs_new(const hp_alloc *alloc, unsigned workers, unsigned window);

/* Waits for the jobs running now, drops the queued ones, stops the workers. */
void hp_jobs_free(hp_jobs *j);

/* Jobs in flight, and whether the window is full (collect before submitting). */
unsigned hp_jobs_in_flight(const hp_jobs *j);
int hp_jobs_full(const hp_jobs *j);

/* Queues `job`; the window must not be full (else -1 and nothing happens). */
int hp_jobs_submit(hp_jobs *j, hp_job_run run, void *job);

/* The oldest job in flight once it has run (waiting for it when `wait`), in
 * submission order; NULL when none is in flight, or without `wait` when the
 * oldest is still queued or running. */
void *hp_jobs_collect(hp_jobs *j, int wait);

#endif
