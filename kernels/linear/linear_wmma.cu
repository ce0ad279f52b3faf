/*
 * linear_wmma: y = x W^T + b on the tensor cores (nvcuda::wmma), inputs rounded
 * to tf32 (HALF=0) or to __half (HALF=1), products summed in float (the family's
 * menu is in linear_naive.cu).
 *
 *   x (batch, in_f), weight (out_f, in_f), bias (out_f) -> y (batch, out_f), row-major
 *
 * A block of 4 warps computes a 32 x 32 tile of y, each warp a 16 x 16 quarter
 * (warp w: rows 16 * (w / 2), columns 16 * (w % 2)). For each step of 16 input
 * features k0, the block stages x[b0 .. b0+31][k0 .. k0+15] and weight[o0 ..
 * o0+31][k0 .. k0+15] in shared memory, rounded to the input type and zero
 * outside the matrices (so any batch, in_f and out_f work: wmma wants 32-byte
 * aligned tiles and an ldm of 16 bytes' multiple, which global rows of odd
 * length are not). The A operand is xs (row-major, ldm 16); the B operand,
 * W^T, is ws read column-major (B[k][n] = ws[n][k], ldm 16). tf32 takes two
 * m16n16k8 steps per stage, half one m16n16k16. The accumulator goes through
 * shared memory (cs, per warp) to global, where the bias is added and the
 * edges are cut. Block (128), grid (ceil(out_f/32), ceil(batch/32)).
 *
 * Accuracy: tf32 and half keep 11 significant bits of each input, so each
 * product is off by about 2^-11 relative; the config's check is looser than the
 * float variants' for that reason (tests/configs/linear_wmma.json).
 *
 *   harness run tests/configs/linear_wmma.json --backend emu
 *   harness debug tests/configs/linear_wmma.json --kernel 'linear_wmma[HALF=0]' --set batch=3,in_f=17,out_f=5
 */
#include <cuda_fp16.h>
#include <mma.h>

#include "hn_kernel.h"

#ifndef HALF
#define HALF 0
#endif

using namespace nvcuda;

#if HALF
typedef __half in_t;                 /* what the staged tiles hold */
typedef __half frag_t;               /* the fragments' element type */
#define KSTEP 16
#define TO_IN(v) __float2half(v)
#else
typedef float in_t;
typedef wmma::precision::tf32 frag_t;
#define KSTEP 8
#define TO_IN(v) wmma::__float_to_tf32(v)
#endif

__global__ void linear_wmma(const float *x, const float *weight, const float *bias, float *y, int batch, int in_f,
                            int out_f HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    __shared__ __align__(32) in_t xs[32][16];     /* xs[r][k] = x[b0 + r][k0 + k] */
    __shared__ __align__(32) in_t ws[32][16];     /* ws[c][k] = weight[o0 + c][k0 + k] */
    __shared__ __align__(32) float cs[4][16 * 16]; /* each warp's 16 x 16 result */
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int b0 = blockIdx.y * 32, o0 = blockIdx.x * 32;
    const int wr = warp / 2 * 16, wc = warp % 2 * 16; /* the warp's quarter */
    wmma::fragment<wmma::matrix_a, 16, 16, KSTEP, frag_t, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, KSTEP, frag_t, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, KSTEP, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < in_f; k0 += 16) {
        for (int i = t; i < 32 * 16; i += 128) { /* 4 elements of each tile a thread */
            const int r = i / 16, k = k0 + i % 16;
            xs[r][i % 16] = TO_IN(b0 + r < batch && k < in_f ? x[(size_t)(b0 + r) * in_f + k] : 0.0f);
            ws[r][i % 16] = TO_IN(o0 + r < out_f && k < in_f ? weight[(size_t)(o0 + r) * in_f + k] : 0.0f);
        }
        __syncthreads();
        for (int kk = 0; kk < 16; kk += KSTEP) {
            wmma::load_matrix_sync(fa, &xs[wr][kk], 16);
            wmma::load_matrix_sync(fb, &ws[wc][kk], 16);
            wmma::mma_sync(acc, fa, fb, acc);
        }
        __syncthreads();
    }
    wmma::store_matrix_sync(cs[warp], acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int i = lane; i < 16 * 16; i += 32) {
        const int b = b0 + wr + i / 16, o = o0 + wc + i % 16;
        if (b < batch && o < out_f) y[(size_t)b * out_f + o] = cs[warp][i] + bias[o];
    }
    HN_SINGLE_BLOCK_LEAVE();
}
