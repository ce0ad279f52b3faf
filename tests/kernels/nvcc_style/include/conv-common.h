// conv-common.h: shared by the nvcc-style conv kernels (found through an -I option
// in the config, relative to the config's folder). Written the way kernels for
// nvcc usually are: C headers, a hard requirement on ACCUM_DTYPE, debug printing
// compiled in only under DEBUG.
#pragma once

#include <stdint.h>

#ifndef ACCUM_DTYPE
#error "ACCUM_DTYPE must be defined (float or double)"
#endif

#ifdef DEBUG
#include <stdio.h>

#ifndef TILE_SIZE
#define TILE_SIZE 0
#endif

#define SHOW_SHAPE()                                                                   \
    do {                                                                               \
        printf("h: %d w: %d in: %d out: %d filter: %d tile: %d pad: %f\n", h, w,       \
               in_channels, out_channels, filter_size, TILE_SIZE, pad);                \
    } while (0)

__device__ void dump_rows(float *data, int rows, int cols) {
    for (int i = 0; i < rows; i++) {
        printf("row %d:", i);
        for (int j = 0; j < cols; j++) printf(" %.3f", data[i * cols + j]);
        printf("\n");
    }
}
#endif
