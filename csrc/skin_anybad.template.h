/* skin_anybad.template.h -- the validation pass's fast loop: whether any of n contiguous (index,
 * weight) pairs is bad (a weight that is NaN, infinite or negative; an index outside
 * [0, n_joints) under a non-zero weight).  Branch-free, with bitwise rather than
 * short-circuit operators, so the compiler vectorizes it: skin_lbs.c compiles it for the
 * portable path, skin_avx2.c / skin_avx512.c for wider registers.  A negative signed index
 * becomes huge once unsigned, so one comparison covers both ends of the range.
 *
 * Included with SK_T (float or double, or uint8_t / uint16_t for unorm weights, with
 * SK_ANYBAD_UNORM defined: never NaN nor negative, so only the index is checked),
 * SK_ANYBAD_NAME (the function's name) and SK_ANYBAD_LINKAGE (static, or empty) defined.
 * n_joints <= UINT32_MAX. */

#ifdef SK_ANYBAD_UNORM
#define SK_ANYBAD_WEIGHT_BAD(w) 0
#else
#define SK_ANYBAD_WEIGHT_BAD(w) ((!((w) >= 0)) | (!((w) < (SK_T)INFINITY)))
#endif

#define SK_ANYBAD_LOOP(ITYPE, UTYPE, J)                                                          \
    for (int64_t i = 0; i < n; ++i) {                                                            \
        SK_T w = wp[i];                                                                          \
        any |= SK_ANYBAD_WEIGHT_BAD(w) | ((w != 0) & ((UTYPE)((const ITYPE *)ip)[i] >= (J)));    \
    }

SK_ANYBAD_LINKAGE int SK_ANYBAD_NAME(const void *ip, sk_index_type it, const SK_T *wp, int64_t n,
                                     int64_t n_joints)
{
    const uint32_t j32 = (uint32_t)n_joints;
    const uint64_t j64 = (uint64_t)n_joints;
    int any = 0;
    switch (it) {
    case SK_INDEX_U8: SK_ANYBAD_LOOP(uint8_t, uint32_t, j32) break;
    case SK_INDEX_U16: SK_ANYBAD_LOOP(uint16_t, uint32_t, j32) break;
    case SK_INDEX_U32: SK_ANYBAD_LOOP(uint32_t, uint32_t, j32) break;
    case SK_INDEX_I32: SK_ANYBAD_LOOP(int32_t, uint32_t, j32) break;
    default: SK_ANYBAD_LOOP(int64_t, uint64_t, j64) break;
    }
    return any;
}

#undef SK_ANYBAD_LOOP
#undef SK_ANYBAD_WEIGHT_BAD
