/* cor_centers_avx2.c -- the inner loop of the centers of rotation precompute (cor_centers.c)
 * with AVX2 + FMA: four samples of a joint-pair group at a time, with an inline exp().
 *
 * Compiled with -mavx2 -mfma (CMakeLists.txt) and called only when the CPU runs the AVX2 or
 * AVX-512 path (sk_simd_current()), so the rest of the core stays plain x86-64.  The result
 * differs from the scalar path's by rounding only (this exp() is within 1 ulp of libm's); on
 * one path it never depends on threads or ranges. */
#include <immintrin.h>
#include <stdint.h>

/* exp(x) for x <= 0, four at a time: x = k ln2 + r with |r| <= ln2 / 2 (Cody-Waite), exp(r) by
 * its Taylor polynomial of degree 13 (truncation below 1e-17 relative), times 2^k built in the
 * exponent bits as 2^(k1) 2^(k - k1), k1 = floor(k / 2), so that results down in the subnormal
 * range round as exp() does and anything below underflows to 0. */
static inline __m256d exp_neg(__m256d x)
{
    const __m256d shift = _mm256_set1_pd(6755399441055744.0); /* 1.5 * 2^52: rounds */
    const __m256i shift_bits = _mm256_castpd_si256(shift), bias = _mm256_set1_epi64x(1023);
    x = _mm256_max_pd(x, _mm256_set1_pd(-746.0));
    __m256d k = _mm256_sub_pd(_mm256_fmadd_pd(x, _mm256_set1_pd(1.4426950408889634), shift),
                              shift);
    __m256d r = _mm256_fnmadd_pd(k, _mm256_set1_pd(6.93147180369123816490e-01), x);
    r = _mm256_fnmadd_pd(k, _mm256_set1_pd(1.90821492927058770002e-10), r);
    static const double c[14] = {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0,
                                 1.0 / 3628800.0,    1.0 / 362880.0,    1.0 / 40320.0,
                                 1.0 / 5040.0,       1.0 / 720.0,       1.0 / 120.0,
                                 1.0 / 24.0,         1.0 / 6.0,         0.5,
                                 1.0,                1.0};
    __m256d p = _mm256_set1_pd(c[0]);
    for (int i = 1; i < 14; ++i) p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(c[i]));
    __m256d k1 = _mm256_round_pd(_mm256_mul_pd(k, _mm256_set1_pd(0.5)),
                                 _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m256d k2 = _mm256_sub_pd(k, k1);
    __m256i b1 = _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(k1, shift)), shift_bits);
    __m256i b2 = _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(k2, shift)), shift_bits);
    __m256d s1 = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(b1, bias), 52));
    __m256d s2 = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(b2, bias), 52));
    return _mm256_mul_pd(_mm256_mul_pd(p, s1), s2);
}

/* sum = (sum a, sum a px, sum a py, sum a pz) over entries [e0, e1) of a group, with
 * a = wa exp(-(wr wk - ws wj)^2 inv_s2): the same sums as cor_group_sums in cor_centers.c, lane
 * q taking entries e0 + q, e0 + q + 4, ..., the lanes added (0 + 1) + (2 + 3). */
void sk_centers_group_sums_avx2(const double *wj, const double *wk, const double *wa,
                                const double *px, const double *py, const double *pz,
                                int64_t e0, int64_t e1, double wr, double ws, double inv_s2,
                                double sum[4])
{
    const __m256d vr = _mm256_set1_pd(wr), vs = _mm256_set1_pd(ws);
    const __m256d vn = _mm256_set1_pd(-inv_s2);
    __m256d den = _mm256_setzero_pd(), nx = den, ny = den, nz = den;
    int64_t e = e0;
    for (;; e += 4) {
        __m256d j, k, w, x, y, z;
        if (e + 4 <= e1) {
            j = _mm256_loadu_pd(wj + e);
            k = _mm256_loadu_pd(wk + e);
            w = _mm256_loadu_pd(wa + e);
            x = _mm256_loadu_pd(px + e);
            y = _mm256_loadu_pd(py + e);
            z = _mm256_loadu_pd(pz + e);
        } else if (e < e1) {
            /* the tail: absent lanes load 0, so their a = 0 * exp(0) adds nothing */
            int64_t n = e1 - e;
            __m256i m = _mm256_set_epi64x(n > 3 ? -1 : 0, n > 2 ? -1 : 0, n > 1 ? -1 : 0, -1);
            j = _mm256_maskload_pd(wj + e, m);
            k = _mm256_maskload_pd(wk + e, m);
            w = _mm256_maskload_pd(wa + e, m);
            x = _mm256_maskload_pd(px + e, m);
            y = _mm256_maskload_pd(py + e, m);
            z = _mm256_maskload_pd(pz + e, m);
        } else {
            break;
        }
        __m256d d = _mm256_fmsub_pd(vr, k, _mm256_mul_pd(vs, j));
        __m256d a = _mm256_mul_pd(w, exp_neg(_mm256_mul_pd(_mm256_mul_pd(d, d), vn)));
        den = _mm256_add_pd(den, a);
        nx = _mm256_fmadd_pd(a, x, nx);
        ny = _mm256_fmadd_pd(a, y, ny);
        nz = _mm256_fmadd_pd(a, z, nz);
    }
    __m256d v[4] = {den, nx, ny, nz};
    for (int i = 0; i < 4; ++i) {
        double l[4];
        _mm256_storeu_pd(l, v[i]);
        sum[i] = (l[0] + l[1]) + (l[2] + l[3]);
    }
}
