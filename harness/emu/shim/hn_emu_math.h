/*
 * hn_emu_math.h: the conversion and arithmetic intrinsics that name a rounding
 * mode, the CUDA math functions the host's libm lacks, and the SIMD
 * (`__vadd4` ...) and dot-product (`__dp4a`) intrinsics; included by hn_emu.h.
 *
 * Results are a GPU's where CUDA defines them exactly:
 *   - floating-point to integer conversions round in the named mode, then
 *     saturate to the destination's range, and give 0 for NaN (PTX `cvt`'s
 *     rule; a host cast of an out-of-range value is undefined and gives
 *     INT_MIN on x86);
 *   - `__fadd_rd` and the other directed-rounding operations (and the integer to
 *     float conversions with a mode) run the host's own instruction under that
 *     rounding mode: the SSE control register (MXCSR) is set around the
 *     operation, whose operands pass through empty asm statements so the
 *     compiler can neither fold it nor move it out of the window.
 * The functions CUDA documents with an error bound (erfinvf, erfcinvf,
 * normcdfinvf, erfcxf, cyl_bessel_i0f ...) are computed in double and rounded
 * once, so they are at least as accurate as a GPU's, not bitwise equal to them.
 */
#ifndef HN_EMU_MATH_H
#define HN_EMU_MATH_H

/* ------------------------------------------------------------------------- */
/* rounding modes (MXCSR bits 13-14) */

enum { HN_EMU_MX_RD = 1, HN_EMU_MX_RU = 2, HN_EMU_MX_RZ = 3 };

/* v, hidden from the optimiser: it can neither fold v nor move its uses above here */
template <class _HnT>
static __inline__ __attribute__((always_inline)) int hn_emu_opaque(_HnT &v) {
    __asm__ volatile("" : "+m"(v));
    return 0;
}

/* f(args...) evaluated with the SSE rounding mode set to `mode`. */
template <class _HnF, class... _HnA>
static __inline__ __attribute__((always_inline)) auto hn_emu_rounded(int mode, _HnF f,
                                                                      _HnA... a) {
    unsigned int old, now;
    __asm__ volatile("stmxcsr %0" : "=m"(old));
    now = (old & ~0x6000u) | ((unsigned int)mode << 13);
    __asm__ volatile("ldmxcsr %0" : : "m"(now));
    (void)(hn_emu_opaque(a) + ... + 0);
    auto r = f(a...);
    __asm__ volatile("" : "+m"(r));
    __asm__ volatile("ldmxcsr %0" : : "m"(old));
    return r;
}

#define HN_EMU_ROUNDED_OPS(SUF, MODE)                                                       \
    static __inline__ float __fadd_##SUF(float a, float b) {                                \
        return hn_emu_rounded(MODE, [](float x, float y) { return x + y; }, a, b);          \
    }                                                                                       \
    static __inline__ float __fsub_##SUF(float a, float b) {                                \
        return hn_emu_rounded(MODE, [](float x, float y) { return x - y; }, a, b);          \
    }                                                                                       \
    static __inline__ float __fmul_##SUF(float a, float b) {                                \
        return hn_emu_rounded(MODE, [](float x, float y) { return x * y; }, a, b);          \
    }                                                                                       \
    static __inline__ float __fdiv_##SUF(float a, float b) {                                \
        return hn_emu_rounded(MODE, [](float x, float y) { return x / y; }, a, b);          \
    }                                                                                       \
    static __inline__ float __frcp_##SUF(float a) {                                         \
        return hn_emu_rounded(MODE, [](float x) { return 1.0f / x; }, a);                   \
    }                                                                                       \
    static __inline__ float __fsqrt_##SUF(float a) {                                        \
        return hn_emu_rounded(MODE, [](float x) { return __builtin_sqrtf(x); }, a);         \
    }                                                                                       \
    static __inline__ float __fmaf_##SUF(float a, float b, float c) {                       \
        return hn_emu_rounded(MODE, [](float x, float y, float z) { return fmaf(x, y, z); }, \
                              a, b, c);                                                     \
    }                                                                                       \
    static __inline__ float __fmaf_ieee_##SUF(float a, float b, float c) {                  \
        return __fmaf_##SUF(a, b, c);                                                       \
    }                                                                                       \
    static __inline__ double __dadd_##SUF(double a, double b) {                             \
        return hn_emu_rounded(MODE, [](double x, double y) { return x + y; }, a, b);        \
    }                                                                                       \
    static __inline__ double __dsub_##SUF(double a, double b) {                             \
        return hn_emu_rounded(MODE, [](double x, double y) { return x - y; }, a, b);        \
    }                                                                                       \
    static __inline__ double __dmul_##SUF(double a, double b) {                             \
        return hn_emu_rounded(MODE, [](double x, double y) { return x * y; }, a, b);        \
    }                                                                                       \
    static __inline__ double __ddiv_##SUF(double a, double b) {                             \
        return hn_emu_rounded(MODE, [](double x, double y) { return x / y; }, a, b);        \
    }                                                                                       \
    static __inline__ double __drcp_##SUF(double a) {                                       \
        return hn_emu_rounded(MODE, [](double x) { return 1.0 / x; }, a);                   \
    }                                                                                       \
    static __inline__ double __dsqrt_##SUF(double a) {                                      \
        return hn_emu_rounded(MODE, [](double x) { return __builtin_sqrt(x); }, a);         \
    }                                                                                       \
    static __inline__ double __fma_##SUF(double a, double b, double c) {                    \
        return hn_emu_rounded(MODE, [](double x, double y, double z) { return fma(x, y, z); }, \
                              a, b, c);                                                     \
    }                                                                                       \
    static __inline__ float __double2float_##SUF(double a) {                                \
        return hn_emu_rounded(MODE, [](double x) { return (float)x; }, a);                  \
    }                                                                                       \
    static __inline__ float __int2float_##SUF(int a) {                                      \
        return hn_emu_rounded(MODE, [](int x) { return (float)x; }, a);                     \
    }                                                                                       \
    static __inline__ float __uint2float_##SUF(unsigned int a) {                            \
        return hn_emu_rounded(MODE, [](unsigned int x) { return (float)x; }, a);            \
    }                                                                                       \
    static __inline__ float __ll2float_##SUF(long long a) {                                 \
        return hn_emu_rounded(MODE, [](long long x) { return (float)x; }, a);               \
    }                                                                                       \
    static __inline__ float __ull2float_##SUF(unsigned long long a) {                       \
        return hn_emu_rounded(MODE, [](unsigned long long x) { return (float)x; }, a);      \
    }                                                                                       \
    static __inline__ double __ll2double_##SUF(long long a) {                               \
        return hn_emu_rounded(MODE, [](long long x) { return (double)x; }, a);              \
    }                                                                                       \
    static __inline__ double __ull2double_##SUF(unsigned long long a) {                     \
        return hn_emu_rounded(MODE, [](unsigned long long x) { return (double)x; }, a);     \
    }
HN_EMU_ROUNDED_OPS(rd, HN_EMU_MX_RD)
HN_EMU_ROUNDED_OPS(ru, HN_EMU_MX_RU)
HN_EMU_ROUNDED_OPS(rz, HN_EMU_MX_RZ)

/* round to nearest even: the plain operations */
static __inline__ float __fadd_rn(float a, float b) { return a + b; }
static __inline__ float __fsub_rn(float a, float b) { return a - b; }
static __inline__ float __fmul_rn(float a, float b) { return a * b; }
static __inline__ float __fdiv_rn(float a, float b) { return a / b; }
static __inline__ float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static __inline__ float __fmaf_ieee_rn(float a, float b, float c) { return fmaf(a, b, c); }
static __inline__ float __frcp_rn(float a) { return 1.0f / a; }
static __inline__ float __fsqrt_rn(float a) { return sqrtf(a); }
static __inline__ float __frsqrt_rn(float a) { return 1.0f / sqrtf(a); }
static __inline__ double __dadd_rn(double a, double b) { return a + b; }
static __inline__ double __dsub_rn(double a, double b) { return a - b; }
static __inline__ double __dmul_rn(double a, double b) { return a * b; }
static __inline__ double __ddiv_rn(double a, double b) { return a / b; }
static __inline__ double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static __inline__ double __drcp_rn(double a) { return 1.0 / a; }
static __inline__ double __dsqrt_rn(double a) { return sqrt(a); }
static __inline__ float __double2float_rn(double x) { return (float)x; }
static __inline__ float __int2float_rn(int x) { return (float)x; }
static __inline__ float __uint2float_rn(unsigned int x) { return (float)x; }
static __inline__ float __ll2float_rn(long long x) { return (float)x; }
static __inline__ float __ull2float_rn(unsigned long long x) { return (float)x; }
static __inline__ double __int2double_rn(int x) { return x; }
static __inline__ double __uint2double_rn(unsigned int x) { return x; }
static __inline__ double __ll2double_rn(long long x) { return (double)x; }
static __inline__ double __ull2double_rn(unsigned long long x) { return (double)x; }

/* ------------------------------------------------------------------------- */
/* floating point to integer: round in the mode, saturate, NaN -> 0 */

template <class _HnI, class _HnF>
static __inline__ _HnI hn_emu_f2i(_HnF r) {
    typedef std::numeric_limits<_HnI> _HnL;
    if (r != r) return 0;
    /* 2^digits is exact in every floating type; values at or past it saturate */
    const _HnF top = (_HnF)ldexp(1.0, _HnL::digits);
    if (r >= top) return _HnL::max();
    if (_HnL::is_signed ? r < -top : r <= (_HnF)-1) return _HnL::min();
    if (!_HnL::is_signed && r < 0) return 0;
    return (_HnI)r;
}
#define HN_EMU_F2I(NAME, FROM, TO)                                                          \
    static __inline__ TO NAME##_rn(FROM x) { return hn_emu_f2i<TO>(std::nearbyint(x)); }    \
    static __inline__ TO NAME##_rz(FROM x) { return hn_emu_f2i<TO>(std::trunc(x)); }        \
    static __inline__ TO NAME##_rd(FROM x) { return hn_emu_f2i<TO>(std::floor(x)); }        \
    static __inline__ TO NAME##_ru(FROM x) { return hn_emu_f2i<TO>(std::ceil(x)); }
HN_EMU_F2I(__float2int, float, int)
HN_EMU_F2I(__float2uint, float, unsigned int)
HN_EMU_F2I(__float2ll, float, long long)
HN_EMU_F2I(__float2ull, float, unsigned long long)
HN_EMU_F2I(__double2int, double, int)
HN_EMU_F2I(__double2uint, double, unsigned int)
HN_EMU_F2I(__double2ll, double, long long)
HN_EMU_F2I(__double2ull, double, unsigned long long)

/* ------------------------------------------------------------------------- */
/* inverse error functions: a first guess (Giles' single-precision polynomials),
 * then Newton steps in double on erf or erfc itself */

/* erfinv(x) from w = -log((1 - x)(1 + x)), passed so erfcinv keeps its digits */
static __inline__ double hn_emu_erfinv_guess(double x, double w) {
    double p;
    if (w < 5.0) {
        w -= 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;
        p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;
        p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;
        p = 1.50140941 + p * w;
    } else {
        w = sqrt(w) - 3.0;
        p = -0.000200214257;
        p = 0.000100950558 + p * w;
        p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;
        p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;
        p = 2.83297682 + p * w;
    }
    return p * x;
}
static __inline__ double erfinv(double x) {
    if (x != x || x < -1.0 || x > 1.0) return NAN;
    if (x == 1.0) return INFINITY;
    if (x == -1.0) return -INFINITY;
    if (x == 0.0) return x;
    double r = hn_emu_erfinv_guess(x, -log((1.0 - x) * (1.0 + x)));
    const double k = 1.1283791670955126; /* 2 / sqrt(pi) */
    for (int i = 0; i < 3; i++) r -= (erf(r) - x) / (k * exp(-r * r));
    return r;
}
/* erfcinv(y) = erfinv(1 - y), solved on erfc so small y keep their precision:
 * Newton's method on log(erfc(r)) = log(y), written with erfcx (the erfc of
 * the tail underflows, its logarithm is nearly a parabola), from sqrt(-log y) */
static __inline__ double erfcx(double x);
static __inline__ double erfcinv(double y) {
    if (y != y || y < 0.0 || y > 2.0) return NAN;
    if (y == 0.0) return INFINITY;
    if (y == 2.0) return -INFINITY;
    if (y > 0.0625 && y < 1.9375) return erfinv(1.0 - y);
    if (y >= 1.9375) return -erfcinv(2.0 - y);
    const double k = 1.1283791670955126; /* 2 / sqrt(pi) */
    double r = sqrt(-log(y)), ly = log(y);
    for (int i = 0; i < 40; i++) {
        double e = erfcx(r), step = (log(e) - r * r - ly) * e / k;
        r += step;
        if (fabs(step) <= 1e-16 * r) break;
    }
    return r;
}
static __inline__ float erfinvf(float x) { return (float)erfinv(x); }
static __inline__ float erfcinvf(float x) { return (float)erfcinv(x); }
/* the quantile of the standard normal distribution */
static __inline__ double normcdfinv(double p) { return -M_SQRT2 * erfcinv(2.0 * p); }
static __inline__ float normcdfinvf(float p) { return (float)normcdfinv(p); }

/* erfcx(x) = exp(x^2) erfc(x), by its asymptotic series where exp overflows */
static __inline__ double erfcx(double x) {
    if (x != x) return x;
    if (x < 26.0) return exp(x * x) * erfc(x);
    double t = 1.0 / (2.0 * x * x), s = 1.0, term = 1.0;
    for (int k = 1; k < 40 && fabs(term) > 1e-17; k++) {
        term *= -(2.0 * k - 1.0) * t;
        s += term;
    }
    return s / (x * 1.7724538509055160); /* sqrt(pi) */
}
static __inline__ float erfcxf(float x) { return (float)erfcx(x); }

/* the modified Bessel functions of the first kind, orders 0 and 1, by their
 * power series (every term positive, so no cancellation) */
static __inline__ double hn_emu_bessel_i(double x, int order) {
    double q = x * x / 4.0, term = order ? x / 2.0 : 1.0, s = term;
    for (int k = 1; k < 1000; k++) {
        term *= q / ((double)k * (k + order));
        s += term;
        if (fabs(term) <= fabs(s) * 1e-17) break;
    }
    return s;
}
static __inline__ double cyl_bessel_i0(double x) { return hn_emu_bessel_i(fabs(x), 0); }
static __inline__ double cyl_bessel_i1(double x) { return hn_emu_bessel_i(x, 1); }
static __inline__ float cyl_bessel_i0f(float x) { return (float)cyl_bessel_i0(x); }
static __inline__ float cyl_bessel_i1f(float x) { return (float)cyl_bessel_i1(x); }

/* ------------------------------------------------------------------------- */
/* norms (computed in double: no overflow or underflow on the way) */

static __inline__ float rhypotf(float x, float y) { return (float)(1.0 / hypot(x, y)); }
static __inline__ double rhypot(double x, double y) { return 1.0 / hypot(x, y); }
static __inline__ double norm3d(double a, double b, double c) { return hypot(hypot(a, b), c); }
static __inline__ double rnorm3d(double a, double b, double c) { return 1.0 / norm3d(a, b, c); }
static __inline__ double norm4d(double a, double b, double c, double d) {
    return hypot(hypot(a, b), hypot(c, d));
}
static __inline__ double rnorm4d(double a, double b, double c, double d) {
    return 1.0 / norm4d(a, b, c, d);
}
static __inline__ float norm3df(float a, float b, float c) {
    return (float)sqrt((double)a * a + (double)b * b + (double)c * c);
}
static __inline__ float rnorm3df(float a, float b, float c) {
    return (float)(1.0 / sqrt((double)a * a + (double)b * b + (double)c * c));
}
static __inline__ float norm4df(float a, float b, float c, float d) {
    return (float)sqrt((double)a * a + (double)b * b + (double)c * c + (double)d * d);
}
static __inline__ float rnorm4df(float a, float b, float c, float d) {
    return (float)(1.0 / sqrt((double)a * a + (double)b * b + (double)c * c + (double)d * d));
}
static __inline__ double norm(int n, const double *a) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s = hypot(s, a[i]);
    return s;
}
static __inline__ double rnorm(int n, const double *a) { return 1.0 / norm(n, a); }
static __inline__ float normf(int n, const float *a) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += (double)a[i] * a[i];
    return (float)sqrt(s);
}
static __inline__ float rnormf(int n, const float *a) { return (float)(1.0 / (double)normf(n, a)); }
/* sin(pi x) and cos(pi x) with the argument reduced exactly (x mod 2 and the
 * nearest multiple of 1/2 are exact), so sinpi(n) is 0 and cospi(n + 1/2) is +0
 * as on a GPU, where sin(M_PI * x) gave 1.2e-16 for x = 1 */
static __inline__ double hn_emu_trigpi(double x, int cosine) {
    if (!std::isfinite(x)) return NAN;
    double r = fmod(x, 2.0);     /* exact, in (-2, 2) */
    double n = nearbyint(2.0 * r); /* quadrant, -4 ... 4 */
    double t = M_PI * (r - 0.5 * n); /* |r - n/2| <= 1/4, exact before the product */
    int q = ((int)n + (cosine ? 1 : 0)) & 3;
    double v = q == 0 ? sin(t) : q == 1 ? cos(t) : q == 2 ? -sin(t) : -cos(t);
    if (v == 0.0) return cosine ? 0.0 : copysign(0.0, x);
    return v;
}
static __inline__ double sinpi(double x) { return hn_emu_trigpi(x, 0); }
static __inline__ double cospi(double x) { return hn_emu_trigpi(x, 1); }
static __inline__ float sinpif(float x) { return (float)hn_emu_trigpi(x, 0); }
static __inline__ float cospif(float x) { return (float)hn_emu_trigpi(x, 1); }
static __inline__ void sincospi(double x, double *s, double *c) {
    *s = sinpi(x);
    *c = cospi(x);
}
static __inline__ void sincospif(float x, float *s, float *c) {
    *s = sinpif(x);
    *c = cospif(x);
}
static __inline__ double fdivide(double a, double b) { return a / b; }

/* ------------------------------------------------------------------------- */
/* byte swaps, dot products, SIMD within a word */

static __inline__ unsigned short __nv_bswap16(unsigned short x) { return __builtin_bswap16(x); }
static __inline__ unsigned int __nv_bswap32(unsigned int x) { return __builtin_bswap32(x); }
static __inline__ unsigned long long __nv_bswap64(unsigned long long x) {
    return __builtin_bswap64(x);
}

/* The position of the offset-th set bit of mask counted from bit base (itself
 * included) toward the high bits (offset > 0) or the low bits (offset < 0);
 * offset 0: base if that bit is set. 0xffffffff when there is none (PTX fns). */
static __inline__ unsigned int __fns(unsigned int mask, unsigned int base, int offset) {
    if (base > 31) return 0xffffffffu;
    if (offset == 0) return (mask >> base) & 1u ? base : 0xffffffffu;
    int step = offset > 0 ? 1 : -1, left = offset > 0 ? offset : -offset;
    for (int b = (int)base; b >= 0 && b < 32; b += step)
        if ((mask >> b) & 1u && --left == 0) return (unsigned int)b;
    return 0xffffffffu;
}

/* the four signed or unsigned bytes of a and b, multiplied and summed, plus c */
static __inline__ int __dp4a(int a, int b, int c) {
    for (int i = 0; i < 4; i++) c += (int)(signed char)(a >> 8 * i) * (signed char)(b >> 8 * i);
    return c;
}
static __inline__ unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
    for (int i = 0; i < 4; i++) c += ((a >> 8 * i) & 0xffu) * ((b >> 8 * i) & 0xffu);
    return c;
}
static __inline__ int __dp4a(char4 a, char4 b, int c) {
    return c + a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}
static __inline__ unsigned int __dp4a(uchar4 a, uchar4 b, unsigned int c) {
    return c + a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}
/* the two 16-bit halves of a times two bytes of b (low or high pair), plus c */
static __inline__ int hn_emu_dp2a(int a, int b, int c, int hi) {
    for (int i = 0; i < 2; i++)
        c += (int)(short)(a >> 16 * i) * (signed char)(b >> 8 * (i + 2 * hi));
    return c;
}
static __inline__ unsigned int hn_emu_dp2a(unsigned int a, unsigned int b, unsigned int c, int hi) {
    for (int i = 0; i < 2; i++) c += ((a >> 16 * i) & 0xffffu) * ((b >> 8 * (i + 2 * hi)) & 0xffu);
    return c;
}
static __inline__ int __dp2a_lo(int a, int b, int c) { return hn_emu_dp2a(a, b, c, 0); }
static __inline__ int __dp2a_hi(int a, int b, int c) { return hn_emu_dp2a(a, b, c, 1); }
static __inline__ unsigned int __dp2a_lo(unsigned int a, unsigned int b, unsigned int c) {
    return hn_emu_dp2a(a, b, c, 0);
}
static __inline__ unsigned int __dp2a_hi(unsigned int a, unsigned int b, unsigned int c) {
    return hn_emu_dp2a(a, b, c, 1);
}

/* f applied to each of the 32 / BITS parts of a and b, read as signed (SIGNED)
 * or unsigned integers; each result truncated to BITS bits in its place */
template <int _HnBits, bool _HnSigned, class _HnF>
static __inline__ unsigned int hn_emu_simd(unsigned int a, unsigned int b, _HnF f) {
    const unsigned int mask = (1u << _HnBits) - 1u;
    unsigned int r = 0;
    for (int s = 0; s < 32; s += _HnBits) {
        long long x = (a >> s) & mask, y = (b >> s) & mask;
        if (_HnSigned) {
            x = x >= (1ll << (_HnBits - 1)) ? x - (1ll << _HnBits) : x;
            y = y >= (1ll << (_HnBits - 1)) ? y - (1ll << _HnBits) : y;
        }
        r |= ((unsigned int)f(x, y) & mask) << s;
    }
    return r;
}
/* the sum over the parts of f (for the sums of absolute differences) */
template <int _HnBits, bool _HnSigned, class _HnF>
static __inline__ unsigned int hn_emu_simd_sum(unsigned int a, unsigned int b, _HnF f) {
    unsigned int sum = 0;
    hn_emu_simd<_HnBits, _HnSigned>(a, b, [&](long long x, long long y) {
        sum += (unsigned int)f(x, y);
        return 0ll;
    });
    return sum;
}
template <int _HnBits, bool _HnSigned>
static __inline__ long long hn_emu_simd_sat(long long v) {
    const long long lo = _HnSigned ? -(1ll << (_HnBits - 1)) : 0;
    const long long hi = _HnSigned ? (1ll << (_HnBits - 1)) - 1 : (1ll << _HnBits) - 1;
    return v < lo ? lo : v > hi ? hi : v;
}

#define HN_EMU_SIMD2(NAME, BITS, SIGNED, EXPR)                                               \
    static __inline__ unsigned int NAME(unsigned int a, unsigned int b) {                  \
        return hn_emu_simd<BITS, SIGNED>(a, b, [](long long x, long long y) {             \
            (void)y;                                                                        \
            return (long long)(EXPR);                                                       \
        });                                                                                 \
    }
#define HN_EMU_SIMD1(NAME, BITS, SIGNED, EXPR)                                               \
    static __inline__ unsigned int NAME(unsigned int a) {                                  \
        return hn_emu_simd<BITS, SIGNED>(a, 0u, [](long long x, long long) {              \
            return (long long)(EXPR);                                                       \
        });                                                                                 \
    }
#define HN_EMU_SAT(BITS, SIGNED, V) hn_emu_simd_sat<BITS, SIGNED>(V)
#define HN_EMU_SIMD_ALL(N, BITS, ONES)                                                      \
    HN_EMU_SIMD1(__vabs##N, BITS, true, x < 0 ? -x : x)                                     \
    HN_EMU_SIMD1(__vabsss##N, BITS, true, HN_EMU_SAT(BITS, true, x < 0 ? -x : x))           \
    HN_EMU_SIMD1(__vneg##N, BITS, true, -x)                                                 \
    HN_EMU_SIMD1(__vnegss##N, BITS, true, HN_EMU_SAT(BITS, true, -x))                       \
    HN_EMU_SIMD2(__vadd##N, BITS, false, x + y)                                             \
    HN_EMU_SIMD2(__vsub##N, BITS, false, x - y)                                             \
    HN_EMU_SIMD2(__vaddss##N, BITS, true, HN_EMU_SAT(BITS, true, x + y))                    \
    HN_EMU_SIMD2(__vaddus##N, BITS, false, HN_EMU_SAT(BITS, false, x + y))                  \
    HN_EMU_SIMD2(__vsubss##N, BITS, true, HN_EMU_SAT(BITS, true, x - y))                    \
    HN_EMU_SIMD2(__vsubus##N, BITS, false, HN_EMU_SAT(BITS, false, x - y))                  \
    HN_EMU_SIMD2(__vavgs##N, BITS, true, (x + y + 1) >> 1)             \
    HN_EMU_SIMD2(__vavgu##N, BITS, false, (x + y + 1) >> 1)                                 \
    HN_EMU_SIMD2(__vhaddu##N, BITS, false, (x + y) >> 1)                                    \
    HN_EMU_SIMD2(__vabsdiffs##N, BITS, true, x > y ? x - y : y - x)                         \
    HN_EMU_SIMD2(__vabsdiffu##N, BITS, false, x > y ? x - y : y - x)                        \
    HN_EMU_SIMD2(__vmaxs##N, BITS, true, x > y ? x : y)                                     \
    HN_EMU_SIMD2(__vmaxu##N, BITS, false, x > y ? x : y)                                    \
    HN_EMU_SIMD2(__vmins##N, BITS, true, x < y ? x : y)                                     \
    HN_EMU_SIMD2(__vminu##N, BITS, false, x < y ? x : y)                                    \
    HN_EMU_SIMD2(__vcmpeq##N, BITS, false, x == y ? ONES : 0)                               \
    HN_EMU_SIMD2(__vcmpne##N, BITS, false, x != y ? ONES : 0)                               \
    HN_EMU_SIMD2(__vcmpges##N, BITS, true, x >= y ? ONES : 0)                               \
    HN_EMU_SIMD2(__vcmpgeu##N, BITS, false, x >= y ? ONES : 0)                              \
    HN_EMU_SIMD2(__vcmpgts##N, BITS, true, x > y ? ONES : 0)                                \
    HN_EMU_SIMD2(__vcmpgtu##N, BITS, false, x > y ? ONES : 0)                               \
    HN_EMU_SIMD2(__vcmples##N, BITS, true, x <= y ? ONES : 0)                               \
    HN_EMU_SIMD2(__vcmpleu##N, BITS, false, x <= y ? ONES : 0)                              \
    HN_EMU_SIMD2(__vcmplts##N, BITS, true, x < y ? ONES : 0)                                \
    HN_EMU_SIMD2(__vcmpltu##N, BITS, false, x < y ? ONES : 0)                               \
    HN_EMU_SIMD2(__vseteq##N, BITS, false, x == y)                                          \
    HN_EMU_SIMD2(__vsetne##N, BITS, false, x != y)                                          \
    HN_EMU_SIMD2(__vsetges##N, BITS, true, x >= y)                                          \
    HN_EMU_SIMD2(__vsetgeu##N, BITS, false, x >= y)                                         \
    HN_EMU_SIMD2(__vsetgts##N, BITS, true, x > y)                                           \
    HN_EMU_SIMD2(__vsetgtu##N, BITS, false, x > y)                                          \
    HN_EMU_SIMD2(__vsetles##N, BITS, true, x <= y)                                          \
    HN_EMU_SIMD2(__vsetleu##N, BITS, false, x <= y)                                         \
    HN_EMU_SIMD2(__vsetlts##N, BITS, true, x < y)                                           \
    HN_EMU_SIMD2(__vsetltu##N, BITS, false, x < y)                                          \
    static __inline__ unsigned int __vsads##N(unsigned int a, unsigned int b) {             \
        return hn_emu_simd_sum<BITS, true>(a, b,                                            \
                                           [](long long x, long long y) { return x > y ? x - y : y - x; }); \
    }                                                                                       \
    static __inline__ unsigned int __vsadu##N(unsigned int a, unsigned int b) {             \
        return hn_emu_simd_sum<BITS, false>(a, b,                                           \
                                            [](long long x, long long y) { return x > y ? x - y : y - x; }); \
    }
HN_EMU_SIMD_ALL(2, 16, 0xffff)
HN_EMU_SIMD_ALL(4, 8, 0xff)

#endif
