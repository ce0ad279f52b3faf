// Follows KernelTuner/kernel_tuner, examples/cuda/matmul.cu (Ben van Werkhoven, after
// Volkov's "Better performance at lower occupancy"): C = A B for square WIDTH x WIDTH
// row-major matrices; block_size_x/y and tile_size_x/y are the tunables Kernel Tuner
// passes as defines (examples/cuda/matmul.py: block_size_x == block_size_y *
// tile_size_y, the grid divided by block_size * tile_size). Retyped, without the
// unused "bullshit" load and the commented-out printf. The author fixes WIDTH to 512
// in the file; the one change a user makes for other sizes is the #ifndef around it.
#include <stdio.h>

#ifndef WIDTH
#define WIDTH 512
#endif

__global__ void matmul_kernel(float *C, float *A, float *B) {

    __shared__ float sA[block_size_y*tile_size_y][block_size_x];
    __shared__ float sB[block_size_y*tile_size_y][block_size_x * tile_size_x];

    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int x = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
    int y = blockIdx.y * block_size_y * tile_size_y + threadIdx.y;
    int k, kb;

    float sum[tile_size_y][tile_size_x];
    #pragma unroll
    for (int i = 0; i < tile_size_y; i++) {
        #pragma unroll
        for (int j = 0; j < tile_size_x; j++) {
            sum[i][j] = 0.0f;
        }
    }

    for (k = 0; k < WIDTH; k += block_size_x) {

        __syncthreads();
        #pragma unroll
        for (int i = 0; i < tile_size_y; i++) {
            sA[ty + block_size_y * i][tx] = A[(blockIdx.y * block_size_y * tile_size_y + ty + i * block_size_y) * WIDTH + k + tx];

            #pragma unroll
            for (int j = 0; j < tile_size_x; j++) {
                sB[ty + block_size_y * i][tx + j * block_size_x] = B[(k + ty + block_size_y * i) * WIDTH + x + j * block_size_x];
            }
        }
        __syncthreads();

        #pragma unroll
        for (kb = 0; kb < block_size_x; kb++) {
            #pragma unroll
            for (int i = 0; i < tile_size_y; i++) {
                #pragma unroll
                for (int j = 0; j < tile_size_x; j++) {
                    sum[i][j] += sA[ty + block_size_y * i][kb] * sB[kb][tx + j * block_size_x];
                }
            }
        }
    }

    #pragma unroll
    for (int i = 0; i < tile_size_y; i++) {
        #pragma unroll
        for (int j = 0; j < tile_size_x; j++) {
            C[y * WIDTH + x + block_size_y * i * WIDTH + j * block_size_x] = sum[i][j];
        }
    }
}
