/*
 * cuda_bf16.h: CUDA's bfloat16 (__nv_bfloat16, __nv_bfloat162) for the CPU
 * emulator, with the results of a GPU; includes cuda_fp16.h, as CUDA's does.
 *
 *   types        __nv_bfloat16_raw, __nv_bfloat162_raw, __nv_bfloat16,
 *                __nv_bfloat162, nv_bfloat16, nv_bfloat162: 2 and 4 bytes,
 *                trivially copyable
 *   conversions  the members cuda_bf16.h declares (from float, double, the
 *                integer types and, explicitly, __half; to float, the integer
 *                types and bool), __float2bfloat16(_rn, _rz, _rd, _ru),
 *                __bfloat162float, __double2bfloat16, __<int>2bfloat16_<mode>,
 *                __bfloat162<int>_<mode>, the pair helpers and bit casts
 *   the rest     the same arithmetic, comparison, math and atomicAdd overloads
 *                as cuda_fp16.h (__hadd, __hfma, hexp, __hadd2 ...), operators;
 *                CUDART_INF_BF16, CUDART_NAN_BF16 ...
 *
 * Invariants: as cuda_fp16.h's. float -> bfloat16 keeps the upper 16 bits of
 * the float rounded to nearest even (or by the _rz, _rd, _ru mode), a NaN
 * becomes 0x7fff; bfloat16 -> float appends 16 zero bits (NaN payloads kept).
 * Arithmetic in float, rounded once, is exact (float has 24 >= 2 * 8 + 2 bits).
 */
#ifndef HN_EMU_CUDA_BF16_H
#define HN_EMU_CUDA_BF16_H

#include "cuda_fp16.h"

#define __CUDA_BF16_TYPES_EXIST__

struct alignas(2) __nv_bfloat16_raw {
    unsigned short x;
};
struct alignas(4) __nv_bfloat162_raw {
    unsigned short x;
    unsigned short y;
};

struct alignas(2) __nv_bfloat16 {
  protected:
    unsigned short __x;

  public:
    __nv_bfloat16() = default;
    constexpr __nv_bfloat16(const __nv_bfloat16_raw &hr) : __x(hr.x) {}
    __nv_bfloat16 &operator=(const __nv_bfloat16_raw &hr) {
        __x = hr.x;
        return *this;
    }
    volatile __nv_bfloat16 &operator=(const __nv_bfloat16_raw &hr) volatile {
        __x = hr.x;
        return *this;
    }
    volatile __nv_bfloat16 &operator=(const volatile __nv_bfloat16_raw &hr) volatile {
        __x = hr.x;
        return *this;
    }
    operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
    operator __nv_bfloat16_raw() const volatile { return __nv_bfloat16_raw{__x}; }
    explicit __nv_bfloat16(const __half f)
        : __x(hn_emu_fp_from_float<hn_emu_fmt_bf16>(__half2float(f), HN_EMU_RN)) {}
    __nv_bfloat16(const float f) : __x(hn_emu_fp_from_float<hn_emu_fmt_bf16>(f, HN_EMU_RN)) {}
    __nv_bfloat16(const double f) : __x(hn_emu_fp_from_double<hn_emu_fmt_bf16>(f, HN_EMU_RN)) {}
    operator float() const { return hn_emu_bf2f(__x); }
    __nv_bfloat16 &operator=(const float f) {
        __x = hn_emu_fp_from_float<hn_emu_fmt_bf16>(f, HN_EMU_RN);
        return *this;
    }
    __nv_bfloat16 &operator=(const double f) {
        __x = hn_emu_fp_from_double<hn_emu_fmt_bf16>(f, HN_EMU_RN);
        return *this;
    }
#define HN_EMU_BF_FROM_INT(T)                                                                \
    __nv_bfloat16(const T val) : __x(hn_emu_fp_from_int<hn_emu_fmt_bf16>(val, HN_EMU_RN)) {} \
    __nv_bfloat16 &operator=(const T val) {                                                  \
        __x = hn_emu_fp_from_int<hn_emu_fmt_bf16>(val, HN_EMU_RN);                           \
        return *this;                                                                        \
    }
    HN_EMU_BF_FROM_INT(short)
    HN_EMU_BF_FROM_INT(unsigned short)
    HN_EMU_BF_FROM_INT(int)
    HN_EMU_BF_FROM_INT(unsigned int)
    HN_EMU_BF_FROM_INT(long long)
    HN_EMU_BF_FROM_INT(unsigned long long)
    __nv_bfloat16(const long val) : __x(hn_emu_fp_from_int<hn_emu_fmt_bf16>(val, HN_EMU_RN)) {}
    __nv_bfloat16(const unsigned long val)
        : __x(hn_emu_fp_from_int<hn_emu_fmt_bf16>(val, HN_EMU_RN)) {}
#define HN_EMU_BF_TO_INT(T) \
    operator T() const { return hn_emu_fp_to_int<T>(hn_emu_bf2f(__x), HN_EMU_RZ); }
    HN_EMU_BF_TO_INT(signed char)
    HN_EMU_BF_TO_INT(unsigned char)
    HN_EMU_BF_TO_INT(char)
    HN_EMU_BF_TO_INT(short)
    HN_EMU_BF_TO_INT(unsigned short)
    HN_EMU_BF_TO_INT(int)
    HN_EMU_BF_TO_INT(unsigned int)
    HN_EMU_BF_TO_INT(long)
    HN_EMU_BF_TO_INT(unsigned long)
    HN_EMU_BF_TO_INT(long long)
    HN_EMU_BF_TO_INT(unsigned long long)
    constexpr operator bool() const { return (__x & 0x7fffu) != 0u; }
};

struct alignas(4) __nv_bfloat162 {
    __nv_bfloat16 x;
    __nv_bfloat16 y;

    __nv_bfloat162() = default;
    constexpr __nv_bfloat162(const __nv_bfloat16 &a, const __nv_bfloat16 &b) : x(a), y(b) {}
    __nv_bfloat162(const __nv_bfloat162_raw &h2r)
        : x(__nv_bfloat16_raw{h2r.x}), y(__nv_bfloat16_raw{h2r.y}) {}
    __nv_bfloat162 &operator=(const __nv_bfloat162_raw &h2r) {
        x = __nv_bfloat16_raw{h2r.x};
        y = __nv_bfloat16_raw{h2r.y};
        return *this;
    }
    operator __nv_bfloat162_raw() const {
        return __nv_bfloat162_raw{__nv_bfloat16_raw(x).x, __nv_bfloat16_raw(y).x};
    }
};

static_assert(sizeof(__nv_bfloat16) == 2 && std::is_trivially_copyable<__nv_bfloat16>::value,
              "__nv_bfloat16 layout");
static_assert(sizeof(__nv_bfloat162) == 4 && std::is_trivially_copyable<__nv_bfloat162>::value,
              "__nv_bfloat162 layout");

typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

/* declared in cuda_fp16.h */
inline __half::__half(const __nv_bfloat16 f)
    : __x(hn_emu_fp_from_float<hn_emu_fmt_f16>(hn_emu_bf2f(__nv_bfloat16_raw(f).x), HN_EMU_RN)) {}

/* ------------------------------------------------------------------------- */
/* conversions and bit casts */

static __inline__ unsigned short hn_emu_bits(const __nv_bfloat16 b) {
    return __nv_bfloat16_raw(b).x;
}
static __inline__ __nv_bfloat16 hn_emu_bfmake(unsigned short b) {
    return __nv_bfloat16(__nv_bfloat16_raw{b});
}

static __inline__ __nv_bfloat16 __float2bfloat16(const float a) {
    return hn_emu_bfmake(hn_emu_fp_from_float<hn_emu_fmt_bf16>(a, HN_EMU_RN));
}
static __inline__ __nv_bfloat16 __float2bfloat16_rn(const float a) { return __float2bfloat16(a); }
static __inline__ __nv_bfloat16 __float2bfloat16_rz(const float a) {
    return hn_emu_bfmake(hn_emu_fp_from_float<hn_emu_fmt_bf16>(a, HN_EMU_RZ));
}
static __inline__ __nv_bfloat16 __float2bfloat16_rd(const float a) {
    return hn_emu_bfmake(hn_emu_fp_from_float<hn_emu_fmt_bf16>(a, HN_EMU_RD));
}
static __inline__ __nv_bfloat16 __float2bfloat16_ru(const float a) {
    return hn_emu_bfmake(hn_emu_fp_from_float<hn_emu_fmt_bf16>(a, HN_EMU_RU));
}
static __inline__ float __bfloat162float(const __nv_bfloat16 a) {
    return hn_emu_bf2f(hn_emu_bits(a));
}
static __inline__ __nv_bfloat16 __double2bfloat16(const double a) {
    return hn_emu_bfmake(hn_emu_fp_from_double<hn_emu_fmt_bf16>(a, HN_EMU_RN));
}

#define HN_EMU_BF_INT_CVT(T, NAME)                                               \
    static __inline__ __nv_bfloat16 __##NAME##2bfloat16_rn(const T i) {          \
        return hn_emu_bfmake(hn_emu_fp_from_int<hn_emu_fmt_bf16>(i, HN_EMU_RN)); \
    }                                                                            \
    static __inline__ __nv_bfloat16 __##NAME##2bfloat16_rz(const T i) {          \
        return hn_emu_bfmake(hn_emu_fp_from_int<hn_emu_fmt_bf16>(i, HN_EMU_RZ)); \
    }                                                                            \
    static __inline__ __nv_bfloat16 __##NAME##2bfloat16_rd(const T i) {          \
        return hn_emu_bfmake(hn_emu_fp_from_int<hn_emu_fmt_bf16>(i, HN_EMU_RD)); \
    }                                                                            \
    static __inline__ __nv_bfloat16 __##NAME##2bfloat16_ru(const T i) {          \
        return hn_emu_bfmake(hn_emu_fp_from_int<hn_emu_fmt_bf16>(i, HN_EMU_RU)); \
    }                                                                            \
    static __inline__ T __bfloat162##NAME##_rn(const __nv_bfloat16 h) {          \
        return hn_emu_fp_to_int<T>(__bfloat162float(h), HN_EMU_RN);              \
    }                                                                            \
    static __inline__ T __bfloat162##NAME##_rz(const __nv_bfloat16 h) {          \
        return hn_emu_fp_to_int<T>(__bfloat162float(h), HN_EMU_RZ);              \
    }                                                                            \
    static __inline__ T __bfloat162##NAME##_rd(const __nv_bfloat16 h) {          \
        return hn_emu_fp_to_int<T>(__bfloat162float(h), HN_EMU_RD);              \
    }                                                                            \
    static __inline__ T __bfloat162##NAME##_ru(const __nv_bfloat16 h) {          \
        return hn_emu_fp_to_int<T>(__bfloat162float(h), HN_EMU_RU);              \
    }
HN_EMU_BF_INT_CVT(int, int)
HN_EMU_BF_INT_CVT(unsigned int, uint)
HN_EMU_BF_INT_CVT(short, short)
HN_EMU_BF_INT_CVT(unsigned short, ushort)
HN_EMU_BF_INT_CVT(long long, ll)
HN_EMU_BF_INT_CVT(unsigned long long, ull)
static __inline__ signed char __bfloat162char_rz(const __nv_bfloat16 h) {
    return hn_emu_fp_to_int<signed char>(__bfloat162float(h), HN_EMU_RZ);
}
static __inline__ unsigned char __bfloat162uchar_rz(const __nv_bfloat16 h) {
    return hn_emu_fp_to_int<unsigned char>(__bfloat162float(h), HN_EMU_RZ);
}

static __inline__ short __bfloat16_as_short(const __nv_bfloat16 h) { return (short)hn_emu_bits(h); }
static __inline__ unsigned short __bfloat16_as_ushort(const __nv_bfloat16 h) {
    return hn_emu_bits(h);
}
static __inline__ __nv_bfloat16 __short_as_bfloat16(const short i) {
    return hn_emu_bfmake((unsigned short)i);
}
static __inline__ __nv_bfloat16 __ushort_as_bfloat16(const unsigned short i) {
    return hn_emu_bfmake(i);
}

static __inline__ __nv_bfloat162 __float2bfloat162_rn(const float a) {
    return __nv_bfloat162(__float2bfloat16(a), __float2bfloat16(a));
}
static __inline__ __nv_bfloat162 __floats2bfloat162_rn(const float a, const float b) {
    return __nv_bfloat162(__float2bfloat16(a), __float2bfloat16(b));
}
static __inline__ __nv_bfloat162 __float22bfloat162_rn(const float2 a) {
    return __floats2bfloat162_rn(a.x, a.y);
}
static __inline__ float2 __bfloat1622float2(const __nv_bfloat162 a) {
    return make_float2(__bfloat162float(a.x), __bfloat162float(a.y));
}
static __inline__ float __low2float(const __nv_bfloat162 a) { return __bfloat162float(a.x); }
static __inline__ float __high2float(const __nv_bfloat162 a) { return __bfloat162float(a.y); }
static __inline__ __nv_bfloat162 __halves2bfloat162(const __nv_bfloat16 a, const __nv_bfloat16 b) {
    return __nv_bfloat162(a, b);
}
static __inline__ __nv_bfloat162 __bfloat162bfloat162(const __nv_bfloat16 a) {
    return __nv_bfloat162(a, a);
}
static __inline__ __nv_bfloat162 make_bfloat162(const __nv_bfloat16 x, const __nv_bfloat16 y) {
    return __nv_bfloat162(x, y);
}
static __inline__ __nv_bfloat16 __low2bfloat16(const __nv_bfloat162 a) { return a.x; }
static __inline__ __nv_bfloat16 __high2bfloat16(const __nv_bfloat162 a) { return a.y; }
static __inline__ __nv_bfloat162 __low2bfloat162(const __nv_bfloat162 a) {
    return __nv_bfloat162(a.x, a.x);
}
static __inline__ __nv_bfloat162 __high2bfloat162(const __nv_bfloat162 a) {
    return __nv_bfloat162(a.y, a.y);
}
static __inline__ __nv_bfloat162 __lows2bfloat162(const __nv_bfloat162 a, const __nv_bfloat162 b) {
    return __nv_bfloat162(a.x, b.x);
}
static __inline__ __nv_bfloat162 __highs2bfloat162(const __nv_bfloat162 a, const __nv_bfloat162 b) {
    return __nv_bfloat162(a.y, b.y);
}
static __inline__ __nv_bfloat162 __lowhigh2highlow(const __nv_bfloat162 a) {
    return __nv_bfloat162(a.y, a.x);
}

#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)

HN_EMU_FP_OPS(__nv_bfloat16, __nv_bfloat162, hn_emu_fmt_bf16, hn_emu_bf2f, hn_emu_bfmake, bf)

/* std::numeric_limits<__nv_bfloat16> (so cuda::std::numeric_limits, which libcu++
 * specialises for __nv_bfloat16 too): without it the primary template answered 0 for
 * max(), infinity() ..., silently */
namespace std {
template <>
class numeric_limits<__nv_bfloat16> {
  public:
    static constexpr bool is_specialized = true, is_signed = true, is_integer = false, is_exact = false;
    static constexpr bool has_infinity = true, has_quiet_NaN = true, has_signaling_NaN = true;
    static constexpr float_denorm_style has_denorm = denorm_present;
    static constexpr bool has_denorm_loss = false, is_iec559 = true, is_bounded = true, is_modulo = false;
    static constexpr bool traps = false, tinyness_before = false;
    static constexpr float_round_style round_style = round_to_nearest;
    static constexpr int digits = 8, digits10 = 2, max_digits10 = 4, radix = 2;
    static constexpr int min_exponent = -125, min_exponent10 = -37;
    static constexpr int max_exponent = 128, max_exponent10 = 38;
    static constexpr __nv_bfloat16 min() noexcept { return __nv_bfloat16_raw{0x0080u}; }
    static constexpr __nv_bfloat16 max() noexcept { return __nv_bfloat16_raw{0x7f7fu}; }
    static constexpr __nv_bfloat16 lowest() noexcept { return __nv_bfloat16_raw{0xff7fu}; }
    static constexpr __nv_bfloat16 epsilon() noexcept { return __nv_bfloat16_raw{0x3c00u}; }
    static constexpr __nv_bfloat16 round_error() noexcept { return __nv_bfloat16_raw{0x3f00u}; }
    static constexpr __nv_bfloat16 infinity() noexcept { return __nv_bfloat16_raw{0x7f80u}; }
    static constexpr __nv_bfloat16 quiet_NaN() noexcept { return __nv_bfloat16_raw{0x7fc0u}; }
    static constexpr __nv_bfloat16 signaling_NaN() noexcept { return __nv_bfloat16_raw{0x7fa0u}; }
    static constexpr __nv_bfloat16 denorm_min() noexcept { return __nv_bfloat16_raw{0x0001u}; }
};
} // namespace std

#endif
