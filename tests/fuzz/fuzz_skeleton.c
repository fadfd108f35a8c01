/* fuzz_skeleton.c -- libFuzzer target over the skeleton entry points of sk.h:
 * sk_validate_parents, sk_fk_*, sk_inverse_bind_*, sk_pivots_*, sk_palette_*, sk_result_string.
 *
 * Build (what .ci/lane-fuzz.sh does):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Icsrc \
 *         tests/fuzz/fuzz_skeleton.c csrc/<core sources>.c -lm
 */
#include "fuzz_common.h"

enum { MAX_JOINTS = 48, MAX_FRAMES = 4 };

/* Parents: valid ones most of the time (so the call gets past validation), sometimes anything. */
static void fill_parents(fz_in *in, int64_t *parents, int64_t J)
{
    int wild = (fz_bits(in, 1) & 7) == 0;
    for (int64_t j = 0; j < J; ++j) {
        if (wild) {
            static const int64_t edge[] = {INT64_MIN, -2, -1, 0, 1, INT64_MAX};
            unsigned k = (unsigned)fz_bits(in, 1);
            parents[j] = k < 6 ? edge[k] : (int64_t)(int8_t)k;
        } else {
            parents[j] = fz_range(in, -1, j - 1);
        }
    }
}

static int parents_ok(const int64_t *parents, int64_t J)
{
    for (int64_t j = 0; j < J; ++j)
        if (parents[j] < -1 || parents[j] >= j) return 0;
    return 1;
}

static void check_last_rows(const fz_block *out, int64_t n, int rows, int f64)
{
    if (rows != 4) return;
    for (int64_t k = 0; k < n; ++k)
        for (int c = 0; c < 4; ++c) {
            double v = f64 ? ((double *)out->mem)[16 * k + 12 + c] : ((float *)out->mem)[16 * k + 12 + c];
            if (v != (c == 3 ? 1.0 : 0.0)) FZ_FAIL("matrix %lld: last row not [0 0 0 1]", (long long)k);
        }
}

static void fuzz_validate_parents(fz_in *in)
{
    int64_t J = fz_range(in, 0, MAX_JOINTS);
    fz_block pb = fz_alloc(sizeof(int64_t) * (size_t)J);
    int64_t *parents = (int64_t *)pb.mem;
    fill_parents(in, parents, J);
    fz_block before = fz_snapshot(&pb);
    int64_t bad = -12345;
    sk_result r = sk_validate_parents(parents, J, &bad);
    if ((r == SK_OK) != parents_ok(parents, J)) FZ_FAIL("validate_parents disagrees: %d", (int)r);
    if (r != SK_OK) {
        if (r != SK_ERR_BAD_PARENT || bad < 0 || bad >= J || parents_ok(parents, bad + 1))
            FZ_FAIL("validate_parents: wrong code %d or first bad joint %lld", (int)r, (long long)bad);
    }
    if (!fz_same(&pb, &before)) FZ_FAIL("validate_parents modified parents");
    /* bad may be NULL */
    (void)sk_validate_parents(parents, J, NULL);
    fz_free(&before);
    fz_free(&pb);
}

static void fuzz_fk(fz_in *in)
{
    int f64 = fz_bool(in);
    size_t item = f64 ? sizeof(double) : sizeof(float);
    int64_t J = fz_range(in, 0, MAX_JOINTS), F = fz_range(in, 0, MAX_FRAMES);
    int rows = (int)fz_range(in, 0, 7);
    if (rows < 3 || rows > 4) rows = (fz_bits(in, 1) & 3) ? (rows & 1 ? 3 : 4) : rows;
    int msize_rows = rows >= 0 && rows <= 4 ? rows : 4;
    int64_t msize = 4 * msize_rows;
    int per_frame = fz_bool(in);
    int root_mode = (int)fz_range(in, 0, 2); /* NULL, shared, per frame */
    int64_t R = root_mode == 0 ? 0 : root_mode == 1 ? 1 : F;

    fz_block pb = fz_alloc(sizeof(int64_t) * (size_t)J);
    fill_parents(in, (int64_t *)pb.mem, J);
    fz_block lb = fz_alloc(item * (size_t)((per_frame ? F : 1) * J * msize));
    if (msize_rows >= 3)
        fz_fill_affine(in, lb.mem, (per_frame ? F : 1) * J, msize_rows, f64);
    else
        fz_fill_flat(in, lb.mem, (per_frame ? F : 1) * J * msize, f64, 1);
    fz_block rb = fz_alloc(sizeof(double) * 12 * (size_t)R);
    fz_fill_flat(in, rb.mem, 12 * R, 1, 1);
    fz_block out = fz_alloc(item * (size_t)(F * J * msize));
    fz_block out2 = fz_alloc(out.bytes);
    fz_block scratch = fz_alloc(sizeof(double) * 12 * (size_t)J);
    fz_block pb0 = fz_snapshot(&pb), lb0 = fz_snapshot(&lb), rb0 = fz_snapshot(&rb);

    const double *root = root_mode ? (const double *)rb.mem : NULL;
    int root_pf = root_mode == 2;
    int64_t bad = -1;
    sk_result r = f64 ? sk_fk_f64((double *)out.mem, (double *)lb.mem, per_frame, (int64_t *)pb.mem,
                                  J, F, root, root_pf, rows, (double *)scratch.mem, &bad)
                      : sk_fk_f32((float *)out.mem, (float *)lb.mem, per_frame, (int64_t *)pb.mem,
                                  J, F, root, root_pf, rows, (double *)scratch.mem, &bad);
    if (!fz_same(&pb, &pb0) || !fz_same(&lb, &lb0) || !fz_same(&rb, &rb0))
        FZ_FAIL("fk modified an input");
    int expect_ok = (rows == 3 || rows == 4) && parents_ok((int64_t *)pb.mem, J);
    if ((r == SK_OK) != expect_ok) FZ_FAIL("fk returned %d, expected ok = %d", (int)r, expect_ok);
    if (r != SK_OK) {
        if (!fz_untouched(&out)) FZ_FAIL("fk wrote its output and then failed (%d)", (int)r);
    } else {
        check_last_rows(&out, F * J, rows, f64);
        /* The scratch must be written before it is read: a second run over a scratch holding
         * another pattern gives the same bits. */
        memset(scratch.mem, 0x3C, scratch.bytes);
        sk_result r2 = f64 ? sk_fk_f64((double *)out2.mem, (double *)lb.mem, per_frame,
                                       (int64_t *)pb.mem, J, F, root, root_pf, rows,
                                       (double *)scratch.mem, NULL)
                           : sk_fk_f32((float *)out2.mem, (float *)lb.mem, per_frame,
                                       (int64_t *)pb.mem, J, F, root, root_pf, rows,
                                       (double *)scratch.mem, NULL);
        if (r2 != SK_OK || !fz_same(&out, &out2)) FZ_FAIL("fk is not deterministic");
    }
    fz_free(&pb); fz_free(&lb); fz_free(&rb); fz_free(&out); fz_free(&out2); fz_free(&scratch);
    fz_free(&pb0); fz_free(&lb0); fz_free(&rb0);
}

static void fuzz_inverse_or_pivots(fz_in *in, int pivots)
{
    int f64 = fz_bool(in);
    size_t item = f64 ? sizeof(double) : sizeof(float);
    int64_t J = fz_range(in, 0, MAX_JOINTS);
    int rows = (fz_bits(in, 1) & 15) == 0 ? (int)fz_range(in, 0, 5) : 3 + fz_bool(in);
    int alloc_rows = rows == 3 ? 3 : 4;
    fz_block ib = fz_alloc(item * (size_t)(J * 4 * alloc_rows));
    fz_fill_affine(in, ib.mem, J, alloc_rows, f64);
    /* Sometimes make one matrix exactly singular or exactly rigid. */
    if (J > 0 && fz_bool(in)) {
        int64_t j = fz_range(in, 0, J - 1);
        int kind = fz_bool(in);
        for (int i = 0; i < 12; ++i) {
            double v = kind ? (i % 5 == 0 ? 1.0 : (i % 4 == 3 ? 2.0 : 0.0)) : (i == 0 ? 1.0 : 0.0);
            if (f64)
                ((double *)ib.mem)[j * 4 * alloc_rows + i] = v;
            else
                ((float *)ib.mem)[j * 4 * alloc_rows + i] = (float)v;
        }
    }
    fz_block ib0 = fz_snapshot(&ib);
    fz_block out = fz_alloc(pivots ? item * 3 * (size_t)J : item * (size_t)(J * 4 * alloc_rows));
    int64_t bad = -1;
    sk_result r;
    if (pivots)
        r = f64 ? sk_pivots_f64((double *)out.mem, (double *)ib.mem, J, rows, &bad)
                : sk_pivots_f32((float *)out.mem, (float *)ib.mem, J, rows, &bad);
    else
        r = f64 ? sk_inverse_bind_f64((double *)out.mem, (double *)ib.mem, J, rows, &bad)
                : sk_inverse_bind_f32((float *)out.mem, (float *)ib.mem, J, rows, &bad);
    if (!fz_same(&ib, &ib0)) FZ_FAIL("inverse_bind/pivots modified its input");
    if (r != SK_OK) {
        if (!fz_untouched(&out)) FZ_FAIL("inverse_bind/pivots wrote and failed (%d)", (int)r);
        if (r != SK_ERR_BAD_ARGUMENT && (bad < 0 || bad >= J))
            FZ_FAIL("inverse_bind/pivots: bad joint %lld outside [0, %lld)", (long long)bad,
                    (long long)J);
        if (r != SK_ERR_BAD_ARGUMENT && r != SK_ERR_SINGULAR && r != SK_ERR_NOT_FINITE)
            FZ_FAIL("inverse_bind/pivots: unexpected code %d", (int)r);
    } else {
        if (rows != 3 && rows != 4) FZ_FAIL("inverse_bind/pivots accepted rows = %d", rows);
        if (!pivots) {
            check_last_rows(&out, J, rows, f64);
        }
    }
    fz_free(&ib); fz_free(&ib0); fz_free(&out);
}

static void fuzz_palette(fz_in *in)
{
    int f64 = fz_bool(in);
    size_t item = f64 ? sizeof(double) : sizeof(float);
    int64_t J = fz_range(in, 0, MAX_JOINTS), F = fz_range(in, 0, MAX_FRAMES);
    int rows = (fz_bits(in, 1) & 15) == 0 ? (int)fz_range(in, 0, 5) : 3 + fz_bool(in);
    int alloc_rows = rows == 3 ? 3 : 4;
    fz_block g = fz_alloc(item * (size_t)(F * J * 4 * alloc_rows));
    fz_fill_affine(in, g.mem, F * J, alloc_rows, f64);
    fz_block ib = fz_alloc(item * (size_t)(J * 4 * alloc_rows));
    fz_fill_affine(in, ib.mem, J, alloc_rows, f64);
    fz_block pre = fz_alloc(sizeof(double) * 12), post = fz_alloc(sizeof(double) * 12);
    fz_fill_flat(in, pre.mem, 12, 1, 1);
    fz_fill_flat(in, post.mem, 12, 1, 1);
    int use_pre = fz_bool(in), use_post = fz_bool(in);
    fz_block g0 = fz_snapshot(&g), ib0 = fz_snapshot(&ib), pre0 = fz_snapshot(&pre),
             post0 = fz_snapshot(&post);
    fz_block out = fz_alloc(g.bytes);
    const double *pp = use_pre ? (double *)pre.mem : NULL, *qp = use_post ? (double *)post.mem : NULL;
    sk_result r = f64 ? sk_palette_f64((double *)out.mem, (double *)g.mem, (double *)ib.mem, J, F,
                                       pp, qp, rows)
                      : sk_palette_f32((float *)out.mem, (float *)g.mem, (float *)ib.mem, J, F,
                                       pp, qp, rows);
    if (!fz_same(&g, &g0) || !fz_same(&ib, &ib0) || !fz_same(&pre, &pre0) || !fz_same(&post, &post0))
        FZ_FAIL("palette modified an input");
    if ((r == SK_OK) != (rows == 3 || rows == 4)) FZ_FAIL("palette returned %d for rows %d", (int)r, rows);
    if (r != SK_OK && !fz_untouched(&out)) FZ_FAIL("palette wrote and failed");
    if (r == SK_OK) check_last_rows(&out, F * J, rows, f64);
    fz_free(&g); fz_free(&ib); fz_free(&pre); fz_free(&post); fz_free(&out);
    fz_free(&g0); fz_free(&ib0); fz_free(&pre0); fz_free(&post0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    switch (fz_bits(&in, 1) % 6) {
    case 0: fuzz_validate_parents(&in); break;
    case 1: fuzz_fk(&in); break;
    case 2: fuzz_inverse_or_pivots(&in, 0); break;
    case 3: fuzz_inverse_or_pivots(&in, 1); break;
    case 4: fuzz_palette(&in); break;
    default: {
        /* every code, and codes outside the enum, have a message */
        int code = (int)(int8_t)fz_bits(&in, 1);
        const char *s = sk_result_string((sk_result)code);
        if (!s || !*s) FZ_FAIL("sk_result_string(%d) is empty", code);
        break;
    }
    }
    return 0;
}
