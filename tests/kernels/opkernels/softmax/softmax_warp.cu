/* softmax_cross_entropy as a two-kernel pipeline (tests/configs/opkernels/softmax_cross_entropy.json):
 *   xent_rows_warp      a warp per row (WARPS rows per block): the row's max and sum of
 *                       exponentials by __shfl_xor_sync butterflies (no shared memory),
 *                       dlogits written, the row's loss term into the scratch buffer
 *   xent_mean           one block: the row terms summed (a grid-stride loop, then a
 *                       warp-shuffle tree and dynamic shared memory across warps), the mean
 *   xent_rows_cg        the same with cooperative groups (tiles, cg::reduce)
 *   xent_rows_warp_bug  planted: dlogits without the 1/batch of the mean
 *   harness run tests/configs/opkernels/softmax_cross_entropy.json --backend emu */

#include <math.h>

#define FULL 0xffffffffu

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL, v, o));
    return v;
}
__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o);
    return v;
}

template <bool SCALE>
__device__ void rows_warp(const float *__restrict__ logits, const int *__restrict__ labels, float *__restrict__ dlogits,
                          float *__restrict__ row_loss, int batch, int classes) {
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= batch) return; /* a whole warp leaves together: the shuffles below stay full */
    const float *x = logits + (long long)row * classes;
    float m = -INFINITY;
    for (int c = lane; c < classes; c += 32) m = fmaxf(m, x[c]);
    m = warp_max(m);
    float s = 0.0f;
    for (int c = lane; c < classes; c += 32) s += expf(x[c] - m);
    s = warp_sum(s);
    const int label = labels[row];
    const float inv_b = SCALE ? 1.0f / batch : 1.0f;
    float *d = dlogits + (long long)row * classes;
    for (int c = lane; c < classes; c += 32) d[c] = (expf(x[c] - m) / s - (c == label ? 1.0f : 0.0f)) * inv_b;
    if (lane == 0) row_loss[row] = m + logf(s) - x[label];
}

__global__ void xent_rows_warp(const float *__restrict__ logits, const int *__restrict__ labels,
                               float *__restrict__ dlogits, float *__restrict__ row_loss, int batch, int classes) {
    rows_warp<true>(logits, labels, dlogits, row_loss, batch, classes);
}

__global__ void xent_rows_warp_bug(const float *__restrict__ logits, const int *__restrict__ labels,
                                   float *__restrict__ dlogits, float *__restrict__ row_loss, int batch, int classes) {
    rows_warp<false>(logits, labels, dlogits, row_loss, batch, classes);
}

/* one block; dynamic shared memory holds a partial per warp (blockDim.x / 32 floats) */
__global__ void xent_mean(const float *__restrict__ row_loss, float *__restrict__ loss, int batch) {
    extern __shared__ float warp_part[];
    float s = 0.0f;
    for (int i = threadIdx.x; i < batch; i += blockDim.x) s += row_loss[i];
    s = warp_sum(s);
    const int warps = blockDim.x / 32;
    if (threadIdx.x % 32 == 0) warp_part[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        float t = threadIdx.x < warps ? warp_part[threadIdx.x] : 0.0f;
        t = warp_sum(t);
        if (threadIdx.x == 0) loss[0] = t / batch;
    }
}

/* xent_rows_cg: xent_rows_warp written with cooperative groups: a
 * thread_block_tile<32> per row, cg::reduce with cg::greater / cg::plus */
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void xent_rows_cg(const float *__restrict__ logits, const int *__restrict__ labels,
                             float *__restrict__ dlogits, float *__restrict__ row_loss, int batch, int classes) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    const int row = blockIdx.x * (blockDim.x / 32) + warp.meta_group_rank();
    if (row >= batch) return;
    const float *x = logits + (long long)row * classes;
    float m = -INFINITY;
    for (int c = warp.thread_rank(); c < classes; c += 32) m = fmaxf(m, x[c]);
    m = cg::reduce(warp, m, cg::greater<float>());
    float s = 0.0f;
    for (int c = warp.thread_rank(); c < classes; c += 32) s += expf(x[c] - m);
    s = cg::reduce(warp, s, cg::plus<float>());
    const int label = labels[row];
    float *d = dlogits + (long long)row * classes;
    for (int c = warp.thread_rank(); c < classes; c += 32)
        d[c] = (expf(x[c] - m) / s - (c == label ? 1.0f : 0.0f)) / batch;
    if (warp.thread_rank() == 0) row_loss[row] = m + logf(s) - x[label];
}
