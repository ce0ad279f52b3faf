/*
 * conv2d_pad_z_out: like conv2d_pad, but grid z is the output channel, so each
 * thread computes one output element and there are out_ch times more threads.
 * Block (TILE_SIZE, TILE_SIZE, 1), grid (ceil(w/T), ceil(h/T), out_ch).
 *
 *   harness run configs/conv2d_sweep.json
 *   harness debug configs/conv2d_sweep.json --kernel conv2d_pad_z_out --set in_ch=2,out_ch=2,filter_size=3,img_size=8
 *
 * The family's menu is in conv2d_pad.cu.
 */
#include "conv2d_helpers.h"

__global__ void conv2d_pad_z_out(const float *in, float *out, const float *filter, int h, int w,
                                 int in_channels, int out_channels, int filter_size,
                                 float pad HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
#ifdef DEBUG
    if (hn_debug_leader()) PRINT_INPUTS();
#endif
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int o = blockIdx.z;
    int r = (filter_size - 1) / 2;
    if (x < w && y < h && o < out_channels) {
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
    HN_SINGLE_BLOCK_LEAVE();
}
