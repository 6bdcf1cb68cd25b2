/* Two workers at most, for the passes of the graph layer that split into
 * disjoint halves (the results never depend on the split).  POSIX threads
 * where there are some; elsewhere, or when a thread cannot start, the
 * calling thread runs every share in turn. */
#ifndef HP_PARALLEL_H
#define HP_PARALLEL_H

#define HP_MAX_WORKERS 2

/* Runs job(ctx, 0) on the calling thread and job(ctx, 1) ...
 * job(ctx, workers - 1) on others, and returns when all have.  workers is
 * clamped to 1..HP_MAX_WORKERS. */
void hp_parallel(int workers, void (*job)(void *ctx, int worker), void *ctx);

/* A flag any worker raises to make the others stop early. */
static inline int hp_flag_get(const int *flag) { return __atomic_load_n(flag, __ATOMIC_RELAXED); }
static inline void hp_flag_raise(int *flag) { __atomic_store_n(flag, 1, __ATOMIC_RELAXED); }

#endif
