/*
 * gemm_bugs.cu: kernels for tests/test_gemm.sh, each one thread per element of
 * c like kernels/gemm/gemm_naive.cu, with one mistake a GEMM author makes (or,
 * gemm_accumulate, none):
 *
 *   gemm_ignores_beta   writes alpha * acc whatever beta: wrong where beta != 0
 *   gemm_ignores_trans  reads b as (k, n) whatever trans_b: wrong where trans_b
 *                       is T and the shape is not symmetric about it
 *   gemm_accumulate     c += alpha * acc, i.e. beta = 1 done in place: correct for
 *                       beta 1 only when every launch starts from c's input (the
 *                       harness restores it before each one)
 *   gemm_tail_overrun   the row guard is i <= m: row m reads a and writes c one
 *                       row past their ends
 */
__device__ float dot(const float *a, const float *b, int m, int n, int k, int i, int j, int trans_a, int trans_b) {
    float acc = 0.0f;
    for (int p = 0; p < k; p++)
        acc += (trans_a ? a[(size_t)p * m + i] : a[(size_t)i * k + p]) *
               (trans_b ? b[(size_t)j * k + p] : b[(size_t)p * n + j]);
    return acc;
}

#define GEMM_ARGS                                                                                              \
    const float *a, const float *b, float *c, int m, int n, int k, float alpha, float beta, int trans_a,     \
        int trans_b
#define IJ                                                                                                     \
    const int i = blockIdx.y * blockDim.y + threadIdx.y;                                                       \
    const int j = blockIdx.x * blockDim.x + threadIdx.x

__global__ void gemm_ignores_beta(GEMM_ARGS) {
    IJ;
    if (i < m && j < n) c[(size_t)i * n + j] = alpha * dot(a, b, m, n, k, i, j, trans_a, trans_b);
}

__global__ void gemm_ignores_trans(GEMM_ARGS) {
    IJ;
    if (i < m && j < n) {
        const float acc = dot(a, b, m, n, k, i, j, trans_a, 0);
        c[(size_t)i * n + j] = beta == 0.0f ? alpha * acc : alpha * acc + beta * c[(size_t)i * n + j];
    }
}

__global__ void gemm_accumulate(GEMM_ARGS) {
    IJ;
    if (i < m && j < n) c[(size_t)i * n + j] += alpha * dot(a, b, m, n, k, i, j, trans_a, trans_b);
}

__global__ void gemm_tail_overrun(GEMM_ARGS) {
    IJ;
    if (i <= m && j < n) {
        const float acc = dot(a, b, m, n, k, i, j, trans_a, trans_b);
        c[(size_t)i * n + j] = beta == 0.0f ? alpha * acc : alpha * acc + beta * c[(size_t)i * n + j];
    }
}
