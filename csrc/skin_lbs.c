/* skin_lbs.c -- linear blend skinning (seeds 000, 002, 004) and influence validation. */
#include <math.h>

#include "sk.h"
#include "skin_simd.h"

#define SK_T float
#define SK_FN(name) name##_f32
#define SK_JOB sk_skin_job_f32
#include "skin_common.template.h"
#include "skin_lbs.template.c"
#undef SK_T
#undef SK_FN
#undef SK_JOB

#define SK_T double
#define SK_FN(name) name##_f64
#define SK_JOB sk_skin_job_f64
#include "skin_common.template.h"
#include "skin_lbs.template.c"
#undef SK_T
#undef SK_FN
#undef SK_JOB

sk_result sk_validate_rigid_indices(const sk_stream *indices, sk_index_type type,
                                    int64_t n_vertices, int64_t n_joints, int64_t *bad)
{
    for (int64_t v = 0; v < n_vertices; ++v) {
        int64_t j = sk_read_index((const char *)indices->data + v * indices->row, type);
        if (j >= n_joints) {
            if (bad) *bad = v;
            return SK_ERR_INDEX_RANGE;
        }
    }
    return SK_OK;
}
