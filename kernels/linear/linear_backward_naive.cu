/*
 * linear_backward_naive: the fully connected layer's gradients, one kernel per
 * gradient, one thread per output element (the operator checks a variant on the
 * outputs its kernel is given, so each runs and is checked alone).
 *
 *   x (batch, in_f), weight (out_f, in_f), dy (batch, out_f), row-major
 *   dx (batch, in_f)       = dy W       dx[b][i] = sum_o dy[b][o] weight[o][i]
 *   dweight (out_f, in_f)  = dy^T x     dweight[o][i] = sum_b dy[b][o] x[b][i]
 *   dbias (out_f)          = sum_b dy   dbias[o] = sum_b dy[b][o]
 *
 *   linear_backward_dx_naive       thread (i, b): x of the grid over in_f (so a warp
 *                                  reads consecutive weight[o][i]), y over batch
 *   linear_backward_dweight_naive  thread (i, o): x over in_f, y over out_f
 *   linear_backward_dbias_naive    thread o: the column sum of dy, down the batch
 *                                  (a warp reads a row segment: coalesced)
 *   (linear_backward_tiled.cu: dx and dweight with shared-memory tiles)
 *
 *   harness run configs/linear_backward_sweep.json
 *   harness debug configs/linear_backward_sweep.json --kernel linear_backward_dx_naive --set batch=3,in_f=5,out_f=4
 */
#include "hn_kernel.h"

__global__ void linear_backward_dx_naive(const float *dy, const float *weight, float *dx, int batch, int in_f,
                                         int out_f HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y * blockDim.y + threadIdx.y;
    if (b < batch && i < in_f) {
        const float *g = dy + (size_t)b * out_f;
        float acc = 0.0f;
        for (int o = 0; o < out_f; o++) acc += g[o] * weight[(size_t)o * in_f + i];
        dx[(size_t)b * in_f + i] = acc;
    }
    HN_SINGLE_BLOCK_LEAVE();
}

__global__ void linear_backward_dweight_naive(const float *dy, const float *x, float *dweight, int batch, int in_f,
                                              int out_f HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int o = blockIdx.y * blockDim.y + threadIdx.y;
    if (o < out_f && i < in_f) {
        float acc = 0.0f;
        for (int b = 0; b < batch; b++) acc += dy[(size_t)b * out_f + o] * x[(size_t)b * in_f + i];
        dweight[(size_t)o * in_f + i] = acc;
    }
    HN_SINGLE_BLOCK_LEAVE();
}

__global__ void linear_backward_dbias_naive(const float *dy, float *dbias, int batch, int out_f HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o < out_f) {
        float acc = 0.0f;
        for (int b = 0; b < batch; b++) acc += dy[(size_t)b * out_f + o];
        dbias[o] = acc;
    }
    HN_SINGLE_BLOCK_LEAVE();
}
