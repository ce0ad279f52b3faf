/*
 * layernorm_authors: layernorm kernels as their authors write them, bound to the
 * layernorm operator from docs/ops/layernorm.md alone
 * (tests/configs/newops/layernorm_authors.json).
 *
 *   layernorm_llmc_cg   llm.c's layernorm_forward_kernel3: a warp per row,
 *                       cg::reduce(warp, sum, cg::plus<float>()), two passes,
 *                       its argument order (out, mean, rstd, inp, weight, bias, N, C)
 *                       and eps as a define (EPS), not an argument
 *   layernorm_y_cg      the same writing y alone
 *   layernorm_rstd_first  mean and rstd in the other order, (rstd, mean, ...)
 *   layernorm_welford4  a block per row, float4 loads (cols % 4 == 0), Welford's
 *                       (count, mean, M2) per thread merged through shared memory
 *   BUG_UNBIASED, BUG_WARP_MASK (defines): planted bugs
 */
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

#ifndef EPS
#define EPS 1e-5f
#endif

/* mean and rstd of row r by the warp; each lane's partial sums, then cg::reduce */
__device__ void row_stats(cg::thread_block_tile<32> &warp, const float *x, int C, float &m, float &s) {
    float sum = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) sum += x[i];
    sum = cg::reduce(warp, sum, cg::plus<float>());
    m = sum / C;
    float v = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        float d = x[i] - m;
        v += d * d;
    }
    v = cg::reduce(warp, v, cg::plus<float>());
#ifdef BUG_UNBIASED
    s = rsqrtf(v / (C - 1) + EPS);
#else
    s = rsqrtf(v / C + EPS);
#endif
}

__global__ void layernorm_llmc_cg(float *__restrict__ out, float *__restrict__ mean, float *__restrict__ rstd,
                                  const float *__restrict__ inp, const float *__restrict__ weight,
                                  const float *__restrict__ bias, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int idx = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (idx >= N) return;
    const float *x = inp + (size_t)idx * C;
    float m, s;
    row_stats(warp, x, C, m, s);
    if (warp.thread_rank() == 0) {
        mean[idx] = m;
        rstd[idx] = s;
    }
    float *o = out + (size_t)idx * C;
    for (int c = warp.thread_rank(); c < C; c += warp.size()) o[c] = s * (__ldcs(x + c) - m) * weight[c] + bias[c];
}

__global__ void layernorm_y_cg(const float *inp, const float *weight, const float *bias, float *out, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int idx = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (idx >= N) return;
    const float *x = inp + (size_t)idx * C;
    float m, s;
    row_stats(warp, x, C, m, s);
    for (int c = warp.thread_rank(); c < C; c += warp.size()) out[(size_t)idx * C + c] = s * (x[c] - m) * weight[c] + bias[c];
}

__global__ void layernorm_rstd_first(float *rstd, float *mean, float *out, const float *inp, const float *weight,
                                     const float *bias, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int idx = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (idx >= N) return;
    const float *x = inp + (size_t)idx * C;
    float m, s;
    row_stats(warp, x, C, m, s);
    if (warp.thread_rank() == 0) { rstd[idx] = s; mean[idx] = m; }
    for (int c = warp.thread_rank(); c < C; c += warp.size()) out[(size_t)idx * C + c] = s * (x[c] - m) * weight[c] + bias[c];
}

#ifndef BLOCK
#define BLOCK 128
#endif
#ifdef BUG_WARP_MASK
#define MASK 0x7fffffffu
#else
#define MASK 0xffffffffu
#endif

/* Chan et al.: merge (nb, mb, m2b) into (n, m, m2) */
__device__ void welford_merge(float &n, float &m, float &m2, float nb, float mb, float m2b) {
    float nn = n + nb;
    if (nn == 0.0f) return;
    float d = mb - m;
    m += d * nb / nn;
    m2 += m2b + d * d * n * nb / nn;
    n = nn;
}

__global__ void layernorm_welford4(const float *x, const float *w, const float *b, float *y, float *mean, float *rstd,
                                   int rows, int cols, float eps) {
    __shared__ float sn[BLOCK / 32], sm[BLOCK / 32], s2[BLOCK / 32];
    __shared__ float row_m, row_s;
    const float4 *xr = reinterpret_cast<const float4 *>(x + (size_t)blockIdx.x * cols);
    float n = 0.0f, m = 0.0f, m2 = 0.0f;
    for (int i = threadIdx.x; i < cols / 4; i += BLOCK) {
        float4 v = xr[i];
        float e[4] = {v.x, v.y, v.z, v.w};
        for (int j = 0; j < 4; j++) {
            n += 1.0f;
            float d = e[j] - m;
            m += d / n;
            m2 += d * (e[j] - m);
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        float nb = __shfl_xor_sync(MASK, n, o), mb = __shfl_xor_sync(MASK, m, o), m2b = __shfl_xor_sync(MASK, m2, o);
        welford_merge(n, m, m2, nb, mb, m2b);
    }
    if (threadIdx.x % 32 == 0) { sn[threadIdx.x / 32] = n; sm[threadIdx.x / 32] = m; s2[threadIdx.x / 32] = m2; }
    __syncthreads();
    if (threadIdx.x == 0) {
        float tn = 0.0f, tm = 0.0f, t2 = 0.0f;
        for (int i = 0; i < BLOCK / 32; i++) welford_merge(tn, tm, t2, sn[i], sm[i], s2[i]);
        row_m = tm;
        row_s = rsqrtf(t2 / cols + eps);
        mean[blockIdx.x] = tm;
        rstd[blockIdx.x] = row_s;
    }
    __syncthreads();
    float4 *yr = reinterpret_cast<float4 *>(y + (size_t)blockIdx.x * cols);
    const float4 *w4 = reinterpret_cast<const float4 *>(w), *b4 = reinterpret_cast<const float4 *>(b);
    for (int i = threadIdx.x; i < cols / 4; i += BLOCK) {
        float4 v = xr[i], ww = w4[i], bb = b4[i];
        yr[i] = make_float4((v.x - row_m) * row_s * ww.x + bb.x, (v.y - row_m) * row_s * ww.y + bb.y,
                            (v.z - row_m) * row_s * ww.z + bb.z, (v.w - row_m) * row_s * ww.w + bb.w);
    }
}
