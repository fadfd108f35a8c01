/* skin_rigid.template.c -- rigid skinning (seed 003); included by skin_rigid.c per float type.
 * job->prepared comes from sk_lbs_prepare_* (each joint's 3x4 and cofactor). */

/* The SIMD kernels (the LBS blocks with one joint per vertex) take any strides, no tangents; 0
 * when this call is not theirs. */
static int SK_FN(rigid_simd)(const SK_JOB *job, int64_t begin, int64_t end)
{
    if (job->tangents.data) return 0;
    return SK_FN(sk_simd_run)(SK_WITH_AVX512(SK_FN(sk_rigid_avx512)),
                              SK_WITH_AVX2(SK_FN(sk_rigid_avx2)), job, begin, end);
}

void SK_FN(sk_rigid)(const SK_JOB *job, int64_t begin, int64_t end)
{
    if (begin >= end || SK_FN(rigid_simd)(job, begin, end)) return;
    for (int64_t v = begin; v < end; ++v) {
        int64_t j = sk_read_index((const char *)job->rigid_indices.data + v * job->rigid_indices.row,
                                  job->rigid_index_type);
        if (j < 0 || j >= job->n_joints) { /* negative: not skinned (seed 003's joint >= 0) */
            SK_FN(sk_copy_vertex)(job, v);
            continue;
        }
        const SK_T *m = job->prepared + SK_LBS_PREPARED_SIZE * j; /* column-major, sk.h */
        SK_T p[3], y[3];
        SK_FN(sk_load3)(p, &job->positions, v);
        SK_FN(sk_mul33t)(y, m, 4, p);
        y[0] += m[12];
        y[1] += m[13];
        y[2] += m[14];
        SK_FN(sk_store3)(&job->out_positions, v, y);
        if (job->normals.data) {
            SK_FN(sk_load3)(p, &job->normals, v);
            SK_FN(sk_mul33t)(y, m + 16, 4, p);
            SK_FN(sk_normalize3)(y);
            SK_FN(sk_store3)(&job->out_normals, v, y);
        }
        if (job->tangents.data) SK_FN(sk_store_tangent)(job, v, m, 4, 1);
    }
}
