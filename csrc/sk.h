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

/* Internal: a helper the compiler must inline, so that its constant arguments (index type, K)
 * fold into each caller's own loop. */
#if defined(__GNUC__) || defined(__clang__)
#define SK_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define SK_ALWAYS_INLINE static inline
#endif

/* Internal: ask for the cache line at p ahead of its read (a no-op where the compiler has no
 * portable prefetch). */
#if defined(__GNUC__) || defined(__clang__)
#define SK_PREFETCH(p) __builtin_prefetch((p), 0, 3)
#else
#define SK_PREFETCH(p) ((void)(p))
#endif

/* Internal: GCC's and Clang's vector extensions (sk_v4_f32 / sk_v4_f64 in
 * skin_common.template.h), which give the portable kernels SSE2 or NEON registers on any
 * target without intrinsics; other compilers take the plain per-vertex code. */
#if defined(__GNUC__) || defined(__clang__)
#define SK_HAVE_VEC4 1
#endif

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
    SK_ERR_TOO_LARGE,        /* binding: a coordinate beyond SK_BIND_MAX_COORD */
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
 * Matrices whose 3x3 is orthonormal to rounding (64 eps) take the rigid path (transpose);
 * others the general affine inverse.  SK_ERR_SINGULAR when
 * |det| <= 1e-12 * (largest column norm)^3, SK_ERR_NOT_FINITE for NaN/inf; *bad = the joint. */
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
 * Palettes are compact and contiguous: (J, 3, 4) of the kernel's float type, J >= 1 (an index
 * that escaped validation is read as joint 0, which must exist).
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
    sk_normal_rule normal_rule;           /* LBS, and the LBS parts of CoR / blend */
    sk_stream centers;                    /* CoR: (V, 3), a NaN row = no center (plain LBS) */
    sk_stream blend;                      /* blend: (V,) in [0, 1]; row = 0 for one value */
    int stream;                           /* write outputs with non-temporal stores: set for a
                                           * call bigger than the caches (SK_STREAM_MIN), not
                                           * per range, so that chunk sizes do not matter */
    const float *dqs_sign;                /* DQS, CoR, blend with J <= SK_DQS_SIGN_MAX_J:
                                           * sk_dqs_signs_f32 of the joints' quaternions,
                                           * computed once per frame; NULL: the SIMD kernels
                                           * compute it for each range they get */
    const uint64_t *dqs_sign_bits;        /* with dqs_sign, where the SIMD path reads them (the
                                           * return of sk_dqs_signs_f32): bit j of word p set
                                           * where dqs_sign[p J + j] < 0; NULL: made from
                                           * dqs_sign for each range that needs them */
    int cof_matrix;                       /* LBS normals: 1 when every joint's cofactor is its
                                           * 3x3 (sk_lbs_cof_is_matrix), so that the SIMD
                                           * kernels blend normals with the matrices; -1 when
                                           * not; 0: they check for each range they get */
    const float *lbs_table;               /* LBS with J <= SK_LBS_TABLE_MAX_J: sk_lbs_table_f32's
                                           * table of `prepared`, made once per frame where it
                                           * returned 1; NULL: the kernels read the rows */
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
    sk_stream centers;
    sk_stream blend;
    int stream;
    const float *dqs_sign; /* sk_dqs_signs_f64 (float +-1: a double weight times it is exact) */
    const uint64_t *dqs_sign_bits; /* as in sk_skin_job_f32 */
    int cof_matrix;        /* as in sk_skin_job_f32 (sk_lbs_cof_is_matrix_f64) */
} sk_skin_job_f64;

/* Calls of at least this many vertices set sk_skin_job.stream: their SIMD kernels write
 * outputs with non-temporal stores where aligned, which skips the write-allocate read (a third
 * of the traffic) once the call's arrays (72 bytes a vertex for float32 LBS with normals, 9.4 MB
 * here) no longer stay in the last-level cache from call to call.  Smaller outputs stay in cache
 * for whoever reads them next.  On the development machine (32 MB L3), float32 LBS with normals
 * at 10k-200k vertices took 5-13% less time with cached stores than with non-temporal ones, and
 * 33-42% more at 300k and 1M; DQS, compute-bound, differs by 1%, positions only not at all.
 * (The threshold was 8192 until measured on a machine with faster memory.) */
#ifndef SK_STREAM_MIN
#define SK_STREAM_MIN 131072
#endif
/* The same for float64, whose LBS is limited by its arithmetic for longer: at 100k vertices
 * non-temporal stores cost it 4% (packing four rows into three registers for aligned stores),
 * at 300k they break even, at 1M they save 8% (on the development machine). */
#ifndef SK_STREAM_MIN_F64
#define SK_STREAM_MIN_F64 262144
#endif

/* Per-frame joint data.  sk_lbs_prepare: each joint's 3x4 and its 3x3 cofactor (rigid and LBS
 * share it), column-major with every column padded to 4 so that SIMD kernels load a joint as
 * whole registers: prepared[32 j + 4 c + r] = K[r][c] (c = 3: the translation), then
 * prepared[32 j + 16 + 4 c + r] = cof(A)[r][c], padding 0 but prepared[32 j + 15] = 1 (the
 * 4x4's corner, so that lane 15 of a blend of rows is the sum of its weights; kernels ignore
 * the 4th row otherwise).  sk_dqs_prepare: each joint's unit dual quaternion of the rigid part
 * and the scale-about-pivot affine (DESIGN.md section 2);
 * `pivots` (J, 3) may be NULL only for a rigid palette (SK_ERR_NEEDS_PIVOTS otherwise).  *bad =
 * the joint; SK_ERR_NOT_FINITE for NaN/inf.  Any alignment works; 64 bytes is fastest. */
#define SK_LBS_PREPARED_SIZE 32 /* 16 (3x4, column-major, padded) + 16 (cofactor, padded) */
#define SK_DQS_PREPARED_SIZE 21 /* 8 (dual quaternion) + 12 (scale affine) + 1 (has scale) */
sk_result sk_lbs_prepare_f32(float *prepared, const float *palette, int64_t n_joints, int64_t *bad);
sk_result sk_lbs_prepare_f64(double *prepared, const double *palette, int64_t n_joints, int64_t *bad);
/* float32 LBS's joints by entries for small palettes: entry e = 3 c + r (K[r][c] of the 3x4,
 * c = 3 the translation) of joint j at table[SK_LBS_TABLE_MAX_J * e + j], zero for j >= J; 12
 * SK_LBS_TABLE_MAX_J floats, 64-byte aligned.  The AVX-512 kernel looks up a block's vertices'
 * joints in it with a permute per entry and slot rather than loading each vertex's rows
 * (0.77-0.83x the time on Zen 5, the same bits).  Made from sk_lbs_prepare_f32's `prepared`,
 * and 1 returned, only where the SIMD path in use reads it (AVX-512, 1 <= J <=
 * SK_LBS_TABLE_MAX_J); else 0, the table left alone. */
#define SK_LBS_TABLE_MAX_J 32
/* The binding makes the table for calls of at least this many vertices: making it takes about
 * 0.1 us, a vertex by lookups saves about 0.35 ns. */
#ifndef SK_LBS_TABLE_MIN_V
#define SK_LBS_TABLE_MIN_V 512
#endif
int sk_lbs_table_f32(float *table, const float *prepared, int64_t n_joints);
/* Whether every joint's cofactor equals its 3x3 to within SK_COF_TOL_F32 / _F64 (a rotation:
 * cof(R) = R), in sk_lbs_prepare's table.  Then normals can be blended with the matrices
 * themselves, which halves the blending work; the difference is rounding (a few ulps), far
 * inside the kernels' tolerance.  float32: two units in the last place of 1.  float64: 1e-13,
 * since a float64 rotation's cofactors, computed from its rounded entries, are off by several
 * units in the last place (7.8e-16 for the benchmark's palette); blending normals with the
 * matrix then moves them by about 1e-13, far inside float64's 1e-12. */
#define SK_COF_TOL_F32 2.4e-7f
#define SK_COF_TOL_F64 1e-13
int sk_lbs_cof_is_matrix_f32(const float *prepared, int64_t n_joints);
int sk_lbs_cof_is_matrix_f64(const double *prepared, int64_t n_joints);
/* DQS's hemisphere signs for small J: sign[p J + j] = -1 when joint j's rotation must flip to
 * join pivot p's hemisphere (the scalar kernel's dot product test, in the kernel's type), else
 * 1; J <= 64.  `quats`: joint 0's real quaternion (x, y, z, w) in a table of `stride` elements
 * per joint (sk_dqs_prepare's or sk_cor_prepare's).  With `bits` (J words) not NULL, the SIMD
 * path in use that reads the signs as bits (AVX-512) writes them there too, bit j of word p set
 * where sign[p J + j] < 0, and 1 is returned (a kernel's range then need not make them: with
 * J = 64 they took about 0.35 us a range, 5 us of each thread's 16 chunks in a 2-thread
 * 100k-vertex DQS call, and a range's set-up 0.14 us since); 0 otherwise. */
#define SK_DQS_SIGN_MAX_J 64
int sk_dqs_signs_f32(float *sign, uint64_t *bits, const float *quats, ptrdiff_t stride,
                     int64_t n_joints);
int sk_dqs_signs_f64(float *sign, uint64_t *bits, const double *quats, ptrdiff_t stride,
                     int64_t n_joints);
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

/* Runs fn(ctx, begin, end) over [0, n) on `n_threads` threads (the calling one included): the
 * range is cut into a few chunks per thread whose bounds are multiples of `grain`, and each
 * thread takes the next chunk until none is left, so a thread without a free core delays no
 * one.  Serial (one call over [0, n)) when threads are not available or n_threads <= 1.
 * Returns the number of threads used. */
int sk_parallel_for(int n_threads, int64_t n, int64_t grain,
                    void (*fn)(void *ctx, int64_t begin, int64_t end), void *ctx);

/* SIMD dispatch (cpu.c).  The kernels above pick, per call, the fastest code for the CPU they
 * run on: AVX-512 (F, DQ, BW, VL), AVX2 + FMA, or portable scalar C.  The SIMD paths take LBS
 * with any strides (packed (V, 3) rows fastest), any index type, float or unorm weights, any K,
 * the "joint" normal rule and no tangents, rigid skinning without tangents, and DQS and CoR
 * (float32 and float64) with a rigid palette and no tangents; anything else (tangents, the
 * "blend" rule, scaled DQS / CoR palettes) takes the scalar path.  Results differ between paths
 * only by rounding (FMA contraction, summation order, normals blended with the matrices
 * themselves when every cofactor equals its 3x3 to within SK_COF_TOL_*), never between thread
 * counts, ranges or memory layouts on one path. */
typedef enum sk_simd {
    SK_SIMD_SCALAR = 0,
    SK_SIMD_AVX2 = 1,   /* AVX2 + FMA */
    SK_SIMD_AVX512 = 2  /* AVX-512 F, DQ, BW, VL */
} sk_simd;

/* The best path that both this build and this CPU (and its OS) support. */
sk_simd sk_simd_best(void);
/* The path kernels use now: sk_simd_best() until sk_simd_select() changes it. */
sk_simd sk_simd_current(void);
/* Whether this build has `path`'s kernels (CMake's SKINKIT_SIMD_BUILD: all, native or none). */
int sk_simd_built(sk_simd path);
/* Whether this build and this CPU can run `path`. */
int sk_simd_supported(sk_simd path);
/* Use `path` from now on.  SK_ERR_BAD_ARGUMENT, nothing changed, when the build or the CPU lacks
 * it.  Process-wide; not to be called while kernels run (tests, benchmarks, SKINKIT_SIMD). */
sk_result sk_simd_select(sk_simd path);
/* "scalar", "avx2", "avx512" ("?" for anything else). */
const char *sk_simd_name(sk_simd path);

/* === kernels: end === */

/* ------------------------------------------------------------------------------------------
 * Centers-of-rotation and LBS<->DQS blend skinning (skin_cor.c)
 *
 * CoR (Le & Hodgins 2016) with DQS's two-phase scale split (DESIGN.md section 2): per vertex
 * with center c, the scale parts blend with w / sum w into Sb (identity for a rigid palette),
 * the rigid parts' quaternions blend in the pivot influence's hemisphere into R, and
 *     p' = R (Sb p - Sb c) + sum w_i Rigid_i(Sb c)        (rigid palette: R (p - c) + LBS(c))
 * normals normalize(R cof(Sb) n), tangents normalize(R Sb t).  A NaN center row gives that
 * vertex's LBS (positions, normals and tangents, with the job's normal rule).
 * Blend: p' = (1 - b) LBS(p) + b DQS(p) with b = job->blend[v]; normals and tangents
 * normalize((1 - b) x_lbs + b x_dqs).  Both copy a vertex whose weights sum to <= 1e-6.
 * ---------------------------------------------------------------------------------------- */

/* Per joint: the LBS block (32, sk_lbs_prepare's layout), the DQS block (21, sk_dqs_prepare's)
 * and the rigid part's row-major 3x4 (12, computed in double; the 3x4 itself for a joint
 * without scale), padded to 68.  Same errors as sk_dqs_prepare (pivots needed for a palette
 * with scale); nothing written on failure. */
#define SK_COR_PREPARED_SIZE 68
#define SK_COR_LBS 0
#define SK_COR_DQS 32
#define SK_COR_RIGID 53
sk_result sk_cor_prepare_f32(float *prepared, const float *palette, const float *pivots,
                             int64_t n_joints, int64_t *bad);
sk_result sk_cor_prepare_f64(double *prepared, const double *palette, const double *pivots,
                             int64_t n_joints, int64_t *bad);

/* Read-only checks over [0, V): each center row all finite or all NaN (SK_ERR_NOT_FINITE
 * otherwise: inf, or a row mixing NaN and numbers); each blend value in [0, 1]
 * (SK_ERR_BAD_ARGUMENT for NaN or out of range; a stream with row == 0 is one value).
 * *bad = the vertex. */
sk_result sk_validate_centers_f32(const sk_stream *centers, int64_t n_vertices, int64_t *bad);
sk_result sk_validate_centers_f64(const sk_stream *centers, int64_t n_vertices, int64_t *bad);
sk_result sk_validate_blend_f32(const sk_stream *blend, int64_t n_vertices, int64_t *bad);
sk_result sk_validate_blend_f64(const sk_stream *blend, int64_t n_vertices, int64_t *bad);

/* The kernels over vertices [begin, end), job->prepared from sk_cor_prepare_*; sk_cor reads
 * job->centers, sk_blend job->blend.  On a SIMD path, sk_cor of a rigid palette without
 * tangents takes the SIMD kernels (skin_simd.template.c: the LBS block's 3x4 and the DQS block's
 * quaternion, NaN center rows through the scalar LBS), and sk_blend without tangents (J <= 1024)
 * mixes the results of sk_lbs and sk_dqs 512 vertices at a time; everything else is scalar C. */
void sk_cor_f32(const sk_skin_job_f32 *job, int64_t begin, int64_t end);
void sk_cor_f64(const sk_skin_job_f64 *job, int64_t begin, int64_t end);
void sk_blend_f32(const sk_skin_job_f32 *job, int64_t begin, int64_t end);
void sk_blend_f64(const sk_skin_job_f64 *job, int64_t begin, int64_t end);

/* === cor: end === */

/* ------------------------------------------------------------------------------------------
 * Binding and weight tools (bind.c)
 * ---------------------------------------------------------------------------------------- */

/* Bones (DESIGN.md section 3).  Joints are points; bone j is the set of segments from joint j
 * to seg_end[s] for s in [seg_start[j], seg_start[j + 1]): its children, or its tail when the
 * skeleton has tails.  Every bone has at least one segment; a leaf without a tail has one of
 * length zero (a point).  Joint order is free here (no parents-first requirement). */
typedef struct sk_bones {
    const double *joints;     /* (J, 3) bind positions */
    const int64_t *parents;   /* (J,) parent joint or -1 */
    const int64_t *seg_start; /* (J + 1,) offsets into seg_end, seg_start[0] == 0 */
    const double *seg_end;    /* (S, 3) far end of each segment; S = seg_start[J] */
    int64_t n_joints;         /* J >= 1 */
} sk_bones;

/* The optional "why" of a binder: (V, K) C-contiguous arrays, each pointer may be NULL (and the
 * struct pointer itself).  bones: the joint whose bone or point decided the slot (-1: empty
 * slot); distances: the vertex's distance to it (NaN: empty); t: the binder's parameter, given
 * with each binder (NaN where none). */
typedef struct sk_bind_explain {
    int32_t *bones;
    double *distances;
    double *t;
} sk_bind_explain;

/* Every binder below writes fixed-K influences: indices (V, K) int32 and weights (V, K) of the
 * vertices' type, both C-contiguous, slots in decreasing weight (ties: smaller joint index);
 * a zero-weight slot holds index 0.  Vertices are a (V, 3) stream: vertex v component c at
 * (const char *)vertices + v * row + c * elem.  A NaN or inf vertex gives SK_ERR_NOT_FINITE, a
 * coordinate beyond SK_BIND_MAX_COORD (whose squared distances would overflow a double)
 * SK_ERR_TOO_LARGE, with *bad = the vertex, checked before anything is written.  Distances are
 * computed in double.
 * Ties between equally near joints or bones go to the smallest joint index. */

#define SK_BIND_MAX_COORD 1e150

/* Bytes of scratch memory sk_bind_proximity_* and sk_bind_envelope_* need for k slots. */
size_t sk_bind_scratch_size(int64_t k);

/* Nearest joint (seeds 002, 003), K = 1, weight 1: by distance to bone j (to_bone != 0) or to
 * joint j's point.  t: the parameter of the closest point along the chosen segment (0 at the
 * joint, 1 at the child or tail); 0 for to_bone == 0. */
sk_result sk_bind_nearest_f32(int32_t *indices, float *weights, const sk_bind_explain *explain,
                              const float *vertices, ptrdiff_t row, ptrdiff_t elem,
                              int64_t n_vertices, const sk_bones *bones, int to_bone,
                              int64_t *bad);
sk_result sk_bind_nearest_f64(int32_t *indices, double *weights, const sk_bind_explain *explain,
                              const double *vertices, ptrdiff_t row, ptrdiff_t elem,
                              int64_t n_vertices, const sk_bones *bones, int to_bone,
                              int64_t *bad);

/* Proximity (seed 004), K = k >= 1: the k nearest joints (points, or bones when to_bone), in
 * increasing distance, weights w_i = (d_min / d_i)^power / sum, i.e. proportional to
 * 1 / d_i^power (power >= 0, finite); a vertex at distance 0 gives weight 1 to the first such
 * joint and 0 to the others.  Slots beyond J are empty.  t as for nearest.  scratch:
 * sk_bind_scratch_size(k) bytes.  SK_ERR_BAD_ARGUMENT for k < 1 or a bad power. */
sk_result sk_bind_proximity_f32(int32_t *indices, float *weights, const sk_bind_explain *explain,
                                const float *vertices, ptrdiff_t row, ptrdiff_t elem,
                                int64_t n_vertices, const sk_bones *bones, int64_t k,
                                double power, int to_bone, void *scratch, int64_t *bad);
sk_result sk_bind_proximity_f64(int32_t *indices, double *weights,
                                const sk_bind_explain *explain, const double *vertices,
                                ptrdiff_t row, ptrdiff_t elem, int64_t n_vertices,
                                const sk_bones *bones, int64_t k, double power, int to_bone,
                                void *scratch, int64_t *bad);

/* Volume-sphere radii (seed 002): radii[j] = multiplier * min_v |v - joint j|, (J,) double;
 * 0 (no sphere) when V == 0.  SK_ERR_BAD_ARGUMENT for a negative or non-finite multiplier, or
 * one that makes a radius overflow (*bad = that joint; nothing written). */
sk_result sk_bind_sphere_radii_f32(double *radii, const float *vertices, ptrdiff_t row,
                                   ptrdiff_t elem, int64_t n_vertices, const sk_bones *bones,
                                   double multiplier, int64_t *bad);
sk_result sk_bind_sphere_radii_f64(double *radii, const double *vertices, ptrdiff_t row,
                                   ptrdiff_t elem, int64_t n_vertices, const sk_bones *bones,
                                   double multiplier, int64_t *bad);

/* Volume spheres (seed 002), K = 2: nearest joint j (point distance d); when d < radii[j] and j
 * has a parent p, w_p = 0.5 (1 - d / radii[j]) and w_j = 1 - w_p, else w_j = 1.  Slot 0 holds
 * j, slot 1 p (or is empty).  t: d / radii[j] (NaN when radii[j] == 0).  radii: (J,) finite,
 * >= 0, else SK_ERR_BAD_ARGUMENT. */
sk_result sk_bind_volume_spheres_f32(int32_t *indices, float *weights,
                                     const sk_bind_explain *explain, const float *vertices,
                                     ptrdiff_t row, ptrdiff_t elem, int64_t n_vertices,
                                     const sk_bones *bones, const double *radii, int64_t *bad);
sk_result sk_bind_volume_spheres_f64(int32_t *indices, double *weights,
                                     const sk_bind_explain *explain, const double *vertices,
                                     ptrdiff_t row, ptrdiff_t elem, int64_t n_vertices,
                                     const sk_bones *bones, const double *radii, int64_t *bad);

/* Projection (seed 002), K = 1: nearest joint j (point distance); s = (v - j) . (parent - j);
 * s > 0 gives the parent, otherwise j; a root keeps its vertices.  explain: bones = j (the
 * nearest joint, which may differ from the index), distances = |v - j|,
 * t = s / |parent - j|^2 (NaN for a root or a zero-length parent bone). */
sk_result sk_bind_projection_f32(int32_t *indices, float *weights,
                                 const sk_bind_explain *explain, const float *vertices,
                                 ptrdiff_t row, ptrdiff_t elem, int64_t n_vertices,
                                 const sk_bones *bones, int64_t *bad);
sk_result sk_bind_projection_f64(int32_t *indices, double *weights,
                                 const sk_bind_explain *explain, const double *vertices,
                                 ptrdiff_t row, ptrdiff_t elem, int64_t n_vertices,
                                 const sk_bones *bones, int64_t *bad);

/* Height bands (seed 001's cylinder), K = 2, for a chain of n >= 1 joints chain[0..n) whose
 * heights (along `axis`, from `origin`) are heights[0] < heights[1] < ... .  A vertex of height
 * h = (v - origin) . axis in [heights[b], heights[b+1]) gets (1 - f, f) on (chain[b],
 * chain[b+1]) with f = (h - heights[b]) / (heights[b+1] - heights[b]); below the first joint
 * weight 1 on chain[0], at or above the last weight 1 on chain[n-1].  explain: bones = the
 * band's joints, distances = |h - their heights|, t = f.  SK_ERR_BAD_ARGUMENT when the heights
 * are not finite and strictly increasing. */
sk_result sk_bind_height_bands_f32(int32_t *indices, float *weights,
                                   const sk_bind_explain *explain, const float *vertices,
                                   ptrdiff_t row, ptrdiff_t elem, int64_t n_vertices,
                                   const int64_t *chain, const double *heights, int64_t n,
                                   const double origin[3], const double axis[3], int64_t *bad);
sk_result sk_bind_height_bands_f64(int32_t *indices, double *weights,
                                   const sk_bind_explain *explain, const double *vertices,
                                   ptrdiff_t row, ptrdiff_t elem, int64_t n_vertices,
                                   const int64_t *chain, const double *heights, int64_t n,
                                   const double origin[3], const double axis[3], int64_t *bad);

/* Blender's envelope factor (distfactor_to_bone) of point v for the segment head -> tail with
 * radii rad_head, rad_tail and falloff `dist`: with a the projection of v - head on the unit
 * bone axis and l the bone length, the squared distance d2 and radius r are
 *     a < 0:      d2 = |v - head|^2, r = rad_head
 *     a > l:      d2 = |v - tail|^2, r = rad_tail
 *     otherwise:  d2 = |v - head|^2 - a^2, r = lerp(rad_head, rad_tail, a / l) (rad_head if l=0)
 * and the factor is 1 when d2 < r^2, 0 when dist == 0 or d2 >= (r + dist)^2, else
 * 1 - (sqrt(d2) - r)^2 / dist^2.  *distance = sqrt(max(d2, 0)), *t = clamp(a / l, 0, 1) (0 when
 * l == 0); either may be NULL. */
double sk_envelope_factor(const double v[3], const double head[3], const double tail[3],
                          double rad_head, double rad_tail, double dist, double *distance,
                          double *t);

/* Envelope (Blender's "With Envelope Weights"), K = k >= 1: the factor of bone j is the largest
 * sk_envelope_factor over its segments with head_radius[j], tail_radius[j], distance[j] (all
 * finite, >= 0, else SK_ERR_BAD_ARGUMENT); the k bones with the largest non-zero factors are kept
 * (ties: smaller joint index), raw, or divided by their sum when `normalize` (a row of zeros
 * stays zero).  explain: distances and t of the deciding segment.  scratch:
 * sk_bind_scratch_size(k) bytes. */
sk_result sk_bind_envelope_f32(int32_t *indices, float *weights, const sk_bind_explain *explain,
                               const float *vertices, ptrdiff_t row, ptrdiff_t elem,
                               int64_t n_vertices, const sk_bones *bones,
                               const double *head_radius, const double *tail_radius,
                               const double *distance, int64_t k, int normalize, void *scratch,
                               int64_t *bad);
sk_result sk_bind_envelope_f64(int32_t *indices, double *weights,
                               const sk_bind_explain *explain, const double *vertices,
                               ptrdiff_t row, ptrdiff_t elem, int64_t n_vertices,
                               const sk_bones *bones, const double *head_radius,
                               const double *tail_radius, const double *distance, int64_t k,
                               int normalize, void *scratch, int64_t *bad);

/* === bind: end === */

/* ------------------------------------------------------------------------------------------
 * Optimized centers of rotation: the precompute (cor_centers.c; Le & Hodgins, SIGGRAPH 2016)
 *
 *     c_i = sum_t s(w_i, w_t) a_t p_t / sum_t s(w_i, w_t) a_t,
 *     s(w_p, w_v) = sum_{j != k} w_pj w_pk w_vj w_vk exp(-(w_pj w_vk - w_pk w_vj)^2 / sigma^2)
 *
 * over the triangles t of the rest mesh (quads split 0-1-2, 0-2-3): p_t the centroid, a_t the
 * area, w_t the mean of the corners' dense weight vectors (a joint listed twice in a vertex's
 * slots counts with the sum of its weights).  With `subdivide` > 0 each triangle is first split
 * 1 -> 4 at its edge midpoints until its corners' weights differ by less than `subdivide` (max
 * abs difference over joints), at most SK_CENTERS_MAX_DEPTH times, every piece sampled at its
 * centroid with the interpolated weights.  A vertex whose sum is 0 (one influence, or no
 * triangle sharing two of its joints) gets NaN: no center.  Only samples that share a joint pair
 * with the vertex are visited, and vertices with identical weight rows are computed once; the
 * result does not depend on n_threads.  Computed in double; on the AVX2 / AVX-512 paths the
 * inner loop has its own exp() (within 1 ulp), so paths differ by rounding only.
 * ---------------------------------------------------------------------------------------- */

#define SK_CENTERS_MAX_DEPTH 6                      /* subdivision levels (4^6 pieces) at most */
#define SK_CENTERS_MAX_JOINTS ((int64_t)1 << 24)    /* joint indices below this */

typedef struct sk_centers_mesh {
    sk_stream positions;       /* (V, 3) of the function's float type */
    int64_t n_vertices;
    sk_stream faces;           /* (T, corners) vertex indices of face_type, in [0, V) */
    sk_index_type face_type;
    int corners;               /* 3 (triangles) or 4 (quads) */
    int64_t n_faces;
    sk_influences influences;  /* (V, K), validated (sk_validate_influences_* with any J) */
    double sigma;              /* > 0, finite */
    double subdivide;          /* 0: sample each triangle once; > 0: the threshold above */
} sk_centers_mesh;

typedef struct sk_centers_plan {
    int64_t n_joints;    /* 1 + the largest joint with a non-zero weight (1 when none) */
    int64_t n_triangles; /* after splitting quads */
    int64_t n_samples;   /* after subdivision */
    int64_t n_entries;   /* (sample, joint pair) entries */
    int table_bits;      /* log2 of the joint-pair table's size */
    size_t scratch_size; /* bytes sk_centers_* needs */
} sk_centers_plan;

/* Bytes of the `prep` block for V vertices, K slots and T' triangles (T, or 2 T for quads). */
size_t sk_centers_prepare_size(int64_t n_vertices, int64_t k, int64_t n_triangles);

/* Step 1: reads the weights into `prep` and plans step 2.  SK_ERR_BAD_ARGUMENT for corners not
 * 3 or 4, K < 1, sigma not finite and > 0, subdivide not finite and >= 0; SK_ERR_NOT_FINITE
 * with *bad = the vertex for a position that is NaN, inf or beyond SK_BIND_MAX_COORD (the
 * triangle areas would overflow); SK_ERR_INDEX_RANGE
 * with *bad = the face for a face index outside [0, V); SK_ERR_TOO_LARGE for a joint index >=
 * SK_CENTERS_MAX_JOINTS (*bad = that index) or sizes beyond memory. */
sk_result sk_centers_prepare_f32(void *prep, sk_centers_plan *plan, const sk_centers_mesh *mesh,
                             int n_threads, int64_t *bad);
sk_result sk_centers_prepare_f64(void *prep, sk_centers_plan *plan, const sk_centers_mesh *mesh,
                             int n_threads, int64_t *bad);

/* Step 2: writes the (V, 3) centers to `out` (of the mesh's float type; NaN rows where there is
 * no center), with plan->scratch_size bytes of scratch (8-byte aligned).  `prep` and `plan`
 * come from step 1 on the same mesh. */
sk_result sk_centers_f32(sk_stream out, const sk_centers_mesh *mesh, const void *prep,
                             const sk_centers_plan *plan, void *scratch, int n_threads);
sk_result sk_centers_f64(sk_stream out, const sk_centers_mesh *mesh, const void *prep,
                             const sk_centers_plan *plan, void *scratch, int n_threads);

/* === cor centers: end === */

#ifdef __cplusplus
}
#endif
#endif /* SK_H */
