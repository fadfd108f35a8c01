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

sk_result SK_FN(sk_validate_influences)(const sk_influences *in, int64_t n_vertices,
                                        int64_t n_joints, int64_t *bad)
{
    if (in->k < 1 || n_joints < 1) return SK_ERR_BAD_ARGUMENT;
    static const ptrdiff_t isize[] = {1, 2, 4, 4, 8};
    const ptrdiff_t is = isize[in->index_type], k = (ptrdiff_t)in->k;
    if (!(in->weight_type == SK_WEIGHT_FLOAT && in->weights.elem == (ptrdiff_t)sizeof(SK_T) &&
          in->weights.row == k * (ptrdiff_t)sizeof(SK_T) && in->indices.elem == is &&
          in->indices.row == k * is) ||
        n_joints > (int64_t)UINT32_MAX) /* 32-bit comparisons below */
        return SK_FN(validate_rows)(in, 0, n_vertices, n_joints, bad);
    /* C-contiguous float influences (the common case, and every Influences built by skinkit):
     * whole chunks at a time, with the widest vectors the CPU has; a chunk that fails is re-read
     * by the exact check, which finds the first problem. */
    int (*any_bad)(const void *, sk_index_type, const SK_T *, int64_t, int64_t) = SK_FN(any_bad);
#ifdef SK_BUILD_AVX512
    if (sk_simd_current() == SK_SIMD_AVX512) any_bad = SK_FN(sk_any_bad_avx512);
#endif
#ifdef SK_BUILD_AVX2
    if (sk_simd_current() == SK_SIMD_AVX2) any_bad = SK_FN(sk_any_bad_avx2);
#endif
    const int64_t chunk = 1024;
    for (int64_t v0 = 0; v0 < n_vertices; v0 += chunk) {
        int64_t v1 = n_vertices - v0 < chunk ? n_vertices : v0 + chunk;
        const char *ip = (const char *)in->indices.data + v0 * in->indices.row;
        const SK_T *wp = (const SK_T *)((const char *)in->weights.data + v0 * in->weights.row);
        int any = any_bad(ip, in->index_type, wp, (v1 - v0) * k, n_joints);
        if (any) return SK_FN(validate_rows)(in, v0, v1, n_joints, bad);
    }
    return SK_OK;
}

sk_result SK_FN(sk_lbs_prepare)(SK_T *prepared, const SK_T *palette, int64_t n_joints,
                                int64_t *bad)
{
    for (int64_t j = 0; j < n_joints; ++j)
        for (int i = 0; i < 12; ++i)
            if (!isfinite((double)palette[12 * j + i])) {
                if (bad) *bad = j;
                return SK_ERR_NOT_FINITE;
            }
    /* column-major, columns padded to 4 (sk.h): SIMD kernels load a joint as whole registers */
    for (int64_t j = 0; j < n_joints; ++j) {
        const SK_T *k = palette + 12 * j;
        SK_T *p = prepared + SK_LBS_PREPARED_SIZE * j, cof[9];
        SK_FN(sk_cofactor)(cof, k);
        for (int i = 0; i < SK_LBS_PREPARED_SIZE; ++i) p[i] = 0;
        for (int c = 0; c < 4; ++c)
            for (int r = 0; r < 3; ++r) p[4 * c + r] = k[4 * r + c];
        for (int c = 0; c < 3; ++c)
            for (int r = 0; r < 3; ++r) p[16 + 4 * c + r] = cof[3 * r + c];
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
    if (begin >= end || SK_FN(lbs_simd)(job, begin, end)) return;
    for (int64_t v = begin; v < end; ++v) SK_FN(lbs_vertex)(job, v);
}
