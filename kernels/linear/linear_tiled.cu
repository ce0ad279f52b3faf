/*
 * linear_tiled: y = x W^T + b with shared-memory tiles (the family's menu is in
 * linear_naive.cu).
 *
 *   x (batch, in_f), weight (out_f, in_f), bias (out_f) -> y (batch, out_f), row-major
 *
 * A block of TILE x TILE threads computes a TILE x TILE tile of y: rows b0.. of
 * the batch, columns o0.. of the outputs. For each step of TILE input features
 * k0, thread (tx, ty) loads x[b0 + ty][k0 + tx] and weight[o0 + ty][k0 + tx]
 * (consecutive threads read consecutive addresses), the block synchronizes, and
 * each thread accumulates sum_k xs[ty][k] * ws[tx][k]: W's tile is read
 * transposed, its rows padded by one so the 32 threads of a warp hit 32 banks.
 * Edges load zeros; every thread reaches both barriers. Block (TILE, TILE), grid
 * (ceil(out_f/TILE), ceil(batch/TILE)); TILE * TILE <= 1024.
 *
 *   harness run configs/linear_sweep.json --variant 'linear_tiled[TILE=16]'
 *   harness debug configs/linear_sweep.json --kernel 'linear_tiled[TILE=16]' --set batch=3,in_f=17,out_f=5
 */
#include "hn_kernel.h"

#ifndef TILE
#define TILE 16
#endif

__global__ void linear_tiled(const float *x, const float *weight, const float *bias, float *y, int batch, int in_f,
                             int out_f HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    __shared__ float xs[TILE][TILE];     /* xs[r][k] = x[b0 + r][k0 + k] */
    __shared__ float ws[TILE][TILE + 1]; /* ws[c][k] = weight[o0 + c][k0 + k] */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int b0 = blockIdx.y * TILE, o0 = blockIdx.x * TILE;
    const int b = b0 + ty, o = o0 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < in_f; k0 += TILE) {
        const int k = k0 + tx;
        xs[ty][tx] = b < batch && k < in_f ? x[(size_t)b * in_f + k] : 0.0f;
        ws[ty][tx] = o0 + ty < out_f && k < in_f ? weight[(size_t)(o0 + ty) * in_f + k] : 0.0f;
        __syncthreads();
#ifdef DEBUG
        if (hn_debug_leader() && k0 == 0) {
            hn_print_matrix("x tile", &xs[0][0], TILE, TILE, TILE);
            hn_print_matrix("weight tile", &ws[0][0], TILE, TILE, TILE + 1);
        }
#endif
        for (int kk = 0; kk < TILE; kk++) acc += xs[ty][kk] * ws[tx][kk];
        __syncthreads();
    }
    if (b < batch && o < out_f) y[(size_t)b * out_f + o] = acc + bias[o];
    HN_SINGLE_BLOCK_LEAVE();
}
