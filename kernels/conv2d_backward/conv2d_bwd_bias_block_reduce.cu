/*
 * conv2d_bwd_bias_block_reduce: like conv2d_bwd_bias_naive, but a block per output
 * channel o = blockIdx.x: its BLOCK_SIZE threads take every BLOCK_SIZE-th value of
 * each image's plane (adjacent threads, adjacent values: coalesced), each keeping a
 * partial sum; conv2d_bwd_block_sum adds them (a tree in shared memory, then warp
 * shuffles) and thread 0 writes dbias[o]. No atomics.
 * Block (BLOCK_SIZE, 1, 1) (a power of two, at least 32), grid (out_ch).
 *
 *   harness run configs/conv2d_backward_bias_sweep.json
 *   harness debug configs/conv2d_backward_bias_sweep.json --kernel conv2d_bwd_bias_block_reduce --set n=2,out_ch=3,filter_size=3,h=8,w=8,padding=-1
 *
 * The family's menu is in conv2d_bwd_bias_naive.cu.
 */
#include "conv2d_backward_helpers.h"

__global__ void conv2d_bwd_bias_block_reduce(const float *dout, float *dbias, int n, int out_ch, int h, int w,
                                             int filter_size, int padding HN_SINGLE_BLOCK_PARAM) {
    __shared__ ACCUM_DTYPE partial[BLOCK_SIZE];
    HN_SINGLE_BLOCK_ENTER();
    int r, oh, ow;
    conv2d_bwd_geometry(h, w, filter_size, padding, &r, &oh, &ow);
    const int o = blockIdx.x, npix = oh * ow;
    ACCUM_DTYPE acc = 0;
    for (int b = 0; b < n; b++) {
        const float *d = dout + ((size_t)b * out_ch + o) * npix;
        for (int j = threadIdx.x; j < npix; j += BLOCK_SIZE) acc += (ACCUM_DTYPE)d[j];
    }
    ACCUM_DTYPE sum = conv2d_bwd_block_sum(acc, partial);
#ifdef DEBUG
    if (hn_debug_leader())
        printf("block %d of %d, %d threads: n=%d out_ch=%d dout %dx%d: dbias[%d] = %g\n", blockIdx.x, gridDim.x,
               blockDim.x, n, out_ch, oh, ow, o, (double)sum);
#endif
    if (threadIdx.x == 0) dbias[o] = (float)sum;
    HN_SINGLE_BLOCK_LEAVE();
}
