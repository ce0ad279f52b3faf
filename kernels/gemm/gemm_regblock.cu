/*
 * gemm_regblock: c = alpha op(a) op(b) + beta c with 2D register blocking (the
 * family's menu is in gemm_naive.cu).
 *
 * A block of (BN / TN) x (BM / TM) threads computes a BM x BN tile of c; each
 * thread owns a TM x TN sub-tile in registers. For each BK-deep slice of the
 * reduced dimension the block stages op(a)'s BM x BK tile (stored k-major, so
 * a thread's TM values of one column are contiguous) and op(b)'s BK x BN tile
 * in shared memory, every thread loading elements strided by the block size;
 * then, per q < BK, each thread reads TM values of a and TN of b into
 * registers and makes TM * TN products (an outer product): TM * TN FMAs for
 * TM + TN shared loads, where gemm_tiled makes one for two.
 *
 * Any m, n, k (edges load zeros and guard the stores) and any transposes.
 * BM % TM == 0, BN % TN == 0, (BM / TM) * (BN / TN) <= 1024 threads.
 * Block (BN / TN, BM / TM), grid (ceil(n / BN), ceil(m / BM)).
 *
 *   harness run configs/gemm_sweep.json --variant 'gemm_regblock[BM=64,BN=64,BK=8,TM=4,TN=4]'
 *   harness tune configs/gemm_tune.json
 */
#include "hn_kernel.h"

#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 4
#endif
#ifndef TN
#define TN 4
#endif

#define THREADS ((BM / TM) * (BN / TN))

__global__ void __launch_bounds__(THREADS) gemm_regblock(const float *a, const float *b, float *c, int m, int n,
                                                         int k, float alpha, float beta, int trans_a,
                                                         int trans_b HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    __shared__ float as[BK][BM]; /* as[q][r] = op(a)[i0 + r][p0 + q] */
    __shared__ float bs[BK][BN]; /* bs[q][s] = op(b)[p0 + q][j0 + s] */
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int i0 = blockIdx.y * BM, j0 = blockIdx.x * BN;
    const int ti = threadIdx.y * TM, tj = threadIdx.x * TN; /* this thread's sub-tile, within the block's */
    float acc[TM][TN];
    for (int r = 0; r < TM; r++)
        for (int s = 0; s < TN; s++) acc[r][s] = 0.0f;
    float ar[TM], br[TN];
    for (int p0 = 0; p0 < k; p0 += BK) {
        /* The tiles, element e of BM * BK (resp. BK * BN) by thread e % THREADS:
         * consecutive threads take consecutive elements of the stored rows. */
        for (int e = tid; e < BM * BK; e += THREADS) {
            int r, q;
            if (!trans_a) r = e / BK, q = e % BK; /* a (m, k): rows of BK */
            else q = e / BM, r = e % BM;          /* a (k, m): rows of BM */
            const int i = i0 + r, p = p0 + q;
            as[q][r] = i < m && p < k ? (trans_a ? a[(size_t)p * m + i] : a[(size_t)i * k + p]) : 0.0f;
        }
        for (int e = tid; e < BK * BN; e += THREADS) {
            int q, s;
            if (!trans_b) q = e / BN, s = e % BN; /* b (k, n): rows of BN */
            else s = e / BK, q = e % BK;          /* b (n, k): rows of BK */
            const int p = p0 + q, j = j0 + s;
            bs[q][s] = p < k && j < n ? (trans_b ? b[(size_t)j * k + p] : b[(size_t)p * n + j]) : 0.0f;
        }
        __syncthreads();
        for (int q = 0; q < BK; q++) {
            for (int r = 0; r < TM; r++) ar[r] = as[q][ti + r];
            for (int s = 0; s < TN; s++) br[s] = bs[q][tj + s];
            for (int r = 0; r < TM; r++)
                for (int s = 0; s < TN; s++) acc[r][s] += ar[r] * br[s];
        }
        __syncthreads();
    }
    for (int r = 0; r < TM; r++) {
        const int i = i0 + ti + r;
        if (i >= m) break;
        for (int s = 0; s < TN; s++) {
            const int j = j0 + tj + s;
            if (j >= n) break;
            float *out = &c[(size_t)i * n + j];
            *out = beta == 0.0f ? alpha * acc[r][s] : alpha * acc[r][s] + beta * *out;
        }
    }
    HN_SINGLE_BLOCK_LEAVE();
}
