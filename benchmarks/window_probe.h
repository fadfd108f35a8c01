/* window_probe.h -- the reorder window of the core this thread runs on, measured while it runs:
 * bench_machine.py builds it into a library for ctypes, ab_lbs8_driver.c includes it.
 *
 * window_setup links a ring of n pointers (2^24: 128 MB, past any cache) in one random cycle
 * (Sattolo's shuffle).  window_chase(gap, iters) walks two chains of dependent loads around it,
 * each load followed by `gap` nops, and returns the seconds an iteration took: while one chain's
 * load misses, the other's can start only if the gap + 1 instructions between them fit in the
 * window, so an iteration takes about one miss while they do and two once they do not.  A core
 * whose other hardware thread runs (on a virtual machine, another tenant's vCPU) splits its
 * window and queues between the two threads for as long as that thread runs (Zen 3: 256 -> 128).
 *
 * window_gap_now: the smallest gap whose iterations take 1.5x the smallest's, or 0 where none
 * up to the largest does.  window_whole: the whole window from many such samples (the most
 * frequent gap of the largest cluster, a gap and its neighbours, that a fiftieth of the samples
 * or more find; where the other thread runs most of the time, most samples find half of it).
 * window_split(test, iters): 1 where misses `test` instructions apart are serialized now, 0
 * where they overlap, -1 in between (the state changed during the sample). */
#ifndef WINDOW_PROBE_H
#define WINDOW_PROBE_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define WINDOW_GAPS(X)                                                                             \
    X(32) X(48) X(64) X(80) X(96) X(112) X(128) X(144) X(160) X(176) X(192) X(208) X(224) X(240) \
    X(256) X(272) X(288) X(304) X(320) X(336) X(352) X(368) X(384) X(400) X(416) X(432) X(448)   \
    X(464) X(480) X(496) X(512) X(528) X(544) X(560) X(576) X(592) X(608) X(624) X(640)
#define WINDOW_LIST(gap) gap,
static const int window_gaps[] = {WINDOW_GAPS(WINDOW_LIST)};
#define WINDOW_N_GAPS ((int)(sizeof window_gaps / sizeof *window_gaps))

static uintptr_t *window_ring, window_a, window_b;

static double window_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int window_setup(long n)
{
    uintptr_t *perm = malloc((size_t)n * sizeof *perm);
    free(window_ring);
    window_ring = malloc((size_t)n * sizeof *window_ring);
    if (!window_ring || !perm || n < 2) {
        free(perm);
        free(window_ring);
        window_ring = NULL;
        return -1;
    }
    uint64_t x = 88172645463325252u;
    for (long i = 0; i < n; ++i) perm[i] = (uintptr_t)i;
    for (long i = n - 1; i > 0; --i) { /* Sattolo: one cycle through all n */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const long j = (long)(x % (uint64_t)i);
        const uintptr_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (long i = 0; i < n; ++i) window_ring[perm[i]] = (uintptr_t)&window_ring[perm[(i + 1) % n]];
    window_a = (uintptr_t)&window_ring[perm[0]];
    window_b = (uintptr_t)&window_ring[perm[n / 2]];
    free(perm);
    return 0;
}

void window_free(void)
{
    free(window_ring);
    window_ring = NULL;
}

/* the chains go on from where the last call left them: no load repeats a cached line */
#define WINDOW_CHASE(gap)                                                                          \
    static double window_chase_##gap(long iters)                                                  \
    {                                                                                              \
        uintptr_t a = window_a, b = window_b;                                                      \
        double t = window_now();                                                                   \
        for (long i = 0; i < iters; ++i)                                                           \
            __asm__ volatile("mov (%0), %0\n\t.rept " #gap "\n\tnop\n\t.endr\n\t"                  \
                             "mov (%1), %1\n\t.rept " #gap "\n\tnop\n\t.endr"                      \
                             : "+r"(a), "+r"(b)                                                    \
                             :                                                                     \
                             : "memory");                                                          \
        t = window_now() - t;                                                                      \
        window_a = a;                                                                              \
        window_b = b;                                                                              \
        return t / (double)iters;                                                                  \
    }
WINDOW_GAPS(WINDOW_CHASE)

double window_chase(int gap, long iters)
{
    switch (gap) {
#define WINDOW_CASE(g)                                                                             \
    case g: return window_chase_##g(iters);
        WINDOW_GAPS(WINDOW_CASE)
    }
    return -1;
}

int window_gap(int i) { return i >= 0 && i < WINDOW_N_GAPS ? window_gaps[i] : 0; }

int window_gap_now(long iters)
{
    const double base = window_chase(window_gaps[0], iters);
    for (int i = 1; i < WINDOW_N_GAPS; ++i)
        if (window_chase(window_gaps[i], iters) > 1.5 * base) return window_gaps[i];
    return 0;
}

int window_whole(const int *gaps, int n)
{
    int found = 0, top = 0, best = 0, best_count = -1;
    for (int s = 0; s < n; ++s) found += gaps[s] > 0;
    for (int i = 0; i < WINDOW_N_GAPS; ++i) { /* the largest cluster a fiftieth find */
        int near = 0;
        for (int s = 0; s < n; ++s)
            near += gaps[s] > 0 && abs(gaps[s] - window_gaps[i]) <= 16;
        if (found && near >= 0.02 * n) top = window_gaps[i];
    }
    for (int i = 0; i < WINDOW_N_GAPS; ++i) { /* its most frequent gap */
        if (window_gaps[i] < top - 32 || window_gaps[i] > top) continue;
        int count = 0;
        for (int s = 0; s < n; ++s) count += gaps[s] == window_gaps[i];
        if (count > best_count) best = window_gaps[i], best_count = count;
    }
    return top ? best : 0;
}

int window_test_gap(int whole)
{
    int test = 0;
    for (int i = 0; i < WINDOW_N_GAPS; ++i)
        if (window_gaps[i] <= 0.75 * whole) test = window_gaps[i];
    return test;
}

int window_split(int test, long iters)
{
    const double r = window_chase(test, iters) / window_chase(window_gaps[0], iters);
    return r > 1.5 ? 1 : r < 1.25 ? 0 : -1;
}

#endif
