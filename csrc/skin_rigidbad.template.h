/* skin_rigidbad.template.h -- the validation pass's fast loop for rigid skinning's indices:
 * whether any of n contiguous indices is >= n_joints (a negative one is fine: that vertex is
 * copied).  Branch-free, each type compared in its own width so the compiler vectorizes it
 * (widened to 64 bits first, a uint16 check took about 2 cycles an index with SSE2, which has
 * no 64-bit compare; int64 needs AVX2's): skin_lbs.c compiles it for the portable path,
 * skin_avx2.c / skin_avx512.c for wider registers.  A bound past the type's largest value
 * leaves nothing to find.
 *
 * Included with SK_RIGIDBAD_NAME (the function's name) and SK_RIGIDBAD_LINKAGE (static, or
 * empty) defined. */

#define SK_RIGIDBAD_LOOP(T, TMAX)                                                                \
    do {                                                                                         \
        if (n_joints > (int64_t)(TMAX)) return 0;                                                \
        const T *q = (const T *)p, limit = (T)n_joints;                                          \
        for (int64_t i = 0; i < n; ++i) any |= q[i] >= limit;                                    \
    } while (0)

SK_RIGIDBAD_LINKAGE int SK_RIGIDBAD_NAME(const void *p, sk_index_type it, int64_t n,
                                         int64_t n_joints)
{
    int any = 0;
    switch (it) {
    case SK_INDEX_U8: SK_RIGIDBAD_LOOP(uint8_t, UINT8_MAX); break;
    case SK_INDEX_U16: SK_RIGIDBAD_LOOP(uint16_t, UINT16_MAX); break;
    case SK_INDEX_U32: SK_RIGIDBAD_LOOP(uint32_t, UINT32_MAX); break;
    case SK_INDEX_I32: SK_RIGIDBAD_LOOP(int32_t, INT32_MAX); break;
    default: SK_RIGIDBAD_LOOP(int64_t, INT64_MAX); break;
    }
    return any;
}

#undef SK_RIGIDBAD_LOOP
