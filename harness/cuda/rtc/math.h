/* Harness stand-in for NVRTC <math.h>: INFINITY, NAN, M_PI, FP_*, fpclassify ...: what NVRTC's math built-ins lack. */
/* NVRTC declares the CUDA math library in the global namespace by itself: every C
 * function (sqrtf, expf, fabsf, fminf, fmaf, ...; sqrt, exp, ... for double), the
 * float overloads C++ adds (sqrt(float), abs(float), pow(float, int) ...), isnan,
 * isinf, isfinite, signbit, and CUDA's own (rsqrtf, sincosf, __expf, min, max ...).
 * What it lacks is added here: INFINITY, NAN, HUGE_VAL(F), FP_*, M_PI & co., float_t,
 * double_t, fpclassify, isnormal and the quiet comparisons (isgreater ...). No long
 * double functions (sqrtl ...): device code has none. */
#pragma once

/* INFINITY and NAN spelled exactly as libcu++'s <cuda/std/cmath> spells them under
 * NVRTC, so that header (which cub and <cuda/std/complex> include) can come before or
 * after this one without a macro-redefinition warning. Constant expressions. */
#include <cuda/std/limits>
#ifndef INFINITY
#define INFINITY _CUDA_VSTD::numeric_limits<float>::infinity()
#endif
#ifndef NAN
#define NAN      _CUDA_VSTD::numeric_limits<float>::quiet_NaN()
#endif
#define HUGE_VALF ::cuda::std::numeric_limits<float>::infinity()
#define HUGE_VAL ::cuda::std::numeric_limits<double>::infinity()

/* The values glibc and libcu++ use. */
#ifndef FP_NAN
#define FP_NAN 0
#endif
#ifndef FP_INFINITE
#define FP_INFINITE 1
#endif
#ifndef FP_ZERO
#define FP_ZERO 2
#endif
#ifndef FP_SUBNORMAL
#define FP_SUBNORMAL 3
#endif
#ifndef FP_NORMAL
#define FP_NORMAL 4
#endif
/* What CUDA's ilogbf/ilogb return for 0 and NaN. */
#define FP_ILOGB0 (-2147483647 - 1)
#define FP_ILOGBNAN (-2147483647 - 1)

/* POSIX constants, which nvcc users get from glibc's <math.h>. */
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440

typedef float float_t;
typedef double double_t;

__host__ __device__ inline int fpclassify(float x) {
    return isnan(x) ? FP_NAN
           : isinf(x) ? FP_INFINITE
           : x == 0.0f ? FP_ZERO
           : fabsf(x) < 0x1p-126f ? FP_SUBNORMAL
                                  : FP_NORMAL;
}
__host__ __device__ inline int fpclassify(double x) {
    return isnan(x) ? FP_NAN
           : isinf(x) ? FP_INFINITE
           : x == 0.0 ? FP_ZERO
           : fabs(x) < 0x1p-1022 ? FP_SUBNORMAL
                                 : FP_NORMAL;
}
__host__ __device__ inline bool isnormal(float x) { return fpclassify(x) == FP_NORMAL; }
__host__ __device__ inline bool isnormal(double x) { return fpclassify(x) == FP_NORMAL; }

/* Comparisons that are false, not signalling, when either side is NaN (device code
 * raises no floating-point exceptions, so the plain operators already are). Mixed
 * arguments compare in their common type, as C++ asks. */
template <class _HnA, class _HnB> __host__ __device__ constexpr bool isunordered(_HnA x, _HnB y) {
    return x != x || y != y;
}
template <class _HnA, class _HnB> __host__ __device__ constexpr bool isgreater(_HnA x, _HnB y) { return x > y; }
template <class _HnA, class _HnB> __host__ __device__ constexpr bool isgreaterequal(_HnA x, _HnB y) {
    return x >= y;
}
template <class _HnA, class _HnB> __host__ __device__ constexpr bool isless(_HnA x, _HnB y) { return x < y; }
template <class _HnA, class _HnB> __host__ __device__ constexpr bool islessequal(_HnA x, _HnB y) {
    return x <= y;
}
template <class _HnA, class _HnB> __host__ __device__ constexpr bool islessgreater(_HnA x, _HnB y) {
    return x < y || x > y;
}
