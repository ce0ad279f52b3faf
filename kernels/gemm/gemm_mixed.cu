/*
 * gemm_mixed: the mixed-precision GEMM of tensor-core kernels, c (float32) =
 * alpha op(a) op(b) + beta c with a and b in half or bfloat16 (the gemm
 * operator's `dtype`, docs/ops/gemm.md), accumulated in float32.
 *
 *   gemm_naive_t<T>  one thread per c[i][j], the inputs widened to float; T is
 *                    float, __half or __nv_bfloat16 (the config picks the one
 *                    matching the case's dtype with `where`)
 *   gemm_wmma<T>     tensor cores through nvcuda::wmma (m16n16k16, T __half or
 *                    __nv_bfloat16): a block of 4 warps computes a 32 x 32 tile
 *                    of c, each warp a 16 x 16 fragment. Every 16-deep slice of
 *                    op(a) (32 x 16) and op(b) (16 x 32) is staged in shared
 *                    memory in op order, zeros past the edges, whatever the
 *                    transposes; the accumulators go through shared memory to c
 *                    with bounds, so any m, n, k work. Block 128, grid
 *                    (ceil(n/32), ceil(m/32)).
 *
 *   harness run configs/gemm_mixed.json
 *   harness debug configs/gemm_mixed.json --kernel 'gemm_wmma<__half>' --set m=5,n=7,k=3,...
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }

/* op(a)[i][p] and op(b)[p][j] from their storage */
template <typename T>
__device__ __forceinline__ T at_a(const T *a, int m, int k, int trans_a, int i, int p) {
    return trans_a ? a[(size_t)p * m + i] : a[(size_t)i * k + p];
}
template <typename T>
__device__ __forceinline__ T at_b(const T *b, int n, int k, int trans_b, int p, int j) {
    return trans_b ? b[(size_t)j * k + p] : b[(size_t)p * n + j];
}

template <typename T>
__global__ void gemm_naive_t(const T *a, const T *b, float *c, int m, int n, int k, float alpha, float beta,
                             int trans_a, int trans_b) {
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m || j >= n) return;
    float acc = 0.0f;
    for (int p = 0; p < k; p++) acc += to_f(at_a(a, m, k, trans_a, i, p)) * to_f(at_b(b, n, k, trans_b, p, j));
    float *out = &c[(size_t)i * n + j];
    *out = beta == 0.0f ? alpha * acc : alpha * acc + beta * *out;
}

using namespace nvcuda;

enum { WT = 32, WK = 16, A_LD = WK + 8, B_LD = WT + 8, C_LD = WT + 4 };

template <typename T>
__global__ void __launch_bounds__(128) gemm_wmma(const T *a, const T *b, float *c, int m, int n, int k, float alpha,
                                                 float beta, int trans_a, int trans_b) {
    /* rows padded (by 16 or 32 bytes: ldm stays a multiple of 16 bytes, every
     * fragment's start a multiple of 32 bytes) */
    __shared__ __align__(32) T as[WT][A_LD];   /* as[r][q] = op(a)[i0 + r][p0 + q] */
    __shared__ __align__(32) T bs[WK][B_LD];   /* bs[q][s] = op(b)[p0 + q][j0 + s] */
    __shared__ __align__(32) float cs[WT][C_LD];
    const int tid = threadIdx.x, warp = tid / 32;
    const int wy = warp / 2, wx = warp % 2; /* this warp's 16 x 16 of the block's 32 x 32 */
    const int i0 = blockIdx.y * WT, j0 = blockIdx.x * WT;
    const T zero = T(0.0f);
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int p0 = 0; p0 < k; p0 += WK) {
        for (int e = tid; e < WT * WK; e += 128) {
            const int r = e / WK, q = e % WK, i = i0 + r, p = p0 + q;
            as[r][q] = i < m && p < k ? at_a(a, m, k, trans_a, i, p) : zero;
        }
        for (int e = tid; e < WK * WT; e += 128) {
            const int q = e / WT, s = e % WT, p = p0 + q, j = j0 + s;
            bs[q][s] = p < k && j < n ? at_b(b, n, k, trans_b, p, j) : zero;
        }
        __syncthreads();
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb;
        wmma::load_matrix_sync(fa, &as[wy * 16][0], A_LD);
        wmma::load_matrix_sync(fb, &bs[0][wx * 16], B_LD);
        wmma::mma_sync(acc, fa, fb, acc);
        __syncthreads();
    }
    wmma::store_matrix_sync(&cs[wy * 16][wx * 16], acc, C_LD, wmma::mem_row_major);
    __syncthreads();
    for (int e = tid; e < WT * WT; e += 128) {
        const int r = e / WT, s = e % WT, i = i0 + r, j = j0 + s;
        if (i >= m || j >= n) continue;
        float *out = &c[(size_t)i * n + j];
        *out = beta == 0.0f ? alpha * cs[r][s] : alpha * cs[r][s] + beta * *out;
    }
}
