/*
 * gemm_half: 16-bit GEMM kernels as their authors write them (the gemm operator's
 * dtype float16 / bfloat16 cases; tests/configs/newops/gemm_half.json).
 *
 *   wmma_direct<T>   one warp per 16 x 16 tile of c, fragments loaded straight
 *                    from global memory (no staging): row_major fragments for N
 *                    operands, col_major for T ones (a T operand is its op's
 *                    transpose in storage, i.e. column-major). m, n, k multiples of
 *                    16, so every pointer is 32-byte aligned and ldm a multiple of
 *                    8, as load_matrix_sync requires. Block 32, grid (n/16, m/16).
 *   hgemm_half2      half2 math: two columns of c per thread, a[i][p] broadcast
 *                    into both halves, __hfma2 accumulating in half (N/N; n even).
 *   bgemm_bf162      the same in bfloat16 (__nv_bfloat162, __hfma2).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

template <typename T>
__global__ void wmma_direct(const T *a, const T *b, float *c, int m, int n, int k, float alpha, float beta,
                            int trans_a, int trans_b) {
    const int i0 = blockIdx.y * 16, j0 = blockIdx.x * 16;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc, cf;
    wmma::fill_fragment(acc, 0.0f);
    for (int p0 = 0; p0 < k; p0 += 16) {
        if (trans_a) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::col_major> fa;
            wmma::load_matrix_sync(fa, a + (size_t)p0 * m + i0, m);
            if (trans_b) {
                wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
                wmma::load_matrix_sync(fb, b + (size_t)j0 * k + p0, k);
                wmma::mma_sync(acc, fa, fb, acc);
            } else {
                wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb;
                wmma::load_matrix_sync(fb, b + (size_t)p0 * n + j0, n);
                wmma::mma_sync(acc, fa, fb, acc);
            }
        } else {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
            wmma::load_matrix_sync(fa, a + (size_t)i0 * k + p0, k);
            if (trans_b) {
                wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
                wmma::load_matrix_sync(fb, b + (size_t)j0 * k + p0, k);
                wmma::mma_sync(acc, fa, fb, acc);
            } else {
                wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb;
                wmma::load_matrix_sync(fb, b + (size_t)p0 * n + j0, n);
                wmma::mma_sync(acc, fa, fb, acc);
            }
        }
    }
    float *ct = c + (size_t)i0 * n + j0;
    wmma::load_matrix_sync(cf, ct, n, wmma::mem_row_major);
    for (int e = 0; e < acc.num_elements; e++) acc.x[e] = alpha * acc.x[e] + beta * cf.x[e];
    wmma::store_matrix_sync(ct, acc, n, wmma::mem_row_major);
}

/* two adjacent columns j, j+1 of row i per thread, accumulated in half2 */
__global__ void hgemm_half2(const __half *a, const __half *b, float *c, int m, int n, int k, float alpha,
                            float beta) {
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int j = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= m || j >= n) return;
    __half2 acc = __float2half2_rn(0.0f);
    for (int p = 0; p < k; p++) {
        __half2 av = __half2half2(a[(size_t)i * k + p]);
        __half2 bv = *reinterpret_cast<const __half2 *>(&b[(size_t)p * n + j]);
        acc = __hfma2(av, bv, acc);
    }
    float2 f = __half22float2(acc);
    c[(size_t)i * n + j] = alpha * f.x + beta * c[(size_t)i * n + j];
    c[(size_t)i * n + j + 1] = alpha * f.y + beta * c[(size_t)i * n + j + 1];
}

__global__ void bgemm_bf162(const __nv_bfloat16 *a, const __nv_bfloat16 *b, float *c, int m, int n, int k,
                            float alpha, float beta) {
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int j = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= m || j >= n) return;
    __nv_bfloat162 acc = __float2bfloat162_rn(0.0f);
    for (int p = 0; p < k; p++) {
        __nv_bfloat162 av = __bfloat162bfloat162(a[(size_t)i * k + p]);
        __nv_bfloat162 bv = *reinterpret_cast<const __nv_bfloat162 *>(&b[(size_t)p * n + j]);
        acc = __hfma2(av, bv, acc);
    }
    float2 f = __bfloat1622float2(acc);
    c[(size_t)i * n + j] = alpha * f.x + beta * c[(size_t)i * n + j];
    c[(size_t)i * n + j + 1] = alpha * f.y + beta * c[(size_t)i * n + j + 1];
}
