/* skeleton.template.c -- included by skeleton.c once per storage type.
 * Expects SK_T (float or double) and SK_FN(name) (appends _f32 / _f64). Computes in double. */

static void SK_FN(load)(double a[12], const SK_T *m)
{
    for (int i = 0; i < 12; ++i) a[i] = (double)m[i];
}

static void SK_FN(store)(SK_T *m, const double a[12], int rows)
{
    for (int i = 0; i < 12; ++i) m[i] = (SK_T)a[i];
    if (rows == 4) {
        m[12] = 0;
        m[13] = 0;
        m[14] = 0;
        m[15] = 1;
    }
}

sk_result SK_FN(sk_fk)(SK_T *globals, const SK_T *locals, int locals_per_frame,
                       const int64_t *parents, int64_t n_joints, int64_t n_frames,
                       const double *root, int root_per_frame, int rows, double *scratch,
                       int64_t *bad)
{
    if (rows != 3 && rows != 4) return SK_ERR_BAD_ARGUMENT;
    sk_result r = sk_validate_parents(parents, n_joints, bad);
    if (r != SK_OK) return r;
    const int64_t msize = 4 * rows;
    double identity[12];
    sk_aff_identity(identity);
    for (int64_t f = 0; f < n_frames; ++f) {
        const SK_T *loc = locals + (locals_per_frame ? f * n_joints * msize : 0);
        SK_T *glob = globals + f * n_joints * msize;
        const double *rt = root ? root + (root_per_frame ? 12 * f : 0) : identity;
        for (int64_t j = 0; j < n_joints; ++j) {
            /* Globals are chained in double in the scratch, so a float32 skeleton 1,000 joints
             * deep is rounded once, at the end, not once per level. */
            double l[12];
            double *g = scratch + 12 * j;
            SK_FN(load)(l, loc + j * msize);
            sk_aff_mul(g, parents[j] < 0 ? rt : scratch + 12 * parents[j], l);
            SK_FN(store)(glob + j * msize, g, rows);
        }
    }
    return SK_OK;
}

sk_result SK_FN(sk_inverse_bind)(SK_T *inverse_bind, const SK_T *bind_globals, int64_t n_joints,
                                 int rows, int64_t *bad)
{
    if (rows != 3 && rows != 4) return SK_ERR_BAD_ARGUMENT;
    const int64_t msize = 4 * rows;
    /* Validate every joint first so a failure leaves the output untouched. */
    for (int64_t j = 0; j < n_joints; ++j) {
        double a[12], inv[12];
        SK_FN(load)(a, bind_globals + j * msize);
        if (!sk_aff_inverse(inv, a)) {
            if (bad) *bad = j;
            return sk_aff_finite(a) ? SK_ERR_SINGULAR : SK_ERR_NOT_FINITE;
        }
    }
    for (int64_t j = 0; j < n_joints; ++j) {
        double a[12], inv[12];
        SK_FN(load)(a, bind_globals + j * msize);
        sk_aff_inverse(inv, a);
        SK_FN(store)(inverse_bind + j * msize, inv, rows);
    }
    return SK_OK;
}

sk_result SK_FN(sk_pivots)(SK_T *pivots, const SK_T *inverse_bind, int64_t n_joints, int rows,
                           int64_t *bad)
{
    if (rows != 3 && rows != 4) return SK_ERR_BAD_ARGUMENT;
    const int64_t msize = 4 * rows;
    for (int64_t j = 0; j < n_joints; ++j) {
        double a[12], inv[12];
        SK_FN(load)(a, inverse_bind + j * msize);
        if (!sk_aff_inverse(inv, a)) {
            if (bad) *bad = j;
            return sk_aff_finite(a) ? SK_ERR_SINGULAR : SK_ERR_NOT_FINITE;
        }
    }
    for (int64_t j = 0; j < n_joints; ++j) {
        double a[12], inv[12];
        SK_FN(load)(a, inverse_bind + j * msize);
        sk_aff_inverse(inv, a);
        pivots[3 * j + 0] = (SK_T)inv[3];
        pivots[3 * j + 1] = (SK_T)inv[7];
        pivots[3 * j + 2] = (SK_T)inv[11];
    }
    return SK_OK;
}

sk_result SK_FN(sk_palette)(SK_T *palette, const SK_T *globals, const SK_T *inverse_bind,
                            int64_t n_joints, int64_t n_frames, const double *pre,
                            const double *post, int rows)
{
    if (rows != 3 && rows != 4) return SK_ERR_BAD_ARGUMENT;
    const int64_t msize = 4 * rows;
    for (int64_t j = 0; j < n_joints; ++j) {
        /* right = inverse_bind[j] @ post is shared by every frame */
        double ib[12], right[12];
        SK_FN(load)(ib, inverse_bind + j * msize);
        if (post)
            sk_aff_mul(right, ib, post);
        else
            for (int i = 0; i < 12; ++i) right[i] = ib[i];
        for (int64_t f = 0; f < n_frames; ++f) {
            double g[12], left[12], k[12];
            int64_t at = (f * n_joints + j) * msize;
            SK_FN(load)(g, globals + at);
            if (pre) {
                sk_aff_mul(left, pre, g);
                sk_aff_mul(k, left, right);
            } else {
                sk_aff_mul(k, g, right);
            }
            SK_FN(store)(palette + at, k, rows);
        }
    }
    return SK_OK;
}
