/*
 * pool2d_backward_gather: the gradient of pool2d with one thread per input
 * element: thread t computes din[t], t running over din in memory order (so
 * writes are coalesced in every layout), from the one output whose window holds
 * it: max mode, dout of that output if its argmax is this element, else 0; avg
 * mode, dout / k^2. Elements in the last h % k rows or w % k columns are in no
 * window and get 0. Each output's dout (and argmax) is read by the k^2 threads
 * of its window, mostly from cache.
 * Block (TILE_SIZE), grid ceil(n * channels * h * w / TILE_SIZE); any layout.
 *
 *   harness run configs/pool2d_backward_sweep.json
 *   harness debug configs/pool2d_backward_sweep.json --kernel pool2d_backward_gather --set n=1,channels=2,h=7,w=9,k=2,mode=max
 *
 * Variants of this family (kernels/pool2d_backward/):
 *   pool2d_backward_gather   this file: a thread per input element
 *   pool2d_backward_scatter  a thread per output element, writing its whole
 *                            window: dout at the argmax and 0 elsewhere (max), or
 *                            dout / k^2 everywhere (avg). With stride k windows do
 *                            not overlap, so every input element has exactly one
 *                            writer and no atomics are needed (with stride < k an
 *                            element can be the maximum of several windows, and
 *                            the scatter would need atomicAdd and a zeroed din).
 */
#include "pool2d_helpers.h"

__global__ void pool2d_backward_gather(const int *argmax, const float *dout, float *din, int n, int channels, int h,
                                       int w, int k, int is_max, int layout HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
#ifdef DEBUG
    if (hn_debug_leader()) PRINT_INPUTS();
#endif
    const int oh = h / k, ow = w / k, inner = pool2d_inner(layout, n, channels);
    const long long total = (long long)n * channels * h * w;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < total) {
        const int i = (int)(t % inner);
        long long r = t / inner;
        const int x = (int)(r % w);
        r /= w;
        const int y = (int)(r % h);
        const long long o = r / h;
        float g = 0.0f;
        if (y < oh * k && x < ow * k) {
            const long long e = ((o * oh + y / k) * ow + x / k) * inner + i; // the output above
            if (is_max)
                g = argmax[e] == y * w + x ? dout[e] : 0.0f;
            else
                g = dout[e] / (float)(k * k);
        }
        din[t] = g;
    }
    HN_SINGLE_BLOCK_LEAVE();
}
