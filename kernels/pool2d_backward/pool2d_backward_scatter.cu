/*
 * pool2d_backward_scatter: the gradient of pool2d with one thread per output
 * element: thread t (over dout in memory order) writes the k x k elements of its
 * window in din: dout[t] at argmax[t] and 0 elsewhere (max), or dout[t] / k^2
 * everywhere (avg). The threads of the last window of each row also zero the w %
 * k columns to their right, and those of the last row of windows the h % k rows
 * below, so every element of din is written exactly once and din needs no
 * zeroing beforehand. No atomics: with stride k the windows are disjoint, so no
 * two threads write one element (see the menu in pool2d_backward_gather.cu).
 * Writes of one thread are k^2 scattered stores; a warp's stores are coalesced
 * in NHWC and CHWN (consecutive threads, consecutive i), k floats apart in NCHW.
 * Block (TILE_SIZE), grid ceil(n * channels * oh * ow / TILE_SIZE); any layout.
 *
 *   harness run configs/pool2d_backward_sweep.json
 *   harness debug configs/pool2d_backward_sweep.json --kernel pool2d_backward_scatter --set n=1,channels=2,h=7,w=9,k=2,mode=max
 *
 * The family's menu is in pool2d_backward_gather.cu.
 */
#include "pool2d_helpers.h"

__global__ void pool2d_backward_scatter(const int *argmax, const float *dout, float *din, int n, int channels, int h,
                                        int w, int k, int is_max, int layout HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
#ifdef DEBUG
    if (hn_debug_leader()) PRINT_INPUTS();
#endif
    const int oh = h / k, ow = w / k, inner = pool2d_inner(layout, n, channels);
    const long long total = (long long)n * channels * oh * ow;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < total) {
        const int i = (int)(t % inner);
        long long r = t / inner;
        const int ox = (int)(r % ow);
        r /= ow;
        const int oy = (int)(r % oh);
        const long long o = r / oh;
        float *plane = din + o * h * w * inner + i; // plane[(y * w + x) * inner] is (y, x)
        const float g = dout[t];
        const int at = is_max ? argmax[t] : -1;
        const float share = g / (float)(k * k);
        for (int p = 0; p < k; p++)
            for (int q = 0; q < k; q++) {
                const int pos = (oy * k + p) * w + ox * k + q;
                plane[(long long)pos * inner] = is_max ? (pos == at ? g : 0.0f) : share;
            }
        // the elements no window covers: right of the last window of each row,
        // below the last row of windows
        if (ox == ow - 1)
            for (int p = 0; p < k; p++)
                for (int x = ow * k; x < w; x++) plane[((long long)(oy * k + p) * w + x) * inner] = 0.0f;
        if (oy == oh - 1) {
            const int x_end = ox == ow - 1 ? w : ox * k + k;
            for (int y = oh * k; y < h; y++)
                for (int x = ox * k; x < x_end; x++) plane[((long long)y * w + x) * inner] = 0.0f;
        }
    }
    HN_SINGLE_BLOCK_LEAVE();
}
