/*
 * softmax_authors: softmax kernels as their authors write them, bound to the
 * softmax operator from docs/ops/softmax.md alone (tests/configs/newops/softmax_authors.json).
 *
 *   softmax_vec4       a warp per row, float4 loads (cols % 4 == 0: the config's
 *                      where), max and sum by __shfl_xor_sync; block (32, WARPS)
 *   softmax_cg_online  a block per row, each thread's running (max, sum) in one
 *                      pass, merged with cg::reduce per warp and shared memory
 *                      across warps; block BLOCK (a multiple of 32)
 *   softmax_inplace    writes exp(x - max) back into x before normalizing into y:
 *                      the input-corruption check must report it
 *   softmax_stats, softmax_normalize  two launches: (max, 1/sum) per row into a
 *                      scratch buffer, then the normalization
 *   BUG_NO_MAX, BUG_WARP_MASK (defines): planted bugs
 */
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

/* -INFINITY without <math.h>, which NVRTC lacks */
#define NEG_INF __int_as_float(0xff800000)

#ifdef BUG_WARP_MASK
#define FULL_MASK 0x0000ffffu
#else
#define FULL_MASK 0xffffffffu
#endif

__device__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
    return v;
}
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

__global__ void softmax_vec4(const float *__restrict__ x, float *__restrict__ y, int rows, int cols) {
    int row = blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= rows) return;
    const float4 *xr = reinterpret_cast<const float4 *>(x + (size_t)row * cols);
    float4 *yr = reinterpret_cast<float4 *>(y + (size_t)row * cols);
    int n4 = cols / 4;
#ifdef BUG_NO_MAX
    float m = 0.0f;
#else
    float m = NEG_INF;
    for (int i = threadIdx.x; i < n4; i += 32) {
        float4 v = xr[i];
        m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
    }
    m = warp_max(m);
#endif
    float s = 0.0f;
    for (int i = threadIdx.x; i < n4; i += 32) {
        float4 v = xr[i];
        s += expf(v.x - m) + expf(v.y - m) + expf(v.z - m) + expf(v.w - m);
    }
    float inv = 1.0f / warp_sum(s);
    for (int i = threadIdx.x; i < n4; i += 32) {
        float4 v = xr[i];
        yr[i] = make_float4(expf(v.x - m) * inv, expf(v.y - m) * inv, expf(v.z - m) * inv, expf(v.w - m) * inv);
    }
}

#ifndef BLOCK
#define BLOCK 128
#endif
struct ms { float m, s; };

__global__ void softmax_cg_online(const float *x, float *y, int rows, int cols) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    __shared__ float sm[BLOCK / 32], ss[BLOCK / 32];
    const float *xr = x + (size_t)blockIdx.x * cols;
    float m = NEG_INF, s = 0.0f;
    for (int i = threadIdx.x; i < cols; i += BLOCK) {
        float v = xr[i];
        if (v > m) { s *= expf(m - v); m = v; }
        s += expf(v - m);
    }
    /* merge: the warp's max, each lane's sum rescaled to it, the warp's sum */
    float wm = cg::reduce(warp, m, cg::greater<float>());
    float ws = cg::reduce(warp, m == NEG_INF ? 0.0f : s * expf(m - wm), cg::plus<float>());
    if (warp.thread_rank() == 0) { sm[warp.meta_group_rank()] = wm; ss[warp.meta_group_rank()] = ws; }
    block.sync();
    float bm = NEG_INF, bs = 0.0f;
    for (int w = 0; w < BLOCK / 32; w++) bm = fmaxf(bm, sm[w]);
    for (int w = 0; w < BLOCK / 32; w++) bs += sm[w] == NEG_INF ? 0.0f : ss[w] * expf(sm[w] - bm);
    float inv = 1.0f / bs;
    for (int i = threadIdx.x; i < cols; i += BLOCK) y[(size_t)blockIdx.x * cols + i] = expf(xr[i] - bm) * inv;
}

/* one thread per row; x used as the author's scratch for exp(x - max) */
__global__ void softmax_inplace(float *x, float *y, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float *xr = x + (size_t)row * cols;
    float m = NEG_INF, s = 0.0f;
    for (int c = 0; c < cols; c++) m = fmaxf(m, xr[c]);
    for (int c = 0; c < cols; c++) { xr[c] = expf(xr[c] - m); s += xr[c]; }
    for (int c = 0; c < cols; c++) y[(size_t)row * cols + c] = xr[c] / s;
}

/* launch 1: a warp per row, (max, 1 / sum) into stats[2 * row] */
__global__ void softmax_stats(const float *x, float2 *stats, int rows, int cols) {
    int row = blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= rows) return;
    const float *xr = x + (size_t)row * cols;
    float m = NEG_INF;
    for (int c = threadIdx.x; c < cols; c += 32) m = fmaxf(m, xr[c]);
    m = warp_max(m);
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 32) s += expf(xr[c] - m);
    s = warp_sum(s);
    if (threadIdx.x == 0) stats[row] = make_float2(m, 1.0f / s);
}

/* launch 2: one thread per element */
__global__ void softmax_normalize(const float *x, const float2 *stats, float *y, int rows, int cols) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)rows * cols) return;
    float2 st = stats[i / cols];
    y[i] = expf(x[i] - st.x) * st.y;
}

/* an in-place softmax that forgot its work: given x alone, it must not pass */
__global__ void softmax_noop(const float *x, int rows, int cols) {}
