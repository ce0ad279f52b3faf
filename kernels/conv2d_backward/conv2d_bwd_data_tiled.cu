/*
 * conv2d_bwd_data_tiled: like conv2d_bwd_data_naive, but the block stages, for each
 * output channel o, the part of dout its TILE_SIZE x TILE_SIZE input tile needs (the
 * tile grown by fs - 1 above and left: S x S, S = TILE_SIZE + fs - 1, zeros outside
 * dout) and the filter taps of its CH_PER_BLOCK input channels in shared memory; each
 * thread then accumulates CH_PER_BLOCK input channels of its pixel in registers, so
 * each dout value read from global memory once per block feeds CH_PER_BLOCK * fs^2
 * products. Every thread loads and reaches every barrier; those past the image's
 * edge skip only the store.
 * Block (TILE_SIZE, TILE_SIZE, 1), grid (ceil(w/T), ceil(h/T), n * ceil(in_ch /
 * CH_PER_BLOCK)), dynamic shared memory (S * S + CH_PER_BLOCK * fs * fs) * 4 bytes.
 *
 *   harness run configs/conv2d_backward_data_sweep.json
 *   harness debug configs/conv2d_backward_data_sweep.json --kernel conv2d_bwd_data_tiled --set n=1,in_ch=2,out_ch=2,filter_size=3,h=8,w=8,padding=-1
 *
 * The family's menu is in conv2d_bwd_data_naive.cu.
 */
#include "conv2d_backward_helpers.h"

__global__ void conv2d_bwd_data_tiled(const float *dout, const float *filter, float *din, int n, int in_ch,
                                      int out_ch, int h, int w, int filter_size, int padding HN_SINGLE_BLOCK_PARAM) {
    extern __shared__ float smem[]; // tile (S, S), then taps (CH_PER_BLOCK, fs, fs)
    HN_SINGLE_BLOCK_ENTER();
#ifdef DEBUG
    if (hn_debug_leader()) PRINT_INPUTS();
#endif
    int r, oh, ow;
    conv2d_bwd_geometry(h, w, filter_size, padding, &r, &oh, &ow);
    const int fs = filter_size, fs2 = fs * fs, S = TILE_SIZE + fs - 1;
    float *tile = smem, *taps = smem + S * S;
    const int groups = (in_ch + CH_PER_BLOCK - 1) / CH_PER_BLOCK;
    const int b = blockIdx.z / groups, c0 = blockIdx.z % groups * CH_PER_BLOCK;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TILE_SIZE + tx;
    const int x0 = blockIdx.x * TILE_SIZE, y0 = blockIdx.y * TILE_SIZE;
    const int x = x0 + tx, y = y0 + ty;
    // dout rows y0 + r - fs + 1 .. y0 + TILE_SIZE - 1 + r (columns alike): tile (0, 0)
    const int ys = y0 + r - fs + 1, xs = x0 + r - fs + 1;
    ACCUM_DTYPE acc[CH_PER_BLOCK];
    for (int k = 0; k < CH_PER_BLOCK; k++) acc[k] = 0;
    for (int o = 0; o < out_ch; o++) {
        const float *d = dout + ((size_t)b * out_ch + o) * oh * ow;
        for (int i = tid; i < S * S; i += TILE_SIZE * TILE_SIZE) {
            int yo = ys + i / S, xo = xs + i % S;
            tile[i] = yo >= 0 && yo < oh && xo >= 0 && xo < ow ? d[(size_t)yo * ow + xo] : 0.0f;
        }
        for (int i = tid; i < CH_PER_BLOCK * fs2; i += TILE_SIZE * TILE_SIZE) {
            int c = c0 + i / fs2;
            taps[i] = c < in_ch ? filter[((size_t)o * in_ch + c) * fs2 + i % fs2] : 0.0f;
        }
        __syncthreads();
#ifdef DEBUG
        if (hn_debug_leader()) {
            printf("block (%d,%d,%d) output channel %d, dout tile from (y=%d, x=%d):\n", blockIdx.x, blockIdx.y,
                   blockIdx.z, o, ys, xs);
            hn_print_matrix("tile", tile, S, S, S);
        }
#endif
        // dout (y + r - p, x + r - q) is tile (ty + fs - 1 - p, tx + fs - 1 - q)
        for (int p = 0; p < fs; p++)
            for (int q = 0; q < fs; q++) {
                ACCUM_DTYPE v = tile[(ty + fs - 1 - p) * S + tx + fs - 1 - q];
                for (int k = 0; k < CH_PER_BLOCK; k++) acc[k] += v * (ACCUM_DTYPE)taps[k * fs2 + p * fs + q];
            }
        __syncthreads(); // the tile is overwritten by the next channel
    }
    if (x < w && y < h)
        for (int k = 0; k < CH_PER_BLOCK; k++)
            if (c0 + k < in_ch) din[(((size_t)b * in_ch + c0 + k) * h + y) * w + x] = (float)acc[k];
    HN_SINGLE_BLOCK_LEAVE();
}
