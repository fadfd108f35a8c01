/* skin_common.template.h -- helpers shared by the skinning kernels, included once per float
 * type by each skin_*.c after defining SK_T (float or double) and SK_FN(name) (name##_f32 /
 * name##_f64).  Everything here is static inline: each kernel file gets its own copy. */

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

/* Write a transformed tangent (normalized 3x3 image) keeping the handedness w; m is row-major
 * with rows `stride` apart, or column-major with columns `stride` apart when `colmajor`. */
static inline void SK_FN(sk_store_tangent)(const SK_JOB *job, int64_t v, const SK_T *m, int stride,
                                           int colmajor)
{
    SK_T t[3], y[3];
    SK_T hand = SK_AT(job->tangents, SK_T, v, 3);
    SK_FN(sk_load3)(t, &job->tangents, v);
    if (colmajor)
        SK_FN(sk_mul33t)(y, m, stride, t);
    else
        SK_FN(sk_mul33)(y, m, stride, t);
    SK_FN(sk_normalize3)(y);
    SK_FN(sk_store3)(&job->out_tangents, v, y);
    SK_AT(job->out_tangents, SK_T, v, 3) = hand;
}
