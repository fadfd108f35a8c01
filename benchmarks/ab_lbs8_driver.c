/* ab_lbs8_driver.c -- the timing side of ab_lbs8.py: two builds of the AVX2 float32 LBS block
 * loop (ab_base and ab_variant, each one instance of lbs8_range from a copy of
 * csrc/skin_simd.template.c) called on the same job in one process, round by round, the one
 * that goes first alternating.
 *
 *   ab_lbs8 V K NORMALS SCALED STREAM ROUNDS SEED INDEX_BYTES [WINDOW_SECONDS]
 *
 * Workload as bench_skin.py's: J = 64 joints (random rotations and translations; SCALED = 1 also
 * scales each by 0.5-1.5 per axis, so that normals take the cofactors' blend), K influences a
 * vertex as contiguous indices (INDEX_BYTES 1, 2, 4 or 8: uint8, uint16, int32 or int64) and
 * float32 weights summing to 1, float32 positions and unit normals.  STREAM: the job's
 * non-temporal stores (the module sets it from SK_STREAM_MIN).
 *
 * Prints one line of `key value` pairs: same_bits (1 when both builds wrote the same bytes to both
 * outputs), base_ns, variant_ns (medians, ns a vertex), ratio (the median over the rounds of
 * variant / base within a round), ratio_q1, ratio_q3, reps (the calls of a round).
 *
 * With WINDOW_SECONDS > 0 the pairs are timed for that long by the core's reorder window instead
 * of in rounds (window_probe.h; the caller holds the process on one CPU): each pair of calls,
 * base and variant in alternating order, on a slice of at least SK_STREAM_MIN vertices taken in
 * turn (the whole job where V is smaller; each call of a millisecond or two, which a whole window
 * lasts through more often than a call of 1M), is bracketed by window samples and kept where
 * all three agree; the line then adds window_whole and window_test_gap (the probe's), and for
 * `whole` and `split`: _pairs, _base_ns, _variant_ns, _ratio, _ratio_q1, _ratio_q3. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sk.h"
#include "window_probe.h"

void ab_base(const sk_skin_job_f32 *job, int64_t begin, int64_t end);
void ab_variant(const sk_skin_job_f32 *job, int64_t begin, int64_t end);

#define J 64
#define MAX_ROUNDS 101

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double uniform(void) { return rand() / (double)RAND_MAX; }

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *x, int n, double q)
{
    qsort(x, (size_t)n, sizeof *x, by_value);
    return x[(int)(q * (n - 1) + 0.5)];
}

static void *buffer(size_t bytes)
{
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) {
        fputs("ab_lbs8: out of memory\n", stderr);
        exit(2);
    }
    return p;
}

/* A random 3x4 joint: a unit quaternion's rotation (times per-axis scales), a translation. */
static void random_joint(float *k, int scaled)
{
    double q[4], n = 0;
    for (int i = 0; i < 4; ++i) {
        q[i] = uniform() - 0.5;
        n += q[i] * q[i];
    }
    const double x = q[0] / sqrt(n), y = q[1] / sqrt(n), z = q[2] / sqrt(n), w = q[3] / sqrt(n);
    const double r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                         2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                         2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)};
    for (int c = 0; c < 3; ++c) {
        const double s = scaled ? 0.5 + uniform() : 1.0;
        for (int row = 0; row < 3; ++row) k[4 * row + c] = (float)(r[3 * row + c] * s);
    }
    for (int row = 0; row < 3; ++row) k[4 * row + 3] = (float)(2 * uniform() - 1);
}

/* WINDOW_SECONDS' pairs (see the top): appends its keys to the output line. */
static void by_window(sk_skin_job_f32 *job,
                      void (*const build[2])(const sk_skin_job_f32 *, int64_t, int64_t),
                      float *out[2], float *out_n[2], int normals, int64_t V, double seconds)
{
    if (window_setup(1L << 24)) {
        fputs("ab_lbs8: the window probe's ring (128 MB)\n", stderr);
        exit(2);
    }
    enum { SAMPLES = 4096, CAP = 1 << 16 };
    static int gaps[SAMPLES];
    int n = 0;
    for (const double end = now() + 3; now() < end && n < SAMPLES;)
        gaps[n++] = window_gap_now(1000);
    const int whole = window_whole(gaps, n), test = whole ? window_test_gap(whole) : 0;
    printf(" window_whole %d window_test_gap %d", whole, test);
    if (!test) return;
    const int64_t slices = V >= 2 * SK_STREAM_MIN ? V / SK_STREAM_MIN : 1;
    const int64_t size = slices > 1 ? V / slices / 64 * 64 : V;
    double *ns[2][2], *ratio[2]; /* [state][build], [state] */
    int kept[2] = {0, 0};
    for (int st = 0; st < 2; ++st) {
        ratio[st] = buffer(CAP * sizeof(double));
        for (int b = 0; b < 2; ++b) ns[st][b] = buffer(CAP * sizeof(double));
    }
    int64_t turn = 0;
    for (const double end = now() + seconds; now() < end; ++turn) {
        const int64_t begin = turn % slices * size;
        double t[2];
        int state[3];
        state[0] = window_split(test, 1500);
        for (int i_b = 0; i_b < 2; ++i_b) {
            const int b = turn & 1 ? 1 - i_b : i_b;
            job->out_positions = (sk_stream){out[b], 12, 4};
            job->out_normals = normals ? (sk_stream){out_n[b], 12, 4} : (sk_stream){NULL, 0, 0};
            const double t0 = now();
            build[b](job, begin, begin + size);
            t[b] = (now() - t0) / (double)size * 1e9;
            state[1 + i_b] = window_split(test, 1500);
        }
        const int st = state[0];
        if (st < 0 || state[1] != st || state[2] != st || kept[st] == CAP) continue;
        ns[st][0][kept[st]] = t[0];
        ns[st][1][kept[st]] = t[1];
        ratio[st][kept[st]++] = t[1] / t[0];
    }
    window_free();
    for (int st = 0; st < 2; ++st) {
        const char *name = st ? "split" : "whole";
        const int k = kept[st];
        printf(" %s_pairs %d", name, k);
        if (k)
            printf(" %s_base_ns %.4f %s_variant_ns %.4f %s_ratio %.4f %s_ratio_q1 %.4f "
                   "%s_ratio_q3 %.4f",
                   name, median(ns[st][0], k, 0.5), name, median(ns[st][1], k, 0.5), name,
                   median(ratio[st], k, 0.5), name, median(ratio[st], k, 0.25), name,
                   median(ratio[st], k, 0.75));
        free(ratio[st]);
        free(ns[st][0]);
        free(ns[st][1]);
    }
}

int main(int argc, char **argv)
{
    if (argc != 9 && argc != 10) {
        fputs("usage: ab_lbs8 V K NORMALS SCALED STREAM ROUNDS SEED INDEX_BYTES [WINDOW_SECONDS]\n",
              stderr);
        return 2;
    }
    const double window_seconds = argc == 10 ? atof(argv[9]) : 0;
    const int64_t V = atoll(argv[1]);
    const int K = atoi(argv[2]), normals = atoi(argv[3]), scaled = atoi(argv[4]);
    const int stream = atoi(argv[5]), rounds = atoi(argv[6]);
    srand((unsigned)atoi(argv[7]));
    const int is = atoi(argv[8]);
    if (V < 1 || K < 1 || K > 8 || rounds < 1 || rounds > MAX_ROUNDS ||
        (is != 1 && is != 2 && is != 4 && is != 8)) {
        fputs("ab_lbs8: V >= 1, 1 <= K <= 8, 1 <= ROUNDS <= 101, INDEX_BYTES 1, 2, 4 or 8\n",
              stderr);
        return 2;
    }

    float palette[12 * J];
    float *prepared = buffer(sizeof(float) * SK_LBS_PREPARED_SIZE * J);
    for (int j = 0; j < J; ++j) random_joint(palette + 12 * j, scaled);
    int64_t bad = 0;
    if (sk_lbs_prepare_f32(prepared, palette, J, &bad) != SK_OK) {
        fputs("ab_lbs8: sk_lbs_prepare_f32 failed\n", stderr);
        return 2;
    }

    float *pos = buffer(12 * (size_t)V), *nrm = buffer(12 * (size_t)V);
    float *weights = buffer(4 * (size_t)K * (size_t)V);
    char *indices = buffer((size_t)is * (size_t)K * (size_t)V);
    float *out[2], *out_n[2];
    for (int b = 0; b < 2; ++b) {
        out[b] = buffer(12 * (size_t)V);
        out_n[b] = buffer(12 * (size_t)V);
    }
    for (int64_t v = 0; v < V; ++v) {
        double t[3], n = 0, w[8], sum = 0;
        for (int c = 0; c < 3; ++c) {
            pos[3 * v + c] = (float)(2 * uniform() - 1);
            t[c] = uniform() - 0.5;
            n += t[c] * t[c];
        }
        for (int c = 0; c < 3; ++c) nrm[3 * v + c] = (float)(t[c] / sqrt(n));
        for (int k = 0; k < K; ++k) {
            w[k] = uniform() + 0.01;
            sum += w[k];
            const int64_t j = rand() % J, at = (int64_t)K * v + k;
            if (is == 1) ((uint8_t *)indices)[at] = (uint8_t)j;
            else if (is == 2) ((uint16_t *)indices)[at] = (uint16_t)j;
            else if (is == 4) ((int32_t *)indices)[at] = (int32_t)j;
            else ((int64_t *)indices)[at] = j;
        }
        for (int k = 0; k < K; ++k) weights[(int64_t)K * v + k] = (float)(w[k] / sum);
    }

    sk_skin_job_f32 job;
    memset(&job, 0, sizeof job);
    job.positions = (sk_stream){pos, 12, 4};
    if (normals) job.normals = (sk_stream){nrm, 12, 4};
    job.influences.indices = (sk_stream){indices, is * K, is};
    job.influences.index_type =
        is == 1 ? SK_INDEX_U8 : is == 2 ? SK_INDEX_U16 : is == 4 ? SK_INDEX_I32 : SK_INDEX_I64;
    job.influences.weights = (sk_stream){weights, 4 * K, 4};
    job.influences.weight_type = SK_WEIGHT_FLOAT;
    job.influences.k = K;
    job.prepared = prepared;
    job.n_joints = J;
    job.normal_rule = SK_NORMALS_JOINT;
    job.stream = stream;
    job.cof_matrix = sk_lbs_cof_is_matrix_f32(prepared, J) ? 1 : -1;

    void (*const build[2])(const sk_skin_job_f32 *, int64_t, int64_t) = {ab_base, ab_variant};
    for (int b = 0; b < 2; ++b) {
        memset(out[b], 0xA5, 12 * (size_t)V);
        memset(out_n[b], 0xA5, 12 * (size_t)V);
    }
    double ns[2][MAX_ROUNDS], ratio[MAX_ROUNDS];
    int reps = (int)(2000000 / V);
    if (reps < 2) reps = 2;
    for (int r = -1; r < rounds; ++r) { /* round -1: the bit check, and a warm-up */
        for (int i_b = 0; i_b < 2; ++i_b) {
            const int b = r & 1 ? 1 - i_b : i_b; /* who goes first alternates */
            job.out_positions = (sk_stream){out[b], 12, 4};
            job.out_normals = normals ? (sk_stream){out_n[b], 12, 4} : (sk_stream){NULL, 0, 0};
            const double t0 = now();
            for (int i = 0; i < (r < 0 ? 1 : reps); ++i) build[b](&job, 0, V);
            if (r >= 0) ns[b][r] = (now() - t0) / reps / (double)V * 1e9;
        }
        if (r < 0) continue;
        ratio[r] = ns[1][r] / ns[0][r];
    }
    const int same = !memcmp(out[0], out[1], 12 * (size_t)V) &&
                     (!normals || !memcmp(out_n[0], out_n[1], 12 * (size_t)V));
    const double q1 = median(ratio, rounds, 0.25), q3 = median(ratio, rounds, 0.75);
    printf("same_bits %d base_ns %.4f variant_ns %.4f ratio %.4f ratio_q1 %.4f ratio_q3 %.4f "
           "reps %d",
           same, median(ns[0], rounds, 0.5), median(ns[1], rounds, 0.5),
           median(ratio, rounds, 0.5), q1, q3, reps);
    if (window_seconds > 0) by_window(&job, build, out, out_n, normals, V, window_seconds);
    putchar('\n');
    return 0;
}
