/*
 * sk.h -- the skinkit C core: the whole public contract in one header.
 *
 * Conventions (DESIGN.md section 1):
 *   - column vectors: p' = M @ [x, y, z, 1]; matrices are row-major.
 *   - a transform is stored either as a full 4x4 (16 numbers) or as a compact 3x4 affine
 *     (12 numbers, the last row [0 0 0 1] implied); `rows` (3 or 4) says which.  A 4x4 output
 *     gets its last row written as [0 0 0 1].
 *   - joints are stored parents first: parents[j] < j, -1 for a root.
 *   - joint-sized arrays are small and contiguous; vertex-sized streams carry signed byte
 *     strides (row stride, element stride) so interleaved buffers and reversed views work.
 *
 * Errors: every function returns an sk_result; on failure `*bad` (when not NULL) receives the
 * index of the first offending item (joint, vertex or frame) and nothing has been written to
 * the outputs unless the function says otherwise.  The core never prints, aborts, exits or
 * allocates; functions that need scratch memory take it from the caller.
 *
 * float and double variants come from one template (`*_f32`, `*_f64`); the skeleton functions
 * compute in double whatever the storage type.
 */
#ifndef SK_H
#define SK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sk_result {
    SK_OK = 0,
    SK_ERR_BAD_PARENT,       /* parents[j] is not -1 and not in [0, j) */
    SK_ERR_NOT_FINITE,       /* NaN or inf in a matrix or weight */
    SK_ERR_SINGULAR,         /* a bind matrix cannot be inverted */
    SK_ERR_INDEX_RANGE,      /* a joint index with non-zero weight is outside [0, J) */
    SK_ERR_NEGATIVE_WEIGHT,  /* a weight below zero */
    SK_ERR_NEEDS_PIVOTS,     /* DQS: the palette has scale or shear and no pivots were given */
    SK_ERR_BAD_ARGUMENT,     /* a size or option outside its documented range */
    SK_ERR_COUNT
} sk_result;

/* A short English description of a result code ("ok", "joint index out of range", ...). */
const char *sk_result_string(sk_result r);

/* ------------------------------------------------------------------------------------------
 * Skeleton (skeleton.c)
 * ---------------------------------------------------------------------------------------- */

/* Checks that parents[j] == -1 or 0 <= parents[j] < j for every joint.
 * SK_ERR_BAD_PARENT with *bad = the first offending joint otherwise. */
sk_result sk_validate_parents(const int64_t *parents, int64_t n_joints, int64_t *bad);

/* Forward kinematics: globals[f, j] = globals[f, parents[j]] @ locals[f, j], and for a root
 * globals[f, j] = root[f] @ locals[f, j].
 *   globals     out, (F, J, rows, 4)
 *   locals      (F, J, rows, 4) when locals_per_frame, else (J, rows, 4) shared by all frames
 *   parents     (J,), validated here (SK_ERR_BAD_PARENT)
 *   root        NULL (identity), or (R, 3, 4) double with R = 1 (shared) or R = F (per frame)
 *   rows        3 or 4, for both locals and globals
 *   scratch     12 * J doubles of caller memory (the globals of one frame, in double)
 * May not alias. */
sk_result sk_fk_f32(float *globals, const float *locals, int locals_per_frame,
                    const int64_t *parents, int64_t n_joints, int64_t n_frames,
                    const double *root, int root_per_frame, int rows, double *scratch,
                    int64_t *bad);
sk_result sk_fk_f64(double *globals, const double *locals, int locals_per_frame,
                    const int64_t *parents, int64_t n_joints, int64_t n_frames,
                    const double *root, int root_per_frame, int rows, double *scratch,
                    int64_t *bad);

/* Inverse bind matrices: inverse_bind[j] = inv(bind_globals[j]), (J, rows, 4) both.
 * Matrices whose 3x3 is orthonormal (to 1e-6) take the rigid path (transpose); others the
 * general affine inverse.  SK_ERR_SINGULAR when |det| <= 1e-12 * (largest column norm)^3,
 * SK_ERR_NOT_FINITE for NaN/inf; *bad = the joint. */
sk_result sk_inverse_bind_f32(float *inverse_bind, const float *bind_globals,
                              int64_t n_joints, int rows, int64_t *bad);
sk_result sk_inverse_bind_f64(double *inverse_bind, const double *bind_globals,
                              int64_t n_joints, int rows, int64_t *bad);

/* Bind positions (pivots): pivots[j] = translation of inv(inverse_bind[j]), (J, 3).
 * Same errors as sk_inverse_bind_*. */
sk_result sk_pivots_f32(float *pivots, const float *inverse_bind, int64_t n_joints, int rows,
                        int64_t *bad);
sk_result sk_pivots_f64(double *pivots, const double *inverse_bind, int64_t n_joints, int rows,
                        int64_t *bad);

/* Skinning palettes: palette[f, j] = pre @ globals[f, j] @ inverse_bind[j] @ post.
 *   palette, globals   (F, J, rows, 4)
 *   inverse_bind       (J, rows, 4)
 *   pre, post          NULL (identity) or a (3, 4) double affine: pre = inv(base),
 *                      post = bind_shape (DESIGN.md section 1). */
sk_result sk_palette_f32(float *palette, const float *globals, const float *inverse_bind,
                         int64_t n_joints, int64_t n_frames, const double *pre,
                         const double *post, int rows);
sk_result sk_palette_f64(double *palette, const double *globals, const double *inverse_bind,
                         int64_t n_joints, int64_t n_frames, const double *pre,
                         const double *post, int rows);

/* ------------------------------------------------------------------------------------------
 * Skinning kernels (skin_rigid.c, skin_lbs.c, skin_dqs.c)
 * ---------------------------------------------------------------------------------------- */

/* === kernels: end === */

/* ------------------------------------------------------------------------------------------
 * Binding and weight tools (bind.c)
 * ---------------------------------------------------------------------------------------- */

/* === bind: end === */

#ifdef __cplusplus
}
#endif
#endif /* SK_H */
