/* skin_simd.template.c -- the SIMD skinning kernels, included by skin_avx2.c (compiled for
 * AVX2 + FMA) and skin_avx512.c (compiled for AVX-512 F/DQ/BW/VL); SK_ISA(name) names the
 * variant.  Only the float32 LBS differs between the two (one vertex's 3x4 matrix per zmm
 * register versus per ymm pair); the float64 LBS, DQS and CoR and the float32 DQS and CoR are
 * the same source, compiled twice.
 *
 * The design (see also ../benchmarks/README.md):
 *   - Per vertex, the K joint matrices are blended as whole registers: each joint's prepared
 *     data is column-major with columns padded to 4 (sk.h), so a weight broadcast and one FMA per
 *     register accumulate the blended matrix.  No gathers: they are slow on the CPUs this is
 *     tuned for, and a vertex needs only K joints.
 *   - The blended matrix meets the vertex as [c0 px | c1 py | c2 pz | c3 1] (one 128-bit block
 *     per column), and the four blocks are summed as (c0 px + c2 pz) + (c1 py + c3) for every
 *     vertex, whatever its place in a block: results never depend on how a range is split.
 *   - Vertices go in blocks of the register width; a partial block (at the start, to align the
 *     output for non-temporal stores, or at the end) is copied to a zero-padded stack block and
 *     computed by the very same code, so a vertex's bits do not depend on where a thread's range
 *     starts or ends.  No masked loads on the streaming inputs.
 *   - A vertex whose weights sum to <= 1e-6 (DQS: or whose blended rotation is 0) is copied, as
 *     in the scalar kernels.
 *   - Normals: normalize(v) = v * (1 / sqrt(|v|^2)), computed for a whole block at once; a zero
 *     vector stays zero.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "skin_simd.h"

/* Which external kernels this translation unit defines.  CMakeLists.txt compiles the template
 * several times per ISA, each time with SK_SIMD_PARTS a mask of the parts below, so that the
 * cores of a small machine share the work (one file of them all took 7.5 minutes for AVX2 on a
 * 2-core VM, the other core done with AVX-512 after 5; a lane that builds AVX2 alone had one
 * core idle throughout).  Only the external entry points are guarded: the static kernels a
 * part does not reach are never compiled.  Without SK_SIMD_PARTS, all parts
 * (benchmarks/ab_lbs8.py, a single-file build). */
#define SK_PART_BASE 1  /* the validation passes, DQS's sign tables */
#define SK_PART_LBS32 2 /* float32 LBS and rigid */
#define SK_PART_LBS64 4 /* float64 LBS and rigid */
#define SK_PART_DQS32 8
#define SK_PART_DQS64 16
#define SK_PART_COR32 32
#define SK_PART_COR64 64
#define SK_PART_LBS32B 128 /* half of the float32 LBS instances (SIMD_INSTANCE_LBS32B) */
#ifndef SK_SIMD_PARTS
#define SK_SIMD_PARTS 255
#endif
#define SK_SIMD_PART(name) ((SK_SIMD_PARTS) & SK_PART_##name)

/* The validation pass's loop, vectorized for this ISA. */
#if SK_SIMD_PART(BASE)
#define SK_ANYBAD_LINKAGE
#define SK_T float
#define SK_ANYBAD_NAME SK_ISA(sk_any_bad, _f32)
#include "skin_anybad.template.h"
#undef SK_T
#undef SK_ANYBAD_NAME
#define SK_T double
#define SK_ANYBAD_NAME SK_ISA(sk_any_bad, _f64)
#include "skin_anybad.template.h"
#undef SK_T
#undef SK_ANYBAD_NAME
#undef SK_ANYBAD_LINKAGE
#define SK_RIGIDBAD_LINKAGE
#define SK_RIGIDBAD_NAME SK_ISA(sk_rigid_any_bad, )
#include "skin_rigidbad.template.h"
#undef SK_RIGIDBAD_NAME
#undef SK_RIGIDBAD_LINKAGE
#endif /* SK_SIMD_PART(BASE) */

/* The sign table's rows as bits: bit j of bits[p] set where sign[p J + j] < 0 (J <= 64), so
 * that a weight times its sign (+-1) is the weight with its sign bit flipped by bit j of the
 * pivot's row (float32: dqs16_sign_bits, dqs8_stage_make; float64 on AVX-512: dqs8d_blends, two
 * shifts and an exclusive or for 8 slots instead of a load, a conversion and a multiply a slot).
 * Made once a frame with the table (skin_signs.template.h), or by a range whose job has none. */
static inline void dqs_sign_bits(uint64_t *bits, const float *sign, int64_t n_joints)
{
    for (int64_t p = 0; p < n_joints; ++p) {
        uint64_t b = 0;
#ifdef __AVX512F__
        for (int64_t j = 0; j < n_joints; j += 16) {
            const __mmask16 in = (__mmask16)(n_joints - j >= 16 ? 0xffffu : (1u << (n_joints - j)) - 1);
            const __m512 row = _mm512_maskz_loadu_ps(in, sign + p * n_joints + j);
            b |= (uint64_t)_mm512_mask_cmp_ps_mask(in, row, _mm512_setzero_ps(), _CMP_LT_OQ) << j;
        }
#else
        int64_t j = 0;
        for (; j + 8 <= n_joints; j += 8)
            b |= (uint64_t)(unsigned)_mm256_movemask_ps(_mm256_cmp_ps(
                     _mm256_loadu_ps(sign + p * n_joints + j), _mm256_setzero_ps(), _CMP_LT_OQ))
                 << j;
        for (; j < n_joints; ++j) b |= (uint64_t)(sign[p * n_joints + j] < 0) << j;
#endif
        bits[p] = b;
    }
}

/* The job's sign bits, or `own` made from `sign`. */
static inline const uint64_t *job_sign_bits(uint64_t *own, const uint64_t *job_bits,
                                            const float *sign, int64_t n_joints)
{
    if (job_bits) return job_bits;
    dqs_sign_bits(own, sign, n_joints);
    return own;
}

/* DQS's hemisphere signs, vectorized for this ISA, and their bits. */
#if SK_SIMD_PART(BASE)
#define SK_SIGNS_LINKAGE
#define SK_SIGNS_BITS 1
#define SK_T float
#define SK_SIGNS_NAME SK_ISA(sk_dqs_signs, _f32)
#include "skin_signs.template.h"
#undef SK_T
#undef SK_SIGNS_NAME
#define SK_T double
#define SK_SIGNS_NAME SK_ISA(sk_dqs_signs, _f64)
#include "skin_signs.template.h"
#undef SK_T
#undef SK_SIGNS_NAME
#undef SK_SIGNS_LINKAGE
#undef SK_SIGNS_BITS
#endif /* SK_SIMD_PART(BASE) */

/* ------------------------------------------------------------------------------------------
 * Influence slots.  The index type is a compile-time constant in each instantiation (the
 * kernels switch on it once per call); the weight type is a predictable branch.
 * ---------------------------------------------------------------------------------------- */

SK_ALWAYS_INLINE int64_t simd_index(const char *p, sk_index_type t)
{
    switch (t) {
    case SK_INDEX_U8: return *(const uint8_t *)p;
    case SK_INDEX_U16: return *(const uint16_t *)p;
    case SK_INDEX_U32: return *(const uint32_t *)p;
    case SK_INDEX_I32: return *(const int32_t *)p;
    default: return *(const int64_t *)p;
    }
}

/* The same conversions as the scalar kernels (w / 255 in the kernel's type). */
SK_ALWAYS_INLINE float simd_weight_f32(const char *p, sk_weight_type t)
{
    switch (t) {
    case SK_WEIGHT_UNORM8: return (float)(*(const uint8_t *)p) / 255.0f;
    case SK_WEIGHT_UNORM16: return (float)(*(const uint16_t *)p) / 65535.0f;
    default: return *(const float *)p;
    }
}

SK_ALWAYS_INLINE double simd_weight_f64(const char *p, sk_weight_type t)
{
    switch (t) {
    case SK_WEIGHT_UNORM8: return (double)(*(const uint8_t *)p) / 255.0;
    case SK_WEIGHT_UNORM16: return (double)(*(const uint16_t *)p) / 65535.0;
    default: return *(const double *)p;
    }
}

/* Slot k of a vertex: its weight, and its joint, or joint 0 for an index outside [0, J) (a
 * zero weight's index may be anything): never a read out of bounds.  A zero weight's in-range
 * joint is read and adds 0 (palettes are finite), which keeps the loop free of branches. */
#define SIMD_SLOT(FLOAT_READ, in, ip, wp, k, it, wt, J, w, j)                                    \
    do {                                                                                         \
        (w) = FLOAT_READ((wp) + (k) * (in)->weights.elem, (wt));                                \
        (j) = simd_index((ip) + (k) * (in)->indices.elem, (it));                               \
        (j) = (uint64_t)(j) < (uint64_t)(J) ? (j) : 0;                                           \
    } while (0)

/* kk of rigid skinning: the LBS blocks with one joint of weight 1 per vertex, read from
 * job->rigid_indices (the block code, and so the bits, are those of LBS with K = 1). */
#define SIMD_RIGID (-1)

/* Joint offsets of the K = 4 and 8 instantiations are int32 (offsets_k): at most this many
 * joints. */
#define SK_SIMD_MAX_JOINTS_K4 (1 << 24)

/* Instantiations: a range function fn(job, begin, end, it, kk, wt) is always inlined, and each
 * kernel is specialized for a few combinations of constants (few keep the object code and its
 * compile time small):
 *   - K = 4 with float weights (glTF's layout): uint16 and uint8 indices (glTF's JOINTS_n),
 *     int32 (what skinkit's glTF loader and binders return), and the other index types read
 *     through a switch;
 *   - LBS also K = 8 with float weights (glTF's JOINTS_0 and JOINTS_1), uint16, uint8 and
 *     int32: its slot loop unrolled takes about half the time of the loop that reads K from
 *     the job; so does DQS, with a K = 8 blend of its own (unrolled, the loop for any
 *     K was slower for DQS and CoR: their per-slot chains are longer);
 *   - rigid skinning (the LBS range functions with kk = SIMD_RIGID): uint16, and the others;
 *   - anything else: kk = 0 (K read from the job), index and weight types read at run time.
 * The LBS instantiations are functions of their own, fn_<tag>(job, begin, end) (SIMD_INSTANCE):
 * in one function, adding the int32 ones made the compiler lay out the uint16 one 8% slower.
 * DQS and CoR dispatch within the kernel function (SIMD_DISPATCH), which measured 2-7% faster
 * for them than separate functions. */
#define SIMD_FLOAT_K(job, k_)                                                                    \
    ((job)->influences.k == (k_) && (job)->influences.weight_type == SK_WEIGHT_FLOAT &&          \
     (job)->n_joints <= SK_SIMD_MAX_JOINTS_K4)

/* The index types with instantiations of their own. */
#define SIMD_CONST_INDEX(it) ((it) == SK_INDEX_U16 || (it) == SK_INDEX_U8 || (it) == SK_INDEX_I32)

/* fn for K = kk float weights and the job's index type, one of SIMD_CONST_INDEX's. */
#define SIMD_CALL_INDEX(fn, job, begin, end, kk)                                                 \
    do {                                                                                         \
        const sk_index_type itc_ = (job)->influences.index_type;                                 \
        if (itc_ == SK_INDEX_U16)                                                                \
            fn(job, begin, end, SK_INDEX_U16, kk, SK_WEIGHT_FLOAT);                              \
        else if (itc_ == SK_INDEX_U8)                                                            \
            fn(job, begin, end, SK_INDEX_U8, kk, SK_WEIGHT_FLOAT);                               \
        else                                                                                     \
            fn(job, begin, end, SK_INDEX_I32, kk, SK_WEIGHT_FLOAT);                              \
    } while (0)

#define SIMD_DISPATCH(fn, job, begin, end)                                                       \
    do {                                                                                         \
        const sk_index_type it_ = (job)->influences.index_type;                                  \
        if (!SIMD_FLOAT_K(job, 4))                                                               \
            fn(job, begin, end, it_, 0, (job)->influences.weight_type);                          \
        else if (SIMD_CONST_INDEX(it_))                                                          \
            SIMD_CALL_INDEX(fn, job, begin, end, 4);                                             \
        else                                                                                     \
            fn(job, begin, end, it_, 4, SK_WEIGHT_FLOAT);                                        \
    } while (0)

/* SIMD_DISPATCH plus K = 8 for DQS, whose K = 8 blends (dqs8_blend, dq4d_blend) have their
 * own branch-free pivot (float64's: 0.45-0.52x the time of the loop for any K, Zen 5). */
#define SIMD_DISPATCH_DQS(fn, job, begin, end)                                                   \
    do {                                                                                         \
        if (SIMD_FLOAT_K(job, 8) && SIMD_CONST_INDEX((job)->influences.index_type))              \
            SIMD_CALL_INDEX(fn, job, begin, end, 8);                                             \
        else                                                                                     \
            SIMD_DISPATCH(fn, job, begin, end);                                                  \
    } while (0)

#define SIMD_INSTANCE(fn, JOB, tag, IT, KK, WT)                                                  \
    static __attribute__((noinline)) void fn##_##tag(const JOB *job, int64_t begin, int64_t end) \
    {                                                                                            \
        fn(job, begin, end, IT, KK, WT);                                                         \
    }

/* AVX2: 1-3 float weights a vertex through instances of their own (for any index type), rather
 * than the one for any K, whose slot loop reads each index and weight through switches: same
 * bits, and on a Zen 4 VM at 100k 0.53-0.64x the time for float32 LBS, 0.78-0.87x float64
 * LBS, 0.57-0.72x float32 DQS, 0.77-0.88x float64 DQS (float64 LBS called inline rather than
 * through an instance took 1.05-1.08x the time).  SIMD_FEW_K returns from the caller when it
 * took the job.
 * AVX-512 pads them to K = 4 instead (SIMD_PAD_OR_GO_ON; float64 LBS keeps the loop for any K
 * there). */
#ifdef __AVX512F__
#define SIMD_INSTANCES_FEW_K(fn, JOB)
#define SIMD_FEW_K(fn, job, begin, end) ((void)0)
#else
#define SIMD_INSTANCES_FEW_K(fn, JOB)                                                            \
    SIMD_INSTANCE(fn, JOB, k1_any, job->influences.index_type, 1, SK_WEIGHT_FLOAT)               \
    SIMD_INSTANCE(fn, JOB, k2_any, job->influences.index_type, 2, SK_WEIGHT_FLOAT)               \
    SIMD_INSTANCE(fn, JOB, k3_any, job->influences.index_type, 3, SK_WEIGHT_FLOAT)
#define SIMD_FEW_K(fn, job, begin, end)                                                          \
    do {                                                                                         \
        if (SIMD_FLOAT_K(job, 1) || SIMD_FLOAT_K(job, 2) || SIMD_FLOAT_K(job, 3)) {              \
            if ((job)->influences.k == 1)                                                        \
                fn##_k1_any(job, begin, end);                                                    \
            else if ((job)->influences.k == 2)                                                   \
                fn##_k2_any(job, begin, end);                                                    \
            else                                                                                 \
                fn##_k3_any(job, begin, end);                                                    \
            return;                                                                              \
        }                                                                                        \
    } while (0)
#endif

#define SIMD_INSTANCES_LBS(fn, JOB) SIMD_INSTANCES_LBS_IN(fn, JOB, SIMD_INSTANCE, SIMD_INSTANCE)
/* The instances of an LBS range function: the K = 4 ones through FIRST, the others through
 * SECOND (SIMD_INSTANCE, or SIMD_INSTANCE_LBS32B for the float32 ones that part compiles). */
#define SIMD_INSTANCES_LBS_IN(fn, JOB, FIRST, SECOND)                                             \
    FIRST(fn, JOB, k4_u16, SK_INDEX_U16, 4, SK_WEIGHT_FLOAT)                                     \
    FIRST(fn, JOB, k4_u8, SK_INDEX_U8, 4, SK_WEIGHT_FLOAT)                                       \
    FIRST(fn, JOB, k4_i32, SK_INDEX_I32, 4, SK_WEIGHT_FLOAT)                                     \
    FIRST(fn, JOB, k4_any, job->influences.index_type, 4, SK_WEIGHT_FLOAT)                       \
    SECOND(fn, JOB, k8_u16, SK_INDEX_U16, 8, SK_WEIGHT_FLOAT)                                    \
    SECOND(fn, JOB, k8_u8, SK_INDEX_U8, 8, SK_WEIGHT_FLOAT)                                      \
    SECOND(fn, JOB, k8_i32, SK_INDEX_I32, 8, SK_WEIGHT_FLOAT)                                    \
    SECOND(fn, JOB, rigid_u16, SK_INDEX_U16, SIMD_RIGID, SK_WEIGHT_FLOAT)                        \
    SECOND(fn, JOB, rigid_any, job->rigid_index_type, SIMD_RIGID, SK_WEIGHT_FLOAT)               \
    SECOND(fn, JOB, any, job->influences.index_type, 0, job->influences.weight_type)

/* The float32 LBS instances are the largest part to compile (4.5 of the 7.5 minutes of the AVX2
 * kernels on a 2-core VM), so half of them are a part of their own, SK_PART_LBS32B: of external
 * (hidden) linkage, defined in that part's object and declared in the others.  Their names are
 * the ISA's own (lbs8_range_* AVX2, lbs16_range_* AVX-512), so the two ISAs' objects do not
 * clash. */
#define SIMD_INSTANCE_EXTERN(fn, JOB, tag, IT, KK, WT)                                           \
    __attribute__((visibility("hidden"), noinline)) void fn##_##tag(const JOB *job,              \
                                                                    int64_t begin, int64_t end)  \
    {                                                                                            \
        fn(job, begin, end, IT, KK, WT);                                                         \
    }
#define SIMD_INSTANCE_DECLARE(fn, JOB, tag, IT, KK, WT)                                          \
    __attribute__((visibility("hidden"))) void fn##_##tag(const JOB *job, int64_t begin,         \
                                                          int64_t end);
#if SK_SIMD_PART(LBS32B)
#define SIMD_INSTANCE_LBS32B SIMD_INSTANCE_EXTERN
#else
#define SIMD_INSTANCE_LBS32B SIMD_INSTANCE_DECLARE
#endif

/* fn's instantiation `k` (k4, k8) for the job's index type, one of SIMD_CONST_INDEX's. */
#define SIMD_BY_INDEX(fn, k, job, begin, end)                                                    \
    do {                                                                                         \
        const sk_index_type itb_ = (job)->influences.index_type;                                 \
        if (itb_ == SK_INDEX_U16)                                                                \
            fn##_##k##_u16(job, begin, end);                                                     \
        else if (itb_ == SK_INDEX_U8)                                                            \
            fn##_##k##_u8(job, begin, end);                                                      \
        else                                                                                     \
            fn##_##k##_i32(job, begin, end);                                                     \
    } while (0)

#define SIMD_DISPATCH_LBS(fn, job, begin, end)                                                   \
    do {                                                                                         \
        const int known_ = SIMD_CONST_INDEX((job)->influences.index_type);                      \
        if (SIMD_FLOAT_K(job, 4) && known_)                                                      \
            SIMD_BY_INDEX(fn, k4, job, begin, end);                                              \
        else if (SIMD_FLOAT_K(job, 4))                                                           \
            fn##_k4_any(job, begin, end);                                                        \
        else if (SIMD_FLOAT_K(job, 8) && known_)                                                 \
            SIMD_BY_INDEX(fn, k8, job, begin, end);                                              \
        else                                                                                     \
            fn##_any(job, begin, end);                                                           \
    } while (0)

/* Rigid skinning through the LBS range function `fn`. */
#define SIMD_RIGID_DISPATCH(fn, job, begin, end)                                                 \
    do {                                                                                         \
        if ((job)->rigid_index_type == SK_INDEX_U16)                                             \
            fn##_rigid_u16(job, begin, end);                                                     \
        else                                                                                     \
            fn##_rigid_any(job, begin, end);                                                     \
    } while (0)

/* Vertices [v0, v0 + n) of a (V, 3) stream of any strides into a zero-padded packed block of
 * `cap` vertices, and back.  Partial blocks and strided layouts (interleaved vertex buffers,
 * Fortran order, reversed views) go through these, then through the same block code as packed
 * data: every layout gives the same bits. */
SK_ALWAYS_INLINE void gather3_f32(float *dst, int cap, const sk_stream *s, int64_t v0, int64_t n)
{
    memset(dst, 0, sizeof(float) * 3 * (size_t)cap);
    for (int64_t i = 0; s->data && i < n; ++i) {
        const char *p = (const char *)s->data + (v0 + i) * s->row;
        dst[3 * i] = *(const float *)p;
        dst[3 * i + 1] = *(const float *)(p + s->elem);
        dst[3 * i + 2] = *(const float *)(p + 2 * s->elem);
    }
}

SK_ALWAYS_INLINE void scatter3_f32(const sk_stream *s, int64_t v0, int64_t n, const float *src)
{
    for (int64_t i = 0; s->data && i < n; ++i) {
        char *p = (char *)s->data + (v0 + i) * s->row;
        *(float *)p = src[3 * i];
        *(float *)(p + s->elem) = src[3 * i + 1];
        *(float *)(p + 2 * s->elem) = src[3 * i + 2];
    }
}

SK_ALWAYS_INLINE void gather3_f64(double *dst, int cap, const sk_stream *s, int64_t v0, int64_t n)
{
    memset(dst, 0, sizeof(double) * 3 * (size_t)cap);
    for (int64_t i = 0; s->data && i < n; ++i) {
        const char *p = (const char *)s->data + (v0 + i) * s->row;
        dst[3 * i] = *(const double *)p;
        dst[3 * i + 1] = *(const double *)(p + s->elem);
        dst[3 * i + 2] = *(const double *)(p + 2 * s->elem);
    }
}

SK_ALWAYS_INLINE void scatter3_f64(const sk_stream *s, int64_t v0, int64_t n, const double *src)
{
    for (int64_t i = 0; s->data && i < n; ++i) {
        char *p = (char *)s->data + (v0 + i) * s->row;
        *(double *)p = src[3 * i];
        *(double *)(p + s->elem) = src[3 * i + 1];
        *(double *)(p + 2 * s->elem) = src[3 * i + 2];
    }
}

/* Calls with non-temporal stores (job->stream) write whole aligned blocks: the number of
 * vertices (at most end - v) to write through a partial block first, so that an output of
 * `row`-byte rows reaches an `align`-byte boundary at vertex v + head; *stream is cleared (and
 * 0 returned) when none of the next `block` vertices gets there. */
SK_ALWAYS_INLINE int64_t stream_head(int *stream, const void *out_v, size_t row, int block,
                                     uintptr_t align, int64_t left)
{
    if (!*stream) return 0;
    int64_t head = 0;
    while (head < block && ((uintptr_t)out_v + row * (size_t)head) % align != 0) ++head;
    if (head == block) return *stream = 0;
    return head < left ? head : left;
}

/* Whether the normals' output, written `lag` bytes behind the positions' output by blocks of
 * 96 bytes each (AVX2 LBS: 8 float or 4 double vertices), lands on the bytes the positions'
 * block has just been written to, at the same offsets within 4 KB pages.  Big calls write
 * both outputs with non-temporal stores, and on Zen 3 such layouts took 1.2-1.6x the time at
 * 300k-1M vertices: float64 LBS with no lag, the outputs 0-95 bytes apart (what two big arrays
 * NumPy allocates one after the other are), float32 LBS with its normals a block behind, 96-191
 * bytes apart; with streamed and with cached stores for the normals alike.  The AVX2 LBS loops
 * then write the normals with the other lag (on the Xeon no layout cost more than 4%). */
SK_ALWAYS_INLINE int outputs_close(const void *pout, const void *nout, uintptr_t lag)
{
    return (((uintptr_t)nout - (uintptr_t)pout - lag) & 4095) < 96;
}

/* All four streams packed: blocks read and write the arrays directly. */
SK_ALWAYS_INLINE int packed_job(const sk_stream *p, const sk_stream *op, const sk_stream *n,
                                const sk_stream *on, ptrdiff_t size)
{
    return sk_simd_packed3(p, size) && sk_simd_packed3(op, size) && sk_simd_packed3(n, size) &&
           sk_simd_packed3(on, size);
}

/* Contiguous (V, K) weights of `size`-byte floats: the block loops read them at offsets the
 * compiler knows (K = 4, and float32 K = 8). */
SK_ALWAYS_INLINE int weights_packed(const sk_influences *in, int K, ptrdiff_t size)
{
    return in->weights.row == K * size && in->weights.elem == size;
}


SK_ALWAYS_INLINE ptrdiff_t index_size(sk_index_type t)
{
    return t == SK_INDEX_U8 ? 1 : t == SK_INDEX_U16 ? 2 : t == SK_INDEX_I64 ? 8 : 4;
}

/* Indices of 32 bits or fewer (every type but int64): they fit 32-bit lanes. */
SK_ALWAYS_INLINE int index_narrow(sk_index_type t)
{
    return index_size(t) <= 4;
}

/* Contiguous rows of K narrow indices: vector loads take a block's slots at once. */
SK_ALWAYS_INLINE int indices_narrow_rows(const sk_influences *in, int K, sk_index_type it)
{
    const ptrdiff_t is = index_size(it);
    return index_narrow(it) && in->indices.row == K * is && in->indices.elem == is;
}

/* Contiguous rows of K int64 indices (offsets8_i64). */
SK_ALWAYS_INLINE int indices_i64_rows(const sk_influences *in, int K, sk_index_type it)
{
    return it == SK_INDEX_I64 && in->indices.row == 8 * K && in->indices.elem == 8;
}

/* Slots 8 h .. 8 h + 7 of contiguous int64 index rows at ip (NumPy's default integer; offsets_k's
 * second case): an index is in [0, J) when its high half is 0 and its low half at most
 * J - 1 (2^32 + 1 or -1 under a zero weight gives offset 0, as SIMD_NARROWED's copy does); the
 * halves split by two shuffles, the result put back in slot order by one permute.  With this the
 * contiguous int64 joints of float32 LBS (K = 4 and 8) run the int32 loops' code (lbs8_range's
 * k4_i64 and k8_i64 instances) instead of going through a narrowed copy; the same check in 64-bit
 * lanes (four compares, two ands, two shuffles and two permutes) took 1.02x the time at 100k and
 * 1.07x at 1M (ab_lbs8.py, Zen 3). */
SK_ALWAYS_INLINE __m256i offsets8_i64(const char *ip, int h, int64_t n_joints, int32_t stride)
{
    const __m256 a = _mm256_loadu_ps((const float *)(ip + 64 * h));
    const __m256 b = _mm256_loadu_ps((const float *)(ip + 64 * h + 32));
    /* the low and the high halves of slots [0 1 4 5 | 2 3 6 7] */
    const __m256i lo = _mm256_castps_si256(_mm256_shuffle_ps(a, b, 0x88));
    const __m256i hi = _mm256_castps_si256(_mm256_shuffle_ps(a, b, 0xDD));
    const __m256i ok = _mm256_and_si256(
        _mm256_cmpeq_epi32(hi, _mm256_setzero_si256()),
        _mm256_cmpeq_epi32(_mm256_min_epu32(lo, _mm256_set1_epi32((int32_t)n_joints - 1)), lo));
    const __m256i o = _mm256_and_si256(ok, _mm256_mullo_epi32(lo, _mm256_set1_epi32(stride)));
    return _mm256_permute4x64_epi64(o, 0xD8); /* 64-bit pairs 0 2 1 3: slot order */
}

/* Slots 8 h .. 8 h + 7 of contiguous narrow index rows at ip (offsets_k's first case), as
 * offsets_k computes them. */
SK_ALWAYS_INLINE __m256i offsets8(const char *ip, int h, sk_index_type it, int64_t n_joints,
                                  int32_t stride)
{
    __m256i j;
    switch (it) {
    case SK_INDEX_U8: j = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(ip + 8 * h))); break;
    case SK_INDEX_U16: j = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(ip + 16 * h))); break;
    default: j = _mm256_loadu_si256((const __m256i *)(ip + 32 * h)); break;
    }
    /* j <= J - 1 unsigned (a negative int32 is >= J): min(j, J - 1) == j */
    const __m256i in_range =
        _mm256_cmpeq_epi32(_mm256_min_epu32(j, _mm256_set1_epi32((int32_t)n_joints - 1)), j);
    return _mm256_and_si256(in_range, _mm256_mullo_epi32(j, _mm256_set1_epi32(stride)));
}

/* Offset k of offsets_k's table (>= 0, below 2^29), read with its neighbour as one 64-bit load
 * (little-endian: the even one in the low half) and split on the integer ports, which relieves
 * the load ports (AVX-512: lbs16_blend_rows, and float64's lbs4d_row; AVX2: lbs8_blend with an
 * even K).  AVX-512 float32 K = 4 with the cofactors' blends (a scaled palette with normals) took
 * 0.93-0.95x the time at 4k-1M; K = 8 was within noise, so it reads its offsets one by one. */
SK_ALWAYS_INLINE uint32_t offset_of_pair(const int32_t *off, int k)
{
    uint64_t pair;
    memcpy(&pair, off + (k & ~1), 8);
    return (uint32_t)(k & 1 ? pair >> 32 : pair);
}

#ifdef __AVX512F__
/* Slots 16 h .. 16 h + 15 of contiguous narrow index rows at ip, widened to 32 bits. */
SK_ALWAYS_INLINE __m512i indices16(const char *ip, int h, sk_index_type it)
{
    switch (it) {
    case SK_INDEX_U8: return _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(ip + 16 * h)));
    case SK_INDEX_U16: return _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(ip + 32 * h)));
    default: return _mm512_loadu_si512((const void *)(ip + 64 * h));
    }
}

/* offsets8 for slots 16 h .. 16 h + 15.  A stride of a power of two (LBS's, a constant where
 * this is inlined) by a shift rather than a 512-bit multiply. */
SK_ALWAYS_INLINE __m512i offsets16_masked(const char *ip, int h, sk_index_type it,
                                          int64_t n_joints, int32_t stride, __mmask16 *in_range)
{
    const __m512i j = indices16(ip, h, it);
    /* (a negative int32 compares as a large unsigned one: out of range) */
    *in_range = _mm512_cmplt_epu32_mask(j, _mm512_set1_epi32((int32_t)n_joints));
    if ((stride & (stride - 1)) == 0)
        return _mm512_maskz_sll_epi32(*in_range, j,
                                      _mm_cvtsi32_si128(__builtin_ctz((unsigned)stride)));
    return _mm512_maskz_mullo_epi32(*in_range, j, _mm512_set1_epi32(stride));
}

SK_ALWAYS_INLINE __m512i offsets16(const char *ip, int h, sk_index_type it, int64_t n_joints,
                                   int32_t stride)
{
    __mmask16 in_range;
    return offsets16_masked(ip, h, it, n_joints, stride, &in_range);
}

#endif

/* For a constant K (4 or 8): the joints of slots 0 .. K - 1 of vertices v0 .. v0 + n - 1 as
 * offsets into `prepared` (`stride` elements per joint), joint 0 for an index outside [0, J).
 * Done for a whole block before the blends, vectorized when the index rows are contiguous,
 * it takes the index work out of the per-slot dependency chain. */
SK_ALWAYS_INLINE void offsets_k(int32_t *off, const sk_influences *in, int64_t v0, int n,
                                sk_index_type it, int64_t n_joints, int32_t stride, int K)
{
    const ptrdiff_t is = index_size(it);
    const char *ip = (const char *)in->indices.data + v0 * in->indices.row;
    const uint64_t J = (uint64_t)n_joints;
    if (indices_narrow_rows(in, K, it)) {
        /* in 32 bits (J <= SK_SIMD_MAX_JOINTS_K4; a negative int32 wraps to >= J), 16 slots a
         * register on AVX-512, then 8 (left to the compiler, the loop came out scalar in some
         * kernels: a sixth of a DQS call), the rest one by one */
        const uint32_t J32 = (uint32_t)J;
        int s = 0;
#ifdef __AVX512F__
        for (; s + 16 <= K * n; s += 16)
            _mm512_storeu_si512((void *)(off + s), offsets16(ip, s / 16, it, n_joints, stride));
#endif
        for (; J32 > 0 && s + 8 <= K * n; s += 8)
            _mm256_storeu_si256((__m256i *)(off + s), offsets8(ip, s / 8, it, n_joints, stride));
        for (; s < K * n; ++s) {
            uint32_t j;
            switch (it) {
            case SK_INDEX_U8: j = ((const uint8_t *)ip)[s]; break;
            case SK_INDEX_U16: j = ((const uint16_t *)ip)[s]; break;
            default: j = ((const uint32_t *)ip)[s]; break;
            }
            off[s] = j < J32 ? (int32_t)j * stride : 0;
        }
    } else if (indices_i64_rows(in, K, it)) {
        int s = 0;
        for (; s + 8 <= K * n; s += 8)
            _mm256_storeu_si256((__m256i *)(off + s), offsets8_i64(ip, s / 8, n_joints, stride));
        for (; s < K * n; ++s) {
            const uint64_t j = (uint64_t)((const int64_t *)ip)[s];
            off[s] = j < J ? (int32_t)j * stride : 0;
        }
    } else if (in->indices.row == K * is && in->indices.elem == is) {
        for (int s = 0; s < K * n; ++s) {
            uint64_t j;
            switch (it) {
            case SK_INDEX_U8: j = ((const uint8_t *)ip)[s]; break;
            case SK_INDEX_U16: j = ((const uint16_t *)ip)[s]; break;
            case SK_INDEX_U32: j = ((const uint32_t *)ip)[s]; break;
            case SK_INDEX_I32: j = (uint64_t)(int64_t)((const int32_t *)ip)[s]; break;
            default: j = (uint64_t)((const int64_t *)ip)[s]; break;
            }
            off[s] = j < J ? (int32_t)j * stride : 0;
        }
    } else {
        for (int i = 0; i < n; ++i)
            for (int k = 0; k < K; ++k) {
                uint64_t j = (uint64_t)simd_index(ip + i * in->indices.row + k * in->indices.elem, it);
                off[K * i + k] = j < J ? (int32_t)j * stride : 0;
            }
    }
}

/* offsets_k for the 16 slots of 4 vertices with K = 4: for contiguous narrow indices one
 * vector load, widen, compare and multiply per 8 slots (offsets8).  offsets_k would take one
 * 512-bit step on AVX-512; this stays in ymm there too, because a 512-bit multiply here
 * measured 20% slower in the float64 kernel. */
SK_ALWAYS_INLINE int offsets4x4_vector(const sk_influences *in, int n, sk_index_type it)
{
    return n == 4 && indices_narrow_rows(in, 4, it);
}

SK_ALWAYS_INLINE void offsets4x4(int32_t *off, const sk_influences *in, int64_t v0, int n,
                                 sk_index_type it, int64_t n_joints, int32_t stride)
{
    if (!offsets4x4_vector(in, n, it)) {
        offsets_k(off, in, v0, n, it, n_joints, stride, 4);
        return;
    }
    const char *ip = (const char *)in->indices.data + v0 * in->indices.row;
    for (int h = 0; h < 2; ++h)
        _mm256_storeu_si256((__m256i *)(off + 8 * h), offsets8(ip, h, it, n_joints, stride));
}

/* float64 LBS's joints for the 16 slots of 4 vertices with K = 4, made a block ahead.  With
 * AVX-512, int32 offsets into `prepared` (contiguous narrow indices: one offsets16 step,
 * widened, compared and shifted), read two to a load by offset_of_pair and added to
 * `prepared` by the loads' addressing: 0.93-0.97x the time of 64-bit row pointers at 10k-1M
 * vertices on Zen 5, positions only, rigid and scaled palettes (paired A/Bs, same bits), half
 * the loads a slot, as float32 found.  With AVX2, row pointers prepared + offset (offsets8 widened to 64 bits). */
#ifdef __AVX512F__
typedef int32_t lbs4d_joint;
#else
typedef const double *lbs4d_joint;
#endif

SK_ALWAYS_INLINE void lbs4d_joints(lbs4d_joint *jt, const sk_influences *in, int64_t v0, int n,
                                   sk_index_type it, int64_t n_joints, const double *prepared)
{
    const int32_t stride = SK_LBS_PREPARED_SIZE;
#ifdef __AVX512F__
    (void)prepared;
    if (!offsets4x4_vector(in, n, it)) {
        offsets_k(jt, in, v0, n, it, n_joints, stride, 4);
        return;
    }
    const char *ip = (const char *)in->indices.data + v0 * in->indices.row;
    _mm512_storeu_si512((void *)jt, offsets16(ip, 0, it, n_joints, stride));
#else
    if (!offsets4x4_vector(in, n, it)) {
        int32_t off[16];
        offsets_k(off, in, v0, n, it, n_joints, stride, 4);
        for (int s = 0; s < 4 * n; ++s) jt[s] = prepared + off[s];
        return;
    }
    const char *ip = (const char *)in->indices.data + v0 * in->indices.row;
    const __m256i b = _mm256_set1_epi64x((int64_t)(uintptr_t)prepared);
    for (int h = 0; h < 2; ++h) {
        const __m256i o = offsets8(ip, h, it, n_joints, stride);
        for (int q = 0; q < 2; ++q) {
            const __m128i o4 = q ? _mm256_extracti128_si256(o, 1) : _mm256_castsi256_si128(o);
            _mm256_storeu_si256((__m256i *)(jt + 8 * h + 4 * q),
                                _mm256_add_epi64(b, _mm256_slli_epi64(_mm256_cvtepi32_epi64(o4), 3)));
        }
    }
#endif
}

/* The joint row of slot k of lbs4d_joints' table. */
SK_ALWAYS_INLINE const double *lbs4d_row(const double *prepared, const lbs4d_joint *jt, int k)
{
#ifdef __AVX512F__
    return prepared + offset_of_pair(jt, k);
#else
    (void)prepared;
    return jt[k];
#endif
}

/* Chunked calls (SIMD_PADDED's copies of influences, SIMD_NARROWED's of joints): the number of
 * vertices (at most 15) after `begin` to the first whose positions' output starts a 64-byte
 * line.  The first chunk is longer by these, so that the others start on a line (else a
 * streaming kernel writes a partial block at both ends of every chunk). */
SK_ALWAYS_INLINE int chunk_head(const sk_stream *out_positions, int64_t begin)
{
    const char *op = (const char *)out_positions->data;
    int head = 0;
    while (head < 16 && ((uintptr_t)(op + (begin + head) * out_positions->row) & 63)) ++head;
    return head;
}

/* A chunk's job `sub`: its per-vertex streams (outputs, inputs, centers, blend) moved to
 * vertex v of the call's `job`. */
#define SIMD_MOVE_STREAMS(sub, job, v)                                                           \
    do {                                                                                         \
        sk_stream *to_[] = {&(sub).out_positions, &(sub).positions,   &(sub).out_normals,        \
                            &(sub).normals,       &(sub).out_tangents, &(sub).tangents,          \
                            &(sub).centers,       &(sub).blend};                                 \
        const sk_stream *from_[] = {&(job)->out_positions, &(job)->positions,                    \
                                    &(job)->out_normals,   &(job)->normals,                      \
                                    &(job)->out_tangents,  &(job)->tangents,                     \
                                    &(job)->centers,       &(job)->blend};                       \
        for (size_t s_ = 0; s_ < sizeof to_ / sizeof to_[0]; ++s_)                               \
            if (from_[s_]->data)                                                                 \
                to_[s_]->data = (char *)from_[s_]->data + (v) * from_[s_]->row;                  \
    } while (0)

/* The first lines of a kernel function `self`: a job that `cond` says goes in chunks through
 * the wrapper `chunked` (SIMD_PADDED's, SIMD_NARROWED's), which calls `self` again on each
 * chunk's job; else on to the lines after. */
#define SIMD_CHUNKED_OR_GO_ON(cond, job, begin, end, self, chunked)                              \
    do {                                                                                         \
        if (cond) {                                                                              \
            chunked(job, begin, end, self);                                                      \
            return;                                                                              \
        }                                                                                        \
    } while (0)

#ifdef __AVX512F__
/* ------------------------------------------------------------------------------------------
 * One to three influences a vertex (skinkit's own binders: `nearest` gives K = 1, `proximity`
 * and `projection` K = 2): on AVX-512, float32 LBS and DQS take their K = 4 loops, fed a chunk
 * of vertices at a time from copies of the influences padded to K = 4, the added slots a zero
 * weight on joint 0.  The K = 4 loops read a zero weight's joint and add its zero products as
 * the loops for any K do (SIMD_SLOT), and a blend that starts from +0 never holds -0, so the
 * bits are those of the influences padded by the caller.  Any index and weight types: the copy
 * converts them as the loops for any K read them (an index outside [0, J) becomes -1, which the
 * K = 4 loops read as joint 0; unorm weights w / 255 or w / 65535 in the kernel's type; SIMD_SLOT
 * in place of that copy's own reads took 1.05x the time of an int64-index call).
 * Against the loops for any K (Zen 5, paired, same bits), K = 1 / 2 / 3: float32 LBS with
 * normals 0.83 / 0.65 / 0.60x the time at 10k vertices, 0.75 / 0.65 / 0.59x at 100k, 0.91 /
 * 0.86 / 0.78x at 1M; float32 DQS 0.72 / 0.59 / 0.50x at 10k, 0.70 / 0.57 / 0.47x at 100k,
 * 0.86 / 0.74 / 0.61x at 1M; float64 DQS 0.88 / 0.67 / 0.53x at 10k-100k, 1.03 / 0.68 / 0.54x
 * at 1M.  At 1M the copies cost more than their share (float32 LBS with K = 2 takes 1.5x the
 * time of the same influences padded by the caller, 1.1x at 100k): reading the next chunk's
 * rows ahead, chunks of 256-4096 vertices, no non-temporal stores and no fence after each chunk
 * measured no better.  Left on the loops for any K, where the copies cost more than the K = 4
 * loops save: float64 LBS (1.36-1.45x the time at 1M), CoR (float32 1.25-1.42x) and the AVX2
 * path (float32 LBS 0.82-1.53x, DQS 0.75-1.71x).
 * ---------------------------------------------------------------------------------------- */

#define SIMD_PAD_JOB(job)                                                                        \
    ((job)->influences.indices.data && (job)->influences.k >= 1 && (job)->influences.k < 4 &&    \
     (job)->n_joints <= SK_SIMD_MAX_JOINTS_K4)

/* Lane 4 b + k of a K = 4 row <- element K b + k of K-element rows (k < K; the other lanes
 * are cleared by the keep masks), b = 0 .. 3. */
#define PAD_LANE(K, l) ((l) % 4 < (K) ? (K) * ((l) / 4) + (l) % 4 : 0)
#define PAD_LANES(K)                                                                             \
    {PAD_LANE(K, 0),  PAD_LANE(K, 1),  PAD_LANE(K, 2),  PAD_LANE(K, 3),                          \
     PAD_LANE(K, 4),  PAD_LANE(K, 5),  PAD_LANE(K, 6),  PAD_LANE(K, 7),                          \
     PAD_LANE(K, 8),  PAD_LANE(K, 9),  PAD_LANE(K, 10), PAD_LANE(K, 11),                         \
     PAD_LANE(K, 12), PAD_LANE(K, 13), PAD_LANE(K, 14), PAD_LANE(K, 15)}
static const _Alignas(64) int32_t pad_lanes32[3][16] = {PAD_LANES(1), PAD_LANES(2), PAD_LANES(3)};
#define PAD_LANES8(K)                                                                            \
    {PAD_LANE(K, 0), PAD_LANE(K, 1), PAD_LANE(K, 2), PAD_LANE(K, 3),                             \
     PAD_LANE(K, 4), PAD_LANE(K, 5), PAD_LANE(K, 6), PAD_LANE(K, 7)}
static const _Alignas(64) int64_t pad_lanes64[3][8] = {PAD_LANES8(1), PAD_LANES8(2), PAD_LANES8(3)};

/* Contiguous K-element rows (uint8, uint16 or int32 joints at ip, 4-byte or 8-byte weights at
 * wp) of vertices i .. i + nv - 1 (nv <= 4; a constant 4 but for the last step) -> K = 4 rows
 * of idx and w, zeros in slots K .. 3: masked loads (never past the rows' end) and a masked
 * permute per register. */
SK_ALWAYS_INLINE void pad_step(int32_t *idx, void *w, const char *ip, const char *wp, int i,
                               int nv, sk_index_type it, int size, const int K)
{
    const __mmask16 keep = (__mmask16)(K == 1 ? 0x1111 : K == 2 ? 0x3333 : 0x7777);
    const __mmask16 m = (__mmask16)((1u << (nv * K)) - 1);
    const __m512i lanes = _mm512_load_si512(pad_lanes32[K - 1]);
    const char *p = ip + index_size(it) * K * i;
    __m512i x;
    if (it == SK_INDEX_U8)
        x = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, p));
    else if (it == SK_INDEX_U16)
        x = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p));
    else
        x = _mm512_maskz_loadu_epi32(m, p);
    _mm512_store_si512(idx + 4 * i, _mm512_maskz_permutexvar_epi32(keep, lanes, x));
    if (size == 4) {
        const __m512 y = _mm512_maskz_loadu_ps(m, wp + 4 * K * i);
        _mm512_store_ps((float *)w + 4 * i, _mm512_maskz_permutexvar_ps(keep, lanes, y));
        return;
    }
    const __m512i lanes64 = _mm512_load_si512(pad_lanes64[K - 1]);
    for (int h = 0; h < 2; ++h) {
        const int nh = nv - 2 * h < 0 ? 0 : nv - 2 * h > 2 ? 2 : nv - 2 * h;
        const __m512d y = _mm512_maskz_loadu_pd((__mmask8)((1u << (nh * K)) - 1),
                                                wp + 8 * K * (i + 2 * h));
        _mm512_store_pd((double *)w + 4 * (i + 2 * h),
                        _mm512_maskz_permutexvar_pd((__mmask8)keep, lanes64, y));
    }
}

/* pad_step over n vertices, for a constant K. */
SK_ALWAYS_INLINE void pad_steps(int32_t *idx, void *w, const char *ip, const char *wp, int n,
                                sk_index_type it, int size, const int K)
{
    int i = 0;
    for (; i + 4 <= n; i += 4) pad_step(idx, w, ip, wp, i, 4, it, size, K);
    if (i < n) pad_step(idx, w, ip, wp, i, n - i, it, size, K);
}

/* pad_steps for K = 1, 2 or 3: a function of its own, whose loops keep their pointers in
 * registers (inlined in SIMD_PADDED's, GCC reloaded a pointer from the stack every step, behind
 * the step's stores to the stack: 7 cycles a step instead of 2). */
static __attribute__((noinline)) void pad_rows(int32_t *idx, void *w, const char *ip,
                                               const char *wp, int n, sk_index_type it, int size,
                                               int K)
{
    if (K == 1)
        pad_steps(idx, w, ip, wp, n, it, size, 1);
    else if (K == 2)
        pad_steps(idx, w, ip, wp, n, it, size, 2);
    else
        pad_steps(idx, w, ip, wp, n, it, size, 3);
}

/* Slots 0 .. 3 of vertices v0 .. v0 + n - 1 as K = 4 rows of int32 joints and T weights. */
#define SIMD_PAD_FILL(NAME, T, READ_W)                                                           \
    SK_ALWAYS_INLINE void NAME(int32_t *idx, T *w, const sk_influences *in, int64_t v0, int n,   \
                               int64_t J, const int K)                                           \
    {                                                                                            \
        const sk_index_type it = in->index_type;                                                 \
        const char *ip = (const char *)in->indices.data + v0 * in->indices.row;                  \
        const char *wp = (const char *)in->weights.data + v0 * in->weights.row;                  \
        if (indices_narrow_rows(in, K, it) && it != SK_INDEX_U32 &&                              \
            in->weight_type == SK_WEIGHT_FLOAT && weights_packed(in, K, sizeof(T))) {            \
            /* glTF's and skinkit's layouts: contiguous rows, joints as they are (below 2^31) */ \
            pad_rows(idx, w, ip, wp, n, it, sizeof(T), K);                                       \
            return;                                                                              \
        }                                                                                        \
        for (int i = 0; i < n; ++i)                                                              \
            for (int k = 0; k < 4; ++k) {                                                        \
                const char *ik = ip + i * in->indices.row + k * in->indices.elem;                \
                const char *wk = wp + i * in->weights.row + k * in->weights.elem;                \
                const uint64_t j = k < K ? (uint64_t)simd_index(ik, it) : 0;                     \
                idx[4 * i + k] = j < (uint64_t)J ? (int32_t)j : -1;                              \
                w[4 * i + k] = k < K ? READ_W(wk, in->weight_type) : 0;                          \
            }                                                                                    \
    }

/* Rows v0 .. v0 + n - 1 of a stream into the L2 cache, a line at a time. */
SK_ALWAYS_INLINE void pad_prefetch(const sk_stream *s, int64_t v0, int64_t n)
{
    if (s->row < 0) return;
    const char *p = (const char *)s->data + v0 * s->row;
    const ptrdiff_t bytes = (n - 1) * s->row + 8;
    for (ptrdiff_t b = 0; b < bytes; b += 64) _mm_prefetch(p + b, _MM_HINT_T1);
}

/* kernel(job, begin, end) through the padded copies: a job of K = 4 contiguous int32 joints
 * and float weights for each chunk of CHUNK vertices (the copies take 32 KB of float32's
 * stack, 24 KB of float64's), its per-vertex streams moved to the chunk's first vertex. */
#define SIMD_PADDED(NAME, FILL, JOB, T, CHUNK)                                                   \
    static __attribute__((noinline)) void NAME(const JOB *job, int64_t begin, int64_t end,       \
                                               void (*kernel)(const JOB *, int64_t, int64_t))    \
    {                                                                                            \
        _Alignas(64) int32_t idx[4 * (CHUNK + 16)];                                              \
        _Alignas(64) T w[4 * (CHUNK + 16)];                                                      \
        const sk_influences *in = &job->influences;                                              \
        JOB sub = *job;                                                                          \
        sub.influences = (sk_influences){{idx, 4 * sizeof(int32_t), sizeof(int32_t)},            \
                                         SK_INDEX_I32,                                           \
                                         {w, 4 * sizeof(T), sizeof(T)},                          \
                                         SK_WEIGHT_FLOAT,                                        \
                                         4};                                                     \
        int64_t head = chunk_head(&job->out_positions, begin);                                   \
        int n;                                                                                   \
        for (int64_t v = begin; v < end; v += n) {                                               \
            n = (int)(end - v < CHUNK + head ? end - v : CHUNK + head);                          \
            head = 0;                                                                            \
            switch (in->k) { /* constant K: the strided copy took 1.05-1.07x the time without */ \
            case 1: FILL(idx, w, in, v, n, job->n_joints, 1); break;                             \
            case 2: FILL(idx, w, in, v, n, job->n_joints, 2); break;                             \
            default: FILL(idx, w, in, v, n, job->n_joints, 3); break;                            \
            }                                                                                    \
            SIMD_MOVE_STREAMS(sub, job, v);                                                      \
            const int64_t next = end - v - n < CHUNK ? end - v - n : CHUNK;                      \
            if (next > 0) { /* the next chunk's rows, read while this one runs */                \
                pad_prefetch(&in->indices, v + n, next);                                         \
                pad_prefetch(&in->weights, v + n, next);                                         \
            }                                                                                    \
            kernel(&sub, 0, n);                                                                  \
        }                                                                                        \
    }

SIMD_PAD_FILL(pad_fill_f32, float, simd_weight_f32)
SIMD_PAD_FILL(pad_fill_f64, double, simd_weight_f64)
SIMD_PADDED(padded_f32, pad_fill_f32, sk_skin_job_f32, float, 1024)
SIMD_PADDED(padded_f64, pad_fill_f64, sk_skin_job_f64, double, 512)

/* Jobs of 1-3 influences a vertex through `self` again, padded. */
#define SIMD_PAD_OR_GO_ON(job, begin, end, self, padded)                                         \
    SIMD_CHUNKED_OR_GO_ON(SIMD_PAD_JOB(job), job, begin, end, self, padded)
#else /* AVX2: the loops for any K (see above) */
#define SIMD_PAD_OR_GO_ON(job, begin, end, self, padded) ((void)0)
#endif

/* ------------------------------------------------------------------------------------------
 * int64 and uint32 joints (int64 is NumPy's default integer: argsort, argpartition and
 * torch's long give it) with K = 4 or 8: the kernels have instances for uint8, uint16 and
 * int32 only, and took the loops that read each slot's index through a switch (float32 with
 * normals at 100k on a Zen 4 VM: LBS 1.6-2.6x the time of int32 joints, DQS 1.5x, K = 8 3x).  Instead the joints are
 * narrowed to int32 a chunk at a time into a stack copy (an index outside [0, J) becomes -1,
 * which the int32 instances read as joint 0, as the loops for any type read it), and the same
 * kernel runs on the chunk with every other per-vertex stream read and written in place, so
 * the bits are those of int32 joints.  The first chunk is longer by up to 15 vertices so that
 * the others start where the positions' output is 64-byte aligned (as SIMD_PADDED's).  Float32
 * LBS with int64 joints then took 0.55x its earlier time at 100k and 0.69x at 1M, K = 8 0.47x,
 * DQS 0.80-0.89x, CoR 0.88x, float64 LBS 0.65x (paired, same bits); 1.2-1.5x int32's time
 * remains, the copy's pass over twice the bytes (chunks of 2048 and prefetching the next
 * chunk's joints measured no better).
 * ---------------------------------------------------------------------------------------- */

#define SIMD_NARROW_CHUNK 512

/* `u32_k4`: uint32 joints with K = 4 too (LBS's K = 4 loops read uint32 rows by the vector
 * loads int32's take, and narrowed took 1.02-1.07x the time; DQS 0.88x, K = 8 0.48x). */
#define SIMD_NARROW_JOB(job, u32_k4)                                                             \
    ((job)->influences.indices.data && (job)->n_joints <= SK_SIMD_MAX_JOINTS_K4 &&               \
     (((job)->influences.index_type == SK_INDEX_I64 &&                                           \
       ((job)->influences.k == 4 || (job)->influences.k == 8)) ||                                \
      ((job)->influences.index_type == SK_INDEX_U32 &&                                           \
       ((job)->influences.k == 8 || ((u32_k4) && (job)->influences.k == 4)))))

/* Slots 0 .. K - 1 of vertices v0 .. v0 + n - 1 of int64 or uint32 joints as contiguous int32
 * rows, -1 outside [0, J): loops the compiler vectorizes where the rows are contiguous, and one
 * per type for other strides (a switch per index took 1.7x the time in Fortran order, 1.5x
 * for the rows of a slice: float32 LBS with normals, 100k). */
static __attribute__((noinline)) void narrow_joints(int32_t *dst, const sk_influences *in,
                                                    int64_t v0, int n, int64_t n_joints)
{
    const int K = (int)in->k;
    const char *ip = (const char *)in->indices.data + v0 * in->indices.row;
    const uint64_t J = (uint64_t)n_joints;
    const int64_t count = (int64_t)K * n;
    if (in->index_type == SK_INDEX_I64 && in->indices.elem == 8 && in->indices.row == 8 * K) {
        const int64_t *q = (const int64_t *)ip; /* (a negative index is huge once unsigned) */
        for (int64_t s = 0; s < count; ++s) dst[s] = (uint64_t)q[s] < J ? (int32_t)q[s] : -1;
    } else if (in->index_type == SK_INDEX_U32 && in->indices.elem == 4 &&
               in->indices.row == 4 * K) {
        const uint32_t *q = (const uint32_t *)ip, J32 = (uint32_t)J;
        for (int64_t s = 0; s < count; ++s) dst[s] = q[s] < J32 ? (int32_t)q[s] : -1;
    } else if (in->index_type == SK_INDEX_I64) { /* strided: Fortran order, a slice's rows */
        for (int i = 0; i < n; ++i)
            for (int k = 0; k < K; ++k) {
                const uint64_t j =
                    (uint64_t)*(const int64_t *)(ip + i * in->indices.row + k * in->indices.elem);
                dst[K * i + k] = j < J ? (int32_t)j : -1;
            }
    } else {
        for (int i = 0; i < n; ++i)
            for (int k = 0; k < K; ++k) {
                const uint64_t j =
                    *(const uint32_t *)(ip + i * in->indices.row + k * in->indices.elem);
                dst[K * i + k] = j < J ? (int32_t)j : -1;
            }
    }
}

#define SIMD_NARROWED(NAME, JOB)                                                                 \
    static __attribute__((noinline)) void NAME(const JOB *job, int64_t begin, int64_t end,       \
                                               void (*kernel)(const JOB *, int64_t, int64_t))    \
    {                                                                                            \
        _Alignas(64) int32_t idx[8 * (SIMD_NARROW_CHUNK + 16)];                                  \
        const int K = (int)job->influences.k;                                                    \
        JOB sub = *job;                                                                          \
        sub.influences.indices = (sk_stream){idx, K * (ptrdiff_t)sizeof(int32_t),                \
                                             sizeof(int32_t)};                                   \
        sub.influences.index_type = SK_INDEX_I32;                                                \
        int64_t head = chunk_head(&job->out_positions, begin);                                   \
        int n;                                                                                   \
        for (int64_t v = begin; v < end; v += n) {                                               \
            n = (int)(end - v < SIMD_NARROW_CHUNK + head ? end - v : SIMD_NARROW_CHUNK + head);  \
            head = 0;                                                                            \
            narrow_joints(idx, &job->influences, v, n, job->n_joints);                           \
            SIMD_MOVE_STREAMS(sub, job, v);                                                      \
            sub.influences.weights.data =                                                        \
                (char *)job->influences.weights.data + v * job->influences.weights.row;          \
            kernel(&sub, 0, n);                                                                  \
        }                                                                                        \
    }

SIMD_NARROWED(narrowed_f32, sk_skin_job_f32)
SIMD_NARROWED(narrowed_f64, sk_skin_job_f64)

/* Float32 rigid skinning's int64 joints (np.argmax gives them), J < 65535: narrowed the same
 * way to uint16, whose instance alone reads them by rows (an index outside [0, J), a negative
 * one included, becomes 65535, which that instance copies as the loop for any type copies it).
 * 0.75 / 0.88 / 0.92x the time at 100k / 10k / 1M on a Zen 4 VM (paired, same bits); other
 * types measured 0.95-1.08x, float64 1.00x, and keep the loop for any type. */
#define SIMD_NARROW_RIGID_JOB(job)                                                               \
    ((job)->rigid_indices.data && (job)->rigid_index_type == SK_INDEX_I64 &&                     \
     (job)->n_joints < 65535)

static __attribute__((noinline)) void narrow_rigid_joints(uint16_t *dst, const sk_stream *s,
                                                          int64_t v0, int n, int64_t n_joints)
{
    const char *ip = (const char *)s->data + v0 * s->row;
    const uint64_t J = (uint64_t)n_joints;
    if (s->row == sizeof(int64_t)) { /* contiguous: a loop the compiler vectorizes */
        const int64_t *q = (const int64_t *)ip;
        for (int i = 0; i < n; ++i) dst[i] = (uint64_t)q[i] < J ? (uint16_t)q[i] : 65535;
        return;
    }
    for (int i = 0; i < n; ++i) {
        int64_t j;
        memcpy(&j, ip + i * s->row, sizeof j);
        dst[i] = (uint64_t)j < J ? (uint16_t)j : 65535;
    }
}

#define SIMD_NARROWED_RIGID(NAME, JOB)                                                           \
    static __attribute__((noinline)) void NAME(const JOB *job, int64_t begin, int64_t end,       \
                                               void (*kernel)(const JOB *, int64_t, int64_t))    \
    {                                                                                            \
        _Alignas(64) uint16_t idx[4 * SIMD_NARROW_CHUNK + 16];                                   \
        JOB sub = *job;                                                                          \
        sub.rigid_indices = (sk_stream){idx, sizeof(uint16_t), sizeof(uint16_t)};               \
        sub.rigid_index_type = SK_INDEX_U16;                                                     \
        int64_t head = chunk_head(&job->out_positions, begin);                                   \
        int n;                                                                                   \
        for (int64_t v = begin; v < end; v += n) {                                               \
            n = (int)(end - v < 4 * SIMD_NARROW_CHUNK + head ? end - v                           \
                                                             : 4 * SIMD_NARROW_CHUNK + head);    \
            head = 0;                                                                            \
            narrow_rigid_joints(idx, &job->rigid_indices, v, n, job->n_joints);                  \
            SIMD_MOVE_STREAMS(sub, job, v);                                                      \
            kernel(&sub, 0, n);                                                                  \
        }                                                                                        \
    }

SIMD_NARROWED_RIGID(narrowed_rigid_f32, sk_skin_job_f32)

#define SIMD_NARROW_RIGID_OR_GO_ON(job, begin, end, self, narrowed)                              \
    SIMD_CHUNKED_OR_GO_ON(SIMD_NARROW_RIGID_JOB(job), job, begin, end, self, narrowed)

/* Before SIMD_PAD_OR_GO_ON: jobs of int64 or uint32 joints through `self` again, narrowed. */
#define SIMD_NARROW_OR_GO_ON(job, begin, end, self, narrowed, u32_k4)                            \
    SIMD_CHUNKED_OR_GO_ON(SIMD_NARROW_JOB(job, u32_k4), job, begin, end, self, narrowed)

/* The DQS entry points.  AVX-512: K = 1-3 through padded copies (SIMD_PAD_OR_GO_ON), the loops
 * inlined.  AVX2: K = 1-3 through SIMD_FEW_K's instances, the other K through a function of
 * their own (with SIMD_FEW_K's calls in the same function as the inlined loops, float32 DQS
 * with K = 4 took 1.22-1.28x the time on a Zen 4 VM: the same loops, other stack offsets). */
#ifdef __AVX512F__
#define SIMD_DQS_ENTRY(T, fn, JOB)                                                               \
    void SK_ISA(sk_dqs, T)(const JOB *job, int64_t begin, int64_t end)                           \
    {                                                                                            \
        SIMD_NARROW_OR_GO_ON(job, begin, end, SK_ISA(sk_dqs, T), narrowed##T, 1);                \
        SIMD_PAD_OR_GO_ON(job, begin, end, SK_ISA(sk_dqs, T), padded##T);                        \
        SIMD_DISPATCH_DQS(fn, job, begin, end);                                                  \
    }
#else
#define SIMD_DQS_ENTRY(T, fn, JOB)                                                               \
    SIMD_INSTANCES_FEW_K(fn, JOB)                                                                \
    static __attribute__((noinline)) void fn##_any_k(const JOB *job, int64_t begin, int64_t end) \
    {                                                                                            \
        SIMD_DISPATCH_DQS(fn, job, begin, end);                                                  \
    }                                                                                            \
    void SK_ISA(sk_dqs, T)(const JOB *job, int64_t begin, int64_t end)                           \
    {                                                                                            \
        SIMD_NARROW_OR_GO_ON(job, begin, end, SK_ISA(sk_dqs, T), narrowed##T, 1);                \
        SIMD_FEW_K(fn, job, begin, end);                                                         \
        fn##_any_k(job, begin, end);                                                             \
    }
#endif

/* float32 LBS, K = 4 (AVX2: each K of LBS8_OFFSETS): the weights' sums come with the blends
 * (lane 15 of a joint's row is 1, sk.h), in lane 3 of each vertex's translation column; `lanes`
 * holds a compare's result for the block, four bits a vertex, of which bit 4 i + 3 is vertex
 * i's sum at most 1e-6 (or NaN; padding blends to zero).  Returns those vertices' bits. */
SK_ALWAYS_INLINE unsigned sums_to_vertices(uint64_t lanes, int count)
{
    unsigned bits = 0;
    lanes &= 0x8888888888888888ull;
    for (int i = 0; lanes && i < count; ++i) /* rare: only where some vertex is copied */
        if (lanes >> (4 * i + 3) & 1) bits |= 1u << i;
    return bits;
}

#ifdef __AVX512F__

/* ==========================================================================================
 * float32 LBS, AVX-512: 16 vertices per block, one vertex's blended 3x4 per zmm register.
 * ======================================================================================== */

typedef struct {
    __m512i xyz[3];    /* component c: [c of vertex 0 | 1 | 2 | 3], four lanes each, from a
                        * group's 12 floats in lanes 0-11 (lbs16_group) */
    __m512i pack[3];   /* output register r from the group sums r and r + 1 */
    __m512i spread[3]; /* output register r lane -> the lane of its vertex among 16 norms */
} lbs16_tables;

/* Sixteen lanes of a table from its formula F(row, lane), as a constant initializer: the tables
 * are compile-time constants, loaded by each range call (built there lane by lane, they cost
 * about 55 ns a range: 0.8 us of each thread's 16 chunks in a 2-thread 100k-vertex LBS call). */
#define SK_LANES16(F, r)                                                                         \
    {F(r, 0), F(r, 1), F(r, 2),  F(r, 3),  F(r, 4),  F(r, 5),  F(r, 6),  F(r, 7),                \
     F(r, 8), F(r, 9), F(r, 10), F(r, 11), F(r, 12), F(r, 13), F(r, 14), F(r, 15)}
#define SK_ROWS3(F) {SK_LANES16(F, 0), SK_LANES16(F, 1), SK_LANES16(F, 2)}

/* xyz: lane l <- float 3 (l / 4) + c, component c of vertex l / 4's 12 floats */
#define LBS16_XYZ(c, l) (3 * ((l) / 4) + (c))
/* pack: output register r's float f is component e % 3 of vertex e / 3 (e = 16 r + f), found
 * in group sum r or r + 1 (vertex v's: group v / 4, block v % 4) */
#define LBS16_E(r, f) (16 * (r) + (f))
#define LBS16_PACK(r, f)                                                                         \
    ((LBS16_E(r, f) / 3 / 4 - (r)) * 16 + 4 * (LBS16_E(r, f) / 3 % 4) + LBS16_E(r, f) % 3)
/* spread: output register r's float f <- the lane of its vertex among lbs16_inv_norms' 16 */
#define LBS16_SPREAD(r, f) (4 * (LBS16_E(r, f) / 3 % 4) + LBS16_E(r, f) / 3 / 4)

static const _Alignas(64) int32_t lbs16_table_xyz[3][16] = SK_ROWS3(LBS16_XYZ);
static const _Alignas(64) int32_t lbs16_table_pack[3][16] = SK_ROWS3(LBS16_PACK);
static const _Alignas(64) int32_t lbs16_table_spread[3][16] = SK_ROWS3(LBS16_SPREAD);

static void lbs16_make_tables(lbs16_tables *tb)
{
    for (int r = 0; r < 3; ++r) {
        tb->xyz[r] = _mm512_load_si512(lbs16_table_xyz[r]);
        tb->pack[r] = _mm512_load_si512(lbs16_table_pack[r]);
        tb->spread[r] = _mm512_load_si512(lbs16_table_spread[r]);
    }
}

/* m = sum_k w_k K[j_k] and, with `normals`, c = sum_k w_k cof[j_k] (column-major, padded; c is
 * left unwritten without); returns sum_k w_k. */
SK_ALWAYS_INLINE float lbs16_blend(__m512 *m, __m512 *c, const sk_skin_job_f32 *job, int64_t v,
                                   const int32_t *off, sk_index_type it, int64_t kk,
                                   sk_weight_type wt, int normals)
{
    if (kk == SIMD_RIGID) { /* one joint, weight 1 (m = K[j] exactly); j < 0 or >= J: copied */
        const int64_t j = simd_index((const char *)job->rigid_indices.data +
                                     v * job->rigid_indices.row, it);
        /* each output written once on each branch (no zeroing the compiler turns into a memset) */
        if (j < 0 || j >= job->n_joints) {
            *m = _mm512_setzero_ps();
            if (normals) *c = _mm512_setzero_ps();
            return 0;
        }
        *m = _mm512_loadu_ps(job->prepared + SK_LBS_PREPARED_SIZE * j);
        if (normals) *c = _mm512_loadu_ps(job->prepared + SK_LBS_PREPARED_SIZE * j + 16);
        return 1;
    }
    const sk_influences *in = &job->influences;
    const char *ip = (const char *)in->indices.data + v * in->indices.row;
    const char *wp = (const char *)in->weights.data + v * in->weights.row;
    __m512 am = _mm512_setzero_ps(), ac = _mm512_setzero_ps();
    float total = 0;
    if (kk == 4) { /* float weights, joints from offsets_k, sums from lane 15 (lbs16_block) */
        for (int k = 0; k < 4; ++k) {
            const __m512 wv = _mm512_set1_ps(*(const float *)(wp + k * in->weights.elem));
            const float *pj = job->prepared + offset_of_pair(off, k);
            am = _mm512_fmadd_ps(wv, _mm512_loadu_ps(pj), am);
            if (normals) ac = _mm512_fmadd_ps(wv, _mm512_loadu_ps(pj + 16), ac);
        }
        *m = am;
        if (normals) *c = ac;
        return 1;
    }
    const int64_t K = kk ? kk : in->k;
    for (int64_t k = 0; k < K; ++k) {
        float w;
        int64_t j;
        const float *pj;
        if (kk == 8) { /* float weights, joints from offsets_k */
            w = *(const float *)(wp + k * in->weights.elem);
            pj = job->prepared + off[k];
        } else {
            SIMD_SLOT(simd_weight_f32, in, ip, wp, k, it, wt, job->n_joints, w, j);
            pj = job->prepared + SK_LBS_PREPARED_SIZE * j;
        }
        const __m512 wv = _mm512_set1_ps(w);
        total += w;
        am = _mm512_fmadd_ps(wv, _mm512_loadu_ps(pj), am);
        if (normals) ac = _mm512_fmadd_ps(wv, _mm512_loadu_ps(pj + 16), ac);
    }
    *m = am;
    if (normals) *c = ac;
    return total;
}

/* Four vertices' 3x4s, one per register as columns [c0 | c1 | c2 | c3], -> col[c] = [c of
 * vertex 0 | 1 | 2 | 3]: a 4x4 transpose of 128-bit blocks. */
SK_ALWAYS_INLINE void lbs16_columns(__m512 col[4], const __m512 m[4])
{
    const __m512 t0 = _mm512_shuffle_f32x4(m[0], m[1], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 t1 = _mm512_shuffle_f32x4(m[0], m[1], _MM_SHUFFLE(3, 2, 3, 2));
    const __m512 t2 = _mm512_shuffle_f32x4(m[2], m[3], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 t3 = _mm512_shuffle_f32x4(m[2], m[3], _MM_SHUFFLE(3, 2, 3, 2));
    col[0] = _mm512_shuffle_f32x4(t0, t2, _MM_SHUFFLE(2, 0, 2, 0));
    col[1] = _mm512_shuffle_f32x4(t0, t2, _MM_SHUFFLE(3, 1, 3, 1));
    col[2] = _mm512_shuffle_f32x4(t1, t3, _MM_SHUFFLE(2, 0, 2, 0));
    col[3] = _mm512_shuffle_f32x4(t1, t3, _MM_SHUFFLE(3, 1, 3, 1));
}

/* Group g's 12 floats (floats 12 g .. 12 g + 11 of the block's 48 in in[]) in lanes 0-11. */
SK_ALWAYS_INLINE __m512 lbs16_group(const __m512 in[3], int g)
{
    switch (g) {
    case 0: return in[0];
    case 1: return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(in[1]),
                                                            _mm512_castps_si512(in[0]), 12));
    case 2: return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(in[2]),
                                                            _mm512_castps_si512(in[1]), 8));
    default: return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(in[2]),
                                                             _mm512_castps_si512(in[2]), 4));
    }
}

/* Group g's four vertices times their 3x4s (col, from lbs16_columns), each vertex's result in
 * its 128-bit block: x c0 + y c1 + z c2 (+ c3 for a point), as three multiply-adds.  in[] holds
 * the block's 48 input floats.  Single-source permutes of the group's floats: three tables
 * for all groups rather than three per group (which the compiler spilled and reloaded every
 * block), and no register copies (permutex2var overwrites an operand); 5-9% less time per
 * vertex at 10k-1M. */
SK_ALWAYS_INLINE __m512 lbs16_apply(const lbs16_tables *tb, int g, const __m512 col[4],
                                    const __m512 in[3], int point)
{
    const __m512 q = lbs16_group(in, g);
    const __m512 x = _mm512_permutexvar_ps(tb->xyz[0], q);
    const __m512 y = _mm512_permutexvar_ps(tb->xyz[1], q);
    const __m512 z = _mm512_permutexvar_ps(tb->xyz[2], q);
    const __m512 a = point ? _mm512_fmadd_ps(col[0], x, col[3]) : _mm512_mul_ps(col[0], x);
    return _mm512_fmadd_ps(col[2], z, _mm512_fmadd_ps(col[1], y, a));
}

/* 1 / sqrt(x) where x > 0, else 1 (so that a zero vector stays zero): the 14-bit estimate and one
 * Newton step, y (1.5 - 0.5 x y^2), good to about 2 units in the last place.  A division and a
 * square root of a whole zmm register would cost more than the rest of the normals' work. */
SK_ALWAYS_INLINE __m512 lbs16_rsqrt(__m512 x)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ);
    __m512 y = _mm512_rsqrt14_ps(x);
    __m512 hxy = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), y);
    __m512 t = _mm512_fnmadd_ps(hxy, y, _mm512_set1_ps(1.5f));
    return _mm512_mask_mul_ps(one, pos, y, t);
}

/* 1 / |n| for the 16 vertices of four group sums (lane 4 b + g: vertex 4 g + b); 1 where
 * |n| = 0 so that a zero vector stays zero.  |n|^2 = (x^2 + z^2) + (y^2 + 0) for every vertex. */
SK_ALWAYS_INLINE __m512 lbs16_inv_norms(const __m512 y[4])
{
    __m512 s0 = _mm512_mul_ps(y[0], y[0]), s1 = _mm512_mul_ps(y[1], y[1]);
    __m512 s2 = _mm512_mul_ps(y[2], y[2]), s3 = _mm512_mul_ps(y[3], y[3]);
    __m512 t0 = _mm512_add_ps(_mm512_unpacklo_ps(s0, s1), _mm512_unpackhi_ps(s0, s1));
    __m512 t1 = _mm512_add_ps(_mm512_unpacklo_ps(s2, s3), _mm512_unpackhi_ps(s2, s3));
    __m512 n2 = _mm512_add_ps(_mm512_shuffle_ps(t0, t1, 0x44), _mm512_shuffle_ps(t0, t1, 0xEE));
    return lbs16_rsqrt(n2);
}

SK_ALWAYS_INLINE void store48(float *p, const __m512 r[3], int stream)
{
    if (stream) {
        _mm512_stream_ps(p, r[0]);
        _mm512_stream_ps(p + 16, r[1]);
        _mm512_stream_ps(p + 32, r[2]);
    } else {
        _mm512_storeu_ps(p, r[0]);
        _mm512_storeu_ps(p + 16, r[1]);
        _mm512_storeu_ps(p + 32, r[2]);
    }
}



/* A block's normals: stored, or left in on_regs for the caller to stream (lbs16_blocks). */
SK_ALWAYS_INLINE void put_normals48(float *nout, const __m512 on[3], __m512 *on_regs)
{
    if (on_regs) {
#pragma GCC unroll 3
        for (int r = 0; r < 3; ++r) on_regs[r] = on[r];
    } else {
        store48(nout, on, 0);
    }
}

/* Four registers of four 4-float blocks: element k of block b of register g <-> element g of
 * block b of register k (its own inverse).  Four rows of 4 per register (one vertex's slots)
 * become one register per slot, vertex 4 q + b in lane 4 b + q. */
SK_ALWAYS_INLINE void transpose_blocks16(__m512 r[4])
{
    const __m512 a = _mm512_unpacklo_ps(r[0], r[1]), b = _mm512_unpackhi_ps(r[0], r[1]);
    const __m512 c = _mm512_unpacklo_ps(r[2], r[3]), d = _mm512_unpackhi_ps(r[2], r[3]);
    r[0] = _mm512_shuffle_ps(a, c, _MM_SHUFFLE(1, 0, 1, 0));
    r[1] = _mm512_shuffle_ps(a, c, _MM_SHUFFLE(3, 2, 3, 2));
    r[2] = _mm512_shuffle_ps(b, d, _MM_SHUFFLE(1, 0, 1, 0));
    r[3] = _mm512_shuffle_ps(b, d, _MM_SHUFFLE(3, 2, 3, 2));
}

/* Lane l of transpose_blocks16's slot registers -> bit of vertex 4 (l % 4) + l / 4. */
SK_ALWAYS_INLINE unsigned lanes_to_vertices16(unsigned lanes)
{
    unsigned bits = 0;
    for (int l = 0; lanes && l < 16; ++l) /* rare: only where some lane is set */
        if (lanes >> l & 1) bits |= 1u << (4 * (l & 3) + l / 4);
    return bits;
}

/* Bit i set for each of 16 vertices whose weights sum to <= 1e-6 (or NaN), from their K slots
 * w[k] (transpose_blocks16's layout): the sums ((w0 + w1) + w2) + ..., the same operations in
 * the same order as the per-slot loops, so the same decisions. */
SK_ALWAYS_INLINE unsigned small16(const __m512 *w, int K)
{
    __m512 t = w[0];
    for (int k = 1; k < K; ++k) t = _mm512_add_ps(t, w[k]);
    return lanes_to_vertices16(
        ~(unsigned)_mm512_cmp_ps_mask(t, _mm512_set1_ps(1e-6f), _CMP_GT_OQ) & 0xffffu);
}

/* One vertex's blend in the common case (glTF's layout, a rigid palette): K = 4 (or 8)
 * contiguous float weights `w`, each slot's joint row at `prepared` + its offset o[k]
 * (offsets_k), read by the multiply-add with an index register.  The same operations in the same order as
 * lbs16_blend.  The load ports bound this loop on Cascade Lake (four rows, four broadcast
 * weights and four offsets a vertex): the offsets read two to a load (offset_of_pair) took
 * 0.94-0.98x the time at 4k and 100k vertices, 0.96-1.0x at 1M (paired A/Bs).  (Row pointers
 * made a block ahead instead of offsets, to save the index register, took 6-11% more time on
 * Zen 5 and 6-10% on Cascade Lake: the pointers are twice the stores and loads, and making
 * them twice the work.)  On the Zen 5 VM, which loads two vectors a cycle whatever their width
 * (a 512-bit load across a cache line counts twice) and runs two multiply-adds, two cross-lane
 * permutes and four in-lane shuffles a cycle: with no weights' broadcasts the loop took 0.9x the
 * time, with no rows' loads 0.8x (standalone copy, 8k vertices); yet the weights from one
 * 128-bit broadcast and an in-lane permute a slot took 1.02x, each offset by a load of its own
 * 0.98-1.02x, and the blend summed as two pairs (other bits) 1.02x, paired at 100k and 1M. */
SK_ALWAYS_INLINE __m512 lbs16_blend_rows(const float *prepared, const int32_t *o, const float *w,
                                        const int K)
{
    if (K == 8) { /* K = 8 contiguous float weights: the offsets one by one */
        __m512 am = _mm512_setzero_ps();
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k)
            am = _mm512_fmadd_ps(_mm512_set1_ps(w[k]), _mm512_loadu_ps(prepared + o[k]), am);
        return am;
    }
    const float *r0 = prepared + offset_of_pair(o, 0), *r1 = prepared + offset_of_pair(o, 1),
                *r2 = prepared + offset_of_pair(o, 2), *r3 = prepared + offset_of_pair(o, 3);
    __m512 am = _mm512_fmadd_ps(_mm512_set1_ps(w[0]), _mm512_loadu_ps(r0), _mm512_setzero_ps());
    am = _mm512_fmadd_ps(_mm512_set1_ps(w[1]), _mm512_loadu_ps(r1), am);
    am = _mm512_fmadd_ps(_mm512_set1_ps(w[2]), _mm512_loadu_ps(r2), am);
    return _mm512_fmadd_ps(_mm512_set1_ps(w[3]), _mm512_loadu_ps(r3), am);
}

/* Every vertex's blend, with or without the cofactors' (a constant, so that the loop tests
 * nothing per vertex): a rolled loop keeps the code small enough for the instruction cache, and
 * out-of-order execution overlaps the vertices.  Padding (i >= n) gets zeros. */
SK_ALWAYS_INLINE unsigned lbs16_blends(__m512 *mb, __m512 *cb, const sk_skin_job_f32 *job,
                                       int64_t v0, int n, const int32_t *off, sk_index_type it,
                                       int64_t kk, sk_weight_type wt, const int cof)
{
    unsigned small = 0;
#pragma GCC unroll 1
    for (int i = 0; i < 16; ++i) {
        float total = 0;
        if (i < n)
            total = lbs16_blend(&mb[i], &cb[i], job, v0 + i, off + (kk == 8 ? 8 : 4) * i, it, kk,
                                wt, cof);
        else if (cof)
            mb[i] = cb[i] = _mm512_setzero_ps();
        else
            mb[i] = _mm512_setzero_ps();
        if (kk != 4 && !(total > 1e-6f)) small |= 1u << i;
    }
    return small;
}

/* Vertices v0 .. v0 + n - 1 (n <= 16; the rest of the block is padding): inputs pin / nin and
 * outputs pout / nout hold 48 floats each (nin, nout NULL without normals).  All inputs are read
 * before any output is written, so out = positions works. */
/* The joints of 16 vertices' K = 4 or 8 slots: offsets_k's offsets; for rigid skinning one
 * offset a vertex, and the vertices whose index is outside [0, J) (not skinned: copied). */
typedef struct {
    int32_t off[128];
    unsigned copy;
} lbs16_joints;

SK_ALWAYS_INLINE void lbs16_joints_of(lbs16_joints *jt, const sk_skin_job_f32 *job, int64_t v0,
                                      int n, sk_index_type it, int K)
{
    offsets_k(jt->off, &job->influences, v0, n, it, job->n_joints, SK_LBS_PREPARED_SIZE, K);
}

/* Rigid skinning by blocks of rows (lbs16_range's rows): contiguous indices of 32 bits or
 * fewer, offsets that fit 32 bits. */
SK_ALWAYS_INLINE int rigid_rows_job(const sk_skin_job_f32 *job, sk_index_type it)
{
    return index_narrow(it) && job->rigid_indices.row == index_size(it) &&
           job->n_joints <= SK_SIMD_MAX_JOINTS_K4;
}

/* The joints of the 16 vertices from v0, made a block ahead: for rigid skinning (rows) one
 * offset a vertex, an index outside [0, J) copied as lbs16_blend's rigid case does; else K = 4
 * or 8 slots. */
SK_ALWAYS_INLINE void lbs16_joints_ahead(lbs16_joints *jt, const sk_skin_job_f32 *job, int64_t v0,
                                         sk_index_type it, int64_t kk)
{
    if (kk != SIMD_RIGID) {
        lbs16_joints_of(jt, job, v0, 16, it, (int)kk);
        return;
    }
    __mmask16 in_range;
    _mm512_storeu_si512((void *)jt->off,
                        offsets16_masked((const char *)job->rigid_indices.data +
                                             v0 * job->rigid_indices.row,
                                         0, it, job->n_joints, SK_LBS_PREPARED_SIZE, &in_range));
    jt->copy = ~(unsigned)in_range & 0xffffu;
}

/* The packed registers r of a block's outputs given the input rows `in` of the vertices in
 * `small` (bit i: vertex i, copied through). */
SK_ALWAYS_INLINE void copy_through48(__m512 r[3], unsigned small, const __m512 in[3])
{
    uint64_t copy = 0; /* three bits per vertex: its lanes in the packed output */
    for (int i = 0; small && i < 16; ++i)
        if (small >> i & 1) copy |= (uint64_t)7 << (3 * i);
    if (!copy) return;
#pragma GCC unroll 3
    for (int k = 0; k < 3; ++k)
        r[k] = _mm512_mask_blend_ps((__mmask16)(copy >> (16 * k)), r[k], in[k]);
}

SK_ALWAYS_INLINE void lbs16_block(const sk_skin_job_f32 *job, const lbs16_tables *tb, int64_t v0,
                                  int n, const lbs16_joints *ahead, const float *pin,
                                  const float *nin, float *pout, float *nout, int stream_p,
                                  __m512 *on_regs, int rigid, sk_index_type it,
                                  int64_t kk, sk_weight_type wt, const int rows_known)
{
    const int normals = nin != NULL;
    __m512 p[3], nv[3] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int r = 0; r < 3; ++r) p[r] = _mm512_loadu_ps(pin + 16 * r);
    if (normals)
        for (int r = 0; r < 3; ++r) nv[r] = _mm512_loadu_ps(nin + 16 * r);
    /* Every vertex's blend, then the products and sums, unrolled so that every shuffle has
     * constant operands. */
    __m512 mb[16], cb[16];
    unsigned small = 0;
    /* The common case blends each group of four vertices right before its products, so that
     * the blends' loads and multiply-adds overlap the products' shuffles.  Also K = 8 (packed
     * float weights; the weights' sums then from the groups' translation columns as K = 4's,
     * the same sums in the same order as lbs16_blend's scalar total): 0.80x the time of
     * blending the block's sixteen vertices first at 10k-100k vertices, 0.82-0.83x at 1M, with
     * normals (a rigid palette) and positions only, same bits (Zen 5, paired). */
    const sk_influences *in = &job->influences;
    const int by_group = rows_known || ((kk == 4 || kk == 8) && (!normals || rigid) && n == 16 &&
                                        weights_packed(in, (int)kk, 4));
    const int rigid_rows = kk == SIMD_RIGID && rows_known; /* one row a vertex, by groups */
    /* K = 4 and 8: the joints from the caller (computed a block ahead: read right after their
     * vector stores, store forwarding fails; 10-15% of a block with K = 4, 15-19% with K = 8),
     * else here */
    lbs16_joints own;
    const lbs16_joints *jt = ahead ? ahead : &own;
    if (kk == 4 || kk == 8)
        if (!ahead) lbs16_joints_of(&own, job, v0, n, it, (int)kk);
    const float *w = by_group && !rigid_rows ? (const float *)in->weights.data + kk * v0 : NULL;
    if (!by_group) { /* (by groups: each group blends right before its products, below) */
        if (normals && !rigid)
            small |= lbs16_blends(mb, cb, job, v0, n, jt->off, it, kk, wt, 1);
        else /* positions only, or normals by the matrices themselves: no cofactor blend */
            small |= lbs16_blends(mb, cb, job, v0, n, jt->off, it, kk, wt, 0);
    }
    /* K = 4: the weights' sums from each group's translation column (sums_to_vertices; a
     * separate transpose of the weights for their sums cost 3-5% of the time with normals and
     * 9% positions only) */
    uint64_t sums = 0;
    __m512 yp[4], yn[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                           _mm512_setzero_ps()};
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
        if (rigid_rows) /* the joint's row itself (m = K[j] exactly, as lbs16_blend's) */
            for (int b = 0; b < 4; ++b)
                mb[4 * g + b] = _mm512_loadu_ps(job->prepared + offset_of_pair(jt->off, 4 * g + b));
        else if (by_group) /* K = 4 or 8 slots a vertex */
            for (int b = 0; b < 4; ++b)
                mb[4 * g + b] = lbs16_blend_rows(job->prepared, jt->off + kk * (4 * g + b),
                                                 w + kk * (4 * g + b), (int)kk);
        __m512 col[4];
        lbs16_columns(col, mb + 4 * g);
        if (kk == 4 || (kk == 8 && by_group))
            sums |= (uint64_t)_mm512_mask_cmp_ps_mask(0x8888, col[3], _mm512_set1_ps(1e-6f),
                                                      _CMP_NGT_UQ) << (16 * g);
        yp[g] = lbs16_apply(tb, g, col, p, 1);
        if (normals && rigid) { /* the matrix itself, without its translation */
            yn[g] = lbs16_apply(tb, g, col, nv, 0);
        } else if (normals) {
            __m512 cof[4];
            lbs16_columns(cof, cb + 4 * g);
            yn[g] = lbs16_apply(tb, g, cof, nv, 0);
        }
    }
    small |= sums_to_vertices(sums, 16);
    if (rigid_rows) small |= jt->copy;
    __m512 out[3];
    for (int r = 0; r < 3; ++r) out[r] = _mm512_permutex2var_ps(yp[r], tb->pack[r], yp[r + 1]);
    copy_through48(out, small, p);
    if (normals) {
        const __m512 inv = lbs16_inv_norms(yn);
        __m512 on[3];
        for (int r = 0; r < 3; ++r)
            on[r] = _mm512_mul_ps(_mm512_permutex2var_ps(yn[r], tb->pack[r], yn[r + 1]),
                                  _mm512_permutexvar_ps(tb->spread[r], inv));
        copy_through48(on, small, nv);
        put_normals48(nout, on, on_regs);
    }
    store48(pout, out, stream_p);
}

/* ------------------------------------------------------------------------------------------
 * Small palettes (J <= SK_LBS_TABLE_MAX_J, sk_lbs_table_f32): a block's 16 vertices one to a
 * lane, lane l holding vertex 4 (l % 4) + l / 4 (transpose_blocks16's order, in which the
 * weights and joints of four vertices a register become one register a slot), and each of the
 * twelve entries of every vertex's four joints looked up in the table by one permute whose
 * index is the slot's joints: 48 permutes, 48 multiply-adds and a few reshuffles a block instead
 * of 64 row loads, 64 broadcasts and the transposes of rows into columns.  The same operations
 * in the same order as lbs16_block's for every entry and product, so the same bits (the weights'
 * sums, which the rows take from lane 15 of the blends, are small16's: the same sums, so the
 * same vertices copied).  On Zen 5, float32 LBS with normals (a rigid palette), K = 4, J = 16
 * or 32: 0.77-0.78x the rows' time at 100k vertices, 0.82-0.83x at 1M (paired, same bits).
 * With J = 64 the lookups (two two-table permutes and a select, or two masked permutes) took
 * 1.02-1.08x the rows' time in a standalone copy, and blocks by lookups and by rows in turn
 * 1.08-1.10x, so larger palettes keep the rows.  Nor did lookups in a window of 32 joints
 * for the blocks of a larger palette whose joints fit one (a real mesh's mostly would) pay:
 * finding the window (a reduction over the block's joints, made before the block or a block
 * ahead) took the blocks 1.27-1.33x the time of J = 32's lookups, about the rows' time.
 * ---------------------------------------------------------------------------------------- */

/* Lane l's vertex, and its inverse (the same map). */
#define SOA16_VERTEX(l) (4 * ((l) % 4) + (l) / 4)
/* split: lane l of component c <- float 3 v + c of the block's 48 (v: the lane's vertex), from
 * the first two input registers by a two-source permute, or (lanes of split_hi) the third */
#define SOA16_SPLIT(c, l) ((3 * SOA16_VERTEX(l) + (c)) & 31)
#define SOA16_SPLIT_HI(c, l) ((3 * SOA16_VERTEX(l) + (c) >= 32) << (l))
/* join: output register r's float f (vertex e / 3's component e % 3, e = 16 r + f) <- lane
 * SOA16_VERTEX(e / 3) of component e % 3: of x or y by a two-source permute, or (lanes of
 * join_z) of z */
#define SOA16_JOIN(r, f) (16 * (LBS16_E(r, f) % 3) + SOA16_VERTEX(LBS16_E(r, f) / 3))
#define SOA16_JOIN_Z(r, f) ((LBS16_E(r, f) % 3 == 2) << (f))
#define SK_BITS16(F, r)                                                                          \
    (F(r, 0) | F(r, 1) | F(r, 2) | F(r, 3) | F(r, 4) | F(r, 5) | F(r, 6) | F(r, 7) | F(r, 8) |   \
     F(r, 9) | F(r, 10) | F(r, 11) | F(r, 12) | F(r, 13) | F(r, 14) | F(r, 15))

static const _Alignas(64) int32_t soa16_table_split[3][16] = SK_ROWS3(SOA16_SPLIT);
static const _Alignas(64) int32_t soa16_table_join[3][16] = SK_ROWS3(SOA16_JOIN);

typedef struct {
    __m512i split[3], join[3];
} soa16_tables;

static void soa16_make_tables(soa16_tables *tb)
{
    for (int r = 0; r < 3; ++r) {
        tb->split[r] = _mm512_load_si512(soa16_table_split[r]);
        tb->join[r] = _mm512_load_si512(soa16_table_join[r]);
    }
}

/* Three registers from three: out[r] lane l <- lane idx[r][l] of in[0] | in[1] (a two-source
 * permute), or where bit l of third[r] is set lane idx[r][l] % 16 of in[2]. */
SK_ALWAYS_INLINE void soa16_permute3(const __m512 in[3], const __m512i idx[3],
                                     const __mmask16 third[3], __m512 out[3])
{
#pragma GCC unroll 3
    for (int r = 0; r < 3; ++r)
        out[r] = _mm512_mask_permutexvar_ps(_mm512_permutex2var_ps(in[0], idx[r], in[1]),
                                            third[r], idx[r], in[2]);
}

/* The block's 48 packed floats -> x, y, z, one register each. */
SK_ALWAYS_INLINE void soa16_split(const soa16_tables *tb, const __m512 in[3], __m512 s[3])
{
    const __mmask16 hi[3] = {SK_BITS16(SOA16_SPLIT_HI, 0), SK_BITS16(SOA16_SPLIT_HI, 1),
                             SK_BITS16(SOA16_SPLIT_HI, 2)};
    soa16_permute3(in, tb->split, hi, s);
}

/* x, y, z -> the block's 48 packed floats. */
SK_ALWAYS_INLINE void soa16_join(const soa16_tables *tb, const __m512 s[3], __m512 out[3])
{
    const __mmask16 z[3] = {SK_BITS16(SOA16_JOIN_Z, 0), SK_BITS16(SOA16_JOIN_Z, 1),
                            SK_BITS16(SOA16_JOIN_Z, 2)};
    soa16_permute3(s, tb->join, z, out);
}

/* Slot k's joints in j[k] (contiguous narrow index rows at ip), an index outside [0, J) as
 * joint 0 (offsets16's choice; its weight is 0 in a validated job). */
SK_ALWAYS_INLINE void soa16_joints(__m512i j[4], const char *ip, sk_index_type it,
                                   int64_t n_joints)
{
    __m512 r[4];
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) r[q] = _mm512_castsi512_ps(indices16(ip, q, it));
    transpose_blocks16(r);
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
        const __m512i jk = _mm512_castps_si512(r[k]);
        j[k] = _mm512_maskz_mov_epi32(
            _mm512_cmplt_epu32_mask(jk, _mm512_set1_epi32((int32_t)n_joints)), jk);
    }
}

/* One entry of every lane's blend, sum_k w_k entry[j_k] in lbs16_blend_rows' order, `entry`
 * holding SK_LBS_TABLE_MAX_J = 32 values: two-table permutes.  (With J <= 16, one-table
 * permutes took 0.97x the time at 100k vertices, 1.0x at 1M: not worth a loop of their own.) */
_Static_assert(SK_LBS_TABLE_MAX_J == 32, "soa16_entry's two-table permutes index 32 joints");

SK_ALWAYS_INLINE __m512 soa16_entry(const float *entry, const __m512 w[4], const __m512i j[4])
{
    __m512 a = _mm512_setzero_ps();
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
        const __m512 e = _mm512_permutex2var_ps(_mm512_load_ps(entry), j[k],
                                                _mm512_load_ps(entry + 16));
        a = _mm512_fmadd_ps(w[k], e, a);
    }
    return a;
}

/* lbs16_block for the rows case (K = 4 contiguous float weights, contiguous narrow indices,
 * normals only with a rigid palette) by lookups in job->lbs_table. */
SK_ALWAYS_INLINE void soa16_block(const sk_skin_job_f32 *job, const soa16_tables *tb, int64_t v0,
                                  const float *pin, const float *nin, float *pout, float *nout,
                                  int stream_p, __m512 *on_regs, sk_index_type it)
{
    const int normals = nin != NULL;
    const float *table = job->lbs_table;
    /* opaque to the compiler: hoisted out of the loop, the table's 24 registers were spilled
     * and reloaded with moves (1.05-1.14x the time) */
    __asm__("" : "+r"(table));
    /* Every small loop over registers below unrolled and every block of loads written out: a
     * loop left rolled, or made a copy to the stack (-O3 turns a loop of loads into one), put
     * its registers in memory, up to 1.6x the time of the whole block. */
    /* the joints first: every lookup waits for them */
    const sk_influences *in = &job->influences;
    __m512i j[4];
    soa16_joints(j, (const char *)in->indices.data + v0 * in->indices.row, it, job->n_joints);
    const float *wp = (const float *)in->weights.data + 4 * v0;
    __m512 w[4] = {_mm512_loadu_ps(wp), _mm512_loadu_ps(wp + 16), _mm512_loadu_ps(wp + 32),
                   _mm512_loadu_ps(wp + 48)};
    transpose_blocks16(w);
    const __m512 zero = _mm512_setzero_ps();
    const __m512 p[3] = {_mm512_loadu_ps(pin), _mm512_loadu_ps(pin + 16), _mm512_loadu_ps(pin + 32)};
    const __m512 nv[3] = {normals ? _mm512_loadu_ps(nin) : zero,
                          normals ? _mm512_loadu_ps(nin + 16) : zero,
                          normals ? _mm512_loadu_ps(nin + 32) : zero};
    __m512 ps[3], ns[3] = {zero, zero, zero};
    soa16_split(tb, p, ps);
    if (normals) soa16_split(tb, nv, ns);
    const unsigned small = small16(w, 4);
    /* row r of every vertex's 3x4 times (x, y, z, 1), and of its 3x3 times the normal, in
     * lbs16_apply's order; entry 3 c + r holds the blends' column c, row r */
    __m512 yp[3], yn[3];
#pragma GCC unroll 3
    for (int r = 0; r < 3; ++r) {
        const float *e = table + SK_LBS_TABLE_MAX_J * r;
        const __m512 c0 = soa16_entry(e, w, j);
        __m512 a = _mm512_fmadd_ps(c0, ps[0], soa16_entry(e + 9 * SK_LBS_TABLE_MAX_J, w, j));
        __m512 n = _mm512_mul_ps(c0, ns[0]);
#pragma GCC unroll 2
        for (int c = 1; c < 3; ++c) {
            const __m512 cc = soa16_entry(e + 3 * c * SK_LBS_TABLE_MAX_J, w, j);
            a = _mm512_fmadd_ps(cc, ps[c], a);
            if (normals) n = _mm512_fmadd_ps(cc, ns[c], n);
        }
        yp[r] = a;
        yn[r] = n;
    }
    __m512 out[3];
    soa16_join(tb, yp, out);
    copy_through48(out, small, p);
    if (normals) {
        /* |n|^2 = (x^2 + z^2) + y^2, lbs16_inv_norms' sums */
        const __m512 n2 = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(yn[0], yn[0]),
                                                      _mm512_mul_ps(yn[2], yn[2])),
                                        _mm512_mul_ps(yn[1], yn[1]));
        const __m512 inv = lbs16_rsqrt(n2);
#pragma GCC unroll 3
        for (int r = 0; r < 3; ++r) yn[r] = _mm512_mul_ps(yn[r], inv);
        __m512 on[3];
        soa16_join(tb, yn, on);
        copy_through48(on, small, nv);
        put_normals48(nout, on, on_regs);
    }
    store48(pout, out, stream_p);
}

/* Whether soa16_block takes the job: its table made (a small palette, sk_lbs_table_f32) and
 * contiguous narrow index rows (the caller checks the rest: lbs16_range's rows). */
SK_ALWAYS_INLINE int soa16_job(const sk_skin_job_f32 *job, sk_index_type it)
{
    return job->lbs_table && job->n_joints <= SK_LBS_TABLE_MAX_J &&
           indices_narrow_rows(&job->influences, 4, it);
}

/* A partial or strided block of n <= 16 vertices through stack copies. */
SK_ALWAYS_INLINE void lbs16_part(const sk_skin_job_f32 *job, const lbs16_tables *tb, int64_t v0,
                                 int64_t n, int rigid, sk_index_type it, int64_t kk, sk_weight_type wt)
{
    float pin[48], nin[48], pout[48], nout[48];
    const int normals = job->normals.data != NULL;
    gather3_f32(pin, 16, &job->positions, v0, n);
    if (normals) gather3_f32(nin, 16, &job->normals, v0, n);
    lbs16_block(job, tb, v0, (int)n, NULL, pin, normals ? nin : NULL, pout,
                normals ? nout : NULL, 0, NULL, rigid, it, kk, wt, 0);
    scatter3_f32(&job->out_positions, v0, n, pout);
    if (normals) scatter3_f32(&job->out_normals, v0, n, nout);
}


/* Calls big enough for non-temporal stores (job->stream) read their inputs from memory rather
 * than from cache: the packed loop of K = 4 asks for the inputs of the block SK_PREFETCH_BLOCKS
 * ahead (positions, normals, and K = 4 rows of joints and float weights: all their lines,
 * which for int32 joints, what skinkit's glTF loader and binders return, are four a block where
 * uint16's are two: asking for two of them, as it did, took 1.35x the time at 1M vertices on
 * Zen 5, with normals, and 1.26x positions only).  About 8% less time per vertex at 1M vertices, within
 * noise at 100k, on the development machine (Cascade Lake, an earlier form of the loop); on the
 * Zen 5 VM 1-4% at 1M for J = 64 and J = 24 with normals and for positions only, while K = 8
 * took 0.91-0.94x and rigid skinning 0.97x the time without it (paired, 1M vertices), so those
 * loops leave it to the hardware.  8 or 16 blocks ahead took 0.98-1.0x the time of 4 at 300k
 * and 1M on the Zen 5 VM (noise). */
#define SK_PREFETCH_BLOCKS 4

SK_ALWAYS_INLINE void lbs16_prefetch(const sk_skin_job_f32 *job, const float *pin,
                                     const float *nin, int64_t u)
{
    const sk_influences *in = &job->influences;
    for (int l = 0; l < 3; ++l) {
        _mm_prefetch((const char *)(pin + 3 * u) + 64 * l, _MM_HINT_T0);
        if (nin) _mm_prefetch((const char *)(nin + 3 * u) + 64 * l, _MM_HINT_T0);
    }
    for (int l = 0; l < 4; ++l)
        _mm_prefetch((const char *)in->weights.data + u * in->weights.row + 64 * l, _MM_HINT_T0);
    for (ptrdiff_t b = 0; b < 16 * in->indices.row; b += 64) /* 2 lines of uint16, 4 of int32 */
        _mm_prefetch((const char *)in->indices.data + u * in->indices.row + b, _MM_HINT_T0);
}

/* A packed float32 output written in blocks of 48 floats with aligned non-temporal stores although
 * its blocks start d floats (1-15) past a 64-byte boundary (also float64 LBS's pairs of blocks,
 * 24 doubles as 48 floats, lbs4d_pairs: a permute moves the bits unchanged): each aligned line is assembled from
 * the previous block's last register and this block's (one permute per line), and the range's
 * first and last partial lines get ordinary masked stores.  For the normals when their output
 * sits at another offset within a cache line than the positions' (NumPy aligns arrays to 16
 * bytes only, so three pairs in four of those that come from the heap; big arrays that get
 * pages of their own from malloc all sit at offset 16): streaming them too saved 4% of an LBS
 * call at 1M vertices, and another 8-9% once the loop that does it got an instance of its own
 * (lbs16_range). */
typedef struct {
    const float *first; /* the range's first aligned line (written from d on) */
    __m512i idx;        /* lane i <- lane 16 - d + i of (previous, next) */
    __m512 carry;       /* the previous block's last 16 floats */
    int d;
} shift_stream;

/* The aligned line that holds `at`, the first float of a block or range, is at - d: the block
 * loops pass `at` from their own vertex counter.  (As state, the line's pointer and a "started"
 * flag were loaded and stored in every block: without them float64 LBS streamed through the
 * shift took 0.98-0.99x the time at 1M, 0.99x at 300k; float32 1.00x, same bits.) */
SK_ALWAYS_INLINE void shift_begin(shift_stream *s, float *first)
{
    s->d = (int)(((uintptr_t)first & 63) / 4);
    s->first = first - s->d;
    s->idx = _mm512_add_epi32(_mm512_set1_epi32(16 - s->d),
                              _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    s->carry = _mm512_setzero_ps();
}

/* A block of 48 floats starting at `at`. */
SK_ALWAYS_INLINE void shift_put48(shift_stream *s, float *at, const __m512 r[3])
{
    float *line = at - s->d;
    const __m512 first = _mm512_permutex2var_ps(s->carry, s->idx, r[0]);
    if (line != s->first)
        _mm512_stream_ps(line, first);
    else /* the range's first line: from the block's start on */
        _mm512_mask_storeu_ps(line, (__mmask16)(0xffffu << s->d), first);
    _mm512_stream_ps(line + 16, _mm512_permutex2var_ps(r[0], s->idx, r[1]));
    _mm512_stream_ps(line + 32, _mm512_permutex2var_ps(r[1], s->idx, r[2]));
    s->carry = r[2];
}

/* The last block's last d floats (the rest of their line is the next range's or the tail's);
 * `at`: where the block after the last would start. */
SK_ALWAYS_INLINE void shift_end(shift_stream *s, float *at)
{
    float *line = at - s->d;
    if (line != s->first)
        _mm512_mask_storeu_ps(line, (__mmask16)((1u << s->d) - 1),
                              _mm512_permutex2var_ps(s->carry, s->idx, s->carry));
}

/* How a block loop writes the normals: with ordinary stores inside lbs16_block, or after it with
 * non-temporal ones, aligned like the positions' or through shift_stream. */
enum { NORMALS_STORED, NORMALS_STREAMED, NORMALS_SHIFTED };

/* Whether the block loop makes each block's joints a block ahead (lbs16_joints_ahead): K = 4
 * and 8, and rigid skinning by rows, unless the lookups (`soa`) read the joints themselves. */
SK_ALWAYS_INLINE int lbs16_ahead(int soa, int64_t kk, int rows)
{
    return !soa && (kk == 4 || kk == 8 || (kk == SIMD_RIGID && rows));
}

/* The whole blocks of [v, end): jt[0] holds the first block's joints (K = 4 and 8); `ns`: the
 * shift_stream of NORMALS_SHIFTED.  `nmode`, `normals`, `rigid`, `rows` (K = 4 rows blended
 * by groups, see lbs16_block) and `soa` (the rows by soa16_block's lookups) are constants where the caller names them.  Returns the first vertex left. */
SK_ALWAYS_INLINE int64_t lbs16_blocks(const sk_skin_job_f32 *job, const lbs16_tables *tb,
                                      const soa16_tables *st, int64_t v, int64_t end,
                                      lbs16_joints jt[2], const float *pin, const float *nin,
                                      float *pout, float *nout, int stream, shift_stream *ns,
                                      const int nmode, const int normals, const int rigid,
                                      const int rows, const int soa, sk_index_type it,
                                      int64_t kk, sk_weight_type wt)
{
    const int ahead = lbs16_ahead(soa, kk, rows);
    for (int b = 0; v + 16 <= end; v += 16, b ^= 1) {
        if (kk == 4 && stream && v + 16 * SK_PREFETCH_BLOCKS + 16 <= end)
            lbs16_prefetch(job, pin, nin, v + 16 * SK_PREFETCH_BLOCKS);
        if (ahead && v + 32 <= end) lbs16_joints_ahead(&jt[b ^ 1], job, v + 16, it, kk);
        __m512 on[3];
        if (soa)
            soa16_block(job, st, v, pin + 3 * v, normals ? nin + 3 * v : NULL, pout + 3 * v,
                        normals ? nout + 3 * v : NULL, stream,
                        nmode != NORMALS_STORED ? on : NULL, it);
        else
            lbs16_block(job, tb, v, 16, ahead ? &jt[b] : NULL, pin + 3 * v,
                        normals ? nin + 3 * v : NULL, pout + 3 * v, normals ? nout + 3 * v : NULL,
                        stream, nmode != NORMALS_STORED ? on : NULL, rigid, it, kk, wt, rows);
        if (nmode == NORMALS_STREAMED)
            store48(nout + 3 * v, on, 1);
        else if (nmode == NORMALS_SHIFTED)
            shift_put48(ns, nout + 3 * v, on);
    }
    return v;
}

/* lbs16_blocks for the rows (normals only with a rigid palette), by soa16_block's lookups
 * (`soa`) or by lbs16_block's rows: a loop for each way of writing the normals
 * (with the way a run-time value, the compiler kept shift_stream's state and the normals'
 * registers on the stack, 8-9% of a 1M call; aligned normals through shift_stream, its
 * permutes then copying registers, took 2% more than streaming them directly). */
SK_ALWAYS_INLINE int64_t lbs16_rows(const sk_skin_job_f32 *job, const lbs16_tables *tb,
                                    const soa16_tables *st, int64_t v, int64_t end,
                                    lbs16_joints jt[2], const float *pin, const float *nin,
                                    float *pout, float *nout, int stream, shift_stream *ns,
                                    int nmode, int normals, const int soa, sk_index_type it,
                                    int64_t kk, sk_weight_type wt)
{
    if (normals && nmode == NORMALS_SHIFTED)
        return lbs16_blocks(job, tb, st, v, end, jt, pin, nin, pout, nout, stream, ns,
                            NORMALS_SHIFTED, 1, 1, 1, soa, it, kk, wt);
    if (normals && nmode == NORMALS_STREAMED)
        return lbs16_blocks(job, tb, st, v, end, jt, pin, nin, pout, nout, stream, NULL,
                            NORMALS_STREAMED, 1, 1, 1, soa, it, kk, wt);
    if (normals)
        return lbs16_blocks(job, tb, st, v, end, jt, pin, nin, pout, nout, stream, NULL,
                            NORMALS_STORED, 1, 1, 1, soa, it, kk, wt);
    return lbs16_blocks(job, tb, st, v, end, jt, pin, NULL, pout, NULL, stream, NULL,
                        NORMALS_STORED, 0, 0, 1, soa, it, kk, wt);
}

SK_ALWAYS_INLINE void lbs16_range(const sk_skin_job_f32 *job, int64_t begin, int64_t end,
                                  sk_index_type it, int64_t kk, sk_weight_type wt)
{
    lbs16_tables tb;
    lbs16_make_tables(&tb);
    const int rigid = job->normals.data && SK_COF_IS_MATRIX(job, sk_lbs_cof_is_matrix_f32);
    if (!packed_job(&job->positions, &job->out_positions, &job->normals, &job->out_normals, 4)) {
        for (int64_t v = begin; v < end; v += 16)
            lbs16_part(job, &tb, v, end - v < 16 ? end - v : 16, rigid, it, kk, wt);
        return;
    }
    const int normals = job->normals.data != NULL;
    const float *pin = (const float *)job->positions.data;
    const float *nin = (const float *)job->normals.data;
    float *pout = (float *)job->out_positions.data;
    float *nout = (float *)job->out_normals.data;
    int stream = job->stream;
    int64_t v = begin;
    /* a partial head block until the positions output is 64-byte aligned */
    const int64_t head = stream_head(&stream, pout + 3 * v, 3 * sizeof(float), 16, 64, end - v);
    if (head > 0) {
        lbs16_part(job, &tb, v, head, rigid, it, kk, wt);
        v += head;
    }
    /* the normals stream too: aligned like the positions, or through shift_stream */
    int nmode = NORMALS_STORED;
    shift_stream ns = {.first = NULL};
    if (stream && normals && ((uintptr_t)(nout + 3 * v) & 63) == 0) {
        nmode = NORMALS_STREAMED;
    } else if (stream && normals && ((uintptr_t)nout & 3) == 0) {
        nmode = NORMALS_SHIFTED;
        shift_begin(&ns, nout + 3 * v);
    }
    /* K = 4 and 8: the next block's joints computed before this block (as lbs4d_blocks); rows:
     * the block blends by groups (K = 4 contiguous float weights, lbs16_blend_rows) */
    const sk_influences *in = &job->influences;
    /* (rigid skinning by the same groups, one row a vertex: with normals, a rigid palette's,
     * the matrix itself) */
    const int rows = (!normals || rigid) && (kk == 4 ? weights_packed(in, 4, 4)
                                             : kk == SIMD_RIGID && rigid_rows_job(job, it));
    /* small palettes: the rows by lookups in the job's table (soa16_block) */
    const int soa = rows && kk == 4 && soa16_job(job, it);
    soa16_tables st;
    if (soa) soa16_make_tables(&st);
    const int ahead = lbs16_ahead(soa, kk, rows);
    lbs16_joints jt[2];
    if (ahead && v + 16 <= end) lbs16_joints_ahead(&jt[0], job, v, it, kk);
    /* the common cases compiled with their flags constant (7% less time at 100k vertices than
     * one loop testing them) */
    if (soa)
        v = lbs16_rows(job, &tb, &st, v, end, jt, pin, nin, pout, nout, stream, &ns, nmode,
                       normals, 1, it, kk, wt);
    else if (rows)
        v = lbs16_rows(job, &tb, &st, v, end, jt, pin, nin, pout, nout, stream, &ns, nmode,
                       normals, 0, it, kk, wt);
    else
        v = lbs16_blocks(job, &tb, &st, v, end, jt, pin, nin, pout, nout, stream, &ns, nmode,
                         normals, rigid, 0, 0, it, kk, wt);
    if (nmode == NORMALS_SHIFTED) shift_end(&ns, nout + 3 * v);
    if (v < end) lbs16_part(job, &tb, v, end - v, rigid, it, kk, wt);
    if (stream) _mm_sfence(); /* non-temporal stores visible before the threads join */
}

SIMD_INSTANCES_LBS_IN(lbs16_range, sk_skin_job_f32, SIMD_INSTANCE, SIMD_INSTANCE_LBS32B)

#if SK_SIMD_PART(LBS32)
void SK_ISA(sk_lbs, _f32)(const sk_skin_job_f32 *job, int64_t begin, int64_t end)
{
    SIMD_NARROW_OR_GO_ON(job, begin, end, SK_ISA(sk_lbs, _f32), narrowed_f32, 0);
    SIMD_PAD_OR_GO_ON(job, begin, end, SK_ISA(sk_lbs, _f32), padded_f32);
    SIMD_DISPATCH_LBS(lbs16_range, job, begin, end);
}

void SK_ISA(sk_rigid, _f32)(const sk_skin_job_f32 *job, int64_t begin, int64_t end)
{
    SIMD_NARROW_RIGID_OR_GO_ON(job, begin, end, SK_ISA(sk_rigid, _f32), narrowed_rigid_f32);
    SIMD_RIGID_DISPATCH(lbs16_range, job, begin, end);
}
#endif /* SK_SIMD_PART(LBS32) */

#else /* AVX2: 8 vertices per block, one vertex's blended 3x4 per ymm pair */

/* The instances of a constant K (float weights: K = 4 and 8, and 1-3 by SIMD_FEW_K; K = 4 unorm
 * weights, converted four at a time by lbs8_weights4) read their joints as int32 offsets made a block ahead
 * (lbs8_offsets) and the sums of their weights from the blend's lane 15 (each slot's weight
 * times the 1 of prepared[32 j + 15]: the sums the copy rule compares, in the same order); the
 * one for any K and rigid skinning read each slot's index as they blend.  LBS8_SLOTS: a
 * vertex's offsets in a block's table. */
#define LBS8_OFFSETS(kk) ((kk) >= 1)
#define LBS8_SLOTS(kk) (LBS8_OFFSETS(kk) ? (int)(kk) : 4)

/* Four adjacent unorm weights at p as floats in both lanes, each converted as simd_weight_f32
 * converts it (q / 255, q / 65535: exact conversions and one correctly rounded division, so the
 * same bits), by one division for the four: with K = 4 unorm weights 0.89-0.93x the time of a
 * scalar division a slot (100k, Zen 4 VM; the pair's eight by one division and two
 * lane-crossing permutes took 1.02-1.06x the time of this). */
SK_ALWAYS_INLINE __m256 lbs8_weights4(const char *p, sk_weight_type wt)
{
    if (wt == SK_WEIGHT_UNORM8) {
        int32_t q;
        memcpy(&q, p, sizeof q);
        return _mm256_div_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_set1_epi32(q))),
                             _mm256_set1_ps(255.0f));
    }
    int64_t q;
    memcpy(&q, p, sizeof q);
    return _mm256_div_ps(_mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(_mm_set1_epi64x(q))),
                         _mm256_set1_ps(65535.0f));
}

/* Weight s (< 4) of a group of 4 in both lanes of w4, in all 8 lanes: an in-lane permute (the
 * group's one load and four permutes took 0.93x the time of four broadcast loads with K = 4,
 * positions only, 0.97x with normals, 0.96x K = 8, 100k: the broadcasts held the load ports,
 * which the blends' rows and the offsets use too). */
SK_ALWAYS_INLINE __m256 lbs8_weight(__m256 w4, int s)
{
    switch (s) {
    case 0: return _mm256_permute_ps(w4, 0x00);
    case 1: return _mm256_permute_ps(w4, 0x55);
    case 2: return _mm256_permute_ps(w4, 0xAA);
    default: return _mm256_permute_ps(w4, 0xFF);
    }
}

/* m[0] = columns 0, 1 and m[1] = columns 2, 3 of sum_k w_k K[j_k]; c likewise for cofactors
 * (with `normals`).  LBS8_OFFSETS: the joints from lbs8_offsets' `off`, and the weight sums
 * from the blend's lane 15 (lbs8_front; the total returned is then 0). */
SK_ALWAYS_INLINE float lbs8_blend(__m256 m[2], __m256 c[2], const sk_skin_job_f32 *job, int64_t v,
                                  const int32_t *off, sk_index_type it, int64_t kk,
                                  sk_weight_type wt, int normals, int wpacked)
{
    if (kk == SIMD_RIGID) { /* one joint, weight 1; j < 0 or >= J: copied */
        const int64_t j = simd_index((const char *)job->rigid_indices.data +
                                     v * job->rigid_indices.row, it);
        if (j < 0 || j >= job->n_joints) {
            m[0] = m[1] = c[0] = c[1] = _mm256_setzero_ps();
            return 0;
        }
        const float *pj = job->prepared + SK_LBS_PREPARED_SIZE * j;
        m[0] = _mm256_loadu_ps(pj);
        m[1] = _mm256_loadu_ps(pj + 8);
        c[0] = normals ? _mm256_loadu_ps(pj + 16) : _mm256_setzero_ps();
        c[1] = normals ? _mm256_loadu_ps(pj + 24) : _mm256_setzero_ps();
        return 1;
    }
    const sk_influences *in = &job->influences;
    const char *ip = (const char *)in->indices.data + v * in->indices.row;
    const char *wp = (const char *)in->weights.data + v * in->weights.row;
    __m256 m0 = _mm256_setzero_ps(), m1 = m0, c0 = m0, c1 = m0;
    float total = 0;
    const int64_t K = kk ? kk : in->k;
    /* K = 4 and 8, each row's weights adjacent: each 4 weights read (and converted) at once by
     * lbs8_weights4, then spread by lbs8_weight's permutes */
    const int fours = LBS8_OFFSETS(kk) && kk % 4 == 0 &&
                      (wpacked || (wt != SK_WEIGHT_FLOAT &&
                                   in->weights.elem == (wt == SK_WEIGHT_UNORM8 ? 1 : 2)));
    __m256 w4[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    if (fours)
        for (int q = 0; q < (int)kk / 4; ++q)
            w4[q] = wpacked ? _mm256_broadcast_ps((const __m128 *)((const float *)in->weights.data + kk * v) + q)
                            : lbs8_weights4(wp + 4 * q * in->weights.elem, wt);
    for (int64_t k = 0; k < K; ++k) {
        __m256 wv;
        int64_t j;
        const float *pj;
        if (LBS8_OFFSETS(kk)) {
            wv = fours     ? lbs8_weight(w4[k / 4], (int)k % 4)
                 : wpacked ? _mm256_set1_ps(((const float *)in->weights.data)[kk * v + k])
                           : _mm256_set1_ps(simd_weight_f32(wp + k * in->weights.elem, wt));
            pj = job->prepared + (kk % 2 == 0 ? offset_of_pair(off, (int)k) : (uint32_t)off[k]);
        } else {
            float w;
            SIMD_SLOT(simd_weight_f32, in, ip, wp, k, it, wt, job->n_joints, w, j);
            pj = job->prepared + SK_LBS_PREPARED_SIZE * j;
            total += w;
            wv = _mm256_set1_ps(w);
        }
        if (k == 0) { /* a product, not an FMA onto zero: one step less in the chain */
            m0 = _mm256_mul_ps(wv, _mm256_loadu_ps(pj));
            m1 = _mm256_mul_ps(wv, _mm256_loadu_ps(pj + 8));
            if (normals) {
                c0 = _mm256_mul_ps(wv, _mm256_loadu_ps(pj + 16));
                c1 = _mm256_mul_ps(wv, _mm256_loadu_ps(pj + 24));
            }
            continue;
        }
        m0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(pj), m0);
        m1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(pj + 8), m1);
        if (normals) {
            c0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(pj + 16), c0);
            c1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(pj + 24), c1);
        }
    }
    m[0] = m0;
    m[1] = m1;
    c[0] = c0;
    c[1] = c1;
    return total;
}

/* 8 vertex-major rows of 4 (r[q] = [vertex 2q's row | vertex 2q + 1's]) -> w[k] = slot k of
 * vertices 0 2 4 6 | 1 3 5 7: a transpose within 128-bit lanes. */
SK_ALWAYS_INLINE void slots8(__m256 w[4], const __m256 r[4])
{
    const __m256 a = _mm256_unpacklo_ps(r[0], r[1]), b = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 c = _mm256_unpacklo_ps(r[2], r[3]), d = _mm256_unpackhi_ps(r[2], r[3]);
    w[0] = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(1, 0, 1, 0));
    w[1] = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(3, 2, 3, 2));
    w[2] = _mm256_shuffle_ps(b, d, _MM_SHUFFLE(1, 0, 1, 0));
    w[3] = _mm256_shuffle_ps(b, d, _MM_SHUFFLE(3, 2, 3, 2));
}


/* The zero-weight test of slots8's weights: the sums ((w0 + w1) + w2) + w3, the same
 * operations in the same order; returns vertex bits. */
SK_ALWAYS_INLINE unsigned slots8_small(const __m256 w[4])
{
    const __m256 t = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(w[0], w[1]), w[2]), w[3]);
    const unsigned lanes =
        ~(unsigned)_mm256_movemask_ps(_mm256_cmp_ps(t, _mm256_set1_ps(1e-6f), _CMP_GT_OQ)) & 0xffu;
    unsigned small = 0;
    for (int l = 0; lanes && l < 8; ++l) /* rare: only where some lane is set */
        if (lanes >> l & 1) small |= 1u << (l < 4 ? 2 * l : 2 * (l - 4) + 1);
    return small;
}

/* Contiguous (V, 4) float weights at w, transposed by slots8. */
SK_ALWAYS_INLINE void slots8_load(__m256 s[4], const float *w)
{
    const __m256 r[4] = {_mm256_loadu_ps(w), _mm256_loadu_ps(w + 8), _mm256_loadu_ps(w + 16),
                         _mm256_loadu_ps(w + 24)};
    slots8(s, r);
}

/* Vertices 2 h and 2 h + 1 of a block at p (three floats each) as x = [x_a x 4 | x_b x 4], y and
 * z likewise: one 16-byte read per vertex, [x y z x'] for the block's first vertex and
 * [z' x y z] for the others, so that no read leaves the block, spread by in-lane permutes. */
SK_ALWAYS_INLINE void lbs8_pair_xyz(const float *p, int h, __m256 *x, __m256 *y, __m256 *z)
{
    const float *a = p + 6 * h;
    const __m256 v = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(h ? a - 1 : a)),
                                          _mm_loadu_ps(a + 2), 1);
    if (h) {
        *x = _mm256_permute_ps(v, _MM_SHUFFLE(1, 1, 1, 1));
        *y = _mm256_permute_ps(v, _MM_SHUFFLE(2, 2, 2, 2));
        *z = _mm256_permute_ps(v, _MM_SHUFFLE(3, 3, 3, 3));
    } else {
        *x = _mm256_permutevar_ps(v, _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
        *y = _mm256_permutevar_ps(v, _mm256_setr_epi32(1, 1, 1, 1, 2, 2, 2, 2));
        *z = _mm256_permutevar_ps(v, _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3));
    }
}

/* Store the three floats of x's low half at p. */
SK_ALWAYS_INLINE void store3_ps(float *p, __m128 x)
{
    _mm_storel_pi((__m64 *)p, x);
    _mm_store_ss(p + 2, _mm_movehl_ps(x, x));
}

/* Vertex pairs (2 h, 2 h + 1) as [y_2h | y_2h+1] -> packed rows at out.  Without `stream` 4
 * floats are written per vertex, in order, so each overwrites only the next vertex's x; the last
 * writes exactly 3.  With it, packed into three registers and stored aligned and non-temporal. */
SK_ALWAYS_INLINE void lbs8_store(float *out, const __m256 y[4], int stream)
{
    if (!stream) {
        for (int h = 0; h < 4; ++h) {
            _mm_storeu_ps(out + 6 * h, _mm256_castps256_ps128(y[h]));
            if (h < 3)
                _mm_storeu_ps(out + 6 * h + 3, _mm256_extractf128_ps(y[h], 1));
            else
                store3_ps(out + 6 * h + 3, _mm256_extractf128_ps(y[h], 1));
        }
        return;
    }
    /* [x0 y0 z0 x1 y1 z1 x2 y2], [z2 x3 y3 z3 x4 y4 z4 x5], [y5 z5 x6 y6 z6 x7 y7 z7] */
    const __m256 r0 = _mm256_blend_ps(
        _mm256_permutevar8x32_ps(y[0], _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 0, 0)),
        _mm256_permutevar8x32_ps(y[1], _mm256_setr_epi32(0, 0, 0, 0, 0, 0, 0, 1)), 0xC0);
    const __m256 r1 = _mm256_blend_ps(
        _mm256_permutevar8x32_ps(y[1], _mm256_setr_epi32(2, 4, 5, 6, 0, 0, 0, 0)),
        _mm256_permutevar8x32_ps(y[2], _mm256_setr_epi32(0, 0, 0, 0, 0, 1, 2, 4)), 0xF0);
    const __m256 r2 = _mm256_blend_ps(
        _mm256_permutevar8x32_ps(y[3], _mm256_setr_epi32(0, 0, 0, 1, 2, 4, 5, 6)),
        _mm256_permutevar8x32_ps(y[2], _mm256_setr_epi32(5, 6, 0, 0, 0, 0, 0, 0)), 0x03);
    _mm256_stream_ps(out, r0);
    _mm256_stream_ps(out + 8, r1);
    _mm256_stream_ps(out + 16, r2);
}

/* lbs8_store of y to out, the vertices in `copy` (rare: weights summing to ~0) given their rows
 * of `in` instead, read before the store (out may be in: sk.h's in-place form). */
SK_ALWAYS_INLINE void lbs8_store_copies(float *out, const __m256 y[4], int stream,
                                        const float *in, int n, unsigned copy)
{
    float keep[8][3];
    if (copy)
        for (int i = 0; i < n; ++i)
            if (copy >> i & 1) memcpy(keep[i], in + 3 * i, 3 * sizeof(float));
    lbs8_store(out, y, stream);
    if (copy)
        for (int i = 0; i < n; ++i)
            if (copy >> i & 1) memcpy(out + 3 * i, keep[i], 3 * sizeof(float));
}

/* The first half of lbs16_block's work, for n <= 8 vertices of 24 floats (the outputs may hold
 * one float more): the blends, the positions written (copied vertices' kept), and the normals'
 * products left unnormalized in yn[4] (lbs8_normals finishes them); returns the mask of copied
 * vertices.  `rigid`: every joint's cofactor is its 3x3 (sk_lbs_cof_is_matrix), so normals take
 * the blended matrix (without its translation) and no cofactor is blended. */
SK_ALWAYS_INLINE unsigned lbs8_front(const sk_skin_job_f32 *job, int64_t v0, int n,
                                     const int32_t *off, const float *pin, const float *nin,
                                     float *pout, __m256 yn[4], int stream_p, int rigid,
                                     sk_index_type it, int64_t kk, sk_weight_type wt, int wpacked)
{
    const int normals = nin != NULL, cof = normals && !rigid;
    unsigned copy = 0;
    uint32_t sums = 0; /* LBS8_OFFSETS: each pair's translation column compared (sums_to_vertices) */
    __m256 yp[4];
    /* a pair of vertices at a time: their blends, then the pair's columns [column_a | column_b]
     * (the 4th rows are 0 but the translation's, the weights' sum) applied to [x_a | x_b],
     * [y_a | y_b], [z_a | z_b] by three multiply-adds, which leave [y_a | y_b] as the stores
     * take it (the 4th lanes are overwritten or not stored) */
#pragma GCC unroll 4
    for (int h = 0; h < 4; ++h) {
        __m256 m[2][2], c[2][2];
#pragma GCC unroll 2
        for (int e = 0; e < 2; ++e) {
            const int i = 2 * h + e;
            float total = 0;
            if (i < n) /* writes all four (zeros where unused) */
                total = lbs8_blend(m[e], c[e], job, v0 + i, off + LBS8_SLOTS(kk) * i, it, kk, wt,
                                    cof, wpacked);
            else
                m[e][0] = m[e][1] = c[e][0] = c[e][1] = _mm256_setzero_ps();
            if (!LBS8_OFFSETS(kk) && !(total > 1e-6f)) copy |= 1u << i;
        }
        const __m256 c0 = _mm256_permute2f128_ps(m[0][0], m[1][0], 0x20);
        const __m256 c1 = _mm256_permute2f128_ps(m[0][0], m[1][0], 0x31);
        const __m256 c2 = _mm256_permute2f128_ps(m[0][1], m[1][1], 0x20);
        const __m256 c3 = _mm256_permute2f128_ps(m[0][1], m[1][1], 0x31);
        if (LBS8_OFFSETS(kk))
            sums |= (unsigned)_mm256_movemask_ps(
                        _mm256_cmp_ps(c3, _mm256_set1_ps(1e-6f), _CMP_NGT_UQ)) << (8 * h);
        __m256 x, y, z;
        lbs8_pair_xyz(pin, h, &x, &y, &z);
        yp[h] = _mm256_add_ps(_mm256_fmadd_ps(c0, x, c3), _mm256_fmadd_ps(c2, z, _mm256_mul_ps(c1, y)));
        yn[h] = _mm256_setzero_ps();
        if (normals) { /* the blended 3x3 (rigid) or cofactor, without translation */
            const __m256 k0 = cof ? _mm256_permute2f128_ps(c[0][0], c[1][0], 0x20) : c0;
            const __m256 k1 = cof ? _mm256_permute2f128_ps(c[0][0], c[1][0], 0x31) : c1;
            const __m256 k2 = cof ? _mm256_permute2f128_ps(c[0][1], c[1][1], 0x20) : c2;
            lbs8_pair_xyz(nin, h, &x, &y, &z);
            yn[h] = _mm256_add_ps(_mm256_mul_ps(k0, x), _mm256_fmadd_ps(k2, z, _mm256_mul_ps(k1, y)));
        }
    }
    copy |= sums_to_vertices(sums, 8);
    lbs8_store_copies(pout, yp, stream_p, pin, n, copy);
    return copy;
}

/* The second half: lbs8_front's normals yn (vertex pair h in yn[h]) normalized and written to
 * nout, copied vertices' normals taken from nin. */
SK_ALWAYS_INLINE void lbs8_normals(__m256 yn[4], unsigned copy, int n, const float *nin,
                                   float *nout, int stream_n)
{
    /* |n|^2 of the 8 vertices, lane 4 e + h for vertex 2 h + e: (x^2 + z^2) + (y^2 + 0) */
    __m256 s[4];
    for (int h = 0; h < 4; ++h) s[h] = _mm256_mul_ps(yn[h], yn[h]);
    __m256 t0 = _mm256_add_ps(_mm256_unpacklo_ps(s[0], s[1]), _mm256_unpackhi_ps(s[0], s[1]));
    __m256 t1 = _mm256_add_ps(_mm256_unpacklo_ps(s[2], s[3]), _mm256_unpackhi_ps(s[2], s[3]));
    __m256 n2 = _mm256_add_ps(_mm256_shuffle_ps(t0, t1, 0x44), _mm256_shuffle_ps(t0, t1, 0xEE));
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 inv = _mm256_blendv_ps(one, _mm256_div_ps(one, _mm256_sqrt_ps(n2)),
                                  _mm256_cmp_ps(n2, _mm256_setzero_ps(), _CMP_GT_OQ));
    /* pair h's factors [inv_2h x4 | inv_2h+1 x4] are lanes h and 4 + h: an in-lane permute
     * (the lane-crossing vpermps took 5% more time with normals on Zen 3) */
    yn[0] = _mm256_mul_ps(yn[0], _mm256_permute_ps(inv, _MM_SHUFFLE(0, 0, 0, 0)));
    yn[1] = _mm256_mul_ps(yn[1], _mm256_permute_ps(inv, _MM_SHUFFLE(1, 1, 1, 1)));
    yn[2] = _mm256_mul_ps(yn[2], _mm256_permute_ps(inv, _MM_SHUFFLE(2, 2, 2, 2)));
    yn[3] = _mm256_mul_ps(yn[3], _mm256_permute_ps(inv, _MM_SHUFFLE(3, 3, 3, 3)));
    lbs8_store_copies(nout, yn, stream_n, nin, n, copy);
}

/* Both halves for one block (lbs8_blocks overlaps them across blocks: the same operations). */
SK_ALWAYS_INLINE void lbs8_block(const sk_skin_job_f32 *job, int64_t v0, int n, const int32_t *off,
                                 const float *pin, const float *nin, float *pout, float *nout,
                                 int rigid, sk_index_type it, int64_t kk, sk_weight_type wt)
{
    __m256 yn[4];
    const unsigned copy = lbs8_front(job, v0, n, off, pin, nin, pout, yn, 0, rigid, it, kk, wt, 0);
    if (nin) lbs8_normals(yn, copy, n, nin, nout, 0);
}

/* A partial or strided block of n <= 8 vertices through stack copies. */
SK_ALWAYS_INLINE void lbs8_part(const sk_skin_job_f32 *job, int64_t v0, int64_t n, int rigid,
                                sk_index_type it, int64_t kk, sk_weight_type wt)
{
    const int normals = job->normals.data != NULL;
    float bp[24], bn[24], op[25], on[25];
    int32_t off[64];
    gather3_f32(bp, 8, &job->positions, v0, n);
    if (normals) gather3_f32(bn, 8, &job->normals, v0, n);
    if (LBS8_OFFSETS(kk))
        offsets_k(off, &job->influences, v0, (int)n, it, job->n_joints, SK_LBS_PREPARED_SIZE,
                  (int)kk);
    lbs8_block(job, v0, (int)n, off, bp, normals ? bn : NULL, op, normals ? on : NULL, rigid, it,
               kk, wt);
    scatter3_f32(&job->out_positions, v0, n, op);
    if (normals) scatter3_f32(&job->out_normals, v0, n, on);
}

/* A block's joint offsets (LBS8_OFFSETS). */
SK_ALWAYS_INLINE void lbs8_offsets(int32_t *off, const sk_skin_job_f32 *job, int64_t v,
                                   sk_index_type it, int64_t kk)
{
    if (kk == 4) {
        for (int q = 0; q < 2; ++q)
            offsets4x4(off + 16 * q, &job->influences, v + 4 * q, 4, it, job->n_joints,
                       SK_LBS_PREPARED_SIZE);
    } else {
        offsets_k(off, &job->influences, v, 8, it, job->n_joints, SK_LBS_PREPARED_SIZE, (int)kk);
    }
}

/* Whole blocks of 8 from v while they fit before end; returns where they stopped.  As
 * lbs4d_blocks: the next block's joint offsets are computed before this block's blends. */
SK_ALWAYS_INLINE int64_t lbs8_blocks(const sk_skin_job_f32 *job, int64_t v, int64_t end,
                                     const float *pin, const float *nin, float *pout, float *nout,
                                     int stream, int stream_n, int rigid, const int normals,
                                     int defer, sk_index_type it, int64_t kk, sk_weight_type wt,
                                     int wpacked)
{
    int32_t off[2][64];
    if (LBS8_OFFSETS(kk) && v + 8 <= end) lbs8_offsets(off[0], job, v, it, kk);
    /* With `defer` (all but outputs_close layouts) the previous block's normals are normalized
     * and written after this block's blends: right after their own blends, the square root and
     * division at the end of a block's dependency chains stalled the next block (7-9% of the
     * time with normals on Zen 3). */
    __m256 yn_prev[4];
    unsigned copy_prev = 0;
    int64_t v_prev = -1;
    for (int b = 0; v + 8 <= end; v += 8, b ^= 1) {
        if (LBS8_OFFSETS(kk) && v + 16 <= end) lbs8_offsets(off[b ^ 1], job, v + 8, it, kk);
        __m256 yn[4];
        const unsigned copy = lbs8_front(job, v, 8, off[b], pin + 3 * v,
                                         normals ? nin + 3 * v : NULL, pout + 3 * v, yn, stream,
                                         rigid, it, kk, wt, wpacked);
        if (normals && !defer) {
            lbs8_normals(yn, copy, 8, nin + 3 * v, nout + 3 * v, stream_n);
        } else if (normals) {
            if (v_prev >= 0)
                lbs8_normals(yn_prev, copy_prev, 8, nin + 3 * v_prev, nout + 3 * v_prev, stream_n);
            for (int h = 0; h < 4; ++h) yn_prev[h] = yn[h];
            copy_prev = copy;
            v_prev = v;
        }
    }
    if (normals && defer && v_prev >= 0)
        lbs8_normals(yn_prev, copy_prev, 8, nin + 3 * v_prev, nout + 3 * v_prev, stream_n);
    return v;
}

/* lbs8_blocks compiled once for each case: a rigid palette (with normals), normals, positions
 * only. */
SK_ALWAYS_INLINE int64_t lbs8_loops(const sk_skin_job_f32 *job, int64_t v, int64_t end,
                                    int stream, int stream_n, int rigid, int normals,
                                    sk_index_type it, int64_t kk, sk_weight_type wt, int wpacked)
{
    const float *pin = (const float *)job->positions.data;
    const float *nin = (const float *)job->normals.data;
    float *pout = (float *)job->out_positions.data;
    float *nout = (float *)job->out_normals.data;
    /* the normals a block behind (see lbs8_blocks), unless that lands them on the positions'
     * offsets in a page: then 1.0-1.1x the time of other layouts with no lag, 1.2-1.5x with it */
    const int defer = !(normals && stream && outputs_close(pout, nout, 8 * 3 * sizeof(float)));
    if (rigid && defer)
        return lbs8_blocks(job, v, end, pin, nin, pout, nout, stream, stream_n, 1, 1, 1, it, kk,
                           wt, wpacked);
    if (rigid)
        return lbs8_blocks(job, v, end, pin, nin, pout, nout, stream, stream_n, 1, 1, 0, it, kk,
                           wt, wpacked);
    if (normals && defer)
        return lbs8_blocks(job, v, end, pin, nin, pout, nout, stream, stream_n, 0, 1, 1, it, kk,
                           wt, wpacked);
    if (normals)
        return lbs8_blocks(job, v, end, pin, nin, pout, nout, stream, stream_n, 0, 1, 0, it, kk,
                           wt, wpacked);
    return lbs8_blocks(job, v, end, pin, NULL, pout, NULL, stream, 0, 0, 0, 0, it, kk, wt,
                       wpacked);
}

SK_ALWAYS_INLINE void lbs8_range(const sk_skin_job_f32 *job, int64_t begin, int64_t end,
                                 sk_index_type it, int64_t kk, sk_weight_type wt)
{
    const int normals = job->normals.data != NULL;
    const int rigid = normals && SK_COF_IS_MATRIX(job, sk_lbs_cof_is_matrix_f32);
    int64_t v = begin;
    if (packed_job(&job->positions, &job->out_positions, &job->normals, &job->out_normals, 4)) {
        const float *pout = (const float *)job->out_positions.data;
        const float *nout = (const float *)job->out_normals.data;
        int stream = job->stream;
        /* a partial head until the positions are 32-byte aligned */
        const int64_t head = stream_head(&stream, pout + 3 * v, 3 * sizeof(float), 8, 32, end - v);
        if (head > 0) {
            lbs8_part(job, v, head, rigid, it, kk, wt);
            v += head;
        }
        const int stream_n = stream && normals && ((uintptr_t)(nout + 3 * v) & 31) == 0;
        /* the loop compiled once for each case (see lbs4d_range), and with K = 4 (8) once more
         * for contiguous (V, K) weights, read at offsets known to the compiler: 4% less time with
         * normals and 9% positions only at 100k and 1M on Zen 3 than with the weights' strides
         * read from the job (fewer integer registers live, no multiply per vertex) */
        if (LBS8_OFFSETS(kk) && wt == SK_WEIGHT_FLOAT &&
            weights_packed(&job->influences, (int)kk, 4))
            v = lbs8_loops(job, v, end, stream, stream_n, rigid, normals, it, kk, wt, 1);
        else
            v = lbs8_loops(job, v, end, stream, stream_n, rigid, normals, it, kk, wt, 0);
        if (stream) _mm_sfence(); /* non-temporal stores visible before the threads join */
    }
    for (; v < end; v += 8) lbs8_part(job, v, end - v < 8 ? end - v : 8, rigid, it, kk, wt);
}

SIMD_INSTANCES_LBS_IN(lbs8_range, sk_skin_job_f32, SIMD_INSTANCE, SIMD_INSTANCE_LBS32B)
SIMD_INSTANCES_FEW_K(lbs8_range, sk_skin_job_f32)
/* Contiguous int64 joints (NumPy's default integer: argsort, argpartition, torch's long) with K
 * = 4 and 8 float weights: the int32 loops, their offsets made by offsets8_i64, rather than
 * SIMD_NARROWED's pass that copies the joints to int32 a chunk at a time (same bits; strided
 * int64 joints, and DQS, CoR and float64, keep the narrowing). */
SIMD_INSTANCE(lbs8_range, sk_skin_job_f32, k4_i64, SK_INDEX_I64, 4, SK_WEIGHT_FLOAT)
SIMD_INSTANCE_LBS32B(lbs8_range, sk_skin_job_f32, k8_i64, SK_INDEX_I64, 8, SK_WEIGHT_FLOAT)
#define LBS8_I64_ROWS(job, k_)                                                                   \
    (SIMD_FLOAT_K(job, k_) &&                                                                    \
     indices_i64_rows(&(job)->influences, k_, (job)->influences.index_type))
/* K = 4 unorm weights (glTF's normalized WEIGHTS_0 read raw, `quantize`'s output): the K = 4
 * loops with each weight converted as the loop for any K converts it, q / 255 or q / 65535
 * (0.60-0.67x the time of that loop with normals, 0.46x positions only, at 100k and 1M on a
 * Zen 4 VM, converting slot by slot; lbs8_weights4's four at a time took 0.89-0.93x of that;
 * same bits) */
SIMD_INSTANCE(lbs8_range, sk_skin_job_f32, k4_unorm8, job->influences.index_type, 4,
              SK_WEIGHT_UNORM8)
SIMD_INSTANCE(lbs8_range, sk_skin_job_f32, k4_unorm16, job->influences.index_type, 4,
              SK_WEIGHT_UNORM16)

#if SK_SIMD_PART(LBS32)
void SK_ISA(sk_lbs, _f32)(const sk_skin_job_f32 *job, int64_t begin, int64_t end)
{
    if (LBS8_I64_ROWS(job, 4)) {
        lbs8_range_k4_i64(job, begin, end);
        return;
    }
    if (LBS8_I64_ROWS(job, 8)) {
        lbs8_range_k8_i64(job, begin, end);
        return;
    }
    SIMD_NARROW_OR_GO_ON(job, begin, end, SK_ISA(sk_lbs, _f32), narrowed_f32, 0);
    SIMD_FEW_K(lbs8_range, job, begin, end);
    if (job->influences.k == 4 && job->n_joints <= SK_SIMD_MAX_JOINTS_K4) {
        if (job->influences.weight_type == SK_WEIGHT_UNORM8) {
            lbs8_range_k4_unorm8(job, begin, end);
            return;
        }
        if (job->influences.weight_type == SK_WEIGHT_UNORM16) {
            lbs8_range_k4_unorm16(job, begin, end);
            return;
        }
    }
    SIMD_DISPATCH_LBS(lbs8_range, job, begin, end);
}

void SK_ISA(sk_rigid, _f32)(const sk_skin_job_f32 *job, int64_t begin, int64_t end)
{
    SIMD_NARROW_RIGID_OR_GO_ON(job, begin, end, SK_ISA(sk_rigid, _f32), narrowed_rigid_f32);
    SIMD_RIGID_DISPATCH(lbs8_range, job, begin, end);
}
#endif /* SK_SIMD_PART(LBS32) */

#endif /* __AVX512F__ */

/* ==========================================================================================
 * float64 LBS, both ISAs: 4 vertices per block, one column of the blended 3x4 per ymm register
 * (on AVX-512 the K = 4 blends run two columns to a zmm register).
 * ======================================================================================== */

SK_ALWAYS_INLINE double lbs4d_blend(__m256d m[4], __m256d c[3], const sk_skin_job_f64 *job,
                                    int64_t v, const lbs4d_joint *row, sk_index_type it,
                                    int64_t kk, sk_weight_type wt, int normals, const int wpk)
{
    if (kk == SIMD_RIGID) { /* one joint, weight 1; j < 0 or >= J: copied */
        const int64_t j = simd_index((const char *)job->rigid_indices.data +
                                     v * job->rigid_indices.row, it);
        if (j < 0 || j >= job->n_joints) {
            for (int q = 0; q < 4; ++q) m[q] = _mm256_setzero_pd();
            for (int q = 0; normals && q < 3; ++q) c[q] = _mm256_setzero_pd();
            return 0;
        }
        const double *pj = job->prepared + SK_LBS_PREPARED_SIZE * j;
        for (int q = 0; q < 4; ++q) m[q] = _mm256_loadu_pd(pj + 4 * q);
        for (int q = 0; normals && q < 3; ++q) c[q] = _mm256_loadu_pd(pj + 16 + 4 * q);
        return 1;
    }
    const sk_influences *in = &job->influences;
    const char *ip = (const char *)in->indices.data + v * in->indices.row;
    const char *wp = (const char *)in->weights.data + v * in->weights.row;
#ifdef __AVX512F__
    /* K = 4: two columns a register, the same multiply-adds lane by lane (6-11% less time per
     * vertex for positions only and scaled palettes, 7-8% for a rigid palette with normals) */
    if (kk == 4) {
        __m512d m01 = _mm512_setzero_pd(), m23 = m01, c01 = m01, c2_ = m01;
        for (int k = 0; k < 4; ++k) {
            const __m512d wv = _mm512_set1_pd(
                wpk ? ((const double *)in->weights.data)[4 * v + k]
                    : *(const double *)(wp + k * in->weights.elem));
            /* whole cache lines where `prepared` is 64-byte aligned */
            const double *pj = lbs4d_row(job->prepared, row, k);
            m01 = _mm512_fmadd_pd(wv, _mm512_loadu_pd(pj), m01);
            m23 = _mm512_fmadd_pd(wv, _mm512_loadu_pd(pj + 8), m23);
            if (normals) {
                c01 = _mm512_fmadd_pd(wv, _mm512_loadu_pd(pj + 16), c01);
                c2_ = _mm512_fmadd_pd(wv, _mm512_loadu_pd(pj + 24), c2_); /* and the padding */
            }
        }
        m[0] = _mm512_castpd512_pd256(m01), m[1] = _mm512_extractf64x4_pd(m01, 1);
        m[2] = _mm512_castpd512_pd256(m23), m[3] = _mm512_extractf64x4_pd(m23, 1);
        if (normals) {
            c[0] = _mm512_castpd512_pd256(c01), c[1] = _mm512_extractf64x4_pd(c01, 1);
            c[2] = _mm512_castpd512_pd256(c2_);
        }
        return 0; /* the K = 4 sums come from small4_f64 */
    }
#endif
    __m256d m0 = _mm256_setzero_pd(), m1 = m0, m2 = m0, m3 = m0, c0 = m0, c1 = m0, c2 = m0;
    double total = 0;
    const int64_t K = kk ? kk : in->k;
    /* K = 4 with the cofactors' blends (7 row loads a slot) and a row's weights adjacent: the
     * weights read two to a load into both lanes and spread by in-lane permutes, not a broadcast
     * load a slot (0.85-0.88x the time, 100k, Zen 4 VM; without the cofactors, a rigid palette's
     * normals or positions only, 1.01-1.03x, so those keep the broadcasts) */
    const int twos = kk == 4 && normals && !wpk && in->weights.elem == 8;
    __m256d w2[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    if (twos)
        for (int q = 0; q < 2; ++q) w2[q] = _mm256_broadcast_pd((const __m128d *)wp + q);
    for (int64_t k = 0; k < K; ++k) {
        double w = 0;
        int64_t j;
        const double *pj;
        if (kk == 4) { /* float weights, joints from lbs4d_joints, sums from small4_f64 */
            if (!twos) w = *(const double *)(wp + k * in->weights.elem);
            pj = lbs4d_row(job->prepared, row, k);
        } else {
            SIMD_SLOT(simd_weight_f64, in, ip, wp, k, it, wt, job->n_joints, w, j);
            pj = job->prepared + SK_LBS_PREPARED_SIZE * j;
        }
        const __m256d wv = !twos    ? _mm256_set1_pd(w)
                           : k % 2 ? _mm256_permute_pd(w2[k / 2], 0xF)
                                   : _mm256_permute_pd(w2[k / 2], 0x0);
        if (kk != 4) total += w;
        m0 = _mm256_fmadd_pd(wv, _mm256_loadu_pd(pj), m0);
        m1 = _mm256_fmadd_pd(wv, _mm256_loadu_pd(pj + 4), m1);
        m2 = _mm256_fmadd_pd(wv, _mm256_loadu_pd(pj + 8), m2);
        m3 = _mm256_fmadd_pd(wv, _mm256_loadu_pd(pj + 12), m3);
        if (normals) {
            c0 = _mm256_fmadd_pd(wv, _mm256_loadu_pd(pj + 16), c0);
            c1 = _mm256_fmadd_pd(wv, _mm256_loadu_pd(pj + 20), c1);
            c2 = _mm256_fmadd_pd(wv, _mm256_loadu_pd(pj + 24), c2);
        }
    }
    m[0] = m0, m[1] = m1, m[2] = m2, m[3] = m3;
    if (normals) c[0] = c0, c[1] = c1, c[2] = c2;
    return total;
}

/* For 4 vertices of K = 4 float64 weights, bit i: vertex v0 + i's sum <= 1e-6, or i >= n.
 * Contiguous (V, 4) rows are transposed and summed in one register, the same operations in
 * the same order. */
SK_ALWAYS_INLINE unsigned small4_f64(const sk_influences *in, int64_t v0, int n)
{
    const char *wp = (const char *)in->weights.data + v0 * in->weights.row;
    if (n < 4 || !weights_packed(in, 4, 8)) {
        unsigned small = 0;
        for (int i = 0; i < 4; ++i) {
            if (i >= n) {
                small |= 1u << i;
                continue;
            }
            const char *r = wp + i * in->weights.row;
            double t = *(const double *)r;
            for (int k = 1; k < 4; ++k) t += *(const double *)(r + k * in->weights.elem);
            small |= (unsigned)!(t > 1e-6) << i;
        }
        return small;
    }
    const double *w = (const double *)wp;
#ifdef __AVX512F__
    {
        /* The common answer first: a vertex with a weight above 1e-6 sums above it (weights are
         * >= 0), and none is copied when each of the four has one.  Found from sign bits
         * (1e-6 - w < 0 exactly when w > 1e-6) moved to a mask on port 0, where the sums below
         * take eight shuffles on port 5, the port the 512-bit multiply-adds share (on a
         * Cascade Lake Xeon 0.94x the time of float64 LBS, positions only, at 100k and 1M). */
        const __m512d lim = _mm512_set1_pd(1e-6), w0 = _mm512_loadu_pd(w),
                      w1 = _mm512_loadu_pd(w + 8);
        const unsigned lo = _mm512_movepi64_mask(_mm512_castpd_si512(_mm512_sub_pd(lim, w0))),
                       hi = _mm512_movepi64_mask(_mm512_castpd_si512(_mm512_sub_pd(lim, w1)));
        const unsigned big = lo | hi << 8; /* bit 4 i + k: vertex i's slot k is above 1e-6 */
        /* Only where no weight is negative or NaN (unvalidated weights reach here through the C
         * API): else a slot above 1e-6 says nothing of the sum, and this block's answer would
         * differ from that of a partial block of the same vertices (the loop above), so from
         * one thread count to another (found by the fuzz lane). */
        const __m512d zero = _mm512_setzero_pd();
        const unsigned odd = _mm512_cmp_pd_mask(w0, zero, _CMP_NGE_UQ) |
                             _mm512_cmp_pd_mask(w1, zero, _CMP_NGE_UQ);
        if (!odd && ((big | big >> 1 | big >> 2 | big >> 3) & 0x1111u) == 0x1111u) return 0;
    }
#endif
    const __m256d r0 = _mm256_loadu_pd(w), r1 = _mm256_loadu_pd(w + 4),
                  r2 = _mm256_loadu_pd(w + 8), r3 = _mm256_loadu_pd(w + 12);
    const __m256d a = _mm256_unpacklo_pd(r0, r1), b = _mm256_unpackhi_pd(r0, r1); /* slots 0 2, 1 3 */
    const __m256d c = _mm256_unpacklo_pd(r2, r3), d = _mm256_unpackhi_pd(r2, r3);
    const __m256d w0 = _mm256_permute2f128_pd(a, c, 0x20), w2 = _mm256_permute2f128_pd(a, c, 0x31);
    const __m256d w1 = _mm256_permute2f128_pd(b, d, 0x20), w3 = _mm256_permute2f128_pd(b, d, 0x31);
    const __m256d t = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(w0, w1), w2), w3);
    return ~(unsigned)_mm256_movemask_pd(_mm256_cmp_pd(t, _mm256_set1_pd(1e-6), _CMP_GT_OQ)) & 0xfu;
}

/* 1 / sqrt(x) for 4 lanes where x > 0, else 1.  With AVX-512 the 14-bit estimate and two
 * Newton steps (each doubles the correct bits: about 1 unit in the last place), which
 * replace a square root and a division of the whole register. */
SK_ALWAYS_INLINE __m256d inv_sqrt4d(__m256d x)
{
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d positive = _mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_GT_OQ);
#ifdef __AVX512F__
    const __m256d half_x = _mm256_mul_pd(_mm256_set1_pd(0.5), x), three_halves = _mm256_set1_pd(1.5);
    __m256d y = _mm256_rsqrt14_pd(x);
    for (int step = 0; step < 2; ++step)
        y = _mm256_mul_pd(y, _mm256_fnmadd_pd(_mm256_mul_pd(half_x, y), y, three_halves));
    return _mm256_blendv_pd(one, y, positive);
#else
    return _mm256_blendv_pd(one, _mm256_div_pd(one, _mm256_sqrt_pd(x)), positive);
#endif
}

/* How lbs4d_store writes a block's rows: ordinary stores; non-temporal, aligned; or (AVX-512,
 * lbs4d_pairs) by pairs of blocks, the first block's packed rows held in registers and written
 * with the second's, so that each 64-byte line is written whole in one burst: aligned (the
 * 24 doubles of a pair start a line), or shifted through permutes (rows_pair). */
enum { ROWS_CACHED, ROWS_STREAM, ROWS_HOLD, ROWS_PAIR, ROWS_SHIFT };

/* The state of an output written by pairs of blocks: the first block's packed rows, and for
 * ROWS_SHIFT, where the pairs start 1-7 doubles past a 64-byte boundary (an output at another
 * offset within its cache line than the positions'), float32's shift_stream, each pair's 24
 * doubles going through it as 48 floats.  The stream is the caller's, by pointer: held here by
 * value (and zeroed with the struct), it left float64 LBS streamed through the shift at
 * 1.04-1.07x the time at 1M and 1.04x at 300k on Zen 5 (paired, both orders, same bits). */
typedef struct {
    __m256d held[3];
#ifdef __AVX512F__
    shift_stream *shift;
#endif
} rows_pair;

#ifdef __AVX512F__
/* Four vertices' rows [x y z _] packed into three registers of 12 doubles: one two-source
 * permute a register, not two permutes and a blend as AVX2's lbs4d_store below (2-5% less
 * time for a streamed call on the Xeon). */
SK_ALWAYS_INLINE void lbs4d_pack(const __m256d y[4], __m256d r[3])
{
    r[0] = _mm256_permutex2var_pd(y[0], _mm256_setr_epi64x(0, 1, 2, 4), y[1]);
    r[1] = _mm256_permutex2var_pd(y[1], _mm256_setr_epi64x(1, 2, 4, 5), y[2]);
    r[2] = _mm256_permutex2var_pd(y[2], _mm256_setr_epi64x(2, 4, 5, 6), y[3]);
}

SK_ALWAYS_INLINE void lbs4d_stream(double *out, const __m256d r[3])
{
    for (int i = 0; i < 3; ++i) _mm256_stream_pd(out + 4 * i, r[i]);
}

/* A pair's 24 doubles (from `at` on), the held block's rows then r, through the shift. */
SK_ALWAYS_INLINE void pair_shift_put(rows_pair *s, double *at, const __m256d r[3])
{
    const __m512 rows[3] = {
        _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(s->held[0]), s->held[1], 1)),
        _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(s->held[2]), r[0], 1)),
        _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(r[1]), r[2], 1))};
    shift_put48(s->shift, (float *)at, rows);
}
#endif

/* Four vertices' rows [x y z _] to 12 packed doubles at out, written the way `mode` says.
 * ROWS_CACHED: rows of 4 in order (each overwrites the next row's x), the last exactly 3;
 * otherwise packed (permutes cost more than the overlapping stores, about 4% of a call in
 * cache) and streamed aligned; ROWS_HOLD keeps them in `pair` instead, and ROWS_PAIR first
 * streams the held rows to the 12 doubles before out (ROWS_SHIFT: both through the shift). */
SK_ALWAYS_INLINE void lbs4d_store(double *out, const __m256d y[4], int mode, rows_pair *pair)
{
    if (mode == ROWS_CACHED) {
        for (int i = 0; i < 3; ++i) _mm256_storeu_pd(out + 3 * i, y[i]);
        _mm_storeu_pd(out + 9, _mm256_castpd256_pd128(y[3]));
        _mm_store_sd(out + 11, _mm256_extractf128_pd(y[3], 1));
        return;
    }
#ifdef __AVX512F__
    __m256d r[3];
    lbs4d_pack(y, r);
    if (mode == ROWS_HOLD) {
        for (int i = 0; i < 3; ++i) pair->held[i] = r[i];
        return;
    }
    if (mode == ROWS_SHIFT) {
        pair_shift_put(pair, out - 12, r);
        return;
    }
    if (mode == ROWS_PAIR) lbs4d_stream(out - 12, pair->held);
    lbs4d_stream(out, r);
#else
    /* AVX2 keeps its own spelling: the form above (the rows in an array, one stream loop),
     * with the range's head split by fours, measured 3-8% slower for a streamed 1M call on
     * Zen 3 */
    const __m256d r0 = _mm256_blend_pd(y[0], _mm256_permute4x64_pd(y[1], _MM_SHUFFLE(0, 0, 0, 0)), 0x8);
    const __m256d r1 = _mm256_blend_pd(_mm256_permute4x64_pd(y[1], _MM_SHUFFLE(0, 0, 2, 1)),
                                       _mm256_permute4x64_pd(y[2], _MM_SHUFFLE(1, 0, 0, 0)), 0xC);
    const __m256d r2 = _mm256_blend_pd(_mm256_permute4x64_pd(y[3], _MM_SHUFFLE(2, 1, 0, 0)),
                                       _mm256_permute4x64_pd(y[2], _MM_SHUFFLE(2, 2, 2, 2)), 0x1);
    _mm256_stream_pd(out, r0);
    _mm256_stream_pd(out + 4, r1);
    _mm256_stream_pd(out + 8, r2);
#endif
}

/* The vertices in `copy` (bit i) copied through: given their input rows in the registers where
 * the rows are written later (AVX-512, lbs4d_pairs: an exact copy, read before anything is
 * written; doing that for every mode measured slower on Zen 3), and otherwise left for the
 * caller to write over the stored rows (returns 1 then). */
SK_ALWAYS_INLINE int lbs4d_copy_rows(__m256d y[4], const double *in, int n, unsigned copy, int mode)
{
#ifdef __AVX512F__
    if (copy && mode >= ROWS_HOLD) {
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i)
            if (i < n && (copy >> i & 1))
                y[i] = _mm256_setr_pd(in[3 * i], in[3 * i + 1], in[3 * i + 2], 0.0);
        return 0;
    }
#endif
    return copy != 0;
}

/* lbs4d_store of y to out the way `mode` says, the vertices in `copy` (weights summing to ~0)
 * given their rows of `in` instead, read before the store (out may be in: sk.h's in-place
 * form). */
SK_ALWAYS_INLINE void lbs4d_store_copies(double *out, __m256d y[4], int mode, rows_pair *pair,
                                         const double *in, int n, unsigned copy)
{
    const int patch = lbs4d_copy_rows(y, in, n, copy, mode);
    double keep[4][3];
    if (patch)
        for (int i = 0; i < n; ++i)
            if (copy >> i & 1) memcpy(keep[i], in + 3 * i, 3 * sizeof(double));
    lbs4d_store(out, y, mode, pair);
    if (patch)
        for (int i = 0; i < n; ++i)
            if (copy >> i & 1) memcpy(out + 3 * i, keep[i], 3 * sizeof(double));
}

/* The first half of lbs4d_block: the four blends and their products; stores the positions
 * (`copy`: copied through) the way `mode` says (lbs4d_store) and leaves the normals in yn, not
 * yet unit length (with normals: nin not NULL); returns the vertices to copy through (bit i). */
SK_ALWAYS_INLINE unsigned lbs4d_front(const sk_skin_job_f64 *job, int64_t v0, int n,
                                      const lbs4d_joint *row, const double *pin,
                                      const double *nin, double *pout, __m256d yn[4],
                                      int mode, rows_pair *pair, int rigid, sk_index_type it,
                                      int64_t kk, sk_weight_type wt, const int wpk)
{
    const int normals = nin != NULL, cof = normals && !rigid;
    /* the four blends unrolled (their chains of multiply-adds overlap: 2-5% less time than a
     * rolled loop), then the products and sums */
    __m256d mb[4][4], cb[4][3];
    unsigned copy = kk == 4 ? small4_f64(&job->influences, v0, n) : 0;
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        double total = 0;
        if (i < n) { /* writes the matrix, and the cofactors with cof (zeros where unused) */
            total = lbs4d_blend(mb[i], cb[i], job, v0 + i, row + 4 * i, it, kk, wt, cof, wpk);
        } else {
            for (int q = 0; q < 4; ++q) mb[i][q] = _mm256_setzero_pd();
            for (int q = 0; cof && q < 3; ++q) cb[i][q] = _mm256_setzero_pd();
        }
        if (kk != 4 && !(total > 1e-6)) copy |= 1u << i;
    }
    /* (On Zen 5, the coordinates from two vector loads of the block's 12 and a cross-lane permute
     * each instead of six broadcast loads a vertex took 0.95x the time cached at 100k vertices
     * but 1.04x streamed, at 100k and 1M; the products of both halves of the zmm blends at once,
     * a masked multiply, a blend and one multiply-add, the same bits, took 1.14-1.15x.) */
    __m256d yp[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        const __m256d *m = mb[i], *c = cof ? cb[i] : mb[i]; /* rigid: the matrix's 3x3 */
        const double *p = pin + 3 * i;
        /* (c0 px + c2 pz) + (c1 py + c3), as the float kernels sum their blocks */
        yp[i] = _mm256_add_pd(
            _mm256_fmadd_pd(m[2], _mm256_broadcast_sd(p + 2), _mm256_mul_pd(m[0], _mm256_broadcast_sd(p))),
            _mm256_fmadd_pd(m[1], _mm256_broadcast_sd(p + 1), m[3]));
        yn[i] = _mm256_setzero_pd();
        if (normals) {
            const double *q = nin + 3 * i;
            yn[i] = _mm256_add_pd(
                _mm256_fmadd_pd(c[2], _mm256_broadcast_sd(q + 2), _mm256_mul_pd(c[0], _mm256_broadcast_sd(q))),
                _mm256_mul_pd(c[1], _mm256_broadcast_sd(q + 1)));
        }
    }
    lbs4d_store_copies(pout, yp, mode, pair, pin, n, copy);
    return copy;
}

/* The second half of lbs4d_block: the normals yn made unit length, the vertices in `copy`
 * given their input normals, and stored the way `mode` says.  Each |n|^2 is
 * (x^2 + y^2) + (z^2 + 0). */
SK_ALWAYS_INLINE void lbs4d_normals(const double *nin, double *nout, int n, __m256d yn[4],
                                    unsigned copy, int mode, rows_pair *pair)
{
    __m256d s[4];
    for (int i = 0; i < 4; ++i) s[i] = _mm256_mul_pd(yn[i], yn[i]);
    const __m256d t0 = _mm256_hadd_pd(s[0], s[1]), t1 = _mm256_hadd_pd(s[2], s[3]);
    const __m256d inv = inv_sqrt4d(_mm256_add_pd(_mm256_permute2f128_pd(t0, t1, 0x20),
                                                 _mm256_permute2f128_pd(t0, t1, 0x31)));
    yn[0] = _mm256_mul_pd(yn[0], _mm256_permute4x64_pd(inv, 0x00));
    yn[1] = _mm256_mul_pd(yn[1], _mm256_permute4x64_pd(inv, 0x55));
    yn[2] = _mm256_mul_pd(yn[2], _mm256_permute4x64_pd(inv, 0xAA));
    yn[3] = _mm256_mul_pd(yn[3], _mm256_permute4x64_pd(inv, 0xFF));
    lbs4d_store_copies(nout, yn, mode, pair, nin, n, copy);
}

/* As lbs16_block for 4 vertices of doubles; `rigid`: every joint's cofactor is its 3x3
 * (sk_lbs_cof_is_matrix), so normals take the blended matrix and no cofactor is blended. */
SK_ALWAYS_INLINE void lbs4d_block(const sk_skin_job_f64 *job, int64_t v0, int n, const lbs4d_joint *row,
                                  const double *pin, const double *nin, double *pout, double *nout,
                                  int stream_p, int stream_n, int rigid, sk_index_type it,
                                  int64_t kk, sk_weight_type wt)
{
    __m256d yn[4];
    const unsigned copy = lbs4d_front(job, v0, n, row, pin, nin, pout, yn,
                                      stream_p ? ROWS_STREAM : ROWS_CACHED, NULL, rigid, it, kk,
                                      wt, 0);
    if (nin) lbs4d_normals(nin, nout, n, yn, copy, stream_n ? ROWS_STREAM : ROWS_CACHED, NULL);
}

SK_ALWAYS_INLINE void lbs4d_part(const sk_skin_job_f64 *job, int64_t v0, int64_t n, int rigid,
                                 sk_index_type it, int64_t kk, sk_weight_type wt)
{
    const int normals = job->normals.data != NULL;
    double bp[12], bn[12], op[12], on[12];
    lbs4d_joint row[16];
    gather3_f64(bp, 4, &job->positions, v0, n);
    if (normals) gather3_f64(bn, 4, &job->normals, v0, n);
    if (kk == 4)
        lbs4d_joints(row, &job->influences, v0, (int)n, it, job->n_joints, job->prepared);
    lbs4d_block(job, v0, (int)n, row, bp, normals ? bn : NULL, op, normals ? on : NULL, 0, 0,
                rigid, it, kk, wt);
    scatter3_f64(&job->out_positions, v0, n, op);
    if (normals) scatter3_f64(&job->out_normals, v0, n, on);
}

/* Whole blocks of 4 from v while they fit before end; returns where they stopped. */
SK_ALWAYS_INLINE int64_t lbs4d_blocks(const sk_skin_job_f64 *job, int64_t v, int64_t end,
                                      const double *pin, const double *nin, double *pout,
                                      double *nout, int stream, int stream_n, int rigid,
                                      const int normals, int defer, sk_index_type it, int64_t kk,
                                      sk_weight_type wt)
{
    /* K = 4: the next block's joint rows are computed before this block's blends, so that
     * their vector stores have reached the cache when the blends read them one by one (read
     * right after, store forwarding fails: 35% more time) */
    lbs4d_joint row[2][16];
    if (kk == 4 && v + 4 <= end)
        lbs4d_joints(row[0], &job->influences, v, 4, it, job->n_joints, job->prepared);
    const sk_influences *in = &job->influences;
    /* `defer` (AVX2, outputs_close): the previous block's normals are made unit length and
     * written after this block's blends, as in lbs8_blocks; not otherwise, since deferring took
     * 5-15% more time in other layouts on Zen 3 (16 ymm registers do not hold both blocks'
     * values).  (AVX-512 comes here for positions only: lbs4d_pairs does the normals.) */
    __m256d yn_prev[4];
    unsigned copy_prev = 0;
    int64_t v_prev = -1;
    const int mode_p = stream ? ROWS_STREAM : ROWS_CACHED;
    const int mode_n = stream_n ? ROWS_STREAM : ROWS_CACHED;
    for (int b = 0; v + 4 <= end; v += 4, b ^= 1) {
        /* big calls, K = 4: the weights (32 bytes a vertex) 64 vertices ahead, 2-3% at 1M; also
         * prefetching the positions and normals (64-512 vertices ahead), or the indices,
         * measured slower or within noise (Zen 5, the Xeon; 2-4% faster in one Zen 3 run).
         * K = 8 took 0.99x the time without (Zen 5, paired, 1M). */
        if (kk == 4 && stream && in->weights.data && v + 4 + 64 <= end)
            for (int l = 0; l < 2; ++l)
                _mm_prefetch((const char *)in->weights.data + (v + 64) * in->weights.row + 64 * l,
                             _MM_HINT_T0);
        if (kk == 4 && v + 8 <= end)
            lbs4d_joints(row[b ^ 1], &job->influences, v + 4, 4, it, job->n_joints, job->prepared);
        __m256d yn[4];
        const unsigned copy = lbs4d_front(job, v, 4, row[b], pin + 3 * v,
                                          normals ? nin + 3 * v : NULL, pout + 3 * v, yn, mode_p,
                                          NULL, rigid, it, kk, wt, 0);
        if (normals && !defer) {
            lbs4d_normals(nin + 3 * v, nout + 3 * v, 4, yn, copy, mode_n, NULL);
        } else if (normals) {
            if (v_prev >= 0)
                lbs4d_normals(nin + 3 * v_prev, nout + 3 * v_prev, 4, yn_prev, copy_prev, mode_n,
                              NULL);
            for (int i = 0; i < 4; ++i) yn_prev[i] = yn[i];
            copy_prev = copy;
            v_prev = v;
        }
    }
    if (normals && defer && v_prev >= 0)
        lbs4d_normals(nin + 3 * v_prev, nout + 3 * v_prev, 4, yn_prev, copy_prev, mode_n, NULL);
    return v;
}

#ifdef __AVX512F__
/* As lbs4d_blocks with normals, for pairs of blocks (8 vertices, 192 bytes of each output) from
 * v.  Streamed (not `cached`), where the positions' output is 64-byte aligned: each block's
 * positions and normals are packed, the first block's held, and each output's three lines
 * written together with the second block's (`shift_n`: the normals' through rows_pair's shift,
 * their output being d doubles past a line there).  `cached`: each block's rows stored as
 * lbs4d_blocks stores them, for the overlap of the normals below (on the Cascade Lake Xeon
 * 0.84-0.87x the time of lbs4d_blocks at 4k-100k vertices, rigid and scaled palettes, same
 * bits).  On the Xeon of model 207, with lbs4d_pack's permutes and a
 * software prefetch since dropped (below), a 1M-vertex call took 0.85-0.92x the time of
 * four-vertex blocks with half lines streamed as they come (their normals cached where not
 * 32-byte aligned), 300k 0.92-0.97x (paired A/Bs, same bits).  On Zen 3 the pairs measured
 * within noise, so AVX2 keeps lbs4d_blocks; positions only keep it too (pairs: 2% slower).
 * Returns where the pairs stopped. */
SK_ALWAYS_INLINE int64_t lbs4d_pairs(const sk_skin_job_f64 *job, int64_t v, int64_t end,
                                     const double *pin, const double *nin, double *pout,
                                     double *nout, const int rigid, const int shift_n,
                                     const int cached, sk_index_type it, int64_t kk,
                                     sk_weight_type wt, const int wpk)
{
    lbs4d_joint row[2][16];
    if (kk == 4 && v + 4 <= end)
        lbs4d_joints(row[0], &job->influences, v, 4, it, job->n_joints, job->prepared);
    shift_stream sn = {.first = NULL};
    if (shift_n) shift_begin(&sn, (float *)(nout + 3 * v));
    rows_pair pp = {.shift = NULL}, pn = {.shift = &sn};
    /* no software prefetch: the weights 64 vertices ahead and the positions and normals 128
     * had measured 0.96-1.00x the time at 1M and 1.02-1.03x at 300k on the Xeon of model 207;
     * on a Cascade Lake Xeon (model 85) dropping them took 0.89-0.98x at 1M (0.94-0.99x in
     * paired A/Bs over 13 placements of the normals' output within a page) and 0.85-0.96x at
     * 300k */
    for (; v + 8 <= end; v += 8) {
        /* both blocks' blends and products first, then both blocks' normals: the normals'
         * chain of dependent operations (sums of squares, reciprocal square root, Newton
         * steps, scaling, packing) of the first block overlaps the second block's blends.  On
         * the Cascade Lake Xeon 0.89-0.95x the time of each block finished in turn at 300k and
         * 1M, over 7 placements of the normals' output (same bits) */
        __m256d yn[2][4];
        unsigned copy[2];
#pragma GCC unroll 2
        for (int b = 0; b < 2; ++b) { /* the pair's blocks: the first held, the second both */
            const int64_t u = v + 4 * b;
            if (kk == 4 && u + 8 <= end)
                lbs4d_joints(row[b ^ 1], &job->influences, u + 4, 4, it, job->n_joints,
                             job->prepared);
            copy[b] = lbs4d_front(job, u, 4, row[b], pin + 3 * u, nin + 3 * u,
                                  pout + 3 * u, yn[b],
                                  cached ? ROWS_CACHED : b ? ROWS_PAIR : ROWS_HOLD, &pp,
                                  rigid, it, kk, wt, wpk);
        }
#pragma GCC unroll 2
        for (int b = 0; b < 2; ++b) {
            const int64_t u = v + 4 * b;
            lbs4d_normals(nin + 3 * u, nout + 3 * u, 4, yn[b], copy[b],
                          cached ? ROWS_CACHED : !b ? ROWS_HOLD : shift_n ? ROWS_SHIFT : ROWS_PAIR,
                          &pn);
        }
    }
    if (shift_n) shift_end(&sn, (float *)(nout + 3 * v));
    return v;
}
#endif

SK_ALWAYS_INLINE void lbs4d_range(const sk_skin_job_f64 *job, int64_t begin, int64_t end,
                                  sk_index_type it, int64_t kk, sk_weight_type wt)
{
    const int normals = job->normals.data != NULL;
    const int rigid = normals && SK_COF_IS_MATRIX(job, sk_lbs_cof_is_matrix_f64);
    int64_t v = begin;
    if (packed_job(&job->positions, &job->out_positions, &job->normals, &job->out_normals, 8)) {
        const double *pin = (const double *)job->positions.data;
        const double *nin = (const double *)job->normals.data;
        double *pout = (double *)job->out_positions.data;
        double *nout = (double *)job->out_normals.data;
        int stream = job->stream;
        /* a partial head until the positions are 32-byte aligned (AVX-512: 64, for
         * lbs4d_pairs; up to 7 vertices) */
#ifdef __AVX512F__
        const int64_t head = stream_head(&stream, pout + 3 * v, 3 * sizeof(double), 8, 64,
                                         end - v);
        for (int64_t left = head, n; left > 0; left -= n, v += n) {
            n = left < 4 ? left : 4;
            lbs4d_part(job, v, n, rigid, it, kk, wt);
        }
#else
        const int64_t head = stream_head(&stream, pout + 3 * v, 3 * sizeof(double), 4, 32,
                                         end - v);
        if (head > 0) {
            lbs4d_part(job, v, head, rigid, it, kk, wt);
            v += head;
        }
#endif
        /* the loop compiled once for each case: with rigid a run-time flag, the blends tested
         * it per slot and spilled their registers; with `normals` one, positions only took 18%
         * more time (AVX-512) and 21% (AVX2) at 100k and 1M vertices */
#ifdef __AVX512F__
        /* with normals, pairs of blocks (streamed or cached); positions only, lbs4d_blocks */
        const int shift_n = normals && ((uintptr_t)(nout + 3 * v) & 63) != 0;
        /* a rigid palette with K = 4 contiguous weights (the common case) reads the weights at
         * offsets the compiler knows: 0.94-0.96x the time at 10k-1M on Zen 5 (paired, same
         * bits).  (The three rigid calls of each kind as one helper taking `wpk` compiled to a
         * loop that took 1.04-1.07x this one's time at 10k-100k, hence the calls spelled out.) */
        const int wpk = kk == 4 && rigid && weights_packed(&job->influences, 4, 8);
        if (stream && wpk && shift_n)
            v = lbs4d_pairs(job, v, end, pin, nin, pout, nout, 1, 1, 0, it, kk, wt, 1);
        else if (stream && wpk)
            v = lbs4d_pairs(job, v, end, pin, nin, pout, nout, 1, 0, 0, it, kk, wt, 1);
        else if (wpk)
            v = lbs4d_pairs(job, v, end, pin, nin, pout, nout, 1, 0, 1, it, kk, wt, 1);
        else if (stream && rigid && shift_n)
            v = lbs4d_pairs(job, v, end, pin, nin, pout, nout, 1, 1, 0, it, kk, wt, 0);
        else if (stream && rigid)
            v = lbs4d_pairs(job, v, end, pin, nin, pout, nout, 1, 0, 0, it, kk, wt, 0);
        else if (rigid)
            v = lbs4d_pairs(job, v, end, pin, nin, pout, nout, 1, 0, 1, it, kk, wt, 0);
        else if (stream && normals && shift_n)
            v = lbs4d_pairs(job, v, end, pin, nin, pout, nout, 0, 1, 0, it, kk, wt, 0);
        else if (stream && normals)
            v = lbs4d_pairs(job, v, end, pin, nin, pout, nout, 0, 0, 0, it, kk, wt, 0);
        else if (normals)
            v = lbs4d_pairs(job, v, end, pin, nin, pout, nout, 0, 0, 1, it, kk, wt, 0);
        else
            v = lbs4d_blocks(job, v, end, pin, NULL, pout, NULL, stream, 0, 0, 0, 0, it, kk, wt);
#else
        const int defer = normals && stream && outputs_close(pout, nout, 0);
        const int stream_n = stream && normals && ((uintptr_t)(nout + 3 * v) & 31) == 0;
        if (rigid && defer) /* (with normals) */
            v = lbs4d_blocks(job, v, end, pin, nin, pout, nout, stream, stream_n, 1, 1, 1, it, kk,
                             wt);
        else if (rigid)
            v = lbs4d_blocks(job, v, end, pin, nin, pout, nout, stream, stream_n, 1, 1, 0, it, kk,
                             wt);
        else if (normals && defer)
            v = lbs4d_blocks(job, v, end, pin, nin, pout, nout, stream, stream_n, 0, 1, 1, it, kk,
                             wt);
        else if (normals)
            v = lbs4d_blocks(job, v, end, pin, nin, pout, nout, stream, stream_n, 0, 1, 0, it, kk,
                             wt);
        else
            v = lbs4d_blocks(job, v, end, pin, NULL, pout, NULL, stream, 0, 0, 0, 0, it, kk, wt);
#endif
        if (stream) _mm_sfence(); /* non-temporal stores visible before the threads join */
    }
    for (; v < end; v += 4) lbs4d_part(job, v, end - v < 4 ? end - v : 4, rigid, it, kk, wt);
}

SIMD_INSTANCES_LBS(lbs4d_range, sk_skin_job_f64)
SIMD_INSTANCES_FEW_K(lbs4d_range, sk_skin_job_f64)

#if SK_SIMD_PART(LBS64)
void SK_ISA(sk_lbs, _f64)(const sk_skin_job_f64 *job, int64_t begin, int64_t end)
{
    SIMD_NARROW_OR_GO_ON(job, begin, end, SK_ISA(sk_lbs, _f64), narrowed_f64, 0);
    SIMD_FEW_K(lbs4d_range, job, begin, end);
    SIMD_DISPATCH_LBS(lbs4d_range, job, begin, end);
}

void SK_ISA(sk_rigid, _f64)(const sk_skin_job_f64 *job, int64_t begin, int64_t end)
{
    SIMD_RIGID_DISPATCH(lbs4d_range, job, begin, end);
}
#endif /* SK_SIMD_PART(LBS64) */

/* ==========================================================================================
 * float32 DQS of a rigid palette, both ISAs: blend each vertex's dual quaternion as one ymm
 * register, then finish 8 vertices at a time across lanes (transposed).
 * ======================================================================================== */

/* DQS's hemisphere signs for small J (sk_dqs_signs_f32, sk.h): multiplying a weight by +-1 is
 * exact, so the blend is bit-identical to testing the dot product per slot, and the slot loop
 * loses its longest chain.  For a range: the job's per-frame table (any K), or, for a job made
 * without one and K = 4, `table` filled from the quaternions at `quats` (`stride` floats per
 * joint); NULL otherwise or for J > SK_DQS_SIGN_MAX_J (the kernels then test each slot). */
SK_ALWAYS_INLINE const float *range_signs(float *table, const sk_skin_job_f32 *job, int64_t kk,
                                          const float *quats, ptrdiff_t stride)
{
    if (job->n_joints > SK_DQS_SIGN_MAX_J) return NULL;
    if (job->dqs_sign) return job->dqs_sign;
    if (kk != 4) return NULL;
    sk_dqs_signs_f32(table, NULL, quats, stride, job->n_joints);
    return table;
}

/* The pivot among the slots whose bits are set in `tied` (those holding the largest weight): the
 * smallest joint (a tie is rare). */
SK_ALWAYS_INLINE int64_t tied_pivot(unsigned tied, const int32_t *off)
{
    if (!tied) tied = 1; /* NaN weights (never validated): any pivot, no undefined ctz */
    int64_t pivot = off[__builtin_ctz(tied)];
    for (tied &= tied - 1; tied; tied &= tied - 1)
        pivot = off[__builtin_ctz(tied)] < pivot ? off[__builtin_ctz(tied)] : pivot;
    return pivot;
}

/* The pivot is the largest weight, ties to the smallest joint: the largest of these keys, as
 * the bits of a non-negative float order like the float (sign bit cleared: -0 is a zero weight,
 * which never wins over a positive one; all-zero vertices are copied).  No float compares, no
 * branches. */
SK_ALWAYS_INLINE uint64_t pivot_key(float w, int64_t j)
{
    uint32_t bits;
    memcpy(&bits, &w, sizeof bits);
    return ((uint64_t)(bits & 0x7fffffffu) << 32) | (uint32_t)~(uint32_t)j;
}

/* The scalar kernel's pivot and hemisphere rule (skin_dqs.template.c), the blend as one FMA per
 * slot.  Returns the weight sum; *b = 0 when it is <= 1e-6. */
SK_ALWAYS_INLINE float dqs8_blend(__m256 *b, const sk_skin_job_f32 *job, int64_t v,
                                  const int32_t *off, const float *sign, sk_index_type it,
                                  int64_t kk, sk_weight_type wt)
{
    const sk_influences *in = &job->influences;
    const char *ip = (const char *)in->indices.data + v * in->indices.row;
    const char *wp = (const char *)in->weights.data + v * in->weights.row;
    const float *prep = job->prepared;
    float total = 0;
    int64_t pivot = 0;
    if (kk == 4 && sign) { /* joints from offsets_k (stride 1), signs from the table */
        const ptrdiff_t we = in->weights.elem;
        const __m128 w4 = we == 4 ? _mm_loadu_ps((const float *)wp)
                                  : _mm_setr_ps(*(const float *)wp, *(const float *)(wp + we),
                                                *(const float *)(wp + 2 * we),
                                                *(const float *)(wp + 3 * we));
        for (int k = 0; k < 4; ++k) total += *(const float *)(wp + k * we);
        /* the pivot: the slots holding the largest weight, then the smallest joint among them
         * (a tie is rare); an all-zero vertex is copied, whatever its pivot */
        __m128 top = _mm_max_ps(w4, _mm_shuffle_ps(w4, w4, _MM_SHUFFLE(2, 3, 0, 1)));
        top = _mm_max_ps(top, _mm_shuffle_ps(top, top, _MM_SHUFFLE(1, 0, 3, 2)));
        unsigned tied = (unsigned)_mm_movemask_ps(_mm_cmpeq_ps(w4, top));
        pivot = tied_pivot(tied, off);
        __m256 acc = _mm256_setzero_ps();
        if (total > 1e-6f) {
            const float *sp = sign + pivot * job->n_joints;
            for (int k = 0; k < 4; ++k) {
                const float ws = *(const float *)(wp + k * in->weights.elem) * sp[off[k]];
                acc = _mm256_fmadd_ps(_mm256_set1_ps(ws),
                                      _mm256_loadu_ps(prep + SK_DQS_PREPARED_SIZE * off[k]), acc);
            }
        }
        *b = acc;
        return total;
    }
    if (kk == 8 && sign) { /* as K = 4, with 8 slots */
        const ptrdiff_t we = in->weights.elem;
        float w[8];
        for (int k = 0; k < 8; ++k) {
            w[k] = *(const float *)(wp + k * we);
            total += w[k];
        }
        const __m256 w8 = _mm256_loadu_ps(w);
        __m256 top = _mm256_max_ps(w8, _mm256_permute_ps(w8, _MM_SHUFFLE(2, 3, 0, 1)));
        top = _mm256_max_ps(top, _mm256_permute_ps(top, _MM_SHUFFLE(1, 0, 3, 2)));
        top = _mm256_max_ps(top, _mm256_permute2f128_ps(top, top, 0x01));
        unsigned tied = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(w8, top, _CMP_EQ_OQ));
        pivot = tied_pivot(tied, off);
        /* even and odd slots in two sums, so that two chains of four multiply-adds overlap
         * (with the branch-free pivot, 1.7x faster than the loop for any K) */
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        if (total > 1e-6f) {
            const float *sp = sign + pivot * job->n_joints;
            for (int k = 0; k < 8; k += 2) {
                a0 = _mm256_fmadd_ps(_mm256_set1_ps(w[k] * sp[off[k]]),
                                     _mm256_loadu_ps(prep + SK_DQS_PREPARED_SIZE * off[k]), a0);
                a1 = _mm256_fmadd_ps(_mm256_set1_ps(w[k + 1] * sp[off[k + 1]]),
                                     _mm256_loadu_ps(prep + SK_DQS_PREPARED_SIZE * off[k + 1]), a1);
            }
        }
        *b = _mm256_add_ps(a0, a1);
        return total;
    }
    const int64_t K = kk ? kk : in->k;
    uint64_t top = 0;
    for (int64_t k = 0; k < K; ++k) {
        float w;
        int64_t j;
        SIMD_SLOT(simd_weight_f32, in, ip, wp, k, it, wt, job->n_joints, w, j);
        total += w;
        top = pivot_key(w, j) > top ? pivot_key(w, j) : top;
    }
    pivot = (uint32_t)~top;
    __m256 acc = _mm256_setzero_ps();
    if (total > 1e-6f) {
        const float *q0 = prep + SK_DQS_PREPARED_SIZE * pivot;
        const float *sp = sign ? sign + pivot * job->n_joints : NULL;
        for (int64_t k = 0; k < K; ++k) {
            float w;
            int64_t j;
            SIMD_SLOT(simd_weight_f32, in, ip, wp, k, it, wt, job->n_joints, w, j);
            const float *pj = prep + SK_DQS_PREPARED_SIZE * j;
            /* the sign from the table, or the same expression as the scalar kernel, so the
             * same hemisphere decisions; a zero weight adds 0 (the palette is finite) */
            float ws = w;
            if (sp)
                ws *= sp[j];
            else if (q0[0] * pj[0] + q0[1] * pj[1] + q0[2] * pj[2] + q0[3] * pj[3] < 0)
                ws = -w;
            acc = _mm256_fmadd_ps(_mm256_set1_ps(ws), _mm256_loadu_ps(pj), acc);
        }
    }
    *b = acc;
    return total;
}

/* 8x8 transpose: r[i] = row i -> r[q] = element q of the 8 rows. */
SK_ALWAYS_INLINE void transpose8_ps(__m256 r[8])
{
    __m256 t[8], s[8];
    for (int i = 0; i < 4; ++i) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; ++i) {
        s[4 * i + 0] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        s[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        s[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        s[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (int i = 0; i < 4; ++i) {
        r[i] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x20);
        r[i + 4] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x31);
    }
}

/* 8 packed (x, y, z) rows <-> x, y, z registers (Intel's AoS/SoA shuffles for 3-vectors). */
SK_ALWAYS_INLINE void load8_xyz(const float *p, __m256 *x, __m256 *y, __m256 *z)
{
    __m256 m03 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p)), _mm_loadu_ps(p + 12), 1);
    __m256 m14 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p + 4)), _mm_loadu_ps(p + 16), 1);
    __m256 m25 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p + 8)), _mm_loadu_ps(p + 20), 1);
    __m256 xy = _mm256_shuffle_ps(m14, m25, _MM_SHUFFLE(2, 1, 3, 2));
    __m256 yz = _mm256_shuffle_ps(m03, m14, _MM_SHUFFLE(1, 0, 2, 1));
    *x = _mm256_shuffle_ps(m03, xy, _MM_SHUFFLE(2, 0, 3, 0));
    *y = _mm256_shuffle_ps(yz, xy, _MM_SHUFFLE(3, 1, 2, 0));
    *z = _mm256_shuffle_ps(yz, m25, _MM_SHUFFLE(3, 0, 3, 1));
}

SK_ALWAYS_INLINE void store8_xyz(float *p, __m256 x, __m256 y, __m256 z)
{
    __m256 rxy = _mm256_shuffle_ps(x, y, _MM_SHUFFLE(2, 0, 2, 0));
    __m256 ryz = _mm256_shuffle_ps(y, z, _MM_SHUFFLE(3, 1, 3, 1));
    __m256 rzx = _mm256_shuffle_ps(z, x, _MM_SHUFFLE(3, 1, 2, 0));
    __m256 r03 = _mm256_shuffle_ps(rxy, rzx, _MM_SHUFFLE(2, 0, 2, 0));
    __m256 r14 = _mm256_shuffle_ps(ryz, rxy, _MM_SHUFFLE(3, 1, 2, 0));
    __m256 r25 = _mm256_shuffle_ps(rzx, ryz, _MM_SHUFFLE(3, 1, 3, 1));
    _mm_storeu_ps(p, _mm256_castps256_ps128(r03));
    _mm_storeu_ps(p + 4, _mm256_castps256_ps128(r14));
    _mm_storeu_ps(p + 8, _mm256_castps256_ps128(r25));
    _mm_storeu_ps(p + 12, _mm256_extractf128_ps(r03, 1));
    _mm_storeu_ps(p + 16, _mm256_extractf128_ps(r14, 1));
    _mm_storeu_ps(p + 20, _mm256_extractf128_ps(r25, 1));
}

/* The rotation matrices (row-major r[3 i + j]) of 8 quaternions (x, y, z, s): `two` is 2 for
 * unit quaternions, 2 / |q|^2 for others. */
SK_ALWAYS_INLINE void quat8_matrix(__m256 r[9], __m256 x, __m256 y, __m256 z, __m256 s, __m256 two)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 xx = _mm256_mul_ps(x, x), yy = _mm256_mul_ps(y, y), zz = _mm256_mul_ps(z, z);
    const __m256 xy = _mm256_mul_ps(x, y), xz = _mm256_mul_ps(x, z), yz = _mm256_mul_ps(y, z);
    const __m256 xs = _mm256_mul_ps(x, s), ys = _mm256_mul_ps(y, s), zs = _mm256_mul_ps(z, s);
    r[0] = _mm256_sub_ps(one, _mm256_mul_ps(two, _mm256_add_ps(yy, zz)));
    r[1] = _mm256_mul_ps(two, _mm256_sub_ps(xy, zs));
    r[2] = _mm256_mul_ps(two, _mm256_add_ps(xz, ys));
    r[3] = _mm256_mul_ps(two, _mm256_add_ps(xy, zs));
    r[4] = _mm256_sub_ps(one, _mm256_mul_ps(two, _mm256_add_ps(xx, zz)));
    r[5] = _mm256_mul_ps(two, _mm256_sub_ps(yz, xs));
    r[6] = _mm256_mul_ps(two, _mm256_sub_ps(xz, ys));
    r[7] = _mm256_mul_ps(two, _mm256_add_ps(yz, xs));
    r[8] = _mm256_sub_ps(one, _mm256_mul_ps(two, _mm256_add_ps(xx, yy)));
}

/* o = R v for 8 vectors: ((r0 x) + r1 y) + r2 z per row. */
SK_ALWAYS_INLINE void rot8(__m256 o[3], const __m256 r[9], __m256 x, __m256 y, __m256 z)
{
    for (int i = 0; i < 3; ++i)
        o[i] = _mm256_fmadd_ps(r[3 * i + 2], z, _mm256_fmadd_ps(r[3 * i + 1], y,
                                                                 _mm256_mul_ps(r[3 * i], x)));
}

/* 1 / sqrt(x) for 8 lanes where x > 0, else 1.  With AVX-512 the 14-bit estimate and one
 * Newton step (as lbs16_rsqrt: about 2 units in the last place); a division and a square root of
 * a whole register would cost more than the rest of a block's normalizing.  With AVX2 (whose
 * estimate has 12 bits) the division. */
SK_ALWAYS_INLINE __m256 inv_sqrt8(__m256 x, __m256 positive)
{
    const __m256 one = _mm256_set1_ps(1.0f);
#ifdef __AVX512F__
    const __m256 y = _mm256_rsqrt14_ps(x);
    const __m256 hxy = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), y);
    const __m256 t = _mm256_fnmadd_ps(hxy, y, _mm256_set1_ps(1.5f));
    return _mm256_blendv_ps(one, _mm256_mul_ps(y, t), positive);
#else
    return _mm256_blendv_ps(one, _mm256_div_ps(one, _mm256_sqrt_ps(x)), positive);
#endif
}

/* v / |v| for 8 vectors; a zero vector stays zero. */
SK_ALWAYS_INLINE void unit8(__m256 v[3])
{
    __m256 m2 = _mm256_fmadd_ps(v[2], v[2], _mm256_fmadd_ps(v[1], v[1], _mm256_mul_ps(v[0], v[0])));
    __m256 mi = inv_sqrt8(m2, _mm256_cmp_ps(m2, _mm256_setzero_ps(), _CMP_GT_OQ));
    for (int i = 0; i < 3; ++i) v[i] = _mm256_mul_ps(v[i], mi);
}

#define V8(x) _mm256_set1_ps(x)

/* The blended dual quaternions of vertices v0 .. v0 + n - 1 (n <= 8; zeros after), one per
 * register; returns the copy bits (weight sum <= 1e-6). */
SK_ALWAYS_INLINE unsigned dqs8_blends(__m256 q[8], const sk_skin_job_f32 *job, int64_t v0, int n,
                                      const float *sign, sk_index_type it, int64_t kk,
                                      sk_weight_type wt)
{
    unsigned copy = 0;
    int32_t off[64];
    if ((kk == 4 || kk == 8) && sign)
        offsets_k(off, &job->influences, v0, n, it, job->n_joints, 1, (int)kk);
    /* unrolled: each vertex's pivot, sign lookups and multiply-adds form one long dependency
     * chain, and out-of-order execution interleaves the eight chains best when they are all
     * written out (6-11% faster than a rolled loop) */
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
        float total = 0;
        q[i] = _mm256_setzero_ps();
        if (i < n) total = dqs8_blend(&q[i], job, v0 + i, off + kk * i, sign, it, kk, wt);
        if (!(total > 1e-6f)) copy |= 1u << i;
    }
    return copy;
}

/* The joints' dual quaternions (the first 8 floats of sk_dqs_prepare's 21 per joint) copied to
 * a table of 32-byte rows: a vertex's blend then loads whole aligned rows (at a stride of 21
 * floats half the rows cross a cache line). */
typedef struct {
    __attribute__((aligned(32))) float q[SK_DQS_SIGN_MAX_J][8];
} dqs_quats;

SK_ALWAYS_INLINE void dqs_quats_make(dqs_quats *t, const float *prepared, int64_t n_joints)
{
    for (int64_t j = 0; j < n_joints; ++j)
        _mm256_store_ps(t->q[j], _mm256_loadu_ps(prepared + SK_DQS_PREPARED_SIZE * j));
}

#ifdef __AVX512F__
/* K = 4 or 8 contiguous float weights on AVX-512: the weight sums, pivots, hemisphere signs
 * and signed weights of 16 vertices at once in registers (dqs16_stage), so that each vertex's
 * blend is four (eight) multiply-adds of a broadcast weight.  (K = 8 came here later:
 * 0.61-0.62x the time of dqs8_blend's vertex-by-vertex staging at 10k-1M vertices, same bits;
 * Zen 5.)  The same decisions and products as dqs8_blend: the pivot is the largest weight,
 * ties to the smallest joint; the sign is sign[pivot][joint] (a bit table here, looked up by
 * permutes); a weight times -1 is its sign bit flipped. */
typedef struct {
    __m512i lo[4], hi[4]; /* bit j of pivot p's row (sign -1): lo[p / 16] lane p % 16 for
                           * j < 32, hi for j >= 32 */
} dqs16_signs;

SK_ALWAYS_INLINE void dqs16_sign_bits(dqs16_signs *sb, const sk_skin_job_f32 *job,
                                     const float *sign)
{
    uint64_t own[SK_DQS_SIGN_MAX_J], padded[SK_DQS_SIGN_MAX_J] = {0};
    const int64_t J = job->n_joints;
    const uint64_t *bits = job_sign_bits(own, job->dqs_sign_bits, sign, J);
    memcpy(padded, bits, (size_t)J * sizeof *bits); /* pivots >= J: zeros, never looked up */
    for (int i = 0; i < 4; ++i) { /* each word's halves to two registers of 16 lanes */
        const __m512i b0 = _mm512_loadu_si512(padded + 16 * i),
                      b1 = _mm512_loadu_si512(padded + 16 * i + 8);
        sb->lo[i] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(b0)),
                                       _mm512_cvtepi64_epi32(b1), 1);
        sb->hi[i] = _mm512_inserti64x4(
            _mm512_castsi256_si512(_mm512_cvtepi64_epi32(_mm512_srli_epi64(b0, 32))),
            _mm512_cvtepi64_epi32(_mm512_srli_epi64(b1, 32)), 1);
    }
}

typedef struct {
    __m512 ws[8];          /* slot k's signed weight of vertex i in lane 4 (i % 4) + i / 4 */
    int32_t off[128];      /* the joints, vertex-major (offsets_k) */
    const float *row[128]; /* their dual quaternions, in the range's dqs_quats */
    unsigned copy;         /* vertices whose weights sum to <= 1e-6 (or NaN) */
} dqs16_stage;

/* Sixteen vertices' K = 4 slots (vertex-major, four vertices a register) -> one register a
 * slot, vertex i in lane 4 (i % 4) + i / 4; K = 8 (two vertices a register): each register's
 * halves of slots 0-3 and 4-7 gathered by 128-bit blocks first, then the same. */
SK_ALWAYS_INLINE void slots16(__m512 *r, int K)
{
    if (K == 8) {
        __m512 a[4], b[4];
        for (int q = 0; q < 4; ++q) {
            a[q] = _mm512_shuffle_f32x4(r[2 * q], r[2 * q + 1], _MM_SHUFFLE(2, 0, 2, 0));
            b[q] = _mm512_shuffle_f32x4(r[2 * q], r[2 * q + 1], _MM_SHUFFLE(3, 1, 3, 1));
        }
        for (int q = 0; q < 4; ++q) r[q] = a[q], r[4 + q] = b[q];
        transpose_blocks16(r + 4);
    }
    transpose_blocks16(r);
}

SK_ALWAYS_INLINE void dqs16_stage_make(dqs16_stage *st, const sk_skin_job_f32 *job, int64_t v0,
                                       sk_index_type it, const dqs16_signs *sb,
                                       const dqs_quats *qt, const int K)
{
    offsets_k(st->off, &job->influences, v0, 16, it, job->n_joints, 1, K);
    const __m512i base = _mm512_set1_epi64((int64_t)(uintptr_t)qt->q[0]);
    for (int g = 0; g < 2 * K; ++g) /* row = q[0] + 32 bytes x joint */
        _mm512_storeu_si512((void *)(st->row + 8 * g),
                            _mm512_add_epi64(base, _mm512_slli_epi64(_mm512_cvtepi32_epi64(
                                _mm256_loadu_si256((const __m256i *)(st->off + 8 * g))), 5)));
    const float *wp = (const float *)job->influences.weights.data + K * v0;
    __m512 w[8], jf[8];
    for (int g = 0; g < K; ++g) {
        w[g] = _mm512_loadu_ps(wp + 16 * g);
        jf[g] = _mm512_castsi512_ps(_mm512_loadu_si512(st->off + 16 * g));
    }
    slots16(w, K);
    slots16(jf, K);
    __m512i j[8];
    for (int k = 0; k < K; ++k) j[k] = _mm512_castps_si512(jf[k]);
    st->copy = small16(w, K); /* dqs8_blend's sums */
    /* the pivot: the smallest joint among the slots holding the largest weight; slot 0's
     * joint where none compares equal (NaN weights: such a vertex is copied) */
    __m512 top = _mm512_max_ps(_mm512_max_ps(w[0], w[1]), _mm512_max_ps(w[2], w[3]));
    if (K == 8)
        top = _mm512_max_ps(top, _mm512_max_ps(_mm512_max_ps(w[4], w[5]),
                                               _mm512_max_ps(w[6], w[7])));
    const __m512i none = _mm512_set1_epi32(INT32_MAX);
    __m512i pivot = none;
    for (int k = 0; k < K; ++k)
        pivot = _mm512_min_epi32(pivot, _mm512_mask_mov_epi32(
                                            none, _mm512_cmp_ps_mask(w[k], top, _CMP_EQ_OQ), j[k]));
    pivot = _mm512_mask_mov_epi32(pivot, _mm512_cmpeq_epi32_mask(pivot, none), j[0]);
    /* the pivots' rows of sign bits (joints 0-31 and 32-63), then each slot's bit moved to
     * bit 31 and flipped into its weight's sign */
    const __m512i n32 = _mm512_set1_epi32(32);
    const __mmask16 upper = _mm512_cmpge_epi32_mask(pivot, n32);
    const __m512i lo = _mm512_mask_mov_epi32(_mm512_permutex2var_epi32(sb->lo[0], pivot, sb->lo[1]),
                                             upper, _mm512_permutex2var_epi32(sb->lo[2], pivot, sb->lo[3]));
    const __m512i hi = _mm512_mask_mov_epi32(_mm512_permutex2var_epi32(sb->hi[0], pivot, sb->hi[1]),
                                             upper, _mm512_permutex2var_epi32(sb->hi[2], pivot, sb->hi[3]));
    for (int k = 0; k < K; ++k) { /* a shift by 32 or more (or "negative") gives 0 */
        const __m512i bit = _mm512_or_si512(_mm512_srlv_epi32(lo, j[k]),
                                            _mm512_srlv_epi32(hi, _mm512_sub_epi32(j[k], n32)));
        st->ws[k] = _mm512_xor_ps(w[k], _mm512_castsi512_ps(_mm512_slli_epi32(bit, 31)));
    }
}

/* Vertices 8 h .. 8 h + 7 of a stage: dqs8_blend's multiply-adds; returns their copy bits.
 * Each weight is broadcast from its register by a permute: stored with the stage and loaded
 * back right after, the weights missed store forwarding (4-6% of a call at 100k and 1M). */
SK_ALWAYS_INLINE unsigned dqs16_blends(__m256 q[8], const dqs16_stage *st, int h, const int K)
{
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
        const int v = 8 * h + i, lane = 4 * (v & 3) + v / 4;
        /* K = 8: even and odd slots in two sums, as dqs8_blend */
        __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        for (int k = 0; k < K; ++k) {
            const __m512 w = _mm512_permutexvar_ps(_mm512_set1_epi32(lane), st->ws[k]);
            const int a = K == 8 ? k & 1 : 0;
            acc[a] = _mm256_fmadd_ps(_mm512_castps512_ps256(w),
                                     _mm256_load_ps(st->row[K * v + k]), acc[a]);
        }
        q[i] = K == 8 ? _mm256_add_ps(acc[0], acc[1]) : acc[0];
    }
    return st->copy >> (8 * h) & 0xffu;
}
#endif

#ifndef __AVX512F__
/* K = 4 or 8 contiguous float weights with a sign table on AVX2: dqs16_stage's work for 8
 * vertices (the weight sums, pivots, hemisphere signs and signed weights in registers, one
 * register a slot: K = 4 in slots8's layout, K = 8 in transpose8_ps's; the signed weights stored
 * back vertex-major), so that each vertex's blend is K multiply-adds of its weights spread from
 * one load per four (lbs8_weight) instead of dqs8_blend's scalar pivot and sign lookups.  The
 * same decisions and products as dqs8_blend (a weight times -1 is its sign bit flipped).
 * The signs come from the pivots' rows of sign bits (dqs_sign_bits), two words a vertex by two
 * gathers a block, then shifts a slot: with a gather of the float table a slot instead, K = 4
 * took 1.13x the time at 100k and 1.20x at 1M, and K = 8 staged so took 1.29x the time of
 * dqs8_blend's (100k and 1M, Zen 4 VM; with the bits K = 8 takes 0.84-0.95x of dqs8_blend's;
 * same bits). */

typedef struct {
    __attribute__((aligned(32))) float ws[64]; /* vertex i's signed weights at K i .. K i + K - 1 */
    __attribute__((aligned(32))) int32_t off[64]; /* the joints' rows in the range's dqs_quats
                                                   * (8 floats a joint), by vertex */
    unsigned copy;   /* vertices whose weights sum to <= 1e-6 (or NaN) */
} dqs8_stage;

/* A stage's slot registers: jf[k] the joints' offsets and w[k] the weights of slot k for the 8
 * vertices (K = 4: in slots8's lane order, vertices 0 2 4 6 | 1 3 5 7; K = 8: in order); the
 * offsets also stored vertex-major in st->off, and the vertices to copy in st->copy (the sums
 * dqs8_blend compares, ((w0 + w1) + ...) + w(K-1)). */
SK_ALWAYS_INLINE void dqs8_stage_slots(dqs8_stage *st, __m256 jf[8], __m256 w[8],
                                       const sk_skin_job_f32 *job, int64_t v0, sk_index_type it,
                                       int K)
{
    const sk_influences *in = &job->influences;
    __m256 r[8];
    if (indices_narrow_rows(in, K, it) && job->n_joints > 0) { /* offsets_k's vectors, kept */
        const char *ip = (const char *)in->indices.data + v0 * in->indices.row;
#pragma GCC unroll 8
        for (int q = 0; q < K; ++q) {
            const __m256i o = offsets8(ip, q, it, job->n_joints, 8);
            _mm256_store_si256((__m256i *)(st->off + 8 * q), o);
            r[q] = _mm256_castsi256_ps(o);
        }
    } else {
        offsets_k(st->off, in, v0, 8, it, job->n_joints, 8, K);
#pragma GCC unroll 8
        for (int q = 0; q < K; ++q) r[q] = _mm256_load_ps((const float *)(st->off + 8 * q));
    }
    const float *wp = (const float *)in->weights.data + K * v0;
    if (K == 4) {
        slots8(jf, r);
        slots8_load(w, wp);
        st->copy = slots8_small(w);
        return;
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
        jf[i] = r[i];
        w[i] = _mm256_loadu_ps(wp + 8 * i);
    }
    transpose8_ps(jf);
    transpose8_ps(w);
    __m256 t = w[0];
#pragma GCC unroll 7
    for (int k = 1; k < 8; ++k) t = _mm256_add_ps(t, w[k]);
    st->copy = ~(unsigned)_mm256_movemask_ps(_mm256_cmp_ps(t, _mm256_set1_ps(1e-6f), _CMP_GT_OQ)) &
               0xffu;
}

SK_ALWAYS_INLINE void dqs8_stage_make(dqs8_stage *st, const sk_skin_job_f32 *job, int64_t v0,
                                      sk_index_type it, const uint64_t *bits, int K)
{
    __m256 w[8], jf[8];
    dqs8_stage_slots(st, jf, w, job, v0, it, K);
    __m256i j[8];
#pragma GCC unroll 8
    for (int k = 0; k < K; ++k) j[k] = _mm256_srli_epi32(_mm256_castps_si256(jf[k]), 3);
    /* the pivot: the smallest joint among the slots holding the largest weight; slot 0's
     * joint where none compares equal (NaN weights: such a vertex is copied) */
    __m256 top = _mm256_max_ps(_mm256_max_ps(w[0], w[1]), _mm256_max_ps(w[2], w[3]));
    if (K == 8)
        top = _mm256_max_ps(top, _mm256_max_ps(_mm256_max_ps(w[4], w[5]),
                                               _mm256_max_ps(w[6], w[7])));
    const __m256i none = _mm256_set1_epi32(INT32_MAX);
    __m256i pivot = none;
#pragma GCC unroll 8
    for (int k = 0; k < K; ++k)
        pivot = _mm256_min_epi32(pivot, _mm256_blendv_epi8(none, j[k], _mm256_castps_si256(
                                                               _mm256_cmp_ps(w[k], top, _CMP_EQ_OQ))));
    pivot = _mm256_blendv_epi8(pivot, j[0], _mm256_cmpeq_epi32(pivot, none));
    /* the pivot's row of sign bits (every pivot < J: the joints are offsets_k's), its low and
     * high 32-bit words (x86 is little-endian); a weight times its sign is the weight with its
     * sign bit flipped by bit j of that row */
    const __m256i lo = _mm256_i32gather_epi32((const int *)bits, pivot, 8);
    const __m256i hi = _mm256_i32gather_epi32((const int *)bits + 1, pivot, 8);
    __m256 sw[8];
#pragma GCC unroll 8
    for (int k = 0; k < K; ++k) {
        const __m256i word = _mm256_blendv_epi8(lo, hi, _mm256_cmpgt_epi32(j[k], _mm256_set1_epi32(31)));
        const __m256i bit = _mm256_srlv_epi32(word, _mm256_and_si256(j[k], _mm256_set1_epi32(31)));
        sw[k] = _mm256_xor_ps(w[k], _mm256_castsi256_ps(_mm256_slli_epi32(bit, 31)));
    }
    /* back to vertex-major rows (slots8 and transpose8_ps are their own inverses) */
    if (K == 8) {
        transpose8_ps(sw);
    } else {
        __m256 r[4];
        slots8(r, sw);
        for (int q = 0; q < 4; ++q) sw[q] = r[q];
    }
#pragma GCC unroll 8
    for (int q = 0; q < K; ++q) _mm256_store_ps(st->ws + 8 * q, sw[q]);
}

/* A stage's 8 blends, as dqs8_blend's multiply-adds (K = 8: even and odd slots in two sums);
 * returns their copy bits. */
SK_ALWAYS_INLINE unsigned dqs8_stage_blends(__m256 q[8], const dqs8_stage *st, const dqs_quats *qt,
                                            int K)
{
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
        __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        /* each four weights one load, spread by permutes, and the offsets two to a load (as
         * lbs8_blend: the load ports bind; K = 4: 0.96-0.97x the time of a broadcast load and
         * an offset load a slot, 100k, Zen 4 VM) */
        __m256 w4[2];
        for (int h = 0; h < K / 4; ++h)
            w4[h] = _mm256_broadcast_ps((const __m128 *)(st->ws + K * i + 4 * h));
#pragma GCC unroll 8
        for (int k = 0; k < K; ++k) {
            const int a = K == 8 ? k & 1 : 0;
            acc[a] = _mm256_fmadd_ps(
                lbs8_weight(w4[k / 4], k % 4),
                _mm256_load_ps((const float *)qt->q + offset_of_pair(st->off + K * i, k)), acc[a]);
        }
        q[i] = K == 8 ? _mm256_add_ps(acc[0], acc[1]) : acc[0];
    }
    return st->copy;
}
#endif

/* The rest of a block from its blends (q is overwritten): inputs pin / nin and outputs pout /
 * nout hold 24 floats each (nin, nout NULL without normals). */
SK_ALWAYS_INLINE void dqs8_finish(__m256 q[8], unsigned copy, const float *pin, const float *nin,
                                  float *pout, float *nout)
{
    const int normals = nin != NULL;
    transpose8_ps(q);
    const __m256 zero = _mm256_setzero_ps();
    __m256 n2 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(q[0], q[0]), _mm256_mul_ps(q[1], q[1])),
                                            _mm256_mul_ps(q[2], q[2])), _mm256_mul_ps(q[3], q[3]));
    __m256 ok = _mm256_cmp_ps(n2, zero, _CMP_GT_OQ);
    __m256 keep = _mm256_or_ps(_mm256_andnot_ps(ok, _mm256_castsi256_ps(_mm256_set1_epi32(-1))),
                               _mm256_castsi256_ps(_mm256_cmpgt_epi32(
                                   _mm256_and_si256(_mm256_set1_epi32((int)copy),
                                                    _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128)),
                                   _mm256_setzero_si256())));
#ifdef __AVX512F__
    /* divide by the real part's norm (the scalar kernel's expressions, lane-wise; dqs16_finish's
     * operations) */
    const __m256 inv = inv_sqrt8(n2, ok), two = V8(2.0f);
    const __m256 x = _mm256_mul_ps(q[0], inv), y = _mm256_mul_ps(q[1], inv);
    const __m256 z = _mm256_mul_ps(q[2], inv), s = _mm256_mul_ps(q[3], inv);
    const __m256 dx = _mm256_mul_ps(q[4], inv), dy = _mm256_mul_ps(q[5], inv);
    const __m256 dz = _mm256_mul_ps(q[6], inv), dw = _mm256_mul_ps(q[7], inv);
#else
    /* AVX2 (no 14-bit estimate): R and t are quadratic in the blended (q, d), so their
     * products of the parts as blended are scaled by 2 / |q|^2, one division and no square
     * root on the block's longest chain (the scalar kernel normalizes q and d first) */
    const __m256 two = _mm256_div_ps(V8(2.0f), n2);
    const __m256 x = q[0], y = q[1], z = q[2], s = q[3];
    const __m256 dx = q[4], dy = q[5], dz = q[6], dw = q[7];
#endif
    /* rotation of the unit real part, and t = 2 (s d - dw r + r x d) (with AVX2 the parts as
     * blended, `two` carrying the 1 / |q|^2) */
    __m256 rm[9];
    quat8_matrix(rm, x, y, z, s, two);
    const __m256 t0 = _mm256_mul_ps(two, _mm256_add_ps(_mm256_sub_ps(_mm256_mul_ps(s, dx), _mm256_mul_ps(dw, x)),
                                                       _mm256_sub_ps(_mm256_mul_ps(y, dz), _mm256_mul_ps(z, dy))));
    const __m256 t1 = _mm256_mul_ps(two, _mm256_add_ps(_mm256_sub_ps(_mm256_mul_ps(s, dy), _mm256_mul_ps(dw, y)),
                                                       _mm256_sub_ps(_mm256_mul_ps(z, dx), _mm256_mul_ps(x, dz))));
    const __m256 t2 = _mm256_mul_ps(two, _mm256_add_ps(_mm256_sub_ps(_mm256_mul_ps(s, dz), _mm256_mul_ps(dw, z)),
                                                       _mm256_sub_ps(_mm256_mul_ps(x, dy), _mm256_mul_ps(y, dx))));
    __m256 px, py, pz, nx = zero, ny = zero, nz = zero;
    load8_xyz(pin, &px, &py, &pz);
    if (normals) load8_xyz(nin, &nx, &ny, &nz);
#ifndef __AVX512F__
    /* R is a rotation: the normals are normalized before it, off the blends' chain */
    __m256 un[3] = {nx, ny, nz};
    if (normals) unit8(un);
#endif
    /* R p + t */
    __m256 o[3];
    rot8(o, rm, px, py, pz);
    store8_xyz(pout, _mm256_blendv_ps(_mm256_add_ps(o[0], t0), px, keep),
               _mm256_blendv_ps(_mm256_add_ps(o[1], t1), py, keep),
               _mm256_blendv_ps(_mm256_add_ps(o[2], t2), pz, keep));
    if (normals) {
        __m256 m[3];
#ifdef __AVX512F__
        rot8(m, rm, nx, ny, nz);
        unit8(m);
#else
        rot8(m, rm, un[0], un[1], un[2]);
#endif
        store8_xyz(nout, _mm256_blendv_ps(m[0], nx, keep), _mm256_blendv_ps(m[1], ny, keep),
                   _mm256_blendv_ps(m[2], nz, keep));
    }
}

#ifdef __AVX512F__
/* dqs8_finish for 16 vertices in zmm registers (lane i: vertex i), the same operations in the
 * same order lane by lane, so the same bits: half the instructions of two dqs8_finish calls. */

#define V16(x) _mm512_set1_ps(x)

/* 48 packed floats (16 rows x y z) <-> three registers of x, y and z, by two-register permutes:
 * the first of each pair takes the lanes found in two of the three input registers, the second
 * the rest from the third. */
typedef struct {
    __m512i a[3], b[3]; /* deinterleave: out c = permutex2var(permutex2var(r0, a[c], r1), b[c], r2) */
    __m512i c[3], d[3]; /* interleave: r = permutex2var(permutex2var(x, c[r], y), d[r], z) */
} xyz16_tables;

/* (compile-time constants, as lbs16's tables; e = 3 v + c is component c of vertex v's float
 * among the 48, e = 16 r + l output register r's lane l) */
#define XYZ16_A(c, v) (3 * (v) + (c) < 32 ? 3 * (v) + (c) : 0)
#define XYZ16_B(c, v) (3 * (v) + (c) < 32 ? (v) : 16 + (3 * (v) + (c) - 32))
#define XYZ16_C(r, l)                                                                            \
    ((16 * (r) + (l)) % 3 == 0 ? (16 * (r) + (l)) / 3                                            \
     : (16 * (r) + (l)) % 3 == 1 ? 16 + (16 * (r) + (l)) / 3 : 0)
#define XYZ16_D(r, l) ((16 * (r) + (l)) % 3 == 2 ? 16 + (16 * (r) + (l)) / 3 : (l))

static const _Alignas(64) int32_t xyz16_table_a[3][16] = SK_ROWS3(XYZ16_A);
static const _Alignas(64) int32_t xyz16_table_b[3][16] = SK_ROWS3(XYZ16_B);
static const _Alignas(64) int32_t xyz16_table_c[3][16] = SK_ROWS3(XYZ16_C);
static const _Alignas(64) int32_t xyz16_table_d[3][16] = SK_ROWS3(XYZ16_D);

static void xyz16_make_tables(xyz16_tables *t)
{
    for (int i = 0; i < 3; ++i) {
        t->a[i] = _mm512_load_si512(xyz16_table_a[i]);
        t->b[i] = _mm512_load_si512(xyz16_table_b[i]);
        t->c[i] = _mm512_load_si512(xyz16_table_c[i]);
        t->d[i] = _mm512_load_si512(xyz16_table_d[i]);
    }
}

SK_ALWAYS_INLINE void load16_xyz(const xyz16_tables *t, const float *p, __m512 o[3])
{
    const __m512 r0 = _mm512_loadu_ps(p), r1 = _mm512_loadu_ps(p + 16), r2 = _mm512_loadu_ps(p + 32);
    for (int c = 0; c < 3; ++c)
        o[c] = _mm512_permutex2var_ps(_mm512_permutex2var_ps(r0, t->a[c], r1), t->b[c], r2);
}

SK_ALWAYS_INLINE void store16_xyz(const xyz16_tables *t, float *p, __m512 x, __m512 y, __m512 z,
                                  int stream)
{
    __m512 r[3];
    for (int i = 0; i < 3; ++i)
        r[i] = _mm512_permutex2var_ps(_mm512_permutex2var_ps(x, t->c[i], y), t->d[i], z);
    store48(p, r, stream);
}

SK_ALWAYS_INLINE __m512 inv_sqrt16(__m512 x, __mmask16 positive)
{
    const __m512 y = _mm512_rsqrt14_ps(x);
    const __m512 hxy = _mm512_mul_ps(_mm512_mul_ps(V16(0.5f), x), y);
    const __m512 t = _mm512_fnmadd_ps(hxy, y, V16(1.5f));
    return _mm512_mask_blend_ps(positive, V16(1.0f), _mm512_mul_ps(y, t));
}

SK_ALWAYS_INLINE void quat16_matrix(__m512 r[9], __m512 x, __m512 y, __m512 z, __m512 s)
{
    const __m512 one = V16(1.0f), two = V16(2.0f);
    const __m512 xx = _mm512_mul_ps(x, x), yy = _mm512_mul_ps(y, y), zz = _mm512_mul_ps(z, z);
    const __m512 xy = _mm512_mul_ps(x, y), xz = _mm512_mul_ps(x, z), yz = _mm512_mul_ps(y, z);
    const __m512 xs = _mm512_mul_ps(x, s), ys = _mm512_mul_ps(y, s), zs = _mm512_mul_ps(z, s);
    r[0] = _mm512_sub_ps(one, _mm512_mul_ps(two, _mm512_add_ps(yy, zz)));
    r[1] = _mm512_mul_ps(two, _mm512_sub_ps(xy, zs));
    r[2] = _mm512_mul_ps(two, _mm512_add_ps(xz, ys));
    r[3] = _mm512_mul_ps(two, _mm512_add_ps(xy, zs));
    r[4] = _mm512_sub_ps(one, _mm512_mul_ps(two, _mm512_add_ps(xx, zz)));
    r[5] = _mm512_mul_ps(two, _mm512_sub_ps(yz, xs));
    r[6] = _mm512_mul_ps(two, _mm512_sub_ps(xz, ys));
    r[7] = _mm512_mul_ps(two, _mm512_add_ps(yz, xs));
    r[8] = _mm512_sub_ps(one, _mm512_mul_ps(two, _mm512_add_ps(xx, yy)));
}

SK_ALWAYS_INLINE void rot16(__m512 o[3], const __m512 r[9], __m512 x, __m512 y, __m512 z)
{
    for (int i = 0; i < 3; ++i)
        o[i] = _mm512_fmadd_ps(r[3 * i + 2], z, _mm512_fmadd_ps(r[3 * i + 1], y,
                                                                 _mm512_mul_ps(r[3 * i], x)));
}

/* q: 16 vertices' blended dual quaternions, vertex i in q[i] (overwritten). */
SK_ALWAYS_INLINE void dqs16_finish(const xyz16_tables *tb, __m256 q[16], unsigned copy,
                                   const float *pin, const float *nin, float *pout, float *nout,
                                   int stream_p, int stream_n)
{
    const int normals = nin != NULL;
    transpose8_ps(q);
    transpose8_ps(q + 8);
    __m512 c[8]; /* component c of vertices 0-7 | 8-15 */
    for (int i = 0; i < 8; ++i)
        c[i] = _mm512_insertf32x8(_mm512_castps256_ps512(q[i]), q[8 + i], 1);
    const __m512 zero = _mm512_setzero_ps(), two = V16(2.0f);
    __m512 n2 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(c[0], c[0]), _mm512_mul_ps(c[1], c[1])),
                                            _mm512_mul_ps(c[2], c[2])), _mm512_mul_ps(c[3], c[3]));
    const __mmask16 ok = _mm512_cmp_ps_mask(n2, zero, _CMP_GT_OQ);
    const __m512 inv = inv_sqrt16(n2, ok);
    const __mmask16 keep = (__mmask16)(~ok | copy);
    const __m512 x = _mm512_mul_ps(c[0], inv), y = _mm512_mul_ps(c[1], inv);
    const __m512 z = _mm512_mul_ps(c[2], inv), s = _mm512_mul_ps(c[3], inv);
    const __m512 dx = _mm512_mul_ps(c[4], inv), dy = _mm512_mul_ps(c[5], inv);
    const __m512 dz = _mm512_mul_ps(c[6], inv), dw = _mm512_mul_ps(c[7], inv);
    __m512 rm[9];
    quat16_matrix(rm, x, y, z, s);
    const __m512 t0 = _mm512_mul_ps(two, _mm512_add_ps(_mm512_sub_ps(_mm512_mul_ps(s, dx), _mm512_mul_ps(dw, x)),
                                                       _mm512_sub_ps(_mm512_mul_ps(y, dz), _mm512_mul_ps(z, dy))));
    const __m512 t1 = _mm512_mul_ps(two, _mm512_add_ps(_mm512_sub_ps(_mm512_mul_ps(s, dy), _mm512_mul_ps(dw, y)),
                                                       _mm512_sub_ps(_mm512_mul_ps(z, dx), _mm512_mul_ps(x, dz))));
    const __m512 t2 = _mm512_mul_ps(two, _mm512_add_ps(_mm512_sub_ps(_mm512_mul_ps(s, dz), _mm512_mul_ps(dw, z)),
                                                       _mm512_sub_ps(_mm512_mul_ps(x, dy), _mm512_mul_ps(y, dx))));
    __m512 p[3], nv[3] = {zero, zero, zero};
    load16_xyz(tb, pin, p);
    if (normals) load16_xyz(tb, nin, nv);
    __m512 o[3];
    rot16(o, rm, p[0], p[1], p[2]);
    store16_xyz(tb, pout, _mm512_mask_blend_ps(keep, _mm512_add_ps(o[0], t0), p[0]),
                _mm512_mask_blend_ps(keep, _mm512_add_ps(o[1], t1), p[1]),
                _mm512_mask_blend_ps(keep, _mm512_add_ps(o[2], t2), p[2]), stream_p);
    if (normals) {
        __m512 m[3];
        rot16(m, rm, nv[0], nv[1], nv[2]);
        const __m512 m2 = _mm512_fmadd_ps(m[2], m[2], _mm512_fmadd_ps(m[1], m[1], _mm512_mul_ps(m[0], m[0])));
        const __m512 mi = inv_sqrt16(m2, _mm512_cmp_ps_mask(m2, zero, _CMP_GT_OQ));
        store16_xyz(tb, nout, _mm512_mask_blend_ps(keep, _mm512_mul_ps(m[0], mi), nv[0]),
                    _mm512_mask_blend_ps(keep, _mm512_mul_ps(m[1], mi), nv[1]),
                    _mm512_mask_blend_ps(keep, _mm512_mul_ps(m[2], mi), nv[2]), stream_n);
    }
}
#endif

/* One block: its blends, then the rest. */
SK_ALWAYS_INLINE void dqs8_block(const sk_skin_job_f32 *job, int64_t v0, int n, const float *pin,
                                 const float *nin, float *pout, float *nout, const float *sign,
                                 sk_index_type it, int64_t kk, sk_weight_type wt)
{
    __m256 q[8];
    const unsigned copy = dqs8_blends(q, job, v0, n, sign, it, kk, wt);
    dqs8_finish(q, copy, pin, nin, pout, nout);
}

#undef V8

SK_ALWAYS_INLINE void dqs8_part(const sk_skin_job_f32 *job, int64_t v0, int64_t n, const float *sign,
                                sk_index_type it, int64_t kk, sk_weight_type wt)
{
    const int normals = job->normals.data != NULL;
    float bp[24], bn[24], op[24], on[24];
    gather3_f32(bp, 8, &job->positions, v0, n);
    if (normals) gather3_f32(bn, 8, &job->normals, v0, n);
    dqs8_block(job, v0, (int)n, bp, normals ? bn : NULL, op, normals ? on : NULL, sign, it, kk, wt);
    scatter3_f32(&job->out_positions, v0, n, op);
    if (normals) scatter3_f32(&job->out_normals, v0, n, on);
}

SK_ALWAYS_INLINE void dqs8_range(const sk_skin_job_f32 *job, int64_t begin, int64_t end,
                                 sk_index_type it, int64_t kk, sk_weight_type wt)
{
    const int normals = job->normals.data != NULL;
    float table[SK_DQS_SIGN_MAX_J * SK_DQS_SIGN_MAX_J];
    const float *sign = range_signs(table, job, kk, job->prepared, SK_DQS_PREPARED_SIZE);
    int64_t v = begin;
    if (packed_job(&job->positions, &job->out_positions, &job->normals, &job->out_normals, 4)) {
        const float *pin = (const float *)job->positions.data;
        const float *nin = (const float *)job->normals.data;
        float *pout = (float *)job->out_positions.data;
        float *nout = (float *)job->out_normals.data;
#ifdef __AVX512F__
        if ((kk == 4 || kk == 8) && sign && weights_packed(&job->influences, (int)kk, 4)) {
            dqs16_signs sb;
            dqs_quats qt;
            dqs16_sign_bits(&sb, job, sign);
            dqs_quats_make(&qt, job->prepared, job->n_joints);
            xyz16_tables tb;
            xyz16_make_tables(&tb);
            /* big calls: a partial head until the positions are 64-byte aligned, then
             * non-temporal stores (the normals' too where aligned at the same vertex) */
            int stream = job->stream;
            const int64_t head = stream_head(&stream, pout + 3 * v, 3 * sizeof(float), 16, 64,
                                             end - v);
            for (int64_t h = 0; h < head; h += 8)
                dqs8_part(job, v + h, head - h < 8 ? head - h : 8, sign, it, kk, wt);
            v += head > 0 ? head : 0;
            const int sn = stream && normals && ((uintptr_t)(nout + 3 * v) & 63) == 0;
            for (; v + 16 <= end; v += 16) {
                dqs16_stage st;
                __m256 q[16];
                dqs16_stage_make(&st, job, v, it, &sb, &qt, (int)kk);
                const unsigned copy = dqs16_blends(q, &st, 0, (int)kk) |
                                      dqs16_blends(q + 8, &st, 1, (int)kk) << 8;
                dqs16_finish(&tb, q, copy, pin + 3 * v, normals ? nin + 3 * v : NULL, pout + 3 * v,
                             normals ? nout + 3 * v : NULL, stream, sn);
            }
            if (stream) _mm_sfence(); /* non-temporal stores visible before the threads join */
        }
#else
        if ((kk == 4 || kk == 8) && sign && weights_packed(&job->influences, (int)kk, 4) &&
            v + 8 <= end) {
            dqs_quats qt;
            dqs_quats_make(&qt, job->prepared, job->n_joints);
            uint64_t own[SK_DQS_SIGN_MAX_J];
            const uint64_t *bits = job_sign_bits(own, job->dqs_sign_bits, sign, job->n_joints);
            /* staged a block ahead, so that the blends read each stage from the cache rather
             * than from its stores in flight */
            dqs8_stage st[2];
            dqs8_stage_make(&st[0], job, v, it, bits, (int)kk);
            for (int b = 0; v + 8 <= end; v += 8, b ^= 1) {
                if (v + 16 <= end) dqs8_stage_make(&st[b ^ 1], job, v + 8, it, bits, (int)kk);
                __m256 q[8];
                const unsigned copy = dqs8_stage_blends(q, &st[b], &qt, (int)kk);
                dqs8_finish(q, copy, pin + 3 * v, normals ? nin + 3 * v : NULL, pout + 3 * v,
                            normals ? nout + 3 * v : NULL);
            }
        }
#endif
        /* pipelined: the next block's blends are issued before this block's finish, so that
         * out-of-order execution overlaps the two (the blends read no positions or normals,
         * so outputs over the inputs stay safe) */
        if (v + 8 <= end) {
            __m256 q[8], next[8];
            unsigned copy = dqs8_blends(q, job, v, 8, sign, it, kk, wt), copy_next;
            for (; v + 16 <= end; v += 8) {
                copy_next = dqs8_blends(next, job, v + 8, 8, sign, it, kk, wt);
                dqs8_finish(q, copy, pin + 3 * v, normals ? nin + 3 * v : NULL, pout + 3 * v,
                            normals ? nout + 3 * v : NULL);
                memcpy(q, next, sizeof q);
                copy = copy_next;
            }
            dqs8_finish(q, copy, pin + 3 * v, normals ? nin + 3 * v : NULL, pout + 3 * v,
                        normals ? nout + 3 * v : NULL);
            v += 8;
        }
    }
    for (; v < end; v += 8) dqs8_part(job, v, end - v < 8 ? end - v : 8, sign, it, kk, wt);
}

#if SK_SIMD_PART(DQS32)
SIMD_DQS_ENTRY(_f32, dqs8_range, sk_skin_job_f32)
#endif /* SK_SIMD_PART(DQS32) */

/* ==========================================================================================
 * float64 DQS of a rigid palette, both ISAs: as the float32 kernel, with each vertex's blended
 * dual quaternion in two ymm registers (real, dual) and 4 vertices finished at a time across
 * lanes; on AVX-512 in one zmm register and 8 vertices finished at a time (dqs8d_*, below).
 * ======================================================================================== */

/* One slot of dq4d_blend: the joint's record `rec`, its weight w and signed weight ws. */
SK_ALWAYS_INLINE void dq4d_slot(__m256d *acc, const double *rec, double w, double ws, const int cor)
{
    const __m256d wv = _mm256_set1_pd(w), wsv = _mm256_set1_pd(ws);
    if (cor) {
        acc[0] = _mm256_fmadd_pd(wsv, _mm256_loadu_pd(rec + SK_COR_DQS), acc[0]);
        for (int c = 0; c < 4; ++c)
            acc[1 + c] = _mm256_fmadd_pd(wv, _mm256_loadu_pd(rec + SK_COR_LBS + 4 * c), acc[1 + c]);
    } else {
        acc[0] = _mm256_fmadd_pd(wsv, _mm256_loadu_pd(rec), acc[0]);
        acc[1] = _mm256_fmadd_pd(wsv, _mm256_loadu_pd(rec + 4), acc[1]);
    }
}

/* One vertex's blend for float64 DQS (cor = 0) and CoR (cor = 1, a constant): the scalar
 * kernel's pivot (the largest weight, ties to the smallest joint, zero weights skipped) and
 * hemisphere rule, each slot's records as whole ymm registers.
 *   DQS: acc[0] = sum +-w_i real_i, acc[1] = sum +-w_i dual_i (sk_dqs_prepare's records);
 *   CoR: acc[0] = sum +-w_i q_i, acc[1 + c] = sum w_i (column c of K_i) (sk_cor_prepare's).
 * With K = 4 and a sign table (job->dqs_sign) the joints come from offsets_k and the signs from
 * the table, as in dqs8_blend.  Returns the weight sum; the sums stay 0 when it is <= 1e-6 (the
 * vertex is copied). */
SK_ALWAYS_INLINE double dq4d_blend(__m256d *acc, const sk_skin_job_f64 *job, int64_t v,
                                   const int32_t *off, const float *sign, sk_index_type it,
                                   int64_t kk, sk_weight_type wt, const int cor)
{
    const sk_influences *in = &job->influences;
    const char *ip = (const char *)in->indices.data + v * in->indices.row;
    const char *wp = (const char *)in->weights.data + v * in->weights.row;
    const int64_t stride = cor ? SK_COR_PREPARED_SIZE : SK_DQS_PREPARED_SIZE;
    const double *prep = job->prepared, *quats = prep + (cor ? SK_COR_DQS : 0);
    for (int a = 0; a < (cor ? 5 : 2); ++a) acc[a] = _mm256_setzero_pd();
    double total = 0;
    if ((kk == 4 || kk == 8) && sign) { /* K = 8 as float32's dqs8_blend */
        const ptrdiff_t we = in->weights.elem;
        double w[8];
        for (int k = 0; k < kk; ++k) {
            w[k] = *(const double *)(wp + k * we);
            total += w[k];
        }
        /* the slots holding the largest weight, then the smallest joint among them; an
         * all-zero vertex is copied, whatever its pivot */
        const __m256d lo = _mm256_loadu_pd(w), hi = kk == 8 ? _mm256_loadu_pd(w + 4) : lo;
        __m256d top = kk == 8 ? _mm256_max_pd(lo, hi) : lo;
        top = _mm256_max_pd(top, _mm256_permute_pd(top, 0x5));
        top = _mm256_max_pd(top, _mm256_permute2f128_pd(top, top, 0x01));
        unsigned tied = (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(lo, top, _CMP_EQ_OQ));
        if (kk == 8) tied |= (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(hi, top, _CMP_EQ_OQ)) << 4;
        const int64_t pivot = tied_pivot(tied, off);
        if (total > 1e-6) {
            const float *sp = sign + pivot * job->n_joints;
            for (int k = 0; k < kk; ++k)
                dq4d_slot(acc, prep + stride * off[k], w[k], w[k] * (double)sp[off[k]], cor);
        }
        return total;
    }
    const int64_t K = kk ? kk : in->k;
    double best = 0;
    int64_t pivot = 0;
    for (int64_t k = 0; k < K; ++k) {
        double w;
        int64_t j;
        SIMD_SLOT(simd_weight_f64, in, ip, wp, k, it, wt, job->n_joints, w, j);
        total += w;
        const int better = w > best || (w == best && w != 0 && j < pivot);
        best = better ? w : best;
        pivot = better ? j : pivot;
    }
    if (total > 1e-6) {
        const double *q0 = quats + stride * pivot;
        const float *sp = sign ? sign + pivot * job->n_joints : NULL;
        for (int64_t k = 0; k < K; ++k) {
            double w;
            int64_t j;
            SIMD_SLOT(simd_weight_f64, in, ip, wp, k, it, wt, job->n_joints, w, j);
            const double *qj = quats + stride * j;
            /* the sign from the table, or the scalar kernel's expression, so the same
             * hemisphere decisions; a zero weight adds 0 (the palette is finite) */
            double ws = w;
            if (sp)
                ws *= (double)sp[j];
            else if (q0[0] * qj[0] + q0[1] * qj[1] + q0[2] * qj[2] + q0[3] * qj[3] < 0)
                ws = -w;
            dq4d_slot(acc, prep + stride * j, w, ws, cor);
        }
    }
    return total;
}

#ifdef __AVX512F__
/* inv_sqrt4d for 8 lanes, the same operations lane by lane */
SK_ALWAYS_INLINE __m512d inv_sqrt8d(__m512d x)
{
    const __mmask8 positive = _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_GT_OQ);
    const __m512d half_x = _mm512_mul_pd(_mm512_set1_pd(0.5), x), three_halves = _mm512_set1_pd(1.5);
    __m512d y = _mm512_rsqrt14_pd(x);
    for (int step = 0; step < 2; ++step)
        y = _mm512_mul_pd(y, _mm512_fnmadd_pd(_mm512_mul_pd(half_x, y), y, three_halves));
    return _mm512_mask_blend_pd(positive, _mm512_set1_pd(1.0), y);
}
#endif

/* A vertex mask (one int64 per lane, 0 or -1) as a blend mask. */
SK_ALWAYS_INLINE __m256d lanes4d(const int64_t m[4])
{
    return _mm256_castsi256_pd(_mm256_loadu_si256((const __m256i *)m));
}

/* 4x4 transpose: r[i] = row i -> r[q] = element q of the 4 rows. */
SK_ALWAYS_INLINE void transpose4_pd(__m256d r[4])
{
    const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
    const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

/* 4 packed (x, y, z) rows of doubles <-> x, y, z registers.  The three input registers are
 * [x0 y0 z0 x1] [y1 z1 x2 y2] [z2 x3 y3 z3]; m0 = [x0 y0 | x2 y2], m1 = [z0 x1 | z2 x3],
 * m2 = [y1 z1 | y3 z3] hold every coordinate in the right half. */
SK_ALWAYS_INLINE void load4d_xyz(const double *p, __m256d *x, __m256d *y, __m256d *z)
{
    const __m256d a = _mm256_loadu_pd(p), b = _mm256_loadu_pd(p + 4), c = _mm256_loadu_pd(p + 8);
    const __m256d m0 = _mm256_permute2f128_pd(a, b, 0x30), m1 = _mm256_permute2f128_pd(a, c, 0x21);
    const __m256d m2 = _mm256_permute2f128_pd(b, c, 0x30);
    *x = _mm256_shuffle_pd(m0, m1, 0xA);
    *y = _mm256_shuffle_pd(m0, m2, 0x5);
    *z = _mm256_shuffle_pd(m1, m2, 0xA);
}

SK_ALWAYS_INLINE void store4d_xyz(double *p, __m256d x, __m256d y, __m256d z)
{
    const __m256d m0 = _mm256_unpacklo_pd(x, y), m1 = _mm256_shuffle_pd(z, x, 0xA);
    const __m256d m2 = _mm256_unpackhi_pd(y, z);
    _mm256_storeu_pd(p, _mm256_permute2f128_pd(m0, m1, 0x20));
    _mm256_storeu_pd(p + 4, _mm256_permute2f128_pd(m2, m0, 0x30));
    _mm256_storeu_pd(p + 8, _mm256_permute2f128_pd(m1, m2, 0x31));
}

/* The rotation matrices (row-major r[3 i + j]) of 4 quaternions (x, y, z, s), with
 * quat8_matrix's expressions (`two`: 2 for unit quaternions, 2 / |q|^2 for others). */
SK_ALWAYS_INLINE void quat4d_matrix(__m256d r[9], __m256d x, __m256d y, __m256d z, __m256d s,
                                    __m256d two)
{
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d xx = _mm256_mul_pd(x, x), yy = _mm256_mul_pd(y, y), zz = _mm256_mul_pd(z, z);
    const __m256d xy = _mm256_mul_pd(x, y), xz = _mm256_mul_pd(x, z), yz = _mm256_mul_pd(y, z);
    const __m256d xs = _mm256_mul_pd(x, s), ys = _mm256_mul_pd(y, s), zs = _mm256_mul_pd(z, s);
    r[0] = _mm256_sub_pd(one, _mm256_mul_pd(two, _mm256_add_pd(yy, zz)));
    r[1] = _mm256_mul_pd(two, _mm256_sub_pd(xy, zs));
    r[2] = _mm256_mul_pd(two, _mm256_add_pd(xz, ys));
    r[3] = _mm256_mul_pd(two, _mm256_add_pd(xy, zs));
    r[4] = _mm256_sub_pd(one, _mm256_mul_pd(two, _mm256_add_pd(xx, zz)));
    r[5] = _mm256_mul_pd(two, _mm256_sub_pd(yz, xs));
    r[6] = _mm256_mul_pd(two, _mm256_sub_pd(xz, ys));
    r[7] = _mm256_mul_pd(two, _mm256_add_pd(yz, xs));
    r[8] = _mm256_sub_pd(one, _mm256_mul_pd(two, _mm256_add_pd(xx, yy)));
}

/* v / |v| for 4 vectors; a zero vector stays zero. */
SK_ALWAYS_INLINE void unit4d(__m256d v[3])
{
    const __m256d m2 =
        _mm256_fmadd_pd(v[2], v[2], _mm256_fmadd_pd(v[1], v[1], _mm256_mul_pd(v[0], v[0])));
    const __m256d inv = inv_sqrt4d(m2);
    for (int i = 0; i < 3; ++i) v[i] = _mm256_mul_pd(v[i], inv);
}

/* o = R v for 4 vectors, R row-major from a unit quaternion (quat8_matrix's expressions). */
SK_ALWAYS_INLINE void rot4d(__m256d o[3], const __m256d r[9], __m256d x, __m256d y, __m256d z)
{
    for (int i = 0; i < 3; ++i)
        o[i] = _mm256_fmadd_pd(r[3 * i + 2], z, _mm256_fmadd_pd(r[3 * i + 1], y,
                                                                 _mm256_mul_pd(r[3 * i], x)));
}

/* The pivots (the largest weight, ties to the smallest joint; slot 0's joint where no slot
 * ties, as tied_pivot) and weight sums of four vertices of K = 4 contiguous float64 weights w
 * with their joints `off` (offsets_k with stride 1): the weights and joints transposed to one
 * register per slot, so that the four vertices take a few vector operations instead of each
 * vertex's chain of permutes, maxima, a mask, a bit scan and a load. */
SK_ALWAYS_INLINE void dqs4d_pivots(int32_t piv[4], double sum[4], const double *w,
                                   const int32_t off[16])
{
    __m256d ws[4]; /* slot k of the four vertices */
    for (int i = 0; i < 4; ++i) ws[i] = _mm256_loadu_pd(w + 4 * i);
    transpose4_pd(ws);
    const __m256d total = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(ws[0], ws[1]), ws[2]), ws[3]);
    const __m256d top = _mm256_max_pd(_mm256_max_pd(ws[0], ws[1]), _mm256_max_pd(ws[2], ws[3]));
    __m128 o[4]; /* the joints, transposed the same way (int32 bits moved by float shuffles) */
    for (int i = 0; i < 4; ++i)
        o[i] = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)(off + 4 * i)));
    _MM_TRANSPOSE4_PS(o[0], o[1], o[2], o[3]);
    const __m256d inf = _mm256_set1_pd(INFINITY);
    __m256d joint[4], pivot = inf; /* (joints below 2^31 as doubles: exact) */
    for (int k = 0; k < 4; ++k) {
        joint[k] = _mm256_cvtepi32_pd(_mm_castps_si128(o[k]));
        const __m256d tied = _mm256_cmp_pd(ws[k], top, _CMP_EQ_OQ);
        pivot = _mm256_min_pd(pivot, _mm256_blendv_pd(inf, joint[k], tied));
    }
    pivot = _mm256_blendv_pd(pivot, joint[0], _mm256_cmp_pd(pivot, inf, _CMP_EQ_OQ));
    _mm_storeu_si128((__m128i *)piv, _mm256_cvttpd_epi32(pivot));
    _mm256_storeu_pd(sum, total);
}

/* dqs4d_blends for four vertices of K = 4 contiguous float64 weights with a sign table: the
 * pivots and sums from dqs4d_pivots, then each vertex's signed weights from its row of the
 * sign table, as dq4d_blend.  The same decisions and products, so the same bits: 0.89-0.93x the
 * time of DQS at 4k-1M on the Cascade Lake Xeon.  (The signs by one 4-lane gather a slot and
 * the signed weights broadcast by permutes took 1.15-1.37x.)  `off`: the block's joints
 * (offsets_k with stride 1). */
SK_ALWAYS_INLINE void dqs4d_blends_staged(__m256d qr[4], __m256d qd[4], int64_t copy[4],
                                          const sk_skin_job_f64 *job, int64_t v0,
                                          const int32_t off[16], const float *sign)
{
    const sk_influences *in = &job->influences;
    const double *w = (const double *)((const char *)in->weights.data + v0 * in->weights.row);
    int32_t piv[4];
    double sum[4];
    dqs4d_pivots(piv, sum, w, off);
    const double *prep = job->prepared;
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        __m256d acc[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
        const int blend = sum[i] > 1e-6;
        if (blend) {
            const float *sp = sign + piv[i] * job->n_joints;
            for (int k = 0; k < 4; ++k) {
                const int32_t j = off[4 * i + k];
                const double wk = w[4 * i + k];
                dq4d_slot(acc, prep + SK_DQS_PREPARED_SIZE * j, wk, wk * (double)sp[j], 0);
            }
        }
        qr[i] = acc[0];
        qd[i] = acc[1];
        copy[i] = blend ? 0 : -1;
    }
}

/* The blended dual quaternions of vertices v0 .. v0 + n - 1 (n <= 4; zeros after), each as
 * real and dual registers; copy[i] = -1 (all bits) where the weights sum to <= 1e-6. */
SK_ALWAYS_INLINE void dqs4d_blends(__m256d qr[4], __m256d qd[4], int64_t copy[4],
                                   const sk_skin_job_f64 *job, int64_t v0, int n,
                                   const float *sign, sk_index_type it, int64_t kk,
                                   sk_weight_type wt)
{
    int32_t off[32];
    if ((kk == 4 || kk == 8) && sign)
        offsets_k(off, &job->influences, v0, n, it, job->n_joints, 1, (int)kk);
    if (kk == 4 && sign && n == 4 && weights_packed(&job->influences, 4, 8)) {
        dqs4d_blends_staged(qr, qd, copy, job, v0, off, sign);
        return;
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        double total = 0;
        __m256d acc[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
        if (i < n) total = dq4d_blend(acc, job, v0 + i, off + kk * i, sign, it, kk, wt, 0);
        qr[i] = acc[0];
        qd[i] = acc[1];
        copy[i] = total > 1e-6 ? 0 : -1;
    }
}

/* The rest of a block from its blends (qr, qd are overwritten): inputs pin / nin and outputs
 * pout / nout hold 12 doubles each (nin, nout NULL without normals). */
SK_ALWAYS_INLINE void dqs4d_finish(__m256d qr[4], __m256d qd[4], const int64_t copy[4],
                                   const double *pin, const double *nin, double *pout,
                                   double *nout)
{
    const int normals = nin != NULL;
    transpose4_pd(qr);
    transpose4_pd(qd);
    const __m256d zero = _mm256_setzero_pd();
    /* a vertex is kept as it was when its weights sum to <= 1e-6 or its blended rotation is 0
     * (the scalar kernel's rules) */
    const __m256d n2 = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(qr[0], qr[0]),
                                                                 _mm256_mul_pd(qr[1], qr[1])),
                                                   _mm256_mul_pd(qr[2], qr[2])),
                                     _mm256_mul_pd(qr[3], qr[3]));
    const __m256d keep = _mm256_or_pd(_mm256_cmp_pd(n2, zero, _CMP_NGT_UQ), lanes4d(copy));
#ifdef __AVX512F__
    /* divide by the real part's norm (14-bit estimate and two Newton steps) */
    const __m256d inv = inv_sqrt4d(n2), two = _mm256_set1_pd(2.0);
    const __m256d x = _mm256_mul_pd(qr[0], inv), y = _mm256_mul_pd(qr[1], inv);
    const __m256d z = _mm256_mul_pd(qr[2], inv), s = _mm256_mul_pd(qr[3], inv);
    const __m256d dx = _mm256_mul_pd(qd[0], inv), dy = _mm256_mul_pd(qd[1], inv);
    const __m256d dz = _mm256_mul_pd(qd[2], inv), dw = _mm256_mul_pd(qd[3], inv);
#else
    /* AVX2: as dqs8_finish, the parts as blended and 2 / |q|^2 (no square root on the chain) */
    const __m256d two = _mm256_div_pd(_mm256_set1_pd(2.0), n2);
    const __m256d x = qr[0], y = qr[1], z = qr[2], s = qr[3];
    const __m256d dx = qd[0], dy = qd[1], dz = qd[2], dw = qd[3];
#endif
    /* rotation of the unit real part, and t = 2 (s d - dw r + r x d) (with AVX2 the parts as
     * blended, `two` carrying the 1 / |q|^2) */
    __m256d rm[9];
    quat4d_matrix(rm, x, y, z, s, two);
    const __m256d t0 = _mm256_mul_pd(two, _mm256_add_pd(_mm256_sub_pd(_mm256_mul_pd(s, dx), _mm256_mul_pd(dw, x)),
                                                        _mm256_sub_pd(_mm256_mul_pd(y, dz), _mm256_mul_pd(z, dy))));
    const __m256d t1 = _mm256_mul_pd(two, _mm256_add_pd(_mm256_sub_pd(_mm256_mul_pd(s, dy), _mm256_mul_pd(dw, y)),
                                                        _mm256_sub_pd(_mm256_mul_pd(z, dx), _mm256_mul_pd(x, dz))));
    const __m256d t2 = _mm256_mul_pd(two, _mm256_add_pd(_mm256_sub_pd(_mm256_mul_pd(s, dz), _mm256_mul_pd(dw, z)),
                                                        _mm256_sub_pd(_mm256_mul_pd(x, dy), _mm256_mul_pd(y, dx))));
    __m256d px, py, pz, nx = zero, ny = zero, nz = zero;
    load4d_xyz(pin, &px, &py, &pz);
    if (normals) load4d_xyz(nin, &nx, &ny, &nz);
    /* R p + t */
    __m256d o[3];
    rot4d(o, rm, px, py, pz);
    __m256d on[3];
#ifdef __AVX512F__
    if (normals) { /* R n / |R n| */
        rot4d(on, rm, nx, ny, nz);
        unit4d(on);
    }
#else
    if (normals) { /* R (n / |n|): R is a rotation */
        __m256d un[3] = {nx, ny, nz};
        unit4d(un);
        rot4d(on, rm, un[0], un[1], un[2]);
    }
#endif
    store4d_xyz(pout, _mm256_blendv_pd(_mm256_add_pd(o[0], t0), px, keep),
                _mm256_blendv_pd(_mm256_add_pd(o[1], t1), py, keep),
                _mm256_blendv_pd(_mm256_add_pd(o[2], t2), pz, keep));
    if (normals)
        store4d_xyz(nout, _mm256_blendv_pd(on[0], nx, keep), _mm256_blendv_pd(on[1], ny, keep),
                    _mm256_blendv_pd(on[2], nz, keep));
}

/* One block: its blends, then the rest.  All inputs are read before any output is written,
 * so out = positions works. */
SK_ALWAYS_INLINE void dqs4d_block(const sk_skin_job_f64 *job, int64_t v0, int n, const double *pin,
                                  const double *nin, double *pout, double *nout,
                                  const float *sign, sk_index_type it, int64_t kk,
                                  sk_weight_type wt)
{
    __m256d qr[4], qd[4];
    int64_t copy[4];
    dqs4d_blends(qr, qd, copy, job, v0, n, sign, it, kk, wt);
    dqs4d_finish(qr, qd, copy, pin, nin, pout, nout);
}

SK_ALWAYS_INLINE void dqs4d_part(const sk_skin_job_f64 *job, int64_t v0, int64_t n,
                                 const float *sign, sk_index_type it, int64_t kk,
                                 sk_weight_type wt)
{
    const int normals = job->normals.data != NULL;
    double bp[12], bn[12], op[12], on[12];
    gather3_f64(bp, 4, &job->positions, v0, n);
    if (normals) gather3_f64(bn, 4, &job->normals, v0, n);
    dqs4d_block(job, v0, (int)n, bp, normals ? bn : NULL, op, normals ? on : NULL, sign, it, kk,
                wt);
    scatter3_f64(&job->out_positions, v0, n, op);
    if (normals) scatter3_f64(&job->out_normals, v0, n, on);
}

#ifdef __AVX512F__
/* AVX-512: 8 vertices a step, each vertex's blended dual quaternion in one zmm register (real
 * then dual: the two ymm multiply-adds of dq4d_slot as one), with K = 4 and a sign table the
 * signed weights by sign bits (dqs_sign_bits), and the finish across 8 lanes: the same
 * operations lane by lane as dqs4d_blends and dqs4d_finish, so the same bits.  On the Cascade
 * Lake Xeon 0.71-0.85x the time of the four-vertex blocks at 4k-1M with normals, 0.66-0.77x
 * positions only (paired A/Bs, both orders; of which the sign bits 0.94-0.96x, the next step's
 * blends before this step's finish 0.97-0.99x).  Not kept: the signs by a 16-lane gather (1.07-1.10x), the row of sign
 * bits by a 4-lane gather with the weight sums tested in a register (1.05x), blending copied
 * vertices too instead of a branch (0.98-1.02x), the dual quaternions copied to an aligned table
 * (0.99-1.0x). */

/* 8x8 transpose: r[i] = row i -> r[q] = element q of the 8 rows. */
SK_ALWAYS_INLINE void transpose8_pd(__m512d r[8])
{
    __m512d t[8], u[8];
    for (int i = 0; i < 4; ++i) { /* [r0_0 r1_0 | r0_2 r1_2 | ...], [r0_1 r1_1 | r0_3 r1_3 | ...] */
        t[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]);
    }
    for (int h = 0; h < 2; ++h) { /* rows 4 h .. 4 h + 3: elements 0 4, 2 6, 1 5, 3 7 */
        u[4 * h] = _mm512_shuffle_f64x2(t[4 * h], t[4 * h + 2], 0x88);
        u[4 * h + 1] = _mm512_shuffle_f64x2(t[4 * h], t[4 * h + 2], 0xDD);
        u[4 * h + 2] = _mm512_shuffle_f64x2(t[4 * h + 1], t[4 * h + 3], 0x88);
        u[4 * h + 3] = _mm512_shuffle_f64x2(t[4 * h + 1], t[4 * h + 3], 0xDD);
    }
    static const int element[4][2] = {{0, 4}, {2, 6}, {1, 5}, {3, 7}};
    for (int i = 0; i < 4; ++i) {
        r[element[i][0]] = _mm512_shuffle_f64x2(u[i], u[4 + i], 0x88);
        r[element[i][1]] = _mm512_shuffle_f64x2(u[i], u[4 + i], 0xDD);
    }
}

/* 8 packed (x, y, z) rows of doubles <-> x, y, z registers. */
SK_ALWAYS_INLINE void load8d_xyz(const double *p, __m512d *x, __m512d *y, __m512d *z)
{
    const __m512d a = _mm512_loadu_pd(p), b = _mm512_loadu_pd(p + 8), c = _mm512_loadu_pd(p + 16);
    *x = _mm512_permutex2var_pd(_mm512_permutex2var_pd(a, _mm512_setr_epi64(0, 3, 6, 9, 12, 15, 0, 0), b),
                                _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 10, 13), c);
    *y = _mm512_permutex2var_pd(_mm512_permutex2var_pd(a, _mm512_setr_epi64(1, 4, 7, 10, 13, 0, 0, 0), b),
                                _mm512_setr_epi64(0, 1, 2, 3, 4, 8, 11, 14), c);
    *z = _mm512_permutex2var_pd(_mm512_permutex2var_pd(a, _mm512_setr_epi64(2, 5, 8, 11, 14, 0, 0, 0), b),
                                _mm512_setr_epi64(0, 1, 2, 3, 4, 9, 12, 15), c);
}

SK_ALWAYS_INLINE void store8d_xyz(double *p, __m512d x, __m512d y, __m512d z)
{
    const __m512d a = _mm512_permutex2var_pd(
        _mm512_permutex2var_pd(x, _mm512_setr_epi64(0, 8, 0, 1, 9, 0, 2, 10), y),
        _mm512_setr_epi64(0, 1, 8, 3, 4, 9, 6, 7), z);
    const __m512d b = _mm512_permutex2var_pd(
        _mm512_permutex2var_pd(x, _mm512_setr_epi64(0, 3, 11, 0, 4, 12, 0, 5), y),
        _mm512_setr_epi64(10, 1, 2, 11, 4, 5, 12, 7), z);
    const __m512d c = _mm512_permutex2var_pd(
        _mm512_permutex2var_pd(x, _mm512_setr_epi64(13, 0, 6, 14, 0, 7, 15, 0), y),
        _mm512_setr_epi64(0, 13, 2, 3, 14, 5, 6, 15), z);
    _mm512_storeu_pd(p, a);
    _mm512_storeu_pd(p + 8, b);
    _mm512_storeu_pd(p + 16, c);
}

/* quat4d_matrix and rot4d for 8 lanes */
SK_ALWAYS_INLINE void quat8d_matrix(__m512d r[9], __m512d x, __m512d y, __m512d z, __m512d s,
                                    __m512d two)
{
    const __m512d one = _mm512_set1_pd(1.0);
    const __m512d xx = _mm512_mul_pd(x, x), yy = _mm512_mul_pd(y, y), zz = _mm512_mul_pd(z, z);
    const __m512d xy = _mm512_mul_pd(x, y), xz = _mm512_mul_pd(x, z), yz = _mm512_mul_pd(y, z);
    const __m512d xs = _mm512_mul_pd(x, s), ys = _mm512_mul_pd(y, s), zs = _mm512_mul_pd(z, s);
    r[0] = _mm512_sub_pd(one, _mm512_mul_pd(two, _mm512_add_pd(yy, zz)));
    r[1] = _mm512_mul_pd(two, _mm512_sub_pd(xy, zs));
    r[2] = _mm512_mul_pd(two, _mm512_add_pd(xz, ys));
    r[3] = _mm512_mul_pd(two, _mm512_add_pd(xy, zs));
    r[4] = _mm512_sub_pd(one, _mm512_mul_pd(two, _mm512_add_pd(xx, zz)));
    r[5] = _mm512_mul_pd(two, _mm512_sub_pd(yz, xs));
    r[6] = _mm512_mul_pd(two, _mm512_sub_pd(xz, ys));
    r[7] = _mm512_mul_pd(two, _mm512_add_pd(yz, xs));
    r[8] = _mm512_sub_pd(one, _mm512_mul_pd(two, _mm512_add_pd(xx, yy)));
}

SK_ALWAYS_INLINE void rot8d(__m512d o[3], const __m512d r[9], __m512d x, __m512d y, __m512d z)
{
    for (int i = 0; i < 3; ++i)
        o[i] = _mm512_fmadd_pd(r[3 * i + 2], z, _mm512_fmadd_pd(r[3 * i + 1], y,
                                                                 _mm512_mul_pd(r[3 * i], x)));
}

/* The blends of vertices v0 .. v0 + 7 of K = 4 contiguous float64 weights with the sign table's
 * rows as bits `sbits`, q[i] = [real | dual] of vertex v0 + i; bit i of the result: vertex
 * v0 + i's weights sum to <= 1e-6. */
SK_ALWAYS_INLINE unsigned dqs8d_blends(__m512d q[8], const sk_skin_job_f64 *job, int64_t v0,
                                       const uint64_t *sbits, sk_index_type it)
{
    const sk_influences *in = &job->influences;
    unsigned copy = 0;
    int32_t off[32];
    offsets_k(off, in, v0, 8, it, job->n_joints, 1, 4);
    const double *w = (const double *)((const char *)in->weights.data + v0 * in->weights.row);
    const double *prep = job->prepared;
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
        int32_t piv[4];
        double sum[4];
        dqs4d_pivots(piv, sum, w + 16 * h, off + 16 * h);
        /* the signed weights: each weight's sign bit flipped where the sign table's row
         * (the pivot's) holds -1 for its joint (times -1 or 1: the same) */
        const __m512i rows = _mm512_castsi256_si512(_mm256_setr_epi64x(
            (long long)sbits[piv[0]], (long long)sbits[piv[1]], (long long)sbits[piv[2]],
            (long long)sbits[piv[3]]));
        double ws[16];
        for (int g = 0; g < 2; ++g) { /* vertices 2 g and 2 g + 1 */
            const __m512i r = _mm512_permutexvar_epi64(
                _mm512_setr_epi64(2 * g, 2 * g, 2 * g, 2 * g, 2 * g + 1, 2 * g + 1, 2 * g + 1,
                                  2 * g + 1), rows);
            const __m512i j = _mm512_cvtepi32_epi64(
                _mm256_loadu_si256((const __m256i *)(off + 16 * h + 8 * g)));
            const __m512i flip = _mm512_slli_epi64(_mm512_srlv_epi64(r, j), 63);
            _mm512_storeu_si512((void *)(ws + 8 * g),
                                _mm512_xor_si512(_mm512_loadu_si512((const void *)(w + 16 * h + 8 * g)),
                                                 flip));
        }
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) {
            __m512d acc = _mm512_setzero_pd();
            if (sum[i] > 1e-6) {
                for (int k = 0; k < 4; ++k)
                    acc = _mm512_fmadd_pd(_mm512_set1_pd(ws[4 * i + k]),
                                          _mm512_loadu_pd(prep + SK_DQS_PREPARED_SIZE *
                                                                     off[16 * h + 4 * i + k]),
                                          acc);
            } else {
                copy |= 1u << (4 * h + i);
            }
            q[4 * h + i] = acc;
        }
    }
    return copy;
}

/* dqs4d_finish for 8 vertices (AVX-512's branch), inputs and outputs of 24 doubles each. */
SK_ALWAYS_INLINE void dqs8d_finish(__m512d q[8], unsigned copy, const double *pin,
                                   const double *nin, double *pout, double *nout)
{
    const int normals = nin != NULL;
    transpose8_pd(q);
    const __m512d zero = _mm512_setzero_pd();
    const __m512d n2 = _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(q[0], q[0]),
                                                                 _mm512_mul_pd(q[1], q[1])),
                                                   _mm512_mul_pd(q[2], q[2])),
                                     _mm512_mul_pd(q[3], q[3]));
    const __mmask8 keep = _mm512_cmp_pd_mask(n2, zero, _CMP_NGT_UQ) | (__mmask8)copy;
    const __m512d inv = inv_sqrt8d(n2), two = _mm512_set1_pd(2.0);
    const __m512d x = _mm512_mul_pd(q[0], inv), y = _mm512_mul_pd(q[1], inv);
    const __m512d z = _mm512_mul_pd(q[2], inv), s = _mm512_mul_pd(q[3], inv);
    const __m512d dx = _mm512_mul_pd(q[4], inv), dy = _mm512_mul_pd(q[5], inv);
    const __m512d dz = _mm512_mul_pd(q[6], inv), dw = _mm512_mul_pd(q[7], inv);
    __m512d rm[9];
    quat8d_matrix(rm, x, y, z, s, two);
    const __m512d t0 = _mm512_mul_pd(two, _mm512_add_pd(_mm512_sub_pd(_mm512_mul_pd(s, dx), _mm512_mul_pd(dw, x)),
                                                        _mm512_sub_pd(_mm512_mul_pd(y, dz), _mm512_mul_pd(z, dy))));
    const __m512d t1 = _mm512_mul_pd(two, _mm512_add_pd(_mm512_sub_pd(_mm512_mul_pd(s, dy), _mm512_mul_pd(dw, y)),
                                                        _mm512_sub_pd(_mm512_mul_pd(z, dx), _mm512_mul_pd(x, dz))));
    const __m512d t2 = _mm512_mul_pd(two, _mm512_add_pd(_mm512_sub_pd(_mm512_mul_pd(s, dz), _mm512_mul_pd(dw, z)),
                                                        _mm512_sub_pd(_mm512_mul_pd(x, dy), _mm512_mul_pd(y, dx))));
    __m512d px, py, pz, nx = zero, ny = zero, nz = zero;
    load8d_xyz(pin, &px, &py, &pz);
    if (normals) load8d_xyz(nin, &nx, &ny, &nz);
    __m512d o[3], on[3];
    rot8d(o, rm, px, py, pz);
    if (normals) { /* R n / |R n|, unit4d's expressions */
        rot8d(on, rm, nx, ny, nz);
        const __m512d m2 = _mm512_fmadd_pd(on[2], on[2], _mm512_fmadd_pd(on[1], on[1],
                                                                          _mm512_mul_pd(on[0], on[0])));
        const __m512d ninv = inv_sqrt8d(m2);
        for (int i = 0; i < 3; ++i) on[i] = _mm512_mul_pd(on[i], ninv);
    }
    store8d_xyz(pout, _mm512_mask_blend_pd(keep, _mm512_add_pd(o[0], t0), px),
                _mm512_mask_blend_pd(keep, _mm512_add_pd(o[1], t1), py),
                _mm512_mask_blend_pd(keep, _mm512_add_pd(o[2], t2), pz));
    if (normals)
        store8d_xyz(nout, _mm512_mask_blend_pd(keep, on[0], nx),
                    _mm512_mask_blend_pd(keep, on[1], ny), _mm512_mask_blend_pd(keep, on[2], nz));
}
#endif

#ifdef __AVX512F__
/* The 8-vertex steps from v while they fit before end, for K = 4 contiguous float64 weights
 * with the sign table; returns where they stopped.  A function of its own, so that the
 * four-vertex loop of the other influences compiles as before: with the steps inlined into
 * dqs4d_range, K = 8 (which never takes them) measured 1.09-1.16x its earlier time, and as a
 * function 1.03-1.06x (K = 1: 1.01-1.07x and 1.01-1.02x). */
static __attribute__((noinline)) int64_t dqs8d_steps(const sk_skin_job_f64 *job, int64_t v,
                                                     int64_t end, const float *sign,
                                                     sk_index_type it)
{
    const int normals = job->normals.data != NULL;
    const double *pin = (const double *)job->positions.data;
    const double *nin = (const double *)job->normals.data;
    double *pout = (double *)job->out_positions.data;
    double *nout = (double *)job->out_normals.data;
    if (v + 8 > end) return v;
    uint64_t own[SK_DQS_SIGN_MAX_J];
    const uint64_t *sbits = job_sign_bits(own, job->dqs_sign_bits, sign, job->n_joints);
    __m512d q[8], qn[8];
    unsigned copy = dqs8d_blends(q, job, v, sbits, it);
    for (; v + 16 <= end; v += 8) {
        const unsigned copy_next = dqs8d_blends(qn, job, v + 8, sbits, it);
        dqs8d_finish(q, copy, pin + 3 * v, normals ? nin + 3 * v : NULL, pout + 3 * v,
                     normals ? nout + 3 * v : NULL);
        memcpy(q, qn, sizeof q);
        copy = copy_next;
    }
    dqs8d_finish(q, copy, pin + 3 * v, normals ? nin + 3 * v : NULL, pout + 3 * v,
                 normals ? nout + 3 * v : NULL);
    return v + 8;
}
#endif

SK_ALWAYS_INLINE void dqs4d_range(const sk_skin_job_f64 *job, int64_t begin, int64_t end,
                                  sk_index_type it, int64_t kk, sk_weight_type wt)
{
    const int normals = job->normals.data != NULL;
    /* the job's per-frame sign table (J <= SK_DQS_SIGN_MAX_J); without one, the kernel tests
     * each slot */
    const float *sign = job->dqs_sign;
    int64_t v = begin;
    if (packed_job(&job->positions, &job->out_positions, &job->normals, &job->out_normals, 8)) {
        const double *pin = (const double *)job->positions.data;
        const double *nin = (const double *)job->normals.data;
        double *pout = (double *)job->out_positions.data;
        double *nout = (double *)job->out_normals.data;
#ifdef __AVX512F__
        if (kk == 4 && sign && weights_packed(&job->influences, 4, 8))
            v = dqs8d_steps(job, v, end, sign, it);
#endif
        /* pipelined as dqs8_range: the next block's blends before this block's finish */
        if (v + 4 <= end) {
            __m256d qr[4], qd[4], nr[4], nd[4];
            int64_t copy[4], copy_next[4];
            dqs4d_blends(qr, qd, copy, job, v, 4, sign, it, kk, wt);
            for (; v + 8 <= end; v += 4) {
                dqs4d_blends(nr, nd, copy_next, job, v + 4, 4, sign, it, kk, wt);
                dqs4d_finish(qr, qd, copy, pin + 3 * v, normals ? nin + 3 * v : NULL,
                             pout + 3 * v, normals ? nout + 3 * v : NULL);
                memcpy(qr, nr, sizeof qr);
                memcpy(qd, nd, sizeof qd);
                memcpy(copy, copy_next, sizeof copy);
            }
            dqs4d_finish(qr, qd, copy, pin + 3 * v, normals ? nin + 3 * v : NULL, pout + 3 * v,
                         normals ? nout + 3 * v : NULL);
            v += 4;
        }
    }
    for (; v < end; v += 4) dqs4d_part(job, v, end - v < 4 ? end - v : 4, sign, it, kk, wt);
}

#if SK_SIMD_PART(DQS64)
SIMD_DQS_ENTRY(_f64, dqs4d_range, sk_skin_job_f64)
#endif /* SK_SIMD_PART(DQS64) */

/* ==========================================================================================
 * float32 CoR of a rigid palette (Le & Hodgins 2016; skin_cor.template.c), both ISAs: per
 * vertex, blend the rotation quaternions (DQS's pivot and hemisphere rule) as one xmm and the
 * LBS 3x4 as two ymm, and apply the LBS to the center right away, so one ymm row [q | LBS(c)]
 * per vertex remains; then finish 8 vertices transposed: normalize q, R from q,
 * v' = R (v - c) + LBS(c), n' = R n.
 *
 * Per joint it reads the blocks sk_cor_prepare writes (sk.h): the LBS block's column-major 3x4
 * (for a rigid palette the same numbers as the rigid part the scalar kernel blends) and the DQS
 * block's quaternion; no other layout.  A vertex without a center (NaN row) is LBS: the
 * scalar per-vertex code below, during the blend phase, so it reads its inputs before the
 * block's stores (in place is safe).
 * ======================================================================================== */

#define SK_T float
#define SK_FN(name) name##_f32
#define SK_JOB sk_skin_job_f32
#include "skin_common.template.h"
#undef SK_T
#undef SK_FN
#undef SK_JOB

#define COR_Q (SK_COR_DQS) /* the quaternion within a joint's record */

/* One vertex's blend: *q = sum +-w_i q_i (the pivot's hemisphere), *m01 / *m23 = sum w_i K_i
 * as [col0 | col1] / [col2 | col3].  Returns the weight sum; the sums stay 0 when it is
 * <= 1e-6 (the vertex is copied). */
SK_ALWAYS_INLINE float cor8_blend(__m128 *q, __m256 *m01, __m256 *m23, const sk_skin_job_f32 *job,
                                  int64_t v, const int32_t *off, const float *sign,
                                  sk_index_type it, int64_t kk, sk_weight_type wt)
{
    const sk_influences *in = &job->influences;
    const char *ip = (const char *)in->indices.data + v * in->indices.row;
    const char *wp = (const char *)in->weights.data + v * in->weights.row;
    const float *prep = job->prepared;
    __m128 aq = _mm_setzero_ps();
    __m256 a01 = _mm256_setzero_ps(), a23 = _mm256_setzero_ps();
    float total = 0;
    if (kk == 4 && sign) { /* joints from offsets_k (stride 1), signs from the table */
        const ptrdiff_t we = in->weights.elem;
        float w[4];
        for (int k = 0; k < 4; ++k) {
            w[k] = *(const float *)(wp + k * we);
            total += w[k];
        }
        /* the pivot: the largest weight, ties to the smallest joint (dqs8_blend) */
        int64_t pivot = off[0];
        float best = w[0];
        for (int k = 1; k < 4; ++k)
            if (w[k] > best || (w[k] == best && off[k] < pivot)) {
                best = w[k];
                pivot = off[k];
            }
        if (total > 1e-6f) {
            const float *sp = sign + pivot * job->n_joints;
            for (int k = 0; k < 4; ++k) {
                const float *pj = prep + SK_COR_PREPARED_SIZE * (int64_t)off[k];
                const __m256 wk = _mm256_set1_ps(w[k]);
                aq = _mm_fmadd_ps(_mm_set1_ps(w[k] * sp[off[k]]), _mm_loadu_ps(pj + COR_Q), aq);
                a01 = _mm256_fmadd_ps(wk, _mm256_loadu_ps(pj), a01);
                a23 = _mm256_fmadd_ps(wk, _mm256_loadu_ps(pj + 8), a23);
            }
        }
    } else {
        const int64_t K = kk ? kk : in->k;
        uint64_t top = 0;
        for (int64_t k = 0; k < K; ++k) {
            float w;
            int64_t j;
            SIMD_SLOT(simd_weight_f32, in, ip, wp, k, it, wt, job->n_joints, w, j);
            total += w;
            top = pivot_key(w, j) > top ? pivot_key(w, j) : top;
        }
        if (total > 1e-6f) {
            const float *q0 = prep + SK_COR_PREPARED_SIZE * (int64_t)(uint32_t)~top + COR_Q;
            for (int64_t k = 0; k < K; ++k) {
                float w;
                int64_t j;
                SIMD_SLOT(simd_weight_f32, in, ip, wp, k, it, wt, job->n_joints, w, j);
                const float *pj = prep + SK_COR_PREPARED_SIZE * j;
                const float *qj = pj + COR_Q;
                float dot = q0[0] * qj[0] + q0[1] * qj[1] + q0[2] * qj[2] + q0[3] * qj[3];
                const __m256 wk = _mm256_set1_ps(w);
                aq = _mm_fmadd_ps(_mm_set1_ps(dot < 0 ? -w : w), _mm_loadu_ps(qj), aq);
                a01 = _mm256_fmadd_ps(wk, _mm256_loadu_ps(pj), a01);
                a23 = _mm256_fmadd_ps(wk, _mm256_loadu_ps(pj + 8), a23);
            }
        }
    }
    *q = aq;
    *m01 = a01;
    *m23 = a23;
    return total;
}

/* Lane i of the result all ones when bit i of `bits` is set. */
SK_ALWAYS_INLINE __m256 cor8_lanes(unsigned bits)
{
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(
        _mm256_and_si256(_mm256_set1_epi32((int)bits), _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128)),
        _mm256_setzero_si256()));
}

#define V8(x) _mm256_set1_ps(x)

SK_ALWAYS_INLINE void cor8_block(const sk_skin_job_f32 *job, int64_t v0, int n, const float *pin,
                                 const float *nin, const float *cin, float *pout, float *nout,
                                 const float *sign, sk_index_type it, int64_t kk, sk_weight_type wt)
{
    const int normals = nin != NULL;
    __m256 r[8];
    unsigned copy = 0, lbs = 0;
    float lp[24] = {0}, ln[24] = {0}; /* LBS results of the vertices without a center */
    int32_t off[32];
    if (kk == 4 && sign) offsets_k(off, &job->influences, v0, n, it, job->n_joints, 1, 4);
    /* unrolled: each vertex's pivot, sign lookups and multiply-adds form one long dependency
     * chain, and out-of-order execution interleaves the eight chains best when they are all
     * written out (6-11% faster than a rolled loop) */
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
        r[i] = _mm256_setzero_ps();
        if (i >= n) {
            copy |= 1u << i;
            continue;
        }
        const float *c = cin + 3 * i;
        if (isnan(c[0])) { /* validated rows are all NaN or all finite */
            float tan[3];
            lbs |= 1u << i;
            if (!sk_lbs_eval_f32(job, v0 + i, job->prepared + SK_COR_LBS, SK_COR_PREPARED_SIZE,
                                 lp + 3 * i, ln + 3 * i, tan))
                copy |= 1u << i;
            continue;
        }
        __m128 q;
        __m256 m01, m23;
        float total = cor8_blend(&q, &m01, &m23, job, v0 + i, off + 4 * i, sign, it, kk, wt);
        if (!(total > 1e-6f)) copy |= 1u << i;
        /* LBS(c) = (col0 cx + col2 cz) + (col1 cy + col3) */
        const __m256 cxy = _mm256_setr_m128(_mm_set1_ps(c[0]), _mm_set1_ps(c[1]));
        const __m256 cz1 = _mm256_setr_m128(_mm_set1_ps(c[2]), _mm_set1_ps(1.0f));
        const __m256 l = _mm256_fmadd_ps(m23, cz1, _mm256_mul_ps(m01, cxy));
        const __m128 lc = _mm_add_ps(_mm256_castps256_ps128(l), _mm256_extractf128_ps(l, 1));
        r[i] = _mm256_setr_m128(q, lc);
    }
    transpose8_ps(r);
    const __m256 zero = _mm256_setzero_ps();
    __m256 n2 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(r[0], r[0]), _mm256_mul_ps(r[1], r[1])),
                                            _mm256_mul_ps(r[2], r[2])), _mm256_mul_ps(r[3], r[3]));
    __m256 ok = _mm256_cmp_ps(n2, zero, _CMP_GT_OQ);
    /* copied: small weight sums, and a zero blended rotation where there is a center */
    copy |= ~lbs & ~(unsigned)_mm256_movemask_ps(ok) & 0xffu;
    const __m256 keep = cor8_lanes(copy), from_lbs = cor8_lanes(lbs & ~copy);
    __m256 inv = inv_sqrt8(n2, ok);
    const __m256 x = _mm256_mul_ps(r[0], inv), y = _mm256_mul_ps(r[1], inv);
    const __m256 z = _mm256_mul_ps(r[2], inv), s = _mm256_mul_ps(r[3], inv);
    __m256 rm[9];
    quat8_matrix(rm, x, y, z, s, V8(2.0f));
    __m256 px, py, pz, cx, cy, cz, nx = zero, ny = zero, nz = zero;
    load8_xyz(pin, &px, &py, &pz);
    load8_xyz(cin, &cx, &cy, &cz);
    if (normals) load8_xyz(nin, &nx, &ny, &nz);
    /* R (v - c) + LBS(c): relative to the center, as the scalar kernel */
    const __m256 dx = _mm256_sub_ps(px, cx), dy = _mm256_sub_ps(py, cy), dz = _mm256_sub_ps(pz, cz);
    __m256 o[3];
    rot8(o, rm, dx, dy, dz);
    __m256 ox = _mm256_add_ps(o[0], r[4]), oy = _mm256_add_ps(o[1], r[5]), oz = _mm256_add_ps(o[2], r[6]);
    __m256 fx = zero, fy = zero, fz = zero;
    if (lbs) {
        load8_xyz(lp, &fx, &fy, &fz);
        ox = _mm256_blendv_ps(ox, fx, from_lbs);
        oy = _mm256_blendv_ps(oy, fy, from_lbs);
        oz = _mm256_blendv_ps(oz, fz, from_lbs);
    }
    store8_xyz(pout, _mm256_blendv_ps(ox, px, keep), _mm256_blendv_ps(oy, py, keep),
               _mm256_blendv_ps(oz, pz, keep));
    if (normals) {
        __m256 m[3];
        rot8(m, rm, nx, ny, nz);
        unit8(m);
        __m256 mx = m[0], my = m[1], mz = m[2];
        if (lbs) {
            load8_xyz(ln, &fx, &fy, &fz);
            mx = _mm256_blendv_ps(mx, fx, from_lbs);
            my = _mm256_blendv_ps(my, fy, from_lbs);
            mz = _mm256_blendv_ps(mz, fz, from_lbs);
        }
        store8_xyz(nout, _mm256_blendv_ps(mx, nx, keep), _mm256_blendv_ps(my, ny, keep),
                   _mm256_blendv_ps(mz, nz, keep));
    }
}

#undef V8

/* A partial or strided block: through zero-padded stack copies and the same block code. */
SK_ALWAYS_INLINE void cor8_part(const sk_skin_job_f32 *job, int64_t v0, int64_t n, const float *sign,
                                sk_index_type it, int64_t kk, sk_weight_type wt)
{
    const int normals = job->normals.data != NULL;
    float bp[24], bn[24], bc[24], op[24], on[24];
    gather3_f32(bp, 8, &job->positions, v0, n);
    gather3_f32(bc, 8, &job->centers, v0, n);
    if (normals) gather3_f32(bn, 8, &job->normals, v0, n);
    cor8_block(job, v0, (int)n, bp, normals ? bn : NULL, bc, op, normals ? on : NULL, sign, it, kk, wt);
    scatter3_f32(&job->out_positions, v0, n, op);
    if (normals) scatter3_f32(&job->out_normals, v0, n, on);
}

SK_ALWAYS_INLINE void cor8_range(const sk_skin_job_f32 *job, int64_t begin, int64_t end,
                                 sk_index_type it, int64_t kk, sk_weight_type wt)
{
    const int normals = job->normals.data != NULL;
    float table[SK_DQS_SIGN_MAX_J * SK_DQS_SIGN_MAX_J];
    const float *sign = range_signs(table, job, kk, job->prepared + COR_Q, SK_COR_PREPARED_SIZE);
    int64_t v = begin;
    if (packed_job(&job->positions, &job->out_positions, &job->normals, &job->out_normals, 4) &&
        sk_simd_packed3(&job->centers, 4)) {
        const float *pin = (const float *)job->positions.data;
        const float *nin = (const float *)job->normals.data;
        const float *cin = (const float *)job->centers.data;
        float *pout = (float *)job->out_positions.data;
        float *nout = (float *)job->out_normals.data;
        for (; v + 8 <= end; v += 8)
            cor8_block(job, v, 8, pin + 3 * v, normals ? nin + 3 * v : NULL, cin + 3 * v,
                       pout + 3 * v, normals ? nout + 3 * v : NULL, sign, it, kk, wt);
    }
    for (; v < end; v += 8) cor8_part(job, v, end - v < 8 ? end - v : 8, sign, it, kk, wt);
}

#if SK_SIMD_PART(COR32)
void SK_ISA(sk_cor, _f32)(const sk_skin_job_f32 *job, int64_t begin, int64_t end)
{
    SIMD_NARROW_OR_GO_ON(job, begin, end, SK_ISA(sk_cor, _f32), narrowed_f32, 1);
    SIMD_DISPATCH(cor8_range, job, begin, end);
}
#endif /* SK_SIMD_PART(COR32) */

/* ==========================================================================================
 * float64 CoR of a rigid palette, both ISAs: as the float32 kernel with 4 vertices per block,
 * each vertex's blend (dq4d_blend) reduced to two ymm rows, its quaternion and LBS(c), then
 * finished across lanes.
 * ======================================================================================== */

#define SK_T double
#define SK_FN(name) name##_f64
#define SK_JOB sk_skin_job_f64
#include "skin_common.template.h"
#undef SK_T
#undef SK_FN
#undef SK_JOB

/* As cor8_block, for 4 vertices of doubles. */
SK_ALWAYS_INLINE void cor4d_block(const sk_skin_job_f64 *job, int64_t v0, int n, const double *pin,
                                  const double *nin, const double *cin, double *pout,
                                  double *nout, const float *sign, sk_index_type it, int64_t kk,
                                  sk_weight_type wt)
{
    const int normals = nin != NULL;
    const __m256d zero = _mm256_setzero_pd();
    __m256d rq[4], rl[4];
    int64_t copy[4], lbs[4], any_lbs = 0;
    double lp[12] = {0}, ln[12] = {0}; /* LBS results of the vertices without a center */
    int32_t off[16];
    if (kk == 4 && sign) offsets_k(off, &job->influences, v0, n, it, job->n_joints, 1, 4);
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        rq[i] = rl[i] = zero;
        copy[i] = lbs[i] = 0;
        if (i >= n) {
            copy[i] = -1;
            continue;
        }
        const double *c = cin + 3 * i;
        if (isnan(c[0])) { /* validated rows are all NaN or all finite */
            double tan[3];
            lbs[i] = any_lbs = -1;
            if (!sk_lbs_eval_f64(job, v0 + i, job->prepared + SK_COR_LBS, SK_COR_PREPARED_SIZE,
                                 lp + 3 * i, ln + 3 * i, tan))
                copy[i] = -1;
            continue;
        }
        __m256d acc[5];
        const double total = dq4d_blend(acc, job, v0 + i, off + 4 * i, sign, it, kk, wt, 1);
        if (!(total > 1e-6)) copy[i] = -1;
        /* LBS(c) = (col0 cx + col2 cz) + (col1 cy + col3) */
        rq[i] = acc[0];
        rl[i] = _mm256_add_pd(
            _mm256_fmadd_pd(acc[3], _mm256_set1_pd(c[2]), _mm256_mul_pd(acc[1], _mm256_set1_pd(c[0]))),
            _mm256_fmadd_pd(acc[2], _mm256_set1_pd(c[1]), acc[4]));
    }
    transpose4_pd(rq);
    transpose4_pd(rl);
    const __m256d n2 = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(rq[0], rq[0]),
                                                                 _mm256_mul_pd(rq[1], rq[1])),
                                                   _mm256_mul_pd(rq[2], rq[2])),
                                     _mm256_mul_pd(rq[3], rq[3]));
    /* copied: small weight sums, and a zero blended rotation where there is a center */
    const __m256d from_lbs = _mm256_andnot_pd(lanes4d(copy), lanes4d(lbs));
    const __m256d keep = _mm256_or_pd(lanes4d(copy), _mm256_andnot_pd(lanes4d(lbs),
                                                                      _mm256_cmp_pd(n2, zero, _CMP_NGT_UQ)));
    const __m256d inv = inv_sqrt4d(n2);
    __m256d rm[9];
    quat4d_matrix(rm, _mm256_mul_pd(rq[0], inv), _mm256_mul_pd(rq[1], inv),
                  _mm256_mul_pd(rq[2], inv), _mm256_mul_pd(rq[3], inv), _mm256_set1_pd(2.0));
    __m256d px, py, pz, cx, cy, cz, nx = zero, ny = zero, nz = zero, fx, fy, fz;
    load4d_xyz(pin, &px, &py, &pz);
    load4d_xyz(cin, &cx, &cy, &cz);
    if (normals) load4d_xyz(nin, &nx, &ny, &nz);
    /* R (v - c) + LBS(c): relative to the center, as the scalar kernel */
    __m256d o[3];
    rot4d(o, rm, _mm256_sub_pd(px, cx), _mm256_sub_pd(py, cy), _mm256_sub_pd(pz, cz));
    for (int r = 0; r < 3; ++r) o[r] = _mm256_add_pd(o[r], rl[r]);
    if (any_lbs) {
        load4d_xyz(lp, &fx, &fy, &fz);
        o[0] = _mm256_blendv_pd(o[0], fx, from_lbs);
        o[1] = _mm256_blendv_pd(o[1], fy, from_lbs);
        o[2] = _mm256_blendv_pd(o[2], fz, from_lbs);
    }
    store4d_xyz(pout, _mm256_blendv_pd(o[0], px, keep), _mm256_blendv_pd(o[1], py, keep),
                _mm256_blendv_pd(o[2], pz, keep));
    if (normals) {
        __m256d m[3];
        rot4d(m, rm, nx, ny, nz);
        unit4d(m);
        if (any_lbs) {
            load4d_xyz(ln, &fx, &fy, &fz);
            m[0] = _mm256_blendv_pd(m[0], fx, from_lbs);
            m[1] = _mm256_blendv_pd(m[1], fy, from_lbs);
            m[2] = _mm256_blendv_pd(m[2], fz, from_lbs);
        }
        store4d_xyz(nout, _mm256_blendv_pd(m[0], nx, keep), _mm256_blendv_pd(m[1], ny, keep),
                    _mm256_blendv_pd(m[2], nz, keep));
    }
}

SK_ALWAYS_INLINE void cor4d_part(const sk_skin_job_f64 *job, int64_t v0, int64_t n,
                                 const float *sign, sk_index_type it, int64_t kk,
                                 sk_weight_type wt)
{
    const int normals = job->normals.data != NULL;
    double bp[12], bn[12], bc[12], op[12], on[12];
    gather3_f64(bp, 4, &job->positions, v0, n);
    gather3_f64(bc, 4, &job->centers, v0, n);
    if (normals) gather3_f64(bn, 4, &job->normals, v0, n);
    cor4d_block(job, v0, (int)n, bp, normals ? bn : NULL, bc, op, normals ? on : NULL, sign, it,
                kk, wt);
    scatter3_f64(&job->out_positions, v0, n, op);
    if (normals) scatter3_f64(&job->out_normals, v0, n, on);
}

SK_ALWAYS_INLINE void cor4d_range(const sk_skin_job_f64 *job, int64_t begin, int64_t end,
                                  sk_index_type it, int64_t kk, sk_weight_type wt)
{
    const int normals = job->normals.data != NULL;
    const float *sign = job->dqs_sign; /* as dqs4d_range */
    int64_t v = begin;
    if (packed_job(&job->positions, &job->out_positions, &job->normals, &job->out_normals, 8) &&
        sk_simd_packed3(&job->centers, 8)) {
        const double *pin = (const double *)job->positions.data;
        const double *nin = (const double *)job->normals.data;
        const double *cin = (const double *)job->centers.data;
        double *pout = (double *)job->out_positions.data;
        double *nout = (double *)job->out_normals.data;
        for (; v + 4 <= end; v += 4)
            cor4d_block(job, v, 4, pin + 3 * v, normals ? nin + 3 * v : NULL, cin + 3 * v,
                        pout + 3 * v, normals ? nout + 3 * v : NULL, sign, it, kk, wt);
    }
    for (; v < end; v += 4) cor4d_part(job, v, end - v < 4 ? end - v : 4, sign, it, kk, wt);
}

#if SK_SIMD_PART(COR64)
void SK_ISA(sk_cor, _f64)(const sk_skin_job_f64 *job, int64_t begin, int64_t end)
{
    SIMD_NARROW_OR_GO_ON(job, begin, end, SK_ISA(sk_cor, _f64), narrowed_f64, 1);
    SIMD_DISPATCH(cor4d_range, job, begin, end);
}
#endif /* SK_SIMD_PART(COR64) */
