/*
 * gemm_naive: c = alpha op(a) op(b) + beta c, row-major float32 (the gemm
 * operator, docs/ops/gemm.md), one thread per element of c.
 *
 * The family (configs/gemm_sweep.json):
 *   gemm_naive     one thread per c[i][j], the dot product from global memory;
 *                  every transpose combination
 *   gemm_tiled     TILE x TILE tiles of op(a) and op(b) in shared memory
 *   gemm_regblock  a BM x BN tile of c per block, TM x TN of it per thread in
 *                  registers, BK-deep slices of a and b staged in shared memory
 *                  (siboehm's kernel 5 shape)
 *
 * trans_a / trans_b (0 or 1) say how a and b are stored: a is (m, k), or (k, m)
 * used transposed; b is (k, n), or (n, k). beta = 0 leaves c's input unread,
 * as BLAS does. Block (16, 16), grid (ceil(n/16), ceil(m/16)).
 *
 *   harness run configs/gemm_sweep.json --variant gemm_naive
 *   harness debug configs/gemm_sweep.json --kernel gemm_naive --set m=5,n=7,k=3
 */
#include "hn_kernel.h"

__global__ void gemm_naive(const float *a, const float *b, float *c, int m, int n, int k, float alpha, float beta,
                           int trans_a, int trans_b HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m && j < n) {
        float acc = 0.0f;
        for (int p = 0; p < k; p++) {
            const float av = trans_a ? a[(size_t)p * m + i] : a[(size_t)i * k + p];
            const float bv = trans_b ? b[(size_t)j * k + p] : b[(size_t)p * n + j];
            acc += av * bv;
        }
        float *out = &c[(size_t)i * n + j];
        *out = beta == 0.0f ? alpha * acc : alpha * acc + beta * *out;
    }
    HN_SINGLE_BLOCK_LEAVE();
}
