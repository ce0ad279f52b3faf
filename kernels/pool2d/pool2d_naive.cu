/*
 * pool2d_naive: PMPP's poolingLayer_forward with one thread per output element.
 *
 * Thread t computes out[t] (and argmax[t] in max mode), t running over the
 * output in memory order, so writes are coalesced in every layout; it reads its
 * k x k window straight from global memory. Reads: in NHWC and CHWN consecutive
 * threads read consecutive addresses (they differ in the innermost channel or
 * image); in NCHW they differ in x and read k floats apart, so each load
 * instruction of a warp touches k times the sectors it uses (the cache makes up
 * for some of it). Block (TILE_SIZE), grid ceil(n * channels * oh * ow / TILE_SIZE).
 * Avg mode writes out only (argmax is not written).
 *
 *   harness run configs/pool2d_sweep.json
 *   harness run configs/pool2d_layouts.json     (NCHW against NHWC and CHWN)
 *   harness debug configs/pool2d_sweep.json --kernel pool2d_naive --set n=1,channels=2,h=7,w=9,k=2,mode=max
 *
 * Variants of this family (kernels/pool2d/):
 *   pool2d_naive       this file: any layout
 *   pool2d_rows        a block per TILE_SIZE outputs of one output row: the block
 *                      reads the k input rows under them into shared memory with
 *                      consecutive threads on consecutive floats (coalesced in
 *                      NCHW too), then each thread pools its window from there.
 *                      NCHW only.
 */
#include "pool2d_helpers.h"

__global__ void pool2d_naive(const float *in, float *out, int *argmax, int n, int channels, int h, int w, int k,
                             int is_max, int layout HN_SINGLE_BLOCK_PARAM) {
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
        const float *win = in + ((o * h + (long long)oy * k) * w + (long long)ox * k) * inner + i;
        if (is_max) {
            float m = win[0];
            int at = oy * k * w + ox * k;
            for (int p = 0; p < k; p++)
                for (int q = 0; q < k; q++) {
                    const float v = win[((long long)p * w + q) * inner];
                    if (pool2d_takes(v, m)) {
                        m = v;
                        at = (oy * k + p) * w + ox * k + q;
                    }
                }
            out[t] = m;
            argmax[t] = at;
        } else {
            float s = 0.0f;
            for (int p = 0; p < k; p++)
                for (int q = 0; q < k; q++) s += win[((long long)p * w + q) * inner];
            out[t] = s / (float)(k * k);
        }
    }
    HN_SINGLE_BLOCK_LEAVE();
}
