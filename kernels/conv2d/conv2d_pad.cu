/*
 * conv2d_pad: the simplest correct "same"-padded conv2d.
 *
 * One thread per output pixel (x, y); each thread loops over every output channel,
 * and for each over every input channel and filter tap, reading straight from
 * global memory. Block (TILE_SIZE, TILE_SIZE, 1), grid (ceil(w/T), ceil(h/T), 1).
 *
 *   harness run configs/conv2d_sweep.json
 *   harness debug configs/conv2d_sweep.json --kernel conv2d_pad --set in_ch=2,out_ch=1,filter_size=3,img_size=8
 *
 * Variants of this family (kernels/conv2d/):
 *   conv2d_pad                    this file
 *   conv2d_pad_z_out              like conv2d_pad, but grid z is the output channel
 *   conv2d_pad_z_out_shared       like z_out, with the block's input tile in shared
 *                                 memory (halo still read from global)
 *   conv2d_pad_z_out_shared_halo  like shared, but the block also loads the halo:
 *                                 TILE_SIZE^2 threads load, the interior computes
 *   conv2d_layout                 one thread per output element in NCHW, NHWC or
 *                                 CHWN, a batch, any padding, a bias (exercise 2)
 *   conv2d_igemm                  an implicit GEMM (M = out_ch, N = pixels, K =
 *                                 in_ch*fs*fs): block and thread tiles in shared
 *                                 memory and registers, vector loads, double
 *                                 buffering; a batch, any padding, a bias; 14
 *                                 tunables (configs/conv2d_tune.json)
 */
#include "conv2d_helpers.h"

__global__ void conv2d_pad(const float *in, float *out, const float *filter, int h, int w,
                           int in_channels, int out_channels, int filter_size,
                           float pad HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
#ifdef DEBUG
    if (hn_debug_leader()) PRINT_INPUTS();
#endif
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int r = (filter_size - 1) / 2;
    if (x < w && y < h) {
        for (int o = 0; o < out_channels; o++) {
            ACCUM_DTYPE acc = 0;
            for (int c = 0; c < in_channels; c++) {
                const float *in_c = in + (size_t)c * h * w;
                const float *f = filter + ((size_t)o * in_channels + c) * filter_size * filter_size;
                for (int p = 0; p < filter_size; p++) {
                    int yy = y + p - r;
                    for (int q = 0; q < filter_size; q++) {
                        int xx = x + q - r;
                        float v = (yy >= 0 && yy < h && xx >= 0 && xx < w) ? in_c[yy * w + xx] : pad;
                        acc += (ACCUM_DTYPE)v * (ACCUM_DTYPE)f[p * filter_size + q];
                    }
                }
            }
            out[((size_t)o * h + y) * w + x] = (float)acc;
        }
    }
    HN_SINGLE_BLOCK_LEAVE();
}
