/* cpu_probe.c -- not part of the core: CMakeLists.txt runs it at configure time when
 * SKINKIT_SIMD_BUILD=native, and builds the SIMD kernels of the ISAs it prints (a CMake list),
 * asking the CPU as cpu.c's sk_cpu_has does at run time. */
#include <stdio.h>

int main(void)
{
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                 __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
    printf("%s%s", avx2 ? "avx2" : "", avx512 ? ";avx512" : "");
    return 0;
}
