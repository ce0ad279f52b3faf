/*
 * softmax_lastblock: softmax cross-entropy with the loss reduced as CUDA's
 * threadFenceReduction sample does: each block writes its rows' loss terms'
 * sum into partials[blockIdx.x] (a scratch buffer the harness allocates), the
 * last block to finish (a counter in a second scratch buffer, which "zero" sets
 * to 0 before every launch) adds the partials up and writes the loss. A warp
 * per row; WARPS rows per block. (tests/test_zero_outputs.sh)
 */
#include <math.h> /* INFINITY: NVRTC has it only from here */

#define FULL 0xffffffffu

extern "C" __global__ void softmax_lastblock(const float *logits, const int *labels, float *loss, float *dlogits,
                                             int batch, int classes, float *partials, unsigned *done) {
    __shared__ float terms[WARPS];
    __shared__ bool last;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int row = blockIdx.x * WARPS + warp;
    float term = 0.0f;
    if (row < batch) {
        const float *x = logits + (size_t)row * classes;
        float m = -INFINITY, s = 0.0f;
        for (int c = lane; c < classes; c += 32) m = fmaxf(m, x[c]);
        for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(FULL, m, o));
        for (int c = lane; c < classes; c += 32) s += expf(x[c] - m);
        for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(FULL, s, o);
        const int label = labels[row];
        for (int c = lane; c < classes; c += 32)
            dlogits[(size_t)row * classes + c] = (expf(x[c] - m) / s - (c == label ? 1.0f : 0.0f)) / batch;
        term = m + logf(s) - x[label];
    }
    if (lane == 0) terms[warp] = term;
    __syncthreads();
    if (threadIdx.x == 0) {
        float sum = 0.0f;
        for (int i = 0; i < WARPS; i++) sum += terms[i];
        partials[blockIdx.x] = sum;
        __threadfence();
        last = atomicAdd(done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float total = 0.0f;
        for (unsigned b = 0; b < gridDim.x; b++) total += ((volatile float *)partials)[b];
        *loss = total / batch;
    }
}
