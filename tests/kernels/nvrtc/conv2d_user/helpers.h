// helpers.h: what a typical nvcc user keeps beside their kernel (tests/test_nvrtc_headers.c
// compiles conv2d_user.cu with and without -DDEBUG -DSINGLE_BLOCK).
#pragma once

#include <stdint.h>
#include <stdio.h>

#ifndef ACCUM_DTYPE
#error "ACCUM_DTYPE must be defined (e.g. -DACCUM_DTYPE=float)"
#endif

#define IDX3(c, y, x, h, w) (((size_t)(c) * (h) + (y)) * (w) + (x))

#ifdef DEBUG
__device__ void print_tile(const char *name, const float *tile, int rows, int cols) {
    printf("%s (%d x %d), block (%d,%d,%d):\n", name, rows, cols, blockIdx.x, blockIdx.y,
           blockIdx.z);
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) printf(" %7.3f", tile[r * cols + c]);
        printf("\n");
    }
}

__device__ void print_value(const char *name, ACCUM_DTYPE v) {
    printf("thread (%d,%d) %s = %f\n", threadIdx.x, threadIdx.y, name, (double)v);
}
#endif
