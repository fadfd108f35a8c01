/* skin_dqs.template.c -- DQS preparation and kernel; included by skin_dqs.c per float type.
 *
 * prepared[21 j + 0..7]   unit dual quaternion (real xyzw, dual xyzw) of joint j's rigid part
 * prepared[21 j + 8..19]  its scale-about-pivot affine [S | c - S c] (identity when rigid)
 * prepared[21 j + 20]     1 when the joint has scale or shear, else 0
 */

sk_result SK_FN(sk_dqs_prepare)(SK_T *prepared, const SK_T *palette, const SK_T *pivots,
                                int64_t n_joints, int64_t *bad)
{
    /* Check everything first: a failure leaves `prepared` untouched. */
    for (int64_t j = 0; j < n_joints; ++j) {
        double k[12];
        for (int i = 0; i < 12; ++i) k[i] = (double)palette[12 * j + i];
        sk_result r = SK_OK;
        if (!sk_aff_finite(k))
            r = SK_ERR_NOT_FINITE;
        else if (!pivots && dqs_has_scale(k))
            r = SK_ERR_NEEDS_PIVOTS;
        else if (pivots && !(isfinite((double)pivots[3 * j]) && isfinite((double)pivots[3 * j + 1]) &&
                             isfinite((double)pivots[3 * j + 2])))
            r = SK_ERR_NOT_FINITE;
        if (r != SK_OK) {
            if (bad) *bad = j;
            return r;
        }
    }
    for (int64_t j = 0; j < n_joints; ++j) {
        double k[12], c[3] = {0, 0, 0}, out[SK_DQS_PREPARED_SIZE];
        for (int i = 0; i < 12; ++i) k[i] = (double)palette[12 * j + i];
        if (pivots)
            for (int i = 0; i < 3; ++i) c[i] = (double)pivots[3 * j + i];
        dqs_prepare_joint(out, k, c);
        for (int i = 0; i < SK_DQS_PREPARED_SIZE; ++i)
            prepared[SK_DQS_PREPARED_SIZE * j + i] = (SK_T)out[i];
    }
    return SK_OK;
}

/* The hemisphere signs (sk.h), with the scalar kernel's dot product in the kernel's type. */
void SK_FN(sk_dqs_signs)(float *sign, const SK_T *quats, ptrdiff_t stride, int64_t n_joints)
{
    for (int64_t p = 0; p < n_joints; ++p) {
        const SK_T *q0 = quats + stride * p;
        for (int64_t j = 0; j < n_joints; ++j) {
            const SK_T *pj = quats + stride * j;
            SK_T dot = q0[0] * pj[0] + q0[1] * pj[1] + q0[2] * pj[2] + q0[3] * pj[3];
            sign[p * n_joints + j] = dot < 0 ? -1.0f : 1.0f;
        }
    }
}

/* One vertex (sk_dqs_eval, skin_common.template.h). */
static void SK_FN(dqs_vertex)(const SK_JOB *job, int64_t v, int any_scale)
{
    SK_T pos[3], nrm[3], tan[3];
    if (SK_FN(sk_dqs_eval)(job, v, job->prepared, SK_DQS_PREPARED_SIZE, any_scale, NULL, NULL, pos,
                           nrm, tan))
        SK_FN(sk_store_vertex)(job, v, pos, nrm, tan);
    else
        SK_FN(sk_copy_vertex)(job, v);
}

/* The SIMD kernels (skin_simd.template.c) take a rigid palette, any strides (packed rows
 * fastest), no tangents; 0 when this call is not theirs. */
static int SK_FN(dqs_simd)(const SK_JOB *job, int64_t begin, int64_t end)
{
    if (job->tangents.data) return 0;
    return SK_FN(sk_simd_run)(SK_WITH_AVX512(SK_FN(sk_dqs_avx512)),
                              SK_WITH_AVX2(SK_FN(sk_dqs_avx2)), job, begin, end);
}

void SK_FN(sk_dqs)(const SK_JOB *job, int64_t begin, int64_t end)
{
    if (begin >= end) return;
    /* The rigid fast path skips the scale blend when no joint of this frame has scale. */
    int any_scale = SK_FN(sk_dqs_any_scale)(job->prepared, SK_DQS_PREPARED_SIZE, job->n_joints);
    if (!any_scale && SK_FN(dqs_simd)(job, begin, end)) return;
    for (int64_t v = begin; v < end; ++v) SK_FN(dqs_vertex)(job, v, any_scale);
}
