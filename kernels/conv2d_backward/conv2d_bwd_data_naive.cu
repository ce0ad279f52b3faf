/*
 * conv2d_bwd_data_naive: dE/dX of conv2d, one thread per input pixel.
 *
 * Thread (x, y) of grid z = b * in_ch + c gathers din[b][c][y][x]: for every output
 * channel o and filter tap (p, q), the output pixel (y + r - p, x + r - q) that read
 * (y, x) through that tap, if it exists, contributes dout * filter[o][c][p][q]. No
 * atomics: each thread owns its output. Block (TILE_SIZE, TILE_SIZE, 1), grid
 * (ceil(w/T), ceil(h/T), n * in_ch).
 *
 *   harness run configs/conv2d_backward_data_sweep.json
 *   harness debug configs/conv2d_backward_data_sweep.json --kernel conv2d_bwd_data_naive --set n=1,in_ch=2,out_ch=2,filter_size=3,h=8,w=8,padding=-1
 *
 * Variants (kernels/conv2d_backward/):
 *   conv2d_bwd_data_naive   this file
 *   conv2d_bwd_data_tiled   the block's dout tile and its halo in shared memory, per
 *                           output channel, and CH_PER_BLOCK input channels per thread
 *                           (each staged dout value feeds CH_PER_BLOCK * fs^2 products)
 */
#include "conv2d_backward_helpers.h"

__global__ void conv2d_bwd_data_naive(const float *dout, const float *filter, float *din, int n, int in_ch,
                                      int out_ch, int h, int w, int filter_size, int padding HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
#ifdef DEBUG
    if (hn_debug_leader()) PRINT_INPUTS();
#endif
    int r, oh, ow;
    conv2d_bwd_geometry(h, w, filter_size, padding, &r, &oh, &ow);
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int b = blockIdx.z / in_ch, c = blockIdx.z % in_ch;
    if (x < w && y < h) {
        ACCUM_DTYPE acc = 0;
        for (int o = 0; o < out_ch; o++) {
            const float *d = dout + ((size_t)b * out_ch + o) * oh * ow;
            const float *f = filter + ((size_t)o * in_ch + c) * filter_size * filter_size;
            for (int p = 0; p < filter_size; p++) {
                int yo = y + r - p;
                if (yo < 0 || yo >= oh) continue;
                for (int q = 0; q < filter_size; q++) {
                    int xo = x + r - q;
                    if (xo < 0 || xo >= ow) continue;
                    acc += (ACCUM_DTYPE)d[(size_t)yo * ow + xo] * (ACCUM_DTYPE)f[p * filter_size + q];
                }
            }
        }
        din[(((size_t)b * in_ch + c) * h + y) * w + x] = (float)acc;
    }
    HN_SINGLE_BLOCK_LEAVE();
}
