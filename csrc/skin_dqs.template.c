/* skin_dqs.template.c -- DQS preparation and kernel; included by skin_dqs.c per float type.
 *
 * prepared[21 j + 0..7]   unit dual quaternion (real xyzw, dual xyzw) of joint j's rigid part
 * prepared[21 j + 8..19]  its scale-about-pivot affine [S | c - S c] (identity when rigid)
 * prepared[21 j + 20]     1 when the joint has scale or shear, else 0
 */

sk_result SK_FN(sk_dqs_prepare)(SK_T *prepared, const SK_T *palette, const SK_T *pivots,
                                int64_t n_joints, int64_t *bad)
{
    /* Check everything first: a failure leaves `prepared` untouched.  The finite checks run
     * over the whole arrays first (vectorized, sk_all_finite); the joints are looked at one by
     * one only for a failure, or for scale when there are no pivots. */
    const int finite = SK_FN(sk_all_finite)(palette, 12 * n_joints) &&
                       (!pivots || SK_FN(sk_all_finite)(pivots, 3 * n_joints));
    for (int64_t j = 0; j < n_joints && (!finite || !pivots); ++j) {
        double k[12];
        for (int i = 0; i < 12; ++i) k[i] = (double)palette[12 * j + i];
        sk_result r = SK_OK;
        if (!finite && !SK_FN(sk_all_finite)(palette + 12 * j, 12))
            r = SK_ERR_NOT_FINITE;
        else if (!pivots && dqs_has_scale(k))
            r = SK_ERR_NEEDS_PIVOTS;
        else if (!finite && pivots && !SK_FN(sk_all_finite)(pivots + 3 * j, 3))
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
        /* without pivots, the check above found no joint scaled */
        dqs_prepare_joint(out, k, c, pivots ? dqs_has_scale(k) : 0);
        for (int i = 0; i < SK_DQS_PREPARED_SIZE; ++i)
            prepared[SK_DQS_PREPARED_SIZE * j + i] = (SK_T)out[i];
    }
    return SK_OK;
}

/* The hemisphere signs (sk.h), with the scalar kernel's dot product in the kernel's type, by the
 * widest version of skin_signs.template.h the CPU runs (the same signs from each). */
#define SK_SIGNS_NAME SK_FN(dqs_signs_portable)
#define SK_SIGNS_LINKAGE static
#include "skin_signs.template.h"
#undef SK_SIGNS_NAME
#undef SK_SIGNS_LINKAGE

int SK_FN(sk_dqs_signs)(float *sign, uint64_t *bits, const SK_T *quats, ptrdiff_t stride,
                        int64_t n_joints)
{
#ifdef SK_BUILD_AVX512
    if (sk_simd_current() == SK_SIMD_AVX512)
        return SK_FN(sk_dqs_signs_avx512)(sign, bits, quats, stride, n_joints);
#endif
#ifdef SK_BUILD_AVX2
    if (sk_simd_current() == SK_SIMD_AVX2)
        return SK_FN(sk_dqs_signs_avx2)(sign, bits, quats, stride, n_joints);
#endif
    return SK_FN(dqs_signs_portable)(sign, bits, quats, stride, n_joints);
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

#ifdef SK_HAVE_VEC4
/* Vertex v's blends for dqs_rows: the dual quaternion b and, with any_scale, the scale affine
 * sb (row-major 3x4), by sk_dqs_eval's operations in the same order (the same bits), with the
 * slots read in place and the sums in four-number registers.  0 when the weights sum to
 * <= 1e-6 (the vertex is copied). */
SK_ALWAYS_INLINE int SK_FN(dqs_blend_row)(const SK_JOB *job, int64_t v, sk_index_type it,
                                          int64_t kk, int any_scale, SK_T b[8], SK_T sb[12])
{
    typedef SK_FN(sk_v4) v4;
    const sk_influences *in = &job->influences;
    const int64_t K = kk ? kk : in->k, J = job->n_joints;
    const char *ip = (const char *)in->indices.data + v * in->indices.row;
    const char *wp = (const char *)in->weights.data + v * in->weights.row;
    /* the pivot: the largest weight, ties to the smallest joint index, zero weights skipped;
     * with K = 4 the slots are kept for the blend below */
    SK_T total = 0, best = -1, w4[4] = {0, 0, 0, 0};
    int64_t pivot = 0, j4[4] = {0, 0, 0, 0};
    for (int64_t k = 0; k < K; ++k) {
        int64_t j;
        const SK_T wk = SK_FN(sk_slot)(in, ip, wp, k, it, kk, J, &j);
        if (kk == 4) w4[k] = wk, j4[k] = j;
        const int better = wk != 0 && (wk > best || (wk == best && j < pivot));
        best = better ? wk : best;
        pivot = better ? j : pivot;
        total += wk;
    }
    if (!(total > (SK_T)1e-6)) return 0;
    const SK_T *q0 = job->prepared + SK_DQS_PREPARED_SIZE * pivot;
    /* the hemisphere signs of the pivot's row (sk.h): no branch per slot on the sign of a dot
     * product, which random rotations mispredict half the time */
    const float *sign = job->dqs_sign ? job->dqs_sign + J * pivot : NULL;
    const SK_T inv_total = (SK_T)1 / total;
    v4 br = {0, 0, 0, 0}, bd = br, s0 = br, s1 = br, s2 = br;
    for (int64_t k = 0; k < K; ++k) { /* the slots again: kept with K = 4, else re-read */
        int64_t j;
        SK_T wk;
        if (kk == 4)
            j = j4[k], wk = w4[k];
        else
            wk = SK_FN(sk_slot)(in, ip, wp, k, it, kk, J, &j);
        if (wk == 0) continue;
        const SK_T *pj = job->prepared + SK_DQS_PREPARED_SIZE * j;
        /* shortest arc, as sk_dqs_eval (the sign from the same dot product; w times -1 is
         * exactly -w) */
        SK_T sw;
        if (sign) {
            sw = wk * (SK_T)sign[j];
        } else {
            SK_T dot = q0[0] * pj[0] + q0[1] * pj[1] + q0[2] * pj[2] + q0[3] * pj[3];
            sw = dot < 0 ? -wk : wk;
        }
        const v4 ws = SK_FN(sk_v4_splat)(sw);
        br += ws * SK_FN(sk_v4_load)(pj);
        bd += ws * SK_FN(sk_v4_load)(pj + 4);
        if (any_scale) {
            const v4 wn = SK_FN(sk_v4_splat)(wk * inv_total);
            s0 += wn * SK_FN(sk_v4_load)(pj + 8);
            s1 += wn * SK_FN(sk_v4_load)(pj + 12);
            s2 += wn * SK_FN(sk_v4_load)(pj + 16);
        }
    }
    memcpy(b, &br, sizeof br);
    memcpy(b + 4, &bd, sizeof bd);
    memcpy(sb, &s0, sizeof s0);
    memcpy(sb + 4, &s1, sizeof s1);
    memcpy(sb + 8, &s2, sizeof s2);
    return 1;
}

/* y = m x for four 3x3s (row-major, rows `stride` apart: lane i of m[q] is vertex i's element
 * q) and four 3-vectors, as sk_mul33 sums. */
SK_ALWAYS_INLINE void SK_FN(v4_mul33)(SK_FN(sk_v4) y[3], const SK_FN(sk_v4) *m, int stride,
                                      const SK_FN(sk_v4) x[3])
{
    for (int r = 0; r < 3; ++r)
        y[r] = m[stride * r] * x[0] + m[stride * r + 1] * x[1] + m[stride * r + 2] * x[2];
}

/* Normalizes four 3-vectors, lane by lane as sk_normalize3 (a zero vector stays zero). */
SK_ALWAYS_INLINE void SK_FN(v4_normalize3)(SK_FN(sk_v4) y[3])
{
    const SK_FN(sk_v4) n2 = y[0] * y[0] + y[1] * y[1] + y[2] * y[2];
    SK_FN(sk_v4) f;
    for (int i = 0; i < 4; ++i) f[i] = n2[i] > 0 ? (SK_T)1 / (SK_T)sqrt((double)n2[i]) : 1;
    for (int c = 0; c < 3; ++c) y[c] *= f;
}

/* Lane i of x[c] = element c of the stream's vertex v0 + i (0 for i >= n). */
SK_ALWAYS_INLINE void SK_FN(v4_load3)(SK_FN(sk_v4) x[3], const sk_stream *s, int64_t v0, int n)
{
    SK_T a[3][4] = {{0}};
    for (int i = 0; i < n; ++i)
        for (int c = 0; c < 3; ++c) a[c][i] = SK_AT(*s, SK_T, v0 + i, c);
    for (int c = 0; c < 3; ++c) x[c] = (SK_FN(sk_v4)){a[c][0], a[c][1], a[c][2], a[c][3]};
}

/* Vertices v0 .. v0 + n - 1 (n <= 4), one per lane: the blends of dqs_blend_row, then
 * sk_dqs_eval's operations for four vertices at once (the same bits), so that their chains
 * of square roots and divisions overlap. */
SK_ALWAYS_INLINE void SK_FN(dqs_block4)(const SK_JOB *job, int64_t v0, int n, sk_index_type it,
                                        int64_t kk, int any_scale)
{
    typedef SK_FN(sk_v4) v4;
    SK_T bq[4][8] = {{0}}, sq[4][12] = {{0}};
    unsigned live = 0;
    for (int i = 0; i < n; ++i)
        live |= (unsigned)SK_FN(dqs_blend_row)(job, v0 + i, it, kk, any_scale, bq[i], sq[i]) << i;
    v4 b[8], sb[12];
    for (int q = 0; q < 8; ++q) b[q] = (v4){bq[0][q], bq[1][q], bq[2][q], bq[3][q]};
    for (int q = 0; any_scale && q < 12; ++q) sb[q] = (v4){sq[0][q], sq[1][q], sq[2][q], sq[3][q]};
    const v4 n2 = b[0] * b[0] + b[1] * b[1] + b[2] * b[2] + b[3] * b[3];
    v4 inv;
    for (int i = 0; i < 4; ++i) {
        inv[i] = n2[i] > 0 ? (SK_T)1 / (SK_T)sqrt((double)n2[i]) : 0;
        if (!(n2[i] > 0)) live &= ~(1u << i); /* a zero real part: copied */
    }
    const v4 x = b[0] * inv, y = b[1] * inv, z = b[2] * inv, s = b[3] * inv;
    const v4 one = SK_FN(sk_v4_splat)(1), two = SK_FN(sk_v4_splat)(2);
    const v4 rm[9] = {one - two * (y * y + z * z), two * (x * y - z * s), two * (x * z + y * s),
                      two * (x * y + z * s), one - two * (x * x + z * z), two * (y * z - x * s),
                      two * (x * z - y * s), two * (y * z + x * s), one - two * (x * x + y * y)};
    v4 p[3], p1[3], pos[3], nrm[3], tan[3];
    SK_FN(v4_load3)(p, &job->positions, v0, n);
    if (any_scale) {
        SK_FN(v4_mul33)(p1, sb, 4, p);
        for (int r = 0; r < 3; ++r) p1[r] += sb[4 * r + 3];
    } else {
        for (int r = 0; r < 3; ++r) p1[r] = p[r];
    }
    /* t = 2 (s d - dw r + r x d) of the unit dual quaternion */
    const v4 dx = b[4] * inv, dy = b[5] * inv, dz = b[6] * inv, dw = b[7] * inv;
    const v4 t[3] = {two * (s * dx - dw * x + (y * dz - z * dy)),
                     two * (s * dy - dw * y + (z * dx - x * dz)),
                     two * (s * dz - dw * z + (x * dy - y * dx))};
    SK_FN(v4_mul33)(pos, rm, 3, p1);
    for (int r = 0; r < 3; ++r) pos[r] += t[r];
    if (job->normals.data) {
        v4 nn[3], n1[3];
        SK_FN(v4_load3)(nn, &job->normals, v0, n);
        if (any_scale) { /* sk_cofactor of the blended scale's 3x3 */
            const v4 a00 = sb[0], a01 = sb[1], a02 = sb[2], a10 = sb[4], a11 = sb[5], a12 = sb[6];
            const v4 a20 = sb[8], a21 = sb[9], a22 = sb[10];
            const v4 c[9] = {a11 * a22 - a21 * a12, a12 * a20 - a22 * a10, a10 * a21 - a20 * a11,
                             a21 * a02 - a01 * a22, a22 * a00 - a02 * a20, a20 * a01 - a00 * a21,
                             a01 * a12 - a11 * a02, a02 * a10 - a12 * a00, a00 * a11 - a10 * a01};
            SK_FN(v4_mul33)(n1, c, 3, nn);
        } else {
            for (int r = 0; r < 3; ++r) n1[r] = nn[r];
        }
        SK_FN(v4_mul33)(nrm, rm, 3, n1);
        SK_FN(v4_normalize3)(nrm);
    }
    if (job->tangents.data) {
        v4 m[9], tv[3];
        for (int r = 0; r < 3; ++r) /* R Sb, as sk_dqs_eval */
            for (int c = 0; c < 3; ++c)
                m[3 * r + c] = any_scale ? rm[3 * r] * sb[c] + rm[3 * r + 1] * sb[4 + c] +
                                               rm[3 * r + 2] * sb[8 + c]
                                         : rm[3 * r + c];
        SK_FN(v4_load3)(tv, &job->tangents, v0, n);
        SK_FN(v4_mul33)(tan, m, 3, tv);
        SK_FN(v4_normalize3)(tan);
    }
    for (int i = 0; i < n; ++i) {
        if (!(live >> i & 1)) {
            SK_FN(sk_copy_vertex)(job, v0 + i);
            continue;
        }
        SK_T o[3];
        for (int r = 0; r < 3; ++r) o[r] = pos[r][i];
        SK_FN(sk_store3)(&job->out_positions, v0 + i, o);
        if (job->normals.data) {
            for (int r = 0; r < 3; ++r) o[r] = nrm[r][i];
            SK_FN(sk_store3)(&job->out_normals, v0 + i, o);
        }
        if (job->tangents.data) {
            for (int r = 0; r < 3; ++r) o[r] = tan[r][i];
            SK_FN(sk_store_tangent3)(job, v0 + i, o);
        }
    }
}

/* The portable loop over vertices [begin, end), four at a time (dqs_block4), with the index
 * type, K (4 takes float weights only) and any_scale constants of each instance.  kk: K, or 0
 * for in->k. */
SK_ALWAYS_INLINE void SK_FN(dqs_rows)(const SK_JOB *job, int64_t begin, int64_t end,
                                      sk_index_type it, int64_t kk, int any_scale)
{
    for (int64_t v = begin; v < end; v += 4)
        SK_FN(dqs_block4)(job, v, end - v < 4 ? (int)(end - v) : 4, it, kk, any_scale);
}

/* dqs_rows' instances, each its own function: the index type, K = 4 or any (kk = 0), and
 * any_scale as constants. */
#define SK_DQS_ROWS_FN(name, it, kk, scale)                                                       \
    static void SK_FN(name)(const SK_JOB *job, int64_t begin, int64_t end)                        \
    {                                                                                             \
        SK_FN(dqs_rows)(job, begin, end, it, kk, scale);                                          \
    }
#define SK_DQS_ROWS_SCALE(tag, it, kk)                                                            \
    SK_DQS_ROWS_FN(dqs_rows_##tag##_rigid, it, kk, 0)                                             \
    SK_DQS_ROWS_FN(dqs_rows_##tag##_scale, it, kk, 1)
#define SK_DQS_ROWS_K(tag, it) SK_DQS_ROWS_SCALE(tag##_k4, it, 4) SK_DQS_ROWS_SCALE(tag##_k, it, 0)
SK_DQS_ROWS_K(u8, SK_INDEX_U8)
SK_DQS_ROWS_K(u16, SK_INDEX_U16)
SK_DQS_ROWS_K(u32, SK_INDEX_U32)
SK_DQS_ROWS_K(i32, SK_INDEX_I32)
SK_DQS_ROWS_K(i64, SK_INDEX_I64)
#undef SK_DQS_ROWS_K
#undef SK_DQS_ROWS_SCALE
#undef SK_DQS_ROWS_FN

/* Runs dqs_rows' instance for the job; 0 where the compiler has no vector extensions (the
 * caller goes vertex by vertex). */
static int SK_FN(dqs_portable)(const SK_JOB *job, int64_t begin, int64_t end, int any_scale)
{
    typedef void (*rows_fn)(const SK_JOB *, int64_t, int64_t);
#define SK_DQS_ROWS_ROW(tag)                                                                      \
    {{SK_FN(dqs_rows_##tag##_k4_rigid), SK_FN(dqs_rows_##tag##_k4_scale)},                        \
     {SK_FN(dqs_rows_##tag##_k_rigid), SK_FN(dqs_rows_##tag##_k_scale)}}
    /* [index type][K = 4, any][any_scale] */
    static const rows_fn table[5][2][2] = {SK_DQS_ROWS_ROW(u8), SK_DQS_ROWS_ROW(u16),
                                           SK_DQS_ROWS_ROW(u32), SK_DQS_ROWS_ROW(i32),
                                           SK_DQS_ROWS_ROW(i64)};
#undef SK_DQS_ROWS_ROW
    const sk_influences *in = &job->influences;
    const int any_k = !(in->k == 4 && in->weight_type == SK_WEIGHT_FLOAT);
    table[in->index_type][any_k][any_scale != 0](job, begin, end);
    return 1;
}
#else
static int SK_FN(dqs_portable)(const SK_JOB *job, int64_t begin, int64_t end, int any_scale)
{
    return 0;
}
#endif

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
    if (SK_FN(dqs_portable)(job, begin, end, any_scale)) return;
    for (int64_t v = begin; v < end; ++v) SK_FN(dqs_vertex)(job, v, any_scale);
}
