/* cpu_probe.c -- not part of the core: CMakeLists.txt runs it at configure time when
 * SKINKIT_SIMD_BUILD=native, and builds the SIMD kernels of the ISAs it prints (a CMake list).
 * The answer is cpu.c's own (sk_simd_supported, as for a build with every ISA), so the build
 * and the run-time dispatch ask the CPU the same questions. */
#define SK_BUILD_AVX2
#define SK_BUILD_AVX512
#include "cpu.c"

#include <stdio.h>

int main(void)
{
    const char *sep = "";
    for (int p = SK_SIMD_AVX2; p <= SK_SIMD_AVX512; ++p) {
        if (!sk_simd_supported((sk_simd)p)) continue;
        printf("%s%s", sep, sk_simd_name((sk_simd)p));
        sep = ";";
    }
    return 0;
}
