/* skin_avx2.c -- the SIMD skinning kernels compiled for AVX2 + FMA.  CMakeLists.txt gives this
 * file alone `-mavx2 -mfma` (GCC / Clang on x86-64); cpu.c runs it only on CPUs that have both. */
#if defined(__AVX2__) && defined(__FMA__)
#define SK_ISA(name, suffix) name##_avx2##suffix
#include "skin_simd.template.c"
#else
typedef int sk_skin_avx2_unused; /* built without the flags: nothing to compile */
#endif
