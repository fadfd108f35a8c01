/* test_core.c -- plain C tests of the skinkit core (no Python): each case a static function
 * with its own checks; run under ctest. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sk.h"

static int failures = 0;
#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);    \
            ++failures;                                                                 \
        }                                                                               \
    } while (0)

static void translation(double *m, double x, double y, double z)
{
    memset(m, 0, 16 * sizeof(double));
    m[0] = m[5] = m[10] = m[15] = 1.0;
    m[3] = x;
    m[7] = y;
    m[11] = z;
}

static void case_validate_parents(void)
{
    int64_t good[4] = {-1, 0, 1, 1}, bad_order[3] = {-1, 2, 0}, self_parent[2] = {-1, 1};
    int64_t bad = -7;
    CHECK(sk_validate_parents(good, 4, &bad) == SK_OK);
    CHECK(sk_validate_parents(bad_order, 3, &bad) == SK_ERR_BAD_PARENT && bad == 1);
    CHECK(sk_validate_parents(self_parent, 2, &bad) == SK_ERR_BAD_PARENT && bad == 1);
    CHECK(strcmp(sk_result_string(SK_OK), "ok") == 0);
}

static void case_fk_chain(void)
{
    /* three joints along x, each 1 apart, under a root translated by (0, 5, 0) */
    double local[3 * 16], global[3 * 16], scratch[3 * 12], root[12] = {1, 0, 0, 0, 0, 1, 0, 5, 0, 0, 1, 0};
    int64_t parents[3] = {-1, 0, 1}, bad = 0;
    for (int j = 0; j < 3; ++j) translation(local + 16 * j, 1.0, 0, 0);
    CHECK(sk_fk_f64(global, local, 0, parents, 3, 1, root, 0, 4, scratch, &bad) == SK_OK);
    for (int j = 0; j < 3; ++j) {
        CHECK(fabs(global[16 * j + 3] - (j + 1)) < 1e-15);
        CHECK(fabs(global[16 * j + 7] - 5.0) < 1e-15);
        CHECK(global[16 * j + 15] == 1.0);
    }
    int64_t wrong[3] = {-1, 2, 1};
    CHECK(sk_fk_f64(global, local, 0, wrong, 3, 1, NULL, 0, 4, scratch, &bad) == SK_ERR_BAD_PARENT);
}

static void case_inverse_bind_and_palette(void)
{
    /* a scaled joint goes through the general inverse; a singular one is reported */
    double g[2 * 12] = {2, 0, 0, 1, 0, 3, 0, 2, 0, 0, 4, 3, /* */ 0, -1, 0, 1, 1, 0, 0, 0, 0, 0, 1, 0};
    double ib[2 * 12], pal[2 * 12], piv[2 * 3];
    int64_t bad = -1;
    CHECK(sk_inverse_bind_f64(ib, g, 2, 3, &bad) == SK_OK);
    CHECK(sk_palette_f64(pal, g, ib, 2, 1, NULL, NULL, 3) == SK_OK);
    for (int j = 0; j < 2; ++j)
        for (int i = 0; i < 12; ++i)
            CHECK(fabs(pal[12 * j + i] - ((i == 0 || i == 5 || i == 10) ? 1.0 : 0.0)) < 1e-14);
    CHECK(sk_pivots_f64(piv, ib, 2, 3, &bad) == SK_OK);
    CHECK(fabs(piv[0] - 1) < 1e-14 && fabs(piv[1] - 2) < 1e-14 && fabs(piv[2] - 3) < 1e-14);
    double singular[12] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0};
    CHECK(sk_inverse_bind_f64(ib, singular, 1, 3, &bad) == SK_ERR_SINGULAR && bad == 0);
    double nan_m[12] = {NAN, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
    CHECK(sk_inverse_bind_f64(ib, nan_m, 1, 3, &bad) == SK_ERR_NOT_FINITE);
}

/* ---- skinning kernels ------------------------------------------------------------------ */

/* Two joints: identity and a quarter turn about z with a translation.  A vertex half on each
 * joint, with an interleaved (V, 8) buffer as input and output. */
static void case_lbs_dqs_interleaved(void)
{
    float pal[2 * 12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, /* */ 0, -1, 0, 1, 1, 0, 0, 2, 0, 0, 1, 3};
    float buf[3 * 8] = {0}, out[3 * 8] = {0};
    uint16_t idx[3 * 2] = {0, 1, 1, 0, 0, 1};
    float w[3 * 2] = {0.5f, 0.5f, 1.0f, 0.0f, 0.0f, 0.0f};
    for (int v = 0; v < 3; ++v) {
        buf[8 * v + 0] = 1.0f; /* p = (1, 0, 0) */
        buf[8 * v + 5] = 1.0f; /* n = (0, 0, 1) at columns 3..5 */
    }
    float prep[2 * SK_LBS_PREPARED_SIZE];
    int64_t bad = -1;
    CHECK(sk_lbs_prepare_f32(prep, pal, 2, &bad) == SK_OK);
    sk_skin_job_f32 job;
    memset(&job, 0, sizeof job);
    job.positions = (sk_stream){buf, 8 * sizeof(float), sizeof(float)};
    job.out_positions = (sk_stream){out, 8 * sizeof(float), sizeof(float)};
    job.normals = (sk_stream){buf + 3, 8 * sizeof(float), sizeof(float)};
    job.out_normals = (sk_stream){out + 3, 8 * sizeof(float), sizeof(float)};
    job.influences = (sk_influences){{idx, 2 * sizeof(uint16_t), sizeof(uint16_t)}, SK_INDEX_U16,
                                     {w, 2 * sizeof(float), sizeof(float)}, SK_WEIGHT_FLOAT, 2};
    job.prepared = prep;
    job.n_joints = 2;
    CHECK(sk_validate_influences_f32(&job.influences, 3, 2, &bad) == SK_OK);
    sk_lbs_f32(&job, 0, 3);
    /* vertex 0: 0.5 (1,0,0) + 0.5 (1,3,3) = (1, 1.5, 1.5); vertex 1: (1,3,3); vertex 2 copied */
    CHECK(fabsf(out[0] - 1.0f) < 1e-6f && fabsf(out[1] - 1.5f) < 1e-6f && fabsf(out[2] - 1.5f) < 1e-6f);
    CHECK(fabsf(out[8] - 1.0f) < 1e-6f && fabsf(out[9] - 3.0f) < 1e-6f && fabsf(out[10] - 3.0f) < 1e-6f);
    CHECK(out[16] == 1.0f && out[17] == 0.0f && out[18] == 0.0f);
    CHECK(fabsf(out[5] - 1.0f) < 1e-6f && out[6] == 0.0f && out[7] == 0.0f); /* untouched column */

    float dprep[2 * SK_DQS_PREPARED_SIZE];
    CHECK(sk_dqs_prepare_f32(dprep, pal, NULL, 2, &bad) == SK_OK);
    job.prepared = dprep;
    sk_dqs_f32(&job, 0, 3);
    /* vertex 1 has one influence: DQS equals the joint's rigid motion */
    CHECK(fabsf(out[8] - 1.0f) < 1e-5f && fabsf(out[9] - 3.0f) < 1e-5f && fabsf(out[10] - 3.0f) < 1e-5f);
    CHECK(fabsf(out[5] - 1.0f) < 1e-6f);

    /* a scaled joint without pivots is refused; with pivots accepted */
    float scaled[12] = {2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0}, piv[3] = {0, 0, 0};
    CHECK(sk_dqs_prepare_f32(dprep, scaled, NULL, 1, &bad) == SK_ERR_NEEDS_PIVOTS && bad == 0);
    CHECK(sk_dqs_prepare_f32(dprep, scaled, piv, 1, &bad) == SK_OK);

    /* validation finds an out-of-range index only where the weight is non-zero */
    idx[5] = 9; /* vertex 2, weight 0: fine */
    CHECK(sk_validate_influences_f32(&job.influences, 3, 2, &bad) == SK_OK);
    idx[1] = 9; /* vertex 0, weight 0.5 */
    CHECK(sk_validate_influences_f32(&job.influences, 3, 2, &bad) == SK_ERR_INDEX_RANGE && bad == 0);
    idx[1] = 1;
    w[2] = -1.0f;
    CHECK(sk_validate_influences_f32(&job.influences, 3, 2, &bad) == SK_ERR_NEGATIVE_WEIGHT && bad == 1);
}

static void count_range(void *ctx, int64_t begin, int64_t end)
{
    int *hits = (int *)ctx;
    for (int64_t i = begin; i < end; ++i) hits[i] += 1;
}

static void case_parallel_for_covers_each_item_once(void)
{
    int hits[1000] = {0};
    int used = sk_parallel_for(4, 1000, 64, count_range, hits);
    CHECK(used == 4);
    for (int i = 0; i < 1000; ++i) CHECK(hits[i] == 1);
}

int main(void)
{
    case_validate_parents();
    case_fk_chain();
    case_inverse_bind_and_palette();
    case_lbs_dqs_interleaved();
    case_parallel_for_covers_each_item_once();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("test_core: all checks passed\n");
    return 0;
}
