// <float.h> and <cfloat>: the characteristics of float and double.
#include <float.h>
#include <cfloat>

static_assert(FLT_MAX == 0x1.fffffep127f && FLT_MIN == 0x1p-126f && FLT_EPSILON == 0x1p-23f, "");
static_assert(FLT_TRUE_MIN == 0x1p-149f && FLT_MANT_DIG == 24 && FLT_RADIX == 2, "");
static_assert(DBL_MAX == 0x1.fffffffffffffp1023 && DBL_MIN == 0x1p-1022, "");
static_assert(DBL_EPSILON == 0x1p-52 && DBL_TRUE_MIN == 0x1p-1074, "");
static_assert(DBL_MANT_DIG == 53 && DBL_DIG == 15 && FLT_DIG == 6, "");

__global__ void probe(float *x) { x[threadIdx.x] = x[threadIdx.x] < FLT_EPSILON ? FLT_MAX : x[0]; }
