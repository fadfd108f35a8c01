/* skin_common.template.h -- helpers shared by the skinning kernels, included once per float
 * type by each skin_*.c after defining SK_T (float or double) and SK_FN(name) (name##_f32 /
 * name##_f64).  Everything here is static inline: each kernel file gets its own copy. */

#ifdef SK_HAVE_VEC4
/* Four numbers as one value (sk.h): SK_FN(sk_v4) is sk_v4_f32 or sk_v4_f64. */
typedef SK_T SK_FN(sk_v4) __attribute__((vector_size(4 * sizeof(SK_T))));

SK_ALWAYS_INLINE SK_FN(sk_v4) SK_FN(sk_v4_load)(const SK_T *p)
{
    SK_FN(sk_v4) x;
    memcpy(&x, p, sizeof x);
    return x;
}

SK_ALWAYS_INLINE SK_FN(sk_v4) SK_FN(sk_v4_splat)(SK_T a)
{
    return (SK_FN(sk_v4)){a, a, a, a};
}
#endif

/* Whether a[0 .. n) are all finite.  A number is inf or NaN exactly when its exponent bits are
 * all ones, and then adding 1 to its exponent field carries into the sign bit: integer ands,
 * adds and ors without branches, which the compiler vectorizes for both float types (a check
 * per entry that returned at the first bad one stayed scalar: half of sk_lbs_prepare, about
 * 0.8 us a call with J = 64). */
static inline int SK_FN(sk_all_finite)(const SK_T *a, int64_t n)
{
#if SK_IS_F32
    typedef uint32_t bits_t;
    const bits_t exponent = 0x7f800000u, exponent_one = 0x00800000u;
#else
    typedef uint64_t bits_t;
    const bits_t exponent = 0x7ff0000000000000u, exponent_one = 0x0010000000000000u;
#endif
    bits_t any = 0;
    for (int64_t i = 0; i < n; ++i) {
        bits_t b;
        memcpy(&b, a + i, sizeof b);
        any |= (b & exponent) + exponent_one;
    }
    return !(any >> (8 * sizeof(bits_t) - 1));
}

/* Influence slots are converted a block at a time into these stack buffers, so that the
 * float/double template is the only one whatever the index and weight dtypes. */
#ifndef SK_SLOTS
#define SK_SLOTS 64
#endif

#define SK_AT(stream, type, v, i) \
    (*(type *)((char *)(stream).data + (v) * (stream).row + (i) * (stream).elem))

#ifndef SK_COMMON_ONCE
#define SK_COMMON_ONCE
static inline int64_t sk_read_index(const char *p, sk_index_type type)
{
    switch (type) {
    case SK_INDEX_U8: return *(const uint8_t *)p;
    case SK_INDEX_U16: return *(const uint16_t *)p;
    case SK_INDEX_U32: return *(const uint32_t *)p;
    case SK_INDEX_I32: return *(const int32_t *)p;
    default: return *(const int64_t *)p;
    }
}
#endif

static inline SK_T SK_FN(sk_read_weight)(const char *p, sk_weight_type type)
{
    switch (type) {
    case SK_WEIGHT_UNORM8: return (SK_T)(*(const uint8_t *)p) / (SK_T)255;
    case SK_WEIGHT_UNORM16: return (SK_T)(*(const uint16_t *)p) / (SK_T)65535;
    default: return *(const SK_T *)p;
    }
}

/* Slots [k0, k0 + n) of vertex v into idx / w.  A zero weight gets joint 0 (its index is never
 * read, DESIGN.md section 1); an index outside [0, J) that escaped validation also becomes 0, so
 * no input can make a kernel read outside the palette. */
static inline void SK_FN(sk_load_slots)(const sk_influences *in, int64_t v, int64_t k0, int64_t n,
                                        int64_t n_joints, int64_t *idx, SK_T *w)
{
    const char *ip = (const char *)in->indices.data + v * in->indices.row + k0 * in->indices.elem;
    const char *wp = (const char *)in->weights.data + v * in->weights.row + k0 * in->weights.elem;
    for (int64_t k = 0; k < n; ++k) {
        SK_T wk = SK_FN(sk_read_weight)(wp + k * in->weights.elem, in->weight_type);
        int64_t j = sk_read_index(ip + k * in->indices.elem, in->index_type);
        if (wk == 0 || (uint64_t)j >= (uint64_t)n_joints) j = 0;
        idx[k] = j;
        w[k] = wk;
    }
}

/* Slot k of a vertex's influences (ip, wp: its rows) for the portable loops, by sk_load_slots'
 * rules: returns the weight (float when kk, the loop's constant K, is set) and sets *j to the
 * joint, 0 for a zero weight or an index outside [0, J). */
SK_ALWAYS_INLINE SK_T SK_FN(sk_slot)(const sk_influences *in, const char *ip, const char *wp,
                                     int64_t k, sk_index_type it, int64_t kk, int64_t J,
                                     int64_t *j)
{
    const char *w = wp + k * in->weights.elem;
    const SK_T wk = kk ? *(const SK_T *)w : SK_FN(sk_read_weight)(w, in->weight_type);
    const int64_t jk = sk_read_index(ip + k * in->indices.elem, it);
    *j = wk == 0 || (uint64_t)jk >= (uint64_t)J ? 0 : jk;
    return wk;
}

/* v / |v| for a 3-vector; a zero vector stays zero. */
static inline void SK_FN(sk_normalize3)(SK_T v[3])
{
    SK_T n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if (n2 > 0) {
        SK_T inv = (SK_T)1 / (SK_T)sqrt((double)n2);
        v[0] *= inv;
        v[1] *= inv;
        v[2] *= inv;
    }
}

/* y = m (3x3 inside a 3x4 when stride is 4, or a packed 3x3 when stride is 3) x */
static inline void SK_FN(sk_mul33)(SK_T y[3], const SK_T *m, int stride, const SK_T x[3])
{
    for (int r = 0; r < 3; ++r)
        y[r] = m[stride * r] * x[0] + m[stride * r + 1] * x[1] + m[stride * r + 2] * x[2];
}

/* y = A x for A column-major with columns `stride` apart: A[r][c] = m[stride * c + r] (the
 * prepared LBS layout, sk.h). */
static inline void SK_FN(sk_mul33t)(SK_T y[3], const SK_T *m, int stride, const SK_T x[3])
{
    for (int r = 0; r < 3; ++r)
        y[r] = m[r] * x[0] + m[stride + r] * x[1] + m[2 * stride + r] * x[2];
}

/* cof(A) of the 3x3 inside a 3x4: columns a1 x a2, a2 x a0, a0 x a1 (det(A) A^-T); the rotation
 * itself for a rotation and finite for a singular A, so normals of a zero-scale joint stay
 * defined. */
static inline void SK_FN(sk_cofactor)(SK_T c[9], const SK_T *a)
{
    const SK_T a00 = a[0], a01 = a[1], a02 = a[2];
    const SK_T a10 = a[4], a11 = a[5], a12 = a[6];
    const SK_T a20 = a[8], a21 = a[9], a22 = a[10];
    c[0] = a11 * a22 - a21 * a12; c[1] = a12 * a20 - a22 * a10; c[2] = a10 * a21 - a20 * a11;
    c[3] = a21 * a02 - a01 * a22; c[4] = a22 * a00 - a02 * a20; c[5] = a20 * a01 - a00 * a21;
    c[6] = a01 * a12 - a11 * a02; c[7] = a02 * a10 - a12 * a00; c[8] = a00 * a11 - a10 * a01;
}

static inline void SK_FN(sk_load3)(SK_T x[3], const sk_stream *s, int64_t v)
{
    x[0] = SK_AT(*s, SK_T, v, 0);
    x[1] = SK_AT(*s, SK_T, v, 1);
    x[2] = SK_AT(*s, SK_T, v, 2);
}

static inline void SK_FN(sk_store3)(const sk_stream *s, int64_t v, const SK_T x[3])
{
    SK_AT(*s, SK_T, v, 0) = x[0];
    SK_AT(*s, SK_T, v, 1) = x[1];
    SK_AT(*s, SK_T, v, 2) = x[2];
}

/* Copy vertex v unchanged (weights summing to <= 1e-6, or a rigid index < 0). */
static inline void SK_FN(sk_copy_vertex)(const SK_JOB *job, int64_t v)
{
    SK_T x[3];
    SK_FN(sk_load3)(x, &job->positions, v);
    SK_FN(sk_store3)(&job->out_positions, v, x);
    if (job->normals.data) {
        SK_FN(sk_load3)(x, &job->normals, v);
        SK_FN(sk_store3)(&job->out_normals, v, x);
    }
    if (job->tangents.data) {
        SK_T hand = SK_AT(job->tangents, SK_T, v, 3);
        SK_FN(sk_load3)(x, &job->tangents, v);
        SK_FN(sk_store3)(&job->out_tangents, v, x);
        SK_AT(job->out_tangents, SK_T, v, 3) = hand;
    }
}

/* The transformed tangent of vertex v (normalized 3x3 image, xyz only); m is row-major with
 * rows `stride` apart, or column-major with columns `stride` apart when `colmajor`. */
static inline void SK_FN(sk_tangent_of)(SK_T y[3], const SK_JOB *job, int64_t v, const SK_T *m,
                                        int stride, int colmajor)
{
    SK_T t[3];
    SK_FN(sk_load3)(t, &job->tangents, v);
    if (colmajor)
        SK_FN(sk_mul33t)(y, m, stride, t);
    else
        SK_FN(sk_mul33)(y, m, stride, t);
    SK_FN(sk_normalize3)(y);
}

/* Write a tangent's xyz keeping the input's handedness w. */
static inline void SK_FN(sk_store_tangent3)(const SK_JOB *job, int64_t v, const SK_T y[3])
{
    SK_T hand = SK_AT(job->tangents, SK_T, v, 3);
    SK_FN(sk_store3)(&job->out_tangents, v, y);
    SK_AT(job->out_tangents, SK_T, v, 3) = hand;
}

/* Write a transformed tangent (see sk_tangent_of) keeping the handedness w. */
static inline void SK_FN(sk_store_tangent)(const SK_JOB *job, int64_t v, const SK_T *m, int stride,
                                           int colmajor)
{
    SK_T y[3];
    SK_FN(sk_tangent_of)(y, job, v, m, stride, colmajor);
    SK_FN(sk_store_tangent3)(job, v, y);
}

/* Write one vertex's results: the normal and tangent only when the job has them. */
static inline void SK_FN(sk_store_vertex)(const SK_JOB *job, int64_t v, const SK_T pos[3],
                                          const SK_T nrm[3], const SK_T tan[3])
{
    SK_FN(sk_store3)(&job->out_positions, v, pos);
    if (job->normals.data) SK_FN(sk_store3)(&job->out_normals, v, nrm);
    if (job->tangents.data) SK_FN(sk_store_tangent3)(job, v, tan);
}

/* ---- per-vertex LBS and DQS, shared by their kernels and by CoR / blend (skin_cor.c) ----
 * `prep` points at joint 0's block of the matching prepared layout (sk.h) and joints are
 * `stride` numbers apart, so CoR can keep both blocks side by side in one joint record. */

/* LBS of vertex v into pos / nrm / tan (the last two only when the job has normals /
 * tangents): M = sum w_i K_i (3x4) and, for the "joint" normal rule, C = sum w_i cof(A_i), both
 * column-major as prepared.  0 when the weights sum to <= 1e-6 (the caller copies the vertex). */
static inline int SK_FN(sk_lbs_eval)(const SK_JOB *job, int64_t v, const SK_T *prep, int64_t stride,
                                     SK_T pos[3], SK_T nrm[3], SK_T tan[3])
{
    const sk_influences *in = &job->influences;
    const int joint_rule = job->normals.data && job->normal_rule == SK_NORMALS_JOINT;
    int64_t idx[SK_SLOTS];
    SK_T w[SK_SLOTS];
    SK_T m[16] = {0}, c[12] = {0}, total = 0;
    for (int64_t k0 = 0; k0 < in->k; k0 += SK_SLOTS) {
        int64_t n = in->k - k0 < SK_SLOTS ? in->k - k0 : SK_SLOTS;
        SK_FN(sk_load_slots)(in, v, k0, n, job->n_joints, idx, w);
        for (int64_t i = 0; i < n; ++i) {
            const SK_T wi = w[i];
            const SK_T *pj = prep + stride * idx[i];
            total += wi;
            for (int q = 0; q < 16; ++q) m[q] += wi * pj[q];
            if (joint_rule)
                for (int q = 0; q < 12; ++q) c[q] += wi * pj[16 + q];
        }
    }
    if (!(total > (SK_T)1e-6)) return 0;
    SK_T p[3];
    SK_FN(sk_load3)(p, &job->positions, v);
    SK_FN(sk_mul33t)(pos, m, 4, p);
    pos[0] += m[12];
    pos[1] += m[13];
    pos[2] += m[14];
    if (job->normals.data) {
        SK_T nn[3];
        SK_FN(sk_load3)(nn, &job->normals, v);
        if (joint_rule) {
            SK_FN(sk_mul33t)(nrm, c, 4, nn);
        } else { /* "blend": cofactor of the blended 3x3.  Read as row-major, m is A^T, whose
                  * cofactor cof(A)^T, packed row-major, is cof(A) column-major. */
            SK_T cb[9];
            SK_FN(sk_cofactor)(cb, m);
            SK_FN(sk_mul33t)(nrm, cb, 3, nn);
        }
        SK_FN(sk_normalize3)(nrm);
    }
    if (job->tangents.data) SK_FN(sk_tangent_of)(tan, job, v, m, 4, 1);
    return 1;
}

/* Whether any joint of this frame's DQS blocks has scale (the rigid fast path skips the scale
 * blend otherwise). */
static inline int SK_FN(sk_dqs_any_scale)(const SK_T *prep, int64_t stride, int64_t n_joints)
{
    int any_scale = 0;
    for (int64_t j = 0; j < n_joints; ++j) any_scale |= prep[stride * j + 20] != 0;
    return any_scale;
}

/* DQS of vertex v into pos / nrm / tan; 0 when the vertex is copied (weights summing to
 * <= 1e-6, or a zero blended real part).
 *
 * With `rigid` (joint 0's row-major 3x4 of the rigid part, joints `stride` apart) and `center`,
 * the rotation is the same but the position is CoR's (Le & Hodgins 2016) in DQS's two phases:
 * the blended scale moves the vertex and its center alike (v1 = Sb v, c1 = Sb c), then
 * pos = R (v1 - c1) + sum w_i Rigid_i(c1), with the raw weights as LBS uses them. */
static inline int SK_FN(sk_dqs_eval)(const SK_JOB *job, int64_t v, const SK_T *prep, int64_t stride,
                                     int any_scale, const SK_T *rigid, const SK_T center[3],
                                     SK_T pos[3], SK_T nrm[3], SK_T tan[3])
{
    const sk_influences *in = &job->influences;
    int64_t idx[SK_SLOTS];
    SK_T w[SK_SLOTS];
    SK_T total = 0, best = -1;
    int64_t pivot = 0;
    /* The pivot pass: largest weight, ties to the smallest joint index, zero weights skipped. */
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
    if (!(total > (SK_T)1e-6)) return 0;
    const SK_T *q0 = prep + stride * pivot;
    const SK_T inv_total = (SK_T)1 / total;
    SK_T b[8] = {0}, sb[12] = {0}, mr[12] = {0};
    for (int64_t k0 = 0; k0 < in->k; k0 += SK_SLOTS) {
        int64_t n = in->k - k0 < SK_SLOTS ? in->k - k0 : SK_SLOTS;
        if (in->k > SK_SLOTS) SK_FN(sk_load_slots)(in, v, k0, n, job->n_joints, idx, w);
        for (int64_t i = 0; i < n; ++i) {
            if (w[i] == 0) continue;
            const SK_T *pj = prep + stride * idx[i];
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
            if (rigid) {
                const SK_T *rj = rigid + stride * idx[i];
                for (int q = 0; q < 12; ++q) mr[q] += w[i] * rj[q];
            }
        }
    }
    SK_T n2 = b[0] * b[0] + b[1] * b[1] + b[2] * b[2] + b[3] * b[3];
    if (!(n2 > 0)) return 0;
    SK_T inv = (SK_T)1 / (SK_T)sqrt((double)n2);
    const SK_T x = b[0] * inv, y = b[1] * inv, z = b[2] * inv, s = b[3] * inv;
    /* rotation of the unit real part */
    SK_T rm[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * s), 2 * (x * z + y * s),
                  2 * (x * y + z * s), 1 - 2 * (x * x + z * z), 2 * (y * z - x * s),
                  2 * (x * z - y * s), 2 * (y * z + x * s), 1 - 2 * (x * x + y * y)};
    SK_T p[3], p1[3];
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
    if (rigid) {
        SK_T c1[3], d[3], lc[3];
        if (any_scale) {
            SK_FN(sk_mul33)(c1, sb, 4, center);
            c1[0] += sb[3];
            c1[1] += sb[7];
            c1[2] += sb[11];
        } else {
            c1[0] = center[0];
            c1[1] = center[1];
            c1[2] = center[2];
        }
        /* R (v1 - c1) + LBS(c1): relative to the center, so a far-away mesh loses no digits
         * to cancellation between R v1 and the translation. */
        d[0] = p1[0] - c1[0];
        d[1] = p1[1] - c1[1];
        d[2] = p1[2] - c1[2];
        SK_FN(sk_mul33)(lc, mr, 4, c1);
        SK_FN(sk_mul33)(pos, rm, 3, d);
        pos[0] += lc[0] + mr[3];
        pos[1] += lc[1] + mr[7];
        pos[2] += lc[2] + mr[11];
    } else {
        /* t = 2 (s d - dw r + r x d) of the unit dual quaternion */
        const SK_T dx = b[4] * inv, dy = b[5] * inv, dz = b[6] * inv, dw = b[7] * inv;
        SK_T t[3] = {2 * (s * dx - dw * x + (y * dz - z * dy)),
                     2 * (s * dy - dw * y + (z * dx - x * dz)),
                     2 * (s * dz - dw * z + (x * dy - y * dx))};
        SK_FN(sk_mul33)(pos, rm, 3, p1);
        pos[0] += t[0];
        pos[1] += t[1];
        pos[2] += t[2];
    }
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
        SK_FN(sk_mul33)(nrm, rm, 3, n1);
        SK_FN(sk_normalize3)(nrm);
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
        SK_FN(sk_tangent_of)(tan, job, v, m, 3, 0);
    }
    return 1;
}

/* Hands [begin, end) to the SIMD kernel of the path in use: `avx512` or `avx2` (NULL where the
 * build or the kernel has none; SK_WITH_AVX512 / SK_WITH_AVX2 of skin_simd.h).  0 when the
 * scalar path is in use or its kernel is NULL: the caller then runs its scalar loop. */
typedef void (*SK_FN(sk_range_fn))(const SK_JOB *job, int64_t begin, int64_t end);

static inline int SK_FN(sk_simd_run)(SK_FN(sk_range_fn) avx512, SK_FN(sk_range_fn) avx2,
                                     const SK_JOB *job, int64_t begin, int64_t end)
{
    sk_simd path = sk_simd_current();
    SK_FN(sk_range_fn) fn = path == SK_SIMD_AVX512 ? avx512 : path == SK_SIMD_AVX2 ? avx2 : NULL;
    if (!fn) return 0;
    fn(job, begin, end);
    return 1;
}
