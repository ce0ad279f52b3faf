/*
 * softmax_pipeline: softmax cross-entropy as a pipeline of launches sharing
 * scratch buffers (tests/configs/launches_softmax.json; tests/test_launches.sh):
 *   row_stats<BS>  a block per row: the row's max and sum of exp into stats[2 row], stats[2 row + 1]
 *   normalize      a thread per element: dlogits; the row's loss term into terms[row]
 *   reduce<BS>     one block sums n values of `in` into out[0], times `scale`: the
 *                  loss directly, or launched twice (terms into a scratch word, then
 *                  that word into loss) with different arguments
 *   build/harness run tests/configs/launches_softmax.json --backend emu
 */
#include <math.h>

template <int BS>
__global__ void row_stats(const float *logits, float *stats, int batch, int classes) {
    __shared__ float s[BS];
    const float *x = logits + (size_t)blockIdx.x * classes;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < classes; c += BS) m = fmaxf(m, x[c]);
    s[threadIdx.x] = m;
    __syncthreads();
    for (int st = BS / 2; st > 0; st /= 2) {
        if (threadIdx.x < st) s[threadIdx.x] = fmaxf(s[threadIdx.x], s[threadIdx.x + st]);
        __syncthreads();
    }
    m = s[0];
    __syncthreads();
    float sum = 0.0f;
    for (int c = threadIdx.x; c < classes; c += BS) sum += expf(x[c] - m);
    s[threadIdx.x] = sum;
    __syncthreads();
    for (int st = BS / 2; st > 0; st /= 2) {
        if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        stats[2 * blockIdx.x] = m;
        stats[2 * blockIdx.x + 1] = s[0];
    }
}

extern "C" __global__ void normalize(const float *logits, const int *labels, const float *stats, float *dlogits,
                                     float *terms, int batch, int classes) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)batch * classes) return;
    const int row = (int)(i / classes), c = (int)(i % classes);
    const float m = stats[2 * row], s = stats[2 * row + 1];
    const int label = labels[row];
    dlogits[i] = (expf(logits[i] - m) / s - (c == label ? 1.0f : 0.0f)) / batch;
    if (c == label) terms[row] = m + logf(s) - logits[i];
}

template <int BS>
__global__ void reduce(const float *in, float *out, int n, float scale) {
    __shared__ float s[BS];
    float acc = 0.0f;
    for (int i = threadIdx.x; i < n; i += BS) acc += in[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int st = BS / 2; st > 0; st /= 2) {
        if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = s[0] * scale;
}
