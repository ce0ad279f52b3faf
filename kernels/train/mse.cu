/*
 * mse: the mean squared error loss and its gradient for `harness train`
 * (torch.nn.functional.mse_loss, reduction 'mean', and its autograd):
 *
 *   pred (n), target (n) float ->
 *   loss (1)   = (1/n) sum_i (pred[i] - target[i])^2
 *   dpred (n)  = 2 (pred[i] - target[i]) / n
 *
 *   mse_single_block   one block (grid 1): thread t takes elements t, t + BLOCK,
 *                      ...; a shared-memory tree adds the threads' terms and
 *                      thread 0 writes the loss. No atomics, so the loss is the
 *                      same bits on every run (the tests compare two runs).
 *
 * BLOCK (a power of two, <= 1024) is the block size: block (BLOCK), grid (1).
 *
 *   harness train xor
 *   harness train gradcheck
 */
#include "hn_kernel.h"

#ifndef BLOCK
#define BLOCK 256
#endif

__global__ void mse_single_block(const float *pred, const float *target, float *loss, float *dpred, int n) {
    __shared__ float red[BLOCK];
    const float inv_n = 1.0f / (float)n;
    float acc = 0.0f;
    for (int i = threadIdx.x; i < n; i += BLOCK) {
        const float d = pred[i] - target[i];
        acc += d * d;
        dpred[i] = 2.0f * d * inv_n;
    }
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) *loss = red[0] * inv_n;
}
