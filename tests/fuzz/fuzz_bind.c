/* fuzz_bind.c -- libFuzzer target over the binders of sk.h: sk_bind_nearest_*,
 * sk_bind_proximity_*, sk_bind_sphere_radii_*, sk_bind_volume_spheres_*, sk_bind_projection_*,
 * sk_bind_height_bands_*, sk_bind_envelope_*, sk_envelope_factor, sk_bind_scratch_size.
 *
 * Random bones (forests in any joint order, 1 to 3 segments per bone, zero-length ones
 * included), vertices in any strided layout with edge values, every option in and out of range.
 * Checks beyond memory safety: an error code leaves every output untouched (validation happens
 * before anything is written); on success every index lies in [0, J), a zero-weight slot holds
 * index 0, weights are finite and >= 0, and the rows of the normalizing binders sum to 1; the
 * vertices are not modified.
 *
 * Preconditions kept (sk.h): the sk_bones arrays are consistent (seg_start increasing from 0,
 * every bone at least one segment), parents in [-1, J) and acyclic (a validated Skeleton),
 * joints and segment ends finite (bind positions of a validated Skeleton), scratch of
 * sk_bind_scratch_size(k) bytes, chain entries in [0, J).
 */
#include "fuzz_common.h"

enum { MAX_V = 48, MAX_J = 12, MAX_K = 8 };

typedef struct bones_mem {
    fz_block joints, parents, seg_start, seg_end;
    sk_bones b;
} bones_mem;

static double small(fz_in *in) { return (double)(int8_t)fz_bits(in, 1) / 8.0; }

static bones_mem make_bones(fz_in *in, int64_t J)
{
    bones_mem m;
    m.joints = fz_alloc(sizeof(double) * 3 * (size_t)J);
    m.parents = fz_alloc(sizeof(int64_t) * (size_t)J);
    m.seg_start = fz_alloc(sizeof(int64_t) * (size_t)(J + 1));
    double *joints = (double *)m.joints.mem;
    int64_t *parents = (int64_t *)m.parents.mem, *start = (int64_t *)m.seg_start.mem;
    int shared = fz_bool(in); /* joints on top of each other: exact ties */
    for (int64_t j = 0; j < 3 * J; ++j) joints[j] = shared ? (double)(fz_bits(in, 1) & 1) : small(in);
    /* a forest built parents-first, then relabelled by a rotation so the order is free */
    int64_t rot = fz_range(in, 0, J - 1);
    for (int64_t j = 0; j < J; ++j) {
        int64_t sorted_parent = j == 0 ? -1 : fz_range(in, -1, j - 1);
        parents[(j + rot) % J] = sorted_parent < 0 ? -1 : (sorted_parent + rot) % J;
    }
    start[0] = 0;
    for (int64_t j = 0; j < J; ++j) start[j + 1] = start[j] + fz_range(in, 1, 3);
    int64_t S = start[J];
    m.seg_end = fz_alloc(sizeof(double) * 3 * (size_t)S);
    double *ends = (double *)m.seg_end.mem;
    for (int64_t s = 0; s < S; ++s) {
        int64_t j = 0;
        while (start[j + 1] <= s) ++j;
        int zero_length = (fz_bits(in, 1) & 3) == 0;
        for (int c = 0; c < 3; ++c) ends[3 * s + c] = zero_length ? joints[3 * j + c] : small(in);
    }
    m.b.joints = joints;
    m.b.parents = parents;
    m.b.seg_start = start;
    m.b.seg_end = ends;
    m.b.n_joints = J;
    return m;
}

static void free_bones(bones_mem *m)
{
    fz_free(&m->joints);
    fz_free(&m->parents);
    fz_free(&m->seg_start);
    fz_free(&m->seg_end);
}

static double weight_at(const fz_block *w, int f64, int64_t i)
{
    return f64 ? ((const double *)w->mem)[i] : (double)((const float *)w->mem)[i];
}

/* The influences a binder wrote: indices in [0, J), zero-weight slots at index 0, weights finite
 * and >= 0, rows summing to 1 when `normalized` (a row may be all zero when `may_be_zero`). */
static void check_influences(const fz_block *idx, const fz_block *w, int f64, int64_t V, int64_t K,
                             int64_t J, int normalized, int may_be_zero, const char *what)
{
    const int32_t *ip = (const int32_t *)idx->mem;
    for (int64_t v = 0; v < V; ++v) {
        double sum = 0.0;
        for (int64_t k = 0; k < K; ++k) {
            double wk = weight_at(w, f64, v * K + k);
            int32_t j = ip[v * K + k];
            if (!isfinite(wk) || wk < 0) FZ_FAIL("%s: vertex %lld slot %lld weight %g", what, (long long)v, (long long)k, wk);
            if (j < 0 || j >= J) FZ_FAIL("%s: vertex %lld slot %lld index %d outside [0, %lld)", what, (long long)v, (long long)k, (int)j, (long long)J);
            if (wk == 0 && j != 0) FZ_FAIL("%s: zero-weight slot with index %d", what, (int)j);
            sum += wk;
        }
        double tol = f64 ? 1e-9 : 1e-5;
        if (normalized && fabs(sum - 1.0) > tol && !(may_be_zero && sum == 0.0))
            FZ_FAIL("%s: vertex %lld weights sum to %.17g", what, (long long)v, sum);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    int which = (int)fz_range(&in, 0, 7);
    int f64 = fz_bool(&in);
    size_t item = f64 ? sizeof(double) : sizeof(float);
    int64_t V = fz_range(&in, 0, MAX_V), J = fz_range(&in, 1, MAX_J);
    int64_t K = fz_range(&in, 0, MAX_K); /* 0: an invalid k for proximity / envelope */
    bones_mem bm = make_bones(&in, J);
    fz_strided vert = fz_layout(&in, V, 3, item);
    int edge_vertices = (fz_bits(&in, 1) & 3) == 0;
    for (int64_t v = 0; v < V; ++v)
        for (int c = 0; c < 3; ++c) {
            double x = edge_vertices ? fz_mostly_finite(&in) : small(&in);
            if (f64) *(double *)fz_at(&vert, v, c) = x;
            else *(float *)fz_at(&vert, v, c) = (float)x;
        }
    fz_block vert0 = fz_snapshot(&vert.block);
    int vertices_finite = 1, vertices_in_range = 1; /* in range: |x| <= SK_BIND_MAX_COORD */
    for (int64_t v = 0; v < V; ++v)
        for (int c = 0; c < 3; ++c) {
            double x = f64 ? *(double *)fz_at(&vert, v, c) : *(float *)fz_at(&vert, v, c);
            if (!isfinite(x)) vertices_finite = 0;
            else if (fabs(x) > SK_BIND_MAX_COORD) vertices_in_range = 0;
        }

    int64_t kout = which == 0 || which == 4 ? 1 : (which == 2 || which == 3 || which == 5) ? 2 : (K ? K : 1);
    fz_block idx = fz_alloc(sizeof(int32_t) * (size_t)(V * kout));
    fz_block wts = fz_alloc(item * (size_t)(V * kout));
    fz_block ex_b = fz_alloc(sizeof(int32_t) * (size_t)(V * kout));
    fz_block ex_d = fz_alloc(sizeof(double) * (size_t)(V * kout));
    fz_block ex_t = fz_alloc(sizeof(double) * (size_t)(V * kout));
    sk_bind_explain ex = {fz_bool(&in) ? (int32_t *)ex_b.mem : NULL,
                          fz_bool(&in) ? (double *)ex_d.mem : NULL,
                          fz_bool(&in) ? (double *)ex_t.mem : NULL};
    const sk_bind_explain *exp = fz_bool(&in) ? &ex : NULL;
    int to_bone = fz_bool(&in);
    const void *vp = vert.base;
    ptrdiff_t row = vert.row_stride, elem = vert.col_stride;
    int64_t bad = -1;
    sk_result r = SK_OK;
    int normalized = 1, may_be_zero = 0, expect_bad_argument = 0;
    fz_block scratch = fz_alloc(sk_bind_scratch_size(K));
    fz_block radii = fz_alloc(sizeof(double) * (size_t)J);

    switch (which) {
    case 0:
        r = f64 ? sk_bind_nearest_f64((int32_t *)idx.mem, (double *)wts.mem, exp, vp, row, elem, V, &bm.b, to_bone, &bad)
                : sk_bind_nearest_f32((int32_t *)idx.mem, (float *)wts.mem, exp, vp, row, elem, V, &bm.b, to_bone, &bad);
        break;
    case 1: {
        double power = (fz_bits(&in, 1) & 7) == 0 ? fz_double(&in) : (double)(fz_bits(&in, 1) % 5);
        expect_bad_argument = K < 1 || !isfinite(power) || power < 0;
        r = f64 ? sk_bind_proximity_f64((int32_t *)idx.mem, (double *)wts.mem, exp, vp, row, elem, V, &bm.b, K, power, to_bone, scratch.mem, &bad)
                : sk_bind_proximity_f32((int32_t *)idx.mem, (float *)wts.mem, exp, vp, row, elem, V, &bm.b, K, power, to_bone, scratch.mem, &bad);
        break;
    }
    case 2: {
        double mult = (fz_bits(&in, 1) & 7) == 0 ? fz_double(&in) : (double)(fz_bits(&in, 1) % 4) * 0.5;
        expect_bad_argument = !isfinite(mult) || mult < 0;
        fz_block before = fz_snapshot(&radii);
        r = f64 ? sk_bind_sphere_radii_f64((double *)radii.mem, vp, row, elem, V, &bm.b, mult, &bad)
                : sk_bind_sphere_radii_f32((double *)radii.mem, vp, row, elem, V, &bm.b, mult, &bad);
        if (r != SK_OK && !fz_same(&radii, &before)) FZ_FAIL("sphere_radii wrote and failed");
        fz_free(&before);
        if (r == SK_OK) {
            for (int64_t j = 0; j < J; ++j) {
                double rj = ((double *)radii.mem)[j];
                if (!(rj >= 0) || (V > 0 && !isfinite(rj) && vertices_finite && edge_vertices == 0))
                    FZ_FAIL("sphere radius %lld = %g", (long long)j, rj);
            }
        } else {
            /* fall back to radii from the input, as a caller passing its own would */
            for (int64_t j = 0; j < J; ++j) ((double *)radii.mem)[j] = (double)(fz_bits(&in, 1) % 8) * 0.25;
        }
        /* then bind with them */
        if ((fz_bits(&in, 1) & 7) == 0) ((double *)radii.mem)[fz_range(&in, 0, J - 1)] = fz_double(&in);
        expect_bad_argument = 0;
        for (int64_t j = 0; j < J; ++j) {
            double rj = ((double *)radii.mem)[j];
            if (!isfinite(rj) || rj < 0) expect_bad_argument = 1;
        }
        r = f64 ? sk_bind_volume_spheres_f64((int32_t *)idx.mem, (double *)wts.mem, exp, vp, row, elem, V, &bm.b, (double *)radii.mem, &bad)
                : sk_bind_volume_spheres_f32((int32_t *)idx.mem, (float *)wts.mem, exp, vp, row, elem, V, &bm.b, (double *)radii.mem, &bad);
        break;
    }
    case 3: case 5: {
        /* height bands over a chain of n joints with increasing (or, rarely, bad) heights */
        int64_t n = fz_range(&in, 1, J);
        fz_block chain = fz_alloc(sizeof(int64_t) * (size_t)n), heights = fz_alloc(sizeof(double) * (size_t)n);
        double h = small(&in);
        int bad_heights = (fz_bits(&in, 1) & 7) == 0;
        for (int64_t i = 0; i < n; ++i) {
            ((int64_t *)chain.mem)[i] = fz_range(&in, 0, J - 1);
            ((double *)heights.mem)[i] = bad_heights ? fz_double(&in) : h;
            h += 0.125 + (double)(fz_bits(&in, 1) % 16) * 0.25;
        }
        for (int64_t i = 0; i < n; ++i) {
            double hi = ((double *)heights.mem)[i];
            if (!isfinite(hi) || (i > 0 && !(hi > ((double *)heights.mem)[i - 1]))) expect_bad_argument = 1;
        }
        double origin[3] = {small(&in), small(&in), small(&in)};
        double axis[3] = {small(&in), small(&in), small(&in)};
        fz_block c0 = fz_snapshot(&chain), h0 = fz_snapshot(&heights);
        r = f64 ? sk_bind_height_bands_f64((int32_t *)idx.mem, (double *)wts.mem, exp, vp, row, elem, V,
                                           (int64_t *)chain.mem, (double *)heights.mem, n, origin, axis, &bad)
                : sk_bind_height_bands_f32((int32_t *)idx.mem, (float *)wts.mem, exp, vp, row, elem, V,
                                           (int64_t *)chain.mem, (double *)heights.mem, n, origin, axis, &bad);
        if (!fz_same(&chain, &c0) || !fz_same(&heights, &h0)) FZ_FAIL("height_bands modified an input");
        fz_free(&chain); fz_free(&heights); fz_free(&c0); fz_free(&h0);
        break;
    }
    case 4:
        r = f64 ? sk_bind_projection_f64((int32_t *)idx.mem, (double *)wts.mem, exp, vp, row, elem, V, &bm.b, &bad)
                : sk_bind_projection_f32((int32_t *)idx.mem, (float *)wts.mem, exp, vp, row, elem, V, &bm.b, &bad);
        break;
    default: {
        fz_block hr = fz_alloc(sizeof(double) * (size_t)J), tr = fz_alloc(sizeof(double) * (size_t)J),
                 dist = fz_alloc(sizeof(double) * (size_t)J);
        int wild = (fz_bits(&in, 1) & 7) == 0;
        for (int64_t j = 0; j < J; ++j) {
            ((double *)hr.mem)[j] = wild ? fz_double(&in) : (double)(fz_bits(&in, 1) % 8) * 0.25;
            ((double *)tr.mem)[j] = wild ? fz_double(&in) : (double)(fz_bits(&in, 1) % 8) * 0.25;
            ((double *)dist.mem)[j] = wild ? fz_double(&in) : (double)(fz_bits(&in, 1) % 8) * 0.25;
        }
        for (int64_t j = 0; j < J; ++j) {
            double a = ((double *)hr.mem)[j], b = ((double *)tr.mem)[j], c = ((double *)dist.mem)[j];
            if (!isfinite(a) || !isfinite(b) || !isfinite(c) || a < 0 || b < 0 || c < 0) expect_bad_argument = 1;
        }
        if (K < 1) expect_bad_argument = 1;
        int norm = fz_bool(&in);
        normalized = norm;
        may_be_zero = 1;
        r = f64 ? sk_bind_envelope_f64((int32_t *)idx.mem, (double *)wts.mem, exp, vp, row, elem, V, &bm.b,
                                       (double *)hr.mem, (double *)tr.mem, (double *)dist.mem, K, norm, scratch.mem, &bad)
                : sk_bind_envelope_f32((int32_t *)idx.mem, (float *)wts.mem, exp, vp, row, elem, V, &bm.b,
                                       (double *)hr.mem, (double *)tr.mem, (double *)dist.mem, K, norm, scratch.mem, &bad);
        /* the factor itself, on edge values: finite in [0, 1] for finite inputs */
        double v3[3] = {fz_double(&in), fz_double(&in), fz_double(&in)};
        double d = 0, t = 0;
        double f = sk_envelope_factor(v3, bm.b.joints, bm.b.seg_end, ((double *)hr.mem)[0],
                                      ((double *)tr.mem)[0], ((double *)dist.mem)[0], &d, &t);
        if (isfinite(v3[0]) && isfinite(v3[1]) && isfinite(v3[2]) && !wild &&
            fabs(v3[0]) < 1e100 && fabs(v3[1]) < 1e100 && fabs(v3[2]) < 1e100 && !(f >= 0 && f <= 1))
            FZ_FAIL("envelope factor %g outside [0, 1]", f);
        (void)sk_envelope_factor(v3, bm.b.joints, bm.b.seg_end, 1, 1, 1, NULL, NULL);
        fz_free(&hr); fz_free(&tr); fz_free(&dist);
        break;
    }
    }

    if (!fz_same(&vert.block, &vert0)) FZ_FAIL("binder %d modified the vertices", which);
    if (r != SK_OK) {
        if (!fz_untouched(&idx) || !fz_untouched(&wts) || !fz_untouched(&ex_b) ||
            !fz_untouched(&ex_d) || !fz_untouched(&ex_t))
            FZ_FAIL("binder %d returned %d after writing", which, (int)r);
        if (r == SK_ERR_NOT_FINITE && (vertices_finite || bad < 0 || bad >= V))
            FZ_FAIL("binder %d: not-finite at vertex %lld", which, (long long)bad);
        if (r == SK_ERR_BAD_ARGUMENT && !expect_bad_argument)
            FZ_FAIL("binder %d: unexpected bad argument", which);
        if (r == SK_ERR_TOO_LARGE && (vertices_in_range || bad < 0 || bad >= V))
            FZ_FAIL("binder %d: too-large at vertex %lld", which, (long long)bad);
        if (r != SK_ERR_NOT_FINITE && r != SK_ERR_BAD_ARGUMENT && r != SK_ERR_TOO_LARGE)
            FZ_FAIL("binder %d: code %d", which, (int)r);
    } else {
        if (!vertices_finite) FZ_FAIL("binder %d accepted a non-finite vertex", which);
        if (!vertices_in_range) FZ_FAIL("binder %d accepted a vertex beyond 1e150", which);
        if (expect_bad_argument) FZ_FAIL("binder %d accepted a bad argument", which);
        check_influences(&idx, &wts, f64, V, kout, J, normalized, may_be_zero, "binder");
    }
    fz_free(&idx); fz_free(&wts); fz_free(&ex_b); fz_free(&ex_d); fz_free(&ex_t);
    fz_free(&scratch); fz_free(&radii); fz_free(&vert.block); fz_free(&vert0);
    free_bones(&bm);
    return 0;
}
