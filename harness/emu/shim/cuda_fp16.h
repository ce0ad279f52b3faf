/*
 * cuda_fp16.h: CUDA's half precision (__half, __half2) for the CPU emulator,
 * with the results of a GPU.
 *
 *   types        __half_raw, __half2_raw, __half, __half2 (and half, half2,
 *                nv_half, __nv_half ...): 2 and 4 bytes, trivially copyable, so
 *                they live in __shared__ arrays and go through __shfl_sync
 *   conversions  the members cuda_fp16.h declares (from float, double and the
 *                integer types; to float, the integer types (toward zero) and
 *                bool; none to double), and the intrinsics: __float2half(_rn,
 *                _rz, _rd, _ru), __half2float, __double2half, __<int>2half_<rn,
 *                rz, rd, ru> and __half2<int>_<rn, rz, rd, ru>, pairs
 *                (__floats2half2_rn, __half22float2, __halves2half2, __low2half
 *                ...), bit casts (__half_as_ushort ...)
 *   arithmetic   operators and compound assignments, ++, --, comparisons;
 *                __hadd, __hsub, __hmul, __hdiv, __hfma (and _rn, _sat, _relu),
 *                __hneg, __habs, __hmax, __hmin (and _nan), __heq ... __hgtu,
 *                __hisnan, __hisinf; the ...2 forms on __half2 (__hbeq2 ...,
 *                __heq2_mask ...); hsqrt, hrsqrt, hrcp, hexp, hexp2, hexp10,
 *                hlog, hlog2, hlog10, hsin, hcos, htanh, hfloor, hceil, htrunc,
 *                hrint and their h2 forms
 *   atomics      atomicAdd on __half and __half2 (compare-and-swap loops)
 *   constants    CUDART_INF_FP16, CUDART_NAN_FP16, CUDART_ZERO_FP16 ...
 *
 * Invariants:
 *   - Conversions round as CUDA's cvt instructions, whose results cuda_fp16.hpp's
 *     host code reproduces: to nearest even (or toward zero, down, up for the
 *     _rz, _rd, _ru forms); overflow to infinity (or the largest finite value,
 *     as the rounding direction says); subnormals kept; any NaN becomes the
 *     canonical 0x7fff, and a half NaN becomes the float NaN 0x7fffffff. Every
 *     conversion is one exact rounding of the exact value (hn_emu_fp_pack),
 *     also from double and from 64-bit integers.
 *   - One arithmetic operation is one exact rounding of the exact result: add,
 *     sub, mul, div and sqrt are computed in float and rounded once, which is
 *     exact since float has more than 2 * 11 + 2 bits; fma is computed in double
 *     rounded to odd (hn_emu_fp_fma), then rounded once. A GPU's __hdiv, hsqrt,
 *     hrcp and hrsqrt use approximate float instructions and can differ in the
 *     last bit for some inputs; hexp, hlog & co. are computed in double and
 *     rounded once (the GPU patches its approximations to the same results).
 *   - Integer results of conversions saturate to the type's range; NaN gives 0.
 *
 * Everything private uses the hn_emu_ prefix. cuda_bf16.h builds on this file.
 */
#ifndef HN_EMU_CUDA_FP16_H
#define HN_EMU_CUDA_FP16_H

#include "hn_emu.h"

#define __CUDA_FP16_TYPES_EXIST__

/* ------------------------------------------------------------------------- */
/* exact rounding into a 16-bit format */

enum { HN_EMU_RN, HN_EMU_RZ, HN_EMU_RD, HN_EMU_RU };

/* The two formats: fraction bits, the exponent of the smallest subnormal, the
 * bits of infinity and of the largest finite value. */
struct hn_emu_fmt_f16 {
    static constexpr int mbits = 10, qmin = -24;
    static constexpr unsigned inf = 0x7c00u, maxf = 0x7bffu;
};
struct hn_emu_fmt_bf16 {
    static constexpr int mbits = 7, qmin = -133;
    static constexpr unsigned inf = 0x7f80u, maxf = 0x7f7fu;
};
#define HN_EMU_FP_NAN 0x7fffu /* CUDA's canonical NaN, in both formats */

/* The bits of (-1)^neg * m * 2^e in format F, rounded by `mode` (HN_EMU_R*). */
template <class _HnF>
static __inline__ unsigned short hn_emu_fp_pack(bool neg, unsigned long long m, int e, int mode) {
    unsigned sign = neg ? 0x8000u : 0u;
    if (m == 0) return (unsigned short)sign;
    int k = 63 - __builtin_clzll(m); /* m in [2^k, 2^(k+1)) */
    int q = k + e - _HnF::mbits; /* the result is a multiple of 2^q */
    if (q < _HnF::qmin) q = _HnF::qmin;
    int sh = q - e; /* bits of m that go */
    unsigned long long r;
    int below; /* the dropped part against half a unit: -1 less, 0 equal, 1 more, 2 nothing */
    if (sh <= 0) {
        r = m << -sh;
        below = 2;
    } else if (sh < 64) {
        r = m >> sh;
        unsigned long long low = m & ((1ull << sh) - 1), half = 1ull << (sh - 1);
        below = low == 0 ? 2 : low < half ? -1 : low == half ? 0 : 1;
    } else {
        r = 0;
        below = sh > 64 || m < (1ull << 63) ? -1 : m == (1ull << 63) ? 0 : 1;
    }
    bool up;
    switch (mode) {
    case HN_EMU_RZ:
        up = false;
        break;
    case HN_EMU_RD:
        up = neg && below != 2;
        break;
    case HN_EMU_RU:
        up = !neg && below != 2;
        break;
    default:
        up = below == 1 || (below == 0 && (r & 1));
        break;
    }
    r += up;
    /* r < 2^(mbits+1); a carry into the exponent field is the right encoding */
    unsigned long long bits = ((unsigned long long)(q - _HnF::qmin) << _HnF::mbits) + r;
    if (bits >= _HnF::inf) {
        bool to_inf =
            mode == HN_EMU_RN || (mode == HN_EMU_RD && neg) || (mode == HN_EMU_RU && !neg);
        bits = to_inf ? _HnF::inf : _HnF::maxf;
    }
    return (unsigned short)(sign | bits);
}

template <class _HnF>
static __inline__ unsigned short hn_emu_fp_from_float(float f, int mode) {
    unsigned x;
    memcpy(&x, &f, sizeof x);
    bool neg = x >> 31;
    unsigned ex = (x >> 23) & 0xffu, mant = x & 0x7fffffu;
    if (ex == 0xffu) return (unsigned short)(mant ? HN_EMU_FP_NAN : (neg ? 0x8000u : 0u) | _HnF::inf);
    if (ex == 0) return hn_emu_fp_pack<_HnF>(neg, mant, -149, mode);
    return hn_emu_fp_pack<_HnF>(neg, mant | 0x800000u, (int)ex - 150, mode);
}

template <class _HnF>
static __inline__ unsigned short hn_emu_fp_from_double(double d, int mode) {
    unsigned long long x;
    memcpy(&x, &d, sizeof x);
    bool neg = x >> 63;
    unsigned ex = (unsigned)(x >> 52) & 0x7ffu;
    unsigned long long mant = x & ((1ull << 52) - 1);
    if (ex == 0x7ffu) return (unsigned short)(mant ? HN_EMU_FP_NAN : (neg ? 0x8000u : 0u) | _HnF::inf);
    if (ex == 0) return hn_emu_fp_pack<_HnF>(neg, mant, -1074, mode);
    return hn_emu_fp_pack<_HnF>(neg, mant | (1ull << 52), (int)ex - 1075, mode);
}

template <class _HnF, class _HnI>
static __inline__ unsigned short hn_emu_fp_from_int(_HnI i, int mode) {
    bool neg = i < 0;
    unsigned long long m = neg ? 0ull - (unsigned long long)i : (unsigned long long)i;
    return hn_emu_fp_pack<_HnF>(neg, m, 0, mode);
}

/* half bits -> float, exactly; NaN becomes 0x7fffffff (as cuda_fp16.hpp) */
static __inline__ float hn_emu_h2f(unsigned short h) {
    unsigned sign = (unsigned)(h & 0x8000u) << 16, ex = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    unsigned u;
    if (ex == 0x1fu) {
        u = mant ? 0x7fffffffu : sign | 0x7f800000u;
    } else if (ex == 0) {
        float f = (float)mant * 0x1p-24f;
        return sign ? -f : f;
    } else {
        u = sign | ((ex + 112u) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* bfloat16 bits -> float: the upper half of the float */
static __inline__ float hn_emu_bf2f(unsigned short b) {
    unsigned u = (unsigned)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* a * b + c rounded once into format F: in double, a * b is exact (at most 2 * 11
 * bits), the sum is rounded to odd (TwoSum gives its exact error), and a value
 * rounded to odd with more than p + 1 bits rounds to p bits as the exact one. */
template <class _HnF>
static __inline__ unsigned short hn_emu_fp_fma(float a, float b, float c) {
    if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(c))
        return hn_emu_fp_from_float<_HnF>(fmaf(a, b, c), HN_EMU_RN);
    volatile double p = (double)a * (double)b; /* volatile: never contracted with the sum */
    double pp = p, dc = c;
    double s = pp + dc;
    double bb = s - pp;
    double err = (pp - (s - bb)) + (dc - bb);
    if (err != 0.0) {
        unsigned long long u;
        memcpy(&u, &s, sizeof u);
        if (!(u & 1ull)) u = ((err > 0) == (s > 0)) ? u + 1 : u - 1;
        memcpy(&s, &u, sizeof s);
    }
    return hn_emu_fp_from_double<_HnF>(s, HN_EMU_RN);
}

/* float -> integer type I, rounded by mode, saturated; NaN gives 0 */
template <class _HnI>
static __inline__ _HnI hn_emu_fp_to_int(float f, int mode) {
    if (f != f) return 0;
    double d = mode == HN_EMU_RZ   ? trunc((double)f)
               : mode == HN_EMU_RD ? floor((double)f)
               : mode == HN_EMU_RU ? ceil((double)f)
                                   : nearbyint((double)f);
    const double hi = ldexp(1.0, (int)(8 * sizeof(_HnI)) - (std::is_signed<_HnI>::value ? 1 : 0));
    const double lo = std::is_signed<_HnI>::value ? -hi : 0.0;
    if (d >= hi) return std::numeric_limits<_HnI>::max();
    if (d <= lo) return std::numeric_limits<_HnI>::min();
    return (_HnI)d;
}

/* ------------------------------------------------------------------------- */
/* the types */

struct __nv_bfloat16;
struct __half;
static __inline__ __half __float2half(const float a);
static __inline__ float __half2float(const __half a);
static __inline__ __half __double2half(const double a);

struct alignas(2) __half_raw {
    unsigned short x;
};
struct alignas(4) __half2_raw {
    unsigned short x;
    unsigned short y;
};

struct alignas(2) __half {
  protected:
    unsigned short __x;

  public:
    __half() = default;
    constexpr __half(const __half_raw &hr) : __x(hr.x) {}
    __half &operator=(const __half_raw &hr) {
        __x = hr.x;
        return *this;
    }
    volatile __half &operator=(const __half_raw &hr) volatile {
        __x = hr.x;
        return *this;
    }
    volatile __half &operator=(const volatile __half_raw &hr) volatile {
        __x = hr.x;
        return *this;
    }
    operator __half_raw() const { return __half_raw{__x}; }
    operator __half_raw() const volatile { return __half_raw{__x}; }
    explicit __half(const __nv_bfloat16 f); /* defined in cuda_bf16.h */
    __half(const float f) : __x(hn_emu_fp_from_float<hn_emu_fmt_f16>(f, HN_EMU_RN)) {}
    __half(const double f) : __x(hn_emu_fp_from_double<hn_emu_fmt_f16>(f, HN_EMU_RN)) {}
    operator float() const { return hn_emu_h2f(__x); }
    __half &operator=(const float f) {
        __x = hn_emu_fp_from_float<hn_emu_fmt_f16>(f, HN_EMU_RN);
        return *this;
    }
    __half &operator=(const double f) {
        __x = hn_emu_fp_from_double<hn_emu_fmt_f16>(f, HN_EMU_RN);
        return *this;
    }
#define HN_EMU_H_FROM_INT(T)                                                         \
    __half(const T val) : __x(hn_emu_fp_from_int<hn_emu_fmt_f16>(val, HN_EMU_RN)) {} \
    __half &operator=(const T val) {                                                 \
        __x = hn_emu_fp_from_int<hn_emu_fmt_f16>(val, HN_EMU_RN);                    \
        return *this;                                                                \
    }
    HN_EMU_H_FROM_INT(short)
    HN_EMU_H_FROM_INT(unsigned short)
    HN_EMU_H_FROM_INT(int)
    HN_EMU_H_FROM_INT(unsigned int)
    HN_EMU_H_FROM_INT(long long)
    HN_EMU_H_FROM_INT(unsigned long long)
    __half(const long val) : __x(hn_emu_fp_from_int<hn_emu_fmt_f16>(val, HN_EMU_RN)) {}
    __half(const unsigned long val) : __x(hn_emu_fp_from_int<hn_emu_fmt_f16>(val, HN_EMU_RN)) {}
#define HN_EMU_H_TO_INT(T) \
    operator T() const { return hn_emu_fp_to_int<T>(hn_emu_h2f(__x), HN_EMU_RZ); }
    HN_EMU_H_TO_INT(signed char)
    HN_EMU_H_TO_INT(unsigned char)
    HN_EMU_H_TO_INT(char)
    HN_EMU_H_TO_INT(short)
    HN_EMU_H_TO_INT(unsigned short)
    HN_EMU_H_TO_INT(int)
    HN_EMU_H_TO_INT(unsigned int)
    HN_EMU_H_TO_INT(long)
    HN_EMU_H_TO_INT(unsigned long)
    HN_EMU_H_TO_INT(long long)
    HN_EMU_H_TO_INT(unsigned long long)
    constexpr operator bool() const { return (__x & 0x7fffu) != 0u; }
};

struct alignas(4) __half2 {
    __half x;
    __half y;

    __half2() = default;
    constexpr __half2(const __half &a, const __half &b) : x(a), y(b) {}
    __half2(const __half2_raw &h2r) : x(__half_raw{h2r.x}), y(__half_raw{h2r.y}) {}
    __half2 &operator=(const __half2_raw &h2r) {
        x = __half_raw{h2r.x};
        y = __half_raw{h2r.y};
        return *this;
    }
    operator __half2_raw() const { return __half2_raw{__half_raw(x).x, __half_raw(y).x}; }
};

static_assert(sizeof(__half) == 2 && std::is_trivially_copyable<__half>::value, "__half layout");
static_assert(sizeof(__half2) == 4 && std::is_trivially_copyable<__half2>::value, "__half2 layout");

#ifndef CUDA_NO_HALF
typedef __half half;
typedef __half2 half2;
#endif
typedef __half __nv_half;
typedef __half2 __nv_half2;
typedef __half_raw __nv_half_raw;
typedef __half2_raw __nv_half2_raw;
typedef __half nv_half;
typedef __half2 nv_half2;

/* ------------------------------------------------------------------------- */
/* conversions and bit casts */

static __inline__ unsigned short hn_emu_hbits(const __half h) { return __half_raw(h).x; }
static __inline__ __half hn_emu_hmake(unsigned short b) { return __half(__half_raw{b}); }

static __inline__ __half __float2half(const float a) {
    return hn_emu_hmake(hn_emu_fp_from_float<hn_emu_fmt_f16>(a, HN_EMU_RN));
}
static __inline__ __half __float2half_rn(const float a) { return __float2half(a); }
static __inline__ __half __float2half_rz(const float a) {
    return hn_emu_hmake(hn_emu_fp_from_float<hn_emu_fmt_f16>(a, HN_EMU_RZ));
}
static __inline__ __half __float2half_rd(const float a) {
    return hn_emu_hmake(hn_emu_fp_from_float<hn_emu_fmt_f16>(a, HN_EMU_RD));
}
static __inline__ __half __float2half_ru(const float a) {
    return hn_emu_hmake(hn_emu_fp_from_float<hn_emu_fmt_f16>(a, HN_EMU_RU));
}
static __inline__ float __half2float(const __half a) { return hn_emu_h2f(hn_emu_hbits(a)); }
static __inline__ __half __double2half(const double a) {
    return hn_emu_hmake(hn_emu_fp_from_double<hn_emu_fmt_f16>(a, HN_EMU_RN));
}

#define HN_EMU_H_INT_CVT(T, NAME)                                              \
    static __inline__ __half __##NAME##2half_rn(const T i) {                   \
        return hn_emu_hmake(hn_emu_fp_from_int<hn_emu_fmt_f16>(i, HN_EMU_RN)); \
    }                                                                          \
    static __inline__ __half __##NAME##2half_rz(const T i) {                   \
        return hn_emu_hmake(hn_emu_fp_from_int<hn_emu_fmt_f16>(i, HN_EMU_RZ)); \
    }                                                                          \
    static __inline__ __half __##NAME##2half_rd(const T i) {                   \
        return hn_emu_hmake(hn_emu_fp_from_int<hn_emu_fmt_f16>(i, HN_EMU_RD)); \
    }                                                                          \
    static __inline__ __half __##NAME##2half_ru(const T i) {                   \
        return hn_emu_hmake(hn_emu_fp_from_int<hn_emu_fmt_f16>(i, HN_EMU_RU)); \
    }                                                                          \
    static __inline__ T __half2##NAME##_rn(const __half h) {                   \
        return hn_emu_fp_to_int<T>(__half2float(h), HN_EMU_RN);                \
    }                                                                          \
    static __inline__ T __half2##NAME##_rz(const __half h) {                   \
        return hn_emu_fp_to_int<T>(__half2float(h), HN_EMU_RZ);                \
    }                                                                          \
    static __inline__ T __half2##NAME##_rd(const __half h) {                   \
        return hn_emu_fp_to_int<T>(__half2float(h), HN_EMU_RD);                \
    }                                                                          \
    static __inline__ T __half2##NAME##_ru(const __half h) {                   \
        return hn_emu_fp_to_int<T>(__half2float(h), HN_EMU_RU);                \
    }
HN_EMU_H_INT_CVT(int, int)
HN_EMU_H_INT_CVT(unsigned int, uint)
HN_EMU_H_INT_CVT(short, short)
HN_EMU_H_INT_CVT(unsigned short, ushort)
HN_EMU_H_INT_CVT(long long, ll)
HN_EMU_H_INT_CVT(unsigned long long, ull)
static __inline__ signed char __half2char_rz(const __half h) {
    return hn_emu_fp_to_int<signed char>(__half2float(h), HN_EMU_RZ);
}
static __inline__ unsigned char __half2uchar_rz(const __half h) {
    return hn_emu_fp_to_int<unsigned char>(__half2float(h), HN_EMU_RZ);
}

static __inline__ short __half_as_short(const __half h) { return (short)hn_emu_hbits(h); }
static __inline__ unsigned short __half_as_ushort(const __half h) { return hn_emu_hbits(h); }
static __inline__ __half __short_as_half(const short i) { return hn_emu_hmake((unsigned short)i); }
static __inline__ __half __ushort_as_half(const unsigned short i) { return hn_emu_hmake(i); }

static __inline__ __half2 __float2half2_rn(const float a) {
    return __half2(__float2half(a), __float2half(a));
}
static __inline__ __half2 __floats2half2_rn(const float a, const float b) {
    return __half2(__float2half(a), __float2half(b));
}
static __inline__ __half2 __float22half2_rn(const float2 a) { return __floats2half2_rn(a.x, a.y); }
static __inline__ float2 __half22float2(const __half2 a) {
    return make_float2(__half2float(a.x), __half2float(a.y));
}
static __inline__ float __low2float(const __half2 a) { return __half2float(a.x); }
static __inline__ float __high2float(const __half2 a) { return __half2float(a.y); }
static __inline__ __half2 __halves2half2(const __half a, const __half b) { return __half2(a, b); }
static __inline__ __half2 __half2half2(const __half a) { return __half2(a, a); }
static __inline__ __half2 make_half2(const __half x, const __half y) { return __half2(x, y); }
static __inline__ __half __low2half(const __half2 a) { return a.x; }
static __inline__ __half __high2half(const __half2 a) { return a.y; }
static __inline__ __half2 __low2half2(const __half2 a) { return __half2(a.x, a.x); }
static __inline__ __half2 __high2half2(const __half2 a) { return __half2(a.y, a.y); }
static __inline__ __half2 __lows2half2(const __half2 a, const __half2 b) {
    return __half2(a.x, b.x);
}
static __inline__ __half2 __highs2half2(const __half2 a, const __half2 b) {
    return __half2(a.y, b.y);
}
static __inline__ __half2 __lowhigh2highlow(const __half2 a) { return __half2(a.y, a.x); }

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)

/* ------------------------------------------------------------------------- */
/* arithmetic, comparisons, math: the same names for __half and (cuda_bf16.h)
 * __nv_bfloat16, so one macro writes both. H and H2 are the types, F the format,
 * TOF(bits) the exact conversion to float, MK(bits) makes an H, S names the
 * rounding helpers of H (which differ from the other type's by return type only). */

#define HN_EMU_FP_OPS(H, H2, _HnF, TOF, MK, S)                                                        \
    static __inline__ float hn_emu_tof(const H a) { return TOF(hn_emu_bits(a)); }                  \
    static __inline__ H hn_emu_round_##S(float f) {                                                \
        return MK(hn_emu_fp_from_float<_HnF>(f, HN_EMU_RN));                                          \
    }                                                                                              \
    static __inline__ H hn_emu_round_d_##S(double d) {                                             \
        return MK(hn_emu_fp_from_double<_HnF>(d, HN_EMU_RN));                                         \
    }                                                                                              \
    static __inline__ bool hn_emu_isnan(const H a) { return (hn_emu_bits(a) & 0x7fffu) > _HnF::inf; } \
    static __inline__ H __hadd(const H a, const H b) {                                             \
        return hn_emu_round_##S(hn_emu_tof(a) + hn_emu_tof(b));                                    \
    }                                                                                              \
    static __inline__ H __hsub(const H a, const H b) {                                             \
        return hn_emu_round_##S(hn_emu_tof(a) - hn_emu_tof(b));                                    \
    }                                                                                              \
    static __inline__ H __hmul(const H a, const H b) {                                             \
        return hn_emu_round_##S(hn_emu_tof(a) * hn_emu_tof(b));                                    \
    }                                                                                              \
    static __inline__ H __hdiv(const H a, const H b) {                                             \
        return hn_emu_round_##S(hn_emu_tof(a) / hn_emu_tof(b));                                    \
    }                                                                                              \
    static __inline__ H __hadd_rn(const H a, const H b) { return __hadd(a, b); }                   \
    static __inline__ H __hsub_rn(const H a, const H b) { return __hsub(a, b); }                   \
    static __inline__ H __hmul_rn(const H a, const H b) { return __hmul(a, b); }                   \
    static __inline__ H __hfma(const H a, const H b, const H c) {                                  \
        return MK(hn_emu_fp_fma<_HnF>(hn_emu_tof(a), hn_emu_tof(b), hn_emu_tof(c)));                  \
    }                                                                                              \
    static __inline__ H __hneg(const H a) {                                                        \
        return MK((unsigned short)(hn_emu_bits(a) ^ 0x8000u));                                     \
    }                                                                                              \
    static __inline__ H __habs(const H a) {                                                        \
        return hn_emu_isnan(a) ? MK(HN_EMU_FP_NAN)                                                 \
                               : MK((unsigned short)(hn_emu_bits(a) & 0x7fffu));                   \
    }                                                                                              \
    static __inline__ bool __heq(const H a, const H b) { return hn_emu_tof(a) == hn_emu_tof(b); }  \
    static __inline__ bool __hne(const H a, const H b) {                                           \
        return hn_emu_tof(a) < hn_emu_tof(b) || hn_emu_tof(a) > hn_emu_tof(b);                     \
    }                                                                                              \
    static __inline__ bool __hlt(const H a, const H b) { return hn_emu_tof(a) < hn_emu_tof(b); }   \
    static __inline__ bool __hle(const H a, const H b) { return hn_emu_tof(a) <= hn_emu_tof(b); }  \
    static __inline__ bool __hgt(const H a, const H b) { return hn_emu_tof(a) > hn_emu_tof(b); }   \
    static __inline__ bool __hge(const H a, const H b) { return hn_emu_tof(a) >= hn_emu_tof(b); }  \
    static __inline__ bool __hequ(const H a, const H b) { return !__hne(a, b); }                   \
    static __inline__ bool __hneu(const H a, const H b) { return !__heq(a, b); }                   \
    static __inline__ bool __hltu(const H a, const H b) { return !__hge(a, b); }                   \
    static __inline__ bool __hleu(const H a, const H b) { return !__hgt(a, b); }                   \
    static __inline__ bool __hgtu(const H a, const H b) { return !__hle(a, b); }                   \
    static __inline__ bool __hgeu(const H a, const H b) { return !__hlt(a, b); }                   \
    static __inline__ bool __hisnan(const H a) { return hn_emu_isnan(a); }                         \
    static __inline__ int __hisinf(const H a) {                                                    \
        return hn_emu_bits(a) == (0x8000u | _HnF::inf) ? -1 : hn_emu_bits(a) == _HnF::inf ? 1 : 0;       \
    }                                                                                              \
    static __inline__ H __hmax(const H a, const H b) {                                             \
        H r = (__hge(a, b) || hn_emu_isnan(b)) ? a : b;                                            \
        if (hn_emu_isnan(r)) return MK(HN_EMU_FP_NAN);                                             \
        if (__heq(a, b)) return hn_emu_bits(a) > hn_emu_bits(b) ? b : a;                           \
        return r;                                                                                  \
    }                                                                                              \
    static __inline__ H __hmin(const H a, const H b) {                                             \
        H r = (__hle(a, b) || hn_emu_isnan(b)) ? a : b;                                            \
        if (hn_emu_isnan(r)) return MK(HN_EMU_FP_NAN);                                             \
        if (__heq(a, b)) return hn_emu_bits(a) > hn_emu_bits(b) ? a : b;                           \
        return r;                                                                                  \
    }                                                                                              \
    static __inline__ H __hmax_nan(const H a, const H b) {                                         \
        return hn_emu_isnan(a) || hn_emu_isnan(b) ? MK(HN_EMU_FP_NAN) : __hmax(a, b);              \
    }                                                                                              \
    static __inline__ H __hmin_nan(const H a, const H b) {                                         \
        return hn_emu_isnan(a) || hn_emu_isnan(b) ? MK(HN_EMU_FP_NAN) : __hmin(a, b);              \
    }                                                                                              \
    static __inline__ H hn_emu_sat(const H a) {                                                    \
        return __hmin(__hmax(a, MK(0)), hn_emu_round_##S(1.0f));                                   \
    }                                                                                              \
    static __inline__ H __hadd_sat(const H a, const H b) { return hn_emu_sat(__hadd(a, b)); }      \
    static __inline__ H __hsub_sat(const H a, const H b) { return hn_emu_sat(__hsub(a, b)); }      \
    static __inline__ H __hmul_sat(const H a, const H b) { return hn_emu_sat(__hmul(a, b)); }      \
    static __inline__ H __hfma_sat(const H a, const H b, const H c) {                              \
        return hn_emu_sat(__hfma(a, b, c));                                                        \
    }                                                                                              \
    static __inline__ H __hfma_relu(const H a, const H b, const H c) {                             \
        return __hmax_nan(__hfma(a, b, c), MK(0));                                                 \
    }                                                                                              \
    static __inline__ H hsqrt(const H a) { return hn_emu_round_##S(sqrtf(hn_emu_tof(a))); }        \
    static __inline__ H hrsqrt(const H a) {                                                        \
        return hn_emu_round_d_##S(1.0 / sqrt((double)hn_emu_tof(a)));                              \
    }                                                                                              \
    static __inline__ H hrcp(const H a) {                                                          \
        return hn_emu_round_d_##S(1.0 / (double)hn_emu_tof(a));                                    \
    }                                                                                              \
    static __inline__ H hexp(const H a) { return hn_emu_round_d_##S(exp((double)hn_emu_tof(a))); } \
    static __inline__ H hexp2(const H a) {                                                         \
        return hn_emu_round_d_##S(exp2((double)hn_emu_tof(a)));                                    \
    }                                                                                              \
    static __inline__ H hexp10(const H a) {                                                        \
        return hn_emu_round_d_##S(pow(10.0, (double)hn_emu_tof(a)));                               \
    }                                                                                              \
    static __inline__ H hlog(const H a) { return hn_emu_round_d_##S(log((double)hn_emu_tof(a))); } \
    static __inline__ H hlog2(const H a) {                                                         \
        return hn_emu_round_d_##S(log2((double)hn_emu_tof(a)));                                    \
    }                                                                                              \
    static __inline__ H hlog10(const H a) {                                                        \
        return hn_emu_round_d_##S(log10((double)hn_emu_tof(a)));                                   \
    }                                                                                              \
    static __inline__ H hsin(const H a) { return hn_emu_round_d_##S(sin((double)hn_emu_tof(a))); } \
    static __inline__ H hcos(const H a) { return hn_emu_round_d_##S(cos((double)hn_emu_tof(a))); } \
    static __inline__ H htanh(const H a) {                                                         \
        return hn_emu_round_d_##S(tanh((double)hn_emu_tof(a)));                                    \
    }                                                                                              \
    static __inline__ H htanh_approx(const H a) { return htanh(a); }                               \
    static __inline__ H hfloor(const H a) { return hn_emu_round_##S(floorf(hn_emu_tof(a))); }      \
    static __inline__ H hceil(const H a) { return hn_emu_round_##S(ceilf(hn_emu_tof(a))); }        \
    static __inline__ H htrunc(const H a) { return hn_emu_round_##S(truncf(hn_emu_tof(a))); }      \
    static __inline__ H hrint(const H a) { return hn_emu_round_##S(nearbyintf(hn_emu_tof(a))); }   \
                                                                                                   \
    /* the pairs: each half on its own */                                                          \
    static __inline__ H2 hn_emu_map2(H (*f)(H), const H2 a) { return H2(f(a.x), f(a.y)); }         \
    static __inline__ H2 hn_emu_map2(H (*f)(H, H), const H2 a, const H2 b) {                       \
        return H2(f(a.x, b.x), f(a.y, b.y));                                                       \
    }                                                                                              \
    static __inline__ H2 hn_emu_cmp2(bool (*f)(H, H), const H2 a, const H2 b) {                    \
        return H2(f(a.x, b.x) ? hn_emu_round_##S(1.0f) : MK(0),                                    \
                  f(a.y, b.y) ? hn_emu_round_##S(1.0f) : MK(0));                                   \
    }                                                                                              \
    static __inline__ unsigned hn_emu_mask2(bool (*f)(H, H), const H2 a, const H2 b) {             \
        return (f(a.x, b.x) ? 0xffffu : 0u) | (f(a.y, b.y) ? 0xffff0000u : 0u);                    \
    }                                                                                              \
    static __inline__ H2 __hadd2(const H2 a, const H2 b) { return hn_emu_map2(__hadd, a, b); }     \
    static __inline__ H2 __hsub2(const H2 a, const H2 b) { return hn_emu_map2(__hsub, a, b); }     \
    static __inline__ H2 __hmul2(const H2 a, const H2 b) { return hn_emu_map2(__hmul, a, b); }     \
    static __inline__ H2 __h2div(const H2 a, const H2 b) { return hn_emu_map2(__hdiv, a, b); }     \
    static __inline__ H2 __hadd2_rn(const H2 a, const H2 b) { return __hadd2(a, b); }              \
    static __inline__ H2 __hsub2_rn(const H2 a, const H2 b) { return __hsub2(a, b); }              \
    static __inline__ H2 __hmul2_rn(const H2 a, const H2 b) { return __hmul2(a, b); }              \
    static __inline__ H2 __hadd2_sat(const H2 a, const H2 b) {                                     \
        return hn_emu_map2(__hadd_sat, a, b);                                                      \
    }                                                                                              \
    static __inline__ H2 __hsub2_sat(const H2 a, const H2 b) {                                     \
        return hn_emu_map2(__hsub_sat, a, b);                                                      \
    }                                                                                              \
    static __inline__ H2 __hmul2_sat(const H2 a, const H2 b) {                                     \
        return hn_emu_map2(__hmul_sat, a, b);                                                      \
    }                                                                                              \
    static __inline__ H2 __hfma2(const H2 a, const H2 b, const H2 c) {                             \
        return H2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));                                   \
    }                                                                                              \
    static __inline__ H2 __hfma2_sat(const H2 a, const H2 b, const H2 c) {                         \
        return H2(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y));                           \
    }                                                                                              \
    static __inline__ H2 __hfma2_relu(const H2 a, const H2 b, const H2 c) {                        \
        return H2(__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y));                         \
    }                                                                                              \
    static __inline__ H2 __hneg2(const H2 a) { return hn_emu_map2(__hneg, a); }                    \
    static __inline__ H2 __habs2(const H2 a) { return hn_emu_map2(__habs, a); }                    \
    static __inline__ H2 __hmax2(const H2 a, const H2 b) { return hn_emu_map2(__hmax, a, b); }     \
    static __inline__ H2 __hmin2(const H2 a, const H2 b) { return hn_emu_map2(__hmin, a, b); }     \
    static __inline__ H2 __hmax2_nan(const H2 a, const H2 b) {                                     \
        return hn_emu_map2(__hmax_nan, a, b);                                                      \
    }                                                                                              \
    static __inline__ H2 __hmin2_nan(const H2 a, const H2 b) {                                     \
        return hn_emu_map2(__hmin_nan, a, b);                                                      \
    }                                                                                              \
    static __inline__ H2 __hisnan2(const H2 a) {                                                   \
        return H2(hn_emu_isnan(a.x) ? hn_emu_round_##S(1.0f) : MK(0),                              \
                  hn_emu_isnan(a.y) ? hn_emu_round_##S(1.0f) : MK(0));                             \
    }                                                                                              \
    HN_EMU_FP_CMP2(H, H2, eq)                                                                      \
    HN_EMU_FP_CMP2(H, H2, ne) HN_EMU_FP_CMP2(H, H2, lt) HN_EMU_FP_CMP2(H, H2, le)                  \
        HN_EMU_FP_CMP2(H, H2, gt) HN_EMU_FP_CMP2(H, H2, ge) HN_EMU_FP_CMP2(H, H2, equ)             \
            HN_EMU_FP_CMP2(H, H2, neu) HN_EMU_FP_CMP2(H, H2, ltu) HN_EMU_FP_CMP2(H, H2, leu)       \
                HN_EMU_FP_CMP2(H, H2, gtu) HN_EMU_FP_CMP2(H, H2, geu) static __inline__ H2         \
                h2sqrt(const H2 a) {                                                               \
        return hn_emu_map2(hsqrt, a);                                                              \
    }                                                                                              \
    static __inline__ H2 h2rsqrt(const H2 a) { return hn_emu_map2(hrsqrt, a); }                    \
    static __inline__ H2 h2rcp(const H2 a) { return hn_emu_map2(hrcp, a); }                        \
    static __inline__ H2 h2exp(const H2 a) { return hn_emu_map2(hexp, a); }                        \
    static __inline__ H2 h2exp2(const H2 a) { return hn_emu_map2(hexp2, a); }                      \
    static __inline__ H2 h2exp10(const H2 a) { return hn_emu_map2(hexp10, a); }                    \
    static __inline__ H2 h2log(const H2 a) { return hn_emu_map2(hlog, a); }                        \
    static __inline__ H2 h2log2(const H2 a) { return hn_emu_map2(hlog2, a); }                      \
    static __inline__ H2 h2log10(const H2 a) { return hn_emu_map2(hlog10, a); }                    \
    static __inline__ H2 h2sin(const H2 a) { return hn_emu_map2(hsin, a); }                        \
    static __inline__ H2 h2cos(const H2 a) { return hn_emu_map2(hcos, a); }                        \
    static __inline__ H2 h2tanh(const H2 a) { return hn_emu_map2(htanh, a); }                      \
    static __inline__ H2 h2tanh_approx(const H2 a) { return hn_emu_map2(htanh, a); }               \
    static __inline__ H2 h2floor(const H2 a) { return hn_emu_map2(hfloor, a); }                    \
    static __inline__ H2 h2ceil(const H2 a) { return hn_emu_map2(hceil, a); }                      \
    static __inline__ H2 h2trunc(const H2 a) { return hn_emu_map2(htrunc, a); }                    \
    static __inline__ H2 h2rint(const H2 a) { return hn_emu_map2(hrint, a); }                      \
                                                                                                   \
    /* operators, as cuda_fp16.hpp declares them */                                                \
    static __inline__ H operator+(const H &a, const H &b) { return __hadd(a, b); }                 \
    static __inline__ H operator-(const H &a, const H &b) { return __hsub(a, b); }                 \
    static __inline__ H operator*(const H &a, const H &b) { return __hmul(a, b); }                 \
    static __inline__ H operator/(const H &a, const H &b) { return __hdiv(a, b); }                 \
    static __inline__ H &operator+=(H &a, const H &b) { return a = __hadd(a, b); }                 \
    static __inline__ H &operator-=(H &a, const H &b) { return a = __hsub(a, b); }                 \
    static __inline__ H &operator*=(H &a, const H &b) { return a = __hmul(a, b); }                 \
    static __inline__ H &operator/=(H &a, const H &b) { return a = __hdiv(a, b); }                 \
    static __inline__ H &operator++(H &h) { return h = __hadd(h, hn_emu_round_##S(1.0f)); }        \
    static __inline__ H &operator--(H &h) { return h = __hsub(h, hn_emu_round_##S(1.0f)); }        \
    static __inline__ H operator++(H &h, const int) {                                              \
        H r = h;                                                                                   \
        ++h;                                                                                       \
        return r;                                                                                  \
    }                                                                                              \
    static __inline__ H operator--(H &h, const int) {                                              \
        H r = h;                                                                                   \
        --h;                                                                                       \
        return r;                                                                                  \
    }                                                                                              \
    static __inline__ H operator+(const H &h) { return h; }                                        \
    static __inline__ H operator-(const H &h) { return __hneg(h); }                                \
    static __inline__ bool operator==(const H &a, const H &b) { return __heq(a, b); }              \
    static __inline__ bool operator!=(const H &a, const H &b) { return __hneu(a, b); }             \
    static __inline__ bool operator>(const H &a, const H &b) { return __hgt(a, b); }               \
    static __inline__ bool operator<(const H &a, const H &b) { return __hlt(a, b); }               \
    static __inline__ bool operator>=(const H &a, const H &b) { return __hge(a, b); }              \
    static __inline__ bool operator<=(const H &a, const H &b) { return __hle(a, b); }              \
    static __inline__ H2 operator+(const H2 &a, const H2 &b) { return __hadd2(a, b); }             \
    static __inline__ H2 operator-(const H2 &a, const H2 &b) { return __hsub2(a, b); }             \
    static __inline__ H2 operator*(const H2 &a, const H2 &b) { return __hmul2(a, b); }             \
    static __inline__ H2 operator/(const H2 &a, const H2 &b) { return __h2div(a, b); }             \
    static __inline__ H2 &operator+=(H2 &a, const H2 &b) { return a = __hadd2(a, b); }             \
    static __inline__ H2 &operator-=(H2 &a, const H2 &b) { return a = __hsub2(a, b); }             \
    static __inline__ H2 &operator*=(H2 &a, const H2 &b) { return a = __hmul2(a, b); }             \
    static __inline__ H2 &operator/=(H2 &a, const H2 &b) { return a = __h2div(a, b); }             \
    static __inline__ H2 &operator++(H2 &h) {                                                      \
        return h = __hadd2(h, H2(hn_emu_round_##S(1.0f), hn_emu_round_##S(1.0f)));                 \
    }                                                                                              \
    static __inline__ H2 &operator--(H2 &h) {                                                      \
        return h = __hsub2(h, H2(hn_emu_round_##S(1.0f), hn_emu_round_##S(1.0f)));                 \
    }                                                                                              \
    static __inline__ H2 operator++(H2 &h, const int) {                                            \
        H2 r = h;                                                                                  \
        ++h;                                                                                       \
        return r;                                                                                  \
    }                                                                                              \
    static __inline__ H2 operator--(H2 &h, const int) {                                            \
        H2 r = h;                                                                                  \
        --h;                                                                                       \
        return r;                                                                                  \
    }                                                                                              \
    static __inline__ H2 operator+(const H2 &h) { return h; }                                      \
    static __inline__ H2 operator-(const H2 &h) { return __hneg2(h); }                             \
    static __inline__ bool operator==(const H2 &a, const H2 &b) { return __hbeq2(a, b); }          \
    static __inline__ bool operator!=(const H2 &a, const H2 &b) { return __hbneu2(a, b); }         \
    static __inline__ bool operator>(const H2 &a, const H2 &b) { return __hbgt2(a, b); }           \
    static __inline__ bool operator<(const H2 &a, const H2 &b) { return __hblt2(a, b); }           \
    static __inline__ bool operator>=(const H2 &a, const H2 &b) { return __hbge2(a, b); }          \
    static __inline__ bool operator<=(const H2 &a, const H2 &b) { return __hble2(a, b); }          \
                                                                                                   \
    /* atomics: compare-and-swap loops on the bits, as the float atomicAdd */                      \
    static __inline__ H atomicAdd(H *p, H v) {                                                     \
        return hn_emu_cas_loop<H, unsigned short>(p, [v](H o) { return __hadd(o, v); });           \
    }                                                                                              \
    static __inline__ H2 atomicAdd(H2 *p, H2 v) {                                                  \
        return hn_emu_cas_loop<H2, unsigned int>(p, [v](H2 o) { return __hadd2(o, v); });          \
    }

/* In HN_EMU_FP_OPS, __hmax and __hmin are those of cuda_fp16.hpp's host code: a
 * NaN loses to a number, two NaNs give the canonical NaN, +0 is above -0. */

/* __h<cmp>2 (1 or 0 per half), __hb<cmp>2 (both), __h<cmp>2_mask (0xffff per half) */
#define HN_EMU_FP_CMP2(H, H2, C)                                                                 \
    static __inline__ H2 __h##C##2(const H2 a, const H2 b) { return hn_emu_cmp2(__h##C, a, b); } \
    static __inline__ bool __hb##C##2(const H2 a, const H2 b) {                                  \
        return __h##C(a.x, b.x) && __h##C(a.y, b.y);                                             \
    }                                                                                            \
    static __inline__ unsigned __h##C##2_mask(const H2 a, const H2 b) {                          \
        return hn_emu_mask2(__h##C, a, b);                                                       \
    }

static __inline__ unsigned short hn_emu_bits(const __half h) { return hn_emu_hbits(h); }
HN_EMU_FP_OPS(__half, __half2, hn_emu_fmt_f16, hn_emu_h2f, hn_emu_hmake, h)

/* std::numeric_limits<__half> (so cuda::std::numeric_limits, which libcu++
 * specialises for __half too): without it the primary template answered 0 for
 * max(), infinity() ..., silently */
namespace std {
template <>
class numeric_limits<__half> {
  public:
    static constexpr bool is_specialized = true, is_signed = true, is_integer = false, is_exact = false;
    static constexpr bool has_infinity = true, has_quiet_NaN = true, has_signaling_NaN = true;
    static constexpr float_denorm_style has_denorm = denorm_present;
    static constexpr bool has_denorm_loss = false, is_iec559 = true, is_bounded = true, is_modulo = false;
    static constexpr bool traps = false, tinyness_before = false;
    static constexpr float_round_style round_style = round_to_nearest;
    static constexpr int digits = 11, digits10 = 3, max_digits10 = 5, radix = 2;
    static constexpr int min_exponent = -13, min_exponent10 = -4;
    static constexpr int max_exponent = 16, max_exponent10 = 4;
    static constexpr __half min() noexcept { return __half_raw{0x0400u}; }
    static constexpr __half max() noexcept { return __half_raw{0x7bffu}; }
    static constexpr __half lowest() noexcept { return __half_raw{0xfbffu}; }
    static constexpr __half epsilon() noexcept { return __half_raw{0x1400u}; }
    static constexpr __half round_error() noexcept { return __half_raw{0x3800u}; }
    static constexpr __half infinity() noexcept { return __half_raw{0x7c00u}; }
    static constexpr __half quiet_NaN() noexcept { return __half_raw{0x7e00u}; }
    static constexpr __half signaling_NaN() noexcept { return __half_raw{0x7d00u}; }
    static constexpr __half denorm_min() noexcept { return __half_raw{0x0001u}; }
};
} // namespace std

#endif
