/*
 * relu: the rectified linear unit and its gradient, element-wise over n floats,
 * with a grid-stride loop (any grid covers any n: thread t takes elements t,
 * t + gridDim.x * blockDim.x, ...). The index is 64-bit, so n near 2^31 does not
 * overflow it.
 *
 *   relu_grid_stride           y[i] = x[i] > 0 ? x[i] : 0   (torch.relu; NaN kept, -0 -> 0)
 *   relu_backward_grid_stride  dx[i] = x[i] > 0 ? dy[i] : 0 (torch's autograd: 0 at x = 0)
 *
 * Written as "x <= 0 ? 0 : v" so a NaN input passes through, as in torch.
 * Block (256), grid min(ceil(n/256), 2048) in configs/relu_sweep.json and
 * configs/relu_backward_sweep.json.
 *
 *   harness run configs/relu_sweep.json
 *   harness run configs/relu_backward_sweep.json
 *   harness debug configs/relu_backward_sweep.json --kernel relu_backward_grid_stride --set n=37
 *
 * Variants of this family (kernels/activation/): this file, and sigmoid.cu
 * (sigmoid_grid_stride, sigmoid_backward_grid_stride).
 */
#include "hn_kernel.h"

__global__ void relu_grid_stride(const float *x, float *y, int n HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = x[i];
        y[i] = v <= 0.0f ? 0.0f : v;
    }
    HN_SINGLE_BLOCK_LEAVE();
}

__global__ void relu_backward_grid_stride(const float *x, const float *dy, float *dx, int n HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dx[i] = x[i] <= 0.0f ? 0.0f : dy[i];
    HN_SINGLE_BLOCK_LEAVE();
}
