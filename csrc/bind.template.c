/* bind.template.c -- included by bind.c once per vertex type.
 * Expects SK_T (float or double) and SK_FN(name) (appends _f32 / _f64).  Computes in double. */

static void SK_FN(load_vertex)(double p[3], const SK_T *vertices, ptrdiff_t row, ptrdiff_t elem,
                               int64_t v)
{
    const char *base = (const char *)vertices + v * row;
    for (int c = 0; c < 3; ++c) p[c] = (double)*(const SK_T *)(base + c * elem);
}

/* The read-only pass before any output is written. */
static sk_result SK_FN(check_vertices)(const SK_T *vertices, ptrdiff_t row, ptrdiff_t elem,
                                       int64_t n_vertices, int64_t *bad)
{
    for (int64_t v = 0; v < n_vertices; ++v) {
        double p[3];
        SK_FN(load_vertex)(p, vertices, row, elem, v);
        if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]))) {
            if (bad) *bad = v;
            return SK_ERR_NOT_FINITE;
        }
        /* Every rule compares squared distances: refuse what would overflow them rather than
         * rank infinities (which silently picks joint 0 and gives NaN weights). */
        if (!(fabs(p[0]) <= SK_BIND_MAX_COORD && fabs(p[1]) <= SK_BIND_MAX_COORD &&
              fabs(p[2]) <= SK_BIND_MAX_COORD)) {
            if (bad) *bad = v;
            return SK_ERR_TOO_LARGE;
        }
    }
    return SK_OK;
}

/* Write slot `slot` of vertex v; a weight that is zero in SK_T gets index 0 (DESIGN.md 1).
 * joint < 0 marks an empty slot. */
static void SK_FN(put)(int32_t *indices, SK_T *weights, const sk_bind_explain *ex, int64_t k,
                       int64_t v, int64_t slot, int64_t joint, double w, double dist, double t)
{
    int64_t i = v * k + slot;
    SK_T ws = joint < 0 ? (SK_T)0 : (SK_T)w;
    weights[i] = ws;
    indices[i] = ws != (SK_T)0 ? (int32_t)joint : 0;
    if (ex) {
        if (ex->bones) ex->bones[i] = joint < 0 ? -1 : (int32_t)joint;
        if (ex->distances) ex->distances[i] = joint < 0 ? NAN : dist;
        if (ex->t) ex->t[i] = joint < 0 ? NAN : t;
    }
}

sk_result SK_FN(sk_bind_nearest)(int32_t *indices, SK_T *weights, const sk_bind_explain *explain,
                                 const SK_T *vertices, ptrdiff_t row, ptrdiff_t elem,
                                 int64_t n_vertices, const sk_bones *bones, int to_bone,
                                 int64_t *bad)
{
    if (bones->n_joints < 1) return SK_ERR_BAD_ARGUMENT;
    sk_result r = SK_FN(check_vertices)(vertices, row, elem, n_vertices, bad);
    if (r != SK_OK) return r;
    for (int64_t v = 0; v < n_vertices; ++v) {
        double p[3], best = INFINITY, best_t = 0.0;
        int64_t bj = 0;
        SK_FN(load_vertex)(p, vertices, row, elem, v);
        for (int64_t j = 0; j < bones->n_joints; ++j) {
            double t;
            double d2 = joint_or_bone_dist2(bones, j, p, to_bone, &t);
            if (d2 < best) {
                best = d2;
                best_t = t;
                bj = j;
            }
        }
        SK_FN(put)(indices, weights, explain, 1, v, 0, bj, 1.0, sqrt(best), best_t);
    }
    return SK_OK;
}

sk_result SK_FN(sk_bind_proximity)(int32_t *indices, SK_T *weights,
                                   const sk_bind_explain *explain, const SK_T *vertices,
                                   ptrdiff_t row, ptrdiff_t elem, int64_t n_vertices,
                                   const sk_bones *bones, int64_t k, double power, int to_bone,
                                   void *scratch, int64_t *bad)
{
    if (bones->n_joints < 1 || k < 1 || !isfinite(power) || power < 0.0)
        return SK_ERR_BAD_ARGUMENT;
    sk_result r = SK_FN(check_vertices)(vertices, row, elem, n_vertices, bad);
    if (r != SK_OK) return r;
    sk_slot *s = (sk_slot *)scratch;
    for (int64_t v = 0; v < n_vertices; ++v) {
        double p[3];
        int64_t n = 0;
        SK_FN(load_vertex)(p, vertices, row, elem, v);
        for (int64_t j = 0; j < bones->n_joints; ++j) {
            sk_slot c;
            c.key = joint_or_bone_dist2(bones, j, p, to_bone, &c.t);
            c.joint = j;
            slot_insert(s, &n, k, c);
        }
        for (int64_t i = 0; i < n; ++i) s[i].dist = sqrt(s[i].key);
        /* w_i = (d_0 / d_i)^power / sum: proportional to 1 / d_i^power without overflowing for
         * tiny distances; s[0] is the nearest, so every ratio is in [0, 1]. */
        double sum = 0.0;
        int at_joint = s[0].dist == 0.0;
        for (int64_t i = 0; i < n; ++i) {
            double w = at_joint ? (i == 0 ? 1.0 : 0.0)
                                : (power == 0.0 ? 1.0 : pow(s[0].dist / s[i].dist, power));
            s[i].key = w;
            sum += w;
        }
        for (int64_t i = 0; i < k; ++i) {
            if (i < n)
                SK_FN(put)(indices, weights, explain, k, v, i, s[i].joint, s[i].key / sum,
                           s[i].dist, s[i].t);
            else
                SK_FN(put)(indices, weights, explain, k, v, i, -1, 0.0, 0.0, 0.0);
        }
    }
    return SK_OK;
}

sk_result SK_FN(sk_bind_sphere_radii)(double *radii, const SK_T *vertices, ptrdiff_t row,
                                      ptrdiff_t elem, int64_t n_vertices, const sk_bones *bones,
                                      double multiplier, int64_t *bad)
{
    if (bones->n_joints < 1 || !isfinite(multiplier) || multiplier < 0.0)
        return SK_ERR_BAD_ARGUMENT;
    sk_result r = SK_FN(check_vertices)(vertices, row, elem, n_vertices, bad);
    if (r != SK_OK) return r;
    /* A finite multiplier can still overflow a radius (1e308 times a distance of 10): refuse it
     * before anything is written.  The first vertex bounds every joint's nearest distance; only
     * a joint whose bound overflows needs its exact nearest distance checked. */
    double first[3];
    if (n_vertices > 0) SK_FN(load_vertex)(first, vertices, row, elem, 0);
    for (int64_t j = 0; n_vertices > 0 && j < bones->n_joints; ++j) {
        if (isfinite(multiplier * sqrt(dist2(first, bones->joints + 3 * j)))) continue;
        double nearest = INFINITY;
        for (int64_t v = 0; v < n_vertices; ++v) {
            double p[3];
            SK_FN(load_vertex)(p, vertices, row, elem, v);
            double d2 = dist2(p, bones->joints + 3 * j);
            if (d2 < nearest) nearest = d2;
        }
        if (!isfinite(multiplier * sqrt(nearest))) {
            if (bad) *bad = j;
            return SK_ERR_BAD_ARGUMENT;
        }
    }
    for (int64_t j = 0; j < bones->n_joints; ++j) radii[j] = INFINITY;
    for (int64_t v = 0; v < n_vertices; ++v) {
        double p[3];
        SK_FN(load_vertex)(p, vertices, row, elem, v);
        for (int64_t j = 0; j < bones->n_joints; ++j) {
            double d2 = dist2(p, bones->joints + 3 * j);
            if (d2 < radii[j]) radii[j] = d2;
        }
    }
    /* No vertices: no nearest distance, so no sphere (radius 0), not multiplier * inf. */
    for (int64_t j = 0; j < bones->n_joints; ++j)
        radii[j] = n_vertices > 0 ? multiplier * sqrt(radii[j]) : 0.0;
    return SK_OK;
}

sk_result SK_FN(sk_bind_volume_spheres)(int32_t *indices, SK_T *weights,
                                        const sk_bind_explain *explain, const SK_T *vertices,
                                        ptrdiff_t row, ptrdiff_t elem, int64_t n_vertices,
                                        const sk_bones *bones, const double *radii, int64_t *bad)
{
    if (bones->n_joints < 1 || !finite_nonneg(radii, bones->n_joints)) return SK_ERR_BAD_ARGUMENT;
    sk_result r = SK_FN(check_vertices)(vertices, row, elem, n_vertices, bad);
    if (r != SK_OK) return r;
    for (int64_t v = 0; v < n_vertices; ++v) {
        double p[3], d2;
        SK_FN(load_vertex)(p, vertices, row, elem, v);
        int64_t j = nearest_joint(bones, p, &d2);
        double d = sqrt(d2), rj = radii[j];
        double t = rj > 0.0 ? d / rj : NAN;
        int64_t parent = bones->parents[j];
        if (parent >= 0 && d < rj) {
            /* Linear in d, so w_parent reaches 0 exactly at the sphere's surface: the weights
             * are continuous there. */
            double wp = 0.5 * (1.0 - d / rj);
            SK_FN(put)(indices, weights, explain, 2, v, 0, j, 1.0 - wp, d, t);
            SK_FN(put)(indices, weights, explain, 2, v, 1, parent, wp,
                       sqrt(dist2(p, bones->joints + 3 * parent)), t);
        } else {
            SK_FN(put)(indices, weights, explain, 2, v, 0, j, 1.0, d, t);
            SK_FN(put)(indices, weights, explain, 2, v, 1, -1, 0.0, 0.0, 0.0);
        }
    }
    return SK_OK;
}

sk_result SK_FN(sk_bind_projection)(int32_t *indices, SK_T *weights,
                                    const sk_bind_explain *explain, const SK_T *vertices,
                                    ptrdiff_t row, ptrdiff_t elem, int64_t n_vertices,
                                    const sk_bones *bones, int64_t *bad)
{
    if (bones->n_joints < 1) return SK_ERR_BAD_ARGUMENT;
    sk_result r = SK_FN(check_vertices)(vertices, row, elem, n_vertices, bad);
    if (r != SK_OK) return r;
    for (int64_t v = 0; v < n_vertices; ++v) {
        double p[3], d2;
        SK_FN(load_vertex)(p, vertices, row, elem, v);
        int64_t j = nearest_joint(bones, p, &d2);
        int64_t parent = bones->parents[j], chosen = j;
        double t = NAN;
        if (parent >= 0) {
            const double *pj = bones->joints + 3 * j, *pp = bones->joints + 3 * parent;
            double bone[3] = {pp[0] - pj[0], pp[1] - pj[1], pp[2] - pj[2]};
            double s = (p[0] - pj[0]) * bone[0] + (p[1] - pj[1]) * bone[1] +
                       (p[2] - pj[2]) * bone[2];
            double l2 = bone[0] * bone[0] + bone[1] * bone[1] + bone[2] * bone[2];
            if (l2 > 0.0) t = s / l2;
            /* Along parent -> j the vertex is on the parent's bone, which rotating the parent
             * moves; past j it is on j's side. */
            if (s > 0.0) chosen = parent;
        }
        if (explain) {
            sk_bind_explain ex = *explain;
            SK_FN(put)(indices, weights, NULL, 1, v, 0, chosen, 1.0, 0.0, 0.0);
            if (ex.bones) ex.bones[v] = (int32_t)j;
            if (ex.distances) ex.distances[v] = sqrt(d2);
            if (ex.t) ex.t[v] = t;
        } else {
            SK_FN(put)(indices, weights, NULL, 1, v, 0, chosen, 1.0, 0.0, 0.0);
        }
    }
    return SK_OK;
}

sk_result SK_FN(sk_bind_height_bands)(int32_t *indices, SK_T *weights,
                                      const sk_bind_explain *explain, const SK_T *vertices,
                                      ptrdiff_t row, ptrdiff_t elem, int64_t n_vertices,
                                      const int64_t *chain, const double *heights, int64_t n,
                                      const double origin[3], const double axis[3], int64_t *bad)
{
    if (n < 1) return SK_ERR_BAD_ARGUMENT;
    for (int64_t b = 0; b < n; ++b)
        if (!isfinite(heights[b]) || (b > 0 && !(heights[b] > heights[b - 1])))
            return SK_ERR_BAD_ARGUMENT;
    sk_result r = SK_FN(check_vertices)(vertices, row, elem, n_vertices, bad);
    if (r != SK_OK) return r;
    for (int64_t v = 0; v < n_vertices; ++v) {
        double p[3];
        SK_FN(load_vertex)(p, vertices, row, elem, v);
        double h = (p[0] - origin[0]) * axis[0] + (p[1] - origin[1]) * axis[1] +
                   (p[2] - origin[2]) * axis[2];
        if (h < heights[0] || n == 1) {
            SK_FN(put)(indices, weights, explain, 2, v, 0, chain[0], 1.0, fabs(h - heights[0]), 0.0);
            SK_FN(put)(indices, weights, explain, 2, v, 1, -1, 0.0, 0.0, 0.0);
        } else if (h >= heights[n - 1]) {
            SK_FN(put)(indices, weights, explain, 2, v, 0, chain[n - 1], 1.0,
                       fabs(h - heights[n - 1]), 1.0);
            SK_FN(put)(indices, weights, explain, 2, v, 1, -1, 0.0, 0.0, 0.0);
        } else {
            /* The band b with heights[b] <= h < heights[b + 1], by bisection. */
            int64_t lo = 0, hi = n - 1;
            while (hi - lo > 1) {
                int64_t mid = lo + (hi - lo) / 2;
                if (heights[mid] <= h) lo = mid; else hi = mid;
            }
            double f = (h - heights[lo]) / (heights[hi] - heights[lo]);
            /* Slots in decreasing weight, as every binder writes them. */
            int first = f > 0.5 ? 1 : 0;
            int64_t jj[2] = {chain[lo], chain[hi]};
            double ww[2] = {1.0 - f, f}, dd[2] = {h - heights[lo], heights[hi] - h};
            SK_FN(put)(indices, weights, explain, 2, v, 0, jj[first], ww[first], dd[first], f);
            SK_FN(put)(indices, weights, explain, 2, v, 1, jj[1 - first], ww[1 - first],
                       dd[1 - first], f);
        }
    }
    return SK_OK;
}

sk_result SK_FN(sk_bind_envelope)(int32_t *indices, SK_T *weights, const sk_bind_explain *explain,
                                  const SK_T *vertices, ptrdiff_t row, ptrdiff_t elem,
                                  int64_t n_vertices, const sk_bones *bones,
                                  const double *head_radius, const double *tail_radius,
                                  const double *distance, int64_t k, int normalize,
                                  void *scratch, int64_t *bad)
{
    int64_t J = bones->n_joints;
    if (J < 1 || k < 1 || !finite_nonneg(head_radius, J) || !finite_nonneg(tail_radius, J) ||
        !finite_nonneg(distance, J))
        return SK_ERR_BAD_ARGUMENT;
    sk_result r = SK_FN(check_vertices)(vertices, row, elem, n_vertices, bad);
    if (r != SK_OK) return r;
    sk_slot *s = (sk_slot *)scratch;
    for (int64_t v = 0; v < n_vertices; ++v) {
        double p[3];
        int64_t n = 0;
        SK_FN(load_vertex)(p, vertices, row, elem, v);
        for (int64_t j = 0; j < J; ++j) {
            sk_slot c;
            double f = bone_envelope(bones, j, p, head_radius[j], tail_radius[j], distance[j],
                                     &c.dist, &c.t);
            if (!(f > 0.0)) continue;
            c.key = -f;
            c.joint = j;
            slot_insert(s, &n, k, c);
        }
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) sum += -s[i].key;
        double scale = normalize && sum > 0.0 ? 1.0 / sum : 1.0;
        for (int64_t i = 0; i < k; ++i) {
            if (i < n)
                SK_FN(put)(indices, weights, explain, k, v, i, s[i].joint, -s[i].key * scale,
                           s[i].dist, s[i].t);
            else
                SK_FN(put)(indices, weights, explain, k, v, i, -1, 0.0, 0.0, 0.0);
        }
    }
    return SK_OK;
}
