/*
 * linear_naive: the fully connected layer's forward pass, y = x W^T + b
 * (torch.nn.functional.linear), one thread per output element.
 *
 *   x (batch, in_f), weight (out_f, in_f), bias (out_f) -> y (batch, out_f), row-major
 *
 * Thread (o, b) of a 2D grid (x over out_f, y over batch) takes the dot product of
 * row b of x and row o of weight straight from global memory, in a float
 * accumulator. Block (16, 16), grid (ceil(out_f/16), ceil(batch/16)).
 *
 *   harness run configs/linear_sweep.json --variant linear_naive
 *   harness debug configs/linear_sweep.json --kernel linear_naive --set batch=3,in_f=5,out_f=4
 *
 * Variants of this family (kernels/linear/):
 *   linear_naive    this file
 *   linear_tiled    like naive, but the block stages TILE x TILE tiles of x and of
 *                   weight in shared memory (PMPP's tiled matrix multiply, with W's
 *                   tile read transposed), so each global element is read once per tile
 *   linear_wmma     like tiled (32 x 32 tiles of y, 4 warps), but each warp multiplies its
 *                   16 x 16 quarter on the tensor cores (nvcuda::wmma), inputs rounded to
 *                   tf32 (HALF=0) or half (HALF=1), so its check is looser
 *                   (tests/configs/linear_wmma.json)
 * The backward pass: linear_backward_naive.cu, linear_backward_tiled.cu.
 */
#include "hn_kernel.h"

__global__ void linear_naive(const float *x, const float *weight, const float *bias, float *y, int batch, int in_f,
                             int out_f HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y * blockDim.y + threadIdx.y;
#ifdef DEBUG
    if (hn_debug_leader())
        printf("block (%d,%d,%d) of (%d,%d,%d): batch=%d in_f=%d out_f=%d\n", blockIdx.x, blockIdx.y, blockIdx.z,
               gridDim.x, gridDim.y, gridDim.z, batch, in_f, out_f);
#endif
    if (b < batch && o < out_f) {
        const float *xr = x + (size_t)b * in_f;  /* row b of x */
        const float *wr = weight + (size_t)o * in_f; /* row o of weight: column o of W^T */
        float acc = 0.0f;
        for (int i = 0; i < in_f; i++) acc += xr[i] * wr[i];
        y[(size_t)b * out_f + o] = acc + bias[o];
    }
    HN_SINGLE_BLOCK_LEAVE();
}
