/* skin_signs.template.h -- DQS's (J, J) table of hemisphere signs (sk_dqs_signs_*, sk.h): the
 * quaternions' components as four rows of J, so that the compiler vectorizes the loop over j
 * with the widest registers it has; skin_dqs.c compiles it for the portable path, skin_avx2.c
 * and skin_avx512.c for wider registers.  Every lane takes the same products and sums in the same
 * order as the scalar kernel's dot product, so every version gives the same signs (a strided
 * scalar loop took about 40% of a DQS call's fixed cost with J = 64).  The build turns off
 * contraction (CMakeLists.txt): Clang would otherwise fuse the sums into multiply-adds in the
 * AVX files only.
 *
 * Included with SK_T (float or double), SK_SIGNS_NAME (the function's name) and
 * SK_SIGNS_LINKAGE (static, or empty) defined, and SK_SIGNS_BITS with dqs_sign_bits in the SIMD
 * files (skin_simd.template.c), which return the table's bits too.  n_joints <=
 * SK_DQS_SIGN_MAX_J. */

SK_SIGNS_LINKAGE int SK_SIGNS_NAME(float *sign, uint64_t *bits, const SK_T *quats,
                                   ptrdiff_t stride, int64_t n_joints)
{
    SK_T c[4][SK_DQS_SIGN_MAX_J];
    for (int64_t j = 0; j < n_joints; ++j)
        for (int i = 0; i < 4; ++i) c[i][j] = quats[stride * j + i];
    for (int64_t p = 0; p < n_joints; ++p) {
        const SK_T a = c[0][p], b = c[1][p], e = c[2][p], d = c[3][p];
        float *row = sign + p * n_joints;
        for (int64_t j = 0; j < n_joints; ++j) {
            const SK_T dot = a * c[0][j] + b * c[1][j] + e * c[2][j] + d * c[3][j];
            row[j] = dot < 0 ? -1.0f : 1.0f;
        }
    }
#ifdef SK_SIGNS_BITS /* (the SIMD kernels read them as bits: dqs_sign_bits) */
    if (bits) {
        dqs_sign_bits(bits, sign, n_joints);
        return 1;
    }
#else
    (void)bits;
#endif
    return 0;
}
