/* cpu.c -- which SIMD path the skinning kernels take.
 *
 * The SIMD kernels live in skin_avx2.c and skin_avx512.c, each compiled with its own target
 * flags (CMakeLists.txt) so that the rest of the core stays portable C11 and one binary runs
 * everywhere.  The build says which of them exist (SK_BUILD_AVX2 / SK_BUILD_AVX512); the CPU
 * says which may run.  Detection asks the compiler's cpuid helper, which also checks that the OS
 * saves the wide registers (XGETBV), so a kernel never executes an instruction the machine
 * cannot run. */
#include "sk.h"

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define SK_X86_DETECT 1
#endif

/* -1: not detected yet.  A plain int: detection is idempotent, so a race only repeats it. */
static int sk_best = -1;
static int sk_current = -1;

static int sk_cpu_has(sk_simd path)
{
#ifdef SK_X86_DETECT
    __builtin_cpu_init();
    if (path == SK_SIMD_AVX2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (path == SK_SIMD_AVX512)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
               __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#endif
    return path == SK_SIMD_SCALAR;
}

int sk_simd_built(sk_simd path)
{
    switch (path) {
    case SK_SIMD_SCALAR: return 1;
#ifdef SK_BUILD_AVX2
    case SK_SIMD_AVX2: return 1;
#endif
#ifdef SK_BUILD_AVX512
    case SK_SIMD_AVX512: return 1;
#endif
    default: return 0;
    }
}

sk_simd sk_simd_best(void)
{
    if (sk_best < 0) {
        int best = SK_SIMD_SCALAR;
        if (sk_simd_built(SK_SIMD_AVX2) && sk_cpu_has(SK_SIMD_AVX2)) best = SK_SIMD_AVX2;
        if (sk_simd_built(SK_SIMD_AVX512) && sk_cpu_has(SK_SIMD_AVX512)) best = SK_SIMD_AVX512;
        sk_best = best;
    }
    return (sk_simd)sk_best;
}

sk_simd sk_simd_current(void)
{
    if (sk_current < 0) sk_current = (int)sk_simd_best();
    return (sk_simd)sk_current;
}

int sk_simd_supported(sk_simd path)
{
    return (int)path >= SK_SIMD_SCALAR && (int)path <= SK_SIMD_AVX512 && sk_simd_built(path) &&
           sk_cpu_has(path);
}

sk_result sk_simd_select(sk_simd path)
{
    if (!sk_simd_supported(path)) return SK_ERR_BAD_ARGUMENT;
    sk_current = (int)path;
    return SK_OK;
}

const char *sk_simd_name(sk_simd path)
{
    switch (path) {
    case SK_SIMD_SCALAR: return "scalar";
    case SK_SIMD_AVX2: return "avx2";
    case SK_SIMD_AVX512: return "avx512";
    default: return "?";
    }
}
