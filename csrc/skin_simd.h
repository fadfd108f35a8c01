/* skin_simd.h -- internal to the core: the SIMD kernels of skin_avx2.c / skin_avx512.c and the
 * layouts they take.  The public kernels (sk_lbs_f32, ...) call them when the CPU, the build and
 * the job's layout allow it, and fall back to the portable scalar code otherwise. */
#ifndef SK_SKIN_SIMD_H
#define SK_SKIN_SIMD_H

#include "sk.h"

/* A (V, 3) stream the SIMD kernels read and write as whole registers: rows of three packed
 * elements, one after the other (C order).  Absent streams are fine. */
static inline int sk_simd_packed3(const sk_stream *s, ptrdiff_t size)
{
    return !s->data || (s->elem == size && s->row == 3 * size);
}

/* Whether every joint's cofactor is its 3x3 (sk_lbs_cof_is_matrix_f32 / _f64, passed as FN):
 * from the job when its caller checked once per frame, else checked here, once per range.  The
 * SIMD and the portable LBS kernels then blend normals with the matrices. */
#define SK_COF_IS_MATRIX(job, FN)                                                                 \
    ((job)->cof_matrix ? (job)->cof_matrix > 0 : FN((job)->prepared, (job)->n_joints))

/* Vertices [begin, end) of an LBS or rigid-palette DQS job whose layout sk_simd_lbs_ok_* /
 * sk_simd_dqs_ok_* accepted; `prepared` from the matching prepare call. */
void sk_lbs_avx2_f32(const sk_skin_job_f32 *job, int64_t begin, int64_t end);
void sk_lbs_avx2_f64(const sk_skin_job_f64 *job, int64_t begin, int64_t end);
void sk_lbs_avx512_f32(const sk_skin_job_f32 *job, int64_t begin, int64_t end);
void sk_lbs_avx512_f64(const sk_skin_job_f64 *job, int64_t begin, int64_t end);
void sk_rigid_avx2_f32(const sk_skin_job_f32 *job, int64_t begin, int64_t end);
void sk_rigid_avx2_f64(const sk_skin_job_f64 *job, int64_t begin, int64_t end);
void sk_rigid_avx512_f32(const sk_skin_job_f32 *job, int64_t begin, int64_t end);
void sk_rigid_avx512_f64(const sk_skin_job_f64 *job, int64_t begin, int64_t end);
void sk_dqs_avx2_f32(const sk_skin_job_f32 *job, int64_t begin, int64_t end);
void sk_dqs_avx512_f32(const sk_skin_job_f32 *job, int64_t begin, int64_t end);
void sk_dqs_avx2_f64(const sk_skin_job_f64 *job, int64_t begin, int64_t end);
void sk_dqs_avx512_f64(const sk_skin_job_f64 *job, int64_t begin, int64_t end);
/* CoR (skin_cor.c) of a rigid palette without tangents; `prepared` from sk_cor_prepare_*,
 * centers validated. */
void sk_cor_avx2_f32(const sk_skin_job_f32 *job, int64_t begin, int64_t end);
void sk_cor_avx512_f32(const sk_skin_job_f32 *job, int64_t begin, int64_t end);
void sk_cor_avx2_f64(const sk_skin_job_f64 *job, int64_t begin, int64_t end);
void sk_cor_avx512_f64(const sk_skin_job_f64 *job, int64_t begin, int64_t end);

/* A SIMD kernel where this build has it, else NULL (for sk_simd_run_* of skin_common). */
#ifdef SK_BUILD_AVX2
#define SK_WITH_AVX2(fn) (fn)
#else
#define SK_WITH_AVX2(fn) NULL
#endif
#ifdef SK_BUILD_AVX512
#define SK_WITH_AVX512(fn) (fn)
#else
#define SK_WITH_AVX512(fn) NULL
#endif

/* The validation pass's fast loop (skin_anybad.template.h) compiled for AVX2 / AVX-512. */
int sk_any_bad_avx2_f32(const void *ip, sk_index_type it, const float *wp, int64_t n, int64_t n_joints);
int sk_any_bad_avx2_f64(const void *ip, sk_index_type it, const double *wp, int64_t n, int64_t n_joints);
int sk_any_bad_avx512_f32(const void *ip, sk_index_type it, const float *wp, int64_t n, int64_t n_joints);
int sk_any_bad_avx512_f64(const void *ip, sk_index_type it, const double *wp, int64_t n, int64_t n_joints);

/* The rigid indices' fast check (skin_rigidbad.template.h) compiled for AVX2 / AVX-512. */
int sk_rigid_any_bad_avx2(const void *p, sk_index_type it, int64_t n, int64_t n_joints);
int sk_rigid_any_bad_avx512(const void *p, sk_index_type it, int64_t n, int64_t n_joints);

/* DQS's hemisphere signs (skin_signs.template.h) compiled for AVX2 / AVX-512. */
int sk_dqs_signs_avx2_f32(float *sign, uint64_t *bits, const float *quats, ptrdiff_t stride,
                           int64_t n_joints);
int sk_dqs_signs_avx2_f64(float *sign, uint64_t *bits, const double *quats, ptrdiff_t stride,
                           int64_t n_joints);
int sk_dqs_signs_avx512_f32(float *sign, uint64_t *bits, const float *quats, ptrdiff_t stride,
                           int64_t n_joints);
int sk_dqs_signs_avx512_f64(float *sign, uint64_t *bits, const double *quats, ptrdiff_t stride,
                           int64_t n_joints);

#endif
