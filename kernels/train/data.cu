/*
 * data: moving a training batch into place and counting how it went, for
 * `harness train`; the data set lives on the device (bytes, as the IDX files
 * hold them), so a step copies nothing from the host.
 *
 *   gather_batch       x[b][j] = (images[order[offset + b]][j] / 255 - mean) * inv_std
 *                      and labels[b] = labels_all[order[offset + b]] (int), for b <
 *                      batch and j < pixels: thread (j, b) of a 2D grid (x over the
 *                      pixels: consecutive threads read consecutive bytes)
 *   classify_stats     after the loss: one block (grid 1) adds to stats (double[3]):
 *                      [0] += loss * batch (the batch's summed loss), [1] += the rows
 *                      whose largest logit (the first on ties) is the label, [2] +=
 *                      batch. A tree in shared memory, no atomics: the same bits on
 *                      every run, and no host synchronisation per step (the host
 *                      reads stats at the progress interval only)
 *   binary_stats       the same for a sigmoid output against 0/1 targets: an
 *                      element is right when (pred > 0.5) == (target > 0.5);
 *                      [0] += loss * batch, [1] += the right elements / per_sample
 *                      (outputs per sample), [2] += batch
 *
 * BLOCK (a power of two, <= 1024) is the block size of the two stats kernels.
 *
 *   harness train mnist --data /usr/share/datasets/fashion-mnist
 *   harness train xor
 */
#include "hn_kernel.h"

#ifndef BLOCK
#define BLOCK 256
#endif

__global__ void gather_batch(const unsigned char *images, const unsigned char *labels_all, const int *order, float *x,
                             int *labels, int batch, int offset, int pixels, float mean, float inv_std) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int b = blockIdx.y * blockDim.y + threadIdx.y;
    if (b < batch && j < pixels) {
        const long long src = order[offset + b];
        x[(long long)b * pixels + j] = ((float)images[src * pixels + j] * (1.0f / 255.0f) - mean) * inv_std;
        if (j == 0) labels[b] = labels_all[src];
    }
}

__device__ inline float stats_block_sum(float v, float *red) {
    red[threadIdx.x] = v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    return red[0];
}

__global__ void classify_stats(const float *logits, const int *labels, const float *loss, double *stats, int batch,
                               int classes) {
    __shared__ float red[BLOCK];
    float right = 0.0f;
    for (int b = threadIdx.x; b < batch; b += BLOCK) {
        const float *row = logits + (long long)b * classes;
        int best = 0;
        for (int c = 1; c < classes; c++)
            if (row[c] > row[best]) best = c;
        right += best == labels[b] ? 1.0f : 0.0f;
    }
    const float total = stats_block_sum(right, red);
    if (threadIdx.x == 0) {
        stats[0] += (double)loss[0] * batch;
        stats[1] += total;
        stats[2] += batch;
    }
}

__global__ void binary_stats(const float *pred, const float *target, const float *loss, double *stats, int batch,
                             int per_sample) {
    __shared__ float red[BLOCK];
    float right = 0.0f;
    for (int i = threadIdx.x; i < batch * per_sample; i += BLOCK)
        right += (pred[i] > 0.5f) == (target[i] > 0.5f) ? 1.0f : 0.0f;
    const float total = stats_block_sum(right, red);
    if (threadIdx.x == 0) {
        stats[0] += (double)loss[0] * batch;
        stats[1] += total / per_sample;
        stats[2] += batch;
    }
}
