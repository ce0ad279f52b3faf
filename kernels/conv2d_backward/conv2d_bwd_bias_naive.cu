/*
 * conv2d_bwd_bias_naive: dE/db of conv2d, one thread per output channel: thread o
 * adds dout[b][o][.][.] over the batch and every pixel, alone (out_ch threads in all,
 * each reading a strided plane per image: adjacent threads are a plane apart, so
 * nothing coalesces). Block (BLOCK_SIZE, 1, 1), grid ceil(out_ch / BLOCK_SIZE).
 *
 *   harness run configs/conv2d_backward_bias_sweep.json
 *   harness debug configs/conv2d_backward_bias_sweep.json --kernel conv2d_bwd_bias_naive --set n=2,out_ch=3,filter_size=3,h=8,w=8,padding=-1
 *
 * Variants (kernels/conv2d_backward/):
 *   conv2d_bwd_bias_naive         this file
 *   conv2d_bwd_bias_block_reduce  a block per output channel: its threads stride the
 *                                 pixels (coalesced), then a tree in shared memory and
 *                                 warp shuffles (no atomics)
 */
#include "conv2d_backward_helpers.h"

__global__ void conv2d_bwd_bias_naive(const float *dout, float *dbias, int n, int out_ch, int h, int w,
                                      int filter_size, int padding HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    int r, oh, ow;
    conv2d_bwd_geometry(h, w, filter_size, padding, &r, &oh, &ow);
#ifdef DEBUG
    if (hn_debug_leader())
        printf("block %d of %d, %d threads: n=%d out_ch=%d dout %dx%d ACCUM_DTYPE=%s\n", blockIdx.x, gridDim.x,
               blockDim.x, n, out_ch, oh, ow, CONV2D_BWD_STR(ACCUM_DTYPE));
#endif
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o < out_ch) {
        const int npix = oh * ow;
        ACCUM_DTYPE acc = 0;
        for (int b = 0; b < n; b++) {
            const float *d = dout + ((size_t)b * out_ch + o) * npix;
            for (int j = 0; j < npix; j++) acc += (ACCUM_DTYPE)d[j];
        }
        dbias[o] = (float)acc;
    }
    HN_SINGLE_BLOCK_LEAVE();
}
