/* skeleton.c -- forward kinematics, inverse bind matrices, bind positions and palettes. */
#include "sk.h"
#include "affine.h"

const char *sk_result_string(sk_result r)
{
    switch (r) {
    case SK_OK: return "ok";
    case SK_ERR_BAD_PARENT: return "parent must be -1 or an earlier joint";
    case SK_ERR_NOT_FINITE: return "value is not finite";
    case SK_ERR_SINGULAR: return "matrix is singular";
    case SK_ERR_INDEX_RANGE: return "joint index out of range";
    case SK_ERR_NEGATIVE_WEIGHT: return "weight is negative";
    case SK_ERR_NEEDS_PIVOTS: return "palette has scale or shear: pivots are required";
    case SK_ERR_BAD_ARGUMENT: return "argument out of range";
    case SK_ERR_TOO_LARGE: return "coordinate too large (squared distances would overflow)";
    default: return "unknown result";
    }
}

sk_result sk_validate_parents(const int64_t *parents, int64_t n_joints, int64_t *bad)
{
    for (int64_t j = 0; j < n_joints; ++j) {
        if (parents[j] < -1 || parents[j] >= j) {
            if (bad) *bad = j;
            return SK_ERR_BAD_PARENT;
        }
    }
    return SK_OK;
}

#define SK_T float
#define SK_FN(name) name##_f32
#include "skeleton.template.c"
#undef SK_T
#undef SK_FN

#define SK_T double
#define SK_FN(name) name##_f64
#include "skeleton.template.c"
#undef SK_T
#undef SK_FN
