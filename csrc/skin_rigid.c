/* skin_rigid.c -- rigid skinning: one joint per vertex (seed 003). */
#include <math.h>

#include "sk.h"
#include "skin_simd.h"

#define SK_T float
#define SK_FN(name) name##_f32
#define SK_JOB sk_skin_job_f32
#include "skin_common.template.h"
#include "skin_rigid.template.c"
#undef SK_T
#undef SK_FN
#undef SK_JOB

#define SK_T double
#define SK_FN(name) name##_f64
#define SK_JOB sk_skin_job_f64
#include "skin_common.template.h"
#include "skin_rigid.template.c"
#undef SK_T
#undef SK_FN
#undef SK_JOB
