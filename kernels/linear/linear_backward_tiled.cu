/*
 * linear_backward_tiled: dx and dweight with shared-memory tiles (the menu of the
 * backward kernels is in linear_backward_naive.cu; dbias has only the naive one).
 *
 *   linear_backward_dx_tiled       dx (batch, in_f) = dy (batch, out_f) W (out_f, in_f):
 *                                  a plain tiled product; per step of TILE output
 *                                  features, thread (tx, ty) loads dy[b0+ty][k0+tx]
 *                                  and weight[k0+ty][i0+tx] (both coalesced)
 *   linear_backward_dweight_tiled  dweight (out_f, in_f) = dy^T (out_f, batch) x (batch, in_f):
 *                                  the sum runs down the batch; per step of TILE
 *                                  rows, thread (tx, ty) loads dy[k0+ty][o0+tx] and
 *                                  x[k0+ty][i0+tx] (coalesced), and dy's tile is read
 *                                  transposed (a broadcast within a row of threads)
 *
 * Block (TILE, TILE), grid (ceil(in_f/TILE), ceil(batch/TILE)) for dx and
 * (ceil(in_f/TILE), ceil(out_f/TILE)) for dweight; edges load zeros; every thread
 * reaches every barrier.
 *
 *   harness run configs/linear_backward_sweep.json --variant 'linear_backward_dx_tiled[TILE=16]'
 *   harness debug configs/linear_backward_sweep.json --kernel 'linear_backward_dweight_tiled[TILE=16]' --set batch=17,in_f=5,out_f=3
 */
#include "hn_kernel.h"

#ifndef TILE
#define TILE 16
#endif

__global__ void linear_backward_dx_tiled(const float *dy, const float *weight, float *dx, int batch, int in_f,
                                         int out_f HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    __shared__ float gs[TILE][TILE]; /* gs[r][k] = dy[b0 + r][k0 + k] */
    __shared__ float ws[TILE][TILE]; /* ws[k][c] = weight[k0 + k][i0 + c] */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int b = blockIdx.y * TILE + ty, i = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < out_f; k0 += TILE) {
        gs[ty][tx] = b < batch && k0 + tx < out_f ? dy[(size_t)b * out_f + k0 + tx] : 0.0f;
        ws[ty][tx] = k0 + ty < out_f && i < in_f ? weight[(size_t)(k0 + ty) * in_f + i] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += gs[ty][k] * ws[k][tx];
        __syncthreads();
    }
    if (b < batch && i < in_f) dx[(size_t)b * in_f + i] = acc;
    HN_SINGLE_BLOCK_LEAVE();
}

__global__ void linear_backward_dweight_tiled(const float *dy, const float *x, float *dweight, int batch, int in_f,
                                              int out_f HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    __shared__ float gs[TILE][TILE]; /* gs[k][r] = dy[k0 + k][o0 + r] */
    __shared__ float xs[TILE][TILE]; /* xs[k][c] = x[k0 + k][i0 + c] */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int o0 = blockIdx.y * TILE, i0 = blockIdx.x * TILE;
    const int o = o0 + ty, i = i0 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < batch; k0 += TILE) {
        const int k = k0 + ty;
        gs[ty][tx] = k < batch && o0 + tx < out_f ? dy[(size_t)k * out_f + o0 + tx] : 0.0f;
        xs[ty][tx] = k < batch && i < in_f ? x[(size_t)k * in_f + i] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk < TILE; kk++) acc += gs[kk][ty] * xs[kk][tx];
        __syncthreads();
    }
    if (o < out_f && i < in_f) dweight[(size_t)o * in_f + i] = acc;
    HN_SINGLE_BLOCK_LEAVE();
}
