/* skin_rigid.c -- rigid skinning: one joint per vertex (seed 003). */
#include <math.h>

#include "sk.h"
#include "skin_simd.h"

#define SK_TEMPLATE "skin_rigid.template.c"
#include "skin_instantiate.h"
