/* affine.h -- small double-precision 3x4 affine helpers shared by the core's source files.
 * An affine `a[12]` is the top three rows of a 4x4, row-major: a[4*r + c]. */
#ifndef SK_AFFINE_H
#define SK_AFFINE_H

#include <float.h>
#include <math.h>

/* Largest deviation of R^T R from I for which transposition inverts to rounding accuracy. */
#define SK_AFF_RIGID_TOL (64.0 * DBL_EPSILON)

static inline void sk_aff_identity(double a[12])
{
    for (int i = 0; i < 12; ++i) a[i] = 0.0;
    a[0] = a[5] = a[10] = 1.0;
}

/* c = a @ b (c may alias neither). */
static inline void sk_aff_mul(double c[12], const double a[12], const double b[12])
{
    for (int r = 0; r < 3; ++r) {
        const double *ar = a + 4 * r;
        for (int col = 0; col < 4; ++col) {
            double s = ar[0] * b[col] + ar[1] * b[4 + col] + ar[2] * b[8 + col];
            c[4 * r + col] = col == 3 ? s + ar[3] : s;
        }
    }
}

static inline int sk_aff_finite(const double a[12])
{
    for (int i = 0; i < 12; ++i)
        if (!isfinite(a[i])) return 0;
    return 1;
}

/* out = inv(a).  Returns 0 when a is singular (relative to its scale) or not finite.
 * Rigid matrices are inverted by transposition, anything else through the adjugate.  The
 * transpose is only as exact as the 3x3 is orthonormal, so the rigid path is taken only when it
 * is orthonormal to rounding (SK_AFF_RIGID_TOL): a rotation stored in float32, or one that
 * drifted by 1e-8, must not give an inverse bind that is off by that much. */
static inline int sk_aff_inverse(double out[12], const double a[12])
{
    sk_aff_identity(out); /* defined even on failure */
    if (!sk_aff_finite(a)) return 0;
    double ortho = 0.0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double d = a[i] * a[j] + a[4 + i] * a[4 + j] + a[8 + i] * a[8 + j];
            ortho = fmax(ortho, fabs(d - (i == j ? 1.0 : 0.0)));
        }
    double det3 = a[0] * (a[5] * a[10] - a[6] * a[9]) - a[1] * (a[4] * a[10] - a[6] * a[8]) +
                  a[2] * (a[4] * a[9] - a[5] * a[8]);
    double m[9];
    if (ortho <= SK_AFF_RIGID_TOL && det3 > 0.0) {
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) m[3 * i + j] = a[4 * j + i];
    } else {
        double scale = 0.0;
        for (int c = 0; c < 3; ++c)
            scale = fmax(scale, sqrt(a[c] * a[c] + a[4 + c] * a[4 + c] + a[8 + c] * a[8 + c]));
        if (!(fabs(det3) > 1e-12 * scale * scale * scale)) return 0;
        double inv = 1.0 / det3;
        m[0] = (a[5] * a[10] - a[6] * a[9]) * inv;
        m[1] = (a[2] * a[9] - a[1] * a[10]) * inv;
        m[2] = (a[1] * a[6] - a[2] * a[5]) * inv;
        m[3] = (a[6] * a[8] - a[4] * a[10]) * inv;
        m[4] = (a[0] * a[10] - a[2] * a[8]) * inv;
        m[5] = (a[2] * a[4] - a[0] * a[6]) * inv;
        m[6] = (a[4] * a[9] - a[5] * a[8]) * inv;
        m[7] = (a[1] * a[8] - a[0] * a[9]) * inv;
        m[8] = (a[0] * a[5] - a[1] * a[4]) * inv;
    }
    for (int i = 0; i < 3; ++i) {
        out[4 * i + 0] = m[3 * i + 0];
        out[4 * i + 1] = m[3 * i + 1];
        out[4 * i + 2] = m[3 * i + 2];
        out[4 * i + 3] = -(m[3 * i] * a[3] + m[3 * i + 1] * a[7] + m[3 * i + 2] * a[11]);
    }
    return 1;
}

#endif
