// conv2d_user.cu: a conv2d kernel as nvcc users write them (C headers, a helpers.h
// beside it, debug hooks behind -DDEBUG and -DSINGLE_BLOCK, dynamic shared memory
// declared mid-function); it must compile under NVRTC as it is.
#include <stdint.h>
#include <stdio.h>

#include "helpers.h"

#ifndef TILE
#define TILE 16
#endif

__global__ void conv2d_user(const float *in, float *out, const float *filter, int h, int w,
                            int in_ch, int out_ch, int fs, float pad
#ifdef SINGLE_BLOCK
                            , int *debug_counter
#endif
) {
#ifdef SINGLE_BLOCK
    // Blocks take turns: each waits for the previous one to bump the counter.
    uint32_t me = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    if (threadIdx.x == 0 && threadIdx.y == 0)
        while (atomicAdd(debug_counter, 0) != (int)me) {
        }
    __syncthreads();
#endif
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    int o = blockIdx.z;
    int r = (fs - 1) / 2;
    bool inside = x < w && y < h;
    ACCUM_DTYPE acc = 0;

    extern __shared__ float cell[]; // (TILE, TILE)
    for (int c = 0; c < in_ch; c++) {
        cell[threadIdx.y * TILE + threadIdx.x] = inside ? in[IDX3(c, y, x, h, w)] : pad;
        __syncthreads();
#ifdef DEBUG
        if (threadIdx.x == 0 && threadIdx.y == 0) print_tile("cell", cell, TILE, TILE);
#endif
        for (int p = 0; p < fs; p++)
            for (int q = 0; q < fs; q++) {
                int yy = y + p - r, xx = x + q - r;
                int ty = (int)threadIdx.y + p - r, tx = (int)threadIdx.x + q - r;
                float v = (ty >= 0 && ty < TILE && tx >= 0 && tx < TILE) ? cell[ty * TILE + tx]
                          : (yy >= 0 && yy < h && xx >= 0 && xx < w) ? in[IDX3(c, yy, xx, h, w)]
                                                                     : pad;
                acc += (ACCUM_DTYPE)v * (ACCUM_DTYPE)filter[((o * in_ch + c) * fs + p) * fs + q];
            }
        __syncthreads();
    }
#ifdef DEBUG
    if (inside && x == 0 && y == 0) print_value("acc", acc);
#endif
    if (inside) out[IDX3(o, y, x, h, w)] = (float)acc;
#ifdef SINGLE_BLOCK
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        __threadfence();
        atomicAdd(debug_counter, 1);
    }
#endif
}
