/* skin_lbs.template.c -- influence validation, LBS preparation and the LBS kernel; included by
 * skin_lbs.c once per float type (SK_T, SK_FN, SK_JOB defined). */

/* The exact check over vertices [v0, v1): the first problem in vertex, then slot, order. */
static sk_result SK_FN(validate_rows)(const sk_influences *in, int64_t v0, int64_t v1,
                                      int64_t n_joints, int64_t *bad)
{
    for (int64_t v = v0; v < v1; ++v) {
        const char *ip = (const char *)in->indices.data + v * in->indices.row;
        const char *wp = (const char *)in->weights.data + v * in->weights.row;
        for (int64_t k = 0; k < in->k; ++k) {
            SK_T w = SK_FN(sk_read_weight)(wp + k * in->weights.elem, in->weight_type);
            sk_result r = SK_OK;
            if (!isfinite((double)w))
                r = SK_ERR_NOT_FINITE;
            else if (w < 0)
                r = SK_ERR_NEGATIVE_WEIGHT;
            else if (w != 0) {
                int64_t j = sk_read_index(ip + k * in->indices.elem, in->index_type);
                if (j < 0 || j >= n_joints) r = SK_ERR_INDEX_RANGE;
            }
            if (r != SK_OK) {
                if (bad) *bad = v;
                return r;
            }
        }
    }
    return SK_OK;
}

#define SK_ANYBAD_NAME SK_FN(any_bad)
#define SK_ANYBAD_LINKAGE static
#include "skin_anybad.template.h"
#undef SK_ANYBAD_NAME
#undef SK_ANYBAD_LINKAGE

/* The fast check over n contiguous (index, weight) pairs at ip / wp, a chunk at a time (float
 * weights with the widest vectors the CPU has, any_bad; unorm ones by skin_lbs.c's
 * unorm8_any_bad / unorm16_any_bad): the first pair of the first chunk that holds a problem
 * (and in *end the pair after that chunk), or -1 when none does.
 * Once the pairs outgrow the caches the pass runs at the speed of memory, and faster with the
 * lines asked for ahead than with the hardware's prefetch alone: chunks of 256 pairs, each
 * asking for the pairs 6 KB of weights ahead (1536 in float32), took 0.8x the time at 1M
 * vertices, K = 4, float32, on a Cascade Lake Xeon (float64: 0.98-1.0x; see
 * benchmarks/README.md).  Pairs that fit in the caches take chunks of 4096 without the prefetch,
 * which would cost them 1.1-1.5x. */
static int64_t SK_FN(first_bad_chunk)(const char *ip, const char *wp, int64_t n, sk_index_type it,
                                      sk_weight_type wt, int64_t n_joints, int64_t *end)
{
    static const ptrdiff_t isize[] = {1, 2, 4, 4, 8}, wsize[] = {sizeof(SK_T), 1, 2};
    const ptrdiff_t is = isize[it], ws = wsize[wt];
    int (*any_bad)(const void *, sk_index_type, const SK_T *, int64_t, int64_t) = SK_FN(any_bad);
#ifdef SK_BUILD_AVX512
    if (sk_simd_current() == SK_SIMD_AVX512) any_bad = SK_FN(sk_any_bad_avx512);
#endif
#ifdef SK_BUILD_AVX2
    if (sk_simd_current() == SK_SIMD_AVX2) any_bad = SK_FN(sk_any_bad_avx2);
#endif
    const int64_t ahead = 6144 / (int64_t)sizeof(SK_T);
    const int stream = n * (is + ws) > ((int64_t)8 << 20);
    const int64_t chunk = stream ? 256 : 4096;
    for (int64_t e0 = 0; e0 < n; e0 += chunk) {
        const int64_t e1 = n - e0 < chunk ? n : e0 + chunk;
        if (stream && e1 + ahead <= n) {
            const char *ai = ip + (e0 + ahead) * is, *aw = wp + (e0 + ahead) * ws;
            for (int64_t b = 0; b < chunk * is; b += 64) SK_PREFETCH(ai + b);
            for (int64_t b = 0; b < chunk * ws; b += 64) SK_PREFETCH(aw + b);
        }
        const char *pi = ip + e0 * is, *pw = wp + e0 * ws;
        const int64_t m = e1 - e0;
        if (wt == SK_WEIGHT_FLOAT    ? any_bad(pi, it, (const SK_T *)pw, m, n_joints)
            : wt == SK_WEIGHT_UNORM8 ? unorm8_any_bad(pi, it, (const uint8_t *)pw, m, n_joints)
                                     : unorm16_any_bad(pi, it, (const uint16_t *)pw, m, n_joints)) {
            *end = e1;
            return e0;
        }
    }
    return -1;
}

sk_result SK_FN(sk_validate_influences)(const sk_influences *in, int64_t n_vertices,
                                        int64_t n_joints, int64_t *bad)
{
    if (in->k < 1 || n_joints < 1) return SK_ERR_BAD_ARGUMENT;
    static const ptrdiff_t isize[] = {1, 2, 4, 4, 8};
    static const ptrdiff_t wsize[] = {sizeof(SK_T), 1, 2};
    const ptrdiff_t is = isize[in->index_type], k = (ptrdiff_t)in->k, ws = wsize[in->weight_type];
    const int fast = n_joints <= (int64_t)UINT32_MAX; /* 32-bit comparisons in the fast loops */
    const char *ip = (const char *)in->indices.data;
    const char *wp = (const char *)in->weights.data;
    int64_t e0, e1;
    if (fast && in->weights.elem == ws && in->weights.row == k * ws && in->indices.elem == is &&
        in->indices.row == k * is) {
        /* C-contiguous influences (the common case, and every Influences built by skinkit):
         * the (index, weight) pairs as two flat arrays; a chunk that fails is re-read row by row
         * by the exact check, which finds the first problem.  (Unorm weights went row by row
         * before they had a loop of their own: the LBS call 2.2-2.7x its time with an
         * Influences, float32, K = 4, 100k; now 1.1-1.3x.) */
        e0 = SK_FN(first_bad_chunk)(ip, wp, n_vertices * k, in->index_type, in->weight_type,
                                    n_joints, &e1);
        return e0 < 0 ? SK_OK
                      : SK_FN(validate_rows)(in, e0 / k, (e1 + k - 1) / k, n_joints, bad);
    }
    if (fast && in->weights.row == ws && in->indices.row == is) {
        /* Fortran order (a transposed (K, V) pair of arrays): each slot's column of pairs
         * contiguous, checked as the rows are (the exact check row by row took 2.2-2.4x the
         * time of the LBS call with an Influences, K = 4, float32, 100k).  A chunk that fails
         * holds a problem, so the first one is before its end: the exact check up to there. */
        for (ptrdiff_t s = 0; s < k; ++s) {
            e0 = SK_FN(first_bad_chunk)(ip + s * in->indices.elem, wp + s * in->weights.elem,
                                        n_vertices, in->index_type, in->weight_type, n_joints,
                                        &e1);
            if (e0 >= 0) return SK_FN(validate_rows)(in, 0, e1, n_joints, bad);
        }
        return SK_OK;
    }
    return SK_FN(validate_rows)(in, 0, n_vertices, n_joints, bad);
}

sk_result SK_FN(sk_lbs_prepare)(SK_T *prepared, const SK_T *palette, int64_t n_joints,
                                int64_t *bad)
{
    if (!SK_FN(sk_all_finite)(palette, 12 * n_joints)) /* then the first joint that is not */
        for (int64_t j = 0; j < n_joints; ++j)
            if (!SK_FN(sk_all_finite)(palette + 12 * j, 12)) {
                if (bad) *bad = j;
                return SK_ERR_NOT_FINITE;
            }
    /* column-major, columns padded to 4 (sk.h): SIMD kernels load a joint as whole registers */
    for (int64_t j = 0; j < n_joints; ++j) {
        const SK_T *k = palette + 12 * j;
        SK_T *p = prepared + SK_LBS_PREPARED_SIZE * j, cof[9];
        SK_FN(sk_cofactor)(cof, k);
        /* every entry written once (zeroing the row first compiled to `rep stos`, whose start-up
         * cost was a third of the prepare step: about 2 us of a call's fixed cost with J = 64) */
        for (int c = 0; c < 4; ++c) {
            for (int r = 0; r < 3; ++r) p[4 * c + r] = k[4 * r + c];
            p[4 * c + 3] = c == 3; /* the 4x4's corner: a blend's lane 15 is the sum of its
                                    * weights (sk.h) */
        }
        for (int c = 0; c < 4; ++c)
            for (int r = 0; r < 4; ++r) p[16 + 4 * c + r] = c < 3 && r < 3 ? cof[3 * r + c] : 0;
    }
    return SK_OK;
}

int SK_FN(sk_lbs_cof_is_matrix)(const SK_T *prepared, int64_t n_joints)
{
    const SK_T tol = SK_IS_F32 ? (SK_T)SK_COF_TOL_F32 : (SK_T)SK_COF_TOL_F64;
    for (int64_t j = 0; j < n_joints; ++j)
        for (int c = 0; c < 3; ++c)
            for (int r = 0; r < 3; ++r) {
                const SK_T *p = prepared + SK_LBS_PREPARED_SIZE * j + 4 * c + r;
                SK_T d = p[0] - p[16];
                if (!(d <= tol && d >= -tol)) return 0;
            }
    return 1;
}

/* One vertex (sk_lbs_eval, skin_common.template.h). */
static void SK_FN(lbs_vertex)(const SK_JOB *job, int64_t v)
{
    SK_T pos[3], nrm[3], tan[3];
    if (SK_FN(sk_lbs_eval)(job, v, job->prepared, SK_LBS_PREPARED_SIZE, pos, nrm, tan))
        SK_FN(sk_store_vertex)(job, v, pos, nrm, tan);
    else
        SK_FN(sk_copy_vertex)(job, v);
}

#ifdef SK_HAVE_VEC4
/* y = a0 x0 + a1 x1 + a2 x2 (+ a3 for a point): a 3x4 or 3x3 column-major as four-number
 * columns (the fourth number of each is padding) times x. */
SK_ALWAYS_INLINE SK_FN(sk_v4) SK_FN(v4_apply)(SK_FN(sk_v4) a0, SK_FN(sk_v4) a1, SK_FN(sk_v4) a2,
                                             const SK_FN(sk_v4) *a3, const SK_T x[3])
{
    SK_FN(sk_v4) y = a0 * SK_FN(sk_v4_splat)(x[0]) + a1 * SK_FN(sk_v4_splat)(x[1]) +
                     a2 * SK_FN(sk_v4_splat)(x[2]);
    return a3 ? y + *a3 : y;
}

/* a x b of the first three numbers (the fourth is 0). */
SK_ALWAYS_INLINE SK_FN(sk_v4) SK_FN(v4_cross)(SK_FN(sk_v4) a, SK_FN(sk_v4) b)
{
    return (SK_FN(sk_v4)){a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                          a[0] * b[1] - a[1] * b[0], 0};
}

/* Normalizes the first three numbers of y into out (sk_normalize3's operations). */
SK_ALWAYS_INLINE void SK_FN(v4_unit3)(SK_T out[3], SK_FN(sk_v4) y)
{
    out[0] = y[0];
    out[1] = y[1];
    out[2] = y[2];
    SK_FN(sk_normalize3)(out);
}

/* lbs_rows' normal rules (below). */
#ifndef SK_LBS_RULES_ONCE
#define SK_LBS_RULES_ONCE
enum { LBS_MATRIX, LBS_COF, LBS_BLEND };
#endif

/* The portable loop over vertices [begin, end): sk_lbs_eval's operations, but with the index
 * type and K constants of each instance (no switch per slot; K = 4 takes float weights only),
 * the slots read in place, and the blends in four-number registers (SSE2, NEON: a column
 * each).  The normals' `rule`, also a constant: LBS_COF, the "joint" rule where some joint's
 * cofactor is not its 3x3 (the cofactors are blended too); LBS_MATRIX, the "joint" rule
 * otherwise, or no normals (they take the blended matrix, as the SIMD kernels do); LBS_BLEND,
 * the "blend" rule.  kk: K, or 0 for in->k.  3-4.5x less time than vertex by vertex on SSE2. */
SK_ALWAYS_INLINE void SK_FN(lbs_rows)(const SK_JOB *job, int64_t begin, int64_t end,
                                      sk_index_type it, int64_t kk, int rule)
{
    typedef SK_FN(sk_v4) v4;
    const sk_influences *in = &job->influences;
    const int64_t K = kk ? kk : in->k, J = job->n_joints;
    const int normals = job->normals.data != NULL, tangents = job->tangents.data != NULL;
    for (int64_t v = begin; v < end; ++v) {
        const char *ip = (const char *)in->indices.data + v * in->indices.row;
        const char *wp = (const char *)in->weights.data + v * in->weights.row;
        v4 m0 = {0, 0, 0, 0}, m1 = m0, m2 = m0, m3 = m0, c0 = m0, c1 = m0, c2 = m0;
        SK_T total = 0;
        for (int64_t k = 0; k < K; ++k) {
            int64_t j;
            const SK_T wk = SK_FN(sk_slot)(in, ip, wp, k, it, kk, J, &j);
            const SK_T *pj = job->prepared + SK_LBS_PREPARED_SIZE * j;
            const v4 wv = SK_FN(sk_v4_splat)(wk);
            total += wk;
            m0 += wv * SK_FN(sk_v4_load)(pj);
            m1 += wv * SK_FN(sk_v4_load)(pj + 4);
            m2 += wv * SK_FN(sk_v4_load)(pj + 8);
            m3 += wv * SK_FN(sk_v4_load)(pj + 12);
            if (rule == LBS_COF) {
                c0 += wv * SK_FN(sk_v4_load)(pj + 16);
                c1 += wv * SK_FN(sk_v4_load)(pj + 20);
                c2 += wv * SK_FN(sk_v4_load)(pj + 24);
            }
        }
        if (!(total > (SK_T)1e-6)) {
            SK_FN(sk_copy_vertex)(job, v);
            continue;
        }
        SK_T x[3], y[3];
        SK_FN(sk_load3)(x, &job->positions, v);
        const v4 p = SK_FN(v4_apply)(m0, m1, m2, &m3, x);
        y[0] = p[0];
        y[1] = p[1];
        y[2] = p[2];
        SK_FN(sk_store3)(&job->out_positions, v, y);
        if (normals) {
            SK_FN(sk_load3)(x, &job->normals, v);
            if (rule == LBS_BLEND) /* cof(A) of the blend: columns a1 x a2, a2 x a0, a0 x a1 */
                SK_FN(v4_unit3)(y, SK_FN(v4_apply)(SK_FN(v4_cross)(m1, m2), SK_FN(v4_cross)(m2, m0),
                                                   SK_FN(v4_cross)(m0, m1), NULL, x));
            else
                SK_FN(v4_unit3)(y, rule == LBS_COF ? SK_FN(v4_apply)(c0, c1, c2, NULL, x)
                                       : SK_FN(v4_apply)(m0, m1, m2, NULL, x));
            SK_FN(sk_store3)(&job->out_normals, v, y);
        }
        if (tangents) {
            SK_FN(sk_load3)(x, &job->tangents, v);
            SK_FN(v4_unit3)(y, SK_FN(v4_apply)(m0, m1, m2, NULL, x));
            SK_FN(sk_store_tangent3)(job, v, y);
        }
    }
}

/* lbs_rows' instances, each its own function: the index type, K = 4 or any (kk = 0), and the
 * normals' rule as constants. */
#define SK_LBS_ROWS_FN(name, it, kk, rule)                                                        \
    static void SK_FN(name)(const SK_JOB *job, int64_t begin, int64_t end)                        \
    {                                                                                             \
        SK_FN(lbs_rows)(job, begin, end, it, kk, rule);                                           \
    }
#define SK_LBS_ROWS_RULES(tag, it, kk)                                                            \
    SK_LBS_ROWS_FN(lbs_rows_##tag##_matrix, it, kk, LBS_MATRIX)                                   \
    SK_LBS_ROWS_FN(lbs_rows_##tag##_cof, it, kk, LBS_COF)                                         \
    SK_LBS_ROWS_FN(lbs_rows_##tag##_blend, it, kk, LBS_BLEND)
#define SK_LBS_ROWS_K(tag, it) SK_LBS_ROWS_RULES(tag##_k4, it, 4) SK_LBS_ROWS_RULES(tag##_k, it, 0)
SK_LBS_ROWS_K(u8, SK_INDEX_U8)
SK_LBS_ROWS_K(u16, SK_INDEX_U16)
SK_LBS_ROWS_K(u32, SK_INDEX_U32)
SK_LBS_ROWS_K(i32, SK_INDEX_I32)
SK_LBS_ROWS_K(i64, SK_INDEX_I64)
#undef SK_LBS_ROWS_K
#undef SK_LBS_ROWS_RULES
#undef SK_LBS_ROWS_FN

/* Runs lbs_rows' instance for the job; 0 where the compiler has no vector extensions (the
 * caller goes vertex by vertex). */
static int SK_FN(lbs_portable)(const SK_JOB *job, int64_t begin, int64_t end)
{
    typedef void (*rows_fn)(const SK_JOB *, int64_t, int64_t);
#define SK_LBS_ROWS_ROW(tag)                                                                      \
    {{SK_FN(lbs_rows_##tag##_k4_matrix), SK_FN(lbs_rows_##tag##_k4_cof),                          \
      SK_FN(lbs_rows_##tag##_k4_blend)},                                                          \
     {SK_FN(lbs_rows_##tag##_k_matrix), SK_FN(lbs_rows_##tag##_k_cof),                            \
      SK_FN(lbs_rows_##tag##_k_blend)}}
    /* [index type][K = 4, any][rule] */
    static const rows_fn table[5][2][3] = {SK_LBS_ROWS_ROW(u8), SK_LBS_ROWS_ROW(u16),
                                           SK_LBS_ROWS_ROW(u32), SK_LBS_ROWS_ROW(i32),
                                           SK_LBS_ROWS_ROW(i64)};
#undef SK_LBS_ROWS_ROW
    const sk_influences *in = &job->influences;
    int rule = LBS_MATRIX;
    if (job->normals.data && job->normal_rule == SK_NORMALS_BLEND)
        rule = LBS_BLEND;
    else if (job->normals.data && !SK_COF_IS_MATRIX(job, SK_FN(sk_lbs_cof_is_matrix)))
        rule = LBS_COF;
    const int any_k = !(in->k == 4 && in->weight_type == SK_WEIGHT_FLOAT);
    table[in->index_type][any_k][rule](job, begin, end);
    return 1;
}
#else
static int SK_FN(lbs_portable)(const SK_JOB *job, int64_t begin, int64_t end)
{
    return 0;
}
#endif

/* The SIMD kernels take any strides (packed rows fastest), no tangents, the "joint" normal
 * rule; 0 when this call is not theirs. */
static int SK_FN(lbs_simd)(const SK_JOB *job, int64_t begin, int64_t end)
{
    if (job->tangents.data || (job->normals.data && job->normal_rule != SK_NORMALS_JOINT))
        return 0;
    return SK_FN(sk_simd_run)(SK_WITH_AVX512(SK_FN(sk_lbs_avx512)),
                              SK_WITH_AVX2(SK_FN(sk_lbs_avx2)), job, begin, end);
}

void SK_FN(sk_lbs)(const SK_JOB *job, int64_t begin, int64_t end)
{
    if (begin >= end || SK_FN(lbs_simd)(job, begin, end) || SK_FN(lbs_portable)(job, begin, end))
        return;
    for (int64_t v = begin; v < end; ++v) SK_FN(lbs_vertex)(job, v);
}
