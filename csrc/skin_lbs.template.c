/* skin_lbs.template.c -- influence validation, LBS preparation and the LBS kernel; included by
 * skin_lbs.c once per float type (SK_T, SK_FN, SK_JOB defined). */

sk_result SK_FN(sk_validate_influences)(const sk_influences *in, int64_t n_vertices,
                                        int64_t n_joints, int64_t *bad)
{
    if (in->k < 1 || n_joints < 1) return SK_ERR_BAD_ARGUMENT;
    for (int64_t v = 0; v < n_vertices; ++v) {
        const char *ip = (const char *)in->indices.data + v * in->indices.row;
        const char *wp = (const char *)in->weights.data + v * in->weights.row;
        for (int64_t k = 0; k < in->k; ++k) {
            SK_T w = SK_FN(sk_read_weight)(wp + k * in->weights.elem, in->weight_type);
            sk_result r = SK_OK;
            if (!isfinite((double)w))
                r = SK_ERR_NOT_FINITE;
            else if (w < 0)
                r = SK_ERR_NEGATIVE_WEIGHT;
            else if (w != 0) {
                int64_t j = sk_read_index(ip + k * in->indices.elem, in->index_type);
                if (j < 0 || j >= n_joints) r = SK_ERR_INDEX_RANGE;
            }
            if (r != SK_OK) {
                if (bad) *bad = v;
                return r;
            }
        }
    }
    return SK_OK;
}

sk_result SK_FN(sk_lbs_prepare)(SK_T *prepared, const SK_T *palette, int64_t n_joints,
                                int64_t *bad)
{
    for (int64_t j = 0; j < n_joints; ++j)
        for (int i = 0; i < 12; ++i)
            if (!isfinite((double)palette[12 * j + i])) {
                if (bad) *bad = j;
                return SK_ERR_NOT_FINITE;
            }
    for (int64_t j = 0; j < n_joints; ++j) {
        SK_T *p = prepared + SK_LBS_PREPARED_SIZE * j;
        for (int i = 0; i < 12; ++i) p[i] = palette[12 * j + i];
        SK_FN(sk_cofactor)(p + 12, palette + 12 * j);
    }
    return SK_OK;
}

/* One vertex: M = sum w_i K_i (3x4) and, for the "joint" normal rule, C = sum w_i cof(A_i). */
static void SK_FN(lbs_vertex)(const SK_JOB *job, int64_t v)
{
    const sk_influences *in = &job->influences;
    const int joint_rule = job->normals.data && job->normal_rule == SK_NORMALS_JOINT;
    int64_t idx[SK_SLOTS];
    SK_T w[SK_SLOTS];
    SK_T m[12] = {0}, c[9] = {0}, total = 0;
    for (int64_t k0 = 0; k0 < in->k; k0 += SK_SLOTS) {
        int64_t n = in->k - k0 < SK_SLOTS ? in->k - k0 : SK_SLOTS;
        SK_FN(sk_load_slots)(in, v, k0, n, job->n_joints, idx, w);
        for (int64_t i = 0; i < n; ++i) {
            const SK_T wi = w[i];
            const SK_T *pj = job->prepared + SK_LBS_PREPARED_SIZE * idx[i];
            total += wi;
            for (int q = 0; q < 12; ++q) m[q] += wi * pj[q];
            if (joint_rule)
                for (int q = 0; q < 9; ++q) c[q] += wi * pj[12 + q];
        }
    }
    if (!(total > (SK_T)1e-6)) {
        SK_FN(sk_copy_vertex)(job, v);
        return;
    }
    SK_T p[3], y[3];
    SK_FN(sk_load3)(p, &job->positions, v);
    SK_FN(sk_mul33)(y, m, 4, p);
    y[0] += m[3];
    y[1] += m[7];
    y[2] += m[11];
    SK_FN(sk_store3)(&job->out_positions, v, y);
    if (job->normals.data) {
        SK_T nn[3];
        if (!joint_rule) SK_FN(sk_cofactor)(c, m); /* "blend": cofactor of the blended 3x3 */
        SK_FN(sk_load3)(nn, &job->normals, v);
        SK_FN(sk_mul33)(y, c, 3, nn);
        SK_FN(sk_normalize3)(y);
        SK_FN(sk_store3)(&job->out_normals, v, y);
    }
    if (job->tangents.data) SK_FN(sk_store_tangent)(job, v, m, 4);
}

void SK_FN(sk_lbs)(const SK_JOB *job, int64_t begin, int64_t end)
{
    for (int64_t v = begin; v < end; ++v) SK_FN(lbs_vertex)(job, v);
}
