/* parallel.c -- fork-join over vertex ranges on a small persistent pool of worker threads.
 *
 * The range is cut into 16 chunks per thread (of at least SK_MIN_CHUNK items), on grain
 * boundaries, and dealt in equal shares of consecutive chunks, one per thread.  Every thread (the
 * calling one included) takes the next chunk of its own share from the share's counter until
 * none is left, then the next chunks of the other shares.  So each thread computes the same part
 * of the mesh from call to call while it keeps pace (its inputs stay in its core's cache: 1-3%
 * less time for 2 threads at 100k vertices than one counter for all chunks), and on a machine
 * shared with other work a thread that gets no core for a while simply takes fewer chunks,
 * instead of making the others wait at the join; and the threads finish within a sixteenth of
 * a share of each other (with 4 chunks per thread, the thread left computing the last chunk
 * alone cost about a tenth of a 100k-vertex call).  The
 * kernels' cache decisions (non-temporal stores) go by the whole call's size, so small chunks
 * do not change them.  Which thread computes a chunk never matters: every vertex is computed by
 * the same operations wherever its chunk starts, so the results are bit-identical for any
 * thread count.
 *
 * Why a pool: creating and joining a thread costs about 50 us on a virtual machine, which is a
 * tenth of a 100k-vertex LBS call.  Workers are started on first use and kept; after a job they
 * spin for a short while (a caller skinning frame after frame hands them the next job within
 * microseconds), then sleep on a condition variable.  One caller owns the pool at a time; a
 * second concurrent caller (another Python thread) gets per-call threads instead, as before the
 * pool existed, so callers never wait for each other.  After fork() the child starts with an
 * empty pool (its parent's workers do not exist there). */
#if !defined(_POSIX_C_SOURCE) && !defined(__APPLE__)
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#endif
#include "sk.h"

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#include <time.h>
#define SK_HAVE_PTHREADS 1
#if !defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>
#define SK_HAVE_POOL 1
#endif
#endif

#define SK_MAX_THREADS 64
#define SK_CHUNKS_PER_THREAD 16 /* see the top of this file */
#define SK_MIN_CHUNK 2048         /* items: at 10k vertices 16 chunks per thread cost a tenth */
#define SK_SPIN_NS 200000 /* how long an idle worker (or a waiting caller) polls before sleeping */

#ifdef SK_HAVE_PTHREADS
/* The chunks of one thread's share, taken from the front by its owner and then by the others
 * once their own shares are done.  Each share on a cache line of its own, aligned, so that no
 * other share's counter nor the job's fields (sk_work, read by every thread for every chunk)
 * share its line: with a padded but unaligned share, the first counter shared a line with the
 * job's fields. */
typedef struct {
#ifdef SK_HAVE_POOL
    _Alignas(64) atomic_llong next;
#else
    _Alignas(64) int64_t next;
#endif
    int64_t end;
} sk_share;

typedef struct {
    void (*fn)(void *ctx, int64_t begin, int64_t end);
    void *ctx;
    int64_t n, chunk, n_chunks;
    int n_shares;
#ifndef SK_HAVE_POOL
    pthread_mutex_t lock;
#endif
    sk_share share[SK_MAX_THREADS];
} sk_work;

static int64_t sk_take(sk_work *w, int s)
{
#ifdef SK_HAVE_POOL
    return (int64_t)atomic_fetch_add(&w->share[s].next, 1);
#else
    pthread_mutex_lock(&w->lock);
    int64_t c = w->share[s].next++;
    pthread_mutex_unlock(&w->lock);
    return c;
#endif
}

/* Thread `id` computes its own share's chunks, then helps with the others'. */
static void sk_work_run(sk_work *w, int id)
{
    for (int i = 0; i < w->n_shares; ++i) {
        const int s = (id + i) % w->n_shares;
        for (int64_t c = sk_take(w, s); c < w->share[s].end; c = sk_take(w, s)) {
            int64_t begin = c * w->chunk, end = begin + w->chunk;
            w->fn(w->ctx, begin, end < w->n ? end : w->n);
        }
    }
}

typedef struct {
    sk_work *w;
    int id;
} sk_thread_arg;

static void *sk_work_thread(void *arg)
{
    sk_thread_arg *a = arg;
    sk_work_run(a->w, a->id);
    return NULL;
}

/* Per-call threads: the fallback when the pool is busy or cannot be used. */
static int sk_run_spawned(sk_work *w, int n_threads)
{
    pthread_t ids[SK_MAX_THREADS];
    int started[SK_MAX_THREADS] = {0};
    sk_thread_arg args[SK_MAX_THREADS];
    for (int i = 1; i < n_threads; ++i) {
        args[i] = (sk_thread_arg){w, i};
        started[i] = pthread_create(&ids[i], NULL, sk_work_thread, &args[i]) == 0;
    }
    sk_work_run(w, 0); /* the calling thread works too; a thread that failed to start is not missed */
    for (int i = 1; i < n_threads; ++i)
        if (started[i]) pthread_join(ids[i], NULL);
    return n_threads;
}
#endif

#ifdef SK_HAVE_POOL
static int64_t sk_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sk_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Polls `*flag` while it equals `old` (until == `old` with until_equal) or until SK_SPIN_NS
 * pass; returns its last value. */
static long long sk_spin(atomic_llong *flag, long long old, int until_equal)
{
    long long v = atomic_load_explicit(flag, memory_order_acquire);
    int64_t t0 = 0;
    for (unsigned i = 1; (v == old) != until_equal; ++i) {
        sk_cpu_relax();
        if ((i & 255) == 0) {
            int64_t t = sk_now_ns();
            if (!t0) t0 = t;
            else if (t - t0 > SK_SPIN_NS) break;
        }
        v = atomic_load_explicit(flag, memory_order_acquire);
    }
    return v;
}

static struct {
    pthread_mutex_t owner;   /* held by the caller using the pool */
    pthread_mutex_t lock;    /* guards publishing a job, and sleeping on the conditions */
    pthread_cond_t wake[SK_MAX_THREADS]; /* worker i: a job for it was published */
    pthread_cond_t done;     /* the last worker of a job finished */
    int n_workers;           /* started so far (ids 1..n_workers) */
    _Atomic(sk_work *) job;  /* set with want before the generation is bumped */
    atomic_int want;         /* workers 1..want take part in the current job */
    atomic_llong generation; /* bumped when a job is published */
    atomic_llong active;     /* workers of the current job still working */
    long long start_generation[SK_MAX_THREADS]; /* the generation each worker was started in */
} sk_pool = {.owner = PTHREAD_MUTEX_INITIALIZER, .lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t sk_pool_once = PTHREAD_ONCE_INIT;

static void sk_pool_init_conditions(void)
{
    for (int i = 0; i < SK_MAX_THREADS; ++i) pthread_cond_init(&sk_pool.wake[i], NULL);
    pthread_cond_init(&sk_pool.done, NULL);
}

static void sk_pool_after_fork_in_child(void)
{
    pthread_mutex_init(&sk_pool.owner, NULL);
    pthread_mutex_init(&sk_pool.lock, NULL);
    sk_pool_init_conditions();
    sk_pool.n_workers = 0;
    atomic_store(&sk_pool.job, NULL);
    atomic_store(&sk_pool.want, 0);
    atomic_store(&sk_pool.active, 0);
}

static void sk_pool_init(void)
{
    sk_pool_init_conditions();
    pthread_atfork(NULL, NULL, sk_pool_after_fork_in_child);
}

static void *sk_pool_worker(void *arg)
{
    const int id = (int)(intptr_t)arg;
    long long seen = sk_pool.start_generation[id]; /* not the current one: a job may be out already */
    int idle = 0; /* left out of the last job: sleep at once */
    for (;;) {
        /* A worker left out of a job must not spin through it: on a machine with as many
         * cores as the job's threads it would take a core from one of them (a pool grown by a
         * 3-thread call made every later 2-thread call on 2 cores about 30% slower).  Nor is it
         * woken for one (each worker sleeps on its own condition): when one condition woke every
         * sleeper, a grown pool's idle worker took a core for a moment in every later 2-thread
         * call, 4% of a 100k-vertex LBS call on 2 cores. */
        if (idle || sk_spin(&sk_pool.generation, seen, 0) == seen) {
            pthread_mutex_lock(&sk_pool.lock);
            while (atomic_load(&sk_pool.generation) == seen)
                pthread_cond_wait(&sk_pool.wake[id], &sk_pool.lock);
            pthread_mutex_unlock(&sk_pool.lock);
        }
        /* A consistent snapshot of the job without the lock (a worker that took the lock here
         * could block behind the publishing owner and cost both a futex round trip): job and
         * want are stored before the generation is bumped, and a snapshot is kept only if no
         * other job was published while it was read. */
        sk_work *job;
        int take_part;
        do {
            seen = atomic_load_explicit(&sk_pool.generation, memory_order_acquire);
            job = atomic_load_explicit(&sk_pool.job, memory_order_acquire);
            take_part = id <= atomic_load_explicit(&sk_pool.want, memory_order_acquire);
        } while (atomic_load_explicit(&sk_pool.generation, memory_order_acquire) != seen);
        idle = !take_part;
        if (idle) continue;
        sk_work_run(job, id);
        if (atomic_fetch_sub_explicit(&sk_pool.active, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&sk_pool.lock);
            pthread_cond_signal(&sk_pool.done);
            pthread_mutex_unlock(&sk_pool.lock);
        }
    }
    return NULL;
}

/* Runs w on the pool with n_threads - 1 workers; 0 if the pool is busy (the caller falls back). */
static int sk_run_pooled(sk_work *w, int n_threads)
{
    if (pthread_once(&sk_pool_once, sk_pool_init) != 0) return 0;
    if (pthread_mutex_trylock(&sk_pool.owner) != 0) return 0;
    while (sk_pool.n_workers < n_threads - 1) {
        pthread_t id;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        sk_pool.start_generation[sk_pool.n_workers + 1] = atomic_load(&sk_pool.generation);
        int ok = pthread_create(&id, &attr, sk_pool_worker,
                                (void *)(intptr_t)(sk_pool.n_workers + 1)) == 0;
        pthread_attr_destroy(&attr);
        if (!ok) break;
        ++sk_pool.n_workers;
    }
    int want = n_threads - 1 < sk_pool.n_workers ? n_threads - 1 : sk_pool.n_workers;
    pthread_mutex_lock(&sk_pool.lock);
    atomic_store(&sk_pool.job, w);
    atomic_store(&sk_pool.want, want);
    atomic_store(&sk_pool.active, want);
    atomic_fetch_add_explicit(&sk_pool.generation, 1, memory_order_release);
    for (int i = 1; i <= want; ++i) pthread_cond_signal(&sk_pool.wake[i]);
    pthread_mutex_unlock(&sk_pool.lock);

    sk_work_run(w, 0);

    /* w lives on the caller's stack: return only when every worker is done with it. */
    if (sk_spin(&sk_pool.active, 0, 1) != 0) {
        pthread_mutex_lock(&sk_pool.lock);
        while (atomic_load(&sk_pool.active) != 0)
            pthread_cond_wait(&sk_pool.done, &sk_pool.lock);
        pthread_mutex_unlock(&sk_pool.lock);
    }
    pthread_mutex_unlock(&sk_pool.owner);
    return want + 1;
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
    /* chunks on grain boundaries, SK_CHUNKS_PER_THREAD per thread but no smaller than
     * SK_MIN_CHUNK items (each chunk costs a range call's set-up) */
    int64_t per = (blocks + (int64_t)n_threads * SK_CHUNKS_PER_THREAD - 1) /
                  ((int64_t)n_threads * SK_CHUNKS_PER_THREAD);
    const int64_t min_per = (SK_MIN_CHUNK + grain - 1) / grain;
    if (per < min_per) per = min_per;
    w.chunk = per * grain;
    w.n_chunks = (n + w.chunk - 1) / w.chunk;
    /* one share per thread, in order: each thread keeps the same part of the mesh from call to
     * call, and so in its own core's cache */
    w.n_shares = n_threads;
    for (int s = 0; s < n_threads; ++s) {
#ifdef SK_HAVE_POOL
        atomic_init(&w.share[s].next, w.n_chunks * s / n_threads);
#else
        w.share[s].next = w.n_chunks * s / n_threads;
#endif
        w.share[s].end = w.n_chunks * (s + 1) / n_threads;
    }
#ifdef SK_HAVE_POOL
    int used = sk_run_pooled(&w, n_threads);
    if (used) return used;
#else
    pthread_mutex_init(&w.lock, NULL);
#endif
    sk_run_spawned(&w, n_threads);
#ifndef SK_HAVE_POOL
    pthread_mutex_destroy(&w.lock);
#endif
#endif
    return n_threads;
}
