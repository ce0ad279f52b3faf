/*
 * histogram_bugs.cu: histograms for tests/test_histogram.sh, each with one
 * mistake (PMPP chapter 9's pitfalls):
 *
 *   histogram_no_flush    aggregation that never adds its last run: counts short
 *   histogram_no_init     the private histogram used without a barrier after it
 *                         is zeroed: a race harness check names
 */
__global__ void histogram_no_flush(const int *x, int *hist, int n, int bins) {
    const int threads = gridDim.x * blockDim.x, t = blockIdx.x * blockDim.x + threadIdx.x;
    const int per = (n + threads - 1) / threads, lo = t * per, hi = min(lo + per, n);
    int prev = -1, count = 0;
    for (int i = lo; i < hi; i++) {
        if (x[i] == prev) {
            count++;
        } else {
            if (count) atomicAdd(&hist[prev], count);
            prev = x[i], count = 1;
        }
    }
    (void)bins; /* the last run (count) is never added */
}

__global__ void histogram_no_init(const int *x, int *hist, int n, int bins) {
    extern __shared__ int local[];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&local[x[i]], 1);
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x)
        if (local[b]) atomicAdd(&hist[b], local[b]);
}
