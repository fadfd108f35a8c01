/* parallel.c -- a minimal fork-join over vertex ranges.  Threads are created per call (a call
 * skins at least thousands of vertices, so creation cost is noise) and joined before returning:
 * no pool, no global state, nothing to go wrong after fork(). */
#include "sk.h"

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define SK_HAVE_PTHREADS 1
#endif

#define SK_MAX_THREADS 64

typedef struct {
    void (*fn)(void *ctx, int64_t begin, int64_t end);
    void *ctx;
    int64_t begin, end;
} sk_task;

#ifdef SK_HAVE_PTHREADS
static void *sk_task_run(void *arg)
{
    sk_task *t = (sk_task *)arg;
    t->fn(t->ctx, t->begin, t->end);
    return NULL;
}
#endif

int sk_parallel_for(int n_threads, int64_t n, int64_t grain,
                    void (*fn)(void *ctx, int64_t begin, int64_t end), void *ctx)
{
    if (grain < 1) grain = 1;
    int64_t blocks = (n + grain - 1) / grain;
    if (n_threads > SK_MAX_THREADS) n_threads = SK_MAX_THREADS;
    if (n_threads > blocks) n_threads = (int)blocks;
#ifndef SK_HAVE_PTHREADS
    n_threads = 1;
#endif
    if (n_threads <= 1) {
        if (n > 0) fn(ctx, 0, n);
        return 1;
    }
#ifdef SK_HAVE_PTHREADS
    sk_task tasks[SK_MAX_THREADS];
    pthread_t ids[SK_MAX_THREADS];
    int started[SK_MAX_THREADS] = {0};
    for (int i = 0; i < n_threads; ++i) {
        /* contiguous ranges on grain boundaries: every vertex sees the same code path whatever
         * the split, so results are bit-identical for any thread count */
        int64_t b0 = blocks * i / n_threads, b1 = blocks * (i + 1) / n_threads;
        tasks[i].fn = fn;
        tasks[i].ctx = ctx;
        tasks[i].begin = b0 * grain;
        tasks[i].end = b1 * grain < n ? b1 * grain : n;
    }
    for (int i = 1; i < n_threads; ++i)
        started[i] = pthread_create(&ids[i], NULL, sk_task_run, &tasks[i]) == 0;
    fn(ctx, tasks[0].begin, tasks[0].end);
    for (int i = 1; i < n_threads; ++i) {
        if (started[i])
            pthread_join(ids[i], NULL);
        else /* could not start a thread: do its share here */
            fn(ctx, tasks[i].begin, tasks[i].end);
    }
#endif
    return n_threads;
}
