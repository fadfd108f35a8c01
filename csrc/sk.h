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
 * Skinning kernels (skin_rigid.c, skin_lbs.c, skin_dqs.c, parallel.c)
 *
 * Vertex streams.  A stream is a (V, n) view: element (v, i) lives at
 *     (char *)data + v * row + i * elem
 * with signed byte strides, so C order, Fortran order, a `buf[:, 0:3]` view of an interleaved
 * vertex buffer and reversed views are all read (and written) in place.  data == NULL means
 * "absent" for optional streams.  Streams are aligned for their element type.
 *
 * Influences: fixed K per vertex; indices of one of sk_index_type, weights of the kernel's float
 * type or unorm8 / unorm16 (w / 255, w / 65535).  The index of a zero weight is never read.
 *
 * Palettes are compact and contiguous: (J, 3, 4) of the kernel's float type.
 *
 * A kernel call computes vertices [begin, end) and writes only those rows of its outputs; every
 * vertex is computed by the same operations whatever the range, so splitting V over threads never
 * changes a bit.  Kernels assume validated influences (sk_validate_influences_*, or an Influences
 * object validated once); an index outside [0, J) that slips through is read as joint 0, never
 * out of bounds.  An output may be the very same memory as its input (in-place), nothing else.
 * ---------------------------------------------------------------------------------------- */

typedef struct sk_stream {
    void *data;     /* first element, or NULL when absent */
    ptrdiff_t row;  /* bytes between vertices */
    ptrdiff_t elem; /* bytes between the components of one vertex */
} sk_stream;

typedef enum sk_index_type {
    SK_INDEX_U8 = 0, SK_INDEX_U16, SK_INDEX_U32, SK_INDEX_I32, SK_INDEX_I64
} sk_index_type;

typedef enum sk_weight_type {
    SK_WEIGHT_FLOAT = 0, /* the kernel's own float type (float for *_f32, double for *_f64) */
    SK_WEIGHT_UNORM8,
    SK_WEIGHT_UNORM16
} sk_weight_type;

typedef struct sk_influences {
    sk_stream indices;       /* (V, K) */
    sk_index_type index_type;
    sk_stream weights;       /* (V, K) */
    sk_weight_type weight_type;
    int64_t k;               /* K >= 1 */
} sk_influences;

typedef enum sk_normal_rule {
    SK_NORMALS_JOINT = 0, /* normalize(sum w_i cof(A_i) n) */
    SK_NORMALS_BLEND = 1  /* normalize(cof(sum w_i A_i) n) */
} sk_normal_rule;

/* Read-only validation of raw influences over vertices [0, V): finite, non-negative weights and,
 * where the weight is non-zero, an index in [0, n_joints).  *bad = the first bad vertex;
 * SK_ERR_NOT_FINITE, SK_ERR_NEGATIVE_WEIGHT or SK_ERR_INDEX_RANGE. */
sk_result sk_validate_influences_f32(const sk_influences *infl, int64_t n_vertices,
                                     int64_t n_joints, int64_t *bad);
sk_result sk_validate_influences_f64(const sk_influences *infl, int64_t n_vertices,
                                     int64_t n_joints, int64_t *bad);

/* Read-only validation of rigid indices (V entries of a (V,) or (V, 1) stream): each index is
 * negative (not skinned; signed types) or in [0, n_joints).  SK_ERR_INDEX_RANGE, *bad = vertex. */
sk_result sk_validate_rigid_indices(const sk_stream *indices, sk_index_type type,
                                    int64_t n_vertices, int64_t n_joints, int64_t *bad);

/* One frame of work for a kernel.  Optional streams have data == NULL; an output stream is
 * given exactly when its input is. */
typedef struct sk_skin_job_f32 {
    sk_stream out_positions, positions;   /* (V, 3) */
    sk_stream out_normals, normals;       /* (V, 3), optional */
    sk_stream out_tangents, tangents;     /* (V, 4), optional; w (handedness) is copied */
    sk_influences influences;             /* LBS / DQS */
    sk_stream rigid_indices;              /* rigid: (V,) */
    sk_index_type rigid_index_type;
    const float *prepared;                /* from sk_*_prepare_f32, J * sk_*_prepared_size */
    int64_t n_joints;
    sk_normal_rule normal_rule;           /* LBS only */
} sk_skin_job_f32;

typedef struct sk_skin_job_f64 {
    sk_stream out_positions, positions;
    sk_stream out_normals, normals;
    sk_stream out_tangents, tangents;
    sk_influences influences;
    sk_stream rigid_indices;
    sk_index_type rigid_index_type;
    const double *prepared;
    int64_t n_joints;
    sk_normal_rule normal_rule;
} sk_skin_job_f64;

/* Per-frame joint data.  sk_lbs_prepare: each joint's 3x4 and its 3x3 cofactor (rigid and LBS
 * share it).  sk_dqs_prepare: each joint's unit dual quaternion of the rigid part and the
 * scale-about-pivot affine (DESIGN.md section 2); `pivots` (J, 3) may be NULL only for a rigid
 * palette (SK_ERR_NEEDS_PIVOTS otherwise).  *bad = the joint; SK_ERR_NOT_FINITE for NaN/inf. */
#define SK_LBS_PREPARED_SIZE 21 /* 12 (3x4) + 9 (cofactor) per joint */
#define SK_DQS_PREPARED_SIZE 21 /* 8 (dual quaternion) + 12 (scale affine) + 1 (has scale) */
sk_result sk_lbs_prepare_f32(float *prepared, const float *palette, int64_t n_joints, int64_t *bad);
sk_result sk_lbs_prepare_f64(double *prepared, const double *palette, int64_t n_joints, int64_t *bad);
sk_result sk_dqs_prepare_f32(float *prepared, const float *palette, const float *pivots,
                             int64_t n_joints, int64_t *bad);
sk_result sk_dqs_prepare_f64(double *prepared, const double *palette, const double *pivots,
                             int64_t n_joints, int64_t *bad);

/* The kernels, over vertices [begin, end) of one frame (job->prepared from the matching
 * prepare).  A vertex whose weights sum to <= 1e-6 (rigid: a negative index) is copied. */
void sk_rigid_f32(const sk_skin_job_f32 *job, int64_t begin, int64_t end);
void sk_rigid_f64(const sk_skin_job_f64 *job, int64_t begin, int64_t end);
void sk_lbs_f32(const sk_skin_job_f32 *job, int64_t begin, int64_t end);
void sk_lbs_f64(const sk_skin_job_f64 *job, int64_t begin, int64_t end);
void sk_dqs_f32(const sk_skin_job_f32 *job, int64_t begin, int64_t end);
void sk_dqs_f64(const sk_skin_job_f64 *job, int64_t begin, int64_t end);

/* Runs fn(ctx, begin, end) over [0, n) split into `n_threads` contiguous ranges whose bounds are
 * multiples of `grain` (the calling thread takes the first); serial when threads are not
 * available or n_threads <= 1.  Returns the number of threads used. */
int sk_parallel_for(int n_threads, int64_t n, int64_t grain,
                    void (*fn)(void *ctx, int64_t begin, int64_t end), void *ctx);

/* === kernels: end === */

/* ------------------------------------------------------------------------------------------
 * Binding and weight tools (bind.c)
 * ---------------------------------------------------------------------------------------- */

/* === bind: end === */

#ifdef __cplusplus
}
#endif
#endif /* SK_H */
