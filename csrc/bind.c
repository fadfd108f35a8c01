/* bind.c -- automatic binding (seeds 001-004, Blender envelopes); DESIGN.md section 3.
 *
 * Every binder is one pass over the vertices, O(V * bones) with no allocation: the geometry is
 * done here in double on sk_bones, and bind.template.c adds the float / double vertex reading
 * and weight writing. */
#include <math.h>

#include "sk.h"

/* One candidate slot of the k-best selections (proximity, envelope). */
typedef struct sk_slot {
    double key;      /* what is ranked: squared distance (smaller first) or -factor */
    double dist;
    double t;
    int64_t joint;
} sk_slot;

size_t sk_bind_scratch_size(int64_t k)
{
    return sizeof(sk_slot) * (size_t)(k > 0 ? k : 1);
}

/* Insert into the sorted best-`k` list `s` of `*n` slots.  Candidates arrive in increasing joint
 * order and only a strictly better key displaces, so ties keep the smaller joint index. */
static void slot_insert(sk_slot *s, int64_t *n, int64_t k, sk_slot c)
{
    int64_t i = *n < k ? (*n)++ : k;
    if (i == k) {
        if (!(c.key < s[k - 1].key)) return;
        i = k - 1;
    }
    while (i > 0 && c.key < s[i - 1].key) {
        s[i] = s[i - 1];
        --i;
    }
    s[i] = c;
}

static double dist2(const double a[3], const double b[3])
{
    double x = a[0] - b[0], y = a[1] - b[1], z = a[2] - b[2];
    return x * x + y * y + z * z;
}

/* Squared distance from v to the segment a -> b and the closest point's parameter in [0, 1]. */
static double segment_dist2(const double v[3], const double a[3], const double b[3], double *t)
{
    double ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double av[3] = {v[0] - a[0], v[1] - a[1], v[2] - a[2]};
    double l2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2];
    double s = 0.0;
    if (l2 > 0.0) {
        s = (av[0] * ab[0] + av[1] * ab[1] + av[2] * ab[2]) / l2;
        s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
    }
    double p[3] = {a[0] + s * ab[0], a[1] + s * ab[1], a[2] + s * ab[2]};
    *t = s;
    return dist2(v, p);
}

/* Squared distance from v to bone j (its nearest segment, the first on ties). */
static double bone_dist2(const sk_bones *b, int64_t j, const double v[3], double *t)
{
    const double *head = b->joints + 3 * j;
    double best = INFINITY;
    *t = 0.0;
    for (int64_t s = b->seg_start[j]; s < b->seg_start[j + 1]; ++s) {
        double ts;
        double d2 = segment_dist2(v, head, b->seg_end + 3 * s, &ts);
        if (d2 < best) {
            best = d2;
            *t = ts;
        }
    }
    return best;
}

/* Squared distance from v to joint j's point or bone, as `to_bone` asks. */
static double joint_or_bone_dist2(const sk_bones *b, int64_t j, const double v[3], int to_bone,
                                  double *t)
{
    if (to_bone) return bone_dist2(b, j, v, t);
    *t = 0.0;
    return dist2(v, b->joints + 3 * j);
}

/* The nearest joint point to v (ties: smallest index) and its squared distance. */
static int64_t nearest_joint(const sk_bones *b, const double v[3], double *d2)
{
    int64_t best = 0;
    double bd = INFINITY;
    for (int64_t j = 0; j < b->n_joints; ++j) {
        double d = dist2(v, b->joints + 3 * j);
        if (d < bd) {
            bd = d;
            best = j;
        }
    }
    *d2 = bd;
    return best;
}

double sk_envelope_factor(const double v[3], const double head[3], const double tail[3],
                          double rad_head, double rad_tail, double dist, double *distance,
                          double *t)
{
    /* Blender's distfactor_to_bone, step for step (in double), so envelope weights compare with
     * Blender's "With Envelope Weights" numerically. */
    double axis[3] = {tail[0] - head[0], tail[1] - head[1], tail[2] - head[2]};
    double l = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    if (l > 0.0) {
        axis[0] /= l;
        axis[1] /= l;
        axis[2] /= l;
    } else {
        axis[0] = axis[1] = axis[2] = 0.0;
    }
    double pv[3] = {v[0] - head[0], v[1] - head[1], v[2] - head[2]};
    double a = axis[0] * pv[0] + axis[1] * pv[1] + axis[2] * pv[2];
    double d2, r, tt;
    if (a < 0.0) {
        d2 = dist2(v, head);
        r = rad_head;
        tt = 0.0;
    } else if (a > l) {
        d2 = dist2(v, tail);
        r = rad_tail;
        tt = 1.0;
    } else {
        d2 = pv[0] * pv[0] + pv[1] * pv[1] + pv[2] * pv[2] - a * a;
        if (l != 0.0) {
            tt = a / l;
            r = tt * rad_tail + (1.0 - tt) * rad_head;
        } else {
            tt = 0.0;
            r = rad_head;
        }
    }
    if (distance) *distance = sqrt(d2 > 0.0 ? d2 : 0.0);
    if (t) *t = tt;
    if (d2 < r * r) return 1.0;
    double outer = (r + dist) * (r + dist);
    if (dist == 0.0 || d2 >= outer) return 0.0;
    double x = sqrt(d2) - r;
    return 1.0 - (x * x) / (dist * dist);
}

/* Envelope factor of bone j: the largest over its segments (the first on ties). */
static double bone_envelope(const sk_bones *b, int64_t j, const double v[3], double rh,
                            double rt, double dist, double *distance, double *t)
{
    const double *head = b->joints + 3 * j;
    double best = -1.0;
    *distance = 0.0;
    *t = 0.0;
    for (int64_t s = b->seg_start[j]; s < b->seg_start[j + 1]; ++s) {
        double ds, ts;
        double f = sk_envelope_factor(v, head, b->seg_end + 3 * s, rh, rt, dist, &ds, &ts);
        if (f > best) {
            best = f;
            *distance = ds;
            *t = ts;
        }
    }
    return best;
}

static int finite_nonneg(const double *x, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        if (!(isfinite(x[i]) && x[i] >= 0.0)) return 0;
    return 1;
}

#define SK_T float
#define SK_FN(name) name##_f32
#include "bind.template.c"
#undef SK_T
#undef SK_FN

#define SK_T double
#define SK_FN(name) name##_f64
#include "bind.template.c"
#undef SK_T
#undef SK_FN
