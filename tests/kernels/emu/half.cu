/*
 * half.cu: __half and __nv_bfloat16 kernels for tests/test_emu_cg_half.c, each
 * checked there against an independent C implementation; they also compile with
 * NVRTC (sm_90). Values travel as 16-bit patterns (unsigned short).
 *
 *   h_roundtrip   every half bit pattern to float and back
 *   h_convert     float -> half and bfloat16 in the four rounding modes, the
 *                 implicit constructor, double -> half and bfloat16
 *   h_int         int -> half in the four modes; half -> int (_rn, _rz)
 *   h_arith       half operators and intrinsics: + - * / fma, compound
 *                 assignment, max, min, neg, abs, sqrt, comparisons, isnan, isinf
 *   bf_arith      the same for __nv_bfloat16
 *   h2_arith      __half2: __hadd2, __hmul2, __hfma2, __heq2_mask, the pair helpers
 *   h_math        hfloor, hceil, htrunc, hrint, hexp, hlog, hrcp (per element)
 *   h_consts      CUDART_*_FP16 and CUDART_*_BF16
 *   h_atomic      atomicAdd on __half, __half2 and __nv_bfloat16 from many threads
 *   h_shuffle     __shfl_xor_sync of __half, __shfl_down_sync of __half2, a
 *                 tile's shfl of __nv_bfloat16, through __shared__ __half
 */
#if defined(__CUDACC_RTC__)
/* NVRTC's cuda_fp16.h leaves the CUDART_*_FP16 constants to cuda_fp16.hpp,
 * which nvcc's (and the emulator's) includes; this asks for it */
#define __FORCE_INCLUDE_CUDA_FP16_HPP_FROM_FP16_H__
#define __FORCE_INCLUDE_CUDA_BF16_HPP_FROM_BF16_H__
#endif
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace cg = cooperative_groups;

__global__ void h_roundtrip(float *f, unsigned short *back) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    __half h = __ushort_as_half((unsigned short)i);
    float x = __half2float(h);
    f[i] = x;
    back[i] = __half_as_ushort(__float2half(x));
}

/* out: (11, n) = half rn, rz, rd, ru, the __half(float) constructor; bfloat16
 * rn, rz, rd, ru; half and bfloat16 from din[i] */
__global__ void h_convert(const float *in, const double *din, int n, unsigned short *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
    out[i] = __half_as_ushort(__float2half_rn(x));
    out[n + i] = __half_as_ushort(__float2half_rz(x));
    out[2 * n + i] = __half_as_ushort(__float2half_rd(x));
    out[3 * n + i] = __half_as_ushort(__float2half_ru(x));
    __half h = x;
    out[4 * n + i] = __half_as_ushort(h);
    out[5 * n + i] = __bfloat16_as_ushort(__float2bfloat16(x));
    out[6 * n + i] = __bfloat16_as_ushort(__float2bfloat16_rz(x));
    out[7 * n + i] = __bfloat16_as_ushort(__float2bfloat16_rd(x));
    out[8 * n + i] = __bfloat16_as_ushort(__float2bfloat16_ru(x));
    out[9 * n + i] = __half_as_ushort(__double2half(din[i]));
    out[10 * n + i] = __bfloat16_as_ushort(__double2bfloat16(din[i]));
}

/* out: (4, n) = __int2half_rn, _rz, _rd, _ru of in[i]; iout: (2, n) =
 * __half2int_rn, _rz of the half with bits hin[i] */
__global__ void h_int(const int *in, const unsigned short *hin, int n, unsigned short *out,
                      int *iout) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = __half_as_ushort(__int2half_rn(in[i]));
    out[n + i] = __half_as_ushort(__int2half_rz(in[i]));
    out[2 * n + i] = __half_as_ushort(__int2half_rd(in[i]));
    out[3 * n + i] = __half_as_ushort(__int2half_ru(in[i]));
    __half h = __ushort_as_half(hin[i]);
    iout[i] = __half2int_rn(h);
    iout[n + i] = __half2int_rz(h);
}

/* out: (10, n) = a+b, a-b, a*b, a/b, fma(a,b,c), (a += b), max, min, -a, |a|;
 * sq: hsqrt(|a|); cmp: (9, n) = ==, <, <=, >, >=, !=, __hneu, __hisnan(a),
 * __hisinf(a) */
__global__ void h_arith(const unsigned short *ua, const unsigned short *ub,
                        const unsigned short *uc, int n, unsigned short *out, unsigned short *sq,
                        int *cmp) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half a = __ushort_as_half(ua[i]), b = __ushort_as_half(ub[i]), c = __ushort_as_half(uc[i]);
    out[i] = __half_as_ushort(a + b);
    out[n + i] = __half_as_ushort(a - b);
    out[2 * n + i] = __half_as_ushort(a * b);
    out[3 * n + i] = __half_as_ushort(a / b);
    out[4 * n + i] = __half_as_ushort(__hfma(a, b, c));
    __half s = a;
    s += b;
    out[5 * n + i] = __half_as_ushort(s);
    out[6 * n + i] = __half_as_ushort(__hmax(a, b));
    out[7 * n + i] = __half_as_ushort(__hmin(a, b));
    out[8 * n + i] = __half_as_ushort(-a);
    out[9 * n + i] = __half_as_ushort(__habs(a));
    sq[i] = __half_as_ushort(hsqrt(__habs(a)));
    cmp[i] = a == b;
    cmp[n + i] = a < b;
    cmp[2 * n + i] = a <= b;
    cmp[3 * n + i] = a > b;
    cmp[4 * n + i] = a >= b;
    cmp[5 * n + i] = a != b;
    cmp[6 * n + i] = __hne(a, b);
    cmp[7 * n + i] = __hisnan(a);
    cmp[8 * n + i] = __hisinf(a);
}

/* out: (5, n) = a+b, a-b, a*b, a/b, fma(a,b,c) in bfloat16; cmp: a < b */
__global__ void bf_arith(const unsigned short *ua, const unsigned short *ub,
                         const unsigned short *uc, int n, unsigned short *out, int *cmp) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __nv_bfloat16 a = __ushort_as_bfloat16(ua[i]), b = __ushort_as_bfloat16(ub[i]),
                  c = __ushort_as_bfloat16(uc[i]);
    out[i] = __bfloat16_as_ushort(a + b);
    out[n + i] = __bfloat16_as_ushort(a - b);
    out[2 * n + i] = __bfloat16_as_ushort(a * b);
    out[3 * n + i] = __bfloat16_as_ushort(a / b);
    out[4 * n + i] = __bfloat16_as_ushort(__hfma(a, b, c));
    cmp[i] = a < b;
}

/* pairs (a[i], b[i]) and (b[i], c[i]); out: (10, n) = __hadd2 .x .y, __hmul2 .x
 * .y, __hfma2 .x .y, __low2half, __high2half of __lowhigh2highlow, __half2half2
 * .y, __halves2half2 .y; mask: __heq2_mask; f: (2, n) = __half22float2 */
__global__ void h2_arith(const unsigned short *ua, const unsigned short *ub,
                         const unsigned short *uc, int n, unsigned short *out, unsigned *mask,
                         float *f) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half a = __ushort_as_half(ua[i]), b = __ushort_as_half(ub[i]), c = __ushort_as_half(uc[i]);
    __half2 p = __halves2half2(a, b), q = __halves2half2(b, c);
    __half2 s = __hadd2(p, q), m = __hmul2(p, q), f2 = __hfma2(p, q, p);
    out[i] = __half_as_ushort(s.x);
    out[n + i] = __half_as_ushort(s.y);
    out[2 * n + i] = __half_as_ushort(m.x);
    out[3 * n + i] = __half_as_ushort(m.y);
    out[4 * n + i] = __half_as_ushort(__low2half(f2));
    out[5 * n + i] = __half_as_ushort(__high2half(f2));
    __half2 sw = __lowhigh2highlow(p);
    out[6 * n + i] = __half_as_ushort(__low2half(sw));
    out[7 * n + i] = __half_as_ushort(__high2half(__half2half2(c)));
    out[8 * n + i] = __half_as_ushort(__high2half(__halves2half2(c, a)));
    out[9 * n + i] = __half_as_ushort(__low2half(__floats2half2_rn(__half2float(b), 0.0f)));
    mask[i] = __heq2_mask(p, q);
    float2 g = __half22float2(p);
    f[i] = g.x;
    f[n + i] = g.y;
}

/* out: (7, n) = hfloor, hceil, htrunc, hrint, hexp, hlog, hrcp of a[i] */
__global__ void h_math(const unsigned short *ua, int n, unsigned short *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half a = __ushort_as_half(ua[i]);
    out[i] = __half_as_ushort(hfloor(a));
    out[n + i] = __half_as_ushort(hceil(a));
    out[2 * n + i] = __half_as_ushort(htrunc(a));
    out[3 * n + i] = __half_as_ushort(hrint(a));
    out[4 * n + i] = __half_as_ushort(hexp(a));
    out[5 * n + i] = __half_as_ushort(hlog(a));
    out[6 * n + i] = __half_as_ushort(hrcp(a));
}

/* out: 14 bit patterns, the CUDART constants (see the test) */
__global__ void h_consts(unsigned short *out) {
    out[0] = __half_as_ushort(CUDART_INF_FP16);
    out[1] = __half_as_ushort(CUDART_NAN_FP16);
    out[2] = __half_as_ushort(CUDART_MIN_DENORM_FP16);
    out[3] = __half_as_ushort(CUDART_MAX_NORMAL_FP16);
    out[4] = __half_as_ushort(CUDART_NEG_ZERO_FP16);
    out[5] = __half_as_ushort(CUDART_ZERO_FP16);
    out[6] = __half_as_ushort(CUDART_ONE_FP16);
    out[7] = __bfloat16_as_ushort(CUDART_INF_BF16);
    out[8] = __bfloat16_as_ushort(CUDART_NAN_BF16);
    out[9] = __bfloat16_as_ushort(CUDART_MIN_DENORM_BF16);
    out[10] = __bfloat16_as_ushort(CUDART_MAX_NORMAL_BF16);
    out[11] = __bfloat16_as_ushort(CUDART_NEG_ZERO_BF16);
    out[12] = __bfloat16_as_ushort(CUDART_ZERO_BF16);
    out[13] = __bfloat16_as_ushort(CUDART_ONE_BF16);
}

/* every thread adds 1 to h[0], (1, 0.25) to h2[0] and, the first 256, 1 to
 * b[0]; old: (2, threads) = the values h[0] had and b[0] had before each add */
__global__ void h_atomic(__half *h, __half2 *h2, __nv_bfloat16 *b, unsigned short *old) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    old[i] = __half_as_ushort(atomicAdd(h, __float2half(1.0f)));
    atomicAdd(h2, __floats2half2_rn(1.0f, 0.25f));
    old[n + i] = 0xffff;
    if (i < 256) old[n + i] = __bfloat16_as_ushort(atomicAdd(b, __float2bfloat16(1.0f)));
}

/* one block of 64; out: (4, 64) = __shfl_xor_sync(v, 1), the .y of
 * __shfl_down_sync((v, v + 0.5), 1), a tile of 8's shfl of bfloat16 (v) from
 * rank 3, the half a thread reads back from __shared__ (that of 63 - t) */
__global__ void h_shuffle(unsigned short *out) {
    __shared__ __half s[64];
    int t = threadIdx.x, n = blockDim.x;
    __half v = __int2half_rn(t);
    out[t] = __half_as_ushort(__shfl_xor_sync(0xffffffffu, v, 1));
    __half2 p = __halves2half2(v, __hadd(v, __float2half(0.5f)));
    __half2 q = __shfl_down_sync(0xffffffffu, p, 1);
    out[n + t] = __half_as_ushort(__high2half(q));
    cg::thread_block_tile<8> tile = cg::tiled_partition<8>(cg::this_thread_block());
    __nv_bfloat16 bv = __int2bfloat16_rn(t);
    out[2 * n + t] = __bfloat16_as_ushort(tile.shfl(bv, 3));
    s[t] = v;
    __syncthreads();
    out[3 * n + t] = __half_as_ushort(s[63 - t]);
}
