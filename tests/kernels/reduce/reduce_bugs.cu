/*
 * reduce_bugs.cu: reductions for tests/test_reduce_sum.sh, each with one mistake
 * reduction authors make (PMPP chapter 10's pitfalls):
 *
 *   reduce_no_tail      the grid-stride loop covers whole blocks only (cols
 *                       rounded down to a multiple of the block): the tail is
 *                       left out, so rows whose length is not a multiple of the
 *                       block are wrong
 *   reduce_tree_racy    the shared-memory tree without the barrier between its
 *                       steps: a race harness check names (on the emulator the
 *                       blocks' warps run in an order that may even hide it)
 *   reduce_sequential   one thread adds a whole row in float: correct, and slow
 *                       (its rounding is a random walk; it would stall only past
 *                       2^25 elements, where values below 2 round away)
 */
#ifndef BLOCK
#define BLOCK 64
#endif

__global__ void reduce_no_tail(const float *x, float *y, int cols) {
    const float *row = x + (size_t)blockIdx.y * cols;
    const int whole = cols / (int)blockDim.x * (int)blockDim.x;
    float s = 0.0f;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < whole; c += gridDim.x * blockDim.x) s += row[c];
    atomicAdd(&y[blockIdx.y], s);
}

__global__ void reduce_tree_racy(const float *x, float *y, int cols) {
    __shared__ float sh[BLOCK];
    const int t = threadIdx.x;
    float s = 0.0f;
    for (int c = t; c < cols; c += BLOCK) s += x[(size_t)blockIdx.y * cols + c];
    sh[t] = s;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride /= 2)
        if (t < stride) sh[t] += sh[t + stride]; /* no barrier between the steps */
    if (t == 0) y[blockIdx.y] = sh[0];
}

__global__ void reduce_sequential(const float *x, float *y, int cols) {
    const float *row = x + (size_t)blockIdx.y * cols;
    float s = 0.0f;
    for (int c = 0; c < cols; c++) s += row[c];
    y[blockIdx.y] = s;
}
