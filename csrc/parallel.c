/* parallel.c -- a minimal fork-join over vertex ranges.  Threads are created per call (a call
 * skins at least thousands of vertices, so creation cost is noise) and joined before returning:
 * no pool, no global state, nothing to go wrong after fork().
 *
 * The range is cut into a few chunks per thread, on grain boundaries, and every thread (the
 * calling one included) takes the next chunk from a shared counter until none is left.  On a
 * machine shared with other work a thread that gets no core for a while simply takes fewer
 * chunks, instead of making the others wait at the join.  Which thread computes a chunk never
 * matters: every vertex is computed by the same operations wherever its chunk starts, so the
 * results are bit-identical for any thread count. */
#include "sk.h"

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define SK_HAVE_PTHREADS 1
#if !defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>
#define SK_HAVE_ATOMICS 1
#endif
#endif

#define SK_MAX_THREADS 64
#define SK_CHUNKS_PER_THREAD 4

#ifdef SK_HAVE_PTHREADS
typedef struct {
    void (*fn)(void *ctx, int64_t begin, int64_t end);
    void *ctx;
    int64_t n, chunk, n_chunks;
#ifdef SK_HAVE_ATOMICS
    atomic_llong next; /* the next chunk to take */
#else
    pthread_mutex_t lock;
    int64_t next;
#endif
} sk_work;

static int64_t sk_take(sk_work *w)
{
#ifdef SK_HAVE_ATOMICS
    return (int64_t)atomic_fetch_add(&w->next, 1);
#else
    pthread_mutex_lock(&w->lock);
    int64_t c = w->next++;
    pthread_mutex_unlock(&w->lock);
    return c;
#endif
}

static void *sk_work_run(void *arg)
{
    sk_work *w = (sk_work *)arg;
    for (int64_t c = sk_take(w); c < w->n_chunks; c = sk_take(w)) {
        int64_t begin = c * w->chunk, end = begin + w->chunk;
        w->fn(w->ctx, begin, end < w->n ? end : w->n);
    }
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
    sk_work w;
    w.fn = fn;
    w.ctx = ctx;
    w.n = n;
    /* chunks on grain boundaries, a few per thread */
    int64_t per = (blocks + (int64_t)n_threads * SK_CHUNKS_PER_THREAD - 1) /
                  ((int64_t)n_threads * SK_CHUNKS_PER_THREAD);
    w.chunk = per * grain;
    w.n_chunks = (n + w.chunk - 1) / w.chunk;
#ifdef SK_HAVE_ATOMICS
    atomic_init(&w.next, 0);
#else
    pthread_mutex_init(&w.lock, NULL);
    w.next = 0;
#endif
    pthread_t ids[SK_MAX_THREADS];
    int started[SK_MAX_THREADS] = {0};
    for (int i = 1; i < n_threads; ++i)
        started[i] = pthread_create(&ids[i], NULL, sk_work_run, &w) == 0;
    sk_work_run(&w); /* the calling thread works too; a thread that failed to start is not missed */
    for (int i = 1; i < n_threads; ++i)
        if (started[i]) pthread_join(ids[i], NULL);
#ifndef SK_HAVE_ATOMICS
    pthread_mutex_destroy(&w.lock);
#endif
#endif
    return n_threads;
}
