/*
 * conv2d_backward_helpers.h: what every kernel of kernels/conv2d_backward shares.
 *
 *   TILE_SIZE, BLOCK_SIZE, CH_PER_BLOCK, ACCUM_DTYPE   defaults when the config does
 *                            not set them.
 *   conv2d_bwd_geometry()    the forward's geometry from its parameters: the padding
 *                            above and left (r) and the output's size (oh, ow).
 *   SINGLE_BLOCK, DEBUG      the harness's debug conventions (hn_kernel.h): every
 *                            kernel takes HN_SINGLE_BLOCK_PARAM and brackets its body
 *                            with HN_SINGLE_BLOCK_ENTER/LEAVE; no early returns.
 *
 * Layouts (NCHW, stride 1): in and din (n, in_ch, h, w), dout (n, out_ch, oh, ow),
 * filter and dfilter (out_ch, in_ch, fs, fs), dbias (out_ch). padding -1 is "same"
 * (r = (fs - 1) / 2, oh = h), otherwise r = padding, oh = h + 2 padding - fs + 1.
 */
#pragma once

#include <stdio.h>

#include "hn_kernel.h"

#ifndef TILE_SIZE
#define TILE_SIZE 16
#endif
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#ifndef CH_PER_BLOCK
#define CH_PER_BLOCK 4
#endif
#ifndef ACCUM_DTYPE
#define ACCUM_DTYPE float
#endif

#define CONV2D_BWD_STR2(x) #x
#define CONV2D_BWD_STR(x) CONV2D_BWD_STR2(x)

__device__ inline void conv2d_bwd_geometry(int h, int w, int filter_size, int padding, int *r, int *oh, int *ow) {
    if (padding < 0) {
        *r = (filter_size - 1) / 2;
        *oh = h;
        *ow = w;
    } else {
        *r = padding;
        *oh = h + 2 * padding - filter_size + 1;
        *ow = w + 2 * padding - filter_size + 1;
    }
}

#ifdef DEBUG
#define PRINT_INPUTS()                                                                                   \
    printf("block (%d,%d,%d) of (%d,%d,%d), threads (%d,%d,%d): n=%d in_ch=%d out_ch=%d h=%d w=%d "     \
           "filter=%d padding=%d ACCUM_DTYPE=%s\n",                                                      \
           blockIdx.x, blockIdx.y, blockIdx.z, gridDim.x, gridDim.y, gridDim.z, blockDim.x, blockDim.y,  \
           blockDim.z, n, in_ch, out_ch, h, w, filter_size, padding, CONV2D_BWD_STR(ACCUM_DTYPE))
#else
#define PRINT_INPUTS() ((void)0)
#endif

/* The sum of v over the BLOCK_SIZE threads of a 1D block (a power of two, at least
 * 32), in thread 0's return value: a tree in shared memory down to one warp, then
 * warp shuffles. Every thread must call it; `partial` has BLOCK_SIZE entries. */
__device__ inline ACCUM_DTYPE conv2d_bwd_block_sum(ACCUM_DTYPE v, ACCUM_DTYPE *partial) {
    int t = threadIdx.x;
    partial[t] = v;
    __syncthreads();
    for (int s = BLOCK_SIZE / 2; s >= 32; s >>= 1) {
        if (t < s) partial[t] += partial[t + s];
        __syncthreads();
    }
    ACCUM_DTYPE sum = 0;
    if (t < 32) {
        sum = partial[t];
        for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off);
    }
    return sum;
}
