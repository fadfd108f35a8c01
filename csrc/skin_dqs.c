/* skin_dqs.c -- dual quaternion skinning (seed 002; Kavan et al. 2008) with the two-phase split
 * of scale about each joint's bind position (DESIGN.md section 2). */
#include <math.h>

#include "sk.h"
#include "skin_simd.h"
#include "affine.h"

/* Eigen-decomposition of a symmetric 3x3 (cyclic Jacobi): a = V diag(e) V^T, e descending. */
static void sym_eigen3(const double a_in[9], double e[3], double vec[9])
{
    double a[9];
    for (int i = 0; i < 9; ++i) {
        a[i] = a_in[i];
        vec[i] = (i % 4 == 0) ? 1.0 : 0.0;
    }
    for (int sweep = 0; sweep < 64; ++sweep) {
        double off = a[1] * a[1] + a[2] * a[2] + a[5] * a[5];
        double diag = a[0] * a[0] + a[4] * a[4] + a[8] * a[8];
        if (off <= 1e-40 * diag || off == 0.0) break;
        static const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
        for (int pi = 0; pi < 3; ++pi) {
            int p = pairs[pi][0], q = pairs[pi][1];
            double apq = a[3 * p + q];
            if (apq == 0.0) continue;
            double theta = (a[3 * q + q] - a[3 * p + p]) / (2.0 * apq);
            double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
            double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
            for (int k = 0; k < 3; ++k) { /* a <- a J (columns p, q) */
                double akp = a[3 * k + p], akq = a[3 * k + q];
                a[3 * k + p] = c * akp - s * akq;
                a[3 * k + q] = s * akp + c * akq;
            }
            for (int k = 0; k < 3; ++k) { /* a <- J^T a (rows p, q) */
                double apk = a[3 * p + k], aqk = a[3 * q + k];
                a[3 * p + k] = c * apk - s * aqk;
                a[3 * q + k] = s * apk + c * aqk;
            }
            for (int k = 0; k < 3; ++k) { /* vec <- vec J */
                double vkp = vec[3 * k + p], vkq = vec[3 * k + q];
                vec[3 * k + p] = c * vkp - s * vkq;
                vec[3 * k + q] = s * vkp + c * vkq;
            }
        }
    }
    e[0] = a[0];
    e[1] = a[4];
    e[2] = a[8];
    for (int i = 0; i < 2; ++i) /* sort descending, columns with them */
        for (int j = 0; j < 2 - i; ++j)
            if (e[j] < e[j + 1]) {
                double t = e[j];
                e[j] = e[j + 1];
                e[j + 1] = t;
                for (int k = 0; k < 3; ++k) {
                    t = vec[3 * k + j];
                    vec[3 * k + j] = vec[3 * k + j + 1];
                    vec[3 * k + j + 1] = t;
                }
            }
}

static double det3(const double m[12]) /* of the 3x3 inside a 3x4 */
{
    return m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) +
           m[2] * (m[4] * m[9] - m[5] * m[8]);
}

/* Singular values (descending) and right singular vectors of the 3x3 inside a 3x4. */
static void singular3(const double k[12], double sigma[3], double vec[9])
{
    double ata[9];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            ata[3 * r + c] = k[r] * k[c] + k[4 + r] * k[4 + c] + k[8 + r] * k[8 + c];
    double e[3];
    sym_eigen3(ata, e, vec);
    for (int i = 0; i < 3; ++i) sigma[i] = sqrt(e[i] > 0 ? e[i] : 0.0);
}

/* DESIGN.md section 2: scale or shear when a singular value is off 1 by more than 1e-5 or the
 * determinant is negative. */
static int dqs_has_scale(const double k[12])
{
    /* The usual joint first, without the eigen-solver: |sigma_i^2 - 1| <= |A^T A - I| (spectral,
     * so also Frobenius), and a Frobenius norm under 1.99e-5 puts every singular value within
     * 0.995e-5 of 1: the same answer as the test below, at a tenth of its cost per joint. */
    double f2 = 0;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            double d = k[r] * k[c] + k[4 + r] * k[4 + c] + k[8 + r] * k[8 + c] - (r == c);
            f2 += d * d;
        }
    if (f2 <= 1.99e-5 * 1.99e-5) return det3(k) < 0;
    double sigma[3], vec[9];
    singular3(k, sigma, vec);
    for (int i = 0; i < 3; ++i)
        if (fabs(sigma[i] - 1.0) > 1e-5) return 1;
    return det3(k) < 0;
}

/* Singular values closer than this (relative to the largest) count as equal when a mirror's
 * sign is placed (polar3_mirror_tie): the tolerance within which dqs_has_scale calls a joint
 * rigid, and well above a float32 palette's rounding. */
#define SK_POLAR_TIE 1e-5

/* polar3 for a mirrored A (negative determinant) whose smallest singular value is shared by
 * several directions (all three for a plain mirror, within SK_POLAR_TIE): the sign may go on
 * any unit n of that space T, each giving R = Q (I - 2 n n^T), Q = A V diag(1/sigma) V^T the
 * orthogonal factor.  The n taken leaves the smallest rotation (the least n^T sym(Q) n), so a
 * mirror is R = I and S the mirror; where several do (A = -s I), the coordinate axis nearest
 * that set, the first of equals.  S = R^T A, not symmetrized (T is a tie within tolerance, so
 * S is symmetric within it, and R S = A to rounding).  transforms.polar is the reference.
 * Returns 0 (nothing written) when the smallest singular value is not shared. */
static int polar3_mirror_tie(const double k[12], const double sigma[3], const double vec[9],
                             double rot[9], double sym[9])
{
    int first = 2; /* T = span of vec's columns first..2 */
    while (first > 0 && sigma[first - 1] - sigma[2] <= SK_POLAR_TIE * sigma[0]) --first;
    if (first == 2 || !(sigma[2] > 0)) return 0;
    double w[9], q[9], g[9];
    for (int r = 0; r < 3; ++r) /* W = V diag(1/sigma) V^T */
        for (int c = 0; c < 3; ++c) {
            w[3 * r + c] = 0;
            for (int i = 0; i < 3; ++i) w[3 * r + c] += vec[3 * r + i] * vec[3 * c + i] / sigma[i];
        }
    for (int r = 0; r < 3; ++r) /* Q = A W */
        for (int c = 0; c < 3; ++c)
            q[3 * r + c] = k[4 * r] * w[c] + k[4 * r + 1] * w[3 + c] + k[4 * r + 2] * w[6 + c];
    /* G = P sym(Q) P + 4 (I - P), P the projector on T: its least eigenvector is the least
     * n^T sym(Q) n over unit n in T (sym(Q)'s eigenvalues lie in [-1, 1]) */
    double p[9], hp[9];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            p[3 * r + c] = 0;
            for (int i = first; i < 3; ++i) p[3 * r + c] += vec[3 * r + i] * vec[3 * c + i];
        }
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            hp[3 * r + c] = 0;
            for (int m = 0; m < 3; ++m)
                hp[3 * r + c] += 0.5 * (q[3 * r + m] + q[3 * m + r]) * p[3 * m + c];
        }
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            g[3 * r + c] = 4.0 * ((r == c) - p[3 * r + c]);
            for (int m = 0; m < 3; ++m) g[3 * r + c] += p[3 * r + m] * hp[3 * m + c];
        }
    double e[3], ev[9], n[3];
    sym_eigen3(g, e, ev);
    int least = 2; /* eigenvectors least..2 share the least value (within 1e-6) */
    while (least > 0 && e[least - 1] - e[2] <= 1e-6) --least;
    if (least == 2) {
        for (int r = 0; r < 3; ++r) n[r] = ev[3 * r + 2];
    } else { /* n = the projection of the axis with the largest one, |P_W e_a|^2 = P_W[a][a] */
        double pw[9];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) {
                pw[3 * r + c] = 0;
                for (int i = least; i < 3; ++i) pw[3 * r + c] += ev[3 * r + i] * ev[3 * c + i];
            }
        int a = 0;
        for (int i = 1; i < 3; ++i)
            if (pw[4 * i] > pw[4 * a] + 1e-9) a = i;
        double len = sqrt(pw[4 * a]);
        for (int r = 0; r < 3; ++r) n[r] = pw[3 * r + a] / len;
    }
    double qn[3];
    for (int r = 0; r < 3; ++r) qn[r] = q[3 * r] * n[0] + q[3 * r + 1] * n[1] + q[3 * r + 2] * n[2];
    for (int r = 0; r < 3; ++r) /* R = Q (I - 2 n n^T) */
        for (int c = 0; c < 3; ++c) rot[3 * r + c] = q[3 * r + c] - 2.0 * qn[r] * n[c];
    for (int r = 0; r < 3; ++r) /* S = R^T A */
        for (int c = 0; c < 3; ++c)
            sym[3 * r + c] = rot[r] * k[c] + rot[3 + r] * k[4 + c] + rot[6 + r] * k[8 + c];
    return 1;
}

/* Polar decomposition A = R S of the 3x3 inside a 3x4 (R proper, S symmetric).  With a negative
 * determinant the smallest singular direction takes the sign, as numpy's SVD-based reference
 * does (the closest rotation to A); a mirror whose smallest singular value several directions
 * share, by polar3_mirror_tie's rule.  A singular A still gets a proper R. */
static void polar3(const double k[12], double rot[9], double sym[9])
{
    double sigma[3], vec[9], u[9];
    singular3(k, sigma, vec);
    if (det3(k) < 0 && polar3_mirror_tie(k, sigma, vec, rot, sym)) return;
    double dv = vec[0] * (vec[4] * vec[8] - vec[5] * vec[7]) -
                vec[1] * (vec[3] * vec[8] - vec[5] * vec[6]) +
                vec[2] * (vec[3] * vec[7] - vec[4] * vec[6]);
    if (dv < 0)
        for (int r = 0; r < 3; ++r) vec[3 * r + 2] = -vec[3 * r + 2];
    /* u_i = A v_i / |A v_i| for the two largest; u2 = u0 x u1 keeps U proper. */
    double av[2][3];
    for (int i = 0; i < 2; ++i)
        for (int r = 0; r < 3; ++r)
            av[i][r] = k[4 * r] * vec[i] + k[4 * r + 1] * vec[3 + i] + k[4 * r + 2] * vec[6 + i];
    double n0 = sqrt(av[0][0] * av[0][0] + av[0][1] * av[0][1] + av[0][2] * av[0][2]);
    double u0[3] = {1, 0, 0}, u1[3] = {0, 1, 0}, u2[3];
    if (n0 > 0) {
        for (int r = 0; r < 3; ++r) u0[r] = av[0][r] / n0;
        double d = u0[0] * av[1][0] + u0[1] * av[1][1] + u0[2] * av[1][2];
        for (int r = 0; r < 3; ++r) u1[r] = av[1][r] - d * u0[r];
        double n1 = sqrt(u1[0] * u1[0] + u1[1] * u1[1] + u1[2] * u1[2]);
        if (n1 > 1e-12 * n0) {
            for (int r = 0; r < 3; ++r) u1[r] /= n1;
        } else { /* rank 1: any unit vector perpendicular to u0 */
            int a = fabs(u0[0]) < 0.9 ? 0 : 1;
            double e[3] = {0, 0, 0};
            e[a] = 1.0;
            d = u0[a];
            for (int r = 0; r < 3; ++r) u1[r] = e[r] - d * u0[r];
            n1 = sqrt(u1[0] * u1[0] + u1[1] * u1[1] + u1[2] * u1[2]);
            for (int r = 0; r < 3; ++r) u1[r] /= n1;
        }
    } else { /* A = 0: R = V keeps R proper and S = 0 */
        for (int r = 0; r < 3; ++r) {
            u0[r] = vec[3 * r];
            u1[r] = vec[3 * r + 1];
        }
    }
    u2[0] = u0[1] * u1[2] - u0[2] * u1[1];
    u2[1] = u0[2] * u1[0] - u0[0] * u1[2];
    u2[2] = u0[0] * u1[1] - u0[1] * u1[0];
    for (int r = 0; r < 3; ++r) {
        u[3 * r] = u0[r];
        u[3 * r + 1] = u1[r];
        u[3 * r + 2] = u2[r];
    }
    for (int r = 0; r < 3; ++r) /* R = U V^T */
        for (int c = 0; c < 3; ++c)
            rot[3 * r + c] = u[3 * r] * vec[3 * c] + u[3 * r + 1] * vec[3 * c + 1] +
                             u[3 * r + 2] * vec[3 * c + 2];
    double s[9];
    for (int r = 0; r < 3; ++r) /* S = R^T A, then symmetrized */
        for (int c = 0; c < 3; ++c)
            s[3 * r + c] = rot[r] * k[c] + rot[3 + r] * k[4 + c] + rot[6 + r] * k[8 + c];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) sym[3 * r + c] = 0.5 * (s[3 * r + c] + s[3 * c + r]);
}

/* Unit quaternion (xyzw) of a rotation matrix, Shepperd's method (largest divisor). */
static void quat_from_rot(double q[4], const double m[9])
{
    double tr = m[0] + m[4] + m[8];
    if (tr >= m[0] && tr >= m[4] && tr >= m[8]) {
        double s = sqrt(1.0 + tr) * 2;
        q[0] = (m[7] - m[5]) / s;
        q[1] = (m[2] - m[6]) / s;
        q[2] = (m[3] - m[1]) / s;
        q[3] = 0.25 * s;
    } else if (m[0] >= m[4] && m[0] >= m[8]) {
        double s = sqrt(1.0 + m[0] - m[4] - m[8]) * 2;
        q[0] = 0.25 * s;
        q[1] = (m[1] + m[3]) / s;
        q[2] = (m[2] + m[6]) / s;
        q[3] = (m[7] - m[5]) / s;
    } else if (m[4] >= m[8]) {
        double s = sqrt(1.0 + m[4] - m[0] - m[8]) * 2;
        q[0] = (m[1] + m[3]) / s;
        q[1] = 0.25 * s;
        q[2] = (m[5] + m[7]) / s;
        q[3] = (m[2] - m[6]) / s;
    } else {
        double s = sqrt(1.0 + m[8] - m[0] - m[4]) * 2;
        q[0] = (m[2] + m[6]) / s;
        q[1] = (m[5] + m[7]) / s;
        q[2] = 0.25 * s;
        q[3] = (m[3] - m[1]) / s;
    }
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int i = 0; i < 4; ++i) q[i] /= n;
}

/* One joint: K = Rigid o Scale about the pivot c (DESIGN.md section 2); `scaled` is
 * dqs_has_scale(k). */
static void dqs_prepare_joint(double out[SK_DQS_PREPARED_SIZE], const double k[12], const double c[3],
                              int scaled)
{
    double rot[9], t[3] = {k[3], k[7], k[11]};
    for (int i = 0; i < 12; ++i) out[8 + i] = (i % 5 == 0) ? 1.0 : 0.0; /* identity 3x4 */
    if (scaled) {
        double sym[9];
        polar3(k, rot, sym);
        double sc[3], rsc[3], rc[3];
        for (int r = 0; r < 3; ++r) sc[r] = sym[3 * r] * c[0] + sym[3 * r + 1] * c[1] + sym[3 * r + 2] * c[2];
        for (int r = 0; r < 3; ++r) {
            rsc[r] = rot[3 * r] * sc[0] + rot[3 * r + 1] * sc[1] + rot[3 * r + 2] * sc[2];
            rc[r] = rot[3 * r] * c[0] + rot[3 * r + 1] * c[1] + rot[3 * r + 2] * c[2];
        }
        for (int r = 0; r < 3; ++r) {
            t[r] += rsc[r] - rc[r];
            for (int col = 0; col < 3; ++col) out[8 + 4 * r + col] = sym[3 * r + col];
            out[8 + 4 * r + 3] = c[r] - sc[r];
        }
    } else {
        /* rigid within 1e-5: the rotation is the 3x3 itself (the quaternion is normalized) */
        for (int r = 0; r < 3; ++r)
            for (int col = 0; col < 3; ++col) rot[3 * r + col] = k[4 * r + col];
    }
    double q[4];
    quat_from_rot(q, rot);
    out[0] = q[0];
    out[1] = q[1];
    out[2] = q[2];
    out[3] = q[3];
    /* dual = 0.5 (t, 0) (x) q */
    out[4] = 0.5 * (t[0] * q[3] + t[1] * q[2] - t[2] * q[1]);
    out[5] = 0.5 * (-t[0] * q[2] + t[1] * q[3] + t[2] * q[0]);
    out[6] = 0.5 * (t[0] * q[1] - t[1] * q[0] + t[2] * q[3]);
    out[7] = -0.5 * (t[0] * q[0] + t[1] * q[1] + t[2] * q[2]);
    out[20] = scaled ? 1.0 : 0.0;
}

#define SK_TEMPLATE "skin_dqs.template.c"
#include "skin_instantiate.h"
