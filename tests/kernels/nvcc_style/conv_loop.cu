// conv_loop: one thread per output pixel, looping over output channels, in the
// style of a kernel written for nvcc (C headers, non-const pointers, a trailing
// debug counter under SINGLE_BLOCK, a spin-wait for the block's turn).
#include <stdint.h>
#include <stdio.h>

#include "conv-common.h"

__global__ void conv_loop(float *in, float *out, float *filter, int h, int w, int in_channels,
                          int out_channels, int filter_size, float pad
#ifdef SINGLE_BLOCK
                          ,
                          int *debug_counter
#endif
) {
    int r = (filter_size - 1) / 2;
    uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t y = blockIdx.y * blockDim.y + threadIdx.y;

#ifdef SINGLE_BLOCK
    int me = blockIdx.y * gridDim.x + blockIdx.x;
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        while (atomicAdd(debug_counter, 0) != me) {
        }
    }
    __syncthreads();
#endif
#ifdef DEBUG
    if (threadIdx.x == 0 && threadIdx.y == 0) printf("block %d,%d\n", blockIdx.x, blockIdx.y);
    if (!threadIdx.x && !threadIdx.y && !blockIdx.x && !blockIdx.y) SHOW_SHAPE();
#endif
    if (x < (uint32_t)w && y < (uint32_t)h) {
        for (int o = 0; o < out_channels; o++) {
            ACCUM_DTYPE acc = 0;
            for (int c = 0; c < in_channels; c++) {
                float *f = filter + ((size_t)o * in_channels + c) * filter_size * filter_size;
                for (int i = 0; i < filter_size; i++)
                    for (int j = 0; j < filter_size; j++) {
                        int yy = (int)y + i - r, xx = (int)x + j - r;
                        float v = (yy >= 0 && yy < h && xx >= 0 && xx < w)
                                      ? in[((size_t)c * h + yy) * w + xx]
                                      : pad;
                        acc += (ACCUM_DTYPE)v * f[i * filter_size + j];
                    }
            }
            out[((size_t)o * h + y) * w + x] = (float)acc;
        }
    }
#ifdef SINGLE_BLOCK
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) atomicAdd(debug_counter, 1);
#endif
}
