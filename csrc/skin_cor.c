/* skin_cor.c -- skinning with optimized centers of rotation (Le & Hodgins 2016) and Maya-style
 * per-vertex blending of LBS and DQS (issue 9).  Both reuse the per-vertex LBS and DQS code of
 * skin_common.template.h; CoR takes the DQS rotation and replaces its translation by the LBS of
 * the vertex's center, keeping DQS's two-phase scale split (DESIGN.md section 2). */
#include <math.h>
#include <stdlib.h>

#include "sk.h"
#include "skin_simd.h"

/* The rigid part Rigid(p) = R p + t_r of one joint as a row-major 3x4, in double, from its DQS
 * block (dq: unit dual quaternion, dq[20] = has scale).  A joint without scale keeps its own
 * 3x4, so that a vertex bound to it alone is exactly rigid skinning; a scaled joint's R comes
 * back from its quaternion (polar3's R, to rounding) and t_r = 2 (s d - dw r + r x d). */
static void cor_rigid_part(double out[12], const double k[12], const double dq[SK_DQS_PREPARED_SIZE])
{
    if (dq[20] == 0) {
        for (int i = 0; i < 12; ++i) out[i] = k[i];
        return;
    }
    const double x = dq[0], y = dq[1], z = dq[2], s = dq[3];
    const double dx = dq[4], dy = dq[5], dz = dq[6], dw = dq[7];
    const double rm[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * s), 2 * (x * z + y * s),
                          2 * (x * y + z * s), 1 - 2 * (x * x + z * z), 2 * (y * z - x * s),
                          2 * (x * z - y * s), 2 * (y * z + x * s), 1 - 2 * (x * x + y * y)};
    const double t[3] = {2 * (s * dx - dw * x + (y * dz - z * dy)),
                         2 * (s * dy - dw * y + (z * dx - x * dz)),
                         2 * (s * dz - dw * z + (x * dy - y * dx))};
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) out[4 * r + c] = rm[3 * r + c];
        out[4 * r + 3] = t[r];
    }
}

/* The most joints a blend call takes through the LBS and DQS kernels (each call repacks the
 * two tables; skin_cor.template.c, blend_simd). */
#define SK_BLEND_SIMD_MAX_J 1024

#define SK_TEMPLATE "skin_cor.template.c"
#include "skin_instantiate.h"
