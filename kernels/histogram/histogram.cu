/*
 * histogram: hist[b] = how many x[i] == b, for x (n) int in [0, bins) (the
 * histogram operator, docs/ops/histogram.md: PMPP chapter 9). Every kernel adds
 * into hist, so each variant gives "zero": ["hist"].
 *
 *   histogram_global      one atomicAdd into global memory a value, grid-stride
 *   histogram_private     privatization: each block counts into a shared-memory
 *                         copy of the histogram (dynamic shared memory, bins ints),
 *                         then adds its non-zero bins into global memory
 *   histogram_aggregate   privatization plus aggregation: a thread keeps counting
 *                         a run of equal values in a register and makes one shared
 *                         atomic a run (the input's runs of 0 make it pay)
 *
 *   harness run configs/histogram_sweep.json
 */
__global__ void histogram_global(const int *x, int *hist, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&hist[x[i]], 1);
}

__global__ void histogram_private(const int *x, int *hist, int n, int bins) {
    extern __shared__ int local[];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&local[x[i]], 1);
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x)
        if (local[b]) atomicAdd(&hist[b], local[b]);
}

/* Each thread takes a contiguous chunk of x (so runs stay within a thread). */
__global__ void histogram_aggregate(const int *x, int *hist, int n, int bins) {
    extern __shared__ int local[];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    const int threads = gridDim.x * blockDim.x, t = blockIdx.x * blockDim.x + threadIdx.x;
    const int per = (n + threads - 1) / threads, lo = t * per, hi = min(lo + per, n);
    int prev = -1, count = 0;
    for (int i = lo; i < hi; i++) {
        const int v = x[i];
        if (v == prev) {
            count++;
        } else {
            if (count) atomicAdd(&local[prev], count);
            prev = v, count = 1;
        }
    }
    if (count) atomicAdd(&local[prev], count);
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x)
        if (local[b]) atomicAdd(&hist[b], local[b]);
}
