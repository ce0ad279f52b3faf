/*
 * warpsync.cu: pre-Volta warp-synchronous code through volatile memory, for
 * tests/test_emu_features.c. A source that uses `volatile` is built with its
 * volatile accesses taking turns (docs/emulator.md, "volatile"), so these
 * compute what a GPU's lockstep warps compute.
 *
 *   reduce6       the classic reduction (Harris's reduce6): a shared tree down
 *                 to 64 values, then warpReduce<blockSize>(volatile float *, tid)
 *                 with no __syncwarp; a float per block
 *   flag_spin     thread 0 spins on a volatile __shared__ flag that a thread of
 *                 another warp of the same block sets
 *   scan_warp     an inclusive warp scan through volatile shared memory (the
 *                 pre-shuffle idiom: if (lane >= d) s[i] += s[i - d])
 */
template <unsigned int blockSize>
__device__ void warpReduce(volatile float *sdata, unsigned int tid) {
    if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
    if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
    if (blockSize >= 16) sdata[tid] += sdata[tid + 8];
    if (blockSize >= 8) sdata[tid] += sdata[tid + 4];
    if (blockSize >= 4) sdata[tid] += sdata[tid + 2];
    if (blockSize >= 2) sdata[tid] += sdata[tid + 1];
}

template <unsigned int blockSize>
__global__ void reduce6(const float *g_idata, float *g_odata, unsigned int n) {
    __shared__ float sdata[blockSize];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + tid;
    unsigned int gridSize = blockSize * 2 * gridDim.x;
    sdata[tid] = 0;
    while (i < n) {
        sdata[tid] += g_idata[i] + g_idata[i + blockSize];
        i += gridSize;
    }
    __syncthreads();
    if (blockSize >= 512) { if (tid < 256) { sdata[tid] += sdata[tid + 256]; } __syncthreads(); }
    if (blockSize >= 256) { if (tid < 128) { sdata[tid] += sdata[tid + 128]; } __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }
    if (tid < 32) warpReduce<blockSize>(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
template __global__ void reduce6<256>(const float *, float *, unsigned int);

__global__ void flag_spin(int *out) {
    __shared__ volatile int flag;
    __shared__ volatile int data;
    int t = threadIdx.x;
    if (t == 0) flag = 0;
    __syncthreads();
    if (t == 0) {
        while (flag == 0) {
        }
        out[blockIdx.x] = data;
    } else if (t == 40) {
        data = 42 + (int)blockIdx.x;
        __threadfence_block();
        flag = 1;
    }
}

__global__ void scan_warp(const int *in, int *out) {
    __shared__ int s[64];
    volatile int *v = s;
    int t = threadIdx.x, lane = t & 31;
    v[t] = in[t];
    for (int d = 1; d < 32; d *= 2)
        if (lane >= d) v[t] += v[t - d];
    out[t] = v[t];
}
