// conv_halo: a TILE_SIZE x TILE_SIZE block loads its input tile with the halo into
// dynamic shared memory declared in the middle of the function; grid z is the
// output channel. nvcc style: C headers, trailing debug counter under SINGLE_BLOCK.
#include <stdint.h>
#include <stdio.h>

#include "conv-common.h"

__global__ void conv_halo(float *in, float *out, float *filter, int h, int w, int in_channels,
                          int out_channels, int filter_size, float pad
#ifdef SINGLE_BLOCK
                          ,
                          int *debug_counter
#endif
) {
    int r = (filter_size - 1) / 2;
    int out_tile = TILE_SIZE - filter_size + 1;
    int x = blockIdx.x * out_tile + threadIdx.x - r;
    int y = blockIdx.y * out_tile + threadIdx.y - r;
    int o = blockIdx.z;

    extern __shared__ float cell[];

#ifdef SINGLE_BLOCK
    int block_id = blockIdx.z * gridDim.y * gridDim.x + blockIdx.y * gridDim.x + blockIdx.x;
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        while (atomicAdd(debug_counter, 0) != block_id) {
        }
    }
    __syncthreads();
#endif
#ifdef DEBUG
    if (!threadIdx.x && !threadIdx.y && !blockIdx.x && !blockIdx.y && !blockIdx.z) SHOW_SHAPE();
#endif
    ACCUM_DTYPE acc = 0;
    bool inside = x >= 0 && y >= 0 && x < w && y < h;
    bool computes = threadIdx.x >= r && threadIdx.x < TILE_SIZE - r && threadIdx.y >= r &&
                    threadIdx.y < TILE_SIZE - r;
    for (int c = 0; c < in_channels; c++) {
        float *sub_in = in + (size_t)w * h * c;
        float *sub_f = filter + ((size_t)o * in_channels + c) * filter_size * filter_size;
        cell[threadIdx.y * TILE_SIZE + threadIdx.x] = inside ? sub_in[y * w + x] : pad;
        __syncthreads();
#ifdef DEBUG
        if (!threadIdx.x && !threadIdx.y) {
            printf("cell of block (%d, %d, %d), channel %d:\n", blockIdx.z, blockIdx.y, blockIdx.x, c);
            dump_rows(cell, TILE_SIZE, TILE_SIZE);
        }
#endif
        if (computes)
            for (int i = 0; i < filter_size; i++)
                for (int j = 0; j < filter_size; j++)
                    acc += cell[(threadIdx.y + i - r) * TILE_SIZE + threadIdx.x + j - r] *
                           sub_f[i * filter_size + j];
        __syncthreads();
    }
    if (computes && inside) out[((size_t)o * h + y) * w + x] = acc;
#ifdef SINGLE_BLOCK
    if (threadIdx.x == 0 && threadIdx.y == 0) atomicAdd(debug_counter, 1);
#endif
}
