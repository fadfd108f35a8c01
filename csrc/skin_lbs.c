/* skin_lbs.c -- linear blend skinning (seeds 000, 002, 004) and influence validation. */
#include <math.h>

#include "sk.h"
#include "skin_simd.h"

/* The validation pass's fast loop for unorm weights (skin_lbs.template.c's first_bad_chunk):
 * skin_anybad.template.h's, whose only check for them is an index outside [0, n_joints) under
 * a non-zero weight. */
#define SK_ANYBAD_UNORM
#define SK_ANYBAD_LINKAGE static
#define SK_T uint8_t
#define SK_ANYBAD_NAME unorm8_any_bad
#include "skin_anybad.template.h"
#undef SK_T
#undef SK_ANYBAD_NAME
#define SK_T uint16_t
#define SK_ANYBAD_NAME unorm16_any_bad
#include "skin_anybad.template.h"
#undef SK_T
#undef SK_ANYBAD_NAME
#undef SK_ANYBAD_LINKAGE
#undef SK_ANYBAD_UNORM

#define SK_TEMPLATE "skin_lbs.template.c"
#include "skin_instantiate.h"

/* The rigid indices' fast check (skin_rigidbad.template.h), portable build. */
#define SK_RIGIDBAD_LINKAGE static
#define SK_RIGIDBAD_NAME rigid_any_bad
#include "skin_rigidbad.template.h"
#undef SK_RIGIDBAD_NAME
#undef SK_RIGIDBAD_LINKAGE

sk_result sk_validate_rigid_indices(const sk_stream *indices, sk_index_type type,
                                    int64_t n_vertices, int64_t n_joints, int64_t *bad)
{
    static const ptrdiff_t isize[] = {1, 2, 4, 4, 8};
    const int64_t chunk = 4096;
    int (*any_bad)(const void *, sk_index_type, int64_t, int64_t) = rigid_any_bad;
#ifdef SK_BUILD_AVX512
    if (sk_simd_current() == SK_SIMD_AVX512) any_bad = sk_rigid_any_bad_avx512;
#endif
#ifdef SK_BUILD_AVX2
    if (sk_simd_current() == SK_SIMD_AVX2) any_bad = sk_rigid_any_bad_avx2;
#endif
    for (int64_t v0 = 0; v0 < n_vertices; v0 += chunk) {
        int64_t v1 = n_vertices - v0 < chunk ? n_vertices : v0 + chunk;
        const char *p = (const char *)indices->data + v0 * indices->row;
        /* contiguous indices: a chunk at a time, re-read one by one only when it fails */
        if (indices->row == isize[type] && !any_bad(p, type, v1 - v0, n_joints)) continue;
        for (int64_t v = v0; v < v1; ++v) {
            int64_t j = sk_read_index((const char *)indices->data + v * indices->row, type);
            if (j >= n_joints) {
                if (bad) *bad = v;
                return SK_ERR_INDEX_RANGE;
            }
        }
    }
    return SK_OK;
}

int sk_lbs_table_f32(float *table, const float *prepared, int64_t n_joints)
{
#ifdef SK_BUILD_AVX512
    if (n_joints < 1 || n_joints > SK_LBS_TABLE_MAX_J || sk_simd_current() != SK_SIMD_AVX512)
        return 0;
    for (int64_t j = 0; j < n_joints; ++j) { /* the joints' rows in order, each read once */
        const float *row = prepared + SK_LBS_PREPARED_SIZE * j;
        for (int c = 0; c < 4; ++c)
            for (int r = 0; r < 3; ++r) table[SK_LBS_TABLE_MAX_J * (3 * c + r) + j] = row[4 * c + r];
    }
    for (int e = 0; e < 12; ++e)
        for (int64_t j = n_joints; j < SK_LBS_TABLE_MAX_J; ++j) table[SK_LBS_TABLE_MAX_J * e + j] = 0;
    return 1;
#else
    (void)table, (void)prepared, (void)n_joints;
    return 0;
#endif
}
