/*
 * scan_bugs.cu: kernels/scan/scan.cu's kernels with one planted bug each, for
 * tests/test_scan.sh (float only; BLOCK a power of two, SECTION = 2 BLOCK).
 *
 *   scan_ks_shift       Kogge-Stone whose exclusive scan shifts the wrong way
 *                       (loads x[e + 1] for x[e - 1]): inclusive scans are right
 *   scan_ks_one_barrier Kogge-Stone in place with one barrier a step: a thread
 *                       reads its partner's element while the partner adds into
 *                       it (harness check names the race; the emulator, running
 *                       threads in order, adds some elements twice)
 *   scan_pass3_full     the hierarchical scan's pass 3 adds the block sums to
 *                       full sections only: the last one is left out when cols
 *                       is not a multiple of SECTION
 *   scan_bk_no_guard    Brent-Kung that stores its whole section: past the row
 *                       when cols is not a multiple of SECTION
 */
#ifndef BLOCK
#define BLOCK 64
#endif
#define SECTION (2 * BLOCK)

__device__ float load_x(const float *x, int cols, int src, int e) {
    return e < cols && src >= 0 && src < cols ? x[(size_t)blockIdx.y * cols + src] : 0.0f;
}

__global__ void scan_ks_shift(const float *x, float *y, int cols, int exclusive) {
    __shared__ float buf[2][BLOCK];
    const int t = threadIdx.x;
    int in = 0;
    buf[0][t] = load_x(x, cols, t + exclusive, t); // BUG: t - exclusive
    for (int off = 1; off < cols; off *= 2) {
        __syncthreads();
        buf[1 - in][t] = t >= off ? buf[in][t] + buf[in][t - off] : buf[in][t];
        in = 1 - in;
    }
    if (t < cols) y[(size_t)blockIdx.y * cols + t] = buf[in][t];
}

__global__ void scan_ks_one_barrier(const float *x, float *y, int cols, int exclusive) {
    __shared__ float s[BLOCK];
    const int t = threadIdx.x;
    s[t] = load_x(x, cols, t - exclusive, t);
    for (int off = 1; off < cols; off *= 2) {
        __syncthreads();
        if (t >= off) s[t] += s[t - off]; // BUG: needs a barrier between the read and the write
    }
    __syncthreads();
    if (t < cols) y[(size_t)blockIdx.y * cols + t] = s[t];
}

/* The hierarchical scan's correct passes 1 and 2, as in kernels/scan/scan.cu. */
__device__ void brent_kung(float *s) {
    const int t = threadIdx.x;
    for (int stride = 1; stride <= BLOCK; stride *= 2) {
        __syncthreads();
        const int i = (t + 1) * 2 * stride - 1;
        if (i < SECTION) s[i] += s[i - stride];
    }
    for (int stride = SECTION / 4; stride > 0; stride /= 2) {
        __syncthreads();
        const int i = (t + 1) * 2 * stride - 1;
        if (i + stride < SECTION) s[i + stride] += s[i];
    }
    __syncthreads();
}

__device__ void load_section(float *s, const float *x, int cols, int exclusive, int base) {
    const int t = threadIdx.x;
    s[t] = load_x(x, cols, base + t - exclusive, base + t);
    s[t + BLOCK] = load_x(x, cols, base + t + BLOCK - exclusive, base + t + BLOCK);
}

__global__ void scan_pass1(const float *x, float *y, float *sums, int cols, int exclusive) {
    __shared__ float s[SECTION];
    const int t = threadIdx.x, base = blockIdx.x * SECTION;
    load_section(s, x, cols, exclusive, base);
    brent_kung(s);
    float *yr = y + (size_t)blockIdx.y * cols;
    if (base + t < cols) yr[base + t] = s[t];
    if (base + t + BLOCK < cols) yr[base + t + BLOCK] = s[t + BLOCK];
    if (t == 0) sums[(size_t)blockIdx.y * gridDim.x + blockIdx.x] = s[SECTION - 1];
}

__global__ void scan_pass2(float *sums, int parts) { // one thread adds a row's block sums in order
    if (threadIdx.x != 0) return;
    float *row = sums + (size_t)blockIdx.y * parts;
    for (int i = 1; i < parts; i++) row[i] += row[i - 1];
}

__global__ void scan_pass3_full(float *y, const float *sums, int cols) {
    const int base = blockIdx.x * SECTION, t = threadIdx.x;
    if (blockIdx.x == 0 || base + SECTION > cols) return; // BUG: the last, partial section gets nothing
    const float add = sums[(size_t)blockIdx.y * gridDim.x + blockIdx.x - 1];
    float *yr = y + (size_t)blockIdx.y * cols;
    yr[base + t] += add;
    yr[base + t + BLOCK] += add;
}

__global__ void scan_bk_no_guard(const float *x, float *y, int cols, int exclusive) {
    __shared__ float s[SECTION];
    const int t = threadIdx.x;
    load_section(s, x, cols, exclusive, 0);
    brent_kung(s);
    float *yr = y + (size_t)blockIdx.y * cols;
    yr[t] = s[t];                 // BUG: no t < cols
    yr[t + BLOCK] = s[t + BLOCK]; // BUG: no t + BLOCK < cols
}
