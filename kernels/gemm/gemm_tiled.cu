/*
 * gemm_tiled: c = alpha op(a) op(b) + beta c with shared-memory tiles (the
 * family's menu is in gemm_naive.cu).
 *
 * A block of TILE x TILE threads computes a TILE x TILE tile of c. For each
 * TILE-deep slice p0 of the reduced dimension, the block stages op(a)'s tile
 * (rows i0.., columns p0..) and op(b)'s (rows p0.., columns j0..) in shared
 * memory. The loads follow the storage: when an operand is stored transposed,
 * thread (tx, ty) reads the element at (ty, tx) of the stored tile, so
 * consecutive threads still read consecutive addresses, and writes it
 * transposed into shared memory (rows padded by one against bank conflicts).
 * Edges load zeros; every thread reaches both barriers. Block (TILE, TILE),
 * grid (ceil(n/TILE), ceil(m/TILE)); TILE * TILE <= 1024.
 *
 *   harness run configs/gemm_sweep.json --variant 'gemm_tiled[TILE=16]'
 *   harness debug configs/gemm_sweep.json --kernel 'gemm_tiled[TILE=8]' --set m=9,n=10,k=11
 */
#include "hn_kernel.h"

#ifndef TILE
#define TILE 16
#endif

__global__ void gemm_tiled(const float *a, const float *b, float *c, int m, int n, int k, float alpha, float beta,
                           int trans_a, int trans_b HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    __shared__ float as[TILE][TILE + 1]; /* as[r][q] = op(a)[i0 + r][p0 + q] */
    __shared__ float bs[TILE][TILE + 1]; /* bs[q][s] = op(b)[p0 + q][j0 + s] */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i0 = blockIdx.y * TILE, j0 = blockIdx.x * TILE;
    float acc = 0.0f;
    for (int p0 = 0; p0 < k; p0 += TILE) {
        if (!trans_a) { /* a (m, k): row i0 + ty, column p0 + tx */
            const int i = i0 + ty, p = p0 + tx;
            as[ty][tx] = i < m && p < k ? a[(size_t)i * k + p] : 0.0f;
        } else {        /* a (k, m): row p0 + ty, column i0 + tx, i.e. op(a)[i0 + tx][p0 + ty] */
            const int p = p0 + ty, i = i0 + tx;
            as[tx][ty] = i < m && p < k ? a[(size_t)p * m + i] : 0.0f;
        }
        if (!trans_b) { /* b (k, n): row p0 + ty, column j0 + tx */
            const int p = p0 + ty, j = j0 + tx;
            bs[ty][tx] = p < k && j < n ? b[(size_t)p * n + j] : 0.0f;
        } else {        /* b (n, k): row j0 + ty, column p0 + tx, i.e. op(b)[p0 + tx][j0 + ty] */
            const int j = j0 + ty, p = p0 + tx;
            bs[tx][ty] = p < k && j < n ? b[(size_t)j * k + p] : 0.0f;
        }
        __syncthreads();
#ifdef DEBUG
        if (hn_debug_leader() && p0 == 0) {
            hn_print_matrix("op(a) tile", &as[0][0], TILE, TILE, TILE + 1);
            hn_print_matrix("op(b) tile", &bs[0][0], TILE, TILE, TILE + 1);
        }
#endif
        for (int q = 0; q < TILE; q++) acc += as[ty][q] * bs[q][tx];
        __syncthreads();
    }
    const int i = i0 + ty, j = j0 + tx;
    if (i < m && j < n) {
        float *out = &c[(size_t)i * n + j];
        *out = beta == 0.0f ? alpha * acc : alpha * acc + beta * *out;
    }
    HN_SINGLE_BLOCK_LEAVE();
}
