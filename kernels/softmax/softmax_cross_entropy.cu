/*
 * softmax_cross_entropy: the mean cross-entropy loss of softmax(logits) against
 * integer labels and its gradient, in one launch (torch.nn.functional.cross_entropy,
 * reduction 'mean', and its autograd):
 *
 *   logits (batch, classes) float, labels (batch) int ->
 *   loss (1)                 = (1/batch) sum_b (m_b + log s_b - logits[b][labels[b]])
 *   dlogits (batch, classes) = (exp(logits[b][c] - m_b) / s_b - (c == labels[b])) / batch
 *   m_b = max of row b, s_b = sum_c exp(logits[b][c] - m_b)   (the max subtracted:
 *   the operator's rows have offsets of +-96, where exp alone overflows float)
 *
 * The harness poisons outputs with NaN before the first launch and every launch
 * must produce all of them by itself, so the loss (one number summed over every
 * row) cannot be zeroed by one launch and accumulated by another:
 *
 *   softmax_xent_single_block  one block (grid 1) does everything: thread t takes
 *                              rows t, t + BLOCK, ... (max, sum, gradient row, loss
 *                              term, sequentially), then a shared-memory tree adds
 *                              the threads' terms and thread 0 writes the loss.
 *                              Simple and exact in its ordering; one SM's worth.
 *   softmax_xent_row_block     a block per row (grid batch): tree reductions in
 *                              shared memory for the row's max and sum, the gradient
 *                              row written by all threads; the loss through a
 *                              module-scope accumulator: each block's thread 0 adds
 *                              its row's term (atomicAdd, double), fences, and takes
 *                              a ticket; the block that takes the last ticket knows
 *                              every term is in, writes loss = sum / batch and
 *                              resets the accumulator and the counter to 0 for the
 *                              next launch (the "last block" pattern of CUDA's
 *                              threadFenceReduction sample). The globals start at 0
 *                              when the module loads.
 *
 * BLOCK (a power of two, <= 1024) is the block size of both: block (BLOCK).
 *
 *   harness run configs/softmax_cross_entropy_sweep.json
 *   harness debug configs/softmax_cross_entropy_sweep.json --kernel 'softmax_xent_row_block[BLOCK=128]' --set batch=3,classes=7
 */
#include "hn_kernel.h"

#ifndef BLOCK
#define BLOCK 256
#endif

#define SXE_LOWEST (-3.402823466e+38f)

/* Thread 0 gets the sum of every thread's v (all threads must call it; BLOCK threads). */
__device__ inline float block_sum(float v, float *red) {
    red[threadIdx.x] = v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    float r = red[0];
    __syncthreads();
    return r;
}

__device__ inline float block_max(float v, float *red) {
    red[threadIdx.x] = v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    float r = red[0];
    __syncthreads();
    return r;
}

__global__ void softmax_xent_single_block(const float *logits, const int *labels, float *loss, float *dlogits,
                                          int batch, int classes HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    __shared__ float red[BLOCK];
    const float inv_batch = 1.0f / (float)batch;
    float terms = 0.0f; /* this thread's rows' -log p[label] */
    for (int b = threadIdx.x; b < batch; b += BLOCK) {
        const float *x = logits + (size_t)b * classes;
        float *d = dlogits + (size_t)b * classes;
        float m = SXE_LOWEST;
        for (int c = 0; c < classes; c++) m = fmaxf(m, x[c]);
        float s = 0.0f;
        for (int c = 0; c < classes; c++) s += expf(x[c] - m);
        const int label = labels[b];
        terms += logf(s) + (m - x[label]);
        const float scale = inv_batch / s;
        for (int c = 0; c < classes; c++) d[c] = expf(x[c] - m) * scale - (c == label ? inv_batch : 0.0f);
    }
    const float total = block_sum(terms, red);
    if (threadIdx.x == 0) *loss = total * inv_batch;
    HN_SINGLE_BLOCK_LEAVE();
}

/* The row_block kernel's loss accumulator and block counter: zero when the
 * module loads, and again after every launch (the last block resets them). */
__device__ double sxe_loss_sum;
__device__ unsigned int sxe_blocks_done;

__global__ void softmax_xent_row_block(const float *logits, const int *labels, float *loss, float *dlogits, int batch,
                                       int classes HN_SINGLE_BLOCK_PARAM) {
    HN_SINGLE_BLOCK_ENTER();
    __shared__ float red[BLOCK];
    const int b = blockIdx.x;
    const float *x = logits + (size_t)b * classes;
    float *d = dlogits + (size_t)b * classes;
    const float inv_batch = 1.0f / (float)batch;

    float m = SXE_LOWEST;
    for (int c = threadIdx.x; c < classes; c += BLOCK) m = fmaxf(m, x[c]);
    m = block_max(m, red);
    float s = 0.0f;
    for (int c = threadIdx.x; c < classes; c += BLOCK) s += expf(x[c] - m);
    s = block_sum(s, red);
    const int label = labels[b];
    const float scale = inv_batch / s;
    for (int c = threadIdx.x; c < classes; c += BLOCK)
        d[c] = expf(x[c] - m) * scale - (c == label ? inv_batch : 0.0f);

    if (threadIdx.x == 0) {
        atomicAdd(&sxe_loss_sum, (double)(logf(s) + (m - x[label])));
        __threadfence(); /* the term is visible before the ticket is */
        const unsigned int ticket = atomicAdd(&sxe_blocks_done, 1u);
        if (ticket == gridDim.x - 1) { /* every other block's term is in */
            const double total = atomicAdd(&sxe_loss_sum, 0.0);
            *loss = (float)(total / batch);
            sxe_loss_sum = 0.0;
            sxe_blocks_done = 0u;
            __threadfence();
        }
    }
    HN_SINGLE_BLOCK_LEAVE();
}
