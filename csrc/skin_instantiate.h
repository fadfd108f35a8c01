/* skin_instantiate.h -- compiles the template named by SK_TEMPLATE twice, for float (names
 * ending in _f32) and for double (_f64), with the kernels' shared inline helpers
 * (skin_common.template.h) instantiated for the same type.  Usage:
 *
 *     #define SK_TEMPLATE "skin_lbs.template.c"
 *     #include "skin_instantiate.h"
 *
 * SK_IS_F32 is 1 in the float instantiation and 0 in the double one, for code that exists for
 * one of them only (the float32 SIMD hand-offs).  Deliberately without an include guard: every
 * kernel file includes it once. */
#ifndef SK_TEMPLATE
#error "define SK_TEMPLATE as the template's file name before including skin_instantiate.h"
#endif

#include <string.h>

#define SK_T float
#define SK_FN(name) name##_f32
#define SK_JOB sk_skin_job_f32
#define SK_IS_F32 1
#include "skin_common.template.h"
#include SK_TEMPLATE
#undef SK_T
#undef SK_FN
#undef SK_JOB
#undef SK_IS_F32

#define SK_T double
#define SK_FN(name) name##_f64
#define SK_JOB sk_skin_job_f64
#define SK_IS_F32 0
#include "skin_common.template.h"
#include SK_TEMPLATE
#undef SK_T
#undef SK_FN
#undef SK_JOB
#undef SK_IS_F32

#undef SK_TEMPLATE
