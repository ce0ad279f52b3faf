/*
 * layernorm: y = (x - mean) * rstd * weight + bias over each row of x (rows,
 * cols), with each row's mean and rstd = 1 / sqrt(var + eps) written too (the
 * layernorm operator, docs/ops/layernorm.md; llm.c's layernorm_forward
 * signature: out, mean, rstd, inp, weight, bias, N, C).
 *
 *   layernorm_naive    one thread per row: the mean, the variance from the
 *                      deviations (two passes, as the reference), the writes
 *   layernorm_warp     one warp per row: lanes stride the row, sums reduced with
 *                      __shfl_xor_sync; two passes (the row stays in L1); WARPS
 *                      rows a block
 *   layernorm_welford  one block per row (BLOCK threads, a power of two): each
 *                      thread keeps Welford's running (count, mean, M2) over its
 *                      columns, the block merges the triples in a shared-memory
 *                      tree (Chan et al.'s pairwise rule), one pass over x
 *                      before the writes
 *
 *   harness run configs/layernorm_sweep.json
 *   harness debug configs/layernorm_sweep.json --kernel layernorm_warp --set rows=3,cols=40
 */
#include "hn_kernel.h"

#ifndef WARPS
#define WARPS 4
#endif
#ifndef BLOCK
#define BLOCK 128
#endif

__global__ void layernorm_naive(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                                const float *bias, int N, int C, float eps) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= N) return;
    const float *x = inp + (size_t)r * C;
    float s = 0.0f;
    for (int c = 0; c < C; c++) s += x[c];
    const float m = s / C;
    float v = 0.0f;
    for (int c = 0; c < C; c++) v += (x[c] - m) * (x[c] - m);
    const float rs = rsqrtf(v / C + eps);
    for (int c = 0; c < C; c++) out[(size_t)r * C + c] = (x[c] - m) * rs * weight[c] + bias[c];
    mean[r] = m;
    rstd[r] = rs;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Block (32, WARPS), grid ceil(N / WARPS). */
__global__ void layernorm_warp(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                               const float *bias, int N, int C, float eps) {
    const int r = blockIdx.x * WARPS + threadIdx.y, lane = threadIdx.x;
    if (r >= N) return; /* whole warps: the full shuffle mask holds */
    const float *x = inp + (size_t)r * C;
    float s = 0.0f;
    for (int c = lane; c < C; c += 32) s += x[c];
    const float m = warp_sum(s) / C;
    float v = 0.0f;
    for (int c = lane; c < C; c += 32) v += (x[c] - m) * (x[c] - m);
    const float rs = rsqrtf(warp_sum(v) / C + eps);
    for (int c = lane; c < C; c += 32) out[(size_t)r * C + c] = (x[c] - m) * rs * weight[c] + bias[c];
    if (lane == 0) {
        mean[r] = m;
        rstd[r] = rs;
    }
}

/* Block BLOCK, grid N. */
__global__ void layernorm_welford(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                                  const float *bias, int N, int C, float eps) {
    __shared__ float cnt[BLOCK], mu[BLOCK], m2[BLOCK];
    const int r = blockIdx.x, t = threadIdx.x;
    const float *x = inp + (size_t)r * C;
    float n = 0.0f, a = 0.0f, q = 0.0f; /* count, mean, sum of squared deviations */
    for (int c = t; c < C; c += BLOCK) {
        n += 1.0f;
        const float d = x[c] - a;
        a += d / n;
        q += d * (x[c] - a);
    }
    cnt[t] = n, mu[t] = a, m2[t] = q;
    __syncthreads();
    for (int h = BLOCK / 2; h > 0; h /= 2) {
        if (t < h) {
            const float nb = cnt[t + h];
            if (nb > 0.0f) { /* merge (n, a, q) with the other half's */
                const float na = cnt[t], nn = na + nb, d = mu[t + h] - mu[t];
                mu[t] += d * nb / nn;
                m2[t] += m2[t + h] + d * d * na * nb / nn;
                cnt[t] = nn;
            }
        }
        __syncthreads();
    }
    const float m = mu[0], rs = rsqrtf(m2[0] / C + eps);
    for (int c = t; c < C; c += BLOCK) out[(size_t)r * C + c] = (x[c] - m) * rs * weight[c] + bias[c];
    if (t == 0) {
        mean[r] = m;
        rstd[r] = rs;
    }
    (void)N;
}
