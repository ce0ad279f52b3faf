/*
 * reduce: y[r] = the sum of row r of x (rows, cols), float (the reduce_sum
 * operator, docs/ops/reduce_sum.md: PMPP chapter 10's reduction). rows = 1 sums
 * all of x. Grid y (or the launch's rows) walks the rows.
 *
 *   reduce_atomic      each thread sums a grid-stride slice of its row, then one
 *                      atomicAdd per thread into y[r] (the variant zeroes y: "zero")
 *   reduce_warp        the same slices, reduced in each warp by __shfl_down_sync
 *                      and across the block's warps in shared memory: one
 *                      atomicAdd per block ("zero" too)
 *   reduce_tree_pass1  two launches, no atomics: pass 1, grid (PARTS, rows), sums
 *   reduce_tree_pass2  slices in a shared-memory tree (PMPP's convergent order:
 *                      stride halving, active threads contiguous) into a scratch
 *                      buffer of PARTS partial sums a row; pass 2, grid (1, rows),
 *                      adds a row's partial sums the same way and writes y[r]
 *
 * BLOCK is the block size, a power of two.
 *
 *   harness run configs/reduce_sum_sweep.json
 *   harness debug configs/reduce_sum_sweep.json --kernel reduce_warp --set rows=2,cols=1000
 */
#ifndef BLOCK
#define BLOCK 256
#endif

/* This thread's share of row blockIdx.y: a grid-stride loop over the columns. */
__device__ float slice_sum(const float *x, int cols) {
    const float *row = x + (size_t)blockIdx.y * cols;
    float s = 0.0f;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += gridDim.x * blockDim.x) s += row[c];
    return s;
}

__global__ void reduce_atomic(const float *x, float *y, int cols) {
    atomicAdd(&y[blockIdx.y], slice_sum(x, cols));
}

__global__ void reduce_warp(const float *x, float *y, int cols) {
    __shared__ float warp_sums[BLOCK / 32];
    float s = slice_sum(x, cols);
    for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = s;
    __syncthreads();
    if (warp == 0) {
        s = lane < BLOCK / 32 ? warp_sums[lane] : 0.0f;
        for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
        if (lane == 0) atomicAdd(&y[blockIdx.y], s);
    }
}

/* The block's values v (one per thread) summed into v[0] of shared memory. */
__device__ float block_tree(float *sh, float v) {
    const int t = threadIdx.x;
    sh[t] = v;
    for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
        __syncthreads();
        if (t < stride) sh[t] += sh[t + stride];
    }
    __syncthreads();
    return sh[0];
}

__global__ void reduce_tree_pass1(const float *x, float *partials, int cols) {
    __shared__ float sh[BLOCK];
    const float s = block_tree(sh, slice_sum(x, cols));
    if (threadIdx.x == 0) partials[(size_t)blockIdx.y * gridDim.x + blockIdx.x] = s;
}

__global__ void reduce_tree_pass2(const float *partials, float *y, int parts) {
    __shared__ float sh[BLOCK];
    float s = 0.0f;
    for (int i = threadIdx.x; i < parts; i += BLOCK) s += partials[(size_t)blockIdx.y * parts + i];
    s = block_tree(sh, s);
    if (threadIdx.x == 0) y[blockIdx.y] = s;
}
