/*
 * conv2d_helpers.h: what every conv2d variant shares.
 *
 *   TILE_SIZE, ACCUM_DTYPE   defaults when the config does not set them.
 *   SINGLE_BLOCK             blocks run one at a time, in linear order: each waits
 *                            on the global `debug_counter` (allocated and zeroed by
 *                            the harness) until it holds the block's linear id, and
 *                            bumps it when done. Kernels must not return early.
 *   DEBUG                    the leader thread of each printing block prints the
 *                            launch's inputs and, in the shared variants, the tile.
 *   DEBUG_BLOCK_X/Y/Z        with DEBUG, only that block prints (harness debug
 *                            --block X,Y,Z sets them).
 *
 * Layout, for every variant: in (in_ch, h, w), filter (out_ch, in_ch, fs, fs),
 * out (out_ch, h, w); "same" output size; r = (fs - 1) / 2; `pad` outside the image.
 */
#pragma once

#if !defined(__CUDACC_RTC__)
#include <stdio.h> /* NVRTC declares printf itself */
#endif

#ifndef TILE_SIZE
#define TILE_SIZE 16
#endif
#ifndef ACCUM_DTYPE
#define ACCUM_DTYPE float
#endif

#define CONV2D_STR2(x) #x
#define CONV2D_STR(x) CONV2D_STR2(x)

__device__ inline bool debug_block() {
#if defined(DEBUG_BLOCK_X) && defined(DEBUG_BLOCK_Y) && defined(DEBUG_BLOCK_Z)
    return blockIdx.x == DEBUG_BLOCK_X && blockIdx.y == DEBUG_BLOCK_Y && blockIdx.z == DEBUG_BLOCK_Z;
#else
    return true;
#endif
}

/* Thread (0,0,0) of a block chosen for printing. */
__device__ inline bool debug_leader() {
    return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0 && debug_block();
}

/* Prints a (rows, cols) float matrix stored with row stride `stride`. */
__device__ inline void print_matrix(const char *title, const float *m, int rows, int cols,
                                    int stride) {
    printf("%s (%d x %d):\n", title, rows, cols);
    for (int y = 0; y < rows; y++) {
        for (int x = 0; x < cols; x++) printf(" %8.4f", m[y * stride + x]);
        printf("\n");
    }
}

#ifdef DEBUG
#define PRINT_INPUTS()                                                                      \
    printf("block (%d,%d,%d) of (%d,%d,%d), threads (%d,%d,%d): h=%d w=%d in_ch=%d "       \
           "out_ch=%d filter=%d pad=%g TILE_SIZE=%d ACCUM_DTYPE=%s\n",                      \
           blockIdx.x, blockIdx.y, blockIdx.z, gridDim.x, gridDim.y, gridDim.z, blockDim.x, \
           blockDim.y, blockDim.z, h, w, in_channels, out_channels, filter_size, (double)pad, \
           TILE_SIZE, CONV2D_STR(ACCUM_DTYPE))
#else
#define PRINT_INPUTS() ((void)0)
#endif

#ifdef SINGLE_BLOCK
#define SINGLE_BLOCK_PARAM , int *debug_counter

__device__ inline int linear_block_id() {
    return (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
}

/* Waits until every block before this one has finished. Only the leader spins;
 * the barrier holds the rest of the block. */
#define SINGLE_BLOCK_ENTER()                                                   \
    do {                                                                       \
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)          \
            while (atomicAdd(debug_counter, 0) != linear_block_id()) {         \
            }                                                                  \
        __syncthreads();                                                       \
    } while (0)

/* Hands the turn to the next block once every thread of this one is done. */
#define SINGLE_BLOCK_LEAVE()                                                   \
    do {                                                                       \
        __syncthreads();                                                       \
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {        \
            __threadfence();                                                   \
            atomicAdd(debug_counter, 1);                                       \
        }                                                                      \
    } while (0)
#else
#define SINGLE_BLOCK_PARAM
#define SINGLE_BLOCK_ENTER() ((void)0)
#define SINGLE_BLOCK_LEAVE() ((void)0)
#endif
