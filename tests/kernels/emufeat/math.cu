/*
 * math.cu: the intrinsics of shim/hn_emu_math.h, for tests/test_emu_features.c,
 * which checks every result against C (fesetround for the directed roundings).
 * Also compiled by NVRTC (sm_90) there, so each call is valid CUDA.
 *
 *   rounded      __fadd/fsub/fmul/fdiv/fsqrt/frcp/fmaf_rd/ru/rz, __dadd/dmul/ddiv_r*,
 *                __double2float_r*, __int2float_r*, __ull2float_r* of a[i], b[i]
 *   convert      float and double to integer conversions in every mode, at and
 *                past the destination's range and for NaN (saturated, NaN -> 0)
 *   special      erfinvf, erfcinvf, normcdfinvf, erfcxf, cyl_bessel_i0f/i1f and
 *                their double forms, norm4df, rnormf, rhypotf
 *   simd         __dp4a, __dp2a_lo/hi, __vadd4, __vcmpges4, __vaddss4, __vsadu4,
 *                __vabsss4, __vavgu4, __vsetltu2, __vsub2, __vmaxs2, __nv_bswap32;
 *                min/max of long and unsigned long, __fns, __builtin_assume
 *   trigpi       sinpif, cospif, sincospif, sinpi, cospi (exact zeros at
 *                integers and half-integers)
 */
#define ROUNDED_N 24

__global__ void rounded(const float *a, const float *b, unsigned *o) {
    int i = threadIdx.x;
    float x = a[i], y = b[i];
    double dx = x, dy = (double)y * 1.0000001;
    unsigned *r = o + i * ROUNDED_N;
    float f[ROUNDED_N] = {
        __fadd_rd(x, y), __fadd_ru(x, y), __fadd_rz(x, y), __fsub_rd(x, y),
        __fsub_ru(x, y), __fmul_rd(x, y), __fmul_ru(x, y), __fmul_rz(x, y),
        __fdiv_rd(x, y), __fdiv_ru(x, y), __fdiv_rz(x, y), __fsqrt_rd(fabsf(x)),
        __fsqrt_ru(fabsf(x)), __frcp_rd(y), __frcp_ru(y), __fmaf_rz(x, y, x),
        __fmaf_rd(x, y, y), __fmaf_ru(x, x, y), __double2float_rd(dx / dy),
        __double2float_ru(dx / dy), __double2float_rz(dx / dy),
        __int2float_rd(__float_as_int(x)), __int2float_ru(__float_as_int(y)),
        __ull2float_rz(0xffffffffffffffffull - (unsigned long long)__float_as_uint(x))};
    for (int k = 0; k < ROUNDED_N; k++) r[k] = __float_as_uint(f[k]);
    double d[3] = {__dadd_rd(dx, dy), __dmul_ru(dx, dy), __ddiv_rz(dx, dy)};
    unsigned long long *q = (unsigned long long *)(o + 64 * ROUNDED_N) + i * 3;
    for (int k = 0; k < 3; k++) q[k] = (unsigned long long)__double_as_longlong(d[k]);
}

__global__ void convert(const float *a, unsigned *o) {
    int i = threadIdx.x;
    float x = a[i];
    double dx = (double)x * 1.5;
    long long *q = (long long *)o + i * 16;
    q[0] = __float2int_rn(x);
    q[1] = __float2int_rz(x);
    q[2] = __float2int_rd(x);
    q[3] = __float2int_ru(x);
    q[4] = __float2uint_rn(x);
    q[5] = __float2uint_rz(x);
    q[6] = __float2ll_rd(x);
    q[7] = __float2ll_ru(x);
    q[8] = (long long)__float2ull_rn(x);
    q[9] = __double2int_rn(dx);
    q[10] = __double2uint_ru(dx);
    q[11] = __double2ll_rz(dx);
    q[12] = (long long)__double2ull_rd(dx);
    q[13] = __double2uint_rd(dx);
    q[14] = __double2ll_ru(dx);
    q[15] = isnan(dx) + 2 * isinf(dx) + 4 * signbit(dx) + 8 * isfinite(dx);
}

__global__ void special(const float *a, float *o) {
    int i = threadIdx.x;
    float x = a[i];
    o[i * 12 + 0] = erfinvf(x);
    o[i * 12 + 1] = erfcinvf(1.0f - x);
    o[i * 12 + 2] = normcdfinvf(0.5f + 0.5f * x);
    o[i * 12 + 3] = erfcxf(30.0f * x);
    o[i * 12 + 4] = cyl_bessel_i0f(4.0f * x);
    o[i * 12 + 5] = cyl_bessel_i1f(4.0f * x);
    o[i * 12 + 6] = (float)erfinv((double)x);
    o[i * 12 + 7] = (float)erfcinv(ldexp(1.0, -60 * (i + 1)));
    o[i * 12 + 8] = norm4df(x, 2.0f * x, 3.0f, 4.0f);
    float v[3] = {x, 1.0f, 2.0f};
    o[i * 12 + 9] = rnormf(3, v);
    o[i * 12 + 10] = rhypotf(x, 1.0f);
    o[i * 12 + 11] = erfcinvf(ldexpf(1.0f, -20 * (i % 6 + 1)));
}

__global__ void simd(unsigned *o) {
    o[0] = (unsigned)__dp4a(0x01ff0203, 0x02030405, 10);
    o[1] = __dp4a(0x01ff0203u, 0x02030405u, 10u);
    o[2] = (unsigned)__dp2a_lo((int)0xfffe0003, 0x01020304, 1);
    o[3] = (unsigned)__dp2a_hi((int)0xfffe0003, 0x01020304, 1);
    o[4] = __vadd4(0xff010203u, 0x01010101u);
    o[5] = __vcmpges4(0x1234aba5u, 0x1234aba6u);
    o[6] = __vaddss4(0x7f7f0000u, 0x01800000u);
    o[7] = __vsadu4(0x01020304u, 0x04030201u);
    o[8] = __vabsss4(0x80fe0102u);
    o[9] = __vavgu4(0x01010101u, 0x02020203u);
    o[10] = __vsetltu2(0x00010005u, 0x00020003u);
    o[11] = __vsub2(0x00010005u, 0x00020003u);
    o[12] = __vmaxs2(0x8000ffffu, 0x00010002u);
    o[13] = __nv_bswap32(0x11223344u);
    long l = -3;
    unsigned long ul = 4;
    o[14] = (unsigned)max(l, ul) + (unsigned)min(ul, 9l);
    __builtin_assume(ul > 0);
    o[15] = __fns(0xf0f0u, 0, 1);
    o[16] = __fns(0xf0f0u, 8, 2);
    o[17] = __fns(0xf0f0u, 11, -1);
    o[18] = __fns(0x1u, 1, 1);
}

/* sinpif, cospif, sincospif and the double forms of a[i] */
__global__ void trigpi(const float *a, float *o) {
    int i = threadIdx.x;
    float x = a[i], s, c;
    sincospif(x, &s, &c);
    o[i * 4 + 0] = sinpif(x);
    o[i * 4 + 1] = cospif(x);
    o[i * 4 + 2] = s - (float)sinpi((double)x);
    o[i * 4 + 3] = c - (float)cospi((double)x);
}
