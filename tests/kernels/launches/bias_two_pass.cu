/*
 * bias_two_pass: conv2d's bias gradient in two launches (tests/configs/launches_debug.json;
 * tests/test_launches.sh):
 *   partial_sums  grid (CHUNKS, out_ch): each block sums a chunk of one channel's
 *                 n * plane values of dout into partials[o * CHUNKS + chunk] (scratch);
 *                 under SINGLE_BLOCK it takes the trailing debug_counter and its blocks
 *                 run in order, printing their sums under DEBUG
 *   finish        a thread per channel adds its CHUNKS partials into dbias; no counter
 *   build/harness debug tests/configs/launches_debug.json --kernel partial_sums+finish
 */
#include "hn_kernel.h"

extern "C" __global__ void partial_sums(const float *dout, float *partials, int n, int out_ch, int plane
                                        HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    __shared__ float s[128];
    const int o = blockIdx.y, chunk = blockIdx.x;
    float acc = 0.0f;
    for (int i = chunk * 128 + threadIdx.x; i < n * plane; i += gridDim.x * 128)
        acc += dout[((size_t)(i / plane) * out_ch + o) * plane + i % plane];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int st = 64; st > 0; st /= 2) {
        if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partials[o * gridDim.x + chunk] = s[0];
#ifdef DEBUG
        if (hn_debug_leader()) printf("partial o=%d chunk=%d\n", o, chunk);
#endif
    }
    HN_SINGLE_BLOCK_LEAVE();
}

extern "C" __global__ void finish(const float *partials, float *dbias, int out_ch, int chunks) {
    const int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= out_ch) return;
    float acc = 0.0f;
    for (int c = 0; c < chunks; c++) acc += partials[o * chunks + c];
    dbias[o] = acc;
}
