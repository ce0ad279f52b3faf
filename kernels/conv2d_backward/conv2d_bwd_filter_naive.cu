/*
 * conv2d_bwd_filter_naive: dE/dW of conv2d, one thread per filter entry.
 *
 * Thread e = ((o * in_ch + c) * fs + p) * fs + q sums, over the batch and every
 * output pixel (y, x), dout[b][o][y][x] times the input the forward read through tap
 * (p, q): X(b, c, y + p - r, x + q - r), `pad` outside the image. No atomics, but
 * each thread walks all n * oh * ow pixels alone, and there are only out_ch * in_ch
 * * fs^2 threads. Block (BLOCK_SIZE, 1, 1), grid ceil(out_ch * in_ch * fs^2 /
 * BLOCK_SIZE).
 *
 *   harness run configs/conv2d_backward_filter_sweep.json
 *   harness debug configs/conv2d_backward_filter_sweep.json --kernel conv2d_bwd_filter_naive --set n=2,in_ch=2,out_ch=2,filter_size=3,h=8,w=8,padding=1,pad=0.5
 *
 * Variants (kernels/conv2d_backward/):
 *   conv2d_bwd_filter_naive         this file
 *   conv2d_bwd_filter_block_reduce  a block per filter entry: its threads split the
 *                                   pixels (coalesced reads), then a tree in shared
 *                                   memory and warp shuffles sum them (no atomics)
 */
#include "conv2d_backward_helpers.h"

__global__ void conv2d_bwd_filter_naive(const float *in, const float *dout, float *dfilter, int n, int in_ch,
                                        int out_ch, int h, int w, int filter_size, int padding,
                                        float pad HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
#ifdef DEBUG
    if (hn_debug_leader()) PRINT_INPUTS();
#endif
    int r, oh, ow;
    conv2d_bwd_geometry(h, w, filter_size, padding, &r, &oh, &ow);
    const int fs = filter_size;
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < out_ch * in_ch * fs * fs) {
        int q = e % fs, p = e / fs % fs, c = e / (fs * fs) % in_ch, o = e / (fs * fs * in_ch);
        ACCUM_DTYPE acc = 0;
        for (int b = 0; b < n; b++) {
            const float *x_c = in + ((size_t)b * in_ch + c) * h * w;
            const float *d = dout + ((size_t)b * out_ch + o) * oh * ow;
            for (int y = 0; y < oh; y++) {
                int yy = y + p - r;
                for (int x = 0; x < ow; x++) {
                    int xx = x + q - r;
                    float v = yy >= 0 && yy < h && xx >= 0 && xx < w ? x_c[(size_t)yy * w + xx] : pad;
                    acc += (ACCUM_DTYPE)v * (ACCUM_DTYPE)d[(size_t)y * ow + x];
                }
            }
        }
        dfilter[e] = (float)acc;
    }
    HN_SINGLE_BLOCK_LEAVE();
}
