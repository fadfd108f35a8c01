/* skin_avx512.c -- the SIMD skinning kernels compiled for AVX-512 F/DQ/BW/VL (and AVX2 + FMA).
 * CMakeLists.txt gives this file alone the flags; cpu.c runs it only on CPUs that have them. */
#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512BW__) && \
    defined(__AVX512VL__) && defined(__FMA__)
#define SK_ISA(name, suffix) name##_avx512##suffix
#include "skin_simd.template.c"
#else
typedef int sk_skin_avx512_unused; /* built without the flags: nothing to compile */
#endif
