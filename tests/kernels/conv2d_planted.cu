/*
 * conv2d_planted: conv2d_pad_z_out with one planted bug, for tests of the debug
 * view: output channel PLANT_C at (PLANT_Y, PLANT_X) gets 1.0 added, so the
 * harness must report a mismatch at exactly those coordinates.
 */
#include "../../kernels/conv2d/conv2d_helpers.h"

#ifndef PLANT_C
#define PLANT_C 1
#define PLANT_Y 3
#define PLANT_X 5
#endif

__global__ void conv2d_planted(const float *in, float *out, const float *filter, int h, int w,
                               int in_channels, int out_channels, int filter_size,
                               float pad HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
#ifdef DEBUG
    if (hn_debug_leader()) printf("planted: block (%d,%d,%d)\n", blockIdx.x, blockIdx.y, blockIdx.z);
#endif
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int o = blockIdx.z;
    int r = (filter_size - 1) / 2;
    if (x < w && y < h) {
        ACCUM_DTYPE acc = 0;
        for (int c = 0; c < in_channels; c++)
            for (int p = 0; p < filter_size; p++)
                for (int q = 0; q < filter_size; q++) {
                    int yy = y + p - r, xx = x + q - r;
                    float v = (yy >= 0 && yy < h && xx >= 0 && xx < w) ? in[((size_t)c * h + yy) * w + xx] : pad;
                    acc += v * filter[(((size_t)o * in_channels + c) * filter_size + p) * filter_size + q];
                }
        if (o == PLANT_C && y == PLANT_Y && x == PLANT_X) acc += 1.0f;
        out[((size_t)o * h + y) * w + x] = acc;
    }
    HN_SINGLE_BLOCK_LEAVE();
}
