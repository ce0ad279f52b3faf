/*
 * softmax: y = softmax(x) over each row of x (rows, cols), row-major float (the
 * softmax operator, docs/ops/softmax.md). Rows carry offsets of +-96 and +-32, so
 * exp(x) alone overflows float: every kernel subtracts the row's max.
 *
 *   softmax_row_thread  one thread per row, three passes over it (max, sum of
 *                       exponentials, scaled writes): simple, uncoalesced
 *   softmax_warp_row    one warp per row: each lane strides over the row, the max
 *                       and the sum reduced with __shfl_xor_sync; WARPS warps (rows)
 *                       a block
 *   softmax_block_row   one block per row (BLOCK threads, a power of two): tree
 *                       reductions in shared memory, for long rows
 *   softmax_online      one warp per row, the max and the sum in a single pass
 *                       (each lane keeps a running max m and sum s, rescaling s by
 *                       exp(m_old - m_new) when m grows: flash attention's online
 *                       softmax), the lanes' (m, s) pairs merged by shuffles, then
 *                       one pass writing y
 *
 *   harness run configs/softmax_sweep.json
 *   harness debug configs/softmax_sweep.json --kernel softmax_warp_row --set rows=3,cols=40
 */
#include "hn_kernel.h"

/* -infinity (NVRTC has no INFINITY macro: math.h is not there) */
#define NEG_INF (-__int_as_float(0x7f800000))

#ifndef WARPS
#define WARPS 4
#endif
#ifndef BLOCK
#define BLOCK 256
#endif

__global__ void softmax_row_thread(const float *x, float *y, int rows, int cols) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float *xr = x + (size_t)r * cols;
    float *yr = y + (size_t)r * cols;
    float m = NEG_INF;
    for (int c = 0; c < cols; c++) m = fmaxf(m, xr[c]);
    float s = 0.0f;
    for (int c = 0; c < cols; c++) s += expf(xr[c] - m);
    const float inv = 1.0f / s;
    for (int c = 0; c < cols; c++) yr[c] = expf(xr[c] - m) * inv;
}

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Block (32, WARPS), grid ceil(rows / WARPS): warp threadIdx.y takes one row. A
 * whole warp leaves together past the last row, so the shuffles' full mask holds. */
__global__ void softmax_warp_row(const float *x, float *y, int rows, int cols) {
    const int r = blockIdx.x * WARPS + threadIdx.y, lane = threadIdx.x;
    if (r >= rows) return;
    const float *xr = x + (size_t)r * cols;
    float *yr = y + (size_t)r * cols;
    float m = NEG_INF;
    for (int c = lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
    m = warp_max(m);
    float s = 0.0f;
    for (int c = lane; c < cols; c += 32) s += expf(xr[c] - m);
    const float inv = 1.0f / warp_sum(s);
    for (int c = lane; c < cols; c += 32) yr[c] = expf(xr[c] - m) * inv;
}

/* Block BLOCK, grid rows. */
__global__ void softmax_block_row(const float *x, float *y, int rows, int cols) {
    __shared__ float red[BLOCK];
    const int r = blockIdx.x, t = threadIdx.x;
    const float *xr = x + (size_t)r * cols;
    float *yr = y + (size_t)r * cols;
    float m = NEG_INF;
    for (int c = t; c < cols; c += BLOCK) m = fmaxf(m, xr[c]);
    red[t] = m;
    __syncthreads();
    for (int h = BLOCK / 2; h > 0; h /= 2) {
        if (t < h) red[t] = fmaxf(red[t], red[t + h]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads(); /* everyone has read red[0] before it is reused */
    float s = 0.0f;
    for (int c = t; c < cols; c += BLOCK) s += expf(xr[c] - m);
    red[t] = s;
    __syncthreads();
    for (int h = BLOCK / 2; h > 0; h /= 2) {
        if (t < h) red[t] += red[t + h];
        __syncthreads();
    }
    const float inv = 1.0f / red[0];
    for (int c = t; c < cols; c += BLOCK) yr[c] = expf(xr[c] - m) * inv;
    (void)rows;
}

/* Block (32, WARPS), grid ceil(rows / WARPS), as softmax_warp_row. */
__global__ void softmax_online(const float *x, float *y, int rows, int cols) {
    const int r = blockIdx.x * WARPS + threadIdx.y, lane = threadIdx.x;
    if (r >= rows) return;
    const float *xr = x + (size_t)r * cols;
    float *yr = y + (size_t)r * cols;
    float m = NEG_INF, s = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        const float v = xr[c];
        if (v > m) {
            s = s * expf(m - v) + 1.0f; /* exp(-inf) = 0 on the first element */
            m = v;
        } else {
            s += expf(v - m);
        }
    }
    /* merge the lanes' (m, s): the larger max wins, the other sum rescaled to it */
    for (int o = 16; o > 0; o /= 2) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
        const float mm = fmaxf(m, m2);
        s = (m == NEG_INF ? 0.0f : s * expf(m - mm)) + (m2 == NEG_INF ? 0.0f : s2 * expf(m2 - mm));
        m = mm;
    }
    const float inv = 1.0f / s;
    for (int c = lane; c < cols; c += 32) yr[c] = expf(xr[c] - m) * inv;
}
