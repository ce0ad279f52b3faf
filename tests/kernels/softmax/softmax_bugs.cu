/*
 * softmax_bugs.cu: softmax kernels for tests/test_softmax_op.sh, each with one
 * mistake softmax authors make:
 *
 *   softmax_unstable   exp(x) / sum exp(x) without the max: overflows to inf
 *                      (inf / inf = NaN) or underflows to 0 / 0 on rows with
 *                      large offsets, which every case has
 *   softmax_one_pass   a warp per row that reads only the first 32 columns:
 *                      right for rows of at most 32, wrong past that
 */
__global__ void softmax_unstable(const float *x, float *y, int rows, int cols) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.0f;
    for (int c = 0; c < cols; c++) s += expf(x[(size_t)r * cols + c]);
    for (int c = 0; c < cols; c++) y[(size_t)r * cols + c] = expf(x[(size_t)r * cols + c]) / s;
}

__global__ void softmax_one_pass(const float *x, float *y, int rows, int cols) {
    const int r = blockIdx.x, lane = threadIdx.x;
    const float *xr = x + (size_t)r * cols;
    float v = lane < cols ? xr[lane] : -3.0e38f, m = v;
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float e = lane < cols ? expf(v - m) : 0.0f, s = e;
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
    for (int c = lane; c < cols; c += 32) y[(size_t)r * cols + c] = expf(xr[c] - m) / s;
    (void)rows;
}
