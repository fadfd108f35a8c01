/* skin_cor.template.c -- CoR / blend preparation, input checks and kernels; included by
 * skin_cor.c once per float type (SK_T, SK_FN, SK_JOB defined).  Layout: sk.h. */

sk_result SK_FN(sk_cor_prepare)(SK_T *prepared, const SK_T *palette, const SK_T *pivots,
                                int64_t n_joints, int64_t *bad)
{
    /* DQS's checks (finite palette and pivots, pivots for a scaled joint) cover LBS's; all of
     * them first, so that a failure leaves `prepared` untouched. */
    for (int64_t j = 0; j < n_joints; ++j) {
        SK_T tmp[SK_DQS_PREPARED_SIZE];
        sk_result r = SK_FN(sk_dqs_prepare)(tmp, palette + 12 * j, pivots ? pivots + 3 * j : NULL,
                                            1, NULL);
        if (r != SK_OK) {
            if (bad) *bad = j;
            return r;
        }
    }
    for (int64_t j = 0; j < n_joints; ++j) {
        SK_T *p = prepared + SK_COR_PREPARED_SIZE * j;
        const SK_T *kj = palette + 12 * j;
        /* the very blocks sk_lbs / sk_dqs use, so the NaN-center fallback is their LBS and
         * blend's ends are their LBS and DQS */
        SK_FN(sk_lbs_prepare)(p + SK_COR_LBS, kj, 1, NULL);
        SK_FN(sk_dqs_prepare)(p + SK_COR_DQS, kj, pivots ? pivots + 3 * j : NULL, 1, NULL);
        double k[12], c[3] = {0, 0, 0}, dq[SK_DQS_PREPARED_SIZE], rigid[12];
        for (int i = 0; i < 12; ++i) k[i] = (double)kj[i];
        if (pivots)
            for (int i = 0; i < 3; ++i) c[i] = (double)pivots[3 * j + i];
        sk_dqs_prepare_f64(dq, k, pivots ? c : NULL, 1, NULL);
        cor_rigid_part(rigid, k, dq);
        for (int i = 0; i < 12; ++i) p[SK_COR_RIGID + i] = (SK_T)rigid[i];
        for (int i = SK_COR_RIGID + 12; i < SK_COR_PREPARED_SIZE; ++i) p[i] = 0;
    }
    return SK_OK;
}

sk_result SK_FN(sk_validate_centers)(const sk_stream *centers, int64_t n_vertices, int64_t *bad)
{
    for (int64_t v = 0; v < n_vertices; ++v) {
        int nans = 0, finite = 0;
        for (int i = 0; i < 3; ++i) {
            double x = (double)SK_AT(*centers, SK_T, v, i);
            nans += isnan(x) != 0;
            finite += isfinite(x) != 0;
        }
        if (!(nans == 3 || finite == 3)) {
            if (bad) *bad = v;
            return SK_ERR_NOT_FINITE;
        }
    }
    return SK_OK;
}

sk_result SK_FN(sk_validate_blend)(const sk_stream *blend, int64_t n_vertices, int64_t *bad)
{
    if (blend->row == 0 && n_vertices > 1) n_vertices = 1; /* one value for every vertex */
    for (int64_t v = 0; v < n_vertices; ++v) {
        SK_T b = SK_AT(*blend, SK_T, v, 0);
        if (!(b >= 0 && b <= 1)) {
            if (bad) *bad = v;
            return SK_ERR_BAD_ARGUMENT;
        }
    }
    return SK_OK;
}

/* Hands a CoR range of a rigid palette to the SIMD kernels (skin_simd.template.c) when the
 * CPU's path has one; tangents stay scalar, as for DQS.  0 when the call is not theirs. */
static int SK_FN(cor_simd)(const SK_JOB *job, int64_t begin, int64_t end)
{
    if (job->tangents.data) return 0;
    return SK_FN(sk_simd_run)(SK_WITH_AVX512(SK_FN(sk_cor_avx512)),
                              SK_WITH_AVX2(SK_FN(sk_cor_avx2)), job, begin, end);
}

void SK_FN(sk_cor)(const SK_JOB *job, int64_t begin, int64_t end)
{
    if (begin >= end) return;
    const SK_T *prep = job->prepared;
    const int any_scale =
        SK_FN(sk_dqs_any_scale)(prep + SK_COR_DQS, SK_COR_PREPARED_SIZE, job->n_joints);
    /* the SIMD kernels take rigid palettes only: a scaled one needs DQS's two phases */
    if (!any_scale && SK_FN(cor_simd)(job, begin, end)) return;
    for (int64_t v = begin; v < end; ++v) {
        SK_T c[3], pos[3], nrm[3], tan[3];
        SK_FN(sk_load3)(c, &job->centers, v);
        /* validated rows are all NaN (no center: the documented LBS fallback) or all finite */
        int done = isnan((double)c[0])
                       ? SK_FN(sk_lbs_eval)(job, v, prep + SK_COR_LBS, SK_COR_PREPARED_SIZE, pos,
                                            nrm, tan)
                       : SK_FN(sk_dqs_eval)(job, v, prep + SK_COR_DQS, SK_COR_PREPARED_SIZE,
                                            any_scale, prep + SK_COR_RIGID, c, pos, nrm, tan);
        if (done)
            SK_FN(sk_store_vertex)(job, v, pos, nrm, tan);
        else
            SK_FN(sk_copy_vertex)(job, v);
    }
}

/* (1 - b) x + b y, normalized when `unit` (normals, tangents). */
static inline void SK_FN(cor_mix3)(SK_T out[3], SK_T a, const SK_T x[3], SK_T b, const SK_T y[3],
                                   int unit)
{
    for (int i = 0; i < 3; ++i) out[i] = a * x[i] + b * y[i];
    if (unit) SK_FN(sk_normalize3)(out);
}

/* LBS's test: whether vertex v's weights sum to more than 1e-6 (summed as sk_lbs_eval sums). */
static int SK_FN(blend_weighted)(const SK_JOB *job, int64_t v)
{
    const sk_influences *in = &job->influences;
    int64_t idx[SK_SLOTS];
    SK_T w[SK_SLOTS], total = 0;
    for (int64_t k0 = 0; k0 < in->k; k0 += SK_SLOTS) {
        int64_t n = in->k - k0 < SK_SLOTS ? in->k - k0 : SK_SLOTS;
        SK_FN(sk_load_slots)(in, v, k0, n, job->n_joints, idx, w);
        for (int64_t i = 0; i < n; ++i) total += w[i];
    }
    return total > (SK_T)1e-6;
}

/* A job over vertices [v0, ...) seen from 0: its per-vertex input streams start at v0. */
static void SK_FN(blend_shift)(SK_JOB *sub, const SK_JOB *job, int64_t v0)
{
    *sub = *job;
    sub->stream = 0; /* its outputs are stack buffers, read right after */
    sub->positions.data = (char *)job->positions.data + v0 * job->positions.row;
    if (job->normals.data)
        sub->normals.data = (char *)job->normals.data + v0 * job->normals.row;
    sub->influences.indices.data = (char *)job->influences.indices.data + v0 * job->influences.indices.row;
    sub->influences.weights.data = (char *)job->influences.weights.data + v0 * job->influences.weights.row;
}

/* Whether a blend call goes through the LBS and DQS kernels (their SIMD paths) rather than the
 * per-vertex scalar code: a SIMD path, no tangents, and at most SK_BLEND_SIMD_MAX_J joints.
 * Depends on the job alone, never on the range, so threads and splits keep the bits. */
static int SK_FN(blend_simd)(const SK_JOB *job)
{
    return sk_simd_current() != SK_SIMD_SCALAR && !job->tangents.data &&
           job->n_joints <= SK_BLEND_SIMD_MAX_J;
}

/* Blend through the LBS and DQS kernels (their SIMD paths): SK_BLEND_CHUNK vertices at a time
 * into packed stack buffers (24 KB of float32, 48 KB of float64: each kernel call's set-up,
 * about 0.3 us, costs 5 ns per vertex at 64 vertices), then mixed as the scalar code mixes.
 * 0 when this call is not for it. */
#define SK_BLEND_CHUNK 512
static int SK_FN(blend_kernels)(const SK_JOB *job, int64_t begin, int64_t end)
{
    if (!SK_FN(blend_simd)(job)) return 0;
    const int64_t J = job->n_joints;
    SK_T *tables = malloc(sizeof(SK_T) * (size_t)J * (SK_LBS_PREPARED_SIZE + SK_DQS_PREPARED_SIZE));
    if (!tables) return 0;
    SK_T *lt = tables, *dt = tables + J * SK_LBS_PREPARED_SIZE;
    for (int64_t j = 0; j < J; ++j) {
        const SK_T *p = (const SK_T *)job->prepared + SK_COR_PREPARED_SIZE * j;
        for (int i = 0; i < SK_LBS_PREPARED_SIZE; ++i) lt[SK_LBS_PREPARED_SIZE * j + i] = p[SK_COR_LBS + i];
        for (int i = 0; i < SK_DQS_PREPARED_SIZE; ++i) dt[SK_DQS_PREPARED_SIZE * j + i] = p[SK_COR_DQS + i];
    }
    const int normals = job->normals.data != NULL;
    SK_T pl[3 * SK_BLEND_CHUNK], nl[3 * SK_BLEND_CHUNK], pd[3 * SK_BLEND_CHUNK], nd[3 * SK_BLEND_CHUNK];
    const sk_stream none = {NULL, 0, 0};
    for (int64_t v0 = begin; v0 < end; v0 += SK_BLEND_CHUNK) {
        const int64_t n = end - v0 < SK_BLEND_CHUNK ? end - v0 : SK_BLEND_CHUNK;
        SK_JOB sub;
        SK_FN(blend_shift)(&sub, job, v0);
        sub.prepared = lt;
        const sk_stream packed = {.data = pl, .row = 3 * sizeof(SK_T), .elem = sizeof(SK_T)};
        sub.out_positions = packed;
        sub.out_normals = none;
        if (normals) {
            sub.out_normals = packed;
            sub.out_normals.data = nl;
        }
        SK_FN(sk_lbs)(&sub, 0, n);
        sub.prepared = dt;
        sub.out_positions.data = pd;
        if (normals) sub.out_normals.data = nd;
        SK_FN(sk_dqs)(&sub, 0, n);
        for (int64_t i = 0; i < n; ++i) {
            const int64_t v = v0 + i;
            if (!SK_FN(blend_weighted)(job, v)) { /* LBS copies it: so does the blend */
                SK_FN(sk_copy_vertex)(job, v);
                continue;
            }
            /* a vertex DQS copies has the input as its DQS end, as in the scalar code */
            const SK_T b = SK_AT(job->blend, SK_T, v, 0), a = 1 - b;
            SK_T pos[3], nrm[3] = {0, 0, 0};
            SK_FN(cor_mix3)(pos, a, pl + 3 * i, b, pd + 3 * i, 0);
            if (normals) SK_FN(cor_mix3)(nrm, a, nl + 3 * i, b, nd + 3 * i, 1);
            SK_FN(sk_store_vertex)(job, v, pos, nrm, NULL);
        }
    }
    free(tables);
    return 1;
}

void SK_FN(sk_blend)(const SK_JOB *job, int64_t begin, int64_t end)
{
    if (begin >= end || SK_FN(blend_kernels)(job, begin, end)) return;
    const SK_T *prep = job->prepared;
    const int any_scale =
        SK_FN(sk_dqs_any_scale)(prep + SK_COR_DQS, SK_COR_PREPARED_SIZE, job->n_joints);
    for (int64_t v = begin; v < end; ++v) {
        SK_T pl[3], nl[3], tl[3], pd[3], nd[3], td[3], pos[3], nrm[3], tan[3];
        if (!SK_FN(sk_lbs_eval)(job, v, prep + SK_COR_LBS, SK_COR_PREPARED_SIZE, pl, nl, tl)) {
            SK_FN(sk_copy_vertex)(job, v);
            continue;
        }
        if (!SK_FN(sk_dqs_eval)(job, v, prep + SK_COR_DQS, SK_COR_PREPARED_SIZE, any_scale, NULL,
                                NULL, pd, nd, td)) {
            /* DQS copies this vertex (a zero blended rotation): its end of the blend is the
             * input */
            SK_FN(sk_load3)(pd, &job->positions, v);
            if (job->normals.data) SK_FN(sk_load3)(nd, &job->normals, v);
            if (job->tangents.data) SK_FN(sk_load3)(td, &job->tangents, v);
        }
        /* b = 0 gives LBS's bits and b = 1 DQS's position bits: 1 * x + 0 * y is exact */
        const SK_T b = SK_AT(job->blend, SK_T, v, 0), a = 1 - b;
        SK_FN(cor_mix3)(pos, a, pl, b, pd, 0);
        if (job->normals.data) SK_FN(cor_mix3)(nrm, a, nl, b, nd, 1);
        if (job->tangents.data) SK_FN(cor_mix3)(tan, a, tl, b, td, 1);
        SK_FN(sk_store_vertex)(job, v, pos, nrm, tan);
    }
}
