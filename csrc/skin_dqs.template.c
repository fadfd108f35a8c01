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

/* Accumulate slots: the pivot pass (largest weight, ties to the smallest joint index, zero
 * weights skipped) or the blend pass. */
static void SK_FN(dqs_vertex)(const SK_JOB *job, int64_t v, int any_scale)
{
    const sk_influences *in = &job->influences;
    const SK_T *prep = job->prepared;
    int64_t idx[SK_SLOTS];
    SK_T w[SK_SLOTS];
    SK_T total = 0, best = -1;
    int64_t pivot = 0;
    for (int64_t k0 = 0; k0 < in->k; k0 += SK_SLOTS) {
        int64_t n = in->k - k0 < SK_SLOTS ? in->k - k0 : SK_SLOTS;
        SK_FN(sk_load_slots)(in, v, k0, n, job->n_joints, idx, w);
        for (int64_t i = 0; i < n; ++i) {
            if (w[i] == 0) continue;
            total += w[i];
            if (w[i] > best || (w[i] == best && idx[i] < pivot)) {
                best = w[i];
                pivot = idx[i];
            }
        }
    }
    if (!(total > (SK_T)1e-6)) {
        SK_FN(sk_copy_vertex)(job, v);
        return;
    }
    const SK_T *q0 = prep + SK_DQS_PREPARED_SIZE * pivot;
    const SK_T inv_total = (SK_T)1 / total;
    SK_T b[8] = {0}, sb[12] = {0};
    for (int64_t k0 = 0; k0 < in->k; k0 += SK_SLOTS) {
        int64_t n = in->k - k0 < SK_SLOTS ? in->k - k0 : SK_SLOTS;
        if (in->k > SK_SLOTS) SK_FN(sk_load_slots)(in, v, k0, n, job->n_joints, idx, w);
        for (int64_t i = 0; i < n; ++i) {
            if (w[i] == 0) continue;
            const SK_T *pj = prep + SK_DQS_PREPARED_SIZE * idx[i];
            /* Shortest arc: bring every rotation into the pivot's hemisphere.  The pivot does
             * not depend on column order, so neither does the result; a dot of exactly 0 keeps
             * its sign. */
            SK_T dot = q0[0] * pj[0] + q0[1] * pj[1] + q0[2] * pj[2] + q0[3] * pj[3];
            SK_T ws = dot < 0 ? -w[i] : w[i];
            for (int q = 0; q < 8; ++q) b[q] += ws * pj[q];
            if (any_scale) {
                SK_T wn = w[i] * inv_total;
                for (int q = 0; q < 12; ++q) sb[q] += wn * pj[8 + q];
            }
        }
    }
    SK_T n2 = b[0] * b[0] + b[1] * b[1] + b[2] * b[2] + b[3] * b[3];
    if (!(n2 > 0)) {
        SK_FN(sk_copy_vertex)(job, v);
        return;
    }
    SK_T inv = (SK_T)1 / (SK_T)sqrt((double)n2);
    const SK_T x = b[0] * inv, y = b[1] * inv, z = b[2] * inv, s = b[3] * inv;
    const SK_T dx = b[4] * inv, dy = b[5] * inv, dz = b[6] * inv, dw = b[7] * inv;
    /* rotation of the unit real part, and t = 2 (s d - dw r + r x d) */
    SK_T rm[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * s), 2 * (x * z + y * s),
                  2 * (x * y + z * s), 1 - 2 * (x * x + z * z), 2 * (y * z - x * s),
                  2 * (x * z - y * s), 2 * (y * z + x * s), 1 - 2 * (x * x + y * y)};
    SK_T t[3] = {2 * (s * dx - dw * x + (y * dz - z * dy)),
                 2 * (s * dy - dw * y + (z * dx - x * dz)),
                 2 * (s * dz - dw * z + (x * dy - y * dx))};
    SK_T p[3], p1[3], out[3];
    SK_FN(sk_load3)(p, &job->positions, v);
    if (any_scale) {
        SK_FN(sk_mul33)(p1, sb, 4, p);
        p1[0] += sb[3];
        p1[1] += sb[7];
        p1[2] += sb[11];
    } else {
        p1[0] = p[0];
        p1[1] = p[1];
        p1[2] = p[2];
    }
    SK_FN(sk_mul33)(out, rm, 3, p1);
    out[0] += t[0];
    out[1] += t[1];
    out[2] += t[2];
    SK_FN(sk_store3)(&job->out_positions, v, out);
    if (job->normals.data) {
        SK_T nn[3], n1[3];
        SK_FN(sk_load3)(nn, &job->normals, v);
        if (any_scale) {
            SK_T c[9];
            SK_FN(sk_cofactor)(c, sb);
            SK_FN(sk_mul33)(n1, c, 3, nn);
        } else {
            n1[0] = nn[0];
            n1[1] = nn[1];
            n1[2] = nn[2];
        }
        SK_FN(sk_mul33)(out, rm, 3, n1);
        SK_FN(sk_normalize3)(out);
        SK_FN(sk_store3)(&job->out_normals, v, out);
    }
    if (job->tangents.data) {
        SK_T m[9];
        if (any_scale) { /* R @ Sb */
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c)
                    m[3 * r + c] = rm[3 * r] * sb[c] + rm[3 * r + 1] * sb[4 + c] + rm[3 * r + 2] * sb[8 + c];
        } else {
            for (int i = 0; i < 9; ++i) m[i] = rm[i];
        }
        SK_FN(sk_store_tangent)(job, v, m, 3, 0);
    }
}

#ifdef SK_DQS_SIMD
/* The SIMD kernels take a rigid palette, any strides (packed rows fastest), no tangents; 0 when
 * this call is not theirs. */
static int SK_FN(dqs_simd)(const SK_JOB *job, int64_t begin, int64_t end)
{
    sk_simd path = sk_simd_current();
    if (path == SK_SIMD_SCALAR || job->tangents.data) return 0;
#ifdef SK_BUILD_AVX512
    if (path == SK_SIMD_AVX512) {
        SK_FN(sk_dqs_avx512)(job, begin, end);
        return 1;
    }
#endif
#ifdef SK_BUILD_AVX2
    if (path == SK_SIMD_AVX2) {
        SK_FN(sk_dqs_avx2)(job, begin, end);
        return 1;
    }
#endif
    (void)begin, (void)end;
    return 0;
}
#endif

void SK_FN(sk_dqs)(const SK_JOB *job, int64_t begin, int64_t end)
{
    if (begin >= end) return;
    /* The rigid fast path skips the scale blend when no joint of this frame has scale. */
    int any_scale = 0;
    for (int64_t j = 0; j < job->n_joints; ++j)
        any_scale |= job->prepared[SK_DQS_PREPARED_SIZE * j + 20] != 0;
#ifdef SK_DQS_SIMD
    if (!any_scale && SK_FN(dqs_simd)(job, begin, end)) return;
#endif
    for (int64_t v = begin; v < end; ++v) SK_FN(dqs_vertex)(job, v, any_scale);
}
