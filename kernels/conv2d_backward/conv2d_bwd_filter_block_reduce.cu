/*
 * conv2d_bwd_filter_block_reduce: like conv2d_bwd_filter_naive, but a block per
 * filter entry (p, q) of (c, o) = (blockIdx.y, blockIdx.z): its BLOCK_SIZE threads
 * take every BLOCK_SIZE-th output pixel of each image (adjacent threads read
 * adjacent pixels of dout and of the input, so the reads coalesce), each keeping a
 * partial sum; conv2d_bwd_block_sum then adds the partial sums in a tree in shared
 * memory and, for the last 32, with warp shuffles. Thread 0 writes the entry: no
 * atomics, the same order of additions on every run.
 * Block (BLOCK_SIZE, 1, 1) (a power of two, at least 32), grid (fs * fs, in_ch, out_ch).
 *
 *   harness run configs/conv2d_backward_filter_sweep.json
 *   harness debug configs/conv2d_backward_filter_sweep.json --kernel conv2d_bwd_filter_block_reduce --set n=2,in_ch=2,out_ch=2,filter_size=3,h=8,w=8,padding=1,pad=0.5
 *
 * The family's menu is in conv2d_bwd_filter_naive.cu.
 */
#include "conv2d_backward_helpers.h"

__global__ void conv2d_bwd_filter_block_reduce(const float *in, const float *dout, float *dfilter, int n, int in_ch,
                                               int out_ch, int h, int w, int filter_size, int padding,
                                               float pad HN_SINGLE_BLOCK_PARAM) {
    __shared__ ACCUM_DTYPE partial[BLOCK_SIZE];
    HN_SINGLE_BLOCK_ENTER();
#ifdef DEBUG
    if (hn_debug_leader()) PRINT_INPUTS();
#endif
    int r, oh, ow;
    conv2d_bwd_geometry(h, w, filter_size, padding, &r, &oh, &ow);
    const int fs = filter_size, p = blockIdx.x / fs, q = blockIdx.x % fs, c = blockIdx.y, o = blockIdx.z;
    const int npix = oh * ow;
    ACCUM_DTYPE acc = 0;
    for (int b = 0; b < n; b++) {
        const float *x_c = in + ((size_t)b * in_ch + c) * h * w;
        const float *d = dout + ((size_t)b * out_ch + o) * npix;
        for (int j = threadIdx.x; j < npix; j += BLOCK_SIZE) {
            int yy = j / ow + p - r, xx = j % ow + q - r;
            float v = yy >= 0 && yy < h && xx >= 0 && xx < w ? x_c[(size_t)yy * w + xx] : pad;
            acc += (ACCUM_DTYPE)v * (ACCUM_DTYPE)d[j];
        }
    }
    ACCUM_DTYPE sum = conv2d_bwd_block_sum(acc, partial);
#ifdef DEBUG
    if (hn_debug_leader())
        printf("block (%d,%d,%d): dfilter[%d][%d][%d][%d] = %g\n", blockIdx.x, blockIdx.y, blockIdx.z, o, c, p, q,
               (double)sum);
#endif
    if (threadIdx.x == 0) dfilter[(((size_t)o * in_ch + c) * fs + p) * fs + q] = (float)sum;
    HN_SINGLE_BLOCK_LEAVE();
}
