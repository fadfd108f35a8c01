/* fuzz_kernels.c -- libFuzzer target over the skinning entry points of sk.h:
 * sk_validate_influences_*, sk_validate_rigid_indices, sk_lbs_prepare_*, sk_dqs_prepare_*,
 * sk_cor_prepare_*, sk_validate_centers_*, sk_validate_blend_*,
 * sk_rigid_*, sk_lbs_*, sk_dqs_*, sk_cor_*, sk_blend_*, sk_parallel_for and the SIMD dispatch (sk_simd_*).
 *
 * Every vertex stream gets its own layout (C or Fortran order, reversed axes, padding between
 * vertices as in an interleaved buffer), every index and weight dtype is drawn, K runs past the
 * kernels' 64-slot chunk, and outputs are sometimes the very inputs (the documented in-place
 * form).  Influences are validated first most of the time, but not always: sk.h promises that an
 * index which escaped validation is read as joint 0, never out of bounds.  Checks beyond memory
 * safety: inputs unmodified, padding of the outputs never written, vertices outside
 * [begin, end) never written, and the same bits whether [0, V) is done in one call, in two
 * ranges, or over two threads, and (float32 LBS) with the small palettes' table or without.
 *
 * Preconditions kept (sk.h): J >= 1 (the binding rejects J = 0), an output stream exactly when
 * its input is, aligned streams, `prepared` from the matching prepare call.
 */
#include "fuzz_common.h"

enum { MAX_V = 40, MAX_J = 12, MAX_K = 70 };

static const size_t index_size[] = {1, 2, 4, 4, 8};

static void store_index(void *p, sk_index_type t, int64_t j)
{
    switch (t) {
    case SK_INDEX_U8: *(uint8_t *)p = (uint8_t)j; break;
    case SK_INDEX_U16: *(uint16_t *)p = (uint16_t)j; break;
    case SK_INDEX_U32: *(uint32_t *)p = (uint32_t)j; break;
    case SK_INDEX_I32: *(int32_t *)p = (int32_t)j; break;
    default: *(int64_t *)p = j; break;
    }
}

static void store_weight(void *p, sk_weight_type t, int f64, double w)
{
    if (t != SK_WEIGHT_FLOAT && !(w >= 0)) w = 0; /* NaN to an integer is undefined */
    if (t == SK_WEIGHT_UNORM8)
        *(uint8_t *)p = (uint8_t)(w < 0 ? 0 : w > 1 ? 255 : w * 255.0);
    else if (t == SK_WEIGHT_UNORM16)
        *(uint16_t *)p = (uint16_t)(w < 0 ? 0 : w > 1 ? 65535 : w * 65535.0);
    else if (f64)
        *(double *)p = w;
    else
        *(float *)p = (float)w;
}

static sk_stream stream_of(const fz_strided *s)
{
    sk_stream st;
    st.data = s->base;
    st.row = s->row_stride;
    st.elem = s->col_stride;
    return st;
}

static const sk_stream absent = {NULL, 0, 0};

/* The job, for either precision (the two job structs have the same fields but distinct types;
 * dqs_sign is left NULL here, so that the float32 kernels compute their own table for K = 4
 * and the others test each slot). */
typedef struct job_any {
    int f64;
    sk_skin_job_f32 j32;
    sk_skin_job_f64 j64;
} job_any;

static void run_kernel(const job_any *job, int method, int64_t begin, int64_t end)
{
    if (job->f64) {
        if (method == 0) sk_rigid_f64(&job->j64, begin, end);
        else if (method == 1) sk_lbs_f64(&job->j64, begin, end);
        else if (method == 2) sk_dqs_f64(&job->j64, begin, end);
        else if (method == 3) sk_cor_f64(&job->j64, begin, end);
        else sk_blend_f64(&job->j64, begin, end);
    } else {
        if (method == 0) sk_rigid_f32(&job->j32, begin, end);
        else if (method == 1) sk_lbs_f32(&job->j32, begin, end);
        else if (method == 2) sk_dqs_f32(&job->j32, begin, end);
        else if (method == 3) sk_cor_f32(&job->j32, begin, end);
        else sk_blend_f32(&job->j32, begin, end);
    }
}

typedef struct par_ctx {
    const job_any *job;
    int method;
} par_ctx;

static void par_fn(void *ctx, int64_t begin, int64_t end)
{
    const par_ctx *c = (const par_ctx *)ctx;
    run_kernel(c->job, c->method, begin, end);
}

/* The three outputs of one run. */
typedef struct outs {
    fz_strided pos, nrm, tan;
} outs;

static void set_outputs(job_any *job, const outs *o, int has_n, int has_t)
{
    sk_stream p = stream_of(&o->pos), n = has_n ? stream_of(&o->nrm) : absent,
              t = has_t ? stream_of(&o->tan) : absent;
    job->j32.out_positions = job->j64.out_positions = p;
    job->j32.out_normals = job->j64.out_normals = n;
    job->j32.out_tangents = job->j64.out_tangents = t;
}

/* A fresh set of outputs with the same layouts as `like` (sentinel-filled). */
static outs outs_like(const outs *like)
{
    outs o = *like;
    o.pos.block = fz_alloc(like->pos.block.bytes);
    o.nrm.block = fz_alloc(like->nrm.block.bytes);
    o.tan.block = fz_alloc(like->tan.block.bytes);
    o.pos.base = (char *)o.pos.block.mem + (like->pos.base - (char *)like->pos.block.mem);
    o.nrm.base = (char *)o.nrm.block.mem + (like->nrm.base - (char *)like->nrm.block.mem);
    o.tan.base = (char *)o.tan.block.mem + (like->tan.base - (char *)like->tan.block.mem);
    return o;
}

static void outs_free(outs *o)
{
    fz_free(&o->pos.block);
    fz_free(&o->nrm.block);
    fz_free(&o->tan.block);
}

static int is_nan(const void *p, size_t item)
{
    if (item == sizeof(double)) {
        double x;
        memcpy(&x, p, sizeof x);
        return x != x;
    }
    float x;
    memcpy(&x, p, sizeof x);
    return x != x;
}

/* The same bytes, except that two NaNs are the same whatever their sign and payload.  A vertex's
 * bits do not depend on how [0, V) is split, but a NaN's sign does depend on operand order, and
 * the compiler may commute an addition differently in two inlined copies of a block's code (a
 * full block read in place; a partial block, or another layout, through stack copies).  Only
 * NaN inputs give NaN outputs. */
static int same_values(const fz_strided *a, const fz_strided *b)
{
    if (fz_same(&a->block, &b->block)) return 1;
    if (a->block.bytes != b->block.bytes) return 0;
    fz_block x = fz_snapshot(&a->block), y = fz_snapshot(&b->block);
    for (int64_t r = 0; r < a->rows; ++r)
        for (int64_t c = 0; c < a->cols; ++c) {
            size_t off = (size_t)((char *)fz_at(a, r, c) - (char *)a->block.mem);
            if (is_nan(x.mem + off, a->item) && is_nan(y.mem + off, a->item))
                memset(y.mem + off, 0, a->item), memset(x.mem + off, 0, a->item);
        }
    int same = fz_same(&x, &y);
    fz_free(&x);
    fz_free(&y);
    return same;
}

static int outs_same(const outs *a, const outs *b)
{
    return same_values(&a->pos, &b->pos) && same_values(&a->nrm, &b->nrm) &&
           same_values(&a->tan, &b->tan);
}

/* The elements of two strided arrays hold the same bytes (two NaNs: see same_values). */
static int same_elements(const fz_strided *a, const fz_strided *b)
{
    for (int64_t r = 0; r < a->rows; ++r)
        for (int64_t c = 0; c < a->cols; ++c) {
            const void *x = fz_at(a, r, c), *y = fz_at(b, r, c);
            if (memcmp(x, y, a->item) && !(is_nan(x, a->item) && is_nan(y, a->item))) return 0;
        }
    return 1;
}

/* The padding bytes of a strided array still equal those of `ref` (a snapshot of its block). */
static int gaps_equal(const fz_strided *s, const fz_block *ref)
{
    unsigned char *m = fz_element_mask(s);
    int ok = 1;
    for (size_t i = 0; i < s->block.bytes && ok; ++i)
        if (!m[i] && s->block.mem[i] != ref->mem[i]) ok = 0;
    free(m);
    return ok;
}

/* Rows [begin, end) of a strided output are the only ones written. */
static int rows_outside_untouched(const fz_strided *s, int64_t begin, int64_t end)
{
    for (int64_t r = 0; r < s->rows; ++r) {
        if (r >= begin && r < end) continue;
        for (int64_t c = 0; c < s->cols; ++c) {
            const unsigned char *p = (const unsigned char *)fz_at(s, r, c);
            for (size_t b = 0; b < s->item; ++b)
                if (p[b] != FZ_SENTINEL) return 0;
        }
    }
    return 1;
}

/* A strided array's elements, packed in C order into dst. */
static void pack(void *dst, const fz_strided *s)
{
    for (int64_t r = 0; r < s->rows; ++r)
        for (int64_t c = 0; c < s->cols; ++c)
            memcpy((char *)dst + (size_t)(r * s->cols + c) * s->item, fz_at(s, r, c), s->item);
}

/* Two packed float arrays hold the same values (two NaNs: see same_values). */
static int same_packed(const float *a, const float *b, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        if (memcmp(a + i, b + i, sizeof(float)) && !(a[i] != a[i] && b[i] != b[i])) return 0;
    return 1;
}

static int64_t load_index(const void *p, sk_index_type t)
{
    switch (t) {
    case SK_INDEX_U8: return *(const uint8_t *)p;
    case SK_INDEX_U16: return *(const uint16_t *)p;
    case SK_INDEX_U32: return *(const uint32_t *)p;
    case SK_INDEX_I32: return *(const int32_t *)p;
    default: return *(const int64_t *)p;
    }
}

static float load_weight(const void *p, sk_weight_type t)
{
    if (t == SK_WEIGHT_UNORM8) return *(const uint8_t *)p / 255.0f;
    if (t == SK_WEIGHT_UNORM16) return *(const uint16_t *)p / 65535.0f;
    return *(const float *)p;
}

/* float32 LBS's table (job->lbs_table) only serves the common layout (packed positions and
 * normals, K = 4 contiguous float weights and contiguous narrow indices), which the drawn
 * layouts and types seldom give all at once: the drawn values in that layout (each vertex's
 * first four slots, float weights, uint16 indices, one outside uint16 as 65535), skinned with
 * the table and with the rows. */
static void check_table_packed(const sk_skin_job_f32 *like, const fz_strided *pos,
                               const fz_strided *nrm, const fz_strided *idx,
                               sk_index_type itype, const fz_strided *wts,
                               sk_weight_type wtype, int64_t K, int64_t V)
{
    float p[MAX_V * 3], n[MAX_V * 3], w[MAX_V * 4], out[2][MAX_V * 3], nout[2][MAX_V * 3];
    uint16_t ix[MAX_V * 4];
    pack(p, pos);
    if (nrm) pack(n, nrm);
    for (int64_t v = 0; v < V; ++v)
        for (int64_t k = 0; k < 4; ++k) {
            const int64_t j = k < K ? load_index(fz_at(idx, v, k), itype) : 0;
            ix[4 * v + k] = (uint16_t)(j >= 0 && j <= 65535 ? j : 65535);
            w[4 * v + k] = k < K ? load_weight(fz_at(wts, v, k), wtype) : 0.0f;
        }
    for (int t = 0; t < 2; ++t) {
        sk_skin_job_f32 job = *like;
        job.positions = (sk_stream){p, 3 * sizeof(float), sizeof(float)};
        job.out_positions = (sk_stream){out[t], 3 * sizeof(float), sizeof(float)};
        job.normals = nrm ? (sk_stream){n, 3 * sizeof(float), sizeof(float)} : absent;
        job.out_normals = nrm ? (sk_stream){nout[t], 3 * sizeof(float), sizeof(float)} : absent;
        job.tangents = job.out_tangents = absent;
        job.influences = (sk_influences){{ix, 4 * sizeof(uint16_t), sizeof(uint16_t)},
                                         SK_INDEX_U16,
                                         {w, 4 * sizeof(float), sizeof(float)},
                                         SK_WEIGHT_FLOAT, 4};
        job.lbs_table = t == 0 ? like->lbs_table : NULL;
        sk_lbs_f32(&job, 0, V);
    }
    if (!same_packed(out[0], out[1], 3 * V) || (nrm && !same_packed(nout[0], nout[1], 3 * V)))
        FZ_FAIL("the table and the rows differ (packed layout)");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    /* Every SIMD path this build and CPU have (and a refused one), so AVX2 / AVX-512 code is
     * fuzzed as much as the scalar code. */
    {
        sk_simd best = sk_simd_best(), before = sk_simd_current();
        int pick = (int)fz_range(&in, 0, 3);
        sk_result sr = sk_simd_select((sk_simd)pick);
        if (pick <= (int)best) {
            if (sr != SK_OK || sk_simd_current() != (sk_simd)pick) FZ_FAIL("simd_select(%d) failed", pick);
        } else if (sr != SK_ERR_BAD_ARGUMENT || sk_simd_current() != before) {
            FZ_FAIL("simd_select(%d) beyond the best path %d: %d", pick, (int)best, (int)sr);
        }
        if (!sk_simd_name((sk_simd)pick)) FZ_FAIL("simd_name(%d) is NULL", pick);
    }
    int f64 = fz_bool(&in);
    size_t item = f64 ? sizeof(double) : sizeof(float);
    int method = (int)fz_range(&in, 0, 4); /* rigid, lbs, dqs, cor, blend */
    int64_t V = fz_range(&in, 0, MAX_V), J = fz_range(&in, 1, MAX_J);
    int64_t K = (fz_bits(&in, 1) & 7) == 0 ? fz_range(&in, 1, MAX_K) : fz_range(&in, 1, 6);
    sk_index_type itype = (sk_index_type)fz_range(&in, 0, 4);
    sk_weight_type wtype = (sk_weight_type)fz_range(&in, 0, 2);
    int has_n = fz_bool(&in), has_t = fz_bool(&in);
    int in_place = fz_bool(&in); /* out_positions is positions (and the normals, tangents) */
    int skip_validation = (fz_bits(&in, 1) & 7) == 0;
    int normal_rule = fz_bool(&in);
    int use_pivots = fz_bool(&in);

    /* vertex streams */
    fz_strided pos = fz_layout(&in, V, 3, item), nrm = fz_layout(&in, V, 3, item),
               tan = fz_layout(&in, V, 4, item);
    fz_fill(&in, &pos, 1);
    fz_fill(&in, &nrm, 1);
    fz_fill(&in, &tan, 1);
    /* influences */
    int64_t kcols = method == 0 ? 1 : K;
    fz_strided idx = fz_layout(&in, V, kcols, index_size[itype]);
    size_t wsize = wtype == SK_WEIGHT_UNORM8 ? 1 : wtype == SK_WEIGHT_UNORM16 ? 2 : item;
    fz_strided wts = fz_layout(&in, V, K, wsize);
    int wild = (fz_bits(&in, 1) & 3) == 0;
    for (int64_t v = 0; v < V; ++v) {
        for (int64_t k = 0; k < kcols; ++k) {
            int64_t j = fz_range(&in, 0, J - 1);
            if (wild) {
                static const int64_t edge[] = {-1, -2, 255, 256, 65535, 65536, INT32_MAX,
                                               (int64_t)UINT32_MAX, INT64_MIN, INT64_MAX};
                unsigned e = (unsigned)fz_bits(&in, 1);
                if (e < 10) j = edge[e];
                else if (e < 40) j = J + (e & 3);
            }
            store_index(fz_at(&idx, v, k), itype, j);
        }
        for (int64_t k = 0; k < K; ++k) {
            unsigned c = (unsigned)fz_bits(&in, 1);
            double w = c < 64 ? 0.0 : c < 240 ? (double)(c - 64) / 176.0 : fz_double(&in);
            store_weight(fz_at(&wts, v, k), wtype, f64, w);
        }
    }
    /* joints */
    fz_block palette = fz_alloc(item * 12 * (size_t)J);
    int palette_kind = (int)fz_range(&in, 0, 3);
    if (palette_kind == 0) { /* anything, NaN and inf included */
        fz_fill_affine(&in, palette.mem, J, 3, f64);
    } else if (palette_kind == 1) { /* finite, scale and shear likely */
        for (int64_t i = 0; i < 12 * J; ++i) {
            double v = (double)(int8_t)fz_bits(&in, 1) / 8.0;
            if (f64) ((double *)palette.mem)[i] = v;
            else ((float *)palette.mem)[i] = (float)v;
        }
    } else { /* rigid: rotations about z */
        for (int64_t j = 0; j < J; ++j) {
            double a = (double)(int8_t)fz_bits(&in, 1) * 0.05, c = cos(a), s = sin(a);
            double m[12] = {c, -s, 0, (double)(int8_t)fz_bits(&in, 1), s, c, 0,
                            (double)(int8_t)fz_bits(&in, 1), 0, 0, 1, (double)(int8_t)fz_bits(&in, 1)};
            for (int i = 0; i < 12; ++i) {
                if (f64) ((double *)palette.mem)[12 * j + i] = m[i];
                else ((float *)palette.mem)[12 * j + i] = (float)m[i];
            }
        }
    }
    fz_block pivots = fz_alloc(item * 3 * (size_t)J);
    fz_fill_flat(&in, pivots.mem, 3 * J, f64, 1);
    /* CoR centers and blend amounts: any values (NaN, inf, outside [0, 1]) reach the kernels when
     * validation is skipped; a center row's NaNs only pick the LBS fallback, never an address */
    fz_strided ctr = fz_layout(&in, V, 3, item), bln = fz_layout(&in, V, 1, item);
    fz_fill(&in, &ctr, 1);
    fz_fill(&in, &bln, 1);
    int64_t split = V ? fz_range(&in, 0, V) : 0;
    int threads = (fz_bits(&in, 1) & 15) == 0 ? 2 : 1;

    fz_block pos0 = fz_snapshot(&pos.block), nrm0 = fz_snapshot(&nrm.block),
             tan0 = fz_snapshot(&tan.block), idx0 = fz_snapshot(&idx.block),
             wts0 = fz_snapshot(&wts.block), pal0 = fz_snapshot(&palette),
             piv0 = fz_snapshot(&pivots), ctr0 = fz_snapshot(&ctr.block),
             bln0 = fz_snapshot(&bln.block);

    /* validation: read-only */
    sk_influences infl;
    infl.indices = stream_of(&idx);
    infl.index_type = itype;
    infl.weights = stream_of(&wts);
    infl.weight_type = wtype;
    infl.k = K;
    int64_t bad = -1;
    sk_result vr;
    if (method == 0) {
        sk_stream rs = stream_of(&idx);
        vr = sk_validate_rigid_indices(&rs, itype, V, J, &bad);
    } else {
        vr = f64 ? sk_validate_influences_f64(&infl, V, J, &bad)
                 : sk_validate_influences_f32(&infl, V, J, &bad);
    }
    if (vr == SK_OK && method >= 3) {
        sk_stream cs = stream_of(method == 3 ? &ctr : &bln);
        if (method == 3)
            vr = f64 ? sk_validate_centers_f64(&cs, V, &bad) : sk_validate_centers_f32(&cs, V, &bad);
        else
            vr = f64 ? sk_validate_blend_f64(&cs, V, &bad) : sk_validate_blend_f32(&cs, V, &bad);
        if (!fz_same(&ctr.block, &ctr0) || !fz_same(&bln.block, &bln0))
            FZ_FAIL("validation modified the centers or blend amounts");
    }
    if (vr != SK_OK && (bad < 0 || bad >= V)) FZ_FAIL("validation: bad vertex %lld", (long long)bad);
    if (!fz_same(&idx.block, &idx0) || !fz_same(&wts.block, &wts0))
        FZ_FAIL("validation modified the influences");

    /* prepare */
    size_t psize = method >= 3   ? SK_COR_PREPARED_SIZE
                   : method == 2 ? SK_DQS_PREPARED_SIZE : SK_LBS_PREPARED_SIZE;
    fz_block prepared = fz_alloc(item * psize * (size_t)J);
    sk_result pr;
    const void *pv = use_pivots ? pivots.mem : NULL;
    if (method >= 3)
        pr = f64 ? sk_cor_prepare_f64((double *)prepared.mem, (double *)palette.mem, pv, J, &bad)
                 : sk_cor_prepare_f32((float *)prepared.mem, (float *)palette.mem, pv, J, &bad);
    else if (method == 2)
        pr = f64 ? sk_dqs_prepare_f64((double *)prepared.mem, (double *)palette.mem, pv, J, &bad)
                 : sk_dqs_prepare_f32((float *)prepared.mem, (float *)palette.mem, pv, J, &bad);
    else
        pr = f64 ? sk_lbs_prepare_f64((double *)prepared.mem, (double *)palette.mem, J, &bad)
                 : sk_lbs_prepare_f32((float *)prepared.mem, (float *)palette.mem, J, &bad);
    if (!fz_same(&palette, &pal0) || !fz_same(&pivots, &piv0)) FZ_FAIL("prepare modified an input");
    if (pr != SK_OK && (bad < 0 || bad >= J)) FZ_FAIL("prepare: bad joint %lld", (long long)bad);
    if (pr == SK_ERR_NEEDS_PIVOTS && use_pivots) FZ_FAIL("prepare wants pivots it was given");

    if (pr == SK_OK && (vr == SK_OK || skip_validation)) {
        job_any job;
        memset(&job, 0, sizeof job);
        job.f64 = f64;
        sk_stream ps = stream_of(&pos), ns = has_n ? stream_of(&nrm) : absent,
                  ts = has_t ? stream_of(&tan) : absent;
        job.j32.positions = job.j64.positions = ps;
        job.j32.normals = job.j64.normals = ns;
        job.j32.tangents = job.j64.tangents = ts;
        job.j32.influences = job.j64.influences = infl;
        job.j32.rigid_indices = job.j64.rigid_indices = stream_of(&idx);
        job.j32.rigid_index_type = job.j64.rigid_index_type = itype;
        job.j32.prepared = (const float *)prepared.mem;
        job.j64.prepared = (const double *)prepared.mem;
        job.j32.n_joints = job.j64.n_joints = J;
        job.j32.normal_rule = job.j64.normal_rule = (sk_normal_rule)normal_rule;
        job.j32.centers = job.j64.centers = stream_of(&ctr);
        job.j32.blend = job.j64.blend = stream_of(&bln);
        /* float32 LBS: the small palettes' table (made where the path in use reads it,
         * AVX-512), compared with the rows below */
        _Alignas(64) float table[12 * SK_LBS_TABLE_MAX_J];
        if (!f64 && method == 1 && sk_lbs_table_f32(table, job.j32.prepared, J))
            job.j32.lbs_table = table;
        fz_block prep0 = fz_snapshot(&prepared);

        outs o1;
        o1.pos = fz_layout(&in, V, 3, item);
        o1.nrm = fz_layout(&in, V, 3, item);
        o1.tan = fz_layout(&in, V, 4, item);
        outs o2 = outs_like(&o1), o3 = outs_like(&o1);

        if (in_place) {
            /* out = the inputs themselves: compare with a run into separate outputs. */
            set_outputs(&job, &o1, has_n, has_t);
            run_kernel(&job, method, 0, V);
            job.j32.out_positions = job.j64.out_positions = ps;
            job.j32.out_normals = job.j64.out_normals = ns;
            job.j32.out_tangents = job.j64.out_tangents = ts;
            run_kernel(&job, method, 0, V);
            if (!same_elements(&pos, &o1.pos) || (has_n && !same_elements(&nrm, &o1.nrm)) ||
                (has_t && !same_elements(&tan, &o1.tan)))
                FZ_FAIL("in place and into separate outputs differ");
            if (!gaps_equal(&pos, &pos0) || !gaps_equal(&nrm, &nrm0) || !gaps_equal(&tan, &tan0))
                FZ_FAIL("in place wrote between the elements of a stream");
            if (!has_n && !fz_same(&nrm.block, &nrm0)) FZ_FAIL("absent normals written");
            if (!has_t && !fz_same(&tan.block, &tan0)) FZ_FAIL("absent tangents written");
        } else {
            /* one call over [0, V) */
            set_outputs(&job, &o1, has_n, has_t);
            run_kernel(&job, method, 0, V);
            if (!fz_gaps_untouched(&o1.pos) || !fz_gaps_untouched(&o1.nrm) ||
                !fz_gaps_untouched(&o1.tan))
                FZ_FAIL("a kernel wrote between the elements of an output");
            if (!has_n && !fz_untouched(&o1.nrm.block)) FZ_FAIL("absent normals written");
            if (!has_t && !fz_untouched(&o1.tan.block)) FZ_FAIL("absent tangents written");
            if (job.j32.lbs_table)
                check_table_packed(&job.j32, &pos, has_n ? &nrm : NULL, &idx, itype, &wts, wtype,
                                   K, V);
            if (job.j32.lbs_table) { /* the rows instead of the table: the same bits */
                outs o4 = outs_like(&o1);
                job.j32.lbs_table = NULL;
                set_outputs(&job, &o4, has_n, has_t);
                run_kernel(&job, method, 0, V);
                job.j32.lbs_table = table;
                if (!outs_same(&o1, &o4)) FZ_FAIL("the table and the rows differ");
                outs_free(&o4);
            }
            /* a partial range writes only its rows */
            set_outputs(&job, &o2, has_n, has_t);
            run_kernel(&job, method, split, V);
            if (!rows_outside_untouched(&o2.pos, split, V) ||
                (has_n && !rows_outside_untouched(&o2.nrm, split, V)) ||
                (has_t && !rows_outside_untouched(&o2.tan, split, V)))
                FZ_FAIL("kernel over [%lld, %lld) wrote outside it", (long long)split, (long long)V);
            run_kernel(&job, method, 0, split);
            if (!outs_same(&o1, &o2)) FZ_FAIL("two ranges differ from one call");
            if (threads > 1) {
                par_ctx ctx = {&job, method};
                set_outputs(&job, &o3, has_n, has_t);
                sk_parallel_for(threads, V, 1 + (int64_t)(fz_bits(&in, 1) & 7), par_fn, &ctx);
                if (!outs_same(&o1, &o3)) FZ_FAIL("threads change the bits");
            }
            if (!fz_same(&pos.block, &pos0) || !fz_same(&nrm.block, &nrm0) ||
                !fz_same(&tan.block, &tan0))
                FZ_FAIL("a kernel modified its vertex inputs");
        }
        if (!fz_same(&idx.block, &idx0) || !fz_same(&wts.block, &wts0) ||
            !fz_same(&prepared, &prep0) || !fz_same(&ctr.block, &ctr0) ||
            !fz_same(&bln.block, &bln0))
            FZ_FAIL("a kernel modified the influences, the prepared palette, centers or blend");
        outs_free(&o1);
        outs_free(&o2);
        outs_free(&o3);
        fz_free(&prep0);
    }

    fz_free(&pos.block); fz_free(&nrm.block); fz_free(&tan.block);
    fz_free(&idx.block); fz_free(&wts.block); fz_free(&palette); fz_free(&pivots);
    fz_free(&prepared);
    fz_free(&pos0); fz_free(&nrm0); fz_free(&tan0); fz_free(&idx0); fz_free(&wts0);
    fz_free(&pal0); fz_free(&piv0);
    fz_free(&ctr.block); fz_free(&bln.block); fz_free(&ctr0); fz_free(&bln0);
    return 0;
}
