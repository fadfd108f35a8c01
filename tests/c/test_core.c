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

/* sk_lbs_prepare's finite check: the largest finite numbers and subnormals pass, inf and NaN of
 * either sign anywhere in any joint fail, naming the first joint that has one. */
static void case_prepare_finite(void)
{
    enum { NJ = 7 };
    float pal[12 * NJ], prep[SK_LBS_PREPARED_SIZE * NJ];
    double pal64[12 * NJ], prep64[SK_LBS_PREPARED_SIZE * NJ];
    const float bad32[] = {INFINITY, -INFINITY, NAN, -NAN};
    const double bad64[] = {INFINITY, -INFINITY, NAN, -NAN};
    for (int b = 0; b < 4; ++b)
        for (int at = 0; at < 12 * NJ; at += 5) {
            for (int i = 0; i < 12 * NJ; ++i) {
                pal[i] = i % 3 == 0 ? 3.4028235e38f : i % 3 == 1 ? -1e-45f : 0.5f;
                pal64[i] = i % 3 == 0 ? 1.7976931348623157e308 : i % 3 == 1 ? -5e-324 : 0.5;
            }
            int64_t bad = -1;
            CHECK(sk_lbs_prepare_f32(prep, pal, NJ, &bad) == SK_OK);
            CHECK(sk_lbs_prepare_f64(prep64, pal64, NJ, &bad) == SK_OK);
            pal[at] = bad32[b];
            pal64[at] = bad64[b];
            pal[12 * (NJ - 1) + 4] = NAN; /* a later joint too: the first is named */
            pal64[12 * (NJ - 1) + 4] = NAN;
            CHECK(sk_lbs_prepare_f32(prep, pal, NJ, &bad) == SK_ERR_NOT_FINITE && bad == at / 12);
            bad = -1;
            CHECK(sk_lbs_prepare_f64(prep64, pal64, NJ, &bad) == SK_ERR_NOT_FINITE &&
                  bad == at / 12);
        }
    /* sk_dqs_prepare: the first joint with a problem, in joint order (not finite; scaled without
     * pivots; a pivot not finite), whichever check finds it */
    float rig[12 * 3], piv[3 * 3] = {0};
    float dprep[SK_DQS_PREPARED_SIZE * 3];
    for (int i = 0; i < 12 * 3; ++i) rig[i] = (i % 12) % 5 == 0 ? 1.0f : 0.0f; /* identities */
    int64_t bad = -1;
    CHECK(sk_dqs_prepare_f32(dprep, rig, NULL, 3, &bad) == SK_OK);
    CHECK(sk_dqs_prepare_f32(dprep, rig, piv, 3, &bad) == SK_OK);
    rig[12 * 2 + 7] = NAN;
    CHECK(sk_dqs_prepare_f32(dprep, rig, NULL, 3, &bad) == SK_ERR_NOT_FINITE && bad == 2);
    rig[12 * 1 + 5] = 2.0f; /* joint 1 scaled: found first without pivots */
    CHECK(sk_dqs_prepare_f32(dprep, rig, NULL, 3, &bad) == SK_ERR_NEEDS_PIVOTS && bad == 1);
    CHECK(sk_dqs_prepare_f32(dprep, rig, piv, 3, &bad) == SK_ERR_NOT_FINITE && bad == 2);
    rig[12 * 2 + 7] = 0.0f;
    piv[3 * 1 + 2] = -INFINITY;
    CHECK(sk_dqs_prepare_f32(dprep, rig, piv, 3, &bad) == SK_ERR_NOT_FINITE && bad == 1);
    piv[3 * 1 + 2] = 0.0f;
    CHECK(sk_dqs_prepare_f32(dprep, rig, piv, 3, &bad) == SK_OK &&
          dprep[SK_DQS_PREPARED_SIZE + 20] == 1.0f); /* joint 1's scale flag */
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

/* ---- the portable kernels (the scalar path: what ARM and other CPUs run) against a plain
 * double reference of LBS and rigid DQS, vertex by vertex ---- */

enum { PV = 37, PJ = 5, PK = 5 }; /* vertices (odd: a partial block), joints, slots at most */

typedef struct {
    double quat[PJ][4], trans[PJ][3], scale[PJ]; /* joint j: scale[j] * R(quat[j]), trans[j] */
    double pal[PJ][12];                           /* row-major 3x4 */
    double p[PV][3], n[PV][3], t[PV][4], w[PV][PK];
    int64_t idx[PV][PK];
} portable_scene;

static uint32_t lcg = 20261122u;
static double rnd(void) /* [-1, 1) */
{
    lcg = lcg * 1664525u + 1013904223u;
    return (double)(lcg >> 8) / 8388608.0 - 1.0;
}

static void quat_matrix(double r[9], const double q[4]) /* unit xyzw */
{
    const double x = q[0], y = q[1], z = q[2], s = q[3];
    const double m[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * s), 2 * (x * z + y * s),
                         2 * (x * y + z * s), 1 - 2 * (x * x + z * z), 2 * (y * z - x * s),
                         2 * (x * z - y * s), 2 * (y * z + x * s), 1 - 2 * (x * x + y * y)};
    memcpy(r, m, sizeof m);
}

static void unit3(double v[3])
{
    double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int c = 0; c < 3; ++c) v[c] /= l;
}

/* K slots per vertex: random weights summing to 1, with a zero slot holding an out-of-range
 * joint (never read) and vertex 5 all zeros (copied); `scaled`: joints scale by 0.5 .. 1.5. */
static void portable_scene_make(portable_scene *sc, int K, int scaled)
{
    for (int j = 0; j < PJ; ++j) {
        double a[3] = {rnd(), rnd(), rnd()}, angle = 3.0 * rnd(), r[9];
        unit3(a);
        for (int c = 0; c < 3; ++c) sc->quat[j][c] = a[c] * sin(angle / 2);
        sc->quat[j][3] = cos(angle / 2);
        sc->scale[j] = scaled ? 1.0 + 0.5 * rnd() : 1.0;
        quat_matrix(r, sc->quat[j]);
        for (int i = 0; i < 3; ++i) {
            sc->trans[j][i] = 2 * rnd();
            for (int c = 0; c < 3; ++c) sc->pal[j][4 * i + c] = sc->scale[j] * r[3 * i + c];
            sc->pal[j][4 * i + 3] = sc->trans[j][i];
        }
    }
    for (int v = 0; v < PV; ++v) {
        double total = 0;
        for (int c = 0; c < 3; ++c) {
            sc->p[v][c] = 3 * rnd();
            sc->n[v][c] = rnd();
            sc->t[v][c] = rnd();
        }
        unit3(sc->n[v]);
        unit3(sc->t[v]);
        sc->t[v][3] = v % 2 ? 1.0 : -1.0;
        for (int k = 0; k < K; ++k) {
            sc->idx[v][k] = (v + 2 * k) % PJ;
            sc->w[v][k] = k == 1 ? 0.0 : 1.25 + rnd();
            if (k == 1) sc->idx[v][k] = 1000; /* zero weight: the index is never read */
            total += sc->w[v][k];
        }
        for (int k = 0; k < K; ++k) sc->w[v][k] = v == 5 ? 0.0 : sc->w[v][k] / total;
    }
}

/* cof(A) of a row-major 3x3 inside a 3x4 (det(A) A^-T), row-major 3x3 */
static void cof33(double c[9], const double *a)
{
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            const int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            c[3 * i + j] = a[4 * i1 + j1] * a[4 * i2 + j2] - a[4 * i1 + j2] * a[4 * i2 + j1];
        }
}

/* out[10] of vertex v: position a p + tr, normal c n and tangent a t normalized (its w
 * copied); a's rows are `as` apart, c's 3. */
static void apply_reference(double out[10], const portable_scene *sc, int v, const double *a,
                            int as, const double tr[3], const double c[9])
{
    for (int i = 0; i < 3; ++i) {
        out[i] = tr[i];
        out[3 + i] = out[6 + i] = 0;
        for (int k = 0; k < 3; ++k) {
            out[i] += a[as * i + k] * sc->p[v][k];
            out[3 + i] += c[3 * i + k] * sc->n[v][k];
            out[6 + i] += a[as * i + k] * sc->t[v][k];
        }
    }
    unit3(out + 3);
    unit3(out + 6);
    out[9] = sc->t[v][3];
}

/* LBS of vertex v (normal rule: 0 joint, 1 blend) into out[10]: position, normal, tangent xyzw */
static void lbs_reference(double out[10], const portable_scene *sc, int v, int K, int rule)
{
    double m[12] = {0}, cj[9] = {0}, cb[9];
    for (int k = 0; k < K; ++k) {
        if (sc->w[v][k] == 0) continue;
        const double *a = sc->pal[sc->idx[v][k]];
        double c[9];
        cof33(c, a);
        for (int i = 0; i < 12; ++i) m[i] += sc->w[v][k] * a[i];
        for (int i = 0; i < 9; ++i) cj[i] += sc->w[v][k] * c[i];
    }
    cof33(cb, m);
    const double tr[3] = {m[3], m[7], m[11]};
    apply_reference(out, sc, v, m, 4, tr, rule ? cb : cj);
}

/* rigid DQS of vertex v (Kavan et al.: every rotation in the pivot's hemisphere) into out[10] */
static void dqs_reference(double out[10], const portable_scene *sc, int v, int K)
{
    int pivot = -1;
    for (int k = 0; k < K; ++k)
        if (sc->w[v][k] > 0 && (pivot < 0 || sc->w[v][k] > sc->w[v][pivot] ||
                                (sc->w[v][k] == sc->w[v][pivot] &&
                                 sc->idx[v][k] < sc->idx[v][pivot])))
            pivot = k;
    const double *q0 = sc->quat[sc->idx[v][pivot]];
    double br[4] = {0}, bd[4] = {0};
    for (int k = 0; k < K; ++k) {
        if (sc->w[v][k] == 0) continue;
        const double *q = sc->quat[sc->idx[v][k]], *t = sc->trans[sc->idx[v][k]];
        double d[4] = {0.5 * (q[3] * t[0] + t[1] * q[2] - t[2] * q[1]), /* (t, 0) q / 2 */
                       0.5 * (q[3] * t[1] + t[2] * q[0] - t[0] * q[2]),
                       0.5 * (q[3] * t[2] + t[0] * q[1] - t[1] * q[0]),
                       -0.5 * (t[0] * q[0] + t[1] * q[1] + t[2] * q[2])};
        double w = sc->w[v][k];
        if (q0[0] * q[0] + q0[1] * q[1] + q0[2] * q[2] + q0[3] * q[3] < 0) w = -w;
        for (int i = 0; i < 4; ++i) br[i] += w * q[i], bd[i] += w * d[i];
    }
    double l = sqrt(br[0] * br[0] + br[1] * br[1] + br[2] * br[2] + br[3] * br[3]), r[9];
    for (int i = 0; i < 4; ++i) br[i] /= l, bd[i] /= l;
    quat_matrix(r, br);
    const double x = br[0], y = br[1], z = br[2], s = br[3];
    const double tr[3] = {2 * (s * bd[0] - bd[3] * x + (y * bd[2] - z * bd[1])),
                          2 * (s * bd[1] - bd[3] * y + (z * bd[0] - x * bd[2])),
                          2 * (s * bd[2] - bd[3] * z + (x * bd[1] - y * bd[0]))};
    apply_reference(out, sc, v, r, 3, tr, r);
}

/* Runs sk_lbs / sk_dqs of one float type on the scene (indices as int64 when `wide`, else
 * uint16) into got[v][10]: position, normal, tangent xyzw. */
#define PORTABLE_RUN(T, SUFFIX)                                                                   \
    static void portable_run_##SUFFIX(double got[PV][10], const portable_scene *sc, int K,        \
                                      int wide, int dqs, int rule)                                \
    {                                                                                             \
        T p[PV][3], n[PV][3], t[PV][4], w[PV][PK], o[PV][10], pal[PJ * 12];                      \
        T prep[PJ * SK_LBS_PREPARED_SIZE];                                                        \
        uint16_t i16[PV][PK];                                                                     \
        int64_t i64[PV][PK];                                                                      \
        for (int v = 0; v < PV; ++v) {                                                            \
            for (int c = 0; c < 3; ++c) p[v][c] = (T)sc->p[v][c], n[v][c] = (T)sc->n[v][c];      \
            for (int c = 0; c < 4; ++c) t[v][c] = (T)sc->t[v][c];                                 \
            for (int k = 0; k < K; ++k) {                                                         \
                w[v][k] = (T)sc->w[v][k];                                                         \
                i16[v][k] = (uint16_t)sc->idx[v][k];                                              \
                i64[v][k] = sc->idx[v][k];                                                        \
            }                                                                                     \
        }                                                                                         \
        for (int j = 0; j < PJ; ++j)                                                              \
            for (int i = 0; i < 12; ++i) pal[12 * j + i] = (T)sc->pal[j][i];                      \
        int64_t bad = -1;                                                                         \
        CHECK((dqs ? sk_dqs_prepare_##SUFFIX(prep, pal, NULL, PJ, &bad)                           \
                   : sk_lbs_prepare_##SUFFIX(prep, pal, PJ, &bad)) == SK_OK);                     \
        sk_skin_job_##SUFFIX job;                                                                 \
        memset(&job, 0, sizeof job);                                                              \
        job.positions = (sk_stream){p, sizeof p[0], sizeof(T)};                                   \
        job.normals = (sk_stream){n, sizeof n[0], sizeof(T)};                                     \
        job.tangents = (sk_stream){t, sizeof t[0], sizeof(T)};                                    \
        job.out_positions = (sk_stream){o, sizeof o[0], sizeof(T)};                               \
        job.out_normals = (sk_stream){&o[0][3], sizeof o[0], sizeof(T)};                          \
        job.out_tangents = (sk_stream){&o[0][6], sizeof o[0], sizeof(T)};                         \
        job.influences = (sk_influences){                                                         \
            {wide ? (void *)i64 : (void *)i16, wide ? sizeof i64[0] : sizeof i16[0],              \
             wide ? sizeof(int64_t) : sizeof(uint16_t)},                                          \
            wide ? SK_INDEX_I64 : SK_INDEX_U16, {w, sizeof w[0], sizeof(T)}, SK_WEIGHT_FLOAT, K};  \
        job.prepared = prep;                                                                      \
        job.n_joints = PJ;                                                                        \
        job.normal_rule = rule ? SK_NORMALS_BLEND : SK_NORMALS_JOINT;                             \
        if (dqs)                                                                                  \
            sk_dqs_##SUFFIX(&job, 0, PV);                                                         \
        else                                                                                      \
            sk_lbs_##SUFFIX(&job, 0, PV);                                                         \
        for (int v = 0; v < PV; ++v)                                                              \
            for (int i = 0; i < 10; ++i) got[v][i] = (double)o[v][i];                             \
    }
PORTABLE_RUN(float, f32)
PORTABLE_RUN(double, f64)
#undef PORTABLE_RUN

static void case_portable_kernels(void)
{
    const sk_simd before = sk_simd_current();
    CHECK(sk_simd_select(SK_SIMD_SCALAR) == SK_OK);
    for (int f64 = 0; f64 < 2; ++f64)
        for (int K = 4; K <= 5; ++K) /* K = 4 and any K: separate instances */
            for (int method = 0; method < 4; ++method) { /* LBS joint, blend, scaled; DQS */
                portable_scene sc;
                portable_scene_make(&sc, K, method == 2);
                const double tol = f64 ? 1e-12 : 2e-5;
                for (int wide = 0; wide < 2; ++wide) {
                    double got[PV][10], want[10];
                    if (f64)
                        portable_run_f64(got, &sc, K, wide, method == 3, method == 1);
                    else
                        portable_run_f32(got, &sc, K, wide, method == 3, method == 1);
                    for (int v = 0; v < PV; ++v) {
                        if (v == 5) { /* zero weights: copied */
                            const double one[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, zero[3] = {0};
                            apply_reference(want, &sc, v, one, 3, zero, one);
                        } else if (method == 3) {
                            dqs_reference(want, &sc, v, K);
                        } else {
                            lbs_reference(want, &sc, v, K, method == 1);
                        }
                        int ok = 1;
                        for (int i = 0; i < 10; ++i) ok &= fabs(got[v][i] - want[i]) < tol * 4;
                        CHECK(ok);
                        if (!ok)
                            fprintf(stderr, "  f64 %d K %d method %d wide %d vertex %d\n", f64, K,
                                    method, wide, v);
                    }
                }
            }
    CHECK(sk_simd_select(before) == SK_OK);
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

/* --- skeleton cases (issue 2) ------------------------------------------------------------- */

/* a = rotation about z by `angle` followed by translation t, as a 3x4 (or 4x4 when rows == 4) */
static void rot_z(double *m, int rows, double angle, double tx, double ty, double tz)
{
    double c = cos(angle), s = sin(angle);
    double a[16] = {c, -s, 0, tx, s, c, 0, ty, 0, 0, 1, tz, 0, 0, 0, 1};
    memcpy(m, a, sizeof(double) * 4 * (size_t)rows);
}

/* c = a @ b for 3x4 affines (the test's own product, independent of affine.h) */
static void mul34(double *c, const double *a, const double *b)
{
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 4; ++k)
            c[4 * r + k] = a[4 * r] * b[k] + a[4 * r + 1] * b[4 + k] + a[4 * r + 2] * b[8 + k] +
                           (k == 3 ? a[4 * r + 3] : 0.0);
}

static void case_validate_parents_range(void)
{
    int64_t bad = -7;
    int64_t below[3] = {-1, 0, -2}, first[2] = {0, -1}, later[3] = {-1, 5, 0};
    CHECK(sk_validate_parents(below, 3, &bad) == SK_ERR_BAD_PARENT && bad == 2);
    CHECK(sk_validate_parents(first, 2, &bad) == SK_ERR_BAD_PARENT && bad == 0);
    CHECK(sk_validate_parents(later, 3, &bad) == SK_ERR_BAD_PARENT && bad == 1);
    CHECK(sk_validate_parents(later, 3, NULL) == SK_ERR_BAD_PARENT); /* bad may be NULL */
    CHECK(sk_validate_parents(later, 0, &bad) == SK_OK);             /* J = 0: nothing to check */
    int64_t forest[4] = {-1, -1, 1, 0};
    CHECK(sk_validate_parents(forest, 4, &bad) == SK_OK);
}

static void case_result_strings(void)
{
    for (int r = 0; r < SK_ERR_COUNT; ++r) {
        const char *s = sk_result_string((sk_result)r);
        CHECK(s != NULL && strlen(s) > 1 && strcmp(s, "unknown result") != 0);
    }
    CHECK(strcmp(sk_result_string(SK_ERR_COUNT), "unknown result") == 0);
}

/* Two frames, locals per frame, a root per frame; compact and full rows agree; f32 follows f64. */
static void case_fk_batched(void)
{
    enum { J = 4, F = 2 };
    int64_t parents[J] = {-1, 0, 1, 0}, bad = 0;
    double loc4[F * J * 16], loc3[F * J * 12], g4[F * J * 16], g3[F * J * 12], root[F * 12];
    double scratch[12 * J];
    float loc_f[F * J * 16], g_f[F * J * 16];
    for (int f = 0; f < F; ++f) {
        rot_z(root + 12 * f, 3, 0.1 * (f + 1), f, 2.0, 0);
        for (int j = 0; j < J; ++j) {
            rot_z(loc4 + 16 * (f * J + j), 4, 0.3 * j - 0.2 * f, 1.0 + j, 0.5 * f, 0.25 * j);
            rot_z(loc3 + 12 * (f * J + j), 3, 0.3 * j - 0.2 * f, 1.0 + j, 0.5 * f, 0.25 * j);
        }
    }
    for (int i = 0; i < F * J * 16; ++i) loc_f[i] = (float)loc4[i];
    memset(g4, 0xff, sizeof g4); /* NaN everywhere: every number must be written */
    CHECK(sk_fk_f64(g4, loc4, 1, parents, J, F, root, 1, 4, scratch, &bad) == SK_OK);
    CHECK(sk_fk_f64(g3, loc3, 1, parents, J, F, root, 1, 3, scratch, &bad) == SK_OK);
    CHECK(sk_fk_f32(g_f, loc_f, 1, parents, J, F, root, 1, 4, scratch, &bad) == SK_OK);
    for (int f = 0; f < F; ++f) {
        double want[J][12];
        for (int j = 0; j < J; ++j) {
            double l[12];
            memcpy(l, loc3 + 12 * (f * J + j), sizeof l);
            mul34(want[j], parents[j] < 0 ? root + 12 * f : want[parents[j]], l);
            const double *got4 = g4 + 16 * (f * J + j), *got3 = g3 + 12 * (f * J + j);
            for (int i = 0; i < 12; ++i) {
                CHECK(fabs(got4[i] - want[j][i]) < 1e-14);
                CHECK(got3[i] == got4[i]);
                CHECK(fabs(g_f[16 * (f * J + j) + i] - want[j][i]) < 1e-5);
            }
            CHECK(got4[12] == 0 && got4[13] == 0 && got4[14] == 0 && got4[15] == 1);
        }
    }
    /* shared locals and a shared root: frame 1 repeats frame 0 */
    CHECK(sk_fk_f64(g4, loc4, 0, parents, J, F, root, 0, 4, scratch, &bad) == SK_OK);
    CHECK(memcmp(g4, g4 + 16 * J, sizeof(double) * 16 * J) == 0);
    CHECK(sk_fk_f64(g4, loc4, 0, parents, J, F, root, 0, 2, scratch, &bad) == SK_ERR_BAD_ARGUMENT);
    CHECK(sk_fk_f64(g4, loc4, 0, parents, J, 0, root, 0, 4, scratch, &bad) == SK_OK); /* F = 0 */
}

/* A float32 chain 1,000 deep is chained in double and rounded once: 1,000 steps of 0.1f land on
 * 100 to float precision (chaining in float would drift by about 1e-3). */
static void case_fk_deep_chain_f32(void)
{
    enum { J = 1000 };
    static float loc[J * 12], glob[J * 12];
    static double scratch[12 * J];
    static int64_t parents[J];
    int64_t bad = 0;
    for (int j = 0; j < J; ++j) {
        parents[j] = j - 1;
        for (int i = 0; i < 12; ++i) loc[12 * j + i] = (i == 0 || i == 5 || i == 10) ? 1.0f : 0.0f;
        loc[12 * j + 7] = 0.1f;
    }
    CHECK(sk_fk_f32(glob, loc, 0, parents, J, 1, NULL, 0, 3, scratch, &bad) == SK_OK);
    CHECK(fabs(glob[12 * (J - 1) + 7] - 100.0) < 1e-5);
    CHECK(fabs(glob[12 * 499 + 7] - 50.0) < 1e-5);
}

static void case_inverse_bind_paths(void)
{
    double g[3 * 12], ib[3 * 12], prod[12];
    int64_t bad = -1;
    rot_z(g, 3, 0.7, 10, -20, 30);           /* rigid: transposed */
    rot_z(g + 12, 3, 0.7, 10, -20, 30);
    g[12 + 0] += 1e-8;                       /* nearly rigid: must take the general inverse */
    g[12 + 5] -= 3e-9;
    rot_z(g + 24, 3, 0.2, 1, 2, 3);
    g[24 + 2] = -g[24 + 2], g[24 + 6] = -g[24 + 6], g[24 + 10] = -1.0; /* a mirror: det < 0 */
    CHECK(sk_inverse_bind_f64(ib, g, 3, 3, &bad) == SK_OK);
    for (int j = 0; j < 3; ++j) {
        mul34(prod, ib + 12 * j, g + 12 * j);
        for (int i = 0; i < 12; ++i)
            CHECK(fabs(prod[i] - ((i == 0 || i == 5 || i == 10) ? 1.0 : 0.0)) < 1e-14);
    }
    /* a failure writes nothing */
    double out[2 * 16], src[2 * 16];
    for (int i = 0; i < 32; ++i) out[i] = 42.0;
    memset(src, 0, sizeof src);
    src[0] = src[5] = src[10] = src[15] = 1.0;
    src[16 + 15] = 1.0;                      /* joint 1: zero 3x3 */
    CHECK(sk_inverse_bind_f64(out, src, 2, 4, &bad) == SK_ERR_SINGULAR && bad == 1);
    for (int i = 0; i < 32; ++i) CHECK(out[i] == 42.0);
    float fsrc[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, INFINITY, 0}, fout[12];
    CHECK(sk_inverse_bind_f32(fout, fsrc, 1, 3, &bad) == SK_ERR_NOT_FINITE && bad == 0);
    CHECK(sk_inverse_bind_f64(out, src, 1, 5, &bad) == SK_ERR_BAD_ARGUMENT);
    CHECK(sk_pivots_f64(out, src, 2, 4, &bad) == SK_ERR_SINGULAR && bad == 1);
}

static void case_palette_pre_post(void)
{
    enum { J = 2, F = 2 };
    double g[F * J * 16], ib[J * 16], pre[12], post[12], pal[F * J * 16];
    float gf[F * J * 16], ibf[J * 16], palf[F * J * 16];
    rot_z(pre, 3, -0.4, 3, 0, 1);
    rot_z(post, 3, 0.9, 0, 1, -2);
    post[0] *= 2.0; /* bind_shape may scale */
    for (int j = 0; j < J; ++j) rot_z(ib + 16 * j, 4, 0.5 * j, -j, 0, 0);
    for (int k = 0; k < F * J; ++k) rot_z(g + 16 * k, 4, 0.1 * k, k, 2 * k, 0);
    for (int i = 0; i < F * J * 16; ++i) gf[i] = (float)g[i];
    for (int i = 0; i < J * 16; ++i) ibf[i] = (float)ib[i];
    memset(pal, 0xff, sizeof pal);
    CHECK(sk_palette_f64(pal, g, ib, J, F, pre, post, 4) == SK_OK);
    CHECK(sk_palette_f32(palf, gf, ibf, J, F, pre, post, 4) == SK_OK);
    for (int f = 0; f < F; ++f)
        for (int j = 0; j < J; ++j) {
            double a[12], b[12], want[12], gg[12], ii[12];
            memcpy(gg, g + 16 * (f * J + j), sizeof gg);
            memcpy(ii, ib + 16 * j, sizeof ii);
            mul34(a, pre, gg);
            mul34(b, a, ii);
            mul34(want, b, post);
            const double *got = pal + 16 * (f * J + j);
            for (int i = 0; i < 12; ++i) {
                CHECK(fabs(got[i] - want[i]) < 1e-13);
                CHECK(fabs(palf[16 * (f * J + j) + i] - want[i]) < 1e-5);
            }
            CHECK(got[12] == 0 && got[13] == 0 && got[14] == 0 && got[15] == 1);
        }
    CHECK(sk_palette_f64(pal, g, ib, J, F, NULL, NULL, 0) == SK_ERR_BAD_ARGUMENT);
}

/* float32 LBS's table of small palettes (sk_lbs_table_f32): made only where the path in use
 * reads it (AVX-512, 1 <= J <= 32), laid out by entries, and the same bits as the rows. */
static void case_lbs_table(void)
{
    enum { TV = 70, TJ = 7 }; /* whole blocks of 16 and a tail */
    float pal[TJ * 12], pos[TV * 3], nrm[TV * 3], w[TV * 4], out[2][TV * 3], nout[2][TV * 3];
    uint16_t idx[TV * 4];
    _Alignas(64) float prep[33 * SK_LBS_PREPARED_SIZE], table[12 * SK_LBS_TABLE_MAX_J];
    for (int j = 0; j < TJ; ++j) { /* a quarter turn about z, about x or none, translated */
        const float r[3][9] = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, -1, 0, 1, 0, 0, 0, 0, 1},
                               {1, 0, 0, 0, 0, -1, 0, 1, 0}};
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 4; ++b)
                pal[12 * j + 4 * a + b] = b < 3 ? r[j % 3][3 * a + b] : (float)rnd();
    }
    for (int i = 0; i < TV * 3; ++i) pos[i] = (float)rnd(), nrm[i] = (float)rnd();
    for (int v = 0; v < TV; ++v) {
        float sum = 0;
        for (int k = 0; k < 4; ++k) {
            idx[4 * v + k] = (uint16_t)((v + 3 * k) % TJ);
            sum += w[4 * v + k] = (float)(rnd() + 1.5);
        }
        for (int k = 0; k < 4; ++k) w[4 * v + k] = v == 20 ? 0.0f : w[4 * v + k] / sum;
    }
    idx[4 * 5 + 2] = 60000, w[4 * 5 + 2] = 0.0f; /* outside the palette, weight 0 */
    int64_t bad = -1;
    CHECK(sk_lbs_prepare_f32(prep, pal, TJ, &bad) == SK_OK);
    const sk_simd before = sk_simd_current();
    for (int path = SK_SIMD_SCALAR; path <= (int)sk_simd_best(); ++path) {
        CHECK(sk_simd_select((sk_simd)path) == SK_OK);
        const int made = sk_lbs_table_f32(table, prep, TJ);
        CHECK(made == (path == SK_SIMD_AVX512));
        CHECK(sk_lbs_table_f32(table, prep, SK_LBS_TABLE_MAX_J + 1) == 0);
        if (!made) continue;
        for (int e = 0; e < 12; ++e)
            for (int j = 0; j < SK_LBS_TABLE_MAX_J; ++j)
                CHECK(table[SK_LBS_TABLE_MAX_J * e + j] ==
                      (j < TJ ? prep[SK_LBS_PREPARED_SIZE * j + 4 * (e / 3) + e % 3] : 0.0f));
        for (int t = 0; t < 2; ++t) { /* with the table, then without */
            sk_skin_job_f32 job;
            memset(&job, 0, sizeof job);
            job.positions = (sk_stream){pos, 3 * sizeof(float), sizeof(float)};
            job.out_positions = (sk_stream){out[t], 3 * sizeof(float), sizeof(float)};
            job.normals = (sk_stream){nrm, 3 * sizeof(float), sizeof(float)};
            job.out_normals = (sk_stream){nout[t], 3 * sizeof(float), sizeof(float)};
            job.influences = (sk_influences){{idx, 4 * sizeof(uint16_t), sizeof(uint16_t)},
                                             SK_INDEX_U16,
                                             {w, 4 * sizeof(float), sizeof(float)},
                                             SK_WEIGHT_FLOAT, 4};
            job.prepared = prep;
            job.n_joints = TJ;
            job.lbs_table = t == 0 ? table : NULL;
            sk_lbs_f32(&job, 0, TV);
        }
        CHECK(memcmp(out[0], out[1], sizeof out[0]) == 0);
        CHECK(memcmp(nout[0], nout[1], sizeof nout[0]) == 0);
        CHECK(memcmp(out[0] + 3 * 20, pos + 3 * 20, 3 * sizeof(float)) == 0); /* copied */
    }
    CHECK(sk_simd_select(before) == SK_OK);
}

/* sk_lbs_prepare of the first nj of three rigid joints (a quarter turn about z moved by
 * (1, 2, 3), a quarter turn about x moved by (-1, 0, 2), the identity), float32 and float64. */
static void lbs_prepare_rigid3(float *prep32, double *prep64, int nj)
{
    const double pal64[3 * 12] = {0, -1, 0, 1, 1, 0, 0, 2, 0, 0, 1, 3, /* */
                                  1, 0, 0, -1, 0, 0, -1, 0, 0, 1, 0, 2, /* */
                                  1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
    float pal32[3 * 12];
    for (int i = 0; i < 3 * 12; ++i) pal32[i] = (float)pal64[i];
    int64_t bad = -1;
    CHECK(sk_lbs_prepare_f32(prep32, pal32, nj, &bad) == SK_OK);
    CHECK(sk_lbs_prepare_f64(prep64, pal64, nj, &bad) == SK_OK);
}

/* sk.h's in-place form for normals too: out_normals = normals, with vertices copied through
 * (weights summing to 0) in whole blocks and the tail, on every path, K = 4 and 3, float32 and
 * float64: the same values as into separate outputs (the AVX2 kernels once wrote a block's
 * normals before reading its copied vertices' inputs). */
static void case_lbs_in_place_normals(void)
{
    enum { NV = 21, NJ = 3 };
    float prep32[NJ * SK_LBS_PREPARED_SIZE];
    double prep64[NJ * SK_LBS_PREPARED_SIZE];
    lbs_prepare_rigid3(prep32, prep64, NJ);
    const sk_simd before = sk_simd_current();
    for (int path = SK_SIMD_SCALAR; path <= (int)sk_simd_best(); ++path)
        for (int K = 3; K <= 4; ++K) {
            CHECK(sk_simd_select((sk_simd)path) == SK_OK);
            float p32[NV * 3], n32[NV * 3], o32[NV * 3], on32[NV * 3], w32[NV * 4];
            double p64[NV * 3], n64[NV * 3], o64[NV * 3], on64[NV * 3], w64[NV * 4];
            uint16_t idx[NV * 4];
            for (int v = 0; v < NV; ++v) {
                for (int c = 0; c < 3; ++c) {
                    p64[3 * v + c] = rnd(), n64[3 * v + c] = rnd();
                    p32[3 * v + c] = (float)p64[3 * v + c], n32[3 * v + c] = (float)n64[3 * v + c];
                }
                const int copied = v == 2 || v == 9 || v == NV - 1;
                for (int k = 0; k < K; ++k) {
                    idx[K * v + k] = (uint16_t)((v + k) % NJ);
                    w64[K * v + k] = copied ? 0.0 : 1.0 / K;
                    w32[K * v + k] = (float)w64[K * v + k];
                }
            }
            sk_skin_job_f32 j32;
            sk_skin_job_f64 j64;
            memset(&j32, 0, sizeof j32);
            memset(&j64, 0, sizeof j64);
            const sk_stream i16 = {idx, K * (ptrdiff_t)sizeof(uint16_t), sizeof(uint16_t)};
            j32.influences = (sk_influences){i16, SK_INDEX_U16,
                                             {w32, K * (ptrdiff_t)sizeof(float), sizeof(float)},
                                             SK_WEIGHT_FLOAT, K};
            j64.influences = (sk_influences){i16, SK_INDEX_U16,
                                             {w64, K * (ptrdiff_t)sizeof(double), sizeof(double)},
                                             SK_WEIGHT_FLOAT, K};
            j32.prepared = prep32, j64.prepared = prep64;
            j32.n_joints = j64.n_joints = NJ;
            const sk_stream s32 = {p32, 3 * sizeof(float), sizeof(float)},
                            s64 = {p64, 3 * sizeof(double), sizeof(double)};
            sk_stream t32 = s32, t64 = s64;
            j32.positions = s32, j64.positions = s64;
            t32.data = n32, t64.data = n64;
            j32.normals = t32, j64.normals = t64;
            t32.data = o32, t64.data = o64;
            j32.out_positions = t32, j64.out_positions = t64;
            t32.data = on32, t64.data = on64;
            j32.out_normals = t32, j64.out_normals = t64;
            sk_lbs_f32(&j32, 0, NV); /* into separate outputs, */
            sk_lbs_f64(&j64, 0, NV);
            j32.out_positions = j32.positions, j32.out_normals = j32.normals; /* then in place */
            j64.out_positions = j64.positions, j64.out_normals = j64.normals;
            sk_lbs_f32(&j32, 0, NV);
            sk_lbs_f64(&j64, 0, NV);
            CHECK(memcmp(p32, o32, sizeof p32) == 0 && memcmp(n32, on32, sizeof n32) == 0);
            CHECK(memcmp(p64, o64, sizeof p64) == 0 && memcmp(n64, on64, sizeof n64) == 0);
        }
    CHECK(sk_simd_select(before) == SK_OK);
}

/* Unvalidated weights (the C API skins what it is given): negative or NaN weights, with one slot
 * above 1e-6, must get the same bits whatever the ranges a call is cut into, since a range's
 * head and tail go through partial blocks (float64 LBS on AVX-512 once took a block's weights
 * as sums above 1e-6 from a slot above it, true of validated weights only). */
static void case_lbs_unvalidated_weights_ranges(void)
{
    enum { NV = 13, NJ = 2 };
    float prep32[NJ * SK_LBS_PREPARED_SIZE];
    double prep64[NJ * SK_LBS_PREPARED_SIZE];
    lbs_prepare_rigid3(prep32, prep64, NJ);
    float p32[NV * 3], w32[NV * 4], a32[NV * 3], b32[NV * 3];
    double p64[NV * 3], w64[NV * 4], a64[NV * 3], b64[NV * 3];
    int32_t idx[NV * 4];
    for (int v = 0; v < NV; ++v) {
        for (int c = 0; c < 3; ++c) p64[3 * v + c] = rnd(), p32[3 * v + c] = (float)p64[3 * v + c];
        for (int k = 0; k < 4; ++k) idx[4 * v + k] = (v + k) % NJ;
        /* a slot above 1e-6 and a sum at or below it (or NaN) in most vertices */
        const double w[4][4] = {{0.5, -1, 0, 0}, {0.25, NAN, 0.5, 0}, {0.5, -0.5, 0, 0}, {1, 0, 0, 0}};
        for (int k = 0; k < 4; ++k) w64[4 * v + k] = w[v % 4][k], w32[4 * v + k] = (float)w[v % 4][k];
    }
    const sk_simd before = sk_simd_current();
    for (int path = SK_SIMD_SCALAR; path <= (int)sk_simd_best(); ++path) {
        CHECK(sk_simd_select((sk_simd)path) == SK_OK);
        sk_skin_job_f32 j32;
        sk_skin_job_f64 j64;
        memset(&j32, 0, sizeof j32);
        memset(&j64, 0, sizeof j64);
        const sk_stream i32s = {idx, 4 * (ptrdiff_t)sizeof(int32_t), sizeof(int32_t)};
        j32.influences = (sk_influences){i32s, SK_INDEX_I32,
                                         {w32, 4 * (ptrdiff_t)sizeof(float), sizeof(float)},
                                         SK_WEIGHT_FLOAT, 4};
        j64.influences = (sk_influences){i32s, SK_INDEX_I32,
                                         {w64, 4 * (ptrdiff_t)sizeof(double), sizeof(double)},
                                         SK_WEIGHT_FLOAT, 4};
        j32.prepared = prep32, j64.prepared = prep64;
        j32.n_joints = j64.n_joints = NJ;
        j32.positions = (sk_stream){p32, 3 * sizeof(float), sizeof(float)};
        j64.positions = (sk_stream){p64, 3 * sizeof(double), sizeof(double)};
        for (int split = 1; split < NV; ++split) {
            j32.out_positions = (sk_stream){a32, 3 * sizeof(float), sizeof(float)};
            j64.out_positions = (sk_stream){a64, 3 * sizeof(double), sizeof(double)};
            sk_lbs_f32(&j32, 0, NV);
            sk_lbs_f64(&j64, 0, NV);
            j32.out_positions.data = b32, j64.out_positions.data = b64;
            sk_lbs_f32(&j32, split, NV);
            sk_lbs_f32(&j32, 0, split);
            sk_lbs_f64(&j64, split, NV);
            sk_lbs_f64(&j64, 0, split);
            for (int i = 0; i < 3 * NV; ++i) {
                CHECK(memcmp(&a32[i], &b32[i], sizeof(float)) == 0 || (isnan(a32[i]) && isnan(b32[i])));
                CHECK(memcmp(&a64[i], &b64[i], sizeof(double)) == 0 || (isnan(a64[i]) && isnan(b64[i])));
            }
        }
    }
    CHECK(sk_simd_select(before) == SK_OK);
}

int main(void)
{
    case_validate_parents();
    case_fk_chain();
    case_inverse_bind_and_palette();
    case_validate_parents_range();
    case_result_strings();
    case_fk_batched();
    case_fk_deep_chain_f32();
    case_inverse_bind_paths();
    case_palette_pre_post();
    case_prepare_finite();
    case_lbs_dqs_interleaved();
    case_portable_kernels();
    case_parallel_for_covers_each_item_once();
    case_lbs_table();
    case_lbs_in_place_normals();
    case_lbs_unvalidated_weights_ranges();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("test_core: all checks passed\n");
    return 0;
}
