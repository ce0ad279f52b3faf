/*
 * sigmoid: the logistic function and its gradient, element-wise over n floats,
 * with a grid-stride loop (the family's other file is relu.cu).
 *
 *   sigmoid_grid_stride           y[i] = 1 / (1 + exp(-x[i]))           (torch.sigmoid)
 *   sigmoid_backward_grid_stride  dx[i] = dy[i] * s * (1 - s), s = sigmoid(x[i])
 *                                 (torch's autograd, which computes it the same
 *                                 way in float from the forward output)
 *
 * expf of a large argument is inf and 1 / inf is 0, so both tails come out right
 * without special cases. In float, 1 - s cancels where s is near 1 (x >> 0): the
 * gradient keeps its absolute accuracy there (about 6e-8 |dy|), not its relative
 * one, exactly as torch's does; configs/sigmoid_backward_sweep.json says so.
 * Block (256), grid min(ceil(n/256), 2048).
 *
 *   harness run configs/sigmoid_sweep.json
 *   harness run configs/sigmoid_backward_sweep.json
 *   harness debug configs/sigmoid_sweep.json --kernel sigmoid_grid_stride --set n=37
 */
#include "hn_kernel.h"

__device__ inline float sigmoid_of(float v) {
    return 1.0f / (1.0f + expf(-v));
}

__global__ void sigmoid_grid_stride(const float *x, float *y, int n HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = sigmoid_of(x[i]);
    HN_SINGLE_BLOCK_LEAVE();
}

__global__ void sigmoid_backward_grid_stride(const float *x, const float *dy, float *dx, int n HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float s = sigmoid_of(x[i]);
        dx[i] = dy[i] * s * (1.0f - s);
    }
    HN_SINGLE_BLOCK_LEAVE();
}
